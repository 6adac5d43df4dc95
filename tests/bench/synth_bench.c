/* synth_bench: time the TACOS synthesizer alone (no file output) on one topology.
 *
 *   synth_bench [options] TOPO
 *     TOPO: ring:N | biring:N | fc:N | mesh:AxB[xC] | torus:AxB[xC] | FILE.xml
 *     -c COLL     collective (default allgather)
 *     -s BYTES    size (default 1G)
 *     -k K        chunks per rank (default 1)
 *     -r REPS     repetitions; the median wall time is printed (default 1)
 *     -m MODE     best | random
 *     -t T        trials;   -j N threads;   -S  stats only;   -C  run tc_sched_check;   -x SEED
 *     -u D        unwinding degree
 *     -O          all-reduce without overlap (all-gather after the whole reduce-scatter)
 *     -A          --chunks auto: the candidate search first (its time counts), then the choice (unless the
 *                 search's first candidate won: its plan is the choice, as compile takes it)
 *     -M MODEL    unwind | node | multicast for every switch of a topology file
 *     -R ROOT     root of a rooted collective
 *     -X          the event simulation's time of the plan (not with -S) instead of the synthesizer's
 *     -K FILE     cost file for a topology file
 * Prints one line: name coll npus wall_s(median) cpu_s(median) peak_rss_MiB time_s ideal_s ratio bound_s
 * ratio xfers K  (wall and cpu time of the search and tc_synth_tacos; the peak RSS is the process's; ideal:
 * the TACOS paper's V-A figure; bound: tc_sim_bound, the lower bound of the event model, for the chunks
 * used; K: chunks per rank)
 */
#include "tacos/check.h"
#include "tacos/sim.h"
#include "tacos/synth.h"
#include "tacos/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int parse_dims(const char *s, int *d)
{
    int n = 0;
    while (*s && n < 3) {
        d[n++] = atoi(s);
        s = strchr(s, 'x');
        if (!s)
            break;
        s++;
    }
    return n;
}

static void link2(tc_topo *t, int a, int b)
{
    tc_topo_add_link(t, a, b, 0, -1, -1, 0);
    tc_topo_add_link(t, b, a, 0, -1, -1, 0);
}

/* mesh or torus over up to 3 dimensions; dimension-order indices */
static tc_topo *grid(const char *spec, int wrap)
{
    int d[3] = {1, 1, 1};
    int nd = parse_dims(spec, d);
    int n = d[0] * d[1] * d[2];
    tc_topo *t;
    if (tc_topo_create(spec, n, &t))
        return NULL;
    for (int v = 0; v < n; v++) {
        int c[3] = {v % d[0], (v / d[0]) % d[1], v / (d[0] * d[1])};
        for (int k = 0; k < nd; k++) {
            int stride = k == 0 ? 1 : k == 1 ? d[0] : d[0] * d[1];
            if (c[k] + 1 < d[k])
                link2(t, v, v + stride);
            else if (wrap && d[k] > 2)
                link2(t, v, v - c[k] * stride);
        }
    }
    return t;
}

static tc_topo *build(tc_ctx *ctx, const char *spec)
{
    tc_topo *t = NULL;
    if (!strncmp(spec, "ring:", 5) || !strncmp(spec, "biring:", 7)) {
        int bi = spec[0] == 'b', n = atoi(strchr(spec, ':') + 1);
        if (tc_topo_create(spec, n, &t))
            return NULL;
        for (int v = 0; v < n; v++) {
            tc_topo_add_link(t, v, (v + 1) % n, 0, -1, -1, 0);
            if (bi)
                tc_topo_add_link(t, (v + 1) % n, v, 0, -1, -1, 0);
        }
    } else if (!strncmp(spec, "fc:", 3)) {
        int n = atoi(spec + 3);
        if (tc_topo_create(spec, n, &t))
            return NULL;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b)
                    tc_topo_add_link(t, a, b, 0, -1, -1, 0);
    } else if (!strncmp(spec, "mesh:", 5)) {
        t = grid(spec + 5, 0);
    } else if (!strncmp(spec, "torus:", 6)) {
        t = grid(spec + 6, 1);
    } else {
        if (tc_topo_read(ctx, spec, &t))
            return NULL;
        return t;
    }
    if (t)
        tc_topo_index(t);
    return t;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    ctx.progress = 1;
    tc_gen_opts o;
    tc_gen_opts_init(&o);
    o.size = 1ull << 30;
    tc_coll coll = TC_COLL_ALLGATHER;
    int reps = 1, check = 0, opt, autoc = 0, simulate = 0, model = -1;
    tc_link_model lmodel = TC_LINK_TACOS;
    const char *costs = NULL;
    while ((opt = getopt(argc, argv, "c:s:k:r:m:t:j:SCx:u:OAM:R:XK:L:")) != -1) {
        switch (opt) {
        case 'c':
            if (tc_coll_parse(optarg, &coll)) {
                fprintf(stderr, "synth_bench: unknown collective %s\n", optarg);
                return 2;
            }
            break;
        case 's': tc_parse_size(optarg, &o.size); break;
        case 'k': o.chunks = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'm': o.match = !strcmp(optarg, "random") ? TC_MATCH_RANDOM : TC_MATCH_BEST; break;
        case 't': o.trials = atoi(optarg); break;
        case 'j': o.threads = atoi(optarg); break;
        case 'S': o.stats_only = 1; break;
        case 'C': check = 1; break;
        case 'x': ctx.seed = strtoull(optarg, NULL, 10); break;
        case 'u': o.unwind = atoi(optarg); break;
        case 'O': o.no_overlap = 1; break;
        case 'A': autoc = 1; break;
        case 'M': {
            tc_switch_model m;
            if (tc_switch_model_parse(optarg, &m)) {
                fprintf(stderr, "synth_bench: unknown switch model %s\n", optarg);
                return 2;
            }
            model = (int)m;
            break;
        }
        case 'R': o.root = atoi(optarg); break;
        case 'X': simulate = 1; break;
        case 'K': costs = optarg; break;
        case 'L': /* link model (tacosc --link-model): te-ccl makes switches multicast unless -M */
            if (tc_link_model_parse(optarg, &lmodel)) {
                fprintf(stderr, "synth_bench: unknown link model %s\n", optarg);
                return 2;
            }
            break;
        default: return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: synth_bench [-c coll] [-s size] [-k K] [-r reps] [-m best|random] [-t T] "
                        "[-S] [-C] [-A] [-M model] [-L tacos|te-ccl] [-R root] [-X] TOPO\n");
        return 2;
    }
    tc_topo *t = build(&ctx, argv[optind]), *u = NULL;
    if (!t) {
        fprintf(stderr, "synth_bench: cannot build %s\n", argv[optind]);
        return 1;
    }
    if (costs) {
        tc_costs *cf = NULL;
        if (tc_costs_read(&ctx, costs, &cf) || tc_topo_apply_costs(&ctx, t, cf))
            return 1;
        tc_costs_free(cf);
    }
    if (model < 0 && lmodel == TC_LINK_TECCL)
        model = TC_SWITCH_MULTICAST;
    if (model >= 0)
        tc_topo_set_switch_model(t, (tc_switch_model)model);
    t->link_model = lmodel;
    if (tc_topo_unwind(&ctx, t, o.unwind, &u)) /* the topology the plan's links refer to */
        return 1;
    double *wall = calloc((size_t)reps, sizeof *wall), *cpu = calloc((size_t)reps, sizeof *cpu);
    tc_sched *s = NULL;
    for (int r = 0; r < reps; r++) {
        tc_sched_free(s);
        s = NULL;
        double t0 = tc_now(), c0 = cpu_now();
        tc_status st = TC_OK;
        if (autoc) { /* as compile: the search's own plan when its first candidate wins */
            tc_synth_search se;
            if (!(st = tc_synth_tacos_search_plan(&ctx, u, coll, &o, 1, 0, &se, &s)))
                o.chunks = se.best.chunks;
        }
        if (!st && !s)
            st = tc_synth_tacos(&ctx, u, coll, &o, &s);
        wall[r] = tc_now() - t0;
        cpu[r] = cpu_now() - c0;
        if (st) {
            fprintf(stderr, "synth_bench: %s\n", tc_status_str(st));
            return 1;
        }
    }
    qsort(wall, (size_t)reps, sizeof *wall, cmp_d);
    qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double time = s->time;
    tc_bound b = {0};
    tc_sim_bound(&ctx, u, s, 0, &b);
    if (simulate && !o.stats_only) {
        tc_sim_opts so;
        tc_sim_opts_init(&so);
        so.no_bound = 1;
        tc_sim_result *res = NULL;
        if (tc_sim_run(&ctx, s, u, &so, &res) == TC_OK)
            time = res->time;
        tc_sim_result_free(res);
    }
    int bad = 0;
    if (check && !o.stats_only) {
        tc_check_opts co = {.topo = u, .no_link_check = lmodel != TC_LINK_TACOS};
        bad = tc_sched_check(&ctx, s, &co, "synth_bench") != TC_OK;
    }
    printf("%-22s %-13s %6d %9.3f %9.3f %8.1f %12.6e %12.6e %7.4f %12.6e %7.4f %d %d%s\n", argv[optind],
           tc_coll_name(coll), t->n_npus, wall[reps / 2], cpu[reps / 2], (double)ru.ru_maxrss / 1024.0, time, b.ideal,
           b.ideal > 0 ? time / b.ideal : 0, b.time, b.time > 0 ? time / b.time : 0, s->n_xfers, o.chunks,
           check ? (bad ? " CHECK-FAILED" : " checked") : "");
    tc_sched_free(s);
    tc_topo_free(u);
    tc_topo_free(t);
    free(wall);
    free(cpu);
    return bad;
}
