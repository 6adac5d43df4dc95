/* The schedule IR: creation, transfers, canonical order; collective names and factors. */
#include "tacos/ir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[TC_COLL_COUNT] = {
    "allgather", "reducescatter", "allreduce", "broadcast", "reduce", "gather", "scatter", "alltoall",
};

static const char *const model_names[] = {"unwind", "node", "multicast"};

const char *tc_switch_model_name(tc_switch_model m)
{
    return (unsigned)m < 3 ? model_names[m] : "?";
}

/* the index of s among n names, -1 when none */
static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

tc_status tc_switch_model_parse(const char *s, tc_switch_model *out)
{
    const int m = name_index(model_names, 3, s);
    if (m < 0)
        return TC_ERR_INVALID;
    *out = (tc_switch_model)m;
    return TC_OK;
}

static const char *const link_model_names[] = {"tacos", "te-ccl"};

const char *tc_link_model_name(tc_link_model m)
{
    return (unsigned)m < 2 ? link_model_names[m] : "?";
}

tc_status tc_link_model_parse(const char *s, tc_link_model *out)
{
    const int m = name_index(link_model_names, 2, s);
    if (m < 0)
        return TC_ERR_INVALID;
    *out = (tc_link_model)m;
    return TC_OK;
}

const char *tc_coll_name(tc_coll c)
{
    return (unsigned)c < TC_COLL_COUNT ? coll_names[c] : "unknown";
}

tc_status tc_coll_parse(const char *s, tc_coll *out)
{
    static const struct { const char *alias; tc_coll c; } aliases[] = {
        {"all-gather", TC_COLL_ALLGATHER},     {"reduce-scatter", TC_COLL_REDUCESCATTER},
        {"all-reduce", TC_COLL_ALLREDUCE},     {"all-to-all", TC_COLL_ALLTOALL},
        {"alltoall", TC_COLL_ALLTOALL},        {"bcast", TC_COLL_BROADCAST},
    };
    if (!s)
        return TC_ERR_INVALID;
    for (int c = 0; c < TC_COLL_COUNT; c++)
        if (!strcasecmp(s, coll_names[c])) {
            *out = (tc_coll)c;
            return TC_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcasecmp(s, aliases[i].alias)) {
            *out = aliases[i].c;
            return TC_OK;
        }
    return TC_ERR_INVALID;
}

double tc_coll_busbw_factor(tc_coll c, int n)
{
    if (n <= 0)
        return 0;
    switch (c) {
    case TC_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case TC_COLL_BROADCAST:
    case TC_COLL_REDUCE: return 1.0;
    default: return (double)(n - 1) / n;
    }
}

int tc_coll_reduces(tc_coll c)
{
    return c == TC_COLL_REDUCESCATTER || c == TC_COLL_ALLREDUCE || c == TC_COLL_REDUCE;
}

int tc_coll_rooted(tc_coll c)
{
    return c == TC_COLL_BROADCAST || c == TC_COLL_REDUCE || c == TC_COLL_GATHER || c == TC_COLL_SCATTER;
}

int tc_sched_chunk_count(tc_coll coll, int n_ranks, int k)
{
    switch (coll) {
    case TC_COLL_BROADCAST:
    case TC_COLL_REDUCE: return k;
    case TC_COLL_ALLTOALL: return n_ranks * n_ranks * k;
    default: return n_ranks * k;
    }
}

uint64_t tc_sched_chunk_divisor(tc_coll coll, int n_ranks, int k)
{
    if (k < 1 || n_ranks < 1)
        return 1;
    return (coll == TC_COLL_BROADCAST || coll == TC_COLL_REDUCE) ? (uint64_t)k : (uint64_t)n_ranks * (uint64_t)k;
}

tc_status tc_sched_create(tc_coll coll, int n_ranks, int chunks_per_rank, uint64_t size_bytes,
                          tc_sched **out)
{
    if ((unsigned)coll >= TC_COLL_COUNT || n_ranks < 1 || chunks_per_rank < 1)
        return TC_ERR_INVALID;
    int64_t nc = (coll == TC_COLL_ALLTOALL) ? (int64_t)n_ranks * n_ranks * chunks_per_rank
                                            : (int64_t)n_ranks * chunks_per_rank;
    if (nc > INT32_MAX)
        return TC_ERR_LIMIT;
    tc_sched *s = calloc(1, sizeof *s);
    if (!s)
        return TC_ERR_NOMEM;
    s->coll = coll;
    s->n_ranks = n_ranks;
    s->chunks_per_rank = chunks_per_rank;
    s->n_chunks = tc_sched_chunk_count(coll, n_ranks, chunks_per_rank);
    s->size_bytes = size_bytes;
    uint64_t div = tc_sched_chunk_divisor(coll, n_ranks, chunks_per_rank);
    s->chunk_bytes = size_bytes / div + (size_bytes % div != 0); /* rounded up, with no overflow near 2^64 */
    *out = s;
    return TC_OK;
}

void tc_sched_free(tc_sched *s)
{
    if (!s)
        return;
    free(s->algo);
    free(s->topo_name);
    free(s->xfers);
    free(s->route);
    free(s->file);
    free(s->xfer_line);
    tc_sched_photonic_free(s->photonic);
    tc_sched_sparse_free(s->sparse);
    free(s);
}

tc_status tc_sched_set_names(tc_sched *s, const char *algo, const char *topo_name)
{
    char *a = tc_strdup(algo), *t = tc_strdup(topo_name);
    if ((algo && !a) || (topo_name && !t)) {
        free(a);
        free(t);
        return TC_ERR_NOMEM;
    }
    free(s->algo);
    free(s->topo_name);
    s->algo = a;
    s->topo_name = t;
    return TC_OK;
}

tc_status tc_sched_reserve(tc_sched *s, int n)
{
    if (n < 0 || (int64_t)s->n_xfers + n > INT32_MAX)
        return TC_ERR_LIMIT;
    const int cap = s->cap_xfers;
    tc_status st = tc_grow((void **)&s->xfers, &s->cap_xfers, s->n_xfers + n, sizeof *s->xfers);
    if (st || !s->xfer_line || s->cap_xfers == cap)
        return st;
    int *l = realloc(s->xfer_line, (size_t)s->cap_xfers * sizeof *l); /* lines keep the transfers' capacity */
    if (!l) { /* as in tc_sched_sort: without memory for them the lines go, the transfers stay */
        free(s->xfer_line);
        s->xfer_line = NULL;
        return TC_OK;
    }
    memset(l + cap, 0, (size_t)(s->cap_xfers - cap) * sizeof *l);
    s->xfer_line = l;
    return TC_OK;
}

tc_status tc_sched_set_file(tc_sched *s, const char *file)
{
    char *f = tc_strdup(file);
    if (file && !f)
        return TC_ERR_NOMEM;
    free(s->file);
    s->file = f;
    return TC_OK;
}

tc_status tc_sched_error(tc_ctx *ctx, tc_status st, const tc_sched *s, int i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(ctx, TC_DIAG_ERROR, s->file, i >= 0 && i < s->n_xfers ? tc_sched_line(s, i) : 0, 0, fmt, ap);
    va_end(ap);
    return st;
}

tc_status tc_sched_set_line(tc_sched *s, int i, int line)
{
    if (i < 0 || i >= s->n_xfers)
        return TC_ERR_INVALID;
    if (!s->xfer_line && !(s->xfer_line = calloc((size_t)s->cap_xfers, sizeof *s->xfer_line)))
        return TC_ERR_NOMEM;
    s->xfer_line[i] = line;
    return TC_OK;
}

tc_status tc_sched_add(tc_sched *s, int src, int dst, int chunk, tc_op op, int link, int step,
                       double t_start, double t_end, const int *route, int route_len)
{
    tc_status st = tc_sched_reserve(s, 1);
    if (st)
        return st;
    if (route_len > 0) {
        st = tc_grow((void **)&s->route, &s->cap_route, s->n_route + route_len, sizeof *s->route);
        if (st)
            return st;
        memcpy(s->route + s->n_route, route, (size_t)route_len * sizeof *route);
    }
    tc_xfer *x = &s->xfers[s->n_xfers++];
    x->src = src;
    x->dst = dst;
    x->chunk = chunk;
    x->op = op;
    x->link = link;
    x->step = step;
    x->t_start = t_start;
    x->t_end = t_end;
    x->route_off = route_len > 0 ? s->n_route : 0;
    x->route_len = route_len > 0 ? route_len : 0;
    if (route_len > 0)
        s->n_route += route_len;
    if (step + 1 > s->n_steps)
        s->n_steps = step + 1;
    return TC_OK;
}

static int cmp_xfer(const void *pa, const void *pb)
{
    const tc_xfer *a = pa, *b = pb;
    if (a->t_start != b->t_start) return a->t_start < b->t_start ? -1 : 1;
    if (a->t_end != b->t_end) return a->t_end < b->t_end ? -1 : 1;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->chunk != b->chunk) return a->chunk < b->chunk ? -1 : 1;
    if (a->link != b->link) return a->link < b->link ? -1 : 1;
    if (a->op != b->op) return a->op < b->op ? -1 : 1;
    return 0;
}

void tc_sched_sort(tc_sched *s)
{
    int i = 1; /* generators mostly emit in order already: one pass spares the sort and its buffer */
    while (i < s->n_xfers && cmp_xfer(&s->xfers[i - 1], &s->xfers[i]) <= 0)
        i++;
    if (i >= s->n_xfers)
        return;
    tc_sched_sparse *sp = s->sparse && s->sparse->n == s->n_xfers ? s->sparse : NULL;
    /* with source lines or sparse formats: sort (transfer, index) pairs, then permute them alike; cmp_xfer
     * reads the transfer at each pair's start */
    typedef struct {
        tc_xfer x;
        int at;
    } xfer_at;
    xfer_at *p = s->xfer_line || sp ? malloc((size_t)s->n_xfers * sizeof *p) : NULL;
    int *lines = p && s->xfer_line ? malloc((size_t)s->n_xfers * sizeof *lines) : NULL;
    unsigned char *fmt = p && sp ? malloc((size_t)s->n_xfers) : NULL;
    if (!p || (s->xfer_line && !lines) || (sp && !fmt)) { /* no memory for them: they would no longer match */
        free(p);
        free(lines);
        free(fmt);
        free(s->xfer_line);
        s->xfer_line = NULL;
        tc_sched_sparse_free(s->sparse);
        s->sparse = NULL;
        qsort(s->xfers, (size_t)s->n_xfers, sizeof *s->xfers, cmp_xfer);
        return;
    }
    for (i = 0; i < s->n_xfers; i++)
        p[i] = (xfer_at){s->xfers[i], i};
    qsort(p, (size_t)s->n_xfers, sizeof *p, cmp_xfer);
    for (i = 0; i < s->n_xfers; i++) {
        s->xfers[i] = p[i].x;
        if (lines)
            lines[i] = s->xfer_line[p[i].at];
        if (fmt)
            fmt[i] = sp->fmt[p[i].at];
    }
    if (lines)
        memcpy(s->xfer_line, lines, (size_t)s->n_xfers * sizeof *lines);
    if (fmt)
        memcpy(sp->fmt, fmt, (size_t)s->n_xfers);
    free(p);
    free(lines);
    free(fmt);
}

double tc_sched_makespan(const tc_sched *s)
{
    double m = 0;
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].t_end > m)
            m = s->xfers[i].t_end;
    return m;
}

tc_status tc_sched_clone(const tc_sched *s, tc_sched **out)
{
    tc_sched *c = calloc(1, sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    *c = *s;
    c->algo = c->topo_name = c->file = NULL;
    c->xfers = NULL;
    c->route = NULL;
    c->xfer_line = NULL;
    c->photonic = NULL;
    c->sparse = NULL;
    c->cap_xfers = s->n_xfers;
    c->cap_route = s->n_route;
    if (s->n_xfers) {
        c->xfers = malloc((size_t)s->n_xfers * sizeof *c->xfers);
        if (!c->xfers)
            goto fail;
        memcpy(c->xfers, s->xfers, (size_t)s->n_xfers * sizeof *c->xfers);
    }
    if (s->n_route) {
        c->route = malloc((size_t)s->n_route * sizeof *c->route);
        if (!c->route)
            goto fail;
        memcpy(c->route, s->route, (size_t)s->n_route * sizeof *c->route);
    }
    if (s->xfer_line && s->n_xfers) {
        c->xfer_line = malloc((size_t)s->n_xfers * sizeof *c->xfer_line);
        if (!c->xfer_line)
            goto fail;
        memcpy(c->xfer_line, s->xfer_line, (size_t)s->n_xfers * sizeof *c->xfer_line);
    }
    if (tc_sched_set_names(c, s->algo, s->topo_name) || tc_sched_set_file(c, s->file))
        goto fail;
    if (s->photonic && tc_sched_photonic_clone(s->photonic, &c->photonic))
        goto fail;
    if (s->sparse && tc_sched_sparse_clone(s->sparse, &c->sparse))
        goto fail;
    *out = c;
    return TC_OK;
fail:
    tc_sched_free(c);
    return TC_ERR_NOMEM;
}

double tc_ph_breakdown_sum(const tc_ph_breakdown *b)
{
    return b->latency + b->bandwidth + b->congestion + b->dilation + b->reconfig;
}

void tc_ph_breakdown_add(tc_ph_breakdown *a, const tc_ph_breakdown *b)
{
    a->latency += b->latency;
    a->bandwidth += b->bandwidth;
    a->congestion += b->congestion;
    a->dilation += b->dilation;
    a->reconfig += b->reconfig;
}

void tc_sched_photonic_free(tc_sched_photonic *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_fallbacks; i++)
        free(p->fallbacks[i]);
    free(p->fallbacks);
    free(p->rounds);
    free(p->circuits);
    free(p->ints);
    free(p);
}

/* malloc'd copy of n elements (NULL for none); *ok cleared when memory runs out. */
static void *dup_array(const void *a, int n, size_t elem, int *ok)
{
    if (n <= 0 || !a)
        return NULL;
    void *c = malloc((size_t)n * elem);
    if (!c)
        *ok = 0;
    else
        memcpy(c, a, (size_t)n * elem);
    return c;
}

tc_status tc_sched_photonic_clone(const tc_sched_photonic *p, tc_sched_photonic **out)
{
    tc_sched_photonic *c = calloc(1, sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    *c = *p;
    int ok = 1;
    c->rounds = dup_array(p->rounds, p->n_rounds, sizeof *p->rounds, &ok);
    c->circuits = dup_array(p->circuits, p->n_circuits, sizeof *p->circuits, &ok);
    c->ints = dup_array(p->ints, p->n_ints, sizeof *p->ints, &ok);
    c->fallbacks = p->n_fallbacks > 0 ? calloc((size_t)p->n_fallbacks, sizeof *c->fallbacks) : NULL;
    if (p->n_fallbacks > 0 && !c->fallbacks) {
        ok = 0;
        c->n_fallbacks = 0;
    }
    for (int i = 0; ok && i < c->n_fallbacks; i++)
        if (!(c->fallbacks[i] = tc_strdup(p->fallbacks[i])))
            ok = 0;
    if (!ok) {
        tc_sched_photonic_free(c);
        return TC_ERR_NOMEM;
    }
    *out = c;
    return TC_OK;
}

void tc_sched_sparse_free(tc_sched_sparse *p)
{
    if (!p)
        return;
    free(p->fmt);
    free(p);
}

tc_status tc_sched_sparse_clone(const tc_sched_sparse *p, tc_sched_sparse **out)
{
    tc_sched_sparse *c = calloc(1, sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    *c = *p;
    int ok = 1;
    c->fmt = dup_array(p->fmt, p->n, 1, &ok);
    if (!ok) {
        free(c);
        return TC_ERR_NOMEM;
    }
    *out = c;
    return TC_OK;
}
