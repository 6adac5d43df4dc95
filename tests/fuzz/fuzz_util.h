/* Helpers shared by the harnesses (tests/fuzz/fuzz_*.c). */
#ifndef TACOS_FUZZ_UTIL_H
#define TACOS_FUZZ_UTIL_H

#include "tacos/ir.h"

#include <stdio.h>
#include <stdlib.h>

/* A context whose diagnostics are formatted into `buf` (so formatting runs too) and then dropped. */
static inline void fuzz_ctx(tc_ctx *ctx, tc_buf *buf)
{
    tc_ctx_init(ctx);
    ctx->sink = tc_diag_buffer;
    ctx->sink_user = buf;
}

/* A broken invariant: say which and abort (libFuzzer and the Check suite report it as a crash). */
#define FUZZ_ASSERT(cond, what)                                                                            \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, __FILE__, __LINE__);            \
            abort();                                                                                       \
        }                                                                                                  \
    } while (0)

/* A status from a pass on this input: out of memory means a few kilobytes of input asked for more than the
 * run's memory limit (1 GiB in the Check suite): "tiny file, huge work", a bug; any other status is an
 * answer.  Returns st. */
#define FUZZ_STATUS(st, size)                                                                              \
    fuzz_status((st), (size), __FILE__, __LINE__)
static inline tc_status fuzz_status(tc_status st, size_t size, const char *file, int line)
{
    if (st == TC_ERR_NOMEM) {
        fprintf(stderr, "fuzz invariant broken: a %zu-byte input ran out of memory (%s:%d)\n", size, file, line);
        abort();
    }
    return st;
}

#endif
