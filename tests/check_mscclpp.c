/* MSCCL++ execution-plan vocabulary (include/tacos/mscclpp.h).
 * Oracle: the operation names of microsoft/mscclpp 1f5f065d's plan loader (getOpType in
 * src/core/executor/execution_plan.cc), listed here in that function's order, independently of the
 * table in src/emit/mscclpp_ops.c (which follows the OperationType enum order). */
#include "testutil.h"

#include <string.h>

#include "tacos/compile.h"
#include "tacos/mscclpp.h"
#include "tacos/topo.h"

#include <stdarg.h>

/* tu_run of a printf-style command line */
static int tu_run_fmt(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tu_run_fmt(char **out, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return tu_run(cmd, out);
}

/* A size every shipped topology of 8 to 64 npus can run: 16 B alignment x lcm(8, 9, 16, 20, 32, 64) x 64
 * chunks, so the executor's rule (size / 16 a multiple of the chunks) holds for every chunking tacosc
 * picks there (1..8 per rank; it re-chunks when one does not fit). */
#define SHIPPED_SIZE 2949120ull

static const char *const shipped_colls[3] = {"allreduce", "allgather", "reducescatter"};

/* TOPO's npus (tacosc info) */
static int shipped_npus(const char *topo)
{
    char *out = NULL;
    int rc = tu_tacosc_run(&out, "info %s %s", topo, tu_shipped_costs(topo)), n = 0;
    ck_assert_msg(rc == 0, "%s", tu_tail(out));
    const char *np = strstr(out, "npus");
    ck_assert_ptr_nonnull(np);
    sscanf(np + 4, "%d", &n);
    free(out);
    return n;
}

/* compile TOPO's three collectives to MSCCL++ plans with the CLI (at once: two cores), read each back and
 * verify it with the library at the size the executor runs */
static void shipped_plans(const char *dir, const char *topo, int n)
{
    char *out = NULL;
    int rc = tu_run_fmt(&out, "for c in allreduce allgather reducescatter; do (%s %s %s -c $c --size %llu -f mscclpp "
                              "-o %s/$c.json -q || echo \"FAILED $c\") & done; wait",
                        tu_tacosc(), topo, tu_shipped_costs(topo), SHIPPED_SIZE, dir);
    ck_assert_msg(rc == 0 && !strstr(out, "FAILED"), "%s: %s", topo, tu_tail(out));
    free(out);
    for (int c = 0; c < 3; c++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", dir, shipped_colls[c]);
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_mscclpp *p = NULL;
        tc_mscclpp_verdict v;
        ck_assert_msg(tc_mscclpp_read(&ctx, path, &p) == TC_OK, "%s", tu_diags());
        ck_assert_msg(tc_mscclpp_verify(&ctx, p, SHIPPED_SIZE, path, &v) == TC_OK, "%s %s: %s", topo,
                      shipped_colls[c], tu_diags());
        ck_assert_int_eq(v.modelled, 1);
        ck_assert_int_eq(p->ngpus, n);
        ck_assert_str_eq(p->collective, shipped_colls[c]);
        ck_assert_int_le(v.max_tbs, TC_MSCCLPP_MAX_TBS);
        tc_mscclpp_free(p);
        remove(path);
    }
}

/* every shipped topology of 8 to 64 npus: all-reduce, all-gather, reduce-scatter lower to plans the
 * verifier proves at a size the executor accepts */
START_TEST(test_shipped_topologies)
{
    char *listing = NULL;
    ck_assert_int_eq(tu_run("ls topologies/*.xml topologies/clusters/*.xml", &listing), 0);
    char *dir = tu_tmpdir("mpp");
    int tried = 0;
    for (char *line = strtok(listing, "\n"); line; line = strtok(NULL, "\n")) {
        int n = shipped_npus(line);
        if (n < 8 || n > 64)
            continue;
        shipped_plans(dir, line, n);
        tried++;
    }
    free(listing);
    free(dir);
    ck_assert_int_ge(tried, 20); /* 21 shipped topologies and 3 clusters have 8 to 64 npus */
}
END_TEST

/* the written file is the plan: reading it back and writing it again gives the same bytes, and the same
 * compile gives the same file */
START_TEST(test_roundtrip_deterministic)
{
    char *a = NULL, *b = NULL, *out = NULL;
    char *dir = tu_tmpdir("mpprt");
    char pa[256], pb[256], pc[256];
    snprintf(pa, sizeof pa, "%s/a.json", dir);
    snprintf(pb, sizeof pb, "%s/b.json", dir);
    snprintf(pc, sizeof pc, "%s/c.json", dir);
    for (int i = 0; i < 2; i++) {
        int rc = tu_tacosc_run(&out, "topologies/mesh2d-4x4.xml -c allreduce --size 1M -f mscclpp -o %s -q",
                               i ? pb : pa);
        ck_assert_msg(rc == 0, "%s", tu_tail(out));
        free(out);
    }
    size_t la = 0, lb = 0;
    a = tu_slurp(pa, &la);
    b = tu_slurp(pb, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(a, b, la), 0);
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_mscclpp *p = NULL;
    ck_assert_int_eq(tc_mscclpp_read_mem(&ctx, pa, a, la, &p), TC_OK);
    FILE *f = fopen(pc, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(tc_mscclpp_write(&ctx, p, f), TC_OK);
    fclose(f);
    free(b);
    b = tu_slurp(pc, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(a, b, la), 0);
    /* told apart from tacosc's own JSON by content */
    ck_assert_int_eq(tc_mscclpp_sniff(a, la), 1);
    int rc = tu_tacosc_run(&out, "verify %s", pa);
    ck_assert_msg(rc == 0 && strstr(out, "MSCCL++ allreduce, 16 gpus") && strstr(out, "proven"), "%s", out);
    free(out);
    rc = tu_tacosc_run(&out, "topologies/mesh2d-4x4.xml -c allreduce --size 1M -o %s -q && head -c 4096 %s", pc, pc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(tc_mscclpp_sniff(out, strlen(out)), 0);
    free(out);
    tc_mscclpp_free(p);
    free(a);
    free(b);
    free(dir);
}
END_TEST

static const char *const loader_names[] = {
  "nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait", "flush",
  "re", "res", "rre", "rres", "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt",
  "recpkt", "recspkt", "glres", "gstore", "gstorepkt", "rlxsignal", "rlxwait", "pipeline",
  "sem_acquire", "sem_release",
};

START_TEST(test_op_table_matches_loader)
{
    size_t n = sizeof loader_names / sizeof loader_names[0];
    ck_assert_uint_eq(tc_mscclpp_op_count(), n);
    for (size_t i = 0; i < n; i++) {
        const tc_mscclpp_op_info *op = tc_mscclpp_op_find(loader_names[i]);
        ck_assert_msg(op != NULL, "loader name %s missing", loader_names[i]);
        ck_assert_str_eq(op->name, loader_names[i]);
        /* packet forms and only they end in "pkt" */
        size_t len = strlen(op->name);
        ck_assert_int_eq(op->packets, len > 3 && strcmp(op->name + len - 3, "pkt") == 0);
    }
    /* every row is distinct */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            ck_assert_str_ne(tc_mscclpp_op_at(i)->name, tc_mscclpp_op_at(j)->name);
    ck_assert_ptr_null(tc_mscclpp_op_at(n));
}
END_TEST

START_TEST(test_op_kinds)
{
    ck_assert_int_eq(tc_mscclpp_op_find("re")->kind, TC_MSCCLPP_OP_REDUCE);
    ck_assert_int_eq(tc_mscclpp_op_find("rres")->kind, TC_MSCCLPP_OP_REDUCE);
    ck_assert_int_eq(tc_mscclpp_op_find("put")->kind, TC_MSCCLPP_OP_MOVE);
    ck_assert_int_eq(tc_mscclpp_op_find("copy")->remote, 0);
    ck_assert_int_eq(tc_mscclpp_op_find("wait")->kind, TC_MSCCLPP_OP_SYNC);
}
END_TEST

START_TEST(test_rejects_unknown)
{
    /* names the loader throws "Invalid operation type" on, including MSCCL XML step types */
    const char *bad[] = {"", "s", "r", "rcs", "PUT", "put ", "reduce", "send", NULL};
    for (int i = 0; bad[i]; i++) ck_assert_ptr_null(tc_mscclpp_op_find(bad[i]));
    ck_assert_ptr_null(tc_mscclpp_op_find(NULL));
    ck_assert_int_eq(tc_mscclpp_buffer_valid("i") + tc_mscclpp_buffer_valid("o") + tc_mscclpp_buffer_valid("s"), 3);
    ck_assert_int_eq(tc_mscclpp_buffer_valid("input"), 0);
    ck_assert_int_eq(tc_mscclpp_buffer_valid(NULL), 0);
    ck_assert_int_eq(tc_mscclpp_channel_valid("memory") + tc_mscclpp_channel_valid("port") +
                         tc_mscclpp_channel_valid("switch") + tc_mscclpp_channel_valid("none"), 4);
    /* the pre-0.6 names are not accepted by this version's loader */
    ck_assert_int_eq(tc_mscclpp_channel_valid("sm"), 0);
    ck_assert_int_eq(tc_mscclpp_channel_valid("proxy"), 0);
}
END_TEST

START_TEST(test_limits)
{
    ck_assert_int_eq(TC_MSCCLPP_MAX_CHANNEL, 16);
    ck_assert_int_eq(TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION, 8);
    ck_assert_int_eq(TC_MSCCLPP_MAX_OPERATION, 64);
    ck_assert_int_le(TC_MSCCLPP_MAX_CHANNEL_PER_OPERATION, TC_MSCCLPP_MAX_CHANNEL);
}
END_TEST

/* ---- the verifier's rules, each broken on purpose ---------------------------------------------------- */

static tc_mscclpp *lowered_pp(const char *algo, const char *kind, const char *dims, tc_coll coll)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    tc_mscclpp *p = NULL;
    ck_assert_int_eq(tc_topo_generate(&ctx, kind, dims, NULL, 0, &t), TC_OK);
    tc_sched *s = tu_gen(algo, t, coll, 1 << 20);
    tu_ctx(&ctx);
    ck_assert_msg(tc_mscclpp_lower(&ctx, s, NULL, &p) == TC_OK, "%s", tu_diags());
    ck_assert_msg(tc_mscclpp_verify(&ctx, p, 1 << 20, "plan", NULL) == TC_OK, "%s", tu_diags());
    tc_sched_free(s);
    tc_topo_free(t);
    return p;
}

static void expect_rule(tc_mscclpp *p, uint64_t size, const char *rule)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_status st = tc_mscclpp_verify(&ctx, p, size, "mutant", NULL);
    ck_assert_msg(st != TC_OK && strstr(tu_diags(), rule), "expected %s, got: %s", rule, tu_diags());
    tc_mscclpp_free(p);
}

/* index of the first op named `name` in tb, whose neighbours are named prev and next (NULL: any) */
static int find_op(const tc_mscclpp_tb *tb, const char *prev, const char *name, const char *next)
{
    for (int k = 0; k < tb->n_ops; k++)
        if (!strcmp(tc_mscclpp_op_at((size_t)tb->ops[k].op)->name, name) &&
            (!prev || (k > 0 && !strcmp(tc_mscclpp_op_at((size_t)tb->ops[k - 1].op)->name, prev))) &&
            (!next || (k + 1 < tb->n_ops && !strcmp(tc_mscclpp_op_at((size_t)tb->ops[k + 1].op)->name, next))))
            return k;
    return -1;
}

static void delete_op(tc_mscclpp_tb *tb, int k)
{
    memmove(&tb->ops[k], &tb->ops[k + 1], (size_t)(tb->n_ops - k - 1) * sizeof *tb->ops);
    tb->n_ops--;
}

/* a tb of the plan that holds op `name` (with the given neighbours), and that op's index */
static tc_mscclpp_tb *tb_with(tc_mscclpp *p, const char *prev, const char *name, const char *next, int *k)
{
    for (int g = 0; g < p->ngpus; g++)
        for (int t = 0; t < p->gpus[g].n_tbs; t++)
            if ((*k = find_op(&p->gpus[g].tbs[t], prev, name, next)) >= 0)
                return &p->gpus[g].tbs[t];
    ck_abort_msg("no %s in the plan", name);
    return NULL;
}

START_TEST(test_rules_broken)
{
    const uint64_t S = 1 << 20;
    int k;
    /* MAX_OPERATION: 60 more nops */
    tc_mscclpp *p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    tc_mscclpp_tb *tb = &p->gpus[0].tbs[0];
    tc_mscclpp_op nop = tb->ops[0];
    nop.op = 0; /* the table's row 0 is nop */
    nop.n_chan = nop.n_src = nop.n_dst = 0;
    nop.chan_type = -1;
    for (int i = 0; i < 60; i++) {
        tb->ops = realloc(tb->ops, (size_t)(tb->n_ops + 1) * sizeof *tb->ops);
        tb->ops[tb->n_ops++] = nop;
    }
    expect_rule(p, S, "[limit-operations]");
    /* MAX_CHANNEL: 17 memory channels in one thread block */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    tb = &p->gpus[0].tbs[0];
    tb->ch[0] = realloc(tb->ch[0], 17 * sizeof(int));
    for (int i = tb->n_ch[0]; i < 17; i++)
        tb->ch[0][i] = 0;
    tb->n_ch[0] = 17;
    expect_rule(p, S, "[limit-channels]");
    /* a channel index past the thread block's channels */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    tb = tb_with(p, NULL, "signal", NULL, &k);
    tb->ops[k].chan[0] = tb->n_ch[0];
    expect_rule(p, S, "[channels]");
    /* a put past the peer's scratch */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLGATHER);
    tb = tb_with(p, NULL, "put", NULL, &k);
    tb->ops[k].dst[0].index = p->gpus[1].s_chunks + 40;
    expect_rule(p, S, "[buffers]");
    /* a put whose destination is local: the executor writes it through a peer's pointer (and tacos-run
     * would look the buffer up among the peers') */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLGATHER);
    tb = tb_with(p, NULL, "put", NULL, &k);
    tb->ops[k].dst[0].type = 2;
    tb->ops[k].dst[0].id = -1;
    expect_rule(p, S, "must be a peer's (buffer_id) buffer [operations]");
    /* gpus[r].id must be r */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLGATHER);
    p->gpus[1].id = 2;
    expect_rule(p, S, "[gpu-id]");
    /* all-reduce buffers of two chunk sizes */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    p->gpus[3].o_chunks++;
    expect_rule(p, S, "[chunks]");
    /* the executor's message-size rule: 8 chunks of 16-byte units do not fit 1000 bytes */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    expect_rule(p, 1000, "[size]");
    /* a signal straight after the put it publishes */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLREDUCE);
    tb = tb_with(p, "put", "nop", "signal", &k);
    delete_op(tb, k);
    expect_rule(p, S, "[thread-sync]");
    /* a signal that never comes */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLGATHER);
    tb = tb_with(p, "nop", "signal", NULL, &k);
    delete_op(tb, k);
    expect_rule(p, S, "[deadlock]");
    /* a copy from another landing chunk: the wrong chunk ends in the output */
    p = lowered_pp("ring", "ring", "8", TC_COLL_ALLGATHER);
    tb = tb_with(p, "nop", "copy", NULL, &k);
    tb->ops[k].src[0].index = (tb->ops[k].src[0].index + 1) % p->gpus[0].s_chunks;
    expect_rule(p, S, "[result]");
    /* a reduction that adds a copy to itself */
    p = lowered_pp("ring", "ring", "8", TC_COLL_REDUCESCATTER);
    tb = tb_with(p, NULL, "re", NULL, &k);
    tb->ops[k].src[1] = tb->ops[k].src[0];
    expect_rule(p, S, "[semantics]");
}
END_TEST

/* A protocol other than "Simple" or "LL": the executor runs it as Simple (it tests protocol == "LL"), and so
 * does the reader, with a warning (audit: LL128 was read as Simple silently). */
START_TEST(test_protocol_other_warned)
{
    size_t n = 0;
    char *text = tu_slurp("tests/mscclpp/pull-allreduce-2.json", &n);
    ck_assert_ptr_nonnull(text);
    char *at = strstr(text, "\"protocol\": \"Simple\"");
    ck_assert_ptr_nonnull(at);
    static const char *const others[] = {"LL128", "simple", "ll"};
    const char *o = others[tu_seed() % 3];
    char *edited = malloc(n + 16);
    ck_assert_ptr_nonnull(edited);
    snprintf(edited, n + 16, "%.*s\"protocol\": \"%s\"%s", (int)(at - text), text, o, at + strlen("\"protocol\": \"Simple\""));
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_mscclpp *p = NULL;
    ck_assert_int_eq(tc_mscclpp_read_mem(&ctx, "plan.json", edited, strlen(edited), &p), TC_OK);
    ck_assert_int_eq(p->packets, 0);
    ck_assert_msg(strstr(tu_diags(), "warning: protocol") && strstr(tu_diags(), "runs it as Simple"), "%s", tu_diags());
    tc_mscclpp_free(p);
    free(edited);
    free(text);
}
END_TEST

/* limits the reader applies, on plans written here */
static void read_fails(const char *text, const char *rule)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_mscclpp *p = NULL;
    tc_status st = tc_mscclpp_read_mem(&ctx, "plan.json", text, strlen(text), &p);
    if (st == TC_OK) {
        st = tc_mscclpp_verify(&ctx, p, 0, "plan.json", NULL);
        tc_mscclpp_free(p);
    }
    ck_assert_msg(st != TC_OK && strstr(tu_diags(), rule), "expected %s, got: %s", rule, tu_diags());
    ck_assert_msg(strstr(tu_diags(), "plan.json:"), "no location: %s", tu_diags());
}

#define PLAN_HEAD "{\"name\": \"t\", \"collective\": \"allreduce\", \"protocol\": \"Simple\", \"inplace\": true,\n"
START_TEST(test_reader_limits)
{
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"threadblocks\": [{\"id\": 0, \"ops\": [\n{\"name\": \"signal\", \"channel_type\": \"memory\", "
               "\"channel_ids\": [0, 0, 0, 0, 0, 0, 0, 0, 0]}]}]}]}",
               "[limit-channels]");
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"threadblocks\": [{\"id\": 0, \"ops\": [{\"name\": \"re\", \"src_buff\": ["
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}, {\"type\": \"i\", \"index\": 0, \"size\": 1}, "
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}, {\"type\": \"i\", \"index\": 0, \"size\": 1}, "
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}, {\"type\": \"i\", \"index\": 0, \"size\": 1}, "
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}, {\"type\": \"i\", \"index\": 0, \"size\": 1}, "
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}, {\"type\": \"i\", \"index\": 0, \"size\": 1}, "
               "{\"type\": \"i\", \"index\": 0, \"size\": 1}]}]}]}]}",
               "[limit-buffers]");
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"semaphores\": [{\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0},"
               "{\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0},"
               "{\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0},"
               "{\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0}, {\"init_value\": 0},"
               "{\"init_value\": 0}], \"threadblocks\": []}]}",
               "[limit-semaphores]");
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"threadblocks\": [{\"id\": 0, \"ops\": [{\"name\": \"barrier\", \"barrier_id\": 16, "
               "\"num_threadblocks\": 1}]}]}]}",
               "[limit-syncers]");
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"threadblocks\": [{\"id\": 0, \"ops\": [{\"name\": \"reduce\"}]}]}]}",
               "[operations]");
    /* the channel names before MSCCL++ 0.6 */
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 1, \"scratch_chunks\": 0,\n"
               "\"channels\": [{\"channel_type\": \"sm\", \"connected_to\": [1]}], \"threadblocks\": []}]}",
               "[channels]");
    read_fails(PLAN_HEAD "\"gpus\": [{\"id\": 0, \"input_chunks\": 0, \"output_chunks\": 0, \"scratch_chunks\": 0,\n"
               "\"threadblocks\": []}]}",
               "[chunks]");
}
END_TEST

/* tests/mscclpp/pull-allreduce-2.json: a 2-gpu all-reduce in the style of MSCCL++'s own examples (read
 * the peer's chunk, reduce, write the sum back to both; written for tacosc's tests): proven; without the
 * write to the peer, the peer's chunk is wrong. */
START_TEST(test_foreign_style_plan)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_mscclpp *p = NULL;
    tc_mscclpp_verdict v;
    ck_assert_msg(tc_mscclpp_read(&ctx, "tests/mscclpp/pull-allreduce-2.json", &p) == TC_OK, "%s", tu_diags());
    ck_assert_msg(tc_mscclpp_verify(&ctx, p, 1024, "pull.json", &v) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(v.modelled, 1);
    ck_assert_int_eq(p->gpus[1].tbs[0].ops[3].line, 23); /* rres of gpu 1: line 23 of the text */
    /* gpu 1 keeps its sum: gpu 0's chunk 1 stays its own input */
    p->gpus[1].tbs[0].ops[3].n_dst = 1;
    tu_ctx(&ctx);
    ck_assert(tc_mscclpp_verify(&ctx, p, 1024, "pull.json", &v) != TC_OK);
    ck_assert_msg(strstr(tu_diags(), "gpu 0: output chunk 1 holds chunk 1 of ranks {0}") &&
                      strstr(tu_diags(), "[result]"),
                  "%s", tu_diags());
    tc_mscclpp_free(p);
}
END_TEST

/* bundle -f mscclpp: one plan per range, each verifying at the size the README names and serving its range;
 * a second bundle of the same calls replaces the first; MSCCL-only options are refused */
START_TEST(test_bundle)
{
    char *dir = tu_tmpdir("mppbundle");
    char *out = NULL, path[512];
    int rc = tu_tacosc_run(&out, "bundle topologies/fc-8.xml -c allreduce --sizes 1K:64M:1 -f mscclpp -o %s -q", dir);
    ck_assert_msg(rc == 0, "%s", tu_tail(out));
    free(out);
    snprintf(path, sizeof path, "%s/mscclpp-plans/README", dir);
    char *readme = tu_slurp(path, NULL);
    ck_assert_ptr_nonnull(readme);
    int files = 0;
    uint64_t next = 0;
    for (char *line = strtok(readme, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256];
        unsigned long long at;
        const char *a = strstr(line, " at ");
        if (!strstr(line, ".json: ") || !a || sscanf(line, "%255[^:]", name) != 1 || sscanf(a, " at %llu", &at) != 1)
            continue;
        files++;
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_mscclpp *p = NULL;
        snprintf(path, sizeof path, "%s/mscclpp-plans/%s", dir, name);
        ck_assert_msg(tc_mscclpp_read(&ctx, path, &p) == TC_OK, "%s", tu_diags());
        ck_assert_msg(tc_mscclpp_verify(&ctx, p, at, path, NULL) == TC_OK, "%s", tu_diags());
        ck_assert_uint_eq(p->min_bytes, next); /* the ranges follow each other from 0 */
        ck_assert(at >= p->min_bytes && at <= p->max_bytes);
        next = p->max_bytes == UINT64_MAX ? 0 : p->max_bytes + 1;
        tc_mscclpp_free(p);
    }
    ck_assert_int_ge(files, 1);
    ck_assert_uint_eq(next, 0); /* the last range has no upper limit */
    free(readme);
    /* again with another sampling: the earlier files of these calls are replaced, nothing else */
    snprintf(path, sizeof path, "%s/mscclpp-plans/other-n8-0-inf.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{}", f);
    fclose(f);
    rc = tu_tacosc_run(&out, "bundle topologies/fc-8.xml -c allreduce --sizes 4K:4M:1 --algos ring -f mscclpp -o %s -q "
                             "&& ls %s/mscclpp-plans",
                       dir, dir);
    ck_assert_msg(rc == 0 && strstr(out, "allreduce-n8-0-inf.json") && strstr(out, "other-n8-0-inf.json"), "%s",
                  tu_tail(out));
    free(out);
    rc = tu_tacosc_run(&out, "bundle topologies/fc-8.xml -c allreduce -f mscclpp --target rccl -o %s", dir);
    ck_assert_msg(rc == 2 && strstr(out, "--target applies to MSCCL XML bundles, not -f mscclpp"), "%s", out);
    free(out);
    free(dir);
}
END_TEST

/* LL packets: the plan has no signal or wait, packet writes and reads only; the verifier proves it, and a
 * plan missing one packet write waits forever (the packet read is the only synchronisation) */
START_TEST(test_packets)
{
    char *dir = tu_tmpdir("mppll");
    char path[256], *out = NULL;
    snprintf(path, sizeof path, "%s/ll.json", dir);
    int rc = tu_tacosc_run(&out, "topologies/hypercube-3d.xml -c allreduce --size 64K -f mscclpp --proto LL -o %s",
                           path);
    ck_assert_msg(rc == 0 && strstr(out, "LL packets carry 8 bytes of flags"), "%s", tu_tail(out));
    free(out);
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_mscclpp *p = NULL;
    tc_mscclpp_verdict v;
    ck_assert_int_eq(tc_mscclpp_read(&ctx, path, &p), TC_OK);
    ck_assert_int_eq(p->packets, 1);
    int pk = 0, sync = 0;
    for (int g = 0; g < p->ngpus; g++)
        for (int t = 0; t < p->gpus[g].n_tbs; t++)
            for (int k = 0; k < p->gpus[g].tbs[t].n_ops; k++) {
                const char *n = tc_mscclpp_op_at((size_t)p->gpus[g].tbs[t].ops[k].op)->name;
                pk += !strcmp(n, "ppkt") || !strcmp(n, "upkt") || !strcmp(n, "repkt");
                sync += !strcmp(n, "signal") || !strcmp(n, "wait");
            }
    ck_assert_int_gt(pk, 0);
    ck_assert_int_eq(sync, 0);
    ck_assert_msg(tc_mscclpp_verify(&ctx, p, 64 << 10, path, &v) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(v.modelled, 1);
    int k;
    tc_mscclpp_tb *tb = tb_with(p, NULL, "ppkt", NULL, &k);
    tc_mscclpp_op *op = &tb->ops[k]; /* the put becomes a nop: its packets never come */
    op->op = 0;
    op->n_src = op->n_dst = op->n_chan = 0;
    op->chan_type = -1;
    expect_rule(p, 64 << 10, "[deadlock]");
    /* across servers LL is refused up front */
    rc = tu_tacosc_run(&out, "topologies/clusters/dgx-h100-2x8-rail.xml -c allreduce -f mscclpp --proto LL -o %s",
                       path);
    ck_assert_msg(rc == 2 && strstr(out, "LL packets over memory channels within one server"), "%s", out);
    free(out);
    free(dir);
}
END_TEST

static Suite *mscclpp_suite(void)
{
    Suite *s = suite_create("mscclpp");
    TCase *tc = tcase_create("vocabulary");
    tcase_add_test(tc, test_op_table_matches_loader);
    tcase_add_test(tc, test_op_kinds);
    tcase_add_test(tc, test_rejects_unknown);
    tcase_add_test(tc, test_limits);
    suite_add_tcase(s, tc);
    tc = tcase_create("plans");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shipped_topologies);
    tcase_add_test(tc, test_roundtrip_deterministic);
    tcase_add_test(tc, test_rules_broken);
    tcase_add_test(tc, test_protocol_other_warned);
    tcase_add_test(tc, test_reader_limits);
    tcase_add_test(tc, test_foreign_style_plan);
    tcase_add_test(tc, test_bundle);
    tcase_add_test(tc, test_packets);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(mscclpp_suite)
