/* Verifier of MSCCL++ plans (man 5 tacosc-mscclpp, VERIFY): the loader's rules and limits, references,
 * the thread-sync rule, then a symbolic execution of every gpu's thread blocks that proves the collective.
 *
 * The symbolic machine keeps, per chunk of every buffer of every gpu, which chunk of the collective it
 * holds and whose contributions are summed in it (a bitset of ranks).  Puts and remote writes land at
 * once; a signal adds one to the partner channel's count, a wait takes one (all its channels at once);
 * barriers and device semaphores block as the executor's do.  Three orders of the thread blocks are run
 * (one operation per block per round; each block as far as it goes, lowest first; highest first): a plan
 * whose result depends on the order has a race.  No progress while blocks remain is a deadlock.
 *
 * Rules come from microsoft/mscclpp 1f5f065d: src/core/executor/execution_plan.cc (fields, references,
 * chunk and message-size rules), src/core/executor/executor.cc (operations per thread block),
 * src/core/include/execution_common.hpp (limits), src/core/include/execution_kernel.hpp (what each
 * operation reads and writes, which threads run it). */
#include "mscclpp_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/** Chunk contributions (slots x bitset words) the symbolic machine holds at most: 64 Mi words, 512 MiB. */
#define TC_MSCCLPP_MAX_SLOTS (1 << 26)

typedef struct {
    tc_ctx *ctx;
    const tc_mscclpp *p;
    const char *name;
    int R, W, K;             /* gpus, bitset words, chunks per rank of the collective */
    int *base;               /* per gpu: first slot; slots i, o, s in that order */
    int *vchunk;             /* per slot: chunk held, -1 nothing, -2 garbage */
    unsigned char *ready;    /* per slot: LL packets written there in this run (their flag is this launch's) */
    uint64_t *vbits;         /* per slot: W words of contributing ranks */
    int *cbase;              /* per gpu: first channel record */
    int *partner;            /* per channel record: the partner's record, -1 none */
    long *inbound, *taken;   /* per channel record: signals received, waits done */
    int *tbase;              /* per gpu: first tb */
    int *tgpu;               /* per tb (global): its gpu */
    int *pc, *bgen;          /* per tb: next op; barrier generation it waits on (-1 none) */
    int *bar_n, *bar_gen;    /* per gpu x syncer */
    int *sem;                /* per gpu x semaphore */
    int ntb;
    tc_sched *out;           /* to_sched: the transfers */
    int round;
    int failed;              /* pairing ran out of memory */
} vm;


/* ---- static rules ---------------------------------------------------------------------------------- */

static int nbuf(const tc_mscclpp_gpu *g, int type)
{
    return type == 0 ? g->i_chunks : type == 1 ? g->o_chunks : g->s_chunks;
}

static int count_type(const tc_mscclpp_gpu *g, int type)
{
    int n = 0;
    for (int i = 0; i < g->n_chans; i++)
        n += g->chans[i].type == type;
    return n;
}

/* a buffer reference of op k: local, or a remote one through the tb's refs of the op's channel type */
static tc_status check_ref(tc_ctx *ctx, const tc_mscclpp *p, const char *name, int g, const tc_mscclpp_tb *tb, int k,
                           const tc_mscclpp_op *op, const tc_mscclpp_buf *b)
{
    const tc_mscclpp_gpu *gp = &p->gpus[g];
    int owner = g, type = b->type;
    if (b->type == -2) /* an NVLS (switch channel) buffer: its channel is checked, its bytes are not modelled */
        return op->chan_type == TC_MSCCLPP_CH_SWITCH || strcmp(mpp_op_name(op), "glres") == 0 ||
                       strncmp(mpp_op_name(op), "gstore", 6) == 0
                   ? TC_OK
                   : tc_error(ctx, TC_ERR_CHECK, name, op->line,
                              "gpu %d tb %d op %d '%s': a switch_channel_id buffer in an operation that is not a "
                              "multimem one [buffers]", g, tb->id, k, mpp_op_name(op));
    if (b->type < 0) {
        int ct = op->chan_type;
        if (ct != TC_MSCCLPP_CH_MEMORY && ct != TC_MSCCLPP_CH_PORT)
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': a remote buffer (buffer_id %d) needs channel_type memory or "
                            "port [buffers]",
                            g, tb->id, k, mpp_op_name(op), b->id);
        if (b->id < 0 || b->id >= tb->n_rb[ct])
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': buffer_id %d, but the thread block refers to %d remote buffers "
                            "through %s channels [buffers]",
                            g, tb->id, k, mpp_op_name(op), b->id, tb->n_rb[ct], tc_mscclpp_ch_name(ct));
        const tc_mscclpp_rbuf *rb = &gp->rbufs[tb->rb[ct][b->id]];
        owner = rb->rank;
        type = rb->type;
    }
    const tc_mscclpp_gpu *og = &p->gpus[owner];
    if (b->size < 1 || b->index < 0 || (long)b->index + b->size > nbuf(og, type))
        return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                        "gpu %d tb %d op %d '%s': chunks %d..%ld of gpu %d's %s buffer, which has %d [buffers]", g,
                        tb->id, k, mpp_op_name(op), b->index, (long)b->index + b->size - 1, owner,
                        type == 0 ? "input" : type == 1 ? "output" : "scratch", nbuf(og, type));
    return TC_OK;
}

static tc_status check_op(tc_ctx *ctx, const tc_mscclpp *p, const char *name, int g, const tc_mscclpp_tb *tb, int k)
{
    const tc_mscclpp_gpu *gp = &p->gpus[g];
    const tc_mscclpp_op *op = &tb->ops[k];
    const char *n = mpp_op_name(op);
    tc_status st = TC_OK;
    if (op->n_chan > 0) {
        int ct = op->chan_type;
        if (ct < 0 || ct > TC_MSCCLPP_CH_SWITCH)
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': channel_ids without a channel_type [channels]", g, tb->id, k, n);
        for (int i = 0; i < op->n_chan; i++)
            if (op->chan[i] < 0 || op->chan[i] >= tb->n_ch[ct])
                return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                                "gpu %d tb %d op %d '%s': channel %d, but the thread block has %d %s channels "
                                "[channels]",
                                g, tb->id, k, n, op->chan[i], tb->n_ch[ct], tc_mscclpp_ch_name(ct));
    }
    int needs_chan = !strcmp(n, "signal") || !strcmp(n, "wait") || !strcmp(n, "rlxsignal") ||
                     !strcmp(n, "rlxwait") || !strcmp(n, "flush") || !strcmp(n, "pws") || !strcmp(n, "pwsf");
    if (needs_chan && op->n_chan == 0)
        return tc_error(ctx, TC_ERR_CHECK, name, op->line, "gpu %d tb %d op %d '%s' names no channel [operations]", g,
                        tb->id, k, n);
    if ((!strcmp(n, "put") || !strcmp(n, "pws") || !strcmp(n, "pwsf") || !strcmp(n, "get")) &&
        (op->n_src != op->n_dst || op->n_src == 0))
        return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                        "gpu %d tb %d op %d '%s': %d sources for %d destinations; each destination reads its own "
                        "source [operations]",
                        g, tb->id, k, n, op->n_src, op->n_dst);
    if (op->chan_type == TC_MSCCLPP_CH_PORT && (!strcmp(n, "put") || !strcmp(n, "pws") || !strcmp(n, "pwsf")) &&
        op->n_chan < op->n_dst)
        return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                        "gpu %d tb %d op %d '%s': %d destinations over %d port channels: a port put sends each "
                        "destination through its own channel [operations]",
                        g, tb->id, k, n, op->n_dst, op->n_chan);
    if ((!strcmp(n, "copy") || !strcmp(n, "re") || !strcmp(n, "res") || !strcmp(n, "rre") || !strcmp(n, "rres")) &&
        (op->n_src < 1 || op->n_dst < 1))
        return tc_error(ctx, TC_ERR_CHECK, name, op->line, "gpu %d tb %d op %d '%s' needs src_buff and dst_buff "
                        "[operations]", g, tb->id, k, n);
    /* which references are a peer's (execution_kernel.hpp: put writes dst through remote pointers, get reads
     * src so, the reductions' first source and destination are local and the rest remote for r*, rr*) */
    int remote_src_from = !strcmp(n, "get") ? 0 : !strcmp(n, "rre") || !strcmp(n, "rres") ? 1 : INT_MAX;
    int remote_dst_from = !strcmp(n, "put") || !strcmp(n, "pws") || !strcmp(n, "pwsf") || !strcmp(n, "ppkt") ||
                                  !strcmp(n, "rppkt")
                              ? 0
                          : !strcmp(n, "res") || !strcmp(n, "rres") || !strcmp(n, "respkt") ? 1
                          : !strcmp(n, "recspkt")                                          ? 2
                                                                                           : INT_MAX;
    int modelled = op->chan_type != TC_MSCCLPP_CH_SWITCH && strcmp(n, "glres") && strncmp(n, "gstore", 6) &&
                   strcmp(n, "pipeline");
    for (int side = 0; side < 2 && modelled; side++) {
        const tc_mscclpp_buf *b = side ? op->dst : op->src;
        int nb = side ? op->n_dst : op->n_src, from = side ? remote_dst_from : remote_src_from;
        for (int i = 0; i < nb; i++)
            if ((b[i].type == -1) != (i >= from) && b[i].type != -2)
                return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                                "gpu %d tb %d op %d '%s': %s %d must be %s buffer [operations]", g, tb->id, k, n,
                                side ? "dst_buff" : "src_buff", i, i >= from ? "a peer's (buffer_id)" : "a local");
    }
    for (int i = 0; i < op->n_src && !st; i++)
        st = check_ref(ctx, p, name, g, tb, k, op, &op->src[i]);
    for (int i = 0; i < op->n_dst && !st; i++)
        st = check_ref(ctx, p, name, g, tb, k, op, &op->dst[i]);
    if (st)
        return st;
    for (int i = 1; i < op->n_src; i++)
        if (op->src[i].size != op->src[0].size)
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': buffers of %d and %d chunks in one operation [operations]", g,
                            tb->id, k, n, op->src[0].size, op->src[i].size);
    for (int i = 0; i < op->n_dst; i++)
        if (op->n_src && op->dst[i].size != op->src[0].size)
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': buffers of %d and %d chunks in one operation [operations]", g,
                            tb->id, k, n, op->src[0].size, op->dst[i].size);
    if (!strcmp(n, "barrier") && (op->barrier_id < 0 || op->barrier_id >= TC_MSCCLPP_MAX_DEVICE_SYNCERS ||
                                  op->n_tbs < 1 || op->n_tbs > gp->n_tbs))
        return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                        "gpu %d tb %d op %d 'barrier': barrier_id %d of %d device syncers (MAX_DEVICE_SYNCERS) and "
                        "num_threadblocks %d of the gpu's %d [limit-syncers]",
                        g, tb->id, k, op->barrier_id, TC_MSCCLPP_MAX_DEVICE_SYNCERS, op->n_tbs, gp->n_tbs);
    for (int i = 0; i < op->n_sem; i++)
        if (op->sem[i] < 0 || op->sem[i] >= gp->n_sems)
            return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                            "gpu %d tb %d op %d '%s': semaphore %d, but the gpu declares %d [semaphores]", g, tb->id,
                            k, n, op->sem[i], gp->n_sems);
    if (k > 0 && !tb->ops[k - 1].pipeline && mpp_need_nop(&tb->ops[k - 1], op))
        return tc_error(ctx, TC_ERR_CHECK, name, op->line,
                        "gpu %d tb %d op %d '%s' follows '%s' with no nop between: %s [thread-sync]", g, tb->id, k, n,
                        mpp_op_name(&tb->ops[k - 1]),
                        "the executor runs a block's operations back to back, and they use different threads "
                        "(a nop is __syncthreads)");
    return TC_OK;
}

static tc_status check_gpu(tc_ctx *ctx, const tc_mscclpp *p, const char *name, int g)
{
    const tc_mscclpp_gpu *gp = &p->gpus[g];
    if (gp->id != g)
        return tc_error(ctx, TC_ERR_CHECK, name, gp->line, "gpus[%d] has id %d: the loader requires gpus[r].id == r "
                        "(\"GPU rank does not match\") [gpu-id]", g, gp->id);
    if (gp->i_chunks <= 0 && gp->o_chunks <= 0)
        return tc_error(ctx, TC_ERR_CHECK, name, gp->line,
                        "gpu %d: input_chunks and output_chunks are both 0 (\"Output or Input chunks must be greater "
                        "than 0\") [chunks]", g);
    if (gp->n_sems > TC_MSCCLPP_MAX_DEVICE_SEMAPHORES)
        return tc_error(ctx, TC_ERR_CHECK, name, gp->line, "gpu %d declares %d semaphores, more than "
                        "MAX_DEVICE_SEMAPHORES %d [limit-semaphores]", g, gp->n_sems, TC_MSCCLPP_MAX_DEVICE_SEMAPHORES);
    for (int i = 0; i < gp->n_chans; i++)
        if (gp->chans[i].type != TC_MSCCLPP_CH_SWITCH &&
            (gp->chans[i].peer < 0 || gp->chans[i].peer >= p->ngpus || gp->chans[i].peer == g))
            return tc_error(ctx, TC_ERR_CHECK, name, gp->chans[i].line,
                            "gpu %d: a channel connected to %d, not another of the %d gpus [channels]", g,
                            gp->chans[i].peer, p->ngpus);
    for (int i = 0; i < gp->n_rbufs; i++)
        if (gp->rbufs[i].rank < 0 || gp->rbufs[i].rank >= p->ngpus)
            return tc_error(ctx, TC_ERR_CHECK, name, gp->rbufs[i].line,
                            "gpu %d: remote buffer %d of rank %d, not one of the %d gpus [buffers]", g, i,
                            gp->rbufs[i].rank, p->ngpus);
    for (int t = 0; t < gp->n_tbs; t++) {
        const tc_mscclpp_tb *tb = &gp->tbs[t];
        if (tb->id != t)
            return tc_error(ctx, TC_ERR_CHECK, name, tb->line, "gpu %d: threadblocks[%d] has id %d; the loader "
                            "indexes thread blocks by id [tb-id]", g, t, tb->id);
        if (tb->n_ops > TC_MSCCLPP_MAX_OPERATION)
            return tc_error(ctx, TC_ERR_CHECK, name, tb->line,
                            "gpu %d tb %d has %d operations (pipelines' inner ones included); the executor refuses "
                            "more than MAX_OPERATION %d [limit-operations]",
                            g, t, tb->n_ops, TC_MSCCLPP_MAX_OPERATION);
        for (int c = 0; c < 3; c++) {
            int have = c < 2 ? count_type(gp, c) : 0;
            if (tb->n_ch[c] > TC_MSCCLPP_MAX_CHANNEL)
                return tc_error(ctx, TC_ERR_CHECK, name, tb->line, "gpu %d tb %d uses %d %s channels, more than "
                                "MAX_CHANNEL %d [limit-channels]", g, t, tb->n_ch[c], tc_mscclpp_ch_name(c),
                                TC_MSCCLPP_MAX_CHANNEL);
            for (int i = 0; c < 2 && i < tb->n_ch[c]; i++)
                if (tb->ch[c][i] < 0 || tb->ch[c][i] >= have)
                    return tc_error(ctx, TC_ERR_CHECK, name, tb->line, "gpu %d tb %d: %s channel %d, but the gpu "
                                    "declares %d [channels]", g, t, tc_mscclpp_ch_name(c), tb->ch[c][i], have);
        }
        for (int c = 0; c < 2; c++) {
            if (tb->n_rb[c] > TC_MSCCLPP_MAX_CHANNEL)
                return tc_error(ctx, TC_ERR_CHECK, name, tb->line, "gpu %d tb %d refers to %d remote buffers "
                                "through %s channels, more than MAX_CHANNEL %d [limit-channels]", g, t, tb->n_rb[c],
                                tc_mscclpp_ch_name(c), TC_MSCCLPP_MAX_CHANNEL);
            for (int i = 0; i < tb->n_rb[c]; i++)
                if (tb->rb[c][i] < 0 || tb->rb[c][i] >= gp->n_rbufs ||
                    !(gp->rbufs[tb->rb[c][i]].access & (1 << c)))
                    return tc_error(ctx, TC_ERR_CHECK, name, tb->line,
                                    "gpu %d tb %d: remote buffer %d is not one the gpu declares with access through "
                                    "%s channels [buffers]", g, t, tb->rb[c][i], tc_mscclpp_ch_name(c));
        }
        for (int k = 0; k < tb->n_ops; k++) {
            tc_status st = check_op(ctx, p, name, g, tb, k);
            if (st)
                return st;
        }
    }
    return TC_OK;
}

/* the loader's chunk rule for the collective's sizes, and its message-size rule at `size` */
static tc_status check_sizes(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name)
{
    const int R = p->ngpus;
    for (int g = 0; g < R; g++) {
        const tc_mscclpp_gpu *gp = &p->gpus[g];
        long ic = gp->i_chunks, oc = gp->o_chunks;
        int bad = ic > 0 && oc > 0 &&
                  ((p->coll == TC_COLL_ALLREDUCE && ic != oc) || (p->coll == TC_COLL_ALLGATHER && oc != R * ic) ||
                   (p->coll == TC_COLL_REDUCESCATTER && ic != R * oc));
        if (bad)
            return tc_error(ctx, TC_ERR_CHECK, name, gp->line,
                            "gpu %d: %ld input and %ld output chunks give %s chunks of two sizes (\"Size per chunks "
                            "inconsistent\") [chunks]",
                            g, ic, oc, p->collective);
        if (!size || p->coll < 0)
            continue;
        uint64_t in = size, out = size;
        if (p->coll == TC_COLL_ALLGATHER)
            in = size / (uint64_t)R;
        if (p->coll == TC_COLL_REDUCESCATTER)
            out = size / (uint64_t)R;
        uint64_t a = (uint64_t)p->alignment;
        if (a == 0 || in % a || out % a || (ic && (in / a) % (uint64_t)ic) || (oc && (out / a) % (uint64_t)oc))
            return tc_error(ctx, TC_ERR_CHECK, name, gp->line,
                            "gpu %d: at %llu bytes the input (%llu B) and output (%llu B) are not whole numbers of "
                            "buffer_alignment (%llu) x chunks (%ld input, %ld output); the executor refuses "
                            "(\"Input or output size is not aligned with buffer alignment or chunks\") [size]",
                            g, (unsigned long long)size, (unsigned long long)in, (unsigned long long)out,
                            (unsigned long long)a, ic, oc);
    }
    /* the loader compares the output's size for all-gather, the input's otherwise: either is `size`, the
     * collective's size as tacosc counts it */
    if (size && (size < p->min_bytes || size > p->max_bytes))
        return tc_error(ctx, TC_ERR_CHECK, name, p->line,
                        "%llu bytes is outside the plan's min_message_size..max_message_size (%llu..%llu) [size]",
                        (unsigned long long)size, (unsigned long long)p->min_bytes,
                        (unsigned long long)p->max_bytes);
    return TC_OK;
}

/* ---- symbolic execution ------------------------------------------------------------------------------- */

static int slot(const vm *m, int g, int type, int idx)
{
    const tc_mscclpp_gpu *gp = &m->p->gpus[g];
    if (m->p->inplace) { /* the input is (part of) the output, or the output part of the input, where the
                            buffers' chunk counts let it be */
        long to = -1;
        if (m->p->coll == TC_COLL_ALLREDUCE && type == 0)
            to = idx;
        else if (m->p->coll == TC_COLL_ALLGATHER && type == 0)
            to = (long)g * gp->i_chunks + idx;
        if (to >= 0 && to < gp->o_chunks) {
            type = 1;
            idx = (int)to;
        } else if (m->p->coll == TC_COLL_REDUCESCATTER && type == 1 &&
                   (to = (long)g * gp->o_chunks + idx) < gp->i_chunks) {
            type = 0;
            idx = (int)to;
        }
    }
    int off = type == 0 ? 0 : type == 1 ? gp->i_chunks : gp->i_chunks + gp->o_chunks;
    return m->base[g] + off + idx;
}

/* a buffer reference's slot for unit k (remote: the owner's) and its owner */
static int ref_slot(const vm *m, int g, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, const tc_mscclpp_buf *b,
                    int k, int *owner)
{
    if (b->type >= 0) {
        *owner = g;
        return slot(m, g, b->type, b->index + k);
    }
    const tc_mscclpp_rbuf *rb = &m->p->gpus[g].rbufs[tb->rb[op->chan_type][b->id]];
    *owner = rb->rank;
    return slot(m, rb->rank, rb->type, b->index + k);
}

static void vcopy(vm *m, int to, int from)
{
    m->vchunk[to] = m->vchunk[from];
    memcpy(&m->vbits[(size_t)to * m->W], &m->vbits[(size_t)from * m->W], (size_t)m->W * sizeof *m->vbits);
}

static void describe(const vm *m, int sl, char *buf, size_t n)
{
    int c = m->vchunk[sl];
    if (c == -1) {
        snprintf(buf, n, "nothing");
        return;
    }
    if (c == -2) {
        snprintf(buf, n, "a mix of chunks");
        return;
    }
    size_t u = (size_t)snprintf(buf, n, "chunk %d of rank%s {", c, "s");
    int shown = 0, cnt = 0;
    for (int r = 0; r < m->R; r++)
        if (m->vbits[(size_t)sl * m->W + r / 64] >> (r % 64) & 1) {
            cnt++;
            if (shown < 8 && u < n)
                u += (size_t)snprintf(buf + u, n - u, "%s%d", shown++ ? "," : "", r);
        }
    if (u < n)
        snprintf(buf + u, n - u, "%s}", cnt > shown ? ",..." : "");
}

/* acc += slot from, reporting a contribution counted twice or two chunks mixed */
static tc_status vadd(vm *m, int acc, int from, int g, int t, int k, const tc_mscclpp_op *op)
{
    if (m->vchunk[acc] < 0 || m->vchunk[from] < 0) {
        m->vchunk[acc] = m->vchunk[acc] == -1 && m->vchunk[from] == -1 ? -1 : -2;
        return TC_OK;
    }
    char a[160], b[160];
    describe(m, acc, a, sizeof a);
    describe(m, from, b, sizeof b);
    int twice = 0;
    for (int w = 0; w < m->W; w++)
        twice |= (m->vbits[(size_t)acc * m->W + w] & m->vbits[(size_t)from * m->W + w]) != 0;
    if (m->vchunk[acc] != m->vchunk[from] || twice)
        return tc_error(m->ctx, TC_ERR_CHECK, m->name, op->line,
                        "gpu %d tb %d op %d '%s' adds %s to %s: %s [semantics]", g, t, k, mpp_op_name(op), b, a,
                        twice ? "a contribution counted twice" : "two different chunks");
    for (int w = 0; w < m->W; w++)
        m->vbits[(size_t)acc * m->W + w] |= m->vbits[(size_t)from * m->W + w];
    return TC_OK;
}

/* a transfer for to_sched: data of slot `sl` moved from owner `from` to `to` */
static tc_status record(vm *m, int from, int to, int sl)
{
    if (!m->out || from == to)
        return TC_OK;
    int c = m->vchunk[sl];
    if (c < 0 || c >= m->out->n_chunks)
        c = 0;
    return tc_sched_add(m->out, from, to, c, TC_OP_COPY, -1, m->round, m->round, m->round + 1, NULL, 0);
}

/* the channel record of op channel i, and its partner's */
static int chan_rec(const vm *m, int g, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, int i)
{
    return m->cbase[g] + tc_mscclpp_op_chan(&m->p->gpus[g], tb, op, i);
}

static void signal_chans(vm *m, int g, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op)
{
    for (int i = 0; i < op->n_chan; i++) {
        int pr = m->partner[chan_rec(m, g, tb, op, i)];
        if (pr >= 0)
            m->inbound[pr]++;
    }
}

/* LL packet operations (execution_kernel.hpp handle*Packets): packets live in scratch chunks; a packet
 * read waits for packets written in this run (their flag), which is all the synchronisation they have.
 *   ppkt     remote dst[i] packets := src[i]            cpkt   dst[0] packets := src[0]
 *   upkt     dst[0] := packets src[0]                   rppkt  remote dst[i] packets := packets src[0]
 *   repkt    dst[0] := src[0] + packets src[1..]        respkt the same, and remote dst[1..] packets := it
 *   recpkt   repkt, and dst[1] packets := it            recspkt recpkt, and remote dst[2..] packets := it */
static tc_status exec_packets(vm *m, int g, int t, int k, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op,
                              int *blocked)
{
    const char *n = mpp_op_name(op);
    int o;
    for (int i = tc_mscclpp_first_packet_src(op); i < op->n_src; i++)
        for (int u = 0; u < op->src[i].size; u++)
            if (!m->ready[ref_slot(m, g, tb, op, &op->src[i], u, &o)]) {
                *blocked = 1;
                return TC_OK;
            }
    tc_status st = TC_OK;
    for (int u = 0; u < op->src[0].size && !st; u++) {
        int acc = m->base[m->R], s0 = ref_slot(m, g, tb, op, &op->src[0], u, &o);
        if (!strcmp(n, "ppkt") || !strcmp(n, "cpkt") || !strcmp(n, "rppkt") || !strcmp(n, "upkt")) {
            for (int i = 0; i < op->n_dst && !st; i++) {
                int so, dow, sl = ref_slot(m, g, tb, op, &op->src[!strcmp(n, "ppkt") ? i : 0], u, &so);
                int d = ref_slot(m, g, tb, op, &op->dst[i], u, &dow);
                vcopy(m, d, sl);
                m->ready[d] = strcmp(n, "upkt") != 0;
                st = record(m, so, dow, d);
            }
            continue;
        }
        vcopy(m, acc, s0);
        for (int i = 1; i < op->n_src && !st; i++)
            st = vadd(m, acc, ref_slot(m, g, tb, op, &op->src[i], u, &o), g, t, k, op);
        for (int i = 0; i < op->n_dst && !st; i++) {
            if (i > 0 && !strcmp(n, "repkt"))
                break;
            int dow, d = ref_slot(m, g, tb, op, &op->dst[i], u, &dow);
            vcopy(m, d, acc);
            m->ready[d] = i > 0; /* dst[0] holds data, the others packets */
            st = record(m, g, dow, d);
        }
    }
    return st;
}

/* execute op; *blocked when it cannot proceed yet */
static tc_status exec_op(vm *m, int g, int t, int *blocked)
{
    const tc_mscclpp_tb *tb = &m->p->gpus[g].tbs[t];
    const int k = m->pc[m->tbase[g] + t];
    const tc_mscclpp_op *op = &tb->ops[k];
    const char *n = mpp_op_name(op);
    tc_status st = TC_OK;
    *blocked = 0;
    if (!strcmp(n, "wait") || !strcmp(n, "rlxwait")) {
        for (int i = 0; i < op->n_chan; i++) {
            int r = chan_rec(m, g, tb, op, i);
            if (m->inbound[r] <= m->taken[r]) {
                *blocked = 1;
                return TC_OK;
            }
        }
        for (int i = 0; i < op->n_chan; i++)
            m->taken[chan_rec(m, g, tb, op, i)]++;
    } else if (!strcmp(n, "signal") || !strcmp(n, "rlxsignal")) {
        signal_chans(m, g, tb, op);
    } else if (!strcmp(n, "barrier")) {
        int *cnt = &m->bar_n[g * TC_MSCCLPP_MAX_DEVICE_SYNCERS + op->barrier_id];
        int *gen = &m->bar_gen[g * TC_MSCCLPP_MAX_DEVICE_SYNCERS + op->barrier_id];
        int *mine = &m->bgen[m->tbase[g] + t];
        if (*mine < 0) {
            *mine = *gen;
            if (++*cnt == op->n_tbs) {
                *cnt = 0;
                ++*gen;
            }
        }
        if (*mine == *gen) {
            *blocked = 1;
            return TC_OK;
        }
        *mine = -1;
    } else if (!strcmp(n, "sem_acquire")) {
        int *sv = &m->sem[g * TC_MSCCLPP_MAX_DEVICE_SEMAPHORES];
        for (int i = 0; i < op->n_sem; i++)
            if (sv[op->sem[i]] <= 0) {
                *blocked = 1;
                return TC_OK;
            }
        for (int i = 0; i < op->n_sem; i++)
            sv[op->sem[i]]--;
    } else if (!strcmp(n, "sem_release")) {
        for (int i = 0; i < op->n_sem; i++)
            m->sem[g * TC_MSCCLPP_MAX_DEVICE_SEMAPHORES + op->sem[i]]++;
    } else if (!strcmp(n, "copy") || !strcmp(n, "put") || !strcmp(n, "pws") || !strcmp(n, "pwsf") ||
               !strcmp(n, "get")) {
        for (int i = 0; i < op->n_dst && !st; i++)
            for (int u = 0; u < op->dst[i].size && !st; u++) {
                int so, dow, s = ref_slot(m, g, tb, op, &op->src[i], u, &so), d = ref_slot(m, g, tb, op, &op->dst[i], u, &dow);
                vcopy(m, d, s);
                st = record(m, so, dow, d);
            }
        if (!strcmp(n, "pws") || !strcmp(n, "pwsf"))
            signal_chans(m, g, tb, op);
    } else if (!strcmp(n, "re") || !strcmp(n, "res") || !strcmp(n, "rre") || !strcmp(n, "rres")) {
        /* dst[0] = src[0] + src[1..]; the remote forms read (rre) or also write (res, rres) peers' chunks */
        for (int u = 0; u < op->src[0].size && !st; u++) {
            int o, acc = m->base[m->R]; /* the spare slot */
            vcopy(m, acc, ref_slot(m, g, tb, op, &op->src[0], u, &o));
            for (int i = 1; i < op->n_src && !st; i++) {
                int s = ref_slot(m, g, tb, op, &op->src[i], u, &o);
                if (!(st = vadd(m, acc, s, g, t, k, op)))
                    st = record(m, o, g, s);
            }
            for (int i = 0; i < op->n_dst && !st; i++) {
                int d = ref_slot(m, g, tb, op, &op->dst[i], u, &o);
                vcopy(m, d, acc);
                st = record(m, g, o, d);
            }
        }
    } else if (tc_mscclpp_op_at((size_t)op->op)->packets) {
        if ((st = exec_packets(m, g, t, k, tb, op, blocked)) || *blocked)
            return st;
    }
    /* nop, flush: nothing to model */
    m->pc[m->tbase[g] + t]++;
    return st;
}

static int unmodelled(const tc_mscclpp *p, char *why, size_t n)
{
    if (p->coll != TC_COLL_ALLREDUCE && p->coll != TC_COLL_ALLGATHER && p->coll != TC_COLL_REDUCESCATTER) {
        snprintf(why, n, "collective %s", p->collective);
        return 1;
    }
    for (int g = 0; g < p->ngpus; g++)
        for (int t = 0; t < p->gpus[g].n_tbs; t++)
            for (int k = 0; k < p->gpus[g].tbs[t].n_ops; k++) {
                const tc_mscclpp_op *op = &p->gpus[g].tbs[t].ops[k];
                const tc_mscclpp_op_info *i = tc_mscclpp_op_at((size_t)op->op);
                if ((i->packets && op->chan_type == TC_MSCCLPP_CH_PORT) || !strcmp(i->name, "gstorepkt") ||
                    op->pipeline || op->tbg_size > 1 || !strcmp(i->name, "glres") || !strcmp(i->name, "gstore") ||
                    op->chan_type == TC_MSCCLPP_CH_SWITCH) {
                    snprintf(why, n, "%s%s", i->name, op->tbg_size > 1 ? " with tbg_info" : "");
                    return 1;
                }
            }
    return 0;
}

static void vm_free(vm *m)
{
    free(m->base);
    free(m->vchunk);
    free(m->ready);
    free(m->vbits);
    free(m->cbase);
    free(m->partner);
    free(m->inbound);
    free(m->taken);
    free(m->tbase);
    free(m->tgpu);
    free(m->pc);
    free(m->bgen);
    free(m->bar_n);
    free(m->bar_gen);
    free(m->sem);
}

/* pair every channel with its partner: tag k of a gpu's channels to a peer meets the peer's tag k back, of
 * the same type (tc_mscclpp_chan_tags) */
static void pair_channels(vm *m)
{
    const tc_mscclpp *p = m->p;
    int n = m->cbase[m->R];
    int *cnt = calloc((size_t)m->R + 1, sizeof *cnt), *tag = malloc((size_t)n * sizeof *tag + 1);
    if (!cnt || !tag) {
        free(cnt);
        free(tag);
        m->failed = -1;
        return;
    }
    for (int g = 0; g < m->R; g++)
        tc_mscclpp_chan_tags(&p->gpus[g], cnt, tag + m->cbase[g]);
    for (int g = 0; g < m->R; g++)
        for (int i = 0; i < p->gpus[g].n_chans; i++) {
            const tc_mscclpp_chan *c = &p->gpus[g].chans[i];
            int r = m->cbase[g] + i;
            m->partner[r] = -1;
            for (int j = 0; tag[r] >= 0 && j < p->gpus[c->peer].n_chans; j++) {
                const tc_mscclpp_chan *d = &p->gpus[c->peer].chans[j];
                if (d->peer == g && d->type == c->type && tag[m->cbase[c->peer] + j] == tag[r]) {
                    m->partner[r] = m->cbase[c->peer] + j;
                    break;
                }
            }
        }
    free(cnt);
    free(tag);
}

static tc_status vm_init(vm *m)
{
    const tc_mscclpp *p = m->p;
    const int R = m->R = p->ngpus;
    m->W = (R + 63) / 64;
    m->base = malloc(((size_t)R + 1) * sizeof *m->base);
    m->cbase = malloc(((size_t)R + 1) * sizeof *m->cbase);
    m->tbase = malloc(((size_t)R + 1) * sizeof *m->tbase);
    if (!m->base || !m->cbase || !m->tbase)
        return TC_ERR_NOMEM;
    m->base[0] = m->cbase[0] = m->tbase[0] = 0;
    for (int g = 0; g < R; g++) {
        const tc_mscclpp_gpu *gp = &p->gpus[g];
        if ((long)m->base[g] + gp->i_chunks + gp->o_chunks + gp->s_chunks > TC_MSCCLPP_MAX_SLOTS)
            return tc_error(m->ctx, TC_ERR_LIMIT, m->name, gp->line,
                            "the symbolic check tracks at most %d chunks over all gpus; gpu %d goes past it",
                            TC_MSCCLPP_MAX_SLOTS, g);
        m->base[g + 1] = m->base[g] + gp->i_chunks + gp->o_chunks + gp->s_chunks;
        m->cbase[g + 1] = m->cbase[g] + gp->n_chans;
        m->tbase[g + 1] = m->tbase[g] + gp->n_tbs;
    }
    size_t ns = (size_t)m->base[R] + 1, nc = (size_t)m->cbase[R] + 1, nt = (size_t)m->tbase[R] + 1;
    if (ns * (size_t)m->W > TC_MSCCLPP_MAX_SLOTS)
        return tc_error(m->ctx, TC_ERR_LIMIT, m->name, p->line,
                        "the symbolic check tracks at most %d chunk contributions; this plan has %zu chunks of %d "
                        "gpus (the loader's chunk counts)",
                        TC_MSCCLPP_MAX_SLOTS, ns - 1, R);
    if (!(m->tgpu = malloc(nt * sizeof *m->tgpu)))
        return TC_ERR_NOMEM;
    for (int g = 0; g < R; g++)
        for (int t = m->tbase[g]; t < m->tbase[g + 1]; t++)
            m->tgpu[t] = g;
    m->ntb = m->tbase[R];
    m->vchunk = malloc(ns * sizeof *m->vchunk);
    m->ready = calloc(ns, 1);
    m->vbits = calloc(ns * (size_t)m->W, sizeof *m->vbits);
    m->partner = malloc(nc * sizeof *m->partner);
    m->inbound = calloc(nc, sizeof *m->inbound);
    m->taken = calloc(nc, sizeof *m->taken);
    m->pc = calloc(nt, sizeof *m->pc);
    m->bgen = malloc(nt * sizeof *m->bgen);
    m->bar_n = calloc((size_t)R * TC_MSCCLPP_MAX_DEVICE_SYNCERS + 1, sizeof *m->bar_n);
    m->bar_gen = calloc((size_t)R * TC_MSCCLPP_MAX_DEVICE_SYNCERS + 1, sizeof *m->bar_gen);
    m->sem = calloc((size_t)R * TC_MSCCLPP_MAX_DEVICE_SEMAPHORES + 1, sizeof *m->sem);
    if (!m->vchunk || !m->ready || !m->vbits || !m->partner || !m->inbound || !m->taken || !m->pc || !m->bgen || !m->bar_n ||
        !m->bar_gen || !m->sem)
        return TC_ERR_NOMEM;
    for (size_t i = 0; i < ns; i++)
        m->vchunk[i] = -1;
    for (size_t i = 0; i < nt; i++)
        m->bgen[i] = -1;
    for (int g = 0; g < R; g++) {
        const tc_mscclpp_gpu *gp = &p->gpus[g];
        for (int i = 0; i < gp->n_sems && i < TC_MSCCLPP_MAX_DEVICE_SEMAPHORES; i++)
            m->sem[g * TC_MSCCLPP_MAX_DEVICE_SEMAPHORES + i] = gp->sem_init[i];
        /* the inputs: all-gather rank g's chunk j is the collective's chunk g K + j; otherwise chunk j */
        int K = p->coll == TC_COLL_ALLGATHER ? gp->i_chunks : 0;
        for (int j = 0; j < gp->i_chunks; j++) {
            int sl = slot(m, g, 0, j);
            m->vchunk[sl] = g * K + j;
            m->vbits[(size_t)sl * m->W + g / 64] |= 1ull << (g % 64);
        }
    }
    pair_channels(m);
    return m->failed < 0 ? TC_ERR_NOMEM : TC_OK;
}

/* the outputs the collective defines, on every gpu */
static tc_status check_result(vm *m, int policy)
{
    const tc_mscclpp *p = m->p;
    for (int g = 0; g < m->R; g++) {
        const tc_mscclpp_gpu *gp = &p->gpus[g];
        for (int j = 0; j < gp->o_chunks; j++) {
            int want = p->coll == TC_COLL_REDUCESCATTER ? g * gp->o_chunks + j : j, all = 1;
            int sl = slot(m, g, 1, j), ok = m->vchunk[sl] == want;
            for (int r = 0; r < m->R && ok; r++) {
                int has = m->vbits[(size_t)sl * m->W + r / 64] >> (r % 64) & 1;
                int need = p->coll == TC_COLL_ALLGATHER ? r == want / (gp->i_chunks ? gp->i_chunks : 1) : all;
                ok = has == need;
            }
            if (!ok) {
                char have[200];
                describe(m, sl, have, sizeof have);
                tc_error(m->ctx, TC_ERR_CHECK, m->name, gp->line,
                         "gpu %d: output chunk %d holds %s at the end, not chunk %d %s%s [result]", g, j, have, want,
                         p->coll == TC_COLL_ALLGATHER ? "of its owner" : "summed over every rank",
                         policy ? " (with the thread blocks run in another legal order: a race)" : "");
                return TC_ERR_CHECK;
            }
        }
    }
    return TC_OK;
}

/* run every thread block to its end in one policy: 0 one op per block per round, 1 lowest block first as
 * far as it goes, 2 highest first */
static tc_status run(vm *m, int policy)
{
    const tc_mscclpp *p = m->p;
    tc_status st = TC_OK;
    int left = 0;
    for (int g = 0; g < m->R; g++)
        for (int t = 0; t < p->gpus[g].n_tbs; t++)
            left += p->gpus[g].tbs[t].n_ops > 0;
    for (m->round = 0; left > 0 && !st; m->round += 2) {
        int progress = 0;
        for (int i = 0; i < m->ntb && !st; i++) {
            int id = policy == 2 ? m->ntb - 1 - i : i, g = m->tgpu[id];
            int t = id - m->tbase[g];
            const tc_mscclpp_tb *tb = &p->gpus[g].tbs[t];
            while (m->pc[id] < tb->n_ops && !st) {
                int blocked;
                st = exec_op(m, g, t, &blocked);
                if (blocked)
                    break;
                progress = 1;
                if (m->pc[id] == tb->n_ops)
                    left--;
                if (policy == 0)
                    break;
            }
        }
        if (!progress && left > 0 && !st) {
            for (int id = 0; id < m->ntb; id++) {
                int g = m->tgpu[id];
                const tc_mscclpp_tb *tb = &p->gpus[g].tbs[id - m->tbase[g]];
                if (m->pc[id] < tb->n_ops) {
                    const tc_mscclpp_op *op = &tb->ops[m->pc[id]];
                    return tc_error(m->ctx, TC_ERR_CHECK, m->name, op->line,
                                    "deadlock: gpu %d tb %d waits forever at op %d '%s' (%d thread blocks blocked) "
                                    "[deadlock]",
                                    g, tb->id, m->pc[id], mpp_op_name(op), left);
                }
            }
        }
    }
    return st ? st : check_result(m, policy);
}

tc_status tc_mscclpp_check_size(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name)
{
    return check_sizes(ctx, p, size, name);
}

static tc_status structure(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name)
{
    tc_status st = TC_OK;
    if (p->ngpus < 1)
        return tc_error(ctx, TC_ERR_CHECK, name, p->line, "\"gpus\" is empty: a plan runs on at least one gpu [fields]");
    for (int g = 0; g < p->ngpus && !st; g++)
        st = check_gpu(ctx, p, name, g);
    if (!st)
        st = check_sizes(ctx, p, size, name);
    return st;
}

static tc_status simulate(tc_ctx *ctx, const tc_mscclpp *p, const char *name, int policy, tc_sched *out)
{
    vm m = {.ctx = ctx, .p = p, .name = name, .out = out};
    tc_status st = vm_init(&m); /* its slots end with a spare one: the reductions' accumulator */
    if (!st)
        st = run(&m, policy);
    vm_free(&m);
    return st;
}

tc_status tc_mscclpp_verify(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name,
                            tc_mscclpp_verdict *v)
{
    tc_mscclpp_verdict dv;
    if (!v)
        v = &dv;
    memset(v, 0, sizeof *v);
    for (int g = 0; g < p->ngpus; g++) {
        if (p->gpus[g].n_tbs > v->max_tbs)
            v->max_tbs = p->gpus[g].n_tbs;
        for (int t = 0; t < p->gpus[g].n_tbs; t++)
            v->ops += p->gpus[g].tbs[t].n_ops;
    }
    tc_status st = structure(ctx, p, size, name);
    if (st)
        return st;
    if (v->max_tbs > TC_MSCCLPP_MAX_TBS)
        tc_warn(ctx, name, 0, "%d thread blocks on one gpu: where they do not all fit on the GPU at once, blocks "
                "that wait for peers can hold the SMs others need", v->max_tbs);
    if (unmodelled(p, v->unmodelled, sizeof v->unmodelled)) {
        tc_diag(ctx, TC_DIAG_NOTE, name, 0, 0, "the symbolic check does not model %s: rules and limits only",
                v->unmodelled);
        return TC_OK;
    }
    v->modelled = 1;
    for (int pol = 0; pol < 3 && !st; pol++)
        st = simulate(ctx, p, name, pol, NULL);
    return st;
}

tc_status tc_mscclpp_to_sched(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name, tc_sched **out)
{
    char why[64];
    tc_status st = structure(ctx, p, 0, name);
    if (st)
        return st;
    if (unmodelled(p, why, sizeof why))
        return tc_error(ctx, TC_ERR_UNSUPPORTED, name, 0, "cannot price this plan: tacosc does not model %s", why);
    const int R = p->ngpus;
    const tc_mscclpp_gpu *g0 = &p->gpus[0];
    int K = p->coll == TC_COLL_ALLGATHER ? g0->i_chunks : p->coll == TC_COLL_REDUCESCATTER ? g0->o_chunks
                                                                                          : g0->i_chunks / R;
    int odd = p->coll == TC_COLL_ALLREDUCE && (K < 1 || g0->i_chunks % R);
    tc_sched *s = NULL;
    if (!size) /* a plan carries no size: its max_message_size, else 1 MiB (as for MSCCL XML) */
        size = p->max_bytes && p->max_bytes != UINT64_MAX ? p->max_bytes : 1u << 20;
    if ((st = tc_sched_create((tc_coll)p->coll, R, odd ? 1 : K, size, &s)))
        return st;
    if (odd) {
        s->n_chunks = g0->i_chunks;
        s->chunk_bytes = (s->size_bytes + (uint64_t)s->n_chunks - 1) / (uint64_t)s->n_chunks;
    }
    s->wire_scale = p->packets ? 2 : 1; /* LL: 8 bytes of data and 8 of flags per packet */
    if (!(st = tc_sched_set_names(s, "mscclpp", p->name)))
        st = simulate(ctx, p, name, 0, s);
    if (st) {
        tc_sched_free(s);
        return st;
    }
    *out = s;
    return TC_OK;
}
