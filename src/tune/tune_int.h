/* Internal helpers of the tune module (src/tune/). */
#ifndef TACOS_TUNE_INT_H
#define TACOS_TUNE_INT_H

#include "tacos/tune.h"

/* libsvm (libsvm-dev): Debian installs it as <libsvm/svm.h>, other systems as <svm.h> */
#if defined(__has_include)
#if __has_include(<libsvm/svm.h>)
#include <libsvm/svm.h>
#else
#include <svm.h>
/** The same, every launch kept: runs[i * repeats + r] for size i and launch r (o->repeats launches). */
tc_status tc_tune_measure_runs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                               int n_sizes, const tc_tune_opts *o, double *runs);

#endif
#else
#include <libsvm/svm.h>
/** The same, every launch kept: runs[i * repeats + r] for size i and launch r (o->repeats launches). */
tc_status tc_tune_measure_runs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                               int n_sizes, const tc_tune_opts *o, double *runs);

#endif

#include <stddef.h>
#include <stdint.h>

#define TC_FNV_OFFSET 0xcbf29ce484222325ull
/** FNV-1a 64 of n bytes, continuing from h (start with TC_FNV_OFFSET). */
static inline uint64_t tc_tune_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/** Check the text of a libsvm model file (path names it in diagnostics) before svm_load_model reads it:
 *  an RBF C-SVC of at most n_classes classes over features 1..n_features, every count consistent with
 *  the lines present and every number finite (src/tune/svmcheck.c). */
tc_status tc_tune_svm_check(tc_ctx *ctx, const char *path, const char *text, size_t len, int n_classes,
                            int n_features);

/** Number of registry entries. */
int tc_tune_registry_size(void);

/** Generate, check and simulate one algorithm (registry index) at go->size; diagnostics go to a buffer
 *  and the first of them into note.  *time on success; *res when res is not NULL. */
tc_status tc_tune_price(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                        const tc_sim_opts *so, int algo, double *time, tc_sim_result **res, char *note,
                        size_t note_n);


/** Replay the plans of one algorithm with tacos-run (measure.c): times[i] for sizes[i], in seconds. */
tc_status tc_tune_measure(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                          int n_sizes, const tc_tune_opts *o, double *times);

/** The same, every launch kept: runs[i * repeats + r] for size i and launch r (o->repeats launches). */
tc_status tc_tune_measure_runs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                               int n_sizes, const tc_tune_opts *o, double *runs);

#endif
