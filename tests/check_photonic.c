/* The photonic pass: Alg. 2 costs (hand-computed), Tx/Rx splitting, Alg. 1 against brute force, Alg. 3 and 4
 * properties on random instances, whole plans (checker, JSON round trip), the fabric's XML rules, the
 * breakdown SVG and the command line's bad-input cases. */
#include "testutil.h"

#include "tacos/algo.h"
#include "tacos/check.h"
#include "tacos/emit.h"
#include "tacos/photonic.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * (fabs((double)(a)) + fabs((double)(b))) + 1e-18)

static tc_topo *topo_xml(const char *xml)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    ck_assert_msg(tc_topo_read_mem(&ctx, "t.xml", xml, strlen(xml), &t) == TC_OK, "%s", tu_diags());
    ck_assert_int_eq(tc_topo_apply_costs(&ctx, t, NULL), TC_OK);
    return t;
}

/* The first diagnostic reading xml produces. */
static const char *topo_error(const char *xml)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = NULL;
    ck_assert_int_ne(tc_topo_read_mem(&ctx, "t.xml", xml, strlen(xml), &t), TC_OK);
    return tu_diags();
}

/* A topology with the given directed links (alpha, beta per link). */
static tc_topo *mk_links(int n, int m, const int *src, const int *dst, const double *alpha, const double *beta)
{
    tc_topo *t = NULL;
    ck_assert_int_eq(tc_topo_create("links", n, &t), TC_OK);
    for (int l = 0; l < m; l++)
        ck_assert_int_eq(tc_topo_add_link(t, src[l], dst[l], 0, alpha[l], beta[l], 0), TC_OK);
    ck_assert_int_eq(tc_topo_index(t), TC_OK);
    return t;
}

#define gen tu_gen

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 2                                                                                            */

/* A line 0-1-2-3: pairs 0->3, 1->3, 1->2 of 1000 B; link 1->2 carries all three (c = 3), 0->3 has 3 hops. */
START_TEST(test_cost_line)
{
    const int src[] = {0, 1, 1, 2, 2, 3}, dst[] = {1, 0, 2, 1, 3, 2};
    const double a[] = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6}, b[] = {1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9};
    tc_topo *t = mk_links(4, 6, src, dst, a, b);
    tc_ph_pair pairs[] = {{0, 3, 1000}, {1, 3, 1000}, {1, 2, 1000}, {2, 2, 5000}};
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_ph_cost c;
    ck_assert_int_eq(tc_photonic_cost(&ctx, t, pairs, 4, &c), TC_OK);
    ck_assert_int_eq(c.connected, 1);
    ck_assert_int_eq(c.congestion, 3);
    ck_assert_int_eq(c.dilation, 3);
    ck_assert(NEAR(c.t.latency, 1e-6));
    ck_assert(NEAR(c.t.dilation, 2e-6));
    ck_assert(NEAR(c.t.bandwidth, 1e-6));
    ck_assert(NEAR(c.t.congestion, 2e-6));
    ck_assert(NEAR(tc_ph_breakdown_sum(&c.t), 6e-6)); /* alpha d + beta c w = 3 us + 3 us */
    tc_topo_free(t);
}
END_TEST

/* Links of different cost: 0->1 (1 us, 2 ns/B), 1->2 (3 us, 1 ns/B); pairs 0->2 (1000 B) and 1->2 (500 B). */
START_TEST(test_cost_heterogeneous)
{
    const int src[] = {0, 1}, dst[] = {1, 2};
    const double a[] = {1e-6, 3e-6}, b[] = {2e-9, 1e-9};
    tc_topo *t = mk_links(3, 2, src, dst, a, b);
    tc_ph_pair pairs[] = {{0, 2, 1000}, {1, 2, 500}};
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_ph_cost c;
    ck_assert_int_eq(tc_photonic_cost(&ctx, t, pairs, 2, &c), TC_OK);
    ck_assert_int_eq(c.congestion, 2);
    ck_assert_int_eq(c.dilation, 2);
    /* alpha term: route 0->1->2 sums 4 us; beta term: link 0->1 2 us, link 1->2 1.5 us */
    ck_assert(NEAR(c.t.latency, 3e-6));     /* the largest alpha on one route */
    ck_assert(NEAR(c.t.dilation, 1e-6));    /* 4 us - 3 us */
    ck_assert(NEAR(c.t.bandwidth, 2e-6));   /* 1000 B x the bottleneck 2 ns/B */
    ck_assert(NEAR(c.t.congestion, 0));     /* 2 us - 2 us */
    tc_topo_free(t);
}
END_TEST

START_TEST(test_cost_disconnected)
{
    const int src[] = {0, 1}, dst[] = {1, 2};
    const double a[] = {1e-6, 1e-6}, b[] = {1e-9, 1e-9};
    tc_topo *t = mk_links(3, 2, src, dst, a, b);
    tc_ph_pair pairs[] = {{0, 2, 100}, {2, 0, 100}};
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_ph_cost c;
    ck_assert_int_eq(tc_photonic_cost(&ctx, t, pairs, 2, &c), TC_OK);
    ck_assert_int_eq(c.connected, 0);
    ck_assert(tc_ph_breakdown_sum(&c.t) == 0);
    tc_topo_free(t);
}
END_TEST

/* Every rank sends w bytes k places ahead on a unidirectional ring of n: d = c = k, T = k a + k b w. */
START_TEST(test_cost_ring_shift)
{
    srand((unsigned)tu_seed());
    for (int rep = 0; rep < 20; rep++) {
        const int n = 3 + rand() % 38, k = 1 + rand() % (n - 1);
        const double a = (1 + rand() % 9) * 1e-7, b = 1.0 / ((1 + rand() % 100) * 1e9), w = 1 + rand() % 100000;
        tc_topo *t = NULL;
        ck_assert_int_eq(tc_topo_create("ring", n, &t), TC_OK);
        for (int v = 0; v < n; v++)
            tc_topo_add_link(t, v, (v + 1) % n, 0, a, b, 0);
        ck_assert_int_eq(tc_topo_index(t), TC_OK);
        tc_ph_pair *pairs = malloc((size_t)n * sizeof *pairs);
        for (int v = 0; v < n; v++)
            pairs[v] = (tc_ph_pair){v, (v + k) % n, w};
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_ph_cost c;
        ck_assert_int_eq(tc_photonic_cost(&ctx, t, pairs, n, &c), TC_OK);
        ck_assert_int_eq(c.dilation, k);
        ck_assert_int_eq(c.congestion, k);
        ck_assert_msg(NEAR(tc_ph_breakdown_sum(&c.t), k * a + k * b * w), "n %d k %d", n, k);
        free(pairs);
        tc_topo_free(t);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Tx/Rx splitting                                                                                   */

START_TEST(test_split_trace)
{
    tc_ph_pair p[] = {{0, 1, 1}, {0, 2, 1}, {1, 2, 1}};
    int part[3], k;
    ck_assert_int_eq(tc_photonic_split(p, 3, 3, 1, 1, part, &k), TC_OK);
    ck_assert_int_eq(k, 2);
    ck_assert_int_eq(part[0], part[2]);
    ck_assert_int_ne(part[0], part[1]);
}
END_TEST

START_TEST(test_split_random)
{
    srand((unsigned)tu_seed() + 1);
    for (int rep = 0; rep < 200; rep++) {
        const int n = 2 + rand() % 12, tx = rand() % 4, rx = rand() % 4;
        int m = 0;
        tc_ph_pair *p = malloc((size_t)n * n * sizeof *p);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b && rand() % 3)
                    p[m++] = (tc_ph_pair){a, b, 1};
        int *part = malloc((size_t)(m + 1) * sizeof *part), k = -1;
        ck_assert_int_eq(tc_photonic_split(p, m, n, tx, rx, part, &k), TC_OK);
        int bound = m > 0;
        int *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in);
        for (int i = 0; i < m; i++)
            out[p[i].src]++, in[p[i].dst]++;
        for (int v = 0; v < n; v++) {
            if (tx && (out[v] + tx - 1) / tx > bound)
                bound = (out[v] + tx - 1) / tx;
            if (rx && (in[v] + rx - 1) / rx > bound)
                bound = (in[v] + rx - 1) / rx;
        }
        ck_assert_int_eq(k, bound); /* the fewest sub-rounds possible */
        for (int q = 0; q < k; q++) {
            memset(out, 0, (size_t)n * sizeof *out);
            memset(in, 0, (size_t)n * sizeof *in);
            for (int i = 0; i < m; i++)
                if (part[i] == q)
                    out[p[i].src]++, in[p[i].dst]++;
            for (int v = 0; v < n; v++) {
                ck_assert(!tx || out[v] <= tx);
                ck_assert(!rx || in[v] <= rx);
            }
        }
        for (int i = 0; i < m; i++)
            ck_assert(part[i] >= 0 && part[i] < k);
        free(out);
        free(in);
        free(part);
        free(p);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 1                                                                                            */

/* Every feasible choice vector (recursion): the minimum of tc_photonic_ilp_value. */
static void brute(const tc_ph_ilp *p, int i, int *ch, double *best)
{
    const int T = p->n_topos;
    if (i == p->n_rounds) {
        double v = tc_photonic_ilp_value(p, ch);
        if (v < *best)
            *best = v;
        return;
    }
    for (int j = 0; j < T; j++) {
        if (isnan(p->cost[i * T + j]))
            continue; /* not available to round i */
        const int prev = i ? ch[i - 1] : 0;
        const int settable = j < p->n_static ? !(p->keep_only && p->keep_only[j]) : p->own[i] == j;
        if (j != prev && !settable)
            continue;
        if (i && p->tie && p->tie[i - 1] && j != prev && (j < p->n_static || prev < p->n_static))
            continue; /* the parts of a split step stay on one static topology */
        ch[i] = j;
        brute(p, i + 1, ch, best);
    }
}

START_TEST(test_ilp_trace)
{
    const double cost[] = {10, 1, NAN, 10, INFINITY, 1};
    tc_ph_ilp p = {.n_rounds = 2, .n_static = 1, .n_topos = 3, .cost = cost, .r = 3, .time_limit = 10};
    int choice[2];
    double obj;
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_ilp_solve(&ctx, &p, choice, &obj), TC_OK);
    ck_assert_int_eq(choice[0], 1);
    ck_assert_int_eq(choice[1], 2);
    ck_assert(NEAR(obj, 8));
}
END_TEST

START_TEST(test_ilp_brute_force)
{
    srand((unsigned)tu_seed() + 2);
    for (int rep = 0; rep < 150; rep++) {
        const int n = 1 + rand() % 5, S = 1 + rand() % 3;
        int own[5], T = S;
        for (int i = 0; i < n; i++)
            own[i] = i > 0 && rand() % 4 == 0 ? own[rand() % i] : T++; /* rounds with equal pairs share */
        double *cost = malloc((size_t)n * T * sizeof *cost);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < T; j++) {
                int first = -1;
                for (int k = 0; k < n && first < 0; k++)
                    if (own[k] == j)
                        first = k;
                if (j >= S && first > i)
                    cost[i * T + j] = NAN;
                else if (j == own[i])
                    cost[i * T + j] = 1 + rand() % 20; /* a round's own circuits always connect it */
                else
                    cost[i * T + j] = rand() % 5 == 0 ? INFINITY : 1 + rand() % 60;
            }
        unsigned char keep[3] = {(unsigned char)(rand() % 3 == 0), 0, 0}, tie[5] = {0};
        for (int i = 0; i + 1 < n && rep % 2; i++) /* odd instances: split steps (issue 22 item 3) */
            tie[i] = rand() % 3 == 0;
        tc_ph_ilp p = {.n_rounds = n, .n_static = S, .n_topos = T, .cost = cost, .own = own, .keep_only = keep,
                       .tie = tie, .r = rand() % 4 == 0 ? 0 : rand() % 40, .time_limit = 10};
        int choice[5], ch[5];
        double obj, best = INFINITY;
        tc_ctx ctx;
        tu_ctx(&ctx);
        ck_assert_msg(tc_photonic_ilp_solve(&ctx, &p, choice, &obj) == TC_OK, "%s", tu_diags());
        brute(&p, 0, ch, &best);
        ck_assert_msg(NEAR(obj, best), "instance %d: ILP %g, brute force %g", rep, obj, best);
        ck_assert(isfinite(obj));
        /* the choice itself is feasible */
        for (int i = 0; i < n; i++) {
            const int j = choice[i], prev = i ? choice[i - 1] : 0;
            ck_assert(!isnan(cost[i * T + j]));
            ck_assert(j == prev || (j < S ? !keep[j] : own[i] == j));
            ck_assert(!(i && tie[i - 1] && j != prev && (j < S || prev < S)));
        }
        free(cost);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 3: no two circuits of one wavelength on a waveguide or a fiber; paths join the right tiles     */

static void check_routes(const tc_ph_fabric *f, const tc_ph_routes *r, const int *src, const int *dst, int n)
{
    const int M = f->mzi, W = f->grid_cols * M, H = f->grid_rows * M;
    const int F = f->fibers > 0 ? f->fibers : M;
    long long E = (long long)H * (W - 1) + (long long)(H - 1) * W;
    unsigned long long *used = calloc((size_t)E, sizeof *used);
    ck_assert_int_eq(r->n_circuits, n);
    for (int i = 0; i < n; i++) {
        const tc_ph_circuit *c = &r->circuits[i];
        ck_assert_int_eq(c->src, src[i]);
        ck_assert_int_eq(c->dst, dst[i]);
        ck_assert(c->wavelength >= 0 && c->wavelength < f->wavelengths);
        const int *m = r->ints + c->mzi_off;
        int y0, x0, y1, x1;
        tc_photonic_tile_rect(f, src[i], &y0, &x0, &y1, &x1);
        ck_assert(m[0] / W >= y0 && m[0] / W < y1 && m[0] % W >= x0 && m[0] % W < x1);
        tc_photonic_tile_rect(f, dst[i], &y0, &x0, &y1, &x1);
        const int last = m[c->n_mzi - 1];
        ck_assert(last / W >= y0 && last / W < y1 && last % W >= x0 && last % W < x1);
        int hop = 0;
        ck_assert_int_eq(r->ints[c->srv_off], f->server_of[src[i]]);
        ck_assert_int_eq(r->ints[c->srv_off + c->n_srv - 1], f->server_of[dst[i]]);
        for (int k = 0; k + 1 < c->n_mzi; k++) {
            const int a = m[k], b = m[k + 1], ay = a / W, ax = a % W, by = b / W, bx = b % W;
            ck_assert_int_eq(abs(ay - by) + abs(ax - bx), 1); /* 4-neighbours */
            long long e = ay == by ? (long long)ay * (W - 1) + (ax < bx ? ax : bx)
                                   : (long long)H * (W - 1) + (long long)(ay < by ? ay : by) * W + ax;
            ck_assert_msg(!(used[e] >> c->wavelength & 1), "circuit %d shares a waveguide on wavelength %d", i,
                          c->wavelength);
            used[e] |= 1ull << c->wavelength;
            if (ay / M != by / M || ax / M != bx / M) { /* a fiber: at an attach offset, the recorded index */
                const int off = ay / M != by / M ? ax % M : ay % M;
                const int fib = r->ints[c->fib_off + hop];
                ck_assert(fib >= 0 && fib < F);
                ck_assert_int_eq(off, (int)((2LL * fib + 1) * M / (2LL * F)));
                hop++;
                ck_assert_int_eq(r->ints[c->srv_off + hop], (by / M) * f->grid_cols + bx / M);
            }
        }
        ck_assert_int_eq(hop, c->n_srv - 1);
    }
    free(used);
}

START_TEST(test_mzi_random)
{
    srand((unsigned)tu_seed() + 3);
    int routed = 0;
    for (int rep = 0; rep < 40; rep++) {
        const int gr = 1 + rand() % 2, gc = 1 + rand() % 2, per = 1 + rand() % 4, M = 4 + rand() % 9,
                  W = 1 + rand() % 3, F = rand() % 3;
        tc_ph_fabric *f = NULL;
        if (tc_photonic_fabric_make(gr, gc, per, M, W, F > M ? M : F, &f) != TC_OK)
            continue;
        const int N = f->n_npus, n = 1 + rand() % (2 * N);
        if (N < 2) {
            tc_photonic_fabric_free(f);
            continue;
        }
        int *src = malloc((size_t)n * sizeof *src), *dst = malloc((size_t)n * sizeof *dst);
        for (int i = 0; i < n; i++) {
            src[i] = rand() % N;
            do
                dst[i] = rand() % N;
            while (dst[i] == src[i]);
        }
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_ph_routes *r = NULL;
        tc_ph_route_summary sum;
        tc_status st = tc_photonic_route(&ctx, f, src, dst, n, 10, "test", &r, &sum);
        if (st == TC_OK) {
            routed++;
            check_routes(f, r, src, dst, n);
            tc_photonic_route_summary_free(&sum);
        } else {
            ck_assert_int_eq(st, TC_ERR_INVALID);
            ck_assert_msg(strstr(tu_diags(), "tacosc: error: test: circuit ") && strstr(tu_diags(), "no "),
                          "%s", tu_diags());
        }
        tc_photonic_routes_free(r);
        tc_photonic_fabric_free(f);
        free(src);
        free(dst);
    }
    ck_assert_int_gt(routed, 12);
}
END_TEST

/* Four NPUs on a 2x2 mesh, one MZI each: NPU 0's MZI has two waveguides, so a third circuit out of it
 * finds no wavelength. */
START_TEST(test_mzi_no_wavelength)
{
    tc_ph_fabric *f = NULL;
    ck_assert_int_eq(tc_photonic_fabric_make(1, 1, 4, 2, 1, 0, &f), TC_OK);
    const int src[] = {0, 0, 0}, dst[] = {1, 2, 3};
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_ph_routes *r = NULL;
    tc_ph_route_summary sum;
    ck_assert_int_eq(tc_photonic_route(&ctx, f, src, dst, 2, 10, "round 4 (step 4)", &r, &sum), TC_OK);
    check_routes(f, r, src, dst, 2);
    tc_photonic_routes_free(r);
    r = NULL;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_route(&ctx, f, src, dst, 3, 10, "round 4 (step 4)", &r, &sum), TC_ERR_INVALID);
    ck_assert_str_eq(tu_diags(), "tacosc: error: round 4 (step 4): circuit 0->3: no free wavelength on any path "
                                 "through the 2x2 MZI mesh (1 wavelength)\n");
    tc_photonic_fabric_free(f);
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Alg. 4: flow conservation, loads, z >= the LP bound                                               */

static void check_fibers(const tc_ph_fiber_in *in, const tc_ph_fiber_out *o)
{
    int *load = calloc((size_t)in->n_edges + 1, sizeof *load), z = 0;
    for (int e = 0; e < in->n_edges; e++)
        load[e] = in->edge_count ? in->edge_count[e] : 0;
    for (int i = 0; i < in->n_circ; i++) {
        const int a = o->path_off[i], b = o->path_off[i + 1];
        ck_assert_int_gt(b, a);
        ck_assert_int_eq(o->path[a], in->src[i]);     /* leaves its source */
        ck_assert_int_eq(o->path[b - 1], in->dst[i]); /* ends at its destination */
        for (int k = a; k + 1 < b; k++) {             /* each hop an edge; no server twice */
            const int e = o->edge_of[k], u = o->path[k], v = o->path[k + 1];
            ck_assert(e >= 0 && e < in->n_edges);
            ck_assert((in->edge_u[e] == u && in->edge_v[e] == v) || (in->edge_u[e] == v && in->edge_v[e] == u));
            load[e]++;
            for (int q = a; q <= k; q++)
                ck_assert_int_ne(o->path[q], v);
        }
    }
    for (int e = 0; e < in->n_edges; e++) {
        ck_assert_int_eq(load[e], o->load[e]);
        if (load[e] > z)
            z = load[e];
    }
    ck_assert_int_eq(o->peak, z);                          /* the busiest edge as routed */
    ck_assert_int_le(z, o->z > o->capacity ? o->z : o->capacity); /* shortened within the capacity */
    ck_assert(o->lp_bound <= o->z + 1e-6);                 /* the optimum is above the LP bound */
    ck_assert_int_ge(o->z, (int)ceil(o->lp_bound - 1e-6));
    free(load);
}

START_TEST(test_fiber_random)
{
    srand((unsigned)tu_seed() + 4);
    for (int rep = 0; rep < 25; rep++) {
        const int R = 1 + rand() % 4, C = 2 + rand() % 4, V = R * C, n = 1 + rand() % 40;
        int *u, *v, E;
        ck_assert_int_eq(tc_photonic_grid_edges(R, C, &u, &v, &E), TC_OK);
        ck_assert_int_eq(E, R * (C - 1) + (R - 1) * C);
        for (int k = 0; k < E; k++) /* grid neighbours */
            ck_assert(v[k] - u[k] == 1 ? u[k] / C == v[k] / C : v[k] - u[k] == C);
        int *cnt = malloc((size_t)E * sizeof *cnt);
        for (int e = 0; e < E; e++)
            cnt[e] = rand() % 3;
        int *s = malloc((size_t)n * sizeof *s), *d = malloc((size_t)n * sizeof *d);
        for (int i = 0; i < n; i++)
            s[i] = rand() % V, d[i] = rand() % V; /* some within one server */
        tc_ph_fiber_in in = {.n_servers = V, .n_edges = E, .edge_u = u, .edge_v = v,
                             .edge_count = rand() % 2 ? cnt : NULL, .n_circ = n, .src = s, .dst = d, .time_limit = 0.5};
        tc_ph_fiber_out *o = NULL;
        tc_ctx ctx;
        tu_ctx(&ctx);
        ck_assert_msg(tc_photonic_fiber_route(&ctx, &in, &o) == TC_OK, "%s", tu_diags());
        check_fibers(&in, o); /* exact, or (rarely: branch and bound cannot close a gap in 0.5 s) rounded */
        ck_assert(o->method == TC_PH_FIBER_ILP || o->method == TC_PH_FIBER_LP);
        tc_photonic_fiber_out_free(o);
        free(u), free(v), free(cnt), free(s), free(d);
    }
}
END_TEST

/* issue 22: the paper's fiber setting (an 8 x 8 server grid, 512 random circuits between distinct servers,
 * drawn as bench-photonic draws them): seed 2 overflowed a path buffer when two circuits were rerouted
 * together (heap-buffer-overflow under make asan); two fresh seeds beside it.  Every routing is checked. */
START_TEST(test_fiber_paper_scale)
{
    const int R = 8, C = 8, V = R * C, n = 512;
    int *u, *v, E;
    ck_assert_int_eq(tc_photonic_grid_edges(R, C, &u, &v, &E), TC_OK);
    const unsigned long seeds[] = {2, tu_seed() % 100000 + 7, tu_seed() % 100000 + 100007};
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        int *src = malloc((size_t)n * sizeof *src), *dst = malloc((size_t)n * sizeof *dst);
        tc_rng rng;
        tc_rng_seed(&rng, seeds[k]);
        for (int i = 0; i < n; i++) {
            src[i] = (int)tc_rng_below(&rng, (uint64_t)V);
            do
                dst[i] = (int)tc_rng_below(&rng, (uint64_t)V);
            while (dst[i] == src[i]);
        }
        tc_ph_fiber_in in = {.n_servers = V, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = src,
                             .dst = dst, .time_limit = 1};
        tc_ph_fiber_out *o = NULL;
        tc_ctx ctx;
        tu_ctx(&ctx);
        ck_assert_msg(tc_photonic_fiber_route(&ctx, &in, &o) == TC_OK, "seed %lu: %s", seeds[k], tu_diags());
        check_fibers(&in, o);
        tc_photonic_fiber_out_free(o);
        free(src), free(dst);
    }
    free(u), free(v);
}
END_TEST

/* The paper's fiber setting (64 servers in an 8x8 grid, 512 circuits within tx = rx = 8, as `route
 * --random 512`): improve() used to shrink a path buffer that shorten() then overwrote with a longer
 * reroute (heap overflow; with the old fiber.c under ASan, TC_TEST_SEED=2 reports it here).  The routing
 * must come back valid (check_fibers: every circuit joins its servers over grid edges, loads and fiber
 * counts consistent); `make valgrind` checks the memory. */
START_TEST(test_fiber_paper_scale_route)
{
    srand((unsigned)tu_seed() + 9);
    int *u, *v, E;
    ck_assert_int_eq(tc_photonic_grid_edges(8, 8, &u, &v, &E), TC_OK);
    for (int rep = 0; rep < 3; rep++) {
        const int n = 512;
        int *s = malloc((size_t)n * sizeof *s), *d = malloc((size_t)n * sizeof *d);
        for (int k = 0; k < 8; k++) { /* as `route --random` with tx = rx = 8: 8 random derangements */
            int *pm = d + 64 * k, fixed = 1;
            while (fixed) {
                for (int i = 0; i < 64; i++)
                    pm[i] = i;
                for (int i = 63; i > 0; i--) {
                    const int j = rand() % (i + 1), t = pm[i];
                    pm[i] = pm[j], pm[j] = t;
                }
                fixed = 0;
                for (int i = 0; i < 64; i++)
                    fixed |= pm[i] == i;
            }
            for (int i = 0; i < 64; i++)
                s[64 * k + i] = i;
        }
        tc_ph_fiber_in in = {.n_servers = 64, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = s,
                             .dst = d, .time_limit = 0.3};
        tc_ph_fiber_out *o = NULL;
        tc_ctx ctx;
        tu_ctx(&ctx);
        ck_assert_msg(tc_photonic_fiber_route(&ctx, &in, &o) == TC_OK, "%s", tu_diags());
        check_fibers(&in, o);
        tc_photonic_fiber_out_free(o);
        free(s), free(d);
    }
    free(u), free(v);
}
END_TEST

/* Brute force for Alg. 4: every simple path of every circuit (depth-first over circuits, pruned at the
 * best z so far): the fewest circuits on the busiest edge. */
typedef struct fbrute {
    int V, E;
    const int *u, *v;
    int n, *s, *d;
    int load[32];
    int best;
} fbrute;

static int fb_edge(const fbrute *b, int x, int y)
{
    for (int e = 0; e < b->E; e++)
        if ((b->u[e] == x && b->v[e] == y) || (b->u[e] == y && b->v[e] == x))
            return e;
    return -1;
}

static void fb_circuit(fbrute *b, int i, int cur);

/* extend circuit i's path from server `at` (servers in `seen`) */
static void fb_walk(fbrute *b, int i, int at, unsigned seen, int cur)
{
    if (at == b->d[i]) {
        fb_circuit(b, i + 1, cur);
        return;
    }
    for (int w = 0; w < b->V; w++) {
        const int e = fb_edge(b, at, w);
        if (e < 0 || (seen >> w & 1) || b->load[e] + 1 >= b->best)
            continue;
        b->load[e]++;
        fb_walk(b, i, w, seen | 1u << w, cur > b->load[e] ? cur : b->load[e]);
        b->load[e]--;
    }
}

static void fb_circuit(fbrute *b, int i, int cur)
{
    if (i == b->n) {
        if (cur < b->best)
            b->best = cur;
        return;
    }
    if (b->s[i] == b->d[i])
        fb_circuit(b, i + 1, cur);
    else
        fb_walk(b, i, b->s[i], 1u << b->s[i], cur);
}

/* Issue 22 item 6: Alg. 4's z is the optimum, against brute force, on random small grids and rings (whose
 * LP bound is weak: a ring's circuits split in halves); also with a 1 ms limit, where the plan's
 * incumbent and the gap stay honest (z >= the optimum, the proven bound <= it). */
START_TEST(test_fiber_brute_force)
{
    srand((unsigned)tu_seed() + 22);
    for (int rep = 0; rep < 60; rep++) {
        fbrute b = {.best = 1 << 20};
        int *u = NULL, *v = NULL, E = 0, V;
        if (rep % 3 == 2) { /* a ring of 4 to 7 servers */
            V = 4 + rand() % 4, E = V;
            u = malloc((size_t)E * sizeof *u), v = malloc((size_t)E * sizeof *v);
            for (int k = 0; k < V; k++)
                u[k] = k, v[k] = (k + 1) % V;
        } else {
            const int R = 2 + rand() % 2, C = 2 + rand() % 2;
            V = R * C;
            ck_assert_int_eq(tc_photonic_grid_edges(R, C, &u, &v, &E), TC_OK);
        }
        const int n = 2 + rand() % 5;
        int s[8], d[8];
        for (int i = 0; i < n; i++)
            s[i] = rand() % V, d[i] = rand() % V;
        b.V = V, b.E = E, b.u = u, b.v = v, b.n = n, b.s = s, b.d = d;
        fb_circuit(&b, 0, 0);
        for (int lim = 0; lim < 2; lim++) {
            tc_ph_fiber_in in = {.n_servers = V, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = s,
                                 .dst = d, .time_limit = lim ? 1e-6 : 10};
            tc_ph_fiber_out *o = NULL;
            tc_ctx ctx;
            tu_ctx(&ctx);
            ck_assert_msg(tc_photonic_fiber_route(&ctx, &in, &o) == TC_OK, "%s", tu_diags());
            check_fibers(&in, o);
            if (!lim || o->method == TC_PH_FIBER_ILP)
                ck_assert_msg(o->z == b.best, "instance %d: fiber ILP z = %d, brute force %d", rep, o->z, b.best);
            else
                ck_assert_int_ge(o->z, b.best);
            ck_assert_int_le((int)ceil(o->bound - 1e-6), b.best); /* the proven bound is a bound */
            ck_assert(o->bound >= o->lp_bound - 1e-9);
            if (o->method == TC_PH_FIBER_ILP)
                ck_assert_int_eq((int)ceil(o->bound - 1e-6), o->z); /* proven: no gap */
            tc_photonic_fiber_out_free(o);
        }
        free(u), free(v);
    }
}
END_TEST

/* k 4-cycles, each with circuits 0->2 and 1->3: the LP splits them (bound 1), any integer routing puts two
 * on one edge.  k = 4: branch and bound proves z = 2; k = 30 with a microsecond: the LP rounded. */
static void gadgets(int k, double limit, int method)
{
    int V = 4 * k, E = 4 * k, n = 2 * k;
    int *u = malloc((size_t)E * sizeof *u), *v = malloc((size_t)E * sizeof *v), *s = malloc((size_t)n * sizeof *s),
        *d = malloc((size_t)n * sizeof *d);
    for (int g = 0; g < k; g++) {
        for (int q = 0; q < 4; q++)
            u[4 * g + q] = 4 * g + q, v[4 * g + q] = 4 * g + (q + 1) % 4;
        s[2 * g] = 4 * g, d[2 * g] = 4 * g + 2, s[2 * g + 1] = 4 * g + 1, d[2 * g + 1] = 4 * g + 3;
    }
    tc_ph_fiber_in in = {.n_servers = V, .n_edges = E, .edge_u = u, .edge_v = v, .n_circ = n, .src = s, .dst = d,
                         .time_limit = limit};
    tc_ph_fiber_out *o = NULL;
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_fiber_route(&ctx, &in, &o), TC_OK);
    check_fibers(&in, o);
    ck_assert_int_eq(o->z, 2);
    ck_assert_int_eq(o->peak, 2);
    ck_assert(NEAR(o->lp_bound, 1));
    ck_assert_int_eq(o->method, method);
    tc_photonic_fiber_out_free(o);
    free(u), free(v), free(s), free(d);
}

START_TEST(test_fiber_gap_and_time_limit)
{
    gadgets(4, 10, TC_PH_FIBER_ILP);
    gadgets(30, 1e-6, TC_PH_FIBER_LP);
}
END_TEST

START_TEST(test_fiber_disconnected)
{
    const int u[] = {0}, v[] = {1}, s[] = {0, 2}, d[] = {1, 1}, cs[] = {5, 9}, cd[] = {7, 3};
    tc_ph_fiber_in in = {.n_servers = 3, .n_edges = 1, .edge_u = u, .edge_v = v, .n_circ = 2, .src = s, .dst = d,
                         .time_limit = 10, .what = "round 2 (step 2)", .circ_src = cs, .circ_dst = cd};
    tc_ph_fiber_out *o = NULL;
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_fiber_route(&ctx, &in, &o), TC_ERR_INVALID);
    ck_assert_str_eq(tu_diags(), "tacosc: error: round 2 (step 2): circuit 9->3: server 2 cannot reach server 1 "
                                 "(disconnected server grid)\n");
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Whole plans                                                                                       */

static const char *const FABRIC16 =
    "<topology name=\"t16\" npus=\"16\">\n"
    "  <link src=\"0\" dst=\"1\" duplex=\"1\"/><link src=\"1\" dst=\"2\" duplex=\"1\"/>\n"
    "  <link src=\"2\" dst=\"3\" duplex=\"1\"/><link src=\"3\" dst=\"4\" duplex=\"1\"/>\n"
    "  <link src=\"4\" dst=\"5\" duplex=\"1\"/><link src=\"5\" dst=\"6\" duplex=\"1\"/>\n"
    "  <link src=\"6\" dst=\"7\" duplex=\"1\"/><link src=\"7\" dst=\"8\" duplex=\"1\"/>\n"
    "  <link src=\"8\" dst=\"9\" duplex=\"1\"/><link src=\"9\" dst=\"10\" duplex=\"1\"/>\n"
    "  <link src=\"10\" dst=\"11\" duplex=\"1\"/><link src=\"11\" dst=\"12\" duplex=\"1\"/>\n"
    "  <link src=\"12\" dst=\"13\" duplex=\"1\"/><link src=\"13\" dst=\"14\" duplex=\"1\"/>\n"
    "  <link src=\"14\" dst=\"15\" duplex=\"1\"/><link src=\"15\" dst=\"0\" duplex=\"1\"/>\n"
    "  <nodes size=\"4\"/>\n"
    "  <photonic reconfig=\"2us\" tx=\"3\" rx=\"3\" wavelengths=\"2\" mzi=\"8\" grid=\"2x2\" fibers=\"4\"/>\n"
    "</topology>\n";

/* Plan s on t; check the circuits of every reconfiguration and the JSON round trip. */
static tc_sched_photonic *plan_checked(const tc_topo *t, tc_sched *s, const char *fallback)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_photonic_opts o;
    tc_photonic_opts_init(&o);
    o.fallback = fallback;
    tc_sched_photonic *ph = NULL;
    ck_assert_msg(tc_photonic_plan(&ctx, t, s, &o, &ph) == TC_OK, "%s %s: %s", s->algo, tc_coll_name(s->coll),
                  tu_diags());
    s->photonic = ph;
    s->time = tc_ph_breakdown_sum(&ph->total);
    tc_check_opts co = {.topo = t};
    ck_assert_msg(tc_sched_check(&ctx, s, &co, "plan") == TC_OK, "%s", tu_diags());
    /* totals add up; every step appears; reconfigurations are counted */
    tc_ph_breakdown sum = {0};
    int reconf = 0;
    for (int i = 0; i < ph->n_rounds; i++) {
        const tc_ph_round *r = &ph->rounds[i];
        sum.latency += r->t.latency, sum.bandwidth += r->t.bandwidth, sum.congestion += r->t.congestion;
        sum.dilation += r->t.dilation, sum.reconfig += r->t.reconfig;
        reconf += r->reconfig;
        ck_assert(r->reconfig ? NEAR(r->t.reconfig, ph->reconfig) : r->t.reconfig == 0);
        ck_assert(r->reconfig || r->n_circ == 0);
    }
    ck_assert_int_eq(reconf, ph->n_reconfigs);
    ck_assert(NEAR(tc_ph_breakdown_sum(&sum), tc_ph_breakdown_sum(&ph->total)));
    /* verify's rules hold on every plan the pass makes, and its recomputed time is the stored one */
    ck_assert_msg(tc_photonic_verify(&ctx, s, t, "plan") == TC_OK, "%s", tu_diags());
    /* JSON: write, read, write again: the same bytes; a clone writes them too */
    char *path = tu_tmpfile(".json", NULL), *path2 = tu_tmpfile(".json", NULL);
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_OK);
    fclose(f);
    tc_sched *back = NULL, *clone = NULL;
    ck_assert_msg(tc_emit_json_read(&ctx, path, &back) == TC_OK, "%s", tu_diags());
    ck_assert_ptr_nonnull(back->photonic);
    ck_assert_int_eq(tc_sched_clone(back, &clone), TC_OK);
    f = fopen(path2, "w");
    ck_assert_int_eq(tc_emit_json_write(&ctx, clone, f), TC_OK);
    fclose(f);
    char *a = tu_slurp(path, NULL), *b = tu_slurp(path2, NULL);
    ck_assert_str_eq(a, b);
    free(a), free(b);
    tc_sched_free(back);
    tc_sched_free(clone);
    remove(path), remove(path2);
    free(path), free(path2);
    return ph;
}

START_TEST(test_plan_generators)
{
    tc_topo *t = topo_xml(FABRIC16);
    tc_ph_fabric *fab = NULL;
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_fabric_create(&ctx, t, &fab), TC_OK);
    static const struct { const char *algo; tc_coll coll; } cases[] = {
        {"rhd", TC_COLL_REDUCESCATTER}, {"ring", TC_COLL_ALLGATHER},  {"ring2", TC_COLL_ALLREDUCE},
        {"swing", TC_COLL_ALLREDUCE},   {"hier-ring", TC_COLL_ALLREDUCE}, {"hier-rec", TC_COLL_REDUCESCATTER},
        {"dex", TC_COLL_ALLTOALL},      {"tacos", TC_COLL_ALLGATHER},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tc_sched *s = gen(cases[c].algo, t, cases[c].coll, 1 << 20);
        tc_sched_photonic *ph = plan_checked(t, s, NULL);
        /* the circuits of every reconfiguration obey the fabric */
        for (int i = 0; i < ph->n_rounds; i++) {
            const tc_ph_round *r = &ph->rounds[i];
            if (!r->n_circ)
                continue;
            int *src = malloc((size_t)r->n_circ * sizeof *src), *dst = malloc((size_t)r->n_circ * sizeof *dst);
            tc_ph_routes rt = {.n_circuits = r->n_circ, .circuits = ph->circuits + r->circ_off, .n_ints = ph->n_ints,
                               .ints = ph->ints};
            for (int k = 0; k < r->n_circ; k++)
                src[k] = rt.circuits[k].src, dst[k] = rt.circuits[k].dst;
            check_routes(fab, &rt, src, dst, r->n_circ);
            free(src), free(dst);
        }
        tc_sched_free(s);
    }
    tc_photonic_fabric_free(fab);
    tc_topo_free(t);
}
END_TEST

/* Tx/Rx: direct all-gather on 16 NPUs (15 peers each) with tx = rx = 3 runs in 5 sub-rounds, each within
 * the limits, together carrying the step's pairs. */
START_TEST(test_plan_split)
{
    /* the ring of FABRIC16 with transmitters and receivers only (no mesh to route through) */
    char *xml = tc_strdup(FABRIC16), *ph_at = strstr(xml, "<photonic");
    strcpy(ph_at, "<photonic reconfig=\"2us\" tx=\"3\" rx=\"3\"/>\n</topology>\n");
    tc_topo *t = topo_xml(xml);
    free(xml);
    tc_sched *s = gen("direct", t, TC_COLL_ALLGATHER, 1 << 20);
    tc_sched_photonic *ph = plan_checked(t, s, "ring");
    ck_assert_int_eq(ph->n_rounds, 5);
    int seen[16][16] = {{0}};
    for (int i = 0; i < ph->n_rounds; i++) {
        const tc_ph_round *r = &ph->rounds[i];
        ck_assert_int_eq(r->n_sub, 5);
        ck_assert_int_eq(r->sub, i);
        ck_assert_int_ge(r->pair_off, 0);
        int out[16] = {0}, in[16] = {0};
        for (int k = 0; k < r->n_pairs; k++) {
            int a = ph->ints[r->pair_off + 2 * k], b = ph->ints[r->pair_off + 2 * k + 1];
            ck_assert(++out[a] <= 3 && ++in[b] <= 3);
            seen[a][b]++;
        }
    }
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++)
            ck_assert_int_eq(seen[a][b], a != b);
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* A topology of n NPUs with every directed link (fully connected), 1 us and 1 ns/B each, and a fabric. */
static tc_topo *full_mesh(int n, double r, int tx, int rx)
{
    int src[64], dst[64], m = 0;
    double a[64], b[64];
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++)
            if (u != v)
                src[m] = u, dst[m] = v, a[m] = 1e-6, b[m] = 1e-9, m++;
    tc_topo *t = mk_links(n, m, src, dst, a, b);
    t->photonic.present = t->photonic.reconfig_set = 1;
    t->photonic.reconfig_delay = r;
    t->photonic.tx_per_npu = tx;
    t->photonic.rx_per_npu = rx;
    return t;
}

/* Issue 22 item 3: tx/rx limit circuits, not G0's fixed links.  G0 fully connected (4 NPUs, a = 1 us,
 * b = 1 ns/B), tx = rx = 1, direct all-gather of 1000 B chunks: the step splits into 3 sub-rounds for
 * circuits, but G0 carries it whole.  Hand-computed: every pair one hop, c = d = 1, so the step costs
 * a + b w = 2 us on G0 (split, it would cost 3 x 2 us); each own-circuit sub-round costs 2 us + r. */
START_TEST(test_plan_static_unsplit)
{
    tc_topo *t = full_mesh(4, 1e-9, 1, 1);
    tc_sched *s = gen("direct", t, TC_COLL_ALLGATHER, 4000);
    ck_assert_int_eq((int)s->chunk_bytes, 1000);
    tc_sched_photonic *ph = plan_checked(t, s, "none");
    ck_assert_int_eq(ph->n_rounds, 3);
    ck_assert_int_eq(ph->n_reconfigs, 0);
    ck_assert_msg(NEAR(tc_ph_breakdown_sum(&ph->total), 2e-6), "total %g", tc_ph_breakdown_sum(&ph->total));
    ck_assert(NEAR(tc_ph_breakdown_sum(&ph->fixed), 2e-6));
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ph->rounds[i].kind, TC_PH_INITIAL);
        ck_assert_int_eq(ph->rounds[i].n_sub, 3);
        ck_assert(NEAR(tc_ph_breakdown_sum(&ph->rounds[i].t), 2e-6 / 3));
    }
    tc_sched_free(s);
    tc_topo_free(t);
    /* a mixed plan: G0 a line 0-1-2-3 (c = 4, d = 3 for the step: 3 a + 4 b w = 7 us on G0, whole); own
     * circuits: 3 sub-rounds of one circuit per NPU, a + b w = 2 us each, plus r = 1 ns before each:
     * 6.003 us < 7 us, so every part runs on its own circuits (a step's parts never mix G0 and circuits) */
    const int ls[] = {0, 1, 1, 2, 2, 3}, ld[] = {1, 0, 2, 1, 3, 2};
    const double la[] = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6}, lb[] = {1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9};
    t = mk_links(4, 6, ls, ld, la, lb);
    t->photonic.present = t->photonic.reconfig_set = 1;
    t->photonic.reconfig_delay = 1e-9;
    t->photonic.tx_per_npu = t->photonic.rx_per_npu = 1;
    s = gen("direct", t, TC_COLL_ALLGATHER, 4000);
    ph = plan_checked(t, s, "none");
    ck_assert(NEAR(tc_ph_breakdown_sum(&ph->fixed), 7e-6));
    ck_assert_int_eq(ph->n_reconfigs, 3);
    ck_assert_msg(NEAR(tc_ph_breakdown_sum(&ph->total), 6.003e-6), "total %g", tc_ph_breakdown_sum(&ph->total));
    tc_sched_free(s);
    /* r = 1 us: own circuits cost 9 us, G0 7 us whole: all three parts stay on G0 */
    t->photonic.reconfig_delay = 1e-6;
    s = gen("direct", t, TC_COLL_ALLGATHER, 4000);
    ph = plan_checked(t, s, "none");
    ck_assert_int_eq(ph->n_reconfigs, 0);
    ck_assert(NEAR(tc_ph_breakdown_sum(&ph->total), 7e-6));
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* Issue 22 item 4 (PCCL §4.2: a GPU's transmitters are divided uniformly among its circuits): direct
 * all-gather on 4 NPUs, tx = rx = 3, G0 a slow line.  Own circuits: every NPU starts and ends 3, so each
 * circuit has a third of the bandwidth: a + 3 b w = 1 us + 3 us (not a + b w = 2 us).  The ring fallback
 * (2 circuits per NPU, beta 2b): pairs two hops apart cross two links, two pairs per link, so c = 2 and
 * d = 2: 2 a + 2 x 2 b w = 6 us.  r = 1 ns. */
START_TEST(test_plan_shared_transmitters)
{
    const int ls[] = {0, 1, 1, 2, 2, 3}, ld[] = {1, 0, 2, 1, 3, 2};
    const double la[] = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6}, lb[] = {1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9};
    tc_topo *t = mk_links(4, 6, ls, ld, la, lb);
    t->photonic.present = t->photonic.reconfig_set = 1;
    t->photonic.reconfig_delay = 1e-9;
    t->photonic.tx_per_npu = t->photonic.rx_per_npu = 3;
    tc_sched *s = gen("direct", t, TC_COLL_ALLGATHER, 4000);
    tc_sched_photonic *ph = plan_checked(t, s, "none");
    ck_assert_int_eq(ph->n_rounds, 1);
    ck_assert_int_eq(ph->rounds[0].kind, TC_PH_OWN);
    ck_assert(NEAR(ph->rounds[0].t.bandwidth, 3e-6));
    ck_assert(NEAR(ph->rounds[0].t.congestion, 0));
    ck_assert_msg(NEAR(tc_ph_breakdown_sum(&ph->total), 4.001e-6), "total %g", tc_ph_breakdown_sum(&ph->total));
    tc_sched_free(s);
    /* ring all-gather (each step r -> r+1, 1000 B): on the ring fallback every NPU starts 2 circuits, so a
     * step costs a + 2 b w = 3 us there, against a + b w = 2 us on the steps' own circuits (the same
     * circuits in all 3 steps): one reconfiguration to them, 3 x 2 us + 1 ns */
    s = gen("ring", t, TC_COLL_ALLGATHER, 4000);
    ph = plan_checked(t, s, "ring");
    ck_assert_int_eq(ph->n_reconfigs, 1);
    for (int i = 0; i < ph->n_rounds; i++)
        ck_assert_int_eq(ph->rounds[i].kind, TC_PH_OWN);
    ck_assert_msg(NEAR(tc_ph_breakdown_sum(&ph->total), 6.001e-6), "total %g", tc_ph_breakdown_sum(&ph->total));
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* Issue 22 item 2: a choice the fabric cannot route is planned again without it.  A 2x2 MZI mesh with one
 * wavelength cannot hold direct all-gather's 12 circuits (tiny.xml of test_cli_bad_input): with no fallback
 * the plan keeps G0 and equals the fixed time (Alg. 2 of the whole step on G0, hand: line 0-1-2-3, c = 4,
 * d = 3, a = 0.5 us, so 3 a + 4 b w), and the warning names the circuits left out. */
START_TEST(test_plan_unroutable_resolved)
{
    tc_topo *t = topo_xml("<topology name=\"tiny\" npus=\"4\">\n<link src=\"0\" dst=\"1\" duplex=\"1\"/><link "
                          "src=\"1\" dst=\"2\" duplex=\"1\"/>\n<link src=\"2\" dst=\"3\" duplex=\"1\"/>\n<photonic "
                          "reconfig=\"1ns\" mzi=\"2\"/>\n</topology>\n");
    tc_sched *s = gen("direct", t, TC_COLL_ALLGATHER, 4000);
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_photonic_opts o;
    tc_photonic_opts_init(&o);
    o.fallback = "none";
    tc_sched_photonic *ph = NULL;
    ck_assert_msg(tc_photonic_plan(&ctx, t, s, &o, &ph) == TC_OK, "%s", tu_diags());
    ck_assert_str_eq(tu_diags(), "tacosc: warning: photonic: round 0's circuits cannot be set up on the fabric (round "
                                 "0 (step 0): circuit 0->3: no free wavelength on any path through the 2x2 MZI mesh "
                                 "(1 wavelength)): planned again without it\n");
    ck_assert_int_eq(ph->n_reconfigs, 0);
    ck_assert_int_eq(ph->rounds[0].kind, TC_PH_INITIAL);
    /* and the summary says so */
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    tc_photonic_summary_write(ph, mf);
    fclose(mf);
    ck_assert_msg(strstr(text, "  photonic: 1 configuration the fabric could not route left out, the rounds planned "
                               "again without it (the warnings say which)\n"),
                  "%s", text);
    free(text);
    const double a = t->links[0].alpha, b = t->links[0].beta;
    ck_assert(NEAR(tc_ph_breakdown_sum(&ph->total), 3 * a + 4 * b * 1000));
    ck_assert(NEAR(tc_ph_breakdown_sum(&ph->total), tc_ph_breakdown_sum(&ph->fixed)));
    tc_sched_photonic_free(ph);
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* `verify` of the photonic section (tc_photonic_verify): a real plan passes; each tampering is rejected
 * naming its rule: two circuits of one wavelength on one MZI path (conflict), a dropped circuit (pairs),
 * a wrong round time and a wrong total (time), a topology change without reconfiguration (sequence). */
START_TEST(test_verify_tampered)
{
    tc_topo *t = topo_xml(FABRIC16);
    t->photonic.reconfig_delay = 1e-9; /* every RHD round on its own circuits */
    tc_sched *s = gen("rhd", t, TC_COLL_REDUCESCATTER, 64 << 20);
    tc_sched_photonic *ph = plan_checked(t, s, "none");
    ck_assert_int_eq(ph->n_reconfigs, 4);
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_msg(tc_photonic_verify(&ctx, s, t, "p.json") == TC_OK, "%s", tu_diags());
    tc_sched *x = NULL;
    char want[512];
    /* conflict: circuit 1 of round 0 takes circuit 0's MZI path and wavelength */
    ck_assert_int_eq(tc_sched_clone(s, &x), TC_OK);
    tc_ph_round *r = &x->photonic->rounds[0];
    tc_ph_circuit *c = x->photonic->circuits + r->circ_off;
    int a = -1;
    for (int k = 0; k + 1 < r->n_circ && a < 0; k++)
        if (c[k].n_mzi >= 2)
            a = k;
    ck_assert_int_ge(a, 0);
    c[a + 1].mzi_off = c[a].mzi_off, c[a + 1].n_mzi = c[a].n_mzi, c[a + 1].wavelength = c[a].wavelength;
    c[a + 1].n_srv = 1; /* its fibers left out: the MZI links conflict */
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_verify(&ctx, x, t, "p.json"), TC_ERR_INVALID);
    snprintf(want, sizeof want, "p.json: error: photonic: conflict: round 0: circuits %d->%d and %d->%d share wavelength "
             "%d on one MZI link\n", c[a].src, c[a].dst, c[a + 1].src, c[a + 1].dst, c[a].wavelength);
    ck_assert_str_eq(tu_diags(), want);
    tc_sched_free(x);
    /* pairs: round 1's last circuit dropped */
    ck_assert_int_eq(tc_sched_clone(s, &x), TC_OK);
    r = &x->photonic->rounds[1];
    const tc_ph_circuit *last = &x->photonic->circuits[r->circ_off + r->n_circ - 1];
    r->n_circ--;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_verify(&ctx, x, t, "p.json"), TC_ERR_INVALID);
    snprintf(want, sizeof want, "p.json: error: photonic: pairs: round 1: pair %d->%d has no circuit\n", last->src,
             last->dst);
    ck_assert_str_eq(tu_diags(), want);
    tc_sched_free(x);
    /* time: round 2 claims 1 us less bandwidth time (the total adjusted too) */
    ck_assert_int_eq(tc_sched_clone(s, &x), TC_OK);
    x->photonic->rounds[2].t.bandwidth -= 1e-6;
    x->photonic->total.bandwidth -= 1e-6;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_verify(&ctx, x, t, "p.json"), TC_ERR_INVALID);
    ck_assert_msg(strstr(tu_diags(), "p.json: error: photonic: time: round 2 (step 2) stores ") &&
                      strstr(tu_diags(), ", its circuits give "),
                  "%s", tu_diags());
    /* the total alone */
    x->photonic->rounds[2].t.bandwidth += 1e-6;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_verify(&ctx, x, t, "p.json"), TC_ERR_INVALID);
    ck_assert_msg(strstr(tu_diags(), "p.json: error: photonic: time: the total stores "), "%s", tu_diags());
    tc_sched_free(x);
    /* sequence: round 3 claims to keep round 2's circuits but runs on its own */
    ck_assert_int_eq(tc_sched_clone(s, &x), TC_OK);
    x->photonic->rounds[3].reconfig = 0;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_verify(&ctx, x, t, "p.json"), TC_ERR_INVALID);
    ck_assert_str_eq(tu_diags(), "p.json: error: photonic: sequence: round 3 changes topology without a "
                                 "reconfiguration\n");
    tc_sched_free(x);
    /* the recomputed time is the stored one (sim prints it) */
    tc_ph_breakdown tot;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_reprice(&ctx, s, t, NULL, NULL, &tot), TC_OK);
    ck_assert(NEAR(tc_ph_breakdown_sum(&tot), tc_ph_breakdown_sum(&ph->total)));
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* Reconfigurations never increase with r; tiny r: every RHD round on its own circuits; huge r: none. */
START_TEST(test_plan_reconfig_delay)
{
    tc_topo *t = topo_xml(FABRIC16);
    tc_sched *s = gen("rhd", t, TC_COLL_REDUCESCATTER, 64 << 20);
    const double rs[] = {1e-9, 1e-6, 1e-4, 1e-3, 1e-1, 10};
    int last = 1 << 30;
    for (size_t k = 0; k < sizeof rs / sizeof rs[0]; k++) {
        t->photonic.reconfig_delay = rs[k];
        tc_sched_photonic *ph = plan_checked(t, s, "none");
        ck_assert_int_le(ph->n_reconfigs, last);
        last = ph->n_reconfigs;
        if (k == 0) { /* every round reconfigured to circuits that join its pairs directly */
            ck_assert_int_eq(ph->n_reconfigs, 4);
            for (int i = 0; i < 4; i++)
                ck_assert(ph->rounds[i].reconfig && ph->rounds[i].congestion == 1 && ph->rounds[i].dilation == 1);
        }
        if (k + 1 == sizeof rs / sizeof rs[0])
            ck_assert_int_eq(ph->n_reconfigs, 0);
        /* never worse than staying on G0, never better than the rounds' own circuits without r */
        ck_assert(tc_ph_breakdown_sum(&ph->total) <= tc_ph_breakdown_sum(&ph->fixed) * (1 + 1e-12));
        tc_sched_photonic_free(s->photonic);
        s->photonic = NULL;
    }
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

START_TEST(test_plan_errors)
{
    tc_ctx ctx;
    tu_ctx(&ctx);
    tc_topo *t = topo_xml("<topology name=\"r\" npus=\"4\"><link src=\"0\" dst=\"1\" duplex=\"1\"/>"
                          "<link src=\"1\" dst=\"2\" duplex=\"1\"/><link src=\"2\" dst=\"3\" duplex=\"1\"/>"
                          "<photonic tx=\"2\"/></topology>");
    tc_sched *s = gen("rhd", t, TC_COLL_ALLGATHER, 1 << 20);
    tc_sched_photonic *ph = NULL;
    ck_assert_int_eq(tc_photonic_plan(&ctx, t, s, NULL, &ph), TC_ERR_INVALID);
    ck_assert_str_eq(tu_diags(), "t.xml:1: error: photonic: no reconfiguration delay: give <photonic "
                                 "reconfig=\"TIME\"> or 'reconfig TIME' in the cost file\n");
    t->photonic.reconfig_set = 1;
    static const struct { const char *list; int tx; const char *msg; } bad[] = {
        {"cube", 2, "tacosc: error: --fallback: unknown member 'cube' (ring, torus2d, torus3d, mesh2d, mesh3d, "
                    "hypercube, torus:AxB[xC], mesh:AxB[xC], none)\n"},
        {"torus:3x3", 2, "tacosc: error: --fallback: 'torus:3x3' has 9 npus, the topology 4\n"},
        {"torus:2x2,none", 2, "tacosc: error: --fallback: 'none' cannot be combined with other members\n"},
        {"mesh3d", 2, "tacosc: error: --fallback: mesh3d needs 3 factors >= 2 of the npu count (topology has 4)\n"},
        {"hypercube", 1, "tacosc: error: --fallback: hypercube-2d needs 2 transmitters and 2 receivers per npu, the "
                         "fabric has tx 1, rx 0\n"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tu_ctx(&ctx);
        tc_photonic_opts o;
        tc_photonic_opts_init(&o);
        o.fallback = bad[k].list;
        t->photonic.tx_per_npu = bad[k].tx;
        ck_assert_int_eq(tc_photonic_plan(&ctx, t, s, &o, &ph), TC_ERR_USAGE);
        ck_assert_str_eq(tu_diags(), bad[k].msg);
    }
    t->photonic.present = 0;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_plan(&ctx, t, s, NULL, &ph), TC_ERR_INVALID);
    ck_assert_str_eq(tu_diags(), "t.xml: error: the topology has no <photonic> element: the photonic pass needs "
                                 "one (man 5 tacosc-topology)\n");
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* The default fallback set fits the NPU count. */
START_TEST(test_fallback_default)
{
    static const struct { const char *kind, *dims, *want; } cases[] = {
        {"biring", "16", "biring-16 torus2d-4x4 torus3d-2x2x4 mesh2d-4x4 mesh3d-2x2x4 hypercube-4d"},
        {"biring", "12", "biring-12 torus2d-3x4 torus3d-2x2x3 mesh2d-3x4 mesh3d-2x2x3"},
        {"biring", "7", "biring-7"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tc_ctx ctx;
        tu_ctx(&ctx);
        tc_topo *t = NULL;
        ck_assert_int_eq(tc_topo_generate(&ctx, cases[c].kind, cases[c].dims, NULL, 0, &t), TC_OK);
        t->photonic.present = t->photonic.reconfig_set = 1;
        tc_sched *s = gen("ring", t, TC_COLL_ALLGATHER, 1 << 16);
        tc_sched_photonic *ph = NULL;
        ck_assert_int_eq(tc_photonic_plan(&ctx, t, s, NULL, &ph), TC_OK);
        char got[256] = "";
        for (int i = 0; i < ph->n_fallbacks; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", ph->fallbacks[i]);
        ck_assert_str_eq(got, cases[c].want);
        tc_sched_photonic_free(ph);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* <photonic> rules and the JSON reader                                                              */

START_TEST(test_topology_rules)
{
#define TOPO(extra, ph) "<topology name=\"x\" npus=\"8\">\n<link src=\"0\" dst=\"1\" duplex=\"1\"/>" \
    "<link src=\"1\" dst=\"2\" duplex=\"1\"/><link src=\"2\" dst=\"3\" duplex=\"1\"/><link src=\"3\" dst=\"4\" duplex=\"1\"/>" \
    "<link src=\"4\" dst=\"5\" duplex=\"1\"/><link src=\"5\" dst=\"6\" duplex=\"1\"/><link src=\"6\" dst=\"7\" duplex=\"1\"/>\n" \
    extra "<photonic " ph "/>\n</topology>\n"
    static const struct { const char *xml, *msg; } bad[] = {
        {TOPO("", "tx=\"0\""), "t.xml:3: error: photonic: tx=\"0\": an npu needs at least one transmitter\n"},
        {TOPO("", "rx=\"0\""), "t.xml:3: error: photonic: rx=\"0\": an npu needs at least one receiver\n"},
        {TOPO("", "wavelengths=\"65\""), "t.xml:3: error: photonic: wavelengths=\"65\" exceeds 64, the most tacosc models\n"},
        {TOPO("<nodes size=\"2\"/>\n", "grid=\"2x3\""),
         "t.xml:4: error: photonic: grid=\"2x3\" holds 6 servers but the topology has 4 nodes\n"},
        {TOPO("", "grid=\"3x1\""), "t.xml:3: error: photonic: grid=\"3x1\" cannot share 8 npus evenly among 3 servers "
                                   "(give <nodes> or <npu node>)\n"},
        {TOPO("<nodes size=\"4\"/>\n", "grid=\"1x2\" tiles=\"1x3\""),
         "t.xml:4: error: photonic: tiles=\"1x3\" has 3 tiles for 4 npus on a server\n"},
        {TOPO("", "mzi=\"2\""), "t.xml:3: error: photonic: mzi=\"2\" is too small for 8 npus per server on 3x3 tiles "
                                "(at least 3)\n"},
        {TOPO("<nodes size=\"4\"/>\n", "grid=\"1x2\" mzi=\"4\" fibers=\"5\""),
         "t.xml:4: error: photonic: fibers=\"5\" exceed the 4 MZIs on a side of a server's mesh (mzi=\"4\")\n"},
        {TOPO("<nodes size=\"4\"/>\n", "grid=\"1x2\" fibers=\"0\""),
         "t.xml:4: error: photonic: fibers=\"0\" leaves the 2 servers disconnected (at least 1 between grid "
         "neighbours)\n"},
        {TOPO("", "reconfig=\"-1us\""), "t.xml:3: error: photonic: reconfig must not be negative, got '-1us'\n"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_str_eq(topo_error(bad[k].xml), bad[k].msg);
    /* a full fabric reads, writes back the attributes given, and reads again the same */
    tc_topo *t = topo_xml(TOPO("<nodes size=\"4\"/>\n", "reconfig=\"5us\" tx=\"4\" mzi=\"6\" tiles=\"2x2\" grid=\"2x1\""));
    ck_assert_int_eq(t->photonic.tile_rows, 2);
    ck_assert_int_eq(t->photonic.grid_rows, 2);
    ck_assert_int_eq(t->photonic.fibers, 0);
    ck_assert_int_eq(t->photonic.rx_per_npu, 0);
    char *path = tu_tmpfile(".xml", NULL);
    FILE *f = fopen(path, "w");
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_topo_write(&ctx, t, f), TC_OK);
    fclose(f);
    char *text = tu_slurp(path, NULL);
    ck_assert_ptr_nonnull(strstr(text, "<photonic reconfig=\"5us\" tx=\"4\" mzi=\"6\" tiles=\"2x2\" grid=\"2x1\"/>"));
    tc_topo *t2 = topo_xml(text);
    ck_assert(memcmp(&t->photonic, &t2->photonic, sizeof t->photonic) == 0 || t2->photonic.line != t->photonic.line);
    ck_assert_int_eq(t2->photonic.tx_per_npu, 4);
    free(text);
    remove(path);
    free(path);
    tc_topo_free(t);
    tc_topo_free(t2);
#undef TOPO
}
END_TEST

START_TEST(test_json_reader_errors)
{
    tc_topo *t = topo_xml(FABRIC16);
    tc_sched *s = gen("rhd", t, TC_COLL_ALLGATHER, 1 << 20);
    tc_sched_photonic *ph = plan_checked(t, s, NULL);
    (void)ph;
    char *path = tu_tmpfile(".json", NULL);
    FILE *f = fopen(path, "w");
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_emit_json_write(&ctx, s, f), TC_OK);
    fclose(f);
    char *text = tu_slurp(path, NULL);
    static const struct { const char *from, *to, *msg; } edits[] = {
        {"\"topology\": \"own\"", "\"topology\": \"mine\"",
         "field \"photonic\": round %d: \"topology\" must be \"initial\", \"fallback\" or \"own\"\n"},
        {"\"reconfigurations\":", "\"reconfigs\": 1, \"reconfigurations\":",
         "field \"photonic\": unknown member \"reconfigs\"\n"},
        /* issue 23: 32768 x 65536 servers is 2^31, past an int (it passed a 'more than 2^31' check) */
        {"\"mzi\": 8, \"grid\": [2, 2]", "\"mzi\": 0, \"grid\": [32768, 65536]",
         "field \"photonic\": \"fabric\": grid and mzi make more than 2^31 MZIs\n"},
        {"\"wavelengths\": 2", "\"wavelengths\": 0", "field \"photonic\": \"fabric\": \"wavelengths\" is 0, out of range "
                                                     "(1 to 64)\n"},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *at = strstr(text, edits[k].from);
        ck_assert_ptr_nonnull(at);
        size_t n = strlen(text) + strlen(edits[k].to) + 1;
        char *bad = malloc(n);
        snprintf(bad, n, "%.*s%s%s", (int)(at - text), text, edits[k].to, at + strlen(edits[k].from));
        int line = 1;
        for (const char *c = bad; c < strstr(bad, "\"photonic\""); c++)
            line += *c == '\n';
        tc_sched *back = NULL;
        tu_ctx(&ctx);
        ck_assert_int_eq(tc_emit_json_read_mem(&ctx, "p.json", bad, strlen(bad), &back), TC_ERR_INVALID);
        int round = -1; /* the round the edit lands in */
        for (const char *c = strstr(strstr(bad, "\"rounds\""), "{\"step\""); c && c < bad + (at - text);
             c = strstr(c + 1, "{\"step\""))
            round++;
        char msg[256], want[512];
        snprintf(msg, sizeof msg, edits[k].msg, round);
        snprintf(want, sizeof want, "p.json:%d: error: %s", line, msg);
        ck_assert_str_eq(tu_diags(), want);
        free(bad);
    }
    free(text);
    remove(path);
    free(path);
    tc_sched_free(s);
    tc_topo_free(t);
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* The breakdown picture                                                                             */

START_TEST(test_svg)
{
    tc_ph_bar bars[] = {
        {"ring", "rhd", {3e-6, 1e-3, 2e-3, 1e-4, 0}},
        {"ring", "photonic", {3e-6, 1e-3, 0, 0, 3.5e-5}},
        {"2D torus", "rhd & <x>", {3e-6, 1e-3, 5e-4, 1e-5, 0}},
    };
    char *path = tu_tmpfile(".svg", NULL);
    FILE *f = fopen(path, "w");
    tc_ctx ctx;
    tu_ctx(&ctx);
    ck_assert_int_eq(tc_photonic_svg_write(&ctx, "ReduceScatter, 128 GPUs", bars, 3, f), TC_OK);
    fclose(f);
    char *svg = tu_slurp(path, NULL);
    const char *want[] = {"ReduceScatter, 128 GPUs", "time (ms)", ">latency<", ">bandwidth<", ">congestion<",
                          ">dilation<", ">reconfiguration<", ">ring<", ">2D torus<", ">photonic<",
                          "rhd &amp; &lt;x&gt;", ">3.1<", ">1.04<"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        ck_assert_msg(strstr(svg, want[k]), "SVG lacks %s", want[k]);
    /* one scale: the tallest bar (3.103 ms) and the photonic one (1.038 ms) in proportion */
    double h[2] = {0, 0};
    const char *p = svg;
    for (int b = 0; b < 2; b++) {
        p = strstr(p, "<g class=\"bar\">");
        const char *end = strstr(p, "</g>");
        for (const char *q = strstr(p, "height=\""); q && q < end; q = strstr(q + 1, "height=\""))
            h[b] += atof(q + 8);
        p = end;
    }
    ck_assert_msg(fabs(h[0] / h[1] - 3.103 / 1.038) < 0.01, "heights %g %g", h[0], h[1]);
    ck_assert_ptr_null(strstr(svg, "class=\"break\"")); /* no bar dominates: a plain axis */
    free(svg);
    /* one bar 100x the others (issue 22 item 8): the axis breaks above 1.25x the next (2.5 ms, ticks to
     * 3 ms), the tall bar is cut with a break mark and keeps its exact total; the others keep one linear
     * scale, so a 35 us reconfiguration slice is 35/3000 of the plot, not 35/110000 */
    tc_ph_bar dom[] = {
        {"g", "fixed", {3e-6, 1e-3, 0.099, 0, 0}},
        {"g", "photonic", {3e-6, 1e-3, 0, 0, 3.5e-5}},
        {"g", "other", {0, 2e-3, 0, 0, 0}},
    };
    f = fopen(path, "w");
    ck_assert_int_eq(tc_photonic_svg_write(&ctx, "dominated", dom, 3, f), TC_OK);
    fclose(f);
    svg = tu_slurp(path, NULL);
    ck_assert_msg(strstr(svg, "axis broken at 3 ms") && strstr(svg, "class=\"break\"") && strstr(svg, ">100<"),
                  "%s", tu_tail(svg));
    p = strstr(svg, "<rect class=\"reconfiguration\"");
    ck_assert_ptr_nonnull(p);
    const double hr = atof(strstr(p, "height=\"") + 8);
    ck_assert_msg(fabs(hr - 0.035 / 3 * 360) < 0.05, "reconfiguration slice %g px", hr);
    free(svg);
    remove(path);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------------------------------------ */
/* Command line                                                                                      */

#define tacosc tu_tacosc_run

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

START_TEST(test_cli_bad_input)
{
    char dir[] = "/tmp/tacosc-photonic-XXXXXX", path[256], plan[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    tu_remove_at_exit(dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    char *out;
    /* no <photonic> */
    ck_assert_int_eq(tacosc(&out, "topologies/mesh2d-4x4.xml -c allgather -a rhd --photonic -o %s", plan), 1);
    ck_assert_str_eq(out, "topologies/mesh2d-4x4.xml: error: the topology has no <photonic> element: the photonic "
                          "pass needs one (man 5 tacosc-topology)\n");
    ck_assert(!exists(plan));
    free(out);
    /* no reconfiguration delay */
    snprintf(path, sizeof path, "%s/nodelay.xml", dir);
    FILE *f = fopen(path, "w");
    fputs("<topology name=\"r\" npus=\"4\">\n<link src=\"0\" dst=\"1\" duplex=\"1\"/><link src=\"1\" dst=\"2\" "
          "duplex=\"1\"/>\n<link src=\"2\" dst=\"3\" duplex=\"1\"/>\n<photonic tx=\"2\"/>\n</topology>\n", f);
    fclose(f);
    ck_assert_int_eq(tacosc(&out, "%s -c allgather -a rhd --photonic -o %s", path, plan), 1);
    char want[512];
    snprintf(want, sizeof want, "%s:4: error: photonic: no reconfiguration delay: give <photonic reconfig=\"TIME\"> "
                                "or 'reconfig TIME' in the cost file\n", path);
    ck_assert_str_eq(out, want);
    ck_assert(!exists(plan));
    free(out);
    /* a switch kept as a vertex: circuits join NPUs */
    snprintf(path, sizeof path, "%s/sw.xml", dir);
    f = fopen(path, "w");
    fputs("<topology name=\"sw\" npus=\"4\">\n<link src=\"0\" dst=\"1\" duplex=\"1\"/>\n"
          "<switch name=\"nv\" model=\"node\" npus=\"0 1 2 3\"/>\n<photonic reconfig=\"5us\"/>\n</topology>\n", f);
    fclose(f);
    for (int m = 0; m < 2; m++) {
        ck_assert_int_eq(tacosc(&out, "%s -c allreduce %s --photonic -o %s", path, m ? "--switch-model multicast" : "",
                                plan),
                         1);
        snprintf(want, sizeof want, "%s:3: error: photonic: switch 'nv' is modelled as a %s vertex; the photonic pass "
                                    "joins NPUs by circuits and prices them on paths between NPUs: model the switches "
                                    "as links (--switch-model unwind)\n",
                 path, m ? "multicast" : "node");
        ck_assert_str_eq(out, want);
        ck_assert(!exists(plan));
        free(out);
    }
    ck_assert_int_eq(tacosc(&out, "%s -c allreduce --switch-model unwind --photonic -o %s", path, plan), 0);
    ck_assert(exists(plan));
    unlink(plan);
    free(out);
    /* a schedule without rounds (one NPU) */
    snprintf(path, sizeof path, "%s/one.xml", dir);
    f = fopen(path, "w");
    fputs("<topology name=\"one\" npus=\"1\">\n<photonic reconfig=\"5us\"/>\n</topology>\n", f);
    fclose(f);
    ck_assert_int_eq(tacosc(&out, "%s -c allgather --photonic -o %s", path, plan), 1);
    snprintf(want, sizeof want, "%s: error: photonic: the tacos schedule has no rounds (no transfer between two ranks)\n",
             path);
    ck_assert_str_eq(out, want);
    ck_assert(!exists(plan));
    free(out);
    /* no free wavelength: 4 NPUs on a 2x2 mesh, one MZI each, and a step with 3 circuits out of NPU 0 */
    snprintf(path, sizeof path, "%s/tiny.xml", dir);
    f = fopen(path, "w");
    fputs("<topology name=\"tiny\" npus=\"4\">\n<link src=\"0\" dst=\"1\" duplex=\"1\"/><link src=\"1\" dst=\"2\" "
          "duplex=\"1\"/>\n<link src=\"2\" dst=\"3\" duplex=\"1\"/>\n<photonic reconfig=\"1ns\" mzi=\"2\"/>\n"
          "</topology>\n", f);
    fclose(f);
    /* (issue 22 item 2: not a refusal: the round stays on G0 and the warning says why) */
    ck_assert_int_eq(tacosc(&out, "%s -c allgather -a direct --photonic --fallback none -s 64M -o %s", path, plan), 0);
    ck_assert_msg(strstr(out, "tacosc: warning: photonic: round 0's circuits cannot be set up on the fabric (round 0 "
                              "(step 0): circuit 0->3: no free wavelength on any path through the 2x2 MZI mesh (1 "
                              "wavelength)): planned again without it\n"), "%s", tu_tail(out));
    ck_assert_msg(strstr(out, "0 reconfigurations") && strstr(out, "keep the initial topology"), "%s", tu_tail(out));
    ck_assert(exists(plan));
    remove(plan);
    free(out);
    /* too few transmitters for a circuit file: NPU 0 has 3 */
    snprintf(path, sizeof path, "%s/c.txt", dir);
    f = fopen(path, "w");
    fputs("# src dst\n0 5\n0 9\n\n0 12\n0 3  # one too many\n", f);
    fclose(f);
    char topo[256];
    snprintf(topo, sizeof topo, "%s/t16.xml", dir);
    f = fopen(topo, "w");
    fputs(FABRIC16, f);
    fclose(f);
    ck_assert_int_eq(tacosc(&out, "route %s --circuits %s -o %s", topo, path, plan), 1);
    snprintf(want, sizeof want, "%s:6: error: circuit 0->3: npu 0 has 3 transmitters and this is its circuit number 4\n",
             path);
    ck_assert_str_eq(out, want);
    ck_assert(!exists(plan));
    free(out);
    f = fopen(path, "w");
    fputs("0 5\n7 x\n", f);
    fclose(f);
    ck_assert_int_eq(tacosc(&out, "route %s --circuits %s", topo, path), 1);
    snprintf(want, sizeof want, "%s:2: error: expected 'SRC DST' (two npu ids), got '7 x'\n", path);
    ck_assert_str_eq(out, want);
    free(out);
    /* usage */
    ck_assert_int_eq(tacosc(&out, "%s -c allgather --fallback ring -o %s", topo, plan), 2);
    ck_assert_str_eq(out, "tacosc: error: --fallback and --ilp-time need --photonic\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "%s -c allgather --photonic --fallback cube -o %s", topo, plan), 2);
    ck_assert(!exists(plan));
    free(out);
    ck_assert_int_eq(tacosc(&out, "%s -c allgather --photonic --ilp-time 0", topo), 2);
    ck_assert_str_eq(out, "tacosc: error: --ilp-time: '0' is not a number of seconds in (0, 86400]\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "route %s", topo), 2);
    ck_assert_str_eq(out, "tacosc: error: give either --circuits FILE or --random N (see 'tacosc route --help')\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "route %s --circuits %s --seed 3", topo, topo), 2);
    ck_assert_str_eq(out, "tacosc: error: --seed applies to --random only (see 'tacosc route --help')\n");
    free(out);
    ck_assert_int_eq(tacosc(&out, "route %s --random 4 --random 5", topo), 2);
    ck_assert_ptr_nonnull(strstr(out, "--random"));
    free(out);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    ck_assert_int_eq(tu_run(path, NULL), 0);
}
END_TEST

START_TEST(test_cli_end_to_end)
{
    char dir[] = "/tmp/tacosc-photonic-XXXXXX", topo[256], cmd[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    tu_remove_at_exit(dir);
    snprintf(topo, sizeof topo, "%s/t16.xml", dir);
    FILE *f = fopen(topo, "w");
    fputs(FABRIC16, f);
    fclose(f);
    char *out, *out2;
    ck_assert_int_eq(tacosc(&out, "%s -c allreduce -a rhd --photonic -s 16M -o %s/p.json", topo, dir), 0);
    ck_assert_ptr_nonnull(strstr(out, "  photonic time "));
    ck_assert_ptr_nonnull(strstr(out, "  on the initial topology without reconfiguration "));
    ck_assert_ptr_nonnull(strstr(out, "reconfigure to round 0's circuits"));
    free(out);
    ck_assert_int_eq(tacosc(&out, "verify %s/p.json --topo %s", dir, topo), 0);
    free(out);
    ck_assert_int_eq(tacosc(&out, "sim %s/p.json %s --svg %s/p.svg", dir, topo, dir), 0);
    ck_assert_ptr_nonnull(strstr(out, "  photonic time "));
    ck_assert_ptr_nonnull(strstr(out, "  photonic time recomputed ")); /* and no "the plan stores" */
    ck_assert_ptr_null(strstr(out, "the plan stores"));
    free(out);
    /* sim --svg of a photonic plan: its photonic time, the fixed topology's and one bar per round */
    snprintf(cmd, sizeof cmd, "%s/p.svg", dir);
    out = tu_slurp(cmd, NULL);
    ck_assert_msg(strstr(out, ">photonic<") && strstr(out, ">fixed topology<") && strstr(out, ">rounds<") &&
                      strstr(out, ">reconfiguration<"),
                  "%s", tu_tail(out));
    int bars = 0;
    for (const char *q = strstr(out, "<g class=\"bar\">"); q; q = strstr(q + 1, "<g class=\"bar\">"))
        bars++;
    free(out);
    tc_sched *plan = NULL;
    tc_ctx cx;
    tu_ctx(&cx);
    snprintf(cmd, sizeof cmd, "%s/p.json", dir);
    ck_assert_int_eq(tc_emit_json_read(&cx, cmd, &plan), TC_OK);
    ck_assert_int_eq(bars, 2 + plan->photonic->n_rounds);
    tc_sched_free(plan);
    /* MSCCL XML: the same with and without the pass */
    ck_assert_int_eq(tacosc(&out, "%s -c allreduce -a rhd --photonic -s 16M -q -o %s/p.xml", topo, dir), 0);
    ck_assert_int_eq(tacosc(&out2, "%s -c allreduce -a rhd -s 16M -q -o %s/q.xml", topo, dir), 0);
    free(out), free(out2);
    snprintf(cmd, sizeof cmd, "%s/p.xml", dir);
    out = tu_slurp(cmd, NULL);
    snprintf(cmd, sizeof cmd, "%s/q.xml", dir);
    out2 = tu_slurp(cmd, NULL);
    ck_assert_str_eq(out, out2);
    free(out), free(out2);
    /* deterministic */
    ck_assert_int_eq(tacosc(&out, "%s -c allreduce -a rhd --photonic -s 16M -q -o %s/p2.json", topo, dir), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "cmp %s/p.json %s/p2.json", dir, dir);
    ck_assert_int_eq(tu_run(cmd, NULL), 0);
    /* route */
    ck_assert_int_eq(tacosc(&out, "route %s --random 12 --seed 5 --list -o %s/c.json", topo, dir), 0);
    ck_assert_ptr_nonnull(strstr(out, "route on t16: 12 circuits, 4 servers (2x2 grid), 8x8 MZIs per server"));
    ck_assert_ptr_nonnull(strstr(out, "LP bound"));
    free(out);
    /* --random fills the transmitters exactly (16 npus x tx 3 = 48; a swap completes a stuck draw), not one
     * more (routing them may then need more fibers than the 4 given: exit 1 is that, not the draw) */
    for (int seed = 1; seed <= 8; seed++) {
        snprintf(cmd, sizeof cmd, "sed 's/ mzi=\"8\"//' %s > %s/full.xml", topo, dir);
        ck_assert_int_eq(tu_run(cmd, NULL), 0);
        const int rc = tacosc(&out, "route %s/full.xml --random 48 --seed %d -q", dir, seed);
        ck_assert_msg(rc != 2 && !strstr(out, "do not fit"), "seed %d: %s", seed, out); /* 1: fibers too few */
        free(out);
    }
    ck_assert_int_eq(tacosc(&out, "route %s/full.xml --random 49 -q", dir), 2);
    ck_assert_str_eq(out, "tacosc: error: --random: 49 circuits do not fit 16 npus with tx 3 and rx 3 (placed 48)\n");
    free(out);
    /* issue 22: without an MZI mesh no wavelength is assigned, and --list says none (it printed -1) */
    char nomzi[256];
    snprintf(nomzi, sizeof nomzi, "%s/nomzi.xml", dir);
    snprintf(cmd, sizeof cmd, "sed 's/ mzi=\"8\"//' %s > %s", topo, nomzi);
    ck_assert_int_eq(tu_run(cmd, NULL), 0);
    ck_assert_int_eq(tacosc(&out, "route %s --random 12 --seed 5 --list", nomzi), 0);
    ck_assert_msg(!strstr(out, "wavelength -1") && !strstr(out, " MZIs\n") && strstr(out, " servers 1,0,2"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/c.json", dir);
    out = tu_slurp(cmd, NULL);
    ck_assert_ptr_nonnull(strstr(out, "\"format\": \"tacosc-circuits\""));
    free(out);
    ck_assert_int_eq(tacosc(&out, "route --help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: tacosc route TOPO.xml"));
    free(out);
    ck_assert_int_eq(tacosc(&out, "info %s", topo), 0);
    ck_assert_ptr_nonnull(strstr(out, "photonic        reconfig 2.000 us, tx 3, rx 3, wavelengths 2, mzi 8x8, grid "
                                      "2x2, fibers 4"));
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(tu_run(cmd, NULL), 0);
}
END_TEST

/* MSCCL XML has no circuits and no reconfiguration: compile --photonic to XML prints the time of the file it
 * writes (tacosc sim of it, on the fixed links), says so, and keeps the photonic plan in the breakdown
 * (audit: it printed the photonic plan's time, up to 2x below the file's).  Random algorithm and size on a
 * photonic 4x4 torus. */
START_TEST(test_photonic_xml_prices_the_file)
{
    static const char *const algos[] = {"ring", "rhd", "tacos"};
    const unsigned long seed = tu_seed();
    char *topo = tu_tmpfile(".xml", NULL), *xml = tu_tmpfile(".xml", NULL), *out = NULL;
    ck_assert_int_eq(tu_tacosc_run(&out, "topo torus 4x4 --photonic reconfig=5us,tx=4,rx=4,wavelengths=4,mzi=16,fibers=8 "
                                         "-o %s", topo), 0);
    free(out);
    const unsigned kb = 64u << (seed % 6);
    ck_assert_int_eq(tu_tacosc_run(&out, "%s --collective allreduce --size %uK --algo %s --photonic -o %s", topo, kb,
                                   algos[seed / 6 % 3], xml), 0);
    const char *p = strstr(out, "predicted time ");
    ck_assert_msg(p && strstr(out, "MSCCL program written") && strstr(out, "photonic time "), "%s", out);
    char printed[32];
    ck_assert_int_eq(sscanf(p, "predicted time %31[0-9.] ", printed), 1);
    free(out);
    ck_assert_int_eq(tu_tacosc_run(&out, "sim %s %s --size %uK", xml, topo, kb), 0);
    char want[64];
    snprintf(want, sizeof want, "  time %s ", printed);
    ck_assert_msg(strstr(out, want), "compile printed %s: %s", printed, out);
    free(out);
    unlink(topo);
    unlink(xml);
    free(topo);
    free(xml);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("photonic");
    TCase *tc = tcase_create("photonic");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_cost_line);
    tcase_add_test(tc, test_cost_heterogeneous);
    tcase_add_test(tc, test_cost_disconnected);
    tcase_add_test(tc, test_cost_ring_shift);
    tcase_add_test(tc, test_split_trace);
    tcase_add_test(tc, test_split_random);
    tcase_add_test(tc, test_ilp_trace);
    tcase_add_test(tc, test_ilp_brute_force);
    tcase_add_test(tc, test_mzi_random);
    tcase_add_test(tc, test_mzi_no_wavelength);
    tcase_add_test(tc, test_fiber_random);
    tcase_add_test(tc, test_fiber_paper_scale);
    tcase_add_test(tc, test_fiber_paper_scale_route);
    tcase_add_test(tc, test_fiber_gap_and_time_limit);
    tcase_add_test(tc, test_fiber_brute_force);
    tcase_add_test(tc, test_fiber_disconnected);
    tcase_add_test(tc, test_plan_generators);
    tcase_add_test(tc, test_plan_split);
    tcase_add_test(tc, test_plan_static_unsplit);
    tcase_add_test(tc, test_plan_shared_transmitters);
    tcase_add_test(tc, test_plan_unroutable_resolved);
    tcase_add_test(tc, test_verify_tampered);
    tcase_add_test(tc, test_plan_reconfig_delay);
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_fallback_default);
    tcase_add_test(tc, test_topology_rules);
    tcase_add_test(tc, test_json_reader_errors);
    tcase_add_test(tc, test_svg);
    tcase_add_test(tc, test_cli_bad_input);
    tcase_add_test(tc, test_cli_end_to_end);
    tcase_add_test(tc, test_photonic_xml_prices_the_file);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
