#!/bin/sh
# Regenerate the shipped topologies with the tacosc generator (see topologies/README).
# Usage: sh topologies/generate.sh [TACOSC]   (run from the repository root; default ./tacosc)
set -e
T=${1:-${TACOSC:-./tacosc}}
D=topologies
g() { out=$1; shift; "$T" topo "$@" -o "$D/$out"; }
# Fig. 2(a), Fig. 1: 64-NPU topologies with the default link (0.5 us, 50 GB/s); rings are bidirectional
g ring-64.xml biring 64
g fc-8.xml fc 8
g fc-64.xml fc 64
g mesh2d-8x8.xml mesh 8x8
g mesh3d-4x4x4.xml mesh 4x4x4
# Fig. 2(b): 128-NPU physical ring, 30 ns and 150 GB/s links
g ring-128.xml biring 128 --alpha 30ns --bandwidth 150GB/s
# Fig. 14: 3x3 mesh; Fig. 18: 10x10 mesh, 5x5x5 torus, 5x5x5 "3D hypercube" (a 3D mesh in the paper)
g mesh2d-3x3.xml mesh 3x3
g mesh2d-10x10.xml mesh 10x10
g torus3d-5x5x5.xml torus 5x5x5
g mesh3d-5x5x5.xml mesh 5x5x5
# Fig. 19 (scalability) and the demo: square 2D meshes
g mesh2d-4x4.xml mesh 4x4
g mesh2d-16x16.xml mesh 16x16
g mesh2d-32x32.xml mesh 32x32
# Fig. 17(a) MultiTree comparison: 2D torus and mesh (costs: multitree.cost, 0.15 us and 16 GB/s)
g torus2d-8x8.xml torus 8x8
# Fig. 16 Themis comparison: 3D torus (costs: themis.cost, 0.7 us and 25 GB/s); Fig. 21: 1,024 NPUs
g torus3d-4x4x4.xml torus 4x4x4
g torus3d-8x8x16.xml torus 8x8x16
# binary hypercube of 3 dimensions (8 NPUs)
g hypercube-3d.xml hypercube 3d
# Table IV Switch: a single 8-port switch; Fig. 15: 2D Switch 8x4 with [300, 25] GB/s
g switch-8.xml switch 8
g switch2d-8x4.xml switch 8x4 --bandwidth 300GB/s,25GB/s
# Fig. 15: DragonFly 4x5 with [400, 200] GB/s and 3D-RFS 2x4x8 with [200, 100, 50] GB/s
g dragonfly-4x5.xml dragonfly 4x5 --bandwidth 400GB/s,200GB/s
g rfs-2x4x8.xml rfs 2x4x8 --bandwidth 200GB/s,100GB/s,50GB/s
# Table V: multi-node 3D-RFS, 2 to 16 nodes (16 to 128 NPUs); Fig. 20: 32 nodes (256 NPUs)
for c in 2 4 16 32; do
    g rfs-2x4x$c.xml rfs 2x4x$c --bandwidth 200GB/s,100GB/s,50GB/s
done
# Fig. 17(b) C-Cube comparison: DGX-1 with 0.7 us and 25 GB/s NVLinks (also dgx1.cost)
g dgx1.xml dgx1 --alpha 0.7us --bandwidth 25GB/s
# not from the paper: a 4-server x 8-GPU hierarchy (classes intra/inter; costs: hier.cost)
g hier-4x8.xml hier 4x8
# issue 25, not from the paper: clusters of two servers imported from the NCCL/RCCL topology dumps in
# tests/import/ (written from the vendors' published layouts) and composed with a rail-optimized network
"$T" topo import tests/import/dgx-h100.xml --nodes 2 -o topologies/clusters/dgx-h100-2x8-rail.xml
"$T" topo import tests/import/hgx-h100-4nic.xml --nodes 2 -o topologies/clusters/hgx-h100-4nic-2x8-rail.xml
"$T" topo import tests/import/mi300x.xml --nodes 2 -o topologies/clusters/mi300x-2x8-rail.xml
