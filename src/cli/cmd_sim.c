/* tacosc sim PLAN TOPO: simulate a schedule on a topology (alpha-beta with congestion and dilation, or the
 * link-level event simulation) and print time, bandwidths, efficiency and link utilization. */
#include "cli.h"
#include "tacos/algo.h"
#include "tacos/emit.h"
#include "tacos/photonic.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc sim PLAN TOPO.xml [options]\n"
          "       tacosc sim --algo A --collective C TOPO.xml [options]\n"
          "\n"
          "Simulate a schedule (JSON or MSCCL XML) on a topology and report its time, algbw and busbw\n"
          "(nccl-tests conventions), efficiency against the ideal bound and per-link utilization.\n"
          "Efficiency is ideal / time, the ideal being the TACOS paper's estimate (the bandwidth term over\n"
          "the smallest injection bandwidth plus the diameter's latency; tacosc info prints it).  It is\n"
          "not a strict lower bound: a plan that overlaps latency with transfers can reach slightly above\n"
          "1, and where a cut is slower than injection (servers joined by slower links) 1 is out of reach.\n"
          "  --costs FILE      alpha-beta cost file (default 0.5us, 50GB/s)\n"
          "  --size BYTES      collective size (default: the plan's); chunk bytes are rescaled\n"
          "  --model M         event (default): link-level FIFO simulation, store and forward per chunk;\n"
          "                    ab: alpha-beta per step with congestion and dilation (photonic eq. 1)\n"
          "  --svg FILE        write the link-utilization heat map and occupancy timeline as SVG\n"
          "  --links           print one line per link (busy time, utilization)\n"
          "  --unwind D        switch unwinding degree (default: each switch's own, else 1)\n"
          "  --algo A          generate the plan in memory with generator A instead of reading PLAN\n"
          "  --collective C    collective for --algo\n"
          "  --chunks K        chunks per rank for --algo (default 1)\n"
          "  --timing          print generation and simulation wall-clock seconds on stderr\n"
          "  -h, --help        this text\n",
          f);
}

enum { O_COSTS = 256, O_SIZE, O_MODEL, O_SVG, O_LINKS, O_UNWIND, O_ALGO, O_COLL, O_CHUNKS, O_TIMING };

static void gbps(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.3f GB/s", v / 1e9);
}

int tc_cli_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"costs", required_argument, 0, O_COSTS},   {"size", required_argument, 0, O_SIZE},
        {"model", required_argument, 0, O_MODEL},   {"svg", required_argument, 0, O_SVG},
        {"links", no_argument, 0, O_LINKS},         {"unwind", required_argument, 0, O_UNWIND},
        {"algo", required_argument, 0, O_ALGO},     {"collective", required_argument, 0, O_COLL},
        {"chunks", required_argument, 0, O_CHUNKS}, {"timing", no_argument, 0, O_TIMING},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *costs = NULL, *svg = NULL, *algo = NULL, *coll_s = NULL;
    int links = 0, unwind = 0, chunks = 1, timing = 0, opt;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    tc_status st = TC_OK;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_COSTS: costs = optarg; break;
        case O_SIZE:
            if (tc_parse_size(optarg, &so.size) || so.size == 0) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size: '%s' is not a positive byte size", optarg);
                return 2;
            }
            break;
        case O_MODEL:
            if (tc_sim_model_parse(optarg, &so.model)) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--model: '%s' is not ab or event", optarg);
                return 2;
            }
            break;
        case O_SVG: svg = optarg; break;
        case O_LINKS: links = 1; break;
        case O_UNWIND:
            if (tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &unwind))
                return 2;
            break;
        case O_ALGO: algo = optarg; break;
        case O_COLL: coll_s = optarg; break;
        case O_CHUNKS:
            if (tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &chunks))
                return 2;
            break;
        case O_TIMING: timing = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    const int npos = argc - optind;
    if ((algo && npos != 1) || (!algo && npos != 2) || (algo && !coll_s)) {
        usage(stderr);
        return 2;
    }
    const char *plan = algo ? NULL : argv[optind], *topo_path = argv[argc - 1];
    tc_topo *topo = NULL;
    tc_sched *s = NULL;
    tc_sim_result *r = NULL;
    double t0 = tc_now(), t_gen = 0, t_sim = 0;
    if ((st = tc_cli_load_topo(&ctx, topo_path, costs, unwind, &topo)))
        goto done;
    if (algo) {
        tc_coll coll;
        if (tc_coll_parse(coll_s, &coll)) {
            st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--collective: unknown collective '%s'", coll_s);
            goto done;
        }
        tc_gen_opts go;
        tc_gen_opts_init(&go);
        go.chunks = chunks;
        if (so.size)
            go.size = so.size;
        t0 = tc_now();
        if ((st = tc_algo_run(&ctx, algo, topo, coll, &go, &s)))
            goto done;
        t_gen = tc_now() - t0;
    } else if ((st = tc_sched_load(&ctx, plan, &s)))
        goto done;
    if (svg)
        so.bins = 100;
    t0 = tc_now();
    if ((st = tc_sim_run(&ctx, s, topo, &so, &r)))
        goto done;
    t_sim = tc_now() - t0;
    char tb[32], ib[32], sb[32], ab[32], bb[32];
    printf("sim %s on %s (model %s)\n", plan ? plan : (s->algo ? s->algo : "?"), topo->name ? topo->name : "?",
           tc_sim_model_name(r->model));
    printf("  %s %s, %d ranks, %d transfers, %d steps, chunk %.0f B\n", tc_coll_name(s->coll),
           tc_fmt_bytes((double)r->size, sb, sizeof sb), s->n_ranks, s->n_xfers, s->n_steps, r->chunk_bytes);
    gbps(r->algbw, ab, sizeof ab);
    gbps(r->busbw, bb, sizeof bb);
    printf("  time %s, algbw %s, busbw %s\n", tc_fmt_time(r->time, tb, sizeof tb), ab, bb);
    if (r->ideal > 0)
        printf("  ideal %s, efficiency %.4f\n", tc_fmt_time(r->ideal, ib, sizeof ib), r->efficiency);
    printf("  links %d, max utilization %.4f, mean utilization %.4f, max dilation %d hops\n", r->n_links,
           r->max_util, r->mean_util, r->max_dilation);
    if (r->model == TC_SIM_AB)
        printf("  rounds %d, max congestion %d chunks\n", r->n_rounds, r->max_congestion);
    if (s->photonic) { /* the plan's own rounds on the optical fabric (tacosc --photonic) */
        if (so.size && so.size != s->size_bytes)
            printf("  (photonic breakdown below for the plan's size, %s)\n",
                   tc_fmt_bytes((double)s->size_bytes, sb, sizeof sb));
        tc_photonic_summary_write(s->photonic, stdout);
    }
    if (links)
        for (int l = 0; l < r->n_links; l++)
            printf("  link %d %d->%d busy %s util %.4f\n", l, topo->links[l].src, topo->links[l].dst,
                   tc_fmt_time(r->link_busy[l], tb, sizeof tb), r->link_util[l]);
    if (timing)
        fprintf(stderr, "timing: generate %.3f s, simulate %.3f s\n", t_gen, t_sim);
    if (svg) {
        FILE *f;
        char *tmp;
        if ((st = tc_cli_open_output(&ctx, svg, &f, &tmp)))
            goto done;
        char title[256];
        snprintf(title, sizeof title, "%s %s on %s", s->algo ? s->algo : "plan", tc_coll_name(s->coll),
                 topo->name ? topo->name : "?");
        tc_sim_panel p = {title, r};
        tc_status ws = tc_sim_svg_write(&ctx, topo, &p, 1, f);
        st = tc_cli_close_output(&ctx, svg, f, tmp, ws == TC_OK);
        if (!st)
            st = ws;
    }
done:
    tc_sim_result_free(r);
    tc_sched_free(s);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
