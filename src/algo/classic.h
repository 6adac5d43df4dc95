/*
 * Internal to the classic generators (src/algo/): logical plans and the builders they share.
 *
 * A logical plan is a list of {src, dst, chunk, step, op} with global chunk ids (include/tacos/ir.h
 * numbering).  tc_algo_lplan_emit turns it into a schedule, routing each transfer on a shortest path.
 *
 * Time convention of every classic schedule (seconds, alpha-beta estimates; `tacosc sim` gives the real
 * time with congestion): steps run back to back.  In step s, the m chunks one pair (src, dst) exchanges
 * go one after the other, chunk j (in chunk-id order) over [T_s + j d, T_s + (j + 1) d) with
 * d = a + b * chunk_bytes, a the summed alpha and b the largest beta of the pair's route.  The step lasts
 * D_s = max over its pairs of m d and T_{s+1} = T_s + D_s.  Congestion between different pairs is ignored
 * (the simulator prices it); two chunks of one pair never overlap on a link, as the checker requires.
 */
#ifndef TACOS_ALGO_CLASSIC_INT_H
#define TACOS_ALGO_CLASSIC_INT_H

#include "tacos/algo.h"
#include "tacos/algo_classic.h"

typedef struct tc_lx {
    int src, dst, chunk, step, op;
} tc_lx;

typedef struct tc_lplan {
    tc_lx *x;
    int n, cap;
    int n_steps; /* 1 + largest step */
} tc_lplan;

tc_status tc_algo_lplan_add(tc_lplan *p, int src, int dst, int chunk, int step, tc_op op);
void tc_algo_lplan_free(tc_lplan *p);
/* Append q with steps shifted by `offset`; op >= 0 overrides q's ops. */
tc_status tc_algo_lplan_append(tc_lplan *p, const tc_lplan *q, int offset, int op);
/* Append q reversed in time (step s -> offset + q->n_steps - 1 - s), src and dst swapped, with `op`. */
tc_status tc_algo_lplan_append_reversed(tc_lplan *p, const tc_lplan *q, int offset, tc_op op);

/*
 * Compose an all-gather pattern `ag` (copies that take each chunk from its owner to every rank) into the
 * collective: all-gather = ag; reduce-scatter = ag reversed with reduce; all-reduce = reduce-scatter then
 * ag.  For all-reduce `ag` may use any owner per chunk.  Result in *out (appended).
 */
tc_status tc_algo_lplan_compose(tc_lplan *out, const tc_lplan *ag, tc_coll coll);

/*
 * Build the schedule: tc_sched_create(coll, R, K, size), the transfers of `p` with the time convention
 * above, names `name` and the topology's.  On failure frees everything and returns the status.
 */
tc_status tc_algo_lplan_emit(tc_ctx *ctx, const tc_topo *topo, const tc_lplan *p, tc_coll coll, int K,
                             const tc_gen_opts *opts, const char *name, tc_sched **out);

/*
 * Exchange all-gather over p virtual ranks: vrank v starts with block v; in step k each vrank sends to
 * peer(v, k, p) every block it holds that the peer lacks (states taken at the start of the step; a peer
 * < 0 or equal to v means idle).  Block b is the chunk list chunks[off[b] .. off[b+1]); vrank v is real
 * rank real[v].  Steps start at `step0`.  Returns TC_ERR_UNSUPPORTED (no diagnostic) when some vrank does
 * not end with every block or peer() is not symmetric.
 */
typedef int (*tc_peer_fn)(int v, int k, int p, void *user);
tc_status tc_algo_exchange_ag(tc_lplan *out, int p, int n_steps, tc_peer_fn peer, void *user, const int *real,
                              const int *off, const int *chunks, int step0);

/*
 * All-gather among n members (real ranks ranks[i], member i owning chunks[off[i] .. off[i+1])) with the
 * MPICH non-power-of-two fold: with p the largest power of two <= n and rem = n - p, member 2v (v < rem)
 * first copies its block to member 2v+1; the p survivors (2v+1 for v < rem, then rem+v.. in order) run
 * tc_algo_exchange_ag with log2(p) steps; finally 2v+1 copies to 2v every block except 2v's own.
 * Steps start at step0; *used gets the number of steps.  Reversed with reduce it is a reduce-scatter.
 */
tc_status tc_algo_fold_ag(tc_lplan *out, int n, const int *ranks, const int *off, const int *chunks,
                          tc_peer_fn peer, void *user, int step0, int *used);

/* Recursive doubling peer: v xor 2^k. */
int tc_algo_peer_rd(int v, int k, int p, void *user);
/* log2 of a power of two. */
int tc_algo_log2(int p);

/* Largest power of two <= n (n >= 1). */
int tc_algo_pow2_floor(int n);

#endif
