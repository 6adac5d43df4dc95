/* Lowering a schedule to an MSCCL++ execution plan (man 5 tacosc-mscclpp, LOWERING).
 *
 * Every transfer is pushed: the sender puts its copy of the chunk into a scratch chunk of the receiver that
 * no other transfer uses and signals; the receiver waits, then copies that scratch chunk into its copy of
 * the chunk or reduces it in.  A unique landing chunk per transfer means no put ever overwrites data the
 * receiver still needs, whatever the timing.
 *
 * Each rank's events (a receive at the transfer's end time, a send at its start time, receives first at
 * equal times) run in one global order, so every wait comes after its signal in that order and no
 * projection of it onto thread blocks can deadlock.  Chunks are grouped; thread block g of every rank
 * carries the events of group g's chunks in that order.  Chunks never share memory, so blocks of one rank
 * need no synchronisation with each other.  Signals and waits of one sender, receiver and group pair up
 * in order on one channel ("lane"); where the receive order differs from the send order a second lane
 * (channel) keeps the pairing exact.  Within a server channels are memory channels (put, signal, wait);
 * between servers port channels (put with signal and flush).
 */
#include "mscclpp_int.h"

#include <stdlib.h>
#include <string.h>

/* an event of a rank: kind 0 receive, 1 send, 2 a receive of a zero-length transfer (after the sends) */
typedef struct {
    int rank, chunk, kind, x;
    int g, peer;       /* the chunk's group; for sorting sends, the receiver */
    double t;
} ev;

/* a channel record: rank a's channel to b for group g, lane l; type memory or port */
typedef struct {
    int a, type, b, g, l;
} crec;

typedef struct {
    tc_ctx *ctx;
    const tc_sched *s;
    const tc_mscclpp_lower_opts *o;
    int R, C, K, G;
    int *grp;          /* per chunk */
    ev *E;             /* events, sorted by (rank, group, key) after grouping */
    int nE;
    int *lane;         /* per transfer */
    int *slot;         /* per transfer: landing scratch chunk at the receiver */
    int *nscr;         /* per rank: scratch chunks */
    crec *cr;          /* channel records, sorted */
    int ncr;
    int *rbp;          /* remote buffer pairs a*R+b (a sends to b), sorted */
    int nrb;
    int *lbuf, *lidx;  /* per rank*C + chunk: where the rank's copy is (-1 none) */
    int *state;        /* per rank*C + chunk: the scratch chunk holding a reduced copy, -1 none yet */
} lw;

static int key_cmp(const ev *a, const ev *b)
{
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    return a->x - b->x;
}

static int cmp_chunk_rank(const void *pa, const void *pb)
{
    const ev *a = pa, *b = pb;
    if (a->chunk != b->chunk)
        return a->chunk - b->chunk;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    return key_cmp(a, b);
}

static int cmp_rank_group(const void *pa, const void *pb)
{
    const ev *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (a->g != b->g)
        return a->g - b->g;
    return key_cmp(a, b);
}

static int cmp_rank_peer_group(const void *pa, const void *pb)
{
    const ev *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (a->peer != b->peer)
        return a->peer - b->peer;
    if (a->g != b->g)
        return a->g - b->g;
    return key_cmp(a, b);
}

static int cmp_crec(const void *pa, const void *pb)
{
    const crec *a = pa, *b = pb;
    int d[5] = {a->a - b->a, a->type - b->type, a->b - b->b, a->g - b->g, a->l - b->l};
    for (int i = 0; i < 5; i++)
        if (d[i])
            return d[i];
    return 0;
}

static int chan_type(const lw *L, int a, int b)
{
    const int *n = L->o->node_of;
    return n && n[a] != n[b] ? TC_MSCCLPP_CH_PORT : TC_MSCCLPP_CH_MEMORY;
}

/* send key and receive key of transfer x, as events */
static ev send_ev(const lw *L, int x)
{
    const tc_xfer *t = &L->s->xfers[x];
    return (ev){t->src, t->chunk, 1, x, 0, -1, t->t_start};
}
static ev recv_ev(const lw *L, int x)
{
    const tc_xfer *t = &L->s->xfers[x];
    int late = !(t->t_end > t->t_start);
    return (ev){t->dst, t->chunk, late ? 2 : 0, x, 0, -1, late ? t->t_start : t->t_end};
}

static tc_status events(lw *L)
{
    const tc_sched *s = L->s;
    L->E = malloc((size_t)(2 * s->n_xfers + 1) * sizeof *L->E);
    if (!L->E)
        return TC_ERR_NOMEM;
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src == x->dst)
            continue; /* a local copy of a routed plan: the chunk is already there */
        L->E[L->nE++] = send_ev(L, i);
        L->E[L->nE++] = recv_ev(L, i);
    }
    return TC_OK;
}

/* the chunks whose copy a rank writes home at the end: its output chunks */
static int is_output(const lw *L, int r, int c)
{
    switch (L->s->coll) {
    case TC_COLL_REDUCESCATTER: return c / L->K == r;
    default: return 1;
    }
}

/* group chunks greedily in order: a group fits when, on every rank, its events need at most
 * MAX_OPERATION operations (4 per event, 2 per closing copy: an upper bound of what emit() writes) and
 * reach at most MAX_CHANNEL peers */
static tc_status group(lw *L)
{
    qsort(L->E, (size_t)L->nE, sizeof *L->E, cmp_chunk_rank);
    int *ops = calloc((size_t)L->R, sizeof *ops), *np = calloc((size_t)L->R, sizeof *np);
    int *peers = malloc((size_t)L->R * TC_MSCCLPP_MAX_CHANNEL * sizeof *peers);
    int *cost = calloc((size_t)L->R, sizeof *cost), *cnp = calloc((size_t)L->R, sizeof *cnp);
    int *cpeer = malloc((size_t)L->R * (TC_MSCCLPP_MAX_CHANNEL + 1) * sizeof *cpeer);
    int *touched = malloc((size_t)L->R * sizeof *touched);
    tc_status st = TC_OK;
    if (!ops || !np || !peers || !cost || !cnp || !cpeer || !touched) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    int e = 0, g = 0, any = 0, prev_alone = 0;
    for (int c = 0; c < L->C; c++) {
        /* this chunk's cost per rank */
        int nt = 0, e0 = e;
        for (; e < L->nE && L->E[e].chunk == c; e++) {
            int r = L->E[e].rank;
            if (cost[r] == 0 && cnp[r] == 0)
                touched[nt++] = r;
            cost[r] += 4;
            const tc_xfer *x = &L->s->xfers[L->E[e].x];
            int peer = x->src == r ? x->dst : x->src, *cp = &cpeer[r * (TC_MSCCLPP_MAX_CHANNEL + 1)], k;
            for (k = 0; k < cnp[r] && cp[k] != peer; k++)
                ;
            if (k == cnp[r] && cnp[r] <= TC_MSCCLPP_MAX_CHANNEL)
                cp[cnp[r]++] = peer;
        }
        int fits = 1, alone = 0;
        for (int i = 0; i < nt; i++) {
            int r = touched[i];
            cost[r] += 2;
            /* over the estimate alone: a group of its own, and emit_tb counts exactly */
            alone |= cost[r] > TC_MSCCLPP_MAX_OPERATION || cnp[r] > TC_MSCCLPP_MAX_CHANNEL;
            int add = 0;
            for (int k = 0; k < cnp[r]; k++) {
                int j;
                const int p = cpeer[r * (TC_MSCCLPP_MAX_CHANNEL + 1) + k];
                for (j = 0; j < np[r] && peers[r * TC_MSCCLPP_MAX_CHANNEL + j] != p; j++)
                    ;
                add += j == np[r];
            }
            if (ops[r] + cost[r] > TC_MSCCLPP_MAX_OPERATION || np[r] + add > TC_MSCCLPP_MAX_CHANNEL)
                fits = 0;
        }
        if (!fits || alone || prev_alone) { /* a new group */
            g += any;
            memset(ops, 0, (size_t)L->R * sizeof *ops);
            memset(np, 0, (size_t)L->R * sizeof *np);
        }
        for (int i = 0; i < nt; i++) {
            int r = touched[i];
            ops[r] += cost[r];
            for (int k = 0; k < cnp[r]; k++) {
                int j, p = cpeer[r * (TC_MSCCLPP_MAX_CHANNEL + 1) + k];
                for (j = 0; j < np[r] && peers[r * TC_MSCCLPP_MAX_CHANNEL + j] != p; j++)
                    ;
                if (j == np[r] && np[r] < TC_MSCCLPP_MAX_CHANNEL) /* past it: the chunk is alone in its group */
                    peers[r * TC_MSCCLPP_MAX_CHANNEL + np[r]++] = p;
            }
            cost[r] = cnp[r] = 0;
        }
        L->grp[c] = g;
        for (int k = e0; k < e; k++)
            L->E[k].g = g;
        any = 1;
        prev_alone = alone;
    }
    L->G = any ? g + 1 : 0;
done:
    free(ops);
    free(np);
    free(peers);
    free(cost);
    free(cnp);
    free(cpeer);
    free(touched);
    return st;
}

/* lanes: the transfers of one (sender, receiver, group), in send order, go to the first lane whose
 * receives stay in order; then the channel records of both ends and the remote-buffer pairs */
static tc_status lanes(lw *L)
{
    const tc_sched *s = L->s;
    int n = 0;
    ev *sd = malloc((size_t)(L->nE + 1) * sizeof *sd);
    ev *last = malloc((size_t)(L->nE + 1) * sizeof *last);
    L->cr = malloc((size_t)(L->nE + 1) * sizeof *L->cr);
    L->rbp = malloc((size_t)(L->nE + 1) * sizeof *L->rbp);
    if (!sd || !last || !L->cr || !L->rbp) {
        free(sd);
        free(last);
        return TC_ERR_NOMEM;
    }
    for (int e = 0; e < L->nE; e++)
        if (L->E[e].kind == 1) {
            sd[n] = L->E[e];
            sd[n++].peer = s->xfers[L->E[e].x].dst;
        }
    qsort(sd, (size_t)n, sizeof *sd, cmp_rank_peer_group);
    for (int i = 0, j; i < n; i = j) {
        int nl = 0;
        for (j = i; j < n && sd[j].rank == sd[i].rank && sd[j].peer == sd[i].peer && sd[j].g == sd[i].g; j++) {
            ev rk = recv_ev(L, sd[j].x);
            int l = 0;
            while (l < nl && key_cmp(&last[l], &rk) > 0)
                l++;
            if (l == nl)
                nl++;
            last[l] = rk;
            L->lane[sd[j].x] = l;
            int a = sd[j].rank, b = sd[j].peer, t = chan_type(L, a, b);
            L->cr[L->ncr++] = (crec){a, t, b, sd[j].g, l};
            L->cr[L->ncr++] = (crec){b, t, a, sd[j].g, l};
        }
        L->rbp[L->nrb++] = sd[i].rank * L->R + sd[i].peer;
    }
    free(sd);
    free(last);
    qsort(L->cr, (size_t)L->ncr, sizeof *L->cr, cmp_crec);
    int u = 0;
    for (int k = 0; k < L->ncr; k++)
        if (u == 0 || cmp_crec(&L->cr[u - 1], &L->cr[k]))
            L->cr[u++] = L->cr[k];
    L->ncr = u;
    qsort(L->rbp, (size_t)L->nrb, sizeof *L->rbp, tc_cmp_int);
    u = 0;
    for (int k = 0; k < L->nrb; k++)
        if (u == 0 || L->rbp[u - 1] != L->rbp[k])
            L->rbp[u++] = L->rbp[k];
    L->nrb = u;
    return TC_OK;
}

/* rank a's channel index (within its type) for (b, g, l) */
static int chan_index(const lw *L, int a, int b, int g, int l)
{
    crec key = {a, chan_type(L, a, b), b, g, l};
    int lo = 0, hi = L->ncr;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cmp_crec(&L->cr[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    int first = lo;
    while (first > 0 && L->cr[first - 1].a == a && L->cr[first - 1].type == key.type)
        first--;
    return lo - first;
}

/* rank a's remote buffer id of b's scratch */
static int rbuf_index(const lw *L, int a, int b)
{
    int k = a * L->R + b, lo = 0, hi = L->nrb;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (L->rbp[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    int first = lo;
    while (first > 0 && L->rbp[first - 1] / L->R == a)
        first--;
    return lo - first;
}

static tc_status gpus(lw *L, tc_mscclpp *p)
{
    tc_status st = TC_OK;
    for (int k = 0; k < L->ncr && !st; k++)
        st = mpp_chan_add(&p->gpus[L->cr[k].a], L->cr[k].type, L->cr[k].b, -1, 0);
    for (int k = 0; k < L->nrb && !st; k++) {
        int a = L->rbp[k] / L->R, b = L->rbp[k] % L->R;
        st = mpp_rbuf_add(&p->gpus[a], b, TC_MS_BUF_S, 1 << chan_type(L, a, b), 0);
    }
    return st;
}

/* the index of v in a tb's list (its channels or remote buffers of one type), appended when new */
static tc_status tb_index(int **list, int *n, int v, int *out)
{
    for (int i = 0; i < *n; i++)
        if ((*list)[i] == v) {
            *out = i;
            return TC_OK;
        }
    *out = *n;
    return mpp_int_push(list, n, v);
}

/* append op to tb, with a nop before it where the thread-sync rule asks for one */
static tc_status push(tc_mscclpp_tb *tb, const tc_mscclpp_op *op)
{
    tc_status st = TC_OK;
    if (tb->n_ops > 0 && mpp_need_nop(&tb->ops[tb->n_ops - 1], op)) {
        tc_mscclpp_op nop;
        mpp_op_init(&nop, "nop");
        st = mpp_op_add(tb, &nop);
    }
    return st ? st : mpp_op_add(tb, op);
}

static tc_mscclpp_buf local(int type, int index) { return (tc_mscclpp_buf){type, -1, index, 1}; }

/* where rank r keeps a chunk it has changed: its output chunk, else a scratch chunk of its own */
static tc_mscclpp_buf home(lw *L, int r, int c)
{
    if (L->s->coll == TC_COLL_REDUCESCATTER) {
        if (c / L->K == r)
            return local(TC_MS_BUF_O, c - r * L->K);
        int *sl = &L->state[(size_t)r * L->C + c];
        if (*sl < 0)
            *sl = L->nscr[r]++;
        return local(TC_MS_BUF_S, *sl);
    }
    return local(TC_MS_BUF_O, c);
}

static tc_status emit_recvs(lw *L, tc_mscclpp_tb *tb, const ev *e, int n)
{
    tc_mscclpp_op w;
    mpp_op_init(&w, "wait");
    const tc_xfer *x0 = &L->s->xfers[e[0].x];
    w.chan_type = chan_type(L, x0->src, x0->dst);
    tc_status st = TC_OK;
    for (int i = 0; i < n && !st && !L->o->packets; i++) { /* LL: the packets' flags are the wait */
        const tc_xfer *x = &L->s->xfers[e[i].x];
        int k = chan_index(L, x->dst, x->src, L->grp[x->chunk], L->lane[e[i].x]);
        st = tb_index(&tb->ch[w.chan_type], &tb->n_ch[w.chan_type], k, &w.chan[w.n_chan++]);
    }
    if (!st && !L->o->packets)
        st = push(tb, &w);
    for (int i = 0; i < n && !st; i++) {
        const tc_xfer *x = &L->s->xfers[e[i].x];
        size_t rc = (size_t)x->dst * L->C + x->chunk;
        tc_mscclpp_buf land = local(TC_MS_BUF_S, L->slot[e[i].x]), to = home(L, x->dst, x->chunk);
        tc_mscclpp_op d;
        if (x->op == TC_OP_REDUCE && L->lbuf[rc] >= 0) {
            mpp_op_init(&d, L->o->packets ? "repkt" : "re");
            d.n_src = 2;
            d.src[0] = local(L->lbuf[rc], L->lidx[rc]);
            d.src[1] = land;
        } else {
            mpp_op_init(&d, L->o->packets ? "upkt" : "copy");
            d.n_src = 1;
            d.src[0] = land;
        }
        d.n_dst = 1;
        d.dst[0] = to;
        L->lbuf[rc] = to.type;
        L->lidx[rc] = to.index;
        st = push(tb, &d);
    }
    return st;
}

/* sends of one chunk to distinct channels of one type: one put (or pwsf) and one signal */
static tc_status emit_sends(lw *L, tc_mscclpp_tb *tb, const ev *e, int n)
{
    const tc_xfer *x0 = &L->s->xfers[e[0].x];
    size_t rc = (size_t)x0->src * L->C + x0->chunk;
    if (L->lbuf[rc] < 0)
        return tc_error(L->ctx, TC_ERR_INTERNAL, NULL, 0,
                        "MSCCL++ lowering: rank %d sends chunk %d before it holds it", x0->src, x0->chunk);
    int type = chan_type(L, x0->src, x0->dst);
    tc_mscclpp_op put, sig;
    mpp_op_init(&put, L->o->packets ? "ppkt" : type == TC_MSCCLPP_CH_PORT ? "pwsf" : "put");
    mpp_op_init(&sig, "signal");
    put.chan_type = sig.chan_type = type;
    tc_status st = TC_OK;
    for (int i = 0; i < n && !st; i++) {
        const tc_xfer *x = &L->s->xfers[e[i].x];
        int k = chan_index(L, x->src, x->dst, L->grp[x->chunk], L->lane[e[i].x]), c, rb;
        if (!(st = tb_index(&tb->ch[type], &tb->n_ch[type], k, &c)) &&
            !(st = tb_index(&tb->rb[type], &tb->n_rb[type], rbuf_index(L, x->src, x->dst), &rb))) {
            put.chan[put.n_chan++] = c;
            sig.chan[sig.n_chan++] = c;
            put.src[put.n_src++] = local(L->lbuf[rc], L->lidx[rc]);
            put.dst[put.n_dst++] = (tc_mscclpp_buf){-1, rb, L->slot[e[i].x], 1};
        }
    }
    if (!st)
        st = push(tb, &put);
    if (!st && type == TC_MSCCLPP_CH_MEMORY && !L->o->packets)
        st = push(tb, &sig);
    return st;
}

/* how many events from e[0] go in one wait or one put: same kind, same channel type, distinct channels,
 * (sends) the same chunk; at most MAX_CHANNEL_PER_OPERATION */
static int run_len(const lw *L, const ev *e, int n)
{
    const tc_xfer *x0 = &L->s->xfers[e[0].x];
    int recv = e[0].kind != 1, k = 1;
    for (; k < n && k < TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION; k++) {
        const tc_xfer *x = &L->s->xfers[e[k].x];
        if ((e[k].kind != 1) != recv || (recv ? x->dst != x0->dst : x->chunk != x0->chunk || x->src != x0->src))
            break;
        if (chan_type(L, x->src, x->dst) != chan_type(L, x0->src, x0->dst))
            break;
        int dup = 0;
        for (int j = 0; j < k; j++) {
            const tc_xfer *y = &L->s->xfers[e[j].x];
            dup |= recv ? y->src == x->src && L->lane[e[j].x] == L->lane[e[k].x] &&
                              L->grp[y->chunk] == L->grp[x->chunk]
                        : y->dst == x->dst && L->lane[e[j].x] == L->lane[e[k].x];
            dup |= recv && y->chunk == x->chunk; /* two receives of one chunk: one after the other */
        }
        if (dup)
            break;
    }
    return k;
}

/* the thread block of group g on rank r: events e[0..n) in order, then the closing copies */
static tc_status emit_tb(lw *L, tc_mscclpp_gpu *gp, int r, const ev *e, int n)
{
    tc_mscclpp_tb *tb;
    tc_status st = mpp_tb_add(gp, &tb);
    for (int i = 0; i < n && !st;) {
        int k = run_len(L, e + i, n - i);
        st = e[i].kind == 1 ? emit_sends(L, tb, e + i, k) : emit_recvs(L, tb, e + i, k);
        i += k;
    }
    /* closing copies: an output chunk whose copy is elsewhere (an all-gather rank's own input) */
    for (int i = 0; i < n && !st; i++) {
        int c = e[i].chunk, dup = 0;
        for (int j = 0; j < i; j++)
            dup |= e[j].chunk == c;
        size_t rc = (size_t)r * L->C + c;
        if (dup || !is_output(L, r, c) || L->lbuf[rc] < 0)
            continue;
        tc_mscclpp_buf h = home(L, r, c);
        if (L->lbuf[rc] == h.type && L->lidx[rc] == h.index)
            continue;
        tc_mscclpp_op cp;
        mpp_op_init(&cp, "copy");
        cp.n_src = cp.n_dst = 1;
        cp.src[0] = local(L->lbuf[rc], L->lidx[rc]);
        cp.dst[0] = h;
        L->lbuf[rc] = h.type;
        L->lidx[rc] = h.index;
        st = push(tb, &cp);
    }
    if (!st && (tb->n_ops > TC_MSCCLPP_MAX_OPERATION || tb->n_ch[0] > TC_MSCCLPP_MAX_CHANNEL ||
                tb->n_ch[1] > TC_MSCCLPP_MAX_CHANNEL))
        st = tc_error(L->ctx, TC_ERR_LIMIT, NULL, 0,
                      "MSCCL++: rank %d handles chunk %d in %d operations over %d channels; one thread block holds "
                      "at most %d operations and %d channels of a type (MAX_OPERATION, MAX_CHANNEL of mscclpp's "
                      "execution_common.hpp): try fewer chunks or another algorithm",
                      r, e[0].chunk, tb->n_ops, tb->n_ch[0] + tb->n_ch[1], TC_MSCCLPP_MAX_OPERATION,
                      TC_MSCCLPP_MAX_CHANNEL);
    return st;
}

/* chunks a rank has but never touches in an event still reach its output (an all-gather rank's own
 * chunk that nobody needs from it, a plan of one rank): one more thread block copies them */
static tc_status untouched(lw *L, tc_mscclpp_gpu *gp, int r, const char *touched)
{
    tc_mscclpp_tb *tb = NULL;
    tc_status st = TC_OK;
    for (int c = 0; c < L->C && !st; c++) {
        size_t rc = (size_t)r * L->C + c;
        if (touched[c] || !is_output(L, r, c) || L->lbuf[rc] < 0)
            continue;
        tc_mscclpp_buf h = home(L, r, c);
        if (L->lbuf[rc] == h.type && L->lidx[rc] == h.index)
            continue;
        if ((!tb || tb->n_ops + 2 > TC_MSCCLPP_MAX_OPERATION) && (st = mpp_tb_add(gp, &tb)))
            break;
        tc_mscclpp_op cp;
        mpp_op_init(&cp, "copy");
        cp.n_src = cp.n_dst = 1;
        cp.src[0] = local(L->lbuf[rc], L->lidx[rc]);
        cp.dst[0] = h;
        st = push(tb, &cp);
    }
    return st;
}

static void init_places(lw *L)
{
    for (int r = 0; r < L->R; r++)
        for (int c = 0; c < L->C; c++) {
            size_t rc = (size_t)r * L->C + c;
            L->state[rc] = -1;
            L->lbuf[rc] = -1;
            if (L->s->coll == TC_COLL_ALLGATHER) {
                if (c / L->K == r) {
                    L->lbuf[rc] = TC_MS_BUF_I;
                    L->lidx[rc] = c - r * L->K;
                }
            } else {
                L->lbuf[rc] = TC_MS_BUF_I;
                L->lidx[rc] = c;
            }
        }
}

static tc_status build(lw *L, tc_mscclpp *p)
{
    tc_status st = gpus(L, p);
    char *touched = malloc((size_t)L->C + 1);
    if (!touched)
        return TC_ERR_NOMEM;
    qsort(L->E, (size_t)L->nE, sizeof *L->E, cmp_rank_group);
    int e = 0;
    for (int r = 0; r < L->R && !st; r++) {
        memset(touched, 0, (size_t)L->C);
        while (e < L->nE && L->E[e].rank == r && !st) {
            int f = e;
            while (f < L->nE && L->E[f].rank == r && L->E[f].g == L->E[e].g)
                touched[L->E[f++].chunk] = 1;
            st = emit_tb(L, &p->gpus[r], r, L->E + e, f - e);
            e = f;
        }
        if (!st)
            st = untouched(L, &p->gpus[r], r, touched);
        tc_mscclpp_gpu *gp = &p->gpus[r];
        gp->i_chunks = L->s->coll == TC_COLL_ALLGATHER ? L->K : L->C;
        gp->o_chunks = L->s->coll == TC_COLL_REDUCESCATTER ? L->K : L->C;
        gp->s_chunks = L->nscr[r];
        if (!st && gp->n_tbs > TC_MSCCLPP_MAX_TBS)
            st = tc_error(L->ctx, TC_ERR_LIMIT, NULL, 0,
                          "MSCCL++: rank %d needs %d thread blocks, more than the %d tacosc keeps resident at once "
                          "(man 5 tacosc-mscclpp, LIMITS): try fewer chunks",
                          r, gp->n_tbs, TC_MSCCLPP_MAX_TBS);
    }
    free(touched);
    return st;
}

void tc_mscclpp_lower_opts_init(tc_mscclpp_lower_opts *o) { memset(o, 0, sizeof *o); }

tc_status tc_mscclpp_lower(tc_ctx *ctx, const tc_sched *s, const tc_mscclpp_lower_opts *o, tc_mscclpp **out)
{
    tc_mscclpp_lower_opts defo;
    if (!o) {
        tc_mscclpp_lower_opts_init(&defo);
        o = &defo;
    }
    if (s->coll != TC_COLL_ALLREDUCE && s->coll != TC_COLL_ALLGATHER && s->coll != TC_COLL_REDUCESCATTER)
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0,
                        "MSCCL++ plans: tacosc lowers allreduce, allgather and reducescatter, not %s",
                        tc_coll_name(s->coll));
    for (int r = 1; o->packets && o->node_of && r < s->n_ranks; r++)
        if (o->node_of[r] != o->node_of[0])
            return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0,
                            "MSCCL++ LL packets: tacosc writes them over memory channels only (one server); ranks 0 "
                            "and %d are on different servers: use the Simple protocol",
                            r);
    lw L = {.ctx = ctx, .s = s, .o = o, .R = s->n_ranks, .C = s->n_chunks, .K = s->chunks_per_rank};
    tc_mscclpp *p = NULL;
    size_t rc = (size_t)L.R * L.C + 1, nx = (size_t)s->n_xfers + 1;
    L.grp = calloc((size_t)L.C + 1, sizeof *L.grp);
    L.lane = calloc(nx, sizeof *L.lane);
    L.slot = calloc(nx, sizeof *L.slot);
    L.nscr = calloc((size_t)L.R, sizeof *L.nscr);
    L.lbuf = malloc(rc * sizeof *L.lbuf);
    L.lidx = calloc(rc, sizeof *L.lidx);
    L.state = malloc(rc * sizeof *L.state);
    tc_status st = TC_OK;
    if (!L.grp || !L.lane || !L.slot || !L.nscr || !L.lbuf || !L.lidx || !L.state) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    init_places(&L);
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].src != s->xfers[i].dst)
            L.slot[i] = L.nscr[s->xfers[i].dst]++;
    char name[256];
    snprintf(name, sizeof name, "tacosc-%s-%s-%dr", s->algo ? s->algo : "plan", tc_coll_name(s->coll), L.R);
    if ((st = events(&L)) || (st = group(&L)) || (st = lanes(&L)) ||
        (st = mpp_create(o->name ? o->name : name, tc_coll_name(s->coll), L.R, &p)) || (st = build(&L, p)))
        goto done;
    p->min_bytes = o->min_bytes;
    p->packets = o->packets;
    /* landing chunks are reused by the next launch: the executor alternates two scratch halves between
     * launches (use_double_scratch_buffer), so a peer already in launch k+1 never writes a chunk this rank
     * may still read in launch k (its launch k+1 needs this rank's launch k+1 data, sent after launch k) */
    p->double_scratch = 1;
    p->max_bytes = o->max_bytes ? o->max_bytes : UINT64_MAX;
    *out = p;
    p = NULL;
done:
    tc_mscclpp_free(p);
    free(L.grp);
    free(L.E);
    free(L.lane);
    free(L.slot);
    free(L.nscr);
    free(L.cr);
    free(L.rbp);
    free(L.lbuf);
    free(L.lidx);
    free(L.state);
    return st;
}
