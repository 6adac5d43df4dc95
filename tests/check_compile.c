/* The library pipeline (include/tacos/compile.h) called directly: FIFO repair by more channels on the
 * two-server rail cluster, the prediction of the lowered program, structured diagnostics of a refusal, and
 * candidates priced as compile writes them (for JSON and for MSCCL targets). */
#include "testutil.h"

#include "tacos/check.h"
#include "tacos/compile.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <string.h>

static tc_topo *rail(tc_ctx *ctx)
{
    tc_topo *raw = NULL, *t = NULL;
    ck_assert_msg(tc_topo_read(ctx, "topologies/rail-2x8.xml", &raw) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(tc_topo_unwind(ctx, raw, 0, &t), TC_OK);
    tc_topo_free(raw);
    return t;
}

/* reduce-scatter 64 MiB on rail-2x8: the searched chunking (3 per rank) has transfers of one pair that
 * overtake each other on a FIFO connection whatever the send times; the lowering spreads the chunks over
 * more channels (each a connection of its own) instead of refusing, and the program it returns verifies,
 * checks and prices at the returned prediction (independent: the program converted back and simulated). */
START_TEST(test_fifo_channels)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = rail(&ctx);
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    tc_compile_opts o;
    tc_compile_opts_init(&o);
    o.gen.size = 64u << 20;
    o.lower = &lo;
    o.no_bound = 1;
    tc_compile_result r;
    tu_diag_buf.len = 0;
    ck_assert_msg(tc_compile(&ctx, t, TC_COLL_REDUCESCATTER, &o, &r) == TC_OK, "%s", tu_diags());
    ck_assert(r.searched);
    ck_assert_int_eq(r.chunks, r.search.best.chunks); /* written as searched: no other chunking needed */
    ck_assert_int_eq(r.sched->chunks_per_rank, r.chunks);
    ck_assert_int_ge(r.msccl->nchannels, 2);
    /* one channel cannot hold it: the same plan lowered with exactly one channel is refused, naming the pair */
    tc_msccl_lower_opts one = lo;
    one.channels = 1;
    tc_msccl *m1 = NULL;
    ck_assert_int_eq(tc_msccl_lower(&ctx, r.sched, &one, &m1), TC_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tu_diags(), "overtake each other; MSCCL connections are FIFO"));
    tc_msccl_limits lim;
    tc_msccl_limits_get(TC_TARGET_NCCL, &lim);
    ck_assert_msg(tc_msccl_verify(&ctx, r.msccl, &lim, "rail plan") == TC_OK, "%s", tu_diags());
    tc_sched *back = NULL;
    tc_check_opts co = {.topo = t};
    ck_assert_int_eq(tc_msccl_to_sched(&ctx, r.msccl, "back", &back), TC_OK);
    ck_assert_msg(tc_sched_check(&ctx, back, &co, "back") == TC_OK, "%s", tu_diags());
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    so.no_bound = 1;
    so.size = r.sched->size_bytes;
    tc_sim_result *sr = NULL;
    ck_assert_int_eq(tc_sim_run(&ctx, back, t, &so, &sr), TC_OK);
    ck_assert_double_eq(sr->time, r.sched->time);
    tc_sim_result_free(sr);
    tc_sched_free(back);
    tc_compile_result_free(&r);
    tc_topo_free(t);
}
END_TEST

/* a refusal, silent: nothing reaches the sink, the reason comes back as a record */
START_TEST(test_structured_diag)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    ck_assert_msg(tc_topo_read(&ctx, "topologies/mesh2d-4x4.xml", &t) == TC_OK, "%s", tu_diags());
    tc_compile_opts o;
    tc_compile_opts_init(&o);
    o.algo = "hier-ring";
    o.gen.size = 1u << 20;
    o.silent = 1;
    tc_compile_result r;
    tu_diag_buf.len = 0;
    if (tu_diag_buf.data)
        tu_diag_buf.data[0] = 0;
    ck_assert_int_eq(tc_compile(&ctx, t, TC_COLL_ALLREDUCE, &o, &r), TC_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.diag.status, TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(r.diag.msg, "hier-ring needs node ids in the topology (<nodes size=\"...\"/> or a node per npu)");
    ck_assert_ptr_null(r.sched);
    ck_assert_str_eq(tu_diags(), "");
    ck_assert_int_eq(ctx.n_errors, 0);
    tc_topo_free(t);
}
END_TEST

/* the default chunk choice: random sizes on the rail cluster; tacos with gen.chunks 0 is never slower than
 * any fixed chunking the search tries (1, 2, 4), by an independent compile of each */
START_TEST(test_default_chunks)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    unsigned long seed = tu_seed();
    printf("test_default_chunks: seed %lu\n", seed);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    tc_topo *t = rail(&ctx);
    for (int k = 0; k < 3; k++) {
        uint64_t size = (uint64_t)1 << (10 + tc_rng_below(&rng, 16));
        tc_coll c = k == 0 ? TC_COLL_ALLREDUCE : k == 1 ? TC_COLL_ALLGATHER : TC_COLL_REDUCESCATTER;
        tc_compile_opts o;
        tc_compile_opts_init(&o);
        o.gen.size = size;
        o.no_bound = 1;
        tc_compile_result r;
        ck_assert_msg(tc_compile(&ctx, t, c, &o, &r) == TC_OK, "%s", tu_diags());
        for (int ch = 1; ch <= 4; ch *= 2) {
            tc_compile_opts f = o;
            f.gen.chunks = ch;
            tc_compile_result q;
            ck_assert_msg(tc_compile(&ctx, t, c, &f, &q) == TC_OK, "%s", tu_diags());
            ck_assert_int_eq(q.searched, 0);
            ck_assert_msg(r.sched->time <= q.sched->time * (1 + 1e-12), "%s %llu: default %g > %d chunks %g",
                          tc_coll_name(c), (unsigned long long)size, r.sched->time, ch, q.sched->time);
            tc_compile_result_free(&q);
        }
        tc_compile_result_free(&r);
    }
    tc_topo_free(t);
}
END_TEST

/* candidates priced as they are written (issue 21 item 2): for random topologies, collectives, sizes and
 * MSCCL targets, --algo auto's choice (tc_tune_choose with gen.target) and compare's row for it (tc_tune_eval,
 * simulation kept) equal the compile of that algorithm to the target (tc_compile with lower), whose program is
 * priced again independently (converted back and simulated at its size); and auto to XML is never slower than
 * the default (tacos, its chunk search) to XML. */
START_TEST(test_priced_as_written)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    unsigned long seed = tu_seed();
    printf("test_priced_as_written: seed %lu\n", seed);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    const char *kinds[] = {"mesh", "torus", "ring", "fc", "rail"};
    const tc_coll colls[] = {TC_COLL_ALLREDUCE, TC_COLL_ALLGATHER, TC_COLL_REDUCESCATTER};
    const tc_msccl_target targets[] = {TC_TARGET_NCCL, TC_TARGET_EXEC};
    for (int it = 0; it < 6; it++) {
        const char *kind = kinds[tc_rng_below(&rng, 5)];
        char dims[32] = "";
        tc_topo *t = NULL;
        if (!strcmp(kind, "rail"))
            t = rail(&ctx);
        else {
            if (!strcmp(kind, "mesh") || !strcmp(kind, "torus"))
                snprintf(dims, sizeof dims, "%dx%d", 2 + (int)tc_rng_below(&rng, 3), 2 + (int)tc_rng_below(&rng, 2));
            else
                snprintf(dims, sizeof dims, "%d", 3 + (int)tc_rng_below(&rng, 6));
            ck_assert_msg(tc_topo_generate(&ctx, kind, dims, NULL, 0, &t) == TC_OK, "%s", tu_diags());
        }
        for (int l = 0; l < t->n_links; l++) { /* heterogeneous links: 0.2-2 us, 10-100 GB/s */
            t->links[l].alpha = (0.2 + 1.8 * tc_rng_unit(&rng)) * 1e-6;
            t->links[l].beta = 1 / ((10 + 90 * tc_rng_unit(&rng)) * 1e9);
        }
        const tc_coll coll = colls[tc_rng_below(&rng, 3)];
        tc_msccl_lower_opts lo;
        tc_msccl_lower_opts_init(&lo);
        lo.target = targets[tc_rng_below(&rng, 2)];
        tc_gen_opts go;
        tc_gen_opts_init(&go);
        go.size = (uint64_t)t->n_npus * 64 << tc_rng_below(&rng, 18);
        go.chunks = 0; /* compile's default chunk choice */
        go.target = &lo;
        char what[160];
        snprintf(what, sizeof what, "seed %lu: %s %s %s %llu B to %s", seed, kind, dims, tc_coll_name(coll),
                 (unsigned long long)go.size, tc_msccl_target_name(lo.target));
        tc_tune_choice c;
        ck_assert_msg(tc_tune_choose(&ctx, t, coll, &go, NULL, &c) == TC_OK, "%s: %s", what, tu_diags());
        const char *name = tc_algo_registry[c.algo].name;
        /* compare's row for the chosen algorithm */
        tc_tune_cand *rows = NULL;
        int n = 0, found = 0;
        ck_assert_int_eq(tc_tune_eval(&ctx, t, coll, &go, NULL, 0, 1, &rows, &n), TC_OK);
        for (int i = 0; i < n; i++)
            if (rows[i].algo == c.algo) {
                found = 1;
                ck_assert_int_eq(rows[i].status, TC_OK);
                ck_assert_ptr_nonnull(rows[i].res);
                ck_assert_msg(rows[i].res->time == rows[i].time && rows[i].time == c.time,
                              "%s: %s row %g (sim %g), auto %g", what, name, rows[i].time, rows[i].res->time, c.time);
            }
        ck_assert_msg(found, "%s: no row for %s", what, name);
        tc_tune_cands_free(rows, n);
        /* the compile of the chosen algorithm to the target, and its program priced again */
        tc_compile_opts o;
        tc_compile_opts_init(&o);
        o.algo = name;
        o.gen.size = go.size;
        o.lower = &lo;
        o.no_bound = 1;
        tc_compile_result r;
        ck_assert_msg(tc_compile(&ctx, t, coll, &o, &r) == TC_OK, "%s: %s", what, tu_diags());
        ck_assert_msg(r.sched->time == c.time, "%s: compile %s %g, auto %g", what, name, r.sched->time, c.time);
        tc_sched *back = NULL;
        ck_assert_int_eq(tc_msccl_to_sched(&ctx, r.msccl, "back", &back), TC_OK);
        tc_sim_opts so;
        tc_sim_opts_init(&so);
        so.no_bound = 1;
        so.size = go.size;
        tc_sim_result *sr = NULL;
        ck_assert_int_eq(tc_sim_run(&ctx, back, t, &so, &sr), TC_OK);
        ck_assert_msg(sr->time == c.time, "%s: the written %s program simulates to %g, priced %g", what, name,
                      sr->time, c.time);
        tc_sim_result_free(sr);
        tc_sched_free(back);
        tc_compile_result_free(&r);
        /* the default to the same target */
        o.algo = "tacos";
        ck_assert_msg(tc_compile(&ctx, t, coll, &o, &r) == TC_OK, "%s: %s", what, tu_diags());
        ck_assert_msg(c.time <= r.sched->time * (1 + 1e-12), "%s: auto chose %s at %g, default tacos %g", what, name,
                      c.time, r.sched->time);
        tc_compile_result_free(&r);
        tc_topo_free(t);
    }
}
END_TEST

/* the early callback's record: how often it was called and the plan's time then */
typedef struct early_rec {
    int calls;
    double time;
} early_rec;
static void early_note(void *user, const tc_sched *s)
{
    early_rec *e = user;
    e->calls++;
    e->time = s->time;
}

static void diags_clear(void)
{
    tu_diag_buf.len = 0;
    if (tu_diag_buf.data)
        tu_diag_buf.data[0] = 0;
}

/* issue 27: a plan of 100,000 transfers or more is checked on a second thread beside its simulation.  Ring
 * all-reduce on a 256-rank ring (130,560 transfers) with gen.threads 2 (the checker on a thread) and 1 (one
 * thread): the time of a direct tc_sim_run, the same bound, no diagnostics; a simulation that fails (unknown
 * model) reports its own error alone in both.  Then the plan broken at a seeded random transfer (another
 * chunk): both report exactly the checker's own finding and "ring produced an incorrect schedule", even
 * when the simulation beside it fails too (a plan that fails the check is reported as never simulated). */
START_TEST(test_check_beside_sim)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    ck_assert_msg(tc_topo_generate(&ctx, "ring", "256", NULL, 0, &t) == TC_OK, "%s", tu_diags());
    tc_sched *s = tu_gen("ring", t, TC_COLL_ALLREDUCE, 1u << 20);
    ck_assert_int_ge(s->n_xfers, 100000);
    tc_sim_result *direct = NULL;
    ck_assert_int_eq(tc_sim_run(&ctx, s, t, NULL, &direct), TC_OK);
    tc_compile_opts o;
    tc_compile_opts_init(&o);
    o.algo = "ring";
    o.keep_sim = 1;
    tc_sim_opts bad;
    tc_sim_opts_init(&bad);
    bad.model = (tc_sim_model)99;
    early_rec er;
    o.early = early_note;
    o.early_user = &er;
    for (int threads = 2; threads >= 1; threads--) {
        o.gen.threads = threads;
        o.sim = NULL;
        tc_compile_result r;
        memset(&r, 0, sizeof r);
        memset(&er, 0, sizeof er);
        diags_clear();
        s->time = -1;
        ck_assert_msg(tc_compile_check_price(&ctx, t, s, &o, &r) == TC_OK, "%s", tu_diags());
        /* the early callback: once, with the plan's time, beside the checker's thread only */
        ck_assert_int_eq(er.calls, threads == 2);
        ck_assert_int_eq(r.early, threads == 2);
        ck_assert(threads == 1 || er.time == direct->time);
        ck_assert_str_eq(tu_diags(), "");
        ck_assert_int_eq(r.checked, 1);
        ck_assert(s->time == direct->time);
        ck_assert(r.bound.time == direct->bound.time);
        ck_assert_ptr_nonnull(r.sim);
        ck_assert(r.sim->time == direct->time);
        tc_sim_result_free(r.sim);
        memset(&r, 0, sizeof r);
        o.sim = &bad;
        ck_assert_int_eq(tc_compile_check_price(&ctx, t, s, &o, &r), TC_ERR_INVALID);
        ck_assert_str_eq(tu_diags(), "tacosc: error: sim: unknown model 99\n");
        ck_assert_ptr_null(r.sim);
    }
    tc_rng rng;
    tc_rng_seed(&rng, tu_seed());
    int i = (int)tc_rng_below(&rng, (uint64_t)s->n_xfers);
    s->xfers[i].chunk = (s->xfers[i].chunk + 1 + (int)tc_rng_below(&rng, (uint64_t)s->n_chunks - 1)) % s->n_chunks;
    diags_clear();
    tc_check_opts co = {.topo = t};
    ck_assert_int_eq(tc_sched_check(&ctx, s, &co, "generated schedule"), TC_ERR_CHECK);
    char *want = NULL;
    ck_assert_int_gt(asprintf(&want, "%stacosc: error: ring produced an incorrect schedule (a bug in tacosc)\n",
                              tu_diags()),
                     0);
    for (int k = 0; k < 4; k++) {
        o.gen.threads = k % 2 ? 1 : 2;
        o.sim = k < 2 ? NULL : &bad;
        tc_compile_result r;
        memset(&r, 0, sizeof r);
        diags_clear();
        memset(&er, 0, sizeof er);
        ck_assert_int_eq(tc_compile_check_price(&ctx, t, s, &o, &r), TC_ERR_INTERNAL);
        ck_assert_str_eq(tu_diags(), want);
        /* threaded, with a simulation that succeeds: the plan went to the early callback before the
         * checker's verdict (its caller keeps nothing when the compile fails) */
        ck_assert_int_eq(er.calls, k == 0);
        tc_sim_result_free(r.sim);
    }
    free(want);
    tc_sim_result_free(direct);
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

static Suite *compile_suite(void)
{
    Suite *s = suite_create("compile");
    TCase *tc = tcase_create("compile");
    tcase_add_test(tc, test_fifo_channels);
    tcase_add_test(tc, test_structured_diag);
    tcase_add_test(tc, test_default_chunks);
    tcase_add_test(tc, test_priced_as_written);
    tcase_add_test(tc, test_check_beside_sim);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(compile_suite)
