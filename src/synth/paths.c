/*
 * paths: one earliest-arrival path per chunk over link calendars, the time-expanded network searched chunk
 * by chunk (gather and all-to-all, where every chunk has one destination).
 *
 * Accepts: a syn_net (switch vertices included) and a syn_job of mode SYN_GATHER (chunk c goes from rank
 *   c / K to job->root) or SYN_ALLTOALL (chunk c goes from rank c / (R K) to rank (c / K) mod R, R = ranks).
 * Returns: the makespan, the number of distinct start times (rounds) and transfers and, when job->rec is
 *   set, one transfer per hop appended to that schedule in start order (times in ps, step = index of its
 *   start time among the distinct ones, src/dst vertices of the net).
 * Method: the static time-distance D(v, d) of every vertex to every destination (Dijkstra over link costs
 *   alpha + beta * chunk).  The chunks are taken one by one (gather: nearest source first, so the root's
 *   in-links fill from time 0; scatter and all-to-all: farthest first, so the long paths claim the cut links
 *   first and the short ones fill in around them, and a pair whose destination sits at the far end of a cut
 *   link crosses it last); each takes its earliest-arrival path from its source at time 0, found by A*
 *   over the timetables (vertices by arrival + D, a lower bound on the rest), where a link is entered at the
 *   first gap of its timetable after the chunk is there that is long enough for one chunk (gap filling: a
 *   later chunk may pass an earlier one on an idle stretch), so congested links are gone around.  Store and
 *   forward: a hop starts once the chunk has fully arrived; switch vertices are hops like any other.  On
 *   small problems the order is restarted with other ties and repaired (the chunks that arrived last go
 *   first next time), keeping the shortest makespan.  Ties go to the cheaper link, then to the lower link
 *   id, so the result depends on the seed only through the order of chunks at equal distance.
 * Calendars (syn_cal, also the all-reduce overlap's): per link its busy blocks in time order with every gap
 *   between two blocks at least one chunk long (a shorter gap can never be used, so it is merged into the
 *   blocks around it): the first usable start at or after t is found by one binary search.
 * Cost: O((V + m) log m) per chunk at most (V vertices), usually little more than the vertices on its
 *   shortest paths; O(R (m + V log V)) for the distances; memory R x V distances for all-to-all and
 *   scatter, V for gather.
 * Limits: a chunk whose destination it cannot reach returns TC_ERR_INTERNAL (callers check reachability).
 * Trace, gather to 0 on the path 0 <- 1 <- 2, K = 1, cost c: chunk 1 (nearest) takes 1->0 at [0, c];
 *   chunk 2 takes 2->1 at [0, c] and 1->0 at [c, 2c] (the first gap after its arrival); done at 2c.
 */
#include "synth_int.h"

#include <stdlib.h>
#include <string.h>

/* First start >= t at which one chunk (cost) fits. */
int64_t tc_synth_cal_earliest(const syn_cal *c, int64_t t, int64_t cost)
{
    int lo = 0, hi = c->n;
    while (lo < hi) { /* the first block ending after t */
        const int mid = lo + (hi - lo) / 2;
        if (c->be[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->n && t + cost > c->bs[lo])
        t = c->be[lo]; /* the gap after block lo is at least one chunk long, or the calendar ends there */
    return t;
}

/* Reserve [a, a + cost), which tc_synth_cal_earliest returned, merging gaps shorter than cost into the
 * blocks around them. */
tc_status tc_synth_cal_insert(syn_cal *c, int64_t a, int64_t cost)
{
    const int64_t b = a + cost;
    if (c->n > 0 && c->bs[c->n - 1] < b && a - c->be[c->n - 1] < cost) {
        c->be[c->n - 1] = b; /* the common case (the engine's busy_out): after the last block, less than a
                                chunk after it, joined to it as below */
        return TC_OK;
    }
    int i = 0, lo = 0, hi = c->n;
    while (lo < hi) { /* the first block starting at or after b */
        const int mid = lo + (hi - lo) / 2;
        if (c->bs[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    i = lo; /* blocks before i end by a */
    const int join_prev = i > 0 && a - c->be[i - 1] < cost;
    const int join_next = i < c->n && c->bs[i] - b < cost;
    if (join_prev && join_next) {
        c->be[i - 1] = c->be[i];
        memmove(c->bs + i, c->bs + i + 1, (size_t)(c->n - i - 1) * sizeof *c->bs);
        memmove(c->be + i, c->be + i + 1, (size_t)(c->n - i - 1) * sizeof *c->be);
        c->n--;
        return TC_OK;
    }
    if (join_prev) {
        c->be[i - 1] = b;
        return TC_OK;
    }
    if (join_next) {
        c->bs[i] = a;
        return TC_OK;
    }
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 4;
        int64_t *s = realloc(c->bs, (size_t)cap * sizeof *s);
        if (!s)
            return TC_ERR_NOMEM;
        c->bs = s;
        int64_t *e = realloc(c->be, (size_t)cap * sizeof *e);
        if (!e)
            return TC_ERR_NOMEM;
        c->be = e;
        c->cap = cap;
    }
    memmove(c->bs + i + 1, c->bs + i, (size_t)(c->n - i) * sizeof *c->bs);
    memmove(c->be + i + 1, c->be + i, (size_t)(c->n - i) * sizeof *c->be);
    c->bs[i] = a;
    c->be[i] = b;
    c->n++;
    return TC_OK;
}

void tc_synth_cals_free(syn_cal *c, int m)
{
    if (!c)
        return;
    for (int l = 0; l < m; l++) {
        free(c[l].bs);
        free(c[l].be);
    }
    free(c);
}

/* One hop of a chunk's path. */
typedef struct hop {
    int64_t t0;
    int link, chunk;
} hop;

typedef struct pe {
    const syn_net *net;
    const syn_job *job;
    int n, R, C;
    int n_dst;            /* destinations with a distance row: 1 (gather) or R (all-to-all) */
    int64_t *D;           /* n_dst x n: time-distance of every vertex to the destination */
    syn_cal *cal;         /* per link */
    /* search scratch */
    int64_t *arr;         /* per vertex: earliest arrival this search */
    int *pred;            /* per vertex: link it is reached by */
    int *stamp, cur;      /* per vertex: search that touched it */
    int *heap, hn, hcap;  /* open vertices (lazy: an entry per improvement) */
    int64_t *hkey;
    int *path;
    hop *hops;
    int64_t n_hops, cap_hops;
    hop *best_hops;       /* the best pass's hops */
    int64_t n_best, cap_best;
} pe;

#define REPAIR_WORK ((int64_t)1 << 19) /* chunks x vertices up to which the repair passes run */
#define REPAIR_PASSES 4                 /* at most this many passes */
#define REPAIR_RESTARTS 4               /* orders tried, each with its repair passes (up to REPAIR_WORK / 8) */
#define REPAIR_STALE 4                  /* stop after this many passes without a shorter makespan */

/* Dijkstra toward d over in-links: row[v] = cheapest time (ps) from v to d, INT64_MAX when v cannot reach
 * d (see synth_int.h). */
tc_status tc_synth_dist_to(const syn_net *net, int d, int64_t *row)
{
    const int n = net->n;
    for (int v = 0; v < n; v++)
        row[v] = INT64_MAX;
    int hn = 0;
    int64_t *key = malloc(((size_t)net->m + (size_t)n + 1) * sizeof *key);
    int *hv = malloc(((size_t)net->m + (size_t)n + 1) * sizeof *hv);
    if (!key || !hv) {
        free(key);
        free(hv);
        return TC_ERR_NOMEM;
    }
    row[d] = 0;
    hv[hn] = d;
    key[hn++] = 0;
    while (hn) {
        const int v = hv[0];
        const int64_t kv = key[0];
        const int x = hv[--hn];
        const int64_t kx = key[hn];
        int j = 0;
        for (;;) {
            int c = 2 * j + 1;
            if (c >= hn)
                break;
            if (c + 1 < hn && key[c + 1] < key[c])
                c++;
            if (key[c] >= kx)
                break;
            hv[j] = hv[c];
            key[j] = key[c];
            j = c;
        }
        if (hn) {
            hv[j] = x;
            key[j] = kx;
        }
        if (kv > row[v])
            continue;
        for (int k = net->in_off[v]; k < net->in_off[v + 1]; k++) {
            const int l = net->in_lk[k], u = net->src[l];
            int64_t nd = kv + net->cost[l]; /* both at most SYN_TIME_MAX_PS + 1: no overflow */
            if (nd > SYN_TIME_MAX_PS)
                nd = SYN_TIME_MAX_PS + 1; /* beyond the clock: saturated, the callers refuse it */
            if (u >= 0 && nd < row[u]) {
                row[u] = nd;
                int p = hn++;
                while (p > 0 && key[(p - 1) / 2] > nd) {
                    hv[p] = hv[(p - 1) / 2];
                    key[p] = key[(p - 1) / 2];
                    p = (p - 1) / 2;
                }
                hv[p] = u;
                key[p] = nd;
            }
        }
    }
    free(key);
    free(hv);
    return TC_OK;
}

/* Min-heap of (key, vertex) with lazy deletion: the search's open vertices by arrival + distance left. */
static void heap_push(pe *e, int64_t key, int v)
{
    int p = e->hn++;
    while (p > 0 && e->hkey[(p - 1) / 2] > key) {
        e->heap[p] = e->heap[(p - 1) / 2];
        e->hkey[p] = e->hkey[(p - 1) / 2];
        p = (p - 1) / 2;
    }
    e->heap[p] = v;
    e->hkey[p] = key;
}

static int heap_pop(pe *e, int64_t *key)
{
    const int top = e->heap[0], x = e->heap[--e->hn];
    const int64_t kx = e->hkey[e->hn];
    *key = e->hkey[0];
    int j = 0;
    for (;;) {
        int c = 2 * j + 1;
        if (c >= e->hn)
            break;
        if (c + 1 < e->hn && e->hkey[c + 1] < e->hkey[c])
            c++;
        if (e->hkey[c] >= kx)
            break;
        e->heap[j] = e->heap[c];
        e->hkey[j] = e->hkey[c];
        j = c;
    }
    if (e->hn) {
        e->heap[j] = x;
        e->hkey[j] = kx;
    }
    return top;
}

/*
 * Route chunk c from s to d (distance row `row`) on its earliest-arrival path and reserve it: A* over the
 * timetables, vertices by arrival + static distance to d (a lower bound on the rest, so the first time d
 * is taken off the heap its arrival is the earliest: waiting is allowed, so arrival times are monotone
 * along a path).  Uncongested, it opens little more than the shortest paths; congested, it may go around.
 */
static tc_status route_chunk(pe *e, int c, int s, int d, const int64_t *row)
{
    const syn_net *net = e->net;
    e->cur++;
    e->hn = 0;
    e->stamp[s] = e->cur;
    e->arr[s] = 0;
    e->pred[s] = -1;
    heap_push(e, row[s], s);
    while (e->hn) {
        int64_t key;
        const int u = heap_pop(e, &key);
        if (key != e->arr[u] + row[u])
            continue; /* a stale entry */
        if (u == d)
            break;
        const int64_t t = e->arr[u];
        for (int k = net->out_off[u]; k < net->out_off[u + 1]; k++) {
            const int l = net->out_lk[k], v = net->dst[l];
            if (v < 0 || row[v] == INT64_MAX)
                continue;
            const int64_t a = tc_synth_cal_earliest(&e->cal[l], t, tc_synth_hold(net, l)) + net->cost[l];
            if (e->stamp[v] != e->cur || a < e->arr[v]) {
                e->stamp[v] = e->cur;
                e->arr[v] = a;
                e->pred[v] = l;
                if (e->hn >= e->hcap)
                    return TC_ERR_INTERNAL;
                heap_push(e, a + row[v], v);
            }
        }
    }
    if (e->stamp[d] != e->cur)
        return TC_ERR_INTERNAL;
    if (e->arr[d] > SYN_TIME_MAX_PS)
        return TC_ERR_LIMIT;
    int len = 0;
    for (int v = d; v != s; v = net->src[e->pred[v]])
        e->path[len++] = e->pred[v];
    if (e->n_hops + len > e->cap_hops) {
        int64_t cap = 2 * e->cap_hops + len + 1024;
        hop *h = realloc(e->hops, (size_t)cap * sizeof *h);
        if (!h)
            return TC_ERR_NOMEM;
        e->hops = h;
        e->cap_hops = cap;
    }
    int64_t t = 0;
    tc_status st;
    for (int i = len - 1; i >= 0; i--) { /* the search's times, hop by hop from the source */
        const int l = e->path[i];
        const int64_t t0 = tc_synth_cal_earliest(&e->cal[l], t, tc_synth_hold(net, l)); /* busy: the hold */
        if ((st = tc_synth_cal_insert(&e->cal[l], t0, tc_synth_hold(net, l))))
            return st;
        e->hops[e->n_hops++] = (hop){t0, l, c};
        t = t0 + net->cost[l];
    }
    return TC_OK;
}

static int cmp_hop(const void *a, const void *b)
{
    const hop *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    if (x->link != y->link)
        return x->link < y->link ? -1 : 1;
    return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

/* Chunks in routing order: key = distance (ascending for gather, descending for all-to-all), then a
 * seeded hash. */
typedef struct ord { int64_t key, base; uint64_t tie; int c; } ord;

static int cmp_ord(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->tie != y->tie)
        return x->tie < y->tie ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Where chunk c starts and where it must go. */
static void chunk_ends(const syn_job *job, int c, int *s, int *d)
{
    const int R = job->n_ranks, K = job->K;
    switch (job->mode) {
    case SYN_ALLTOALL:
        *s = c / (R * K);
        *d = (c / K) % R;
        break;
    case SYN_SCATTER:
        *s = job->root;
        *d = c / K;
        break;
    default:
        *s = c / K;
        *d = job->root;
        break;
    }
}

tc_status tc_synth_paths_run(const syn_net *net, const syn_job *job, syn_result *res)
{
    pe E, *e = &E;
    memset(e, 0, sizeof *e);
    e->net = net;
    e->job = job;
    e->n = net->n;
    e->R = job->n_ranks;
    e->C = job->n_chunks;
    const int n = e->n, R = e->R;
    const int a2a = job->mode == SYN_ALLTOALL, sc = job->mode == SYN_SCATTER;
    e->n_dst = a2a || sc ? R : 1;
    tc_status st = TC_ERR_NOMEM;
    ord *order = NULL, *scratch = NULL;
    e->D = malloc((size_t)e->n_dst * (size_t)n * sizeof *e->D);
    e->cal = calloc((size_t)net->m + 1, sizeof *e->cal);
    e->arr = malloc(((size_t)n + 1) * sizeof *e->arr);
    e->pred = malloc(((size_t)n + 1) * sizeof *e->pred);
    e->stamp = calloc((size_t)n + 1, sizeof *e->stamp);
    e->hcap = net->m + n + 1; /* at most one entry per link relaxed, plus the source */
    e->heap = malloc((size_t)e->hcap * sizeof *e->heap);
    e->hkey = malloc((size_t)e->hcap * sizeof *e->hkey);
    e->path = malloc(((size_t)n + 1) * sizeof *e->path);
    order = malloc(((size_t)e->C + 1) * sizeof *order);
    scratch = malloc(((size_t)e->C + 1) * sizeof *scratch);
    if (!e->D || !e->cal || !e->arr || !e->pred || !e->stamp || !e->heap || !e->hkey || !e->path || !order ||
        !scratch)
        goto done;
    for (int k = 0; k < e->n_dst; k++)
        if ((st = tc_synth_dist_to(net, e->n_dst > 1 ? k : job->root, e->D + (size_t)k * n)))
            goto done;
    int no = 0;
    for (int c = 0; c < e->C; c++) {
        int s, d;
        chunk_ends(job, c, &s, &d);
        if (s == d)
            continue;
        const int64_t dist = e->D[(size_t)(e->n_dst > 1 ? d : 0) * n + s];
        if (dist == INT64_MAX) {
            st = TC_ERR_INTERNAL;
            goto done;
        }
        const int64_t key = job->mode == SYN_GATHER ? dist : -dist;
        order[no++] = (ord){key, key, 0, c};
    }
    /* on small problems, restarts with other orders among chunks at equal distance, each followed by repair
     * passes (the chunks that arrived last go first next time) while they shorten the makespan */
    const int small = (int64_t)no * n <= REPAIR_WORK;
    const int restarts = (int64_t)no * n <= REPAIR_WORK / 8 ? REPAIR_RESTARTS : 1, passes = small ? REPAIR_PASSES : 1;
    /* the search's early stop (job->stop) only where one pass decides: a pass over the second-best time may
     * still be followed by one under it, and giving up then would make the choice depend on the threads */
    const int stoppable = restarts * passes == 1;
    int64_t best = INT64_MAX;
    for (int rs = 0; rs < restarts; rs++)
    for (int pass = 0, stale = 0; pass < passes && stale < REPAIR_STALE; pass++) {
        if (pass == 0) {
            for (int i = 0; i < no; i++) {
                order[i].key = order[i].base;
                order[i].tie = mix(job->seed ^ (uint64_t)order[i].c ^ (0x632be59bd9b4e019ull * (uint64_t)rs));
            }
            qsort(order, (size_t)no, sizeof *order, cmp_ord);
        }
        for (int l = 0; l < net->m; l++)
            e->cal[l].n = 0;
        e->n_hops = 0;
        int64_t span = 0;
        for (int i = 0; i < no; i++) {
            const int c = order[i].c;
            int s, d;
            chunk_ends(job, c, &s, &d);
            if ((st = route_chunk(e, c, s, d, e->D + (size_t)(e->n_dst > 1 ? d : 0) * n)))
                goto done;
            const hop *h = &e->hops[e->n_hops - 1];
            order[i].key = h->t0 + net->cost[h->link]; /* its arrival */
            if (order[i].key > span)
                span = order[i].key;
            if (stoppable && job->stop && (i & 63) == 63 && job->stop->fn(job->stop->u, job->stop_offset + span)) {
                res->stopped = 1; /* this candidate cannot win */
                st = TC_OK;
                goto done;
            }
        }
        if (span < best) {
            best = span;
            stale = 0;
            hop *t = e->best_hops;
            int64_t tc = e->cap_best;
            e->best_hops = e->hops;
            e->cap_best = e->cap_hops;
            e->n_best = e->n_hops;
            e->hops = t;
            e->cap_hops = tc;
            e->n_hops = 0;
        } else
            stale++;
        if (pass + 1 < passes) { /* stable: the last arrivals to the front, the rest in their order */
            int k = 0;
            for (int i = 0; i < no; i++)
                if (order[i].key == span)
                    scratch[k++] = order[i];
            for (int i = 0; i < no; i++)
                if (order[i].key != span)
                    scratch[k++] = order[i];
            memcpy(order, scratch, (size_t)no * sizeof *order);
        }
    }
    hop *bh = e->best_hops;
    const int64_t nb = e->n_best;
    qsort(bh, (size_t)nb, sizeof *bh, cmp_hop);
    int64_t makespan = 0;
    int rounds = 0;
    for (int64_t i = 0; i < nb; i++) {
        const hop *h = &bh[i];
        const int64_t t1 = h->t0 + net->cost[h->link];
        if (t1 > makespan)
            makespan = t1;
        if (i == 0 || h->t0 != h[-1].t0)
            rounds++;
        if (job->rec && (st = tc_sched_add(job->rec, net->src[h->link], net->dst[h->link], h->chunk, TC_OP_COPY,
                                           h->link, rounds - 1, (double)h->t0, (double)t1, NULL, 0)))
            goto done;
    }
    res->stopped = 0;
    res->makespan = makespan;
    res->rounds = rounds;
    res->n_xfers = nb;
    st = TC_OK;
done:
    tc_synth_cals_free(e->cal, net->m);
    free(e->D);
    free(e->arr);
    free(e->pred);
    free(e->stamp);
    free(e->heap);
    free(e->hkey);
    free(e->path);
    free(e->hops);
    free(e->best_hops);
    free(order);
    free(scratch);
    return st;
}
