/* tacosc: dispatch to a subcommand; the default subcommand compiles a topology into a schedule. */
#include "cli.h"
#include "tacos/msccl.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process umask (read by setting it and back; main is single-threaded when it asks). */
static mode_t o_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    return m;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"topo", tc_cli_topo},     {"info", tc_cli_info},       {"verify", tc_cli_verify},
    {"sim", tc_cli_sim},       {"compare", tc_cli_compare}, {"route", tc_cli_route},
    {"tune", tc_cli_tune},     {"bundle", tc_cli_bundle},
};

int tc_cli_exit(tc_status st)
{
    return st == TC_OK ? 0 : st == TC_ERR_USAGE ? 2 : 1;
}

/* The writer's context: a diagnostic that arrives once the stream has failed is the writer reporting that
 * failure (without the file's name, which it does not know): keep its reason, close reports it once with
 * the path.  Anything else goes to the command's context. */
static void out_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    tc_cli_out *o = user;
    if (level == TC_DIAG_ERROR && o->f && ferror(o->f)) {
        if (!o->err)
            o->err = errno ? errno : EIO;
        return;
    }
    tc_diag(o->parent, level, file, line, col, "%s", msg);
}

/* Open a new temporary file beside `target` (same directory, so rename is atomic), mode `mode`. */
static FILE *open_tmp(const char *target, mode_t mode, char **tmp)
{
    size_t n = strlen(target) + 48;
    char *t = malloc(n);
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    for (int k = 0; k < 100; k++) {
        snprintf(t, n, "%s.tmp%ld%s%.0d", target, (long)getpid(), k ? "." : "", k);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            break;
        fchmod(fd, mode); /* an existing target's mode, not narrowed by the umask */
        FILE *f = fdopen(fd, "wb");
        if (!f) {
            int e = errno;
            close(fd);
            unlink(t);
            errno = e;
            break;
        }
        *tmp = t;
        return f;
    }
    free(t);
    return NULL;
}

tc_status tc_cli_open_output(tc_ctx *ctx, const char *path, tc_cli_out *o)
{
    memset(o, 0, sizeof *o);
    o->parent = ctx;
    o->path = path;
    o->ctx = *ctx;
    o->ctx.sink = out_sink;
    o->ctx.sink_user = o;
    o->ctx.n_errors = o->ctx.n_warnings = 0;
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return TC_OK;
    }
    struct stat st, lst;
    int exists = stat(path, &st) == 0, is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if ((exists && !S_ISREG(st.st_mode)) || (!exists && is_link)) {
        /* a device, a pipe, a socket (or a link to one), or a dangling link: written through, never replaced */
        o->f = fopen(path, "wb");
        if (!o->f)
            return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno));
        return TC_OK;
    }
    /* a regular file or a new one: a temporary file renamed over it (over a link's target, not the link) */
    if (is_link && !(o->target = realpath(path, NULL)))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno));
    const char *target = o->target ? o->target : path;
    mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~o_umask();
    o->f = open_tmp(target, mode, &o->tmp);
    if (!o->f) {
        int e = errno;
        free(o->target);
        o->target = NULL;
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(e));
    }
    return TC_OK;
}

tc_status tc_cli_close_output(tc_cli_out *o, int ok)
{
    tc_status st = TC_OK;
    if (!o->f)
        return TC_OK;
    int e = o->err;
    if (fflush(o->f) && !e)
        e = errno ? errno : EIO;
    if (ferror(o->f) && !e)
        e = EIO;
    if (o->f != stdout && fclose(o->f) && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && ok && o->tmp && rename(o->tmp, o->target ? o->target : o->path))
        e = errno;
    if (e) {
        if (!strcmp(o->path, "-"))
            st = tc_error(o->parent, TC_ERR_IO, NULL, 0, "cannot write to standard output: %s", strerror(e));
        else
            st = tc_error(o->parent, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", o->path, strerror(e));
        ok = 0;
    }
    if (!ok && o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->parent->n_errors += o->ctx.n_errors;
    o->parent->n_warnings += o->ctx.n_warnings;
    return st;
}

void tc_cli_print_bound(const tc_bound *b, double time, const char *indent)
{
    char tb[32], ib[32], db[160];
    if (!(b->time > 0))
        return;
    printf("%sbound %s (%s), efficiency %.4f\n", indent, tc_fmt_time(b->time, tb, sizeof tb),
           tc_bound_describe(b, db, sizeof db), time > 0 ? b->time / time : 0.0);
    if (b->ideal > 0)
        printf("%sTACOS paper ideal (V-A) %s, ratio %.4f\n", indent, tc_fmt_time(b->ideal, ib, sizeof ib),
               time / b->ideal);
}

tc_status tc_cli_check_output(tc_ctx *ctx, const char *opt, const char *out, const char *const *inputs,
                              const char *const *what, int n)
{
    struct stat so, si;
    if (!out || !strcmp(out, "-") || stat(out, &so) || !S_ISREG(so.st_mode))
        return TC_OK;
    for (int i = 0; i < n; i++)
        if (inputs[i] && !stat(inputs[i], &si) && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s '%s' is the %s '%s': writing it would destroy the input",
                            opt, out, what[i], inputs[i]);
    return TC_OK;
}

tc_status tc_cli_stdout_close(tc_ctx *ctx)
{
    if (fflush(stdout) || ferror(stdout)) {
        int e = errno ? errno : EIO;
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write to standard output: %s", strerror(e));
    }
    return TC_OK;
}

int tc_cli_usage(tc_ctx *ctx, const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s (see 'tacosc%s%s --help')", msg, cmd ? " " : "", cmd ? cmd : "");
    return 2;
}

const char *tc_cli_opt_name(const struct option *lo, int val, char *buf, size_t n)
{
    for (; lo && lo->name; lo++)
        if (lo->val == val) {
            snprintf(buf, n, "--%s", lo->name);
            return buf;
        }
    snprintf(buf, n, "-%c", val > 0 && val < 256 ? val : '?');
    return buf;
}

int tc_cli_getopt(tc_ctx *ctx, const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *lo, unsigned char *seen, const char *repeatable)
{
    char sopt[64];
    snprintf(sopt, sizeof sopt, ":%s", shortopts); /* ':' first: a missing value is told apart */
    opterr = 0;
    int prev = optind, opt = getopt_long(argc, argv, sopt, lo, NULL);
    if (opt == -1)
        return -1;
    const char *arg = prev < argc ? argv[prev] : "";
    if (optind > prev && optind - 1 < argc && argv[optind - 1][0] == '-')
        arg = argv[optind - 1];
    char name[64];
    if (opt == '?') {
        if (optopt > 0 && optopt < 256 && arg[0] == '-' && arg[1] != '-')
            snprintf(name, sizeof name, "-%c", optopt);
        else
            snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
        tc_cli_usage(ctx, cmd, "unknown option '%s'", name);
        return -2;
    }
    if (opt == ':') {
        tc_cli_usage(ctx, cmd, "option '%s' needs a value", tc_cli_opt_name(lo, optopt, name, sizeof name));
        return -2;
    }
    if (seen && opt >= 0 && opt < TC_CLI_MAX_OPT) {
        if (seen[opt] && !(repeatable && opt < 256 && strchr(repeatable, opt))) {
            tc_cli_usage(ctx, cmd, "option '%s' given twice", tc_cli_opt_name(lo, opt, name, sizeof name));
            return -2;
        }
        seen[opt] = 1;
    }
    return opt;
}

tc_status tc_cli_check_size(tc_ctx *ctx, uint64_t size, tc_coll coll, int n_ranks, int chunks)
{
    uint64_t div = tc_sched_chunk_divisor(coll, n_ranks, chunks);
    if (size >= div)
        return TC_OK;
    return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                    "--size: %llu bytes is less than one byte per chunk (%s on %d ranks with %d chunk%s per rank "
                    "has %llu chunks)",
                    (unsigned long long)size, tc_coll_name(coll), n_ranks, chunks, chunks == 1 ? "" : "s",
                    (unsigned long long)div);
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

tc_status tc_cli_msccl_option(tc_ctx *ctx, const char *name, const char *arg, tc_msccl_lower_opts *lo)
{
    if (!strcmp(name, "target")) {
        if (tc_msccl_target_parse(arg, &lo->target) || lo->target == TC_TARGET_COMMON)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--target: '%s' is not nccl, rccl or tacos-run", arg);
        return TC_OK;
    }
    if (!strcmp(name, "max-channels"))
        return tc_cli_parse_int(ctx, "max-channels", arg, 1, 128, &lo->max_channels);
    if (strcmp(arg, "Simple") && strcmp(arg, "LL") && strcmp(arg, "LL128")) /* --proto */
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--proto: '%s' is not Simple, LL or LL128", arg);
    lo->proto = arg;
    return TC_OK;
}

tc_status tc_cli_make_dir(tc_ctx *ctx, const char *dir, const char *what)
{
    struct stat sb;
    if (!stat(dir, &sb)) {
        if (!S_ISDIR(sb.st_mode))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "-o '%s' is not a directory (%s is a directory)", dir, what);
        return TC_OK;
    }
    if (mkdir(dir, 0777))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot make directory '%s': %s", dir, strerror(errno));
    return TC_OK;
}

tc_status tc_cli_parse_seed(tc_ctx *ctx, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--seed: '%s' is not a non-negative integer", s);
    *out = v;
    return TC_OK;
}

tc_status tc_cli_parse_seconds(tc_ctx *ctx, const char *opt, const char *s, double hi, double *out)
{
    char *end;
    double v;
    if (tc_parse_decimal(s, &end, &v) || *end || !(v > 0) || v > hi)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--%s: '%s' is not a number of seconds in (0, %g]", opt, s, hi);
    *out = v;
    return TC_OK;
}

tc_status tc_cli_parse_switch_model(tc_ctx *ctx, const char *s, int *out)
{
    tc_switch_model m;
    if (tc_switch_model_parse(s, &m))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--switch-model: '%s' is not unwind, node or multicast", s);
    *out = 1 + (int)m;
    return TC_OK;
}

tc_status tc_cli_parse_link_model(tc_ctx *ctx, const char *s, int *out)
{
    tc_link_model m;
    if (tc_link_model_parse(s, &m))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--link-model: '%s' is not tacos or te-ccl", s);
    *out = 1 + (int)m;
    return TC_OK;
}

tc_status tc_cli_load_raw(tc_ctx *ctx, const char *path, const char *costs_path, int switch_model, tc_topo **out)
{
    tc_topo *t = NULL;
    tc_costs *c = NULL;
    tc_status st = tc_topo_read(ctx, path, &t);
    if (!st && switch_model != 0) {
        const int quiet = switch_model < 0; /* a default (--link-model te-ccl), not the user's option */
        if (quiet)
            switch_model = -switch_model;
        if (t->n_switches == 0 && !quiet)
            tc_warn(ctx, path, 0, "--switch-model %s has no effect: the topology has no switches",
                    tc_switch_model_name((tc_switch_model)(switch_model - 1)));
        tc_topo_set_switch_model(t, (tc_switch_model)(switch_model - 1));
    }
    if (!st && costs_path)
        st = tc_costs_read(ctx, costs_path, &c);
    if (!st)
        st = tc_topo_apply_costs(ctx, t, c);
    tc_costs_free(c);
    if (st) {
        tc_topo_free(t);
        return st;
    }
    *out = t;
    return TC_OK;
}

void tc_cli_warn_unwind(tc_ctx *ctx, const char *path, const tc_topo *t, int unwind)
{
    char d[16];
    snprintf(d, sizeof d, unwind < 0 ? "auto" : "%d", unwind);
    int unwound = 0; /* switches of model unwind */
    for (int i = 0; i < t->n_switches; i++)
        unwound += t->switches[i].model == TC_SWITCH_UNWIND;
    if (t->n_switches == 0)
        tc_warn(ctx, path, 0, "--unwind %s has no effect: the topology has no switches", d);
    else if (!unwound)
        tc_warn(ctx, path, 0, "--unwind %s has no effect: every switch is kept as a vertex (model node or multicast)",
                d);
}

tc_status tc_cli_load_topo(tc_ctx *ctx, const char *path, const char *costs_path, int unwind, int switch_model,
                           tc_topo **out)
{
    tc_topo *t = NULL;
    tc_status st = tc_cli_load_raw(ctx, path, costs_path, switch_model, &t);
    if (st)
        return st;
    if (unwind > 0)
        tc_cli_warn_unwind(ctx, path, t, unwind);
    st = tc_topo_unwind(ctx, t, unwind, out);
    tc_topo_free(t);
    return st;
}

/* Edit distance of two short words (insertions, deletions, substitutions), capped at 9. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 16 || lb > 16)
        return 9;
    int d[17][17];
    for (size_t i = 0; i <= la; i++)
        for (size_t j = 0; j <= lb; j++)
            d[i][j] = !i ? (int)j : !j ? (int)i : 0;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

/* A first argument that is a bare word (letters and dashes), not a file, is a mistyped subcommand, not a
 * topology: say so, with the nearest subcommand when one is close.  Nonzero when it was reported. */
static int unknown_command(const char *w)
{
    struct stat sb;
    if (!*w || w[0] == '-' || strspn(w, "abcdefghijklmnopqrstuvwxyz-") != strlen(w) || stat(w, &sb) == 0)
        return 0;
    const char *best = NULL;
    int bd = 3;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        int d = distance(w, commands[i].name);
        if (d < bd) {
            bd = d;
            best = commands[i].name;
        }
    }
    char list[160] = "";
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", commands[i].name);
    if (best)
        fprintf(stderr, "tacosc: error: unknown subcommand '%s' (did you mean '%s'?); subcommands: %s; "
                        "or give a topology file (see 'tacosc --help')\n", w, best, list);
    else
        fprintf(stderr, "tacosc: error: unknown subcommand '%s', and no such topology file; subcommands: %s "
                        "(see 'tacosc --help')\n", w, list);
    return 1;
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
    if (argc >= 2 && unknown_command(argv[1]))
        return 2;
    return tc_cli_compile(argc, argv);
}
