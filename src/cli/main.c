/* tacosc: dispatch to a subcommand; the default subcommand compiles a topology into a schedule. */
#include "cli.h"
#include "tacos/topo.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"topo", tc_cli_topo},     {"info", tc_cli_info},       {"verify", tc_cli_verify},
    {"sim", tc_cli_sim},       {"compare", tc_cli_compare},
};

int tc_cli_exit(tc_status st)
{
    return st == TC_OK ? 0 : st == TC_ERR_USAGE ? 2 : 1;
}

tc_status tc_cli_open_output(tc_ctx *ctx, const char *path, FILE **f, char **tmp)
{
    *tmp = NULL;
    if (!strcmp(path, "-")) {
        *f = stdout;
        return TC_OK;
    }
    size_t n = strlen(path) + 32;
    char *t = malloc(n);
    if (!t)
        return TC_ERR_NOMEM;
    snprintf(t, n, "%s.tmp%ld", path, (long)getpid());
    FILE *fp = fopen(t, "wb");
    if (!fp) {
        int e = errno;
        free(t);
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(e));
    }
    *f = fp;
    *tmp = t;
    return TC_OK;
}

tc_status tc_cli_close_output(tc_ctx *ctx, const char *path, FILE *f, char *tmp, int ok)
{
    tc_status st = TC_OK;
    if (f == stdout) {
        if (fflush(stdout))
            st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write to standard output: %s", strerror(errno));
        return st;
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        if (ok)
            st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno));
        ok = 0;
    }
    if (ok && rename(tmp, path)) {
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno));
        ok = 0;
    }
    if (!ok)
        remove(tmp);
    free(tmp);
    return st;
}

tc_status tc_cli_parse_int(tc_ctx *ctx, const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--%s: '%s' is not an integer in [%ld, %ld]", opt, s, lo, hi);
    *out = (int)v;
    return TC_OK;
}

tc_status tc_cli_load_topo(tc_ctx *ctx, const char *path, const char *costs_path, int unwind, tc_topo **out)
{
    tc_topo *t = NULL;
    tc_costs *c = NULL;
    tc_status st = tc_topo_read(ctx, path, &t);
    if (!st && costs_path)
        st = tc_costs_read(ctx, costs_path, &c);
    if (!st)
        st = tc_topo_apply_costs(ctx, t, c);
    if (!st)
        st = tc_topo_unwind(ctx, t, unwind, out);
    tc_topo_free(t);
    tc_costs_free(c);
    return st;
}

int main(int argc, char **argv)
{
    /* the stages allocate large arrays one after the other (synthesis, lowering, verification): keep
     * freed memory for the next stage instead of unmapping it and faulting fresh zeroed pages in again
     * (a 32x32 mesh plan: about a third less CPU, a sixth more peak memory) */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    if (argc >= 2)
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[1], commands[i].name))
                return commands[i].fn(argc - 1, argv + 1);
    return tc_cli_compile(argc, argv);
}
