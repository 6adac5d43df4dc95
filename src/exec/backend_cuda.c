/*
 * CUDA backend of tacos-run: device buffers (cudaMalloc), reductions by the kernels of kernels.cu, sparse
 * messages by those of sparse.cu (headers built and checked on the host with the library), copies
 * on one stream.  MPI addresses device memory directly when the library says it is CUDA-aware
 * (MPIX_Query_cuda_support, Open MPI); otherwise the engine stages messages through pinned host memory
 * (cudaMallocHost).  Built only when nvcc was found (TC_HAVE_CUDA); otherwise every call explains that.
 * Every hook is synchronous (the stream is synchronized before it returns): MPI may read the result next.
 */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TC_HAVE_CUDA
#include <cuda_runtime.h>

#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* kernels.cu */
int tc_exec_cuda_reduce(int dtype, int op, void *dst, const void *a, const void *b, size_t n, void *stream);
/* sparse.cu */
int tc_exec_cuda_sp_encode(int fmt, int esize, void *payload, size_t cap, const void *src, size_t n, void *scratch,
                           void *dword, size_t *nnz, void *stream);
int tc_exec_cuda_sp_decode(int fmt, int dtype, int add, void *dst, const void *payload, size_t n, size_t nnz,
                           void *dword, unsigned long long *bad, void *stream);

typedef struct cuda_state {
    cudaStream_t stream;
    int device;
    void *scratch;       /* device: per-tile counts of a COO encode */
    size_t scratch_bytes;
    void *dword;         /* device: one 64-bit word (a total, a first bad index) */
} cuda_state;

static void *cu_alloc(tc_exec_backend *be, size_t bytes)
{
    (void)be;
    void *p = NULL;
    return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : NULL;
}

static void cu_release(tc_exec_backend *be, void *p)
{
    (void)be;
    cudaFree(p);
}

static void *cu_alloc_host(tc_exec_backend *be, size_t bytes)
{
    (void)be;
    void *p = NULL;
    return cudaMallocHost(&p, bytes ? bytes : 1) == cudaSuccess ? p : NULL;
}

static void cu_release_host(tc_exec_backend *be, void *p)
{
    (void)be;
    cudaFreeHost(p);
}

static int cu_memcpy(tc_exec_backend *be, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    cuda_state *s = be->state;
    if (cudaMemcpyAsync(dst, src, bytes, kind, s->stream) != cudaSuccess)
        return -1;
    return cudaStreamSynchronize(s->stream) == cudaSuccess ? 0 : -1;
}

static int cu_copy(tc_exec_backend *be, void *dst, const void *src, size_t bytes)
{
    return cu_memcpy(be, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

static int cu_upload(tc_exec_backend *be, void *dst, const void *src, size_t bytes)
{
    return cu_memcpy(be, dst, src, bytes, cudaMemcpyHostToDevice);
}

static int cu_download(tc_exec_backend *be, void *dst, const void *src, size_t bytes)
{
    return cu_memcpy(be, dst, src, bytes, cudaMemcpyDeviceToHost);
}

static int cu_reduce(tc_exec_backend *be, tc_dtype t, tc_redop op, void *dst, const void *a, const void *b,
                     size_t n)
{
    cuda_state *s = be->state;
    if (tc_exec_cuda_reduce((int)t, (int)op, dst, a, b, n, (void *)s->stream))
        return -1;
    return cudaStreamSynchronize(s->stream) == cudaSuccess ? 0 : -1;
}

static tc_status cu_sp_encode(tc_exec_backend *be, tc_ctx *ctx, int fmt, tc_dtype t, void *msg, size_t cap,
                              const void *src, size_t n, size_t *bytes)
{
    cuda_state *s = be->state;
    const size_t e = tc_exec_dtype_size(t), need = ((n + TC_PICI_TILE - 1) / TC_PICI_TILE) * 4 + 16;
    size_t nnz = n;
    if (cap < TC_SPARSE_HDR_BYTES)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "sparse message: %zu bytes cannot hold the header", cap);
    unsigned char *pay = (unsigned char *)msg + TC_SPARSE_HDR_BYTES;
    if (fmt == TC_SP_DENSE) {
        if (n * e > cap - TC_SPARSE_HDR_BYTES || cu_copy(be, pay, src, n * e))
            return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "sparse message: cannot copy %zu dense elements", n);
    } else {
        if (s->scratch_bytes < need) {
            cudaFree(s->scratch);
            s->scratch = NULL;
            s->scratch_bytes = 0;
            if (cudaMalloc(&s->scratch, need) != cudaSuccess)
                return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "sparse message: no device memory for %zu bytes", need);
            s->scratch_bytes = need;
        }
        if (tc_exec_cuda_sp_encode(fmt, (int)e, pay, cap - TC_SPARSE_HDR_BYTES, src, n, s->scratch, s->dword, &nnz,
                                   (void *)s->stream))
            return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "%s: the CUDA compression kernels failed: %s",
                            tc_sparse_fmt_name(fmt), cudaGetErrorString(cudaGetLastError()));
    }
    const uint64_t pb = tc_sparse_payload_size(fmt, n, nnz, e);
    if (TC_SPARSE_HDR_BYTES + pb > cap)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "sparse message: %zu bytes cannot hold %llu", cap,
                        (unsigned long long)(TC_SPARSE_HDR_BYTES + pb));
    tc_sparse_hdr h = {TC_SPARSE_MAGIC, (uint16_t)fmt, (uint16_t)e, n, nnz, pb};
    unsigned char hb[TC_SPARSE_HDR_BYTES];
    tc_sparse_hdr_put(&h, hb);
    if (cu_upload(be, msg, hb, sizeof hb))
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "sparse message: cannot write its header");
    *bytes = TC_SPARSE_HDR_BYTES + (size_t)pb;
    return TC_OK;
}

static tc_status cu_sp_decode(tc_exec_backend *be, tc_ctx *ctx, tc_dtype t, int add, void *dst, const void *msg,
                              size_t bytes, size_t n)
{
    cuda_state *s = be->state;
    unsigned char hb[TC_SPARSE_HDR_BYTES] = {0};
    tc_sparse_hdr h;
    tc_status st;
    if (bytes >= sizeof hb && cu_download(be, hb, msg, sizeof hb))
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "sparse message: cannot read its header");
    if ((st = tc_sparse_msg_header(ctx, hb, bytes, (tc_sparse_dtype)t, n, &h)))
        return st; /* sizes and format checked on the host; the payload's metadata on the device */
    const unsigned char *pay = (const unsigned char *)msg + TC_SPARSE_HDR_BYTES;
    if (h.format == TC_SP_DENSE) {
        if (add ? cu_reduce(be, t, TC_RED_SUM, dst, dst, pay, n) : cu_copy(be, dst, pay, n * tc_exec_dtype_size(t)))
            return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "sparse message: cannot copy its dense payload");
        return TC_OK;
    }
    unsigned long long bad = 0;
    int rc = tc_exec_cuda_sp_decode(h.format, (int)t, add, dst, pay, n, h.nnz, s->dword, &bad, (void *)s->stream);
    if (rc < 0)
        return tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "%s: the CUDA decompression kernels failed: %s",
                        tc_sparse_fmt_name(h.format), cudaGetErrorString(cudaGetLastError()));
    if (rc > 0)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0,
                        h.format == TC_SP_PICI ? "pici: tile %llu: its bit vector and its index disagree"
                                               : "coo: record %llu: index out of range or not above the one before it",
                        bad);
    return TC_OK;
}

static void cu_fini(tc_exec_backend *be)
{
    cuda_state *s = be->state;
    if (s) {
        cudaFree(s->scratch);
        cudaFree(s->dword);
        cudaStreamDestroy(s->stream);
        free(s);
    }
    be->state = NULL;
}

static int mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

tc_status tc_exec_backend_cuda(tc_exec_backend *be, int local_rank, char *why, size_t why_len)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        snprintf(why, why_len, "no CUDA device found (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
        return TC_ERR_UNSUPPORTED;
    }
    cuda_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, why_len, "out of memory");
        return TC_ERR_NOMEM;
    }
    s->device = local_rank % ndev;
    if ((e = cudaSetDevice(s->device)) != cudaSuccess || (e = cudaStreamCreate(&s->stream)) != cudaSuccess ||
        (e = cudaMalloc(&s->dword, 2 * sizeof(unsigned long long))) != cudaSuccess) {
        snprintf(why, why_len, "cannot use CUDA device %d: %s", s->device, cudaGetErrorString(e));
        free(s);
        return TC_ERR_UNSUPPORTED;
    }
    memset(be, 0, sizeof *be);
    be->name = "cuda";
    be->mpi_direct = mpi_cuda_aware();
    be->transport = be->mpi_direct ? "cuda-aware MPI" : "staged through pinned host memory";
    be->state = s;
    be->alloc = cu_alloc;
    be->release = cu_release;
    be->alloc_host = cu_alloc_host;
    be->release_host = cu_release_host;
    be->copy = cu_copy;
    be->reduce = cu_reduce;
    be->upload = cu_upload;
    be->download = cu_download;
    be->sp_encode = cu_sp_encode;
    be->sp_decode = cu_sp_decode;
    be->fini = cu_fini;
    return TC_OK;
}

#else /* !TC_HAVE_CUDA */

tc_status tc_exec_backend_cuda(tc_exec_backend *be, int local_rank, char *why, size_t why_len)
{
    (void)be;
    (void)local_rank;
    snprintf(why, why_len, "this tacos-run was built without CUDA support (nvcc was not found at build time)");
    return TC_ERR_UNSUPPORTED;
}

#endif
