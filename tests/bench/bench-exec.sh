#!/bin/sh
# bench-exec: a ring all-reduce plan from tacosc replayed by tacos-run on 8 ranks, against the MPI
# library's own MPI_Allreduce in the same run (same buffers, same mode), 1 MiB to 256 MiB, float32 sum.
# Prints the tacos-run table (with --check and --mpi) and the busbw ratio replay / MPI per size; the
# target is a ratio >= 0.9 from 16 MiB up (host memory).
#   TACOSC, TACOSRUN   binaries (default ./tacosc, ./tacos-run)
#   BENCH_ITERS        timed iterations per size (default 5), BENCH_WARMUP (default 1)
#   BENCH_RANKS        ranks (default 8), BENCH_MIN / BENCH_MAX sizes (default 1M / 256M)
set -e
TACOSC=${TACOSC:-./tacosc}
TACOSRUN=${TACOSRUN:-./tacos-run}
N=${BENCH_RANKS:-8}
ITERS=${BENCH_ITERS:-5}
WARMUP=${BENCH_WARMUP:-1}
MIN=${BENCH_MIN:-1M}
MAX=${BENCH_MAX:-256M}
DIR=$(mktemp -d /tmp/bench-exec.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
LAUNCH="mpirun -np $N"
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    export OMPI_MCA_rmaps_base_oversubscribe=1
    LAUNCH="$LAUNCH --oversubscribe"
    [ "$(id -u)" = 0 ] && LAUNCH="$LAUNCH --allow-run-as-root"
fi
"$TACOSC" topo ring "$N" -o "$DIR/ring.xml"
"$TACOSC" "$DIR/ring.xml" --collective allreduce --algo ring -o "$DIR/plan.xml" >/dev/null
echo "# bench-exec: ring all-reduce plan on $N ranks ($(nproc) cores), tacos-run vs the MPI library's MPI_Allreduce"
$LAUNCH "$TACOSRUN" "$DIR/plan.xml" --check --mpi -b "$MIN" -e "$MAX" -f 2 -n "$ITERS" -w "$WARMUP" \
    | tee "$DIR/out.txt"
awk '
/^ +[0-9]/ { size = $1; ratio = $NF; n++
             printf "ratio %10d B  %-6s\n", size, ratio
             if (size >= 16777216) { big++; if (ratio < 0.9) low++; if (min == "" || ratio < min) min = ratio } }
END { if (!n) { print "bench-exec: no rows"; exit 1 }
      if (big) printf "bench-exec: busbw ratio from 16 MiB up: min %.3f over %d sizes; target >= 0.9 %s\n", min, big,
                      low ? "NOT met" : "met"
}' "$DIR/out.txt"
