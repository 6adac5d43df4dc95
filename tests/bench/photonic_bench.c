/*
 * photonic_bench: the timings of `make bench-photonic` (tests/bench/bench-photonic.sh runs it).
 *
 *   ilp   TOPO_KIND DIMS   RHD reduce-scatter, 256 MiB, alpha 3 us, 450 GB/s, r 5 us on the generated
 *                          topology (128 GPUs in the paper's setups): wall seconds of tc_photonic_plan
 *                          (Alg. 2 costs + Alg. 1 ILP) and of the ILP alone, reconfigurations.
 *   mzi   SIDE N SEED      N random circuits between border MZIs on different sides of one SIDE x SIDE
 *                          mesh (1 wavelength, Alg. 3): wall seconds, MZIs crossed.
 *   fiber ROWS COLS N SEED N random circuits between distinct servers of a ROWS x COLS server grid
 *                          (Alg. 4, time limit $ILP_TIME s, default 10): wall seconds, fibers needed (1
 *                          wavelength: the optimum's busiest edge), LP bound, exact or LP-rounded.
 * One line per run: "name key=value ..." with wall and CPU seconds (clock()).  Run from the repository root.
 */
#include "tacos/algo.h"
#include "tacos/photonic.h"
#include "tacos/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void) { return (double)clock() / CLOCKS_PER_SEC; }

static int bench_ilp(const char *kind, const char *dims)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_topo *t = NULL;
    tc_sched *s = NULL;
    tc_sched_photonic *ph = NULL;
    if (tc_topo_generate(&ctx, kind, dims, NULL, 0, &t) || tc_topo_class_set(t, 0, 3e-6, 1.0 / 450e9))
        return 1;
    t->photonic.present = 1;
    t->photonic.reconfig_set = 1;
    t->photonic.reconfig_delay = 5e-6;
    tc_gen_opts g;
    tc_gen_opts_init(&g);
    g.size = 256u << 20;
    if (tc_algo_run(&ctx, "rhd", t, TC_COLL_REDUCESCATTER, &g, &s))
        return 1;
    double t0 = tc_now(), c0 = cpu();
    if (tc_photonic_plan(&ctx, t, s, NULL, &ph))
        return 1;
    double plan_s = tc_now() - t0, plan_cpu = cpu() - c0;
    /* the ILP alone, on the same cost structure: rounds x (G0 + own) priced by the plan's breakdown */
    const int n = ph->n_rounds, S = 1 + ph->n_fallbacks, T = S + n;
    double *cost = malloc((size_t)n * T * sizeof *cost);
    int *choice = malloc((size_t)n * sizeof *choice);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < T; j++)
            cost[i * T + j] = j == S + i ? tc_ph_breakdown_sum(&ph->rounds[i].t) - ph->rounds[i].t.reconfig
                                         : 10 * (1 + i + j) * 1e-6;
    tc_ph_ilp p = {.n_rounds = n, .n_static = S, .n_topos = T, .cost = cost, .r = 5e-6, .time_limit = 10};
    double obj;
    t0 = tc_now();
    if (tc_photonic_ilp_solve(&ctx, &p, choice, &obj))
        return 1;
    double ilp_s = tc_now() - t0;
    printf("ilp topology=%s npus=%d rounds=%d candidates=%d plan_s=%.4f plan_cpu_s=%.4f ilp_s=%.4f reconfigs=%d "
           "time_us=%.3f\n",
           t->name, t->n_npus, n, T, plan_s, plan_cpu, ilp_s, ph->n_reconfigs, tc_ph_breakdown_sum(&ph->total) * 1e6);
    free(cost);
    free(choice);
    tc_sched_photonic_free(ph);
    tc_sched_free(s);
    tc_topo_free(t);
    return 0;
}

/* A random MZI on side `side` (0 top, 1 right, 2 bottom, 3 left) of an M x M mesh. */
static void border(tc_rng *r, int M, int side, int *y, int *x)
{
    int k = (int)tc_rng_below(r, (uint64_t)M);
    *y = side == 0 ? 0 : side == 2 ? M - 1 : k;
    *x = side == 3 ? 0 : side == 1 ? M - 1 : k;
}

static int bench_mzi(int M, int n, unsigned long seed)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    tc_ph_fabric *f;
    if (tc_photonic_fabric_make(1, 1, 1, M, 1, 0, &f))
        return 1;
    tc_ph_mzi_req *req = calloc((size_t)n, sizeof *req);
    tc_rng r;
    tc_rng_seed(&r, seed);
    unsigned char *taken = calloc((size_t)M * M, 1); /* each border MZI is one circuit's end at most */
    for (int i = 0; i < n; i++) {
        int a = (int)tc_rng_below(&r, 4), b = (a + 1 + (int)tc_rng_below(&r, 3)) % 4, y, x;
        do
            border(&r, M, a, &y, &x);
        while (taken[y * M + x]);
        taken[y * M + x] = 1;
        req[i] = (tc_ph_mzi_req){.src = -1, .dst = -1, .sy0 = y, .sx0 = x, .sy1 = y + 1, .sx1 = x + 1};
        do
            border(&r, M, b, &y, &x);
        while (taken[y * M + x]);
        taken[y * M + x] = 1;
        req[i].dy0 = y, req[i].dx0 = x, req[i].dy1 = y + 1, req[i].dx1 = x + 1;
    }
    free(taken);
    tc_ph_routes *out = NULL;
    double t0 = tc_now(), c0 = cpu();
    tc_status st = tc_photonic_mzi_route(&ctx, f, req, n, NULL, &out);
    double secs = tc_now() - t0, cs = cpu() - c0;
    long long mzis = 0;
    for (int i = 0; !st && i < out->n_circuits; i++)
        mzis += out->circuits[i].n_mzi;
    printf("mzi mesh=%dx%d circuits=%d routed=%s wall_s=%.4f cpu_s=%.4f mzis=%lld\n", M, M, n, st ? "no" : "yes", secs,
           cs, mzis);
    tc_photonic_routes_free(out);
    tc_photonic_fabric_free(f);
    free(req);
    return st != TC_OK;
}

static int bench_fiber(int R, int C, int n, unsigned long seed, double limit)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const int V = R * C;
    int *u, *v, E;
    if (tc_photonic_grid_edges(R, C, &u, &v, &E))
        return 1;
    int *src = malloc((size_t)n * sizeof *src), *dst = malloc((size_t)n * sizeof *dst);
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        src[i] = (int)tc_rng_below(&rng, (uint64_t)V);
        do
            dst[i] = (int)tc_rng_below(&rng, (uint64_t)V);
        while (dst[i] == src[i]);
    }
    tc_ph_fiber_in in = {.n_servers = V, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = src,
                         .dst = dst, .time_limit = limit};
    tc_ph_fiber_out *o = NULL;
    double t0 = tc_now(), c0 = cpu();
    tc_status st = tc_photonic_fiber_route(&ctx, &in, &o);
    double secs = tc_now() - t0, cs = cpu() - c0;
    if (!st)
        printf("fiber grid=%dx%d circuits=%d wall_s=%.4f cpu_s=%.4f fibers=%d lp_bound=%.3f method=%s\n", R, C, n, secs,
               cs, o->z, o->lp_bound, o->method == TC_PH_FIBER_ILP ? "ilp" : "lp-rounding");
    tc_photonic_fiber_out_free(o);
    free(u);
    free(v);
    free(src);
    free(dst);
    return st != TC_OK;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "ilp"))
        return bench_ilp(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "mzi"))
        return bench_mzi(atoi(argv[2]), atoi(argv[3]), strtoul(argv[4], NULL, 10));
    if (argc == 6 && !strcmp(argv[1], "fiber")) {
        const char *lim = getenv("ILP_TIME");
        return bench_fiber(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), strtoul(argv[5], NULL, 10),
                           lim ? atof(lim) : 10);
    }
    fprintf(stderr, "usage: photonic_bench ilp KIND DIMS | mzi SIDE N SEED | fiber ROWS COLS N SEED\n");
    return 2;
}
