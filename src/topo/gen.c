/*
 * Topology generators (`tacosc topo KIND DIMS`).
 *
 * Accepts: a kind and its dimensions (see tc_topo_list_kinds and the table below) and optional class
 * names, one per dimension (the last repeats).  Returns: an indexed topology whose classes are all defined
 * with the built-in default (0.5 us, 50 GB/s) unless they already carry values; callers override them
 * (tc_topo_class_set) or a cost file does (tc_topo_apply_costs).
 * NPU numbering: row-major with the first dimension fastest, id = x0 + D0*(x1 + D1*x2).  Bidirectional
 * connections are emitted as consecutive opposite links (written back as one duplex link).
 * Limits: at most TC_GEN_MAX_NPUS NPUs and TC_GEN_MAX_LINKS directed links.
 * Trace (mesh 2x2): links 0->1 1->0 2->3 3->2 (dimension 0), 0->2 2->0 1->3 3->1 (dimension 1).
 *
 * DragonFly GxP (TACOS §VI-B1, 4x5 with [400, 200] GB/s): G groups of P NPUs, NPU id g*P+p.  Inside a
 * group all NPUs are fully connected (class 0, "local"); every pair of groups is joined by exactly one
 * bidirectional global link (class 1, "global"): group g uses its k-th global port (k = 0..G-2, in the
 * order of the other groups' ids) on NPU k mod P.  With G-1 < P some NPUs have no global link, which makes
 * the topology asymmetric as Table IV of the paper states, and heterogeneous through the two classes.
 */
#include "topo_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TC_GEN_MAX_NPUS 10000000
#define TC_GEN_MAX_LINKS 100000000L
#define MAX_DIMS 3

typedef struct gen {
    tc_ctx *ctx;
    tc_topo *t;
    const char *const *classes;
    int n_classes;
    int ndim;               /* link classes of the kind (one per dimension), set by gen_begin */
    int cls[MAX_DIMS + 1];
} gen;

static tc_status usage(tc_ctx *ctx, const char *fmt, const char *a, const char *b)
{
    return tc_error(ctx, TC_ERR_USAGE, NULL, 0, fmt, a, b);
}

/* "4x4x4" -> dims; returns count or -1. */
static int parse_dims(const char *s, int *d, int max)
{
    int n = 0;
    if (!s || !*s)
        return -1;
    while (*s) {
        if (!isdigit((unsigned char)*s) || n == max)
            return -1;
        long v = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s++ - '0');
            if (v > TC_GEN_MAX_NPUS)
                return -1;
        }
        if (v < 1)
            return -1;
        d[n++] = (int)v;
        if (*s == 'x' || *s == 'X') {
            s++;
            if (!*s)
                return -1;
        } else if (*s) {
            return -1;
        }
    }
    return n;
}

/* Create the topology and one class per dimension (names from the user, else `defaults`). */
static tc_status gen_begin(gen *g, const char *name, long n, int ndim, const char *const *defaults)
{
    if (n > TC_GEN_MAX_NPUS)
        return tc_error(g->ctx, TC_ERR_LIMIT, NULL, 0, "%s: %ld npus exceed the generator limit of %d", name, n,
                        TC_GEN_MAX_NPUS);
    g->ndim = ndim;
    if (g->n_classes > ndim) /* names beyond the kind's dimensions would be silently dropped */
        return tc_error(g->ctx, TC_ERR_USAGE, NULL, 0, "%s: %d --class values, but it has %d link class%s%s", name,
                        g->n_classes, ndim, ndim == 1 ? "" : "es", ndim > 1 ? " (one per dimension)" : "");
    if (tc_topo_create(name, (int)n, &g->t) != TC_OK)
        return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
    for (int d = 0; d < ndim; d++) {
        const char *cn = g->n_classes > 0 ? g->classes[d < g->n_classes ? d : g->n_classes - 1] : defaults[d];
        if (tc_topo_class_get(g->t, cn, &g->cls[d]) != TC_OK)
            return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
        if (!g->t->classes[g->cls[d]].defined)
            tc_topo_class_set(g->t, g->cls[d], TC_TOPO_DEFAULT_ALPHA, 1.0 / TC_TOPO_DEFAULT_BW);
    }
    return TC_OK;
}

static tc_status link1(gen *g, int a, int b, int dim)
{
    if (g->t->n_links >= TC_GEN_MAX_LINKS)
        return tc_error(g->ctx, TC_ERR_LIMIT, NULL, 0, "%s: more than %ld links", g->t->name, TC_GEN_MAX_LINKS);
    if (tc_topo_add_link(g->t, a, b, g->cls[dim], -1, -1, 0) != TC_OK)
        return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", g->t->name);
    return TC_OK;
}

static tc_status link2(gen *g, int a, int b, int dim)
{
    tc_status st = link1(g, a, b, dim);
    return st == TC_OK ? link1(g, b, a, dim) : st;
}

static tc_status switch1(gen *g, const char *name, const int *ports, int n, int dim)
{
    if (tc_topo_add_switch(g->t, name, ports, n, g->cls[dim], 0, 0) != TC_OK)
        return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", g->t->name);
    return TC_OK;
}

static const char *const dflt[] = {"default", "default", "default", "default"};

static tc_status gen_ring(gen *g, int n, int bi)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%d", bi ? "biring" : "ring", n);
    tc_status st = gen_begin(g, name, n, 1, dflt);
    for (int i = 0; st == TC_OK && i < n; i++) {
        int j = (i + 1) % n;
        if (bi && n == 2 && i == 1)
            break; /* 0<->1 already there */
        st = bi ? link2(g, i, j, 0) : link1(g, i, j, 0);
    }
    return st;
}

static tc_status gen_fc(gen *g, int n)
{
    char name[64];
    snprintf(name, sizeof name, "fc-%d", n);
    tc_status st = gen_begin(g, name, n, 1, dflt);
    for (int i = 0; st == TC_OK && i < n; i++)
        for (int j = i + 1; st == TC_OK && j < n; j++)
            st = link2(g, i, j, 0);
    return st;
}

/* mesh or torus over nd dims; wrap links only where a dimension has at least 3 NPUs. */
static tc_status gen_grid(gen *g, const int *d, int nd, int torus)
{
    char name[64], dims[48] = "";
    long n = 1;
    for (int k = 0; k < nd; k++) {
        n *= d[k];
        if (n > TC_GEN_MAX_NPUS)
            break;
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), k ? "x%d" : "%d", d[k]);
    }
    snprintf(name, sizeof name, "%s%dd-%s", torus ? "torus" : "mesh", nd, dims);
    tc_status st = gen_begin(g, name, n, nd, dflt);
    long stride = 1;
    for (int k = 0; st == TC_OK && k < nd; k++) {
        for (long v = 0; st == TC_OK && v < n; v++) {
            int x = (int)((v / stride) % d[k]);
            if (x + 1 < d[k])
                st = link2(g, (int)v, (int)(v + stride), k);
            else if (torus && d[k] >= 3)
                st = link2(g, (int)v, (int)(v - (long)x * stride), k);
        }
        stride *= d[k];
    }
    return st;
}

static tc_status gen_hypercube(gen *g, const char *arg)
{
    int k = -1;
    size_t len = strlen(arg);
    if (len >= 2 && (arg[len - 1] == 'd' || arg[len - 1] == 'D')) {
        char tmp[16];
        int d[1];
        if (len - 1 < sizeof tmp) {
            memcpy(tmp, arg, len - 1);
            tmp[len - 1] = 0;
            if (parse_dims(tmp, d, 1) == 1 && d[0] <= 23)
                k = d[0];
        }
    } else {
        int d[1];
        if (parse_dims(arg, d, 1) == 1 && d[0] >= 2 && (d[0] & (d[0] - 1)) == 0)
            for (k = 0; (1 << k) < d[0]; k++)
                ;
    }
    if (k < 1)
        return usage(g->ctx, "hypercube: bad size '%s' (give the dimension count as '3d' or the npu count as a power of two, e.g. 8)%s", arg, "");
    char name[64];
    snprintf(name, sizeof name, "hypercube-%dd", k);
    const char *defaults[24];
    for (int i = 0; i < 24; i++)
        defaults[i] = "default";
    int ndim = k < MAX_DIMS + 1 ? k : MAX_DIMS + 1; /* classes beyond the 4th repeat the last */
    tc_status st = gen_begin(g, name, 1L << k, ndim, defaults);
    for (int b = 0; st == TC_OK && b < k; b++)
        for (int v = 0; st == TC_OK && v < (1 << k); v++)
            if (!(v & (1 << b)))
                st = link2(g, v, v | (1 << b), b < ndim ? b : ndim - 1);
    return st;
}

/* One switch per line of NPUs along each dimension. */
static tc_status gen_switch(gen *g, const int *d, int nd)
{
    char name[64], dims[48] = "";
    long n = 1;
    for (int k = 0; k < nd; k++) {
        n *= d[k];
        if (n > TC_GEN_MAX_NPUS)
            break;
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), k ? "x%d" : "%d", d[k]);
    }
    if (nd == 1)
        snprintf(name, sizeof name, "switch-%s", dims);
    else
        snprintf(name, sizeof name, "switch%dd-%s", nd, dims);
    tc_status st = gen_begin(g, name, n, nd, dflt);
    int *ports = malloc((size_t)(n > 0 ? n : 1) * sizeof *ports);
    if (!ports)
        st = tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
    long stride = 1;
    for (int k = 0; st == TC_OK && k < nd; k++) {
        if (d[k] >= 2) {
            int idx = 0;
            for (long v = 0; st == TC_OK && v < n; v++) {
                if ((v / stride) % d[k] != 0)
                    continue; /* v is the first NPU of its line */
                for (int x = 0; x < d[k]; x++)
                    ports[x] = (int)(v + x * stride);
                char sw[64];
                if (nd == 1)
                    snprintf(sw, sizeof sw, "sw%d", idx);
                else
                    snprintf(sw, sizeof sw, "sw%d.%d", k, idx);
                idx++;
                st = switch1(g, sw, ports, d[k], k);
            }
        }
        stride *= d[k];
    }
    free(ports);
    return st;
}

static tc_status gen_dragonfly(gen *g, int groups, int per)
{
    static const char *const names[] = {"local", "global"};
    char name[64];
    snprintf(name, sizeof name, "dragonfly-%dx%d", groups, per);
    tc_status st = gen_begin(g, name, (long)groups * per, 2, names);
    for (int gr = 0; st == TC_OK && gr < groups; gr++)
        for (int i = 0; st == TC_OK && i < per; i++)
            for (int j = i + 1; st == TC_OK && j < per; j++)
                st = link2(g, gr * per + i, gr * per + j, 0);
    for (int a = 0; st == TC_OK && a < groups; a++)
        for (int b = a + 1; st == TC_OK && b < groups; b++) {
            int pa = (b - 1) % per, pb = a % per; /* port of a toward b is b-1; port of b toward a is a */
            st = link2(g, a * per + pa, b * per + pb, 1);
        }
    return st;
}

/* 3D ring (dim 0, bidirectional) - fully connected (dim 1) - switch (dim 2); nodes along dim 2. */
static tc_status gen_rfs(gen *g, const int *d)
{
    static const char *const names[] = {"ring", "fc", "switch"};
    char name[64];
    snprintf(name, sizeof name, "rfs-%dx%dx%d", d[0], d[1], d[2]);
    long n = (long)d[0] * d[1] * d[2];
    tc_status st = gen_begin(g, name, n, 3, names);
    int A = d[0], B = d[1], C = d[2];
    for (long v = 0; st == TC_OK && v < n; v++) {
        int a = (int)(v % A);
        if (A >= 2 && !(A == 2 && a == 1))
            st = link2(g, (int)v, (int)(v - a + (a + 1) % A), 0);
    }
    for (long v = 0; st == TC_OK && v < n; v++) {
        int b = (int)((v / A) % B);
        for (int b2 = b + 1; st == TC_OK && b2 < B; b2++)
            st = link2(g, (int)v, (int)(v + (long)(b2 - b) * A), 1);
    }
    int *ports = malloc((size_t)C * sizeof *ports);
    if (!ports && st == TC_OK)
        st = tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
    for (long v = 0; st == TC_OK && C >= 2 && v < (long)A * B; v++) {
        for (int c = 0; c < C; c++)
            ports[c] = (int)(v + (long)c * A * B);
        char sw[64];
        snprintf(sw, sizeof sw, "sw%ld", v);
        st = switch1(g, sw, ports, C, 2);
    }
    free(ports);
    if (st == TC_OK) {
        g->t->node_of = malloc((size_t)n * sizeof *g->t->node_of);
        if (!g->t->node_of)
            return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
        for (long v = 0; v < n; v++)
            g->t->node_of[v] = (int)(v / ((long)A * B));
        g->t->n_nodes = C;
    }
    return st;
}

/* DGX-1 (V100) hybrid cube-mesh: two fully connected quads {0..3}, {4..7} plus i <-> i+4; six NVLinks
 * per GPU, so some pairs have two links (parallel links). */
static tc_status gen_dgx1(gen *g)
{
    static const char *const names[] = {"nvlink"};
    static const int pairs[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                                   {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                                   {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
    tc_status st = gen_begin(g, "dgx1", 8, 1, names);
    for (int k = 0; st == TC_OK && k < 2; k++) /* first every pair once, then the second links */
        for (size_t i = 0; st == TC_OK && i < sizeof pairs / sizeof pairs[0]; i++)
            if (pairs[i][2] > k)
                st = link2(g, pairs[i][0], pairs[i][1], 0);
    return st;
}

/* N servers of G GPUs: fully connected inside a server (class 0 "intra"); GPU g of every server on rail g,
 * a switch (rail_ring = 0) or a bidirectional ring (rail_ring = 1) of class 1 "inter". */
static tc_status gen_hier(gen *g, int nodes, int per, int rail_ring)
{
    static const char *const names[] = {"intra", "inter"};
    char name[64];
    snprintf(name, sizeof name, "%s-%dx%d", rail_ring ? "hier-ring" : "hier", nodes, per);
    long n = (long)nodes * per;
    tc_status st = gen_begin(g, name, n, 2, names);
    for (int s = 0; st == TC_OK && s < nodes; s++)
        for (int i = 0; st == TC_OK && i < per; i++)
            for (int j = i + 1; st == TC_OK && j < per; j++)
                st = link2(g, s * per + i, s * per + j, 0);
    int *ports = malloc((size_t)nodes * sizeof *ports);
    if (!ports && st == TC_OK)
        st = tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
    for (int r = 0; st == TC_OK && nodes >= 2 && r < per; r++) {
        if (rail_ring) {
            for (int s = 0; st == TC_OK && s < nodes; s++) {
                if (nodes == 2 && s == 1)
                    break;
                st = link2(g, s * per + r, ((s + 1) % nodes) * per + r, 1);
            }
        } else {
            for (int s = 0; s < nodes; s++)
                ports[s] = s * per + r;
            char sw[64];
            snprintf(sw, sizeof sw, "rail%d", r);
            st = switch1(g, sw, ports, nodes, 1);
        }
    }
    free(ports);
    if (st == TC_OK) {
        g->t->node_of = malloc((size_t)n * sizeof *g->t->node_of);
        if (!g->t->node_of)
            return tc_error(g->ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", name);
        for (long v = 0; v < n; v++)
            g->t->node_of[v] = (int)(v / per);
        g->t->n_nodes = nodes;
    }
    return st;
}

static const struct kind_doc {
    const char *kind, *dims, *desc;
} kinds[] = {
    {"ring", "N", "unidirectional ring i -> i+1 mod N"},
    {"biring", "N", "bidirectional ring"},
    {"fc", "N", "fully connected (every ordered pair)"},
    {"mesh", "AxB | AxBxC", "2D or 3D mesh (1D: a line); one class per dimension"},
    {"torus", "AxB | AxBxC", "2D or 3D torus (wrap-around where a dimension has >= 3 npus)"},
    {"hypercube", "Kd | N", "binary hypercube of K dimensions, or of N npus (a power of two)"},
    {"switch", "N | AxB | AxBxC", "one switch of N npus; AxB: a switch per row and per column"},
    {"dragonfly", "GxP", "G groups of P npus: fully connected groups, one global link per group pair"},
    {"rfs", "AxBxC", "3D ring (A) - fully connected (B) - switch (C); nodes of A*B npus"},
    {"dgx1", "", "8-GPU DGX-1 hybrid cube-mesh, 6 NVLinks per GPU (class nvlink)"},
    {"hier", "NxG", "N servers of G GPUs: fully connected inside (intra), a switch per rail (inter)"},
    {"hier-ring", "NxG", "as hier, with a bidirectional ring per rail instead of a switch"},
};

void tc_topo_list_kinds(FILE *f)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        fprintf(f, "  %-10s %-16s %s\n", kinds[i].kind, kinds[i].dims, kinds[i].desc);
}

tc_status tc_topo_generate(tc_ctx *ctx, const char *kind, const char *dims, const char *const *classes,
                           int n_classes, tc_topo **out)
{
    gen g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    g.classes = classes;
    g.n_classes = classes ? n_classes : 0;
    int d[MAX_DIMS + 1], nd = -1;
    tc_status st;
    const char *ds = dims ? dims : "";
    if (!kind)
        return usage(ctx, "topo: missing kind%s%s", "", "");
    if (strcmp(kind, "dgx1") != 0 && strcmp(kind, "hypercube") != 0) {
        nd = parse_dims(ds, d, MAX_DIMS);
        if (nd < 0)
            return usage(ctx, "%s: bad dimensions '%s' (expected numbers >= 1 joined by 'x', e.g. 4x4)", kind, ds);
    }
#define WANT(cond, what)                                                                                     \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            return usage(ctx, "%s: dimensions '%s' do not fit: expected " what, kind, ds);                   \
    } while (0)
    if (strcmp(kind, "ring") == 0 || strcmp(kind, "biring") == 0) {
        WANT(nd == 1 && d[0] >= 2, "N >= 2");
        st = gen_ring(&g, d[0], kind[0] == 'b');
    } else if (strcmp(kind, "fc") == 0) {
        WANT(nd == 1 && d[0] >= 2 && d[0] <= 8192, "2 <= N <= 8192");
        st = gen_fc(&g, d[0]);
    } else if (strcmp(kind, "mesh") == 0 || strcmp(kind, "torus") == 0) {
        long n = 1;
        for (int k = 0; k < nd; k++)
            n *= d[k];
        WANT(nd >= 1 && nd <= 3 && n >= 2, "1 to 3 dimensions and at least 2 npus");
        st = gen_grid(&g, d, nd, kind[0] == 't');
    } else if (strcmp(kind, "hypercube") == 0) {
        st = gen_hypercube(&g, ds);
    } else if (strcmp(kind, "switch") == 0) {
        long n = 1;
        for (int k = 0; k < nd; k++)
            n *= d[k];
        WANT(nd >= 1 && nd <= 3 && n >= 2, "N >= 2, or AxB, or AxBxC");
        st = gen_switch(&g, d, nd);
    } else if (strcmp(kind, "dragonfly") == 0) {
        WANT(nd == 2 && (long)d[0] * d[1] >= 2, "GxP (groups x npus per group)");
        st = gen_dragonfly(&g, d[0], d[1]);
    } else if (strcmp(kind, "rfs") == 0) {
        WANT(nd == 3 && (long)d[0] * d[1] * d[2] >= 2, "AxBxC");
        st = gen_rfs(&g, d);
    } else if (strcmp(kind, "dgx1") == 0) {
        if (*ds && strcmp(ds, "8") != 0)
            return usage(ctx, "%s: takes no dimensions (it has 8 GPUs), got '%s'", kind, ds);
        st = gen_dgx1(&g);
    } else if (strcmp(kind, "hier") == 0 || strcmp(kind, "hier-ring") == 0) {
        WANT(nd == 2 && (long)d[0] * d[1] >= 2, "NxG (servers x GPUs per server)");
        st = gen_hier(&g, d[0], d[1], strcmp(kind, "hier-ring") == 0);
    } else {
        return usage(ctx, "unknown topology kind '%s'%s (see 'tacosc topo --help')", kind, "");
    }
#undef WANT
    if (st == TC_OK && tc_topo_index(g.t) != TC_OK)
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory generating %s", kind);
    if (st != TC_OK) {
        tc_topo_free(g.t);
        return st;
    }
    *out = g.t;
    return TC_OK;
}
