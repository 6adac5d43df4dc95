/*
 * cost: Alg. 2 of the photonic paper, the congestion and dilation cost of one round on one topology.
 *
 * Accepts: a topology (any directed links with their own alpha and beta) and the round's pairs
 *   (src, dst, bytes).
 * Returns: whether every pair has a path; c (most pairs on one link), d (most hops of one pair) and the
 *   time split into latency, bandwidth, congestion and dilation (include/tacos/photonic.h).
 * Cost: T = max_pairs sum_{l in route} alpha_l + max_links beta_l bytes_l, which for uniform links and
 *   equal pairs of w bytes is the paper's alpha d + beta c w (eq. 1, one round).  Routes are hop-count
 *   shortest paths: one igraph BFS tree per source (igraph_get_shortest_paths, inbound edges), so a round
 *   costs O(sources (N + L) + sum of route lengths); ph_coster keeps the trees of one candidate graph for
 *   every round priced on it.
 * Limits: hop count ignores alpha when choosing a route (as the paper's Alg. 2 and `tacosc sim` do);
 *   a disconnected pair makes the round unusable on this topology (the ILP prices it with a penalty).
 * Trace (4-NPU bidirectional ring 0-1-2-3-0, alpha a, beta b, pairs 0->2 and 1->3 of w bytes each):
 *   0->2 takes 0-1-2 (2 hops), 1->3 takes 1-2-3; link 1->2 carries both: c = 2, d = 2;
 *   T = 2a + 2bw: latency a, dilation a, bandwidth bw, congestion bw.
 */
#include "photonic_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ph_igraph_enter(ph_igraph_guard *g)
{
    tc_igraph_lock(); /* held until ph_igraph_leave: the handlers below are igraph's globals too */
    g->err = igraph_set_error_handler(igraph_error_handler_ignore);
    g->warn = igraph_set_warning_handler(igraph_warning_handler_ignore);
}

void ph_igraph_leave(const ph_igraph_guard *g)
{
    igraph_set_error_handler(g->err);
    igraph_set_warning_handler(g->warn);
    tc_igraph_unlock();
}

tc_status ph_igraph_status(tc_ctx *ctx, igraph_error_t e, const char *call)
{
    if (e == IGRAPH_SUCCESS)
        return TC_OK;
    if (e == IGRAPH_ENOMEM)
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory in igraph (%s)", call);
    return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "photonic: igraph %s failed: %s", call, igraph_strerror(e));
}

tc_status ph_coster_init(ph_coster *c, const tc_topo *g)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    int L = g->n_links > 0 ? g->n_links : 1;
    c->tree = calloc((size_t)(g->n_npus > 0 ? g->n_npus : 1), sizeof *c->tree);
    c->bytes = calloc((size_t)L, sizeof *c->bytes);
    c->count = calloc((size_t)L, sizeof *c->count);
    c->touched = malloc((size_t)L * sizeof *c->touched);
    if (!c->tree || !c->bytes || !c->count || !c->touched) {
        ph_coster_fini(c);
        return TC_ERR_NOMEM;
    }
    return TC_OK;
}

void ph_coster_fini(ph_coster *c)
{
    if (c->tree)
        for (int v = 0; v < c->g->n_npus; v++)
            free(c->tree[v]);
    free(c->tree);
    free(c->bytes);
    free(c->count);
    free(c->touched);
    if (c->have_graph) {
        tc_igraph_lock();
        igraph_destroy(&c->ig);
        tc_igraph_unlock();
    }
    memset(c, 0, sizeof *c);
}

/* The BFS tree of `src` (edge ids are link ids). */
static tc_status tree_of(tc_ctx *ctx, ph_coster *c, int src, const int **out)
{
    const tc_topo *g = c->g;
    tc_status st = TC_OK;
    ph_igraph_guard guard;
    ph_igraph_enter(&guard);
    if (!c->have_graph) {
        igraph_vector_int_t ev;
        igraph_error_t e = igraph_vector_int_init(&ev, 2 * (igraph_integer_t)g->n_links);
        if (e) {
            st = ph_igraph_status(ctx, e, "igraph_vector_int_init");
            goto done;
        }
        for (int l = 0; l < g->n_links; l++) {
            VECTOR(ev)[2 * l] = g->links[l].src;
            VECTOR(ev)[2 * l + 1] = g->links[l].dst;
        }
        e = igraph_create(&c->ig, &ev, g->n_npus, IGRAPH_DIRECTED);
        igraph_vector_int_destroy(&ev);
        if (e) {
            st = ph_igraph_status(ctx, e, "igraph_create");
            goto done;
        }
        c->have_graph = 1;
    }
    if (!c->tree[src]) {
        igraph_vector_int_t inb;
        igraph_error_t e = igraph_vector_int_init(&inb, 0);
        if (!e)
            e = igraph_get_shortest_paths(&c->ig, NULL, NULL, src, igraph_vss_all(), IGRAPH_OUT, NULL, &inb);
        if (e) {
            igraph_vector_int_destroy(&inb);
            st = ph_igraph_status(ctx, e, "igraph_get_shortest_paths");
            goto done;
        }
        int *t = malloc((size_t)g->n_npus * sizeof *t);
        if (!t) {
            igraph_vector_int_destroy(&inb);
            st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
            goto done;
        }
        /* igraph: -1 for the source, -1 or less for unreached vertices too: tell them apart by id */
        for (int v = 0; v < g->n_npus; v++) {
            igraph_integer_t e_in = VECTOR(inb)[v];
            t[v] = v == src ? -1 : e_in >= 0 ? (int)e_in : -2;
        }
        igraph_vector_int_destroy(&inb);
        c->tree[src] = t;
    }
    *out = c->tree[src];
done:
    ph_igraph_leave(&guard);
    return st;
}

tc_status ph_coster_cost(tc_ctx *ctx, ph_coster *c, const tc_ph_pair *pairs, int n, tc_ph_cost *out)
{
    const tc_topo *g = c->g;
    tc_ph_cost r;
    memset(&r, 0, sizeof r);
    r.connected = 1;
    int n_touched = 0;
    double alpha_term = 0, lat = 0, bw = 0;
    tc_status st = TC_OK;
    for (int i = 0; i < n; i++) {
        const tc_ph_pair *p = &pairs[i];
        if (p->src == p->dst)
            continue;
        if (p->src < 0 || p->src >= g->n_npus || p->dst < 0 || p->dst >= g->n_npus)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "photonic: pair %d->%d out of range (%d npus)", p->src,
                            p->dst, g->n_npus);
        const int *tree = NULL;
        if ((st = tree_of(ctx, c, p->src, &tree)))
            goto done;
        if (tree[p->dst] < -1) {
            r.connected = 0;
            break;
        }
        double a_sum = 0, a_max = 0, b_max = 0;
        int hops = 0;
        for (int v = p->dst; v != p->src; hops++) {
            int l = tree[v];
            const tc_link *lk = &g->links[l];
            a_sum += lk->alpha;
            if (lk->alpha > a_max)
                a_max = lk->alpha;
            const double b = tc_link_beta_at(g, lk, (double)p->bytes);
            if (b > b_max)
                b_max = b;
            if (c->count[l] == 0 && c->bytes[l] == 0)
                c->touched[n_touched++] = l;
            c->count[l]++;
            c->bytes[l] += p->bytes;
            v = lk->src;
        }
        if (a_sum > alpha_term)
            alpha_term = a_sum;
        if (a_max > lat)
            lat = a_max;
        if (p->bytes * b_max > bw)
            bw = p->bytes * b_max;
        if (hops > r.dilation)
            r.dilation = hops;
    }
    if (r.connected) {
        double beta_term = 0;
        for (int k = 0; k < n_touched; k++) {
            int l = c->touched[k];
            /* a size table is read at the link's mean message */
            const double b = tc_link_beta_at(g, &g->links[l], c->count[l] ? c->bytes[l] / c->count[l] : c->bytes[l]);
            if (b * c->bytes[l] > beta_term)
                beta_term = b * c->bytes[l];
            if (c->count[l] > r.congestion)
                r.congestion = c->count[l];
        }
        r.t.latency = lat;
        r.t.dilation = alpha_term - lat > 0 ? alpha_term - lat : 0;
        r.t.bandwidth = bw;
        r.t.congestion = beta_term - bw > 0 ? beta_term - bw : 0;
    } else {
        memset(&r, 0, sizeof r);
    }
    *out = r;
done:
    for (int k = 0; k < n_touched; k++) {
        c->bytes[c->touched[k]] = 0;
        c->count[c->touched[k]] = 0;
    }
    return st;
}

tc_status ph_npus_only(tc_ctx *ctx, const tc_topo *g)
{
    if (!g->n_swnodes)
        return TC_OK;
    return tc_error(ctx, TC_ERR_UNSUPPORTED, g->file, g->swnodes[0].line,
                    "photonic: switch '%s' is modelled as a %s vertex; the photonic pass joins NPUs by circuits "
                    "and prices them on paths between NPUs: model the switches as links (--switch-model unwind)",
                    g->swnodes[0].name, g->swnodes[0].multicast ? "multicast" : "node");
}

tc_status tc_photonic_cost(tc_ctx *ctx, const tc_topo *g, const tc_ph_pair *pairs, int n, tc_ph_cost *out)
{
    ph_coster c;
    tc_status st0 = ph_npus_only(ctx, g);
    if (st0)
        return st0;
    if (ph_coster_init(&c, g))
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
    tc_status st = ph_coster_cost(ctx, &c, pairs, n, out);
    ph_coster_fini(&c);
    return st;
}
