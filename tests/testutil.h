/* Shared helpers for the Check suites (header-only). */
#ifndef TACOS_TESTUTIL_H
#define TACOS_TESTUTIL_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tacos/algo.h"
#include "tacos/ir.h"

/* A context whose diagnostics are captured in a buffer (tu_diags). */
static tc_buf tu_diag_buf;
static inline void tu_ctx(tc_ctx *ctx)
{
    tc_ctx_init(ctx);
    tc_buf_free(&tu_diag_buf);
    ctx->sink = tc_diag_buffer;
    ctx->sink_user = &tu_diag_buf;
}
static inline const char *tu_diags(void) { return tu_diag_buf.data ? tu_diag_buf.data : ""; }

/* Temporary files and directories are removed when the process that made them exits (Check runs each
 * test in a child process that exits normally, whether the test passed or failed). */
#define TU_MAX_TEMPS 256
static char *tu_temps[TU_MAX_TEMPS];
static int tu_n_temps;
static void tu_remove_temps(void)
{
    for (int i = 0; i < tu_n_temps; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%.500s'", tu_temps[i]);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", tu_temps[i]);
        free(tu_temps[i]);
    }
    tu_n_temps = 0;
}
/* Remove path (a file or a whole directory) when this process exits. */
static inline void tu_remove_at_exit(const char *path)
{
    static pid_t registered;
    if (registered != getpid()) { /* a forked test child registers its own handler */
        tu_n_temps = 0;
        atexit(tu_remove_temps);
        registered = getpid();
    }
    if (tu_n_temps < TU_MAX_TEMPS)
        tu_temps[tu_n_temps++] = strdup(path);
}

/* A fresh directory /tmp/PREFIX-XXXXXX, removed with its contents at exit; returns a malloc'd path. */
static inline char *tu_tmpdir(const char *prefix)
{
    char *d = malloc(128);
    snprintf(d, 128, "/tmp/%.60s-XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(d));
    tu_remove_at_exit(d);
    return d;
}

/* Write `text` to a fresh temporary file named with `suffix`; returns a malloc'd path. */
static inline char *tu_tmpfile(const char *suffix, const char *text)
{
    char *path = malloc(256);
    static int n;
    snprintf(path, 256, "/tmp/tacosc-test-%d-%d%s", (int)getpid(), n++, suffix ? suffix : "");
    tu_remove_at_exit(path);
    FILE *f = fopen(path, "w");
    if (!f)
        return path;
    if (text)
        fputs(text, f);
    fclose(f);
    return path;
}

/* Read a whole file (malloc'd, NUL-terminated); NULL when missing. */
static inline char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    if (len)
        *len = got;
    return b;
}

/* A test (or part of one) that cannot run here says so on one line, "SKIP: TEST: why", which
 * scripts/run-tests.sh counts as skipped rather than passed. */
#define tu_skip(test, ...)                                                                              \
    do {                                                                                                \
        fprintf(stderr, "SKIP: %s: ", (test));                                                          \
        fprintf(stderr, __VA_ARGS__);                                                                   \
        fputc('\n', stderr);                                                                            \
    } while (0)

/* The real MSCCL examples beside the repository (../shared/msccl-examples), or $TC_EXAMPLES. */
static inline const char *tu_examples_dir(void)
{
    const char *e = getenv("TC_EXAMPLES");
    if (e)
        return e;
    if (access("../shared/msccl-examples", R_OK) == 0)
        return "../shared/msccl-examples";
    return NULL;
}

/* A fresh seed per run (printed so a failure can be replayed with TC_TEST_SEED). */
static inline unsigned long tu_seed(void)
{
    const char *e = getenv("TC_TEST_SEED");
    static unsigned long s;
    if (s)
        return s;
    s = e ? strtoul(e, NULL, 10) : ((unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16));
    if (!s)
        s = 1;
    fprintf(stderr, "test seed: %lu (TC_TEST_SEED to replay)\n", s);
    return s;
}

/* Path of the tacosc binary under test ($TACOSC, set by the Makefile). */
static inline const char *tu_tacosc(void)
{
    const char *e = getenv("TACOSC");
    return e ? e : "./tacosc";
}

/* The cost-file option a shipped topology is meant to be used with (topologies/README). */
static inline const char *tu_shipped_costs(const char *topo_path)
{
    if (strstr(topo_path, "dgx1"))
        return "--costs topologies/dgx1.cost";
    if (strstr(topo_path, "hier"))
        return "--costs topologies/hier.cost";
    return "";
}

/* Run a shell command, capture stdout+stderr into a malloc'd string; returns the exit status. */
static inline int tu_run(const char *cmd, char **output)
{
    char full[4200];
    snprintf(full, sizeof full, "(%.4096s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    if (output)
        *output = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Run "$TACOSC <args>" (printf-style), output (stdout and stderr) in *out (caller frees); the exit status. */
static inline int tu_tacosc_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int tu_tacosc_run(char **out, const char *fmt, ...)
{
    char args[3072], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s", tu_tacosc(), args);
    return tu_run(cmd, out);
}

/* Run generator `algo` for `coll` with default options but `size`; fail the test with its diagnostics. */
static inline tc_sched *tu_gen(const char *algo, const tc_topo *t, tc_coll c, uint64_t size)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    o.size = size;
    tc_sched *s = NULL;
    ck_assert_msg(tc_algo_run(&ctx, algo, t, c, &o, &s) == TC_OK, "%s: %s", algo, tu_diags());
    return s;
}

/* The end of a command's output, for a failure message (Check refuses messages over 4 KiB, and raising
 * that limit slows every passing assertion). */
static inline const char *tu_tail(const char *out)
{
    size_t n = strlen(out);
    return n > 3000 ? out + n - 3000 : out;
}

/* Main for a suite built by `make_suite`. */
#define TU_MAIN(make_suite)                                                                           \
    int main(void)                                                                                    \
    {                                                                                                 \
        SRunner *sr = srunner_create(make_suite());                                                   \
        srunner_run_all(sr, CK_NORMAL);                                                               \
        int nf = srunner_ntests_failed(sr);                                                           \
        srunner_free(sr);                                                                             \
        return nf == 0 ? 0 : 1;                                                                       \
    }

#endif
