/* The vendor library's own algorithms as candidates: NCCL's ring and tree priced by NCCL's own cost model,
 * so that a bundle leaves uncovered the byte ranges where the runtime's built-in choice is predicted to
 * win (MSCCL then falls back to it: a call no file serves runs the library's algorithm).
 *
 * The model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime, at commit
 * 01afd20a77b5804e0ecf1042509dd9d20ebf9e93): for each algorithm a and protocol p,
 *   time = latency[a][p] + bytes / bandwidth[a][p]     (NCCL: us and GB/s; here s and B/s)
 *   bandwidth = busBw x ratio, ratio = ranks / nsteps for the ring (nsteps 2(R-1) all-reduce, R-1 all-gather
 *     and reduce-scatter, R broadcast and reduce), 0.5 for the tree;
 *   busBw = channels x speed: here the bandwidth the topology gives a ring channel set: the summed
 *     bandwidth of an NPU's links inside its server (the smallest over NPUs); with several servers the
 *     smaller of that and of a server's summed links out of it (its NICs: each channel's ring leaves a
 *     server once, channels spread over the NICs), the smallest over servers;
 *   protocol factors: ring LL x 1/4 (several nodes or all-reduce, else 1/3); tree x 0.9 capped at 80 GB/s
 *     (more than two nodes, else 110), tree LL x 1/3.8; LL128 is left out (NCCL enables it by default
 *     only on some GPU and NVLink combinations);
 *   latency = baseLat[a][p] + per step hwLat: ring (nsteps - nInterSteps) x intra + nInterSteps x inter
 *     (nInterSteps as nsteps with nodes for ranks), tree 2 ((R/nodes - 1) intra + log2(nodes) inter);
 *     intra = NVLink's hwLat (x 1.8 for LL across nodes), inter = the network's; broadcast and reduce on
 *     the ring pay nsteps x the per-step latency;
 *   corrections: the tree's bandwidth x treeCorrectionFactor[p][log2(bytes / 64)] below 2^22 x 64 B; the
 *     ring's Simple all-reduce latency x 1.9 across nodes from R/16 x 64 KiB up.
 * RCCL (ROCm/rccl src/graph/tuning.cc at commit 0023b9b0): the same model with its own tables (base
 * latencies 12, 12, 17 us; xGMI and network hwLat), ring LL x 1/5, tree x 0.27 capped at 70 GB/s across
 * nodes (90 inside one), tree LL x 1/2.3, a ringCorrectionFactor beside the tree's and no 1.9 plateau.
 * The constants below are NCCL's numbers (latencies in us); the model picks the fastest (algorithm,
 * protocol) as NCCL's getAlgoInfo does.  Collectives NCCL runs as point-to-point (all-to-all, gather,
 * scatter) have no model here.
 */
#include "tune_int.h"

#include "tacos/compile.h"
#include "tacos/msccl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LL, LL128, SIMPLE, NPROTO };
enum { TREE, RING };

/* One library's tuning tables (latencies in us, as the sources write them). */
typedef struct vmodel {
    const char *name;
    double base_lat[2][NPROTO];
    double hw_intra[2][NPROTO], hw_net[2][NPROTO];
    int rccl;                       /* RCCL's refinements instead of NCCL's */
    double tree_corr[NPROTO][22];
    double ring_corr[NPROTO][22];   /* RCCL only */
} vmodel;

static const vmodel nccl = {
    "NCCL",
    {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
    {{.52, 1.25, 28}, {.47, 1.9, 3.4}},
    {{5.0, 8.5, 50}, {2.7, 4.0, 9.6}},
    0,
    {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}},
    {{0}},
};

/* ROCm/rccl src/graph/tuning.cc at commit 0023b9b0814b6779a84bbb2d477682432c881a41 */
static const vmodel rccl = {
    "RCCL",
    {{12.0, 12.0, 17.0}, {12.0, 12.0, 17.0}},
    {{1.2, 1.2, 3.8}, {2.3, 2.3, 2.7}},
    {{9.8, 9.8, 19.5}, {2.0, 2.0, 4.5}},
    1,
    {{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .84, .49, .42, .60, .75, .87, .94, .94, .99, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .84, .49, .42, .60, .75, .87, .94, .94, .99, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .41, .27, .25, .39, .46, .72, .76, .87, .92, .97, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
    {{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .25, .41, .55, .56, .78, .94, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .25, .41, .55, .56, .78, .94, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, .04, .08, .09, .09, .11, .13, .25, .40, .59, .76, .86, 1.0, 1.0, 1.0, 1.0, 1.0}},
};
static const char *const proto_name[NPROTO] = {"LL", "LL128", "Simple"};

static int log2i(uint64_t v)
{
    int l = -1;
    while (v) {
        v >>= 1;
        l++;
    }
    return l;
}

int tc_tune_vendor_time_of(int lib, const tc_topo *topo, tc_coll coll, uint64_t bytes, double *time, char *what,
                           size_t n)
{
    const vmodel *vm = lib ? &rccl : &nccl;
    if (coll != TC_COLL_ALLREDUCE && coll != TC_COLL_ALLGATHER && coll != TC_COLL_REDUCESCATTER &&
        coll != TC_COLL_BROADCAST && coll != TC_COLL_REDUCE)
        return 0;
    const int R = topo->n_npus;
    if (R < 2)
        return 0;
    tc_tune_topo_id id;
    tc_tune_topo_id_get(topo, &id);
    const int nodes = id.nodes > 0 ? id.nodes : 1;
    /* per-GPU bandwidth inside and out of the server, B/s */
    double *in = calloc((size_t)R, sizeof *in), *out = calloc((size_t)R + 1, sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        return 0;
    }
    for (int i = 0; i < topo->n_links; i++) {
        const tc_link *l = &topo->links[i];
        if (l->src >= R || l->dst >= R || l->beta <= 0)
            continue;
        const int same = !topo->node_of || topo->node_of[l->src] == topo->node_of[l->dst];
        if (same)
            in[l->src] += 1 / l->beta;
        else if (topo->node_of[l->src] >= 0 && topo->node_of[l->src] < R)
            out[topo->node_of[l->src]] += 1 / l->beta; /* per server */
    }
    double intra = INFINITY, inter = INFINITY;
    for (int r = 0; r < R; r++) {
        if (in[r] < intra)
            intra = in[r];
        if (r < nodes && out[r] < inter)
            inter = out[r];
    }
    free(in);
    free(out);
    double speed = nodes > 1 ? fmin(intra > 0 ? intra : inter, inter) : intra;
    if (!(speed > 0) || !isfinite(speed))
        return 0;
    const double bus = speed / 1e9; /* GB/s */
    const int nsteps = coll == TC_COLL_ALLREDUCE ? 2 * (R - 1) : coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE
                                                                      ? R
                                                                      : R - 1;
    const int ninter = coll == TC_COLL_ALLREDUCE ? 2 * (nodes - 1) : coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE
                                                                         ? nodes
                                                                         : nodes - 1;
    double best = INFINITY;
    int ba = -1, bp = -1;
    for (int a = TREE; a <= RING; a++) {
        if (a == TREE && coll != TC_COLL_ALLREDUCE)
            continue;
        for (int p = 0; p < NPROTO; p++) {
            if (p == LL128)
                continue;
            double bw = bus;
            if (vm->rccl) {
                if (a == RING && p == LL)
                    bw *= 1.0 / 5;
                if (a == TREE)
                    bw = fmin(bw * .27, nodes > 1 ? 70.0 : 90.0);
                if (a == TREE && p == LL)
                    bw *= 1.0 / 2.3;
            } else {
                if (a == RING && p == LL)
                    bw *= nodes > 1 || coll == TC_COLL_ALLREDUCE || coll == TC_COLL_REDUCE ? 1.0 / 4 : 1.0 / 3;
                if (a == TREE)
                    bw = fmin(bw * .9, nodes > 2 ? 80.0 : 110.0);
                if (a == TREE && p == LL)
                    bw *= 1.0 / 3.8;
            }
            bw *= a == RING ? (double)R / nsteps : .5;
            double intra_lat = vm->hw_intra[a][p], inter_lat = vm->hw_net[a][p];
            if (nodes > 1 && p == LL)
                intra_lat *= 1.8;
            double lat = vm->base_lat[a][p];
            if (a == RING) {
                if (coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE)
                    lat += nsteps * (nodes > 1 ? inter_lat : intra_lat);
                else
                    lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
            } else
                lat += 2 * ((R / nodes - 1) * intra_lat + log2i((uint64_t)nodes) * inter_lat);
            const int ls = log2i(bytes >> 6);
            if (a == TREE && ls >= 0 && ls < 22)
                bw *= vm->tree_corr[p][ls];
            else if (vm->rccl && a == RING && ls >= 0 && ls < 22)
                bw *= vm->ring_corr[p][ls];
            if (!vm->rccl && a == RING && p == SIMPLE && nodes > 1 && coll == TC_COLL_ALLREDUCE &&
                bytes >= R / 16.0 * 65536)
                lat *= 1.9;
            const double t = (lat + (double)bytes / (1000 * bw)) * 1e-6;
            if (t < best) {
                best = t;
                ba = a;
                bp = p;
            }
        }
    }
    if (ba < 0)
        return 0;
    *time = best;
    if (n)
        snprintf(what, n, "%s %s/%s", vm->name, ba == RING ? "ring" : "tree", proto_name[bp]);
    return 1;
}

int tc_tune_vendor_time(const tc_topo *topo, tc_coll coll, uint64_t bytes, double *time, char *what, size_t n)
{
    return tc_tune_vendor_time_of(0, topo, coll, bytes, time, what, n);
}

/* Does the vendor win at size s over the file of algo? (-1: error) */
static int vendor_wins(int lib, tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go, int algo,
                       uint64_t s, double *tv, double *tp, char *what, size_t n)
{
    if (!tc_tune_vendor_time_of(lib, topo, coll, s, tv, what, n))
        return 0;
    /* the file a bundle writes: candidates' pricing (tc_tune_price) lowered for go->target, the bundle's own
     * lowering options, or the library's defaults when the caller names none; priced as `tacosc sim FILE`
     * prices the file (the lowered program keeps only each rank's order of sends) */
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    lo.target = lib ? TC_TARGET_RCCL : TC_TARGET_NCCL;
    tc_gen_opts g = *go;
    g.size = s;
    if (!g.target)
        g.target = &lo;
    if (tc_tune_price(ctx, topo, coll, &g, NULL, algo, tp, NULL, NULL, 0) != TC_OK)
        return -1;
    return *tv < *tp;
}

tc_status tc_tune_vendor_uncover(tc_ctx *ctx, int lib, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                                 const uint64_t *sizes, int n_sizes, tc_tune_range **ranges, int *n_ranges,
                                 int *n_uncovered)
{
    tc_tune_range *r = *ranges;
    const int nr = *n_ranges;
    *n_uncovered = 0;
    double tv = 0;
    char what[64];
    if (!tc_tune_vendor_time_of(lib, topo, coll, sizes[0], &tv, what, sizeof what))
        return TC_OK;
    /* per sample: does the vendor win over the plan of its range? */
    int *vw = calloc((size_t)n_sizes, sizeof *vw), *rk = calloc((size_t)n_sizes, sizeof *rk);
    tc_tune_range *out = calloc((size_t)(2 * n_sizes + nr + 1), sizeof *out);
    if (!vw || !rk || !out) {
        free(vw);
        free(rk);
        free(out);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < n_sizes; i++) {
        int k = 0;
        while (k + 1 < nr && r[k].max_bytes && sizes[i] > r[k].max_bytes)
            k++;
        rk[i] = k;
        double tp;
        vw[i] = vendor_wins(lib, ctx, topo, coll, go, r[k].algo, sizes[i], &tv, &tp, what, sizeof what) == 1;
    }
    /* walk the samples: covered runs keep their range's algorithm, the vendor's runs become gaps, a
     * boundary between two samples bisected to 1/64 of the size as tc_tune_bundle_ranges does */
    int no = 0;
    uint64_t start = 0;
    int cur_v = vw[0], cur_k = rk[0];
    for (int i = 1; i <= n_sizes; i++) {
        uint64_t end = UINT64_MAX; /* the first size of the next run */
        if (i < n_sizes && vw[i] == cur_v && rk[i] == cur_k)
            continue;
        if (i < n_sizes) {
            if (rk[i] != cur_k && vw[i] == cur_v && !cur_v)
                end = r[rk[i]].min_bytes; /* a range boundary inside covered sizes */
            else {
                uint64_t lo = sizes[i - 1], hi = sizes[i];
                if (rk[i] != cur_k && r[rk[i]].min_bytes > lo)
                    hi = r[rk[i]].min_bytes > hi ? hi : r[rk[i]].min_bytes;
                while (hi - lo > (lo / 64 > 1 ? lo / 64 : 1)) {
                    uint64_t mid = (uint64_t)llround(sqrt((double)lo * (double)hi));
                    if (mid <= lo || mid >= hi)
                        mid = lo + (hi - lo) / 2;
                    double tp;
                    int k = rk[i - 1];
                    int w = vendor_wins(lib, ctx, topo, coll, go, r[k].algo, mid, &tv, &tp, what, sizeof what) == 1;
                    *(w == cur_v ? &lo : &hi) = mid;
                }
                end = hi;
            }
        }
        if (!cur_v) {
            out[no] = r[cur_k];
            out[no].min_bytes = start;
            out[no].max_bytes = end == UINT64_MAX ? 0 : end - 1;
            if (out[no].max_bytes && r[cur_k].max_bytes && out[no].max_bytes > r[cur_k].max_bytes)
                out[no].max_bytes = r[cur_k].max_bytes;
            no++;
        } else {
            char a[32], b[32];
            double tp = 0;
            uint64_t at = sizes[i - 1];
            vendor_wins(lib, ctx, topo, coll, go, r[cur_k].algo, at, &tv, &tp, what, sizeof what);
            tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0,
                    "bundle: %s to %s left uncovered: the runtime's own algorithm is predicted to win there (%s "
                    "%.3f us against %.3f us for %s at %llu B); MSCCL falls back to it",
                    tc_fmt_bytes((double)start, a, sizeof a), end == UINT64_MAX ? "no limit" : tc_fmt_bytes((double)(end - 1), b, sizeof b),
                    what, tv * 1e6, tp * 1e6, tc_algo_registry[r[cur_k].algo].name, (unsigned long long)at);
            (*n_uncovered)++;
        }
        if (i < n_sizes) {
            start = end;
            cur_v = vw[i];
            cur_k = rk[i];
        }
    }
    free(vw);
    free(rk);
    if (*n_uncovered == 0 || no == 0) { /* nothing to uncover, or everything: keep what there was */
        free(out);
        if (no == 0 && *n_uncovered)
            tc_warn(ctx, NULL, 0, "bundle: the runtime's own algorithm is predicted to win at every sampled size; "
                                  "the bundle keeps its plans anyway");
        *n_uncovered = no == 0 ? 0 : *n_uncovered;
        return TC_OK;
    }
    free(r);
    *ranges = out;
    *n_ranges = no;
    return TC_OK;
}

int tc_tune_vendor_note(tc_ctx *ctx, int lib, const tc_topo *topo, const tc_sched *s, char *line, size_t n)
{
    double tv = 0;
    char what[64], a[32], b[32], sz[32];
    if (!(s->time > 0) || !tc_tune_vendor_time_of(lib, topo, s->coll, s->size_bytes, &tv, what, sizeof what) ||
        !(tv < s->time))
        return 0;
    const double less = 100 * (1 - tv / s->time);
    tc_warn(ctx, NULL, 0,
            "auto: the runtime's own algorithm is predicted faster at %s: %s %s against %s for %s (%.1f%% less); "
            "the %s plan is written anyway (an MSCCL file cannot hold %s's algorithm): leave this size to %s by "
            "not loading the file for it, or use 'tacosc bundle', which leaves such sizes uncovered",
            tc_fmt_bytes((double)s->size_bytes, sz, sizeof sz), what, tc_fmt_time(tv, a, sizeof a),
            tc_fmt_time(s->time, b, sizeof b), s->algo ? s->algo : "the chosen", less, s->algo ? s->algo : "chosen",
            lib ? "RCCL" : "NCCL", lib ? "RCCL" : "NCCL");
    size_t len = line ? strlen(line) : n;
    if (len < n)
        snprintf(line + len, n - len, "; %s predicted faster (%s, %.1f%% less)", what, a, less);
    return 1;
}
