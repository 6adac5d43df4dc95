/*
 * dex: the direct-exchange hypercube all-to-all (DEX, Foster 1995, "Designing and Building Parallel
 * Programs" §11.2), the all-to-all the PCCL photonic paper feeds to PCCL in Fig. 10a: log2 R steps; in
 * step k rank r exchanges with r XOR 2^k every block it holds whose destination differs from r in bit k
 * (R/2 blocks each way), so after step k a block sits on the rank that agrees with its destination in
 * bits 0..k and with its source above.  (The shifted exchange with R-1 steps is `shift`.)
 *
 * Accepts: all-to-all on any connected topology with R a power of two >= 2 (transfers routed on shortest
 *   paths; a hypercube makes every step's peer a neighbour).
 * Returns: log2 R steps; chunk (s R + q) K + k starts on s and ends on q (include/tacos/ir.h numbering),
 *   relayed through the ranks between (store and forward: a block moves in step k only, at the step after
 *   it arrived).
 * Cost (alpha-beta, S bytes per rank in total, S/R per destination): log2 R (a + b S/2) on a hypercube
 *   (latency-optimal, each block crosses up to log2 R links).
 * Limits: all-to-all only; R must be a power of two (TC_ERR_UNSUPPORTED otherwise: use shift).
 * Trace, R = 4, K = 1 (block s->q is chunk 4s + q):
 *   step 0  0->1 c1 c3   1->0 c4 c6   2->3 c9 c11   3->2 c12 c14
 *   step 1  0->2 c2 c6   1->3 c3 c7   2->0 c8 c12   3->1 c9 c13
 */
#include "classic.h"

tc_status tc_algo_dex(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "dex needs at least 2 npus (topology has %d)", R);
    if (coll != TC_COLL_ALLTOALL)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "dex generates alltoall only, not %s",
                        tc_coll_name(coll));
    if (R & (R - 1))
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0,
                        "dex (hypercube direct exchange) needs a power-of-two npu count (topology has %d): "
                        "shift exchanges with one shifted peer per step on any count",
                        R);
    tc_lplan all = {0};
    tc_status st = TC_OK;
    int step = 0;
    for (int bit = 1; bit < R && !st; bit <<= 1, step++)
        for (int r = 0; r < R && !st; r++)
            /* r holds the blocks s -> q with q's low bits (below `bit`) equal to r's and s's high bits
             * equal to r's: those with q differing from r in `bit` go to r ^ bit */
            for (int s = 0; s < R && !st; s++) {
                if ((s & ~(2 * bit - 1)) != (r & ~(2 * bit - 1)) || (s & bit) != (r & bit))
                    continue;
                for (int q = 0; q < R && !st; q++) {
                    if ((q & (bit - 1)) != (r & (bit - 1)) || (q & bit) == (r & bit))
                        continue;
                    for (int k = 0; k < K && !st; k++)
                        st = tc_algo_lplan_add(&all, r, r ^ bit, (s * R + q) * K + k, step, TC_OP_COPY);
                }
            }
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "dex", out);
    tc_algo_lplan_free(&all);
    return st;
}
