/* tacos-run's prediction column (predict.c): the time tacosc predicts for the replayed plan, beside the
 * measured one. */
#ifndef TACOS_EXEC_PREDICT_H
#define TACOS_EXEC_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "tacos/ir.h"

typedef struct tc_exec_predict tc_exec_predict;

/**
 * The predictor of the plan file `plan` replayed on `n_ranks` ranks.  With `topo` (a topology file,
 * optional `costs`, a cost file): the plan priced by tacosc's event model (tc_sim_run, as `tacosc sim
 * PLAN TOPO --costs C --size S` prices it) at every size.  Without: a JSON plan's stored predicted_time,
 * at the plan's own size only; *out = NULL (no prediction) for MSCCL XML, which carries none.
 * Errors (unreadable or bad topology or cost file, NPU count other than n_ranks, the plan's transfers
 * not on the topology) come with a diagnostic.  The caller owns *out (tc_exec_predict_free).
 */
tc_status tc_exec_predict_create(tc_ctx *ctx, const char *plan, const char *topo, const char *costs, int n_ranks,
                                 tc_exec_predict **out);
/** Predicted seconds for a call of `bytes` (the nccl-tests size of the table's row, a multiple of `unit`
 *  bytes: tacos-run rounds sizes down to whole chunks); 0 when there is none for that size.  A stored
 *  prediction is for the plan's own size S only: it applies to the row S rounds down to
 *  (bytes <= S < bytes + unit). */
double tc_exec_predict_time(tc_ctx *ctx, tc_exec_predict *p, uint64_t bytes, uint64_t unit);
/** 1 when every size has a prediction (--topo), 0 when only the plan's own size has one. */
int tc_exec_predict_every_size(const tc_exec_predict *p);
/** The topology --topo named, as the plan's link ids refer to it (costs applied, unwound, NPU count
 *  checked); NULL without --topo.  Owned by p. */
const tc_topo *tc_exec_predict_topo(const tc_exec_predict *p);
/** One line (no newline) saying where the predictions come from, into buf. */
const char *tc_exec_predict_describe(const tc_exec_predict *p, char *buf, size_t n);
void tc_exec_predict_free(tc_exec_predict *p);

#endif
