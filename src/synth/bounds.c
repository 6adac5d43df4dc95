/*
 * bounds: lower bounds on a collective's time, to judge synthesized schedules (tc_synth_bounds_get).
 *
 * Accepts: any topology (switches unwound as tc_synth_tacos does), any collective but alltoall.
 * Returns: the TACOS §V-A ideal time and the per-NPU link bound (see synth.h).
 * Cost: O(n m log n) shortest paths for the diameter up to 1024 NPUs (Dijkstra on alpha when alphas
 *   differ), two sweeps from NPU 0 beyond that (a lower bound of the diameter); O(m log) for the rest.
 * Limits: alltoall gets TC_ERR_UNSUPPORTED.  The degree bound ignores the latency of the first chunk
 *   except through the store-and-forward term on uniform-cost topologies.
 * Trace, bidirectional ring of 4, allgather, 1 GiB, 50 GB/s: ideal = 0.75 GiB / 100 GB/s + 2 alpha;
 *   degree bound: every NPU receives 3 chunks on 2 in-links: 2 (alpha + beta 256 MiB).
 */
#include "synth_int.h"

#include "tacos/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest over sources in srcs[0..ns) of the farthest shortest-path weight (w[l] per link); hop counts
 * when w is NULL.  Uses Dijkstra with a binary heap. Returns -1 when some node is unreachable. */
static double eccentricity(const syn_net *net, const double *w, const int *srcs, int ns, int *far_node)
{
    const int n = net->n;
    double *dist = malloc((size_t)n * sizeof *dist);
    int *heap = malloc(((size_t)net->m + (size_t)n + 1) * sizeof *heap);
    double *hkey = malloc(((size_t)net->m + (size_t)n + 1) * sizeof *hkey);
    double worst = 0;
    if (!dist || !heap || !hkey) {
        worst = -2;
        goto done;
    }
    for (int i = 0; i < ns; i++) {
        for (int v = 0; v < n; v++)
            dist[v] = INFINITY;
        int hn = 0;
        dist[srcs[i]] = 0;
        heap[hn] = srcs[i];
        hkey[hn++] = 0;
        while (hn) {
            int v = heap[0];
            double dv = hkey[0];
            hn--;
            int x = heap[hn];
            double kx = hkey[hn];
            int j = 0;
            for (;;) { /* sift down */
                int c = 2 * j + 1;
                if (c >= hn)
                    break;
                if (c + 1 < hn && hkey[c + 1] < hkey[c])
                    c++;
                if (hkey[c] >= kx)
                    break;
                heap[j] = heap[c];
                hkey[j] = hkey[c];
                j = c;
            }
            if (hn) {
                heap[j] = x;
                hkey[j] = kx;
            }
            if (dv > dist[v])
                continue;
            for (int k = net->out_off[v]; k < net->out_off[v + 1]; k++) {
                int l = net->out_lk[k], u = net->dst[l];
                double nd = dv + (w ? w[l] : 1.0);
                if (nd < dist[u]) {
                    dist[u] = nd;
                    int p = hn++;
                    while (p > 0 && hkey[(p - 1) / 2] > nd) {
                        heap[p] = heap[(p - 1) / 2];
                        hkey[p] = hkey[(p - 1) / 2];
                        p = (p - 1) / 2;
                    }
                    heap[p] = u;
                    hkey[p] = nd;
                }
            }
        }
        for (int v = 0; v < n; v++) {
            if (isinf(dist[v])) {
                worst = -1;
                goto done;
            }
            if (dist[v] > worst) {
                worst = dist[v];
                if (far_node)
                    *far_node = v;
            }
        }
    }
done:
    free(dist);
    free(heap);
    free(hkey);
    return worst;
}

/* Diameter under weights w (NULL: hops): exact up to 1024 nodes, else a two-sweep lower bound. */
static double diameter(const syn_net *net, const double *w)
{
    const int n = net->n;
    if (n <= 1024) {
        int *all = malloc((size_t)n * sizeof *all);
        if (!all)
            return -2;
        for (int v = 0; v < n; v++)
            all[v] = v;
        double d = eccentricity(net, w, all, n, NULL);
        free(all);
        return d;
    }
    int a = 0, b = 0;
    double d1 = eccentricity(net, w, &a, 1, &b);
    if (d1 < 0)
        return d1;
    double d2 = eccentricity(net, w, &b, 1, NULL);
    return d2 > d1 ? d2 : d1;
}

/* Least T with sum over the links of floor(T / cost) >= need. */
static double link_bound(const int64_t *cost, const int *lk, int deg, int64_t need)
{
    if (need <= 0)
        return 0;
    if (deg == 0)
        return INFINITY;
    int64_t lo = 0, hi = INT64_MAX / 4;
    int64_t cmin = cost[lk[0]];
    for (int k = 1; k < deg; k++)
        if (cost[lk[k]] < cmin)
            cmin = cost[lk[k]];
    if (cmin < INT64_MAX / 4 / (need + 1))
        hi = cmin * need;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, got = 0;
        for (int k = 0; k < deg && got < need; k++)
            got += mid / cost[lk[k]];
        if (got >= need)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (double)lo * 1e-12;
}

tc_status tc_synth_bounds_get(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                              tc_synth_bounds *out)
{
    tc_gen_opts defaults;
    if (!opts) {
        tc_gen_opts_init(&defaults);
        opts = &defaults;
    }
    if (coll == TC_COLL_ALLTOALL || (unsigned)coll >= TC_COLL_COUNT)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "tacos bounds: %s is not supported",
                        tc_coll_name(coll));
    tc_topo *owned = NULL;
    const tc_topo *t = topo;
    tc_status st;
    if (topo->n_switches > 0) {
        if ((st = tc_topo_unwind(ctx, topo, opts->unwind, &owned)))
            return st;
        t = owned;
    }
    const int n = t->n_npus, K = opts->chunks > 0 ? opts->chunks : 1;
    tc_sched *probe = NULL;
    syn_net net;
    double *alpha = NULL;
    memset(&net, 0, sizeof net);
    if ((st = tc_sched_create(coll, n, K, opts->size, &probe)))
        goto done;
    if ((st = tc_synth_net_build(t, 0, probe->chunk_bytes, &net)))
        goto done;
    st = TC_ERR_NOMEM;
    if (!(alpha = malloc(((size_t)t->n_links + 1) * sizeof *alpha)))
        goto done;
    double min_bw = INFINITY;
    int alpha_uniform = 1, cost_uniform = 1;
    for (int l = 0; l < t->n_links; l++) {
        alpha[l] = t->links[l].alpha;
        if (alpha[l] != t->links[0].alpha)
            alpha_uniform = 0;
        if (net.cost[l] != net.cost[0])
            cost_uniform = 0;
    }
    for (int v = 0; v < n; v++) {
        double inj = 0, ej = 0;
        for (int k = net.out_off[v]; k < net.out_off[v + 1]; k++)
            inj += t->links[net.out_lk[k]].beta > 0 ? 1.0 / t->links[net.out_lk[k]].beta : INFINITY;
        for (int k = net.in_off[v]; k < net.in_off[v + 1]; k++)
            ej += t->links[net.in_lk[k]].beta > 0 ? 1.0 / t->links[net.in_lk[k]].beta : INFINITY;
        if (inj < min_bw)
            min_bw = inj;
        if (ej < min_bw)
            min_bw = ej;
    }
    double hops = diameter(&net, NULL);
    double dal = alpha_uniform ? (hops > 0 ? hops * (t->n_links ? t->links[0].alpha : 0) : 0)
                               : diameter(&net, alpha);
    if (dal < 0)
        dal = 0;
    double f = coll == TC_COLL_ALLREDUCE                                ? 2.0 * (n - 1) / n
               : coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE ? 1.0
                                                                       : (double)(n - 1) / n;
    out->ideal = (min_bw > 0 && isfinite(min_bw) ? (double)opts->size * f / min_bw : 0) + dal;
    out->diameter_alpha = dal;
    out->min_bw = min_bw;
    /* per-NPU link bound */
    double worst = 0;
    for (int v = 0; v < n; v++) {
        int64_t need;
        const int *lk;
        int deg;
        int use_out = coll == TC_COLL_REDUCE || coll == TC_COLL_SCATTER;
        switch (coll) {
        case TC_COLL_ALLGATHER:
        case TC_COLL_REDUCESCATTER: need = (int64_t)(n - 1) * K; break;
        case TC_COLL_ALLREDUCE: need = 2 * (int64_t)(n - 1) * K; break;
        case TC_COLL_BROADCAST: need = v == opts->root ? 0 : K; break;
        case TC_COLL_REDUCE: need = v == opts->root ? 0 : K; break;
        default: need = v == opts->root ? (int64_t)(n - 1) * K : 0; break; /* gather, scatter */
        }
        if (use_out) {
            lk = net.out_lk + net.out_off[v];
            deg = net.out_off[v + 1] - net.out_off[v];
        } else {
            lk = net.in_lk + net.in_off[v];
            deg = net.in_off[v + 1] - net.in_off[v];
        }
        double b = link_bound(net.cost, lk, deg, need);
        if (b > worst)
            worst = b;
    }
    if (cost_uniform && t->n_links && hops > 0) {
        double saf = hops * (double)net.cost[0] * 1e-12;
        if (coll == TC_COLL_ALLREDUCE)
            saf *= 2;
        if (saf > worst)
            worst = saf;
    }
    out->degree = worst;
    st = TC_OK;
done:
    free(alpha);
    tc_synth_net_free(&net);
    tc_sched_free(probe);
    tc_topo_free(owned);
    return st;
}
