/* Subcommands of the tacosc command line; each returns the process exit status (0 ok, 1 error, 2 usage). */
#ifndef TACOS_CLI_H
#define TACOS_CLI_H

#include "tacos/ir.h"

int tc_cli_compile(int argc, char **argv); /* tacosc TOPO.xml --collective C ... */
int tc_cli_topo(int argc, char **argv);    /* tacosc topo KIND DIMS ... */
int tc_cli_topo_import(int argc, char **argv, int compose); /* tacosc topo import FILE | compose TOPO (cmd_import.c) */
int tc_cli_info(int argc, char **argv);    /* tacosc info TOPO.xml ... */
int tc_cli_verify(int argc, char **argv);  /* tacosc verify PLAN ... */
int tc_cli_sim(int argc, char **argv);     /* tacosc sim PLAN TOPO ... */
int tc_cli_compare(int argc, char **argv); /* tacosc compare TOPO ... */
int tc_cli_route(int argc, char **argv);   /* tacosc route TOPO --circuits F | --random N ... */
int tc_cli_tune(int argc, char **argv);    /* tacosc tune TOPO... -c C -o DATA.csv | --train DATA.csv -o DIR */
int tc_cli_bundle(int argc, char **argv);  /* tacosc bundle TOPO -c C -o DIR */

/** Read a topology, apply a cost file (may be NULL), give its switches the model switch_model (see
 *  tc_cli_load_raw) and unwind them (degree 0 = each switch's own; switches of model node and multicast
 *  become vertices): the topology every plan's link ids refer to.  Shared by every subcommand.  A degree given for a
 *  topology without switches has no effect and draws a warning. */
tc_status tc_cli_load_topo(tc_ctx *ctx, const char *topo, const char *costs, int unwind, int switch_model,
                           tc_topo **out);
/** The same without unwinding: the topology as declared (switches kept), with its costs applied.
 *  switch_model: 0 each switch's own model (the file's), else 1 + tc_switch_model for every switch (the
 *  --switch-model option; a warning when the topology has no switches); -(1 + tc_switch_model) the same as
 *  a default, without the warning (--link-model te-ccl's multicast switches). */
tc_status tc_cli_load_raw(tc_ctx *ctx, const char *topo, const char *costs, int switch_model, tc_topo **out);
/** Warn when --unwind (degree `unwind` > 0, or -1 for auto) has nothing to unwind in t as read: no switches,
 *  or every switch kept as a vertex (model node or multicast). */
void tc_cli_warn_unwind(tc_ctx *ctx, const char *path, const tc_topo *t, int unwind);
/** Parse --switch-model's value into 1 + tc_switch_model (a usage error otherwise). */
tc_status tc_cli_parse_switch_model(tc_ctx *ctx, const char *s, int *out);
/** Parse --link-model's value into 1 + tc_link_model (a usage error otherwise). */
tc_status tc_cli_parse_link_model(tc_ctx *ctx, const char *s, int *out);

/** Parse the decimal integer value of option --opt within [lo, hi] (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_int(tc_ctx *ctx, const char *opt, const char *s, long lo, long hi, int *out);

/** Print "<indent>bound B (which), efficiency E" and "<indent>TACOS §V-A ideal I, ratio R" for a plan
 *  taking `time`; nothing for a bound of 0 (not computed). */
struct tc_bound;
void tc_cli_print_bound(const struct tc_bound *b, double time, const char *indent);
/** Report a usage error in one line, `tacosc: error: MESSAGE (see 'tacosc CMD --help')` (cmd NULL: the main
 *  command), and return the exit status 2. */
int tc_cli_usage(tc_ctx *ctx, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct option;
/** The highest option code tc_cli_getopt tracks in `seen` (short options and codes from 256 up). */
#define TC_CLI_MAX_OPT 320
/**
 * getopt_long for a subcommand, with one-line usage errors: an unknown option, a missing value, and an
 * option given twice (unless its short letter is in `repeatable`; seen holds TC_CLI_MAX_OPT zeroed flags,
 * or is NULL) are reported and give -2; the end of the options gives -1; otherwise the option code.
 */
int tc_cli_getopt(tc_ctx *ctx, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *lo, unsigned char *seen, const char *repeatable);
/** "--name" of the long option with code val in lo (else "-c"), into buf. */
const char *tc_cli_opt_name(const struct option *lo, int val, char *buf, size_t n);
/** Usage error when --size gives a chunk less than one byte on n_ranks ranks with `chunks` per rank. */
tc_status tc_cli_check_size(tc_ctx *ctx, uint64_t size, tc_coll coll, int n_ranks, int chunks);
/** The output directory of -o (`what` it holds, "a model"): made when missing (one level), a usage error
 *  when it is something else. */
tc_status tc_cli_make_dir(tc_ctx *ctx, const char *dir, const char *what);
struct tc_msccl_lower_opts;
/** The MSCCL options of the main command and tacosc bundle, `name` without its dashes: "target" (nccl,
 *  rccl or tacos-run), "max-channels" (1..128) or "proto" (Simple, LL, LL128), into lo; TC_ERR_USAGE with a
 *  message naming the option. */
tc_status tc_cli_msccl_option(tc_ctx *ctx, const char *name, const char *arg, struct tc_msccl_lower_opts *lo);
/** Parse --seed: a non-negative decimal integer (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_seed(tc_ctx *ctx, const char *s, uint64_t *out);
/** Parse seconds for option --opt: a number in (0, hi] (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_seconds(tc_ctx *ctx, const char *opt, const char *s, double hi, double *out);

struct tc_tune_model;
/** The model directory --algo auto reads: model_dir when given, else TOPO.model beside the topology
 *  (TOPO.xml -> TOPO.model).  Written into buf (n bytes), which is returned. */
const char *tc_cli_model_dir(const char *topo_path, const char *model_dir, char *buf, size_t n);
/**
 * The model --algo auto and tacosc bundle use for `coll` (cmd_tune.c): the one in model_dir when given
 * (errors when it has none for coll or was trained on another topology or chunk count); else TOPO.model
 * beside the topology file when it has one for coll that fits (one that does not fit draws a warning and
 * is not used); else none (*out NULL).  `why` says why none is used.
 */
tc_status tc_cli_model_for(tc_ctx *ctx, const char *topo_path, const char *model_dir, const tc_topo *topo,
                           tc_coll coll, int chunks, struct tc_tune_model **out, char *why, size_t why_n);
struct tc_sparse_opts;
struct tc_sim_opts;
struct tc_sim_result;
/** The sparse options (src/cli/sparse.c), each NULL when not given: --density D or --sparsity S (one of
 *  them; S is 1 - D), --sparse-format pici|coo|auto and --thresholds I,I,A (these two need one of the
 *  first; thresholds not with auto).  *o gets the paper's defaults with them applied; *on is 1 when a
 *  density was given.  Usage errors name the option. */
tc_status tc_cli_sparse_opts(tc_ctx *ctx, const char *density, const char *sparsity, const char *format,
                             const char *thresholds, struct tc_sparse_opts *o, int *on);
/** The element type and decision rule of the sparse pass (--dtype float32|float64|int32|bfloat16|float16,
 *  --sparse-rule forecast|previous; each NULL when not given, both need a density: on). */
tc_status tc_cli_sparse_more(tc_ctx *ctx, const char *dtype, const char *rule, int on, struct tc_sparse_opts *o);
/** The summary lines of an annotated plan: density, thresholds, formats, wire bytes, dense against sparse. */
void tc_cli_print_sparse(const tc_sched *s, double wire, double dense, double sparse, const char *indent);

/** Exit status for a tc_status: 0 for TC_OK, 2 for usage errors, 1 otherwise. */
int tc_cli_exit(tc_status st);
/**
 * An output file being written.  `path` "-" is stdout.  A regular file (or a new one) is written to a
 * temporary file beside it and renamed into place by tc_cli_close_output, so a failed run leaves the old
 * file untouched; a symbolic link to a regular file has its target replaced, not the link.  Anything that is
 * not a regular file (a device such as /dev/full, a pipe, a socket, a link to one) is written through.
 * Pass `ctx` (not the command's context) to the writer: an error the writer reports about the failed stream
 * is replaced by one message from tc_cli_close_output naming the path and the reason.
 */
typedef struct tc_cli_out {
    FILE *f;            /**< where to write */
    tc_ctx ctx;         /**< the context for the writer */
    const char *path;
    char *tmp;          /**< temporary file, NULL when written through */
    char *target;       /**< the resolved target of a symbolic link, else NULL */
    tc_ctx *parent;
    int err;            /**< errno of the first stream error a writer reported */
} tc_cli_out;
tc_status tc_cli_open_output(tc_ctx *ctx, const char *path, tc_cli_out *o);
/** Finish the output: on ok, rename the temporary file into place; otherwise (or when writing failed)
 *  remove it.  Stream errors are reported as `cannot write 'PATH': REASON`. */
tc_status tc_cli_close_output(tc_cli_out *o, int ok);
/** Refuse (usage error) an output path `out` of option `opt` that is the same file (device and inode) as
 *  one of the n inputs (NULL entries skipped); what[i] names input i ("topology file"). */
tc_status tc_cli_check_output(tc_ctx *ctx, const char *opt, const char *out, const char *const *inputs,
                              const char *const *what, int n);
/** Flush stdout: TC_ERR_IO with `cannot write to standard output: REASON` when it failed (a full disk, a
 *  closed pipe): commands that print results call it last so their exit status tells. */
tc_status tc_cli_stdout_close(tc_ctx *ctx);

#endif
