/**
 * @file msccl.h
 * MSCCL XML programs (src/emit/msccl_*.c): the thread-block form that MSCCL (msccl-executor-nccl) and RCCL
 * load, its lowering from the schedule IR, writer, reader and verifier.  The executor (tacos-run) replays
 * this form.  Objects returned through out-parameters belong to the caller (tc_msccl_free).
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
    tc_msccl_gpu *gpus;  /**< ngpus entries, gpus[i].id == i */
} tc_msccl;

void tc_msccl_free(tc_msccl *m);

/** Targets whose limits the lowering and verifier apply. */
typedef enum { TC_TARGET_NCCL = 0, TC_TARGET_RCCL = 1 } tc_msccl_target;

typedef struct tc_msccl_limits {
    int max_steps_per_tb;   /**< steps per tb must be < this (64) */
    int max_tbs_per_gpu;    /**< 1024 NCCL, 64 RCCL */
    int max_channels;       /**< 32 NCCL, 128 RCCL */
    int max_depid;          /**< 127 */
    int max_cnt;            /**< 71 */
} tc_msccl_limits;
void tc_msccl_limits_get(tc_msccl_target t, tc_msccl_limits *out);

/** Options of the lowering from the schedule IR. */
typedef struct tc_msccl_lower_opts {
    tc_msccl_target target;  /**< whose limits apply */
    const char *proto;       /**< "Simple" (default), "LL", "LL128" */
    int channels;            /**< channels to use, 0 = automatic */
    uint64_t min_bytes, max_bytes;
    int inplace;             /**< 1: in-place variant (default), 0: out-of-place */
} tc_msccl_lower_opts;
void tc_msccl_lower_opts_init(tc_msccl_lower_opts *o);

/** Lower a checked schedule to thread blocks, applying the target's limits (TC_ERR_LIMIT naming the
 *  limit when it cannot be met). */
tc_status tc_msccl_lower(tc_ctx *ctx, const tc_sched *s, const tc_msccl_lower_opts *o, tc_msccl **out);
/** Write MSCCL XML: one element per line, double quotes, no declaration, no tabs. */
tc_status tc_msccl_write(tc_ctx *ctx, const tc_msccl *m, FILE *f);
/** Read MSCCL XML (any producer's); legacy files load with a warning. */
tc_status tc_msccl_read(tc_ctx *ctx, const char *path, tc_msccl **out);
tc_status tc_msccl_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_msccl **out);
/** Structural rules, send/receive matching, deadlock freedom and (through tc_msccl_to_sched and the
 *  checker) the collective's result.  limits may be NULL (no runtime limits applied). */
tc_status tc_msccl_verify(tc_ctx *ctx, const tc_msccl *m, const tc_msccl_limits *limits, const char *name);
/** Chunk-level schedule IR of an MSCCL program (for the checker, sim and JSON). */
tc_status tc_msccl_to_sched(tc_ctx *ctx, const tc_msccl *m, const char *name, tc_sched **out);

/* ---- Extensions (msccl module): helpers shared by the reader, lowering, verifier and executor. ---- */

/** "i", "o", "s" ("?" for anything else). */
const char *tc_msccl_buf_name(int b);
/** "NCCL" or "RCCL". */
const char *tc_msccl_target_name(tc_msccl_target t);
/** An empty program of `ngpus` gpus (ids set, no tbs), proto Simple, one channel, in-place. */
tc_status tc_msccl_create(const char *name, tc_coll coll, int ngpus, tc_msccl **out);
/** Append a tb (id = its index) to a gpu; *out (may be NULL) is valid until the next tc_msccl_tb_add. */
tc_status tc_msccl_tb_add(tc_msccl_gpu *g, int send, int recv, int chan, tc_msccl_tb **out);
/** Append a copy of *st to tb with s = its index. */
tc_status tc_msccl_step_add(tc_msccl_tb *tb, const tc_msccl_step *st);
/** The structural rules alone (ids, step numbers, peers, channels, dependencies, buffer offsets); the
 *  reader applies them to every file.  Messages are `name:line: error: ... [rule]`. */
tc_status tc_msccl_check_structure(tc_ctx *ctx, const tc_msccl *m, const char *name);

/** Messages (of any cnt) a connection (sender, receiver, channel) holds unreceived before a send blocks:
 *  one buffered plus one the receiver takes in the same round of the verifier's execution model.
 */
#define TC_MSCCL_CONN_SLOTS 2
/** Programs whose steps times thread blocks is at most this are also executed in the two extreme
 *  sequential orders (lowest and highest tb first) to expose data races between thread blocks. */
#define TC_MSCCL_RACE_WORK 4000000L

#endif
