/* The algorithm registry and the foundation generators ring and direct. */
#include "testutil.h"

#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/topo.h"

/* A random connected topology: a random spanning tree made bidirectional, plus random extra directed links,
 * with two link classes of different cost. */
static tc_topo *random_topo(tc_rng *r, int n)
{
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("random", n, &t), TC_OK);
    int slow;
    ck_assert_int_eq(tc_topo_class_get(t, "slow", &slow), TC_OK);
    t->classes[slow].alpha = 1e-6;
    t->classes[slow].beta = 1.0 / 10e9;
    t->classes[slow].defined = 1;
    for (int v = 1; v < n; v++) {
        int u = (int)tc_rng_below(r, (uint64_t)v);
        int cls = tc_rng_below(r, 2) ? slow : 0;
        ck_assert_int_eq(tc_topo_add_link(t, u, v, cls, -1, -1, 0), TC_OK);
        ck_assert_int_eq(tc_topo_add_link(t, v, u, cls, -1, -1, 0), TC_OK);
    }
    int extra = (int)tc_rng_below(r, (uint64_t)n + 1);
    for (int i = 0; i < extra; i++) {
        int a = (int)tc_rng_below(r, (uint64_t)n), b = (int)tc_rng_below(r, (uint64_t)n);
        if (a != b)
            ck_assert_int_eq(tc_topo_add_link(t, a, b, 0, -1, -1, 0), TC_OK);
    }
    tc_topo_refresh_costs(t);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    return t;
}

START_TEST(test_find_and_errors)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_ptr_nonnull(tc_algo_find("tacos"));
    ck_assert_ptr_nonnull(tc_algo_find("ring"));
    ck_assert_ptr_null(tc_algo_find("nope"));
    ck_assert_ptr_null(tc_algo_find(NULL));
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("pair", 2, &t), TC_OK);
    ck_assert_int_eq(tc_topo_add_link(t, 0, 1, 0, -1, -1, 0), TC_OK);
    ck_assert_int_eq(tc_topo_add_link(t, 1, 0, 0, -1, -1, 0), TC_OK);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_algo_run(&ctx, "nope", t, TC_COLL_ALLGATHER, NULL, &s), TC_ERR_INVALID);
    ck_assert_int_eq(tc_algo_run(&ctx, "ring", t, TC_COLL_BROADCAST, NULL, &s), TC_ERR_UNSUPPORTED);
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    o.chunks = 0;
    ck_assert_int_eq(tc_algo_run(&ctx, "ring", t, TC_COLL_ALLGATHER, &o, &s), TC_ERR_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(tu_diags(), "tacosc: error: unknown algorithm 'nope' (see --list-algos)\n"
                                 "tacosc: error: algorithm 'ring' does not generate broadcast\n"
                                 "tacosc: error: chunks per rank must be at least 1\n");
    tc_topo_free(t);
}
END_TEST

/* A bidirectional ring of n NPUs with one link class of the given cost, read from text so links have lines. */
static tc_topo *ring_topo(tc_ctx *ctx, int n, const char *alpha, const char *bw)
{
    tc_buf b = {0};
    tc_buf_printf(&b, "<topology name=\"r\" npus=\"%d\">\n<class name=\"default\" alpha=\"%s\" bandwidth=\"%s\"/>\n",
                  n, alpha, bw);
    for (int i = 0; i < n; i++)
        tc_buf_printf(&b, "<link src=\"%d\" dst=\"%d\" duplex=\"1\"/>\n", i, (i + 1) % n);
    tc_buf_printf(&b, "</topology>\n");
    tc_topo *t = NULL;
    ck_assert_msg(tc_topo_read_mem(ctx, "r.xml", b.data, b.len, &t) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(tc_topo_apply_costs(ctx, t, NULL), TC_OK);
    tc_buf_free(&b);
    return t;
}

/* Issue 14: times overflowed the synthesizer's integer picoseconds and the checker blamed tacosc.  Every
 * generator now refuses, before running, a chunk that takes longer than TC_TIME_MAX on a link (named at its
 * line), and after running, a schedule longer than that; a size of less than one byte per chunk too. */
START_TEST(test_size_and_time_limits)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *slow = ring_topo(&ctx, 4, "0.5us", "1B/s"), *fast = ring_topo(&ctx, 4, "0.5us", "50GB/s");
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    tc_sched *s = NULL;
    static const char *const algos[] = {"tacos", "ring", "direct", "rhd"};
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
        o.size = 16ull << 30; /* 4 GiB chunks at 1 B/s */
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_algo_run(&ctx, algos[a], slow, TC_COLL_ALLGATHER, &o, &s), TC_ERR_LIMIT);
        ck_assert_ptr_null(s);
        ck_assert_str_eq(tu_diags(), "r.xml:3: error: link 0->1: one chunk of 4.00 GiB takes 4.295e+09 s on it, "
                                     "longer than the 1000000 s tacosc handles (use a smaller --size, more "
                                     "--chunks or faster links)\n");
        o.size = 3; /* less than one byte for each of 4 chunks */
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_algo_run(&ctx, algos[a], fast, TC_COLL_ALLGATHER, &o, &s), TC_ERR_INVALID);
        ck_assert_str_eq(tu_diags(), "tacosc: error: size 3 B is less than one byte per chunk: allgather on 4 "
                                     "ranks with 1 chunk per rank cuts it into 4 chunks\n");
        o.size = 0;
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_algo_run(&ctx, algos[a], fast, TC_COLL_ALLGATHER, &o, &s), TC_ERR_INVALID);
        o.size = 4; /* one byte each: fine */
        tu_ctx(&ctx);
        ck_assert_msg(tc_algo_run(&ctx, algos[a], fast, TC_COLL_ALLGATHER, &o, &s) == TC_OK, "%s", tu_diags());
        tc_sched_free(s);
        s = NULL;
    }
    /* each chunk fits, the whole schedule does not: 6e5 s per hop, 2 or 3 hops */
    o.size = 4 * 600000ull * 50000000000ull;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_run(&ctx, "ring", fast, TC_COLL_ALLGATHER, &o, &s), TC_ERR_LIMIT);
    ck_assert_str_eq(tu_diags(), "tacosc: error: ring: the schedule lasts 1.800e+06 s, longer than the 1000000 s "
                                 "tacosc handles (use a smaller --size or faster links)\n");
    static const tc_coll colls[] = {TC_COLL_ALLGATHER, TC_COLL_GATHER, TC_COLL_ALLREDUCE};
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_algo_run(&ctx, "tacos", fast, colls[c], &o, &s), TC_ERR_LIMIT);
        ck_assert_ptr_null(s);
        ck_assert_str_eq(tu_diags(), "tacosc: error: tacos: the schedule would last longer than 1000000 s, the "
                                     "longest time tacosc handles (use a smaller --size or faster links)\n");
    }
    tc_topo_free(slow);
    tc_topo_free(fast);
}
END_TEST

START_TEST(test_single_npu_refused)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("one", 1, &t), TC_OK);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_algo_run(&ctx, "ring", t, TC_COLL_ALLGATHER, NULL, &s), TC_ERR_UNSUPPORTED);
    ck_assert_int_eq(tc_algo_run(&ctx, "direct", t, TC_COLL_ALLGATHER, NULL, &s), TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(tu_diags(), "tacosc: error: ring needs at least 2 npus (topology has 1)\n"
                                 "tacosc: error: direct needs at least 2 npus (topology has 1)\n");
    tc_topo_free(t);
}
END_TEST

/* ring and direct pass the checker on random topologies for every collective they claim, chunks 1..3. */
START_TEST(test_random_topologies_check)
{
    tc_rng r;
    tc_rng_seed(&r, tu_seed());
    static const tc_coll colls[] = {TC_COLL_ALLGATHER, TC_COLL_REDUCESCATTER, TC_COLL_ALLREDUCE};
    for (int iter = 0; iter < 12; iter++) {
        int n = 2 + (int)tc_rng_below(&r, 23);
        tc_topo *t = random_topo(&r, n);
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 3; c++) {
                tc_ctx ctx;
                tu_ctx(&ctx);
                tc_gen_opts o;
                tc_gen_opts_init(&o);
                o.chunks = 1 + (int)tc_rng_below(&r, 3);
                o.size = (1 + tc_rng_below(&r, 1000)) * 4096;
                tc_sched *s = NULL;
                const char *name = a ? "direct" : "ring";
                ck_assert_int_eq(tc_algo_run(&ctx, name, t, colls[c], &o, &s), TC_OK);
                tc_check_opts co = {.topo = t};
                ck_assert_msg(tc_sched_check(&ctx, s, &co, "gen") == TC_OK, "%s %s n=%d k=%d: %s", name,
                              tc_coll_name(colls[c]), n, o.chunks, tu_diags());
                int phases = colls[c] == TC_COLL_ALLREDUCE ? 2 : 1;
                int expect = a ? phases * n * (n - 1) * o.chunks : phases * (n - 1) * n * o.chunks;
                ck_assert_int_eq(s->n_xfers, expect);
                ck_assert_int_eq(s->n_steps, a ? phases : phases * (n - 1));
                ck_assert_str_eq(s->algo, name);
                ck_assert(s->time > 0);
                tc_sched_free(s);
            }
        tc_topo_free(t);
    }
}
END_TEST

/* On a bidirectional ring the ring all-reduce's predicted time is 2(n-1)(alpha + beta S/n). */
START_TEST(test_ring_closed_form)
{
    tc_rng r;
    tc_rng_seed(&r, tu_seed());
    for (int iter = 0; iter < 5; iter++) {
        int n = 2 + (int)tc_rng_below(&r, 30);
        tc_topo *t = NULL;
        ck_assert_int_eq(tc_topo_create("biring", n, &t), TC_OK);
        for (int v = 0; v < n; v++) {
            tc_topo_add_link(t, v, (v + 1) % n, 0, -1, -1, 0);
            tc_topo_add_link(t, (v + 1) % n, v, 0, -1, -1, 0);
        }
        tc_topo_refresh_costs(t);
        ck_assert_int_eq(tc_topo_index(t), TC_OK);
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_gen_opts o;
        tc_gen_opts_init(&o);
        o.size = (uint64_t)n * (1 + tc_rng_below(&r, 1 << 20));
        tc_sched *s = NULL;
        ck_assert_int_eq(tc_algo_run(&ctx, "ring", t, TC_COLL_ALLREDUCE, &o, &s), TC_OK);
        double a = TC_TOPO_DEFAULT_ALPHA, b = 1.0 / TC_TOPO_DEFAULT_BW;
        double want = 2.0 * (n - 1) * (a + b * (double)o.size / n);
        ck_assert_double_eq_tol(s->time, want, want * 1e-9);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}
END_TEST

/* The router answers exactly what tc_topo_shortest_path answers, whatever order sources come in. */
START_TEST(test_router_matches_shortest_path)
{
    tc_rng r;
    tc_rng_seed(&r, tu_seed());
    for (int iter = 0; iter < 10; iter++) {
        int n = 2 + (int)tc_rng_below(&r, 40);
        tc_topo *t = random_topo(&r, n);
        tc_algo_router rt;
        ck_assert_int_eq(tc_algo_router_init(&rt, t), TC_OK);
        int *want = malloc((size_t)n * sizeof *want);
        for (int q = 0; q < 200; q++) {
            int a = (int)tc_rng_below(&r, (uint64_t)n), b = (int)tc_rng_below(&r, (uint64_t)n);
            const int *got;
            int len = tc_algo_router_path(&rt, a, b, &got);
            ck_assert_int_eq(len, tc_topo_shortest_path(t, a, b, want, n));
            for (int k = 0; k < len; k++)
                ck_assert_int_eq(got[k], want[k]);
            if (len > 0) {
                ck_assert_int_eq(t->links[got[0]].src, a);
                ck_assert_int_eq(t->links[got[len - 1]].dst, b);
            }
        }
        free(want);
        tc_algo_router_fini(&rt);
        tc_topo_free(t);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_find_and_errors);
    tcase_add_test(tc, test_single_npu_refused);
    tcase_add_test(tc, test_size_and_time_limits);
    tcase_add_test(tc, test_random_topologies_check);
    tcase_add_test(tc, test_ring_closed_form);
    tcase_add_test(tc, test_router_matches_shortest_path);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
