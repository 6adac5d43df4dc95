/* tacosc TOPO.xml --collective C ...: the main job.  Read the topology and costs, unwind switches,
 * run a generator from the registry, check the schedule, write it (JSON or MSCCL XML), print a summary. */
#include "cli.h"
#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/compile.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/sim.h"
#include "tacos/photonic.h"
#include "tacos/sparse.h"
#include "tacos/synth.h"
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
    fputs("usage: tacosc TOPO.xml --collective C [options] [-o OUT]\n"
          "       tacosc topo KIND DIMS [--class C]... [-o FILE]   generate a topology\n"
          "       tacosc topo import DUMP [--nodes N] [-o FILE]   import NCCL/RCCL/nvidia-smi/rocm-smi topology\n"
          "       tacosc info TOPO.xml [--costs F] [--size S]      describe a topology\n"
          "       tacosc verify PLAN [--topo TOPO.xml] [--target T] check a plan (JSON, MSCCL XML, MSCCL++)\n"
          "       tacosc sim PLAN TOPO.xml [--size S] [--model ab|event] [--svg F]  price a plan\n"
          "       tacosc compare TOPO.xml --collective C --size S [--chunks K] [--svg F]  every algorithm\n"
          "       tacosc route TOPO.xml (--circuits F | --random N) [-o F]  route optical circuits\n"
          "       tacosc tune TOPO.xml... --collective C -o DATA.csv  measure or simulate the candidates\n"
          "       tacosc tune --train DATA.csv -o DIR              train the dispatcher's models\n"
          "       tacosc bundle TOPO.xml --collective C -o DIR      MSCCL XML (or MSCCL++) files by byte range\n"
          "  (each subcommand's --help lists its options)\n"
          "\n"
          "Compile a collective schedule for a topology.\n"
          "  -c, --collective C   allgather, reducescatter, allreduce, broadcast, reduce, gather, scatter,\n"
          "                       alltoall (also all-gather, reduce-scatter, all-reduce, all-to-all)\n"
          "      --costs FILE     alpha-beta cost file (man 5 tacosc-costs); default 0.5us, 50GB/s\n"
          "  -a, --algo A         generator (default tacos); see --list-algos; auto: the dispatcher picks the\n"
          "                       fastest for this size (by --model, else by simulating every candidate)\n"
          "      --model DIR      --algo auto: the model to choose by (tacosc tune --train; default: TOPO.model\n"
          "                       beside the topology file when it has a model of the collective)\n"
          "  -s, --size BYTES     collective size, K/M/G suffixes (powers of 1024; default 1M)\n"
          "  -k, --chunks K|auto  chunks per rank (default: auto with tacos, which synthesizes 1, 2, 3, 4, 6\n"
          "                       and 8 in parallel threads and keeps the fastest; else 1)\n"
          "      --root R         root rank of broadcast, reduce, gather, scatter (default 0)\n"
          "      --seed S         seed of every random choice (default 1); same seed, same bytes\n"
          "      --unwind D|auto  switch unwinding degree 1..N-1 (default: each switch's own, else 1; auto:\n"
          "                       tacos tries 1, 2, 4, ... with the chunk counts and keeps the fastest);\n"
          "                       the plan's link ids are those of the unwound topology\n"
          "      --switch-model M unwind, node or multicast for every switch (default: each switch's own\n"
          "                       model attribute, else unwind); node and multicast keep the switch as a\n"
          "                       store-and-forward vertex, the plan's transfers through it carry a route\n"
          "      --link-model M   tacos (default: a chunk holds a link alpha + beta * bytes) or te-ccl\n"
          "                       (TE-CCL's: it holds it beta * bytes and arrives alpha later, a switch-to-NPU\n"
          "                       hop adds alpha only, tiny alphas count as 0, switches multicast unless\n"
          "                       --switch-model): synthesizer, prediction and bound (man 1 tacosc, LINK MODELS)\n"
          "      --match M        tacos matching: best (default: earliest arrival, fewest alternative links,\n"
          "                       rarest chunk, maximum matching per NPU) or random (the paper's)\n"
          "      --trials T       tacos: best of T seeds, run in parallel threads (default 1); a note names\n"
          "                       the winning seed, the plan keeps --seed\n"
          "      --threads N      worker threads for --trials, --chunks auto, --unwind auto, the\n"
          "                       all-reduce phases and one large synthesis (default: cores; same plan)\n"
          "      --stats-only     tacos: synthesize without keeping transfers; print the summary only\n"
          "  -o, --output FILE    write the plan: .json (schedule IR) or .xml (MSCCL); '-' is stdout\n"
          "  -f, --format F       json, xml or mscclpp (an MSCCL++ execution plan, JSON; man 5 tacosc-mscclpp),\n"
          "                       overriding the extension\n"
          "MSCCL XML output:\n"
          "      --target T       nccl (default), rccl (plain step types only, at most 20 channels unless\n"
          "                       --max-channels) or tacos-run (no runtime parser limits; tacos-run only)\n"
          "      --max-channels N the most channels the target device offers (rccl: up to 128; see\n"
          "                       man 5 tacosc-msccl, LIMITS)\n"
          "      --proto P        Simple (default), LL or LL128 (MSCCL++: Simple or LL, LL within one server)\n"
          "      --channels N     channels to use (default: automatic)\n"
          "      --min-bytes B    smallest size the plan serves (default 0; MSCCL++ too)\n"
          "      --max-bytes B    largest size the plan serves (default 0 = no limit; MSCCL++ too)\n"
          "      --inplace        in-place variant (default; in-place alltoall goes through scratch)\n"
          "      --outofplace     out-of-place variant; with --inplace, one plan that serves both\n"
          "Photonic fabric (the topology's <photonic>; man 5 tacosc-topology):\n"
          "      --photonic       plan when to reconfigure the optical fabric and route its circuits\n"
          "                       (reconfiguration ILP, fiber and MZI routing); the plan records it\n"
          "      --fallback LIST  topologies the fabric may fall back to: ring, torus2d, torus3d, mesh2d,\n"
          "                       mesh3d, hypercube, torus:AxB[xC], mesh:AxB[xC] or none, comma-separated\n"
          "                       (default: each of the first six that fits the npu count and tx/rx)\n"
          "      --ilp-time S     seconds allowed to each ILP (default 10; the fiber ILP falls back to its\n"
          "                       LP relaxation, rounded, when the limit is reached)\n"
          "Sparse inputs (SpCCL; the plan records one format per transfer, JSON output only):\n"
          "      --sparsity S     the inputs' fraction of zeros, 0 to 1 (or --density D = 1 - S): decide per\n"
          "                       send dense, Pici or COO from the density forecast after reductions, and\n"
          "                       predict the time with compression, decompression and smaller messages\n"
          "      --sparse-format F pici (default), coo, or auto (per send the one the cost model prices lower)\n"
          "      --thresholds T   INTRA,INTER,ALLGATHER sparsities at or below which a send goes dense\n"
          "                       (default: the paper's, pici 0.6,0.5,0.1, coo 0.7,0.6,0.5)\n"
          "      --dtype T        element type the sizes assume, recorded in the plan: float32 (default),\n"
          "                       float64, int32, bfloat16, float16\n"
          "      --sparse-rule R  forecast (default: each send's own density) or previous (SpCCL: a\n"
          "                       reduction send judged by the density one step earlier; man tacosc)\n"
          "Other:\n"
          "  -q, --quiet          no summary\n"
          "  -v, --verbose        each stage (read, generate, check, lower, write) with its time on stderr\n"
          "      --list-algos     list the generators and the collectives each serves\n"
          "  -h, --help           this text\n"
          "  -V, --version        print the version\n"
          "Errors are reported as FILE:LINE: error: MESSAGE; the exit status is 1 (2 for bad usage).\n",
          f);
}

enum {
    O_COSTS = 256, O_ROOT, O_SEED, O_UNWIND, O_MATCH, O_TRIALS, O_THREADS, O_STATS, O_TARGET, O_PROTO,
    O_CHANNELS, O_MINB, O_MAXB, O_INPLACE, O_OUTOFPLACE, O_LIST, O_PHOTONIC, O_FALLBACK, O_ILPTIME, O_MAXCH,
    O_MODEL, O_DENSITY, O_SPARSITY, O_SPFMT, O_THRESH, O_SWMODEL, O_SPDTYPE, O_SPRULE, O_LINKMODEL
};

static tc_status parse_bytes(tc_ctx *ctx, const char *opt, const char *s, uint64_t *out)
{
    if (tc_parse_size(s, out))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--%s: '%s' is not a byte size (digits with an optional K, M, G or T suffix)", opt, s);
    return TC_OK;
}

/* tc_cli_parse_int without its message (the caller words it): nonzero when s is not in [lo, hi]. */
static int parse_int_quiet(const char *s, long lo, long hi, int *out)
{
    tc_ctx quiet;
    tc_ctx_init(&quiet);
    quiet.sink = NULL;
    return tc_cli_parse_int(&quiet, "", s, lo, hi, out) != TC_OK;
}

/* Options that would be silently ignored, or that contradict each other: usage errors naming them. */
static tc_status check_options(tc_ctx *ctx, const struct option *lo, const unsigned char *seen, tc_coll coll,
                               const char *algo, tc_format fmt, const char *out_path, const tc_msccl_lower_opts *m)
{
    static const int msccl_only[] = {O_TARGET, O_MAXCH, O_PROTO, O_CHANNELS, O_MINB, O_MAXB, O_INPLACE, O_OUTOFPLACE};
    /* --proto, --min-bytes and --max-bytes apply to MSCCL++ plans too */
    static const int tacos_only[] = {O_MATCH, O_TRIALS, O_THREADS, O_STATS};
    char name[64];
    if (seen[O_ROOT] && !tc_coll_rooted(coll))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--root applies to broadcast, reduce, gather and scatter, not %s", tc_coll_name(coll));
    if (seen['f'] && !out_path)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--format applies to the output file: add -o FILE");
    for (size_t i = 0; i < sizeof msccl_only / sizeof msccl_only[0]; i++)
        if (seen[msccl_only[i]] && fmt != TC_FMT_MSCCL &&
            !(fmt == TC_FMT_MSCCLPP && (msccl_only[i] == O_PROTO || msccl_only[i] == O_MINB || msccl_only[i] == O_MAXB)))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s applies to MSCCL XML output only (%s)",
                            tc_cli_opt_name(lo, msccl_only[i], name, sizeof name),
                            !out_path ? "no -o FILE.xml given"
                            : fmt == TC_FMT_MSCCLPP ? "the output is an MSCCL++ plan"
                                                    : "the output is JSON");
    for (size_t i = 0; i < sizeof tacos_only / sizeof tacos_only[0]; i++)
        if (seen[tacos_only[i]] && strcmp(algo, "tacos"))
            return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s applies to --algo tacos only, not %s",
                            tc_cli_opt_name(lo, tacos_only[i], name, sizeof name), algo);
    if (seen[O_MODEL] && strcmp(algo, "auto"))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--model applies to --algo auto only, not %s", algo);
    if ((seen[O_DENSITY] || seen[O_SPARSITY]) && seen[O_STATS])
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s needs the transfers: drop --stats-only",
                        seen[O_DENSITY] ? "--density" : "--sparsity");
    if ((seen[O_DENSITY] || seen[O_SPARSITY]) && seen[O_PHOTONIC])
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--photonic and %s do not combine: the photonic model prices dense messages only",
                        seen[O_DENSITY] ? "--density" : "--sparsity");
    if (m->max_bytes && m->min_bytes > m->max_bytes)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--min-bytes %llu is above --max-bytes %llu (the plan would serve no size)",
                        (unsigned long long)m->min_bytes, (unsigned long long)m->max_bytes);
    return TC_OK;
}

/* "4 chunks per rank" or "4 chunks per rank, unwind 2" for a search's pick. */
static const char *pick_str(const tc_synth_pick *p, int with_unwind, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%d chunk%s per rank", p->chunks, p->chunks == 1 ? "" : "s");
    if (with_unwind && p->unwind > 0 && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, ", unwind %d", p->unwind);
    return buf;
}

/* Summary line(s) on stdout; `how` says where s->time comes from; auto_line what --algo auto chose, with
 * its runner-up's time; search what --chunks auto / --unwind auto tried; dense the time of an annotated plan
 * with dense messages, wire its bytes on the wire over dense. */
static void summary(const tc_topo *topo, const tc_sched *s, const tc_bound *b, const char *how, const char *out_path,
                    const char *auto_line, double runner_up_time, const tc_synth_search *search, int search_unwind,
                    double dense, double wire)
{
    char tb[32], sb[32];
    printf("%s %s on %s: %d npus, %d links, %s\n", s->algo ? s->algo : "?", tc_coll_name(s->coll),
           topo->name ? topo->name : "?", topo->n_npus, topo->n_links,
           tc_fmt_bytes((double)s->size_bytes, sb, sizeof sb));
    if (auto_line && runner_up_time > 0 && s->time > 0)
        printf("  %s (%+.1f%%)\n", auto_line, 100 * (runner_up_time / s->time - 1));
    else if (auto_line)
        printf("  %s\n", auto_line);
    printf("  transfers %d, steps %d, chunks %d (%d per rank), chunk %llu B\n", s->n_xfers, s->n_steps,
           s->n_chunks, s->chunks_per_rank, (unsigned long long)s->chunk_bytes);
    if (search && search->candidates > 1) {
        char pb[64], rb[64], t2[32];
        printf("  auto: %s (%s %s", pick_str(&search->best, search_unwind, pb, sizeof pb),
               search->simulated ? "simulated" : "synthesized",
               tc_fmt_time(search->best.time, tb, sizeof tb));
        if (search->runner_up.chunks)
            printf("; runner-up %s, %s", pick_str(&search->runner_up, search_unwind, rb, sizeof rb),
                   tc_fmt_time(search->runner_up.time, t2, sizeof t2));
        printf("; %d of %d candidates synthesized in %.3f s)\n", search->synthesized, search->candidates,
               search->seconds);
    }
    printf("  predicted time %s (%s%s)\n", tc_fmt_time(s->time, tb, sizeof tb), how,
           s->link_model == TC_LINK_TECCL ? "; te-ccl link model" : "");
    if (s->sparse)
        tc_cli_print_sparse(s, wire, dense, s->time, "  ");
    if (s->photonic)
        tc_photonic_summary_write(s->photonic, stdout);
    else
        tc_cli_print_bound(b, s->sparse ? dense : s->time, s->sparse ? "  dense messages: " : "  ");
    if (out_path)
        printf("  wrote %s\n", out_path);
}

/* Issue 27: a JSON plan is written while tc_compile's checker still runs beside it (tc_compile_opts.early),
 * into the temporary file that is renamed into place only when the compile succeeds; what opening and
 * writing report is held and passed on after the compile, where it was said before, or dropped with the
 * file when the compile fails.  Outputs written through (stdout, a device, a pipe) wait for the compile as
 * before: nothing reaches them before the plan passed the checker. */
typedef struct early_out {
    const char *path;
    tc_ctx hold_ctx;     /* the context opening and writing report to: held */
    tc_diag_hold held;
    tc_cli_out o;
    int opened, written;
    tc_status st;        /* of opening, then of writing */
    double t0;
} early_out;

static void early_write(void *user, const tc_sched *s)
{
    early_out *e = user;
    struct stat sb;
    if (!strcmp(e->path, "-") || (stat(e->path, &sb) == 0 && !S_ISREG(sb.st_mode)))
        return; /* written through: opened and written after the check, as before */
    e->t0 = tc_now();
    if ((e->st = tc_cli_open_output(&e->hold_ctx, e->path, &e->o)))
        return;
    e->opened = 1;
    if (e->o.tmp) {
        e->written = 1;
        e->st = tc_emit_json_write(&e->o.ctx, s, e->o.f);
    }
}

/* After the compile: its held reports to ctx (and the output's from now on), or, when it failed, the file
 * removed and the reports dropped. */
static void early_finish(early_out *e, tc_ctx *ctx, int ok)
{
    if (ok) {
        tc_diag_hold_release(&e->held, ctx);
        if (e->opened)
            e->o.parent = ctx;
        return;
    }
    tc_diag_hold_release(&e->held, NULL);
    if (e->opened)
        tc_cli_close_output(&e->o, 0); /* to the holding context, whose reports are dropped */
    tc_diag_hold_release(&e->held, NULL);
    e->opened = e->written = 0;
}

/* --algo auto: the dispatcher's choice (*algo) and a line for the summary saying why and what the runner-up
 * would cost. */
static tc_status choose(tc_ctx *ctx, const char *topo_path, const char *model_dir, const tc_topo *topo, tc_coll coll,
                        const tc_gen_opts *g, const char **algo, const char **runner_up, char *line, size_t n,
                        double *runner_up_time)
{
    tc_tune_model *m = NULL;
    tc_tune_choice c;
    char why[4096], tb[32], rb[64] = "no runner-up";
    tc_status st = tc_cli_model_for(ctx, topo_path, model_dir, topo, coll, g->chunks > 0 ? g->chunks : 1, &m, why,
                                    sizeof why);
    if (!st)
        st = tc_tune_choose(ctx, topo, coll, g, m, &c);
    if (!st) {
        *algo = tc_algo_registry[c.algo].name;
        *runner_up = c.runner_up >= 0 && c.runner_up_time > 0 ? tc_algo_registry[c.runner_up].name : NULL;
        *runner_up_time = c.runner_up_time;
        if (c.runner_up >= 0 && c.runner_up_time > 0)
            snprintf(rb, sizeof rb, "runner-up %s would take %s", tc_algo_registry[c.runner_up].name,
                     tc_fmt_time(c.runner_up_time, tb, sizeof tb));
        else if (c.runner_up >= 0)
            snprintf(rb, sizeof rb, "runner-up %s (cannot serve this input)", tc_algo_registry[c.runner_up].name);
        if (m)
            snprintf(line, n, "auto: chose %s by the model %.1000s (held-out accuracy %.1f%%%s); %s", *algo, m->dir,
                     100 * m->test.accuracy, c.outside ? "; this size is outside the sizes it was trained on" : "",
                     rb);
        else
            snprintf(line, n, "auto: chose %s by simulating %d candidates (%d refused; %.1000s); %s", *algo,
                     c.n_candidates, c.n_refused, why, rb);
    }
    tc_tune_model_free(m);
    return st;
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
        {"photonic", no_argument, 0, O_PHOTONIC},  {"fallback", required_argument, 0, O_FALLBACK},
        {"ilp-time", required_argument, 0, O_ILPTIME}, {"model", required_argument, 0, O_MODEL},
        {"density", required_argument, 0, O_DENSITY}, {"sparsity", required_argument, 0, O_SPARSITY},
        {"sparse-format", required_argument, 0, O_SPFMT}, {"thresholds", required_argument, 0, O_THRESH},
        {"dtype", required_argument, 0, O_SPDTYPE}, {"sparse-rule", required_argument, 0, O_SPRULE},
        {"switch-model", required_argument, 0, O_SWMODEL}, {"link-model", required_argument, 0, O_LINKMODEL},
        {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_gen_opts g;
    tc_gen_opts_init(&g);
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    const char *coll_name = NULL, *costs_path = NULL, *algo = "tacos", *out_path = NULL, *fmt_name = NULL;
    const char *model_dir = NULL;
    char auto_line[2200] = "";
    double runner_up_time = 0;
    const char *runner_up = NULL; /* --algo auto: the fallback when the choice cannot be written */
    const char *sp_density = NULL, *sp_sparsity = NULL, *sp_format = NULL, *sp_thresholds = NULL, *sp_dtype = NULL,
               *sp_rule = NULL;
    int quiet = 0, opt, photonic = 0, sparse = 0;
    tc_sparse_opts spo;
    double dense_time = 0, wire = 1;
    tc_photonic_opts po;
    tc_photonic_opts_init(&po);
    int chunks_auto = 0, unwind_auto = 0, lmodel = 0;
    tc_status st = TC_OK;
    tc_topo *flat = NULL, *raw = NULL;
    tc_synth_search search;
    memset(&search, 0, sizeof search);
    tc_sched *s = NULL;
    tc_msccl *m = NULL;
    tc_bound bound = {0};
    tc_compile_result res;
    memset(&res, 0, sizeof res);
    const tc_topo *topo_run = NULL;

    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, NULL, argc, argv, "c:a:s:k:o:f:qvhV", longopts, seen, "qv")) != -1) {
        switch (opt) {
        case 'c': coll_name = optarg; break;
        case O_COSTS: costs_path = optarg; break;
        case 'a': algo = optarg; break;
        case 's':
            if (!(st = parse_bytes(&ctx, "size", optarg, &g.size)) && g.size == 0)
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size: must be at least 1 byte, got '%s'", optarg);
            break;
        case 'k':
            if (!strcmp(optarg, "auto"))
                chunks_auto = 1;
            else if (parse_int_quiet(optarg, 1, 1 << 20, &g.chunks))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--chunks: '%s' is not auto or an integer in [1, %d]",
                              optarg, 1 << 20);
            break;
        case O_ROOT: st = tc_cli_parse_int(&ctx, "root", optarg, 0, INT_MAX, &g.root); break;
        case O_SEED: st = tc_cli_parse_seed(&ctx, optarg, &ctx.seed); break;
        case O_UNWIND:
            if (!strcmp(optarg, "auto"))
                unwind_auto = 1;
            else if (parse_int_quiet(optarg, 1, INT_MAX, &g.unwind))
                st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--unwind: '%s' is not auto or an integer in [1, %d]",
                              optarg, INT_MAX);
            break;
        case O_SWMODEL: st = tc_cli_parse_switch_model(&ctx, optarg, &g.switch_model); break;
        case O_LINKMODEL: st = tc_cli_parse_link_model(&ctx, optarg, &lmodel); break;
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
        case O_TARGET: st = tc_cli_msccl_option(&ctx, "target", optarg, &lo); break;
        case O_MAXCH: st = tc_cli_msccl_option(&ctx, "max-channels", optarg, &lo); break;
        case O_PROTO: st = tc_cli_msccl_option(&ctx, "proto", optarg, &lo); break;
        case O_CHANNELS: st = tc_cli_parse_int(&ctx, "channels", optarg, 1, 1024, &lo.channels); break;
        case O_MINB: st = parse_bytes(&ctx, "min-bytes", optarg, &lo.min_bytes); break;
        case O_MAXB: st = parse_bytes(&ctx, "max-bytes", optarg, &lo.max_bytes); break;
        case O_INPLACE: /* seen[] tells */
        case O_OUTOFPLACE: break;
        case 'q': quiet = 1; break;
        case 'v': ctx.verbose++; break;
        case O_PHOTONIC: photonic = 1; break;
        case O_FALLBACK: po.fallback = optarg; break;
        case O_ILPTIME: st = tc_cli_parse_seconds(&ctx, "ilp-time", optarg, 86400, &po.ilp_time); break;
        case O_DENSITY: sp_density = optarg; break;
        case O_SPARSITY: sp_sparsity = optarg; break;
        case O_SPFMT: sp_format = optarg; break;
        case O_THRESH: sp_thresholds = optarg; break;
        case O_SPDTYPE: sp_dtype = optarg; break;
        case O_SPRULE: sp_rule = optarg; break;
        case O_MODEL: model_dir = optarg; break;
        case O_LIST:
            tc_algo_list(stdout);
            printf("%-10s %-40s %s\n", "auto", "every collective of a generator",
                   "the dispatcher: the fastest generator for the size (--model, else simulation)");
            return tc_cli_exit(tc_cli_stdout_close(&ctx));
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        case 'V': printf("tacosc %s\n", TC_VERSION); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
        if (st)
            return tc_cli_exit(st);
    }
    if (optind >= argc)
        return tc_cli_usage(&ctx, NULL, "no topology file given; usage: tacosc TOPO.xml --collective C [options]");
    lo.inplace = seen[O_INPLACE] || !seen[O_OUTOFPLACE]; /* both: one plan for both placements */
    lo.outofplace = seen[O_OUTOFPLACE];
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
    if (!tc_algo_find(algo) && strcmp(algo, "auto"))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "unknown algorithm '%s' (see --list-algos)",
                                    algo));
    tc_format fmt = TC_FMT_AUTO;
    if (fmt_name && tc_format_parse(fmt_name, &fmt))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--format: '%s' is not json, xml or mscclpp", fmt_name));
    if (out_path && fmt == TC_FMT_AUTO && (fmt = tc_format_from_path(out_path)) == TC_FMT_AUTO)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                    "cannot tell the format of '%s' from its extension: use .json or .xml, "
                                    "or --format",
                                    out_path));
    if (fmt == TC_FMT_SVG)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "SVG pictures come from 'tacosc sim --svg'"));
    if (g.stats_only && out_path)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--stats-only keeps no transfers: drop -o"));
    if ((st = check_options(&ctx, longopts, seen, coll, algo, fmt, out_path, &lo)) ||
        (st = tc_cli_sparse_opts(&ctx, sp_density, sp_sparsity, sp_format, sp_thresholds, &spo, &sparse)) ||
        (st = tc_cli_sparse_more(&ctx, sp_dtype, sp_rule, sparse, &spo)))
        return tc_cli_exit(st);
    if (!photonic && (po.fallback || po.ilp_time != TC_PHOTONIC_ILP_TIME))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--fallback and --ilp-time need --photonic"));
    if (photonic && g.stats_only)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--photonic needs the transfers: drop --stats-only"));
    if ((chunks_auto || unwind_auto) && strcmp(algo, "tacos") && strcmp(algo, "auto"))
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--%s auto applies to --algo tacos only, not %s",
                                    chunks_auto ? "chunks" : "unwind", algo));
    ctx.progress = isatty(2);

    /* -o never names a file this run reads: the topology, the costs, and the model files --algo auto reads */
    char mdir[4096], mjson[4200], msvm[4200];
    const int with_model = !strcmp(algo, "auto");
    if (with_model) {
        tc_cli_model_dir(topo_path, model_dir, mdir, sizeof mdir);
        tc_tune_model_path(mdir, coll, "json", mjson, sizeof mjson);
        tc_tune_model_path(mdir, coll, "svm", msvm, sizeof msvm);
    }
    const char *inputs[] = {topo_path, costs_path, with_model ? mjson : NULL, with_model ? msvm : NULL},
               *what[] = {"topology file", "cost file", "model file", "model file"};
    if ((st = tc_cli_check_output(&ctx, "-o", out_path, inputs, what, 4)))
        goto done;
    double t0 = tc_now();
    if (lmodel == 1 + TC_LINK_TECCL && !g.switch_model) /* TE-CCL's switches copy (issue 27): a quiet default */
        g.switch_model = -(1 + TC_SWITCH_MULTICAST);
    if (unwind_auto) { /* the search unwinds the switches itself */
        if ((st = tc_cli_load_raw(&ctx, topo_path, costs_path, g.switch_model, &raw)))
            goto done;
        tc_cli_warn_unwind(&ctx, topo_path, raw, -1);
        if ((st = tc_topo_unwind(&ctx, raw, 0, &flat)))
            goto done;
    } else if ((st = tc_cli_load_topo(&ctx, topo_path, costs_path, g.unwind, g.switch_model, &flat)))
        goto done;
    if (g.switch_model < 0) /* recorded in the plan where there were switches to make multicast */
        g.switch_model = (raw ? raw->n_switches : flat->n_swnodes) > 0 ? -g.switch_model : 0;
    if (lmodel > 0 && raw) /* the link model every pass prices with (tc_link_times) */
        raw->link_model = lmodel - 1;
    if (lmodel > 0)
        flat->link_model = lmodel - 1;
    if (ctx.verbose)
        tc_diag(&ctx, TC_DIAG_NOTE, topo_path, 0, 0, "read %s: %d npus, %d links in %.3f s",
                flat->name ? flat->name : "topology", flat->n_npus, flat->n_links, tc_now() - t0);
    if ((st = tc_cli_check_size(&ctx, g.size, coll, flat->n_npus, g.chunks)))
        goto done;
    tc_mscclpp_lower_opts mpo;
    tc_mscclpp_lower_opts_init(&mpo);
    mpo.packets = lo.proto && !strcmp(lo.proto, "LL");
    mpo.min_bytes = lo.min_bytes;
    mpo.max_bytes = lo.max_bytes;
    /* issue 25: on switches joined to switches, where tacos was refused and the default to an MSCCL target
     * wrote the fastest generator that can be written (below), tacos now competes with those generators
     * instead, whatever the output (tacos serves such trees less well than flat topologies) */
    const int tree_default = !seen['a'] && !photonic && !sparse && !g.stats_only && tc_topo_switch_tree(flat) &&
                             !(out_path && fmt == TC_FMT_MSCCLPP && mpo.packets && flat->n_nodes > 1); /* refused below */
    if (!strcmp(algo, "auto") || tree_default) {
        /* candidates priced as this compile writes them: without -k, tacos with its chunk search; to MSCCL
         * XML, the lowered program */
        tc_gen_opts ga = g;
        if (!seen['k'])
            ga.chunks = 0;
        ga.target = out_path && fmt == TC_FMT_MSCCL && !sparse && !photonic ? &lo : NULL; /* lowered for it */
        ga.mscclpp_target = out_path && fmt == TC_FMT_MSCCLPP && !sparse && !photonic ? &mpo : NULL;
        if ((st = choose(&ctx, topo_path, tree_default ? NULL : model_dir, flat, coll, &ga, &algo, &runner_up, auto_line,
                         sizeof auto_line, &runner_up_time)))
            goto done;
    }
    if (strcmp(algo, "tacos")) { /* --algo auto chose another generator */
        if (chunks_auto || unwind_auto)
            tc_diag(&ctx, TC_DIAG_NOTE, NULL, 0, 0, "--%s auto applies to tacos only; the dispatcher chose %s",
                    chunks_auto ? "chunks" : "unwind", algo);
        chunks_auto = unwind_auto = 0;
    } else if (!seen['k'])
        chunks_auto = 1; /* the default for tacos */
    /* the pipeline (include/tacos/compile.h): chunk choice, generation, check, passes, lowering, price */
    tc_compile_opts co;
    tc_compile_opts_init(&co);
    co.algo = algo;
    co.gen = g;
    co.chunks_auto = chunks_auto;
    co.unwind_auto = unwind_auto;
    co.raw = raw;
    co.sparse = sparse;
    if (sparse)
        co.sparse_opts = spo;
    co.photonic = photonic;
    co.photonic_opts = po;
    co.lower = out_path && fmt == TC_FMT_MSCCL ? &lo : NULL;
    co.mscclpp = out_path && fmt == TC_FMT_MSCCLPP ? &mpo : NULL;
    if (co.mscclpp && lo.proto && strcmp(lo.proto, "Simple") && strcmp(lo.proto, "LL")) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--proto %s: an MSCCL++ plan is Simple or LL", lo.proto);
        goto done;
    }
    if (co.mscclpp && mpo.packets && flat->n_nodes > 1) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                      "--proto LL: tacosc writes MSCCL++ LL packets over memory channels within one server; %s has "
                      "%d servers (use --proto Simple)",
                      flat->name ? flat->name : topo_path, flat->n_nodes);
        goto done;
    }
    if (co.mscclpp && (sparse || photonic)) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "%s: an MSCCL++ plan carries dense messages on fixed links only",
                      sparse ? "--density/--sparsity" : "--photonic");
        goto done;
    }
    co.no_bound = quiet;
    early_out eo;
    memset(&eo, 0, sizeof eo);
    if (out_path && fmt == TC_FMT_JSON && !runner_up && !photonic && !sparse && !g.stats_only) {
        eo.path = out_path;
        eo.hold_ctx = ctx;
        eo.hold_ctx.sink = tc_diag_hold_sink;
        eo.hold_ctx.sink_user = &eo.held;
        co.early = early_write;
        co.early_user = &eo;
    }
    t0 = tc_now();
    /* no --algo named and an MSCCL target: when tacos cannot be written for it even with the lowering's
     * repairs (a parser limit of 1,024 gpus, say), the next candidate rather than a refusal */
    const int may_choose = !seen['a'] && (co.lower || co.mscclpp) && !photonic && !sparse && !g.stats_only;
    co.silent = runner_up != NULL;
    co.quiet_errors = may_choose; /* reported below when no other generator can be written either */
    if ((st = tc_compile(&ctx, flat, coll, &co, &res)) && may_choose && st != TC_ERR_NOMEM) {
        tc_compile_diag first = res.diag;
        tc_gen_opts ga = g;
        if (!seen['k'])
            ga.chunks = 0;
        ga.target = co.lower; /* priced as written: only a generator whose program can be written wins */
        ga.mscclpp_target = co.mscclpp;
        tc_ctx qc = ctx;
        qc.sink = NULL;
        const char *pick = NULL, *ru = NULL;
        double rut = 0;
        if (choose(&qc, topo_path, NULL, flat, coll, &ga, &pick, &ru, auto_line, sizeof auto_line, &rut) ||
            !strcmp(pick, "tacos")) {
            auto_line[0] = 0;
            tc_error(&ctx, st, first.file[0] ? first.file : NULL, first.line, "%s", first.msg);
        } else {
            tc_warn(&ctx, NULL, 0,
                    "tacos cannot be written for %s (%s); writing %s, the fastest generator that can (as --algo "
                    "auto chooses; --algo names one)",
                    co.mscclpp ? "an MSCCL++ plan" : tc_msccl_target_name(lo.target), first.msg, pick);
            co.algo = algo = pick;
            co.silent = co.quiet_errors = 0;
            co.chunks_auto = co.unwind_auto = 0;
            co.gen.chunks = seen['k'] ? g.chunks : 0;
            runner_up_time = rut;
            st = tc_compile(&ctx, flat, coll, &co, &res);
        }
    } else if (st && runner_up && st != TC_ERR_NOMEM) {
        /* --algo auto: the runner-up instead of failing (issue 21: bundle and auto fall back) */
        tc_warn(&ctx, NULL, 0, "auto: %s cannot be written for this target (%s); falling back to the runner-up %s",
                algo, res.diag.msg, runner_up);
        co.algo = algo = runner_up;
        co.silent = 0;
        co.chunks_auto = !strcmp(algo, "tacos") && !seen['k'];
        co.unwind_auto = 0;
        snprintf(auto_line + strlen(auto_line), sizeof auto_line - strlen(auto_line), "; fell back to %s",
                 runner_up);
        runner_up_time = 0;
        st = tc_compile(&ctx, flat, coll, &co, &res);
    }
    if (co.early)
        early_finish(&eo, &ctx, st == TC_OK);
    if (st)
        goto done;
    s = res.sched;
    if (auto_line[0] && (!out_path || fmt == TC_FMT_MSCCL) && (lo.target == TC_TARGET_NCCL || lo.target == TC_TARGET_RCCL))
        tc_tune_vendor_note(&ctx, lo.target == TC_TARGET_RCCL, flat, s, NULL, 0); /* issue 24: NCCL's own may win */
    m = res.msccl;
    bound = res.bound;
    search = res.search;
    dense_time = res.dense_time;
    wire = res.wire;
    g.chunks = res.chunks;
    if (res.unwound)
        topo_run = res.unwound;
    if (out_path) {
        tc_cli_out o;
        tc_msccl_limits lim;
        tc_status vst = TC_OK;
        if (fmt == TC_FMT_MSCCL) {
            tc_msccl_limits_get(lo.target, &lim);
            if (lo.max_channels)
                lim.max_channels = lo.max_channels;
        }
        t0 = tc_now();
        if (eo.opened) { /* by early_write, while the checker ran (done with it: nothing reports through it) */
            o = eo.o;
            t0 = eo.t0;
        } else if ((st = eo.st) || (st = tc_cli_open_output(&ctx, out_path, &o)))
            goto done; /* eo.st: opening failed early (reported above) */
        /* MSCCL: the lowered program is verified while it is written, and kept only when correct; MSCCL++:
         * verified before it is written */
        if (fmt == TC_FMT_MSCCLPP) {
            vst = tc_mscclpp_verify(&ctx, res.mscclpp, s->size_bytes, "lowered MSCCL++ plan", NULL);
            st = vst ? TC_OK : tc_mscclpp_write(&o.ctx, res.mscclpp, o.f);
        } else if (eo.written)
            st = eo.st;
        else
            st = fmt == TC_FMT_MSCCL ? tc_msccl_write_checked(&o.ctx, m, &lim, "lowered MSCCL program", o.f, &vst)
                                     : tc_emit_json_write(&o.ctx, s, o.f);
        if (vst)
            tc_error(&ctx, TC_ERR_INTERNAL, NULL, 0, "the %s lowering produced an invalid program (a bug)",
                     fmt == TC_FMT_MSCCLPP ? "MSCCL++" : "MSCCL");
        tc_status cst = tc_cli_close_output(&o, st == TC_OK && vst == TC_OK);
        if (!st)
            st = vst;
        if (!st && ctx.verbose && fmt == TC_FMT_MSCCL)
            tc_diag(&ctx, TC_DIAG_NOTE, NULL, 0, 0,
                    "lowered to MSCCL XML: %d gpus, %d channels, %d chunks per loop; verified", m->ngpus,
                    m->nchannels, m->nchunksperloop);
        if (!st)
            st = cst;
        if (st)
            goto done;
        if (res.lost[0] && !quiet) { /* the prediction is the file's (tc_compile priced the program) */
            char ta[32], tp[32];
            tc_warn(&ctx, NULL, 0,
                    "the %s as tacosc sim prices it runs in %s, not the plan's %s (%+.1f%%): %s; the "
                    "summary gives the file's time", fmt == TC_FMT_MSCCLPP ? "MSCCL++ plan" : "MSCCL XML",
                    tc_fmt_time(s->time, ta, sizeof ta), tc_fmt_time(res.plan_time, tp, sizeof tp),
                    100 * (s->time / res.plan_time - 1), res.lost);
        }
        if (ctx.verbose)
            tc_diag(&ctx, TC_DIAG_NOTE, NULL, 0, 0, "wrote %s in %.3f s", out_path, tc_now() - t0);
    }
    if (!quiet && !(out_path && !strcmp(out_path, "-"))) /* the plan itself went to stdout */
        summary(topo_run ? topo_run : flat, s, &bound,
                photonic && m ? "event simulation of the MSCCL program written, as tacosc sim; the photonic plan's "
                                "time is in the breakdown below"
                : photonic     ? "photonic: each round on its circuits, reconfigurations included; the breakdown below"
                : g.stats_only ? "synthesizer's estimate: no transfers kept"
                : sparse       ? "event simulation of the plan with its sparse messages, as tacosc sim"
                : m            ? "event simulation of the MSCCL program written, as tacosc sim"
                : res.mscclpp  ? "event simulation of the MSCCL++ plan written, as tacosc sim"
                               : "event simulation of the plan, as tacosc sim",
                out_path, auto_line[0] ? auto_line : NULL, runner_up_time,
                chunks_auto || unwind_auto ? &search : NULL, unwind_auto, dense_time, wire);
    st = tc_cli_stdout_close(&ctx);
done:
    tc_compile_result_free(&res);
    tc_topo_free(flat);
    tc_topo_free(raw);
    return tc_cli_exit(st);
}
