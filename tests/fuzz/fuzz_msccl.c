/* Fuzz harness: MSCCL XML reader and verifier (tc_msccl_read_mem, tc_msccl_verify with each target's limits),
 * then the lowering into the schedule IR that tacosc sim and tacos-run use, and the checker. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/check.h"
#include "tacos/msccl.h"

int tc_fuzz_msccl(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_msccl *m = NULL;
    tc_sched *s = NULL;
    if (FUZZ_STATUS(tc_msccl_read_mem(&ctx, "fuzz.xml", (const char *)data, size, &m), size) != TC_OK)
        goto done;
    if (FUZZ_STATUS(tc_msccl_verify(&ctx, m, NULL, "fuzz.xml"), size) != TC_OK)
        goto done;
    tc_msccl_limits lim;
    tc_msccl_limits_get(TC_TARGET_RCCL, &lim);
    FUZZ_STATUS(tc_msccl_verify(&ctx, m, &lim, "fuzz.xml"), size);
    if (FUZZ_STATUS(tc_msccl_to_sched(&ctx, m, "fuzz.xml", &s), size) == TC_OK) {
        tc_check_opts co = {0};
        FUZZ_STATUS(tc_sched_check(&ctx, s, &co, "fuzz.xml"), size);
    }
done:
    tc_sched_free(s);
    tc_msccl_free(m);
    tc_buf_free(&diag);
    return 0;
}
