/**
 * @file check.h
 * The checker: symbolic execution of a schedule (src/core/check.c).  Per rank and chunk it tracks the set
 * of contributions held (a bitset of source ranks); a copy moves a set, a reduce unions two disjoint sets.
 * It checks causality (a rank sends only what it holds at t_start), one chunk per link at a time
 * (transfers with link >= 0), double counting, and the collective's postcondition.
 * At equal times arrivals apply before departures (a zero-length transfer arrives after them); times
 * closer than one part in 10^9 count as equal.  Messages: man 5 tacosc-schedule, section CHECKER.
 */
#ifndef TACOS_CHECK_H
#define TACOS_CHECK_H

#include "tacos/ir.h"

typedef struct tc_check_opts {
    const tc_topo *topo;  /**< when non-NULL: link ids and routes must exist and join src to dst */
    int no_link_check;    /**< skip the one-chunk-per-link test */
    size_t group_bytes;   /**< reducing collectives: contribution sets swept this many bytes of them at a
                               time, by chunk groups (0: 16 MiB; tests force small groups); same result */
    int order_times;      /**< the times are an order of execution (an MSCCL program's steps 1, 2, ...), not
                               seconds: diagnostics say so */
} tc_check_opts;

/**
 * Verify `s`.  On the first violation reports one diagnostic naming rank, chunk and time through ctx
 * (file is `name`, or s->file when name is NULL; a transfer's line when the schedule records it) and
 * returns TC_ERR_CHECK.  opts may be NULL.
 */
tc_status tc_sched_check(tc_ctx *ctx, const tc_sched *s, const tc_check_opts *opts, const char *name);

#endif
