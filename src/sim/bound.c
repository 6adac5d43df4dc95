/*
 * bound: lower bounds on a collective's time under the event model (include/tacos/sim.h, tc_sim_bound).
 *
 * Accepts: an indexed topology without switches and a schedule's shape (collective, ranks, chunks, chunk
 *   bytes, root); every collective.
 * Returns: the per-NPU link, aggregate, cut and latency bounds, the largest and which it is, and the TACOS
 *   §V-A ideal beside them.
 * Model: a link carries one chunk per c_l = alpha_l + beta_l * chunk bytes (integer picoseconds, as the
 *   simulator counts), so k chunks over a set of links need the least T with sum_l floor(T / c_l) >= k.
 *   Counts of chunks that must cross (each valid for any plan that moves whole chunks):
 *   - per NPU v (in / out): all-gather C-K / K; reduce-scatter K / C-K; all-reduce C / C (v needs a message
 *     of every chunk and its contribution to every chunk must leave); broadcast C at every non-root, C out
 *     of the root; reduce the mirror; gather C-K into the root, K out of the others; scatter the mirror;
 *     all-to-all (R-1)K each way.  (An all-reduce NPU need not receive 2(R-1)/R of the data: a leaf of a
 *     star receives the result only, so that classic figure is no bound for a single NPU.)
 *   - aggregate over every link: all-gather, broadcast: C(R-1) (every chunk reaches R-1 NPUs);
 *     reduce-scatter, reduce: C(R-1) (R-1 merges per chunk); all-reduce: 2C(R-1) (the one-way gossip
 *     minimum, 2R-2 messages per chunk); gather, scatter, all-to-all: the chunks' hop distances (up to 1024
 *     NPUs; one hop each above).
 *   - cut S (s NPUs) into / out of S: all-gather K(R-s) / Ks; reduce-scatter Ks / K(R-s); all-reduce C / C;
 *     broadcast C into S when the root is outside, else out; reduce the mirror; gather K(R-s) into S when
 *     the root is inside, else Ks out; scatter the mirror; all-to-all Ks(R-s) each way.  Sets: each server
 *     (<nodes>, <npu node>), the lower half of each grid dimension (tc_topo_grid_dims), and the partition
 *     of the minimum cut by bandwidth (igraph_mincut, max-flow based; up to 256 NPUs).  All-to-all, gather
 *     and scatter also over the links between servers together, each chunk crossing as many as its
 *     servers are hops apart in the graph of servers (node_hops).
 *   - latency: store and forward, the cheapest sum of c_l from a source to a destination that must hear
 *     from it, over the farthest such pair (exact up to 1024 NPUs, else from 32 spread sources: a pair's
 *     distance is a bound either way).
 * Link model te-ccl (tc_link_times): c_l is the hold time and a link's j-th chunk arrives no sooner than
 *   r_l + j c_l + lat_l (r_l: when it can first start), i.e. link_bound_lost with lost = r_l + lat_l - c_l,
 *   shifted so that none is negative (model_link_bound); distances sum lat_l.
 * Cost: O(n (n + m) log n) for distances up to 1024 NPUs, O(32 m log n) above; O(n m) per cut set.
 * Trace, two 8-GPU chassis joined by one 12.5 GB/s link each way, 1 GB all-gather (16 chunks of 62.5 MB):
 *   node 1 must take in the 8 chunks owned by node 0 over its one in-link: 8 (1.3 us + 5 ms) = 40.01 ms,
 *   the binding cut bound.
 */
#include "sim_int.h"

#include "tacos/topo.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_NPUS 1024
#define MINCUT_NPUS 256

const char *tc_bound_kind_name(tc_bound_kind k)
{
    switch (k) {
    case TC_BOUND_LINK: return "link";
    case TC_BOUND_AGGREGATE: return "aggregate";
    case TC_BOUND_CUT: return "cut";
    case TC_BOUND_LATENCY: return "latency";
    default: return "none";
    }
}

const char *tc_bound_describe(const tc_bound *b, char *buf, size_t n)
{
    switch (b->binding) {
    case TC_BOUND_LINK:
        snprintf(buf, n, "link: npu %d %s", b->link_npu, b->link_out ? "out-links" : "in-links");
        break;
    case TC_BOUND_AGGREGATE: snprintf(buf, n, "aggregate: every link"); break;
    case TC_BOUND_CUT: snprintf(buf, n, "cut: %s", b->cut_desc); break;
    case TC_BOUND_LATENCY: snprintf(buf, n, "latency: farthest pair, store and forward"); break;
    default: snprintf(buf, n, "none"); break;
    }
    return buf;
}

/* The least T (fs) with sum over links lk[0..deg) of floor(T / occ[l]) >= need; SIM_T_MAX when beyond. */
static simt link_bound(const simt *occ, const int *lk, int deg, int64_t need)
{
    if (need <= 0)
        return 0;
    simt cmin = -1;
    for (int k = 0; k < deg; k++)
        if (cmin < 0 || occ[lk[k]] < cmin)
            cmin = occ[lk[k]];
    if (cmin < 0)
        return SIM_T_MAX; /* no link: cannot be done (the reachability checks report it) */
    if (cmin == 0)
        return 0;
    simt lo = 0, hi = need > SIM_T_MAX / cmin ? SIM_T_MAX : cmin * need;
    while (lo < hi) {
        const simt mid = lo + (hi - lo) / 2;
        int64_t got = 0;
        for (int k = 0; k < deg && got < need; k++)
            got += occ[lk[k]] ? mid / occ[lk[k]] : need;
        if (got >= need)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Switch vertices hold nothing at the start: an NPU's in-link from a switch carries nothing before a chunk
 * has reached the switch, one occupancy of its fastest in-link at least.  The least T with
 * sum over links of floor((T - r_l) / occ_l) >= need, r_l that delay (0 from an NPU).
 */
typedef struct bctx bctx;
static simt switch_link_bound(const bctx *b, const int *lk, int deg, int64_t need);

/* The shape of the collective the bounds are for. */
typedef struct shape {
    tc_coll coll;
    int R, C, K, root;  /* K: chunks per rank (all-to-all: per rank pair) */
} shape;

int64_t tc_bound_npu_need(tc_coll coll, int64_t R, int64_t C, int64_t K, int root_rank, int v, int dir)
{
    const int root = v == root_rank;
    switch (coll) {
    case TC_COLL_ALLGATHER: return dir ? K : C - K;
    case TC_COLL_REDUCESCATTER: return dir ? C - K : K;
    case TC_COLL_ALLREDUCE: return C;
    case TC_COLL_BROADCAST: return dir ? (root ? C : 0) : (root ? 0 : C);
    case TC_COLL_REDUCE: return dir ? (root ? 0 : C) : (root ? C : 0);
    case TC_COLL_GATHER: return dir ? (root ? 0 : K) : (root ? C - K : 0);
    case TC_COLL_SCATTER: return dir ? (root ? C - K : 0) : (root ? 0 : K);
    case TC_COLL_ALLTOALL: return (R - 1) * K;
    default: return 0;
    }
}

/* Chunks NPU v must receive (dir 0) or send (dir 1). */
static int64_t npu_need(const shape *h, int v, int dir)
{
    return tc_bound_npu_need(h->coll, h->R, h->C, h->K, h->root, v, dir);
}

/* Chunks that must enter (dir 0) or leave (dir 1) a set of s NPUs, root_in: the root is inside. */
static int64_t cut_need(const shape *h, int64_t s, int root_in, int dir)
{
    const int64_t R = h->R, C = h->C, K = h->K;
    switch (h->coll) {
    case TC_COLL_ALLGATHER: return dir ? K * s : K * (R - s);
    case TC_COLL_REDUCESCATTER: return dir ? K * (R - s) : K * s;
    case TC_COLL_ALLREDUCE: return C;
    case TC_COLL_BROADCAST: return (root_in ? dir == 1 : dir == 0) ? C : 0;
    case TC_COLL_REDUCE: return (root_in ? dir == 0 : dir == 1) ? C : 0;
    case TC_COLL_GATHER: return root_in ? (dir ? 0 : K * (R - s)) : (dir ? K * s : 0);
    case TC_COLL_SCATTER: return root_in ? (dir ? K * (R - s) : 0) : (dir ? 0 : K * s);
    case TC_COLL_ALLTOALL: return K * s * (R - s);
    default: return 0;
    }
}

/* Work shared by the bounds. */
struct bctx {
    const tc_topo *t;
    shape h;
    simt *occ;      /* per link: how long a chunk holds it */
    simt *lat;      /* per link: from a chunk's start to its arrival (the link model; == occ under tacos) */
    simt *lost2;    /* scratch, n_links: model_link_bound */
    int *lk;        /* scratch, n_links */
    double *dist;   /* scratch, n */
    int *heap;      /* scratch */
    double *hkey;
    int *hops;      /* BFS scratch, n */
    int *queue;
    double *rdist;  /* gather: time-distance of every vertex to the root; scatter: from it; else NULL */
};

/* The least T with sum over links lk[0..deg) of floor((T - lost[k]) / occ[l]) >= need: each link loses
 * lost[k] of the time (it cannot start before, or must finish that long before the end). */
static simt link_bound_lost(const simt *occ, const int *lk, const simt *lost, int deg, int64_t need)
{
    if (need <= 0)
        return 0;
    simt hi = 0;
    for (int k = 0; k < deg; k++) {
        const simt c = lost[k] + occ[lk[k]] * need; /* this link alone would do it by then */
        if (occ[lk[k]] > 0 && need <= SIM_T_MAX / occ[lk[k]] && (hi == 0 || c < hi))
            hi = c;
    }
    if (hi <= 0 || hi > SIM_T_MAX)
        return link_bound(occ, lk, deg, need);
    simt lo = 0;
    while (lo < hi) {
        const simt mid = lo + (hi - lo) / 2;
        int64_t got = 0;
        for (int k = 0; k < deg && got < need; k++)
            if (mid > lost[k] && occ[lk[k]] > 0)
                got += (mid - lost[k]) / occ[lk[k]];
        if (got >= need)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The link model's bound over links lk[0..deg): the least T by which `need` chunks have arrived, link l
 * starting no sooner than lost0[k] (NULL: 0).  tacos: link_bound(_lost), unchanged.  te-ccl: the j-th chunk
 * over l arrives at lost0 + j occ + lat at the earliest, i.e. link_bound_lost with lost = lost0 + lat - occ,
 * shifted by S so that no lost is negative (a switch port's lat is alpha alone, below its occ). */
static simt model_link_bound(const bctx *b, const int *lk, int deg, const simt *lost0, int64_t need)
{
    if (b->t->link_model == TC_LINK_TACOS)
        return lost0 ? link_bound_lost(b->occ, lk, lost0, deg, need) : link_bound(b->occ, lk, deg, need);
    if (need <= 0)
        return 0;
    simt S = 0;
    for (int k = 0; k < deg; k++) {
        b->lost2[k] = (lost0 ? lost0[k] : 0) + b->lat[lk[k]] - b->occ[lk[k]];
        if (-b->lost2[k] > S)
            S = -b->lost2[k];
    }
    for (int k = 0; k < deg; k++)
        b->lost2[k] += S;
    const simt t = link_bound_lost(b->occ, lk, b->lost2, deg, need);
    return t >= SIM_T_MAX ? t : t > S ? t - S : 0;
}

static simt switch_link_bound(const bctx *b, const int *lk, int deg, int64_t need)
{
    const tc_topo *t = b->t;
    simt ready[64];
    if (deg > 64 || deg == 0)
        return model_link_bound(b, lk, deg, NULL, need);
    for (int k = 0; k < deg; k++) {
        const int u = t->links[lk[k]].src;
        ready[k] = 0;
        if (u >= t->n_npus) { /* from a switch: after its fastest in-link's first chunk */
            simt m = -1;
            for (int e = t->in_off[u]; e < t->in_off[u + 1]; e++)
                if (m < 0 || b->lat[t->in_link[e]] < m)
                    m = b->lat[t->in_link[e]];
            ready[k] = m > 0 ? m : 0;
        }
    }
    return model_link_bound(b, lk, deg, ready, need);
}

/* Dijkstra from src over out-links (rev = 0) or in-links (rev = 1), weights occ in seconds; returns the
 * largest finite distance, and the far node in *far. */
static double dijkstra(bctx *b, int src, int rev, int *far)
{
    const tc_topo *t = b->t;
    const int n = tc_topo_n_vertices(t); /* switch vertices are on the way, never an end */
    for (int v = 0; v < n; v++)
        b->dist[v] = INFINITY;
    int hn = 0;
    b->dist[src] = 0;
    b->heap[hn] = src;
    b->hkey[hn++] = 0;
    double worst = 0;
    while (hn) {
        const int v = b->heap[0];
        const double dv = b->hkey[0];
        const int x = b->heap[--hn];
        const double kx = b->hkey[hn];
        int j = 0;
        for (;;) {
            int c = 2 * j + 1;
            if (c >= hn)
                break;
            if (c + 1 < hn && b->hkey[c + 1] < b->hkey[c])
                c++;
            if (b->hkey[c] >= kx)
                break;
            b->heap[j] = b->heap[c];
            b->hkey[j] = b->hkey[c];
            j = c;
        }
        if (hn) {
            b->heap[j] = x;
            b->hkey[j] = kx;
        }
        if (dv > b->dist[v])
            continue;
        if (v < t->n_npus && (dv > worst || (far && *far < 0))) {
            worst = dv;
            if (far)
                *far = v;
        }
        const int *off = rev ? t->in_off : t->out_off, *adj = rev ? t->in_link : t->out_link;
        for (int k = off[v]; k < off[v + 1]; k++) {
            const int l = adj[k], u = rev ? t->links[l].src : t->links[l].dst;
            const double nd = dv + sim_sec(b->lat[l]);
            if (nd < b->dist[u]) {
                b->dist[u] = nd;
                int p = hn++;
                while (p > 0 && b->hkey[(p - 1) / 2] > nd) {
                    b->heap[p] = b->heap[(p - 1) / 2];
                    b->hkey[p] = b->hkey[(p - 1) / 2];
                    p = (p - 1) / 2;
                }
                b->heap[p] = u;
                b->hkey[p] = nd;
            }
        }
    }
    return worst;
}

/* Breadth-first hops from src over out-links (rev = 0) or in-links into b->hops (-1: unreachable); hops
 * through a switch vertex count, the vertex itself is no destination: the sum of the NPUs' hops in *sum,
 * the largest in *far; returns the NPUs reached. */
static int bfs_hops(bctx *b, int src, int rev, int64_t *sum, int *far)
{
    const tc_topo *t = b->t;
    const int n = tc_topo_n_vertices(t);
    for (int v = 0; v < n; v++)
        b->hops[v] = -1;
    int qh = 0, qt = 0, npus = 0;
    b->hops[src] = 0;
    b->queue[qt++] = src;
    *sum = 0;
    *far = 0;
    const int *off = rev ? t->in_off : t->out_off, *adj = rev ? t->in_link : t->out_link;
    while (qh < qt) {
        const int v = b->queue[qh++];
        if (v < t->n_npus) {
            *sum += b->hops[v];
            if (b->hops[v] > *far)
                *far = b->hops[v];
            npus++;
        }
        for (int k = off[v]; k < off[v + 1]; k++) {
            const int l = adj[k], u = rev ? t->links[l].src : t->links[l].dst;
            if (b->hops[u] < 0) {
                b->hops[u] = b->hops[v] + 1;
                b->queue[qt++] = u;
            }
        }
    }
    return npus;
}

/* Sum of hop distances from src over out-links (rev = 0) or in-links; -1 when some NPU is unreachable. */
static int64_t hop_sum(bctx *b, int src, int rev)
{
    int64_t sum;
    int far;
    return bfs_hops(b, src, rev, &sum, &far) == b->t->n_npus ? sum : -1;
}

/* Every link of one latency: the hops to the farthest NPU from src (what dijkstra finds with its sums), in
 * seconds as dijkstra adds them up, link by link. */
static double farthest_hops(bctx *b, int src, double per_hop)
{
    int64_t sum;
    int far;
    bfs_hops(b, src, 0, &sum, &far);
    double d = 0;
    for (int i = 0; i < far; i++)
        d += per_hop;
    return d;
}

static double latency_bound(bctx *b)
{
    const tc_topo *t = b->t;
    const int n = t->n_npus;
    switch (b->h.coll) {
    case TC_COLL_BROADCAST:
    case TC_COLL_SCATTER: return dijkstra(b, b->h.root, 0, NULL);
    case TC_COLL_REDUCE:
    case TC_COLL_GATHER: return dijkstra(b, b->h.root, 1, NULL);
    default: break;
    }
    double worst = 0;
    int one_lat = t->n_links > 0;
    for (int l = 1; l < t->n_links && one_lat; l++)
        one_lat = b->lat[l] == b->lat[0];
    if (n <= EXACT_NPUS) {
        for (int v = 0; v < n; v++) {
            const double d = one_lat ? farthest_hops(b, v, sim_sec(b->lat[0])) : dijkstra(b, v, 0, NULL);
            if (d > worst)
                worst = d;
        }
        return worst;
    }
    for (int k = 0; k < TC_TOPO_SAMPLE_SOURCES; k++) {
        int far = -1;
        double d = dijkstra(b, (int)((long long)k * n / TC_TOPO_SAMPLE_SOURCES), 0, &far);
        if (d > worst)
            worst = d;
        if (far >= 0 && (d = dijkstra(b, far, 1, NULL)) > worst)
            worst = d;
    }
    return worst;
}

static int64_t aggregate_need(bctx *b)
{
    const shape *h = &b->h;
    const int64_t R = h->R, C = h->C, K = h->K;
    const int n = b->t->n_npus;
    int64_t sum = 0;
    switch (h->coll) {
    case TC_COLL_ALLREDUCE: return 2 * C * (R - 1);
    case TC_COLL_GATHER:
    case TC_COLL_SCATTER:
        sum = n <= EXACT_NPUS ? hop_sum(b, h->root, h->coll == TC_COLL_GATHER) : -1;
        return sum >= 0 ? K * sum : K * (R - 1);
    case TC_COLL_ALLTOALL:
        if (n > EXACT_NPUS)
            return K * R * (R - 1);
        for (int v = 0; v < n; v++) {
            const int64_t d = hop_sum(b, v, 0);
            if (d < 0)
                return K * R * (R - 1);
            sum += d;
        }
        return K * sum;
    default: return C * (R - 1);
    }
}

/* Gather (dir 0) and scatter (dir 1), a set holding the root: a chunk that enters over link l still travels
 * from where it entered to the root (dir 1: from the root to where it leaves by), so l carries chunks in
 * [0, T - that distance] only (dir 1: from that distance on).  Seconds. */
static double cut_with_travel(const bctx *b, const int *lk, int n, int64_t need, int dir)
{
    simt *lost = malloc(((size_t)n + 1) * sizeof *lost);
    if (!lost)
        return sim_sec(model_link_bound(b, lk, n, NULL, need));
    for (int k = 0; k < n; k++) {
        const double d = b->rdist[dir ? b->t->links[lk[k]].src : b->t->links[lk[k]].dst];
        lost[k] = isfinite(d) ? (simt)floor(d * 1e12) : 0; /* down: a bound, whatever the rounding */
    }
    const simt t = model_link_bound(b, lk, n, lost, need);
    free(lost);
    return sim_sec(t);
}

/* The bound of a cut: s NPUs inside, root_in, the links into it lin[0..nin) and out of it lout[0..nout);
 * updates the best. */
static void cut_eval(bctx *b, int64_t s, int root_in, const int *lin, int nin, const int *lout, int nout,
                     const char *what, tc_bound *out)
{
    if (s == 0 || s == b->t->n_npus)
        return;
    for (int dir = 0; dir < 2; dir++) {
        const int64_t need = cut_need(&b->h, s, root_in, dir);
        const int *lk = dir ? lout : lin, nk = dir ? nout : nin;
        double tm = sim_sec(model_link_bound(b, lk, nk, NULL, need));
        if (need > 0 && root_in && b->rdist) /* gather, scatter: on to the root after entering (before leaving) */
            tm = cut_with_travel(b, lk, nk, need, dir);
        if (tm > out->cut) {
            out->cut = tm;
            snprintf(out->cut_desc, sizeof out->cut_desc, "%s, %s", what, dir ? "out" : "in");
        }
    }
}

/* The bound of cut set `in` (in[v] nonzero: v in S). */
static void cut_bound(bctx *b, const unsigned char *in, const char *what, tc_bound *out)
{
    const tc_topo *t = b->t;
    int64_t s = 0; /* in[] covers the switch vertices too; only NPUs count */
    for (int v = 0; v < t->n_npus; v++)
        s += in[v] != 0;
    int nin = 0, nout = t->n_links;
    for (int l = 0; l < t->n_links; l++) /* into S from the front of lk, out of S from the back */
        if (!in[t->links[l].src] && in[t->links[l].dst])
            b->lk[nin++] = l;
        else if (in[t->links[l].src] && !in[t->links[l].dst])
            b->lk[--nout] = l;
    cut_eval(b, s, in[b->h.root] != 0, b->lk, nin, b->lk + nout, t->n_links - nout, what, out);
}

/* "npus 8-15" when v in S are contiguous, else "N npus". */
static void set_name(int lo, int hi, int cnt, char *buf, size_t len)
{
    if (cnt == 1)
        snprintf(buf, len, "npu %d", lo);
    else if (hi - lo + 1 == cnt)
        snprintf(buf, len, "npus %d-%d", lo, hi);
    else
        snprintf(buf, len, "%d npus", cnt);
}

static void set_name_of(const unsigned char *in, int n, char *buf, size_t len)
{
    int lo = -1, hi = -1, cnt = 0;
    for (int v = 0; v < n; v++)
        if (in[v]) {
            lo = lo < 0 ? v : lo;
            hi = v;
            cnt++;
        }
    set_name(lo, hi, cnt, buf, len);
}

/*
 * All-to-all, gather, scatter: the links between servers, each chunk over its server hops.  A chunk from
 * server A to server B crosses at least h(A, B) links whose ends lie in different servers (h: hops in the
 * graph of servers, one arc per such link), so those links together carry K sum over rank pairs of h: the
 * aggregate bound on them alone.  Where servers are joined in a chain or ring (a rail unwound to a ring),
 * chunks cross several and this passes each server's own cut.  vn: the server of each vertex; ol[ooff[a]
 * .. ooff[a + 1]): the links out of server a.
 */
static tc_status node_hops(bctx *b, const int *vn, const int *cnt, const int *ol, const int *ooff, tc_bound *out)
{
    const tc_topo *t = b->t;
    const shape *h = &b->h;
    const int N = t->n_nodes, a2a = h->coll == TC_COLL_ALLTOALL, gather = h->coll == TC_COLL_GATHER;
    if (!a2a && !gather && h->coll != TC_COLL_SCATTER)
        return TC_OK;
    const int rn = t->node_of[h->root];
    int *hop = malloc((size_t)N * sizeof *hop), *queue = malloc((size_t)N * sizeof *queue);
    if (!hop || !queue) {
        free(hop);
        free(queue);
        return TC_ERR_NOMEM;
    }
    int64_t need = 0;
    for (int a = 0; a < N && need >= 0; a++) {
        if (!cnt[a] || (!a2a && !gather && a != rn))
            continue;
        for (int k = 0; k < N; k++)
            hop[k] = -1;
        int qh = 0, qt = 0;
        hop[a] = 0;
        queue[qt++] = a;
        while (qh < qt) {
            const int x = queue[qh++];
            for (int k = ooff[x]; k < ooff[x + 1]; k++) {
                const int y = vn[t->links[ol[k]].dst];
                if (hop[y] < 0) {
                    hop[y] = hop[x] + 1;
                    queue[qt++] = y;
                }
            }
        }
        for (int c = 0; c < N; c++) {
            if (!cnt[c] || (gather && c != rn))
                continue;
            if (hop[c] < 0) { /* unreachable: no bound (the reachability checks report it) */
                need = -1;
                break;
            }
            /* all-to-all: every rank of a to every rank of c; gather: a's ranks to the root; scatter: the
             * root to c's ranks */
            need += (int64_t)h->K * (a2a ? (int64_t)cnt[a] * cnt[c] : gather ? cnt[a] : cnt[c]) * hop[c];
        }
    }
    free(hop);
    free(queue);
    if (need <= 0)
        return TC_OK;
    const double tm = sim_sec(model_link_bound(b, ol, ooff[N], NULL, need));
    if (tm > out->cut) {
        out->cut = tm;
        snprintf(out->cut_desc, sizeof out->cut_desc, "the links between nodes, each chunk over its node hops");
    }
    return TC_OK;
}

/* Every server at once: the links between servers bucketed by the server they enter and leave. */
static tc_status node_cuts(bctx *b, tc_bound *out)
{
    const tc_topo *t = b->t;
    const int N = t->n_nodes, n = t->n_npus;
    int *first = malloc((size_t)N * sizeof *first), *last = malloc((size_t)N * sizeof *last);
    int *cnt = calloc((size_t)N, sizeof *cnt), *ioff = calloc((size_t)N + 1, sizeof *ioff);
    int *ooff = calloc((size_t)N + 1, sizeof *ooff), *il = malloc(((size_t)t->n_links + 1) * sizeof *il);
    int *ol = malloc(((size_t)t->n_links + 1) * sizeof *ol);
    int *vn = malloc(((size_t)tc_topo_n_vertices(t) + 1) * sizeof *vn); /* node of each vertex */
    tc_status st = TC_ERR_NOMEM;
    if (!first || !last || !cnt || !ioff || !ooff || !il || !ol || !vn)
        goto done;
    for (int v = 0; v < tc_topo_n_vertices(t); v++) /* a switch vertex: the node of its first port's NPU */
        vn[v] = v < n ? t->node_of[v]
                      : t->out_off[v + 1] > t->out_off[v] && t->links[t->out_link[t->out_off[v]]].dst < n
                            ? t->node_of[t->links[t->out_link[t->out_off[v]]].dst]
                            : 0;
    for (int v = n - 1; v >= 0; v--)
        first[t->node_of[v]] = v;
    for (int v = 0; v < n; v++) {
        last[t->node_of[v]] = v;
        cnt[t->node_of[v]]++;
    }
    for (int l = 0; l < t->n_links; l++) {
        const int a = vn[t->links[l].src], c = vn[t->links[l].dst];
        if (a != c) {
            ooff[a + 1]++;
            ioff[c + 1]++;
        }
    }
    for (int k = 0; k < N; k++) {
        ooff[k + 1] += ooff[k];
        ioff[k + 1] += ioff[k];
    }
    for (int l = 0; l < t->n_links; l++) {
        const int a = vn[t->links[l].src], c = vn[t->links[l].dst];
        if (a != c) {
            ol[ooff[a]++] = l;
            il[ioff[c]++] = l;
        }
    }
    for (int k = N; k > 0; k--) {
        ooff[k] = ooff[k - 1];
        ioff[k] = ioff[k - 1];
    }
    ooff[0] = ioff[0] = 0;
    for (int k = 0; k < N; k++) {
        if (!cnt[k])
            continue;
        char what[80], set[40];
        set_name(first[k], last[k], cnt[k], set, sizeof set);
        snprintf(what, sizeof what, "node %d (%s)", k, set);
        cut_eval(b, cnt[k], t->node_of[b->h.root] == k, il + ioff[k], ioff[k + 1] - ioff[k], ol + ooff[k],
                 ooff[k + 1] - ooff[k], what, out);
    }
    st = node_hops(b, vn, cnt, ol, ooff, out);
done:
    free(first);
    free(last);
    free(cnt);
    free(ioff);
    free(ooff);
    free(il);
    free(ol);
    free(vn);
    return st;
}

/*
 * Gather and scatter: the balls around the root.  For S = the NPUs within time-distance r of the root
 * (toward it for gather, from it for scatter), the K(R - s) chunks from outside must enter S (gather) or
 * leave it (scatter) over its in- (out-) links, and each still has to reach the root from where it entered
 * (or first reach the link it leaves by): a link into the ball is useful only until that much before the
 * end (out of it, from that much after the start).  Every distinct
 * radius up to EXACT_NPUS NPUs, 64 spread radii above.
 */
static void ball_cuts(bctx *b, tc_bound *out)
{
    const tc_topo *t = b->t;
    const int n = t->n_npus, gather = b->h.coll == TC_COLL_GATHER;
    if ((!gather && b->h.coll != TC_COLL_SCATTER) || n < 3)
        return;
    dijkstra(b, b->h.root, gather, NULL); /* b->dist: to the root (gather), from it (scatter) */
    double *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return;
    int nr = 0;
    for (int v = 0; v < n; v++)
        if (isfinite(b->dist[v]))
            r[nr++] = b->dist[v];
    qsort(r, (size_t)nr, sizeof *r, cmp_double);
    int u = 0;
    for (int i = 0; i < nr; i++)
        if (u == 0 || r[i] != r[u - 1])
            r[u++] = r[i];
    const int step = u > EXACT_NPUS ? u / 64 : 1;
    for (int i = 0; i + 1 < u; i += step) {
        int64_t s = 0;
        for (int v = 0; v < n; v++)
            s += b->dist[v] <= r[i];
        int nl = 0;
        double near = INFINITY; /* the least distance of an entry (exit) vertex of S */
        for (int l = 0; l < t->n_links; l++) {
            const int a = t->links[l].src, c = t->links[l].dst;
            const int ain = b->dist[a] <= r[i], cin = b->dist[c] <= r[i];
            if (gather ? (!ain && cin) : (ain && !cin)) {
                b->lk[nl++] = l;
                const double d = b->dist[gather ? c : a];
                if (d < near)
                    near = d;
            }
        }
        if (!nl)
            continue;
        const double tm = b->rdist ? cut_with_travel(b, b->lk, nl, (int64_t)b->h.K * (b->h.R - s), !gather)
                                   : sim_sec(model_link_bound(b, b->lk, nl, NULL, (int64_t)b->h.K * (b->h.R - s))) +
                                         near;
        if (tm > out->cut) {
            out->cut = tm;
            snprintf(out->cut_desc, sizeof out->cut_desc, "the %lld npus nearest the root, %s", (long long)s,
                     gather ? "in, then to the root" : "from the root, then out");
        }
    }
    free(r);
}

static tc_status cut_bounds(bctx *b, tc_bound *out)
{
    const tc_topo *t = b->t;
    const int n = t->n_npus, nv = tc_topo_n_vertices(t);
    unsigned char *in = calloc((size_t)nv, 1); /* switch vertices: outside unless a set says otherwise */
    char what[80], set[40];
    tc_status st = TC_OK;
    if (!in)
        return TC_ERR_NOMEM;
    if (t->node_of && t->n_nodes > 1 && (st = node_cuts(b, out))) {
        free(in);
        return st;
    }
    int dims[8];
    const int nd = t->n_swnodes ? 0 : tc_topo_grid_dims(t, dims);
    for (int d = 0, stride = 1; d < nd; stride *= dims[d], d++) {
        if (dims[d] < 2)
            continue;
        for (int v = 0; v < n; v++)
            in[v] = (v / stride) % dims[d] < dims[d] / 2;
        snprintf(what, sizeof what, "half of grid dimension %d (coordinate < %d of %d)", d, dims[d] / 2, dims[d]);
        cut_bound(b, in, what, out);
    }
    if (n >= 2 && n <= MINCUT_NPUS && t->n_links > 0) {
        igraph_t g;
        igraph_vector_int_t ev, p1;
        igraph_vector_t cap;
        igraph_real_t value;
        int have_g = 0, have_ev = 0, have_p1 = 0, have_cap = 0;
        tc_igraph_lock();
        st = TC_ERR_NOMEM;
        if (igraph_vector_int_init(&ev, 2 * (igraph_integer_t)t->n_links))
            goto mc_done;
        have_ev = 1;
        if (igraph_vector_init(&cap, t->n_links))
            goto mc_done;
        have_cap = 1;
        for (int l = 0; l < t->n_links; l++) {
            VECTOR(ev)[2 * l] = t->links[l].src;
            VECTOR(ev)[2 * l + 1] = t->links[l].dst;
            VECTOR(cap)[l] = t->links[l].beta > 0 ? 1.0 / t->links[l].beta : 1e30;
        }
        if (igraph_create(&g, &ev, nv, IGRAPH_DIRECTED))
            goto mc_done;
        have_g = 1;
        if (igraph_vector_int_init(&p1, 0))
            goto mc_done;
        have_p1 = 1;
        st = TC_OK;
        if (igraph_mincut(&g, &value, &p1, NULL, NULL, &cap) == IGRAPH_SUCCESS) {
            memset(in, 0, (size_t)nv);
            for (igraph_integer_t i = 0; i < igraph_vector_int_size(&p1); i++)
                in[VECTOR(p1)[i]] = 1;
            set_name_of(in, n, set, sizeof set);
            snprintf(what, sizeof what, "minimum cut (%s)", set);
            cut_bound(b, in, what, out);
        }
    mc_done:
        if (have_p1)
            igraph_vector_int_destroy(&p1);
        if (have_g)
            igraph_destroy(&g);
        if (have_cap)
            igraph_vector_destroy(&cap);
        if (have_ev)
            igraph_vector_int_destroy(&ev);
        tc_igraph_unlock();
    }
    free(in);
    return st;
}

tc_status tc_sim_bound(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, uint64_t size, tc_bound *out)
{
    tc_bound b;
    memset(&b, 0, sizeof b);
    b.link_npu = -1;
    if (topo->n_switches > 0 || !topo->out_off)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "bound: the topology must be indexed and unwound");
    if (topo->n_npus != s->n_ranks)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "bound: %d ranks on %d npus", s->n_ranks,
                        topo->n_npus);
    const int n = topo->n_npus;
    if (!size)
        size = s->size_bytes;
    double bytes = s->n_chunks > 0 ? (double)size / s->n_chunks : 0;
    if (s->coll == TC_COLL_ALLTOALL)
        bytes *= s->n_ranks;
    if (n < 2) {
        *out = b;
        return TC_OK;
    }
    /* a size table (man 5 tacosc-costs): every link at its fastest beta over every size, which prices no
     * chunk above what the simulator does; te-ccl's epoch stays the simulator's, from topo */
    tc_topo *fastest = NULL;
    if (tc_topo_has_tables(topo)) {
        if (tc_topo_clone(topo, &fastest))
            return tc_error(ctx, TC_ERR_NOMEM, topo->file, 0, "bound: out of memory");
        for (int l = 0; l < fastest->n_links; l++)
            fastest->links[l].beta = tc_link_beta_min(topo, &topo->links[l]);
        for (int k = 0; k < fastest->n_classes; k++)
            fastest->classes[k].n_at = 0;
    }
    const tc_topo *pt = fastest ? fastest : topo;
    bctx c;
    memset(&c, 0, sizeof c);
    c.t = pt;
    c.h = (shape){s->coll, s->n_ranks, s->n_chunks, s->chunks_per_rank, s->root};
    if (s->coll == TC_COLL_ALLTOALL) { /* chunks per (source, destination) pair */
        const int64_t pairs = (int64_t)s->n_ranks * s->n_ranks;
        c.h.K = s->n_chunks / pairs > 0 ? (int)(s->n_chunks / pairs) : 1;
    }
    tc_status st = TC_ERR_NOMEM;
    const size_t nl = (size_t)topo->n_links + 1, nn = (size_t)tc_topo_n_vertices(topo) + 1;
    c.occ = malloc(nl * sizeof *c.occ);
    c.lat = malloc(nl * sizeof *c.lat);
    c.lost2 = malloc(nl * sizeof *c.lost2);
    c.lk = malloc(nl * sizeof *c.lk);
    c.dist = malloc(nn * sizeof *c.dist);
    c.heap = malloc((nl + nn) * sizeof *c.heap);
    c.hkey = malloc((nl + nn) * sizeof *c.hkey);
    c.hops = malloc(nn * sizeof *c.hops);
    c.queue = malloc(nn * sizeof *c.queue);
    if (!c.occ || !c.lat || !c.lost2 || !c.lk || !c.dist || !c.heap || !c.hkey || !c.hops || !c.queue)
        goto done;
    const double epoch = tc_link_epoch(topo, bytes);
    for (int l = 0; l < topo->n_links; l++)
        if ((st = tc_sim_link_cost(ctx, pt, l, bytes, epoch, &c.occ[l], &c.lat[l])))
            goto done;
    /* per NPU */
    for (int v = 0; v < n; v++)
        for (int dir = 0; dir < 2; dir++) {
            const int *lk = dir ? topo->out_link + topo->out_off[v] : topo->in_link + topo->in_off[v];
            const int deg = dir ? topo->out_off[v + 1] - topo->out_off[v] : topo->in_off[v + 1] - topo->in_off[v];
            const int64_t need = npu_need(&c.h, v, dir);
            const double tm = sim_sec(dir || !topo->n_swnodes ? model_link_bound(&c, lk, deg, NULL, need)
                                                              : switch_link_bound(&c, lk, deg, need));
            if (tm > b.link) {
                b.link = tm;
                b.link_npu = v;
                b.link_out = dir;
            }
        }
    /* every link */
    for (int l = 0; l < topo->n_links; l++)
        c.lk[l] = l;
    b.aggregate = sim_sec(model_link_bound(&c, c.lk, topo->n_links, NULL, aggregate_need(&c)));
    if (s->coll == TC_COLL_GATHER || s->coll == TC_COLL_SCATTER) {
        dijkstra(&c, s->root, s->coll == TC_COLL_GATHER, NULL);
        if ((c.rdist = malloc(nn * sizeof *c.rdist)))
            memcpy(c.rdist, c.dist, nn * sizeof *c.rdist);
    }
    if ((st = cut_bounds(&c, &b)))
        goto done;
    ball_cuts(&c, &b);
    b.latency = latency_bound(&c);
    /* the largest; on a tie the more specific one (link, cut) names it */
    b.time = b.link;
    b.binding = TC_BOUND_LINK;
    if (b.cut > b.time) {
        b.time = b.cut;
        b.binding = TC_BOUND_CUT;
    }
    if (b.aggregate > b.time) {
        b.time = b.aggregate;
        b.binding = TC_BOUND_AGGREGATE;
    }
    if (b.latency > b.time) {
        b.time = b.latency;
        b.binding = TC_BOUND_LATENCY;
    }
    tc_topo_info info;
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    quiet.sink = NULL;
    if (tc_topo_info_get(&quiet, topo, &info) == TC_OK) {
        b.ideal = tc_topo_ideal_time(&info, s->coll, size, n);
        if (!isfinite(b.ideal))
            b.ideal = 0;
    }
    *out = b;
    st = TC_OK;
done:
    tc_topo_free(fastest);
    free(c.occ);
    free(c.lat);
    free(c.lost2);
    free(c.lk);
    free(c.dist);
    free(c.heap);
    free(c.hkey);
    free(c.hops);
    free(c.queue);
    free(c.rdist);
    return st;
}
