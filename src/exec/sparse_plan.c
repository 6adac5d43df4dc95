/*
 * tacos-run and a plan's element type (issue 26): the sparse pass decides on message sizes, and sizes depend
 * on the element type (Pici's bitmap is one bit per element, COO's index 4 bytes per nonzero), so a plan
 * records the type it was decided for ("dtype" in its sparse section).  Replaying another type would send
 * messages the decisions never priced: a COO plan at sparsity 0.55 decided for float32 sends 134.8% of the
 * dense bytes as bfloat16.  Here the plan's formats are re-decided for the replayed type, with a warning.
 *
 * Accepts: a JSON plan's schedule (s->sparse may be NULL: nothing to do) and the type tacos-run replays.
 * Returns: s->sparse replaced by tc_sparse_plan's decisions at that type with the plan's own density,
 * format and thresholds; no topology travels with a plan, so every send is judged as intra-node and
 * `auto` (which needs the links' beta) keeps every send dense, as the warning says.
 * Cost: the pass's, O(M log M).
 */
#include "exec.h"

#include <string.h>

tc_status tc_exec_sparse_dtype(tc_ctx *ctx, const char *plan, tc_sched *s, tc_dtype t)
{
    tc_sched_sparse *sp = s->sparse, *nsp = NULL;
    tc_sparse_dtype want;
    if (!sp || tc_sparse_dtype_parse(tc_exec_dtype_name(t), &want) || (int)want == sp->dtype)
        return TC_OK;
    tc_sparse_opts o;
    tc_sparse_opts_init(&o);
    o.density = sp->density;
    o.format = sp->format;
    o.dtype = want;
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++)
        o.th[f] = (tc_sparse_thresholds){sp->th[f][0], sp->th[f][1], sp->th[f][2]};
    tc_status st = tc_sparse_plan(ctx, NULL, s, &o, &nsp);
    if (st)
        return st;
    int was[TC_SP_FMT_COUNT], now[TC_SP_FMT_COUNT];
    tc_sparse_counts(sp, was);
    tc_sparse_counts(nsp, now);
    tc_warn(ctx, plan, 0,
            "the plan's sparse formats were decided for %s elements and this run replays %s: re-decided for %s "
            "(%d of %d sends sparse, were %d%s); compile with --dtype %s for the decisions of its topology",
            tc_sparse_dtype_name((tc_sparse_dtype)sp->dtype), tc_sparse_dtype_name(want), tc_sparse_dtype_name(want),
            nsp->n - now[TC_SP_DENSE], nsp->n, sp->n - was[TC_SP_DENSE],
            o.format == TC_SP_AUTO ? "; auto needs the topology: every send dense" : "", tc_sparse_dtype_name(want));
    s->sparse = nsp;
    tc_sched_sparse_free(sp);
    return TC_OK;
}
