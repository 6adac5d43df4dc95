/*
 * ilp: Alg. 1 of the photonic paper, the topology of every round, solved exactly with GLPK's MIP solver.
 *
 * Accepts: a tc_ph_ilp (photonic.h): rounds, topologies (G0, the fallback set S, the rounds' own
 *   circuits), CommCost of every round on every topology it may use (INFINITY: disconnected), and r.
 * Returns: one topology per round minimizing sum_i CommCost(G_choice(i), R_i) + r x (reconfigurations),
 *   where round i reconfigures when its topology differs from round i-1's (before round 0: G0).
 * Model (paper eqs. 2-7): the binary t[i][j] "round i runs on G_j" is written as the sum of two binary
 *   arcs of a layered network: keep[i][j] (from j at round i-1 to j at round i) and setup[i][j] (from a
 *   hub h_i that every topology of round i-1 reaches by a switch[i][j] arc costing r).  One unit of flow
 *   leaves G0-before-round-0 and crosses one topology per round: that is eq. 4; setup arcs exist for the
 *   static topologies (unless keep_only) and for round i's own circuits at round i only: that is the
 *   dependency constraint (5); ReconfCost (eq. 7) is r on the switch arcs.  The objective is sum (keep +
 *   setup) cost + r sum switch.  Flow conservation holds at every (round, topology) node and hub.  The
 *   matrix is a network matrix, so the LP relaxation has integral vertices and GLPK needs no branching;
 *   tie rows (the parts of a split step stay together on a static topology: flow into (i, j) = flow into
 *   (i + 1, j)) leave that class and GLPK may branch.  It is always solved as a MIP (glp_intopt, presolve on) so integrality is GLPK's to guarantee.  A
 *   disconnected (round, topology) costs a penalty P = 1 + 2 sum_i (largest finite cost of round i + r),
 *   more than any plan that avoids every penalty.
 * Checks: glp_intopt's return code (0, else the GLPK code is named; GLP_ETMLIM means --ilp-time ran out)
 *   and glp_mip_status (GLP_OPT required).  Codes and statuses: GLPK's glpk.h and the comments of
 *   glp_intopt / glp_mip_status in GLPK's src/api.
 * Cost: about 3 (n S + n^2 / 2) binaries for n rounds and S static topologies; 7 rounds on 128 NPUs solve
 *   in about a millisecond, 127 rounds of distinct circuits in about a second (bench-photonic).
 * Trace (2 rounds, S = {G0}, costs G0: 10, 10; own 0: 1, inf; own 1: -, 1; r = 3):
 *   keep G0: 20; own 0 then own 1: 1 + 3 + 1 + 3 = 8; own 0 then G0: 1 + 3 + 10 + 3 = 17 -> choice [1, 2].
 */
#include "photonic_int.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tc_photonic_opts_init(tc_photonic_opts *o)
{
    memset(o, 0, sizeof *o);
    o->ilp_time = TC_PHOTONIC_ILP_TIME;
}

static int own_of(const tc_ph_ilp *p, int i)
{
    return p->own ? p->own[i] : p->n_static + i;
}

/* Can round i run on topology j?  Static: always; own: from the first round it belongs to (first[j]). */
static int avail(const tc_ph_ilp *p, const int *first, int i, int j)
{
    return j < p->n_static || (first[j] >= 0 && first[j] <= i);
}

/* Can the fabric be set up to topology j before round i? */
static int settable(const tc_ph_ilp *p, int i, int j)
{
    if (j < p->n_static)
        return !(p->keep_only && p->keep_only[j]);
    return own_of(p, i) == j;
}

double tc_photonic_ilp_value(const tc_ph_ilp *p, const int *choice)
{
    const int T = p->n_topos;
    double v = 0;
    for (int i = 0; i < p->n_rounds; i++) {
        v += p->cost[(size_t)i * T + choice[i]];
        if (choice[i] != (i ? choice[i - 1] : 0))
            v += p->r;
    }
    return v;
}

/* GLPK's name for a glp_intopt return code. */
static const char *glp_ret_name(int ret)
{
    switch (ret) {
    case GLP_EBOUND: return "GLP_EBOUND (incorrect bounds)";
    case GLP_EROOT: return "GLP_EROOT (no optimal basis for the LP relaxation)";
    case GLP_ENOPFS: return "GLP_ENOPFS (no primal feasible solution)";
    case GLP_ENODFS: return "GLP_ENODFS (no dual feasible solution)";
    case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
    case GLP_EMIPGAP: return "GLP_EMIPGAP (mip gap tolerance reached)";
    case GLP_ETMLIM: return "GLP_ETMLIM (time limit exceeded)";
    case GLP_ESTOP: return "GLP_ESTOP (stopped by the application)";
    default: return "an unknown GLPK code";
    }
}

static const char *glp_status_name(int s)
{
    switch (s) {
    case GLP_OPT: return "optimal";
    case GLP_FEAS: return "feasible, optimality not proven";
    case GLP_NOFEAS: return "no integer feasible solution";
    case GLP_UNDEF: return "undefined";
    default: return "unknown";
    }
}

/* The matrix, built column by column: each arc leaves one node (+1) and enters another (-1). */
typedef struct net {
    glp_prob *lp;
    int *ia, *ja;
    double *ar;
    int nnz, cap;
} net;

static int grow(net *m)
{
    if (m->nnz + 2 >= m->cap) {
        int nc = m->cap ? 2 * m->cap : 4096;
        int *a = realloc(m->ia, (size_t)nc * sizeof *a);
        if (a)
            m->ia = a;
        int *b = a ? realloc(m->ja, (size_t)nc * sizeof *b) : NULL;
        if (b)
            m->ja = b;
        double *d = b ? realloc(m->ar, (size_t)nc * sizeof *d) : NULL;
        if (!d)
            return -1;
        m->ar = d;
        m->cap = nc;
    }
    return 0;
}

static int arc(net *m, int from, int to, double cost)
{
    if (grow(m))
        return -1;
    int c = glp_add_cols(m->lp, 1);
    glp_set_col_kind(m->lp, c, GLP_BV);
    glp_set_obj_coef(m->lp, c, cost);
    m->nnz++, m->ia[m->nnz] = from, m->ja[m->nnz] = c, m->ar[m->nnz] = 1;
    m->nnz++, m->ia[m->nnz] = to, m->ja[m->nnz] = c, m->ar[m->nnz] = -1;
    return c;
}

tc_status tc_photonic_ilp_solve(tc_ctx *ctx, const tc_ph_ilp *p, int *choice, double *objective)
{
    const int n = p->n_rounds, S = p->n_static, T = p->n_topos;
    if (n < 1 || S < 1 || T < S)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "reconfiguration ILP: %d rounds, %d static of %d topologies",
                        n, S, T);
    int *first = malloc((size_t)T * sizeof *first);
    if (!first)
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");
    for (int j = 0; j < T; j++)
        first[j] = -1;
    for (int i = n - 1; i >= 0; i--) {
        if (own_of(p, i) < S || own_of(p, i) >= T) {
            free(first);
            return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "reconfiguration ILP: round %d's own topology %d is not in "
                            "[%d, %d)", i, own_of(p, i), S, T);
        }
        first[own_of(p, i)] = i;
    }
    /* penalty for disconnected (round, topology) */
    double P = 1;
    for (int i = 0; i < n; i++) {
        double mx = 0;
        for (int j = 0; j < T; j++)
            if (avail(p, first, i, j) && isfinite(p->cost[(size_t)i * T + j]) && p->cost[(size_t)i * T + j] > mx)
                mx = p->cost[(size_t)i * T + j];
        P += 2 * (mx + p->r);
    }
    tc_status st = TC_OK;
    /* rows: node (i, j) for every available topology, hub i, the start and the end */
    int *node = malloc((size_t)n * T * sizeof *node), *in_col = NULL, *keep_col = NULL;
    net m = {0};
    int term = glp_term_out(GLP_OFF);
    if (!node) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");
        goto done;
    }
    m.lp = glp_create_prob();
    glp_set_obj_dir(m.lp, GLP_MIN);
    int rows = 0;
    const int start = ++rows;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < T; j++)
            node[(size_t)i * T + j] = avail(p, first, i, j) ? ++rows : 0;
    const int hub0 = rows + 1;
    rows += n;
    const int end = ++rows;
    const int tie0 = rows + 1; /* a row per (tied round, static topology available at both) */
    int n_tie = 0;
    for (int i = 0; i + 1 < n; i++)
        if (p->tie && p->tie[i])
            n_tie += S;
    rows += n_tie;
    glp_add_rows(m.lp, rows);
    for (int r = 1; r <= rows; r++)
        glp_set_row_bnds(m.lp, r, GLP_FX, r == start ? 1 : r == end ? -1 : 0, r == start ? 1 : r == end ? -1 : 0);
    /* arcs: for round i, from the previous state (start for i = 0) */
    in_col = calloc((size_t)n * T, sizeof *in_col);
    keep_col = calloc((size_t)n * T, sizeof *keep_col);
    if (!in_col || !keep_col) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");
        goto done;
    }
    for (int i = 0; i < n && !st; i++) {
        const int hub = hub0 + i;
        /* leave the previous topology: keep it or switch to the hub */
        if (i == 0) {
            if (arc(&m, start, hub, p->r) < 0)
                st = TC_ERR_NOMEM;
            if (!st && node[0] && (keep_col[0] = arc(&m, start, node[0], isfinite(p->cost[0]) ? p->cost[0] : P)) < 0)
                st = TC_ERR_NOMEM;
        } else {
            for (int j = 0; j < T && !st; j++) {
                const int from = node[(size_t)(i - 1) * T + j];
                if (!from)
                    continue;
                if (arc(&m, from, hub, p->r) < 0)
                    st = TC_ERR_NOMEM;
                const int to = node[(size_t)i * T + j];
                const double c = p->cost[(size_t)i * T + j];
                if (!st && to && (keep_col[(size_t)i * T + j] = arc(&m, from, to, isfinite(c) ? c : P)) < 0)
                    st = TC_ERR_NOMEM;
            }
        }
        for (int j = 0; j < T && !st; j++) {
            const int to = node[(size_t)i * T + j];
            const double c = p->cost[(size_t)i * T + j];
            if (to && settable(p, i, j) && (in_col[(size_t)i * T + j] = arc(&m, hub, to, isfinite(c) ? c : P)) < 0)
                st = TC_ERR_NOMEM;
        }
    }
    for (int j = 0; j < T && !st; j++)
        if (node[(size_t)(n - 1) * T + j] && arc(&m, node[(size_t)(n - 1) * T + j], end, 0) < 0)
            st = TC_ERR_NOMEM;
    /* ties: the flow into (i, j) equals the flow into (i + 1, j) for static j (rows fixed at 0) */
    for (int i = 0, row = tie0; i + 1 < n && !st; i++) {
        if (!p->tie || !p->tie[i])
            continue;
        for (int j = 0; j < S && !st; j++, row++) {
            const int cols[4] = {keep_col[(size_t)i * T + j], in_col[(size_t)i * T + j],
                                 keep_col[(size_t)(i + 1) * T + j], in_col[(size_t)(i + 1) * T + j]};
            for (int k = 0; k < 4 && !st; k++) {
                if (!cols[k])
                    continue;
                if (grow(&m)) {
                    st = TC_ERR_NOMEM;
                    break;
                }
                m.nnz++, m.ia[m.nnz] = row, m.ja[m.nnz] = cols[k], m.ar[m.nnz] = k < 2 ? 1 : -1;
            }
        }
    }
    if (st) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");
        goto done;
    }
    glp_load_matrix(m.lp, m.nnz, m.ia, m.ja, m.ar);
    /* the LP relaxation first, by the dual simplex from the all-slack basis (dual feasible: every cost is
     * >= 0), then the MIP from its optimal basis; without that basis the MIP presolves for itself */
    const double lim = p->time_limit > 0 ? p->time_limit : TC_PHOTONIC_ILP_TIME;
    const double t0 = tc_now();
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.meth = GLP_DUALP;
    sp.tm_lim = lim * 1000 < 2e9 ? (int)(lim * 1000) : 2000000000;
    const int lp_ok = glp_simplex(m.lp, &sp) == 0 && glp_get_status(m.lp) == GLP_OPT;
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = lp_ok ? GLP_OFF : GLP_ON;
    double left = lim - (tc_now() - t0);
    parm.tm_lim = left <= 0.001 ? 1 : left * 1000 < 2e9 ? (int)(left * 1000) : 2000000000;
    int ret = glp_intopt(m.lp, &parm);
    int status = glp_mip_status(m.lp);
    if (ret == GLP_ETMLIM) {
        st = tc_error(ctx, TC_ERR_LIMIT, NULL, 0,
                      "reconfiguration ILP: GLPK reached the time limit of %g s (--ilp-time) before proving an "
                      "optimum (solution status: %s)",
                      lim, glp_status_name(status));
        goto done;
    }
    if (ret != 0) {
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "reconfiguration ILP: glp_intopt failed: %s",
                      glp_ret_name(ret));
        goto done;
    }
    if (status != GLP_OPT) {
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "reconfiguration ILP: GLPK found no optimum (status: %s)",
                      glp_status_name(status));
        goto done;
    }
    for (int i = 0; i < n; i++) {
        choice[i] = -1;
        for (int j = 0; j < T; j++) {
            const int k = keep_col[(size_t)i * T + j], s = in_col[(size_t)i * T + j];
            if ((k && glp_mip_col_val(m.lp, k) > 0.5) || (s && glp_mip_col_val(m.lp, s) > 0.5))
                choice[i] = j;
        }
        if (choice[i] < 0) {
            st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "reconfiguration ILP: round %d has no topology", i);
            goto done;
        }
    }
    *objective = tc_photonic_ilp_value(p, choice);
done:
    if (m.lp)
        glp_delete_prob(m.lp);
    glp_term_out(term);
    free(first);
    free(node);
    free(in_col);
    free(keep_col);
    free(m.ia);
    free(m.ja);
    free(m.ar);
    return st;
}
