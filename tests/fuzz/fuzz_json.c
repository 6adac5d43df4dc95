/* Fuzz harness: JSON schedule reader (tc_emit_json_read_mem), the checker, writer round trip. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/check.h"
#include "tacos/emit.h"

int tc_fuzz_json(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_sched *s = NULL, *back = NULL;
    char *text = NULL;
    size_t len = 0;
    if (FUZZ_STATUS(tc_emit_json_read_mem(&ctx, "fuzz.json", (const char *)data, size, &s), size) != TC_OK)
        goto done;
    tc_check_opts co = {0};
    FUZZ_STATUS(tc_sched_check(&ctx, s, &co, "fuzz.json"), size);
    /* a plan that reads must write, and read back the same */
    FILE *f = open_memstream(&text, &len);
    FUZZ_ASSERT(f, "open_memstream");
    FUZZ_ASSERT(tc_emit_json_write(&ctx, s, f) == TC_OK, "a plan that was read cannot be written");
    fclose(f);
    FUZZ_ASSERT(tc_emit_json_read_mem(&ctx, "back.json", text, len, &back) == TC_OK, "a written plan does not read back");
    FUZZ_ASSERT(back->n_xfers == s->n_xfers && back->n_ranks == s->n_ranks && back->n_chunks == s->n_chunks &&
                    back->n_steps == s->n_steps,
                "a written plan reads back different");
done:
    tc_sched_free(back);
    tc_sched_free(s);
    free(text);
    tc_buf_free(&diag);
    return 0;
}
