/* Internals shared by the files of the sparse module (pici.c, coo.c, msg.c, pass.c, cost.c); not a public
 * header.  Element access is by width (2, 4, 8 bytes) through memcpy, so buffers need no alignment and
 * the compiler emits plain (unaligned) loads and stores. */
#ifndef TACOS_SPARSE_INT_H
#define TACOS_SPARSE_INT_H

#include "tacos/sparse.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A valid element width: 2, 4 or 8 bytes. */
static inline int sp_width_ok(size_t e) { return e == 2 || e == 4 || e == 8; }

/* Bit c set when element c of the 64 elements at p (width e) has a nonzero bit. */
static inline uint64_t sp_mask64(const unsigned char *p, size_t e)
{
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    uint64_t zero = 0;
    if (e == 4) {
        for (int k = 0; k < 4; k++) { /* 16 elements: 4 compares packed to 16 bytes */
            const unsigned char *q = p + 64 * k;
            __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)q), z);
            __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(q + 16)), z);
            __m128i c = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(q + 32)), z);
            __m128i d = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(q + 48)), z);
            __m128i ab = _mm_packs_epi32(a, b), cd = _mm_packs_epi32(c, d);
            zero |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_packs_epi16(ab, cd)) << (16 * k);
        }
        return ~zero;
    }
    if (e == 2) {
        for (int k = 0; k < 4; k++) {
            const unsigned char *q = p + 32 * k;
            __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)q), z);
            __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(q + 16)), z);
            zero |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_packs_epi16(a, b)) << (16 * k);
        }
        return ~zero;
    }
    for (int k = 0; k < 32; k++) { /* 8 bytes: both 32-bit halves zero */
        __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(p + 16 * k)), z);
        a = _mm_and_si128(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
        zero |= (uint64_t)_mm_movemask_pd(_mm_castsi128_pd(a)) << (2 * k);
    }
    return ~zero;
#else
    uint64_t m = 0;
    for (int c = 0; c < 64; c++) {
        uint64_t v = 0;
        memcpy(&v, p + (size_t)c * e, e);
        m |= (uint64_t)(v != 0) << c;
    }
    return m;
#endif
}

/* Nonzero when the element of width e at p has a nonzero bit. */
static inline int sp_nonzero(const unsigned char *p, size_t e)
{
    uint64_t v = 0;
    memcpy(&v, p, e);
    return v != 0;
}

/* *p += *v for elements of C type T at unaligned addresses (uint32_t for int32: it wraps). */
#define SP_ADD_AS(T, p, v)                                                                            \
    do {                                                                                              \
        T a_, b_;                                                                                     \
        memcpy(&a_, (p), sizeof a_);                                                                  \
        memcpy(&b_, (v), sizeof b_);                                                                  \
        a_ += b_;                                                                                     \
        memcpy((p), &a_, sizeof a_);                                                                  \
    } while (0)

/* dst (type t) += the value at v (type t); floats add, int32 wraps, 16-bit floats in float32. */
static inline void sp_add1(tc_sparse_dtype t, unsigned char *dst, const unsigned char *v)
{
    switch (t) {
    case TC_SP_F32: SP_ADD_AS(float, dst, v); break;
    case TC_SP_F64: SP_ADD_AS(double, dst, v); break;
    case TC_SP_I32: SP_ADD_AS(uint32_t, dst, v); break;
    default: {
        uint16_t a, b;
        memcpy(&a, dst, 2);
        memcpy(&b, v, 2);
        a = tc_sparse_float_to_half(t, tc_sparse_half_to_float(t, a) + tc_sparse_half_to_float(t, b));
        memcpy(dst, &a, 2);
        break;
    }
    }
}

static inline uint64_t sp_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t sp_load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ceil(a / b) for b > 0 */
static inline uint64_t sp_ceil(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* The largest element count the codecs take (32-bit tile and COO indices). */
#define SP_MAX_N 0xffffffffull

/* The symbolic execution of pass.c: per transfer k[i] (may be NULL), the contributions its message
 * carries, and fwd[i] (may be NULL; needs fmt), whether its source forwards unchanged a message that
 * arrived in the same sparse format fmt[i] (no compression needed). */
tc_status tc_sparse_sweep(tc_ctx *ctx, const tc_sched *s, const unsigned char *fmt, int *k, unsigned char *fwd);

/* Summed beta of the links transfer x crosses for a message of `bytes` (tc_link_beta_at; 0 when unknown:
 * no topology or no link recorded). */
double tc_sparse_xfer_beta(const tc_topo *topo, const tc_sched *s, const tc_xfer *x, double bytes);

/* Common argument checks of the codecs; name is "pici" or "coo". */
tc_status tc_sparse_args(tc_ctx *ctx, const char *name, uint64_t n, size_t elem);

#endif
