/* Writing an MSCCL bundle: one lowered plan per byte range in DIR/msccl-algorithms/, the ranges covering
 * every size exactly once, each file verified for the target, and DIR/README saying how to point the
 * runtime at it (man 7 tacosc-deploy).  The README stays out of msccl-algorithms/: both runtimes parse
 * every regular file of their algorithm directory as an MSCCL program and fail communicator creation on
 * one they cannot parse (Azure/msccl-executor-nccl and ROCm/rccl, src/misc/msccl/msccl_lifecycle.cc,
 * mscclInternalSchedulerInit).
 *
 * The bundle is made in a staging directory inside DIR and renamed into place, so a failure leaves DIR as
 * it was; links where the bundle writes and a README tacosc did not write are refused (issue 23).  A range
 * whose algorithm cannot be written for the target gets the fastest candidate that can (issue 21). */
#include "tune_int.h"

#include "tacos/compile.h"
#include "tacos/algo.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALGO_DIR TC_BUNDLE_ALGO_DIR

/* The placement part of a file name: "" in place, "-outofplace", "-both". */
static const char *placement(const tc_msccl_lower_opts *lo)
{
    return lo->inplace && lo->outofplace ? "-both" : lo->outofplace ? "-outofplace" : "";
}

static void mscclpp_file_name(char *buf, size_t n, tc_coll coll, int ranks, const tc_tune_range *r)
{
    char mx[32] = "inf";
    if (r->max_bytes)
        snprintf(mx, sizeof mx, "%llu", (unsigned long long)r->max_bytes);
    snprintf(buf, n, "%s-n%d-%llu-%s.json", tc_coll_name(coll), ranks, (unsigned long long)r->min_bytes, mx);
}

void tc_tune_bundle_file_name(char *buf, size_t n, tc_coll coll, const tc_msccl_lower_opts *lo, int ranks,
                              const tc_tune_range *r)
{
    if (!lo) { /* an MSCCL++ bundle */
        mscclpp_file_name(buf, n, coll, ranks, r);
        return;
    }
    const char *place = placement(lo);
    char mx[32];
    if (r->max_bytes)
        snprintf(mx, sizeof mx, "%llu", (unsigned long long)r->max_bytes);
    else
        snprintf(mx, sizeof mx, "inf");
    snprintf(buf, n, "%s%s-n%d-%llu-%s.xml", tc_coll_name(coll), place, ranks, (unsigned long long)r->min_bytes, mx);
}

/* Is `name` a file this command writes for (coll, placement, ranks)? */
static int ours(const char *name, tc_coll coll, const char *place, int ranks)
{
    char pre[96];
    snprintf(pre, sizeof pre, "%s%s-n%d-", tc_coll_name(coll), place, ranks);
    size_t l = strlen(pre), n = strlen(name);
    if (strncmp(name, pre, l) || n < l + 7 || strcmp(name + n - 4, ".xml"))
        return 0;
    const char *p = name + l;
    size_t d = strspn(p, "0123456789");
    if (!d || p[d] != '-')
        return 0;
    p += d + 1;
    d = strspn(p, "0123456789");
    return (d && !strcmp(p + d, ".xml")) || !strcmp(p, "inf.xml");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files and links of dir, sorted (*names malloc'd). */
static tc_status list_dir(tc_ctx *ctx, const char *dir, char ***names, int *n_out)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot open directory '%s': %s", dir, strerror(errno));
    char **v = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    tc_status st = TC_OK;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (e->d_type != DT_REG && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
            continue;
        if ((st = tc_grow((void **)&v, &cap, n + 1, sizeof *v)))
            break;
        if (!(v[n] = tc_strdup(e->d_name))) {
            st = TC_ERR_NOMEM;
            break;
        }
        n++;
    }
    closedir(dp);
    if (st) {
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return st;
    }
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, cmp_str);
    *names = v;
    *n_out = n;
    return TC_OK;
}

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Remove a staging directory: its regular files, one level of subdirectories of regular files, and itself
 * (tacosc made everything in it; links were refused before anything was staged). */
static void remove_stage(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    char p[8400];
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (!lstat(p, &sb) && S_ISDIR(sb.st_mode))
            remove_stage(p);
        else
            unlink(p);
    }
    closedir(dp);
    rmdir(dir);
}

/* The first line of every README this command writes. */
#define README_HEAD TC_BUNDLE_README_HEAD

/* Refuse what a bundle must not touch: a link where the bundle writes (DIR/README, DIR/msccl-algorithms or
 * a file in it: a link would be written through to a file outside DIR), and a README tacosc did not write. */
static tc_status check_targets(tc_ctx *ctx, const char *out_dir, const char *algo_dir, char **files, int nf)
{
    char p[8400];
    struct stat sb;
    snprintf(p, sizeof p, "%s/README", out_dir);
    if (!lstat(p, &sb)) {
        if (!S_ISREG(sb.st_mode))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "'%s' is a link or not a regular file: tacosc does not "
                                                        "write through it (remove it or bundle into another directory)",
                            p);
        FILE *f = fopen(p, "r");
        char head[sizeof README_HEAD] = "";
        size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
        if (f)
            fclose(f);
        head[got] = 0;
        if (strcmp(head, README_HEAD))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "'%s' was not written by tacosc: not replacing it (move it "
                                                        "away or bundle into another directory)",
                            p);
    }
    if (!lstat(algo_dir, &sb) && !S_ISDIR(sb.st_mode))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "'%s' is a link or not a directory: tacosc does not write "
                                                    "through it",
                        algo_dir);
    for (int i = 0; i < nf; i++) {
        snprintf(p, sizeof p, "%s/%s", algo_dir, files[i]);
        if (!lstat(p, &sb) && !S_ISREG(sb.st_mode))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "'%s' is a link or not a regular file: a bundle holds "
                                                        "regular files only (remove it)",
                            p);
    }
    return TC_OK;
}

/* Do [a0, a1] and [b0, b1] (1 = 0: no limit) meet? */
static int overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t ae = a1 ? a1 : UINT64_MAX, be = b1 ? b1 : UINT64_MAX;
    return a0 <= be && b0 <= ae;
}

static void readme(FILE *f, const char *abs, const tc_topo *topo, tc_coll coll, const char *how,
                   const tc_msccl_lower_opts *lo, uint64_t seed, const tc_tune_range *r, int nr, char **files,
                   tc_msccl **progs, int nf)
{
    char tb[32], sb[32];
    fprintf(f, README_HEAD " %s (tacosc bundle; man 7 tacosc-deploy)\n\n", TC_VERSION);
    fprintf(f, "The plans are in " ALGO_DIR "/, one file per collective and byte range.  Keep this README and\n"
               "anything else out of that directory: MSCCL on NCCL and RCCL parse every regular file of their\n"
               "algorithm directory as an MSCCL program when a communicator is created, and fail to create it\n"
               "when one does not parse (src/misc/msccl/msccl_lifecycle.cc of Azure/msccl-executor-nccl and\n"
               "ROCm/rccl).\n\n");
    /* only the runtimes every file passes (RCCL cannot launch rcs/rrs/rrc/rrcs steps: man 5 tacosc-msccl) */
    int ok[2] = {1, 1};
    const tc_msccl_target tg[2] = {TC_TARGET_NCCL, TC_TARGET_RCCL};
    for (int t = 0; t < 2; t++) {
        tc_msccl_limits lim;
        tc_msccl_limits_get(tg[t], &lim);
        if (lo->max_channels && lo->max_channels < lim.max_channels)
            lim.max_channels = lo->max_channels;
        for (int i = 0; i < nf && ok[t]; i++) {
            tc_ctx quiet;
            tc_buf sink = {0};
            tc_ctx_init(&quiet);
            quiet.sink = tc_diag_buffer;
            quiet.sink_user = &sink;
            ok[t] = tc_msccl_verify(&quiet, progs[i], &lim, files[i]) == TC_OK;
            tc_buf_free(&sink);
        }
    }
    fprintf(f, "Point the runtime at it (an absolute path; change it if you move the directory):\n\n");
    if (ok[0])
        fprintf(f, "  MSCCL on NCCL (msccl-executor-nccl):\n"
                   "    MSCCL_ALGO_DIR=%s/" ALGO_DIR " NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT ./app\n",
                abs);
    if (ok[1])
        fprintf(f, "  RCCL:\n"
                   "    MSCCL_ALGO_DIR=%s/" ALGO_DIR " RCCL_MSCCL_FORCE_ENABLE=1 NCCL_DEBUG=INFO "
                   "NCCL_DEBUG_SUBSYS=INIT,COLL ./app\n",
                abs);
    if (!ok[0] && !ok[1])
        fprintf(f, "  (neither: these files break both runtimes' rules and replay with tacos-run only)\n");
    else if (!ok[0] || !ok[1])
        fprintf(f, "  (not %s: some files here break its rules; tacosc verify --target %s FILE says which)\n",
                ok[0] ? "RCCL" : "MSCCL on NCCL", ok[0] ? "rccl" : "nccl");
    fputc('\n', f);
    fprintf(f, "Without MSCCL_ALGO_DIR the runtimes read " ALGO_DIR "/ beside libnccl.so or librccl.so: copying\n"
               "the directory there works too.  The log shows \"Using MSCCL Algo files from DIR\" at init and\n"
               "\"MSCCL: Setup Kernel finished\" at every launch of a plan (NCCL); \"Using MSCCL files from DIR\"\n"
               "and \"MSCCL: typeMask ... Setup Kernel finished\" (RCCL).  A launch without it ran the library's\n"
               "own algorithm.\n\n");
    fprintf(f, "Which file a call gets: the first one with the call's collective and rank count (ngpus), count\n"
               "x m a multiple of nchunksperloop (m = ngpus for all-gather, reduce-scatter and all-to-all, else\n"
               "1), minBytes <= count x m x the type's size <= maxBytes (both inclusive, maxBytes 0 = no limit),\n"
               "the call's placement (in place or not) declared by the file and a sum, prod, max or min\n"
               "reduction.  The ranges of one collective, rank count and placement below cover every size\n"
               "from 0 up exactly once; a call no file serves runs the library's own algorithm.  <gpu id=\"g\">\n"
               "is what rank g runs: number the topology's NPUs as the job's ranks.\n\n");
    fprintf(f, "Files in " ALGO_DIR "/ (each verified for the target it was written for; maxBytes 0: no limit):\n\n");
    fprintf(f, "  %-44s %-13s %5s %12s %12s %-10s %-12s %8s\n", "file", "coll", "ranks", "minBytes", "maxBytes",
            "algorithm", "placement", "channels");
    for (int i = 0; i < nf; i++) {
        const tc_msccl *m = progs[i];
        fprintf(f, "  %-44s %-13s %5d %12llu %12llu %-10s %-12s %8d\n", files[i], tc_coll_name(m->coll), m->ngpus,
                (unsigned long long)m->min_bytes, (unsigned long long)m->max_bytes, m->name ? m->name : "?",
                m->inplace && m->outofplace ? "both" : m->inplace ? "in-place" : "out-of-place", m->nchannels);
    }
    fprintf(f, "\nThe last bundle written here: %s on %s (%d ranks), target %s, chosen by %s, seed %llu:\n\n",
            tc_coll_name(coll), topo->name ? topo->name : "?", topo->n_npus, tc_msccl_target_name(lo->target), how,
            (unsigned long long)seed);
    fprintf(f, "  %12s %12s %-10s %14s %16s\n", "minBytes", "maxBytes", "algorithm", "planned at", "predicted time");
    for (int i = 0; i < nr; i++) {
        char mx[32];
        if (r[i].max_bytes)
            snprintf(mx, sizeof mx, "%llu", (unsigned long long)r[i].max_bytes);
        else
            snprintf(mx, sizeof mx, "no limit");
        fprintf(f, "  %12llu %12s %-10s %14s %16s\n", (unsigned long long)r[i].min_bytes, mx,
                tc_algo_registry[r[i].algo].name, tc_fmt_bytes((double)r[i].plan_bytes, sb, sizeof sb),
                tc_fmt_time(r[i].time, tb, sizeof tb));
    }
    fprintf(f, "\nBefore deploying, replay each file on the job's rank count against the MPI library's own\n"
               "collective: mpirun -np %d tacos-run %s/FILE -c 1 -b MIN -e MAX (man 1 tacos-run).\n",
            topo->n_npus, ALGO_DIR);
}


/* Make dir unless it is one already. */
static tc_status make_dir(tc_ctx *ctx, const char *dir)
{
    struct stat sb;
    if (!stat(dir, &sb)) {
        if (!S_ISDIR(sb.st_mode))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "'%s' is not a directory (a bundle is a directory)", dir);
        return TC_OK;
    }
    if (mkdir(dir, 0777))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot make directory '%s': %s", dir, strerror(errno));
    return TC_OK;
}

/* Write a new file `path` (in the staging directory, so it never exists: O_EXCL refuses anything there). */
static FILE *create_new(tc_ctx *ctx, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

static tc_status close_new(tc_ctx *ctx, FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad)
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
    return TC_OK;
}

/* "A to B bytes", "A bytes and up" */
static const char *range_text(char *buf, size_t n, const tc_tune_range *r)
{
    if (r->max_bytes)
        snprintf(buf, n, "%llu to %llu bytes", (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
    else
        snprintf(buf, n, "%llu bytes and up", (unsigned long long)r->min_bytes);
    return buf;
}

/* The plan of range r lowered for the target: its own algorithm, else (it cannot be written: a runtime
 * limit, a FIFO order no repair fixes) the fastest other candidate that can, with a warning naming both.
 * r->algo and r->time follow what is written.  *m_out owned by the caller. */
static tc_status range_plan(tc_ctx *ctx, const tc_topo *topo, const tc_tune_bundle_opts *o, tc_tune_range *r,
                            tc_msccl **m_out, tc_mscclpp **p_out)
{
    tc_gen_opts g = o->gen;
    if (o->mscclpp) { /* a size in the range the executor runs: a multiple of 16 B x ranks x 2520 (every chunk
                         count to 10 per rank), else of 16 B x ranks (one chunk per rank) */
        const uint64_t qs[2] = {16ull * (uint64_t)topo->n_npus * 2520u, 16ull * (uint64_t)topo->n_npus};
        for (int pass = 0; pass < 2; pass++) {
            const uint64_t q = qs[pass];
            uint64_t s = r->plan_bytes / q * q;
            if (s < r->min_bytes || s == 0)
                s = (r->min_bytes + q - 1) / q * q + (r->min_bytes == 0 ? q : 0);
            if (!r->max_bytes || s <= r->max_bytes) {
                r->plan_bytes = s;
                break;
            }
        }
    }
    g.size = r->plan_bytes;
    tc_msccl_lower_opts l = o->lower;
    l.min_bytes = r->min_bytes;
    l.max_bytes = r->max_bytes;
    tc_mscclpp_lower_opts pl;
    tc_mscclpp_lower_opts_init(&pl);
    pl.min_bytes = r->min_bytes;
    pl.max_bytes = r->max_bytes;
    char pname[256];
    snprintf(pname, sizeof pname, "tacosc-%s-n%d-%llu-%llu", tc_coll_name(o->coll), topo->n_npus,
             (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
    pl.name = pname; /* unique among the bundle's plans */
    tc_compile_opts cpo;
    tc_compile_opts_init(&cpo);
    cpo.algo = tc_algo_registry[r->algo].name;
    cpo.gen = g;
    cpo.lower = o->mscclpp ? NULL : &l;
    cpo.mscclpp = o->mscclpp ? &pl : NULL;
    cpo.no_bound = 1;
    cpo.silent = 1;
    cpo.program_only = 1; /* only the program and its time are read */
    tc_compile_result cres;
    tc_status st = tc_compile(ctx, topo, o->coll, &cpo, &cres);
    if (!st) {
        *m_out = cres.msccl;
        *p_out = cres.mscclpp;
        cres.msccl = NULL;
        cres.mscclpp = NULL;
        r->time = cres.sched->time;
        tc_compile_result_free(&cres);
        return TC_OK;
    }
    tc_compile_diag first = cres.diag;
    if (st == TC_ERR_NOMEM)
        return tc_error(ctx, st, NULL, 0, "out of memory");
    /* the runner-up: the other candidates at this size, fastest first */
    tc_tune_cand *c = NULL;
    int nc = 0, tried = 0;
    tc_status es = tc_tune_eval(ctx, topo, o->coll, &g, NULL, o->algos, 0, &c, &nc);
    for (int i = 0; !es && i < nc; i++) {
        if (c[i].status || c[i].algo == r->algo)
            continue;
        tried++;
        cpo.algo = tc_algo_registry[c[i].algo].name;
        tc_compile_result alt;
        if (tc_compile(ctx, topo, o->coll, &cpo, &alt))
            continue;
        char a[32], b[32], rt[64];
        tc_warn(ctx, NULL, 0,
                "bundle: %s on %d ranks, %s: %s cannot be written for %s (%s); the runner-up %s serves the "
                "range (%s against %s at %llu B)",
                tc_coll_name(o->coll), topo->n_npus, range_text(rt, sizeof rt, r), tc_algo_registry[r->algo].name,
                o->mscclpp ? "an MSCCL++ plan" : tc_msccl_target_name(o->lower.target), first.msg, cpo.algo,
                tc_fmt_time(alt.sched->time, a, sizeof a), tc_fmt_time(r->time, b, sizeof b),
                (unsigned long long)r->plan_bytes);
        r->algo = c[i].algo;
        r->time = alt.sched->time;
        *m_out = alt.msccl;
        *p_out = alt.mscclpp;
        alt.msccl = NULL;
        alt.mscclpp = NULL;
        tc_compile_result_free(&alt);
        tc_tune_cands_free(c, nc);
        return TC_OK;
    }
    tc_tune_cands_free(c, nc);
    if (es)
        return es;
    char rt[64];
    return tc_error(ctx, first.status, first.file[0] ? first.file : NULL, first.line,
                    "bundle: %s on %d ranks, %s, planned at %llu B with %s: %s%s", tc_coll_name(o->coll),
                    topo->n_npus, range_text(rt, sizeof rt, r), (unsigned long long)r->plan_bytes,
                    tc_algo_registry[r->algo].name, first.msg,
                    tried ? "; no other candidate can be written either" : "; no other candidate serves it");
}

tc_status tc_tune_bundle_limits(tc_ctx *ctx, const tc_msccl_lower_opts *lo, tc_msccl_limits *lim)
{
    tc_msccl_limits_get(lo->target, lim);
    if (lo->max_channels > lim->hard_channels)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--max-channels %d: %s allows at most %d channels",
                        lo->max_channels, tc_msccl_target_name(lo->target), lim->hard_channels);
    if (lo->max_channels)
        lim->max_channels = lo->max_channels;
    return TC_OK;
}

void tc_tune_bundle_opts_init(tc_tune_bundle_opts *o)
{
    memset(o, 0, sizeof *o);
    tc_gen_opts_init(&o->gen);
    tc_msccl_lower_opts_init(&o->lower);
    o->lower.inplace = 1;
}

/* An MSCCL++ bundle: each range's plan verified at its planned size and written beside the others (a temporary
 * name renamed over the final one); earlier files of this collective and rank count that this bundle does
 * not rewrite are removed; the README lists the plans. */
static tc_status write_mscclpp(tc_ctx *ctx, const char *out_dir, const tc_topo *topo, const tc_tune_bundle_opts *o,
                               tc_tune_range *r, int nr)
{
    char dir[4096], pre[128];
    tc_status st = TC_OK;
    if (!*out_dir || strlen(out_dir) > 3000)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "the bundle directory name is empty or too long");
    snprintf(dir, sizeof dir, "%s/" TC_BUNDLE_MSCCLPP_DIR, out_dir);
    if ((st = make_dir(ctx, out_dir)) || (st = make_dir(ctx, dir)))
        return st;
    char **names = calloc((size_t)nr + 1, sizeof *names), **old = NULL;
    int nold = 0;
    if (!names)
        return TC_ERR_NOMEM;
    for (int k = 0; k < nr && !st; k++) {
        char name[256], p[4400], tmp[4500];
        tc_msccl *m = NULL;
        tc_mscclpp *pp = NULL;
        if ((st = range_plan(ctx, topo, o, &r[k], &m, &pp)))
            break;
        tc_msccl_free(m);
        mscclpp_file_name(name, sizeof name, o->coll, topo->n_npus, &r[k]);
        snprintf(p, sizeof p, "%s/%s", dir, name);
        snprintf(tmp, sizeof tmp, "%s.tmp", p);
        if (!(st = tc_mscclpp_verify(ctx, pp, r[k].plan_bytes, p, NULL))) {
            FILE *f = create_new(ctx, tmp);
            st = f ? tc_mscclpp_write(ctx, pp, f) : TC_ERR_IO;
            if (f) {
                tc_status cs = close_new(ctx, f, tmp);
                st = st ? st : cs;
            }
            if (!st && rename(tmp, p))
                st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", p, strerror(errno));
            if (st)
                unlink(tmp);
        }
        tc_mscclpp_free(pp);
        if (!st && !(names[k] = tc_strdup(name)))
            st = TC_ERR_NOMEM;
    }
    /* stale files of an earlier bundle of these calls */
    snprintf(pre, sizeof pre, "%s-n%d-", tc_coll_name(o->coll), topo->n_npus);
    if (!st && !(st = list_dir(ctx, dir, &old, &nold)))
        for (int i = 0; i < nold; i++) {
            int keep = strncmp(old[i], pre, strlen(pre)) != 0;
            for (int k = 0; k < nr && !keep; k++)
                keep = !strcmp(old[i], names[k]);
            char p[8300];
            snprintf(p, sizeof p, "%s/%s", dir, old[i]);
            if (!keep && strlen(old[i]) > 5 && !strcmp(old[i] + strlen(old[i]) - 5, ".json"))
                unlink(p);
        }
    if (!st) {
        char p[4200];
        snprintf(p, sizeof p, "%s/README", dir);
        FILE *f = fopen(p, "w");
        if (!f)
            st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", p, strerror(errno));
        else {
            fprintf(f,
                    "MSCCL++ plans written by tacosc %s for %s on %s (%d ranks), chosen by %s.\n"
                    "Each plan serves min_message_size..max_message_size (man 5 tacosc-mscclpp, BUNDLES): register\n"
                    "each with the MSCCL++ executor (mscclpp::ExecutionPlan, a DslAlgorithm) and select by its\n"
                    "message range.  Sizes run where input and output are whole multiples of buffer_alignment x\n"
                    "chunks.  Every plan was verified by tacosc verify at the size it was planned for.\n\n",
                    TC_VERSION, tc_coll_name(o->coll), topo->name ? topo->name : "?", topo->n_npus,
                    o->how ? o->how : "?");
            for (int k = 0; k < nr; k++) {
                char tb[32];
                fprintf(f, "%s: %s, %s at %llu bytes\n", names[k], tc_algo_registry[r[k].algo].name,
                        tc_fmt_time(r[k].time, tb, sizeof tb), (unsigned long long)r[k].plan_bytes);
            }
            if (fclose(f))
                st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", p, strerror(errno));
        }
    }
    free_names(names, nr);
    free_names(old, nold);
    return st;
}

tc_status tc_tune_bundle_write(tc_ctx *ctx, const char *out_dir, const tc_topo *topo, const tc_tune_bundle_opts *o,
                               tc_tune_range *r, int nr)
{
    if (o->mscclpp)
        return write_mscclpp(ctx, out_dir, topo, o, r, nr);
    const tc_msccl_lower_opts *lo = &o->lower;
    tc_coll coll = o->coll;
    tc_status st = TC_OK;
    int nf = 0, nwritten = 0, made_dir = 0, made_algo = 0;
    struct stat sb;
    char **files = NULL, **written = NULL, algo_dir[4096], abs[4096], stage[4200] = "", stage_algo[4300];
    tc_msccl **progs = NULL;
    tc_msccl_limits lim;
    if ((st = tc_tune_bundle_limits(ctx, lo, &lim)))
        return st;
    if (!*out_dir || strlen(out_dir) > 3000)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "the bundle directory name is empty or too long");
    /* the directory */
    snprintf(algo_dir, sizeof algo_dir, "%s%s" ALGO_DIR, out_dir,
             out_dir[strlen(out_dir) - 1] == '/' ? "" : "/");
    made_dir = stat(out_dir, &sb) != 0;
    if ((st = make_dir(ctx, out_dir)))
        return st;
    made_algo = stat(algo_dir, &sb) != 0;
    if ((st = make_dir(ctx, algo_dir)))
        goto done;
    if (!realpath(out_dir, abs)) {
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot resolve '%s': %s", out_dir, strerror(errno));
        goto done;
    }
    /* what is there already: earlier bundles of these calls are replaced; anything else must load and must
     * not serve the same calls */
    if ((st = list_dir(ctx, algo_dir, &files, &nf)) || (st = check_targets(ctx, abs, algo_dir, files, nf)))
        goto done;
    /* The new bundle is made in a staging directory inside DIR (the same file system, so renames are atomic):
     * the other files of the directory linked in, the new plans written and verified there, the README too;
     * only then is it swapped in.  A failure before the swap leaves DIR as it was. */
    snprintf(stage, sizeof stage, "%s/.tacosc-bundle-XXXXXX", abs);
    if (!mkdtemp(stage)) {
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot make a staging directory in '%s': %s", abs, strerror(errno));
        stage[0] = 0;
        goto done;
    }
    snprintf(stage_algo, sizeof stage_algo, "%s/" ALGO_DIR, stage);
    if (mkdir(stage_algo, 0777)) {
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot make directory '%s': %s", stage_algo, strerror(errno));
        goto done;
    }
    for (int i = 0; i < nf && !st; i++) {
        if (ours(files[i], coll, placement(lo), topo->n_npus))
            continue; /* an earlier bundle of these calls: replaced */
        char from[8300], to[8400];
        snprintf(from, sizeof from, "%s/%s", algo_dir, files[i]);
        snprintf(to, sizeof to, "%s/%s", stage_algo, files[i]);
        if (link(from, to))
            st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot link '%s' into the staging directory: %s", from,
                          strerror(errno));
    }
    for (int i = 0; i < nf && !st; i++) {
        if (ours(files[i], coll, placement(lo), topo->n_npus))
            continue;
        char p[8300];
        snprintf(p, sizeof p, "%s/%s", algo_dir, files[i]);
        tc_msccl *m = NULL;
        if (tc_msccl_read(ctx, p, &m)) {
            st = tc_error(ctx, TC_ERR_INVALID, p, 0,
                          "the runtime parses every file in %s and cannot load this one (communicator creation "
                          "would fail): remove it",
                          algo_dir);
            break;
        }
        int same = m->coll == coll && m->ngpus == topo->n_npus &&
                   ((m->inplace && lo->inplace) || (m->outofplace && lo->outofplace));
        for (int k = 0; same && k < nr; k++)
            if (overlap(m->min_bytes, m->max_bytes, r[k].min_bytes, r[k].max_bytes)) {
                st = tc_error(ctx, TC_ERR_INVALID, p, 0,
                              "also serves %s on %d ranks for %llu to %llu bytes (0 = no limit), which this bundle "
                              "covers: remove it or bundle into another directory",
                              tc_coll_name(coll), m->ngpus, (unsigned long long)m->min_bytes,
                              (unsigned long long)m->max_bytes);
                break;
            }
        tc_msccl_free(m);
    }
    if (st)
        goto done;
    if (!(written = calloc((size_t)nr + 1, sizeof *written))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int k = 0; k < nr && !st; k++) {
        char name[256], p[8300];
        tc_msccl *m = NULL;
        tc_mscclpp *unused = NULL;
        if ((st = range_plan(ctx, topo, o, &r[k], &m, &unused)))
            break;
        tc_tune_bundle_file_name(name, sizeof name, coll, lo, topo->n_npus, &r[k]);
        snprintf(p, sizeof p, "%s/%s", stage_algo, name);
        FILE *f = create_new(ctx, p);
        if (!f)
            st = TC_ERR_IO;
        else {
            tc_status vst = TC_OK;
            tc_status ws = tc_msccl_write_checked(ctx, m, &lim, "lowered MSCCL program", f, &vst);
            if (vst)
                tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "the MSCCL lowering produced an invalid program (a bug)");
            tc_status cs = close_new(ctx, f, p);
            st = ws ? ws : vst ? vst : cs;
        }
        tc_msccl_free(m);
        if (!st && !(written[nwritten++] = tc_strdup(name)))
            st = TC_ERR_NOMEM;
    }
    if (st)
        goto done;
    /* read back every file of the new directory and verify the new ones for the target */
    free_names(files, nf);
    files = NULL;
    nf = 0;
    if ((st = list_dir(ctx, stage_algo, &files, &nf)))
        goto done;
    if (!(progs = calloc((size_t)nf + 1, sizeof *progs))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < nf && !st; i++) {
        char p[8400];
        snprintf(p, sizeof p, "%s/%s", stage_algo, files[i]);
        if ((st = tc_msccl_read(ctx, p, &progs[i])))
            break;
        for (int k = 0; k < nwritten; k++)
            if (!strcmp(files[i], written[k]) && (st = tc_msccl_verify(ctx, progs[i], &lim, p)))
                break;
    }
    if (st)
        goto done;
    char readme_path[4400], final_readme[4200], old_algo[4400];
    snprintf(readme_path, sizeof readme_path, "%s/README", stage);
    FILE *f = create_new(ctx, readme_path);
    if (!f) {
        st = TC_ERR_IO;
        goto done;
    }
    readme(f, abs, topo, coll, o->how ? o->how : "?", lo, ctx->seed, r, nr, files, progs, nf);
    if ((st = close_new(ctx, f, readme_path)))
        goto done;
    /* the swap: the old directory into the stage (removed with it), the new one into place, then the README */
    snprintf(final_readme, sizeof final_readme, "%s/README", abs);
    snprintf(old_algo, sizeof old_algo, "%s/old-" ALGO_DIR, stage);
    if (rename(algo_dir, old_algo)) {
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot move '%s' aside: %s", algo_dir, strerror(errno));
        goto done;
    }
    if (rename(stage_algo, algo_dir)) {
        int e = errno;
        if (rename(old_algo, algo_dir)) {
            tc_error(ctx, TC_ERR_IO, NULL, 0, "the earlier plans are in '%s': move them back to '%s'", old_algo,
                     algo_dir);
            stage[0] = 0; /* kept: it holds them */
        }
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot move the new plans into '%s': %s", algo_dir, strerror(e));
        goto done;
    }
    if (rename(readme_path, final_readme))
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", final_readme, strerror(errno));
done:
    if (stage[0])
        remove_stage(stage);
    if (st && made_algo)
        rmdir(algo_dir); /* what this call made, when it failed (empty: the staging directory is gone) */
    if (st && made_dir)
        rmdir(out_dir);
    for (int i = 0; progs && i < nf; i++)
        tc_msccl_free(progs[i]);
    free(progs);
    free_names(files, nf);
    free_names(written, nwritten);
    return st;
}
