/* sparse_cuda_bench: the CUDA kernels of src/exec/sparse.cu against a device-to-device copy of the same
 * dense bytes (make bench-sparse, part 3; built with nvcc together with src/exec/sparse.cu).
 *
 *   sparse_cuda_bench [-n ELEMS] [-r REPS]
 * float32, sparsity 0, 50, 90 and 99%: cudaMemcpy device to device, Pici encode and decode, COO encode and
 * decode (each a whole message, as tacos-run runs them).  Prints per sparsity and operation
 *     sparsity op gbps pct_of_copy
 * in GB/s of dense bytes per second (cudaEvent timing, median of REPS).  Each decode is checked against
 * the input.  Exits 1 without a usable GPU (the bench script then says it skipped). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern "C" int tc_exec_cuda_sp_encode(int fmt, int esize, void *payload, size_t cap, const void *src, size_t n,
                                      void *scratch, void *dword, size_t *nnz, void *stream);
extern "C" int tc_exec_cuda_sp_decode(int fmt, int dtype, int add, void *dst, const void *payload, size_t n,
                                      size_t nnz, void *dword, unsigned long long *bad, void *stream);

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t n = (size_t)16 << 20;
    int reps = 7, c;
    while ((c = getopt(argc, argv, "n:r:")) != -1) {
        if (c == 'n')
            n = strtoull(optarg, NULL, 10);
        else if (c == 'r')
            reps = atoi(optarg);
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        printf("no CUDA device\n");
        return 1;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const size_t bytes = n * 4, cap = n * 8 + 1024, tiles = (n + 4095) / 4096;
    float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes);
    void *x, *y, *msg, *scratch, *dword;
    cudaStream_t s;
    if (!hx || !hy || cudaMalloc(&x, bytes) || cudaMalloc(&y, bytes) || cudaMalloc(&msg, cap) ||
        cudaMalloc(&scratch, tiles * 4 + 16) || cudaMalloc(&dword, 16) || cudaStreamCreate(&s)) {
        printf("cannot allocate on the GPU\n");
        return 1;
    }
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float *ms = (float *)malloc(sizeof(float) * reps);
    printf("# sparse_cuda_bench: %s, %zu float32 (%.0f MiB), median of %d\n", prop.name, n, bytes / 1048576.0, reps);
    static const double sparsities[] = {0, 0.5, 0.9, 0.99};
    static const char *const ops[] = {"d2d-copy", "pici-encode", "pici-decode", "coo-encode", "coo-decode"};
    uint64_t st = 88172645463325252ull;
    for (int si = 0; si < 4; si++) {
        for (size_t i = 0; i < n; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            hx[i] = (double)(st >> 11) / 9007199254740992.0 < sparsities[si] ? 0.0f : 1.0f + (float)(st % 1000);
        }
        cudaMemcpy(x, hx, bytes, cudaMemcpyHostToDevice);
        double copy = 0;
        for (int op = 0; op < 5; op++) {
            const int fmt = op <= 2 ? 1 : 2;
            size_t nnz = 0;
            unsigned long long bad = 0;
            if (op == 2 || op == 4) /* the decoder's input */
                tc_exec_cuda_sp_encode(fmt, 4, msg, cap, x, n, scratch, dword, &nnz, s);
            for (int k = 0; k < reps; k++) {
                int rc = 0;
                cudaEventRecord(e0, s);
                if (op == 0)
                    rc = cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s) != cudaSuccess;
                else if (op == 1 || op == 3)
                    rc = tc_exec_cuda_sp_encode(fmt, 4, msg, cap, x, n, scratch, dword, &nnz, s);
                else
                    rc = tc_exec_cuda_sp_decode(fmt, 0, 0, y, msg, n, nnz, dword, &bad, s);
                cudaEventRecord(e1, s);
                cudaEventSynchronize(e1);
                cudaEventElapsedTime(&ms[k], e0, e1);
                if (rc) {
                    printf("%s failed (%d)\n", ops[op], rc);
                    return 1;
                }
            }
            if (op == 2 || op == 4) {
                cudaMemcpy(hy, y, bytes, cudaMemcpyDeviceToHost);
                if (memcmp(hx, hy, bytes)) {
                    printf("%s at sparsity %g: wrong result\n", ops[op], sparsities[si]);
                    return 1;
                }
            }
            qsort(ms, (size_t)reps, sizeof *ms, cmp_f);
            const double gbps = bytes / 1e6 / ms[reps / 2];
            if (op == 0)
                copy = gbps;
            printf("%.2f %-12s %9.1f %7.1f\n", sparsities[si], ops[op], gbps, 100 * gbps / copy);
        }
    }
    return 0;
}
