/* The structure of a libsvm model file, checked before libsvm reads it.
 *
 * libsvm's svm_load_model (libsvm svm.cpp, read_model_header and the SV loop) trusts the counts in the
 * header: `total_sv` sizes its arrays, `nr_sv` splits them between classes, and a line short of
 * coefficients or a missing SV section is read past the end of its buffers (heap overflow under ASan,
 * SIGSEGV or a silently wrong prediction in a release build).  The model's FNV checksum is unkeyed, so a
 * forged file can carry a matching checksum: the text itself must be checked.
 *
 * Accepted: the header lines libsvm writes for an RBF C-SVC (svm_type c_svc, kernel_type rbf, gamma,
 * nr_class, total_sv, rho, label, probA, probB, nr_sv), then `SV`, then exactly total_sv lines of
 * nr_class-1 coefficients and index:value pairs with indices strictly ascending from 1 to the model's
 * feature count.  Every number finite and decimal; labels distinct and below the class count; nr_sv sums to
 * total_sv.  Anything else is an error with its line. */
#include "tune_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tc_ctx *ctx;
    const char *path;
    int line;
} svr;

static tc_status bad(const svr *r, const char *fmt, const char *what)
{
    return tc_error(r->ctx, TC_ERR_INVALID, r->path, r->line, fmt, what);
}

/* the next blank-separated token of *p within the line, or NULL at its end */
static const char *token(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return NULL;
    char *e = s + strcspn(s, " \t");
    if (*e)
        *e++ = 0;
    *p = e;
    return s;
}

/* A number as libsvm writes one (%.17g) and its fscanf("%lf") reads whole: digits, optionally a point
 * with digits after it, optionally an exponent.  "0." or ".5" would leave text for the next read (fuzz:
 * "rho 0.1 -0.2 0." made libsvm fail on "[.]"). */
static int finite_num(const char *t, double *v)
{
    char *end;
    if (!t)
        return 0;
    const char *p = t + (*t == '+' || *t == '-');
    size_t ip = strspn(p, "0123456789");
    if (!ip || (p[ip] == '.' && !strspn(p + ip + 1, "0123456789")))
        return 0;
    return !tc_parse_decimal(t, &end, v) && !*end && isfinite(*v);
}

static int int_num(const char *t, long lo, long hi, long *v)
{
    double d;
    if (!finite_num(t, &d) || d != floor(d) || d < lo || d > hi)
        return 0;
    *v = (long)d;
    return 1;
}

/* n finite numbers on the rest of the line, nothing after them */
static tc_status numbers(const svr *r, char *rest, int n, const char *key, double *out)
{
    for (int i = 0; i < n; i++) {
        double v;
        if (!finite_num(token(&rest), &v))
            return bad(r, "libsvm model: \"%s\" needs one finite decimal number per class pair or class", key);
        if (out)
            out[i] = v;
    }
    if (token(&rest))
        return bad(r, "libsvm model: too many numbers after \"%s\"", key);
    return TC_OK;
}

tc_status tc_tune_svm_check(tc_ctx *ctx, const char *path, const char *text, size_t len, int n_classes,
                            int n_features)
{
    svr r = {ctx, path, 0};
    if (memchr(text, 0, len))
        return tc_error(ctx, TC_ERR_INVALID, path, 0, "libsvm model: NUL byte in a text file");
    char *buf = malloc(len + 1);
    long *labels = NULL;
    if (!buf)
        return TC_ERR_NOMEM;
    memcpy(buf, text, len);
    buf[len] = 0;
    tc_status st = TC_OK;
    long k = -1, total = -1, sum = 0, sv_lines = 0;
    unsigned seen = 0; /* header keys given, one bit each: libsvm reads a second one over the first */
    int have_type = 0, have_kernel = 0, have_gamma = 0, have_rho = 0, have_label = 0, have_nrsv = 0, in_sv = 0;
    char *p = buf;
    while (*p && !st) {
        char *line = p, *nl = strchr(p, '\n');
        p = nl ? (*nl = 0, nl + 1) : p + strlen(p);
        r.line++;
        size_t ll = strlen(line);
        if (ll && line[ll - 1] == '\r')
            line[--ll] = 0;
        char *rest = line;
        if (in_sv) {
            if (!ll) {
                st = bad(&r, "libsvm model: %s", "empty line among the support vectors");
                break;
            }
            if (++sv_lines > total) {
                st = bad(&r, "libsvm model: more support vectors than \"%s\" says", "total_sv");
                break;
            }
            for (long c = 0; c < k - 1; c++) {
                double v;
                if (!finite_num(token(&rest), &v)) {
                    st = bad(&r, "libsvm model: a support vector needs %s finite coefficients first", "nr_class-1");
                    break;
                }
            }
            long last = 0;
            for (const char *t; !st && (t = token(&rest));) {
                const char *colon = strchr(t, ':');
                long idx;
                double v;
                char ib[32];
                size_t il = colon ? (size_t)(colon - t) : 0;
                if (!colon || il == 0 || il >= sizeof ib) {
                    st = bad(&r, "libsvm model: '%s' is not INDEX:VALUE", t);
                    break;
                }
                memcpy(ib, t, il);
                ib[il] = 0;
                if (!int_num(ib, 1, n_features, &idx) || idx <= last || !finite_num(colon + 1, &v)) {
                    st = bad(&r, "libsvm model: feature '%s' is not an ascending index from 1 to the model's "
                                 "feature count with a finite value", t);
                    break;
                }
                last = idx;
            }
            continue;
        }
        const char *key = token(&rest);
        if (!key) {
            st = bad(&r, "libsvm model: %s", "empty line in the header");
            break;
        }
        if (!strcmp(key, "SV")) {
            if (token(&rest)) {
                st = bad(&r, "libsvm model: %s", "text after \"SV\"");
                break;
            }
            in_sv = 1;
            if (!have_type || !have_kernel || !have_gamma || k < 0 || total < 0 || !have_rho || !have_label ||
                !have_nrsv) {
                st = bad(&r, "libsvm model: the header lacks one of %s",
                         "svm_type, kernel_type, gamma, nr_class, total_sv, rho, label, nr_sv");
                break;
            }
            if (sum != total)
                st = bad(&r, "libsvm model: \"nr_sv\" does not add up to \"%s\"", "total_sv");
            continue;
        }
        static const char *const keys[] = {"svm_type", "kernel_type", "gamma", "nr_class", "total_sv",
                                           "rho",      "label",       "probA", "probB",    "nr_sv"};
        for (int q = 0; q < 10; q++)
            if (!strcmp(key, keys[q])) {
                if (seen & (1u << q))
                    st = bad(&r, "libsvm model: \"%s\" given twice", key);
                seen |= 1u << q;
            }
        if (st)
            break;
        const char *v = NULL;
        if (!strcmp(key, "svm_type")) {
            if (!(v = token(&rest)) || strcmp(v, "c_svc") || token(&rest))
                st = bad(&r, "libsvm model: svm_type must be %s", "c_svc");
            have_type = 1;
        } else if (!strcmp(key, "kernel_type")) {
            if (!(v = token(&rest)) || strcmp(v, "rbf") || token(&rest))
                st = bad(&r, "libsvm model: kernel_type must be %s", "rbf");
            have_kernel = 1;
        } else if (!strcmp(key, "gamma")) {
            double g;
            if (!finite_num(token(&rest), &g) || !(g > 0) || token(&rest))
                st = bad(&r, "libsvm model: %s must be one finite positive number", "gamma");
            have_gamma = 1;
        } else if (!strcmp(key, "nr_class")) {
            if (k >= 0 || !int_num(token(&rest), 1, n_classes, &k) || token(&rest))
                st = bad(&r, "libsvm model: \"%s\" must be given once, from 1 to the classes the model names", key);
        } else if (!strcmp(key, "total_sv")) {
            /* bounded by the file itself: every support vector takes at least one line of two bytes */
            if (total >= 0 || !int_num(token(&rest), 1, (long)(len / 2) + 1, &total) || token(&rest))
                st = bad(&r, "libsvm model: \"%s\" must be given once, a count the file can hold", key);
        } else if (k < 0 && (!strcmp(key, "rho") || !strcmp(key, "label") || !strcmp(key, "nr_sv") ||
                             !strcmp(key, "probA") || !strcmp(key, "probB"))) {
            st = bad(&r, "libsvm model: \"%s\" before \"nr_class\"", key);
        } else if (!strcmp(key, "rho") || !strcmp(key, "probA") || !strcmp(key, "probB")) {
            st = numbers(&r, rest, (int)(k * (k - 1) / 2), key, NULL);
            have_rho |= !strcmp(key, "rho");
        } else if (!strcmp(key, "label")) {
            free(labels);
            if (!(labels = malloc((size_t)k * sizeof *labels))) {
                st = TC_ERR_NOMEM;
                break;
            }
            for (long i = 0; i < k && !st; i++) {
                if (!int_num(token(&rest), 0, n_classes - 1, &labels[i]))
                    st = bad(&r, "libsvm model: \"%s\" needs one class index per class, each below the class count",
                             key);
                for (long j = 0; j < i && !st; j++)
                    if (labels[j] == labels[i])
                        st = bad(&r, "libsvm model: \"%s\" names a class twice", key);
            }
            if (!st && token(&rest))
                st = bad(&r, "libsvm model: too many numbers after \"%s\"", key);
            have_label = 1;
        } else if (!strcmp(key, "nr_sv")) {
            sum = 0;
            for (long i = 0; i < k && !st; i++) {
                long n;
                if (!int_num(token(&rest), 0, (long)(len / 2) + 1, &n))
                    st = bad(&r, "libsvm model: \"%s\" needs one count per class", key);
                else
                    sum += n;
            }
            if (!st && token(&rest))
                st = bad(&r, "libsvm model: too many numbers after \"%s\"", key);
            have_nrsv = 1;
        } else {
            st = bad(&r, "libsvm model: unknown header line \"%s\"", key);
        }
    }
    if (!st && !in_sv)
        st = tc_error(ctx, TC_ERR_INVALID, path, r.line, "libsvm model: no \"SV\" section");
    else if (!st && sv_lines != total)
        st = tc_error(ctx, TC_ERR_INVALID, path, r.line,
                      "libsvm model: %ld support vectors, but \"total_sv\" says %ld", sv_lines, total);
    free(labels);
    free(buf);
    return st;
}
