/*
 * fiber: Alg. 4 of the photonic paper (App. B.1), routing circuits across the server grid so that the
 * most circuits sharing one inter-server edge, z, is as small as possible: z is the number of fibers
 * an edge needs with one wavelength (ceil(z / W) with W).
 *
 * Accepts: an undirected server graph, circuits already on each edge, circuits (src server, dst server).
 * Returns: a server path per circuit, the load per edge, z, the LP bound and whether the exact ILP or its
 *   time-limited fallback produced them.
 * Model: the paper's per-circuit binaries x[i][u][v] with flow conservation are aggregated by source
 *   server: integer x[s][a] on each arc a (both directions of each edge), conservation sum_out - sum_in =
 *   (circuits from s) at s and -(circuits from s to v) at v != s, and z >= sum_s (x[s][u->v] + x[s][v->u])
 *   + edge_count for every edge; minimize z.  Any integer flow splits into paths (cycles dropped), so the
 *   optimum is the paper's; S sources x 2E arcs variables instead of circuits x 2E.
 * Solve: (1) the LP relaxation with glp_interior (glp_simplex when it does not converge): its optimum L is
 *   the LP bound and, z being an integer, ceil(L) bounds the ILP from below; (2) a first solution: the LP
 *   flows split into paths, each circuit taking the path of its pair that raises the busiest edge least,
 *   then circuits moved off the busiest edges onto paths whose edges carry at most z - 2 while that helps;
 *   when it meets ceil(L) it is optimal and the search ends; (3) otherwise glp_intopt, from a simplex
 *   basis, with z >= ceil(L), that solution as its first incumbent (glp_ios_heur_sol) and tm_lim = the time
 *   left.  At GLP_ETMLIM the best solution found so far is kept (method TC_PH_FIBER_LP: the LP relaxation
 *   rounded, or GLPK's incumbent when better).  Every return code and status is checked (GLPK's glpk.h
 *   and the comments of glp_interior, glp_simplex, glp_intopt, glp_ios_heur_sol in GLPK's src/api).
 *   Finally each circuit moves to a shortest path whose edges stay within max(z, capacity) where one
 *   exists (capacity: fibers x wavelengths of the fabric; minimizing z alone takes detours that fibers
 *   already there make pointless).
 * Cost: one LP of S x 2E + 1 columns and S x V + E rows; 100 and 512 random circuits on an 8x8 grid take
 *   about 0.2 s on one core (bench-photonic), proven optimal at ceil(L).
 * Passes: fiber_setup (arcs, sources, demands, reachability), fiber_model (the ILP), fiber_relax (the LP
 *   relaxation), round_lp + improve (the first solution), fiber_branch (branch and bound from it, the
 *   proven bound kept), fiber_output (z, shortened paths, arrays).
 * Limits: a circuit between servers that no path joins is an error naming it.
 * Trace (3 servers in a line 0-1-2, circuits 0->2, 0->2, 2->0): every circuit crosses both edges: loads
 *   3 and 3, z = 3, LP bound 3.  (A 4-cycle 0-1-2-3 with circuits 0->2 and 1->3: the LP splits both in
 *   halves, L = 1, but any two paths share an edge: the first solution has z = 2 and branch and bound
 *   proves it.)
 */
#include "photonic_int.h"

#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tc_photonic_fiber_out_free(tc_ph_fiber_out *o)
{
    if (!o)
        return;
    free(o->load);
    free(o->path_off);
    free(o->path);
    free(o->edge_of);
    free(o);
}

typedef struct fctx {
    tc_ctx *ctx;
    const tc_ph_fiber_in *in;
    int V, E, A;            /* servers, edges, arcs (2 E) */
    int *arc_off, *arc_id;  /* out-arcs of each server: arc_id[arc_off[v] .. arc_off[v+1]) */
    int *srcs, n_srcs;      /* distinct sources with inter-server circuits */
    int *src_index;         /* per server: index into srcs, -1 */
    int *demand;            /* n_srcs x V */
    int *load;              /* per edge */
    int **paths;            /* per circuit: servers, -1 terminated */
} fctx;

static int arc_from(const fctx *f, int a) { return a & 1 ? f->in->edge_v[a >> 1] : f->in->edge_u[a >> 1]; }
static int arc_to(const fctx *f, int a) { return a & 1 ? f->in->edge_u[a >> 1] : f->in->edge_v[a >> 1]; }

static const char *what(const fctx *f) { return f->in->what ? f->in->what : "fiber routing"; }

/* Breadth-first shortest path from s to t over edges whose load is below `cap` (INT_MAX: any edge);
 * writes servers into path (V + 1 ints, -1 terminated).  Returns hops or -1. */
static int bfs_path(const fctx *f, int s, int t, int cap, int *path, int *prev, int *queue)
{
    for (int v = 0; v < f->V; v++)
        prev[v] = -2;
    int head = 0, tail = 0;
    queue[tail++] = s;
    prev[s] = -1;
    while (head < tail && prev[t] == -2) {
        int u = queue[head++];
        for (int k = f->arc_off[u]; k < f->arc_off[u + 1]; k++) {
            int a = f->arc_id[k], w = arc_to(f, a);
            if (prev[w] != -2 || f->load[a >> 1] >= cap)
                continue;
            prev[w] = a;
            queue[tail++] = w;
        }
    }
    if (prev[t] == -2)
        return -1;
    int n = 0;
    for (int v = t; v != s; v = arc_from(f, prev[v]))
        n++;
    path[n + 1] = -1;
    int k = n;
    for (int v = t;; v = arc_from(f, prev[v])) {
        path[k--] = v;
        if (v == s)
            break;
    }
    return n;
}

/* Edge between servers a and b (lowest id), -1 none. */
static int edge_between(const fctx *f, int a, int b)
{
    for (int k = f->arc_off[a]; k < f->arc_off[a + 1]; k++)
        if (arc_to(f, f->arc_id[k]) == b)
            return f->arc_id[k] >> 1;
    return -1;
}

static void path_load(fctx *f, const int *path, int d)
{
    for (int k = 0; path[k] >= 0 && path[k + 1] >= 0; k++)
        f->load[edge_between(f, path[k], path[k + 1])] += d;
}

/*
 * Split the flow x (per source, per arc; flows of source si at x[si * A + a]) into paths, walking from the
 * source along arcs with flow > eps and ending at the first server that still wants flow; cycles met on
 * the way are cancelled.  Calls take(si, path, amount) for every path.  Integral flows give unit paths.
 */
typedef tc_status (*take_fn)(fctx *f, int si, const int *path, int len, double amount, void *user);

static tc_status decompose(fctx *f, double *x, double *want, take_fn take, void *user)
{
    const double eps = 1e-7;
    int *walk = malloc((size_t)(f->V + 2) * sizeof *walk), *arcs = malloc((size_t)(f->V + 2) * sizeof *arcs);
    int *pos = malloc((size_t)f->V * sizeof *pos);
    tc_status st = TC_OK;
    if (!walk || !arcs || !pos) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int si = 0; si < f->n_srcs && !st; si++) {
        const int s = f->srcs[si];
        double *xs = x + (size_t)si * f->A, *ws = want + (size_t)si * f->V;
        for (int guard = 0; guard < 4 * f->A * (f->V + 1) + 16; guard++) {
            double left = 0;
            for (int v = 0; v < f->V; v++)
                left += ws[v] > eps ? ws[v] : 0;
            if (left <= eps)
                break;
            for (int v = 0; v < f->V; v++)
                pos[v] = -1;
            int len = 0, u = s;
            walk[len] = s;
            pos[s] = 0;
            while (!(u != s && ws[u] > eps)) {
                int best = -1;
                for (int k = f->arc_off[u]; k < f->arc_off[u + 1]; k++)
                    if (xs[f->arc_id[k]] > eps) {
                        best = f->arc_id[k];
                        break;
                    }
                if (best < 0) { /* flow ran out before the demand: numerical residue */
                    for (int v = 0; v < f->V; v++)
                        ws[v] = 0;
                    len = -1;
                    break;
                }
                int w = arc_to(f, best);
                arcs[len] = best;
                if (pos[w] >= 0) { /* a cycle back to w: cancel it */
                    double m = INFINITY;
                    for (int k = pos[w]; k <= len; k++)
                        if (xs[arcs[k]] < m)
                            m = xs[arcs[k]];
                    for (int k = pos[w]; k <= len; k++)
                        xs[arcs[k]] -= m;
                    for (int k = pos[w] + 1; k <= len; k++)
                        pos[walk[k]] = -1;
                    len = pos[w];
                    u = w;
                    continue;
                }
                walk[++len] = w;
                pos[w] = len;
                u = w;
            }
            if (len < 0)
                break;
            double m = ws[u];
            for (int k = 0; k < len; k++)
                if (xs[arcs[k]] < m)
                    m = xs[arcs[k]];
            for (int k = 0; k < len; k++)
                xs[arcs[k]] -= m;
            ws[u] -= m;
            walk[len + 1] = -1;
            if ((st = take(f, si, walk, len, m, user)))
                break;
        }
    }
done:
    free(walk);
    free(arcs);
    free(pos);
    return st;
}

/* Integral flows: each unit path serves one circuit of (source, destination), in circuit order. */
typedef struct unit_user {
    int *next;   /* per circuit index order: circuits not yet given a path */
} unit_user;

static tc_status take_unit(fctx *f, int si, const int *path, int len, double amount, void *user)
{
    (void)user;
    int units = (int)llround(amount);
    const int s = f->srcs[si], t = path[len];
    for (int i = 0; i < f->in->n_circ && units > 0; i++) {
        if (f->paths[i] || f->in->src[i] != s || f->in->dst[i] != t)
            continue;
        /* every path buffer holds V + 2 entries: shorten() and improve() rewrite paths in place, and a
         * rerouted path may be longer than the one it replaces */
        int *p = malloc((size_t)((len > f->V ? len : f->V) + 2) * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        memcpy(p, path, (size_t)(len + 2) * sizeof *p);
        f->paths[i] = p;
        path_load(f, p, 1);
        units--;
    }
    return TC_OK;
}

/* Fractional flows: collect the candidate paths of every (source, destination). */
typedef struct frac_path {
    int si, dst, len;
    double amount;
    int *servers;
} frac_path;

typedef struct frac_user {
    frac_path *p;
    int n, cap;
} frac_user;

static tc_status take_frac(fctx *f, int si, const int *path, int len, double amount, void *user)
{
    frac_user *u = user;
    if (tc_grow((void **)&u->p, &u->cap, u->n + 1, sizeof *u->p))
        return TC_ERR_NOMEM;
    int *s = malloc((size_t)(len + 2) * sizeof *s);
    if (!s)
        return TC_ERR_NOMEM;
    memcpy(s, path, (size_t)(len + 2) * sizeof *s);
    u->p[u->n++] = (frac_path){si, path[len], len, amount, s};
    (void)f;
    return TC_OK;
}

/* Largest load on a path if one more circuit took it. */
static int path_peak(const fctx *f, const int *path)
{
    int m = 0;
    for (int k = 0; path[k] >= 0 && path[k + 1] >= 0; k++) {
        int l = f->load[edge_between(f, path[k], path[k + 1])] + 1;
        if (l > m)
            m = l;
    }
    return m;
}

static int max_load(const fctx *f)
{
    int z = 0;
    for (int e = 0; e < f->E; e++)
        if (f->load[e] > z)
            z = f->load[e];
    return z;
}

static void clear_paths(fctx *f)
{
    for (int i = 0; i < f->in->n_circ; i++) {
        free(f->paths[i]);
        f->paths[i] = NULL;
    }
    for (int e = 0; e < f->E; e++)
        f->load[e] = f->in->edge_count ? f->in->edge_count[e] : 0;
}

/* Round the LP flows: every circuit takes one of its LP paths, the one raising the largest load least. */
static tc_status round_lp(fctx *f, double *x, double *want)
{
    frac_user u = {0};
    tc_status st = decompose(f, x, want, take_frac, &u);
    for (int i = 0; i < f->in->n_circ && !st; i++) {
        const int s = f->in->src[i], t = f->in->dst[i];
        if (s == t || f->paths[i])
            continue;
        int best = -1, best_peak = 0;
        for (int k = 0; k < u.n; k++) {
            if (f->srcs[u.p[k].si] != s || u.p[k].dst != t)
                continue;
            int peak = path_peak(f, u.p[k].servers);
            if (best < 0 || peak < best_peak ||
                (peak == best_peak && (u.p[k].amount > u.p[best].amount + 1e-9 ||
                                       (fabs(u.p[k].amount - u.p[best].amount) <= 1e-9 && u.p[k].len < u.p[best].len)))) {
                best = k;
                best_peak = peak;
            }
        }
        int *p = malloc((size_t)(f->V + 2) * sizeof *p);
        if (!p) {
            st = TC_ERR_NOMEM;
            break;
        }
        if (best >= 0) {
            memcpy(p, u.p[best].servers, (size_t)(u.p[best].len + 2) * sizeof *p);
        } else { /* numerical residue left this pair without a path: a shortest one */
            int *prev = malloc((size_t)f->V * 2 * sizeof *prev);
            if (!prev || bfs_path(f, s, t, INT_MAX, p, prev, prev + f->V) < 0) {
                free(prev);
                free(p);
                st = prev ? TC_ERR_INTERNAL : TC_ERR_NOMEM;
                break;
            }
            free(prev);
        }
        f->paths[i] = p;
        path_load(f, p, 1);
    }
    for (int k = 0; k < u.n; k++)
        free(u.p[k].servers);
    free(u.p);
    return st;
}

static int path_len(const int *p)
{
    int n = 0;
    while (p[n + 1] >= 0)
        n++;
    return n;
}

/*
 * Move circuits to shorter paths whose edges all stay within cap, pass after pass until none moves (a
 * circuit leaving an edge can make room for another).  Where two circuits on detours block each other's
 * shorter paths (each sits on an edge the other needs), both are rerouted together when that shortens
 * them in total.
 */
static tc_status shorten(fctx *f, int cap)
{
    const int n = f->in->n_circ;
    int *tmp = malloc((size_t)(f->V + 2) * sizeof *tmp), *tmp2 = malloc((size_t)(f->V + 2) * sizeof *tmp2);
    int *prev = malloc((size_t)f->V * 2 * sizeof *prev), *best = malloc((size_t)(n > 0 ? n : 1) * sizeof *best);
    tc_status st = TC_OK;
    if (!tmp || !tmp2 || !prev || !best) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) /* the shortest possible, ignoring loads */
        best[i] = bfs_path(f, f->paths[i][0], f->paths[i][path_len(f->paths[i])], INT_MAX, tmp, prev, prev + f->V);
    for (int moved = 1, pass = 0; moved && pass < f->V + 1; pass++) {
        moved = 0;
        for (int i = 0; i < n; i++) {
            int *p = f->paths[i];
            const int len = path_len(p);
            if (len <= best[i])
                continue;
            path_load(f, p, -1);
            int m = bfs_path(f, p[0], p[len], cap, tmp, prev, prev + f->V);
            if (m >= 0 && m < len) {
                memcpy(p, tmp, (size_t)(m + 2) * sizeof *p);
                moved = 1;
                path_load(f, p, 1);
                continue;
            }
            /* a partner on a detour: reroute both, i first */
            int swapped = 0;
            for (int j = 0; j < n && !swapped; j++) {
                int *q = f->paths[j];
                const int lq = path_len(q);
                if (j == i || lq <= best[j])
                    continue;
                path_load(f, q, -1);
                int a = bfs_path(f, p[0], p[len], cap, tmp, prev, prev + f->V);
                if (a >= 0) {
                    path_load(f, tmp, 1);
                    int b = bfs_path(f, q[0], q[lq], cap, tmp2, prev, prev + f->V);
                    if (b >= 0 && a + b < len + lq) {
                        memcpy(p, tmp, (size_t)(a + 2) * sizeof *p);
                        memcpy(q, tmp2, (size_t)(b + 2) * sizeof *q);
                        path_load(f, q, 1);
                        swapped = moved = 1;
                        break;
                    }
                    path_load(f, tmp, -1);
                }
                path_load(f, q, 1);
            }
            if (!swapped)
                path_load(f, p, 1);
        }
    }
done:
    free(tmp);
    free(tmp2);
    free(prev);
    free(best);
    return st;
}

/*
 * Rip up and reroute: while some edge carries z circuits and z is above `floor`, move circuits off the
 * edges at z onto shortest paths whose edges all carry at most z - 2 (so none reaches z); stop when a pass
 * moves nothing.
 */
static tc_status improve(fctx *f, int floor)
{
    int *tmp = malloc((size_t)(f->V + 2) * sizeof *tmp), *prev = malloc((size_t)f->V * 2 * sizeof *prev);
    if (!tmp || !prev) {
        free(tmp);
        free(prev);
        return TC_ERR_NOMEM;
    }
    for (int pass = 0; pass < 64; pass++) {
        const int z = max_load(f);
        if (z <= floor)
            break;
        int moved = 0;
        for (int i = 0; i < f->in->n_circ; i++) {
            int *p = f->paths[i], hot = 0, len = 0;
            if (!p)
                continue; /* within one server */
            while (p[len + 1] >= 0)
                len++;
            for (int k = 0; k < len && !hot; k++)
                hot = f->load[edge_between(f, p[k], p[k + 1])] >= z;
            if (!hot)
                continue;
            path_load(f, p, -1);
            int n = bfs_path(f, p[0], p[len], z - 1, tmp, prev, prev + f->V);
            if (n >= 0) { /* in place: the buffer holds V + 2 (a shrunk buffer overflowed in shorten()) */
                memcpy(p, tmp, (size_t)(n + 2) * sizeof *p);
                moved++;
            }
            path_load(f, p, 1);
        }
        if (!moved)
            break;
    }
    free(tmp);
    free(prev);
    return TC_OK;
}

static const char *simplex_ret_name(int ret)
{
    switch (ret) {
    case GLP_EBADB: return "GLP_EBADB (invalid basis)";
    case GLP_ESING: return "GLP_ESING (singular basis matrix)";
    case GLP_ECOND: return "GLP_ECOND (ill-conditioned basis matrix)";
    case GLP_EBOUND: return "GLP_EBOUND (incorrect bounds)";
    case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
    case GLP_EITLIM: return "GLP_EITLIM (iteration limit)";
    case GLP_ETMLIM: return "GLP_ETMLIM (time limit)";
    case GLP_ENOPFS: return "GLP_ENOPFS (no primal feasible solution)";
    case GLP_ENODFS: return "GLP_ENODFS (no dual feasible solution)";
    default: return "an unknown GLPK code";
    }
}

/* The heuristic's solution, handed to GLPK's branch and bound as its first incumbent. */
typedef struct heur {
    fctx *f;
    double *x;   /* 1-based column values */
    int n, z, given;
    double bound; /* the best active node's bound seen so far: a lower bound on the optimum */
} heur;

static void give_heuristic(glp_tree *T, void *info)
{
    heur *h = info;
    const int best = glp_ios_best_node(T);
    if (best) { /* the smallest bound of an active node bounds every solution left to find */
        const double b = glp_ios_node_bound(T, best);
        if (b > h->bound)
            h->bound = b;
    }
    if (glp_ios_reason(T) == GLP_IHEUR && !h->given) {
        h->given = 1;
        glp_ios_heur_sol(T, h->x);
    }
}

/* Pass 1: each server's arcs, the existing loads, the distinct sources and their demands; an error names a
 * circuit whose servers no path joins (or a bad edge or server). */
static tc_status fiber_setup(fctx *f)
{
    tc_ctx *ctx = f->ctx;
    const tc_ph_fiber_in *in = f->in;
    for (int e = 0; e < f->E; e++) {
        if (in->edge_u[e] < 0 || in->edge_u[e] >= f->V || in->edge_v[e] < 0 || in->edge_v[e] >= f->V ||
            in->edge_u[e] == in->edge_v[e])
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "%s: server edge %d joins %d and %d (%d servers)", what(f), e,
                            in->edge_u[e], in->edge_v[e], f->V);
        f->arc_off[in->edge_u[e] + 1]++;
        f->arc_off[in->edge_v[e] + 1]++;
    }
    for (int v = 0; v < f->V; v++)
        f->arc_off[v + 1] += f->arc_off[v];
    int *fill = calloc((size_t)f->V + 1, sizeof *fill);
    if (!fill)
        return TC_ERR_NOMEM;
    for (int a = 0; a < f->A; a++) {
        int u = arc_from(f, a);
        f->arc_id[f->arc_off[u] + fill[u]++] = a;
    }
    free(fill);
    for (int e = 0; e < f->E; e++)
        f->load[e] = in->edge_count ? in->edge_count[e] : 0;
    for (int v = 0; v < f->V; v++)
        f->src_index[v] = -1;
    for (int i = 0; i < in->n_circ; i++) {
        const int s = in->src[i], t = in->dst[i];
        if (s < 0 || s >= f->V || t < 0 || t >= f->V)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "%s: circuit %d: server %d or %d out of range (%d servers)",
                            what(f), i, s, t, f->V);
        if (s != t && f->src_index[s] < 0) {
            f->src_index[s] = f->n_srcs;
            f->srcs[f->n_srcs++] = s;
        }
    }
    f->demand = calloc((size_t)(f->n_srcs > 0 ? f->n_srcs : 1) * f->V, sizeof *f->demand);
    int *queue = malloc((size_t)(f->V + 2) * 3 * sizeof *queue);
    if (!f->demand || !queue) {
        free(queue);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < in->n_circ; i++)
        if (in->src[i] != in->dst[i])
            f->demand[(size_t)f->src_index[in->src[i]] * f->V + in->dst[i]]++;
    tc_status st = TC_OK;
    int *path = queue, *prev = queue + f->V + 2;
    for (int i = 0; i < in->n_circ && !st; i++) {
        if (in->dst[i] == in->src[i] || bfs_path(f, in->src[i], in->dst[i], INT_MAX, path, prev, prev + f->V) >= 0)
            continue;
        if (in->circ_src)
            st = tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                          "%s: circuit %d->%d: server %d cannot reach server %d (disconnected server grid)", what(f),
                          in->circ_src[i], in->circ_dst[i], in->src[i], in->dst[i]);
        else
            st = tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                          "%s: circuit %d: server %d cannot reach server %d (disconnected server grid)", what(f), i,
                          in->src[i], in->dst[i]);
    }
    free(queue);
    return st;
}

/* Pass 2: the ILP (columns x[si][a] = si * A + a + 1 and z = S A + 1, conservation rows per source and
 * server, one capacity row per edge), into a new problem *lpp. */
static tc_status fiber_model(fctx *f, int base, glp_prob **lpp)
{
    const tc_ph_fiber_in *in = f->in;
    const int ncol = f->n_srcs * f->A + 1, zcol = ncol;
    glp_prob *lp = glp_create_prob();
    *lpp = lp;
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, ncol);
    for (int si = 0; si < f->n_srcs; si++) {
        int total = 0;
        for (int v = 0; v < f->V; v++)
            total += f->demand[(size_t)si * f->V + v];
        for (int a = 0; a < f->A; a++) {
            int c = si * f->A + a + 1;
            glp_set_col_kind(lp, c, GLP_IV);
            glp_set_col_bnds(lp, c, GLP_DB, 0, total);
        }
    }
    glp_set_col_kind(lp, zcol, GLP_IV);
    glp_set_col_bnds(lp, zcol, GLP_LO, base, 0);
    glp_set_obj_coef(lp, zcol, 1);
    const int nrow = f->n_srcs * f->V + f->E;
    glp_add_rows(lp, nrow);
    const long long nnz = (long long)f->n_srcs * f->A * 2 + (long long)f->n_srcs * f->A + f->E;
    int *ia = malloc((size_t)(nnz + 1) * sizeof *ia), *ja = malloc((size_t)(nnz + 1) * sizeof *ja);
    double *ar = malloc((size_t)(nnz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia), free(ja), free(ar);
        return TC_ERR_NOMEM;
    }
    int k = 0;
    for (int si = 0; si < f->n_srcs; si++) {
        int total = 0;
        for (int v = 0; v < f->V; v++)
            total += f->demand[(size_t)si * f->V + v];
        for (int v = 0; v < f->V; v++) {
            int row = si * f->V + v + 1;
            double b = v == f->srcs[si] ? total : -f->demand[(size_t)si * f->V + v];
            glp_set_row_bnds(lp, row, GLP_FX, b, b);
        }
        for (int a = 0; a < f->A; a++) {
            int c = si * f->A + a + 1;
            ++k, ia[k] = si * f->V + arc_from(f, a) + 1, ja[k] = c, ar[k] = 1;
            ++k, ia[k] = si * f->V + arc_to(f, a) + 1, ja[k] = c, ar[k] = -1;
            ++k, ia[k] = f->n_srcs * f->V + (a >> 1) + 1, ja[k] = c, ar[k] = 1;
        }
    }
    for (int e = 0; e < f->E; e++) {
        int row = f->n_srcs * f->V + e + 1;
        ++k, ia[k] = row, ja[k] = zcol, ar[k] = -1;
        glp_set_row_bnds(lp, row, GLP_UP, 0, -(double)(in->edge_count ? in->edge_count[e] : 0));
    }
    glp_load_matrix(lp, k, ia, ja, ar);
    free(ia), free(ja), free(ar);
    return TC_OK;
}

/* Pass 3: the LP relaxation by the interior-point method (several times faster than the simplex here),
 * the simplex when it does not converge (then *have_basis): its optimum into *lp_bound, flows into x. */
static tc_status fiber_relax(fctx *f, glp_prob *lp, double *x, double *lp_bound, int *have_basis)
{
    const int zcol = f->n_srcs * f->A + 1;
    glp_iptcp ic;
    glp_init_iptcp(&ic);
    ic.msg_lev = GLP_MSG_OFF;
    int ret = glp_interior(lp, &ic);
    *have_basis = 0;
    if (ret == 0 && glp_ipt_status(lp) == GLP_OPT) {
        /* the interior point stops within ~1e-8 of the optimum: report it to 6 decimals */
        *lp_bound = round(glp_ipt_obj_val(lp) * 1e6) / 1e6;
        for (int c = 1; c < zcol; c++)
            x[c - 1] = glp_ipt_col_prim(lp, c);
        return TC_OK;
    }
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    if ((ret = glp_simplex(lp, &sp)) != 0)
        return tc_error(f->ctx, TC_ERR_INTERNAL, NULL, 0, "%s: LP relaxation of the fiber ILP: glp_simplex failed: %s",
                        what(f), simplex_ret_name(ret));
    if (glp_get_status(lp) != GLP_OPT)
        return tc_error(f->ctx, TC_ERR_INTERNAL, NULL, 0,
                        "%s: LP relaxation of the fiber ILP has no optimum (GLPK status %d)", what(f),
                        glp_get_status(lp));
    *have_basis = 1;
    *lp_bound = glp_get_obj_val(lp);
    for (int c = 1; c < zcol; c++)
        x[c - 1] = glp_get_col_prim(lp, c);
    return TC_OK;
}

/* Pass 4: branch and bound from the heuristic's paths (busiest edge zh), with z >= zlb (GLPK stops when it
 * meets it) and the time left of the limit.  GLPK's solution replaces the paths when it is better; at the
 * limit o->method becomes TC_PH_FIBER_LP; *tree_bound gets the best bound branch and bound proved. */
static tc_status fiber_branch(fctx *f, glp_prob *lp, int zlb, int zh, int have_basis, double t0, double *want,
                              tc_ph_fiber_out *o, double *tree_bound)
{
    const tc_ph_fiber_in *in = f->in;
    const int ncol = f->n_srcs * f->A + 1, zcol = ncol;
    double left = in->time_limit > 0 ? in->time_limit : TC_PHOTONIC_ILP_TIME;
    left -= tc_now() - t0;
    heur h = {.f = f, .n = ncol + 1, .z = zh, .bound = zlb};
    if (!(h.x = calloc((size_t)ncol + 1, sizeof *h.x)))
        return TC_ERR_NOMEM;
    for (int i = 0; i < in->n_circ; i++) {
        const int *pp = f->paths[i];
        for (int k = 0; pp && pp[k] >= 0 && pp[k + 1] >= 0; k++) {
            int e = edge_between(f, pp[k], pp[k + 1]);
            int a = in->edge_u[e] == pp[k] ? 2 * e : 2 * e + 1;
            h.x[f->src_index[in->src[i]] * f->A + a + 1] += 1;
        }
    }
    h.x[zcol] = zh;
    glp_set_col_bnds(lp, zcol, GLP_LO, zlb, 0);
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.meth = have_basis ? GLP_DUALP : GLP_PRIMAL;
    int ret = glp_simplex(lp, &sp);
    if (ret != 0 || glp_get_status(lp) != GLP_OPT) {
        free(h.x);
        return tc_error(f->ctx, TC_ERR_INTERNAL, NULL, 0, "%s: LP relaxation of the fiber ILP (z >= %d): %s", what(f),
                        zlb, ret ? simplex_ret_name(ret) : "no optimum");
    }
    glp_iocp ip;
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.presolve = GLP_OFF; /* starts from the LP basis above */
    ip.cb_func = give_heuristic;
    ip.cb_info = &h;
    ip.tm_lim = left <= 0.001 ? 1 : left * 1000 < 2e9 ? (int)(left * 1000) : 2000000000;
    ret = glp_intopt(lp, &ip);
    free(h.x);
    *tree_bound = h.bound;
    int status = glp_mip_status(lp);
    if (ret == GLP_ETMLIM)
        o->method = TC_PH_FIBER_LP;
    else if (ret != 0 || status != GLP_OPT)
        return tc_error(f->ctx, TC_ERR_INTERNAL, NULL, 0, "%s: fiber ILP: %s%s (status %d)", what(f),
                        ret ? "glp_intopt failed: " : "GLPK found no optimum", ret ? simplex_ret_name(ret) : "",
                        status);
    if (!((status == GLP_OPT || status == GLP_FEAS) && glp_mip_obj_val(lp) < zh - 0.5))
        return TC_OK;
    /* GLPK's solution beats the heuristic: take its flows */
    clear_paths(f);
    double *xs = malloc((size_t)f->n_srcs * f->A * sizeof *xs);
    if (!xs)
        return TC_ERR_NOMEM;
    for (int c = 1; c < zcol; c++)
        xs[c - 1] = (double)llround(glp_mip_col_val(lp, c));
    for (int si = 0; si < f->n_srcs; si++)
        for (int v = 0; v < f->V; v++)
            want[(size_t)si * f->V + v] = f->demand[(size_t)si * f->V + v];
    tc_status st = decompose(f, xs, want, take_unit, NULL);
    free(xs);
    return st;
}

/* Pass 5: paths for circuits within one server, z, the proven bound, the paths shortened within
 * max(z, capacity), and the output arrays. */
static tc_status fiber_output(fctx *f, double tree_bound, tc_ph_fiber_out *o)
{
    const tc_ph_fiber_in *in = f->in;
    for (int i = 0; i < in->n_circ; i++) {
        if (f->paths[i])
            continue;
        if (in->src[i] != in->dst[i]) /* the decomposition left it (never expected) */
            return tc_error(f->ctx, TC_ERR_INTERNAL, NULL, 0, "%s: circuit %d got no path from the fiber ILP", what(f), i);
        int *p = malloc((size_t)(f->V + 2) * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        p[0] = in->src[i];
        p[1] = -1;
        f->paths[i] = p;
    }
    o->z = max_load(f);
    /* proven when exact; otherwise the gap z - ceil(bound) is what the time limit left open */
    o->bound = o->method == TC_PH_FIBER_ILP ? o->z : ceil(tree_bound - 1e-6) > o->lp_bound ? ceil(tree_bound - 1e-6)
                                                                                            : o->lp_bound;
    const int pf = in->per_fiber > 0 ? in->per_fiber : 1;
    o->capacity = in->fibers > 0 ? in->fibers * pf : (o->z + pf - 1) / pf * pf;
    if (shorten(f, o->z > o->capacity ? o->z : o->capacity))
        return TC_ERR_NOMEM;
    o->peak = max_load(f);
    o->load = malloc((size_t)(f->E > 0 ? f->E : 1) * sizeof *o->load);
    o->path_off = malloc(((size_t)in->n_circ + 1) * sizeof *o->path_off);
    if (!o->load || !o->path_off)
        return TC_ERR_NOMEM;
    memcpy(o->load, f->load, (size_t)f->E * sizeof *o->load);
    int total = 0;
    for (int i = 0; i < in->n_circ; i++) {
        o->path_off[i] = total;
        while (f->paths[i][total - o->path_off[i]] >= 0)
            total++;
    }
    o->path_off[in->n_circ] = total;
    o->path = malloc((size_t)(total > 0 ? total : 1) * sizeof *o->path);
    o->edge_of = malloc((size_t)(total > 0 ? total : 1) * sizeof *o->edge_of);
    if (!o->path || !o->edge_of)
        return TC_ERR_NOMEM;
    for (int i = 0; i < in->n_circ; i++)
        for (int k = o->path_off[i]; k < o->path_off[i + 1]; k++) {
            o->path[k] = f->paths[i][k - o->path_off[i]];
            o->edge_of[k] = k + 1 < o->path_off[i + 1] ? edge_between(f, o->path[k], f->paths[i][k - o->path_off[i] + 1])
                                                       : -1;
        }
    return TC_OK;
}

tc_status tc_photonic_fiber_route(tc_ctx *ctx, const tc_ph_fiber_in *in, tc_ph_fiber_out **out)
{
    fctx f;
    memset(&f, 0, sizeof f);
    f.ctx = ctx;
    f.in = in;
    f.V = in->n_servers;
    f.E = in->n_edges;
    f.A = 2 * in->n_edges;
    tc_status st = TC_OK;
    glp_prob *lp = NULL;
    int term = glp_term_out(GLP_OFF);
    double *x = NULL, *want = NULL;
    tc_ph_fiber_out *o = calloc(1, sizeof *o);
    const double t0 = tc_now();
    f.arc_off = calloc((size_t)f.V + 1, sizeof *f.arc_off);
    f.arc_id = malloc((size_t)(f.A > 0 ? f.A : 1) * sizeof *f.arc_id);
    f.src_index = malloc((size_t)(f.V > 0 ? f.V : 1) * sizeof *f.src_index);
    f.srcs = malloc((size_t)(f.V > 0 ? f.V : 1) * sizeof *f.srcs);
    f.load = calloc((size_t)(f.E > 0 ? f.E : 1), sizeof *f.load);
    f.paths = calloc((size_t)(in->n_circ > 0 ? in->n_circ : 1), sizeof *f.paths);
    if (!o || !f.arc_off || !f.arc_id || !f.src_index || !f.srcs || !f.load || !f.paths)
        goto nomem;
    if ((st = fiber_setup(&f)))
        goto fail;
    int base = 0;
    double tree_bound = 0; /* z is an integer: ceil(LP bound), raised by branch and bound's best node */
    for (int e = 0; e < f.E; e++)
        if (f.load[e] > base)
            base = f.load[e];
    o->method = TC_PH_FIBER_ILP;
    o->lp_bound = base;
    if (f.n_srcs > 0) {
        int have_basis = 0;
        x = malloc((size_t)f.n_srcs * f.A * sizeof *x);
        want = malloc((size_t)f.n_srcs * f.V * sizeof *want);
        if (!x || !want)
            goto nomem;
        if ((st = fiber_model(&f, base, &lp)) || (st = fiber_relax(&f, lp, x, &o->lp_bound, &have_basis)))
            goto fail;
        /* a first solution: the LP flows split into paths and rounded, then rerouted off the busiest
         * edges; when it meets the LP bound (rounded up: z is an integer) it is optimal */
        const int zlb = (int)ceil(o->lp_bound - 1e-6) > base ? (int)ceil(o->lp_bound - 1e-6) : base;
        tree_bound = zlb;
        for (int si = 0; si < f.n_srcs; si++)
            for (int v = 0; v < f.V; v++)
                want[(size_t)si * f.V + v] = f.demand[(size_t)si * f.V + v];
        if ((st = round_lp(&f, x, want)) || (st = improve(&f, zlb)))
            goto fail;
        const int zh = max_load(&f);
        if (zh > zlb && (st = fiber_branch(&f, lp, zlb, zh, have_basis, t0, want, o, &tree_bound)))
            goto fail;
    }
    if ((st = fiber_output(&f, tree_bound, o)))
        goto fail;
    *out = o;
    o = NULL;
    goto done;
fail:
    if (st != TC_ERR_NOMEM)
        goto done;
nomem:
    st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "%s: out of memory", what(&f));
done:
    if (lp)
        glp_delete_prob(lp);
    glp_term_out(term);
    if (f.paths)
        for (int i = 0; i < in->n_circ; i++)
            free(f.paths[i]);
    free(f.paths);
    free(f.arc_off);
    free(f.arc_id);
    free(f.src_index);
    free(f.srcs);
    free(f.demand);
    free(f.load);
    free(x);
    free(want);
    tc_photonic_fiber_out_free(o);
    return st;
}
