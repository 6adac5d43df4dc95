/* tacosc tune TOPO.xml... --collective C -o DATA.csv: tuning data (every algorithm at every size, simulated
 * or measured with tacos-run); tacosc tune --train DATA.csv -o MODEL/: one SVM per collective (the learned
 * dispatcher of the PCCL "Big Send-off" paper, §IV-C).  Formats: man 5 tacosc-tune. */
#include "cli.h"
#include "tacos/mscclpp.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc tune TOPO.xml... --collective C[,C...] [options] -o DATA.csv\n"
          "       tacosc tune --train DATA.csv [--eval DATA2.csv] [--collective C[,C...]] [--seed S] -o MODEL_DIR\n"
          "\n"
          "Tuning data: every algorithm of each collective at every size on each topology, one CSV row per\n"
          "(collective, size, ranks, nodes, ranks per node, algorithm) with its time (man 5 tacosc-tune).\n"
          "  -c, --collective LIST  collectives, comma-separated\n"
          "      --sizes LO:HI[:N]  sizes from LO to HI, N per doubling (default 1K:1G:4)\n"
          "      --algos LIST       candidates, comma-separated (default: every generator of the collective)\n"
          "      --source S         sim (default: the event simulation of each checked plan) or measure\n"
          "                         (each plan replayed by tacos-run under mpirun: no GPU needed)\n"
          "      --costs FILE       alpha-beta cost file of every topology\n"
          "      --target T         sim: each plan's time as the MSCCL XML compile writes for nccl, rccl or\n"
          "                         tacos-run (lowered and priced as tacosc sim prices the file); default:\n"
          "                         the plan itself, as a JSON plan is written\n"
          "      --max-channels N   with --target: the most channels the device offers\n"
          "  -f, --format F         sim: mscclpp prices each plan as the MSCCL++ plan compile writes\n"
          "  -k, --chunks K         chunks per rank (default 1)\n"
          "      --root R           root of rooted collectives (default 0)\n"
          "      --unwind D         switch unwinding degree\n"
          "      --seed S           seed of the generators (default 1)\n"
          "      --repeats R        measure: launches per plan, the median kept (default 3)\n"
          "      --iters N          measure: timed iterations per launch, their mean (default 5)\n"
          "      --mpirun CMD       measure: the launcher, a shell command line (default mpirun); '-np N'\n"
          "                         follows it (add --oversubscribe and the like here)\n"
          "      --tacos-run PATH   measure: tacos-run (default: the one beside tacosc, else on the PATH)\n"
          "  -o, --output FILE      the CSV ('-' for stdout)\n"
          "Models:\n"
          "      --train DATA.csv   train one SVM per collective of the data (RBF kernel, features scaled,\n"
          "                         C and gamma by 5-fold cross-validation on a stratified 80% split) and\n"
          "                         report its accuracy and the slowdown of its mispredictions on the\n"
          "                         held-out 20%; -o names the model directory (created), which\n"
          "                         'tacosc TOPO.xml --algo auto --model DIR' uses; every score is printed\n"
          "                         beside always-the-commonest-winner and always-tacos\n"
          "      --eval DATA.csv    also score each model on this data (topologies it was not trained on:\n"
          "                         the held-out evaluation across topology families), with the baselines\n"
          "  -c, --collective LIST  only these collectives of the data\n"
          "      --seed S           seed of the split and the folds (default 1)\n"
          "Other:\n"
          "  -q, --quiet            no summary and no progress bar\n"
          "  -h, --help             this text\n"
          "A progress bar with the time left is drawn on stderr when it is a terminal.\n",
          f);
}

enum {
    O_SIZES = 256, O_ALGOS, O_SOURCE, O_COSTS, O_ROOT, O_UNWIND, O_SEED,
    O_REPEATS, O_ITERS, O_MPIRUN, O_TACOSRUN, O_MAXCH_T,
    O_TRAIN, O_EVAL
};

/* The progress bar: "tune: [#####.....]  52%  1130/2187, 12 s left", redrawn at most 5 times a second. */
typedef struct bar {
    double done, total, t0, last;
    int on, drawn;
} bar;

static void bar_draw(bar *b)
{
    double now = tc_now(), el = now - b->t0, f = b->total > 0 ? b->done / b->total : 1;
    char left[48] = "";
    if (b->done > 0 && el > 0.5)
        snprintf(left, sizeof left, ", %.0f s left", el / b->done * (b->total - b->done));
    char hashes[31];
    int k = (int)(f * 30);
    for (int i = 0; i < 30; i++)
        hashes[i] = i < k ? '#' : '.';
    hashes[30] = 0;
    fprintf(stderr, "\rtune: [%s] %3.0f%% %6.0f/%.0f%s   ", hashes, f * 100, b->done, b->total, left);
    fflush(stderr);
    b->last = now;
    b->drawn = 1;
}

static void bar_tick(void *user, double units)
{
    bar *b = user;
    b->done += units;
    if (b->on && tc_now() - b->last >= 0.2)
        bar_draw(b);
}

static void bar_end(bar *b)
{
    if (b->drawn)
        fprintf(stderr, "\r%80s\r", "");
}

/* tacos-run beside this tacosc, else "tacos-run" (the PATH). */
static const char *default_tacos_run(char *buf, size_t n)
{
    ssize_t l = readlink("/proc/self/exe", buf, n - 16);
    if (l > 0) {
        buf[l] = 0;
        char *slash = strrchr(buf, '/');
        if (slash) {
            strcpy(slash + 1, "tacos-run");
            if (!access(buf, X_OK))
                return buf;
        }
    }
    return "tacos-run";
}

/* "allreduce,allgather" into a bit mask of collectives. */
static tc_status parse_colls(tc_ctx *ctx, const char *list, unsigned *out)
{
    unsigned m = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        char name[64];
        tc_coll c;
        if (len == 0 || len >= sizeof name)
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--collective: '%s' is not a comma-separated list", list);
        memcpy(name, p, len);
        name[len] = 0;
        if (tc_coll_parse(name, &c))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--collective: unknown collective '%s'", name);
        m |= TC_COLL_BIT(c);
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = m;
    return TC_OK;
}

/* The model directory, made when missing. */

static int train(tc_ctx *ctx, const char *data_path, const char *eval_path, unsigned colls, const char *dir,
                 int quiet)
{
    tc_tune_data *d = NULL, *ev = NULL;
    tc_tune_model *m = NULL;
    tc_status st = tc_tune_data_read(ctx, data_path, &d);
    if (st)
        goto done;
    if (eval_path && (st = tc_tune_data_read(ctx, eval_path, &ev)))
        goto done;
    unsigned have = 0;
    for (int i = 0; i < d->n_rows; i++)
        have |= TC_COLL_BIT(d->rows[i].coll);
    for (int c = 0; c < TC_COLL_COUNT; c++)
        if ((colls & TC_COLL_BIT(c)) && !(have & TC_COLL_BIT(c))) {
            st = tc_error(ctx, TC_ERR_INVALID, data_path, 0, "no %s rows to train on", tc_coll_name((tc_coll)c));
            goto done;
        }
    if ((st = tc_cli_make_dir(ctx, dir, "a model")))
        goto done;
    for (int c = 0; c < TC_COLL_COUNT && !st; c++) {
        if (!(have & TC_COLL_BIT(c)) || (colls && !(colls & TC_COLL_BIT(c))))
            continue;
        char svm_path[4096], meta_path[4096];
        tc_tune_model_path(dir, (tc_coll)c, "svm", svm_path, sizeof svm_path);
        tc_tune_model_path(dir, (tc_coll)c, "json", meta_path, sizeof meta_path);
        const char *inputs[] = {data_path}, *what[] = {"tuning data"};
        if ((st = tc_cli_check_output(ctx, "-o", svm_path, inputs, what, 1)) ||
            (st = tc_cli_check_output(ctx, "-o", meta_path, inputs, what, 1)))
            break;
        double t0 = tc_now();
        if ((st = tc_tune_train(ctx, d, (tc_coll)c, &m)))
            break;
        double tt = tc_now() - t0;
        tc_cli_out o;
        /* libsvm writes by path: the temporary file of the output, renamed into place on success */
        if (!(st = tc_cli_open_output(ctx, svm_path, &o))) {
            tc_status ws = tc_tune_model_write_svm(&o.ctx, m, o.tmp ? o.tmp : svm_path);
            st = tc_cli_close_output(&o, ws == TC_OK);
            if (!st)
                st = ws;
        }
        if (!st && !(st = tc_cli_open_output(ctx, meta_path, &o))) {
            tc_status ws = tc_tune_model_write_meta(&o.ctx, m, o.f);
            st = tc_cli_close_output(&o, ws == TC_OK);
            if (!st)
                st = ws;
        }
        if (!st && !quiet) {
            char classes[256] = "";
            for (int k = 0; k < m->n_classes; k++)
                snprintf(classes + strlen(classes), sizeof classes - strlen(classes), "%s%s",
                         k ? ", " : "", tc_algo_registry[m->classes[k]].name);
            const tc_tune_score *t = &m->test;
            printf("%s: %d samples on %d topolog%s, %d winning algorithm%s (%s); trained in %.1f s\n",
                   tc_coll_name((tc_coll)c), m->n_samples, m->n_topos, m->n_topos == 1 ? "y" : "ies",
                   m->n_classes, m->n_classes == 1 ? "" : "s", classes, tt);
            if (m->n_classes > 1)
                printf("  RBF C-SVC, C 2^%.0f, gamma 2^%.0f: %d-fold cross-validation accuracy %.1f%% on %d samples%s\n",
                       log2(m->C), log2(m->gamma), TC_TUNE_FOLDS, 100 * m->cv_accuracy, m->grid_samples,
                       m->grid_samples < m->n_train ? " (a seeded subsample of the training samples: the grid's "
                                                      "time grows faster than the samples)" : "");
            else
                printf("  one winner: nothing to separate (the SVM predicts %s everywhere)\n", classes);
            if (!m->net)
                printf("  warning: data without network features (version 1 CSV): the model serves only the "
                       "topologies it was trained on\n");
            tc_tune_report_print(stdout, "held out (same topologies as training)", &m->held);
            if (t->no_time)
                printf("  %d misprediction%s of an algorithm with no time there\n", t->no_time,
                       t->no_time == 1 ? "" : "s");
            printf("  wrote %s, %s\n", svm_path, meta_path);
        }
        if (!st && ev) {
            tc_tune_report r;
            int has = 0;
            for (int i = 0; i < ev->n_rows && !has; i++)
                has = ev->rows[i].coll == (tc_coll)c;
            if (has && !(st = tc_tune_evaluate(ctx, m, ev, &r)) && !quiet) {
                char label[4200];
                snprintf(label, sizeof label, "evaluated on %s", eval_path);
                tc_tune_report_print(stdout, label, &r);
            }
        }
        tc_tune_model_free(m);
        m = NULL;
    }
    if (!st)
        st = tc_cli_stdout_close(ctx);
done:
    tc_tune_model_free(m);
    tc_tune_data_free(d);
    tc_tune_data_free(ev);
    return tc_cli_exit(st);
}

int tc_cli_tune(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"sizes", required_argument, 0, O_SIZES},
        {"algos", required_argument, 0, O_ALGOS},   {"source", required_argument, 0, O_SOURCE},
        {"costs", required_argument, 0, O_COSTS},   {"chunks", required_argument, 0, 'k'},
        {"root", required_argument, 0, O_ROOT},     {"unwind", required_argument, 0, O_UNWIND},
        {"seed", required_argument, 0, O_SEED},     {"repeats", required_argument, 0, O_REPEATS},
        {"iters", required_argument, 0, O_ITERS},   {"mpirun", required_argument, 0, O_MPIRUN},
        {"tacos-run", required_argument, 0, O_TACOSRUN}, {"train", required_argument, 0, O_TRAIN},
        {"eval", required_argument, 0, O_EVAL},     {"target", required_argument, 0, 'T'},
        {"max-channels", required_argument, 0, O_MAXCH_T}, {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},      {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_tune_opts o;
    tc_tune_opts_init(&o);
    const char *sizes_s = "1K:1G:4", *costs = NULL, *out_path = NULL, *train_path = NULL, *colls_s = NULL,
               *eval_path = NULL;
    int opt, quiet = 0, fmt_mscclpp = 0;
    char trbuf[4096];
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    tc_mscclpp_lower_opts mpo;
    tc_mscclpp_lower_opts_init(&mpo);
    mpo.any_size = 1; /* a price per size, not a file for one */
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    tc_status st = TC_OK;
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "tune", argc, argv, "c:k:o:f:qh", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case 'c': colls_s = optarg; break;
        case 'T': st = tc_cli_msccl_option(&ctx, "target", optarg, &lo); break;
        case O_MAXCH_T: st = tc_cli_msccl_option(&ctx, "max-channels", optarg, &lo); break;
        case 'f':
            if (strcmp(optarg, "mscclpp") && strcmp(optarg, "json"))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--format: '%s' is not json or mscclpp", optarg);
            fmt_mscclpp = !strcmp(optarg, "mscclpp");
            break;
        case O_SIZES: sizes_s = optarg; break;
        case O_ALGOS: st = tc_tune_algos_parse(&ctx, optarg, &o.algos); break;
        case O_SOURCE:
            if (!strcmp(optarg, "sim"))
                o.source = TC_TUNE_SIM;
            else if (!strcmp(optarg, "measure"))
                o.source = TC_TUNE_MEASURE;
            else
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--source: '%s' is not sim or measure", optarg);
            break;
        case O_COSTS: costs = optarg; break;
        case 'k': st = tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &o.gen.chunks); break;
        case O_ROOT: st = tc_cli_parse_int(&ctx, "root", optarg, 0, INT_MAX, &o.gen.root); break;
        case O_UNWIND: st = tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &o.gen.unwind); break;
        case O_SEED: st = tc_cli_parse_seed(&ctx, optarg, &ctx.seed); break;
        case O_REPEATS: st = tc_cli_parse_int(&ctx, "repeats", optarg, 1, 1000, &o.repeats); break;
        case O_ITERS: st = tc_cli_parse_int(&ctx, "iters", optarg, 1, 1000000, &o.iters); break;
        case O_MPIRUN: o.mpirun = optarg; break;
        case O_TACOSRUN: o.tacos_run = optarg; break;
        case O_TRAIN: train_path = optarg; break;
        case O_EVAL: eval_path = optarg; break;
        case 'o': out_path = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
        if (st)
            return tc_cli_exit(st);
    }
    unsigned colls = 0;
    if (colls_s && (st = parse_colls(&ctx, colls_s, &colls)))
        return tc_cli_exit(st);
    if (!out_path)
        return tc_cli_usage(&ctx, "tune", "-o is required (%s)", train_path ? "the model directory" : "the CSV file");
    /* options of the other mode: usage errors naming them */
    static const int collect_only[] = {O_SIZES, O_ALGOS, O_SOURCE, O_COSTS, 'k', O_ROOT, O_UNWIND,
                                       O_REPEATS, O_ITERS, O_MPIRUN, O_TACOSRUN, 'T', O_MAXCH_T, 'f'};
    static const int measure_only[] = {O_REPEATS, O_ITERS, O_MPIRUN, O_TACOSRUN};
    char name[64];
    if (eval_path && !train_path)
        return tc_cli_usage(&ctx, "tune", "--eval applies to --train");
    if (train_path) {
        for (size_t i = 0; i < sizeof collect_only / sizeof collect_only[0]; i++)
            if (seen[collect_only[i]])
                return tc_cli_usage(&ctx, "tune", "%s applies to collecting tuning data, not to --train",
                                    tc_cli_opt_name(longopts, collect_only[i], name, sizeof name));
        if (optind < argc)
            return tc_cli_usage(&ctx, "tune", "unexpected argument '%s' (--train reads the CSV only)", argv[optind]);
        return train(&ctx, train_path, eval_path, colls, out_path, quiet);
    }
    for (size_t i = 0; i < sizeof measure_only / sizeof measure_only[0]; i++)
        if (seen[measure_only[i]] && o.source != TC_TUNE_MEASURE)
            return tc_cli_usage(&ctx, "tune", "%s applies to --source measure only",
                                tc_cli_opt_name(longopts, measure_only[i], name, sizeof name));
    int mscclpp = fmt_mscclpp;
    if ((seen['T'] || seen[O_MAXCH_T] || mscclpp) && o.source != TC_TUNE_SIM)
        return tc_cli_usage(&ctx, "tune", "--target and --format price simulated plans (--source sim)");
    if (seen[O_MAXCH_T] && !seen['T'])
        return tc_cli_usage(&ctx, "tune", "--max-channels applies with --target");
    if (seen['T'] && mscclpp)
        return tc_cli_usage(&ctx, "tune", "--target names an MSCCL XML runtime; -f mscclpp prices MSCCL++ plans");
    tc_msccl_limits lim;
    if (seen['T'] && (st = tc_tune_bundle_limits(&ctx, &lo, &lim)))
        return tc_cli_exit(st);
    o.gen.target = seen['T'] ? &lo : NULL; /* candidates priced as compile writes them (issue 21) */
    o.gen.mscclpp_target = mscclpp ? &mpo : NULL;
    if (optind >= argc)
        return tc_cli_usage(&ctx, "tune", "no topology file given");
    if (!colls_s)
        return tc_cli_usage(&ctx, "tune", "--collective is required");
    if (seen[O_ROOT]) {
        for (int c = 0; c < TC_COLL_COUNT; c++)
            if ((colls & TC_COLL_BIT(c)) && !tc_coll_rooted((tc_coll)c))
                return tc_cli_usage(&ctx, "tune", "--root applies to broadcast, reduce, gather and scatter, not %s",
                                    tc_coll_name((tc_coll)c));
    }
    if (o.algos) {
        for (int c = 0; c < TC_COLL_COUNT; c++) {
            if (!(colls & TC_COLL_BIT(c)))
                continue;
            int any = 0;
            for (int a = 0; tc_algo_registry[a].name; a++)
                any |= (o.algos >> a & 1) && (tc_algo_registry[a].colls & TC_COLL_BIT(c));
            if (!any)
                return tc_cli_usage(&ctx, "tune", "--algos: none of them generates %s", tc_coll_name((tc_coll)c));
        }
    }
    if (o.source == TC_TUNE_MEASURE && !seen[O_TACOSRUN])
        o.tacos_run = default_tacos_run(trbuf, sizeof trbuf);
    int n_topos = argc - optind, n_sizes = 0;
    uint64_t *sizes = NULL;
    tc_topo **topos = calloc((size_t)n_topos, sizeof *topos);
    tc_tune_data *d = NULL;
    const char **inputs = calloc((size_t)n_topos + 1, sizeof *inputs), **what = calloc((size_t)n_topos + 1, sizeof *what);
    if (!topos || !inputs || !what) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n_topos; i++) {
        inputs[i] = argv[optind + i];
        what[i] = "topology file";
    }
    inputs[n_topos] = costs;
    what[n_topos] = "cost file";
    if ((st = tc_tune_sizes_parse(&ctx, sizes_s, &sizes, &n_sizes)) ||
        (st = tc_cli_check_output(&ctx, "-o", out_path, inputs, what, n_topos + 1)))
        goto done;
    double total = 0;
    for (int i = 0; i < n_topos; i++) {
        if ((st = tc_cli_load_topo(&ctx, argv[optind + i], costs, o.gen.unwind, o.gen.switch_model, &topos[i])))
            goto done;
        /* the rows of one topology are told apart by its name and fingerprint (man 5 tacosc-tune) */
        tc_tune_topo_id a, b;
        tc_tune_topo_id_get(topos[i], &a);
        for (int k = 0; k < i; k++) {
            tc_tune_topo_id_get(topos[k], &b);
            const char *an = a.name ? a.name : "", *bn = b.name ? b.name : "";
            if (a.fingerprint == b.fingerprint && !strcmp(an, bn))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "%s and %s are the same topology: give it once",
                              argv[optind + k], argv[optind + i]);
            else if (!strcmp(an, bn))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                              "%s and %s are different topologies named '%s': rename one (<topology name=...>)",
                              argv[optind + k], argv[optind + i], an);
            if (st)
                goto done;
        }
        for (int c = 0; c < TC_COLL_COUNT; c++) {
            if (!(colls & TC_COLL_BIT(c)))
                continue;
            uint64_t div = tc_sched_chunk_divisor((tc_coll)c, topos[i]->n_npus, o.gen.chunks);
            if (sizes[0] < div) {
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                              "--sizes: %llu bytes is less than one byte per chunk (%s on %d ranks of %s with %d "
                              "chunk%s per rank has %llu chunks)",
                              (unsigned long long)sizes[0], tc_coll_name((tc_coll)c), topos[i]->n_npus,
                              argv[optind + i], o.gen.chunks, o.gen.chunks == 1 ? "" : "s", (unsigned long long)div);
                goto done;
            }
            if (tc_coll_rooted((tc_coll)c) && o.gen.root >= topos[i]->n_npus) {
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--root %d: %s has %d npus", o.gen.root,
                              argv[optind + i], topos[i]->n_npus);
                goto done;
            }
            for (int a = 0; tc_algo_registry[a].name; a++)
                if ((tc_algo_registry[a].colls & TC_COLL_BIT(c)) && (!o.algos || (o.algos >> a & 1)))
                    total += n_sizes;
        }
    }
    bar b = {0, total, tc_now(), 0, !quiet && isatty(2), 0};
    o.progress = bar_tick;
    o.progress_user = &b;
    if ((st = tc_tune_data_create(&d)))
        goto done;
    if (o.gen.target || o.gen.mscclpp_target) /* what the times are, in the CSV's comments */
        st = tc_tune_data_note(d, "times: each plan as compile writes it for %s, priced as tacosc sim prices the file",
                               o.gen.target ? tc_msccl_target_name(lo.target) : "an MSCCL++ plan");
    if (st)
        goto done;
    for (int i = 0; i < n_topos && !st; i++)
        for (int c = 0; c < TC_COLL_COUNT && !st; c++)
            if (colls & TC_COLL_BIT(c))
                st = tc_tune_collect(&ctx, topos[i], (tc_coll)c, sizes, n_sizes, &o, d);
    bar_end(&b);
    if (st)
        goto done;
    tc_cli_out out;
    if (!(st = tc_cli_open_output(&ctx, out_path, &out))) {
        tc_status ws = tc_tune_data_write(&out.ctx, d, out.f);
        st = tc_cli_close_output(&out, ws == TC_OK);
        if (!st)
            st = ws;
    }
    if (!st && !quiet && strcmp(out_path, "-")) {
        printf("tune: %d topolog%s, %d size%s from %llu to %llu B, source %s: %d rows in %.1f s\n", n_topos,
               n_topos == 1 ? "y" : "ies", n_sizes, n_sizes == 1 ? "" : "s", (unsigned long long)sizes[0],
               (unsigned long long)sizes[n_sizes - 1], tc_tune_source_name(o.source), d->n_rows, tc_now() - b.t0);
        if (d->n_notes)
            printf("  %d (algorithm, topology, collective) refused: the CSV's comments say why\n", d->n_notes);
        printf("  wrote %s\n", out_path);
    }
    if (!st)
        st = tc_cli_stdout_close(&ctx);
done:
    for (int i = 0; topos && i < n_topos; i++)
        tc_topo_free(topos[i]);
    free(topos);
    free(inputs);
    free(what);
    free(sizes);
    tc_tune_data_free(d);
    return tc_cli_exit(st);
}

/* A sink that keeps the first error (its file, line and message). */
typedef struct first_err {
    char file[4096], msg[1024];
    int line, have;
} first_err;

static void keep_first(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    first_err *e = user;
    if (level != TC_DIAG_ERROR || e->have)
        return;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    e->line = line;
    e->have = 1;
}

const char *tc_cli_model_dir(const char *topo_path, const char *model_dir, char *buf, size_t n)
{
    if (model_dir) {
        snprintf(buf, n, "%s", model_dir);
        return buf;
    }
    /* TOPO.xml -> TOPO.model, beside it */
    const char *slash = strrchr(topo_path, '/'), *dot = strrchr(topo_path, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - topo_path) : strlen(topo_path);
    snprintf(buf, n, "%.*s.model", (int)(stem < 4000 ? stem : 4000), topo_path);
    return buf;
}

tc_status tc_cli_model_for(tc_ctx *ctx, const char *topo_path, const char *model_dir, const tc_topo *topo,
                           tc_coll coll, int chunks, tc_tune_model **out, char *why, size_t why_n)
{
    char found[4096];
    *out = NULL;
    why[0] = 0;
    if (model_dir) { /* given: it must serve */
        tc_tune_model *m = NULL;
        tc_status st = tc_tune_model_load(ctx, model_dir, coll, &m);
        if (!st && (st = tc_tune_model_check(ctx, m, topo, chunks))) {
            tc_tune_model_free(m);
            m = NULL;
        }
        *out = m;
        return st;
    }
    tc_cli_model_dir(topo_path, NULL, found, sizeof found);
    struct stat sb;
    if (stat(found, &sb) || !S_ISDIR(sb.st_mode)) {
        snprintf(why, why_n, "no model given, none beside the topology (%s)", found);
        return TC_OK;
    }
    first_err e = {.have = 0};
    tc_ctx sub = *ctx;
    sub.sink = keep_first;
    sub.sink_user = &e;
    tc_tune_model *m = NULL;
    tc_status st = tc_tune_model_load(&sub, found, coll, &m);
    if (st == TC_OK && tc_tune_model_check(&sub, m, topo, chunks) != TC_OK) {
        tc_warn(ctx, e.file[0] ? e.file : NULL, e.line, "ignoring this model: %s", e.msg);
        snprintf(why, why_n, "the model %s does not fit this topology", found);
        tc_tune_model_free(m);
        m = NULL;
        st = TC_OK;
    } else if (st == TC_ERR_UNSUPPORTED) {
        snprintf(why, why_n, "%s has no %s model", found, tc_coll_name(coll));
        st = TC_OK;
    } else if (st) /* a damaged model: as the loader said */
        tc_error(ctx, st, e.file[0] ? e.file : NULL, e.line, "%s", e.have ? e.msg : tc_status_str(st));
    *out = m;
    return st;
}
