/*
 * mzi: Alg. 3 of the photonic paper (App. B), circuits through the MZI meshes of the servers without two
 * circuits of one wavelength on a waveguide or a fiber.
 *
 * Accepts: a fabric (servers on a grid, an mzi x mzi mesh each, W wavelengths, F fibers per neighbouring
 *   server pair or as many as needed) and circuit requests: source and destination rectangles (an NPU's
 *   tile) and optionally the server path Alg. 4 chose.
 * Returns: per circuit its wavelength, the MZIs it crosses, its servers and its fiber per server hop.
 * Graph: one plane of (grid_rows mzi) x (grid_cols mzi) MZIs; waveguides join 4-neighbours inside a
 *   server; fiber f of two neighbouring servers joins the facing border MZIs at offset
 *   floor((2f + 1) mzi / 2F) along their shared side.  Every waveguide and fiber keeps a bit mask of the
 *   wavelengths in use and a count of circuits.
 * Per circuit (the paper's loop): a shortest path by A* from every MZI of the source tile to the nearest
 *   of the destination tile, over states (MZI, direction entered) so that a bend costs TURN extra (a
 *   staircase path could not be crossed by later circuits: crossing at an MZI needs a straight run);
 *   edge weight 1 + circuits already on the edge (+ mzi when all its wavelengths are taken, when it is
 *   another pending circuit's single-MZI port, or for a new fiber when fibers are unlimited), times its
 *   penalty; heuristic the Manhattan distance plus TURN per bend still needed (consistent: every weight
 *   >= 1).  If a wavelength is free on every edge of the path the lowest is taken; otherwise the edges of
 *   the path that carry circuits are penalized (x PENALTY) and the search repeats, TRIALS times.  Then,
 *   instead of giving up, each wavelength in turn is searched with its busy edges removed: a circuit fails
 *   only when no path is free on any wavelength.  Penalties last for one circuit.
 * Cost: an A* search is O(explored log explored); on a 256 x 256 mesh (65,536 MZIs) with 1 wavelength,
 *   256 random border-to-border circuits route in about 0.15 s (bench-photonic).
 * Limits: at most 64 wavelengths (one bit each); circuits are routed in request order (greedy), so a
 *   fabric used to its last fiber slot can fail where another order would succeed.
 * Trace (one 4x4 server, tiles 2x2: NPU 0 on rows 0-1 cols 0-1, NPU 3 on rows 2-3 cols 2-3, W = 1; three
 *   circuits 0->3): the first takes (1,1) (1,2) (2,2) on wavelength 0; the second finds its cheapest path
 *   busy, so goes (1,1) (2,1) (2,2); the third, both of those busy, (0,1) (0,2) (0,3) (1,3) (2,3).
 */
#include "photonic_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIALS 3
#define PENALTY 4.0
#define TURN 0.5

typedef struct plane {
    const tc_ph_fabric *fab;
    int M, H, W, F;        /* mesh side, plane height and width, fibers per pair */
    long long N, E;        /* MZIs, edges */
    int *fiber_at;         /* per border offset: fiber index or -1 */
    uint64_t *mask;        /* per edge: wavelengths in use */
    int *count;            /* per edge: circuits */
    float *pen;            /* per edge: this circuit's penalty */
    int *pen_list, n_pen;
    /* search state */
    double *g;             /* per state (MZI x 5 entry directions) */
    unsigned char *from;   /* per state: the parent state's entry direction */
    unsigned *stamp;       /* state's g/from belong to search `gen` */
    unsigned char *closed; /* closed in search `gen` (stamp equal) */
    unsigned gen;
    struct hnode { double f, g; long long v; } *heap;
    long long nheap, capheap;
    unsigned short *ends;  /* per MZI: single-MZI endpoints of circuits not routed yet (ports to keep free) */
    int *srv_pos;          /* per server: position on the current circuit's server path, -1 off it */
    int restrict_srv;
    int *path;             /* last path: nodes */
    int path_len, cap_path;
} plane;

static int server_of_node(const plane *p, long long v)
{
    int y = (int)(v / p->W), x = (int)(v % p->W);
    return (y / p->M) * p->fab->grid_cols + x / p->M;
}

/* Edge between node v and its neighbour in direction d (0 right, 1 down, 2 left, 3 up); -1 none. */
static long long edge_to(const plane *p, long long v, int d, long long *w)
{
    int y = (int)(v / p->W), x = (int)(v % p->W);
    int ny = y, nx = x;
    long long e;
    switch (d) {
    case 0: if (x + 1 >= p->W) return -1; nx = x + 1; e = (long long)y * (p->W - 1) + x; break;
    case 2: if (x < 1) return -1; nx = x - 1; e = (long long)y * (p->W - 1) + nx; break;
    case 1: if (y + 1 >= p->H) return -1; ny = y + 1; e = (long long)p->H * (p->W - 1) + (long long)y * p->W + x; break;
    default: if (y < 1) return -1; ny = y - 1; e = (long long)p->H * (p->W - 1) + (long long)ny * p->W + x; break;
    }
    /* across a server border only at a fiber's offset */
    if (nx / p->M != x / p->M && p->fiber_at[y % p->M] < 0)
        return -1;
    if (ny / p->M != y / p->M && p->fiber_at[x % p->M] < 0)
        return -1;
    *w = (long long)ny * p->W + nx;
    return e;
}

/* Fiber index of an edge between nodes v and w of different servers. */
static int fiber_of(const plane *p, long long v, long long w)
{
    int y = (int)(v / p->W), x = (int)(v % p->W), wy = (int)(w / p->W);
    return wy != y ? p->fiber_at[x % p->M] : p->fiber_at[y % p->M];
}

static int is_fiber(const plane *p, long long v, long long w)
{
    return server_of_node(p, v) != server_of_node(p, w);
}

static void heap_push(plane *p, double f, double g, long long v)
{
    long long i = p->nheap++;
    while (i > 0) {
        long long parent = (i - 1) / 2;
        struct hnode *q = &p->heap[parent];
        if (q->f < f || (q->f == f && q->g >= g))
            break;
        p->heap[i] = *q;
        i = parent;
    }
    p->heap[i] = (struct hnode){f, g, v};
}

static struct hnode heap_pop(plane *p)
{
    struct hnode top = p->heap[0], last = p->heap[--p->nheap];
    long long i = 0, n = p->nheap;
    for (;;) {
        long long c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && (p->heap[c + 1].f < p->heap[c].f ||
                          (p->heap[c + 1].f == p->heap[c].f && p->heap[c + 1].g > p->heap[c].g)))
            c++;
        if (last.f < p->heap[c].f || (last.f == p->heap[c].f && last.g >= p->heap[c].g))
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    p->heap[i] = last;
    return top;
}

/* Lower bound on the rest of a path from (y, x), entered in direction din (4: a source MZI), to the
 * destination rectangle: one step per row and column to go, and TURN per bend it must still make
 * (consistent: a step changes it by at most its own cost). */
static double rect_dist(const tc_ph_mzi_req *r, int y, int x, int din)
{
    const int dy = y < r->dy0 ? r->dy0 - y : y >= r->dy1 ? y - r->dy1 + 1 : 0;
    const int dx = x < r->dx0 ? r->dx0 - x : x >= r->dx1 ? x - r->dx1 + 1 : 0;
    const int need_v = dy ? (y < r->dy0 ? 1 : 3) : -1, need_h = dx ? (x < r->dx0 ? 0 : 2) : -1;
    int turns = 0;
    if (need_v >= 0 && need_h >= 0)
        turns = din == 4 || din == need_v || din == need_h ? 1 : 2;
    else if (need_v >= 0 || need_h >= 0) {
        const int need = need_v >= 0 ? need_v : need_h;
        turns = din == 4 || din == need ? 0 : din == (need + 2) % 4 ? 2 : 1;
    }
    return dy + dx + TURN * turns;
}

/*
 * A* from the source rectangle to the destination rectangle over states (MZI, direction it was entered
 * from; 4 = a source MZI), so that a bend costs TURN more than going straight: a staircase path could not
 * be crossed by later circuits (crossing at an MZI needs the other circuit to go straight through it),
 * straight runs can.  blocked >= 0: edges using that wavelength are impassable.  Edge weight: 1 +
 * circuits on the edge (x penalty), + mzi for another circuit's port or a new fiber.  Leaves the path in
 * p->path.  Returns 0 found, 1 none, TC_ERR_NOMEM.
 */
static const int DY[4] = {0, 1, 0, -1}, DX[4] = {1, 0, -1, 0};

static int heap_room(plane *p)
{
    if (p->nheap < p->capheap)
        return 0;
    long long c = p->capheap ? 2 * p->capheap : 1024;
    void *q = realloc(p->heap, (size_t)c * sizeof *p->heap);
    if (!q)
        return TC_ERR_NOMEM;
    p->heap = q;
    p->capheap = c;
    return 0;
}

static int search(plane *p, const tc_ph_mzi_req *r, int blocked)
{
    if (++p->gen == 0) { /* stamps wrapped: start over */
        memset(p->stamp, 0, (size_t)p->N * 5 * sizeof *p->stamp);
        p->gen = 1;
    }
    p->nheap = 0;
    for (int y = r->sy0; y < r->sy1; y++)
        for (int x = r->sx0; x < r->sx1; x++) {
            long long v = (long long)y * p->W + x, sv = v * 5 + 4;
            if (p->restrict_srv && p->srv_pos[server_of_node(p, v)] != 0)
                continue;
            if (heap_room(p))
                return TC_ERR_NOMEM;
            p->stamp[sv] = p->gen;
            p->closed[sv] = 0;
            p->g[sv] = 0;
            heap_push(p, rect_dist(r, y, x, 4), 0, sv);
        }
    long long found = -1;
    while (p->nheap > 0) {
        struct hnode h = heap_pop(p);
        const long long sv = h.v, v = sv / 5;
        const int din = (int)(sv % 5);
        if (p->closed[sv] || h.g > p->g[sv])
            continue;
        p->closed[sv] = 1;
        int y = (int)(v / p->W), x = (int)(v % p->W);
        if (y >= r->dy0 && y < r->dy1 && x >= r->dx0 && x < r->dx1) {
            found = sv;
            break;
        }
        const int vs = server_of_node(p, v);
        for (int d = 0; d < 4; d++) {
            if (din < 4 && d == (din + 2) % 4)
                continue; /* straight back */
            long long w;
            long long e = edge_to(p, v, d, &w);
            if (e < 0)
                continue;
            if (blocked >= 0 && (p->mask[e] >> blocked & 1))
                continue;
            const int ws = server_of_node(p, w);
            if (p->restrict_srv && (ws == vs ? p->srv_pos[ws] < 0 : p->srv_pos[ws] != p->srv_pos[vs] + 1))
                continue;
            double wt = 1.0 + p->count[e];
            if (p->count[e] >= p->fab->wavelengths && blocked < 0)
                wt += p->M; /* every wavelength may be taken: a detour is likely cheaper than the penalty loop */
            if (ws != vs && p->fab->fibers == 0 && p->count[e] == 0)
                wt += p->M; /* opening a new fiber */
            if (p->ends && p->ends[w] &&
                !(w == r->dy0 * (long long)p->W + r->dx0 && r->dy1 - r->dy0 == 1 && r->dx1 - r->dx0 == 1))
                wt += p->M; /* another circuit's port: pass it only when there is no other way */
            wt *= p->pen[e];
            if (din < 4 && d != din)
                wt += TURN;
            const double ng = h.g + wt;
            const long long sw = w * 5 + d;
            if (p->stamp[sw] == p->gen && (p->closed[sw] || p->g[sw] <= ng))
                continue;
            if (p->stamp[sw] != p->gen) {
                p->stamp[sw] = p->gen;
                p->closed[sw] = 0;
            }
            p->g[sw] = ng;
            p->from[sw] = (unsigned char)din; /* the parent's state: (w - step d, din) */
            if (heap_room(p))
                return TC_ERR_NOMEM;
            heap_push(p, ng + rect_dist(r, (int)(w / p->W), (int)(w % p->W), d), ng, sw);
        }
    }
    if (found < 0)
        return 1;
    int n = 0;
    for (long long sv = found; sv % 5 != 4; n++) {
        const int d = (int)(sv % 5);
        long long v = sv / 5 - ((long long)DY[d] * p->W + DX[d]);
        sv = v * 5 + p->from[sv];
    }
    if (tc_grow((void **)&p->path, &p->cap_path, n + 1, sizeof *p->path))
        return TC_ERR_NOMEM;
    p->path_len = n + 1;
    long long sv = found;
    for (int k = n; k >= 0; k--) {
        p->path[k] = (int)(sv / 5);
        if (k > 0) {
            const int d = (int)(sv % 5);
            long long v = sv / 5 - ((long long)DY[d] * p->W + DX[d]);
            sv = v * 5 + p->from[sv];
        }
    }
    return 0;
}

/* Edge between consecutive path nodes a and b. */
static long long edge_of(const plane *p, long long a, long long b)
{
    long long w;
    for (int d = 0; d < 4; d++) {
        long long e = edge_to(p, a, d, &w);
        if (e >= 0 && w == b)
            return e;
    }
    return -1;
}

/* Lowest wavelength free on every edge of the last path, -1 none. */
static int free_wavelength(const plane *p)
{
    uint64_t used = 0;
    for (int k = 0; k + 1 < p->path_len; k++)
        used |= p->mask[edge_of(p, p->path[k], p->path[k + 1])];
    for (int l = 0; l < p->fab->wavelengths; l++)
        if (!(used >> l & 1))
            return l;
    return -1;
}

static void plane_free(plane *p)
{
    free(p->fiber_at);
    free(p->mask);
    free(p->count);
    free(p->pen);
    free(p->pen_list);
    free(p->g);
    free(p->from);
    free(p->stamp);
    free(p->closed);
    free(p->heap);
    free(p->srv_pos);
    free(p->ends);
    free(p->path);
}

/* Record the last path as circuit (src, dst) on wavelength l. */
static tc_status commit(plane *p, const tc_ph_mzi_req *r, int l, tc_ph_routes *out)
{
    tc_ph_circuit *c;
    tc_status st = ph_routes_circuit(out, &c);
    if (st)
        return st;
    c->src = r->src;
    c->dst = r->dst;
    c->wavelength = l;
    int n_srv = 1;
    for (int k = 0; k + 1 < p->path_len; k++)
        n_srv += is_fiber(p, p->path[k], p->path[k + 1]);
    int *ints;
    if ((st = ph_routes_ints(out, n_srv + (n_srv - 1) + p->path_len, &ints)))
        return st;
    /* ph_routes_ints may move out->circuits: look the circuit up again */
    c = &out->circuits[out->n_circuits - 1];
    c->srv_off = (int)(ints - out->ints);
    c->n_srv = n_srv;
    c->fib_off = c->srv_off + n_srv;
    c->mzi_off = c->fib_off + n_srv - 1;
    c->n_mzi = p->path_len;
    int s = 0;
    ints[s++] = server_of_node(p, p->path[0]);
    for (int k = 0; k + 1 < p->path_len; k++) {
        long long e = edge_of(p, p->path[k], p->path[k + 1]);
        p->mask[e] |= (uint64_t)1 << l;
        p->count[e]++;
        if (is_fiber(p, p->path[k], p->path[k + 1])) {
            ints[n_srv + s - 1] = fiber_of(p, p->path[k], p->path[k + 1]);
            ints[s++] = server_of_node(p, p->path[k + 1]);
        }
    }
    memcpy(ints + 2 * n_srv - 1, p->path, (size_t)p->path_len * sizeof *ints);
    return TC_OK;
}

tc_status tc_photonic_mzi_route(tc_ctx *ctx, const tc_ph_fabric *fab, const tc_ph_mzi_req *req, int n,
                                const char *what, tc_ph_routes **out)
{
    plane p;
    memset(&p, 0, sizeof p);
    p.fab = fab;
    p.M = fab->mzi;
    p.H = fab->grid_rows * fab->mzi;
    p.W = fab->grid_cols * fab->mzi;
    p.F = fab->fibers > 0 ? fab->fibers : fab->mzi;
    p.N = (long long)p.H * p.W;
    p.E = (long long)p.H * (p.W - 1) + (long long)(p.H - 1) * p.W;
    tc_status st = TC_OK;
    if (fab->mzi < 1 || fab->wavelengths < 1 || fab->wavelengths > 64 || p.F > p.M)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "MZI routing: bad fabric (mzi %d, %d wavelengths, %d fibers)",
                        fab->mzi, fab->wavelengths, fab->fibers);
    tc_ph_routes *r = calloc(1, sizeof *r);
    p.fiber_at = malloc((size_t)p.M * sizeof *p.fiber_at);
    p.mask = calloc((size_t)(p.E > 0 ? p.E : 1), sizeof *p.mask);
    p.count = calloc((size_t)(p.E > 0 ? p.E : 1), sizeof *p.count);
    p.pen = malloc((size_t)(p.E > 0 ? p.E : 1) * sizeof *p.pen);
    p.pen_list = malloc((size_t)(p.E > 0 ? p.E : 1) * sizeof *p.pen_list);
    p.g = malloc((size_t)p.N * 5 * sizeof *p.g);
    p.from = malloc((size_t)p.N * 5 * sizeof *p.from);
    p.stamp = calloc((size_t)p.N * 5, sizeof *p.stamp);
    p.closed = malloc((size_t)p.N * 5);
    p.srv_pos = malloc((size_t)fab->servers * sizeof *p.srv_pos);
    if (!r || !p.fiber_at || !p.mask || !p.count || !p.pen || !p.pen_list || !p.g || !p.from || !p.stamp ||
        !p.closed || !p.srv_pos) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "MZI routing: out of memory");
        goto done;
    }
    for (int k = 0; k < p.M; k++)
        p.fiber_at[k] = -1;
    for (int f = 0; f < p.F; f++)
        p.fiber_at[(int)((2LL * f + 1) * p.M / (2LL * p.F))] = f;
    for (long long e = 0; e < p.E; e++)
        p.pen[e] = 1;
    for (int s = 0; s < fab->servers; s++)
        p.srv_pos[s] = -1;
    /* single-MZI endpoints (ports): circuits avoid crossing each other's until they are routed */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            const tc_ph_mzi_req *q = &req[i];
            int y0 = k ? q->dy0 : q->sy0, y1 = k ? q->dy1 : q->sy1, x0 = k ? q->dx0 : q->sx0, x1 = k ? q->dx1 : q->sx1;
            if (y1 - y0 != 1 || x1 - x0 != 1 || y0 < 0 || y0 >= p.H || x0 < 0 || x0 >= p.W)
                continue;
            if (!p.ends && !(p.ends = calloc((size_t)p.N, sizeof *p.ends))) {
                st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "MZI routing: out of memory");
                goto done;
            }
            if (p.ends[(long long)y0 * p.W + x0] < 0xffff)
                p.ends[(long long)y0 * p.W + x0]++;
        }
    for (int i = 0; i < n; i++) {
        const tc_ph_mzi_req *q = &req[i];
        if (q->sy0 < 0 || q->sx0 < 0 || q->sy1 > p.H || q->sx1 > p.W || q->sy0 >= q->sy1 || q->sx0 >= q->sx1 ||
            q->dy0 < 0 || q->dx0 < 0 || q->dy1 > p.H || q->dx1 > p.W || q->dy0 >= q->dy1 || q->dx0 >= q->dx1) {
            st = tc_error(ctx, TC_ERR_INVALID, NULL, 0, "MZI routing: circuit %d: a tile outside the %dx%d plane", i,
                          p.H, p.W);
            goto done;
        }
        p.restrict_srv = q->servers && q->n_servers > 0;
        for (int k = 0; p.restrict_srv && k < q->n_servers; k++)
            p.srv_pos[q->servers[k]] = k;
        int l = -1, rc;
        for (int t = 0; t < TRIALS && l < 0; t++) {
            if ((rc = search(&p, q, -1)) < 0)
                goto nomem;
            if (rc)
                break; /* no path at all: the wavelength searches will say so */
            if ((l = free_wavelength(&p)) >= 0)
                break;
            for (int k = 0; k + 1 < p.path_len; k++) { /* penalize the edges that carry circuits */
                long long e = edge_of(&p, p.path[k], p.path[k + 1]);
                if (p.count[e] > 0) {
                    if (p.pen[e] == 1)
                        p.pen_list[p.n_pen++] = (int)e;
                    p.pen[e] *= (float)PENALTY;
                }
            }
        }
        for (int k = 0; k < p.n_pen; k++)
            p.pen[p.pen_list[k]] = 1;
        p.n_pen = 0;
        for (int w = 0; l < 0 && w < fab->wavelengths; w++) {
            if ((rc = search(&p, q, w)) < 0)
                goto nomem;
            if (rc == 0)
                l = w;
        }
        if (l < 0) {
            char name[64];
            if (q->src >= 0)
                snprintf(name, sizeof name, "circuit %d->%d", q->src, q->dst);
            else
                snprintf(name, sizeof name, "circuit %d", i);
            st = tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                          "%s%s%s: no free wavelength on any path through the %dx%d MZI mesh%s (%d wavelength%s)",
                          what ? what : "", what ? ": " : "", name, fab->mzi, fab->mzi,
                          fab->servers > 1 ? "es and fibers" : "", fab->wavelengths, fab->wavelengths == 1 ? "" : "s");
            goto done;
        }
        if ((st = commit(&p, q, l, r)))
            goto nomem;
        for (int k = 0; p.ends && k < 2; k++) { /* this circuit's ports are no longer pending */
            long long v = k ? (long long)q->dy0 * p.W + q->dx0 : (long long)q->sy0 * p.W + q->sx0;
            if ((k ? q->dy1 - q->dy0 : q->sy1 - q->sy0) == 1 && (k ? q->dx1 - q->dx0 : q->sx1 - q->sx0) == 1 && p.ends[v])
                p.ends[v]--;
        }
        for (int k = 0; p.restrict_srv && k < q->n_servers; k++)
            p.srv_pos[q->servers[k]] = -1;
    }
    *out = r;
    r = NULL;
    goto done;
nomem:
    st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "MZI routing: out of memory");
done:
    plane_free(&p);
    tc_photonic_routes_free(r);
    return st;
}
