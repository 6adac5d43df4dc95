/* Core: status strings, diagnostics layout, RNG, size parsing, collectives, schedule IR. */
#include "testutil.h"

#include <math.h>

START_TEST(test_status_str)
{
    ck_assert_str_eq(tc_status_str(TC_OK), "success");
    ck_assert_str_eq(tc_status_str(TC_ERR_NOMEM), "out of memory");
    ck_assert_str_eq(tc_status_str(TC_ERR_LIMIT), "runtime limit exceeded");
    ck_assert_str_eq(tc_status_str((tc_status)-99), "unknown status");
}
END_TEST

START_TEST(test_diag_layout)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_error(&ctx, TC_ERR_INVALID, "bad.xml", 7, "link %d->%d: npu %d out of range", 3, 9, 9),
                     TC_ERR_INVALID);
    tc_warn(&ctx, "c.cost", 0, "unused class");
    tc_diag(&ctx, TC_DIAG_NOTE, "t.xml", 3, 5, "here");
    tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "no file");
    ck_assert_str_eq(tu_diags(), "bad.xml:7: error: link 3->9: npu 9 out of range\n"
                                 "c.cost: warning: unused class\n"
                                 "t.xml:3:5: note: here\n"
                                 "tacosc: error: no file\n");
    ck_assert_int_eq(ctx.n_errors, 2);
    ck_assert_int_eq(ctx.n_warnings, 1);
}
END_TEST

START_TEST(test_rng)
{
    tc_rng a, b;
    unsigned long seed = tu_seed();
    tc_rng_seed(&a, seed);
    tc_rng_seed(&b, seed);
    int hist[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t x = tc_rng_below(&a, 10);
        ck_assert_uint_eq(x, tc_rng_below(&b, 10));
        ck_assert_uint_lt(x, 10);
        hist[x]++;
        double u = tc_rng_unit(&a);
        tc_rng_unit(&b);
        ck_assert(u >= 0 && u < 1);
    }
    for (int i = 0; i < 10; i++) /* uniform within 5 % */
        ck_assert_msg(hist[i] > 9500 && hist[i] < 10500, "bucket %d has %d", i, hist[i]);
    tc_rng_seed(&b, seed + 1);
    tc_rng_seed(&a, seed);
    ck_assert_uint_ne(tc_rng_next(&a), tc_rng_next(&b));
}
END_TEST

START_TEST(test_parse_size)
{
    uint64_t v;
    ck_assert_int_eq(tc_parse_size("1G", &v), TC_OK);
    ck_assert_uint_eq(v, 1ull << 30);
    ck_assert_int_eq(tc_parse_size("64M", &v), TC_OK);
    ck_assert_uint_eq(v, 64ull << 20);
    ck_assert_int_eq(tc_parse_size("3KiB", &v), TC_OK);
    ck_assert_uint_eq(v, 3072);
    ck_assert_int_eq(tc_parse_size("1.5K", &v), TC_OK);
    ck_assert_uint_eq(v, 1536);
    ck_assert_int_eq(tc_parse_size("12345", &v), TC_OK);
    ck_assert_uint_eq(v, 12345);
    ck_assert_int_eq(tc_parse_size("", &v), TC_ERR_INVALID);
    ck_assert_int_eq(tc_parse_size("-4", &v), TC_ERR_INVALID);
    ck_assert_int_eq(tc_parse_size("4X", &v), TC_ERR_INVALID);
    ck_assert_int_eq(tc_parse_size("4KQ", &v), TC_ERR_INVALID);
    ck_assert_int_eq(tc_parse_size("0.3", &v), TC_ERR_INVALID);
    /* whole numbers exactly, past 2^53 too (a double would read 2^53 + 1 as 2^53), random ones among them */
    ck_assert_int_eq(tc_parse_size("9007199254740993", &v), TC_OK);
    ck_assert_uint_eq(v, (1ull << 53) + 1);
    const uint64_t r = ((uint64_t)tu_seed() << 20 | 12345u) & ((1ull << 62) - 1);
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)r);
    ck_assert_int_eq(tc_parse_size(b, &v), TC_OK);
    ck_assert_uint_eq(v, r);
    snprintf(b, sizeof b, "%llu K", (unsigned long long)(r >> 12));
    ck_assert_int_eq(tc_parse_size(b, &v), TC_OK);
    ck_assert_uint_eq(v, (r >> 12) * 1024);
    ck_assert_int_eq(tc_parse_size("18446744073709551616", &v), TC_ERR_INVALID); /* 2^64 */
    ck_assert_int_eq(tc_parse_size("17179869184G", &v), TC_ERR_INVALID);       /* 2^64 bytes */
    /* a fraction or exponent where a double cannot hold every whole number: refused, not rounded */
    ck_assert_int_eq(tc_parse_size("9007199254740993.0", &v), TC_ERR_INVALID);
}
END_TEST

/* Times print with a fixed precision; beyond TC_TIME_MAX (or not finite) in exponent form, never as the
 * 63-digit number issue 14 saw for alpha="1e308s". */
START_TEST(test_fmt_time)
{
    char b[32];
    ck_assert_str_eq(tc_fmt_time(12.345e-6, b, sizeof b), "12.345 us");
    ck_assert_str_eq(tc_fmt_time(2.5e-3, b, sizeof b), "2.500 ms");
    ck_assert_str_eq(tc_fmt_time(999999.5, b, sizeof b), "999999.500 s");
    ck_assert_str_eq(tc_fmt_time(1e6, b, sizeof b), "1.000e+06 s");
    ck_assert_str_eq(tc_fmt_time(1e308, b, sizeof b), "1.000e+308 s");
    ck_assert_str_eq(tc_fmt_time(INFINITY, b, sizeof b), "inf s");
}
END_TEST

START_TEST(test_coll)
{
    tc_coll c;
    for (int i = 0; i < TC_COLL_COUNT; i++) {
        ck_assert_int_eq(tc_coll_parse(tc_coll_name((tc_coll)i), &c), TC_OK);
        ck_assert_int_eq(c, i);
    }
    ck_assert_int_eq(tc_coll_parse("all-reduce", &c), TC_OK);
    ck_assert_int_eq(c, TC_COLL_ALLREDUCE);
    ck_assert_int_eq(tc_coll_parse("Reduce-Scatter", &c), TC_OK);
    ck_assert_int_eq(c, TC_COLL_REDUCESCATTER);
    ck_assert_int_eq(tc_coll_parse("allsum", &c), TC_ERR_INVALID);
    ck_assert_double_eq_tol(tc_coll_busbw_factor(TC_COLL_ALLREDUCE, 8), 1.75, 1e-12);
    ck_assert_double_eq_tol(tc_coll_busbw_factor(TC_COLL_ALLGATHER, 8), 0.875, 1e-12);
    ck_assert_double_eq_tol(tc_coll_busbw_factor(TC_COLL_BROADCAST, 8), 1.0, 1e-12);
    ck_assert(tc_coll_reduces(TC_COLL_REDUCE) && !tc_coll_reduces(TC_COLL_GATHER));
    ck_assert(tc_coll_rooted(TC_COLL_SCATTER) && !tc_coll_rooted(TC_COLL_ALLTOALL));
}
END_TEST

START_TEST(test_sched_create)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 4, 2, 1000, &s), TC_OK);
    ck_assert_int_eq(s->n_chunks, 8);
    ck_assert_uint_eq(s->chunk_bytes, 125);
    tc_sched_free(s);
    ck_assert_int_eq(tc_sched_create(TC_COLL_BROADCAST, 4, 3, 1000, &s), TC_OK);
    ck_assert_int_eq(s->n_chunks, 3);
    ck_assert_uint_eq(s->chunk_bytes, 334);
    tc_sched_free(s);
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLTOALL, 4, 1, 1024, &s), TC_OK);
    ck_assert_int_eq(s->n_chunks, 16);
    tc_sched_free(s);
    s = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 0, 1, 8, &s), TC_ERR_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLTOALL, 70000, 1, 8, &s), TC_ERR_LIMIT);
    tc_sched_free(NULL);
}
END_TEST

START_TEST(test_sched_add_sort_clone)
{
    tc_rng r;
    tc_rng_seed(&r, tu_seed());
    tc_sched *s = NULL, *c = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 16, 1, 1 << 20, &s), TC_OK);
    tc_sched_sort(s); /* nothing to sort, nothing touched (UBSan under make asan: no qsort of NULL) */
    ck_assert_int_eq(s->n_xfers, 0);
    int route[3];
    for (int i = 0; i < 1000; i++) {
        double t = (double)tc_rng_below(&r, 50);
        for (int k = 0; k < 3; k++)
            route[k] = (int)tc_rng_below(&r, 100);
        int rl = (int)tc_rng_below(&r, 4);
        ck_assert_int_eq(tc_sched_add(s, (int)tc_rng_below(&r, 16), (int)tc_rng_below(&r, 16),
                                      (int)tc_rng_below(&r, 16), TC_OP_COPY, -1, (int)t, t, t + 1, route, rl),
                         TC_OK);
        ck_assert_int_eq(s->xfers[i].route_len, rl);
        for (int k = 0; k < rl; k++)
            ck_assert_int_eq(s->route[s->xfers[i].route_off + k], route[k]);
    }
    tc_sched_set_names(s, "ring", "t");
    tc_sched_sort(s);
    for (int i = 1; i < s->n_xfers; i++)
        ck_assert(s->xfers[i - 1].t_start <= s->xfers[i].t_start);
    int max_step = 0;
    for (int i = 0; i < s->n_xfers; i++)
        max_step = s->xfers[i].step > max_step ? s->xfers[i].step : max_step;
    ck_assert_int_eq(s->n_steps, max_step + 1);
    ck_assert_double_eq(tc_sched_makespan(s), s->xfers[s->n_xfers - 1].t_end);
    ck_assert_int_eq(tc_sched_clone(s, &c), TC_OK);
    ck_assert_int_eq(c->n_xfers, s->n_xfers);
    ck_assert_int_eq(memcmp(c->xfers, s->xfers, sizeof *s->xfers * (size_t)s->n_xfers), 0);
    ck_assert_int_eq(memcmp(c->route, s->route, sizeof *s->route * (size_t)s->n_route), 0);
    ck_assert_str_eq(c->algo, "ring");
    tc_sched_free(s);
    tc_sched_free(c);
}
END_TEST

/* Source lines follow their transfers through sort, growth and clone; errors about a transfer name them. */
START_TEST(test_sched_lines)
{
    tc_rng r;
    tc_rng_seed(&r, tu_seed());
    tc_sched *s = NULL, *c = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 8, 1, 1 << 20, &s), TC_OK);
    const int n = 300 + (int)tc_rng_below(&r, 300), base = 1 + (int)tc_rng_below(&r, 1000);
    for (int i = 0; i < n; i++) {
        double t = (double)tc_rng_below(&r, 20);
        ck_assert_int_eq(tc_sched_add(s, (int)tc_rng_below(&r, 8), (int)tc_rng_below(&r, 8), (int)tc_rng_below(&r, 8),
                                      TC_OP_COPY, i, (int)t, t, t + 1, NULL, 0),
                         TC_OK); /* link = i tells the transfers apart */
        ck_assert_int_eq(tc_sched_line(s, i), 0);
    }
    for (int i = 1; i < n; i += 2) /* odd transfers only: the others stay unknown */
        ck_assert_int_eq(tc_sched_set_line(s, i, base + i), TC_OK);
    ck_assert_int_eq(tc_sched_set_line(s, n, 1), TC_ERR_INVALID);
    ck_assert_int_eq(tc_sched_set_line(s, -1, 1), TC_ERR_INVALID);
    ck_assert_int_eq(tc_sched_set_file(s, "plan.json"), TC_OK);
    tc_sched_sort(s);
    ck_assert(s->xfers[0].link != 0 || s->xfers[1].link != 1 || s->xfers[n - 1].link != n - 1); /* it moved */
    for (int i = 0; i < n; i++) {
        const int orig = s->xfers[i].link;
        ck_assert_int_eq(tc_sched_line(s, i), orig % 2 ? base + orig : 0);
    }
    /* growth past the capacity: new transfers have no line, old ones keep theirs */
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(tc_sched_add(s, 0, 1, 0, TC_OP_COPY, n + i, 30, 30, 31, NULL, 0), TC_OK);
    ck_assert_int_eq(tc_sched_set_line(s, 2 * n - 1, 7), TC_OK);
    ck_assert_int_eq(tc_sched_clone(s, &c), TC_OK);
    ck_assert_str_eq(c->file, "plan.json");
    for (int i = 0; i < 2 * n; i++) {
        const int orig = c->xfers[i].link;
        ck_assert_int_eq(tc_sched_line(c, i), orig == 2 * n - 1 ? 7 : orig < n && orig % 2 ? base + orig : 0);
        ck_assert_int_eq(tc_sched_line(c, i), tc_sched_line(s, i));
    }
    int known = -1, unknown = -1;
    for (int i = 0; i < n; i++)
        *(tc_sched_line(s, i) ? &known : &unknown) = i;
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_sched_error(&ctx, TC_ERR_INVALID, s, known, "transfer %d: bad", known), TC_ERR_INVALID);
    tc_sched_error(&ctx, TC_ERR_INVALID, s, unknown, "transfer %d: bad", unknown);
    tc_sched_error(&ctx, TC_ERR_INVALID, s, -1, "no transfer");
    char want[256];
    snprintf(want, sizeof want, "plan.json:%d: error: transfer %d: bad\nplan.json: error: transfer %d: bad\n"
             "plan.json: error: no transfer\n", tc_sched_line(s, known), known, unknown);
    ck_assert_str_eq(tu_diags(), want);
    tc_sched_free(s);
    tc_sched_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* not Check's 4 s default: the suite must pass on a loaded machine */
    tcase_add_test(tc, test_status_str);
    tcase_add_test(tc, test_diag_layout);
    tcase_add_test(tc, test_rng);
    tcase_add_test(tc, test_parse_size);
    tcase_add_test(tc, test_fmt_time);
    tcase_add_test(tc, test_coll);
    tcase_add_test(tc, test_sched_create);
    tcase_add_test(tc, test_sched_add_sort_clone);
    tcase_add_test(tc, test_sched_lines);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
