/* --algo auto: the algorithm for one collective and size, chosen by a model or by simulating every
 * candidate, with the runner-up and its simulated cost. */
#include "tune_int.h"

#include <stdlib.h>
#include <string.h>

tc_status tc_tune_choose(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const tc_gen_opts *go,
                         const tc_tune_model *m, tc_tune_choice *out)
{
    tc_tune_choice c;
    memset(&c, 0, sizeof c);
    c.runner_up = -1;
    if (m) {
        tc_tune_topo_id id;
        tc_tune_topo_describe(topo, &id);
        tc_tune_model_predict(m, &id, go->size, &c.algo, &c.runner_up);
        c.by_model = 1;
        c.outside = go->size < m->min_bytes || go->size > m->max_bytes ||
                    tc_tune_model_outside(m, &id, go->size, 1, NULL, 0) > 0;
        if (c.runner_up >= 0 &&
            tc_tune_price(ctx, topo, coll, go, NULL, c.runner_up, &c.runner_up_time, NULL, NULL, 0) != TC_OK)
            c.runner_up_time = 0;
        *out = c;
        return TC_OK;
    }
    tc_tune_cand *cands = NULL;
    int n = 0;
    tc_sim_opts so;
    tc_sim_opts_init(&so);
    so.no_bound = 1;
    tc_status st = tc_tune_eval(ctx, topo, coll, go, &so, 0, 0, &cands, &n);
    if (st)
        return st;
    c.n_candidates = n;
    for (int i = 0; i < n; i++)
        c.n_refused += cands[i].status != TC_OK;
    if (n == 0 || cands[0].status != TC_OK) {
        tc_buf why = {0}; /* every reason once, whole, after the candidates that gave it */
        for (int i = 0; i < n && !st; i++) {
            int seen = 0;
            for (int k = 0; k < i && !seen; k++)
                seen = !strcmp(cands[k].note, cands[i].note);
            for (int k = i; k < n && !seen && !st; k++)
                if (!strcmp(cands[k].note, cands[i].note))
                    st = tc_buf_printf(&why, "%s%s", k == i ? "; " : ", ", tc_algo_registry[cands[k].algo].name);
            if (!seen && !st)
                st = tc_buf_printf(&why, ": %s", cands[i].note);
        }
        if (st) {
            tc_buf_free(&why);
            tc_tune_cands_free(cands, n);
            return st;
        }
        tc_tune_cands_free(cands, n);
        st = tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "auto: no algorithm can generate %s on %s%s",
                      tc_coll_name(coll), topo->name ? topo->name : "this topology", why.data ? why.data : "");
        tc_buf_free(&why);
        return st;
    }
    c.algo = cands[0].algo;
    c.time = cands[0].time;
    if (n > 1 && cands[1].status == TC_OK) {
        c.runner_up = cands[1].algo;
        c.runner_up_time = cands[1].time;
    }
    tc_tune_cands_free(cands, n);
    *out = c;
    return TC_OK;
}
