/* The JSON schedule format (src/emit/json_write.c, json_read.c): exact round trips of random schedules, byte-identical
 * rewrites, every reader error with its exact text and line, truncated files. */
#include "testutil.h"

#include <math.h>

#include "tacos/check.h"
#include "tacos/emit.h"
#include "tacos/sparse.h"

static tc_rng rng;
static void seed_rng(int salt) { tc_rng_seed(&rng, (uint64_t)tu_seed() * 1000003u + (uint64_t)salt); }
static int rnd(int lo, int hi) { return lo + (int)tc_rng_below(&rng, (uint64_t)(hi - lo + 1)); }

/* Write s to a malloc'd string. */
static char *to_json(const tc_sched *s, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_OK);
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

static tc_status from_json(const char *text, tc_sched **out)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    return tc_emit_json_read_mem(&ctx, "plan.json", text, strlen(text), out);
}

static void expect_read_error(const char *text, tc_status st, const char *msg)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(from_json(text, &s), st);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(tu_diags(), msg);
}

static double rnd_double(void)
{
    switch (rnd(0, 5)) {
    case 0: return rnd(0, 100);                                   /* integral (MSCCL-style steps) */
    case 1: return rnd(0, 1000) * 1e-6;                           /* decimal microseconds */
    case 2: return tc_rng_unit(&rng) * 1e-3;                      /* arbitrary bits */
    case 3: return ldexp(tc_rng_unit(&rng), rnd(-1000, 19));      /* extreme exponents (2^19 < TC_TIME_MAX) */
    case 4: return 0.1 * rnd(0, 50) + 0.2;                        /* classic non-representable decimals */
    default: return TC_TIME_MAX * tc_rng_unit(&rng);              /* up to the longest time a plan may hold */
    }
}

static char *rnd_name(void)
{
    static const char *parts[] = {"mesh", "\"q\"", "back\\slash", "tab\t", "nl\n", "\x01", "\xc3\xa9t\xc3\xa9",
                                  "-4x4", " ", "/", "\x7f"};
    if (rnd(0, 4) == 0)
        return NULL;
    char *s = calloc(256, 1);
    for (int i = rnd(0, 5); i > 0; i--)
        strcat(s, parts[rnd(0, (int)(sizeof parts / sizeof parts[0]) - 1)]);
    return s;
}

static uint64_t rnd_u64(void)
{
    switch (rnd(0, 3)) {
    case 0: return tc_rng_next(&rng);                     /* usually above 2^53: written as a string */
    case 1: return (1ull << 53) + (uint64_t)rnd(-2, 2);   /* the boundary */
    case 2: return (uint64_t)rnd(0, 1 << 30);
    default: return UINT64_MAX;
    }
}

static tc_sched *random_sched(void)
{
    tc_coll c = (tc_coll)rnd(0, TC_COLL_COUNT - 1);
    /* the reader bounds ranks by 2n + 1 and chunks by 2n for n transfers (a correct plan's necessary sizes) */
    int n = rnd(0, 3) ? rnd(1, 300) : 0;
    int R = n ? rnd(1, c == TC_COLL_ALLTOALL ? 6 : 40 < 2 * n + 1 ? 40 : 2 * n + 1) : 1, K = rnd(1, 4);
    while (R > 1 && (uint64_t)tc_sched_chunk_count(c, R, K) > 2 * (uint64_t)n)
        K > 1 ? K-- : R--;
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_sched_create(c, R, K, rnd_u64(), &s), TC_OK);
    if (c == TC_COLL_ALLREDUCE && rnd(0, 1))
        s->n_chunks = rnd(1, R > 1 && 2 * n < 100 ? 2 * n : 100);
    s->root = tc_coll_rooted(c) ? rnd(0, R - 1) : 0;
    s->seed = rnd_u64();
    s->time = fabs(rnd_double());
    char *a = rnd_name(), *t = rnd_name();
    ck_assert_int_eq(tc_sched_set_names(s, a, t), TC_OK);
    free(a);
    free(t);
    for (int i = 0; i < n; i++) {
        int route[6], rl = rnd(0, 3) ? 0 : rnd(1, 6);
        for (int h = 0; h < rl; h++)
            route[h] = rnd(0, 1000);
        double t0 = rnd_double(), t1 = rnd(0, 3) ? t0 + fabs(rnd_double()) : t0;
        if (t1 > TC_TIME_MAX)
            t1 = TC_TIME_MAX;
        ck_assert_int_eq(tc_sched_add(s, rnd(0, R - 1), rnd(0, R - 1), rnd(0, s->n_chunks - 1), (tc_op)rnd(0, 1),
                                      rnd(-1, 64), rnd(0, 30), t0, t1, route, rl),
                         TC_OK);
    }
    if (rnd(0, 2) == 0) { /* a sparse annotation: one format per transfer */
        tc_sched_sparse *sp = calloc(1, sizeof *sp);
        sp->density = rnd(0, 1) ? tc_rng_unit(&rng) : rnd(0, 1);
        sp->format = rnd(1, 3);
        sp->dtype = rnd(0, TC_SP_DTYPE_COUNT - 1);
        for (int f = 1; f < 3; f++)
            for (int k = 0; k < 3; k++)
                sp->th[f][k] = rnd(0, 1) ? tc_rng_unit(&rng) : 0.1 * rnd(0, 10);
        sp->n = s->n_xfers;
        sp->fmt = malloc((size_t)s->n_xfers + 1);
        for (int i = 0; i < s->n_xfers; i++)
            sp->fmt[i] = (unsigned char)rnd(0, 2);
        s->sparse = sp;
    }
    int room = s->n_xfers - s->n_steps; /* steps without transfers: no more steps than transfers */
    if (rnd(0, 3) == 0 && room > 0)
        s->n_steps += rnd(0, room < 5 ? room : 5);
    return s;
}

static void assert_same(const tc_sched *a, const tc_sched *b)
{
    ck_assert_int_eq(a->coll, b->coll);
    ck_assert_int_eq(a->n_ranks, b->n_ranks);
    ck_assert_int_eq(a->chunks_per_rank, b->chunks_per_rank);
    ck_assert_int_eq(a->n_chunks, b->n_chunks);
    ck_assert_int_eq(a->root, b->root);
    ck_assert_uint_eq(a->size_bytes, b->size_bytes);
    ck_assert_uint_eq(a->chunk_bytes, b->chunk_bytes);
    ck_assert_uint_eq(a->seed, b->seed);
    ck_assert(memcmp(&a->time, &b->time, sizeof a->time) == 0);
    ck_assert_int_eq(a->n_steps, b->n_steps);
    ck_assert(a->algo == b->algo || (a->algo && b->algo && !strcmp(a->algo, b->algo)));
    ck_assert(a->topo_name == b->topo_name || (a->topo_name && b->topo_name && !strcmp(a->topo_name, b->topo_name)));
    ck_assert_int_eq(a->n_xfers, b->n_xfers);
    for (int i = 0; i < a->n_xfers; i++) {
        const tc_xfer *x = &a->xfers[i], *y = &b->xfers[i];
        ck_assert_int_eq(x->src, y->src);
        ck_assert_int_eq(x->dst, y->dst);
        ck_assert_int_eq(x->chunk, y->chunk);
        ck_assert_int_eq(x->op, y->op);
        ck_assert_int_eq(x->link, y->link);
        ck_assert_int_eq(x->step, y->step);
        ck_assert_msg(memcmp(&x->t_start, &y->t_start, sizeof(double)) == 0, "t_start %.17g != %.17g", x->t_start,
                      y->t_start);
        ck_assert_msg(memcmp(&x->t_end, &y->t_end, sizeof(double)) == 0, "t_end %.17g != %.17g", x->t_end, y->t_end);
        ck_assert_int_eq(x->route_len, y->route_len);
        for (int h = 0; h < x->route_len; h++)
            ck_assert_int_eq(a->route[x->route_off + h], b->route[y->route_off + h]);
    }
    ck_assert(!a->sparse == !b->sparse);
    if (a->sparse) {
        const tc_sched_sparse *p = a->sparse, *q = b->sparse;
        ck_assert(memcmp(&p->density, &q->density, sizeof p->density) == 0);
        ck_assert_int_eq(p->format, q->format);
        ck_assert_int_eq(p->dtype, q->dtype);
        ck_assert(memcmp(p->th, q->th, sizeof p->th) == 0);
        ck_assert_int_eq(p->n, q->n);
        ck_assert(p->n == 0 || memcmp(p->fmt, q->fmt, (size_t)p->n) == 0);
    }
}

/* A small valid document; tests edit it. */
static const char *small_doc =
    "{\n"
    "  \"format\": \"tacosc-schedule\",\n"
    "  \"version\": 1,\n"
    "  \"tool\": \"tacosc 0.1.0\",\n"
    "  \"seed\": 7,\n"
    "  \"topology\": \"ring-3\",\n"
    "  \"algorithm\": \"ring\",\n"
    "  \"collective\": \"allgather\",\n"
    "  \"ranks\": 3,\n"
    "  \"chunks_per_rank\": 1,\n"
    "  \"chunks\": 3,\n"
    "  \"root\": 0,\n"
    "  \"size_bytes\": 3072,\n"
    "  \"chunk_bytes\": 1024,\n"
    "  \"predicted_time\": 4.0e-06,\n"
    "  \"steps\": 2,\n"
    "  \"transfers\": [\n"
    "    [0, 1, 0, \"copy\", 0, 0, 0, 1e-06, []],\n"
    "    [1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []],\n"
    "    [2, 0, 2, \"copy\", 2, 0, 0, 1e-06, []],\n"
    "    [0, 1, 2, \"copy\", 0, 1, 1e-06, 2e-06, []],\n"
    "    [1, 2, 0, \"copy\", 1, 1, 1e-06, 2e-06, []],\n"
    "    [2, 0, 1, \"copy\", 2, 1, 1e-06, 2e-06, [2]]\n"
    "  ]\n"
    "}\n";

/* small_doc with the first occurrence of `from` replaced by `to`. */
static char *edit(const char *from, const char *to)
{
    const char *p = strstr(small_doc, from);
    ck_assert_ptr_nonnull(p);
    char *out = malloc(strlen(small_doc) + strlen(to) + 1);
    size_t a = (size_t)(p - small_doc);
    memcpy(out, small_doc, a);
    strcpy(out + a, to);
    strcat(out, p + strlen(from));
    return out;
}

static void expect_edit_error(const char *from, const char *to, tc_status st, const char *msg)
{
    char *doc = edit(from, to);
    expect_read_error(doc, st, msg);
    free(doc);
}

/* ---------------------------------------------------------------------------------------------- */

START_TEST(test_round_trip_random)
{
    seed_rng(1);
    for (int iter = 0; iter < 200; iter++) {
        tc_sched *s = random_sched(), *r = NULL;
        size_t n1, n2;
        char *j1 = to_json(s, &n1);
        ck_assert_int_eq(strlen(j1), n1);
        ck_assert_msg(from_json(j1, &r) == TC_OK, "%s", tu_diags());
        assert_same(s, r);
        char *j2 = to_json(r, &n2);
        ck_assert_int_eq(n1, n2);
        ck_assert_msg(memcmp(j1, j2, n1) == 0, "rewrite differs");
        free(j1);
        free(j2);
        tc_sched_free(s);
        tc_sched_free(r);
    }
}
END_TEST

/* Replace every occurrence of `from` in text by `to` (malloc'd). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = strstr(text, from); p; p = strstr(p + lf, from))
        n++;
    char *out = malloc(strlen(text) + n * (lt + 1) + 1), *o = out;
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    return out;
}

START_TEST(test_other_layouts)
{
    /* the same schedule with escaped op names (which the fast path leaves to cJSON) or other white space
     * reads back to the same IR.  (cJSON's own printer is not exact for doubles, so it is not used.) */
    seed_rng(5);
    for (int iter = 0; iter < 40; iter++) {
        tc_sched *s = random_sched(), *r = NULL;
        char *j = to_json(s, NULL);
        char *j1 = replace_all(j, "\"copy\"", "\"\\u0063opy\"");
        char *j2 = replace_all(j1, "\"reduce\"", "\"r\\u0065duce\"");
        ck_assert_msg(from_json(j2, &r) == TC_OK, "%s", tu_diags());
        assert_same(s, r);
        tc_sched_free(r);
        /* other white space: the fast path still takes it */
        char *j3 = replace_all(j2, ", ", " ,\t\r\n ");
        ck_assert_msg(from_json(j3, &r) == TC_OK, "%s", tu_diags());
        assert_same(s, r);
        tc_sched_free(r);
        free(j3);
        free(j);
        free(j1);
        free(j2);
        tc_sched_free(s);
    }
}
END_TEST

/* The line each transfer of `text` starts on: transfers open a line with four blanks and '['. */
static int *transfer_lines(const char *text, int n)
{
    int *want = malloc((size_t)(n ? n : 1) * sizeof *want), line = 1, k = 0;
    for (const char *p = text; *p && k < n; p++) {
        if (p[0] == '\n') {
            line++;
            if (!strncmp(p + 1, "    [", 5))
                want[k++] = line;
        }
    }
    ck_assert_int_eq(k, n);
    return want;
}

START_TEST(test_lines)
{
    /* a plan read from a file knows each transfer's line, in the canonical layout (line 18 + i) and in
     * others (transfers spread over several lines: the fast path and cJSON's), and the checker names it */
    seed_rng(11);
    for (int iter = 0; iter < 20; iter++) {
        tc_sched *s = random_sched(), *r = NULL;
        char *j = to_json(s, NULL);
        ck_assert_msg(from_json(j, &r) == TC_OK, "%s", tu_diags());
        ck_assert_str_eq(r->file, "plan.json");
        for (int i = 0; i < r->n_xfers; i++)
            ck_assert_int_eq(tc_sched_line(r, i), 18 + i);
        tc_sched_free(r);
        char *j1 = replace_all(j, ", ", " ,\t\r\n ");
        char *j2 = replace_all(j1, "\"copy\"", "\"\\u0063opy\"");
        int *want = transfer_lines(j2, s->n_xfers);
        ck_assert_msg(from_json(j2, &r) == TC_OK, "%s", tu_diags());
        ck_assert_int_eq(r->n_xfers, s->n_xfers);
        for (int i = 0; i < r->n_xfers; i++)
            ck_assert_int_eq(tc_sched_line(r, i), want[i]);
        if (r->n_xfers > 1)
            ck_assert_int_gt(want[r->n_xfers - 1], 18 + r->n_xfers - 1);
        tc_sched_free(r);
        free(want);
        free(j);
        free(j1);
        free(j2);
        tc_sched_free(s);
    }
    /* small_doc's transfer 4 (line 22) sends a chunk rank 1 does not hold yet */
    char *doc = edit("[1, 2, 0, \"copy\", 1, 1,", "[1, 2, 2, \"copy\", 1, 1,");
    tc_sched *r = NULL;
    ck_assert_msg(from_json(doc, &r) == TC_OK, "%s", tu_diags());
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_sched_check(&ctx, r, NULL, NULL), TC_ERR_CHECK);
    ck_assert_msg(!strncmp(tu_diags(), "plan.json:22: error: transfer 4 (step 1, ", 41), "%s", tu_diags());
    tu_ctx(&ctx); /* under another name the file's line numbers mean nothing */
    ck_assert_int_eq(tc_sched_check(&ctx, r, NULL, "lowered plan"), TC_ERR_CHECK);
    ck_assert_msg(!strncmp(tu_diags(), "lowered plan: error: transfer 4 (step 1, ", 41), "%s", tu_diags());
    tc_sched_free(r);
    free(doc);
}
END_TEST

START_TEST(test_small_doc_reads)
{
    tc_sched *s = NULL;
    ck_assert_msg(from_json(small_doc, &s) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(s->coll, TC_COLL_ALLGATHER);
    ck_assert_int_eq(s->n_ranks, 3);
    ck_assert_int_eq(s->n_xfers, 6);
    ck_assert_int_eq(s->n_steps, 2);
    ck_assert_str_eq(s->algo, "ring");
    ck_assert_str_eq(s->topo_name, "ring-3");
    ck_assert_int_eq(s->xfers[5].route_len, 1);
    ck_assert_int_eq(s->route[s->xfers[5].route_off], 2);
    ck_assert(s->xfers[3].t_start == 1e-06);
    ck_assert(s->time == 4e-06);
    /* canonical rewrite: shortest exact doubles, fixed layout */
    char *j = to_json(s, NULL);
    ck_assert_ptr_nonnull(strstr(j, "  \"predicted_time\": 4e-06,\n  \"steps\": 2,\n  \"transfers\": [\n"
                                    "    [0, 1, 0, \"copy\", 0, 0, 0, 1e-06, []],\n"));
    ck_assert_ptr_nonnull(strstr(j, "    [2, 0, 1, \"copy\", 2, 1, 1e-06, 2e-06, [2]]\n  ],\n  \"unwind\": 0\n}\n"));
    free(j);
    tc_sched_free(s);
}
END_TEST

/* The unwinding degree a plan's link ids refer to: recorded after the transfers, read back, optional in
 * plans written before it was recorded (read as 0), and checked. */
START_TEST(test_unwind)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(from_json(small_doc, &s), TC_OK);
    ck_assert_int_eq(s->unwind, 0);
    tc_sched_free(s);
    seed_rng(2);
    const int d = rnd(1, 1000);
    char field[64];
    snprintf(field, sizeof field, "  ],\n  \"unwind\": %d\n}\n", d);
    char *doc = edit("  ]\n}\n", field);
    ck_assert_int_eq(from_json(doc, &s), TC_OK);
    ck_assert_int_eq(s->unwind, d);
    char *j = to_json(s, NULL);
    ck_assert_ptr_nonnull(strstr(j, field)); /* written back after the transfers */
    free(j);
    free(doc);
    tc_sched_free(s);
    expect_edit_error("  ]\n}\n", "  ],\n  \"unwind\": -1\n}\n", TC_ERR_INVALID,
                      "plan.json:25: error: field \"unwind\" is -1, out of range (0 to 2147483647)\n");
    expect_edit_error("  ]\n}\n", "  ],\n  \"unwind\": \"two\"\n}\n", TC_ERR_INVALID,
                      "plan.json:25: error: field \"unwind\" must be an integer, not a string\n");
}
END_TEST

/* The "sparse" object: after the transfers (whose lines do not move), read back exactly, every error. */
START_TEST(test_sparse)
{
    tc_sched *s = NULL;
    const char *obj = "  ],\n  \"sparse\": {\n    \"density\": 0.01,\n    \"format\": \"pici\",\n"
                      "    \"dtype\": \"float32\",\n    \"thresholds\": {\"pici\": [0.6, 0.5, 0.1], "
                      "\"coo\": [0.7, 0.6, 0.5]},\n    \"formats\": \"ppdcpp\"\n  },\n  \"unwind\": 0\n}\n";
    char *doc = edit("  ]\n}\n", obj);
    ck_assert_msg(from_json(doc, &s) == TC_OK, "%s", tu_diags());
    ck_assert_ptr_nonnull(s->sparse);
    ck_assert(s->sparse->density == 0.01 && s->sparse->format == TC_SP_PICI && s->sparse->dtype == TC_SP_F32);
    ck_assert(s->sparse->th[TC_SP_COO][1] == 0.6 && s->sparse->th[TC_SP_PICI][2] == 0.1);
    ck_assert_int_eq(s->sparse->n, 6);
    ck_assert_int_eq(s->sparse->fmt[2], TC_SP_DENSE);
    ck_assert_int_eq(s->sparse->fmt[3], TC_SP_COO);
    ck_assert_int_eq(tc_sched_line(s, 5), 23); /* transfer i on line 18 + i, as without the object */
    char *j = to_json(s, NULL);
    ck_assert_ptr_nonnull(strstr(j, "\n  ],\n  \"sparse\""));
    ck_assert_str_eq(strstr(j, "\n  ],\n  \"sparse\""), strstr(doc, "\n  ],\n  \"sparse\"")); /* the writer's layout */
    free(j);
    /* the formats follow their transfers through a sort and a clone */
    tc_xfer t0 = s->xfers[0];
    s->xfers[0] = s->xfers[3];
    s->xfers[3] = t0;
    tc_sched *c = NULL;
    ck_assert_int_eq(tc_sched_clone(s, &c), TC_OK);
    tc_sched_sort(c); /* transfer 0 (now at 3, format c) and 3 (now at 0, format p) go back */
    ck_assert_int_eq(c->sparse->fmt[0], TC_SP_COO);
    ck_assert_int_eq(c->sparse->fmt[3], TC_SP_PICI);
    ck_assert_int_eq(c->xfers[0].step, 0);
    tc_sched_free(c);
    tc_sched_free(s);
    free(doc);
    struct { const char *from, *to, *msg; } bad[] = {
        {"\"ppdcpp\"", "\"ppdcp\"", "plan.json:25: error: field \"sparse\": \"formats\" has 5 letters for 6 transfers\n"},
        {"\"ppdcpp\"", "\"ppdxpp\"",
         "plan.json:25: error: field \"sparse\": \"formats\": transfer 3 has 'x', not d (dense), p (pici) or c (coo)\n"},
        {"0.01", "1.5", "plan.json:25: error: field \"sparse\": \"density\" must be a number from 0 to 1\n"},
        {"\"pici\",\n", "\"bsr\",\n", "plan.json:25: error: field \"sparse\": \"format\" must be \"pici\", \"coo\" or \"auto\"\n"},
        {"float32", "float8", "plan.json:25: error: field \"sparse\": \"dtype\" must be float32, float64, int32, bfloat16 or float16\n"},
        {"[0.7, 0.6, 0.5]", "[0.7, 0.6]",
         "plan.json:25: error: field \"sparse\": \"thresholds\" must be {\"pici\": [INTRA, INTER, ALLGATHER], \"coo\": [...]}\n"},
        {"[0.7, 0.6, 0.5]", "[0.7, 0.6, -1]", "plan.json:25: error: field \"sparse\": a threshold must be a number from 0 to 1\n"},
        {"    \"dtype\"", "    \"extra\": 1,\n    \"dtype\"", "plan.json:25: error: field \"sparse\": unknown member \"extra\"\n"},
        {"    \"dtype\": \"float32\",\n", "", "plan.json:25: error: field \"sparse\": missing member \"dtype\"\n"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *d = edit("  ]\n}\n", obj), *e = NULL;
        const char *p = strstr(d, bad[k].from);
        ck_assert_ptr_nonnull(p);
        e = malloc(strlen(d) + strlen(bad[k].to) + 1);
        memcpy(e, d, (size_t)(p - d));
        strcpy(e + (p - d), bad[k].to);
        strcat(e, p + strlen(bad[k].from));
        expect_read_error(e, TC_ERR_INVALID, bad[k].msg);
        free(d);
        free(e);
    }
    expect_edit_error("  ]\n}\n", "  ],\n  \"sparse\": 3\n}\n", TC_ERR_INVALID,
                      "plan.json:25: error: field \"sparse\": must be an object, not a number\n");
}
END_TEST

/* The switch model a plan was made with (--switch-model): written after "unwind" only when set, read back,
 * optional, and checked. */
START_TEST(test_switch_model)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(from_json(small_doc, &s), TC_OK);
    ck_assert_int_eq(s->switch_model, 0);
    char *j = to_json(s, NULL);
    ck_assert_ptr_null(strstr(j, "switch_model"));
    free(j);
    tc_sched_free(s);
    seed_rng(3);
    static const char *const names[] = {"unwind", "node", "multicast"};
    const int m = rnd(0, 2);
    char field[96];
    snprintf(field, sizeof field, "  ],\n  \"unwind\": 0,\n  \"switch_model\": \"%s\"\n}\n", names[m]);
    char *doc = edit("  ]\n}\n", field);
    ck_assert_int_eq(from_json(doc, &s), TC_OK);
    ck_assert_int_eq(s->switch_model, 1 + m);
    j = to_json(s, NULL);
    ck_assert_ptr_nonnull(strstr(j, field));
    free(j);
    free(doc);
    tc_sched_free(s);
    expect_edit_error("  ]\n}\n", "  ],\n  \"switch_model\": \"star\"\n}\n", TC_ERR_INVALID,
                      "plan.json:25: error: field \"switch_model\" must be \"unwind\", \"node\" or \"multicast\"\n");
    expect_edit_error("  ]\n}\n", "  ],\n  \"switch_model\": 2\n}\n", TC_ERR_INVALID,
                      "plan.json:25: error: field \"switch_model\" must be \"unwind\", \"node\" or \"multicast\"\n");
}
END_TEST

START_TEST(test_layout)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_BROADCAST, 2, 1, 1000, &s), TC_OK);
    s->seed = 42;
    char *j = to_json(s, NULL);
    ck_assert_str_eq(j, "{\n"
                        "  \"format\": \"tacosc-schedule\",\n"
                        "  \"version\": 1,\n"
                        "  \"tool\": \"tacosc " TC_VERSION "\",\n"
                        "  \"seed\": 42,\n"
                        "  \"topology\": null,\n"
                        "  \"algorithm\": null,\n"
                        "  \"collective\": \"broadcast\",\n"
                        "  \"ranks\": 2,\n"
                        "  \"chunks_per_rank\": 1,\n"
                        "  \"chunks\": 1,\n"
                        "  \"root\": 0,\n"
                        "  \"size_bytes\": 1000,\n"
                        "  \"chunk_bytes\": 1000,\n"
                        "  \"predicted_time\": 0,\n"
                        "  \"steps\": 0,\n"
                        "  \"transfers\": [],\n"
                        "  \"unwind\": 0\n"
                        "}\n");
    free(j);
    /* uint64 above 2^53 as strings; reduce op; routes */
    s->seed = UINT64_MAX;
    s->size_bytes = (1ull << 53) + 1;
    s->chunk_bytes = 1ull << 53;
    int route[] = {3, 4};
    ck_assert_int_eq(tc_sched_add(s, 1, 0, 0, TC_OP_REDUCE, -1, 2, 0.5, 0.75, route, 2), TC_OK);
    j = to_json(s, NULL);
    ck_assert_ptr_nonnull(strstr(j, "  \"seed\": \"18446744073709551615\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "  \"size_bytes\": \"9007199254740993\",\n  \"chunk_bytes\": \"9007199254740992\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "  \"steps\": 3,\n  \"transfers\": [\n    [1, 0, 0, \"reduce\", -1, 2, 0.5, 0.75, [3, 4]]\n  ],\n  \"unwind\": 0\n}\n"));
    free(j);
    tc_sched_free(s);
}
END_TEST

START_TEST(test_file_round_trip)
{
    seed_rng(2);
    tc_sched *s = random_sched(), *r = NULL;
    char *path = tu_tmpfile(".json", NULL);
    FILE *f = fopen(path, "w");
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_OK);
    fclose(f);
    ck_assert_msg(tc_emit_json_read(&ctx, path, &r) == TC_OK, "%s", tu_diags());
    assert_same(s, r);
    unlink(path);
    free(path);
    tc_sched_free(s);
    tc_sched_free(r);
    /* a missing file */
    ck_assert_int_eq(tc_emit_json_read(&ctx, "/nonexistent/plan.json", &r), TC_ERR_IO);
    ck_assert_str_eq(tu_diags(), "tacosc: error: cannot open '/nonexistent/plan.json': No such file or directory\n");
}
END_TEST

START_TEST(test_write_errors)
{
    tc_sched *s = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 2, 1, 64, &s), TC_OK);
    ck_assert_int_eq(tc_sched_add(s, 0, 1, 0, TC_OP_COPY, -1, 0, 0, INFINITY, NULL, 0), TC_OK);
    tc_ctx ctx;
    tu_ctx(&ctx);
    FILE *f = fopen("/dev/null", "w");
    ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_ERR_INVALID);
    fclose(f);
    ck_assert_str_eq(tu_diags(), "tacosc: error: cannot write JSON: transfer 0 has a non-finite time\n");
    s->xfers[0].t_end = 1;
    f = fopen("/dev/full", "w");
    if (f) {
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_ERR_IO);
        ck_assert_str_eq(tu_diags(), "tacosc: error: cannot write JSON schedule: No space left on device\n");
        fclose(f);
    }
    tc_sched_free(s);
}
END_TEST

START_TEST(test_syntax_errors)
{
    /* in the header */
    expect_edit_error("\"ranks\": 3,", "\"ranks\": 3,,", TC_ERR_PARSE,
                      "plan.json:9:14: error: malformed JSON at ','\n");
    expect_edit_error("\"seed\": 7", "\"seed\": 07x", TC_ERR_PARSE, "plan.json:5:13: error: malformed JSON at 'x,'\n");
    /* after the transfers */
    expect_edit_error("  ]\n}", "  ]\n} x", TC_ERR_PARSE, "plan.json:25:3: error: malformed JSON at 'x'\n");
    /* inside a transfer, and between transfers */
    expect_edit_error("[1, 2, 1,", "[1, 2 1,", TC_ERR_PARSE, "plan.json:19:11: error: malformed JSON at '1, \"copy\", 1, 0,'\n");
    expect_edit_error("[]],\n    [0, 1, 2", "[]],,\n    [0, 1, 2", TC_ERR_PARSE, "plan.json:20:43: error: malformed JSON at ','\n");
    expect_edit_error("[2]]\n", "[2]],\n", TC_ERR_PARSE, "plan.json:24:3: error: malformed JSON at ']'\n");
    expect_edit_error("[]],\n    [0, 1, 2", "[]]\n    [0, 1, 2", TC_ERR_PARSE,
                      "plan.json:21:5: error: malformed JSON at '[0, 1, 2, \"copy\"'\n");
    /* an unbalanced array in a transfer falls back to a whole-document parse */
    expect_edit_error("[2]]\n", "[2]\n", TC_ERR_PARSE, "plan.json:26:1: error: malformed JSON: unexpected end of file\n");
    expect_read_error("", TC_ERR_PARSE, "plan.json: error: empty file\n");
    expect_read_error(" \n ", TC_ERR_PARSE, "plan.json: error: empty file\n");
}
END_TEST

START_TEST(test_truncated)
{
    seed_rng(3);
    size_t n;
    char *full = NULL;
    tc_sched *s = NULL;
    do {
        tc_sched_free(s);
        s = random_sched();
        free(full);
        full = to_json(s, &n);
    } while (s->n_xfers < 20);
    /* cut after a whole transfer line: the end of the file is named */
    char *cut = strdup(full);
    char *line = cut;
    for (int i = 0; i < 17 + 10; i++)
        line = strchr(line, '\n') + 1;
    *line = 0;
    char want[128];
    snprintf(want, sizeof want, "plan.json:28:1: error: malformed JSON: unexpected end of file\n");
    expect_read_error(cut, TC_ERR_PARSE, want);
    /* anywhere: always a clean parse error at the end of the file */
    for (int iter = 0; iter < 300; iter++) {
        size_t at = (size_t)rnd(1, (int)n - 2);
        memcpy(cut, full, at);
        cut[at] = 0;
        int lines = 1, col = 1;
        for (size_t i = 0; i < at; i++, col++)
            if (cut[i] == '\n') {
                lines++;
                col = 0;
            }
        snprintf(want, sizeof want, "plan.json:%d:%d: error: malformed JSON: unexpected end of file\n", lines, col);
        tc_sched *r = NULL;
        ck_assert_int_eq(from_json(cut, &r), TC_ERR_PARSE);
        ck_assert_msg(!strcmp(tu_diags(), want), "cut at %zu: got %s want %s", at, tu_diags(), want);
    }
    free(cut);
    free(full);
    tc_sched_free(s);
}
END_TEST

START_TEST(test_header_errors)
{
    expect_edit_error("\"format\": \"tacosc-schedule\"", "\"format\": \"msccl\"", TC_ERR_INVALID,
                      "plan.json:2: error: field \"format\" is \"msccl\", not \"tacosc-schedule\": not a tacosc schedule\n");
    expect_edit_error("\"version\": 1", "\"version\": 2", TC_ERR_INVALID,
                      "plan.json:3: error: field \"version\" is 2, newer than this tacosc reads (version 1)\n");
    expect_edit_error("\"version\": 1", "\"version\": 0", TC_ERR_INVALID,
                      "plan.json:3: error: field \"version\" is 0, out of range (1 to 1000000)\n");
    expect_edit_error("\"version\": 1", "\"version\": \"1\"", TC_ERR_INVALID,
                      "plan.json:3: error: field \"version\" must be an integer, not a string\n");
    expect_edit_error("  \"ranks\": 3,\n", "", TC_ERR_INVALID, "plan.json: error: missing field \"ranks\"\n");
    expect_edit_error("\"ranks\": 3", "\"ranks\": 2.5", TC_ERR_INVALID,
                      "plan.json:9: error: field \"ranks\" must be an integer, not 2.5\n");
    expect_edit_error("\"ranks\": 3", "\"ranks\": 0", TC_ERR_INVALID,
                      "plan.json:9: error: field \"ranks\" is 0, out of range (1 to 2147483647)\n");
    expect_edit_error("\"collective\": \"allgather\"", "\"collective\": \"allgatherv\"", TC_ERR_INVALID,
                      "plan.json:8: error: field \"collective\" names an unknown collective \"allgatherv\"\n");
    expect_edit_error("\"collective\": \"allgather\"", "\"collective\": 3", TC_ERR_INVALID,
                      "plan.json:8: error: field \"collective\" must be a string, not a number\n");
    expect_edit_error("\"chunks\": 3", "\"chunks\": 4", TC_ERR_INVALID,
                      "plan.json:11: error: field \"chunks\" is 4, but allgather on 3 ranks with 1 chunks per rank has 3\n");
    /* issue 23: a chunk size the size does not give (sim printed 8e14 GB/s) */
    expect_edit_error("\"chunk_bytes\": 1024", "\"chunk_bytes\": 1", TC_ERR_INVALID,
                      "plan.json:14: error: field \"chunk_bytes\" is 1, but 3072 bytes in allgather's chunks make "
                      "1024\n");
    /* a root for a collective without one: refused, not ignored */
    expect_edit_error("\"root\": 0", "\"root\": 2", TC_ERR_INVALID,
                      "plan.json:12: error: field \"root\" is 2, but allgather has no root (0 is written)\n");
    expect_edit_error("\"root\": 0", "\"root\": 3", TC_ERR_INVALID,
                      "plan.json:12: error: field \"root\" is 3, out of range (0 to 2)\n");
    expect_edit_error("\"seed\": 7", "\"seed\": 18446744073709551615", TC_ERR_INVALID,
                      "plan.json:5: error: field \"seed\" is 2^53 or larger and cannot be read exactly as a number; "
                      "write it as a string\n");
    /* 2^53 + 1, which the JSON parser reads as 2^53, is refused, not rounded */
    expect_edit_error("\"seed\": 7", "\"seed\": 9007199254740993", TC_ERR_INVALID,
                      "plan.json:5: error: field \"seed\" is 2^53 or larger and cannot be read exactly as a number; "
                      "write it as a string\n");
    expect_edit_error("\"seed\": 7", "\"seed\": \"18446744073709551616\"", TC_ERR_INVALID,
                      "plan.json:5: error: field \"seed\" must be an unsigned 64-bit integer, not \"18446744073709551616\"\n");
    expect_edit_error("\"size_bytes\": 3072", "\"size_bytes\": -1", TC_ERR_INVALID,
                      "plan.json:13: error: field \"size_bytes\" must be an unsigned integer, not -1\n");
    expect_edit_error("\"topology\": \"ring-3\"", "\"topology\": 5", TC_ERR_INVALID,
                      "plan.json:6: error: field \"topology\" must be a string or null, not a number\n");
    expect_edit_error("\"predicted_time\": 4.0e-06", "\"predicted_time\": -1", TC_ERR_INVALID,
                      "plan.json:15: error: field \"predicted_time\" must be a number from 0 to 1000000 (seconds)\n");
    expect_edit_error("\"predicted_time\": 4.0e-06", "\"predicted_time\": 1e308", TC_ERR_INVALID,
                      "plan.json:15: error: field \"predicted_time\" must be a number from 0 to 1000000 (seconds)\n");
    /* a declared count is bounded by what the file holds (issue 14: steps 2147483647 was accepted) */
    expect_edit_error("\"steps\": 2,", "\"steps\": 2147483647,", TC_ERR_INVALID,
                      "plan.json:16: error: field \"steps\" is 2147483647, more than the 6 transfers use "
                      "(largest step 1)\n");
    expect_edit_error("\"steps\": 2,", "\"steps\": 7,", TC_ERR_INVALID,
                      "plan.json:16: error: field \"steps\" is 7, more than the 6 transfers use (largest step 1)\n");
    /* ranks and chunks are bounded by what the transfers can involve (issue 14: a tiny file declaring a
     * billion ranks sized everything after it) */
    static const struct { const char *coll, *ranks, *cpr, *chunks, *msg; } counts[] = {
        {"allgather", "14", "1", "14",
         "plan.json:9: error: field \"ranks\" is 14, more than the 6 transfers can involve (at most 13 ranks)\n"},
        {"broadcast", "1000000", "3", "3",
         "plan.json:9: error: field \"ranks\" is 1000000, more than the 6 transfers can involve (at most 13 "
         "ranks)\n"},
        {"allgather", "3", "5", "15",
         "plan.json:11: error: field \"chunks\" is 15, more than the 6 transfers can move (at most 12 chunks)\n"},
        {"allreduce", "3", "1", "2147483647",
         "plan.json:11: error: field \"chunks\" is 2147483647, more than the 6 transfers can move (at most 12 "
         "chunks)\n"},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char from[4][64], to[4][64];
        snprintf(from[0], 64, "\"collective\": \"allgather\"");
        snprintf(to[0], 64, "\"collective\": \"%s\"", counts[i].coll);
        snprintf(from[1], 64, "\"ranks\": 3,");
        snprintf(to[1], 64, "\"ranks\": %s,", counts[i].ranks);
        snprintf(from[2], 64, "\"chunks_per_rank\": 1,");
        snprintf(to[2], 64, "\"chunks_per_rank\": %s,", counts[i].cpr);
        snprintf(from[3], 64, "\"chunks\": 3,");
        snprintf(to[3], 64, "\"chunks\": %s,", counts[i].chunks);
        char *doc = strdup(small_doc);
        for (int k = 0; k < 4; k++) {
            char *next = replace_all(doc, from[k], to[k]);
            free(doc);
            doc = next;
        }
        expect_read_error(doc, TC_ERR_INVALID, counts[i].msg);
        free(doc);
    }
    char *six = edit("\"steps\": 2,", "\"steps\": 6,"); /* steps without transfers, up to their number */
    tc_sched *s6 = NULL;
    ck_assert_msg(from_json(six, &s6) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(s6->n_steps, 6);
    tc_sched_free(s6);
    free(six);
    expect_edit_error("\"steps\": 2,", "\"steps\": 2,\n  \"colour\": \"red\",", TC_ERR_INVALID,
                      "plan.json:17: error: field \"colour\" is not part of format version 1\n");
    expect_edit_error("\"steps\": 2,", "\"steps\": 2,\n  \"ranks\": 3,", TC_ERR_INVALID,
                      "plan.json:9: error: field \"ranks\" appears twice\n");
    expect_edit_error("\"transfers\": [", "\"transfers\": {\"a\": 1}, \"x\": [", TC_ERR_INVALID,
                      "plan.json:17: error: field \"x\" is not part of format version 1\n");
    char head[1024];
    snprintf(head, sizeof head, "%.*s\"transfers\": 5\n}\n", (int)(strstr(small_doc, "\"transfers\"") - small_doc),
             small_doc);
    expect_read_error(head, TC_ERR_INVALID, "plan.json:17: error: field \"transfers\" must be an array, not a number\n");
    snprintf(head, sizeof head, "%.*s\"steps\": 2\n}\n", (int)(strstr(small_doc, "\"steps\"") - small_doc), small_doc);
    expect_read_error(head, TC_ERR_INVALID, "plan.json: error: missing field \"transfers\"\n");
    expect_read_error("[1, 2]\n", TC_ERR_INVALID,
                      "plan.json:1: error: not a tacosc schedule: the top level is an array, not an object\n");
    expect_read_error("{\"format\": \"tacosc-schedule\"}", TC_ERR_INVALID, "plan.json: error: missing field \"version\"\n");
}
END_TEST

START_TEST(test_transfer_errors)
{
    static const struct { const char *from, *to, *msg; } cases[] = {
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 3, 1, \"copy\", 1, 0,", "plan.json:19: error: transfer 1: dst 3 out of range (3 ranks)\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[-1, 2, 1, \"copy\", 1, 0,", "plan.json:19: error: transfer 1: src -1 out of range (3 ranks)\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 2, 9, \"copy\", 1, 0,", "plan.json:19: error: transfer 1: chunk 9 out of range (3 chunks)\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 2, 1, \"move\", 1, 0,", "plan.json:19: error: transfer 1: op must be \"copy\" or \"reduce\"\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 2, 1, \"copy\", -5, 0,", "plan.json:19: error: transfer 1: link -5 out of range (-1 or a link id)\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 2, 1, \"copy\", 1, 2,", "plan.json:19: error: transfer 1: step 2 out of range (2 steps)\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, 2, 1.5, \"copy\", 1, 0,", "plan.json:19: error: transfer 1: chunk must be an integer, not 1.5\n"},
        {"[1, 2, 1, \"copy\", 1, 0,", "[1, \"2\", 1, \"copy\", 1, 0,", "plan.json:19: error: transfer 1: dst must be an integer, not a string\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1e-06]",
         "plan.json:19: error: transfer 1: expected [src, dst, chunk, op, link, step, t_start, t_end, route]\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "{\"src\": 1}",
         "plan.json:19: error: transfer 1: expected [src, dst, chunk, op, link, step, t_start, t_end, route]\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, null, []]",
         "plan.json:19: error: transfer 1: t_end must be a number, not null\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1e999, []]",
         "plan.json:19: error: transfer 1: t_end is not a finite number\n"},
        /* times are bounded (issue 14: t_start -1e308 was accepted) */
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, -1e308, 1e-06, []]",
         "plan.json:19: error: transfer 1: t_start is -1e+308, out of range (0 to 1000000 seconds)\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, -1e-9, 1e-06, []]",
         "plan.json:19: error: transfer 1: t_start is -1.0000000000000001e-09, out of range (0 to 1000000 seconds)\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1000000.5, []]",
         "plan.json:19: error: transfer 1: t_end is 1000000.5, out of range (0 to 1000000 seconds)\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, 4]",
         "plan.json:19: error: transfer 1: route must be an array of link ids, not a number\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, [1, -2]]",
         "plan.json:19: error: transfer 1: route link -2 out of range\n"},
        {"[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, []]", "[1, 2, 1, \"copy\", 1, 0, 0, 1e-06, [\"a\"]]",
         "plan.json:19: error: transfer 1: route link must be an integer, not a string\n"},
        {"[2, 0, 1, \"copy\", 2, 1, 1e-06, 2e-06, [2]]", "[2, 0, 1, \"copy\", 2, 1, 1e-06, 2e-06, [2]], 7",
         "plan.json:23: error: transfer 6: expected [src, dst, chunk, op, link, step, t_start, t_end, route]\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_edit_error(cases[i].from, cases[i].to, TC_ERR_INVALID, cases[i].msg);
    /* a transfer spread over lines is located by its first line */
    expect_edit_error("[1, 2, 1, \"copy\", 1, 0,", "\n\n  [1, 2, 7, \"copy\", 1, 0,", TC_ERR_INVALID,
                      "plan.json:21: error: transfer 1: chunk 7 out of range (3 chunks)\n");
}
END_TEST

START_TEST(test_reader_accepts)
{
    /* the reader takes any JSON layout, aliases of collective names, and all-reduce chunk counts */
    const char *doc = "{\"transfers\":[[0,1,0,\"reduce\",-1,0,0,1,[]],[1,0,2,\"reduce\",-1,0,0,1,[]],"
                      "[0,1,4,\"reduce\",-1,0,0,1,[]]],\"format\":\"tacosc-schedule\",\"version\":1,"
                      "\"tool\":\"x\",\"seed\":\"123\",\"topology\":null,\"algorithm\":null,\"collective\":\"all-reduce\","
                      "\"ranks\":2,\"chunks_per_rank\":1,\"chunks\":5,\"root\":0,\"size_bytes\":10,\"chunk_bytes\":2,"
                      "\"predicted_time\":1e-5,\"steps\":1}";
    tc_sched *s = NULL;
    ck_assert_msg(from_json(doc, &s) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(s->coll, TC_COLL_ALLREDUCE);
    ck_assert_int_eq(s->n_chunks, 5);
    ck_assert_int_eq(s->root, 0);
    ck_assert_uint_eq(s->seed, 123);
    ck_assert_uint_eq(s->chunk_bytes, 2);
    ck_assert_int_eq(s->n_xfers, 3);
    ck_assert_int_eq(s->xfers[0].op, TC_OP_REDUCE);
    ck_assert_ptr_null(s->algo);
    tc_sched_free(s);
    /* a key "transfers" inside a string or a nested object does not confuse the scan */
    char *d2 = edit("\"tool\": \"tacosc 0.1.0\"", "\"tool\": \"\\\"transfers\\\": [\"");
    ck_assert_msg(from_json(d2, &s) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(s->n_xfers, 6);
    tc_sched_free(s);
    free(d2);
    /* a UTF-8 byte order mark before the document is skipped (RFC 8259 section 8.1) */
    char *d3 = malloc(strlen(small_doc) + 4);
    sprintf(d3, "\xef\xbb\xbf%s", small_doc);
    ck_assert_msg(from_json(d3, &s) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(s->n_xfers, 6);
    tc_sched_free(s);
    free(d3);
}
END_TEST

START_TEST(test_formats)
{
    ck_assert_int_eq(tc_format_from_path("a/plan.json"), TC_FMT_JSON);
    ck_assert_int_eq(tc_format_from_path("PLAN.JSON"), TC_FMT_JSON);
    ck_assert_int_eq(tc_format_from_path("plan.xml"), TC_FMT_MSCCL);
    ck_assert_int_eq(tc_format_from_path("heat.svg"), TC_FMT_SVG);
    ck_assert_int_eq(tc_format_from_path("plan"), TC_FMT_AUTO);
    ck_assert_int_eq(tc_format_from_path("dir.json/plan"), TC_FMT_AUTO);
    ck_assert_int_eq(tc_format_from_path("plan.txt"), TC_FMT_AUTO);
    ck_assert_int_eq(tc_format_from_path(NULL), TC_FMT_AUTO);
    tc_format f = TC_FMT_AUTO;
    ck_assert_int_eq(tc_format_parse("json", &f), TC_OK);
    ck_assert_int_eq(f, TC_FMT_JSON);
    ck_assert_int_eq(tc_format_parse("msccl", &f), TC_OK);
    ck_assert_int_eq(f, TC_FMT_MSCCL);
    ck_assert_int_eq(tc_format_parse("XML", &f), TC_OK);
    ck_assert_int_eq(f, TC_FMT_MSCCL);
    ck_assert_int_eq(tc_format_parse("svg", &f), TC_OK);
    ck_assert_int_eq(f, TC_FMT_SVG);
    ck_assert_int_eq(tc_format_parse("auto", &f), TC_OK);
    ck_assert_int_eq(f, TC_FMT_AUTO);
    ck_assert_int_eq(tc_format_parse("yaml", &f), TC_ERR_INVALID);
}
END_TEST

/* issue 27: the writer formats transfer lines into a 128 KiB buffer (a small one for plans of up to 100
 * transfers).  Plans whose text crosses the buffer's end many times, with the longest fields (%.17g times,
 * 10-digit ids, -1 links, "reduce") and routes longer than either buffer (flushed mid-route), read back
 * field by field equal to the schedule: the reader is the oracle, not the writer's old output. */
START_TEST(test_buffer_boundary)
{
    seed_rng(5);
    for (int big = 0; big < 2; big++) {
        int nx = big ? 6000 : 90; /* 6000 lines of ~130 bytes: 6 buffers; 90: the small buffer */
        tc_sched *s = NULL, *r = NULL;
        ck_assert_int_eq(tc_sched_create(TC_COLL_ALLREDUCE, 64, 2, 1 << 20, &s), TC_OK);
        s->time = tc_rng_unit(&rng) * 1e-3;
        int *route = malloc(30000 * sizeof *route);
        for (int i = 0; i < nx; i++) {
            int rl = i % 997 == 5 ? rnd(20000, 30000) : rnd(0, 3) ? 0 : rnd(1, 40); /* a few ~200 KB routes */
            for (int h = 0; h < rl; h++)
                route[h] = rnd(0, 1) ? rnd(1000000000, 2147483647) : rnd(0, 9);
            double t0 = tc_rng_unit(&rng) * 1e-3, t1 = t0 + tc_rng_unit(&rng) * 1e-6;
            ck_assert_int_eq(tc_sched_add(s, rnd(0, 63), rnd(0, 63), rnd(0, 127), (tc_op)rnd(0, 1),
                                          rnd(0, 1) ? -1 : rnd(1000000000, 2147483647), rnd(0, 2000000000), t0, t1,
                                          route, rl),
                             TC_OK);
        }
        free(route);
        size_t n;
        char *j = to_json(s, &n);
        ck_assert_msg(big ? n > 4 * (128u << 10) : n > 128u << 10, "%zu bytes", n);
        ck_assert_int_eq(strlen(j), n);
        ck_assert_msg(from_json(j, &r) == TC_OK, "%s", tu_diags());
        assert_same(s, r);
        free(j);
        tc_sched_free(s);
        tc_sched_free(r);
    }
}
END_TEST

START_TEST(test_large_speed)
{
    /* 200,000 transfers (50,000 under AddressSanitizer): write and read back, both timed */
    tc_sched *s = NULL, *r = NULL;
    ck_assert_int_eq(tc_sched_create(TC_COLL_ALLGATHER, 1000, 1, 1 << 20, &s), TC_OK);
    seed_rng(4);
#ifdef __SANITIZE_ADDRESS__
    int nx = 50000; /* AddressSanitizer: keep the suite quick */
#else
    int nx = 200000;
#endif
    for (int i = 0; i < nx; i++) {
        double t = rnd(0, 100000) * 0.37e-6;
        ck_assert_int_eq(tc_sched_add(s, rnd(0, 999), rnd(0, 999), rnd(0, 999), TC_OP_COPY, rnd(0, 4000), rnd(0, 998),
                                      t, t + 0.37e-6, NULL, 0),
                         TC_OK);
    }
    double t0 = tc_now();
    size_t n;
    char *j = to_json(s, &n);
    double t1 = tc_now();
    ck_assert_msg(from_json(j, &r) == TC_OK, "%s", tu_diags());
    double t2 = tc_now();
    fprintf(stderr, "json: %d transfers, %zu bytes: write %.3f s, read %.3f s\n", s->n_xfers, n, t1 - t0, t2 - t1);
    assert_same(s, r);
    free(j);
    tc_sched_free(s);
    tc_sched_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_round_trip_random);
    tcase_add_test(tc, test_unwind);
    tcase_add_test(tc, test_sparse);
    tcase_add_test(tc, test_switch_model);
    tcase_add_test(tc, test_other_layouts);
    tcase_add_test(tc, test_lines);
    tcase_add_test(tc, test_small_doc_reads);
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_file_round_trip);
    tcase_add_test(tc, test_write_errors);
    tcase_add_test(tc, test_syntax_errors);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_header_errors);
    tcase_add_test(tc, test_transfer_errors);
    tcase_add_test(tc, test_reader_accepts);
    tcase_add_test(tc, test_formats);
    tcase_add_test(tc, test_buffer_boundary);
    tcase_add_test(tc, test_large_speed);
    suite_add_tcase(su, tc);
    return su;
}

TU_MAIN(suite)
