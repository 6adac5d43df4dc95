/**
 * MSCCL++ execution plans (src/mscclpp/): the format's limits and vocabulary, the plan as tacosc holds it,
 * its lowering from the schedule IR, writer, reader and verifier.
 *
 * Follows microsoft/mscclpp at commit 1f5f065d7b13ab02df32c22568f38785d1eeec01 (v0.10.0-15-g1f5f065d):
 *   - limits: src/core/include/execution_common.hpp (MAX_CHANNEL, MAX_CHANNEL_PER_OPERATION,
 *     MAX_OPERATION, MAX_LOCAL_BUFFER_PER_OPERATION, MAX_DEVICE_SYNCERS, MAX_DEVICE_SEMAPHORES);
 *   - the per-thread-block operation count check: src/core/executor/executor.cc;
 *   - operation, buffer and channel names: src/core/executor/execution_plan.cc (getOpType,
 *     convertToBufferType, convertToChannelType).
 * Only names and numbers are taken from there; no code is copied.
 *
 * The table is data: one row per operation name the executor's plan loader accepts; the writer, reader
 * and verifier take their rules from here.  Objects returned through out-parameters belong to the caller
 * (tc_mscclpp_free).
 */
#ifndef TACOS_MSCCLPP_H
#define TACOS_MSCCLPP_H

#include <stddef.h>

#include "tacos/ir.h"

#define TC_MSCCLPP_VERSION "microsoft/mscclpp 1f5f065d (v0.10.0-15)"

/** Channels of one type per thread block (MAX_CHANNEL). */
#define TC_MSCCLPP_MAX_CHANNEL 16
/** Channels one operation may name (MAX_CHANNEL_PER_OPERATION). */
#define TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION 8
/** Operations per thread block (MAX_OPERATION; executor.cc rejects more). */
#define TC_MSCCLPP_MAX_OPERATION 64
/** Local buffers one operation may name (MAX_LOCAL_BUFFER_PER_OPERATION). */
#define TC_MSCCLPP_MAX_LOCAL_BUFFER_PER_OPERATION 2
/** Default threads per block when a plan omits num_threads_per_block. */
#define TC_MSCCLPP_DEFAULT_THREADS_PER_BLOCK 1024
/** Device syncers (barrier_id < this) and device semaphores (MAX_DEVICE_SYNCERS, MAX_DEVICE_SEMAPHORES). */
#define TC_MSCCLPP_MAX_DEVICE_SYNCERS 16
#define TC_MSCCLPP_MAX_DEVICE_SEMAPHORES 16
/** Buffer references of one operation: an Operation holds MAX_LOCAL_BUFFER_PER_OPERATION +
 *  MAX_CHANNEL_PER_OPERATION input and output references (execution_common.hpp). */
#define TC_MSCCLPP_MAX_BUFS (TC_MSCCLPP_MAX_LOCAL_BUFFER_PER_OPERATION + TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION)
/** Default buffer_alignment (execution_plan.cc: obj.value("buffer_alignment", 16)). */
#define TC_MSCCLPP_DEFAULT_ALIGNMENT 16
/** tacosc's own rule, not the loader's: thread blocks of one GPU wait on each other's peers, so all must be
 *  resident at once (the kernel is __launch_bounds__(1024, 1): one block per SM); the lowering writes at
 *  most this many per GPU and the verifier warns above it.  Every GPU MSCCL++ runs on has more SMs. */
#define TC_MSCCLPP_MAX_TBS 64

/** What an operation does, coarsely: the parts the symbolic check needs. */
typedef enum {
  TC_MSCCLPP_OP_SYNC = 0,  /**< no data: nop, barrier, signal, wait, flush, semaphores, pipeline */
  TC_MSCCLPP_OP_MOVE,      /**< data moved without reduction (put, get, copy, packets) */
  TC_MSCCLPP_OP_REDUCE,    /**< a reduction into a local buffer, maybe forwarded (re, res, ...) */
} tc_mscclpp_op_kind;

typedef struct {
  const char *name;        /**< the "name" string of an operation in the plan */
  tc_mscclpp_op_kind kind;
  int packets;             /**< 1 for the LL (packet) forms */
  int remote;              /**< 1 when the operation touches a peer through a channel */
  const char *desc;
} tc_mscclpp_op_info;

/** The number of rows of the operation table. */
size_t tc_mscclpp_op_count(void);
/** Row i (0 <= i < tc_mscclpp_op_count()) of the table, in the executor's enum order. */
const tc_mscclpp_op_info *tc_mscclpp_op_at(size_t i);
/** The row for an operation name, or NULL when the executor would reject it. */
const tc_mscclpp_op_info *tc_mscclpp_op_find(const char *name);
/** 1 when s names a buffer type the loader accepts ("i", "o", "s"). */
int tc_mscclpp_buffer_valid(const char *s);
/** 1 when s names a channel type the loader accepts ("memory", "port", "switch", "none"). */
int tc_mscclpp_channel_valid(const char *s);

/* ------------------------------------------------------------------------------------------------ */
/* The plan                                                                                          */

/** Channel types, in the loader's spelling order: memory, port, switch, none. */
typedef enum { TC_MSCCLPP_CH_MEMORY = 0, TC_MSCCLPP_CH_PORT, TC_MSCCLPP_CH_SWITCH, TC_MSCCLPP_CH_NONE } tc_mscclpp_ch;
/** "memory", "port", "switch", "none"; parse returns -1 for anything else. */
const char *tc_mscclpp_ch_name(int t);
int tc_mscclpp_ch_parse(const char *s);
/** Buffer types (i, o, s) are tc_msccl_buf's values 0, 1, 2; parse returns -1 for anything else. */
int tc_mscclpp_buf_parse(const char *s);

/** A buffer reference of an operation: local ({type, index, size}) or remote ({buffer_id, ...}). */
typedef struct tc_mscclpp_buf {
    int type;           /**< local: 0 i, 1 o, 2 s; remote: -1; an NVLS buffer (switch_channel_id): -2 */
    int id;             /**< remote: buffer_id (an index into the tb's remote_buffer_refs of the op's channel
                             type); NVLS: switch_channel_id; -1 local */
    int index, size;    /**< in chunks */
} tc_mscclpp_buf;

typedef struct tc_mscclpp_op {
    int op;             /**< row of the operation table (tc_mscclpp_op_at) */
    int chan_type;      /**< tc_mscclpp_ch, -1 when the op names none */
    int n_chan;
    int chan[TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION]; /**< indices into the tb's channels of chan_type */
    int n_src, n_dst;
    tc_mscclpp_buf src[TC_MSCCLPP_MAX_BUFS], dst[TC_MSCCLPP_MAX_BUFS];
    int barrier_id, n_tbs;  /**< barrier: device syncer and thread blocks it joins (-1, 0 absent) */
    int n_sem;
    int sem[TC_MSCCLPP_MAX_DEVICE_SEMAPHORES];
    int tbg_id, tbg_size;   /**< tbg_info (0, 1 when absent) */
    int pipeline;       /**< 1: a pipeline op (its inner ops follow it in the tb, flattened as the loader does) */
    int line;           /**< source line when read, else 0 */
} tc_mscclpp_op;

typedef struct tc_mscclpp_tb {
    int id;
    int n_ch[3];        /**< channels it uses, per type (memory, port, switch) */
    int *ch[3];         /**< indices into the gpu's channels of that type */
    int n_rb[2];        /**< remote buffers it reaches, per access channel type (memory, port) */
    int *rb[2];         /**< indices into the gpu's remote_buffers */
    int n_ops, cap_ops;
    tc_mscclpp_op *ops;
    int line;
} tc_mscclpp_tb;

/** A channel of a gpu: to `peer` (memory, port), or an NVLS switch channel (peer -1). */
typedef struct tc_mscclpp_chan {
    int type;           /**< tc_mscclpp_ch */
    int peer;
    int buf;            /**< switch: buffer type; else -1 */
    int line;
} tc_mscclpp_chan;

/** A peer's buffer this gpu reaches. */
typedef struct tc_mscclpp_rbuf {
    int rank;           /**< whose buffer */
    int type;           /**< 0 i, 1 o, 2 s */
    int access;         /**< bit (1 << tc_mscclpp_ch) per access channel type */
    int line;
} tc_mscclpp_rbuf;

typedef struct tc_mscclpp_gpu {
    int id;
    int i_chunks, o_chunks, s_chunks;
    int n_chans, cap_chans;
    tc_mscclpp_chan *chans;     /**< in file order; per type, the k-th of that type is channel k */
    int n_rbufs, cap_rbufs;
    tc_mscclpp_rbuf *rbufs;
    int n_sems;                 /**< device semaphores declared */
    int *sem_init;
    int n_tbs, cap_tbs;
    tc_mscclpp_tb *tbs;
    int line;
} tc_mscclpp_gpu;

typedef struct tc_mscclpp {
    char *name;
    char *collective;           /**< as written ("allreduce", ...) */
    int coll;                   /**< tc_coll, -1 when tacosc does not know the name */
    int packets;                /**< protocol "LL" (else "Simple") */
    int inplace;
    int threads;                /**< num_threads_per_block */
    int reuse_resources, double_scratch;
    int alignment;              /**< buffer_alignment */
    uint64_t min_bytes, max_bytes; /**< min_message_size, max_message_size (UINT64_MAX: none) */
    int ngpus;
    tc_mscclpp_gpu *gpus;       /**< gpus[i].id == i */
    int line;
} tc_mscclpp;

void tc_mscclpp_free(tc_mscclpp *p);

/** Index into g->chans of the k-th channel of `type` (the index a thread block's channel_ids name), -1
 *  if none. */
int tc_mscclpp_chan_index(const tc_mscclpp_gpu *g, int type, int k);
/** Index into g->chans of channel i of op (through tb's channels of the op's type), -1 if none. */
int tc_mscclpp_op_chan(const tc_mscclpp_gpu *g, const tc_mscclpp_tb *tb, const tc_mscclpp_op *op, int i);
/** Each channel's tag, as the executor numbers a gpu's channels to one peer (executor.cc
 *  setupConnections: memory channels first, then port; tag k at a meets tag k at b): tag[i] for
 *  g->chans[i], -1 for switch channels.  cnt: ngpus zeros, scratch, zero again on return; peers must be
 *  within 0..ngpus-1 (the verifier's [channels] rule). */
void tc_mscclpp_chan_tags(const tc_mscclpp_gpu *g, int *cnt, int *tag);
/** The first of op's sources that are LL packets (execution_kernel.hpp handle*Packets): ppkt and cpkt read
 *  plain data, repkt respkt recpkt recspkt plain src[0] and packets after it, upkt and rppkt packets;
 *  n_src (none) for operations that are not packet ones. */
int tc_mscclpp_first_packet_src(const tc_mscclpp_op *op);

/** Options of the lowering from the schedule IR. */
typedef struct tc_mscclpp_lower_opts {
    const int *node_of;         /**< per rank its server (port channels between servers, memory channels
                                     within one); NULL: one server */
    uint64_t min_bytes, max_bytes; /**< the byte range written (max 0: no limit) */
    const char *name;           /**< the plan's name (NULL: derived from the schedule) */
    int packets;                /**< protocol LL: put packets (ppkt), unpack or reduce them (upkt, repkt), no
                                     signals; memory channels only (one server) */
    int any_size;               /**< tc_compile: skip the executor's message-size rule at the plan's size (a
                                     candidate priced for a range of sizes, bundle) */
} tc_mscclpp_lower_opts;
void tc_mscclpp_lower_opts_init(tc_mscclpp_lower_opts *o);

/** Lower a checked schedule (all-reduce, all-gather or reduce-scatter) to an MSCCL++ plan (man 5
 *  tacosc-mscclpp, LOWERING).  TC_ERR_LIMIT names the limit that cannot be met. */
tc_status tc_mscclpp_lower(tc_ctx *ctx, const tc_sched *s, const tc_mscclpp_lower_opts *o, tc_mscclpp **out);
/** Write the plan as JSON: deterministic, one operation per line.  What tacosc does not keep of a plan it
 *  read (switch channels' rank groups, pipelines' nesting and iteration context) is not written. */
tc_status tc_mscclpp_write(tc_ctx *ctx, const tc_mscclpp *p, FILE *f);
/** Read a plan (any producer's) with the loader's rules; messages are `name:line: error: ... [rule]`. */
tc_status tc_mscclpp_read(tc_ctx *ctx, const char *path, tc_mscclpp **out);
tc_status tc_mscclpp_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_mscclpp **out);
/** 1 when a JSON text is an MSCCL++ plan rather than a tacosc schedule: its top-level object has "gpus"
 *  and no "format" member (tacosc schedules start with "format": "tacosc-schedule"). */
int tc_mscclpp_sniff(const char *buf, size_t len);

/** What the verifier found beyond pass/fail. */
typedef struct tc_mscclpp_verdict {
    int modelled;               /**< 1: the symbolic check ran; 0: the plan uses operations it does not model
                                     (packets, switch channels, pipelines, thread-block groups) */
    char unmodelled[64];        /**< the first such operation's name */
    long ops;                   /**< operations over all gpus */
    int max_tbs;                /**< most thread blocks of one gpu */
} tc_mscclpp_verdict;

/** The loader's rules and limits, references (channels, remote buffers, semaphores, syncers), the
 *  thread-sync rule (a nop between a data operation and a signal, a wait and a data operation), deadlock
 *  freedom and, by symbolic execution, the collective's result in three orders of the thread blocks.
 *  size > 0 also applies the loader's message-size rule at that size.  v may be NULL. */
tc_status tc_mscclpp_verify(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name,
                            tc_mscclpp_verdict *v);
/** The loader's chunk rule and (size > 0) its message-size rule at `size` alone ([chunks], [size]). */
tc_status tc_mscclpp_check_size(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name);
/** The plan's data movements as a schedule (one transfer per chunk a put, get or remote write moves, in
 *  the rounds of the symbolic execution) for `tacosc sim` and the compile summary; size: the collective's
 *  bytes (0: the plan's max_message_size, else 1 MiB). */
tc_status tc_mscclpp_to_sched(tc_ctx *ctx, const tc_mscclpp *p, uint64_t size, const char *name, tc_sched **out);

#endif
