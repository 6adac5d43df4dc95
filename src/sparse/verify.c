/*
 * The sparse section of a plan against the plan (tacosc verify; include/tacos/sparse.h, tc_sparse_verify).
 *
 * Accepts: a schedule that passed tc_sched_check, with or without a sparse section, and the topology it was
 * checked against (may be NULL).  Returns: TC_OK, or TC_ERR_INVALID with one `PLAN:LINE: error: sparse
 * section: ... (rule: NAME)` for the first transfer that breaks a rule, LINE the transfer's.
 * Rules, each a decision the pass (pass.c) can never write, so a plan that breaks one was edited by hand:
 *   count      one format per transfer, each dense, pici or coo;
 *   options    density and thresholds within [0, 1], a known element type and asked format;
 *   local      a local copy (src == dst) is dense;
 *   format     a send's format is the one asked for (either with auto);
 *   threshold  a sparse send's sparsity exceeds its format's threshold of its kind, judged at the forecast
 *              density tc_sparse_fill(d0, k) or, for a reduction send, at k - 1 (the previous-step rule
 *              of --sparse-rule, which the section does not record: the more lenient of the two); the
 *              kind from the topology's nodes (one node when it has none), without a topology the
 *              lower of intra and inter;
 *   size       a sparse send's exact message at the plan's element type (header, payload at the forecast
 *              nonzeros, rounding; tc_sparse_msg_expect) is smaller than the chunk's dense bytes;
 *   auto       with auto and a topology, a sparse send's modelled time (message x beta of its links plus
 *              both codec times, the cost file's throughputs) is below the dense send's.
 * Cost: the pass's symbolic execution, O(M log M).
 * Trace: a ring all-gather on 4 ranks at 1 MiB, density 0.01, Pici, with one letter edited to 'c': rule
 * format; 64 bytes with every letter 'p': the 4-element chunks' 44-byte messages exceed 16 dense bytes:
 * rule size.
 */
#include "sparse_int.h"

#include <stdlib.h>

static int in01(double x) { return x >= 0 && x <= 1; }

tc_status tc_sparse_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo)
{
    const tc_sched_sparse *sp = s->sparse;
    if (!sp)
        return TC_OK;
    if (sp->n != s->n_xfers || (s->n_xfers && !sp->fmt))
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0,
                        "sparse section: %d formats for %d transfers (rule: count)", sp->n, s->n_xfers);
    const size_t e = tc_sparse_dtype_size((tc_sparse_dtype)sp->dtype);
    if (!e || !in01(sp->density) ||
        (sp->format != TC_SP_PICI && sp->format != TC_SP_COO && sp->format != TC_SP_AUTO))
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0,
                        "sparse section: element type %d, density %g or format %d out of range (rule: options)",
                        sp->dtype, sp->density, sp->format);
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++)
        for (int j = 0; j < 3; j++)
            if (!in01(sp->th[f][j]))
                return tc_error(ctx, TC_ERR_INVALID, s->file, 0,
                                "sparse section: %s threshold %g out of [0, 1] (rule: options)", tc_sparse_fmt_name(f),
                                sp->th[f][j]);
    int *k = NULL;
    tc_status st = tc_sparse_contribs(ctx, s, &k);
    if (st)
        return st;
    const uint64_t n = tc_sparse_chunk_elems(s, (tc_sparse_dtype)sp->dtype);
    const double dense = (double)n * (double)e;
    const int reduces = tc_coll_reduces(s->coll);
    const int has_topo = topo && topo->n_npus == s->n_ranks, *node = has_topo ? topo->node_of : NULL;
    for (int i = 0; i < s->n_xfers && !st; i++) {
        const tc_xfer *x = &s->xfers[i];
        const int f = sp->fmt[i];
        if (f == TC_SP_DENSE)
            continue;
        const char *fn = tc_sparse_fmt_name(f);
        if (f != TC_SP_PICI && f != TC_SP_COO) {
            st = tc_sched_error(ctx, TC_ERR_INVALID, s, i, "sparse section: transfer %d: unknown format %d (rule: count)",
                                i, f);
            break;
        }
        if (x->src == x->dst) {
            st = tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                "sparse section: transfer %d is a local copy (%d->%d) but travels %s (rule: local)", i,
                                x->src, x->dst, fn);
            break;
        }
        if (sp->format != TC_SP_AUTO && sp->format != f) {
            st = tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                "sparse section: transfer %d (%d->%d) travels %s, but the plan asked for %s (rule: format)",
                                i, x->src, x->dst, fn, tc_sparse_fmt_name(sp->format));
            break;
        }
        const int kind = !reduces || k[i] >= s->n_ranks ? 2 : node ? (node[x->src] != node[x->dst]) : has_topo ? 0 : -1;
        const double th = kind >= 0 ? sp->th[f][kind] : (sp->th[f][0] < sp->th[f][1] ? sp->th[f][0] : sp->th[f][1]);
        const double d = tc_sparse_fill(sp->density, k[i]);
        const double dj = kind != 2 && k[i] > 1 ? tc_sparse_fill(sp->density, k[i] - 1) : d;
        if (!(1 - dj > th)) {
            st = tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                "sparse section: transfer %d (%d->%d) travels %s at forecast sparsity %.4g (%d "
                                "contributions), not above the %s threshold %g (rule: threshold)",
                                i, x->src, x->dst, fn, 1 - d, k[i],
                                kind == 2 ? "all-gather" : kind == 1 ? "inter" : "intra", th);
            break;
        }
        const double bytes = tc_sparse_msg_expect(f, n, d, e);
        if (!(bytes < dense)) {
            st = tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                "sparse section: transfer %d (%d->%d) travels %s, but its message of %.1f bytes "
                                "(header included, %s, density %.4g) is not smaller than its %.0f dense bytes "
                                "(rule: size)",
                                i, x->src, x->dst, fn, bytes, tc_sparse_dtype_name((tc_sparse_dtype)sp->dtype), d, dense);
            break;
        }
        if (sp->format == TC_SP_AUTO && topo && topo->n_npus == s->n_ranks) {
            double c, dc;
            tc_sparse_codec_bw(topo, f, &c, &dc);
            const double beta = tc_sparse_xfer_beta(topo, s, x, dense),
                         cost = bytes * tc_sparse_xfer_beta(topo, s, x, bytes) + dense / c + dense / dc;
            if (!(cost < dense * beta)) {
                st = tc_sched_error(ctx, TC_ERR_INVALID, s, i,
                                    "sparse section: transfer %d (%d->%d) travels %s under auto, but is priced at "
                                    "%.4g s against %.4g s dense on this topology (rule: auto)",
                                    i, x->src, x->dst, fn, cost, dense * beta);
                break;
            }
        }
    }
    free(k);
    return st;
}
