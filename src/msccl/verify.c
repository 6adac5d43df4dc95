/*
 * MSCCL verifier and MSCCL -> schedule IR (man 5 tacosc-msccl).
 *
 * Accepts: a tc_msccl (read from any producer's file or lowered by tacosc).
 * Returns: TC_OK, or the first violation as `name:line: error: ... [rule]`:
 *  - structure (tc_msccl_check_structure): ids, step numbering, peers, channels, cnt 1..71, offsets,
 *    declared buffer sizes, hasdep, dependencies, and the runtimes' treatment of nop steps (a nop is no
 *    step to them: its dependency passes to the next step, which counts it: Azure/msccl-executor-nccl and
 *    ROCm/rccl src/misc/msccl/msccl_parser.cc, src/device/msccl_kernel*);
 *  - the target's limits (tc_msccl_check_limits; NULL: those common to NCCL and RCCL): steps per tb, tbs
 *    per gpu, channels, chan (the parser's off-by-one), depid, ngpus and XML nodes per rank (the parser's
 *    MAX_SUBS and MAX_NODES), tbs per channel, int16 offsets, RCCL's refusal of fused types;
 *  - matching: per connection (sender, receiver, channel) the sender's send sequence and the receiver's
 *    receive sequence have the same length and the same cnt in order;
 *  - deadlock freedom and the result, by a chunk-level execution in rounds under the runtime's model:
 *    each tb runs its steps in order; a step with depid waits until tb depid completed step deps; a
 *    receive needs a message sent in an earlier round; a send blocks while its connection holds
 *    TC_MSCCL_CONN_SLOTS unreceived messages.  Nothing enabled and steps left = deadlock (the blocked tb
 *    named is on the wait-for cycle).  A round examines only the tbs whose wait can have ended (they ran,
 *    or the tb they wait for ran), so the cost follows the steps, not rounds times tbs.
 * What the execution allocates is bounded by the file: nchunksperloop by the chunks the program sends
 * (every collective over R >= 2 gpus moves at least nchunksperloop (R-1)/R), holdings and slots by
 * TC_MSCCL_MAX_HOLDINGS, buffers by the layout and what the steps address (never declared counts).
 *
 * MSCCL -> IR.  Every slot of every gpu holds a value: chunk id, contribution set, and the "pieces" it is
 * made of, each a (rank q, time t, set S) with "rank q held S of this chunk at t" in the schedule IR.
 * Landing in a slot that is the chunk's own place in the i/o layout of that rank ("commit") emits IR
 * transfers from the pieces' ranks (copy for the first, reduce for the rest; a piece that is already the
 * rank's current holding is kept) with t_start = the piece's time: what left q then.  Scratch and other
 * slots hold values without emitting anything, so data parked in scratch or forwarded from scratch
 * becomes one logical transfer from where it was last held.  A reduction whose local operand is the
 * rank's current holding (rrs, rrcs) is committed at that rank ("pretend store"), so ring chains stay
 * chains.  At the end each output slot must hold what the IR says the rank holds ([wrong-result]
 * otherwise), and tc_sched_check judges the collective's postcondition on the IR.  Times are the global
 * execution order of steps (1, 2, ...), `step` is the round.
 * Cost: O(steps * cnt * pieces * R/64) plus O(rounds * tbs) for the round scan.
 */
#include "tacos/check.h"
#include "tacos/msccl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------ */
/* Step semantics                                                                                    */

#define t_recvs tc_msccl_type_recvs
#define t_sends tc_msccl_type_sends
static int t_uses_src(int t)
{
    return t == TC_MS_SEND || t == TC_MS_RRS || t == TC_MS_RRC || t == TC_MS_RRCS || t == TC_MS_CPY || t == TC_MS_RE;
}
static int t_uses_dst(int t)
{
    return t == TC_MS_RECV || t == TC_MS_RCS || t == TC_MS_RRC || t == TC_MS_RRCS || t == TC_MS_CPY || t == TC_MS_RE;
}

static int buf_chunks(const tc_msccl_gpu *g, int b)
{
    return b == TC_MS_BUF_I ? g->i_chunks : b == TC_MS_BUF_O ? g->o_chunks : b == TC_MS_BUF_S ? g->s_chunks : 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Structure                                                                                         */

typedef struct ckey { int chan, peer, dir, tb; } ckey;

static int cmp_ckey(const void *a, const void *b)
{
    const ckey *x = a, *y = b;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    if (x->dir != y->dir)
        return x->dir - y->dir;
    if (x->peer != y->peer)
        return x->peer < y->peer ? -1 : 1;
    return x->tb - y->tb;
}

/* At most one tb per (channel, send peer) and per (channel, receive peer): sorted, O(T log T). */
static tc_status check_unique_peers(tc_ctx *ctx, const tc_msccl_gpu *g, int gi, const char *name)
{
    ckey *k = malloc(((size_t)g->n_tbs * 2 + 1) * sizeof *k);
    if (!k)
        return TC_ERR_NOMEM;
    int n = 0;
    for (int t = 0; t < g->n_tbs; t++)
        for (int dir = 0; dir < 2; dir++) {
            int peer = dir ? g->tbs[t].recv : g->tbs[t].send;
            if (peer >= 0)
                k[n++] = (ckey){g->tbs[t].chan, peer, dir, t};
        }
    qsort(k, (size_t)n, sizeof *k, cmp_ckey);
    /* report the pair whose later tb comes first, as a scan in tb order would */
    int best = -1;
    for (int i = 1; i < n; i++)
        if (k[i].chan == k[i - 1].chan && k[i].dir == k[i - 1].dir && k[i].peer == k[i - 1].peer &&
            (best < 0 || k[i].tb < k[best].tb || (k[i].tb == k[best].tb && k[i].dir < k[best].dir)))
            best = i;
    tc_status st = TC_OK;
    if (best >= 0) {
        const ckey *x = &k[best - 1], *y = &k[best];
        st = tc_error(ctx, TC_ERR_INVALID, name, g->tbs[y->tb].line,
                      y->dir ? "gpu %d: tb %d and tb %d both receive from gpu %d on channel %d [duplicate-recv-peer]"
                             : "gpu %d: tb %d and tb %d both send to gpu %d on channel %d [duplicate-send-peer]",
                      gi, x->tb, y->tb, y->peer, y->chan);
    }
    free(k);
    return st;
}

tc_status tc_msccl_check_structure(tc_ctx *ctx, const tc_msccl *m, const char *name)
{
    const int R = m->ngpus;
    tc_status st = TC_ERR_INVALID;
    for (int gi = 0; gi < R; gi++) {
        const tc_msccl_gpu *g = &m->gpus[gi];
        if (g->id != gi)
            return tc_error(ctx, st, name, g->line, "<gpu id=\"%d\"> where id=\"%d\" is expected [gpu-id]", g->id, gi);
        for (int t = 0; t < g->n_tbs; t++) {
            const tc_msccl_tb *tb = &g->tbs[t];
            if (tb->id != t)
                return tc_error(ctx, st, name, tb->line,
                                "gpu %d: <tb id=\"%d\"> where id=\"%d\" is expected (tb ids are 0, 1, 2, ...) [tb-id]",
                                gi, tb->id, t);
            if (tb->send == gi || tb->recv == gi)
                return tc_error(ctx, st, name, tb->line, "gpu %d tb %d: %s peer is its own rank [self-peer]", gi, t,
                                tb->send == gi ? "send" : "receive");
            if (tb->send < -1 || tb->send >= R || tb->recv < -1 || tb->recv >= R) {
                int bad = (tb->send < -1 || tb->send >= R) ? tb->send : tb->recv;
                return tc_error(ctx, st, name, tb->line, "gpu %d tb %d: peer %d out of range (-1 or 0..%d)%s [peer-range]",
                                gi, t, bad, R - 1,
                                bad >= R ? ": the runtimes do not check it and connect to a rank that is not there" : "");
            }
            if (tb->chan < 0 || tb->chan >= m->nchannels)
                return tc_error(ctx, st, name, tb->line, "gpu %d tb %d: chan=\"%d\" but nchannels=\"%d\" [channel-range]",
                                gi, t, tb->chan, m->nchannels);
        }
        if ((st = check_unique_peers(ctx, g, gi, name)))
            return st;
        st = TC_ERR_INVALID;
        long ext[3] = {0, 0, 0}; /* chunks the steps address in i, o, s */
        for (int t = 0; t < g->n_tbs; t++) {
            const tc_msccl_tb *tb = &g->tbs[t];
            int pending = -1; /* first nop of a run of nops whose dependencies await a step */
            for (int k = 0; k < tb->n_steps; k++) {
                const tc_msccl_step *s = &tb->steps[k];
                if (s->s != k)
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d: step s=\"%d\" where s=\"%d\" is expected (steps are numbered 0, 1, "
                                    "2, ...) [step-gap]",
                                    gi, t, s->s, k);
                if ((unsigned)s->type >= TC_MS_TYPE_COUNT)
                    return tc_error(ctx, st, name, s->line, "gpu %d tb %d step %d: unknown step type [step-type]", gi, t, k);
                const char *ty = tc_msccl_type_name((tc_msccl_type)s->type);
                if (tc_msccl_type_sends(s->type) && tb->send < 0)
                    return tc_error(ctx, st, name, s->line, "gpu %d tb %d step %d: %s sends but the tb has send=\"-1\" [no-peer]",
                                    gi, t, k, ty);
                if (tc_msccl_type_recvs(s->type) && tb->recv < 0)
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d step %d: %s receives but the tb has recv=\"-1\" [no-peer]", gi, t, k, ty);
                if (s->type != TC_MS_NOP && (s->cnt < 1 || s->cnt > TC_MSCCL_MAX_CNT))
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d step %d: cnt=\"%d\" (1..%d: the runtimes keep cnt in 8 bits and refuse "
                                    "%d or more) [cnt]",
                                    gi, t, k, s->cnt, TC_MSCCL_MAX_CNT, TC_MSCCL_MAX_CNT + 1);
                for (int side = 0; side < 2; side++) {
                    int used = side ? t_uses_dst(s->type) : t_uses_src(s->type);
                    int b = side ? s->dstbuf : s->srcbuf, off = side ? s->dstoff : s->srcoff;
                    if (!used)
                        continue;
                    if (b < 0 || b > 2)
                        return tc_error(ctx, st, name, s->line, "gpu %d tb %d step %d: unknown buffer [buffer]", gi, t, k);
                    int n = buf_chunks(g, b);
                    if (off < 0 || (long)off + s->cnt > n)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: %s chunks %d..%ld outside %s_chunks=\"%d\" [offset-range]",
                                        gi, t, k, tc_msccl_buf_name(b), off, (long)off + s->cnt - 1, tc_msccl_buf_name(b),
                                        n);
                    if ((long)off + s->cnt > ext[b])
                        ext[b] = (long)off + s->cnt;
                }
                if (s->hasdep != 0 && s->hasdep != 1)
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d step %d: hasdep=\"%d\": the runtimes accept only 0 or 1 [hasdep]", gi, t,
                                    k, s->hasdep);
                if (s->depid >= 0) {
                    if (s->depid >= g->n_tbs || s->deps < 0 || s->deps >= g->tbs[s->depid].n_steps)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: depends on tb %d step %d, which does not exist [dep-missing]",
                                        gi, t, k, s->depid, s->deps);
                    const tc_msccl_step *d = &g->tbs[s->depid].steps[s->deps];
                    if (d->type == TC_MS_NOP)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: depends on tb %d step %d, a nop: the runtimes signal only "
                                        "steps that move data [dep-on-nop]",
                                        gi, t, k, s->depid, s->deps);
                    if (!d->hasdep)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: depends on tb %d step %d, which lacks hasdep=\"1\" "
                                        "[dep-without-hasdep]",
                                        gi, t, k, s->depid, s->deps);
                } else if (s->depid != -1) {
                    return tc_error(ctx, st, name, s->line, "gpu %d tb %d step %d: depid=\"%d\" (-1 or a tb id) [dep-missing]",
                                    gi, t, k, s->depid);
                }
                /* nop: the runtimes keep no step for it, only its dependency, which the next step of the tb
                 * takes over and counts as one step each (msccl_parser.cc; msccl_kernel step += numDependencies-1) */
                if (s->type == TC_MS_NOP) {
                    if (s->depid < 0)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: nop without a dependency: the runtimes skip it without "
                                        "counting it, so the later step numbers of the tb shift [nop-no-dep]",
                                        gi, t, k);
                    if (pending < 0)
                        pending = k;
                } else if (pending >= 0) {
                    if (s->depid < 0)
                        return tc_error(ctx, st, name, tb->steps[pending].line,
                                        "gpu %d tb %d step %d: nop steps whose dependencies step %d (%s) does not take "
                                        "over: a run of nops must be followed by a step with a dependency (the runtimes "
                                        "refuse the file) [nop-chain]",
                                        gi, t, pending, k, ty);
                    pending = -1;
                }
            }
            if (pending >= 0)
                return tc_error(ctx, st, name, tb->steps[pending].line,
                                "gpu %d tb %d step %d: nop steps at the end of the tb: the runtimes drop their "
                                "dependencies [nop-chain]",
                                gi, t, pending);
        }
        /* declared buffer sizes: at most the collective's layout or what the steps address (a declared
         * count allocates: the runtimes size scratch by s_chunks) */
        long L = m->nchunksperloop > 0 ? m->nchunksperloop : 0, part = R > 0 ? (L + R - 1) / R : L;
        long lay[3] = {(m->coll == TC_COLL_ALLGATHER || m->coll == TC_COLL_GATHER) ? part : L,
                       (m->coll == TC_COLL_REDUCESCATTER || m->coll == TC_COLL_SCATTER) ? part : L, 0};
        for (int b = 0; b < 3; b++) {
            long n = buf_chunks(g, b), lim = lay[b] > ext[b] ? lay[b] : ext[b];
            if (n > lim && b == TC_MS_BUF_S)
                return tc_error(ctx, st, name, g->line,
                                "gpu %d: s_chunks=\"%ld\" but the steps address %ld scratch chunks (the runtimes "
                                "allocate scratch for all of them) [chunk-count]",
                                gi, n, ext[b]);
            if (n > lim)
                return tc_error(ctx, st, name, g->line,
                                "gpu %d: %s_chunks=\"%ld\" exceeds the %s layout (%ld chunks) and what the steps "
                                "address (%ld) [chunk-count]",
                                gi, tc_msccl_buf_name(b), n, tc_coll_name(m->coll), lay[b], ext[b]);
        }
    }
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Limits and matching                                                                               */

tc_status tc_msccl_check_limits(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *l, const char *name)
{
    tc_status st = TC_ERR_LIMIT;
    const char *tn = tc_msccl_target_name(l->target);
    int line = m->line > 0 ? m->line : 1;
    /* msccl-executor-nccl reads minBytes, maxBytes and outofplace with mscclXmlGetAttrInt64/Int, which fail
     * on a missing attribute (src/misc/msccl/msccl_parser.cc, mscclAlgoXmlLoad); RCCL's parser is the same */
    if (m->legacy && l->target != TC_TARGET_EXEC)
        return tc_error(ctx, st, name, line,
                        "<algo> lacks minBytes, maxBytes or outofplace, which %s requires: it refuses this file "
                        "(--target tacos-run accepts it; tacos-run --accept-legacy replays it) [legacy]",
                        l->target == TC_TARGET_COMMON ? "each of NCCL and RCCL" : tn);
    if (m->ngpus > l->max_gpus)
        return tc_error(ctx, st, name, line,
                        "ngpus=\"%d\": the runtimes' parser holds at most %d child elements per element "
                        "(MAX_SUBS) [limit-gpus]",
                        m->ngpus, l->max_gpus);
    for (int gi = 0; gi < m->ngpus; gi++)
        for (int t = 0; t < m->gpus[gi].n_tbs; t++) {
            const tc_msccl_tb *tb = &m->gpus[gi].tbs[t];
            if (tb->chan >= l->max_channels) {
                if (tb->chan == l->hard_channels)
                    return tc_error(ctx, st, name, tb->line,
                                    "gpu %d tb %d: chan=\"%d\": %s has channels 0..%d; its parser lets %d through (an "
                                    "off-by-one check) and writes past its channel array [limit-chan]",
                                    gi, t, tb->chan, tn, l->hard_channels - 1, l->hard_channels);
                return tc_error(ctx, st, name, tb->line, "gpu %d tb %d: chan=\"%d\": %s allows channels 0..%d%s [limit-chan]",
                                gi, t, tb->chan, tn, l->max_channels - 1,
                                l->max_channels < l->hard_channels ? " (--max-channels raises the limit)" : "");
            }
        }
    if (m->nchannels > l->max_channels)
        return tc_error(ctx, st, name, line, "nchannels=\"%d\" exceeds the limit of %d channels%s [limit-channels]",
                        m->nchannels, l->max_channels,
                        l->target == TC_TARGET_RCCL ? " (RCCL silently drops an algorithm that needs more channels than "
                                                      "the device has; --max-channels raises the limit)"
                                                    : "");
    for (int gi = 0; gi < m->ngpus; gi++) {
        const tc_msccl_gpu *g = &m->gpus[gi];
        long nodes = 1L + m->ngpus + g->n_tbs;
        for (int t = 0; t < g->n_tbs; t++)
            nodes += g->tbs[t].n_steps;
        if (nodes > l->max_nodes)
            return tc_error(ctx, st, name, g->line,
                            "gpu %d: the runtimes' parser needs %ld nodes for this gpu (<algo>, %d <gpu>s, its %d <tb>s "
                            "and their steps) but holds at most %d (MAX_NODES) [limit-nodes]",
                            gi, nodes, m->ngpus, g->n_tbs, l->max_nodes);
        if (g->n_tbs > l->max_tbs_per_gpu)
            return tc_error(ctx, st, name, g->line, "gpu %d has %d thread blocks, the limit is %d per gpu [limit-tbs]", gi,
                            g->n_tbs, l->max_tbs_per_gpu);
        if (l->max_peers_per_chan < INT_MAX) { /* channels are below max_channels <= 128 here */
            int cnt[2][129];
            memset(cnt, 0, sizeof cnt);
            for (int t = 0; t < g->n_tbs; t++)
                for (int dir = 0; dir < 2; dir++) {
                    const tc_msccl_tb *tb = &g->tbs[t];
                    if ((dir ? tb->recv : tb->send) < 0 || tb->chan < 0 || tb->chan > 128)
                        continue;
                    if (++cnt[dir][tb->chan] > l->max_peers_per_chan)
                        return tc_error(ctx, st, name, tb->line,
                                        "gpu %d tb %d: %d tbs %s on channel %d: the runtimes allow %d per channel "
                                        "(MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL) [limit-peers]",
                                        gi, t, cnt[dir][tb->chan], dir ? "receive" : "send", tb->chan,
                                        l->max_peers_per_chan);
                }
        }
        for (int t = 0; t < g->n_tbs; t++) {
            const tc_msccl_tb *tb = &g->tbs[t];
            if (tb->n_steps >= l->max_steps_per_tb)
                return tc_error(ctx, st, name, tb->line,
                                "gpu %d tb %d has %d steps, the limit is fewer than %d steps per thread block [limit-steps]",
                                gi, t, tb->n_steps, l->max_steps_per_tb);
            for (int k = 0; k < tb->n_steps; k++) {
                const tc_msccl_step *s = &tb->steps[k];
                if (!l->fused_ok && tc_msccl_type_fused(s->type))
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d step %d: type=\"%s\": RCCL refuses the fused step types rcs, rrs, rrc "
                                    "and rrcs at every launch (\"this version of MSCCL build doesn't support full Ops\") "
                                    "[rccl-fused]",
                                    gi, t, k, tc_msccl_type_name((tc_msccl_type)s->type));
                if (s->depid > l->max_depid)
                    return tc_error(ctx, st, name, s->line,
                                    "gpu %d tb %d step %d: depid=\"%d\" exceeds the limit of %d (the runtimes store it in "
                                    "an int8) [limit-depid]",
                                    gi, t, k, s->depid, l->max_depid);
                for (int side = 0; side < 2; side++) {
                    int off = side ? s->dstoff : s->srcoff;
                    if ((side ? t_uses_dst(s->type) : t_uses_src(s->type)) && off > l->max_offset)
                        return tc_error(ctx, st, name, s->line,
                                        "gpu %d tb %d step %d: %s=\"%d\" exceeds %d: the runtimes store offsets as int16 "
                                        "[limit-offset]",
                                        gi, t, k, side ? "dstoff" : "srcoff", off, l->max_offset);
                }
            }
        }
    }
    return TC_OK;
}

/* The tb of gpu `g` that sends to `peer` on `chan` (-1 if none). */
static int find_tb(const tc_msccl *m, int g, int peer, int chan, int sending)
{
    const tc_msccl_gpu *gp = &m->gpus[g];
    for (int t = 0; t < gp->n_tbs; t++)
        if (gp->tbs[t].chan == chan && (sending ? gp->tbs[t].send : gp->tbs[t].recv) == peer)
            return t;
    return -1;
}

static tc_status check_matching(tc_ctx *ctx, const tc_msccl *m, const char *name)
{
    for (int gi = 0; gi < m->ngpus; gi++)
        for (int t = 0; t < m->gpus[gi].n_tbs; t++) {
            const tc_msccl_tb *tb = &m->gpus[gi].tbs[t];
            /* every sending tb against its receiver, every receiving tb against its sender */
            for (int dir = 0; dir < 2; dir++) {
                int peer = dir ? tb->recv : tb->send;
                if (peer < 0)
                    continue;
                int u = find_tb(m, peer, gi, tb->chan, dir);
                const tc_msccl_tb *sb = dir ? (u >= 0 ? &m->gpus[peer].tbs[u] : NULL) : tb;
                const tc_msccl_tb *rb = dir ? tb : (u >= 0 ? &m->gpus[peer].tbs[u] : NULL);
                int sg = dir ? peer : gi, rg = dir ? gi : peer;
                int ns = 0, nr = 0;
                for (int k = 0; sb && k < sb->n_steps; k++)
                    ns += t_sends(sb->steps[k].type);
                for (int k = 0; rb && k < rb->n_steps; k++)
                    nr += t_recvs(rb->steps[k].type);
                if (ns != nr)
                    return tc_error(ctx, TC_ERR_CHECK, name, tb->line,
                                    "gpu %d sends %d messages to gpu %d on channel %d but gpu %d receives %d [unmatched]", sg,
                                    ns, rg, tb->chan, rg, nr);
                if (dir)
                    continue;
                for (int a = 0, b = 0; a < sb->n_steps; a++) {
                    if (!t_sends(sb->steps[a].type))
                        continue;
                    while (!t_recvs(rb->steps[b].type))
                        b++;
                    if (sb->steps[a].cnt != rb->steps[b].cnt)
                        return tc_error(ctx, TC_ERR_CHECK, name, sb->steps[a].line,
                                        "gpu %d tb %d step %d sends cnt=\"%d\" to gpu %d on channel %d but the matching "
                                        "receive (tb %d step %d) has cnt=\"%d\" [cnt-mismatch]",
                                        sg, sb->id, a, sb->steps[a].cnt, rg, tb->chan, rb->id, b, rb->steps[b].cnt);
                    b++;
                }
            }
        }
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Chunk-level execution                                                                             */

typedef struct piece { int q; double t; int set; } piece;
typedef struct value { int c; int set; int p_off, p_n; } value;
typedef struct msg { int v_off, cnt, round; } msg;

typedef struct sim {
    tc_ctx *ctx;
    const tc_msccl *m;
    const char *name;
    int inplace, R, K, N, root, W;
    int copy_only;             /* collective does not reduce: sets are {owner} */
    /* storage */
    int *reg_base;             /* per gpu * 3: first storage slot of buffer, -1 when aliased */
    int *reg_size;
    int n_slots;
    int *slot_val, *slot_chunk, *slot_chunk2, *slot_gpu; /* chunk2: the aliased view's chunk */
    /* pools */
    uint64_t *sets; int n_sets, cap_sets;
    piece *pcs; int n_pcs, cap_pcs;
    value *vals; int n_vals, cap_vals;
    int *mv; int n_mv, cap_mv;   /* message value ids */
    piece *ptmp; int cap_ptmp;   /* the pieces of a reduction being built */
    int *mset;                   /* R*N: IR holding (set id, -1 none) */
    /* tbs */
    int *tb_base; int n_tb;
    int *pc;
    msg **q; int *q_head, *q_n, *q_cap;  /* per sender tb */
    int *peer_tb;                         /* per receiving tb: global index of its sender tb */
    int *recv_tb;                         /* per sending tb: global index of its receiver tb */
    int *gpu_of;                          /* per tb: its gpu */
    tc_sched *out;
    double now;
    int round;
    int policy;                /* 0 every enabled tb per round, 1 only the first, 2 only the last */
} sim;

/* Room for `extra` more elements after n in pool p of capacity cap (doubling).  Counts stay below
 * INT_MAX. */
#define GROW(p, n, cap, extra)                                                                      \
    do {                                                                                            \
        if ((long)(n) + (extra) > (long)(cap)) {                                                    \
            long nc_ = (cap) ? 2L * (cap) : 256;                                                    \
            while (nc_ < (long)(n) + (extra))                                                       \
                nc_ *= 2;                                                                           \
            if (nc_ > INT_MAX)                                                                      \
                nc_ = INT_MAX;                                                                      \
            if ((long)(n) + (extra) > nc_)                                                          \
                return TC_ERR_NOMEM;                                                                \
            void *np_ = realloc((p), (size_t)nc_ * sizeof *(p));                                    \
            if (!np_)                                                                               \
                return TC_ERR_NOMEM;                                                                \
            (p) = np_;                                                                              \
            (cap) = (int)nc_;                                                                       \
        }                                                                                           \
    } while (0)

static tc_status set_new(sim *S, int *out)
{
    GROW(S->sets, (long)S->n_sets * S->W, S->cap_sets, S->W);
    memset(S->sets + (size_t)S->n_sets * S->W, 0, (size_t)S->W * sizeof *S->sets);
    *out = S->n_sets++;
    return TC_OK;
}
static uint64_t *SET(sim *S, int i) { return S->sets + (size_t)i * S->W; }
static int set_eq(sim *S, int a, int b)
{
    if (a < 0 || b < 0)
        return a == b;
    return !memcmp(SET(S, a), SET(S, b), (size_t)S->W * sizeof(uint64_t));
}
static int set_count(sim *S, int a)
{
    int n = 0;
    for (int w = 0; a >= 0 && w < S->W; w++)
        n += __builtin_popcountll(SET(S, a)[w]);
    return n;
}

static tc_status val_new(sim *S, int c, int set, const piece *p, int np, int *out)
{
    GROW(S->pcs, S->n_pcs, S->cap_pcs, np);
    GROW(S->vals, S->n_vals, S->cap_vals, 1);
    memcpy(S->pcs + S->n_pcs, p, (size_t)np * sizeof *p);
    S->vals[S->n_vals] = (value){c, set, S->n_pcs, np};
    S->n_pcs += np;
    *out = S->n_vals++;
    return TC_OK;
}

/* Storage slot of (buf, off) on gpu g, following the in-place aliases; -1 when outside. */
static int slot_of(const sim *S, int g, int b, int off)
{
    if (b < 0 || b > 2 || off < 0)
        return -1;
    int base = S->reg_base[g * 3 + b];
    if (base < 0) { /* aliased (in-place) */
        tc_coll c = S->m->coll;
        if (b == TC_MS_BUF_I && (c == TC_COLL_ALLGATHER || c == TC_COLL_GATHER))
            return slot_of(S, g, TC_MS_BUF_O, g * S->K + off);
        if (b == TC_MS_BUF_O && (c == TC_COLL_REDUCESCATTER || c == TC_COLL_SCATTER))
            return slot_of(S, g, TC_MS_BUF_I, g * S->K + off);
        return slot_of(S, g, TC_MS_BUF_I, off);
    }
    return off < S->reg_size[g * 3 + b] ? base + off : -1;
}

/* Layout: the global chunk a buffer offset holds on gpu g (-1 for scratch / outside). */
static int layout_chunk(const sim *S, int g, int b, int off)
{
    int R = S->R, K = S->K;
    if (b == TC_MS_BUF_S)
        return -1;
    int in = b == TC_MS_BUF_I, c;
    switch (S->m->coll) {
    case TC_COLL_ALLGATHER:
    case TC_COLL_GATHER: c = in ? (off < K ? g * K + off : -1) : off; break;
    case TC_COLL_REDUCESCATTER:
    case TC_COLL_SCATTER: c = in ? off : (off < K ? g * K + off : -1); break;
    case TC_COLL_ALLTOALL: c = off >= R * K ? -1 : in ? g * R * K + off : (off / K) * R * K + g * K + off % K; break;
    default: c = off; break;
    }
    return c >= 0 && c < S->N ? c : -1;
}

/* One IR transfer, recorded at the line of the step that completes it. */
static tc_status emit(sim *S, int src, int dst, int c, int op, double t0, double t1, const tc_msccl_step *at)
{
    if (!S->out)
        return TC_OK;
    tc_status st = tc_sched_add(S->out, src, dst, c, (tc_op)op, -1, S->round, t0, t1, NULL, 0);
    return st || !at || at->line <= 0 ? st : tc_sched_set_line(S->out, S->out->n_xfers - 1, at->line);
}

/* Make the IR holding of (g, chunk) equal value v; returns the committed value (one piece at g). */
static tc_status commit(sim *S, int g, int v, const tc_msccl_step *at, int *out)
{
    value V = S->vals[v];
    int *cur = &S->mset[g * S->N + V.c];
    int keep = -1;
    tc_status st;
    for (int i = 0; i < V.p_n; i++) {
        piece p = S->pcs[V.p_off + i];
        if (p.q == g && set_eq(S, p.set, *cur))
            keep = i;
    }
    double t = S->now;
    if (set_eq(S, V.set, *cur)) {
        /* nothing changes in the IR */
    } else if (S->copy_only) {
        piece p = S->pcs[V.p_off];
        if (*cur < 0) {
            if (p.q == g)
                return tc_error(S->ctx, TC_ERR_UNSUPPORTED, S->name, at ? at->line : 0,
                                "gpu %d: chunk %d comes back to its own rank; not expressible in the schedule IR", g, V.c);
            if ((st = emit(S, p.q, g, V.c, TC_OP_COPY, p.t, t += 1.0 / 64, at)))
                return st;
            *cur = p.set;
        }
    } else {
        int first = 1;
        if (keep >= 0)
            first = 0;
        for (int i = 0; i < V.p_n; i++) {
            if (i == keep)
                continue;
            piece p = S->pcs[V.p_off + i];
            if (p.q == g)
                return tc_error(S->ctx, TC_ERR_UNSUPPORTED, S->name, at ? at->line : 0,
                                "gpu %d combines two versions of its own chunk %d; not expressible in the schedule IR "
                                "(one copy per rank and chunk)",
                                g, V.c);
            if ((st = emit(S, p.q, g, V.c, first ? TC_OP_COPY : TC_OP_REDUCE, p.t, t += 1.0 / 64, at)))
                return st;
            first = 0;
        }
        *cur = V.set;
    }
    S->now = t;
    piece np = {g, t, V.set};
    return val_new(S, V.c, V.set, &np, 1, out);
}

static tc_status read_slot(sim *S, int g, int b, int off, const tc_msccl_step *at, int *out)
{
    int sl = slot_of(S, g, b, off);
    if (sl < 0)
        return tc_error(S->ctx, TC_ERR_CHECK, S->name, at->line, "gpu %d: %s[%d] is outside its buffer [offset-range]", g,
                        tc_msccl_buf_name(b), off);
    if (S->slot_val[sl] < 0)
        return tc_error(S->ctx, TC_ERR_CHECK, S->name, at->line,
                        "gpu %d step %d (%s) reads %s[%d], which holds no data at that point [uninitialized]", g, at->s,
                        tc_msccl_type_name((tc_msccl_type)at->type), tc_msccl_buf_name(b), off);
    *out = S->slot_val[sl];
    return TC_OK;
}

static tc_status write_slot(sim *S, int g, int b, int off, int v, const tc_msccl_step *at, int *stored)
{
    int sl = slot_of(S, g, b, off);
    if (sl < 0)
        return tc_error(S->ctx, TC_ERR_CHECK, S->name, at->line, "gpu %d: %s[%d] is outside its buffer [offset-range]", g,
                        tc_msccl_buf_name(b), off);
    tc_status st;
    if ((S->slot_chunk[sl] == S->vals[v].c || S->slot_chunk2[sl] == S->vals[v].c) && (st = commit(S, g, v, at, &v)))
        return st;
    S->slot_val[sl] = v;
    if (stored)
        *stored = v;
    return TC_OK;
}

/* u (+) w on gpu g; dst slot (b, off) or b < 0 for none (rrs).  *out: the resulting value. */
static tc_status reduce(sim *S, int g, int u, int w, int b, int off, const tc_msccl_step *at, int *out)
{
    value U = S->vals[u], Wv = S->vals[w];
    tc_status st;
    if (U.c != Wv.c)
        return tc_error(S->ctx, TC_ERR_CHECK, S->name, at->line,
                        "gpu %d step %d (%s) reduces chunk %d with chunk %d [chunk-mismatch]", g, at->s,
                        tc_msccl_type_name((tc_msccl_type)at->type), U.c, Wv.c);
    int set;
    if ((st = set_new(S, &set)))
        return st;
    for (int i = 0; i < S->W; i++)
        SET(S, set)[i] = SET(S, U.set)[i] | SET(S, Wv.set)[i];
    int np = U.p_n + Wv.p_n, zero = 0;
    GROW(S->ptmp, zero, S->cap_ptmp, np);
    piece *p = S->ptmp;
    memcpy(p, S->pcs + U.p_off, (size_t)U.p_n * sizeof *p);
    memcpy(p + U.p_n, S->pcs + Wv.p_off, (size_t)Wv.p_n * sizeof *p);
    int v;
    if ((st = val_new(S, U.c, set, p, np, &v)))
        return st;
    if (b >= 0)
        return write_slot(S, g, b, off, v, at, out);
    /* result only goes on the wire: commit at g when g's current holding is one of the operands */
    int cur = S->mset[g * S->N + U.c];
    for (int i = 0; i < np; i++) {
        piece q = S->pcs[S->vals[v].p_off + i];
        if (q.q == g && set_eq(S, q.set, cur))
            return commit(S, g, v, at, out);
    }
    *out = v;
    return TC_OK;
}

static tc_status push(sim *S, int tbg, int v)
{
    msg *qq = S->q[tbg];
    int n = S->q_head[tbg] + S->q_n[tbg];
    if (n == S->q_cap[tbg]) {
        int cap = S->q_cap[tbg] ? 2 * S->q_cap[tbg] : 8;
        qq = realloc(qq, (size_t)cap * sizeof *qq);
        if (!qq)
            return TC_ERR_NOMEM;
        S->q[tbg] = qq;
        S->q_cap[tbg] = cap;
    }
    (void)v;
    return TC_OK;
}

static tc_status exec_step(sim *S, int g, int t)
{
    const tc_msccl_tb *tb = &S->m->gpus[g].tbs[t];
    int tbg = S->tb_base[g] + t;
    const tc_msccl_step *s = &tb->steps[S->pc[tbg]];
    tc_status st;
    S->now += 1.0;
    msg in = {0, 0, 0};
    if (t_recvs(s->type)) {
        int sender = S->peer_tb[tbg];
        in = S->q[sender][S->q_head[sender]];
        S->q_head[sender]++;
        S->q_n[sender]--;
    }
    int out_off = 0;
    if (t_sends(s->type)) {
        if ((st = push(S, tbg, 0)))
            return st;
        GROW(S->mv, S->n_mv, S->cap_mv, s->cnt);
        out_off = S->n_mv;
        S->n_mv += s->cnt;
    }
    for (int j = 0; j < s->cnt; j++) {
        int w = t_recvs(s->type) ? S->mv[in.v_off + j] : -1;
        int u = -1, v = -1;
        switch (s->type) {
        case TC_MS_SEND: st = read_slot(S, g, s->srcbuf, s->srcoff + j, s, &v); break;
        case TC_MS_RECV: st = write_slot(S, g, s->dstbuf, s->dstoff + j, w, s, NULL); break;
        case TC_MS_RCS: st = write_slot(S, g, s->dstbuf, s->dstoff + j, w, s, &v); break;
        case TC_MS_RRS:
            if (!(st = read_slot(S, g, s->srcbuf, s->srcoff + j, s, &u)))
                st = reduce(S, g, u, w, -1, 0, s, &v);
            break;
        case TC_MS_RRC:
        case TC_MS_RRCS:
            if (!(st = read_slot(S, g, s->srcbuf, s->srcoff + j, s, &u)))
                st = reduce(S, g, u, w, s->dstbuf, s->dstoff + j, s, &v);
            break;
        case TC_MS_CPY:
            if (!(st = read_slot(S, g, s->srcbuf, s->srcoff + j, s, &u)))
                st = write_slot(S, g, s->dstbuf, s->dstoff + j, u, s, NULL);
            break;
        case TC_MS_RE:
            if (!(st = read_slot(S, g, s->dstbuf, s->dstoff + j, s, &u)) &&
                !(st = read_slot(S, g, s->srcbuf, s->srcoff + j, s, &w)))
                st = reduce(S, g, u, w, s->dstbuf, s->dstoff + j, s, &v);
            break;
        default: st = TC_OK; break;
        }
        if (st)
            return st;
        if (t_sends(s->type))
            S->mv[out_off + j] = v;
    }
    if (t_sends(s->type)) {
        S->q[tbg][S->q_head[tbg] + S->q_n[tbg]] = (msg){out_off, s->cnt, S->round};
        S->q_n[tbg]++;
    }
    S->pc[tbg]++;
    return TC_OK;
}

/* Why tb tbg (gpu g, tb t) cannot run its next step now; writes the tb it waits for (and, when why is
 * not NULL, the reason). */
static int blocked(const sim *S, int g, int t, int *waits_for, char *why, size_t n)
{
    const tc_msccl_tb *tb = &S->m->gpus[g].tbs[t];
    int tbg = S->tb_base[g] + t;
    const tc_msccl_step *s = &tb->steps[S->pc[tbg]];
    if (s->depid >= 0 && S->pc[S->tb_base[g] + s->depid] <= s->deps) {
        *waits_for = S->tb_base[g] + s->depid;
        if (why)
            snprintf(why, n, "waits for tb %d step %d", s->depid, s->deps);
        return 1;
    }
    if (t_recvs(s->type)) {
        int sender = S->peer_tb[tbg];
        if (S->q_n[sender] == 0 || S->q[sender][S->q_head[sender]].round >= S->round) {
            *waits_for = sender;
            if (why)
                snprintf(why, n, "waits for a message from gpu %d on channel %d", tb->recv, tb->chan);
            return 1;
        }
    }
    if (t_sends(s->type) && S->q_n[tbg] >= TC_MSCCL_CONN_SLOTS) {
        *waits_for = S->recv_tb[tbg];
        if (why)
            snprintf(why, n, "cannot send to gpu %d on channel %d: %d unreceived message(s) fill the connection",
                     tb->send, tb->chan, S->q_n[tbg]);
        return 1;
    }
    return 0;
}

static tc_status report_deadlock(sim *S)
{
    char *seen = calloc((size_t)S->n_tb, 1);
    if (!seen)
        return TC_ERR_NOMEM;
    int cur = -1;
    for (int i = 0; i < S->n_tb && cur < 0; i++) {
        int g = 0;
        while (g + 1 < S->R && S->tb_base[g + 1] <= i)
            g++;
        if (S->pc[i] < S->m->gpus[g].tbs[i - S->tb_base[g]].n_steps)
            cur = i;
    }
    int g = 0, t = 0;
    char why[256] = "";
    for (;;) {
        g = 0;
        while (g + 1 < S->R && S->tb_base[g + 1] <= cur)
            g++;
        t = cur - S->tb_base[g];
        int next = -1;
        if (S->pc[cur] >= S->m->gpus[g].tbs[t].n_steps || !blocked(S, g, t, &next, why, sizeof why) || seen[cur] ||
            next < 0)
            break;
        seen[cur] = 1;
        int ng = 0;
        while (ng + 1 < S->R && S->tb_base[ng + 1] <= next)
            ng++;
        if (S->pc[next] >= S->m->gpus[ng].tbs[next - S->tb_base[ng]].n_steps)
            break; /* waits for a finished tb: report this one */
        cur = next;
    }
    free(seen);
    const tc_msccl_step *s = &S->m->gpus[g].tbs[t].steps[S->pc[cur]];
    return tc_error(S->ctx, TC_ERR_CHECK, S->name, s->line, "deadlock: gpu %d tb %d step %d (%s) %s [deadlock]", g, t,
                    S->pc[cur], tc_msccl_type_name((tc_msccl_type)s->type), why);
}

static void sim_free(sim *S)
{
    for (int i = 0; S->q && i < S->n_tb; i++)
        free(S->q[i]);
    free(S->q);
    free(S->q_head);
    free(S->q_n);
    free(S->q_cap);
    free(S->peer_tb);
    free(S->recv_tb);
    free(S->gpu_of);
    free(S->pc);
    free(S->tb_base);
    free(S->reg_base);
    free(S->reg_size);
    free(S->slot_val);
    free(S->slot_chunk);
    free(S->slot_chunk2);
    free(S->slot_gpu);
    free(S->sets);
    free(S->pcs);
    free(S->vals);
    free(S->mv);
    free(S->ptmp);
    free(S->mset);
}

/* Layout sizes: chunks per rank K and global chunks N of the collective, bounded by what the program
 * moves and by TC_MSCCL_MAX_HOLDINGS before anything is allocated. */
static tc_status layout(tc_ctx *ctx, const tc_msccl *m, const char *name, int *K, int *N)
{
    int R = m->ngpus, L = m->nchunksperloop;
    int line = m->line > 0 ? m->line : 1;
    switch (m->coll) {
    case TC_COLL_ALLREDUCE: *K = L / R > 0 ? L / R : 1; *N = L; break;
    case TC_COLL_BROADCAST:
    case TC_COLL_REDUCE: *K = L; *N = L; break;
    default:
        if (L % R)
            return tc_error(ctx, TC_ERR_UNSUPPORTED, name, line,
                            "nchunksperloop=\"%d\" is not a multiple of ngpus=\"%d\" as %s needs [layout]", L, R,
                            tc_coll_name(m->coll));
        *K = L / R;
        *N = L; /* alltoall: R x L, set below once it is known to fit */
        break;
    }
    /* every collective over R >= 2 gpus moves at least L (R-1) / R chunks (gather and scatter exactly
     * that many, the others more): a larger nchunksperloop cannot be served by this program */
    long sent = 0;
    for (int g = 0; g < R; g++)
        for (int t = 0; t < m->gpus[g].n_tbs; t++)
            for (int k = 0; k < m->gpus[g].tbs[t].n_steps; k++)
                if (t_sends(m->gpus[g].tbs[t].steps[k].type))
                    sent += m->gpus[g].tbs[t].steps[k].cnt;
    if (R >= 2 && (long)L * (R - 1) > sent * R)
        return tc_error(ctx, TC_ERR_CHECK, name, line,
                        "nchunksperloop=\"%d\" but the program sends %ld chunks in all, where %s over %d gpus "
                        "moves at least %ld [layout]",
                        L, sent, tc_coll_name(m->coll), R, ((long)L * (R - 1) + R - 1) / R);
    long n = m->coll == TC_COLL_ALLTOALL ? (long)R * L : L;
    if ((long)R * n > TC_MSCCL_MAX_HOLDINGS)
        return tc_error(ctx, TC_ERR_LIMIT, name, line,
                        "%d gpus x %ld chunks: tacosc verifies programs of at most %ld (gpu, chunk) holdings "
                        "[verify-size]",
                        R, n, TC_MSCCL_MAX_HOLDINGS);
    *N = (int)n;
    return TC_OK;
}

int tc_msccl_root(const tc_msccl *m)
{
    if (m->root >= 0 && m->root < m->ngpus)
        return m->root;
    if (!tc_coll_rooted(m->coll))
        return 0;
    /* the rank that never receives (broadcast, scatter) or never sends (reduce, gather) */
    int want_recv = m->coll == TC_COLL_BROADCAST || m->coll == TC_COLL_SCATTER;
    for (int g = 0; g < m->ngpus; g++) {
        int any = 0;
        for (int t = 0; t < m->gpus[g].n_tbs; t++)
            for (int k = 0; k < m->gpus[g].tbs[t].n_steps; k++)
                any |= want_recv ? t_recvs(m->gpus[g].tbs[t].steps[k].type) : t_sends(m->gpus[g].tbs[t].steps[k].type);
        if (!any)
            return g;
    }
    return 0;
}

static tc_status sim_init(sim *S)
{
    const tc_msccl *m = S->m;
    tc_status st;
    S->R = m->ngpus;
    if ((st = layout(S->ctx, m, S->name, &S->K, &S->N)))
        return st;
    S->root = tc_msccl_root(m);
    S->copy_only = !tc_coll_reduces(m->coll);
    S->W = (S->R + 63) / 64;
    int R = S->R, K = S->K;
    S->reg_base = malloc((size_t)R * 3 * sizeof(int));
    S->reg_size = malloc((size_t)R * 3 * sizeof(int));
    S->tb_base = malloc((size_t)(R + 1) * sizeof(int));
    S->mset = malloc((size_t)R * S->N * sizeof(int));
    if (!S->reg_base || !S->reg_size || !S->tb_base || !S->mset)
        return TC_ERR_NOMEM;
    int in_layout = (m->coll == TC_COLL_ALLGATHER || m->coll == TC_COLL_GATHER) ? K
                    : (m->coll == TC_COLL_ALLREDUCE || m->coll == TC_COLL_BROADCAST || m->coll == TC_COLL_REDUCE) ? S->N
                                                                                                                 : R * K;
    int out_layout = (m->coll == TC_COLL_REDUCESCATTER || m->coll == TC_COLL_SCATTER) ? K
                     : (m->coll == TC_COLL_ALLREDUCE || m->coll == TC_COLL_BROADCAST || m->coll == TC_COLL_REDUCE) ? S->N
                                                                                                                  : R * K;
    /* buffers hold the collective's layout and whatever the steps address (never the declared counts,
     * which allocate nothing): at most TC_MSCCL_MAX_HOLDINGS slots */
    long n = 0;
    for (int g = 0; g < R; g++) {
        const tc_msccl_gpu *gp = &m->gpus[g];
        long ext[3] = {0, 0, 0};
        for (int t = 0; t < gp->n_tbs; t++)
            for (int k = 0; k < gp->tbs[t].n_steps; k++) {
                const tc_msccl_step *s = &gp->tbs[t].steps[k];
                if (t_uses_src(s->type) && s->srcbuf >= 0 && s->srcbuf < 3 && (long)s->srcoff + s->cnt > ext[s->srcbuf])
                    ext[s->srcbuf] = (long)s->srcoff + s->cnt;
                if (t_uses_dst(s->type) && s->dstbuf >= 0 && s->dstbuf < 3 && (long)s->dstoff + s->cnt > ext[s->dstbuf])
                    ext[s->dstbuf] = (long)s->dstoff + s->cnt;
            }
        int alias_i = S->inplace && (m->coll == TC_COLL_ALLGATHER || m->coll == TC_COLL_GATHER);
        int alias_o = S->inplace && !alias_i;
        long isz = ext[0] > in_layout ? ext[0] : in_layout;
        long osz = ext[1] > out_layout ? ext[1] : out_layout;
        if (alias_i && (long)g * K + ext[0] > osz) /* i[k] is o[g*K + k] */
            osz = (long)g * K + ext[0];
        if (alias_o) { /* o[k] is i[g*K + k] (reduce-scatter, scatter) or i[k] */
            long oe = (m->coll == TC_COLL_REDUCESCATTER || m->coll == TC_COLL_SCATTER) ? (long)g * K + ext[1] : ext[1];
            if (oe > isz)
                isz = oe;
        }
        if (n + isz + osz + ext[2] > TC_MSCCL_MAX_HOLDINGS)
            return tc_error(S->ctx, TC_ERR_LIMIT, S->name, gp->line,
                            "gpu %d: the buffers the program addresses exceed %ld chunk slots in all: tacosc verifies "
                            "programs of at most that many [verify-size]",
                            g, TC_MSCCL_MAX_HOLDINGS);
        S->reg_base[g * 3 + 0] = alias_i ? -1 : (int)n;
        S->reg_size[g * 3 + 0] = alias_i ? 0 : (int)isz;
        n += alias_i ? 0 : isz;
        S->reg_base[g * 3 + 1] = alias_o ? -1 : (int)n;
        S->reg_size[g * 3 + 1] = alias_o ? 0 : (int)osz;
        n += alias_o ? 0 : osz;
        S->reg_base[g * 3 + 2] = (int)n;
        S->reg_size[g * 3 + 2] = (int)ext[2];
        n += ext[2];
    }
    S->n_slots = (int)n;
    S->slot_val = malloc((size_t)(n + 1) * sizeof(int));
    S->slot_chunk = malloc((size_t)(n + 1) * sizeof(int));
    S->slot_chunk2 = malloc((size_t)(n + 1) * sizeof(int));
    S->slot_gpu = malloc((size_t)(n + 1) * sizeof(int));
    if (!S->slot_val || !S->slot_chunk || !S->slot_chunk2 || !S->slot_gpu)
        return TC_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        S->slot_val[i] = S->slot_chunk[i] = S->slot_chunk2[i] = -1;
    for (int g = 0; g < R; g++)
        for (int b = 0; b < 3; b++)
            for (int off = 0; S->reg_base[g * 3 + b] >= 0 && off < S->reg_size[g * 3 + b]; off++) {
                int sl = S->reg_base[g * 3 + b] + off;
                S->slot_gpu[sl] = g;
                S->slot_chunk[sl] = layout_chunk(S, g, b, off);
            }
    /* in-place aliases: the aliased view may name another chunk (alltoall: o[j] is what rank j sends
     * here, i[j] what goes to rank j); a slot is the own place of either */
    for (int g = 0; g < R; g++)
        for (int b = 0; b < 2; b++) {
            if (S->reg_base[g * 3 + b] >= 0)
                continue;
            int lim = b == TC_MS_BUF_I ? in_layout : out_layout;
            for (int off = 0; off < lim; off++) {
                int sl = slot_of(S, g, b, off), c = layout_chunk(S, g, b, off);
                if (sl >= 0 && c >= 0 && c != S->slot_chunk[sl])
                    S->slot_chunk2[sl] = c;
            }
        }
    for (long i = 0; i < (long)R * S->N; i++)
        S->mset[i] = -1;
    /* sets 0 .. R-1 are the singletons {g}, shared by every chunk's initial holding */
    for (int g = 0; g < R; g++) {
        int set;
        if ((st = set_new(S, &set)))
            return st;
        SET(S, set)[g >> 6] |= 1ull << (g & 63);
    }
    /* initial data: the input buffer as the collective defines it */
    for (int g = 0; g < R; g++) {
        int has = 1;
        if (m->coll == TC_COLL_BROADCAST || m->coll == TC_COLL_SCATTER)
            has = g == S->root;
        for (int off = 0; has && off < in_layout; off++) {
            int c = layout_chunk(S, g, TC_MS_BUF_I, off), sl = slot_of(S, g, TC_MS_BUF_I, off), set, v;
            if (c < 0 || sl < 0)
                continue;
            int owner = S->copy_only ? (m->coll == TC_COLL_BROADCAST || m->coll == TC_COLL_SCATTER ? S->root : g) : g;
            set = owner;
            piece p = {g, 0.0, set};
            if ((st = val_new(S, c, set, &p, 1, &v)))
                return st;
            S->slot_val[sl] = v;
            S->mset[g * S->N + c] = set;
        }
    }
    if (!S->copy_only) /* every rank holds its own contribution to every chunk in the IR */
        for (int g = 0; g < R; g++)
            for (int c = 0; c < S->N; c++)
                if (S->mset[g * S->N + c] < 0)
                    S->mset[g * S->N + c] = g;
    /* tbs and connections */
    S->n_tb = 0;
    for (int g = 0; g < R; g++) {
        S->tb_base[g] = S->n_tb;
        S->n_tb += m->gpus[g].n_tbs;
    }
    S->tb_base[R] = S->n_tb;
    int nt = S->n_tb + 1;
    S->pc = calloc((size_t)nt, sizeof(int));
    S->q = calloc((size_t)nt, sizeof(msg *));
    S->q_head = calloc((size_t)nt, sizeof(int));
    S->q_n = calloc((size_t)nt, sizeof(int));
    S->q_cap = calloc((size_t)nt, sizeof(int));
    S->peer_tb = malloc((size_t)nt * sizeof(int));
    S->recv_tb = malloc((size_t)nt * sizeof(int));
    S->gpu_of = malloc((size_t)nt * sizeof(int));
    if (!S->pc || !S->q || !S->q_head || !S->q_n || !S->q_cap || !S->peer_tb || !S->recv_tb || !S->gpu_of)
        return TC_ERR_NOMEM;
    for (int i = 0; i < nt; i++)
        S->recv_tb[i] = -1;
    for (int g = 0; g < R; g++)
        for (int t = 0; t < m->gpus[g].n_tbs; t++) {
            const tc_msccl_tb *tb = &m->gpus[g].tbs[t];
            int u = tb->recv >= 0 ? find_tb(m, tb->recv, g, tb->chan, 1) : -1;
            int i = S->tb_base[g] + t;
            S->gpu_of[i] = g;
            S->peer_tb[i] = u >= 0 ? S->tb_base[tb->recv] + u : -1;
            if (S->peer_tb[i] >= 0)
                S->recv_tb[S->peer_tb[i]] = i;
        }
    return TC_OK;
}

/* Rounds: every tb that can run its next step at the start of a round runs it, in tb order (policy 0),
 * or only the first (1) or the last (2) of them.  Only candidates are examined: the tbs that ran in the
 * last round, those woken by a tb they wait for (a dependency, a message, room in a connection: each
 * changes only when that tb runs a step) and, under policies 1 and 2, the enabled ones that did not run. */
static tc_status sim_run(sim *S)
{
    const tc_msccl *m = S->m;
    long total = 0, done = 0;
    const int nt = S->n_tb;
    for (int g = 0; g < S->R; g++)
        for (int t = 0; t < m->gpus[g].n_tbs; t++)
            total += m->gpus[g].tbs[t].n_steps;
    int *cur = malloc(((size_t)nt + 1) * sizeof *cur), *nxt = malloc(((size_t)nt + 1) * sizeof *nxt);
    int *en = malloc(((size_t)nt + 1) * sizeof *en), *stamp = malloc(((size_t)nt + 1) * sizeof *stamp);
    int *whead = malloc(((size_t)nt + 1) * sizeof *whead), *wnext = malloc(((size_t)nt + 1) * sizeof *wnext);
    int *won = malloc(((size_t)nt + 1) * sizeof *won);
    tc_status st = TC_OK;
    if (!cur || !nxt || !en || !stamp || !whead || !wnext || !won) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    int ncur = 0, nnxt = 0;
    for (int i = 0; i < nt; i++) {
        whead[i] = won[i] = -1;
        stamp[i] = -1;
        cur[ncur++] = i;
    }
#define WAKE(i)                                                                                     \
    do {                                                                                            \
        int i_ = (i);                                                                               \
        if (i_ >= 0 && stamp[i_] != S->round) {                                                     \
            stamp[i_] = S->round;                                                                   \
            nxt[nnxt++] = i_;                                                                       \
        }                                                                                           \
    } while (0)
    for (S->round = 0; done < total && !st; S->round++) {
        int nen = 0;
        nnxt = 0;
        for (int k = 0; k < ncur; k++) {
            int i = cur[k], g = S->gpu_of[i], t = i - S->tb_base[g], w = -1;
            if (S->pc[i] >= m->gpus[g].tbs[t].n_steps)
                continue;
            if (!blocked(S, g, t, &w, NULL, 0)) {
                en[nen++] = i;
                continue;
            }
            /* a dependency: on the list of the tb it waits for, woken once that tb has run the step (a tb
             * on a list stays there until then); a message or room in a connection: woken by the peer's
             * send or receive below */
            const tc_msccl_step *s = &m->gpus[g].tbs[t].steps[S->pc[i]];
            if (s->depid >= 0 && S->pc[S->tb_base[g] + s->depid] <= s->deps && won[i] < 0) {
                won[i] = s->deps + 1; /* the pc that releases it */
                wnext[i] = whead[w];
                whead[w] = i;
            }
        }
        if (!nen) {
            st = report_deadlock(S);
            break;
        }
        int lo = 0, hi = nen;
        if (S->policy) { /* one step per round; the other enabled tbs stay candidates */
            lo = S->policy == 1 ? 0 : nen - 1;
            hi = lo + 1;
            for (int k = 0; k < nen; k++)
                if (k != lo)
                    WAKE(en[k]);
        }
        for (int k = lo; k < hi && !st; k++) {
            int i = en[k], g = S->gpu_of[i], t = i - S->tb_base[g];
            const tc_msccl_step *s = &m->gpus[g].tbs[t].steps[S->pc[i]];
            int sends = t_sends(s->type), recvs = t_recvs(s->type);
            st = exec_step(S, g, t);
            done++;
            WAKE(i);
            for (int u = whead[i], *link = &whead[i]; u >= 0; u = *link) {
                if (won[u] <= S->pc[i]) { /* released: off the list */
                    *link = wnext[u];
                    won[u] = -1;
                    WAKE(u);
                } else {
                    link = &wnext[u];
                }
            }
            if (sends)
                WAKE(S->recv_tb[i]);
            if (recvs)
                WAKE(S->peer_tb[i]);
        }
        qsort(nxt, (size_t)nnxt, sizeof *nxt, tc_cmp_int);
        int *tmp = cur;
        cur = nxt;
        nxt = tmp;
        ncur = nnxt;
    }
#undef WAKE
done:
    free(cur);
    free(nxt);
    free(en);
    free(stamp);
    free(whead);
    free(wnext);
    free(won);
    return st;
}

/* Each output slot must hold what the IR says its rank holds. */
static tc_status check_outputs(sim *S)
{
    const tc_msccl *m = S->m;
    for (int g = 0; g < S->R; g++) {
        int nout = 0, b = TC_MS_BUF_O;
        switch (m->coll) {
        case TC_COLL_REDUCE:
        case TC_COLL_GATHER: nout = g == S->root ? (m->coll == TC_COLL_REDUCE ? S->N : S->R * S->K) : 0; break;
        case TC_COLL_REDUCESCATTER:
        case TC_COLL_SCATTER: nout = S->K; break;
        case TC_COLL_ALLREDUCE:
        case TC_COLL_BROADCAST: nout = S->N; break;
        default: nout = S->R * S->K; break;
        }
        for (int off = 0; off < nout; off++) {
            int c = layout_chunk(S, g, b, off), sl = slot_of(S, g, b, off);
            const char *bn = S->reg_base[g * 3 + 1] < 0 ? "i" : "o";
            int shown = S->reg_base[g * 3 + 1] < 0 && (m->coll == TC_COLL_REDUCESCATTER || m->coll == TC_COLL_SCATTER)
                            ? g * S->K + off
                            : off;
            if (c < 0 || sl < 0)
                continue;
            int v = S->slot_val[sl];
            if (v < 0)
                return tc_error(S->ctx, TC_ERR_CHECK, S->name, 0,
                                "wrong result (%s): gpu %d %s[%d] ends without data; chunk %d expected [wrong-result]",
                                S->inplace ? "in-place" : "out-of-place", g, bn, shown, c);
            if (S->vals[v].c != c)
                return tc_error(S->ctx, TC_ERR_CHECK, S->name, 0,
                                "wrong result (%s): gpu %d %s[%d] ends holding chunk %d; chunk %d expected [wrong-result]",
                                S->inplace ? "in-place" : "out-of-place", g, bn, shown, S->vals[v].c, c);
            if (!set_eq(S, S->vals[v].set, S->mset[g * S->N + c]))
                return tc_error(S->ctx, TC_ERR_CHECK, S->name, 0,
                                "wrong result (%s): gpu %d %s[%d] ends with chunk %d reduced over %d of %d ranks "
                                "[wrong-result]",
                                S->inplace ? "in-place" : "out-of-place", g, bn, shown, c, set_count(S, S->vals[v].set),
                                S->R);
        }
    }
    return TC_OK;
}

static tc_status run_mode(tc_ctx *ctx, const tc_msccl *m, const char *name, int inplace, int check, int policy,
                          tc_sched **out)
{
    sim S;
    memset(&S, 0, sizeof S);
    S.policy = policy;
    S.ctx = ctx;
    S.m = m;
    S.name = name;
    S.inplace = inplace;
    tc_status st = sim_init(&S);
    if (st)
        goto done;
    int K = S.K;
    uint64_t size = (m->max_bytes ? m->max_bytes : (uint64_t)1 << 20);
    if ((st = tc_sched_create(m->coll, S.R, K, size, &S.out)))
        goto done;
    if (m->coll == TC_COLL_ALLREDUCE)
        S.out->n_chunks = S.N;
    S.out->root = S.root;
    S.out->unwind = m->unwind; /* the topology the plan's time is for (its tacosc comment) */
    S.out->switch_model = m->switch_model;
    S.out->link_model = m->link_model;
    if ((st = tc_sched_set_names(S.out, m->name ? m->name : "msccl", NULL)) || (st = tc_sched_set_file(S.out, name)))
        goto done;
    if ((st = sim_run(&S)))
        goto done;
    const tc_check_opts co = {.order_times = 1}; /* its times are the steps' order */
    if (check && ((st = check_outputs(&S)) || (st = tc_sched_check(ctx, S.out, &co, name))))
        goto done;
    if (out) {
        tc_sched_sort(S.out);
        *out = S.out;
        S.out = NULL;
    }
done:
    tc_sched_free(S.out);
    sim_free(&S);
    return st;
}

tc_status tc_msccl_to_sched(tc_ctx *ctx, const tc_msccl *m, const char *name, tc_sched **out)
{
    tc_status st = tc_msccl_check_structure(ctx, m, name);
    if (!st)
        st = check_matching(ctx, m, name);
    if (!st)
        st = run_mode(ctx, m, name, m->inplace || !m->outofplace, 0, 0, out);
    return st;
}

tc_status tc_msccl_verify(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *limits, const char *name)
{
    tc_msccl_limits common;
    if (!limits) {
        tc_msccl_limits_get(TC_TARGET_COMMON, &common);
        limits = &common;
    }
    tc_status st = tc_msccl_check_structure(ctx, m, name);
    if (!st)
        st = tc_msccl_check_limits(ctx, m, limits, name);
    if (!st)
        st = check_matching(ctx, m, name);
    long steps = 0, tbs = 0;
    for (int g = 0; g < m->ngpus; g++) {
        tbs += m->gpus[g].n_tbs;
        for (int t = 0; t < m->gpus[g].n_tbs; t++)
            steps += m->gpus[g].tbs[t].n_steps;
    }
    /* every enabled tb per round; then, for programs of moderate size, the two extreme sequential orders,
     * which expose accesses to one slot by two tbs that no dependency orders (data races) */
    int policies = steps * tbs <= TC_MSCCL_RACE_WORK ? 3 : 1;
    for (int mode = 1; mode >= 0 && !st; mode--) {
        if (mode ? !(m->inplace || !m->outofplace) : !m->outofplace)
            continue;
        for (int pol = 0; pol < policies && !st; pol++) {
            st = run_mode(ctx, m, name, mode, 1, pol, NULL);
            if (st && pol)
                tc_diag(ctx, TC_DIAG_NOTE, name, 0, 0,
                        "this happens only when the thread blocks run in another legal order (%s first): two "
                        "thread blocks of one gpu access a slot with no dependency between them [race]",
                        pol == 1 ? "lowest tb" : "highest tb");
        }
    }
    return st;
}
