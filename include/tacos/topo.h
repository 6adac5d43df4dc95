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
/** Recompute each link's alpha/beta from its class unless overridden (and each switch's from its class). */
void tc_topo_refresh_costs(tc_topo *t);
/** Define class `cls` (alpha in s, beta in s/byte > 0) and refresh link costs. */
tc_status tc_topo_class_set(tc_topo *t, int cls, double alpha, double beta);
/** Append a switch with `n_ports` attached NPUs (copied), link class `cls`, unwinding degree `unwind`
 *  (0 = default).  Ranges are checked (TC_ERR_INVALID); duplicates and names are checked by the reader. */
tc_status tc_topo_add_switch(tc_topo *t, const char *name, const int *npus, int n_ports, int cls,
                             int unwind, int line);
/** Deep copy (the CSR index is rebuilt when the source had one). */
tc_status tc_topo_clone(const tc_topo *t, tc_topo **out);

/**
 * Read a topology XML file, validate it against the shipped schema and the semantic rules (ranges,
 * duplicates, self links, units, connectivity), and build its CSR index.  Diagnostics are
 * `file:line: error: ...`.  No network access, no DTD, no entities (a <!DOCTYPE> is refused).
 * A link may name a class that the file does not define (a cost file may define it): always call
 * tc_topo_apply_costs() next, with the cost file or NULL; it rejects classes that stay undefined.
 */
tc_status tc_topo_read(tc_ctx *ctx, const char *path, tc_topo **out);
/** Same from memory; `name` is used as the file name in diagnostics. */
tc_status tc_topo_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_topo **out);
/** Write a topology as XML (deterministic). */
tc_status tc_topo_write(tc_ctx *ctx, const tc_topo *t, FILE *f);

/** Limits of the photonic fabric description (<photonic>, man 5 tacosc-topology). */
#define TC_TOPO_MAX_WAVELENGTHS 64        /**< wavelengths per waveguide (one bit each in a 64-bit mask) */
#define TC_TOPO_MAX_MZI 4096              /**< side of a server's MZI mesh */
#define TC_TOPO_MAX_MZIS (1 << 22)        /**< MZIs over all servers (the router keeps ~70 bytes each) */
/** The tile grid of a server's mesh when <photonic tiles> is absent: the squarest rows x cols grid with
 *  cols = ceil(sqrt(n)) and rows = ceil(n / cols) for n NPUs on the server (n >= 1). */
void tc_topo_photonic_tiles(int n, int *rows, int *cols);

/** Cost file: link classes with alpha/beta, an optional reconfiguration delay and sparse codec
 *  throughputs. */
typedef struct tc_costs {
    int n_classes;
    tc_link_class *classes;
    double reconfig;     /**< seconds, <0 when absent */
    double codec_bw[3][2]; /**< `codec NAME COMPRESS DECOMPRESS`: [1 pici, 2 coo][compress, decompress] in
                                bytes of dense data per second, 0 when absent (tc_topo.codec_bw) */
} tc_costs;
tc_status tc_costs_read(tc_ctx *ctx, const char *path, tc_costs **out);
tc_status tc_costs_read_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_costs **out);
void tc_costs_free(tc_costs *c);
/** A link class name as topology and cost files take it (tacosc-costs(5)): TC_CLASS_NAME_RULE. */
int tc_class_name_valid(const char *name);
#define TC_CLASS_NAME_RULE "a class name is letters, digits, '_', '-' and '.', starting with a letter or '_'"
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

/**
 * Import the topology a runtime detected (src/topo/import.c, man 1 tacosc `topo import`): NCCL's or RCCL's
 * topology dump (<system>), `nvidia-smi topo -m` or `rocm-smi --showtopo` text, told apart by content.
 * Bandwidths come from the runtime's tables (NVLink per SM generation, XGMI per gfx, PCIe per generation and
 * width, NIC speed in Mb/s); diagnostics are `file:line: error:` naming the element or row.  The text
 * formats carry no generation or NIC speed: the options give them.
 */
typedef struct tc_import_opts {
    int sm;           /**< nvidia-smi: compute capability x 10 (90 for H100); 0: from the NV# counts */
    const char *gcn;  /**< rocm-smi: gfx name (gfx942 for MI300X); NULL: gfx942, with a note */
    double nic_bw;    /**< text formats: NIC speed, B/s; 0: NCCL's fallback 10000 Mb/s, with a warning */
    double pcie_bw;   /**< text formats: PCIe link, B/s; 0: Gen3 x16 below sm 80, Gen4 x16 for sm 80, Gen5 x16 above */
} tc_import_opts;
tc_status tc_topo_import(tc_ctx *ctx, const char *path, const tc_import_opts *o, tc_topo **out);
tc_status tc_topo_import_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len,
                             const tc_import_opts *o, tc_topo **out);
/** The text formats (src/topo/import_smi.c); called by tc_topo_import_mem. */
tc_status tc_topo_import_smi(tc_ctx *ctx, const char *name, const char *buf, size_t len,
                             const tc_import_opts *o, tc_topo **out);
/** Write t (owned by the caller) and read it back into *out, so the reader's rules judge what an importer
 *  or compose built; `file` becomes out's file name. */
tc_status tc_topo_import_finish(tc_ctx *ctx, const char *file, tc_topo *t, tc_topo **out);

/**
 * Compose `nodes` copies of one server into a cluster (src/topo/compose.c): ranks server-major (server k's
 * local NPU i is rank k * n + i), <nodes size="n">, every switch and NIC renamed "sK.NAME".  The servers
 * are joined through their NICs (each keeps its port class, upclass):
 *   - "rail": one switch per NIC index ("rail0" ...), the k-th NIC of every server hangs from rail k;
 *   - "fat-tree": one leaf switch per server that its NICs hang from, the leaves hang from one spine
 *     switch by an uplink of the summed NIC speed of a server divided by `oversub` (>= 1);
 *   - "switch": every NIC hangs from one switch.
 * A server without NICs cannot be joined (TC_ERR_INVALID with a message).  nic_split (rail and switch only):
 * no NIC vertices; each NIC's GPUs attach to its network switch directly, each port the NIC's port
 * bandwidth divided by its GPUs (a static share, one switch between GPUs; the NIC vertices share dynamically).
 */
tc_status tc_topo_compose(tc_ctx *ctx, const tc_topo *server, int nodes, const char *net, double oversub,
                          int nic_split, tc_topo **out);

/** Diameter work budget: exact all-sources BFS while n * (n + m) stays below this. */
#define TC_TOPO_EXACT_WORK 4e8
/** Above the budget, BFS runs from this many evenly spaced NPUs plus the farthest NPU of each. */
#define TC_TOPO_SAMPLE_SOURCES 32

/**
 * Derived metrics.  Switches are counted as tc_topo_unwind(t, 0) leaves them (unwound with their own degree,
 * or vertices for models node and multicast, whose hops count in the diameter), i.e. metrics are those of
 * the topology the synthesizer sees, over NPUs; the counts n_links/n_switches are those of `t` itself.  An unindexed topology is indexed on a private copy.
 * Diameter: exact (BFS from every NPU) while n*(n+m) <= TC_TOPO_EXACT_WORK; otherwise the largest
 * eccentricity found from TC_TOPO_SAMPLE_SOURCES evenly spaced NPUs and a second sweep from the farthest
 * NPU of each: a lower bound that is exact for vertex-transitive topologies (rings, tori, hypercubes,
 * fully connected) and for meshes (NPU 0 is a corner); diameter_exact says which.
 */
typedef struct tc_topo_info {
    int n_npus, n_links, n_classes, n_switches;
    int diameter;              /**< hops; -1 when disconnected */
    double diameter_alpha;     /**< largest over pairs of the smallest summed alpha along a path, s */
    double min_injection_bw;   /**< min over NPUs of the summed outgoing bandwidth, B/s */
    double min_ejection_bw;    /**< min over NPUs of the summed incoming bandwidth, B/s */
    int diameter_exact;        /**< 1 when diameter and diameter_alpha were computed from every NPU */
} tc_topo_info;
tc_status tc_topo_info_get(tc_ctx *ctx, const tc_topo *t, tc_topo_info *out);
/**
 * Ideal time of a collective of `size` bytes on n_ranks ranks (0: info->n_npus), TACOS §V-A:
 * bytes / B + diameter_alpha, where B = min(min_injection_bw, min_ejection_bw) and bytes is
 * size*2(n-1)/n for all-reduce; size*(n-1)/n for all-gather, reduce-scatter, gather, scatter and
 * all-to-all (size as in tc_sched: output, input, per-rank buffer); size for broadcast and reduce.
 * 0 for a single rank; INFINITY when disconnected or without links.
 */
double tc_topo_ideal_time(const tc_topo_info *info, tc_coll coll, uint64_t size, int n_ranks);
/** Nonzero when every NPU reaches every other; otherwise writes an unreachable pair. */
int tc_topo_connected(const tc_topo *t, int *from, int *to);
/** Hop-count shortest path from a to b over links: writes up to cap link ids, returns path length
 *  (-1 unreachable).  Deterministic: ties broken by lowest link id. */
int tc_topo_shortest_path(const tc_topo *t, int a, int b, int *links, int cap);

/** The lowest-id link from a to b on an indexed topology, -1 when they are not neighbours. */
int tc_topo_link_between(const tc_topo *t, int a, int b);
/** Breadth-first tree from src over an indexed topology, out-links in link-id order (the tree every
 *  tc_topo_shortest_path answer lies on): parent[v] is the link reaching v, -1 for src, -2 when v is
 *  unreachable.  parent holds n_npus ints. */
tc_status tc_topo_bfs_tree(const tc_topo *t, int src, int *parent);
/** The path from src to dst on a tree of tc_topo_bfs_tree: writes up to cap link ids, returns its length
 *  (-1 unreachable). */
int tc_topo_tree_path(const tc_topo *t, const int *parent, int src, int dst, int *links, int cap);

/**
 * Unwind every switch of model unwind into point-to-point links (TACOS paper §IV-G): with degree d, the k-th
 * attached NPU links to the next d attached NPUs (mod ports), same alpha, beta multiplied by d.  d = 0 uses
 * each switch's own `unwind` attribute or 1.  A switch of model node or multicast becomes a vertex instead
 * (tc_topo.swnodes, in declaration order), with a link to and from each attached NPU in port order (NPU to
 * switch, then switch to NPU), of the switch's class.  The result has no switches and is indexed.  A
 * topology without switches is copied unchanged.
 */
tc_status tc_topo_unwind(tc_ctx *ctx, const tc_topo *t, int d, tc_topo **out);
/** Give every switch of t the model m (the command line's --switch-model); NICs stay store-and-forward
 *  vertices. */
void tc_topo_set_switch_model(tc_topo *t, tc_switch_model m);
/** Nonzero when switch s carries traffic once unwound: every switch, and a NIC that hangs from a switch
 *  (up >= 0); a NIC that hangs from nothing (a single imported server) joins its GPUs to no network. */
int tc_topo_switch_carries(const tc_topo *t, int s);
/** Nonzero when a switch hangs from another (up=) or, unwound, a link joins two switch vertices. */
int tc_topo_switch_tree(const tc_topo *t);

/**
 * Torus or mesh dimensions of an indexed topology (tc_topo_index), for bucket, Swing, the lower bound and the SVG layout.  From the name
 * first: it holds "AxB[xC...]" whose product is the NPU count and, for one of the two rank orders (first
 * or last dimension fastest), every NPU is linked both ways with its +1 neighbour in every dimension (as
 * `tacosc topo` writes tori and meshes).  Otherwise from the links alone: at least two dimensions, every
 * +1 neighbour linked, and every link between grid neighbours (+-1 in one coordinate, or a torus's
 * wrap-around), so a fully-connected topology is not a grid.  Writes up to 8 dims (fastest first) and
 * returns how many; 0 when the topology is not recognised as a torus or mesh.
 */
int tc_topo_grid_dims(const tc_topo *topo, int dims[8]);


#endif
