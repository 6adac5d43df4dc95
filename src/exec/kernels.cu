/*
 * CUDA reduction kernels of tacos-run: dst[i] = a[i] op b[i] for float32, float64, int32, bfloat16 and
 * float16 (the 16-bit types reduce in float32 and round to nearest), sum/prod/min/max.  dst may alias a
 * or b (each element is read before it is written by the same thread).  Integer sum and product wrap
 * modulo 2^32 as on the host.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* must match tc_dtype and tc_redop in exec.h */
enum { DT_F32 = 0, DT_F64, DT_I32, DT_BF16, DT_F16 };
enum { OP_SUM = 0, OP_PROD, OP_MIN, OP_MAX };

template <typename T> __device__ __forceinline__ T apply(int op, T x, T y)
{
    switch (op) {
    case OP_SUM: return x + y;
    case OP_PROD: return x * y;
    case OP_MIN: return y < x ? y : x;
    default: return y > x ? y : x;
    }
}

template <> __device__ __forceinline__ int32_t apply<int32_t>(int op, int32_t x, int32_t y)
{
    switch (op) {
    case OP_SUM: return (int32_t)((uint32_t)x + (uint32_t)y);
    case OP_PROD: return (int32_t)((uint32_t)x * (uint32_t)y);
    case OP_MIN: return y < x ? y : x;
    default: return y > x ? y : x;
    }
}

template <typename T>
__global__ void reduce_kernel(int op, T *dst, const T *a, const T *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = apply<T>(op, a[i], b[i]);
}

__global__ void reduce_bf16(int op, __nv_bfloat16 *dst, const __nv_bfloat16 *a, const __nv_bfloat16 *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16(apply<float>(op, __bfloat162float(a[i]), __bfloat162float(b[i])));
}

__global__ void reduce_f16(int op, __half *dst, const __half *a, const __half *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2half(apply<float>(op, __half2float(a[i]), __half2float(b[i])));
}

extern "C" int tc_exec_cuda_reduce(int dtype, int op, void *dst, const void *a, const void *b, size_t n,
                                   void *stream)
{
    if (n == 0)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    const int threads = 256;
    size_t want = (n + threads - 1) / threads;
    int blocks = want > 4096 ? 4096 : (int)want;
    switch (dtype) {
    case DT_F32:
        reduce_kernel<float><<<blocks, threads, 0, s>>>(op, (float *)dst, (const float *)a, (const float *)b, n);
        break;
    case DT_F64:
        reduce_kernel<double><<<blocks, threads, 0, s>>>(op, (double *)dst, (const double *)a, (const double *)b, n);
        break;
    case DT_I32:
        reduce_kernel<int32_t><<<blocks, threads, 0, s>>>(op, (int32_t *)dst, (const int32_t *)a,
                                                          (const int32_t *)b, n);
        break;
    case DT_BF16:
        reduce_bf16<<<blocks, threads, 0, s>>>(op, (__nv_bfloat16 *)dst, (const __nv_bfloat16 *)a,
                                               (const __nv_bfloat16 *)b, n);
        break;
    case DT_F16:
        reduce_f16<<<blocks, threads, 0, s>>>(op, (__half *)dst, (const __half *)a, (const __half *)b, n);
        break;
    default: return -1;
    }
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
