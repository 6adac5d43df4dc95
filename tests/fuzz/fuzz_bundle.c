/* Fuzz harness: the bundle writer (tc_tune_bundle_write, src/tune/bundle_write.c).  The input describes a
 * bundle and the directory it lands in, one keyword line each, then "---" and the bytes of a file that is
 * already there:
 *
 *   coll allreduce|allgather|reducescatter    target nccl|rccl|tacos-run    place in|out|both
 *   channels N          range START ALGO (up to 8, starts increasing from 0)
 *   file NAME           the name of the file after "---" in DIR/msccl-algorithms/ (default foreign.xml)
 *   readme user|tacosc  a README that is there already: someone's, or one tacosc wrote
 *   link NAME           a symbolic link NAME in DIR/msccl-algorithms/ to a file outside DIR
 *   algodir link        DIR/msccl-algorithms itself a link to a directory outside DIR
 *
 * on a 4-NPU ring.  What must hold, whatever the input: the files outside DIR are never written; no staging
 * directory is left; a failed call leaves DIR exactly as it was (names, kinds, bytes, link targets); a
 * successful one leaves a README tacosc wrote and, in msccl-algorithms/, the new range files (each one
 * loading, verifying for the target and serving its range) beside every other file, unchanged. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/msccl.h"
#include "tacos/topo.h"
#include "tacos/tune.h"

#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RANGES 8
#define README_HEAD TC_BUNDLE_README_HEAD

static const char ring4[] = "<topology name=\"ring-4\" npus=\"4\">\n"
                            "  <class name=\"default\" alpha=\"0.5us\" bandwidth=\"50GB/s\"/>\n"
                            "  <link src=\"0\" dst=\"1\"/><link src=\"1\" dst=\"2\"/>\n"
                            "  <link src=\"2\" dst=\"3\"/><link src=\"3\" dst=\"0\"/>\n"
                            "</topology>\n";

/* Append n bytes (NULs included) to a growing buffer. */
static void put(tc_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = 2 * (b->len + n + 1);
        b->data = realloc(b->data, cap);
        FUZZ_ASSERT(b->data, "out of memory");
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

/* strstr over bytes that may hold NULs */
static char *tc_fuzz_memmem(char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k))
            return hay + i;
    return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Everything under dir, in a canonical text: per entry (sorted) its path, kind, and bytes or link target. */
static void snapshot(const char *dir, const char *rel, tc_buf *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[64];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char p[2048], r[2048];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        snprintf(r, sizeof r, "%s/%s", rel, names[i]);
        struct stat sb;
        if (lstat(p, &sb))
            continue;
        put(out, r, strlen(r));
        if (S_ISLNK(sb.st_mode)) {
            char t[1024];
            ssize_t k = readlink(p, t, sizeof t - 1);
            put(out, " -> ", 4);
            put(out, t, k > 0 ? (size_t)k : 0);
        } else if (S_ISDIR(sb.st_mode)) {
            put(out, "/\n", 2);
            snapshot(p, r, out);
        } else {
            FILE *f = fopen(p, "rb");
            char buf[4096];
            size_t k;
            put(out, " =", 2);
            while (f && (k = fread(buf, 1, sizeof buf, f)) > 0)
                put(out, buf, k);
            if (f)
                fclose(f);
        }
        put(out, "\n", 1);
        free(names[i]);
    }
}

/* Is a staging directory (.tacosc-bundle-*) left in dir?  Read from the directory itself: the snapshot's text
 * holds the input's bytes, which may spell the name. */
static int staging_left(const char *dir)
{
    DIR *d = opendir(dir);
    int left = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        left |= !strncmp(e->d_name, ".tacosc-bundle-", 15);
    if (d)
        closedir(d);
    return left;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[2048];
            struct stat sb;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (!lstat(p, &sb) && S_ISDIR(sb.st_mode))
                remove_tree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* A file name from the input: [A-Za-z0-9._-]{1,64}, not "." or ".." (else 0). */
static int good_name(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n &&
           strcmp(s, ".") && strcmp(s, "..");
}

/* Is name a file of an earlier bundle of these calls (COLL[-outofplace|-both]-n4-MIN-MAX.xml, MAX digits or
 * "inf"), which a new bundle replaces? */
static int earlier_bundle(const char *name, tc_coll coll, const tc_msccl_lower_opts *lo)
{
    char pre[96];
    snprintf(pre, sizeof pre, "%s%s-n4-", tc_coll_name(coll),
             lo->inplace && lo->outofplace ? "-both" : lo->outofplace ? "-outofplace" : "");
    if (strncmp(name, pre, strlen(pre)))
        return 0;
    const char *q = name + strlen(pre);
    size_t d = strspn(q, "0123456789");
    if (!d || q[d] != '-')
        return 0;
    q += d + 1;
    d = strspn(q, "0123456789");
    return (d && !strcmp(q + d, ".xml")) || !strcmp(q, "inf.xml");
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    FUZZ_ASSERT(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "cannot write a file of the scene");
}

int tc_fuzz_bundle(const uint8_t *data, size_t size)
{
    tc_buf diag = {0}, before = {0}, after = {0}, outside_before = {0}, outside_after = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_tune_bundle_opts o;
    tc_tune_bundle_opts_init(&o);
    o.coll = TC_COLL_ALLREDUCE;
    o.how = "the fuzz harness";
    uint64_t starts[MAX_RANGES];
    int algos[MAX_RANGES], nr = 0, readme = 0, algodir_link = 0, has_body = 0;
    char file[72] = "foreign.xml", link_name[72] = "";
    const char *body = "", *end = (const char *)data + size;
    size_t body_n = 0;
    /* the keyword lines */
    for (const char *p = (const char *)data; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char line[160];
        if (n >= sizeof line)
            return 0;
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (nl != NULL);
        if (memchr(line, 0, n))
            return 0;
        char a[80], b[80];
        unsigned long long v;
        if (!strcmp(line, "---")) {
            body = p;
            body_n = (size_t)(end - p);
            has_body = 1;
            break;
        } else if (sscanf(line, "coll %79s", a) == 1) {
            if (tc_coll_parse(a, &o.coll) ||
                (o.coll != TC_COLL_ALLREDUCE && o.coll != TC_COLL_ALLGATHER && o.coll != TC_COLL_REDUCESCATTER))
                return 0;
        } else if (sscanf(line, "target %79s", a) == 1) {
            if (tc_msccl_target_parse(a, &o.lower.target))
                return 0;
        } else if (sscanf(line, "place %79s", a) == 1) {
            o.lower.inplace = strcmp(a, "out") != 0;
            o.lower.outofplace = strcmp(a, "in") != 0;
        } else if (sscanf(line, "channels %llu", &v) == 1) {
            if (v > 64)
                return 0;
            o.lower.max_channels = (int)v;
        } else if (sscanf(line, "range %llu %79s", &v, a) == 2) {
            int k = tc_tune_algo_index(a);
            if (nr == MAX_RANGES || k < 0 || v > (1ull << 34))
                return 0;
            starts[nr] = v;
            algos[nr++] = k;
        } else if (sscanf(line, "file %71s", b) == 1) {
            if (!good_name(b))
                return 0;
            strcpy(file, b);
        } else if (sscanf(line, "readme %79s", a) == 1) {
            readme = !strcmp(a, "tacosc") ? 2 : 1;
        } else if (sscanf(line, "link %71s", b) == 1) {
            if (!good_name(b))
                return 0;
            strcpy(link_name, b);
        } else if (!strcmp(line, "algodir link")) {
            algodir_link = 1;
        } else
            return 0;
    }
    if (nr == 0)
        starts[0] = 0, algos[0] = tc_tune_algo_index("ring"), nr = 1;
    tc_tune_range r[MAX_RANGES];
    int n_ranges = 0;
    if (tc_tune_ranges_build(starts, algos, nr, r, &n_ranges))
        return 0;
    tc_topo *t = NULL;
    FUZZ_ASSERT(tc_topo_read_mem(&ctx, "ring-4.xml", ring4, sizeof ring4 - 1, &t) == TC_OK &&
                    tc_topo_apply_costs(&ctx, t, NULL) == TC_OK,
                "the harness's topology does not load");
    uint64_t div = tc_sched_chunk_divisor(o.coll, t->n_npus, 1);
    for (int k = 0; k < n_ranges; k++) { /* each plan at a size inside its range with a byte per chunk */
        uint64_t lo = r[k].min_bytes < div ? div : r[k].min_bytes;
        if (r[k].max_bytes && lo > r[k].max_bytes)
            goto out;
        r[k].plan_bytes = lo;
    }
    /* the scene: ROOT/dir (the bundle), ROOT/outside (what links point at) */
    char root[128], dir[160], algo[200], outside[160], p[800];
    snprintf(root, sizeof root, "/tmp/tacosc-fuzz-bundle-%d", (int)getpid());
    remove_tree(root);
    snprintf(dir, sizeof dir, "%s/dir", root);
    snprintf(algo, sizeof algo, "%s/" TC_BUNDLE_ALGO_DIR, dir);
    snprintf(outside, sizeof outside, "%s/outside", root);
    FUZZ_ASSERT(!mkdir(root, 0777) && !mkdir(dir, 0777) && !mkdir(outside, 0777), "cannot make the scene");
    snprintf(p, sizeof p, "%s/target.xml", outside);
    write_file(p, "outside DIR\n", 12);
    if (algodir_link) {
        FUZZ_ASSERT(!symlink(outside, algo), "cannot make the scene");
    } else {
        FUZZ_ASSERT(!mkdir(algo, 0777), "cannot make the scene");
        snprintf(p, sizeof p, "%s/%s", algo, file);
        if (has_body)
            write_file(p, body, body_n);
        if (link_name[0] && strcmp(link_name, file)) {
            snprintf(p, sizeof p, "%s/%s", algo, link_name);
            char tgt[300];
            snprintf(tgt, sizeof tgt, "%s/target.xml", outside);
            FUZZ_ASSERT(!symlink(tgt, p), "cannot make the scene");
        }
    }
    if (readme) {
        snprintf(p, sizeof p, "%s/README", dir);
        const char *text = readme == 2 ? README_HEAD " (an earlier bundle)\n" : "my notes\n";
        write_file(p, text, strlen(text));
    }
    if (algodir_link || !has_body)
        file[0] = 0;
    put(&before, "\n", 1); /* every entry after a newline */
    put(&after, "\n", 1);
    snapshot(dir, "", &before);
    snapshot(outside, "", &outside_before);
    tc_status st = tc_tune_bundle_write(&ctx, dir, t, &o, r, n_ranges);
    FUZZ_STATUS(st, size);
    snapshot(dir, "", &after);
    snapshot(outside, "", &outside_after);
    FUZZ_ASSERT(outside_before.len == outside_after.len && !memcmp(outside_before.data, outside_after.data,
                                                                   outside_before.len),
                "a file outside the bundle directory changed");
    FUZZ_ASSERT(!staging_left(dir), "a staging directory was left behind");
    if (st) {
        FUZZ_ASSERT(before.len == after.len && !memcmp(before.data, after.data, before.len),
                    "a failed bundle changed its directory");
    } else {
        snprintf(p, sizeof p, "%s/README", dir);
        FILE *f = fopen(p, "r");
        char head[sizeof README_HEAD] = "";
        FUZZ_ASSERT(f && fread(head, 1, sizeof head - 1, f) == sizeof head - 1, "no README");
        fclose(f);
        FUZZ_ASSERT(!strcmp(head, README_HEAD), "a README tacosc did not write");
        tc_msccl_limits lim;
        tc_msccl_limits_get(o.lower.target, &lim);
        if (o.lower.max_channels && o.lower.max_channels < lim.max_channels)
            lim.max_channels = o.lower.max_channels;
        for (int k = 0; k < n_ranges; k++) {
            char name[256];
            tc_tune_bundle_file_name(name, sizeof name, o.coll, &o.lower, t->n_npus, &r[k]);
            snprintf(p, sizeof p, "%s/%s", algo, name);
            tc_msccl *m = NULL;
            FUZZ_ASSERT(tc_msccl_read(&ctx, p, &m) == TC_OK, "a range's file does not load");
            FUZZ_ASSERT(tc_msccl_verify(&ctx, m, &lim, p) == TC_OK, "a range's file fails its target's rules");
            FUZZ_ASSERT(m->coll == o.coll && m->ngpus == t->n_npus && m->min_bytes == r[k].min_bytes &&
                            m->max_bytes == r[k].max_bytes,
                        "a file serves other calls than its range");
            tc_msccl_free(m);
            if (!strcmp(name, file))
                file[0] = 0; /* replaced by the new range file, checked above */
        }
        snprintf(p, sizeof p, "\n/" TC_BUNDLE_ALGO_DIR "/%s =", file);
        if (file[0] && earlier_bundle(file, o.coll, &o.lower)) {
            FUZZ_ASSERT(!tc_fuzz_memmem(after.data, after.len, p), "a file of an earlier bundle of these calls was kept");
        } else if (file[0]) { /* another file: kept as it was */
            char *at = tc_fuzz_memmem(after.data, after.len, p);
            FUZZ_ASSERT(at && (size_t)(after.data + after.len - at) > strlen(p) + body_n &&
                            !memcmp(at + strlen(p), body, body_n) && at[strlen(p) + body_n] == '\n',
                        "another file of the directory changed");
        }
    }
    remove_tree(root);
out:
    tc_topo_free(t);
    tc_buf_free(&before);
    tc_buf_free(&after);
    tc_buf_free(&outside_before);
    tc_buf_free(&outside_after);
    tc_buf_free(&diag);
    return 0;
}
