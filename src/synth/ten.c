/*
 * ten: the event-driven time-expanded network (TEN) of TACOS (paper §IV-A, §IV-F) and its link-chunk
 * matching (Alg. 1, 2).
 *
 * Accepts: a syn_net (directed links with a per-chunk cost in picoseconds) and a syn_job: SPREAD (every
 *   node must end with every chunk: all-gather when chunk c starts at rank c / K, broadcast when all
 *   chunks start at the root) or RELAY (every chunk must reach the root: gather; a node forwards each
 *   chunk it holds once, over a free link that strictly decreases its time-distance to the root, the link
 *   minimizing (1 + backlog of the next node) x cost first).
 * Returns: the makespan, the number of rounds and transfers, and, when job->rec is set, the transfers
 *   appended to that schedule (times in ps, step = round).
 * Cost model: a link moving one chunk is busy alpha + beta * chunk_bytes (net->cost); a chunk may be
 *   forwarded once it is fully received.  Time advances from event to event (link completions), the TEN of
 *   the paper's Fig. 12, so heterogeneous links need no common time step.  Link model te-ccl
 *   (tc_link_times, net->hold set): the link is busy net->hold (beta * chunk_bytes) and free again then
 *   (TEV_FREE); the chunk is there net->cost after its start (TEV_ARRIVE, with its chunk: a link may have
 *   several in flight).
 * Matching (SPREAD), at each event time, for every node d with a free in-link:
 *   - random (the paper): unsatisfied chunks of d held by the source of a free in-link, in random order;
 *     each takes the cheapest free in-link whose source holds it (random among equal costs).
 *   - best (default): for every free in-link, a window of up to 8 chunks (first 64 entries scanned) its
 *     source holds that d has not claimed, in the order the source received them.  Each candidate is
 *     ranked by (a) earliest arrival, on nodes whose in-links differ in cost: last if another in-link
 *     whose source holds it would deliver it sooner; (b) alternatives: fewest other in-neighbours of d
 *     holding it (a chunk only this link can bring goes first; with uniform costs the scan stops there);
 *     (c) rarity: fewest nodes holding or receiving it; (d) a seeded hash.  With up to 16 free in-links
 *     a maximum matching links -> candidates is computed (Kuhn's augmenting paths, each link trying its
 *     candidates best first, links with fewer candidates first); with more, a greedy pass in that
 *     order.  A link whose candidates were all taken takes the first chunk of its source's list that d
 *     lacks.  Problems of 2^20 (node, chunk) pairs or more use that FIFO rule alone (first unclaimed chunk
 *     in arrival order, cheapest link first): O(1) amortized per transfer, and as good on meshes.
 *     d claims a chunk when it is matched, so a chunk is never sent twice to the same node.
 *   - switch vertices (synth_int.h): a port into a switch takes, of the first SWITCH_WINDOW chunks of its
 *     NPU's list that some NPU behind the switch still lacks (and that a node switch has fewer copies of
 *     than NPUs lack it), the one the fewest other ports could send; a port out of a switch sends the first
 *     chunk of the switch's list its NPU lacks (a node switch's copy is then spent), before the NPU's other
 *     in-links are matched.  An NPU's slower in-link defers a chunk that its switch would bring sooner (it
 *     waits until then, TEV_UNBLOCK) rather than carry it again over a scarce link (a cut); under te-ccl,
 *     where that wait is 2 ps and repeats until something happens, the waits that cannot see anything new
 *     are skipped (skip_idle_polls: the same plan).
 *   - switch trees (synth_int.h): a link from an NPU into a tree vertex takes the first chunk of the NPU's
 *     list that a destination behind it wants; the copy is routed to that destination, hop by hop, first in
 *     first out per link (match_tree, tree_arrive).
 * All-reduce overlap (job->release, job->block): a chunk appears at its owner at its release time; a link
 *   the other phase holds is blocked until the end of that stretch (timed events in a heap).
 * Data layout (no per-chunk allocation): claim bitset n x chunks; per node the list of chunks in arrival
 *   order (a growable array, compacted once every out-link's cursor has passed the front; a node switch's
 *   list holds a copy per entry, -1 once sent); per link a cursor into its source's list and a state
 *   (ready, busy, asleep, blocked); in-flight links in one FIFO per
 *   distinct cost (completion times are monotone within a cost, so no heap is needed).
 *   Work: O(links x chunks) cursor steps plus O(transfers x out-degree) wake-up tests.
 * Threads (job->threads): large FIFO-mode runs match and take arrivals part by part on several threads
 *   and start the transfers on one, in the order one thread would (par_*, "Threads" below): the same
 *   transfers, byte for byte, on any number.
 * Rounds: a statistics-only FIFO SPREAD run on NPUs whose links all cost the same (tc_synth_rounds_ok)
 *   goes to rounds.c, which computes the same result node by node and round by round, tile by tile in the
 *   cache (job->events keeps it here: the tests compare the two).
 * Limits: a stall (nothing in flight, postconditions left) returns TC_ERR_INTERNAL; callers check
 *   reachability first.
 * Trace, unidirectional ring 0->1->2, K = 1, all-gather: t=0 each link i->i+1 moves chunk i; at t=c node
 *   i+1 holds chunk i and forwards it: 0->1 moves chunk 2, 1->2 chunk 0, 2->0 chunk 1; done at t=2c.
 */
#include "synth_int.h"
#include "tacos/sim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------ */
/* Network view                                                                                      */

static int cmp_link_cost(const void *a, const void *b, void *arg)
{
    const int64_t *cost = arg;
    int x = *(const int *)a, y = *(const int *)b;
    if (cost[x] != cost[y])
        return cost[x] < cost[y] ? -1 : 1;
    return (x > y) - (x < y);
}

void tc_synth_net_free(syn_net *net)
{
    if (!net)
        return;
    free(net->src);
    free(net->dst);
    free(net->cost);
    free(net->hold);
    free(net->in_off);
    free(net->in_lk);
    free(net->out_off);
    free(net->out_lk);
    free(net->group_of);
    free(net->group_size);
    free(net->group_cost);
    free(net->kind);
    memset(net, 0, sizeof *net);
}

static tc_status build_csr(int n, int m, const int *key, const int64_t *cost, int **off_out, int **lk_out)
{
    int *off = calloc((size_t)n + 1, sizeof *off), *lk = malloc(((size_t)m + 1) * sizeof *lk);
    if (!off || !lk) {
        free(off);
        free(lk);
        return TC_ERR_NOMEM;
    }
    for (int l = 0; l < m; l++)
        if (key[l] >= 0)
            off[key[l] + 1]++;
    for (int v = 0; v < n; v++)
        off[v + 1] += off[v];
    int *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        free(off);
        free(lk);
        return TC_ERR_NOMEM;
    }
    memcpy(fill, off, (size_t)n * sizeof *fill);
    for (int l = 0; l < m; l++)
        if (key[l] >= 0)
            lk[fill[key[l]]++] = l;
    free(fill);
    for (int v = 0; v < n; v++)
        qsort_r(lk + off[v], (size_t)(off[v + 1] - off[v]), sizeof *lk, cmp_link_cost, (void *)cost);
    *off_out = off;
    *lk_out = lk;
    return TC_OK;
}

tc_status tc_synth_net_build(const tc_topo *t, int reversed, uint64_t chunk_bytes, syn_net *net)
{
    memset(net, 0, sizeof *net);
    const int n = tc_topo_n_vertices(t), m = t->n_links;
    net->n = n;
    net->n_npus = t->n_npus;
    if (!(net->kind = calloc((size_t)n + 1, 1)))
        return TC_ERR_NOMEM;
    for (int k = 0; k < t->n_swnodes; k++)
        net->kind[t->n_npus + k] = t->swnodes[k].multicast ? SYN_V_MCAST : SYN_V_NODE;
    net->m = m;
    size_t mm = (size_t)m + 1;
    net->src = malloc(mm * sizeof *net->src);
    net->dst = malloc(mm * sizeof *net->dst);
    net->cost = malloc(mm * sizeof *net->cost);
    net->group_of = malloc(mm * sizeof *net->group_of);
    int64_t *uniq = malloc(mm * sizeof *uniq);
    tc_status st = TC_ERR_NOMEM;
    if (!net->src || !net->dst || !net->cost || !net->group_of || !uniq)
        goto fail;
    const double epoch = tc_link_epoch(t, (double)chunk_bytes);
    if (t->link_model != TC_LINK_TACOS && !(net->hold = malloc(mm * sizeof *net->hold)))
        goto fail;
    for (int l = 0; l < m; l++) {
        const tc_link *k = &t->links[l];
        int s = reversed ? k->dst : k->src, d = reversed ? k->src : k->dst;
        if (s < 0 || s >= n || d < 0 || d >= n || s == d)
            s = d = -1; /* unusable: never matched */
        net->src[l] = s;
        net->dst[l] = d;
        double c = tc_link_cost(t, k, (double)chunk_bytes) * 1e12;
        if (net->hold) { /* the link model: cost is the arrival, hold the link's busy time (tc_link_times) */
            double hold, lat;
            tc_link_times(t, l, (double)chunk_bytes, epoch, &hold, &lat);
            const double h = hold * 1e12;
            if (!(h <= (double)SYN_TIME_MAX_PS)) {
                st = TC_ERR_LIMIT;
                goto fail;
            }
            net->hold[l] = h < 1 ? 1 : (int64_t)(h + 0.5);
            c = lat * 1e12;
        }
        if (!(c <= (double)SYN_TIME_MAX_PS)) {
            st = TC_ERR_LIMIT;
            goto fail;
        }
        int64_t ps = c < 1 ? 1 : (int64_t)(c + 0.5);
        net->cost[l] = ps;
        uniq[l] = ps;
    }
    qsort(uniq, (size_t)m, sizeof *uniq, tc_cmp_int64);
    int g = 0;
    for (int l = 0; l < m; l++)
        if (g == 0 || uniq[g - 1] != uniq[l])
            uniq[g++] = uniq[l];
    net->n_groups = g;
    net->group_cost = malloc(((size_t)g + 1) * sizeof *net->group_cost);
    net->group_size = calloc((size_t)g + 1, sizeof *net->group_size);
    if (!net->group_cost || !net->group_size)
        goto fail;
    memcpy(net->group_cost, uniq, (size_t)g * sizeof *uniq);
    for (int l = 0; l < m; l++) {
        int lo = 0, hi = g - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (uniq[mid] < net->cost[l])
                lo = mid + 1;
            else
                hi = mid;
        }
        net->group_of[l] = lo;
        net->group_size[lo]++;
    }
    if ((st = build_csr(n, m, net->dst, net->cost, &net->in_off, &net->in_lk)))
        goto fail;
    if ((st = build_csr(n, m, net->src, net->cost, &net->out_off, &net->out_lk)))
        goto fail;
    free(uniq);
    return TC_OK;
fail:
    free(uniq);
    tc_synth_net_free(net);
    return st;
}

/* r read off the out-lists (b->out_lk[k] = r(a->out_lk[k])), then every condition of synth_int.h checked. */
tc_status tc_synth_net_mirror(const syn_net *a, const syn_net *b, int **map)
{
    *map = NULL;
    const int n = a->n, m = a->m;
    if (b->n != n || b->m != m || a->n_npus != n || b->n_npus != n || a->hold || b->hold ||
        a->n_groups != b->n_groups)
        return TC_OK;
    for (int v = 0; v < n; v++)
        if (a->kind[v] != SYN_V_NPU || b->kind[v] != SYN_V_NPU)
            return TC_OK;
    if (memcmp(a->in_off, b->in_off, ((size_t)n + 1) * sizeof *a->in_off) ||
        memcmp(a->out_off, b->out_off, ((size_t)n + 1) * sizeof *a->out_off) ||
        memcmp(a->group_size, b->group_size, (size_t)a->n_groups * sizeof *a->group_size) ||
        memcmp(a->group_cost, b->group_cost, (size_t)a->n_groups * sizeof *a->group_cost))
        return TC_OK;
    int *r = malloc(((size_t)m + 1) * sizeof *r);
    if (!r)
        return TC_ERR_NOMEM;
    for (int l = 0; l < m; l++) /* links no list holds (unusable: src -1) stay themselves */
        r[l] = a->src[l] < 0 ? l : -1;
    for (int k = 0; k < a->out_off[n]; k++)
        r[a->out_lk[k]] = b->out_lk[k];
    int ok = 1;
    for (int l = 0; l < m && ok; l++) {
        const int x = r[l];
        ok = x >= 0 && b->src[x] == a->src[l] && b->dst[x] == a->dst[l] && b->cost[x] == a->cost[l] &&
             b->group_of[x] == a->group_of[l];
    }
    for (int k = 0; k < a->in_off[n] && ok; k++)
        ok = b->in_lk[k] == r[a->in_lk[k]];
    if (!ok) {
        free(r);
        return TC_OK;
    }
    *map = r;
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Lists and claim bits (shared with rounds.c)                                                       */

tc_status tc_synth_log_room(syn_log *L, size_t esz, int low, int64_t most)
{
    if (low > L->base && (low - L->base) * 4 >= L->cap) {
        memmove(L->buf, (char *)L->buf + (size_t)(low - L->base) * esz, (size_t)(L->len - low) * esz);
        L->base = low;
        return TC_OK;
    }
    int64_t nc = L->cap ? 2 * (int64_t)L->cap : 16;
    if (nc > most)
        nc = most;
    if (nc > INT32_MAX)
        nc = INT32_MAX;
    if (nc <= L->cap)
        return TC_ERR_INTERNAL;
    void *b = realloc(L->buf, (size_t)nc * esz);
    if (!b)
        return TC_ERR_NOMEM;
    L->buf = b;
    L->cap = (int)nc;
    return TC_OK;
}

/* A zeroed claim bitset of `words` words.  Large ones ask for transparent huge pages (madvise: where the
 * system grants them only on request): the matching reads it at random, and with 4 KiB pages nearly every
 * read of a 200 MB bitset (200x200 all-gather) also misses the TLB. */
#define CLAIM_HUGE_FROM ((size_t)8 << 20) /* bytes */
uint64_t *tc_synth_claim_alloc(size_t words)
{
    const size_t bytes = words * sizeof(uint64_t);
    if (bytes < CLAIM_HUGE_FROM)
        return calloc(words, sizeof(uint64_t));
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without it, ordinary pages */
#endif
    memset(p, 0, bytes);
    return p;
}

/* ------------------------------------------------------------------------------------------------ */
/* Engine                                                                                            */

enum { L_READY = 0, L_BUSY = 1, L_SLEEP = 2, L_DEAD = 3, L_BLOCKED = 4, L_ROUTED = 5 /* idle link out of a tree vertex */ };

/* Timed events besides link completions (the all-reduce overlap): a chunk released at its owner, a link
 * free again after a stretch the other phase holds it. */
enum { TEV_RELEASE = 0, TEV_UNBLOCK = 1, TEV_FREE = 2, TEV_ARRIVE = 3 };
typedef struct tev {
    int64_t t;
    int kind, id;
    int c;  /* TEV_ARRIVE: the chunk (a link may have several in flight under the te-ccl link model) */
} tev;

/* The claim bitset's layout: a row of chunks per node (1), or a row of nodes per chunk (0).  Node-major
 * keeps the bits a node's matching tests (one node, the chunks its sources' lists hold) in one row of
 * C / 8 bytes; chunk-major keeps an arrival's wake-up tests (one chunk, the node's neighbours) in a line
 * or two.  The matching makes more tests: on the mesh all-gathers, node-major took 248 s of CPU on
 * 140x140 where chunk-major took 285 s (both on one thread, side by side), 3.3 s against 3.6 s on 64x64. */
#ifndef CLAIM_NODE_MAJOR
#define CLAIM_NODE_MAJOR 1
#endif
#define BEST_FIFO_ABOVE ((int64_t)1 << 20) /* node x chunk pairs from which best mode is FIFO (job->fifo_above) */
#define BEST_WINDOW 8  /* candidates examined per free link in best mode */
#define BEST_SCAN 64   /* entries scanned per free link to find them */
#define SKIP_PREFETCH 6 /* claim bits fetched ahead of a cursor's scan */
#define SWITCH_WINDOW 8 /* useful chunks a port into a switch chooses among */
#ifndef TREE_PAIR_MAX
#define TREE_PAIR_MAX 2 /* routed copies in flight from one NPU to another (MSCCL connections hold 2) */
#endif
#define TREE_PAIR_NPUS 8192 /* up to this many NPUs (a byte per pair, 64 MiB), TREE_PAIR_MAX holds */

typedef struct eng {
    const syn_net *net;
    const syn_job *job;
    int n, m, C;
    size_t W;              /* 64-bit words per claim row */
    size_t esz;            /* bytes per log entry: 2 or 4 */
    uint64_t *claim;       /* node d has or is receiving chunk c: bit claim_bit(d, c) of word claim_at(d, c)
                              (rows of W words per node, or per chunk: CLAIM_NODE_MAJOR) */
    int *cnt;              /* per chunk: nodes that claimed it */
    syn_log *log;          /* per node: chunks held, in arrival order */
    int *cursor;           /* per link: next entry of the source's log to consider (SPREAD) */
    int *head;             /* per node: next entry to forward (RELAY) */
    int64_t *dist;         /* per node: time-distance to the root (RELAY) */
    unsigned char *state;  /* per link */
    int *fl_chunk;         /* per link: chunk in flight */
    /* completion FIFOs, one per cost group */
    int *q_link, *q_off, *q_head, *q_len;
    int64_t *q_time;
    /* dirty nodes of this round, in the order they became dirty */
    int *dirty;
    int n_dirty;
    unsigned char *is_dirty;
    /* matching scratch */
    int *cand, *calt, *ncand, *rlink, *order;
    int64_t *busy;         /* per link: end of its current transfer */
    unsigned char *het;    /* per node: in-links of different costs */
    int max_deg;
    struct pair { uint64_t key; int cost_rank, rnd, chunk, slot; } *pairs;
    size_t cap_pairs;
    unsigned char *used;
    int64_t *defer_until;  /* best mode, per free link considered: when to look again after deferring */
    /* te-ccl (net->hold): deferred links wait outside the event heap, each polled at poll_at (defer_link) */
    int *parked, n_parked;
    int64_t *poll_at, *poll_step; /* per link: its next look, and how far its last deferral looked ahead */
    int64_t *park_epoch;   /* per link: `changes` when it was last deferred (-1 never) */
    unsigned char *park_idle; /* per link: deferred again with nothing changed since it was last deferred */
    int64_t changes;       /* events taken and transfers started so far: the state's version */
    tc_rng rng;
    int R;                 /* NPU vertices 0 .. R-1; switch vertices R .. n-1 */
    int *tok;              /* SPREAD, per (switch vertex - R, chunk): copies a node switch holds or receives
                              that no port has sent yet */
    tev *tq;               /* min-heap of timed events by (t, kind, id) */
    int tq_n, tq_cap;
    int *bcur;             /* per link: first block of job->block that may still matter */
    /* switch trees (SPREAD; all NULL when no link joins two switch vertices): see match_tree */
    unsigned char *tree_v; /* per vertex: a switch vertex joined to another switch vertex */
    int *nh;               /* per (tree vertex - R, NPU): the link toward that NPU, -1 none */
    int *dests, *dest_off; /* per tree vertex - R: the NPUs it reaches, farthest first */
    int *fl_copy;          /* per link: the routed copy in flight, -1 none */
    int *lq_head, *lq_tail;/* per link out of a tree vertex: its queue of routed copies (first in, first out) */
    int *lq_len;           /* per link: copies whose route still has it ahead (queued or on their way to it) */
    struct rcopy { int chunk, src, dst, entry, step, next; int64_t t0; } *cp; /* routed copies */
    int n_cp, cap_cp;
    int *route_buf;        /* n + 1 links */
    unsigned char *pair_fl;/* per (source NPU, destination NPU): routed copies in flight; NULL above
                              TREE_PAIR_NPUS NPUs (no limit) */
    int *comp;             /* per vertex: its tree's rank (trees ordered by NPU count, then first vertex), -1 */
    int *comp_rep;         /* per rank: a vertex of that tree (its dests are the tree's NPUs) */
    /* threads (par_*; NULL and unused on one thread) */
    struct par *par;
    int *pick;             /* per node d, from in_off[d]: the in-links matched this round (chunk: fl_chunk) */
    int *npick;            /* per node: how many */
    int *arr, n_arr;       /* this event time's arrivals (links), in the order the FIFOs give them */
    int *arr_idx;          /* the arrivals (indices into arr) part by part, each part's in FIFO order */
    int *blk_part;         /* per 512-node block: its part */
    uint64_t *wake;        /* per arrival: the out-links of its node it woke (bit k: out_lk[out_off[d] + k]) */
    int64_t remaining, inflight, now, n_xfers;
    int64_t last_end;      /* the last arrival */
    int round, round_started;
    double t0_wall, last_print;
} eng;

/* The word of the claim bitset that holds (node d, chunk c). */
static inline size_t claim_at(const eng *e, int d, int c)
{
#if CLAIM_NODE_MAJOR
    return (size_t)d * e->W + ((unsigned)c >> 6);
#else
    return (size_t)c * e->W + ((unsigned)d >> 6);
#endif
}

static inline uint64_t claim_bit(int d, int c)
{
#if CLAIM_NODE_MAJOR
    return (uint64_t)1 << (c & 63);
#else
    return (uint64_t)1 << (d & 63);
#endif
}

static inline int claimed(const eng *e, int d, int c)
{
    return (e->claim[claim_at(e, d, c)] & claim_bit(d, c)) != 0;
}

static inline void set_claim(eng *e, int d, int c)
{
    e->claim[claim_at(e, d, c)] |= claim_bit(d, c);
}

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void mark_dirty(eng *e, int v)
{
    if (!e->is_dirty[v]) {
        e->is_dirty[v] = 1;
        e->dirty[e->n_dirty++] = v;
    }
}

/* Smallest cursor over the out-links of v that still read its log (SPREAD), or its head (RELAY). */
static int log_low_water(const eng *e, int v)
{
    if (e->job->mode == SYN_RELAY)
        return e->head[v];
    const syn_net *net = e->net;
    int low = e->log[v].len;
    for (int k = net->out_off[v]; k < net->out_off[v + 1]; k++) {
        int l = net->out_lk[k];
        /* read atomically: another thread may mark an arriving link ready meanwhile (par_arrive) */
        if (__atomic_load_n(&e->state[l], __ATOMIC_RELAXED) != L_DEAD && e->cursor[l] < low)
            low = e->cursor[l];
    }
    return low;
}

static tc_status log_append(eng *e, int v, int c)
{
    syn_log *L = &e->log[v];
    if (L->len - L->base == L->cap) {
        /* an NPU holds each chunk once; a node switch a copy per in-link at most at a time */
        const int64_t most = v < e->R ? (int64_t)e->C + 1
                                      : (int64_t)e->C * (e->net->in_off[v + 1] - e->net->in_off[v]) + 1;
        tc_status st = tc_synth_log_room(L, e->esz, log_low_water(e, v), most);
        if (st)
            return st;
    }
    tc_synth_log_put(L, e->esz, c);
    return TC_OK;
}

static inline int log_at(const eng *e, int v, int i)
{
    return tc_synth_log_at(&e->log[v], e->esz, i);
}

/* A node switch's copy that a port sent: -1 in its list (lists of switch vertices take 4 bytes an entry). */
static inline void log_consume(eng *e, int v, int i)
{
    syn_log *L = &e->log[v];
    ((uint32_t *)L->buf)[i - L->base] = UINT32_MAX;
}

/* Is v a switch vertex acting as a multicast one (else a node switch)? */
static inline int mcast_at(const eng *e, int v)
{
    return e->job->mcast && e->net->kind[v] == SYN_V_MCAST;
}

/* Switch vertex v: does it hold c, or an NPU on one of its ports (from which it could have c)? */
static int near_switch(const eng *e, int v, int c)
{
    const syn_net *net = e->net;
    if (mcast_at(e, v) && claimed(e, v, c))
        return 1;
    for (int k = net->in_off[v]; k < net->in_off[v + 1]; k++) {
        const int u = net->src[net->in_lk[k]];
        if (u >= 0 && u < e->R && claimed(e, u, c))
            return 1;
    }
    return 0;
}

/* Switch vertex d: is c worth taking in (some NPU behind it lacks it, and it has no copy for it yet)? */
static int useful_at(const eng *e, int d, int c)
{
    const syn_net *net = e->net;
    const int mc = mcast_at(e, d);
    if (mc && claimed(e, d, c))
        return 0;
    int lacking = 0;
    for (int k = net->out_off[d]; k < net->out_off[d + 1]; k++) {
        const int u = net->dst[net->out_lk[k]];
        if (u >= 0 && !claimed(e, u, c)) {
            if (mc)
                return 1;
            lacking++;
        }
    }
    return !mc && lacking > e->tok[(size_t)(d - e->R) * e->C + c];
}

static tc_status tev_push_c(eng *e, int64_t t, int kind, int id, int c);

static tc_status start_rest(eng *e, int l, int c);

/* Link l starts moving chunk c now. */
static tc_status start(eng *e, int l, int c)
{
    const syn_net *net = e->net;
    e->state[l] = L_BUSY;
    e->fl_chunk[l] = c;
    e->busy[l] = e->now + tc_synth_hold(net, l);
    return start_rest(e, l, c);
}

/* start() once the link's own state, chunk and busy time are set (par_match sets them on its thread). */
static tc_status start_rest(eng *e, int l, int c)
{
    const syn_net *net = e->net;
    if (net->hold) { /* link model te-ccl: free after hold (TEV_FREE), the chunk there after cost (TEV_ARRIVE) */
        tc_status st;
        if ((st = tev_push_c(e, e->now + net->hold[l], TEV_FREE, l, 0)) ||
            (st = tev_push_c(e, e->now + net->cost[l], TEV_ARRIVE, l, c)))
            return st;
    } else {
        int g = net->group_of[l];
        int pos = e->q_off[g] + (e->q_head[g] + e->q_len[g]) % net->group_size[g];
        e->q_link[pos] = l;
        e->q_time[pos] = e->now + net->cost[l];
        e->q_len[g]++;
    }
    e->inflight++;
    e->n_xfers++;
    e->changes++;
    e->round_started = 1;
    if (e->job->first_out && net->src[l] == (e->job->root >= 0 ? e->job->root : c / e->job->K) &&
        e->job->first_out[c] == INT64_MAX)
        e->job->first_out[c] = e->now;
    if (e->job->busy_out) { /* te-ccl: the hold placed as it falls once the reversed phase is mirrored (the
                               transfer then starts lat before the mirrored time): [now + lat - hold, now + lat) */
        const int64_t hl = tc_synth_hold(net, l);
        tc_status st = tc_synth_cal_insert(&e->job->busy_out[e->job->busy_map ? e->job->busy_map[l] : l],
                                           e->now + net->cost[l] - hl, hl);
        if (st)
            return st;
    }
    if (e->fl_copy && e->fl_copy[l] >= 0)
        return TC_OK; /* a hop of a routed copy: recorded whole when it arrives (tree_arrive) */
    if (e->job->out) {
        if (e->n_xfers > e->job->out_cap)
            return TC_ERR_INTERNAL;
        tc_xfer *x = &e->job->out[e->n_xfers - 1];
        x->src = net->src[l];
        x->dst = net->dst[l];
        x->chunk = c;
        x->op = TC_OP_COPY;
        x->link = l;
        x->step = e->round;
        x->t_start = (double)e->now;
        x->t_end = (double)(e->now + net->cost[l]);
        x->route_off = x->route_len = 0;
        return TC_OK;
    }
    if (e->job->rec)
        return tc_sched_add(e->job->rec, net->src[l], net->dst[l], c, TC_OP_COPY, l, e->round, (double)e->now,
                            (double)(e->now + net->cost[l]), NULL, 0);
    return TC_OK;
}

/* Advance the cursor of free link l past chunks its destination already claimed; 0 when nothing is left. */
static int skip_claimed(eng *e, int l)
{
    int s = e->net->src[l], d = e->net->dst[l];
    int cur = e->cursor[l], len = e->log[s].len;
    /* the claim bits of the next entries are in as many rows: ask for them ahead */
    for (int p = cur, end = cur + SKIP_PREFETCH < len ? cur + SKIP_PREFETCH : len; p < end; p++) {
        const int c = log_at(e, s, p);
        if (c >= 0) /* a switch's list holds -1 for copies sent */
            __builtin_prefetch(&e->claim[claim_at(e, d, c)]);
    }
    if (s >= e->R) { /* a switch's port: its list may hold copies other ports sent (-1) */
        int c;
        while (cur < len && ((c = log_at(e, s, cur)) < 0 || claimed(e, d, c)))
            cur++;
        e->cursor[l] = cur;
        return cur < len;
    }
    if (d >= e->R) { /* into a switch: the first chunk it still wants */
        while (cur < len && !useful_at(e, d, log_at(e, s, cur)))
            cur++;
        e->cursor[l] = cur;
        return cur < len;
    }
    while (cur < len && claimed(e, d, log_at(e, s, cur))) {
        if (cur + SKIP_PREFETCH < len)
            __builtin_prefetch(&e->claim[claim_at(e, d, log_at(e, s, cur + SKIP_PREFETCH))]);
        cur++;
    }
    e->cursor[l] = cur;
    return cur < len;
}

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->cost_rank != y->cost_rank)
        return x->cost_rank < y->cost_rank ? -1 : 1;
    return (x->rnd > y->rnd) - (x->rnd < y->rnd);
}

static tc_status claim_and_start(eng *e, int d, int l, int c)
{
    if (d < e->R || mcast_at(e, d))
        set_claim(e, d, c);
    else
        e->tok[(size_t)(d - e->R) * e->C + c]++; /* one more copy in a node switch */
    e->cnt[c]++;
    if (d < e->R)
        e->remaining--;
    return start(e, l, c);
}

/* NPUs on switch d's ports that hold (or receive) c: who else could send it in. */
static int port_holders(const eng *e, int d, int c)
{
    const syn_net *net = e->net;
    int h = 0;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        const int u = net->src[net->in_lk[k]];
        h += u >= 0 && u < e->R && claimed(e, u, c);
    }
    return h;
}

/* SPREAD at switch vertex d: each free in-link takes, of the first chunks of its source's list that d
 * wants (a window of SWITCH_WINDOW), the one fewest other ports could send (first on a tie): a chunk only
 * this NPU holds goes first, so that what arrived from elsewhere spreads. */
static tc_status match_switch(eng *e, int d)
{
    const syn_net *net = e->net;
    tc_status st;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        const int l = net->in_lk[k], s = net->src[l];
        if (e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        int best = log_at(e, s, e->cursor[l]), bh = port_holders(e, d, best);
        for (int p = e->cursor[l] + 1, got = 1; p < e->log[s].len && got < SWITCH_WINDOW && bh > 1; p++) {
            const int c = log_at(e, s, p);
            if (!useful_at(e, d, c))
                continue;
            got++;
            const int h = port_holders(e, d, c);
            if (h < bh) {
                best = c;
                bh = h;
            }
        }
        if ((st = claim_and_start(e, d, l, best)))
            return st;
    }
    return TC_OK;
}

/* SPREAD at NPU d: each free port of a switch into d sends the first chunk of the switch's list that d
 * lacks, before d's other in-links are matched (first in, first out at the switch). */
static tc_status match_from_switches(eng *e, int d)
{
    const syn_net *net = e->net;
    tc_status st;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        const int l = net->in_lk[k], s = net->src[l];
        if (s < e->R || e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        const int p = e->cursor[l], c = log_at(e, s, p);
        if (!mcast_at(e, s)) { /* a node switch sends each copy out of one port */
            log_consume(e, s, p);
            e->tok[(size_t)(s - e->R) * e->C + c]--;
        }
        if ((st = claim_and_start(e, d, l, c)))
            return st;
    }
    return TC_OK;
}

/* The paper's matching for node d: random chunk order, cheapest free in-link holding it. */
static tc_status match_random(eng *e, int d)
{
    const syn_net *net = e->net;
    uint64_t rs = tc_rng_next(&e->rng);
    size_t np = 0;
    int nr = 0;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        int l = net->in_lk[k];
        if (e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        int s = net->src[l];
        int rank = k - net->in_off[d];
        /* equal costs share a rank so that ties are broken at random */
        while (rank > 0 && net->cost[net->in_lk[net->in_off[d] + rank - 1]] == net->cost[l])
            rank--;
        for (int p = e->cursor[l]; p < e->log[s].len; p++) {
            int c = log_at(e, s, p);
            if (claimed(e, d, c))
                continue;
            if (np == e->cap_pairs) {
                size_t nc = e->cap_pairs ? 2 * e->cap_pairs : 1024;
                struct pair *q = realloc(e->pairs, nc * sizeof *q);
                if (!q)
                    return TC_ERR_NOMEM;
                e->pairs = q;
                e->cap_pairs = nc;
            }
            e->pairs[np].key = mix64(rs ^ (uint64_t)c);
            e->pairs[np].cost_rank = rank;
            e->pairs[np].chunk = c;
            e->pairs[np].slot = nr;
            np++;
        }
        e->rlink[nr] = l;
        e->used[nr] = 0;
        nr++;
    }
    if (!np)
        return TC_OK;
    /* random order among equal-cost links: a random permutation of the slots */
    int *perm = e->ncand;
    for (int i = 0; i < nr; i++)
        perm[i] = i;
    for (int i = nr - 1; i > 0; i--) {
        int j = (int)tc_rng_below(&e->rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < np; i++)
        e->pairs[i].rnd = perm[e->pairs[i].slot];
    qsort(e->pairs, np, sizeof *e->pairs, cmp_pair);
    tc_status st;
    for (size_t i = 0; i < np; i++) {
        int slot = e->pairs[i].slot, c = e->pairs[i].chunk;
        if (e->used[slot] || claimed(e, d, c))
            continue;
        e->used[slot] = 1;
        if ((st = claim_and_start(e, d, e->rlink[slot], c)))
            return st;
    }
    for (int i = 0; i < nr; i++)
        if (!e->used[i])
            e->state[e->rlink[i]] = L_SLEEP; /* every chunk it could send was taken */
    return TC_OK;
}

#define KUHN_LINKS 16 /* up to this many free in-links, best mode computes a maximum matching */

static tc_status tev_push(eng *e, int64_t t, int kind, int id);

/* A link whose chunks the destination's switch brings sooner waits until `until`, and looks again. */
static tc_status defer_link(eng *e, int l, int64_t until)
{
    e->state[l] = L_BLOCKED;
    if (until <= e->now)
        until = e->now + 1;
    e->busy[l] = until;
    if (!e->net->hold)
        return tev_push(e, until, TEV_UNBLOCK, l);
    /* te-ccl: parked, polled at `until` by the main loop, which may skip the polls that cannot see anything
     * new (skip_idle_polls) */
    e->park_idle[l] = e->park_epoch[l] == e->changes;
    e->park_epoch[l] = e->changes;
    e->poll_at[l] = until;
    e->poll_step[l] = until - e->now;
    e->parked[e->n_parked++] = l;
    return TC_OK;
}

/*
 * te-ccl: skip the polls of parked links that cannot see anything new before `next`, the next event.
 * Under te-ccl a switch port's cost is its latency (alpha, 1 ps once dropped below a tenth of the epoch)
 * while it is held beta m, so a link waiting for what its switch brings looks again 2 ps later, and again:
 * millions of empty engine steps per hold (dgx2-2x16 broadcast 1 MiB: 52 s).  A poll that finds the state as
 * its link's last deferral left it (no event taken, no transfer started since: park_idle, epoch current)
 * defers again by the same step before `next`: its window, claims and the switch ports' busy times are the
 * same (a port busy past the poll frees at an event, so no earlier than `next`), and match_best's
 * "free_at + hops x cost < now + cost" stays true as now grows.  So such a link's polls before `next` are
 * skipped but the last, which the loop runs as it would have run it: the same plan, to the picosecond, as
 * polling every one (the checks in match_best decide nothing at the skipped ones).
 */
static void skip_idle_polls(eng *e, int64_t next)
{
    for (int i = 0; i < e->n_parked; i++) {
        const int l = e->parked[i];
        if (e->park_idle[l] && e->park_epoch[l] == e->changes && next != INT64_MAX && e->poll_at[l] < next) {
            e->poll_at[l] += (next - 1 - e->poll_at[l]) / e->poll_step[l] * e->poll_step[l];
            e->busy[l] = e->poll_at[l];
        }
    }
}

/* te-ccl: the parked links whose poll is at `t` become the TEV_UNBLOCK events they were before parking, so
 * that the main loop takes them in the same order among the other events of that time. */
static tc_status wake_parked(eng *e, int64_t t)
{
    int k = 0;
    for (int i = 0; i < e->n_parked; i++) {
        const int l = e->parked[i];
        if (e->poll_at[l] != t)
            e->parked[k++] = l;
        else if (tev_push(e, t, TEV_UNBLOCK, l))
            return TC_ERR_NOMEM;
    }
    e->n_parked = k;
    return TC_OK;
}

typedef struct kuhn {
    int nr, nu;
    int pref[KUHN_LINKS][BEST_WINDOW]; /* local chunk ids of link r, best first */
    int npref[KUHN_LINKS];
    int owner[KUHN_LINKS * BEST_WINDOW];
    int seen[KUHN_LINKS * BEST_WINDOW];
    int stamp;
} kuhn;

static int augment(kuhn *K, int r)
{
    for (int j = 0; j < K->npref[r]; j++) {
        int u = K->pref[r][j];
        if (K->seen[u] == K->stamp)
            continue;
        K->seen[u] = K->stamp;
        if (K->owner[u] < 0 || augment(K, K->owner[u])) {
            K->owner[u] = r;
            return 1;
        }
    }
    return 0;
}

/* Maximum matching of the free in-links of d (links in e->order) to their window candidates, each link
 * trying its candidates in key order (Kuhn's augmenting paths); links left over take their first
 * unclaimed entry or sleep. */
static tc_status match_kuhn(eng *e, int d, int nr, uint64_t rs)
{
    const syn_net *net = e->net;
    kuhn K;
    int chunk_of[KUHN_LINKS * BEST_WINDOW];
    K.nr = nr;
    K.nu = 0;
    K.stamp = 0;
    for (int r = 0; r < nr; r++) {
        const int *cand = e->cand + (size_t)r * BEST_WINDOW, *calt = e->calt + (size_t)r * BEST_WINDOW;
        uint64_t key[BEST_WINDOW];
        int n = e->ncand[r];
        for (int j = 0; j < n; j++) {
            int c = cand[j], u = 0;
            while (u < K.nu && chunk_of[u] != c)
                u++;
            if (u == K.nu) {
                chunk_of[K.nu] = c;
                K.owner[K.nu] = -1;
                K.seen[K.nu] = -1;
                K.nu++;
            }
            uint64_t k = ((uint64_t)calt[j] << 52) | ((uint64_t)(unsigned)e->cnt[c] << 28) |
                         (mix64(rs ^ (uint64_t)c) >> 36);
            int p = j; /* insertion by key */
            while (p > 0 && key[p - 1] > k) {
                key[p] = key[p - 1];
                K.pref[r][p] = K.pref[r][p - 1];
                p--;
            }
            key[p] = k;
            K.pref[r][p] = u;
        }
        K.npref[r] = n;
    }
    for (int i = 0; i < nr; i++) {
        K.stamp++;
        augment(&K, e->order[i]);
    }
    tc_status st;
    int matched[KUHN_LINKS] = {0};
    for (int u = 0; u < K.nu; u++)
        if (K.owner[u] >= 0) {
            matched[K.owner[u]] = 1;
            if ((st = claim_and_start(e, d, e->rlink[K.owner[u]], chunk_of[u])))
                return st;
        }
    for (int i = 0; i < nr; i++) {
        int r = e->order[i], l = e->rlink[r];
        if (matched[r])
            continue;
        if (e->used[r]) { /* deferred (match_best) */
            if ((st = defer_link(e, l, e->defer_until[r])))
                return st;
            continue;
        }
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        if ((st = claim_and_start(e, d, l, log_at(e, net->src[l], e->cursor[l]))))
            return st;
    }
    return TC_OK;
}

/* The default matching for node d (see the header comment). */
static tc_status match_best(eng *e, int d, uint64_t rs)
{
    const syn_net *net = e->net;
    const int i0 = net->in_off[d], i1 = net->in_off[d + 1], het = e->het[d];
    int nr = 0;
    for (int k = i0; k < i1; k++) {
        int l = net->in_lk[k];
        if (e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        int s = net->src[l], got = 0, deferred = 0, *cand = e->cand + (size_t)nr * BEST_WINDOW;
        int *calt = e->calt + (size_t)nr * BEST_WINDOW;
        int end = e->log[s].len, lim = e->cursor[l] + BEST_SCAN;
        for (int p = e->cursor[l]; p < end && p < lim && got < BEST_WINDOW; p++) {
            int c = log_at(e, s, p);
            if (claimed(e, d, c))
                continue;
            /* alternatives: other in-neighbours of d that hold or are receiving c; on mixed-cost
             * in-links, c ranks last when another link would deliver it sooner (earliest arrival) */
            int alt = 0, later = 0, by_switch = 0;
            int64_t sooner = INT64_MAX; /* when d's switch would bring c */
            for (int k2 = i0; k2 < i1; k2++) {
                int l2 = net->in_lk[k2], s2 = net->src[l2];
                /* a switch port brings c when an NPU on the switch has it (one hop more) */
                const int hops = s2 < e->R ? 1 : 2;
                if (s2 == s || (e->tree_v && e->tree_v[s2]) ||
                    !(s2 < e->R ? claimed(e, s2, c) : near_switch(e, s2, c)))
                    continue;
                alt++;
                int64_t free_at = e->busy[l2] > e->now ? e->busy[l2] : e->now;
                if (het && free_at + hops * net->cost[l2] < e->now + net->cost[l]) {
                    later = 1;
                    if (s2 >= e->R) {
                        by_switch = 1;
                        if (free_at + hops * net->cost[l2] < sooner)
                            sooner = free_at + hops * net->cost[l2];
                    }
                }
            }
            if (by_switch) { /* d's switch will bring c sooner: this (slower) link would only repeat it */
                if (!deferred || sooner < e->defer_until[nr])
                    e->defer_until[nr] = sooner;
                deferred = 1;
                continue;
            }
            calt[got] = alt + (later << 8);
            cand[got++] = c;
            if (alt == 0 && !het)
                break; /* only this link can bring c: nothing in the window can rank higher */
        }
        e->rlink[nr] = l;
        e->ncand[nr] = got;
        e->order[nr] = nr;
        e->used[nr] = deferred; /* nothing but chunks d's switch brings sooner: wait, do not fall back */
        nr++;
    }
    /* fewest candidates first; stable, so cheaper links (earlier in CSR order) first among equals */
    for (int i = 1; i < nr; i++) {
        int x = e->order[i], j = i;
        while (j > 0 && e->ncand[e->order[j - 1]] > e->ncand[x]) {
            e->order[j] = e->order[j - 1];
            j--;
        }
        e->order[j] = x;
    }
    if (nr <= KUHN_LINKS)
        return match_kuhn(e, d, nr, rs);
    tc_status st;
    for (int i = 0; i < nr; i++) {
        int r = e->order[i], l = e->rlink[r], *cand = e->cand + (size_t)r * BEST_WINDOW;
        const int *calt = e->calt + (size_t)r * BEST_WINDOW;
        int best = -1;
        uint64_t bkey = 0;
        for (int j = 0; j < e->ncand[r]; j++) {
            int c = cand[j];
            if (claimed(e, d, c))
                continue;
            uint64_t key = ((uint64_t)calt[j] << 52) | ((uint64_t)(unsigned)e->cnt[c] << 28) |
                           (mix64(rs ^ (uint64_t)c) >> 36);
            if (best < 0 || key < bkey) {
                best = c;
                bkey = key;
            }
        }
        if (best < 0) { /* the window was taken by other links: first unclaimed entry, if any */
            if (e->used[r]) {
                if ((st = defer_link(e, l, e->defer_until[r])))
                    return st;
                continue;
            }
            if (!skip_claimed(e, l)) {
                e->state[l] = L_SLEEP;
                continue;
            }
            best = log_at(e, net->src[l], e->cursor[l]);
        }
        if ((st = claim_and_start(e, d, l, best)))
            return st;
    }
    return TC_OK;
}

/* Best mode on large problems: every free in-link takes the first chunk of its source's list that d
 * has not claimed (FIFO), cheapest link first. */
static tc_status match_fifo(eng *e, int d)
{
    const syn_net *net = e->net;
    tc_status st;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        int l = net->in_lk[k];
        if (e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        if ((st = claim_and_start(e, d, l, log_at(e, net->src[l], e->cursor[l]))))
            return st;
    }
    return TC_OK;
}

/* Gather: node s forwards the next chunk of its list on each free downhill out-link, first on the link
 * minimizing (1 + backlog of its destination) x its cost (the root has no backlog). */
static tc_status match_relay(eng *e, int s)
{
    const syn_net *net = e->net;
    if (s == e->job->root)
        return TC_OK;
    tc_status st;
    while (e->head[s] < e->log[s].len) {
        int best = -1;
        double bq = 0;
        for (int k = net->out_off[s]; k < net->out_off[s + 1]; k++) {
            int l = net->out_lk[k], d = net->dst[l];
            if (e->state[l] != L_READY)
                continue;
            /* rough time until the chunk moves on from d: its backlog, paced by this link's cost */
            int backlog = d == e->job->root ? 0 : e->log[d].len - e->head[d];
            double q = (double)(1 + backlog) * (double)net->cost[l];
            if (best < 0 || q < bq) {
                best = l;
                bq = q;
            }
        }
        if (best < 0)
            break;
        int c = log_at(e, s, e->head[s]);
        e->head[s]++;
        if ((st = start(e, best, c)))
            return st;
    }
    return TC_OK;
}

static int tev_less(const tev *a, const tev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->id < b->id;
}

static tc_status tev_push(eng *e, int64_t t, int kind, int id)
{
    return tev_push_c(e, t, kind, id, 0);
}

static tc_status tev_push_c(eng *e, int64_t t, int kind, int id, int c)
{
    tc_status st = tc_grow((void **)&e->tq, &e->tq_cap, e->tq_n + 1, sizeof *e->tq);
    if (st)
        return st;
    const tev x = {t, kind, id, c};
    int i = e->tq_n++;
    while (i > 0 && tev_less(&x, &e->tq[(i - 1) / 2])) {
        e->tq[i] = e->tq[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e->tq[i] = x;
    return TC_OK;
}

static tev tev_pop(eng *e)
{
    const tev top = e->tq[0], last = e->tq[--e->tq_n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= e->tq_n)
            break;
        if (c + 1 < e->tq_n && tev_less(&e->tq[c + 1], &e->tq[c]))
            c++;
        if (!tev_less(&e->tq[c], &last))
            break;
        e->tq[i] = e->tq[c];
        i = c;
    }
    if (e->tq_n)
        e->tq[i] = last;
    return top;
}

/* Chunk c is now at node d (an arrival or a release): d forwards it, out-links asleep for want of it wake. */
static tc_status now_holds(eng *e, int d, int c)
{
    const syn_net *net = e->net;
    tc_status st;
    mark_dirty(e, d);
    if ((st = log_append(e, d, c)))
        return st;
    for (int k = net->out_off[d]; k < net->out_off[d + 1]; k++) {
        int o = net->out_lk[k];
        if (e->state[o] == L_SLEEP && !claimed(e, net->dst[o], c)) {
            e->state[o] = L_READY;
            mark_dirty(e, net->dst[o]);
        }
    }
    return TC_OK;
}

/* Overlap: the free in-links of d that the other phase holds now, or before one chunk could pass, wait for
 * the end of that stretch (the gap after it is at least one chunk long). */
static tc_status block_in_links(eng *e, int d)
{
    const syn_net *net = e->net;
    tc_status st;
    for (int k = net->in_off[d]; k < net->in_off[d + 1]; k++) {
        const int l = net->in_lk[k];
        if (e->state[l] != L_READY)
            continue;
        const syn_cal *c = &e->job->block[l];
        int i = e->bcur[l];
        while (i < c->n && c->be[i] <= e->now)
            i++;
        e->bcur[l] = i;
        if (i < c->n && e->now + (net->hold ? net->hold[l] : net->cost[l]) > c->bs[i]) {
            e->state[l] = L_BLOCKED;
            e->busy[l] = c->be[i];
            if ((st = tev_push(e, c->be[i], TEV_UNBLOCK, l)))
                return st;
        }
    }
    return TC_OK;
}

static tc_status arrive_chunk(eng *e, int l, int c);

/* ------------------------------------------------------------------------------------------------ */
/* Switch trees: routed copies (synth_int.h)                                                         */

/* The trees (connected over links between tree vertices), ranked by (NPUs they reach, their costliest link,
 * first vertex): a server's tree before the network's.  e->comp per vertex, e->comp_rep per rank.  queue
 * and key: scratch of n and S x R ints. */
static tc_status tree_rank(eng *e, int *queue, int *key)
{
    const syn_net *net = e->net;
    const int n = e->n, R = e->R;
    int nc = 0;
    int64_t *top = malloc(((size_t)n + 1) * sizeof *top); /* per tree id: its costliest link */
    if (!top || !(e->comp = malloc(((size_t)n + 1) * sizeof *e->comp)) ||
        !(e->comp_rep = malloc(((size_t)n + 1) * sizeof *e->comp_rep))) {
        free(top);
        return TC_ERR_NOMEM;
    }
    for (int v = 0; v < n; v++)
        e->comp[v] = -1;
    for (int v = R; v < n; v++) { /* ids in order of first vertex */
        if (!e->tree_v[v] || e->comp[v] >= 0)
            continue;
        int qh = 0, qt = 0;
        e->comp[v] = nc;
        top[nc] = 0;
        queue[qt++] = v;
        while (qh < qt) {
            const int x = queue[qh++];
            for (int k = net->out_off[x]; k < net->out_off[x + 1]; k++) {
                const int y = net->dst[net->out_lk[k]];
                if (net->cost[net->out_lk[k]] > top[nc])
                    top[nc] = net->cost[net->out_lk[k]];
                if (y >= R && e->tree_v[y] && e->comp[y] < 0) {
                    e->comp[y] = nc;
                    queue[qt++] = y;
                }
            }
        }
        e->comp_rep[nc++] = v;
    }
    for (int i = 1; i < nc; i++) { /* by (NPU count, costliest link), stable: insertion */
        const int r = e->comp_rep[i], sz = e->dest_off[r - R + 1] - e->dest_off[r - R];
        const int64_t c = top[e->comp[r]];
        int j = i;
        for (; j > 0; j--) {
            const int q = e->comp_rep[j - 1], qs = e->dest_off[q - R + 1] - e->dest_off[q - R];
            if (qs < sz || (qs == sz && top[e->comp[q]] <= c))
                break;
            e->comp_rep[j] = q;
        }
        e->comp_rep[j] = r;
    }
    free(top);
    for (int i = 0; i < nc; i++) /* first-vertex id -> rank */
        key[e->comp[e->comp_rep[i]]] = i;
    for (int v = R; v < n; v++)
        if (e->comp[v] >= 0)
            e->comp[v] = key[e->comp[v]];
    return TC_OK;
}

/* Tree vertices, the next link from each toward each NPU it reaches (fewest hops, then the cheaper link,
 * then the lower id) and each one's destinations, farthest first.  Nothing when no link joins two switch
 * vertices: the engine then runs as it always did. */
static tc_status tree_setup(eng *e)
{
    const syn_net *net = e->net;
    const int n = e->n, R = e->R, S = n - R;
    int any = 0;
    for (int l = 0; l < e->m && !any; l++)
        any = net->src[l] >= R && net->dst[l] >= R;
    if (!any)
        return TC_OK;
    int *dist = malloc(((size_t)S * R + 1) * sizeof *dist), *queue = malloc(((size_t)n + 1) * sizeof *queue);
    e->tree_v = calloc((size_t)n + 1, 1);
    e->nh = malloc(((size_t)S * R + 1) * sizeof *e->nh);
    e->dest_off = calloc((size_t)S + 2, sizeof *e->dest_off);
    e->fl_copy = malloc(((size_t)e->m + 1) * sizeof *e->fl_copy);
    e->lq_head = malloc(((size_t)e->m + 1) * sizeof *e->lq_head);
    e->lq_tail = malloc(((size_t)e->m + 1) * sizeof *e->lq_tail);
    e->route_buf = malloc(((size_t)n + 1) * sizeof *e->route_buf);
    e->pair_fl = R <= TREE_PAIR_NPUS ? calloc((size_t)R * R + 1, 1) : NULL;
    e->lq_len = calloc((size_t)e->m + 1, sizeof *e->lq_len);
    tc_status st = TC_ERR_NOMEM;
    if (!dist || !queue || !e->tree_v || !e->nh || !e->dest_off || !e->fl_copy || !e->lq_head || !e->lq_tail ||
        !e->route_buf || (R <= TREE_PAIR_NPUS && !e->pair_fl) || !e->lq_len)
        goto done;
    for (int l = 0; l < e->m; l++) {
        e->fl_copy[l] = e->lq_head[l] = e->lq_tail[l] = -1;
        if (net->src[l] >= R && net->dst[l] >= R)
            e->tree_v[net->src[l]] = e->tree_v[net->dst[l]] = 1;
    }
    for (size_t i = 0; i < (size_t)S * R; i++)
        e->nh[i] = -1;
    for (int u = 0; u < R; u++) { /* breadth first from u, backward over tree vertices */
        int qh = 0, qt = 0;
        for (int k = net->in_off[u]; k < net->in_off[u + 1]; k++) {
            const int l = net->in_lk[k], x = net->src[l];
            if (x >= R && e->tree_v[x] && e->nh[(size_t)(x - R) * R + u] < 0) {
                e->nh[(size_t)(x - R) * R + u] = l;
                dist[(size_t)(x - R) * R + u] = 1;
                queue[qt++] = x;
            }
        }
        while (qh < qt) {
            const int x = queue[qh++];
            for (int k = net->in_off[x]; k < net->in_off[x + 1]; k++) {
                const int l = net->in_lk[k], y = net->src[l];
                if (y >= R && e->tree_v[y] && e->nh[(size_t)(y - R) * R + u] < 0) {
                    e->nh[(size_t)(y - R) * R + u] = l;
                    dist[(size_t)(y - R) * R + u] = dist[(size_t)(x - R) * R + u] + 1;
                    queue[qt++] = y;
                }
            }
        }
    }
    for (int w = 0; w < S; w++)
        for (int u = 0; u < R; u++)
            e->dest_off[w + 1] += e->nh[(size_t)w * R + u] >= 0;
    for (int w = 0; w < S; w++)
        e->dest_off[w + 1] += e->dest_off[w];
    if (!(e->dests = malloc(((size_t)e->dest_off[S] + 1) * sizeof *e->dests)))
        goto done;
    for (int w = 0; w < S; w++) {
        int *d = e->dests + e->dest_off[w], nd = 0;
        for (int u = 0; u < R; u++) {
            if (e->nh[(size_t)w * R + u] < 0)
                continue;
            int j = nd++; /* insertion by (distance descending, id) */
            while (j > 0 && dist[(size_t)w * R + d[j - 1]] < dist[(size_t)w * R + u]) {
                d[j] = d[j - 1];
                j--;
            }
            d[j] = u;
        }
    }
    for (int l = 0; l < e->m; l++)
        if (net->src[l] >= R && e->tree_v[net->src[l]] && e->state[l] != L_DEAD)
            e->state[l] = L_ROUTED; /* moved by the copies' routes, never matched */
    if ((st = tree_rank(e, queue, dist)))
        goto done;
    st = TC_OK;
done:
    free(dist);
    free(queue);
    return st;
}

/* NPU u could have c other than through tree `rank`: an NPU in-neighbour, or an NPU on a port of a switch
 * vertex that is not a tree vertex, holds or receives it, or an NPU of a lower-ranked tree u hangs from
 * does (a server's PCIe tree before the network's: the ranks order the trees, so two trees never each
 * leave u to the other). */
static int tree_near(const eng *e, int u, int c, int rank)
{
    const syn_net *net = e->net;
    for (int k = net->in_off[u]; k < net->in_off[u + 1]; k++) {
        const int v = net->src[net->in_lk[k]];
        if (v < 0)
            continue;
        if (v < e->R ? claimed(e, v, c) : !e->tree_v[v] && near_switch(e, v, c))
            return 1;
        if (v >= e->R && e->tree_v[v] && e->comp[v] < rank) {
            const int r = e->comp_rep[e->comp[v]] - e->R;
            for (int i = e->dest_off[r]; i < e->dest_off[r + 1]; i++)
                if (e->dests[i] != u && claimed(e, e->dests[i], c))
                    return 1;
        }
    }
    return 0;
}

/* When a copy sent now over link l (into a tree vertex) would reach NPU u: stored and forwarded along its
 * path, each link free after its current chunk and every copy whose route still has it ahead. */
static int64_t tree_eta(const eng *e, int l, int u)
{
    const syn_net *net = e->net;
    int64_t t = e->now + net->cost[l];
    for (int y = net->dst[l]; y != u;) {
        const int k = e->nh[(size_t)(y - e->R) * e->R + u];
        int64_t f = (e->state[k] == L_BUSY && e->busy[k] > e->now ? e->busy[k] : e->now) +
                    (int64_t)e->lq_len[k] * net->cost[k];
        t = (t > f ? t : f) + net->cost[k];
        y = net->dst[k];
    }
    return t;
}

/* Where chunk c goes when NPU s sends it over link l into tree vertex w: of w's destinations that lack it
 * and could not have it from a neighbour outside the trees, -1 when none (never again).  room == 0: the
 * first such (farthest first); room != 0: of those with fewer than TREE_PAIR_MAX copies from s in flight,
 * the one it would reach first (tree_eta; the farther, then the lower id, on a tie), -2 when the pairs
 * are all full (later, maybe). */
static int tree_dest(const eng *e, int l, int w, int s, int c, int room)
{
    const int *d = e->dests + e->dest_off[w - e->R], nd = e->dest_off[w - e->R + 1] - e->dest_off[w - e->R];
    int full = 0, best = -1;
    int64_t bt = INT64_MAX;
    for (int i = 0; i < nd; i++)
        if (d[i] != s && !claimed(e, d[i], c) && !tree_near(e, d[i], c, e->comp[w])) {
            if (!room)
                return d[i];
            if (e->pair_fl && e->pair_fl[(size_t)s * e->R + d[i]] >= TREE_PAIR_MAX) {
                full = 1;
                continue;
            }
            const int64_t t = tree_eta(e, l, d[i]);
            if (t < bt) {
                bt = t;
                best = d[i];
            }
        }
    return best >= 0 ? best : full ? -2 : -1;
}

/* Routed copy k takes link l (free now). */
static tc_status tree_hop(eng *e, int l, int k)
{
    if (l != e->cp[k].entry)
        e->lq_len[l]--;
    e->fl_copy[l] = k;
    return start(e, l, e->cp[k].chunk);
}

/* SPREAD at tree vertex w: each free link from an NPU takes the first chunk of the NPU's list that some
 * destination of w wants (tree_dest; a chunk no destination wants never will again, so the cursor passes
 * it) and the copy is routed to that destination, which claims it now. */
static tc_status match_tree(eng *e, int w)
{
    const syn_net *net = e->net;
    tc_status st;
    for (int k = net->in_off[w]; k < net->in_off[w + 1]; k++) {
        const int l = net->in_lk[k], s = net->src[l];
        if (e->state[l] != L_READY || s >= e->R)
            continue;
        int cur = e->cursor[l], u = -1, c = -1;
        const int len = e->log[s].len;
        while (cur < len && tree_dest(e, l, w, s, log_at(e, s, cur), 0) < 0)
            cur++;
        e->cursor[l] = cur;
        for (int p = cur; p < len && p < cur + BEST_SCAN && u < 0; p++)
            u = tree_dest(e, l, w, s, c = log_at(e, s, p), 1);
        if (u < 0) { /* nothing, or only copies to destinations full of them: woken by an arrival */
            e->state[l] = L_SLEEP;
            continue;
        }
        if (e->n_cp == e->cap_cp &&
            (st = tc_grow((void **)&e->cp, &e->cap_cp, e->n_cp + 1, sizeof *e->cp)))
            return st;
        e->cp[e->n_cp] = (struct rcopy){c, s, u, l, e->round, -1, e->now};
        if (e->pair_fl)
            e->pair_fl[(size_t)s * e->R + u]++;
        for (int y = w; y != u;) { /* the links ahead of it */
            const int k2 = e->nh[(size_t)(y - e->R) * e->R + u];
            e->lq_len[k2]++;
            y = net->dst[k2];
        }
        set_claim(e, u, c);
        e->cnt[c]++;
        e->remaining--;
        if ((st = tree_hop(e, l, e->n_cp++)))
            return st;
    }
    return TC_OK;
}

/* The routed copy on link l arrives: at its destination it is one transfer from its source with the route
 * it took; elsewhere it waits for the next link of its route.  A link out of a tree vertex takes the next
 * copy of its queue; a link from an NPU is matched again. */
static tc_status tree_arrive(eng *e, int l)
{
    const syn_net *net = e->net;
    const int k = e->fl_copy[l], v = net->dst[l];
    tc_status st;
    e->fl_copy[l] = -1;
    e->inflight--;
    if (e->tree_v[net->src[l]]) {
        const int q = e->lq_head[l];
        e->state[l] = L_ROUTED;
        if (q >= 0) {
            if ((e->lq_head[l] = e->cp[q].next) < 0)
                e->lq_tail[l] = -1;
            if ((st = tree_hop(e, l, q)))
                return st;
        }
    } else {
        e->state[l] = L_READY;
        mark_dirty(e, v);
    }
    const struct rcopy x = e->cp[k];
    if (v == x.dst) {
        e->last_end = e->now;
        if (e->pair_fl)
            e->pair_fl[(size_t)x.src * e->R + x.dst]--;
        if (e->state[x.entry] == L_SLEEP) { /* it may have waited for this pair */
            e->state[x.entry] = L_READY;
            mark_dirty(e, net->dst[x.entry]);
        }
        if (e->job->out)
            return TC_ERR_INTERNAL; /* the threaded phases run without switch vertices */
        if (e->job->rec) {
            int n = 0;
            e->route_buf[n++] = x.entry;
            for (int y = net->dst[x.entry]; y != x.dst && n <= e->n; y = net->dst[e->route_buf[n - 1]])
                e->route_buf[n++] = e->nh[(size_t)(y - e->R) * e->R + x.dst];
            if ((st = tc_sched_add(e->job->rec, x.src, x.dst, x.chunk, TC_OP_COPY, -1, x.step, (double)x.t0,
                                   (double)e->now, e->route_buf, n)))
                return st;
        }
        return now_holds(e, v, x.chunk);
    }
    const int nl = e->nh[(size_t)(v - e->R) * e->R + x.dst];
    if (e->state[nl] == L_ROUTED)
        return tree_hop(e, nl, k);
    e->cp[k].next = -1;
    if (e->lq_tail[nl] >= 0)
        e->cp[e->lq_tail[nl]].next = k;
    else
        e->lq_head[nl] = k;
    e->lq_tail[nl] = k;
    return TC_OK;
}

static tc_status arrive(eng *e, int l)
{
    if (e->fl_copy && e->fl_copy[l] >= 0) /* a routed copy through a switch tree (tacos link model only) */
        return tree_arrive(e, l);
    e->state[l] = L_READY;
    return arrive_chunk(e, l, e->fl_chunk[l]);
}

/* Chunk c arrives over link l (the link's state is the caller's: te-ccl frees links on their own). */
static tc_status arrive_chunk(eng *e, int l, int c)
{
    const syn_net *net = e->net;
    int d = net->dst[l], s = net->src[l];
    tc_status st;
    e->inflight--;
    if (d < e->R) /* an arrival at a switch ends nothing */
        e->last_end = e->now;
    if (e->job->mode == SYN_RELAY) {
        mark_dirty(e, s);
        if (d == e->job->root) {
            e->remaining--;
            return TC_OK;
        }
        if ((st = log_append(e, d, c)))
            return st;
        mark_dirty(e, d);
        return TC_OK;
    }
    return now_holds(e, d, c);
}

/* ------------------------------------------------------------------------------------------------ */
/* Threads                                                                                           */

/*
 * Large FIFO-mode SPREAD runs on NPUs only (no switch vertex, no overlap, the tacos link model) split the
 * two heavy parts of each event time over up to job->threads threads, with the same result as one:
 *   - matching: for a dirty node d, match_fifo reads its sources' lists (which only arrivals append to) and
 *     writes d's claim bits and the cursors and states of d's in-links, nothing another node's matching
 *     reads.  The threads match the dirty nodes part by part (par_match) and note the links each matched
 *     (pick, npick; the chunk in fl_chunk); then one thread starts them in the original dirty order
 *     (par_match_round: the completion FIFOs, counters and recorded transfers), as match_fifo would.
 *   - arrivals: chunk c arriving at d appends to d's list and wakes d's sleeping out-links whose
 *     destination has not claimed c; nothing claims during arrivals, so the threads take the arrivals part
 *     by part (the part of their node, in FIFO order: par_arrive), noting whom each woke (wake), and one
 *     thread then marks the nodes dirty in the original arrival order (the order of the next matching).
 * A part is a range of 512-node blocks (a block is one cache line of a chunk-major claim row), so two
 * threads never write the same word of the claim bitset.  The parts (up to PAR_PARTS) go to whichever thread asks
 * first, the caller's included: on a busy machine a thread not scheduled yet costs nothing, and which
 * thread took a part never shows in the result.  Phases with fewer than PAR_MIN_WORK nodes or arrivals
 * run on the calling thread.  The only state two threads share while working is an out-link's state byte
 * (a node's thread may wake it while its destination's thread marks it arrived: it was busy then, so
 * neither sees it asleep), read and written atomically.
 */
#define PAR_MAX 8
#define PAR_PARTS 16
#define PAR_BLOCK_LOG 9
#define PAR_MIN_WORK 256
#define PAR_BATCH 32 /* dirty nodes whose memory is asked for at once */

enum { PJ_MATCH = 0, PJ_ARRIVE = 1 };

typedef struct par {
    eng *e;
    int nth;               /* threads, the caller's included */
    int nparts;
    int part_v0[PAR_PARTS + 1];  /* part p: nodes part_v0[p] .. part_v0[p + 1] - 1 */
    int arr_off[PAR_PARTS + 1];  /* arrivals of part p: e->arr_idx[arr_off[p] .. arr_off[p + 1]) */
    pthread_t th[PAR_MAX];
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;          /* bumped for each job (under mu) */
    int job, quit;
    uint64_t next;         /* atomic: gen << 32 | the next part to take */
    int completed;         /* atomic: parts of this job done */
    tc_status st[PAR_PARTS];
} par;

/* Ask for the memory match_node will read for nodes nodes[0 .. nn): first the list entries at the cursors
 * of their free in-links, then the claim bits of those entries (independent loads the processor overlaps,
 * where the match itself waits for each in turn). */
static void match_prefetch(const eng *e, const int *nodes, int nn)
{
    const syn_net *net = e->net;
    for (int i = 0; i < nn; i++)
        for (int j = net->in_off[nodes[i]]; j < net->in_off[nodes[i] + 1]; j++) {
            const int l = net->in_lk[j];
            const syn_log *L = &e->log[net->src[l]];
            if (e->state[l] == L_READY && e->cursor[l] < L->len)
                __builtin_prefetch((const char *)L->buf + (size_t)(e->cursor[l] - L->base) * e->esz);
        }
    for (int i = 0; i < nn; i++) {
        const int d = nodes[i];
        for (int j = net->in_off[d]; j < net->in_off[d + 1]; j++) {
            const int l = net->in_lk[j], s = net->src[l], cur = e->cursor[l], len = e->log[s].len;
            if (e->state[l] != L_READY)
                continue;
            for (int p = cur; p < len && p < cur + 2; p++)
                __builtin_prefetch(&e->claim[claim_at(e, d, log_at(e, s, p))]);
        }
    }
}

/* match_fifo at node d, the starts left out (par_match_round makes them). */
static void match_node(eng *e, int d)
{
    const syn_net *net = e->net;
    int np = 0, *pick = e->pick + net->in_off[d];
    for (int j = net->in_off[d]; j < net->in_off[d + 1]; j++) {
        const int l = net->in_lk[j];
        if (e->state[l] != L_READY)
            continue;
        if (!skip_claimed(e, l)) {
            e->state[l] = L_SLEEP;
            continue;
        }
        const int c = log_at(e, net->src[l], e->cursor[l]);
        set_claim(e, d, c);
        e->state[l] = L_BUSY; /* start(), the part that is l's own */
        e->fl_chunk[l] = c;
        e->busy[l] = e->now + net->cost[l];
        pick[np++] = l;
    }
    e->npick[d] = np;
}

/* Match the dirty nodes of part p in id order (neighbours one after the other: their claim bits and
 * sources' lists are close), PAR_BATCH at a time. */
static tc_status par_match(eng *e, int p)
{
    const par *P = e->par;
    int nodes[PAR_BATCH];
    for (int v = P->part_v0[p], v1 = P->part_v0[p + 1]; v < v1;) {
        int nn = 0;
        for (; v < v1 && nn < PAR_BATCH; v++)
            if (e->is_dirty[v])
                nodes[nn++] = v;
        match_prefetch(e, nodes, nn);
        for (int i = 0; i < nn; i++)
            match_node(e, nodes[i]);
    }
    return TC_OK;
}

/* The arrivals at the nodes of part p, in FIFO order: now_holds without the dirty marks. */
static tc_status par_arrive(eng *e, int p)
{
    const syn_net *net = e->net;
    const par *P = e->par;
    tc_status st;
    for (int a = P->arr_off[p]; a < P->arr_off[p + 1]; a++) {
        const int i = e->arr_idx[a], l = e->arr[i], d = net->dst[l];
        __atomic_store_n(&e->state[l], (unsigned char)L_READY, __ATOMIC_RELAXED);
        const int c = e->fl_chunk[l];
        if ((st = log_append(e, d, c)))
            return st;
        uint64_t w = 0;
        for (int j = net->out_off[d]; j < net->out_off[d + 1]; j++) {
            const int o = net->out_lk[j];
            if (__atomic_load_n(&e->state[o], __ATOMIC_RELAXED) == L_SLEEP && !claimed(e, net->dst[o], c)) {
                __atomic_store_n(&e->state[o], (unsigned char)L_READY, __ATOMIC_RELAXED);
                w |= (uint64_t)1 << (j - net->out_off[d]);
            }
        }
        e->wake[i] = w;
    }
    return TC_OK;
}

/* Take parts of job `job` of generation `gen` while there are any; 0 once none is left. */
static void par_take(par *P, unsigned gen, int job)
{
    for (;;) {
        uint64_t v = __atomic_load_n(&P->next, __ATOMIC_ACQUIRE);
        if ((unsigned)(v >> 32) != gen || (int)(v & 0xffffffffu) >= P->nparts)
            return;
        if (!__atomic_compare_exchange_n(&P->next, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        const int p = (int)(v & 0xffffffffu);
        P->st[p] = job == PJ_MATCH ? par_match(P->e, p) : par_arrive(P->e, p);
        if (__atomic_add_fetch(&P->completed, 1, __ATOMIC_ACQ_REL) == P->nparts) {
            pthread_mutex_lock(&P->mu);
            pthread_cond_signal(&P->done);
            pthread_mutex_unlock(&P->mu);
        }
    }
}

static void *par_worker(void *arg)
{
    par *P = arg;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&P->mu);
        while (P->gen == seen && !P->quit)
            pthread_cond_wait(&P->go, &P->mu);
        if (P->quit) {
            pthread_mutex_unlock(&P->mu);
            return NULL;
        }
        seen = P->gen;
        const int job = P->job;
        pthread_mutex_unlock(&P->mu);
        par_take(P, seen, job);
    }
}

/* Run `job` over every part on the threads, the caller's included, and wait for all parts. */
static tc_status par_run(eng *e, int job)
{
    par *P = e->par;
    pthread_mutex_lock(&P->mu);
    const unsigned gen = ++P->gen;
    P->job = job;
    __atomic_store_n(&P->completed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P->next, (uint64_t)gen << 32, __ATOMIC_RELEASE);
    if (P->nth > 1)
        pthread_cond_broadcast(&P->go);
    pthread_mutex_unlock(&P->mu);
    par_take(P, gen, job);
    pthread_mutex_lock(&P->mu);
    while (__atomic_load_n(&P->completed, __ATOMIC_ACQUIRE) < P->nparts)
        pthread_cond_wait(&P->done, &P->mu);
    pthread_mutex_unlock(&P->mu);
    for (int p = 0; p < P->nparts; p++)
        if (P->st[p])
            return P->st[p];
    return TC_OK;
}

/* This event time's matching of the dirty nodes, split over the threads (see above). */
static tc_status par_match_round(eng *e)
{
    const syn_net *net = e->net;
    tc_status st = par_run(e, PJ_MATCH);
    if (st)
        return st;
    for (int i = 0; i < e->n_dirty; i++) { /* claim_and_start in match_fifo's order, the claim made */
        const int d = e->dirty[i];
        const int *pick = e->pick + net->in_off[d];
        e->is_dirty[d] = 0;
        for (int j = 0; j < e->npick[d]; j++) {
            const int l = pick[j], c = e->fl_chunk[l];
            e->cnt[c]++;
            e->remaining--;
            if ((st = start_rest(e, l, c)))
                return st;
        }
    }
    return TC_OK;
}

/* This event time's arrivals (e->arr), split over the threads (see above); arrive() for each, in order. */
static tc_status par_arrive_round(eng *e)
{
    const syn_net *net = e->net;
    par *P = e->par;
    int *off = P->arr_off;
    memset(off, 0, sizeof P->arr_off);
    for (int i = 0; i < e->n_arr; i++) /* the arrivals of each part, in FIFO order */
        off[e->blk_part[net->dst[e->arr[i]] >> PAR_BLOCK_LOG] + 1]++;
    for (int p = 0; p < P->nparts; p++)
        off[p + 1] += off[p];
    int fill[PAR_PARTS];
    memcpy(fill, off, sizeof fill);
    for (int i = 0; i < e->n_arr; i++)
        e->arr_idx[fill[e->blk_part[net->dst[e->arr[i]] >> PAR_BLOCK_LOG]]++] = i;
    tc_status st = par_run(e, PJ_ARRIVE);
    if (st)
        return st;
    for (int i = 0; i < e->n_arr; i++) {
        const int d = net->dst[e->arr[i]];
        e->inflight--;
        e->last_end = e->now;
        mark_dirty(e, d);
        for (uint64_t w = e->wake[i]; w; w &= w - 1)
            mark_dirty(e, net->dst[net->out_lk[net->out_off[d] + __builtin_ctzll(w)]]);
    }
    return TC_OK;
}

/* Threads for this run (see above); when one cannot start, fewer (the same result). */
static tc_status par_create(eng *e, int threads)
{
    if (threads > PAR_MAX)
        threads = PAR_MAX;
    const int nb = (e->n + (1 << PAR_BLOCK_LOG) - 1) >> PAR_BLOCK_LOG;
    par *P = calloc(1, sizeof *P);
    e->pick = malloc(((size_t)e->m + 1) * sizeof *e->pick);
    e->npick = calloc((size_t)e->n + 1, sizeof *e->npick);
    e->arr = malloc(((size_t)e->m + 1) * sizeof *e->arr);
    e->arr_idx = malloc(((size_t)e->m + 1) * sizeof *e->arr_idx);
    e->wake = malloc(((size_t)e->m + 1) * sizeof *e->wake);
    e->blk_part = malloc(((size_t)nb + 1) * sizeof *e->blk_part);
    if (!P || !e->pick || !e->npick || !e->arr || !e->arr_idx || !e->wake || !e->blk_part) {
        free(P);
        return TC_ERR_NOMEM;
    }
    P->e = e;
    P->nth = 1;
    P->nparts = nb < PAR_PARTS ? nb : PAR_PARTS;
    for (int p = 0; p < P->nparts; p++) { /* blocks nb * p / nparts .. */
        const int b0 = (int)((int64_t)nb * p / P->nparts), b1 = (int)((int64_t)nb * (p + 1) / P->nparts);
        P->part_v0[p] = b0 << PAR_BLOCK_LOG;
        for (int b = b0; b < b1; b++)
            e->blk_part[b] = p;
    }
    P->part_v0[P->nparts] = e->n;
    pthread_mutex_init(&P->mu, NULL);
    pthread_cond_init(&P->go, NULL);
    pthread_cond_init(&P->done, NULL);
    e->par = P;
    for (int k = 1; k < threads; k++) {
        if (pthread_create(&P->th[k], NULL, par_worker, P))
            break;
        P->nth++;
    }
    return TC_OK;
}

static void par_free(eng *e)
{
    par *P = e->par;
    if (!P)
        return;
    pthread_mutex_lock(&P->mu);
    P->quit = 1;
    pthread_cond_broadcast(&P->go);
    pthread_mutex_unlock(&P->mu);
    for (int k = 1; k < P->nth; k++)
        pthread_join(P->th[k], NULL);
    pthread_mutex_destroy(&P->mu);
    pthread_cond_destroy(&P->go);
    pthread_cond_destroy(&P->done);
    free(P);
    e->par = NULL;
}

void tc_synth_progress(const syn_job *job, int round, double done, double t0, double *last_print)
{
    if (!job->progress || !job->ctx || !job->ctx->progress)
        return;
    double now = tc_now();
    if (now - t0 < 2.0 || now - *last_print < 0.5 || !isatty(2))
        return;
    *last_print = now;
    /* the only output outside main(): a transient progress line on a terminal (see synth.h) */
    fprintf(stderr, "\rtacos: %s%sround %d, %.1f%% of postconditions, %.0f s   ", job->what ? job->what : "",
            job->what && *job->what ? ", " : "", round, 100.0 * done, now - t0);
    fflush(stderr);
}

static void progress(eng *e)
{
    const syn_job *job = e->job;
    double total = job->mode == SYN_RELAY ? (double)(e->R - 1) * job->K : (double)e->R * e->C;
    tc_synth_progress(job, e->round, 1.0 - (double)e->remaining / (total > 0 ? total : 1), e->t0_wall,
                      &e->last_print);
}

static void eng_free(eng *e)
{
    par_free(e);
    free(e->pick);
    free(e->npick);
    free(e->arr);
    free(e->arr_idx);
    free(e->blk_part);
    free(e->wake);
    if (e->log)
        for (int v = 0; v < e->n; v++)
            free(e->log[v].buf);
    free(e->log);
    free(e->claim);
    free(e->cnt);
    free(e->cursor);
    free(e->head);
    free(e->dist);
    free(e->state);
    free(e->fl_chunk);
    free(e->q_link);
    free(e->q_off);
    free(e->q_head);
    free(e->q_len);
    free(e->q_time);
    free(e->dirty);
    free(e->is_dirty);
    free(e->cand);
    free(e->calt);
    free(e->busy);
    free(e->het);
    free(e->ncand);
    free(e->rlink);
    free(e->order);
    free(e->used);
    free(e->defer_until);
    free(e->parked);
    free(e->poll_at);
    free(e->poll_step);
    free(e->park_epoch);
    free(e->park_idle);
    free(e->pairs);
    free(e->tq);
    free(e->bcur);
    free(e->tok);
    free(e->tree_v);
    free(e->nh);
    free(e->dests);
    free(e->dest_off);
    free(e->fl_copy);
    free(e->lq_head);
    free(e->lq_tail);
    free(e->lq_len);
    free(e->cp);
    free(e->route_buf);
    free(e->pair_fl);
    free(e->comp);
    free(e->comp_rep);
}

/* RELAY: time-distance of every node to the root (Dijkstra over link costs, toward the root); a link is
 * usable when it strictly decreases that distance, so every chunk moves closer on each hop. */
static tc_status relay_setup(eng *e)
{
    const syn_net *net = e->net;
    tc_status st = tc_synth_dist_to(net, e->job->root, e->dist);
    if (st)
        return st;
    for (int v = 0; v < e->n; v++) {
        if (e->dist[v] == INT64_MAX)
            e->dist[v] = -1;
        else if (e->dist[v] > SYN_TIME_MAX_PS)
            return TC_ERR_LIMIT; /* that chunk alone would take longer than the clock can count */
    }
    for (int l = 0; l < e->m; l++) {
        int s = net->src[l], d = net->dst[l];
        if (s < 0 || e->dist[s] < 0 || !(e->dist[d] < e->dist[s]))
            e->state[l] = L_DEAD;
    }
    return TC_OK;
}

/* best mode matches FIFO from this many node x chunk pairs */
static int64_t fifo_above(const syn_job *job)
{
    return job->fifo_above > 0 ? job->fifo_above : BEST_FIFO_ABOVE;
}

int tc_synth_ten_fifo(const syn_net *net, const syn_job *job)
{
    return job->mode == SYN_SPREAD && job->match != TC_MATCH_RANDOM &&
           (int64_t)net->n * job->n_chunks >= fifo_above(job);
}

tc_status tc_synth_ten_run(const syn_net *net, const syn_job *job, syn_result *res)
{
    if (!job->events && tc_synth_rounds_ok(net, job))
        return tc_synth_rounds_run(net, job, res);
    eng E, *e = &E;
    memset(e, 0, sizeof *e);
    res->last_check = 0;
    e->net = net;
    e->job = job;
    e->n = net->n;
    e->m = net->m;
    e->C = job->n_chunks;
    e->W = CLAIM_NODE_MAJOR ? ((size_t)e->C + 63) / 64 : ((size_t)net->n + 63) / 64;
    e->R = job->n_ranks > 0 && job->n_ranks <= net->n ? job->n_ranks : net->n;
    e->esz = e->C <= 65536 && net->n == e->R ? 2 : 4; /* switch lists mark sent copies with -1 */
    const int n = e->n, m = e->m, G = net->n_groups;
    tc_status st = TC_ERR_NOMEM;
    tc_rng_seed(&e->rng, job->seed);
    for (int v = 0; v < n; v++) {
        int din = net->in_off[v + 1] - net->in_off[v], dout = net->out_off[v + 1] - net->out_off[v];
        if (din > e->max_deg)
            e->max_deg = din;
        if (dout > e->max_deg)
            e->max_deg = dout;
    }
    size_t md = (size_t)e->max_deg + 1;
    e->log = calloc((size_t)n, sizeof *e->log);
    e->state = calloc((size_t)m + 1, 1);
    e->fl_chunk = calloc((size_t)m + 1, sizeof *e->fl_chunk);
    e->q_link = malloc(((size_t)m + 1) * sizeof *e->q_link);
    e->q_time = malloc(((size_t)m + 1) * sizeof *e->q_time);
    e->q_off = calloc((size_t)G + 1, sizeof *e->q_off);
    e->q_head = calloc((size_t)G + 1, sizeof *e->q_head);
    e->q_len = calloc((size_t)G + 1, sizeof *e->q_len);
    e->dirty = malloc(((size_t)n + 1) * sizeof *e->dirty);
    e->is_dirty = calloc((size_t)n + 1, 1);
    e->cand = malloc(md * BEST_WINDOW * sizeof *e->cand);
    e->calt = malloc(md * BEST_WINDOW * sizeof *e->calt);
    e->busy = calloc((size_t)m + 1, sizeof *e->busy);
    e->het = calloc((size_t)n + 1, 1);
    e->ncand = malloc(md * sizeof *e->ncand);
    e->rlink = malloc(md * sizeof *e->rlink);
    e->order = malloc(md * sizeof *e->order);
    e->used = malloc(md);
    e->defer_until = malloc(md * sizeof *e->defer_until);
    if (net->hold) {
        e->parked = malloc(((size_t)m + 1) * sizeof *e->parked);
        e->poll_at = malloc(((size_t)m + 1) * sizeof *e->poll_at);
        e->poll_step = malloc(((size_t)m + 1) * sizeof *e->poll_step);
        e->park_epoch = malloc(((size_t)m + 1) * sizeof *e->park_epoch);
        e->park_idle = calloc((size_t)m + 1, 1);
        if (!e->parked || !e->poll_at || !e->poll_step || !e->park_epoch || !e->park_idle)
            goto fail;
        for (int l = 0; l < m; l++)
            e->park_epoch[l] = -1;
    }
    if (!e->log || !e->state || !e->fl_chunk || !e->q_link || !e->q_time || !e->q_off || !e->q_head ||
        !e->q_len || !e->dirty || !e->is_dirty || !e->cand || !e->calt || !e->busy || !e->het || !e->ncand ||
        !e->rlink || !e->order || !e->used || !e->defer_until)
        goto fail;
    for (int v = 0; v < n; v++)
        for (int k = net->in_off[v] + 1; k < net->in_off[v + 1]; k++)
            if (net->cost[net->in_lk[k]] != net->cost[net->in_lk[net->in_off[v]]])
                e->het[v] = 1;
    for (int g = 1; g <= G; g++)
        e->q_off[g] = e->q_off[g - 1] + net->group_size[g - 1];
    for (int l = 0; l < m; l++)
        if (net->src[l] < 0)
            e->state[l] = L_DEAD;

    if (job->mode == SYN_RELAY) {
        e->head = calloc((size_t)n, sizeof *e->head);
        e->dist = malloc(((size_t)n + 1) * sizeof *e->dist);
        if (!e->head || !e->dist)
            goto fail;
        if ((st = relay_setup(e)))
            goto fail;
        st = TC_ERR_NOMEM;
        for (int c = 0; c < e->C; c++) {
            int owner = c / job->K;
            if (owner != job->root && log_append(e, owner, c))
                goto fail;
        }
        e->remaining = (int64_t)(e->R - 1) * job->K;
    } else {
        e->cursor = calloc((size_t)m + 1, sizeof *e->cursor);
        e->cnt = calloc((size_t)e->C + 1, sizeof *e->cnt);
        e->claim = tc_synth_claim_alloc((CLAIM_NODE_MAJOR ? (size_t)n : (size_t)e->C) * e->W + 1);
        if (!e->cursor || !e->cnt || !e->claim)
            goto fail;
        if (n > e->R && !(e->tok = calloc((size_t)(n - e->R) * (size_t)e->C + 1, sizeof *e->tok)))
            goto fail;
        e->remaining = (int64_t)e->R * e->C;
        for (int c = 0; c < e->C; c++) {
            int owner = job->root >= 0 ? job->root : c / job->K;
            set_claim(e, owner, c);
            e->cnt[c] = 1;
            e->remaining--;
            if (job->release && job->release[c] > 0) { /* there from its release on */
                if (tev_push(e, job->release[c], TEV_RELEASE, c))
                    goto fail;
            } else if (log_append(e, owner, c))
                goto fail;
        }
        if (job->block && !(e->bcur = calloc((size_t)m + 1, sizeof *e->bcur)))
            goto fail;
        if ((st = tree_setup(e)))
            goto fail;
        st = TC_ERR_NOMEM;
    }
    for (int v = 0; v < n; v++)
        mark_dirty(e, v);
    e->t0_wall = tc_now();
    const int fifo = (int64_t)n * e->C >= fifo_above(job);
    if (job->threads > 0 && fifo && job->mode == SYN_SPREAD && n == e->R && job->match != TC_MATCH_RANDOM &&
        !job->block && !job->release && !net->hold && e->max_deg <= 64 && (st = par_create(e, job->threads)))
        goto fail;
    int last_round = -1;
    unsigned iter = 0;
    for (;;) {
        /* matching at e->now */
        if (e->remaining > 0) {
            e->round_started = 0;
            if (e->par && e->n_dirty >= PAR_MIN_WORK) {
                if ((st = par_match_round(e)))
                    goto fail;
                e->n_dirty = 0; /* all matched */
            }
            for (int i = 0; i < e->n_dirty; i++) {
                int v = e->dirty[i];
                e->is_dirty[v] = 0;
                if (job->block && (st = block_in_links(e, v)))
                    goto fail;
                if (job->mode == SYN_RELAY)
                    st = match_relay(e, v);
                else if (v >= e->R)
                    st = e->tree_v && e->tree_v[v] ? match_tree(e, v) : match_switch(e, v);
                else if (n > e->R && (st = match_from_switches(e, v)))
                    goto fail;
                else if (job->match == TC_MATCH_RANDOM)
                    st = match_random(e, v);
                else if (fifo)
                    st = match_fifo(e, v);
                else
                    st = match_best(e, v, mix64(job->seed ^ ((uint64_t)e->round << 20) ^ (uint64_t)v));
                if (st)
                    goto fail;
            }
            if (e->round_started) {
                last_round = e->round;
                e->round++;
            }
        } else {
            for (int i = 0; i < e->n_dirty; i++)
                e->is_dirty[e->dirty[i]] = 0;
        }
        e->n_dirty = 0;
        /* releases and unblockings still matter; te-ccl arrivals always */
        int pend = e->tq_n > 0 && (e->remaining > 0 || (net->hold && e->inflight > 0));
        if (!e->inflight && !pend && !e->n_parked)
            break;
        /* next event time: the earliest FIFO head or timed event */
        int64_t t = pend ? e->tq[0].t : INT64_MAX;
        for (int g = 0; g < G; g++)
            if (e->q_len[g] && e->q_time[e->q_off[g] + e->q_head[g]] < t)
                t = e->q_time[e->q_off[g] + e->q_head[g]];
        const int64_t ev = t;
        if (e->n_parked) { /* te-ccl: or a parked link's poll */
            if (!job->poll_all)
                skip_idle_polls(e, t);
            int stalled = ev == INT64_MAX;
            for (int i = 0; i < e->n_parked; i++) {
                const int l = e->parked[i];
                if (e->poll_at[l] < t)
                    t = e->poll_at[l];
                stalled &= e->park_idle[l] && e->park_epoch[l] == e->changes;
            }
            if (stalled) { /* no event left and every parked link finds nothing new: polling would go on
                              until the clock's end */
                st = TC_ERR_INTERNAL;
                goto fail;
            }
            if ((st = wake_parked(e, t)))
                goto fail;
            pend = e->tq_n > 0;
        }
        if (t == ev)
            e->changes++; /* an event: the state may change */
        if (t > SYN_TIME_MAX_PS) {
            st = TC_ERR_LIMIT;
            goto fail;
        }
        e->now = t;
        e->n_arr = 0;
        for (int g = 0; g < G; g++) {
            while (e->q_len[g] && e->q_time[e->q_off[g] + e->q_head[g]] == t) {
                int l = e->q_link[e->q_off[g] + e->q_head[g]];
                e->q_head[g] = (e->q_head[g] + 1) % net->group_size[g];
                e->q_len[g]--;
                if (e->par)
                    e->arr[e->n_arr++] = l; /* all of this time's first, then split over the threads */
                else if ((st = arrive(e, l)))
                    goto fail;
            }
        }
        st = TC_OK;
        if (e->n_arr >= PAR_MIN_WORK)
            st = par_arrive_round(e);
        else
            for (int i = 0; i < e->n_arr && !st; i++)
                st = arrive(e, e->arr[i]);
        if (st)
            goto fail;
        while (pend && e->tq_n && e->tq[0].t == t) {
            const tev x = tev_pop(e);
            if (x.kind == TEV_RELEASE)
                st = now_holds(e, job->root >= 0 ? job->root : x.id / job->K, x.id);
            else if (x.kind == TEV_ARRIVE)
                st = arrive_chunk(e, x.id, x.c);
            else if (x.kind == TEV_FREE) { /* te-ccl: the link lets go before (or after) its chunk arrives */
                if (e->state[x.id] == L_BUSY) {
                    e->state[x.id] = L_READY;
                    mark_dirty(e, net->dst[x.id]);
                    if (job->mode == SYN_RELAY)
                        mark_dirty(e, net->src[x.id]);
                }
            } else if (e->state[x.id] == L_BLOCKED) {
                e->state[x.id] = L_READY;
                mark_dirty(e, net->dst[x.id]);
            }
            if (st)
                goto fail;
        }
        if (++iter % SYN_STOP_EVERY == 0) {
            res->last_check = e->now;
            if (job->stop && job->stop->fn(job->stop->u, job->stop_offset + e->now)) {
                res->stopped = 1;
                eng_free(e);
                return TC_OK;
            }
            if ((iter & 1023) == 0)
                progress(e);
        }
    }
    if (job->progress && job->ctx && job->ctx->progress && e->last_print > 0)
        fprintf(stderr, "\r%60s\r", "");
    if (e->remaining > 0) {
        st = TC_ERR_INTERNAL;
        goto fail;
    }
    res->stopped = 0;
    res->makespan = e->last_end;
    res->rounds = last_round + 1;
    res->n_xfers = e->n_xfers;
    res->threads = e->par ? e->par->nth : 0;
    eng_free(e);
    return TC_OK;
fail:
    eng_free(e);
    return st;
}
