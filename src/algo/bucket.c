/*
 * bucket: the multi-dimensional bucket algorithm on a torus or mesh: one unidirectional ring per
 * dimension, dimension after dimension (all-gather), and the reverse (reduce-scatter).
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on a topology that tc_topo_grid_dims() recognises
 *   as a torus or mesh, from its name ("torus-4x4x4", "mesh-4x8") or from its links (dims[0] varies
 *   fastest in the rank numbering it found).  Other topologies are refused with the reason.
 * Returns: all-gather: for dimension d = 0..D-1, n_d - 1 steps of a ring along d; in sub-step j rank r
 *   sends to its +1 neighbour along d the group of blocks of the rank j positions behind it along d
 *   (a group = the blocks of the ranks sharing those coordinates in dimensions >= d, i.e. what that rank
 *   collected in the earlier dimensions).  Reduce-scatter: reversed with reduce (last dimension first).
 *   All-reduce: both.
 * Cost (alpha-beta, S bytes, torus links alpha a, beta b, P_d = n_0 ... n_(d-1)):
 *     all-gather  sum_d (n_d - 1) (a + b S P_d / R)  =  (sum_d (n_d - 1)) a + (R-1)/R b S
 *     all-reduce  twice that.  On a mesh the wrap-around hop of each ring is routed n_d - 1 hops back.
 * Limits: needs a torus or mesh as tc_topo_grid_dims() defines them; R = 1 refused.
 * Trace, 2x2 torus (ranks 0..3, dim 0 fastest), K = 1, all-gather:
 *   step 0 (dim 0)  0->1 c0  1->0 c1  2->3 c2  3->2 c3
 *   step 1 (dim 1)  0->2 c0 c1  1->3 c0 c1  2->0 c2 c3  3->1 c2 c3
 */
#include "classic.h"

tc_status tc_algo_bucket(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER && coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "bucket does not generate %s", tc_coll_name(coll));
    int dims[8];
    const int nd = tc_topo_grid_dims(topo, dims);
    if (nd < 1 || R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0,
                        "bucket needs a torus or mesh: a name giving its dimensions (e.g. torus-4x4) or links "
                        "only between grid neighbours; '%s' has neither",
                        topo->name ? topo->name : "?");
    tc_lplan ag = {0}, all = {0};
    tc_status st = TC_OK;
    int step = 0, lower = 1;
    for (int d = 0; d < nd && !st; d++) {
        const int n = dims[d], stride = lower;
        for (int j = 0; j < n - 1 && !st; j++, step++)
            for (int r = 0; r < R && !st; r++) {
                const int c = (r / stride) % n;
                const int to = r + (((c + 1) % n) - c) * stride;
                const int from = r + (((c - j) % n + n) % n - c) * stride; /* whose group moves */
                const int base = (from / lower) * lower;
                for (int i = 0; i < lower && !st; i++)
                    for (int k = 0; k < K && !st; k++)
                        st = tc_algo_lplan_add(&ag, r, to, (base + i) * K + k, step, TC_OP_COPY);
            }
        lower *= n;
    }
    if (!st)
        st = tc_algo_lplan_compose(&all, &ag, coll);
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "bucket", out);
    tc_algo_lplan_free(&ag);
    tc_algo_lplan_free(&all);
    return st;
}
