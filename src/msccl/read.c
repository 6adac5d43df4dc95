/*
 * MSCCL XML reader (man 5 tacosc-msccl, READING).
 *
 * Accepts: any MSCCL algorithm file (ours, msccl-tools/MSCCLang, msccl-scheduler, RCCL's shipped files),
 * from a path, a FILE * or memory.
 * Returns: a tc_msccl that passed the structural rules (tc_msccl_check_structure), or the first rule
 * broken as `file:line: error: ... [rule]`.
 *
 * Grammar.  What matters is what the runtimes do with a file, and both parse it with the same
 * hand-written reader (Azure/msccl-executor-nccl and ROCm/rccl, src/misc/msccl/msccl_parser.cc and
 * src/include/msccl/msccl_parser.h), so this reader follows that grammar, restricted to text that is also
 * well-formed XML:
 *  - between tags only ' ', '\n' and '\r' (mscclXmlGetNode expects '<'): a byte-order mark [bom], a tab
 *    [tab] or any other text [text] is refused;
 *  - a tag ends on its line [split-tag]; `<?` [xml-declaration] and `<!` other than a comment [doctype]
 *    are refused; a closing tag is exactly `</name>` [close-tag];
 *  - attributes: after the name, every blank starts a token, and every token takes one of the 16
 *    attribute slots (MAX_ATTR_COUNT; a token made by an extra blank is empty but still takes one, the
 *    17th and later are dropped) [attribute-slots]; a value is double-quoted [single-quote] and directly
 *    after '=' with no blank on either side (`a ="1"` gives a an empty value, `a= "1"` is refused)
 *    [blank-around-equals]; values are copied unchecked into 256-byte arrays: at most 255 characters
 *    [value-length] (names at most 253 [name-length]); '<' or '&' in a value reads differently in XML
 *    [value-char]; an attribute twice [duplicate-attribute];
 *  - numbers are read with strtol(value, NULL, 0): a value that reads differently from its face value
 *    (`010` is 8, `09` is 0, `0x10` is 16) is refused [number];
 *  - elements: <algo> holding <gpu>s holding <tb>s holding <step>s; any element inside <step> crashes the
 *    NCCL parser (mscclAlgoXmlStep passes a NULL handler table with a count of 1) [step-child].
 * Streaming: the text is read line by line (a tag never spans lines), so memory is the longest line plus
 * the program itself.  Counts the file declares allocate nothing: gpus are stored as they come and must
 * match ngpus at the end, so a declared count never sizes an allocation.
 * Legacy files (microsoft/msccl era) that lack minBytes, maxBytes or outofplace load with a warning.
 * Cost: O(bytes).
 */
#include "tacos/msccl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 16       /* MAX_ATTR_COUNT */
#define MAX_VALUE 255      /* MAX_STR_LEN: char value[MAX_STR_LEN+1], copied without a bound */
#define MAX_NAME 253       /* mscclXmlGetToken stops with an error at o == MAX_STR_LEN-1 */
#define MAX_ATTRS 64       /* attributes kept per element (the runtime keeps 16) */

typedef struct attr { const char *key, *val; unsigned hash; } attr;

typedef struct elem {
    char name[16];
    int line;
} elem;

typedef struct rd {
    tc_ctx *ctx;
    const char *name;
    FILE *f;
    char *buf;             /* the current line, NUL-terminated */
    size_t cap, len;
    int line;
    int in_comment, comment_line;
    int unwind, switch_model, link_model; /* from a `<!-- tacosc: ... -->` comment (tc_msccl) */
    int depth;
    elem stack[5];
    int done_root;
    tc_msccl *m;
    int n_gpus;            /* <gpu>s stored so far */
    attr a[MAX_ATTRS];
    int na;
    int hint;              /* where the next lookup looks first (attributes come in the writers' order) */
} rd;

static unsigned key_hash(const char *k, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

static tc_status perr(rd *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tc_status perr(rd *r, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(r->ctx, TC_DIAG_ERROR, r->name, line, 0, fmt, ap);
    va_end(ap);
    return TC_ERR_PARSE;
}

/* A short, printable excerpt of s (at most n bytes) for messages. */
static const char *excerpt(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && s[i] && k + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 32 && c < 127 && c != '"')
            out[k++] = (char)c;
        else
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
    }
    out[k] = 0;
    return out;
}

static const char *get(rd *r, const char *key)
{
    if (r->hint < r->na && !strcmp(r->a[r->hint].key, key))
        return r->a[r->hint++].val;
    for (int i = 0; i < r->na; i++)
        if (!strcmp(r->a[i].key, key)) {
            r->hint = i + 1;
            return r->a[i].val;
        }
    return NULL;
}

static tc_status need(rd *r, const char *el, const char *key, const char **out)
{
    if (!(*out = get(r, key)))
        return perr(r, r->line, "<%s> lacks attribute %s [missing-attribute]", el, key);
    return TC_OK;
}

/* An integer the way the runtime reads it (strtol(v, NULL, 0) into an int), refused when that differs
 * from the face value. */
static tc_status num(rd *r, const char *el, const char *key, long lo, long hi, long long *out)
{
    const char *v;
    tc_status st = need(r, el, key, &v);
    if (st)
        return st;
    const char *p = v;
    if (*p == '-')
        p++;
    /* the common case, plain decimal of at most 18 digits, without strtoll */
    if (*p >= '1' && *p <= '9') {
        long long x = 0;
        int k = 0;
        while (p[k] >= '0' && p[k] <= '9' && k < 18)
            x = x * 10 + (p[k++] - '0');
        if (!p[k]) {
            x = v[0] == '-' ? -x : x;
            if (x < lo || x > hi)
                return perr(r, r->line, "attribute %s=\"%s\" of <%s> is out of range (%ld..%ld) [attribute-value]", key,
                            v, el, lo, hi);
            *out = x;
            return TC_OK;
        }
    }
    int canonical = *p >= '0' && *p <= '9' && !(p[0] == '0' && p[1]) && p[strspn(p, "0123456789")] == 0;
    if (!canonical) {
        char *end;
        errno = 0;
        long long rt = strtoll(v, &end, 0);
        char ex[64];
        if (end != v && !errno)
            return perr(r, r->line,
                        "attribute %s=\"%s\" of <%s>: the runtime reads it with strtol(..., 0) as %lld; write %lld "
                        "[number]",
                        key, excerpt(v, 32, ex, sizeof ex), el, rt, rt);
        return perr(r, r->line, "attribute %s=\"%s\" of <%s> is not an integer [attribute-value]", key,
                    excerpt(v, 32, ex, sizeof ex), el);
    }
    errno = 0;
    long long x = strtoll(v, NULL, 10);
    if (errno || x < lo || x > hi)
        return perr(r, r->line, "attribute %s=\"%s\" of <%s> is out of range (%ld..%ld) [attribute-value]", key, v, el,
                    lo, hi);
    *out = x;
    return TC_OK;
}

static tc_status inum(rd *r, const char *el, const char *key, long lo, int *out)
{
    long long x = 0;
    tc_status st = num(r, el, key, lo, INT_MAX, &x);
    if (!st)
        *out = (int)x;
    return st;
}

/* ---- elements ------------------------------------------------------------------------------------ */

static tc_status on_algo(rd *r)
{
    static const char *const colls[] = {"allgather", "reducescatter", "allreduce", "broadcast",
                                        "reduce",    "gather",        "scatter",   "alltoall"};
    const char *name, *proto, *coll;
    int nch = 0, ncpl = 0, ngpus = 0, inplace = 0;
    tc_status st;
    if ((st = need(r, "algo", "name", &name)) || (st = need(r, "algo", "proto", &proto)) ||
        (st = inum(r, "algo", "nchannels", INT_MIN, &nch)) || (st = inum(r, "algo", "nchunksperloop", INT_MIN, &ncpl)) ||
        (st = inum(r, "algo", "ngpus", INT_MIN, &ngpus)) || (st = need(r, "algo", "coll", &coll)) ||
        (st = inum(r, "algo", "inplace", INT_MIN, &inplace)))
        return st;
    int c = -1;
    for (int k = 0; k < TC_COLL_COUNT; k++)
        if (!strcmp(coll, colls[k]))
            c = k;
    if (c < 0) {
        char ex[64];
        excerpt(coll, 32, ex, sizeof ex);
        if (!strcmp(coll, "send") || !strcmp(coll, "recv") || !strcmp(coll, "alltoallv"))
            return perr(r, r->line, "coll=\"%s\": a collective the runtimes know but tacosc does not handle [coll]", ex);
        return perr(r, r->line,
                    "unknown collective coll=\"%s\": the runtimes refuse it (allreduce, allgather, reducescatter, "
                    "alltoall, reduce, broadcast, gather or scatter, exactly so spelled) [coll]",
                    ex);
    }
    if (strcmp(proto, "Simple") && strcmp(proto, "LL") && strcmp(proto, "LL128")) {
        char ex[64];
        return perr(r, r->line, "unknown protocol proto=\"%s\" (Simple, LL or LL128) [proto]",
                    excerpt(proto, 32, ex, sizeof ex));
    }
    if (ngpus < 1 || nch < 1 || ncpl < 1)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line,
                        "ngpus, nchannels and nchunksperloop must be at least 1 [attribute-value]");
    if (inplace != 0 && inplace != 1)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line, "inplace=\"%d\" (0 or 1) [attribute-value]", inplace);
    if ((st = tc_msccl_create(name, (tc_coll)c, 0, &r->m)))
        return st;
    tc_msccl *m = r->m;
    m->ngpus = ngpus; /* declared; gpus are stored as they come and counted at the end */
    m->line = r->line;
    snprintf(m->proto, sizeof m->proto, "%s", proto);
    m->nchannels = nch;
    m->nchunksperloop = ncpl;
    m->inplace = inplace;
    /* attributes the research runtime (microsoft/msccl) treated as optional */
    static const char *const legacy[] = {"minBytes", "maxBytes", "outofplace"};
    for (int k = 0; k < 3; k++) {
        if (get(r, legacy[k]))
            continue;
        if (!m->legacy)
            tc_warn(r->ctx, r->name, r->line,
                    "lacks attribute %s of <algo>: msccl-executor-nccl and RCCL reject this file [legacy]", legacy[k]);
        m->legacy = 1;
    }
    m->outofplace = !m->inplace;
    long long v;
    if (get(r, "outofplace")) {
        if ((st = num(r, "algo", "outofplace", INT_MIN, INT_MAX, &v)))
            return st;
        if (v != 0 && v != 1)
            return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line, "outofplace=\"%lld\" (0 or 1) [attribute-value]",
                            v);
        m->outofplace = (int)v;
    }
    if (get(r, "minBytes")) {
        if ((st = num(r, "algo", "minBytes", 0, LONG_MAX, &v)))
            return st;
        m->min_bytes = (uint64_t)v;
    }
    if (get(r, "maxBytes")) {
        if ((st = num(r, "algo", "maxBytes", 0, LONG_MAX, &v)))
            return st;
        m->max_bytes = (uint64_t)v;
    }
    if (m->max_bytes && m->min_bytes > m->max_bytes) /* maxBytes 0: no limit */
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line,
                        "minBytes=\"%llu\" is above maxBytes=\"%llu\": the runtime would use the plan for no size "
                        "[attribute-value]",
                        (unsigned long long)m->min_bytes, (unsigned long long)m->max_bytes);
    return TC_OK;
}

static tc_status on_gpu(rd *r)
{
    tc_msccl *m = r->m;
    int id = 0, ic = 0, oc = 0, sc = 0;
    tc_status st;
    if ((st = inum(r, "gpu", "id", INT_MIN, &id)) || (st = inum(r, "gpu", "i_chunks", INT_MIN, &ic)) ||
        (st = inum(r, "gpu", "o_chunks", INT_MIN, &oc)) || (st = inum(r, "gpu", "s_chunks", INT_MIN, &sc)))
        return st;
    int n = r->n_gpus; /* gpus stored so far */
    if (n >= m->ngpus)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line, "more <gpu> elements than ngpus=\"%d\" [gpu-count]",
                        m->ngpus);
    if (id != n)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line,
                        "<gpu id=\"%d\"> where id=\"%d\" is expected (gpu ids are 0, 1, 2, ...) [gpu-id]", id, n);
    if (ic < 0 || oc < 0 || sc < 0)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, r->line, "gpu %d: negative chunk count [attribute-value]", id);
    /* grow by doubling: the array follows the gpus actually present, never the declared count */
    if ((n & (n - 1)) == 0) {
        tc_msccl_gpu *p = realloc(m->gpus, (size_t)(n ? 2 * n : 1) * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        m->gpus = p;
    }
    tc_msccl_gpu *g = &m->gpus[n];
    memset(g, 0, sizeof *g);
    g->id = id;
    g->i_chunks = ic;
    g->o_chunks = oc;
    g->s_chunks = sc;
    g->line = r->line;
    r->n_gpus = n + 1;
    return TC_OK;
}

static tc_status on_tb(rd *r)
{
    int id = 0, send = 0, recv = 0, chan = 0;
    tc_status st;
    if ((st = inum(r, "tb", "id", INT_MIN, &id)) || (st = inum(r, "tb", "send", INT_MIN, &send)) ||
        (st = inum(r, "tb", "recv", INT_MIN, &recv)) || (st = inum(r, "tb", "chan", INT_MIN, &chan)))
        return st;
    tc_msccl_gpu *g = &r->m->gpus[r->n_gpus - 1];
    tc_msccl_tb *tb;
    if ((st = tc_msccl_tb_add(g, send, recv, chan, &tb)))
        return st;
    tb->id = id;
    tb->line = r->line;
    return TC_OK;
}

static tc_status on_step(rd *r)
{
    static const char *const types[TC_MS_TYPE_COUNT] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};
    tc_msccl_step s;
    memset(&s, 0, sizeof s);
    s.line = r->line;
    const char *ty, *sb, *db;
    tc_status st;
    if ((st = inum(r, "step", "s", INT_MIN, &s.s)) || (st = need(r, "step", "type", &ty)))
        return st;
    s.type = -1;
    for (int t = 0; t < TC_MS_TYPE_COUNT && s.type < 0; t++)
        if (ty[0] == types[t][0] && !strcmp(ty, types[t]))
            s.type = t;
    char ex[64];
    if (s.type < 0)
        return perr(r, r->line, "unknown step type \"%s\" (s, r, rcs, rrs, rrc, rrcs, cpy, re or nop) [step-type]",
                    excerpt(ty, 32, ex, sizeof ex));
    if ((st = need(r, "step", "srcbuf", &sb)) || (st = inum(r, "step", "srcoff", INT_MIN, &s.srcoff)) ||
        (st = need(r, "step", "dstbuf", &db)) || (st = inum(r, "step", "dstoff", INT_MIN, &s.dstoff)) ||
        (st = inum(r, "step", "cnt", INT_MIN, &s.cnt)) || (st = inum(r, "step", "depid", INT_MIN, &s.depid)) ||
        (st = inum(r, "step", "deps", INT_MIN, &s.deps)) || (st = inum(r, "step", "hasdep", INT_MIN, &s.hasdep)))
        return st;
    for (int k = 0; k < 2; k++) {
        const char *v = k ? db : sb;
        int b = v[0] && !v[1] ? (v[0] == 'i' ? TC_MS_BUF_I : v[0] == 'o' ? TC_MS_BUF_O : v[0] == 's' ? TC_MS_BUF_S : -1)
                              : -1;
        if (b < 0) /* mscclGetBufferType refuses it whatever the step type */
            return perr(r, r->line, "unknown buffer %s=\"%s\" (i, o or s) [buffer]", k ? "dstbuf" : "srcbuf",
                        excerpt(v, 32, ex, sizeof ex));
        *(k ? &s.dstbuf : &s.srcbuf) = b;
    }
    tc_msccl_gpu *g = &r->m->gpus[r->n_gpus - 1];
    tc_msccl_tb *tb = &g->tbs[g->n_tbs - 1];
    int keep = s.s;
    if ((st = tc_msccl_step_add(tb, &s)))
        return st;
    tb->steps[tb->n_steps - 1].s = keep;
    return TC_OK;
}

/* An element opened (or self-closed) at the current depth. */
static tc_status on_element(rd *r, const char *name, int single)
{
    static const char *const want[] = {"algo", "gpu", "tb", "step"};
    static const char *const parent[] = {"", "algo", "gpu", "tb"};
    const int d = r->depth;
    if (d == 0 && r->done_root)
        return perr(r, r->line, "element <%s> after </algo>: one <algo> per file [element]", name);
    if (d == 4)
        return perr(r, r->line,
                    "element <%s> inside <step>: the NCCL parser crashes on any child of <step> [step-child]", name);
    if (strcmp(name, want[d])) {
        if (d == 0)
            return perr(r, r->line, "the root element must be <algo>, not <%s> [element]", name);
        return perr(r, r->line, "unexpected element <%s> in <%s> [element]", name, parent[d]);
    }
    tc_status st = d == 0 ? on_algo(r) : d == 1 ? on_gpu(r) : d == 2 ? on_tb(r) : on_step(r);
    if (st)
        return st;
    if (single) {
        if (d == 0)
            r->done_root = 1;
        return TC_OK;
    }
    snprintf(r->stack[d].name, sizeof r->stack[d].name, "%s", name);
    r->stack[d].line = r->line;
    r->depth++;
    return TC_OK;
}

/* ---- lexing ---------------------------------------------------------------------------------------- */

static int stop_char(char c)
{
    return c == ' ' || c == '>' || c == '/' || c == '\n' || c == '\r' || c == 0;
}

/* `<!-- tacosc: unwind D, switch-model M, link-model L -->` (tc_msccl_write): the topology the plan's time is
 * for.  Any other comment, or a part not understood, is left as a comment. */
static void tacosc_comment(rd *r, const char *t)
{
    while (*t == ' ')
        t++;
    if (strncmp(t, "tacosc:", 7))
        return;
    t += 7;
    for (;;) {
        while (*t == ' ' || *t == ',')
            t++;
        char key[16], val[16];
        int n = 0;
        if (sscanf(t, "%15[a-z-] %15[a-z0-9-]%n", key, val, &n) != 2)
            return;
        t += n;
        if (!strcmp(key, "unwind")) {
            char *end;
            const long d = strtol(val, &end, 10);
            if (!*end && d > 0 && d < INT_MAX)
                r->unwind = (int)d;
        } else if (!strcmp(key, "switch-model")) {
            tc_switch_model sm;
            if (!tc_switch_model_parse(val, &sm))
                r->switch_model = 1 + (int)sm;
        } else if (!strcmp(key, "link-model")) {
            tc_link_model lm;
            if (!tc_link_model_parse(val, &lm))
                r->link_model = (int)lm;
        }
    }
}

/* One tag starting at buf[*pos] == '<'. */
static tc_status tag(rd *r, size_t *pos)
{
    char *b = r->buf;
    size_t p = *pos + 1;
    char ex[64];
    if (!strncmp(b + p, "!--", 3)) {
        r->in_comment = 1;
        r->comment_line = r->line;
        *pos = p + 3;
        tacosc_comment(r, b + p + 3);
        return TC_OK;
    }
    if (b[p] == '?')
        return perr(r, r->line,
                    "XML declaration or processing instruction present: the MSCCL parser rejects it [xml-declaration]");
    if (b[p] == '!')
        return perr(r, r->line, "DOCTYPE or other declaration present: the MSCCL parser rejects it [doctype]");
    if (b[p] == '/') { /* closing tag: exactly </name> */
        size_t s = ++p;
        while (!stop_char(b[p]))
            p++;
        if (b[p] != '>')
            return perr(r, r->line,
                        b[p] == '\n' || b[p] == '\r' || !b[p]
                            ? "closing tag </%.*s continues on the next line: the MSCCL parser needs each tag on one "
                              "line [split-tag]"
                            : "closing tag </%.*s must end right after its name: the MSCCL parser rejects anything "
                              "between the name and '>' [close-tag]",
                        (int)(p - s > 32 ? 32 : p - s), b + s);
        if (r->depth == 0)
            return perr(r, r->line, "closing tag </%.*s> without an open element [xml]", (int)(p - s > 32 ? 32 : p - s),
                        b + s);
        elem *e = &r->stack[r->depth - 1];
        if (strlen(e->name) != p - s || strncmp(e->name, b + s, p - s))
            return perr(r, r->line, "closing tag </%.*s> does not match <%s> opened at line %d [xml]",
                        (int)(p - s > 32 ? 32 : p - s), b + s, e->name, e->line);
        r->depth--;
        if (r->depth == 0)
            r->done_root = 1;
        *pos = p + 1;
        return TC_OK;
    }
    size_t ns = p;
    while (!stop_char(b[p]) && b[p] != '=')
        p++;
    size_t nl = p - ns;
    if (nl == 0)
        return perr(r, r->line, "'<' must be followed by an element name [xml]");
    if (nl > MAX_NAME)
        return perr(r, r->line, "element name of %zu characters: the MSCCL parser reads at most %d [name-length]", nl,
                    MAX_NAME);
    char name[16];
    snprintf(name, sizeof name, "%.*s", (int)(nl < 15 ? nl : 15), b + ns);
    if (b[p] == '=')
        return perr(r, r->line, "'=' in the element name <%s [xml]", excerpt(b + ns, nl, ex, sizeof ex));
    /* attributes, token by token as mscclXmlGetNode reads them */
    int slots = 0;
    r->na = r->hint = 0;
    char c = b[p];
    while (c == ' ') {
        size_t ks = ++p;
        while (!stop_char(b[p]) && b[p] != '=')
            p++;
        size_t kl = p - ks;
        slots++;
        if (kl > MAX_NAME)
            return perr(r, r->line, "attribute name of %zu characters in <%s>: the MSCCL parser reads at most %d "
                                    "[name-length]",
                        kl, name, MAX_NAME);
        if (b[p] == '=') {
            if (kl == 0)
                return perr(r, r->line,
                            "'=' without an attribute name right before it in <%s>: write name=\"value\" with no "
                            "blank around '=' (the MSCCL parser reads `name =\"v\"` as name with an empty value) "
                            "[blank-around-equals]",
                            name);
            b[p] = 0; /* end of the key */
            p++;
            if (b[p] == '\'') {
                return perr(r, r->line,
                            "attribute %s of <%s> uses single quotes: the MSCCL parser needs double quotes "
                            "[single-quote]",
                            b + ks, name);
            }
            if (b[p] == ' ')
                return perr(r, r->line,
                            "blank after '=' of attribute %s in <%s>: the MSCCL parser needs the value right after "
                            "'=' [blank-around-equals]",
                            b + ks, name);
            if (b[p] != '"')
                return perr(r, r->line, "attribute %s of <%s> has no double-quoted value [xml]", b + ks, name);
            size_t vs = ++p;
            while (b[p] && b[p] != '"' && b[p] != '\n' && b[p] != '\r')
                p++;
            if (b[p] != '"')
                return perr(r, r->line, "tag <%s> continues on the next line: the MSCCL parser needs each tag on one "
                                        "line [split-tag]",
                            name);
            size_t vl = p - vs;
            if (vl > MAX_VALUE)
                return perr(r, r->line,
                            "attribute %s of <%s> has a value of %zu characters: the MSCCL parser copies values into "
                            "%d-byte arrays without a bound (at most %d characters) [value-length]",
                            b + ks, name, vl, MAX_VALUE + 1, MAX_VALUE);
            for (size_t k = vs; k < p; k++)
                if (b[k] == '<' || b[k] == '&')
                    return perr(r, r->line,
                                "'%c' in the value of attribute %s of <%s>: XML and the MSCCL parser read it "
                                "differently [value-char]",
                                b[k], b + ks, name);
            b[p] = 0; /* end of the value */
            unsigned h = key_hash(b + ks, kl);
            for (int k = 0; k < r->na; k++)
                if (r->a[k].hash == h && !strcmp(r->a[k].key, b + ks))
                    return perr(r, r->line, "attribute %s given twice in <%s> [duplicate-attribute]", b + ks, name);
            if (r->na < MAX_ATTRS)
                r->a[r->na++] = (attr){b + ks, b + vs, h};
            c = b[++p];
            if (c != ' ' && c != '/' && c != '>' && c != '\n' && c != '\r' && c)
                return perr(r, r->line, "'%c' right after the value of attribute %s in <%s>: a blank, '/>' or '>' "
                                        "must follow [xml]",
                            c, b + ks, name);
            continue;
        }
        if (kl > 0) { /* a name without '=' right after it */
            size_t q = p;
            while (b[q] == ' ')
                q++;
            if (b[q] == '=')
                return perr(r, r->line,
                            "blank before '=' of attribute %.*s in <%s>: the MSCCL parser reads it as an empty value "
                            "[blank-around-equals]",
                            (int)kl, b + ks, name);
            return perr(r, r->line, "attribute %.*s of <%s> has no value [xml]", (int)kl, b + ks, name);
        }
        c = b[p]; /* an empty token: an extra blank, or the blank before '/>' or '>' */
    }
    if (slots > MAX_SLOTS)
        return perr(r, r->line,
                    "<%s> has %d attribute slots: the MSCCL parser keeps %d and drops the rest (every blank between "
                    "attributes takes a slot; use single blanks) [attribute-slots]",
                    name, slots, MAX_SLOTS);
    int single = 0;
    if (c == '/') {
        if (b[p + 1] != '>')
            return perr(r, r->line, "'/' must be followed by '>' in <%s> [xml]", name);
        single = 1;
        p++;
        c = '>';
    }
    if (c != '>')
        return perr(r, r->line,
                    "tag <%s> continues on the next line: the MSCCL parser needs each tag on one line [split-tag]",
                    name);
    *pos = p + 1;
    return on_element(r, name, single);
}

/* One line (NUL-terminated, without its '\n'). */
static tc_status line(rd *r)
{
    char *b = r->buf;
    size_t n = r->len, p = 0;
    char ex[64];
    if (r->line == 1 && n >= 3 && !memcmp(b, "\xef\xbb\xbf", 3))
        return perr(r, 1, "UTF-8 byte-order mark: the MSCCL parser expects '<' as the first byte [bom]");
    const char *tab = memchr(b, '\t', n);
    if (tab)
        return perr(r, r->line, "tab character at column %d: the MSCCL parser rejects tabs [tab]", (int)(tab - b) + 1);
    if (memchr(b, 0, n))
        return perr(r, r->line, "NUL byte at column %d [text]", (int)((const char *)memchr(b, 0, n) - b) + 1);
    while (p < n) {
        if (r->in_comment) {
            const char *e = strstr(b + p, "-->");
            if (!e)
                return TC_OK;
            r->in_comment = 0;
            p = (size_t)(e - b) + 3;
            continue;
        }
        char c = b[p];
        if (c == ' ' || c == '\r') {
            p++;
            continue;
        }
        if (c != '<') {
            size_t e = p;
            while (e < n && b[e] != '<')
                e++;
            while (e > p && (b[e - 1] == ' ' || b[e - 1] == '\r'))
                e--;
            return perr(r, r->line,
                        "text \"%s\" at column %zu: the MSCCL parser allows only blanks between tags [text]",
                        excerpt(b + p, e - p > 24 ? 24 : e - p, ex, sizeof ex), p + 1);
        }
        tc_status st = tag(r, &p);
        if (st)
            return st;
    }
    return TC_OK;
}

static tc_status run(rd *r)
{
    tc_status st = TC_OK;
    for (;;) {
        errno = 0;
        ssize_t n = getline(&r->buf, &r->cap, r->f);
        if (n < 0) {
            if (ferror(r->f))
                return tc_error(r->ctx, TC_ERR_IO, r->name, 0, "cannot read: %s", strerror(errno ? errno : EIO));
            break;
        }
        r->line++;
        r->len = (size_t)n;
        if (r->len && r->buf[r->len - 1] == '\n')
            r->buf[--r->len] = 0;
        if ((st = line(r)))
            return st;
    }
    if (r->in_comment)
        return perr(r, r->comment_line, "unterminated comment [xml]");
    if (r->depth)
        return perr(r, r->line ? r->line : 1, "unterminated <%s> opened at line %d [xml]",
                    r->stack[r->depth - 1].name, r->stack[r->depth - 1].line);
    if (!r->m)
        return perr(r, r->line ? r->line : 1, "no <algo> element [element]");
    tc_msccl *m = r->m;
    m->unwind = r->unwind;
    m->switch_model = r->switch_model;
    m->link_model = r->link_model;
    if (r->n_gpus != m->ngpus)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, m->line, "ngpus=\"%d\" but %d <gpu> elements [gpu-count]",
                        m->ngpus, r->n_gpus);
    return tc_msccl_check_structure(r->ctx, m, r->name);
}

tc_status tc_msccl_read_file(tc_ctx *ctx, const char *name, FILE *f, tc_msccl **out)
{
    rd r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.name = name ? name : "<input>";
    r.f = f;
    tc_status st = run(&r);
    free(r.buf);
    if (st) {
        if (r.m)
            r.m->ngpus = r.n_gpus; /* free only what was stored */
        tc_msccl_free(r.m);
        return st;
    }
    *out = r.m;
    return TC_OK;
}

tc_status tc_msccl_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_msccl **out)
{
    if (!len) /* fmemopen refuses an empty buffer */
        return tc_error(ctx, TC_ERR_PARSE, name ? name : "<memory>", 1, "no <algo> element [element]");
    FILE *f = fmemopen((void *)buf, len, "r");
    if (!f)
        return tc_error(ctx, TC_ERR_NOMEM, name, 0, "cannot read the MSCCL text from memory: %s", strerror(errno));
    tc_status st = tc_msccl_read_file(ctx, name ? name : "<memory>", f, out);
    fclose(f);
    return st;
}

tc_status tc_msccl_read(tc_ctx *ctx, const char *path, tc_msccl **out)
{
    FILE *f;
    tc_status st = tc_open_read(ctx, path, &f);
    if (st)
        return st;
    st = tc_msccl_read_file(ctx, path, f, out);
    fclose(f);
    return st;
}
