#!/bin/sh
# Run every Check suite given as arguments from the repository root: one line per suite with its result
# and wall-clock time, the suite's whole output (its seed line, its notes, Check's report) only when it
# fails (every output is kept in BUILD/tests/NAME.log), and a closing total.  VALGRIND=1 runs each suite
# under valgrind memcheck.
fail=0
pass=0
failed=""
t_all=$(date +%s.%N)
for t in "$@"; do
    name=$(basename "$t")
    log="$t.log"
    t0=$(date +%s.%N)
    if [ -n "$VALGRIND" ]; then
        CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full "$t" >"$log" 2>&1
    else
        "$t" >"$log" 2>&1
    fi
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    checks=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 checks, \2 failed, \3 errors/p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        printf '%-18s ok      %7s s   %s\n' "$name" "$secs" "${checks:-}"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        printf '%-18s FAILED  %7s s   %s (exit %d); its output (%s):\n' "$name" "$secs" "${checks:-}" $rc "$log"
        sed 's/^/    /' "$log"
    fi
done
secs=$(awk -v a="$t_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "all suites: $secs s"
echo "suites: $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failed suites:$failed"; exit 1; }
