/* Measured tuning data: the plans of one algorithm replayed by tacos-run under mpirun (man 1 tacos-run).
 *
 * Plans are lowered to MSCCL XML for tacos-run (no runtime parser limits), in place.  Consecutive sizes
 * whose programs are byte-identical share one plan, replayed over their sizes in one launch:
 *     MPIRUN -np R TACOS_RUN PLAN -b LO -e HI -f F -n ITERS -w 1 -c 0 --mode in-place
 * with F the smallest ratio of consecutive sizes in the group, so tacos-run's sweep is at least as dense
 * as ours.  tacos-run prints one row per size it ran (size rounded down to whole chunks of elements, mean
 * time over ITERS of the slowest rank, in-place columns 9-12); a size takes the row at the largest size
 * not above it (the smallest row when none is).  Each plan is launched `repeats` times; the median of
 * the launches is the time. */
#include "tune_int.h"

#include "tacos/check.h"
#include "tacos/msccl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The MSCCL text of algo's plan at `size` (malloc'd into *text). */
static tc_status plan_text(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const tc_gen_opts *go0,
                           uint64_t size, char **text, size_t *len)
{
    tc_gen_opts go = *go0;
    go.size = size;
    const char *name = tc_algo_registry[algo].name;
    tc_sched *s = NULL;
    tc_msccl *m = NULL;
    tc_status st = tc_algo_run(ctx, name, topo, coll, &go, &s);
    if (!st) {
        tc_check_opts co = {.topo = topo};
        st = tc_sched_check(ctx, s, &co, name);
    }
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    lo.target = TC_TARGET_EXEC;
    if (!st)
        st = tc_msccl_lower(ctx, s, &lo, &m);
    if (!st) {
        FILE *f = open_memstream(text, len);
        if (!f)
            st = TC_ERR_NOMEM;
        else {
            st = tc_msccl_write(ctx, m, f);
            if (fclose(f) && !st)
                st = TC_ERR_NOMEM;
            if (st) {
                free(*text);
                *text = NULL;
            }
        }
    }
    tc_msccl_free(m);
    tc_sched_free(s);
    return st;
}

/* s in single quotes for the shell, into buf. */
static const char *quote(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    if (n < 3)
        return "''";
    buf[k++] = '\'';
    for (; *s && k + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else
            buf[k++] = *s;
    }
    buf[k++] = '\'';
    buf[k] = 0;
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One launch over sizes[lo..hi]: times into t[i - lo]. */
static tc_status launch(tc_ctx *ctx, const tc_topo *topo, const char *plan, const uint64_t *sizes, int lo, int hi,
                        const tc_tune_opts *o, double *t)
{
    double f = 2;
    for (int i = lo; i < hi; i++) {
        double r = (double)sizes[i + 1] / (double)sizes[i];
        if (r < f)
            f = r;
    }
    char qr[4200], qp[4200], cmd[9000];
    snprintf(cmd, sizeof cmd, "%s -np %d %s %s -b %llu -e %llu -f %.17g -n %d -w 1 -c 0 --mode in-place 2>&1",
             o->mpirun, topo->n_npus, quote(o->tacos_run, qr, sizeof qr), quote(plan, qp, sizeof qp),
             (unsigned long long)sizes[lo], (unsigned long long)sizes[hi], f, o->iters);
    FILE *p = popen(cmd, "r");
    if (!p)
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot run '%s': %s", cmd, strerror(errno));
    int cap = 64, n = 0;
    double *rb = malloc((size_t)cap * sizeof *rb), *rt = malloc((size_t)cap * sizeof *rt);
    char line[1024], last[1024] = "";
    tc_status st = rb && rt ? TC_OK : TC_ERR_NOMEM;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0])
            snprintf(last, sizeof last, "%s", line);
        if (st || line[0] == '#')
            continue;
        char tok[12][32];
        int k = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s", tok[0], tok[1], tok[2],
                       tok[3], tok[4], tok[5], tok[6], tok[7], tok[8], tok[9], tok[10], tok[11]);
        if (k < 12)
            continue;
        char *e1, *e2;
        double b = strtod(tok[0], &e1), us = strtod(tok[8], &e2);
        if (*e1 || *e2 || !(us > 0))
            continue;
        if (n == cap) {
            cap *= 2;
            double *x = realloc(rb, (size_t)cap * sizeof *rb), *y = x ? realloc(rt, (size_t)cap * sizeof *rt) : NULL;
            if (x)
                rb = x;
            if (y)
                rt = y;
            if (!x || !y) {
                st = TC_ERR_NOMEM;
                continue;
            }
        }
        rb[n] = b;
        rt[n++] = us * 1e-6;
    }
    int ws = pclose(p);
    if (!st && (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0))
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "the replay failed (%s %d): %.300s; the command was: %s",
                      ws != -1 && WIFEXITED(ws) ? "exit status" : "status", ws != -1 && WIFEXITED(ws) ? WEXITSTATUS(ws) : ws,
                      last[0] ? last : "no output", cmd);
    else if (!st && n == 0)
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "the replay printed no timing row: %.300s; the command was: %s",
                      last[0] ? last : "no output", cmd);
    for (int i = lo; !st && i <= hi; i++) {
        int best = -1, least = 0;
        for (int r = 0; r < n; r++) {
            if (rb[r] <= (double)sizes[i] && (best < 0 || rb[r] > rb[best]))
                best = r;
            if (rb[r] < rb[least])
                least = r;
        }
        t[i - lo] = rt[best >= 0 ? best : least];
    }
    free(rb);
    free(rt);
    return st;
}

tc_status tc_tune_measure(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                          int n_sizes, const tc_tune_opts *o, double *times)
{
    const int reps = o->repeats > 0 ? o->repeats : 1;
    double *runs = malloc((size_t)reps * (size_t)(n_sizes > 0 ? n_sizes : 1) * sizeof *runs);
    if (!runs)
        return TC_ERR_NOMEM;
    tc_status st = tc_tune_measure_runs(ctx, topo, coll, algo, sizes, n_sizes, o, runs);
    for (int i = 0; !st && i < n_sizes; i++) {
        double *v = runs + (size_t)i * (size_t)reps;
        qsort(v, (size_t)reps, sizeof *v, cmp_double);
        times[i] = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    }
    free(runs);
    return st;
}

tc_status tc_tune_measure_runs(tc_ctx *ctx, const tc_topo *topo, tc_coll coll, int algo, const uint64_t *sizes,
                               int n_sizes, const tc_tune_opts *o, double *runs)
{
    char **text = calloc((size_t)(n_sizes > 0 ? n_sizes : 1), sizeof *text);
    size_t *len = calloc((size_t)(n_sizes > 0 ? n_sizes : 1), sizeof *len);
    int reps = o->repeats > 0 ? o->repeats : 1, made = 0;
    tc_status st = text && len ? TC_OK : TC_ERR_NOMEM;
    const char *tmp = getenv("TMPDIR");
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s/tacosc-tune-XXXXXX",
             tmp && *tmp && strlen(tmp) < sizeof dirbuf - 32 ? tmp : "/tmp");
    for (int i = 0; !st && i < n_sizes; i++)
        st = plan_text(ctx, topo, coll, algo, &o->gen, sizes[i], &text[i], &len[i]);
    if (!st && !mkdtemp(dirbuf))
        st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot make a temporary directory '%s': %s", dirbuf, strerror(errno));
    else if (!st)
        made = 1;
    for (int lo = 0, g = 0; !st && lo < n_sizes; g++) {
        int hi = lo;
        while (hi + 1 < n_sizes && len[hi + 1] == len[lo] && !memcmp(text[hi + 1], text[lo], len[lo]))
            hi++;
        char plan[4200];
        snprintf(plan, sizeof plan, "%s/plan%d.xml", dirbuf, g);
        FILE *f = fopen(plan, "wb");
        int bad = !f || fwrite(text[lo], 1, len[lo], f) != len[lo];
        if (f && fclose(f)) /* closed exactly once, whether the write failed or not */
            bad = 1;
        if (bad) {
            st = tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write '%s': %s", plan, strerror(errno));
            break;
        }
        for (int r = 0; !st && r < reps; r++) {
            double *t = malloc((size_t)(hi - lo + 1) * sizeof *t);
            if (!t) {
                st = TC_ERR_NOMEM;
                break;
            }
            st = launch(ctx, topo, plan, sizes, lo, hi, o, t);
            for (int i = lo; !st && i <= hi; i++)
                runs[(size_t)i * (size_t)reps + (size_t)r] = t[i - lo];
            free(t);
            if (!st && o->progress)
                o->progress(o->progress_user, (double)(hi - lo + 1) / reps);
        }
        unlink(plan);
        lo = hi + 1;
    }
    if (made)
        rmdir(dirbuf);
    for (int i = 0; text && i < n_sizes; i++)
        free(text[i]);
    free(text);
    free(len);
    return st;
}
