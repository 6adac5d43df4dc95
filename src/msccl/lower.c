/*
 * Lowering of the schedule IR to MSCCL thread blocks (man 5 tacosc-msccl).
 *
 * Accepts: a checked tc_sched of any collective (in-place alltoall through scratch) and lowering options.
 * Returns: a tc_msccl that the verifier accepts, or TC_ERR_LIMIT naming the target limit it cannot meet.
 *
 * Method.  Every transfer becomes a send at its source (ordered by t_start; a copy routed over several
 * links, such as through a switch vertex, by t_end: see routed_copy) and a receive at its destination
 * (ordered by t_end; receives before sends at equal times; times compared on a grid of 1e-9 of
 * the makespan so that rounding in a generator's sums cannot put a forwarding send before its receive).
 * Per connection the receive order follows the send order (MSCCL connections are FIFO).  When that would
 * reorder a rank's accesses to a chunk (two routes between a pair, as on a rail cluster), the order is
 * repaired: first every transfer whose source does not write the chunk before its arrival is sent just
 * before that arrival (delay_safe), then each rank's accesses to a chunk are retimed back into their IR
 * order, the FIFO rule applied again, until both hold (order_events); only a conflict that this cannot
 * resolve is refused, naming collective, size, algorithm and the pair.  All events of
 * all ranks get one global order.  Each rank keeps every chunk it touches in one working slot: its output
 * place when it has one (out-of-place: one cpy from the input first), else its input place, else a
 * scratch slot (chunks routed through a rank that neither starts nor ends with them; in-place alltoall
 * receives into scratch and copies out at the end).  Thread blocks: per rank, receive peers are paired with
 * send peers by the number of chunks that flow from one through the rank to the other (greedy, ties to a
 * peer paired with itself), leftovers with themselves, then send-only with receive-only; one tb per pair
 * and channel, plus tb 0 for local copies (contiguous copies aggregate, cnt <= 71).  Chunk c travels on
 * channel c mod nchannels.  A receive followed in its tb by the send of what it just wrote fuses (r+s =
 * rcs, rrc+s = rrcs; an rrcs whose stored result is overwritten by a receive before anyone reads it = rrs).
 * Plain lowering (--target rccl: RCCL refuses fused types at every launch, ROCm/rccl
 * src/misc/msccl/msccl_setup.cc): nothing fuses; a reducing receive is r into scratch private to its tb
 * followed by re into the slot; dependencies go on the r (and the nops before it), and steps of other tbs
 * that need the result depend on the re.
 * Both placements (--inplace --outofplace): the out-of-place names, with every access keyed by the memory
 * it shares in place (slot_key), so the dependencies keep either order; alltoall goes through scratch.
 * Per slot, every access depends on the previous conflicting accesses made by other tbs (read after
 * write, write after read or write); several dependencies are chained with nop steps (depid/deps/hasdep),
 * the step itself taking the last (the runtimes' parser requires it).
 * Every tb runs its steps in the global order and every dependency and message goes forward in it, so
 * with enough connection buffering the program cannot deadlock; the verifier checks it under its bounded
 * model (tacosc compile runs it on every lowered program).  When a tb has 64 or more steps the chunks
 * are spread over more channels (estimated from the longest tb, then one more at a time); a rank with more
 * than 32 send or receive peers has its connections spread over channel groups (conn_group); when the
 * steps, tbs, depid, channels or parser-node limits cannot be met in time order, the whole lowering runs
 * once more in step order (by_step: each rank's sends of step k, then its receives of step k, so a step's
 * group of chunks to one peer aggregates; tc_msccl_lower), verified like a repaired order; when that fails
 * too, the lowering fails naming the time order's limit.
 * Aggregation: consecutive messages of one connection whose steps are adjacent in both tbs (s with r or
 * rrc), contiguous at both ends, and whose later chunk no other step touches in between, become one step
 * with cnt up to 71.
 * Cost: O(E log E) for E = 2 * transfers events (a natural merge sort: the IR comes sorted by start), then
 * per channel count tried O(E) plus the sort of 2E slot accesses (a counting sort when the keys are
 * dense); the pairing is O(E + sum of P^2) for P peers of a rank.  After the global order is fixed the
 * events are grouped by rank (stable), which keeps every later pass on one rank's data at a time.
 * Trace (ring all-reduce, 4 ranks, 1 chunk per rank; tests/golden/ring4-allreduce.xml): rank 0's only tb
 * has send=1 recv=3; step 0 sends chunk 3, steps 1 and 2 receive chunks 2 and 1, add rank 0's part and
 * forward them (rrs), step 3 receives chunk 0, adds, stores and forwards it (rrcs), then rcs, rcs and r
 * bring chunks 3, 2 and 1 back fully reduced.
 */
#include "tacos/msccl.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev {
    int rank, xfer;      /* xfer index, -1 for a local copy-in */
    int kind;            /* 0 receive, 1 send, 2 copy-in */
    int chunk, peer, op;
    double t;
    int tie;
    int tb;              /* tb index (pair * nch + chan), or the copy tb */
    int type;            /* final step type */
    int fused;           /* 1: send fused into the previous receive; k >= 2: copy-in merged into event k-2 */
    int step;            /* logical step index in its tb */
    int cnt;             /* chunks of the step it heads (copy-ins aggregate) */
    int fsend;           /* a receive: the send event fused into its step, -1 none */
} ev;

/*
 * A copy routed over several links (through a switch vertex: the GPU-to-GPU send the switch performs in
 * hardware; or over other GPUs' links) is one send from its source to its destination.  Its send is
 * placed at the transfer's arrival, just before its receive, not at its start: the time between is the
 * chunk's wait in the switch (or on the route), and a GPU that queued sends that far ahead would fill its
 * FIFO connections to that peer with messages the peer receives much later.  A copy's source holds the chunk
 * from its start on and nothing writes that chunk there again, so the later send carries the same data.
 * Reductions keep their start: their source's partial sum may change after it.
 */
static int routed_copy(const tc_xfer *x)
{
    return x->op == TC_OP_COPY && x->route_len >= 2;
}

typedef struct lw {
    tc_ctx *ctx;
    const tc_sched *s;
    const tc_msccl_lower_opts *o;
    tc_msccl_limits lim;
    int R, K, N, inplace;
    int *wbuf, *woff;    /* R*N working slot (buf -1 = not touched) */
    int *inb, *ino;      /* R*N input place to copy in from (-1 none) */
    int *outb, *outo;    /* R*N output place to copy out to at the end (-1 none; in-place alltoall) */
    int *nscratch;
    ev *e;
    int ne;
    int dual;            /* one program for both placements: out-of-place names, in-place conflicts */
    int plain;           /* only s, r, re, cpy, nop (RCCL) */
    int by_step;         /* events ordered by the IR's step, all sends of a step before its receives, instead
                            of by time (the retry of tc_msccl_lower when a limit is not met) */
    /* pairing of receive and send peers into thread blocks, per rank (independent of the channels) */
    int *epair;          /* per event: its pair at its rank (-1 for copies) */
    int *npairs, *pbase; /* pairs of rank r: pbase[r] .. pbase[r] + npairs[r] */
    int *psend, *precv, *pgrp;
    int groups;          /* channel groups: connections spread so that <= 32 peers share a channel */
    int fch;             /* FIFO channels: the order keeps FIFO per (src, dst, chunk mod fch); the channel
                            count is then a multiple of fch, so that each connection's order holds (1: any) */
    const unsigned char *fmt; /* per transfer its sparse format (opts.sparse), NULL: every message dense */
} lw;

/* The sparse format of event e's own message (0 for copies and dense plans). */
static int ev_fmt(const lw *L, const ev *e)
{
    return L->fmt && e->kind != 2 && e->xfer >= 0 ? L->fmt[e->xfer] : 0;
}

static int cmp_ev(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind == 2 ? -1 : y->kind == 2 ? 1 : x->kind - y->kind;
    return x->tie - y->tie;
}

/* Input and output places of chunk c on rank r (buf -1 when none). */
static void places(const lw *L, int r, int c, int *ib, int *io, int *ob, int *oo)
{
    int R = L->R, K = L->K, root = L->s->root;
    *ib = *ob = -1;
    *io = *oo = 0;
    switch (L->s->coll) {
    case TC_COLL_ALLREDUCE: *ib = 0; *io = c; *ob = 1; *oo = c; break;
    case TC_COLL_BROADCAST: if (r == root) { *ib = 0; *io = c; } *ob = 1; *oo = c; break;
    case TC_COLL_REDUCE: *ib = 0; *io = c; if (r == root) { *ob = 1; *oo = c; } break;
    case TC_COLL_ALLGATHER:
    case TC_COLL_GATHER: if (c / K == r) { *ib = 0; *io = c % K; } *ob = 1; *oo = c; break;
    case TC_COLL_REDUCESCATTER: *ib = 0; *io = c; if (c / K == r) { *ob = 1; *oo = c % K; } break;
    case TC_COLL_SCATTER: if (r == root) { *ib = 0; *io = c; } if (c / K == r) { *ob = 1; *oo = c % K; } break;
    case TC_COLL_ALLTOALL:
        if (c / (R * K) == r) { *ib = 0; *io = c % (R * K); }
        if ((c / K) % R == r) { *ob = 1; *oo = (c / (R * K)) * K + c % K; }
        break;
    default: break;
    }
    if (L->inplace && !L->dual && *ob == 1) { /* the output place is the input buffer's (or its alias) */
        tc_coll co = L->s->coll;
        if (co == TC_COLL_ALLGATHER || co == TC_COLL_GATHER)
            *ib = -1;        /* input aliases o[r*K+k]: keep o */
        else if (co == TC_COLL_REDUCESCATTER || co == TC_COLL_SCATTER) {
            *ob = 0;
            *oo = r * K + *oo;
        } else {
            *ob = 0;
        }
    }
}

static int first_touch(lw *L, int r, int c)
{
    return L->wbuf[r * L->N + c] < 0;
}

static void assign(lw *L, int r, int c)
{
    if (!first_touch(L, r, c))
        return;
    int ib, io, ob, oo;
    places(L, r, c, &ib, &io, &ob, &oo);
    int i = r * L->N + c;
    if ((L->inplace || L->dual) && L->s->coll == TC_COLL_ALLTOALL && ob >= 0 && c / (L->R * L->K) != r) {
        /* in-place alltoall: o[j] is i[j], which holds what goes to rank j until it is sent */
        L->wbuf[i] = TC_MS_BUF_S;
        L->woff[i] = L->nscratch[r]++;
        L->outb[i] = ob;
        L->outo[i] = oo;
        return;
    }
    if (ob >= 0) {
        L->wbuf[i] = ob;
        L->woff[i] = oo;
    } else if (ib >= 0) {
        L->wbuf[i] = ib;
        L->woff[i] = io;
    } else {
        L->wbuf[i] = TC_MS_BUF_S;
        L->woff[i] = L->nscratch[r]++;
    }
    if (ib >= 0 && !(ib == L->wbuf[i] && io == L->woff[i])) {
        L->inb[i] = ib;
        L->ino[i] = io;
    }
}

/* Source and destination of a copy event: copy-in (input place -> working slot) or, with peer -2,
 * copy-out (working slot -> output place). */
static void cp_ends(const lw *L, const ev *e, int *sb, int *so, int *db, int *dof)
{
    int w = e->rank * L->N + e->chunk;
    if (e->peer == -2) {
        *sb = L->wbuf[w], *so = L->woff[w], *db = L->outb[w], *dof = L->outo[w];
    } else {
        *sb = L->inb[w], *so = L->ino[w], *db = L->wbuf[w], *dof = L->woff[w];
    }
}

/* Storage key of a slot (in-place aliases are resolved by places(); a program for both placements keys
 * its out-of-place names by the memory they share in place, so that both orders are kept). */
static long slot_key(const lw *L, int r, int b, int off)
{
    if (L->dual) {
        tc_coll c = L->s->coll;
        if ((c == TC_COLL_ALLGATHER || c == TC_COLL_GATHER) && b == TC_MS_BUF_I) {
            b = TC_MS_BUF_O;
            off += r * L->K;
        } else if ((c == TC_COLL_REDUCESCATTER || c == TC_COLL_SCATTER) && b == TC_MS_BUF_O) {
            b = TC_MS_BUF_I;
            off += r * L->K;
        } else if (b == TC_MS_BUF_O && c != TC_COLL_ALLGATHER && c != TC_COLL_GATHER && c != TC_COLL_REDUCESCATTER &&
                   c != TC_COLL_SCATTER) {
            b = TC_MS_BUF_I;
        }
    }
    return ((long)r * 3 + b) * (long)(L->N * 4 + 8) + off;
}

typedef struct acc { long key; int ord; int tb; int step; int write; } acc;

static int cmp_acc(const void *a, const void *b)
{
    const acc *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ord != y->ord)
        return x->ord - y->ord;
    return x->write - y->write; /* a copy onto itself: its read first */
}

/* Accesses by (key, order): they are produced in order, so a counting sort on the key keeps it (linear
 * when the key range is small against the count, else qsort). */
static tc_status sort_acc(acc *ac, int na, long range)
{
    if (range <= 0 || range > 8L * na + 1024) {
        qsort(ac, (size_t)na, sizeof *ac, cmp_acc);
        return TC_OK;
    }
    int *cnt = calloc((size_t)range + 1, sizeof(int));
    acc *tmp = malloc(((size_t)na + 1) * sizeof *tmp);
    if (!cnt || !tmp) {
        free(cnt);
        free(tmp);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < na; i++)
        cnt[ac[i].key + 1]++;
    for (long k = 0; k < range; k++)
        cnt[k + 1] += cnt[k];
    for (int i = 0; i < na; i++)
        tmp[cnt[ac[i].key]++] = ac[i];
    memcpy(ac, tmp, (size_t)na * sizeof *ac);
    free(cnt);
    free(tmp);
    return TC_OK;
}

typedef struct evkey { double t; int kt, tie, idx; } evkey;

static int cmp_evkey(const void *a, const void *b)
{
    const evkey *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kt != y->kt)
        return x->kt - y->kt;
    if (x->tie != y->tie)
        return x->tie - y->tie;
    return x->idx - y->idx; /* stable */
}

/* Natural merge sort of n keys (tmp: room for n): ascending runs are found, then merged pairwise, so
 * input made of a few sorted runs costs O(n log runs). */
static void merge_sort_keys(evkey *k, evkey *tmp, int n)
{
    int *run = malloc(((size_t)n + 2) * sizeof *run), nr = 0;
    if (!run) {
        qsort(k, (size_t)n, sizeof *k, cmp_evkey);
        return;
    }
    for (int i = 0; i < n; i++)
        if (i == 0 || cmp_evkey(&k[i - 1], &k[i]) > 0)
            run[nr++] = i;
    run[nr] = n;
    evkey *a = k, *b = tmp;
    while (nr > 1) {
        int w = 0;
        for (int r = 0; r < nr; r += 2) {
            int lo = run[r];
            if (r + 1 == nr) { /* an odd run out: copied (run[nr] is n) */
                memcpy(b + lo, a + lo, (size_t)(n - lo) * sizeof *a);
                run[w++] = lo;
                break;
            }
            int mid = run[r + 1], hi = run[r + 2];
            int i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                b[o++] = cmp_evkey(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
            memcpy(b + o, a + i, (size_t)(mid - i) * sizeof *a);
            o += mid - i;
            memcpy(b + o, a + j, (size_t)(hi - j) * sizeof *a);
            run[w++] = lo;
        }
        run[w] = n;
        nr = w;
        evkey *t = a;
        a = b;
        b = t;
    }
    if (a != k)
        memcpy(k, a, (size_t)n * sizeof *k);
    free(run);
}

/* Events in the global order of cmp_ev, sorting small keys and moving each event once. */
static tc_status sort_events(lw *L)
{
    evkey *k = malloc(((size_t)L->ne + 1) * sizeof *k), *kt = malloc(((size_t)L->ne + 1) * sizeof *kt);
    ev *e = malloc(((size_t)L->ne + 1) * sizeof *e);
    if (!k || !e || !kt) {
        free(k);
        free(kt);
        free(e);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < L->ne; i++)
        k[i] = (evkey){L->e[i].t, L->e[i].kind == 2 ? -1 : L->e[i].kind, L->e[i].tie, i};
    merge_sort_keys(k, kt, L->ne);
    free(kt);
    for (int i = 0; i < L->ne; i++)
        e[i] = L->e[k[i].idx];
    memcpy(L->e, e, (size_t)L->ne * sizeof *e);
    free(k);
    free(e);
    return TC_OK;
}

typedef struct dep { int tb, step; } dep;

/* Channel group of the connection a -> b: by the ring distance min(d, R-d), d = b - a mod R, in blocks
 * of 16, so a rank has at most 32 send peers and 32 receive peers per group, and a peer it both sends to
 * and receives from is in one group.  0 when no rank has more than lim peers. */
static int conn_group(const lw *L, int a, int b)
{
    if (L->groups <= 1)
        return 0;
    int d = ((b - a) % L->R + L->R) % L->R, sd = d < L->R - d ? d : L->R - d;
    return (sd - 1) / 16;
}

/* The scratch of pairing(): events bucketed by rank, and the tables of the rank being paired.
 * pst_free() frees them all. */
typedef struct pst {
    int *start, *idx;    /* rank r's events: idx[start[r] .. start[r + 1]], in order */
    int *loc;            /* per rank: its local peer index at the rank being paired (-1 not a peer) */
    int *peers;          /* per local peer index: the peer's rank */
    int *lastr, *stamp;  /* per chunk: the local peer it was last received from, at rank stamp */
    int P;               /* peers of the rank being paired */
    int *has;            /* per (peer, dir): 1 when the rank receives from (dir 0) / sends to (dir 1) it */
    int *flow;           /* per (receive peer b, send peer a): the chunks received from b and sent to a */
    int *pof;            /* per (peer, dir): its pair, -1 none yet */
    int cap, used;       /* entries of L->psend, precv and pgrp allocated and used */
} pst;

static void pst_free(pst *S)
{
    free(S->start);
    free(S->idx);
    free(S->loc);
    free(S->peers);
    free(S->lastr);
    free(S->stamp);
    free(S->has);
    free(S->flow);
    free(S->pof);
}

/* Events bucketed by rank; no rank is a peer and no chunk was received yet. */
static tc_status pr_setup(const lw *L, pst *S)
{
    const int R = L->R, ne = L->ne;
    S->start = calloc((size_t)R + 1, sizeof(int));
    S->idx = malloc(((size_t)ne + 1) * sizeof(int));
    S->loc = malloc((size_t)R * sizeof(int));
    S->peers = malloc((size_t)R * sizeof(int));
    S->lastr = malloc(((size_t)L->N + 1) * sizeof(int));
    S->stamp = malloc(((size_t)L->N + 1) * sizeof(int));
    if (!S->start || !S->idx || !S->loc || !S->peers || !S->lastr || !S->stamp)
        return TC_ERR_NOMEM;
    for (int i = 0; i < ne; i++)
        S->start[L->e[i].rank + 1]++;
    for (int r = 0; r < R; r++)
        S->start[r + 1] += S->start[r];
    int *fill = malloc(((size_t)R + 1) * sizeof(int));
    if (!fill)
        return TC_ERR_NOMEM;
    memcpy(fill, S->start, ((size_t)R + 1) * sizeof(int));
    for (int i = 0; i < ne; i++)
        S->idx[fill[L->e[i].rank]++] = i;
    free(fill);
    for (int r = 0; r < R; r++)
        S->loc[r] = -1;
    for (int c = 0; c < L->N; c++)
        S->stamp[c] = -1;
    return TC_OK;
}

/* Channel groups are needed when a rank has more send or receive peers than a channel takes. */
static void pr_groups(lw *L, pst *S)
{
    int maxp = 0;
    for (int r = 0; r < L->R; r++) {
        int np = 0;
        for (int k = S->start[r]; k < S->start[r + 1]; k++) {
            const ev *e = &L->e[S->idx[k]];
            if (e->kind != 2 && S->loc[e->peer] < 0)
                S->loc[e->peer] = np, S->peers[np++] = e->peer;
        }
        for (int k = 0; k < np; k++)
            S->loc[S->peers[k]] = -1;
        maxp = np > maxp ? np : maxp;
    }
    L->groups = maxp > L->lim.max_peers_per_chan ? (L->R / 2 - 1) / 16 + 1 : 1;
}

/* The peers of rank r in rank order (loc: rank -> local index) and its empty pairing tables. */
static tc_status pr_peers(const lw *L, pst *S, int r)
{
    int P = 0;
    for (int k = S->start[r]; k < S->start[r + 1]; k++) {
        const ev *e = &L->e[S->idx[k]];
        if (e->kind != 2 && S->loc[e->peer] < 0)
            S->loc[e->peer] = 0, S->peers[P++] = e->peer;
    }
    qsort(S->peers, (size_t)P, sizeof *S->peers, tc_cmp_int); /* local index order = rank order */
    for (int k = 0; k < P; k++)
        S->loc[S->peers[k]] = k;
    S->P = P;
    free(S->has);
    free(S->flow);
    free(S->pof);
    S->has = calloc((size_t)P * 2 + 1, sizeof(int));
    S->flow = calloc((size_t)P * P + 1, sizeof(int));
    S->pof = malloc(((size_t)P * 2 + 1) * sizeof(int));
    if (!S->has || !S->flow || !S->pof)
        return TC_ERR_NOMEM;
    for (int k = 0; k < 2 * P; k++)
        S->pof[k] = -1;
    return TC_OK;
}

/* Rank r's directions per peer, and the chunks that flow from a receive peer to a send peer. */
static void pr_flow(const lw *L, pst *S, int r)
{
    for (int k = S->start[r]; k < S->start[r + 1]; k++) {
        const ev *e = &L->e[S->idx[k]];
        if (e->kind == 2)
            continue;
        int q = S->loc[e->peer];
        S->has[q * 2 + e->kind] = 1;
        if (e->kind == 0) {
            S->lastr[e->chunk] = q;
            S->stamp[e->chunk] = r;
        } else if (S->stamp[e->chunk] == r) {
            S->flow[S->lastr[e->chunk] * S->P + q]++;
        }
    }
}

/* Room in L->psend, precv and pgrp for the pairs of a rank with P peers (at most 2P). */
static tc_status pr_grow(lw *L, pst *S)
{
    if (S->used + 2 * S->P + 1 <= S->cap)
        return TC_OK;
    S->cap = 2 * (S->used + 2 * S->P + 1);
    int *a1 = realloc(L->psend, (size_t)S->cap * sizeof(int)), *a2 = realloc(L->precv, (size_t)S->cap * sizeof(int));
    int *a3 = realloc(L->pgrp, (size_t)S->cap * sizeof(int));
    if (a1)
        L->psend = a1;
    if (a2)
        L->precv = a2;
    if (a3)
        L->pgrp = a3;
    return a1 && a2 && a3 ? TC_OK : TC_ERR_NOMEM;
}

/* Greedy: the heaviest receive-from b -> send-to a flow among free peers of one group pairs first (ties
 * go to a peer paired with itself).  Returns the pairs made. */
static int pr_greedy(const lw *L, pst *S, int r)
{
    const int P = S->P, *peers = S->peers, *flow = S->flow;
    int *pof = S->pof, np = 0;
    int *ps = L->psend + S->used, *pr = L->precv + S->used, *pg = L->pgrp + S->used;
    for (;;) {
        int bb = -1, ba = -1, bw = 0;
        for (int b = 0; b < P; b++)
            for (int a = 0; a < P; a++)
                if (flow[b * P + a] && 2 * flow[b * P + a] + (a == b) > bw && pof[b * 2 + 0] < 0 &&
                    pof[a * 2 + 1] < 0 && conn_group(L, peers[b], r) == conn_group(L, r, peers[a])) {
                    bw = 2 * flow[b * P + a] + (a == b);
                    bb = b;
                    ba = a;
                }
        if (bb < 0)
            return np;
        pof[bb * 2 + 0] = pof[ba * 2 + 1] = np;
        pr[np] = peers[bb];
        ps[np] = peers[ba];
        pg[np++] = conn_group(L, r, peers[ba]);
    }
}

/* Leftover directions after the greedy pairs (np of them): a send-only peer with a receive-only peer of
 * its group, else each peer with itself.  Returns the pairs of rank r. */
static int pr_leftovers(const lw *L, pst *S, int r, int np)
{
    const int P = S->P, *peers = S->peers, *has = S->has;
    int *pof = S->pof;
    int *ps = L->psend + S->used, *pr = L->precv + S->used, *pg = L->pgrp + S->used;
    for (int q = 0, a = 0; q < P; q++) {
        int hs = has[q * 2 + 1] && pof[q * 2 + 1] < 0;
        int hr = has[q * 2 + 0] && pof[q * 2 + 0] < 0;
        if (!hs && !hr)
            continue;
        int gq = hs ? conn_group(L, r, peers[q]) : conn_group(L, peers[q], r);
        if (hs != hr) {
            int want = hs ? 0 : 1; /* the side q lacks */
            while (a < P && !(has[a * 2 + want] && pof[a * 2 + want] < 0 &&
                              !(has[a * 2 + 1 - want] && pof[a * 2 + 1 - want] < 0)))
                a++;
            int ga = a < P ? (want ? conn_group(L, r, peers[a]) : conn_group(L, peers[a], r)) : -1;
            if (a < P && a != q && ga == gq) {
                ps[np] = peers[hs ? q : a];
                pr[np] = peers[hs ? a : q];
                pof[(hs ? q : a) * 2 + 1] = np;
                pof[(hs ? a : q) * 2 + 0] = np;
                pg[np++] = gq;
                continue;
            }
        }
        ps[np] = hs ? peers[q] : -1;
        pr[np] = hr ? peers[q] : -1;
        if (hs)
            pof[q * 2 + 1] = np;
        if (hr)
            pof[q * 2 + 0] = np;
        pg[np++] = gq;
    }
    return np;
}

/* The pairs of rank r, and the pair of each of its events. */
static tc_status pr_rank(lw *L, pst *S, int r)
{
    tc_status st;
    if ((st = pr_peers(L, S, r)))
        return st;
    pr_flow(L, S, r);
    if ((st = pr_grow(L, S)))
        return st;
    L->pbase[r] = S->used;
    int np = pr_leftovers(L, S, r, pr_greedy(L, S, r));
    L->npairs[r] = np;
    S->used += np;
    for (int k = S->start[r]; k < S->start[r + 1]; k++) {
        const ev *e = &L->e[S->idx[k]];
        L->epair[S->idx[k]] = e->kind == 2 ? -1 : S->pof[S->loc[e->peer] * 2 + e->kind];
    }
    for (int k = 0; k < S->P; k++)
        S->loc[S->peers[k]] = -1;
    return TC_OK;
}

/* Pair receive peers with send peers into thread blocks, per rank: by the number of chunks that flow
 * from one through the rank to the other (greedy, heaviest first, ties to a peer paired with itself),
 * leftovers with themselves, then send-only with receive-only; only peers of one channel group pair.
 * Events are bucketed by rank first: O(E + sum over ranks of P^2) for P peers of a rank. */
static tc_status pairing(lw *L)
{
    const int R = L->R;
    pst S = {0};
    tc_status st;
    L->epair = malloc(((size_t)L->ne + 1) * sizeof(int));
    L->npairs = calloc((size_t)R, sizeof(int));
    L->pbase = calloc((size_t)R + 1, sizeof(int));
    if (!L->epair || !L->npairs || !L->pbase) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    if ((st = pr_setup(L, &S)))
        goto done;
    pr_groups(L, &S);
    for (int r = 0; r < R; r++)
        if ((st = pr_rank(L, &S, r)))
            goto done;
    L->pbase[R] = S.used;
done:
    pst_free(&S);
    return st;
}

/*
 * build(): lowering of the ordered events for one channel count, in phases that run in this order:
 * bld_assign_tbs (each event's tb), bld_chain_slots (per rank and chunk the previous and next event),
 * bld_tb_bases (global tb numbering), bld_number_steps (steps per tb: copy aggregation, receive-send
 * fusion), bld_rrs (rrcs whose store nobody reads), bld_aggregate (cnt > 1 messages), bld_accesses and
 * bld_deps (per slot the conflicting accesses of other tbs), bld_program, bld_scratch and bld_gpus (the
 * program, its gpus and tbs), bld_emit (the steps, with nops for extra dependencies), bld_link_deps (the
 * depid/deps/hasdep fields) and bld_count_steps (the longest tb).
 */

/* The arrays that live across build()'s phases, indexed by event (ne + 1), by (rank, chunk) (R * N), by
 * global tb (tbbase[r] + tb of rank r; ntb in all) or by transfer.  bld_free() frees them all. */
typedef struct bld {
    int nch;             /* channels per pair of peers */
    int ntb;             /* tbs of all ranks (npairs * nch + 1 per rank, the copy tb included) */
    int *hascp;          /* per rank: 1 when it has copy-ins (then its tb 0 is the copy tb) */
    int *rv_of;          /* per transfer: its receive event */
    int *lastw_rc;       /* per (rank, chunk): the last event that wrote it (bld_number_steps) */
    int *next_rc, *prev_rc; /* per event: the next and the previous event of its (rank, chunk), -1 none */
    int *nxt_tb;         /* per event heading a step: the event heading its tb's next step, -1 none */
    int *tbbase;         /* per rank: its first global tb (R + 1 entries) */
    int *tbsteps;        /* per global tb: its logical steps */
    int *pos;            /* per global tb: its last event */
    int *lastlog;        /* per global tb: the event heading its last logical step */
    acc *ac;             /* storage accesses, sorted by (slot, order) */
    int na;
    dep *dl;             /* dependencies (global tb, logical step), listed per event by dfirst / dnext */
    int ndl, capdl;
    int *dfirst, *dnext;
    int *stepmap;        /* per event: its step (the last, when it expands) */
    int *first;          /* per event: its first step (nops included) */
    int *lbase;          /* per global tb: the index of its first logical step in evmap */
    int *evmap;          /* per logical step: the event that heads it */
    int *tscr;           /* per global tb: its private scratch (plain lowering), a count then an offset */
    dep *u;              /* one step's dependencies, at most one per tb */
    tc_msccl *m;
} bld;

static void bld_free(bld *B)
{
    tc_msccl_free(B->m);
    free(B->hascp);
    free(B->rv_of);
    free(B->lastw_rc);
    free(B->next_rc);
    free(B->prev_rc);
    free(B->nxt_tb);
    free(B->tbbase);
    free(B->tbsteps);
    free(B->pos);
    free(B->lastlog);
    free(B->ac);
    free(B->dl);
    free(B->dfirst);
    free(B->dnext);
    free(B->stepmap);
    free(B->first);
    free(B->lbase);
    free(B->evmap);
    free(B->tscr);
    free(B->u);
}

/* The tb of each event (the copy tb, when a rank has copy-ins, is tb 0) and the receive of each
 * transfer; every event starts unfused with cnt 1. */
static tc_status bld_assign_tbs(lw *L, bld *B)
{
    B->hascp = calloc((size_t)L->R, sizeof(int));
    B->rv_of = malloc(((size_t)L->s->n_xfers + 1) * sizeof(int));
    if (!B->hascp || !B->rv_of)
        return TC_ERR_NOMEM;
    for (int i = 0; i < L->ne; i++) {
        if (L->e[i].kind == 2)
            B->hascp[L->e[i].rank] = 1;
        if (L->e[i].kind == 0)
            B->rv_of[L->e[i].xfer] = i;
    }
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        e->fused = 0;
        e->cnt = 1;
        e->fsend = -1;
        if (e->kind == 2)
            e->tb = 0;
        else
            e->tb = B->hascp[e->rank] + L->epair[i] * B->nch + e->chunk % B->nch;
    }
    return TC_OK;
}

/* Per event the next and the previous event that touches its (rank, chunk); lastw_rc is left at -1. */
static tc_status bld_chain_slots(lw *L, bld *B)
{
    const int RN = L->R * L->N;
    B->lastw_rc = malloc((size_t)L->R * L->N * sizeof(int));
    B->next_rc = malloc(((size_t)L->ne + 1) * sizeof(int));
    B->prev_rc = malloc(((size_t)L->ne + 1) * sizeof(int));
    B->nxt_tb = malloc(((size_t)L->ne + 1) * sizeof(int));
    if (!B->lastw_rc || !B->next_rc || !B->prev_rc || !B->nxt_tb)
        return TC_ERR_NOMEM;
    for (int i = 0; i < RN; i++)
        B->lastw_rc[i] = -1;
    for (int i = L->ne - 1; i >= 0; i--) {
        int w = L->e[i].rank * L->N + L->e[i].chunk;
        B->next_rc[i] = B->lastw_rc[w];
        B->lastw_rc[w] = i;
    }
    for (int i = 0; i < RN; i++)
        B->lastw_rc[i] = -1;
    for (int i = 0; i < L->ne; i++) {
        int w = L->e[i].rank * L->N + L->e[i].chunk;
        B->prev_rc[i] = B->lastw_rc[w];
        B->lastw_rc[w] = i;
        B->nxt_tb[i] = -1;
    }
    for (int i = 0; i < RN; i++)
        B->lastw_rc[i] = -1;
    return TC_OK;
}

/* Global tb numbers: rank r's tbs are tbbase[r] .. tbbase[r + 1]; per tb no step and no event yet. */
static tc_status bld_tb_bases(lw *L, bld *B)
{
    const int R = L->R;
    B->tbbase = malloc((size_t)(R + 1) * sizeof(int));
    if (!B->tbbase)
        return TC_ERR_NOMEM;
    B->ntb = 0;
    for (int r = 0; r < R; r++) {
        B->tbbase[r] = B->ntb;
        B->ntb += L->npairs[r] * B->nch + 1;
    }
    B->tbbase[R] = B->ntb;
    B->tbsteps = calloc((size_t)B->ntb, sizeof(int));
    B->pos = malloc((size_t)B->ntb * sizeof(int));
    B->lastlog = malloc(((size_t)B->ntb + 1) * sizeof(int));
    if (!B->tbsteps || !B->pos || !B->lastlog)
        return TC_ERR_NOMEM;
    for (int i = 0; i < B->ntb; i++)
        B->pos[i] = B->lastlog[i] = -1;
    return TC_OK;
}

/* Copy-in i joins the step of the copy p before it in its tb when the two are contiguous at both ends
 * (cnt up to 71).  Returns 1 when it merged. */
static int merge_copy(lw *L, int i, int p)
{
    ev *e = &L->e[i];
    if (e->kind != 2 || p < 0 || L->e[p].kind != 2)
        return 0;
    ev *h = L->e[p].fused ? &L->e[L->e[p].fused - 2] : &L->e[p];
    int hs, ho, hd, hdo, es, eo, ed, edo;
    cp_ends(L, h, &hs, &ho, &hd, &hdo);
    cp_ends(L, e, &es, &eo, &ed, &edo);
    if (!(h->cnt < TC_MSCCL_MAX_CNT && h->peer == e->peer && es == hs && eo == ho + h->cnt && ed == hd &&
          edo == hdo + h->cnt))
        return 0;
    h->cnt++;
    e->fused = 2 + (int)(h - L->e);
    e->step = h->step;
    return 1;
}

/* Send i fuses into the receive p before it in its tb (r+s = rcs, rrc+s = rrcs) when p received the
 * same chunk and nothing wrote the slot in between.  Returns 1 when it fused. */
static int fuse_send(lw *L, const bld *B, int i, int p)
{
    ev *e = &L->e[i];
    if (L->plain || e->kind != 1 || p < 0 || L->e[p].fused || L->e[p].kind != 0 || L->e[p].chunk != e->chunk ||
        L->e[p].type == TC_MS_RCS || L->e[p].type == TC_MS_RRCS)
        return 0;
    if (B->lastw_rc[e->rank * L->N + e->chunk] != p)
        return 0;
    L->e[p].type = L->e[p].type == TC_MS_RRC ? TC_MS_RRCS : TC_MS_RCS;
    L->e[p].fsend = i;
    e->fused = 1;
    e->step = L->e[p].step;
    return 1;
}

/* Step lists of the tbs (events already in global order): each event's type and logical step; copies
 * aggregate, a send fuses into the receive before it; nxt_tb links the heads of a tb's steps. */
static void bld_number_steps(lw *L, bld *B)
{
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        int g = B->tbbase[e->rank] + e->tb;
        int p = B->pos[g];
        e->type = e->kind == 2 ? TC_MS_CPY : e->kind == 1 ? TC_MS_SEND : e->op == TC_OP_REDUCE ? TC_MS_RRC : TC_MS_RECV;
        if (merge_copy(L, i, p) || fuse_send(L, B, i, p)) {
            B->pos[g] = i;
            continue;
        }
        e->step = B->tbsteps[g]++;
        B->pos[g] = i;
        if (B->lastlog[g] >= 0)
            B->nxt_tb[B->lastlog[g]] = i;
        B->lastlog[g] = i;
        if (e->kind != 1)
            B->lastw_rc[e->rank * L->N + e->chunk] = i;
    }
}

/* An rrcs whose stored value is overwritten (by a plain receive) before any read becomes rrs. */
static void bld_rrs(lw *L, const bld *B)
{
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        if (e->type != TC_MS_RRCS)
            continue;
        for (int j = B->next_rc[i]; j >= 0 && j < L->ne; j = B->next_rc[j]) {
            const ev *f = &L->e[j];
            if (f->rank != e->rank || f->chunk != e->chunk || (f->fused && f->kind == 1 && f->step == e->step && f->tb == e->tb))
                continue;
            if (f->kind == 0 && (f->type == TC_MS_RECV || f->type == TC_MS_RCS))
                e->type = TC_MS_RRS;
            break; /* any other access (read, reduce, copy) keeps the store */
        }
    }
}

/* Whether send b (with receive rb) can join the message of send i (receive ra) whose runs end at ta
 * and tr: next in both tbs, of the same types, contiguous at both ends, untouched in between, and of
 * the same sparse format. */
static int can_join(const lw *L, const bld *B, int i, int ra, int ta, int tr, int b, int rb)
{
    const ev *a = &L->e[i];
    if (rb < 0 || L->e[b].fused || L->e[b].type != TC_MS_SEND || B->nxt_tb[tr] != rb || L->e[rb].fused ||
        L->e[rb].type != L->e[ra].type || L->e[rb].tb != L->e[ra].tb)
        return 0;
    int sw = a->rank * L->N + a->chunk, bw = a->rank * L->N + L->e[b].chunk;
    int rw = L->e[ra].rank * L->N + a->chunk, rbw = L->e[ra].rank * L->N + L->e[b].chunk;
    if (L->wbuf[bw] != L->wbuf[sw] || L->woff[bw] != L->woff[sw] + a->cnt || L->wbuf[rbw] != L->wbuf[rw] ||
        L->woff[rbw] != L->woff[rw] + a->cnt)
        return 0;
    if (B->prev_rc[b] > i || B->prev_rc[rb] > ra) /* someone touches the later chunk in between */
        return 0;
    return ev_fmt(L, &L->e[b]) == ev_fmt(L, a); /* one message, one sparse format */
}

/* Aggregation: consecutive messages of one connection whose steps are adjacent in both tbs, plain
 * (s with r, or s with rrc), contiguous at both ends, and whose later chunk nobody touches between the
 * two steps, travel as one step with cnt > 1. */
static void bld_aggregate(lw *L, const bld *B)
{
    for (int i = 0; i < L->ne; i++) {
        ev *a = &L->e[i];
        if (a->kind != 1 || a->fused || a->type != TC_MS_SEND)
            continue;
        int ra = B->rv_of[a->xfer];
        if (L->e[ra].fused || (L->e[ra].type != TC_MS_RECV && L->e[ra].type != TC_MS_RRC))
            continue;
        int ta = i, tr = ra; /* tails of the merged runs */
        while (a->cnt < TC_MSCCL_MAX_CNT) {
            int b = B->nxt_tb[ta], rb = b >= 0 && L->e[b].kind == 1 ? B->rv_of[L->e[b].xfer] : -1;
            if (!can_join(L, B, i, ra, ta, tr, b, rb))
                break;
            L->e[b].fused = 2 + i;
            L->e[b].step = a->step;
            L->e[rb].fused = 2 + ra;
            L->e[rb].step = L->e[ra].step;
            a->cnt++;
            L->e[ra].cnt++;
            ta = b;
            tr = rb;
        }
    }
}

/* The accesses of every step to its storage slots, sorted by slot in global order. */
static tc_status bld_accesses(lw *L, bld *B)
{
    acc *ac = B->ac = malloc((size_t)(2 * L->ne + 1) * sizeof *ac);
    if (!ac)
        return TC_ERR_NOMEM;
    int na = 0;
    for (int i = 0; i < L->ne; i++) {
        const ev *e = &L->e[i];
        int w = e->rank * L->N + e->chunk;
        int g = B->tbbase[e->rank] + e->tb;
        if (e->kind == 2) {
            int sb, so, db, dof;
            cp_ends(L, e, &sb, &so, &db, &dof);
            ac[na++] = (acc){slot_key(L, e->rank, sb, so), i, g, e->step, 0};
            ac[na++] = (acc){slot_key(L, e->rank, db, dof), i, g, e->step, 1};
        } else if (!e->fused || e->fused >= 2) {
            int write = e->kind == 0 && e->type != TC_MS_RRS;
            ac[na++] = (acc){slot_key(L, e->rank, L->wbuf[w], L->woff[w]), i, g, e->step, write};
        }
    }
    B->na = na;
    return sort_acc(ac, na, (long)L->R * 3 * (L->N * 4 + 8));
}

/* Step of access k depends on the step of access j (merged copies: the step's head event collects it). */
static tc_status dep_add(const lw *L, bld *B, int k, int j)
{
    if (B->ndl + 1 >= B->capdl) {
        B->capdl *= 2;
        dep *p1 = realloc(B->dl, (size_t)B->capdl * sizeof *B->dl);
        int *p3 = realloc(B->dnext, (size_t)B->capdl * sizeof *B->dnext);
        if (p1)
            B->dl = p1;
        if (p3)
            B->dnext = p3;
        if (!p1 || !p3)
            return TC_ERR_NOMEM;
    }
    int own = B->ac[k].ord;
    if (L->e[own].fused >= 2)
        own = L->e[own].fused - 2;
    B->dl[B->ndl] = (dep){B->ac[j].tb, B->ac[j].step};
    B->dnext[B->ndl] = B->dfirst[own];
    B->dfirst[own] = B->ndl++;
    return TC_OK;
}

/* Per logical step (indexed by its head event) its dependencies: per slot, the conflicting earlier
 * accesses of other tbs (the last write, and for a write the reads since it). */
static tc_status bld_deps(lw *L, bld *B)
{
    const acc *ac = B->ac;
    tc_status st;
    B->capdl = L->ne * 4 + 16;
    B->dl = calloc((size_t)L->ne * 4 + 16, sizeof *B->dl);
    B->dfirst = malloc((size_t)(L->ne + 1) * sizeof(int));
    B->dnext = malloc((size_t)(L->ne * 4 + 16) * sizeof(int));
    if (!B->dl || !B->dfirst || !B->dnext)
        return TC_ERR_NOMEM;
    for (int i = 0; i <= L->ne; i++)
        B->dfirst[i] = -1;
    for (int a = 0; a < B->na;) {
        int b = a;
        while (b < B->na && ac[b].key == ac[a].key)
            b++;
        int lastw = -1;
        for (int k = a; k < b; k++) {
            for (int j = k - 1; j >= a && j >= lastw && j >= 0; j--) {
                if (!ac[k].write && !ac[j].write)
                    continue;
                if (ac[j].tb == ac[k].tb)
                    continue;
                if ((st = dep_add(L, B, k, j)))
                    return st;
                if (ac[j].write)
                    break;
            }
            if (ac[k].write)
                lastw = k;
        }
        a = b;
    }
    return TC_OK;
}

/* The program with its header, and the arrays that materializing the steps needs. */
static tc_status bld_program(lw *L, bld *B)
{
    const tc_sched *s = L->s;
    tc_status st;
    if ((st = tc_msccl_create(s->algo ? s->algo : "tacosc", s->coll, L->R, &B->m)))
        return st;
    tc_msccl *m = B->m;
    snprintf(m->proto, sizeof m->proto, "%s", L->o->proto ? L->o->proto : "Simple");
    m->inplace = L->inplace || L->dual;
    m->outofplace = !L->inplace;
    m->root = s->root;
    m->unwind = s->unwind;
    m->switch_model = s->switch_model;
    m->link_model = s->link_model;
    m->min_bytes = L->o->min_bytes;
    m->max_bytes = L->o->max_bytes;
    m->nchannels = L->groups * B->nch;
    m->nchunksperloop = (s->coll == TC_COLL_ALLREDUCE) ? L->N
                        : (s->coll == TC_COLL_BROADCAST || s->coll == TC_COLL_REDUCE) ? L->K
                                                                                      : L->R * L->K;
    B->stepmap = malloc((size_t)(L->ne + 1) * sizeof(int));
    B->first = malloc((size_t)(L->ne + 1) * sizeof(int));
    B->lbase = malloc(((size_t)B->ntb + 1) * sizeof(int));
    B->evmap = malloc(((size_t)L->ne + 1) * sizeof(int));
    B->u = malloc(((size_t)B->ntb + 1) * sizeof *B->u);
    B->tscr = calloc((size_t)B->ntb + 1, sizeof(int));
    if (!B->stepmap || !B->first || !B->lbase || !B->evmap || !B->u || !B->tscr)
        return TC_ERR_NOMEM;
    return TC_OK;
}

/* Scratch of each rank: its working slots, then (plain lowering) each tb's private chunks, as many as
 * its largest reducing receive: that lands there and is added to its place by a re right after it.
 * Also the map from each tb's logical steps to the events heading them. */
static void bld_scratch(lw *L, bld *B)
{
    for (int i = 0; L->plain && i < L->ne; i++) {
        const ev *e = &L->e[i];
        int g = B->tbbase[e->rank] + e->tb;
        if (!e->fused && e->kind == 0 && e->type == TC_MS_RRC && e->cnt > B->tscr[g])
            B->tscr[g] = e->cnt;
    }
    for (int r = 0; r < L->R; r++) {
        int off = L->nscratch[r];
        for (int g = B->tbbase[r]; g < B->tbbase[r + 1]; g++) {
            int need = B->tscr[g];
            B->tscr[g] = off;
            off += need;
        }
        B->m->gpus[r].s_chunks = off;
    }
    for (int g = 0, acc_n = 0; g < B->ntb; g++) {
        B->lbase[g] = acc_n;
        acc_n += B->tbsteps[g];
    }
    for (int i = 0; i < L->ne; i++)
        if (!L->e[i].fused)
            B->evmap[B->lbase[B->tbbase[L->e[i].rank] + L->e[i].tb] + L->e[i].step] = i;
}

/* Input and output buffer sizes in chunks of every gpu. */
static void io_chunks(const lw *L, int *ic, int *oc)
{
    int ip = L->inplace, K = L->K, R = L->R;
    switch (L->s->coll) {
    case TC_COLL_ALLREDUCE: *ic = L->N; *oc = ip ? 0 : L->N; break;
    case TC_COLL_BROADCAST:
    case TC_COLL_REDUCE: *ic = K; *oc = ip ? 0 : K; break;
    case TC_COLL_ALLGATHER:
    case TC_COLL_GATHER: *ic = ip ? 0 : K; *oc = R * K; break;
    case TC_COLL_REDUCESCATTER:
    case TC_COLL_SCATTER: *ic = R * K; *oc = ip ? 0 : K; break;
    default: *ic = *oc = R * K; break;
    }
}

/* The tbs of every gpu (the copy tb first, then per pair one per channel) and its buffer sizes. */
static tc_status bld_gpus(lw *L, bld *B)
{
    const int nch = B->nch;
    tc_status st;
    for (int r = 0; r < L->R; r++) {
        tc_msccl_gpu *gp = &B->m->gpus[r];
        if (B->hascp[r] && (st = tc_msccl_tb_add(gp, -1, -1, 0, NULL)))
            return st;
        for (int t = 0; t < L->npairs[r] * nch; t++) {
            int p = L->pbase[r] + t / nch;
            if ((st = tc_msccl_tb_add(gp, L->psend[p], L->precv[p], L->pgrp[p] * nch + t % nch, NULL)))
                return st;
        }
        io_chunks(L, &gp->i_chunks, &gp->o_chunks);
    }
    return TC_OK;
}

/* The dependencies of event i's step in u, one per tb (its latest step there); returns their count. */
static int collect_deps(const bld *B, int i)
{
    int nu = 0;
    for (int d = B->dfirst[i]; d >= 0; d = B->dnext[d]) {
        int k;
        for (k = 0; k < nu && B->u[k].tb != B->dl[d].tb; k++)
            ;
        if (k == nu)
            B->u[nu++] = B->dl[d];
        else if (k < nu && B->dl[d].step > B->u[k].step)
            B->u[k].step = B->dl[d].step;
    }
    return nu;
}

/* The step of event e: its type, its working slot, its peer's slot as the far end and sparse formats. */
static tc_msccl_step step_of(const lw *L, const ev *e)
{
    int w = e->rank * L->N + e->chunk, pw = e->peer * L->N + e->chunk;
    tc_msccl_step x = {0, e->type, L->wbuf[w], L->woff[w], L->wbuf[w], L->woff[w], e->cnt, -1, -1, 0, 0, 0, 0};
    if (e->kind == 0) {
        x.fmt_recv = ev_fmt(L, e);
        x.fmt_send = e->fsend >= 0 ? ev_fmt(L, &L->e[e->fsend]) : 0;
    } else if (e->kind == 1) {
        x.fmt_send = ev_fmt(L, e);
    }
    if (e->kind == 2) {
        cp_ends(L, e, &x.srcbuf, &x.srcoff, &x.dstbuf, &x.dstoff);
    } else if (e->type == TC_MS_SEND) {
        x.dstbuf = L->wbuf[pw];
        x.dstoff = L->woff[pw];
    } else if (e->type == TC_MS_RECV) {
        x.srcbuf = L->wbuf[pw];
        x.srcoff = L->woff[pw];
    }
    return x;
}

/* Event i's steps: a nop per dependency beyond the first, then its step, or (plain lowering of a
 * reducing receive) r into the tb's private scratch followed by re into the slot. */
static tc_status emit_event(lw *L, bld *B, int i)
{
    const ev *e = &L->e[i];
    tc_msccl_tb *tb = &B->m->gpus[e->rank].tbs[e->tb];
    tc_status st = TC_OK;
    int nu = collect_deps(B, i);
    int expand = L->plain && e->kind == 0 && e->type == TC_MS_RRC;
    B->first[i] = tb->n_steps;
    B->stepmap[i] = tb->n_steps + (nu > 1 ? nu - 1 : 0) + expand; /* final index of the step */
    tc_msccl_step nop = {0, TC_MS_NOP, TC_MS_BUF_I, -1, TC_MS_BUF_O, -1, 0, -1, -1, 0, 0, 0, 0};
    for (int k = 0; k + 1 < nu; k++)
        if ((st = tc_msccl_step_add(tb, &nop)))
            return st;
    tc_msccl_step x = step_of(L, e);
    if (!expand)
        return tc_msccl_step_add(tb, &x);
    int scr = B->tscr[B->tbbase[e->rank] + e->tb], pw = e->peer * L->N + e->chunk;
    tc_msccl_step rx = x, rex = x;
    rx.type = TC_MS_RECV;
    rx.srcbuf = L->wbuf[pw];
    rx.srcoff = L->woff[pw];
    rx.dstbuf = TC_MS_BUF_S;
    rx.dstoff = scr;
    rex.type = TC_MS_RE;
    rex.srcbuf = TC_MS_BUF_S;
    rex.srcoff = scr;
    rex.fmt_recv = rex.fmt_send = 0;
    if ((st = tc_msccl_step_add(tb, &rx)))
        return st;
    return tc_msccl_step_add(tb, &rex);
}

/* The steps of every tb, in global order. */
static tc_status bld_emit(lw *L, bld *B)
{
    tc_status st;
    for (int i = 0; i < L->ne; i++)
        if (!L->e[i].fused && (st = emit_event(L, B, i)))
            return st;
    return TC_OK;
}

/* Dependencies name logical steps: mapped through the events to step indices, they go on the nops and
 * the first step of each event, and mark the steps they name (hasdep). */
static tc_status bld_link_deps(lw *L, bld *B)
{
    tc_msccl *m = B->m;
    for (int i = 0; i < L->ne; i++) {
        const ev *e = &L->e[i];
        if (e->fused)
            continue;
        tc_msccl_tb *tb = &m->gpus[e->rank].tbs[e->tb];
        int nu = collect_deps(B, i), base = B->first[i];
        for (int k = 0; k < nu; k++) {
            int tgt_t = B->u[k].tb - B->tbbase[e->rank];
            int fs = B->stepmap[B->evmap[B->lbase[B->u[k].tb] + B->u[k].step]];
            if (fs < 0 || fs >= m->gpus[e->rank].tbs[tgt_t].n_steps)
                return tc_error(L->ctx, TC_ERR_INTERNAL, NULL, 0, "msccl lowering: lost a dependency");
            tc_msccl_step *x = &tb->steps[base + k];
            x->depid = tgt_t;
            x->deps = fs;
            m->gpus[e->rank].tbs[tgt_t].steps[fs].hasdep = 1;
        }
    }
    return TC_OK;
}

/* The most steps of any tb, and whether one reaches the target's limit. */
static void bld_count_steps(const lw *L, const tc_msccl *m, int *too_long, int *maxsteps)
{
    *maxsteps = 0;
    for (int r = 0; r < L->R; r++)
        for (int t = 0; t < m->gpus[r].n_tbs; t++) {
            if (m->gpus[r].tbs[t].n_steps >= L->lim.max_steps_per_tb)
                *too_long = 1;
            if (m->gpus[r].tbs[t].n_steps > *maxsteps)
                *maxsteps = m->gpus[r].tbs[t].n_steps;
        }
}

/* The MSCCL program of the ordered events with nch channels per pair of peers.  *too_long: a tb has
 * the target's step limit or more; *maxsteps: the most steps of any tb (both on success). */
static tc_status build(lw *L, int nch, tc_msccl **out, int *too_long, int *maxsteps)
{
    bld B = {.nch = nch};
    tc_status st;
    *too_long = 0;
    if ((st = bld_assign_tbs(L, &B)) || (st = bld_chain_slots(L, &B)) || (st = bld_tb_bases(L, &B)))
        goto fail;
    bld_number_steps(L, &B);
    bld_rrs(L, &B);
    bld_aggregate(L, &B);
    if ((st = bld_accesses(L, &B)) || (st = bld_deps(L, &B)) || (st = bld_program(L, &B)))
        goto fail;
    bld_scratch(L, &B);
    if ((st = bld_gpus(L, &B)) || (st = bld_emit(L, &B)) || (st = bld_link_deps(L, &B)))
        goto fail;
    bld_count_steps(L, B.m, too_long, maxsteps);
    *out = B.m;
    B.m = NULL;
fail:
    bld_free(&B);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * A delayed send (placed just before its arrival, as routed_copy's are) reads the same data as at its
 * start when nothing writes the chunk at its source in between: no transfer of that chunk into the source
 * arrives in (start, arrival].  safe[i] says it for every transfer; arrivals are bucketed per (rank, chunk)
 * and sorted, so O(T log T).  Times on the grid of q, as order_events compares them.
 */
static tc_status delay_safe(const lw *L, double q, char *safe)
{
    const tc_sched *s = L->s;
    const size_t RN = (size_t)L->R * L->N;
    int *off = calloc(RN + 1, sizeof *off);
    double *arr = malloc(((size_t)s->n_xfers + 1) * sizeof *arr);
    if (!off || !arr) {
        free(off);
        free(arr);
        return TC_ERR_NOMEM;
    }
#define TQ(t) (q > 0 ? round((t) / q) : (t))
    for (int i = 0; i < s->n_xfers; i++)
        off[(size_t)s->xfers[i].dst * L->N + s->xfers[i].chunk + 1]++;
    for (size_t w = 0; w < RN; w++)
        off[w + 1] += off[w];
    for (int i = 0; i < s->n_xfers; i++) /* fill from the top of each bucket down: off[w] ends at its start */
        arr[--off[(size_t)s->xfers[i].dst * L->N + s->xfers[i].chunk + 1]] = TQ(s->xfers[i].t_end);
    for (size_t w = 0; w < RN; w++)
        qsort(arr + off[w], (size_t)(off[w + 1] - off[w]), sizeof *arr, cmp_double);
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        const size_t w = (size_t)x->src * L->N + x->chunk;
        const double ts = TQ(x->t_start), te = TQ(x->t_end);
        int lo = off[w], hi = off[w + 1]; /* first arrival > ts */
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (arr[mid] > ts)
                hi = mid;
            else
                lo = mid + 1;
        }
        safe[i] = !(lo < off[w + 1] && arr[lo] <= te);
    }
#undef TQ
    free(off);
    free(arr);
    return TC_OK;
}

/*
 * The global event order (see the header): sends at their start (routed copies, and with `delay` every
 * transfer that delay_safe allows, just before their arrival), receives at their arrival moved after the
 * previous receive of their connection (FIFO).  TC_ERR_UNSUPPORTED without a diagnostic, pair[] set, when
 * moving the receives would reorder a rank's accesses to a chunk (the caller repairs or reports).
 */
/* The events of the transfers: the sends first, then the receives, each in IR order (a canonical IR,
 * sorted by start, makes them two nearly sorted runs for the natural merge sort), with their times on
 * the grid of q; a routed copy or (delay) a delay-safe transfer is sent as it is delivered. */
static tc_status oe_events(lw *L, int delay, double q)
{
    const tc_sched *s = L->s;
    char *safe = NULL;
    L->ne = 0;
    if (delay && (!(safe = malloc((size_t)s->n_xfers + 1)) || delay_safe(L, q, safe))) {
        free(safe);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        double ts = q > 0 ? round(x->t_start / q) : x->t_start, te = q > 0 ? round(x->t_end / q) : x->t_end;
        if ((routed_copy(x) || (safe && safe[i])) && te - 0.5 > ts)
            ts = te - 0.5; /* sent as it is delivered, before anything at its arrival (see routed_copy) */
        if (L->by_step)
            ts = 2.0 * x->step;
        L->e[L->ne++] = (ev){x->src, i, 1, x->chunk, x->dst, x->op, ts, i, 0, 0, 0, 0, 1, -1};
    }
    free(safe);
    /* te-ccl plans replayed by tacos-run (a JSON plan's lowering, which verify checks): a link sends its
     * next chunk while the last is still in flight (alpha holds no link), so receives in arrival order can
     * leave more messages queued on one FIFO connection than it holds; each receive goes just after its
     * send instead (before anything later on the grid): one queued message per connection, still before
     * the arrival anything forwards it from, so no deadlock.  For a runtime target the arrival order stays
     * (often faster), and compile takes another chunking when its program does not run. */
    const int send_key = s->link_model == TC_LINK_TECCL && !L->by_step && L->o->target == TC_TARGET_EXEC;
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        double ts = q > 0 ? round(x->t_start / q) : x->t_start, te = q > 0 ? round(x->t_end / q) : x->t_end;
        te = te > ts ? te : ts;
        if (L->by_step)
            te = 2.0 * x->step + 1;
        else if (send_key)
            te = L->e[i].t + (q > 0 ? 0.25 : 0.25 * (te - L->e[i].t));
        L->e[L->ne++] = (ev){x->dst, i, 0, x->chunk, x->src, x->op, te, i, 0, 0, 0, 0, 1, -1};
    }
    return TC_OK;
}

/* Receives: after their send, and per connection (src, dst, chunk mod fch) in the send order (FIFO);
 * a receive that would come earlier is retimed just after the later of the two. */
static tc_status oe_fifo(lw *L, int fch)
{
    const tc_sched *s = L->s;
    const size_t nconn = (size_t)L->R * L->R * fch;
    int *last = malloc(nconn * sizeof(int));
    int *recv_of = malloc(((size_t)s->n_xfers + 1) * sizeof(int));
    if (!last || !recv_of) {
        free(last);
        free(recv_of);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < L->ne; i++)
        if (L->e[i].kind == 0)
            recv_of[L->e[i].xfer] = i;
    for (size_t i = 0; i < nconn; i++)
        last[i] = -1;
    for (int i = 0; i < L->ne; i++) {
        if (L->e[i].kind != 1)
            continue;
        ev *rv = &L->e[recv_of[L->e[i].xfer]];
        size_t cn = ((size_t)L->e[i].rank * L->R + L->e[i].peer) * fch + L->e[i].chunk % fch;
        /* after its own send and after the previous receive of the connection, in the sort order */
        const ev *after = &L->e[i];
        if (last[cn] >= 0 && cmp_ev(&L->e[last[cn]], after) > 0)
            after = &L->e[last[cn]];
        if (cmp_ev(rv, after) <= 0)
            rv->t = nextafter(after->t, 1e300);
        last[cn] = recv_of[L->e[i].xfer];
    }
    free(last);
    free(recv_of);
    return TC_OK;
}

/* *broken = 1 when moving receives reordered a rank's accesses to a chunk (fused holds each event's
 * original position); pair then names the first such connection (src, dst). */
static tc_status oe_check(const lw *L, int pair[2], int *broken)
{
    const size_t RN = (size_t)L->R * L->N;
    int *lastpos = malloc(RN * sizeof(int));
    if (!lastpos)
        return TC_ERR_NOMEM;
    for (size_t i = 0; i < RN; i++)
        lastpos[i] = -1;
    *broken = 0;
    for (int i = 0; i < L->ne; i++) {
        int w = L->e[i].rank * L->N + L->e[i].chunk;
        if (L->e[i].fused < lastpos[w]) {
            pair[0] = L->e[i].kind ? L->e[i].rank : L->e[i].peer;
            pair[1] = L->e[i].kind ? L->e[i].peer : L->e[i].rank;
            *broken = 1;
            break;
        }
        lastpos[w] = L->e[i].fused;
    }
    free(lastpos);
    return TC_OK;
}

/* Retime: every rank's accesses to a chunk back in their original order, each just after the one
 * before it when a moved receive put it earlier (times only grow); *moved counts the events moved. */
static tc_status oe_retime(lw *L, int *moved)
{
    const size_t RN = (size_t)L->R * L->N;
    int *pos = malloc((size_t)L->ne * sizeof *pos);
    double *tmax = malloc(RN * sizeof *tmax);
    if (!pos || !tmax) {
        free(pos);
        free(tmax);
        return TC_ERR_NOMEM;
    }
    for (size_t w = 0; w < RN; w++)
        tmax[w] = -HUGE_VAL;
    for (int i = 0; i < L->ne; i++)
        pos[L->e[i].fused] = i;
    *moved = 0;
    for (int k = 0; k < L->ne; k++) {
        ev *e = &L->e[pos[k]];
        const size_t w = (size_t)e->rank * L->N + e->chunk;
        if (!(e->t > tmax[w]) && tmax[w] > -HUGE_VAL) {
            e->t = nextafter(tmax[w], 1e300);
            (*moved)++;
        }
        tmax[w] = e->t;
    }
    free(pos);
    free(tmax);
    return TC_OK;
}

static tc_status order_events(lw *L, int delay, int pair[2])
{
    const int fch = L->fch > 0 ? L->fch : 1;
    tc_status st;
    /* times are compared on a grid of 1e-9 of the makespan: rounding in a generator's sums must not
     * put a forwarding send before the receive that feeds it */
    double q = tc_sched_makespan(L->s) * 1e-9;
    if ((st = oe_events(L, delay, q)) || (st = sort_events(L)))
        return st;
    for (int i = 0; i < L->ne; i++)
        L->e[i].fused = i; /* original position, kept while adjusting */
    for (int pass = 0;; pass++) {
        int broken, moved;
        if ((st = oe_fifo(L, fch)) || (st = sort_events(L)) || (st = oe_check(L, pair, &broken)))
            return st;
        if (!broken)
            break;
        if (delay < 2 || pass == 256)
            return TC_ERR_UNSUPPORTED;
        /* the accesses back in their order, then the FIFO rule again */
        if ((st = oe_retime(L, &moved)))
            return st;
        if (!moved) /* a fixed point that still breaks the order: the FIFO rule and the data order conflict */
            return TC_ERR_UNSUPPORTED;
        if ((st = sort_events(L)))
            return st;
    }
    for (int i = 0; i < L->ne; i++)
        L->e[i].fused = 0;
    return TC_OK;
}

/* a sink keeping the first error's message (char[1024]), so a finding is passed on as it was reported */
static void first_error(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    char *first = user;
    (void)file, (void)line, (void)col;
    if (level == TC_DIAG_ERROR && !first[0])
        snprintf(first, 1024, "%s", msg);
}

/* The lowering's state from the options and the target's limits; usage and range errors of the input. */
static tc_status setup(lw *L, tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o)
{
    memset(L, 0, sizeof *L);
    L->ctx = ctx;
    L->s = s;
    L->o = o;
    tc_msccl_limits_get(o->target, &L->lim);
    L->R = s->n_ranks;
    L->K = s->chunks_per_rank;
    L->N = s->n_chunks;
    /* placements: in-place (default), out-of-place (inplace 0), or one program for both */
    L->dual = o->inplace && o->outofplace;
    L->inplace = o->inplace && !o->outofplace;
    L->plain = o->plain || !L->lim.fused_ok;
    const char *tn = tc_msccl_target_name(o->target);
    if (s->sparse && s->sparse->n == s->n_xfers) { /* sparse formats: tacos-run keeps them, MSCCL XML has none */
        int nsp = 0;
        for (int i = 0; i < s->n_xfers; i++)
            nsp += s->sparse->fmt[i] != 0;
        if (o->sparse)
            L->fmt = s->sparse->fmt;
        else if (nsp)
            tc_warn(ctx, s->file, 0,
                    "MSCCL XML has no sparse messages: the sparse formats of %d of the %d transfers are dropped "
                    "(tacos-run replays them from the JSON plan)",
                    nsp, s->n_xfers);
    }
    if (o->proto && strcmp(o->proto, "Simple") && strcmp(o->proto, "LL") && strcmp(o->proto, "LL128"))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "unknown protocol '%s' (Simple, LL or LL128)", o->proto);
    if (o->max_channels > 0) {
        if (o->max_channels > L->lim.hard_channels)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--max-channels %d: %s has at most %d channels", o->max_channels,
                            tn, L->lim.hard_channels);
        L->lim.max_channels = o->max_channels;
    }
    if (o->channels > L->lim.max_channels)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "%d channels requested: %s allows at most %d channels%s", o->channels,
                        tn, L->lim.max_channels,
                        L->lim.max_channels < L->lim.hard_channels ? " (--max-channels raises the limit)" : "");
    if (L->R < 1 || L->K < 1 || L->N < 1 || (unsigned)s->coll >= TC_COLL_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "msccl lowering: empty or malformed schedule");
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src < 0 || x->src >= L->R || x->dst < 0 || x->dst >= L->R || x->src == x->dst || x->chunk < 0 ||
            x->chunk >= L->N)
            return tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                  "msccl lowering: transfer %d (%d->%d, chunk %d) is out of range; check the schedule "
                                  "first",
                                  i, x->src, x->dst, x->chunk);
    }
    return TC_OK;
}

/* The global event order under the FIFO rule of MSCCL connections (order_events), repaired when it
 * conflicts with the data: delayed sends and retimed accesses, then the chunks spread over more channels
 * (L->fch); *repaired says whether any repair was needed.  TC_ERR_UNSUPPORTED naming the pair otherwise. */
static tc_status fifo_order(lw *L, int *repaired)
{
    tc_ctx *ctx = L->ctx;
    const tc_sched *s = L->s;
    const tc_msccl_lower_opts *o = L->o;
    tc_status st;
    /* the FIFO connections: when receiving in send order would reorder a rank's accesses to a chunk,
     * repair by sending every transfer whose data allows it just before its arrival (then a connection's
     * sends go in arrival order); only when that fails too, name the pair */
    int pair[2] = {-1, -1}, pair0[2];
    L->fch = 1;
    st = order_events(L, 0, pair);
    *repaired = 0;
    for (int delay = 1; delay <= 2 && st == TC_ERR_UNSUPPORTED; delay++, *repaired = 1)
        st = order_events(L, delay, pair);
    /* then more channels: each is a FIFO connection of its own, so transfers of one pair whose order the
     * data forbids travel on different ones (chunk c on channel c mod nch, nch a multiple of fch) */
    pair0[0] = pair[0], pair0[1] = pair[1];
    for (int f = 2; st == TC_ERR_UNSUPPORTED && f <= L->lim.max_channels && f <= L->N && f <= 16 &&
                    (size_t)L->R * L->R * f <= ((size_t)1 << 26);
         f++) {
        if (o->channels > 0 && o->channels % f)
            continue;
        L->fch = f;
        for (int delay = 0; delay <= 2 && (delay == 0 || st == TC_ERR_UNSUPPORTED); delay++)
            st = order_events(L, delay, pair);
        *repaired = 1;
    }
    if (st == TC_ERR_UNSUPPORTED)
        st = tc_error(ctx, TC_ERR_UNSUPPORTED, s->file, 0,
                      "%s of %llu bytes (%s): transfers from rank %d to rank %d overtake each other; MSCCL "
                      "connections are FIFO and this schedule cannot be lowered, even with sends delayed to "
                      "their arrival, the accesses retimed and the chunks spread over up to %d channels",
                      tc_coll_name(s->coll), (unsigned long long)s->size_bytes, s->algo ? s->algo : "tacos",
                      pair0[0], pair0[1], L->fch);
    return st;
}

/* Working slots for every chunk a rank touches, and the local copy events: copy-ins (out-of-place
 * outputs start as a copy of the input) before every transfer, copy-outs (in-place alltoall) after. */
static tc_status add_copies(lw *L)
{
    const size_t RN = (size_t)L->R * L->N;
    /* slots; copy-in events first */
    int nx = L->ne;
    double tmin = 0;
    for (int i = 0; i < nx; i++) {
        assign(L, L->e[i].rank, L->e[i].chunk);
        tmin = L->e[i].t < tmin ? L->e[i].t : tmin;
    }
    {
        /* copy-ins (t = -1) come before every transfer and copy-outs (t = 1e300) after, each in the order
         * (chunk, rank) that sorting would give them: placed directly, no third sort */
        ev *cin = malloc((RN + 1) * sizeof *cin), *cout = malloc((RN + 1) * sizeof *cout);
        int nin = 0, nout = 0;
        if (!cin || !cout) {
            free(cin);
            free(cout);
            return TC_ERR_NOMEM;
        }
        for (int r = 0; r < L->R; r++)
            for (int c = 0; c < L->N; c++) {
                int ib, io, ob, oo;
                places(L, r, c, &ib, &io, &ob, &oo);
                if (ob >= 0 && ib >= 0 && !(ob == ib && oo == io)) { /* out-of-place: output starts as a copy */
                    assign(L, r, c);
                    if (L->inb[r * L->N + c] >= 0)
                        cin[nin++] = (ev){r, -1, 2, c, -1, 0, -1.0, c, 0, 0, 0, 0, 1, -1};
                }
                if (L->outb[r * L->N + c] >= 0) /* copy-out after everything else */
                    cout[nout++] = (ev){r, -1, 2, c, -2, 0, 1e300, c, 0, 0, 0, 0, 1, -1};
            }
        /* generated by (rank, chunk): a stable counting sort by chunk gives (chunk, rank) */
        int *cnt = calloc((size_t)L->N + 1, sizeof(int));
        if (!cnt) {
            free(cin);
            free(cout);
            return TC_ERR_NOMEM;
        }
        ev *dst = L->e + L->ne + nin; /* scratch room at the end of the event array */
        for (int pass = 0; pass < 2; pass++) {
            ev *a = pass ? cout : cin;
            int n = pass ? nout : nin;
            memset(cnt, 0, ((size_t)L->N + 1) * sizeof(int));
            for (int k = 0; k < n; k++)
                cnt[a[k].chunk + 1]++;
            for (int c = 0; c < L->N; c++)
                cnt[c + 1] += cnt[c];
            for (int k = 0; k < n; k++)
                dst[cnt[a[k].chunk]++] = a[k];
            memcpy(a, dst, (size_t)n * sizeof *a);
        }
        free(cnt);
        memmove(L->e + nin, L->e, (size_t)L->ne * sizeof *L->e);
        memcpy(L->e + nin + L->ne, cout, (size_t)nout * sizeof *cout);
        memcpy(L->e, cin, (size_t)nin * sizeof *cin);
        L->ne += nin + nout;
        free(cin);
        free(cout);
        if (tmin <= -1.0) /* times before the copy-ins: sort them all */
            return sort_events(L);
    }
    return TC_OK;
}

/* From here on only the order within a rank matters: the events grouped by rank (stable), so that every
 * later pass works on one rank's data at a time. */
static tc_status group_by_rank(lw *L)
{
    int *cnt = calloc((size_t)L->R + 1, sizeof(int));
    ev *tmp = malloc(((size_t)L->ne + 1) * sizeof *tmp);
    if (!cnt || !tmp) {
        free(cnt);
        free(tmp);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < L->ne; i++)
        cnt[L->e[i].rank + 1]++;
    for (int r = 0; r < L->R; r++)
        cnt[r + 1] += cnt[r];
    for (int i = 0; i < L->ne; i++)
        tmp[cnt[L->e[i].rank]++] = L->e[i];
    memcpy(L->e, tmp, (size_t)L->ne * sizeof *tmp);
    free(cnt);
    free(tmp);
    return TC_OK;
}

/* Build the program with the fewest channels (a multiple of L->fch) whose thread blocks meet the target's
 * limits on steps, thread blocks, depid and parser nodes; TC_ERR_LIMIT naming the limit otherwise. */
static tc_status fit_channels(lw *L, tc_msccl **out)
{
    tc_ctx *ctx = L->ctx;
    const tc_sched *s = L->s;
    const tc_msccl_lower_opts *o = L->o;
    const char *tn = tc_msccl_target_name(L->o->target);
    tc_status st = TC_OK;
    tc_msccl *m = NULL;
    int maxch = L->lim.max_channels / L->groups; /* channels per group */
    if (maxch < 1) {
        st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                      "a rank has more than %d peers: %d channel groups are needed and %s allows %d channels",
                      L->lim.max_peers_per_chan, L->groups, tn, L->lim.max_channels);
        goto fail;
    }
    int nch = o->channels > 0 ? (o->channels + L->groups - 1) / L->groups : 1;
    if (nch > maxch)
        nch = maxch;
    if (L->fch > 1) { /* the repaired order holds on channel counts that are multiples of fch */
        maxch -= maxch % L->fch;
        if (maxch < L->fch) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "%s of %llu bytes (%s): MSCCL connections are FIFO and this order needs %d channels per "
                          "channel group (%d groups): %s allows %d channels",
                          tc_coll_name(s->coll), (unsigned long long)s->size_bytes, s->algo ? s->algo : "tacos",
                          L->fch, L->groups, tn, L->lim.max_channels);
            goto fail;
        }
        nch = (nch + L->fch - 1) / L->fch * L->fch;
        if (nch > maxch)
            nch = maxch;
    }
    for (;;) {
        int too_long = 0, maxsteps = 0;
        tc_msccl_free(m);
        m = NULL;
        if ((st = build(L, nch, &m, &too_long, &maxsteps)))
            goto fail;
        /* the runtimes' parser holds <algo>, every <gpu>, and one gpu's <tb>s and steps at once; more
         * channels only add tbs, so this fails at once */
        for (int r = 0; r < L->R && L->lim.max_nodes < INT_MAX; r++) {
            long nodes = 1L + L->R + m->gpus[r].n_tbs;
            for (int t = 0; t < m->gpus[r].n_tbs; t++)
                nodes += m->gpus[r].tbs[t].n_steps;
            if (nodes > L->lim.max_nodes) {
                st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                              "gpu %d needs %ld XML nodes (<algo>, %d <gpu>s, its %d <tb>s and their steps): the parser "
                              "of %s holds at most %d (MAX_NODES); fewer chunks per rank or fewer gpus fit, and "
                              "--target tacos-run writes a plan only tacos-run replays",
                              r, nodes, L->R, m->gpus[r].n_tbs, tn, L->lim.max_nodes);
                goto fail;
            }
        }
        int maxtbs = 0;
        for (int r = 0; r < L->R; r++)
            if (m->gpus[r].n_tbs > maxtbs)
                maxtbs = m->gpus[r].n_tbs;
        if (maxtbs > L->lim.max_tbs_per_gpu) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "the schedule needs %d thread blocks on one gpu with %d channel(s): %s allows at most %d "
                          "thread blocks per gpu",
                          maxtbs, nch * L->groups, tn, L->lim.max_tbs_per_gpu);
            goto fail;
        }
        if (maxtbs - 1 > L->lim.max_depid) {
            for (int r = 0; r < L->R; r++)
                for (int t = 0; t < m->gpus[r].n_tbs; t++)
                    for (int k = 0; k < m->gpus[r].tbs[t].n_steps; k++)
                        if (m->gpus[r].tbs[t].steps[k].depid > L->lim.max_depid) {
                            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                                          "a dependency on thread block %d: %s allows depid up to %d",
                                          m->gpus[r].tbs[t].steps[k].depid, tn, L->lim.max_depid);
                            goto fail;
                        }
        }
        if (!too_long)
            break;
        if (o->channels > 0 || nch >= maxch || nch + L->fch > L->N) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "a thread block needs %s steps with %d channel(s): %s allows fewer than %d steps per thread "
                          "block",
                          "64 or more", nch * L->groups, tn, L->lim.max_steps_per_tb);
            goto fail;
        }
        /* steps shrink about in proportion to the channels: jump close, then step up */
        int guess = (int)(((long)nch * maxsteps * 11 / 10 + L->lim.max_steps_per_tb - 2) / (L->lim.max_steps_per_tb - 1));
        nch = guess > nch ? guess : nch + 1;
        nch = (nch + L->fch - 1) / L->fch * L->fch;
        if (nch > maxch)
            nch = maxch;
        if (nch > L->N)
            nch = L->N - L->N % L->fch;
    }
    *out = m;
    return TC_OK;
fail:
    tc_msccl_free(m);
    return st;
}

/* A repaired order keeps every message forward in it, but it may queue more messages on a connection than
 * the runtime buffers: the program is verified here, so a repair that cannot run is named as such. */
static tc_status check_repaired(lw *L, const tc_msccl *m)
{
    const tc_sched *s = L->s;
    char first[1024] = "";
    tc_ctx sub = *L->ctx;
    sub.sink = first_error;
    sub.sink_user = first;
    if (tc_msccl_verify(&sub, m, &L->lim, "lowered MSCCL program") == TC_OK)
        return TC_OK;
    return tc_error(L->ctx, TC_ERR_UNSUPPORTED, s->file, 0,
                    "%s of %llu bytes (%s): MSCCL connections are FIFO; the order repaired for them does not run (%s)",
                    tc_coll_name(s->coll), (unsigned long long)s->size_bytes, s->algo ? s->algo : "tacos", first);
}

/* The passes in order: setup, fifo_order, add_copies, group_by_rank, pairing, fit_channels (which builds
 * the program: build), check_repaired; see the opening comment. */
static tc_status lower_run(tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o, int by_step,
                           tc_msccl **out)
{
    lw L;
    tc_status st = setup(&L, ctx, s, o);
    if (st)
        return st;
    L.by_step = by_step;
    const char *tn = tc_msccl_target_name(o->target);
    tc_msccl *m = NULL;
    int repaired = 0;
    size_t RN = (size_t)L.R * L.N;
    L.wbuf = malloc(RN * sizeof(int));
    L.woff = malloc(RN * sizeof(int));
    L.inb = malloc(RN * sizeof(int));
    L.ino = malloc(RN * sizeof(int));
    L.outb = malloc(RN * sizeof(int));
    L.outo = malloc(RN * sizeof(int));
    L.nscratch = calloc((size_t)L.R, sizeof(int));
    L.e = malloc(((size_t)s->n_xfers * 2 + 2 * RN + 1) * sizeof *L.e);
    if (!L.wbuf || !L.woff || !L.inb || !L.ino || !L.outb || !L.outo || !L.nscratch || !L.e) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < RN; i++)
        L.wbuf[i] = L.inb[i] = L.outb[i] = -1;
    if ((st = fifo_order(&L, &repaired)) || (st = add_copies(&L)))
        goto done;
    repaired |= by_step; /* an order by step is verified like a repaired one */
    /* per connection (src, dst, chunk's channel) the receive order must equal the send order: enforced above
     * for each transfer; with several channels FIFO is per channel, which keeps it */
    if (L.R > L.lim.max_gpus) {
        st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                      "%d gpus: the parser of %s holds at most %d <gpu> elements (MAX_SUBS); --target tacos-run "
                      "writes a plan only tacos-run replays",
                      L.R, tn, L.lim.max_gpus);
        goto done;
    }
    if ((st = group_by_rank(&L)) || (st = pairing(&L)) || (st = fit_channels(&L, &m)) ||
        (repaired && (st = check_repaired(&L, m))))
        goto done;
    *out = m;
    m = NULL;
done:
    tc_msccl_free(m);
    free(L.wbuf);
    free(L.woff);
    free(L.inb);
    free(L.ino);
    free(L.outb);
    free(L.outo);
    free(L.nscratch);
    free(L.e);
    free(L.epair);
    free(L.npairs);
    free(L.pbase);
    free(L.psend);
    free(L.precv);
    free(L.pgrp);
    return st;
}

/* a sink for the first try: every diagnostic but errors passed on, the first error kept */
typedef struct { tc_ctx *outer; tc_diag_rec rec; } first_try;

static void first_try_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    first_try *f = user;
    if (level == TC_DIAG_ERROR)
        tc_diag_record(&f->rec, level, file, line, col, msg);
    else if (f->outer->sink)
        f->outer->sink(f->outer->sink_user, level, file, line, col, msg);
}

/* The lowering in time order; when a limit of the runtime is not met (parser nodes, steps or thread blocks:
 * a plan of many ranks whose groups of chunks the time order interleaves), once more in step order, where
 * a step's chunks to one peer are adjacent and aggregate into one message (bucket and rhd on 1,024 ranks);
 * that program is verified, and compile prices the program it writes.  Else the first try's finding. */
tc_status tc_msccl_lower(tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o, tc_msccl **out)
{
    tc_msccl_lower_opts def;
    if (!o) {
        tc_msccl_lower_opts_init(&def);
        o = &def;
    }
    if (o->target == TC_TARGET_EXEC || s->n_steps < 2)
        return lower_run(ctx, s, o, 0, out);
    first_try f = {.outer = ctx};
    tc_ctx c1 = *ctx;
    c1.sink = first_try_sink;
    c1.sink_user = &f;
    c1.n_errors = c1.n_warnings = 0;
    tc_status st = lower_run(&c1, s, o, 0, out);
    ctx->n_warnings += c1.n_warnings;
    tc_diag_rec r2 = {0};
    tc_ctx c2 = *ctx;
    c2.sink = tc_diag_record; /* the retry's findings are the time order's, reported below */
    c2.sink_user = &r2;
    if (st == TC_ERR_LIMIT && lower_run(&c2, s, o, 1, out) == TC_OK) {
        if (ctx->verbose)
            tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0, "lowered in step order: in time order %s", f.rec.msg);
        return TC_OK;
    }
    if (st && f.rec.have)
        tc_error(ctx, st, f.rec.file[0] ? f.rec.file : NULL, f.rec.line, "%s", f.rec.msg);
    return st;
}

tc_status tc_msccl_lower_replay(tc_ctx *ctx, const tc_sched *s, tc_msccl **out)
{
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    lo.target = TC_TARGET_EXEC;
    lo.inplace = lo.outofplace = 1;
    lo.sparse = 1; /* the plan's sparse formats, step by step */
    tc_msccl *m = NULL;
    tc_msccl_limits lim;
    tc_msccl_limits_get(TC_TARGET_EXEC, &lim);
    tc_status st = tc_msccl_lower(ctx, s, &lo, &m);
    if (!st)
        st = tc_msccl_verify(ctx, m, &lim, s->file ? s->file : "plan");
    if (st || !out)
        tc_msccl_free(m);
    else
        *out = m;
    return st;
}
