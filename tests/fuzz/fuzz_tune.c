/* Fuzz harness: tuning data reader (tc_tune_data_read_mem), then the model of each collective it holds
 * trained (small data only) and asked for its pick at a few sizes. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "tacos/tune.h"

#include <math.h>

int tc_fuzz_tune(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    tc_tune_data *d = NULL;
    if (FUZZ_STATUS(tc_tune_data_read_mem(&ctx, "fuzz.csv", (const char *)data, size, &d), size) != TC_OK)
        goto done;
    unsigned colls = 0;
    for (int i = 0; i < d->n_rows; i++) {
        const tc_tune_row *r = &d->rows[i];
        FUZZ_ASSERT(r->time > 0 && isfinite(r->time) && r->bytes >= 1, "a bad time or size was accepted");
        FUZZ_ASSERT(r->algo >= 0 && (tc_algo_registry[r->algo].colls & TC_COLL_BIT(r->coll)),
                    "an algorithm that does not generate the collective was accepted");
        FUZZ_ASSERT(r->topo >= 0 && r->topo < d->n_topos, "a row names no topology");
        colls |= TC_COLL_BIT(r->coll);
    }
    if (d->n_rows > 400) /* training is the slow part: small data only */
        goto done;
    for (int c = 0; c < TC_COLL_COUNT; c++) {
        if (!(colls & TC_COLL_BIT(c)))
            continue;
        tc_tune_model *m = NULL;
        if (FUZZ_STATUS(tc_tune_train(&ctx, d, (tc_coll)c, &m), size) != TC_OK)
            continue;
        FUZZ_ASSERT(m->test.accuracy >= 0 && m->test.accuracy <= 1 && m->n_classes >= 1, "scores out of range");
        for (int k = 0; k < 4; k++) {
            int best, second;
            uint64_t bytes = (uint64_t)1 << (k * 16);
            tc_tune_model_predict(m, &m->topos[k % m->n_topos], bytes, &best, &second);
            int known = 0;
            for (int i = 0; i < m->n_classes; i++)
                known |= m->classes[i] == best;
            FUZZ_ASSERT(known, "the model predicted an algorithm it has no class of");
        }
        tc_tune_model_free(m);
    }
done:
    tc_tune_data_free(d);
    tc_buf_free(&diag);
    return 0;
}
