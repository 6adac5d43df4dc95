#!/bin/sh
# bench-msccl: tacosc's main command at scale.  A 32x32 mesh all-reduce (1024 ranks, 2.1 million
# transfers) written as MSCCL XML and verified, wall time (median of BENCH_RUNS) and peak RSS from
# /usr/bin/time; targets: XML written <= 10 s and <= 1.5 GB, verify <= 30 s and <= 2 GB.
#
# That plan needs about 4200 XML nodes on some ranks, more than the runtimes' parser holds (MAX_NODES,
# man 5 tacosc-msccl): the default target (nccl) refuses it, by name, and the timed runs use
# --target tacos-run (every rule but the runtimes' parser limits).  A 32x32 all-gather, which fits, is
# timed with the nccl target too.  Last, tacos-run on 16 ranks: rank 0 reads the plan, every other rank
# only gets its own <gpu> section (peak RSS per rank).
#   TACOSC, TACOSRUN   binaries (default ./tacosc, ./tacos-run)
#   BENCH_RUNS         runs per measurement (default 3)
#   BENCH_TOPO         topology (default topologies/mesh2d-32x32.xml)
set -e
TACOSC=${TACOSC:-./tacosc}
TACOSRUN=${TACOSRUN:-./tacos-run}
RUNS=${BENCH_RUNS:-3}
TOPO=${BENCH_TOPO:-topologies/mesh2d-32x32.xml}
DIR=$(mktemp -d /tmp/bench-msccl.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench-msccl: needs /usr/bin/time (Debian package time)"; exit 1; }

# measure NAME EXPECTED_STATUS COMMAND...: RUNS runs; prints every run and the median; sets MED_S, MED_KB
measure() {
    name=$1; want=$2; shift 2
    : > "$DIR/runs"
    i=0
    while [ $i -lt "$RUNS" ]; do
        set +e
        "$TIME" -f "%e %M" -o "$DIR/t" "$@" > "$DIR/out" 2> "$DIR/err"
        rc=$?
        set -e
        if [ "$rc" != "$want" ]; then
            echo "bench-msccl: $name: exit $rc, expected $want"; cat "$DIR/err"; exit 1
        fi
        tail -n 1 "$DIR/t" >> "$DIR/runs"
        i=$((i + 1))
    done
    MED_S=$(sort -n "$DIR/runs" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    MED_KB=$(sort -n -k2 "$DIR/runs" | awk '{ a[NR] = $2 } END { print a[int((NR + 1) / 2)] }')
    printf "%-44s runs (s, KB): %s   median %s s, %.2f GB\n" "$name" "$(tr '\n' ' ' < "$DIR/runs")" "$MED_S" \
        "$(echo "$MED_KB" | awk '{ print $1 / 1048576 }')"
}

# verdict LABEL SECONDS KB MAX_S MAX_GB
verdict() {
    awk -v l="$1" -v s="$2" -v kb="$3" -v ms="$4" -v mg="$5" 'BEGIN {
        gb = kb / 1048576; ok = s <= ms && gb <= mg
        printf "bench-msccl: %s: %.2f s (target <= %s s), %.2f GB (target <= %s GB): %s\n", l, s, ms, gb, mg,
               ok ? "met" : "NOT met" }'
}

echo "# bench-msccl: $TOPO, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs each"
set +e
"$TACOSC" "$TOPO" -c allreduce -o "$DIR/x.xml" > /dev/null 2> "$DIR/err"
rc=$?
set -e
echo "default target (nccl): exit $rc: $(head -c 300 "$DIR/err")"
[ "$rc" = 1 ] && grep -q "MAX_NODES" "$DIR/err" || { echo "bench-msccl: expected the node-limit refusal"; exit 1; }

measure "all-reduce to XML (--target tacos-run)" 0 "$TACOSC" "$TOPO" -c allreduce -o "$DIR/x.xml" --target tacos-run -q
W_S=$MED_S; W_KB=$MED_KB
echo "  XML: $(wc -c < "$DIR/x.xml") bytes, $(grep -c '<step ' "$DIR/x.xml") steps"
measure "verify it (--target tacos-run)" 0 "$TACOSC" verify "$DIR/x.xml" --target tacos-run
V_S=$MED_S; V_KB=$MED_KB
measure "verify it (default: common limits, refused)" 1 "$TACOSC" verify "$DIR/x.xml"
measure "all-gather to XML (nccl)" 0 "$TACOSC" "$TOPO" -c allgather -o "$DIR/ag.xml" -q
measure "verify it (--target nccl)" 0 "$TACOSC" verify "$DIR/ag.xml" --target nccl
verdict "32x32 all-reduce written as XML" "$W_S" "$W_KB" 10 1.5
verdict "32x32 all-reduce XML verified" "$V_S" "$V_KB" 30 2

# tacos-run: peak RSS of rank 0 (reads and verifies the plan) against the other ranks (their section only)
if command -v mpirun > /dev/null 2>&1 && [ -x "$TACOSRUN" ]; then
    LAUNCH="mpirun -np 16"
    if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
        export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
        LAUNCH="$LAUNCH --oversubscribe"
        [ "$(id -u)" = 0 ] && LAUNCH="$LAUNCH --allow-run-as-root"
    fi
    "$TACOSC" topologies/mesh2d-4x4.xml -c allreduce -k 512 --target tacos-run -q -o "$DIR/m4.xml"
    $LAUNCH sh -c '/usr/bin/time -f "rss %M" -o "$0.$OMPI_COMM_WORLD_RANK$PMI_RANK" "$@"' "$DIR/rss" "$TACOSRUN" \
        "$DIR/m4.xml" -c 1 -b 4M -n 1 -w 0 > "$DIR/run.txt"
    grep -q "Out of bounds values : 0 OK" "$DIR/run.txt" || { cat "$DIR/run.txt"; exit 1; }
    awk -v f="$(wc -c < "$DIR/m4.xml")" 'FNR == 1 { split(FILENAME, p, "."); r = p[length(p)]; kb = $2
        if (r == 0) z = kb; else if (kb > o) o = kb }
        END { printf "tacos-run, 16 ranks, a %d-byte plan: peak RSS rank 0 %d KB, other ranks at most %d KB\n", f, z, o }' \
        "$DIR"/rss.*
fi
