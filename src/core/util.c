/* Small shared utilities: deterministic RNG, size parsing and formatting, time. */
#include "tacos/ir.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tc_rng_seed(tc_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tc_rng_next(tc_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t tc_rng_below(tc_rng *r, uint64_t n)
{
    /* Lemire's nearly divisionless method, exact (rejection on the biased band). */
    uint64_t x = tc_rng_next(r);
    __uint128_t m = (__uint128_t)x * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) {
            x = tc_rng_next(r);
            m = (__uint128_t)x * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double tc_rng_unit(tc_rng *r) { return (double)(tc_rng_next(r) >> 11) * 0x1.0p-53; }

int tc_parse_decimal(const char *s, char **end, double *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t ip = strspn(p, "0123456789"), fp = 0;
    p += ip;
    if (*p == '.') {
        fp = strspn(p + 1, "0123456789");
        if (ip || fp)
            p += 1 + fp;
    }
    if (!ip && !fp) {
        *end = (char *)s;
        return -1;
    }
    if ((*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        size_t ep = strspn(q, "0123456789");
        if (ep)
            p = q + ep;
    }
    /* strtod on a copy of exactly the span, so nothing after it (a unit) is read as part of the number */
    char buf[128];
    size_t n = (size_t)(p - s);
    if (n >= sizeof buf) {
        *end = (char *)s;
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    double v = strtod(buf, NULL);
    if (errno == ERANGE && fabs(v) > 1) {
        *end = (char *)s;
        return -1;
    }
    errno = 0;
    *out = v;
    *end = (char *)p;
    return 0;
}

tc_status tc_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return TC_ERR_INVALID;
    errno = 0;
    char *end;
    if (!isdigit((unsigned char)*s))
        return TC_ERR_INVALID;
    double v;
    if (tc_parse_decimal(s, &end, &v) || v < 0)
        return TC_ERR_INVALID;
    while (*end == ' ')
        end++;
    double mul = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'B': mul = 1; break;
        case 'K': mul = 1024.0; break;
        case 'M': mul = 1024.0 * 1024; break;
        case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: return TC_ERR_INVALID;
        }
        const char *rest = end + 1;
        if (toupper((unsigned char)*end) != 'B' && *rest) {
            if (strcasecmp(rest, "B") && strcasecmp(rest, "iB"))
                return TC_ERR_INVALID;
        } else if (toupper((unsigned char)*end) == 'B' && *rest)
            return TC_ERR_INVALID;
    }
    const char *after = s + strspn(s, "0123456789");
    if (after + strspn(after, " ") == end) { /* digits, then (after blanks) the unit or the end */
        /* a whole number: exactly, not through a double (2^53 + 1 would read as 2^53) */
        errno = 0;
        const unsigned long long n = strtoull(s, NULL, 10);
        const uint64_t m = (uint64_t)mul;
        if (errno == ERANGE || (m > 1 && n > UINT64_MAX / m))
            return TC_ERR_INVALID;
        *out = (uint64_t)n * m;
        return TC_OK;
    }
    double b = v * mul;
    /* a fraction or an exponent: exact only below 2^53, where every whole number is a double */
    if (b >= TC_TWO53 || b != floor(b))
        return TC_ERR_INVALID;
    *out = (uint64_t)b;
    return TC_OK;
}

const char *tc_fmt_time(double t, char *buf, size_t n)
{
    double a = fabs(t);
    if (!(a < 1e6)) /* beyond TC_TIME_MAX, or not finite: keep it short */
        snprintf(buf, n, "%.3e s", t);
    else if (a >= 1.0)
        snprintf(buf, n, "%.3f s", t);
    else if (a >= 1e-3)
        snprintf(buf, n, "%.3f ms", t * 1e3);
    else if (a >= 1e-6 || a == 0)
        snprintf(buf, n, "%.3f us", t * 1e6);
    else
        snprintf(buf, n, "%.3f ns", t * 1e9);
    return buf;
}

const char *tc_fmt_bytes(double b, char *buf, size_t n)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", b);
    else
        snprintf(buf, n, "%.2f %s", b, unit[u]);
    return buf;
}

const char *tc_fmt_double(double d, char *buf, size_t n)
{
    if (d == floor(d) && fabs(d) < TC_TWO53 && !signbit(d)) {
        snprintf(buf, n, "%lld", (long long)d);
        return buf;
    }
    snprintf(buf, n, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, n, "%.17g", d);
    return buf;
}

int tc_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int tc_cmp_int64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

tc_status tc_open_read(tc_ctx *ctx, const char *path, FILE **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot open '%s': %s", path, strerror(errno));
    *out = f;
    return TC_OK;
}

tc_status tc_read_file(tc_ctx *ctx, const char *path, char **out, size_t *out_len)
{
    return tc_read_file_max(ctx, path, 0, NULL, out, out_len);
}

tc_status tc_read_file_max(tc_ctx *ctx, const char *path, size_t max, const char *what, char **out, size_t *out_len)
{
    FILE *f = NULL;
    tc_status ost = tc_open_read(ctx, path, &f);
    if (ost)
        return ost;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    tc_status st = TC_OK;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (max && len > max) { /* an endless or huge input (/dev/zero) stops here, not at the memory's end */
            free(buf);
            fclose(f);
            char mb[32];
            return tc_error(ctx, TC_ERR_LIMIT, path, 0, "larger than %s: not a %s", tc_fmt_bytes((double)max, mb, sizeof mb),
                            what ? what : "file this reads");
        }
        if (cap - len - 1 == 0) {
            char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    if (!buf)
        st = tc_error(ctx, TC_ERR_NOMEM, path, 0, "cannot read: out of memory");
    else if (ferror(f))
        st = tc_error(ctx, TC_ERR_IO, path, 0, "cannot read: %s", strerror(errno));
    fclose(f);
    if (st) {
        free(buf);
        return st;
    }
    buf[len] = 0;
    *out = buf;
    *out_len = len;
    return TC_OK;
}

char *tc_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

double tc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tc_hugepage_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!p || bytes < ((size_t)32 << 20))
        return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

tc_status tc_grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return TC_OK;
    int64_t c = *cap > 0 ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > INT32_MAX)
        c = INT32_MAX;
    if (c < need)
        return TC_ERR_LIMIT;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return TC_ERR_NOMEM;
    tc_hugepage_hint(q, (size_t)c * elem);
    *p = q;
    *cap = (int)c;
    return TC_OK;
}

/* A number from the first line of a file (cgroup limits), 0 when absent or not a number ("max"). */
static uint64_t read_u64_file(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (f) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

uint64_t tc_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    uint64_t avail = (uint64_t)kb * 1024;
    if (!avail) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    }
    /* a container's memory limit (cgroup v2), and the address-space limit (ulimit -v) */
    uint64_t lim = read_u64_file("/sys/fs/cgroup/memory.max"), used = read_u64_file("/sys/fs/cgroup/memory.current");
    if (lim && (!avail || lim - (used < lim ? used : lim) < avail))
        avail = lim - (used < lim ? used : lim);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (!avail || rl.rlim_cur < avail))
        avail = (uint64_t)rl.rlim_cur;
    return avail;
}

void tc_xml_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* igraph as Debian builds it keeps its error state and its "finally" stack of cleanups in globals
 * (IGRAPH_THREAD_SAFE is 0 in /usr/include/igraph/igraph_threading.h): two threads inside igraph at
 * once corrupt that stack ("Corrupt finally stack", then abort).  tacosc runs the bound beside the event
 * model and synthesizes chunk candidates in threads, so every igraph call sequence holds this one lock;
 * it is recursive, so a caller holding it may call another function that takes it. */
static pthread_mutex_t igraph_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void tc_igraph_lock(void) { pthread_mutex_lock(&igraph_mutex); }
void tc_igraph_unlock(void) { pthread_mutex_unlock(&igraph_mutex); }
