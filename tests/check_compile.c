/* The library pipeline (include/tacos/compile.h) called directly: FIFO repair by another chunking on the
 * two-server rail cluster, the prediction of the lowered program, structured diagnostics of a refusal, and
 * candidates priced as compile writes them. */
#include "testutil.h"

#include "tacos/check.h"
#include "tacos/compile.h"
#include "tacos/topo.h"

#include <string.h>

static tc_topo *rail(tc_ctx *ctx)
{
    tc_topo *raw = NULL, *t = NULL;
    ck_assert_msg(tc_topo_read(ctx, "topologies/rail-2x8.xml", &raw) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(tc_topo_unwind(ctx, raw, 0, &t), TC_OK);
    tc_topo_free(raw);
    return t;
}

/* reduce-scatter 64 MiB on rail-2x8: the searched chunking overtakes on a FIFO connection; tc_compile
 * writes another one instead of refusing, and the program it returns verifies, checks and prices at the
 * returned prediction (independent: the program converted back and simulated again). */
START_TEST(test_rechunk)
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
    ck_assert_int_ne(r.chunks, r.search.best.chunks); /* the search's choice could not be lowered */
    ck_assert_ptr_nonnull(strstr(tu_diags(), "cannot be lowered to FIFO connections"));
    ck_assert_int_eq(r.sched->chunks_per_rank, r.chunks);
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

static Suite *compile_suite(void)
{
    Suite *s = suite_create("compile");
    TCase *tc = tcase_create("compile");
    tcase_add_test(tc, test_rechunk);
    tcase_add_test(tc, test_structured_diag);
    tcase_add_test(tc, test_default_chunks);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(compile_suite)
