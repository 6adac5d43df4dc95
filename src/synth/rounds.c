/*
 * rounds: ten.c's FIFO matching on networks whose links all cost the same, computed node by node and round
 * by round in an order that keeps a tile of nodes in the cache for several rounds: the same result as the
 * event-driven engine, with a fraction of its memory traffic.
 *
 * Accepts: a SPREAD job in FIFO matching (tc_synth_ten_fifo) on NPUs only (no switch vertex), every link
 *   of one cost (one cost group), the tacos link model (no hold), no release, block or timetables,
 *   statistics only (no rec, no out): tc_synth_rounds_ok says so.
 * Returns: what tc_synth_ten_run returns for the same job: makespan, rounds and transfers, job->first_out,
 *   the same early stop and last_check (job->stop asked at the same clocks: ask_stop), the same errors
 *   (TC_ERR_INTERNAL on a stall, TC_ERR_LIMIT past the clock's range).
 * Why it is the same: with one cost c every transfer starts at a multiple of c and every link is free again
 *   at the next one, so ten.c's event time k c is round k, and in it each node d takes, over each of its
 *   in-links l in CSR order, the first entry of the source's list from l's cursor that d has not claimed,
 *   and claims it (a link asleep finds none: every entry past its cursor was claimed when it came; a link
 *   ten.c skips is one of those).  The chunks d takes in round k arrive together at round k + 1 in that
 *   order (one completion FIFO, filled in start order, and d's starts are made one after the other), and
 *   are appended to d's list in it.  So round k at d reads only d's claim bits and in-link cursors and its
 *   sources' lists as they stood after those sources' round k - 1; any order of (node, round) steps that
 *   respects that gives the same lists, claims and transfers.
 * Order: node v takes its round r = done[v] once every neighbour (in or out) has taken round r - 1 (done >=
 *   r).  Neighbours are then never more than one round apart, so a reader of v's list at its round r sees
 *   the whole list when done[v] == r and all but v's last round's entries (prev_len[v]) when done[v] ==
 *   r + 1.  Nodes are swept in tiles (rn_tiles: a x a of a mesh's or torus's grid, runs of a^2 ids on other
 *   networks), each advanced up to a / 2 more rounds a sweep (a work list of its nodes that may take a
 *   round: tile_advance) while its claim rows and lists are in the cache; the cut moves by a third of a
 *   tile from sweep to sweep, so the nodes a tile's edge held back are inside a tile in a later sweep
 *   (time skewing: with one fixed cut, or one shifted by half a tile, a 2-D grid advances about 2 rounds
 *   a sweep whatever the tile; with three cuts, about a / 4).
 *   ten.c instead visits every node once per event time: at 200x200 its claim bitset is 200 MB, each row
 *   reloaded from memory every round.
 * Threads: tiles of one colour (column and row parity) share no link on a grid that does not wrap, so
 *   job->threads threads advance them side by side: no two threads touch one node's list, claims or
 *   cursors, and no list is read while another thread writes it; which thread ran a tile never shows.
 * Labels: the lists and claim rows hold a chunk's slot, not its number (slots_make): on a grid, chunks of
 *   nearby owners share a cache line of the claim row.
 * Cost: O(transfers + cursor steps) as ten.c, plus a neighbour test per node per visit.
 * Trace, unidirectional ring 0->1->2, K = 1: nodes 0, 1, 2 take round 0 (0 gets chunk 2 from 2, 1 chunk 0,
 *   2 chunk 1), then round 1 (0 gets 1, 1 gets 2, 2 gets 0): 6 transfers, 2 rounds, makespan 2c, as ten.c.
 */
#include "synth_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS_MAX_IN 64 /* in-links per node (a pick each per round) */
#define ROUNDS_MAX_THREADS 8
#define TILE_MIN 4         /* a tile's side at least */
#define PREFETCH_AHEAD 8   /* nodes: claim bits asked for this far ahead of the scan, list entries twice as far */
#define PREFETCH_ENTRIES 3 /* list entries per cursor whose claim bits are asked for */
/* A tile's rounds per sweep: half its side (its middle can rise about that far before its edges hold it),
 * within these */
#define TILE_ROUNDS_MIN 4
#define TILE_ROUNDS_MAX 32
#ifndef TILE_BYTES
#define TILE_BYTES ((size_t)24 << 20) /* claim rows and lists per tile: about this many bytes */
#endif
#define TILE_LIST_BYTES 2048 /* a node's list, a guess (200x200 mesh: 2.3 KB on average) */

typedef struct rn {
    const syn_net *net;
    const syn_job *job;
    int n, C;
    size_t W, esz;
    uint64_t *claim;   /* node d has or is receiving chunk c: bit c & 63 of word d W + c / 64 */
    syn_log *log;
    int *cursor;       /* per link */
    int *done;         /* per node: rounds taken */
    int *prev_len;     /* per node: its list's length before its last round's entries */
    int *need;         /* per node: chunks it has not claimed */
    int *nb_off, *nb;  /* per node: its neighbours (sources of in-links, destinations of out-links) */
    int *slot;         /* per chunk: its label in the lists and its claim bit (slots_make) */
    int *chunk;        /* per slot: the chunk (first_out only) */
    unsigned char *inq; /* per node: 0 outside the tile being advanced, 1 in it, 2 in its queue */
    int *queue[ROUNDS_MAX_THREADS]; /* per thread: tile_advance's work list (qcap entries) */
    int qcap;
    int64_t need_all;  /* chunks not claimed yet, all nodes (between phases) */
} rn;

/* A thread's tallies of one phase (merged after it). */
typedef struct rn_w {
    int64_t xfers;     /* transfers started */
    int last_round;    /* the last round in which one started */
    tc_status st;
} rn_w;

int tc_synth_rounds_ok(const syn_net *net, const syn_job *job)
{
    if (!(tc_synth_ten_fifo(net, job) && net->n_groups == 1 && !net->hold && net->n_npus == net->n &&
          (job->n_ranks <= 0 || job->n_ranks == net->n) && !job->rec && !job->out && !job->release &&
          !job->block && !job->busy_out))
        return 0;
    for (int v = 0; v < net->n; v++)
        if (net->in_off[v + 1] - net->in_off[v] > ROUNDS_MAX_IN)
            return 0;
    return 1;
}

static inline int claimed(const rn *e, int d, int c)
{
    return (e->claim[(size_t)d * e->W + ((unsigned)c >> 6)] >> (c & 63)) & 1;
}

static inline void set_claim(rn *e, int d, int c)
{
    e->claim[(size_t)d * e->W + ((unsigned)c >> 6)] |= (uint64_t)1 << (c & 63);
}

static tc_status append(rn *e, int v, int c)
{
    syn_log *L = &e->log[v];
    if (L->len - L->base == L->cap) {
        const syn_net *net = e->net;
        int low = L->len;
        for (int k = net->out_off[v]; k < net->out_off[v + 1]; k++)
            if (net->src[net->out_lk[k]] >= 0 && e->cursor[net->out_lk[k]] < low)
                low = e->cursor[net->out_lk[k]];
        tc_status st = tc_synth_log_room(L, e->esz, low, (int64_t)e->C + 1);
        if (st)
            return st;
    }
    tc_synth_log_put(L, e->esz, c);
    return TC_OK;
}

/* Node d takes its round r = done[d] (its neighbours have taken round r - 1). */
static tc_status step(rn *e, rn_w *w, int d)
{
    const syn_net *net = e->net;
    const int r = e->done[d];
    int pick[ROUNDS_MAX_IN], np = 0;
    if (e->need[d] > 0) {
        for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
            const int l = net->in_lk[k], s = net->src[l];
            if (s < 0)
                continue;
            const syn_log *L = &e->log[s];
            const int lim = e->done[s] > r ? e->prev_len[s] : L->len;
            int cur = e->cursor[l];
            while (cur < lim && claimed(e, d, tc_synth_log_at(L, e->esz, cur)))
                cur++;
            if (cur < lim) {
                const int c = tc_synth_log_at(L, e->esz, cur);
                set_claim(e, d, c);
                cur++; /* claimed now: the next round's scan would step over it */
                pick[np++] = c;
                const int ch = e->job->first_out ? e->chunk[c] : 0;
                if (e->job->first_out && s == (e->job->root >= 0 ? e->job->root : ch / e->job->K)) {
                    /* the earliest start from the owner (another thread's node may lower it too) */
                    const int64_t t = (int64_t)r * net->group_cost[0];
                    int64_t *f = &e->job->first_out[ch], old = __atomic_load_n(f, __ATOMIC_RELAXED);
                    while (t < old && !__atomic_compare_exchange_n(f, &old, t, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                        ;
                }
            }
            e->cursor[l] = cur;
        }
        e->need[d] -= np;
    }
    e->prev_len[d] = e->log[d].len;
    for (int i = 0; i < np; i++) {
        tc_status st = append(e, d, pick[i]);
        if (st)
            return st;
    }
    if (np) {
        w->xfers += np;
        if (r > w->last_round)
            w->last_round = r;
    }
    e->done[d] = r + 1;
    return TC_OK;
}

/* Ask for the list entries at v's in-link cursors (stage 0) or for the claim bits of the first entries
 * there (stage 1, once those entries are in the cache): the scans in step() wait on each load in turn,
 * these let the processor fetch a few nodes' ahead meanwhile. */
static inline void prefetch(const rn *e, int v, int stage)
{
    const syn_net *net = e->net;
    for (int k = net->in_off[v]; k < net->in_off[v + 1]; k++) {
        const int l = net->in_lk[k], s = net->src[l];
        if (s < 0)
            continue;
        const syn_log *L = &e->log[s];
        const int cur = e->cursor[l];
        if (cur >= L->len)
            continue;
        if (!stage)
            __builtin_prefetch((const char *)L->buf + (size_t)(cur - L->base) * e->esz);
        else
            for (int p = cur; p < L->len && p < cur + PREFETCH_ENTRIES; p++) {
                const int c = tc_synth_log_at(L, e->esz, p);
                __builtin_prefetch(&e->claim[(size_t)v * e->W + ((unsigned)c >> 6)]);
            }
    }
}

/* May v take its next round (every neighbour has taken the one before)? */
static inline int ready(const rn *e, int v)
{
    const int r = e->done[v];
    for (int k = e->nb_off[v]; k < e->nb_off[v + 1]; k++)
        if (e->done[e->nb[k]] < r)
            return 0;
    return 1;
}

static tc_status neighbours(rn *e)
{
    const syn_net *net = e->net;
    const int n = e->n;
    if (!(e->nb_off = calloc((size_t)n + 1, sizeof *e->nb_off)) ||
        !(e->nb = malloc(((size_t)net->in_off[n] + net->out_off[n] + 1) * sizeof *e->nb)))
        return TC_ERR_NOMEM;
    int k = 0;
    for (int v = 0; v < n; v++) {
        e->nb_off[v] = k;
        for (int j = net->in_off[v]; j < net->in_off[v + 1]; j++)
            if (net->src[net->in_lk[j]] >= 0)
                e->nb[k++] = net->src[net->in_lk[j]];
        for (int j = net->out_off[v]; j < net->out_off[v + 1]; j++)
            if (net->dst[net->out_lk[j]] >= 0)
                e->nb[k++] = net->dst[net->out_lk[j]];
        /* each neighbour once (a bidirectional link is an in- and an out-link): ready() tests them all on
         * every visit */
        int u = e->nb_off[v];
        for (int i = e->nb_off[v]; i < k; i++) {
            int seen = 0;
            for (int h = e->nb_off[v]; h < u && !seen; h++)
                seen = e->nb[h] == e->nb[i];
            if (!seen)
                e->nb[u++] = e->nb[i];
        }
        k = u;
    }
    e->nb_off[n] = k;
    return TC_OK;
}

static void rn_free(rn *e)
{
    if (e->log)
        for (int v = 0; v < e->n; v++)
            free(e->log[v].buf);
    free(e->log);
    free(e->claim);
    free(e->cursor);
    free(e->done);
    free(e->prev_len);
    free(e->need);
    free(e->nb_off);
    free(e->nb);
    free(e->slot);
    free(e->chunk);
    free(e->inq);
    for (int k = 0; k < ROUNDS_MAX_THREADS; k++)
        free(e->queue[k]);
}

/* Claim slots.  A node's scans test the chunks near its in-links' cursors, which on a grid come from
 * owners near one another (a chunk's wave front); numbered by owner row by row, two owners one row apart
 * are W bits apart, so tests of chunks from owners one above another load different lines of the row.  So the lists and
 * claim rows label a chunk by its slot: owners in blocks of SLOT_BLOCK x SLOT_BLOCK (row-major inside a
 * block, blocks row-major; edge blocks narrower), an owner's K chunks side by side; a one-to-one relabeling,
 * so the same transfers, and the slots number 0 .. C - 1 as the chunks do.  Broadcast (one owner) or no
 * grid: slot = chunk.  140x140 all-gather, stats only, one thread: 37.0 and 35.7 s with chunk numbers,
 * 31.5 and 32.0 s with slots (runs interleaved); of each node's last 8 claim lines, a test hit one 72% of
 * the time with chunk numbers, 91% with slots (100x100). */
#ifndef SLOT_BLOCK
#define SLOT_BLOCK 16
#endif

static tc_status slots_make(rn *e, int W)
{
    const syn_job *job = e->job;
    const int C = e->C, K = job->K, n = e->n;
    if (!(e->slot = malloc(((size_t)C + 1) * sizeof *e->slot)) ||
        !(e->chunk = malloc(((size_t)C + 1) * sizeof *e->chunk)))
        return TC_ERR_NOMEM;
    int next = 0;
    if (job->root < 0 && W < n && K > 0 && (int64_t)n * K == C) {
        const int H = (n + W - 1) / W, B = SLOT_BLOCK;
        for (int by = 0; by < H; by += B)
            for (int bx = 0; bx < W; bx += B)
                for (int y = by; y < by + B && y < H; y++)
                    for (int x = bx; x < bx + B && x < W && y * W + x < n; x++)
                        for (int k = 0; k < K; k++)
                            e->slot[(y * W + x) * K + k] = next++;
    } else
        for (; next < C; next++)
            e->slot[next] = next;
    for (int c = 0; c < C; c++)
        e->chunk[e->slot[c]] = c;
    return TC_OK;
}

/* The tiles of one sweep.  Node v sits at (v mod W, v / W) of a grid W wide (W: the stride most links
 * span, a mesh's or torus's row; n when none stands out: a single row), cut into tiles of a x a (columns
 * from off, off + a, ..., rows likewise; the first column and row of tiles may be narrower).  Tiles are
 * coloured (column parity, row parity); tiles of one colour share no link unless the grid wraps (then
 * threads = 1), so threads may advance them side by side. */
typedef struct rn_tiles {
    int W, H, nx, ny;
    int *xs, *ys;      /* tile column i: x in [xs[i], xs[i + 1]); row j: y in [ys[j], ys[j + 1]) */
    int *by_colour;    /* tile ids (j nx + i), colour by colour */
    int col_off[5];    /* colour c: by_colour[col_off[c] .. col_off[c + 1]) */
    int threads;
} rn_tiles;

static void tiles_free(rn_tiles *T)
{
    free(T->xs);
    free(T->ys);
    free(T->by_colour);
}

static int cuts(int len, int a, int off, int *out)
{
    int k = 0;
    out[k++] = 0;
    for (int x = off > 0 ? off : a; x < len; x += a)
        out[k++] = x;
    out[k] = len;
    return k;
}

static inline int tile_of(const int *cut, int ncut, int x)
{
    int lo = 0, hi = ncut - 1;
    while (lo < hi) { /* the last cut <= x */
        const int mid = (lo + hi + 1) / 2;
        if (cut[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static tc_status tiles_make(const rn *e, int W, int a, int off, int threads, rn_tiles *T)
{
    const syn_net *net = e->net;
    memset(T, 0, sizeof *T);
    T->W = W;
    T->H = (e->n + W - 1) / W;
    const int ax = a < W ? a : W, ay = a < T->H ? a : T->H, ox = off % ax, oy = off % ay;
    T->xs = malloc(((size_t)W / ax + 3) * sizeof *T->xs);
    T->ys = malloc(((size_t)T->H / ay + 3) * sizeof *T->ys);
    if (!T->xs || !T->ys)
        return TC_ERR_NOMEM;
    T->nx = cuts(W, ax, ox, T->xs);
    T->ny = cuts(T->H, ay, oy, T->ys);
    if (!(T->by_colour = malloc(((size_t)T->nx * T->ny + 1) * sizeof *T->by_colour)))
        return TC_ERR_NOMEM;
    int k = 0;
    for (int c = 0; c < 4; c++) {
        T->col_off[c] = k;
        for (int j = c >> 1; j < T->ny; j += 2)
            for (int i = c & 1; i < T->nx; i += 2)
                T->by_colour[k++] = j * T->nx + i;
    }
    T->col_off[4] = k;
    T->threads = threads;
    for (int l = 0; l < net->m && T->threads > 1; l++) {
        const int u = net->src[l], v = net->dst[l];
        if (u < 0)
            continue;
        const int iu = tile_of(T->xs, T->nx, u % W), ju = tile_of(T->ys, T->ny, u / W);
        const int iv = tile_of(T->xs, T->nx, v % W), jv = tile_of(T->ys, T->ny, v / W);
        if ((iu != iv || ju != jv) && (iu - iv) % 2 == 0 && (ju - jv) % 2 == 0)
            T->threads = 1;
    }
    return TC_OK;
}

/* The grid's width: the difference |u - v| > 1 most links span, if a quarter of them do; else n. */
static int grid_width(const rn *e)
{
    const syn_net *net = e->net;
    const int n = e->n;
    int *cnt = calloc((size_t)n + 1, sizeof *cnt), best = 0;
    if (!cnt)
        return n;
    int m = 0;
    for (int l = 0; l < net->m; l++) {
        if (net->src[l] < 0)
            continue;
        m++;
        const int d = abs(net->src[l] - net->dst[l]);
        if (d > 1 && ++cnt[d] > cnt[best])
            best = d;
    }
    const int W = best && cnt[best] * 4 >= m ? best : n;
    free(cnt);
    return W;
}

/* Advance the nodes of tile t as far as they can go, up to round cap (ready() decides; any order gives the
 * same result).  A work list, first in first out, of the tile's nodes that may take a round: all of them,
 * row by row, at first; then a node whose neighbour took rounds and is no longer behind it.  A pass over
 * the whole tile per round instead visited each node 3.5 times per round taken (100x100 all-gather), most
 * of them to find it blocked, with its prefetches. */
/* Position i of a work list of qn entries, for i < 2 qn (head < qn plus fewer than qn). */
static inline int qpos(int i, int qn)
{
    return i < qn ? i : i - qn;
}

static tc_status tile_advance(rn *e, rn_w *w, int *q, const rn_tiles *T, int t, int cap)
{
    const int pfa = PREFETCH_AHEAD, i = t % T->nx, j = t / T->nx, qn = e->qcap;
    const int x0 = T->xs[i], x1 = T->xs[i + 1], y0 = T->ys[j], y1 = T->ys[j + 1];
    int head = 0, len = 0;
    for (int y = y0; y < y1; y++) {
        const int v1 = y * T->W + x1 < e->n ? y * T->W + x1 : e->n;
        for (int v = y * T->W + x0; v < v1; v++) {
            e->inq[v] = 1;
            if (e->done[v] < cap) {
                e->inq[v] = 2;
                q[len++] = v;
            }
        }
    }
    tc_status st = TC_OK;
    while (len > 0) {
        if (len > 2 * pfa && e->need[q[qpos(head + 2 * pfa, qn)]])
            prefetch(e, q[qpos(head + 2 * pfa, qn)], 0);
        if (len > pfa && e->need[q[qpos(head + pfa, qn)]])
            prefetch(e, q[qpos(head + pfa, qn)], 1);
        const int v = q[head];
        head = qpos(head + 1, qn);
        len--;
        e->inq[v] = 1;
        int moved = 0;
        while (e->done[v] < cap && ready(e, v)) {
            if ((st = step(e, w, v)))
                goto out;
            moved = 1;
        }
        if (!moved)
            continue;
        for (int k = e->nb_off[v]; k < e->nb_off[v + 1]; k++) {
            const int u = e->nb[k];
            /* u waits for v no longer (v is not behind it): it may take a round now */
            if (e->inq[u] == 1 && e->done[u] < cap && e->done[u] <= e->done[v]) {
                e->inq[u] = 2;
                q[qpos(head + len++, qn)] = u;
            }
        }
    }
out:
    for (int y = y0; y < y1; y++) {
        const int v1 = y * T->W + x1 < e->n ? y * T->W + x1 : e->n;
        for (int v = y * T->W + x0; v < v1; v++)
            e->inq[v] = 0;
    }
    return st;
}

/* One phase: the tiles of one colour, on T->threads threads (tiles of a colour share no link, so no two
 * threads touch one node's list, claims or cursors, nor read a list another thread writes). */
typedef struct rn_phase {
    rn *e;
    const rn_tiles *T;
    int colour, cap;
    int next;          /* atomic: the next of the colour's tiles to take */
    rn_w *w;
} rn_phase;

typedef struct rn_arg {
    rn_phase *P;
    int k;
} rn_arg;

static void *phase_worker(void *arg)
{
    const rn_arg *a = arg;
    rn_phase *P = a->P;
    const rn_tiles *T = P->T;
    rn_w *w = &P->w[a->k];
    for (;;) {
        const int i = T->col_off[P->colour] + __atomic_fetch_add(&P->next, 1, __ATOMIC_RELAXED);
        if (i >= T->col_off[P->colour + 1] || w->st)
            return NULL;
        w->st = tile_advance(P->e, w, P->e->queue[a->k], T, T->by_colour[i], P->cap);
    }
}

static tc_status phase_run(rn *e, const rn_tiles *T, int colour, int cap, rn_w *w)
{
    rn_phase P = {.e = e, .T = T, .colour = colour, .cap = cap, .next = 0, .w = w};
    pthread_t th[ROUNDS_MAX_THREADS];
    rn_arg arg[ROUNDS_MAX_THREADS];
    int started = 1;
    const int nth = T->col_off[colour + 1] - T->col_off[colour] > 1 ? T->threads : 1;
    for (int k = 0; k < T->threads; k++) {
        w[k].xfers = 0;
        w[k].last_round = -1;
        w[k].st = TC_OK;
        arg[k] = (rn_arg){&P, k};
    }
    for (int k = 1; k < nth; k++) {
        if (pthread_create(&th[k], NULL, phase_worker, &arg[k]))
            break; /* fewer threads: the same result */
        started++;
    }
    phase_worker(&arg[0]);
    for (int k = 1; k < started; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < T->threads; k++)
        if (w[k].st)
            return w[k].st;
    return TC_OK;
}

/* ten.c asks job->stop after every SYN_STOP_EVERY-th event time, round k's end being event time k (k c): the
 * same questions here for every such round up to `upto` (every node has passed it, or the run ends there),
 * res->last_check set as ten.c sets it.  1: stopped (res->stopped set). */
static int ask_stop(const syn_job *job, int64_t cost, int upto, int *next, syn_result *res)
{
    for (; *next <= upto; *next += SYN_STOP_EVERY) {
        res->last_check = *next * cost;
        if (job->stop && job->stop->fn(job->stop->u, job->stop_offset + *next * cost)) {
            res->stopped = 1;
            return 1;
        }
    }
    return 0;
}

tc_status tc_synth_rounds_run(const syn_net *net, const syn_job *job, syn_result *res)
{
    rn E, *e = &E;
    rn_tiles TL[3];
    memset(e, 0, sizeof *e);
    memset(TL, 0, sizeof TL);
    memset(res, 0, sizeof *res);
    e->net = net;
    e->job = job;
    e->n = net->n;
    e->C = job->n_chunks;
    e->W = ((size_t)e->C + 63) / 64;
    e->esz = e->C <= 65536 ? 2 : 4;
    const int n = e->n, C = e->C;
    tc_status st = TC_ERR_NOMEM;
    e->log = calloc((size_t)n + 1, sizeof *e->log);
    e->cursor = calloc((size_t)net->m + 1, sizeof *e->cursor);
    e->done = calloc((size_t)n + 1, sizeof *e->done);
    e->prev_len = calloc((size_t)n + 1, sizeof *e->prev_len);
    e->need = malloc(((size_t)n + 1) * sizeof *e->need);
    e->claim = tc_synth_claim_alloc((size_t)n * e->W + 1);
    const int W = grid_width(e), H = (n + W - 1) / W;
    if (!e->log || !e->cursor || !e->done || !e->prev_len || !e->need || !e->claim || neighbours(e) ||
        slots_make(e, W))
        goto fail_tiles;
    for (int v = 0; v < n; v++)
        e->need[v] = C;
    e->need_all = (int64_t)n * C;
    for (int c = 0; c < C; c++) {
        const int owner = job->root >= 0 ? job->root : c / job->K;
        set_claim(e, owner, e->slot[c]);
        e->need[owner]--;
        e->need_all--;
        if ((st = append(e, owner, e->slot[c])))
            goto fail_tiles;
    }
    st = TC_ERR_NOMEM;
    for (int v = 0; v < n; v++)
        e->prev_len[v] = e->log[v].len;
    /* tiles of about TILE_BYTES of claim rows and lists.  A node's scans touch a few lines of its row (the
     * slots), not all of it, so a tile may hold more rows than the cache (this machine: 19 ns a load up to
     * 2 MB, 140-230 ns from 4 MB).  At 200x200 on 2 threads: 149 s before slots and work lists (8 MB, side
     * 34), 108 s with them at 16 MB (side 48), 95 s at 24 MB (side 58); a model of a 2 MB cache (slots,
     * passes) counted 0.72, 0.60, 0.54 and 0.53 misses per transfer at sides 34, 48, 56 and 64.  With
     * threads, two tiles a thread in each colour at least, for the threads to share them out */
    int threads = job->threads > 1 ? job->threads : 1;
    if (threads > ROUNDS_MAX_THREADS)
        threads = ROUNDS_MAX_THREADS;
    const size_t node_bytes = e->W * sizeof(uint64_t) + TILE_LIST_BYTES;
    int a = 1;
    while ((size_t)(a + 1) * (a + 1) * node_bytes <= TILE_BYTES)
        a++;
    while (threads > 1 && W < n && a > TILE_MIN && (int64_t)((W + a - 1) / a) * ((H + a - 1) / a) < 8 * threads)
        a--;
    if (a < TILE_MIN)
        a = TILE_MIN;
    if (W >= n) /* no grid: one row, tiles of a x a nodes */
        a *= a;
    if (job->rounds_tile > 0)
        a = job->rounds_tile;
    const int R = a / 2 < TILE_ROUNDS_MIN ? TILE_ROUNDS_MIN : a / 2 > TILE_ROUNDS_MAX ? TILE_ROUNDS_MAX : a / 2;
    for (int k = 0; k < 3; k++)
        if ((st = tiles_make(e, W, a, k * a / 3, threads, &TL[k])))
            goto fail_tiles;
    /* the work lists: a tile's nodes at most (each queued once at a time); cuts() makes tiles of a x a
     * at most, within the grid */
    e->qcap = (a < W ? a : W) * (a < H ? a : H);
    st = TC_ERR_NOMEM;
    if (!(e->inq = calloc((size_t)n + 1, 1)))
        goto fail_tiles;
    for (int k = 0; k < threads; k++) /* every tiling's threads at most */
        if (!(e->queue[k] = malloc(((size_t)e->qcap + 1) * sizeof *e->queue[k])))
            goto fail_tiles;
    const double t0 = tc_now();
    double last_print = 0;
    int cap = 0, last_round = -1;
    int64_t n_xfers = 0;
    const int64_t cost = net->group_cost[0];
    int next_check = SYN_STOP_EVERY;
    for (int sweep = 0; e->need_all > 0; sweep++) {
        cap += R;
        /* the tiles move by a third of a tile each sweep: the nodes near a tile's edges, held back by the
         * tiles not advanced yet, are inside a tile in one of the three sweeps */
        const rn_tiles *T = &TL[sweep % 3];
        for (int colour = 0; colour < 4; colour++) {
            rn_w w[ROUNDS_MAX_THREADS];
            if ((st = phase_run(e, T, colour, cap, w)))
                goto fail_tiles;
            for (int k = 0; k < T->threads; k++) {
                n_xfers += w[k].xfers;
                e->need_all -= w[k].xfers; /* a transfer is one chunk claimed by one NPU */
                if (w[k].last_round > last_round)
                    last_round = w[k].last_round;
            }
        }
        int low = cap;
        for (int v = 0; v < n; v++)
            if (e->done[v] < low)
                low = e->done[v];
        /* every node has taken round low - 1; none started a transfer in it: nothing can start after it
         * (ten.c runs until the last arrival, round last_round + 1, asking the stop on its way) */
        const int stall = e->need_all > 0 && last_round < low - 1;
        if (ask_stop(job, cost, stall ? last_round + 1 : low, &next_check, res)) {
            st = TC_OK;
            goto fail_tiles;
        }
        if (stall) {
            st = TC_ERR_INTERNAL;
            goto fail_tiles;
        }
        if ((int64_t)low * net->group_cost[0] > SYN_TIME_MAX_PS) {
            st = TC_ERR_LIMIT;
            goto fail_tiles;
        }
        tc_synth_progress(job, low, 1.0 - (double)e->need_all / ((double)n * C), t0, &last_print);
    }
    if (job->progress && job->ctx && job->ctx->progress && last_print > 0)
        fprintf(stderr, "\r%60s\r", "");
    res->makespan = (int64_t)(last_round + 1) * net->group_cost[0];
    if (res->makespan > SYN_TIME_MAX_PS) {
        st = TC_ERR_LIMIT;
        goto fail_tiles;
    }
    st = TC_OK;
    if (ask_stop(job, cost, last_round + 1, &next_check, res))
        goto fail_tiles;
    res->rounds = last_round + 1;
    res->n_xfers = n_xfers;
    res->threads = TL[0].threads;
fail_tiles:
    for (int k = 0; k < 3; k++)
        tiles_free(&TL[k]);
    rn_free(e);
    return st;
}
