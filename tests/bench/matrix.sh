#!/bin/sh
# make matrix: the compile matrix of issue 21 on every shipped topology (topologies/*.xml, each with its
# cost file: TOPO.cost beside it, dgx1.cost, hier.cost).  For all-reduce, all-gather and reduce-scatter at
# 1K, 64K, 1M, 64M and 1G:
#   1. tacosc TOPO -c C -s S -o d.xml            compile to NCCL XML (the default algorithm, tacos) succeeds
#   2. tacosc verify --target nccl d.xml          the file passes NCCL's rules and limits
#   3. tacosc sim d.xml TOPO --size S             the file's time equals the compile summary's
#   4. tacosc TOPO -c C -s S -a auto -o a.xml     --algo auto to XML is never slower than the default
#   5. tacosc compare TOPO -c C -s S -f xml       its row for auto's choice equals auto's summary
#      (topologies of at most MATRIX_COMPARE_MAX npus, default 128: compare prices every generator again)
# Each command runs under `timeout MATRIX_TIMEOUT` (default 600 s).  One line per case; failures are
# listed at the end and make the exit status 1.  Narrow with MATRIX_TOPOS (file list), MATRIX_COLLS,
# MATRIX_SIZES; MATRIX_AUTO=0 skips steps 4 and 5.  TACOSC names the binary (default ./tacosc).
set -u
TACOSC=${TACOSC:-./tacosc}
TOPOS=${MATRIX_TOPOS:-$(ls topologies/*.xml)}
COLLS=${MATRIX_COLLS:-allreduce allgather reducescatter}
SIZES=${MATRIX_SIZES:-1K 64K 1M 64M 1G}
TMO=${MATRIX_TIMEOUT:-600}
AUTO=${MATRIX_AUTO:-1}
CMPMAX=${MATRIX_COMPARE_MAX:-128}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails="$tmp/fails"
: >"$fails"
n=0

costs_for() {
    case $1 in
    *dgx1*) echo "--costs topologies/dgx1.cost" ;;
    *hier*) echo "--costs topologies/hier.cost" ;;
    *) [ -f "${1%.xml}.cost" ] && echo "--costs ${1%.xml}.cost" ;;
    esac
}
# "1.116 ms" -> seconds
secs() { echo "$1" | awk '{v = $1; if ($2 == "ns") v *= 1e-9; else if ($2 == "us") v *= 1e-6;
                           else if ($2 == "ms") v *= 1e-3; printf "%.6e\n", v}'; }
# the predicted time of a compile summary ("  predicted time 1.116 ms (...)")
pred() { sed -n 's/^  predicted time \([0-9.e+-]* [a-z]*\) (.*/\1/p' "$1" | head -n 1; }
fail() {
    echo "  FAIL $*"
    echo "$*" >>"$fails"
}

for t in $TOPOS; do
    C=$(costs_for "$t")
    np=$(sed -n 's/.* npus="\([0-9]*\)".*/\1/p' "$t" | head -n 1)
    for c in $COLLS; do
        for s in $SIZES; do
            n=$((n + 1))
            case="$t $c $s"
            start=$(date +%s)
            # shellcheck disable=SC2086
            if ! timeout "$TMO" "$TACOSC" "$t" $C -c "$c" -s "$s" -o "$tmp/d.xml" >"$tmp/d.out" 2>&1; then
                fail "$case: compile: $(grep -m1 'error' "$tmp/d.out" || tail -n 1 "$tmp/d.out")"
                continue
            fi
            dt=$(pred "$tmp/d.out")
            if ! "$TACOSC" verify --target nccl "$tmp/d.xml" >"$tmp/v.out" 2>&1; then
                fail "$case: verify --target nccl: $(grep -m1 'error' "$tmp/v.out")"
            fi
            # shellcheck disable=SC2086
            timeout "$TMO" "$TACOSC" sim "$tmp/d.xml" "$t" $C --size "$s" >"$tmp/s.out" 2>&1
            rc=$?
            st=$(sed -n 's/^  time \([0-9.e+-]* [a-z]*\), .*/\1/p' "$tmp/s.out" | head -n 1)
            [ "$st" = "$dt" ] ||
                fail "$case: sim of the file says '$st' (exit $rc: $(grep -m1 -i 'error\|fatal' "$tmp/s.out")), the compile summary '$dt'"
            line="$case: default $dt"
            if [ "$AUTO" = 1 ]; then
                # shellcheck disable=SC2086
                if ! timeout "$TMO" "$TACOSC" "$t" $C -c "$c" -s "$s" -a auto -o "$tmp/a.xml" >"$tmp/a.out" 2>&1; then
                    fail "$case: --algo auto: $(grep -m1 'error' "$tmp/a.out" || tail -n 1 "$tmp/a.out")"
                else
                    at=$(pred "$tmp/a.out")
                    algo=$(sed -n 's/^  auto: chose \([a-z0-9-]*\) .*/\1/p' "$tmp/a.out" | head -n 1)
                    line="$line, auto $algo $at"
                    if [ "$(awk -v a="$(secs "$at")" -v d="$(secs "$dt")" 'BEGIN { print (a <= d) }')" != 1 ]; then
                        fail "$case: --algo auto ($algo) $at is slower than the default $dt"
                    fi
                    if [ "${np:-0}" -le "$CMPMAX" ] && [ -n "$algo" ]; then
                        # shellcheck disable=SC2086
                        timeout "$TMO" "$TACOSC" compare "$t" $C -c "$c" -s "$s" -f xml >"$tmp/c.out" 2>&1
                        rc=$?
                        ct=$(awk -v a="$algo" '$1 == a { print $2, $3; exit }' "$tmp/c.out")
                        [ "$ct" = "$at" ] ||
                            fail "$case: compare -f xml's $algo row '$ct', auto's summary '$at' (exit $rc: $(grep -m1 -i 'error\|fatal' "$tmp/c.out"))"
                    fi
                fi
            fi
            echo "$line ($(($(date +%s) - start)) s)"
        done
    done
done
nf=$(wc -l <"$fails")
echo "matrix: $n cases, $nf failures"
[ "$nf" -eq 0 ] || { cat "$fails"; exit 1; }
