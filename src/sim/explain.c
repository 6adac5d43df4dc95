/*
 * explain: why the two models price a plan differently (tc_sim_explain, include/tacos/sim.h).
 *
 * Accepts: an event-model result traced with opts.explain (its critical path) and an ab-model result of the
 *   same plan and size.
 * Returns: one sentence naming the effect behind the larger part of the gap, or "agree" within 3%.
 * The effects, from the critical path (a chain of link services summing to the event time) against the
 * ab terms (sum of the rounds' dilation and congestion terms):
 *   - dilation: the event model stores and forwards a chunk on every hop of its route (beta * bytes per
 *     hop, cp_forward), where eq. 1 pipelines a route (its alpha per hop plus one beta term);
 *   - queueing: critical chunks waited behind other chunks on a link (cp_queue): contention across
 *     rounds, or more than the round's congestion term, which eq. 1 does not see;
 *   - congestion: every chunk pays alpha on each link it holds in the event model (cp_latency beyond the
 *     ab dilation sum), eq. 1 once per round;
 *   - when the event model is faster: eq. 1 runs rounds back to back, each as long as its slowest link
 *     (the congestion term over the busiest link), while chunks in the event model go when their data is
 *     there, so rounds overlap and a lightly loaded link does not wait for the busiest one.
 */
#include "sim_int.h"

#include <math.h>
#include <stdio.h>

const char *tc_sim_explain(const tc_sim_result *ev, const tc_sim_result *ab, char *buf, size_t n)
{
    char a[32], b[32];
    const double big = fmax(ev->time, ab->time), gap = ev->time - ab->time;
    if (big <= 0 || fabs(gap) <= 0.03 * big) {
        snprintf(buf, n, "the models agree within 3%%");
        return buf;
    }
    const double pct = 100 * fabs(gap) / ab->time;
    if (gap < 0) {
        snprintf(buf, n,
                 "event %.1f%% faster: round barriers; eq. 1 adds %d rounds back to back, each as long as its "
                 "busiest link (%s of congestion terms, %s of dilation), where chunks overlap across rounds in "
                 "the event model",
                 pct, ab->n_rounds, tc_fmt_time(ab->ab_congestion, a, sizeof a),
                 tc_fmt_time(ab->ab_dilation, b, sizeof b));
        return buf;
    }
    const double latency = fmax(0, ev->cp_latency - ab->ab_dilation);
    if (ev->cp_forward >= ev->cp_queue && ev->cp_forward >= latency)
        snprintf(buf, n,
                 "event %.1f%% slower: dilation; chunks are stored and forwarded on every hop of their routes "
                 "(%s of re-sending on the critical path), where eq. 1 pipelines a route",
                 pct, tc_fmt_time(ev->cp_forward, a, sizeof a));
    else if (ev->cp_queue >= latency)
        snprintf(buf, n,
                 "event %.1f%% slower: queueing; chunks on the critical path waited %s behind %d other chunks on "
                 "busy links, contention eq. 1's per-round congestion term does not see",
                 pct, tc_fmt_time(ev->cp_queue, a, sizeof a), ev->cp_queue_hops);
    else
        snprintf(buf, n,
                 "event %.1f%% slower: congestion; each chunk pays alpha on every link it holds (%s on the "
                 "critical path), eq. 1 once per round (%s)",
                 pct, tc_fmt_time(ev->cp_latency, a, sizeof a), tc_fmt_time(ab->ab_dilation, b, sizeof b));
    return buf;
}
