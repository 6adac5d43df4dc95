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
 * Per connection the receive order follows the send order (MSCCL connections are FIFO); a schedule whose
 * transfers overtake in a way that would reorder a rank's accesses to a chunk is refused.  All events of
 * all ranks get one global order.  Each rank keeps every chunk it touches in one working slot: its output
 * place when it has one (out-of-place: one cpy from the input first), else its input place, else a
 * scratch slot (chunks routed through a rank that neither starts nor ends with them; in-place alltoall
 * receives into scratch and copies out at the end).  Thread blocks: per rank, receive peers are paired with
 * send peers by the number of chunks that flow from one through the rank to the other (greedy, ties to a
 * peer paired with itself), leftovers with themselves, then send-only with receive-only; one tb per pair
 * and channel, plus tb 0 for local copies (contiguous copies aggregate, cnt <= 71).  Chunk c travels on
 * channel c mod nchannels.  A receive followed in its tb by the send of what it just wrote fuses (r+s =
 * rcs, rrc+s = rrcs; an rrcs whose stored result is overwritten by a receive before anyone reads it = rrs).
 * Per slot, every access depends on the previous conflicting accesses made by other tbs (read after
 * write, write after read or write); several dependencies are chained with nop steps (depid/deps/hasdep).
 * Every tb runs its steps in the global order and every dependency and message goes forward in it, so
 * with enough connection buffering the program cannot deadlock; the verifier checks it under its bounded
 * model (tacosc compile runs it on every lowered program).  When a tb has 64 or more steps the chunks
 * are spread over more channels (estimated from the longest tb, then one more at a time); when the steps,
 * tbs, depid or channels limits cannot be met the lowering fails naming the limit.
 * Aggregation: consecutive messages of one connection whose steps are adjacent in both tbs (s with r or
 * rrc), contiguous at both ends, and whose later chunk no other step touches in between, become one step
 * with cnt up to 71.
 * Cost: O(E log E) for E = 2 * transfers events plus O(R^2) per rank for the pairing, per channel count
 * tried.
 * Trace (ring all-reduce, 4 ranks, 1 chunk per rank; tests/golden/ring4-allreduce.xml): rank 0's only tb
 * has send=1 recv=3; step 0 sends chunk 3, steps 1 and 2 receive chunks 2 and 1, add rank 0's part and
 * forward them (rrs), step 3 receives chunk 0, adds, stores and forwards it (rrcs), then rcs, rcs and r
 * bring chunks 3, 2 and 1 back fully reduced.
 */
#include "tacos/msccl.h"

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
} lw;

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
    if (L->inplace && *ob == 1) { /* the output place is the input buffer's (or its alias) */
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
    if (L->inplace && L->s->coll == TC_COLL_ALLTOALL && ob >= 0 && c / (L->R * L->K) != r) {
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

/* Storage key of the working slot (aliases are already resolved by places()). */
static long slot_key(const lw *L, int r, int b, int off)
{
    return ((long)r * 3 + b) * (long)(L->N * 4 + 8) + off;
}

typedef struct acc { long key; int ord; int tb; int step; int write; } acc;

static int cmp_acc(const void *a, const void *b)
{
    const acc *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->ord - y->ord;
}

typedef struct dep { int tb, step; } dep;

static tc_status build(lw *L, int nch, tc_msccl **out, int *too_long, int *maxsteps)
{
    const tc_sched *s = L->s;
    const int R = L->R;
    tc_status st = TC_OK;
    tc_msccl *m = NULL;
    int *pair_of = NULL, *npairs = NULL, *pair_send = NULL, *pair_recv = NULL, *flow = NULL, *tbsteps = NULL;
    int *pos = NULL, *last_by_rank = NULL;
    acc *ac = NULL;
    int *stepmap = NULL, *hasdep = NULL, *evmap = NULL;
    dep *u = NULL;
    int *lastw_rc = NULL, *next_rc = NULL, *hascp = NULL, *prev_rc = NULL, *nxt_tb = NULL, *lastlog = NULL;
    int *rv_of = NULL;
    *too_long = 0;
    /* pairing of peers per rank: pair_of[r*R*2 + peer*2 + dir] = pair id */
    pair_of = malloc((size_t)R * R * 2 * sizeof(int));
    npairs = calloc((size_t)R, sizeof(int));
    pair_send = malloc((size_t)R * R * 2 * sizeof(int));
    pair_recv = malloc((size_t)R * R * 2 * sizeof(int));
    flow = calloc((size_t)R * R, sizeof(int));
    last_by_rank = malloc((size_t)R * L->N * sizeof(int));
    if (!pair_of || !npairs || !pair_send || !pair_recv || !flow || !last_by_rank) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < R * R * 2; i++)
        pair_of[i] = -1;
    for (int r = 0; r < R; r++) {
        int *has = calloc((size_t)R * 2, sizeof(int));
        if (!has) {
            st = TC_ERR_NOMEM;
            goto fail;
        }
        memset(flow, 0, (size_t)R * R * sizeof(int));
        for (int i = 0; i < L->N; i++)
            last_by_rank[i] = -1;
        for (int i = 0; i < L->ne; i++) {
            const ev *e = &L->e[i];
            if (e->rank != r || e->kind == 2)
                continue;
            has[e->peer * 2 + e->kind] = 1;
            if (e->kind == 0)
                last_by_rank[e->chunk] = e->peer;
            else if (last_by_rank[e->chunk] >= 0)
                flow[last_by_rank[e->chunk] * R + e->peer]++;
        }
        for (;;) { /* greedy: heaviest recv-from b -> send-to a flow among free peers */
            int bb = -1, ba = -1, bw = 0;
            for (int b = 0; b < R; b++)
                for (int a = 0; a < R; a++)
                    if (flow[b * R + a] && 2 * flow[b * R + a] + (a == b) > bw && pair_of[(r * R + b) * 2 + 0] < 0 &&
                        pair_of[(r * R + a) * 2 + 1] < 0) {
                        bw = 2 * flow[b * R + a] + (a == b); /* ties go to a peer paired with itself */
                        bb = b;
                        ba = a;
                    }
            if (bb < 0)
                break;
            int p = npairs[r]++;
            pair_of[(r * R + bb) * 2 + 0] = pair_of[(r * R + ba) * 2 + 1] = p;
            pair_recv[r * R * 2 + p] = bb;
            pair_send[r * R * 2 + p] = ba;
        }
        for (int q = 0, a = 0; q < R; q++) { /* leftovers: with itself, then send-only with receive-only */
            int hs = has[q * 2 + 1] && pair_of[(r * R + q) * 2 + 1] < 0;
            int hr = has[q * 2 + 0] && pair_of[(r * R + q) * 2 + 0] < 0;
            if (!hs && !hr)
                continue;
            if (hs != hr) {
                int want = hs ? 0 : 1; /* the side q lacks */
                while (a < R && !(has[a * 2 + want] && pair_of[(r * R + a) * 2 + want] < 0 &&
                                  !(has[a * 2 + 1 - want] && pair_of[(r * R + a) * 2 + 1 - want] < 0)))
                    a++;
                if (a < R && a != q) {
                    int p = npairs[r]++;
                    pair_send[r * R * 2 + p] = hs ? q : a;
                    pair_recv[r * R * 2 + p] = hs ? a : q;
                    pair_of[(r * R + (hs ? q : a)) * 2 + 1] = p;
                    pair_of[(r * R + (hs ? a : q)) * 2 + 0] = p;
                    continue;
                }
            }
            int p = npairs[r]++;
            pair_send[r * R * 2 + p] = hs ? q : -1;
            pair_recv[r * R * 2 + p] = hr ? q : -1;
            if (hs)
                pair_of[(r * R + q) * 2 + 1] = p;
            if (hr)
                pair_of[(r * R + q) * 2 + 0] = p;
        }
        free(has);
    }
    /* tb of each event; the copy tb (when a rank has copy-ins) is tb 0 */
    hascp = calloc((size_t)R, sizeof(int));
    rv_of = malloc(((size_t)L->s->n_xfers + 1) * sizeof(int));
    if (!hascp || !rv_of) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < L->ne; i++) {
        if (L->e[i].kind == 2)
            hascp[L->e[i].rank] = 1;
        if (L->e[i].kind == 0)
            rv_of[L->e[i].xfer] = i;
    }
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        e->fused = 0;
        e->cnt = 1;
        if (e->kind == 2)
            e->tb = 0;
        else
            e->tb = hascp[e->rank] + pair_of[(e->rank * R + e->peer) * 2 + e->kind] * nch + e->chunk % nch;
    }
    /* tb step lists (events already in global order) and fusion; per (rank, chunk): the last event
     * that wrote it, and the next event touching it */
    lastw_rc = malloc((size_t)R * L->N * sizeof(int));
    next_rc = malloc(((size_t)L->ne + 1) * sizeof(int));
    prev_rc = malloc(((size_t)L->ne + 1) * sizeof(int));
    nxt_tb = malloc(((size_t)L->ne + 1) * sizeof(int));
    if (!lastw_rc || !next_rc || !prev_rc || !nxt_tb) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < R * L->N; i++)
        lastw_rc[i] = -1;
    for (int i = L->ne - 1; i >= 0; i--) {
        int w = L->e[i].rank * L->N + L->e[i].chunk;
        next_rc[i] = lastw_rc[w];
        lastw_rc[w] = i;
    }
    for (int i = 0; i < R * L->N; i++)
        lastw_rc[i] = -1;
    for (int i = 0; i < L->ne; i++) {
        int w = L->e[i].rank * L->N + L->e[i].chunk;
        prev_rc[i] = lastw_rc[w];
        lastw_rc[w] = i;
        nxt_tb[i] = -1;
    }
    for (int i = 0; i < R * L->N; i++)
        lastw_rc[i] = -1;

    int ntb_all = 0;
    int *tbbase = malloc((size_t)(R + 1) * sizeof(int));
    if (!tbbase) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int r = 0; r < R; r++) {
        tbbase[r] = ntb_all;
        ntb_all += npairs[r] * nch + 1;
    }
    tbbase[R] = ntb_all;
    tbsteps = calloc((size_t)ntb_all, sizeof(int));
    pos = malloc((size_t)ntb_all * sizeof(int)); /* last event index per tb */
    if (!tbsteps || !pos) {
        free(tbbase);
        st = TC_ERR_NOMEM;
        goto fail;
    }
    lastlog = malloc(((size_t)ntb_all + 1) * sizeof(int));
    if (!lastlog) {
        free(tbbase);
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < ntb_all; i++)
        pos[i] = lastlog[i] = -1;
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        int g = tbbase[e->rank] + e->tb;
        int p = pos[g];
        e->type = e->kind == 2 ? TC_MS_CPY : e->kind == 1 ? TC_MS_SEND : e->op == TC_OP_REDUCE ? TC_MS_RRC : TC_MS_RECV;
        if (e->kind == 2 && p >= 0 && L->e[p].kind == 2) { /* aggregate contiguous copies */
            ev *h = L->e[p].fused ? &L->e[L->e[p].fused - 2] : &L->e[p];
            int hs, ho, hd, hdo, es, eo, ed, edo;
            cp_ends(L, h, &hs, &ho, &hd, &hdo);
            cp_ends(L, e, &es, &eo, &ed, &edo);
            if (h->cnt < L->lim.max_cnt && h->peer == e->peer && es == hs && eo == ho + h->cnt && ed == hd &&
                edo == hdo + h->cnt) {
                h->cnt++;
                e->fused = 2 + (int)(h - L->e);
                e->step = h->step;
                pos[g] = i;
                continue;
            }
        }
        if (e->kind == 1 && p >= 0 && !L->e[p].fused && L->e[p].kind == 0 && L->e[p].chunk == e->chunk &&
            L->e[p].type != TC_MS_RCS && L->e[p].type != TC_MS_RRCS) {
            /* fuse when nothing wrote the slot in between: scan back to the receive */
            if (lastw_rc[e->rank * L->N + e->chunk] == p) {
                L->e[p].type = L->e[p].type == TC_MS_RRC ? TC_MS_RRCS : TC_MS_RCS;
                e->fused = 1;
                e->step = L->e[p].step;
                pos[g] = i;
                continue;
            }
        }
        e->step = tbsteps[g]++;
        pos[g] = i;
        if (lastlog[g] >= 0)
            nxt_tb[lastlog[g]] = i;
        lastlog[g] = i;
        if (e->kind != 1)
            lastw_rc[e->rank * L->N + e->chunk] = i;
    }
    /* rrcs whose stored value is overwritten (by a plain receive) before any read: rrs */
    for (int i = 0; i < L->ne; i++) {
        ev *e = &L->e[i];
        if (e->type != TC_MS_RRCS)
            continue;
        for (int j = next_rc[i]; j >= 0 && j < L->ne; j = next_rc[j]) {
            const ev *f = &L->e[j];
            if (f->rank != e->rank || f->chunk != e->chunk || (f->fused && f->kind == 1 && f->step == e->step && f->tb == e->tb))
                continue;
            if (f->kind == 0 && (f->type == TC_MS_RECV || f->type == TC_MS_RCS))
                e->type = TC_MS_RRS;
            break; /* any other access (read, reduce, copy) keeps the store */
        }
    }
    /* aggregation: consecutive messages of one connection whose steps are adjacent in both tbs, plain
     * (s with r, or s with rrc), contiguous at both ends, and whose later chunk nobody touches between the
     * two steps, travel as one step with cnt > 1 */
    for (int i = 0; i < L->ne; i++) {
        ev *a = &L->e[i];
        if (a->kind != 1 || a->fused || a->type != TC_MS_SEND)
            continue;
        int ra = rv_of[a->xfer];
        if (L->e[ra].fused || (L->e[ra].type != TC_MS_RECV && L->e[ra].type != TC_MS_RRC))
            continue;
        int ta = i, tr = ra; /* tails of the merged runs */
        while (a->cnt < L->lim.max_cnt) {
            int b = nxt_tb[ta], rb = b >= 0 && L->e[b].kind == 1 ? rv_of[L->e[b].xfer] : -1;
            if (rb < 0 || L->e[b].fused || L->e[b].type != TC_MS_SEND || nxt_tb[tr] != rb || L->e[rb].fused ||
                L->e[rb].type != L->e[ra].type || L->e[rb].tb != L->e[ra].tb)
                break;
            int sw = a->rank * L->N + a->chunk, bw = a->rank * L->N + L->e[b].chunk;
            int rw = L->e[ra].rank * L->N + a->chunk, rbw = L->e[ra].rank * L->N + L->e[b].chunk;
            if (L->wbuf[bw] != L->wbuf[sw] || L->woff[bw] != L->woff[sw] + a->cnt || L->wbuf[rbw] != L->wbuf[rw] ||
                L->woff[rbw] != L->woff[rw] + a->cnt)
                break;
            if (prev_rc[b] > i || prev_rc[rb] > ra) /* someone touches the later chunk in between */
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
    /* accesses per storage slot in global order, and the dependencies they need */
    ac = malloc((size_t)(2 * L->ne + 1) * sizeof *ac);
    if (!ac) {
        free(tbbase);
        st = TC_ERR_NOMEM;
        goto fail;
    }
    int na = 0;
    for (int i = 0; i < L->ne; i++) {
        const ev *e = &L->e[i];
        int w = e->rank * L->N + e->chunk;
        int g = tbbase[e->rank] + e->tb;
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
    qsort(ac, (size_t)na, sizeof *ac, cmp_acc);
    /* per logical step (indexed by event), the dependencies: (global tb, step) */
    dep *dl = calloc((size_t)L->ne * 4 + 16, sizeof *dl);
    int ndl = 0, capdl = L->ne * 4 + 16;
    int *dfirst = malloc((size_t)(L->ne + 1) * sizeof(int)), *dnext = NULL;
    dnext = malloc((size_t)(L->ne * 4 + 16) * sizeof(int));
    if (!dl || !dfirst || !dnext) {
        free(dl); free(dfirst); free(dnext); free(tbbase);
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i <= L->ne; i++)
        dfirst[i] = -1;
    for (int a = 0; a < na;) {
        int b = a;
        while (b < na && ac[b].key == ac[a].key)
            b++;
        int lastw = -1;
        for (int k = a; k < b; k++) {
            /* conflicting earlier accesses: the last write, and (for a write) the reads since it */
            for (int j = k - 1; j >= a && j >= lastw && j >= 0; j--) {
                if (j < 0)
                    break;
                if (!ac[k].write && !ac[j].write)
                    continue;
                if (ac[j].tb == ac[k].tb)
                    continue;
                if (ndl + 1 >= capdl) {
                    capdl *= 2;
                    dep *p1 = realloc(dl, (size_t)capdl * sizeof *dl);
                    int *p3 = realloc(dnext, (size_t)capdl * sizeof *dnext);
                    if (p1) dl = p1;
                    if (p3) dnext = p3;
                    if (!p1 || !p3) {
                        free(dl); free(dfirst); free(dnext); free(tbbase);
                        st = TC_ERR_NOMEM;
                        goto fail;
                    }
                }
                int own = ac[k].ord; /* merged copies: the step's head event collects them */
                if (L->e[own].fused >= 2)
                    own = L->e[own].fused - 2;
                dl[ndl] = (dep){ac[j].tb, ac[j].step};
                dnext[ndl] = dfirst[own];
                dfirst[own] = ndl++;
                if (ac[j].write)
                    break;
            }
            if (ac[k].write)
                lastw = k;
        }
        a = b;
    }
    /* materialize: per tb, steps with nops for extra dependencies */
    if ((st = tc_msccl_create(s->algo ? s->algo : "tacosc", s->coll, R, &m)))
        goto fail2;
    snprintf(m->proto, sizeof m->proto, "%s", L->o->proto ? L->o->proto : "Simple");
    m->inplace = L->inplace;
    m->outofplace = !L->inplace;
    m->min_bytes = L->o->min_bytes;
    m->max_bytes = L->o->max_bytes;
    m->nchannels = nch;
    m->nchunksperloop = (s->coll == TC_COLL_ALLREDUCE) ? L->N
                        : (s->coll == TC_COLL_BROADCAST || s->coll == TC_COLL_REDUCE) ? L->K
                                                                                      : R * L->K;
    stepmap = malloc((size_t)(L->ne + 1) * sizeof(int));
    hasdep = malloc(((size_t)ntb_all + 1) * sizeof(int)); /* first logical step of each tb in evmap */
    evmap = malloc(((size_t)L->ne + 1) * sizeof(int));
    u = malloc(((size_t)ntb_all + 1) * sizeof *u);
    if (!stepmap || !hasdep || !evmap || !u) {
        st = TC_ERR_NOMEM;
        goto fail2;
    }
    for (int g = 0, acc_n = 0; g < ntb_all; g++) {
        hasdep[g] = acc_n;
        acc_n += tbsteps[g];
    }
    for (int i = 0; i < L->ne; i++)
        if (!L->e[i].fused)
            evmap[hasdep[tbbase[L->e[i].rank] + L->e[i].tb] + L->e[i].step] = i;
    for (int r = 0; r < R; r++) {
        tc_msccl_gpu *gp = &m->gpus[r];
        if (hascp[r] && (st = tc_msccl_tb_add(gp, -1, -1, 0, NULL)))
            goto fail2;
        for (int t = 0; t < npairs[r] * nch; t++) {
            int p = t / nch;
            if ((st = tc_msccl_tb_add(gp, pair_send[r * R * 2 + p], pair_recv[r * R * 2 + p], t % nch, NULL)))
                goto fail2;
        }
        int mode_inplace = L->inplace;
        tc_coll co = s->coll;
        int ic = 0, oc = 0, K = L->K;
        switch (co) {
        case TC_COLL_ALLREDUCE: ic = L->N; oc = mode_inplace ? 0 : L->N; break;
        case TC_COLL_BROADCAST:
        case TC_COLL_REDUCE: ic = K; oc = mode_inplace ? 0 : K; break;
        case TC_COLL_ALLGATHER:
        case TC_COLL_GATHER: ic = mode_inplace ? 0 : K; oc = R * K; break;
        case TC_COLL_REDUCESCATTER:
        case TC_COLL_SCATTER: ic = R * K; oc = mode_inplace ? 0 : K; break;
        default: ic = oc = R * K; break;
        }
        gp->i_chunks = ic;
        gp->o_chunks = oc;
        gp->s_chunks = L->nscratch[r];
    }
    /* steps, in global order; a step's dependencies become nops before it */
    for (int pass = 0; pass < 2 && !st; pass++) {
        for (int i = 0; i < L->ne && !st; i++) {
            ev *e = &L->e[i];
            if (e->fused)
                continue;
            tc_msccl_tb *tb = &m->gpus[e->rank].tbs[e->tb];
            int gtb = tbbase[e->rank] + e->tb;
            /* collect distinct tbs, keeping the latest step per tb */
            int nu = 0;
            for (int d = dfirst[i]; d >= 0; d = dnext[d]) {
                int k;
                for (k = 0; k < nu && u[k].tb != dl[d].tb; k++)
                    ;
                if (k == nu)
                    u[nu++] = dl[d];
                else if (k < nu && dl[d].step > u[k].step)
                    u[k].step = dl[d].step;
            }
            (void)gtb;
            if (pass == 0) {
                stepmap[i] = tb->n_steps + (nu > 1 ? nu - 1 : 0); /* final index of the step */
                tc_msccl_step nop = {0, TC_MS_NOP, TC_MS_BUF_I, -1, TC_MS_BUF_O, -1, 0, -1, -1, 0, 0};
                for (int k = 0; k + 1 < nu && !st; k++)
                    st = tc_msccl_step_add(tb, &nop);
                int w = e->rank * L->N + e->chunk;
                tc_msccl_step x = {0, e->type, L->wbuf[w], L->woff[w], L->wbuf[w], L->woff[w], e->cnt, -1, -1, 0, 0};
                if (e->kind == 2) {
                    cp_ends(L, e, &x.srcbuf, &x.srcoff, &x.dstbuf, &x.dstoff);
                } else if (e->type == TC_MS_SEND) {
                    int pw = e->peer * L->N + e->chunk;
                    x.dstbuf = L->wbuf[pw];
                    x.dstoff = L->woff[pw];
                } else if (e->type == TC_MS_RECV) {
                    int pw = e->peer * L->N + e->chunk;
                    x.srcbuf = L->wbuf[pw];
                    x.srcoff = L->woff[pw];
                }
                if (!st)
                    st = tc_msccl_step_add(tb, &x);
            } else {
                /* dependencies: tb/step refer to logical steps: map through the events */
                int base = stepmap[i] - (nu > 1 ? nu - 1 : 0);
                for (int k = 0; k < nu; k++) {
                    int tgt_t = u[k].tb - tbbase[e->rank];
                    /* find the event with that tb and logical step */
                    int fs = stepmap[evmap[hasdep[u[k].tb] + u[k].step]];
                    if (fs < 0 || fs >= m->gpus[e->rank].tbs[tgt_t].n_steps) {
                        st = tc_error(L->ctx, TC_ERR_INTERNAL, NULL, 0, "msccl lowering: lost a dependency");
                        break;
                    }
                    tc_msccl_step *x = &tb->steps[base + k];
                    x->depid = tgt_t;
                    x->deps = fs;
                    m->gpus[e->rank].tbs[tgt_t].steps[fs].hasdep = 1;
                }
            }
        }
    }
    if (st)
        goto fail2;
    for (int r = 0; r < R; r++)
        for (int t = 0; t < m->gpus[r].n_tbs; t++)
            if (m->gpus[r].tbs[t].n_steps >= L->lim.max_steps_per_tb)
                *too_long = 1;
    *maxsteps = 0;
    for (int r = 0; r < R; r++)
        for (int t = 0; t < m->gpus[r].n_tbs; t++)
            if (m->gpus[r].tbs[t].n_steps > *maxsteps)
                *maxsteps = m->gpus[r].tbs[t].n_steps;
    *out = m;
    m = NULL;
fail2:
    free(dl);
    free(dfirst);
    free(dnext);
    free(tbbase);
fail:
    tc_msccl_free(m);
    free(pair_of);
    free(npairs);
    free(pair_send);
    free(pair_recv);
    free(flow);
    free(tbsteps);
    free(pos);
    free(last_by_rank);
    free(ac);
    free(stepmap);
    free(hasdep);
    free(evmap);
    free(u);
    free(lastw_rc);
    free(next_rc);
    free(hascp);
    free(prev_rc);
    free(nxt_tb);
    free(lastlog);
    free(rv_of);
    return st;
}

tc_status tc_msccl_lower(tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o, tc_msccl **out)
{
    tc_msccl_lower_opts def;
    if (!o) {
        tc_msccl_lower_opts_init(&def);
        o = &def;
    }
    lw L;
    memset(&L, 0, sizeof L);
    L.ctx = ctx;
    L.s = s;
    L.o = o;
    tc_msccl_limits_get(o->target, &L.lim);
    L.R = s->n_ranks;
    L.K = s->chunks_per_rank;
    L.N = s->n_chunks;
    L.inplace = o->inplace;
    const char *tn = tc_msccl_target_name(o->target);
    if (o->proto && strcmp(o->proto, "Simple") && strcmp(o->proto, "LL") && strcmp(o->proto, "LL128"))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "unknown protocol '%s' (Simple, LL or LL128)", o->proto);
    if (o->channels > L.lim.max_channels)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "%d channels requested: %s allows at most %d channels", o->channels,
                        tn, L.lim.max_channels);
    if (L.R < 1 || L.K < 1 || L.N < 1 || (unsigned)s->coll >= TC_COLL_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "msccl lowering: empty or malformed schedule");
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src < 0 || x->src >= L.R || x->dst < 0 || x->dst >= L.R || x->src == x->dst || x->chunk < 0 ||
            x->chunk >= L.N)
            return tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                  "msccl lowering: transfer %d (%d->%d, chunk %d) is out of range; check the schedule "
                                  "first",
                                  i, x->src, x->dst, x->chunk);
    }
    tc_status st = TC_OK;
    tc_msccl *m = NULL;
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
    /* events in IR order */
    /* times are compared on a grid of 1e-9 of the makespan: rounding in a generator's sums must not
     * put a forwarding send before the receive that feeds it */
    double q = tc_sched_makespan(s) * 1e-9;
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        double ts = q > 0 ? round(x->t_start / q) : x->t_start, te = q > 0 ? round(x->t_end / q) : x->t_end;
        if (routed_copy(x) && te - 0.5 > ts)
            ts = te - 0.5; /* sent as it is delivered, before anything at its arrival (see routed_copy) */
        L.e[L.ne++] = (ev){x->src, i, 1, x->chunk, x->dst, x->op, ts, i, 0, 0, 0, 0, 1};
        te = te > ts ? te : ts;
        L.e[L.ne++] = (ev){x->dst, i, 0, x->chunk, x->src, x->op, te, i, 0, 0, 0, 0, 1};
    }
    qsort(L.e, (size_t)L.ne, sizeof *L.e, cmp_ev);
    /* receives: after their send, and per connection (src, dst) in the send order (FIFO) */
    for (int i = 0; i < L.ne; i++)
        L.e[i].fused = i; /* original position, kept while adjusting */
    {
        int *last = malloc((size_t)L.R * L.R * sizeof(int));
        int *recv_of = malloc(((size_t)s->n_xfers + 1) * sizeof(int));
        if (!last || !recv_of) {
            free(last); free(recv_of);
            st = TC_ERR_NOMEM;
            goto done;
        }
        for (int i = 0; i < L.ne; i++)
            if (L.e[i].kind == 0)
                recv_of[L.e[i].xfer] = i;
        for (int i = 0; i < L.R * L.R; i++)
            last[i] = -1;
        for (int i = 0; i < L.ne; i++) {
            if (L.e[i].kind != 1)
                continue;
            ev *rv = &L.e[recv_of[L.e[i].xfer]];
            int cn = L.e[i].rank * L.R + L.e[i].peer;
            /* after its own send and after the previous receive of the connection, in the sort order */
            const ev *after = &L.e[i];
            if (last[cn] >= 0 && cmp_ev(&L.e[last[cn]], after) > 0)
                after = &L.e[last[cn]];
            if (cmp_ev(rv, after) <= 0)
                rv->t = nextafter(after->t, 1e300);
            last[cn] = recv_of[L.e[i].xfer];
        }
        free(last);
        free(recv_of);
    }
    qsort(L.e, (size_t)L.ne, sizeof *L.e, cmp_ev);
    {   /* moving receives must not reorder the accesses of one rank to one chunk */
        int *lastpos = malloc(RN * sizeof(int));
        if (!lastpos) {
            st = TC_ERR_NOMEM;
            goto done;
        }
        for (size_t i = 0; i < RN; i++)
            lastpos[i] = -1;
        for (int i = 0; i < L.ne && !st; i++) {
            int w = L.e[i].rank * L.N + L.e[i].chunk;
            if (L.e[i].fused < lastpos[w])
                st = tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0,
                              "transfers from rank %d to rank %d overtake each other; MSCCL connections are FIFO and "
                              "this schedule cannot be lowered",
                              L.e[i].kind ? L.e[i].rank : L.e[i].peer, L.e[i].kind ? L.e[i].peer : L.e[i].rank);
            lastpos[w] = L.e[i].fused;
            L.e[i].fused = 0;
        }
        free(lastpos);
        if (st)
            goto done;
    }
    /* slots; copy-in events first */
    int nx = L.ne;
    for (int i = 0; i < nx; i++)
        assign(&L, L.e[i].rank, L.e[i].chunk);
    for (int r = 0; r < L.R; r++)
        for (int c = 0; c < L.N; c++) {
            int ib, io, ob, oo;
            places(&L, r, c, &ib, &io, &ob, &oo);
            if (ob >= 0 && ib >= 0 && !(ob == ib && oo == io)) { /* out-of-place: output starts as a copy */
                assign(&L, r, c);
                if (L.inb[r * L.N + c] >= 0)
                    L.e[L.ne++] = (ev){r, -1, 2, c, -1, 0, -1.0, c, 0, 0, 0, 0, 1};
            }
            if (L.outb[r * L.N + c] >= 0) /* copy-out after everything else */
                L.e[L.ne++] = (ev){r, -1, 2, c, -2, 0, 1e300, c, 0, 0, 0, 0, 1};
        }
    qsort(L.e, (size_t)L.ne, sizeof *L.e, cmp_ev);
    /* per connection (src, dst, chunk's channel) the receive order must equal the send order: enforced above
     * for each transfer; with several channels FIFO is per channel, which keeps it */
    int nch = o->channels > 0 ? o->channels : 1;
    for (;;) {
        int too_long = 0, maxsteps = 0;
        tc_msccl_free(m);
        m = NULL;
        if ((st = build(&L, nch, &m, &too_long, &maxsteps)))
            goto done;
        int maxtbs = 0;
        for (int r = 0; r < L.R; r++)
            if (m->gpus[r].n_tbs > maxtbs)
                maxtbs = m->gpus[r].n_tbs;
        if (maxtbs > L.lim.max_tbs_per_gpu) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "the schedule needs %d thread blocks on one gpu with %d channel(s): %s allows at most %d "
                          "thread blocks per gpu",
                          maxtbs, nch, tn, L.lim.max_tbs_per_gpu);
            goto done;
        }
        if (maxtbs - 1 > L.lim.max_depid) {
            for (int r = 0; r < L.R; r++)
                for (int t = 0; t < m->gpus[r].n_tbs; t++)
                    for (int k = 0; k < m->gpus[r].tbs[t].n_steps; k++)
                        if (m->gpus[r].tbs[t].steps[k].depid > L.lim.max_depid) {
                            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                                          "a dependency on thread block %d: %s allows depid up to %d",
                                          m->gpus[r].tbs[t].steps[k].depid, tn, L.lim.max_depid);
                            goto done;
                        }
        }
        if (!too_long)
            break;
        if (o->channels > 0 || nch >= L.lim.max_channels || nch >= L.N) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "a thread block needs %s steps with %d channel(s): %s allows fewer than %d steps per thread "
                          "block",
                          "64 or more", nch, tn, L.lim.max_steps_per_tb);
            goto done;
        }
        /* steps shrink about in proportion to the channels: jump close, then step up */
        int guess = (int)(((long)nch * maxsteps * 11 / 10 + L.lim.max_steps_per_tb - 2) / (L.lim.max_steps_per_tb - 1));
        nch = guess > nch ? guess : nch + 1;
        if (nch > L.lim.max_channels)
            nch = L.lim.max_channels;
        if (nch > L.N)
            nch = L.N;
    }
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
    return st;
}
