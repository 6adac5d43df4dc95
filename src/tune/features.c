/* Features of the dispatcher (tune.h): what a sample tells the model about the network.
 *
 * The PCCL dispatcher (Big Send-off paper §IV-C) learns from message size and GPU count on one machine.
 * Across topologies those do not tell networks apart (six 16-rank topologies have the same ranks, nodes
 * and ranks per node and different winners), so the model also sees the network, through quantities
 * that do not grow with the rank count: the size per rank against the latency-bandwidth product of the
 * fastest links (where latency stops and bandwidth starts to rule: the alpha-beta crossover), the
 * diameter (how many alphas a ring or tree pays against a routed direct step), the degree (how many links
 * a step can use at once), the cut ratio (whether a congested middle limits all-to-all style patterns),
 * and the spread of bandwidths and latencies (how hierarchical the network is).
 *
 * Costs: O(links) plus one BFS per NPU for the diameter within tc_topo_info_get's budget (sampled
 * beyond it).  Deterministic. */
#include "tune_int.h"

#include "tacos/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tc_tune_feature_names[TC_TUNE_FEATURES] = {
    "log2 bytes",      "log2 ranks",      "log2 nodes",   "log2 ranks per node",    "log2 size / latency-bw product",
    "diameter / ranks",   "log2 degree",     "cut ratio",    "log2 bandwidth spread",  "log2 alpha spread"};

void tc_tune_topo_describe(const tc_topo *topo, tc_tune_topo_id *out)
{
    tc_tune_topo_id_get(topo, out);
    memset(out->net, 0, sizeof out->net);
    out->has_net = 0;
    const int R = topo->n_npus;
    if (R < 1 || topo->n_links < 1)
        return;
    double amin = INFINITY, amax = 0, bmin = INFINITY, bmax = 0, cut = 0;
    double inj_min = INFINITY;
    int npu_links = 0;
    for (int i = 0; i < topo->n_links; i++) {
        const tc_link *l = &topo->links[i];
        if (l->src >= R || l->dst >= R) /* switch vertices: not an NPU's link */
            continue;
        const double bw = l->beta > 0 ? 1 / l->beta : INFINITY;
        if (l->alpha < amin) amin = l->alpha;
        if (l->alpha > amax) amax = l->alpha;
        if (bw < bmin) bmin = bw;
        if (bw > bmax) bmax = bw;
        npu_links++;
        if ((l->src < R / 2) != (l->dst < R / 2) && l->src < R / 2)
            cut += bw;
    }
    if (npu_links == 0 || !isfinite(bmin) || !isfinite(bmax))
        return;
    double *inj = calloc((size_t)R, sizeof *inj);
    if (!inj)
        return;
    for (int i = 0; i < topo->n_links; i++) {
        const tc_link *l = &topo->links[i];
        if (l->src < R && l->dst < R && l->beta > 0)
            inj[l->src] += 1 / l->beta;
    }
    for (int r = 0; r < R; r++)
        if (inj[r] < inj_min)
            inj_min = inj[r];
    free(inj);
    tc_ctx quiet;
    tc_buf sink = {0};
    tc_ctx_init(&quiet);
    quiet.sink = tc_diag_buffer;
    quiet.sink_user = &sink;
    tc_topo_info info;
    int diameter = 1;
    if (tc_topo_info_get(&quiet, topo, &info) == TC_OK && info.diameter > 0)
        diameter = info.diameter;
    free(sink.data);
    out->net[TC_TUNE_NET_ALPHA_MIN] = amin;
    out->net[TC_TUNE_NET_ALPHA_MAX] = amax;
    out->net[TC_TUNE_NET_BW_MIN] = bmin;
    out->net[TC_TUNE_NET_BW_MAX] = bmax;
    out->net[TC_TUNE_NET_INJ_BW] = inj_min > 0 && isfinite(inj_min) ? inj_min : bmin;
    out->net[TC_TUNE_NET_DIAMETER] = diameter;
    out->net[TC_TUNE_NET_DEGREE] = (double)npu_links / R;
    out->net[TC_TUNE_NET_CUT] = R >= 2 ? cut / ((R / 2) * out->net[TC_TUNE_NET_INJ_BW]) : 1;
    out->has_net = 1;
}

void tc_tune_features_get(const tc_tune_topo_id *id, uint64_t bytes, double x[TC_TUNE_FEATURES])
{
    double net[TC_TUNE_NET];
    if (id->has_net)
        memcpy(net, id->net, sizeof net);
    else {
        net[TC_TUNE_NET_ALPHA_MIN] = net[TC_TUNE_NET_ALPHA_MAX] = 0.5e-6;
        net[TC_TUNE_NET_BW_MIN] = net[TC_TUNE_NET_BW_MAX] = 50e9;
        net[TC_TUNE_NET_INJ_BW] = 50e9 * (id->ranks > 1 ? id->ranks - 1 : 1);
        net[TC_TUNE_NET_DIAMETER] = 1;
        net[TC_TUNE_NET_DEGREE] = id->ranks > 1 ? id->ranks - 1 : 1;
        net[TC_TUNE_NET_CUT] = 1;
    }
    const double R = id->ranks > 0 ? id->ranks : 1;
    x[0] = log2((double)bytes);
    x[1] = log2(R);
    x[2] = log2((double)(id->nodes > 0 ? id->nodes : 1));
    x[3] = log2((double)(id->rpn > 0 ? id->rpn : 1));
    const double ab = net[TC_TUNE_NET_ALPHA_MIN] * net[TC_TUNE_NET_INJ_BW];
    x[4] = ab > 0 ? log2((double)bytes / R / ab) : x[0] - x[1];
    x[5] = net[TC_TUNE_NET_DIAMETER] / R; /* a ring 0.5 (bidirectional) or 1 at any size, fully connected 1/R */
    x[6] = log2(net[TC_TUNE_NET_DEGREE] > 1 ? net[TC_TUNE_NET_DEGREE] : 1);
    x[7] = net[TC_TUNE_NET_CUT];
    x[8] = net[TC_TUNE_NET_BW_MIN] > 0 ? log2(net[TC_TUNE_NET_BW_MAX] / net[TC_TUNE_NET_BW_MIN]) : 0;
    x[9] = net[TC_TUNE_NET_ALPHA_MIN] > 0 ? log2(net[TC_TUNE_NET_ALPHA_MAX] / net[TC_TUNE_NET_ALPHA_MIN]) : 0;
    for (int k = 0; k < TC_TUNE_FEATURES; k++)
        if (!isfinite(x[k]))
            x[k] = 0;
}
