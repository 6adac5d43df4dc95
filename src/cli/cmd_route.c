/* tacosc route TOPO: route optical circuits on a topology's photonic fabric (fiber ILP across the server
 * grid, then MZI paths and wavelengths), print what they need and optionally write the circuit plan. */
#include "cli.h"
#include "tacos/emit.h"
#include "tacos/photonic.h"
#include "tacos/topo.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc route TOPO.xml (--circuits FILE | --random N) [options]\n"
          "\n"
          "Route optical circuits on the topology's photonic fabric (<photonic>, man 5 tacosc-topology): a\n"
          "server path per circuit over the fiber grid that needs the fewest fibers (an ILP solved with GLPK),\n"
          "then a path and a wavelength through the MZI meshes with no two circuits of one wavelength on a\n"
          "waveguide or fiber.  Prints the fibers each server pair needs, with the LP lower bound.\n"
          "  --circuits FILE   one circuit per line, 'SRC DST' (npu ids); '#' starts a comment\n"
          "  --random N        N random circuits between distinct npus within the tx/rx limits (--seed)\n"
          "  --seed S          seed of --random (default 1)\n"
          "  --costs FILE      alpha-beta cost file (man 5 tacosc-costs)\n"
          "  --ilp-time S      seconds for the fiber ILP (default 10); past it the LP relaxation is rounded\n"
          "  --list            one line per circuit: wavelength, servers, fibers, MZIs crossed\n"
          "  -o, --output FILE write the circuit plan as JSON (man 5 tacosc-schedule, CIRCUIT PLANS)\n"
          "  -q, --quiet       no summary\n"
          "  -h, --help        this text\n"
          "Errors name FILE:LINE for the circuits file; the exit status is 1 (2 for bad usage).\n",
          f);
}

enum { O_CIRCUITS = 256, O_RANDOM, O_SEED, O_COSTS, O_ILPTIME, O_LIST };

/* "SRC DST" per line; '#' comments; blank lines skipped.  Circuits and their lines are malloc'd. */
static tc_status read_circuits(tc_ctx *ctx, const char *path, int n_npus, int **src, int **dst, int **lines, int *n)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file(ctx, path, &buf, &len);
    if (st)
        return st;
    int cap = 0, m = 0, lineno = 0;
    *src = *dst = *lines = NULL;
    for (char *p = buf, *next; p && p < buf + len && !st; p = next) {
        char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        lineno++;
        char *hash = strchr(p, '#');
        if (hash)
            *hash = 0;
        char *q = p;
        while (isspace((unsigned char)*q))
            q++;
        if (!*q)
            continue;
        long v[2];
        int k = 0;
        for (; k < 2; k++) {
            char *end;
            errno = 0;
            v[k] = strtol(q, &end, 10);
            if (end == q || errno || (*end && !isspace((unsigned char)*end)))
                break;
            q = end;
            while (isspace((unsigned char)*q))
                q++;
        }
        if (k < 2 || *q) {
            st = tc_error(ctx, TC_ERR_PARSE, path, lineno, "expected 'SRC DST' (two npu ids), got '%s'", p);
            break;
        }
        for (k = 0; k < 2 && !st; k++)
            if (v[k] < 0 || v[k] >= n_npus)
                st = tc_error(ctx, TC_ERR_INVALID, path, lineno, "npu %ld out of range (topology has %d npus)", v[k],
                              n_npus);
        if (st)
            break;
        if (m == cap) {
            cap = cap ? 2 * cap : 64;
            int *a = realloc(*src, (size_t)cap * sizeof *a), *b = a ? realloc(*dst, (size_t)cap * sizeof *b) : NULL;
            int *c = b ? realloc(*lines, (size_t)cap * sizeof *c) : NULL;
            if (a)
                *src = a;
            if (b)
                *dst = b;
            if (!c) {
                st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory");
                break;
            }
            *lines = c;
        }
        (*src)[m] = (int)v[0];
        (*dst)[m] = (int)v[1];
        (*lines)[m++] = lineno;
    }
    free(buf);
    if (!st && m == 0)
        st = tc_error(ctx, TC_ERR_INVALID, path, 0, "no circuits (expected lines 'SRC DST')");
    *n = m;
    return st;
}

/* N random circuits within the tx/rx limits. */
static tc_status random_circuits(tc_ctx *ctx, const tc_ph_fabric *fab, int n, int **src, int **dst)
{
    *src = malloc((size_t)n * sizeof **src);
    *dst = malloc((size_t)n * sizeof **dst);
    int *out_n = calloc((size_t)fab->n_npus, sizeof *out_n), *in_n = calloc((size_t)fab->n_npus, sizeof *in_n);
    tc_status st = TC_OK;
    if (!*src || !*dst || !out_n || !in_n) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    tc_rng rng;
    tc_rng_seed(&rng, ctx->seed);
    for (int i = 0; i < n; i++) {
        int a = -1, b = -1;
        for (int tries = 0; tries < 100000 && a < 0; tries++) {
            int x = (int)tc_rng_below(&rng, (uint64_t)fab->n_npus), y = (int)tc_rng_below(&rng, (uint64_t)fab->n_npus);
            if (x != y && (!fab->tx || out_n[x] < fab->tx) && (!fab->rx || in_n[y] < fab->rx))
                a = x, b = y;
        }
        if (a < 0) { /* near full: the first free transmitter and receiver, else a swap (x->y becomes x->u, u->y) */
            int u = -1, w = -1;
            for (int v = 0; v < fab->n_npus; v++) {
                if (u < 0 && (!fab->tx || out_n[v] < fab->tx))
                    u = v;
                if ((w < 0 || w == u) && (!fab->rx || in_n[v] < fab->rx))
                    w = v;
            }
            if (u >= 0 && w >= 0 && u != w)
                a = u, b = w;
            for (int k = 0; k < i && a < 0 && u >= 0 && u == w; k++)
                if ((*src)[k] != u && (*dst)[k] != u) {
                    b = (*dst)[k];
                    (*dst)[k] = u;
                    in_n[u]++;
                    in_n[b]--;
                    a = u;
                }
        }
        if (a < 0) {
            st = tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                          "--random: %d circuits do not fit %d npus with tx %d and rx %d (placed %d)", n, fab->n_npus,
                          fab->tx, fab->rx, i);
            goto done;
        }
        out_n[a]++;
        in_n[b]++;
        (*src)[i] = a;
        (*dst)[i] = b;
    }
done:
    free(out_n);
    free(in_n);
    return st;
}

int tc_cli_route(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"circuits", required_argument, 0, O_CIRCUITS}, {"random", required_argument, 0, O_RANDOM},
        {"seed", required_argument, 0, O_SEED},         {"costs", required_argument, 0, O_COSTS},
        {"ilp-time", required_argument, 0, O_ILPTIME},  {"list", no_argument, 0, O_LIST},
        {"output", required_argument, 0, 'o'},          {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},                  {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *circuits = NULL, *costs = NULL, *out_path = NULL;
    int n_random = 0, list = 0, quiet = 0, opt;
    double ilp_time = TC_PHOTONIC_ILP_TIME;
    tc_status st = TC_OK;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "route", argc, argv, "o:qh", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case O_CIRCUITS: circuits = optarg; break;
        case O_RANDOM: st = tc_cli_parse_int(&ctx, "random", optarg, 1, 10000000, &n_random); break;
        case O_SEED: st = tc_cli_parse_seed(&ctx, optarg, &ctx.seed); break;
        case O_COSTS: costs = optarg; break;
        case O_ILPTIME: st = tc_cli_parse_seconds(&ctx, "ilp-time", optarg, 86400, &ilp_time); break;
        case O_LIST: list = 1; break;
        case 'o': out_path = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
        if (st)
            return tc_cli_exit(st);
    }
    if (argc - optind != 1)
        return tc_cli_usage(&ctx, "route", "one topology file expected (%d given)", argc - optind);
    if (!circuits == !n_random)
        return tc_cli_usage(&ctx, "route", "give either --circuits FILE or --random N");
    if (seen[O_SEED] && !n_random)
        return tc_cli_usage(&ctx, "route", "--seed applies to --random only");
    const char *inputs[] = {argv[optind], costs, circuits}, *what[] = {"topology file", "cost file", "circuits file"};
    if ((st = tc_cli_check_output(&ctx, "-o", out_path, inputs, what, 3)))
        return tc_cli_exit(st);
    const char *topo_path = argv[optind];
    tc_topo *topo = NULL;
    tc_ph_fabric *fab = NULL;
    tc_ph_routes *rt = NULL;
    tc_ph_route_summary sum;
    memset(&sum, 0, sizeof sum);
    tc_sched_photonic *plan = NULL;
    int *src = NULL, *dst = NULL, *lines = NULL, n = 0;
    if ((st = tc_cli_load_topo(&ctx, topo_path, costs, 0, 0, &topo)) ||
        (st = tc_photonic_fabric_create(&ctx, topo, &fab)))
        goto done;
    if (circuits) {
        if ((st = read_circuits(&ctx, circuits, topo->n_npus, &src, &dst, &lines, &n)) ||
            (st = tc_photonic_check_txrx(&ctx, fab, src, dst, n, circuits, lines, NULL)))
            goto done;
    } else if ((st = random_circuits(&ctx, fab, n_random, &src, &dst))) {
        goto done;
    } else {
        n = n_random;
    }
    if ((st = tc_photonic_route(&ctx, fab, src, dst, n, ilp_time, circuits ? circuits : "random circuits", &rt, &sum)))
        goto done;
    if (sum.method == TC_PH_FIBER_LP)
        tc_warn(&ctx, NULL, 0,
                "the fiber ILP reached the %g s limit (--ilp-time): LP relaxation rounded, %d circuits on the busiest "
                "server pair (LP bound %.2f; optimality gap %d: the optimum is at least %d)",
                ilp_time, sum.z, sum.lp_bound, sum.z - (int)ceil(sum.bound - 1e-6), (int)ceil(sum.bound - 1e-6));
    if (out_path) {
        tc_cli_out o;
        if ((st = tc_photonic_circuit_plan(fab, rt, &sum, &plan))) {
            st = tc_error(&ctx, st, NULL, 0, "out of memory");
            goto done;
        }
        if ((st = tc_cli_open_output(&ctx, out_path, &o)))
            goto done;
        tc_status ws = tc_emit_circuits_write(&o.ctx, topo->name, plan, o.f);
        st = tc_cli_close_output(&o, ws == TC_OK);
        if (!st)
            st = ws;
        if (st)
            goto done;
    }
    if (!quiet && !(out_path && !strcmp(out_path, "-"))) {
        printf("route on %s: %d circuits, %d server%s (%dx%d grid), ", topo->name ? topo->name : "?", n, fab->servers,
               fab->servers == 1 ? "" : "s", fab->grid_rows, fab->grid_cols);
        if (fab->mzi)
            printf("%dx%d MZIs per server, ", fab->mzi, fab->mzi);
        else
            printf("no MZI mesh, ");
        printf("%d wavelength%s, ", fab->wavelengths, fab->wavelengths == 1 ? "" : "s");
        if (fab->fibers)
            printf("%d fibers per server pair\n", fab->fibers);
        else
            printf("fibers as needed\n");
        if (sum.method != TC_PH_FIBER_NONE) {
            printf("  fibers: %d in use (%s; busiest server pair %d circuits, LP bound %.2f)",
                   sum.fibers, sum.method == TC_PH_FIBER_ILP ? "exact ILP" : "ILP timed out: LP relaxation rounded",
                   sum.z, sum.lp_bound);
            for (int k = 0; k < sum.n_fib; k++)
                printf("%s %d-%d %d", k ? "," : ":", sum.fib[3 * k], sum.fib[3 * k + 1], sum.fib[3 * k + 2]);
            printf("\n");
        }
        long long mzis = 0;
        int longest = 0, wl = 0;
        for (int i = 0; i < rt->n_circuits; i++) {
            mzis += rt->circuits[i].n_mzi;
            if (rt->circuits[i].n_mzi > longest)
                longest = rt->circuits[i].n_mzi;
            if (rt->circuits[i].wavelength + 1 > wl)
                wl = rt->circuits[i].wavelength + 1;
        }
        if (fab->mzi)
            printf("  MZIs: %lld crossed in total, longest circuit %d; wavelengths in use %d\n", mzis, longest, wl);
        for (int i = 0; list && i < rt->n_circuits; i++) {
            const tc_ph_circuit *c = &rt->circuits[i];
            printf("  %d->%d: ", c->src, c->dst);
            if (c->wavelength >= 0) /* -1: no MZI mesh routed it, so no wavelength was assigned */
                printf("wavelength %d, ", c->wavelength);
            printf("servers");
            for (int k = 0; k < c->n_srv; k++)
                printf("%s%d", k ? "," : " ", rt->ints[c->srv_off + k]);
            if (c->n_srv > 1) {
                printf(", fibers");
                for (int k = 0; k + 1 < c->n_srv; k++)
                    printf("%s%d", k ? "," : " ", rt->ints[c->fib_off + k]);
            }
            if (fab->mzi)
                printf(", %d MZIs", c->n_mzi);
            putchar('\n');
        }
        if (out_path)
            printf("  wrote %s\n", out_path);
    }
    st = tc_cli_stdout_close(&ctx);
done:
    tc_sched_photonic_free(plan);
    tc_photonic_route_summary_free(&sum);
    tc_photonic_routes_free(rt);
    tc_photonic_fabric_free(fab);
    tc_topo_free(topo);
    free(src);
    free(dst);
    free(lines);
    return tc_cli_exit(st);
}
