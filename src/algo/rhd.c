/*
 * rhd: recursive halving (reduce-scatter) and recursive doubling (all-gather), with the MPICH fold for
 * rank counts that are not a power of two.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on any connected topology with R >= 2 NPUs; logical
 *   transfers are routed on shortest paths.
 * Returns: with p = largest power of two <= R, rem = R - p and L = log2 p:
 *   all-gather: (fold) rank 2v copies its block to 2v+1 for v < rem; the p survivors (2v+1 for v < rem,
 *     then rank v+rem) run recursive doubling, survivor v exchanging everything it holds with v xor 2^k in
 *     step k; (unfold) 2v+1 copies everything but 2v's block to 2v.  L (+2 when R is not a power of 2) steps.
 *   reduce-scatter: that all-gather reversed in time with reduce (halving, the largest distance first).
 *   all-reduce (MPICH): 2v reduces all its chunks into 2v+1; the p survivors reduce-scatter over p equal
 *     shares of the R K chunks by recursive halving and all-gather them by recursive doubling; 2v+1 copies
 *     the result to 2v.  2L (+2) steps.
 * Cost (alpha-beta, S bytes, power-of-two R, every pair one hop apart):
 *     all-gather, reduce-scatter  L a + (R-1)/R b S         all-reduce  2 L a + 2 (R-1)/R b S
 *   non-power-of-two adds 2 (a + b S) for all-reduce (a + b S/R.. 2S/R for the others).  On a ring or a
 *   mesh the distance-2^k peers are 2^k hops apart: dilation and congestion (photonic paper Fig. 5).
 * Limits: R = 1 is refused.
 * Trace, R = 4, K = 1, all-gather (chunk g = block of rank g):
 *   step 0  0<->1 (0->1 c0, 1->0 c1)  2<->3 (2->3 c2, 3->2 c3)
 *   step 1  0<->2 (0->2 c0 c1, 2->0 c2 c3)  1<->3 (1->3 c0 c1, 3->1 c2 c3)
 */
#include "classic.h"

#include <stdlib.h>

tc_status tc_algo_rhd(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks, C = R * K;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "rhd needs at least 2 npus (topology has %d)", R);
    if (coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER && coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "rhd does not generate %s", tc_coll_name(coll));
    tc_lplan ag = {0}, all = {0};
    tc_status st = TC_OK;
    int *ranks = malloc((size_t)R * sizeof *ranks), *off = malloc(((size_t)R + 1) * sizeof *off);
    int *chunks = malloc((size_t)C * sizeof *chunks);
    if (!ranks || !off || !chunks) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int c = 0; c < C; c++)
        chunks[c] = c;
    if (coll != TC_COLL_ALLREDUCE) {
        for (int r = 0; r <= R; r++) {
            if (r < R)
                ranks[r] = r;
            off[r] = r * K;
        }
        int used;
        if ((st = tc_algo_fold_ag(&ag, R, ranks, off, chunks, tc_algo_peer_rd, NULL, 0, &used)) ||
            (st = tc_algo_lplan_compose(&all, &ag, coll)))
            goto done;
    } else {
        const int p = tc_algo_pow2_floor(R), rem = R - p;
        for (int v = 0; v <= p; v++) {
            if (v < p)
                ranks[v] = v < rem ? 2 * v + 1 : v + rem;
            off[v] = (int)((long long)v * C / p);
        }
        if (rem > 0)
            for (int v = 0; v < rem && !st; v++)
                for (int c = 0; c < C && !st; c++)
                    st = tc_algo_lplan_add(&all, 2 * v, 2 * v + 1, c, 0, TC_OP_REDUCE);
        if (st || (st = tc_algo_exchange_ag(&ag, p, tc_algo_log2(p), tc_algo_peer_rd, NULL, ranks, off, chunks, 0)) ||
            (st = tc_algo_lplan_compose(&all, &ag, coll)))
            goto done;
        const int last = all.n_steps;
        if (rem > 0)
            for (int v = 0; v < rem && !st; v++)
                for (int c = 0; c < C && !st; c++)
                    st = tc_algo_lplan_add(&all, 2 * v + 1, 2 * v, c, last, TC_OP_COPY);
        if (st)
            goto done;
    }
    st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "rhd", out);
    goto clean;
done:
    if (st == TC_ERR_UNSUPPORTED)
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "rhd: recursive doubling did not complete on %d ranks", R);
clean:
    free(ranks);
    free(off);
    free(chunks);
    tc_algo_lplan_free(&ag);
    tc_algo_lplan_free(&all);
    return st;
}
