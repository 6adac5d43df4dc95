/* Candidates priced at one size (what `tacosc compare` prints and what the dispatcher and the tuning data
 * are made of), candidate sets, topology ids and size sweeps. */
#include "tune_int.h"

#include "tacos/check.h"
#include "tacos/compile.h"
#include "tacos/synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tc_tune_registry_size(void)
{
    int n = 0;
    while (tc_algo_registry[n].name)
        n++;
    return n;
}

int tc_tune_algo_index(const char *name)
{
    const tc_algo_entry *e = tc_algo_find(name);
    return e ? (int)(e - tc_algo_registry) : -1;
}

tc_status tc_tune_algos_parse(tc_ctx *ctx, const char *list, tc_tune_algos *out)
{
    tc_tune_algos set = 0;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[64];
        if (len == 0 || len >= sizeof name)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--algos: '%s' is not a comma-separated list of algorithms",
                            list);
        memcpy(name, p, len);
        name[len] = 0;
        int i = tc_tune_algo_index(name);
        if (i < 0)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--algos: unknown algorithm '%s' (see tacosc --list-algos)",
                            name);
        set |= (tc_tune_algos)1 << i;
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = set;
    return TC_OK;
}

tc_status tc_tune_chunks(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go, int algo,
                         int *chunks)
{
    /* priced as compile writes it: chunks < 1 is compile's default choice, the --chunks auto search for
     * tacos (src/synth/auto.c) and one chunk per rank for the other generators (cmd_compile.c) */
    *chunks = go->chunks;
    if (go->chunks >= 1)
        return TC_OK;
    *chunks = 1;
    if (tc_algo_registry[algo].fn != tc_synth_tacos)
        return TC_OK;
    tc_gen_opts g = *go;
    g.chunks = 1;
    tc_synth_search search;
    tc_status st = tc_synth_tacos_search(ctx, topo, coll, &g, 1, 0, &search);
    if (!st)
        *chunks = search.best.chunks;
    return st;
}

tc_status tc_tune_price(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                        const tc_sim_opts *so, int algo, double *time, tc_sim_result **res, char *note,
                        size_t note_n)
{
    /* the compile pipeline itself (tc_compile), silent: chunks < 1 is compile's default choice, and a
     * refusal's reason comes back as its structured diagnostic */
    tc_compile_opts co;
    tc_compile_opts_init(&co);
    co.algo = tc_algo_registry[algo].name;
    co.gen = *go;
    co.sim = so;
    co.lower = go->target; /* an MSCCL target: the lowered program's time, as compile writes it */
    co.mscclpp = go->mscclpp_target; /* likewise an MSCCL++ plan */
    co.keep_sim = res != NULL;
    co.no_bound = so ? so->no_bound : 1;
    co.silent = 1;
    co.program_only = 1; /* only cr.sched->time is read */
    tc_compile_result cr;
    tc_status st = tc_compile(ctx, topo, coll, &co, &cr);
    if (note && note_n)
        note[0] = 0;
    if (st == TC_OK) {
        *time = cr.sched->time;
        if (res) {
            *res = cr.sim;
            cr.sim = NULL;
        }
    } else if (note && note_n) /* with the input's location (a link's line in the topology) */
        tc_diag_note(cr.diag.file, cr.diag.line, cr.diag.msg, note, note_n);
    tc_compile_result_free(&cr);
    return st;
}

static int cmp_cand(const void *pa, const void *pb)
{
    const tc_tune_cand *a = pa, *b = pb;
    int oa = a->status == TC_OK, ob = b->status == TC_OK;
    if (oa != ob)
        return oa ? -1 : 1;
    if (oa && a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->algo - b->algo;
}

tc_status tc_tune_eval(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                       const tc_sim_opts *so, tc_tune_algos algos, int keep, tc_tune_cand **out, int *n_out)
{
    int nreg = tc_tune_registry_size(), n = 0;
    tc_tune_cand *c = calloc((size_t)nreg + 1, sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    for (int i = 0; i < nreg; i++) {
        if (!(tc_algo_registry[i].colls & TC_COLL_BIT(coll)) || (algos && !(algos >> i & 1)))
            continue;
        tc_tune_cand *w = &c[n++];
        w->algo = i;
        w->status = tc_tune_price(ctx, topo, coll, go, so, i, &w->time, keep ? &w->res : NULL, w->note,
                                  sizeof w->note);
        if (w->status == TC_ERR_NOMEM) {
            tc_tune_cands_free(c, n);
            return TC_ERR_NOMEM;
        }
    }
    qsort(c, (size_t)n, sizeof *c, cmp_cand);
    *out = c;
    *n_out = n;
    return TC_OK;
}

void tc_tune_cands_free(tc_tune_cand *c, int n)
{
    if (!c)
        return;
    for (int i = 0; i < n; i++)
        tc_sim_result_free(c[i].res);
    free(c);
}

void tc_tune_topo_id_get(const tc_topo *topo, tc_tune_topo_id *out)
{
    uint64_t h = TC_FNV_OFFSET;
    int32_t v[2] = {topo->n_npus, topo->n_links};
    h = tc_tune_fnv(h, v, sizeof v);
    for (int i = 0; i < topo->n_links; i++) {
        const tc_link *l = &topo->links[i];
        int32_t e[2] = {l->src, l->dst};
        double c[2] = {l->alpha, l->beta}; /* their bits: the values the cost file gave, parsed */
        h = tc_tune_fnv(h, e, sizeof e);
        h = tc_tune_fnv(h, c, sizeof c);
    }
    /* switch vertices: a node switch and a multicast one have the same links (and topologies without
     * them keep the fingerprint they had) */
    for (int i = 0; i < topo->n_swnodes; i++) {
        const int32_t m = 1 + topo->swnodes[i].multicast;
        h = tc_tune_fnv(h, &m, sizeof m);
    }
    int nodes = 1, rpn = topo->n_npus;
    if (topo->node_of && topo->n_nodes > 0) {
        h = tc_tune_fnv(h, topo->node_of, sizeof *topo->node_of * (size_t)topo->n_npus);
        nodes = topo->n_nodes;
        int maxid = 0;
        for (int i = 0; i < topo->n_npus; i++)
            if (topo->node_of[i] > maxid)
                maxid = topo->node_of[i];
        int *count = calloc((size_t)maxid + 1, sizeof *count);
        if (count) {
            rpn = 0;
            for (int i = 0; i < topo->n_npus; i++)
                if (++count[topo->node_of[i]] > rpn)
                    rpn = count[topo->node_of[i]];
            free(count);
        }
    }
    out->name = topo->name;
    out->fingerprint = h;
    out->ranks = topo->n_npus;
    out->nodes = nodes;
    out->rpn = rpn;
}

const char *tc_tune_source_name(tc_tune_source s) { return s == TC_TUNE_MEASURE ? "measure" : "sim"; }

void tc_tune_opts_init(tc_tune_opts *o)
{
    memset(o, 0, sizeof *o);
    tc_gen_opts_init(&o->gen);
    o->source = TC_TUNE_SIM;
    o->mpirun = "mpirun";
    o->tacos_run = "tacos-run";
    o->repeats = 3;
    o->iters = 5;
}

tc_status tc_tune_sizes_parse(tc_ctx *ctx, const char *spec, uint64_t **out, int *n_out)
{
    char buf[128];
    if (strlen(spec) >= sizeof buf)
        goto bad;
    strcpy(buf, spec);
    char *lo_s = buf, *hi_s = strchr(buf, ':'), *n_s = NULL;
    if (!hi_s)
        goto bad;
    *hi_s++ = 0;
    if ((n_s = strchr(hi_s, ':')))
        *n_s++ = 0;
    uint64_t lo, hi;
    long per = 4;
    if (tc_parse_size(lo_s, &lo) || tc_parse_size(hi_s, &hi))
        goto bad;
    if (n_s) {
        char *end;
        errno = 0;
        per = strtol(n_s, &end, 10);
        if (errno || end == n_s || *end || per < 1 || per > 64)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                            "--sizes: '%s': the points per doubling must be an integer in [1, 64]", n_s);
    }
    if (lo < 1 || hi < lo)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--sizes: '%s': need 1 <= LO <= HI", spec);
    if ((double)hi / (double)lo > 0x1p40)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--sizes: '%s' spans more than 40 doublings", spec);
    int cap = (int)(per * (log2((double)hi / (double)lo) + 1)) + 2, n = 0;
    uint64_t *s = malloc((size_t)cap * sizeof *s);
    if (!s)
        return TC_ERR_NOMEM;
    for (int i = 0; n < cap; i++) {
        double v = (double)lo * exp2((double)i / (double)per);
        uint64_t b = (uint64_t)llround(v);
        if (b > hi && v > (double)hi * (1 + 1e-12))
            break;
        if (b > hi)
            b = hi;
        if (n == 0 || b != s[n - 1])
            s[n++] = b;
    }
    *out = s;
    *n_out = n;
    return TC_OK;
bad:
    return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                    "--sizes: '%s' is not LO:HI[:N] (byte sizes with K, M, G suffixes; N points per doubling)", spec);
}
