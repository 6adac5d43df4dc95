/*
 * route: the fabric of a topology and the circuit router that drives Alg. 4 (fiber.c) and Alg. 3 (mzi.c).
 *
 * Accepts: a topology's <photonic> fabric (resolved into servers, tiles, meshes, fibers) and circuits
 *   between NPUs.
 * Returns: every circuit's server path, fibers, wavelength and MZIs, and the fibers in use per server pair.
 * Steps: (1) transmitters and receivers: an NPU may start at most tx circuits and end at most rx (an
 *   error names the first circuit over the limit); (2) with several servers, Alg. 4 picks each circuit's
 *   server path over the grid (edges between grid neighbours); (3) with a mesh, Alg. 3 routes each
 *   circuit from its source NPU's tile to its destination's along that server path; without a mesh, each
 *   circuit takes the lowest wavelength for which every server hop has a fiber with it free, opening the
 *   fewest fibers (up to `fibers` per pair when given).  Without a grid or a mesh nothing is routed.
 * Cost: that of Alg. 4 plus Alg. 3.
 * Limits: the grid is a full grid; a circuit that cannot be placed is an error naming it.
 * Trace (2 servers 1x2, 2 NPUs each, no mesh, W = 1, circuits 0->2, 1->3): both cross edge 0-1:
 *   z = 2, LP bound 2; wavelength 0 on fiber 0 and fiber 1: 2 fibers between servers 0 and 1.
 */
#include "photonic_int.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tc_photonic_fabric_free(tc_ph_fabric *f)
{
    if (!f)
        return;
    free(f->server_of);
    free(f->tile_of);
    free(f);
}

/* Tiles from the servers' NPU counts. */
static tc_status place_tiles(tc_ph_fabric *f, int tile_rows, int tile_cols)
{
    int *seen = calloc((size_t)f->servers, sizeof *seen);
    if (!seen)
        return TC_ERR_NOMEM;
    int most = 0;
    for (int v = 0; v < f->n_npus; v++) {
        f->tile_of[v] = seen[f->server_of[v]]++;
        if (seen[f->server_of[v]] > most)
            most = seen[f->server_of[v]];
    }
    free(seen);
    if (tile_rows > 0) {
        f->tile_rows = tile_rows;
        f->tile_cols = tile_cols;
    } else
        tc_topo_photonic_tiles(most > 0 ? most : 1, &f->tile_rows, &f->tile_cols);
    return TC_OK;
}

tc_status tc_photonic_fabric_create(tc_ctx *ctx, const tc_topo *topo, tc_ph_fabric **out)
{
    const tc_photonic *ph = &topo->photonic;
    if (!ph->present)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0,
                        "the topology has no <photonic> element (man 5 tacosc-topology)");
    tc_ph_fabric *f = calloc(1, sizeof *f);
    if (!f)
        return TC_ERR_NOMEM;
    const int n = topo->n_npus;
    f->n_npus = n;
    if (ph->grid_rows > 0) {
        f->grid_rows = ph->grid_rows;
        f->grid_cols = ph->grid_cols;
    } else {
        f->grid_rows = 1;
        f->grid_cols = topo->node_of && topo->n_nodes > 0 ? topo->n_nodes : 1;
    }
    f->servers = f->grid_rows * f->grid_cols;
    f->mzi = ph->mzi_size;
    f->wavelengths = ph->wavelengths > 0 ? ph->wavelengths : 1;
    f->fibers = ph->fibers > 0 ? ph->fibers : 0;
    f->tx = ph->tx_per_npu;
    f->rx = ph->rx_per_npu;
    f->server_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *f->server_of);
    f->tile_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *f->tile_of);
    if (!f->server_of || !f->tile_of)
        goto nomem;
    for (int v = 0; v < n; v++) {
        int s = topo->node_of ? topo->node_of[v] : (int)((long long)v * f->servers / n);
        if (s < 0 || s >= f->servers) {
            tc_status st = tc_error(ctx, TC_ERR_INVALID, topo->file, ph->line,
                                    "photonic: npu %d is on node %d, outside the %dx%d server grid", v, s,
                                    f->grid_rows, f->grid_cols);
            tc_photonic_fabric_free(f);
            return st;
        }
        f->server_of[v] = s;
    }
    if (place_tiles(f, ph->tile_rows, ph->tile_cols))
        goto nomem;
    *out = f;
    return TC_OK;
nomem:
    tc_photonic_fabric_free(f);
    return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
}

tc_status tc_photonic_fabric_make(int grid_rows, int grid_cols, int per_server, int mzi, int wavelengths,
                                  int fibers, tc_ph_fabric **out)
{
    if (grid_rows < 1 || grid_cols < 1 || per_server < 1 || mzi < 0 || wavelengths < 1 || fibers < 0)
        return TC_ERR_INVALID;
    tc_ph_fabric *f = calloc(1, sizeof *f);
    if (!f)
        return TC_ERR_NOMEM;
    f->grid_rows = grid_rows;
    f->grid_cols = grid_cols;
    f->servers = grid_rows * grid_cols;
    f->n_npus = f->servers * per_server;
    f->mzi = mzi;
    f->wavelengths = wavelengths;
    f->fibers = fibers;
    f->server_of = malloc((size_t)f->n_npus * sizeof *f->server_of);
    f->tile_of = malloc((size_t)f->n_npus * sizeof *f->tile_of);
    if (!f->server_of || !f->tile_of) {
        tc_photonic_fabric_free(f);
        return TC_ERR_NOMEM;
    }
    for (int v = 0; v < f->n_npus; v++)
        f->server_of[v] = v / per_server;
    if (place_tiles(f, 0, 0)) {
        tc_photonic_fabric_free(f);
        return TC_ERR_NOMEM;
    }
    if (mzi > 0 && (mzi < f->tile_rows || mzi < f->tile_cols)) {
        tc_photonic_fabric_free(f);
        return TC_ERR_INVALID;
    }
    *out = f;
    return TC_OK;
}

void tc_photonic_tile_rect(const tc_ph_fabric *fab, int v, int *y0, int *x0, int *y1, int *x1)
{
    const int s = fab->server_of[v], t = fab->tile_of[v], M = fab->mzi;
    const int tr = t / fab->tile_cols, tc = t % fab->tile_cols;
    const int oy = (s / fab->grid_cols) * M, ox = (s % fab->grid_cols) * M;
    *y0 = oy + (int)((long long)tr * M / fab->tile_rows);
    *y1 = oy + (int)((long long)(tr + 1) * M / fab->tile_rows);
    *x0 = ox + (int)((long long)tc * M / fab->tile_cols);
    *x1 = ox + (int)((long long)(tc + 1) * M / fab->tile_cols);
}

void tc_photonic_routes_free(tc_ph_routes *r)
{
    if (!r)
        return;
    free(r->circuits);
    free(r->ints);
    free(r);
}

tc_status ph_routes_ints(tc_ph_routes *r, int n, int **at)
{
    if ((long long)r->n_ints + n > 0x7fffffff)
        return TC_ERR_LIMIT;
    tc_status st = tc_grow((void **)&r->ints, &r->cap_ints, r->n_ints + n, sizeof *r->ints);
    if (st)
        return st;
    *at = r->ints + r->n_ints;
    r->n_ints += n;
    return TC_OK;
}

tc_status ph_routes_circuit(tc_ph_routes *r, tc_ph_circuit **at)
{
    tc_status st = tc_grow((void **)&r->circuits, &r->cap_circuits, r->n_circuits + 1, sizeof *r->circuits);
    if (st)
        return st;
    *at = &r->circuits[r->n_circuits++];
    memset(*at, 0, sizeof **at);
    return TC_OK;
}

void tc_photonic_route_summary_free(tc_ph_route_summary *s)
{
    if (!s)
        return;
    free(s->fib);
    s->fib = NULL;
    s->n_fib = 0;
}

/* The edge index (tc_photonic_grid_edges order) between grid neighbours a and b, -1 when they are not neighbours. */
static int grid_edge(const tc_ph_fabric *f, int a, int b)
{
    const int R = f->grid_rows, C = f->grid_cols;
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    if (b == a + 1 && a / C == b / C)
        return (a / C) * (C - 1) + a % C;
    if (b == a + C)
        return R * (C - 1) + a;
    return -1;
}

static int cmp_pair(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

tc_status tc_photonic_grid_edges(int rows, int cols, int **u, int **v, int *n)
{
    const int m = rows * (cols - 1) + (rows - 1) * cols;
    int k = 0;
    *u = malloc((size_t)(m > 0 ? m : 1) * sizeof **u);
    *v = malloc((size_t)(m > 0 ? m : 1) * sizeof **v);
    if (!*u || !*v) {
        free(*u), free(*v);
        *u = *v = NULL;
        return TC_ERR_NOMEM;
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c + 1 < cols; c++, k++)
            (*u)[k] = r * cols + c, (*v)[k] = r * cols + c + 1;
    for (int r = 0; r + 1 < rows; r++)
        for (int c = 0; c < cols; c++, k++)
            (*u)[k] = r * cols + c, (*v)[k] = (r + 1) * cols + c;
    *n = m;
    return TC_OK;
}

/*
 * Without a mesh: a wavelength per circuit and a fiber per server hop.  Per edge, per fiber, a mask of the
 * wavelengths in use.  A circuit takes the wavelength needing the fewest new fibers (lowest on ties).
 */
static tc_status assign_fibers(tc_ctx *ctx, const tc_ph_fabric *f, const char *what, const int *src,
                               const int *dst, int n, const tc_ph_fiber_out *fo, const int *edge_u,
                               const int *edge_v, int n_edges, tc_ph_routes *r, int *used)
{
    const int W = f->wavelengths;
    int *nf = calloc((size_t)(n_edges > 0 ? n_edges : 1), sizeof *nf), *capf = calloc((size_t)(n_edges > 0 ? n_edges : 1), sizeof *capf);
    uint64_t **occ = calloc((size_t)(n_edges > 0 ? n_edges : 1), sizeof *occ);
    tc_status st = TC_OK;
    if (!nf || !capf || !occ) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const int a = fo->path_off[i], b = fo->path_off[i + 1], hops = b - a - 1;
        int best = -1, best_new = 0;
        for (int l = 0; l < W; l++) {
            int new_f = 0, ok = 1;
            for (int k = a; k + 1 < b && ok; k++) {
                int e = fo->edge_of[k], free_f = 0;
                for (int q = 0; q < nf[e] && !free_f; q++)
                    free_f = !(occ[e][q] >> l & 1);
                if (!free_f) {
                    new_f++;
                    if (f->fibers > 0 && nf[e] >= f->fibers)
                        ok = 0;
                }
            }
            if (ok && (best < 0 || new_f < best_new)) {
                best = l;
                best_new = new_f;
            }
        }
        if (best < 0) {
            int e = -1;
            for (int k = a; k + 1 < b && e < 0; k++) {
                int e2 = fo->edge_of[k], full = 1;
                for (int q = 0; q < nf[e2] && full; q++)
                    full = occ[e2][q] == (W == 64 ? UINT64_MAX : (((uint64_t)1 << W) - 1));
                if (full)
                    e = e2;
            }
            if (e < 0)
                e = fo->edge_of[a];
            st = tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                          "%s: circuit %d->%d: no wavelength free on a fiber of every hop (servers %d and %d: %d "
                          "fibers x %d wavelength%s in use)",
                          what, src[i], dst[i], edge_u[e], edge_v[e], f->fibers, W, W == 1 ? "" : "s");
            goto done;
        }
        tc_ph_circuit *c;
        int *ints;
        if ((st = ph_routes_circuit(r, &c)) || (st = ph_routes_ints(r, (hops + 1) + hops, &ints)))
            goto done;
        c = &r->circuits[r->n_circuits - 1];
        c->src = src[i];
        c->dst = dst[i];
        c->wavelength = best;
        c->srv_off = (int)(ints - r->ints);
        c->n_srv = hops + 1;
        c->fib_off = c->srv_off + hops + 1;
        c->mzi_off = c->fib_off + hops;
        c->n_mzi = 0;
        for (int k = a; k < b; k++)
            ints[k - a] = fo->path[k];
        for (int k = a; k + 1 < b; k++) {
            int e = fo->edge_of[k], q = 0;
            while (q < nf[e] && (occ[e][q] >> best & 1))
                q++;
            if (q == nf[e]) {
                if (tc_grow((void **)&occ[e], &capf[e], nf[e] + 1, sizeof *occ[e])) {
                    st = TC_ERR_NOMEM;
                    goto done;
                }
                occ[e][nf[e]++] = 0;
            }
            occ[e][q] |= (uint64_t)1 << best;
            ints[hops + 1 + (k - a)] = q;
        }
    }
    for (int e = 0; e < n_edges; e++)
        used[e] = nf[e];
done:
    if (occ)
        for (int e = 0; e < n_edges; e++)
            free(occ[e]);
    free(occ);
    free(nf);
    free(capf);
    return st;
}

/* Longest circuits first (Manhattan distance between the tiles' corners), ties by index; qsort_r context:
 * the requests. */
static int by_length(const void *a, const void *b, void *ctx)
{
    const tc_ph_mzi_req *req = ctx, *x = &req[*(const int *)a], *y = &req[*(const int *)b];
    const int lx = abs(x->sy0 - x->dy0) + abs(x->sx0 - x->dx0), ly = abs(y->sy0 - y->dy0) + abs(y->sx0 - y->dx0);
    return lx != ly ? (lx > ly ? -1 : 1) : *(const int *)a - *(const int *)b;
}

/*
 * Alg. 3 is greedy: a fabric used to its last slot can fail in one order and not in another.  Try the
 * given order, then the longest circuits first, then the reverse (quietly); when all fail, the given
 * order runs again to report its error.  The routes come back in the given order.
 */
static tc_status route_orders(tc_ctx *ctx, const tc_ph_fabric *f, const tc_ph_mzi_req *req, int n,
                              const char *what, tc_ph_routes **out)
{
    tc_ctx quiet = *ctx;
    quiet.sink = NULL;
    tc_status st = tc_photonic_mzi_route(&quiet, f, req, n, what, out);
    if (st != TC_ERR_INVALID)
        return st == TC_OK ? st : tc_photonic_mzi_route(ctx, f, req, n, what, out);
    int *perm = malloc((size_t)n * sizeof *perm);
    tc_ph_mzi_req *q = malloc((size_t)n * sizeof *q);
    tc_ph_circuit *c = malloc((size_t)n * sizeof *c);
    for (int attempt = 0; perm && q && c && n > 1 && attempt < 2 && st; attempt++) {
        for (int i = 0; i < n; i++)
            perm[i] = attempt ? n - 1 - i : i;
        if (!attempt)
            qsort_r(perm, (size_t)n, sizeof *perm, by_length, (void *)req);
        for (int i = 0; i < n; i++)
            q[i] = req[perm[i]];
        tc_ph_routes *r = NULL;
        if (tc_photonic_mzi_route(&quiet, f, q, n, what, &r) == TC_OK) {
            for (int i = 0; i < n; i++)
                c[perm[i]] = r->circuits[i];
            memcpy(r->circuits, c, (size_t)n * sizeof *c);
            *out = r;
            st = TC_OK;
        }
    }
    free(perm), free(q), free(c);
    return st ? tc_photonic_mzi_route(ctx, f, req, n, what, out) : st;
}

tc_status tc_photonic_route(tc_ctx *ctx, const tc_ph_fabric *f, const int *src, const int *dst, int n,
                            double time_limit, const char *what, tc_ph_routes **out, tc_ph_route_summary *sum)
{
    tc_status st = TC_OK;
    int *ssrc = malloc((size_t)(n > 0 ? n : 1) * sizeof *ssrc), *sdst = malloc((size_t)(n > 0 ? n : 1) * sizeof *sdst);
    int *eu = NULL, *ev = NULL, n_edges = 0, *used = NULL;
    tc_ph_fiber_out *fo = NULL;
    tc_ph_mzi_req *req = NULL;
    tc_ph_routes *r = NULL;
    memset(sum, 0, sizeof *sum);
    if (!ssrc || !sdst)
        goto nomem;
    if ((st = tc_photonic_check_txrx(ctx, f, src, dst, n, NULL, NULL, what)))
        goto done;
    for (int i = 0; i < n; i++) {
        ssrc[i] = f->server_of[src[i]];
        sdst[i] = f->server_of[dst[i]];
    }
    if (!(r = calloc(1, sizeof *r)))
        goto nomem;
    sum->method = TC_PH_FIBER_NONE;
    if (f->servers > 1) {
        if ((st = tc_photonic_grid_edges(f->grid_rows, f->grid_cols, &eu, &ev, &n_edges)))
            goto nomem;
        tc_ph_fiber_in fi = {.n_servers = f->servers, .n_edges = n_edges, .edge_u = eu, .edge_v = ev,
                             .n_circ = n, .src = ssrc, .dst = sdst, .time_limit = time_limit, .what = what,
                             .circ_src = src, .circ_dst = dst};
        fi.fibers = f->fibers;
        fi.per_fiber = f->wavelengths;
        if ((st = tc_photonic_fiber_route(ctx, &fi, &fo)))
            goto done;
        sum->method = fo->method;
        sum->z = fo->z;
        sum->lp_bound = fo->lp_bound;
        sum->bound = fo->bound;
        if (!(used = calloc((size_t)(n_edges > 0 ? n_edges : 1), sizeof *used)))
            goto nomem;
    }
    if (f->mzi > 0) {
        if (!(req = calloc((size_t)(n > 0 ? n : 1), sizeof *req)))
            goto nomem;
        for (int i = 0; i < n; i++) {
            tc_ph_mzi_req *q = &req[i];
            q->src = src[i];
            q->dst = dst[i];
            tc_photonic_tile_rect(f, src[i], &q->sy0, &q->sx0, &q->sy1, &q->sx1);
            tc_photonic_tile_rect(f, dst[i], &q->dy0, &q->dx0, &q->dy1, &q->dx1);
            if (fo) {
                q->servers = fo->path + fo->path_off[i];
                q->n_servers = fo->path_off[i + 1] - fo->path_off[i];
            }
        }
        tc_photonic_routes_free(r);
        r = NULL;
        if ((st = route_orders(ctx, f, req, n, what, &r)))
            goto done;
        if (fo) { /* fibers in use: the distinct fibers crossed per server pair */
            const int F = f->fibers > 0 ? f->fibers : f->mzi;
            unsigned char *seen = calloc((size_t)n_edges * F, 1);
            if (!seen)
                goto nomem;
            for (int i = 0; i < r->n_circuits; i++) {
                const tc_ph_circuit *c = &r->circuits[i];
                for (int k = 0; k + 1 < c->n_srv; k++) {
                    int e = grid_edge(f, r->ints[c->srv_off + k], r->ints[c->srv_off + k + 1]);
                    if (!seen[(size_t)e * F + r->ints[c->fib_off + k]]++)
                        used[e]++;
                }
            }
            free(seen);
        }
    } else if (fo) {
        if ((st = assign_fibers(ctx, f, what, src, dst, n, fo, eu, ev, n_edges, r, used)))
            goto done;
    } else {
        for (int i = 0; i < n; i++) {
            tc_ph_circuit *c;
            int *ints;
            if (ph_routes_circuit(r, &c) || ph_routes_ints(r, 1, &ints))
                goto nomem;
            c = &r->circuits[r->n_circuits - 1];
            c->src = src[i];
            c->dst = dst[i];
            c->wavelength = -1;
            c->srv_off = (int)(ints - r->ints);
            c->n_srv = 1;
            c->fib_off = c->srv_off + 1;
            c->mzi_off = c->srv_off + 1;
            ints[0] = f->server_of[src[i]];
        }
    }
    if (used) {
        for (int e = 0; e < n_edges; e++)
            if (used[e] > 0)
                sum->n_fib++;
        if (sum->n_fib && !(sum->fib = malloc((size_t)sum->n_fib * 3 * sizeof *sum->fib)))
            goto nomem;
        int k = 0;
        for (int e = 0; e < n_edges; e++)
            if (used[e] > 0) {
                sum->fib[3 * k] = eu[e];
                sum->fib[3 * k + 1] = ev[e];
                sum->fib[3 * k + 2] = used[e];
                sum->fibers += used[e];
                k++;
            }
        if (sum->n_fib > 1)
            qsort(sum->fib, (size_t)sum->n_fib, 3 * sizeof *sum->fib, cmp_pair);
    }
    *out = r;
    r = NULL;
    goto done;
nomem:
    st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
done:
    if (st)
        tc_photonic_route_summary_free(sum);
    tc_photonic_routes_free(r);
    tc_photonic_fiber_out_free(fo);
    free(req);
    free(ssrc);
    free(sdst);
    free(eu);
    free(ev);
    free(used);
    return st;
}

tc_status tc_photonic_check_txrx(tc_ctx *ctx, const tc_ph_fabric *f, const int *src, const int *dst, int n,
                                 const char *file, const int *lines, const char *what)
{
    int *out_n = calloc((size_t)f->n_npus + 1, sizeof *out_n), *in_n = calloc((size_t)f->n_npus + 1, sizeof *in_n);
    tc_status st = TC_OK;
    char pre[160] = "";
    if (!out_n || !in_n) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
        goto done;
    }
    if (what && !lines)
        snprintf(pre, sizeof pre, "%s: ", what);
    for (int i = 0; i < n && !st; i++) {
        const int line = lines ? lines[i] : 0;
        const char *fl = lines ? file : NULL;
        if (src[i] < 0 || src[i] >= f->n_npus || dst[i] < 0 || dst[i] >= f->n_npus)
            st = tc_error(ctx, TC_ERR_INVALID, fl, line, "%scircuit %d->%d: npu out of range (topology has %d npus)", pre,
                          src[i], dst[i], f->n_npus);
        else if (src[i] == dst[i])
            st = tc_error(ctx, TC_ERR_INVALID, fl, line, "%scircuit %d->%d joins an npu to itself", pre, src[i], dst[i]);
        else if (f->tx > 0 && ++out_n[src[i]] > f->tx)
            st = tc_error(ctx, TC_ERR_INVALID, fl, line,
                          "%scircuit %d->%d: npu %d has %d transmitter%s and this is its circuit number %d", pre, src[i],
                          dst[i], src[i], f->tx, f->tx == 1 ? "" : "s", out_n[src[i]]);
        else if (f->rx > 0 && ++in_n[dst[i]] > f->rx)
            st = tc_error(ctx, TC_ERR_INVALID, fl, line,
                          "%scircuit %d->%d: npu %d has %d receiver%s and this is its circuit number %d", pre, src[i],
                          dst[i], dst[i], f->rx, f->rx == 1 ? "" : "s", in_n[dst[i]]);
    }
done:
    free(out_n);
    free(in_n);
    return st;
}

tc_status tc_photonic_routes_attach(tc_sched_photonic *p, tc_ph_round *r, const tc_ph_routes *rt,
                                    const tc_ph_route_summary *sum)
{
    const long long ni = (long long)p->n_ints + rt->n_ints + 3LL * sum->n_fib;
    if (ni > 0x7fffffff || (long long)p->n_circuits + rt->n_circuits > 0x7fffffff)
        return TC_ERR_LIMIT;
    int *ints = realloc(p->ints, (size_t)(ni > 0 ? ni : 1) * sizeof *ints);
    if (!ints)
        return TC_ERR_NOMEM;
    p->ints = ints;
    tc_ph_circuit *c = realloc(p->circuits, ((size_t)p->n_circuits + rt->n_circuits + 1) * sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    p->circuits = c;
    const int base = p->n_ints;
    if (rt->n_ints)
        memcpy(p->ints + base, rt->ints, (size_t)rt->n_ints * sizeof *ints);
    p->n_ints += rt->n_ints;
    r->fib_off = p->n_ints;
    r->n_fib = sum->n_fib;
    if (sum->n_fib)
        memcpy(p->ints + p->n_ints, sum->fib, (size_t)sum->n_fib * 3 * sizeof *ints);
    p->n_ints += 3 * sum->n_fib;
    r->circ_off = p->n_circuits;
    r->n_circ = rt->n_circuits;
    for (int k = 0; k < rt->n_circuits; k++) {
        tc_ph_circuit q = rt->circuits[k];
        q.srv_off += base;
        q.fib_off += base;
        q.mzi_off += base;
        p->circuits[p->n_circuits++] = q;
    }
    r->fiber_method = sum->method;
    r->fiber_z = sum->z;
    r->fiber_lp = sum->lp_bound;
    r->fibers = sum->fibers;
    return TC_OK;
}

void ph_plan_fabric(tc_sched_photonic *p, const tc_ph_fabric *fab)
{
    p->tx = fab->tx;
    p->rx = fab->rx;
    p->wavelengths = fab->wavelengths;
    p->mzi = fab->mzi;
    p->grid_rows = fab->grid_rows;
    p->grid_cols = fab->grid_cols;
    p->fibers = fab->fibers;
}

tc_status tc_photonic_circuit_plan(const tc_ph_fabric *fab, const tc_ph_routes *rt, const tc_ph_route_summary *sum,
                                   tc_sched_photonic **out)
{
    tc_sched_photonic *p = calloc(1, sizeof *p);
    if (!p || !(p->rounds = calloc(1, sizeof *p->rounds))) {
        free(p);
        return TC_ERR_NOMEM;
    }
    ph_plan_fabric(p, fab);
    p->n_rounds = 1;
    tc_ph_round *r = &p->rounds[0];
    r->n_sub = 1;
    r->kind = TC_PH_OWN;
    r->reconfig = 1;
    r->n_pairs = rt->n_circuits;
    r->pair_off = -1;
    p->n_reconfigs = 1;
    tc_status st = tc_photonic_routes_attach(p, r, rt, sum);
    if (st) {
        tc_sched_photonic_free(p);
        return st;
    }
    *out = p;
    return TC_OK;
}
