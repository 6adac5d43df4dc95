/*
 * A sparse message on the wire (tacos-run's annotated sends): a 32-byte header, then the payload in the
 * format the header names.  SpCCL prepends a 48-byte header carrying format, sizes and component offsets
 * to every message (paper §V-B); here the offsets follow from the sizes, so 32 bytes carry the magic,
 * format, element bytes, element count, nonzeros and payload bytes.
 *
 * Accepts: a message of `bytes` received bytes (never trusted): the receiver knows the element type and
 * count it expects.  Returns: TC_ERR_INVALID with `sparse message: ...` when the header disagrees with
 * that, with itself (payload size against the format's size formula) or with the bytes received, and the
 * codec's own message when the payload's metadata is corrupted; nothing is written to dst then.
 * Cost: the codec's; the header is checked in O(1).
 * Trace: 4096 float32 with 41 nonzeros as Pici: header (magic, 1, 4, 4096, 41, 41*4 + 512 + 4 = 680),
 * message 712 bytes against 16384 dense.
 */
#include "sparse_int.h"

uint64_t tc_sparse_payload_size(int f, uint64_t n, uint64_t nnz, size_t elem)
{
    switch (f) {
    case TC_SP_PICI: return tc_sparse_pici_size(n, nnz, elem);
    case TC_SP_COO: return tc_sparse_coo_size(n, nnz, elem);
    default: return n * elem;
    }
}

uint64_t tc_sparse_msg_bound(int f, uint64_t n, size_t elem)
{
    return TC_SPARSE_HDR_BYTES + tc_sparse_payload_size(f, n, n, elem);
}

uint64_t tc_sparse_msg_size(int f, uint64_t n, uint64_t nnz, size_t elem)
{
    return f == TC_SP_PICI || f == TC_SP_COO ? TC_SPARSE_HDR_BYTES + tc_sparse_payload_size(f, n, nnz, elem) : n * elem;
}

double tc_sparse_msg_expect(int f, uint64_t n, double d, size_t elem)
{
    /* every size formula is affine in nnz: the size at the expected nnz is the expected size */
    const double base = (double)tc_sparse_msg_size(f, n, 0, elem), per = (double)tc_sparse_msg_size(f, n, 1, elem) - base;
    return f == TC_SP_PICI || f == TC_SP_COO ? base + per * d * (double)n : (double)(n * elem);
}

uint64_t tc_sparse_chunk_elems(const tc_sched *s, tc_sparse_dtype t)
{
    const uint64_t e = tc_sparse_dtype_size(t) ? tc_sparse_dtype_size(t) : 4;
    const uint64_t n = sp_ceil(s->chunk_bytes, e);
    return n ? n : 1;
}

void tc_sparse_hdr_put(const tc_sparse_hdr *h, void *out)
{
    unsigned char *m = out;
    memcpy(m, &h->magic, 4);
    memcpy(m + 4, &h->format, 2);
    memcpy(m + 6, &h->elem, 2);
    memcpy(m + 8, &h->count, 8);
    memcpy(m + 16, &h->nnz, 8);
    memcpy(m + 24, &h->payload, 8);
}

tc_status tc_sparse_msg_encode(tc_ctx *ctx, int f, tc_sparse_dtype t, const void *src, uint64_t n, void *msg,
                               size_t cap, size_t *bytes, uint64_t *nnz)
{
    const size_t e = tc_sparse_dtype_size(t);
    if (!e)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: unknown element type %d", (int)t);
    if (cap < TC_SPARSE_HDR_BYTES)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "sparse message: %zu bytes cannot hold the header", cap);
    unsigned char *m = msg, *pay = m + TC_SPARSE_HDR_BYTES;
    const size_t room = cap - TC_SPARSE_HDR_BYTES;
    uint64_t k = 0;
    size_t pb = 0;
    tc_status st = TC_OK;
    switch (f) {
    case TC_SP_PICI: st = tc_sparse_pici_compress(ctx, src, n, e, pay, room, &k, &pb); break;
    case TC_SP_COO: st = tc_sparse_coo_compress(ctx, src, n, e, pay, room, &k, &pb); break;
    case TC_SP_DENSE:
        if (n > room / e)
            return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "sparse message: %zu bytes cannot hold %llu dense elements", cap,
                            (unsigned long long)n);
        memcpy(pay, src, (size_t)n * e);
        k = n;
        pb = (size_t)n * e;
        break;
    default: return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: unknown format %d", f);
    }
    if (st)
        return st;
    tc_sparse_hdr h = {TC_SPARSE_MAGIC, (uint16_t)f, (uint16_t)e, n, k, pb};
    tc_sparse_hdr_put(&h, m);
    *bytes = TC_SPARSE_HDR_BYTES + pb;
    if (nnz)
        *nnz = k;
    return TC_OK;
}

tc_status tc_sparse_msg_header(tc_ctx *ctx, const void *msg, size_t bytes, tc_sparse_dtype t, uint64_t n,
                               tc_sparse_hdr *h)
{
    const size_t e = tc_sparse_dtype_size(t);
    const unsigned char *m = msg;
    if (!e) /* an unknown type has 0-byte elements: every size check below would pass and the add run wild */
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: unknown element type %d", (int)t);
    if (bytes < TC_SPARSE_HDR_BYTES)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: truncated: %zu bytes, less than its %d-byte header",
                        bytes, TC_SPARSE_HDR_BYTES);
    memcpy(&h->magic, m, 4);
    memcpy(&h->format, m + 4, 2);
    memcpy(&h->elem, m + 6, 2);
    memcpy(&h->count, m + 8, 8);
    memcpy(&h->nnz, m + 16, 8);
    memcpy(&h->payload, m + 24, 8);
    if (h->magic != TC_SPARSE_MAGIC)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: bad magic 0x%08x (not a sparse message)",
                        (unsigned)h->magic);
    if (h->format >= TC_SP_FMT_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: unknown format %u", (unsigned)h->format);
    if (h->elem != e)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: %u-byte elements, expected %zu (%s)",
                        (unsigned)h->elem, e, tc_sparse_dtype_name(t));
    if (h->count != n)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: %llu elements, expected %llu",
                        (unsigned long long)h->count, (unsigned long long)n);
    if (h->nnz > n)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: %llu nonzeros in %llu elements",
                        (unsigned long long)h->nnz, (unsigned long long)n);
    if (h->format == TC_SP_DENSE && h->nnz != n) /* the encoder counts every element of a dense message */
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: a dense message of %llu elements announces "
                                                      "%llu, not %llu",
                        (unsigned long long)n, (unsigned long long)h->nnz, (unsigned long long)n);
    const uint64_t want = tc_sparse_payload_size(h->format, n, h->format == TC_SP_DENSE ? n : h->nnz, e);
    if (h->payload != want)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: %s payload of %llu bytes, but %llu nonzeros take %llu",
                        tc_sparse_fmt_name(h->format), (unsigned long long)h->payload, (unsigned long long)h->nnz,
                        (unsigned long long)want);
    if (h->payload != bytes - TC_SPARSE_HDR_BYTES)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "sparse message: %s: its header announces %llu payload bytes, %zu arrived",
                        h->payload > bytes - TC_SPARSE_HDR_BYTES ? "truncated" : "trailing bytes",
                        (unsigned long long)h->payload, bytes - TC_SPARSE_HDR_BYTES);
    return TC_OK;
}

tc_status tc_sparse_msg_decode(tc_ctx *ctx, const void *msg, size_t bytes, tc_sparse_dtype t, uint64_t n, void *dst,
                               int add)
{
    tc_sparse_hdr h;
    tc_status st = tc_sparse_msg_header(ctx, msg, bytes, t, n, &h);
    if (st)
        return st;
    const unsigned char *pay = (const unsigned char *)msg + TC_SPARSE_HDR_BYTES;
    const size_t e = tc_sparse_dtype_size(t), pb = (size_t)h.payload;
    /* the header's sizes fix the number of values (Pici) or records (COO) at h.nnz; the codec checks the
     * payload's metadata against them before it writes */
    switch (h.format) {
    case TC_SP_PICI:
        return add ? tc_sparse_pici_add(ctx, pay, pb, n, t, dst) : tc_sparse_pici_decompress(ctx, pay, pb, n, e, dst);
    case TC_SP_COO:
        return add ? tc_sparse_coo_add(ctx, pay, pb, n, t, dst) : tc_sparse_coo_decompress(ctx, pay, pb, n, e, dst);
    default:
        if (!add)
            memcpy(dst, pay, pb);
        else
            for (uint64_t i = 0; i < n; i++)
                sp_add1(t, (unsigned char *)dst + i * e, pay + i * e);
        return TC_OK;
    }
}
