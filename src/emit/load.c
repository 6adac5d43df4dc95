/* Load any schedule file into the IR: JSON by content ('{' or '[' first, after an optional UTF-8 byte order
 * mark and blanks) -- an MSCCL++ plan when tc_mscclpp_sniff says so, else a tacosc schedule --, otherwise
 * MSCCL XML. */
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"

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

tc_status tc_sched_load(tc_ctx *ctx, const char *path, tc_sched **out)
{
    tc_format fmt;
    tc_status st = tc_sched_sniff(ctx, path, &fmt);
    if (st)
        return st;
    if (fmt == TC_FMT_JSON)
        return tc_emit_json_read(ctx, path, out);
    if (fmt == TC_FMT_MSCCLPP) {
        tc_mscclpp *p = NULL;
        if ((st = tc_mscclpp_read(ctx, path, &p)))
            return st;
        st = tc_mscclpp_to_sched(ctx, p, 0, path, out);
        tc_mscclpp_free(p);
        return st;
    }
    tc_msccl *m = NULL;
    if ((st = tc_msccl_read(ctx, path, &m)))
        return st;
    st = tc_msccl_to_sched(ctx, m, path, out);
    tc_msccl_free(m);
    return st;
}
