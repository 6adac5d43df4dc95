/*
 * MSCCL XML: the program object, its reader and its writer (man 5 tacosc-msccl).
 *
 * Accepts: any MSCCL algorithm file (ours, msccl-tools, msccl-scheduler, RCCL) and tc_msccl programs.
 * Returns: a tc_msccl that passed the structural rules (tc_msccl_check_structure), or the first rule
 * broken as `file:line: error: ... [rule]`.  The runtimes' own parser (msccl-executor-nccl, RCCL) is
 * stricter than libxml2, so the raw text is scanned first for what it rejects: an XML declaration, tab
 * characters, tags split across lines and single-quoted attribute values.  libxml2 then parses without
 * network access and without entity expansion; line numbers come from xmlGetLineNo.
 * Legacy files (microsoft/msccl era) that lack minBytes, maxBytes or outofplace load with a warning.
 *
 * The writer prints one element per line with two-space indentation, double quotes, every required
 * attribute and no declaration, in id order: the same program always gives the same bytes.
 */
#include "tacos/msccl.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

static const char *const type_names[TC_MS_TYPE_COUNT] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re",
                                                         "nop"};

const char *tc_msccl_type_name(tc_msccl_type t)
{
    return (unsigned)t < TC_MS_TYPE_COUNT ? type_names[t] : "?";
}

const char *tc_msccl_buf_name(int b)
{
    return b == TC_MS_BUF_I ? "i" : b == TC_MS_BUF_O ? "o" : b == TC_MS_BUF_S ? "s" : "?";
}

void tc_msccl_free(tc_msccl *m)
{
    if (!m)
        return;
    if (m->gpus)
        for (int g = 0; g < m->ngpus; g++) {
            for (int t = 0; t < m->gpus[g].n_tbs; t++)
                free(m->gpus[g].tbs[t].steps);
            free(m->gpus[g].tbs);
        }
    free(m->gpus);
    free(m->name);
    free(m);
}

void tc_msccl_limits_get(tc_msccl_target t, tc_msccl_limits *out)
{
    out->max_steps_per_tb = 64;
    out->max_tbs_per_gpu = t == TC_TARGET_RCCL ? 64 : 1024;
    out->max_channels = t == TC_TARGET_RCCL ? 128 : 32;
    out->max_depid = 127;
    out->max_cnt = 71;
}

const char *tc_msccl_target_name(tc_msccl_target t)
{
    return t == TC_TARGET_RCCL ? "RCCL" : "NCCL";
}

void tc_msccl_lower_opts_init(tc_msccl_lower_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = TC_TARGET_NCCL;
    o->proto = "Simple";
    o->inplace = 1;
}

tc_status tc_msccl_create(const char *name, tc_coll coll, int ngpus, tc_msccl **out)
{
    tc_msccl *m = calloc(1, sizeof *m);
    if (!m)
        return TC_ERR_NOMEM;
    m->name = tc_strdup(name ? name : "tacosc");
    m->gpus = calloc(ngpus > 0 ? (size_t)ngpus : 1, sizeof *m->gpus);
    if (!m->name || !m->gpus) {
        tc_msccl_free(m);
        return TC_ERR_NOMEM;
    }
    strcpy(m->proto, "Simple");
    m->coll = coll;
    m->ngpus = ngpus;
    m->nchannels = 1;
    m->inplace = 1;
    for (int g = 0; g < ngpus; g++)
        m->gpus[g].id = g;
    *out = m;
    return TC_OK;
}

tc_status tc_msccl_tb_add(tc_msccl_gpu *g, int send, int recv, int chan, tc_msccl_tb **out)
{
    if (g->n_tbs == g->cap_tbs) {
        int cap = g->cap_tbs ? 2 * g->cap_tbs : 8;
        tc_msccl_tb *p = realloc(g->tbs, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        g->tbs = p;
        g->cap_tbs = cap;
    }
    tc_msccl_tb *tb = &g->tbs[g->n_tbs];
    memset(tb, 0, sizeof *tb);
    tb->id = g->n_tbs++;
    tb->send = send;
    tb->recv = recv;
    tb->chan = chan;
    if (out)
        *out = tb;
    return TC_OK;
}

tc_status tc_msccl_step_add(tc_msccl_tb *tb, const tc_msccl_step *st)
{
    if (tb->n_steps == tb->cap_steps) {
        int cap = tb->cap_steps ? 2 * tb->cap_steps : 8;
        tc_msccl_step *p = realloc(tb->steps, (size_t)cap * sizeof *p);
        if (!p)
            return TC_ERR_NOMEM;
        tb->steps = p;
        tb->cap_steps = cap;
    }
    tb->steps[tb->n_steps] = *st;
    tb->steps[tb->n_steps].s = tb->n_steps;
    tb->n_steps++;
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Writer                                                                                            */

tc_status tc_msccl_write(tc_ctx *ctx, const tc_msccl *m, FILE *f)
{
    fprintf(f,
            "<algo name=\"%s\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"%s\" "
            "inplace=\"%d\" outofplace=\"%d\" minBytes=\"%llu\" maxBytes=\"%llu\">\n",
            m->name ? m->name : "tacosc", m->proto, m->nchannels, m->nchunksperloop, m->ngpus,
            tc_coll_name(m->coll), m->inplace ? 1 : 0, m->outofplace ? 1 : 0, (unsigned long long)m->min_bytes,
            (unsigned long long)m->max_bytes);
    for (int g = 0; g < m->ngpus; g++) {
        const tc_msccl_gpu *gp = &m->gpus[g];
        fprintf(f, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\">\n", gp->id, gp->i_chunks,
                gp->o_chunks, gp->s_chunks);
        for (int t = 0; t < gp->n_tbs; t++) {
            const tc_msccl_tb *tb = &gp->tbs[t];
            fprintf(f, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", tb->id, tb->send, tb->recv,
                    tb->chan);
            for (int k = 0; k < tb->n_steps; k++) {
                const tc_msccl_step *s = &tb->steps[k];
                fprintf(f,
                        "      <step s=\"%d\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%d\" dstbuf=\"%s\" dstoff=\"%d\" "
                        "cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
                        s->s, tc_msccl_type_name((tc_msccl_type)s->type), tc_msccl_buf_name(s->srcbuf), s->srcoff,
                        tc_msccl_buf_name(s->dstbuf), s->dstoff, s->cnt, s->depid, s->deps, s->hasdep ? 1 : 0);
            }
            fputs("    </tb>\n", f);
        }
        fputs("  </gpu>\n", f);
    }
    fputs("</algo>\n", f);
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "writing the MSCCL XML failed: %s", strerror(errno));
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Raw text rules: what the runtimes' hand-written parser rejects although libxml2 accepts it.        */

static tc_status raw_check(tc_ctx *ctx, const char *name, const char *buf, size_t len)
{
    int line = 1, col = 1;
    int in_tag = 0, in_comment = 0, tag_line = 0;
    char quote = 0;
    char tag[32] = "";
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\t')
            return tc_error(ctx, TC_ERR_PARSE, name, line,
                            "tab character at column %d: the MSCCL parser rejects tabs [tab]", col);
        if (in_comment) {
            if (c == '-' && i + 2 < len && buf[i + 1] == '-' && buf[i + 2] == '>') {
                in_comment = 0;
                i += 2;
                col += 2;
            }
        } else if (!in_tag) {
            if (c == '<') {
                if (i + 3 < len && !strncmp(buf + i, "<!--", 4)) {
                    in_comment = 1;
                    i += 3;
                    col += 3;
                } else if (i + 1 < len && buf[i + 1] == '?') {
                    return tc_error(ctx, TC_ERR_PARSE, name, line,
                                    "XML declaration or processing instruction present: the MSCCL parser "
                                    "rejects it [xml-declaration]");
                } else {
                    in_tag = 1;
                    tag_line = line;
                    size_t n = 0;
                    size_t j = i + 1;
                    if (j < len && buf[j] == '/')
                        j++;
                    while (j < len && n + 1 < sizeof tag && buf[j] != ' ' && buf[j] != '>' && buf[j] != '/' &&
                           buf[j] != '\n' && buf[j] != '\r')
                        tag[n++] = buf[j++];
                    tag[n] = 0;
                }
            }
        } else if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '"') {
            quote = c;
        } else if (c == '\'') {
            /* name the attribute: the word before the '=' */
            size_t e = i;
            while (e > 0 && (buf[e - 1] == ' ' || buf[e - 1] == '='))
                e--;
            size_t b = e;
            while (b > 0 && buf[b - 1] != ' ' && buf[b - 1] != '<' && buf[b - 1] != '\n')
                b--;
            return tc_error(ctx, TC_ERR_PARSE, name, line,
                            "attribute %.*s of <%s> uses single quotes: the MSCCL parser needs double quotes "
                            "[single-quote]",
                            (int)(e - b), buf + b, tag);
        } else if (c == '>') {
            in_tag = 0;
        } else if (c == '\n') {
            return tc_error(ctx, TC_ERR_PARSE, name, tag_line,
                            "tag <%s> continues on the next line: the MSCCL parser needs each tag on one line "
                            "[split-tag]",
                            tag);
        }
        if (c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reader                                                                                            */

typedef struct rd {
    tc_ctx *ctx;
    const char *name;
} rd;

/* Fetch attribute `attr` of `node`; NULL (after an error) when missing. */
static xmlChar *need_attr(rd *r, xmlNode *node, const char *attr, tc_status *st)
{
    xmlChar *v = xmlGetProp(node, BAD_CAST attr);
    if (!v && !*st)
        *st = tc_error(r->ctx, TC_ERR_PARSE, r->name, (int)xmlGetLineNo(node),
                       "<%s> lacks attribute %s [missing-attribute]", (const char *)node->name, attr);
    return v;
}

static int get_int(rd *r, xmlNode *node, const char *attr, tc_status *st)
{
    if (*st)
        return 0;
    xmlChar *v = need_attr(r, node, attr, st);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol((const char *)v, &end, 10);
    if (end == (char *)v || *end || errno || x < INT_MIN || x > INT_MAX)
        *st = tc_error(r->ctx, TC_ERR_PARSE, r->name, (int)xmlGetLineNo(node),
                       "attribute %s=\"%s\" of <%s> is not an integer [attribute-value]", attr, (const char *)v,
                       (const char *)node->name);
    xmlFree(v);
    return (int)x;
}

static uint64_t get_u64(rd *r, xmlNode *node, const char *attr, tc_status *st)
{
    if (*st)
        return 0;
    xmlChar *v = need_attr(r, node, attr, st);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull((const char *)v, &end, 10);
    if (end == (char *)v || *end || errno || ((const char *)v)[0] == '-')
        *st = tc_error(r->ctx, TC_ERR_PARSE, r->name, (int)xmlGetLineNo(node),
                       "attribute %s=\"%s\" of <%s> is not a byte count [attribute-value]", attr, (const char *)v,
                       (const char *)node->name);
    xmlFree(v);
    return (uint64_t)x;
}

static int get_buf(rd *r, xmlNode *node, const char *attr, tc_status *st)
{
    if (*st)
        return TC_MS_BUF_NONE;
    xmlChar *v = need_attr(r, node, attr, st);
    if (!v)
        return TC_MS_BUF_NONE;
    int b = !strcmp((const char *)v, "i") ? TC_MS_BUF_I
            : !strcmp((const char *)v, "o") ? TC_MS_BUF_O
            : !strcmp((const char *)v, "s") ? TC_MS_BUF_S
                                            : TC_MS_BUF_NONE;
    if (b == TC_MS_BUF_NONE)
        *st = tc_error(r->ctx, TC_ERR_PARSE, r->name, (int)xmlGetLineNo(node),
                       "unknown buffer %s=\"%s\" (i, o or s) [buffer]", attr, (const char *)v);
    xmlFree(v);
    return b;
}

static int is_elem(xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static tc_status unexpected(rd *r, xmlNode *n, const char *parent)
{
    return tc_error(r->ctx, TC_ERR_PARSE, r->name, (int)xmlGetLineNo(n), "unexpected element <%s> in <%s> [element]",
                    (const char *)n->name, parent);
}

static tc_status read_step(rd *r, xmlNode *n, tc_msccl_tb *tb)
{
    tc_status st = TC_OK;
    tc_msccl_step s;
    memset(&s, 0, sizeof s);
    s.line = (int)xmlGetLineNo(n);
    s.s = get_int(r, n, "s", &st);
    xmlChar *ty = st ? NULL : need_attr(r, n, "type", &st);
    if (ty) {
        s.type = -1;
        for (int t = 0; t < TC_MS_TYPE_COUNT; t++)
            if (!strcmp((const char *)ty, type_names[t]))
                s.type = t;
        if (s.type < 0)
            st = tc_error(r->ctx, TC_ERR_PARSE, r->name, s.line,
                          "unknown step type \"%s\" (s, r, rcs, rrs, rrc, rrcs, cpy, re or nop) [step-type]",
                          (const char *)ty);
        xmlFree(ty);
    }
    s.srcbuf = get_buf(r, n, "srcbuf", &st);
    s.srcoff = get_int(r, n, "srcoff", &st);
    s.dstbuf = get_buf(r, n, "dstbuf", &st);
    s.dstoff = get_int(r, n, "dstoff", &st);
    s.cnt = get_int(r, n, "cnt", &st);
    s.depid = get_int(r, n, "depid", &st);
    s.deps = get_int(r, n, "deps", &st);
    s.hasdep = get_int(r, n, "hasdep", &st);
    if (st)
        return st;
    int keep = s.s;
    if ((st = tc_msccl_step_add(tb, &s)))
        return st;
    tb->steps[tb->n_steps - 1].s = keep;
    return TC_OK;
}

static tc_status read_tb(rd *r, xmlNode *n, tc_msccl_gpu *g)
{
    tc_status st = TC_OK;
    int id = get_int(r, n, "id", &st);
    int send = get_int(r, n, "send", &st);
    int recv = get_int(r, n, "recv", &st);
    int chan = get_int(r, n, "chan", &st);
    if (st)
        return st;
    tc_msccl_tb *tb;
    if ((st = tc_msccl_tb_add(g, send, recv, chan, &tb)))
        return st;
    tb->id = id;
    tb->line = (int)xmlGetLineNo(n);
    for (xmlNode *c = n->children; c && !st; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        tc_msccl_tb *cur = &g->tbs[g->n_tbs - 1];
        st = is_elem(c, "step") ? read_step(r, c, cur) : unexpected(r, c, "tb");
    }
    return st;
}

static tc_status read_gpu(rd *r, xmlNode *n, tc_msccl *m, int *n_gpus)
{
    tc_status st = TC_OK;
    int line = (int)xmlGetLineNo(n);
    int id = get_int(r, n, "id", &st);
    int ic = get_int(r, n, "i_chunks", &st);
    int oc = get_int(r, n, "o_chunks", &st);
    int sc = get_int(r, n, "s_chunks", &st);
    if (st)
        return st;
    if (*n_gpus >= m->ngpus)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, line, "more <gpu> elements than ngpus=\"%d\" [gpu-count]",
                        m->ngpus);
    if (id != *n_gpus)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, line,
                        "<gpu id=\"%d\"> where id=\"%d\" is expected (gpu ids are 0, 1, 2, ...) [gpu-id]", id,
                        *n_gpus);
    if (ic < 0 || oc < 0 || sc < 0)
        return tc_error(r->ctx, TC_ERR_INVALID, r->name, line, "gpu %d: negative chunk count [attribute-value]", id);
    tc_msccl_gpu *g = &m->gpus[(*n_gpus)++];
    g->id = id;
    g->i_chunks = ic;
    g->o_chunks = oc;
    g->s_chunks = sc;
    g->line = line;
    for (xmlNode *c = n->children; c && !st; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        st = is_elem(c, "tb") ? read_tb(r, c, g) : unexpected(r, c, "gpu");
    }
    return st;
}

static tc_status read_algo(rd *r, xmlNode *n, tc_msccl **out)
{
    tc_status st = TC_OK;
    int line = (int)xmlGetLineNo(n);
    xmlChar *name = need_attr(r, n, "name", &st);
    xmlChar *proto = st ? NULL : need_attr(r, n, "proto", &st);
    int nch = get_int(r, n, "nchannels", &st);
    int ncpl = get_int(r, n, "nchunksperloop", &st);
    int ngpus = get_int(r, n, "ngpus", &st);
    xmlChar *coll = st ? NULL : need_attr(r, n, "coll", &st);
    int inplace = get_int(r, n, "inplace", &st);
    tc_msccl *m = NULL;
    tc_coll c = TC_COLL_ALLREDUCE;
    if (!st && (tc_coll_parse((const char *)coll, &c) || strchr((const char *)coll, '-')))
        st = tc_error(r->ctx, TC_ERR_PARSE, r->name, line,
                      "unknown collective coll=\"%s\" (allreduce, allgather, reducescatter, alltoall, reduce, "
                      "broadcast, gather or scatter) [coll]",
                      (const char *)coll);
    if (!st && strcmp((const char *)proto, "Simple") && strcmp((const char *)proto, "LL") &&
        strcmp((const char *)proto, "LL128"))
        st = tc_error(r->ctx, TC_ERR_PARSE, r->name, line, "unknown protocol proto=\"%s\" (Simple, LL or LL128) [proto]",
                      (const char *)proto);
    if (!st && (ngpus < 1 || nch < 1 || ncpl < 1))
        st = tc_error(r->ctx, TC_ERR_INVALID, r->name, line,
                      "ngpus, nchannels and nchunksperloop must be at least 1 [attribute-value]");
    if (!st)
        st = tc_msccl_create((const char *)name, c, ngpus, &m);
    if (!st) {
        snprintf(m->proto, sizeof m->proto, "%s", (const char *)proto);
        m->nchannels = nch;
        m->nchunksperloop = ncpl;
        m->inplace = inplace;
        /* attributes the old research runtime treated as optional */
        static const char *const legacy[] = {"minBytes", "maxBytes", "outofplace"};
        for (int k = 0; k < 3; k++) {
            xmlChar *v = xmlGetProp(n, BAD_CAST legacy[k]);
            if (v) {
                xmlFree(v);
                continue;
            }
            if (!m->legacy)
                tc_warn(r->ctx, r->name, line,
                        "lacks attribute %s of <algo>: msccl-executor-nccl and RCCL reject this file [legacy]",
                        legacy[k]);
            m->legacy = 1;
        }
        xmlChar *v = xmlGetProp(n, BAD_CAST "outofplace");
        if (v) {
            xmlFree(v);
            m->outofplace = get_int(r, n, "outofplace", &st);
        } else {
            m->outofplace = !m->inplace;
        }
        if ((v = xmlGetProp(n, BAD_CAST "minBytes"))) {
            xmlFree(v);
            m->min_bytes = get_u64(r, n, "minBytes", &st);
        }
        if ((v = xmlGetProp(n, BAD_CAST "maxBytes"))) {
            xmlFree(v);
            m->max_bytes = get_u64(r, n, "maxBytes", &st);
        }
    }
    xmlFree(name);
    xmlFree(proto);
    xmlFree(coll);
    int n_gpus = 0;
    for (xmlNode *k = n->children; k && !st; k = k->next) {
        if (k->type != XML_ELEMENT_NODE)
            continue;
        st = is_elem(k, "gpu") ? read_gpu(r, k, m, &n_gpus) : unexpected(r, k, "algo");
    }
    if (!st && n_gpus != m->ngpus)
        st = tc_error(r->ctx, TC_ERR_INVALID, r->name, line, "ngpus=\"%d\" but %d <gpu> elements [gpu-count]",
                      m->ngpus, n_gpus);
    if (st) {
        tc_msccl_free(m);
        return st;
    }
    *out = m;
    return TC_OK;
}

tc_status tc_msccl_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_msccl **out)
{
    rd r = {ctx, name ? name : "<memory>"};
    tc_status st = raw_check(ctx, r.name, buf, len);
    if (st)
        return st;
    if (len > INT_MAX)
        return tc_error(ctx, TC_ERR_PARSE, r.name, 0, "file too large");
    xmlParserCtxtPtr pc = xmlNewParserCtxt();
    if (!pc)
        return TC_ERR_NOMEM;
    xmlDocPtr doc = xmlCtxtReadMemory(pc, buf, (int)len, r.name, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    tc_msccl *m = NULL;
    if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(pc);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", e && e->message ? e->message : "malformed XML");
        size_t n = strlen(msg);
        while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            msg[--n] = 0;
        st = tc_error(ctx, TC_ERR_PARSE, r.name, e ? e->line : 0, "%s [xml]", msg);
        goto fail;
    }
    if (doc->intSubset || doc->extSubset) {
        st = tc_error(ctx, TC_ERR_PARSE, r.name, 1, "DOCTYPE present: the MSCCL parser rejects it [doctype]");
        goto fail;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !is_elem(root, "algo")) {
        st = tc_error(ctx, TC_ERR_PARSE, r.name, root ? (int)xmlGetLineNo(root) : 0,
                      "the root element must be <algo> [element]");
        goto fail;
    }
    if ((st = read_algo(&r, root, &m)))
        goto fail;
    if ((st = tc_msccl_check_structure(ctx, m, r.name)))
        goto fail;
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(pc);
    *out = m;
    return TC_OK;
fail:
    tc_msccl_free(m);
    if (doc)
        xmlFreeDoc(doc);
    xmlFreeParserCtxt(pc);
    return st;
}

tc_status tc_msccl_read(tc_ctx *ctx, const char *path, tc_msccl **out)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file(ctx, path, &buf, &len);
    if (st)
        return st;
    st = tc_msccl_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}
