/**
 * @file msccl.h
 * MSCCL XML programs (src/msccl/: lower.c, write.c, read.c, verify.c): the thread-block form that MSCCL
 * (msccl-executor-nccl) and RCCL load, its lowering from the schedule IR, writer, reader and verifier.  The
 * executor (tacos-run) replays this form.  Objects returned through out-parameters belong to the caller (tc_msccl_free).
 */
#ifndef TACOS_MSCCL_H
#define TACOS_MSCCL_H

#include "tacos/ir.h"

/** Step types, in MSCCL spelling order: s r rcs rrs rrc rrcs cpy re nop. */
typedef enum {
    TC_MS_SEND = 0, TC_MS_RECV, TC_MS_RCS, TC_MS_RRS, TC_MS_RRC, TC_MS_RRCS, TC_MS_CPY, TC_MS_RE, TC_MS_NOP,
    TC_MS_TYPE_COUNT
} tc_msccl_type;
const char *tc_msccl_type_name(tc_msccl_type t);

/** Buffers: input, output, scratch. */
typedef enum { TC_MS_BUF_I = 0, TC_MS_BUF_O = 1, TC_MS_BUF_S = 2, TC_MS_BUF_NONE = -1 } tc_msccl_buf;

typedef struct tc_msccl_step {
    int s;               /**< step index within its tb: 0,1,2,... */
    int type;            /**< tc_msccl_type */
    int srcbuf, srcoff;  /**< tc_msccl_buf, chunk offset */
    int dstbuf, dstoff;
    int cnt;             /**< chunks */
    int depid, deps;     /**< tb id and step it waits for, -1 for none */
    int hasdep;          /**< another step depends on this one */
    int line;            /**< source line when read from a file, else 0 */
    int fmt_recv, fmt_send; /**< sparse format (tc_sparse_fmt, 0 dense) of the message the step receives and
                                 of the one it sends: set only by a lowering with opts.sparse (tacos-run);
                                 MSCCL XML has none */
} tc_msccl_step;

typedef struct tc_msccl_tb {
    int id;
    int send, recv;      /**< peer ranks, -1 for none */
    int chan;
    int n_steps, cap_steps;
    tc_msccl_step *steps;
    int line;
} tc_msccl_tb;

typedef struct tc_msccl_gpu {
    int id;
    int i_chunks, o_chunks, s_chunks;
    int n_tbs, cap_tbs;
    tc_msccl_tb *tbs;
    int line;
} tc_msccl_gpu;

typedef struct tc_msccl {
    char *name;
    char proto[8];       /**< "Simple", "LL", "LL128" */
    int nchannels;
    int nchunksperloop;
    int ngpus;
    tc_coll coll;
    int inplace, outofplace;
    uint64_t min_bytes, max_bytes; /**< max_bytes 0 = no limit */
    int legacy;          /**< read from a file lacking attributes NCCL/RCCL require */
    int root;            /**< root of a rooted collective when known (lowered from a schedule, or given by
                              the user), else -1: MSCCL XML carries none and the verifier infers it */
    int line;            /**< line of <algo> when read from a file, else 0 */
    int unwind, switch_model, link_model; /**< the schedule's (tc_sched), carried by a leading comment
                              `<!-- tacosc: unwind D, switch-model M, link-model L -->` (the runtimes' parser
                              skips comments): the topology its time is for; 0 each when absent */
    tc_msccl_gpu *gpus;  /**< ngpus entries, gpus[i].id == i */
} tc_msccl;

void tc_msccl_free(tc_msccl *m);

/**
 * Targets whose limits the lowering and the verifier apply.  NCCL = msccl-executor-nccl, RCCL = ROCm/rccl
 * (both parse with src/misc/msccl/msccl_parser.cc); COMMON = what both runtimes refuse (the looser of the
 * two: the default of `tacosc verify`); EXEC = tacos-run only (no runtime parser limits).
 */
typedef enum { TC_TARGET_NCCL = 0, TC_TARGET_RCCL = 1, TC_TARGET_COMMON = 2, TC_TARGET_EXEC = 3 } tc_msccl_target;

typedef struct tc_msccl_limits {
    tc_msccl_target target;
    int max_steps_per_tb;   /**< steps per tb must be < this (MSCCL_MAX_NUM_STEPS 64) */
    int max_tbs_per_gpu;    /**< MSCCL_MAX_NUM_THREAD_BLOCKS: 1024 NCCL, 64 RCCL */
    int max_channels;       /**< nchannels <= this and chan < this: 32 NCCL (MAXCHANNELS); RCCL: the
                                 device's channel limit, 20 by default (--max-channels) */
    int hard_channels;      /**< the most --max-channels may raise max_channels to: 32 NCCL, 128 RCCL */
    int max_depid;          /**< 127: dependentBid is an int8_t */
    int max_gpus;           /**< ngpus <= this: an XML element holds at most MAX_SUBS = 1024 children */
    int max_nodes;          /**< 1 + ngpus + tbs + steps of one gpu <= this: MAX_NODES 4096 less one */
    int max_peers_per_chan; /**< tbs with a send (receive) peer per channel: MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL */
    int max_offset;         /**< srcoff/dstoff <= this: the runtimes store offsets as int16_t */
    int fused_ok;           /**< rcs, rrs, rrc, rrcs allowed (not on RCCL) */
} tc_msccl_limits;
/** The limits of a target (INT_MAX for none). */
void tc_msccl_limits_get(tc_msccl_target t, tc_msccl_limits *out);
/** Parse "nccl", "rccl", "common", "tacos-run". */
tc_status tc_msccl_target_parse(const char *s, tc_msccl_target *out);

/** cnt of a step: 1..71 (both runtimes keep it in 8 bits and refuse 72 or more: MSCCL_MAX_COUNT). */
#define TC_MSCCL_MAX_CNT 71
/** The verifier tracks every (gpu, chunk) holding and every buffer slot: at most this many of each. */
#define TC_MSCCL_MAX_HOLDINGS (1L << 24)

/** Options of the lowering from the schedule IR. */
typedef struct tc_msccl_lower_opts {
    tc_msccl_target target;  /**< whose limits apply */
    int max_channels;        /**< 0: the target's default channel limit, else at most this many channels */
    const char *proto;       /**< "Simple" (default), "LL", "LL128" */
    int channels;            /**< channels to use, 0 = automatic */
    uint64_t min_bytes, max_bytes;
    int inplace;             /**< 1: the in-place variant (default) */
    int outofplace;          /**< 1: the out-of-place variant; both 1: one program that serves both */
    int plain;               /**< only s, r, re, cpy, nop (set for RCCL whatever this says) */
    int sparse;              /**< keep the schedule's sparse formats in the steps (fmt_recv, fmt_send; tacos-run
                                  replaying a JSON plan); 0: a plan with sparse sends loses them, with a warning */
} tc_msccl_lower_opts;
void tc_msccl_lower_opts_init(tc_msccl_lower_opts *o);

/** Lower a checked schedule to thread blocks, applying the target's limits (TC_ERR_LIMIT naming the
 *  limit when it cannot be met). */
tc_status tc_msccl_lower(tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o, tc_msccl **out);

/** The lowerability rule of a JSON plan, shared by `tacosc verify` and tacos-run: lower it as tacos-run
 *  replays it (target tacos-run, one program for both placements, sparse formats kept) and verify the
 *  program under that target's limits.  TC_OK: tacos-run can replay the plan; otherwise the diagnostic
 *  names why (a FIFO conflict with the pair of ranks, a limit, ...).  *out (may be NULL) gets the program. */
tc_status tc_msccl_lower_replay(tc_ctx *ctx, const tc_sched *s, tc_msccl **out);
/** Write MSCCL XML: one element per line, double quotes, no declaration, no tabs. */
tc_status tc_msccl_write(tc_ctx *ctx, const tc_msccl *m, FILE *f);
/** Write m to f while tc_msccl_verify checks it with lim in parallel (a second thread): returns the
 *  writer's status and sets *verified to the verifier's (a caller discards the bytes when it failed). */
tc_status tc_msccl_write_checked(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *lim, const char *name,
                                 FILE *f, tc_status *verified);
/** Read MSCCL XML (any producer's), streaming: the text is never held whole; legacy files load with a
 *  warning.  The runtimes' own grammar applies (man 5 tacosc-msccl, READING). */
tc_status tc_msccl_read(tc_ctx *ctx, const char *path, tc_msccl **out);
tc_status tc_msccl_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_msccl **out);
tc_status tc_msccl_read_file(tc_ctx *ctx, const char *name, FILE *f, tc_msccl **out);
/** Structural rules, runtime limits (NULL: those common to NCCL and RCCL), send/receive matching,
 *  deadlock freedom and (through tc_msccl_to_sched and the checker) the collective's result. */
tc_status tc_msccl_verify(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *limits, const char *name);
/** The runtime limits alone ([limit-*] rules). */
tc_status tc_msccl_check_limits(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *l, const char *name);
/** Chunk-level schedule IR of an MSCCL program (for the checker, sim and JSON). */
tc_status tc_msccl_to_sched(tc_ctx *ctx, const tc_msccl *m, const char *name, tc_sched **out);

/* ---- Extensions (msccl module): helpers shared by the reader, lowering, verifier and executor. ---- */

/** "i", "o", "s" ("?" for anything else). */
const char *tc_msccl_buf_name(int b);
/** "NCCL", "RCCL", "NCCL and RCCL" or "tacos-run". */
const char *tc_msccl_target_name(tc_msccl_target t);
/** An empty program of `ngpus` gpus (ids set, no tbs), proto Simple, one channel, in-place, root -1. */
tc_status tc_msccl_create(const char *name, tc_coll coll, int ngpus, tc_msccl **out);
/** Append a tb (id = its index) to a gpu; *out (may be NULL) is valid until the next tc_msccl_tb_add. */
tc_status tc_msccl_tb_add(tc_msccl_gpu *g, int send, int recv, int chan, tc_msccl_tb **out);
/** Append a copy of *st to tb with s = its index. */
tc_status tc_msccl_step_add(tc_msccl_tb *tb, const tc_msccl_step *st);
/** The structural rules alone (ids, step numbers, peers, channels, dependencies, buffer offsets); the
 *  reader applies them to every file.  Messages are `name:line: error: ... [rule]`. */
tc_status tc_msccl_check_structure(tc_ctx *ctx, const tc_msccl *m, const char *name);
/** Step type predicates: receives, sends, reads src, writes dst, is a fused type (rcs rrs rrc rrcs). */
int tc_msccl_type_recvs(int t);
int tc_msccl_type_sends(int t);
int tc_msccl_type_fused(int t);
/** The root the verifier uses: m->root when set, else inferred (for broadcast and scatter the gpu that
 *  never receives, for reduce and gather the gpu that never sends, else 0). */
int tc_msccl_root(const tc_msccl *m);

/** Messages (of any cnt) a connection (sender, receiver, channel) holds unreceived before a send blocks:
 *  one buffered plus one the receiver takes in the same round of the verifier's execution model.
 */
#define TC_MSCCL_CONN_SLOTS 2
/** Programs whose steps times thread blocks is at most this are also executed in the two extreme
 *  sequential orders (lowest and highest tb first) to expose data races between thread blocks. */
#define TC_MSCCL_RACE_WORK 4000000L

#endif
