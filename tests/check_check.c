/* The schedule checker (src/core/check.c): valid schedules of every collective pass, each planted error is
 * caught with its exact diagnostic, random schedules from tu_seed. */
#include "testutil.h"

#include "tacos/check.h"
#include "tacos/topo.h"

#include <math.h>

#define US 1e-6

static tc_rng rng;
static void seed_rng(int salt) { tc_rng_seed(&rng, (uint64_t)tu_seed() * 1000003u + (uint64_t)salt); }
static int rnd(int lo, int hi) { return lo + (int)tc_rng_below(&rng, (uint64_t)(hi - lo + 1)); }

static tc_sched *mk(tc_coll c, int R, int K)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_sched_create(c, R, K, (uint64_t)R * K * 4096, &s), TC_OK);
    return s;
}

static void add(tc_sched *s, int src, int dst, int chunk, tc_op op, int link, int step, double t0, double t1)
{
    ck_assert_int_eq(tc_sched_add(s, src, dst, chunk, op, link, step, t0, t1, NULL, 0), TC_OK);
}

static tc_status run(const tc_sched *s, const tc_check_opts *o)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    return tc_sched_check(&ctx, s, o, "plan.json");
}

static void expect_ok(const tc_sched *s, const tc_check_opts *o)
{
    tc_status st = run(s, o);
    ck_assert_msg(st == TC_OK, "%s R=%d K=%d: %s", tc_coll_name(s->coll), s->n_ranks, s->chunks_per_rank,
                  tu_diags());
    ck_assert_str_eq(tu_diags(), "");
}

static void expect_err(const tc_sched *s, const tc_check_opts *o, const char *msg)
{
    ck_assert_int_eq(run(s, o), TC_ERR_CHECK);
    ck_assert_str_eq(tu_diags(), msg);
}

/* A ring topology: link r joins r -> r+1 (mod R). */
static tc_topo *ring_topo(int R)
{
    tc_topo *t = calloc(1, sizeof *t);
    t->n_npus = R;
    t->n_links = t->cap_links = R;
    t->links = calloc((size_t)R, sizeof *t->links);
    for (int r = 0; r < R; r++) {
        t->links[r].src = r;
        t->links[r].dst = (r + 1) % R;
    }
    return t;
}
static void ring_topo_free(tc_topo *t)
{
    free(t->links);
    free(t);
}

/* ---------------------------------------------------------------------------------------------- */
/* Generators of valid schedules                                                                   */

static tc_sched *direct_allgather(int R, int K)
{
    tc_sched *s = mk(TC_COLL_ALLGATHER, R, K);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < K; j++)
            for (int d = 0; d < R; d++)
                if (d != r)
                    add(s, r, d, r * K + j, TC_OP_COPY, -1, 0, 0, 1 * US);
    return s;
}

/* Ring phases on link r (r -> r+1): one chunk per slot. phase 0: reduce-scatter, 1: all-gather. */
static void ring_phase(tc_sched *s, int R, int K, int phase, int slot0, int step0)
{
    for (int st = 0; st < R - 1; st++)
        for (int r = 0; r < R; r++)
            for (int j = 0; j < K; j++) {
                int b = phase == 0 ? ((r - 1 - st) % R + R) % R : ((r - st) % R + R) % R;
                int slot = slot0 + st * K + j;
                add(s, r, (r + 1) % R, b * K + j, phase == 0 ? TC_OP_REDUCE : TC_OP_COPY, r, step0 + st,
                    slot * US, (slot + 1) * US);
            }
}

static tc_sched *ring_allgather(int R, int K)
{
    tc_sched *s = mk(TC_COLL_ALLGATHER, R, K);
    ring_phase(s, R, K, 1, 0, 0);
    return s;
}

static tc_sched *ring_reducescatter(int R, int K)
{
    tc_sched *s = mk(TC_COLL_REDUCESCATTER, R, K);
    ring_phase(s, R, K, 0, 0, 0);
    return s;
}

static tc_sched *ring_allreduce(int R, int K)
{
    tc_sched *s = mk(TC_COLL_ALLREDUCE, R, K);
    ring_phase(s, R, K, 0, 0, 0);
    ring_phase(s, R, K, 1, (R - 1) * K, R - 1);
    return s;
}

/* Binomial tree from root: broadcast forward, reduce reversed in time. */
static tc_sched *binomial(tc_coll c, int R, int K, int root)
{
    tc_sched *s = mk(c, R, K);
    s->root = root;
    int rounds = 0;
    while ((1 << rounds) < R)
        rounds++;
    for (int i = 0; i < rounds; i++)
        for (int v = 0; v < (1 << i); v++)
            if (v + (1 << i) < R)
                for (int j = 0; j < K; j++) {
                    int a = (v + root) % R, b = (v + (1 << i) + root) % R;
                    if (c == TC_COLL_BROADCAST)
                        add(s, a, b, j, TC_OP_COPY, -1, i, (i * K + j) * US, (i * K + j + 1) * US);
                    else {
                        int ri = rounds - 1 - i;
                        add(s, b, a, j, TC_OP_REDUCE, -1, ri, (ri * K + j) * US, (ri * K + j + 1) * US);
                    }
                }
    return s;
}

static tc_sched *direct_gather_scatter(tc_coll c, int R, int K, int root)
{
    tc_sched *s = mk(c, R, K);
    s->root = root;
    for (int ch = 0; ch < R * K; ch++) {
        int owner = ch / K;
        if (owner == root)
            continue;
        if (c == TC_COLL_GATHER)
            add(s, owner, root, ch, TC_OP_COPY, -1, 0, (ch % K) * US, (ch % K + 1) * US);
        else
            add(s, root, owner, ch, TC_OP_COPY, -1, 0, (ch % K) * US, (ch % K + 1) * US);
    }
    return s;
}

/* All-to-all: direct, or relayed through a random third rank (store and forward). */
static tc_sched *alltoall(int R, int K, int relay)
{
    tc_sched *s = mk(TC_COLL_ALLTOALL, R, K);
    for (int c = 0; c < R * R * K; c++) {
        int src = c / (R * K), dst = (c / K) % R;
        if (src == dst)
            continue;
        if (relay && R > 2) {
            int m;
            do
                m = rnd(0, R - 1);
            while (m == src || m == dst);
            add(s, src, m, c, TC_OP_COPY, -1, 0, 0, 1 * US);
            add(s, m, dst, c, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
        } else {
            add(s, src, dst, c, TC_OP_COPY, -1, 0, 0, 1 * US);
        }
    }
    return s;
}

static void shuffle(tc_sched *s)
{
    for (int i = s->n_xfers - 1; i > 0; i--) {
        int j = rnd(0, i);
        tc_xfer t = s->xfers[i];
        s->xfers[i] = s->xfers[j];
        s->xfers[j] = t;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Valid schedules pass                                                                             */

START_TEST(test_valid_every_collective)
{
    seed_rng(1);
    for (int iter = 0; iter < 20; iter++) {
        int R = rnd(2, 16), K = rnd(1, 3), root = rnd(0, R - 1);
        tc_sched *v[] = {
            direct_allgather(R, K),
            ring_allgather(R, K),
            ring_reducescatter(R, K),
            ring_allreduce(R, K),
            binomial(TC_COLL_BROADCAST, R, K, root),
            binomial(TC_COLL_REDUCE, R, K, root),
            direct_gather_scatter(TC_COLL_GATHER, R, K, root),
            direct_gather_scatter(TC_COLL_SCATTER, R, K, root),
            alltoall(R, K, 0),
            alltoall(R, K, 1),
        };
        tc_topo *t = ring_topo(R);
        tc_check_opts o = {.topo = t};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            expect_ok(v[i], NULL);
            shuffle(v[i]);
            expect_ok(v[i], NULL); /* transfer order does not matter, only times */
            if (i >= 1 && i <= 3)
                expect_ok(v[i], &o); /* ring schedules use ring links */
            tc_sched_free(v[i]);
        }
        ring_topo_free(t);
    }
}
END_TEST

START_TEST(test_valid_single_rank)
{
    for (int c = 0; c < TC_COLL_COUNT; c++) {
        tc_sched *s = mk((tc_coll)c, 1, 2);
        expect_ok(s, NULL);
        tc_sched_free(s);
    }
}
END_TEST

START_TEST(test_allreduce_any_chunk_count)
{
    /* all-reduce read from a file may have any number of chunks: 3 chunks on 2 ranks, exchanged */
    tc_sched *s = mk(TC_COLL_ALLREDUCE, 2, 1);
    s->n_chunks = 3;
    for (int c = 0; c < 3; c++) {
        add(s, 0, 1, c, TC_OP_REDUCE, -1, 0, 0, 1 * US);
        add(s, 1, 0, c, TC_OP_REDUCE, -1, 0, 0, 1 * US);
    }
    expect_ok(s, NULL);
    tc_sched_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Event order                                                                                      */

START_TEST(test_forward_at_arrival_time)
{
    /* chunk 0 arrives at rank 1 at t=1 us and is forwarded at t=1 us: allowed */
    tc_sched *s = mk(TC_COLL_BROADCAST, 3, 1);
    add(s, 1, 2, 0, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
    add(s, 0, 1, 0, TC_OP_COPY, -1, 0, 0, 1 * US);
    expect_ok(s, NULL);
    /* forwarding before the arrival is not */
    s->xfers[0].t_start = 0.5 * US;
    expect_err(s, NULL, "plan.json: error: transfer 0 (step 1, t=500.000 ns): rank 1 sends chunk 0 it does not hold\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_zero_length_transfers)
{
    /* a zero-length transfer delivers after the departures at its time: it cannot be chained at once */
    tc_sched *s = mk(TC_COLL_BROADCAST, 3, 1);
    add(s, 0, 1, 0, TC_OP_COPY, -1, 0, 1 * US, 1 * US);
    add(s, 1, 2, 0, TC_OP_COPY, -1, 1, 2 * US, 2 * US);
    expect_ok(s, NULL);
    s->xfers[1].t_start = s->xfers[1].t_end = 1 * US;
    expect_err(s, NULL, "plan.json: error: transfer 1 (step 1, t=1.000 us): rank 1 sends chunk 0 it does not hold\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_carries_snapshot_at_departure)
{
    /* all-reduce on 3 ranks, 1 chunk.  Rank 0 sends to 2 during [0,2); meanwhile rank 1 reduces into 0 at
     * t=1.  What travels to 2 is {0} (the snapshot at t=0), so 2 ends with {0,2} plus {1} later: valid. */
    tc_sched *s = mk(TC_COLL_ALLREDUCE, 3, 1);
    s->n_chunks = 1;
    add(s, 0, 2, 0, TC_OP_REDUCE, -1, 0, 0, 2 * US);
    add(s, 1, 0, 0, TC_OP_REDUCE, -1, 0, 0, 1 * US);
    add(s, 1, 2, 0, TC_OP_REDUCE, -1, 1, 2 * US, 3 * US);
    add(s, 2, 0, 0, TC_OP_COPY, -1, 2, 3 * US, 4 * US);
    add(s, 2, 1, 0, TC_OP_COPY, -1, 2, 3 * US, 4 * US);
    expect_ok(s, NULL);
    /* if rank 0 sent at t=1 instead, it would carry {0,1} and the later reduce from 1 double-counts 1 */
    s->xfers[0].t_start = 1 * US;
    expect_err(s, NULL,
               "plan.json: error: transfer 2 (step 1, t=3.000 us): reduce of chunk 0 from rank 1 into rank 2 "
               "double-counts rank 1\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_rounding_tolerance)
{
    /* generators add costs along different paths: one rounding error is not a violation */
    double t1 = 20.104e-6, t1_up = nextafter(nextafter(t1, 1), 1);
    tc_sched *s = mk(TC_COLL_BROADCAST, 3, 2);
    add(s, 0, 1, 0, TC_OP_COPY, 0, 0, 0, t1_up);         /* arrives a hair after t1 ... */
    add(s, 1, 2, 0, TC_OP_COPY, 1, 1, t1, 2 * t1);        /* ... and is forwarded at t1 */
    add(s, 0, 1, 1, TC_OP_COPY, 0, 1, t1, 2 * t1);        /* link 0 reused a hair early */
    add(s, 1, 2, 1, TC_OP_COPY, 1, 2, 2 * t1, nextafter(2 * t1, 0)); /* ends a hair before it starts */
    expect_ok(s, NULL);
    /* one part in 10^6 is real */
    s->xfers[0].t_end = t1 * (1 + 1e-6);
    expect_err(s, NULL, "plan.json: error: transfer 1 (step 1, t=20.104 us): rank 1 sends chunk 0 it does not hold\n");
    s->xfers[0].t_end = t1_up;
    s->xfers[2].t_start = t1 * (1 - 1e-6);
    expect_err(s, NULL,
               "plan.json: error: transfer 2 (step 1, t=20.104 us): link 0 (0->1) carries chunks 0 and 1 at the same "
               "time (transfer 0 holds it until t=20.104 us)\n");
    s->xfers[2].t_start = t1;
    s->xfers[0].t_end = t1;
    s->xfers[3].t_end = 2 * t1 * (1 - 1e-6);
    expect_err(s, NULL, "plan.json: error: transfer 3 (step 2, t=40.208 us): ends at t=40.208 us, before it starts\n");
    tc_sched_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Planted errors                                                                                   */

START_TEST(test_send_not_held)
{
    tc_sched *s = ring_allgather(4, 1);
    /* rank 2 sends chunk 0, which reaches it only at step 2 */
    add(s, 2, 3, 0, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
    expect_err(s, NULL, "plan.json: error: transfer 12 (step 1, t=1.000 us): rank 2 sends chunk 0 it does not hold\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_double_count)
{
    tc_sched *s = ring_allreduce(4, 1);
    /* rank 0 reduces chunk 3 into rank 1 at t=5 us, when both already hold the full sum */
    add(s, 0, 1, 3, TC_OP_REDUCE, -1, 5, 5 * US, 6 * US);
    expect_err(s, NULL,
               "plan.json: error: transfer 24 (step 5, t=6.000 us): reduce of chunk 3 from rank 0 into rank 1 "
               "double-counts rank 0\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_link_conflict)
{
    tc_sched *s = ring_allgather(4, 2);
    tc_topo *t = ring_topo(4);
    tc_check_opts o = {.topo = t};
    expect_ok(s, &o);
    /* chunk 1 of rank 0 on link 0 moved to overlap chunk 0 */
    for (int i = 0; i < s->n_xfers; i++)
        if (s->xfers[i].link == 0 && s->xfers[i].chunk == 1 && s->xfers[i].step == 0) {
            s->xfers[i].t_start = 0.5 * US;
            s->xfers[i].t_end = 1.5 * US;
            char want[512];
            snprintf(want, sizeof want,
                     "plan.json: error: transfer %d (step 0, t=500.000 ns): link 0 (0->1) carries chunks 0 and 1 "
                     "at the same time (transfer 0 holds it until t=1.000 us)\n",
                     i);
            expect_err(s, &o, want);
            expect_err(s, NULL, want); /* without a topology the endpoints come from the transfer */
        }
    /* half-open intervals: back to back is fine; no_link_check skips the test */
    tc_check_opts nl = {.no_link_check = 1};
    expect_ok(s, &nl);
    tc_sched_free(s);
    ring_topo_free(t);
}
END_TEST

START_TEST(test_link_conflict_earliest_wins)
{
    /* a link conflict at t=3 is reported before a causality error at t=4, and after one at t=2 */
    tc_sched *s = mk(TC_COLL_BROADCAST, 4, 2);
    add(s, 0, 1, 0, TC_OP_COPY, 0, 0, 0, 1 * US);
    add(s, 0, 1, 1, TC_OP_COPY, 0, 0, 1 * US, 2 * US);
    add(s, 1, 2, 0, TC_OP_COPY, 1, 1, 2 * US, 4 * US);
    add(s, 1, 2, 1, TC_OP_COPY, 1, 1, 3 * US, 5 * US);
    add(s, 3, 0, 0, TC_OP_COPY, 2, 2, 4 * US, 5 * US);
    expect_err(s, NULL,
               "plan.json: error: transfer 3 (step 1, t=3.000 us): link 1 (1->2) carries chunks 0 and 1 at the "
               "same time (transfer 2 holds it until t=4.000 us)\n");
    /* link ids far above the transfer count take the sort-based path: same verdict */
    for (int i = 0; i < s->n_xfers; i++)
        s->xfers[i].link += 2000000000;
    expect_err(s, NULL,
               "plan.json: error: transfer 3 (step 1, t=3.000 us): link 2000000001 (1->2) carries chunks 0 and 1 "
               "at the same time (transfer 2 holds it until t=4.000 us)\n");
    s->xfers[4].t_start = 2 * US;
    expect_err(s, NULL, "plan.json: error: transfer 4 (step 2, t=2.000 us): rank 3 sends chunk 0 it does not hold\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_postcondition_single_bit)
{
    tc_sched *s = ring_allgather(4, 1);
    s->n_xfers--; /* the last transfer: rank 3 -> 0, chunk 1 at step 2 */
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=3.000 us): rank 0 lacks chunk 1 (never received)\n");
    tc_sched_free(s);
    s = binomial(TC_COLL_BROADCAST, 4, 1, 2); /* 2->3, then 2->0 and 3->1 */
    s->n_xfers--;
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=2.000 us): rank 1 lacks chunk 0 (never received)\n");
    tc_sched_free(s);
    s = direct_gather_scatter(TC_COLL_GATHER, 3, 1, 0); /* 1->0 chunk 1, 2->0 chunk 2 */
    s->n_xfers--;
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=1.000 us): rank 0 lacks chunk 2 (never received)\n");
    tc_sched_free(s);
    s = alltoall(3, 1, 0); /* first: chunk 1 from rank 0 to rank 1 */
    memmove(s->xfers, s->xfers + 1, (size_t)(s->n_xfers - 1) * sizeof *s->xfers);
    s->n_xfers--;
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=1.000 us): rank 1 lacks chunk 1 (never received)\n");
    tc_sched_free(s);
    s = direct_gather_scatter(TC_COLL_SCATTER, 4, 2, 1);
    s->n_xfers = 0;
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=0.000 us): rank 0 lacks chunk 0 (never received)\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_postcondition_reducing)
{
    tc_sched *s = ring_allreduce(4, 1);
    /* drop rank 0's first reduce-scatter send (chunk 3 to rank 1): chunk 3 misses rank 0 everywhere */
    ck_assert_int_eq(s->xfers[0].src, 0);
    ck_assert_int_eq(s->xfers[0].chunk, 3);
    memmove(s->xfers, s->xfers + 1, (size_t)(s->n_xfers - 1) * sizeof *s->xfers);
    s->n_xfers--;
    expect_err(s, NULL,
               "plan.json: error: postcondition at end (t=6.000 us): rank 0 lacks chunk 3 (holds contributions "
               "of 3 of 4 ranks; rank 0 is missing)\n");
    tc_sched_free(s);
    /* reduce-scatter: rank 2 must end with all of chunk 2 */
    s = ring_reducescatter(3, 1);
    s->n_xfers--;
    expect_err(s, NULL,
               "plan.json: error: postcondition at end (t=2.000 us): rank 0 lacks chunk 0 (holds contributions "
               "of 1 of 3 ranks; rank 1 is missing)\n");
    tc_sched_free(s);
    /* reduce to root 1 with nothing sent */
    s = mk(TC_COLL_REDUCE, 3, 2);
    s->root = 1;
    expect_err(s, NULL,
               "plan.json: error: postcondition at end (t=0.000 us): rank 1 lacks chunk 0 (holds contributions "
               "of 1 of 3 ranks; rank 0 is missing)\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_out_of_range_fields)
{
    static const struct {
        int src, dst, chunk, op, link, step;
        double t0, t1;
        const char *msg;
    } cases[] = {
        {4, 1, 0, 0, -1, 0, 0, 1, "src rank 4 out of range (4 ranks)"},
        {-1, 1, 0, 0, -1, 0, 0, 1, "src rank -1 out of range (4 ranks)"},
        {0, 7, 0, 0, -1, 0, 0, 1, "dst rank 7 out of range (4 ranks)"},
        {2, 2, 0, 0, -1, 0, 0, 1, "rank 2 sends chunk 0 to itself"},
        {0, 1, 4, 0, -1, 0, 0, 1, "chunk 4 out of range (4 chunks)"},
        {0, 1, -2, 0, -1, 0, 0, 1, "chunk -2 out of range (4 chunks)"},
        {0, 1, 0, 2, -1, 0, 0, 1, "op 2 is neither copy nor reduce"},
        {0, 1, 0, 1, -1, 0, 0, 1, "reduce of chunk 0 into rank 1, but allgather does not reduce"},
        {0, 1, 0, 0, -1, -3, 0, 1, "negative step -3"},
        {0, 1, 0, 0, -1, 0, 2, 1, "ends at t=1.000 us, before it starts"},
        {0, 1, 0, 0, -2, 0, 0, 1, "link -2 out of range (-1 or a link id)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_sched *s = direct_allgather(4, 1);
        add(s, cases[i].src, cases[i].dst, cases[i].chunk, (tc_op)cases[i].op, cases[i].link, 0, cases[i].t0 * US,
            cases[i].t1 * US);
        s->xfers[s->n_xfers - 1].step = cases[i].step;
        char want[512], tb[32];
        snprintf(want, sizeof want, "plan.json: error: transfer 12 (step %d, t=%s): %s\n", cases[i].step,
                 tc_fmt_time(cases[i].t0 * US, tb, sizeof tb), cases[i].msg);
        expect_err(s, NULL, want);
        tc_sched_free(s);
    }
    tc_sched *s = direct_allgather(4, 1);
    s->xfers[3].t_end = NAN;
    expect_err(s, NULL, "plan.json: error: transfer 3 (step 0, t=0.000 us): time is not a finite number\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_bad_header)
{
    tc_sched *s = direct_allgather(4, 2);
    s->n_chunks = 7;
    expect_err(s, NULL, "plan.json: error: schedule: allgather on 4 ranks with 2 chunks per rank needs 8 chunks, not 7\n");
    tc_sched_free(s);
    s = binomial(TC_COLL_BROADCAST, 4, 1, 0);
    s->root = 4;
    expect_err(s, NULL, "plan.json: error: schedule: root 4 out of range (4 ranks)\n");
    tc_sched_free(s);
    s = direct_allgather(4, 1);
    tc_topo *t = ring_topo(3);
    tc_check_opts o = {.topo = t};
    expect_err(s, &o, "plan.json: error: schedule has 4 ranks but the topology has 3 NPUs\n");
    ring_topo_free(t);
    tc_sched_free(s);
    /* no name: the diagnostic has no file */
    s = mk(TC_COLL_GATHER, 2, 1);
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_sched_check(&ctx, s, NULL, NULL), TC_ERR_CHECK);
    ck_assert_str_eq(tu_diags(), "tacosc: error: postcondition at end (t=0.000 us): rank 0 lacks chunk 1 (never received)\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_topology_links_and_routes)
{
    tc_topo *t = ring_topo(4);
    tc_check_opts o = {.topo = t};
    tc_sched *s = mk(TC_COLL_BROADCAST, 4, 1);
    int route[] = {0, 1, 2};
    ck_assert_int_eq(tc_sched_add(s, 0, 3, 0, TC_OP_COPY, -1, 0, 0, 1 * US, route, 3), TC_OK);
    add(s, 0, 1, 0, TC_OP_COPY, 0, 0, 1 * US, 2 * US);
    add(s, 1, 2, 0, TC_OP_COPY, 1, 1, 2 * US, 3 * US);
    expect_ok(s, &o);
    s->xfers[1].link = 4;
    expect_err(s, &o, "plan.json: error: transfer 1 (step 0, t=1.000 us): link 4 out of range (topology has 4 links)\n");
    expect_ok(s, NULL); /* without a topology any link id >= 0 goes */
    s->xfers[1].link = 1;
    expect_err(s, &o, "plan.json: error: transfer 1 (step 0, t=1.000 us): link 1 joins 1->2, not 0->1\n");
    s->xfers[1].link = 0;
    s->route[1] = 2;
    expect_err(s, &o,
               "plan.json: error: transfer 0 (step 0, t=0.000 us): route hop 1: link 2 (2->3) does not start at rank 1\n");
    s->route[1] = 1;
    s->xfers[0].route_len = 2;
    expect_err(s, &o, "plan.json: error: transfer 0 (step 0, t=0.000 us): route from rank 0 ends at rank 2, not at rank 3\n");
    s->xfers[0].route_len = 3;
    s->route[2] = 9;
    expect_err(s, &o,
               "plan.json: error: transfer 0 (step 0, t=0.000 us): route hop 2: link 9 out of range (topology has 4 links)\n");
    s->route[2] = -1;
    expect_err(s, NULL, "plan.json: error: transfer 0 (step 0, t=0.000 us): route hop 2: negative link id -1\n");
    tc_sched_free(s);
    ring_topo_free(t);
    /* a switch vertex (id 3 on 3 NPUs; links 2i: NPU i -> switch, 2i + 1: back) is named as one */
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *st = NULL, *u = NULL;
    ck_assert_int_eq(tc_topo_create("star", 3, &st), TC_OK);
    const int ports[3] = {0, 1, 2};
    ck_assert_int_eq(tc_topo_add_switch(st, "sw", ports, 3, 0, 0, 0), TC_OK);
    st->switches[0].model = TC_SWITCH_NODE;
    ck_assert_int_eq(tc_topo_unwind(&ctx, st, 0, &u), TC_OK);
    tc_check_opts so = {.topo = u};
    s = mk(TC_COLL_BROADCAST, 3, 1);
    int r2[] = {0, 3};
    ck_assert_int_eq(tc_sched_add(s, 0, 1, 0, TC_OP_COPY, -1, 0, 0, 1 * US, r2, 2), TC_OK);
    ck_assert_int_eq(tc_sched_add(s, 0, 2, 0, TC_OP_COPY, -1, 0, 0, 1 * US, r2, 1), TC_OK);
    expect_err(s, &so, "plan.json: error: transfer 1 (step 0, t=0.000 us): route from rank 0 ends at switch vertex 3, "
                       "not at rank 2\n");
    tc_sched_free(s);
    s = mk(TC_COLL_BROADCAST, 3, 1);
    int r3[] = {0, 4}; /* link 4: 2 -> switch, not out of it */
    ck_assert_int_eq(tc_sched_add(s, 0, 1, 0, TC_OP_COPY, -1, 0, 0, 1 * US, r2, 2), TC_OK);
    ck_assert_int_eq(tc_sched_add(s, 0, 2, 0, TC_OP_COPY, -1, 0, 0, 1 * US, r3, 2), TC_OK);
    expect_err(s, &so, "plan.json: error: transfer 1 (step 0, t=0.000 us): route hop 1: link 4 (2->3) does not start "
                       "at switch vertex 3\n");
    tc_sched_free(s);
    tc_topo_free(u);
    tc_topo_free(st);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Random schedules with planted errors                                                             */

START_TEST(test_random_flooding_allgather)
{
    seed_rng(2);
    for (int iter = 0; iter < 30; iter++) {
        int R = rnd(2, 12), K = rnd(1, 3), C = R * K;
        tc_sched *s = mk(TC_COLL_ALLGATHER, R, K);
        char *h = calloc((size_t)R * C, 1);
        int missing = R * C - C;
        for (int c = 0; c < C; c++)
            h[(c / K) * C + c] = 1;
        double t = 0;
        while (missing) {
            int src = rnd(0, R - 1), c = rnd(0, C - 1), dst = rnd(0, R - 1);
            if (!h[src * C + c] || h[dst * C + c])
                continue;
            double d = (rnd(1, 8)) * 0.25 * US;
            add(s, src, dst, c, TC_OP_COPY, -1, s->n_steps, t, t + d);
            t += d;
            h[dst * C + c] = 1;
            missing--;
        }
        shuffle(s);
        expect_ok(s, NULL);
        /* remove one transfer: dst then lacks the chunk; the first later send of it from dst fails, or the
         * postcondition names (dst, chunk) */
        int k = rnd(0, s->n_xfers - 1);
        tc_xfer gone = s->xfers[k];
        s->xfers[k] = s->xfers[--s->n_xfers];
        int first = -1;
        for (int i = 0; i < s->n_xfers; i++)
            if (s->xfers[i].src == gone.dst && s->xfers[i].chunk == gone.chunk &&
                (first < 0 || s->xfers[i].t_start < s->xfers[first].t_start))
                first = i;
        char want[512], tb[32];
        if (first >= 0)
            snprintf(want, sizeof want, "plan.json: error: transfer %d (step %d, t=%s): rank %d sends chunk %d it does not hold\n",
                     first, s->xfers[first].step, tc_fmt_time(s->xfers[first].t_start, tb, sizeof tb), gone.dst,
                     gone.chunk);
        else
            snprintf(want, sizeof want,
                     "plan.json: error: postcondition at end (t=%s): rank %d lacks chunk %d (never received)\n",
                     tc_fmt_time(tc_sched_makespan(s), tb, sizeof tb), gone.dst, gone.chunk);
        expect_err(s, NULL, want);
        free(h);
        tc_sched_free(s);
    }
}
END_TEST

START_TEST(test_random_chain_allreduce)
{
    seed_rng(3);
    for (int iter = 0; iter < 30; iter++) {
        int R = rnd(2, 16), K = rnd(1, 2), C = R * K;
        tc_sched *s = mk(TC_COLL_ALLREDUCE, R, K);
        int *p = malloc((size_t)R * sizeof *p), *inf = malloc((size_t)R * sizeof *inf);
        for (int c = 0; c < C; c++) {
            for (int i = 0; i < R; i++)
                p[i] = i;
            for (int i = R - 1; i > 0; i--) {
                int j = rnd(0, i), x = p[i];
                p[i] = p[j];
                p[j] = x;
            }
            double t = rnd(0, 10) * US;
            int step = 0;
            for (int i = 0; i + 1 < R; i++, step++, t += US)
                add(s, p[i], p[i + 1], c, TC_OP_REDUCE, -1, step, t, t + US);
            /* random broadcast tree from p[R-1] */
            int n_inf = 1;
            inf[0] = p[R - 1];
            for (int i = R - 2; i >= 0; i--, step++, t += US) {
                add(s, inf[rnd(0, n_inf - 1)], p[i], c, TC_OP_COPY, -1, step, t, t + US);
                inf[n_inf++] = p[i];
            }
        }
        shuffle(s);
        expect_ok(s, NULL);
        /* duplicate one reduce: its second arrival double-counts the lowest rank of what it carries */
        int k;
        do
            k = rnd(0, s->n_xfers - 1);
        while (s->xfers[k].op != TC_OP_REDUCE);
        tc_xfer x = s->xfers[k];
        add(s, x.src, x.dst, x.chunk, TC_OP_REDUCE, -1, x.step, x.t_start, x.t_end);
        /* src carries the chain prefix p0..src: src and the senders of the reduces that arrived before */
        int lowest = x.src;
        for (int i = 0; i < s->n_xfers - 1; i++) {
            const tc_xfer *y = &s->xfers[i];
            if (y->chunk == x.chunk && y->op == TC_OP_REDUCE && y->t_end <= x.t_start && y->src < lowest)
                lowest = y->src;
        }
        char want[512], tb[32];
        snprintf(want, sizeof want,
                 "plan.json: error: transfer %d (step %d, t=%s): reduce of chunk %d from rank %d into rank %d "
                 "double-counts rank %d\n",
                 s->n_xfers - 1, x.step, tc_fmt_time(x.t_end, tb, sizeof tb), x.chunk, x.src, x.dst, lowest);
        expect_err(s, NULL, want);
        tc_check_opts go = {.group_bytes = (size_t)rnd(1, C) * 8}; /* chunk groups of 1..C chunks: the same */
        expect_err(s, &go, want);
        free(p);
        free(inf);
        tc_sched_free(s);
    }
}
END_TEST

/* A naive reference of the checker's semantics (O(n^2), integer times so no rounding questions): events
 * sorted by (time, arrivals of nonzero length, departures, zero-length arrivals, transfer index). */
typedef struct ev { double t; int kind, i; } ev;
static int ev_cmp(const void *pa, const void *pb)
{
    const ev *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->kind != b->kind) return a->kind - b->kind;
    return a->i - b->i;
}

static void reference(const tc_sched *s, char *out, size_t n)
{
    int R = s->n_ranks, C = s->n_chunks, K = s->chunks_per_rank, nx = s->n_xfers;
    unsigned *set = calloc((size_t)R * C, sizeof *set), *carry = calloc((size_t)nx + 1, sizeof *carry);
    ev *e = malloc(2 * ((size_t)nx + 1) * sizeof *e);
    char tb[32], tb2[32];
    int red = tc_coll_reduces(s->coll), m = 0;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            int init = 0;
            switch (s->coll) {
            case TC_COLL_ALLGATHER: case TC_COLL_GATHER: init = c / K == r; break;
            case TC_COLL_BROADCAST: case TC_COLL_SCATTER: init = r == s->root; break;
            case TC_COLL_ALLTOALL: init = c / (R * K) == r; break;
            default: init = 1;
            }
            set[r * C + c] = init ? (red ? 1u << r : 1u) : 0;
        }
    for (int i = 0; i < nx; i++) {
        const tc_xfer *x = &s->xfers[i];
        e[m++] = (ev){x->t_start, 1, i};
        e[m++] = (ev){x->t_end, x->t_end > x->t_start ? 0 : 2, i};
    }
    qsort(e, (size_t)m, sizeof *e, ev_cmp);
    out[0] = 0;
    for (int k = 0; k < m && !out[0]; k++) {
        const tc_xfer *x = &s->xfers[e[k].i];
        if (e[k].kind == 1) {
            /* link: the earlier departures on this link, the one with the latest end (first such) */
            int busy = -1;
            for (int q = 0; q < k; q++) {
                const tc_xfer *y = &s->xfers[e[q].i];
                if (e[q].kind == 1 && y->link == x->link && x->link >= 0 && y->t_end > y->t_start &&
                    (busy < 0 || y->t_end > s->xfers[busy].t_end))
                    busy = e[q].i;
            }
            if (busy >= 0 && x->t_end > x->t_start && x->t_start < s->xfers[busy].t_end) {
                snprintf(out, n, "plan.json: error: transfer %d (step %d, t=%s): link %d (%d->%d) carries chunks %d and %d at "
                         "the same time (transfer %d holds it until t=%s)\n", e[k].i, x->step,
                         tc_fmt_time(x->t_start, tb, sizeof tb), x->link, x->src, x->dst, s->xfers[busy].chunk, x->chunk,
                         busy, tc_fmt_time(s->xfers[busy].t_end, tb2, sizeof tb2));
                break;
            }
            carry[e[k].i] = set[x->src * C + x->chunk];
            if (!red && !carry[e[k].i])
                snprintf(out, n, "plan.json: error: transfer %d (step %d, t=%s): rank %d sends chunk %d it does not hold\n",
                         e[k].i, x->step, tc_fmt_time(x->t_start, tb, sizeof tb), x->src, x->chunk);
        } else {
            unsigned *d = &set[x->dst * C + x->chunk], c = carry[e[k].i];
            if (x->op == TC_OP_REDUCE && (*d & c))
                snprintf(out, n, "plan.json: error: transfer %d (step %d, t=%s): reduce of chunk %d from rank %d into rank %d "
                         "double-counts rank %d\n", e[k].i, x->step, tc_fmt_time(x->t_end, tb, sizeof tb), x->chunk, x->src,
                         x->dst, __builtin_ctz(*d & c));
            *d = x->op == TC_OP_REDUCE ? *d | c : c;
        }
    }
    for (int r = 0; r < R && !out[0]; r++)
        for (int c = 0; c < C && !out[0]; c++) {
            int need = 0;
            switch (s->coll) {
            case TC_COLL_ALLGATHER: case TC_COLL_BROADCAST: case TC_COLL_ALLREDUCE: need = 1; break;
            case TC_COLL_GATHER: case TC_COLL_REDUCE: need = r == s->root; break;
            case TC_COLL_SCATTER: case TC_COLL_REDUCESCATTER: need = r == c / K; break;
            default: need = r == (c / K) % R;
            }
            unsigned full = red ? (1u << R) - 1 : 1u, have = set[r * C + c];
            if (need && have != full) {
                char d[128] = " (never received)";
                if (red)
                    snprintf(d, sizeof d, " (holds contributions of %d of %d ranks; rank %d is missing)",
                             __builtin_popcount(have), R, __builtin_ctz(~have & full));
                snprintf(out, n, "plan.json: error: postcondition at end (t=%s): rank %d lacks chunk %d%s\n",
                         tc_fmt_time(tc_sched_makespan(s), tb, sizeof tb), r, c, d);
            }
        }
    free(set);
    free(carry);
    free(e);
}

START_TEST(test_random_against_reference)
{
    seed_rng(4);
    int agree_ok = 0;
    for (int iter = 0; iter < 2000; iter++) {
        tc_coll c = (tc_coll)rnd(0, TC_COLL_COUNT - 1);
        int R = rnd(2, 5), K = rnd(1, 2);
        tc_sched *s = mk(c, R, K);
        s->root = rnd(0, R - 1);
        /* mostly sensible transfers: from a rank likely to hold the chunk, at small integer times */
        int n = rnd(0, 3 * s->n_chunks);
        for (int i = 0; i < n; i++) {
            int src = rnd(0, R - 1), dst = (src + rnd(1, R - 1)) % R, t0 = rnd(0, 6);
            add(s, src, dst, rnd(0, s->n_chunks - 1),
                tc_coll_reduces(c) && rnd(0, 2) ? TC_OP_REDUCE : TC_OP_COPY, rnd(0, 3) ? -1 : rnd(0, 3), rnd(0, 5),
                t0 * US, (t0 + rnd(0, 2)) * US);
        }
        char want[512];
        reference(s, want, sizeof want);
        tc_status st = run(s, NULL);
        ck_assert_msg(!strcmp(tu_diags(), want), "%s R=%d K=%d: checker said\n%sreference said\n%s", tc_coll_name(c), R,
                      K, tu_diags(), want);
        ck_assert_int_eq(st, want[0] ? TC_ERR_CHECK : TC_OK);
        /* issue 27: the contribution sets swept by groups of 1 to 3 chunks (R <= 64: 8 bytes a set) report
         * the same first finding: the earliest event over all groups, then the link conflict, then the first
         * postcondition in search order */
        tc_check_opts go = {.group_bytes = (size_t)rnd(1, 3) * (size_t)R * 8};
        tc_status gst = run(s, &go);
        ck_assert_msg(!strcmp(tu_diags(), want), "%s R=%d K=%d, %zu-byte groups: checker said\n%sreference said\n%s",
                      tc_coll_name(c), R, K, go.group_bytes, tu_diags(), want);
        ck_assert_int_eq(gst, st);
        agree_ok += st == TC_OK;
        tc_sched_free(s);
    }
    fprintf(stderr, "reference: %d of 2000 random schedules valid\n", agree_ok);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Scale                                                                                            */

START_TEST(test_alltoall_sparse_state)
{
    /* all-to-all on 1700 ranks: R * C = 4.9e9 bits, so the holdings live in the hash set */
    int R = 1700;
    tc_sched *s = mk(TC_COLL_ALLTOALL, R, 1);
    add(s, 0, 5, 1, TC_OP_COPY, -1, 0, 0, 1 * US);          /* chunk 1: rank 0 -> rank 1 via 5 */
    add(s, 5, 1, 1, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=2.000 us): rank 0 lacks chunk 1700 (never received)\n");
    add(s, 1, 9, 1700, TC_OP_COPY, -1, 0, 0, 1 * US);       /* chunk 1700: rank 1 -> rank 0 via 9 */
    add(s, 9, 0, 1700, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
    expect_err(s, NULL, "plan.json: error: postcondition at end (t=2.000 us): rank 0 lacks chunk 3400 (never received)\n");
    add(s, 7, 2, 2, TC_OP_COPY, -1, 1, 1 * US, 2 * US);
    expect_err(s, NULL, "plan.json: error: transfer 4 (step 1, t=1.000 us): rank 7 sends chunk 2 it does not hold\n");
    tc_sched_free(s);
}
END_TEST

START_TEST(test_ring_allreduce_1024_speed)
{
    /* 1024-rank ring all-reduce: 2,095,104 transfers (256 ranks under AddressSanitizer, to stay quick) */
#ifdef __SANITIZE_ADDRESS__
    int R = 256;
#else
    int R = 1024;
#endif
    tc_sched *s = ring_allreduce(R, 1);
    ck_assert_int_eq(s->n_xfers, 2 * (R - 1) * R);
    double t0 = tc_now();
    expect_ok(s, NULL);
    double dt = tc_now() - t0;
    fprintf(stderr, "check: %d-rank ring all-reduce, %d transfers: %.3f s\n", R, s->n_xfers, dt);
    tc_sched_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("check");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_valid_every_collective);
    tcase_add_test(tc, test_valid_single_rank);
    tcase_add_test(tc, test_allreduce_any_chunk_count);
    tcase_add_test(tc, test_forward_at_arrival_time);
    tcase_add_test(tc, test_zero_length_transfers);
    tcase_add_test(tc, test_carries_snapshot_at_departure);
    tcase_add_test(tc, test_rounding_tolerance);
    tcase_add_test(tc, test_send_not_held);
    tcase_add_test(tc, test_double_count);
    tcase_add_test(tc, test_link_conflict);
    tcase_add_test(tc, test_link_conflict_earliest_wins);
    tcase_add_test(tc, test_postcondition_single_bit);
    tcase_add_test(tc, test_postcondition_reducing);
    tcase_add_test(tc, test_out_of_range_fields);
    tcase_add_test(tc, test_bad_header);
    tcase_add_test(tc, test_topology_links_and_routes);
    tcase_add_test(tc, test_random_flooding_allgather);
    tcase_add_test(tc, test_random_chain_allreduce);
    tcase_add_test(tc, test_random_against_reference);
    tcase_add_test(tc, test_alltoall_sparse_state);
    tcase_add_test(tc, test_ring_allreduce_1024_speed);
    suite_add_tcase(su, tc);
    return su;
}

TU_MAIN(suite)
