/* The one registry of schedule generators and the synthesizer: drives --algo, --list-algos, the JSON
 * `algorithm` field and the man page.  Selection is data: add a row, never an `if`.  It sits above both
 * (src/compile): src/algo never calls into src/synth and src/sim never into src/algo
 * (scripts/check-layout.sh checks the folder graph). */
#include "tacos/algo.h"
#include "tacos/algo_classic.h"
#include "tacos/synth.h"

#include <stdio.h>
#include <string.h>

#define RS_AG_AR (TC_COLL_BIT(TC_COLL_ALLGATHER) | TC_COLL_BIT(TC_COLL_REDUCESCATTER) | \
                  TC_COLL_BIT(TC_COLL_ALLREDUCE))
#define ALL_COLLS ((1u << TC_COLL_COUNT) - 1)

const tc_algo_entry tc_algo_registry[] = {
    {"tacos", "TACOS link-chunk matching over a time-expanded network (default)", ALL_COLLS, tc_synth_tacos},
    {"ring", "logical unidirectional ring in rank order, routed on shortest paths", RS_AG_AR, tc_algo_ring},
    {"direct", "every rank exchanges with every other rank in one step", RS_AG_AR, tc_algo_direct},
    /* classic generators: begin */
    {"ring2", "bidirectional logical ring: half of each block each way", RS_AG_AR, tc_algo_ring2},
    {"rhd", "recursive halving/doubling, MPICH fold for non-powers of two", RS_AG_AR, tc_algo_rhd},
    {"dbt", "NCCL-style double binary tree, pipelined (all-reduce)", TC_COLL_BIT(TC_COLL_ALLREDUCE),
     tc_algo_dbt},
    {"swing", "Swing (1D; multi-dimensional on tori with power-of-two sides)", RS_AG_AR, tc_algo_swing},
    {"bucket", "one ring per dimension on tori and meshes", RS_AG_AR, tc_algo_bucket},
    {"dex", "hypercube direct-exchange all-to-all, log2 R steps (power-of-two R)", TC_COLL_BIT(TC_COLL_ALLTOALL),
     tc_algo_dex},
    {"shift", "shifted direct-exchange all-to-all, one peer per step, R-1 steps", TC_COLL_BIT(TC_COLL_ALLTOALL),
     tc_algo_shift},
    {"hier-ring", "two-level: inter-node ring, intra-node ring (needs nodes)", RS_AG_AR, tc_algo_hier_ring},
    {"hier-rec", "two-level: inter-node recursive, intra-node ring (needs nodes)", RS_AG_AR, tc_algo_hier_rec},
    /* classic generators: end */
    {NULL, NULL, 0, NULL},
};

const tc_algo_entry *tc_algo_find(const char *name)
{
    for (const tc_algo_entry *e = tc_algo_registry; name && e->name; e++)
        if (!strcmp(e->name, name))
            return e;
    return NULL;
}

void tc_algo_list(FILE *f)
{
    for (const tc_algo_entry *e = tc_algo_registry; e->name; e++) {
        char colls[160] = "";
        for (int c = 0; c < TC_COLL_COUNT; c++)
            if (e->colls & TC_COLL_BIT(c)) {
                if (colls[0])
                    strcat(colls, ",");
                strcat(colls, tc_coll_name((tc_coll)c));
            }
        fprintf(f, "%-10s %-40s %s\n", e->name, colls, e->desc);
    }
}

/* Refuse what no schedule can honour, before generating: a size that leaves a chunk less than one byte,
 * and a link on which one chunk takes longer than TC_TIME_MAX (the slowest link is named at its line). */
static tc_status check_size_time(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *o)
{
    uint64_t div = tc_sched_chunk_divisor(coll, topo->n_npus, o->chunks);
    if (o->size < div)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                        "size %llu B is less than one byte per chunk: %s on %d ranks with %d chunk%s per rank "
                        "cuts it into %llu chunks",
                        (unsigned long long)o->size, tc_coll_name(coll), topo->n_npus, o->chunks,
                        o->chunks == 1 ? "" : "s", (unsigned long long)div);
    const uint64_t cb = o->size / div + (o->size % div != 0);
    int worst = -1;
    double wt = 0;
    for (int l = 0; l < topo->n_links; l++) {
        double t = tc_link_cost(topo, &topo->links[l], (double)cb);
        if (!(t <= wt)) {
            wt = t;
            worst = l;
        }
    }
    if (worst >= 0 && !(wt <= TC_TIME_MAX)) {
        const tc_link *l = &topo->links[worst];
        char b[32], tb[32];
        return tc_error(ctx, TC_ERR_LIMIT, topo->file, l->line,
                        "link %d->%d: one chunk of %s takes %s on it, longer than the %.0f s tacosc handles "
                        "(use a smaller --size, more --chunks or faster links)",
                        l->src, l->dst, tc_fmt_bytes((double)cb, b, sizeof b), tc_fmt_time(wt, tb, sizeof tb),
                        TC_TIME_MAX);
    }
    return TC_OK;
}

tc_status tc_algo_run(tc_ctx *ctx, const char *name, const tc_topo *topo, tc_coll coll,
                      const tc_gen_opts *opts, tc_sched **out)
{
    const tc_algo_entry *e = tc_algo_find(name);
    if (!e)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "unknown algorithm '%s' (see --list-algos)",
                        name ? name : "");
    if (!(e->colls & TC_COLL_BIT(coll)))
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "algorithm '%s' does not generate %s", e->name,
                        tc_coll_name(coll));
    if (topo->n_switches > 0)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0,
                        "topology has %d switch(es): unwind them first (tc_topo_unwind)",
                        topo->n_switches);
    tc_gen_opts defaults;
    if (!opts) {
        tc_gen_opts_init(&defaults);
        opts = &defaults;
    }
    if (opts->chunks < 1)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "chunks per rank must be at least 1");
    if (tc_coll_rooted(coll) && (opts->root < 0 || opts->root >= topo->n_npus))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "root %d out of range (topology has %d npus)",
                        opts->root, topo->n_npus);
    tc_sched *s = NULL;
    tc_status st = check_size_time(ctx, topo, coll, opts);
    if (st)
        return st;
    if ((st = e->fn(ctx, topo, coll, opts, &s)))
        return st;
    double span = s->time > tc_sched_makespan(s) ? s->time : tc_sched_makespan(s);
    if (!(span <= TC_TIME_MAX)) {
        char tb[32];
        tc_sched_free(s);
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                        "%s: the schedule lasts %s, longer than the %.0f s tacosc handles (use a smaller --size "
                        "or faster links)",
                        e->name, tc_fmt_time(span, tb, sizeof tb), TC_TIME_MAX);
    }
    if (!s->algo && (st = tc_sched_set_names(s, e->name, topo->name))) {
        tc_sched_free(s);
        return st;
    }
    s->seed = ctx->seed;
    s->unwind = opts->unwind; /* the degree the caller unwound the topology with, recorded in the plan */
    s->switch_model = opts->switch_model; /* and the switch model */
    s->link_model = topo->link_model;     /* and the link model it was priced with */
    *out = s;
    return TC_OK;
}
