/* Byte ranges of an MSCCL bundle: which algorithm serves which sizes, so that the runtime, which takes a
 * file for a call when minBytes <= bytes <= maxBytes (maxBytes 0: no limit; man 7 tacosc-deploy, from
 * msccl-executor-nccl and RCCL src/misc/msccl/msccl_lifecycle.cc), finds exactly one file for every size.
 *
 * Trace (sampled 1K, 2K, 4K, 8K; winners tacos, tacos, ring2, ring2): the boundary lies in (2K, 4K];
 * bisected (model: to the byte; simulation: to 1/64 of the size) at, say, 3001: segments [0, 3000] tacos
 * and [3001, no limit] ring2; the plans are made at 1K or 2K (the sample nearest the middle of the range
 * in log scale) and at 4K or 8K. */
#include "tune_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tc_status tc_tune_ranges_build(const uint64_t *starts, const int *algos, int n, tc_tune_range *out, int *n_out)
{
    if (n < 1 || starts[0] != 0)
        return TC_ERR_INVALID;
    for (int i = 1; i < n; i++)
        if (starts[i] <= starts[i - 1])
            return TC_ERR_INVALID;
    int k = 0;
    for (int i = 0; i < n; i++) {
        /* a segment of size 0 alone cannot be written (maxBytes 0 means no limit) and is never called
         * (count > 0): the next segment starts at 0 instead */
        if (i == 0 && n > 1 && starts[1] == 1)
            continue;
        if (k > 0 && out[k - 1].algo == algos[i])
            continue;
        if (k > 0)
            out[k - 1].max_bytes = starts[i] - 1;
        memset(&out[k], 0, sizeof out[k]);
        out[k].min_bytes = k == 0 ? 0 : starts[i];
        out[k].algo = algos[i];
        k++;
    }
    out[k - 1].max_bytes = 0;
    *n_out = k;
    return TC_OK;
}

typedef struct oracle {
    tc_ctx *ctx;
    const tc_topo *topo;
    tc_coll coll;
    const tc_gen_opts *go;
    const tc_tune_model *m;
    tc_tune_topo_id id;
} oracle;

/* Does `b` win over `a` at size (model: the model's pick is not a; simulation: b is faster, a tie going
 * to the earlier registry entry)? */
static tc_status later_wins(oracle *o, int a, int b, uint64_t size, int *yes)
{
    if (o->m) {
        int best, second;
        tc_tune_model_predict(o->m, &o->id, size, &best, &second);
        *yes = best != a;
        return TC_OK;
    }
    tc_gen_opts go = *o->go;
    go.size = size;
    double ta, tb;
    char note[TC_TUNE_NOTE_MAX];
    tc_status st = tc_tune_price(o->ctx, o->topo, o->coll, &go, NULL, a, &ta, NULL, note, sizeof note);
    if (!st)
        st = tc_tune_price(o->ctx, o->topo, o->coll, &go, NULL, b, &tb, NULL, note, sizeof note);
    if (st)
        return tc_error(o->ctx, st, NULL, 0, "bundle: pricing at %llu B: %s", (unsigned long long)size, note);
    *yes = tb < ta || (tb == ta && b < a);
    return TC_OK;
}

tc_status tc_tune_bundle_ranges(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                                const tc_tune_model *m, tc_tune_algos algos, const uint64_t *sizes,
                                int n_sizes, tc_tune_range **out, int *n_out)
{
    if (n_sizes < 1)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "bundle: no sizes to sample");
    oracle o = {ctx, topo, coll, go, m, {0}};
    tc_tune_topo_describe(topo, &o.id);
    int *win = malloc((size_t)n_sizes * sizeof *win), *seg = malloc((size_t)n_sizes * sizeof *seg);
    uint64_t *starts = malloc((size_t)n_sizes * sizeof *starts);
    tc_tune_range *r = malloc((size_t)n_sizes * sizeof *r);
    tc_status st = win && seg && starts && r ? TC_OK : TC_ERR_NOMEM;
    for (int i = 0; !st && i < n_sizes; i++) {
        if (m) {
            int second;
            tc_tune_model_predict(m, &o.id, sizes[i], &win[i], &second);
            continue;
        }
        tc_gen_opts g = *go;
        g.size = sizes[i];
        tc_tune_cand *c = NULL;
        int n = 0;
        tc_sim_opts so;
        tc_sim_opts_init(&so);
        so.no_bound = 1;
        if ((st = tc_tune_eval(ctx, topo, coll, &g, &so, algos, 0, &c, &n)))
            break;
        if (n == 0 || c[0].status != TC_OK)
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "bundle: no candidate can generate %s of %llu B on %s%s%s",
                          tc_coll_name(coll), (unsigned long long)sizes[i], topo->name ? topo->name : "?",
                          n ? ": " : "", n ? c[0].note : "");
        else
            win[i] = c[0].algo;
        tc_tune_cands_free(c, n);
    }
    int ns = 0;
    for (int i = 0; !st && i < n_sizes; i++) {
        if (i > 0 && win[i] == win[i - 1])
            continue;
        uint64_t start = 0;
        if (i > 0) { /* the first size in (sizes[i-1], sizes[i]] where win[i-1] no longer wins */
            uint64_t lo = sizes[i - 1], hi = sizes[i];
            for (;;) {
                uint64_t tol = m ? 1 : (lo / 64 > 1 ? lo / 64 : 1);
                if (hi - lo <= tol)
                    break;
                uint64_t mid = (uint64_t)llround(sqrt((double)lo * (double)hi));
                if (mid <= lo || mid >= hi)
                    mid = lo + (hi - lo) / 2;
                int yes = 0;
                if ((st = later_wins(&o, win[i - 1], win[i], mid, &yes)))
                    break;
                *(yes ? &hi : &lo) = mid;
            }
            start = hi;
        }
        starts[ns] = start;
        seg[ns++] = win[i];
    }
    int nr = 0;
    if (!st && tc_tune_ranges_build(starts, seg, ns, r, &nr))
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "bundle: segments out of order");
    for (int k = 0; !st && k < nr; k++) { /* the plan size: the sample in the range nearest its middle */
        int first = -1, last = -1;
        for (int i = 0; i < n_sizes; i++)
            if (sizes[i] >= r[k].min_bytes && (r[k].max_bytes == 0 || sizes[i] <= r[k].max_bytes)) {
                if (first < 0)
                    first = i;
                last = i;
            }
        r[k].plan_bytes = first < 0 ? (r[k].min_bytes > sizes[0] ? r[k].min_bytes : sizes[0])
                                    : sizes[first + (last - first) / 2];
        tc_gen_opts g = *go;
        g.size = r[k].plan_bytes;
        char note[TC_TUNE_NOTE_MAX];
        if ((st = tc_tune_price(ctx, topo, coll, &g, NULL, r[k].algo, &r[k].time, NULL, note, sizeof note)))
            st = tc_error(ctx, st, NULL, 0, "bundle: %s %s of %llu B: %s", tc_algo_registry[r[k].algo].name,
                          tc_coll_name(coll), (unsigned long long)r[k].plan_bytes, note);
    }
    free(win);
    free(seg);
    free(starts);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    *n_out = nr;
    return TC_OK;
}
