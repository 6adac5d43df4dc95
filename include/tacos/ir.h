/**
 * @file ir.h
 * The one intermediate representation of tacosc: status codes, the context that carries options and
 * diagnostics, the topology IR and the schedule IR.  Every stage of the pipeline reads and writes these
 * types; module headers (topo.h, check.h, emit.h, algo.h, synth.h, sim.h, msccl.h) declare the passes.
 *
 * Ownership: an object returned through an out-parameter by a `tc_*_create`, `tc_*_read`, `tc_*_load` or
 * generator belongs to the caller and is released with the matching `tc_*_free`, which accepts NULL.
 * Out-parameters are written only on success.  Strings inside IR objects are owned by the object.
 */
#ifndef TACOS_IR_H
#define TACOS_IR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TC_VERSION "0.1.0"

/**
 * The longest time tacosc reads or produces, in seconds (10^6 s, about 11.6 days): a link's latency, a
 * reconfiguration delay, the time one byte or one chunk takes on a link, a transfer's start and end in a
 * plan, a schedule's length.  The synthesizer counts integer picoseconds in 64 bits (at most 9.2e6 s), so
 * sums of a few such times still fit; longer times are refused with a message instead of overflowing.
 */
#define TC_TIME_MAX 1e6
/** The fastest bandwidth (B/s) a class or link may have: 1 EB/s, beyond any link, so that the sums over a
 *  topology's links stay finite (1e308 B/s overflowed them). */
#define TC_BW_MAX 1e18
/** 2^53: a double holds every whole number below it, not 2^53 + 1 (which reads back as 2^53). */
#define TC_TWO53 9007199254740992.0
/** A duration in seconds as the integer picoseconds the TACOS synthesizer (src/synth/ten.c) and the event
 *  simulator count in: rounded to nearest, at least 1.  s is finite, >= 0 and at most TC_TIME_MAX. */
static inline int64_t tc_time_ps(double s)
{
    const double c = s * 1e12;
    return c < 1 ? 1 : (int64_t)(c + 0.5);
}

/* ------------------------------------------------------------------------------------------------ */
/* Status                                                                                            */

/** One status enum for the whole code base: TC_OK is zero, errors are negative. */
typedef enum {
    TC_OK = 0,
    TC_ERR_NOMEM = -1,       /**< allocation failed */
    TC_ERR_IO = -2,          /**< a file could not be opened, read or written */
    TC_ERR_PARSE = -3,       /**< malformed input (XML, JSON, cost file) */
    TC_ERR_INVALID = -4,     /**< well-formed input that breaks a rule (range, schema, duplicate) */
    TC_ERR_UNSUPPORTED = -5, /**< an algorithm or pass cannot serve this input; the diagnostic says why */
    TC_ERR_CHECK = -6,       /**< the checker or verifier found a violation */
    TC_ERR_LIMIT = -7,       /**< a runtime limit (MSCCL target) cannot be met */
    TC_ERR_INTERNAL = -8,    /**< a bug: an invariant of tacosc itself broke */
    TC_ERR_USAGE = -9        /**< bad command-line usage */
} tc_status;

/** Short English text for a status ("out of memory", ...). Never NULL. */
const char *tc_status_str(tc_status st);

/* ------------------------------------------------------------------------------------------------ */
/* Context and diagnostics                                                                           */

typedef enum { TC_DIAG_ERROR, TC_DIAG_WARNING, TC_DIAG_NOTE } tc_diag_level;

/**
 * A diagnostic sink.  `file` may be NULL (no location); `line` and `col` are 0 when unknown.  `msg` has no
 * trailing newline.  The default sink (tc_ctx_init) formats `file:line:col: error: msg` to stderr.
 */
typedef void (*tc_diag_fn)(void *user, tc_diag_level level, const char *file, int line, int col,
                           const char *msg);

/**
 * The context carried through every pass: options that are not part of an IR, the seed, the verbosity
 * and the diagnostic sink.  No mutable globals exist in tacosc; everything lives here.
 */
typedef struct tc_ctx {
    uint64_t seed;        /**< seed for every randomized choice (default TC_DEFAULT_SEED) */
    int verbose;          /**< 0 quiet, 1 progress, 2 debug */
    tc_diag_fn sink;      /**< where diagnostics go */
    void *sink_user;      /**< passed back to sink */
    int n_errors;         /**< errors reported so far */
    int n_warnings;       /**< warnings reported so far */
    int progress;         /**< nonzero: long passes may print a progress line on stderr (a tty) */
} tc_ctx;

#define TC_DEFAULT_SEED 1u

/** Initialise a context with the default seed and the stderr sink. */
void tc_ctx_init(tc_ctx *ctx);

/** The default sink: prints `file:line:col: level: msg` (or `tacosc: level: msg`) to stderr. */
void tc_diag_stderr(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg);

/** Report a diagnostic through ctx's sink (printf-style). */
void tc_diag(tc_ctx *ctx, tc_diag_level level, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void tc_diag_v(tc_ctx *ctx, tc_diag_level level, const char *file, int line, int col, const char *fmt,
               va_list ap);

/** Report an error at file:line and return `st`, so callers can write `return tc_error(...)`. */
tc_status tc_error(tc_ctx *ctx, tc_status st, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/** Report a warning at file:line. */
void tc_warn(tc_ctx *ctx, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** A sink that appends every diagnostic, formatted as the stderr sink would, to a tc_buf (tests). */
typedef struct tc_buf {
    char *data;  /**< NUL-terminated */
    size_t len;
    size_t cap;
} tc_buf;
void tc_diag_buffer(void *user /* tc_buf* */, tc_diag_level level, const char *file, int line, int col,
                    const char *msg);
tc_status tc_buf_printf(tc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** The first error a run reported, as a record (location and message apart, no "file:line: error: "
 *  text to search): for a caller that reports another pass's failure in its own words. */
typedef struct tc_diag_rec {
    int have;          /**< 1 once an error was recorded */
    char file[256];    /**< empty: no location */
    int line, col;
    char msg[1024];
} tc_diag_rec;
/** A recorded message with its location as a note: "file:line: msg" where it has a line, else msg (a
 *  whole-file message is about the input the note's reader already names); returns buf. */
const char *tc_diag_note(const char *file, int line, const char *msg, char *buf, size_t n);
/** A sink that records the first error into a tc_diag_rec and passes nothing on (zero the record first). */
void tc_diag_record(void *user /* tc_diag_rec* */, tc_diag_level level, const char *file, int line, int col,
                    const char *msg);
/** Diagnostics held back in order, to be passed on later (or dropped): a sink and its state. */
typedef struct tc_diag_hold {
    struct tc_held_diag *d;
    int n, cap, nomem;
} tc_diag_hold;
/** The sink (user: a zeroed tc_diag_hold). */
void tc_diag_hold_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg);
/** Pass the held diagnostics on to ctx in order (counted there), or drop them (ctx NULL); then free them. */
void tc_diag_hold_release(tc_diag_hold *h, tc_ctx *ctx);
void tc_buf_free(tc_buf *b);

/* ------------------------------------------------------------------------------------------------ */
/* Deterministic random numbers (splitmix64 seeding a xoshiro256**)                                  */

typedef struct tc_rng { uint64_t s[4]; } tc_rng;
void tc_rng_seed(tc_rng *r, uint64_t seed);
uint64_t tc_rng_next(tc_rng *r);
/** Uniform integer in [0, n). n > 0. */
uint64_t tc_rng_below(tc_rng *r, uint64_t n);
/** Uniform double in [0, 1). */
double tc_rng_unit(tc_rng *r);

/* ------------------------------------------------------------------------------------------------ */
/* Utilities                                                                                         */

/** Parse a decimal number as the man pages define it: an optional sign, digits with an optional fraction
 *  (or a fraction alone), an optional decimal exponent.  Hexadecimal (0x1p-1), inf and nan are not numbers
 *  here, though strtod reads them.  *end is set past the number; returns -1 (with *end = s) when there is
 *  none, or when the value is out of range. */
int tc_parse_decimal(const char *s, char **end, double *out);
/** Parse a byte size with optional K/M/G/T suffix (powers of 1024; "KB"/"KiB" accepted). */
tc_status tc_parse_size(const char *s, uint64_t *out);
/** Format seconds as a fixed-precision human string ("12.345 us"). buf of at least 32 bytes. */
const char *tc_fmt_time(double seconds, char *buf, size_t n);
/** Format a byte count ("1.00 GiB"). */
const char *tc_fmt_bytes(double bytes, char *buf, size_t n);
/** Format a finite double as the shortest text that reads back to the same bits (deterministic): an integer
 *  when it is one (non-negative, below 2^53), else %.15g when that round-trips, else %.17g.  The JSON
 *  schedule's numbers (src/emit, and the photonic and sparse sections).  buf of at least 32 bytes. */
const char *tc_fmt_double(double d, char *buf, size_t n);
/** Read a whole file into a malloc'd, NUL-terminated buffer (*len excludes the NUL).  Errors are reported
 *  as `tacosc: error: cannot open 'PATH': reason` or `PATH: error: cannot read: reason`. */
tc_status tc_read_file(tc_ctx *ctx, const char *path, char **buf, size_t *len);
/** tc_read_file refusing, as soon as it has read more, a file of more than max bytes (0: no limit):
 *  `PATH: error: larger than MAX: not a WHAT` (text inputs that are never that large: an endless input such
 *  as /dev/zero stops there). */
tc_status tc_read_file_max(tc_ctx *ctx, const char *path, size_t max, const char *what, char **buf, size_t *len);
/* The largest text inputs read whole (a 200x200 mesh's topology is 3.5 MB, a cost file a few KB). */
#define TC_TEXT_MAX_COSTS ((size_t)16 << 20)
#define TC_TEXT_MAX_TOPOLOGY ((size_t)256 << 20)
#define TC_TEXT_MAX_DUMP ((size_t)64 << 20)
#define TC_TEXT_MAX_TUNE ((size_t)256 << 20)
#define TC_TEXT_MAX_MODEL ((size_t)256 << 20)
/** Hold while calling igraph: its error state and cleanup stack are process globals (not thread-safe as
 *  Debian builds it); recursive. */
void tc_igraph_lock(void);
void tc_igraph_unlock(void);
/** Write s to f with &, <, > and " escaped for XML text and attribute values (NULL writes nothing). */
void tc_xml_escape(FILE *f, const char *s);
/** How a JSON value is worded in messages ("a string", "a number", "an array", ...). */
struct cJSON;
const char *tc_json_type_name(const struct cJSON *v);
/** Write an unsigned 64-bit integer as JSON: a number below 2^53, a string of decimal digits from there (a
 *  JSON number of 2^53 or more is not read exactly: 2^53 + 1 parses as 2^53). */
void tc_json_put_u64(FILE *f, uint64_t v);
/** Read what tc_json_put_u64 writes into *out: NULL, or why v is not one (worded to follow 'field "x" ',
 *  e.g. "must be an unsigned integer, not -1"), in why[n]. */
const char *tc_json_get_u64(const struct cJSON *v, uint64_t *out, char *why, size_t n);
/** Write s to f as a JSON string ("..." with ", \\ and control characters escaped); NULL writes null. */
void tc_json_escape(FILE *f, const char *s);
/** qsort comparator of ints, ascending. */
int tc_cmp_int(const void *a, const void *b);
/** qsort comparator of int64_t, ascending. */
int tc_cmp_int64(const void *a, const void *b);
/** Open a file for reading (streaming readers); the error is reported as tc_read_file reports it. */
tc_status tc_open_read(tc_ctx *ctx, const char *path, FILE **out);
/** strdup that returns NULL on NULL. */
char *tc_strdup(const char *s);
/** Wall-clock seconds (monotonic). */
double tc_now(void);
/** Memory this process could still allocate without swapping, in bytes: MemAvailable of /proc/meminfo
 *  (else the free physical pages), lowered to what a cgroup v2 memory limit leaves and to the address-space
 *  limit (ulimit -v); 0 when unknown.  For refusing runs up front with an estimate. */
uint64_t tc_mem_available(void);
/** Ask for transparent huge pages over the 2 MiB-aligned interior of a large allocation (>= 32 MiB; a
 *  hint only, ignored where the kernel offers none): one page fault per 2 MiB instead of per 4 KiB. */
void tc_hugepage_hint(void *p, size_t bytes);
/** Grow the array *p of *cap elements of `elem` bytes to hold at least `need` (doubling, from 16; large ones
 *  hinted to huge pages).  TC_ERR_LIMIT past INT32_MAX elements, TC_ERR_NOMEM when realloc fails (*p is kept). */
tc_status tc_grow(void **p, int *cap, int need, size_t elem);

/* ------------------------------------------------------------------------------------------------ */
/* Topology IR                                                                                       */

/** Points of a class's size table (the cost file's `CLASS at SIZE BANDWIDTH` lines, man 5 tacosc-costs). */
#define TC_COST_AT_MAX 32

/** A link class: a named (alpha, beta) pair.  alpha in seconds, beta in seconds per byte.  With n_at > 0
 *  the class's beta depends on the message size: at_beta[i] at at_bytes[i] (increasing sizes), linear in
 *  log2(bytes) between points, clamped to the end points (tc_link_beta_at in topo.h); beta is then the
 *  class line's value, which scales links' own betas (a link's beta at S = its beta * table(S) / beta).
 *  The table is stored inline so that copying a class copies it. */
typedef struct tc_link_class {
    char *name;
    double alpha;
    double beta;
    int defined;   /**< nonzero once alpha/beta were given (inline in the topology or by a cost file) */
    int line;      /**< where it was defined (0: cost file or built-in) */
    int n_at;      /**< points of the size table, 0: none (beta at every size) */
    double at_bytes[TC_COST_AT_MAX], at_beta[TC_COST_AT_MAX]; /**< bytes (increasing), s/byte */
} tc_link_class;

/** A directed point-to-point link. */
typedef struct tc_link {
    int src, dst;
    int cls;        /**< index into tc_topo.classes */
    double alpha;   /**< effective latency in s (class value unless overridden) */
    double beta;    /**< effective s/byte (class value unless overridden) */
    unsigned char alpha_set, beta_set; /**< per-link overrides present */
    int line;       /**< source line in the topology file (0 when generated) */
} tc_link;

/** How a switch is modelled: unwound into point-to-point links (TACOS §IV-G); a store-and-forward node whose
 *  ports have the switch's class (one chunk received leaves on one port); or such a node that may send one
 *  chunk it received out of several ports (multicast: NVSwitch NVLS, SHARP). */
typedef enum { TC_SWITCH_UNWIND = 0, TC_SWITCH_NODE = 1, TC_SWITCH_MULTICAST = 2 } tc_switch_model;
/** "unwind", "node", "multicast". */
const char *tc_switch_model_name(tc_switch_model m);
/** Parse one of those names (TC_ERR_INVALID otherwise). */
tc_status tc_switch_model_parse(const char *s, tc_switch_model *out);

/** How a link prices a chunk (issue 27; man 1 tacosc, LINK MODELS): tacos, each chunk holds the link for
 *  alpha + beta * bytes and arrives when it lets go (the TACOS paper); te-ccl, the TE-CCL solver's model
 *  (microsoft/TE-CCL teccl/solvers/allgather.py, base_formulation.py): a chunk holds the link beta * bytes
 *  and arrives alpha after that, a switch-to-NPU hop adds alpha only, and an alpha at most a tenth of the
 *  fastest link's beta * bytes (TE-CCL's epoch) counts as 0.  See tc_link_times in sim.h. */
typedef enum { TC_LINK_TACOS = 0, TC_LINK_TECCL = 1 } tc_link_model;
/** "tacos", "te-ccl". */
const char *tc_link_model_name(tc_link_model m);
/** Parse one of those names (TC_ERR_INVALID otherwise). */
tc_status tc_link_model_parse(const char *s, tc_link_model *out);

/** A switch with attached NPUs; unwound to point-to-point links (TACOS §IV-G) or kept as a vertex (model). */
typedef struct tc_switch {
    char *name;
    int n_ports;
    int *npus;      /**< attached NPU ids, in declaration order */
    int cls;        /**< link class of the NPU<->switch links */
    double alpha, beta;
    int unwind;     /**< unwinding degree d requested in the XML; 0 = use the default */
    int model;      /**< tc_switch_model */
    int line;
    int up;         /**< the switch or NIC (index) this one hangs from, -1 none: switches form a forest (a PCIe
                         tree, NICs under rail or leaf switches); both ends must be vertices (model node or
                         multicast), joined by a link each way of class up_cls */
    int up_cls;     /**< class of the links to `up` (the NIC's port speed for a NIC) */
    int nic;        /**< nonzero: a <nic> element, a NIC whose ports (npus) its GPUs share; always a vertex
                         (model node), left out of the unwound topology while it hangs from nothing */
    int gdr;        /**< NIC: GPU-direct RDMA 1 on, 0 off (the GPU<->NIC links cost twice: the data is staged
                         in host memory), -1 not given (on) */
    char path[8];   /**< NIC: the PCIe path to its GPUs as nvidia-smi names it (PIX, PXB, PHB, NODE, SYS), or "" */
} tc_switch;

/** A switch kept as a vertex of the topology (model node or multicast) once tc_topo_unwind has run. */
typedef struct tc_swnode {
    char *name;
    int multicast;  /**< nonzero: one chunk received may leave on several ports */
    int line;
} tc_swnode;

/**
 * Optional photonic fabric description (PCCL photonic paper §2, §4.2; man 5 tacosc-topology); all zero when
 * absent.  Zero also means "not given" for each field: tx/rx 0 = no limit, wavelengths 0 = 1, mzi 0 = no
 * MZI mesh modelled, tiles 0 = automatic, grid 0 = one row of the topology's nodes (or one server),
 * fibers 0 = as many as the circuits need.  The reader refuses impossible values (an explicit tx="0", a
 * grid that does not hold the servers, a mesh too small for its tiles, ...) with the element's line.
 */
typedef struct tc_photonic {
    int present;
    double reconfig_delay;  /**< r, seconds (the cost file's `reconfig` overrides it) */
    int reconfig_set;       /**< nonzero when r was given (topology or cost file) */
    int tx_per_npu, rx_per_npu; /**< transmitters / receivers per NPU: circuits out of / into it per round */
    int wavelengths;        /**< per waveguide and per fiber: circuits one of them carries at once */
    int mzi_size;           /**< the MZI mesh of a server is mzi x mzi MZIs; 0 if none */
    int tile_rows, tile_cols; /**< a server's mesh is cut into tile_rows x tile_cols tiles, one NPU each */
    int grid_rows, grid_cols; /**< servers on a grid; fibers join grid neighbours */
    int fibers;             /**< fibers between two neighbouring servers */
    int line;               /**< line of <photonic> in the topology file (0 when generated) */
} tc_photonic;

/**
 * The topology: NPUs 0..n_npus-1, directed links, link classes, switches, optional node (server) ids and
 * photonic fabric.  Links are stored flat; tc_topo_index() builds CSR adjacency (out and in) over them.
 */
typedef struct tc_topo {
    char *name;
    char *file;               /**< path it was read from (for diagnostics), may be NULL */
    int n_npus;
    int n_links, cap_links;
    tc_link *links;
    int n_classes, cap_classes;
    tc_link_class *classes;
    int n_switches, cap_switches;
    tc_switch *switches;
    int n_swnodes;            /**< switch vertices: ids n_npus .. n_npus + n_swnodes - 1, joined to their NPUs
                                   by links both ways (switches of model node or multicast, after
                                   tc_topo_unwind); 0 otherwise.  Ranks, chunks and NPU arrays stop at n_npus */
    tc_swnode *swnodes;
    int *node_of;             /**< per NPU server id, NULL when no hierarchy is given */
    int n_nodes;              /**< number of distinct servers (0 when node_of is NULL) */
    tc_photonic photonic;
    int link_model;           /**< tc_link_model the passes price links with (0: tacos, the default) */
    double codec_bw[3][2];    /**< sparse codec throughputs from the cost file's `codec` lines, bytes of dense
                                   data per second: [1 pici, 2 coo][0 compress, 1 decompress]; 0 when not
                                   given (sparse.h's measured defaults apply) */
    /* CSR adjacency built by tc_topo_index(); NULL until then; over every vertex (NPUs, then switches) */
    int *out_off, *out_link;  /**< links leaving vertex v: out_link[out_off[v] .. out_off[v+1]) */
    int *in_off, *in_link;    /**< links entering vertex v */
} tc_topo;

/** NPUs plus switch vertices: the vertex count of links, CSR and routes. */
static inline int tc_topo_n_vertices(const tc_topo *t) { return t->n_npus + t->n_swnodes; }

/**
 * Pricing a link (src/topo/linkcost.c): every pass prices a message of `bytes` over link l as
 * tc_link_cost(t, l, bytes) = l->alpha + tc_link_beta_at(t, l, bytes) * bytes.  Without a size table on
 * the link's class, beta_at is exactly l->beta (no arithmetic: outputs stay byte-identical); with one
 * (cost file lines `CLASS at SIZE BANDWIDTH`), it is l->beta * table(bytes) / class beta, the table linear
 * in log2(bytes) between its points and clamped to the end points.  Lower bounds use tc_link_beta_min,
 * the link's fastest beta over every size.
 */
double tc_class_beta_at(const tc_link_class *k, double bytes);
double tc_class_beta_min(const tc_link_class *k);
double tc_link_beta_table(const tc_topo *t, const tc_link *l, double bytes);
double tc_link_beta_min(const tc_topo *t, const tc_link *l);
/** Nonzero when some class of t has a size table. */
int tc_topo_has_tables(const tc_topo *t);
static inline double tc_link_beta_at(const tc_topo *t, const tc_link *l, double bytes)
{
    return t->classes[l->cls].n_at ? tc_link_beta_table(t, l, bytes) : l->beta;
}
static inline double tc_link_cost(const tc_topo *t, const tc_link *l, double bytes)
{
    return l->alpha + tc_link_beta_at(t, l, bytes) * bytes;
}


/* ------------------------------------------------------------------------------------------------ */
/* Schedule IR                                                                                       */

typedef enum {
    TC_COLL_ALLGATHER = 0,
    TC_COLL_REDUCESCATTER,
    TC_COLL_ALLREDUCE,
    TC_COLL_BROADCAST,
    TC_COLL_REDUCE,
    TC_COLL_GATHER,
    TC_COLL_SCATTER,
    TC_COLL_ALLTOALL,
    TC_COLL_COUNT
} tc_coll;

#define TC_COLL_BIT(c) (1u << (c))

/** Name as MSCCL spells it ("allgather", "reducescatter", ...). */
const char *tc_coll_name(tc_coll c);
/** Parse a collective name; accepts MSCCL spellings and "all-gather", "reduce-scatter", "all-reduce",
 *  "all-to-all". Returns TC_ERR_INVALID for unknown names. */
tc_status tc_coll_parse(const char *s, tc_coll *out);
/** nccl-tests bus-bandwidth factor for n ranks. */
double tc_coll_busbw_factor(tc_coll c, int n);
/** Nonzero when the collective reduces (reduce-scatter, all-reduce, reduce). */
int tc_coll_reduces(tc_coll c);
/** Nonzero when the collective has a root (broadcast, reduce, gather, scatter). */
int tc_coll_rooted(tc_coll c);

typedef enum { TC_OP_COPY = 0, TC_OP_REDUCE = 1 } tc_op;

/**
 * One transfer: rank `src` sends its current copy of global chunk `chunk` to rank `dst`, which either
 * replaces its copy (copy) or reduces into it (reduce).  The data leaves src at t_start (what src holds
 * then) and is present at dst from t_end on.  `link` is the physical link id used when the transfer is on
 * one direct link (-1 otherwise); `route` lists the physical links a logical transfer crosses
 * (route_len == 0 for a direct neighbour or when unknown).  `step` is the algorithmic step.
 */
typedef struct tc_xfer {
    int src, dst;
    int chunk;
    int op;         /**< tc_op */
    int link;
    int step;
    double t_start, t_end;  /**< seconds */
    int route_off, route_len; /**< into tc_sched.route */
} tc_xfer;

/**
 * Chunk numbering (the checker's and every emitter's contract), R = n_ranks, K = chunks_per_rank:
 *  - allgather, reducescatter, gather, scatter: n_chunks = R*K; chunk c belongs to rank c / K.
 *  - allreduce: n_chunks = R*K (any n_chunks >= 1 accepted when read from a file); every rank holds every
 *    chunk with its own contribution.
 *  - broadcast, reduce: n_chunks = K, all from/to `root`.
 *  - alltoall: n_chunks = R*R*K; chunk c goes from rank c / (R*K) to rank (c / K) % R.
 */
typedef struct tc_sched {
    tc_coll coll;
    int n_ranks;
    int chunks_per_rank;
    int n_chunks;
    int root;               /**< for rooted collectives, else 0 */
    int unwind;             /**< switch unwinding degree of the topology the link ids refer to (0: each
                                 switch's own, else 1; see tc_topo_unwind) */
    int switch_model;       /**< switch model of that topology: 0 each switch's own (the file's), else
                                 1 + tc_switch_model (every switch); a transfer through a switch vertex is
                                 one transfer from NPU to NPU whose route crosses the switch */
    int link_model;         /**< tc_link_model the plan was made and priced with (0: tacos) */
    uint64_t size_bytes;    /**< collective size (per-rank buffer for all-reduce; output size for
                                 all-gather; input size for reduce-scatter) */
    uint64_t chunk_bytes;   /**< bytes of one chunk */
    char *algo;             /**< generator name */
    char *topo_name;        /**< topology name, may be NULL */
    uint64_t seed;
    double time;            /**< predicted collective time in s (0 when unknown) */
    double wire_scale;      /**< bytes on the wire per byte of a chunk (0 means 1): 2 for an MSCCL++ plan of LL
                                 packets, each 8 bytes of data beside 8 of flags; the simulator prices it */
    int n_steps;            /**< 1 + the largest step number */
    int n_xfers, cap_xfers;
    tc_xfer *xfers;
    int n_route, cap_route;
    int *route;
    char *file;             /**< the file it was read from, NULL when generated */
    int *xfer_line;         /**< per transfer, its line in `file` (0 unknown); NULL when none is known */
    struct tc_sched_photonic *photonic; /**< the photonic pass's rounds and circuits, NULL when none;
                                             owned (tc_sched_free frees it, tc_sched_clone copies it) */
    struct tc_sched_sparse *sparse; /**< the sparse pass's per-transfer formats, NULL when none; owned, and
                                         kept in step with the transfers by tc_sched_sort and tc_sched_clone */
} tc_sched;

/**
 * Create an empty schedule.  n_chunks is derived from coll, n_ranks and chunks_per_rank by the rule above.
 * chunk_bytes = size_bytes / (R*K) for allgather/reducescatter/allreduce/gather/scatter,
 * size_bytes / K for broadcast/reduce, size_bytes / (R*K) for alltoall (per-destination block).
 */
tc_status tc_sched_create(tc_coll coll, int n_ranks, int chunks_per_rank, uint64_t size_bytes,
                          tc_sched **out);
void tc_sched_free(tc_sched *s);
/** Set the algorithm and topology names (copied). */
tc_status tc_sched_set_names(tc_sched *s, const char *algo, const char *topo_name);
/** Append a transfer.  route may be NULL when route_len is 0.  Updates n_steps. */
tc_status tc_sched_add(tc_sched *s, int src, int dst, int chunk, tc_op op, int link, int step,
                       double t_start, double t_end, const int *route, int route_len);
/** Reserve room for n more transfers (optional). */
tc_status tc_sched_reserve(tc_sched *s, int n);
/** Sort transfers by (t_start, t_end, step, src, dst, chunk): the canonical order written to files. */
void tc_sched_sort(tc_sched *s);
/** Latest t_end (0 for an empty schedule). */
double tc_sched_makespan(const tc_sched *s);
/** Global chunk count for a collective (see the numbering above). */
int tc_sched_chunk_count(tc_coll coll, int n_ranks, int chunks_per_rank);
/** The number of pieces a collective's size is cut into (chunk_bytes = size / it, rounded up): K for
 *  broadcast and reduce, R*K otherwise (for alltoall, one piece per rank and chunk of its own buffer). */
uint64_t tc_sched_chunk_divisor(tc_coll coll, int n_ranks, int chunks_per_rank);
/** Deep copy. */
tc_status tc_sched_clone(const tc_sched *s, tc_sched **out);
/** Record where the schedule was read from (copied); diagnostics about its transfers name it. */
tc_status tc_sched_set_file(tc_sched *s, const char *file);
/** Record the source line of transfer i (0 <= i < n_xfers); the lines follow the transfers through
 *  tc_sched_sort and tc_sched_clone. */
tc_status tc_sched_set_line(tc_sched *s, int i, int line);
/** Report an error about transfer i at its source (s->file and its line when known); returns st. */
tc_status tc_sched_error(tc_ctx *ctx, tc_status st, const tc_sched *s, int i, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/** Source line of transfer i, 0 when unknown. */
static inline int tc_sched_line(const tc_sched *s, int i) { return s->xfer_line ? s->xfer_line[i] : 0; }

/* ------------------------------------------------------------------------------------------------ */
/* Sparse formats of a schedule (written by the sparse pass, include/tacos/sparse.h)                 */

/**
 * How each transfer travels when the input has density `density` (SpCCL paper §IV): fmt[i] is the format
 * of transfer i (tc_sparse_fmt: 0 dense, 1 Pici, 2 COO).  n equals the schedule's n_xfers when attached.
 */
typedef struct tc_sched_sparse {
    double density;             /**< delta0: the input density the plan was annotated for, [0, 1] */
    int format;                 /**< the format asked for: 1 pici, 2 coo, 3 auto */
    int dtype;                  /**< element type the sizes assume (tc_sparse_dtype) */
    double th[3][3];            /**< sparsity thresholds used: [1 pici, 2 coo][intra, inter, allgather] */
    int n;                      /**< transfers */
    unsigned char *fmt;         /**< n formats */
} tc_sched_sparse;

void tc_sched_sparse_free(tc_sched_sparse *p);
/** Deep copy. */
tc_status tc_sched_sparse_clone(const tc_sched_sparse *p, tc_sched_sparse **out);

/* ------------------------------------------------------------------------------------------------ */
/* Photonic rounds of a schedule (written by the photonic pass, include/tacos/photonic.h)            */

/** The topology a photonic round runs on (PCCL photonic paper, Alg. 1). */
typedef enum {
    TC_PH_INITIAL = 0,  /**< the topology's own links, G0 */
    TC_PH_FALLBACK = 1, /**< member `which` of the fallback set S */
    TC_PH_OWN = 2       /**< the circuits joining the pairs of round `which` (Alg. 1's I_which) */
} tc_ph_kind;

/** How a round's fibers were routed (Alg. 4). */
typedef enum {
    TC_PH_FIBER_NONE = 0, /**< no server grid: nothing to route */
    TC_PH_FIBER_ILP = 1,  /**< the exact ILP */
    TC_PH_FIBER_LP = 2    /**< the ILP hit --ilp-time: LP relaxation and rounding */
} tc_ph_fiber_method;

/** A round's time, split as in the paper's Figs. 8-9 (seconds).  Their sum is the time. */
typedef struct tc_ph_breakdown {
    double latency;     /**< alpha of one hop */
    double bandwidth;   /**< beta x bytes of the largest pair, uncontended */
    double congestion;  /**< extra beta x bytes where pairs share a link: (c - 1) beta w when uniform */
    double dilation;    /**< extra alpha of multi-hop routes: (d - 1) alpha when uniform */
    double reconfig;    /**< r when the fabric is reconfigured before the round */
} tc_ph_breakdown;

/** Sum of the parts of a breakdown. */
double tc_ph_breakdown_sum(const tc_ph_breakdown *b);
/** Add b's parts to a's. */
void tc_ph_breakdown_add(tc_ph_breakdown *a, const tc_ph_breakdown *b);

/**
 * One round of the photonic plan: a schedule step, or a part of one when the step needs more circuits at
 * an NPU than it has transmitters or receivers (sub-rounds, PCCL §4.2).  Arrays are in tc_sched_photonic.
 */
typedef struct tc_ph_round {
    int step;           /**< the schedule step whose transfers this round carries */
    int sub, n_sub;     /**< sub-round sub of n_sub (0 of 1 when the step is not split) */
    int kind;           /**< tc_ph_kind */
    int which;          /**< fallback index, or round index for TC_PH_OWN (0 for TC_PH_INITIAL) */
    int reconfig;       /**< 1: the fabric is reconfigured to this topology before the round */
    int n_pairs;        /**< communicating (src, dst) pairs of the round */
    int pair_off;       /**< split steps only: 2 n_pairs ints (src, dst) in `ints`; -1 otherwise */
    int congestion;     /**< c: most pairs routed over one link */
    int dilation;       /**< d: most hops of one pair's route */
    double bytes;       /**< bytes of the largest pair */
    tc_ph_breakdown t;  /**< the round's time */
    int circ_off, n_circ; /**< the circuits set up before the round (reconfig only) */
    int fiber_method;   /**< tc_ph_fiber_method */
    int fibers;         /**< fibers in use over all server pairs after routing */
    int fiber_z;        /**< most circuits over one server pair (Alg. 4's objective z) */
    double fiber_lp;    /**< the LP relaxation's lower bound on fiber_z */
    int fib_off, n_fib; /**< n_fib triples (server a < server b, fibers used) in `ints` */
} tc_ph_round;

/** One optical circuit from NPU src to NPU dst (PCCL §4.2, App. B). */
typedef struct tc_ph_circuit {
    int src, dst;
    int wavelength;     /**< 0-based wavelength, -1 when no mesh or grid is modelled */
    int srv_off, n_srv; /**< the servers it crosses, src's first, in `ints` */
    int fib_off;        /**< n_srv - 1 fiber indices in `ints`, one per server hop */
    int mzi_off, n_mzi; /**< the MZIs it crosses in `ints` (global ids, see photonic.h) */
} tc_ph_circuit;

/** The photonic plan of a schedule: fabric, fallback set, rounds, circuits.  Flat, no pointers between. */
typedef struct tc_sched_photonic {
    double reconfig;            /**< r, s */
    double alpha, beta;         /**< cost of one circuit: s, s/byte */
    int tx, rx, wavelengths, mzi, grid_rows, grid_cols, fibers; /**< the fabric (tc_photonic) */
    int n_fallbacks;
    char **fallbacks;           /**< names of S ("torus-8x16", ...) */
    tc_ph_breakdown total;      /**< summed over rounds */
    tc_ph_breakdown fixed;      /**< the schedule on G0 without reconfiguration (Alg. 2 per step) */
    int n_reconfigs;
    int n_replanned;            /**< configurations the fabric could not route, left out and planned again
                                     (issue 22; said in the summary, not stored in files) */
    int n_rounds;
    tc_ph_round *rounds;
    int n_circuits;
    tc_ph_circuit *circuits;
    int n_ints;
    int *ints;                  /**< pairs, server paths, fiber indices, MZI paths, fiber counts */
} tc_sched_photonic;

void tc_sched_photonic_free(tc_sched_photonic *p);
/** Deep copy. */
tc_status tc_sched_photonic_clone(const tc_sched_photonic *p, tc_sched_photonic **out);

#endif
