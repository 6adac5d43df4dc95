#!/bin/sh
# make bench-sim: simulate a 4096-rank ring all-reduce (33.5M transfers) on a 4096-NPU ring with the event
# simulator, five times; print the median simulation time.  The plan is generated in memory first; its
# generation time is reported beside, not counted.  Target: <= 1 s.  TACOSC names the binary (default
# ./tacosc), BENCH_SIM_NPUS the ring size.
set -e
TACOSC=${TACOSC:-./tacosc}
N=${BENCH_SIM_NPUS:-4096}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$TACOSC" topo ring "$N" -o "$tmp/ring.xml"
for i in 1 2 3 4 5; do
    "$TACOSC" sim --algo ring --collective allreduce --size 1G --timing "$tmp/ring.xml" \
        >"$tmp/out$i" 2>"$tmp/time$i"
    sed -n 's/.*simulate \([0-9.]*\) s.*/\1/p' "$tmp/time$i" >>"$tmp/times"
    sed -n 's/.*generate \([0-9.]*\) s.*/\1/p' "$tmp/time$i" >>"$tmp/gen"
done
cat "$tmp/out1"
med=$(sort -n "$tmp/times" | sed -n 3p)
gen=$(sort -n "$tmp/gen" | sed -n 3p)
echo "bench-sim: ring all-reduce, $N ranks on a $N-NPU ring, event model: median simulate $med s (target <= 1 s; runs: $(tr '\n' ' ' <"$tmp/times")); median generate $gen s"
awk -v m="$med" 'BEGIN { exit !(m <= 1.0) }' || { echo "bench-sim: FAIL: $med s > 1 s"; exit 1; }
