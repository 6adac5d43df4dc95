/*
 * sim: the cost of a schedule on a topology (see include/tacos/sim.h for the two models' definitions).
 *
 * Data flow: validate every transfer against the topology and resolve its route (own route, own link, or
 * an igraph shortest path cached per source), then run the chosen model over flat arrays:
 *  - ab: counting sort by step, per round accumulate bytes per link and the longest summed alpha;
 *  - event: issue order by (t_start, step, index); "source holds the chunk" is a per-(rank, chunk)
 *    settled arrival time, committed from the transfers in t_end order as the issue time passes them;
 *    one FIFO per link (free time), store and forward per hop.
 * With a timeline requested, the model runs twice: once for the total time, once to bin the occupancy.
 * Costs: O(M log M) when the transfers are not already in issue order, O(M + hops) otherwise.
 */
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <igraph/igraph.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    free(r->timeline);
    free(r);
}

/* ------------------------------------------------------------------------------------------------ */
/* Routes                                                                                            */

typedef struct router {
    const tc_sched *s;
    const tc_topo *t;
    igraph_t g;
    int have_graph;
    int **pred;     /* per source: inbound link of each vertex on its BFS tree (NULL until needed) */
    int *buf;       /* route scratch for igraph paths */
} router;

static void router_free(router *ro)
{
    if (ro->pred) {
        for (int v = 0; v < ro->t->n_npus; v++)
            free(ro->pred[v]);
        free(ro->pred);
    }
    free(ro->buf);
    if (ro->have_graph)
        igraph_destroy(&ro->g);
}

/* BFS tree from `src` with igraph; edge ids equal link ids. */
static tc_status router_tree(router *ro, int src)
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
        igraph_error_t e = igraph_create(&ro->g, &ev, t->n_npus, IGRAPH_DIRECTED);
        igraph_vector_int_destroy(&ev);
        if (e)
            return TC_ERR_NOMEM;
        ro->have_graph = 1;
        ro->pred = calloc((size_t)t->n_npus, sizeof *ro->pred);
        ro->buf = malloc((size_t)(t->n_npus + 1) * sizeof *ro->buf);
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
    int *p = e ? NULL : malloc((size_t)t->n_npus * sizeof *p);
    if (p)
        for (int v = 0; v < t->n_npus; v++)
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
static tc_status route_of(tc_ctx *ctx, router *ro, int xi, const int **links, int *n)
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
        if (l < 0 || len >= t->n_npus)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: transfer %d: npu %d cannot reach npu %d", xi,
                            x->src, x->dst);
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

/* Check ranks, chunks, times and the links of every transfer once. */
static tc_status validate(tc_ctx *ctx, const tc_sched *s, const tc_topo *t)
{
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src < 0 || x->src >= t->n_npus || x->dst < 0 || x->dst >= t->n_npus)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                            "sim: transfer %d: rank %d->%d out of range (topology has %d npus)", i, x->src,
                            x->dst, t->n_npus);
        if (x->chunk < 0 || x->chunk >= s->n_chunks)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: transfer %d: chunk %d out of range (%d chunks)",
                            i, x->chunk, s->n_chunks);
        if (x->step < 0)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: transfer %d: negative step %d", i, x->step);
        if (x->route_len > 0) {
            if (x->route_off < 0 || x->route_off + x->route_len > s->n_route)
                return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: transfer %d: route out of range", i);
            int at = x->src;
            for (int h = 0; h < x->route_len; h++) {
                int l = s->route[x->route_off + h];
                if (l < 0 || l >= t->n_links || t->links[l].src != at)
                    return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                                    "sim: transfer %d (%d->%d): route hop %d is not a link leaving npu %d", i,
                                    x->src, x->dst, h, at);
                at = t->links[l].dst;
            }
            if (at != x->dst)
                return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sim: transfer %d: route ends at npu %d, not %d", i,
                                at, x->dst);
        } else if (x->link >= 0) {
            if (x->link >= t->n_links || t->links[x->link].src != x->src || t->links[x->link].dst != x->dst)
                return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                                "sim: transfer %d: link %d does not join npu %d to npu %d", i, x->link, x->src,
                                x->dst);
        }
    }
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Timeline binning                                                                                  */

typedef struct binner {
    double *tl;    /* n_links * bins */
    int bins;
    double width;  /* seconds per bin */
} binner;

static void bin_add(binner *b, int link, double t0, double t1)
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

static tc_status run_ab(tc_ctx *ctx, router *ro, double bytes, tc_sim_result *r, binner *bn)
{
    const tc_sched *s = ro->s;
    const tc_topo *t = ro->t;
    const int M = s->n_xfers;
    int S = 1;
    for (int i = 0; i < M; i++)
        if (s->xfers[i].step + 1 > S)
            S = s->xfers[i].step + 1;
    tc_status st = TC_OK;
    int *start = calloc((size_t)S + 1, sizeof *start), *order = malloc((size_t)(M ? M : 1) * sizeof *order);
    int *cnt = calloc((size_t)t->n_links + 1, sizeof *cnt);
    int *tlist = malloc(((size_t)t->n_links + 1) * sizeof *tlist);
    if (!start || !order || !cnt || !tlist) {
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
            if ((st = route_of(ctx, ro, order[j], &links, &n)))
                goto done;
            double a = 0;
            for (int h = 0; h < n; h++) {
                int l = links[h];
                a += t->links[l].alpha;
                if (cnt[l]++ == 0)
                    tlist[nt++] = l;
            }
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
            double busy = t->links[l].beta * bytes * cnt[l];
            if (busy > cong)
                cong = busy;
            if (cnt[l] > r->max_congestion)
                r->max_congestion = cnt[l];
            r->link_busy[l] += busy;
            bin_add(bn, l, now, now + busy);
            cnt[l] = 0;
        }
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
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Model event                                                                                       */

/* "What rank v holds of chunk c is settled at time T": dense array or open-addressing hash. */
typedef struct settled {
    double *dense;
    uint64_t *keys;  /* hash: key + 1, 0 = empty */
    double *vals;
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

static void settled_free(settled *st)
{
    free(st->dense);
    free(st->keys);
    free(st->vals);
}

static double *settled_slot(settled *st, int rank, int chunk, int create)
{
    /* Diagonal layout: cell ((chunk - rank K) mod C, rank).  Ring-like steps, where rank r handles chunk
     * r K + const, then touch consecutive cells instead of one page per rank. */
    int64_t d = ((int64_t)chunk - (int64_t)rank * st->k) % st->n_chunks;
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

/* An index permutation sorted by cmp, or NULL in *out when the identity already is (saves memory). */
static tc_status sorted_order(const tc_sched *s, int (*cmp)(const void *, const void *, void *), int **out)
{
    const int M = s->n_xfers;
    *out = NULL;
    int sorted = 1;
    for (int i = 1; i < M && sorted; i++) {
        int a = i - 1, b = i;
        if (cmp(&a, &b, s->xfers) > 0)
            sorted = 0;
    }
    if (sorted)
        return TC_OK;
    int *o = malloc((size_t)M * sizeof *o);
    if (!o)
        return TC_ERR_NOMEM;
    for (int i = 0; i < M; i++)
        o[i] = i;
    qsort_r(o, (size_t)M, sizeof *o, cmp, (void *)s->xfers);
    *out = o;
    return TC_OK;
}

static tc_status run_event(tc_ctx *ctx, router *ro, double bytes, tc_sim_result *r, binner *bn)
{
    const tc_sched *s = ro->s;
    const tc_topo *t = ro->t;
    const tc_xfer *xs = s->xfers;
    const int M = s->n_xfers;
    tc_status st = TC_OK;
    int *issue = NULL, *ends = NULL;
    double *arrival = NULL, *lfree = NULL, *occ = NULL;
    settled tab;
    memset(&tab, 0, sizeof tab);
    double span = 0;
    for (int i = 0; i < M; i++) {
        if (!(xs[i].t_end >= xs[i].t_start))
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                            "sim: transfer %d (%d->%d chunk %d) ends at %g, before its start %g", i, xs[i].src,
                            xs[i].dst, xs[i].chunk, xs[i].t_end, xs[i].t_start);
        if (fabs(xs[i].t_end) > span)
            span = fabs(xs[i].t_end);
    }
    const double tol = 1e-9 * span; /* schedule times are computed sums: compare with a tolerance */
    if ((st = sorted_order(s, cmp_issue, &issue)) || (st = sorted_order(s, cmp_end, &ends)))
        goto done;
    arrival = malloc((size_t)(M ? M : 1) * sizeof *arrival);
    lfree = calloc((size_t)t->n_links + 1, sizeof *lfree);
    occ = malloc(((size_t)t->n_links + 1) * sizeof *occ);
    if (!arrival || !lfree || !occ || (st = settled_init(&tab, s->n_ranks, s->n_chunks, M))) {
        st = st ? st : TC_ERR_NOMEM;
        goto done;
    }
    for (int l = 0; l < t->n_links; l++)
        occ[l] = t->links[l].beta * bytes;
    double makespan = 0;
    int e = 0;
    for (int k = 0; k < M; k++) {
        const int i = issue ? issue[k] : k;
        const tc_xfer *x = &xs[i];
        for (; e < M; e++) { /* commit every arrival the schedule says happened by x's start */
            int y = ends ? ends[e] : e;
            /* a zero-length transfer applies after the departures at its time (the checker's rule) */
            if (xs[y].t_end > x->t_start + tol || (xs[y].t_end == xs[y].t_start && xs[y].t_end >= x->t_start - tol))
                break;
            double *v = settled_slot(&tab, xs[y].dst, xs[y].chunk, 1);
            if (arrival[y] > *v)
                *v = arrival[y];
        }
        double *v = settled_slot(&tab, x->src, x->chunk, 0);
        double ready = v ? *v : 0;
        const int *links;
        int n;
        if (x->route_len == 0 && x->link >= 0) { /* the common case, inline */
            links = &x->link;
            n = 1;
        } else if ((st = route_of(ctx, ro, i, &links, &n)))
            goto done;
        for (int h = 0; h < n; h++) {
            const int l = links[h];
            double st0 = ready > lfree[l] ? ready : lfree[l];
            double fin = st0 + occ[l];
            lfree[l] = fin;
            r->link_busy[l] += occ[l];
            if (bn->tl)
                bin_add(bn, l, st0, fin);
            ready = fin + t->links[l].alpha;
        }
        if (n > r->max_dilation)
            r->max_dilation = n;
        arrival[i] = ready;
        if (ready > makespan)
            makespan = ready;
    }
    r->time = makespan;
done:
    free(issue);
    free(ends);
    free(arrival);
    free(lfree);
    free(occ);
    settled_free(&tab);
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

static tc_status run_model(tc_ctx *ctx, router *ro, double bytes, tc_sim_result *r, binner *bn)
{
    memset(r->link_busy, 0, (size_t)r->n_links * sizeof *r->link_busy);
    r->max_congestion = r->max_dilation = 0;
    r->n_rounds = 0;
    return r->model == TC_SIM_AB ? run_ab(ctx, ro, bytes, r, bn) : run_event(ctx, ro, bytes, r, bn);
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
    tc_status st = validate(ctx, s, topo);
    if (st)
        return st;
    router ro;
    memset(&ro, 0, sizeof ro);
    ro.s = s;
    ro.t = topo;
    binner bn = {0};
    tc_sim_result *r = calloc(1, sizeof *r);
    if (!r)
        return TC_ERR_NOMEM;
    r->model = opts->model;
    r->coll = s->coll;
    r->n_ranks = s->n_ranks;
    r->size = opts->size ? opts->size : s->size_bytes;
    r->chunk_bytes = opts->size ? size_bytes_per_chunk(s, opts->size) : (double)s->chunk_bytes;
    r->n_links = topo->n_links;
    r->link_busy = calloc((size_t)topo->n_links + 1, sizeof *r->link_busy);
    r->link_util = calloc((size_t)topo->n_links + 1, sizeof *r->link_util);
    if (!r->link_busy || !r->link_util) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    if ((st = run_model(ctx, &ro, r->chunk_bytes, r, &bn)))
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
        double t1 = r->time;
        if ((st = run_model(ctx, &ro, r->chunk_bytes, r, &bn)))
            goto fail;
        r->time = t1;
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
    tc_topo_info info;
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    quiet.sink = NULL;
    if (tc_topo_info_get(&quiet, topo, &info) == TC_OK) {
        r->ideal = tc_topo_ideal_time(&info, s->coll, r->size, s->n_ranks);
        if (r->ideal > 0 && r->time > 0)
            r->efficiency = r->ideal / r->time;
    }
    router_free(&ro);
    *out = r;
    return TC_OK;
fail:
    router_free(&ro);
    tc_sim_result_free(r);
    return st;
}
