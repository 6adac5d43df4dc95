/* The compile pipeline (include/tacos/compile.h): chunk choice, generation, check, the sparse and photonic
 * passes, lowering for an MSCCL target and the prediction of what is written. */
#include "tacos/compile.h"

#include "tacos/check.h"
#include "tacos/topo.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tc_compile_opts_init(tc_compile_opts *o)
{
    memset(o, 0, sizeof *o);
    o->algo = "tacos";
    tc_gen_opts_init(&o->gen);
    o->gen.chunks = 0; /* compile's default choice */
    tc_photonic_opts_init(&o->photonic_opts);
}

void tc_compile_result_free(tc_compile_result *res)
{
    if (!res)
        return;
    tc_sched_free(res->sched);
    tc_msccl_free(res->msccl);
    tc_mscclpp_free(res->mscclpp);
    res->mscclpp = NULL;
    tc_topo_free(res->unwound);
    tc_sim_result_free(res->sim);
    res->sim = NULL;
    res->sched = NULL;
    res->msccl = NULL;
    res->unwound = NULL;
}

/* The sink of a pipeline run: the first error kept as a record, every diagnostic passed on unless silent. */
typedef struct {
    tc_ctx *outer;
    int silent, quiet_errors;
    tc_compile_diag *rec;
    int have;
} recorder;

static void record(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    recorder *r = user;
    if (level == TC_DIAG_ERROR && !r->have) {
        r->have = 1;
        snprintf(r->rec->file, sizeof r->rec->file, "%s", file ? file : "");
        r->rec->line = line;
        r->rec->col = col;
        snprintf(r->rec->msg, sizeof r->rec->msg, "%s", msg);
    }
    if (!r->silent && !(r->quiet_errors && level == TC_DIAG_ERROR) && r->outer->sink)
        r->outer->sink(r->outer->sink_user, level, file, line, col, msg);
}

/* the program priced with the plan's simulation options (size: the plan's), its result kept in *out */
static tc_status price_program(tc_ctx *ctx, const tc_topo *topo, const tc_msccl *m, const tc_sim_opts *base,
                               uint64_t size, tc_sim_result **out)
{
    tc_sched *a = NULL;
    tc_sim_opts so;
    if (base)
        so = *base;
    else
        tc_sim_opts_init(&so);
    so.size = size;
    so.xfer_scale = so.xfer_pre = so.xfer_post = NULL; /* per-transfer factors are the plan's, not the program's */
    tc_status st = tc_msccl_to_sched(ctx, m, "lowered MSCCL program", &a);
    if (!st)
        st = tc_sim_run(ctx, a, topo, &so, out);
    tc_sched_free(a);
    return st;
}

tc_status tc_compile_price_msccl(tc_ctx *ctx, const tc_topo *topo, const tc_msccl *m, uint64_t size,
                                 double *time)
{
    tc_sim_result *r = NULL;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    so.no_bound = 1;
    tc_status st = price_program(ctx, topo, m, &so, size, &r);
    if (!st)
        *time = r->time;
    tc_sim_result_free(r);
    return st;
}

/* chunk choice: compile's default (gen.chunks < 1) is the search for tacos and one chunk elsewhere */
static tc_status choose_chunks(tc_ctx *ctx, const tc_topo **topo, tc_coll coll, const tc_compile_opts *o,
                               tc_gen_opts *g, tc_compile_result *res, tc_sched **kept)
{
    int tacos = !strcmp(o->algo, "tacos");
    int chunks_auto = tacos && (o->chunks_auto || g->chunks < 1), unwind_auto = tacos && o->unwind_auto && o->raw;
    if (!chunks_auto && !unwind_auto) {
        if (g->chunks < 1)
            g->chunks = 1;
        return TC_OK;
    }
    if (g->chunks < 1)
        g->chunks = 1;
    /* the search's plan when its first candidate wins: not synthesized a second time (issue 27) */
    tc_status st = tc_synth_tacos_search_plan(ctx, unwind_auto ? o->raw : *topo, coll, g, chunks_auto, unwind_auto,
                                              &res->search, kept);
    if (st)
        return st;
    res->searched = 1;
    g->chunks = res->search.best.chunks;
    if (unwind_auto && o->raw->n_switches > 0) {
        g->unwind = res->search.best.unwind;
        if ((st = tc_topo_unwind(ctx, o->raw, g->unwind, &res->unwound)))
            return st;
        *topo = res->unwound;
    }
    return TC_OK;
}

/* The checker of a generated plan.  Its messages are caught in rec (it may run on a second thread beside
 * the plan's simulation: check_report, on the calling thread, says what it found). */
typedef struct check_job {
    tc_ctx ctx;             /* the caller's, its sink the record */
    const tc_sched *s;
    tc_check_opts co;
    tc_diag_rec rec;
    tc_status st;
    double secs;
    pthread_t thread;
    int started;
} check_job;

static void check_job_init(check_job *j, const tc_ctx *ctx, const tc_topo *topo, const tc_sched *s)
{
    memset(j, 0, sizeof *j);
    j->ctx = *ctx;
    j->ctx.sink = tc_diag_record;
    j->ctx.sink_user = &j->rec;
    j->s = s;
    j->co.topo = topo;
    /* te-ccl: a link's chunks overlap between start and arrival (alpha holds no link): no one-per-link test */
    j->co.no_link_check = topo->link_model != TC_LINK_TACOS;
}

static void *check_job_run(void *arg)
{
    check_job *j = arg;
    double t0 = tc_now();
    j->st = tc_sched_check(&j->ctx, j->s, &j->co, "generated schedule");
    j->secs = tc_now() - t0;
    return NULL;
}

/* What the checker found: a plan too large for its state is kept unchecked, with a warning, where every
 * other finding is a bug of the generator */
static tc_status check_report(tc_ctx *ctx, const check_job *j, const char *algo, int *checked)
{
    tc_status st = j->st;
    *checked = 1;
    if (st == TC_ERR_LIMIT) {
        const tc_diag_rec *rec = &j->rec;
        const char *why = !rec->have ? "its state would not fit"
                          : !strncmp(rec->msg, "checker: ", 9) ? rec->msg + 9 /* the checker names itself */
                                                               : rec->msg;
        tc_warn(ctx, NULL, 0, "the plan is not checked: %s", why);
        st = TC_OK;
        *checked = 0;
    } else if (st) {
        tc_sched_check(ctx, j->s, &j->co, "generated schedule"); /* again, to report its finding */
        tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "%s produced an incorrect schedule (a bug in tacosc)", algo);
        st = TC_ERR_INTERNAL;
    }
    if (!st && ctx->verbose && *checked)
        tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0, "checked the schedule (symbolic execution) in %.3f s", j->secs);
    return st;
}

/* the sparse pass: a format per send; the prediction prices them (eq. 4-6) */
static tc_status sparse_pass(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                             tc_compile_result *res)
{
    double t = 0, dense = s->time;
    tc_status st = tc_sparse_annotate(ctx, topo, s, &o->sparse_opts, o->sim, &t, &res->wire); /* auto: never above dense */
    if (!st) {
        res->dense_time = dense;
        s->time = t;
        if (s->time > res->dense_time && !o->no_bound)
            tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0,
                    "the sparse messages are predicted %.2fx slower than dense ones: compression and "
                    "decompression cost more than the bytes they save on these links (codec throughputs: "
                    "man 5 tacosc-costs; thresholds: --thresholds; --sparse-format auto never is)",
                    s->time / res->dense_time);
    }
    return st;
}

/* lowering for the MSCCL target; the prediction is the program's, and what the format lost is named */
static tc_status lower(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                       tc_compile_result *res)
{
    tc_status st = tc_msccl_lower(ctx, s, o->lower, &res->msccl);
    if (st || o->gen.stats_only || o->sparse)
        return st;
    /* the program as `tacosc sim FILE` prices it, with the plan's model; a kept simulation becomes the
     * program's (compare's rows and SVG show the file's time) */
    tc_sim_opts so;
    if (o->sim)
        so = *o->sim;
    else
        tc_sim_opts_init(&so);
    so.no_bound = 1; /* the plan's bounds hold for its program (same chunks): taken from the plan's run */
    tc_sim_result *r = NULL;
    if ((st = price_program(ctx, topo, res->msccl, &so, s->size_bytes, &r)))
        return st;
    const double t = r->time;
    if (o->keep_sim) {
        if (res->sim) {
            r->bound = res->sim->bound;
            r->ideal = res->sim->ideal;
            r->efficiency = r->bound.time > 0 && r->time > 0 ? r->bound.time / r->time : 0;
        }
        tc_sim_result_free(res->sim);
        res->sim = r;
    } else
        tc_sim_result_free(r);
    if (s->time > 0 && fabs(t - s->time) > 1e-9 * s->time) {
        int mc = 0;
        for (int i = 0; i < topo->n_swnodes; i++)
            mc |= topo->swnodes[i].multicast != 0;
        snprintf(res->lost, sizeof res->lost, "%s",
                 o->photonic ? "MSCCL XML has no optical circuits and no reconfiguration: the file runs on the "
                               "topology's fixed links (the photonic plan is the breakdown below)"
                 : mc        ? "MSCCL XML has no multicast, each switch copy is a send of its own"
                             : "MSCCL XML keeps no link choice and no times, only each rank's order of sends and "
                               "receives");
    }
    s->time = t;
    return TC_OK;
}

/* lowering to an MSCCL++ plan: the prediction is the plan's as `tacosc sim FILE` prices it */
static tc_status lower_mscclpp(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                               tc_compile_result *res)
{
    tc_mscclpp_lower_opts lo = *o->mscclpp;
    if (!lo.node_of)
        lo.node_of = topo->node_of;
    tc_status st = tc_mscclpp_lower(ctx, s, &lo, &res->mscclpp);
    if (!st && !lo.any_size) /* the executor's message-size rule at this size: else another chunking */
        st = tc_mscclpp_check_size(ctx, res->mscclpp, s->size_bytes, "lowered MSCCL++ plan");
    if (st || o->gen.stats_only)
        return st;
    tc_sched *a = NULL;
    tc_sim_opts so;
    if (o->sim)
        so = *o->sim;
    else
        tc_sim_opts_init(&so);
    so.no_bound = 1;
    so.size = s->size_bytes;
    so.xfer_scale = so.xfer_pre = so.xfer_post = NULL;
    tc_sim_result *r = NULL;
    if (!(st = tc_mscclpp_to_sched(ctx, res->mscclpp, s->size_bytes, "lowered MSCCL++ plan", &a)))
        st = tc_sim_run(ctx, a, topo, &so, &r);
    tc_sched_free(a);
    if (st)
        return st;
    if (s->time > 0 && fabs(r->time - s->time) > 1e-9 * s->time)
        snprintf(res->lost, sizeof res->lost, "%s%s",
                 lo.packets ? "LL packets carry 8 bytes of flags beside every 8 bytes of data (twice the bytes on "
                              "the wire); "
                            : "",
                 "an MSCCL++ plan keeps no link choice and no times, only each thread block's order of puts, "
                 "signals and waits");
    s->time = r->time;
    tc_sim_result_free(r);
    return TC_OK;
}

/* the plan's own simulation (its result adopted by sim_adopt) */
static tc_status sim_plan(tc_ctx *sub, const tc_topo *topo, const tc_sched *s, const tc_compile_opts *o,
                          tc_sim_result **r)
{
    tc_sim_opts so;
    if (o->sim)
        so = *o->sim;
    else
        tc_sim_opts_init(&so);
    so.no_bound |= o->no_bound;
    return tc_sim_run(sub, s, topo, &so, r);
}

/* the plan's time and bound from its simulation (kept in res->sim when asked; else freed) */
static void sim_adopt(tc_sched *s, const tc_compile_opts *o, tc_compile_result *res, tc_sim_result *r)
{
    s->time = r->time;
    res->bound = r->bound;
    if (o->keep_sim)
        res->sim = r;
    else
        tc_sim_result_free(r);
}

/* Plans of at least this many transfers are checked on a second thread while the plan's simulation runs
 * (issue 27: on the 2,095,104 transfers of a 32x32 mesh all-reduce the checker takes ~0.6 s, the simulation
 * ~0.3 s); smaller ones, and a single core or --threads 1, keep one thread. */
#define CHECK_THREAD_MIN 100000

/* The check, then (unless program_only) the plan's simulation.  Both only read s; on a second thread the
 * checker runs beside the simulation, whose diagnostics are held until the checker's are reported, so what
 * is printed, and in what order, is the same as on one thread: a plan that fails the check reports that
 * alone, as if it had never been simulated; s and res are written only after the join. */
static tc_status check_and_simulate(tc_ctx *sub, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                                    const tc_gen_opts *g, int program_only, tc_compile_result *res)
{
    check_job cj;
    check_job_init(&cj, sub, topo, s);
    const int threaded = !program_only && s->n_xfers >= CHECK_THREAD_MIN && g->threads != 1 &&
                         (g->threads > 1 || sysconf(_SC_NPROCESSORS_ONLN) > 1);
    tc_diag_hold held = {0};
    tc_ctx sc = *sub;
    sc.sink = tc_diag_hold_sink;
    sc.sink_user = &held;
    tc_sim_result *r = NULL;
    tc_status sst = TC_OK;
    if (threaded)
        cj.started = pthread_create(&cj.thread, NULL, check_job_run, &cj) == 0;
    if (cj.started) {
        sst = sim_plan(&sc, topo, s, o, &r);
        if (!sst && o->early && !o->sparse && !o->photonic && !o->lower && !o->mscclpp) {
            /* the plan is final: the caller writes it while the checker runs (the checker reads neither
             * s->time nor res) */
            sim_adopt(s, o, res, r);
            r = NULL;
            o->early(o->early_user, s);
            res->early = 1;
        }
        pthread_join(cj.thread, NULL);
    } else
        check_job_run(&cj);
    tc_status st = check_report(sub, &cj, o->algo, &res->checked);
    if (st) {
        tc_diag_hold_release(&held, NULL); /* a plan that fails the check: its simulation is not reported */
        tc_sim_result_free(r);
        return st;
    }
    if (program_only) {
        s->time = 0; /* the program's time replaces it (lower, lower_mscclpp) */
        return TC_OK;
    }
    if (cj.started)
        tc_diag_hold_release(&held, sub);
    else
        sst = sim_plan(sub, topo, s, o, &r);
    if (sst)
        return sst;
    if (r)
        sim_adopt(s, o, res, r);
    return TC_OK;
}

tc_status tc_compile_check_price(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_compile_opts *o,
                                 tc_compile_result *res)
{
    return check_and_simulate(ctx, topo, s, o, &o->gen, 0, res);
}

/* generate (or take the plan the chunk search already made: *kept, consumed), check and price one chunk
 * choice */
static tc_status build(tc_ctx *sub, const tc_topo *topo, tc_coll coll, const tc_compile_opts *o, const tc_gen_opts *g,
                       tc_compile_result *res, tc_sched **kept)
{
    double t0 = tc_now();
    tc_status st = TC_OK;
    if (kept && *kept && (*kept)->time <= TC_TIME_MAX && tc_sched_makespan(*kept) <= TC_TIME_MAX) {
        res->sched = *kept;
        *kept = NULL;
    } else
        st = tc_algo_run(sub, o->algo, topo, coll, g, &res->sched);
    if (st)
        goto done;
    tc_sched *s = res->sched;
    if (sub->verbose)
        tc_diag(sub, TC_DIAG_NOTE, NULL, 0, 0, "%s %s: %d transfers, %d steps, chunk %llu B (%d per rank%s) in %.3f s",
                o->algo, tc_coll_name(coll), s->n_xfers, s->n_steps, (unsigned long long)s->chunk_bytes, g->chunks,
                res->searched ? ", searched" : "", tc_now() - t0);
    /* a caller that reads only the written program's time (--algo auto's candidates, tune, bundle): the
     * plan's own simulation is not run (on 1,024 ranks it is half of a candidate's cost, and a candidate
     * the target refuses needs none) */
    const int program_only =
        o->program_only && (o->lower || o->mscclpp) && !o->keep_sim && !o->sparse && !o->photonic;
    if (!g->stats_only) {
        if ((st = check_and_simulate(sub, topo, s, o, g, program_only, res)) ||
            (o->sparse && (st = sparse_pass(sub, topo, s, o, res))))
            goto done;
    } else if (!o->no_bound)
        tc_sim_bound(sub, topo, s, 0, &res->bound);
    if (o->photonic) { /* the plan's rounds on reconfigured circuits: the photonic model's time */
        tc_sched_photonic *ph = NULL;
        if ((st = tc_photonic_plan(sub, topo, s, &o->photonic_opts, &ph)))
            goto done;
        tc_sched_photonic_free(s->photonic);
        s->photonic = ph;
        s->time = tc_ph_breakdown_sum(&ph->total);
    }
    res->plan_time = s->time;
done:
    return st;
}

/* Lowering, and when the chosen chunking cannot run on FIFO connections, another one (the search's
 * runner-up, then one chunk per rank) before refusing with the first finding (issue 21: repair, not refuse). */
static tc_status lower_or_rechunk(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_compile_opts *o,
                                  tc_gen_opts *g, tc_compile_result *res)
{
    int tries[3] = {g->chunks, 0, 0}, n = 1;
    if (!strcmp(o->algo, "tacos") && res->searched && !g->stats_only && !o->photonic && !o->sparse) {
        int ru = res->search.runner_up.chunks;
        if (ru > 0 && ru != g->chunks)
            tries[n++] = ru;
        if (g->chunks != 1 && tries[n - 1] != 1)
            tries[n++] = 1;
    }
    tc_compile_diag first;
    memset(&first, 0, sizeof first);
    tc_status st = TC_OK, st0 = TC_OK;
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            tc_sched_free(res->sched);
            tc_sim_result_free(res->sim);
            res->sched = NULL;
            res->sim = NULL;
            g->chunks = tries[i];
            if ((st = build(ctx, topo, coll, o, g, res, NULL)))
                return st;
        }
        tc_compile_diag d;
        memset(&d, 0, sizeof d);
        recorder rec = {.outer = ctx, .silent = 1, .rec = &d};
        tc_ctx lc = *ctx;
        lc.sink = record;
        lc.sink_user = &rec;
        st = o->mscclpp ? lower_mscclpp(n > 1 ? &lc : ctx, topo, res->sched, o, res)
                        : lower(n > 1 ? &lc : ctx, topo, res->sched, o, res);
        if (!st) {
            res->chunks = g->chunks;
            if (i > 0)
                tc_warn(ctx, NULL, 0,
                        "%s with %d chunk%s per rank cannot be lowered %s (%s); wrote %d chunk%s per rank instead",
                        o->algo, tries[0], tries[0] == 1 ? "" : "s",
                        o->mscclpp ? "to an MSCCL++ plan that runs at this size" : "to FIFO connections", first.msg, tries[i], tries[i] == 1 ? "" : "s");
            return TC_OK;
        }
        tc_msccl_free(res->msccl);
        res->msccl = NULL;
        tc_mscclpp_free(res->mscclpp);
        res->mscclpp = NULL;
        if (st == TC_ERR_NOMEM || n == 1)
            return st;
        if (i == 0) {
            first = d;
            st0 = st;
        }
    }
    return tc_error(ctx, st0, first.file[0] ? first.file : NULL, first.line, "%s", first.msg);
}

tc_status tc_compile(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_compile_opts *o,
                     tc_compile_result *res)
{
    memset(res, 0, sizeof *res);
    res->wire = 1;
    recorder rec = {.outer = ctx, .silent = o->silent, .quiet_errors = o->quiet_errors, .rec = &res->diag};
    tc_ctx sub = *ctx;
    sub.sink = record;
    sub.sink_user = &rec;
    sub.n_errors = sub.n_warnings = 0;
    if (o->silent)
        sub.progress = 0;
    tc_gen_opts g = o->gen;
    tc_sched *kept = NULL;
    tc_status st = choose_chunks(&sub, &topo, coll, o, &g, res, &kept);
    res->chunks = g.chunks;
    if (!st)
        st = build(&sub, topo, coll, o, &g, res, &kept);
    tc_sched_free(kept);
    if (!st && (o->lower || o->mscclpp))
        st = lower_or_rechunk(&sub, topo, coll, o, &g, res);
    if (!o->silent) { /* a silent run's refusals are its caller's to report */
        if (!o->quiet_errors)
            ctx->n_errors += sub.n_errors;
        ctx->n_warnings += sub.n_warnings;
    }
    if (st) {
        res->diag.status = st;
        if (!res->diag.msg[0])
            snprintf(res->diag.msg, sizeof res->diag.msg, "%s", tc_status_str(st));
        tc_compile_diag d = res->diag;
        tc_compile_result_free(res);
        memset(res, 0, sizeof *res);
        res->diag = d;
    }
    return st;
}
