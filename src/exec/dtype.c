/*
 * Data types and reductions of tacos-run on the host: names, sizes, the reduction loops the host backend
 * runs, random input generation for --check and the comparison that counts #wrong.
 *
 * bfloat16 and float16 are stored as 16-bit patterns and reduced in float32 (converted per element,
 * result rounded to nearest even), as GPU libraries do.  Integer sum and product wrap modulo 2^32.
 */
#include "exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const dt_names[TC_DT_COUNT] = {"float32", "float64", "int32", "bfloat16", "float16"};
static const size_t dt_sizes[TC_DT_COUNT] = {4, 8, 4, 2, 2};
static const char *const op_names[TC_RED_COUNT] = {"sum", "prod", "min", "max"};

const char *tc_exec_dtype_name(tc_dtype t) { return (unsigned)t < TC_DT_COUNT ? dt_names[t] : "?"; }
size_t tc_exec_dtype_size(tc_dtype t) { return (unsigned)t < TC_DT_COUNT ? dt_sizes[t] : 0; }
const char *tc_exec_redop_name(tc_redop op) { return (unsigned)op < TC_RED_COUNT ? op_names[op] : "?"; }

tc_status tc_exec_dtype_parse(const char *s, tc_dtype *out)
{
    static const struct { const char *name; tc_dtype t; } names[] = {
        {"float32", TC_DT_FLOAT32}, {"float", TC_DT_FLOAT32},  {"f32", TC_DT_FLOAT32},
        {"float64", TC_DT_FLOAT64}, {"double", TC_DT_FLOAT64}, {"f64", TC_DT_FLOAT64},
        {"int32", TC_DT_INT32},     {"int", TC_DT_INT32},      {"i32", TC_DT_INT32},
        {"bfloat16", TC_DT_BFLOAT16}, {"bf16", TC_DT_BFLOAT16},
        {"float16", TC_DT_FLOAT16}, {"half", TC_DT_FLOAT16},   {"f16", TC_DT_FLOAT16},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(s, names[i].name)) {
            *out = names[i].t;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

tc_status tc_exec_redop_parse(const char *s, tc_redop *out)
{
    for (int i = 0; i < TC_RED_COUNT; i++)
        if (!strcasecmp(s, op_names[i])) {
            *out = (tc_redop)i;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

double tc_exec_dtype_tolerance(tc_dtype t, int nranks)
{
    switch (t) {
    case TC_DT_FLOAT32: return 1e-5 * nranks;
    case TC_DT_FLOAT64: return 1e-12 * nranks;
    case TC_DT_BFLOAT16: return 1e-2 * nranks;
    case TC_DT_FLOAT16: return 1e-3 * nranks;
    default: return 0;
    }
}

/* ---- 16-bit floats: the sparse library's conversions (the codecs add these types the same way) ------ */

_Static_assert((int)TC_DT_FLOAT32 == (int)TC_SP_F32 && (int)TC_DT_FLOAT64 == (int)TC_SP_F64 &&
                   (int)TC_DT_INT32 == (int)TC_SP_I32 && (int)TC_DT_BFLOAT16 == (int)TC_SP_BF16 &&
                   (int)TC_DT_FLOAT16 == (int)TC_SP_F16,
               "tc_dtype and tc_sparse_dtype must agree");

static float bf16_to_float(uint16_t h) { return tc_sparse_half_to_float(TC_SP_BF16, h); }
static uint16_t float_to_bf16(float f) { return tc_sparse_float_to_half(TC_SP_BF16, f); }
static float f16_to_float(uint16_t h) { return tc_sparse_half_to_float(TC_SP_F16, h); }
static uint16_t float_to_f16(float f) { return tc_sparse_float_to_half(TC_SP_F16, f); }

void tc_exec_to_float(tc_dtype t, const void *src, float *dst, size_t n)
{
    const uint16_t *h = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = t == TC_DT_BFLOAT16 ? bf16_to_float(h[i]) : f16_to_float(h[i]);
}

void tc_exec_from_float(tc_dtype t, const float *src, void *dst, size_t n)
{
    uint16_t *h = dst;
    for (size_t i = 0; i < n; i++)
        h[i] = t == TC_DT_BFLOAT16 ? float_to_bf16(src[i]) : float_to_f16(src[i]);
}

/* ---- reductions ------------------------------------------------------------------------------------ */

/* The loops take restrict pointers so the compiler vectorizes them: either dst is one of the inputs
 * (dst op= other) or all three are distinct; tc_exec_host_reduce dispatches (every op commutes). */
#define RED_FNS(NAME, T, EXPR)                                                                        \
    static void NAME##_acc(T *restrict d, const T *restrict b, size_t n)                              \
    {                                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                              \
            T x = d[i], y = b[i];                                                                     \
            d[i] = (EXPR);                                                                            \
        }                                                                                             \
    }                                                                                                 \
    static void NAME##_3(T *restrict d, const T *restrict a, const T *restrict b, size_t n)          \
    {                                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                              \
            T x = a[i], y = b[i];                                                                     \
            d[i] = (EXPR);                                                                            \
        }                                                                                             \
    }

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
RED_FNS(sum_f32, float, x + y)
RED_FNS(prod_f32, float, x * y)
RED_FNS(min_f32, float, y < x ? y : x)
RED_FNS(max_f32, float, y > x ? y : x)
RED_FNS(sum_f64, double, x + y)
RED_FNS(prod_f64, double, x * y)
RED_FNS(min_f64, double, y < x ? y : x)
RED_FNS(max_f64, double, y > x ? y : x)
RED_FNS(sum_u32, uint32_t, x + y)
RED_FNS(prod_u32, uint32_t, x * y)
RED_FNS(min_i32, int32_t, y < x ? y : x)
RED_FNS(max_i32, int32_t, y > x ? y : x)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#define RED_CALL(NAME, T)                                                                             \
    do {                                                                                              \
        if (dst == a)                                                                                 \
            NAME##_acc((T *)dst, (const T *)b, n);                                                    \
        else if (dst == b)                                                                            \
            NAME##_acc((T *)dst, (const T *)a, n);                                                    \
        else                                                                                          \
            NAME##_3((T *)dst, (const T *)a, (const T *)b, n);                                        \
    } while (0)

static float red1(tc_redop op, float x, float y)
{
    switch (op) {
    case TC_RED_SUM: return x + y;
    case TC_RED_PROD: return x * y;
    case TC_RED_MIN: return y < x ? y : x;
    default: return y > x ? y : x;
    }
}

/* Nonzero when [p, p+len) and [q, q+len) overlap without being equal. */
static int partial_overlap(const void *p, const void *q, size_t len)
{
    const char *x = p, *y = q;
    return x != y && x < y + len && y < x + len;
}

void tc_exec_host_reduce(tc_dtype t, tc_redop op, void *dst, const void *a, const void *b, size_t n)
{
    size_t len = n * tc_exec_dtype_size(t);
    if (partial_overlap(dst, a, len) || partial_overlap(dst, b, len)) {
        /* shifted overlap (a plan reducing a region into itself shifted): go through a copy */
        void *tmp = malloc(len ? len : 1);
        if (tmp) {
            tc_exec_host_reduce(t, op, tmp, a, b, n);
            memcpy(dst, tmp, len);
            free(tmp);
            return;
        }
    }
    switch (t) {
    case TC_DT_FLOAT32:
        switch (op) {
        case TC_RED_SUM: RED_CALL(sum_f32, float); break;
        case TC_RED_PROD: RED_CALL(prod_f32, float); break;
        case TC_RED_MIN: RED_CALL(min_f32, float); break;
        default: RED_CALL(max_f32, float); break;
        }
        break;
    case TC_DT_FLOAT64:
        switch (op) {
        case TC_RED_SUM: RED_CALL(sum_f64, double); break;
        case TC_RED_PROD: RED_CALL(prod_f64, double); break;
        case TC_RED_MIN: RED_CALL(min_f64, double); break;
        default: RED_CALL(max_f64, double); break;
        }
        break;
    case TC_DT_INT32: /* sum and product wrap modulo 2^32 (unsigned arithmetic), min and max are signed */
        switch (op) {
        case TC_RED_SUM: RED_CALL(sum_u32, uint32_t); break;
        case TC_RED_PROD: RED_CALL(prod_u32, uint32_t); break;
        case TC_RED_MIN: RED_CALL(min_i32, int32_t); break;
        default: RED_CALL(max_i32, int32_t); break;
        }
        break;
    case TC_DT_BFLOAT16: {
        uint16_t *d = dst;
        const uint16_t *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            d[i] = float_to_bf16(red1(op, bf16_to_float(x[i]), bf16_to_float(y[i])));
        break;
    }
    case TC_DT_FLOAT16: {
        uint16_t *d = dst;
        const uint16_t *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            d[i] = float_to_f16(red1(op, f16_to_float(x[i]), f16_to_float(y[i])));
        break;
    }
    default: break;
    }
}

/* ---- random inputs --------------------------------------------------------------------------------- */

/* A float value for op: sums of positive values do not cancel, products stay near 1. */
static double pick(tc_rng *r, tc_redop op)
{
    double u = tc_rng_unit(r);
    switch (op) {
    case TC_RED_SUM: return 0.5 + u;
    case TC_RED_PROD: return 0.8 + 0.45 * u;
    default: {
        double v = (u - 0.5) * 2000.0;
        return v == 0 ? 1.0 : v;
    }
    }
}

void tc_exec_fill_random(tc_dtype t, tc_redop op, void *buf, size_t n, uint64_t seed)
{
    tc_rng r;
    tc_rng_seed(&r, seed);
    switch (t) {
    case TC_DT_FLOAT32:
        for (size_t i = 0; i < n; i++)
            ((float *)buf)[i] = (float)pick(&r, op);
        break;
    case TC_DT_FLOAT64:
        for (size_t i = 0; i < n; i++)
            ((double *)buf)[i] = pick(&r, op);
        break;
    case TC_DT_INT32:
        for (size_t i = 0; i < n; i++) {
            int32_t v;
            if (op == TC_RED_SUM) {
                v = (int32_t)tc_rng_below(&r, 2000) - 1000;
            } else if (op == TC_RED_PROD) {
                static const int32_t f[5] = {-2, -1, 1, 2, 3};
                v = f[tc_rng_below(&r, 5)];
            } else {
                v = (int32_t)(uint32_t)tc_rng_next(&r);
            }
            ((int32_t *)buf)[i] = v ? v : 7;
        }
        break;
    case TC_DT_BFLOAT16:
    case TC_DT_FLOAT16:
        for (size_t i = 0; i < n; i++) {
            double v = pick(&r, op);
            if (op != TC_RED_SUM && op != TC_RED_PROD && t == TC_DT_FLOAT16)
                v /= 100.0; /* keep min/max values well inside float16 range */
            float f = (float)v;
            tc_exec_from_float(t, &f, (uint16_t *)buf + i, 1);
        }
        break;
    default: break;
    }
}

void tc_exec_sparsify(tc_dtype t, void *buf, size_t n, double sparsity, uint64_t seed)
{
    tc_rng r;
    tc_rng_seed(&r, seed);
    const size_t es = tc_exec_dtype_size(t);
    if (sparsity <= 0)
        return;
    if (sparsity >= 1) {
        memset(buf, 0, n * es);
        return;
    }
    /* a threshold on 53 random bits: zero with probability `sparsity` */
    const uint64_t cut = (uint64_t)(sparsity * 9007199254740992.0);
    for (size_t i = 0; i < n; i++)
        if ((tc_rng_next(&r) >> 11) < cut)
            memset((char *)buf + i * es, 0, es);
}

/* ---- comparison ------------------------------------------------------------------------------------ */

static int close_enough(double got, double want, double tol)
{
    if (got == want)
        return 1;
    if (got != got || want != want)
        return 0;
    double scale = fabs(want) > fabs(got) ? fabs(want) : fabs(got);
    return fabs(got - want) <= tol * (scale > 1e-30 ? scale : 1e-30);
}

uint64_t tc_exec_count_wrong(tc_dtype t, const void *got, const void *want, int want_float, size_t n,
                             double tol)
{
    uint64_t wrong = 0;
    switch (t) {
    case TC_DT_FLOAT32:
        for (size_t i = 0; i < n; i++)
            wrong += !close_enough(((const float *)got)[i], ((const float *)want)[i], tol);
        break;
    case TC_DT_FLOAT64:
        for (size_t i = 0; i < n; i++)
            wrong += !close_enough(((const double *)got)[i], ((const double *)want)[i], tol);
        break;
    case TC_DT_INT32:
        for (size_t i = 0; i < n; i++)
            wrong += ((const int32_t *)got)[i] != ((const int32_t *)want)[i];
        break;
    default: {
        const uint16_t *g = got;
        for (size_t i = 0; i < n; i++) {
            float gf, wf;
            tc_exec_to_float(t, g + i, &gf, 1);
            if (want_float)
                wf = ((const float *)want)[i];
            else
                tc_exec_to_float(t, (const uint16_t *)want + i, &wf, 1);
            wrong += !close_enough(gf, wf, tol);
        }
        break;
    }
    }
    return wrong;
}
