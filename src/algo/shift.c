/*
 * shift: shifted direct-exchange all-to-all (named dex before issue 22; `dex` is now the PCCL paper's
 * hypercube DEX, src/algo/dex.c).  In step j-1 (j = 1..R-1) rank r sends the K chunks it owes rank
 * (r + j) mod R straight to it (a shifted exchange, so every rank sends to and receives from exactly one
 * peer per step).
 *
 * Accepts: all-to-all on any connected topology with R >= 2 NPUs (transfers routed on shortest paths).
 * Returns: R-1 steps; chunk (r R + q) K + k goes from r to q (include/tacos/ir.h numbering).
 * Cost (alpha-beta, S bytes per rank in total, S/R per destination): (R-1)(a + b S/R) when every peer is
 *   adjacent (fully connected); on other topologies the step-j peer is j hops away on a ring: congestion.
 * Limits: all-to-all only; R = 1 refused.
 * Trace, R = 3, K = 1:
 *   step 0  0->1 c1  1->2 c5  2->0 c6
 *   step 1  0->2 c2  1->0 c3  2->1 c7
 */
#include "classic.h"

tc_status tc_algo_shift(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "shift needs at least 2 npus (topology has %d)", R);
    if (coll != TC_COLL_ALLTOALL)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "shift generates alltoall only, not %s",
                        tc_coll_name(coll));
    tc_lplan all = {0};
    tc_status st = TC_OK;
    for (int j = 1; j < R && !st; j++)
        for (int r = 0; r < R && !st; r++) {
            const int q = (r + j) % R;
            for (int k = 0; k < K && !st; k++)
                st = tc_algo_lplan_add(&all, r, q, (r * R + q) * K + k, j - 1, TC_OP_COPY);
        }
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "shift", out);
    tc_algo_lplan_free(&all);
    return st;
}
