/*
 * tacos-run --topo: the sparse table's predicted speedup beside the measured one (issue 26 item 6).
 *
 * Accepts: the JSON plan tacos-run replays (its sparse formats re-decided for the replayed type, as the
 * replay does) and the topology the time predictor loaded from --topo and --costs (predict.c: costs
 * applied, unwound as the plan's links require, its NPU count checked), which it borrows.
 * Returns: per replayed size, the event model's dense time over its time with the plan's sparse messages
 * (tacosc's prediction, SpCCL eq. 4-6: tc_sparse_cost + tc_sim_run), each at that size: the chunk is
 * rescaled (tc_sim_opts.size) and the messages are priced at the rescaled chunk's exact encoded size.
 * The sparse pass's decisions stay those of the plan (made for its compiled size).
 * Cost: two event simulations per replayed size, on rank 0.
 */
#include "exec.h"
#include "tacos/emit.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <stdlib.h>

static void no_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    (void)user, (void)level, (void)file, (void)line, (void)col, (void)msg;
}

struct tc_exec_sparse_pred {
    tc_sched *s;
    const tc_topo *topo; /* borrowed from the time predictor (predict.c), which loaded and checked it */
};

void tc_exec_sparse_pred_free(tc_exec_sparse_pred *p)
{
    if (!p)
        return;
    tc_sched_free(p->s);
    free(p);
}

tc_status tc_exec_sparse_pred_create(tc_ctx *ctx, const char *plan, const tc_topo *topo, tc_dtype t,
                                     tc_exec_sparse_pred **out)
{
    tc_exec_sparse_pred *p = calloc(1, sizeof *p);
    tc_format fmt;
    tc_status st = p ? tc_sched_sniff(ctx, plan, &fmt) : TC_ERR_NOMEM;
    if (!st && fmt != TC_FMT_JSON)
        st = tc_error(ctx, TC_ERR_USAGE, plan, 0, "--topo: predictions need a JSON plan (MSCCL XML keeps no links)");
    if (!st)
        st = tc_emit_json_read(ctx, plan, &p->s);
    if (!st && !p->s->sparse)
        st = tc_error(ctx, TC_ERR_USAGE, plan, 0, "--topo: the plan has no sparse formats to predict");
    if (!st) {
        tc_ctx quiet = *ctx; /* the replay's own load already warned about another element type */
        quiet.sink = no_sink;
        st = tc_exec_sparse_dtype(&quiet, plan, p->s, t);
    }
    if (st) {
        tc_exec_sparse_pred_free(p);
        return st;
    }
    p->topo = topo;
    *out = p;
    return TC_OK;
}

double tc_exec_sparse_pred_speedup(tc_ctx *ctx, const tc_exec_sparse_pred *p, double bytes)
{
    tc_sparse_cost *c = NULL;
    tc_sim_result *dense = NULL, *sparse = NULL;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    so.no_bound = 1;
    so.size = (uint64_t)bytes;
    double r = 0;
    if (tc_sim_run(ctx, p->s, p->topo, &so, &dense) || tc_sparse_cost_create_sized(ctx, p->topo, p->s, (uint64_t)bytes, &c))
        goto done;
    so.xfer_scale = c->scale;
    so.xfer_pre = c->pre;
    so.xfer_post = c->post;
    if (tc_sim_run(ctx, p->s, p->topo, &so, &sparse) || !(sparse->time > 0))
        goto done;
    r = dense->time / sparse->time;
done:
    tc_sim_result_free(dense);
    tc_sim_result_free(sparse);
    tc_sparse_cost_free(c);
    return r;
}
