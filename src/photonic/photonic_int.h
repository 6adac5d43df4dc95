/* Helpers shared by the files of src/photonic/ (not part of the public API). */
#ifndef TACOS_PHOTONIC_INT_H
#define TACOS_PHOTONIC_INT_H

#include "tacos/photonic.h"

#include <igraph/igraph.h>

/*
 * igraph reports errors through a handler that aborts by default and warnings ("Couldn't reach some
 * vertices") through one that prints to stderr: while the pass calls igraph both are set to ignore, so
 * calls return their igraph_error_t (translated by ph_igraph_status) and nothing is printed.
 */
typedef struct ph_igraph_guard {
    igraph_error_handler_t *err;
    igraph_warning_handler_t *warn;
} ph_igraph_guard;
void ph_igraph_enter(ph_igraph_guard *g);
void ph_igraph_leave(const ph_igraph_guard *g);
/* IGRAPH_ENOMEM -> TC_ERR_NOMEM, anything else -> TC_ERR_INTERNAL (with a message naming the call). */
tc_status ph_igraph_status(tc_ctx *ctx, igraph_error_t e, const char *call);

/*
 * Alg. 2 over one candidate graph, reused for many rounds: the igraph_t of its links and a BFS tree per
 * source, built when first asked for.
 */
typedef struct ph_coster {
    const tc_topo *g;
    igraph_t ig;
    int have_graph;
    int **tree;        /* per source: inbound link of each NPU (-1 the source, < -1 unreachable) */
    double *bytes;     /* per link: bytes routed in the current round */
    int *count;        /* per link: pairs routed in the current round */
    int *touched;      /* links with bytes, to reset */
} ph_coster;

tc_status ph_coster_init(ph_coster *c, const tc_topo *g);
/* An error unless every vertex of g is an NPU: circuits join NPUs, and the pass prices them on NPU paths
 * (switches of model node or multicast are vertices; unwound ones are links). */
tc_status ph_npus_only(tc_ctx *ctx, const tc_topo *g);
void ph_coster_fini(ph_coster *c);
tc_status ph_coster_cost(tc_ctx *ctx, ph_coster *c, const tc_ph_pair *pairs, int n, tc_ph_cost *out);

/* Appending to tc_ph_routes. */
tc_status ph_routes_ints(tc_ph_routes *r, int n, int **at);
tc_status ph_routes_circuit(tc_ph_routes *r, tc_ph_circuit **at);

/* Price the links of a circuit topology (indexed): alpha a, beta b x max(circuits out of the source NPU,
 * circuits into the destination NPU): a GPU's transmitters are divided among its circuits (PCCL §4.2). */
tc_status ph_price_circuits(tc_topo *t, double a, double b);

/* Copy the fabric's numbers into a plan (tx, rx, wavelengths, mzi, grid, fibers). */
void ph_plan_fabric(tc_sched_photonic *p, const tc_ph_fabric *fab);

#endif
