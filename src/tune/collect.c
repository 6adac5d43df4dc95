/* Tuning data of one topology and collective: every candidate at every size, simulated or measured. */
#include "tune_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tc_status tc_tune_collect(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const uint64_t *sizes, int n_sizes,
                          const tc_tune_opts *o, tc_tune_data *d)
{
    int nreg = tc_tune_registry_size(), n_algos = 0;
    int *algos = malloc((size_t)nreg * sizeof *algos);
    double *times = malloc((size_t)nreg * (size_t)(n_sizes > 0 ? n_sizes : 1) * sizeof *times);
    tc_status st = TC_OK;
    if (!algos || !times) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int a = 0; a < nreg; a++)
        if ((tc_algo_registry[a].colls & TC_COLL_BIT(coll)) && (!o->algos || (o->algos >> a & 1)))
            algos[n_algos++] = a;
    tc_tune_topo_id id;
    tc_tune_topo_describe(topo, &id);
    int ti;
    if ((st = tc_tune_data_topo(d, &id, &ti)))
        goto done;
    const char *tname = d->topos[ti].name;
    for (int k = 0; k < n_algos; k++) {
        const char *name = tc_algo_registry[algos[k]].name;
        double *t = times + (size_t)k * (size_t)n_sizes;
        char note[200] = "";
        tc_status as = TC_OK;
        int at = 0; /* the size it failed at */
        if (o->source == TC_TUNE_MEASURE) {
            tc_buf diag = {0};
            tc_ctx sub = *ctx;
            sub.sink = tc_diag_buffer;
            sub.sink_user = &diag;
            as = tc_tune_measure(&sub, topo, coll, algos[k], sizes, n_sizes, o, t);
            tc_tune_first_message(&diag, note, sizeof note);
            tc_buf_free(&diag);
        } else {
            tc_gen_opts go = o->gen;
            for (at = 0; at < n_sizes && as == TC_OK; at++) {
                go.size = sizes[at];
                as = tc_tune_price(ctx, topo, coll, &go, NULL, algos[k], &t[at], NULL, note, sizeof note);
                if (o->progress)
                    o->progress(o->progress_user, 1);
            }
            at--;
            if (o->progress && at + 1 < n_sizes) /* the sizes it will not be priced at */
                o->progress(o->progress_user, n_sizes - at - 1);
        }
        if (as == TC_ERR_UNSUPPORTED) {
            if ((st = tc_tune_data_note(d, "%s on %s (%s): unsupported: %s", name, tname, tc_coll_name(coll), note)))
                goto done;
            for (int i = 0; i < n_sizes; i++)
                t[i] = NAN;
            continue;
        }
        if (as != TC_OK) {
            char sb[32];
            if (o->source == TC_TUNE_MEASURE)
                st = tc_error(ctx, as, NULL, 0, "measuring %s %s on %s: %s", name, tc_coll_name(coll), tname,
                              note[0] ? note : tc_status_str(as));
            else
                st = tc_error(ctx, as, NULL, 0, "%s %s of %s on %s: %s", name, tc_coll_name(coll),
                              tc_fmt_bytes((double)sizes[at], sb, sizeof sb), tname, note);
            goto done;
        }
    }
    for (int i = 0; i < n_sizes; i++)
        for (int k = 0; k < n_algos; k++) {
            double t = times[(size_t)k * (size_t)n_sizes + (size_t)i];
            if (isnan(t))
                continue;
            tc_tune_row r = {coll, sizes[i], algos[k], t, ti, o->gen.chunks, (int)o->source, 0};
            if ((st = tc_tune_data_add(d, &r)))
                goto done;
        }
done:
    free(algos);
    free(times);
    return st;
}
