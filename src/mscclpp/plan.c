/* The MSCCL++ plan object: release, and the appenders the lowering and the reader share. */
#include "mscclpp_int.h"

#include <stdlib.h>
#include <string.h>

void tc_mscclpp_free(tc_mscclpp *p)
{
    if (!p)
        return;
    for (int g = 0; p->gpus && g < p->ngpus; g++) {
        tc_mscclpp_gpu *gp = &p->gpus[g];
        for (int t = 0; t < gp->n_tbs; t++) {
            tc_mscclpp_tb *tb = &gp->tbs[t];
            for (int k = 0; k < 3; k++)
                free(tb->ch[k]);
            for (int k = 0; k < 2; k++)
                free(tb->rb[k]);
            free(tb->ops);
        }
        free(gp->tbs);
        free(gp->chans);
        free(gp->rbufs);
        free(gp->sem_init);
    }
    free(p->gpus);
    free(p->name);
    free(p->collective);
    free(p);
}

tc_status mpp_create(const char *name, const char *coll, int ngpus, tc_mscclpp **out)
{
    tc_mscclpp *p = calloc(1, sizeof *p);
    if (!p)
        return TC_ERR_NOMEM;
    p->name = tc_strdup(name);
    p->collective = tc_strdup(coll);
    p->gpus = ngpus > 0 ? calloc((size_t)ngpus, sizeof *p->gpus) : NULL;
    if (!p->name || !p->collective || (ngpus > 0 && !p->gpus)) {
        tc_mscclpp_free(p);
        return TC_ERR_NOMEM;
    }
    tc_coll c;
    p->coll = tc_coll_parse(coll, &c) == TC_OK ? (int)c : -1;
    p->ngpus = ngpus;
    p->threads = TC_MSCCLPP_DEFAULT_THREADS_PER_BLOCK;
    p->alignment = TC_MSCCLPP_DEFAULT_ALIGNMENT;
    p->max_bytes = UINT64_MAX;
    for (int g = 0; g < ngpus; g++)
        p->gpus[g].id = g;
    *out = p;
    return TC_OK;
}

tc_status mpp_tb_add(tc_mscclpp_gpu *g, tc_mscclpp_tb **out)
{
    tc_status st = tc_grow((void **)&g->tbs, &g->cap_tbs, g->n_tbs + 1, sizeof *g->tbs);
    if (st)
        return st;
    tc_mscclpp_tb *tb = &g->tbs[g->n_tbs];
    memset(tb, 0, sizeof *tb);
    tb->id = g->n_tbs++;
    *out = tb;
    return TC_OK;
}

tc_status mpp_op_add(tc_mscclpp_tb *tb, const tc_mscclpp_op *op)
{
    tc_status st = tc_grow((void **)&tb->ops, &tb->cap_ops, tb->n_ops + 1, sizeof *tb->ops);
    if (!st)
        tb->ops[tb->n_ops++] = *op;
    return st;
}

void mpp_op_init(tc_mscclpp_op *op, const char *name)
{
    memset(op, 0, sizeof *op);
    const tc_mscclpp_op_info *info = tc_mscclpp_op_find(name);
    for (size_t i = 0; info && i < tc_mscclpp_op_count(); i++)
        if (tc_mscclpp_op_at(i) == info)
            op->op = (int)i;
    op->chan_type = -1;
    op->barrier_id = -1;
    op->tbg_size = 1;
}

const char *mpp_op_name(const tc_mscclpp_op *op) { return tc_mscclpp_op_at((size_t)op->op)->name; }

tc_status mpp_chan_add(tc_mscclpp_gpu *g, int type, int peer, int buf, int line)
{
    tc_status st = tc_grow((void **)&g->chans, &g->cap_chans, g->n_chans + 1, sizeof *g->chans);
    if (!st)
        g->chans[g->n_chans++] = (tc_mscclpp_chan){type, peer, buf, line};
    return st;
}

tc_status mpp_rbuf_add(tc_mscclpp_gpu *g, int rank, int type, int access, int line)
{
    tc_status st = tc_grow((void **)&g->rbufs, &g->cap_rbufs, g->n_rbufs + 1, sizeof *g->rbufs);
    if (!st)
        g->rbufs[g->n_rbufs++] = (tc_mscclpp_rbuf){rank, type, access, line};
    return st;
}

tc_status mpp_int_push(int **a, int *n, int v)
{
    int *b = realloc(*a, (size_t)(*n + 1) * sizeof **a);
    if (!b)
        return TC_ERR_NOMEM;
    b[(*n)++] = v;
    *a = b;
    return TC_OK;
}

int tc_mscclpp_chan_index(const tc_mscclpp_gpu *g, int type, int k)
{
    for (int i = 0; i < g->n_chans; i++)
        if (g->chans[i].type == type && k-- == 0)
            return i;
    return -1;
}

int tc_mscclpp_op_chan(const tc_mscclpp_gpu *g, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, int i)
{
    return tc_mscclpp_chan_index(g, op->chan_type, tb->ch[op->chan_type][op->chan[i]]);
}

void tc_mscclpp_chan_tags(const tc_mscclpp_gpu *g, int *cnt, int *tag)
{
    for (int i = 0; i < g->n_chans; i++)
        tag[i] = -1;
    for (int t = TC_MSCCLPP_CH_MEMORY; t <= TC_MSCCLPP_CH_PORT; t++)
        for (int i = 0; i < g->n_chans; i++)
            if (g->chans[i].type == t)
                tag[i] = cnt[g->chans[i].peer]++;
    for (int i = 0; i < g->n_chans; i++)
        if (tag[i] >= 0)
            cnt[g->chans[i].peer] = 0;
}

int tc_mscclpp_first_packet_src(const tc_mscclpp_op *op)
{
    const char *n = mpp_op_name(op);
    if (!tc_mscclpp_op_at((size_t)op->op)->packets || !strcmp(n, "ppkt") || !strcmp(n, "cpkt"))
        return op->n_src;
    return n[0] == 'r' && n[1] == 'e' ? 1 : 0;
}

/* The thread-sync rule.  The executor runs a thread block's operations back to back with no barrier
 * between them (executionKernel's loop in src/core/include/execution_kernel.hpp); a nop is
 * __syncthreads().  Data operations spread their bytes over all threads; signal, wait, flush, the port
 * puts and the semaphores run on threads 0..n-1 only.  So a signal that publishes data written by all
 * threads, or data read after a wait, needs a nop between; so do two data operations on one local chunk. */
static int is_data(const tc_mscclpp_op *op)
{
    const tc_mscclpp_op_info *i = tc_mscclpp_op_at((size_t)op->op);
    if (i->kind == TC_MSCCLPP_OP_SYNC)
        return 0;
    return !(op->chan_type == TC_MSCCLPP_CH_PORT && (!strcmp(i->name, "put") || !strcmp(i->name, "pws") ||
                                                      !strcmp(i->name, "pwsf")));
}

static int is_publish(const tc_mscclpp_op *op)
{
    const char *n = mpp_op_name(op);
    return !strcmp(n, "signal") || !strcmp(n, "rlxsignal") || !strcmp(n, "sem_release") ||
           (!is_data(op) && (!strcmp(n, "put") || !strcmp(n, "pws") || !strcmp(n, "pwsf")));
}

static int is_acquire(const tc_mscclpp_op *op)
{
    const char *n = mpp_op_name(op);
    return !strcmp(n, "wait") || !strcmp(n, "rlxwait") || !strcmp(n, "sem_acquire") || !strcmp(n, "flush") ||
           !strcmp(n, "pwsf");
}

static int refs_overlap(const tc_mscclpp_buf *a, int na, const tc_mscclpp_buf *b, int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i].type >= 0 && a[i].type == b[j].type && a[i].index < (long)b[j].index + b[j].size &&
                b[j].index < (long)a[i].index + a[i].size)
                return 1;
    return 0;
}

int mpp_need_nop(const tc_mscclpp_op *a, const tc_mscclpp_op *b)
{
    if (is_data(a) && is_publish(b))
        return 1;
    if (is_acquire(a) && is_data(b))
        return 1;
    return is_data(a) && is_data(b) &&
           (refs_overlap(a->dst, a->n_dst, b->src, b->n_src) || refs_overlap(a->dst, a->n_dst, b->dst, b->n_dst) ||
            refs_overlap(a->src, a->n_src, b->dst, b->n_dst));
}
