/**
 * @file tune.h
 * The dispatcher (src/tune/): tuning data, a learned algorithm choice, `--algo auto` and MSCCL byte-range
 * bundles.  The learned dispatcher of the PCCL "Big Send-off" paper (§IV-C) for a compiler: no algorithm
 * wins everywhere, so measure or simulate them all, learn which wins where, and pick.
 *
 * Candidates: the registry's generators that serve the collective, or a subset (a bit mask over
 * tc_algo_registry indices).  Each is generated, checked and priced by the event simulation (tc_tune_eval:
 * what `tacosc compare` prints), or replayed by tacos-run under mpirun (source TC_TUNE_MEASURE).  A
 * generator that refuses an input (TC_ERR_UNSUPPORTED) is kept with its reason and never replaced.
 *
 * Data: one row per (topology, collective, size, algorithm) with its time (tc_tune_data; CSV in
 * man 5 tacosc-tune).  A sample is one (topology, collective, size); its label is the fastest algorithm,
 * ties going to the earlier registry entry.
 *
 * Model: one C-SVC per collective (libsvm, RBF kernel) on the features log2 bytes, log2 ranks, log2 nodes
 * and log2 ranks per node, each scaled to [-1, 1] over the training samples (svm-scale's convention).  A
 * seeded stratified 80/20 split; C and gamma from libsvm's grid (tools/grid.py: log2 C -5..15, log2 gamma
 * 3..-15, step 2) by 5-fold stratified cross-validation on the 80%; the held-out 20% scored by accuracy
 * and by the slowdown of mispredictions against the best algorithm.  Splits and folds are drawn with
 * tc_rng from ctx->seed (libsvm's svm_cross_validation shuffles with rand(), a global: cjlin1/libsvm
 * svm.cpp), so the same data and seed give the same model bytes.  A model is a directory: COLL.json (what
 * it was trained on, scaling, classes, scores, the checksum of COLL.svm) and COLL.svm (svm_save_model).
 *
 * Output: diagnostics through ctx; progress through a callback (tc_tune_progress_fn); libsvm's own
 * printing is silenced (svm_set_print_string_function).  Measuring runs `mpirun ... tacos-run` through the
 * shell with plans in a temporary directory that is removed afterwards.  Memory: the data rows, one
 * libsvm problem per training (samples x 5 nodes) and the candidates' simulation results while kept.
 */
#ifndef TACOS_TUNE_H
#define TACOS_TUNE_H

#include "tacos/algo.h"
#include "tacos/sim.h"
#include "tacos/msccl.h"

/** Network features of a topology (tc_tune_topo_id.net, tc_tune_topo_describe; CSV columns alpha_min_us ..
 *  cut_ratio): smallest and largest link alpha (s), smallest and largest link bandwidth and the smallest
 *  NPU injection bandwidth (B/s), diameter (hops), mean NPU out-degree, and the bandwidth crossing the
 *  rank-order halves (ranks < R/2 to the rest) over R/2 injection bandwidths (1: full bisection). */
enum { TC_TUNE_NET_ALPHA_MIN, TC_TUNE_NET_ALPHA_MAX, TC_TUNE_NET_BW_MIN, TC_TUNE_NET_BW_MAX, TC_TUNE_NET_INJ_BW,
       TC_TUNE_NET_DIAMETER, TC_TUNE_NET_DEGREE, TC_TUNE_NET_CUT, TC_TUNE_NET };
/**
 * Features of a sample (features.c, names in tc_tune_feature_names): the paper's message size and GPU count
 * (log2 bytes, log2 ranks), the server shape (log2 nodes, log2 ranks per node), and the network,
 * normalised so that a model carries over to rank counts and topologies it has not seen: log2 of the
 * bytes per rank over the latency-bandwidth product (alpha_min x injection bandwidth), diameter / ranks,
 * log2 degree, the cut ratio, log2 of the link bandwidth spread (max / min) and of the alpha spread.
 */
#define TC_TUNE_FEATURES 10
#define TC_TUNE_FEATURES_STR "10"
/** Names of the features ("log2 bytes", ...), in order. */
extern const char *const tc_tune_feature_names[TC_TUNE_FEATURES];
/** Folds of the cross-validation, and the share of the samples held out for the test (percent). */
#define TC_TUNE_FOLDS 5
#define TC_TUNE_TEST_PERCENT 20
/** Fewest samples (sizes x topologies) of one collective a model is trained on. */
#define TC_TUNE_MIN_SAMPLES 10
/** Format name and version written into every model's COLL.json. */
#define TC_TUNE_MODEL_FORMAT "tacosc-model"
#define TC_TUNE_MODEL_VERSION 2

/* ------------------------------------------------------------------------------------------------ */
/* Candidates                                                                                        */

/** A set of registry algorithms: bit i is tc_algo_registry[i] (0 = every one). */
typedef uint64_t tc_tune_algos;

/** Parse "ring,tacos,..." into a set (TC_ERR_USAGE naming an unknown algorithm). */
tc_status tc_tune_algos_parse(tc_ctx *ctx, const char *list, tc_tune_algos *out);
/** Index of a registry entry by name, -1 when unknown. */
int tc_tune_algo_index(const char *name);

/** Room for a candidate's note: a pipeline error with its location, whole (tc_compile_diag's message). */
#define TC_TUNE_NOTE_MAX 1400

/** One candidate priced at one size. */
typedef struct tc_tune_cand {
    int algo;             /**< registry index */
    tc_status status;     /**< TC_OK, TC_ERR_UNSUPPORTED (refused: note says why) or another error */
    char note[TC_TUNE_NOTE_MAX]; /**< the refusal or failure, "file:line: " and its message (no "error: ") */
    double time;          /**< simulated time, s (status TC_OK) */
    tc_sim_result *res;   /**< the simulation, when kept (keep), else NULL; owned */
} tc_tune_cand;

/** The chunks per rank a candidate is priced and written with: go->chunks when >= 1, else compile's
 *  default (the --chunks auto search for tacos, 1 for the other generators).  tc_tune_eval, the
 *  dispatcher, bundle and compare all price through it, so their times are those of the file compile
 *  writes. */
tc_status tc_tune_chunks(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go, int algo,
                         int *chunks);

/**
 * Generate, check and simulate every candidate of `coll` in `algos` on `topo` (indexed, unwound) with
 * go (its size) and so.  *out has one entry per candidate that serves the collective, sorted: priced
 * ones first by time (ties by registry order), then the rest in registry order.  Returns an error only
 * when it cannot run at all (no memory); per-candidate failures are in the entries, their diagnostics
 * captured, not reported.
 */
tc_status tc_tune_eval(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                       const tc_sim_opts *so, tc_tune_algos algos, int keep, tc_tune_cand **out, int *n_out);
void tc_tune_cands_free(tc_tune_cand *c, int n);

/* ------------------------------------------------------------------------------------------------ */
/* Topologies and sizes                                                                              */

/** What a model knows of a topology: its name, a fingerprint of its links (after costs and unwinding)
 *  and servers, and the shape features. */
typedef struct tc_tune_topo_id {
    char *name;             /**< owned where stored in data or models */
    uint64_t fingerprint;   /**< FNV-1a 64 of npus, every link (src, dst, alpha, beta) in order and node ids */
    int ranks, nodes, rpn;  /**< npus; servers (1 without <nodes>); npus of the largest server */
    int has_net;            /**< net[] is known (data of tacosc 2026-11 and later) */
    double net[TC_TUNE_NET]; /**< network features (TC_TUNE_NET_*) */
} tc_tune_topo_id;
/** The id of an indexed, unwound topology (name borrowed from topo), without its network features. */
void tc_tune_topo_id_get(const tc_topo *topo, tc_tune_topo_id *out);
/** The id with its network features (features.c): what data, models and the dispatcher use. */
void tc_tune_topo_describe(const tc_topo *topo, tc_tune_topo_id *out);
/** Unscaled features of a sample of topology id at `bytes` (TC_TUNE_FEATURES values).  Without network
 *  features (old data) the network ones are those of the embedded default costs on a fully connected
 *  network: alpha 0.5 us, 50 GB/s, diameter 1, degree R-1, cut 1. */
void tc_tune_features_get(const tc_tune_topo_id *id, uint64_t bytes, double x[TC_TUNE_FEATURES]);

/**
 * Parse a size sweep "LO:HI[:N]" (K/M/G suffixes; N points per doubling, default 4): LO x 2^(i/N)
 * rounded to a byte, i = 0, 1, ... while at most HI (duplicates after rounding dropped).  TC_ERR_USAGE
 * with a message naming --sizes.  *out is malloc'd.
 */
tc_status tc_tune_sizes_parse(tc_ctx *ctx, const char *spec, uint64_t **out, int *n_out);

/* ------------------------------------------------------------------------------------------------ */
/* Tuning data                                                                                       */

typedef enum { TC_TUNE_SIM = 0, TC_TUNE_MEASURE = 1 } tc_tune_source;
/** "sim", "measure". */
const char *tc_tune_source_name(tc_tune_source s);

/** One row: a candidate's time at one size on one topology. */
typedef struct tc_tune_row {
    tc_coll coll;
    uint64_t bytes;
    int algo;       /**< registry index */
    double time;    /**< seconds */
    int topo;       /**< index into tc_tune_data.topos */
    int chunks;     /**< chunks per rank the plans were made with */
    int source;     /**< tc_tune_source */
    int line;       /**< CSV line (0 when generated) */
} tc_tune_row;

/** Rows and the topologies they refer to.  Owns its strings. */
typedef struct tc_tune_data {
    int n_rows, cap_rows;
    tc_tune_row *rows;
    int n_topos, cap_topos;
    tc_tune_topo_id *topos;
    int *topo_hash, cap_hash; /**< index of topos by name (data.c; -1 free slots) */
    int n_notes, cap_notes;
    char **notes;       /**< one line each: candidates that refused ("bucket on ring-64 (allreduce): ...") */
    char *file;         /**< the CSV it was read from, NULL when generated */
    uint64_t checksum;  /**< FNV-1a 64 of that file's bytes (0 when generated) */
} tc_tune_data;

tc_status tc_tune_data_create(tc_tune_data **out);
void tc_tune_data_free(tc_tune_data *d);
/** Index of topology id in d (added, name copied, when new). */
tc_status tc_tune_data_topo(tc_tune_data *d, const tc_tune_topo_id *id, int *index);
tc_status tc_tune_data_add(tc_tune_data *d, const tc_tune_row *r);
tc_status tc_tune_data_note(tc_tune_data *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Called as work is done: `units` more (size, algorithm) evaluations finished. */
typedef void (*tc_tune_progress_fn)(void *user, double units);

/** Options of tc_tune_collect. */
typedef struct tc_tune_opts {
    tc_gen_opts gen;          /**< chunks, root, unwind, ... (size is set per point) */
    tc_tune_algos algos;      /**< candidates (0 = every generator of the collective) */
    tc_tune_source source;
    const char *mpirun;       /**< measure: the launcher, a shell command line ("mpirun"); `-np N` follows */
    const char *tacos_run;    /**< measure: the tacos-run program */
    int repeats;              /**< measure: launches per plan, the median kept (default 3) */
    int iters;                /**< measure: timed iterations per launch, their mean (default 5) */
    tc_tune_progress_fn progress;
    void *progress_user;
} tc_tune_opts;
void tc_tune_opts_init(tc_tune_opts *o);

/**
 * Time every candidate of `coll` in o->algos at every size on `topo` (indexed, unwound) and add the rows
 * to d (candidates that refuse add a note instead).  sim: the event simulation of each checked plan.
 * measure: the plans lowered to MSCCL XML (target tacos-run, in place); consecutive sizes whose programs
 * are identical share a plan, replayed with `MPIRUN -np R TACOS_RUN PLAN -b LO -e HI -f F -n ITERS -w 1
 * -c 0 --mode in-place` o->repeats times; each size takes the row tacos-run measured at the largest size
 * not above it (tacos-run rounds sizes down to whole chunks) and the median over the launches.
 * Errors: a generator failing for another reason than TC_ERR_UNSUPPORTED, or tacos-run failing (its
 * exit status and last output line are reported).
 */
tc_status tc_tune_collect(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const uint64_t *sizes, int n_sizes,
                          const tc_tune_opts *o, tc_tune_data *d);

/** Write the CSV: comment lines (tool, notes), the header, one row per line in d's order. */
tc_status tc_tune_data_write(tc_ctx *ctx, const tc_tune_data *d, FILE *f);
/**
 * Read a CSV written by tc_tune_data_write (or by hand in that format).  Every bad row is an error at
 * its line: a wrong number of fields, an unknown collective or algorithm, an algorithm that does not
 * generate the collective, a size, rank or chunk count that is not a positive integer, a time that is
 * negative, zero or not a number, a duplicate row, a topology whose fingerprint or shape differs between
 * rows, a collective whose rows mix sources or chunk counts.
 */
tc_status tc_tune_data_read(tc_ctx *ctx, const char *path, tc_tune_data **out);
/** The same on len bytes of text (diagnostics name `path`). */
tc_status tc_tune_data_read_mem(tc_ctx *ctx, const char *path, const char *text, size_t len, tc_tune_data **out);

/* ------------------------------------------------------------------------------------------------ */
/* Model                                                                                             */

/** Scores of a model on its held-out samples. */
typedef struct tc_tune_score {
    int n;                  /**< samples scored */
    int correct;            /**< predicted the best algorithm */
    double accuracy;        /**< correct / n (1 when n is 0) */
    double mean_slowdown;   /**< mean of time(predicted) / time(best) - 1 over the mispredictions (0: none) */
    double worst_slowdown;  /**< the largest of those */
    double mean_slowdown_all; /**< the same mean over every scored sample */
    int no_time;            /**< mispredictions of an algorithm without a time there (not in the means) */
} tc_tune_score;

/** A model scored on a set of samples beside its baselines: the oracle (the best algorithm of each
 *  sample: slowdown 0), always the commonest winner of its training samples, always tacos. */
typedef struct tc_tune_report {
    tc_tune_score model, common, tacos; /**< tacos.n 0: no tacos times in the data */
    int common_algo;        /**< registry index of the commonest winner (the model's training samples) */
    int distinct;           /**< distinct algorithms the model predicted on these samples */
    int n_topos;            /**< topologies of the samples */
} tc_tune_report;
/** Fewest held-out samples whose accuracy the training report trusts (fewer: a warning). */
#define TC_TUNE_MIN_TEST 30
/** Most training samples the C, gamma grid cross-validates on (a seeded subsample beyond: libsvm's
 *  training is superlinear, 1000 samples took 97 s over the 110 x 5 trainings); the final model is trained
 *  on every training sample. */
#define TC_TUNE_GRID_SAMPLES 300

/** A trained or loaded model of one collective.  Owns everything it points to. */
typedef struct tc_tune_model {
    tc_coll coll;
    int n_classes;
    int *classes;             /**< class i = registry index classes[i] (libsvm label i) */
    int n_cands;
    int *cands;               /**< every algorithm with times in the data (registry indices) */
    int runner_up;            /**< registry index most often second best in the data, -1 none */
    int n_topos;
    tc_tune_topo_id *topos;   /**< the topologies it was trained on */
    int chunks;
    int source;               /**< tc_tune_source */
    uint64_t min_bytes, max_bytes; /**< sizes of the data */
    double scale_min[TC_TUNE_FEATURES], scale_max[TC_TUNE_FEATURES];
    double C, gamma;          /**< chosen by cross-validation */
    double cv_accuracy;       /**< its mean cross-validation accuracy */
    double cv_slowdown;       /**< and its mean slowdown over every cross-validated prediction */
    int n_samples, n_train;
    tc_tune_score test;       /**< on the held-out samples */
    tc_tune_report held;      /**< the held-out samples with the baselines (trained models only) */
    int net;                  /**< trained with network features: serves topologies it was not trained on */
    int common;               /**< registry index of the commonest winner of the training samples */
    int grid_samples;         /**< training samples the grid cross-validated on (< n_train: subsampled) */
    uint64_t seed;
    char *data_file;          /**< the CSV it was trained on */
    uint64_t data_checksum;
    uint64_t svm_checksum;    /**< FNV-1a 64 of COLL.svm as written (set by tc_tune_model_write_svm) */
    char *dir;                /**< where it was loaded from, NULL when trained */
    void *svm;                /**< libsvm's struct svm_model (owned) */
    void *nodes;              /**< the training vectors a trained svm points into (owned), else NULL */
} tc_tune_model;

void tc_tune_model_free(tc_tune_model *m);

/**
 * Train the model of `coll` from d (TC_ERR_INVALID when d holds fewer than TC_TUNE_MIN_SAMPLES samples
 * of it, naming how many).  Seeded by ctx->seed.
 */
tc_status tc_tune_train(tc_ctx *ctx, const tc_tune_data *d, tc_coll coll, tc_tune_model **out);

/**
 * Score m on every sample of its collective in d (another data set: topologies it was not trained on) with
 * the baselines; TC_ERR_INVALID when d has no sample of m's collective.  The model predicts from each
 * topology's features as --algo auto would.
 */
tc_status tc_tune_evaluate(tc_ctx *ctx, const tc_tune_model *m, const tc_tune_data *d, tc_tune_report *out);
/** Print a report: "LABEL N samples on T topologies: model accuracy ..% mean slowdown ..% worst ..%" and the
 *  baselines beside it, with a warning line when N < TC_TUNE_MIN_TEST or the model predicted one
 *  algorithm everywhere (no better than always that one). */
void tc_tune_report_print(FILE *f, const char *label, const tc_tune_report *r);

/** Write libsvm's model file to `path` (libsvm writes by path: pass the temporary file of an output) and
 *  record its checksum in m->svm_checksum. */
tc_status tc_tune_model_write_svm(tc_ctx *ctx, tc_tune_model *m, const char *path);
/** Write COLL.json: format, version, tool, seed, data file and checksum, topologies, scaling, classes,
 *  C, gamma, scores and the checksum of COLL.svm.  Deterministic. */
tc_status tc_tune_model_write_meta(tc_ctx *ctx, const tc_tune_model *m, FILE *f);
/** "DIR/COLL.json", "DIR/COLL.svm" into buf. */
const char *tc_tune_model_path(const char *dir, tc_coll coll, const char *ext, char *buf, size_t n);
/**
 * Load the model of `coll` from directory `dir`.  TC_ERR_UNSUPPORTED when dir has no model of coll (the
 * message lists the collectives it has), TC_ERR_PARSE / TC_ERR_INVALID for a damaged model (a checksum
 * that does not match COLL.svm is refused before libsvm reads it).
 */
tc_status tc_tune_model_load(tc_ctx *ctx, const char *dir, tc_coll coll, tc_tune_model **out);
/** TC_OK when m was trained on `topo` (same fingerprint) with `chunks` chunks per rank, or m has network
 *  features (m->net) and the chunks match: a topology it was not trained on gets a warning naming the
 *  features outside the trained ranges (a note when none is).  Otherwise TC_ERR_INVALID with a message
 *  saying what it was trained on. */
tc_status tc_tune_model_check(tc_ctx *ctx, const tc_tune_model *m, const tc_topo *topo, int chunks);
/** Features of id at bytes outside m's trained ranges (beyond 1e-9 of them), listed into buf ("log2 ranks 4
 *  (trained 2..3), ...", n bytes; "" when none); returns how many.  size_only: only the size features. */
int tc_tune_model_outside(const tc_tune_model *m, const tc_tune_topo_id *id, uint64_t bytes, int size_only,
                          char *buf, size_t n);
/** The model's pick at `bytes` on a topology of shape id: *best and *second (registry indices; second
 *  -1 when the model knows no other algorithm), ranked by the one-against-one votes of libsvm. */
void tc_tune_model_predict(const tc_tune_model *m, const tc_tune_topo_id *id, uint64_t bytes, int *best,
                           int *second);

/* ------------------------------------------------------------------------------------------------ */
/* Dispatcher                                                                                        */

/** What --algo auto chose and why. */
typedef struct tc_tune_choice {
    int algo;               /**< registry index of the choice */
    int runner_up;          /**< registry index, -1 when none */
    double time;            /**< simulated time of the choice (by simulation; 0 when a model chose) */
    double runner_up_time;  /**< simulated time of the runner-up, s (0 when none or it failed) */
    int by_model;           /**< 1: the model chose, 0: simulating the candidates */
    int n_candidates;       /**< simulated (by simulation) */
    int n_refused;          /**< of them, refused or failed */
    int outside;            /**< model: the size is outside the sizes it was trained on */
} tc_tune_choice;

/**
 * Choose the algorithm of `coll` at go->size on `topo`: by the model m (checked against topo first by
 * the caller with tc_tune_model_check), else by simulating every candidate and taking the fastest.  The
 * runner-up is the model's second vote (a one-class model: the algorithm most often second in its data)
 * or the second fastest, simulated either way.  TC_ERR_UNSUPPORTED when no candidate can serve the input.
 */
tc_status tc_tune_choose(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                         const tc_tune_model *m, tc_tune_choice *out);

/* ------------------------------------------------------------------------------------------------ */
/* Bundles                                                                                           */

/** A byte range the runtime serves with one plan: min_bytes <= bytes <= max_bytes (0: no upper limit). */
typedef struct tc_tune_range {
    uint64_t min_bytes, max_bytes;
    int algo;               /**< registry index */
    uint64_t plan_bytes;    /**< the size its plan is generated for (a sampled size inside the range) */
    double time;            /**< the plan's simulated time at plan_bytes (0 when not simulated) */
} tc_tune_range;

/**
 * Ranges of segments: segment i covers sizes from starts[i] up to starts[i + 1] - 1 (the last one without
 * an upper limit) with algorithm algos[i]; starts[0] must be 0 and starts strictly increasing
 * (TC_ERR_INVALID otherwise).  Adjacent segments of one algorithm merge.  `out` holds n entries; *n_out
 * is the number of ranges.  Every size from 0 up is in exactly one range.
 */
tc_status tc_tune_ranges_build(const uint64_t *starts, const int *algos, int n, tc_tune_range *out, int *n_out);

/**
 * The ranges of a bundle: the winner (by the model m, else by simulating the candidates in `algos`) at
 * every sampled size; between two sizes with different winners the boundary is bisected (to the byte with
 * a model, to 1/64 of the size by simulating the two winners); plan_bytes is the sample nearest the
 * middle (log scale) of each range, and each range's plan is simulated there.  *out is malloc'd.
 */
tc_status tc_tune_bundle_ranges(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                                const tc_tune_model *m, tc_tune_algos algos, const uint64_t *sizes,
                                int n_sizes, tc_tune_range **out, int *n_out);

/* ------------------------------------------------------------------------------------------------ */
/* The vendor's own algorithms (vendor.c)                                                            */

/**
 * NCCL's own predicted time of coll at bytes on topo, by its cost model (NVIDIA/nccl src/graph/tuning.cc:
 * ring and tree, protocols LL and Simple, NCCL's latency tables, bandwidth from the topology's links): the
 * fastest of them into *time (s) and its name ("NCCL ring/Simple") into what.  0 when NCCL has no model
 * of the collective (all-to-all, gather, scatter) or the topology gives no bandwidth.
 */
int tc_tune_vendor_time(const tc_topo *topo, tc_coll coll, uint64_t bytes, double *time, char *what, size_t n);
/** The same for library lib: 0 NCCL, 1 RCCL (ROCm/rccl src/graph/tuning.cc: its own tables). */
int tc_tune_vendor_time_of(int lib, const tc_topo *topo, tc_coll coll, uint64_t bytes, double *time, char *what,
                           size_t n);
/**
 * Leave uncovered the sizes where the library's own algorithm (lib: 0 NCCL, 1 RCCL) is predicted to beat
 * the plan of their range (the
 * runtime falls back to it where no file serves a call): *ranges (malloc'd, from tc_tune_bundle_ranges)
 * is replaced by the covered ranges, in order, with gaps; a note per gap says what wins there and by how
 * much.  Boundaries are bisected to 1/64 of the size.  When NCCL wins at every sample the ranges are kept
 * (with a warning).  *n_uncovered: the gaps.
 */
tc_status tc_tune_vendor_uncover(tc_ctx *ctx, int lib, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                                 const uint64_t *sizes, int n_sizes, tc_tune_range **ranges, int *n_ranges,
                                 int *n_uncovered);
/**
 * --algo auto against the library's own algorithm (lib: 0 NCCL, 1 RCCL): when the library's built-in
 * choice is predicted (tc_tune_vendor_time_of) to beat the plan s, whose time is s->time at s->size_bytes
 * on topo, a warning says what wins, both times and by how much, that the plan is written anyway (an
 * MSCCL file cannot hold the library's algorithm: a call no file serves runs it), and that `tacosc
 * bundle` leaves such sizes uncovered; "; NCCL ring/Simple predicted faster (...)" is appended to line
 * (n bytes; line may be NULL).  Returns 1 then, 0 when the plan is predicted to win, the library has no model of the
 * collective or s has no time.
 */
int tc_tune_vendor_note(tc_ctx *ctx, int lib, const tc_topo *topo, const tc_sched *s, char *line, size_t n);

/* ------------------------------------------------------------------------------------------------ */
/* Writing a bundle (bundle_write.c)                                                                 */

/** The folder of DIR the runtimes read (MSCCL_ALGO_DIR, or msccl-algorithms/ beside the library). */
#define TC_BUNDLE_ALGO_DIR "msccl-algorithms"
/** The first line of every README tacosc writes into a bundle (a README without it is never replaced). */
#define TC_BUNDLE_README_HEAD "MSCCL algorithm bundle written by tacosc"

typedef struct tc_tune_bundle_opts {
    tc_coll coll;
    tc_gen_opts gen;               /**< chunks, root, unwind of every plan (size: each range's plan_bytes) */
    tc_msccl_lower_opts lower;     /**< target, channels, protocol, placement (min/max bytes: each range's) */
    tc_tune_algos algos;           /**< candidates for a range whose algorithm cannot be written (0: every one) */
    const char *how;               /**< how the ranges were chosen, for the README */
    int mscclpp;                   /**< MSCCL++ plans into DIR/mscclpp-plans/ (lower: unused) */
} tc_tune_bundle_opts;

/** The folder of DIR an MSCCL++ bundle's plans go to. */
#define TC_BUNDLE_MSCCLPP_DIR "mscclpp-plans"

void tc_tune_bundle_opts_init(tc_tune_bundle_opts *o);
/** The limits the bundle's files are verified against: lo's target, its --max-channels when given
 *  (TC_ERR_USAGE above what the target allows at all). */
tc_status tc_tune_bundle_limits(tc_ctx *ctx, const tc_msccl_lower_opts *lo, tc_msccl_limits *lim);

/** The file name of range r: COLL[-outofplace|-both]-nRANKS-MIN-MAX.xml (MAX "inf" for no limit); for an
 *  MSCCL++ bundle (lo NULL) COLL-nRANKS-MIN-MAX.json. */
void tc_tune_bundle_file_name(char *buf, size_t n, tc_coll coll, const tc_msccl_lower_opts *lo, int ranks,
                              const tc_tune_range *r);

/**
 * Write the bundle of ranges r[0..nr) for topo into out_dir (created): each range's plan made by the
 * compile pipeline and lowered for o->lower's target (a range whose algorithm cannot be written gets the
 * fastest other candidate that can, with a warning; r[k].algo and r[k].time then name what is written),
 * every file read back and verified, DIR/README written.  Files of an earlier bundle of the same
 * collective, rank count and placement are replaced; another file that does not load or serves the same
 * calls is an error; links where the bundle writes and a README tacosc did not write are refused.  The
 * bundle is staged in DIR and renamed into place: on any error DIR is left as it was.
 * o->mscclpp: MSCCL++ plans (each with its range as min/max_message_size, verified at its planned size)
 * into DIR/mscclpp-plans/ with a README there; files of an earlier bundle of the same collective and rank
 * count are replaced, others kept.
 */
tc_status tc_tune_bundle_write(tc_ctx *ctx, const char *out_dir, const tc_topo *topo, const tc_tune_bundle_opts *o,
                               tc_tune_range *r, int nr);

#endif
