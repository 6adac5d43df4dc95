/* Tuning data: rows of (topology, collective, size, algorithm, time), their CSV writer and reader
 * (man 5 tacosc-tune). */
#include "tune_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* version 1 (11 fields) is read too: its topologies have no network features (tc_tune_features_get) */
#define HEADER_V1 "collective,bytes,ranks,nodes,ranks_per_node,algorithm,time_us,topology,fingerprint,chunks,source"
#define HEADER HEADER_V1 ",alpha_min_us,alpha_max_us,bw_min_gbs,bw_max_gbs,injection_gbs,diameter,degree,cut_ratio"
enum { F_COLL, F_BYTES, F_RANKS, F_NODES, F_RPN, F_ALGO, F_TIME, F_TOPO, F_FP, F_CHUNKS, F_SOURCE, N_FIELDS_V1,
       F_NET = N_FIELDS_V1, N_FIELDS = F_NET + TC_TUNE_NET };
/* CSV units of the network columns (TC_TUNE_NET_* order): us, us, GB/s, GB/s, GB/s, hops, links, ratio */
static const double net_unit[TC_TUNE_NET] = {1e-6, 1e-6, 1e9, 1e9, 1e9, 1, 1, 1};

tc_status tc_tune_data_create(tc_tune_data **out)
{
    tc_tune_data *d = calloc(1, sizeof *d);
    if (!d)
        return TC_ERR_NOMEM;
    *out = d;
    return TC_OK;
}

void tc_tune_data_free(tc_tune_data *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n_topos; i++)
        free(d->topos[i].name);
    for (int i = 0; i < d->n_notes; i++)
        free(d->notes[i]);
    free(d->topos);
    free(d->topo_hash);
    free(d->notes);
    free(d->rows);
    free(d->file);
    free(d);
}

/* A topology name as a CSV field: no separators, quotes or line breaks in it (into buf, n bytes; longer
 * names are cut). */
static const char *csv_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name ? name : "?");
    for (char *p = buf; *p; p++)
        if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r')
            *p = '_';
    return buf;
}

static uint64_t name_hash(const char *name) { return tc_tune_fnv(TC_FNV_OFFSET, name, strlen(name)); }

/* Rebuild d's hash index of topologies by name (open addressing, twice the topologies at least). */
static tc_status rehash(tc_tune_data *d, int cap)
{
    int *h = malloc((size_t)cap * sizeof *h);
    if (!h)
        return TC_ERR_NOMEM;
    for (int i = 0; i < cap; i++)
        h[i] = -1;
    for (int t = 0; t < d->n_topos; t++) {
        size_t j = (size_t)(name_hash(d->topos[t].name) % (uint64_t)cap);
        while (h[j] >= 0)
            j = (j + 1) % (size_t)cap;
        h[j] = t;
    }
    free(d->topo_hash);
    d->topo_hash = h;
    d->cap_hash = cap;
    return TC_OK;
}

/* The first topology of d named `name` (already a CSV name) with fingerprint fp (any when !match_fp),
 * -1 when none: constant time (the CSV of 60000 one-size topologies took 45 s by a linear search). */
static int find_topo(const tc_tune_data *d, const char *name, uint64_t fp, int match_fp)
{
    if (!d->cap_hash)
        return -1;
    for (size_t j = (size_t)(name_hash(name) % (uint64_t)d->cap_hash); d->topo_hash[j] >= 0;
         j = (j + 1) % (size_t)d->cap_hash) {
        const tc_tune_topo_id *t = &d->topos[d->topo_hash[j]];
        if (!strcmp(t->name, name) && (!match_fp || t->fingerprint == fp))
            return d->topo_hash[j];
    }
    return -1;
}

tc_status tc_tune_data_topo(tc_tune_data *d, const tc_tune_topo_id *id, int *index)
{
    char buf[1024];
    const char *name = csv_name(id->name, buf, sizeof buf);
    int i = find_topo(d, name, id->fingerprint, 1);
    if (i >= 0) {
        *index = i;
        return TC_OK;
    }
    if (tc_grow((void **)&d->topos, &d->cap_topos, d->n_topos + 1, sizeof *d->topos))
        return TC_ERR_NOMEM;
    tc_tune_topo_id *t = &d->topos[d->n_topos];
    *t = *id;
    if (!(t->name = tc_strdup(name)))
        return TC_ERR_NOMEM;
    *index = d->n_topos++;
    if (2 * d->n_topos > d->cap_hash)
        return rehash(d, d->cap_hash ? 2 * d->cap_hash : 64);
    size_t j = (size_t)(name_hash(name) % (uint64_t)d->cap_hash);
    while (d->topo_hash[j] >= 0)
        j = (j + 1) % (size_t)d->cap_hash;
    d->topo_hash[j] = *index;
    return TC_OK;
}

tc_status tc_tune_data_add(tc_tune_data *d, const tc_tune_row *r)
{
    if (tc_grow((void **)&d->rows, &d->cap_rows, d->n_rows + 1, sizeof *d->rows))
        return TC_ERR_NOMEM;
    d->rows[d->n_rows++] = *r;
    return TC_OK;
}

tc_status tc_tune_data_note(tc_tune_data *d, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    buf[strcspn(buf, "\r\n")] = 0;
    if (tc_grow((void **)&d->notes, &d->cap_notes, d->n_notes + 1, sizeof *d->notes))
        return TC_ERR_NOMEM;
    if (!(d->notes[d->n_notes] = tc_strdup(buf)))
        return TC_ERR_NOMEM;
    d->n_notes++;
    return TC_OK;
}

tc_status tc_tune_data_write(tc_ctx *ctx, const tc_tune_data *d, FILE *f)
{
    fprintf(f, "# tacosc %s tuning data (man 5 tacosc-tune): times in microseconds, sizes in bytes\n", TC_VERSION);
    for (int i = 0; i < d->n_notes; i++)
        fprintf(f, "# %s\n", d->notes[i]);
    fprintf(f, "%s\n", HEADER);
    for (int i = 0; i < d->n_rows; i++) {
        const tc_tune_row *r = &d->rows[i];
        const tc_tune_topo_id *t = &d->topos[r->topo];
        fprintf(f, "%s,%llu,%d,%d,%d,%s,%.6f,%s,%016llx,%d,%s", tc_coll_name(r->coll),
                (unsigned long long)r->bytes, t->ranks, t->nodes, t->rpn, tc_algo_registry[r->algo].name,
                r->time * 1e6, t->name, (unsigned long long)t->fingerprint, r->chunks,
                tc_tune_source_name((tc_tune_source)r->source));
        for (int k = 0; k < TC_TUNE_NET; k++) /* empty: not known (data read from a version 1 file) */
            t->has_net ? fprintf(f, ",%.9g", t->net[k] / net_unit[k]) : fputc(',', f);
        fputc('\n', f);
    }
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write the tuning data: %s", strerror(errno ? errno : EIO));
    return TC_OK;
}

/* ---- reader ---- */

typedef struct reader {
    tc_ctx *ctx;
    const char *path;
    int line;
} reader;

static tc_status bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tc_status bad(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(r->ctx, TC_DIAG_ERROR, r->path, r->line, 0, fmt, ap);
    va_end(ap);
    return TC_ERR_PARSE;
}

/* A positive decimal integer field (at most max). */
static tc_status pos_int(reader *r, const char *what, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
    if (v < 1 || errno || *end)
        return bad(r, "%s '%s' is not a positive integer", what, s);
    if (v > max)
        return bad(r, "%s %s is too large (at most %llu)", what, s, (unsigned long long)max);
    *out = v;
    return TC_OK;
}

/* One field into buf (n bytes), the rest of the field (longer than buf) cut with "...". */
static const char *shown(const char *s, char *buf, size_t n)
{
    if (strlen(s) < n)
        return s;
    snprintf(buf, n, "%.*s...", (int)n - 4, s);
    return buf;
}

typedef struct seen_row {
    int coll, algo, topo, chunks;
    uint64_t bytes;
    int line;
} seen_row;

static int cmp_seen(const void *pa, const void *pb)
{
    const seen_row *a = pa, *b = pb;
    if (a->coll != b->coll)
        return a->coll - b->coll;
    if (a->topo != b->topo)
        return a->topo - b->topo;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    if (a->algo != b->algo)
        return a->algo - b->algo;
    if (a->chunks != b->chunks)
        return a->chunks - b->chunks;
    return a->line - b->line;
}

static tc_status parse_row(reader *rd, tc_tune_data *d, char **f, int nf, int *topo_line, int coll_line[][2])
{
    char sb[80];
    tc_tune_row row = {0};
    row.line = rd->line;
    tc_coll coll;
    if (tc_coll_parse(f[F_COLL], &coll))
        return bad(rd, "unknown collective '%s'", shown(f[F_COLL], sb, sizeof sb));
    row.coll = coll;
    uint64_t v;
    tc_status st;
    if ((st = pos_int(rd, "bytes", shown(f[F_BYTES], sb, sizeof sb), UINT64_MAX / 2, &row.bytes)))
        return st;
    tc_tune_topo_id id = {0};
    const char *names[] = {"ranks", "nodes", "ranks_per_node", "chunks"};
    int *dst[] = {&id.ranks, &id.nodes, &id.rpn, &row.chunks};
    const int idx[] = {F_RANKS, F_NODES, F_RPN, F_CHUNKS};
    for (int k = 0; k < 4; k++) {
        if ((st = pos_int(rd, names[k], shown(f[idx[k]], sb, sizeof sb), 1 << 24, &v)))
            return st;
        *dst[k] = (int)v;
    }
    if ((int64_t)id.nodes * id.rpn < id.ranks || id.nodes > id.ranks || id.rpn > id.ranks)
        return bad(rd, "%d ranks do not make %d nodes of at most %d ranks", id.ranks, id.nodes, id.rpn);
    int a = tc_tune_algo_index(f[F_ALGO]);
    if (a < 0)
        return bad(rd, "unknown algorithm '%s' (see tacosc --list-algos)", shown(f[F_ALGO], sb, sizeof sb));
    if (!(tc_algo_registry[a].colls & TC_COLL_BIT(coll)))
        return bad(rd, "algorithm '%s' does not generate %s", f[F_ALGO], tc_coll_name(coll));
    row.algo = a;
    char *end;
    errno = 0;
    double t = strtod(f[F_TIME], &end);
    if (!*f[F_TIME] || *end || errno == ERANGE || isnan(t) || isinf(t))
        return bad(rd, "time_us '%s' is not a number", shown(f[F_TIME], sb, sizeof sb));
    if (t < 0)
        return bad(rd, "time_us '%s' is negative", shown(f[F_TIME], sb, sizeof sb));
    if (t == 0)
        return bad(rd, "time_us is 0: a collective takes some time");
    if (t > TC_TIME_MAX * 1e6)
        return bad(rd, "time_us '%s' is above %.0f s, the longest time tacosc handles", shown(f[F_TIME], sb, sizeof sb),
                   TC_TIME_MAX);
    row.time = t * 1e-6;
    if (!*f[F_TOPO])
        return bad(rd, "empty topology name");
    char nb[1024];
    id.name = (char *)csv_name(f[F_TOPO], nb, sizeof nb); /* as tc_tune_data_topo stores it */
    size_t fl = strlen(f[F_FP]);
    if (fl != 16 || strspn(f[F_FP], "0123456789abcdefABCDEF") != 16)
        return bad(rd, "fingerprint '%s' is not 16 hexadecimal digits", shown(f[F_FP], sb, sizeof sb));
    id.fingerprint = strtoull(f[F_FP], NULL, 16);
    if (!strcmp(f[F_SOURCE], "sim"))
        row.source = TC_TUNE_SIM;
    else if (!strcmp(f[F_SOURCE], "measure"))
        row.source = TC_TUNE_MEASURE;
    else
        return bad(rd, "source '%s' is not sim or measure", shown(f[F_SOURCE], sb, sizeof sb));
    if (nf > N_FIELDS_V1) {
        static const char *const net_name[TC_TUNE_NET] = {"alpha_min_us", "alpha_max_us", "bw_min_gbs", "bw_max_gbs",
                                                          "injection_gbs", "diameter", "degree", "cut_ratio"};
        id.has_net = 1;
        for (int k = 0; k < TC_TUNE_NET; k++) {
            const char *v = f[F_NET + k];
            if (!*v && k == 0) { /* all empty: not known */
                id.has_net = 0;
                break;
            }
            errno = 0;
            double x = strtod(v, &end);
            if (!*v || *end || errno == ERANGE || !isfinite(x) || x < 0 ||
                (x == 0 && k != TC_TUNE_NET_ALPHA_MIN && k != TC_TUNE_NET_ALPHA_MAX && k != TC_TUNE_NET_CUT))
                return bad(rd, "%s '%s' is not a %s number", net_name[k], shown(v, sb, sizeof sb),
                           k == TC_TUNE_NET_ALPHA_MIN || k == TC_TUNE_NET_ALPHA_MAX || k == TC_TUNE_NET_CUT
                               ? "non-negative"
                               : "positive");
            id.net[k] = x * net_unit[k];
        }
        if (!id.has_net)
            for (int k = 1; k < TC_TUNE_NET; k++)
                if (*f[F_NET + k])
                    return bad(rd, "%s is given but alpha_min_us is empty (all of the network columns or none)",
                               net_name[k]);
    }
    /* one topology name: one fingerprint and shape (the first row of that name: others were refused) */
    {
        int i = find_topo(d, id.name, 0, 0);
        const tc_tune_topo_id *o = i >= 0 ? &d->topos[i] : NULL;
        if (o && (o->fingerprint != id.fingerprint || o->ranks != id.ranks || o->nodes != id.nodes ||
                  o->rpn != id.rpn || o->has_net != id.has_net ||
                  (id.has_net && memcmp(o->net, id.net, sizeof id.net))))
            return bad(rd,
                       "topology '%s' is %d ranks, %d nodes of %d, fingerprint %016llx on line %d, but %d ranks, %d "
                       "nodes of %d, fingerprint %016llx here (data of two different topologies under one name)",
                       o->name, o->ranks, o->nodes, o->rpn, (unsigned long long)o->fingerprint, topo_line[i],
                       id.ranks, id.nodes, id.rpn, (unsigned long long)id.fingerprint);
    }
    int ti;
    int before = d->n_topos;
    if (tc_tune_data_topo(d, &id, &ti))
        return TC_ERR_NOMEM;
    if (d->n_topos > before)
        topo_line[ti] = rd->line;
    row.topo = ti;
    /* one collective: one source and one chunk count */
    int *cl = coll_line[coll];
    if (cl[0]) {
        const tc_tune_row *first = &d->rows[cl[1]];
        if (first->source != row.source)
            return bad(rd, "%s rows mix sources: %s on line %d, %s here (train on one)", tc_coll_name(coll),
                       tc_tune_source_name((tc_tune_source)first->source), cl[0],
                       tc_tune_source_name((tc_tune_source)row.source));
        if (first->chunks != row.chunks)
            return bad(rd, "%s rows mix chunk counts: %d per rank on line %d, %d here (train on one)",
                       tc_coll_name(coll), first->chunks, cl[0], row.chunks);
    } else {
        cl[0] = rd->line;
        cl[1] = d->n_rows;
    }
    return tc_tune_data_add(d, &row);
}

tc_status tc_tune_data_read(tc_ctx *ctx, const char *path, tc_tune_data **out)
{
    char *buf = NULL;
    size_t len = 0;
    tc_status st = tc_read_file_max(ctx, path, TC_TEXT_MAX_TUNE, "tuning table", &buf, &len);
    if (st)
        return st;
    st = tc_tune_data_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}

tc_status tc_tune_data_read_mem(tc_ctx *ctx, const char *path, const char *text, size_t len, tc_tune_data **out)
{
    tc_tune_data *d = NULL;
    int *topo_line = NULL;
    seen_row *seen = NULL;
    char *buf = malloc(len + 1); /* a copy the fields are cut out of */
    tc_status st = buf ? TC_OK : TC_ERR_NOMEM;
    if (st)
        return st;
    memcpy(buf, text, len);
    buf[len] = 0;
    if ((st = tc_tune_data_create(&d)))
        goto fail;
    d->file = tc_strdup(path);
    d->checksum = tc_tune_fnv(TC_FNV_OFFSET, buf, len);
    reader rd = {ctx, path, 0};
    int coll_line[TC_COLL_COUNT][2] = {{0}};
    int header = 0, cap_tl = 0;
    char *p = buf, *end = buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line = p, *le = nl ? nl : end;
        p = nl ? nl + 1 : end;
        rd.line++;
        if (le > line && le[-1] == '\r')
            le--;
        *le = 0;
        if (memchr(line, 0, (size_t)(le - line))) {
            st = bad(&rd, "a NUL byte: not a text file");
            goto fail;
        }
        if (!*line || *line == '#')
            continue;
        if (!header) {
            if (strcmp(line, HEADER) && strcmp(line, HEADER_V1)) {
                st = bad(&rd, "the header must be '%s' (man 5 tacosc-tune)", HEADER);
                goto fail;
            }
            header = strcmp(line, HEADER) ? N_FIELDS_V1 : N_FIELDS;
            continue;
        }
        char *f[N_FIELDS + 1];
        int nf = 0;
        for (char *q = line;;) {
            char *c = strchr(q, ',');
            if (nf < N_FIELDS + 1)
                f[nf] = q;
            nf++;
            if (!c)
                break;
            *c = 0;
            q = c + 1;
        }
        if (nf != header) {
            st = bad(&rd, "%d field%s, expected %d (%s)", nf, nf == 1 ? "" : "s", header,
                     header == N_FIELDS ? HEADER : HEADER_V1);
            goto fail;
        }
        if (d->n_topos + 1 > cap_tl) {
            cap_tl = cap_tl ? cap_tl * 2 : 16;
            int *t = realloc(topo_line, (size_t)cap_tl * sizeof *t);
            if (!t) {
                st = TC_ERR_NOMEM;
                goto fail;
            }
            topo_line = t;
        }
        if ((st = parse_row(&rd, d, f, nf, topo_line, coll_line)))
            goto fail;
    }
    if (!header || d->n_rows == 0) {
        st = tc_error(ctx, TC_ERR_PARSE, path, 0, "no data rows%s (man 5 tacosc-tune)", header ? "" : " and no header");
        goto fail;
    }
    /* duplicates: one time per (collective, topology, size, algorithm, chunks) */
    if (!(seen = malloc((size_t)d->n_rows * sizeof *seen))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < d->n_rows; i++) {
        const tc_tune_row *r = &d->rows[i];
        seen[i] = (seen_row){(int)r->coll, r->algo, r->topo, r->chunks, r->bytes, r->line};
    }
    qsort(seen, (size_t)d->n_rows, sizeof *seen, cmp_seen);
    int dup = -1;
    for (int i = 1; i < d->n_rows; i++) {
        const seen_row *a = &seen[i - 1], *b = &seen[i];
        if (a->coll == b->coll && a->topo == b->topo && a->bytes == b->bytes && a->algo == b->algo &&
            a->chunks == b->chunks && (dup < 0 || b->line < seen[dup].line))
            dup = i;
    }
    if (dup >= 0) {
        const seen_row *a = &seen[dup - 1], *b = &seen[dup];
        rd.line = b->line;
        st = bad(&rd, "duplicate row: line %d already has %s %llu B %s on %s", a->line, tc_coll_name((tc_coll)a->coll),
                 (unsigned long long)a->bytes, tc_algo_registry[a->algo].name, d->topos[a->topo].name);
        goto fail;
    }
    free(seen);
    free(topo_line);
    free(buf);
    *out = d;
    return TC_OK;
fail:
    free(seen);
    free(topo_line);
    free(buf);
    tc_tune_data_free(d);
    return st;
}
