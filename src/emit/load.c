/* Load any schedule file into the IR: JSON by content ('{' or '[' first, after an optional UTF-8 byte order
 * mark and blanks), otherwise MSCCL XML. */
#include "tacos/emit.h"
#include "tacos/msccl.h"

#include <errno.h>
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
    int bad = c == EOF && ferror(f), e = errno;
    fclose(f);
    if (bad)
        return tc_error(ctx, TC_ERR_IO, path, 0, "cannot read: %s", strerror(e));
    if (c == EOF)
        return tc_error(ctx, TC_ERR_PARSE, path, 0, "empty file");
    *out = c == '{' || c == '[' ? TC_FMT_JSON : TC_FMT_MSCCL;
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
    tc_msccl *m = NULL;
    if ((st = tc_msccl_read(ctx, path, &m)))
        return st;
    st = tc_msccl_to_sched(ctx, m, path, out);
    tc_msccl_free(m);
    return st;
}
