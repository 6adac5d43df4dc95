/*
 * ilp: Alg. 1 of the photonic paper, the topology of every round, solved exactly with GLPK's MIP solver.
 *
 * Accepts: a tc_ph_ilp (photonic.h): rounds, static topologies (G0 first, then the fallback set S), the
 *   CommCost of every round on every topology available to it (INFINITY: disconnected) and r.
 * Returns: one topology per round minimizing sum_i CommCost(G_choice(i), R_i) + r x (reconfigurations),
 *   where round i reconfigures when its topology differs from round i-1's (before round 0: G0).
 * Model (paper eqs. 2-7): binary t[i][j] for every topology j available to round i (static ones, and
 *   round k's own circuits for k <= i); sum_j t[i][j] = 1 (4); t[i][own k] <= t[i-1][own k] for i > k,
 *   the dependency constraint (5) in chain form; the ReconfCost AND of eq. 7 is linearized by y[i][j] <=
 *   t[i][j], y[i][j] <= t[i-1][j] (t[-1][G0] = 1), with objective sum t cost + r sum_i (1 - sum_j y[i][j]).
 *   As r >= 0, y[i][j] = t[i][j] AND t[i-1][j] at the optimum.  The LP relaxation is a shortest-path
 *   network (stay arcs y, switch arcs t - y through one hub per round), so GLPK's presolve and one LP
 *   usually settle it without branching.  A disconnected (round, topology) costs a penalty P = 1 + 2
 *   sum_i (largest finite cost of round i + r), more than any plan that avoids every penalty.
 * Checks: glp_intopt's return code (0, else the GLPK code is named; GLP_ETMLIM means --ilp-time ran out)
 *   and glp_mip_status (GLP_OPT required).  Codes and statuses: GLPK's glpk.h and the comments of
 *   glp_intopt / glp_mip_status in GLPK's src/api (glpapi09.c in GLPK 4.x).
 * Cost: (n S + n^2 / 2) binaries for n rounds and S static topologies; 7 rounds on 128 NPUs solve in
 *   about a millisecond.
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

/* Is topology j available to round i?  (static: always; own k: k <= i) */
static int avail(const tc_ph_ilp *p, int i, int j)
{
    return j < p->n_static || j - p->n_static <= i;
}

double tc_photonic_ilp_value(const tc_ph_ilp *p, const int *choice)
{
    const int T = p->n_static + p->n_rounds;
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

tc_status tc_photonic_ilp_solve(tc_ctx *ctx, const tc_ph_ilp *p, int *choice, double *objective)
{
    const int n = p->n_rounds, S = p->n_static, T = S + n;
    if (n < 1 || S < 1)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "reconfiguration ILP: %d rounds and %d static topologies", n,
                        S);
    /* penalty for disconnected (round, topology) */
    double P = 1;
    for (int i = 0; i < n; i++) {
        double m = 0;
        for (int j = 0; j < T; j++)
            if (avail(p, i, j) && isfinite(p->cost[(size_t)i * T + j]) && p->cost[(size_t)i * T + j] > m)
                m = p->cost[(size_t)i * T + j];
        P += 2 * (m + p->r);
    }
    tc_status st = TC_OK;
    int *tcol = malloc((size_t)n * T * sizeof *tcol), *ycol = malloc((size_t)n * T * sizeof *ycol);
    int *ia = NULL, *ja = NULL;
    double *ar = NULL;
    int nnz = 0, cap = 0;
    glp_prob *lp = NULL;
    int term = glp_term_out(GLP_OFF);
    if (!tcol || !ycol) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");
        goto done;
    }
    lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    /* columns */
    int ncol = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < T; j++) {
            tcol[(size_t)i * T + j] = ycol[(size_t)i * T + j] = 0;
            if (avail(p, i, j))
                tcol[(size_t)i * T + j] = ++ncol;
            if (avail(p, i, j) && (i > 0 ? avail(p, i - 1, j) : j == 0))
                ycol[(size_t)i * T + j] = ++ncol;
        }
    glp_add_cols(lp, ncol);
    double constant = 0;
    for (int i = 0; i < n; i++) {
        constant += p->r;
        for (int j = 0; j < T; j++) {
            int c = tcol[(size_t)i * T + j];
            if (c) {
                double v = p->cost[(size_t)i * T + j];
                glp_set_col_kind(lp, c, GLP_BV);
                glp_set_obj_coef(lp, c, isfinite(v) ? v : P);
            }
            if ((c = ycol[(size_t)i * T + j])) {
                glp_set_col_kind(lp, c, GLP_BV);
                glp_set_obj_coef(lp, c, -p->r);
            }
        }
    }
    glp_set_obj_coef(lp, 0, constant);
    /* rows */
#define ADD(row, col, val)                                                                                 \
    do {                                                                                                   \
        if (nnz + 1 >= cap) {                                                                              \
            int nc = cap ? 2 * cap : 1024;                                                                 \
            int *a = realloc(ia, (size_t)nc * sizeof *a), *b = a ? realloc(ja, (size_t)nc * sizeof *b) : NULL; \
            double *d = b ? realloc(ar, (size_t)nc * sizeof *d) : NULL;                                     \
            if (a) ia = a;                                                                                 \
            if (b) ja = b;                                                                                 \
            if (d) ar = d;                                                                                 \
            if (!d) {                                                                                      \
                st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "reconfiguration ILP: out of memory");          \
                goto done;                                                                                 \
            }                                                                                              \
            cap = nc;                                                                                      \
        }                                                                                                  \
        ++nnz;                                                                                             \
        ia[nnz] = (row);                                                                                   \
        ja[nnz] = (col);                                                                                   \
        ar[nnz] = (val);                                                                                   \
    } while (0)
    int row = 0;
    for (int i = 0; i < n; i++) {
        /* (4) one topology per round */
        row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_FX, 1, 1);
        for (int j = 0; j < T; j++)
            if (tcol[(size_t)i * T + j])
                ADD(row, tcol[(size_t)i * T + j], 1);
        for (int j = 0; j < T; j++) {
            const int t = tcol[(size_t)i * T + j], y = ycol[(size_t)i * T + j];
            const int tprev = i > 0 ? tcol[(size_t)(i - 1) * T + j] : 0;
            const int chained = j >= S ? j - S < i : p->keep_only && p->keep_only[j];
            if (t && chained) {
                /* (5): t[i][j] <= t[i-1][j]; for a keep-only static topology at round 0: only G0 */
                row = glp_add_rows(lp, 1);
                if (i > 0) {
                    glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
                    ADD(row, t, 1);
                    ADD(row, tprev, -1);
                } else {
                    glp_set_row_bnds(lp, row, GLP_UP, 0, j == 0 ? 1 : 0);
                    ADD(row, t, 1);
                }
            }
            if (y) {
                row = glp_add_rows(lp, 1); /* y <= t */
                glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
                ADD(row, y, 1);
                ADD(row, t, -1);
                if (i > 0) {
                    row = glp_add_rows(lp, 1); /* y <= t[i-1] */
                    glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
                    ADD(row, y, 1);
                    ADD(row, tprev, -1);
                }
            }
        }
    }
#undef ADD
    glp_load_matrix(lp, nnz, ia, ja, ar);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    double lim = p->time_limit > 0 ? p->time_limit : TC_PHOTONIC_ILP_TIME;
    parm.tm_lim = lim * 1000 < 2e9 ? (int)(lim * 1000) : 2000000000;
    int ret = glp_intopt(lp, &parm);
    int status = glp_mip_status(lp);
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
        for (int j = 0; j < T; j++)
            if (tcol[(size_t)i * T + j] && glp_mip_col_val(lp, tcol[(size_t)i * T + j]) > 0.5)
                choice[i] = j;
        if (choice[i] < 0) {
            st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "reconfiguration ILP: round %d has no topology", i);
            goto done;
        }
    }
    *objective = tc_photonic_ilp_value(p, choice);
done:
    if (lp)
        glp_delete_prob(lp);
    glp_term_out(term);
    free(tcol);
    free(ycol);
    free(ia);
    free(ja);
    free(ar);
    return st;
}
