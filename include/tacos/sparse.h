/**
 * @file sparse.h
 * Sparse collectives (src/sparse/; SpCCL paper §III-IV): the Pici and COO codecs, the wire form of a
 * sparse message, the compiler pass that decides per transfer whether it travels dense, Pici or COO, and
 * the cost model (eq. 4-6) the simulator prices an annotated plan with.
 *
 * Codecs: element-width generic (2, 4, 8 bytes); an element is a zero when all its bits are zero, so
 * -0.0, NaN payloads and denormals are nonzeros and survive bit for bit.  Lengths need not be multiples
 * of 64 or 4096 (a Pici tile of n < 4096 elements has ceil(n/64) columns).  Every decoder validates its
 * whole input before it writes (sizes, then metadata: popcounts against the tile index and nnz, padding
 * bits, COO indices strictly increasing and in range) and never reads past `bytes`; a bad buffer is
 * TC_ERR_INVALID with one diagnostic through ctx (`pici: ...`, `coo: ...`, `sparse message: ...`),
 * ctx must not be NULL.  Lengths are below 2^32 elements (32-bit tile indices and COO indices).
 * Cost: one pass over the dense data per call; compression at 99% sparsity reads the input once and
 * writes nnz values; see `make bench-sparse` for measured throughputs.
 *
 * Pass: output is a tc_sched_sparse (ir.h) for the caller to attach (s->sparse); transfers stay as they
 * are, so the plan checks as before.  Node ids (intra- vs inter-node thresholds) come from the topology's
 * <nodes>/<npu node>; without them every rank is on one node.  Memory: one int per (rank, chunk) of a
 * reducing collective (contribution counts) and one byte per transfer.  Errors: TC_ERR_INVALID for a
 * density or threshold out of [0, 1], TC_ERR_LIMIT when the counts would exceed 2^28 entries.
 */
#ifndef TACOS_SPARSE_H
#define TACOS_SPARSE_H

#include "tacos/ir.h"

/* ------------------------------------------------------------------------------------------------ */
/* Formats and element types                                                                         */

/** How one message travels (the per-transfer decision of tc_sched_sparse.fmt). */
typedef enum { TC_SP_DENSE = 0, TC_SP_PICI = 1, TC_SP_COO = 2, TC_SP_FMT_COUNT = 3 } tc_sparse_fmt;
/** --sparse-format auto: per transfer, whichever of Pici and COO the cost model prices lower. */
#define TC_SP_AUTO 3

/** "dense", "pici", "coo" ("auto" for TC_SP_AUTO, "?" otherwise). */
const char *tc_sparse_fmt_name(int f);
/** Parse "pici", "coo" or "auto" (and "dense" when allow_dense). */
tc_status tc_sparse_fmt_parse(const char *s, int allow_dense, int *out);

/** Element types; the order is tacos-run's (src/exec/exec.h tc_dtype). */
typedef enum {
    TC_SP_F32 = 0, TC_SP_F64, TC_SP_I32, TC_SP_BF16, TC_SP_F16, TC_SP_DTYPE_COUNT
} tc_sparse_dtype;
const char *tc_sparse_dtype_name(tc_sparse_dtype t);   /**< "float32", ... ("?" when out of range) */
size_t tc_sparse_dtype_size(tc_sparse_dtype t);        /**< 4, 8, 4, 2, 2 (0 when out of range) */
/** Parse a name as tc_sparse_dtype_name writes it. */
tc_status tc_sparse_dtype_parse(const char *s, tc_sparse_dtype *out);
/** bfloat16 / float16 bit patterns to float and back (round to nearest even, NaN stays NaN). */
float tc_sparse_half_to_float(tc_sparse_dtype t, uint16_t h);
uint16_t tc_sparse_float_to_half(tc_sparse_dtype t, float f);

/* ------------------------------------------------------------------------------------------------ */
/* Pici (§III-B): 64x64 virtual tiles, one bit per element, one 32-bit prefix index per tile          */

/** Elements per tile and per bit-vector word. */
#define TC_PICI_TILE 4096
#define TC_PICI_COL 64

/**
 * Layout of the Pici form of n elements of `elem` bytes with nnz nonzeros, in this order:
 *  - bit vector: ceil(n/64) 64-bit words.  Tile t holds elements [4096t, 4096t + n_t), n_t = 4096 except
 *    for a last partial tile; it has C = ceil(n_t/64) columns (64 for a full tile) and element j of the
 *    tile sits at row j / C, column j % C (row-major).  Word 64t + c is column c of tile t: bit r is set
 *    when element 4096t + r*C + c is nonzero; bits of rows past the end are zero.
 *  - tile index: ceil(n/4096) 32-bit words, the exclusive prefix sum of the tiles' nonzero counts.
 *  - values: the nnz nonzero elements, tile by tile, within a tile column by column, rows ascending.
 * All words little-endian as the host stores them (tacos-run's ranks share one byte order).
 * Size = nnz*elem + 8*ceil(n/64) + 4*ceil(n/4096) bytes: n/8 + 4*ceil(n/4096) of metadata, 3.15% of a
 * dense float32 buffer (1/32 + 1/4096) when n is a multiple of 4096, at most that plus 12 bytes.
 */
uint64_t tc_sparse_pici_size(uint64_t n, uint64_t nnz, size_t elem);
/** Compress n elements of src into dst (cap bytes, at least tc_sparse_pici_size(n, n, elem) is always
 *  enough); *nnz and *bytes written on success.  TC_ERR_LIMIT when cap is too small. */
tc_status tc_sparse_pici_compress(tc_ctx *ctx, const void *src, uint64_t n, size_t elem, void *dst, size_t cap,
                                  uint64_t *nnz, size_t *bytes);
/** Validate a Pici buffer of `bytes` bytes for n elements; *nnz (may be NULL) gets its nonzero count. */
tc_status tc_sparse_pici_check(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, uint64_t *nnz);
/** Validate, then write all n elements (zeros included) to dst. */
tc_status tc_sparse_pici_decompress(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, void *dst);
/** Validate, then dst[i] += value for each nonzero (sum in type t: floats add, int32 wraps modulo 2^32,
 *  16-bit floats add in float32 and round to nearest even; of two NaNs, the sum keeps either payload);
 *  elements without a value are not touched. */
tc_status tc_sparse_pici_add(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, tc_sparse_dtype t, void *dst);
/** Sparse + sparse: the Pici form of a + b (both Pici of n elements of type t) into dst (cap bytes,
 *  tc_sparse_pici_size(n, n, elem) is enough): where both hold a value their sum (added as
 *  tc_sparse_pici_add adds), where one does its value unchanged; a sum whose bits are all zero
 *  (x + -x = +0.0) is dropped.  *nnz and *bytes written on success. */
tc_status tc_sparse_pici_merge_add(tc_ctx *ctx, const void *a, size_t abytes, const void *b, size_t bbytes,
                                   uint64_t n, tc_sparse_dtype t, void *dst, size_t cap, uint64_t *nnz,
                                   size_t *bytes);

/* ------------------------------------------------------------------------------------------------ */
/* COO (§II-B): one record per nonzero, a 32-bit flat index then the value                          */

/** Size = nnz * (4 + elem): records (uint32 index, value), indices strictly increasing. */
uint64_t tc_sparse_coo_size(uint64_t n, uint64_t nnz, size_t elem);
tc_status tc_sparse_coo_compress(tc_ctx *ctx, const void *src, uint64_t n, size_t elem, void *dst, size_t cap,
                                 uint64_t *nnz, size_t *bytes);
tc_status tc_sparse_coo_check(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, uint64_t *nnz);
tc_status tc_sparse_coo_decompress(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, size_t elem, void *dst);
tc_status tc_sparse_coo_add(tc_ctx *ctx, const void *buf, size_t bytes, uint64_t n, tc_sparse_dtype t, void *dst);

/* ------------------------------------------------------------------------------------------------ */
/* A sparse message on the wire: a 32-byte header, then the payload                                  */

#define TC_SPARSE_MAGIC 0x50534354u /**< "TCSP" */
#define TC_SPARSE_HDR_BYTES 32
/** The header: magic, format (tc_sparse_fmt), element bytes, element count, nonzeros, payload bytes
 *  (at offsets 0, 4, 6, 8, 16, 24; host byte order). */
typedef struct tc_sparse_hdr {
    uint32_t magic;
    uint16_t format;
    uint16_t elem;
    uint64_t count;
    uint64_t nnz;
    uint64_t payload;
} tc_sparse_hdr;

/** Write the 32 bytes of a header (for encoders that build the payload elsewhere, as on a GPU). */
void tc_sparse_hdr_put(const tc_sparse_hdr *h, void *out);
/** Bytes of the payload of n elements with nnz nonzeros in format f (dense: n*elem). */
uint64_t tc_sparse_payload_size(int f, uint64_t n, uint64_t nnz, size_t elem);
/** The largest message (header included) of n elements in format f: what a receiver must post. */
uint64_t tc_sparse_msg_bound(int f, uint64_t n, size_t elem);
/** Bytes a send of n elements with nnz nonzeros takes in format f: header and payload for Pici and COO
 *  (exactly what tc_sparse_msg_encode writes), n*elem for a dense send (it travels raw, no header). */
uint64_t tc_sparse_msg_size(int f, uint64_t n, uint64_t nnz, size_t elem);
/** The expected tc_sparse_msg_size of n elements at density d (nnz = d n: the sizes are affine in nnz);
 *  what the pass decides on and the cost model prices. */
double tc_sparse_msg_expect(int f, uint64_t n, double d, size_t elem);
/** Elements of one chunk of s at type t: chunk_bytes / size, rounded up (at least 1). */
uint64_t tc_sparse_chunk_elems(const tc_sched *s, tc_sparse_dtype t);
/** Header and payload of n elements of src (type t) in format f into msg (cap bytes); *bytes is the
 *  message length, *nnz (may be NULL) the nonzeros counted. */
tc_status tc_sparse_msg_encode(tc_ctx *ctx, int f, tc_sparse_dtype t, const void *src, uint64_t n, void *msg,
                               size_t cap, size_t *bytes, uint64_t *nnz);
/** Validate the header of a received message of `bytes` bytes against n elements of type t (format known,
 *  counts and sizes consistent, payload exactly the rest of the message); *h gets it. */
tc_status tc_sparse_msg_header(tc_ctx *ctx, const void *msg, size_t bytes, tc_sparse_dtype t, uint64_t n,
                               tc_sparse_hdr *h);
/** Validate a whole message, then write its n elements to dst (add = 0) or add them into dst (add = 1,
 *  as tc_sparse_pici_add). */
tc_status tc_sparse_msg_decode(tc_ctx *ctx, const void *msg, size_t bytes, tc_sparse_dtype t, uint64_t n, void *dst,
                               int add);

/* ------------------------------------------------------------------------------------------------ */
/* The pass (§IV-B, IV-C): per transfer dense, Pici or COO                                           */

/** Sparsity thresholds of one format (§IV-C): a message travels sparse when its forecast sparsity is
 *  strictly above the threshold of its kind. */
typedef struct tc_sparse_thresholds {
    double intra;      /**< reduction-phase sends between ranks of one node */
    double inter;      /**< reduction-phase sends between nodes */
    double allgather;  /**< sends of data that is not reduced any further (all-gather phase, and every
                            send of a collective that does not reduce) */
} tc_sparse_thresholds;

/** The paper's thresholds: Pici 0.6 / 0.5 / 0.1, COO 0.7 / 0.6 / 0.5 (§IV-C, IV-D, tuned for fp32). */
#define TC_SPARSE_PICI_THRESHOLDS {0.6, 0.5, 0.1}
#define TC_SPARSE_COO_THRESHOLDS {0.7, 0.6, 0.5}

/** How a send's sparsity is judged against the thresholds. */
typedef enum {
    TC_SP_RULE_FORECAST = 0, /**< the message's own forecast density (default) */
    TC_SP_RULE_PREVIOUS = 1  /**< SpCCL's rule: a reduction-phase send by the sparsity one contribution
                                  earlier (what the step before measured on a ring); sizes and prices stay
                                  the forecast's */
} tc_sparse_rule;

typedef struct tc_sparse_opts {
    double density;                       /**< delta0: fraction of nonzero input elements, [0, 1] */
    int format;                           /**< TC_SP_PICI (default), TC_SP_COO or TC_SP_AUTO */
    tc_sparse_thresholds th[TC_SP_FMT_COUNT]; /**< per format (index TC_SP_PICI, TC_SP_COO) */
    tc_sparse_dtype dtype;                /**< element type the sizes assume (float32) */
    int rule;                             /**< tc_sparse_rule (forecast) */
} tc_sparse_opts;

/** Paper defaults: Pici, float32, density 1. */
void tc_sparse_opts_init(tc_sparse_opts *o);
/** Parse --thresholds "INTRA,INTER,ALLGATHER" (three numbers in [0, 1]); TC_ERR_USAGE with a message. */
tc_status tc_sparse_thresholds_parse(tc_ctx *ctx, const char *s, tc_sparse_thresholds *out);

/** Forecast density after k contributions of density d0 each were summed (eq. 7 applied k - 1 times):
 *  1 - (1 - d0)^k (0 for k <= 0). */
double tc_sparse_fill(double d0, int k);
/** One step of eq. 7: 1 - (1 - prev)(1 - d0). */
double tc_sparse_fill_next(double prev, double d0);

/**
 * Contributions per transfer: symbolic execution of `s` (the checker's event order: arrivals before
 * departures at equal times, a zero-length transfer's arrival after them) counting, per (rank, chunk), the
 * ranks whose input a chunk holds; k[i] is that count at transfer i's source when it departs (1 for every
 * transfer of a collective that does not reduce).  *out (s->n_xfers ints) belongs to the caller.
 */
tc_status tc_sparse_contribs(tc_ctx *ctx, const tc_sched *s, int **out);

/**
 * The pass: decide the format of every transfer of `s` for input density o->density.  A transfer carrying
 * k contributions is forecast at density tc_sparse_fill(d0, k); it is of the all-gather kind when the
 * collective does not reduce or k is the rank count, else intra- or inter-node by its ends' nodes (topo may
 * be NULL: one node).  The forecast is the paper's, for sums: a reduced element is nonzero where any input
 * is (products and the like can only be sparser; the replay is correct whatever the forecast).  With TC_SP_AUTO, of the formats whose threshold admits it, the one with the lower
 * modelled time of the send on its links (the exact message over beta, plus both codec times), and only
 * where that beats the dense send.  In every mode a send goes sparse only where its exact message
 * (tc_sparse_msg_expect, header included) is smaller than its dense bytes.  o->rule picks the density the
 * thresholds judge (tc_sparse_rule); sizes are always the forecast's.  Writes a new tc_sched_sparse.
 */
tc_status tc_sparse_plan(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, const tc_sparse_opts *o,
                         tc_sched_sparse **out);

/** Counts of an annotation: transfers per format. */
void tc_sparse_counts(const tc_sched_sparse *sp, int counts[TC_SP_FMT_COUNT]);

/* ------------------------------------------------------------------------------------------------ */
/* The cost model (eq. 4-6)                                                                          */

/**
 * Codec throughputs, bytes of dense data per second, measured by `make bench-sparse` with the CPU codecs
 * (one core of an AMD EPYC, float32, 64 MiB, 90% sparsity, median of 7 runs of CPU time; memcpy ran at
 * 11 GB/s there; man 5 tacosc-costs): used where the cost file has no `codec` line.  GPU kernels run an
 * order of magnitude faster: give their measured throughputs in the cost file.
 */
#define TC_SPARSE_PICI_COMPRESS_BW 9.8e9
#define TC_SPARSE_PICI_DECOMPRESS_BW 11.8e9
#define TC_SPARSE_COO_COMPRESS_BW 8.9e9
#define TC_SPARSE_COO_DECOMPRESS_BW 9.0e9

/** Throughputs of format f (pici or coo): the topology's cost-file values, else the defaults above. */
void tc_sparse_codec_bw(const tc_topo *topo, int f, double *compress, double *decompress);

/**
 * Per-transfer terms of an annotated plan, as the simulator takes them (tc_sim_opts.xfer_*): scale = wire
 * bytes over dense bytes, eq. 4 on the exact message (tc_sparse_msg_expect: header, payload, rounding;
 * for large chunks Pici tends to d + (1/8 + 1/1024) / elem, COO to d (4 + elem) / elem), pre = seconds per dense byte compressing at the source (none when the source
 * forwards, unchanged, a message it received in the same format), post = seconds per dense byte
 * decompressing (or adding) at the destination; dense transfers 1, 0, 0.  wire = sum of scale / n.
 */
typedef struct tc_sparse_cost {
    int n;
    double *scale, *pre, *post;
    double wire;            /**< bytes on the wire over dense bytes, mean over transfers */
    double density;         /**< mean forecast density of the sparse transfers (0 when none) */
} tc_sparse_cost;

/** Price s (s->sparse set, its n equal to s->n_xfers) with the throughputs of topo (may be NULL). */
tc_status tc_sparse_cost_create(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, tc_sparse_cost **out);
/** The same at a collective size of `size` bytes (0: the plan's): each message's exact size for the chunk
 *  the simulator's tc_sim_opts.size rescales to (the decisions stay the plan's). */
tc_status tc_sparse_cost_create_sized(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, uint64_t size,
                                      tc_sparse_cost **out);
void tc_sparse_cost_free(tc_sparse_cost *c);

/**
 * The sparse section of a checked plan against the plan (tacosc verify; src/sparse/verify.c names the
 * rules: count, options, local, format, threshold, size, auto): TC_OK when every decision is one the pass
 * can make at the plan's density, thresholds and element type, else TC_ERR_INVALID with `sparse section:
 * ... (rule: NAME)` at the first offending transfer.  topo (may be NULL) gives nodes and, for auto, beta
 * and the codec throughputs.  A plan without a sparse section passes.
 */
tc_status tc_sparse_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo);

struct tc_sim_opts; /* tacos/sim.h */
/**
 * The pass with its prediction (src/sparse/price.c): tc_sparse_plan, then the event model (tc_sim_run with
 * so, may be NULL, and the tc_sparse_cost terms) prices the plan with its sparse messages on topo (not
 * NULL).  s->time must
 * be the dense plan's time under the same so.  With TC_SP_AUTO the whole plan is kept only where it is
 * predicted no slower than dense: the per-send decisions, then the same with the reduction-phase sends
 * dense (their codec times sit on the dependence chain of the next step), then every send dense; the
 * fastest wins (ties to the fewer sparse sends), so auto's time is never above the dense time.  Other
 * formats are kept as decided.  On success s->sparse is replaced, *time is the predicted time and *wire
 * the bytes on the wire over dense (both may be NULL).
 */
tc_status tc_sparse_annotate(tc_ctx *ctx, const tc_topo *topo, tc_sched *s, const tc_sparse_opts *o,
                             const struct tc_sim_opts *so, double *time, double *wire);

/* ------------------------------------------------------------------------------------------------ */
/* The plan's sparse section in a JSON schedule (src/sparse/json.c; man 5 tacosc-schedule)          */

struct cJSON;

/** Write the section as the JSON schedule writer places it after the transfers: `,\n  "sparse": {...}`
 *  (density, asked format, dtype, thresholds, one letter per transfer: d, p, c). Deterministic. */
void tc_sparse_json_write(FILE *f, const tc_sched_sparse *sp);
/**
 * Read the value `o` of a schedule's "sparse" member (the JSON schedule reader parsed the document) into a
 * new tc_sched_sparse, *out on success (the caller owns it: tc_sched_sparse_free).  Errors: TC_ERR_INVALID
 * as `FILE:LINE: error: field "sparse": ...`, LINE = line(arg) (line may be NULL: 0), asked only on error;
 * TC_ERR_NOMEM.  The letters are counted against the transfers later, by tc_sparse_json_check.
 */
tc_status tc_sparse_json_read(tc_ctx *ctx, const struct cJSON *o, const char *file, int (*line)(const void *arg),
                              const void *arg, tc_sched_sparse **out);
/** One format letter per transfer: sp->n against the n_xfers read; the same diagnostics as the reader. */
tc_status tc_sparse_json_check(tc_ctx *ctx, const tc_sched_sparse *sp, int n_xfers, const char *file,
                               int (*line)(const void *arg), const void *arg);

#endif
