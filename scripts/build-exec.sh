#!/bin/sh
# Build tacos-run (called by the Makefile):
#   sh scripts/build-exec.sh BUILD OUTPUT MPICC NVCC "CFLAGS" "LIBS"
# Compiles src/exec/*.c with MPICC and links them against the library (LIBS).  When NVCC is non-empty
# the CUDA backend is built too: src/exec/*.cu with NVCC, the C files with -DTC_HAVE_CUDA and the CUDA
# include directory, linked with -lcudart.  Without NVCC, --device cuda reports that it is unavailable.
set -e
BUILD=$1; OUT=$2; MPICC=$3; NVCC=$4; CFLAGS=$5; LIBS=$6
[ -n "$BUILD" ] && [ -n "$OUT" ] && [ -n "$MPICC" ] || {
    echo "usage: build-exec.sh BUILD OUTPUT MPICC NVCC CFLAGS LIBS" >&2; exit 2; }
OBJ="$BUILD/exec"
mkdir -p "$OBJ"
EXTRA=""
CULIBS=""
OBJS=""
if [ -n "$NVCC" ]; then
    CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v "$NVCC" || echo "$NVCC")")")}
    EXTRA="-DTC_HAVE_CUDA -I$CUDA_HOME/include"
    CULIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart -lstdc++"
    for cu in src/exec/*.cu; do
        [ -f "$cu" ] || continue
        o="$OBJ/$(basename "$cu" .cu).cu.o"
        echo "$NVCC -O2 -std=c++14 -Xcompiler -Wall,-Wextra -c $cu -o $o"
        "$NVCC" -O2 -std=c++14 -Xcompiler -Wall,-Wextra -c "$cu" -o "$o"
        OBJS="$OBJS $o"
    done
fi
for c in src/exec/*.c; do
    o="$OBJ/$(basename "$c" .c).o"
    echo "$MPICC $CFLAGS $EXTRA -Isrc/exec -c $c -o $o"
    # shellcheck disable=SC2086
    "$MPICC" $CFLAGS $EXTRA -Isrc/exec -c "$c" -o "$o"
    OBJS="$OBJS $o"
done
# shellcheck disable=SC2086
echo "$MPICC $CFLAGS -o $OUT$OBJS $LIBS $CULIBS"
# shellcheck disable=SC2086
"$MPICC" $CFLAGS -o "$OUT" $OBJS $LIBS $CULIBS
