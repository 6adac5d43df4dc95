/*
 * queue: the event model's general path (include/tacos/sim.h): a discrete-event simulation.
 *
 * Accepts: any schedule the one pass accepts (sim.c checks the same things), with any link contention.
 * Returns: the event model's time, per-link busy time and dilation; with `explain`, the critical path.
 * Model: events are "hop h of transfer x is ready at time T" and "link l lets go of its chunk at time T",
 *   popped in (time, ready before free, issue position or link id, hop) order.  A channel is the first hops
 *   of the transfers from one link to one destination (one program's sends to one peer, an MSCCL
 *   threadblock's): they go in the plan's order, a send waiting behind an earlier one that is not ready, as
 *   the MSCCL interpreter runs a threadblock's steps one after the other, each first waiting for the steps it
 *   depends on (Azure/msccl-executor-nccl, src/device/msccl_kernel.cu, the loop over mscclTB.nSteps).
 *   Whenever a link is free it starts, among the ready head sends of its channels and the forwarded hops
 *   waiting for it, the one ready first, ties in issue order; with none ready it idles.  A ready event at
 *   the time the link lets go is popped first, so it competes, as in the one pass.  A transfer is ready once
 *   every transfer it depends on (sim.h: into its source, same chunk, ended by its start in schedule times,
 *   visible to it) has arrived: per (rank, chunk) the transfers into it are sorted by end time; those ending
 *   before x.t_start - tol form a prefix that x waits for as a whole (a cursor per cell counts the arrived
 *   prefix), those within the tolerance are edges of their own.
 * Multicast (mcast.c): a follower sends no first hop of its own; when its leader's first hop ends, the
 *   follower's second hop is queued at the next link, ready then.
 * Cost: O((M + hops) log M) time, O(M + hops) memory (routes, dependency cells, event heap).
 * Critical path (explain): each link service records how it started (at its data's arrival, or when the
 *   chunk before it on the link let go) and that predecessor; walking back from the last arrival gives a
 *   chain of services from time 0 whose durations sum to the time.
 * Trace, ring 0->1->2, transfer A of chunk a from 0 to 2 over both links, issued before B of chunk b from
 *   1 to 2: B heads its channel (1->2 to NPU 2) and is ready at 0, so it starts at 0 while A holds 0->1; A
 *   reaches 1 at c (one occupancy) and is forwarded on 1->2 when B lets go at c; done at 2c.
 */
#include "sim_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_READY = 0, EV_FREE = 1 };
#define SIM_NEVER INT64_MAX
enum { SVC_DATA = 0, SVC_QUEUE = 1 };

typedef struct qev {
    simt t;
    int type;  /* EV_READY, EV_FREE */
    int key;   /* ready: issue position; free: link */
    int x, h;  /* ready: transfer and hop */
} qev;

static inline int ev_less(const qev *a, const qev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->type != b->type)
        return a->type < b->type;
    if (a->key != b->key)
        return a->key < b->key;
    return a->h < b->h;
}

/* A chunk waiting for a link (a channel's head send or a forwarded hop), served in (ready, issue position,
 * hop) order. */
typedef struct waiter {
    int pos, h, x;
    simt ready;
} waiter;

static inline int w_less(const waiter *a, const waiter *b)
{
    if (a->ready != b->ready)
        return a->ready < b->ready;
    return a->pos != b->pos ? a->pos < b->pos : a->h < b->h;
}

/* One 4-ary min-heap, written once for both element types: NAME##_push adds a built element (passed by
 * fields, so the record is built in place: no store-forwarding stall per event), NAME##_pop removes the
 * least.  Four children side by side: half the levels of a binary heap, and the children of a node share
 * cache lines (the waiter heaps of a congested link hold 1e5 chunks on 1,024 ranks).  Both orders are
 * total (ties end at the issue position and hop, or are equal events), so the arity changes no result. */
#define HEAP_D 4
#define HEAP(NAME, T, LESS)                                                                           \
    typedef struct NAME {                                                                             \
        T *v;                                                                                         \
        size_t n, cap;                                                                                \
    } NAME;                                                                                           \
    static inline tc_status NAME##_push(NAME *hp, T e)                                               \
    {                                                                                                 \
        if (hp->n == hp->cap) {                                                                       \
            size_t cap = hp->cap ? 2 * hp->cap : 8;                                                   \
            T *v = realloc(hp->v, cap * sizeof *v);                                                   \
            if (!v)                                                                                   \
                return TC_ERR_NOMEM;                                                                  \
            hp->v = v;                                                                                \
            hp->cap = cap;                                                                            \
        }                                                                                             \
        size_t i = hp->n++;                                                                           \
        while (i > 0 && LESS(&e, &hp->v[(i - 1) / HEAP_D])) {                                         \
            hp->v[i] = hp->v[(i - 1) / HEAP_D];                                                       \
            i = (i - 1) / HEAP_D;                                                                     \
        }                                                                                             \
        hp->v[i] = e;                                                                                 \
        return TC_OK;                                                                                 \
    }                                                                                                 \
    static inline T NAME##_pop(NAME *hp)                                                             \
    {                                                                                                 \
        T top = hp->v[0], last = hp->v[--hp->n];                                                      \
        size_t i = 0;                                                                                 \
        for (;;) {                                                                                    \
            size_t c = HEAP_D * i + 1, end = c + HEAP_D;                                              \
            if (c >= hp->n)                                                                           \
                break;                                                                                \
            if (end > hp->n)                                                                          \
                end = hp->n;                                                                          \
            for (size_t k = c + 1; k < end; k++)                                                      \
                if (LESS(&hp->v[k], &hp->v[c]))                                                       \
                    c = k;                                                                            \
            if (!LESS(&hp->v[c], &last))                                                              \
                break;                                                                                \
            hp->v[i] = hp->v[c];                                                                      \
            i = c;                                                                                    \
        }                                                                                             \
        if (hp->n)                                                                                    \
            hp->v[i] = last;                                                                          \
        return top;                                                                                   \
    }

HEAP(evheap, qev, ev_less)
HEAP(wheap, waiter, w_less)

static inline tc_status ev_push(evheap *hp, simt t, int type, int key, int x, int h)
{
    return evheap_push(hp, (qev){t, type, key, x, h});
}

typedef struct qlink {
    simt occ, lat, busy_total; /* lat: start to arrival (the link model; occ under tacos) */
    simt busy_until;  /* end of the chunk it holds, when busy */
    simt wake;        /* time of its pending wake-up event, SIM_NEVER when none */
    int busy;
    int64_t last_svc;
    wheap w;          /* ready chunks waiting */
} qlink;

static inline tc_status w_push(qlink *L, int pos, int h, int x, simt ready)
{
    return wheap_push(&L->w, (waiter){pos, h, x, ready});
}

/* The whole state of one run. */
typedef struct qsim {
    tc_ctx *ctx;
    const tc_sched *s;
    const tc_topo *t;
    const sim_router *ro;
    double bytes;         /* chunk bytes */
    const double *pre;    /* per-transfer compression (tc_sim_opts.xfer_pre), NULL when none */
    sim_binner *bn;
    int M;
    int *pos;             /* issue position of each transfer */
    int64_t *hop_off;     /* routes: links of x at hop_link[hop_off[x] .. hop_off[x + 1]) */
    int *hop_link;
    int64_t n_hops, cap_hops;
    /* dependencies */
    int *need;            /* prefix (0/1) + edges not yet arrived */
    simt *rdy;            /* ready time so far */
    int *rdy_from;        /* the transfer whose arrival set it, -1 none */
    simt *arr;            /* arrival */
    int *inord;           /* transfers sorted by (dst, chunk, t_end, pos) */
    int *inidx;           /* transfer -> index in inord */
    int *head;            /* inord index -> first index of its cell */
    int *cend;            /* cell head -> end of the cell in inord */
    int *plen;            /* x -> length of the prefix of its cell it waits for (0: none) */
    int *done;            /* cell head -> arrived prefix length */
    simt *pmax;           /* cell head -> largest arrival in that prefix */
    int *pfrom;           /* cell head -> its transfer */
    int *outl;            /* transfers with plen > 0, by (cell, issue position) */
    int *ocur, *oend;     /* cell head -> cursor and end in outl */
    unsigned char *arrived; /* by inord index */
    int *eoff, *edst;     /* edges y -> x in CSR by y */
    qlink *ln;
    int *ch_list;         /* transfers with a first hop, by channel, in issue order */
    int *ch_of;           /* transfer -> its channel */
    int *ch_hol, *ch_end; /* channel -> its head send and end in ch_list */
    const int *lead;      /* multicast: per transfer its leader (sim_router.lead), NULL none */
    int *fol_off, *fol;   /* multicast: the followers of each leader, CSR */
    unsigned char *known; /* the transfer's ready time is known (everything it waits for has arrived) */
    evheap hp;
    simt makespan;
    /* explain */
    int explain;
    int64_t *svc_pred;
    unsigned char *svc_kind;
    int *svc_x;
    int64_t *crit_of;     /* transfer -> service that fixed its arrival, -1 none */
} qsim;

static tc_status push_ready(qsim *q, int x, int h, simt t)
{
    return ev_push(&q->hp, t, EV_READY, q->pos[x], x, h);
}

/* A chunk of x's hop h, ready at `ready` (now or later), joins link l's queue; an idle link is woken when
 * the first chunk of its queue is ready. */
static tc_status enqueue(qsim *q, int l, int x, int h, simt ready)
{
    qlink *L = &q->ln[l];
    tc_status st = w_push(L, q->pos[x], h, x, ready);
    if (st == TC_OK && !L->busy && ready < L->wake) {
        L->wake = ready;
        st = ev_push(&q->hp, ready, EV_FREE, l, -1, 0);
    }
    return st;
}

/* Everything x waits for has arrived: it is ready at rdy[x].  A first hop that does not head its channel
 * waits for its turn (link_next); a head joins its link's queue; a local copy gets its ready event. */
static tc_status released(qsim *q, int x)
{
    q->known[x] = 1;
    if (q->lead && q->lead[x] != x && q->hop_off[x + 1] - q->hop_off[x] > 1)
        return TC_OK; /* a multicast follower: its leader's first hop carries it to the switch */
    if (q->hop_off[x + 1] == q->hop_off[x]) /* a local copy */
        return push_ready(q, x, 0, q->rdy[x]);
    if (q->pre) { /* compression at the source before the first hop (per-transfer costs) */
        simt pre, post;
        tc_status st = tc_sim_xfer_codec(q->ctx, q->ro, x, q->bytes, &pre, &post);
        if (st)
            return st;
        if (__builtin_add_overflow(q->rdy[x], pre, &q->rdy[x]) || q->rdy[x] > SIM_T_MAX)
            return tc_sim_too_long(q->ctx, q->s, x);
    }
    if (q->ch_list[q->ch_hol[q->ch_of[x]]] != x)
        return TC_OK;
    return enqueue(q, q->hop_link[q->hop_off[x]], x, 0, q->rdy[x]);
}

static void ready_max(qsim *q, int x, simt a, int from)
{
    if (q->rdy_from[x] < 0 || a > q->rdy[x]) {
        q->rdy[x] = a;
        q->rdy_from[x] = from;
    }
}

/* Transfer y arrived at time a: release what waited for it. */
static tc_status arrive(qsim *q, int y, simt a)
{
    tc_status st;
    q->arr[y] = a;
    if (a > q->makespan)
        q->makespan = a;
    for (int e = q->eoff[y]; e < q->eoff[y + 1]; e++) {
        const int x = q->edst[e];
        ready_max(q, x, a, y);
        if (--q->need[x] == 0 && (st = released(q, x)))
            return st;
    }
    const int i = q->inidx[y], c = q->head[i];
    q->arrived[i] = 1;
    while (c + q->done[c] < q->cend[c] && q->arrived[c + q->done[c]]) {
        const int z = q->inord[c + q->done[c]];
        if (q->pfrom[c] < 0 || q->arr[z] > q->pmax[c]) {
            q->pmax[c] = q->arr[z];
            q->pfrom[c] = z;
        }
        q->done[c]++;
        while (q->ocur[c] < q->oend[c] && q->plen[q->outl[q->ocur[c]]] <= q->done[c]) {
            const int x = q->outl[q->ocur[c]++];
            ready_max(q, x, q->pmax[c], q->pfrom[c]);
            if (--q->need[x] == 0 && (st = released(q, x)))
                return st;
        }
    }
    return TC_OK;
}

/* Hop h of x starts on link l at time T, having waited since `ready`. */
static tc_status start(qsim *q, int x, int h, int l, simt T, simt ready)
{
    qlink *L = &q->ln[l];
    const int64_t sv = q->hop_off[x] + h;
    simt end, occ = L->occ, lat = L->lat, arr;
    tc_status st;
    if (q->ro->scale && (st = tc_sim_xfer_occ(q->ctx, q->ro, x, l, q->bytes, &occ, &lat)))
        return st;
    if (__builtin_add_overflow(T, occ, &end) || end > SIM_T_MAX || __builtin_add_overflow(T, lat, &arr) ||
        arr > SIM_T_MAX)
        return tc_sim_too_long(q->ctx, q->s, x);
    L->busy = 1;
    L->busy_until = end;
    L->wake = SIM_NEVER;
    L->busy_total += occ;
    tc_sim_bin_add(q->bn, l, sim_sec(T), sim_sec(end));
    if (q->explain) { /* it waited behind the chunk before it on the link, or started when its data came */
        const int kind = ready < T ? SVC_QUEUE : SVC_DATA;
        q->svc_kind[sv] = (unsigned char)kind;
        q->svc_x[sv] = x;
        if (kind == SVC_QUEUE)
            q->svc_pred[sv] = L->last_svc;
        else if (h == 1 && q->lead && q->lead[x] != x)
            q->svc_pred[sv] = q->hop_off[q->lead[x]]; /* a multicast follower's data came on its leader */
        else if (h > 0)
            q->svc_pred[sv] = sv - 1;
        else
            q->svc_pred[sv] = q->rdy_from[x] >= 0 ? q->crit_of[q->rdy_from[x]] : -1;
    }
    L->last_svc = sv;
    if ((st = ev_push(&q->hp, end, EV_FREE, l, -1, 0)))
        return st;
    /* the link is free at `end`, the chunk at the far end at `arr` (the same time under the tacos model) */
    if (h == 0 && q->fol_off) /* a multicast leader's chunk is at the switch for its followers too */
        for (int k = q->fol_off[x]; k < q->fol_off[x + 1]; k++)
            if ((st = enqueue(q, q->hop_link[q->hop_off[q->fol[k]] + 1], q->fol[k], 1, arr)))
                return st;
    if (q->hop_off[x] + h + 1 < q->hop_off[x + 1]) /* forwarded: queued at the next link, ready at arrival */
        return enqueue(q, q->hop_link[sv + 1], x, h + 1, arr);
    if (q->explain)
        q->crit_of[x] = sv;
    if (q->ro->post) { /* decompression at the destination after the last hop (per-transfer costs) */
        simt pre, post;
        if ((st = tc_sim_xfer_codec(q->ctx, q->ro, x, q->bytes, &pre, &post)))
            return st;
        if (__builtin_add_overflow(arr, post, &arr) || arr > SIM_T_MAX)
            return tc_sim_too_long(q->ctx, q->s, x);
    }
    return arrive(q, x, arr);
}

/* Link l is free at time T: start the chunk of its queue that was ready first, if it is ready by T; else
 * sleep until it is. */
static tc_status link_next(qsim *q, int l, simt T)
{
    qlink *L = &q->ln[l];
    if (!L->w.n)
        return TC_OK; /* idle until something is queued */
    if (L->w.v[0].ready > T) {
        if (L->w.v[0].ready < L->wake) {
            L->wake = L->w.v[0].ready;
            return ev_push(&q->hp, L->wake, EV_FREE, l, -1, 0);
        }
        return TC_OK;
    }
    const waiter w = wheap_pop(&L->w);
    if (w.h == 0) { /* the channel's next send heads it now: it joins the queue once its data is known */
        const int c = q->ch_of[w.x];
        if (++q->ch_hol[c] < q->ch_end[c]) {
            const int x = q->ch_list[q->ch_hol[c]];
            tc_status st;
            if (q->known[x] && (st = w_push(L, q->pos[x], 0, x, q->rdy[x])))
                return st;
        }
    }
    return start(q, w.x, w.h, l, T, w.ready);
}

/* ------------------------------------------------------------------------------------------------ */
/* Set-up                                                                                            */

static int cmp_in(const void *pa, const void *pb, void *u)
{
    const qsim *q = u;
    const int a = *(const int *)pa, b = *(const int *)pb;
    const tc_xfer *x = &q->s->xfers[a], *y = &q->s->xfers[b];
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    if (x->t_end != y->t_end)
        return x->t_end < y->t_end ? -1 : 1;
    return q->pos[a] < q->pos[b] ? -1 : q->pos[a] > q->pos[b];
}

/* First index in inord[lo, hi) whose (dst, chunk) is >= (v, c). */
static int cell_lower(const qsim *q, int v, int c)
{
    int lo = 0, hi = q->M;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        const tc_xfer *y = &q->s->xfers[q->inord[mid]];
        if (y->dst < v || (y->dst == v && y->chunk < c))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static tc_status build_routes(qsim *q, sim_router *ro, int *dilation)
{
    tc_status st;
    q->cap_hops = (int64_t)q->M + 16;
    if (!(q->hop_link = malloc((size_t)q->cap_hops * sizeof *q->hop_link)))
        return TC_ERR_NOMEM;
    for (int x = 0; x < q->M; x++) {
        const int *links;
        int n;
        if ((st = tc_sim_check_xfer(q->ctx, q->s, q->t, x)) || (st = tc_sim_route_of(q->ctx, ro, x, &links, &n)))
            return st;
        if (q->n_hops + n > q->cap_hops) {
            int64_t cap = 2 * q->cap_hops + n;
            int *v = realloc(q->hop_link, (size_t)cap * sizeof *v);
            if (!v)
                return TC_ERR_NOMEM;
            q->hop_link = v;
            q->cap_hops = cap;
        }
        memcpy(q->hop_link + q->n_hops, links, (size_t)n * sizeof *links);
        q->n_hops += n;
        q->hop_off[x + 1] = q->n_hops;
        if (n > *dilation)
            *dilation = n;
    }
    return TC_OK;
}

/* Dependency cells, prefixes and tie edges (see the file comment).  issue: transfers in issue order. */
static tc_status build_deps(qsim *q, const int *issue)
{
    const tc_xfer *xs = q->s->xfers;
    const int M = q->M;
    const double tol = tc_sim_time_tol(q->s);
    tc_status st = TC_ERR_NOMEM;
    int *cellx = malloc((size_t)(M ? M : 1) * sizeof *cellx), *fill = calloc((size_t)M + 1, sizeof *fill);
    if (!cellx || !fill)
        goto done;
    for (int i = 0; i < M; i++)
        q->inord[i] = i;
    qsort_r(q->inord, (size_t)M, sizeof *q->inord, cmp_in, q);
    for (int i = 0; i < M; i++) {
        q->inidx[q->inord[i]] = i;
        const tc_xfer *y = &xs[q->inord[i]];
        const int same = i > 0 && xs[q->inord[i - 1]].dst == y->dst && xs[q->inord[i - 1]].chunk == y->chunk;
        q->head[i] = same ? q->head[i - 1] : i;
        q->pfrom[i] = -1;
    }
    for (int i = M - 1; i >= 0; i--)
        q->cend[q->head[i]] = i + 1 == M || q->head[i + 1] != q->head[i] ? i + 1 : q->cend[q->head[i + 1]];
    /* per x: its cell, prefix length and tie edges (counted on the first pass, filled on the second) */
    int n_edges = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int x = 0; x < M; x++) {
            const tc_xfer *t = &xs[x];
            int a = pass ? cellx[x] : cell_lower(q, t->src, t->chunk);
            if (pass == 0 && (a >= M || xs[q->inord[a]].dst != t->src || xs[q->inord[a]].chunk != t->chunk))
                a = -1;
            if (a < 0) {
                cellx[x] = -1;
                continue;
            }
            const int b = q->cend[a];
            if (pass == 0) {
                int lo = a, hi = b; /* the first with t_end >= t_start - tol */
                while (lo < hi) {
                    const int mid = lo + (hi - lo) / 2;
                    if (xs[q->inord[mid]].t_end < t->t_start - tol)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                q->plen[x] = lo - a;
                cellx[x] = a;
                q->need[x] = q->plen[x] > 0;
            }
            for (int j = a + q->plen[x]; j < b && xs[q->inord[j]].t_end <= t->t_start + tol; j++) {
                const int y = q->inord[j];
                if (q->pos[y] >= q->pos[x] || xs[y].t_end == xs[y].t_start)
                    continue; /* issued with or after x, or of zero length at x's start */
                if (pass == 0) {
                    q->eoff[y + 1]++;
                    q->need[x]++;
                    n_edges++;
                } else
                    q->edst[q->eoff[y] + fill[y]++] = x;
            }
        }
        if (pass == 0) {
            for (int y = 0; y < M; y++)
                q->eoff[y + 1] += q->eoff[y];
            if (!(q->edst = malloc((size_t)(n_edges ? n_edges : 1) * sizeof *q->edst)))
                goto done;
        }
    }
    /* outgoing lists: the transfers that wait for a prefix, grouped by cell, in issue order */
    memset(fill, 0, (size_t)M * sizeof *fill);
    for (int x = 0; x < M; x++)
        if (q->plen[x] > 0)
            fill[cellx[x]]++;
    int at = 0;
    for (int c = 0; c < M; c++) {
        q->ocur[c] = at;
        at += fill[c];
        q->oend[c] = q->ocur[c];
    }
    for (int k = 0; k < M; k++) {
        const int x = issue[k];
        if (q->plen[x] > 0)
            q->outl[q->oend[cellx[x]]++] = x;
    }
    st = TC_OK;
done:
    free(cellx);
    free(fill);
    return st;
}

static int cmp_chan(const void *pa, const void *pb, void *u)
{
    const qsim *q = u;
    const int a = *(const int *)pa, b = *(const int *)pb;
    const int la = q->hop_link[q->hop_off[a]], lb = q->hop_link[q->hop_off[b]];
    if (la != lb)
        return la < lb ? -1 : 1;
    if (q->s->xfers[a].dst != q->s->xfers[b].dst)
        return q->s->xfers[a].dst < q->s->xfers[b].dst ? -1 : 1;
    return q->pos[a] < q->pos[b] ? -1 : q->pos[a] > q->pos[b];
}

/* Channels: the transfers with a first hop grouped by (first link, destination), each in issue order. */
static void build_channels(qsim *q, const int *issue)
{
    int n = 0;
    for (int k = 0; k < q->M; k++) {
        const int x = issue[k];
        if (q->hop_off[x + 1] > q->hop_off[x] &&
            !(q->lead && q->lead[x] != x && q->hop_off[x + 1] - q->hop_off[x] > 1)) /* followers send no hop 0 */
            q->ch_list[n++] = x;
    }
    qsort_r(q->ch_list, (size_t)n, sizeof *q->ch_list, cmp_chan, q);
    int c = -1;
    for (int i = 0; i < n; i++) {
        const int x = q->ch_list[i];
        const int p = i ? q->ch_list[i - 1] : -1;
        if (p < 0 || q->hop_link[q->hop_off[p]] != q->hop_link[q->hop_off[x]] ||
            q->s->xfers[p].dst != q->s->xfers[x].dst) {
            c++;
            q->ch_hol[c] = i;
        }
        q->ch_of[x] = c;
        q->ch_end[c] = i + 1;
    }
}

/* Multicast: the followers of each leader (CSR), those with a hop after the shared one. */
static tc_status build_followers(qsim *q, const int *lead)
{
    q->lead = lead;
    if (!(q->fol_off = calloc((size_t)q->M + 2, sizeof *q->fol_off)) ||
        !(q->fol = malloc(((size_t)q->M + 1) * sizeof *q->fol)))
        return TC_ERR_NOMEM;
    for (int x = 0; x < q->M; x++)
        if (lead[x] != x && q->hop_off[x + 1] - q->hop_off[x] > 1)
            q->fol_off[lead[x] + 1]++;
    for (int x = 0; x < q->M; x++)
        q->fol_off[x + 1] += q->fol_off[x];
    int *fill = malloc(((size_t)q->M + 1) * sizeof *fill);
    if (!fill)
        return TC_ERR_NOMEM;
    memcpy(fill, q->fol_off, (size_t)q->M * sizeof *fill);
    for (int x = 0; x < q->M; x++)
        if (lead[x] != x && q->hop_off[x + 1] - q->hop_off[x] > 1)
            q->fol[fill[lead[x]]++] = x;
    free(fill);
    return TC_OK;
}

/* Walk the critical path back from the last arrival (see sim.h, tc_sim_result.cp_*). */
static void critical_path(const qsim *q, double bytes, tc_sim_result *r)
{
    int last = -1;
    for (int x = 0; x < q->M; x++)
        if (q->crit_of[x] >= 0 && (last < 0 || q->arr[x] > q->arr[last] ||
                                   (q->arr[x] == q->arr[last] && q->pos[x] < q->pos[last])))
            last = x;
    int via_queue = 0;
    for (int64_t sv = last >= 0 ? q->crit_of[last] : -1; sv >= 0; sv = q->svc_pred[sv]) {
        const int x = q->svc_x[sv], l = q->hop_link[sv];
        const tc_link *k = &q->t->links[l];
        const double b = q->ro->scale ? bytes * q->ro->scale[x] : bytes;
        /* codec times (per-transfer costs): compression before a first hop that started on its data,
         * decompression after a last hop whose arrival the path waited for */
        if (sv == q->hop_off[x] && q->svc_kind[sv] == SVC_DATA && q->ro->pre)
            r->cp_transfer += sim_sec(tc_time_ps(q->ro->pre[x] * bytes)) * (q->ro->pre[x] > 0);
        if (!via_queue && sv + 1 == q->hop_off[x + 1] && q->ro->post)
            r->cp_transfer += sim_sec(tc_time_ps(q->ro->post[x] * bytes)) * (q->ro->post[x] > 0);
        double hold, lat; /* the link model's: tacos alpha + beta b both; te-ccl see tc_link_times */
        tc_link_times(q->t, l, b, q->ro->epoch, &hold, &lat);
        const double own = k->src >= q->t->n_npus && k->dst < q->t->n_npus && q->t->link_model == TC_LINK_TECCL
                               ? 0 : hold; /* beta b on the path (none from a te-ccl switch port) */
        if (via_queue) {
            r->cp_queue += hold;
            r->cp_queue_hops++;
        } else {
            r->cp_latency += q->t->link_model == TC_LINK_TACOS ? k->alpha : lat - own;
            const double tr = q->t->link_model == TC_LINK_TACOS ? tc_link_beta_at(q->t, k, b) * b : own;
            if (sv == q->hop_off[x])
                r->cp_transfer += tr;
            else
                r->cp_forward += tr;
        }
        r->cp_hops++;
        via_queue = q->svc_kind[sv] == SVC_QUEUE;
    }
}

static void qsim_free(qsim *q)
{
    free(q->pos);
    free(q->hop_off);
    free(q->hop_link);
    free(q->need);
    free(q->rdy);
    free(q->rdy_from);
    free(q->arr);
    free(q->inord);
    free(q->inidx);
    free(q->head);
    free(q->cend);
    free(q->plen);
    free(q->done);
    free(q->pmax);
    free(q->pfrom);
    free(q->outl);
    free(q->ocur);
    free(q->oend);
    free(q->arrived);
    free(q->eoff);
    free(q->edst);
    if (q->ln)
        for (int l = 0; l < q->t->n_links; l++)
            free(q->ln[l].w.v);
    free(q->ln);
    free(q->ch_list);
    free(q->ch_of);
    free(q->ch_hol);
    free(q->ch_end);
    free(q->fol_off);
    free(q->fol);
    free(q->known);
    free(q->hp.v);
    free(q->svc_pred);
    free(q->svc_kind);
    free(q->svc_x);
    free(q->crit_of);
}

tc_status tc_sim_queue_run(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn,
                           int explain)
{
    qsim q;
    memset(&q, 0, sizeof q);
    q.ctx = ctx;
    q.s = ro->s;
    q.t = ro->t;
    q.ro = ro;
    q.bytes = bytes;
    q.pre = ro->pre;
    q.bn = bn;
    q.explain = explain;
    const int M = q.M = ro->s->n_xfers;
    const size_t m1 = (size_t)M + 1, nl = (size_t)ro->t->n_links + 1;
    int *issue = NULL, dilation = 0;
    tc_status st = TC_ERR_NOMEM;
    q.pos = malloc(m1 * sizeof *q.pos);
    q.hop_off = calloc(m1, sizeof *q.hop_off);
    q.need = calloc(m1, sizeof *q.need);
    q.rdy = calloc(m1, sizeof *q.rdy);
    q.rdy_from = malloc(m1 * sizeof *q.rdy_from);
    q.arr = calloc(m1, sizeof *q.arr);
    q.inord = malloc(m1 * sizeof *q.inord);
    q.inidx = malloc(m1 * sizeof *q.inidx);
    q.head = malloc(m1 * sizeof *q.head);
    q.cend = calloc(m1, sizeof *q.cend);
    q.plen = calloc(m1, sizeof *q.plen);
    q.done = calloc(m1, sizeof *q.done);
    q.pmax = calloc(m1, sizeof *q.pmax);
    q.pfrom = malloc(m1 * sizeof *q.pfrom);
    q.outl = malloc(m1 * sizeof *q.outl);
    q.ocur = calloc(m1, sizeof *q.ocur);
    q.oend = calloc(m1, sizeof *q.oend);
    q.arrived = calloc(m1, 1);
    q.eoff = calloc(m1 + 1, sizeof *q.eoff);
    q.ln = calloc(nl, sizeof *q.ln);
    q.ch_list = malloc(m1 * sizeof *q.ch_list);
    q.ch_of = malloc(m1 * sizeof *q.ch_of);
    q.ch_hol = malloc(m1 * sizeof *q.ch_hol);
    q.ch_end = malloc(m1 * sizeof *q.ch_end);
    q.known = calloc(m1, 1);
    if (!q.ch_list || !q.ch_of || !q.ch_hol || !q.ch_end || !q.known || !q.pos || !q.hop_off || !q.need ||
        !q.rdy || !q.rdy_from || !q.arr || !q.inord || !q.inidx || !q.head ||
        !q.cend || !q.plen || !q.done || !q.pmax || !q.pfrom || !q.outl || !q.ocur || !q.oend || !q.arrived ||
        !q.eoff || !q.ln)
        goto done;
    if ((st = tc_sim_issue_order(q.s, &issue)))
        goto done;
    for (int k = 0; k < M; k++)
        q.pos[issue[k]] = k;
    for (int x = 0; x < M; x++)
        q.rdy_from[x] = -1;
    if ((st = build_routes(&q, ro, &dilation)) || (st = build_deps(&q, issue)))
        goto done;
    if (ro->lead && (st = build_followers(&q, ro->lead)))
        goto done;
    build_channels(&q, issue);
    st = TC_ERR_NOMEM;
    if (explain) {
        const size_t nh = (size_t)q.n_hops + 1;
        q.svc_pred = malloc(nh * sizeof *q.svc_pred);
        q.svc_kind = calloc(nh, 1);
        q.svc_x = malloc(nh * sizeof *q.svc_x);
        q.crit_of = malloc(m1 * sizeof *q.crit_of);
        if (!q.svc_pred || !q.svc_kind || !q.svc_x || !q.crit_of)
            goto done;
        for (int x = 0; x < M; x++)
            q.crit_of[x] = -1;
    }
    for (int l = 0; l < q.t->n_links; l++) {
        q.ln[l].last_svc = -1;
        if ((st = tc_sim_link_cost(ctx, q.t, l, bytes, ro->epoch, &q.ln[l].occ, &q.ln[l].lat)))
            goto done;
    }
    /* what is ready at time 0 */
    st = TC_OK;
    for (int l = 0; l < q.t->n_links; l++)
        q.ln[l].wake = SIM_NEVER;
    for (int k = 0; k < M && st == TC_OK; k++)
        if (q.need[issue[k]] == 0)
            st = released(&q, issue[k]);
    if (st)
        goto done;
    while (st == TC_OK && q.hp.n) {
        const qev e = evheap_pop(&q.hp);
        if (e.type == EV_FREE) { /* a chunk lets go of the link, or the link wakes up */
            qlink *L = &q.ln[e.key];
            if (L->busy && L->busy_until == e.t)
                L->busy = 0;
            if (L->wake == e.t)
                L->wake = SIM_NEVER;
            if (!L->busy)
                st = link_next(&q, e.key, e.t);
            continue;
        }
        const int x = e.x; /* a local copy: there when ready */
        if (explain)
            q.crit_of[x] = q.rdy_from[x] >= 0 ? q.crit_of[q.rdy_from[x]] : -1;
        st = arrive(&q, x, e.t);
    }
    if (st)
        goto done;
    r->time = sim_sec(q.makespan);
    r->max_dilation = dilation;
    r->general = 1;
    for (int l = 0; l < q.t->n_links; l++)
        r->link_busy[l] = sim_sec(q.ln[l].busy_total);
    if (explain)
        critical_path(&q, bytes, r);
done:
    free(issue);
    qsim_free(&q);
    return st;
}
