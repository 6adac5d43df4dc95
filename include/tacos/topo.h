/**
 * @file topo.h
 * Topology stage: read, write, generate and validate topologies; read cost files; derived metrics.
 * Implemented in src/topo/.  Objects returned through out-parameters belong to the caller.
 */
#ifndef TACOS_TOPO_H
#define TACOS_TOPO_H

#include "tacos/ir.h"

/** Default link class: alpha = 0.5 us, 50 GB/s (TACOS paper default). */
#define TC_TOPO_DEFAULT_ALPHA 0.5e-6
#define TC_TOPO_DEFAULT_BW 50e9

/** An empty topology with n_npus NPUs and the "default" class (index 0). */
tc_status tc_topo_create(const char *name, int n_npus, tc_topo **out);
void tc_topo_free(tc_topo *t);
/** Find or add a class by name; returns its index in *out. */
tc_status tc_topo_class_get(tc_topo *t, const char *name, int *out);
/** Append a directed link (class alpha/beta used unless alpha/beta >= 0 are given as overrides). */
tc_status tc_topo_add_link(tc_topo *t, int src, int dst, int cls, double alpha, double beta, int line);
/** Build CSR in/out adjacency (tc_topo.out_off ...).  Idempotent; must be redone after adding links. */
tc_status tc_topo_index(tc_topo *t);
/** Recompute each link's alpha/beta from its class unless overridden. */
void tc_topo_refresh_costs(tc_topo *t);

/**
 * Read a topology XML file, validate it against the shipped schema and the semantic rules (ranges,
 * duplicates, self links, classes, connectivity), and build its CSR index.  Diagnostics are
 * `file:line: error: ...`.  No network access and no external entities.
 */
tc_status tc_topo_read(tc_ctx *ctx, const char *path, tc_topo **out);
/** Same from memory; `name` is used as the file name in diagnostics. */
tc_status tc_topo_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_topo **out);
/** Write a topology as XML (deterministic). */
tc_status tc_topo_write(tc_ctx *ctx, const tc_topo *t, FILE *f);

/** Cost file: link classes with alpha/beta and an optional reconfiguration delay. */
typedef struct tc_costs {
    int n_classes;
    tc_link_class *classes;
    double reconfig;     /**< seconds, <0 when absent */
} tc_costs;
tc_status tc_costs_read(tc_ctx *ctx, const char *path, tc_costs **out);
tc_status tc_costs_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_costs **out);
void tc_costs_free(tc_costs *c);
/** Apply a cost file (may be NULL) to a topology: define classes, check that every used class is
 *  defined (error names the first link using an undefined class), refresh link costs. */
tc_status tc_topo_apply_costs(tc_ctx *ctx, tc_topo *t, const tc_costs *c);
/** Parse "0.5us", "2 ns" ... into seconds; "50GB/s", "25 GiB/s" into bytes per second. */
tc_status tc_parse_time(const char *s, double *out);
tc_status tc_parse_bandwidth(const char *s, double *out);

/** Generate a topology: kind is ring, biring, fc, mesh, torus, hypercube, switch, dragonfly, rfs, dgx1,
 *  ...; dims like "4x4x4"; classes (may be NULL) name a class per dimension. */
tc_status tc_topo_generate(tc_ctx *ctx, const char *kind, const char *dims, const char *const *classes,
                           int n_classes, tc_topo **out);
/** One line per generator kind ("ring N  unidirectional ring"), for --help. */
void tc_topo_list_kinds(FILE *f);

/** Derived metrics (on an indexed topology; switches counted as unwound with d = 1 where relevant). */
typedef struct tc_topo_info {
    int n_npus, n_links, n_classes, n_switches;
    int diameter;              /**< hops; -1 when disconnected */
    double diameter_alpha;     /**< largest over pairs of the smallest summed alpha along a path, s */
    double min_injection_bw;   /**< min over NPUs of the summed outgoing bandwidth, B/s */
    double min_ejection_bw;    /**< min over NPUs of the summed incoming bandwidth, B/s */
} tc_topo_info;
tc_status tc_topo_info_get(tc_ctx *ctx, const tc_topo *t, tc_topo_info *out);
/** Ideal time of a collective of `size` bytes (TACOS §V-A bound). */
double tc_topo_ideal_time(const tc_topo_info *info, tc_coll coll, uint64_t size, int n_ranks);
/** Nonzero when every NPU reaches every other; otherwise writes an unreachable pair. */
int tc_topo_connected(const tc_topo *t, int *from, int *to);
/** Hop-count shortest path from a to b over links: writes up to cap link ids, returns path length
 *  (-1 unreachable).  Deterministic: ties broken by lowest link id. */
int tc_topo_shortest_path(const tc_topo *t, int a, int b, int *links, int cap);

/**
 * Unwind every switch into point-to-point links (TACOS paper §IV-G): with degree d, the k-th attached NPU
 * links to the next d attached NPUs (mod ports), same alpha, beta multiplied by d.  d = 0 uses each switch's
 * own `unwind` attribute or 1.  The result has no switches and is indexed.  A topology without switches is
 * copied unchanged.
 */
tc_status tc_topo_unwind(tc_ctx *ctx, const tc_topo *t, int d, tc_topo **out);

#endif
