/* The learned dispatcher's model (PCCL "Big Send-off" paper, §IV-C): one C-SVC per collective with an RBF
 * kernel (libsvm), trained on the samples of the tuning data.
 *
 * Samples: one per (topology, size) of the collective; features log2 bytes, log2 ranks, log2 nodes, log2
 * ranks per node; label the fastest algorithm (ties: the earlier registry entry).
 * Split: per class (stratified) the samples are shuffled with tc_rng (ctx->seed) and 20% (rounded, at
 * least one left for training) held out for the test.  Scaling: each feature to [-1, 1] by the minimum
 * and maximum over the training samples (a constant feature to 0), then rounded to 8 significant digits,
 * the precision svm_save_model writes support vectors with ("%.8g", cjlin1/libsvm svm.cpp), so a model
 * read back predicts exactly as the one trained.
 * Grid: log2 C in -5, -3, ..., 15 and log2 gamma in 3, 1, ..., -15 (libsvm tools/grid.py's defaults); each
 * pair scored by 5-fold cross-validation on the training samples (folds dealt per class in shuffled
 * order: stratified), best accuracy first, then the lower mean slowdown of the cross-validated
 * predictions, then grid order.  The model is trained on every training sample with that pair and
 * scored on the held-out samples.  A collective with one winning algorithm has nothing to separate: its
 * model is that one class (libsvm predicts its label) and the grid is skipped.
 *
 * Trace (2 classes, 50 samples: tacos wins 40, ring2 10): test 8 tacos + 2 ring2, train 32 + 8; folds
 * get tacos samples 0..31 dealt 0,1,2,3,4,0,... and ring2 samples continuing the deal; 110 grid points x
 * 5 trainings of 32 samples; the best pair is trained on all 40 and scored on the 10. */
#include "tune_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sample {
    double x[TC_TUNE_FEATURES]; /* features, unscaled */
    int topo;
    uint64_t bytes;
    int best, second;           /* registry indices (second -1: none) */
    int label;                  /* class index */
    const double *t;            /* per registry index: time, NaN where missing */
} sample;

static void quiet(const char *s) { (void)s; }

static int cmp_row(const void *pa, const void *pb)
{
    const tc_tune_row *a = *(const tc_tune_row *const *)pa, *b = *(const tc_tune_row *const *)pb;
    if (a->topo != b->topo)
        return a->topo - b->topo;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return a->algo - b->algo;
}

/* Samples of coll in d: *out (n), with a time table of n x nreg (*times). */
static tc_status make_samples(const tc_tune_data *d, tc_coll coll, int nreg, sample **out, int *n_out,
                              double **times)
{
    int nr = 0;
    for (int i = 0; i < d->n_rows; i++)
        nr += d->rows[i].coll == coll;
    const tc_tune_row **rows = malloc((size_t)(nr ? nr : 1) * sizeof *rows);
    sample *s = malloc((size_t)(nr ? nr : 1) * sizeof *s);
    double *t = malloc((size_t)(nr ? nr : 1) * (size_t)nreg * sizeof *t);
    if (!rows || !s || !t) {
        free(rows);
        free(s);
        free(t);
        return TC_ERR_NOMEM;
    }
    nr = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (d->rows[i].coll == coll)
            rows[nr++] = &d->rows[i];
    qsort(rows, (size_t)nr, sizeof *rows, cmp_row);
    int n = 0;
    for (int i = 0; i < nr;) {
        int j = i;
        double *ts = t + (size_t)n * (size_t)nreg;
        for (int a = 0; a < nreg; a++)
            ts[a] = NAN;
        while (j < nr && rows[j]->topo == rows[i]->topo && rows[j]->bytes == rows[i]->bytes) {
            ts[rows[j]->algo] = rows[j]->time;
            j++;
        }
        sample *x = &s[n++];
        x->topo = rows[i]->topo;
        x->bytes = rows[i]->bytes;
        x->t = ts;
        x->best = x->second = -1;
        for (int a = 0; a < nreg; a++) { /* registry order: a tie keeps the earlier entry */
            if (isnan(ts[a]))
                continue;
            if (x->best < 0 || ts[a] < ts[x->best]) {
                x->second = x->best;
                x->best = a;
            } else if (x->second < 0 || ts[a] < ts[x->second])
                x->second = a;
        }
        tc_tune_features_get(&d->topos[x->topo], x->bytes, x->x);
        i = j;
    }
    free(rows);
    *out = s;
    *n_out = n;
    *times = t;
    return TC_OK;
}

/* x scaled by m's minimum and maximum, rounded as svm_save_model writes it, into nodes (5 entries). */
static void scale(const tc_tune_model *m, const double x[TC_TUNE_FEATURES], struct svm_node *nodes)
{
    for (int k = 0; k < TC_TUNE_FEATURES; k++) {
        double lo = m->scale_min[k], hi = m->scale_max[k], v = 0;
        if (hi > lo)
            v = -1 + 2 * (x[k] - lo) / (hi - lo);
        char b[40];
        snprintf(b, sizeof b, "%.8g", v);
        nodes[k].index = k + 1;
        nodes[k].value = strtod(b, NULL);
    }
    nodes[TC_TUNE_FEATURES].index = -1;
    nodes[TC_TUNE_FEATURES].value = 0;
}

/* The model's best and second class (libsvm labels) for scaled nodes, by one-against-one votes. */
static void vote(const struct svm_model *svm, const struct svm_node *x, int *best, int *second)
{
    int nr = svm_get_nr_class(svm);
    int labels[64], votes[64] = {0};
    double dec[64 * 63 / 2];
    if (nr > 64)
        nr = 64; /* classes are registry entries: never this many */
    svm_get_labels(svm, labels);
    *best = (int)svm_predict_values(svm, x, dec);
    *second = -1;
    if (nr < 2)
        return;
    int p = 0;
    for (int i = 0; i < nr; i++)
        for (int j = i + 1; j < nr; j++)
            votes[dec[p++] > 0 ? i : j]++;
    int bi = 0, si = -1;
    for (int i = 1; i < nr; i++)
        if (votes[i] > votes[bi])
            bi = i;
    for (int i = 0; i < nr; i++)
        if (i != bi && (si < 0 || votes[i] > votes[si]))
            si = i;
    *second = labels[si];
}

void tc_tune_model_predict(const tc_tune_model *m, const tc_tune_topo_id *id, uint64_t bytes, int *best,
                           int *second)
{
    double x[TC_TUNE_FEATURES];
    struct svm_node nodes[TC_TUNE_FEATURES + 1];
    tc_tune_features_get(id, bytes, x);
    scale(m, x, nodes);
    int b, s;
    vote(m->svm, nodes, &b, &s);
    *best = b >= 0 && b < m->n_classes ? m->classes[b] : m->classes[0];
    *second = s >= 0 && s < m->n_classes ? m->classes[s] : m->n_classes == 1 ? m->runner_up : -1;
    if (*second == *best)
        *second = -1;
}

/* Score a pick (registry index `algo`) of sample x into sc. */
static void score_algo(tc_tune_score *sc, const sample *x, int algo, double *sum_wrong, double *sum_all)
{
    sc->n++;
    if (algo == x->best) {
        sc->correct++;
        return;
    }
    double tp = algo >= 0 ? x->t[algo] : NAN, tb = x->t[x->best];
    if (isnan(tp)) {
        sc->no_time++;
        return;
    }
    double sd = tp / tb - 1;
    if (sd < 0)
        sd = 0;
    *sum_wrong += sd;
    *sum_all += sd;
    if (sd > sc->worst_slowdown)
        sc->worst_slowdown = sd;
}

/* Score a prediction (class `pred`) of sample x into sc. */
static void score_add(tc_tune_score *sc, const tc_tune_model *m, const sample *x, int pred, double *sum_wrong,
                      double *sum_all)
{
    score_algo(sc, x, m->classes[pred], sum_wrong, sum_all);
}

static void score_end(tc_tune_score *sc, double sum_wrong, double sum_all)
{
    int wrong = sc->n - sc->correct - sc->no_time;
    sc->accuracy = sc->n ? (double)sc->correct / sc->n : 1;
    sc->mean_slowdown = wrong > 0 ? sum_wrong / wrong : 0;
    sc->mean_slowdown_all = sc->n - sc->no_time > 0 ? sum_all / (sc->n - sc->no_time) : 0;
}

/* Baselines and the model's own picks (pick[i], registry indices) on samples idx[0..n) into r. */
static void report_fill(tc_tune_report *r, const sample *s, const int *idx, int n, const int *pick, int common)
{
    const int tacos = tc_tune_algo_index("tacos");
    double sums[3][2] = {{0}};
    int seen[64] = {0};
    memset(r, 0, sizeof *r);
    r->common_algo = common;
    int has_tacos = 0;
    for (int i = 0; i < n; i++)
        has_tacos |= tacos >= 0 && !isnan(s[idx[i]].t[tacos]);
    for (int i = 0; i < n; i++) {
        const sample *x = &s[idx[i]];
        score_algo(&r->model, x, pick[i], &sums[0][0], &sums[0][1]);
        score_algo(&r->common, x, common, &sums[1][0], &sums[1][1]);
        if (has_tacos)
            score_algo(&r->tacos, x, tacos, &sums[2][0], &sums[2][1]);
        if (pick[i] >= 0 && pick[i] < 64 && !seen[pick[i]]++)
            r->distinct++;
    }
    score_end(&r->model, sums[0][0], sums[0][1]);
    score_end(&r->common, sums[1][0], sums[1][1]);
    score_end(&r->tacos, sums[2][0], sums[2][1]);
    int topos = 0;
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = s[idx[j]].topo != s[idx[i]].topo;
        topos += first;
    }
    r->n_topos = topos;
}

static void score_line(FILE *f, const char *what, const tc_tune_score *sc)
{
    fprintf(f, "    %-22s accuracy %5.1f%%  mean slowdown %7.3f%%  worst %7.2f%%", what, 100 * sc->accuracy,
            100 * sc->mean_slowdown_all, 100 * sc->worst_slowdown);
    if (sc->no_time)
        fprintf(f, "  (%d pick%s without a time there, not in the means)", sc->no_time, sc->no_time == 1 ? "" : "s");
    fputc('\n', f);
}

void tc_tune_report_print(FILE *f, const char *label, const tc_tune_report *r)
{
    char what[64];
    fprintf(f, "  %s: %d sample%s on %d topolog%s (slowdown: time of the pick / time of the best - 1)\n", label,
            r->model.n, r->model.n == 1 ? "" : "s", r->n_topos, r->n_topos == 1 ? "y" : "ies");
    score_line(f, "model", &r->model);
    snprintf(what, sizeof what, "always %s (commonest)", r->common_algo >= 0 ? tc_algo_registry[r->common_algo].name : "?");
    score_line(f, what, &r->common);
    if (r->tacos.n)
        score_line(f, "always tacos", &r->tacos);
    if (r->model.n < TC_TUNE_MIN_TEST)
        fprintf(f, "  warning: only %d sample%s: too few for the accuracy to mean much (%d or more)\n", r->model.n,
                r->model.n == 1 ? "" : "s", TC_TUNE_MIN_TEST);
    if (r->distinct <= 1 && r->model.n > 0)
        fprintf(f, "  warning: the model picked one algorithm for every sample: no better than always picking it\n");
}

/* Train on the samples idx[0..n) (nodes: 5 per sample, in sample order). */
static struct svm_model *train_on(const sample *s, const int *idx, int n, struct svm_node *nodes, double C,
                                  double gamma, double *y, struct svm_node **xp, const char **why)
{
    for (int i = 0; i < n; i++) {
        y[i] = s[idx[i]].label;
        xp[i] = nodes + (size_t)idx[i] * (TC_TUNE_FEATURES + 1);
    }
    struct svm_problem prob = {n, y, xp};
    struct svm_parameter p;
    memset(&p, 0, sizeof p);
    p.svm_type = C_SVC;
    p.kernel_type = RBF;
    p.gamma = gamma;
    p.C = C;
    p.cache_size = 16;
    p.eps = 1e-3;
    p.shrinking = 1;
    if ((*why = svm_check_parameter(&prob, &p)))
        return NULL;
    svm_set_print_string_function(quiet);
    return svm_train(&prob, &p);
}

void tc_tune_model_free(tc_tune_model *m)
{
    if (!m)
        return;
    if (m->svm) {
        struct svm_model *svm = m->svm;
        svm_free_and_destroy_model(&svm);
    }
    free(m->nodes);
    free(m->classes);
    free(m->cands);
    for (int i = 0; i < m->n_topos; i++)
        free(m->topos[i].name);
    free(m->topos);
    free(m->data_file);
    free(m->dir);
    free(m);
}

tc_status tc_tune_train(tc_ctx *ctx, const tc_tune_data *d, tc_coll coll, tc_tune_model **out)
{
    const int nreg = tc_tune_registry_size();
    sample *s = NULL;
    double *times = NULL, *y = NULL;
    int n = 0, *idx = NULL, *fold = NULL, *is_test = NULL, *count = NULL, *train = NULL, *hold = NULL;
    struct svm_node **xp = NULL;
    tc_tune_model *m = NULL;
    tc_status st = make_samples(d, coll, nreg, &s, &n, &times);
    if (st)
        return st;
    if (n < TC_TUNE_MIN_SAMPLES) {
        st = tc_error(ctx, TC_ERR_INVALID, d->file, 0,
                      "%d %s sample%s (sizes x topologies): a model needs at least %d (%d%% held out for the test, "
                      "%d-fold cross-validation on the rest)",
                      n, tc_coll_name(coll), n == 1 ? "" : "s", TC_TUNE_MIN_SAMPLES, TC_TUNE_TEST_PERCENT,
                      TC_TUNE_FOLDS);
        goto done;
    }
    m = calloc(1, sizeof *m);
    idx = malloc((size_t)n * sizeof *idx);
    fold = malloc((size_t)n * sizeof *fold);
    is_test = calloc((size_t)n, sizeof *is_test);
    count = calloc((size_t)nreg * 3, sizeof *count);
    train = malloc((size_t)n * sizeof *train);
    hold = malloc((size_t)n * sizeof *hold);
    y = malloc((size_t)n * sizeof *y);
    xp = malloc((size_t)n * sizeof *xp);
    if (!m || !idx || !fold || !is_test || !count || !train || !hold || !y || !xp ||
        !(m->nodes = malloc((size_t)n * (TC_TUNE_FEATURES + 1) * sizeof(struct svm_node))) ||
        !(m->classes = malloc((size_t)nreg * sizeof *m->classes)) ||
        !(m->cands = malloc((size_t)nreg * sizeof *m->cands))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    m->coll = coll;
    m->runner_up = -1;
    m->seed = ctx->seed;
    m->n_samples = n;
    m->data_checksum = d->checksum;
    if (d->file && !(m->data_file = tc_strdup(d->file))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    /* classes, candidates, the most frequent runner-up; topologies and sizes of the data */
    int *wins = count, *seconds = count + nreg, *has = count + 2 * nreg;
    for (int i = 0; i < n; i++) {
        wins[s[i].best]++;
        if (s[i].second >= 0)
            seconds[s[i].second]++;
        for (int a = 0; a < nreg; a++)
            has[a] |= !isnan(s[i].t[a]);
    }
    int *cls_of = calloc((size_t)nreg, sizeof *cls_of);
    if (!cls_of) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int a = 0; a < nreg; a++) {
        if (wins[a]) {
            cls_of[a] = m->n_classes;
            m->classes[m->n_classes++] = a;
        }
        if (has[a])
            m->cands[m->n_cands++] = a;
        if (seconds[a] && (m->runner_up < 0 || seconds[a] > seconds[m->runner_up]))
            m->runner_up = a;
    }
    for (int i = 0; i < n; i++)
        s[i].label = cls_of[s[i].best];
    free(cls_of);
    m->common = m->classes[0];
    for (int a = 0; a < nreg; a++)
        if (wins[a] > wins[m->common])
            m->common = a;
    m->net = 1;
    for (int i = 0; i < n; i++)
        m->net &= d->topos[s[i].topo].has_net;
    m->min_bytes = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        if (s[i].bytes < m->min_bytes)
            m->min_bytes = s[i].bytes;
        if (s[i].bytes > m->max_bytes)
            m->max_bytes = s[i].bytes;
    }
    for (int i = 0; i < d->n_rows; i++)
        if (d->rows[i].coll == coll) {
            m->chunks = d->rows[i].chunks;
            m->source = d->rows[i].source;
            break;
        }
    int *used = calloc((size_t)(d->n_topos ? d->n_topos : 1), sizeof *used);
    if (!used) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++)
        used[s[i].topo] = 1;
    for (int t = 0; t < d->n_topos; t++)
        m->n_topos += used[t];
    if (!(m->topos = calloc((size_t)m->n_topos, sizeof *m->topos))) {
        free(used);
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int t = 0, k = 0; t < d->n_topos; t++)
        if (used[t]) {
            m->topos[k] = d->topos[t];
            if (!(m->topos[k++].name = tc_strdup(d->topos[t].name))) {
                free(used);
                st = TC_ERR_NOMEM;
                goto done;
            }
        }
    free(used);

    /* stratified split and folds: per class, its samples shuffled; the first 20% held out, the rest dealt
     * to the folds in turn, the deal continuing from one class to the next */
    tc_rng rng;
    tc_rng_seed(&rng, ctx->seed);
    int n_train = 0, n_test = 0, deal = 0;
    for (int c = 0; c < m->n_classes; c++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (s[i].label == c)
                idx[k++] = i;
        for (int i = k - 1; i > 0; i--) {
            int j = (int)tc_rng_below(&rng, (uint64_t)i + 1), t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        int nt = (k * TC_TUNE_TEST_PERCENT + 50) / 100;
        if (nt > k - 1)
            nt = k - 1;
        for (int i = 0; i < k; i++) {
            if (i < nt) {
                is_test[idx[i]] = 1;
                continue;
            }
            fold[idx[i]] = deal++ % TC_TUNE_FOLDS;
        }
    }
    for (int i = 0; i < n; i++) {
        if (is_test[i])
            hold[n_test++] = i;
        else
            train[n_train++] = i;
    }
    m->n_train = n_train;
    /* the grid's cross-validation on at most TC_TUNE_GRID_SAMPLES of them: a seeded subsample, the rest
     * (grid[i] 0) left out of the folds */
    int *grid = calloc((size_t)n, sizeof *grid);
    if (!grid) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n_train; i++)
        idx[i] = train[i];
    for (int i = n_train - 1; i > 0; i--) {
        int j = (int)tc_rng_below(&rng, (uint64_t)i + 1), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    m->grid_samples = n_train < TC_TUNE_GRID_SAMPLES ? n_train : TC_TUNE_GRID_SAMPLES;
    for (int i = 0; i < m->grid_samples; i++)
        grid[idx[i]] = 1;
    /* scaling over the training samples */
    for (int k = 0; k < TC_TUNE_FEATURES; k++) {
        m->scale_min[k] = INFINITY;
        m->scale_max[k] = -INFINITY;
        for (int i = 0; i < n_train; i++) {
            double v = s[train[i]].x[k];
            if (v < m->scale_min[k])
                m->scale_min[k] = v;
            if (v > m->scale_max[k])
                m->scale_max[k] = v;
        }
    }
    struct svm_node *nodes = m->nodes;
    for (int i = 0; i < n; i++)
        scale(m, s[i].x, nodes + (size_t)i * (TC_TUNE_FEATURES + 1));

    /* the grid, scored by cross-validation */
    const char *why = NULL;
    m->C = 1;
    m->gamma = 1.0 / TC_TUNE_FEATURES; /* libsvm's default gamma: 1 / features */
    m->cv_accuracy = 1;
    m->cv_slowdown = 0;
    if (m->n_classes > 1) {
        int best_correct = -1;
        double best_sum = 0;
        int *tr = malloc((size_t)n_train * sizeof *tr), *te = malloc((size_t)n_train * sizeof *te);
        if (!tr || !te) {
            free(tr);
            free(te);
            st = TC_ERR_NOMEM;
            goto done;
        }
        for (int lc = -5; lc <= 15 && !st; lc += 2)
            for (int lg = 3; lg >= -15 && !st; lg -= 2) {
                int correct = 0;
                double sum = 0;
                for (int f = 0; f < TC_TUNE_FOLDS && !st; f++) {
                    int ntr = 0, nte = 0;
                    for (int i = 0; i < n_train; i++) {
                        if (!grid[train[i]])
                            continue;
                        if (fold[train[i]] == f)
                            te[nte++] = train[i];
                        else
                            tr[ntr++] = train[i];
                    }
                    if (nte == 0)
                        continue;
                    struct svm_model *fm = train_on(s, tr, ntr, nodes, exp2(lc), exp2(lg), y, xp, &why);
                    if (!fm) {
                        st = why ? tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "libsvm: %s", why) : TC_ERR_NOMEM;
                        break;
                    }
                    for (int i = 0; i < nte; i++) {
                        const sample *x = &s[te[i]];
                        int pred = (int)svm_predict(fm, nodes + (size_t)te[i] * (TC_TUNE_FEATURES + 1));
                        if (pred == x->label)
                            correct++;
                        else {
                            double tp = x->t[m->classes[pred]];
                            sum += isnan(tp) ? 1e9 : tp / x->t[x->best] - 1;
                        }
                    }
                    svm_free_and_destroy_model(&fm);
                }
                if (!st && (correct > best_correct || (correct == best_correct && sum < best_sum))) {
                    best_correct = correct;
                    best_sum = sum;
                    m->C = exp2(lc);
                    m->gamma = exp2(lg);
                }
            }
        free(tr);
        free(te);
        if (st) {
            free(grid);
            goto done;
        }
        m->cv_accuracy = (double)best_correct / m->grid_samples;
        m->cv_slowdown = best_sum / m->grid_samples;
    }
    free(grid);
    struct svm_model *fm = train_on(s, train, n_train, nodes, m->C, m->gamma, y, xp, &why);
    if (!fm) {
        st = why ? tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "libsvm: %s", why) : TC_ERR_NOMEM;
        goto done;
    }
    m->svm = fm;
    /* the held-out samples */
    double sw = 0, sa = 0;
    for (int i = 0; i < n_test; i++) {
        const sample *x = &s[hold[i]];
        int pred = (int)svm_predict(fm, nodes + (size_t)hold[i] * (TC_TUNE_FEATURES + 1));
        score_add(&m->test, m, x, pred, &sw, &sa);
        idx[i] = m->classes[pred >= 0 && pred < m->n_classes ? pred : 0];
    }
    score_end(&m->test, sw, sa);
    report_fill(&m->held, s, hold, n_test, idx, m->common);
    *out = m;
    m = NULL;
done:
    tc_tune_model_free(m);
    free(s);
    free(times);
    free(idx);
    free(fold);
    free(is_test);
    free(count);
    free(train);
    free(hold);
    free(y);
    free(xp);
    return st;
}

int tc_tune_model_outside(const tc_tune_model *m, const tc_tune_topo_id *id, uint64_t bytes, int size_only,
                          char *buf, size_t n)
{
    double x[TC_TUNE_FEATURES];
    tc_tune_features_get(id, bytes, x);
    int count = 0;
    if (n)
        buf[0] = 0;
    for (int k = 0; k < TC_TUNE_FEATURES; k++) {
        if (size_only != (k == 0 || k == 4))
            continue;
        const double lo = m->scale_min[k], hi = m->scale_max[k], eps = 1e-9 * (fabs(lo) + fabs(hi) + 1);
        if (x[k] >= lo - eps && x[k] <= hi + eps)
            continue;
        size_t l = n ? strlen(buf) : 0;
        if (l + 1 < n)
            snprintf(buf + l, n - l, "%s%s %.3g (trained %.3g..%.3g)", count ? ", " : "", tc_tune_feature_names[k],
                     x[k], lo, hi);
        count++;
    }
    return count;
}

tc_status tc_tune_evaluate(tc_ctx *ctx, const tc_tune_model *m, const tc_tune_data *d, tc_tune_report *out)
{
    const int nreg = tc_tune_registry_size();
    sample *s = NULL;
    double *times = NULL;
    int n = 0, *idx = NULL, *pick = NULL;
    tc_status st = make_samples(d, m->coll, nreg, &s, &n, &times);
    if (st)
        return st;
    if (n == 0) {
        st = tc_error(ctx, TC_ERR_INVALID, d->file, 0, "no %s samples to evaluate the model on",
                      tc_coll_name(m->coll));
        goto done;
    }
    if (!(idx = malloc((size_t)n * sizeof *idx)) || !(pick = malloc((size_t)n * sizeof *pick))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int second;
        idx[i] = i;
        tc_tune_model_predict(m, &d->topos[s[i].topo], s[i].bytes, &pick[i], &second);
    }
    report_fill(out, s, idx, n, pick, m->common);
done:
    free(s);
    free(times);
    free(idx);
    free(pick);
    return st;
}
