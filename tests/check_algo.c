/* Classic generators: every rank count 2..64 passes the checker; refusals give their reason. */
#include "testutil.h"

#include "tacos/algo.h"
#include "tacos/algo_classic.h"
#include "tacos/check.h"
#include "tacos/topo.h"
#include "tacos/sim.h"

#include <math.h>

#include <stdlib.h>

/* Topology builders: fully connected, bidirectional ring, 2D torus "torus-AxB" (dim 0 fastest). */
static tc_topo *mk_fc(int n)
{
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("fc", n, &t), TC_OK);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                ck_assert_int_eq(tc_topo_add_link(t, a, b, 0, -1, -1, 0), TC_OK);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    return t;
}

static tc_topo *mk_biring(int n)
{
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("biring", n, &t), TC_OK);
    for (int a = 0; a < n && n > 1; a++) {
        ck_assert_int_eq(tc_topo_add_link(t, a, (a + 1) % n, 0, -1, -1, 0), TC_OK);
        if (n > 2)
            ck_assert_int_eq(tc_topo_add_link(t, (a + 1) % n, a, 0, -1, -1, 0), TC_OK);
        else
            break;
    }
    if (n == 2)
        ck_assert_int_eq(tc_topo_add_link(t, 1, 0, 0, -1, -1, 0), TC_OK);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    return t;
}

static tc_topo *mk_torus(int a, int b)
{
    char name[64];
    snprintf(name, sizeof name, "torus-%dx%d", a, b);
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create(name, a * b, &t), TC_OK);
    for (int y = 0; y < b; y++)
        for (int x = 0; x < a; x++) {
            int v = y * a + x, r = y * a + (x + 1) % a, u = ((y + 1) % b) * a + x;
            if (a > 1 && r != v) {
                tc_topo_add_link(t, v, r, 0, -1, -1, 0);
                if (a > 2)
                    tc_topo_add_link(t, r, v, 0, -1, -1, 0);
            }
            if (b > 1 && u != v) {
                tc_topo_add_link(t, v, u, 0, -1, -1, 0);
                if (b > 2)
                    tc_topo_add_link(t, u, v, 0, -1, -1, 0);
            }
        }
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    return t;
}

static void set_nodes(tc_topo *t, int per)
{
    t->node_of = malloc((size_t)t->n_npus * sizeof *t->node_of);
    for (int r = 0; r < t->n_npus; r++)
        t->node_of[r] = r / per;
    t->n_nodes = t->n_npus / per;
}

/* Run generator `fn` with default options; it must succeed. */
static tc_sched *run_default(tc_gen_fn fn, const tc_topo *t, tc_coll coll)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    tc_sched *s = NULL;
    ck_assert_msg(fn(&ctx, t, coll, &o, &s) == TC_OK, "%s", tu_diags());
    return s;
}

/* Run `algo` for `coll`, check the schedule against the topology; fail with the diagnostics. */
static void gen_check(const char *algo, tc_topo *t, tc_coll coll, int K)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    o.chunks = K;
    o.size = (uint64_t)(1 + tu_seed() % 7) << 20;
    tc_sched *s = NULL;
    tc_status st = tc_algo_run(&ctx, algo, t, coll, &o, &s);
    ck_assert_msg(st == TC_OK, "%s %s R=%d K=%d: %s %s", algo, tc_coll_name(coll), t->n_npus, K, tc_status_str(st),
                  tu_diags());
    tc_check_opts co = {.topo = t};
    st = tc_sched_check(&ctx, s, &co, algo);
    ck_assert_msg(st == TC_OK, "%s %s on %s R=%d K=%d: %s", algo, tc_coll_name(coll), t->name, t->n_npus, K,
                  tu_diags());
    ck_assert_str_eq(s->algo, algo);
    ck_assert(s->time > 0);
    ck_assert_int_eq(s->n_ranks, t->n_npus);
    tc_sched_free(s);
}

static const char *const flat_algos[] = {"ring2", "rhd", "swing"};

START_TEST(test_flat_all_sizes)
{
    int K0 = 1 + (int)(tu_seed() % 2);
    for (int R = 2; R <= 64; R++) {
        tc_topo *fc = mk_fc(R);
        for (size_t a = 0; a < sizeof flat_algos / sizeof *flat_algos; a++)
            for (int c = TC_COLL_ALLGATHER; c <= TC_COLL_ALLREDUCE; c++)
                gen_check(flat_algos[a], fc, (tc_coll)c, K0);
        gen_check("dbt", fc, TC_COLL_ALLREDUCE, K0);
        gen_check("shift", fc, TC_COLL_ALLTOALL, K0);
        if (!(R & (R - 1)))
            gen_check("dex", fc, TC_COLL_ALLTOALL, K0);
        tc_topo_free(fc);
    }
}
END_TEST

/* Issue 22 item 5: dex is the hypercube DEX.  R = 4, K = 1, the header's trace by hand (block s->q is chunk
 * 4s + q); for R = 2..128 (powers of two, fully connected): log2 R steps, rank r sends R/2 blocks to
 * r ^ 2^k in step k and to nobody else; a non-power of two is refused naming shift. */
START_TEST(test_dex_hypercube)
{
    static const int want[][4] = {/* step, src, dst, chunk */
                                  {0, 0, 1, 1}, {0, 0, 1, 3},   {0, 1, 0, 4},   {0, 1, 0, 6},   {0, 2, 3, 9},
                                  {0, 2, 3, 11}, {0, 3, 2, 12}, {0, 3, 2, 14},  {1, 0, 2, 2},   {1, 0, 2, 6},
                                  {1, 1, 3, 3}, {1, 1, 3, 7},   {1, 2, 0, 8},   {1, 2, 0, 12},  {1, 3, 1, 9},
                                  {1, 3, 1, 13}};
    tc_ctx ctx;
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    o.size = 1 << 20;
    tc_topo *t = mk_fc(4);
    tc_sched *s = NULL;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_run(&ctx, "dex", t, TC_COLL_ALLTOALL, &o, &s), TC_OK);
    ck_assert_int_eq(s->n_steps, 2);
    ck_assert_int_eq(s->n_xfers, 16);
    int seen[16] = {0};
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        for (int w = 0; w < 16; w++)
            if (want[w][0] == x->step && want[w][1] == x->src && want[w][2] == x->dst && want[w][3] == x->chunk)
                seen[w]++;
    }
    for (int w = 0; w < 16; w++)
        ck_assert_msg(seen[w] == 1, "step %d %d->%d c%d", want[w][0], want[w][1], want[w][2], want[w][3]);
    tc_sched_free(s);
    tc_topo_free(t);
    for (int R = 2; R <= 128; R *= 2) {
        t = mk_fc(R);
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_algo_run(&ctx, "dex", t, TC_COLL_ALLTOALL, &o, &s), TC_OK);
        int lg = 0;
        while ((1 << lg) < R)
            lg++;
        ck_assert_int_eq(s->n_steps, lg);
        ck_assert_int_eq(s->n_xfers, lg * R * (R / 2));
        for (int i = 0; i < s->n_xfers; i++)
            ck_assert_int_eq(s->xfers[i].dst, s->xfers[i].src ^ (1 << s->xfers[i].step));
        tc_sched_free(s);
        tc_topo_free(t);
    }
    t = mk_fc(6);
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_run(&ctx, "dex", t, TC_COLL_ALLTOALL, &o, &s), TC_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(tu_diags(), "error: dex (hypercube direct exchange) needs a power-of-two npu count "
                                     "(topology has 6): shift exchanges with one shifted peer per step on any count"),
                  "%s", tu_diags());
    tc_topo_free(t);
}
END_TEST

START_TEST(test_on_ring_routed)
{
    const int sizes[] = {2, 3, 5, 8, 12, 16};
    const char *const algos[] = {"ring2", "rhd", "swing", "dbt"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        tc_topo *t = mk_biring(sizes[i]);
        for (size_t a = 0; a < 4; a++)
            gen_check(algos[a], t, TC_COLL_ALLREDUCE, 1 + (int)((tu_seed() + i) % 3));
        gen_check("shift", t, TC_COLL_ALLTOALL, 1);
        if (!(sizes[i] & (sizes[i] - 1)))
            gen_check("dex", t, TC_COLL_ALLTOALL, 1);
        tc_topo_free(t);
    }
}
END_TEST

START_TEST(test_bucket_and_swing_tori)
{
    for (int R = 2; R <= 64; R++) {
        int a = 1;
        for (int f = 2; f * f <= R; f++)
            if (R % f == 0)
                a = f;
        tc_topo *t = mk_torus(R / a, a);
        for (int c = TC_COLL_ALLGATHER; c <= TC_COLL_ALLREDUCE; c++) {
            gen_check("bucket", t, (tc_coll)c, 1);
            gen_check("swing", t, (tc_coll)c, 1);
        }
        tc_topo_free(t);
    }
    tc_topo *t = mk_torus(4, 8);
    gen_check("bucket", t, TC_COLL_ALLREDUCE, 2);
    gen_check("swing", t, TC_COLL_ALLREDUCE, 2);
    ck_assert_ptr_null(strstr(tu_diags(), "swing:"));
    tc_topo_free(t);
    /* a side that is not a power of two: 1D Swing, and a note that says so */
    t = mk_torus(6, 4);
    gen_check("swing", t, TC_COLL_ALLREDUCE, 1);
    ck_assert_str_eq(tu_diags(),
                     "tacosc: note: swing: torus-6x4 has a side that is not a power of two: 1D Swing over the ranks in order\n");
    tc_topo_free(t);
}
END_TEST

/* Tori and meshes are recognised from their links whatever their name; a topology with a link that is not
 * between grid neighbours (or a fully-connected one) is not a grid. */
START_TEST(test_grid_from_links)
{
    static const struct {
        const char *kind, *dims;
        int nd, want[3];
    } cases[] = {
        {"torus", "4x4", 2, {4, 4}},   {"torus", "3x5x2", 3, {3, 5, 2}}, {"mesh", "6x3", 2, {6, 3}},
        {"mesh", "2x3x4", 3, {2, 3, 4}}, {"hypercube", "3d", 3, {2, 2, 2}}, {"torus", "8x8x16", 3, {8, 8, 16}},
        {"fc", "8", 0, {0}},            {"biring", "12", 0, {0}},         {"dgx1", "", 0, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_topo *t = NULL;
        ck_assert_msg(tc_topo_generate(&ctx, cases[i].kind, cases[i].dims, NULL, 0, &t) == TC_OK, "%s",
                      tu_diags());
        ck_assert_int_eq(tc_topo_index(t), TC_OK);
        free(t->name);
        t->name = strdup("cluster-7"); /* nothing to read from the name */
        int dims[8] = {0};
        const int nd = tc_topo_grid_dims(t, dims);
        ck_assert_msg(nd == cases[i].nd, "%s %s: %d dims", cases[i].kind, cases[i].dims, nd);
        for (int d = 0; d < nd; d++)
            ck_assert_int_eq(dims[d], cases[i].want[d]);
        if (nd) {
            gen_check("bucket", t, TC_COLL_ALLREDUCE, 1);
            /* one link across the grid: no longer a torus or a mesh */
            tc_topo_add_link(t, 0, t->n_npus - 2, 0, -1, -1, 0);
            ck_assert_int_eq(tc_topo_index(t), TC_OK);
            ck_assert_int_eq(tc_topo_grid_dims(t, dims), 0);
        }
        tc_topo_free(t);
    }
}
END_TEST

/* Multi-dimensional Swing on a 4x8 torus: every peer is a torus neighbour along one dimension at the
 * Swing distance of that dimension's step (1, then 1 again, then 3 on the side of 8). */
START_TEST(test_swing_md_peers)
{
    tc_topo *t = mk_torus(4, 8);
    tc_sched *s = run_default(tc_algo_swing, t, TC_COLL_REDUCESCATTER);
    ck_assert_int_eq(s->n_steps, 5); /* log2 4 + log2 8 */
    /* reduce-scatter step k: dimensions alternate 0 (x, side 4), 1 (y, side 8) while both have steps */
    static const int dim[] = {0, 1, 0, 1, 1}, dist[] = {1, 1, 1, 1, 3};
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        const int n = dim[x->step] ? 8 : 4, stride = dim[x->step] ? 4 : 1;
        const int c = (x->src / stride) % n, c2 = (x->dst / stride) % n;
        ck_assert_int_eq(x->src - c * stride, x->dst - c2 * stride); /* the other coordinate is kept */
        const int d = ((c2 - c) % n + n) % n;
        ck_assert_msg(d == dist[x->step] || d == n - dist[x->step], "step %d: %d -> %d", x->step, x->src, x->dst);
    }
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

START_TEST(test_hier_all_sizes)
{
    for (int R = 2; R <= 64; R++)
        for (int per = 1; per <= R; per++) {
            if (R % per || (per > 8 && per != R))
                continue;
            tc_topo *t = mk_fc(R);
            set_nodes(t, per);
            for (int c = TC_COLL_ALLGATHER; c <= TC_COLL_ALLREDUCE; c++) {
                gen_check("hier-ring", t, (tc_coll)c, 1);
                gen_check("hier-rec", t, (tc_coll)c, 1);
            }
            tc_topo_free(t);
        }
}
END_TEST

/* hier-ring reduce-scatter on switch rails unwound to i -> i+1: every ring hop must go the way the links do,
 * as in the all-gather.  Oracle: the all-gather mirror (same simulated time, same longest route); before the
 * fix, 16x4 at 1 MiB took 636 us against 78.7 us and routes of 15 hops. */
START_TEST(test_hier_rs_mirror)
{
    unsigned long seed = tu_seed();
    printf("test_hier_rs_mirror seed %lu\n", seed);
    srand((unsigned)seed);
    for (int trial = 0; trial < 6; trial++) {
        char dims[32];
        const int N = trial == 0 ? 16 : 2 + rand() % 10, M = trial == 0 ? 4 : 2 + rand() % 5;
        snprintf(dims, sizeof dims, "%dx%d", N, M);
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_topo *g = NULL, *t = NULL;
        ck_assert_msg(tc_topo_generate(&ctx, "hier", dims, NULL, 0, &g) == TC_OK, "%s", tu_diags());
        ck_assert_msg(tc_topo_apply_costs(&ctx, g, NULL) == TC_OK, "%s", tu_diags());
        ck_assert_msg(tc_topo_unwind(&ctx, g, 0, &t) == TC_OK, "%s", tu_diags());
        const uint64_t size = (uint64_t)(1 + rand() % 8) << 20;
        double time[2];
        int hops[2];
        for (int i = 0; i < 2; i++) {
            tc_sched *s = tu_gen("hier-ring", t, i ? TC_COLL_REDUCESCATTER : TC_COLL_ALLGATHER, size);
            tc_check_opts co = {.topo = t};
            ck_assert_msg(tc_sched_check(&ctx, s, &co, "hier-ring") == TC_OK, "%s", tu_diags());
            hops[i] = 0;
            for (int x = 0; x < s->n_xfers; x++) {
                int h = s->xfers[x].route_len ? s->xfers[x].route_len : 1;
                if (h > hops[i])
                    hops[i] = h;
            }
            tc_sim_opts so;
            tc_sim_opts_init(&so);
            tc_sim_result *r = NULL;
            ck_assert_msg(tc_sim_run(&ctx, s, t, &so, &r) == TC_OK, "%s", tu_diags());
            time[i] = r->time;
            tc_sim_result_free(r);
            tc_sched_free(s);
        }
        ck_assert_msg(hops[1] == hops[0], "%s: reduce-scatter routes of %d hops, all-gather %d", dims, hops[1],
                      hops[0]);
        ck_assert_msg(fabs(time[1] - time[0]) <= 1e-9 * time[0], "%s %llu B: reduce-scatter %.3f us, all-gather %.3f us",
                      dims, (unsigned long long)size, time[1] * 1e6, time[0] * 1e6);
        tc_topo_free(t);
        tc_topo_free(g);
    }
}
END_TEST

/* Exact schedule shape: rhd all-gather on 4 ranks, the trace in rhd.c. */
START_TEST(test_rhd_trace)
{
    tc_topo *t = mk_fc(4);
    tc_sched *s = run_default(tc_algo_rhd, t, TC_COLL_ALLGATHER);
    ck_assert_int_eq(s->n_steps, 2);
    ck_assert_int_eq(s->n_xfers, 4 + 8);
    int step1_to2 = 0;
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->step == 0)
            ck_assert_int_eq(x->dst, x->src ^ 1);
        else
            ck_assert_int_eq(x->dst, x->src ^ 2);
        if (x->step == 1 && x->src == 0)
            step1_to2 |= 1 << x->chunk;
    }
    ck_assert_int_eq(step1_to2, 3); /* rank 0 sends chunks 0 and 1 to rank 2 */
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* Swing 1D peers on 8 ranks: distances 1, 1, 3 (reduce-scatter order), all-gather reversed. */
START_TEST(test_swing_peers)
{
    tc_topo *t = mk_fc(8);
    tc_sched *s = run_default(tc_algo_swing, t, TC_COLL_REDUCESCATTER);
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        const int rho[] = {1, -1, 3};
        int want = x->src % 2 == 0 ? (x->src + rho[x->step] + 8) % 8 : (x->src - rho[x->step] + 8) % 8;
        ck_assert_int_eq(x->dst, want);
    }
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

START_TEST(test_refusals)
{
    tc_ctx ctx;
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    tc_sched *s = NULL;
    tc_topo *t = mk_fc(6);
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_hier_ring(&ctx, t, TC_COLL_ALLGATHER, &o, &s), TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(tu_diags(), "tacosc: error: hier-ring needs node ids in the topology (<nodes size=\"...\"/> or "
                                 "a node per npu)\n");
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_bucket(&ctx, t, TC_COLL_ALLREDUCE, &o, &s), TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(tu_diags(), "tacosc: error: bucket needs a torus or mesh: a name giving its dimensions "
                                 "(e.g. torus-4x4) or links only between grid neighbours; 'fc' has neither\n");
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_dbt(&ctx, t, TC_COLL_ALLGATHER, &o, &s), TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(tu_diags(), "tacosc: error: dbt generates allreduce only, not allgather\n");
    t->node_of = malloc(6 * sizeof *t->node_of);
    const int nodes[6] = {0, 0, 0, 1, 1, 2};
    for (int i = 0; i < 6; i++)
        t->node_of[i] = nodes[i];
    t->n_nodes = 3;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_algo_hier_rec(&ctx, t, TC_COLL_ALLREDUCE, &o, &s), TC_ERR_UNSUPPORTED);
    ck_assert_str_eq(tu_diags(), "tacosc: error: hier-rec needs nodes of equal size: node 0 has 3 npus, node 1 has 2\n");
    tc_topo_free(t);
    t = mk_fc(1);
    const char *const all[] = {"ring2", "rhd", "swing", "dbt", "dex", "shift"};
    for (int a = 0; a < 6; a++) {
        tu_ctx(&ctx);
        tc_coll c = a >= 4 ? TC_COLL_ALLTOALL : TC_COLL_ALLREDUCE;
        ck_assert_int_eq(tc_algo_run(&ctx, all[a], t, c, &o, &s), TC_ERR_UNSUPPORTED);
        char want[128];
        snprintf(want, sizeof want, "needs at least 2 npus (topology has 1)");
        ck_assert_msg(strstr(tu_diags(), want), "%s: %s", all[a], tu_diags());
    }
    tc_topo_free(t);
}
END_TEST

static Suite *algo_suite(void)
{
    Suite *s = suite_create("algo");
    TCase *tc = tcase_create("generators");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_flat_all_sizes);
    tcase_add_test(tc, test_on_ring_routed);
    tcase_add_test(tc, test_dex_hypercube);
    tcase_add_test(tc, test_bucket_and_swing_tori);
    tcase_add_test(tc, test_grid_from_links);
    tcase_add_test(tc, test_hier_all_sizes);
    tcase_add_test(tc, test_hier_rs_mirror);
    tcase_add_test(tc, test_rhd_trace);
    tcase_add_test(tc, test_swing_peers);
    tcase_add_test(tc, test_swing_md_peers);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(algo_suite)
