/* Internals shared by the files of the sim module (sim.c, queue.c, bound.c); not a public header. */
#ifndef TACOS_SIM_INT_H
#define TACOS_SIM_INT_H

#include "tacos/sim.h"

#include <igraph/igraph.h>
#include <stdint.h>

/* Simulated time: integer picoseconds, as the TACOS synthesizer counts (tc_time_ps), so that equal sums are
 * equal whatever their order, the two event-model paths make the same choices on ties, and a tacos plan's
 * times come back to the bit.  Up to TC_TIME_MAX. */
typedef int64_t simt;
#define SIM_T_MAX ((simt)(TC_TIME_MAX * 1e12))
/* Seconds of a simt, as tacos converts its own. */
static inline double sim_sec(simt t) { return (double)t * 1e-12; }

/* Routes of a schedule's transfers on a topology; igraph shortest paths for transfers without one. */
typedef struct sim_router {
    const tc_sched *s;
    const tc_topo *t;
    igraph_t g;
    int have_graph;
    int **pred;     /* per source: inbound link of each vertex on its BFS tree (NULL until needed) */
    int *buf;       /* route scratch for igraph paths */
    const double *scale, *pre, *post; /* per-transfer costs (tc_sim_opts.xfer_*), NULL when none */
    double epoch;   /* tc_link_epoch of the topology for the simulated chunk size (the link model) */
    int *lead;      /* multicast: per transfer its leader (mcast.c), NULL when no transfers share a hop */
} sim_router;

/* Multicast switches: per transfer the first transfer (in issue order) it shares its hop into a multicast
 * switch with, itself when none; *out NULL when no two transfers share one.  See mcast.c. */
tc_status tc_sim_mcast_leaders(const tc_sched *s, const tc_topo *t, int **out);

void tc_sim_router_free(sim_router *ro);
/* The links transfer xi crosses: *links and *n (0 for a local copy); *links is valid until the next call.
 * TC_ERR_INVALID with a diagnostic for a transfer the topology cannot carry. */
tc_status tc_sim_route_of(tc_ctx *ctx, sim_router *ro, int xi, const int **links, int *n);
/* Check transfer i's ranks, chunk, step, links and times against the topology. */
tc_status tc_sim_check_xfer(tc_ctx *ctx, const tc_sched *s, const tc_topo *t, int i);

/* Per-link occupancy timeline. */
typedef struct sim_binner {
    double *tl;    /* n_links * bins, NULL: no timeline */
    int bins;
    double width;  /* seconds per bin */
} sim_binner;
void tc_sim_bin_add(sim_binner *b, int link, double t0, double t1);

/* Transfers sorted by issue order (t_start, step, index); *out is malloc'd. */
tc_status tc_sim_issue_order(const tc_sched *s, int **out);
/* The tolerance for comparing schedule times: 1e-9 of the largest |t_end|. */
double tc_sim_time_tol(const tc_sched *s);
/* The error for transfer i arriving after SIM_T_MAX. */
tc_status tc_sim_too_long(tc_ctx *ctx, const tc_sched *s, int i);
/* The link model's times (tc_link_times) in simt: *occ the time one chunk of `bytes` holds link l (alpha +
 * beta bytes under tacos), *lat from its start until it is at the far end (== *occ under tacos); `epoch` is
 * tc_link_epoch(t, bytes).  TC_ERR_INVALID with a diagnostic when either is not finite or beyond
 * TC_TIME_MAX. */
tc_status tc_sim_link_cost(tc_ctx *ctx, const tc_topo *t, int l, double bytes, double epoch, simt *occ,
                           simt *lat);

/* Per-transfer costs (sim.h, tc_sim_opts.xfer_*): the time transfer x holds link l when chunks are `bytes`
 * (alpha + beta bytes scale[x]), and its codec times before the first hop and after the last in simt (0
 * without them).  TC_ERR_INVALID with a diagnostic beyond TC_TIME_MAX. */
tc_status tc_sim_xfer_occ(tc_ctx *ctx, const sim_router *ro, int x, int l, double bytes, simt *out, simt *lat);
tc_status tc_sim_xfer_codec(tc_ctx *ctx, const sim_router *ro, int x, double bytes, simt *pre, simt *post);

/*
 * The event model's general path: a discrete-event simulation with a time-ordered queue of events and a
 * queue of waiting chunks per link (see sim.h).  Fills r->time, r->link_busy, r->max_dilation and, with
 * explain, the critical-path fields.
 */
tc_status tc_sim_queue_run(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn,
                           int explain);

#endif
