/* tacosc compare TOPO --collective C --size S: every registry generator that serves the collective, each
 * schedule checked and simulated, printed best first (the TACOS paper's Fig. 15 as a table).  Generators
 * that refuse the input are listed last with their reason. */
#include "cli.h"
#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* in cmd_sim.c */

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
          "  -k, --chunks K      chunks per rank (default 1)\n"
          "      --costs FILE    alpha-beta cost file (default 0.5us, 50GB/s)\n"
          "      --model M       event (default) or ab (see tacosc sim --help)\n"
          "      --svg FILE      one heat map and timeline per algorithm\n"
          "      --unwind D      switch unwinding degree\n"
          "      --switch-model M  unwind, node or multicast for every switch (default: each switch's own)\n"
          "  -h, --help          this text\n",
          f);
}

typedef struct row {
    const char *name;
    tc_sim_result *r;
    char note[200];
} row;

static int cmp_row(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    if (!a->r != !b->r)
        return a->r ? -1 : 1;
    if (a->r && a->r->time != b->r->time)
        return a->r->time < b->r->time ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The first diagnostic's message, without its "file:line: error: " prefix. */
static void first_message(const tc_buf *b, char *out, size_t n)
{
    const char *s = b->data ? b->data : "";
    const char *e = strstr(s, "error: ");
    s = e ? e + 7 : s;
    size_t len = strcspn(s, "\n");
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = 0;
}

enum { O_COSTS = 256, O_MODEL, O_SVG, O_UNWIND, O_SWMODEL };

int tc_cli_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"collective", required_argument, 0, 'c'}, {"size", required_argument, 0, 's'},
        {"chunks", required_argument, 0, 'k'},     {"costs", required_argument, 0, O_COSTS},
        {"model", required_argument, 0, O_MODEL},  {"svg", required_argument, 0, O_SVG},
        {"unwind", required_argument, 0, O_UNWIND}, {"help", no_argument, 0, 'h'},
        {"switch-model", required_argument, 0, O_SWMODEL}, {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *costs = NULL, *svg = NULL, *coll_s = NULL;
    int unwind = 0, swmodel = 0, opt;
    tc_gen_opts go;
    tc_gen_opts_init(&go);
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "compare", argc, argv, "c:s:k:h", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case 'c': coll_s = optarg; break;
        case 's':
            if (tc_parse_size(optarg, &go.size) || go.size == 0) {
                tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size: '%s' is not a positive byte size", optarg);
                return 2;
            }
            break;
        case 'k':
            if (tc_cli_parse_int(&ctx, "chunks", optarg, 1, 1 << 20, &go.chunks))
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
        case O_SWMODEL:
            if (tc_cli_parse_switch_model(&ctx, optarg, &swmodel))
                return 2;
            break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
    }
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
        so.bins = 100;
    tc_topo *topo = NULL;
    row *rows = NULL;
    int n = 0;
    const char *inputs[] = {argv[optind], costs}, *what[] = {"topology file", "cost file"};
    tc_status st = tc_cli_check_output(&ctx, "--svg", svg, inputs, what, 2);
    if (!st)
        st = tc_cli_load_topo(&ctx, argv[optind], costs, unwind, swmodel, &topo);
    if (!st)
        st = tc_cli_check_size(&ctx, go.size, coll, topo->n_npus, go.chunks);
    go.unwind = unwind;
    go.switch_model = swmodel;
    if (st)
        goto done;
    int cap = 0;
    for (const tc_algo_entry *e = tc_algo_registry; e->name; e++)
        cap++;
    rows = calloc((size_t)cap + 1, sizeof *rows);
    if (!rows) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (const tc_algo_entry *e = tc_algo_registry; e->name; e++) {
        if (!(e->colls & TC_COLL_BIT(coll)))
            continue;
        row *w = &rows[n++];
        w->name = e->name;
        tc_buf diag = {0};
        tc_ctx sub;
        tc_ctx_init(&sub);
        sub.seed = ctx.seed;
        sub.sink = tc_diag_buffer;
        sub.sink_user = &diag;
        tc_sched *s = NULL;
        tc_status gs = tc_algo_run(&sub, e->name, topo, coll, &go, &s);
        if (gs == TC_OK) {
            tc_check_opts co = {.topo = topo};
            gs = tc_sched_check(&sub, s, &co, e->name);
            if (gs == TC_OK)
                gs = tc_sim_run(&sub, s, topo, &so, &w->r);
        }
        if (gs != TC_OK) {
            char msg[160];
            first_message(&diag, msg, sizeof msg);
            snprintf(w->note, sizeof w->note, "%s: %s", gs == TC_ERR_UNSUPPORTED ? "unsupported" : "failed",
                     msg[0] ? msg : tc_status_str(gs));
            if (gs != TC_ERR_UNSUPPORTED)
                st = gs;
        }
        tc_sched_free(s);
        tc_buf_free(&diag);
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    char sb[32], tb[32], db[160];
    printf("compare %s %s on %s (%d npus, %d links), model %s\n", tc_coll_name(coll),
           tc_fmt_bytes((double)go.size, sb, sizeof sb), topo->name ? topo->name : "?", topo->n_npus,
           topo->n_links, tc_sim_model_name(so.model));
    const tc_bound *least = NULL; /* the smallest bound of the plans: it holds for all of them */
    for (int i = 0; i < n; i++)
        if (rows[i].r && rows[i].r->bound.time > 0 && (!least || rows[i].r->bound.time < least->time))
            least = &rows[i].r->bound;
    if (least) {
        printf("bound %s (%s)", tc_fmt_time(least->time, tb, sizeof tb), tc_bound_describe(least, db, sizeof db));
        if (least->ideal > 0)
            printf(", TACOS paper ideal (V-A) %s", tc_fmt_time(least->ideal, tb, sizeof tb));
        printf("\n");
    }
    printf("%-10s %14s %12s %12s %10s %8s  %s\n", "algorithm", "time", "algbw GB/s", "busbw GB/s", "efficiency",
           "V-A", "note");
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        if (w->r)
            printf("%-10s %14s %12.3f %12.3f %10.4f %8.4f  %s\n", w->name, tc_fmt_time(w->r->time, tb, sizeof tb),
                   w->r->algbw / 1e9, w->r->busbw / 1e9, w->r->efficiency,
                   w->r->ideal > 0 ? w->r->time / w->r->ideal : 0.0, w->note);
        else
            printf("%-10s %14s %12s %12s %10s %8s  %s\n", w->name, "-", "-", "-", "-", "-", w->note);
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
        for (int i = 0; i < n; i++)
            if (rows[i].r) {
                snprintf(titles[np], sizeof titles[np], "%s %s on %s", rows[i].name, tc_coll_name(coll),
                         topo->name ? topo->name : "?");
                panels[np].title = titles[np];
                panels[np].res = rows[i].r;
                np++;
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
    for (int i = 0; i < n; i++)
        tc_sim_result_free(rows[i].r);
    free(rows);
    tc_topo_free(topo);
    return tc_cli_exit(st);
}
