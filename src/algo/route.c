/* Routing of logical transfers on a physical topology, shared by the classic generators. */
#include "tacos/algo.h"
#include "tacos/topo.h"

#include <stdlib.h>

/* Append a transfer on a path: one link is a direct transfer, several a routed one. */
static tc_status add_path(tc_sched *s, const int *links, int n, int src, int dst, int chunk, tc_op op, int step,
                          double t_start, double t_end)
{
    if (n < 1)
        return TC_ERR_INVALID;
    if (n == 1)
        return tc_sched_add(s, src, dst, chunk, op, links[0], step, t_start, t_end, NULL, 0);
    return tc_sched_add(s, src, dst, chunk, op, -1, step, t_start, t_end, links, n);
}

/* Summed alpha and largest beta (at a message of `bytes`) along a path. */
static tc_status path_cost(const tc_topo *topo, const int *links, int n, double bytes, double *alpha, double *beta)
{
    if (n < 1)
        return TC_ERR_INVALID;
    double a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        a += topo->links[links[i]].alpha;
        const double bi = tc_link_beta_at(topo, &topo->links[links[i]], bytes);
        if (bi > b)
            b = bi;
    }
    *alpha = a;
    *beta = b;
    return TC_OK;
}

/* One shortest path into buf (or a malloc'd array when longer than cap); returns its length. */
static int one_path(const tc_topo *topo, int src, int dst, int *buf, int cap, int **links)
{
    *links = buf;
    int n = tc_topo_shortest_path(topo, src, dst, buf, cap);
    if (n > cap) {
        if (!(*links = malloc((size_t)n * sizeof **links)))
            return -1;
        n = tc_topo_shortest_path(topo, src, dst, *links, n);
    }
    return n;
}

tc_status tc_algo_add_routed(tc_sched *s, const tc_topo *topo, int src, int dst, int chunk, tc_op op,
                             int step, double t_start, double t_end)
{
    int buf[256], *links;
    int n = one_path(topo, src, dst, buf, 256, &links);
    tc_status st = links ? add_path(s, links, n, src, dst, chunk, op, step, t_start, t_end) : TC_ERR_NOMEM;
    if (links != buf)
        free(links);
    return st;
}

tc_status tc_algo_route_cost(const tc_topo *topo, int src, int dst, double bytes, double *alpha, double *beta)
{
    int buf[256], *links;
    int n = one_path(topo, src, dst, buf, 256, &links);
    tc_status st = links ? path_cost(topo, links, n, bytes, alpha, beta) : TC_ERR_NOMEM;
    if (links != buf)
        free(links);
    return st;
}

tc_status tc_algo_router_init(tc_algo_router *r, const tc_topo *topo)
{
    size_t n = (size_t)(tc_topo_n_vertices(topo) > 0 ? tc_topo_n_vertices(topo) : 1); /* switch vertices too */
    r->topo = topo;
    r->src = -1;
    r->parent = r->trees = NULL;
    r->have = NULL;
    if (topo->n_npus > 0 && (size_t)topo->n_npus * n <= ((size_t)1 << 22)) { /* 16 MiB at most */
        r->trees = malloc((size_t)topo->n_npus * n * sizeof *r->trees);
        r->have = calloc((size_t)topo->n_npus, 1);
        if (!r->trees || !r->have) { /* the last source's tree only */
            free(r->trees);
            free(r->have);
            r->trees = NULL;
            r->have = NULL;
        }
    }
    if (!r->trees) /* else parent points into trees once a path is asked for */
        r->parent = malloc(n * sizeof *r->parent);
    r->path = malloc(n * sizeof *r->path);
    if ((!r->parent && !r->trees) || !r->path) {
        tc_algo_router_fini(r);
        return TC_ERR_NOMEM;
    }
    return TC_OK;
}

void tc_algo_router_fini(tc_algo_router *r)
{
    if (!r->trees) /* else parent points into trees */
        free(r->parent);
    free(r->path);
    free(r->trees);
    free(r->have);
    r->parent = r->path = r->trees = NULL;
    r->have = NULL;
}

int tc_algo_router_path(tc_algo_router *r, int src, int dst, const int **links)
{
    const tc_topo *t = r->topo;
    *links = r->path;
    if (src < 0 || src >= t->n_npus || dst < 0 || dst >= t->n_npus)
        return -1;
    if (src == dst)
        return 0;
    if (src != r->src) {
        /* a direct neighbour needs no tree: its lowest-id link, as tc_topo_shortest_path answers */
        int best = tc_topo_link_between(t, src, dst);
        if (best >= 0) {
            r->path[0] = best;
            return 1;
        }
        if (r->trees) {
            int *tree = r->trees + (size_t)src * (size_t)tc_topo_n_vertices(t);
            if (!r->have[src] && tc_topo_bfs_tree(t, src, tree))
                return -1;
            r->have[src] = 1;
            r->parent = tree;
        } else if (tc_topo_bfs_tree(t, src, r->parent))
            return -1;
        r->src = src;
    }
    return tc_topo_tree_path(t, r->parent, src, dst, r->path, tc_topo_n_vertices(t));
}

tc_status tc_algo_router_cost(tc_algo_router *r, int src, int dst, double bytes, double *alpha, double *beta)
{
    const int *links;
    int n = tc_algo_router_path(r, src, dst, &links);
    return path_cost(r->topo, links, n, bytes, alpha, beta);
}

tc_status tc_algo_router_add(tc_algo_router *r, tc_sched *s, int src, int dst, int chunk, tc_op op, int step,
                             double t_start, double t_end)
{
    const int *links;
    int n = tc_algo_router_path(r, src, dst, &links);
    return add_path(s, links, n, src, dst, chunk, op, step, t_start, t_end);
}
