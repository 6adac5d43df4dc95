/* tacos-run's prediction column: the time tacosc predicts for the very plan file being replayed.
 *
 * Sources, in order:
 *  - --topo T [--costs C]: the plan (JSON, or MSCCL XML read into the schedule IR as `tacosc sim` reads
 *    it, tc_sched_load) simulated with tacosc's event model on T with C, at the size of every row
 *    (tc_sim_opts.size rescales the chunk as tc_sched_create would).  The topology is unwound as the
 *    plan's link ids require (the schedule's unwind degree and switch model).
 *  - a JSON plan without --topo: its stored predicted_time (the event model's time when tacosc wrote
 *    it), which holds for the plan's own size; other rows get none.
 *  - MSCCL XML without --topo: none.  msccl-executor-nccl's parser (src/misc/msccl/msccl_parser.cc,
 *    mscclXmlGetNode) skips <!-- --> comments and reads only the attributes it names, so a comment could
 *    carry a prediction; but it would hold for one size, and MSCCL files are written by src/emit/, so
 *    tacos-run prices the program itself: give --topo (and --costs) and every row gets its prediction.
 * Only rank 0 creates and queries a predictor.
 */
#include "predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tacos/emit.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

struct tc_exec_predict {
    tc_sched *s;     /* the plan as a schedule */
    tc_topo *topo;   /* NULL: the stored prediction only */
    char *topo_path, *costs_path;
    uint64_t last_bytes; /* memo of the last query */
    double last_time;
};

void tc_exec_predict_free(tc_exec_predict *p)
{
    if (!p)
        return;
    tc_sched_free(p->s);
    tc_topo_free(p->topo);
    free(p->topo_path);
    free(p->costs_path);
    free(p);
}

/* The topology as the plan's link ids refer to it: costs applied, switch model, unwound. */
static tc_status load_topo(tc_ctx *ctx, const char *path, const char *costs_path, const tc_sched *s, tc_topo **out)
{
    tc_topo *t = NULL, *u = NULL;
    tc_costs *c = NULL;
    tc_status st = tc_topo_read(ctx, path, &t);
    if (!st && s->switch_model > 0)
        tc_topo_set_switch_model(t, (tc_switch_model)(s->switch_model - 1));
    if (!st)
        t->link_model = s->link_model; /* and the link model it was priced with */
    if (!st && costs_path)
        st = tc_costs_read(ctx, costs_path, &c);
    if (!st)
        st = tc_topo_apply_costs(ctx, t, c);
    if (!st)
        st = tc_topo_unwind(ctx, t, s->unwind, &u);
    if (!st && u->n_npus != s->n_ranks)
        st = tc_error(ctx, TC_ERR_INVALID, path, 0, "--topo: the topology has %d npus but the plan is for %d ranks",
                      u->n_npus, s->n_ranks);
    tc_costs_free(c);
    tc_topo_free(t);
    if (st) {
        tc_topo_free(u);
        return st;
    }
    *out = u;
    return TC_OK;
}

const tc_topo *tc_exec_predict_topo(const tc_exec_predict *p) { return p ? p->topo : NULL; }

tc_status tc_exec_predict_create(tc_ctx *ctx, const char *plan, const char *topo, const char *costs, int n_ranks,
                                 tc_exec_predict **out)
{
    tc_format fmt;
    tc_exec_predict *p = NULL;
    tc_status st = tc_sched_sniff(ctx, plan, &fmt);
    if (st)
        return st;
    *out = NULL;
    if (!topo && fmt != TC_FMT_JSON)
        return TC_OK; /* MSCCL XML and MSCCL++ plans carry no prediction */
    p = calloc(1, sizeof *p);
    if (!p)
        return TC_ERR_NOMEM;
    if ((st = tc_sched_load(ctx, plan, &p->s)))
        goto fail;
    if (p->s->n_ranks != n_ranks) { /* load_plan has refused this already; kept for callers without it */
        st = tc_error(ctx, TC_ERR_INVALID, plan, 0, "the plan is for %d ranks, not %d", p->s->n_ranks, n_ranks);
        goto fail;
    }
    if (topo) {
        if ((st = load_topo(ctx, topo, costs, p->s, &p->topo)))
            goto fail;
        p->topo_path = strdup(topo);
        p->costs_path = costs ? strdup(costs) : NULL;
        if (!p->topo_path || (costs && !p->costs_path)) {
            st = TC_ERR_NOMEM;
            goto fail;
        }
        /* price the plan's own size once now: a plan whose transfers are not on this topology is refused
         * before any message is sent */
        if (tc_exec_predict_time(ctx, p, p->s->size_bytes, 1) <= 0) {
            st = tc_error(ctx, TC_ERR_INVALID, topo, 0, "--topo: cannot price the plan on this topology (see above)");
            goto fail;
        }
    } else if (!(p->s->time > 0)) { /* a JSON plan written without a prediction */
        tc_exec_predict_free(p);
        return TC_OK;
    }
    *out = p;
    return TC_OK;
fail:
    tc_exec_predict_free(p);
    return st;
}

double tc_exec_predict_time(tc_ctx *ctx, tc_exec_predict *p, uint64_t bytes, uint64_t unit)
{
    if (!p)
        return 0;
    if (!p->topo)
        return bytes <= p->s->size_bytes && p->s->size_bytes < bytes + (unit ? unit : 1) ? p->s->time : 0;
    if (bytes == p->last_bytes && p->last_time > 0)
        return p->last_time;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    so.model = TC_SIM_EVENT;
    so.size = bytes;
    so.no_bound = 1;
    tc_sim_result *r = NULL;
    double t = 0;
    if (tc_sim_run(ctx, p->s, p->topo, &so, &r) == TC_OK)
        t = r->time;
    tc_sim_result_free(r);
    p->last_bytes = bytes;
    p->last_time = t;
    return t;
}

int tc_exec_predict_every_size(const tc_exec_predict *p)
{
    return p && p->topo;
}

const char *tc_exec_predict_describe(const tc_exec_predict *p, char *buf, size_t n)
{
    if (!p)
        snprintf(buf, n, "none (MSCCL XML and MSCCL++ plans carry no prediction: give --topo TOPOLOGY [--costs FILE] to price it)");
    else if (p->topo)
        snprintf(buf, n, "tacosc's event model of this plan on %s with %s, at each size", p->topo_path,
                 p->costs_path ? p->costs_path : "the topology's own costs");
    else
        snprintf(buf, n, "the plan's predicted_time, %.2f us at its own size %llu B (the row it rounds down to) only (give --topo TOPOLOGY "
                 "[--costs FILE] to price every size)", p->s->time * 1e6, (unsigned long long)p->s->size_bytes);
    return buf;
}
