/* Logical plans of the classic generators and the builders they share (see classic.h). */
#include "classic.h"

#include "tacos/topo.h"

#include <stdlib.h>
#include <string.h>

tc_status tc_algo_lplan_add(tc_lplan *p, int src, int dst, int chunk, int step, tc_op op)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 256;
        tc_lx *x = realloc(p->x, (size_t)cap * sizeof *x);
        if (!x)
            return TC_ERR_NOMEM;
        p->x = x;
        p->cap = cap;
    }
    p->x[p->n++] = (tc_lx){src, dst, chunk, step, (int)op};
    if (step + 1 > p->n_steps)
        p->n_steps = step + 1;
    return TC_OK;
}

void tc_algo_lplan_free(tc_lplan *p)
{
    free(p->x);
    memset(p, 0, sizeof *p);
}

tc_status tc_algo_lplan_append(tc_lplan *p, const tc_lplan *q, int offset, int op)
{
    for (int i = 0; i < q->n; i++) {
        const tc_lx *x = &q->x[i];
        tc_status st = tc_algo_lplan_add(p, x->src, x->dst, x->chunk, x->step + offset, op >= 0 ? op : x->op);
        if (st)
            return st;
    }
    return TC_OK;
}

tc_status tc_algo_lplan_append_reversed(tc_lplan *p, const tc_lplan *q, int offset, tc_op op)
{
    for (int i = 0; i < q->n; i++) {
        const tc_lx *x = &q->x[i];
        tc_status st = tc_algo_lplan_add(p, x->dst, x->src, x->chunk, offset + q->n_steps - 1 - x->step, op);
        if (st)
            return st;
    }
    return TC_OK;
}

tc_status tc_algo_lplan_compose(tc_lplan *out, const tc_lplan *ag, tc_coll coll)
{
    switch (coll) {
    case TC_COLL_ALLGATHER: return tc_algo_lplan_append(out, ag, out->n_steps, TC_OP_COPY);
    case TC_COLL_REDUCESCATTER: return tc_algo_lplan_append_reversed(out, ag, out->n_steps, TC_OP_REDUCE);
    case TC_COLL_ALLREDUCE: {
        tc_status st = tc_algo_lplan_append_reversed(out, ag, out->n_steps, TC_OP_REDUCE);
        return st ? st : tc_algo_lplan_append(out, ag, out->n_steps, TC_OP_COPY);
    }
    default: return TC_ERR_UNSUPPORTED;
    }
}

static int cmp_lx(const void *pa, const void *pb)
{
    const tc_lx *a = pa, *b = pb;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->chunk != b->chunk) return a->chunk < b->chunk ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

tc_status tc_algo_lplan_emit(tc_ctx *ctx, const tc_topo *topo, const tc_lplan *p, tc_coll coll, int K,
                             const tc_gen_opts *opts, const char *name, tc_sched **out)
{
    tc_sched *s = NULL;
    tc_lx *x = NULL;
    tc_algo_router rt = {0};
    tc_status st = tc_sched_create(coll, topo->n_npus, K, opts->size, &s);
    if (st)
        return st;
    if ((st = tc_algo_router_init(&rt, topo)))
        goto fail;
    if (tc_coll_rooted(coll))
        s->root = opts->root;
    if (p->n && !(x = malloc((size_t)p->n * sizeof *x))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    if (p->n)
        memcpy(x, p->x, (size_t)p->n * sizeof *x);
    qsort(x, (size_t)p->n, sizeof *x, cmp_lx);
    if ((st = tc_sched_reserve(s, p->n)))
        goto fail;
    const double w = (double)s->chunk_bytes;
    double T = 0;
    for (int i = 0; i < p->n;) {
        const int step = x[i].step;
        double D = 0;
        while (i < p->n && x[i].step == step) {
            const int src = x[i].src, dst = x[i].dst;
            int j = i;
            while (j < p->n && x[j].step == step && x[j].src == src && x[j].dst == dst)
                j++;
            double a, b;
            if (tc_algo_router_cost(&rt, src, dst, w, &a, &b)) {
                st = tc_error(ctx, TC_ERR_UNSUPPORTED, topo->file, 0, "%s: npu %d cannot reach npu %d", name,
                              src, dst);
                goto fail;
            }
            const double d = a + b * w;
            for (int k = i; k < j; k++) {
                const double t0 = T + (double)(k - i) * d, t1 = T + (double)(k - i + 1) * d;
                if ((st = tc_algo_router_add(&rt, s, src, dst, x[k].chunk, (tc_op)x[k].op, step, t0, t1)))
                    goto fail;
            }
            if ((double)(j - i) * d > D)
                D = (double)(j - i) * d;
            i = j;
        }
        T += D;
    }
    s->time = tc_sched_makespan(s);
    tc_sched_sort(s);
    if ((st = tc_sched_set_names(s, name, topo->name)))
        goto fail;
    free(x);
    tc_algo_router_fini(&rt);
    *out = s;
    return TC_OK;
fail:
    free(x);
    tc_algo_router_fini(&rt);
    tc_sched_free(s);
    return st;
}

tc_status tc_algo_exchange_ag(tc_lplan *out, int p, int n_steps, tc_peer_fn peer, void *user, const int *real,
                              const int *off, const int *chunks, int step0)
{
    unsigned char *held = calloc((size_t)p * p, 1), *next = malloc((size_t)p * p);
    tc_status st = TC_OK;
    if (!held || !next) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int v = 0; v < p; v++)
        held[(size_t)v * p + v] = 1;
    for (int k = 0; k < n_steps; k++) {
        memcpy(next, held, (size_t)p * p);
        for (int v = 0; v < p; v++) {
            int q = peer(v, k, p, user);
            if (q < 0 || q == v)
                continue;
            if (q >= p || peer(q, k, p, user) != v) {
                st = TC_ERR_UNSUPPORTED;
                goto done;
            }
            for (int b = 0; b < p; b++) {
                if (!held[(size_t)v * p + b] || held[(size_t)q * p + b])
                    continue;
                next[(size_t)q * p + b] = 1;
                for (int c = off[b]; c < off[b + 1]; c++)
                    if ((st = tc_algo_lplan_add(out, real[v], real[q], chunks[c], step0 + k, TC_OP_COPY)))
                        goto done;
            }
        }
        memcpy(held, next, (size_t)p * p);
    }
    for (size_t i = 0; i < (size_t)p * p; i++)
        if (!held[i]) {
            st = TC_ERR_UNSUPPORTED;
            break;
        }
done:
    free(held);
    free(next);
    return st;
}

int tc_algo_peer_rd(int v, int k, int p, void *user)
{
    (void)p;
    (void)user;
    return v ^ (1 << k);
}

int tc_algo_log2(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}

tc_status tc_algo_fold_ag(tc_lplan *out, int n, const int *ranks, const int *off, const int *chunks,
                          tc_peer_fn peer, void *user, int step0, int *used)
{
    const int p = tc_algo_pow2_floor(n), rem = n - p, L = tc_algo_log2(p);
    int step = step0;
    tc_status st = TC_OK;
    int *real = malloc((size_t)p * sizeof *real), *voff = malloc(((size_t)p + 1) * sizeof *voff);
    int *vch = malloc(((size_t)off[n] - off[0] + 1) * sizeof *vch);
    if (!real || !voff || !vch) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    /* survivors and their (merged) blocks */
    int nc = 0;
    for (int v = 0; v < p; v++) {
        const int first = v < rem ? 2 * v : v + rem, last = v < rem ? 2 * v + 1 : v + rem;
        real[v] = ranks[last];
        voff[v] = nc;
        for (int m = first; m <= last; m++)
            for (int c = off[m]; c < off[m + 1]; c++)
                vch[nc++] = chunks[c];
    }
    voff[p] = nc;
    if (rem > 0) {
        for (int v = 0; v < rem; v++)
            for (int c = off[2 * v]; c < off[2 * v + 1]; c++)
                if ((st = tc_algo_lplan_add(out, ranks[2 * v], ranks[2 * v + 1], chunks[c], step, TC_OP_COPY)))
                    goto done;
        step++;
    }
    if ((st = tc_algo_exchange_ag(out, p, L, peer, user, real, voff, vch, step)))
        goto done;
    step += L;
    if (rem > 0) {
        for (int v = 0; v < rem; v++)
            for (int m = 0; m < n; m++)
                if (m != 2 * v)
                    for (int c = off[m]; c < off[m + 1]; c++)
                        if ((st = tc_algo_lplan_add(out, ranks[2 * v + 1], ranks[2 * v], chunks[c], step,
                                                    TC_OP_COPY)))
                            goto done;
        step++;
    }
    *used = step - step0;
done:
    free(real);
    free(voff);
    free(vch);
    return st;
}

int tc_algo_pow2_floor(int n)
{
    int p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}
