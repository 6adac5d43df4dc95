/*
 * The replay engine of tacos-run: one rank's MSCCL thread blocks over nonblocking MPI point-to-point.
 *
 * Connections.  An MSCCL connection is (sender, receiver, channel); a rank has at most one tb per
 * (channel, send peer) and per (channel, receive peer), so the MPI triple (source, tag = channel,
 * communicator) names exactly one sending tb and one receiving tb, and MPI's non-overtaking rule keeps
 * the per-connection FIFO order MSCCL relies on.  Every tb posts its receives in step order.
 *
 * Progress.  A loop visits every tb: the current step starts once the step before it in the tb and its
 * cross-tb dependency (depid, deps) are complete; receives of later steps that land in temporaries are
 * posted ahead (opts.prepost steps) so data can arrive while the rank computes.  A send step is complete
 * once its MPI_Isend is posted, as an NCCL send is once its data is in the connection FIFO; the region it
 * reads stays registered until the send completes, and any later step that writes an overlapping region
 * (from any tb) waits for it (write-after-read hazard).  A receive is never held back by such a hazard:
 * an r/rcs whose destination is still being sent lands in a temporary and is copied once the send has
 * drained, so two ranks swapping a chunk in place cannot wait on each other.  After 50 ms without
 * progress a run also posts later r/rcs receives ahead into temporaries (the buffering NCCL's connection
 * FIFO gives), which breaks any remaining wait cycle through send completion.  When nothing moves the
 * loop yields the CPU or sleeps (ranks are often oversubscribed) and gives up after opts.timeout seconds
 * without progress.
 *
 * Step semantics (src/dst = the step's srcbuf/srcoff and dstbuf/dstoff regions, cnt chunks; T = temporary):
 *   s     send src                           r     receive into dst
 *   rcs   receive into dst, send dst         rrs   receive T, T = T op src, send T (nothing stored)
 *   rrc   receive T, dst = T op src          rrcs  receive T, dst = T op src, send dst
 *   cpy   dst = src                          re    dst = dst op src           nop  dependency only
 * With a backend MPI cannot address directly (CUDA without CUDA-aware MPI) every message is staged
 * through host temporaries: download before a send, upload after a receive.
 *
 * Sparse messages (a JSON plan annotated by tacosc --sparsity; SpCCL §IV-B).  A step whose outgoing
 * message has a sparse format encodes its region (or its reduced temporary) into a message of header and
 * payload (include/tacos/sparse.h) and sends that; a step whose incoming message is sparse receives into a
 * temporary as large as the format's largest message (the sender's length comes from the MPI status),
 * then decodes it into dst (r, rcs) or reduces from it: sum adds the nonzeros into dst in place (after
 * dst = src when they differ), other operators decode to a dense temporary and reduce.  An rcs that
 * forwards in the format it received sends the message on unchanged, as SpCCL's all-gather forwards the
 * compressed shard around the ring.  A message that does not decode (corrupted, truncated) is reported
 * once, names the sender, and leaves dst as it was; the replay goes on, so that every rank finishes and
 * the failure is agreed on (tc_exec_engine_soft) instead of a rank hanging in a receive.
 */
#include "exec.h"

#include <limits.h>
#include <stdint.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- plan ------------------------------------------------------------------------------------------ */

static int type_recvs(int t)
{
    return t == TC_MS_RECV || t == TC_MS_RCS || t == TC_MS_RRS || t == TC_MS_RRC || t == TC_MS_RRCS;
}
static int type_sends(int t)
{
    return t == TC_MS_SEND || t == TC_MS_RCS || t == TC_MS_RRS || t == TC_MS_RRCS;
}
static int type_reads_src(int t)
{
    return t == TC_MS_SEND || t == TC_MS_RRS || t == TC_MS_RRC || t == TC_MS_RRCS || t == TC_MS_CPY ||
           t == TC_MS_RE;
}
static int type_writes_dst(int t)
{
    return t == TC_MS_RECV || t == TC_MS_RCS || t == TC_MS_RRC || t == TC_MS_RRCS || t == TC_MS_CPY ||
           t == TC_MS_RE;
}

static const char *step_name(int t)
{
    static const char *const n[TC_MS_TYPE_COUNT] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};
    return (unsigned)t < TC_MS_TYPE_COUNT ? n[t] : "?";
}

static const char buf_letter[3] = {'i', 'o', 's'};

void tc_exec_plan_free(tc_exec_plan *p)
{
    if (!p)
        return;
    free(p->tbs);
    free(p->steps);
    free(p);
}

static tc_status check_region(tc_ctx *ctx, const char *name, const tc_msccl_step *st, const int chunks[3],
                              int buf, int off, int rank, int tb, const char *what)
{
    if (buf < 0 || buf > 2)
        return tc_error(ctx, TC_ERR_INVALID, name, st->line, "gpu %d tb %d step %d: no %s buffer", rank, tb,
                        st->s, what);
    if (off < 0 || st->cnt < 1 || (int64_t)off + st->cnt > chunks[buf])
        return tc_error(ctx, TC_ERR_INVALID, name, st->line,
                        "gpu %d tb %d step %d: %s chunks [%d, %d) out of range of buffer %c (%d chunks)", rank,
                        tb, st->s, what, off, off + st->cnt, buf_letter[buf], chunks[buf]);
    return TC_OK;
}

tc_status tc_exec_plan_create(tc_ctx *ctx, const tc_msccl *m, int rank, const char *name, tc_exec_plan **out)
{
    if (rank < 0 || rank >= m->ngpus || !m->gpus)
        return tc_error(ctx, TC_ERR_INVALID, name, 0, "rank %d is not in the plan (%d gpus)", rank, m->ngpus);
    const tc_msccl_gpu *g = &m->gpus[rank];
    tc_status st = TC_OK;
    tc_exec_plan *p = calloc(1, sizeof *p);
    if (!p)
        return TC_ERR_NOMEM;
    p->rank = rank;
    p->nranks = m->ngpus;
    p->buf_chunks[0] = g->i_chunks;
    p->buf_chunks[1] = g->o_chunks;
    p->buf_chunks[2] = g->s_chunks;
    p->n_tbs = g->n_tbs;
    for (int t = 0; t < g->n_tbs; t++)
        p->n_steps += g->tbs[t].n_steps;
    p->tbs = calloc((size_t)(g->n_tbs ? g->n_tbs : 1), sizeof *p->tbs);
    p->steps = calloc((size_t)(p->n_steps ? p->n_steps : 1), sizeof *p->steps);
    /* ids, peers, channels, one tb per (channel, peer) and direction, offsets: the structural rules */
    if ((st = tc_msccl_check_structure(ctx, m, name)))
        goto fail;
    if (!p->tbs || !p->steps) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    int k = 0;
    for (int t = 0; t < g->n_tbs; t++) {
        const tc_msccl_tb *tb = &g->tbs[t];
        if (tb->id != t) {
            st = tc_error(ctx, TC_ERR_INVALID, name, tb->line, "gpu %d: tb %d found where tb %d expected", rank,
                          tb->id, t);
            goto fail;
        }
        if (tb->chan < 0 || tb->chan >= m->nchannels) {
            st = tc_error(ctx, TC_ERR_INVALID, name, tb->line, "gpu %d tb %d: channel %d out of range", rank, t,
                          tb->chan);
            goto fail;
        }
        for (int dir = 0; dir < 2; dir++) {
            int peer = dir ? tb->recv : tb->send;
            if (peer == -1)
                continue;
            if (peer < 0 || peer >= m->ngpus || peer == rank) {
                st = tc_error(ctx, TC_ERR_INVALID, name, tb->line, "gpu %d tb %d: %s peer %d is invalid", rank,
                              t, dir ? "receive" : "send", peer);
                goto fail;
            }
        }
        p->tbs[t].send = tb->send;
        p->tbs[t].recv = tb->recv;
        p->tbs[t].chan = tb->chan;
        p->tbs[t].first = k;
        p->tbs[t].n = tb->n_steps;
        for (int j = 0; j < tb->n_steps; j++, k++) {
            const tc_msccl_step *s = &tb->steps[j];
            tc_exec_step *x = &p->steps[k];
            if (s->s != j || s->type < 0 || s->type >= TC_MS_TYPE_COUNT) {
                st = tc_error(ctx, TC_ERR_INVALID, name, s->line, "gpu %d tb %d: bad step %d", rank, t, s->s);
                goto fail;
            }
            x->type = s->type;
            x->srcbuf = s->srcbuf;
            x->srcoff = s->srcoff;
            x->dstbuf = s->dstbuf;
            x->dstoff = s->dstoff;
            x->cnt = s->cnt;
            x->dep_tb = s->depid;
            x->dep_step = s->deps;
            x->fmt_recv = type_recvs(s->type) ? s->fmt_recv : 0;
            x->fmt_send = type_sends(s->type) ? s->fmt_send : 0;
            if ((unsigned)x->fmt_recv >= TC_SP_FMT_COUNT || (unsigned)x->fmt_send >= TC_SP_FMT_COUNT) {
                st = tc_error(ctx, TC_ERR_INVALID, name, s->line, "gpu %d tb %d step %d: unknown sparse format", rank,
                              t, j);
                goto fail;
            }
            if (x->fmt_recv || x->fmt_send) {
                if (s->cnt > p->max_sparse_cnt)
                    p->max_sparse_cnt = s->cnt;
                p->sparse_fmts |= (1 << x->fmt_recv | 1 << x->fmt_send) & ~1;
            }
            if (type_reads_src(s->type) &&
                (st = check_region(ctx, name, s, p->buf_chunks, s->srcbuf, s->srcoff, rank, t, "source")))
                goto fail;
            if ((type_writes_dst(s->type) || s->type == TC_MS_RCS) &&
                (st = check_region(ctx, name, s, p->buf_chunks, s->dstbuf, s->dstoff, rank, t, "destination")))
                goto fail;
            if ((type_sends(s->type) && tb->send < 0) || (type_recvs(s->type) && tb->recv < 0)) {
                st = tc_error(ctx, TC_ERR_INVALID, name, s->line, "gpu %d tb %d step %d: '%s' needs a %s peer",
                              rank, t, j, step_name(s->type), type_sends(s->type) && tb->send < 0 ? "send" : "receive");
                goto fail;
            }
            if (type_recvs(s->type) && s->cnt > p->max_cnt)
                p->max_cnt = s->cnt;
            if (type_sends(s->type) && s->cnt > p->max_cnt)
                p->max_cnt = s->cnt;
        }
    }
    /* dependencies name existing steps */
    for (int t = 0; t < p->n_tbs; t++)
        for (int j = 0; j < p->tbs[t].n; j++) {
            tc_exec_step *x = &p->steps[p->tbs[t].first + j];
            if (x->dep_tb < 0)
                continue;
            if (x->dep_tb >= p->n_tbs || x->dep_step < 0 || x->dep_step >= p->tbs[x->dep_tb].n ||
                (x->dep_tb == t && x->dep_step >= j)) {
                st = tc_error(ctx, TC_ERR_INVALID, name, g->tbs[t].steps[j].line,
                              "gpu %d tb %d step %d: dependency on tb %d step %d does not exist", rank, t, j,
                              x->dep_tb, x->dep_step);
                goto fail;
            }
        }
    *out = p;
    return TC_OK;
fail:
    tc_exec_plan_free(p);
    return st;
}

/* ---- engine ---------------------------------------------------------------------------------------- */

typedef struct pool {
    void **items;   /* free items */
    int n_free, cap;
    void **all;     /* every allocation, for release */
    int n_all, cap_all;
    size_t bytes;
    int host;       /* alloc_host rather than alloc */
} pool;

enum { RQ_FREE = 0, RQ_RECV, RQ_SEND };

typedef struct reqinfo {
    int kind;
    int step;          /* global step index (receives) */
    void *tmp;         /* temporary to return when a send completes (NULL: user region) */
    pool *tmp_pool;
    int buf;           /* user region read by a send, for hazards (-1 none) */
    uintptr_t lo, hi;  /* its address range: in place, i and o share memory, so hazards compare addresses */
} reqinfo;

typedef struct tbstate {
    int cur;           /* current step (relative); steps before it are complete */
    int started;       /* current step's receive (if any) is posted */
    int next_post;     /* every receiving step before this one is posted */
} tbstate;

struct tc_exec_engine {
    tc_ctx *ctx;
    const tc_exec_plan *p;
    tc_exec_backend *be;
    MPI_Comm comm;
    tc_exec_run_opts o;
    size_t esize, chunk_bytes;
    int staged;
    char *bufs[3];
    tbstate *tbs;
    /* per global step */
    unsigned char *arrived;
    void **rtmp;       /* receive temporary of the step (NULL: straight into dst) */
    pool **rtmp_pool;
    /* requests */
    MPI_Request *reqs;
    reqinfo *info;
    int n_reqs, cap_reqs, active, n_sends_user;
    int escape;        /* stalled once: post r/rcs receives ahead into temporaries too */
    int *idx;
    MPI_Status *stats;
    pool dev, host;
    pool sp, sph;      /* sparse messages: backend memory, host memory (staged) */
    size_t *rbytes;    /* per global step: the bytes its receive got */
    uint64_t sent, dense; /* this run: bytes sent, and what they take dense */
    tc_status soft;    /* the first sparse message that did not decode (tc_exec_engine_soft) */
    tc_exec_mpp *mpp;  /* an MSCCL++ plan's engine (mscclpp.c); nothing else is used then */
};

static void *pool_get(tc_exec_engine *e, pool *pl)
{
    if (pl->n_free)
        return pl->items[--pl->n_free];
    void *p = pl->host ? e->be->alloc_host(e->be, pl->bytes) : e->be->alloc(e->be, pl->bytes);
    if (!p)
        return NULL;
    if (pl->n_all == pl->cap_all) {
        int nc = pl->cap_all ? 2 * pl->cap_all : 16;
        void **na = realloc(pl->all, (size_t)nc * sizeof *na);
        void **ni = realloc(pl->items, (size_t)nc * sizeof *ni);
        if (na)
            pl->all = na;
        if (ni)
            pl->items = ni;
        if (!na || !ni) {
            if (pl->host)
                e->be->release_host(e->be, p);
            else
                e->be->release(e->be, p);
            return NULL;
        }
        pl->cap_all = pl->cap = nc;
    }
    pl->all[pl->n_all++] = p;
    return p;
}

static void pool_put(pool *pl, void *p)
{
    pl->items[pl->n_free++] = p; /* cap == cap_all >= n_all >= n_free + 1 */
}

static void pool_release(tc_exec_engine *e, pool *pl)
{
    for (int i = 0; i < pl->n_all; i++) {
        if (pl->host)
            e->be->release_host(e->be, pl->all[i]);
        else
            e->be->release(e->be, pl->all[i]);
    }
    free(pl->all);
    free(pl->items);
    memset(pl, 0, sizeof *pl);
}

void tc_exec_engine_free(tc_exec_engine *e)
{
    if (!e)
        return;
    tc_exec_mpp_free(e->mpp);
    pool_release(e, &e->dev);
    pool_release(e, &e->host);
    pool_release(e, &e->sp);
    pool_release(e, &e->sph);
    free(e->stats);
    free(e->rbytes);
    free(e->tbs);
    free(e->arrived);
    free(e->rtmp);
    free(e->rtmp_pool);
    free(e->reqs);
    free(e->info);
    free(e->idx);
    free(e);
}

tc_status tc_exec_engine_create(tc_ctx *ctx, const tc_exec_plan *p, tc_exec_backend *be, MPI_Comm comm,
                                const tc_exec_run_opts *o, tc_exec_engine **out)
{
    tc_exec_engine *e = calloc(1, sizeof *e);
    if (!e)
        return TC_ERR_NOMEM;
    if (p->mpp) {
        tc_status st = tc_exec_mpp_create(ctx, p->mpp, p->rank, be, comm, o, &e->mpp);
        if (st)
            free(e);
        else
            *out = e;
        return st;
    }
    e->ctx = ctx;
    e->p = p;
    e->be = be;
    e->comm = comm;
    e->o = *o;
    e->esize = tc_exec_dtype_size(o->dtype);
    e->chunk_bytes = o->chunk_elems * e->esize;
    e->staged = !be->mpi_direct;
    size_t tmp_bytes = (size_t)(p->max_cnt ? p->max_cnt : 1) * e->chunk_bytes;
    if (tmp_bytes > INT_MAX) {
        tc_exec_engine_free(e);
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                        "a message of %zu bytes exceeds the MPI count limit (%d bytes); use a smaller size",
                        tmp_bytes, INT_MAX);
    }
    e->dev.bytes = e->host.bytes = tmp_bytes ? tmp_bytes : 1;
    e->host.host = 1;
    /* sparse messages: the largest of the formats the plan uses, for its largest sparse step */
    uint64_t sp_bytes = 1;
    for (int f = 1; f < TC_SP_FMT_COUNT; f++)
        if (p->sparse_fmts & (1 << f)) {
            uint64_t b = tc_sparse_msg_bound(f, (uint64_t)p->max_sparse_cnt * o->chunk_elems, e->esize);
            if (b > sp_bytes)
                sp_bytes = b;
        }
    if (sp_bytes > INT_MAX) {
        tc_exec_engine_free(e);
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                        "a sparse message of up to %llu bytes exceeds the MPI count limit (%d bytes); use a smaller "
                        "size",
                        (unsigned long long)sp_bytes, INT_MAX);
    }
    e->sp.bytes = e->sph.bytes = (size_t)sp_bytes;
    e->sph.host = 1;
    size_t ns = (size_t)(p->n_steps ? p->n_steps : 1);
    e->tbs = calloc((size_t)(p->n_tbs ? p->n_tbs : 1), sizeof *e->tbs);
    e->arrived = calloc(ns, 1);
    e->rtmp = calloc(ns, sizeof *e->rtmp);
    e->rtmp_pool = calloc(ns, sizeof *e->rtmp_pool);
    e->cap_reqs = 64;
    e->reqs = malloc((size_t)e->cap_reqs * sizeof *e->reqs);
    e->info = calloc((size_t)e->cap_reqs, sizeof *e->info);
    e->idx = malloc((size_t)e->cap_reqs * sizeof *e->idx);
    e->stats = malloc((size_t)e->cap_reqs * sizeof *e->stats);
    e->rbytes = calloc(ns, sizeof *e->rbytes);
    if (!e->tbs || !e->arrived || !e->rtmp || !e->rtmp_pool || !e->reqs || !e->info || !e->idx || !e->stats ||
        !e->rbytes) {
        tc_exec_engine_free(e);
        return TC_ERR_NOMEM;
    }
    *out = e;
    return TC_OK;
}

static char *region(tc_exec_engine *e, int buf, int off)
{
    return e->bufs[buf] + (size_t)off * e->chunk_bytes;
}

/* A free request slot (grows the table). -1 on allocation failure. */
static int req_slot(tc_exec_engine *e)
{
    for (int i = 0; i < e->n_reqs; i++)
        if (e->info[i].kind == RQ_FREE)
            return i;
    if (e->n_reqs == e->cap_reqs) {
        int nc = 2 * e->cap_reqs;
        MPI_Request *nr = realloc(e->reqs, (size_t)nc * sizeof *nr);
        if (nr)
            e->reqs = nr;
        reqinfo *ni = realloc(e->info, (size_t)nc * sizeof *ni);
        if (ni)
            e->info = ni;
        int *nx = realloc(e->idx, (size_t)nc * sizeof *nx);
        if (nx)
            e->idx = nx;
        MPI_Status *ns = realloc(e->stats, (size_t)nc * sizeof *ns);
        if (ns)
            e->stats = ns;
        if (!nr || !ni || !nx || !ns)
            return -1;
        memset(e->info + e->cap_reqs, 0, (size_t)(nc - e->cap_reqs) * sizeof *ni);
        e->cap_reqs = nc;
    }
    e->reqs[e->n_reqs] = MPI_REQUEST_NULL;
    return e->n_reqs++;
}

static tc_status mpi_fail(tc_exec_engine *e, int rc, const char *what, int tb, int j)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return tc_error(e->ctx, TC_ERR_INTERNAL, NULL, 0, "rank %d tb %d step %d: %s failed: %s", e->p->rank, tb, j,
                    what, msg);
}

/* Post a send of `bytes` at ptr to the tb's send peer; tmp (from pl) is returned when it completes, a
 * user region (buf, byte range) is registered for hazards instead when tmp is NULL. */
static tc_status post_send(tc_exec_engine *e, int tb, int j, const void *ptr, size_t bytes, void *tmp,
                           pool *pl, int buf, size_t lo)
{
    int k = req_slot(e);
    if (k < 0)
        return TC_ERR_NOMEM;
    const tc_exec_tb *t = &e->p->tbs[tb];
    int rc = MPI_Isend(ptr, (int)bytes, MPI_BYTE, t->send, t->chan, e->comm, &e->reqs[k]);
    if (rc != MPI_SUCCESS)
        return mpi_fail(e, rc, "MPI_Isend", tb, j);
    e->sent += bytes;
    e->dense += (uint64_t)e->p->steps[t->first + j].cnt * e->chunk_bytes;
    reqinfo *ri = &e->info[k];
    ri->kind = RQ_SEND;
    ri->step = -1;
    ri->tmp = tmp;
    ri->tmp_pool = pl;
    ri->buf = tmp ? -1 : buf;
    ri->lo = tmp || buf < 0 ? 0 : (uintptr_t)(e->bufs[buf] + lo);
    ri->hi = ri->lo + bytes;
    e->active++;
    if (!tmp)
        e->n_sends_user++;
    return TC_OK;
}

static tc_status post_recv(tc_exec_engine *e, int tb, int j, int gstep, void *ptr, size_t bytes)
{
    int k = req_slot(e);
    if (k < 0)
        return TC_ERR_NOMEM;
    const tc_exec_tb *t = &e->p->tbs[tb];
    int rc = MPI_Irecv(ptr, (int)bytes, MPI_BYTE, t->recv, t->chan, e->comm, &e->reqs[k]);
    if (rc != MPI_SUCCESS)
        return mpi_fail(e, rc, "MPI_Irecv", tb, j);
    reqinfo *ri = &e->info[k];
    ri->kind = RQ_RECV;
    ri->step = gstep;
    ri->tmp = NULL;
    ri->buf = -1;
    e->active++;
    return TC_OK;
}

/* Nonzero when an in-flight send still reads bytes [lo, lo+n) of buffer buf (or memory it shares with
 * another buffer: in place, o is i or a part of it). */
static int hazard(const tc_exec_engine *e, int buf, size_t lo, size_t n)
{
    if (!e->n_sends_user)
        return 0;
    uintptr_t a = (uintptr_t)(e->bufs[buf] + lo), b = a + n;
    for (int i = 0; i < e->n_reqs; i++) {
        const reqinfo *ri = &e->info[i];
        if (ri->kind == RQ_SEND && ri->buf >= 0 && ri->lo < b && a < ri->hi)
            return 1;
    }
    return 0;
}

/* The step's incoming / outgoing message travels sparse (in this run). */
static int sp_recv(const tc_exec_engine *e, const tc_exec_step *x) { return e->o.sparse && x->fmt_recv; }
static int sp_send(const tc_exec_engine *e, const tc_exec_step *x) { return e->o.sparse && x->fmt_send; }

/* Receives into dst directly (no temporary) for dense r and rcs when MPI can address the backend memory. */
static int direct_recv(const tc_exec_engine *e, const tc_exec_step *x)
{
    return !e->staged && (x->type == TC_MS_RECV || x->type == TC_MS_RCS) && !sp_recv(e, x);
}

/* Post the receive of step j of tb: straight into dst for r/rcs when MPI can address it and not
 * force_tmp, else into a temporary. */
static tc_status post_step_recv(tc_exec_engine *e, int tb, int j, int force_tmp)
{
    int g = e->p->tbs[tb].first + j;
    const tc_exec_step *x = &e->p->steps[g];
    size_t bytes = (size_t)x->cnt * e->chunk_bytes;
    if (direct_recv(e, x) && !force_tmp) {
        e->rtmp[g] = NULL;
        return post_recv(e, tb, j, g, region(e, x->dstbuf, x->dstoff), bytes);
    }
    pool *pl = sp_recv(e, x) ? (e->staged ? &e->sph : &e->sp) : e->staged ? &e->host : &e->dev;
    if (sp_recv(e, x)) /* a sparse message: as long as the sender's, at most the format's largest */
        bytes = pl->bytes;
    void *tmp = pool_get(e, pl);
    if (!tmp)
        return tc_error(e->ctx, TC_ERR_NOMEM, NULL, 0, "rank %d: cannot allocate a %zu-byte temporary",
                        e->p->rank, pl->bytes);
    e->rtmp[g] = tmp;
    e->rtmp_pool[g] = pl;
    return post_recv(e, tb, j, g, tmp, bytes);
}

static tc_status be_fail(tc_exec_engine *e, const char *what, int tb, int j)
{
    return tc_error(e->ctx, TC_ERR_INTERNAL, NULL, 0, "rank %d tb %d step %d: %s backend %s failed", e->p->rank,
                    tb, j, e->be->name, what);
}

/* ---- sparse messages ------------------------------------------------------------------------------- */

/* Self-test (--corrupt-sparse): damage a sparse message's metadata so that every receiver must refuse it:
 * a Pici message loses a bit of its first bit-vector word, a COO message's first index leaves the range,
 * an empty one claims a nonzero in its header.  msg is MPI-addressable: host memory when staged, else
 * backend memory, reached through download and upload. */
static tc_status damage(tc_exec_engine *e, void *msg, size_t mb)
{
    unsigned char h[TC_SPARSE_HDR_BYTES + 8];
    const size_t n = mb < sizeof h ? mb : sizeof h;
    tc_exec_backend *be = e->be;
    if (e->staged)
        memcpy(h, msg, n);
    else if (be->download(be, h, msg, n))
        return TC_ERR_INTERNAL;
    uint16_t fmt;
    uint64_t nnz, count;
    memcpy(&fmt, h + 4, 2);
    memcpy(&count, h + 8, 8);
    memcpy(&nnz, h + 16, 8);
    if (fmt == TC_SP_PICI && count > 0 && n >= TC_SPARSE_HDR_BYTES + 8) {
        h[TC_SPARSE_HDR_BYTES] ^= 1;
    } else if (fmt == TC_SP_COO && nnz > 0 && n >= TC_SPARSE_HDR_BYTES + 4) {
        memset(h + TC_SPARSE_HDR_BYTES, 0xff, 4);
    } else {
        nnz++;
        memcpy(h + 16, &nnz, 8);
    }
    if (e->staged)
        memcpy(msg, h, n);
    else if (be->upload(be, msg, h, n))
        return TC_ERR_INTERNAL;
    return TC_OK;
}

/* Send n elements of backend memory at src as a sparse message of format fmt (encoded now: src may change
 * as soon as this returns). */
static tc_status send_sparse(tc_exec_engine *e, int tb, int j, const void *src, size_t n, int fmt)
{
    tc_exec_backend *be = e->be;
    void *m = pool_get(e, &e->sp), *out = m;
    pool *opl = &e->sp;
    size_t mb = 0;
    if (!m)
        return tc_error(e->ctx, TC_ERR_NOMEM, NULL, 0, "rank %d: cannot allocate a %zu-byte sparse message", e->p->rank,
                        e->sp.bytes);
    tc_status st = be->sp_encode(be, e->ctx, fmt, e->o.dtype, m, e->sp.bytes, src, n, &mb);
    if (st) {
        pool_put(&e->sp, m);
        return tc_error(e->ctx, TC_ERR_INTERNAL, NULL, 0, "rank %d tb %d step %d: cannot encode its %s message",
                        e->p->rank, tb, j, tc_sparse_fmt_name(fmt));
    }
    if (e->staged) { /* MPI reads host memory */
        if (!(out = pool_get(e, &e->sph))) {
            pool_put(&e->sp, m);
            return TC_ERR_NOMEM;
        }
        int rc = be->download(be, out, m, mb);
        pool_put(&e->sp, m);
        opl = &e->sph;
        if (rc) {
            pool_put(opl, out);
            return be_fail(e, "download", tb, j);
        }
    }
    if (e->o.corrupt_sparse && damage(e, out, mb)) {
        pool_put(opl, out);
        return be_fail(e, "copy", tb, j);
    }
    return post_send(e, tb, j, out, mb, out, opl, -1, 0);
}

/* Decode the message msg (backend memory, mb bytes) of step j into dst (add: into it, sum).  A message that
 * does not decode is this run's soft failure: reported once, dst untouched, TC_OK returned so that the
 * replay goes on; other failures are returned. */
static tc_status decode(tc_exec_engine *e, int tb, int j, void *dst, const void *msg, size_t mb, size_t n, int add)
{
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    tc_diag_rec rec = {0}; /* the codec's first error, reworded below */
    quiet.sink = tc_diag_record;
    quiet.sink_user = &rec;
    tc_status st = e->be->sp_decode(e->be, &quiet, e->o.dtype, add, dst, msg, mb, n);
    if (st == TC_OK)
        return TC_OK;
    const char *w = rec.have ? rec.msg : tc_status_str(st);
    if (st != TC_ERR_INVALID)
        return tc_error(e->ctx, st, NULL, 0, "rank %d tb %d step %d: %.*s", e->p->rank, tb, j, (int)strcspn(w, "\n"), w);
    if (e->soft == TC_OK) {
        e->soft = st;
        tc_error(e->ctx, st, NULL, 0, "rank %d tb %d step %d: the sparse message from rank %d does not decode: %.*s",
                 e->p->rank, tb, j, e->p->tbs[tb].recv, (int)strcspn(w, "\n"), w);
    }
    return TC_OK;
}

/* out = src op (the message's elements); out may be src. */
static tc_status reduce_from(tc_exec_engine *e, int tb, int j, void *out, const void *src, const void *msg, size_t mb,
                             size_t n)
{
    tc_exec_backend *be = e->be;
    if (e->o.op == TC_RED_SUM) { /* the nonzeros are added in place: zeros change nothing */
        if (out != src && be->copy(be, out, src, n * e->esize))
            return be_fail(e, "copy", tb, j);
        return decode(e, tb, j, out, msg, mb, n, 1);
    }
    void *d = pool_get(e, &e->dev);
    if (!d)
        return TC_ERR_NOMEM;
    tc_status st = decode(e, tb, j, d, msg, mb, n, 0);
    if (!st && be->reduce(be, e->o.dtype, e->o.op, out, d, src, n))
        st = be_fail(e, "reduce", tb, j);
    pool_put(&e->dev, d);
    return st;
}

/* Finish a receiving step whose incoming message is sparse (see the file comment). */
static tc_status finish_sparse(tc_exec_engine *e, int tb, int j, int *blocked)
{
    tc_exec_backend *be = e->be;
    const int g = e->p->tbs[tb].first + j;
    const tc_exec_step *x = &e->p->steps[g];
    const size_t bytes = (size_t)x->cnt * e->chunk_bytes, n = (size_t)x->cnt * e->o.chunk_elems, mb = e->rbytes[g];
    void *tmp = e->rtmp[g], *msg = tmp, *dm = NULL, *acc = NULL;
    pool *pl = e->rtmp_pool[g];
    char *dst = type_writes_dst(x->type) ? region(e, x->dstbuf, x->dstoff) : NULL;
    char *src = type_reads_src(x->type) ? region(e, x->srcbuf, x->srcoff) : NULL;
    const size_t dlo = dst ? (size_t)x->dstoff * e->chunk_bytes : 0;
    tc_status st = TC_OK;
    *blocked = 0;
    if (dst && hazard(e, x->dstbuf, dlo, bytes)) {
        *blocked = 1;
        return TC_OK;
    }
    if (e->staged) { /* decoded where the data lives */
        if (!(dm = pool_get(e, &e->sp)))
            return TC_ERR_NOMEM;
        if (be->upload(be, dm, tmp, mb)) {
            pool_put(&e->sp, dm);
            return be_fail(e, "upload", tb, j);
        }
        msg = dm;
    }
    switch (x->type) {
    case TC_MS_RECV:
    case TC_MS_RCS: st = decode(e, tb, j, dst, msg, mb, n, 0); break;
    case TC_MS_RRC:
    case TC_MS_RRCS: st = reduce_from(e, tb, j, dst, src, msg, mb, n); break;
    case TC_MS_RRS:
        if (!(acc = pool_get(e, &e->dev)))
            st = TC_ERR_NOMEM;
        else
            st = reduce_from(e, tb, j, acc, src, msg, mb, n);
        break;
    default: st = TC_ERR_INTERNAL; break;
    }
    if (dm)
        pool_put(&e->sp, dm);
    if (!st && x->type == TC_MS_RCS && sp_send(e, x) && x->fmt_send == x->fmt_recv)
        return post_send(e, tb, j, tmp, mb, tmp, pl, -1, 0); /* forwarded as it came */
    pool_put(pl, tmp);
    if (st || x->type == TC_MS_RECV || x->type == TC_MS_RRC) {
        if (acc)
            pool_put(&e->dev, acc);
        return st;
    }
    const char *out = x->type == TC_MS_RRS ? acc : dst;
    if (sp_send(e, x)) {
        st = send_sparse(e, tb, j, out, n, x->fmt_send);
    } else if (!e->staged) {
        st = acc ? post_send(e, tb, j, acc, bytes, acc, &e->dev, -1, 0)
                 : post_send(e, tb, j, dst, bytes, NULL, NULL, x->dstbuf, dlo);
        acc = NULL;
    } else { /* dense through host memory */
        void *h = pool_get(e, &e->host);
        if (!h)
            st = TC_ERR_NOMEM;
        else if (be->download(be, h, out, bytes)) {
            pool_put(&e->host, h);
            st = be_fail(e, "download", tb, j);
        } else
            st = post_send(e, tb, j, h, bytes, h, &e->host, -1, 0);
    }
    if (acc)
        pool_put(&e->dev, acc);
    return st;
}

/* Finish a receiving step whose data arrived.  *blocked = 1 when a hazard on dst must clear first. */
static tc_status finish_recv(tc_exec_engine *e, int tb, int j, int *blocked)
{
    tc_exec_backend *be = e->be;
    int g = e->p->tbs[tb].first + j;
    const tc_exec_step *x = &e->p->steps[g];
    size_t bytes = (size_t)x->cnt * e->chunk_bytes, n = (size_t)x->cnt * e->o.chunk_elems;
    void *tmp = e->rtmp[g];
    pool *pl = e->rtmp_pool[g];
    char *dst = type_writes_dst(x->type) ? region(e, x->dstbuf, x->dstoff) : NULL;
    char *src = type_reads_src(x->type) ? region(e, x->srcbuf, x->srcoff) : NULL;
    size_t dlo = dst ? (size_t)x->dstoff * e->chunk_bytes : 0;
    if (sp_recv(e, x))
        return finish_sparse(e, tb, j, blocked);
    *blocked = 0;
    if (dst && tmp && hazard(e, x->dstbuf, dlo, bytes)) {
        *blocked = 1;
        return TC_OK;
    }
    /* a temporary is host memory when staged, backend memory otherwise; a sparse outgoing message is
     * encoded from dst, or from the reduced temporary */
    int (*land)(tc_exec_backend *, void *, const void *, size_t) = e->staged ? be->upload : be->copy;
    switch (x->type) {
    case TC_MS_RECV:
        if (tmp) {
            if (land(be, dst, tmp, bytes))
                return be_fail(e, "copy", tb, j);
            pool_put(pl, tmp);
        }
        return TC_OK;
    case TC_MS_RCS: /* with a temporary, the temporary itself is sent on */
        if (tmp && land(be, dst, tmp, bytes))
            return be_fail(e, "copy", tb, j);
        if (sp_send(e, x)) {
            if (tmp)
                pool_put(pl, tmp);
            return send_sparse(e, tb, j, dst, n, x->fmt_send);
        }
        if (!tmp)
            return post_send(e, tb, j, dst, bytes, NULL, NULL, x->dstbuf, dlo);
        return post_send(e, tb, j, tmp, bytes, tmp, pl, -1, 0);
    case TC_MS_RRS:
        if (!e->staged) {
            if (be->reduce(be, e->o.dtype, e->o.op, tmp, tmp, src, n))
                return be_fail(e, "reduce", tb, j);
            if (sp_send(e, x)) {
                tc_status st = send_sparse(e, tb, j, tmp, n, x->fmt_send);
                pool_put(pl, tmp);
                return st;
            }
            return post_send(e, tb, j, tmp, bytes, tmp, pl, -1, 0);
        } else {
            void *d = pool_get(e, &e->dev);
            if (!d)
                return TC_ERR_NOMEM;
            int rc = be->upload(be, d, tmp, bytes) || be->reduce(be, e->o.dtype, e->o.op, d, d, src, n);
            if (!rc && sp_send(e, x)) {
                tc_status st = send_sparse(e, tb, j, d, n, x->fmt_send);
                pool_put(&e->dev, d);
                pool_put(pl, tmp);
                return st;
            }
            rc = rc || be->download(be, tmp, d, bytes);
            pool_put(&e->dev, d);
            if (rc)
                return be_fail(e, "reduce", tb, j);
            return post_send(e, tb, j, tmp, bytes, tmp, pl, -1, 0);
        }
    case TC_MS_RRC:
    case TC_MS_RRCS: {
        if (!e->staged) {
            if (be->reduce(be, e->o.dtype, e->o.op, dst, tmp, src, n))
                return be_fail(e, "reduce", tb, j);
            pool_put(pl, tmp);
            if (x->type == TC_MS_RRCS && sp_send(e, x))
                return send_sparse(e, tb, j, dst, n, x->fmt_send);
            if (x->type == TC_MS_RRCS)
                return post_send(e, tb, j, dst, bytes, NULL, NULL, x->dstbuf, dlo);
            return TC_OK;
        }
        void *d = pool_get(e, &e->dev);
        if (!d)
            return TC_ERR_NOMEM;
        int rc = be->upload(be, d, tmp, bytes) || be->reduce(be, e->o.dtype, e->o.op, dst, d, src, n);
        pool_put(&e->dev, d);
        if (rc)
            return be_fail(e, "reduce", tb, j);
        if (x->type == TC_MS_RRCS && sp_send(e, x)) {
            pool_put(pl, tmp);
            return send_sparse(e, tb, j, dst, n, x->fmt_send);
        }
        if (x->type == TC_MS_RRCS) {
            if (be->download(be, tmp, dst, bytes))
                return be_fail(e, "download", tb, j);
            return post_send(e, tb, j, tmp, bytes, tmp, pl, -1, 0);
        }
        pool_put(pl, tmp);
        return TC_OK;
    }
    default: return TC_ERR_INTERNAL;
    }
}

/* Run a step that does not receive.  *blocked = 1 when it must wait for a hazard. */
static tc_status run_local(tc_exec_engine *e, int tb, int j, int *blocked)
{
    tc_exec_backend *be = e->be;
    const tc_exec_step *x = &e->p->steps[e->p->tbs[tb].first + j];
    size_t bytes = (size_t)x->cnt * e->chunk_bytes, n = (size_t)x->cnt * e->o.chunk_elems;
    *blocked = 0;
    switch (x->type) {
    case TC_MS_SEND: {
        char *src = region(e, x->srcbuf, x->srcoff);
        if (sp_send(e, x))
            return send_sparse(e, tb, j, src, n, x->fmt_send);
        if (!e->staged)
            return post_send(e, tb, j, src, bytes, NULL, NULL, x->srcbuf, (size_t)x->srcoff * e->chunk_bytes);
        void *h = pool_get(e, &e->host);
        if (!h)
            return TC_ERR_NOMEM;
        if (be->download(be, h, src, bytes))
            return be_fail(e, "download", tb, j);
        return post_send(e, tb, j, h, bytes, h, &e->host, -1, 0);
    }
    case TC_MS_CPY:
    case TC_MS_RE: {
        char *src = region(e, x->srcbuf, x->srcoff), *dst = region(e, x->dstbuf, x->dstoff);
        if (hazard(e, x->dstbuf, (size_t)x->dstoff * e->chunk_bytes, bytes)) {
            *blocked = 1;
            return TC_OK;
        }
        int rc = 0;
        if (x->type == TC_MS_CPY) {
            if (src != dst)
                rc = be->copy(be, dst, src, bytes);
        } else {
            rc = be->reduce(be, e->o.dtype, e->o.op, dst, dst, src, n);
        }
        return rc ? be_fail(e, x->type == TC_MS_CPY ? "copy" : "reduce", tb, j) : TC_OK;
    }
    case TC_MS_NOP: return TC_OK;
    default: return TC_ERR_INTERNAL;
    }
}

/* Advance tb as far as it goes; *moved counts completed or started steps. */
static tc_status advance(tc_exec_engine *e, int tb, int *moved)
{
    const tc_exec_tb *t = &e->p->tbs[tb];
    tbstate *s = &e->tbs[tb];
    tc_status st;
    while (s->cur < t->n) {
        /* post receives ahead, in step order, into temporaries */
        if (s->next_post < s->cur)
            s->next_post = s->cur;
        while (s->next_post < t->n && s->next_post <= s->cur + e->o.prepost) {
            const tc_exec_step *y = &e->p->steps[t->first + s->next_post];
            if (type_recvs(y->type)) {
                if (direct_recv(e, y) && !e->escape)
                    break; /* lands in a user buffer: posted when it becomes current */
                if ((st = post_step_recv(e, tb, s->next_post, 1)))
                    return st;
                (*moved)++;
            }
            s->next_post++;
        }
        const tc_exec_step *x = &e->p->steps[t->first + s->cur];
        int g = t->first + s->cur, blocked = 0;
        if (!s->started) {
            if (x->dep_tb >= 0 && e->tbs[x->dep_tb].cur <= x->dep_step)
                return TC_OK;
            if (!type_recvs(x->type)) {
                if ((st = run_local(e, tb, s->cur, &blocked)))
                    return st;
                if (blocked)
                    return TC_OK;
                s->cur++;
                (*moved)++;
                continue;
            }
            if (s->next_post == s->cur) { /* a direct receive into dst, or a temporary while a send reads dst */
                int busy = hazard(e, x->dstbuf, (size_t)x->dstoff * e->chunk_bytes, (size_t)x->cnt * e->chunk_bytes);
                if ((st = post_step_recv(e, tb, s->cur, busy)))
                    return st;
                s->next_post++;
                (*moved)++;
            }
            s->started = 1;
        }
        if (!e->arrived[g])
            return TC_OK;
        if ((st = finish_recv(e, tb, s->cur, &blocked)))
            return st;
        if (blocked)
            return TC_OK;
        s->started = 0;
        s->cur++;
        (*moved)++;
    }
    return TC_OK;
}

/* Harvest completed requests; *done counts them. */
static tc_status harvest(tc_exec_engine *e, int *done)
{
    int outcount = 0;
    if (!e->active)
        return TC_OK;
    int rc = MPI_Testsome(e->n_reqs, e->reqs, &outcount, e->idx, e->stats);
    if (rc != MPI_SUCCESS)
        return mpi_fail(e, rc, "MPI_Testsome", -1, -1);
    if (outcount == MPI_UNDEFINED)
        return TC_OK;
    for (int i = 0; i < outcount; i++) {
        reqinfo *ri = &e->info[e->idx[i]];
        if (ri->kind == RQ_RECV) {
            int got = 0; /* a sparse message is as long as its sender made it */
            MPI_Get_count(&e->stats[i], MPI_BYTE, &got);
            e->rbytes[ri->step] = got > 0 ? (size_t)got : 0;
            e->arrived[ri->step] = 1;
        } else if (ri->kind == RQ_SEND) {
            if (ri->tmp)
                pool_put(ri->tmp_pool, ri->tmp);
            else
                e->n_sends_user--;
        }
        ri->kind = RQ_FREE;
        e->active--;
    }
    *done += outcount;
    /* trim trailing free slots */
    while (e->n_reqs && e->info[e->n_reqs - 1].kind == RQ_FREE)
        e->n_reqs--;
    return TC_OK;
}

static void describe_stall(tc_exec_engine *e, double idle)
{
    for (int tb = 0; tb < e->p->n_tbs; tb++) {
        const tbstate *s = &e->tbs[tb];
        const tc_exec_tb *t = &e->p->tbs[tb];
        if (s->cur >= t->n)
            continue;
        const tc_exec_step *x = &e->p->steps[t->first + s->cur];
        tc_error(e->ctx, TC_ERR_INTERNAL, NULL, 0,
                 "rank %d: no progress for %.0f s: tb %d (send %d, recv %d, channel %d) stuck at step %d '%s'%s",
                 e->p->rank, idle, tb, t->send, t->recv, t->chan, s->cur, step_name(x->type),
                 s->started ? " waiting for data" : x->dep_tb >= 0 ? " waiting for its dependency" : "");
        return;
    }
    tc_error(e->ctx, TC_ERR_INTERNAL, NULL, 0, "rank %d: no progress for %.0f s: sends never completed",
             e->p->rank, idle);
}

tc_status tc_exec_engine_run(tc_exec_engine *e, void *bufs[3])
{
    if (e->mpp)
        return tc_exec_mpp_run(e->mpp, bufs);
    const tc_exec_plan *p = e->p;
    tc_status st = TC_OK;
    for (int b = 0; b < 3; b++)
        e->bufs[b] = bufs[b];
    memset(e->tbs, 0, (size_t)p->n_tbs * sizeof *e->tbs);
    memset(e->arrived, 0, (size_t)p->n_steps);
    e->escape = 0;
    e->sent = e->dense = 0;
    double last = 0;
    unsigned idle = 0;
    for (;;) {
        int moved = 0, pending = 0;
        for (int tb = 0; tb < p->n_tbs; tb++) {
            if (e->tbs[tb].cur >= p->tbs[tb].n)
                continue;
            if ((st = advance(e, tb, &moved)))
                return st;
            pending += e->tbs[tb].cur < p->tbs[tb].n;
        }
        if (!pending && !e->active)
            return TC_OK;
        if ((st = harvest(e, &moved)))
            return st;
        if (moved) {
            idle = 0;
            continue;
        }
        /* nothing moved: give the CPU to other ranks, watch the clock now and then */
        if (idle++ == 0) {
            last = tc_now();
        } else if ((idle & 63) == 0) {
            double dt = tc_now() - last;
            if (!e->escape && dt > 0.05) {
                /* stalled: maybe a rank waits for a send to drain while its peer waits likewise;
                 * receiving r/rcs data ahead into temporaries (as NCCL's connection FIFO would buffer
                 * it) breaks such a cycle.  Costs a copy per r/rcs step for the rest of this run. */
                e->escape = 1;
                idle = 0;
                continue;
            }
            if (e->o.timeout > 0 && dt > e->o.timeout) {
                describe_stall(e, dt);
                return TC_ERR_INTERNAL;
            }
        }
        if (e->o.idle_sleep_us > 0 && idle > 64) {
            struct timespec ts = {0, (long)e->o.idle_sleep_us * 1000L};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

void tc_exec_engine_sparse(tc_exec_engine *e, int on) { e->o.sparse = on; }

void tc_exec_engine_bytes(const tc_exec_engine *e, uint64_t *sent, uint64_t *dense)
{
    *sent = e->sent;
    *dense = e->dense;
}

tc_status tc_exec_engine_soft(tc_exec_engine *e)
{
    tc_status st = e->soft;
    e->soft = TC_OK;
    return st;
}
