#!/bin/sh
# bench-synth: the TACOS synthesizer on the paper's topologies (make bench-synth; run from the repo root).
#
# Per case: synthesis wall time and CPU time of tc_synth_tacos alone (median of 3; the 200x200 case runs
# once; CPU time is the figure to trust on a shared machine), peak RSS of the process, collective time, and its ratio to the TACOS §V-A ideal bound and to the
# lower bound of tc_sim_bound (the event model's: link, aggregate, cut, latency).  1 GiB collective, 1 chunk per NPU, the shipped
# topologies (alpha 0.5 us, 50 GB/s unless the paper's setup says otherwise); the 64x64 and 200x200 meshes
# are built in memory by the driver (same links as `tacosc topo mesh AxB`).
#
# Environment: BUILD (default build), TACOSC (default ./tacosc for BUILD=build, else $BUILD/tacosc),
#   CC, SYNTH_BENCH_LARGE=0 skips the 200x200 case (measured once: 615 s of CPU, 3.0 GiB peak with 4-byte
#   arrival lists; the lists now take 2 bytes per entry up to 65536 chunks).
set -e
BUILD=${BUILD:-build}
if [ -z "$TACOSC" ]; then
    if [ "$BUILD" = build ]; then TACOSC=./tacosc; else TACOSC=$BUILD/tacosc; fi
fi
CC=${CC:-cc}
LIB=$BUILD/libtacos.a
[ -f "$LIB" ] || make --no-print-directory BUILD="$BUILD" "$LIB"
DRV=$BUILD/tests/bench/synth_bench
mkdir -p "$BUILD/tests/bench"
# shellcheck disable=SC2046
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter -Iinclude -pthread \
    -o "$DRV" tests/bench/synth_bench.c "$LIB" \
    $(pkg-config --libs libxml-2.0 libcjson igraph 2>/dev/null) -lglpk -lm -lpthread

T=topologies
fails=0
printf '%-26s %-10s %6s %9s %9s %8s %12s %8s %8s\n' case coll npus wall_s cpu_s rss_MiB time_s /ideal /bound
run() { # name coll reps topo [extra driver options]
    name=$1 coll=$2 reps=$3 topo=$4
    shift 4
    out=$("$DRV" -c "$coll" -r "$reps" -s 1G "$@" "$topo") || { echo "$name: driver failed"; fails=$((fails + 1)); return; }
    echo "$out" | awk -v n="$name" '{printf "%-26s %-10s %6d %9.3f %9.3f %8.1f %12.6e %8.4f %8.4f\n",
        n, $2, $3, $4, $5, $6, $7, $9, $11}'
    LAST=$out
}
field() { echo "$LAST" | awk -v f="$1" '{print $f}'; }
target() { # label value op limit
    if awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { exit !(op == "<=" ? v <= l : v >= l) }'; then
        echo "  target met:    $1 ($2 $3 $4)"
    else
        echo "  target MISSED: $1 ($2, limit $4)"
    fi
}

# All-gather quality: within 1% of the §V-A ideal where a whole-chunk schedule can reach it, else of the
# per-NPU link bound (the reachable one: e.g. a bidirectional ring of 64 needs ceil(63/2) = 32 rounds where
# §V-A counts 31.5, and §V-A charges alpha once per hop of the diameter, not once per chunk).
agq() { # label
    if awk -v a="$(field 9)" 'BEGIN { exit !(a <= 1.01) }'; then
        target "$1 all-gather / ideal" "$(field 9)" "<=" 1.01
    else
        target "$1 all-gather / link bound (ideal unreachable: $(field 9))" "$(field 11)" "<=" 1.01
    fi
}
for c in allgather allreduce; do
    run ring-64 $c 3 $T/ring-64.xml
    [ $c = allgather ] && agq "ring 64"
    run fc-8 $c 3 $T/fc-8.xml
    [ $c = allgather ] && agq "fc 8"
    run mesh-4x4 $c 3 $T/mesh2d-4x4.xml
    [ $c = allgather ] && agq "mesh 4x4"
    run mesh-8x8 $c 3 $T/mesh2d-8x8.xml
    [ $c = allgather ] && agq "mesh 8x8"
    run mesh-16x16 $c 3 $T/mesh2d-16x16.xml
    [ $c = allgather ] && agq "mesh 16x16"
    run mesh-32x32 $c 3 $T/mesh2d-32x32.xml
    [ $c = allgather ] && agq "mesh 32x32"
    [ $c = allreduce ] && target "mesh 32x32 all-reduce synthesis wall s" "$(field 4)" "<=" 0.5
    [ $c = allreduce ] && target "mesh 32x32 all-reduce synthesis CPU s" "$(field 5)" "<=" 0.5
    run mesh-64x64 $c 3 mesh:64x64
    [ $c = allgather ] && agq "mesh 64x64"
    [ $c = allreduce ] && target "mesh 64x64 all-reduce synthesis wall s" "$(field 4)" "<=" 5
    [ $c = allreduce ] && target "mesh 64x64 all-reduce synthesis CPU s" "$(field 5)" "<=" 5
    run torus-8x8 $c 3 $T/torus2d-8x8.xml
    [ $c = allgather ] && agq "torus 8x8"
    run torus-4x4x4 $c 3 $T/torus3d-4x4x4.xml
    [ $c = allgather ] && agq "torus 4x4x4"
    run mesh-4x4x4 $c 3 $T/mesh3d-4x4x4.xml
    [ $c = allgather ] && agq "mesh 4x4x4"
    run switch-8 $c 3 $T/switch-8.xml
    run dragonfly-4x5 $c 3 $T/dragonfly-4x5.xml
    run rfs-2x4x8 $c 3 $T/rfs-2x4x8.xml
done
echo "random matching (the paper's), all-gather, for comparison:"
run torus-8x8/random allgather 3 $T/torus2d-8x8.xml -m random
run torus-4x4x4/random allgather 3 $T/torus3d-4x4x4.xml -m random
run mesh-32x32/random allgather 3 $T/mesh2d-32x32.xml -m random

echo "end to end (tacosc, JSON plan written):"
if [ -x "$TACOSC" ]; then
    tmp=$(mktemp /tmp/bench-synth.XXXXXX.json)
    t0=$(date +%s.%N)
    "$TACOSC" $T/mesh2d-32x32.xml --collective allreduce --size 1G -q -o "$tmp" || fails=$((fails + 1))
    t1=$(date +%s.%N)
    e2e=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    echo "mesh-32x32 allreduce -o plan.json: ${e2e} s wall, $(wc -c < "$tmp") bytes"
    target "mesh 32x32 all-reduce end to end s" "$e2e" "<=" 3
    rm -f "$tmp"
else
    echo "($TACOSC not found: skipped)"
fi

if [ "${SYNTH_BENCH_LARGE:-1}" != 0 ]; then
    echo "200x200 mesh all-gather, --stats-only, one run:"
    run mesh-200x200 allgather 1 mesh:200x200 -S
    target "mesh 200x200 all-gather synthesis wall s" "$(field 4)" "<=" 900
    target "mesh 200x200 all-gather synthesis CPU s" "$(field 5)" "<=" 900
    target "mesh 200x200 peak RSS MiB" "$(field 6)" "<=" 8192
fi
[ $fails -eq 0 ]
