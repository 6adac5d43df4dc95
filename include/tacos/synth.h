/**
 * @file synth.h
 * TACOS synthesis (src/synth/): time-expanded network and link-chunk matching.
 *
 * Link ids: a topology with switches is first unwound with tc_topo_unwind(ctx, topo, opts->unwind) and the
 * schedule is synthesized on the unwound topology (switches of model node and multicast stay as vertices);
 * every transfer's `link` and route are then link ids of that topology (check such a schedule against
 * tc_topo_unwind's result, not the original).  Without switches, link ids are the topology's own.
 *
 * Output: diagnostics go through ctx (errors; with trials > 1 a TC_DIAG_NOTE naming the winning seed).
 * The only direct output is a transient progress line on stderr ("\rtacos: round R, P% of
 * postconditions, S s", erased at the end), written when ctx->progress is set, stderr is a terminal and
 * one synthesis run has lasted more than 2 s.
 *
 * Matching: opts->match TC_MATCH_RANDOM is the paper's (random postcondition order, cheapest link holding
 * the chunk); TC_MATCH_BEST (default) ranks candidates by earliest arrival, fewest alternative in-links,
 * rarity, and takes a maximum matching per destination; above 2^20 (npu, chunk) pairs it forwards in
 * arrival order (FIFO).  See src/synth/ten.c.  Memory: n_npus x n_chunks bits (claims) plus per-NPU
 * arrival lists (2 bytes per entry up to 65536 chunks, compacted) plus the transfer list.  Gather, scatter
 * and all-to-all take one earliest-arrival path per chunk over link timetables instead (src/synth/paths.c;
 * memory: R x vertices time-distances for all-to-all and scatter, the timetables' busy blocks).
 */
#ifndef TACOS_SYNTH_H
#define TACOS_SYNTH_H

#include "tacos/algo.h"

/**
 * The `tacos` generator (registry entry).  Serves every collective.  Uses opts->size, chunks, root, unwind,
 * match, trials, threads, stats_only, no_overlap and ctx->seed.  Every transfer is on one physical link
 * (`link` set, no route), or crosses one switch vertex (link -1, a route of the link into the switch and the
 * link out, from NPU to NPU); times in seconds; `step` is the index of the event round (or, for gather, scatter and all-to-all,
 * of the distinct start time) in which the transfer starts (counted backwards in the reduce phases, which
 * are synthesized reversed).  With stats_only the schedule has no transfers, only `time` and `n_steps`.
 * Errors: TC_ERR_INVALID when an NPU cannot reach another that it must (the message names the pair),
 * TC_ERR_LIMIT for an all-to-all of more than 2^24 chunks.
 */
tc_status tc_synth_tacos(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                         tc_sched **out);

/** One candidate of the search: chunks per rank, unwinding degree (0: each switch's own), synthesizer's time
 *  in seconds (0 when the search had one candidate and synthesized nothing). */
typedef struct tc_synth_pick {
    int chunks, unwind;
    double time;
} tc_synth_pick;

typedef struct tc_synth_search {
    tc_synth_pick best;
    tc_synth_pick runner_up;  /**< chunks == 0 when there is none */
    int candidates;           /**< candidates considered */
    int synthesized;          /**< of which synthesized (the others: hopeless by their bound or estimate,
                                   or rounds not reached) */
    int stopped;              /**< of the synthesized, stopped once their clock passed the best time
                                   finished before their round: slower than best, by how much unknown (the
                                   runner-up is the fastest of those finished; one of these may be faster) */
    int simulated;            /**< the times are the simulator's (small problems: every candidate a full
                                   plan), else the synthesizer's */
    double seconds;           /**< wall time of the search */
} tc_synth_search;

/**
 * `--chunks auto` / `--unwind auto` (src/synth/auto.c): synthesize candidates (chunks per rank 1, 2, 3, 4,
 * 6, 8 when search_chunks, else opts->chunks; unwinding degrees 1, 2, 4, ... up to the smallest switch's
 * ports - 1 when search_unwind and `topo` has switches, else opts->unwind) without transfer lists, in up to
 * opts->threads threads, by rounds of chunk counts while they improve, and return the fastest and the
 * runner-up among those finished, by the simulated time of their plans when every candidate has at most
 * 2^14 transfers (then every round runs), else by the synthesizer's time (ties: fewer chunks, lower degree;
 * independent of the thread count).  `topo` keeps its switches; the caller unwinds it
 * with the chosen degree and synthesizes the choice with tc_synth_tacos.  Candidates whose transfer count
 * would pass 2^27 are skipped (chunks 1 always stays), and degrees above 1 whose transfers times link ratio
 * to degree 1 would pass 2^24.  The first candidate (1 chunk, lowest degree) runs alone first; none is
 * synthesized when it fails.  Each round's cut is the best time finished before it: a candidate whose bound
 * is above the cut, or above 1.5 times the bound of the candidate that set the cut (an estimate: latency
 * bound), is never synthesized, and (synthesizer's time) one whose clock passes it stops
 * (out->stopped).
 */
tc_status tc_synth_tacos_search(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                                int search_chunks, int search_unwind, tc_synth_search *out);
/**
 * The same, and the winner's plan into *plan (owned by the caller; NULL when the search did not keep it):
 * the first candidate (the least work: one chunk per rank, the lowest degree) is always synthesized as
 * tc_synth_tacos would with `opts` (transfers unless opts->stats_only; only with opts->trials <= 1), and so
 * is every other when opts->stats_only or when small (at most 2^21 transfers), so the caller need not
 * synthesize the choice again (issue 27: --chunks auto costs about one synthesis where the first candidate
 * wins, as in every latency-bound case).  The plan's link ids are those of `topo` unwound to the degree the
 * search chose.
 */
tc_status tc_synth_tacos_search_plan(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *opts,
                                     int search_chunks, int search_unwind, tc_synth_search *out, tc_sched **plan);

#endif
