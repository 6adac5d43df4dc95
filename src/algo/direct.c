/*
 * direct: every rank exchanges with every other rank in one step per phase.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on any connected topology with R >= 2 NPUs; logical
 *   transfers are routed on shortest paths.
 * Returns: all-gather: each rank copies its K chunks to all R-1 others (step 0); reduce-scatter: each rank
 *   reduces its contribution of block g into rank g (step 0); all-reduce: reduce-scatter then all-gather
 *   (steps 0 and 1).
 * Cost (alpha-beta, S bytes, a and b the latency and bottleneck beta of the worst route; each rank injects
 *   S/R bytes per phase over links it may share):
 *     all-gather, reduce-scatter  a + b S/R (no contention)  ...  a + (R-1) b S/R (one shared NIC)
 *     all-reduce                  twice that.
 *   Predicted times assume the R-1 sends of a rank share its links: chunk j to peer p (p-th other rank)
 *   occupies [ph T + (p K + j) d, ... + d) with d = a + b S/(R K) and T = (R-1) K d per phase.
 * Limits: congestion is ignored in the step structure; `tacosc sim` prices it.  R = 1 is refused.
 * Trace, R = 3, K = 1, all-reduce:
 *   step 0  0->1 reduce c1  0->2 reduce c2  1->0 reduce c0  1->2 reduce c2  2->0 reduce c0  2->1 reduce c1
 *   step 1  0->1 copy c0    0->2 copy c0    1->0 copy c1    1->2 copy c1    2->0 copy c2    2->1 copy c2
 */
#include "tacos/algo.h"

tc_status tc_algo_direct(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0,
                        "direct needs at least 2 npus (topology has %d)", R);
    tc_sched *s = NULL;
    tc_algo_router rt = {0};
    tc_status st = tc_sched_create(coll, R, K, opts->size, &s);
    if (st || (st = tc_algo_router_init(&rt, topo)))
        goto fail;
    double d = 0;
    for (int r = 0; r < R; r++)
        for (int p = 0; p < R; p++) {
            double ra, rb;
            if (p == r)
                continue;
            if (tc_algo_router_cost(&rt, r, p, (double)s->chunk_bytes, &ra, &rb)) {
                st = tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "direct: npu %d cannot reach npu %d", r, p);
                goto fail;
            }
            if (ra + rb * (double)s->chunk_bytes > d)
                d = ra + rb * (double)s->chunk_bytes;
        }
    const double T = (double)(R - 1) * K * d;
    const int first = coll == TC_COLL_ALLGATHER ? 1 : 0, last = coll == TC_COLL_REDUCESCATTER ? 0 : 1;
    if ((st = tc_sched_reserve(s, (last - first + 1) * R * (R - 1) * K)))
        goto fail;
    for (int ph = first; ph <= last; ph++) { /* phase 0: reduce-scatter, phase 1: all-gather */
        const int step = ph - first;
        for (int r = 0; r < R; r++)
            for (int i = 1; i < R; i++) {
                const int p = (r + i) % R; /* the i-th other rank, staggered so peers differ */
                const int block = ph == 0 ? p : r;
                for (int j = 0; j < K; j++) {
                    /* the same expression gives one chunk's end and the next one's start */
                    const int q = (i - 1) * K + j;
                    double t0 = step * T + q * d, t1 = q + 1 == (R - 1) * K ? (step + 1) * T : step * T + (q + 1) * d;
                    st = tc_algo_router_add(&rt, s, r, p, block * K + j, ph == 0 ? TC_OP_REDUCE : TC_OP_COPY,
                                            step, t0, t1);
                    if (st)
                        goto fail;
                }
            }
    }
    s->time = tc_sched_makespan(s);
    tc_sched_sort(s);
    if ((st = tc_sched_set_names(s, "direct", topo->name)))
        goto fail;
    tc_algo_router_fini(&rt);
    *out = s;
    return TC_OK;
fail:
    tc_algo_router_fini(&rt);
    tc_sched_free(s);
    return st;
}
