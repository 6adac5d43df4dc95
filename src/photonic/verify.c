/*
 * verify: a photonic plan's section checked against its schedule (`tacosc verify`) and its time recomputed
 * (`tacosc sim`, `verify`): the plan on disk may have been edited, so nothing stored is trusted.
 *
 * Accepts: a schedule with s->photonic (as read from JSON), optionally G0 (the topology, indexed).
 * Rules (each error names its rule and the round):
 *   sequence  a round that does not reconfigure keeps the previous round's topology (round 0: G0);
 *             n_reconfigs counts the reconfigurations; the reconfiguration time is r exactly there;
 *   pairs     a reconfiguration to a round's own circuits sets up exactly that round's pairs (the step's
 *             transfers, or the sub-round's stored pairs); one back to G0 sets up G0's links (with --topo);
 *   tx/rx     no NPU starts more circuits than tx or ends more than rx in one reconfiguration;
 *   mesh      consecutive MZIs of a circuit are neighbours of the plane, wavelengths within the fabric's;
 *   conflict  no two circuits of a reconfiguration share a wavelength on an MZI link or on a fiber;
 *   time      every round's stored time equals Alg. 2 recomputed on the circuits it runs on (priced as
 *             circuits, a GPU's bandwidth shared by its circuits, PCCL §4.2) or on G0, and the total the
 *             sum (relative 1e-6); rounds on G0 need the topology (without it they are not recomputed).
 * Cost: one Alg. 2 per round (a BFS per source) and a sort of the circuits' links per reconfiguration.
 */
#include "photonic_int.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct vstep {
    tc_ph_pair *pairs; /* every step's distinct pairs, step by step */
    int *off;          /* per step (0 .. n_steps): pairs[off[k] .. off[k + 1]) */
    int n_steps;
} vstep;

static int cmp_pair(const void *a, const void *b)
{
    const tc_ph_pair *x = a, *y = b;
    return x->src != y->src ? (x->src < y->src ? -1 : 1) : x->dst != y->dst ? (x->dst < y->dst ? -1 : 1) : 0;
}

/* The schedule's steps as sorted distinct pairs carrying their chunks' bytes (as the pass forms them). */
static tc_status steps_make(const tc_sched *s, vstep *v)
{
    memset(v, 0, sizeof *v);
    v->n_steps = s->n_steps;
    v->off = calloc((size_t)s->n_steps + 2, sizeof *v->off);
    v->pairs = malloc((size_t)(s->n_xfers > 0 ? s->n_xfers : 1) * sizeof *v->pairs);
    if (!v->off || !v->pairs)
        return TC_ERR_NOMEM;
    int m = 0;
    for (int k = 0; k < s->n_steps; k++) {
        v->off[k] = m;
        const int first = m;
        for (int i = 0; i < s->n_xfers; i++) {
            const tc_xfer *x = &s->xfers[i];
            if (x->step == k && x->src != x->dst)
                v->pairs[m++] = (tc_ph_pair){x->src, x->dst, (double)s->chunk_bytes};
        }
        qsort(v->pairs + first, (size_t)(m - first), sizeof *v->pairs, cmp_pair);
        int w = first;
        for (int i = first; i < m; i++) {
            if (w > first && !cmp_pair(&v->pairs[w - 1], &v->pairs[i]))
                v->pairs[w - 1].bytes += (double)s->chunk_bytes;
            else
                v->pairs[w++] = v->pairs[i];
        }
        m = w;
    }
    v->off[s->n_steps] = m;
    return TC_OK;
}

static void steps_free(vstep *v)
{
    free(v->pairs);
    free(v->off);
}

/* Round i's pairs (malloc'd into *out): its stored sub-round pairs, else its step's. */
static tc_status round_pairs(const tc_sched *s, const vstep *v, const tc_ph_round *r, tc_ph_pair **out, int *n)
{
    const tc_sched_photonic *p = s->photonic;
    const int k = r->step;
    const tc_ph_pair *sp = k >= 0 && k < v->n_steps ? v->pairs + v->off[k] : NULL;
    const int ns = sp ? v->off[k + 1] - v->off[k] : 0;
    const int m = r->pair_off >= 0 ? r->n_pairs : ns;
    *out = malloc((size_t)(m > 0 ? m : 1) * sizeof **out);
    if (!*out)
        return TC_ERR_NOMEM;
    if (r->pair_off < 0) {
        if (m)
            memcpy(*out, sp, (size_t)m * sizeof *sp);
    } else {
        for (int q = 0; q < m; q++) {
            tc_ph_pair key = {p->ints[r->pair_off + 2 * q], p->ints[r->pair_off + 2 * q + 1], 0};
            const tc_ph_pair *hit = sp ? bsearch(&key, sp, (size_t)ns, sizeof *sp, cmp_pair) : NULL;
            key.bytes = hit ? hit->bytes : 0;
            (*out)[q] = key;
        }
    }
    *n = m;
    return TC_OK;
}

/* The circuits of reconfiguration round c as a topology priced as circuits. */
static tc_status circuit_graph(const tc_sched *s, const tc_ph_round *c, tc_topo **out)
{
    const tc_sched_photonic *p = s->photonic;
    tc_topo *t = NULL;
    if (tc_topo_create("circuits", s->n_ranks, &t))
        return TC_ERR_NOMEM;
    for (int k = 0; k < c->n_circ; k++) {
        const tc_ph_circuit *x = &p->circuits[c->circ_off + k];
        if (tc_topo_add_link(t, x->src, x->dst, 0, p->alpha, p->beta, 0)) {
            tc_topo_free(t);
            return TC_ERR_NOMEM;
        }
    }
    if (tc_topo_index(t) || ph_price_circuits(t, p->alpha, p->beta)) {
        tc_topo_free(t);
        return TC_ERR_NOMEM;
    }
    *out = t;
    return TC_OK;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * (fabs(a) + fabs(b)) + 1e-15;
}

tc_status tc_photonic_reprice(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, tc_ph_breakdown *rounds,
                              int *priced, tc_ph_breakdown *total)
{
    const tc_sched_photonic *p = s->photonic;
    vstep v;
    tc_ph_breakdown sum = {0};
    tc_topo *g = NULL;
    int g_from = -2; /* the reconfiguration round g holds the circuits of (-1: G0 itself, not owned) */
    tc_ph_pair *pairs = NULL;
    if (!p)
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0, "the plan has no photonic section");
    if (steps_make(s, &v)) {
        steps_free(&v);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
    }
    tc_status st = TC_OK;
    int last = -1; /* the latest reconfiguration */
    for (int i = 0; i < p->n_rounds && !st; i++) {
        const tc_ph_round *r = &p->rounds[i];
        if (r->reconfig)
            last = i;
        const int on_g0 = r->kind == TC_PH_INITIAL;
        const int is_static = r->kind != TC_PH_OWN;
        if (priced)
            priced[i] = 0;
        if (on_g0 && !topo)
            continue;
        if (!on_g0 && last < 0) {
            st = tc_error(ctx, TC_ERR_INVALID, s->file, 0,
                          "photonic: sequence: round %d runs on circuits no reconfiguration set up", i);
            break;
        }
        const tc_topo *on = on_g0 ? topo : NULL;
        if (!on_g0) {
            if (g_from != last) {
                tc_topo_free(g);
                g = NULL;
                if ((st = circuit_graph(s, &p->rounds[last], &g))) {
                    st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
                    break;
                }
                g_from = last;
            }
            on = g;
        }
        int n = 0;
        free(pairs);
        pairs = NULL;
        tc_ph_round whole_round = *r;
        whole_round.pair_off = -1; /* static topologies carry a split step whole */
        if ((st = round_pairs(s, &v, is_static && r->n_sub > 1 ? &whole_round : r, &pairs, &n))) {
            st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
            break;
        }
        tc_ph_cost c;
        if ((st = tc_photonic_cost(ctx, on, pairs, n, &c)))
            break;
        if (!c.connected) {
            st = tc_error(ctx, TC_ERR_INVALID, s->file, 0,
                          "photonic: time: round %d (step %d) has a pair its %s does not join", i, r->step,
                          on_g0 ? "topology" : "circuits");
            break;
        }
        tc_ph_breakdown t = c.t;
        if (is_static && r->n_sub > 1) {
            const double f = 1.0 / r->n_sub;
            t.latency *= f, t.bandwidth *= f, t.congestion *= f, t.dilation *= f;
        }
        t.reconfig = r->reconfig ? p->reconfig : 0;
        if (rounds)
            rounds[i] = t;
        if (priced)
            priced[i] = 1;
        tc_ph_breakdown_add(&sum, &t);
    }
    free(pairs);
    tc_topo_free(g);
    steps_free(&v);
    if (!st && total)
        *total = sum;
    return st;
}

/* ------------------------------------------------------------------------------------------------ */

static int cmp_key(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    for (int k = 0; k < 2; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* The rules on the circuits of reconfiguration round i. */
static tc_status check_circuits(tc_ctx *ctx, const tc_sched *s, const vstep *v, const tc_topo *topo, int i,
                                const char *path)
{
    const tc_sched_photonic *p = s->photonic;
    const tc_ph_round *r = &p->rounds[i];
    const int n = r->n_circ, R = s->n_ranks;
    tc_status st = TC_OK;
    int *out = calloc((size_t)R * 2, sizeof *out);
    tc_ph_pair *want = NULL, *have = malloc((size_t)(n > 0 ? n : 1) * sizeof *have);
    long long *keys = NULL;
    int n_keys = 0, cap_keys = 0, n_want = 0;
    if (!out || !have)
        goto nomem;
    for (int k = 0; k < n; k++) {
        const tc_ph_circuit *c = &p->circuits[r->circ_off + k];
        if (c->src < 0 || c->src >= R || c->dst < 0 || c->dst >= R || c->src == c->dst) {
            st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: pairs: round %d: circuit %d->%d is not between two "
                          "of the %d npus", i, c->src, c->dst, R);
            goto done;
        }
        have[k] = (tc_ph_pair){c->src, c->dst, 0};
        if ((p->tx > 0 && ++out[c->src] > p->tx) || (p->rx > 0 && ++out[R + c->dst] > p->rx)) {
            st = tc_error(ctx, TC_ERR_INVALID, path, 0,
                          "photonic: tx/rx: round %d: circuit %d->%d exceeds the fabric's %s (tx %d, rx %d)", i,
                          c->src, c->dst, p->tx > 0 && out[c->src] > p->tx ? "transmitters" : "receivers", p->tx,
                          p->rx);
            goto done;
        }
        /* the mesh path and its links, the fibers: one key (link, wavelength) each */
        const int width = p->grid_cols > 0 ? p->grid_cols * p->mzi : p->mzi;
        if (c->wavelength >= p->wavelengths || (c->wavelength < 0 && c->n_mzi > 0)) {
            st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: mesh: round %d: circuit %d->%d: wavelength %d "
                          "outside the fabric's %d", i, c->src, c->dst, c->wavelength, p->wavelengths);
            goto done;
        }
        const int hops = (c->n_mzi > 1 ? c->n_mzi - 1 : 0) + (c->n_srv > 1 ? c->n_srv - 1 : 0);
        if (n_keys + hops > cap_keys) {
            cap_keys = 2 * (n_keys + hops) + 64;
            long long *q = realloc(keys, (size_t)cap_keys * 2 * sizeof *q);
            if (!q)
                goto nomem;
            keys = q;
        }
        for (int m = 0; m + 1 < c->n_mzi; m++) {
            const long long a = p->ints[c->mzi_off + m], b = p->ints[c->mzi_off + m + 1];
            const long long ay = width ? a / width : 0, ax = width ? a % width : a, by = width ? b / width : 0,
                            bx = width ? b % width : b;
            if (llabs(ay - by) + llabs(ax - bx) != 1) {
                st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: mesh: round %d: circuit %d->%d jumps from MZI "
                              "%lld to MZI %lld (not neighbours)", i, c->src, c->dst, a, b);
                goto done;
            }
            keys[2 * n_keys] = (a < b ? a : b) * 2000000000LL + (a < b ? b : a);
            keys[2 * n_keys++ + 1] = (long long)c->wavelength * 1000000 + k; /* k to name the circuit */
        }
        for (int m = 0; m + 1 < c->n_srv && c->wavelength >= 0; m++) {
            const long long a = p->ints[c->srv_off + m], b = p->ints[c->srv_off + m + 1];
            const long long f = p->ints[c->fib_off + m];
            keys[2 * n_keys] = -1 - (((a < b ? a : b) * 65536 + (a < b ? b : a)) * 65536 + f);
            keys[2 * n_keys++ + 1] = (long long)c->wavelength * 1000000 + k;
        }
    }
    /* conflict: sort by (link, wavelength); equal neighbours with the same wavelength share it */
    if (n_keys > 1) /* keys is NULL for a round without circuits (qsort's argument must not be) */
        qsort(keys, (size_t)n_keys, 2 * sizeof *keys, cmp_key);
    for (int k = 1; k < n_keys; k++)
        if (keys[2 * k] == keys[2 * k - 2] && keys[2 * k + 1] / 1000000 == keys[2 * k - 1] / 1000000) {
            const tc_ph_circuit *a = &p->circuits[r->circ_off + keys[2 * k - 1] % 1000000],
                                *b = &p->circuits[r->circ_off + keys[2 * k + 1] % 1000000];
            st = tc_error(ctx, TC_ERR_INVALID, path, 0,
                          "photonic: conflict: round %d: circuits %d->%d and %d->%d share wavelength %lld on one %s", i,
                          a->src, a->dst, b->src, b->dst, keys[2 * k + 1] / 1000000,
                          keys[2 * k] < 0 ? "fiber" : "MZI link");
            goto done;
        }
    /* pairs: own circuits are the round's pairs; G0's are its links */
    if (r->kind == TC_PH_OWN) {
        if ((st = round_pairs(s, v, r, &want, &n_want)))
            goto nomem;
    } else if (r->kind == TC_PH_INITIAL && topo) {
        want = malloc((size_t)(topo->n_links > 0 ? topo->n_links : 1) * sizeof *want);
        if (!want)
            goto nomem;
        for (int l = 0; l < topo->n_links; l++)
            if (topo->links[l].src < R && topo->links[l].dst < R && topo->links[l].src != topo->links[l].dst)
                want[n_want++] = (tc_ph_pair){topo->links[l].src, topo->links[l].dst, 0};
        qsort(want, (size_t)n_want, sizeof *want, cmp_pair);
        int w = 0;
        for (int k = 0; k < n_want; k++)
            if (!w || cmp_pair(&want[w - 1], &want[k]))
                want[w++] = want[k];
        n_want = w;
    } else {
        goto done;
    }
    qsort(have, (size_t)n, sizeof *have, cmp_pair);
    for (int a = 0, b = 0; a < n_want || b < n;) {
        const int c = a == n_want ? 1 : b == n ? -1 : cmp_pair(&want[a], &have[b]);
        if (c) {
            const tc_ph_pair *x = c < 0 ? &want[a] : &have[b];
            st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: pairs: round %d: %s %d->%d %s", i,
                          c < 0 ? (r->kind == TC_PH_OWN ? "pair" : "link") : "circuit", x->src, x->dst,
                          c < 0 ? "has no circuit" : (r->kind == TC_PH_OWN ? "is not a pair of the round"
                                                                             : "is not a link of the topology"));
            goto done;
        }
        if (b + 1 < n && !cmp_pair(&have[b], &have[b + 1])) {
            st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: pairs: round %d: circuit %d->%d set up twice", i,
                          have[b].src, have[b].dst);
            goto done;
        }
        a++, b++;
    }
    goto done;
nomem:
    st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
done:
    free(out);
    free(have);
    free(want);
    free(keys);
    return st;
}

tc_status tc_photonic_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *path)
{
    const tc_sched_photonic *p = s->photonic;
    if (!p)
        return TC_OK;
    if (!path)
        path = s->file;
    tc_status st = TC_OK;
    int count = 0;
    for (int i = 0; i < p->n_rounds; i++) {
        const tc_ph_round *r = &p->rounds[i], *q = i ? &p->rounds[i - 1] : NULL;
        count += r->reconfig;
        const int same = q ? r->kind == q->kind && r->which == q->which : r->kind == TC_PH_INITIAL;
        if (!r->reconfig && !same)
            return tc_error(ctx, TC_ERR_INVALID, path, 0,
                            "photonic: sequence: round %d changes topology without a reconfiguration", i);
        if (r->reconfig && same && i)
            return tc_error(ctx, TC_ERR_INVALID, path, 0,
                            "photonic: sequence: round %d reconfigures to the topology round %d runs on", i, i - 1);
        if (r->t.reconfig != (r->reconfig ? p->reconfig : 0))
            return tc_error(ctx, TC_ERR_INVALID, path, 0,
                            "photonic: time: round %d: reconfiguration time %g s, the plan's r is %g s%s", i,
                            r->t.reconfig, p->reconfig, r->reconfig ? "" : " (and the round does not reconfigure)");
        if (!r->reconfig && r->n_circ)
            return tc_error(ctx, TC_ERR_INVALID, path, 0,
                            "photonic: sequence: round %d sets up %d circuits without a reconfiguration", i, r->n_circ);
    }
    if (count != p->n_reconfigs)
        return tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: sequence: %d reconfigurations counted, %d stored",
                        count, p->n_reconfigs);
    vstep v;
    if (steps_make(s, &v)) {
        steps_free(&v);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
    }
    for (int i = 0; i < p->n_rounds && !st; i++)
        if (p->rounds[i].reconfig)
            st = check_circuits(ctx, s, &v, topo, i, path);
    steps_free(&v);
    if (st)
        return st;
    tc_ph_breakdown *t = malloc((size_t)(p->n_rounds > 0 ? p->n_rounds : 1) * sizeof *t), total;
    int *priced = malloc((size_t)(p->n_rounds > 0 ? p->n_rounds : 1) * sizeof *priced);
    if (!t || !priced) {
        free(t), free(priced);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
    }
    st = tc_photonic_reprice(ctx, s, topo, t, priced, &total);
    tc_ph_breakdown stored = {0};
    for (int i = 0; i < p->n_rounds && !st; i++) {
        const tc_ph_round *r = &p->rounds[i];
        tc_ph_breakdown_add(&stored, &r->t);
        if (priced[i] && !near(tc_ph_breakdown_sum(&r->t), tc_ph_breakdown_sum(&t[i]))) {
            char a[32], b[32];
            st = tc_error(ctx, TC_ERR_INVALID, path, 0,
                          "photonic: time: round %d (step %d) stores %s, its circuits give %s (Alg. 2 recomputed)", i,
                          r->step, tc_fmt_time(tc_ph_breakdown_sum(&r->t), a, sizeof a),
                          tc_fmt_time(tc_ph_breakdown_sum(&t[i]), b, sizeof b));
        }
    }
    if (!st && !near(tc_ph_breakdown_sum(&stored), tc_ph_breakdown_sum(&p->total))) {
        char a[32], b[32];
        st = tc_error(ctx, TC_ERR_INVALID, path, 0, "photonic: time: the total stores %s, its rounds add up to %s",
                      tc_fmt_time(tc_ph_breakdown_sum(&p->total), a, sizeof a),
                      tc_fmt_time(tc_ph_breakdown_sum(&stored), b, sizeof b));
    }
    free(t);
    free(priced);
    return st;
}
