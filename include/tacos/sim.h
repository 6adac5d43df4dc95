/**
 * @file sim.h
 * Cost of a schedule on a topology (src/sim/): the alpha-beta model with congestion and dilation per
 * step (photonic paper eq. 1 / Alg. 2) and a link-level event simulation with one FIFO queue per directed
 * link.  Also the SVG picture of a result (link-utilization heat map and link-occupancy timeline).
 *
 * Routes.  A transfer crosses the links of its `route` when route_len > 0, else its `link` when >= 0,
 * else a hop-count shortest path of the topology computed with igraph (ties broken by lowest link id;
 * the igraph_t lives only inside tc_sim_run).  src == dst transfers (local copies) cost nothing.
 *
 * Bytes.  Every transfer moves one chunk of `chunk_bytes` bytes; with opts.size != 0 the chunk size is
 * rescaled as tc_sched_create would for that size (size / n_chunks, alltoall size * R / n_chunks).
 *
 * Model TC_SIM_AB (eq. 1).  Transfers are grouped by `step` (a round).  In round i, the dilation term is
 * the largest summed alpha along one route (uniform links: alpha * hops), the congestion term the largest
 * over links of beta(link) * bytes routed on that link in the round (uniform: beta * c_i * w).  The round
 * costs their sum; rounds run back to back; the time is the sum over rounds.
 *
 * Model TC_SIM_EVENT.  Transfers are issued in the order (t_start, step, index).  A transfer x is ready
 * when its source holds what it sends, per the checker's semantics: every transfer y into x.src of the
 * same chunk with y.t_end <= x.t_start (schedule times) has arrived (time 0 when there is none).  Its
 * "step predecessors" are the transfers issued before it on the same link: each directed link is a FIFO
 * served in issue order, so a chunk starts on a link at max(ready, link free).  It occupies the link for
 * bytes * beta and reaches the far end alpha later; multi-hop routes store and forward per chunk (the
 * next hop becomes ready at that arrival).  The time is the last arrival.  A schedule with
 * t_end < t_start on some transfer is refused (TC_ERR_INVALID); a zero-length transfer's arrival counts
 * only for transfers issued strictly later.  Schedule times are compared with a tolerance of 1e-9 of the
 * schedule's span.
 *
 * Both models report per-link busy time (bytes * beta summed) and utilization = busy / time.
 */
#ifndef TACOS_SIM_H
#define TACOS_SIM_H

#include "tacos/ir.h"

typedef enum { TC_SIM_AB = 0, TC_SIM_EVENT = 1 } tc_sim_model;

typedef struct tc_sim_opts {
    tc_sim_model model;
    uint64_t size;   /**< collective size in bytes; 0 = the schedule's own */
    int bins;        /**< time bins of the per-link occupancy timeline (0 = none, for SVG use ~100) */
} tc_sim_opts;

void tc_sim_opts_init(tc_sim_opts *o);

/** Parse "ab" or "event". */
tc_status tc_sim_model_parse(const char *s, tc_sim_model *out);
const char *tc_sim_model_name(tc_sim_model m);

/** The result of one simulation.  Arrays are owned by the result. */
typedef struct tc_sim_result {
    tc_sim_model model;
    tc_coll coll;
    int n_ranks;
    uint64_t size;        /**< collective size simulated, bytes */
    double chunk_bytes;   /**< bytes per transfer */
    double time;          /**< collective time, s */
    double algbw, busbw;  /**< bytes/s (nccl-tests conventions; 0 when time is 0) */
    double ideal;         /**< tc_topo_ideal_time bound, s (0 when unknown) */
    double efficiency;    /**< ideal / time (0 when unknown) */
    int n_links;
    double *link_busy;    /**< per link: seconds busy */
    double *link_util;    /**< per link: busy / time */
    double max_util, mean_util;
    int n_rounds;         /**< AB model: rounds (steps); event model: 0 */
    int max_congestion;   /**< AB: largest number of chunks on one link in one round */
    int max_dilation;     /**< AB: longest route in hops; event: longest route too */
    int bins;             /**< timeline bins (0 = no timeline) */
    double *timeline;     /**< n_links * bins: busy fraction of link l in bin b at [l * bins + b] */
} tc_sim_result;

/**
 * Simulate `s` on `topo` (indexed, no switches: unwind first; its NPU count must equal s->n_ranks).
 * Returns TC_ERR_INVALID with a diagnostic when a transfer names a rank, link or route the topology lacks
 * or two ranks are not connected.
 */
tc_status tc_sim_run(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const tc_sim_opts *opts,
                     tc_sim_result **out);
void tc_sim_result_free(tc_sim_result *r);

/** One panel of an SVG picture: a result with its caption. */
typedef struct tc_sim_panel {
    const char *title;
    const tc_sim_result *res;
} tc_sim_panel;

/**
 * Write an SVG: per panel a heat map of link utilization (one <rect class="link"> per link, in link id
 * order, with a <title> naming the link and its utilization) and, when the result has a timeline, a
 * link-occupancy timeline (rows are links, or groups of links when there are more than 128).
 * Deterministic: fixed formats, id order.
 */
tc_status tc_sim_svg_write(tc_ctx *ctx, const tc_topo *topo, const tc_sim_panel *panels, int n_panels,
                           FILE *f);

#endif
