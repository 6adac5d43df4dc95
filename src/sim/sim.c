/*
 * sim: the cost of a schedule on a topology (see include/tacos/sim.h for the two models' definitions).
 *
 * Data flow: each model checks every transfer against the topology on its first pass and resolves its route
 * (own route, own link, or an igraph shortest path cached per source), over flat arrays:
 *  - ab: counting sort by step, per round accumulate bytes per link and the longest summed alpha;
 *  - event, one pass: issue order by (t_start, step, index); "source holds the chunk" is a per-(rank,
 *    chunk) settled arrival time, committed from the transfers in t_end order as the issue time passes
 *    them; per link its free time, store and forward per hop.  Generators emit transfers in that order, so
 *    the model first walks the array as it is, checking the order as it goes and keeping arrivals in a
 *    window over the uncommitted ones; an out-of-order schedule is sorted and walked again.  Each link also
 *    remembers the latest ready times of the chunks it served: a later-issued chunk ready before one of
 *    them would have gone first (unless both are first hops of one channel, which keep the plan's order),
 *    and the pass hands over to the event queue (queue.c).
 * With a timeline requested, the model runs twice: once for the total time, once to bin the occupancy.
 * The lower bounds (bound.c) are computed on a second thread while the model runs.
 * Costs: one pass, O(M + hops) time and O(R C) memory for the settled table, when the transfers are in
 * order; O(M log M) and O(M) more memory otherwise.
 */
#include "sim_int.h"

#include "tacos/topo.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void tc_sim_opts_init(tc_sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = TC_SIM_EVENT;
}

tc_status tc_sim_model_parse(const char *s, tc_sim_model *out)
{
    if (s && !strcmp(s, "ab")) {
        *out = TC_SIM_AB;
        return TC_OK;
    }
    if (s && !strcmp(s, "event")) {
        *out = TC_SIM_EVENT;
        return TC_OK;
    }
    return TC_ERR_INVALID;
}

const char *tc_sim_model_name(tc_sim_model m)
{
    return m == TC_SIM_AB ? "ab" : "event";
}

void tc_sim_result_free(tc_sim_result *r)
{
    if (!r)
        return;
    free(r->link_busy);
    free(r->link_util);
    free(r->link_bytes);
    free(r->timeline);
    free(r);
}

/* ------------------------------------------------------------------------------------------------ */
/* Routes                                                                                            */

void tc_sim_router_free(sim_router *ro)
{
    if (ro->pred) {
        for (int v = 0; v < tc_topo_n_vertices(ro->t); v++)
            free(ro->pred[v]);
        free(ro->pred);
    }
    free(ro->buf);
    free(ro->lead);
    if (ro->have_graph) {
        tc_igraph_lock();
        igraph_destroy(&ro->g);
        tc_igraph_unlock();
    }
}

static tc_status router_tree_locked(sim_router *ro, int src);

/* BFS tree from `src` with igraph; edge ids equal link ids, vertices NPUs then switch vertices. */
static tc_status router_tree(sim_router *ro, int src)
{
    if (ro->have_graph && ro->pred[src])
        return TC_OK;
    tc_igraph_lock();
    tc_status st = router_tree_locked(ro, src);
    tc_igraph_unlock();
    return st;
}

static tc_status router_tree_locked(sim_router *ro, int src)
{
    const tc_topo *t = ro->t;
    if (!ro->have_graph) {
        igraph_vector_int_t ev;
        if (igraph_vector_int_init(&ev, 2 * (igraph_integer_t)t->n_links))
            return TC_ERR_NOMEM;
        for (int l = 0; l < t->n_links; l++) {
            VECTOR(ev)[2 * l] = t->links[l].src;
            VECTOR(ev)[2 * l + 1] = t->links[l].dst;
        }
        igraph_error_t e = igraph_create(&ro->g, &ev, tc_topo_n_vertices(t), IGRAPH_DIRECTED);
        igraph_vector_int_destroy(&ev);
        if (e)
            return TC_ERR_NOMEM;
        ro->have_graph = 1;
        ro->pred = calloc((size_t)tc_topo_n_vertices(t), sizeof *ro->pred);
        ro->buf = malloc((size_t)(tc_topo_n_vertices(t) + 1) * sizeof *ro->buf);
        if (!ro->pred || !ro->buf)
            return TC_ERR_NOMEM;
    }
    if (ro->pred[src])
        return TC_OK;
    igraph_vector_int_t inb;
    if (igraph_vector_int_init(&inb, 0))
        return TC_ERR_NOMEM;
    igraph_error_t e = igraph_get_shortest_paths(&ro->g, NULL, NULL, src, igraph_vss_all(), IGRAPH_OUT, NULL,
                                                 &inb);
    int *p = e ? NULL : malloc((size_t)tc_topo_n_vertices(t) * sizeof *p);
    if (p)
        for (int v = 0; v < tc_topo_n_vertices(t); v++)
            p[v] = (int)VECTOR(inb)[v];
    igraph_vector_int_destroy(&inb);
    if (!p)
        return TC_ERR_NOMEM;
    ro->pred[src] = p;
    return TC_OK;
}

/*
 * The links transfer x crosses: *links and *n (n = 0 for a local copy).  Returns TC_ERR_INVALID with a
 * diagnostic for a transfer the topology cannot carry.
 */
tc_status tc_sim_route_of(tc_ctx *ctx, sim_router *ro, int xi, const int **links, int *n)
{
    const tc_xfer *x = &ro->s->xfers[xi];
    const tc_topo *t = ro->t;
    if (x->route_len > 0) {
        *links = ro->s->route + x->route_off;
        *n = x->route_len;
        return TC_OK;
    }
    if (x->link >= 0) {
        *links = &x->link;
        *n = 1;
        return TC_OK;
    }
    if (x->src == x->dst) {
        *n = 0;
        return TC_OK;
    }
    tc_status st = router_tree(ro, x->src);
    if (st)
        return st;
    const int *p = ro->pred[x->src];
    int len = 0, v = x->dst;
    while (v != x->src) {
        int l = p[v];
        if (l < 0 || len >= tc_topo_n_vertices(t))
            return tc_sched_error(ctx, TC_ERR_INVALID, ro->s, xi, "sim: transfer %d: npu %d cannot reach npu %d",
                                  xi, x->src, x->dst);
        ro->buf[len++] = l;
        v = t->links[l].src;
    }
    for (int i = 0; i < len / 2; i++) { /* reverse into travel order */
        int tmp = ro->buf[i];
        ro->buf[i] = ro->buf[len - 1 - i];
        ro->buf[len - 1 - i] = tmp;
    }
    *links = ro->buf;
    *n = len;
    return TC_OK;
}

/* Check one transfer's ranks, chunk, step and links against the topology (each model's first pass).
 * Errors name the plan's file and the transfer's line when they are known. */
tc_status tc_sim_check_xfer(tc_ctx *ctx, const tc_sched *s, const tc_topo *t, int i)
{
    const tc_xfer *x = &s->xfers[i];
    const tc_status bad = TC_ERR_INVALID;
    if (x->src < 0 || x->src >= t->n_npus || x->dst < 0 || x->dst >= t->n_npus)
        return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: rank %d->%d out of range (topology has %d npus)",
                              i, x->src, x->dst, t->n_npus);
    if (x->chunk < 0 || x->chunk >= s->n_chunks)
        return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: chunk %d out of range (%d chunks)", i, x->chunk,
                              s->n_chunks);
    if (x->step < 0)
        return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: negative step %d", i, x->step);
    if (x->route_len > 0) {
        if (x->route_off < 0 || x->route_off + x->route_len > s->n_route)
            return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: route out of range", i);
        int at = x->src;
        for (int h = 0; h < x->route_len; h++) {
            int l = s->route[x->route_off + h];
            if (l < 0 || l >= t->n_links || t->links[l].src != at)
                return tc_sched_error(ctx, bad, s, i,
                                      "sim: transfer %d (%d->%d): route hop %d is not a link leaving %s %d", i,
                                      x->src, x->dst, h, at < t->n_npus ? "npu" : "switch vertex", at);
            at = t->links[l].dst;
        }
        if (at != x->dst)
            return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: route ends at %s %d, not %d", i,
                                  at < t->n_npus ? "npu" : "switch vertex", at, x->dst);
    } else if (x->link >= 0) {
        if (x->link >= t->n_links || t->links[x->link].src != x->src || t->links[x->link].dst != x->dst)
            return tc_sched_error(ctx, bad, s, i, "sim: transfer %d: link %d does not join npu %d to npu %d", i,
                                  x->link, x->src, x->dst);
    }
    if (!(x->t_end >= x->t_start))
        return tc_sched_error(ctx, bad, s, i, "sim: transfer %d (%d->%d chunk %d) ends at %g, before its start %g",
                              i, x->src, x->dst, x->chunk, x->t_end, x->t_start);
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Timeline binning                                                                                  */

void tc_sim_bin_add(sim_binner *b, int link, double t0, double t1)
{
    if (!b->tl || t1 <= t0 || b->width <= 0)
        return;
    int i0 = (int)(t0 / b->width), i1 = (int)(t1 / b->width);
    if (i0 >= b->bins)
        i0 = b->bins - 1;
    if (i1 >= b->bins)
        i1 = b->bins - 1;
    double *row = b->tl + (size_t)link * b->bins;
    for (int i = i0; i <= i1; i++) {
        double lo = i * b->width, hi = lo + b->width;
        double a = t0 > lo ? t0 : lo, e = t1 < hi ? t1 : hi;
        if (e > a)
            row[i] += (e - a) / b->width;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Model ab: eq. 1 with per-link alpha and beta                                                      */

static tc_status run_ab(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn)
{
    const tc_sched *s = ro->s;
    const tc_topo *t = ro->t;
    const int M = s->n_xfers;
    int S = 1;
    tc_status st;
    for (int i = 0; i < M; i++) {
        if ((st = tc_sim_check_xfer(ctx, s, t, i)))
            return st;
        if (s->xfers[i].step + 1 > S)
            S = s->xfers[i].step + 1;
    }
    st = TC_OK;
    int *start = calloc((size_t)S + 1, sizeof *start), *order = malloc((size_t)(M ? M : 1) * sizeof *order);
    int *cnt = calloc((size_t)t->n_links + 1, sizeof *cnt);
    int *tlist = malloc(((size_t)t->n_links + 1) * sizeof *tlist);
    double *wb = ro->scale ? calloc((size_t)t->n_links + 1, sizeof *wb) : NULL; /* scaled bytes per link */
    if (!start || !order || !cnt || !tlist || (ro->scale && !wb)) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < M; i++)
        start[s->xfers[i].step + 1]++;
    for (int k = 0; k < S; k++)
        start[k + 1] += start[k];
    for (int i = 0; i < M; i++)
        order[start[s->xfers[i].step]++] = i;
    for (int k = S; k > 0; k--) /* restore the round starts */
        start[k] = start[k - 1];
    start[0] = 0;
    double now = 0;
    int rounds = 0;
    for (int k = 0; k < S; k++) {
        int nt = 0, used = 0;
        double dil = 0;
        for (int j = start[k]; j < start[k + 1]; j++) {
            const int *links;
            int n;
            if ((st = tc_sim_route_of(ctx, ro, order[j], &links, &n)))
                goto done;
            double a = 0;
            /* a multicast follower's first hop is its leader's */
            const int h0 = ro->lead && ro->lead[order[j]] != order[j];
            for (int h = h0; h < n; h++) {
                int l = links[h];
                a += t->links[l].alpha;
                if (cnt[l]++ == 0)
                    tlist[nt++] = l;
                if (wb)
                    wb[l] += bytes * ro->scale[order[j]];
            }
            if (n) /* codec times on the route (per-transfer costs) */
                a += ((ro->pre ? ro->pre[order[j]] : 0) + (ro->post ? ro->post[order[j]] : 0)) * bytes;
            if (n > r->max_dilation)
                r->max_dilation = n;
            if (a > dil)
                dil = a;
            used = 1;
        }
        if (!used)
            continue;
        double cong = 0;
        for (int i = 0; i < nt; i++) {
            int l = tlist[i];
            const double lb = wb ? wb[l] : bytes * cnt[l];
            double busy = tc_link_beta_at(t, &t->links[l], bytes) * lb; /* the table at one message */
            if (busy > cong)
                cong = busy;
            if (cnt[l] > r->max_congestion)
                r->max_congestion = cnt[l];
            r->link_busy[l] += busy;
            r->link_bytes[l] += lb;
            tc_sim_bin_add(bn, l, now, now + busy);
            cnt[l] = 0;
            if (wb)
                wb[l] = 0;
        }
        r->ab_dilation += dil;
        r->ab_congestion += cong;
        now += dil + cong;
        rounds++;
    }
    r->n_rounds = rounds;
    r->time = now;
done:
    free(start);
    free(order);
    free(cnt);
    free(tlist);
    free(wb);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Model event, one pass                                                                             */

tc_status tc_sim_link_cost(tc_ctx *ctx, const tc_topo *t, int l, double bytes, double epoch, simt *occ,
                           simt *lat)
{
    double hold, arr;
    tc_link_times(t, l, bytes, epoch, &hold, &arr);
    if (!(hold >= 0 && hold <= TC_TIME_MAX && arr >= 0 && arr <= TC_TIME_MAX))
        return tc_error(ctx, TC_ERR_INVALID, t->file, t->links[l].line,
                        "sim: link %d->%d holds a chunk of %.0f B for %g s, more than %g s: check its alpha, "
                        "bandwidth and the collective size",
                        t->links[l].src, t->links[l].dst, bytes, hold > arr ? hold : arr, TC_TIME_MAX);
    *occ = tc_time_ps(hold);
    *lat = t->link_model == TC_LINK_TACOS ? *occ : tc_time_ps(arr);
    return TC_OK;
}

tc_status tc_sim_xfer_occ(tc_ctx *ctx, const sim_router *ro, int x, int l, double bytes, simt *out, simt *lat)
{
    return tc_sim_link_cost(ctx, ro->t, l, ro->scale ? bytes * ro->scale[x] : bytes, ro->epoch, out, lat);
}

tc_status tc_sim_xfer_codec(tc_ctx *ctx, const sim_router *ro, int x, double bytes, simt *pre, simt *post)
{
    const double a = ro->pre ? ro->pre[x] * bytes : 0, b = ro->post ? ro->post[x] * bytes : 0;
    if (!(a >= 0 && a <= TC_TIME_MAX && b >= 0 && b <= TC_TIME_MAX))
        return tc_sched_error(ctx, TC_ERR_INVALID, ro->s, x,
                              "sim: transfer %d: compression %g s or decompression %g s is out of range", x, a, b);
    *pre = a > 0 ? tc_time_ps(a) : 0;
    *post = b > 0 ? tc_time_ps(b) : 0;
    return TC_OK;
}

tc_status tc_sim_too_long(tc_ctx *ctx, const tc_sched *s, int i)
{
    return tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                          "sim: transfer %d would arrive after %g s: check the costs and the collective size", i,
                          TC_TIME_MAX);
}

#define SIM_PREFETCH 16 /* transfers looked ahead to prefetch their cells of the dense table */

/* "What rank v holds of chunk c is settled at time T": dense array or open-addressing hash. */
typedef struct settled {
    simt *dense;
    uint64_t *keys;  /* hash: key + 1, 0 = empty */
    simt *vals;
    uint64_t mask;
    int64_t n_chunks;
    int n_ranks, k;   /* diagonal layout: see settled_slot */
} settled;

static tc_status settled_init(settled *st, int n_ranks, int n_chunks, int n_xfers)
{
    memset(st, 0, sizeof *st);
    st->n_chunks = n_chunks;
    st->n_ranks = n_ranks;
    st->k = n_chunks % n_ranks == 0 ? n_chunks / n_ranks : 0;
    int64_t cells = (int64_t)n_ranks * n_chunks;
    if (cells <= ((int64_t)1 << 26) || cells <= 2 * (int64_t)n_xfers) {
        st->dense = calloc((size_t)cells, sizeof *st->dense);
        tc_hugepage_hint(st->dense, (size_t)cells * sizeof *st->dense);
        return st->dense ? TC_OK : TC_ERR_NOMEM;
    }
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)n_xfers)
        cap *= 2;
    st->keys = calloc(cap, sizeof *st->keys);
    st->vals = malloc(cap * sizeof *st->vals);
    st->mask = cap - 1;
    return st->keys && st->vals ? TC_OK : TC_ERR_NOMEM;
}

/*
 * A fresh dense table costs a page fault per page as the model first touches it, and on virtual machines
 * those are slow and erratic (0.05 to 0.4 s for 128 MiB in 4 KiB pages).  The table asks for huge pages,
 * and a second thread populates them ahead of the model with MADV_POPULATE_WRITE, which maps pages without
 * changing their contents: it races with nothing, and where the kernel lacks it the model faults as before.
 */
typedef struct prefault {
    char *lo, *hi;
    pthread_t thread;
    int started;
} prefault;

static void *prefault_run(void *arg)
{
    const prefault *p = arg;
    const size_t step = (size_t)2 << 20;
#ifdef MADV_POPULATE_WRITE
    for (char *a = p->lo; a < p->hi; a += step)
        if (madvise(a, (size_t)(p->hi - a) < step ? (size_t)(p->hi - a) : step, MADV_POPULATE_WRITE))
            break;
#else
    (void)p;
    (void)step;
#endif
    return NULL;
}

static void prefault_start(prefault *p, void *base, size_t bytes)
{
    memset(p, 0, sizeof *p);
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (bytes < ((size_t)64 << 20) || pg == 0 || (pg & (pg - 1)))
        return;
    p->lo = (char *)(((uintptr_t)base + pg - 1) & ~(pg - 1));
    p->hi = (char *)(((uintptr_t)base + bytes) & ~(pg - 1));
    p->started = pthread_create(&p->thread, NULL, prefault_run, p) == 0;
}

static void prefault_join(prefault *p)
{
    if (p->started)
        pthread_join(p->thread, NULL);
    p->started = 0;
}

static void settled_free(settled *st)
{
    free(st->dense);
    free(st->keys);
    free(st->vals);
}

static inline simt *settled_slot(settled *st, int rank, int chunk, int create)
{
    /* Diagonal layout: cell ((chunk - rank K) mod C, rank).  Ring-like steps, where rank r handles chunk
     * r K + const, then touch consecutive cells instead of one page per rank.  0 <= rank K < C, so one
     * conditional add replaces the modulo. */
    int64_t d = (int64_t)chunk - (int64_t)rank * st->k;
    if (d < 0)
        d += st->n_chunks;
    uint64_t key = (uint64_t)d * (uint64_t)st->n_ranks + (uint64_t)rank;
    if (st->dense)
        return &st->dense[key];
    uint64_t h = (key * 0x9e3779b97f4a7c15ull) >> 17;
    for (uint64_t i = h & st->mask;; i = (i + 1) & st->mask) {
        if (st->keys[i] == key + 1)
            return &st->vals[i];
        if (st->keys[i] == 0) {
            if (!create)
                return NULL;
            st->keys[i] = key + 1;
            st->vals[i] = 0;
            return &st->vals[i];
        }
    }
}

static int cmp_issue(const void *pa, const void *pb, void *u)
{
    const tc_xfer *x = u;
    int a = *(const int *)pa, b = *(const int *)pb;
    if (x[a].t_start != x[b].t_start)
        return x[a].t_start < x[b].t_start ? -1 : 1;
    if (x[a].step != x[b].step)
        return x[a].step < x[b].step ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_end(const void *pa, const void *pb, void *u)
{
    const tc_xfer *x = u;
    int a = *(const int *)pa, b = *(const int *)pb;
    if (x[a].t_end != x[b].t_end)
        return x[a].t_end < x[b].t_end ? -1 : 1;
    return a < b ? -1 : a > b;
}

static tc_status sorted_order(const tc_sched *s, int (*cmp)(const void *, const void *, void *), int **out)
{
    const int M = s->n_xfers;
    int *o = malloc((size_t)(M ? M : 1) * sizeof *o);
    if (!o)
        return TC_ERR_NOMEM;
    for (int i = 0; i < M; i++)
        o[i] = i;
    qsort_r(o, (size_t)M, sizeof *o, cmp, (void *)s->xfers);
    *out = o;
    return TC_OK;
}

tc_status tc_sim_issue_order(const tc_sched *s, int **out)
{
    return sorted_order(s, cmp_issue, out);
}

double tc_sim_time_tol(const tc_sched *s)
{
    double span = 0;
    for (int i = 0; i < s->n_xfers; i++)
        if (fabs(s->xfers[i].t_end) > span)
            span = fabs(s->xfers[i].t_end);
    return 1e-9 * span;
}

/*
 * The order the event model visits transfers in.  issue == NULL: the identity, assumed to be both the issue
 * order and the end order (generators emit that), checked as the pass goes; arrivals then live in a ring
 * window over the positions not yet committed.  Otherwise issue/ends are sorted permutations, pos their
 * inverse, and arrivals a flat array by issue position.
 */
typedef struct order {
    int *issue, *ends, *pos;
    double tol;          /* time comparisons: 1e-9 of the schedule's span */
    simt *arr;           /* arrival by issue position, cap a power of two, index & (cap - 1) */
    int64_t cap;
} order;

static void order_free(order *o)
{
    free(o->issue);
    free(o->ends);
    free(o->pos);
    free(o->arr);
}

/* Grow the identity order's window to hold positions [lo, hi]: the ring keeps its entries' positions. */
static tc_status window_fit(order *o, int64_t lo, int64_t hi)
{
    if (hi - lo < o->cap)
        return TC_OK;
    int64_t cap = o->cap;
    while (hi - lo >= cap)
        cap *= 2;
    simt *n = malloc((size_t)cap * sizeof *n);
    if (!n)
        return TC_ERR_NOMEM;
    for (int64_t p = lo; p < hi; p++)
        n[p & (cap - 1)] = o->arr[p & (o->cap - 1)];
    free(o->arr);
    o->arr = n;
    o->cap = cap;
    return TC_OK;
}

/* The permuted order: sort by issue and by end time, invert the issue order. */
static tc_status order_sorted(const tc_sched *s, order *o)
{
    const int M = s->n_xfers;
    o->tol = tc_sim_time_tol(s);
    tc_status st;
    if ((st = sorted_order(s, cmp_issue, &o->issue)) || (st = sorted_order(s, cmp_end, &o->ends)))
        return st;
    o->cap = 1;
    while (o->cap < M)
        o->cap *= 2;
    o->pos = malloc((size_t)(M ? M : 1) * sizeof *o->pos);
    o->arr = malloc((size_t)o->cap * sizeof *o->arr);
    if (!o->pos || !o->arr)
        return TC_ERR_NOMEM;
    for (int k = 0; k < M; k++)
        o->pos[o->issue[k]] = k;
    return TC_OK;
}

/* May the transfer at issue position py, which ended by the horizon, feed the one at position k? */
static inline int visible(const tc_xfer *y, int py, int k, double zero_horizon)
{
    return py < k && !(y->t_end == y->t_start && y->t_end >= zero_horizon);
}

/* Commit the arrival of the transfer at issue position py: its destination holds its chunk from then on. */
static inline void settle(settled *tab, const order *o, const tc_xfer *y, int py)
{
    simt *v = settled_slot(tab, y->dst, y->chunk, 1);
    const simt a = o->arr[py & (o->cap - 1)];
    if (a > *v)
        *v = a;
}

/* A link as the one pass sees it: its ends, the time one chunk holds it, when it is free, its busy time,
 * and the two latest ready times of the chunks it served, by channel (the first hops of one (link,
 * destination) pair; -1 for forwarded hops), v1 >= v2 with c1 != c2.  One record per link keeps a hop's
 * reads on one cache line. */
typedef struct lane {
    int src, dst;
    simt occ, lat, free, busy, v1, v2; /* lat: start to arrival (the link model; occ under tacos) */
    int64_t c1, c2;
} lane;

/* Record a chunk of channel c ready at r on L (the two largest ready times of distinct channels). */
static inline void lane_note(lane *L, simt r, int64_t c)
{
    if (c == L->c1) {
        if (r > L->v1)
            L->v1 = r;
    } else if (r > L->v1) {
        L->v2 = L->v1;
        L->c2 = L->c1;
        L->v1 = r;
        L->c1 = c;
    } else if (c == L->c2) {
        if (r > L->v2)
            L->v2 = r;
    } else if (r > L->v2) {
        L->v2 = r;
        L->c2 = c;
    }
}

/* How one pass ended. */
enum { PASS_DONE = 0, PASS_UNSORTED, PASS_CONTENDED };

/*
 * One pass of the event model in order *o.  Sets *how to PASS_UNSORTED (and stops early) when the identity
 * order turns out not to be the issue and end order, to PASS_CONTENDED when a link would have served a
 * later-issued chunk while it idled (the event queue must decide).
 */
static tc_status event_pass(tc_ctx *ctx, sim_router *ro, order *o, double bytes, tc_sim_result *r,
                            sim_binner *bn, int *how)
{
    const tc_sched *s = ro->s;
    const tc_topo *t = ro->t;
    const tc_xfer *xs = s->xfers;
    const int M = s->n_xfers, n_links = t->n_links, n_chunks = s->n_chunks;
    const int ident = o->issue == NULL;
    const double tol = o->tol;
    tc_status st = TC_OK;
    lane *ln = malloc(((size_t)n_links + 1) * sizeof *ln);
    simt *hop0 = ro->lead ? malloc(((size_t)M + 1) * sizeof *hop0) : NULL; /* multicast: first hops' ends */
    settled tab;
    if (ro->lead && !hop0) {
        free(ln);
        return TC_ERR_NOMEM;
    }
    if (!ln || (st = settled_init(&tab, s->n_ranks, n_chunks, M))) {
        free(ln);
        free(hop0);
        if (!st)
            return TC_ERR_NOMEM;
        settled_free(&tab);
        return st;
    }
    for (int i = 0; hop0 && i < M; i++)
        hop0[i] = -1; /* not sent yet */
    prefault pf;
    prefault_start(&pf, tab.dense, tab.dense ? (size_t)s->n_ranks * (size_t)n_chunks * sizeof *tab.dense : 0);
    for (int l = 0; l < n_links; l++) {
        ln[l] = (lane){t->links[l].src, t->links[l].dst, 0, 0, 0, 0, 0, 0, INT64_MIN, INT64_MIN};
        if ((st = tc_sim_link_cost(ctx, t, l, bytes, ro->epoch, &ln[l].occ, &ln[l].lat)))
            goto done;
    }
    *how = PASS_DONE;
    simt makespan = 0;
    int e = 0, dilation = 0;
    const int codec = ro->pre || ro->post, scaled = ro->scale != NULL; /* sparse plans' per-transfer costs */
    for (int k = 0; k < M; k++) {
        const int i = ident ? k : o->issue[k];
        const tc_xfer *x = &xs[i];
        const int l1 = x->link;
        /* the dense table is read and written at random (one cache miss per transfer each): the cells of
         * the transfer SIM_PREFETCH ahead and of the arrival SIM_PREFETCH ahead are fetched early (issue 27) */
        if (tab.dense && k + SIM_PREFETCH < M) {
            const tc_xfer *xa = &xs[ident ? k + SIM_PREFETCH : o->issue[k + SIM_PREFETCH]];
            if ((unsigned)xa->chunk < (unsigned)n_chunks && (unsigned)xa->src < (unsigned)tab.n_ranks)
                __builtin_prefetch(settled_slot(&tab, xa->src, xa->chunk, 0));
        }
        if (tab.dense && e + SIM_PREFETCH < k) {
            const tc_xfer *xb = &xs[ident ? e + SIM_PREFETCH : o->ends[e + SIM_PREFETCH]];
            if ((unsigned)xb->chunk < (unsigned)n_chunks && (unsigned)xb->dst < (unsigned)tab.n_ranks)
                __builtin_prefetch(settled_slot(&tab, xb->dst, xb->chunk, 0));
        }
        /* the one-link case checked inline, the rest in full */
        const int simple = x->route_len == 0 && l1 >= 0 && l1 < n_links && ln[l1].src == x->src &&
                           ln[l1].dst == x->dst && (unsigned)x->chunk < (unsigned)n_chunks && x->step >= 0 &&
                           x->t_end >= x->t_start;
        if (!simple && (st = tc_sim_check_xfer(ctx, s, t, i)))
            goto done;
        if (ident && k > 0 &&
            (x[-1].t_start > x->t_start || (x[-1].t_start == x->t_start && x[-1].step > x->step) ||
             x[-1].t_end > x->t_end)) {
            *how = PASS_UNSORTED;
            goto done;
        }
        /* Commit, in end order, every arrival the schedule says happened by x's start, of transfers already
         * simulated.  One that x cannot see yet (issued with or after x, or of zero length at x's start: it
         * applies after the departures at its time, the checker's rule) ends the committed prefix; those
         * behind it that x can see are committed now as well, and again later (a max: twice is harmless). */
        const double horizon = x->t_start + tol, zero_horizon = x->t_start - tol;
        for (; e < k; e++) {
            const int y = ident ? e : o->ends[e], py = ident ? e : o->pos[y];
            if (xs[y].t_end > horizon)
                break;
            if (!visible(&xs[y], py, k, zero_horizon)) {
                for (int f = e + 1; f < (ident ? k : M); f++) {
                    const int y2 = ident ? f : o->ends[f], p2 = ident ? f : o->pos[y2];
                    if (xs[y2].t_end > horizon)
                        break;
                    if (visible(&xs[y2], p2, k, zero_horizon))
                        settle(&tab, o, &xs[y2], p2);
                }
                break;
            }
            settle(&tab, o, &xs[y], py);
        }
        const simt *v = settled_slot(&tab, x->src, x->chunk, 0);
        simt ready = v ? *v : 0;
        const int *links;
        int n;
        if (simple) {
            links = &x->link;
            n = 1;
        } else if ((st = tc_sim_route_of(ctx, ro, i, &links, &n)))
            goto done;
        simt pre = 0, post = 0, occ, lat;
        if (codec && n) {
            if ((st = tc_sim_xfer_codec(ctx, ro, i, bytes, &pre, &post)))
                goto done;
            if (__builtin_add_overflow(ready, pre, &ready) || ready > SIM_T_MAX) {
                st = tc_sim_too_long(ctx, s, i);
                goto done;
            }
        }
        int h0 = 0; /* a multicast follower goes on from its leader's arrival at the switch */
        if (ro->lead && ro->lead[i] != i && n > 1) {
            if (hop0[ro->lead[i]] < 0) { /* the leader comes later in this order */
                *how = ident ? PASS_UNSORTED : PASS_CONTENDED;
                goto done;
            }
            ready = hop0[ro->lead[i]];
            h0 = 1;
        }
        for (int h = h0; h < n; h++) {
            lane *L = &ln[links[h]];
            occ = L->occ;
            lat = L->lat;
            if (scaled && (st = tc_sim_xfer_occ(ctx, ro, i, links[h], bytes, &occ, &lat)))
                goto done;
            /* a chunk ready before one served ahead of it would have gone first, unless both are sends of
             * one channel, which keep the plan's order */
            const int64_t chan = h ? -1 : (int64_t)links[0] * s->n_ranks + x->dst;
            if (ready < (h || L->c1 != chan ? L->v1 : L->v2)) {
                *how = PASS_CONTENDED;
                goto done;
            }
            lane_note(L, ready, chan);
            const simt st0 = ready > L->free ? ready : L->free;
            if (__builtin_add_overflow(st0, occ, &L->free) || L->free > SIM_T_MAX) {
                st = tc_sim_too_long(ctx, s, i);
                goto done;
            }
            L->busy += occ;
            if (bn->tl)
                tc_sim_bin_add(bn, links[h], sim_sec(st0), sim_sec(L->free));
            ready = st0 + lat; /* no overflow: st0 and lat are at most SIM_T_MAX */
            if (ready > SIM_T_MAX) {
                st = tc_sim_too_long(ctx, s, i);
                goto done;
            }
            if (h == 0 && hop0)
                hop0[i] = ready;
        }
        if (post && (__builtin_add_overflow(ready, post, &ready) || ready > SIM_T_MAX)) {
            st = tc_sim_too_long(ctx, s, i);
            goto done;
        }
        if (n > dilation)
            dilation = n;
        if (ident && k - e >= o->cap && (st = window_fit(o, e, k)))
            goto done;
        o->arr[k & (o->cap - 1)] = ready;
        if (ready > makespan)
            makespan = ready;
    }
    r->time = sim_sec(makespan);
    r->max_dilation = dilation;
    for (int l = 0; l < n_links; l++)
        r->link_busy[l] = sim_sec(ln[l].busy);
done:
    prefault_join(&pf);
    free(hop0);
    free(ln);
    settled_free(&tab);
    return st;
}

/* An abandoned pass wrote only its share of the timeline. */
static void timeline_clear(const tc_sim_result *r, sim_binner *bn)
{
    if (bn->tl)
        memset(bn->tl, 0, (size_t)r->n_links * bn->bins * sizeof *bn->tl);
}

/* The event model: one pass in the schedule's own order, or, when that is not the issue order, a pass
 * in sorted order; the event queue when a pass finds a link that had to choose, or when asked. */
static tc_status run_event(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn,
                           const tc_sim_opts *opts)
{
    const tc_sched *s = ro->s;
    const int M = s->n_xfers;
    if (opts->general || opts->explain)
        return tc_sim_queue_run(ctx, ro, bytes, r, bn, opts->explain);
    order o;
    memset(&o, 0, sizeof o);
    /* assumed end order: the span is at one end */
    o.tol = M ? 1e-9 * fmax(fabs(s->xfers[0].t_end), fabs(s->xfers[M - 1].t_end)) : 0;
    o.cap = 4096;
    o.arr = malloc((size_t)o.cap * sizeof *o.arr);
    int how = PASS_DONE;
    tc_status st = o.arr ? event_pass(ctx, ro, &o, bytes, r, bn, &how) : TC_ERR_NOMEM;
    if (st == TC_OK && how == PASS_UNSORTED) {
        order_free(&o);
        memset(&o, 0, sizeof o);
        timeline_clear(r, bn);
        if ((st = order_sorted(s, &o)) == TC_OK)
            st = event_pass(ctx, ro, &o, bytes, r, bn, &how);
    }
    order_free(&o);
    if (st == TC_OK && how == PASS_CONTENDED) {
        timeline_clear(r, bn);
        st = tc_sim_queue_run(ctx, ro, bytes, r, bn, opts->trace);
    }
    return st;
}

/* ------------------------------------------------------------------------------------------------ */

static double size_bytes_per_chunk(const tc_sched *s, uint64_t size)
{
    if (s->n_chunks <= 0)
        return 0;
    if (s->coll == TC_COLL_ALLTOALL)
        return (double)size * s->n_ranks / s->n_chunks;
    return (double)size / s->n_chunks;
}

static tc_status run_model(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn,
                           const tc_sim_opts *opts)
{
    memset(r->link_busy, 0, (size_t)r->n_links * sizeof *r->link_busy);
    memset(r->link_bytes, 0, (size_t)r->n_links * sizeof *r->link_bytes);
    r->max_congestion = r->max_dilation = 0;
    r->n_rounds = 0;
    r->ab_dilation = r->ab_congestion = 0;
    r->general = 0;
    r->cp_hops = r->cp_queue_hops = 0;
    r->cp_latency = r->cp_transfer = r->cp_forward = r->cp_queue = 0;
    tc_status st = r->model == TC_SIM_AB ? run_ab(ctx, ro, bytes, r, bn) : run_event(ctx, ro, bytes, r, bn, opts);
    if (st == TC_OK && r->model == TC_SIM_EVENT && !ro->scale) /* bytes carried: busy time over one chunk's */
        for (int l = 0; l < r->n_links; l++) {
            double occ, lat;
            tc_link_times(ro->t, l, bytes, ro->epoch, &occ, &lat);
            r->link_bytes[l] = occ > 0 ? r->link_busy[l] / occ * bytes : 0;
        }
    for (int x = 0; st == TC_OK && r->model == TC_SIM_EVENT && ro->scale && x < ro->s->n_xfers; x++) {
        const int *links; /* per-transfer sizes: the bytes each transfer moved over its links */
        int n;
        if ((st = tc_sim_route_of(ctx, ro, x, &links, &n)) == TC_OK)
            for (int h = 0; h < n; h++)
                r->link_bytes[links[h]] += bytes * ro->scale[x];
    }
    return st;
}

/* The lower bounds, computed quietly on a second thread (a topology without them has no bound). */
typedef struct bound_job {
    const tc_topo *topo;
    const tc_sched *s;
    uint64_t size;
    tc_bound b;
    tc_status st;
    pthread_t thread;
    int started;
} bound_job;

static void *bound_job_run(void *arg)
{
    bound_job *j = arg;
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    quiet.sink = NULL;
    j->st = tc_sim_bound(&quiet, j->topo, j->s, j->size, &j->b);
    return NULL;
}

tc_status tc_sim_run(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const tc_sim_opts *opts,
                     tc_sim_result **out)
{
    tc_sim_opts defaults;
    if (!opts) {
        tc_sim_opts_init(&defaults);
        opts = &defaults;
    }
    if (topo->n_switches > 0)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0,
                        "sim: topology has %d switch(es): unwind them first", topo->n_switches);
    if (topo->n_npus != s->n_ranks)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0,
                        "sim: schedule has %d ranks but topology '%s' has %d npus", s->n_ranks,
                        topo->name ? topo->name : "?", topo->n_npus);
    if (opts->model != TC_SIM_AB && opts->model != TC_SIM_EVENT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: unknown model %d", (int)opts->model);
    tc_status st;
    sim_router ro;
    memset(&ro, 0, sizeof ro);
    ro.s = s;
    ro.t = topo;
    ro.scale = opts->xfer_scale;
    ro.pre = opts->xfer_pre;
    ro.post = opts->xfer_post;
    sim_binner bn = {0};
    tc_sim_result *r = calloc(1, sizeof *r);
    if (!r)
        return TC_ERR_NOMEM;
    /* The bounds need shortest paths and cuts: on a second core, beside the model. */
    bound_job bj = {.topo = topo, .s = s, .size = opts->size, .st = TC_ERR_UNSUPPORTED};
    if (!opts->no_bound)
        bj.started = pthread_create(&bj.thread, NULL, bound_job_run, &bj) == 0;
    if ((st = tc_sim_mcast_leaders(s, topo, &ro.lead)))
        goto fail;
    r->model = opts->model;
    r->coll = s->coll;
    r->n_ranks = s->n_ranks;
    r->size = opts->size ? opts->size : s->size_bytes;
    r->chunk_bytes = opts->size ? size_bytes_per_chunk(s, opts->size) : (double)s->chunk_bytes;
    if (s->wire_scale > 0)
        r->chunk_bytes *= s->wire_scale;
    ro.epoch = tc_link_epoch(topo, r->chunk_bytes);
    r->n_links = topo->n_links;
    r->link_busy = calloc((size_t)topo->n_links + 1, sizeof *r->link_busy);
    r->link_util = calloc((size_t)topo->n_links + 1, sizeof *r->link_util);
    r->link_bytes = calloc((size_t)topo->n_links + 1, sizeof *r->link_bytes);
    if (!r->link_busy || !r->link_util || !r->link_bytes) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    if ((st = run_model(ctx, &ro, r->chunk_bytes, r, &bn, opts)))
        goto fail;
    if (opts->bins > 0 && r->time > 0) {
        r->bins = opts->bins;
        r->timeline = calloc((size_t)topo->n_links * opts->bins + 1, sizeof *r->timeline);
        if (!r->timeline) {
            st = TC_ERR_NOMEM;
            goto fail;
        }
        bn.tl = r->timeline;
        bn.bins = opts->bins;
        bn.width = r->time / opts->bins;
        tc_sim_result keep = *r; /* the second run only bins: keep the first run's figures */
        if ((st = run_model(ctx, &ro, r->chunk_bytes, r, &bn, opts)))
            goto fail;
        *r = keep; /* the same arrays, refilled with the same values */
    }
    double sum = 0;
    for (int l = 0; l < topo->n_links; l++) {
        r->link_util[l] = r->time > 0 ? r->link_busy[l] / r->time : 0;
        sum += r->link_util[l];
        if (r->link_util[l] > r->max_util)
            r->max_util = r->link_util[l];
    }
    r->mean_util = topo->n_links ? sum / topo->n_links : 0;
    if (r->time > 0) {
        r->algbw = (double)r->size / r->time;
        r->busbw = r->algbw * tc_coll_busbw_factor(s->coll, s->n_ranks);
    }
    if (bj.started)
        pthread_join(bj.thread, NULL);
    else if (!opts->no_bound)
        bound_job_run(&bj);
    if (bj.st == TC_OK) {
        r->bound = bj.b;
        r->ideal = bj.b.ideal;
        if (bj.b.time > 0 && r->time > 0)
            r->efficiency = bj.b.time / r->time;
    }
    tc_sim_router_free(&ro);
    *out = r;
    return TC_OK;
fail:
    if (bj.started)
        pthread_join(bj.thread, NULL);
    tc_sim_router_free(&ro);
    tc_sim_result_free(r);
    return st;
}
