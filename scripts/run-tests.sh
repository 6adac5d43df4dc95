#!/bin/sh
# Run every Check suite given as arguments from the repository root; print a closing total.
# VALGRIND=1 runs each under valgrind memcheck.
fail=0; pass=0; failed=""
for t in "$@"; do
    echo "== $t"
    if [ -n "$VALGRIND" ]; then
        CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full "$t"
    else
        "$t"
    fi
    rc=$?
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
echo "suites: $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failed suites:$failed"; exit 1; }
