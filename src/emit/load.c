/* Load any schedule file into the IR: JSON by content ('{' first), otherwise MSCCL XML. */
#include "tacos/emit.h"
#include "tacos/msccl.h"

#include <errno.h>
#include <string.h>

tc_status tc_sched_load(tc_ctx *ctx, const char *path, tc_sched **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot open '%s': %s", path, strerror(errno));
    int c;
    do
        c = fgetc(f);
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
    fclose(f);
    if (c == EOF)
        return tc_error(ctx, TC_ERR_PARSE, path, 0, "empty file");
    if (c == '{')
        return tc_emit_json_read(ctx, path, out);
    tc_msccl *m = NULL;
    tc_status st = tc_msccl_read(ctx, path, &m);
    if (st)
        return st;
    st = tc_msccl_to_sched(ctx, m, path, out);
    tc_msccl_free(m);
    return st;
}
