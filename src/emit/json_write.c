/*
 * The JSON schedule format (man 5 tacosc-schedule): the writer of the schedule IR (the reader is
 * json_read.c), and the format names of output paths.
 *
 * Writer: streams with fprintf/fwrite, never builds a tree, so millions of transfers cost no extra memory.
 * The layout is fixed: one header field per line (lines 2-17), then one transfer per line as a compact array
 *     [src, dst, chunk, "copy"|"reduce", link, step, t_start, t_end, [route...]]
 * so transfer i sits on line 18 + i; fields added to format 1 later (optional on reading) follow the
 * transfers: "photonic" (photonic plans only), "sparse" (annotated plans only: the input density, the
 * thresholds and one format letter per transfer, in transfer order), then "unwind" and "switch_model" (only
 * when set).  Doubles use %.15g when that reads back to the same bits, else %.17g
 * (integral values as integers), so write -> read -> write is byte-identical.  uint64 fields (seed,
 * size_bytes, chunk_bytes) are JSON integers up to 2^53 and decimal strings above.
 * Cost: a 2.1-million-transfer ring all-reduce (163 MB) writes in 1.7 s on a loaded 2-core machine;
 * formatting doubles dominates, so repeated times are memoized.
 */
#include "json_int.h"

#include "tacos/emit.h"
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

static void put_string(FILE *f, const char *s)
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

static void put_u64(FILE *f, uint64_t v)
{
    if (v <= (1ull << 53))
        fprintf(f, "%llu", (unsigned long long)v);
    else
        fprintf(f, "\"%llu\"", (unsigned long long)v);
}

/* Decimal text of v followed by sep at p; returns the new end (no NUL). */
static char *put_int(char *p, int v, const char *sep)
{
    char tmp[12];
    int n = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    while (*sep)
        *p++ = *sep++;
    return p;
}

/* Formatting doubles is the writer's main cost and schedules repeat their times (every transfer of a
 * step), so texts are memoized in a direct-mapped table keyed by the bits. */
#define DCACHE_BITS 12
typedef struct dcache {
    uint64_t key[1 << DCACHE_BITS];
    unsigned char used[1 << DCACHE_BITS];
    char text[1 << DCACHE_BITS][32];
} dcache;

static const char *fmt_cached(dcache *c, double d, char *buf, size_t n)
{
    if (!c)
        return tc_fmt_double(d, buf, n);
    uint64_t k;
    memcpy(&k, &d, sizeof k);
    size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> (64 - DCACHE_BITS));
    if (!c->used[h] || c->key[h] != k) {
        tc_fmt_double(d, c->text[h], sizeof c->text[h]);
        c->key[h] = k;
        c->used[h] = 1;
    }
    return c->text[h];
}


/* ------------------------------------------------------------------------------------------------ */
/* Photonic rounds (written after the transfers; see man 5 tacosc-schedule, PHOTONIC)                */


static void put_int_list(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, i ? ", %d" : "%d", v[i]);
    fputc(']', f);
}

static void put_breakdown(FILE *f, const tc_ph_breakdown *b)
{
    char x[40];
    fprintf(f, "{\"latency\": %s", tc_fmt_double(b->latency, x, sizeof x));
    fprintf(f, ", \"bandwidth\": %s", tc_fmt_double(b->bandwidth, x, sizeof x));
    fprintf(f, ", \"congestion\": %s", tc_fmt_double(b->congestion, x, sizeof x));
    fprintf(f, ", \"dilation\": %s", tc_fmt_double(b->dilation, x, sizeof x));
    fprintf(f, ", \"reconfig\": %s}", tc_fmt_double(b->reconfig, x, sizeof x));
}

static void put_fabric(FILE *f, const tc_sched_photonic *p)
{
    fprintf(f, "{\"tx\": %d, \"rx\": %d, \"wavelengths\": %d, \"mzi\": %d, \"grid\": [%d, %d], \"fibers\": %d}", p->tx,
            p->rx, p->wavelengths, p->mzi, p->grid_rows, p->grid_cols, p->fibers);
}

/* The fiber summary and the circuits of round r, as members of an object ("fibers": ..., "circuits": [...]). */
static void put_round_circuits(FILE *f, const tc_sched_photonic *p, const tc_ph_round *r, const char *indent)
{
    char x[40];
    if (r->fiber_method == TC_PH_FIBER_NONE)
        fputs("\"fibers\": null", f);
    else {
        fprintf(f, "\"fibers\": {\"method\": \"%s\", \"total\": %d, \"busiest\": %d, \"lp_bound\": %s, \"pairs\": [",
                ph_method_name[r->fiber_method], r->fibers, r->fiber_z, tc_fmt_double(r->fiber_lp, x, sizeof x));
        for (int k = 0; k < r->n_fib; k++)
            put_int_list(f, p->ints + r->fib_off + 3 * k, 3), fputs(k + 1 < r->n_fib ? ", " : "", f);
        fputs("]}", f);
    }
    fputs(", \"circuits\": [", f);
    for (int k = 0; k < r->n_circ; k++) {
        const tc_ph_circuit *c = &p->circuits[r->circ_off + k];
        fprintf(f, "%s\n%s[%d, %d, %d, ", k ? "," : "", indent, c->src, c->dst, c->wavelength);
        put_int_list(f, p->ints + c->srv_off, c->n_srv);
        fputs(", ", f);
        put_int_list(f, p->ints + c->fib_off, c->n_srv - 1);
        fputs(", ", f);
        put_int_list(f, p->ints + c->mzi_off, c->n_mzi);
        fputc(']', f);
    }
    fputc(']', f);
}

static void put_photonic(FILE *f, const tc_sched_photonic *p)
{
    char x[40];
    fprintf(f, "  \"photonic\": {\n    \"reconfig\": %s,\n", tc_fmt_double(p->reconfig, x, sizeof x));
    fprintf(f, "    \"circuit_alpha\": %s,\n", tc_fmt_double(p->alpha, x, sizeof x));
    fprintf(f, "    \"circuit_beta\": %s,\n    \"fabric\": ", tc_fmt_double(p->beta, x, sizeof x));
    put_fabric(f, p);
    fputs(",\n    \"fallbacks\": [", f);
    for (int i = 0; i < p->n_fallbacks; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, p->fallbacks[i]);
    }
    fputs("],\n    \"time\": ", f);
    put_breakdown(f, &p->total);
    fputs(",\n    \"fixed\": ", f);
    put_breakdown(f, &p->fixed);
    fprintf(f, ",\n    \"reconfigurations\": %d,\n    \"rounds\": [", p->n_reconfigs);
    for (int i = 0; i < p->n_rounds; i++) {
        const tc_ph_round *r = &p->rounds[i];
        fprintf(f, "%s\n      {\"step\": %d, \"sub\": %d, \"subs\": %d, \"topology\": \"%s\", \"which\": %d, "
                   "\"reconfigure\": %s, \"pairs\": %d, \"bytes\": %s, \"congestion\": %d, \"dilation\": %d,\n"
                   "       \"time\": ",
                i ? "," : "", r->step, r->sub, r->n_sub, ph_kind_name[r->kind], r->which, r->reconfig ? "true" : "false",
                r->n_pairs, tc_fmt_double(r->bytes, x, sizeof x), r->congestion, r->dilation);
        put_breakdown(f, &r->t);
        if (r->pair_off >= 0) {
            fputs(",\n       \"split_pairs\": [", f);
            for (int k = 0; k < r->n_pairs; k++)
                fprintf(f, "%s[%d, %d]", k ? ", " : "", p->ints[r->pair_off + 2 * k], p->ints[r->pair_off + 2 * k + 1]);
            fputc(']', f);
        }
        fputs(",\n       ", f);
        put_round_circuits(f, p, r, "        ");
        fputc('}', f);
    }
    fputs(p->n_rounds ? "\n    ]\n  }" : "]\n  }", f);
}

tc_status tc_emit_circuits_write(tc_ctx *ctx, const char *topo_name, const tc_sched_photonic *p, FILE *f)
{
    if (p->n_rounds != 1)
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "circuit plan: expected one round, got %d", p->n_rounds);
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"tool\": \"tacosc %s\",\n  \"topology\": ",
            TC_CIRCUITS_FORMAT, TC_JSON_VERSION, TC_VERSION);
    put_string(f, topo_name);
    fputs(",\n  \"fabric\": ", f);
    put_fabric(f, p);
    fputs(",\n  ", f);
    put_round_circuits(f, p, &p->rounds[0], "    ");
    fputs("\n}\n", f);
    if (fflush(f) || ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write circuit plan: %s", strerror(errno));
    return TC_OK;
}

tc_status tc_emit_json_write(tc_ctx *ctx, const tc_sched *s, FILE *f)
{
    char a[40], b[40];

    if (!isfinite(s->time))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "cannot write JSON: predicted time is not finite");
    for (int i = 0; i < s->n_xfers; i++)
        if (!isfinite(s->xfers[i].t_start) || !isfinite(s->xfers[i].t_end))
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "cannot write JSON: transfer %d has a non-finite time",
                            i);
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"tool\": \"tacosc %s\",\n  \"seed\": ",
            TC_JSON_FORMAT, TC_JSON_VERSION, TC_VERSION);
    put_u64(f, s->seed);
    fputs(",\n  \"topology\": ", f);
    put_string(f, s->topo_name);
    fputs(",\n  \"algorithm\": ", f);
    put_string(f, s->algo);
    fprintf(f, ",\n  \"collective\": \"%s\",\n  \"ranks\": %d,\n  \"chunks_per_rank\": %d,\n  \"chunks\": %d,\n"
               "  \"root\": %d,\n  \"size_bytes\": ",
            tc_coll_name(s->coll), s->n_ranks, s->chunks_per_rank, s->n_chunks, s->root);
    put_u64(f, s->size_bytes);
    fputs(",\n  \"chunk_bytes\": ", f);
    put_u64(f, s->chunk_bytes);
    fprintf(f, ",\n  \"predicted_time\": %s,\n  \"steps\": %d,\n  \"transfers\": [",
            tc_fmt_double(s->time, a, sizeof a), s->n_steps);
    dcache *dc = s->n_xfers > 1000 ? calloc(1, sizeof *dc) : NULL; /* optional: NULL formats directly */
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        char line[256], *p = line;
        if (i)
            *p++ = ',';
        memcpy(p, "\n    [", 6);
        p += 6;
        p = put_int(p, x->src, ", ");
        p = put_int(p, x->dst, ", ");
        p = put_int(p, x->chunk, x->op == TC_OP_REDUCE ? ", \"reduce\", " : ", \"copy\", ");
        p = put_int(p, x->link, ", ");
        p = put_int(p, x->step, ", ");
        fwrite(line, 1, (size_t)(p - line), f);
        const char *ta = fmt_cached(dc, x->t_start, a, sizeof a);
        fputs(ta, f);
        fputs(", ", f);
        fputs(fmt_cached(dc, x->t_end, b, sizeof b), f);
        fputs(", [", f);
        p = line;
        for (int h = 0; h < x->route_len; h++) {
            p = put_int(p, s->route[x->route_off + h], h + 1 < x->route_len ? ", " : "");
            if (p - line > 200) {
                fwrite(line, 1, (size_t)(p - line), f);
                p = line;
            }
        }
        memcpy(p, "]]", 2);
        p += 2;
        fwrite(line, 1, (size_t)(p - line), f);
    }
    fputs(s->n_xfers ? "\n  ]" : "]", f);
    if (s->photonic) {
        fputs(",\n", f);
        put_photonic(f, s->photonic);
    }
    if (s->sparse)
        tc_sparse_json_write(f, s->sparse);
    fprintf(f, ",\n  \"unwind\": %d", s->unwind);
    if (s->switch_model > 0) /* only when the plan was made with --switch-model: older plans stay the same */
        fprintf(f, ",\n  \"switch_model\": \"%s\"", tc_switch_model_name((tc_switch_model)(s->switch_model - 1)));
    fputs("\n}\n", f);
    free(dc);
    if (fflush(f) || ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write JSON schedule: %s", strerror(errno));
    return TC_OK;
}
