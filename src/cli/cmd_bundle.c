/* tacosc bundle TOPO.xml --collective C -o DIR: one MSCCL XML per byte range in DIR/msccl-algorithms/,
 * ranges covering every size exactly once, each file verified for the target, and DIR/README saying how
 * to point the runtime at it (man 7 tacosc-deploy).  The README stays out of msccl-algorithms/: both
 * runtimes parse every regular file of their algorithm directory as an MSCCL program and fail
 * communicator creation on one they cannot parse (Azure/msccl-executor-nccl and ROCm/rccl,
 * src/misc/msccl/msccl_lifecycle.cc, mscclInternalSchedulerInit). */
#include "cli.h"
#include "tacos/compile.h"
#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/msccl.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALGO_DIR "msccl-algorithms" /* the name the runtimes look for beside their library */

static void usage(FILE *f)
{
    fputs("usage: tacosc bundle TOPO.xml --collective C -o DIR [options]\n"
          "\n"
          "Write one MSCCL XML plan per byte range into DIR/" ALGO_DIR "/, the ranges (minBytes, maxBytes)\n"
          "covering every size from 0 up exactly once, each plan made by the algorithm that wins there, and\n"
          "DIR/README saying how to point MSCCL on NCCL or RCCL at it (man 7 tacosc-deploy).  The winner\n"
          "is the model's (--model, or TOPO.model beside the topology when it has one for C), else the\n"
          "fastest candidate in the event simulation; boundaries between sampled sizes are bisected.\n"
          "Every file is read back and verified for the target.  Files of an earlier bundle of the same\n"
          "collective, rank count and placement in DIR are replaced; any other file there that the runtime\n"
          "could not load, or that serves the same calls, is an error.\n"
          "  -c, --collective C   the collective\n"
          "      --model DIR      the model to choose by (tacosc tune --train)\n"
          "      --sizes LO:HI[:N] sampled sizes (default 1K:1G:4: N per doubling)\n"
          "      --no-vendor      cover the sizes where NCCL's (RCCL's) own ring or tree is predicted to win\n"
          "                       too (by default they are left uncovered: the library runs its own there)\n"
          "      --algos LIST     candidates when simulating (default: every generator of C)\n"
          "      --costs FILE     alpha-beta cost file\n"
          "  -k, --chunks K       chunks per rank (default 1)\n"
          "      --root R         root of rooted collectives (default 0)\n"
          "      --unwind D       switch unwinding degree\n"
          "      --seed S         seed of the generators (default 1)\n"
          "      --target T       nccl (default), rccl or tacos-run (man 5 tacosc-msccl)\n"
          "      --max-channels N the most channels the target device offers\n"
          "      --proto P        Simple (default), LL or LL128\n"
          "      --inplace        in-place plans (default)\n"
          "      --outofplace     out-of-place plans; with --inplace, plans that serve both\n"
          "  -o, --output DIR     the bundle directory (created)\n"
          "  -q, --quiet          no summary\n"
          "  -h, --help           this text\n",
          f);
}

enum { O_MODEL = 256, O_NOVENDOR, O_SIZES, O_ALGOS, O_COSTS, O_ROOT, O_UNWIND, O_SEED, O_TARGET, O_MAXCH, O_PROTO, O_INPLACE,
       O_OUTOFPLACE };


/* The file name of a range: COLL[-outofplace|-both]-nRANKS-MIN-MAX.xml (MAX "inf" for no limit). */
static void range_name(char *buf, size_t n, tc_coll coll, const char *place, int ranks, const tc_tune_range *r)
{
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
#define README_HEAD "MSCCL algorithm bundle written by tacosc"

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

int tc_cli_bundle(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"model", required_argument, 0, O_MODEL},
        {"no-vendor", no_argument, 0, O_NOVENDOR},
        {"sizes", required_argument, 0, O_SIZES},   {"algos", required_argument, 0, O_ALGOS},
        {"costs", required_argument, 0, O_COSTS},   {"chunks", required_argument, 0, 'k'},
        {"root", required_argument, 0, O_ROOT},     {"unwind", required_argument, 0, O_UNWIND},
        {"seed", required_argument, 0, O_SEED},     {"target", required_argument, 0, O_TARGET},
        {"max-channels", required_argument, 0, O_MAXCH}, {"proto", required_argument, 0, O_PROTO},
        {"inplace", no_argument, 0, O_INPLACE},     {"outofplace", no_argument, 0, O_OUTOFPLACE},
        {"output", required_argument, 0, 'o'},      {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_gen_opts go;
    tc_gen_opts_init(&go);
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    const char *coll_s = NULL, *model_dir = NULL, *sizes_s = "1K:1G:4", *costs = NULL, *out_dir = NULL;
    tc_tune_algos algos = 0;
    int opt, quiet = 0, unwind = 0;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    tc_status st = TC_OK;
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "bundle", argc, argv, "c:k:o:qh", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case 'c': coll_s = optarg; break;
        case O_MODEL: model_dir = optarg; break;
        case O_SIZES: sizes_s = optarg; break;
        case O_NOVENDOR: break; /* seen[] tells */
        case O_ALGOS: st = tc_tune_algos_parse(&ctx, optarg, &algos); break;
        case O_COSTS: costs = optarg; break;
        case 'k': st = tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &go.chunks); break;
        case O_ROOT: st = tc_cli_parse_int(&ctx, "root", optarg, 0, INT_MAX, &go.root); break;
        case O_UNWIND: st = tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &unwind); break;
        case O_SEED: st = tc_cli_parse_seed(&ctx, optarg, &ctx.seed); break;
        case O_TARGET: st = tc_cli_msccl_option(&ctx, "target", optarg, &lo); break;
        case O_MAXCH: st = tc_cli_msccl_option(&ctx, "max-channels", optarg, &lo); break;
        case O_PROTO: st = tc_cli_msccl_option(&ctx, "proto", optarg, &lo); break;
        case O_INPLACE:
        case O_OUTOFPLACE: break; /* seen[] tells */
        case 'o': out_dir = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
        if (st)
            return tc_cli_exit(st);
    }
    if (optind >= argc)
        return tc_cli_usage(&ctx, "bundle", "no topology file given");
    if (optind < argc - 1)
        return tc_cli_usage(&ctx, "bundle", "unexpected argument '%s' (one topology file expected)", argv[optind + 1]);
    if (!coll_s)
        return tc_cli_usage(&ctx, "bundle", "--collective is required");
    if (!out_dir)
        return tc_cli_usage(&ctx, "bundle", "-o DIR is required");
    tc_coll coll;
    if (tc_coll_parse(coll_s, &coll))
        return tc_cli_usage(&ctx, "bundle", "--collective: unknown collective '%s'", coll_s);
    if (seen[O_ROOT] && !tc_coll_rooted(coll))
        return tc_cli_usage(&ctx, "bundle", "--root applies to broadcast, reduce, gather and scatter, not %s",
                            tc_coll_name(coll));
    if (model_dir && algos)
        return tc_cli_usage(&ctx, "bundle", "--algos applies when simulating, not with --model (the model chooses)");
    go.unwind = unwind;
    lo.inplace = seen[O_INPLACE] || !seen[O_OUTOFPLACE];
    lo.outofplace = seen[O_OUTOFPLACE];
    const char *place = lo.inplace && lo.outofplace ? "-both" : lo.outofplace ? "-outofplace" : "";
    const char *topo_path = argv[optind];
    tc_topo *topo = NULL;
    tc_tune_model *model = NULL;
    uint64_t *sizes = NULL;
    int n_sizes = 0, nr = 0, nf = 0, nwritten = 0;
    tc_tune_range *r = NULL;
    char **files = NULL, **written = NULL, algo_dir[4096], why[4096], how[4200], abs[4096], stage[4200] = "",
         stage_algo[4300];
    tc_msccl **progs = NULL;
    tc_msccl_limits lim;
    tc_msccl_limits_get(lo.target, &lim);
    if (lo.max_channels) {
        if (lo.max_channels > lim.hard_channels) {
            st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--max-channels %d: %s allows at most %d channels",
                          lo.max_channels, tc_msccl_target_name(lo.target), lim.hard_channels);
            goto done;
        }
        lim.max_channels = lo.max_channels;
    }
    if ((st = tc_tune_sizes_parse(&ctx, sizes_s, &sizes, &n_sizes)) ||
        (st = tc_cli_load_topo(&ctx, topo_path, costs, unwind, 0, &topo)))
        goto done;
    uint64_t div = tc_sched_chunk_divisor(coll, topo->n_npus, go.chunks);
    if (sizes[0] < div) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                      "--sizes: %llu bytes is less than one byte per chunk (%s on %d ranks with %d chunk%s per rank "
                      "has %llu chunks)",
                      (unsigned long long)sizes[0], tc_coll_name(coll), topo->n_npus, go.chunks,
                      go.chunks == 1 ? "" : "s", (unsigned long long)div);
        goto done;
    }
    if (tc_coll_rooted(coll) && go.root >= topo->n_npus) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--root %d: the topology has %d npus", go.root, topo->n_npus);
        goto done;
    }
    if ((st = tc_cli_model_for(&ctx, topo_path, model_dir, topo, coll, go.chunks, &model, why, sizeof why)))
        goto done;
    if (model && algos) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                      "--algos applies when simulating, but the model %s chooses (move it away to simulate)",
                      model->dir);
        goto done;
    }
    if (model)
        snprintf(how, sizeof how, "the model %s (held-out accuracy %.1f%%)", model->dir, 100 * model->test.accuracy);
    else
        snprintf(how, sizeof how, "simulating the candidates (event model; %s)", why);
    if ((st = tc_tune_bundle_ranges(&ctx, topo, coll, &go, model, algos, sizes, n_sizes, &r, &nr)))
        goto done;
    int n_gaps = 0; /* issue 24: where NCCL's own algorithm is predicted to win, no file (tune/vendor.c) */
    if ((lo.target == TC_TARGET_NCCL || lo.target == TC_TARGET_RCCL) && !seen[O_NOVENDOR] &&
        (st = tc_tune_vendor_uncover(&ctx, lo.target == TC_TARGET_RCCL, topo, coll, &go, sizes, n_sizes, &r, &nr,
                                     &n_gaps)))
        goto done;
    /* the directory */
    snprintf(algo_dir, sizeof algo_dir, "%s%s" ALGO_DIR, out_dir, out_dir[strlen(out_dir) - 1] == '/' ? "" : "/");
    if ((st = tc_cli_make_dir(&ctx, out_dir, "a bundle")) || (st = tc_cli_make_dir(&ctx, algo_dir, "a bundle")))
        goto done;
    if (!realpath(out_dir, abs)) {
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot resolve '%s': %s", out_dir, strerror(errno));
        goto done;
    }
    /* what is there already: earlier bundles of these calls are replaced; anything else must load and must
     * not serve the same calls */
    if ((st = list_dir(&ctx, algo_dir, &files, &nf)) || (st = check_targets(&ctx, abs, algo_dir, files, nf)))
        goto done;
    /* The new bundle is made in a staging directory inside DIR (the same file system, so renames are atomic):
     * the other files of the directory linked in, the new plans written and verified there, the README too;
     * only then is it swapped in.  A failure before the swap leaves DIR as it was. */
    snprintf(stage, sizeof stage, "%s/.tacosc-bundle-XXXXXX", abs);
    if (!mkdtemp(stage)) {
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot make a staging directory in '%s': %s", abs, strerror(errno));
        stage[0] = 0;
        goto done;
    }
    snprintf(stage_algo, sizeof stage_algo, "%s/" ALGO_DIR, stage);
    if (mkdir(stage_algo, 0777)) {
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot make directory '%s': %s", stage_algo, strerror(errno));
        goto done;
    }
    for (int i = 0; i < nf && !st; i++) {
        if (ours(files[i], coll, place, topo->n_npus))
            continue; /* an earlier bundle of these calls: replaced */
        char from[8300], to[8400];
        snprintf(from, sizeof from, "%s/%s", algo_dir, files[i]);
        snprintf(to, sizeof to, "%s/%s", stage_algo, files[i]);
        if (link(from, to))
            st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot link '%s' into the staging directory: %s", from,
                          strerror(errno));
    }
    for (int i = 0; i < nf && !st; i++) {
        if (ours(files[i], coll, place, topo->n_npus))
            continue;
        char p[8300];
        snprintf(p, sizeof p, "%s/%s", algo_dir, files[i]);
        tc_msccl *m = NULL;
        if (tc_msccl_read(&ctx, p, &m)) {
            st = tc_error(&ctx, TC_ERR_INVALID, p, 0,
                          "the runtime parses every file in %s and cannot load this one (communicator creation "
                          "would fail): remove it",
                          algo_dir);
            break;
        }
        int same = m->coll == coll && m->ngpus == topo->n_npus &&
                   ((m->inplace && lo.inplace) || (m->outofplace && lo.outofplace));
        for (int k = 0; same && k < nr; k++)
            if (overlap(m->min_bytes, m->max_bytes, r[k].min_bytes, r[k].max_bytes)) {
                st = tc_error(&ctx, TC_ERR_INVALID, p, 0,
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
    if (!(written = calloc((size_t)nr, sizeof *written))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int k = 0; k < nr && !st; k++) {
        char name[256], p[8300];
        range_name(name, sizeof name, coll, place, topo->n_npus, &r[k]);
        snprintf(p, sizeof p, "%s/%s", stage_algo, name);
        const char *aname = tc_algo_registry[r[k].algo].name;
        tc_gen_opts g = go;
        g.size = r[k].plan_bytes;
        tc_msccl_lower_opts l = lo;
        l.min_bytes = r[k].min_bytes;
        l.max_bytes = r[k].max_bytes;
        /* the compile pipeline: generate, check, lower (include/tacos/compile.h) */
        tc_compile_opts cpo;
        tc_compile_opts_init(&cpo);
        cpo.algo = aname;
        cpo.gen = g;
        cpo.lower = &l;
        cpo.no_bound = 1;
        tc_compile_result cres;
        st = tc_compile(&ctx, topo, coll, &cpo, &cres);
        tc_msccl *m = cres.msccl;
        tc_cli_out o;
        if (!st && !(st = tc_cli_open_output(&ctx, p, &o))) {
            tc_status vst = TC_OK;
            tc_status ws = tc_msccl_write_checked(&o.ctx, m, &lim, "lowered MSCCL program", o.f, &vst);
            if (vst)
                tc_error(&ctx, TC_ERR_INTERNAL, NULL, 0, "the MSCCL lowering produced an invalid program (a bug)");
            st = tc_cli_close_output(&o, ws == TC_OK && vst == TC_OK);
            if (!st)
                st = ws ? ws : vst;
        }
        if (!st && !(written[nwritten++] = tc_strdup(name)))
            st = TC_ERR_NOMEM;
        tc_compile_result_free(&cres);
    }
    if (st)
        goto done;
    /* read back every file of the new directory and verify the new ones for the target */
    free_names(files, nf);
    files = NULL;
    nf = 0;
    if ((st = list_dir(&ctx, stage_algo, &files, &nf)))
        goto done;
    if (!(progs = calloc((size_t)nf + 1, sizeof *progs))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < nf && !st; i++) {
        char p[8400];
        snprintf(p, sizeof p, "%s/%s", stage_algo, files[i]);
        if ((st = tc_msccl_read(&ctx, p, &progs[i])))
            break;
        for (int k = 0; k < nwritten; k++)
            if (!strcmp(files[i], written[k]) && (st = tc_msccl_verify(&ctx, progs[i], &lim, p)))
                break;
    }
    if (st)
        goto done;
    char readme_path[4400], final_readme[4200], old_algo[4400];
    snprintf(readme_path, sizeof readme_path, "%s/README", stage);
    tc_cli_out o;
    if (!(st = tc_cli_open_output(&ctx, readme_path, &o))) {
        readme(o.f, abs, topo, coll, how, &lo, ctx.seed, r, nr, files, progs, nf);
        st = tc_cli_close_output(&o, 1);
    }
    if (st)
        goto done;
    /* the swap: the old directory into the stage (removed with it), the new one into place, then the README */
    snprintf(final_readme, sizeof final_readme, "%s/README", abs);
    snprintf(old_algo, sizeof old_algo, "%s/old-" ALGO_DIR, stage);
    if (rename(algo_dir, old_algo)) {
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot move '%s' aside: %s", algo_dir, strerror(errno));
        goto done;
    }
    if (rename(stage_algo, algo_dir)) {
        int e = errno;
        if (rename(old_algo, algo_dir)) {
            tc_error(&ctx, TC_ERR_IO, NULL, 0, "the earlier plans are in '%s': move them back to '%s'", old_algo,
                     algo_dir);
            stage[0] = 0; /* kept: it holds them */
        }
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot move the new plans into '%s': %s", algo_dir, strerror(e));
        goto done;
    }
    if (rename(readme_path, final_readme)) {
        st = tc_error(&ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", final_readme, strerror(errno));
        goto done;
    }
    if (!st && !quiet) {
        char tb[32];
        printf("bundle %s on %s (%d npus), target %s: %d range%s, chosen by %s\n", tc_coll_name(coll),
               topo->name ? topo->name : "?", topo->n_npus, tc_msccl_target_name(lo.target), nr, nr == 1 ? "" : "s",
               how);
        for (int k = 0; k < nr; k++) {
            char name[256], mx[32];
            range_name(name, sizeof name, coll, place, topo->n_npus, &r[k]);
            snprintf(mx, sizeof mx, "%llu", (unsigned long long)r[k].max_bytes);
            printf("  %12llu .. %-12s %-10s %s at %llu B; %s/%s\n", (unsigned long long)r[k].min_bytes,
                   r[k].max_bytes ? mx : "no limit", tc_algo_registry[r[k].algo].name,
                   tc_fmt_time(r[k].time, tb, sizeof tb), (unsigned long long)r[k].plan_bytes, ALGO_DIR, name);
        }
        printf("  every file verified for %s; wrote %s/README\n", tc_msccl_target_name(lo.target), out_dir);
    }
    if (!st)
        st = tc_cli_stdout_close(&ctx);
done:
    if (stage[0])
        remove_stage(stage);
    for (int i = 0; progs && i < nf; i++)
        tc_msccl_free(progs[i]);
    free(progs);
    free_names(files, nf);
    free_names(written, nwritten);
    free(r);
    free(sizes);
    tc_tune_model_free(model);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
