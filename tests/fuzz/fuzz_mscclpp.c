/* Fuzz harness: MSCCL++ execution-plan reader (tc_mscclpp_read_mem) and verifier (rules, limits, the
 * symbolic execution in three orders), pricing (tc_mscclpp_to_sched), and the writer: a plan that reads
 * writes, and what it writes reads back and writes the same bytes. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/mscclpp.h"

#include <string.h>

static char *write_mem(tc_ctx *ctx, const tc_mscclpp *p, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    FUZZ_ASSERT(f, "open_memstream");
    FUZZ_ASSERT(tc_mscclpp_write(ctx, p, f) == TC_OK, "a plan that was read cannot be written");
    fclose(f);
    return text;
}

int tc_fuzz_mscclpp(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_mscclpp *p = NULL, *back = NULL, *again = NULL;
    tc_sched *s = NULL;
    char *t1 = NULL, *t2 = NULL;
    size_t l1 = 0, l2 = 0;
    if (FUZZ_STATUS(tc_mscclpp_read_mem(&ctx, "fuzz.json", (const char *)data, size, &p), size) != TC_OK)
        goto done;
    tc_mscclpp_verdict v;
    if (FUZZ_STATUS(tc_mscclpp_verify(&ctx, p, 1u << 20, "fuzz.json", &v), size) == TC_OK && v.modelled)
        FUZZ_STATUS(tc_mscclpp_to_sched(&ctx, p, 1u << 20, "fuzz.json", &s), size);
    t1 = write_mem(&ctx, p, &l1);
    FUZZ_ASSERT(tc_mscclpp_read_mem(&ctx, "back.json", t1, l1, &back) == TC_OK, "a written plan does not read back");
    t2 = write_mem(&ctx, back, &l2);
    FUZZ_ASSERT(l1 == l2 && memcmp(t1, t2, l1) == 0, "a written plan reads back different");
    FUZZ_ASSERT(tc_mscclpp_read_mem(&ctx, "again.json", t2, l2, &again) == TC_OK, "a rewritten plan does not read");
done:
    tc_sched_free(s);
    tc_mscclpp_free(p);
    tc_mscclpp_free(back);
    tc_mscclpp_free(again);
    free(t1);
    free(t2);
    tc_buf_free(&diag);
    return 0;
}
