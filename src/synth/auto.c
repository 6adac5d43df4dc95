/*
 * auto: the candidate search behind `--chunks auto` and `--unwind auto` (tc_synth_tacos_search).
 *
 * Accepts: a topology (with its switches still declared when the unwinding degree is searched), a
 *   collective, the generator options (size, root, match, seed, threads) and which of the two to search.
 * Returns: the fastest candidate and the runner-up by the simulator's time of their plans when every
 *   candidate is small (at most SIM_WORK transfers: plans synthesized in full and simulated), else by the
 *   synthesizer's own time (stats-only runs: no transfer list is kept, so no candidate is simulated; the
 *   simulator's time of the plan made from the choice may differ for the collectives synthesized in
 *   reverse, which it may run faster, and for routes through switches, whose first hops it may reorder).
 * Candidates: chunks per rank 1, 2, 3, 4, 6, 8 (those that give every chunk a byte and keep the transfer
 *   count within SEARCH_WORK; 1 always); unwinding degrees 1, 2, 4, ... up to the smallest switch's
 *   ports - 1, and that largest degree itself (only when the topology has switches to unwind).  A search
 *   with one candidate left synthesizes nothing.
 *   Degrees above 1 whose estimated work (transfers x links of the unwinding / links of degree 1) passes
 *   UNWIND_WORK are dropped before anything is unwound.
 * Method: the least-work candidate (one chunk per rank, the lowest degree) is synthesized alone first, and
 *   when it fails (a size its links cannot carry) the search stops and the caller reports why.  Then rounds
 *   of candidates, chunks 1 and 2 first, then 3 and 4, then 6 and 8 (each with every degree), the next round
 *   only while the fastest so far has the most chunks tried (small problems: every round).  Each round has
 *   a cut, the best time finished before it, fixed while it runs; a candidate is decided before it is
 *   synthesized, cheapest test first:
 *   - skipped when its quick bound (per-NPU link and aggregate bounds, no igraph) is above the cut;
 *   - (all-gather, reduce-scatter, all-reduce) skipped when its quick bound is above EST_SLACK times that
 *     of the candidate that set the cut (its estimate, the cut scaled by that ratio, is above EST_SLACK
 *     times the cut): latency-bound problems (more chunks only add alpha per hop) stop at one candidate
 *     this way, even where the bounds alone (a mesh all-reduce, whose bound counts both phases at once)
 *     cannot tell; the path collectives (all-to-all, gather, scatter) by their bounds alone;
 *   - skipped when its full bound (tc_sim_bound: cuts, latency) is above the cut;
 *   - else synthesized, least work first, in up to opts->threads threads (0: one per core); (by the
 *     synthesizer's time) stopped once its clock passes the cut, since it can no longer win.
 *   The cut being fixed per round, which candidates are skipped or stopped and where does not depend on the
 *   threads; the choice is the fastest finished (ties: fewer chunks, then the lower degree), the runner-up
 *   the fastest other finished one (a stopped one, slower than the best, might have been faster than it).
 *   The winner's plan is kept when it was synthesized as the caller would synthesize it (the first candidate
 *   always; the others when small or the caller asks for statistics only), so compile does not synthesize it
 *   again.
 * Cost: one synthesis plus quick bounds where one chunk per rank is best by the estimate; at most every
 *   candidate (chunks 1 to 8: 24 times one chunk) less what the bounds, estimates and early stops save;
 *   the caller synthesizes the choice once more only when the search could not keep its plan.
 * Trace, two NDv2 chassis, 1 GB all-gather: chunks 1 (43.76 ms), 2 (41.90 ms), 3, 4 (40.98 ms), 6, 8
 *   (40.55 ms): 8 per rank, runner-up 6.
 */
#include "synth_int.h"

#include "tacos/sim.h"
#include "tacos/topo.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEARCH_WORK ((double)(1 << 27)) /* largest transfer count of a candidate (estimated) */
#define SIM_WORK ((double)(1 << 14))    /* up to this, candidates are full plans ranked by the simulator */
#define UNWIND_WORK ((double)(1 << 24)) /* largest estimated work (transfers x link ratio) of a degree above 1 */
#define KEEP_WORK ((double)(1 << 21))   /* up to this, every candidate is synthesized with its transfers */
/* Skip a candidate whose estimate is above EST_SLACK times the cut.  The estimate (the cut scaled by the
 * ratio of quick bounds) can be far too pessimistic: at 1.02 instead of 1.5, 23 of 448 compiles (28 shipped
 * topologies x all-gather, all-reduce, reduce-scatter, all-to-all x 64K, 1M, 64M, 1G) chose plans 0.9% to
 * 97% slower (switch2d-8x4 all-gather 64M: 8 chunks per rank skipped, 1 chosen), none faster. */
#define EST_SLACK 1.5

static const int chunk_set[] = {1, 2, 3, 4, 6, 8};

typedef struct cand {
    int chunks, unwind;   /* unwind: index into the search's flat topologies */
    int round;            /* chunks 1, 2: round 0; 3, 4: 1; 6, 8: 2 */
    int ran;              /* synthesized (to the end or stopped) */
    int stopped;          /* its clock passed the round's cut: its time is unknown, above the cut */
    int skipped;          /* not synthesized: SKIP_BOUND or SKIP_ESTIMATE */
    double work;          /* estimated transfers */
    double quick;         /* quick_bound of its shape (0: none) */
    double bound;         /* tc_sim_bound of its shape (0: not computed): no plan of it is faster */
    double est;           /* the cut scaled by quick / the cut's candidate's quick (0: none) */
    double time;          /* synthesizer's (or simulator's) time, INFINITY when stopped or not run */
    tc_status st;
} cand;

enum { SKIP_BOUND = 1, SKIP_ESTIMATE = 2 };

typedef struct search {
    tc_ctx *ctx;
    const tc_gen_opts *opts;
    tc_coll coll;
    tc_topo **flat;       /* per degree */
    const int *degree;
    cand *c;
    int n, next, end;     /* candidates; the next to take and the end of the current round */
    int by_sim;           /* rank by the simulated time of full plans (small problems) */
    int solo;             /* one candidate runs (the first, or a round of one): it gets every thread */
    double cut;           /* the best time finished before this round (fixed while it runs): a candidate
                             whose bound or estimate is above it is skipped, one whose clock passes it stops */
    double cut_quick;     /* the quick bound of the candidate that set the cut (the estimates' scale) */
    int keep;             /* keep the best finished candidate's plan in `kept` (issue 27) */
    tc_sched *kept;
    int kept_i;           /* whose plan `kept` is, -1 none */
    pthread_mutex_t lock;
} search;

/* Stop once the clock passes the round's cut: this candidate cannot beat the best finished before it. */
static int stop_fn(void *u, int64_t t)
{
    const search *S = u;
    return (double)t * 1e-12 > S->cut; /* read only while a round runs */
}

static int better(const cand *a, const int *deg, const cand *b);

/* Whether candidate i is synthesized as the caller would synthesize it (transfers unless the caller asks for
 * statistics only), so that when it wins it is the plan, not synthesized a second time: the first always
 * (one chunk per rank, the least work), the others when the caller asks for statistics only or when small
 * (by_sim: they are full plans anyway); never when by_sim ranks a stats-only caller's candidates by the
 * simulated time of plans it would not write. */
static int keepable(const search *S, int i)
{
    if (!S->keep || (S->by_sim && S->opts->stats_only))
        return 0;
    return i == 0 || S->by_sim || S->opts->stats_only || S->c[i].work <= KEEP_WORK;
}

/* Least T with sum over links lk[0 .. deg) of T / occ[l] >= need (the fractional relaxation of tc_sim_bound's
 * link bound, so never above it), and at least the fastest link's occupancy when need > 0.  Under the te-ccl
 * link model (tc_link_times) occ is the hold time, a chunk arrives lat after it starts (at least the least
 * lat), and a link whose lat is below its hold (a switch port) delivers by T at most (T + hold - lat) / hold;
 * `epoch` is tc_link_epoch (unused under tacos). */
static double links_bound(const tc_topo *t, const int *lk, int deg, double need, double bytes, double epoch)
{
    if (need <= 0 || deg <= 0)
        return 0;
    double rate = 0, fastest = INFINITY, slack = 0;
    for (int k = 0; k < deg; k++) {
        double occ, lat;
        tc_link_times(t, lk[k], bytes, epoch, &occ, &lat);
        if (!(occ > 0))
            return 0;
        rate += 1 / occ;
        if (lat < fastest)
            fastest = lat;
        if (occ - lat > slack)
            slack = occ - lat;
    }
    const double tm = need / rate - slack;
    return tm > fastest ? tm : fastest;
}

/* A quick lower bound of a candidate (the per-NPU link bound and the aggregate bound of tc_sim_bound, with no
 * cut, latency or igraph: microseconds where tc_sim_bound takes milliseconds on dense topologies), slightly
 * lowered so that rounding never puts it above a real plan's time; 0 for the collectives it does not know.
 * All-to-all, gather, scatter: each chunk counted as one hop in the aggregate (tc_sim_bound counts their
 * hop distances), chunk bytes as tc_sim_bound prices them (all-to-all: a rank pair's block over K). */
static double quick_bound(const tc_topo *t, tc_coll coll, int K, uint64_t size, int root)
{
    const int R = t->n_npus;
    const double C = (double)R * K, bytes = (double)size / C;
    if (R < 2 || !t->in_off || !t->out_off)
        return 0;
    double agg = C * (R - 1);
    switch (coll) {
    case TC_COLL_ALLREDUCE: agg *= 2; break;
    case TC_COLL_ALLGATHER:
    case TC_COLL_REDUCESCATTER:
    case TC_COLL_ALLTOALL: break; /* R (R - 1) K blocks, C (R - 1) */
    case TC_COLL_GATHER:
    case TC_COLL_SCATTER:
        if (root < 0 || root >= R)
            return 0;
        agg = C - K;
        break;
    default: return 0;
    }
    double b = 0;
    const double epoch = t->link_model != TC_LINK_TACOS ? tc_link_epoch(t, bytes) : 0;
    for (int v = 0; v < R; v++)
        for (int dir = 0; dir < 2; dir++) {
            const double need = (double)tc_bound_npu_need(coll, R, (int64_t)R * K, K, root, v, dir);
            const int *lk = dir ? t->out_link + t->out_off[v] : t->in_link + t->in_off[v];
            const int deg = dir ? t->out_off[v + 1] - t->out_off[v] : t->in_off[v + 1] - t->in_off[v];
            const double tm = links_bound(t, lk, deg, need, bytes, epoch);
            if (tm > b)
                b = tm;
        }
    int *all = malloc((size_t)t->n_links * sizeof *all + 1);
    if (all) {
        for (int l = 0; l < t->n_links; l++)
            all[l] = l;
        const double tm = links_bound(t, all, t->n_links, agg, bytes, epoch);
        if (tm > b)
            b = tm;
        free(all);
    }
    return b * (1 - 1e-4);
}

/* Its lower bound (tc_sim_bound of its shape): no plan of it is faster; 0 when none. */
static double cand_bound(tc_ctx *quiet, const search *S, const cand *c)
{
    tc_sched *shape = NULL;
    tc_bound bd;
    double b = 0;
    if (tc_sched_create(S->coll, S->flat[c->unwind]->n_npus, c->chunks, S->opts->size, &shape) == TC_OK) {
        shape->root = tc_coll_rooted(S->coll) ? S->opts->root : 0;
        /* igraph (the bound's minimum cut) runs under tc_igraph_lock, taken inside tc_sim_bound */
        if (tc_sim_bound(quiet, S->flat[c->unwind], shape, 0, &bd) == TC_OK)
            b = bd.time;
    }
    tc_sched_free(shape);
    return b;
}

static void *worker(void *arg)
{
    search *S = arg;
    const syn_stop stop = {stop_fn, S};
    for (;;) {
        pthread_mutex_lock(&S->lock);
        const int i = S->next < S->end ? S->next++ : S->end;
        pthread_mutex_unlock(&S->lock);
        if (i >= S->end)
            return NULL;
        cand *c = &S->c[i];
        tc_ctx quiet = *S->ctx; /* the candidates' own messages are not the user's */
        quiet.sink = NULL;
        quiet.progress = 0;
        /* the cut is fixed while the round runs: which candidates are skipped or stopped, and where they
         * stop, does not depend on the threads' timing */
        c->quick = quick_bound(S->flat[c->unwind], S->coll, c->chunks, S->opts->size, S->opts->root);
        /* estimates for the all-gather family only (measured there, EST_SLACK); the path collectives'
         * quick bounds skip by bound alone */
        if (S->cut_quick > 0 && isfinite(S->cut) &&
            (S->coll == TC_COLL_ALLGATHER || S->coll == TC_COLL_REDUCESCATTER || S->coll == TC_COLL_ALLREDUCE))
            c->est = S->cut * c->quick / S->cut_quick;
        if (c->quick > S->cut) {
            c->skipped = SKIP_BOUND;
            continue;
        }
        /* latency-bound problems: more chunks only add alpha per hop, and the bounds say so first */
        if (c->est > S->cut * EST_SLACK) {
            c->skipped = SKIP_ESTIMATE;
            continue;
        }
        if (i > 0 && (c->bound = cand_bound(&quiet, S, c)) > S->cut) { /* the full bound: cuts, latency */
            c->skipped = SKIP_BOUND;
            continue;
        }
        c->ran = 1;
        tc_gen_opts o = *S->opts;
        o.chunks = c->chunks;
        const int keep = keepable(S, i);
        o.stats_only = keep ? S->opts->stats_only : !S->by_sim;
        o.trials = 1;
        o.threads = S->solo ? S->opts->threads : 1; /* the engine's plan is the same on any number */
        tc_sched *s = NULL;
        /* the simulator may run a plan faster than its synthesizer's clock: no early stop then; nor with no
         * cut yet (the first candidate), which lets its phases run side by side (tacos.c run_all) */
        c->st = tc_synth_tacos_run(&quiet, S->flat[c->unwind], S->coll, &o,
                                   S->by_sim || !isfinite(S->cut) ? NULL : &stop, &s);
        c->time = c->st ? INFINITY : s->time;
        c->stopped = !c->st && !isfinite(c->time);
        if (!c->st && S->by_sim) { /* small problems: ranked by the simulated time of their plans */
            tc_sim_opts so;
            tc_sim_opts_init(&so);
            so.no_bound = 1;
            tc_sim_result *r = NULL;
            c->st = tc_sim_run(&quiet, s, S->flat[c->unwind], &so, &r);
            c->time = c->st ? INFINITY : r->time;
            tc_sim_result_free(r);
        }
        pthread_mutex_lock(&S->lock);
        if (keep && !c->st && !c->stopped && (S->kept_i < 0 || better(c, S->degree, &S->c[S->kept_i]))) {
            tc_sched_free(S->kept);
            S->kept = s;
            S->kept_i = i;
            s = NULL;
        }
        pthread_mutex_unlock(&S->lock);
        tc_sched_free(s);
    }
}

static int cmp_work(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->work != y->work)
        return x->work < y->work ? -1 : 1;
    if (x->chunks != y->chunks)
        return x->chunks < y->chunks ? -1 : 1;
    return (x->unwind > y->unwind) - (x->unwind < y->unwind);
}

/* a before b: faster, then fewer chunks, then the lower degree */
static int better(const cand *a, const int *deg, const cand *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    if (a->chunks != b->chunks)
        return a->chunks < b->chunks;
    return deg[a->unwind] < deg[b->unwind];
}

static tc_status run_search(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                            int search_chunks, int search_unwind, tc_synth_search *out, tc_sched **plan);

tc_status tc_synth_tacos_search(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                                int search_chunks, int search_unwind, tc_synth_search *out)
{
    return run_search(ctx, topo, coll, opts, search_chunks, search_unwind, out, NULL);
}

tc_status tc_synth_tacos_search_plan(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                                     int search_chunks, int search_unwind, tc_synth_search *out, tc_sched **plan)
{
    *plan = NULL;
    return run_search(ctx, topo, coll, opts, search_chunks, search_unwind, out, plan);
}

static tc_status run_search(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                            int search_chunks, int search_unwind, tc_synth_search *out, tc_sched **plan)
{
    memset(out, 0, sizeof *out);
    int degree[32], nd = 0;
    int max_d = 0, unwound = 0; /* switches kept as vertices (models node, multicast) have no degree */
    for (int s = 0; s < topo->n_switches; s++) {
        const int d = topo->switches[s].n_ports - 1;
        if (topo->switches[s].model != TC_SWITCH_UNWIND)
            continue;
        if (!unwound++ || d < max_d)
            max_d = d;
    }
    if (search_unwind && unwound && max_d >= 1) {
        for (int d = 1; d <= max_d && nd < 31; d *= 2)
            degree[nd++] = d;
        if (degree[nd - 1] != max_d)
            degree[nd++] = max_d;
        /* estimate first: a degree whose unwinding has r times the links of degree 1 costs about r times the
         * synthesis (every NPU matches over r times the out-links); degrees above 1 whose estimated work passes
         * UNWIND_WORK are dropped before anything is unwound (a 1000-port switch: degrees 1 to 16, not 999) */
        const double R = topo->n_npus, tr = R * (R > 1 ? R - 1 : 1);
        double l1 = topo->n_links;
        for (int s = 0; s < topo->n_switches; s++)
            if (topo->switches[s].model == TC_SWITCH_UNWIND)
                l1 += topo->switches[s].n_ports;
        int keep = 1;
        for (int k = 1; k < nd; k++) {
            double lk = topo->n_links;
            for (int s = 0; s < topo->n_switches; s++)
                if (topo->switches[s].model == TC_SWITCH_UNWIND) {
                    const int p = topo->switches[s].n_ports;
                    lk += (double)p * (degree[k] < p - 1 ? degree[k] : p - 1);
                }
            if (tr * (l1 > 0 ? lk / l1 : 1) <= UNWIND_WORK)
                degree[keep++] = degree[k];
        }
        nd = keep;
    } else
        degree[nd++] = opts->unwind;
    /* Estimate first, refuse first (issue 23): the plan written in the end has at least the transfers of the
     * smallest candidate (one chunk per rank), whatever the degree; a plan whose transfer list cannot fit
     * is refused now, as the plain run refuses it, not after unwinding and synthesizing every candidate. */
    {
        const int R = topo->n_npus;
        const int K = search_chunks ? chunk_set[0] : opts->chunks;
        const double least = (coll == TC_COLL_ALLREDUCE ? 2 : 1) * (double)R * (double)(R > 1 ? R - 1 : 1) * K;
        const double need = least * (double)(sizeof(tc_xfer) + 24); /* as tc_synth_tacos_run estimates */
        const uint64_t avail = tc_mem_available();
        if (!opts->stats_only && (least > INT32_MAX || (avail && need > (double)avail))) {
            char nb[32], ab[32];
            return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                            "tacos: even the smallest candidate of the search (%d chunk%s per rank) needs about %.0f "
                            "transfers, %s of memory, more than the %s available; use --stats-only",
                            K, K == 1 ? "" : "s", least, tc_fmt_bytes(need, nb, sizeof nb),
                            tc_fmt_bytes((double)avail, ab, sizeof ab));
        }
    }
    search S = {.ctx = ctx, .opts = opts, .coll = coll, .degree = degree, .cut = INFINITY,
                .keep = plan && opts->trials <= 1, .kept_i = -1};
    tc_status st = TC_ERR_NOMEM;
    S.flat = calloc((size_t)nd, sizeof *S.flat);
    S.c = calloc((size_t)nd * (sizeof chunk_set / sizeof chunk_set[0]) + 1, sizeof *S.c);
    pthread_t *th = NULL;
    if (!S.flat || !S.c)
        goto done;
    for (int k = 0; k < nd; k++)
        if ((st = tc_topo_unwind(ctx, topo, degree[k], &S.flat[k])))
            goto done;
    const double t0 = tc_now();
    const int R = topo->n_npus;
    /* a root out of range: no search; the generator run on the first candidate says what is wrong */
    const int bad_root = tc_coll_rooted(coll) && (opts->root < 0 || opts->root >= R);
    const double phases = coll == TC_COLL_ALLREDUCE ? 2 : 1;
    for (int k = 0; k < nd; k++)
        for (size_t j = 0; j < sizeof chunk_set / sizeof chunk_set[0]; j++) {
            const int K = search_chunks ? chunk_set[j] : opts->chunks;
            if (!search_chunks && j > 0)
                break;
            const uint64_t div = tc_sched_chunk_divisor(coll, R, K);
            const double work = phases * (double)R * (double)(R > 1 ? R - 1 : 1) * K;
            if ((K > 1 || k > 0) && (bad_root || div > opts->size || work > SEARCH_WORK))
                continue;
            S.c[S.n++] = (cand){.chunks = K, .unwind = k, .round = K <= 2 ? 0 : K <= 4 ? 1 : 2, .work = work,
                                .time = INFINITY};
        }
    qsort(S.c, (size_t)S.n, sizeof *S.c, cmp_work);
    double most = 0;
    for (int i = 0; i < S.n; i++)
        if (S.c[i].work > most)
            most = S.c[i].work;
    S.by_sim = most <= SIM_WORK;
    if (S.n > 1) { /* with one candidate there is nothing to compare */
        int threads = opts->threads > 0 ? opts->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (threads < 1)
            threads = 1;
        if (threads > S.n)
            threads = S.n;
        st = TC_ERR_NOMEM;
        if (!(th = calloc((size_t)threads, sizeof *th)))
            goto done;
        pthread_mutex_init(&S.lock, NULL);
        /* the least work first, alone: its time prunes every candidate whose bound is above it before any
         * of them is synthesized (latency-bound problems stop here: more chunks only add α per hop) */
        S.next = 0;
        S.end = 1;
        S.solo = 1;
        worker(&S);
        /* refuse first: when the first candidate fails (too large, a size its links cannot carry), so would
         * the others; the caller synthesizes the choice again and says why */
        if (S.c[0].st)
            S.next = S.n;
        else
            S.next = 1;
        while (S.next < S.n) { /* round by round while the best improves */
            int most = 0, b = -1; /* the fastest finished so far: the next round's cut */
            for (int i = 0; i < S.next; i++) {
                if (S.c[i].chunks > most)
                    most = S.c[i].chunks;
                if (S.c[i].ran && !S.c[i].st && isfinite(S.c[i].time) && (b < 0 || better(&S.c[i], degree, &S.c[b])))
                    b = i;
            }
            /* go on while the fastest so far has the most chunks tried: more may be faster still (small
             * problems try every round: their times need not be monotone) */
            if (S.next > 1 && !S.by_sim && (b < 0 || S.c[b].chunks < most))
                break;
            S.cut = b < 0 ? INFINITY : S.c[b].time;
            S.cut_quick = b < 0 ? 0 : S.c[b].quick;
            S.end = S.next;
            while (S.end < S.n && S.c[S.end].round == S.c[S.next].round)
                S.end++;
            S.solo = S.end - S.next == 1;
            int started = 0;
            for (int k = 1; k < threads; k++) {
                if (pthread_create(&th[k], NULL, worker, &S))
                    break;
                started = k;
            }
            worker(&S);
            for (int k = 1; k <= started; k++)
                pthread_join(th[k], NULL);
            S.next = S.end;
        }
        pthread_mutex_destroy(&S.lock);
    }
    int b = -1, r = -1;
    int ran = 0;
    for (int i = 0; i < S.n; i++) {
        ran += S.c[i].ran;
        if (S.c[i].st || !S.c[i].ran) /* an error (the caller synthesizes the choice again and reports it) */
            continue;
        if (b < 0 || better(&S.c[i], degree, &S.c[b])) {
            r = b;
            b = i;
        } else if (r < 0 || better(&S.c[i], degree, &S.c[r]))
            r = i;
    }
    if (b < 0) { /* every candidate failed: let the caller run the first and report why */
        b = 0;
        r = -1;
    }
    out->best = (tc_synth_pick){S.c[b].chunks, degree[S.c[b].unwind], S.n > 1 ? S.c[b].time : 0};
    if (r >= 0 && isfinite(S.c[r].time))
        out->runner_up = (tc_synth_pick){S.c[r].chunks, degree[S.c[r].unwind], S.c[r].time};
    out->candidates = S.n;
    out->simulated = S.by_sim && S.n > 1;
    out->synthesized = ran;
    for (int i = 0; i < S.n; i++)
        out->stopped += S.c[i].stopped;
    out->seconds = tc_now() - t0;
    if (ctx->verbose && S.n > 1)
        for (int i = 0; i < S.n; i++) {
            const cand *c = &S.c[i];
            char bb[32], eb[32], tb[32];
            char qb[32];
            tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0, "tacos search: %d chunk%s per rank, degree %d: bounds %s, %s, estimate %s, %s%s",
                    c->chunks, c->chunks == 1 ? "" : "s", degree[c->unwind], c->quick > 0 ? tc_fmt_time(c->quick, qb, sizeof qb) : "-",
                    c->bound > 0 ? tc_fmt_time(c->bound, bb, sizeof bb) : "-",
                    c->est > 0 ? tc_fmt_time(c->est, eb, sizeof eb) : "-",
                    c->skipped == SKIP_BOUND      ? "skipped (bound above the cut)"
                    : c->skipped == SKIP_ESTIMATE ? "skipped (estimate above the cut)"
                    : c->stopped                  ? "stopped (past the cut)"
                    : !c->ran                     ? "not reached"
                    : c->st                       ? "failed"
                                                  : (S.by_sim ? "simulated " : "synthesized "),
                    c->ran && !c->st && !c->stopped ? tc_fmt_time(c->time, tb, sizeof tb) : "");
        }
    if (plan && S.kept_i == b && S.n > 1 && S.kept) { /* the winner's plan, as the caller would make it */
        S.kept->seed = ctx->seed; /* and recorded as tc_algo_run records a generator's plan */
        S.kept->unwind = degree[S.c[b].unwind];
        S.kept->switch_model = opts->switch_model;
        S.kept->link_model = topo->link_model;
        *plan = S.kept;
        S.kept = NULL;
    }
    st = TC_OK;
done:
    tc_sched_free(S.kept);
    if (S.flat)
        for (int k = 0; k < nd; k++)
            tc_topo_free(S.flat[k]);
    free(S.flat);
    free(S.c);
    free(th);
    return st;
}
