/**
 * @file synth.h
 * TACOS synthesis (src/synth/): time-expanded network and link-chunk matching.
 */
#ifndef TACOS_SYNTH_H
#define TACOS_SYNTH_H

#include "tacos/algo.h"

/** The `tacos` generator (registry entry). */
tc_status tc_synth_tacos(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out);

#endif
