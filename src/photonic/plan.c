/*
 * plan: the photonic pass (PCCL photonic paper §4): rounds, candidates, costs, the reconfiguration ILP and
 * the circuits of every reconfiguration, gathered into a tc_sched_photonic.
 *
 * Accepts: a schedule (any generator: its steps are the rounds) on an indexed topology with <photonic>.
 * Returns: per round (a step, or a sub-round of one when Tx/Rx force a split) the topology it runs on
 *   (G0 kept, a fallback, its own circuits or an earlier round's kept), whether the fabric reconfigures
 *   before it, its congestion, dilation and time breakdown; for each reconfiguration the routed circuits;
 *   the totals and, for comparison, the schedule on G0 without reconfiguration ("fixed").
 * Steps: (1) pairs per step, bytes = chunks x chunk_bytes; (2) split.c; (3) candidates: G0, the fallback
 *   set S (generated with tc_topo_generate, links priced as circuits), each round's own circuits (rounds
 *   with the same pairs share one graph); (4) cost.c for every (round, candidate) available; (5) ilp.c;
 *   (6) route.c for every reconfiguration, in round order.
 * Cost: candidates x rounds x Alg. 2 (one BFS per source per candidate) + the ILP + the routing.
 * Model: tx/rx split a step only for circuits: G0 (fixed links) and the fallbacks (circuits within tx/rx
 *   already) carry a split step whole, the ILP keeping its parts together there (tie).  A circuit shares
 *   its GPU's optical bandwidth with the GPU's other circuits (PCCL §4.2): beta x max(out, in circuits).
 * Limits: a configuration the ILP picks but the fabric cannot route (no free wavelength, too few fibers)
 *   is left out and the ILP solved again, with a warning naming it (G0 kept from round 0 always remains);
 *   fallbacks whose degree exceeds tx or rx are left out of S (an explicit --fallback member that does
 *   not fit is an error).
 * Trace (rhd reduce-scatter, 1 MiB, on a 4-NPU bidirectional ring, r = 1 ns, --fallback none): steps 0
 *   (pairs 0<->2, 1<->3) and 1 (0<->1, 2<->3); on G0 step 0 has d = 2, c = 2; the ILP sets up step 0's
 *   circuits, then G0 again (step 1's pairs are ring neighbours; a tie with step 1's own circuits): 2
 *   reconfigurations, c = d = 1 in both rounds.  With the default S the 2x2 torus joins both steps' pairs:
 *   one reconfiguration.
 */
#include "photonic_int.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One ILP round. */
typedef struct pround {
    int step, sub, n_sub;
    int off, n;           /* pairs[off .. off+n) */
    int canon;            /* first round with the same pair set (its own-circuit graph) */
    int woff, wn;         /* split steps: the whole step's pairs, wpairs[woff .. woff+wn) */
} pround;

typedef struct pass {
    tc_ctx *ctx;
    const tc_topo *topo;
    const tc_sched *s;
    tc_ph_fabric *fab;
    double ac, bc;                 /* circuit alpha, beta */
    tc_ph_pair *pairs;             /* all rounds' pairs, round by round */
    int n_pairs, cap_pairs;
    tc_ph_pair *wpairs;            /* the whole pairs of split steps (static topologies run them unsplit) */
    int n_wpairs, cap_wpairs;
    pround *rounds;
    int n_rounds, cap_rounds;
    tc_topo **fallback;            /* S */
    int n_fallback;
    int n_static, T;               /* 1 + |S|, n_static + distinct own circuit sets */
    int *own;                      /* per round: its own topology's index (rounds with equal pairs share) */
    int *own_round;                /* per own topology (index - n_static): the first round with those pairs */
    double *cost;                  /* n_rounds x T */
    tc_ph_cost *detail;            /* n_rounds x T */
    tc_sched_photonic *out;
    int fail_round, fail_topo;     /* the reconfiguration the fabric could not route (build_output) */
    char fail_msg[512];            /* and why (the router's message) */
} pass;

/* build_output: the ILP's choice for fail_round cannot be routed on the fabric (re-solve without it). */
#define PH_UNROUTABLE 1

static tc_status nomem(pass *p)
{
    return tc_error(p->ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
}

/* ------------------------------------------------------------------------------------------------ */
/* Rounds                                                                                            */

static int cmp_int3(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const tc_ph_pair *x = a, *y = b;
    return x->src != y->src ? (x->src < y->src ? -1 : 1) : x->dst != y->dst ? (x->dst < y->dst ? -1 : 1) : 0;
}

static tc_status add_round(pass *p, int step, int sub, int n_sub, const tc_ph_pair *pairs, int n)
{
    if (tc_grow((void **)&p->rounds, &p->cap_rounds, p->n_rounds + 1, sizeof *p->rounds) ||
        tc_grow((void **)&p->pairs, &p->cap_pairs, p->n_pairs + n, sizeof *p->pairs))
        return nomem(p);
    memcpy(p->pairs + p->n_pairs, pairs, (size_t)n * sizeof *pairs);
    qsort(p->pairs + p->n_pairs, (size_t)n, sizeof *pairs, cmp_pair);
    pround *r = &p->rounds[p->n_rounds];
    *r = (pround){step, sub, n_sub, p->n_pairs, n, p->n_rounds, 0, 0};
    for (int k = 0; k < p->n_rounds; k++) { /* the same circuits as an earlier round? */
        const pround *q = &p->rounds[k];
        if (q->canon != k || q->n != n)
            continue;
        int same = 1;
        for (int i = 0; i < n && same; i++)
            same = p->pairs[q->off + i].src == p->pairs[r->off + i].src &&
                   p->pairs[q->off + i].dst == p->pairs[r->off + i].dst;
        if (same) {
            r->canon = k;
            break;
        }
    }
    p->n_pairs += n;
    p->n_rounds++;
    return TC_OK;
}

/* The pairs of every step with transfers between distinct ranks, sorted: pairs[off[k] .. off[k + 1]) are
 * step step[k]'s, each carrying its chunks' bytes.  All out-parameters are malloc'd. */
static tc_status step_pairs(const tc_sched *s, tc_ph_pair **pairs, int **step, int **off, int *n_steps)
{
    int n = 0, m = 0, k = 0;
    int *key = malloc((size_t)(s->n_xfers > 0 ? s->n_xfers : 1) * 3 * sizeof *key);
    *pairs = malloc((size_t)(s->n_xfers > 0 ? s->n_xfers : 1) * sizeof **pairs);
    *step = malloc(((size_t)s->n_steps + 1) * sizeof **step);
    *off = malloc(((size_t)s->n_steps + 2) * sizeof **off);
    if (!key || !*pairs || !*step || !*off) {
        free(key);
        return TC_ERR_NOMEM;
    }
    for (int i = 0; i < s->n_xfers; i++) {
        const tc_xfer *x = &s->xfers[i];
        if (x->src == x->dst)
            continue;
        key[3 * n] = x->step;
        key[3 * n + 1] = x->src;
        key[3 * n + 2] = x->dst;
        n++;
    }
    qsort(key, (size_t)n, 3 * sizeof *key, cmp_int3);
    for (int a = 0; a < n;) {
        int b = a;
        while (b < n && !cmp_int3(&key[3 * b], &key[3 * a]))
            b++;
        if (a == 0 || key[3 * a] != key[3 * (a - 1)]) {
            (*step)[k] = key[3 * a];
            (*off)[k++] = m;
        }
        (*pairs)[m++] = (tc_ph_pair){key[3 * a + 1], key[3 * a + 2], (double)(b - a) * (double)s->chunk_bytes};
        a = b;
    }
    (*off)[k] = m;
    *n_steps = k;
    free(key);
    return TC_OK;
}

/* Steps -> pairs with their bytes -> (sub-)rounds. */
static tc_status build_rounds(pass *p)
{
    tc_ph_pair *pairs = NULL, *sub = NULL;
    int *step = NULL, *off = NULL, *part = NULL, n_steps = 0;
    tc_status st = step_pairs(p->s, &pairs, &step, &off, &n_steps);
    const int most = n_steps > 0 ? off[n_steps] : 0;
    if (!st) {
        part = malloc((size_t)(most > 0 ? most : 1) * sizeof *part);
        sub = malloc((size_t)(most > 0 ? most : 1) * sizeof *sub);
    }
    if (st || !part || !sub) {
        st = nomem(p);
        goto done;
    }
    for (int k = 0; k < n_steps && !st; k++) {
        const tc_ph_pair *tmp = pairs + off[k];
        const int m = off[k + 1] - off[k];
        int parts = 1;
        if ((st = tc_photonic_split(tmp, m, p->topo->n_npus, p->fab->tx, p->fab->rx, part, &parts))) {
            st = st == TC_ERR_NOMEM ? nomem(p) : tc_error(p->ctx, st, NULL, 0, "photonic: step %d: bad pairs", step[k]);
            break;
        }
        const int w0 = p->n_wpairs, r0 = p->n_rounds;
        if (parts > 1) { /* G0 and the fallbacks carry the step unsplit (item 3: tx/rx limit circuits only) */
            if (tc_grow((void **)&p->wpairs, &p->cap_wpairs, p->n_wpairs + m, sizeof *p->wpairs)) {
                st = nomem(p);
                break;
            }
            memcpy(p->wpairs + p->n_wpairs, tmp, (size_t)m * sizeof *tmp);
            p->n_wpairs += m;
        }
        for (int q = 0; q < parts && !st; q++) {
            int ns = 0;
            for (int i = 0; i < m; i++)
                if (part[i] == q)
                    sub[ns++] = tmp[i];
            st = add_round(p, step[k], q, parts, sub, ns);
        }
        for (int q = r0; q < p->n_rounds && parts > 1; q++) {
            p->rounds[q].woff = w0;
            p->rounds[q].wn = m;
        }
    }
done:
    free(pairs);
    free(step);
    free(off);
    free(part);
    free(sub);
    if (!st && p->n_rounds == 0)
        st = tc_error(p->ctx, TC_ERR_INVALID, p->s->file ? p->s->file : p->topo->file, 0,
                      "photonic: the %s schedule has no rounds (no transfer between two ranks)",
                      p->s->algo ? p->s->algo : "given");
    return st;
}

tc_status tc_photonic_fixed(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, tc_ph_breakdown *out)
{
    tc_ph_pair *pairs = NULL;
    int *step = NULL, *off = NULL, n_steps = 0;
    ph_coster c;
    tc_ph_breakdown sum = {0};
    tc_status st0 = ph_npus_only(ctx, topo);
    if (st0)
        return st0;
    if (step_pairs(s, &pairs, &step, &off, &n_steps) || ph_coster_init(&c, topo)) {
        free(pairs), free(step), free(off);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
    }
    tc_status st = TC_OK;
    for (int k = 0; k < n_steps && !st; k++) {
        tc_ph_cost d;
        if ((st = ph_coster_cost(ctx, &c, pairs + off[k], off[k + 1] - off[k], &d)))
            break;
        if (!d.connected) {
            st = tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "photonic: step %d has a pair the topology does not join",
                          step[k]);
            break;
        }
        tc_ph_breakdown_add(&sum, &d.t);
    }
    ph_coster_fini(&c);
    free(pairs);
    free(step);
    free(off);
    if (!st)
        *out = sum;
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Candidates                                                                                        */

/* Circuits cost the class "circuit" when the topology defines it, else G0's largest alpha and beta. */
static void circuit_cost(pass *p)
{
    const tc_topo *t = p->topo;
    for (int k = 0; k < t->n_classes; k++)
        if (!strcmp(t->classes[k].name, "circuit") && t->classes[k].defined) {
            p->ac = t->classes[k].alpha;
            p->bc = t->classes[k].beta;
            return;
        }
    p->ac = p->bc = 0;
    for (int l = 0; l < t->n_links; l++) {
        if (t->links[l].alpha > p->ac)
            p->ac = t->links[l].alpha;
        if (t->links[l].beta > p->bc)
            p->bc = t->links[l].beta;
    }
}

/* Distinct out- and in-neighbours of every NPU of an indexed topology (odeg, ideg: n_npus each). */
static void npu_degrees(const tc_topo *t, int *odeg, int *ideg)
{
    for (int v = 0; v < t->n_npus; v++) {
        odeg[v] = ideg[v] = 0;
        for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
            int w = t->links[t->out_link[k]].dst, dup = 0;
            for (int q = t->out_off[v]; q < k && !dup; q++)
                dup = t->links[t->out_link[q]].dst == w;
            odeg[v] += !dup;
        }
        for (int k = t->in_off[v]; k < t->in_off[v + 1]; k++) {
            int w = t->links[t->in_link[k]].src, dup = 0;
            for (int q = t->in_off[v]; q < k && !dup; q++)
                dup = t->links[t->in_link[q]].src == w;
            ideg[v] += !dup;
        }
    }
}

/*
 * Price the links of a circuit topology (a fallback, a round's own circuits).  PCCL §4.2 "divide[s] the
 * transmitters uniformly across all required connections by a GPU": the circuit class's beta is one GPU's
 * whole optical bandwidth, so a circuit u -> w whose GPU u starts k_out circuits and w ends k_in gets
 * 1/max(k_out, k_in) of it: beta x max(k_out(u), k_in(w)).  Alpha is the circuit's.  G0's links are priced
 * as the topology gives them (fixed links, not circuits).
 */
tc_status ph_price_circuits(tc_topo *t, double a, double b)
{
    int *odeg = malloc((size_t)(t->n_npus > 0 ? t->n_npus : 1) * 2 * sizeof *odeg);
    if (!odeg)
        return TC_ERR_NOMEM;
    int *ideg = odeg + t->n_npus;
    npu_degrees(t, odeg, ideg);
    for (int l = 0; l < t->n_links; l++) {
        const int u = t->links[l].src, w = t->links[l].dst;
        int share = 1;
        if (u < t->n_npus && odeg[u] > share)
            share = odeg[u];
        if (w < t->n_npus && ideg[w] > share)
            share = ideg[w];
        t->links[l].alpha = a;
        t->links[l].beta = b * share;
        t->links[l].alpha_set = t->links[l].beta_set = 1;
    }
    free(odeg);
    return TC_OK;
}

/* Most out- and in-neighbours of one NPU. */
static void degrees(const tc_topo *t, int *out, int *in)
{
    *out = *in = 0;
    for (int v = 0; v < t->n_npus; v++) {
        int o = 0, i = 0;
        for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
            int w = t->links[t->out_link[k]].dst, dup = 0;
            for (int q = t->out_off[v]; q < k && !dup; q++)
                dup = t->links[t->out_link[q]].dst == w;
            o += !dup;
        }
        for (int k = t->in_off[v]; k < t->in_off[v + 1]; k++) {
            int w = t->links[t->in_link[k]].src, dup = 0;
            for (int q = t->in_off[v]; q < k && !dup; q++)
                dup = t->links[t->in_link[q]].src == w;
            i += !dup;
        }
        if (o > *out)
            *out = o;
        if (i > *in)
            *in = i;
    }
}

/* The squarest factorization of n into nd factors >= 2 (ascending), 0 when none exists. */
static int factor(int n, int nd, int *d)
{
    int best = 0;
    if (nd == 2) {
        for (int a = 2; (long long)a * a <= n; a++)
            if (n % a == 0 && n / a >= 2) {
                d[0] = a;
                d[1] = n / a;
                best = 1;
            }
    } else {
        double spread = INFINITY;
        for (int a = 2; (long long)a * a * a <= n; a++)
            for (int b = a; n % a == 0 && (long long)a * b * b <= n; b++)
                if ((n / a) % b == 0 && n / a / b >= b && (double)(n / a / b) / a < spread) {
                    spread = (double)(n / a / b) / a;
                    d[0] = a;
                    d[1] = b;
                    d[2] = n / a / b;
                    best = 1;
                }
    }
    return best;
}

/* Generate one fallback "name[:dims]"; *skip set (and nothing generated) when the name does not fit n
 * and `quiet` (the default set): an explicit name that does not fit is a usage error. */
static tc_status make_fallback(pass *p, const char *spec, int quiet, tc_topo **out, int *skip)
{
    const int n = p->topo->n_npus;
    char kind[32], dims[64] = "";
    const char *colon = strchr(spec, ':');
    size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
    *skip = 0;
    *out = NULL;
    if (kl == 0 || kl >= sizeof kind || (colon && strlen(colon + 1) >= sizeof dims))
        return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0, "--fallback: bad member '%s'", spec);
    memcpy(kind, spec, kl);
    kind[kl] = 0;
    if (colon)
        strcpy(dims, colon + 1);
    const char *gen_kind = kind;
    int d[3] = {0, 0, 0};
    if (!strcmp(kind, "ring")) {
        gen_kind = "biring";
        if (!colon)
            snprintf(dims, sizeof dims, "%d", n);
    } else if (!strcmp(kind, "torus2d") || !strcmp(kind, "mesh2d") || !strcmp(kind, "torus3d") ||
               !strcmp(kind, "mesh3d")) {
        const int nd = kind[strlen(kind) - 2] - '0';
        if (colon)
            return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0,
                            "--fallback: '%s': give dimensions as %s:AxB%s instead", spec,
                            kind[0] == 't' ? "torus" : "mesh", nd == 3 ? "xC" : "");
        if (!factor(n, nd, d)) {
            if (quiet) {
                *skip = 1;
                return TC_OK;
            }
            return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0,
                            "--fallback: %s needs %d factors >= 2 of the npu count (topology has %d)", kind, nd, n);
        }
        gen_kind = kind[0] == 't' ? "torus" : "mesh";
        if (nd == 2)
            snprintf(dims, sizeof dims, "%dx%d", d[0], d[1]);
        else
            snprintf(dims, sizeof dims, "%dx%dx%d", d[0], d[1], d[2]);
    } else if (!strcmp(kind, "hypercube")) {
        if (n < 2 || (n & (n - 1))) {
            if (quiet) {
                *skip = 1;
                return TC_OK;
            }
            return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0,
                            "--fallback: hypercube needs a power-of-two npu count (topology has %d)", n);
        }
        if (!colon)
            snprintf(dims, sizeof dims, "%d", n);
    } else if (strcmp(kind, "torus") && strcmp(kind, "mesh")) {
        return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0,
                        "--fallback: unknown member '%s' (ring, torus2d, torus3d, mesh2d, mesh3d, hypercube, "
                        "torus:AxB[xC], mesh:AxB[xC], none)",
                        spec);
    } else if (!colon) {
        return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0, "--fallback: '%s' needs dimensions (%s:AxB or %s:AxBxC)", spec,
                        kind, kind);
    }
    tc_ctx quiet_ctx = *p->ctx;
    quiet_ctx.sink = NULL;
    tc_topo *t = NULL;
    tc_status st = tc_topo_generate(&quiet_ctx, gen_kind, dims, NULL, 0, &t);
    if (st)
        return tc_error(p->ctx, TC_ERR_USAGE, NULL, 0, "--fallback: cannot build '%s' (%s %s)", spec, gen_kind, dims);
    if (t->n_npus != n) {
        st = tc_error(p->ctx, TC_ERR_USAGE, NULL, 0, "--fallback: '%s' has %d npus, the topology %d", spec, t->n_npus,
                      n);
        tc_topo_free(t);
        return st;
    }
    if (ph_price_circuits(t, p->ac, p->bc)) {
        tc_topo_free(t);
        return nomem(p);
    }
    int dout, din;
    degrees(t, &dout, &din);
    if ((p->fab->tx > 0 && dout > p->fab->tx) || (p->fab->rx > 0 && din > p->fab->rx)) {
        if (quiet) {
            if (p->ctx->verbose)
                tc_diag(p->ctx, TC_DIAG_NOTE, NULL, 0, 0,
                        "photonic: fallback %s left out: it needs %d transmitters and %d receivers per npu "
                        "(fabric: tx %d, rx %d)",
                        t->name, dout, din, p->fab->tx, p->fab->rx);
            tc_topo_free(t);
            *skip = 1;
            return TC_OK;
        }
        st = tc_error(p->ctx, TC_ERR_USAGE, NULL, 0,
                      "--fallback: %s needs %d transmitters and %d receivers per npu, the fabric has tx %d, rx %d",
                      t->name, dout, din, p->fab->tx, p->fab->rx);
        tc_topo_free(t);
        return st;
    }
    *out = t;
    return TC_OK;
}

static tc_status build_fallbacks(pass *p, const char *list)
{
    static const char *const dflt = "ring,torus2d,torus3d,mesh2d,mesh3d,hypercube";
    const int quiet = list == NULL;
    char *copy = tc_strdup(list ? list : dflt);
    tc_status st = TC_OK;
    if (!copy)
        return nomem(p);
    int count = 1;
    for (const char *c = copy; *c; c++)
        count += *c == ',';
    p->fallback = calloc((size_t)count, sizeof *p->fallback);
    if (!p->fallback) {
        free(copy);
        return nomem(p);
    }
    char *save = NULL;
    int none = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !st; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "none")) {
            none = 1;
            continue;
        }
        tc_topo *t;
        int skip;
        if ((st = make_fallback(p, tok, quiet, &t, &skip)) || skip)
            continue;
        for (int k = 0; k < p->n_fallback && t; k++)
            if (!strcmp(p->fallback[k]->name, t->name)) { /* listed twice */
                tc_topo_free(t);
                t = NULL;
            }
        if (t)
            p->fallback[p->n_fallback++] = t;
    }
    if (!st && none && p->n_fallback > 0)
        st = tc_error(p->ctx, TC_ERR_USAGE, NULL, 0, "--fallback: 'none' cannot be combined with other members");
    free(copy);
    return st;
}

/* A topology whose links are the circuits of round k's pairs. */
static tc_status own_graph(pass *p, int k, tc_topo **out)
{
    const pround *r = &p->rounds[k];
    tc_topo *t;
    char name[48];
    snprintf(name, sizeof name, "round-%d", k);
    if (tc_topo_create(name, p->topo->n_npus, &t))
        return nomem(p);
    for (int i = 0; i < r->n; i++)
        if (tc_topo_add_link(t, p->pairs[r->off + i].src, p->pairs[r->off + i].dst, 0, p->ac, p->bc, 0)) {
            tc_topo_free(t);
            return nomem(p);
        }
    if (tc_topo_index(t) || ph_price_circuits(t, p->ac, p->bc)) {
        tc_topo_free(t);
        return nomem(p);
    }
    *out = t;
    return TC_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Costs                                                                                             */

/* Scale a round's breakdown by f (a split step's share of its unsplit time). */
static void breakdown_scale(tc_ph_breakdown *t, double f)
{
    t->latency *= f;
    t->bandwidth *= f;
    t->congestion *= f;
    t->dilation *= f;
}

/*
 * Price rounds [first, n_rounds) on graph g into column j.  A static topology (G0, a fallback: its links
 * exist already, no circuit of a round needs a transmitter of its own) carries a split step unsplit: each
 * of the step's m sub-rounds gets 1/m of the whole step's time, and the ILP ties the m sub-rounds to the
 * same static topology (tc_ph_ilp.tie), so together they cost the unsplit step.
 */
static tc_status price_column(pass *p, const tc_topo *g, int j, int first)
{
    ph_coster c;
    if (ph_coster_init(&c, g))
        return nomem(p);
    tc_status st = TC_OK;
    const int is_static = j < p->n_static;
    for (int i = first; i < p->n_rounds && !st; i++) {
        const pround *r = &p->rounds[i];
        tc_ph_cost *d = &p->detail[(size_t)i * p->T + j];
        if (is_static && r->n_sub > 1) {
            if (r->sub == 0)
                st = ph_coster_cost(p->ctx, &c, p->wpairs + r->woff, r->wn, d);
            else
                *d = p->detail[(size_t)(i - 1) * p->T + j];
            if (st)
                break;
            p->cost[(size_t)i * p->T + j] = d->connected ? tc_ph_breakdown_sum(&d->t) : INFINITY;
            continue;
        }
        st = ph_coster_cost(p->ctx, &c, p->pairs + r->off, r->n, d);
        p->cost[(size_t)i * p->T + j] = d->connected ? tc_ph_breakdown_sum(&d->t) : INFINITY;
    }
    /* the split steps' shares, once every sub-round holds the whole step's cost */
    for (int i = first; i < p->n_rounds && is_static; i++) {
        const pround *r = &p->rounds[i];
        if (r->n_sub > 1) {
            breakdown_scale(&p->detail[(size_t)i * p->T + j].t, 1.0 / r->n_sub);
            if (isfinite(p->cost[(size_t)i * p->T + j]))
                p->cost[(size_t)i * p->T + j] = tc_ph_breakdown_sum(&p->detail[(size_t)i * p->T + j].t);
        }
    }
    ph_coster_fini(&c);
    return st;
}

static tc_status price_all(pass *p)
{
    const size_t cells = (size_t)p->n_rounds * p->T;
    p->cost = malloc(cells * sizeof *p->cost);
    p->detail = calloc(cells, sizeof *p->detail);
    if (!p->cost || !p->detail)
        return nomem(p);
    for (size_t k = 0; k < cells; k++)
        p->cost[k] = NAN;
    tc_status st = price_column(p, p->topo, 0, 0);
    for (int f = 0; f < p->n_fallback && !st; f++)
        st = price_column(p, p->fallback[f], 1 + f, 0);
    for (int j = p->n_static; j < p->T && !st; j++) {
        const int k = p->own_round[j - p->n_static];
        tc_topo *g = NULL;
        if ((st = own_graph(p, k, &g)))
            break;
        st = price_column(p, g, j, k);
        tc_topo_free(g);
    }
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Output                                                                                            */

static tc_status out_ints(pass *p, const int *v, int n, int *off)
{
    tc_sched_photonic *o = p->out;
    int *q = realloc(o->ints, ((size_t)o->n_ints + n + 1) * sizeof *q);
    if (!q)
        return nomem(p);
    o->ints = q;
    if (n > 0)
        memcpy(o->ints + o->n_ints, v, (size_t)n * sizeof *v);
    *off = o->n_ints;
    o->n_ints += n;
    return TC_OK;
}

/* The circuits of topology j (set up before round i): distinct (src, dst) pairs of its links, or round i's
 * own pairs. */
static tc_status circuits_of(pass *p, int i, int j, int **src, int **dst, int *n)
{
    const tc_topo *g = j == 0 ? p->topo : j < p->n_static ? p->fallback[j - 1] : NULL;
    int cap = g ? g->n_links : p->rounds[i].n;
    *src = malloc((size_t)(cap > 0 ? cap : 1) * sizeof **src);
    *dst = malloc((size_t)(cap > 0 ? cap : 1) * sizeof **dst);
    if (!*src || !*dst)
        return nomem(p);
    int m = 0;
    if (g) {
        for (int v = 0; v < g->n_npus; v++)
            for (int k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                int w = g->links[g->out_link[k]].dst, dup = 0;
                for (int q = g->out_off[v]; q < k && !dup; q++)
                    dup = g->links[g->out_link[q]].dst == w;
                if (!dup) {
                    (*src)[m] = v;
                    (*dst)[m++] = w;
                }
            }
    } else {
        const pround *r = &p->rounds[i];
        for (int k = 0; k < r->n; k++) {
            (*src)[m] = p->pairs[r->off + k].src;
            (*dst)[m++] = p->pairs[r->off + k].dst;
        }
    }
    *n = m;
    return TC_OK;
}

/* A sink keeping the first error's text (the router's reason when a configuration cannot be routed). */
static void keep_first(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    pass *p = user;
    (void)file, (void)line, (void)col;
    if (level == TC_DIAG_ERROR && !p->fail_msg[0])
        snprintf(p->fail_msg, sizeof p->fail_msg, "%s", msg);
}

/* Route the circuits of round i's topology j and record them in the plan's round.  PH_UNROUTABLE (and
 * fail_round, fail_topo, fail_msg set, nothing reported) when the fabric cannot carry them. */
static tc_status route_round(pass *p, int i, int j, double time_limit, tc_ph_round *pr)
{
    int *src = NULL, *dst = NULL, n = 0;
    tc_ph_routes *rt = NULL;
    tc_ph_route_summary sum;
    memset(&sum, 0, sizeof sum);
    char what[96];
    const pround *r = &p->rounds[i];
    if (r->n_sub > 1)
        snprintf(what, sizeof what, "round %d (step %d, part %d of %d)", i, r->step, r->sub + 1, r->n_sub);
    else
        snprintf(what, sizeof what, "round %d (step %d)", i, r->step);
    tc_status st = circuits_of(p, i, j, &src, &dst, &n);
    if (!st) {
        tc_ctx quiet = *p->ctx;
        quiet.sink = keep_first;
        quiet.sink_user = p;
        p->fail_msg[0] = 0;
        st = tc_photonic_route(&quiet, p->fab, src, dst, n, time_limit, what, &rt, &sum);
        if (st == TC_ERR_INVALID) {
            p->fail_round = i;
            p->fail_topo = j;
            st = PH_UNROUTABLE;
        } else if (st) {
            st = tc_error(p->ctx, st, NULL, 0, "%s", p->fail_msg[0] ? p->fail_msg : "photonic: routing failed");
        } else if (quiet.n_warnings > p->ctx->n_warnings) {
            p->ctx->n_warnings = quiet.n_warnings;
        }
    }
    if (st)
        goto done;
    if ((st = tc_photonic_routes_attach(p->out, pr, rt, &sum))) {
        st = nomem(p);
        goto done;
    }
    if (sum.method == TC_PH_FIBER_LP)
        tc_warn(p->ctx, NULL, 0,
                "%s: the fiber ILP reached the %g s limit (--ilp-time): LP relaxation rounded, %d circuits on the "
                "busiest server pair (LP bound %.2f; optimality gap %d: the optimum is at least %d)",
                what, time_limit, sum.z, sum.lp_bound, sum.z - (int)ceil(sum.bound - 1e-6),
                (int)ceil(sum.bound - 1e-6));
done:
    free(src);
    free(dst);
    tc_photonic_routes_free(rt);
    tc_photonic_route_summary_free(&sum);
    return st;
}

static tc_status build_output(pass *p, const int *choice, double time_limit)
{
    tc_sched_photonic *o = calloc(1, sizeof *o);
    if (!o)
        return nomem(p);
    p->out = o;
    o->reconfig = p->topo->photonic.reconfig_delay;
    o->alpha = p->ac;
    o->beta = p->bc;
    ph_plan_fabric(o, p->fab);
    o->n_fallbacks = p->n_fallback;
    if (p->n_fallback && !(o->fallbacks = calloc((size_t)p->n_fallback, sizeof *o->fallbacks)))
        return nomem(p);
    for (int f = 0; f < p->n_fallback; f++)
        if (!(o->fallbacks[f] = tc_strdup(p->fallback[f]->name)))
            return nomem(p);
    if (!(o->rounds = calloc((size_t)p->n_rounds, sizeof *o->rounds)))
        return nomem(p);
    o->n_rounds = p->n_rounds;
    tc_status st = TC_OK;
    for (int i = 0; i < p->n_rounds && !st; i++) {
        const pround *r = &p->rounds[i];
        tc_ph_round *pr = &o->rounds[i];
        const int j = choice[i];
        const tc_ph_cost *d = &p->detail[(size_t)i * p->T + j];
        pr->step = r->step;
        pr->sub = r->sub;
        pr->n_sub = r->n_sub;
        pr->kind = j == 0 ? TC_PH_INITIAL : j < p->n_static ? TC_PH_FALLBACK : TC_PH_OWN;
        pr->reconfig = j != (i ? choice[i - 1] : 0);
        /* own circuits: the round that set them up (this one, or the one whose circuits are kept) */
        pr->which = j == 0 ? 0 : j < p->n_static ? j - 1 : pr->reconfig ? i : o->rounds[i - 1].which;
        pr->n_pairs = r->n;
        pr->pair_off = -1;
        pr->congestion = d->congestion;
        pr->dilation = d->dilation;
        pr->fiber_method = TC_PH_FIBER_NONE;
        pr->t = d->t;
        pr->t.reconfig = pr->reconfig ? o->reconfig : 0;
        for (int k = 0; k < r->n; k++)
            if (p->pairs[r->off + k].bytes > pr->bytes)
                pr->bytes = p->pairs[r->off + k].bytes;
        if (r->n_sub > 1) {
            int *flat = malloc((size_t)(2 * r->n > 0 ? 2 * r->n : 1) * sizeof *flat);
            if (!flat)
                return nomem(p);
            for (int k = 0; k < r->n; k++) {
                flat[2 * k] = p->pairs[r->off + k].src;
                flat[2 * k + 1] = p->pairs[r->off + k].dst;
            }
            st = out_ints(p, flat, 2 * r->n, &pr->pair_off);
            free(flat);
            if (st)
                break;
        }
        if (pr->reconfig) {
            o->n_reconfigs++;
            st = route_round(p, i, j, time_limit, pr);
        }
        tc_ph_breakdown_add(&o->total, &pr->t);
    }
    return st;
}

tc_status tc_photonic_plan(tc_ctx *ctx, const tc_topo *topo, const tc_sched *s, const tc_photonic_opts *opts,
                           tc_sched_photonic **out)
{
    pass p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.topo = topo;
    p.s = s;
    tc_photonic_opts dflt;
    if (!opts) {
        tc_photonic_opts_init(&dflt);
        opts = &dflt;
    }
    const double lim = opts->ilp_time > 0 ? opts->ilp_time : TC_PHOTONIC_ILP_TIME;
    tc_status st = TC_OK;
    int *choice = NULL;
    unsigned char *keep = NULL, *tie = NULL;
    if (!topo->photonic.present)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0,
                        "the topology has no <photonic> element: the photonic pass needs one (man 5 "
                        "tacosc-topology)");
    if (!topo->photonic.reconfig_set)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, topo->photonic.line,
                        "photonic: no reconfiguration delay: give <photonic reconfig=\"TIME\"> or 'reconfig TIME' "
                        "in the cost file");
    if (s->n_ranks != topo->n_npus)
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0, "photonic: the schedule has %d ranks but the topology %d npus",
                        s->n_ranks, topo->n_npus);
    if (!topo->out_off)
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "photonic: the topology is not indexed");
    if ((st = ph_npus_only(ctx, topo)) || (st = tc_photonic_fabric_create(ctx, topo, &p.fab)))
        return st;
    circuit_cost(&p);
    if ((st = build_rounds(&p)) || (st = build_fallbacks(&p, opts->fallback)))
        goto done;
    p.n_static = 1 + p.n_fallback;
    p.own = malloc((size_t)p.n_rounds * sizeof *p.own);
    p.own_round = malloc((size_t)p.n_rounds * sizeof *p.own_round);
    if (!p.own || !p.own_round) {
        st = nomem(&p);
        goto done;
    }
    p.T = p.n_static;
    for (int i = 0; i < p.n_rounds; i++) {
        if (p.rounds[i].canon == i) {
            p.own_round[p.T - p.n_static] = i;
            p.own[i] = p.T++;
        } else
            p.own[i] = p.own[p.rounds[i].canon];
    }
    if ((st = price_all(&p)))
        goto done;
    choice = malloc((size_t)p.n_rounds * sizeof *choice);
    keep = calloc((size_t)p.n_static, 1);
    tie = calloc((size_t)p.n_rounds, 1);
    if (!choice || !keep || !tie) {
        st = nomem(&p);
        goto done;
    }
    int dout, din;
    degrees(topo, &dout, &din);
    keep[0] = (p.fab->tx > 0 && dout > p.fab->tx) || (p.fab->rx > 0 && din > p.fab->rx);
    for (int i = 0; i + 1 < p.n_rounds; i++)
        tie[i] = p.rounds[i + 1].step == p.rounds[i].step && p.rounds[i + 1].sub == p.rounds[i].sub + 1;
    tc_ph_ilp ilp = {.n_rounds = p.n_rounds, .n_static = p.n_static, .n_topos = p.T, .cost = p.cost, .own = p.own,
                     .keep_only = keep, .tie = tie, .r = topo->photonic.reconfig_delay, .time_limit = lim};
    /* Solve; when the fabric cannot route a chosen configuration, leave it out and solve again (item 2 of
     * issue 22: G0 kept from round 0 is always a plan, so this ends with one; each pass bans one more). */
    int replanned = 0;
    for (int tries = 0;; tries++) {
        double obj;
        if ((st = tc_photonic_ilp_solve(ctx, &ilp, choice, &obj)))
            goto done;
        for (int i = 0; i < p.n_rounds; i++)
            if (!isfinite(p.cost[(size_t)i * p.T + choice[i]])) {
                st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "photonic: round %d has no topology connecting its pairs%s",
                              i, tries ? " the fabric can route" : "");
                goto done;
            }
        st = build_output(&p, choice, lim);
        if (st != PH_UNROUTABLE)
            break;
        tc_sched_photonic_free(p.out);
        p.out = NULL;
        const int j = p.fail_topo;
        char name[64];
        if (j == 0)
            snprintf(name, sizeof name, "the initial topology");
        else if (j < p.n_static)
            snprintf(name, sizeof name, "fallback %s", p.fallback[j - 1]->name);
        else
            snprintf(name, sizeof name, "round %d's circuits", p.own_round[j - p.n_static]);
        tc_warn(ctx, NULL, 0, "photonic: %s cannot be set up on the fabric (%s): planned again without it", name,
                p.fail_msg);
        replanned++;
        if (j < p.n_static) {
            keep[j] = 1; /* never set up (G0: kept from round 0 or left for good) */
        } else {
            for (int i = 0; i < p.n_rounds; i++)
                if (!isnan(p.cost[(size_t)i * p.T + j]))
                    p.cost[(size_t)i * p.T + j] = INFINITY;
        }
        if (tries > p.T) {
            st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "photonic: no routable plan after %d tries", tries + 1);
            goto done;
        }
    }
    if (st || (st = tc_photonic_fixed(ctx, topo, s, &p.out->fixed)))
        goto done;
    p.out->n_replanned = replanned;
    *out = p.out;
    p.out = NULL;
done:
    tc_sched_photonic_free(p.out);
    tc_photonic_fabric_free(p.fab);
    for (int f = 0; f < p.n_fallback; f++)
        tc_topo_free(p.fallback[f]);
    free(p.fallback);
    free(p.pairs);
    free(p.wpairs);
    free(p.rounds);
    free(p.cost);
    free(p.detail);
    free(p.own);
    free(p.own_round);
    free(choice);
    free(keep);
    free(tie);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Text                                                                                              */

static const char *kind_text(const tc_sched_photonic *p, const tc_ph_round *r, char *buf, size_t n)
{
    if (r->kind == TC_PH_INITIAL)
        snprintf(buf, n, "the initial topology");
    else if (r->kind == TC_PH_FALLBACK)
        snprintf(buf, n, "fallback %s", r->which < p->n_fallbacks ? p->fallbacks[r->which] : "?");
    else
        snprintf(buf, n, "round %d's circuits", r->which);
    return buf;
}

static void breakdown_line(FILE *f, const char *what, const tc_ph_breakdown *b)
{
    char t[32], l[32], w[32], c[32], d[32], r[32];
    fprintf(f, "  %s %s: latency %s, bandwidth %s, congestion %s, dilation %s, reconfiguration %s\n", what,
            tc_fmt_time(tc_ph_breakdown_sum(b), t, sizeof t), tc_fmt_time(b->latency, l, sizeof l),
            tc_fmt_time(b->bandwidth, w, sizeof w), tc_fmt_time(b->congestion, c, sizeof c),
            tc_fmt_time(b->dilation, d, sizeof d), tc_fmt_time(b->reconfig, r, sizeof r));
}

void tc_photonic_summary_write(const tc_sched_photonic *p, FILE *f)
{
    char b1[32], b2[32], k[96];
    int split = 0;
    for (int i = 0; i < p->n_rounds; i++)
        split += p->rounds[i].sub == 1;
    fprintf(f, "  photonic: r %s, circuits %s + %.3f GB/s; %d rounds (%d step%s split by tx/rx), %d "
               "reconfiguration%s; fallbacks",
            tc_fmt_time(p->reconfig, b1, sizeof b1), tc_fmt_time(p->alpha, b2, sizeof b2),
            p->beta > 0 ? 1e-9 / p->beta : 0.0, p->n_rounds, split, split == 1 ? "" : "s", p->n_reconfigs,
            p->n_reconfigs == 1 ? "" : "s");
    for (int i = 0; i < p->n_fallbacks; i++)
        fprintf(f, " %s", p->fallbacks[i]);
    fprintf(f, "%s\n", p->n_fallbacks ? "" : " none");
    if (p->n_replanned)
        fprintf(f, "  photonic: %d configuration%s the fabric could not route left out, the rounds planned again "
                   "without %s (the warnings say which)\n",
                p->n_replanned, p->n_replanned == 1 ? "" : "s", p->n_replanned == 1 ? "it" : "them");
    breakdown_line(f, "photonic time", &p->total);
    breakdown_line(f, "on the initial topology without reconfiguration", &p->fixed);
    for (int i = 0; i < p->n_rounds;) {
        const tc_ph_round *r = &p->rounds[i];
        int j = i + 1;
        tc_ph_breakdown sum = r->t;
        while (j < p->n_rounds && !p->rounds[j].reconfig && p->rounds[j].kind == r->kind &&
               p->rounds[j].which == r->which && r->n_sub == 1 && p->rounds[j].n_sub == 1)
            tc_ph_breakdown_add(&sum, &p->rounds[j++].t);
        int cmax = 0, dmax = 0;
        for (int q = i; q < j; q++) {
            if (p->rounds[q].congestion > cmax)
                cmax = p->rounds[q].congestion;
            if (p->rounds[q].dilation > dmax)
                dmax = p->rounds[q].dilation;
        }
        if (j - i == 1 && r->n_sub > 1)
            fprintf(f, "  round %d (step %d, part %d of %d):", i, r->step, r->sub + 1, r->n_sub);
        else if (j - i == 1)
            fprintf(f, "  round %d (step %d):", i, r->step);
        else
            fprintf(f, "  rounds %d-%d (steps %d-%d):", i, j - 1, r->step, p->rounds[j - 1].step);
        fprintf(f, " %s %s%s; congestion %d, dilation %d; %s", r->reconfig ? "reconfigure to" : "keep",
                kind_text(p, r, k, sizeof k), r->reconfig && j - i > 1 ? ", then keep it" : "", cmax, dmax,
                tc_fmt_time(tc_ph_breakdown_sum(&sum), b1, sizeof b1));
        if (r->reconfig && r->fiber_method != TC_PH_FIBER_NONE)
            fprintf(f, "; %d circuits, %d fibers (busiest server pair %d, LP bound %.2f%s)", r->n_circ, r->fibers,
                    r->fiber_z, r->fiber_lp, r->fiber_method == TC_PH_FIBER_LP ? ", ILP timed out: LP rounded" : "");
        else if (r->reconfig)
            fprintf(f, "; %d circuits", r->n_circ);
        fputc('\n', f);
        i = j;
    }
}

void tc_photonic_fabric_describe(const tc_topo *t, FILE *f)
{
    const tc_photonic *p = &t->photonic;
    char b[32];
    if (p->reconfig_set)
        fprintf(f, "reconfig %s", tc_fmt_time(p->reconfig_delay, b, sizeof b));
    else
        fprintf(f, "reconfig not given");
    if (p->tx_per_npu)
        fprintf(f, ", tx %d", p->tx_per_npu);
    else
        fprintf(f, ", tx unlimited");
    if (p->rx_per_npu)
        fprintf(f, ", rx %d", p->rx_per_npu);
    else
        fprintf(f, ", rx unlimited");
    fprintf(f, ", wavelengths %d", p->wavelengths > 0 ? p->wavelengths : 1);
    if (p->mzi_size)
        fprintf(f, ", mzi %dx%d", p->mzi_size, p->mzi_size);
    else
        fprintf(f, ", no MZI mesh");
    if (p->tile_rows)
        fprintf(f, ", tiles %dx%d", p->tile_rows, p->tile_cols);
    if (p->grid_rows)
        fprintf(f, ", grid %dx%d", p->grid_rows, p->grid_cols);
    if (p->fibers)
        fprintf(f, ", fibers %d", p->fibers);
    else
        fprintf(f, ", fibers as needed");
    fputc('\n', f);
}
