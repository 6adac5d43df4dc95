/* tacos-run's replay of MSCCL++ execution plans (man 1 tacos-run, MSCCL++ PLANS).
 *
 * Each rank runs its gpu's thread blocks cooperatively in one thread, each as far as it can go.  What a
 * GPU does through peer memory is emulated with MPI messages on one tag, which MPI keeps in order between
 * two ranks: a put is a DATA message the owner applies to its buffer when it polls; a signal is a SIGNAL
 * message naming the sender's channel tag (the executor pairs the k-th channel between two ranks with the
 * k-th on the other side, executor.cc setupConnections), so data put before a signal is in place before
 * the signal counts; a get is a GETREQ answered by the owner with GETRESP.  Waits, barriers and device
 * semaphores block as the executor's do.  A run ends with a non-blocking barrier during which every rank
 * still serves reads, and starts with a barrier, so no message of one run meets a rank in another.
 * Memory goes through the backend's hooks (host, or CUDA staged through host memory). */
#include "exec.h"
#include "tacos/mscclpp.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { M_DATA = 1, M_SIGNAL, M_GETREQ, M_GETRESP };
#define MPP_TAG 4242

typedef struct {
    int kind, type, tag, req;   /* req: tb * MAX_BUFS + source index of a read; DATA: 1 for LL packets */
    uint64_t off, bytes;
} hdr;

struct tc_exec_mpp {
    tc_ctx *ctx;
    const tc_mscclpp *p;
    const tc_mscclpp_gpu *g;
    int rank;
    tc_exec_backend *be;
    MPI_Comm comm;
    tc_exec_run_opts o;
    size_t es, ub, opb;          /* element size, bytes per chunk, most bytes one buffer reference names */
    char *bufs[3];
    int *tag;                    /* per channel of this gpu: its per-peer tag */
    long *inbound, *taken;       /* per channel */
    int *pc, *bgen, *stage, *pending; /* per tb */
    unsigned char *ready;        /* per scratch chunk: LL packets written there in this run */
    int bar_n[TC_MSCCLPP_MAX_DEVICE_SYNCERS], bar_gen[TC_MSCCLPP_MAX_DEVICE_SYNCERS];
    int sem[TC_MSCCLPP_MAX_DEVICE_SEMAPHORES];
    char **fetched;              /* per tb: host memory for the chunks its reads fetched */
    char *hstage;                /* host: one reference's bytes */
    void *acc, *tmp;             /* backend: a reduction's accumulator and operand */
    MPI_Request *reqs;
    void **sbuf;
    int nreq, capreq;
};

static int tbop_is(const tc_mscclpp_op *op, const char *n)
{
    return !strcmp(tc_mscclpp_op_at((size_t)op->op)->name, n);
}

void tc_exec_mpp_free(tc_exec_mpp *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nreq; i++) {
        MPI_Wait(&m->reqs[i], MPI_STATUS_IGNORE);
        free(m->sbuf[i]);
    }
    for (int t = 0; m->fetched && t < m->g->n_tbs; t++)
        free(m->fetched[t]);
    free(m->fetched);
    free(m->tag);
    free(m->inbound);
    free(m->taken);
    free(m->pc);
    free(m->bgen);
    free(m->stage);
    free(m->pending);
    free(m->ready);
    free(m->hstage);
    if (m->acc)
        m->be->release(m->be, m->acc);
    if (m->tmp)
        m->be->release(m->be, m->tmp);
    free(m->reqs);
    free(m->sbuf);
    free(m);
}

tc_status tc_exec_mpp_create(tc_ctx *ctx, const tc_mscclpp *p, int rank, tc_exec_backend *be, MPI_Comm comm,
                             const tc_exec_run_opts *o, tc_exec_mpp **out)
{
    tc_exec_mpp *m = calloc(1, sizeof *m);
    if (!m)
        return TC_ERR_NOMEM;
    const tc_mscclpp_gpu *g = &p->gpus[rank];
    *m = (tc_exec_mpp){.ctx = ctx, .p = p, .g = g, .rank = rank, .be = be, .comm = comm, .o = *o};
    m->es = tc_exec_dtype_size(o->dtype);
    m->ub = o->chunk_elems * m->es;
    int most = 1;
    for (int t = 0; t < g->n_tbs; t++)
        for (int k = 0; k < g->tbs[t].n_ops; k++) {
            const tc_mscclpp_op *op = &g->tbs[t].ops[k];
            for (int i = 0; i < op->n_src; i++)
                most = op->src[i].size > most ? op->src[i].size : most;
            for (int i = 0; i < op->n_dst; i++)
                most = op->dst[i].size > most ? op->dst[i].size : most;
        }
    m->opb = (size_t)most * m->ub;
    size_t nt = (size_t)g->n_tbs + 1, nc = (size_t)g->n_chans + 1;
    m->tag = calloc(nc, sizeof *m->tag);
    m->inbound = calloc(nc, sizeof *m->inbound);
    m->taken = calloc(nc, sizeof *m->taken);
    m->pc = calloc(nt, sizeof *m->pc);
    m->bgen = calloc(nt, sizeof *m->bgen);
    m->stage = calloc(nt, sizeof *m->stage);
    m->pending = calloc(nt, sizeof *m->pending);
    m->fetched = calloc(nt, sizeof *m->fetched);
    m->ready = calloc((size_t)g->s_chunks + 1, 1);
    m->hstage = malloc(m->opb + sizeof(hdr));
    m->acc = be->alloc(be, m->opb);
    m->tmp = be->alloc(be, m->opb);
    int *cnt = calloc((size_t)p->ngpus, sizeof *cnt);
    if (!m->tag || !m->inbound || !m->taken || !m->pc || !m->bgen || !m->stage || !m->pending || !m->fetched || !m->ready ||
        !m->hstage || !m->acc || !m->tmp || !cnt) {
        free(cnt);
        tc_exec_mpp_free(m);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "rank %d: no memory for the MSCCL++ replay", rank);
    }
    tc_mscclpp_chan_tags(g, cnt, m->tag); /* the executor's pairing of channels */
    free(cnt);
    *out = m;
    return TC_OK;
}

/* ---- messages ---------------------------------------------------------------------------------------- */

static tc_status post(tc_exec_mpp *m, int to, const hdr *h, const void *data_be, const void *data_host)
{
    if (m->nreq == m->capreq) {
        int cap = m->capreq ? 2 * m->capreq : 64;
        MPI_Request *r = realloc(m->reqs, (size_t)cap * sizeof *r);
        void **b = r ? realloc(m->sbuf, (size_t)cap * sizeof *b) : NULL;
        if (r)
            m->reqs = r;
        if (!b)
            return TC_ERR_NOMEM;
        m->sbuf = b;
        m->capreq = cap;
    }
    char *buf = malloc(sizeof *h + h->bytes);
    if (!buf)
        return TC_ERR_NOMEM;
    memcpy(buf, h, sizeof *h);
    if (data_be && h->bytes)
        m->be->download(m->be, buf + sizeof *h, data_be, h->bytes);
    else if (data_host && h->bytes)
        memcpy(buf + sizeof *h, data_host, h->bytes);
    if (MPI_Isend(buf, (int)(sizeof *h + h->bytes), MPI_BYTE, to, MPP_TAG, m->comm, &m->reqs[m->nreq]) != MPI_SUCCESS) {
        free(buf);
        return tc_error(m->ctx, TC_ERR_INTERNAL, NULL, 0, "rank %d: MPI_Isend to rank %d failed", m->rank, to);
    }
    m->sbuf[m->nreq++] = buf;
    return TC_OK;
}

static void reap(tc_exec_mpp *m)
{
    for (int i = 0; i < m->nreq;) {
        int done = 0;
        MPI_Test(&m->reqs[i], &done, MPI_STATUS_IGNORE);
        if (done) {
            free(m->sbuf[i]);
            m->reqs[i] = m->reqs[--m->nreq];
            m->sbuf[i] = m->sbuf[m->nreq];
        } else
            i++;
    }
}

static int chan_by_tag(const tc_exec_mpp *m, int peer, int tag)
{
    for (int i = 0; i < m->g->n_chans; i++)
        if (m->g->chans[i].peer == peer && m->tag[i] == tag && m->g->chans[i].type < TC_MSCCLPP_CH_SWITCH)
            return i;
    return -1;
}

/* take every message that has arrived; *got: some did */
static tc_status poll(tc_exec_mpp *m, int *got)
{
    for (;;) {
        int flag = 0, n = 0;
        MPI_Status s;
        MPI_Iprobe(MPI_ANY_SOURCE, MPP_TAG, m->comm, &flag, &s);
        if (!flag)
            return TC_OK;
        MPI_Get_count(&s, MPI_BYTE, &n);
        char *buf = malloc((size_t)n);
        if (!buf)
            return TC_ERR_NOMEM;
        MPI_Recv(buf, n, MPI_BYTE, s.MPI_SOURCE, MPP_TAG, m->comm, MPI_STATUS_IGNORE);
        hdr h;
        memcpy(&h, buf, sizeof h);
        tc_status st = TC_OK;
        *got = 1;
        if (h.kind == M_DATA) {
            m->be->upload(m->be, m->bufs[h.type] + h.off, buf + sizeof h, h.bytes);
            if (h.req && h.type == TC_MS_BUF_S) /* LL packets: their flag is this run's */
                memset(m->ready + h.off / m->ub, 1, h.bytes / m->ub);
        } else if (h.kind == M_SIGNAL) {
            int c = chan_by_tag(m, s.MPI_SOURCE, h.tag);
            if (c < 0)
                st = tc_error(m->ctx, TC_ERR_INTERNAL, NULL, 0,
                              "rank %d: a signal from rank %d on channel tag %d, which this gpu does not declare",
                              m->rank, s.MPI_SOURCE, h.tag);
            else
                m->inbound[c]++;
        } else if (h.kind == M_GETREQ) {
            hdr r = {M_GETRESP, h.type, 0, h.req, h.off, h.bytes};
            st = post(m, s.MPI_SOURCE, &r, m->bufs[h.type] + h.off, NULL);
        } else if (h.kind == M_GETRESP) {
            int t = h.req / TC_MSCCLPP_MAX_BUFS, j = h.req % TC_MSCCLPP_MAX_BUFS;
            memcpy(m->fetched[t] + (size_t)j * m->opb, buf + sizeof h, h.bytes);
            m->pending[t]--;
        }
        free(buf);
        if (st)
            return st;
    }
}

/* ---- operations ------------------------------------------------------------------------------------- */

static const tc_mscclpp_rbuf *remote(const tc_exec_mpp *m, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op,
                                     const tc_mscclpp_buf *b)
{
    return &m->g->rbufs[tb->rb[op->chan_type][b->id]];
}

static char *local(const tc_exec_mpp *m, const tc_mscclpp_buf *b)
{
    return m->bufs[b->type] + (size_t)b->index * m->ub;
}

static tc_status put_to(tc_exec_mpp *m, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, const tc_mscclpp_buf *d,
                        const void *src_be)
{
    const tc_mscclpp_rbuf *rb = remote(m, tb, op, d);
    hdr h = {M_DATA, rb->type, 0, tc_mscclpp_op_at((size_t)op->op)->packets, (uint64_t)d->index * m->ub,
             (uint64_t)d->size * m->ub};
    return post(m, rb->rank, &h, src_be, NULL);
}

static tc_status signal_chans(tc_exec_mpp *m, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op)
{
    tc_status st = TC_OK;
    for (int i = 0; i < op->n_chan && !st; i++) {
        int c = tc_mscclpp_op_chan(m->g, tb, op, i);
        hdr h = {M_SIGNAL, 0, m->tag[c], 0, 0, 0};
        st = post(m, m->g->chans[c].peer, &h, NULL, NULL);
    }
    return st;
}

/* a read of remote chunks: requests first (stage 1), the op runs once every answer is in */
static tc_status fetch(tc_exec_mpp *m, int t, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, int from, int *blocked)
{
    if (m->stage[t] == 0) {
        if (!m->fetched[t] && !(m->fetched[t] = malloc(m->opb * TC_MSCCLPP_MAX_BUFS)))
            return TC_ERR_NOMEM;
        for (int i = from; i < op->n_src; i++) {
            const tc_mscclpp_rbuf *rb = remote(m, tb, op, &op->src[i]);
            hdr h = {M_GETREQ, rb->type, 0, t * TC_MSCCLPP_MAX_BUFS + i, (uint64_t)op->src[i].index * m->ub,
                     (uint64_t)op->src[i].size * m->ub};
            m->pending[t]++;
            tc_status st = post(m, rb->rank, &h, NULL, NULL);
            if (st)
                return st;
        }
        m->stage[t] = 1;
    }
    *blocked = m->pending[t] > 0;
    return TC_OK;
}

/* acc = src[0] + the other sources (local, or fetched when remote); then the destinations */
static tc_status reduce(tc_exec_mpp *m, int t, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op)
{
    size_t bytes = (size_t)op->src[0].size * m->ub, n = bytes / m->es;
    m->be->copy(m->be, m->acc, local(m, &op->src[0]), bytes);
    for (int i = 1; i < op->n_src; i++) {
        const void *b = op->src[i].type >= 0 ? local(m, &op->src[i]) : m->tmp;
        if (op->src[i].type < 0)
            m->be->upload(m->be, m->tmp, m->fetched[t] + (size_t)i * m->opb, bytes);
        m->be->reduce(m->be, m->o.dtype, m->o.op, m->acc, m->acc, b, n);
    }
    tc_status st = TC_OK;
    for (int i = 0; i < op->n_dst && !st; i++)
        if (op->dst[i].type >= 0)
            m->be->copy(m->be, local(m, &op->dst[i]), m->acc, bytes);
        else
            st = put_to(m, tb, op, &op->dst[i], m->acc);
    return st;
}

/* LL packet operations on memory channels (the verifier's model, mscclpp/verify.c exec_packets): packets
 * are scratch chunks marked ready when written in this run; reading one waits for the mark */
static int pkt_ready(const tc_exec_mpp *m, const tc_mscclpp_buf *b)
{
    for (int u = 0; u < b->size; u++)
        if (b->type != TC_MS_BUF_S || !m->ready[b->index + u])
            return 0;
    return 1;
}

static tc_status packets(tc_exec_mpp *m, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, int *blocked)
{
    for (int i = tc_mscclpp_first_packet_src(op); i < op->n_src; i++)
        if (!pkt_ready(m, &op->src[i])) {
            *blocked = 1;
            return TC_OK;
        }
    size_t bytes = (size_t)op->src[0].size * m->ub;
    tc_status st = TC_OK;
    if (tbop_is(op, "ppkt") || tbop_is(op, "cpkt") || tbop_is(op, "rppkt") || tbop_is(op, "upkt")) {
        for (int i = 0; i < op->n_dst && !st; i++) {
            const void *src = local(m, &op->src[tbop_is(op, "ppkt") ? i : 0]);
            if (op->dst[i].type < 0)
                st = put_to(m, tb, op, &op->dst[i], src);
            else {
                m->be->copy(m->be, local(m, &op->dst[i]), src, bytes);
                if (!tbop_is(op, "upkt"))
                    memset(m->ready + op->dst[i].index, 1, (size_t)op->dst[i].size);
            }
        }
        return st;
    }
    size_t n_el = bytes / m->es; /* repkt respkt recpkt recspkt: acc = src[0] + packets src[1..] */
    m->be->copy(m->be, m->acc, local(m, &op->src[0]), bytes);
    for (int i = 1; i < op->n_src; i++)
        m->be->reduce(m->be, m->o.dtype, m->o.op, m->acc, m->acc, local(m, &op->src[i]), n_el);
    for (int i = 0; i < op->n_dst && !st; i++) {
        if (i > 0 && tbop_is(op, "repkt"))
            break;
        if (op->dst[i].type < 0)
            st = put_to(m, tb, op, &op->dst[i], m->acc);
        else {
            m->be->copy(m->be, local(m, &op->dst[i]), m->acc, bytes);
            if (i > 0)
                memset(m->ready + op->dst[i].index, 1, (size_t)op->dst[i].size);
        }
    }
    return st;
}

static tc_status exec_op(tc_exec_mpp *m, int t, int *blocked)
{
    const tc_mscclpp_tb *tb = &m->g->tbs[t];
    const tc_mscclpp_op *op = &tb->ops[m->pc[t]];
    tc_status st = TC_OK;
    *blocked = 0;
    if (tbop_is(op, "wait") || tbop_is(op, "rlxwait")) {
        for (int i = 0; i < op->n_chan; i++) {
            int c = tc_mscclpp_op_chan(m->g, tb, op, i);
            if (m->inbound[c] <= m->taken[c]) {
                *blocked = 1;
                return TC_OK;
            }
        }
        for (int i = 0; i < op->n_chan; i++)
            m->taken[tc_mscclpp_op_chan(m->g, tb, op, i)]++;
    } else if (tbop_is(op, "signal") || tbop_is(op, "rlxsignal")) {
        st = signal_chans(m, tb, op);
    } else if (tbop_is(op, "put") || tbop_is(op, "pws") || tbop_is(op, "pwsf")) {
        for (int i = 0; i < op->n_dst && !st; i++)
            st = put_to(m, tb, op, &op->dst[i], local(m, &op->src[i]));
        if (!st && !tbop_is(op, "put"))
            st = signal_chans(m, tb, op);
    } else if (tbop_is(op, "copy")) {
        m->be->copy(m->be, local(m, &op->dst[0]), local(m, &op->src[0]), (size_t)op->src[0].size * m->ub);
    } else if (tbop_is(op, "get")) {
        if ((st = fetch(m, t, tb, op, 0, blocked)) || *blocked)
            return st;
        for (int i = 0; i < op->n_dst; i++)
            m->be->upload(m->be, local(m, &op->dst[i]), m->fetched[t] + (size_t)i * m->opb,
                          (size_t)op->dst[i].size * m->ub);
    } else if (tbop_is(op, "re") || tbop_is(op, "res")) {
        st = reduce(m, t, tb, op);
    } else if (tbop_is(op, "rre") || tbop_is(op, "rres")) {
        if ((st = fetch(m, t, tb, op, 1, blocked)) || *blocked)
            return st;
        st = reduce(m, t, tb, op);
    } else if (tbop_is(op, "barrier")) {
        int *mine = &m->bgen[t];
        if (*mine < 0) {
            *mine = m->bar_gen[op->barrier_id];
            if (++m->bar_n[op->barrier_id] == op->n_tbs) {
                m->bar_n[op->barrier_id] = 0;
                m->bar_gen[op->barrier_id]++;
            }
        }
        if (*mine == m->bar_gen[op->barrier_id]) {
            *blocked = 1;
            return TC_OK;
        }
        *mine = -1;
    } else if (tbop_is(op, "sem_acquire")) {
        for (int i = 0; i < op->n_sem; i++)
            if (m->sem[op->sem[i]] <= 0) {
                *blocked = 1;
                return TC_OK;
            }
        for (int i = 0; i < op->n_sem; i++)
            m->sem[op->sem[i]]--;
    } else if (tbop_is(op, "sem_release")) {
        for (int i = 0; i < op->n_sem; i++)
            m->sem[op->sem[i]]++;
    } else if (tc_mscclpp_op_at((size_t)op->op)->packets && op->chan_type != TC_MSCCLPP_CH_PORT &&
               !tbop_is(op, "gstorepkt")) {
        if ((st = packets(m, tb, op, blocked)) || *blocked)
            return st;
    } else if (!tbop_is(op, "nop") && !tbop_is(op, "flush")) {
        return tc_error(m->ctx, TC_ERR_UNSUPPORTED, NULL, 0,
                        "rank %d tb %d op %d: tacos-run does not replay '%s' (packets on port channels, NVLS, "
                        "pipelines)", m->rank,
                        tb->id, m->pc[t], tc_mscclpp_op_at((size_t)op->op)->name);
    }
    m->stage[t] = 0;
    m->pc[t]++;
    return st;
}

tc_status tc_exec_mpp_run(tc_exec_mpp *m, void *bufs[3])
{
    const tc_mscclpp_gpu *g = m->g;
    for (int b = 0; b < 3; b++)
        m->bufs[b] = bufs[b];
    for (int t = 0; t < g->n_tbs; t++) {
        m->pc[t] = m->stage[t] = m->pending[t] = 0;
        m->bgen[t] = -1;
    }
    memset(m->bar_n, 0, sizeof m->bar_n);
    memset(m->ready, 0, (size_t)g->s_chunks);
    for (int i = 0; i < TC_MSCCLPP_MAX_DEVICE_SEMAPHORES; i++)
        m->sem[i] = i < g->n_sems ? g->sem_init[i] : 0;
    int left = 0, idle = 0;
    for (int t = 0; t < g->n_tbs; t++)
        left += g->tbs[t].n_ops > 0;
    /* no rank's messages of this run reach a rank still setting up its buffers for it */
    MPI_Barrier(m->comm);
    double last = tc_now();
    tc_status st = TC_OK;
    while (left > 0 && !st) {
        int progress = 0;
        st = poll(m, &progress);
        for (int t = 0; t < g->n_tbs && !st; t++)
            while (m->pc[t] < g->tbs[t].n_ops && !st) {
                int blocked;
                st = exec_op(m, t, &blocked);
                if (blocked)
                    break;
                progress = 1;
                left -= m->pc[t] == g->tbs[t].n_ops;
            }
        reap(m);
        if (progress) {
            idle = 0;
            last = tc_now();
        } else if (++idle > 64) {
            if (m->o.idle_sleep_us)
                usleep((useconds_t)m->o.idle_sleep_us);
            else
                sched_yield();
            if (m->o.timeout > 0 && tc_now() - last > m->o.timeout) {
                for (int t = 0; t < g->n_tbs; t++)
                    if (m->pc[t] < g->tbs[t].n_ops)
                        return tc_error(m->ctx, TC_ERR_INTERNAL, NULL, 0,
                                        "rank %d: no progress for %.0f s; tb %d waits at op %d '%s'", m->rank,
                                        m->o.timeout, t, m->pc[t],
                                        tc_mscclpp_op_at((size_t)g->tbs[t].ops[m->pc[t]].op)->name);
            }
        }
    }
    /* the end: every send delivered and every rank done, reads still served meanwhile */
    MPI_Request bar;
    int done = 0, got = 0;
    while (!st && m->nreq > 0) {
        st = poll(m, &got);
        reap(m);
    }
    if (!st)
        MPI_Ibarrier(m->comm, &bar);
    while (!st && !done) {
        st = poll(m, &got);
        reap(m);
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
    }
    return st;
}
