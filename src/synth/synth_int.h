/* Internal interface of the TACOS synthesizer (src/synth/): the network view and the event-driven
 * time-expanded-network engine.  Not installed; only src/synth/ includes it. */
#ifndef TACOS_SYNTH_INT_H
#define TACOS_SYNTH_INT_H

#include "tacos/synth.h"

/** A directed network as the engine sees it: links possibly reversed, cost per chunk in picoseconds,
 *  CSR adjacency sorted by (cost, link id) so the cheapest link comes first. */
typedef struct syn_net {
    int n, m;             /* vertices (NPUs 0 .. n_npus-1, then switch vertices) and links */
    int n_npus;
    unsigned char *kind;  /* per vertex: SYN_V_NPU, SYN_V_NODE (store-and-forward switch), SYN_V_MCAST */
    int *src, *dst;       /* per link (after reversal) */
    int64_t *cost;        /* ps to move one chunk: alpha + beta * chunk_bytes, at least 1; under the te-ccl
                             link model (tc_link_times) the time from its start until it arrives */
    int64_t *hold;        /* te-ccl: ps the link is busy per chunk (at least 1); NULL under tacos (= cost) */
    int *in_off, *in_lk;  /* in-links of node v: in_lk[in_off[v] .. in_off[v+1]) */
    int *out_off, *out_lk;
    int n_groups;         /* distinct costs */
    int *group_of;        /* per link: index of its cost among the distinct costs */
    int *group_size;      /* links per group */
    int64_t *group_cost;
} syn_net;

enum { SYN_V_NPU = 0, SYN_V_NODE = 1, SYN_V_MCAST = 2 };

/** ps link l is busy per chunk: net->cost under tacos, net->hold under te-ccl. */
static inline int64_t tc_synth_hold(const syn_net *net, int l) { return net->hold ? net->hold[l] : net->cost[l]; }

/** TC_TIME_MAX in picoseconds: no link cost, distance or engine clock goes beyond it (TC_ERR_LIMIT), so
 *  a clock plus a cost, and the sum of three phases, stay far inside int64_t. */
#define SYN_TIME_MAX_PS ((int64_t)(TC_TIME_MAX * 1e12))

/** A link's timetable: busy blocks [bs[i], be[i]) in time order (ps), every gap between two blocks at least
 *  one chunk long (shorter gaps are merged into the blocks: no chunk could use them). */
typedef struct syn_cal {
    int64_t *bs, *be;
    int n, cap;
} syn_cal;

/** The first start >= t at which one chunk of `cost` ps fits between the blocks. */
int64_t tc_synth_cal_earliest(const syn_cal *c, int64_t t, int64_t cost);
/** Reserve [a, a + cost) (a start tc_synth_cal_earliest gave), keeping the gap rule. */
tc_status tc_synth_cal_insert(syn_cal *c, int64_t a, int64_t cost);
/** Free an array of m timetables (NULL allowed). */
void tc_synth_cals_free(syn_cal *c, int m);

/** Build the view of topology `t` (no switches left; switch vertices allowed) for chunks of `chunk_bytes`;
 *  reversed != 0 swaps every link's direction (the link keeps its id).  TC_ERR_LIMIT when one chunk takes longer than TC_TIME_MAX
 *  on some link. */
tc_status tc_synth_net_build(const tc_topo *t, int reversed, uint64_t chunk_bytes, syn_net *net);
void tc_synth_net_free(syn_net *net);

/** The mirror of two views of one topology (tacos.c: the all-reduce's reduce-scatter is its all-gather with
 *  every link l replaced by its reverse).  *map = per link l of `a` the link r(l) of `b` that is l's exact image:
 *  r(l) joins the same vertices as l does in `a` (the topology's reverse of l when `b` is `a` reversed), costs and cost groups agree, neither has a hold (te-ccl orders its timed events by link id) nor
 *  a switch vertex, and the CSR lists agree link by link (b->in_lk[k] == r(a->in_lk[k]), the same for
 *  out_lk: r is read off the out-lists, O(links)), so the engine, which reaches links only through those
 *  lists and per-link arrays, cannot tell a run on `b` from a run on `a` relabelled by r.  *map = NULL (TC_OK)
 *  when any of that fails; else the caller frees it.  TC_ERR_NOMEM only. */
tc_status tc_synth_net_mirror(const syn_net *a, const syn_net *b, int **map);

/** A node's chunks in arrival order (ten.c, rounds.c): entries [base, len) live in buf[0 .. len - base),
 *  uint16_t each when chunk ids fit (esz 2: half the memory traffic of the scans), else uint32_t (esz 4). */
typedef struct syn_log {
    void *buf;
    int base, len, cap;
} syn_log;

/** Room for one more entry in a full list: the entries before `low` (no reader's cursor is before it) are
 *  dropped when that frees a quarter of it, else it grows, to `most` entries at most.  TC_ERR_NOMEM, or
 *  TC_ERR_INTERNAL when it holds `most` already. */
tc_status tc_synth_log_room(syn_log *L, size_t esz, int low, int64_t most);

static inline void tc_synth_log_put(syn_log *L, size_t esz, int c)
{
    if (esz == 2)
        ((uint16_t *)L->buf)[L->len - L->base] = (uint16_t)c;
    else
        ((uint32_t *)L->buf)[L->len - L->base] = (uint32_t)c;
    L->len++;
}

static inline int tc_synth_log_at(const syn_log *L, size_t esz, int i)
{
    return esz == 2 ? (int)((const uint16_t *)L->buf)[i - L->base] : (int)((const uint32_t *)L->buf)[i - L->base];
}

/** A zeroed bitset of `words` 64-bit words (free()); large ones on transparent huge pages where asked for. */
uint64_t *tc_synth_claim_alloc(size_t words);

typedef enum {
    SYN_SPREAD,  /* every node wants every chunk (all-gather, broadcast) */
    SYN_RELAY,   /* every chunk goes to `root`, relayed downhill (gather on the largest topologies) */
    SYN_GATHER,  /* every chunk goes to `root` on its own earliest-arrival path (paths.c) */
    SYN_SCATTER, /* chunk c goes from `root` to rank c / K on its own earliest-arrival path (paths.c) */
    SYN_ALLTOALL /* chunk c goes from rank c / (R K) to rank (c / K) mod R on its own path (paths.c) */
} syn_mode;

/*
 * Switch vertices (models node and multicast).  They hold no chunk at the start and need none at the end.
 * SPREAD: a switch takes a chunk over an in-link (from an NPU) only while some NPU behind it lacks it (a
 * multicast switch once, then any port may send it; a node switch once per port that will send it: a
 * token per copy), each in-link taking the first useful chunk of its source's list; a port sends the first
 * chunk of the switch's list its NPU lacks (a node switch consumes that copy).  First in, first out at
 * the switch is what the simulator does with the routes the hops become (tacos.c folds every pair of hops
 * through a switch into one transfer from NPU to NPU whose route crosses it).  A multicast switch acts
 * as a node switch when job->mcast is 0 (the phases synthesized in reverse: no reduction in the switch).
 * RELAY and the paths: a switch vertex is a vertex like any other, each chunk crossing it once.
 *
 * Switch trees (issue 25: a NIC under a rail switch, leaf switches under a spine, a PCIe tree): a switch
 * vertex joined by a link to another switch vertex is a tree vertex, and SPREAD moves chunks through tree
 * vertices as routed copies, decided where they enter (ten.c match_tree): a free link from NPU s into tree
 * vertex w takes the first chunk c of s's list that some NPU u reachable from w through tree vertices only
 * lacks, u not s, and that u could not have from a neighbour outside the trees (an NPU in-neighbour, or an
 * NPU on a port of a flat switch vertex, holding or receiving c: a server's NVSwitch spreads what one of
 * its GPUs gets, so each chunk crosses the network once per server) nor from an NPU of a lower-ranked tree
 * it hangs from (trees ranked by the NPUs they reach, then their costliest link: a server's PCIe tree
 * before the network's; a strict order, so two trees never each leave u to the other); of those u with fewer than
 * TREE_PAIR_MAX copies from s in flight (an MSCCL connection holds 2 messages: more in flight between one
 * pair would deadlock the lowered program), the one c would reach first, stored and forwarded along the
 * path behind each link's current chunk and the copies routed over it still ahead (farther, then lower
 * id, on a tie: tree_eta).  u claims c at
 * once; the copy follows the path of fewest hops from w to u (its next link precomputed per tree vertex
 * and NPU), stored and forwarded at each vertex, each link out of a tree vertex serving the copies that
 * wait for it first in, first out (never matched: state L_ROUTED while idle).  A copy is recorded when it
 * reaches u, as one transfer s -> u (link -1) whose route is the chain of links it took, started when its
 * first hop started: so the NIC links that several GPUs use are busy for every copy that crosses them
 * (their bandwidth is shared), and the simulator, the checker and the lowering take the route as any
 * other.  A switch vertex joined to no other keeps the rules above.  Not for RELAY and the paths (gather,
 * scatter and all-to-all are refused on switch trees, tacos.c check_args), and the all-reduce overlap is
 * off there (routed copies keep no timetables).
 */

/** The engines ask a search's stop (syn_stop) after every SYN_STOP_EVERY-th event time. */
#define SYN_STOP_EVERY 256

/** A search's early stop: fn(u, t) != 0 once a candidate's clock t (ps, whole collective) shows it cannot win. */
typedef struct syn_stop {
    int (*fn)(void *u, int64_t t);
    void *u;
} syn_stop;

typedef struct syn_job {
    syn_mode mode;
    int n_chunks;
    int n_ranks;        /* R: NPU vertices 0 .. R-1 of the net (the rest are switch vertices) */
    int mcast;          /* SPREAD: multicast switches may send one chunk out of several ports */
    int K;              /* chunks per rank (all-to-all: per rank pair) */
    int root;           /* SPREAD: -1 = chunk c starts at rank c / K, else all chunks start at root;
                           RELAY: the gather root (chunk c starts at rank c / K) */
    tc_match_mode match;
    uint64_t seed;
    tc_sched *rec;      /* NULL: statistics only; else transfers are appended with times in ps (doubles),
                           step = round index, src/dst as in the net */
    tc_xfer *out;       /* instead of rec: write transfers to out[0 .. out_cap) (same fields) */
    int64_t out_cap;
    /* all-reduce overlap (SPREAD only; each may be NULL) */
    const int64_t *release; /* per chunk: time (ps) its owner has it, instead of 0 */
    const syn_cal *block;   /* per link: times it is taken (by the other phase): no transfer overlaps them */
    int64_t *first_out;     /* out: per chunk, the first start of a transfer of it from its owner (INT64_MAX
                               none); the caller fills it with INT64_MAX */
    syn_cal *busy_out;      /* out: per link, the times it carries chunks (zeroed by the caller); for the
                               reversed phase that is mirrored (tacos.c), so under te-ccl a transfer's hold is
                               recorded where the mirror puts it: [t + cost - hold, t + cost) */
    const int *busy_map;    /* NULL, or busy_out of link l is busy_out[busy_map[l]] (a run standing in for its
                               mirror image, tc_synth_net_mirror) */
    int64_t fifo_above;     /* best mode matches FIFO from this many node x chunk pairs (0: the default,
                               2^20; tests lower it) */
    int poll_all;           /* te-ccl: run every poll of a deferred link (ten.c skip_idle_polls off; tests) */
    const syn_stop *stop;   /* may be NULL */
    int64_t stop_offset;    /* added to the clock before asking stop (the phases before this one) */
    tc_ctx *ctx;        /* progress line (may be NULL) */
    int progress;       /* nonzero: this run may print the progress line */
    int threads;        /* large FIFO-mode SPREAD runs: split each event time's matching and arrivals over
                           this many threads (ten.c, par_*; 1: the split phases on one thread), with the
                           same result as 0: one thread, match by match (the reference) */
    const char *what;   /* phase name for the progress line */
    int events;         /* nonzero: the event-driven engine even where rounds.c could run the job (tests) */
    int rounds_tile;    /* rounds.c: a tile's side (a run of ids where no grid; 0: its own; tests: small) */
} syn_job;

typedef struct syn_result {
    int stopped;        /* job->stop said so: the rest is meaningless */
    int64_t makespan;   /* ps */
    int rounds;         /* event rounds with at least one transfer started */
    int64_t n_xfers;
    int threads;        /* threads the split phases ran on (0: the run did not split them) */
    int64_t last_check; /* the clock (ps, without stop_offset) where the run last asked job->stop, or would
                           have with one: a stop function that only grows with the time it is given stops a
                           run of the same events offset by X iff it stops at X + last_check (tacos.c, the
                           mirror under a search's cut) */
} syn_result;

/** Dijkstra toward vertex d over the net's in-links: row[v] = the cheapest time (ps) from v to d, INT64_MAX
 *  when v cannot reach d.  row holds net->n entries.  TC_ERR_NOMEM only. */
tc_status tc_synth_dist_to(const syn_net *net, int d, int64_t *row);

/** SYN_GATHER, SYN_SCATTER and SYN_ALLTOALL (paths.c): one earliest-arrival path per chunk; the same results and errors
 *  as tc_synth_ten_run. */
tc_status tc_synth_paths_run(const syn_net *net, const syn_job *job, syn_result *res);

/** Does the run match FIFO (best mode on node x chunk pairs from job->fifo_above)?  Then, on NPUs only and
 *  without switch vertices, the run does not read job->seed. */
int tc_synth_ten_fifo(const syn_net *net, const syn_job *job);

/** The transient progress line on a terminal (job->progress with ctx->progress): the round and the share
 *  of postconditions met, from 2 s after t0 (tc_now()), at most every 0.5 s (*last_print). */
void tc_synth_progress(const syn_job *job, int round, double done, double t0, double *last_print);

/** Can rounds.c run the job (SPREAD, FIFO, NPUs only, one link cost, tacos link model, no overlap inputs
 *  or timetables, statistics only; a stop is asked as ten.c asks it)?  tc_synth_ten_run then hands it
 *  over: the same result. */
int tc_synth_rounds_ok(const syn_net *net, const syn_job *job);
/** The job on rounds.c's engine (tc_synth_rounds_ok must hold). */
tc_status tc_synth_rounds_run(const syn_net *net, const syn_job *job, syn_result *res);

/** Run one synthesis.  Returns TC_ERR_NOMEM, TC_ERR_INTERNAL (stall: some postcondition unreachable),
 *  TC_ERR_LIMIT (the clock would pass SYN_TIME_MAX_PS), or the status of tc_sched_add. */
tc_status tc_synth_ten_run(const syn_net *net, const syn_job *job, syn_result *res);

/** tc_synth_tacos with an early stop (NULL: none): a stopped run returns TC_OK and a schedule whose time is
 *  INFINITY (for the candidate search, src/synth/auto.c). */
tc_status tc_synth_tacos_run(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                             const syn_stop *stop, tc_sched **out);

/** Test knobs for tc_synth_tacos_knobs (zeroed: as tc_synth_tacos_run). */
typedef struct syn_knobs {
    int no_mirror;       /* never synthesize one phase as the mirror of the other (tacos.c run_all) */
    int poll_all;        /* te-ccl: every poll of a deferred link run, none skipped (ten.c skip_idle_polls) */
    int64_t fifo_above;  /* see syn_job (0: the default) */
    int lazy_all;        /* the all-reduce overlap's timetables recorded on demand at any chunk count (tacos.c
                            busy_on_demand; by default with one chunk per rank only) */
    uint64_t busy_hash;  /* out: a hash of the all-reduce overlap's reduce-scatter timetables where the
                            overlap reads them (some chunk reduced early), else 0 */
    int mirrored;        /* out: runs of the phases (run_all) that took the mirror */
    int probe;           /* in: fill ovl_probe */
    int64_t ovl_probe[2];/* out: the all-reduce overlap's lower bound (tacos.c overlap_bound) and its end
                            where it ran to the end (-1 where not) */
} syn_knobs;

/** tc_synth_tacos_run with test knobs (NULL: none); only the tests call it with knobs. */
tc_status tc_synth_tacos_knobs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                               const syn_stop *stop, syn_knobs *knobs, tc_sched **out);

#endif
