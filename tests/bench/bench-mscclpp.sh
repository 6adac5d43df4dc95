#!/bin/sh
# make bench-mscclpp: issue 28's done-when on every shipped topology of 8 to 64 npus (topologies/*.xml and
# topologies/clusters/*.xml, each with its cost file): for all-reduce, all-gather and reduce-scatter,
#   1. tacosc TOPO -c C --size S -f mscclpp -o p.json    the MSCCL++ plan is written (verified before)
#   2. tacosc verify p.json --size S                     it verifies again, read back from the file
#   3. mpirun -np N tacos-run p.json --check             replayed on N ranks with fresh random inputs: 0 wrong
# S is 2949120 bytes (16 B x lcm(8, 9, 16, 20, 32, 64) x 64: every rank count here, every chunking); the
# replay runs 4 KiB and 64 KiB.  One line per case with the compile, verify and replay seconds; failures
# are listed at the end and make the exit status 1.  Narrow with MPP_TOPOS, MPP_COLLS; MPP_PROTO=LL writes
# LL packets (single-server topologies only).  TACOSC, TACOSRUN name the binaries.
set -u
TACOSC=${TACOSC:-./tacosc}
TACOSRUN=${TACOSRUN:-./tacos-run}
TOPOS=${MPP_TOPOS:-$(ls topologies/*.xml topologies/clusters/*.xml)}
COLLS=${MPP_COLLS:-allreduce allgather reducescatter}
PROTO=${MPP_PROTO:-Simple}
S=2949120
tmp=$(mktemp -d /tmp/bench-mscclpp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run_mpi() { # n plan
    ompi=""
    mpirun --version 2>&1 | grep -q "Open MPI" && ompi="--oversubscribe $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root)"
    OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
        timeout 600 mpirun $ompi -np "$1" "$TACOSRUN" "$2" --check -b 4K -e 64K -f 16 -n 1 -w 0
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
fail=""
cases=0
echo "MSCCL++ plans of every shipped topology with 8 to 64 npus, protocol $PROTO, size $S B:"
for t in $TOPOS; do
    c=""
    case $t in *dgx1*) c="--costs topologies/dgx1.cost" ;; *hier*) c="--costs topologies/hier.cost" ;; esac
    [ -f "${t%.xml}.cost" ] && c="--costs ${t%.xml}.cost"
    n=$("$TACOSC" info "$t" $c | awk '/^npus/ { print $2 }')
    [ -n "$n" ] && [ "$n" -ge 8 ] && [ "$n" -le 64 ] || continue
    for coll in $COLLS; do
        cases=$((cases + 1))
        p="$tmp/plan.json"
        t0=$(date +%s.%N)
        if ! "$TACOSC" "$t" $c -c "$coll" --size $S -f mscclpp --proto "$PROTO" -o "$p" -q 2>"$tmp/err"; then
            echo "$t $coll: compile FAILED: $(head -1 "$tmp/err")"
            fail="$fail $t:$coll:compile"
            continue
        fi
        t1=$(date +%s.%N)
        if ! "$TACOSC" verify "$p" --size $S >"$tmp/err" 2>&1; then
            echo "$t $coll: verify FAILED: $(head -1 "$tmp/err")"
            fail="$fail $t:$coll:verify"
            continue
        fi
        t2=$(date +%s.%N)
        out=$(run_mpi "$n" "$p" 2>&1)
        rc=$?
        t3=$(date +%s.%N)
        ok=$(echo "$out" | grep -c "# Out of bounds values : 0 OK")
        printf "%-44s %-14s %3d ranks  compile %6s s  verify %5s s  replay %6s s  %s\n" "$t" "$coll" "$n" \
            "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" "$(secs "$t2" "$t3")" \
            "$([ $rc = 0 ] && [ "$ok" = 1 ] && echo "0 wrong" || echo FAILED)"
        [ $rc = 0 ] && [ "$ok" = 1 ] || fail="$fail $t:$coll:replay"
    done
done
echo "$cases cases; failures:${fail:- none}"
[ -z "$fail" ]
