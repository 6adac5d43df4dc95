#!/bin/sh
# make photonic-paper: the PCCL photonic paper's evaluation (§5: Figs. 7-10, 17, 18) with tacosc's photonic
# pass.  Prints the reduce-scatter table (128, 64 and 32 GPUs; ring, 2D/3D torus, 2D/3D grid; alpha 3 us,
# 450 GB/s; ring, RHD, bucket and Swing on the fixed topology against PCCL with RHD's rounds, r = 5 us;
# 1 GB with r = 1 ms; all-to-all 32 MB with DEX) and writes the breakdown SVGs (Figs. 8, 9, 10a) to $OUT.
# Then does one case again with the command line, as a user would: plan, verify, sim, MSCCL XML.
# See examples/photonic/README.md for how the numbers compare with the paper's.
# Environment: BUILD (default build), OUT (default $BUILD/photonic-paper), CC, TACOSC (default ./tacosc).
set -e
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/photonic-paper}
CC=${CC:-cc}
TACOSC=${TACOSC:-./tacosc}
LIB=$BUILD/libtacos.a
[ -f "$LIB" ] || make --no-print-directory BUILD="$BUILD" "$LIB"
mkdir -p "$BUILD/examples/photonic" "$OUT"
DRV=$BUILD/examples/photonic/paper
# shellcheck disable=SC2046
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter -Iinclude -pthread \
    -o "$DRV" examples/photonic/paper.c "$LIB" \
    $(pkg-config --libs libxml-2.0 libcjson igraph 2>/dev/null) -lglpk -lm -lpthread
"$DRV" "$OUT" 128 64 32

echo
echo "== the same with the command line: RHD reduce-scatter, 256 MiB, 128 GPUs on a 2D grid, r = 5 us"
"$TACOSC" topo mesh 8x16 -o "$OUT/grid-128.xml"
sed -i 's#</topology>#  <photonic reconfig="5us"/>\n</topology>#' "$OUT/grid-128.xml"
printf '# the paper: alpha 3 us (H100 DGX), 450 GB/s NVLink\ndefault 3us 450GB/s\n' >"$OUT/paper.cost"
set -x
"$TACOSC" "$OUT/grid-128.xml" --costs "$OUT/paper.cost" -c reducescatter -a rhd -s 256M \
    --photonic --fallback mesh2d -o "$OUT/grid-128-rhd.json"
"$TACOSC" verify "$OUT/grid-128-rhd.json" --topo "$OUT/grid-128.xml"
"$TACOSC" sim "$OUT/grid-128-rhd.json" "$OUT/grid-128.xml" --costs "$OUT/paper.cost" --model ab
"$TACOSC" "$OUT/grid-128.xml" --costs "$OUT/paper.cost" -c reducescatter -a rhd -s 256M \
    --photonic --fallback mesh2d -q -o "$OUT/grid-128-rhd.xml"
"$TACOSC" verify "$OUT/grid-128-rhd.xml"
