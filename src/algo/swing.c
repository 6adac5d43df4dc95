/*
 * swing: the Swing all-reduce pattern (De Sensi et al.): in reduce-scatter step s rank r talks to
 *   pi(r, s) = r + rho(s) (r even) or r - rho(s) (r odd), mod p,  rho(s) = (1 - (-2)^(s+1)) / 3
 * (distances 1, 1, 3, 5, 11, 21, ...), and the all-gather replays the steps in reverse order.
 *
 * Accepts: all-gather, reduce-scatter and all-reduce on any connected topology with R >= 2 NPUs.
 *   1D on every topology; multi-dimensional when tc_topo_grid_dims() recognises the topology as a torus
 *   or mesh (from its name, "torus-4x4", or its links) and every side is a power of two: steps then
 *   cycle over the dimensions (step s uses dimension s mod D among those with steps left) and the peer
 *   moves by +-rho along that dimension, the sign by the parity of the coordinate.
 * Returns: the all-gather is built by exchange (each step a rank sends what its peer lacks, which for
 *   Swing halves/doubles the data like recursive doubling); reduce-scatter is it reversed with reduce;
 *   all-reduce both.  1D with R not a power of two uses the MPICH fold (see rhd.c): 2v hands its block to
 *   2v+1, the p survivors run Swing, 2v+1 hands everything back.
 * Cost (alpha-beta, S bytes, power-of-two R, L = log2 R): all-reduce 2 L a + 2 (R-1)/R b S on a topology
 *   where every peer is adjacent; on a 1D torus the step-s peer is |rho(s)| hops away, about a third of
 *   recursive doubling's 2^s, which is the point of Swing (less dilation and congestion).
 * Limits: R = 1 refused.  A recognised torus with a side that is not a power of two gets 1D Swing, with a
 *   note saying so.
 * Trace, R = 4 (1D), K = 1, all-gather (Swing steps 1 then 0 in reverse):
 *   step 0  rho(1) = -1: 0<->3, 1<->2 ... each sends its own chunk
 *   step 1  rho(0) = 1:  0<->1, 2<->3     each sends the two chunks it holds
 */
#include "classic.h"

#include <stdlib.h>

typedef struct swing_md {
    int nd, dims[8], stride[8];
    int L;            /* total steps */
    int sdim[64], sidx[64]; /* reduce-scatter step s -> dimension and its swing index */
} swing_md;

static int rho(int s)
{
    long long pw = 1;
    for (int i = 0; i <= s; i++)
        pw *= -2;
    return (int)((1 - pw) / 3);
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* 1D: all-gather step k is Swing step L-1-k. */
static int peer_1d(int v, int k, int p, void *user)
{
    (void)user;
    const int L = tc_algo_log2(p), s = L - 1 - k;
    return v % 2 == 0 ? mod(v + rho(s), p) : mod(v - rho(s), p);
}

static int peer_md(int v, int k, int p, void *user)
{
    const swing_md *m = user;
    (void)p;
    const int s = m->L - 1 - k, d = m->sdim[s], n = m->dims[d];
    const int c = (v / m->stride[d]) % n;
    const int c2 = c % 2 == 0 ? mod(c + rho(m->sidx[s]), n) : mod(c - rho(m->sidx[s]), n);
    return v + (c2 - c) * m->stride[d];
}

tc_status tc_algo_swing(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                        tc_sched **out)
{
    const int R = topo->n_npus, K = opts->chunks, C = R * K;
    if (R < 2)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "swing needs at least 2 npus (topology has %d)",
                        R);
    if (coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER && coll != TC_COLL_ALLREDUCE)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "swing does not generate %s", tc_coll_name(coll));
    swing_md md = {0};
    const int grid = tc_topo_grid_dims(topo, md.dims);
    md.nd = grid;
    for (int d = 0; d < grid; d++)
        if (md.dims[d] != tc_algo_pow2_floor(md.dims[d]))
            md.nd = 0;
    if (grid > 1 && md.nd == 0)
        tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0,
                "swing: %s has a side that is not a power of two: 1D Swing over the ranks in order", topo->name);
    if (md.nd > 1) {
        int left[8], idx[8] = {0}, s = 0;
        for (int d = 0, st = 1; d < md.nd; d++) {
            left[d] = tc_algo_log2(md.dims[d]);
            md.stride[d] = st;
            st *= md.dims[d];
        }
        for (int more = 1; more && s < 64;) {
            more = 0;
            for (int d = 0; d < md.nd && s < 64; d++)
                if (left[d] > 0) {
                    md.sdim[s] = d;
                    md.sidx[s] = idx[d]++;
                    left[d]--;
                    s++;
                    more = 1;
                }
        }
        md.L = s;
    }
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
    for (int r = 0; r <= R; r++) {
        if (r < R)
            ranks[r] = r;
        off[r] = r * K;
    }
    int used;
    if (md.nd > 1)
        st = tc_algo_exchange_ag(&ag, R, md.L, peer_md, &md, ranks, off, chunks, 0);
    else
        st = tc_algo_fold_ag(&ag, R, ranks, off, chunks, peer_1d, NULL, 0, &used);
    if (st == TC_ERR_UNSUPPORTED) {
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "swing: the exchange did not complete on %d ranks", R);
        goto done;
    }
    if (st || (st = tc_algo_lplan_compose(&all, &ag, coll)))
        goto done;
    st = tc_algo_lplan_emit(ctx, topo, &all, coll, K, opts, "swing", out);
done:
    free(ranks);
    free(off);
    free(chunks);
    tc_algo_lplan_free(&ag);
    tc_algo_lplan_free(&all);
    return st;
}
