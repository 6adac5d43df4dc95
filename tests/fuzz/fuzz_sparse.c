/* Fuzz harness: a received sparse message, as tacos-run decodes one (tc_sparse_msg_decode).  The input is a
 * text line "N TYPE" (the element count and type the receiver expects) and the message bytes after it.  A
 * message that decodes must decode the same way when added, encode again in its format and decode back to
 * the same elements; a Pici one must merge with itself.  The message is copied to exactly its length, so
 * AddressSanitizer catches a read past its end. */
#include "fuzz.h"
#include "fuzz_util.h"

#include <string.h>

#include "tacos/sparse.h"

int tc_fuzz_sparse(const uint8_t *data, size_t size)
{
    tc_buf diag = {0};
    tc_ctx ctx;
    fuzz_ctx(&ctx, &diag);
    const uint8_t *nl = memchr(data, '\n', size < 64 ? size : 64);
    char head[65] = "", tname[16] = "";
    unsigned long long n = 0;
    if (!nl)
        return 0;
    memcpy(head, data, (size_t)(nl - data));
    tc_sparse_dtype t;
    if (sscanf(head, "%llu %15s", &n, tname) != 2 || tc_sparse_dtype_parse(tname, &t) || n > (1u << 20))
        return 0; /* the receiver's side is not fuzzed: bounded work */
    const size_t e = tc_sparse_dtype_size(t), mlen = size - (size_t)(nl + 1 - data);
    unsigned char *msg = malloc(mlen ? mlen : 1), *a = malloc(n * e + 1), *b = malloc(n * e + 1), *m2 = NULL;
    if (!msg || !a || !b)
        goto done;
    memcpy(msg, nl + 1, mlen);
    memset(a, 0, n * e);
    memset(b, 0, n * e);
    tc_status st = FUZZ_STATUS(tc_sparse_msg_decode(&ctx, msg, mlen, t, n, a, 0), size);
    tc_status st2 = FUZZ_STATUS(tc_sparse_msg_decode(&ctx, msg, mlen, t, n, b, 1), size);
    FUZZ_ASSERT(st == st2, "decode and add disagree on whether a message is valid");
    if (st == TC_OK) {
        tc_sparse_hdr h;
        FUZZ_ASSERT(tc_sparse_msg_header(&ctx, msg, mlen, t, n, &h) == TC_OK, "a decoded message has a bad header");
        const size_t cap = (size_t)tc_sparse_msg_bound(h.format, n, e);
        size_t len = 0;
        if (!(m2 = malloc(cap)))
            goto done;
        FUZZ_ASSERT(tc_sparse_msg_encode(&ctx, h.format, t, a, n, m2, cap, &len, NULL) == TC_OK,
                    "decoded elements do not encode");
        memset(b, 0xa5, n * e);
        FUZZ_ASSERT(tc_sparse_msg_decode(&ctx, m2, len, t, n, b, 0) == TC_OK && !memcmp(a, b, n * e),
                    "a re-encoded message decodes differently");
        if (h.format == TC_SP_PICI) {
            uint64_t nnz;
            size_t mb, pl = len - TC_SPARSE_HDR_BYTES;
            unsigned char *m3 = malloc(pl ? pl : 1);
            FUZZ_ASSERT(m3 && tc_sparse_pici_merge_add(&ctx, m2 + TC_SPARSE_HDR_BYTES, pl, m2 + TC_SPARSE_HDR_BYTES, pl,
                                                       n, t, m3, pl, &nnz, &mb) == TC_OK,
                        "a valid Pici payload does not merge with itself");
            free(m3);
        }
    }
done:
    free(msg);
    free(a);
    free(b);
    free(m2);
    tc_buf_free(&diag);
    return 0;
}
