/*
 * Cost files (man 5 tacosc-costs) and unit parsing.
 *
 * Accepts: lines `CLASS ALPHA BANDWIDTH`, `CLASS ALPHA beta=X` (X in s/GB, GB = 1e9 bytes), size-table
 * points `CLASS at SIZE BANDWIDTH` after the class's own line (SIZE in bytes, tc_parse_size suffixes;
 * increasing; at most TC_COST_AT_MAX; priced by src/topo/linkcost.c),
 * `reconfig TIME` and `codec pici|coo COMPRESS DECOMPRESS` (throughputs of the sparse codecs in bytes of
 * dense data per second, include/tacos/sparse.h); `#` starts a comment; blank lines are ignored.  A number and its unit may be separated
 * by blanks ("0.5 us").  Times: ns, us (or µs with the micro sign U+00B5, or μs with the Greek mu U+03BC),
 * ms, s.  Bandwidths: B/s; decimal KB/s MB/s GB/s TB/s (1e3 .. 1e12); binary KiB/s MiB/s GiB/s TiB/s
 * (2^10 .. 2^40); bits b/s Kb/s Mb/s Gb/s Tb/s and bps Kbps Mbps Gbps Tbps (1/8 byte, decimal prefixes: 200Gb/s
 * is exactly 25GB/s), read but never written.  Limits: a time is at most TC_TIME_MAX; a bandwidth is finite and at least
 * 1/TC_TIME_MAX bytes per second (one byte within TC_TIME_MAX).
 * Returns: a tc_costs with alpha in seconds and beta in seconds per byte.
 * Errors: `costs.txt:3: error: ...` for unknown units, missing fields, non-positive bandwidth, negative
 * alpha, duplicate classes, trailing text; for `at` lines: before the class's line, a bad size, a size
 * not above the previous point's (or the same twice), more than TC_COST_AT_MAX points.
 * Trace: "nvlink 0.7us 25GB/s" -> class nvlink, alpha 7e-7 s, beta 4e-11 s/B.
 */
#include "topo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit {
    const char *name;
    double factor;
    int read_only; /* accepted on input, never chosen when a value is written (bit rates, aliases) */
} unit;

/* "\xc2\xb5s": micro sign U+00B5; "\xce\xbcs": Greek small letter mu U+03BC (troff's \(*m).  Units that
 * start with a byte >= 0x80 are read, never written (fmt_exact). */
static const unit time_units[] = {{"us", 1e-6, 0},          {"ns", 1e-9, 0},  {"\xc2\xb5s", 1e-6, 0},
                                  {"\xce\xbcs", 1e-6, 0}, {"ms", 1e-3, 0}, {"s", 1.0, 0},
                                  {NULL, 0, 0}};
static const unit bw_units[] = {
    {"B/s", 1.0, 0},
    {"KB/s", 1e3, 0},
    {"MB/s", 1e6, 0},
    {"GB/s", 1e9, 0},
    {"TB/s", 1e12, 0},
    {"KiB/s", 1024.0, 0},
    {"MiB/s", 1048576.0, 0},
    {"GiB/s", 1073741824.0, 0},
    {"TiB/s", 1099511627776.0, 0},
    /* bit rates, as NICs and NCCL's topology dumps state them (net speed in Mb/s): 8 bits a byte, decimal
     * prefixes; read only, so what tacosc writes stays in bytes per second */
    {"b/s", 0.125, 1},
    {"Kb/s", 125.0, 1},
    {"Mb/s", 125e3, 1},
    {"Gb/s", 125e6, 1},
    {"Tb/s", 125e9, 1},
    {"bps", 0.125, 1},
    {"Kbps", 125.0, 1},
    {"Mbps", 125e3, 1},
    {"Gbps", 125e6, 1},
    {"Tbps", 125e9, 1},
    {NULL, 0, 0}};

static void set_why(char *why, size_t n, const char *fmt, const char *a)
{
    if (why && n)
        snprintf(why, n, fmt, a);
}

/* s without trailing blanks, into buf (for messages). */
static const char *trimmed(const char *s, char *buf, size_t n)
{
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    snprintf(buf, n, "%.*s", (int)len, s);
    return buf;
}

/* number [blanks] unit, with surrounding blanks; the unit must be one of `units`. */
static tc_status parse_unit(const char *s, const unit *units, const char *kind, const char *list,
                            double *out, char *why, size_t n)
{
    char tmp[96], num[64];
    if (!s)
        return TC_ERR_INVALID;
    while (isspace((unsigned char)*s))
        s++;
    if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+')) {
        set_why(why, n, "expected a number, got '%s'", s);
        return TC_ERR_INVALID;
    }
    char *end;
    double v;
    const char *digits = s + (*s == '+' || *s == '-');
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        set_why(why, n, "'%s' is hexadecimal: numbers are decimal (man 5 tacosc-costs)", s);
        return TC_ERR_INVALID;
    }
    if (tc_parse_decimal(s, &end, &v) || !isfinite(v)) {
        set_why(why, n, "bad number in '%s'", s);
        return TC_ERR_INVALID;
    }
    while (isspace((unsigned char)*end))
        end++;
    size_t len = strlen(end);
    while (len && isspace((unsigned char)end[len - 1]))
        len--;
    if (len == 0) {
        if (why && n)
            snprintf(why, n, "missing %s unit in '%s' (use %s)", kind, s, list);
        return TC_ERR_INVALID;
    }
    if (len >= sizeof tmp)
        len = sizeof tmp - 1;
    memcpy(tmp, end, len);
    tmp[len] = 0;
    for (const unit *u = units; u->name; u++)
        if (strcmp(tmp, u->name) == 0) {
            double x = v * u->factor;
            if (units == time_units && fabs(x) > TC_TIME_MAX) {
                if (why && n)
                    snprintf(why, n, "time '%s' is out of range (at most %.0f s)", trimmed(s, num, sizeof num),
                             TC_TIME_MAX);
                return TC_ERR_INVALID;
            }
            if (units == bw_units && (!isfinite(x) || x > TC_BW_MAX || (x > 0 && x < 1.0 / TC_TIME_MAX))) {
                if (why && n)
                    snprintf(why, n, "bandwidth '%s' is out of range (at least %.6f B/s, at most %.0e B/s)",
                             trimmed(s, num, sizeof num), 1.0 / TC_TIME_MAX, TC_BW_MAX);
                return TC_ERR_INVALID;
            }
            *out = x;
            return TC_OK;
        }
    if (why && n)
        snprintf(why, n, "unknown %s unit '%s' (use %s)", kind, tmp, list);
    return TC_ERR_INVALID;
}

#define TIME_LIST "ns, us, ms or s"
#define BW_LIST "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s or bits: b/s, Kb/s, Mb/s, Gb/s, Tb/s (also bps, Gbps, ...)"

tc_status tc_topo_parse_time_why(const char *s, double *out, char *why, size_t n)
{
    return parse_unit(s, time_units, "time", TIME_LIST, out, why, n);
}

tc_status tc_topo_parse_bw_why(const char *s, double *out, char *why, size_t n)
{
    return parse_unit(s, bw_units, "bandwidth", BW_LIST, out, why, n);
}

tc_status tc_parse_time(const char *s, double *out) { return tc_topo_parse_time_why(s, out, NULL, 0); }
tc_status tc_parse_bandwidth(const char *s, double *out) { return tc_topo_parse_bw_why(s, out, NULL, 0); }

/* Shortest "%.{p}g<unit>" over units (in order) that parses back to exactly v; inverse != 0: v is a
 * beta (s/B) and the text is a bandwidth whose reciprocal must give back exactly v. */
static const char *fmt_exact(double v, const unit *units, int inverse, char *buf, size_t n)
{
    double shown = inverse ? 1.0 / v : v;
    char best[64] = "", cand[64];
    for (const unit *u = units; u->name; u++) {
        if ((unsigned char)u->name[0] >= 0x80 || u->read_only)
            continue;
        for (int p = 1; p <= 17; p++) {
            snprintf(cand, sizeof cand, "%.*g%s", p, shown / u->factor, u->name);
            double back = strtod(cand, NULL) * u->factor;
            if ((inverse ? 1.0 / back : back) == v) {
                if (!best[0] || strlen(cand) < strlen(best))
                    snprintf(best, sizeof best, "%s", cand);
            }
        }
    }
    if (!best[0] && inverse) {
        /* beta is not 1/x for the x tried: look at neighbouring doubles of 1/beta */
        double lo = shown, hi = shown;
        for (int k = 0; k < 64 && !best[0]; k++) {
            lo = nextafter(lo, 0);
            hi = nextafter(hi, INFINITY);
            double c2[2] = {lo, hi};
            for (int j = 0; j < 2 && !best[0]; j++) {
                snprintf(cand, sizeof cand, "%.17gB/s", c2[j]);
                if (1.0 / strtod(cand, NULL) == v)
                    snprintf(best, sizeof best, "%s", cand);
            }
        }
    }
    if (!best[0]) /* no text gives back exactly v: the nearest, 17 significant digits */
        snprintf(best, sizeof best, "%.17g%s", shown, units == time_units ? "s" : "B/s");
    snprintf(buf, n, "%s", best);
    return buf;
}

const char *tc_topo_fmt_time(double seconds, char *buf, size_t n)
{
    return fmt_exact(seconds, time_units, 0, buf, n);
}

const char *tc_topo_fmt_beta(double beta, char *buf, size_t n) { return fmt_exact(beta, bw_units, 1, buf, n); }

/* ---------------------------------------------------------------------------------------------- */

void tc_costs_free(tc_costs *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_classes; i++)
        free(c->classes[i].name);
    free(c->classes);
    free(c);
}

int tc_class_name_valid(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

#define MAX_TOK 8

/* Split a line (comment already removed) into tokens, joining "0.5" "us" into "0.5us". */
static int tokenize(char *line, char **tok)
{
    int nt = 0;
    char *p = line;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = 0;
        if (nt > 0 && nt <= MAX_TOK && (isalpha((unsigned char)*start) || (unsigned char)*start >= 0x80)) {
            /* a bare unit after a bare number: glue it on */
            char *prev = tok[nt - 1];
            size_t pl = strlen(prev);
            if (pl && (isdigit((unsigned char)prev[pl - 1]) || prev[pl - 1] == '.') && !strchr(prev, '=') &&
                (isdigit((unsigned char)prev[0]) || prev[0] == '.' || prev[0] == '-')) {
                memmove(prev + pl, start, strlen(start) + 1); /* start > prev + pl: buffer is in place */
                continue;
            }
        }
        if (nt < MAX_TOK)
            tok[nt] = start;
        nt++;
    }
    return nt;
}

static tc_status costs_add(tc_costs *c, const char *name, double alpha, double beta, int line)
{
    tc_link_class *p = realloc(c->classes, (size_t)(c->n_classes + 1) * sizeof *p);
    if (!p)
        return TC_ERR_NOMEM;
    c->classes = p;
    tc_link_class *k = &c->classes[c->n_classes];
    memset(k, 0, sizeof *k);
    k->name = tc_strdup(name);
    if (!k->name)
        return TC_ERR_NOMEM;
    k->alpha = alpha;
    k->beta = beta;
    k->defined = 1;
    k->line = line;
    c->n_classes++;
    return TC_OK;
}

/* `CLASS at SIZE BANDWIDTH`: a point of the class's size table, after the class's own line. */
static tc_status table_point(tc_ctx *ctx, tc_costs *c, const char *name, int lineno, char **tok, int nt)
{
    const char *cls = tok[0];
    char why[256];
    tc_link_class *k = NULL;
    for (int i = 0; i < c->n_classes; i++)
        if (strcmp(c->classes[i].name, cls) == 0)
            k = &c->classes[i];
    if (!k)
        return tc_error(ctx, TC_ERR_INVALID, name, lineno,
                        "class '%s': 'at' line before the class's own line (expected '%s ALPHA BANDWIDTH' first)",
                        cls, cls);
    if (nt < 4)
        return tc_error(ctx, TC_ERR_PARSE, name, lineno,
                        "class '%s': missing %s (expected '%s at SIZE BANDWIDTH', e.g. '%s at 1MiB 2.5GB/s')", cls,
                        nt < 3 ? "size and bandwidth" : "bandwidth", cls, cls);
    uint64_t bytes;
    if (tc_parse_size(tok[2], &bytes) || bytes < 1 || bytes > ((uint64_t)1 << 53))
        return tc_error(ctx, TC_ERR_PARSE, name, lineno,
                        "class '%s': bad size '%s' (bytes from 1 to 2^53: 4096, 64K, 1MiB, 2GB; K, M, G are 1024^k)",
                        cls, tok[2]);
    double bw;
    if (tc_topo_parse_bw_why(tok[3], &bw, why, sizeof why) != TC_OK)
        return tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s' at %s: bad bandwidth: %s", cls, tok[2], why);
    if (!(bw > 0))
        return tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s' at %s: bandwidth must be positive, got '%s'",
                        cls, tok[2], tok[3]);
    if (nt > 4)
        return tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s' at %s: unexpected '%s' after the bandwidth", cls,
                        tok[2], tok[4]);
    const int n = k->n_at;
    if (n && (double)bytes == k->at_bytes[n - 1])
        return tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s': size %s given twice (%llu bytes)", cls,
                        tok[2], (unsigned long long)bytes);
    if (n && (double)bytes < k->at_bytes[n - 1])
        return tc_error(ctx, TC_ERR_INVALID, name, lineno,
                        "class '%s': size %s (%llu bytes) is below the previous point's %.0f bytes: sizes must increase",
                        cls, tok[2], (unsigned long long)bytes, k->at_bytes[n - 1]);
    if (n == TC_COST_AT_MAX)
        return tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s': more than %d 'at' points", cls, TC_COST_AT_MAX);
    k->at_bytes[n] = (double)bytes;
    k->at_beta[n] = 1.0 / bw;
    k->n_at = n + 1;
    return TC_OK;
}

tc_status tc_costs_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_costs **out)
{
    tc_status st = TC_OK;
    tc_costs *c = calloc(1, sizeof *c);
    char *copy = malloc(len + 1);
    int reconfig_line = 0, codec_line[3] = {0, 0, 0};
    if (!c || !copy) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory reading cost file");
        goto fail;
    }
    memcpy(copy, buf, len);
    copy[len] = 0;
    /* a cost file is text: a NUL byte would end the C string early and every line after it would be ignored */
    const char *nul = memchr(buf, 0, len);
    if (nul) {
        int at = 1;
        for (const char *q = buf; q < nul; q++)
            at += *q == '\n';
        st = tc_error(ctx, TC_ERR_PARSE, name, at, "NUL byte in the cost file (a text file is expected)");
        goto fail;
    }
    c->reconfig = -1;
    int lineno = 0;
    char *p = copy;
    while (p && *p) {
        char *line = p, *nl = strchr(p, '\n');
        if (nl) {
            *nl = 0;
            p = nl + 1;
        } else {
            p = NULL;
        }
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[MAX_TOK];
        int nt = tokenize(line, tok);
        if (nt == 0)
            continue;
        if (nt > MAX_TOK)
            nt = MAX_TOK;
        char why[256];
        const char *cls = tok[0];
        if (strcmp(cls, "reconfig") == 0) {
            if (nt < 2) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "reconfig: missing delay (expected 'reconfig TIME')");
                goto fail;
            }
            double v;
            if (tc_topo_parse_time_why(tok[1], &v, why, sizeof why) != TC_OK) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "reconfig: %s", why);
                goto fail;
            }
            if (v < 0) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "reconfig: delay must not be negative, got '%s'",
                              tok[1]);
                goto fail;
            }
            if (nt > 2) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "reconfig: unexpected '%s' after the delay", tok[2]);
                goto fail;
            }
            if (reconfig_line) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "reconfig given twice (first on line %d)",
                              reconfig_line);
                goto fail;
            }
            reconfig_line = lineno;
            c->reconfig = v;
            continue;
        }
        if (strcmp(cls, "codec") == 0) {
            /* codec NAME COMPRESS DECOMPRESS: the sparse pass's cost model (SpCCL eq. 5) */
            int f = nt > 1 && !strcmp(tok[1], "pici") ? 1 : nt > 1 && !strcmp(tok[1], "coo") ? 2 : 0;
            if (nt < 2 || !f) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "codec: %s (expected 'codec pici|coo COMPRESS DECOMPRESS')",
                              nt < 2 ? "missing codec name" : "unknown codec name");
                goto fail;
            }
            if (nt < 4) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "codec %s: missing %s throughput", tok[1],
                              nt < 3 ? "compression" : "decompression");
                goto fail;
            }
            for (int k = 0; k < 2; k++) {
                double bw;
                if (tc_topo_parse_bw_why(tok[2 + k], &bw, why, sizeof why) != TC_OK) {
                    st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "codec %s: bad %s throughput: %s", tok[1],
                                  k ? "decompression" : "compression", why);
                    goto fail;
                }
                if (!(bw > 0)) {
                    st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "codec %s: %s throughput must be positive, got '%s'",
                                  tok[1], k ? "decompression" : "compression", tok[2 + k]);
                    goto fail;
                }
                c->codec_bw[f][k] = bw;
            }
            if (nt > 4) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "codec %s: unexpected '%s' after the throughputs", tok[1],
                              tok[4]);
                goto fail;
            }
            if (codec_line[f]) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "codec %s given twice (first on line %d)", tok[1],
                              codec_line[f]);
                goto fail;
            }
            codec_line[f] = lineno;
            continue;
        }
        if (nt > 1 && strcmp(tok[1], "at") == 0) {
            if ((st = table_point(ctx, c, name, lineno, tok, nt)))
                goto fail;
            continue;
        }
        if (!tc_class_name_valid(cls)) {
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno,
                          "bad class name '%s' (letters, digits, '_', '-', '.'; starting with a letter or '_')", cls);
            goto fail;
        }
        for (int i = 0; i < c->n_classes; i++)
            if (strcmp(c->classes[i].name, cls) == 0) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s' defined twice (first on line %d)", cls,
                              c->classes[i].line);
                goto fail;
            }
        if (nt < 3) {
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno,
                          "class '%s': missing %s (expected 'CLASS ALPHA BANDWIDTH' or 'CLASS ALPHA beta=S_PER_GB')",
                          cls, nt < 2 ? "alpha and bandwidth" : "bandwidth");
            goto fail;
        }
        double alpha, bw, beta;
        if (tc_topo_parse_time_why(tok[1], &alpha, why, sizeof why) != TC_OK) {
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s': bad alpha: %s", cls, why);
            goto fail;
        }
        if (alpha < 0) {
            st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s': alpha must not be negative, got '%s'", cls,
                          tok[1]);
            goto fail;
        }
        if (strncmp(tok[2], "beta=", 5) == 0) {
            const char *v = tok[2] + 5;
            char *end;
            if (tc_parse_decimal(v, &end, &beta) || !isfinite(beta) ||
                !(isdigit((unsigned char)*v) || *v == '.' || *v == '-') ||
                (*end && strcmp(end, "s/GB") != 0)) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s': bad beta '%s' (expected beta=SECONDS_PER_GB, e.g. beta=0.02)",
                              cls, v);
                goto fail;
            }
            if (!(beta > 0)) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s': beta must be positive, got '%s'", cls, v);
                goto fail;
            }
            beta /= 1e9;
            if (beta > TC_TIME_MAX || !(1.0 / beta <= TC_BW_MAX)) { /* the bandwidth limits, as 1/beta */
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno,
                              "class '%s': beta '%s' is out of range (at most %.0f s/GB, at least %g s/GB: a "
                              "bandwidth of at most %.0e B/s)",
                              cls, v, TC_TIME_MAX * 1e9, 1e9 / TC_BW_MAX, TC_BW_MAX);
                goto fail;
            }
        } else {
            if (tc_topo_parse_bw_why(tok[2], &bw, why, sizeof why) != TC_OK) {
                st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s': bad bandwidth: %s", cls, why);
                goto fail;
            }
            if (!(bw > 0)) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "class '%s': bandwidth must be positive, got '%s'",
                              cls, tok[2]);
                goto fail;
            }
            beta = 1.0 / bw;
        }
        if (nt > 3) {
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "class '%s': unexpected '%s' after the bandwidth", cls,
                          tok[3]);
            goto fail;
        }
        if (costs_add(c, cls, alpha, beta, lineno) != TC_OK) {
            st = tc_error(ctx, TC_ERR_NOMEM, name, lineno, "out of memory reading cost file");
            goto fail;
        }
    }
    free(copy);
    *out = c;
    return TC_OK;
fail:
    free(copy);
    tc_costs_free(c);
    return st;
}

tc_status tc_costs_read(tc_ctx *ctx, const char *path, tc_costs **out)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file_max(ctx, path, TC_TEXT_MAX_COSTS, "cost file", &buf, &len);
    if (st)
        return st;
    st = tc_costs_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}

tc_status tc_topo_apply_costs(tc_ctx *ctx, tc_topo *t, const tc_costs *c)
{
    if (c) {
        for (int i = 0; i < c->n_classes; i++)
            for (int k = 0; k < t->n_classes; k++)
                if (strcmp(t->classes[k].name, c->classes[i].name) == 0) {
                    t->classes[k].alpha = c->classes[i].alpha;
                    t->classes[k].beta = c->classes[i].beta;
                    t->classes[k].n_at = c->classes[i].n_at;
                    memcpy(t->classes[k].at_bytes, c->classes[i].at_bytes, sizeof t->classes[k].at_bytes);
                    memcpy(t->classes[k].at_beta, c->classes[i].at_beta, sizeof t->classes[k].at_beta);
                    t->classes[k].defined = 1;
                    t->classes[k].line = 0;
                }
        if (c->reconfig >= 0) {
            t->photonic.reconfig_delay = c->reconfig;
            t->photonic.reconfig_set = 1;
        }
        for (int f = 1; f < 3; f++)
            for (int k = 0; k < 2; k++)
                if (c->codec_bw[f][k] > 0)
                    t->codec_bw[f][k] = c->codec_bw[f][k];
    }
    for (int i = 0; i < t->n_links; i++) {
        const tc_link *l = &t->links[i];
        const tc_link_class *k = &t->classes[l->cls];
        /* a link with both overrides does not need its class's values */
        if (!k->defined && !(l->alpha_set && l->beta_set))
            return tc_error(ctx, TC_ERR_INVALID, t->file, l->line,
                            "link %d->%d: unknown class '%s' (not defined in the topology%s)", l->src, l->dst,
                            k->name, c ? " or the cost file" : " and no cost file given");
    }
    for (int i = 0; i < t->n_switches; i++) {
        const tc_switch *s = &t->switches[i];
        const tc_link_class *k = &t->classes[s->cls];
        if (!k->defined)
            return tc_error(ctx, TC_ERR_INVALID, t->file, s->line,
                            "switch '%s': unknown class '%s' (not defined in the topology%s)", s->name, k->name,
                            c ? " or the cost file" : " and no cost file given");
        if (s->up_cls >= 0 && !t->classes[s->up_cls].defined)
            return tc_error(ctx, TC_ERR_INVALID, t->file, s->line,
                            "%s '%s': unknown upclass '%s' (not defined in the topology%s)", s->nic ? "nic" : "switch",
                            s->name, t->classes[s->up_cls].name, c ? " or the cost file" : " and no cost file given");
    }
    tc_topo_refresh_costs(t);
    return TC_OK;
}
