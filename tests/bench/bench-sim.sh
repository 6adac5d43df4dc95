#!/bin/sh
# make bench-sim: simulate a 4096-rank ring all-reduce on a 4096-NPU ring with the event simulator,
# three times; print the median simulation time (the plan is generated in memory, not timed).
# Target: <= 1 s.  TACOSC names the binary (default ./tacosc).
set -e
TACOSC=${TACOSC:-./tacosc}
N=${BENCH_SIM_NPUS:-4096}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$TACOSC" topo ring "$N" -o "$tmp/ring.xml"
for i in 1 2 3; do
    "$TACOSC" sim --algo ring --collective allreduce --size 1G --timing "$tmp/ring.xml" \
        >"$tmp/out$i" 2>"$tmp/time$i"
    sed -n 's/.*simulate \([0-9.]*\) s.*/\1/p' "$tmp/time$i" >>"$tmp/times"
done
cat "$tmp/out1"
med=$(sort -n "$tmp/times" | sed -n 2p)
echo "bench-sim: ring all-reduce, $N ranks on a $N-NPU ring, event model: median simulate $med s (target <= 1 s; runs: $(tr '\n' ' ' <"$tmp/times"))"
awk -v m="$med" 'BEGIN { exit !(m <= 1.0) }' || { echo "bench-sim: FAIL: $med s > 1 s"; exit 1; }
