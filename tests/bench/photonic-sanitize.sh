#!/bin/sh
# The photonic pass at the paper's scale under AddressSanitizer and UBSan (issue 22): N random `tacosc route`
# instances (64 servers on an 8x8 grid, 512 random circuits within tx/rx = 10) and N `--photonic` plans on 128
# GPUs (a 2D or 3D torus of 16 servers, random fabric: MZI mesh, wavelengths, fibers, tx/rx; all-to-all
# DEX, RHD reduce-scatter, Swing all-reduce), each fabric and circuit draw from its seed.  A run passes when
# no sanitizer report appears and every exit status is 0 or 1 (1: the fabric cannot hold the circuits,
# reported as an error): never an abort or a crash.  Prints one line per failure and a summary.
#   TACOSC: an ASan build (default build/asan/tacosc: make BUILD=build/asan OPT=-O1 SAN="-fsanitize=address,
#           undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" build/asan/tacosc)
#   N: instances of each kind (default 50); SEED0: first seed (default 1)
set -u
TACOSC=${TACOSC:-build/asan/tacosc}
N=${N:-50}
SEED0=${SEED0:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'default 3us 450GB/s\n' >"$tmp/c.cost"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=87}
fails=0 ok=0 refused=0
# pick SEED LIST: the (SEED mod count)-th word of LIST
pick() { echo "$2" | tr ' ' '\n' | sed -n "$(( $1 % $(echo "$2" | wc -w) + 1 ))p"; }
run() { # what, command...
    what=$1
    shift
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if grep -q "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" "$tmp/out" || [ "$rc" -gt 1 ]; then
        fails=$((fails + 1))
        echo "FAIL ($rc) $what: $*"
        grep -m 5 "ERROR\|runtime error\|#[0-9] " "$tmp/out"
    elif [ "$rc" -eq 1 ]; then
        refused=$((refused + 1))
        [ -n "${VERBOSE:-}" ] && echo "refused $what: $(grep -m 1 error: "$tmp/out")"
    else
        ok=$((ok + 1))
    fi
}
i=0
while [ "$i" -lt "$N" ]; do
    s=$((SEED0 + i))
    mzi=$(pick "$s" "0 8 16 32")
    wl=$(pick $((s / 4)) "1 2 4 8")
    fib=$(pick $((s / 3)) "0 4 8 16")
    [ "$mzi" -gt 0 ] && [ "$fib" -gt "$mzi" ] && fib=$mzi # a fiber per border MZI at most
    spec="reconfig=5us,tx=10,rx=10,grid=8x8,wavelengths=$wl" # 512 circuits fit 64 x 10 with room
    [ "$fib" -gt 0 ] && spec="$spec,fibers=$fib"
    [ "$mzi" -gt 0 ] && spec="$spec,mzi=$mzi"
    rm -f "$tmp/r.xml"
    "$TACOSC" topo torus 8x8 --photonic "$spec" -o "$tmp/r.xml" || { fails=$((fails + 1)); echo "FAIL topo $spec"; }
    [ -f "$tmp/r.xml" ] && run "route seed $s ($spec)" "$TACOSC" route "$tmp/r.xml" --random 512 --seed "$s" --ilp-time 2 --list -q
    i=$((i + 1))
done
i=0
while [ "$i" -lt "$N" ]; do
    s=$((SEED0 + i))
    dims=$(pick "$s" "8x16 4x4x8")
    mzi=$(pick $((s / 2)) "0 16 32")
    wl=$(pick $((s / 3)) "1 4 8")
    tx=$(pick $((s / 5)) "0 4 8")
    grid=$(pick $((s / 7)) "4x4 2x8")
    spec="reconfig=5us,grid=$grid,wavelengths=$wl"
    [ "$mzi" -gt 0 ] && spec="$spec,mzi=$mzi"
    [ "$tx" -gt 0 ] && spec="$spec,tx=$tx,rx=$tx"
    algo=$(pick $((s / 11)) "alltoall:dex reducescatter:rhd allreduce:swing")
    rm -f "$tmp/p.xml"
    "$TACOSC" topo torus "$dims" --photonic "$spec" -o "$tmp/p.xml" || { fails=$((fails + 1)); echo "FAIL topo $spec"; }
    [ -f "$tmp/p.xml" ] && run "--photonic seed $s ($dims $spec $algo)" "$TACOSC" "$tmp/p.xml" --costs "$tmp/c.cost" -c "${algo%%:*}" \
        -a "${algo#*:}" -s 32M --photonic --ilp-time 2 -q -o "$tmp/p.json"
    i=$((i + 1))
done
echo "photonic sanitizer sweep: $((2 * N)) instances: $ok planned, $refused refused with an error, $fails failed"
[ "$fails" -eq 0 ]
