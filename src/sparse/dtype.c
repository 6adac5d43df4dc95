/*
 * Element types and formats of the sparse module: names, sizes, and the bfloat16 / float16 conversions
 * that the codecs' additions (and tacos-run's reductions) use.
 *
 * bfloat16 is the upper half of a float32; float16 is IEEE binary16.  float -> 16 bits rounds to nearest
 * even; a NaN stays a (quiet) NaN; float16 overflows to infinity at 65520 and rounds subnormals exactly.
 */
#include "sparse_int.h"

#include <math.h>
#include <strings.h>

static const char *const dt_names[TC_SP_DTYPE_COUNT] = {"float32", "float64", "int32", "bfloat16", "float16"};
static const size_t dt_sizes[TC_SP_DTYPE_COUNT] = {4, 8, 4, 2, 2};
static const char *const fmt_names[TC_SP_FMT_COUNT + 1] = {"dense", "pici", "coo", "auto"};

const char *tc_sparse_dtype_name(tc_sparse_dtype t) { return (unsigned)t < TC_SP_DTYPE_COUNT ? dt_names[t] : "?"; }
size_t tc_sparse_dtype_size(tc_sparse_dtype t) { return (unsigned)t < TC_SP_DTYPE_COUNT ? dt_sizes[t] : 0; }

tc_status tc_sparse_dtype_parse(const char *s, tc_sparse_dtype *out)
{
    for (int i = 0; s && i < TC_SP_DTYPE_COUNT; i++)
        if (!strcmp(s, dt_names[i])) {
            *out = (tc_sparse_dtype)i;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

const char *tc_sparse_fmt_name(int f) { return f >= 0 && f <= TC_SP_AUTO ? fmt_names[f] : "?"; }

tc_status tc_sparse_fmt_parse(const char *s, int allow_dense, int *out)
{
    for (int f = allow_dense ? 0 : 1; s && f <= TC_SP_AUTO; f++)
        if (!strcasecmp(s, fmt_names[f])) {
            *out = f;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

tc_status tc_sparse_args(tc_ctx *ctx, const char *name, uint64_t n, size_t elem)
{
    if (!sp_width_ok(elem))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "%s: elements of %zu bytes (2, 4 or 8 expected)", name, elem);
    if (n > SP_MAX_N)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "%s: %llu elements, more than the 32-bit indices address (%llu)",
                        name, (unsigned long long)n, SP_MAX_N);
    return TC_OK;
}

/* ---- 16-bit floats -------------------------------------------------------------------------------- */

static float bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_to_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

static uint16_t float_to_f16(float f)
{
    uint32_t u = float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    float a = fabsf(f);
    if (a != a)
        return sign | 0x7e00u;
    if (a >= 65520.0f)
        return sign | 0x7c00u;
    if (a < 6.103515625e-05f) /* subnormal: multiples of 2^-24, rint rounds to nearest even */
        return sign | (uint16_t)rintf(a * 16777216.0f);
    uint32_t b = float_to_bits(a);
    uint32_t exp = (b >> 23) - 112u, man = b & 0x7fffffu;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return sign | (uint16_t)h;
}

float tc_sparse_half_to_float(tc_sparse_dtype t, uint16_t h)
{
    return t == TC_SP_BF16 ? bits_to_float((uint32_t)h << 16) : f16_to_float(h);
}

uint16_t tc_sparse_float_to_half(tc_sparse_dtype t, float f)
{
    if (t != TC_SP_BF16)
        return float_to_f16(f);
    uint32_t u = float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);         /* round to nearest even */
    return (uint16_t)(u >> 16);
}
