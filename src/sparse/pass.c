/*
 * The sparse pass (SpCCL paper §IV-B, IV-C): decide per transfer whether it travels dense, Pici or COO.
 *
 * Accepts: a schedule of any generator (a checked one: transfers in range, causal), the topology whose
 * node ids tell intra- from inter-node sends (may be NULL), the input density d0 and the thresholds.
 * Returns: a tc_sched_sparse with one format per transfer (local copies, src == dst, stay dense).
 *
 * Method.  Fill-in: a reducing transfer's message is the sum of the inputs of the k ranks whose
 * contributions it carries; with independent, uniformly placed nonzeros of density d0 each, its density is
 * 1 - (1 - d0)^k, which is eq. 7 (d' = 1 - (1 - d_prev)(1 - d0)) applied once per contribution added.
 * SpCCL extrapolates with eq. 7 only through dense sends (a compression measures the real nnz); at compile
 * time nothing is measured, so every send is forecast, sparse or dense, and a dense send is a forecast
 * like any other (§III-D's extrapolation).  k comes from a symbolic execution in the checker's event order
 * (tc_sparse_contribs): arrivals before departures at equal times, a zero-length transfer's arrival after
 * them, times within 1e-9 of the span equal.  Kinds (§IV-C): a send whose data is not reduced any further
 * (the collective does not reduce, or it carries all R contributions: the all-gather phase of an
 * all-reduce) is judged by the all-gather threshold (phase-aware); a reduction-phase send by the intra- or
 * inter-node threshold of its ends (topology-aware).  A send travels sparse when its forecast sparsity
 * 1 - d is strictly above the threshold ("at or below, dense").  SpCCL decides a step from the sparsity of
 * the step before (what it measured); the forecast here is the message's own, unless o->rule asks for the
 * paper's rule (a reduction send judged at k - 1 contributions; sizes stay the forecast's).
 * Exact sizes: a send goes sparse, in every format, only where its exact message (tc_sparse_msg_expect:
 * the 32-byte header, the payload at the forecast nonzeros of the chunk's n = chunk_bytes / elem
 * elements, the format's rounding) is smaller than the n x elem dense bytes.
 * Auto: of Pici and COO, those admitted by their thresholds; when both are, the lower modelled time of the
 * send on its links (bytes x beta + n elem / compress + n elem / decompress), and only where that is below
 * the dense send's n elem x beta (without a topology beta is 0 and auto keeps every send dense);
 * tc_sparse_annotate (price.c) then keeps the plan only where the event model, with the step's
 * dependence, predicts it no slower than dense.
 * Cost: O(M log M) for M transfers (two sorts), O(R C) ints of contribution counts for reducing collectives.
 * Trace (ring all-reduce on 4 ranks, d0 = 0.01, Pici 0.6/0.5/0.1, one node): step 0 sends carry k = 1
 * (d 0.0100), step 1 k = 2 (0.0199), step 2 k = 3 (0.0297), all sparsity > 0.6: Pici; then the all-gather
 * phase carries k = 4 (0.0394) > 0.1: Pici.  With d0 = 0.3 step 0 goes Pici (sparsity 0.7), steps 1 and 2
 * reach 0.51 and 0.657 (sparsity 0.49, 0.343 <= 0.6): dense; the all-gather phase (density 0.76, sparsity
 * 0.24 > 0.1) goes Pici again (phase-aware).
 */
#include "sparse_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void tc_sparse_opts_init(tc_sparse_opts *o)
{
    static const tc_sparse_thresholds pici = TC_SPARSE_PICI_THRESHOLDS, coo = TC_SPARSE_COO_THRESHOLDS;
    memset(o, 0, sizeof *o);
    o->density = 1;
    o->format = TC_SP_PICI;
    o->th[TC_SP_PICI] = pici;
    o->th[TC_SP_COO] = coo;
    o->dtype = TC_SP_F32;
    o->rule = TC_SP_RULE_FORECAST;
}

tc_status tc_sparse_thresholds_parse(tc_ctx *ctx, const char *s, tc_sparse_thresholds *out)
{
    double v[3];
    const char *p = s;
    for (int k = 0; k < 3; k++) {
        char *end;
        if (tc_parse_decimal(p, &end, &v[k]) || !(v[k] >= 0 && v[k] <= 1) || *end != (k < 2 ? ',' : '\0'))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                            "--thresholds: '%s' is not INTRA,INTER,ALLGATHER (three sparsities from 0 to 1)", s);
        p = end + 1;
    }
    *out = (tc_sparse_thresholds){v[0], v[1], v[2]};
    return TC_OK;
}

double tc_sparse_fill(double d0, int k)
{
    return k <= 0 ? 0 : 1 - pow(1 - d0, k);
}

double tc_sparse_fill_next(double prev, double d0)
{
    return 1 - (1 - prev) * (1 - d0);
}

/* ---- symbolic execution ------------------------------------------------------------------------- */

typedef struct key_at {
    double t;
    int i;
} key_at;

static int cmp_key(const void *a, const void *b)
{
    const key_at *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

tc_status tc_sparse_sweep(tc_ctx *ctx, const tc_sched *s, const unsigned char *fmt, int *k, unsigned char *fwd)
{
    const int M = s->n_xfers, R = s->n_ranks, N = s->n_chunks, reduces = tc_coll_reduces(s->coll);
    for (int i = 0; i < M; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src < 0 || x->src >= R || x->dst < 0 || x->dst >= R || x->chunk < 0 || x->chunk >= N ||
            !(x->t_end >= x->t_start))
            return tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                  "sparse: transfer %d (%d->%d chunk %d) is out of range; check the schedule first", i,
                                  x->src, x->dst, x->chunk);
    }
    if (k && !reduces)
        for (int i = 0; i < M; i++)
            k[i] = 1;
    const int need_k = k && reduces, need_f = fwd && fmt;
    if (fwd)
        memset(fwd, 0, (size_t)M);
    if (!need_k && !need_f)
        return TC_OK;
    if ((uint64_t)R * (uint64_t)N > (1ull << 28))
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                        "sparse: %d ranks x %d chunks is more state than the pass keeps (2^28 rank-chunk pairs)", R, N);
    const size_t RN = (size_t)R * (size_t)N;
    int *cnt = need_k ? malloc(RN * sizeof *cnt) : NULL;
    unsigned char *last = need_f ? calloc(RN, 1) : NULL; /* format a chunk arrived in by copy, 0 otherwise */
    int *kx = need_k ? k : NULL;
    key_at *dep = malloc((size_t)(M ? M : 1) * sizeof *dep), *arr = malloc((size_t)(M ? M : 1) * sizeof *arr);
    tc_status st = TC_OK;
    if ((need_k && !cnt) || (need_f && !last) || !dep || !arr) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (size_t j = 0; need_k && j < RN; j++)
        cnt[j] = 1; /* every rank starts with its own input of every chunk */
    double span = 0;
    for (int i = 0; i < M; i++) {
        dep[i] = (key_at){s->xfers[i].t_start, i};
        arr[i] = (key_at){s->xfers[i].t_end, i};
        span = fmax(span, fabs(s->xfers[i].t_end));
    }
    const double tol = 1e-9 * span;
    qsort(dep, (size_t)M, sizeof *dep, cmp_key);
    qsort(arr, (size_t)M, sizeof *arr, cmp_key);
    int a = 0;
    for (int d = 0; d <= M; d++) {
        /* arrivals that precede departure d: earlier by more than tol, or equal and not of zero length */
        while (a < M) {
            const tc_xfer *y = &s->xfers[arr[a].i];
            const int zero = y->t_end - y->t_start <= tol;
            if (d < M) {
                const double td = dep[d].t;
                if (!(y->t_end < td - tol || (!zero && fabs(y->t_end - td) <= tol)))
                    break;
            }
            const size_t w = (size_t)y->dst * (size_t)N + (size_t)y->chunk;
            if (need_k)
                cnt[w] = y->op == TC_OP_REDUCE ? cnt[w] + kx[arr[a].i] : kx[arr[a].i];
            if (need_f)
                last[w] = y->op == TC_OP_REDUCE ? 0 : fmt[arr[a].i];
            a++;
        }
        if (d == M)
            break;
        const int i = dep[d].i;
        const tc_xfer *x = &s->xfers[i];
        const size_t w = (size_t)x->src * (size_t)N + (size_t)x->chunk;
        if (need_k)
            kx[i] = cnt[w];
        if (need_f)
            fwd[i] = fmt[i] != TC_SP_DENSE && last[w] == fmt[i];
    }
done:
    free(cnt);
    free(last);
    free(dep);
    free(arr);
    return st;
}

tc_status tc_sparse_contribs(tc_ctx *ctx, const tc_sched *s, int **out)
{
    int *k = malloc((size_t)(s->n_xfers ? s->n_xfers : 1) * sizeof *k);
    if (!k)
        return TC_ERR_NOMEM;
    tc_status st = tc_sparse_sweep(ctx, s, NULL, k, NULL);
    if (st) {
        free(k);
        return st;
    }
    *out = k;
    return TC_OK;
}

/* ---- decisions ---------------------------------------------------------------------------------- */

/* Summed beta of the links transfer x crosses for a message of `bytes` (0 when unknown: no topology or no
 * link recorded). */
double tc_sparse_xfer_beta(const tc_topo *topo, const tc_sched *s, const tc_xfer *x, double bytes)
{
    if (!topo)
        return 0;
    double b = 0;
    for (int h = 0; h < x->route_len; h++) {
        int l = s->route[x->route_off + h];
        if (l >= 0 && l < topo->n_links)
            b += tc_link_beta_at(topo, &topo->links[l], bytes);
    }
    if (!x->route_len && x->link >= 0 && x->link < topo->n_links)
        b = tc_link_beta_at(topo, &topo->links[x->link], bytes);
    return b;
}

tc_status tc_sparse_plan(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, const tc_sparse_opts *o,
                         tc_sched_sparse **out)
{
    if (!(o->density >= 0 && o->density <= 1))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: density %g is not in [0, 1]", o->density);
    if (o->format != TC_SP_PICI && o->format != TC_SP_COO && o->format != TC_SP_AUTO)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: unknown format %d", o->format);
    if (o->rule != TC_SP_RULE_FORECAST && o->rule != TC_SP_RULE_PREVIOUS)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: unknown decision rule %d", o->rule);
    if (!tc_sparse_dtype_size(o->dtype))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: unknown element type %d", (int)o->dtype);
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++) {
        const tc_sparse_thresholds *t = &o->th[f];
        if (!(t->intra >= 0 && t->intra <= 1 && t->inter >= 0 && t->inter <= 1 && t->allgather >= 0 &&
              t->allgather <= 1))
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: %s thresholds out of [0, 1]", tc_sparse_fmt_name(f));
    }
    if (topo && topo->n_npus != s->n_ranks)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse: the schedule has %d ranks, the topology %d npus",
                        s->n_ranks, topo->n_npus);
    const int M = s->n_xfers;
    tc_sched_sparse *sp = calloc(1, sizeof *sp);
    int *k = NULL;
    tc_status st = TC_ERR_NOMEM;
    if (!sp || !(sp->fmt = calloc((size_t)(M ? M : 1), 1)))
        goto fail;
    if ((st = tc_sparse_contribs(ctx, s, &k)))
        goto fail;
    sp->density = o->density;
    sp->format = o->format;
    sp->dtype = (int)o->dtype;
    sp->n = M;
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++) {
        sp->th[f][0] = o->th[f].intra;
        sp->th[f][1] = o->th[f].inter;
        sp->th[f][2] = o->th[f].allgather;
    }
    const size_t e = tc_sparse_dtype_size(o->dtype);
    const uint64_t n = tc_sparse_chunk_elems(s, o->dtype);
    const double dense = (double)n * (double)e; /* a dense send goes raw: no header */
    const int reduces = tc_coll_reduces(s->coll);
    const int *node = topo ? topo->node_of : NULL;
    double bw[TC_SP_FMT_COUNT][2] = {{0}};
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++)
        tc_sparse_codec_bw(topo, f, &bw[f][0], &bw[f][1]);
    for (int i = 0; i < M; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src == x->dst)
            continue;
        const double d = tc_sparse_fill(o->density, k[i]);
        const int kind = !reduces || k[i] >= s->n_ranks ? 2 : node && node[x->src] != node[x->dst] ? 1 : 0;
        /* the previous-step rule (SpCCL): a reduction-phase send is judged by the sparsity one contribution
         * earlier, what a ring measured at the step before; forwarded data by its own */
        const double dj = o->rule == TC_SP_RULE_PREVIOUS && kind != 2 ? tc_sparse_fill(o->density, k[i] > 1 ? k[i] - 1 : 1) : d;
        const double beta = tc_sparse_xfer_beta(topo, s, x, dense); /* the dense send's */
        int best = TC_SP_DENSE;
        double best_cost = 0;
        for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++) {
            if (o->format != TC_SP_AUTO && o->format != f)
                continue;
            if (!(1 - dj > sp->th[f][kind]))
                continue;
            /* the exact message: header, payload at the forecast nonzeros, the format's rounding; one no
             * smaller than the dense bytes never goes sparse (issue 26) */
            const double bytes = tc_sparse_msg_expect(f, n, d, e);
            if (!(bytes < dense))
                continue;
            const double cost = bytes * tc_sparse_xfer_beta(topo, s, x, bytes) + dense / bw[f][0] + dense / bw[f][1];
            /* auto: a format only where the send's modelled time beats the dense send's; the whole plan is
             * then priced by tc_sparse_annotate, which keeps it only where it beats dense */
            if (o->format == TC_SP_AUTO && !(cost < dense * beta))
                continue;
            if (best == TC_SP_DENSE || cost < best_cost) {
                best = f;
                best_cost = cost;
            }
        }
        sp->fmt[i] = (unsigned char)best;
    }
    free(k);
    *out = sp;
    return TC_OK;
fail:
    free(k);
    tc_sched_sparse_free(sp);
    return st;
}

void tc_sparse_counts(const tc_sched_sparse *sp, int counts[TC_SP_FMT_COUNT])
{
    for (int f = 0; f < TC_SP_FMT_COUNT; f++)
        counts[f] = 0;
    for (int i = 0; sp && i < sp->n; i++)
        if (sp->fmt[i] < TC_SP_FMT_COUNT)
            counts[sp->fmt[i]]++;
}
