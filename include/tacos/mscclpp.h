/**
 * MSCCL++ execution plans: the format's limits and vocabulary (issue 28, first step).
 *
 * Follows microsoft/mscclpp at commit 1f5f065d7b13ab02df32c22568f38785d1eeec01 (v0.10.0-15-g1f5f065d):
 *   - limits: src/core/include/execution_common.hpp (MAX_CHANNEL, MAX_CHANNEL_PER_OPERATION,
 *     MAX_OPERATION, MAX_LOCAL_BUFFER_PER_OPERATION, MAX_DEVICE_SYNCERS, MAX_DEVICE_SEMAPHORES);
 *   - the per-thread-block operation count check: src/core/executor/executor.cc;
 *   - operation, buffer and channel names: src/core/executor/execution_plan.cc (getOpType,
 *     convertToBufferType, convertToChannelType).
 * Only names and numbers are taken from there; no code is copied.
 *
 * The table is data: one row per operation name the executor's plan loader accepts. The writer,
 * reader and verifier for the format (not yet in the tree) are to take their rules from here.
 * No allocation; every function is pure.
 */
#ifndef TACOS_MSCCLPP_H
#define TACOS_MSCCLPP_H

#include <stddef.h>

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

#endif
