/*
 * The cost model of an annotated plan (SpCCL paper eq. 4-6), as per-transfer terms for the simulator.
 *
 * Accepts: a schedule with its sparse formats (s->sparse, one per transfer) and the topology whose cost
 * file gave the codec throughputs (may be NULL: the measured defaults of sparse.h).
 * Returns: per transfer scale (eq. 4: n' = n (d + overhead), the message's bytes over the dense chunk's),
 * pre (compression at the source, T_comp of eq. 5, per dense byte) and post (decompression or
 * scatter-add at the destination, T_decomp, per dense byte).  The simulator's event model then moves
 * scale x chunk bytes over each link (alpha + beta n' per hop, eq. 6) after pre x chunk bytes and adds
 * post x chunk bytes at the end; its link model and ordering are unchanged.
 * Where SpCCL compresses (§IV-B): all-gather compresses once and forwards the sparse form unmodified, so a
 * send whose source holds the chunk as it arrived, by copy, in the same format (tacos-run forwards that
 * message as it came) has no compression term; anything reduced into, or sent in another format, is
 * compressed again.  Decompression is priced at the full dense size for copies and adds alike.
 * The density is the pass's forecast: tc_sparse_fill(d0, k) for the k contributions the message carries.
 * The size is the exact message at that density (tc_sparse_msg_expect: the 32-byte header, the payload
 * and the format's rounding to 64-element columns and 4096-element tiles), over the chunk's dense bytes
 * (n = chunk_bytes / elem elements, rounded up).
 * Cost: the pass's symbolic execution, O(M log M).
 * Trace (ring all-gather, 4 ranks, 1 MiB, d0 = 0.01, Pici, float32, defaults): chunks of 65536 elements,
 * every message 32 + 4 x 655.36 + 8 x 1024 + 4 x 16 = 10909.44 bytes, scale 0.041616; rank r's own chunk
 * pays 1/compress per byte once, the forwards none; every arrival pays 1/decompress per byte.
 */
#include "sparse_int.h"

#include <math.h>
#include <stdlib.h>

void tc_sparse_codec_bw(const tc_topo *topo, int f, double *compress, double *decompress)
{
    static const double def[TC_SP_FMT_COUNT][2] = {
        {0, 0},
        {TC_SPARSE_PICI_COMPRESS_BW, TC_SPARSE_PICI_DECOMPRESS_BW},
        {TC_SPARSE_COO_COMPRESS_BW, TC_SPARSE_COO_DECOMPRESS_BW},
    };
    if (f != TC_SP_PICI && f != TC_SP_COO)
        f = TC_SP_PICI;
    *compress = topo && topo->codec_bw[f][0] > 0 ? topo->codec_bw[f][0] : def[f][0];
    *decompress = topo && topo->codec_bw[f][1] > 0 ? topo->codec_bw[f][1] : def[f][1];
}

void tc_sparse_cost_free(tc_sparse_cost *c)
{
    if (!c)
        return;
    free(c->scale);
    free(c->pre);
    free(c->post);
    free(c);
}

tc_status tc_sparse_cost_create(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, tc_sparse_cost **out)
{
    const tc_sched_sparse *sp = s->sparse;
    if (!sp || sp->n != s->n_xfers)
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0, "sparse: the plan's sparse formats do not match its %d transfers",
                        s->n_xfers);
    const int M = s->n_xfers;
    const size_t m1 = (size_t)(M ? M : 1);
    tc_sparse_cost *c = calloc(1, sizeof *c);
    int *k = malloc(m1 * sizeof *k);
    unsigned char *fwd = malloc(m1);
    tc_status st = TC_ERR_NOMEM;
    if (!c || !k || !fwd || !(c->scale = malloc(m1 * sizeof *c->scale)) || !(c->pre = calloc(m1, sizeof *c->pre)) ||
        !(c->post = calloc(m1, sizeof *c->post)))
        goto fail;
    if ((st = tc_sparse_sweep(ctx, s, sp->fmt, k, fwd)))
        goto fail;
    const tc_sparse_dtype t = tc_sparse_dtype_size((tc_sparse_dtype)sp->dtype) ? (tc_sparse_dtype)sp->dtype : TC_SP_F32;
    const size_t e = tc_sparse_dtype_size(t);
    const uint64_t n = tc_sparse_chunk_elems(s, t);
    const double dense = (double)n * (double)e;
    double bw[TC_SP_FMT_COUNT][2] = {{0}}, wire = 0, dsum = 0;
    int nsparse = 0;
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++)
        tc_sparse_codec_bw(topo, f, &bw[f][0], &bw[f][1]);
    c->n = M;
    for (int i = 0; i < M; i++) {
        const int f = sp->fmt[i];
        c->scale[i] = 1;
        if (f == TC_SP_PICI || f == TC_SP_COO) {
            const double d = tc_sparse_fill(sp->density, k[i]);
            c->scale[i] = tc_sparse_msg_expect(f, n, d, e) / dense; /* header and rounding included */
            c->pre[i] = fwd[i] ? 0 : 1 / bw[f][0];
            c->post[i] = 1 / bw[f][1];
            dsum += d;
            nsparse++;
        }
        wire += c->scale[i];
    }
    c->wire = M ? wire / M : 1;
    c->density = nsparse ? dsum / nsparse : 0;
    free(k);
    free(fwd);
    *out = c;
    return TC_OK;
fail:
    free(k);
    free(fwd);
    tc_sparse_cost_free(c);
    return st;
}

tc_status tc_sparse_cost_create_sized(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, uint64_t size,
                                      tc_sparse_cost **out)
{
    if (!size || s->n_chunks <= 0)
        return tc_sparse_cost_create(ctx, topo, s, out);
    tc_sched at = *s; /* a read-only view with the chunk of that size, as the simulator rescales it */
    const double per = s->coll == TC_COLL_ALLTOALL ? (double)size * s->n_ranks / s->n_chunks : (double)size / s->n_chunks;
    at.size_bytes = size;
    at.chunk_bytes = (uint64_t)ceil(per);
    return tc_sparse_cost_create(ctx, topo, &at, out);
}
