/* Fuzz harness: a libsvm model file (the .svm beside a tuning model's .json).  The text is checked by
 * tc_tune_svm_check as the model loader does; what passes is loaded by libsvm itself (svm_load_model)
 * and asked for a prediction, which must name one of the model's classes.  A forged count, a short
 * support-vector line or a NaN that passes the check and then crashes libsvm is the bug this looks for. */
#include "fuzz.h"
#include "fuzz_util.h"

#include "../../src/tune/tune_int.h"

#include <math.h>
#include <unistd.h>

int tc_fuzz_svm(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    const int n_classes = 8;
    if (tc_tune_svm_check(&ctx, "fuzz.svm", (const char *)data, size, n_classes, TC_TUNE_FEATURES) == TC_OK) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/tacosc-fuzz-svm-%d", (int)getpid());
        FILE *f = fopen(path, "wb");
        FUZZ_ASSERT(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write the temporary model");
        struct svm_model *m = svm_load_model(path);
        unlink(path);
        FUZZ_ASSERT(m, "a model that passed the check does not load");
        struct svm_node x[TC_TUNE_FEATURES + 1];
        for (int k = 0; k < TC_TUNE_FEATURES; k++)
            x[k] = (struct svm_node){k + 1, 0.25 * k - 0.5};
        x[TC_TUNE_FEATURES].index = -1;
        double label = svm_predict(m, x);
        FUZZ_ASSERT(isfinite(label) && label >= 0 && label < n_classes && label == floor(label),
                    "the prediction names no class");
        svm_free_and_destroy_model(&m);
    }
    tc_buf_free(&diag);
    return 0;
}
