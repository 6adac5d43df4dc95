/* sparse_bench: throughput of the CPU codecs (src/sparse/) against memcpy of the same dense bytes.
 *
 *   sparse_bench [-n ELEMS] [-r REPS] [-s SEED]
 *     -n ELEMS    float32 elements (default 16Mi: 64 MiB)
 *     -r REPS     repetitions per measurement; the median is printed (default 7)
 *     -s SEED     seed of the random data (default from the clock, printed)
 * For sparsity 0, 50, 90 and 99% (each element zero with that probability, the others random nonzero
 * floats): memcpy of the dense buffer, Pici compress, decompress and add (into a dense buffer), COO
 * compress and decompress.  Prints one line per sparsity and operation:
 *     sparsity op gbps_cpu pct_of_memcpy gbps_wall bytes_out
 * GB/s are dense input bytes (10^9) per second of thread CPU time (the figure to trust on a shared
 * machine; wall-clock alongside), medians of REPS; pct_of_memcpy compares CPU-time throughputs.  Every
 * result is checked against the input (a wrong round trip fails the run).
 */
#include "tacos/sparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { OP_MEMCPY, OP_PICI_C, OP_PICI_D, OP_PICI_ADD, OP_COO_C, OP_COO_D, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"memcpy", "pici-compress", "pici-decompress", "pici-add",
                                               "coo-compress", "coo-decompress"};

int main(int argc, char **argv)
{
    size_t n = (size_t)16 << 20;
    int reps = 7, c;
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    while ((c = getopt(argc, argv, "n:r:s:")) != -1) {
        if (c == 'n')
            n = strtoull(optarg, NULL, 10);
        else if (c == 'r')
            reps = atoi(optarg);
        else if (c == 's')
            seed = strtoull(optarg, NULL, 10);
        else {
            fprintf(stderr, "usage: sparse_bench [-n ELEMS] [-r REPS] [-s SEED]\n");
            return 2;
        }
    }
    if (reps < 1 || n == 0 || n > 0xffffffffull) {
        fprintf(stderr, "sparse_bench: bad -n or -r\n");
        return 2;
    }
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const size_t bytes = n * 4, cap = (size_t)tc_sparse_coo_size(n, n, 4) + 64;
    float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
    unsigned char *buf = malloc(cap);
    double *tc = malloc((size_t)reps * sizeof *tc), *tw = malloc((size_t)reps * sizeof *tw);
    if (!x || !y || !z || !buf || !tc || !tw) {
        fprintf(stderr, "sparse_bench: out of memory\n");
        return 1;
    }
    memset(y, 0, bytes); /* touch every page before timing */
    memset(z, 0, bytes);
    memset(buf, 0, cap);
    printf("# sparse_bench: %zu float32 (%.0f MiB), median of %d, seed %llu\n", n, bytes / 1048576.0, reps,
           (unsigned long long)seed);
    static const double sparsities[] = {0, 0.5, 0.9, 0.99};
    tc_rng r;
    tc_rng_seed(&r, seed);
    for (size_t si = 0; si < sizeof sparsities / sizeof sparsities[0]; si++) {
        const double sp = sparsities[si];
        for (size_t i = 0; i < n; i++)
            x[i] = tc_rng_unit(&r) < sp ? 0.0f : (float)(tc_rng_unit(&r) * 2 - 1) + 1e-3f;
        double memcpy_gbps = 0;
        for (int op = 0; op < OP_COUNT; op++) {
            size_t out = 0;
            uint64_t nnz = 0;
            for (int k = 0; k < reps; k++) {
                tc_status st = TC_OK;
                if (op == OP_PICI_D || op == OP_PICI_ADD) /* the input of the decoders, untimed */
                    st = tc_sparse_pici_compress(&ctx, x, n, 4, buf, cap, &nnz, &out);
                else if (op == OP_COO_D)
                    st = tc_sparse_coo_compress(&ctx, x, n, 4, buf, cap, &nnz, &out);
                if (op == OP_PICI_ADD)
                    memset(z, 0, bytes);
                const double c0 = cpu_now(), w0 = tc_now();
                switch (op) {
                case OP_MEMCPY: memcpy(y, x, bytes); out = bytes; break;
                case OP_PICI_C: st = tc_sparse_pici_compress(&ctx, x, n, 4, buf, cap, &nnz, &out); break;
                case OP_PICI_D: st = tc_sparse_pici_decompress(&ctx, buf, out, n, 4, y); break;
                case OP_PICI_ADD: st = tc_sparse_pici_add(&ctx, buf, out, n, TC_SP_F32, z); break;
                case OP_COO_C: st = tc_sparse_coo_compress(&ctx, x, n, 4, buf, cap, &nnz, &out); break;
                default: st = tc_sparse_coo_decompress(&ctx, buf, out, n, 4, y); break;
                }
                tc[k] = cpu_now() - c0;
                tw[k] = tc_now() - w0;
                if (st) {
                    fprintf(stderr, "sparse_bench: %s failed\n", op_names[op]);
                    return 1;
                }
                /* the result must be the input again */
                if ((op == OP_MEMCPY || op == OP_PICI_D || op == OP_COO_D) && memcmp(y, x, bytes)) {
                    fprintf(stderr, "sparse_bench: %s at sparsity %g: wrong result\n", op_names[op], sp);
                    return 1;
                }
                if (op == OP_PICI_ADD && memcmp(z, x, bytes)) { /* 0 + x = x, bit for bit (no -0.0 input) */
                    fprintf(stderr, "sparse_bench: pici-add at sparsity %g: wrong result\n", sp);
                    return 1;
                }
            }
            const double gc = bytes / 1e9 / median(tc, reps), gw = bytes / 1e9 / median(tw, reps);
            if (op == OP_MEMCPY)
                memcpy_gbps = gc;
            printf("%.2f %-16s %8.2f %7.1f %8.2f %12zu\n", sp, op_names[op], gc, 100 * gc / memcpy_gbps, gw,
                   op == OP_MEMCPY ? bytes : out);
            fflush(stdout);
        }
    }
    free(x);
    free(y);
    free(z);
    free(buf);
    free(tc);
    free(tw);
    return 0;
}
