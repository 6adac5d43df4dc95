/* Model directories: COLL.json (what the model was trained on and how well it did) beside COLL.svm
 * (libsvm's own model file), written, read back and checked against the topology they are used on
 * (man 5 tacosc-tune, MODEL DIRECTORY). */
#include "tune_int.h"

#include "tacos/emit.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tc_tune_model_path(const char *dir, tc_coll coll, const char *ext, char *buf, size_t n)
{
    size_t l = strlen(dir);
    snprintf(buf, n, "%s%s%s.%s", dir, l && dir[l - 1] == '/' ? "" : "/", tc_coll_name(coll), ext);
    return buf;
}

tc_status tc_tune_model_write_svm(tc_ctx *ctx, tc_tune_model *m, const char *path)
{
    if (svm_save_model(path, m->svm))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': libsvm's svm_save_model failed", path);
    char *buf = NULL;
    size_t len = 0;
    tc_status st = tc_read_file_max(ctx, path, TC_TEXT_MAX_MODEL, "model file", &buf, &len);
    if (!st)
        m->svm_checksum = tc_tune_fnv(TC_FNV_OFFSET, buf, len);
    free(buf);
    return st;
}

/* s as a JSON string. */
static void jstr(FILE *f, const char *s)
{
    cJSON *j = cJSON_CreateString(s ? s : "");
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    fputs(t ? t : "\"\"", f);
    cJSON_free(t);
    cJSON_Delete(j);
}

static void jnames(FILE *f, const int *algos, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        jstr(f, tc_algo_registry[algos[i]].name);
    }
    fputc(']', f);
}

static void jdoubles(FILE *f, const double *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.17g", i ? ", " : "", v[i]);
    fputc(']', f);
}

tc_status tc_tune_model_write_meta(tc_ctx *ctx, const tc_tune_model *m, FILE *f)
{
    char svm_name[64];
    snprintf(svm_name, sizeof svm_name, "%s.svm", tc_coll_name(m->coll));
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"tool\": \"tacosc %s\",\n", TC_TUNE_MODEL_FORMAT,
            TC_TUNE_MODEL_VERSION, TC_VERSION);
    fprintf(f, "  \"collective\": \"%s\",\n  \"seed\": ", tc_coll_name(m->coll));
    tc_json_put_u64(f, m->seed); /* exact: a string from 2^53 on */
    fputs(",\n", f);
    fputs("  \"data\": {\"file\": ", f);
    jstr(f, m->data_file);
    fprintf(f, ", \"checksum\": \"%016llx\", \"source\": \"%s\", \"chunks\": %d, \"samples\": %d, "
               "\"min_bytes\": ",
            (unsigned long long)m->data_checksum, tc_tune_source_name((tc_tune_source)m->source), m->chunks,
            m->n_samples);
    tc_json_put_u64(f, m->min_bytes);
    fputs(", \"max_bytes\": ", f);
    tc_json_put_u64(f, m->max_bytes);
    fputs("},\n", f);
    fputs("  \"topologies\": [", f);
    for (int i = 0; i < m->n_topos; i++) {
        const tc_tune_topo_id *t = &m->topos[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        jstr(f, t->name);
        fprintf(f, ", \"fingerprint\": \"%016llx\", \"ranks\": %d, \"nodes\": %d, \"ranks_per_node\": %d}",
                (unsigned long long)t->fingerprint, t->ranks, t->nodes, t->rpn);
    }
    fputs("\n  ],\n  \"features\": [", f);
    for (int k = 0; k < TC_TUNE_FEATURES; k++)
        fprintf(f, "%s\"%s\"", k ? ", " : "", tc_tune_feature_names[k]);
    fputs("],\n  \"scale_min\": ", f);
    jdoubles(f, m->scale_min, TC_TUNE_FEATURES);
    fputs(",\n  \"scale_max\": ", f);
    jdoubles(f, m->scale_max, TC_TUNE_FEATURES);
    fputs(",\n  \"classes\": ", f);
    jnames(f, m->classes, m->n_classes);
    fputs(",\n  \"candidates\": ", f);
    jnames(f, m->cands, m->n_cands);
    fputs(",\n  \"runner_up\": ", f);
    if (m->runner_up >= 0)
        jstr(f, tc_algo_registry[m->runner_up].name);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"svm\": {\"file\": \"%s\", \"checksum\": \"%016llx\", \"kernel\": \"rbf\", \"C\": %.17g, "
               "\"gamma\": %.17g, \"cv_folds\": %d, \"cv_accuracy\": %.17g, \"cv_slowdown\": %.17g},\n",
            svm_name, (unsigned long long)m->svm_checksum, m->C, m->gamma, TC_TUNE_FOLDS, m->cv_accuracy,
            m->cv_slowdown);
    fprintf(f, "  \"network_features\": %s,\n  \"commonest_winner\": \"%s\",\n  \"grid_samples\": %d,\n",
            m->net ? "true" : "false", tc_algo_registry[m->common >= 0 ? m->common : m->classes[0]].name,
            m->grid_samples);
    const tc_tune_score *b[2] = {&m->held.common, &m->held.tacos};
    const char *bn[2] = {"always_commonest", "always_tacos"};
    fputs("  \"baselines\": {", f);
    for (int i = 0; i < 2; i++)
        fprintf(f, "%s\"%s\": {\"samples\": %d, \"accuracy\": %.17g, \"mean_slowdown_all\": %.17g, "
                   "\"worst_slowdown\": %.17g}",
                i ? ", " : "", bn[i], b[i]->n, b[i]->accuracy, b[i]->mean_slowdown_all, b[i]->worst_slowdown);
    fputs("},\n", f);
    const tc_tune_score *t = &m->test;
    fprintf(f, "  \"test\": {\"train_samples\": %d, \"samples\": %d, \"correct\": %d, \"accuracy\": %.17g, "
               "\"mean_slowdown\": %.17g, \"worst_slowdown\": %.17g, \"mean_slowdown_all\": %.17g, "
               "\"no_time\": %d}\n}\n",
            m->n_train, t->n, t->correct, t->accuracy, t->mean_slowdown, t->worst_slowdown, t->mean_slowdown_all,
            t->no_time);
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write the model: %s", strerror(errno ? errno : EIO));
    return TC_OK;
}

/* ---- reading ---- */

typedef struct mreader {
    tc_ctx *ctx;
    const char *path;
    const char *text; /* the file, for the lines of its keys */
    size_t len;
} mreader;

/* The file is damaged at top-level key `key` (NULL: the whole file), or a value under it. */
static tc_status broken(mreader *r, const char *key, const char *what)
{
    const int line = key && r->text ? tc_json_key_line(r->text, r->len, key) : 0;
    return tc_error(r->ctx, TC_ERR_PARSE, r->path, line, "not a %s file version %d: %s", TC_TUNE_MODEL_FORMAT,
                    TC_TUNE_MODEL_VERSION, what);
}

static const cJSON *field(const cJSON *o, const char *k, int type)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        return NULL;
    if ((type == cJSON_Number && !cJSON_IsNumber(v)) || (type == cJSON_String && !cJSON_IsString(v)) ||
        (type == cJSON_Array && !cJSON_IsArray(v)) || (type == cJSON_Object && !cJSON_IsObject(v)))
        return NULL;
    return v;
}

/* An integer field within [lo, hi]. */
static int int_field(const cJSON *o, const char *k, double lo, double hi, double *out)
{
    const cJSON *v = field(o, k, cJSON_Number);
    if (!v || !(v->valuedouble >= lo && v->valuedouble <= hi) || v->valuedouble != floor(v->valuedouble))
        return 0;
    *out = v->valuedouble;
    return 1;
}

static int hex_field(const cJSON *o, const char *k, uint64_t *out)
{
    const cJSON *v = field(o, k, cJSON_String);
    if (!v || strlen(v->valuestring) != 16 || strspn(v->valuestring, "0123456789abcdef") != 16)
        return 0;
    *out = strtoull(v->valuestring, NULL, 16);
    return 1;
}

/* An array of registry names into algos (registry indices); *n set. */
static int names_field(const cJSON *o, const char *k, int *algos, int *n, int cap)
{
    const cJSON *v = field(o, k, cJSON_Array), *e;
    if (!v)
        return 0;
    *n = 0;
    cJSON_ArrayForEach(e, v)
    {
        int a = cJSON_IsString(e) ? tc_tune_algo_index(e->valuestring) : -1;
        if (a < 0 || *n >= cap)
            return 0;
        algos[(*n)++] = a;
    }
    return 1;
}

static int doubles_field(const cJSON *o, const char *k, double *v, int n)
{
    const cJSON *a = field(o, k, cJSON_Array), *e;
    if (!a || cJSON_GetArraySize(a) != n)
        return 0;
    int i = 0;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return 0;
        v[i++] = e->valuedouble;
    }
    return 1;
}

static tc_status parse_meta(mreader *r, const cJSON *j, tc_tune_model *m, uint64_t *svm_sum)
{
    const int nreg = tc_tune_registry_size();
    const cJSON *v;
    double x;
    if (!cJSON_IsObject(j) || !(v = field(j, "format", cJSON_String)) || strcmp(v->valuestring, TC_TUNE_MODEL_FORMAT))
        return broken(r, "format", "no \"format\": \"" TC_TUNE_MODEL_FORMAT "\"");
    if (!int_field(j, "version", 0, 1e9, &x))
        return broken(r, "version", "an unknown \"version\"");
    if (x == 1)
        return broken(r, "version", "version 1 (4 features, before the network features): train it again with tacosc tune");
    if (x != TC_TUNE_MODEL_VERSION)
        return broken(r, "version", "an unknown \"version\"");
    tc_coll coll;
    if (!(v = field(j, "collective", cJSON_String)) || tc_coll_parse(v->valuestring, &coll) || coll != m->coll)
        return broken(r, "collective", "\"collective\" is not the collective its file name says");
    char why[160];
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(j, "seed");
    if (sd && tc_json_get_u64(sd, &m->seed, why, sizeof why))
        return broken(r, "seed", "\"seed\" is not an unsigned 64-bit integer (a number below 2^53, or a string)");
    const cJSON *data = field(j, "data", cJSON_Object);
    if (!data)
        return broken(r, "data", "no \"data\" object");
    if ((v = field(data, "file", cJSON_String)) && !(m->data_file = tc_strdup(v->valuestring)))
        return TC_ERR_NOMEM;
    hex_field(data, "checksum", &m->data_checksum);
    if (!(v = field(data, "source", cJSON_String)) ||
        (strcmp(v->valuestring, "sim") && strcmp(v->valuestring, "measure")))
        return broken(r, "data", "\"data\".\"source\" is not sim or measure");
    m->source = strcmp(v->valuestring, "sim") ? TC_TUNE_MEASURE : TC_TUNE_SIM;
    if (!int_field(data, "chunks", 1, 1 << 24, &x))
        return broken(r, "data", "\"data\".\"chunks\" is not a positive integer");
    m->chunks = (int)x;
    if (int_field(data, "samples", 0, 1e9, &x))
        m->n_samples = (int)x;
    if (tc_json_get_u64(cJSON_GetObjectItemCaseSensitive(data, "min_bytes"), &m->min_bytes, why, sizeof why) ||
        !m->min_bytes)
        return broken(r, "data", "\"data\".\"min_bytes\" is not a positive integer (a number below 2^53, or a string)");
    if (tc_json_get_u64(cJSON_GetObjectItemCaseSensitive(data, "max_bytes"), &m->max_bytes, why, sizeof why) ||
        !m->max_bytes)
        return broken(r, "data", "\"data\".\"max_bytes\" is not a positive integer (a number below 2^53, or a string)");
    if (m->min_bytes > m->max_bytes)
        return broken(r, "data", "\"data\".\"min_bytes\" is above \"max_bytes\"");
    const cJSON *topos = field(j, "topologies", cJSON_Array), *e;
    if (!topos || cJSON_GetArraySize(topos) < 1)
        return broken(r, "topologies", "no \"topologies\"");
    if (!(m->topos = calloc((size_t)cJSON_GetArraySize(topos), sizeof *m->topos)))
        return TC_ERR_NOMEM;
    cJSON_ArrayForEach(e, topos)
    {
        tc_tune_topo_id *t = &m->topos[m->n_topos];
        double rk, nd, rp;
        if (!cJSON_IsObject(e) || !(v = field(e, "name", cJSON_String)) || !hex_field(e, "fingerprint", &t->fingerprint) ||
            !int_field(e, "ranks", 1, 1 << 24, &rk) || !int_field(e, "nodes", 1, 1 << 24, &nd) ||
            !int_field(e, "ranks_per_node", 1, 1 << 24, &rp))
            return broken(r, "topologies", "a topology without name, fingerprint, ranks, nodes and ranks_per_node");
        if (!(t->name = tc_strdup(v->valuestring)))
            return TC_ERR_NOMEM;
        t->ranks = (int)rk;
        t->nodes = (int)nd;
        t->rpn = (int)rp;
        m->n_topos++;
    }
    if (!doubles_field(j, "scale_min", m->scale_min, TC_TUNE_FEATURES) ||
        !doubles_field(j, "scale_max", m->scale_max, TC_TUNE_FEATURES))
        return broken(r, "scale_min", "\"scale_min\" or \"scale_max\" is not " TC_TUNE_FEATURES_STR " numbers");
    for (int k = 0; k < TC_TUNE_FEATURES; k++)
        if (m->scale_min[k] > m->scale_max[k])
            return broken(r, "scale_min", "a \"scale_min\" above its \"scale_max\" (the features' range in training)");
    if (!(m->classes = malloc((size_t)nreg * sizeof *m->classes)) || !(m->cands = malloc((size_t)nreg * sizeof *m->cands)))
        return TC_ERR_NOMEM;
    if (!names_field(j, "classes", m->classes, &m->n_classes, nreg) || m->n_classes < 1)
        return broken(r, "classes", "\"classes\" is not a list of algorithms");
    if (!names_field(j, "candidates", m->cands, &m->n_cands, nreg))
        return broken(r, "candidates", "\"candidates\" is not a list of algorithms");
    for (int i = 0; i < m->n_classes; i++)
        if (!(tc_algo_registry[m->classes[i]].colls & TC_COLL_BIT(coll)))
            return broken(r, "classes", "a class that does not generate the collective");
    m->runner_up = -1;
    if ((v = field(j, "runner_up", cJSON_String)) && (m->runner_up = tc_tune_algo_index(v->valuestring)) < 0)
        return broken(r, "runner_up", "\"runner_up\" is not an algorithm");
    const cJSON *nf = cJSON_GetObjectItemCaseSensitive(j, "network_features");
    if (!cJSON_IsBool(nf))
        return broken(r, "network_features", "\"network_features\" is not true or false");
    m->net = cJSON_IsTrue(nf);
    m->common = m->classes[0];
    if ((v = field(j, "commonest_winner", cJSON_String)) && (m->common = tc_tune_algo_index(v->valuestring)) < 0)
        return broken(r, "commonest_winner", "\"commonest_winner\" is not an algorithm");
    if ((v = field(j, "grid_samples", cJSON_Number)) && v->valuedouble >= 0 && v->valuedouble <= 1e9)
        m->grid_samples = (int)v->valuedouble;
    const cJSON *bl = field(j, "baselines", cJSON_Object);
    m->held.common_algo = m->common;
    if (bl) {
        const char *bn[2] = {"always_commonest", "always_tacos"};
        tc_tune_score *b[2] = {&m->held.common, &m->held.tacos};
        for (int i = 0; i < 2; i++) {
            const cJSON *o = field(bl, bn[i], cJSON_Object), *x;
            if (!o)
                continue;
            if ((x = field(o, "samples", cJSON_Number)) && x->valuedouble >= 0 && x->valuedouble <= 1e9)
                b[i]->n = (int)x->valuedouble;
            if ((x = field(o, "accuracy", cJSON_Number)))
                b[i]->accuracy = x->valuedouble;
            if ((x = field(o, "mean_slowdown_all", cJSON_Number)))
                b[i]->mean_slowdown_all = x->valuedouble;
            if ((x = field(o, "worst_slowdown", cJSON_Number)))
                b[i]->worst_slowdown = x->valuedouble;
        }
    }
    const cJSON *svm = field(j, "svm", cJSON_Object);
    if (!svm || !hex_field(svm, "checksum", svm_sum))
        return broken(r, "svm", "no \"svm\".\"checksum\"");
    if ((v = field(svm, "C", cJSON_Number)))
        m->C = v->valuedouble;
    if ((v = field(svm, "gamma", cJSON_Number)))
        m->gamma = v->valuedouble;
    if ((v = field(svm, "cv_accuracy", cJSON_Number)))
        m->cv_accuracy = v->valuedouble;
    if ((v = field(svm, "cv_slowdown", cJSON_Number)))
        m->cv_slowdown = v->valuedouble;
    const cJSON *test = field(j, "test", cJSON_Object);
    if (test) {
        const struct { const char *k; int *i; double *d; } f[] = {
            {"train_samples", &m->n_train, NULL}, {"samples", &m->test.n, NULL}, {"correct", &m->test.correct, NULL},
            {"no_time", &m->test.no_time, NULL}, {"accuracy", NULL, &m->test.accuracy},
            {"mean_slowdown", NULL, &m->test.mean_slowdown}, {"worst_slowdown", NULL, &m->test.worst_slowdown},
            {"mean_slowdown_all", NULL, &m->test.mean_slowdown_all},
        };
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
            if ((v = field(test, f[k].k, cJSON_Number))) {
                if (f[k].i && v->valuedouble >= 0 && v->valuedouble <= 1e9)
                    *f[k].i = (int)v->valuedouble;
                else if (f[k].d)
                    *f[k].d = v->valuedouble;
            }
    }
    return TC_OK;
}

tc_status tc_tune_model_load(tc_ctx *ctx, const char *dir, tc_coll coll, tc_tune_model **out)
{
    char meta[4096], svmp[4096];
    tc_tune_model_path(dir, coll, "json", meta, sizeof meta);
    tc_tune_model_path(dir, coll, "svm", svmp, sizeof svmp);
    struct stat sb;
    if (stat(dir, &sb))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot open model directory '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot open model directory '%s': not a directory", dir);
    if (access(meta, F_OK)) {
        char have[256] = "";
        for (int c = 0; c < TC_COLL_COUNT; c++) {
            char p[4096];
            if (!access(tc_tune_model_path(dir, (tc_coll)c, "json", p, sizeof p), F_OK))
                snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "",
                         tc_coll_name((tc_coll)c));
        }
        return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0,
                        "model directory '%s' has no %s model (%s%s): train one with tacosc tune -c %s, then "
                        "tacosc tune --train",
                        dir, tc_coll_name(coll), have[0] ? "it has " : "it has none", have, tc_coll_name(coll));
    }
    char *text = NULL, *svm_text = NULL;
    size_t len = 0, svm_len = 0;
    cJSON *j = NULL;
    tc_tune_model *m = calloc(1, sizeof *m);
    uint64_t want = 0;
    tc_status st = m ? tc_read_file_max(ctx, meta, TC_TEXT_MAX_MODEL, "model file", &text, &len) : TC_ERR_NOMEM;
    mreader r = {ctx, meta, NULL, 0};
    if (st)
        goto fail;
    m->coll = coll;
    r.text = text;
    r.len = len;
    if (!(j = cJSON_ParseWithLength(text, len))) {
        st = broken(&r, NULL, "malformed JSON");
        goto fail;
    }
    if ((st = parse_meta(&r, j, m, &want)))
        goto fail;
    if ((st = tc_read_file_max(ctx, svmp, TC_TEXT_MAX_MODEL, "libsvm model", &svm_text, &svm_len)))
        goto fail;
    m->svm_checksum = tc_tune_fnv(TC_FNV_OFFSET, svm_text, svm_len);
    if (m->svm_checksum != want) {
        st = tc_error(ctx, TC_ERR_INVALID, svmp, 0,
                      "checksum %016llx, but %s says %016llx: the file was changed or damaged (train again)",
                      (unsigned long long)m->svm_checksum, meta, (unsigned long long)want);
        goto fail;
    }
    if ((st = tc_tune_svm_check(ctx, svmp, svm_text, svm_len, m->n_classes, TC_TUNE_FEATURES)))
        goto fail;
    struct svm_model *svm = svm_load_model(svmp);
    if (!svm) {
        st = tc_error(ctx, TC_ERR_PARSE, svmp, 0, "libsvm cannot read this model (svm_load_model failed)");
        goto fail;
    }
    m->svm = svm;
    int nr = svm_get_nr_class(svm), labels[64];
    int ok = svm_get_svm_type(svm) == C_SVC && svm->param.kernel_type == RBF && nr == m->n_classes && nr <= 64;
    if (ok) {
        svm_get_labels(svm, labels);
        for (int i = 0; i < nr; i++)
            ok &= labels[i] >= 0 && labels[i] < m->n_classes;
    }
    if (!ok) {
        st = tc_error(ctx, TC_ERR_INVALID, svmp, 0, "not an RBF C-SVC of the %d classes %s names", m->n_classes, meta);
        goto fail;
    }
    if (!(m->dir = tc_strdup(dir))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    cJSON_Delete(j);
    free(text);
    free(svm_text);
    *out = m;
    return TC_OK;
fail:
    cJSON_Delete(j);
    free(text);
    free(svm_text);
    tc_tune_model_free(m);
    return st;
}

tc_status tc_tune_model_check(tc_ctx *ctx, const tc_tune_model *m, const tc_topo *topo, int chunks)
{
    char meta[4096];
    const char *where = m->dir ? tc_tune_model_path(m->dir, m->coll, "json", meta, sizeof meta) : NULL;
    tc_tune_topo_id id;
    tc_tune_topo_id_get(topo, &id);
    const char *name = topo->name ? topo->name : "?";
    const tc_tune_topo_id *same_name = NULL;
    int seen = 0;
    for (int i = 0; i < m->n_topos && !seen; i++) {
        if (m->topos[i].fingerprint == id.fingerprint)
            seen = 1;
        else if (!strcmp(m->topos[i].name, name))
            same_name = &m->topos[i];
    }
    if (!seen && !m->net && same_name)
        return tc_error(ctx, TC_ERR_INVALID, where, 0,
                        "the %s model was trained on a topology '%s' with other links or costs (fingerprint %016llx, "
                        "this one %016llx): run tacosc tune on this one",
                        tc_coll_name(m->coll), name, (unsigned long long)same_name->fingerprint,
                        (unsigned long long)id.fingerprint);
    if (!seen && !m->net) {
        char list[512] = "";
        for (int i = 0; i < m->n_topos && i < 4; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s (%d ranks)", i ? ", " : "",
                     m->topos[i].name, m->topos[i].ranks);
        if (m->n_topos > 4)
            snprintf(list + strlen(list), sizeof list - strlen(list), " and %d more", m->n_topos - 4);
        return tc_error(ctx, TC_ERR_INVALID, where, 0,
                        "the %s model was trained on %s, not on '%s' (%d ranks, fingerprint %016llx), and without "
                        "network features: run tacosc tune on it",
                        tc_coll_name(m->coll), list, name, id.ranks, (unsigned long long)id.fingerprint);
    }
    if (chunks != m->chunks)
        return tc_error(ctx, TC_ERR_INVALID, where, 0,
                        "the %s model was trained on plans of %d chunk%s per rank, not %d (--chunks)",
                        tc_coll_name(m->coll), m->chunks, m->chunks == 1 ? "" : "s", chunks);
    if (!seen) { /* a topology it has not seen: by its features, saying how far they are from the trained ones */
        tc_tune_topo_describe(topo, &id);
        char why[1024];
        int out = tc_tune_model_outside(m, &id, m->min_bytes, 0, why, sizeof why);
        if (out)
            tc_warn(ctx, where, 0,
                    "the %s model was not trained on '%s' (%d ranks): choosing by its network features, %d of them "
                    "outside the trained ranges: %s",
                    tc_coll_name(m->coll), name, id.ranks, out, why);
        else
            tc_diag(ctx, TC_DIAG_NOTE, where, 0, 0,
                    "the %s model was not trained on '%s' (%d ranks): choosing by its network features (within the "
                    "trained ranges)",
                    tc_coll_name(m->coll), name, id.ranks);
    }
    return TC_OK;
}
