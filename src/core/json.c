/* JSON helpers shared by the readers and writers of JSON formats (src/emit, src/photonic, src/sparse,
 * src/mscclpp). */
#include "tacos/ir.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>

const char *tc_json_type_name(const struct cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "invalid";
}

void tc_json_put_u64(FILE *f, uint64_t v)
{
    if ((double)v < TC_TWO53)
        fprintf(f, "%llu", (unsigned long long)v);
    else
        fprintf(f, "\"%llu\"", (unsigned long long)v);
}

const char *tc_json_get_u64(const struct cJSON *v, uint64_t *out, char *why, size_t n)
{
    if (cJSON_IsString(v)) {
        const char *p = v->valuestring;
        uint64_t x = 0;
        if (!*p) {
            snprintf(why, n, "must be an unsigned integer, not \"\"");
            return why;
        }
        for (; *p; p++) {
            if (*p < '0' || *p > '9' || x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
                snprintf(why, n, "must be an unsigned 64-bit integer, not \"%s\"", v->valuestring);
                return why;
            }
            x = x * 10 + (uint64_t)(*p - '0');
        }
        *out = x;
        return NULL;
    }
    if (!cJSON_IsNumber(v)) {
        snprintf(why, n, "must be an unsigned integer, not %s", tc_json_type_name(v));
        return why;
    }
    const double d = v->valuedouble;
    if (d != floor(d) || d < 0) {
        snprintf(why, n, "must be an unsigned integer, not %.17g", d);
        return why;
    }
    if (d >= TC_TWO53) { /* it may be 2^53 + 1 rounded by the parser: a string only */
        snprintf(why, n, "is 2^53 or larger and cannot be read exactly as a number; write it as a string");
        return why;
    }
    *out = (uint64_t)d;
    return NULL;
}

void tc_json_escape(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}
