/*
 * Topology IR core: create/free, classes, links, CSR index, cost refresh, connectivity, shortest paths,
 * switch unwinding (TACOS paper §IV-G) and derived metrics (diameter, injection bandwidth, ideal time).
 *
 * Accepts: a tc_topo built by the reader or a generator.  Returns: indexes, metrics, unwound copies.
 * Cost: index O(n + m); connectivity O(n + m) (one forward and one reverse BFS from NPU 0, switches as
 * extra vertices); shortest path O(n + m) per query; diameter exact by BFS from every NPU while
 * n * (n + m) <= TC_TOPO_EXACT_WORK, otherwise a bounded multi-source sweep (see tc_topo_info_get).
 * Limits: ids are int; a topology must fit in memory as flat arrays (100,000 NPUs load in well under 1 s).
 * Trace (unwinding a 4-port switch with d = 2): ports 0 1 2 3 -> links 0->1 0->2 1->2 1->3 2->3 2->0 3->0
 * 3->1, each with the switch's alpha and beta * 2.
 */
#include "tacos/topo.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

tc_status tc_topo_create(const char *name, int n_npus, tc_topo **out)
{
    if (n_npus < 0)
        return TC_ERR_INVALID;
    tc_topo *t = calloc(1, sizeof *t);
    if (!t)
        return TC_ERR_NOMEM;
    t->n_npus = n_npus;
    t->name = tc_strdup(name ? name : "topology");
    if (!t->name)
        goto fail;
    int cls;
    if (tc_topo_class_get(t, "default", &cls) != TC_OK)
        goto fail;
    t->classes[cls].alpha = TC_TOPO_DEFAULT_ALPHA;
    t->classes[cls].beta = 1.0 / TC_TOPO_DEFAULT_BW;
    t->classes[cls].defined = 1;
    *out = t;
    return TC_OK;
fail:
    tc_topo_free(t);
    return TC_ERR_NOMEM;
}

static void free_index(tc_topo *t)
{
    free(t->out_off);
    free(t->out_link);
    free(t->in_off);
    free(t->in_link);
    t->out_off = t->out_link = t->in_off = t->in_link = NULL;
}

void tc_topo_free(tc_topo *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->file);
    free(t->links);
    for (int i = 0; i < t->n_classes; i++)
        free(t->classes[i].name);
    free(t->classes);
    for (int i = 0; i < t->n_switches; i++) {
        free(t->switches[i].name);
        free(t->switches[i].npus);
    }
    free(t->switches);
    for (int i = 0; i < t->n_swnodes; i++)
        free(t->swnodes[i].name);
    free(t->swnodes);
    free(t->node_of);
    free_index(t);
    free(t);
}

tc_status tc_topo_class_get(tc_topo *t, const char *name, int *out)
{
    for (int i = 0; i < t->n_classes; i++)
        if (strcmp(t->classes[i].name, name) == 0) {
            *out = i;
            return TC_OK;
        }
    if (t->n_classes == t->cap_classes) {
        int cap = t->cap_classes ? 2 * t->cap_classes : 4;
        tc_link_class *p = realloc(t->classes, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        t->classes = p;
        t->cap_classes = cap;
    }
    tc_link_class *c = &t->classes[t->n_classes];
    memset(c, 0, sizeof *c);
    c->name = tc_strdup(name);
    if (!c->name)
        return TC_ERR_NOMEM;
    /* An undefined class carries the defaults so costs are never garbage; apply_costs rejects it. */
    c->alpha = TC_TOPO_DEFAULT_ALPHA;
    c->beta = 1.0 / TC_TOPO_DEFAULT_BW;
    *out = t->n_classes++;
    return TC_OK;
}

tc_status tc_topo_class_set(tc_topo *t, int cls, double alpha, double beta)
{
    if (cls < 0 || cls >= t->n_classes || !(alpha >= 0) || !(beta > 0))
        return TC_ERR_INVALID;
    t->classes[cls].alpha = alpha;
    t->classes[cls].beta = beta;
    t->classes[cls].defined = 1;
    tc_topo_refresh_costs(t);
    return TC_OK;
}

tc_status tc_topo_add_link(tc_topo *t, int src, int dst, int cls, double alpha, double beta, int line)
{
    const int nv = tc_topo_n_vertices(t);
    if (src < 0 || src >= nv || dst < 0 || dst >= nv || cls < 0 || cls >= t->n_classes)
        return TC_ERR_INVALID;
    if (t->n_links == t->cap_links) {
        int cap = t->cap_links ? 2 * t->cap_links : 16;
        tc_link *p = realloc(t->links, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        t->links = p;
        t->cap_links = cap;
    }
    tc_link *l = &t->links[t->n_links++];
    memset(l, 0, sizeof *l);
    l->src = src;
    l->dst = dst;
    l->cls = cls;
    l->alpha_set = alpha >= 0;
    l->beta_set = beta >= 0;
    l->alpha = alpha >= 0 ? alpha : t->classes[cls].alpha;
    l->beta = beta >= 0 ? beta : t->classes[cls].beta;
    l->line = line;
    if (t->out_off)
        free_index(t); /* stale */
    return TC_OK;
}

tc_status tc_topo_add_switch(tc_topo *t, const char *name, const int *npus, int n_ports, int cls,
                             int unwind, int line)
{
    if (n_ports < 0 || cls < 0 || cls >= t->n_classes)
        return TC_ERR_INVALID;
    for (int i = 0; i < n_ports; i++)
        if (npus[i] < 0 || npus[i] >= t->n_npus)
            return TC_ERR_INVALID;
    if (t->n_switches == t->cap_switches) {
        int cap = t->cap_switches ? 2 * t->cap_switches : 4;
        tc_switch *p = realloc(t->switches, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        t->switches = p;
        t->cap_switches = cap;
    }
    tc_switch *s = &t->switches[t->n_switches];
    memset(s, 0, sizeof *s);
    s->name = tc_strdup(name);
    s->npus = malloc((size_t)(n_ports > 0 ? n_ports : 1) * sizeof *s->npus);
    if (!s->name || !s->npus) {
        free(s->name);
        free(s->npus);
        return TC_ERR_NOMEM;
    }
    if (n_ports)
        memcpy(s->npus, npus, (size_t)n_ports * sizeof *npus);
    s->n_ports = n_ports;
    s->up = -1;
    s->up_cls = -1;
    s->gdr = -1;
    s->cls = cls;
    s->alpha = t->classes[cls].alpha;
    s->beta = t->classes[cls].beta;
    s->unwind = unwind;
    s->line = line;
    t->n_switches++;
    return TC_OK;
}

/* Counting-sort CSR over `m` links keyed by key(link); within a vertex links stay in id order. */
static tc_status build_csr(int n, int m, const tc_link *links, int by_dst, int **off_out, int **idx_out)
{
    int *off = calloc((size_t)n + 1, sizeof *off);
    int *idx = malloc((size_t)(m > 0 ? m : 1) * sizeof *idx);
    if (!off || !idx) {
        free(off);
        free(idx);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < m; i++)
        off[(by_dst ? links[i].dst : links[i].src) + 1]++;
    for (int v = 0; v < n; v++)
        off[v + 1] += off[v];
    int *pos = malloc((size_t)(n > 0 ? n : 1) * sizeof *pos);
    if (!pos) {
        free(off);
        free(idx);
        return TC_ERR_NOMEM;
    }
    memcpy(pos, off, (size_t)n * sizeof *pos);
    for (int i = 0; i < m; i++)
        idx[pos[by_dst ? links[i].dst : links[i].src]++] = i;
    free(pos);
    *off_out = off;
    *idx_out = idx;
    return TC_OK;
}

tc_status tc_topo_index(tc_topo *t)
{
    free_index(t);
    const int nv = tc_topo_n_vertices(t);
    tc_status st = build_csr(nv, t->n_links, t->links, 0, &t->out_off, &t->out_link);
    if (st == TC_OK)
        st = build_csr(nv, t->n_links, t->links, 1, &t->in_off, &t->in_link);
    if (st != TC_OK)
        free_index(t);
    return st;
}

void tc_topo_refresh_costs(tc_topo *t)
{
    for (int i = 0; i < t->n_links; i++) {
        tc_link *l = &t->links[i];
        if (!l->alpha_set)
            l->alpha = t->classes[l->cls].alpha;
        if (!l->beta_set)
            l->beta = t->classes[l->cls].beta;
    }
    for (int i = 0; i < t->n_switches; i++) {
        t->switches[i].alpha = t->classes[t->switches[i].cls].alpha;
        t->switches[i].beta = t->classes[t->switches[i].cls].beta;
    }
}

tc_status tc_topo_clone(const tc_topo *t, tc_topo **out)
{
    tc_topo *c = calloc(1, sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    c->n_npus = t->n_npus;
    c->name = tc_strdup(t->name);
    c->file = tc_strdup(t->file);
    c->photonic = t->photonic;
    c->link_model = t->link_model;
    memcpy(c->codec_bw, t->codec_bw, sizeof c->codec_bw);
    c->n_nodes = t->n_nodes;
    if ((t->name && !c->name) || (t->file && !c->file))
        goto fail;
    if (t->n_links) {
        c->links = malloc((size_t)t->n_links * sizeof *c->links);
        if (!c->links)
            goto fail;
        memcpy(c->links, t->links, (size_t)t->n_links * sizeof *c->links);
        c->n_links = c->cap_links = t->n_links;
    }
    for (int i = 0; i < t->n_classes; i++) {
        int k;
        if (tc_topo_class_get(c, t->classes[i].name, &k) != TC_OK)
            goto fail;
        char *nm = c->classes[k].name;
        c->classes[k] = t->classes[i];
        c->classes[k].name = nm;
    }
    for (int i = 0; i < t->n_switches; i++) {
        const tc_switch *s = &t->switches[i];
        if (tc_topo_add_switch(c, s->name, s->npus, s->n_ports, s->cls, s->unwind, s->line) != TC_OK)
            goto fail;
        c->switches[i].alpha = s->alpha;
        c->switches[i].beta = s->beta;
        c->switches[i].model = s->model;
        c->switches[i].up = s->up;
        c->switches[i].up_cls = s->up_cls;
        c->switches[i].nic = s->nic;
        c->switches[i].gdr = s->gdr;
        memcpy(c->switches[i].path, s->path, sizeof s->path);
    }
    if (t->n_swnodes) {
        if (!(c->swnodes = calloc((size_t)t->n_swnodes, sizeof *c->swnodes)))
            goto fail;
        for (; c->n_swnodes < t->n_swnodes; c->n_swnodes++) {
            c->swnodes[c->n_swnodes] = t->swnodes[c->n_swnodes];
            if (!(c->swnodes[c->n_swnodes].name = tc_strdup(t->swnodes[c->n_swnodes].name)))
                goto fail;
        }
    }
    if (t->node_of) {
        c->node_of = malloc((size_t)(t->n_npus > 0 ? t->n_npus : 1) * sizeof *c->node_of);
        if (!c->node_of)
            goto fail;
        memcpy(c->node_of, t->node_of, (size_t)t->n_npus * sizeof *c->node_of);
    }
    if (t->out_off && tc_topo_index(c) != TC_OK)
        goto fail;
    *out = c;
    return TC_OK;
fail:
    tc_topo_free(c);
    return TC_ERR_NOMEM;
}

/* ---------------------------------------------------------------------------------------------- */
/* Graph helpers over the vertices plus one extra vertex per declared switch (edges NPU<->switch both ways). */

typedef struct graph {
    int nv;         /* n_npus + n_switches */
    int *off, *adj; /* CSR of neighbour vertices */
} graph;

static void graph_free(graph *g)
{
    free(g->off);
    free(g->adj);
}

/* reverse != 0: edges point dst -> src (for "who reaches v"). */
static tc_status graph_build(const tc_topo *t, int reverse, graph *g)
{
    int n = tc_topo_n_vertices(t), nv = n + t->n_switches; /* declared switches after the vertices */
    long m = t->n_links;
    for (int s = 0; s < t->n_switches; s++)
        m += 2L * t->switches[s].n_ports + 2;
    g->nv = nv;
    g->off = calloc((size_t)nv + 1, sizeof *g->off);
    g->adj = malloc((size_t)(m > 0 ? m : 1) * sizeof *g->adj);
    if (!g->off || !g->adj) {
        graph_free(g);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < t->n_links; i++)
        g->off[(reverse ? t->links[i].dst : t->links[i].src) + 1]++;
    for (int s = 0; s < t->n_switches; s++) {
        if (!tc_topo_switch_carries(t, s))
            continue;
        for (int p = 0; p < t->switches[s].n_ports; p++) {
            g->off[t->switches[s].npus[p] + 1]++;
            g->off[n + s + 1]++;
        }
        if (t->switches[s].up >= 0) { /* a tree edge, both ways */
            g->off[n + s + 1]++;
            g->off[n + t->switches[s].up + 1]++;
        }
    }
    for (int v = 0; v < nv; v++)
        g->off[v + 1] += g->off[v];
    int *pos = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *pos);
    if (!pos) {
        graph_free(g);
        return TC_ERR_NOMEM;
    }
    memcpy(pos, g->off, (size_t)nv * sizeof *pos);
    for (int i = 0; i < t->n_links; i++) {
        int a = reverse ? t->links[i].dst : t->links[i].src;
        int b = reverse ? t->links[i].src : t->links[i].dst;
        g->adj[pos[a]++] = b;
    }
    for (int s = 0; s < t->n_switches; s++) {
        if (!tc_topo_switch_carries(t, s))
            continue;
        for (int p = 0; p < t->switches[s].n_ports; p++) {
            int v = t->switches[s].npus[p];
            g->adj[pos[v]++] = n + s;
            g->adj[pos[n + s]++] = v;
        }
        if (t->switches[s].up >= 0) {
            g->adj[pos[n + s]++] = n + t->switches[s].up;
            g->adj[pos[n + t->switches[s].up]++] = n + s;
        }
    }
    free(pos);
    return TC_OK;
}

/* BFS from src; dist[] gets hop counts (-1 unreached); returns the number of vertices reached. */
static int graph_bfs(const graph *g, int src, int *dist, int *queue)
{
    for (int v = 0; v < g->nv; v++)
        dist[v] = -1;
    int head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int v = queue[head++];
        for (int e = g->off[v]; e < g->off[v + 1]; e++) {
            int w = g->adj[e];
            if (dist[w] < 0) {
                dist[w] = dist[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    return tail;
}

int tc_topo_connected(const tc_topo *t, int *from, int *to)
{
    int n = t->n_npus;
    if (n <= 1)
        return n == 1;
    int ok = 0;
    graph g = {0}, r = {0};
    int *dist = NULL, *queue = NULL;
    if (graph_build(t, 0, &g) != TC_OK || graph_build(t, 1, &r) != TC_OK)
        goto done;
    dist = malloc((size_t)g.nv * sizeof *dist);
    queue = malloc((size_t)g.nv * sizeof *queue);
    if (!dist || !queue)
        goto done;
    graph_bfs(&g, 0, dist, queue);
    for (int v = 1; v < n; v++)
        if (dist[v] < 0) {
            if (from)
                *from = 0;
            if (to)
                *to = v;
            goto done;
        }
    graph_bfs(&r, 0, dist, queue);
    for (int v = 1; v < n; v++)
        if (dist[v] < 0) {
            if (from)
                *from = v;
            if (to)
                *to = 0;
            goto done;
        }
    ok = 1;
done:
    free(dist);
    free(queue);
    graph_free(&g);
    graph_free(&r);
    return ok;
}

/* Breadth-first search from a over out-links in link-id order, until `stop` is reached (-1: everything):
 * parent[v] is the link that first reached v (-1 for a, -2 unreached).  queue holds n ints. */
static void bfs(const tc_topo *t, const int *off, const int *idx, int a, int stop, int *parent, int *queue)
{
    for (int v = 0; v < tc_topo_n_vertices(t); v++)
        parent[v] = -2;
    parent[a] = -1;
    int head = 0, tail = 0;
    queue[tail++] = a;
    while (head < tail && (stop < 0 || parent[stop] == -2)) {
        int v = queue[head++];
        for (int e = off[v]; e < off[v + 1]; e++) {
            int l = idx[e], w = t->links[l].dst;
            if (parent[w] == -2) {
                parent[w] = l;
                queue[tail++] = w;
            }
        }
    }
}

int tc_topo_tree_path(const tc_topo *t, const int *parent, int a, int b, int *links, int cap)
{
    if (a < 0 || a >= t->n_npus || b < 0 || b >= t->n_npus || parent[b] == -2)
        return -1;
    int len = 0;
    for (int v = b; v != a; v = t->links[parent[v]].src)
        len++;
    int k = len;
    for (int v = b; v != a; v = t->links[parent[v]].src) {
        k--;
        if (links && k < cap)
            links[k] = parent[v];
    }
    return len;
}

tc_status tc_topo_bfs_tree(const tc_topo *t, int src, int *parent)
{
    if (!t->out_off)
        return TC_ERR_INVALID;
    if (src < 0 || src >= t->n_npus)
        return TC_ERR_INVALID;
    int *queue = malloc((size_t)tc_topo_n_vertices(t) * sizeof *queue);
    if (!queue)
        return TC_ERR_NOMEM;
    bfs(t, t->out_off, t->out_link, src, -1, parent, queue);
    free(queue);
    return TC_OK;
}

int tc_topo_link_between(const tc_topo *t, int a, int b)
{
    if (!t->out_off || a < 0 || a >= t->n_npus)
        return -1;
    int best = -1;
    for (int e = t->out_off[a]; e < t->out_off[a + 1]; e++)
        if (t->links[t->out_link[e]].dst == b && (best < 0 || t->out_link[e] < best))
            best = t->out_link[e];
    return best;
}

int tc_topo_shortest_path(const tc_topo *t, int a, int b, int *links, int cap)
{
    int n = t->n_npus;
    if (a < 0 || a >= n || b < 0 || b >= n)
        return -1;
    if (a == b)
        return 0;
    int *off = t->out_off, *idx = t->out_link, own = 0, len = -1;
    int *parent = NULL, *queue = NULL;
    if (off) { /* neighbours: the lowest-id direct link, without a search */
        int best = tc_topo_link_between(t, a, b);
        if (best >= 0) {
            if (links && cap > 0)
                links[0] = best;
            return 1;
        }
    }
    const int nv = tc_topo_n_vertices(t);
    if (!off) {
        if (build_csr(nv, t->n_links, t->links, 0, &off, &idx) != TC_OK)
            return -1;
        own = 1;
    }
    parent = malloc((size_t)nv * sizeof *parent);
    queue = malloc((size_t)nv * sizeof *queue);
    if (parent && queue) {
        bfs(t, off, idx, a, b, parent, queue);
        len = tc_topo_tree_path(t, parent, a, b, links, cap);
    }
    free(parent);
    free(queue);
    if (own) {
        free(off);
        free(idx);
    }
    return len;
}

/* ---------------------------------------------------------------------------------------------- */
/* Unwinding                                                                                      */

static int has_children(const tc_topo *t, int s)
{
    for (int c = 0; c < t->n_switches; c++)
        if (t->switches[c].up == s)
            return 1;
    return 0;
}

tc_status tc_topo_unwind(tc_ctx *ctx, const tc_topo *t, int d, tc_topo **out)
{
    tc_topo *u = NULL;
    tc_status st;
    if (d < 0)
        return tc_error(ctx, TC_ERR_INVALID, t->file, 0, "unwinding degree must be at least 1, got %d", d);
    int n_nodes = 0, *vid = NULL; /* per switch: its vertex, -1 unwound or left out */
    for (int s = 0; s < t->n_switches; s++) {
        const tc_switch *sw = &t->switches[s];
        const int tree = sw->up >= 0 || has_children(t, s);
        if (tree && !sw->nic && sw->model == TC_SWITCH_UNWIND)
            return tc_error(ctx, TC_ERR_INVALID, t->file, sw->line,
                            "switch '%s': hangs in a tree of switches (up=\"%s\"), so it must stay a vertex "
                            "(model node or multicast), not be unwound",
                            sw->name, t->switches[sw->up >= 0 ? sw->up : s].name);
        if (sw->model != TC_SWITCH_UNWIND || sw->nic) {
            n_nodes += tc_topo_switch_carries(t, s);
            continue;
        }
        int k = d > 0 ? d : (sw->unwind > 0 ? sw->unwind : 1);
        if (sw->n_ports < 2)
            return tc_error(ctx, TC_ERR_INVALID, t->file, sw->line,
                            "switch '%s': cannot unwind a switch with %d port", sw->name, sw->n_ports);
        if (k > sw->n_ports - 1)
            return tc_error(ctx, TC_ERR_INVALID, t->file, sw->line,
                            "switch '%s': unwinding degree %d out of range (1 to %d for %d ports)", sw->name,
                            k, sw->n_ports - 1, sw->n_ports);
    }
    if (n_nodes && t->n_swnodes)
        return tc_error(ctx, TC_ERR_INVALID, t->file, 0, "topology has switch vertices already");
    st = tc_topo_clone(t, &u);
    if (st != TC_OK)
        return tc_error(ctx, st, NULL, 0, "out of memory unwinding switches");
    if ((n_nodes && !(u->swnodes = calloc((size_t)n_nodes, sizeof *u->swnodes))) ||
        !(vid = malloc((size_t)(t->n_switches > 0 ? t->n_switches : 1) * sizeof *vid))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int s = 0, v = t->n_npus; s < t->n_switches; s++)
        vid[s] = (t->switches[s].model != TC_SWITCH_UNWIND || t->switches[s].nic) && tc_topo_switch_carries(t, s)
                     ? v++
                     : -1;
    for (int s = 0; s < t->n_switches; s++) {
        const tc_switch *sw = &t->switches[s];
        int k = d > 0 ? d : (sw->unwind > 0 ? sw->unwind : 1), p = sw->n_ports;
        if (sw->model != TC_SWITCH_UNWIND || sw->nic) { /* a vertex: NPU -> switch and switch -> NPU per port */
            if (vid[s] < 0)
                continue; /* a NIC that hangs from nothing carries no traffic */
            const int v = vid[s];
            tc_swnode *x = &u->swnodes[u->n_swnodes++];
            x->multicast = !sw->nic && sw->model == TC_SWITCH_MULTICAST;
            x->line = sw->line;
            if (!(x->name = tc_strdup(sw->name))) {
                st = TC_ERR_NOMEM;
                goto fail;
            }
            /* without GPU-direct RDMA a NIC reads and writes host memory: each byte crosses the path twice */
            const double beta = sw->nic && sw->gdr == 0 ? 2 * sw->beta : sw->beta;
            for (int i = 0; i < p; i++)
                if ((st = tc_topo_add_link(u, sw->npus[i], v, sw->cls, sw->alpha, beta, sw->line)) != TC_OK ||
                    (st = tc_topo_add_link(u, v, sw->npus[i], sw->cls, sw->alpha, beta, sw->line)) != TC_OK)
                    goto fail;
            continue;
        }
        for (int i = 0; i < p; i++)
            for (int j = 1; j <= k; j++) {
                st = tc_topo_add_link(u, sw->npus[i], sw->npus[(i + j) % p], sw->cls, sw->alpha,
                                      sw->beta * k, sw->line);
                if (st != TC_OK)
                    goto fail;
            }
    }
    for (int s = 0; s < t->n_switches; s++) { /* tree edges to the parents, their class both ways, once every
                                                   vertex exists */
        const tc_switch *sw = &t->switches[s];
        if (sw->up < 0 || vid[s] < 0)
            continue;
        const tc_link_class *c = &t->classes[sw->up_cls];
        if ((st = tc_topo_add_link(u, vid[s], vid[sw->up], sw->up_cls, c->alpha, c->beta, sw->line)) != TC_OK ||
            (st = tc_topo_add_link(u, vid[sw->up], vid[s], sw->up_cls, c->alpha, c->beta, sw->line)) != TC_OK)
            goto fail;
    }
    for (int s = 0; s < u->n_switches; s++) {
        free(u->switches[s].name);
        free(u->switches[s].npus);
    }
    u->n_switches = 0;
    st = tc_topo_index(u);
    if (st != TC_OK)
        goto fail;
    free(vid);
    *out = u;
    return TC_OK;
fail:
    free(vid);
    tc_topo_free(u);
    return tc_error(ctx, st, NULL, 0, "out of memory unwinding switches");
}

void tc_topo_set_switch_model(tc_topo *t, tc_switch_model m)
{
    for (int s = 0; s < t->n_switches; s++)
        if (!t->switches[s].nic) /* a NIC is a store-and-forward vertex whatever the switches are */
            t->switches[s].model = (int)m;
}

int tc_topo_switch_tree(const tc_topo *t)
{
    for (int s = 0; s < t->n_switches; s++)
        if (t->switches[s].up >= 0)
            return 1;
    for (int l = 0; l < t->n_links; l++)
        if (t->links[l].src >= t->n_npus && t->links[l].dst >= t->n_npus)
            return 1;
    return 0;
}

int tc_topo_switch_carries(const tc_topo *t, int s)
{
    return !t->switches[s].nic || t->switches[s].up >= 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Metrics                                                                                        */

/* Dijkstra on link alpha from src over the out-CSR; dist[] in seconds (INFINITY unreached). */
typedef struct heap_item { double key; int v; } heap_item;

static void heap_push(heap_item *h, int *n, double key, int v)
{
    int i = (*n)++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (h[p].key < key || (h[p].key == key && h[p].v <= v))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i].key = key;
    h[i].v = v;
}

static heap_item heap_pop(heap_item *h, int *n)
{
    heap_item top = h[0], last = h[--(*n)];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && (h[c + 1].key < h[c].key || (h[c + 1].key == h[c].key && h[c + 1].v < h[c].v)))
            c++;
        if (last.key < h[c].key || (last.key == h[c].key && last.v <= h[c].v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

static double dijkstra_ecc(const tc_topo *t, int src, double *dist, heap_item *heap)
{
    int n = tc_topo_n_vertices(t), hn = 0;
    for (int v = 0; v < n; v++)
        dist[v] = INFINITY;
    dist[src] = 0;
    heap_push(heap, &hn, 0, src);
    double ecc = 0;
    while (hn > 0) {
        heap_item it = heap_pop(heap, &hn);
        if (it.key > dist[it.v])
            continue;
        if (it.key > ecc && it.v < t->n_npus) /* distances between NPUs (a switch vertex is on the way) */
            ecc = it.key;
        for (int e = t->out_off[it.v]; e < t->out_off[it.v + 1]; e++) {
            const tc_link *l = &t->links[t->out_link[e]];
            double nd = it.key + l->alpha;
            if (nd < dist[l->dst]) {
                dist[l->dst] = nd;
                heap_push(heap, &hn, nd, l->dst);
            }
        }
    }
    return ecc;
}

/* Hop eccentricity of src over the out-CSR off/adj (neighbour ids); returns the farthest vertex in *far. */
static int bfs_ecc(const tc_topo *t, const int *adj, int src, int *dist, int *queue, int *far)
{
    int n = tc_topo_n_vertices(t), npus = 0;
    const int *off = t->out_off;
    for (int v = 0; v < n; v++)
        dist[v] = -1;
    int head = 0, tail = 0, ecc = 0;
    dist[src] = 0;
    queue[tail++] = src;
    *far = src;
    while (head < tail) {
        int v = queue[head++];
        if (v >= t->n_npus) /* a switch vertex: a hop on the way, not an end */
            goto next;
        npus++;
        if (dist[v] > ecc) {
            ecc = dist[v];
            *far = v;
        }
    next:
        for (int e = off[v]; e < off[v + 1]; e++) {
            int w = adj[e];
            if (dist[w] < 0) {
                dist[w] = dist[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    return npus == t->n_npus ? ecc : -1;
}

static tc_status info_compute(const tc_topo *t, tc_topo_info *in)
{
    int n = t->n_npus, nv = tc_topo_n_vertices(t);
    tc_status st = TC_ERR_NOMEM;
    double *inj = calloc((size_t)nv, sizeof *inj), *ej = calloc((size_t)nv, sizeof *ej);
    int *dist = malloc((size_t)nv * sizeof *dist), *queue = malloc((size_t)nv * sizeof *queue);
    int *adj = malloc(((size_t)t->out_off[nv] + 1) * sizeof *adj); /* BFS reads neighbour ids only */
    double *ddist = NULL;
    heap_item *heap = NULL;
    if (!inj || !ej || !dist || !queue || !adj)
        goto done;
    for (int e = 0; e < t->out_off[nv]; e++)
        adj[e] = t->links[t->out_link[e]].dst;
    for (int i = 0; i < t->n_links; i++) { /* a size table: the fastest (the ideal is a lower bound) */
        inj[t->links[i].src] += 1.0 / tc_link_beta_min(t, &t->links[i]);
        ej[t->links[i].dst] += 1.0 / tc_link_beta_min(t, &t->links[i]);
    }
    in->min_injection_bw = INFINITY;
    in->min_ejection_bw = INFINITY;
    for (int v = 0; v < n; v++) {
        if (inj[v] < in->min_injection_bw)
            in->min_injection_bw = inj[v];
        if (ej[v] < in->min_ejection_bw)
            in->min_ejection_bw = ej[v];
    }
    int uniform_alpha = 1;
    for (int i = 1; i < t->n_links; i++)
        if (t->links[i].alpha != t->links[0].alpha)
            uniform_alpha = 0;

    /* Sources: every NPU when affordable, else up to TC_TOPO_SAMPLE_SOURCES spread evenly plus the
     * farthest vertex found from each (a double sweep). */
    double work = (double)n * ((double)n + t->n_links);
    int exact = work <= TC_TOPO_EXACT_WORK;
    int n_src = exact ? n : TC_TOPO_SAMPLE_SOURCES;
    if (n_src > n)
        n_src = n;
    in->diameter = 0;
    in->diameter_exact = exact;
    for (int k = 0; k < n_src; k++) {
        int src = exact ? k : (int)((long long)k * n / n_src), far;
        int e = bfs_ecc(t, adj, src, dist, queue, &far);
        if (e < 0) {
            in->diameter = -1;
            break;
        }
        if (e > in->diameter)
            in->diameter = e;
        if (!exact) {
            e = bfs_ecc(t, adj, far, dist, queue, &far);
            if (e > in->diameter)
                in->diameter = e;
        }
    }
    if (in->diameter < 0) {
        in->diameter_alpha = INFINITY;
    } else if (uniform_alpha) {
        in->diameter_alpha = t->n_links ? in->diameter * t->links[0].alpha : 0;
    } else {
        /* Dijkstra is ~log n dearer than BFS: use a quarter of the budget. */
        int exact_a = work * 4 <= TC_TOPO_EXACT_WORK;
        int na = exact_a ? n : (n < TC_TOPO_SAMPLE_SOURCES ? n : TC_TOPO_SAMPLE_SOURCES);
        ddist = malloc((size_t)nv * sizeof *ddist);
        heap = malloc(((size_t)t->n_links + 1) * sizeof *heap);
        if (!ddist || !heap)
            goto done;
        in->diameter_alpha = 0;
        for (int k = 0; k < na; k++) {
            int src = exact_a ? k : (int)((long long)k * n / na);
            double e = dijkstra_ecc(t, src, ddist, heap);
            if (e > in->diameter_alpha)
                in->diameter_alpha = e;
        }
        if (!exact_a)
            in->diameter_exact = 0;
    }
    st = TC_OK;
done:
    free(inj);
    free(ej);
    free(dist);
    free(queue);
    free(adj);
    free(ddist);
    free(heap);
    return st;
}

tc_status tc_topo_info_get(tc_ctx *ctx, const tc_topo *t, tc_topo_info *out)
{
    tc_topo_info in;
    memset(&in, 0, sizeof in);
    in.n_npus = t->n_npus;
    in.n_links = t->n_links;
    in.n_classes = t->n_classes;
    in.n_switches = t->n_switches;
    if (t->n_npus < 1)
        return tc_error(ctx, TC_ERR_INVALID, t->file, 0, "empty topology: no npus");
    tc_topo *u = NULL;
    tc_status st;
    if (t->n_switches > 0 || !t->out_off) {
        st = t->n_switches > 0 ? tc_topo_unwind(ctx, t, 0, &u) : tc_topo_clone(t, &u);
        if (st == TC_OK && !u->out_off)
            st = tc_topo_index(u);
        if (st != TC_OK) {
            tc_topo_free(u);
            return st == TC_ERR_NOMEM ? tc_error(ctx, st, NULL, 0, "out of memory computing metrics") : st;
        }
    }
    st = info_compute(u ? u : t, &in);
    tc_topo_free(u);
    if (st != TC_OK)
        return tc_error(ctx, st, NULL, 0, "out of memory computing metrics");
    *out = in;
    return TC_OK;
}

double tc_topo_ideal_time(const tc_topo_info *info, tc_coll coll, uint64_t size, int n_ranks)
{
    int n = n_ranks > 0 ? n_ranks : info->n_npus;
    double bw = info->min_injection_bw < info->min_ejection_bw ? info->min_injection_bw
                                                                : info->min_ejection_bw;
    if (n <= 1)
        return 0;
    if (!(bw > 0) || info->diameter < 0)
        return INFINITY;
    double s = (double)size, frac = (double)(n - 1) / n, bytes;
    switch (coll) {
    case TC_COLL_ALLREDUCE: bytes = s * 2 * frac; break;
    case TC_COLL_ALLGATHER:
    case TC_COLL_REDUCESCATTER:
    case TC_COLL_GATHER:
    case TC_COLL_SCATTER:
    case TC_COLL_ALLTOALL: bytes = s * frac; break;
    case TC_COLL_BROADCAST:
    case TC_COLL_REDUCE: bytes = s; break;
    default: return INFINITY;
    }
    return bytes / bw + info->diameter_alpha;
}

void tc_topo_photonic_tiles(int n, int *rows, int *cols)
{
    int c = 1;
    while ((long long)c * c < n)
        c++;
    *cols = c;
    *rows = n > 0 ? (n + c - 1) / c : 1;
}
