/*
 * CUDA backend of tacos-run: device buffers (cudaMalloc), reductions by the kernels of kernels.cu, copies
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

typedef struct cuda_state {
    cudaStream_t stream;
    int device;
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

static void cu_fini(tc_exec_backend *be)
{
    cuda_state *s = be->state;
    if (s) {
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
    if ((e = cudaSetDevice(s->device)) != cudaSuccess || (e = cudaStreamCreate(&s->stream)) != cudaSuccess) {
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
