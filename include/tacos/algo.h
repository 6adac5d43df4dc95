/**
 * @file algo.h
 * The registry of schedule generators (src/compile/registry.c).  Every generator, classic or synthesized,
 * has the same signature and one entry in the table; the table drives --algo, --list-algos, the JSON
 * `algorithm` field and the man page.
 */
#ifndef TACOS_ALGO_H
#define TACOS_ALGO_H

#include "tacos/ir.h"

typedef enum { TC_MATCH_BEST = 0, TC_MATCH_RANDOM = 1 } tc_match_mode;

/** Options every generator receives; generators ignore what does not concern them. */
typedef struct tc_gen_opts {
    uint64_t size;        /**< collective size in bytes (default 1 MiB) */
    int chunks;           /**< chunks per rank (default 1) */
    int root;             /**< root for rooted collectives (default 0) */
    int unwind;           /**< switch unwinding degree, 0 = per-switch or default */
    int switch_model;     /**< the switch model the topology was prepared with (recorded in the plan): 0 each
                               switch's own, else 1 + tc_switch_model */
    int trials;           /**< TACOS: best of T seeds (default 1) */
    tc_match_mode match;  /**< TACOS matching */
    int stats_only;       /**< TACOS: do not keep the transfer list */
    int no_overlap;       /**< TACOS all-reduce: all-gather after the whole reduce-scatter (default: each
                               chunk's all-gather starts when its reduce-scatter ends) */
    int threads;          /**< worker threads (0 = automatic) */
    /** Pricing only (generators ignore it): the MSCCL target the plan is written for, NULL for JSON.
     *  tc_tune_price, hence --algo auto, compare, tune and bundle, lowers each candidate for it and
     *  prices the program as tc_compile prices what it writes (include/tacos/compile.h). */
    const struct tc_msccl_lower_opts *target;
    /** Pricing only: the MSCCL++ plan the candidate is written as (compile -f mscclpp), NULL otherwise. */
    const struct tc_mscclpp_lower_opts *mscclpp_target;
} tc_gen_opts;

void tc_gen_opts_init(tc_gen_opts *o);

/** Generator: build a schedule of `coll` on `topo`.  Returns TC_ERR_UNSUPPORTED (with a diagnostic
 *  giving the reason) when it cannot serve this input; never substitutes another algorithm. */
typedef tc_status (*tc_gen_fn)(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                               tc_sched **out);

typedef struct tc_algo_entry {
    const char *name;
    const char *desc;
    unsigned colls;       /**< TC_COLL_BIT mask of the collectives it can generate */
    tc_gen_fn fn;
} tc_algo_entry;

/** The registry, terminated by an entry with name == NULL. */
extern const tc_algo_entry tc_algo_registry[];
/** Look up by name; NULL when unknown. */
const tc_algo_entry *tc_algo_find(const char *name);
/** Print the registry ("name  collectives  description"). */
void tc_algo_list(FILE *f);
/** Run a generator by name with the registry's checks: the collective is supported; the size gives every
 *  chunk at least one byte (TC_ERR_INVALID); no link takes longer than TC_TIME_MAX for one chunk (TC_ERR_LIMIT,
 *  naming the slowest link at its line); the schedule it returns lasts at most TC_TIME_MAX (TC_ERR_LIMIT). */
tc_status tc_algo_run(tc_ctx *ctx, const char *name, const tc_topo *topo, tc_coll coll,
                      const tc_gen_opts *opts, tc_sched **out);

/* Generators (one file each under src/algo/, tacos under src/synth/). */
tc_status tc_algo_ring(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                       tc_sched **out);
tc_status tc_algo_direct(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out);

/** Helper for logical generators: append a transfer routed on a shortest path of topo (route empty and
 *  link set when src and dst are neighbours). */
tc_status tc_algo_add_routed(tc_sched *s, const tc_topo *topo, int src, int dst, int chunk, tc_op op,
                             int step, double t_start, double t_end);

/**
 * Routing of many logical transfers: shortest paths as tc_topo_shortest_path gives them, with direct
 * neighbours found without a search and the breadth-first tree of each source kept (every source's on
 * topologies of up to 2^22 NPU-vertex pairs, else the last one's), so a generator searches once per
 * source whatever order its transfers come in.
 */
typedef struct tc_algo_router {
    const tc_topo *topo;
    int src;        /**< source of the kept tree, -1 none */
    int *parent;    /**< tree of tc_topo_bfs_tree */
    int *path;      /**< the last path */
    int *trees;     /**< every source's tree once searched (n_npus x vertices ints, when at most 2^22) */
    unsigned char *have; /**< per source: its tree is in trees */
} tc_algo_router;
tc_status tc_algo_router_init(tc_algo_router *r, const tc_topo *topo);
void tc_algo_router_fini(tc_algo_router *r);
/** Path from src to dst; *links stays valid until the next call.  Returns its length, -1 unreachable. */
int tc_algo_router_path(tc_algo_router *r, int src, int dst, const int **links);
/** Summed alpha and bottleneck beta of that path for a message of `bytes` (each link's tc_link_beta_at;
 *  TC_ERR_INVALID when unreachable). */
tc_status tc_algo_router_cost(tc_algo_router *r, int src, int dst, double bytes, double *alpha, double *beta);
/** tc_algo_add_routed on the router's path. */
tc_status tc_algo_router_add(tc_algo_router *r, tc_sched *s, int src, int dst, int chunk, tc_op op, int step,
                             double t_start, double t_end);

/** Cost of the shortest path from src to dst for a message of `bytes`: summed alpha and bottleneck
 *  (largest) beta at that size (tc_link_beta_at). */
tc_status tc_algo_route_cost(const tc_topo *topo, int src, int dst, double bytes, double *alpha, double *beta);

#endif
