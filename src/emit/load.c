/* Load any schedule file into the IR: JSON by content ('{' or '[' first, after an optional UTF-8 byte order
 * mark and blanks) -- an MSCCL++ plan when tc_mscclpp_sniff says so, else a tacosc schedule --, otherwise
 * MSCCL XML. */
#include "tacos/check.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"
#include "tacos/sparse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

tc_status tc_sched_sniff(tc_ctx *ctx, const char *path, tc_format *out)
{
    FILE *f = NULL;
    tc_status st = tc_open_read(ctx, path, &f);
    if (st)
        return st;
    int c;
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf}; /* a UTF-8 byte order mark goes before either */
    size_t k = 0;
    while ((c = fgetc(f)) != EOF && k < 3 && c == bom[k])
        k++;
    if (k > 0 && k < 3) /* a partial mark: neither format */
        c = 0;
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        c = fgetc(f);
    int bad = c == EOF && ferror(f), e = errno, pp = 0;
    if (!bad && (c == '{' || c == '[')) { /* which JSON: the first MiB tells */
        char *head = malloc(1u << 20);
        size_t n = head && !fseek(f, 0, SEEK_SET) ? fread(head, 1, 1u << 20, f) : 0;
        pp = head && tc_mscclpp_sniff(head, n);
        free(head);
    }
    fclose(f);
    if (bad)
        return tc_error(ctx, TC_ERR_IO, path, 0, "cannot read: %s", strerror(e));
    if (c == EOF)
        return tc_error(ctx, TC_ERR_PARSE, path, 0, "empty file");
    *out = pp ? TC_FMT_MSCCLPP : c == '{' || c == '[' ? TC_FMT_JSON : TC_FMT_MSCCL;
    return TC_OK;
}

tc_status tc_sched_verify(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *name)
{
    /* te-ccl plans overlap a link's chunks between start and arrival: no one-chunk-per-link test */
    tc_check_opts co = {.topo = topo, .no_link_check = s->link_model != TC_LINK_TACOS};
    tc_status st = tc_sched_check(ctx, s, &co, name);
    return st ? st : tc_sparse_verify(ctx, s, topo);
}

/* tc_sched_load; with verify, the file read once is also checked (*refused = 1 when it reads but fails) */
static tc_status load(tc_ctx *ctx, const char *path, int verify, tc_sched **out, int *refused)
{
    tc_format fmt;
    tc_status st = tc_sched_sniff(ctx, path, &fmt);
    if (st)
        return st;
    if (fmt == TC_FMT_JSON) {
        if ((st = tc_emit_json_read(ctx, path, out)) || !verify)
            return st;
        if ((st = tc_sched_verify(ctx, *out, NULL, path))) {
            *refused = 1;
            tc_sched_free(*out);
            *out = NULL;
        }
        return st;
    }
    if (fmt == TC_FMT_MSCCLPP) {
        tc_mscclpp *p = NULL;
        if ((st = tc_mscclpp_read(ctx, path, &p)))
            return st;
        if (verify && (st = tc_mscclpp_verify(ctx, p, 0, path, NULL)))
            *refused = 1;
        if (!st)
            st = tc_mscclpp_to_sched(ctx, p, 0, path, out);
        tc_mscclpp_free(p);
        return st;
    }
    tc_msccl *m = NULL;
    if ((st = tc_msccl_read(ctx, path, &m)))
        return st;
    if (verify) { /* under tacos-run's limits: none of the runtimes' (verify --target says those) */
        tc_msccl_limits lim;
        tc_msccl_limits_get(TC_TARGET_EXEC, &lim);
        if ((st = tc_msccl_verify(ctx, m, &lim, path)))
            *refused = 1;
    }
    if (!st)
        st = tc_msccl_to_sched(ctx, m, path, out);
    tc_msccl_free(m);
    return st;
}

tc_status tc_sched_load(tc_ctx *ctx, const char *path, tc_sched **out)
{
    int refused = 0;
    return load(ctx, path, 0, out, &refused);
}

tc_status tc_sched_load_verified(tc_ctx *ctx, const char *path, tc_sched **out, int *refused)
{
    *refused = 0;
    return load(ctx, path, 1, out, refused);
}
