/**
 * @file algo_classic.h
 * Classic schedule generators (src/algo/), registered in src/compile/registry.c.  Each has the tc_gen_fn
 * signature of algo.h and returns TC_ERR_UNSUPPORTED, with a diagnostic giving the reason, for inputs
 * it cannot serve.  Times in their schedules are alpha-beta estimates without congestion (see each
 * file's header); `tacosc sim` gives the simulated time.
 */
#ifndef TACOS_ALGO_CLASSIC_H
#define TACOS_ALGO_CLASSIC_H

#include "tacos/algo.h"
#include "tacos/topo.h"

/** Bidirectional ring: half of each block each way (2K chunks per rank). */
tc_status tc_algo_ring2(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                        tc_sched **out);
/** Recursive halving/doubling with the MPICH non-power-of-two fold. */
tc_status tc_algo_rhd(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out);
/** NCCL-style double binary tree all-reduce (two complementary trees, half the data each, pipelined). */
tc_status tc_algo_dbt(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out);
/** Swing: 1D, or multi-dimensional when the topology is a recognised torus with power-of-two sides. */
tc_status tc_algo_swing(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                        tc_sched **out);
/** Bucket: one ring per dimension, dimension after dimension, on a recognised torus or mesh. */
tc_status tc_algo_bucket(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out);
/** Hypercube direct-exchange all-to-all (DEX, the PCCL paper's Fig. 10a): log2 R steps, R a power of two. */
tc_status tc_algo_dex(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out);
/** Shifted direct-exchange all-to-all: R-1 steps, rank r sends to r+j in step j-1 (any R >= 2). */
tc_status tc_algo_shift(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                        tc_sched **out);
/** Big Send-off two-level design, inter-node ring, intra-node ring (needs the topology's nodes). */
tc_status tc_algo_hier_ring(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                            tc_sched **out);
/** Big Send-off two-level design, inter-node recursive doubling/halving, intra-node ring. */
tc_status tc_algo_hier_rec(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                           tc_sched **out);

#endif
