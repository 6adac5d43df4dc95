/* Internals shared by the files of the sim module (sim.c, queue.c, bound.c); not a public header. */
#ifndef TACOS_SIM_INT_H
#define TACOS_SIM_INT_H

#include "tacos/sim.h"

#include <igraph/igraph.h>
#include <stdint.h>

/* Simulated time: integer femtoseconds, so that equal sums are equal whatever their order and the two
 * event-model paths make the same choices on ties.  int64 holds 9,223 s. */
typedef int64_t simt;
#define SIM_FS 1e15
#define SIM_T_MAX ((simt)9000 * (simt)1000000000000000)

/* Routes of a schedule's transfers on a topology; igraph shortest paths for transfers without one. */
typedef struct sim_router {
    const tc_sched *s;
    const tc_topo *t;
    igraph_t g;
    int have_graph;
    int **pred;     /* per source: inbound link of each vertex on its BFS tree (NULL until needed) */
    int *buf;       /* route scratch for igraph paths */
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
/* Time one chunk of `bytes` holds link l (alpha + beta bytes) in simt; TC_ERR_INVALID with a
 * diagnostic when it is not finite or beyond SIM_T_MAX. */
tc_status tc_sim_link_occ(tc_ctx *ctx, const tc_topo *t, int l, double bytes, simt *out);

/*
 * The event model's general path: a discrete-event simulation with a time-ordered queue of events and a
 * queue of waiting chunks per link (see sim.h).  Fills r->time, r->link_busy, r->max_dilation and, with
 * explain, the critical-path fields.
 */
tc_status tc_sim_queue_run(tc_ctx *ctx, sim_router *ro, double bytes, tc_sim_result *r, sim_binner *bn,
                           int explain);

#endif
