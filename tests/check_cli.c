/* The tacosc command line: usage, errors with exact text and exit status, the end-to-end jobs. */
#include "testutil.h"

#include "tacos/algo.h"

static char cmd[4096];

/* Run "$TACOSC <args>" and return the exit status; output in *out (caller frees). */
static int tacosc(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tacosc(char **out, const char *fmt, ...)
{
    char args[3072];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s", tu_tacosc(), args);
    return tu_run(cmd, out);
}

static char *tmpdir(void)
{
    char *d = malloc(64);
    snprintf(d, 64, "/tmp/tacosc-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

START_TEST(test_help_version)
{
    char *out;
    ck_assert_int_eq(tacosc(&out, "--help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: tacosc TOPO.xml --collective C"));
    free(out);
    ck_assert_int_eq(tacosc(&out, "--version"), 0);
    ck_assert_str_eq(out, "tacosc " TC_VERSION "\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "%s", ""), 2);
    ck_assert_ptr_nonnull(strstr(out, "usage:"));
    free(out);
}
END_TEST

/* Every registry entry is listed by --list-algos and documented in the man page. */
START_TEST(test_registry_documented)
{
    char *out, *man = tu_slurp("man/man1/tacosc.1", NULL);
    ck_assert_ptr_nonnull(man);
    ck_assert_int_eq(tacosc(&out, "--list-algos"), 0);
    for (const tc_algo_entry *e = tc_algo_registry; e->name; e++) {
        char line[128], manent[128];
        snprintf(line, sizeof line, "%-10s ", e->name);
        snprintf(manent, sizeof manent, ".TP\n.B %s\n", e->name);
        ck_assert_msg(strstr(out, line), "--list-algos lacks %s", e->name);
        ck_assert_msg(strstr(man, manent), "man/man1/tacosc.1 does not document algorithm %s", e->name);
    }
    free(out);
    free(man);
}
END_TEST

START_TEST(test_usage_errors)
{
    char *out;
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allsum"), 2);
    ck_assert_str_eq(out, "tacosc: error: unknown collective 'allsum' (allgather, reducescatter, allreduce, "
                          "broadcast, reduce, gather, scatter, alltoall)\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allreduce --algo nope"), 2);
    ck_assert_str_eq(out, "tacosc: error: unknown algorithm 'nope' (see --list-algos)\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allreduce --size 12Q"), 2);
    ck_assert_str_eq(out, "tacosc: error: --size: '12Q' is not a byte size (digits with an optional K, M, G "
                          "or T suffix)\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allreduce --chunks 0"), 2);
    ck_assert_str_eq(out, "tacosc: error: --chunks: '0' is not an integer in [1, 1048576]\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml"), 2);
    ck_assert_str_eq(out, "tacosc: error: --collective is required\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allreduce -o plan.txt"), 2);
    ck_assert_str_eq(out, "tacosc: error: cannot tell the format of 'plan.txt' from its extension: use .json "
                          "or .xml, or --format\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective broadcast --root 99"), 1);
    ck_assert_str_eq(out, "tacosc: error: root 99 out of range (topology has 16 npus)\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective broadcast --algo ring"), 1);
    ck_assert_str_eq(out, "tacosc: error: algorithm 'ring' does not generate broadcast\n");
    free(out);
}
END_TEST

START_TEST(test_unwritable_output)
{
    char *out;
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml --collective allreduce --algo ring "
                                  "-o /nonexistent-dir/p.json"),
                     1);
    ck_assert_str_eq(out, "tacosc: error: cannot write '/nonexistent-dir/p.json': No such file or directory\n");
    free(out);
}
END_TEST

START_TEST(test_missing_topology)
{
    char *out;
    ck_assert_int_eq(tacosc(&out, "/nonexistent.xml --collective allreduce"), 1);
    ck_assert_ptr_nonnull(strstr(out, "/nonexistent.xml"));
    ck_assert_ptr_nonnull(strstr(out, "error:"));
    free(out);
}
END_TEST

/* The end-to-end line: generate a 3D torus, compile a ring all-gather to JSON, verify it. */
START_TEST(test_torus_ring_allgather)
{
    char *d = tmpdir(), *out;
    ck_assert_int_eq(tacosc(&out, "topo torus 4x4x4 -o %s/t.xml", d), 0);
    free(out);
    ck_assert_int_eq(tacosc(&out, "%s/t.xml --collective allgather --algo ring -o %s/p.json", d, d), 0);
    ck_assert_ptr_nonnull(strstr(out, "ring allgather"));
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify %s/p.json", d), 0);
    ck_assert_ptr_nonnull(strstr(out, ": ok: allgather, 64 ranks"));
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify %s/p.json --topo %s/t.xml", d, d), 0);
    free(out);
    free(d);
}
END_TEST

/* Same input and seed give byte-identical plans, for every registry algorithm: each must serve one of
 * these topologies (hier-* need node ids, bucket a torus named with its dimensions, dex is all-to-all). */
START_TEST(test_deterministic)
{
    static const char *topos[] = {"topologies/mesh2d-4x4.xml", "topologies/hier-4x8.xml",
                                  "topologies/torus2d-8x8.xml"};
    char *d = tmpdir(), *out;
    for (const tc_algo_entry *e = tc_algo_registry; e->name; e++) {
        const char *coll = (e->colls & TC_COLL_BIT(TC_COLL_ALLREDUCE)) ? "allreduce" : "alltoall";
        int served = 0;
        for (size_t t = 0; t < sizeof topos / sizeof topos[0] && !served; t++) {
            int rc = tacosc(&out, "%s --collective %s --algo %s --seed 42 --size 1M -o %s/%s-0.json -q",
                            topos[t], coll, e->name, d, e->name);
            if (rc != 0) { /* refused: must say why, then try the next topology */
                ck_assert_msg(strstr(out, "error:"), "%s: exit %d without a message", e->name, rc);
                free(out);
                continue;
            }
            free(out);
            ck_assert_int_eq(tacosc(&out, "%s --collective %s --algo %s --seed 42 --size 1M -o %s/%s-1.json -q",
                                    topos[t], coll, e->name, d, e->name),
                             0);
            free(out);
            served = 1;
        }
        ck_assert_msg(served, "%s serves none of the test topologies", e->name);
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s-0.json", d, e->name);
        snprintf(b, sizeof b, "%s/%s-1.json", d, e->name);
        char *x = tu_slurp(a, NULL), *y = tu_slurp(b, NULL);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_nonnull(y);
        ck_assert_msg(!strcmp(x, y), "%s: two runs with seed 42 differ", e->name);
        ck_assert_msg(strstr(x, "\"seed\": 42"), "%s: seed not recorded", e->name);
        free(x);
        free(y);
    }
    free(d);
}
END_TEST

/* Golden JSON: a 4-NPU bidirectional ring, ring all-reduce, compared byte for byte. */
START_TEST(test_golden_json)
{
    char *d = tmpdir(), *out;
    ck_assert_int_eq(tacosc(&out, "topo biring 4 -o %s/r.xml", d), 0);
    free(out);
    ck_assert_int_eq(tacosc(&out, "%s/r.xml --collective allreduce --algo ring --size 4K -o %s/p.json -q", d, d),
                     0);
    free(out);
    char p[512];
    snprintf(p, sizeof p, "%s/p.json", d);
    char *got = tu_slurp(p, NULL), *want = tu_slurp("tests/golden/biring4-ring-allreduce.json", NULL);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    free(d);
}
END_TEST

/* A topology with an out-of-range NPU on line 7 fails with bad.xml:7: and exit status 1. */
START_TEST(test_bad_topology_line)
{
    char *d = tmpdir(), *out, path[512];
    snprintf(path, sizeof path, "%s/bad.xml", d);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("<topology name=\"bad\" npus=\"8\">\n"
          "  <link src=\"0\" dst=\"1\" duplex=\"1\"/>\n"
          "  <link src=\"1\" dst=\"2\" duplex=\"1\"/>\n"
          "  <link src=\"2\" dst=\"3\" duplex=\"1\"/>\n"
          "  <link src=\"3\" dst=\"4\" duplex=\"1\"/>\n"
          "  <link src=\"4\" dst=\"5\" duplex=\"1\"/>\n"
          "  <link src=\"3\" dst=\"9\" duplex=\"1\"/>\n"
          "</topology>\n", f);
    fclose(f);
    ck_assert_int_eq(tacosc(&out, "%s --collective allreduce -o %s/p.json", path, d), 1);
    char want[600];
    snprintf(want, sizeof want, "%s:7: error: link 3->9: npu 9 out of range (topology has 8 npus)\n", path);
    ck_assert_str_eq(out, want);
    free(out);
    snprintf(path, sizeof path, "%s/p.json", d);
    ck_assert_int_ne(access(path, F_OK), 0); /* no plan written */
    free(d);
}
END_TEST

/* The plans in schedules/ are what the commands in schedules/README.md write today, and they verify. */
START_TEST(test_shipped_plans)
{
    static const struct { const char *file, *args, *verify; } plans[] = {
        {"schedules/mesh2d-4x4-allreduce.xml", "topologies/mesh2d-4x4.xml --collective allreduce --size 64M",
         " --target nccl"},
        {"schedules/mesh2d-4x4-allreduce-rccl.xml",
         "topologies/mesh2d-4x4.xml --collective allreduce --size 64M --target rccl", " --target rccl"},
        {"schedules/dgx1-allgather.json",
         "topologies/dgx1.xml --costs topologies/dgx1.cost --collective allgather --size 64M", ""},
    };
    char *d = tmpdir(), *out, path[512];
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        const char *ext = strrchr(plans[i].file, '.');
        snprintf(path, sizeof path, "%s/plan%zu%s", d, i, ext);
        ck_assert_int_eq(tacosc(&out, "%s -q -o %s", plans[i].args, path), 0);
        free(out);
        char *got = tu_slurp(path, NULL), *want = tu_slurp(plans[i].file, NULL);
        ck_assert_ptr_nonnull(got);
        ck_assert_ptr_nonnull(want);
        ck_assert_msg(!strcmp(got, want), "%s is stale: regenerate with sh examples/quickstart.sh", plans[i].file);
        free(got);
        free(want);
        ck_assert_int_eq(tacosc(&out, "verify %s%s", plans[i].file, plans[i].verify), 0);
        free(out);
    }
    free(d);
}
END_TEST

/* Every shipped topology of up to 64 NPUs compiles an all-reduce to JSON and to MSCCL XML for both
 * targets, and tacosc verify accepts each plan. */
START_TEST(test_shipped_topologies)
{
    char *listing = NULL, *d = tmpdir(), *out;
    ck_assert_int_eq(tu_run("ls topologies/*.xml", &listing), 0);
    int n = 0;
    for (char *line = strtok(listing, "\n"); line; line = strtok(NULL, "\n")) {
        char *info;
        ck_assert_int_eq(tacosc(&info, "info %s", line), 0);
        char *npus = strstr(info, "npus");
        int count = npus ? atoi(npus + strcspn(npus, "0123456789")) : 0;
        free(info);
        ck_assert_msg(count > 0, "%s: info shows no npu count", line);
        if (count > 64)
            continue;
        const char *costs = tu_shipped_costs(line);
        ck_assert_msg(tacosc(&out, "%s %s --collective allreduce -q -o %s/p.json", line, costs, d) == 0, "%s: %s",
                      line, out);
        free(out);
        ck_assert_msg(tacosc(&out, "verify %s/p.json --topo %s", d, line) == 0, "%s: %s", line, out);
        free(out);
        for (int t = 0; t < 2; t++) {
            const char *target = t ? "rccl" : "nccl";
            ck_assert_msg(tacosc(&out, "%s %s --collective allreduce -q --target %s -o %s/p.xml", line, costs,
                                 target, d) == 0, "%s %s: %s", line, target, out);
            free(out);
            ck_assert_msg(tacosc(&out, "verify %s/p.xml --target %s", d, target) == 0, "%s %s: %s", line, target,
                          out);
            free(out);
        }
        n++;
    }
    ck_assert_int_ge(n, 10);
    free(listing);
    free(d);
}
END_TEST

/* verify: bad option values and options that cannot apply are usage errors; format by content. */
START_TEST(test_verify_usage)
{
    char *out, *d = tmpdir();
    ck_assert_int_eq(tacosc(&out, "verify schedules/dgx1-allgather.json --topo topologies/dgx1.xml --unwind abc"), 2);
    ck_assert_str_eq(out, "tacosc: error: --unwind: 'abc' is not an integer in [1, 2147483647]\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify schedules/dgx1-allgather.json --costs topologies/dgx1.cost"), 2);
    ck_assert_str_eq(out, "tacosc: error: --costs needs --topo\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify schedules/dgx1-allgather.json --target nccl"), 2);
    ck_assert_str_eq(out, "tacosc: error: --target applies to MSCCL XML plans only "
                          "('schedules/dgx1-allgather.json' is JSON)\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify %s", d), 1);
    char want[256];
    snprintf(want, sizeof want, "%s: error: cannot read: Is a directory\n", d);
    ck_assert_str_eq(out, want);
    free(out);
    ck_assert_int_eq(tacosc(&out, "sim schedules/dgx1-allgather.json topologies/dgx1.xml --chunks abc"), 2);
    ck_assert_str_eq(out, "tacosc: error: --chunks: 'abc' is not an integer in [1, 1048576]\n");
    free(out);
    char cmdline[512];
    snprintf(cmdline, sizeof cmdline, "cp schedules/dgx1-allgather.json %s/plan.XML", d);
    ck_assert_int_eq(tu_run(cmdline, NULL), 0);
    ck_assert_int_eq(tacosc(&out, "verify %s/plan.XML", d), 0); /* JSON by content, whatever the name */
    ck_assert_ptr_nonnull(strstr(out, ": ok: allgather, 8 ranks"));
    free(out);
    free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_help_version);
    tcase_add_test(tc, test_registry_documented);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_unwritable_output);
    tcase_add_test(tc, test_missing_topology);
    tcase_add_test(tc, test_torus_ring_allgather);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_golden_json);
    tcase_add_test(tc, test_bad_topology_line);
    tcase_add_test(tc, test_verify_usage);
    tcase_add_test(tc, test_shipped_plans);
    tcase_add_test(tc, test_shipped_topologies);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
