/* Status strings, the context and diagnostics: the only place that formats messages. */
#include "tacos/ir.h"

#include <stdlib.h>
#include <string.h>

const char *tc_status_str(tc_status st)
{
    switch (st) {
    case TC_OK: return "success";
    case TC_ERR_NOMEM: return "out of memory";
    case TC_ERR_IO: return "input/output error";
    case TC_ERR_PARSE: return "parse error";
    case TC_ERR_INVALID: return "invalid input";
    case TC_ERR_UNSUPPORTED: return "unsupported";
    case TC_ERR_CHECK: return "schedule check failed";
    case TC_ERR_LIMIT: return "runtime limit exceeded";
    case TC_ERR_INTERNAL: return "internal error";
    case TC_ERR_USAGE: return "usage error";
    }
    return "unknown status";
}

void tc_ctx_init(tc_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->seed = TC_DEFAULT_SEED;
    ctx->sink = tc_diag_stderr;
}

static const char *level_name(tc_diag_level level)
{
    return level == TC_DIAG_ERROR ? "error" : level == TC_DIAG_WARNING ? "warning" : "note";
}

/* Format "file:line:col: level: msg" into buf; the single definition of the diagnostic layout. */
static void format_diag(char *buf, size_t n, tc_diag_level level, const char *file, int line, int col,
                        const char *msg)
{
    if (file && line > 0 && col > 0)
        snprintf(buf, n, "%s:%d:%d: %s: %s", file, line, col, level_name(level), msg);
    else if (file && line > 0)
        snprintf(buf, n, "%s:%d: %s: %s", file, line, level_name(level), msg);
    else if (file)
        snprintf(buf, n, "%s: %s: %s", file, level_name(level), msg);
    else
        snprintf(buf, n, "tacosc: %s: %s", level_name(level), msg);
}

void tc_diag_stderr(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    char buf[2048];
    (void)user;
    format_diag(buf, sizeof buf, level, file, line, col, msg);
    fprintf(stderr, "%s\n", buf);
}

void tc_diag_buffer(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    char buf[2048];
    format_diag(buf, sizeof buf, level, file, line, col, msg);
    tc_buf_printf((tc_buf *)user, "%s\n", buf);
}

const char *tc_diag_note(const char *file, int line, const char *msg, char *buf, size_t n)
{
    if (file && file[0] && line > 0)
        snprintf(buf, n, "%s:%d: %s", file, line, msg);
    else
        snprintf(buf, n, "%s", msg);
    return buf;
}

void tc_diag_record(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    tc_diag_rec *r = user;
    if (level != TC_DIAG_ERROR || r->have)
        return;
    r->have = 1;
    snprintf(r->file, sizeof r->file, "%s", file ? file : "");
    r->line = line;
    r->col = col;
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
}

void tc_diag_v(tc_ctx *ctx, tc_diag_level level, const char *file, int line, int col, const char *fmt,
               va_list ap)
{
    char msg[1536];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (level == TC_DIAG_ERROR)
        ctx->n_errors++;
    else if (level == TC_DIAG_WARNING)
        ctx->n_warnings++;
    if (ctx->sink)
        ctx->sink(ctx->sink_user, level, file, line, col, msg);
}

void tc_diag(tc_ctx *ctx, tc_diag_level level, const char *file, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(ctx, level, file, line, col, fmt, ap);
    va_end(ap);
}

tc_status tc_error(tc_ctx *ctx, tc_status st, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(ctx, TC_DIAG_ERROR, file, line, 0, fmt, ap);
    va_end(ap);
    return st;
}

void tc_warn(tc_ctx *ctx, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(ctx, TC_DIAG_WARNING, file, line, 0, fmt, ap);
    va_end(ap);
}

tc_status tc_buf_printf(tc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TC_ERR_INTERNAL;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return TC_ERR_NOMEM;
        b->data = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return TC_OK;
}

void tc_buf_free(tc_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Diagnostics held back in order and passed on later (compile: the simulation's while the checker runs beside
 * it; tacosc: the output file's while it is written beside the checker). */
typedef struct tc_held_diag {
    tc_diag_level level;
    char *file, *msg;
    int line, col;
} tc_held_diag;

void tc_diag_hold_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    tc_diag_hold *h = user;
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        tc_held_diag *d = realloc(h->d, (size_t)cap * sizeof *d);
        if (!d) {
            h->nomem = 1;
            return;
        }
        h->d = d;
        h->cap = cap;
    }
    tc_held_diag *e = &h->d[h->n];
    e->file = file ? strdup(file) : NULL;
    e->msg = strdup(msg);
    if ((file && !e->file) || !e->msg) {
        free(e->file);
        free(e->msg);
        h->nomem = 1;
        return;
    }
    e->level = level;
    e->line = line;
    e->col = col;
    h->n++;
}

void tc_diag_hold_release(tc_diag_hold *h, tc_ctx *ctx)
{
    for (int i = 0; i < h->n; i++) {
        if (ctx)
            tc_diag(ctx, h->d[i].level, h->d[i].file, h->d[i].line, h->d[i].col, "%s", h->d[i].msg);
        free(h->d[i].file);
        free(h->d[i].msg);
    }
    if (ctx && h->nomem)
        tc_warn(ctx, NULL, 0, "out of memory: held diagnostics were lost");
    free(h->d);
    memset(h, 0, sizeof *h);
}
