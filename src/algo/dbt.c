/*
 * dbt: NCCL-style double binary tree all-reduce.  Two binary trees over the ranks, each carrying half of
 * the chunks: tree A is the balanced in-order tree over positions 0..R-1 (the root is the middle, each
 * subtree the middle of its range) with rank = position; tree B is the same shape with rank r at position
 * (r + 1) mod R, so most leaves of A are inner nodes of B.  Each chunk is reduced up its tree and then
 * broadcast down, pipelined chunk by chunk.
 *
 * Accepts: all-reduce on any connected topology with R >= 2 NPUs (tree edges routed on shortest paths).
 * Returns: with H the tree height and Ct the chunks of a tree (R K / 2 for A, the rest for B), a node at
 *   depth d >= 1 reduces chunk j into its parent in step j + H - d; a node at depth d copies chunk j to
 *   each child in step H + j + d.  About 2H + Ct steps.
 * Cost (alpha-beta, S bytes, tree edges one hop): pipelined, (2H + Ct) (a + b S/(R K)); with many chunks
 *   it tends to 2 a H + b S (each tree moves S/2 up and down, nodes send to two children).
 * Limits: all-reduce only; R = 1 refused.
 * Trace, R = 4, K = 1: tree A root 2 (children 1, 3; 1's child 0), chunks 0-1; tree B root 1 (rank r at
 *   position r+1: children 0 and 2, 0's child 3), chunks 2-3.
 *   step 0  0->1 reduce c0 (A)   3->0 reduce c2 (B)
 *   step 1  0->1 reduce c1  1->2 reduce c0  3->2 reduce c0 (A) ...
 */
#include "classic.h"

#include <stdlib.h>

static void build(int lo, int hi, int parent, int depth, int *pa, int *dep, int *H)
{
    if (lo >= hi)
        return;
    const int mid = (lo + hi) / 2;
    pa[mid] = parent;
    dep[mid] = depth;
    if (depth > *H)
        *H = depth;
    build(lo, mid, mid, depth + 1, pa, dep, H);
    build(mid + 1, hi, mid, depth + 1, pa, dep, H);
}

tc_status tc_algo_dbt(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                      tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks, C = R * K;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "dbt needs at least 2 npus (topology has %d)", R);
    if (coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "dbt generates allreduce only, not %s",
                        tc_coll_name(coll));
    tc_lplan all = {0};
    tc_status st = TC_OK;
    int *pa = malloc((size_t)R * sizeof *pa), *dep = malloc((size_t)R * sizeof *dep);
    if (!pa || !dep) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    int H = 0;
    build(0, R, -1, 0, pa, dep, &H);
    for (int tree = 0; tree < 2 && !st; tree++) {
        const int c0 = tree == 0 ? 0 : C / 2, c1 = tree == 0 ? C / 2 : C;
        for (int pos = 0; pos < R && !st; pos++) {
            if (pa[pos] < 0)
                continue;
            const int shift = tree == 0 ? 0 : R - 1; /* tree B: rank at position pos is pos - 1 */
            const int me = (pos + shift) % R, parent = (pa[pos] + shift) % R, d = dep[pos];
            for (int c = c0; c < c1 && !st; c++) {
                const int j = c - c0;
                st = tc_algo_lplan_add(&all, me, parent, c, j + H - d, TC_OP_REDUCE);
                if (!st)
                    st = tc_algo_lplan_add(&all, parent, me, c, H + j + d - 1, TC_OP_COPY);
            }
        }
    }
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "dbt", out);
done:
    free(pa);
    free(dep);
    tc_algo_lplan_free(&all);
    return st;
}
