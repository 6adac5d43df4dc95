/*
 * The photonic section of a JSON schedule (man 5 tacosc-schedule, PHOTONIC; include/tacos/photonic.h,
 * tc_photonic_json_*): the plan's fabric, fallbacks, time breakdowns and one object per round
 *     {"step", "sub", "subs", "topology": "initial"|"fallback"|"own", "which", "reconfigure", "pairs",
 *      "bytes", "congestion", "dilation", "time", ["split_pairs",] "fibers": null|{...}, "circuits": [...]}
 * each circuit [src, dst, wavelength, [servers], [fibers], [mzis]].
 *
 * Writer: the section as the schedule writer (src/emit/json_write.c) places it after the transfers, and the
 * fabric and circuits of a circuit plan (tc_emit_circuits_write); numbers through tc_fmt_double, so
 * write -> read -> write is byte-identical.
 * Reader: the section's cJSON value, which the schedule reader (src/emit/json_read.c) parsed; every member
 * checked (known, once, required, typed, in range: steps, ranks, fallbacks, servers, wavelengths, MZIs).
 * Diagnostics are `FILE:LINE: error: field "photonic": [WHERE: ]...` with WHERE the fabric, a breakdown or
 * a round, LINE the line of the "photonic" key, asked of the schedule reader (line(arg)) only on error.
 * Memory: the plan's integer lists (pairs, servers, fibers, MZIs) in one array, p->ints.
 */
#include "tacos/photonic.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* the round kinds and fiber routing methods, by their enum values */
static const char *const ph_kind_name[3] = {"initial", "fallback", "own"};
static const char *const ph_method_name[3] = {"none", "ilp", "lp-rounding"};

/* ------------------------------------------------------------------------------------------------ */
/* Writer                                                                                            */

/* s as a JSON string: the schedule writer's escaping (src/emit/json_write.c, put_string). */
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

void tc_photonic_json_write_fabric(FILE *f, const tc_sched_photonic *p)
{
    fprintf(f, "{\"tx\": %d, \"rx\": %d, \"wavelengths\": %d, \"mzi\": %d, \"grid\": [%d, %d], \"fibers\": %d}", p->tx,
            p->rx, p->wavelengths, p->mzi, p->grid_rows, p->grid_cols, p->fibers);
}

void tc_photonic_json_write_circuits(FILE *f, const tc_sched_photonic *p, const tc_ph_round *r, const char *indent)
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

void tc_photonic_json_write(FILE *f, const tc_sched_photonic *p)
{
    char x[40];
    fprintf(f, ",\n  \"photonic\": {\n    \"reconfig\": %s,\n", tc_fmt_double(p->reconfig, x, sizeof x));
    fprintf(f, "    \"circuit_alpha\": %s,\n", tc_fmt_double(p->alpha, x, sizeof x));
    fprintf(f, "    \"circuit_beta\": %s,\n    \"fabric\": ", tc_fmt_double(p->beta, x, sizeof x));
    tc_photonic_json_write_fabric(f, p);
    fputs(",\n    \"fallbacks\": [", f);
    for (int i = 0; i < p->n_fallbacks; i++) {
        if (i)
            fputs(", ", f);
        tc_json_escape(f, p->fallbacks[i]);
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
        tc_photonic_json_write_circuits(f, p, r, "        ");
        fputc('}', f);
    }
    fputs(p->n_rounds ? "\n    ]\n  }" : "]\n  }", f);
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader                                                                                            */

/* The JSON type of v, as the schedule reader words it. */
typedef struct phr {
    tc_ctx *ctx;
    const char *file;
    int (*line)(const void *arg); /* the line of the "photonic" key, asked only on error */
    const void *arg;
    tc_sched_photonic *p;
    int cap_ints;
    char where[64];   /* "round 3", "fabric", ... */
} phr;

static tc_status ph_err(phr *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tc_status ph_err(phr *h, const char *fmt, ...)
{
    char msg[768], full[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "field \"photonic\": %s%s%s", h->where, h->where[0] ? ": " : "", msg);
    return tc_error(h->ctx, TC_ERR_INVALID, h->file, h->line ? h->line(h->arg) : 0, "%s", full);
}

/* Every member of o is one of the names (NULL-terminated) and appears once; the first `required` are required. */
static tc_status ph_members(phr *h, const cJSON *o, const char *const *names, int required)
{
    if (!cJSON_IsObject(o))
        return ph_err(h, "must be an object, not %s", tc_json_type_name(o));
    for (const cJSON *e = o->child; e; e = e->next) {
        int known = 0;
        for (int k = 0; names[k] && !known; k++)
            known = !strcmp(e->string, names[k]);
        if (!known)
            return ph_err(h, "unknown member \"%s\"", e->string);
        for (const cJSON *d = e->next; d; d = d->next)
            if (!strcmp(d->string, e->string))
                return ph_err(h, "member \"%s\" appears twice", e->string);
    }
    for (int k = 0; k < required; k++)
        if (!cJSON_GetObjectItemCaseSensitive(o, names[k]))
            return ph_err(h, "missing member \"%s\"", names[k]);
    return TC_OK;
}

static tc_status ph_int_v(phr *h, const cJSON *v, const char *name, long long lo, long long hi, int *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return ph_err(h, "\"%s\" must be an integer, not %s", name, cJSON_IsNumber(v) ? "a fraction" : tc_json_type_name(v));
    if (v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return ph_err(h, "\"%s\" is %.17g, out of range (%lld to %lld)", name, v->valuedouble, lo, hi);
    *out = (int)v->valuedouble;
    return TC_OK;
}

static tc_status ph_int(phr *h, const cJSON *o, const char *name, long long lo, long long hi, int *out)
{
    return ph_int_v(h, cJSON_GetObjectItemCaseSensitive(o, name), name, lo, hi, out);
}

static tc_status ph_num(phr *h, const cJSON *o, const char *name, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return ph_err(h, "\"%s\" must be a finite number >= 0", name);
    *out = v->valuedouble;
    return TC_OK;
}

static tc_status ph_breakdown(phr *h, const cJSON *o, const char *name, tc_ph_breakdown *b)
{
    static const char *const names[] = {"latency", "bandwidth", "congestion", "dilation", "reconfig", NULL};
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    char where[64];
    memcpy(where, h->where, sizeof where);
    snprintf(h->where + strlen(h->where), sizeof h->where - strlen(h->where), "%s\"%s\"", h->where[0] ? " " : "",
             name);
    tc_status st = ph_members(h, v, names, 5);
    if (!st && !(st = ph_num(h, v, "latency", &b->latency)) && !(st = ph_num(h, v, "bandwidth", &b->bandwidth)) &&
        !(st = ph_num(h, v, "congestion", &b->congestion)) && !(st = ph_num(h, v, "dilation", &b->dilation)))
        st = ph_num(h, v, "reconfig", &b->reconfig);
    memcpy(h->where, where, sizeof where);
    return st;
}

/* An array of integers in [lo, hi] appended to p->ints; *off and *n receive where and how many. */
static tc_status ph_ints(phr *h, const cJSON *a, const char *name, long long lo, long long hi, int *off, int *n)
{
    if (!cJSON_IsArray(a))
        return ph_err(h, "\"%s\" must be an array of integers, not %s", name, tc_json_type_name(a));
    int m = cJSON_GetArraySize(a);
    tc_sched_photonic *p = h->p;
    tc_status gst = tc_grow((void **)&p->ints, &h->cap_ints, p->n_ints + m, sizeof *p->ints);
    if (gst)
        return tc_error(h->ctx, gst, h->file, 0, "out of memory");
    *off = p->n_ints;
    for (const cJSON *e = a->child; e; e = e->next) {
        int v;
        tc_status st = ph_int_v(h, e, name, lo, hi, &v);
        if (st)
            return st;
        p->ints[p->n_ints++] = v;
    }
    *n = m;
    return TC_OK;
}

static tc_status ph_round(phr *h, const cJSON *o, int i, const tc_sched *s, int steps)
{
    static const char *const names[] = {"step", "sub", "subs", "topology", "which", "reconfigure", "pairs", "bytes",
                                        "congestion", "dilation", "time", "fibers", "circuits", "split_pairs", NULL};
    tc_sched_photonic *p = h->p;
    tc_ph_round *r = &p->rounds[i];
    tc_status st;
    snprintf(h->where, sizeof h->where, "round %d", i);
    if ((st = ph_members(h, o, names, 13)) || (st = ph_int(h, o, "step", 0, steps - 1, &r->step)) ||
        (st = ph_int(h, o, "subs", 1, INT32_MAX, &r->n_sub)) || (st = ph_int(h, o, "sub", 0, r->n_sub - 1, &r->sub)))
        return st;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "topology");
    r->kind = -1;
    for (int q = 0; q < 3 && cJSON_IsString(k); q++)
        if (!strcmp(k->valuestring, ph_kind_name[q]))
            r->kind = q;
    if (r->kind < 0)
        return ph_err(h, "\"topology\" must be \"initial\", \"fallback\" or \"own\"");
    int hi = r->kind == TC_PH_INITIAL ? 0 : r->kind == TC_PH_FALLBACK ? p->n_fallbacks - 1 : i;
    if ((st = ph_int(h, o, "which", 0, hi, &r->which)))
        return st;
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(o, "reconfigure");
    if (!cJSON_IsBool(rc))
        return ph_err(h, "\"reconfigure\" must be true or false");
    r->reconfig = cJSON_IsTrue(rc);
    if ((st = ph_int(h, o, "pairs", 0, INT32_MAX, &r->n_pairs)) || (st = ph_num(h, o, "bytes", &r->bytes)) ||
        (st = ph_int(h, o, "congestion", 0, INT32_MAX, &r->congestion)) ||
        (st = ph_int(h, o, "dilation", 0, INT32_MAX, &r->dilation)) || (st = ph_breakdown(h, o, "time", &r->t)))
        return st;
    r->pair_off = -1;
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "split_pairs");
    if ((sp != NULL) != (r->n_sub > 1))
        return ph_err(h, r->n_sub > 1 ? "a split step needs \"split_pairs\"" : "\"split_pairs\" belongs to split steps only");
    if (sp) {
        if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) != r->n_pairs)
            return ph_err(h, "\"split_pairs\" must be an array of %d [src, dst] pairs", r->n_pairs);
        int first = -1;
        for (const cJSON *e = sp->child; e; e = e->next) {
            int off, n;
            if ((st = ph_ints(h, e, "split_pairs", 0, s->n_ranks - 1, &off, &n)))
                return st;
            if (n != 2)
                return ph_err(h, "\"split_pairs\" must hold [src, dst] pairs");
            if (first < 0)
                first = off;
        }
        r->pair_off = first < 0 ? p->n_ints : first;
    }
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(o, "fibers");
    r->fiber_method = TC_PH_FIBER_NONE;
    if (!cJSON_IsNull(fb)) {
        static const char *const fnames[] = {"method", "total", "busiest", "lp_bound", "pairs", NULL};
        snprintf(h->where, sizeof h->where, "round %d \"fibers\"", i);
        if ((st = ph_members(h, fb, fnames, 5)))
            return st;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(fb, "method");
        for (int q = 1; q < 3 && cJSON_IsString(m); q++)
            if (!strcmp(m->valuestring, ph_method_name[q]))
                r->fiber_method = q;
        if (r->fiber_method == TC_PH_FIBER_NONE)
            return ph_err(h, "\"method\" must be \"ilp\" or \"lp-rounding\"");
        const cJSON *pa = cJSON_GetObjectItemCaseSensitive(fb, "pairs");
        if ((st = ph_int(h, fb, "total", 0, INT32_MAX, &r->fibers)) ||
            (st = ph_int(h, fb, "busiest", 0, INT32_MAX, &r->fiber_z)) || (st = ph_num(h, fb, "lp_bound", &r->fiber_lp)))
            return st;
        if (!cJSON_IsArray(pa))
            return ph_err(h, "\"pairs\" must be an array of [server, server, fibers]");
        r->n_fib = 0;
        r->fib_off = p->n_ints;
        const int servers = p->grid_rows * p->grid_cols;
        for (const cJSON *e = pa->child; e; e = e->next) {
            int off, n;
            if ((st = ph_ints(h, e, "pairs", 0, INT32_MAX, &off, &n)))
                return st;
            if (n != 3 || p->ints[off] >= servers || p->ints[off + 1] >= servers)
                return ph_err(h, "\"pairs\" must hold [server, server, fibers] with servers below %d", servers);
            r->n_fib++;
        }
        snprintf(h->where, sizeof h->where, "round %d", i);
    }
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "circuits");
    if (!cJSON_IsArray(cs))
        return ph_err(h, "\"circuits\" must be an array");
    if (!r->reconfig && cJSON_GetArraySize(cs) > 0)
        return ph_err(h, "circuits are set up at a reconfiguration only");
    r->circ_off = p->n_circuits;
    r->n_circ = cJSON_GetArraySize(cs);
    if (r->n_circ > 0) {
        tc_ph_circuit *c = realloc(p->circuits, ((size_t)p->n_circuits + r->n_circ) * sizeof *c);
        if (!c)
            return tc_error(h->ctx, TC_ERR_NOMEM, h->file, 0, "out of memory");
        p->circuits = c;
    }
    const int servers = p->grid_rows * p->grid_cols;
    const long long mzis = (long long)servers * p->mzi * p->mzi;
    for (const cJSON *e = cs->child; e; e = e->next) {
        tc_ph_circuit *c = &p->circuits[p->n_circuits];
        memset(c, 0, sizeof *c);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 6)
            return ph_err(h, "circuit %d: expected [src, dst, wavelength, [servers], [fibers], [mzis]]",
                          p->n_circuits - r->circ_off);
        const cJSON *v = e->child;
        int nf;
        if ((st = ph_int_v(h, v, "circuit src", 0, s->n_ranks - 1, &c->src)) ||
            (st = ph_int_v(h, v->next, "circuit dst", 0, s->n_ranks - 1, &c->dst)) ||
            (st = ph_int_v(h, v->next->next, "circuit wavelength", -1, p->wavelengths - 1, &c->wavelength)) ||
            (st = ph_ints(h, v->next->next->next, "circuit servers", 0, servers - 1, &c->srv_off, &c->n_srv)) ||
            (st = ph_ints(h, v->next->next->next->next, "circuit fibers", 0, INT32_MAX, &c->fib_off, &nf)) ||
            (st = ph_ints(h, v->next->next->next->next->next, "circuit mzis", 0, mzis > 0 ? mzis - 1 : -1, &c->mzi_off,
                          &c->n_mzi)))
            return st;
        if (c->n_srv < 1 || nf != c->n_srv - 1)
            return ph_err(h, "circuit %d->%d: %d servers need %d fiber indices, not %d", c->src, c->dst, c->n_srv,
                          c->n_srv > 0 ? c->n_srv - 1 : 0, nf);
        p->n_circuits++;
    }
    return TC_OK;
}

tc_status tc_photonic_json_read(tc_ctx *ctx, const struct cJSON *o, const char *file, int (*line)(const void *arg),
                                const void *arg, const tc_sched *s, int steps, tc_sched_photonic **out)
{
    static const char *const names[] = {"reconfig", "circuit_alpha", "circuit_beta", "fabric", "fallbacks", "time",
                                        "fixed", "reconfigurations", "rounds", NULL};
    static const char *const fnames[] = {"tx", "rx", "wavelengths", "mzi", "grid", "fibers", NULL};
    phr h = {.ctx = ctx, .file = file, .line = line, .arg = arg};
    tc_status st;
    if (!(h.p = calloc(1, sizeof *h.p)))
        return tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
    tc_sched_photonic *p = h.p;
    if ((st = ph_members(&h, o, names, 9)) || (st = ph_num(&h, o, "reconfig", &p->reconfig)) ||
        (st = ph_num(&h, o, "circuit_alpha", &p->alpha)) || (st = ph_num(&h, o, "circuit_beta", &p->beta)))
        goto fail;
    const cJSON *fab = cJSON_GetObjectItemCaseSensitive(o, "fabric");
    strcpy(h.where, "\"fabric\"");
    if ((st = ph_members(&h, fab, fnames, 6)) || (st = ph_int(&h, fab, "tx", 0, INT32_MAX, &p->tx)) ||
        (st = ph_int(&h, fab, "rx", 0, INT32_MAX, &p->rx)) || (st = ph_int(&h, fab, "wavelengths", 1, 64, &p->wavelengths)) ||
        (st = ph_int(&h, fab, "mzi", 0, 1 << 24, &p->mzi)) || (st = ph_int(&h, fab, "fibers", 0, INT32_MAX, &p->fibers)))
        goto fail;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(fab, "grid");
    if (!cJSON_IsArray(g) || cJSON_GetArraySize(g) != 2 || (st = ph_int_v(&h, g->child, "grid", 1, 1 << 24, &p->grid_rows)) ||
        (st = ph_int_v(&h, g->child->next, "grid", 1, 1 << 24, &p->grid_cols))) {
        if (!st)
            st = ph_err(&h, "\"grid\" must be [rows, cols]");
        goto fail;
    }
    /* servers and MZIs are counted in ints below: both products stay under 2^31 */
    if ((long long)p->grid_rows * p->grid_cols * ((long long)p->mzi * p->mzi > 0 ? (long long)p->mzi * p->mzi : 1) >=
        (1LL << 31)) {
        st = ph_err(&h, "grid and mzi make more than 2^31 MZIs");
        goto fail;
    }
    h.where[0] = 0;
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "fallbacks");
    if (!cJSON_IsArray(fl)) {
        st = ph_err(&h, "\"fallbacks\" must be an array of names");
        goto fail;
    }
    int nfb = cJSON_GetArraySize(fl);
    if (nfb > 0 && !(p->fallbacks = calloc((size_t)nfb, sizeof *p->fallbacks))) {
        st = tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
        goto fail;
    }
    for (const cJSON *e = fl->child; e; e = e->next) {
        if (!cJSON_IsString(e)) {
            st = ph_err(&h, "\"fallbacks\" must be an array of names");
            goto fail;
        }
        if (!(p->fallbacks[p->n_fallbacks++] = tc_strdup(e->valuestring))) {
            st = tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
            goto fail;
        }
    }
    if ((st = ph_breakdown(&h, o, "time", &p->total)) || (st = ph_breakdown(&h, o, "fixed", &p->fixed)) ||
        (st = ph_int(&h, o, "reconfigurations", 0, INT32_MAX, &p->n_reconfigs)))
        goto fail;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "rounds");
    if (!cJSON_IsArray(rs)) {
        st = ph_err(&h, "\"rounds\" must be an array");
        goto fail;
    }
    p->n_rounds = cJSON_GetArraySize(rs);
    if (p->n_rounds > 0 && !(p->rounds = calloc((size_t)p->n_rounds, sizeof *p->rounds))) {
        st = tc_error(ctx, TC_ERR_NOMEM, file, 0, "out of memory");
        goto fail;
    }
    int i = 0;
    for (const cJSON *e = rs->child; e; e = e->next, i++)
        if ((st = ph_round(&h, e, i, s, steps)))
            goto fail;
    *out = p;
    return TC_OK;
fail:
    tc_sched_photonic_free(p);
    return st;
}
