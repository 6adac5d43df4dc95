/* Subcommands of the tacosc command line; each returns the process exit status (0 ok, 1 error, 2 usage). */
#ifndef TACOS_CLI_H
#define TACOS_CLI_H

#include "tacos/ir.h"

int tc_cli_compile(int argc, char **argv); /* tacosc TOPO.xml --collective C ... */
int tc_cli_topo(int argc, char **argv);    /* tacosc topo KIND DIMS ... */
int tc_cli_info(int argc, char **argv);    /* tacosc info TOPO.xml ... */
int tc_cli_verify(int argc, char **argv);  /* tacosc verify PLAN ... */
int tc_cli_sim(int argc, char **argv);     /* tacosc sim PLAN TOPO ... */
int tc_cli_compare(int argc, char **argv); /* tacosc compare TOPO ... */
int tc_cli_route(int argc, char **argv);   /* tacosc route TOPO --circuits F | --random N ... */

/** Read a topology, apply a cost file (may be NULL) and unwind its switches (degree 0 = each switch's
 *  own): the topology every plan's link ids refer to.  Shared by every subcommand. */
tc_status tc_cli_load_topo(tc_ctx *ctx, const char *topo, const char *costs, int unwind, tc_topo **out);

/** Parse the decimal integer value of option --opt within [lo, hi] (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_int(tc_ctx *ctx, const char *opt, const char *s, long lo, long hi, int *out);

/** Parse --seed: a non-negative decimal integer (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_seed(tc_ctx *ctx, const char *s, uint64_t *out);
/** Parse seconds for option --opt: a number in (0, hi] (TC_ERR_USAGE with a message if not). */
tc_status tc_cli_parse_seconds(tc_ctx *ctx, const char *opt, const char *s, double hi, double *out);

/** Exit status for a tc_status: 0 for TC_OK, 2 for usage errors, 1 otherwise. */
int tc_cli_exit(tc_status st);
/** Open `path` for writing ("-" is stdout); the file is written to a temporary name and renamed into
 *  place by tc_cli_close_output so a failed run never leaves a partial file. */
tc_status tc_cli_open_output(tc_ctx *ctx, const char *path, FILE **f, char **tmp);
tc_status tc_cli_close_output(tc_ctx *ctx, const char *path, FILE *f, char *tmp, int ok);

#endif
