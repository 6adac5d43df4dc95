/* tacosc compare TOPO --collective C --size S: every registry generator that serves the collective, each
 * schedule checked and simulated, printed best first (the TACOS paper's Fig. 15 as a table).  Generators
 * that refuse the input are listed last with their reason. */
#include "cli.h"
#include "tacos/compile.h"
#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/sim.h"
#include "tacos/sparse.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc compare TOPO.xml --collective C [options]\n"
          "\n"
          "Generate the collective with every applicable algorithm (tacos included), check each schedule,\n"
          "simulate it and print time, algbw, busbw and efficiency, best first.  Algorithms that cannot\n"
          "serve the input are listed last with the reason in the note column.  Efficiency is each plan's\n"
          "lower bound (for its chunks) over its time; the header gives the smallest of those bounds, which\n"
          "holds for every plan listed, and which bound it is (see tacosc sim --help).  The V-A column is\n"
          "the time over the TACOS paper's ideal, for comparison with the paper.\n"
          "  -c, --collective C  the collective\n"
          "  -s, --size BYTES    collective size (default 1M)\n"
          "  -k, --chunks K|auto chunks per rank; auto (the default) prices each plan as tacosc compiles it:\n"
          "                      tacos with its --chunks auto search, the others with 1\n"
          "      --costs FILE    alpha-beta cost file (default 0.5us, 50GB/s)\n"
          "      --model M       event (default) or ab (see tacosc sim --help)\n"
          "      --svg FILE      a bar chart of every algorithm's time (one scale, bound marked), and per\n"
          "                      algorithm the topology coloured by link utilization, the heat map and the\n"
          "                      occupancy timeline on a common time axis\n"
          "      --unwind D      switch unwinding degree\n"
          "      --sparsity S    inputs with this fraction of zeros (or --density D = 1 - S): each plan is\n"
          "                      also annotated by the sparse pass and priced with its sparse messages (as\n"
          "                      tacosc --sparsity); columns: sparse time, speedup over dense, bytes on the wire\n"
          "                      over dense; best sparse time first\n"
          "      --sparse-format F, --thresholds T  as for tacosc (see tacosc --help)\n"
          "      --switch-model M  unwind, node or multicast for every switch (default: each switch's own)\n"
          "  -f, --format F      json (default: each plan's own simulated time) or xml: each plan lowered to\n"
          "                      MSCCL XML for --target and priced as that program (the time tacosc prints\n"
          "                      and tacosc sim gives for the file tacosc -o plan.xml writes)\n"
          "      --target T      nccl (default), rccl or tacos-run; implies --format xml\n"
          "      --max-channels N  the target device's channel limit, as for tacosc\n"
          "  -h, --help          this text\n",
          f);
}

enum { O_COSTS = 256, O_MODEL, O_SVG, O_UNWIND, O_DENSITY, O_SPARSITY, O_SPFMT, O_THRESH, O_SWMODEL, O_TARGET, O_MAXCH };

/* With --sparsity: each priced plan generated again, annotated by the sparse pass and priced with its
 * sparse messages (tacosc --sparsity): *time and *wire (bytes on the wire over dense). */
static tc_status price_sparse(const tc_topo *topo, tc_coll coll, const tc_gen_opts *go, const tc_sim_opts *so,
                              const tc_sparse_opts *spo, uint64_t seed, int algo, double *time, double *wire,
                              char *note, size_t n)
{
    /* the compile pipeline with its sparse pass, silent: the chunks the dense row was priced with */
    tc_ctx sub;
    tc_ctx_init(&sub);
    sub.seed = seed;
    tc_sim_opts o = *so;
    o.bins = 0;
    o.no_bound = 1;
    tc_compile_opts co;
    tc_compile_opts_init(&co);
    co.algo = tc_algo_registry[algo].name;
    co.gen = *go;
    co.sim = &o;
    co.no_bound = 1;
    co.silent = 1;
    co.sparse = 1;
    co.sparse_opts = *spo;
    tc_compile_result cr;
    tc_status st = tc_compile(&sub, topo, coll, &co, &cr);
    if (st == TC_OK) {
        *time = cr.sched->time;
        *wire = cr.wire;
    } else {
        char where[TC_TUNE_NOTE_MAX];
        snprintf(note, n, "sparse: %s", tc_diag_note(cr.diag.file, cr.diag.line, cr.diag.msg, where, sizeof where));
    }
    tc_compile_result_free(&cr);
    return st;
}

int tc_cli_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"size", required_argument, 0, 's'},
        {"chunks", required_argument, 0, 'k'},     {"costs", required_argument, 0, O_COSTS},
        {"model", required_argument, 0, O_MODEL},  {"svg", required_argument, 0, O_SVG},
        {"unwind", required_argument, 0, O_UNWIND}, {"help", no_argument, 0, 'h'},
        {"density", required_argument, 0, O_DENSITY}, {"sparsity", required_argument, 0, O_SPARSITY},
        {"sparse-format", required_argument, 0, O_SPFMT}, {"thresholds", required_argument, 0, O_THRESH},
        {"switch-model", required_argument, 0, O_SWMODEL}, {"format", required_argument, 0, 'f'},
        {"target", required_argument, 0, O_TARGET}, {"max-channels", required_argument, 0, O_MAXCH}, {0, 0, 0, 0},
    };
    const char *sp_density = NULL, *sp_sparsity = NULL, *sp_format = NULL, *sp_thresholds = NULL;
    tc_sparse_opts spo;
    int sparse = 0;
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *costs = NULL, *svg = NULL, *coll_s = NULL;
    int unwind = 0, swmodel = 0, opt;
    tc_gen_opts go;
    tc_gen_opts_init(&go);
    go.chunks = 0; /* auto: each row is the plan compile would write */
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    tc_format fmt = TC_FMT_JSON;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "compare", argc, argv, "c:s:k:f:h", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case 'c': coll_s = optarg; break;
        case 's':
            if (tc_parse_size(optarg, &go.size) || go.size == 0) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size: '%s' is not a positive byte size", optarg);
                return 2;
            }
            break;
        case 'k':
            if (!strcmp(optarg, "auto"))
                go.chunks = 0; /* as compile: the search for tacos, 1 for the others */
            else if (tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &go.chunks))
                return 2;
            break;
        case O_COSTS: costs = optarg; break;
        case O_MODEL:
            if (tc_sim_model_parse(optarg, &so.model)) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--model: '%s' is not ab or event", optarg);
                return 2;
            }
            break;
        case O_SVG: svg = optarg; break;
        case O_UNWIND:
            if (tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &unwind))
                return 2;
            break;
        case O_DENSITY: sp_density = optarg; break;
        case O_SPARSITY: sp_sparsity = optarg; break;
        case O_SPFMT: sp_format = optarg; break;
        case O_THRESH: sp_thresholds = optarg; break;
        case O_SWMODEL:
            if (tc_cli_parse_switch_model(&ctx, optarg, &swmodel))
                return 2;
            break;
        case 'f':
            if (tc_format_parse(optarg, &fmt) || fmt == TC_FMT_SVG) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--format: '%s' is not json or xml", optarg);
                return 2;
            }
            break;
        case O_TARGET:
        case O_MAXCH:
            if (tc_cli_msccl_option(&ctx, opt == O_TARGET ? "target" : "max-channels", optarg, &lo))
                return 2;
            break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
    }
    if (tc_cli_sparse_opts(&ctx, sp_density, sp_sparsity, sp_format, sp_thresholds, &spo, &sparse))
        return 2;
    if ((seen[O_TARGET] || seen[O_MAXCH]) && seen['f'] && fmt != TC_FMT_MSCCL)
        return tc_cli_usage(&ctx, "compare", "%s applies to --format xml only",
                            seen[O_TARGET] ? "--target" : "--max-channels");
    if (seen[O_TARGET] || seen[O_MAXCH])
        fmt = TC_FMT_MSCCL;
    if (sparse && fmt == TC_FMT_MSCCL)
        return tc_cli_usage(&ctx, "compare", "--%s and --format xml do not combine: sparse formats are written "
                            "to JSON plans only", sp_density ? "density" : "sparsity");
    /* an MSCCL target: each row is the lowered program, priced as compile prices the file it writes */
    go.target = fmt == TC_FMT_MSCCL ? &lo : NULL;
    if (optind >= argc)
        return tc_cli_usage(&ctx, "compare", "no topology file given");
    if (optind < argc - 1)
        return tc_cli_usage(&ctx, "compare", "unexpected argument '%s' (one topology file expected)",
                            argv[optind + 1]);
    if (!coll_s)
        return tc_cli_usage(&ctx, "compare", "--collective is required");
    tc_coll coll;
    if (tc_coll_parse(coll_s, &coll)) {
        tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--collective: unknown collective '%s'", coll_s);
        return 2;
    }
    if (svg)
        so.bins = 50;
    tc_topo *topo = NULL;
    tc_tune_cand *rows = NULL;
    int n = 0, *ord = NULL;
    double *sp_time = NULL, *sp_wire = NULL;
    const char *inputs[] = {argv[optind], costs}, *what[] = {"topology file", "cost file"};
    tc_status st = tc_cli_check_output(&ctx, "--svg", svg, inputs, what, 2);
    if (!st)
        st = tc_cli_load_topo(&ctx, argv[optind], costs, unwind, swmodel, &topo);
    if (!st)
        st = tc_cli_check_size(&ctx, go.size, coll, topo->n_npus, go.chunks > 0 ? go.chunks : 1);
    go.unwind = unwind;
    go.switch_model = swmodel;
    if (!st) /* every generator of the collective, priced best first (tune's candidates) */
        st = tc_tune_eval(&ctx, topo, coll, &go, &so, 0, 1, &rows, &n);
    if (st)
        goto done;
    ord = malloc(((size_t)n + 1) * sizeof *ord);
    sp_time = calloc((size_t)n + 1, sizeof *sp_time);
    sp_wire = calloc((size_t)n + 1, sizeof *sp_wire);
    if (!ord || !sp_time || !sp_wire) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ord[i] = i;
        if (sparse && rows[i].res) {
            tc_status ps = price_sparse(topo, coll, &go, &so, &spo, ctx.seed, rows[i].algo, &sp_time[i], &sp_wire[i],
                                        rows[i].note, sizeof rows[i].note);
            if (ps) { /* a plan the sparse pass cannot take is listed as failed */
                rows[i].status = ps;
                tc_sim_result_free(rows[i].res);
                rows[i].res = NULL;
            }
        }
        /* a plan the target's limits cannot hold is a row like a refusal, not a failure of the run */
        if (rows[i].status != TC_OK && rows[i].status != TC_ERR_UNSUPPORTED &&
            !(go.target && rows[i].status == TC_ERR_LIMIT))
            st = rows[i].status;
    }
    if (sparse) /* best sparse time first: insertion sort of the (few) rows, priced ones first */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0; j--) {
                const int a = ord[j - 1], b = ord[j];
                const int later = !rows[a].res ? rows[b].res != NULL : rows[b].res && sp_time[b] < sp_time[a];
                if (!later)
                    break;
                ord[j - 1] = b;
                ord[j] = a;
            }
    char sb[32], tb[32], db[160];
    printf("compare %s %s on %s (%d npus, %d links), model %s%s%s\n", tc_coll_name(coll),
           tc_fmt_bytes((double)go.size, sb, sizeof sb), topo->name ? topo->name : "?", topo->n_npus,
           topo->n_links, tc_sim_model_name(so.model), go.target ? ", MSCCL XML for " : "",
           go.target ? tc_msccl_target_name(lo.target) : "");
    const tc_bound *least = NULL; /* the smallest bound of the plans: it holds for all of them */
    for (int i = 0; i < n; i++)
        if (rows[i].res && rows[i].res->bound.time > 0 && (!least || rows[i].res->bound.time < least->time))
            least = &rows[i].res->bound;
    if (least) {
        printf("bound %s (%s)", tc_fmt_time(least->time, tb, sizeof tb), tc_bound_describe(least, db, sizeof db));
        if (least->ideal > 0)
            printf(", TACOS paper ideal (V-A) %s", tc_fmt_time(least->ideal, tb, sizeof tb));
        printf("\n");
    }
    if (sparse)
        printf("sparse: input density %g (sparsity %g), %s; dense and sparse messages of the same plans\n", spo.density,
               1 - spo.density, tc_sparse_fmt_name(spo.format));
    printf("%-10s %14s %12s %12s %10s %8s", "algorithm", "time", "algbw GB/s", "busbw GB/s", "efficiency", "V-A");
    if (sparse)
        printf(" %14s %8s %6s", "sparse", "speedup", "wire");
    printf("  %s\n", "note");
    for (int k = 0; k < n; k++) {
        const int i = ord[k];
        const tc_tune_cand *w = &rows[i];
        const char *name = tc_algo_registry[w->algo].name;
        if (w->res)
            printf("%-10s %14s %12.3f %12.3f %10.4f %8.4f", name, tc_fmt_time(w->res->time, tb, sizeof tb),
                   w->res->algbw / 1e9, w->res->busbw / 1e9, w->res->efficiency,
                   w->res->ideal > 0 ? w->res->time / w->res->ideal : 0.0);
        else
            printf("%-10s %14s %12s %12s %10s %8s", name, "-", "-", "-", "-", "-");
        if (sparse && w->res)
            printf(" %14s %7.2fx %5.1f%%", tc_fmt_time(sp_time[i], db, sizeof db), w->res->time / sp_time[i],
                   100 * sp_wire[i]);
        else if (sparse)
            printf(" %14s %8s %6s", "-", "-", "-");
        if (w->res)
            printf("  \n");
        else
            printf("  %s: %s\n",
                   w->status == TC_ERR_UNSUPPORTED                ? "unsupported"
                   : go.target && w->status == TC_ERR_LIMIT ? "over the target's limits"
                                                                  : "failed",
                   w->note);
    }
    if (svg) {
        tc_sim_panel *panels = calloc((size_t)n + 1, sizeof *panels);
        char(*titles)[128] = calloc((size_t)n + 1, sizeof *titles);
        int np = 0;
        if (!panels || !titles) {
            free(panels);
            free(titles);
            st = TC_ERR_NOMEM;
            goto done;
        }
        for (int k = 0; k < n; k++) {
            const int i = ord[k];
            if (rows[i].res) {
                const char *name = tc_algo_registry[rows[i].algo].name;
                snprintf(titles[np], sizeof titles[np], "%s %s on %s", name, tc_coll_name(coll),
                         topo->name ? topo->name : "?");
                panels[np].title = titles[np];
                panels[np].res = rows[i].res;
                panels[np].name = name;
                np++;
            }
        }
        tc_cli_out o;
        tc_status os = tc_cli_open_output(&ctx, svg, &o);
        if (!os) {
            tc_status ws = tc_sim_svg_write(&o.ctx, topo, panels, np, o.f);
            os = tc_cli_close_output(&o, ws == TC_OK);
            if (!os)
                os = ws;
        }
        if (os)
            st = os;
        free(panels);
        free(titles);
    }
    tc_status os = tc_cli_stdout_close(&ctx);
    if (!st)
        st = os;
done:
    free(ord);
    free(sp_time);
    free(sp_wire);
    tc_tune_cands_free(rows, n);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
