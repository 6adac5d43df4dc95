/* The fuzz harnesses inside make check: every file of the corpus replayed (each crash found once is a
 * regression test), and the deterministic boundary sweep: every number in every seed file set to -1, 0,
 * 2^31-1, 2^31, 1e9 and 1e308 in turn.  Each input runs in a child process under a CPU-time limit (and an
 * address-space limit outside the sanitizers), so a crash, a hang or a runaway allocation is one failure
 * with a file to replay, not a dead suite.
 *
 * tests/fuzz/corpus/NAME/pending/ holds reproducers of bugs fixed on another branch (the MSCCL reader and
 * verifier): they run with TC_FUZZ_PENDING=1 only, and a sweep input identical to one of them is skipped;
 * once the fix is merged they move up into tests/fuzz/corpus/NAME/. */
#include "testutil.h"

#include "fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

#define CPU_LIMIT_S 10                  /* per input: far above any sane run (most take under a millisecond) */
#define AS_LIMIT ((rlim_t)1 << 30)      /* per input, outside the sanitizers: the harnesses abort when a few
                                           kilobytes of input run out of it */
#define SWEEP_FAIL_DIR "build/fuzz-sweep" /* where failing sweep inputs are written */

#ifdef TU_ASAN
/* Under AddressSanitizer no address-space limit can be set: cap single allocations and the resident size
 * instead (an allocation over the cap returns NULL, so the harness sees out of memory and aborts). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=1024:hard_rss_limit_mb=3072";
}
#endif

/* The bytes of every regular file of dir (sorted by name), with their names. */
typedef struct files {
    int n;
    char **name;
    char **data;
    size_t *len;
} files;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static files list_files(const char *dir, const char *prefix)
{
    files f = {0};
    DIR *d = opendir(dir);
    if (!d)
        return f;
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        if (prefix && strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        names = realloc(names, (size_t)(n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    f.n = n;
    f.name = names;
    f.data = calloc((size_t)n + 1, sizeof *f.data);
    f.len = calloc((size_t)n + 1, sizeof *f.len);
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        f.data[i] = tu_slurp(path, &f.len[i]);
        ck_assert_ptr_nonnull(f.data[i]);
    }
    return f;
}

static void files_free(files *f)
{
    for (int i = 0; i < f->n; i++) {
        free(f->name[i]);
        free(f->data[i]);
    }
    free(f->name);
    free(f->data);
    free(f->len);
}

/* Run fn on the input in a child process; 0 when it returned, else a description of how it ended in why. */
static int run_isolated(int (*fn)(const uint8_t *, size_t), const char *data, size_t len, char *why, size_t n)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* under valgrind (make valgrind sets VALGRIND) everything is slower and valgrind needs the address
         * space: a longer CPU limit and no address-space limit */
        const int vg = getenv("VALGRIND") != NULL, lim = vg ? 20 * CPU_LIMIT_S : CPU_LIMIT_S;
        struct rlimit cpu = {(rlim_t)lim, (rlim_t)lim + 1};
        setrlimit(RLIMIT_CPU, &cpu);
#ifndef TU_ASAN
        struct rlimit as = {AS_LIMIT, AS_LIMIT};
        if (!vg)
            setrlimit(RLIMIT_AS, &as);
#endif
        alarm(3 * (unsigned)lim);
        fn((const uint8_t *)data, len);
        _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFSIGNALED(st))
        snprintf(why, n, "killed by signal %d (%s)", WTERMSIG(st),
                 WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGALRM ? "over the time limit" : strsignal(WTERMSIG(st)));
    else
        snprintf(why, n, "exit status %d (a sanitizer report or an allocation over the limit)", WEXITSTATUS(st));
    return -1;
}

static int pending_enabled(void)
{
    const char *e = getenv("TC_FUZZ_PENDING");
    return e && *e && strcmp(e, "0");
}

/* Every corpus file of every harness runs to completion. */
START_TEST(test_corpus_replay)
{
    int total = 0, skipped = 0, fails = 0;
    char first[1024] = "";
    for (int h = 0; h < TC_FUZZ_N_HARNESSES; h++) {
        const tc_fuzz_harness *H = &tc_fuzz_harnesses[h];
        for (int pend = 0; pend < 2; pend++) {
            char dir[256];
            snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s%s", H->name, pend ? "/pending" : "");
            files f = list_files(dir, NULL);
            ck_assert_msg(pend || f.n > 0, "%s: no corpus", dir);
            for (int i = 0; i < f.n; i++) {
                if (pend && !pending_enabled()) {
                    skipped++;
                    continue;
                }
                char why[256];
                total++;
                if (run_isolated(H->fn, f.data[i], f.len[i], why, sizeof why) && !fails++)
                    snprintf(first, sizeof first, "fuzz harness %s on %s/%s: %s", H->name, dir, f.name[i], why);
            }
            files_free(&f);
        }
    }
    fprintf(stderr, "fuzz: %d corpus files replayed%s", total, skipped ? "" : "\n");
    if (skipped)
        fprintf(stderr, ", %d pending reproducers skipped (TC_FUZZ_PENDING=1 runs them)\n", skipped);
    ck_assert_msg(fails == 0, "%d of %d corpus files failed; the first: %s", fails, total, first);
}
END_TEST

/* The numbers of a text: a run of digits (with sign, fraction, exponent) that starts a value, i.e. follows
 * a quote, '=', ':', '[', ',', a blank or the start of the text.  Returns their count; offsets in at/len. */
static int find_numbers(const char *s, size_t n, size_t *at, size_t *len, int cap)
{
    int k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        int starts = i == 0 || strchr("\"=:[, \t\n", s[i - 1]);
        size_t j = i;
        if (starts && j < n && (s[j] == '-' || s[j] == '+'))
            j++;
        if (!starts || j >= n || s[j] < '0' || s[j] > '9')
            continue;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j + 1 < n && s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9')
            for (j++; j < n && s[j] >= '0' && s[j] <= '9'; j++)
                ;
        if (j + 1 < n && (s[j] == 'e' || s[j] == 'E') &&
            ((s[j + 1] >= '0' && s[j + 1] <= '9') || ((s[j + 1] == '-' || s[j + 1] == '+') && j + 2 < n)))
            for (j += 2; j < n && s[j] >= '0' && s[j] <= '9'; j++)
                ;
        at[k] = i;
        len[k++] = j - i;
        i = j - 1;
    }
    return k;
}

static int is_pending(const files *p, const char *data, size_t len)
{
    for (int i = 0; i < p->n; i++)
        if (p->len[i] == len && !memcmp(p->data[i], data, len))
            return 1;
    return 0;
}

/* Every number of every seed set to each boundary value in turn; each input must run to completion. */
START_TEST(test_boundary_sweep)
{
    static const char *const values[] = {"-1", "0", "2147483647", "2147483648", "1e9", "1e308"};
    const int nv = (int)(sizeof values / sizeof values[0]);
    /* under valgrind (make valgrind) every input costs a slow start: a fixed tenth of them, the same each run */
    const int stride = getenv("VALGRIND") ? 10 : 1;
    int runs = 0, fails = 0, known = 0, seen = 0;
    char first[2048] = "";
    double t0 = tc_now();
    for (int h = 0; h < TC_FUZZ_N_HARNESSES; h++) {
        const tc_fuzz_harness *H = &tc_fuzz_harnesses[h];
        char dir[256], pdir[300];
        snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", H->name);
        snprintf(pdir, sizeof pdir, "%s/pending", dir);
        files seeds = list_files(dir, "seed-"), pend = list_files(pdir, NULL);
        ck_assert_msg(seeds.n > 0, "%s: no seed-* files", dir);
        for (int s = 0; s < seeds.n; s++) {
            enum { CAP = 4096 };
            size_t *at = malloc(CAP * sizeof *at), *len = malloc(CAP * sizeof *len);
            int nn = find_numbers(seeds.data[s], seeds.len[s], at, len, CAP);
            ck_assert_msg(nn > 0, "%s/%s: no numbers", dir, seeds.name[s]);
            char *buf = malloc(seeds.len[s] + 32);
            for (int k = 0; k < nn; k++)
                for (int v = 0; v < nv; v++) {
                    if (seen++ % stride)
                        continue;
                    size_t lv = strlen(values[v]);
                    memcpy(buf, seeds.data[s], at[k]);
                    memcpy(buf + at[k], values[v], lv);
                    memcpy(buf + at[k] + lv, seeds.data[s] + at[k] + len[k], seeds.len[s] - at[k] - len[k]);
                    size_t bl = seeds.len[s] - len[k] + lv;
                    if (!pending_enabled() && is_pending(&pend, buf, bl)) {
                        known++;
                        continue;
                    }
                    char why[256];
                    runs++;
                    if (run_isolated(H->fn, buf, bl, why, sizeof why) == 0)
                        continue;
                    /* keep the input to replay: make it a corpus file once fixed */
                    char path[1024];
                    snprintf(path, sizeof path, SWEEP_FAIL_DIR "/%s-%s-n%d-%s", H->name, seeds.name[s], k,
                             values[v]);
                    mkdir("build", 0777);
                    mkdir(SWEEP_FAIL_DIR, 0777);
                    FILE *o = fopen(path, "wb");
                    if (o) {
                        fwrite(buf, 1, bl, o);
                        fclose(o);
                    }
                    if (!fails++)
                        snprintf(first, sizeof first, "%s (number %d of %s/%s set to %s): %s", path, k, dir,
                                 seeds.name[s], values[v], why);
                }
            free(buf);
            free(at);
            free(len);
        }
        files_free(&seeds);
        files_free(&pend);
    }
    fprintf(stderr, "fuzz: boundary sweep: %d inputs%s in %.1f s, %d failed, %d pending skipped\n", runs,
            stride > 1 ? " (every tenth, under valgrind)" : "", tc_now() - t0, fails, known);
    ck_assert_msg(fails == 0, "%d sweep inputs failed; the first: %s", fails, first);
}
END_TEST

/* The sweep itself finds the numbers it is meant to change. */
START_TEST(test_find_numbers)
{
    const char *s = "<a x=\"12\" y=\"-0.5us\" name=\"ring-4\"/>\n{\"t\": [1e-06, 2.5E+3, 7]}\ndefault 0.5us 50GB/s";
    size_t at[16], len[16];
    int n = find_numbers(s, strlen(s), at, len, 16);
    static const char *want[] = {"12", "-0.5", "1e-06", "2.5E+3", "7", "0.5", "50"};
    ck_assert_int_eq(n, 7);
    for (int i = 0; i < n; i++) {
        char got[32];
        snprintf(got, sizeof got, "%.*s", (int)len[i], s + at[i]);
        ck_assert_str_eq(got, want[i]);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_find_numbers);
    tcase_add_test(tc, test_corpus_replay);
    tcase_add_test(tc, test_boundary_sweep);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
