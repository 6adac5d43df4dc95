/*
 * Pici (SpCCL paper §III-B, III-C): the CPU codec.  Layout in include/tacos/sparse.h.
 *
 * Accepts: n < 2^32 elements of 2, 4 or 8 bytes, any alignment; a buffer of `bytes` bytes to decode.
 * Returns: the compressed form, or the dense elements written (decompress) or added (add), or the Pici
 * form of a sum of two (merge_add); TC_ERR_INVALID with one message for a corrupted or truncated buffer
 * (checked whole before anything is written), TC_ERR_LIMIT when an output buffer is too small.
 *
 * Compression, per tile (the paper's three phases fused, as SpCCL does per CUDA block): phase 1 builds a
 * 64-bit nonzero mask per 64-element row with SSE2 compares (row-major data read once, sequentially) and
 * transposes the 64x64 bit matrix into the column words (6 rounds of masked swaps); phase 2 adds the
 * columns' popcounts to the running prefix, which is the tile's index; phase 3 compacts the values column
 * by column, finding each set bit with a count-trailing-zeros and clearing it (w &= w - 1), so the loop
 * runs nnz times, not 4096.  The tile (16 KiB of float32) stays in the L1 cache while its columns are
 * read with a stride of one row.  A last partial tile (C < 64 columns) is built element by element.
 * Decompression zeroes the tile, then scatters each column's values with the same ctz loop; the add
 * touches only the nonzero positions.  Validation reads only the metadata: per tile the popcount of its
 * words (and no bit past the end) must equal the next index minus its own, and the total nnz must match
 * the values' length (that is, the buffer's).
 * Cost: O(n) reads and O(nnz) value moves; 64 popcounts and one 64x64 transpose per 4096 elements.
 * Limits: n < 2^32 (32-bit indices); words in host byte order.
 * Trace (n = 70, float32, nonzeros at 1, 64 and 69): one partial tile of C = ceil(70/64) = 2 columns,
 * element j at row j/2, column j%2: element 1 -> (0,1), 64 -> (32,0), 69 -> (34,1); words: column 0 =
 * bit 32, column 1 = bits 0 and 34; index [0]; values in column order: x[64], x[1], x[69]; size
 * 2*8 + 4 + 3*4 = 32 bytes.
 */
#include "sparse_int.h"

uint64_t tc_sparse_pici_size(uint64_t n, uint64_t nnz, size_t elem)
{
    return nnz * elem + 8 * sp_ceil(n, TC_PICI_COL) + 4 * sp_ceil(n, TC_PICI_TILE);
}

/* Transpose a 64x64 bit matrix in place: bit j of a[i] <-> bit i of a[j] (LSB = column 0). */
static void transpose64(uint64_t a[64])
{
    uint64_t m = 0x00000000ffffffffull;
    for (int j = 32; j; j >>= 1, m ^= m << j)
        for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
            uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
            a[k | j] ^= t;
            a[k] ^= t << j;
        }
}

/* Geometry of tile t of n elements: its first element, element count and column count. */
static inline void tile_of(uint64_t n, uint64_t t, uint64_t *base, int *nt, int *cols)
{
    *base = t * TC_PICI_TILE;
    uint64_t left = n - *base;
    *nt = left < TC_PICI_TILE ? (int)left : TC_PICI_TILE;
    *cols = (int)sp_ceil((uint64_t)*nt, TC_PICI_COL);
}

/* The rows column c of a tile of nt elements and cols columns has (row r holds r*cols + c < nt). */
static inline uint64_t col_valid(int nt, int cols, int c)
{
    int rows = (nt - c + cols - 1) / cols;
    return rows >= 64 ? ~0ull : (1ull << rows) - 1;
}

/* Column words of one tile of data x (nt elements, cols columns) into col[0..cols). */
static void tile_cols(const unsigned char *x, int nt, int cols, size_t e, uint64_t col[64])
{
    if (nt == TC_PICI_TILE) {
        for (int r = 0; r < 64; r++)
            col[r] = sp_mask64(x + (size_t)r * 64 * e, e); /* row masks ... */
        transpose64(col);                                 /* ... become column words */
        return;
    }
    memset(col, 0, 64 * sizeof *col);
    for (int j = 0; j < nt; j++)
        if (sp_nonzero(x + (size_t)j * e, e))
            col[j % cols] |= 1ull << (j / cols);
}

/* Copy the set elements of every column of a tile to out, column by column; returns the end of out. */
#define COMPACT_FN(NAME, T)                                                                           \
    static unsigned char *NAME(const unsigned char *x, const uint64_t *col, int cols, unsigned char *out) \
    {                                                                                                 \
        for (int c = 0; c < cols; c++)                                                                \
            for (uint64_t w = col[c]; w; w &= w - 1) {                                                \
                T v;                                                                                  \
                memcpy(&v, x + ((size_t)__builtin_ctzll(w) * (size_t)cols + (size_t)c) * sizeof(T), sizeof(T)); \
                memcpy(out, &v, sizeof(T));                                                           \
                out += sizeof(T);                                                                     \
            }                                                                                         \
        return out;                                                                                   \
    }
COMPACT_FN(compact16, uint16_t)
COMPACT_FN(compact32, uint32_t)
COMPACT_FN(compact64, uint64_t)

static unsigned char *compact(const unsigned char *x, const uint64_t *col, int cols, size_t e, unsigned char *out)
{
    return e == 4 ? compact32(x, col, cols, out) : e == 2 ? compact16(x, col, cols, out) : compact64(x, col, cols, out);
}

tc_status tc_sparse_pici_compress(tc_ctx *ctx, const void *src, uint64_t n, size_t elem, void *dst, size_t cap,
                                  uint64_t *nnz, size_t *bytes)
{
    tc_status st = tc_sparse_args(ctx, "pici", n, elem);
    if (st)
        return st;
    const uint64_t W = sp_ceil(n, TC_PICI_COL), T = sp_ceil(n, TC_PICI_TILE), meta = 8 * W + 4 * T;
    if (cap < meta)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "pici: %zu bytes cannot hold the %llu bytes of metadata of %llu elements",
                        cap, (unsigned long long)meta, (unsigned long long)n);
    const unsigned char *x = src;
    unsigned char *words = dst, *idx = words + 8 * W, *vals = idx + 4 * T, *v = vals;
    const unsigned char *end = (unsigned char *)dst + cap;
    uint64_t col[64], total = 0;
    for (uint64_t t = 0; t < T; t++) {
        uint64_t base;
        int nt, cols;
        tile_of(n, t, &base, &nt, &cols);
        const unsigned char *xt = x + base * elem;
        tile_cols(xt, nt, cols, elem, col);
        uint64_t cnt = 0;
        for (int c = 0; c < cols; c++)
            cnt += (uint64_t)__builtin_popcountll(col[c]);
        if ((uint64_t)(end - v) < cnt * elem)
            return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "pici: %zu bytes cannot hold %llu elements with %llu or more nonzeros",
                            cap, (unsigned long long)n, (unsigned long long)(total + cnt));
        memcpy(words + 8 * t * TC_PICI_COL, col, (size_t)cols * 8);
        uint32_t ix = (uint32_t)total;
        memcpy(idx + 4 * t, &ix, 4);
        v = compact(xt, col, cols, elem, v);
        total += cnt;
    }
    *nnz = total;
    *bytes = (size_t)(v - words);
    return TC_OK;
}

tc_status tc_sparse_pici_check(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, uint64_t *nnz)
{
    tc_status st = tc_sparse_args(ctx, "pici", n, elem);
    if (st)
        return st;
    const uint64_t W = sp_ceil(n, TC_PICI_COL), T = sp_ceil(n, TC_PICI_TILE), meta = 8 * W + 4 * T;
    if (bytes < meta)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                        "pici: truncated: %zu bytes, less than the %llu bytes of metadata of %llu elements", bytes,
                        (unsigned long long)meta, (unsigned long long)n);
    if ((bytes - meta) % elem)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: %zu bytes of values are not a whole number of %zu-byte elements",
                        bytes - (size_t)meta, elem);
    const uint64_t nv = (bytes - meta) / elem;
    if (nv > n)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: %llu values for %llu elements", (unsigned long long)nv,
                        (unsigned long long)n);
    const unsigned char *words = buf, *idx = words + 8 * W;
    uint64_t total = 0;
    for (uint64_t t = 0; t < T; t++) {
        uint64_t base;
        int nt, cols;
        tile_of(n, t, &base, &nt, &cols);
        if (sp_load32(idx + 4 * t) != total)
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                            "pici: tile %llu: index %u, but the tiles before it hold %llu nonzeros", (unsigned long long)t,
                            sp_load32(idx + 4 * t), (unsigned long long)total);
        const unsigned char *wt = words + 8 * t * TC_PICI_COL;
        for (int c = 0; c < cols; c++) {
            uint64_t w = sp_load64(wt + 8 * (size_t)c);
            if (nt < TC_PICI_TILE && (w & ~col_valid(nt, cols, c)))
                return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: tile %llu column %d: bits set past the last element",
                                (unsigned long long)t, c);
            total += (uint64_t)__builtin_popcountll(w);
        }
    }
    if (total != nv)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: the bit vector holds %llu nonzeros but %llu values follow",
                        (unsigned long long)total, (unsigned long long)nv);
    if (nnz)
        *nnz = total;
    return TC_OK;
}

/* Scatter each tile's values into d (decompress: zeros first; add: sum into what is there).  The
 * decompression zeroes a tile, then scatters column by column into it (in the L1 cache by then); the add
 * goes row by row over a full tile (its column words transposed back to row masks), each column's values
 * read from their own cursor, so the dense data it reads and writes is visited in order. */
#define SCATTER_FN(NAME, T, ...)                                                                       \
    static void NAME(const unsigned char *buf, uint64_t n, unsigned char *d, tc_sparse_dtype dt, int zero) \
    {                                                                                                  \
        const uint64_t W = sp_ceil(n, TC_PICI_COL), TT = sp_ceil(n, TC_PICI_TILE);                     \
        const unsigned char *words = buf, *vt = buf + 8 * W + 4 * TT;                                  \
        (void)dt;                                                                                      \
        for (uint64_t t = 0; t < TT; t++) {                                                            \
            uint64_t base;                                                                             \
            int nt, cols;                                                                              \
            tile_of(n, t, &base, &nt, &cols);                                                          \
            unsigned char *dt_ = d + base * sizeof(T);                                                 \
            const unsigned char *wt = words + 8 * t * TC_PICI_COL;                                     \
            if (!zero && nt == TC_PICI_TILE) {                                                         \
                uint64_t row[64];                                                                      \
                uint32_t at[64], k = 0;                                                                \
                for (int c = 0; c < 64; c++) {                                                         \
                    row[c] = sp_load64(wt + 8 * (size_t)c);                                            \
                    at[c] = k;                                                                         \
                    k += (uint32_t)__builtin_popcountll(row[c]);                                       \
                }                                                                                      \
                transpose64(row);                                                                      \
                for (int r = 0; r < 64; r++)                                                           \
                    for (uint64_t m = row[r]; m; m &= m - 1) {                                         \
                        const int c = __builtin_ctzll(m);                                              \
                        unsigned char *p = dt_ + ((size_t)r * 64 + (size_t)c) * sizeof(T);             \
                        const unsigned char *v = vt + (size_t)at[c]++ * sizeof(T);                     \
                        __VA_ARGS__;                                                                   \
                    }                                                                                  \
                vt += (size_t)k * sizeof(T);                                                           \
                continue;                                                                              \
            }                                                                                          \
            if (zero)                                                                                  \
                memset(dt_, 0, (size_t)nt * sizeof(T));                                                \
            for (int c = 0; c < cols; c++)                                                             \
                for (uint64_t w = sp_load64(wt + 8 * (size_t)c); w; w &= w - 1) {                      \
                    unsigned char *p = dt_ + ((size_t)__builtin_ctzll(w) * (size_t)cols + (size_t)c) * sizeof(T); \
                    const unsigned char *v = vt;                                                       \
                    __VA_ARGS__;                                                                       \
                    vt += sizeof(T);                                                                   \
                }                                                                                      \
        }                                                                                              \
    }
SCATTER_FN(put16, uint16_t, memcpy(p, v, 2))
SCATTER_FN(put32, uint32_t, memcpy(p, v, 4))
SCATTER_FN(put64, uint64_t, memcpy(p, v, 8))
SCATTER_FN(add_f32, float, SP_ADD_AS(float, p, v))
SCATTER_FN(add_f64, double, SP_ADD_AS(double, p, v))
SCATTER_FN(add_u32, uint32_t, SP_ADD_AS(uint32_t, p, v))
SCATTER_FN(add_half, uint16_t, sp_add1(dt, p, v))

tc_status tc_sparse_pici_decompress(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, void *dst)
{
    tc_status st = tc_sparse_pici_check(ctx, buf, bytes, n, elem, NULL);
    if (st)
        return st;
    if (elem == 4)
        put32(buf, n, dst, TC_SP_F32, 1);
    else if (elem == 2)
        put16(buf, n, dst, TC_SP_F16, 1);
    else
        put64(buf, n, dst, TC_SP_F64, 1);
    return TC_OK;
}

tc_status tc_sparse_pici_add(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, tc_sparse_dtype t, void *dst)
{
    if ((unsigned)t >= TC_SP_DTYPE_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: unknown element type %d", (int)t);
    tc_status st = tc_sparse_pici_check(ctx, buf, bytes, n, tc_sparse_dtype_size(t), NULL);
    if (st)
        return st;
    switch (t) {
    case TC_SP_F32: add_f32(buf, n, dst, t, 0); break;
    case TC_SP_F64: add_f64(buf, n, dst, t, 0); break;
    case TC_SP_I32: add_u32(buf, n, dst, t, 0); break;
    default: add_half(buf, n, dst, t, 0); break;
    }
    return TC_OK;
}

/* The sum of two values of type t at a and b into out; returns nonzero when it has a nonzero bit. */
static int sum_nonzero(tc_sparse_dtype t, const unsigned char *a, const unsigned char *b, unsigned char *out)
{
    size_t e = tc_sparse_dtype_size(t);
    memcpy(out, a, e);
    sp_add1(t, out, b);
    return sp_nonzero(out, e);
}

tc_status tc_sparse_pici_merge_add(tc_ctx *ctx, const void *a, size_t abytes, const void *b, size_t bbytes,
                                   uint64_t n, tc_sparse_dtype t, void *dst, size_t cap, uint64_t *nnz,
                                   size_t *bytes)
{
    if ((unsigned)t >= TC_SP_DTYPE_COUNT)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "pici: unknown element type %d", (int)t);
    const size_t e = tc_sparse_dtype_size(t);
    tc_status st;
    if ((st = tc_sparse_pici_check(ctx, a, abytes, n, e, NULL)) || (st = tc_sparse_pici_check(ctx, b, bbytes, n, e, NULL)))
        return st;
    const uint64_t W = sp_ceil(n, TC_PICI_COL), T = sp_ceil(n, TC_PICI_TILE), meta = 8 * W + 4 * T;
    if (cap < meta)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "pici: %zu bytes cannot hold the %llu bytes of metadata of %llu elements",
                        cap, (unsigned long long)meta, (unsigned long long)n);
    const unsigned char *wa = a, *wb = b, *va = wa + meta, *vb = wb + meta;
    unsigned char *wo = dst, *io = wo + 8 * W, *vo = io + 4 * T;
    const unsigned char *end = (unsigned char *)dst + cap;
    uint64_t total = 0;
    for (uint64_t tt = 0; tt < T; tt++) {
        uint64_t base;
        int nt, cols;
        tile_of(n, tt, &base, &nt, &cols);
        uint32_t ix = (uint32_t)total;
        memcpy(io + 4 * tt, &ix, 4);
        for (int c = 0; c < cols; c++) {
            const size_t off = 8 * (tt * TC_PICI_COL + (uint64_t)c);
            const uint64_t xa = sp_load64(wa + off), xb = sp_load64(wb + off);
            uint64_t out = 0;
            if ((uint64_t)(end - vo) < (uint64_t)__builtin_popcountll(xa | xb) * e)
                return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "pici: %zu bytes cannot hold the sum of %llu elements", cap,
                                (unsigned long long)n);
            for (uint64_t u = xa | xb; u; u &= u - 1) {
                const uint64_t bit = u & -u;
                if ((xa & bit) && (xb & bit)) {
                    if (sum_nonzero(t, va, vb, vo)) { /* x + -x = +0.0 is a zero: dropped */
                        out |= bit;
                        vo += e;
                    }
                    va += e;
                    vb += e;
                } else {
                    const unsigned char *from = (xa & bit) ? va : vb;
                    memcpy(vo, from, e);
                    vo += e;
                    out |= bit;
                    if (xa & bit)
                        va += e;
                    else
                        vb += e;
                }
            }
            total += (uint64_t)__builtin_popcountll(out);
            memcpy(wo + off, &out, 8);
        }
    }
    *nnz = total;
    *bytes = (size_t)(vo - wo);
    return TC_OK;
}
