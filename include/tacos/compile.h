/**
 * @file compile.h
 * The compile pipeline as a library call (src/compile/compile.c): the one path from a topology to a plan
 * and its prediction that `tacosc` compile, `compare`, `tune`, `bundle` and `--algo auto` share.
 *
 *   chunk choice   gen.chunks < 1 is compile's default: the --chunks auto search for tacos
 *                  (tc_synth_tacos_search), one chunk per rank for every other generator
 *   generate       tc_algo_run (the registry: classic generators or the TACOS synthesizer)
 *   check          tc_sched_check (a plan too large for the checker's state is kept with a warning)
 *   price          tc_sim_run, then the sparse pass (eq. 4-6) and the photonic pass when asked; a plan of
 *                  100,000 transfers or more is checked on a second thread beside its simulation, with
 *                  the same diagnostics in the same order (tc_compile_check_price)
 *   lower          tc_msccl_lower for an MSCCL target; the prediction becomes the lowered program's time
 *                  (as `tacosc sim FILE` prices it, with the plan's simulation options), and `lost` says
 *                  what the format could not express.  Candidates priced elsewhere (tc_tune_price) take
 *                  the same path: gen.target names the target they will be written for.
 *                  tc_mscclpp_lower for MSCCL++ (opts.mscclpp): the prediction becomes the plan's, priced as
 *                  `tacosc sim` prices the written file (tc_mscclpp_to_sched).
 *
 * Errors travel as a structured diagnostic (tc_compile_diag: status, location, message) besides the
 * context's sink, so callers that price many candidates read the reason without parsing text.
 */
#ifndef TACOS_COMPILE_H
#define TACOS_COMPILE_H

#include "tacos/algo.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"
#include "tacos/photonic.h"
#include "tacos/sim.h"
#include "tacos/sparse.h"
#include "tacos/synth.h"

/** The first error a pipeline run reported. */
typedef struct tc_compile_diag {
    tc_status status;  /**< TC_OK when none */
    char file[256];    /**< empty: no location */
    int line, col;
    char msg[1024];
} tc_compile_diag;

typedef struct tc_compile_opts {
    const char *algo;        /**< a registry name (not "auto": the dispatcher picks before) */
    tc_gen_opts gen;         /**< gen.chunks < 1: compile's default chunk choice (see above) */
    int chunks_auto;         /**< tacos: search the chunks even when gen.chunks >= 1 was the start */
    int unwind_auto;         /**< tacos: search the unwinding degree on `raw` too */
    const tc_topo *raw;      /**< unwind_auto: the topology with its switches */
    int sparse;              /**< run the sparse pass with sparse_opts */
    tc_sparse_opts sparse_opts;
    int photonic;            /**< run the photonic pass with photonic_opts */
    tc_photonic_opts photonic_opts;
    const tc_msccl_lower_opts *lower; /**< non-NULL: lower for this MSCCL target and price the program */
    const tc_mscclpp_lower_opts *mscclpp; /**< non-NULL: lower to an MSCCL++ plan and price it */
    const tc_sim_opts *sim;  /**< the plan's simulation options (NULL: defaults) */
    int keep_sim;            /**< keep the plan's simulation result in res->sim */
    int no_bound;            /**< skip the lower bound (quiet runs, candidates) */
    int program_only;        /**< with lower or mscclpp: the caller reads only sched->time, the written
                                  program's, so the plan's own simulation is not run (candidates) */
    int silent;              /**< diagnostics only into the result, not to ctx's sink */
    int quiet_errors;        /**< errors only into the result (a caller with a fallback reports them);
                                  warnings and notes still reach ctx's sink */
    /** Optional (issue 27): called once with the finished plan (its time set) while the checker still runs
     *  on its second thread, so a caller may write the file meanwhile, to be kept only when tc_compile
     *  succeeds (res->early tells the call was made).  Only for plans whose checker runs on a thread
     *  (tc_compile_check_price) and that no pass changes after their simulation (not sparse, photonic or
     *  lowered).  It must report nothing through tc_compile's context (hold what it has to say) and
     *  only read the plan. */
    void (*early)(void *user, const tc_sched *s);
    void *early_user;
} tc_compile_opts;

typedef struct tc_compile_result {
    tc_sched *sched;         /**< the plan; sched->time is the prediction of what is written */
    tc_msccl *msccl;         /**< the lowered program when opts->lower */
    tc_mscclpp *mscclpp;     /**< the MSCCL++ plan when opts->mscclpp */
    tc_topo *unwound;        /**< unwind_auto on a topology with switches: the topology the plan runs on */
    int chunks;              /**< chunks per rank used */
    tc_synth_search search;  /**< what the chunk/unwind search tried (candidates 0: no search) */
    int searched;            /**< the search ran */
    tc_bound bound;          /**< the lower bound (unless no_bound) */
    tc_sim_result *sim;      /**< keep_sim: the plan's simulation result (dense messages); with `lower`, the
                                  lowered program's (the time of the file written) */
    int checked;             /**< 0: too large for the checker, kept unchecked */
    double plan_time;        /**< the plan's own simulated time (before the target's lowering) */
    double dense_time;       /**< sparse: the time with dense messages */
    double wire;             /**< sparse: bytes on the wire over dense */
    char lost[256];          /**< non-empty: what the target format could not express (plan_time differs) */
    int early;               /**< opts.early was called with the plan */
    tc_compile_diag diag;    /**< the first error */
} tc_compile_result;

void tc_compile_opts_init(tc_compile_opts *o);

/**
 * Run the pipeline on `topo` (switches already unwound, or `o->raw` with unwind_auto) for `coll`.  On
 * success `res` owns a plan (and the lowered program when asked); free it with tc_compile_result_free.  On
 * failure the status is returned, res->diag holds the first error and res owns nothing.
 */
tc_status tc_compile(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_compile_opts *o,
                     tc_compile_result *res);

void tc_compile_result_free(tc_compile_result *res);

/** The check and the plan's own simulation as tc_compile runs them on a generated plan s (a failed check is
 *  reported as "ALGO produced an incorrect schedule"): plans of 100,000 transfers or more are checked on a
 *  second thread beside the simulation unless o->gen.threads is 1 or there is one core, with the same
 *  diagnostics in the same order.  On success s->time, res->bound, res->checked and (keep_sim) res->sim
 *  are set; res->sim is then the caller's to free (tc_compile_result_free). */
tc_status tc_compile_check_price(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                                 tc_compile_result *res);

/** The lowered program priced as `tacosc sim FILE TOPO --size S` prices it (its own sends in its order). */
tc_status tc_compile_price_msccl(tc_ctx *ctx, const tc_topo *topo, const tc_msccl *m, uint64_t size,
                                 double *time);

#endif
