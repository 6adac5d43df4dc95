#!/bin/sh
# Walk through the main jobs of tacosc on shipped topologies; run from the repository root after `make`.
# Usage: sh examples/quickstart.sh [TACOSC]
set -e
T=${1:-./tacosc}
$T info topologies/mesh2d-4x4.xml --size 64M
# an all-reduce plan for MSCCL on NCCL, one for RCCL (plain step types) and one as JSON, each checked
$T topologies/mesh2d-4x4.xml --collective allreduce --size 64M -o schedules/mesh2d-4x4-allreduce.xml
$T topologies/mesh2d-4x4.xml --collective allreduce --size 64M --target rccl -o schedules/mesh2d-4x4-allreduce-rccl.xml
$T topologies/dgx1.xml --costs topologies/dgx1.cost --collective allgather --size 64M -o schedules/dgx1-allgather.json
$T verify schedules/mesh2d-4x4-allreduce.xml --target nccl
$T verify schedules/mesh2d-4x4-allreduce-rccl.xml --target rccl
$T verify schedules/dgx1-allgather.json --topo topologies/dgx1.xml
# every algorithm on one topology, best first
$T compare topologies/torus2d-8x8.xml --collective allreduce --size 1G
