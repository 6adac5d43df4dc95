/*
 * Fuzz harnesses of tacosc (make fuzz, man 1 tacosc FILES): one per reader of untrusted input, each taking
 * the bytes of a file and running what tacosc runs on such a file.  They are built twice: with libFuzzer
 * (tests/fuzz/entry.c, one program per harness, clang -fsanitize=fuzzer) and into the Check suite
 * tests/check_fuzz.c, which replays every file of tests/fuzz/corpus/NAME/ and runs the boundary sweep in
 * `make check`.  A harness returns 0; a crash, a sanitizer report, or a broken invariant (abort) is a bug.
 */
#ifndef TACOS_FUZZ_H
#define TACOS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** Topology XML: read, apply the default costs, unwind switches, write back and read again. */
int tc_fuzz_topo(const uint8_t *data, size_t size);
/** Cost file: read, then apply to a small topology whose links use the classes it names. */
int tc_fuzz_costs(const uint8_t *data, size_t size);
/** JSON schedule: read, check by symbolic execution, write back and read again. */
int tc_fuzz_json(const uint8_t *data, size_t size);
/** MSCCL XML: read, verify, lower into the schedule IR and check it. */
int tc_fuzz_msccl(const uint8_t *data, size_t size);
/** Tuning data (CSV): read, train the model of each collective (small data), ask it for picks. */
int tc_fuzz_tune(const uint8_t *data, size_t size);
/** A sparse message ("N TYPE" line, then the bytes): decode, add, re-encode, decode back. */
int tc_fuzz_sparse(const uint8_t *data, size_t size);
/** A libsvm model file: the structural check, then libsvm's own loader and a prediction. */
int tc_fuzz_svm(const uint8_t *data, size_t size);
/** A topology with <photonic>: its fabric, and random circuits within tx/rx routed through it. */
int tc_fuzz_photonic(const uint8_t *data, size_t size);
/** A bundle description and the directory it lands in: tc_tune_bundle_write, then its invariants. */
int tc_fuzz_bundle(const uint8_t *data, size_t size);

/** Topology import (NCCL/RCCL dump, nvidia-smi or rocm-smi text): import, compose two servers, unwind, write. */
int tc_fuzz_import(const uint8_t *data, size_t size);

/** MSCCL++ execution plan: read, verify, price, write and read back the same. */
int tc_fuzz_mscclpp(const uint8_t *data, size_t size);

typedef struct tc_fuzz_harness {
    const char *name;                       /**< corpus folder tests/fuzz/corpus/NAME, dictionary NAME.dict */
    int (*fn)(const uint8_t *data, size_t size);
} tc_fuzz_harness;

/** The harnesses, in the order make fuzz runs them. */
static const tc_fuzz_harness tc_fuzz_harnesses[] = {
    {"topo", tc_fuzz_topo},   {"costs", tc_fuzz_costs}, {"json", tc_fuzz_json}, {"msccl", tc_fuzz_msccl},
    {"tune", tc_fuzz_tune},   {"sparse", tc_fuzz_sparse}, {"svm", tc_fuzz_svm},
    {"photonic", tc_fuzz_photonic}, {"bundle", tc_fuzz_bundle}, {"import", tc_fuzz_import},
    {"mscclpp", tc_fuzz_mscclpp},
};
/* counted from the table (a hand-kept 5 left the sparse harness out of make check) */
#define TC_FUZZ_N_HARNESSES ((int)(sizeof tc_fuzz_harnesses / sizeof tc_fuzz_harnesses[0]))

#endif
