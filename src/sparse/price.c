/*
 * The sparse pass with its prediction (include/tacos/sparse.h, tc_sparse_annotate): decide, price on the
 * event model, and for --sparse-format auto keep a plan only where it is predicted no slower than dense.
 *
 * Accepts: a checked schedule whose s->time is its dense time under the simulator options so, the
 * topology it was priced on, the pass's options.  Returns: s->sparse replaced, the predicted time and the
 * bytes on the wire over dense.
 * Why a whole-plan check: tc_sparse_plan judges each send alone (its exact message over its links' beta
 * plus both codec times against the dense send), but the event model also sees the step's dependence: a
 * reduction-phase send cannot start before the previous step's message is decompressed and added, and
 * its own compression delays the next step, so sends that each win can still lose as a chain (issue 26:
 * ring reduce-scatter, 16 GPUs, 512 MiB, 99%, every send Pici and the plan 4.64x slower).  Auto therefore
 * prices three candidates and keeps the fastest: the per-send decisions; the same with every
 * reduction-phase send dense (the all-gather-phase sends, which forward without a codec on the chain,
 * stay); every send dense (the dense time itself).  Ties go to the candidate with fewer sparse sends.
 * Cost: up to two event simulations and one symbolic execution, O(M log M) each.
 * Trace (ring all-reduce, 4 ranks, CPU codec defaults, 50 GB/s links, 99%): the per-send rule keeps every
 * send dense (2 x 1/10 GB/s of codec per byte against 1/50 GB/s of wire), so the first candidate is the
 * dense plan and its time is the dense time.
 */
#include "sparse_int.h"
#include "tacos/sim.h"

#include <stdlib.h>

/* The event-model time of s with its current formats (s->sparse set). */
static tc_status price(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, const tc_sim_opts *base, double *time,
                       double *wire)
{
    tc_sparse_cost *c = NULL;
    tc_sim_result *r = NULL;
    tc_status st = tc_sparse_cost_create(ctx, topo, s, &c);
    if (!st) {
        tc_sim_opts so;
        if (base)
            so = *base;
        else
            tc_sim_opts_init(&so);
        so.no_bound = 1;
        so.bins = 0;
        so.explain = so.trace = 0;
        so.xfer_scale = c->scale;
        so.xfer_pre = c->pre;
        so.xfer_post = c->post;
        st = tc_sim_run(ctx, s, topo, &so, &r);
    }
    if (!st) {
        *time = r->time;
        *wire = c->wire;
    }
    tc_sim_result_free(r);
    tc_sparse_cost_free(c);
    return st;
}

static int n_sparse(const tc_sched_sparse *sp)
{
    int c[TC_SP_FMT_COUNT];
    tc_sparse_counts(sp, c);
    return sp->n - c[TC_SP_DENSE];
}

tc_status tc_sparse_annotate(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_sparse_opts *o,
                             const tc_sim_opts *so, double *time, double *wire)
{
    tc_sched_sparse *sp = NULL, *best = NULL;
    int *k = NULL;
    double t = 0, w = 1, bt = 0, bw = 1;
    if (!topo)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: pricing a plan needs its topology");
    tc_status st = tc_sparse_plan(ctx, topo, s, o, &sp);
    if (st)
        return st;
    tc_sched_sparse *keep = s->sparse; /* the caller's, restored on failure */
    s->sparse = sp;
    if (n_sparse(sp) == 0) { /* every send dense: the dense time, no simulation */
        t = s->time;
        w = 1;
    } else if ((st = price(ctx, topo, s, so, &t, &w)))
        goto fail;
    if (o->format == TC_SP_AUTO && n_sparse(sp) > 0) {
        bt = t;
        bw = w;
        best = sp;
        sp = NULL;
        /* candidate 2: the all-gather-phase sends only */
        const int reduces = tc_coll_reduces(s->coll);
        int moved = 0;
        if (reduces && (st = tc_sched_sparse_clone(best, &sp)))
            goto fail;
        if (reduces && (st = tc_sparse_contribs(ctx, s, &k)))
            goto fail;
        for (int i = 0; reduces && i < s->n_xfers; i++)
            if (sp->fmt[i] != TC_SP_DENSE && k[i] < s->n_ranks) {
                sp->fmt[i] = TC_SP_DENSE;
                moved = 1;
            }
        if (moved && n_sparse(sp) > 0) {
            s->sparse = sp;
            if ((st = price(ctx, topo, s, so, &t, &w)))
                goto fail;
            if (t <= bt) {
                tc_sched_sparse_free(best);
                best = sp;
                bt = t;
                bw = w;
                sp = NULL;
            }
        }
        tc_sched_sparse_free(sp);
        sp = NULL;
        /* candidate 3: every send dense, at the dense time */
        if (s->time <= bt) {
            memset(best->fmt, TC_SP_DENSE, (size_t)best->n);
            bt = s->time;
            bw = 1;
        }
        sp = best;
        best = NULL;
        t = bt;
        w = bw;
    }
    s->sparse = sp;
    tc_sched_sparse_free(keep);
    free(k);
    if (time)
        *time = t;
    if (wire)
        *wire = w;
    return TC_OK;
fail:
    s->sparse = keep;
    tc_sched_sparse_free(sp);
    tc_sched_sparse_free(best);
    free(k);
    return st;
}
