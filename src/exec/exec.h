/**
 * @file exec.h
 * Internal interface of tacos-run (src/exec/): data types and reductions, memory backends (host, CUDA)
 * and the replay engine that runs one rank's MSCCL thread blocks over MPI point-to-point messages.
 * Not installed; only src/exec/ includes it.
 *
 * Ownership: tc_exec_plan_create returns a plan owned by the caller (tc_exec_plan_free).  Backends are
 * initialised into caller storage and released with their fini hook.
 */
#ifndef TACOS_EXEC_H
#define TACOS_EXEC_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tacos/ir.h"
#include "tacos/msccl.h"
#include "tacos/sparse.h"

/** tacos-run's untimed runs before each size's timed ones (-w; nccl-tests' default too), which
 *  --calibrate also runs before each of its timings, so that both time the same steady state. */
#define TC_EXEC_WARMUP_DEFAULT 5

/* ------------------------------------------------------------------------------------------------ */
/* Data types and reduction operators                                                                */

typedef enum { TC_DT_FLOAT32 = 0, TC_DT_FLOAT64, TC_DT_INT32, TC_DT_BFLOAT16, TC_DT_FLOAT16, TC_DT_COUNT } tc_dtype;
typedef enum { TC_RED_SUM = 0, TC_RED_PROD, TC_RED_MIN, TC_RED_MAX, TC_RED_COUNT } tc_redop;

const char *tc_exec_dtype_name(tc_dtype t);
size_t tc_exec_dtype_size(tc_dtype t);
/** Parse "float"/"float32"/"f32", "double"/"float64", "int"/"int32", "bfloat16"/"bf16", "half"/"float16". */
tc_status tc_exec_dtype_parse(const char *s, tc_dtype *out);
const char *tc_exec_redop_name(tc_redop op);
tc_status tc_exec_redop_parse(const char *s, tc_redop *out);
/** Relative tolerance used by --check for `t` on n ranks (0 for exact integer comparison). */
double tc_exec_dtype_tolerance(tc_dtype t, int nranks);

/** Host reduction: dst[i] = a[i] op b[i] for n elements; dst may alias a or b. */
void tc_exec_host_reduce(tc_dtype t, tc_redop op, void *dst, const void *a, const void *b, size_t n);
/** Fill n elements with fresh nonzero random values suited to `op` (no overflow, no cancellation). */
void tc_exec_fill_random(tc_dtype t, tc_redop op, void *buf, size_t n, uint64_t seed);
/** Convert n elements of t to float (for the bf16/fp16 reference path). */
void tc_exec_to_float(tc_dtype t, const void *src, float *dst, size_t n);
void tc_exec_from_float(tc_dtype t, const float *src, void *dst, size_t n);
/** Zero each of n elements with probability `sparsity` (uniformly random positions, from seed); 1 zeros
 *  all, 0 none. */
void tc_exec_sparsify(tc_dtype t, void *buf, size_t n, double sparsity, uint64_t seed);
/** A JSON plan's sparse formats against the replayed type t (src/exec/sparse_plan.c): where the plan
 *  records another element type, re-decide them for t (its density, format and thresholds) with a warning
 *  naming both types.  Nothing happens for a plan without sparse formats or of the same type. */
tc_status tc_exec_sparse_dtype(tc_ctx *ctx, const char *plan, tc_sched *s, tc_dtype t);
/** tacos-run --topo (src/exec/sparse_predict.c): the plan's predicted sparse speedup per replayed size. */
typedef struct tc_exec_sparse_pred tc_exec_sparse_pred;
/** Load the JSON plan (re-decided for type t, quietly) to be priced on `topo`, the topology the time
 *  predictor loaded (tc_exec_predict_topo), borrowed: it must outlive the result.  Usage errors name --topo. */
tc_status tc_exec_sparse_pred_create(tc_ctx *ctx, const char *plan, const tc_topo *topo, tc_dtype t,
                                     tc_exec_sparse_pred **out);
/** Predicted dense time over sparse time at a collective size of `bytes` (tacosc's sizes); 0 when the
 *  model cannot price it. */
double tc_exec_sparse_pred_speedup(tc_ctx *ctx, const tc_exec_sparse_pred *p, double bytes);
void tc_exec_sparse_pred_free(tc_exec_sparse_pred *p);
/** Count elements of `got` (type t) that differ from `want` (type t, or float when want_float). */
uint64_t tc_exec_count_wrong(tc_dtype t, const void *got, const void *want, int want_float, size_t n,
                             double tol);

/* ------------------------------------------------------------------------------------------------ */
/* Memory backends                                                                                   */

/**
 * Where buffers live and how they are copied and reduced.  `mpi_direct` is nonzero when MPI may read and
 * write backend memory directly (host memory, CUDA-aware MPI); otherwise the engine stages every message
 * through host memory from alloc_host (pinned for CUDA).  All hooks return 0 on success.
 */
typedef struct tc_exec_backend {
    const char *name;       /**< "host", "cuda" */
    const char *transport;  /**< "direct", "cuda-aware MPI", "staged through pinned host memory" */
    int mpi_direct;
    void *state;
    void *(*alloc)(struct tc_exec_backend *be, size_t bytes);
    void (*release)(struct tc_exec_backend *be, void *p);
    void *(*alloc_host)(struct tc_exec_backend *be, size_t bytes);
    void (*release_host)(struct tc_exec_backend *be, void *p);
    int (*copy)(struct tc_exec_backend *be, void *dst, const void *src, size_t bytes);
    int (*reduce)(struct tc_exec_backend *be, tc_dtype t, tc_redop op, void *dst, const void *a,
                  const void *b, size_t n);
    int (*upload)(struct tc_exec_backend *be, void *dst, const void *host_src, size_t bytes);
    int (*download)(struct tc_exec_backend *be, void *host_dst, const void *src, size_t bytes);
    /* Sparse messages (include/tacos/sparse.h), both in backend memory: encode n elements of src as a
     * message of format fmt into msg (cap bytes; *bytes its length); decode a received message of `bytes`
     * bytes into dst (add = 0) or add it into dst (add = 1, sum).  Diagnostics through ctx. */
    tc_status (*sp_encode)(struct tc_exec_backend *be, tc_ctx *ctx, int fmt, tc_dtype t, void *msg, size_t cap,
                           const void *src, size_t n, size_t *bytes);
    tc_status (*sp_decode)(struct tc_exec_backend *be, tc_ctx *ctx, tc_dtype t, int add, void *dst, const void *msg,
                           size_t bytes, size_t n);
    void (*fini)(struct tc_exec_backend *be);
} tc_exec_backend;

void tc_exec_backend_host(tc_exec_backend *be);
/** Initialise the CUDA backend (device = local rank modulo the device count).  On failure (built
 *  without CUDA, no device) writes a one-line reason into why and returns TC_ERR_UNSUPPORTED. */
tc_status tc_exec_backend_cuda(tc_exec_backend *be, int local_rank, char *why, size_t why_len);

/* ------------------------------------------------------------------------------------------------ */
/* Replay engine                                                                                     */

/** One rank's program, flattened: steps of every tb, offsets in chunks. */
typedef struct tc_exec_step {
    int type;                /**< tc_msccl_type */
    int srcbuf, srcoff;      /**< chunks */
    int dstbuf, dstoff;
    int cnt;
    int dep_tb, dep_step;    /**< -1 for none */
    int fmt_recv, fmt_send;  /**< sparse formats of its messages (tc_sparse_fmt; 0 dense) */
} tc_exec_step;

typedef struct tc_exec_tb {
    int send, recv, chan;
    int first, n;            /**< steps[first .. first+n) */
} tc_exec_tb;

typedef struct tc_exec_plan {
    int rank, nranks;
    int n_tbs;
    tc_exec_tb *tbs;
    int n_steps;
    tc_exec_step *steps;
    int buf_chunks[3];       /**< chunks the program addresses in i, o, s */
    int max_cnt;             /**< largest cnt of a receiving step (temp buffer size in chunks) */
    int max_sparse_cnt;      /**< largest cnt of a step with a sparse message (0: none) */
    int sparse_fmts;         /**< bit f set when some message travels in format f (f > 0) */
    const struct tc_mscclpp *mpp; /**< an MSCCL++ plan (borrowed): the engine runs its gpu `rank` (mscclpp.c) */
} tc_exec_plan;

/** Flatten rank `rank` of m (checked: offsets, peers, one tb per (channel, peer) and direction). */
tc_status tc_exec_plan_create(tc_ctx *ctx, const tc_msccl *m, int rank, const char *name, tc_exec_plan **out);
void tc_exec_plan_free(tc_exec_plan *p);

/** Runtime state of the engine for one plan, one data type, one chunk size. */
typedef struct tc_exec_engine tc_exec_engine;

typedef struct tc_exec_run_opts {
    tc_dtype dtype;
    tc_redop op;
    size_t chunk_elems;      /**< elements per chunk */
    double timeout;          /**< seconds without progress before giving up (0 = never) */
    int prepost;             /**< receives posted ahead per tb into temporaries (0 = none) */
    int idle_sleep_us;       /**< sleep this long when idle (after 64 idle polls); 0 = only yield */
    int sparse;              /**< messages travel in the plan's sparse formats (0: every message dense) */
    int corrupt_sparse;      /**< self-test: this rank damages the metadata of every sparse message it sends */
} tc_exec_run_opts;

tc_status tc_exec_engine_create(tc_ctx *ctx, const tc_exec_plan *p, tc_exec_backend *be, MPI_Comm comm,
                                const tc_exec_run_opts *o, tc_exec_engine **out);
void tc_exec_engine_free(tc_exec_engine *e);
/** Replay once with buffers i, o, s (backend memory; NULL for a buffer the program does not use).
 *  TC_ERR_INTERNAL with a diagnostic when a step fails or nothing progresses for opts.timeout s.  A sparse
 *  message that does not decode is reported once (naming rank, step and sender) but does not stop the
 *  replay: every rank still completes it (tc_exec_engine_soft tells). */
tc_status tc_exec_engine_run(tc_exec_engine *e, void *bufs[3]);
/** Use the plan's sparse formats (1) or send every message dense (0) from the next run on. */
void tc_exec_engine_sparse(tc_exec_engine *e, int on);
/** Bytes this rank sent in the last run, and what the same messages take dense. */
void tc_exec_engine_bytes(const tc_exec_engine *e, uint64_t *sent, uint64_t *dense);
/** The first sparse message that did not decode since the last call (TC_ERR_INVALID; its diagnostic was
 *  reported then), TC_OK when none; clears it. */
tc_status tc_exec_engine_soft(tc_exec_engine *e);

/* ------------------------------------------------------------------------------------------------ */
/* MSCCL++ plans (src/exec/mscclpp.c): the engine above runs them when the plan has `mpp`            */

struct tc_mscclpp;
typedef struct tc_exec_mpp tc_exec_mpp;
tc_status tc_exec_mpp_create(tc_ctx *ctx, const struct tc_mscclpp *p, int rank, tc_exec_backend *be, MPI_Comm comm,
                             const tc_exec_run_opts *o, tc_exec_mpp **out);
/** One run of this rank's thread blocks on buffers i, o, s (backend memory). */
tc_status tc_exec_mpp_run(tc_exec_mpp *m, void *bufs[3]);
void tc_exec_mpp_free(tc_exec_mpp *m);

#endif
