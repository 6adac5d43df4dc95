/* tacosc TOPO.xml --collective C ...: the main job.  Read the topology and costs, unwind switches,
 * run a generator from the registry, check the schedule, write it (JSON or MSCCL XML), print a summary. */
#include "cli.h"
#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/topo.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc TOPO.xml --collective C [options] [-o OUT]\n"
          "       tacosc topo KIND DIMS [--class C]... [-o FILE]   generate a topology\n"
          "       tacosc info TOPO.xml [--costs F] [--size S]      describe a topology\n"
          "       tacosc verify PLAN [--topo TOPO.xml] [--target T] check a plan (JSON or MSCCL XML)\n"
          "       tacosc sim PLAN TOPO.xml [--size S] [--model ab|event] [--svg F]  price a plan\n"
          "       tacosc compare TOPO.xml --collective C --size S [--chunks K] [--svg F]  every algorithm\n"
          "\n"
          "Compile a collective schedule for a topology.\n"
          "  -c, --collective C   allgather, reducescatter, allreduce, broadcast, reduce, gather, scatter,\n"
          "                       alltoall (also all-gather, reduce-scatter, all-reduce, all-to-all)\n"
          "      --costs FILE     alpha-beta cost file (man 5 tacosc-costs); default 0.5us, 50GB/s\n"
          "  -a, --algo A         generator (default tacos); see --list-algos\n"
          "  -s, --size BYTES     collective size, K/M/G suffixes (powers of 1024; default 1M)\n"
          "  -k, --chunks K       chunks per rank (default 1)\n"
          "      --root R         root rank of broadcast, reduce, gather, scatter (default 0)\n"
          "      --seed S         seed of every random choice (default 1); same seed, same bytes\n"
          "      --unwind D       switch unwinding degree 1..N-1 (default: each switch's own, else 1);\n"
          "                       the plan's link ids are those of the unwound topology\n"
          "      --match M        tacos matching: best (default: earliest arrival, fewest alternative links,\n"
          "                       rarest chunk, maximum matching per NPU) or random (the paper's)\n"
          "      --trials T       tacos: best of T seeds, run in parallel threads (default 1); a note names\n"
          "                       the winning seed, the plan keeps --seed\n"
          "      --threads N      worker threads for --trials and the all-reduce phases (default: cores)\n"
          "      --stats-only     tacos: synthesize without keeping transfers; print the summary only\n"
          "  -o, --output FILE    write the plan: .json (schedule IR) or .xml (MSCCL); '-' is stdout\n"
          "  -f, --format F       json or xml, overriding the extension\n"
          "MSCCL XML output:\n"
          "      --target T       nccl (default), rccl (plain step types only, at most 20 channels unless\n"
          "                       --max-channels) or tacos-run (no runtime parser limits; tacos-run only)\n"
          "      --max-channels N the most channels the target device offers (rccl: up to 128; see\n"
          "                       man 5 tacosc-msccl, LIMITS)\n"
          "      --proto P        Simple (default), LL or LL128\n"
          "      --channels N     channels to use (default: automatic)\n"
          "      --min-bytes B    smallest size the plan serves (default 0)\n"
          "      --max-bytes B    largest size the plan serves (default 0 = no limit)\n"
          "      --inplace        in-place variant (default; in-place alltoall goes through scratch)\n"
          "      --outofplace     out-of-place variant; with --inplace, one plan that serves both\n"
          "Other:\n"
          "  -q, --quiet          no summary\n"
          "  -v, --verbose        progress and details on stderr\n"
          "      --list-algos     list the generators and the collectives each serves\n"
          "  -h, --help           this text\n"
          "  -V, --version        print the version\n"
          "Errors are reported as FILE:LINE: error: MESSAGE; the exit status is 1 (2 for bad usage).\n",
          f);
}

enum {
    O_COSTS = 256, O_ROOT, O_SEED, O_UNWIND, O_MATCH, O_TRIALS, O_THREADS, O_STATS, O_TARGET, O_PROTO,
    O_CHANNELS, O_MINB, O_MAXB, O_INPLACE, O_OUTOFPLACE, O_LIST, O_MAXCH
};

static tc_status parse_bytes(tc_ctx *ctx, const char *opt, const char *s, uint64_t *out)
{
    if (tc_parse_size(s, out))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--%s: '%s' is not a byte size (digits with an optional K, M, G or T suffix)", opt, s);
    return TC_OK;
}

/* Summary line(s) on stdout. */
static void summary(const tc_topo *topo, const tc_sched *s, const char *out_path)
{
    char tb[32], ib[32], sb[32];
    tc_topo_info info;
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    quiet.sink = NULL;
    printf("%s %s on %s: %d npus, %d links, %s\n", s->algo ? s->algo : "?", tc_coll_name(s->coll),
           topo->name ? topo->name : "?", topo->n_npus, topo->n_links,
           tc_fmt_bytes((double)s->size_bytes, sb, sizeof sb));
    printf("  transfers %d, steps %d, chunks %d (%d per rank), chunk %llu B\n", s->n_xfers, s->n_steps,
           s->n_chunks, s->chunks_per_rank, (unsigned long long)s->chunk_bytes);
    if (tc_topo_info_get(&quiet, topo, &info) == TC_OK) {
        double ideal = tc_topo_ideal_time(&info, s->coll, s->size_bytes, s->n_ranks);
        if (ideal > 0 && s->time > 0)
            printf("  predicted time %s, ideal bound %s, ratio %.4f\n", tc_fmt_time(s->time, tb, sizeof tb),
                   tc_fmt_time(ideal, ib, sizeof ib), s->time / ideal);
        else
            printf("  predicted time %s\n", tc_fmt_time(s->time, tb, sizeof tb));
    } else
        printf("  predicted time %s\n", tc_fmt_time(s->time, tb, sizeof tb));
    if (out_path)
        printf("  wrote %s\n", out_path);
}

int tc_cli_compile(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"costs", required_argument, 0, O_COSTS},
        {"algo", required_argument, 0, 'a'},       {"size", required_argument, 0, 's'},
        {"chunks", required_argument, 0, 'k'},     {"root", required_argument, 0, O_ROOT},
        {"seed", required_argument, 0, O_SEED},    {"unwind", required_argument, 0, O_UNWIND},
        {"match", required_argument, 0, O_MATCH},  {"trials", required_argument, 0, O_TRIALS},
        {"threads", required_argument, 0, O_THREADS}, {"stats-only", no_argument, 0, O_STATS},
        {"output", required_argument, 0, 'o'},     {"format", required_argument, 0, 'f'},
        {"target", required_argument, 0, O_TARGET}, {"proto", required_argument, 0, O_PROTO},
        {"channels", required_argument, 0, O_CHANNELS}, {"min-bytes", required_argument, 0, O_MINB},
        {"max-bytes", required_argument, 0, O_MAXB}, {"inplace", no_argument, 0, O_INPLACE},
        {"outofplace", no_argument, 0, O_OUTOFPLACE}, {"quiet", no_argument, 0, 'q'},
        {"max-channels", required_argument, 0, O_MAXCH},
        {"verbose", no_argument, 0, 'v'},          {"list-algos", no_argument, 0, O_LIST},
        {"help", no_argument, 0, 'h'},             {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_gen_opts g;
    tc_gen_opts_init(&g);
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    const char *coll_name = NULL, *costs_path = NULL, *algo = "tacos", *out_path = NULL, *fmt_name = NULL;
    int quiet = 0, opt, seen_ip = 0, seen_oop = 0;
    tc_status st = TC_OK;
    tc_topo *flat = NULL;
    tc_sched *s = NULL;
    tc_msccl *m = NULL;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:a:s:k:o:f:qvhV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': coll_name = optarg; break;
        case O_COSTS: costs_path = optarg; break;
        case 'a': algo = optarg; break;
        case 's': st = parse_bytes(&ctx, "size", optarg, &g.size); break;
        case 'k': st = tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &g.chunks); break;
        case O_ROOT: st = tc_cli_parse_int(&ctx, "root", optarg, 0, INT_MAX, &g.root); break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-')
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--seed: '%s' is not a non-negative integer", optarg);
            ctx.seed = v;
            break;
        }
        case O_UNWIND: st = tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &g.unwind); break;
        case O_MATCH:
            if (!strcmp(optarg, "best"))
                g.match = TC_MATCH_BEST;
            else if (!strcmp(optarg, "random"))
                g.match = TC_MATCH_RANDOM;
            else
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--match: '%s' is not best or random", optarg);
            break;
        case O_TRIALS: st = tc_cli_parse_int(&ctx, "trials", optarg, 1, 4096, &g.trials); break;
        case O_THREADS: st = tc_cli_parse_int(&ctx, "threads", optarg, 1, 1024, &g.threads); break;
        case O_STATS: g.stats_only = 1; break;
        case 'o': out_path = optarg; break;
        case 'f': fmt_name = optarg; break;
        case O_TARGET:
            if (tc_msccl_target_parse(optarg, &lo.target) || lo.target == TC_TARGET_COMMON)
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--target: '%s' is not nccl, rccl or tacos-run", optarg);
            break;
        case O_MAXCH: st = tc_cli_parse_int(&ctx, "max-channels", optarg, 1, 128, &lo.max_channels); break;
        case O_PROTO:
            if (strcmp(optarg, "Simple") && strcmp(optarg, "LL") && strcmp(optarg, "LL128"))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--proto: '%s' is not Simple, LL or LL128", optarg);
            lo.proto = optarg;
            break;
        case O_CHANNELS: st = tc_cli_parse_int(&ctx, "channels", optarg, 1, 1024, &lo.channels); break;
        case O_MINB: st = parse_bytes(&ctx, "min-bytes", optarg, &lo.min_bytes); break;
        case O_MAXB: st = parse_bytes(&ctx, "max-bytes", optarg, &lo.max_bytes); break;
        case O_INPLACE: seen_ip = 1; break;
        case O_OUTOFPLACE: seen_oop = 1; break;
        case 'q': quiet = 1; break;
        case 'v': ctx.verbose++; break;
        case O_LIST: tc_algo_list(stdout); return 0;
        case 'h': usage(stdout); return 0;
        case 'V': printf("tacosc %s\n", TC_VERSION); return 0;
        default: usage(stderr); return 2;
        }
        if (st)
            return tc_cli_exit(st);
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    lo.inplace = seen_ip || !seen_oop; /* both: one plan for both placements */
    lo.outofplace = seen_oop;
    if (optind < argc - 1) {
        tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "unexpected argument '%s' (one topology file expected)",
                 argv[optind + 1]);
        return 2;
    }
    const char *topo_path = argv[optind];
    tc_coll coll;
    if (!coll_name)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--collective is required"));
    if (tc_coll_parse(coll_name, &coll))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                    "unknown collective '%s' (allgather, reducescatter, allreduce, broadcast, "
                                    "reduce, gather, scatter, alltoall)",
                                    coll_name));
    if (!tc_algo_find(algo))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "unknown algorithm '%s' (see --list-algos)",
                                    algo));
    tc_format fmt = TC_FMT_AUTO;
    if (fmt_name && tc_format_parse(fmt_name, &fmt))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--format: '%s' is not json or xml", fmt_name));
    if (out_path && fmt == TC_FMT_AUTO && (fmt = tc_format_from_path(out_path)) == TC_FMT_AUTO)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                    "cannot tell the format of '%s' from its extension: use .json or .xml, "
                                    "or --format",
                                    out_path));
    if (fmt == TC_FMT_SVG)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "SVG pictures come from 'tacosc sim --svg'"));
    if (g.stats_only && out_path)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--stats-only keeps no transfers: drop -o"));
    ctx.progress = isatty(2);

    if ((st = tc_cli_load_topo(&ctx, topo_path, costs_path, g.unwind, &flat)))
        goto done;
    if ((st = tc_algo_run(&ctx, algo, flat, coll, &g, &s)))
        goto done;
    if (!g.stats_only) {
        tc_check_opts co = {.topo = flat};
        if ((st = tc_sched_check(&ctx, s, &co, "generated schedule"))) {
            tc_error(&ctx, TC_ERR_INTERNAL, NULL, 0, "%s produced an incorrect schedule (a bug in tacosc)", algo);
            st = TC_ERR_INTERNAL;
            goto done;
        }
    }
    if (out_path) {
        FILE *f = NULL;
        char *tmp = NULL;
        tc_msccl_limits lim;
        tc_status vst = TC_OK;
        if (fmt == TC_FMT_MSCCL) {
            if ((st = tc_msccl_lower(&ctx, s, &lo, &m)))
                goto done;
            tc_msccl_limits_get(lo.target, &lim);
            if (lo.max_channels)
                lim.max_channels = lo.max_channels;
        }
        if ((st = tc_cli_open_output(&ctx, out_path, &f, &tmp)))
            goto done;
        /* MSCCL: the lowered program is verified while it is written, and kept only when correct */
        st = fmt == TC_FMT_MSCCL ? tc_msccl_write_checked(&ctx, m, &lim, "lowered MSCCL program", f, &vst)
                                 : tc_emit_json_write(&ctx, s, f);
        if (vst)
            tc_error(&ctx, TC_ERR_INTERNAL, NULL, 0, "the MSCCL lowering produced an invalid program (a bug)");
        tc_status cst = tc_cli_close_output(&ctx, out_path, f, tmp, st == TC_OK && vst == TC_OK);
        if (!st)
            st = vst;
        if (!st)
            st = cst;
        if (st)
            goto done;
    }
    if (!quiet && !(out_path && !strcmp(out_path, "-"))) /* the plan itself went to stdout */
        summary(flat, s, out_path);
done:
    tc_msccl_free(m);
    tc_sched_free(s);
    tc_topo_free(flat);
    return tc_cli_exit(st);
}
