/*
 * Topology XML reader and writer (man 5 tacosc-topology), with libxml2.
 *
 * Accepts: a document whose root is <topology name npus> with <class>, <link>, <switch>, <nodes>, <npu>
 * and <photonic> children.  Parsing never touches the network (XML_PARSE_NONET), loads no DTD, expands no
 * entities, and refuses any <!DOCTYPE>.  The document is validated against the embedded schema
 * (src/topo/topology.xsd), then against the semantic rules: NPU ranges, self links, duplicate links
 * (unless parallel="1"), units, positive bandwidths, switch ports, node ids, an empty topology, and
 * connectivity (every NPU reaches every other through links and switches).
 * Returns: an indexed tc_topo; every diagnostic is `file:line: error: ...` with libxml2's line numbers.
 * Classes: a link may name a class that no <class> element defines; tc_topo_apply_costs() then requires a
 * cost file to define it (so the reader does not reject it).
 * Cost: O(m log m) for m links (the duplicate check sorts); 100,000 NPUs load in a fraction of a second.
 * Writer: deterministic; consecutive opposite links with the same class and overrides are written as one
 * duplex link, repeated (src, dst) pairs get parallel="1", so write(read(write(t))) == write(t).
 * Trace: `<link src="0" dst="1" duplex="1"/>` on line 3 -> link 0 (0->1) and link 1 (1->0), both with
 * line 3 and class "default"; a later `<link src="1" dst="0"/>` on line 4 -> "file:4: error: link 1->0:
 * duplicate link (first on line 3); add parallel="1" for a parallel link".
 */
#include "topo_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>

#define MAX_NPUS 10000000

/* First structured error seen while parsing or validating. */
typedef struct xml_err {
    int have;
    int doctype; /* the error is the refused <!DOCTYPE> */
    int line;
    char msg[512];
} xml_err;

static void keep_error(xml_err *e, const xmlError *err)
{
    if (e->have || !err || err->level == XML_ERR_WARNING)
        return;
    e->have = 1;
    e->line = err->line;
    snprintf(e->msg, sizeof e->msg, "%s", err->message ? err->message : "unknown error");
    size_t n = strlen(e->msg);
    while (n && (e->msg[n - 1] == '\n' || e->msg[n - 1] == ' '))
        e->msg[--n] = 0;
}

static void parse_serror(void *user, xmlErrorPtr err)
{
    xmlParserCtxtPtr pc = user;
    keep_error(pc->_private, err);
}

static void schema_serror(void *user, xmlErrorPtr err) { keep_error(user, err); }

static void refuse_doctype(void *user, const xmlChar *name, const xmlChar *ext, const xmlChar *sys)
{
    xmlParserCtxtPtr pc = user;
    xml_err *e = pc->_private;
    if (!e->have) {
        e->have = 1;
        e->line = pc->input ? pc->input->line : 0;
        e->doctype = 1;
        snprintf(e->msg, sizeof e->msg, "<!DOCTYPE> is not allowed in a topology file");
    }
    xmlStopParser(pc);
}

/* ---------------------------------------------------------------------------------------------- */
/* Reader                                                                                         */

typedef struct reader {
    tc_ctx *ctx;
    const char *file;
    tc_topo *t;
    unsigned char *parallel; /* per link: marked parallel="1" */
    int cap_par;
    int *class_line;         /* per class: line of its inline <class>, 0 if none */
    int cap_cl;
    int nodes_line, photonic_line;
    int *npu_node_line;      /* per NPU: line of its <npu>, 0 if none */
    char **up_name;          /* per switch: its up="..." until the names resolve (after every element) */
    int cap_up;
} reader;

/* Element line from xmlGetLineNo.  Past line 65535 libxml2 (XML_PARSE_BIG_LINES) stores exact numbers only
 * on text nodes, stamped with the line where the text ends; so take the whitespace text right after the
 * start tag (first child) or after the element (next sibling) and subtract its newlines.  This is why
 * blank text is kept (no XML_PARSE_NOBLANKS). */
static long line_of(xmlNode *n)
{
    if (n->line < 65535)
        return xmlGetLineNo(n);
    xmlNode *x = n->children ? n->children : n->next;
    if (x && x->type == XML_TEXT_NODE && x->content) {
        long l = xmlGetLineNo(x);
        for (const xmlChar *c = x->content; *c; c++)
            l -= *c == '\n';
        if (l >= 65535)
            return l;
    }
    return xmlGetLineNo(n);
}

static char *get(xmlNode *n, const char *name) { return (char *)xmlGetNoNsProp(n, (const xmlChar *)name); }

/* Parse a non-negative decimal integer the schema already accepted; -1 when it does not fit an int. */
static long long to_int(const char *s)
{
    if (!s)
        return -1;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s == '+')
        s++;
    long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return -1;
    }
    return v;
}

static int to_bool(const char *s)
{
    return s && (strcmp(s, "1") == 0 || strcmp(s, "true") == 0);
}

static tc_status err(reader *r, tc_status st, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tc_status err(reader *r, tc_status st, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(r->ctx, TC_DIAG_ERROR, r->file, (int)line, 0, fmt, ap);
    va_end(ap);
    return st;
}

static tc_status nomem(reader *r) { return err(r, TC_ERR_NOMEM, 0, "out of memory reading topology"); }

static tc_status grow_par(reader *r)
{
    if (r->t->n_links + 2 <= r->cap_par)
        return TC_OK;
    int cap = r->cap_par ? 2 * r->cap_par : 64;
    while (cap < r->t->n_links + 2)
        cap *= 2;
    unsigned char *p = realloc(r->parallel, (size_t)cap);
    if (!p)
        return TC_ERR_NOMEM;
    r->parallel = p;
    r->cap_par = cap;
    return TC_OK;
}

static tc_status class_line_grow(reader *r)
{
    if (r->t->n_classes <= r->cap_cl)
        return TC_OK;
    int cap = r->t->n_classes * 2;
    int *p = realloc(r->class_line, (size_t)cap * sizeof *p);
    if (!p)
        return TC_ERR_NOMEM;
    for (int i = r->cap_cl; i < cap; i++)
        p[i] = 0;
    r->class_line = p;
    r->cap_cl = cap;
    return TC_OK;
}

static tc_status use_class(reader *r, const char *name, int *cls)
{
    if (tc_topo_class_get(r->t, name ? name : "default", cls) != TC_OK || class_line_grow(r) != TC_OK)
        return nomem(r);
    return TC_OK;
}

static tc_status read_class(reader *r, xmlNode *n)
{
    tc_status st = TC_OK;
    long line = line_of(n);
    char *name = get(n, "name"), *a = get(n, "alpha"), *b = get(n, "bandwidth");
    char why[256];
    double alpha, bw;
    int cls;
    if ((st = use_class(r, name, &cls)) != TC_OK)
        goto done;
    if (r->class_line[cls]) {
        st = err(r, TC_ERR_INVALID, line, "class '%s' defined twice (first on line %d)", name, r->class_line[cls]);
        goto done;
    }
    if (tc_topo_parse_time_why(a, &alpha, why, sizeof why) != TC_OK) {
        st = err(r, TC_ERR_INVALID, line, "class '%s': bad alpha: %s", name, why);
        goto done;
    }
    if (alpha < 0) {
        st = err(r, TC_ERR_INVALID, line, "class '%s': alpha must not be negative, got '%s'", name, a);
        goto done;
    }
    if (tc_topo_parse_bw_why(b, &bw, why, sizeof why) != TC_OK) {
        st = err(r, TC_ERR_INVALID, line, "class '%s': bad bandwidth: %s", name, why);
        goto done;
    }
    if (!(bw > 0)) {
        st = err(r, TC_ERR_INVALID, line, "class '%s': bandwidth must be positive, got '%s'", name, b);
        goto done;
    }
    r->class_line[cls] = (int)line;
    r->t->classes[cls].alpha = alpha;
    r->t->classes[cls].beta = 1.0 / bw;
    r->t->classes[cls].defined = 1;
    r->t->classes[cls].line = (int)line;
done:
    xmlFree(name);
    xmlFree(a);
    xmlFree(b);
    return st;
}

static tc_status read_link(reader *r, xmlNode *n)
{
    tc_status st = TC_OK;
    long line = line_of(n);
    char *s = get(n, "src"), *d = get(n, "dst"), *cl = get(n, "class"), *a = get(n, "alpha"),
         *b = get(n, "bandwidth"), *dx = get(n, "duplex"), *par = get(n, "parallel");
    long long src = to_int(s), dst = to_int(d);
    int nn = r->t->n_npus, cls;
    double alpha = -1, beta = -1, v;
    char why[256];
    /* the schema guarantees digits; -1 here means "larger than an int" */
    if (src < 0 || src >= nn) {
        st = err(r, TC_ERR_INVALID, line, "link %s->%s: npu %s out of range (topology has %d npus)", s, d, s, nn);
        goto done;
    }
    if (dst < 0 || dst >= nn) {
        st = err(r, TC_ERR_INVALID, line, "link %s->%s: npu %s out of range (topology has %d npus)", s, d, d, nn);
        goto done;
    }
    if (src == dst) {
        st = err(r, TC_ERR_INVALID, line, "link %lld->%lld: self link", src, dst);
        goto done;
    }
    if (a) {
        if (tc_topo_parse_time_why(a, &v, why, sizeof why) != TC_OK) {
            st = err(r, TC_ERR_INVALID, line, "link %lld->%lld: bad alpha: %s", src, dst, why);
            goto done;
        }
        if (v < 0) {
            st = err(r, TC_ERR_INVALID, line, "link %lld->%lld: alpha must not be negative, got '%s'", src, dst, a);
            goto done;
        }
        alpha = v;
    }
    if (b) {
        if (tc_topo_parse_bw_why(b, &v, why, sizeof why) != TC_OK) {
            st = err(r, TC_ERR_INVALID, line, "link %lld->%lld: bad bandwidth: %s", src, dst, why);
            goto done;
        }
        if (!(v > 0)) {
            st = err(r, TC_ERR_INVALID, line, "link %lld->%lld: bandwidth must be positive, got '%s'", src, dst, b);
            goto done;
        }
        beta = 1.0 / v;
    }
    if ((st = use_class(r, cl, &cls)) != TC_OK)
        goto done;
    int dup = to_bool(dx), p = to_bool(par);
    if (grow_par(r) != TC_OK) {
        st = nomem(r);
        goto done;
    }
    for (int k = 0; k <= dup; k++) {
        int x = (int)(k ? dst : src), y = (int)(k ? src : dst);
        r->parallel[r->t->n_links] = (unsigned char)p;
        if (tc_topo_add_link(r->t, x, y, cls, alpha, beta, (int)line) != TC_OK) {
            st = nomem(r);
            goto done;
        }
    }
done:
    xmlFree(s);
    xmlFree(d);
    xmlFree(cl);
    xmlFree(a);
    xmlFree(b);
    xmlFree(dx);
    xmlFree(par);
    return st;
}

static tc_status add_port(reader *r, const char *sw, int **ports, int *np, int *cap, long long v, const char *txt,
                          long line)
{
    if (v < 0 || v >= r->t->n_npus)
        return err(r, TC_ERR_INVALID, line, "switch '%s': npu %s out of range (topology has %d npus)", sw, txt,
                   r->t->n_npus);
    if (*np == *cap) {
        int c = *cap ? 2 * *cap : 8;
        int *p = realloc(*ports, (size_t)c * sizeof *p);
        if (!p)
            return nomem(r);
        *ports = p;
        *cap = c;
    }
    (*ports)[(*np)++] = (int)v;
    return TC_OK;
}

/* <switch> and <nic> (is_nic): both become a tc_switch; up="..." is resolved by resolve_up once every
 * element is read, so a switch may hang from one declared after it. */
static tc_status read_switch(reader *r, xmlNode *n, int is_nic)
{
    tc_status st = TC_OK;
    long line = line_of(n);
    const char *what = is_nic ? "nic" : "switch";
    char *name = get(n, "name"), *cl = get(n, "class"), *uw = get(n, "unwind"), *list = get(n, "npus");
    char *model = get(n, "model"), *up = get(n, "up"), *upcl = get(n, "upclass"), *gdr = get(n, "gdr");
    char *path = get(n, "path");
    int *ports = NULL, np = 0, cap = 0, cls, *sorted = NULL;
    for (int i = 0; i < r->t->n_switches; i++)
        if (strcmp(r->t->switches[i].name, name) == 0) {
            st = err(r, TC_ERR_INVALID, line, "%s '%s' defined twice (first on line %d%s)", what, name,
                     r->t->switches[i].line, r->t->switches[i].nic == is_nic ? "" : r->t->switches[i].nic
                                                                                ? ", a nic" : ", a switch");
            goto done;
        }
    if (list) {
        char *p = list;
        while (*p) {
            while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
            if (!*p)
                break;
            char *q = p;
            while (*q && !(*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
                q++;
            char save = *q;
            *q = 0;
            st = add_port(r, name, &ports, &np, &cap, to_int(p), p, line);
            *q = save;
            if (st != TC_OK)
                goto done;
            p = q;
        }
    }
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        char *v = get(c, "npu");
        st = add_port(r, name, &ports, &np, &cap, to_int(v), v, line_of(c));
        xmlFree(v);
        if (st != TC_OK)
            goto done;
    }
    if (is_nic && np < 1) {
        st = err(r, TC_ERR_INVALID, line, "nic '%s': needs at least 1 npu", name);
        goto done;
    }
    if (!is_nic && np < 2 && (!model || strcmp(model, "unwind") == 0)) {
        /* a vertex switch may have fewer npus when the tree (up=, switches hanging from it) joins it:
           resolve_up counts those ports */
        st = err(r, TC_ERR_INVALID, line, "switch '%s': needs at least 2 npus, has %d", name, np);
        goto done;
    }
    if (up && !upcl) {
        st = err(r, TC_ERR_INVALID, line, "%s '%s': up=\"%s\" needs upclass=\"...\" (the class of the link to it)",
                 what, name, up);
        goto done;
    }
    sorted = malloc((size_t)(np > 0 ? np : 1) * sizeof *sorted);
    if (!sorted) {
        st = nomem(r);
        goto done;
    }
    if (np > 0)
        memcpy(sorted, ports, (size_t)np * sizeof *sorted);
    qsort(sorted, (size_t)np, sizeof *sorted, tc_cmp_int);
    for (int i = 1; i < np; i++)
        if (sorted[i] == sorted[i - 1]) {
            st = err(r, TC_ERR_INVALID, line, "%s '%s': npu %d attached twice", what, name, sorted[i]);
            goto done;
        }
    long long d = uw ? to_int(uw) : 0;
    if (uw && (d < 1 || d > np - 1)) {
        st = err(r, TC_ERR_INVALID, line, "switch '%s': unwind %s out of range (1 to %d for %d npus)", name, uw,
                 np - 1, np);
        goto done;
    }
    if ((st = use_class(r, cl, &cls)) != TC_OK)
        goto done;
    tc_switch_model m = TC_SWITCH_UNWIND;
    if (model && tc_switch_model_parse(model, &m) != TC_OK) { /* the schema lets nothing else through */
        st = err(r, TC_ERR_INVALID, line, "switch '%s': model '%s' is not unwind, node or multicast", name, model);
        goto done;
    }
    int ucls = -1;
    if (upcl && (st = use_class(r, upcl, &ucls)) != TC_OK)
        goto done;
    if (r->t->n_switches + 1 > r->cap_up) {
        int c = r->cap_up ? 2 * r->cap_up : 16;
        char **p = realloc(r->up_name, (size_t)c * sizeof *p);
        if (!p) {
            st = nomem(r);
            goto done;
        }
        for (int i = r->cap_up; i < c; i++)
            p[i] = NULL;
        r->up_name = p;
        r->cap_up = c;
    }
    if (tc_topo_add_switch(r->t, name, ports, np, cls, (int)d, (int)line) != TC_OK) {
        st = nomem(r);
        goto done;
    }
    tc_switch *sw = &r->t->switches[r->t->n_switches - 1];
    sw->model = is_nic ? TC_SWITCH_NODE : (int)m;
    sw->nic = is_nic;
    sw->up_cls = ucls;
    sw->gdr = gdr ? to_bool(gdr) : -1;
    if (path)
        snprintf(sw->path, sizeof sw->path, "%s", path);
    if (up && !(r->up_name[r->t->n_switches - 1] = tc_strdup(up)))
        st = nomem(r);
done:
    free(ports);
    free(sorted);
    xmlFree(name);
    xmlFree(cl);
    xmlFree(uw);
    xmlFree(list);
    xmlFree(model);
    xmlFree(up);
    xmlFree(upcl);
    xmlFree(gdr);
    xmlFree(path);
    return st;
}

/* Resolve every up="NAME" once all elements are read: a switch (not a NIC, not itself), no loop, both ends
 * vertices, and every vertex switch with at least 2 ports counting its tree edges. */
static tc_status resolve_up(reader *r)
{
    tc_topo *t = r->t;
    for (int s = 0; s < t->n_switches; s++) {
        tc_switch *sw = &t->switches[s];
        const char *what = sw->nic ? "nic" : "switch";
        const char *u = s < r->cap_up ? r->up_name[s] : NULL;
        if (!u)
            continue;
        int k = 0;
        while (k < t->n_switches && strcmp(t->switches[k].name, u) != 0)
            k++;
        if (k == t->n_switches)
            return err(r, TC_ERR_INVALID, sw->line, "%s '%s': up=\"%s\" names no switch of this topology", what,
                       sw->name, u);
        if (k == s)
            return err(r, TC_ERR_INVALID, sw->line, "%s '%s': up=\"%s\" names itself", what, sw->name, u);
        if (t->switches[k].nic)
            return err(r, TC_ERR_INVALID, sw->line, "%s '%s': up=\"%s\" names a nic (a nic hangs from a switch, "
                       "nothing hangs from a nic)", what, sw->name, u);
        if (t->switches[k].model == TC_SWITCH_UNWIND)
            return err(r, TC_ERR_INVALID, sw->line, "%s '%s': up=\"%s\" names a switch that is unwound; give it "
                       "model=\"node\" or \"multicast\" (a vertex)", what, sw->name, u);
        if (!sw->nic && sw->model == TC_SWITCH_UNWIND)
            return err(r, TC_ERR_INVALID, sw->line, "switch '%s': a switch with up= must be a vertex; give it "
                       "model=\"node\" or \"multicast\"", sw->name);
        sw->up = k;
    }
    for (int s = 0; s < t->n_switches; s++) { /* loops: an up chain longer than the switches */
        int k = s, steps = 0;
        while (k >= 0 && steps <= t->n_switches) {
            k = t->switches[k].up;
            steps++;
        }
        if (k >= 0)
            return err(r, TC_ERR_INVALID, t->switches[s].line, "switch '%s': its up= chain loops back to itself",
                       t->switches[s].name);
    }
    for (int s = 0; s < t->n_switches; s++) {
        const tc_switch *sw = &t->switches[s];
        int ports = sw->n_ports + (sw->up >= 0);
        for (int c = 0; c < t->n_switches; c++)
            ports += t->switches[c].up == s;
        if (!sw->nic && ports < 2)
            return err(r, TC_ERR_INVALID, sw->line, "switch '%s': needs at least 2 ports (npus, up= and switches "
                       "hanging from it), has %d", sw->name, ports);
    }
    return TC_OK;
}

static tc_status need_node_of(reader *r)
{
    if (r->t->node_of)
        return TC_OK;
    size_t n = (size_t)(r->t->n_npus > 0 ? r->t->n_npus : 1);
    r->t->node_of = malloc(n * sizeof *r->t->node_of);
    r->npu_node_line = calloc(n, sizeof *r->npu_node_line);
    if (!r->t->node_of || !r->npu_node_line)
        return nomem(r);
    for (int i = 0; i < r->t->n_npus; i++)
        r->t->node_of[i] = -1;
    return TC_OK;
}

static tc_status read_nodes(reader *r, xmlNode *n)
{
    long line = line_of(n);
    char *s = get(n, "size");
    long long k = to_int(s);
    tc_status st = TC_OK;
    if (r->nodes_line) {
        st = err(r, TC_ERR_INVALID, line, "<nodes> given twice (first on line %d)", r->nodes_line);
        goto done;
    }
    if (k < 1 || r->t->n_npus % k != 0) {
        st = err(r, TC_ERR_INVALID, line, "nodes size %s does not divide the %d npus", s, r->t->n_npus);
        goto done;
    }
    r->nodes_line = (int)line;
    if ((st = need_node_of(r)) != TC_OK)
        goto done;
    for (int i = 0; i < r->t->n_npus; i++)
        r->t->node_of[i] = (int)(i / k);
done:
    xmlFree(s);
    return st;
}

static tc_status read_npu(reader *r, xmlNode *n)
{
    long line = line_of(n);
    char *s = get(n, "id"), *nd = get(n, "node");
    long long id = to_int(s), node = to_int(nd);
    tc_status st = TC_OK;
    if (id < 0 || id >= r->t->n_npus) {
        st = err(r, TC_ERR_INVALID, line, "npu %s out of range (topology has %d npus)", s, r->t->n_npus);
        goto done;
    }
    if (node < 0 || node >= r->t->n_npus) {
        st = err(r, TC_ERR_INVALID, line, "npu %lld: node %s out of range (at most one node per npu: 0 to %d)", id,
                 nd, r->t->n_npus - 1);
        goto done;
    }
    if ((st = need_node_of(r)) != TC_OK)
        goto done;
    if (r->npu_node_line[id]) {
        st = err(r, TC_ERR_INVALID, line, "npu %lld: node given twice (first on line %d)", id, r->npu_node_line[id]);
        goto done;
    }
    r->npu_node_line[id] = (int)line;
    r->t->node_of[id] = (int)node;
done:
    xmlFree(s);
    xmlFree(nd);
    return st;
}

/* "RxC" with both at least 1 (the schema checked the shape); 0 on success. */
static int read_rxc(const char *v, int *rows, int *cols)
{
    const char *x = strchr(v, 'x');
    long long a = to_int(v), b = x ? to_int(x + 1) : -1;
    if (a < 1 || b < 1)
        return -1;
    *rows = (int)a;
    *cols = (int)b;
    return 0;
}

/* <photonic>: each number on its own (ranges); what depends on the servers is checked_photonic's. */
static tc_status read_photonic(reader *r, xmlNode *n)
{
    long line = line_of(n);
    tc_photonic *ph = &r->t->photonic;
    tc_status st = TC_OK;
    char *rc = get(n, "reconfig"), *tx = get(n, "tx"), *rx = get(n, "rx"), *wl = get(n, "wavelengths"),
         *mzi = get(n, "mzi"), *tiles = get(n, "tiles"), *grid = get(n, "grid"), *fib = get(n, "fibers");
    char why[256];
    if (r->photonic_line) {
        st = err(r, TC_ERR_INVALID, line, "<photonic> given twice (first on line %d)", r->photonic_line);
        goto done;
    }
    r->photonic_line = (int)line;
    ph->present = 1;
    ph->line = (int)line;
    if (rc) {
        if (tc_topo_parse_time_why(rc, &ph->reconfig_delay, why, sizeof why) != TC_OK) {
            st = err(r, TC_ERR_INVALID, line, "photonic: bad reconfig: %s", why);
            goto done;
        }
        if (ph->reconfig_delay < 0) {
            st = err(r, TC_ERR_INVALID, line, "photonic: reconfig must not be negative, got '%s'", rc);
            goto done;
        }
        ph->reconfig_set = 1;
    }
    /* name, value, destination, smallest and largest value that makes sense */
    const struct {
        const char *name;
        char *val;
        int *dst;
        int lo, hi;
        const char *why_lo;
    } nums[] = {
        {"tx", tx, &ph->tx_per_npu, 1, INT_MAX, "an npu needs at least one transmitter"},
        {"rx", rx, &ph->rx_per_npu, 1, INT_MAX, "an npu needs at least one receiver"},
        {"wavelengths", wl, &ph->wavelengths, 1, TC_TOPO_MAX_WAVELENGTHS, "a waveguide carries at least one"},
        {"mzi", mzi, &ph->mzi_size, 1, TC_TOPO_MAX_MZI, "a mesh has at least one MZI"},
        {"fibers", fib, &ph->fibers, 0, INT_MAX, ""},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (!nums[i].val)
            continue;
        long long v = to_int(nums[i].val);
        if (v < 0) {
            st = err(r, TC_ERR_INVALID, line, "photonic: %s=\"%s\" too large", nums[i].name, nums[i].val);
            goto done;
        }
        if (v < nums[i].lo) {
            st = err(r, TC_ERR_INVALID, line, "photonic: %s=\"%s\": %s", nums[i].name, nums[i].val, nums[i].why_lo);
            goto done;
        }
        if (v > nums[i].hi) {
            st = err(r, TC_ERR_INVALID, line, "photonic: %s=\"%s\" exceeds %d, the most tacosc models", nums[i].name,
                     nums[i].val, nums[i].hi);
            goto done;
        }
        *nums[i].dst = (int)v;
    }
    if (fib && ph->fibers == 0)
        ph->fibers = -1; /* given as 0: checked against the grid in check_photonic */
    if (grid && read_rxc(grid, &ph->grid_rows, &ph->grid_cols)) {
        st = err(r, TC_ERR_INVALID, line, "photonic: bad grid '%s' (expected ROWSxCOLS, both at least 1)", grid);
        goto done;
    }
    if (tiles && read_rxc(tiles, &ph->tile_rows, &ph->tile_cols)) {
        st = err(r, TC_ERR_INVALID, line, "photonic: bad tiles '%s' (expected ROWSxCOLS, both at least 1)", tiles);
        goto done;
    }
done:
    xmlFree(rc);
    xmlFree(tx);
    xmlFree(rx);
    xmlFree(wl);
    xmlFree(mzi);
    xmlFree(tiles);
    xmlFree(grid);
    xmlFree(fib);
    return st;
}

/*
 * <photonic> against the rest of the topology (nodes known): the grid holds the servers, the tiles hold a
 * server's NPUs, the mesh holds the tiles and the fibers, the fibers connect the grid.
 */
static tc_status check_photonic(reader *r)
{
    tc_topo *t = r->t;
    tc_photonic *ph = &t->photonic;
    const long line = r->photonic_line;
    if (!ph->present)
        return TC_OK;
    int servers = t->node_of ? t->n_nodes : 1;
    if (ph->grid_rows > 0) {
        long long cells = (long long)ph->grid_rows * ph->grid_cols;
        if (t->node_of && cells != servers)
            return err(r, TC_ERR_INVALID, line,
                       "photonic: grid=\"%dx%d\" holds %lld servers but the topology has %d nodes", ph->grid_rows,
                       ph->grid_cols, cells, servers);
        if (!t->node_of && (cells > t->n_npus || t->n_npus % cells != 0))
            return err(r, TC_ERR_INVALID, line,
                       "photonic: grid=\"%dx%d\" cannot share %d npus evenly among %lld servers (give <nodes> or "
                       "<npu node>)",
                       ph->grid_rows, ph->grid_cols, t->n_npus, cells);
        servers = (int)cells;
    }
    /* the most NPUs on one server */
    int most = servers > 0 ? (t->n_npus + servers - 1) / servers : t->n_npus;
    if (t->node_of) {
        int *count = calloc((size_t)(t->n_nodes > 0 ? t->n_nodes : 1), sizeof *count);
        if (!count)
            return nomem(r);
        most = 0;
        for (int i = 0; i < t->n_npus; i++)
            if (++count[t->node_of[i]] > most)
                most = count[t->node_of[i]];
        free(count);
    }
    if (ph->tile_rows > 0 && (long long)ph->tile_rows * ph->tile_cols < most)
        return err(r, TC_ERR_INVALID, line, "photonic: tiles=\"%dx%d\" has %lld tiles for %d npus on a server",
                   ph->tile_rows, ph->tile_cols, (long long)ph->tile_rows * ph->tile_cols, most);
    if (ph->mzi_size > 0) {
        int tr = ph->tile_rows, tc = ph->tile_cols;
        if (tr == 0)
            tc_topo_photonic_tiles(most, &tr, &tc);
        if (ph->mzi_size < tr || ph->mzi_size < tc)
            return err(r, TC_ERR_INVALID, line,
                       "photonic: mzi=\"%d\" is too small for %d npus per server on %dx%d tiles (at least %d)",
                       ph->mzi_size, most, tr, tc, tr > tc ? tr : tc);
        if ((long long)ph->mzi_size * ph->mzi_size * servers > TC_TOPO_MAX_MZIS)
            return err(r, TC_ERR_INVALID, line,
                       "photonic: %d servers of mzi=\"%d\" make %lld MZIs, more than the %d tacosc models", servers,
                       ph->mzi_size, (long long)ph->mzi_size * ph->mzi_size * servers, TC_TOPO_MAX_MZIS);
        if (ph->fibers > ph->mzi_size)
            return err(r, TC_ERR_INVALID, line,
                       "photonic: fibers=\"%d\" exceed the %d MZIs on a side of a server's mesh (mzi=\"%d\")",
                       ph->fibers, ph->mzi_size, ph->mzi_size);
    }
    if (ph->fibers < 0) {
        if (servers > 1)
            return err(r, TC_ERR_INVALID, line,
                       "photonic: fibers=\"0\" leaves the %d servers disconnected (at least 1 between grid neighbours)",
                       servers);
        ph->fibers = 0;
    }
    return TC_OK;
}

/* Sort link ids by (src, dst, id); the links array is the qsort_r context. */
static int cmp_link(const void *a, const void *b, void *ctx)
{
    const tc_link *links = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    const tc_link *x = &links[i], *y = &links[j];
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (i > j) - (i < j);
}

/* ids sorted by (src, dst, id); repeat[i] = 1 when an earlier link has the same (src, dst), first[i] the
 * id of the earliest such link. */
static int *sorted_pairs(const tc_topo *t, unsigned char *repeat, int **first_of)
{
    int m = t->n_links;
    int *ids = malloc((size_t)(m > 0 ? m : 1) * sizeof *ids);
    int *first = malloc((size_t)(m > 0 ? m : 1) * sizeof *first);
    if (!ids || !first) {
        free(ids);
        free(first);
        return NULL;
    }
    for (int i = 0; i < m; i++)
        ids[i] = i;
    qsort_r(ids, (size_t)m, sizeof *ids, cmp_link, (void *)t->links);
    for (int k = 0; k < m; k++) {
        int i = ids[k];
        int same = k > 0 && t->links[ids[k - 1]].src == t->links[i].src && t->links[ids[k - 1]].dst == t->links[i].dst;
        repeat[i] = (unsigned char)same;
        first[i] = same ? first[ids[k - 1]] : i;
    }
    *first_of = first;
    return ids;
}

static tc_status check_semantics(reader *r, long root_line)
{
    tc_topo *t = r->t;
    tc_status st = TC_OK;
    if (t->n_npus > 1 && t->n_links == 0 && t->n_switches == 0)
        return err(r, TC_ERR_INVALID, root_line, "empty topology: %d npus but no links or switches", t->n_npus);
    /* duplicate links: report the first offending link in file order */
    unsigned char *repeat = malloc((size_t)(t->n_links > 0 ? t->n_links : 1));
    int *first = NULL, *ids = NULL;
    if (!repeat)
        return nomem(r);
    ids = sorted_pairs(t, repeat, &first);
    if (!ids) {
        free(repeat);
        return nomem(r);
    }
    for (int i = 0; i < t->n_links; i++)
        if (repeat[i] && !r->parallel[i]) {
            const tc_link *l = &t->links[i];
            st = err(r, TC_ERR_INVALID, l->line,
                     "link %d->%d: duplicate link (first on line %d); add parallel=\"1\" for a parallel link", l->src,
                     l->dst, t->links[first[i]].line);
            break;
        }
    free(repeat);
    free(first);
    free(ids);
    if (st != TC_OK)
        return st;
    /* node ids: all or none */
    if (t->node_of) {
        if (r->nodes_line) {
            for (int i = 0; i < t->n_npus; i++)
                if (r->npu_node_line[i])
                    return err(r, TC_ERR_INVALID, r->npu_node_line[i],
                               "npu %d: <npu node=...> cannot be combined with <nodes size=...> (line %d)", i,
                               r->nodes_line);
        } else {
            for (int i = 0; i < t->n_npus; i++)
                if (t->node_of[i] < 0)
                    return err(r, TC_ERR_INVALID, root_line,
                               "npu %d has no node id (give every npu one when any <npu node=...> is present)", i);
        }
        int max = -1;
        for (int i = 0; i < t->n_npus; i++)
            if (t->node_of[i] > max)
                max = t->node_of[i];
        t->n_nodes = max + 1;
    }
    int from, to;
    if (!tc_topo_connected(t, &from, &to))
        return err(r, TC_ERR_INVALID, root_line, "disconnected topology: npu %d cannot reach npu %d", from, to);
    return TC_OK;
}

static tc_status validate(tc_ctx *ctx, const char *name, xmlDocPtr doc)
{
    size_t len;
    const char *xsd = tc_topo_schema_text(&len);
    xml_err e = {0};
    tc_status st = TC_OK;
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewMemParserCtxt(xsd, (int)len);
    xmlSchemaPtr schema = NULL;
    xmlSchemaValidCtxtPtr vc = NULL;
    if (!pc) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory loading the topology schema");
        goto done;
    }
    xmlSchemaSetParserStructuredErrors(pc, schema_serror, &e);
    schema = xmlSchemaParse(pc);
    if (!schema) {
        st = tc_error(ctx, TC_ERR_INTERNAL, name, 0, "internal error: embedded topology schema does not load: %s",
                      e.have ? e.msg : "unknown");
        goto done;
    }
    vc = xmlSchemaNewValidCtxt(schema);
    if (!vc) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory validating topology");
        goto done;
    }
    xmlSchemaSetValidStructuredErrors(vc, schema_serror, &e);
    int rc = xmlSchemaValidateDoc(vc, doc);
    if (rc != 0) {
        if (e.have)
            st = tc_error(ctx, TC_ERR_INVALID, name, e.line, "schema: %s", e.msg);
        else
            st = tc_error(ctx, TC_ERR_INVALID, name, 0, "schema validation failed");
    }
done:
    xmlSchemaFreeValidCtxt(vc);
    xmlSchemaFree(schema);
    xmlSchemaFreeParserCtxt(pc);
    return st;
}

/* The most attributes an element of a topology may have: tacosc's elements have at most a dozen.  libxml2
 * checks each attribute against all earlier ones of its element (quadratic: 50,000 attributes took 70 s
 * before the schema refused them), so the count is bounded by a lexical scan before parsing. */
#define MAX_ATTRS 64

/* Zero, or the line of the first start tag with more than MAX_ATTRS attributes (an '=' outside quotes
 * counts one); comments, declarations and processing instructions are skipped. */
static int too_many_attrs(const char *b, size_t len)
{
    int line = 1;
    for (size_t i = 0; i < len; i++) {
        if (b[i] == '\n')
            line++;
        if (b[i] != '<' || i + 1 >= len)
            continue;
        if (b[i + 1] == '!' || b[i + 1] == '?') { /* <!-- -->, <![CDATA[ ]]>, <!DOCTYPE>, <?pi?> */
            const char *end = len - i >= 4 && !memcmp(b + i, "<!--", 4)        ? "-->"
                              : len - i >= 9 && !memcmp(b + i, "<![CDATA[", 9) ? "]]>"
                                                                                : ">";
            size_t el = strlen(end), j = i + 2;
            while (j + el <= len && memcmp(b + j, end, el))
                line += b[j++] == '\n';
            i = j + el - 1;
            continue;
        }
        int tag_line = line, n = 0;
        char q = 0;
        size_t j = i + 1;
        for (; j < len && (q || b[j] != '>'); j++) {
            line += b[j] == '\n';
            if (q)
                q = b[j] == q ? 0 : q;
            else if (b[j] == '"' || b[j] == '\'')
                q = b[j];
            else if (b[j] == '=' && ++n > MAX_ATTRS)
                return tag_line;
        }
        i = j;
    }
    return 0;
}

tc_status tc_topo_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_topo **out)
{
    tc_status st = TC_OK;
    xml_err e = {0};
    xmlParserCtxtPtr pc = NULL;
    xmlDocPtr doc = NULL;
    reader r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.file = name;
    if (len > INT_MAX)
        return tc_error(ctx, TC_ERR_LIMIT, name, 0, "topology file too large (%zu bytes)", len);
    int at = too_many_attrs(buf, len);
    if (at)
        return tc_error(ctx, TC_ERR_LIMIT, name, at, "an element with more than %d attributes (a topology's "
                                                     "elements have at most a dozen)",
                        MAX_ATTRS);
    xmlInitParser();
    pc = xmlNewParserCtxt();
    if (!pc)
        return tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory parsing topology");
    pc->_private = &e;
    pc->sax->serror = parse_serror;
    pc->sax->internalSubset = refuse_doctype;
    doc = xmlCtxtReadMemory(pc, buf, (int)len, name, NULL,
                            XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
                                XML_PARSE_NOWARNING);
    if (!doc || e.have || !pc->wellFormed) {
        if (e.have)
            st = tc_error(ctx, TC_ERR_PARSE, name, e.line, "%s%s", e.doctype ? "" : "malformed XML: ", e.msg);
        else
            st = tc_error(ctx, TC_ERR_PARSE, name, 0, "malformed XML");
        goto done;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "topology") != 0) {
        st = tc_error(ctx, TC_ERR_INVALID, name, root ? (int)line_of(root) : 0,
                      "root element must be <topology>, got <%s>", root ? (const char *)root->name : "nothing");
        goto done;
    }
    if ((st = validate(ctx, name, doc)) != TC_OK)
        goto done;
    long root_line = line_of(root);
    char *tname = get(root, "name"), *np = get(root, "npus");
    long long n = to_int(np);
    if (n == 0) {
        st = tc_error(ctx, TC_ERR_INVALID, name, (int)root_line, "empty topology: npus=\"0\"");
    } else if (n < 0 || n > MAX_NPUS) {
        st = tc_error(ctx, TC_ERR_LIMIT, name, (int)root_line, "npus=\"%s\" exceeds the limit of %d npus", np,
                      MAX_NPUS);
    } else if (tc_topo_create(tname, (int)n, &r.t) != TC_OK || !(r.t->file = tc_strdup(name))) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory reading topology");
    }
    xmlFree(tname);
    xmlFree(np);
    if (st != TC_OK)
        goto done;
    if (use_class(&r, "default", &(int){0}) != TC_OK) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (xmlNode *c = root->children; c && st == TC_OK; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        const char *en = (const char *)c->name;
        if (strcmp(en, "class") == 0)
            st = read_class(&r, c);
        else if (strcmp(en, "link") == 0)
            st = read_link(&r, c);
        else if (strcmp(en, "switch") == 0)
            st = read_switch(&r, c, 0);
        else if (strcmp(en, "nic") == 0)
            st = read_switch(&r, c, 1);
        else if (strcmp(en, "nodes") == 0)
            st = read_nodes(&r, c);
        else if (strcmp(en, "npu") == 0)
            st = read_npu(&r, c);
        else if (strcmp(en, "photonic") == 0)
            st = read_photonic(&r, c);
    }
    if (st != TC_OK)
        goto done;
    if ((st = resolve_up(&r)) != TC_OK || (st = check_semantics(&r, root_line)) != TC_OK ||
        (st = check_photonic(&r)) != TC_OK)
        goto done;
    tc_topo_refresh_costs(r.t);
    if (tc_topo_index(r.t) != TC_OK) {
        st = nomem(&r);
        goto done;
    }
    *out = r.t;
    r.t = NULL;
done:
    tc_topo_free(r.t);
    free(r.parallel);
    free(r.class_line);
    free(r.npu_node_line);
    for (int i = 0; i < r.cap_up; i++)
        free(r.up_name[i]);
    free(r.up_name);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(pc);
    return st;
}

tc_status tc_topo_read(tc_ctx *ctx, const char *path, tc_topo **out)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file_max(ctx, path, TC_TEXT_MAX_TOPOLOGY, "topology file", &buf, &len);
    if (st)
        return st;
    st = tc_topo_read_mem(ctx, path, buf, len, out);
    free(buf);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* Writer                                                                                         */

static int same_costs(const tc_link *a, const tc_link *b)
{
    return a->cls == b->cls && a->alpha_set == b->alpha_set && a->beta_set == b->beta_set &&
           (!a->alpha_set || a->alpha == b->alpha) && (!a->beta_set || a->beta == b->beta);
}

static int class_used(const tc_topo *t, int k)
{
    for (int i = 0; i < t->n_links; i++)
        if (t->links[i].cls == k)
            return 1;
    for (int i = 0; i < t->n_switches; i++)
        if (t->switches[i].cls == k || t->switches[i].up_cls == k)
            return 1;
    return 0;
}

tc_status tc_topo_write(tc_ctx *ctx, const tc_topo *t, FILE *f)
{
    char b1[64], b2[64];
    unsigned char *repeat = malloc((size_t)(t->n_links > 0 ? t->n_links : 1));
    int *first = NULL, *ids = repeat ? sorted_pairs(t, repeat, &first) : NULL;
    if (!ids) {
        free(repeat);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory writing topology");
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<!-- written by tacosc %s; format: man 5 tacosc-topology -->\n", TC_VERSION);
    fprintf(f, "<topology name=\"");
    tc_xml_escape(f, t->name ? t->name : "topology");
    fprintf(f, "\" npus=\"%d\">\n", t->n_npus);
    int *used = calloc((size_t)(t->n_classes > 0 ? t->n_classes : 1), sizeof *used);
    if (!used) {
        free(repeat);
        free(first);
        free(ids);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory writing topology");
    }
    for (int k = 0; k < t->n_classes; k++) {
        const tc_link_class *c = &t->classes[k];
        int builtin = strcmp(c->name, "default") == 0 && c->alpha == TC_TOPO_DEFAULT_ALPHA &&
                      c->beta == 1.0 / TC_TOPO_DEFAULT_BW;
        if (!c->defined || (builtin && !class_used(t, k)))
            continue;
        fprintf(f, "  <class name=\"");
        tc_xml_escape(f, c->name);
        fprintf(f, "\" alpha=\"%s\" bandwidth=\"%s\"/>\n", tc_topo_fmt_time(c->alpha, b1, sizeof b1),
                tc_topo_fmt_beta(c->beta, b2, sizeof b2));
    }
    free(used);
    for (int i = 0; i < t->n_links; i++) {
        const tc_link *l = &t->links[i];
        int duplex = i + 1 < t->n_links && t->links[i + 1].src == l->dst && t->links[i + 1].dst == l->src &&
                     same_costs(l, &t->links[i + 1]);
        fprintf(f, "  <link src=\"%d\" dst=\"%d\"", l->src, l->dst);
        if (strcmp(t->classes[l->cls].name, "default") != 0) {
            fprintf(f, " class=\"");
            tc_xml_escape(f, t->classes[l->cls].name);
            fputc('"', f);
        }
        if (l->alpha_set)
            fprintf(f, " alpha=\"%s\"", tc_topo_fmt_time(l->alpha, b1, sizeof b1));
        if (l->beta_set)
            fprintf(f, " bandwidth=\"%s\"", tc_topo_fmt_beta(l->beta, b2, sizeof b2));
        if (duplex)
            fprintf(f, " duplex=\"1\"");
        if (repeat[i] || (duplex && repeat[i + 1]))
            fprintf(f, " parallel=\"1\"");
        fprintf(f, "/>\n");
        if (duplex)
            i++;
    }
    free(repeat);
    free(first);
    free(ids);
    for (int s = 0; s < t->n_switches; s++) {
        const tc_switch *sw = &t->switches[s];
        fprintf(f, sw->nic ? "  <nic name=\"" : "  <switch name=\"");
        tc_xml_escape(f, sw->name);
        fputc('"', f);
        if (strcmp(t->classes[sw->cls].name, "default") != 0) {
            fprintf(f, " class=\"");
            tc_xml_escape(f, t->classes[sw->cls].name);
            fputc('"', f);
        }
        if (sw->unwind > 0)
            fprintf(f, " unwind=\"%d\"", sw->unwind);
        if (sw->model != TC_SWITCH_UNWIND && !sw->nic)
            fprintf(f, " model=\"%s\"", tc_switch_model_name((tc_switch_model)sw->model));
        if (sw->up >= 0) {
            fprintf(f, " up=\"");
            tc_xml_escape(f, t->switches[sw->up].name);
            fputc('"', f);
        }
        if (sw->up_cls >= 0) { /* a NIC's port speed is kept while it hangs from nothing */
            fprintf(f, " upclass=\"");
            tc_xml_escape(f, t->classes[sw->up_cls].name);
            fputc('"', f);
        }
        if (sw->nic && sw->gdr >= 0)
            fprintf(f, " gdr=\"%d\"", sw->gdr);
        if (sw->nic && sw->path[0])
            fprintf(f, " path=\"%s\"", sw->path);
        fprintf(f, " npus=\"");
        for (int p = 0; p < sw->n_ports; p++)
            fprintf(f, p ? " %d" : "%d", sw->npus[p]);
        fprintf(f, "\"/>\n");
    }
    if (t->node_of && t->n_npus > 0) {
        int k = 1;
        while (k < t->n_npus && t->node_of[k] == t->node_of[0])
            k++;
        int regular = t->node_of[0] == 0 && t->n_npus % k == 0;
        for (int i = 0; regular && i < t->n_npus; i++)
            if (t->node_of[i] != i / k)
                regular = 0;
        if (regular && k < t->n_npus) /* on the same line: line numbers stay as they were */
            fprintf(f, "  <nodes size=\"%d\"/> <!-- ranks server-major: rank = server * %d + local index -->\n",
                    k, k);
        else if (regular)
            fprintf(f, "  <nodes size=\"%d\"/>\n", k);
        else
            for (int i = 0; i < t->n_npus; i++)
                fprintf(f, "  <npu id=\"%d\" node=\"%d\"/>\n", i, t->node_of[i]);
    }
    if (t->photonic.present) {
        const tc_photonic *p = &t->photonic;
        fprintf(f, "  <photonic");
        if (p->reconfig_set)
            fprintf(f, " reconfig=\"%s\"", tc_topo_fmt_time(p->reconfig_delay, b1, sizeof b1));
        const struct { const char *name; int v; } nums[] = {
            {"tx", p->tx_per_npu}, {"rx", p->rx_per_npu}, {"wavelengths", p->wavelengths}, {"mzi", p->mzi_size},
        };
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
            if (nums[i].v > 0)
                fprintf(f, " %s=\"%d\"", nums[i].name, nums[i].v);
        if (p->tile_rows > 0)
            fprintf(f, " tiles=\"%dx%d\"", p->tile_rows, p->tile_cols);
        if (p->grid_rows > 0)
            fprintf(f, " grid=\"%dx%d\"", p->grid_rows, p->grid_cols);
        if (p->fibers > 0)
            fprintf(f, " fibers=\"%d\"", p->fibers);
        fprintf(f, "/>\n");
    }
    fprintf(f, "</topology>\n");
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write topology: %s", strerror(errno));
    return TC_OK;
}
