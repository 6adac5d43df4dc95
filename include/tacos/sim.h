/**
 * @file sim.h
 * Cost of a schedule on a topology (src/sim/): the alpha-beta model with congestion and dilation per
 * step (photonic paper eq. 1 / Alg. 2), a link-level event simulation, lower bounds on a collective's
 * time, and the SVG pictures of a result.  The event model is tacosc's one prediction: the compile summary
 * and a JSON plan's `predicted_time` are its time.
 *
 * Routes.  A transfer crosses the links of its `route` when route_len > 0, else its `link` when >= 0,
 * else a hop-count shortest path of the topology computed with igraph (ties broken by lowest link id;
 * the igraph_t lives only inside tc_sim_run).  src == dst transfers (local copies) cost nothing.
 *
 * Bytes.  Every transfer moves one chunk of `chunk_bytes` bytes (times the plan's wire_scale when set: LL
 * packets); with opts.size != 0 the chunk size is
 * rescaled as tc_sched_create would for that size (size / n_chunks, alltoall size * R / n_chunks).
 * Per-transfer costs (opts.xfer_scale, xfer_pre, xfer_post; the sparse pass's cost model, sparse.h): when
 * given, transfer x moves scale[x] x chunk bytes on each of its links, its first hop becomes ready
 * pre[x] x chunk bytes seconds after its data (compression at the source) and it arrives post[x] x chunk
 * bytes seconds after its last hop lets go (decompression at the destination); in the ab model the
 * congestion term sums the scaled bytes and the codec times add to the route's alpha.  Local copies have
 * none of these.  On the critical path (explain) the codec times count in cp_transfer.
 *
 * Model TC_SIM_AB (eq. 1).  Transfers are grouped by `step` (a round).  In round i, the dilation term is
 * the largest summed alpha along one route (uniform links: alpha * hops), the congestion term the largest
 * over links of beta(link) * bytes routed on that link in the round (uniform: beta * c_i * w).  The round
 * costs their sum; rounds run back to back; the time is the sum over rounds.
 *
 * Model TC_SIM_EVENT (the TACOS paper's link model, simulated).  A chunk holds a link for
 * alpha + beta * bytes and is at the far end when it lets go; a route is stored and forwarded per chunk
 * (the next hop is ready at that arrival).  Under the topology's link model te-ccl (tc_link_times) it
 * holds the link its hold time and is at the far end at its latency from its start, both from
 * tc_link_times; everything else below is the same.  A transfer x is ready when its source holds what it sends,
 * per the checker's semantics: every transfer y into x.src of the same chunk with y.t_end <= x.t_start
 * (schedule times) has arrived (time 0 when there is none).  The first hops of the transfers from one link
 * to one destination form a channel (one program's sends to one peer, as an MSCCL threadblock issues them):
 * they go in the plan's issue order (t_start, step, index), a send waiting behind an earlier one of its
 * channel that is not ready.  A link never idles while a chunk is ready for it: among the ready head sends
 * of its channels and the chunks forwarded to it (hops after the first, moved by the network in arrival
 * order) it serves the one ready first, ties in issue order.  So a plan whose links carry one channel each
 * (every plan of direct links: tacos, ring on a ring) keeps its order and, where it never idles a link
 * while a chunk is ready (tacos all-gather, broadcast and gather, ring on a ring), its own times; a chunk
 * forwarded over a route does not wait behind one issued earlier that reaches the link later.  The time is
 * the last arrival.  A schedule with t_end < t_start on some transfer is refused (TC_ERR_INVALID); a
 * zero-length transfer's arrival counts only for transfers issued strictly later.  Schedule times are
 * compared with a tolerance of 1e-9 of the schedule's span; simulated times are integer picoseconds, a
 * link's occupancy rounded as the TACOS synthesizer rounds it (tc_time_ps: exact ties, tacos times to the
 * bit), at most TC_TIME_MAX.
 * Two paths compute it: one pass in issue order (O(M + hops)), valid while no link served a chunk ahead of
 * another, of a different channel or forwarded, that was ready before it; when that check fails, or
 * opts.general is set, a discrete-event simulation with a time-ordered event queue and a queue of ready
 * chunks per link (O((M + hops) log M)).  Both give the same result; tc_sim_result.general says which ran.
 *
 * Switches (switch vertices of tc_topo_unwind, models node and multicast): a transfer through a switch is
 * routed over the link into it and the link out; the switch is a store-and-forward vertex like any hop.
 * Transfers of one chunk from one source with the same t_start whose routes begin with the same link into
 * a multicast switch are one multicast (mcast.c): the first in issue order (the leader) carries that link,
 * the others go on from the switch when the leader's chunk is there, so the link carries the chunk once
 * (both event paths and the ab model).
 *
 * Both models report per-link busy time and utilization = busy / time.
 *
 * Bounds (tc_sim_bound).  Lower bounds on the event-model time of any plan of the collective that moves
 * chunks of the plan's size, the largest of which is `bound` (in the topology's link model: under te-ccl a
 * link carries one chunk per hold time, each at the far end its latency after its start, and the
 * latency bound sums latencies):
 *  - link: per NPU, the chunks it must receive (send) over its in-links (out-links), each link carrying one
 *    chunk per alpha + beta * chunk;
 *  - aggregate: the chunk crossings the whole collective needs (all-gather and broadcast: each chunk
 *    reaches R - 1 NPUs; reduce-scatter, reduce: R - 1 merges per chunk; all-reduce: 2(R - 1) messages per
 *    chunk, the one-way gossip minimum; gather, scatter, all-to-all: hop distances) over every link;
 *  - cut: for a set S of NPUs (each server of <nodes>, the halves of each grid dimension, the topology's
 *    minimum cut from igraph's max-flow), the chunks that must enter (leave) S over the links into (out
 *    of) S;
 *  - latency: the cheapest store-and-forward path (sum of alpha + beta * chunk) between the farthest pair
 *    that must communicate.
 * The TACOS paper's §V-A ideal (bandwidth over the smallest injection plus the diameter's alpha) is kept
 * beside them for comparison with the paper; it is not a bound of this model.
 */
#ifndef TACOS_SIM_H
#define TACOS_SIM_H

#include "tacos/ir.h"

typedef enum { TC_SIM_AB = 0, TC_SIM_EVENT = 1 } tc_sim_model;

typedef struct tc_sim_opts {
    tc_sim_model model;
    uint64_t size;   /**< collective size in bytes; 0 = the schedule's own */
    int bins;        /**< time bins of the per-link occupancy timeline (0 = none, for SVG use ~100) */
    int general;     /**< event model: take the event-queue path even where one pass would do */
    int explain;     /**< event model: trace the critical path (implies general) */
    int trace;       /**< event model: trace the critical path whenever the event-queue path runs anyway */
    int no_bound;    /**< skip the lower bounds (bound, efficiency and ideal stay 0) */
    const double *xfer_scale; /**< per transfer: bytes moved over chunk bytes (NULL: 1) */
    const double *xfer_pre;   /**< per transfer: seconds per chunk byte before the first hop (NULL: 0) */
    const double *xfer_post;  /**< per transfer: seconds per chunk byte after the last hop (NULL: 0) */
} tc_sim_opts;

void tc_sim_opts_init(tc_sim_opts *o);

/**
 * Link models (tc_link_model, src/sim/linkmodel.c): the topology's t->link_model prices every link for the
 * event model, the bounds and the tacos synthesizer.  For one chunk of `bytes` on link l: *hold, seconds the
 * chunk holds the link (the next starts no earlier); *lat, seconds from the start of its send until it is
 * at the far end.  tacos: both alpha + beta * bytes.  te-ccl: hold = beta * bytes, lat = hold + a, or a
 * alone on a link from a switch vertex to an NPU, with a = alpha, or 0 where alpha <= epoch / 10.
 * `epoch` is tc_link_epoch(t, bytes): the fastest link's beta * bytes (0 when no link has a beta).
 */
void tc_link_times(const tc_topo *t, int l, double bytes, double epoch, double *hold, double *lat);
double tc_link_epoch(const tc_topo *t, double bytes);

/** Parse "ab" or "event". */
tc_status tc_sim_model_parse(const char *s, tc_sim_model *out);
const char *tc_sim_model_name(tc_sim_model m);

/** Which lower bound binds (tc_bound.binding). */
typedef enum { TC_BOUND_NONE = 0, TC_BOUND_LINK, TC_BOUND_AGGREGATE, TC_BOUND_CUT, TC_BOUND_LATENCY } tc_bound_kind;
/** "link", "aggregate", "cut", "latency" ("none"). */
const char *tc_bound_kind_name(tc_bound_kind k);

/** Lower bounds on a collective's time (see the file comment); seconds, 0 where none applies. */
typedef struct tc_bound {
    double time;            /**< the largest of link, aggregate, cut and latency */
    tc_bound_kind binding;  /**< which one it is */
    double link;            /**< per-NPU link bound */
    int link_npu;           /**< its NPU */
    int link_out;           /**< 1: its out-links (sends), 0: its in-links (receives) */
    double aggregate;       /**< every link of the topology */
    double cut;             /**< the best cut bound */
    char cut_desc[96];      /**< which set and direction, e.g. "node 1 (npus 8-15), in" */
    double latency;         /**< store-and-forward path of the farthest pair */
    double ideal;           /**< TACOS paper §V-A ideal, for comparison (not a bound of this model) */
} tc_bound;

/**
 * Bounds for a collective shaped as `s` (collective, ranks, chunks, chunk bytes, root; its transfers are
 * not read) of `size` bytes (0: s->size_bytes; chunk bytes rescaled as in tc_sim_opts.size) on `topo`
 * (indexed, no switches left, switch vertices allowed, s->n_ranks NPUs).  One line describing the binding bound: tc_bound_describe.
 */
tc_status tc_sim_bound(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, uint64_t size, tc_bound *out);
/** The per-NPU count behind tc_sim_bound's link bound: chunks NPU v must receive (dir 0) or send (dir 1) in
 *  the collective of R ranks, C chunks, K per rank (all-to-all: per rank pair) and the root root_rank. */
int64_t tc_bound_npu_need(tc_coll coll, int64_t R, int64_t C, int64_t K, int root_rank, int v, int dir);
/** "cut: node 1 (npus 8-15), in" / "link: npu 3 in-links" / ... into buf (n bytes). */
const char *tc_bound_describe(const tc_bound *b, char *buf, size_t n);

/** The result of one simulation.  Arrays are owned by the result. */
typedef struct tc_sim_result {
    tc_sim_model model;
    tc_coll coll;
    int n_ranks;
    uint64_t size;        /**< collective size simulated, bytes */
    double chunk_bytes;   /**< bytes per transfer */
    double time;          /**< collective time, s */
    double algbw, busbw;  /**< bytes/s (nccl-tests conventions; 0 when time is 0) */
    tc_bound bound;       /**< lower bounds (zero with opts.no_bound or when they cannot be computed) */
    double ideal;         /**< bound.ideal: TACOS §V-A, s (0 when unknown) */
    double efficiency;    /**< bound.time / time (0 when unknown) */
    int n_links;
    double *link_busy;    /**< per link: seconds busy */
    double *link_util;    /**< per link: busy / time */
    double *link_bytes;   /**< per link: bytes carried */
    double max_util, mean_util;
    int n_rounds;         /**< AB model: rounds (steps); event model: 0 */
    int max_congestion;   /**< AB: largest number of chunks on one link in one round */
    int max_dilation;     /**< AB: longest route in hops; event: longest route too */
    double ab_dilation;   /**< AB: sum over rounds of the dilation terms, s */
    double ab_congestion; /**< AB: sum over rounds of the congestion terms, s */
    int general;          /**< event: 1 when the event-queue path ran */
    /* Event model with opts.explain (or opts.trace when the event queue ran): the critical path, a chain of
     * link services (a chunk holding a link) from time 0 to the last arrival, each starting when the one
     * before it ended; they sum to `time`. */
    int cp_hops;          /**< services on the critical path */
    double cp_latency;    /**< alpha of the path's own chunks */
    double cp_transfer;   /**< beta * bytes of their first hops */
    double cp_forward;    /**< beta * bytes of their later hops: store and forward over multi-hop routes */
    double cp_queue;      /**< services of other chunks a path chunk waited behind on a link */
    int cp_queue_hops;    /**< how many */
    int bins;             /**< timeline bins (0 = no timeline) */
    double *timeline;     /**< n_links * bins: busy fraction of link l in bin b at [l * bins + b] */
} tc_sim_result;

/**
 * Simulate `s` on `topo` (indexed, no switches left: unwind first, switch vertices allowed; its NPU count
 * must equal s->n_ranks).
 * Returns TC_ERR_INVALID with a diagnostic when a transfer names a rank, link or route the topology lacks
 * or two ranks are not connected.
 */
tc_status tc_sim_run(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const tc_sim_opts *opts,
                     tc_sim_result **out);
void tc_sim_result_free(tc_sim_result *r);

/**
 * Why an event-model result `ev` (run with opts.explain) and an ab-model result `ab` of the same plan
 * differ: one sentence naming the effect behind the gap (dilation, queueing, congestion, or round
 * barriers when the event model is faster), or that they agree within 3%.  Written into buf (n bytes).
 */
const char *tc_sim_explain(const tc_sim_result *ev, const tc_sim_result *ab, char *buf, size_t n);

/** One panel of an SVG picture: a result, its caption and a short name for the summary bar chart (NULL:
 *  the caption). */
typedef struct tc_sim_panel {
    const char *title;
    const tc_sim_result *res;
    const char *name;
} tc_sim_panel;

/**
 * Write an SVG a person reads without hovering (src/sim/svg.c): with several panels a bar chart of their
 * times on one scale with the bound marked; a colour legend; per panel its caption, the topology drawn with
 * an igraph layout and every link coloured by utilization, a heat map labelled src -> dst (a matrix up to 64
 * NPUs, else cells in link id order with the busiest links named) with per-class statistics, and, when the
 * result has a timeline, link occupancy on a labelled time axis common to all panels.  `topo` is the
 * indexed, unwound topology the results were simulated on.  Deterministic.
 */
tc_status tc_sim_svg_write(tc_ctx *ctx, const tc_topo *topo, const tc_sim_panel *panels, int n_panels,
                           FILE *f);

#endif
