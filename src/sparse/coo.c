/*
 * COO with 32-bit flat indices (SpCCL paper §II-B, §IV-D): the paper's comparison format, CPU codec.
 *
 * Accepts: n < 2^32 elements of 2, 4 or 8 bytes; a buffer of `bytes` bytes to decode.
 * Returns: nnz records (uint32 index, value), packed (4 + elem bytes each), indices strictly increasing;
 * TC_ERR_INVALID for a truncated record, an index out of range or not above the one before it (checked
 * whole before anything is written), TC_ERR_LIMIT when the output buffer is too small.
 * Method: the same 64-element nonzero masks as Pici (SSE2 compares), each set bit found with a count-
 * trailing-zeros; decompression zeroes the output and scatters, the add only touches the indices.
 * Cost: O(n) reads, O(nnz) records; the size nnz (4 + elem) passes the dense size at 50% sparsity for
 * float32 (the paper's point against COO at moderate sparsity).
 * Trace (n = 5, float32, x = [0, 2.5, 0, 0, -0.0]): records (1, 2.5), (4, -0.0); 16 bytes.
 */
#include "sparse_int.h"

uint64_t tc_sparse_coo_size(uint64_t n, uint64_t nnz, size_t elem)
{
    (void)n;
    return nnz * (4 + elem);
}

tc_status tc_sparse_coo_compress(tc_ctx *ctx, const void *src, uint64_t n, size_t elem, void *dst, size_t cap,
                                 uint64_t *nnz, size_t *bytes)
{
    tc_status st = tc_sparse_args(ctx, "coo", n, elem);
    if (st)
        return st;
    const unsigned char *x = src;
    unsigned char *o = dst;
    const size_t rec = 4 + elem;
    uint64_t total = 0;
    for (uint64_t b = 0; b < n; b += 64) {
        uint64_t m;
        if (n - b >= 64) {
            m = sp_mask64(x + b * elem, elem);
        } else {
            m = 0;
            for (uint64_t j = 0; j < n - b; j++)
                m |= (uint64_t)sp_nonzero(x + (b + j) * elem, elem) << j;
        }
        const uint64_t cnt = (uint64_t)__builtin_popcountll(m);
        if ((total + cnt) * rec > cap)
            return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "coo: %zu bytes cannot hold %llu or more records", cap,
                            (unsigned long long)(total + cnt));
        for (; m; m &= m - 1) {
            const uint32_t j = (uint32_t)(b + (uint64_t)__builtin_ctzll(m));
            memcpy(o, &j, 4);
            memcpy(o + 4, x + (size_t)j * elem, elem);
            o += rec;
        }
        total += cnt;
    }
    *nnz = total;
    *bytes = (size_t)(o - (unsigned char *)dst);
    return TC_OK;
}

tc_status tc_sparse_coo_check(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, uint64_t *nnz)
{
    tc_status st = tc_sparse_args(ctx, "coo", n, elem);
    if (st)
        return st;
    const size_t rec = 4 + elem;
    if (bytes % rec)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "coo: truncated: %zu bytes are not a whole number of %zu-byte records",
                        bytes, rec);
    const uint64_t cnt = bytes / rec;
    if (cnt > n)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "coo: %llu records for %llu elements", (unsigned long long)cnt,
                        (unsigned long long)n);
    const unsigned char *p = buf;
    int64_t prev = -1;
    for (uint64_t k = 0; k < cnt; k++, p += rec) {
        const uint32_t j = sp_load32(p);
        if (j >= n)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "coo: record %llu: index %u out of range (%llu elements)",
                            (unsigned long long)k, j, (unsigned long long)n);
        if ((int64_t)j <= prev)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "coo: record %llu: index %u does not follow index %lld",
                            (unsigned long long)k, j, (long long)prev);
        prev = j;
    }
    if (nnz)
        *nnz = cnt;
    return TC_OK;
}

tc_status tc_sparse_coo_decompress(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, void *dst)
{
    uint64_t cnt;
    tc_status st = tc_sparse_coo_check(ctx, buf, bytes, n, elem, &cnt);
    if (st)
        return st;
    unsigned char *d = dst;
    const unsigned char *p = buf;
    memset(d, 0, (size_t)n * elem);
    for (uint64_t k = 0; k < cnt; k++, p += 4 + elem)
        memcpy(d + (size_t)sp_load32(p) * elem, p + 4, elem);
    return TC_OK;
}

tc_status tc_sparse_coo_add(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, tc_sparse_dtype t, void *dst)
{
    if ((unsigned)t >= TC_SP_DTYPE_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "coo: unknown element type %d", (int)t);
    const size_t e = tc_sparse_dtype_size(t);
    uint64_t cnt;
    tc_status st = tc_sparse_coo_check(ctx, buf, bytes, n, e, &cnt);
    if (st)
        return st;
    unsigned char *d = dst;
    const unsigned char *p = buf;
    for (uint64_t k = 0; k < cnt; k++, p += 4 + e)
        sp_add1(t, d + (size_t)sp_load32(p) * e, p + 4);
    return TC_OK;
}
