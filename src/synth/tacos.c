/*
 * tacos: the TACOS collective synthesizer (paper §IV), the default generator.
 *
 * Accepts: any topology whose NPUs reach each other as the collective needs (switches are unwound first
 *   with tc_topo_unwind, degree opts->unwind, §IV-G); allgather, reducescatter, allreduce, broadcast,
 *   reduce, gather, scatter; K = opts->chunks chunks per rank; opts->match best|random; opts->trials seeds.
 * Returns: a schedule on physical links (link ids of the unwound topology when there are switches), every
 *   transfer one chunk over one link, or, through a switch vertex (switch models node and multicast), over
 *   the link into the switch and the link out (a route of two links, fold_switch_hops), or, through switches
 *   joined to switches (a NIC under a rail switch: ten.c routed copies, synth_int.h), over the chain of links
 *   from NPU to NPU (allgather, reducescatter, allreduce, broadcast and reduce only), times in seconds,
 *   s->time the collective time.
 * Phases (ten.c does the synthesis of one phase):
 *   allgather      SPREAD on the topology, chunk c starting at rank c / K
 *   broadcast      SPREAD, all K chunks starting at the root
 *   reducescatter  allgather on the reversed topology, then reversed in time, copies become reduces
 *   reduce         broadcast on the reversed topology, reversed
 *   allreduce      reducescatter, then allgather shifted by its time; or, when some chunk is fully reduced
 *                  before the reduce-scatter ends and it is faster, the all-gather on the reduce-scatter's
 *                  clock, each chunk from the end of its own reduction, in the gaps the reduce-scatter
 *                  leaves on each link (overlap; opts->no_overlap turns it off)
 *                  On a network that is its own reverse, in FIFO matching, the reduce-scatter is the
 *                  all-gather with each link read as its reverse: synthesized once (mirror_image)
 *   gather         GATHER (paths.c): every chunk on its own earliest-arrival path to the root; or the
 *                  mirror, SCATTER from the root on the reversed topology, reversed: the faster of the two
 *                  (the mirror up to MIRROR_MAX distance entries, R x vertices);
 *                  RELAY (every chunk one hop closer to the root per transfer) above 2^28 vertex visits
 *   scatter        gather on the reversed topology, reversed (copies stay copies), or SCATTER on the
 *                  topology itself, the faster
 *   alltoall       ALLTOALL (paths.c): every chunk on its own earliest-arrival path to its destination
 *   Reversal maps a transfer s->d on link l over [t0, t1] of a phase of length T to d->s on the same
 *   physical link l over [T - t1, T - t0], step R - 1 - step.
 * Cost (alpha-beta, chunk b = size / (R K) bytes, size / K for broadcast and reduce): every transfer
 *   costs alpha_l + beta_l b on its link; the collective time is the last completion.  All-gather on a
 *   ring of R NPUs: (R - 1)(alpha + beta b) per chunk column, i.e. the ideal bound.
 * Trials (opts->trials = T > 1): seeds ctx->seed + i, i < T, are synthesized without transfer lists in up
 *   to opts->threads threads (0: one per core); the fastest (lowest i on ties, so the result does not depend
 *   on the thread count) is synthesized again with its transfers and a note names its seed.  s->seed stays
 *   ctx->seed: the same command line gives the same bytes.  stats_only keeps no transfers (time, n_steps).
 * Limits: all-to-all up to 2^24 chunks (R^2 K).  Switch trees: a next-link table of (tree vertices x R) ints
 *   and a pair table of R^2 bytes (up to 8192 NPUs) per phase run; each copy entering a tree weighs every
 *   NPU behind it (a 1,024-GPU rail cluster's all-gather: 15 s).  Overlap rarely shortens an all-reduce: the reduce-scatter,
 *   a reversed all-gather, completes most chunks in its last round and holds most links until then.  Times
 *   are kept in integer picoseconds (each link cost rounded to 1 ps) so equal times compare equal; a link
 *   cost or a clock beyond TC_TIME_MAX is refused (TC_ERR_LIMIT), as is a transfer list estimated to need
 *   more memory than is available.
 * Trace, 4-NPU bidirectional ring, allgather, K = 1: round 0 at t=0: every NPU receives its two
 *   neighbours' chunks (8 transfers); round 1 at t=c: NPU i receives chunk i+2 over one of its two
 *   in-links (4 transfers; the other link sleeps); done at 2c.
 */
#include "synth_int.h"

#include "tacos/topo.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct phase {
    syn_mode mode;
    int reversed;  /* synthesize on the reversed topology, then reverse the result */
    int root;      /* see syn_job.root */
    tc_op op;      /* op of the transfers after reversal */
} phase;

/* Gather and scatter take one path per chunk up to this many vertex visits (vertices^2 x K), the relay above. */
/* All-to-all: at most this many chunks (R^2 K): a path search each, and R^2 distances. */
#define ALLTOALL_MAX ((int64_t)1 << 24)

#define PATHS_GATHER_MAX ((int64_t)1 << 28)
/* The mirror of a gather or scatter (the chunks scattered from the root on the other view) holds a distance
 * row per rank: R x vertices 8-byte entries, tried up to this many (256 MiB; a 5,792-NPU mesh). */
#define MIRROR_MAX ((int64_t)1 << 25)

/* The phases of a collective (at most 2) on n vertices with K chunks per rank. */
static int plan(tc_coll coll, int root, int n, int K, phase ph[2])
{
    const syn_mode gm = (int64_t)n * n * K <= PATHS_GATHER_MAX ? SYN_GATHER : SYN_RELAY;
    switch (coll) {
    case TC_COLL_ALLGATHER: ph[0] = (phase){SYN_SPREAD, 0, -1, TC_OP_COPY}; return 1;
    case TC_COLL_BROADCAST: ph[0] = (phase){SYN_SPREAD, 0, root, TC_OP_COPY}; return 1;
    case TC_COLL_REDUCESCATTER: ph[0] = (phase){SYN_SPREAD, 1, -1, TC_OP_REDUCE}; return 1;
    case TC_COLL_REDUCE: ph[0] = (phase){SYN_SPREAD, 1, root, TC_OP_REDUCE}; return 1;
    case TC_COLL_ALLREDUCE:
        ph[0] = (phase){SYN_SPREAD, 1, -1, TC_OP_REDUCE};
        ph[1] = (phase){SYN_SPREAD, 0, -1, TC_OP_COPY};
        return 2;
    case TC_COLL_GATHER: ph[0] = (phase){gm, 0, root, TC_OP_COPY}; return 1;
    case TC_COLL_SCATTER: ph[0] = (phase){gm, 1, root, TC_OP_COPY}; return 1;
    case TC_COLL_ALLTOALL: ph[0] = (phase){SYN_ALLTOALL, 0, -1, TC_OP_COPY}; return 1;
    default: return 0;
    }
}

/* BFS over the topology's links from x, forward (dir 0) or backward (dir 1); seen[] is filled. */
static tc_status reach(const tc_topo *t, int x, int dir, unsigned char *seen)
{
    const int n = tc_topo_n_vertices(t), m = t->n_links;
    int *off = calloc((size_t)n + 2, sizeof *off), *fill = malloc(((size_t)n + 1) * sizeof *fill),
        *adj = malloc(((size_t)m + 1) * sizeof *adj), *queue = malloc(((size_t)n + 1) * sizeof *queue);
    if (!off || !fill || !adj || !queue) {
        free(off);
        free(fill);
        free(adj);
        free(queue);
        return TC_ERR_NOMEM;
    }
    for (int l = 0; l < m; l++) {
        int a = dir ? t->links[l].dst : t->links[l].src, b = dir ? t->links[l].src : t->links[l].dst;
        if (a >= 0 && a < n && b >= 0 && b < n)
            off[a + 1]++;
    }
    for (int v = 0; v < n; v++)
        off[v + 1] += off[v];
    memcpy(fill, off, (size_t)n * sizeof *fill);
    for (int l = 0; l < m; l++) {
        int a = dir ? t->links[l].dst : t->links[l].src, b = dir ? t->links[l].src : t->links[l].dst;
        if (a >= 0 && a < n && b >= 0 && b < n)
            adj[fill[a]++] = b;
    }
    memset(seen, 0, (size_t)n);
    int qh = 0, qt = 0;
    seen[x] = 1;
    queue[qt++] = x;
    while (qh < qt) {
        int v = queue[qh++];
        for (int k = off[v]; k < off[v + 1]; k++)
            if (!seen[adj[k]]) {
                seen[adj[k]] = 1;
                queue[qt++] = adj[k];
            }
    }
    free(off);
    free(fill);
    free(adj);
    free(queue);
    return TC_OK;
}

/* Every NPU the collective needs reachable is; otherwise an error naming the first missing pair. */
static tc_status check_reach(tc_ctx *ctx, const tc_topo *t, tc_coll coll, int root)
{
    const int n = t->n_npus;
    unsigned char *seen = malloc((size_t)tc_topo_n_vertices(t) + 1);
    if (!seen)
        return TC_ERR_NOMEM;
    int x = tc_coll_rooted(coll) ? root : 0;
    int fwd = coll != TC_COLL_REDUCE && coll != TC_COLL_GATHER;  /* x must reach everyone */
    int bwd = coll != TC_COLL_BROADCAST && coll != TC_COLL_SCATTER; /* everyone must reach x */
    tc_status st = TC_OK;
    for (int dir = 0; dir < 2 && !st; dir++) {
        if (!(dir ? bwd : fwd))
            continue;
        if ((st = reach(t, x, dir, seen)))
            break;
        for (int v = 0; v < n; v++)
            if (!seen[v]) {
                st = tc_error(ctx, TC_ERR_INVALID, t->file, 0,
                              "tacos: npu %d cannot reach npu %d (%s needs it)", dir ? v : x, dir ? x : v,
                              tc_coll_name(coll));
                break;
            }
    }
    free(seen);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Running the phases                                                                                */

typedef struct run_cfg {
    const tc_topo *topo;
    const syn_net *net[2];  /* forward and reversed views (NULL when not needed) */
    phase ph[2];
    int n_ph;
    int C, K;
    tc_match_mode match;
    int overlap;            /* all-reduce: each chunk's all-gather starts when its reduce-scatter ends */
    const syn_stop *stop;   /* candidate search: early stop (NULL: none) */
    const int *mirror;      /* all-reduce on a network that is its own reverse: per link of net[0] its image in
                               net[1] (tc_synth_net_mirror), or NULL (run_all) */
    int *mirrored;          /* NULL, or counts the runs that took the mirror (tests) */
    int lazy_all;           /* tests: the overlap's timetables recorded on demand at any K (see busy_on_demand) */
    int64_t *ovl_probe;     /* tests: NULL, or [0] overlap_bound, [1] the overlap's end where it ran to the end */
    uint64_t *busy_hash;    /* tests: NULL, or a hash of the reduce-scatter's timetables when they are used */
    int64_t fifo_above;     /* syn_job's (0: the default) */
    int poll_all;           /* syn_job's */
    tc_ctx *ctx;
} run_cfg;

static uint64_t phase_seed(uint64_t seed, int p)
{
    return seed + 0x9e3779b97f4a7c15ull * (uint64_t)p;
}

typedef struct phase_run {
    const run_cfg *cfg;
    int p;
    uint64_t seed;
    tc_sched *rec;
    tc_xfer *out;
    int64_t out_cap;
    int progress;
    const int64_t *release; /* overlap: see syn_job */
    const syn_cal *block;
    int64_t *first_out;
    syn_cal *busy_out;
    const int *busy_map;    /* see syn_job */
    int64_t stop_offset;
    int no_stop;
    int threads;            /* the engine's (syn_job) */
    syn_result r;
    tc_status st;
} phase_run;

static void *phase_worker(void *arg)
{
    phase_run *R = arg;
    const run_cfg *cfg = R->cfg;
    const phase *ph = &cfg->ph[R->p];
    syn_job job = {
        .mode = ph->mode,
        .n_chunks = cfg->C,
        .n_ranks = cfg->topo->n_npus,
        .mcast = !ph->reversed, /* no reduction inside a switch: the reversed phases use it as a node */
        .K = cfg->K,
        .root = ph->root,
        .match = cfg->match,
        .seed = phase_seed(R->seed, R->p),
        .rec = R->out ? NULL : R->rec,
        .out = R->out,
        .out_cap = R->out_cap,
        .release = R->release,
        .block = R->block,
        .first_out = R->first_out,
        .busy_out = R->busy_out,
        .busy_map = R->busy_map,
        .fifo_above = cfg->fifo_above,
        .poll_all = cfg->poll_all,
        .stop = R->no_stop ? NULL : cfg->stop,
        .stop_offset = R->stop_offset,
        .ctx = cfg->ctx,
        .progress = R->progress,
        .threads = R->threads,
        .what = cfg->n_ph > 1 ? (R->p ? "all-gather phase" : "reduce-scatter phase") : "",
    };
    const int paths = ph->mode == SYN_GATHER || ph->mode == SYN_SCATTER || ph->mode == SYN_ALLTOALL;
    R->st = paths ? tc_synth_paths_run(cfg->net[ph->reversed], &job, &R->r)
                  : tc_synth_ten_run(cfg->net[ph->reversed], &job, &R->r);
    return NULL;
}

/*
 * All-reduce overlap.  The reduce-scatter phase (synthesized reversed) records, per chunk, when its owner
 * first sends it in the reversed view and, per link, when it is busy; reversed, those give the time each
 * chunk is fully reduced at its owner (T - first send) and the stretches each link is taken.  When some
 * chunk is done before the end of the phase, the all-gather is synthesized again on the reduce-scatter's
 * clock: chunk c appears at its owner at its release and no transfer overlaps a stretch of the
 * reduce-scatter; the plan keeps it when it ends sooner than the all-gather after the whole phase.
 */
typedef struct overlap {
    int64_t *release;   /* per chunk (first sends, then release times) */
    syn_cal *busy;      /* per link, the reduce-scatter's view */
    syn_cal *block;     /* per link, mirrored */
    int m;
} overlap;

static void overlap_free(overlap *o)
{
    free(o->release);
    tc_synth_cals_free(o->busy, o->m);
    tc_synth_cals_free(o->block, o->m);
}

/* Chunk c's release in the all-gather after a reduce-scatter of makespan T, from its owner's first send in
 * the reduce-scatter's own (reversed) clock (INT64_MAX: never sent). */
static int64_t release_of(const overlap *o, int c, int64_t T)
{
    return o->release[c] == INT64_MAX ? 0 : T - o->release[c];
}

/* Is some chunk of C released before T (done before the reduce-scatter ends)? */
static int overlap_early(const overlap *o, int C, int64_t T)
{
    for (int c = 0; c < C; c++)
        if (release_of(o, c, T) < T)
            return 1;
    return 0;
}

/*
 * A lower bound (ps) on where the overlapped all-gather ends (the all-reduce's time when it is kept), from
 * the release times alone, after a reduce-scatter of makespan T.  An NPU takes in every chunk it does not own,
 * so of the N(r) chunks released at r or later at least N(r) - K, each over one of its in-links and
 * starting no sooner than its release: T' >= r + (N(r) - K) / rate, rate the chunks per ps its in-links
 * carry together (fractional: a link of cost c carries (T' - r) / c at most).  The NPU of least rate gives
 * the largest for every r.  Tacos link model only (a transfer holds its link for its whole cost); 0 when
 * none.  32x32 mesh all-reduce of 1 GiB, 2 chunks per rank: almost every chunk is released at T or one
 * hop before, and a corner takes 2046 chunks over 2 links: 22.466 ms, the plain plan 22.477 ms.
 */
static int64_t overlap_bound(const run_cfg *cfg, const overlap *o, int64_t T)
{
    const syn_net *net = cfg->net[cfg->ph[1].reversed];
    const int C = cfg->C, K = cfg->K;
    if (net->hold || C <= K)
        return 0;
    double rate = INFINITY;
    for (int v = 0; v < net->n_npus; v++) {
        double r = 0;
        for (int k = net->in_off[v]; k < net->in_off[v + 1]; k++)
            r += 1 / (double)net->cost[net->in_lk[k]];
        if (r < rate)
            rate = r;
    }
    int64_t *rel = rate > 0 && isfinite(rate) ? malloc((size_t)C * sizeof *rel) : NULL;
    if (!rel)
        return 0;
    for (int c = 0; c < C; c++)
        rel[c] = release_of(o, c, T);
    qsort(rel, (size_t)C, sizeof *rel, tc_cmp_int64);
    double lb = 0;
    for (int j = 0; j + K < C; j++) /* rel[j .. C) are the C - j released at rel[j] or later */
        if (j == 0 || rel[j - 1] != rel[j]) {
            const double t = (double)rel[j] + (double)(C - j - K) / rate;
            if (t > lb)
                lb = t;
        }
    free(rel);
    return (int64_t)(lb * (1 - 1e-9)); /* down: rounding never puts it above a real plan's time */
}

/* After the reduce-scatter of makespan T: release times and mirrored timetables.  *early: some chunk is
 * done before T. */
static tc_status overlap_prepare(overlap *o, int C, int64_t T, int *early)
{
    *early = overlap_early(o, C, T);
    for (int c = 0; c < C; c++) /* reused in place as the release times */
        o->release[c] = release_of(o, c, T);
    if (!*early)
        return TC_OK;
    if (!(o->block = calloc((size_t)o->m + 1, sizeof *o->block)))
        return TC_ERR_NOMEM;
    for (int l = 0; l < o->m; l++) { /* [a, b) -> [T - b, T - a) */
        const syn_cal *b = &o->busy[l];
        syn_cal *k = &o->block[l];
        if (!b->n)
            continue;
        if (!(k->bs = malloc((size_t)b->n * sizeof *k->bs)) || !(k->be = malloc((size_t)b->n * sizeof *k->be)))
            return TC_ERR_NOMEM;
        for (int i = 0; i < b->n; i++) {
            k->bs[b->n - 1 - i] = T - b->be[i];
            k->be[b->n - 1 - i] = T - b->bs[i];
        }
        k->n = k->cap = b->n;
    }
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Switch vertices: hops through a switch become one transfer with a route                          */

typedef struct hopref { int sw, chunk, i; double t; } hopref;

static int cmp_hopref(const void *a, const void *b)
{
    const hopref *x = a, *y = b;
    if (x->sw != y->sw)
        return x->sw < y->sw ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Transfers by (t_start, t_end, link, chunk), through an index array. */
static int cmp_by_time(const void *a, const void *b, void *arg)
{
    const tc_xfer *v = arg, *x = &v[*(const int *)a], *y = &v[*(const int *)b];
    if (x->t_start != y->t_start)
        return x->t_start < y->t_start ? -1 : 1;
    if (x->t_end != y->t_end)
        return x->t_end < y->t_end ? -1 : 1;
    if (x->link != y->link)
        return x->link < y->link ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/*
 * Fold the hops of one phase (rec->xfers[from, *to), the engine's view, vertex ids) through switch vertices
 * (ids >= R) into transfers from NPU to NPU whose route is the link into the switch and the link out: per
 * (switch, chunk), the k-th departure by start time takes the k-th arrival by end time (first in, first out,
 * as the engine sends them), or the one arrival when there is one (a multicast switch; every chunk on a
 * path).  Arrivals no port sent on (copies a node switch took in for an NPU that got the chunk elsewhere)
 * are dropped.  The folded transfer starts when its first hop starts and ends when its last hop ends; its
 * step is its first hop's.  The phase's transfers are rewritten in start order and *to moved; the
 * transfers after them (later phases, not folded yet) follow them.
 */
static tc_status fold_switch_hops(tc_sched *rec, int from, int *to, int R)
{
    const int cnt = *to - from;
    tc_xfer *out = malloc(((size_t)cnt + 1) * sizeof *out);
    hopref *in = malloc(((size_t)cnt + 1) * sizeof *in), *dep = malloc(((size_t)cnt + 1) * sizeof *dep);
    int *l1 = malloc(((size_t)cnt + 1) * sizeof *l1), *l2 = malloc(((size_t)cnt + 1) * sizeof *l2);
    int *ord = malloc(((size_t)cnt + 1) * sizeof *ord);
    tc_xfer *tail = NULL;
    int *rsave = NULL;
    tc_status st = TC_ERR_NOMEM;
    if (!out || !in || !dep || !l1 || !l2 || !ord)
        goto done;
    const tc_xfer *x = rec->xfers + from;
    int na = 0, nd = 0, no = 0;
    st = TC_ERR_INTERNAL;
    for (int i = 0; i < cnt; i++) {
        if (x[i].src >= R && x[i].dst >= R) /* switch to switch: tc_topo_unwind makes no such link */
            goto done;
        if (x[i].dst >= R)
            in[na++] = (hopref){x[i].dst, x[i].chunk, i, x[i].t_end};
        else if (x[i].src >= R)
            dep[nd++] = (hopref){x[i].src, x[i].chunk, i, x[i].t_start};
        else {
            l1[no] = -1;
            out[no++] = x[i];
        }
    }
    qsort(in, (size_t)na, sizeof *in, cmp_hopref);
    qsort(dep, (size_t)nd, sizeof *dep, cmp_hopref);
    for (int a = 0, d = 0; d < nd;) {
        while (a < na && (in[a].sw < dep[d].sw || (in[a].sw == dep[d].sw && in[a].chunk < dep[d].chunk)))
            a++;
        int a1 = a, d1 = d;
        while (a1 < na && in[a1].sw == dep[d].sw && in[a1].chunk == dep[d].chunk)
            a1++;
        while (d1 < nd && dep[d1].sw == dep[d].sw && dep[d1].chunk == dep[d].chunk)
            d1++;
        if (a1 == a || (a1 - a > 1 && a1 - a < d1 - d))
            goto done; /* a departure without its arrival */
        for (int k = d; k < d1; k++) {
            const tc_xfer *u = &x[in[a1 - a == 1 ? a : a + (k - d)].i], *v = &x[dep[k].i];
            out[no] = *u;
            out[no].dst = v->dst;
            out[no].t_end = v->t_end;
            l1[no] = u->link;
            l2[no] = v->link;
            no++;
        }
        a = a1;
        d = d1;
    }
    for (int i = 0; i < no; i++)
        ord[i] = i;
    qsort_r(ord, (size_t)no, sizeof *ord, cmp_by_time, out);
    /* the transfers after the phase (later phases, not folded yet) wait aside; the routes of this phase and
     * those (copies routed through switch trees, ten.c) too, written again after the folded ones */
    const int nt = rec->n_xfers - *to;
    int rbase = rec->n_route;
    for (int i = from; i < rec->n_xfers; i++)
        if (rec->xfers[i].route_len > 0 && rec->xfers[i].route_off < rbase)
            rbase = rec->xfers[i].route_off;
    st = TC_ERR_NOMEM;
    if (nt > 0 && !(tail = malloc((size_t)nt * sizeof *tail)))
        goto done;
    if (rec->n_route > rbase && !(rsave = malloc((size_t)(rec->n_route - rbase) * sizeof *rsave)))
        goto done;
    if (nt > 0)
        memcpy(tail, rec->xfers + *to, (size_t)nt * sizeof *tail);
    if (rsave)
        memcpy(rsave, rec->route + rbase, (size_t)(rec->n_route - rbase) * sizeof *rsave);
    rec->n_xfers = from;
    rec->n_route = rbase;
    st = TC_OK;
    for (int k = 0; k < no && !st; k++) {
        const int i = ord[k];
        const tc_xfer *y = &out[i];
        const int links[2] = {l1[i], l2[i]};
        st = l1[i] >= 0 ? tc_sched_add(rec, y->src, y->dst, y->chunk, (tc_op)y->op, -1, y->step, y->t_start,
                                       y->t_end, links, 2)
                        : tc_sched_add(rec, y->src, y->dst, y->chunk, (tc_op)y->op, y->link, y->step, y->t_start,
                                       y->t_end, y->route_len ? rsave + (y->route_off - rbase) : NULL, y->route_len);
    }
    *to = rec->n_xfers;
    for (int i = 0; i < nt && !st; i++)
        st = tc_sched_add(rec, tail[i].src, tail[i].dst, tail[i].chunk, (tc_op)tail[i].op, tail[i].link, tail[i].step,
                          tail[i].t_start, tail[i].t_end,
                          tail[i].route_len ? rsave + (tail[i].route_off - rbase) : NULL, tail[i].route_len);
done:
    free(rsave);
    free(tail);
    free(out);
    free(in);
    free(dep);
    free(l1);
    free(l2);
    free(ord);
    return st;
}

/* Hops out of switch vertices were rounds of their own, folded into the routed transfers that arrive by them
 * (fold_switch_hops): number the steps left 0, 1, ... in their order. */
static tc_status dense_steps(tc_sched *s)
{
    int *map = calloc((size_t)s->n_steps + 1, sizeof *map);
    if (!map)
        return TC_ERR_NOMEM;
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].step >= 0 && s->xfers[i].step < s->n_steps)
            map[s->xfers[i].step] = 1;
    int k = 0;
    for (int t = 0; t < s->n_steps; t++)
        map[t] = map[t] ? k++ : -1;
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].step >= 0 && s->xfers[i].step < s->n_steps)
            s->xfers[i].step = map[s->xfers[i].step];
    s->n_steps = k;
    free(map);
    return TC_OK;
}

/*
 * The mirror.  On a network that is its own reverse (every link l of the topology has a reverse r(l) of the
 * same cost, numbered so that the reversed view's sorted link lists are the forward view's with each l read
 * as r(l): tc_synth_net_mirror), an all-reduce's reduce-scatter phase, the all-gather on the reversed view,
 * is the all-gather on the forward view with every link l replaced by r(l), step for step, whenever the engine
 * cannot tell the two views apart otherwise: FIFO matching (no seed: the phases' seeds differ), NPUs only (no
 * switch vertex: mcast differs), the tacos link model, no release or block (the overlap's second all-gather
 * runs as before).  So phase 1 runs once, recording for phase 0 what the overlap needs (first_out
 * as it is, busy_out at r(l)), and phase 0's transfers are phase 1's with link r(l), before the reversal in
 * time that run_all applies to phase 0 as to any reversed phase.  `slice` >= 0: the transfers go to the two
 * exactly sized slices of rec (run_all's par layout), else they are appended, phase 0's first.  Sets R[0].r,
 * R[1].r and first[1], first[2].
 * Under a search's cut (cfg->stop, whose function only grows with the time it is given) the run stands in for
 * phase 0 (offset 0): where it stops, phase 0 would have (*stopped = 1).  Phase 1, the same events offset by
 * phase 0's makespan M, would have asked the same function at the same steps with M added: it stops iff it
 * stops at M + the run's last asked clock (*stopped = 2; its transfers are then appended whole, where phase
 * 1 would have left a part, which no caller reads: a stopped all-gather's are replaced or dropped).
 */
static tc_status mirror_image(const run_cfg *cfg, phase_run R[2], tc_sched *rec, int64_t slice, int progress,
                              int parallel, int first[3], int *stopped)
{
    *stopped = 0;
    phase_run *F = &R[1];
    F->first_out = R[0].first_out;
    F->busy_out = R[0].busy_out;
    F->busy_map = cfg->mirror;
    F->progress = progress;
    F->threads = parallel > 1 ? parallel : 1;
    if (rec && slice >= 0) {
        F->out = rec->xfers + rec->n_xfers + slice;
        F->out_cap = slice;
    }
    phase_worker(F);
    F->first_out = NULL; /* the overlap's all-gather starts from a copy of R[1] */
    F->busy_out = NULL;
    F->busy_map = NULL;
    if (F->st)
        return F->st;
    if (cfg->mirrored)
        __atomic_add_fetch(cfg->mirrored, 1, __ATOMIC_RELAXED);
    if (F->r.stopped) {
        *stopped = 1;
        return cfg->stop ? TC_OK : TC_ERR_INTERNAL;
    }
    if (slice >= 0 && F->r.n_xfers != slice)
        return TC_ERR_INTERNAL;
    if (cfg->stop && cfg->stop->fn(cfg->stop->u, F->r.makespan + F->r.last_check))
        *stopped = 2;
    R[0].r = F->r;
    first[1] = first[2] = 0;
    if (!rec)
        return TC_OK;
    const int64_t nx = F->r.n_xfers;
    tc_xfer *x = rec->xfers + first[0];
    if (slice < 0) { /* appended at first[0]: a copy follows as phase 1's, the first become phase 0's */
        tc_status st = tc_sched_reserve(rec, (int)nx);
        if (st)
            return st;
        x = rec->xfers + first[0];
        memcpy(x + nx, x, (size_t)nx * sizeof *x);
        for (int64_t i = 0; i < nx; i++)
            x[i].link = cfg->mirror[x[i].link];
    } else {
        for (int64_t i = 0; i < nx; i++) {
            x[i] = x[nx + i];
            x[i].link = cfg->mirror[x[i].link];
        }
    }
    first[1] = first[0] + (int)nx;
    first[2] = first[1] + (int)nx;
    rec->n_xfers = first[2];
    return TC_OK;
}

/*
 * The reduce-scatter's timetables (busy_out) cost a calendar update per transfer, and the overlap reads them
 * only when some chunk is reduced before the phase ends (overlap_prepare's early).  With one chunk per rank
 * no chunk is: every owner sends its only chunk at time 0 over every out-link (each destination lacks it),
 * so its first send is at 0 and its release at T.  So with K = 1 (or cfg->lazy_all) the phase runs without
 * them, and should some chunk be early after all, it runs again for them alone (the same run: the same
 * timetables; through the mirror's map when the mirror took it).  The plan never depends on which way.
 */
static tc_status busy_on_demand(const run_cfg *cfg, const phase_run R[2], overlap *o, int parallel)
{
    const int64_t T = R[0].r.makespan;
    if (!overlap_early(o, cfg->C, T))
        return TC_OK;
    const int mirrored = cfg->mirror != NULL;
    phase_run X = R[mirrored ? 1 : 0];
    X.rec = NULL;
    X.out = NULL;
    X.progress = 0;
    X.first_out = NULL;
    X.busy_out = o->busy;
    X.busy_map = mirrored ? cfg->mirror : NULL;
    X.no_stop = 1; /* it finished before: it finishes again */
    X.stop_offset = 0;
    X.threads = parallel > 1 ? parallel : 1;
    X.release = NULL;
    X.block = NULL;
    phase_worker(&X);
    if (X.st)
        return X.st;
    return X.r.makespan == T && X.r.n_xfers == R[0].r.n_xfers ? TC_OK : TC_ERR_INTERNAL;
}

/* Run every phase with `seed`; append transfers to rec when set.  *time_ps is the collective time.  With
 * two SPREAD phases, a transfer list and parallel > 1 (threads), the phases run in two threads, each writing
 * its own (exactly sized) part of the list: the same result as one after the other; else each phase's
 * engine may use `parallel` threads (ten.c, the same result as one). */
static tc_status run_all(const run_cfg *cfg, uint64_t seed, tc_sched *rec, int progress, int parallel,
                         int64_t *time_ps, int *steps)
{
    phase_run R[2];
    int first[3];
    memset(R, 0, sizeof R);
    first[0] = rec ? rec->n_xfers : 0;
    const int64_t spread = (int64_t)cfg->topo->n_npus * cfg->C - cfg->C; /* transfers of a SPREAD phase */
    const int can_ovl = cfg->overlap && cfg->n_ph == 2 && cfg->ph[0].mode == SYN_SPREAD &&
                        cfg->ph[1].mode == SYN_SPREAD && cfg->ph[0].reversed && !cfg->ph[1].reversed &&
                        !tc_topo_switch_tree(cfg->topo); /* routed copies keep no timetables (ten.c) */
    /* the two phases side by side (each on one thread); not under a search's early stop, which needs the
     * first phase's end to place the second's clock (stop_offset) */
    int par = rec && parallel > 1 && !cfg->stop && !cfg->topo->n_swnodes && cfg->n_ph == 2 &&
              cfg->ph[0].mode == SYN_SPREAD && cfg->ph[1].mode == SYN_SPREAD &&
              (int64_t)rec->cap_xfers - rec->n_xfers >= 2 * spread;
    int ovl = 0, plain_stopped = 0; /* the plain all-gather passed the search's cut: only the overlap may win */
    overlap O = {0};
    tc_status st = TC_OK;
    /* see busy_on_demand; under a search's cut too, where overlap_bound may show the overlap hopeless */
    const int lazy = can_ovl && (cfg->K == 1 || cfg->lazy_all || cfg->stop);
    for (int p = 0; p < cfg->n_ph; p++)
        R[p] = (phase_run){.cfg = cfg, .p = p, .seed = seed, .rec = rec, .progress = progress && p == 0};
    if (can_ovl) {
        O.m = cfg->net[0] ? cfg->net[0]->m : cfg->net[1]->m;
        O.release = malloc(((size_t)cfg->C + 1) * sizeof *O.release);
        O.busy = calloc((size_t)O.m + 1, sizeof *O.busy);
        if (!O.release || !O.busy) {
            overlap_free(&O);
            return TC_ERR_NOMEM;
        }
        for (int c = 0; c < cfg->C; c++)
            O.release[c] = INT64_MAX;
        R[0].first_out = O.release;
        R[0].busy_out = lazy ? NULL : O.busy;
    }
    if (cfg->mirror) { /* phase 1 alone, phase 0 its image (see mirror_image) */
        int stopped;
        if ((st = mirror_image(cfg, R, rec, par ? spread : -1, progress, parallel, first, &stopped)) ||
            stopped == 1 || (stopped == 2 && !can_ovl)) {
            overlap_free(&O);
            *time_ps = INT64_MAX;
            return st;
        }
        if (stopped == 2) { /* as below: the overlapped all-gather may end sooner */
            plain_stopped = 1;
            R[1].r.makespan = SYN_TIME_MAX_PS;
        }
    } else if (par) {
        pthread_t th;
        for (int p = 0; p < 2; p++) {
            R[p].out = rec->xfers + rec->n_xfers + p * spread;
            R[p].out_cap = spread;
        }
        int threaded = pthread_create(&th, NULL, phase_worker, &R[1]) == 0;
        phase_worker(&R[0]);
        if (threaded)
            pthread_join(th, NULL);
        else
            phase_worker(&R[1]);
        for (int p = 0; p < 2; p++) {
            if ((st = R[p].st) || (R[p].r.n_xfers != spread && (st = TC_ERR_INTERNAL))) {
                overlap_free(&O);
                return st;
            }
        }
        first[1] = first[0] + (int)spread;
        first[2] = first[1] + (int)spread;
        rec->n_xfers = first[2];
    } else {
        for (int p = 0; p < cfg->n_ph; p++) {
            R[p].progress = progress;
            R[p].threads = parallel > 1 ? parallel : 1; /* one phase at a time: the engine may use them */
            R[p].stop_offset = p ? R[0].r.makespan : 0;
            phase_worker(&R[p]);
            if (!R[p].st && R[p].r.stopped && p == 1 && can_ovl) { /* the overlapped all-gather may end sooner */
                plain_stopped = 1;
                R[1].r.makespan = SYN_TIME_MAX_PS;
                R[1].r.stopped = 0;
            } else if ((st = R[p].st) || R[p].r.stopped) {
                overlap_free(&O);
                *time_ps = INT64_MAX;
                return st;
            }
            first[p + 1] = rec ? rec->n_xfers : 0;
        }
    }
    /* Under a search's cut, an overlap that cannot end before the plain plan, nor before the cut, is not run
     * (its result would be dropped, or stopped): the same choice, without the timetables or the run.  When
     * the overlap is cut short (so, or stopped in its run) and the plain plan ends past the cut, which of
     * the two is faster is unknown: the run is stopped, its time above the cut. */
    int hopeless = 0, ovl_cut = 0;
    const int64_t plain_ps = plain_stopped ? INT64_MAX : R[0].r.makespan + R[1].r.makespan;
    if (can_ovl && (cfg->stop || cfg->ovl_probe)) {
        const int64_t lb = overlap_bound(cfg, &O, R[0].r.makespan);
        if (cfg->ovl_probe) /* tests */
            cfg->ovl_probe[0] = lb;
        if (cfg->stop && lb >= plain_ps)
            hopeless = 1;
        else if (cfg->stop && cfg->stop->fn(cfg->stop->u, lb))
            hopeless = ovl_cut = 1;
    }
    if (hopeless)
        overlap_free(&O);
    else if (can_ovl) { /* the all-gather again on the reduce-scatter's clock, kept when it ends sooner */
        int early;
        if (lazy && (st = busy_on_demand(cfg, R, &O, parallel))) {
            overlap_free(&O);
            return st;
        }
        if (cfg->busy_hash && overlap_early(&O, cfg->C, R[0].r.makespan)) { /* tests */
            uint64_t h = 1469598103934665603ull;
            for (int l = 0; l < O.m; l++)
                for (int i = 0; i < O.busy[l].n; i++)
                    h = (h ^ (uint64_t)(O.busy[l].bs[i] * 31 + O.busy[l].be[i] + l)) * 1099511628211ull;
            *cfg->busy_hash = h;
        }
        if (!(st = overlap_prepare(&O, cfg->C, R[0].r.makespan, &early)) && early) {
            phase_run A = R[1];
            A.rec = NULL;
            A.out = NULL;
            A.progress = 0;
            A.release = O.release;
            A.block = O.block;
            A.stop_offset = 0;
            phase_worker(&A);
            /* a run asks its stop every SYN_STOP_EVERY event times, so it may end past the cut unstopped: with
             * the plain all-gather stopped, which of the two is faster is then unknown too */
            ovl_cut = !A.st && (A.r.stopped || (plain_stopped && cfg->stop->fn(cfg->stop->u, A.r.makespan)));
            if (cfg->ovl_probe && !A.st && !A.r.stopped) /* tests */
                cfg->ovl_probe[1] = A.r.makespan;
            if (!(st = A.st) && !ovl_cut && A.r.makespan < plain_ps) {
                ovl = 1;
                if (rec) { /* with its transfers, in place of the plain one's */
                    A.rec = rec;
                    A.out = R[1].out;
                    if (!A.out)
                        rec->n_xfers = first[1];
                    phase_worker(&A);
                    if (!(st = A.st) && A.out && A.r.n_xfers != spread)
                        st = TC_ERR_INTERNAL;
                    if (!A.out)
                        first[2] = rec->n_xfers;
                }
                R[1] = A;
            }
        }
        overlap_free(&O);
        if (st)
            return st;
    }
    if (!ovl && (plain_stopped || (ovl_cut && cfg->stop->fn(cfg->stop->u, plain_ps)))) {
        /* neither all-gather ends before the cut (or the plain one past it, the overlap cut short) */
        *time_ps = INT64_MAX;
        return TC_OK;
    }
    if (rec && cfg->topo->n_swnodes) /* hops through switch vertices become routed transfers */
        for (int p = 0; p < cfg->n_ph; p++) {
            const int end = first[p + 1];
            if ((st = fold_switch_hops(rec, first[p], &first[p + 1], cfg->topo->n_npus)))
                return st;
            for (int q = p + 2; q <= cfg->n_ph; q++)
                first[q] += first[p + 1] - end;
        }
    int64_t offset = 0, span = 0;
    int step_off = 0;
    for (int p = 0; p < cfg->n_ph; p++) {
        if (ovl && p == 1)
            offset = 0; /* the overlapped all-gather ran on the reduce-scatter's clock */
        const phase *ph = &cfg->ph[p];
        const syn_result *r = &R[p].r;
        if (rec) {
            tc_xfer *x = rec->xfers;
            for (int i = first[p]; i < first[p + 1]; i++) {
                if (ph->reversed) {
                    int s = x[i].src;
                    double t0 = x[i].t_start;
                    x[i].src = x[i].dst;
                    x[i].dst = s;
                    for (int a = x[i].route_off, b = x[i].route_off + x[i].route_len - 1; a < b; a++, b--) {
                        const int l = rec->route[a]; /* the route runs the other way */
                        rec->route[a] = rec->route[b];
                        rec->route[b] = l;
                    }
                    x[i].t_start = (double)r->makespan - x[i].t_end;
                    x[i].t_end = (double)r->makespan - t0;
                    x[i].step = r->rounds - 1 - x[i].step;
                }
                x[i].op = ph->op;
                x[i].t_start = ((double)offset + x[i].t_start) * 1e-12;
                x[i].t_end = ((double)offset + x[i].t_end) * 1e-12;
                x[i].step += step_off;
            }
            if (ph->reversed) /* keep the list in (roughly) increasing start time */
                for (int i = first[p], j = first[p + 1] - 1; i < j; i++, j--) {
                    tc_xfer t = x[i];
                    x[i] = x[j];
                    x[j] = t;
                }
        }
        offset += r->makespan;
        if (offset > span)
            span = offset;
        step_off += r->rounds;
    }
    *time_ps = span;
    *steps = step_off;
    return TC_OK;
}

typedef struct trial_pool {
    const run_cfg *cfg;
    uint64_t seed0;
    int trials, next;
    pthread_mutex_t lock;
    int64_t *time;
    tc_status *st;
} trial_pool;

static void *trial_worker(void *arg)
{
    trial_pool *P = arg;
    for (;;) {
        pthread_mutex_lock(&P->lock);
        int i = P->next++;
        pthread_mutex_unlock(&P->lock);
        if (i >= P->trials)
            return NULL;
        int steps;
        P->st[i] = run_all(P->cfg, P->seed0 + (uint64_t)i, NULL, i == 0, 0, &P->time[i], &steps);
    }
}

/* Best of `trials` seeds (ties: lowest trial index) in up to `threads` threads; writes the best seed. */
static tc_status run_trials(const run_cfg *cfg, uint64_t seed0, int trials, int threads, uint64_t *best)
{
    trial_pool P = {.cfg = cfg, .seed0 = seed0, .trials = trials};
    P.time = calloc((size_t)trials, sizeof *P.time);
    P.st = calloc((size_t)trials, sizeof *P.st);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    tc_status st = TC_ERR_NOMEM;
    if (!P.time || !P.st || !th)
        goto done;
    pthread_mutex_init(&P.lock, NULL);
    int started = 0;
    for (int k = 1; k < threads; k++) {
        if (pthread_create(&th[k], NULL, trial_worker, &P))
            break;
        started = k;
    }
    trial_worker(&P);
    for (int k = 1; k <= started; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&P.lock);
    int b = -1;
    st = TC_OK;
    for (int i = 0; i < trials; i++) {
        if (P.st[i]) {
            st = P.st[i];
            goto done;
        }
        if (b < 0 || P.time[i] < P.time[b])
            b = i;
    }
    *best = seed0 + (uint64_t)b;
done:
    free(P.time);
    free(P.st);
    free(th);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Entry points                                                                                      */

/* The topology the synthesis runs on: t itself, or its switches unwound into *owned. */
static tc_status flat_topo(tc_ctx *ctx, const tc_topo *t, const tc_gen_opts *opts, tc_topo **owned,
                           const tc_topo **use)
{
    *owned = NULL;
    *use = t;
    if (t->n_switches == 0)
        return TC_OK;
    tc_status st = tc_topo_unwind(ctx, t, opts->unwind, owned);
    if (st)
        return tc_error(ctx, st, t->file, 0, "tacos: cannot unwind the switches of '%s': %s",
                        t->name ? t->name : "topology", tc_status_str(st));
    *use = *owned;
    return TC_OK;
}

/* Collectives whose phases are all SPREAD: the ones synthesized on switch trees. */
static int spread_only(tc_coll coll)
{
    return coll == TC_COLL_ALLGATHER || coll == TC_COLL_REDUCESCATTER || coll == TC_COLL_ALLREDUCE ||
           coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE;
}

static tc_status check_args(tc_ctx *ctx, const tc_topo *t, tc_coll coll, const tc_gen_opts *opts)
{
    if ((unsigned)coll >= TC_COLL_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "tacos: unknown collective %d", (int)coll);
    if (t->n_npus < 1)
        return tc_error(ctx, TC_ERR_INVALID, t->file, 0, "tacos: the topology has no npus");
    if (opts->chunks < 1)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "tacos: --chunks must be at least 1 (got %d)",
                        opts->chunks);
    if ((int64_t)t->n_npus * opts->chunks > INT32_MAX / 2)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "tacos: %d npus x %d chunks is too many chunks",
                        t->n_npus, opts->chunks);
    if (coll == TC_COLL_ALLTOALL && (int64_t)t->n_npus * t->n_npus * opts->chunks > ALLTOALL_MAX)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                        "tacos: all-to-all of %d npus x %d chunks per pair is too large (more than %lld chunks)",
                        t->n_npus, opts->chunks, (long long)ALLTOALL_MAX);
    if (tc_topo_switch_tree(t) && !spread_only(coll)) /* routed copies (ten.c match_tree): SPREAD phases only */
        return tc_error(ctx, TC_ERR_UNSUPPORTED, t->file, 0, "tacos: on switches joined to switches (a nic under a "
                        "rail switch, a PCIe tree) tacos synthesizes allgather, reducescatter, allreduce, broadcast "
                        "and reduce, not %s; use --algo ring, direct, rhd or hier-ring", tc_coll_name(coll));
    if (tc_topo_switch_tree(t) && t->link_model == TC_LINK_TECCL) /* a routed copy holds each link it crosses */
        return tc_error(ctx, TC_ERR_UNSUPPORTED, t->file, 0, "tacos: on switches joined to switches (a nic under a "
                        "rail switch, a PCIe tree) tacos synthesizes with the tacos link model only, not te-ccl; use "
                        "--link-model tacos, or --algo ring, direct, rhd or hier-ring");
    if (tc_coll_rooted(coll) && (opts->root < 0 || opts->root >= t->n_npus))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "tacos: root %d out of range (topology has %d npus)",
                        opts->root, t->n_npus);
    return TC_OK;
}

/* The message for TC_ERR_LIMIT from the engine: its clock would pass TC_TIME_MAX. */
static void too_long(tc_ctx *ctx)
{
    tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
             "tacos: the schedule would last longer than %.0f s, the longest time tacosc handles (use a smaller "
             "--size or faster links)",
             TC_TIME_MAX);
}

tc_status tc_synth_tacos(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out)
{
    return tc_synth_tacos_run(ctx, topo, coll, opts, NULL, out);
}

tc_status tc_synth_tacos_run(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                             const syn_stop *stop, tc_sched **out)
{
    return tc_synth_tacos_knobs(ctx, topo, coll, opts, stop, NULL, out);
}

tc_status tc_synth_tacos_knobs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                               const syn_stop *stop, syn_knobs *knobs, tc_sched **out)
{
    tc_gen_opts defaults;
    if (!opts) {
        tc_gen_opts_init(&defaults);
        opts = &defaults;
    }
    tc_topo *owned = NULL;
    const tc_topo *t = NULL;
    tc_sched *s = NULL;
    int *rmap = NULL; /* the mirror (run_all) */
    syn_net net[2];
    memset(net, 0, sizeof net);
    tc_status st = check_args(ctx, topo, coll, opts);
    if (st)
        return st;
    if ((st = flat_topo(ctx, topo, opts, &owned, &t)))
        return st;
    if ((st = check_reach(ctx, t, coll, opts->root)))
        goto fail;
    const int R = t->n_npus, K = opts->chunks;
    if ((st = tc_sched_create(coll, R, K, opts->size, &s)))
        goto fail;
    if ((st = tc_sched_set_names(s, "tacos", topo->name)))
        goto fail;
    s->root = tc_coll_rooted(coll) ? opts->root : 0;
    s->seed = ctx->seed;
    s->link_model = topo->link_model;

    run_cfg cfg = {.topo = t, .C = s->n_chunks, .K = K, .match = opts->match, .overlap = !opts->no_overlap,
                   .stop = stop, .ctx = ctx};
    if (knobs) {
        cfg.fifo_above = knobs->fifo_above;
        cfg.poll_all = knobs->poll_all;
        cfg.mirrored = &knobs->mirrored;
        cfg.lazy_all = knobs->lazy_all;
        cfg.busy_hash = &knobs->busy_hash;
        if (knobs->probe) {
            knobs->ovl_probe[0] = knobs->ovl_probe[1] = -1;
            cfg.ovl_probe = knobs->ovl_probe;
        }
    }
    cfg.n_ph = plan(coll, opts->root, t->n_npus, K, cfg.ph);
    /* gather and scatter: also the mirror (the chunks scattered from the root on the other view, reversed) */
    const int mirror = cfg.n_ph == 1 && cfg.ph[0].mode == SYN_GATHER &&
                       (int64_t)t->n_npus * tc_topo_n_vertices(t) <= MIRROR_MAX;
    for (int p = 0; p < cfg.n_ph + mirror; p++) {
        int rv = p < cfg.n_ph ? cfg.ph[p].reversed : !cfg.ph[0].reversed;
        if (!cfg.net[rv]) {
            if ((st = tc_synth_net_build(t, rv, s->chunk_bytes, &net[rv]))) {
                if (st == TC_ERR_LIMIT)
                    tc_error(ctx, st, t->file, 0,
                             "tacos: one chunk of %llu B takes longer than %.0f s on some link (use a smaller "
                             "--size, more --chunks or faster links)",
                             (unsigned long long)s->chunk_bytes, TC_TIME_MAX);
                goto fail;
            }
            cfg.net[rv] = &net[rv];
        }
    }
    if (cfg.n_ph == 2 && cfg.ph[0].mode == SYN_SPREAD && cfg.ph[1].mode == SYN_SPREAD && cfg.ph[0].reversed &&
        !cfg.ph[1].reversed && cfg.ph[0].root == cfg.ph[1].root && !(knobs && knobs->no_mirror)) {
        const syn_job probe = {.mode = SYN_SPREAD, .n_chunks = cfg.C, .match = cfg.match,
                               .fifo_above = cfg.fifo_above};
        if (tc_synth_ten_fifo(&net[0], &probe) && (st = tc_synth_net_mirror(&net[0], &net[1], &rmap)))
            goto fail;
        cfg.mirror = rmap;
    }
    if (mirror) { /* keep the faster of the two (the first on a tie) */
        run_cfg alt = cfg;
        alt.ph[0].mode = SYN_SCATTER;
        alt.ph[0].reversed = !cfg.ph[0].reversed;
        int64_t t0 = 0, t1 = 0;
        int st0 = 0, st1 = 0;
        if ((st = run_all(&cfg, ctx->seed, NULL, 0, 0, &t0, &st0)) || (st = run_all(&alt, ctx->seed, NULL, 0, 0, &t1, &st1))) {
            if (st == TC_ERR_LIMIT)
                too_long(ctx);
            goto fail;
        }
        if (t1 < t0)
            cfg = alt;
    }
    uint64_t seed = ctx->seed;
    if (opts->trials > 1) {
        int threads = opts->threads > 0 ? opts->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (threads < 1)
            threads = 1;
        if (threads > opts->trials)
            threads = opts->trials;
        if ((st = run_trials(&cfg, ctx->seed, opts->trials, threads, &seed))) {
            if (st == TC_ERR_LIMIT)
                too_long(ctx);
            goto fail;
        }
        if (seed != ctx->seed)
            tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0, "tacos: best of %d trials is seed %llu", opts->trials,
                    (unsigned long long)seed);
    }
    if (!opts->stats_only) {
        /* every node receives every chunk once per SPREAD phase; each chunk hops <= R-1 times in RELAY */
        int64_t want = 0;
        for (int p = 0; p < cfg.n_ph; p++)
            want += cfg.ph[p].mode == SYN_SPREAD     ? (int64_t)R * s->n_chunks - s->n_chunks
                    : cfg.ph[p].mode == SYN_ALLTOALL ? (int64_t)R * (R - 1) * K
                                                     : (int64_t)(R - 1) * K;
        if (want > INT32_MAX) {
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "tacos: %lld transfers do not fit in a schedule; use --stats-only",
                          (long long)want);
            goto fail;
        }
        /* the transfer list, plus what checking, sorting and writing it take per transfer (measured: about
         * 68 bytes per transfer at the peak of `tacosc --chunks 30000` on a 4x4 mesh) */
        const double need = (double)want * (double)(sizeof(tc_xfer) + 24);
        const uint64_t avail = tc_mem_available();
        if (avail && need > (double)avail) {
            char nb[32], ab[32];
            st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                          "tacos: %lld transfers need about %s of memory, more than the %s available; use fewer "
                          "--chunks (or --stats-only)",
                          (long long)want, tc_fmt_bytes(need, nb, sizeof nb),
                          tc_fmt_bytes((double)avail, ab, sizeof ab));
            goto fail;
        }
        if ((st = tc_sched_reserve(s, (int)want)))
            goto fail;
        /* a hint only: large transfer lists fault in 2 MiB pages instead of 4 KiB ones */
        size_t bytes = (size_t)s->cap_xfers * sizeof *s->xfers;
        if (bytes >= ((size_t)64 << 20)) {
            uintptr_t a = ((uintptr_t)s->xfers + 4095) & ~(uintptr_t)4095;
            if (a < (uintptr_t)s->xfers + bytes)
                madvise((void *)a, (uintptr_t)s->xfers + bytes - a, MADV_HUGEPAGE);
        }
    }
    int64_t time_ps = 0;
    int steps = 0;
    int threads = opts->threads > 0 ? opts->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    st = run_all(&cfg, seed, opts->stats_only ? NULL : s, 1, threads, &time_ps, &steps);
    if (st == TC_ERR_INTERNAL)
        st = tc_error(ctx, st, NULL, 0, "tacos: synthesis stalled with postconditions left (internal error)");
    if (!st && stop && time_ps == INT64_MAX) { /* stopped: this candidate cannot win */
        s->time = INFINITY;
        s->n_xfers = 0;
        goto stopped;
    }
    if (!st && time_ps > SYN_TIME_MAX_PS)
        st = TC_ERR_LIMIT;
    if (st == TC_ERR_LIMIT)
        too_long(ctx);
    if (st)
        goto fail;
    s->time = (double)time_ps * 1e-12;
    s->n_steps = steps;
    if (!opts->stats_only && t->n_swnodes > 0 && (st = dense_steps(s)))
        goto fail;
stopped:
    free(rmap);
    tc_synth_net_free(&net[0]);
    tc_synth_net_free(&net[1]);
    tc_topo_free(owned);
    *out = s;
    return TC_OK;
fail:
    free(rmap);
    tc_synth_net_free(&net[0]);
    tc_synth_net_free(&net[1]);
    tc_sched_free(s);
    tc_topo_free(owned);
    return st;
}
