/*
 * hier-ring, hier-rec: the two-level designs of the Big Send-off paper (PCCL, Fig. 5).  With N nodes of
 * M NPUs (topology node ids; local index = order of the rank inside its node):
 *   all-gather  1. inter-node all-gather among the N ranks of each local index (all M groups at once):
 *                  a ring (hier-ring) or recursive doubling with the MPICH fold (hier-rec);
 *               2. intra-node ring all-gather of the N collected blocks (a "column") among the M ranks;
 *               3. a local shuffle into rank order (a memory transpose: no transfer in the schedule).
 *   reduce-scatter  the mirrored all-gather (every ring turning the other way) reversed with reduce:
 *               intra-node ring first, then inter-node, and every ring hop goes r -> next as in the
 *               all-gather.  (Reversing the all-gather itself sent every hop next -> r, against the ring:
 *               on a unidirectional ring or on a switch unwound to i -> i+1..i+d, each hop became a
 *               route of up to R-1 links; 16x4 hier, 1 MiB: 636 us against 78.7 us for the all-gather.)
 *   all-reduce  reduce-scatter then all-gather.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on a topology with node ids (tc_topo.node_of), every
 *   node holding the same number of NPUs, R >= 2.  Refused otherwise, with the reason.
 * Cost (alpha-beta, S bytes; inter links a1, b1; intra links a2, b2), all-gather:
 *   hier-ring  (N-1)(a1 + b1 S/R) + (M-1)(a2 + b2 S/M)
 *   hier-rec   log2 N a1 + (N-1)/R b1 S (+ fold steps when N is not a power of two) + (M-1)(a2 + b2 S/M)
 *   reduce-scatter the same; all-reduce twice.
 * Limits: inter-node transfers are routed on shortest paths of the topology (no NIC model).
 * Trace, 2 nodes x 2 NPUs (node 0: ranks 0 1, node 1: ranks 2 3), K = 1, hier-ring all-gather:
 *   step 0 (inter)  0->2 c0  2->0 c2  1->3 c1  3->1 c3
 *   step 1 (intra)  0->1 c0 c2  1->0 c1 c3  2->3 c0 c2  3->2 c1 c3
 */
#include "classic.h"

#include <stdlib.h>

/* The all-gather plan into ag; dir = +1: every ring hop r -> next (the all-gather), -1: r -> previous
 * (the mirror, reversed into the reduce-scatter so that its hops go r -> next again).  Recursive doubling
 * exchanges pairwise and is its own mirror. */
static tc_status build_ag(tc_lplan *ag, int N, int M, int K, const int *at, int *ranks, int *off, int *chunks,
                          int rec, int dir, const char *name, tc_ctx *ctx)
{
    tc_status st = TC_OK;
    /* 1. inter-node all-gather, one group per local index */
    int inter = 0;
    for (int l = 0; l < M && !st; l++) {
        for (int n = 0; n <= N; n++) {
            off[n] = n * K;
            if (n < N) {
                ranks[n] = at[n * M + l];
                for (int k = 0; k < K; k++)
                    chunks[n * K + k] = ranks[n] * K + k;
            }
        }
        if (rec) {
            st = tc_algo_fold_ag(ag, N, ranks, off, chunks, tc_algo_peer_rd, NULL, 0, &inter);
            if (st == TC_ERR_UNSUPPORTED)
                st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "%s: recursive doubling did not complete", name);
        } else {
            inter = N - 1;
            for (int s = 0; s < N - 1 && !st; s++)
                for (int i = 0; i < N && !st; i++) {
                    const int from = ((i - dir * s) % N + N) % N;
                    for (int k = 0; k < K && !st; k++)
                        st = tc_algo_lplan_add(ag, ranks[i], ranks[(i + dir + N) % N], ranks[from] * K + k, s,
                                               TC_OP_COPY);
                }
        }
    }
    /* 2. intra-node ring all-gather of the columns */
    for (int s = 0; s < M - 1 && !st; s++)
        for (int n = 0; n < N && !st; n++)
            for (int l = 0; l < M && !st; l++) {
                const int from = ((l - dir * s) % M + M) % M;
                for (int n2 = 0; n2 < N && !st; n2++)
                    for (int k = 0; k < K && !st; k++)
                        st = tc_algo_lplan_add(ag, at[n * M + l], at[n * M + (l + dir + M) % M], at[n2 * M + from] * K + k,
                                               inter + s, TC_OP_COPY);
            }
    return st;
}

static tc_status hier(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts, int rec,
                      const char *name, tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks;
    if (coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER && coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "%s does not generate %s", name, tc_coll_name(coll));
    if (!topo->node_of || topo->n_nodes < 1)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0,
                        "%s needs node ids in the topology (<nodes size=\"...\"/> or a node per npu)", name);
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "%s needs at least 2 npus (topology has %d)",
                        name, R);
    tc_status st = TC_OK;
    tc_lplan ag = {0}, rs = {0}, all = {0};
    const int N = topo->n_nodes;
    int *count = calloc((size_t)N, sizeof *count), *local = malloc((size_t)R * sizeof *local);
    int *at = malloc((size_t)R * sizeof *at); /* at[node * M + l] = rank */
    int *ranks = malloc((size_t)N * sizeof *ranks), *off = malloc(((size_t)N + 1) * sizeof *off);
    int *chunks = malloc((size_t)R * K * sizeof *chunks);
    if (!count || !local || !at || !ranks || !off || !chunks) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int r = 0; r < R; r++) {
        const int nd = topo->node_of[r];
        if (nd < 0 || nd >= N) {
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "%s: npu %d has node id %d outside 0..%d", name,
                          r, nd, N - 1);
            goto done;
        }
        local[r] = count[nd]++;
    }
    const int M = count[0];
    for (int n = 0; n < N; n++)
        if (count[n] != M) {
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0,
                          "%s needs nodes of equal size: node 0 has %d npus, node %d has %d", name, M, n, count[n]);
            goto done;
        }
    for (int r = 0; r < R; r++)
        at[topo->node_of[r] * M + local[r]] = r;
    if (coll != TC_COLL_ALLGATHER)
        st = build_ag(&rs, N, M, K, at, ranks, off, chunks, rec, -1, name, ctx);
    if (!st && coll != TC_COLL_REDUCESCATTER)
        st = build_ag(&ag, N, M, K, at, ranks, off, chunks, rec, 1, name, ctx);
    /* 3. the local shuffle is a memory transpose: nothing to schedule */
    if (!st && coll != TC_COLL_ALLGATHER)
        st = tc_algo_lplan_append_reversed(&all, &rs, all.n_steps, TC_OP_REDUCE);
    if (!st && coll != TC_COLL_REDUCESCATTER)
        st = tc_algo_lplan_append(&all, &ag, all.n_steps, TC_OP_COPY);
    if (!st)
        st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, name, out);
done:
    free(count);
    free(local);
    free(at);
    free(ranks);
    free(off);
    free(chunks);
    tc_algo_lplan_free(&ag);
    tc_algo_lplan_free(&rs);
    tc_algo_lplan_free(&all);
    return st;
}

tc_status tc_algo_hier_ring(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                            tc_sched **out)
{
    return hier(ctx, topo, coll, opts, 0, "hier-ring", out);
}

tc_status tc_algo_hier_rec(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                           tc_sched **out)
{
    return hier(ctx, topo, coll, opts, 1, "hier-rec", out);
}
