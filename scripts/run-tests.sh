#!/bin/sh
# Run every Check suite given as arguments from the repository root: one line per suite with its result,
# wall-clock time and checks (passed, failed, skipped), the suite's whole output (its seed line, its notes,
# Check's report) only when it fails (every output is kept in BUILD/tests/NAME.log), a progress line every
# 60 s while a suite runs, and a closing total "checks: N passed, N failed, N skipped".
# VALGRIND=1 runs each suite under valgrind memcheck.
#
# Skips: a test that cannot run here (no MPI build, no MSCCL examples, no GPU, a sanitizer) prints
# "SKIP: TEST: why" (tu_skip in tests/testutil.h); Check counts it as passed, so each test named on such a
# line is moved from passed to skipped.
# Timeouts: a test case without its own timeout gets CK_DEFAULT_TIMEOUT (120 s here, not Check's 4 s), and
# every timeout is scaled by CK_TIMEOUT_MULTIPLIER, which defaults to the machine's load per core (1 to 4),
# so a loaded machine does not fail a suite that is merely slow.
: "${CK_DEFAULT_TIMEOUT:=120}"
if [ -z "$CK_TIMEOUT_MULTIPLIER" ]; then
    CK_TIMEOUT_MULTIPLIER=$(awk -v n="$(nproc 2>/dev/null || echo 1)" '{ m = int($1 / n + 0.999); if (m < 1) m = 1;
        if (m > 4) m = 4; print m }' /proc/loadavg 2>/dev/null || echo 1)
fi
export CK_DEFAULT_TIMEOUT CK_TIMEOUT_MULTIPLIER
fail=0
pass=0
failed=""
c_pass=0
c_fail=0
c_skip=0
t_all=$(date +%s.%N)
for t in "$@"; do
    name=$(basename "$t")
    log="$t.log"
    t0=$(date +%s.%N)
    if [ -n "$VALGRIND" ]; then
        CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full "$t" >"$log" 2>&1 &
    else
        "$t" >"$log" 2>&1 &
    fi
    pid=$!
    ( # progress for long suites: one line a minute
        n=0
        while sleep 5; do
            kill -0 "$pid" 2>/dev/null || exit 0
            n=$((n + 5))
            [ $((n % 60)) -eq 0 ] && printf '%-18s ...     running for %d s\n' "$name" "$n"
        done
    ) &
    ticker=$!
    wait "$pid"
    rc=$?
    kill "$ticker" 2>/dev/null
    wait "$ticker" 2>/dev/null
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    counts=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log" | tail -1)
    skips=$(sed -n 's/^SKIP: \([^:]*\):.*/\1/p' "$log" | sort -u | wc -l)
    checks=""
    if [ -n "$counts" ]; then
        n_all=${counts%% *}
        rest=${counts#* }
        n_bad=$((${rest% *} + ${rest#* }))
        n_ok=$((n_all - n_bad - skips))
        [ $n_ok -ge 0 ] || n_ok=0
        checks="$n_ok passed, $n_bad failed, $skips skipped"
        c_pass=$((c_pass + n_ok))
        c_fail=$((c_fail + n_bad))
        c_skip=$((c_skip + skips))
    fi
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        printf '%-18s ok      %7s s   %s\n' "$name" "$secs" "$checks"
        [ "$skips" -gt 0 ] && sed -n 's/^SKIP: /    skipped: /p' "$log" | sort -u
    else
        fail=$((fail + 1))
        failed="$failed $name"
        [ -n "$counts" ] || c_fail=$((c_fail + 1))
        printf '%-18s FAILED  %7s s   %s (exit %d); its output (%s):\n' "$name" "$secs" "$checks" $rc "$log"
        sed 's/^/    /' "$log"
    fi
done
secs=$(awk -v a="$t_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "all suites: $secs s (timeouts x$CK_TIMEOUT_MULTIPLIER)"
echo "suites: $pass passed, $fail failed"
[ $fail -eq 0 ] || echo "failed suites:$failed"
echo "checks: $c_pass passed, $c_fail failed, $c_skip skipped"
[ $fail -eq 0 ]
