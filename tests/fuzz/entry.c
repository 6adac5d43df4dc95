/* libFuzzer entry point of one harness: compiled with -DTC_FUZZ_TARGET=tc_fuzz_NAME (see the Makefile). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return TC_FUZZ_TARGET(data, size);
}
