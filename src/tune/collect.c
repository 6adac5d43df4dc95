/* Tuning data of one topology and collective: every candidate at every size, simulated or measured.
 *
 * Measured labels are signal, not noise: after the first o->repeats launches of every candidate, a size
 * whose fastest and second fastest candidates' launches overlap (the slowest launch of the fastest not
 * below the quickest of the second) has both measured again, o->repeats launches more, up to
 * TC_TUNE_EXTRA_ROUNDS times; a size still unseparated then is a tie, named in the data's notes (the
 * label stays the lower median, ties to the registry order). */
#include "tune_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TC_TUNE_EXTRA_ROUNDS 2

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, smallest and largest of v[0..n) (sorted in place). */
static double med3(double *v, int n, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    *lo = v[0];
    *hi = v[n - 1];
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The launches of candidates (runs: n_algos x n_sizes x cap, counts in nr) measured again where the best
 * two overlap; times (n_algos x n_sizes) set to the medians; ties noted in d. */
static tc_status separate(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const uint64_t *sizes, int n_sizes,
                          const tc_tune_opts *o, const int *algos, int n_algos, double *runs, int *nr, int cap,
                          double *times, tc_tune_data *d, const char *tname)
{
    const int reps = o->repeats > 0 ? o->repeats : 1;
    uint64_t *sub = malloc((size_t)n_sizes * sizeof *sub);
    int *subi = malloc((size_t)n_sizes * sizeof *subi), *best = malloc((size_t)n_sizes * 2 * sizeof *best);
    double *tmp = malloc((size_t)n_sizes * (size_t)reps * sizeof *tmp), *w = malloc((size_t)cap * sizeof *w);
    tc_status st = sub && subi && best && tmp && w ? TC_OK : TC_ERR_NOMEM;
    for (int round = 0; !st && round <= TC_TUNE_EXTRA_ROUNDS; round++) {
        int open = 0;
        for (int i = 0; i < n_sizes; i++) { /* medians, the best two, separated or not */
            int b = -1, c = -1;
            double lo[2] = {0}, hi[2] = {0};
            for (int k = 0; k < n_algos; k++) {
                const int n = nr[(size_t)k * n_sizes + i];
                double *t = &times[(size_t)k * n_sizes + i];
                if (!n) {
                    *t = NAN;
                    continue;
                }
                memcpy(w, runs + ((size_t)k * n_sizes + i) * cap, (size_t)n * sizeof *w);
                double l, h;
                *t = med3(w, n, &l, &h);
                if (b < 0 || *t < times[(size_t)b * n_sizes + i])
                    c = b, b = k;
                else if (c < 0 || *t < times[(size_t)c * n_sizes + i])
                    c = k;
                (void)l;
                (void)h;
            }
            best[2 * i] = best[2 * i + 1] = -1;
            if (c < 0)
                continue;
            for (int j = 0; j < 2; j++) {
                const int k = j ? c : b, n = nr[(size_t)k * n_sizes + i];
                memcpy(w, runs + ((size_t)k * n_sizes + i) * cap, (size_t)n * sizeof *w);
                med3(w, n, &lo[j], &hi[j]);
            }
            if (hi[0] < lo[1])
                continue; /* separated */
            if (round == TC_TUNE_EXTRA_ROUNDS) {
                char sb[32];
                st = tc_tune_data_note(d,
                                       "tie: %s %s on %s: %s %.3f us (%.3f..%.3f) and %s %.3f us (%.3f..%.3f) overlap "
                                       "after %d launches each",
                                       tc_coll_name(coll), tc_fmt_bytes((double)sizes[i], sb, sizeof sb), tname,
                                       tc_algo_registry[algos[b]].name, times[(size_t)b * n_sizes + i] * 1e6,
                                       lo[0] * 1e6, hi[0] * 1e6, tc_algo_registry[algos[c]].name,
                                       times[(size_t)c * n_sizes + i] * 1e6, lo[1] * 1e6, hi[1] * 1e6,
                                       nr[(size_t)b * n_sizes + i]);
                if (st)
                    break;
                continue;
            }
            best[2 * i] = b;
            best[2 * i + 1] = c;
            open++;
        }
        if (st || !open || round == TC_TUNE_EXTRA_ROUNDS)
            break;
        for (int k = 0; !st && k < n_algos; k++) { /* the contenders of the open sizes, measured again */
            int ns = 0;
            for (int i = 0; i < n_sizes; i++)
                if (best[2 * i] == k || best[2 * i + 1] == k) {
                    subi[ns] = i;
                    sub[ns++] = sizes[i];
                }
            if (!ns)
                continue;
            tc_diag_rec diag = {0}; /* the measurement's first error, reworded */
            tc_ctx q = *ctx;
            q.sink = tc_diag_record;
            q.sink_user = &diag;
            tc_status ms = tc_tune_measure_runs(&q, topo, coll, algos[k], sub, ns, o, tmp);
            if (ms)
                st = tc_error(ctx, ms, NULL, 0, "measuring %s %s on %s again: %.200s", tc_algo_registry[algos[k]].name,
                              tc_coll_name(coll), tname, diag.have ? diag.msg : tc_status_str(ms));
            for (int j = 0; !st && j < ns; j++) {
                int *n = &nr[(size_t)k * n_sizes + subi[j]];
                for (int r = 0; r < reps && *n < cap; r++)
                    runs[((size_t)k * n_sizes + subi[j]) * cap + (size_t)(*n)++] = tmp[(size_t)j * reps + r];
            }
        }
    }
    free(sub);
    free(subi);
    free(best);
    free(tmp);
    free(w);
    return st;
}

tc_status tc_tune_collect(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, const uint64_t *sizes, int n_sizes,
                          const tc_tune_opts *o, tc_tune_data *d)
{
    int nreg = tc_tune_registry_size(), n_algos = 0;
    int *algos = malloc((size_t)nreg * sizeof *algos), *nr = NULL;
    double *times = malloc((size_t)nreg * (size_t)(n_sizes > 0 ? n_sizes : 1) * sizeof *times), *runs = NULL;
    const int reps = o->repeats > 0 ? o->repeats : 1, cap = reps * (1 + TC_TUNE_EXTRA_ROUNDS);
    tc_status st = TC_OK;
    if (o->source == TC_TUNE_MEASURE &&
        (!(runs = malloc((size_t)nreg * (size_t)(n_sizes > 0 ? n_sizes : 1) * (size_t)cap * sizeof *runs)) ||
         !(nr = calloc((size_t)nreg * (size_t)(n_sizes > 0 ? n_sizes : 1), sizeof *nr)))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
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
        char note[TC_TUNE_NOTE_MAX] = "";
        tc_status as = TC_OK;
        int at = 0; /* the size it failed at */
        if (o->source == TC_TUNE_MEASURE) {
            tc_diag_rec diag = {0}; /* the measurement's first error, as the note */
            tc_ctx sub = *ctx;
            sub.sink = tc_diag_record;
            sub.sink_user = &diag;
            double *first = malloc((size_t)(n_sizes > 0 ? n_sizes : 1) * (size_t)reps * sizeof *first);
            as = first ? tc_tune_measure_runs(&sub, topo, coll, algos[k], sizes, n_sizes, o, first) : TC_ERR_NOMEM;
            tc_diag_note(diag.file, diag.line, diag.msg, note, sizeof note);
            for (int i = 0; as == TC_OK && i < n_sizes; i++) {
                for (int r = 0; r < reps; r++)
                    runs[((size_t)k * n_sizes + i) * cap + r] = first[(size_t)i * reps + r];
                nr[(size_t)k * n_sizes + i] = reps;
            }
            free(first);
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
    if (o->source == TC_TUNE_MEASURE &&
        (st = separate(ctx, topo, coll, sizes, n_sizes, o, algos, n_algos, runs, nr, cap, times, d, tname)))
        goto done;
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
    free(runs);
    free(nr);
    return st;
}
