/*
 * The JSON schedule format (man 5 tacosc-schedule): the reader of the schedule IR (the writer, and the
 * layout it gives a file, are in json_write.c).
 *
 * Reader: cJSON.  To keep memory proportional to the IR (a cJSON node is ~64 bytes; a tree of millions of
 * transfers would take gigabytes), a lexical scan finds the top-level "transfers" array; the rest of the
 * document is parsed by cJSON with that array replaced by "[]", and the transfers are read one at a time:
 * a transfer in the canonical form with every value in range is taken by a strict fast path (JSON number
 * grammar, strtod for exact doubles); anything else is parsed by cJSON on its own, which also words the
 * error.  cJSON's parse-error offsets are mapped back to file:line:col.  When the scan does not find a
 * well-formed transfers array the whole document goes to cJSON, which reports the syntax error or yields
 * a tree whose fields are validated (and the missing or mistyped transfers reported).  The "photonic" and
 * "sparse" sections are read by their passes' readers (tc_photonic_json_read, tc_sparse_json_read) from
 * their cJSON values; this file gives them the line of their key for diagnostics.
 * Cost: a 2.1-million-transfer ring all-reduce (163 MB) reads in 2.0 s wall-clock on a loaded 2-core
 * machine; parsing doubles dominates, so repeated times are memoized.
 */

#include "tacos/emit.h"
#include "tacos/photonic.h"
#include "tacos/sparse.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------------------------------ */
/* Reader: locations                                                                                 */

typedef struct rd {
    tc_ctx *ctx;
    const char *name;
    const char *buf;
    size_t len;
} rd;

/* 1-based line and column of byte offset off. */
static int line_col(const rd *r, size_t off, int *col)
{
    int line = 1;
    size_t bol = 0;
    if (off > r->len)
        off = r->len;
    for (size_t i = 0; i < off; i++)
        if (r->buf[i] == '\n') {
            line++;
            bol = i + 1;
        }
    if (col)
        *col = (int)(off - bol) + 1;
    return line;
}

static tc_status err_at(const rd *r, tc_status st, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tc_status err_at(const rd *r, tc_status st, size_t off, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = off == (size_t)-1 ? 0 : line_col(r, off, NULL);
    return tc_error(r->ctx, st, r->name, line, "%s", msg);
}

static size_t skip_ws(const char *b, size_t len, size_t p)
{
    while (p < len && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r'))
        p++;
    return p;
}

/* p at '"': offset after the closing quote, or len when unterminated. */
static size_t skip_string(const char *b, size_t len, size_t p)
{
    for (p++; p < len; p++) {
        if (b[p] == '\\')
            p++;
        else if (b[p] == '"')
            return p + 1;
    }
    return len;
}

/* p at '[' or '{': offset after the matching bracket, or (size_t)-1 when unbalanced. */
static size_t match_close(const char *b, size_t len, size_t p)
{
    /* bytes that matter; the rest (digits, blanks, commas: nearly all of a schedule) are skipped fast */
    static const unsigned char special[256] = {['"'] = 1, ['['] = 1, ['{'] = 1, [']'] = 1, ['}'] = 1};
    int depth = 0;
    while (p < len) {
        while (p < len && !special[(unsigned char)b[p]])
            p++;
        if (p >= len)
            break;
        char c = b[p];
        if (c == '"') {
            p = skip_string(b, len, p);
            continue;
        }
        if (c == '[' || c == '{')
            depth++;
        else if (c == ']' || c == '}') {
            if (--depth == 0)
                return p + 1;
            if (depth < 0)
                return (size_t)-1;
        }
        p++;
    }
    return (size_t)-1;
}

/* Offset of the first top-level key `key` (its opening quote), or (size_t)-1. */
static size_t find_key(const rd *r, const char *key)
{
    const char *b = r->buf;
    size_t len = r->len, p = skip_ws(b, len, 0), klen = strlen(key);
    if (p >= len || b[p] != '{')
        return (size_t)-1;
    int depth = 0;
    while (p < len) {
        char c = b[p];
        if (c == '"') {
            size_t e = skip_string(b, len, p);
            if (depth == 1 && e - p == klen + 2 && !memcmp(b + p + 1, key, klen)) {
                size_t q = skip_ws(b, len, e);
                if (q < len && b[q] == ':')
                    return p;
            }
            p = e;
            continue;
        }
        if (c == '[' || c == '{')
            depth++;
        else if (c == ']' || c == '}')
            depth--;
        p++;
    }
    return (size_t)-1;
}

/* The line of the top-level key `key` (0 when there is none): where a section's diagnostics point
 * (tc_sparse_json_read, tc_photonic_json_read ask for it only when they report an error). */
typedef struct keyline {
    const rd *r;
    const char *key;
} keyline;

static int key_line(const void *arg)
{
    const keyline *k = arg;
    size_t off = find_key(k->r, k->key);
    return off == (size_t)-1 ? 0 : line_col(k->r, off, NULL);
}

int tc_json_key_line(const char *buf, size_t len, const char *key)
{
    const rd r = {NULL, NULL, buf, len};
    const keyline k = {&r, key};
    return key_line(&k);
}

/* Report a cJSON syntax error at byte offset off. */
static tc_status syntax_error(const rd *r, size_t off)
{
    /* cJSON may point just past the offending token: step back over white space to it */
    while (off > 0 && off < r->len && strchr(" \t\r\n", r->buf[off]) && r->buf[off])
        off--;
    int col, line = line_col(r, off, &col);
    /* unexpected end: a string left open, or brackets left open and the error in the last token */
    int instr = 0, depth = 0;
    for (size_t p = 0; p < r->len; p++) {
        char c = r->buf[p];
        if (instr) {
            if (c == '\\')
                p++;
            else if (c == '"')
                instr = 0;
        } else if (c == '"')
            instr = 1;
        else
            depth += (c == '[' || c == '{') - (c == ']' || c == '}');
    }
    int last_token = 1;
    for (size_t p = off + 1; p < r->len && last_token; p++)
        last_token = !strchr("[]{},:", r->buf[p]);
    if (off >= r->len || instr || (depth > 0 && last_token)) {
        line = line_col(r, r->len, &col);
        tc_diag(r->ctx, TC_DIAG_ERROR, r->name, line, col, "malformed JSON: unexpected end of file");
        return TC_ERR_PARSE;
    }
    char near[24];
    size_t n = 0;
    for (size_t p = off; p < r->len && n < 16 && r->buf[p] != '\n' && r->buf[p] != '\r'; p++)
        near[n++] = (r->buf[p] >= 0x20 && r->buf[p] < 0x7f) ? r->buf[p] : '?';
    near[n] = 0;
    tc_diag(r->ctx, TC_DIAG_ERROR, r->name, line, col, "malformed JSON at '%s'", near);
    return TC_ERR_PARSE;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader: fields                                                                                    */

static const char *const header_fields[] = {
    "format", "version", "tool", "seed", "topology", "algorithm", "collective", "ranks", "chunks_per_rank",
    "chunks", "root", "size_bytes", "chunk_bytes", "predicted_time", "steps", "transfers",
};
#define N_HEADER_FIELDS ((int)(sizeof header_fields / sizeof header_fields[0]))
/* Fields a plan may lack: written by later tacosc versions of format 1, or only for some plans. */
static const char *const optional_fields[] = {"unwind", "photonic", "sparse", "switch_model", "link_model"};
#define N_OPTIONAL_FIELDS ((int)(sizeof optional_fields / sizeof optional_fields[0]))

static tc_status field_error(const rd *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tc_status field_error(const rd *r, const char *field, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_at(r, TC_ERR_INVALID, find_key(r, field), "field \"%s\" %s", field, msg);
}

static tc_status get_int(const rd *r, const cJSON *o, const char *field, int lo, int hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsNumber(v))
        return field_error(r, field, "must be an integer, not %s", tc_json_type_name(v));
    double d = v->valuedouble;
    if (d != floor(d))
        return field_error(r, field, "must be an integer, not %.17g", d);
    if (d < lo || d > hi)
        return field_error(r, field, "is %.17g, out of range (%d to %d)", d, lo, hi);
    *out = (int)d;
    return TC_OK;
}

static tc_status get_u64(const rd *r, const cJSON *o, const char *field, uint64_t *out)
{
    char why[160];
    const char *w = tc_json_get_u64(cJSON_GetObjectItemCaseSensitive(o, field), out, why, sizeof why);
    return w ? field_error(r, field, "%s", w) : TC_OK;
}

static tc_status get_name(const rd *r, const cJSON *o, const char *field, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (cJSON_IsNull(v)) {
        *out = NULL;
        return TC_OK;
    }
    if (!cJSON_IsString(v))
        return field_error(r, field, "must be a string or null, not %s", tc_json_type_name(v));
    *out = v->valuestring;
    return TC_OK;
}

/* Transfer field helpers: `what` names the field in messages. */
static tc_status xfer_int(const rd *r, size_t off, int i, const cJSON *v, const char *what, int *out)
{
    if (!cJSON_IsNumber(v))
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: %s must be an integer, not %s", i, what,
                      tc_json_type_name(v));
    double d = v->valuedouble;
    if (d != floor(d) || d < -2147483648.0 || d > 2147483647.0)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: %s must be an integer, not %.17g", i, what, d);
    *out = (int)d;
    return TC_OK;
}

typedef struct xbuf {
    int *route;
    int cap;
    /* the text and value of the last t_start and t_end read: consecutive transfers often share them */
    const char *ttext[2];
    size_t tlen[2];
    double tval[2];
} xbuf;

/* Validate one transfer array and append it to s. */
static tc_status read_xfer(const rd *r, size_t off, int i, const cJSON *a, tc_sched *s, int steps, xbuf *xb)
{
    int src, dst, chunk, link, step, op;
    tc_status st;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 9)
        return err_at(r, TC_ERR_INVALID, off,
                      "transfer %d: expected [src, dst, chunk, op, link, step, t_start, t_end, route]", i);
    const cJSON *v[9];
    int n = 0;
    for (const cJSON *e = a->child; e && n < 9; e = e->next)
        v[n++] = e;
    if ((st = xfer_int(r, off, i, v[0], "src", &src)) || (st = xfer_int(r, off, i, v[1], "dst", &dst)) ||
        (st = xfer_int(r, off, i, v[2], "chunk", &chunk)) || (st = xfer_int(r, off, i, v[4], "link", &link)) ||
        (st = xfer_int(r, off, i, v[5], "step", &step)))
        return st;
    if (src < 0 || src >= s->n_ranks)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: src %d out of range (%d ranks)", i, src, s->n_ranks);
    if (dst < 0 || dst >= s->n_ranks)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: dst %d out of range (%d ranks)", i, dst, s->n_ranks);
    if (chunk < 0 || chunk >= s->n_chunks)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: chunk %d out of range (%d chunks)", i, chunk,
                      s->n_chunks);
    if (cJSON_IsString(v[3]) && !strcmp(v[3]->valuestring, "copy"))
        op = TC_OP_COPY;
    else if (cJSON_IsString(v[3]) && !strcmp(v[3]->valuestring, "reduce"))
        op = TC_OP_REDUCE;
    else
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: op must be \"copy\" or \"reduce\"", i);
    if (link < -1)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: link %d out of range (-1 or a link id)", i, link);
    if (step < 0 || step >= steps)
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: step %d out of range (%d steps)", i, step, steps);
    double t[2];
    for (int k = 0; k < 2; k++) {
        const char *what = k ? "t_end" : "t_start";
        if (!cJSON_IsNumber(v[6 + k]))
            return err_at(r, TC_ERR_INVALID, off, "transfer %d: %s must be a number, not %s", i, what,
                          tc_json_type_name(v[6 + k]));
        t[k] = v[6 + k]->valuedouble;
        if (!isfinite(t[k]))
            return err_at(r, TC_ERR_INVALID, off, "transfer %d: %s is not a finite number", i, what);
        if (!(t[k] >= 0 && t[k] <= TC_TIME_MAX))
            return err_at(r, TC_ERR_INVALID, off, "transfer %d: %s is %.17g, out of range (0 to %.0f seconds)", i,
                          what, t[k], TC_TIME_MAX);
    }
    if (!cJSON_IsArray(v[8]))
        return err_at(r, TC_ERR_INVALID, off, "transfer %d: route must be an array of link ids, not %s", i,
                      tc_json_type_name(v[8]));
    int nr = 0;
    for (const cJSON *e = v[8]->child; e; e = e->next) {
        int l;
        if ((st = xfer_int(r, off, i, e, "route link", &l)))
            return st;
        if (l < 0)
            return err_at(r, TC_ERR_INVALID, off, "transfer %d: route link %d out of range", i, l);
        if (tc_grow((void **)&xb->route, &xb->cap, nr + 1, sizeof *xb->route))
            return tc_error(r->ctx, TC_ERR_NOMEM, r->name, 0, "out of memory");
        xb->route[nr++] = l;
    }
    st = tc_sched_add(s, src, dst, chunk, (tc_op)op, link, step, t[0], t[1], xb->route, nr);
    if (st)
        return tc_error(r->ctx, st, r->name, 0, "cannot store transfer %d: %s", i, tc_status_str(st));
    return TC_OK;
}

/* Validate the header object and create the schedule (without transfers). */
static tc_status read_header(const rd *r, const cJSON *root, tc_sched **out, int *steps_out)
{
    tc_status st;
    tc_sched *s = NULL;
    if (!cJSON_IsObject(root))
        return err_at(r, TC_ERR_INVALID, skip_ws(r->buf, r->len, 0),
                      "not a tacosc schedule: the top level is %s, not an object", tc_json_type_name(root));
    for (const cJSON *e = root->child; e; e = e->next) {
        int known = 0;
        for (int f = 0; f < N_HEADER_FIELDS; f++)
            known |= !strcmp(e->string, header_fields[f]);
        for (int f = 0; f < N_OPTIONAL_FIELDS; f++)
            known |= !strcmp(e->string, optional_fields[f]);
        if (!known)
            return field_error(r, e->string, "is not part of format version %d", TC_JSON_VERSION);
        for (const cJSON *d = e->next; d; d = d->next)
            if (!strcmp(d->string, e->string))
                return field_error(r, e->string, "appears twice");
    }
    for (int f = 0; f < N_HEADER_FIELDS; f++)
        if (!cJSON_GetObjectItemCaseSensitive(root, header_fields[f]))
            return tc_error(r->ctx, TC_ERR_INVALID, r->name, 0, "missing field \"%s\"", header_fields[f]);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt))
        return field_error(r, "format", "must be a string, not %s", tc_json_type_name(fmt));
    if (strcmp(fmt->valuestring, TC_JSON_FORMAT))
        return field_error(r, "format", "is \"%s\", not \"%s\": not a tacosc schedule", fmt->valuestring,
                           TC_JSON_FORMAT);
    int version, R, K, C, root_rank, steps;
    if ((st = get_int(r, root, "version", 1, 1000000, &version)))
        return st;
    if (version > TC_JSON_VERSION)
        return field_error(r, "version", "is %d, newer than this tacosc reads (version %d)", version,
                           TC_JSON_VERSION);
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    if (!cJSON_IsString(tool))
        return field_error(r, "tool", "must be a string, not %s", tc_json_type_name(tool));
    const char *topo_name, *algo;
    uint64_t seed, size_bytes, chunk_bytes;
    if ((st = get_u64(r, root, "seed", &seed)) || (st = get_name(r, root, "topology", &topo_name)) ||
        (st = get_name(r, root, "algorithm", &algo)))
        return st;
    const cJSON *coll_v = cJSON_GetObjectItemCaseSensitive(root, "collective");
    tc_coll coll;
    if (!cJSON_IsString(coll_v))
        return field_error(r, "collective", "must be a string, not %s", tc_json_type_name(coll_v));
    if (tc_coll_parse(coll_v->valuestring, &coll))
        return field_error(r, "collective", "names an unknown collective \"%s\"", coll_v->valuestring);
    if ((st = get_int(r, root, "ranks", 1, INT32_MAX, &R)) ||
        (st = get_int(r, root, "chunks_per_rank", 1, INT32_MAX, &K)) ||
        (st = get_int(r, root, "chunks", 1, INT32_MAX, &C)) ||
        (st = get_int(r, root, "root", 0, R - 1, &root_rank)) || (st = get_u64(r, root, "size_bytes", &size_bytes)) ||
        (st = get_u64(r, root, "chunk_bytes", &chunk_bytes)))
        return st;
    if (root_rank != 0 && !tc_coll_rooted(coll)) /* the writer's 0: another value means nothing, or a damaged file */
        return field_error(r, "root", "is %d, but %s has no root (0 is written)", root_rank, tc_coll_name(coll));
    int unwind = 0; /* optional: plans written before it was recorded have none */
    if (cJSON_GetObjectItemCaseSensitive(root, "unwind") && (st = get_int(r, root, "unwind", 0, INT32_MAX, &unwind)))
        return st;
    int swmodel = 0; /* optional: written only for plans made with --switch-model */
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(root, "switch_model");
    if (sm) {
        tc_switch_model m;
        if (!cJSON_IsString(sm) || tc_switch_model_parse(sm->valuestring, &m))
            return field_error(r, "switch_model", "must be \"unwind\", \"node\" or \"multicast\"");
        swmodel = 1 + (int)m;
    }
    int lmodel = 0; /* optional: written only for plans made with --link-model te-ccl */
    const cJSON *lm = cJSON_GetObjectItemCaseSensitive(root, "link_model");
    if (lm) {
        tc_link_model m;
        if (!cJSON_IsString(lm) || tc_link_model_parse(lm->valuestring, &m))
            return field_error(r, "link_model", "must be \"tacos\" or \"te-ccl\"");
        lmodel = (int)m;
    }
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(root, "predicted_time");
    if (!cJSON_IsNumber(tv))
        return field_error(r, "predicted_time", "must be a number, not %s", tc_json_type_name(tv));
    if (!isfinite(tv->valuedouble) || tv->valuedouble < 0 || tv->valuedouble > TC_TIME_MAX)
        return field_error(r, "predicted_time", "must be a number from 0 to %.0f (seconds)", TC_TIME_MAX);
    if ((st = get_int(r, root, "steps", 0, INT32_MAX, &steps)))
        return st;
    const cJSON *xs = cJSON_GetObjectItemCaseSensitive(root, "transfers");
    if (!cJSON_IsArray(xs))
        return field_error(r, "transfers", "must be an array, not %s", tc_json_type_name(xs));
    st = tc_sched_create(coll, R, K, size_bytes, &s);
    if (st == TC_ERR_LIMIT)
        return field_error(r, "chunks", "is too large: %s on %d ranks with %d chunks per rank", tc_coll_name(coll),
                           R, K);
    if (st)
        return tc_error(r->ctx, st, r->name, 0, "cannot create schedule: %s", tc_status_str(st));
    if (coll == TC_COLL_ALLREDUCE)
        s->n_chunks = C;
    else if (C != s->n_chunks) {
        st = field_error(r, "chunks", "is %d, but %s on %d ranks with %d chunks per rank has %d", C,
                         tc_coll_name(coll), R, K, s->n_chunks);
        tc_sched_free(s);
        return st;
    }
    if ((st = tc_sched_set_names(s, algo, topo_name))) {
        tc_sched_free(s);
        return tc_error(r->ctx, st, r->name, 0, "out of memory");
    }
    s->root = root_rank;
    s->unwind = unwind;
    s->switch_model = swmodel;
    s->link_model = lmodel;
    s->seed = seed;
    s->chunk_bytes = chunk_bytes;
    s->time = tv->valuedouble;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "photonic");
    const keyline phk = {r, "photonic"};
    if (ph && (st = tc_photonic_json_read(r->ctx, ph, r->name, key_line, &phk, s, steps, &s->photonic))) {
        tc_sched_free(s);
        return st;
    }
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(root, "sparse");
    const keyline spk = {r, "sparse"};
    if (sp && (st = tc_sparse_json_read(r->ctx, sp, r->name, key_line, &spk, &s->sparse))) {
        tc_sched_free(s);
        return st;
    }
    *steps_out = steps;
    *out = s;
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader: fast path for the canonical transfer text                                                 */

/* JSON number grammar at b[p, e): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; returns the end offset, or
 * 0 when there is no number.  *integral says whether it had neither fraction nor exponent. */
static size_t json_number(const char *b, size_t p, size_t e, int *integral)
{
    size_t q = p;
    *integral = 1;
    if (q < e && b[q] == '-')
        q++;
    if (q >= e || b[q] < '0' || b[q] > '9')
        return 0;
    if (b[q] == '0')
        q++;
    else
        while (q < e && b[q] >= '0' && b[q] <= '9')
            q++;
    if (q < e && b[q] == '.') {
        *integral = 0;
        if (++q >= e || b[q] < '0' || b[q] > '9')
            return 0;
        while (q < e && b[q] >= '0' && b[q] <= '9')
            q++;
    }
    if (q < e && (b[q] == 'e' || b[q] == 'E')) {
        *integral = 0;
        q++;
        if (q < e && (b[q] == '+' || b[q] == '-'))
            q++;
        if (q >= e || b[q] < '0' || b[q] > '9')
            return 0;
        while (q < e && b[q] >= '0' && b[q] <= '9')
            q++;
    }
    return q;
}

typedef struct cursor {
    const char *b;
    size_t p, e;
} cursor;

static int cur_ch(cursor *c, char ch)
{
    c->p = skip_ws(c->b, c->e, c->p);
    if (c->p < c->e && c->b[c->p] == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int cur_int(cursor *c, int *out)
{
    int integral;
    c->p = skip_ws(c->b, c->e, c->p);
    size_t q = json_number(c->b, c->p, c->e, &integral);
    if (!q || !integral || q - c->p > 11)
        return 0;
    long long v = 0;
    for (size_t k = c->p + (c->b[c->p] == '-'); k < q; k++)
        v = v * 10 + (c->b[k] - '0');
    if (c->b[c->p] == '-')
        v = -v;
    if (v < INT32_MIN || v > INT32_MAX)
        return 0;
    *out = (int)v;
    c->p = q;
    return 1;
}

static int cur_double(cursor *c, double *out, xbuf *xb, int slot)
{
    int integral;
    c->p = skip_ws(c->b, c->e, c->p);
    size_t q = json_number(c->b, c->p, c->e, &integral);
    if (!q)
        return 0;
    if (xb->ttext[slot] && xb->tlen[slot] == q - c->p && !memcmp(xb->ttext[slot], c->b + c->p, q - c->p)) {
        *out = xb->tval[slot];
        c->p = q;
        return 1;
    }
    char *end;
    double d = strtod(c->b + c->p, &end);
    if (end != c->b + q || !isfinite(d))
        return 0;
    *out = d;
    xb->ttext[slot] = c->b + c->p;
    xb->tlen[slot] = q - c->p;
    xb->tval[slot] = d;
    c->p = q;
    return 1;
}

/* Parse and store the element at p (the array's content ends at e) when it is the canonical, in-range form
 * [src, dst, chunk, "copy"|"reduce", link, step, t_start, t_end, [link, ...]] followed by ',' or the end;
 * 1: stored, *next at that ',' or e; 0: not handled (the caller parses it with cJSON, which also words
 * any error); -1: out of memory. */
static int fast_xfer(const rd *r, size_t p, size_t e, tc_sched *s, int steps, xbuf *xb, size_t *next)
{
    cursor c = {r->buf, p, e};
    int v[5], op, nr = 0;
    double t[2];
    if (!cur_ch(&c, '[') || !cur_int(&c, &v[0]) || !cur_ch(&c, ',') || !cur_int(&c, &v[1]) || !cur_ch(&c, ',') ||
        !cur_int(&c, &v[2]) || !cur_ch(&c, ','))
        return 0;
    c.p = skip_ws(c.b, c.e, c.p);
    if (c.e - c.p >= 6 && !memcmp(c.b + c.p, "\"copy\"", 6)) {
        op = TC_OP_COPY;
        c.p += 6;
    } else if (c.e - c.p >= 8 && !memcmp(c.b + c.p, "\"reduce\"", 8)) {
        op = TC_OP_REDUCE;
        c.p += 8;
    } else
        return 0;
    if (!cur_ch(&c, ',') || !cur_int(&c, &v[3]) || !cur_ch(&c, ',') || !cur_int(&c, &v[4]) || !cur_ch(&c, ',') ||
        !cur_double(&c, &t[0], xb, 0) || !cur_ch(&c, ',') || !cur_double(&c, &t[1], xb, 1) || !cur_ch(&c, ',') || !cur_ch(&c, '['))
        return 0;
    if (!cur_ch(&c, ']')) {
        do {
            if (tc_grow((void **)&xb->route, &xb->cap, nr + 1, sizeof *xb->route))
                return -1;
            if (!cur_int(&c, &xb->route[nr]) || xb->route[nr] < 0)
                return 0;
            nr++;
        } while (cur_ch(&c, ','));
        if (!cur_ch(&c, ']'))
            return 0;
    }
    if (!cur_ch(&c, ']'))
        return 0;
    c.p = skip_ws(c.b, c.e, c.p);
    if (c.p != e && c.b[c.p] != ',')
        return 0;
    *next = c.p;
    if (v[0] < 0 || v[0] >= s->n_ranks || v[1] < 0 || v[1] >= s->n_ranks || v[2] < 0 || v[2] >= s->n_chunks ||
        v[3] < -1 || v[4] < 0 || v[4] >= steps || !(t[0] >= 0 && t[0] <= TC_TIME_MAX) ||
        !(t[1] >= 0 && t[1] <= TC_TIME_MAX))
        return 0;
    return tc_sched_add(s, v[0], v[1], v[2], (tc_op)op, v[3], v[4], t[0], t[1], xb->route, nr) ? -1 : 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader: driver                                                                                    */

/* Parse buf[off, end) as one JSON value with cJSON; syntax errors are reported at their file offset. */
static tc_status parse_span(const rd *r, size_t off, size_t end, cJSON **out)
{
    const char *stop = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(r->buf + off, end - off, &stop, 0);
    if (!v)
        return syntax_error(r, stop ? (size_t)(stop - r->buf) : off);
    size_t p = skip_ws(r->buf, end, (size_t)(stop - r->buf));
    if (p < end) {
        cJSON_Delete(v);
        return syntax_error(r, p);
    }
    *out = v;
    return TC_OK;
}

/* Read the elements of the transfers array buf[a, b) (a at '[', b after ']'). */
static tc_status read_transfers(const rd *r, size_t a, size_t b, tc_sched *s, int steps)
{
    xbuf xb = {0};
    tc_status st = TC_OK;
    size_t p = skip_ws(r->buf, b, a + 1), lpos = 0;
    int i = 0, line = 1;
    if (p == b - 1)
        return TC_OK; /* [] */
    while (p < b) {
        /* the line each transfer starts on, for later diagnostics about it */
        for (const char *nl; (nl = memchr(r->buf + lpos, '\n', p - lpos)); lpos = (size_t)(nl - r->buf) + 1)
            line++;
        lpos = p;
        size_t e = p;
        int fast = fast_xfer(r, p, b - 1, s, steps, &xb, &e);
        if (fast < 0) {
            st = tc_error(r->ctx, TC_ERR_NOMEM, r->name, 0, "out of memory");
            goto fail;
        }
        cJSON *v = NULL;
        if (fast)
            goto next;
        /* element [p, e): up to the next comma or the closing bracket at depth 0 */
        int depth = 0;
        while (e < b - 1) {
            char c = r->buf[e];
            if (c == '"') {
                e = skip_string(r->buf, b, e);
                continue;
            }
            if (c == '[' || c == '{')
                depth++;
            else if (c == ']' || c == '}')
                depth--;
            else if (c == ',' && depth == 0)
                break;
            e++;
        }
        if ((st = parse_span(r, p, e, &v)))
            goto fail;
        st = read_xfer(r, p, i, v, s, steps, &xb);
        cJSON_Delete(v);
        if (st)
            goto fail;
next:
        if (tc_sched_set_line(s, i, line)) {
            st = tc_error(r->ctx, TC_ERR_NOMEM, r->name, 0, "out of memory");
            goto fail;
        }
        if (i == INT32_MAX) {
            st = err_at(r, TC_ERR_LIMIT, p, "too many transfers");
            goto fail;
        }
        i++;
        if (e >= b - 1)
            break;
        p = skip_ws(r->buf, b, e + 1);
    }
fail:
    free(xb.route);
    return st;
}

tc_status tc_emit_json_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_sched **out)
{
    rd r = {.ctx = ctx, .name = name, .buf = buf, .len = len};
    const keyline spk = {&r, "sparse"}; /* where the sparse section's diagnostics point */
    tc_status st;
    tc_sched *s = NULL;
    cJSON *root = NULL;
    char *hdr = NULL;
    int steps = 0;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) { /* a UTF-8 byte order mark: RFC 8259 section 8.1 */
        r.buf = buf += 3;
        r.len = len -= 3;
    }
    if (skip_ws(buf, len, 0) >= len)
        return tc_error(ctx, TC_ERR_PARSE, name, 0, "empty file");
    /* locate the transfers array lexically: "transfers" : [ ... ] */
    size_t a = (size_t)-1, b = (size_t)-1, k = find_key(&r, "transfers");
    if (k != (size_t)-1) {
        size_t q = skip_ws(buf, len, skip_string(buf, len, k));
        q = skip_ws(buf, len, q + 1);
        if (q < len && buf[q] == '[') {
            a = q;
            b = match_close(buf, len, q);
        }
    }
    if (a == (size_t)-1 || b == (size_t)-1) {
        /* no well-formed transfers array: let cJSON judge the whole document */
        if ((st = parse_span(&r, 0, len, &root)))
            goto fail;
        if ((st = read_header(&r, root, &s, &steps)))
            goto fail;
        const cJSON *xs = cJSON_GetObjectItemCaseSensitive(root, "transfers");
        int i = 0;
        xbuf xb = {0};
        for (const cJSON *e = xs->child; e && !st; e = e->next)
            st = read_xfer(&r, (size_t)-1, i++, e, s, steps, &xb);
        free(xb.route);
        if (st)
            goto fail;
    } else {
        /* header: the document with the transfers array replaced by [] */
        size_t hlen = a + 2 + (len - b);
        hdr = malloc(hlen + 1);
        if (!hdr) {
            st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory");
            goto fail;
        }
        memcpy(hdr, buf, a);
        memcpy(hdr + a, "[]", 2);
        memcpy(hdr + a + 2, buf + b, len - b);
        hdr[hlen] = 0;
        const char *stop = NULL;
        root = cJSON_ParseWithLengthOpts(hdr, hlen, &stop, 0);
        size_t eoff = stop ? (size_t)(stop - hdr) : 0;
        if (root) {
            eoff = skip_ws(hdr, hlen, eoff);
            if (eoff >= hlen)
                eoff = (size_t)-1;
        }
        if (eoff != (size_t)-1) {
            /* map the header offset back to the file */
            st = syntax_error(&r, eoff < a ? eoff : eoff == a ? a : eoff == a + 1 ? b - 1 : eoff - (a + 2) + b);
            goto fail;
        }
        if ((st = read_header(&r, root, &s, &steps)))
            goto fail;
        if ((st = read_transfers(&r, a, b, s, steps)))
            goto fail;
    }
    /* Declared counts are bounded by the file, before anything sized by them runs (the checker keeps bits
     * per rank and chunk, tacos-run buffers per rank): in a correct plan every rank but the root takes part
     * in a transfer, and every chunk but those already in place (at most half, for all-to-all and gather)
     * moves at least once.  Incomplete plans within these bounds still reach the checker's own messages. */
    const uint64_t nx = (uint64_t)s->n_xfers;
    if ((uint64_t)s->n_ranks > 2 * nx + 1) {
        st = field_error(&r, "ranks", "is %d, more than the %d transfers can involve (at most %llu ranks)", s->n_ranks,
                         s->n_xfers, (unsigned long long)(2 * nx + 1));
        goto fail;
    }
    if (s->n_ranks > 1 && (uint64_t)s->n_chunks > 2 * nx) {
        st = field_error(&r, "chunks", "is %d, more than the %d transfers can move (at most %llu chunks)", s->n_chunks,
                         s->n_xfers, (unsigned long long)(2 * nx));
        goto fail;
    }
    /* steps above the largest one used, fewer than transfers */
    int used = 0;
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].step + 1 > used)
            used = s->xfers[i].step + 1;
    if (steps > used && steps > s->n_xfers) {
        st = field_error(&r, "steps", "is %d, more than the %d transfers use (largest step %d)", steps, s->n_xfers,
                         used - 1);
        goto fail;
    }
    s->n_steps = steps;
    /* the one rule every writer follows (tc_sched_create): the size split into the chunks, rounded up; an
     * all-reduce may name its own chunk count, and then the size is split into those */
    const uint64_t div = tc_sched_chunk_divisor(s->coll, s->n_ranks, s->chunks_per_rank), size = s->size_bytes,
                   want = size / div + (size % div != 0), nc = (uint64_t)s->n_chunks;
    if (s->chunk_bytes != want && !(s->coll == TC_COLL_ALLREDUCE && s->chunk_bytes == size / nc + (size % nc != 0))) {
        st = field_error(&r, "chunk_bytes", "is %" PRIu64 ", but %" PRIu64 " bytes in %s's chunks make %" PRIu64,
                         s->chunk_bytes, size, tc_coll_name(s->coll), want);
        goto fail;
    }
    if (s->sparse && (st = tc_sparse_json_check(ctx, s->sparse, s->n_xfers, name, key_line, &spk)))
        goto fail;
    if (tc_sched_set_file(s, name)) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory");
        goto fail;
    }
    *out = s;
    s = NULL;
    st = TC_OK;
fail:
    tc_sched_free(s);
    cJSON_Delete(root);
    free(hdr);
    return st;
}

tc_status tc_emit_json_read(tc_ctx *ctx, const char *path, tc_sched **out)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file(ctx, path, &buf, &len);
    if (st)
        return st;
    st = tc_emit_json_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}
