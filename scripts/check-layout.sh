#!/bin/sh
# The folder graph of the library must have no cycle: a folder under src/ depends on another when one of
# its objects uses a symbol that an object of the other defines (nm of the built objects, so a call through
# any header counts).  Also the two edges the pipeline rules name: src/algo never calls into src/synth and
# src/sim never into src/algo (the registry that joins the generators and the synthesizer is src/compile).
# Usage: scripts/check-layout.sh [BUILD]   (default build/; run after `make`)
# Exit 0 when the graph is acyclic, 1 with the cycle or the forbidden edge named, 77 (skipped) without nm.
set -eu
BUILD=${1:-build}
command -v nm >/dev/null 2>&1 || { echo "check-layout: skipped (no nm)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/def"
: >"$tmp/use"
for c in src/*/*.c; do
    dir=$(basename "$(dirname "$c")")
    case $dir in cli | exec) continue ;; esac # programs, not library folders
    o="$BUILD/${c%.c}.o"
    [ -f "$o" ] || { echo "check-layout: $o missing (run make first)" >&2; exit 1; }
    nm -g --defined-only "$o" | awk -v d="$dir" 'NF == 3 { print $3, d }' >>"$tmp/def"
    nm -u "$o" | awk -v d="$dir" '{ print $NF, d }' >>"$tmp/use"
done
# edges "from to", one per pair of folders
sort -u "$tmp/def" >"$tmp/def.s"
awk 'NR == FNR { owner[$1] = $2; next } ($1 in owner) && owner[$1] != $2 { print $2, owner[$1] }' \
    "$tmp/def.s" "$tmp/use" | sort -u >"$tmp/edges"
bad=0
for e in "algo synth" "sim algo"; do
    if grep -qx "$e" "$tmp/edges"; then
        set -- $e
        echo "check-layout: src/$1 calls into src/$2:" \
            "$(awk -v a="$1" -v b="$2" 'NR == FNR { owner[$1] = $2; next } $2 == a && owner[$1] == b { print $1 }' \
                "$tmp/def.s" "$tmp/use" | sort -u | tr '\n' ' ')"
        bad=1
    fi
done
# cycle: tsort names the loop on stderr and exits non-zero
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort"; then
    echo "check-layout: folder cycle:" $(grep -v 'input contains a loop' "$tmp/tsort" | sed 's/^tsort: //')
    bad=1
fi
[ $bad = 0 ] && echo "check-layout: ok ($(wc -l <"$tmp/edges") folder edges, no cycle)"
exit $bad
