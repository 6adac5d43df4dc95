/*
 * The JSON schedule format (man 5 tacosc-schedule): the writer of the schedule IR (the reader is
 * json_read.c), and the format names of output paths.
 *
 * Writer: streams, never builds a tree, so millions of transfers cost no extra memory: the header with
 * fprintf, the transfer lines formatted into a 128 KiB buffer written with one fwrite each.
 * The layout is fixed: one header field per line (lines 2-17), then one transfer per line as a compact array
 *     [src, dst, chunk, "copy"|"reduce", link, step, t_start, t_end, [route...]]
 * so transfer i sits on line 18 + i; fields added to format 1 later (optional on reading) follow the
 * transfers: "photonic" (photonic plans only; written by src/photonic/json.c), "sparse" (annotated plans
 * only: the input density, the thresholds and one format letter per transfer, in transfer order; written by
 * src/sparse/json.c), then "unwind" and "switch_model" (only when set).  Doubles use %.15g when that reads
 * back to the same bits, else %.17g (integral values as integers; tc_fmt_double, shared with the sections),
 * so write -> read -> write is byte-identical.  uint64 fields (seed,
 * size_bytes, chunk_bytes) are JSON integers below 2^53 and decimal strings from there.
 * Cost: the 2,095,104-transfer all-reduce on mesh2d-32x32 (160 MB) writes in 0.28 s on a loaded 2-core
 * machine (0.64 s with a stdio call per field); repeated times are memoized, as formatting doubles costs most.
 */

#include "tacos/emit.h"
#include "tacos/photonic.h"
#include "tacos/sparse.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------------------------------ */
/* Formats                                                                                           */

tc_format tc_format_from_path(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return TC_FMT_AUTO;
    if (!strcasecmp(dot, ".json"))
        return TC_FMT_JSON;
    if (!strcasecmp(dot, ".xml"))
        return TC_FMT_MSCCL;
    if (!strcasecmp(dot, ".svg"))
        return TC_FMT_SVG;
    return TC_FMT_AUTO;
}

tc_status tc_format_parse(const char *s, tc_format *out)
{
    static const struct { const char *name; tc_format f; } names[] = {
        {"auto", TC_FMT_AUTO}, {"json", TC_FMT_JSON}, {"msccl", TC_FMT_MSCCL},
        {"xml", TC_FMT_MSCCL}, {"svg", TC_FMT_SVG}, {"mscclpp", TC_FMT_MSCCLPP},
    };
    if (!s)
        return TC_ERR_INVALID;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(s, names[i].name)) {
            *out = names[i].f;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

/* ------------------------------------------------------------------------------------------------ */
/* Writer                                                                                            */

/* Decimal text of v at p; returns the new end (no NUL).  Two digits per division: the writer formats
 * about seven integers per transfer. */
static char *put_int(char *p, int v)
{
    static const char d2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char tmp[12], *e = tmp + sizeof tmp, *q = e;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    while (u >= 100) {
        q -= 2;
        memcpy(q, d2 + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        q -= 2;
        memcpy(q, d2 + 2 * u, 2);
    } else
        *--q = (char)('0' + u);
    if (v < 0)
        *p++ = '-';
    memcpy(p, q, (size_t)(e - q));
    return p + (e - q);
}

/* put_int and the separator that follows it (a string literal) */
#define PUT_INT_SEP(p, v, sep) (p = put_int(p, v), memcpy(p, sep, sizeof sep - 1), p += sizeof sep - 1)

/* Formatting doubles is the writer's main cost and schedules repeat their times (every transfer of a
 * step), so texts are memoized in a direct-mapped table keyed by the bits, with their lengths. */
#define DCACHE_BITS 12
typedef struct dcache {
    uint64_t key[1 << DCACHE_BITS];
    unsigned char used[1 << DCACHE_BITS], len[1 << DCACHE_BITS];
    char text[1 << DCACHE_BITS][32];
} dcache;

/* The text of d appended at p (no NUL); returns the new end.  c NULL: formatted directly. */
static char *put_double(char *p, dcache *c, double d)
{
    const char *t;
    size_t n;
    char buf[40];
    if (!c) {
        t = tc_fmt_double(d, buf, sizeof buf);
        n = strlen(t);
    } else {
        uint64_t k;
        memcpy(&k, &d, sizeof k);
        size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> (64 - DCACHE_BITS));
        if (!c->used[h] || c->key[h] != k) {
            tc_fmt_double(d, c->text[h], sizeof c->text[h]);
            c->len[h] = (unsigned char)strlen(c->text[h]);
            c->key[h] = k;
            c->used[h] = 1;
        }
        t = c->text[h];
        n = c->len[h];
    }
    memcpy(p, t, n);
    return p + n;
}

/* The transfer lines are formatted into one large buffer and written with one fwrite per buffer: a
 * stdio call per field cost a third of writing 2 million transfers (issue 27).  OBUF_ROOM is the most
 * one step below appends (a line's fixed fields, or one route hop with the closing brackets). */
#define OBUF_BYTES ((size_t)128 << 10)
#define OBUF_ROOM 256
typedef struct obuf {
    FILE *f;
    char *buf, *p, *end;
} obuf;

static void obuf_flush(obuf *o)
{
    fwrite(o->buf, 1, (size_t)(o->p - o->buf), o->f);
    o->p = o->buf;
}

/* room for OBUF_ROOM more bytes at o->p */
static inline void obuf_room(obuf *o)
{
    if (o->end - o->p < OBUF_ROOM)
        obuf_flush(o);
}

tc_status tc_emit_circuits_write(tc_ctx *ctx, const char *topo_name, const tc_sched_photonic *p, FILE *f)
{
    if (p->n_rounds != 1)
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "circuit plan: expected one round, got %d", p->n_rounds);
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"tool\": \"tacosc %s\",\n  \"topology\": ",
            TC_CIRCUITS_FORMAT, TC_JSON_VERSION, TC_VERSION);
    tc_json_escape(f, topo_name);
    fputs(",\n  \"fabric\": ", f);
    tc_photonic_json_write_fabric(f, p);
    fputs(",\n  ", f);
    tc_photonic_json_write_circuits(f, p, &p->rounds[0], "    ");
    fputs("\n}\n", f);
    if (fflush(f) || ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write circuit plan: %s", strerror(errno));
    return TC_OK;
}

tc_status tc_emit_json_write(tc_ctx *ctx, const tc_sched *s, FILE *f)
{
    char a[40];

    if (!isfinite(s->time))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "cannot write JSON: predicted time is not finite");
    for (int i = 0; i < s->n_xfers; i++)
        if (!isfinite(s->xfers[i].t_start) || !isfinite(s->xfers[i].t_end))
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "cannot write JSON: transfer %d has a non-finite time",
                            i);
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"tool\": \"tacosc %s\",\n  \"seed\": ",
            TC_JSON_FORMAT, TC_JSON_VERSION, TC_VERSION);
    tc_json_put_u64(f, s->seed);
    fputs(",\n  \"topology\": ", f);
    tc_json_escape(f, s->topo_name);
    fputs(",\n  \"algorithm\": ", f);
    tc_json_escape(f, s->algo);
    fprintf(f, ",\n  \"collective\": \"%s\",\n  \"ranks\": %d,\n  \"chunks_per_rank\": %d,\n  \"chunks\": %d,\n"
               "  \"root\": %d,\n  \"size_bytes\": ",
            tc_coll_name(s->coll), s->n_ranks, s->chunks_per_rank, s->n_chunks, s->root);
    tc_json_put_u64(f, s->size_bytes);
    fputs(",\n  \"chunk_bytes\": ", f);
    tc_json_put_u64(f, s->chunk_bytes);
    fprintf(f, ",\n  \"predicted_time\": %s,\n  \"steps\": %d,\n  \"transfers\": [",
            tc_fmt_double(s->time, a, sizeof a), s->n_steps);
    dcache *dc = s->n_xfers > 1000 ? calloc(1, sizeof *dc) : NULL; /* optional: NULL formats directly */
    char small[2 * OBUF_ROOM]; /* small plans, or no memory for the large buffer: flushed about every line */
    char *big = s->n_xfers > 100 ? malloc(OBUF_BYTES) : NULL;
    obuf ob0 = {.f = f, .buf = big ? big : small}, *ob = &ob0;
    ob->p = ob->buf;
    ob->end = ob->buf + (big ? OBUF_BYTES : sizeof small);
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        obuf_room(ob);
        char *p = ob->p;
        if (i)
            *p++ = ',';
        memcpy(p, "\n    [", 6);
        p += 6;
        PUT_INT_SEP(p, x->src, ", ");
        PUT_INT_SEP(p, x->dst, ", ");
        if (x->op == TC_OP_REDUCE)
            PUT_INT_SEP(p, x->chunk, ", \"reduce\", ");
        else
            PUT_INT_SEP(p, x->chunk, ", \"copy\", ");
        PUT_INT_SEP(p, x->link, ", ");
        PUT_INT_SEP(p, x->step, ", ");
        p = put_double(p, dc, x->t_start);
        memcpy(p, ", ", 2);
        p = put_double(p + 2, dc, x->t_end);
        memcpy(p, ", [", 3);
        ob->p = p + 3;
        for (int h = 0; h < x->route_len; h++) {
            obuf_room(ob);
            ob->p = put_int(ob->p, s->route[x->route_off + h]);
            if (h + 1 < x->route_len) {
                memcpy(ob->p, ", ", 2);
                ob->p += 2;
            }
        }
        obuf_room(ob);
        memcpy(ob->p, "]]", 2);
        ob->p += 2;
    }
    obuf_flush(ob);
    free(big);
    fputs(s->n_xfers ? "\n  ]" : "]", f);
    if (s->photonic)
        tc_photonic_json_write(f, s->photonic);
    if (s->sparse)
        tc_sparse_json_write(f, s->sparse);
    fprintf(f, ",\n  \"unwind\": %d", s->unwind);
    if (s->switch_model > 0) /* only when the plan was made with --switch-model: older plans stay the same */
        fprintf(f, ",\n  \"switch_model\": \"%s\"", tc_switch_model_name((tc_switch_model)(s->switch_model - 1)));
    if (s->link_model > 0) /* only for --link-model te-ccl: default plans stay the same */
        fprintf(f, ",\n  \"link_model\": \"%s\"", tc_link_model_name((tc_link_model)s->link_model));
    fputs("\n}\n", f);
    free(dc);
    if (fflush(f) || ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write JSON schedule: %s", strerror(errno));
    return TC_OK;
}
