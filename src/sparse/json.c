/*
 * The sparse section of a JSON schedule (man 5 tacosc-schedule; include/tacos/sparse.h, tc_sparse_json_*):
 *     "sparse": {"density": D, "format": "pici"|"coo"|"auto", "dtype": T,
 *                "thresholds": {"pici": [INTRA, INTER, ALLGATHER], "coo": [...]}, "formats": "dpc..."}
 * one format letter per transfer, in transfer order (d dense, p Pici, c COO).
 *
 * Writer: the section as the schedule writer (src/emit/json_write.c) places it after the transfers; numbers
 * through tc_fmt_double, so write -> read -> write is byte-identical.
 * Reader: the section's cJSON value, which the schedule reader (src/emit/json_read.c) parsed; every member
 * required, none unknown or repeated, density and thresholds in [0, 1].  Diagnostics are
 * `FILE:LINE: error: field "sparse": ...` with LINE the line of the "sparse" key, asked of the schedule
 * reader (line(arg)) only when there is an error.  The letters are counted against the transfers once the
 * reader has them (tc_sparse_json_check).
 */
#include "tacos/sparse.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------ */
/* Writer                                                                                            */

void tc_sparse_json_write(FILE *f, const tc_sched_sparse *sp)
{
    char x[40];
    fprintf(f, ",\n  \"sparse\": {\n    \"density\": %s,\n    \"format\": \"%s\",\n    \"dtype\": \"%s\",\n"
               "    \"thresholds\": {",
            tc_fmt_double(sp->density, x, sizeof x), tc_sparse_fmt_name(sp->format),
            tc_sparse_dtype_name((tc_sparse_dtype)sp->dtype));
    for (int fm = TC_SP_PICI; fm < TC_SP_FMT_COUNT; fm++) {
        fprintf(f, "%s\"%s\": [", fm > TC_SP_PICI ? ", " : "", tc_sparse_fmt_name(fm));
        for (int k = 0; k < 3; k++)
            fprintf(f, "%s%s", k ? ", " : "", tc_fmt_double(sp->th[fm][k], x, sizeof x));
        fputc(']', f);
    }
    fputs("},\n    \"formats\": \"", f);
    for (int i = 0; i < sp->n; i++)
        fputc(sp->fmt[i] < TC_SP_FMT_COUNT ? "dpc"[sp->fmt[i]] : '?', f);
    fputs("\"\n  }", f);
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader                                                                                            */

/* Where the section's diagnostics go. */
typedef struct spj {
    tc_ctx *ctx;
    const char *file;
    int (*line)(const void *arg);
    const void *arg;
} spj;

static tc_status sp_err(const spj *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tc_status sp_err(const spj *j, const char *fmt, ...)
{
    char msg[512], full[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "field \"sparse\": %s", msg);
    return tc_error(j->ctx, TC_ERR_INVALID, j->file, j->line ? j->line(j->arg) : 0, "%s", full);
}

/* The JSON type of v, as the schedule reader words it. */
/* A number in [0, 1]. */
static tc_status sp_unit(const spj *j, const cJSON *v, const char *what, double *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1))
        return sp_err(j, "%s must be a number from 0 to 1", what);
    *out = v->valuedouble;
    return TC_OK;
}

tc_status tc_sparse_json_read(tc_ctx *ctx, const struct cJSON *o, const char *file, int (*line)(const void *arg),
                              const void *arg, tc_sched_sparse **out)
{
    static const char *const names[] = {"density", "format", "dtype", "thresholds", "formats"};
    const int nn = (int)(sizeof names / sizeof names[0]);
    const spj j = {.ctx = ctx, .file = file, .line = line, .arg = arg};
    if (!cJSON_IsObject(o))
        return sp_err(&j, "must be an object, not %s", tc_json_type_name(o));
    for (const cJSON *e = o->child; e; e = e->next) {
        int k = 0;
        while (k < nn && strcmp(e->string, names[k]))
            k++;
        if (k == nn)
            return sp_err(&j, "unknown member \"%s\"", e->string);
        for (const cJSON *d = e->next; d; d = d->next)
            if (!strcmp(d->string, e->string))
                return sp_err(&j, "member \"%s\" appears twice", e->string);
    }
    for (int k = 0; k < nn; k++)
        if (!cJSON_GetObjectItemCaseSensitive(o, names[k]))
            return sp_err(&j, "missing member \"%s\"", names[k]);
    tc_status st;
    tc_sched_sparse *sp = calloc(1, sizeof *sp);
    if (!sp)
        return tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(o, "format"), *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(o, "thresholds"), *fs = cJSON_GetObjectItemCaseSensitive(o, "formats");
    tc_sparse_dtype dtype;
    if ((st = sp_unit(&j, cJSON_GetObjectItemCaseSensitive(o, "density"), "\"density\"", &sp->density)))
        goto fail;
    if (!cJSON_IsString(fmt) || tc_sparse_fmt_parse(fmt->valuestring, 0, &sp->format)) {
        st = sp_err(&j, "\"format\" must be \"pici\", \"coo\" or \"auto\"");
        goto fail;
    }
    if (!cJSON_IsString(dt) || tc_sparse_dtype_parse(dt->valuestring, &dtype)) {
        st = sp_err(&j, "\"dtype\" must be float32, float64, int32, bfloat16 or float16");
        goto fail;
    }
    sp->dtype = (int)dtype;
    if (!cJSON_IsObject(th) || cJSON_GetArraySize(th) != 2) {
        st = sp_err(&j, "\"thresholds\" must be {\"pici\": [INTRA, INTER, ALLGATHER], \"coo\": [...]}");
        goto fail;
    }
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(th, tc_sparse_fmt_name(f));
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3) {
            st = sp_err(&j, "\"thresholds\" must be {\"pici\": [INTRA, INTER, ALLGATHER], \"coo\": [...]}");
            goto fail;
        }
        int k = 0;
        for (const cJSON *v = a->child; v; v = v->next, k++)
            if ((st = sp_unit(&j, v, "a threshold", &sp->th[f][k])))
                goto fail;
    }
    if (!cJSON_IsString(fs)) {
        st = sp_err(&j, "\"formats\" must be a string of one letter per transfer (d, p, c)");
        goto fail;
    }
    size_t n = strlen(fs->valuestring);
    if (n > INT32_MAX || !(sp->fmt = malloc(n ? n : 1))) {
        st = tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const char *c = strchr("dpc", fs->valuestring[i]);
        if (!c || !*c) {
            st = sp_err(&j, "\"formats\": transfer %zu has '%c', not d (dense), p (pici) or c (coo)", i,
                        fs->valuestring[i]);
            goto fail;
        }
        sp->fmt[i] = (unsigned char)(c - "dpc");
    }
    sp->n = (int)n;
    *out = sp;
    return TC_OK;
fail:
    tc_sched_sparse_free(sp);
    return st;
}

tc_status tc_sparse_json_check(tc_ctx *ctx, const tc_sched_sparse *sp, int n_xfers, const char *file,
                               int (*line)(const void *arg), const void *arg)
{
    const spj j = {.ctx = ctx, .file = file, .line = line, .arg = arg};
    if (sp->n != n_xfers)
        return sp_err(&j, "\"formats\" has %d letters for %d transfers", sp->n, n_xfers);
    return TC_OK;
}
