/* tacosc sim PLAN TOPO: simulate a schedule on a topology (alpha-beta with congestion and dilation, or the
 * link-level event simulation) and print time, bandwidths, efficiency and link utilization. */
#include "cli.h"
#include "tacos/algo.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/photonic.h"
#include "tacos/sim.h"
#include "tacos/sparse.h"
#include "tacos/topo.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc sim PLAN TOPO.xml [options]\n"
          "       tacosc sim --algo A --collective C TOPO.xml [options]\n"
          "\n"
          "Simulate a schedule (JSON, MSCCL XML or an MSCCL++ plan) on a topology and report its time, algbw and busbw\n"
          "(nccl-tests conventions), its lower bound and efficiency, and per-link utilization.  A plan that\n"
          "tacosc verify refuses (it does not compute its collective) is refused, not priced.  The event\n"
          "model is tacosc's prediction: the time the compile summary prints and a plan's predicted_time.\n"
          "The bound is the largest of four lower bounds on any plan of the collective with the plan's\n"
          "chunks (man 1 tacosc, BOUNDS): per-NPU links, all links, cuts (servers, grid halves, the minimum\n"
          "cut) and the store-and-forward latency of the farthest pair; the line names the one that binds.\n"
          "Efficiency is bound / time (at most 1 in the event model).  The TACOS paper's V-A ideal (bandwidth\n"
          "over the smallest injection plus the diameter's alpha) is printed beside it for comparison with\n"
          "the paper; it is no bound where a cut is slower than injection.  The other model is run too: when\n"
          "the two differ by more than 3%, a line names the effect (dilation, queueing, congestion, or the\n"
          "round barriers of eq. 1).  A plan with sparse formats (tacosc --sparsity) is priced with its\n"
          "sparse messages: each moves its forecast bytes and pays compression and decompression at the codec\n"
          "throughputs of the cost file (SpCCL eq. 4-6; man 5 tacosc-costs); the dense time is printed beside.\n"
          "  --costs FILE      alpha-beta cost file (default 0.5us, 50GB/s)\n"
          "  --size BYTES      collective size (default: the plan's; an MSCCL XML or MSCCL++ plan has none: its maximum,\n"
          "                    else 1M, and the output says so); chunk bytes are rescaled\n"
          "  --model M         event (default): a chunk holds a link for alpha + beta * bytes, store and\n"
          "                    forward per hop, each link serves the chunks ready for it without idling, in\n"
          "                    the plan's order when several wait; ab: alpha-beta per step with congestion\n"
          "                    and dilation (photonic paper eq. 1): per round, the largest summed alpha of a\n"
          "                    route plus the largest beta * bytes on one link, rounds back to back\n"
          "  --svg FILE        write the topology coloured by link utilization, the heat map and the\n"
          "                    occupancy timeline as SVG\n"
          "  --links           print one line per link (busy time, utilization)\n"
          "  --unwind D        switch unwinding degree (default: the plan's, else each switch's own, else 1)\n"
          "  --switch-model M  unwind, node or multicast for every switch (default: the plan's, else each\n"
          "                    switch's own model; with --algo and te-ccl, multicast)\n"
          "  --link-model M    tacos or te-ccl: how a link prices a chunk in the event model and the bound\n"
          "                    (default: the plan's, else tacos).  tacos: it holds the link alpha + beta * bytes\n"
          "                    and arrives when it lets go; te-ccl (TE-CCL's solver): it holds the link\n"
          "                    beta * bytes and arrives alpha later, a switch-to-NPU hop adds alpha only, an\n"
          "                    alpha of at most a tenth of the fastest link's beta * bytes counts as 0\n"
          "                    (man 1 tacosc, LINK MODELS)\n"
          "  --algo A          generate the plan in memory with generator A instead of reading PLAN\n"
          "  --collective C    collective for --algo\n"
          "  --chunks K        chunks per rank for --algo (default 1)\n"
          "  --timing          print generation and simulation wall-clock seconds on stderr\n"
          "  -h, --help        this text\n",
          f);
}

enum {
    O_COSTS = 256, O_SIZE, O_MODEL, O_SVG, O_LINKS, O_UNWIND, O_ALGO, O_COLL, O_CHUNKS, O_TIMING, O_SWMODEL,
    O_LINKMODEL
};

static void gbps(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.3f GB/s", v / 1e9);
}

/* The photonic time recomputed from the plan's rounds and circuits on this topology (Alg. 2 per round),
 * beside the stored one; a difference is named (an edited plan, or costs other than the plan's). */
static tc_status sim_photonic(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo)
{
    tc_ph_breakdown total;
    tc_status st = tc_photonic_reprice(ctx, s, topo, NULL, NULL, &total);
    if (st)
        return st;
    char a[32], b[32];
    const double t = tc_ph_breakdown_sum(&total), stored = tc_ph_breakdown_sum(&s->photonic->total);
    printf("  photonic time recomputed %s (Alg. 2 per round on its circuits or G0)%s%s%s\n", tc_fmt_time(t, a, sizeof a),
           fabs(t - stored) > 1e-6 * (t + stored) ? "; the plan stores " : "",
           fabs(t - stored) > 1e-6 * (t + stored) ? tc_fmt_time(stored, b, sizeof b) : "",
           fabs(t - stored) > 1e-6 * (t + stored) ? " (edited, or other costs than the plan was made with)" : "");
    return TC_OK;
}

int tc_cli_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"costs", required_argument, 0, O_COSTS},   {"size", required_argument, 0, O_SIZE},
        {"model", required_argument, 0, O_MODEL},   {"svg", required_argument, 0, O_SVG},
        {"links", no_argument, 0, O_LINKS},         {"unwind", required_argument, 0, O_UNWIND},
        {"algo", required_argument, 0, O_ALGO},     {"collective", required_argument, 0, O_COLL},
        {"chunks", required_argument, 0, O_CHUNKS}, {"timing", no_argument, 0, O_TIMING},
        {"switch-model", required_argument, 0, O_SWMODEL},
        {"link-model", required_argument, 0, O_LINKMODEL},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *costs = NULL, *svg = NULL, *algo = NULL, *coll_s = NULL;
    int links = 0, unwind = 0, chunks = 1, timing = 0, swmodel = 0, lmodel = 0, opt;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    tc_status st = TC_OK;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "sim", argc, argv, "h", longopts, seen, NULL)) != -1) {
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
        case O_SWMODEL:
            if (tc_cli_parse_switch_model(&ctx, optarg, &swmodel))
                return 2;
            break;
        case O_LINKMODEL:
            if (tc_cli_parse_link_model(&ctx, optarg, &lmodel))
                return 2;
            break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
    }
    const int npos = argc - optind;
    if (algo && !coll_s)
        return tc_cli_usage(&ctx, "sim", "--algo needs --collective");
    if (!algo && (seen[O_COLL] || seen[O_CHUNKS]))
        return tc_cli_usage(&ctx, "sim", "%s applies to --algo only (a plan file has its own)",
                            seen[O_COLL] ? "--collective" : "--chunks");
    if (algo && npos != 1)
        return tc_cli_usage(&ctx, "sim", "with --algo, give one topology file (got %d arguments)", npos);
    if (!algo && npos != 2)
        return tc_cli_usage(&ctx, "sim", "give a plan file and a topology file (got %d argument%s)", npos,
                            npos == 1 ? "" : "s");
    const char *plan = algo ? NULL : argv[optind], *topo_path = argv[argc - 1];
    const char *inputs[] = {plan, topo_path, costs}, *what[] = {"plan file", "topology file", "cost file"};
    if ((st = tc_cli_check_output(&ctx, "--svg", svg, inputs, what, 3)))
        return tc_cli_exit(st);
    tc_topo *topo = NULL;
    tc_sched *s = NULL;
    tc_sim_result *r = NULL, *other = NULL, *traced = NULL, *dense = NULL;
    tc_sparse_cost *cost = NULL;
    tc_format fmt = TC_FMT_JSON;
    double t0 = tc_now(), t_gen = 0, t_sim = 0;
    if (plan) { /* the plan first: it knows the unwinding degree its link ids refer to */
        int refused = 0; /* a plan that does not compute its collective is not priced */
        if ((st = tc_sched_sniff(&ctx, plan, &fmt)) || (st = tc_sched_load_verified(&ctx, plan, &s, &refused))) {
            if (refused)
                tc_error(&ctx, st, plan, 0, "not a correct plan (see above; tacosc verify %s): nothing priced", plan);
            goto done;
        }
        if (!unwind)
            unwind = s->unwind;
        if (!swmodel)
            swmodel = s->switch_model;
        if (!lmodel) /* the model the plan was made with */
            lmodel = 1 + s->link_model;
    }
    if (algo && !swmodel && lmodel == 1 + TC_LINK_TECCL) /* TE-CCL's switches copy: a quiet default */
        swmodel = -(1 + TC_SWITCH_MULTICAST);
    if ((st = tc_cli_load_topo(&ctx, topo_path, costs, unwind, swmodel, &topo)))
        goto done;
    if (swmodel < 0)
        swmodel = topo->n_swnodes > 0 ? -swmodel : 0;
    topo->link_model = lmodel > 0 ? lmodel - 1 : TC_LINK_TACOS;
    if (algo) {
        tc_coll coll;
        if (tc_coll_parse(coll_s, &coll)) {
            st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--collective: unknown collective '%s'", coll_s);
            goto done;
        }
        tc_gen_opts go;
        tc_gen_opts_init(&go);
        go.chunks = chunks;
        go.unwind = unwind;
        go.switch_model = swmodel;
        if (so.size)
            go.size = so.size;
        if ((st = tc_cli_check_size(&ctx, go.size, coll, topo->n_npus, go.chunks)))
            goto done;
        t0 = tc_now();
        if ((st = tc_algo_run(&ctx, algo, topo, coll, &go, &s)))
            goto done;
        t_gen = tc_now() - t0;
    }
    if (svg)
        so.bins = 100;
    so.trace = 1; /* the critical path for the models' comparison, free when the event queue runs anyway */
    if (s->sparse) { /* its sparse messages priced (eq. 4-6) in every run below; one dense run beside */
        if ((st = tc_sparse_cost_create_sized(&ctx, topo, s, so.size, &cost))) /* exact messages at --size */
            goto done;
        tc_sim_opts d = so;
        d.bins = 0;
        d.no_bound = 1;
        d.trace = 0;
        if ((st = tc_sim_run(&ctx, s, topo, &d, &dense)))
            goto done;
        so.xfer_scale = cost->scale;
        so.xfer_pre = cost->pre;
        so.xfer_post = cost->post;
    }
    t0 = tc_now();
    if ((st = tc_sim_run(&ctx, s, topo, &so, &r)))
        goto done;
    t_sim = tc_now() - t0;
    char tb[32], sb[32], ab[32], bb[32];
    printf("sim %s on %s (model %s%s)\n", plan ? plan : (s->algo ? s->algo : "?"), topo->name ? topo->name : "?",
           tc_sim_model_name(r->model), topo->link_model == TC_LINK_TECCL ? ", links te-ccl" : "");
    printf("  %s %s, %d ranks, %d transfers, %d steps, chunk %.0f B\n", tc_coll_name(s->coll),
           tc_fmt_bytes((double)r->size, sb, sizeof sb), s->n_ranks, s->n_xfers, s->n_steps, r->chunk_bytes);
    if (fmt == TC_FMT_MSCCL && !so.size)
        printf("  size %s assumed: an MSCCL XML plan carries no size (%s); --size overrides\n", sb,
               s->size_bytes == (1u << 20) ? "1M, its maxBytes being 0" : "its maxBytes");
    if (fmt == TC_FMT_MSCCLPP && !so.size)
        printf("  size %s assumed: an MSCCL++ plan carries no size (%s); --size overrides\n", sb,
               s->size_bytes == (1u << 20) ? "1M, its max_message_size being unlimited" : "its max_message_size");
    gbps(r->algbw, ab, sizeof ab);
    gbps(r->busbw, bb, sizeof bb);
    printf("  time %s, algbw %s, busbw %s\n", tc_fmt_time(r->time, tb, sizeof tb), ab, bb);
    if (s->sparse)
        tc_cli_print_sparse(s, cost->wire, dense->time, r->time, "  ");
    tc_cli_print_bound(&r->bound, dense ? dense->time : r->time, dense ? "  dense messages: " : "  ");
    printf("  links %d, max utilization %.4f, mean utilization %.4f, max dilation %d hops\n", r->n_links,
           r->max_util, r->mean_util, r->max_dilation);
    if (r->model == TC_SIM_AB)
        printf("  rounds %d, max congestion %d chunks\n", r->n_rounds, r->max_congestion);
    /* the other model, and why the two differ when they do */
    tc_sim_opts oo = so;
    oo.model = r->model == TC_SIM_AB ? TC_SIM_EVENT : TC_SIM_AB;
    oo.bins = 0;
    oo.no_bound = 1;
    oo.trace = 1;
    if ((st = tc_sim_run(&ctx, s, topo, &oo, &other)))
        goto done;
    const tc_sim_result *ev = r->model == TC_SIM_EVENT ? r : other, *abr = r->model == TC_SIM_AB ? r : other;
    char eb[32], why[400];
    tc_sim_explain(ev, abr, why, sizeof why);
    if (strncmp(why, "the models agree", 16) && !ev->general) { /* they differ: trace the critical path */
        oo.model = TC_SIM_EVENT;
        oo.explain = 1;
        if ((st = tc_sim_run(&ctx, s, topo, &oo, &traced)))
            goto done;
        tc_sim_explain(traced, abr, why, sizeof why);
    }
    printf("  models: event %s, ab %s: %s\n", tc_fmt_time(ev->time, eb, sizeof eb),
           tc_fmt_time(abr->time, tb, sizeof tb), why);
    if (s->photonic) { /* the plan's own rounds on the optical fabric (tacosc --photonic) */
        printf("  photonic plan: its predicted time is its rounds on reconfigured circuits, below; the figures "
               "above are the plan on the fixed topology\n");
        if (so.size && so.size != s->size_bytes)
            printf("  (photonic breakdown below for the plan's size, %s)\n",
                   tc_fmt_bytes((double)s->size_bytes, sb, sizeof sb));
        tc_photonic_summary_write(s->photonic, stdout);
        if ((st = sim_photonic(&ctx, s, topo))) /* recomputed, not echoed (src/photonic/verify.c) */
            goto done;
    }
    if (links)
        for (int l = 0; l < r->n_links; l++)
            printf("  link %d %d->%d busy %s util %.4f\n", l, topo->links[l].src, topo->links[l].dst,
                   tc_fmt_time(r->link_busy[l], tb, sizeof tb), r->link_util[l]);
    if (timing)
        fprintf(stderr, "timing: generate %.3f s, simulate %.3f s\n", t_gen, t_sim);
    if (svg) {
        tc_cli_out o;
        if ((st = tc_cli_open_output(&ctx, svg, &o)))
            goto done;
        char title[256];
        snprintf(title, sizeof title, "%s %s on %s", s->algo ? s->algo : "plan", tc_coll_name(s->coll),
                 topo->name ? topo->name : "?");
        tc_sim_panel p = {title, r, s->algo};
        tc_status ws = s->photonic ? tc_photonic_plan_svg_write(&o.ctx, s, topo, title, o.f) /* issue 22 */
                                   : tc_sim_svg_write(&o.ctx, topo, &p, 1, o.f);
        st = tc_cli_close_output(&o, ws == TC_OK);
        if (!st)
            st = ws;
    }
    if (!st)
        st = tc_cli_stdout_close(&ctx);
done:
    tc_sparse_cost_free(cost);
    tc_sim_result_free(dense);
    tc_sim_result_free(traced);
    tc_sim_result_free(other);
    tc_sim_result_free(r);
    tc_sched_free(s);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
