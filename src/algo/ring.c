/*
 * ring: logical unidirectional ring in rank order, 0 -> 1 -> ... -> R-1 -> 0.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on any topology with R >= 2 NPUs (ranks are NPUs);
 *   each logical hop r -> r+1 is routed on a shortest path of the topology (a direct link when adjacent).
 * Returns: a schedule of R-1 steps (all-gather, reduce-scatter) or 2(R-1) steps (all-reduce); each step
 *   moves the K chunks of one rank's block over every ring hop.
 * Cost (alpha-beta, S bytes, per-hop path latency a = sum of alpha on the route, b = largest beta on it,
 *   the slowest hop setting the pace):
 *     all-gather, reduce-scatter  (R-1)(a + b S/R)        all-reduce  2(R-1)(a + b S/R)
 *   Predicted times in the schedule: chunk j of step s occupies [s D + j d, s D + (j+1) d) with
 *   d = a + b S/(R K) and D = K d (the last chunk ends exactly at (s+1) D).
 * Limits: no congestion model here (two hops sharing a physical link are not serialized; `tacosc sim`
 *   measures that).  R = 1 is refused.
 * Trace, R = 4, K = 1, all-reduce (block g = chunk g):
 *   step 0  0->1 reduce c3   1->2 reduce c0   2->3 reduce c1   3->0 reduce c2
 *   step 1  0->1 reduce c2   1->2 reduce c3   ...             (block g moves g+1 -> g+2 -> ... -> g)
 *   step 2  ... 3->0 reduce c0: rank g now holds block g fully reduced
 *   step 3  0->1 copy c0     1->2 copy c1    2->3 copy c2     3->0 copy c3     (all-gather phase)
 */
#include "tacos/algo.h"

tc_status tc_algo_ring(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                       tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "ring needs at least 2 npus (topology has %d)",
                        R);
    tc_sched *s = NULL;
    tc_algo_router rt = {0};
    tc_status st = tc_sched_create(coll, R, K, opts->size, &s);
    if (st || (st = tc_algo_router_init(&rt, topo)))
        goto fail;
    /* the slowest hop sets the pace of every step */
    double a = 0, b = 0;
    for (int r = 0; r < R; r++) {
        double ra, rb;
        if ((st = tc_algo_router_cost(&rt, r, (r + 1) % R, (double)s->chunk_bytes, &ra, &rb))) {
            st = tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "ring: npu %d cannot reach npu %d", r,
                          (r + 1) % R);
            goto fail;
        }
        if (ra + rb * (double)s->chunk_bytes > a + b * (double)s->chunk_bytes) {
            a = ra;
            b = rb;
        }
    }
    const double d = a + b * (double)s->chunk_bytes, D = K * d;
    const int reduce_steps = coll == TC_COLL_ALLGATHER ? 0 : R - 1;
    const int copy_steps = coll == TC_COLL_REDUCESCATTER ? 0 : R - 1;
    if ((st = tc_sched_reserve(s, (reduce_steps + copy_steps) * R * K)))
        goto fail;
    for (int step = 0; step < reduce_steps + copy_steps; step++) {
        const int reducing = step < reduce_steps;
        for (int r = 0; r < R; r++) {
            /* reduce phase: block r-s-1 moves on; copy phase: block r-s' moves on */
            int block = reducing ? ((r - step - 1) % R + R) % R : ((r - (step - reduce_steps)) % R + R) % R;
            for (int j = 0; j < K; j++) {
                /* the same expression gives one chunk's end and the next one's start: no rounding gap */
                double t0 = step * D + j * d, t1 = j + 1 == K ? (step + 1) * D : step * D + (j + 1) * d;
                st = tc_algo_router_add(&rt, s, r, (r + 1) % R, block * K + j,
                                        reducing ? TC_OP_REDUCE : TC_OP_COPY, step, t0, t1);
                if (st)
                    goto fail;
            }
        }
    }
    s->time = tc_sched_makespan(s);
    tc_sched_sort(s);
    if ((st = tc_sched_set_names(s, "ring", topo->name)))
        goto fail;
    tc_algo_router_fini(&rt);
    *out = s;
    return TC_OK;
fail:
    tc_algo_router_fini(&rt);
    tc_sched_free(s);
    return st;
}
