/* tacosc bundle TOPO.xml --collective C -o DIR: the byte ranges and their winners (tc_tune_bundle_ranges,
 * the vendor's own ranges left uncovered), then the bundle written by the library (tc_tune_bundle_write,
 * src/tune/bundle_write.c: one verified MSCCL XML per range in DIR/msccl-algorithms/ and DIR/README). */
#include "cli.h"
#include "tacos/mscclpp.h"

#include <string.h>
#include "tacos/algo.h"
#include "tacos/msccl.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define ALGO_DIR TC_BUNDLE_ALGO_DIR

static void usage(FILE *f)
{
    fputs("usage: tacosc bundle TOPO.xml --collective C -o DIR [options]\n"
          "\n"
          "Write one MSCCL XML plan per byte range into DIR/" ALGO_DIR "/, the ranges (minBytes, maxBytes)\n"
          "covering every size from 0 up exactly once, each plan made by the algorithm that wins there, and\n"
          "DIR/README saying how to point MSCCL on NCCL or RCCL at it (man 7 tacosc-deploy).  The winner\n"
          "is the model's (--model, or TOPO.model beside the topology when it has one for C), else the\n"
          "fastest candidate in the event simulation; boundaries between sampled sizes are bisected.\n"
          "Every file is read back and verified for the target; a range whose algorithm cannot be written\n"
          "for the target gets the fastest candidate that can (a warning says so).  Files of an earlier\n"
          "bundle of the same collective, rank count and placement in DIR are replaced; any other file\n"
          "there that the runtime could not load, or that serves the same calls, is an error.\n"
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
          "  -f, --format F       msccl (default: MSCCL XML, as above) or mscclpp: MSCCL++ plans into\n"
          "                       DIR/" TC_BUNDLE_MSCCLPP_DIR "/, each with its range as min/max_message_size, and a README\n"
          "                       there (man 5 tacosc-mscclpp, BUNDLES); the MSCCL options do not apply\n"
          "  -o, --output DIR     the bundle directory (created)\n"
          "  -q, --quiet          no summary\n"
          "  -h, --help           this text\n",
          f);
}

enum { O_FORMAT = 'f', O_MODEL = 256, O_NOVENDOR, O_SIZES, O_ALGOS, O_COSTS, O_ROOT, O_UNWIND, O_SEED, O_TARGET, O_MAXCH, O_PROTO, O_INPLACE,
       O_OUTOFPLACE };


int tc_cli_bundle(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"model", required_argument, 0, O_MODEL},
        {"format", required_argument, 0, 'f'},
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
    int opt, quiet = 0, unwind = 0, mscclpp = 0;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    tc_status st = TC_OK;
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "bundle", argc, argv, "c:k:o:f:qh", longopts, seen, NULL)) != -1) {
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
        case 'f':
            if (!strcmp(optarg, "mscclpp"))
                mscclpp = 1;
            else if (strcmp(optarg, "msccl") && strcmp(optarg, "xml"))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--format: '%s' is not msccl or mscclpp", optarg);
            break;
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
    static const int msccl_only[] = {O_TARGET, O_MAXCH, O_PROTO, O_INPLACE, O_OUTOFPLACE, O_NOVENDOR};
    for (size_t i = 0; mscclpp && i < sizeof msccl_only / sizeof msccl_only[0]; i++)
        if (seen[msccl_only[i]]) {
            char name[64];
            return tc_cli_usage(&ctx, "bundle", "%s applies to MSCCL XML bundles, not -f mscclpp",
                                tc_cli_opt_name(longopts, msccl_only[i], name, sizeof name));
        }
    go.unwind = unwind;
    lo.inplace = seen[O_INPLACE] || !seen[O_OUTOFPLACE];
    lo.outofplace = seen[O_OUTOFPLACE];
    const char *topo_path = argv[optind];
    tc_topo *topo = NULL;
    tc_tune_model *model = NULL;
    uint64_t *sizes = NULL;
    int n_sizes = 0, nr = 0;
    tc_tune_range *r = NULL;
    char why[4096], how[4200];
    tc_msccl_limits lim; /* refused here before any work (tc_tune_bundle_write checks the same) */
    if ((st = tc_tune_bundle_limits(&ctx, &lo, &lim)))
        goto done;
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
    tc_mscclpp_lower_opts mpo;
    tc_mscclpp_lower_opts_init(&mpo);
    mpo.any_size = 1; /* a range's plan serves many sizes: its own is checked when it is written */
    go.target = mscclpp ? NULL : &lo; /* candidates priced as the files are written (issue 21) */
    go.mscclpp_target = mscclpp ? &mpo : NULL;
    if ((st = tc_tune_bundle_ranges(&ctx, topo, coll, &go, model, algos, sizes, n_sizes, &r, &nr)))
        goto done;
    int n_gaps = 0; /* issue 24: where NCCL's own algorithm is predicted to win, no file (tune/vendor.c) */
    if (!mscclpp && (lo.target == TC_TARGET_NCCL || lo.target == TC_TARGET_RCCL) && !seen[O_NOVENDOR] &&
        (st = tc_tune_vendor_uncover(&ctx, lo.target == TC_TARGET_RCCL, topo, coll, &go, sizes, n_sizes, &r, &nr,
                                     &n_gaps)))
        goto done;
    tc_tune_bundle_opts bo;
    tc_tune_bundle_opts_init(&bo);
    bo.coll = coll;
    bo.gen = go;
    bo.lower = lo;
    bo.algos = algos;
    bo.how = how;
    bo.mscclpp = mscclpp;
    if ((st = tc_tune_bundle_write(&ctx, out_dir, topo, &bo, r, nr)))
        goto done;
    if (!st && !quiet) {
        char tb[32];
        printf("bundle %s on %s (%d npus), target %s: %d range%s, chosen by %s\n", tc_coll_name(coll),
               topo->name ? topo->name : "?", topo->n_npus, mscclpp ? "MSCCL++" : tc_msccl_target_name(lo.target), nr,
               nr == 1 ? "" : "s", how);
        for (int k = 0; k < nr; k++) {
            char name[256], mx[32];
            tc_tune_bundle_file_name(name, sizeof name, coll, mscclpp ? NULL : &lo, topo->n_npus, &r[k]);
            snprintf(mx, sizeof mx, "%llu", (unsigned long long)r[k].max_bytes);
            printf("  %12llu .. %-12s %-10s %s at %llu B; %s/%s\n", (unsigned long long)r[k].min_bytes,
                   r[k].max_bytes ? mx : "no limit", tc_algo_registry[r[k].algo].name,
                   tc_fmt_time(r[k].time, tb, sizeof tb), (unsigned long long)r[k].plan_bytes,
                   mscclpp ? TC_BUNDLE_MSCCLPP_DIR : ALGO_DIR, name);
        }
        printf("  every file verified for %s; wrote %s/%sREADME\n", mscclpp ? "MSCCL++" : tc_msccl_target_name(lo.target),
               out_dir, mscclpp ? TC_BUNDLE_MSCCLPP_DIR "/" : "");
    }
    if (!st)
        st = tc_cli_stdout_close(&ctx);
done:
    free(r);
    free(sizes);
    tc_tune_model_free(model);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
