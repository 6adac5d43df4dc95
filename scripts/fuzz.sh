#!/bin/sh
# make fuzz: run each libFuzzer harness (tests/fuzz/) for SECONDS on a corpus seeded from the committed
# corpus (tests/fuzz/corpus/NAME/, pending reproducers excepted), the repository's own files of that kind
# and the real MSCCL examples beside it (../shared/msccl-examples or $TC_EXAMPLES), with its dictionary.
# One line per harness; a crash stops nothing else but fails the run and names the file to replay.
# Usage: sh scripts/fuzz.sh BUILD_DIR SECONDS NAME...
dir=$1
secs=$2
shift 2
examples=${TC_EXAMPLES:-../shared/msccl-examples}
status=0
for name in "$@"; do
    corpus=$dir/corpus/$name
    mkdir -p "$corpus"
    case $name in
    topo | photonic) seeds="topologies/*.xml" ;;
    costs) seeds="topologies/*.cost" ;;
    import) seeds="tests/import/*" ;;
    json) seeds="schedules/*.json tests/golden/*.json" ;;
    msccl) seeds="schedules/*.xml tests/golden/*.xml $examples/*.xml" ;;
    *) seeds="" ;;
    esac
    for f in tests/fuzz/corpus/$name/* $seeds; do
        # small files only: the fuzzer's inputs stay below 24 KiB, so it runs many of them
        [ -f "$f" ] && [ "$(wc -c <"$f")" -le 24576 ] && cp "$f" "$corpus/"
    done
    log=$dir/$name.log
    t0=$(date +%s)
    "$dir/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -max_len=24576 -dict="tests/fuzz/$name.dict" -artifact_prefix="$dir/crash-$name-" -print_final_stats=1 \
        "$corpus" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    files=$(ls "$corpus" | wc -l)
    if [ $rc = 0 ]; then
        echo "fuzz $name: ok, ${runs:-?} runs in $(($(date +%s) - t0)) s, $cov, corpus $files files"
    else
        crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        pending=$(ls tests/fuzz/corpus/$name/pending 2>/dev/null | wc -l)
        # While a harness has pending reproducers (bugs being fixed on another branch), a crash of their
        # kind (running out of memory, or an error inside the MSCCL sources) is reported, not counted.
        if [ "$pending" -gt 0 ] && grep -qE "out-of-memory|malloc limit|src/msccl/" "$log"; then
            echo "fuzz $name: crashed like its $pending pending reproducers (open bugs, not counted);" \
                "log $log, input ${crash:-?}"
            continue
        fi
        status=1
        echo "fuzz $name: FAILED (exit $rc) after $(($(date +%s) - t0)) s; log $log"
        grep -E "ERROR: |SUMMARY: |fuzz invariant broken|==[0-9]+==" "$log" | head -5 | sed 's/^/  /'
        [ -n "$crash" ] && echo "  input: $crash (replay: $dir/fuzz_$name $crash; add it to tests/fuzz/corpus/$name/" \
            "with a regression test)"
    fi
done
exit $status
