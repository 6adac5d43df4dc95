/**
 * @file photonic.h
 * The photonic pass (src/photonic/; PCCL photonic paper §3-4, Alg. 1-4, App. B): when to reconfigure an
 * optical fabric during a schedule, and the circuits of every reconfiguration.
 *
 * Conventions: rounds are the schedule's steps (sub-rounds where tx/rx force a split); a pair moves its
 * chunks' bytes; circuits cost the class "circuit", else G0's largest alpha and beta; MZI ids number one
 * plane of (grid_rows x mzi) by (grid_cols x mzi) MZIs row by row (id = y * grid_cols * mzi + x).
 * Output: a tc_sched_photonic (ir.h) for the caller to attach (s->photonic); transfers stay as they are,
 * so the plan checks and lowers to MSCCL unchanged.  Diagnostics go through ctx; GLPK's terminal output
 * and igraph's warnings are off during a call (handlers restored).  Same input, same plan, except where
 * the fiber ILP reaches --ilp-time (the plan says so).
 * Memory: rounds x candidates costs; about 70 bytes per MZI while routing; glp_prob and igraph_t live
 * inside one call only.  Errors: TC_ERR_INVALID naming the round, circuit or fabric attribute;
 * TC_ERR_USAGE for a bad fallback list; TC_ERR_LIMIT when the reconfiguration ILP runs out of time;
 * TC_ERR_INTERNAL for a solver failure (the GLPK or igraph code named).
 */
#ifndef TACOS_PHOTONIC_H
#define TACOS_PHOTONIC_H

#include "tacos/ir.h"

/** Default time limit of each ILP (GLPK tm_lim), seconds. */
#define TC_PHOTONIC_ILP_TIME 10.0

typedef struct tc_photonic_opts {
    const char *fallback; /**< comma-separated fallback set S ("ring,torus:8x16,none"); NULL: the default */
    double ilp_time;      /**< seconds per ILP; <= 0: TC_PHOTONIC_ILP_TIME */
} tc_photonic_opts;

void tc_photonic_opts_init(tc_photonic_opts *o);

/**
 * The pass: plan reconfigurations and circuits for schedule `s` on `topo` (indexed, switches unwound,
 * topo->photonic.present).  Writes a new tc_sched_photonic to *out (the caller attaches it to s and may set
 * s->time to the breakdown's sum).  A configuration the fabric cannot route (no free wavelength, too few
 * fibers) is left out and the plan solved again (a warning names it).  Errors: no <photonic> element, no
 * rounds, no reconfiguration delay, a bad fallback name (TC_ERR_USAGE).
 */
tc_status tc_photonic_plan(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, const tc_photonic_opts *opts,
                           tc_sched_photonic **out);

/** The schedule's time on the topology's own links without reconfiguration: Alg. 2 per step, summed
 *  (the paper's eq. 1; the "fixed" baseline of a plan, and of any generator on a fixed topology). */
tc_status tc_photonic_fixed(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, tc_ph_breakdown *out);

/**
 * A photonic plan's time recomputed from its rounds and circuits (`tacosc sim`, `verify`; src/photonic/
 * verify.c): each round's pairs (its step's transfers, or its stored sub-round pairs; a split step whole on
 * G0 or a fallback, each part 1/n_sub of it) priced by Alg. 2 on what it runs on: the circuits of the
 * latest reconfiguration (priced as circuits with the plan's alpha and beta, a GPU's bandwidth shared by
 * its circuits) or G0 = topo (indexed, with the costs the plan was made with).  Rounds on G0 are skipped
 * when topo is NULL (priced[i] = 0).  rounds, priced (n_rounds each) and total may be NULL.
 */
tc_status tc_photonic_reprice(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, tc_ph_breakdown *rounds,
                              int *priced, tc_ph_breakdown *total);

/**
 * Check the photonic section of plan s (nothing when it has none) and name the rule broken: sequence
 * (reconfigurations and kept topologies agree, n_reconfigs), pairs (a round's own circuits are its pairs;
 * a return to G0 sets up G0's links when topo is given), tx/rx, mesh (MZI paths join neighbours),
 * conflict (two circuits of one wavelength on an MZI link or a fiber), time (stored round times equal
 * tc_photonic_reprice's, the total their sum).  Errors are TC_ERR_INVALID at `path` (NULL: s->file).
 */
tc_status tc_photonic_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *path);

/** Summary lines of a photonic plan (compile summary, `tacosc sim`): totals, then one line per run of rounds. */
void tc_photonic_summary_write(const tc_sched_photonic *p, FILE *f);

/** One line describing a topology's fabric (`tacosc info`): "reconfig 5.000 us, tx 4, ...". */
void tc_photonic_fabric_describe(const tc_topo *topo, FILE *f);

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 2: congestion and dilation of one round on one topology (cost.c)                             */

/** A communicating pair of a round and the bytes it moves. */
typedef struct tc_ph_pair {
    int src, dst;
    double bytes;
} tc_ph_pair;

/** Alg. 2's answer for a round on a topology. */
typedef struct tc_ph_cost {
    int connected;          /**< 0: some pair has no path; the other fields are then 0 */
    int congestion;         /**< c: most pairs on one link */
    int dilation;           /**< d: most hops of one pair */
    tc_ph_breakdown t;      /**< latency, bandwidth, congestion, dilation (reconfig 0) */
} tc_ph_cost;

/**
 * Price `n` pairs on the links of `g` (indexed): each pair takes a hop-count shortest path (igraph BFS),
 * its route's alpha add up (dilation) and each link carries the bytes of the pairs crossing it
 * (congestion).  The round costs max over pairs of summed alpha + max over links of beta x bytes; with
 * uniform links that is alpha d + beta c w (the paper's alpha dilation + beta congestion w).  Split:
 * latency = the largest alpha on one pair's route (max over pairs), dilation = the rest of the alpha term,
 * bandwidth = max over pairs of bytes x the largest beta on its route, congestion = the rest.  Pairs
 * with src == dst cost nothing.
 */
tc_status tc_photonic_cost(tc_ctx *ctx, const tc_topo *g, const tc_ph_pair *pairs, int n, tc_ph_cost *out);

/* ------------------------------------------------------------------------------------------------ */
/* Tx/Rx splitting (split.c)                                                                         */

/**
 * Split n distinct directed pairs into the fewest sub-rounds in which no NPU is the source of more than
 * `tx` pairs nor the destination of more than `rx` (0: no limit): k = max over NPUs of
 * ceil(out / tx) and ceil(in / rx), reached by colouring the bipartite out/in graph (König).  Writes
 * each pair's sub-round (0..k-1) to part[] and k to *n_parts.
 */
tc_status tc_photonic_split(const tc_ph_pair *pairs, int n, int n_npus, int tx, int rx, int *part,
                            int *n_parts);

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 1: which topology each round runs on (ilp.c)                                                 */

/**
 * The reconfiguration problem: rounds 0..n_rounds-1 and topologies 0..n_topos-1.  Topologies
 * 0..n_static-1 (0 is G0, the fabric's state before round 0, then the fallback set S) can be set up before
 * any round; topology own[i] (>= n_static; NULL: n_static + i, the paper's layout) holds round i's own
 * circuits and can be set up before round i only (rounds with the same pairs may share one), and after
 * that only kept (the dependency constraint (5)).  cost[i * n_topos + j] is CommCost(G_j, R_i) (NAN where
 * round i cannot use j: an own topology before its first round); INFINITY where round i's pairs are
 * disconnected on G_j (the ILP gives it a penalty larger than any plan without one).  keep_only[j] (may be
 * NULL): static topology j is never set up (G0: kept from round 0 on or left for good).
 */
typedef struct tc_ph_ilp {
    int n_rounds, n_static, n_topos;
    const double *cost;
    const int *own;
    const unsigned char *keep_only;
    const unsigned char *tie; /**< may be NULL; tie[i]: rounds i and i+1 are parts of one split step, and
                                   on a static topology both run on the same one (it carries the step
                                   unsplit: cost holds each part's share) */
    double r;
    double time_limit;      /**< seconds (GLPK tm_lim) */
} tc_ph_ilp;

/**
 * Solve Alg. 1 exactly with GLPK's MIP solver.  The paper's t[i][j] (round i runs on topology j) is split
 * into kept (round i-1 ran on j too) and set up (a reconfiguration, r): binary arcs of a layered network,
 * one unit of flow from G0 before round 0 through one topology per round (eq. 4), set-up arcs only where
 * (5) allows them, objective sum t cost + r x (set-ups).  Writes each round's topology to choice[] and the
 * optimum to *objective.  Errors: the solver's return code or a non-optimal status (TC_ERR_LIMIT for the
 * time limit, TC_ERR_INTERNAL otherwise), with a message saying which.
 */
tc_status tc_photonic_ilp_solve(tc_ctx *ctx, const tc_ph_ilp *p, int *choice, double *objective);

/** Cost of a choice vector under the problem (the ILP's objective for that choice). */
double tc_photonic_ilp_value(const tc_ph_ilp *p, const int *choice);

/* ------------------------------------------------------------------------------------------------ */
/* The fabric of a topology: servers, tiles, meshes, fibers                                          */

typedef struct tc_ph_fabric {
    int n_npus;
    int grid_rows, grid_cols, servers; /**< servers = grid_rows x grid_cols */
    int *server_of;                    /**< per NPU */
    int *tile_of;                      /**< per NPU: tile index on its server, row-major */
    int mzi;                           /**< mesh side, 0: no mesh */
    int tile_rows, tile_cols;
    int wavelengths;                   /**< >= 1 */
    int fibers;                        /**< per neighbouring server pair; 0: as many as needed */
    int tx, rx;                        /**< 0: no limit */
} tc_ph_fabric;

/** The fabric of topo->photonic (defaults resolved: grid, tiles, wavelengths). */
tc_status tc_photonic_fabric_create(tc_ctx *ctx, const tc_topo *topo, tc_ph_fabric **out);
/** A fabric without a topology (benchmarks, tests): one NPU per tile, NPU i on server i / per_server. */
tc_status tc_photonic_fabric_make(int grid_rows, int grid_cols, int per_server, int mzi, int wavelengths,
                                  int fibers, tc_ph_fabric **out);
void tc_photonic_fabric_free(tc_ph_fabric *f);

/** Circuits with their routes (the same encoding as tc_sched_photonic's circuits and ints). */
typedef struct tc_ph_routes {
    int n_circuits, cap_circuits;
    tc_ph_circuit *circuits;
    int n_ints, cap_ints;
    int *ints;
} tc_ph_routes;

void tc_photonic_routes_free(tc_ph_routes *r);

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 4: fibers across the server grid (fiber.c)                                                   */

/** Circuits between servers over an undirected server graph. */
typedef struct tc_ph_fiber_in {
    int n_servers;
    int n_edges;
    const int *edge_u, *edge_v;  /**< undirected server links */
    const int *edge_count;       /**< circuits already on each edge (NULL: none) */
    int n_circ;
    const int *src, *dst;        /**< servers of each circuit (src == dst: no fiber) */
    double time_limit;           /**< seconds for the exact ILP */
    int fibers;                  /**< fibers per edge, 0: as many as the optimum needs */
    int per_fiber;               /**< circuits one fiber carries (wavelengths; 0 counts as 1) */
    const char *what;            /**< prefix of messages ("round 3"), may be NULL */
    const int *circ_src, *circ_dst; /**< NPUs of each circuit, named in messages (may be NULL) */
} tc_ph_fiber_in;

typedef struct tc_ph_fiber_out {
    int method;      /**< TC_PH_FIBER_ILP or TC_PH_FIBER_LP */
    int z;           /**< the optimum: the fewest circuits the busiest edge can carry (existing included) */
    int peak;        /**< the busiest edge's circuits once paths are shortened (<= max(z, capacity)) */
    int capacity;    /**< fibers x per_fiber, or z rounded up to whole fibers when fibers is 0 */
    double lp_bound; /**< the LP relaxation's optimum: z >= ceil(lp_bound - 1e-9) */
    double bound;    /**< the best proven lower bound on the optimum (the LP's, raised by branch and bound);
                          ceil(bound) == z when the method is TC_PH_FIBER_ILP; the gap is z - ceil(bound) */
    int *load;       /**< per edge, existing included */
    int *path_off;   /**< per circuit: its servers are path[path_off[i] .. path_off[i + 1]) */
    int *path;
    int *edge_of;    /**< per hop (path index of the hop's first server): the edge it crosses */
} tc_ph_fiber_out;

/** The edges of a rows x cols server grid (server s at row s / cols, column s % cols): right neighbours
 *  row by row, then down neighbours; u[k] < v[k].  *u and *v are malloc'd. */
tc_status tc_photonic_grid_edges(int rows, int cols, int **u, int **v, int *n);

/**
 * Alg. 4 (App. B.1): route every circuit over the server graph minimizing z, the most circuits sharing
 * one edge (both directions count: a fiber carries one circuit per wavelength).  Flow conservation per
 * circuit, aggregated by source server (the same optimum: an integer flow splits into paths), integer
 * flows, GLPK.  The LP relaxation gives the bound; a rounded and locally improved solution that meets its
 * ceiling is optimal; otherwise GLPK's branch and bound continues from it with tm_lim = time_limit, and
 * when the limit is hit the best solution so far is kept (method TC_PH_FIBER_LP).  Paths are then
 * shortened where a shorter path keeps every edge within max(z, capacity): minimizing z alone sends
 * circuits on detours that the fibers a fabric has make pointless.  Errors: a circuit whose servers are not connected
 * (TC_ERR_INVALID naming it); a GLPK failure (TC_ERR_INTERNAL naming the call and code).
 */
tc_status tc_photonic_fiber_route(tc_ctx *ctx, const tc_ph_fiber_in *in, tc_ph_fiber_out **out);
void tc_photonic_fiber_out_free(tc_ph_fiber_out *o);

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 3: circuits through the MZI meshes (mzi.c)                                                   */

/** A circuit to route: from any MZI of the source rectangle to any MZI of the destination rectangle
 *  (plane coordinates, half-open [y0, y1) x [x0, x1)), optionally along a server path. */
typedef struct tc_ph_mzi_req {
    int src, dst;                 /**< NPUs (recorded in the result; -1 when not NPUs) */
    int sy0, sx0, sy1, sx1;
    int dy0, dx0, dy1, dx1;
    const int *servers;           /**< server path (from Alg. 4) or NULL: any servers */
    int n_servers;
} tc_ph_mzi_req;

/**
 * Alg. 3 (App. B): route the requests in order on the fabric's MZI plane.  Waveguides join 4-neighbour
 * MZIs of a server; fiber f of a server pair joins the facing border MZIs at offset
 * floor((2f + 1) mzi / 2F) along the shared side (F = fabric->fibers, or mzi when unlimited).  A
 * waveguide or fiber carries at most one circuit per wavelength.  Per circuit: A* (Dijkstra with a
 * Manhattan bound) with edge weights 1 + circuits already on the edge, a bend costing half a step more
 * (straight runs stay crossable by later circuits); if the path has no wavelength
 * free on all its edges, the edges in use are penalized (x4) and the search repeats (3 trials, the
 * paper's loop); then each wavelength is tried with its busy edges removed.  The first free wavelength
 * wins.  Errors: TC_ERR_INVALID naming the circuit (prefixed by `what` when not NULL) when no wavelength
 * is free on any path.
 */
tc_status tc_photonic_mzi_route(tc_ctx *ctx, const tc_ph_fabric *fab, const tc_ph_mzi_req *req, int n,
                                const char *what, tc_ph_routes **out);

/** The rectangle (plane coordinates) of NPU v's tile. */
void tc_photonic_tile_rect(const tc_ph_fabric *fab, int v, int *y0, int *x0, int *y1, int *x1);

/**
 * Route circuits src[i] -> dst[i] (NPUs) on the fabric: Alg. 4 across servers when there are several,
 * then Alg. 3 through the meshes (in the given order, else longest first, else reversed: Alg. 3 is
 * greedy), or, without a mesh, a wavelength and a fiber per hop, first fit.
 * Checks tx/rx first (an error names the NPU and its circuit).  Fills *out and the fiber summary.
 * `what` prefixes messages ("round 3", "circuits.txt").
 */
typedef struct tc_ph_route_summary {
    int method;       /**< tc_ph_fiber_method */
    int z;            /**< Alg. 4's objective */
    double lp_bound;
    double bound;     /**< tc_ph_fiber_out.bound: the optimality gap is z - ceil(bound) */
    int fibers;       /**< fibers in use over all server pairs */
    int n_fib;        /**< server pairs in use */
    int *fib;         /**< n_fib triples (a, b, fibers), a < b, ascending */
} tc_ph_route_summary;

tc_status tc_photonic_route(tc_ctx *ctx, const tc_ph_fabric *fab, const int *src, const int *dst, int n,
                            double time_limit, const char *what, tc_ph_routes **out, tc_ph_route_summary *sum);
void tc_photonic_route_summary_free(tc_ph_route_summary *s);

/**
 * Transmitters and receivers: no NPU starts more than fab->tx circuits or ends more than fab->rx.  The
 * error names the first circuit over a limit, at file:lines[i] when lines is given, else prefixed by what.
 */
tc_status tc_photonic_check_txrx(tc_ctx *ctx, const tc_ph_fabric *fab, const int *src, const int *dst, int n,
                                 const char *file, const int *lines, const char *what);

/** Append routed circuits and their fiber summary to plan p as the circuits of round r (r in p->rounds). */
tc_status tc_photonic_routes_attach(tc_sched_photonic *p, tc_ph_round *r, const tc_ph_routes *rt,
                                    const tc_ph_route_summary *sum);

/** A one-round plan holding routed circuits (`tacosc route -o`, tc_emit_circuits_write). */
tc_status tc_photonic_circuit_plan(const tc_ph_fabric *fab, const tc_ph_routes *rt, const tc_ph_route_summary *sum,
                                   tc_sched_photonic **out);

/* ------------------------------------------------------------------------------------------------ */
/* The breakdown picture (svg.c)                                                                     */

/** One bar: a case (algorithm) within a group (topology), its time split into the breakdown's parts. */
typedef struct tc_ph_bar {
    const char *group;
    const char *label;
    tc_ph_breakdown t;
} tc_ph_bar;

/**
 * Stacked bars in the style of the paper's Figs. 8-9: bars grouped by `group` (in order of first
 * appearance), one shared time axis with ticks and a label, a legend of the five parts, each bar's total
 * written above it and its label below.  Deterministic.
 */
tc_status tc_photonic_svg_write(tc_ctx *ctx, const char *title, const tc_ph_bar *bars, int n, FILE *f);

/**
 * The breakdown of a photonic plan (`tacosc sim --svg`): its photonic time and the same schedule on the
 * fixed topology (group "plan"), then one bar per round (group "rounds"), every time recomputed on topo
 * (tc_photonic_reprice, tc_photonic_fixed).  A dominating bar breaks the axis (tc_photonic_svg_write).
 */
tc_status tc_photonic_plan_svg_write(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *title, FILE *f);


/* ------------------------------------------------------------------------------------------------ */
/* The plan's photonic section in a JSON schedule (src/photonic/json.c; man 5 tacosc-schedule)        */

struct cJSON;

/** Write the section as the JSON schedule writer places it after the transfers: `,\n  "photonic": {...}`
 *  (times, fabric, fallbacks, breakdowns, rounds with their fibers and circuits). Deterministic. */
void tc_photonic_json_write(FILE *f, const tc_sched_photonic *p);
/** The fabric object `{"tx": ..., "grid": [R, C], "fibers": ...}` (the section's and a circuit plan's). */
void tc_photonic_json_write_fabric(FILE *f, const tc_sched_photonic *p);
/** Round r's fiber summary and circuits as members of an object: `"fibers": ..., "circuits": [...]`, one
 *  circuit per line after `indent` (the section's rounds and a circuit plan, tc_emit_circuits_write). */
void tc_photonic_json_write_circuits(FILE *f, const tc_sched_photonic *p, const tc_ph_round *r, const char *indent);
/**
 * Read the value `o` of a schedule's "photonic" member (the JSON schedule reader parsed the document) into a
 * new tc_sched_photonic, *out on success (the caller owns it: tc_sched_photonic_free).  Ranges come from
 * s (ranks) and steps (the plan's step count; s->n_steps may not be set yet).  Errors: TC_ERR_INVALID as
 * `FILE:LINE: error: field "photonic": ...`, LINE = line(arg) (line may be NULL: 0), asked only on error;
 * TC_ERR_NOMEM.
 */
tc_status tc_photonic_json_read(tc_ctx *ctx, const struct cJSON *o, const char *file, int (*line)(const void *arg),
                                const void *arg, const tc_sched *s, int steps, tc_sched_photonic **out);

#endif
