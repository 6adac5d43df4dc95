#!/bin/sh
# make sparse-paper: the SpCCL paper's setting (Perlmutter: 4 A100s per node, 100 GB/s NVLink inside a
# node, 25 GB/s Slingshot between nodes, ring, 99% sparsity) priced by tacosc's sparse pass, beside the
# paper's measured speedups over NCCL (abstract and Figs. 6-8: up to 5.25x all-gather, 2.5x reduce-scatter,
# 2.66x all-reduce with Pici; for all-reduce at 99% Pici is 1.19x faster than COO, Fig. 3).
# Two codec profiles: the CPU codecs' measured defaults (sparse.h, make bench-sparse) and the GPU profile of
# examples/sparse/perlmutter-a100.cost (not measured: derived from the A100's memory bandwidth).
# Environment: TACOSC (default ./tacosc), OUT (default build/sparse-paper), GPUS (default "16 64"),
# SIZE (default 1GiB, the all-gather output / reduce-scatter input / all-reduce buffer).
set -e
TACOSC=${TACOSC:-./tacosc}
OUT=${OUT:-build/sparse-paper}
GPUS=${GPUS:-"16 64"}
SIZE=${SIZE:-1GiB}
DIR=$(dirname "$0")
mkdir -p "$OUT"
grep -v '^codec' "$DIR/perlmutter-a100.cost" >"$OUT/cpu.cost"

# speedup and wire bytes of one compile: "SPEEDUP WIRE" (its notes to $OUT/notes.txt)
run() {
    "$TACOSC" "$1" --collective "$2" --algo ring --size "$SIZE" --sparsity 0.99 --sparse-format "$3" --costs "$4" \
        ${5:+--sparse-rule $5} -o "$OUT/plan.json" 2>>"$OUT/notes.txt" | awk '/bytes on the wire/ { w = $(NF - 4) } / speedup / { for (i = 1; i <= NF; i++) if ($i == "speedup") s = $(i + 1) }
                                  END { printf "%s %s", s, w }'
}

echo "SpCCL setting: ring, sparsity 0.99, $SIZE, 4 GPUs per node, intra 100 GB/s, inter 25 GB/s"
: >"$OUT/notes.txt"
printf '%-14s %-5s %5s %7s %11s %11s %11s  %s\n' collective fmt gpus wire cpu-codecs gpu-profile gpu-previous \
    "paper (Pici, max over 8-64 GPUs, sizes)"
for g in $GPUS; do
    "$TACOSC" topo hier "$((g / 4))x4" -o "$OUT/perlmutter-$g.xml"
    for c in allgather reducescatter allreduce; do
        case $c in allgather) p=5.25x;; reducescatter) p=2.5x;; allreduce) p=2.66x;; esac
        for f in pici coo; do
            set -- $(run "$OUT/perlmutter-$g.xml" $c $f "$OUT/cpu.cost")
            cpu=$1
            set -- $(run "$OUT/perlmutter-$g.xml" $c $f "$DIR/perlmutter-a100.cost" previous)
            prev=$1
            set -- $(run "$OUT/perlmutter-$g.xml" $c $f "$DIR/perlmutter-a100.cost")
            note=$p
            [ $f = coo ] && note="-"
            [ $f = coo ] && [ $c = allreduce ] && note="Pici 1.19x faster than COO"
            printf '%-14s %-5s %5s %7s %11s %11s %11s  %s\n' $c $f "$g" "$2" "$cpu" "$1" "$prev" "$note"
        done
    done
done
cat <<'NOTE'
wire: bytes on the wire over dense (GPU profile; the exact messages, headers included).
cpu-codecs: predicted speedup over dense with the CPU codecs' measured throughputs: compression and
  decompression at ~10 GB/s cost more than 25 GB/s links save, so sparse loses (below 1x).
gpu-profile: with examples/sparse/perlmutter-a100.cost's GPU codec rates (NOT measured: the A100's memory
  bandwidth, an upper bound).  The model prices wire bytes, codec throughput and each step's dependence;
  the paper's runs also pay kernel launches, NCCLX's protocol and channel limits and per-step
  synchronisation, which is why its measured speedups are several times below this model's.
gpu-previous: the same with --sparse-rule previous (SpCCL's rule: a reduction step judged by the sparsity
  one step earlier; it keeps more late reduce-scatter steps sparse, which the forecast prices honestly).
NOTE
