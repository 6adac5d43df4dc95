/*
 * ring2: bidirectional logical ring in rank order; half of every block travels clockwise
 * (r -> r+1), the other half counter-clockwise (r -> r-1), both rings at once.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on any connected topology with R >= 2 NPUs; each
 *   logical hop is routed on a shortest path (a direct link when adjacent).
 * Returns: a schedule with 2K chunks per rank (each of the K requested chunks is split in two halves:
 *   chunks r*2K + j, j < K, go clockwise; j >= K counter-clockwise).  All-gather: R-1 steps; reduce-scatter:
 *   the all-gather reversed with reduce (R-1 steps); all-reduce: both (2(R-1) steps).
 * Cost (alpha-beta, S bytes, a bidirectional ring of links alpha a, beta b):
 *     all-gather, reduce-scatter  (R-1)(a + b S/(2R))    all-reduce  2(R-1)(a + b S/(2R))
 *   i.e. half the bandwidth term of the unidirectional ring, the same latency term.
 * Limits: on a unidirectional ring topology the counter-clockwise hops are routed the long way round
 *   (the simulator shows the congestion).  R = 1 is refused.
 * Trace, R = 4, K = 1 (chunks 2r and 2r+1 of rank r), all-gather:
 *   step 0  0->1 c0  1->2 c2  2->3 c4  3->0 c6   0->3 c1  1->0 c3  2->1 c5  3->2 c7
 *   step 1  0->1 c6  1->2 c0  2->3 c2  3->0 c4   0->3 c3  1->0 c5  2->1 c7  3->2 c1
 *   step 2  0->1 c4  ...                          ...
 */
#include "classic.h"

tc_status tc_algo_ring2(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                        tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks, K2 = 2 * K;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "ring2 needs at least 2 npus (topology has %d)",
                        R);
    if (coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER && coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "ring2 does not generate %s", tc_coll_name(coll));
    tc_lplan ag = {0}, all = {0};
    tc_status st = TC_OK;
    for (int s = 0; s < R - 1 && !st; s++)
        for (int r = 0; r < R && !st; r++) {
            const int cw = ((r - s) % R + R) % R, ccw = (r + s) % R;
            for (int j = 0; j < K && !st; j++)
                st = tc_algo_lplan_add(&ag, r, (r + 1) % R, cw * K2 + j, s, TC_OP_COPY);
            for (int j = K; j < K2 && !st; j++)
                st = tc_algo_lplan_add(&ag, r, (r + R - 1) % R, ccw * K2 + j, s, TC_OP_COPY);
        }
    if (!st)
        st = tc_algo_lplan_compose(&all, &ag, coll);
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K2, opts, "ring2", out);
    tc_algo_lplan_free(&ag);
    tc_algo_lplan_free(&all);
    return st;
}
