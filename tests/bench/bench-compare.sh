#!/bin/sh
# make bench-compare: `tacosc compare` of all-reduce (1 GiB, SVG written) on the shipped topologies of more
# than 256 NPUs, which make check leaves out: every generator's schedule checked and simulated through
# the event model (routed plans take the event queue, about a microsecond per hop).  Each run must exit 0
# (every schedule passed the checker) and list tacos; prints wall-clock seconds and peak memory per
# topology.  TACOSC names the binary (default ./tacosc).
set -e
TACOSC=${TACOSC:-./tacosc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for t in topologies/*.xml; do
    n=$(sed -n 's/.* npus="\([0-9]*\)".*/\1/p' "$t" | head -n 1)
    [ "${n:-0}" -gt 256 ] || continue
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$TACOSC" compare "$t" --collective allreduce --size 1G \
        --svg "$tmp/c.svg" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail=1; }
    grep -q '^tacos ' "$tmp/out" || { echo "bench-compare: $t: no tacos row"; fail=1; }
    read -r secs kb <"$tmp/time"
    echo "bench-compare: $t ($n npus): $secs s, peak $((kb / 1024)) MiB, SVG $(wc -c <"$tmp/c.svg") bytes"
    sed -n '2,4p' "$tmp/out"
done
[ $fail -eq 0 ] || { echo "bench-compare: FAIL"; exit 1; }
