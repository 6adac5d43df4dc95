/*
 * paper: the evaluation setup of the PCCL photonic paper (§5, Figs. 7-10, 17-18) with tacosc's photonic pass.
 *
 *   paper OUTDIR [GPUS...]     (default GPUs: 128 64 32)
 *
 * Per GPU count N, the five initial topologies of the paper (ring = bidirectional ring, 2D torus, 3D torus,
 * 2D grid, 3D grid = meshes; the squarest dimensions), alpha 3 us, 450 GB/s (beta = 1/450 s/GB):
 *  - Fig. 7 / 17 / 18: reduce-scatter time over 1 MB .. 1 GB of the baselines on the fixed topology (ring,
 *    RHD, bucket, Swing; the paper's eq. 1 per step, Alg. 2 routes) and of PCCL (RHD's rounds, the photonic
 *    pass, r = 5 us), printed as a table;
 *  - Fig. 8: the time breakdown at 256 MB with r = 5 us, as OUTDIR/fig8-NNN.svg;
 *  - Fig. 9: the breakdown at 1 GB with r = 1 ms, and PCCL's reconfiguration count, OUTDIR/fig9-NNN.svg;
 *  - Fig. 10a: all-to-all at 32 MB, DEX on the fixed topology and PCCL with DEX's rounds (r = 5 us),
 *    OUTDIR/fig10a-NNN.svg.
 * PCCL's fallback set is {2D grid} (the paper's example of S) and the fabric has no Tx/Rx limit, MZI mesh or
 * fiber limit: the paper's figures model neither.  Deterministic output.
 */
#include "tacos/algo.h"
#include "tacos/photonic.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 3e-6
#define BW 450e9

static const char *const TOPO_NAME[5] = {"ring", "2D torus", "3D torus", "2D grid", "3D grid"};
static const char *const BASE[4] = {"ring", "rhd", "bucket", "swing"};

/* Squarest 2- and 3-factor dimensions of n. */
static void dims(int n, char *d2, char *d3, size_t len)
{
    int a2 = 1;
    for (int a = 1; a * a <= n; a++)
        if (n % a == 0)
            a2 = a;
    snprintf(d2, len, "%dx%d", a2, n / a2);
    double best = INFINITY;
    for (int a = 1; a * a * a <= n; a++)
        for (int b = a; n % a == 0 && a * b * b <= n; b++)
            if ((n / a) % b == 0 && (double)(n / a / b) / a < best) {
                best = (double)(n / a / b) / a;
                snprintf(d3, len, "%dx%dx%d", a, b, n / a / b);
            }
}

static tc_topo *make_topo(tc_ctx *ctx, int n, int k, double r)
{
    char d2[48], d3[48], nn[16];
    dims(n, d2, d3, sizeof d2);
    snprintf(nn, sizeof nn, "%d", n);
    const char *kind[5] = {"biring", "torus", "torus", "mesh", "mesh"};
    const char *dim[5] = {nn, d2, d3, d2, d3};
    tc_topo *t = NULL;
    if (tc_topo_generate(ctx, kind[k], dim[k], NULL, 0, &t) || tc_topo_class_set(t, 0, ALPHA, 1.0 / BW))
        return NULL;
    t->photonic.present = 1;
    t->photonic.reconfig_set = 1;
    t->photonic.reconfig_delay = r;
    return t;
}

static tc_sched *generate(tc_ctx *ctx, const char *algo, const tc_topo *t, tc_coll c, uint64_t size)
{
    tc_gen_opts g;
    tc_gen_opts_init(&g);
    g.size = size;
    tc_sched *s = NULL;
    tc_ctx quiet = *ctx;
    quiet.sink = NULL; /* a generator that does not serve a topology says why; the table shows n/a */
    return tc_algo_run(&quiet, algo, t, c, &g, &s) == TC_OK ? s : NULL;
}

/* The photonic plan of algo's rounds: its breakdown and reconfiguration count. */
static int pccl(tc_ctx *ctx, const tc_topo *t, const char *algo, tc_coll c, uint64_t size, tc_ph_breakdown *b,
                int *reconfigs)
{
    tc_sched *s = generate(ctx, algo, t, c, size);
    tc_sched_photonic *ph = NULL;
    tc_photonic_opts o;
    tc_photonic_opts_init(&o);
    o.fallback = "mesh2d";
    if (!s || tc_photonic_plan(ctx, t, s, &o, &ph)) {
        tc_sched_free(s);
        return -1;
    }
    *b = ph->total;
    *reconfigs = ph->n_reconfigs;
    tc_sched_photonic_free(ph);
    tc_sched_free(s);
    return 0;
}

static int fixed(tc_ctx *ctx, const tc_topo *t, const char *algo, tc_coll c, uint64_t size, tc_ph_breakdown *b)
{
    tc_sched *s = generate(ctx, algo, t, c, size);
    int rc = !s || tc_photonic_fixed(ctx, t, s, b) ? -1 : 0;
    tc_sched_free(s);
    return rc;
}

static int write_svg(tc_ctx *ctx, const char *dir, const char *name, int n, const char *title, tc_ph_bar *bars,
                     int nb)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s-%d.svg", dir, name, n);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    tc_status st = tc_photonic_svg_write(ctx, title, bars, nb, f);
    fclose(f);
    printf("  wrote %s\n", path);
    return st ? -1 : 0;
}

static int run(tc_ctx *ctx, const char *dir, int n)
{
    static const uint64_t sizes[] = {1u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30};
    static const char *const size_name[] = {"1M", "4M", "16M", "64M", "256M", "1G"};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    char d2[48], d3[48];
    dims(n, d2, d3, sizeof d2);
    printf("\n== %d GPUs: ring %d, 2D %s, 3D %s; alpha 3 us, 450 GB/s; reduce-scatter time in ms (eq. 1)\n", n, n, d2,
           d3);
    printf("%-9s %-15s", "topology", "algorithm");
    for (int z = 0; z < ns; z++)
        printf(" %9s", size_name[z]);
    printf("  best baseline / PCCL\n");
    tc_ph_bar bars8[5 * 5], bars9[5 * 5], bars10[5 * 2];
    int n8 = 0, n9 = 0, n10 = 0;
    char labels[5 * 5][48];
    int nl = 0;
    for (int k = 0; k < 5; k++) {
        tc_topo *t5 = make_topo(ctx, n, k, 5e-6), *t1 = make_topo(ctx, n, k, 1e-3);
        if (!t5 || !t1)
            return -1;
        double best[6], ours[6];
        for (int z = 0; z < ns; z++)
            best[z] = INFINITY;
        for (int a = 0; a < 4; a++) {
            printf("%-9s %-15s", a ? "" : TOPO_NAME[k], BASE[a]);
            for (int z = 0; z < ns; z++) {
                tc_ph_breakdown b;
                if (fixed(ctx, t5, BASE[a], TC_COLL_REDUCESCATTER, sizes[z], &b)) {
                    printf(" %9s", "n/a"); /* the generator does not serve this topology */
                    continue;
                }
                double v = tc_ph_breakdown_sum(&b);
                printf(" %9.3f", v * 1e3);
                if (v < best[z])
                    best[z] = v;
                if (sizes[z] == 256u << 20)
                    bars8[n8++] = (tc_ph_bar){TOPO_NAME[k], BASE[a], b};
            }
            printf("\n");
            tc_ph_breakdown b1;
            if (!fixed(ctx, t1, BASE[a], TC_COLL_REDUCESCATTER, 1u << 30, &b1))
                bars9[n9++] = (tc_ph_bar){TOPO_NAME[k], BASE[a], b1};
        }
        printf("%-9s %-15s", "", "PCCL (RHD)");
        int rc5 = 0;
        for (int z = 0; z < ns; z++) {
            tc_ph_breakdown b;
            int rc;
            if (pccl(ctx, t5, "rhd", TC_COLL_REDUCESCATTER, sizes[z], &b, &rc))
                return -1;
            rc5 = rc;
            ours[z] = tc_ph_breakdown_sum(&b);
            printf(" %9.3f", ours[z] * 1e3);
            if (sizes[z] == 256u << 20) {
                snprintf(labels[nl], sizeof labels[nl], "PCCL (%d reconf.)", rc);
                bars8[n8++] = (tc_ph_bar){TOPO_NAME[k], labels[nl++], b};
            }
        }
        printf("  %.2fx .. %.2fx\n", best[0] / ours[0], best[ns - 1] / ours[ns - 1]);
        tc_ph_breakdown b;
        int rc;
        if (pccl(ctx, t1, "rhd", TC_COLL_REDUCESCATTER, 1u << 30, &b, &rc))
            return -1;
        snprintf(labels[nl], sizeof labels[nl], "PCCL (%d reconf.)", rc);
        bars9[n9++] = (tc_ph_bar){TOPO_NAME[k], labels[nl++], b};
        int rounds = 0;
        while ((1 << rounds) < n)
            rounds++;
        printf("%-9s %-15s 1 GB: %d of %d rounds reconfigured with r = 5 us; with r = 1 ms %d, %.3f ms\n", "",
               "PCCL (RHD)", rc5, rounds, rc, tc_ph_breakdown_sum(&b) * 1e3);
        /* all-to-all, 32 MB */
        tc_ph_breakdown d, p;
        if (!fixed(ctx, t5, "dex", TC_COLL_ALLTOALL, 32u << 20, &d) &&
            !pccl(ctx, t5, "dex", TC_COLL_ALLTOALL, 32u << 20, &p, &rc)) {
            bars10[n10++] = (tc_ph_bar){TOPO_NAME[k], "DEX", d};
            snprintf(labels[nl], sizeof labels[nl], "PCCL (%d reconf.)", rc);
            bars10[n10++] = (tc_ph_bar){TOPO_NAME[k], labels[nl++], p};
            printf("%-9s %-15s all-to-all 32 MB: DEX %.3f ms, PCCL (DEX) %.3f ms, %d reconfigurations\n", "", "",
                   tc_ph_breakdown_sum(&d) * 1e3, tc_ph_breakdown_sum(&p) * 1e3, rc);
        }
        tc_topo_free(t5);
        tc_topo_free(t1);
    }
    char title[160];
    snprintf(title, sizeof title, "ReduceScatter 256 MB on %d GPUs, r = 5 us (paper Fig. 8)", n);
    if (write_svg(ctx, dir, "fig8", n, title, bars8, n8))
        return -1;
    snprintf(title, sizeof title, "ReduceScatter 1 GB on %d GPUs, r = 1 ms (paper Fig. 9)", n);
    if (write_svg(ctx, dir, "fig9", n, title, bars9, n9))
        return -1;
    snprintf(title, sizeof title, "AllToAll 32 MB on %d GPUs, r = 5 us (paper Fig. 10a)", n);
    return write_svg(ctx, dir, "fig10a", n, title, bars10, n10);
}

/* ------------------------------------------------------------------------------------------------ */
/* The paper's figures beside tacosc's (issue 22 item 7): one row per number the paper's text gives     */

static int row_n;

static void row(const char *fig, const char *what, const char *paper, double pv, const char *ours, double ov)
{
    const int differs = pv > 0 && fabs(ov - pv) > 0.10 * pv;
    printf("%-9s %-52s %-17s %-26s %s\n", fig, what, paper, ours, differs ? "differs > 10% (README)" : "within 10%");
    row_n++;
}

/* Alg. 4 on an 8 x 8 server grid with n random circuits (bench-photonic's draw, seed 1). */
static int fibers(tc_ctx *ctx, int n, int *z, double *lp)
{
    int *u, *v, E;
    if (tc_photonic_grid_edges(8, 8, &u, &v, &E))
        return -1;
    int *src = malloc((size_t)n * sizeof *src), *dst = malloc((size_t)n * sizeof *dst);
    tc_rng rng;
    tc_rng_seed(&rng, 1);
    for (int i = 0; i < n; i++) {
        src[i] = (int)tc_rng_below(&rng, 64);
        do
            dst[i] = (int)tc_rng_below(&rng, 64);
        while (dst[i] == src[i]);
    }
    tc_ph_fiber_in in = {.n_servers = 64, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = src,
                         .dst = dst, .time_limit = 10};
    tc_ph_fiber_out *o = NULL;
    int rc = tc_photonic_fiber_route(ctx, &in, &o) ? -1 : 0;
    if (!rc)
        *z = o->z, *lp = o->lp_bound;
    tc_photonic_fiber_out_free(o);
    free(u), free(v), free(src), free(dst);
    return rc;
}

static int compare(tc_ctx *ctx)
{
    static const uint64_t sizes[] = {1u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    char buf[96], pb[64];
    tc_ph_breakdown b, d;
    int rc;
    printf("\n== the paper's figures beside tacosc's (alpha 3 us, 450 GB/s; PCCL: fallback {2D grid}, no Tx/Rx, "
           "MZI or fiber limit)\n");
    printf("%-9s %-52s %-17s %-26s %s\n", "figure", "quantity", "paper", "tacosc", "");
    /* Fig. 1: 4x4x4 torus, all-to-all (hypercube DEX vs PCCL) and all-reduce (3D bucket vs PCCL (RHD)) */
    tc_topo *t = make_topo(ctx, 64, 2, 5e-6);
    if (!t)
        return -1;
    double best = 0;
    const char *at = "";
    static const char *const sn[] = {"1M", "4M", "16M", "64M", "256M", "1G"};
    for (int z = 0; z < ns; z++)
        if (!fixed(ctx, t, "dex", TC_COLL_ALLTOALL, sizes[z], &d) &&
            !pccl(ctx, t, "dex", TC_COLL_ALLTOALL, sizes[z], &b, &rc) &&
            tc_ph_breakdown_sum(&d) / tc_ph_breakdown_sum(&b) > best) {
            best = tc_ph_breakdown_sum(&d) / tc_ph_breakdown_sum(&b);
            at = sn[z];
        }
    snprintf(buf, sizeof buf, "%.2fx (at %s)", best, at);
    row("Fig. 1", "all-to-all, 4x4x4 torus: DEX / PCCL (DEX), best size", "7.5x", 7.5, buf, best);
    double worst = INFINITY, most = 0;
    for (int z = 0; z < ns; z++)
        if (!fixed(ctx, t, "bucket", TC_COLL_ALLREDUCE, sizes[z], &d) &&
            !pccl(ctx, t, "rhd", TC_COLL_ALLREDUCE, sizes[z], &b, &rc)) {
            const double q = tc_ph_breakdown_sum(&d) / tc_ph_breakdown_sum(&b);
            worst = q < worst ? q : worst;
            most = q > most ? q : most;
        }
    snprintf(buf, sizeof buf, "%.2fx .. %.2fx", worst, most);
    row("Fig. 1", "all-reduce, 4x4x4 torus: 3D bucket / PCCL (RHD)", "1x (matches)", 1.0, buf,
        fabs(worst - 1) > fabs(most - 1) ? worst : most);
    tc_topo_free(t);
    /* Figs. 8, 9, 10a and the abstract on 128 GPUs */
    int r8lo = 99, r8hi = 0, r9lo = 99, r9hi = 0, r10lo = 99, r10hi = 0;
    double t10 = 0, beat = INFINITY, up = 0;
    for (int k = 0; k < 5; k++) {
        tc_topo *t5 = make_topo(ctx, 128, k, 5e-6), *t1 = make_topo(ctx, 128, k, 1e-3);
        if (!t5 || !t1)
            return -1;
        if (pccl(ctx, t5, "rhd", TC_COLL_REDUCESCATTER, 256u << 20, &b, &rc))
            return -1;
        r8lo = rc < r8lo ? rc : r8lo, r8hi = rc > r8hi ? rc : r8hi;
        if (pccl(ctx, t1, "rhd", TC_COLL_REDUCESCATTER, 1u << 30, &b, &rc))
            return -1;
        r9lo = rc < r9lo ? rc : r9lo, r9hi = rc > r9hi ? rc : r9hi;
        if (fixed(ctx, t5, "dex", TC_COLL_ALLTOALL, 32u << 20, &d) ||
            pccl(ctx, t5, "dex", TC_COLL_ALLTOALL, 32u << 20, &b, &rc))
            return -1;
        r10lo = rc < r10lo ? rc : r10lo, r10hi = rc > r10hi ? rc : r10hi;
        t10 = tc_ph_breakdown_sum(&b);
        const double q = tc_ph_breakdown_sum(&d) / tc_ph_breakdown_sum(&b);
        beat = q < beat ? q : beat;
        for (int z = 0; z < ns; z++) { /* the best baseline over PCCL (RHD) */
            double bb = INFINITY;
            for (int a = 0; a < 4; a++)
                if (!fixed(ctx, t5, BASE[a], TC_COLL_REDUCESCATTER, sizes[z], &d) && tc_ph_breakdown_sum(&d) < bb)
                    bb = tc_ph_breakdown_sum(&d);
            if (!pccl(ctx, t5, "rhd", TC_COLL_REDUCESCATTER, sizes[z], &b, &rc) && bb / tc_ph_breakdown_sum(&b) > up)
                up = bb / tc_ph_breakdown_sum(&b);
        }
        tc_topo_free(t5);
        tc_topo_free(t1);
    }
    snprintf(buf, sizeof buf, r8lo == r8hi ? "%d" : "%d .. %d", r8lo, r8hi);
    row("Fig. 8", "reconfigurations, RS 256 MB, 128 GPUs, r = 5 us", "7", 7, buf, r8lo);
    snprintf(buf, sizeof buf, r9lo == r9hi ? "%d" : "%d .. %d", r9lo, r9hi);
    row("Fig. 9", "reconfigurations, RS 1 GB, 128 GPUs, r = 1 ms", "4", 4, buf,
        fabs(r9lo - 4.0) > fabs(r9hi - 4.0) ? r9lo : r9hi);
    snprintf(buf, sizeof buf, r10lo == r10hi ? "%d" : "%d .. %d", r10lo, r10hi);
    row("Fig. 10a", "reconfigurations, PCCL (DEX), A2A 32 MB, 128 GPUs", "6 (model)", 6, buf, r10lo);
    snprintf(buf, sizeof buf, "%.3f ms", t10 * 1e3);
    row("Fig. 10a", "PCCL (DEX) time, A2A 32 MB, 128 GPUs", "0.312 ms (model)", 0.312e-3, buf, t10);
    snprintf(buf, sizeof buf, "%.2fx (worst topology)", beat);
    snprintf(pb, sizeof pb, "> 1x");
    row("Fig. 10a", "DEX / PCCL (DEX) on every topology", pb, 0, buf, beat);
    snprintf(buf, sizeof buf, "%.2fx", up);
    row("abstract", "best baseline / PCCL (RHD), 128 GPUs, up to", "3x", 3, buf, up);
    int z100, z512;
    double lp100, lp512;
    if (fibers(ctx, 100, &z100, &lp100) || fibers(ctx, 512, &z512, &lp512))
        return -1;
    snprintf(buf, sizeof buf, "%d (LP bound %.2f)", z100, lp100);
    row("Sec. 4.2", "fibers, 8x8 server grid, 100 random circuits", "7", 7, buf, z100);
    snprintf(buf, sizeof buf, "%d (LP bound %.2f)", z512, lp512);
    row("Sec. 4.2", "fibers, 8x8 server grid, 512 random circuits", "31", 31, buf, z512);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: paper OUTDIR [GPUS...]\n");
        return 2;
    }
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    int counts[8] = {128, 64, 32}, nc = 3;
    if (argc > 2)
        for (nc = 0; nc < 8 && nc + 2 < argc; nc++)
            counts[nc] = atoi(argv[nc + 2]);
    for (int i = 0; i < nc; i++)
        if (run(&ctx, argv[1], counts[i]))
            return 1;
    return compare(&ctx) ? 1 : 0;
}
