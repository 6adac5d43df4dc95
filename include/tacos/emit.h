/**
 * @file emit.h
 * Writers and readers of schedules (src/emit/).  Emitters take a const IR and a FILE *.
 */
#ifndef TACOS_EMIT_H
#define TACOS_EMIT_H

#include "tacos/ir.h"

#define TC_JSON_FORMAT "tacosc-schedule"
#define TC_JSON_VERSION 1
#define TC_CIRCUITS_FORMAT "tacosc-circuits"

/** Write the JSON schedule (format, version, tool version, seed, ... transfers). Deterministic. */
tc_status tc_emit_json_write(tc_ctx *ctx, const tc_sched *s, FILE *f);
/** Write the one round of `p` as a circuit plan (`tacosc route -o`, man 5 tacosc-schedule, CIRCUIT PLANS). */
tc_status tc_emit_circuits_write(tc_ctx *ctx, const char *topo_name, const tc_sched_photonic *p, FILE *f);
/** Read a JSON schedule written by tc_emit_json_write (diagnostics name `path`). */
tc_status tc_emit_json_read(tc_ctx *ctx, const char *path, tc_sched **out);
tc_status tc_emit_json_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_sched **out);
/** The 1-based line of the top-level key `key` of the JSON object text buf (0 when it has none): where a
 *  reader that takes a cJSON tree (which keeps no lines) points its diagnostics. */
int tc_json_key_line(const char *buf, size_t len, const char *key);

/** Output formats known to the CLI. */
typedef enum { TC_FMT_AUTO = 0, TC_FMT_JSON, TC_FMT_MSCCL, TC_FMT_SVG, TC_FMT_MSCCLPP } tc_format;
/** Format from a file name's extension (.json, .xml); TC_FMT_AUTO when unknown. */
tc_format tc_format_from_path(const char *path);
tc_status tc_format_parse(const char *s, tc_format *out);

/** The format of a plan file by content: JSON when its first non-blank byte (after an optional UTF-8 byte
 *  order mark) is `{` or `[` (TC_FMT_MSCCLPP when its first MiB makes it an MSCCL++ plan, tc_mscclpp_sniff),
 *  else MSCCL XML. */
tc_status tc_sched_sniff(tc_ctx *ctx, const char *path, tc_format *out);
/** Read any schedule file: JSON, MSCCL XML or an MSCCL++ plan (by content).  MSCCL and MSCCL++ files are
 *  turned into the IR (their data movements; an MSCCL++ plan's chunk size is 1 byte until priced at a size). */
tc_status tc_sched_load(tc_ctx *ctx, const char *path, tc_sched **out);
/** What tacosc verify proves of a schedule in the IR without a runtime target: the checker (the one-chunk-per-
 *  link test but for te-ccl plans, link ids against topo when given) and its sparse formats.  name: for
 *  messages (the file, whose lines the transfers record). */
tc_status tc_sched_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *name);
/** tc_sched_load of a file that must compute its collective: JSON through tc_sched_verify, MSCCL XML through
 *  tc_msccl_verify under tacos-run's limits, MSCCL++ through tc_mscclpp_verify, each file read once.
 *  *refused = 1 when the file reads but fails them (the checks said why). */
tc_status tc_sched_load_verified(tc_ctx *ctx, const char *path, tc_sched **out, int *refused);

#endif
