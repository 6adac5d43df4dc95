/*
 * CUDA kernels of tacos-run's sparse messages (SpCCL paper §III-C): Pici and COO payloads built and read in
 * device memory, in exactly the layout of the CPU codec (include/tacos/sparse.h), so either side of a
 * message may be a GPU or a CPU.
 *
 * Pici compression, a warp per 64x64 tile (grid-stride when tiles outnumber warps), each lane owning
 * columns lane and lane + 32: phase 1 scans its two columns row by row (the warp reads one row at a time:
 * coalesced), sets the column words' bits, writes the words and reduces the tile count with five
 * __shfl_down_sync; phase 2 is an exclusive scan of the tile counts (one block, in place in the message's
 * tile index: SpCCL fuses it per CUDA block, here a message is compressed whole); phase 3 recomputes each
 * column's offset with a Hillis-Steele scan of the lanes' two popcounts (__shfl_up_sync) and moves the
 * values of its columns with __ffsll, nnz iterations, not 64.  Decompression: a check kernel (a warp per
 * tile: popcounts against the index, no bits past the end) and an expand kernel writing every element of
 * its columns (zeros included, coalesced by row) or, for the add, only the nonzero ones; at densities of 2%
 * to 75% it first stages the tile's values in shared memory (pici_expand<U, true>).
 * COO: 4096-element blocks read as rows of 64 in index order; per row two __ballot_sync give each lane its
 * record's position with a popcount of the lanes below it (the ballot/popc compaction); counts, the same
 * scan, then the records.  Decoding checks the indices (in range, increasing) a thread per record first.
 * Values are moved as bit patterns (2, 4, 8 bytes); 8-byte values and COO records are stored in 16- or
 * 32-bit pieces because their offsets are only 4- or 2-byte aligned (32-bit ones wherever the address is).  The add sums in the element type
 * (float32, float64, int32 modulo 2^32, bfloat16 and float16 through float32).
 * Every wrapper returns 0, -1 for a CUDA error, or 1 for an invalid payload with *bad the first tile or
 * record found wrong.  Tested on a GPU when one is present (tests/check_exec.c, test_cuda_sparse), skipped
 * with a message otherwise.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define FULL 0xffffffffu
#define TILE 4096ull

/* must match tc_sparse_fmt and tc_dtype */
enum { SP_PICI = 1, SP_COO = 2 };
enum { DT_F32 = 0, DT_F64, DT_I32, DT_BF16, DT_F16 };

/* ---- element access at 2-byte aligned addresses ------------------------------------------------ */

template <typename U> __device__ __forceinline__ void put(unsigned char *p, U v)
{
    if (((uintptr_t)p & 3) == 0) /* 32-bit pieces where the address allows (half the stores) */
        for (unsigned k = 0; k < sizeof(U) / 4; k++)
            ((uint32_t *)p)[k] = (uint32_t)(v >> (32 * k));
    else
        for (unsigned k = 0; k < sizeof(U) / 2; k++)
            ((uint16_t *)p)[k] = (uint16_t)(v >> (16 * k));
}
template <> __device__ __forceinline__ void put<uint16_t>(unsigned char *p, uint16_t v) { *(uint16_t *)p = v; }

template <typename U> __device__ __forceinline__ U get(const unsigned char *p)
{
    U v = 0;
    if (((uintptr_t)p & 3) == 0)
        for (unsigned k = 0; k < sizeof(U) / 4; k++)
            v |= (U)((const uint32_t *)p)[k] << (32 * k);
    else
        for (unsigned k = 0; k < sizeof(U) / 2; k++)
            v |= (U)((const uint16_t *)p)[k] << (16 * k);
    return v;
}
template <> __device__ __forceinline__ uint16_t get<uint16_t>(const unsigned char *p) { return *(const uint16_t *)p; }

/* *p (element type dt, width of U) += the value with bits v */
template <typename U> __device__ __forceinline__ void add_bits(int dt, U *p, U v)
{
    switch (dt) {
    case DT_F32: {
        float a = __uint_as_float((unsigned)*p) + __uint_as_float((unsigned)v);
        *p = (U)__float_as_uint(a);
        break;
    }
    case DT_F64: {
        double a = __longlong_as_double((long long)*p) + __longlong_as_double((long long)v);
        *p = (U)__double_as_longlong(a);
        break;
    }
    case DT_I32: *p = (U)((unsigned)*p + (unsigned)v); break;
    case DT_BF16: {
        __nv_bfloat16 a = __ushort_as_bfloat16((unsigned short)*p), b = __ushort_as_bfloat16((unsigned short)v);
        *p = (U)__bfloat16_as_ushort(__float2bfloat16(__bfloat162float(a) + __bfloat162float(b)));
        break;
    }
    default: {
        __half a = __ushort_as_half((unsigned short)*p), b = __ushort_as_half((unsigned short)v);
        *p = (U)__half_as_ushort(__float2half(__half2float(a) + __half2float(b)));
        break;
    }
    }
}

/* The warp of this thread walks tiles t = warp, warp + warps, ... of T. */
#define FOR_TILES(t, T)                                                                                   \
    for (unsigned long long t = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32; t < (T); \
         t += ((unsigned long long)gridDim.x * blockDim.x) / 32)

__device__ __forceinline__ void tile_geom(unsigned long long n, unsigned long long t, unsigned long long *base, int *nt,
                                          int *cols)
{
    *base = t * TILE;
    unsigned long long left = n - *base;
    *nt = left < TILE ? (int)left : (int)TILE;
    *cols = (*nt + 63) / 64;
}

/* Lane offsets of its two columns' first values in the tile (column-major order), from their popcounts. */
__device__ __forceinline__ void col_offsets(unsigned long long w0, unsigned long long w1, unsigned *o0, unsigned *o1)
{
    const int lane = threadIdx.x & 31;
    unsigned a = __popcll(w0), b = __popcll(w1), ia = a, ib = b;
    for (int d = 1; d < 32; d <<= 1) { /* Hillis-Steele inclusive scans */
        unsigned xa = __shfl_up_sync(FULL, ia, d), xb = __shfl_up_sync(FULL, ib, d);
        if (lane >= d) {
            ia += xa;
            ib += xb;
        }
    }
    *o0 = ia - a;
    *o1 = __shfl_sync(FULL, ia, 31) + ib - b;
}

/* Tile t of a Pici payload as a lane sees it: the tile's first element, element and column counts, the
 * lane's two column words and the offsets of their first values in the values array. */
__device__ __forceinline__ void tile_lane(const unsigned long long *words, const unsigned *idx, unsigned long long n,
                                          unsigned long long t, unsigned long long *base, int *nt, int *C,
                                          unsigned long long w[2], unsigned long long off[2])
{
    const int lane = threadIdx.x & 31;
    tile_geom(n, t, base, nt, C);
    w[0] = lane < *C ? words[64 * t + lane] : 0;
    w[1] = lane + 32 < *C ? words[64 * t + lane + 32] : 0;
    unsigned o0, o1;
    col_offsets(w[0], w[1], &o0, &o1);
    off[0] = idx[t] + (unsigned long long)o0;
    off[1] = idx[t] + (unsigned long long)o1;
}

/* ---- Pici -------------------------------------------------------------------------------------- */

template <typename U>
__global__ void pici_count(const U *x, unsigned long long n, unsigned long long *words, unsigned *cnt)
{
    const int lane = threadIdx.x & 31;
    const unsigned long long T = (n + TILE - 1) / TILE;
    FOR_TILES(t, T)
    {
        unsigned long long base, w[2] = {0, 0};
        int nt, C;
        tile_geom(n, t, &base, &nt, &C);
        for (int r = 0; r < 64; r++) /* one row at a time across the warp: coalesced */
            for (int h = 0; h < 2; h++) {
                const int c = lane + 32 * h, j = r * C + c;
                if (c < C && j < nt && x[base + j] != 0)
                    w[h] |= 1ull << r;
            }
        for (int h = 0; h < 2; h++)
            if (lane + 32 * h < C)
                words[64 * t + lane + 32 * h] = w[h];
        unsigned k = __popcll(w[0]) + __popcll(w[1]);
        for (int o = 16; o; o >>= 1)
            k += __shfl_down_sync(FULL, k, o);
        if (lane == 0)
            cnt[t] = k;
    }
}

/* Exclusive scan of a[0..T) in place (one block); *total the sum. */
__global__ void scan_excl(unsigned *a, unsigned long long T, unsigned long long *total)
{
    __shared__ unsigned long long part[1024];
    const int tid = threadIdx.x, nth = blockDim.x;
    const unsigned long long per = (T + nth - 1) / nth, lo = min(T, tid * per), hi = min(T, lo + per);
    unsigned long long s = 0;
    for (unsigned long long i = lo; i < hi; i++)
        s += a[i];
    part[tid] = s;
    __syncthreads();
    for (int o = 1; o < nth; o <<= 1) {
        unsigned long long v = tid >= o ? part[tid - o] : 0;
        __syncthreads();
        part[tid] += v;
        __syncthreads();
    }
    unsigned long long run = part[tid] - s;
    for (unsigned long long i = lo; i < hi; i++) {
        unsigned v = a[i];
        a[i] = (unsigned)run;
        run += v;
    }
    if (tid == nth - 1)
        *total = part[tid];
}

template <typename U>
__global__ void pici_compact(const U *x, unsigned long long n, const unsigned long long *words, const unsigned *idx,
                             unsigned char *vals)
{
    const int lane = threadIdx.x & 31;
    const unsigned long long T = (n + TILE - 1) / TILE;
    FOR_TILES(t, T)
    {
        unsigned long long base, w[2], off[2];
        int nt, C;
        tile_lane(words, idx, n, t, &base, &nt, &C, w, off);
        for (int h = 0; h < 2; h++)
            for (; w[h]; w[h] &= w[h] - 1) {
                const int r = __ffsll((long long)w[h]) - 1;
                put<U>(vals + off[h]++ * sizeof(U), x[base + (unsigned long long)r * C + lane + 32 * h]);
            }
    }
}

/* Validate: no bit past the end of a tile, each tile's popcount the difference of its index and the next
 * (nnz after the last), the first index 0.  *bad = the first wrong tile (atomicMin). */
__global__ void pici_check(const unsigned long long *words, const unsigned *idx, unsigned long long n,
                           unsigned long long nnz, unsigned long long *bad)
{
    const int lane = threadIdx.x & 31;
    const unsigned long long T = (n + TILE - 1) / TILE;
    FOR_TILES(t, T)
    {
        unsigned long long base;
        int nt, C, wrong = 0;
        tile_geom(n, t, &base, &nt, &C);
        unsigned k = 0;
        for (int h = 0; h < 2; h++) {
            const int c = lane + 32 * h;
            if (c >= C)
                continue;
            const unsigned long long w = words[64 * t + c];
            const int rows = (nt - c + C - 1) / C;
            if (rows < 64 && (w >> rows))
                wrong = 1;
            k += __popcll(w);
        }
        for (int o = 16; o; o >>= 1) {
            k += __shfl_down_sync(FULL, k, o);
            wrong |= __shfl_down_sync(FULL, wrong, o);
        }
        if (lane == 0) {
            const unsigned long long next = t + 1 < T ? idx[t + 1] : nnz;
            if (wrong || (t == 0 && idx[0] != 0) || next < idx[t] || next - idx[t] != k)
                atomicMin(bad, t);
        }
    }
}

/* The warps of a block of the staged kernels (pici_expand<U, true>), each with a tile of values in
 * shared memory: 32 KiB a block whatever the element width (the default limit is 48 KiB). */
template <typename U> constexpr int stage_warps() { return sizeof(U) >= 8 ? 1 : sizeof(U) == 4 ? 2 : 4; }

/* Copy `bytes` (even) between a warp's shared staging buffer and the message, lanes on consecutive words
 * (coalesced): 32-bit words where the message address allows, else 16-bit ones. */
__device__ __forceinline__ void warp_move(unsigned char *dst, const unsigned char *src, unsigned long long bytes)
{
    const int lane = threadIdx.x & 31;
    if ((((uintptr_t)dst | (uintptr_t)src) & 3) == 0) {
        for (unsigned long long i = lane; i < bytes / 4; i += 32)
            ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i];
        if ((bytes & 3) && lane == 0)
            ((uint16_t *)dst)[bytes / 2 - 1] = ((const uint16_t *)src)[bytes / 2 - 1];
    } else {
        for (unsigned long long i = lane; i < bytes / 2; i += 32)
            ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i];
    }
}

/* Decompress (add = 0: every element, zeros included) or add (only the nonzeros), row by row across the
 * warp (coalesced writes).  STAGED: the warp first reads the tile's values into its shared staging buffer
 * (coalesced) instead of each lane reading its own column's (32 segments a load).  Measured on an H200
 * (make bench-sparse part 3, 64 MiB float32, % of a device copy): staged 51% at 50% sparsity and 63% at
 * 90% against 38% and 53%; at 0% and 99% the direct kernel is the faster (31% against 27%, 72% against
 * 67%: staging costs occupancy, 32 KiB a block), so decode_t stages at densities of 2% to 75% only. */
template <typename U, bool STAGED>
__global__ void pici_expand(const unsigned long long *words, const unsigned *idx, const unsigned char *vals,
                            unsigned long long n, U *out, int add, int dt)
{
    extern __shared__ unsigned long long stage_mem[];
    const int lane = threadIdx.x & 31;
    U *buf = (U *)stage_mem + (size_t)(threadIdx.x >> 5) * TILE;
    const unsigned long long T = (n + TILE - 1) / TILE;
    FOR_TILES(t, T)
    {
        unsigned long long base, w[2], off[2];
        int nt, C;
        tile_lane(words, idx, n, t, &base, &nt, &C, w, off);
        if (STAGED) { /* the tile's values into the buffer; offsets relative to the tile's first */
            const unsigned long long t0 = idx[t];
            unsigned k = __popcll(w[0]) + __popcll(w[1]);
            for (int o = 16; o; o >>= 1)
                k += __shfl_xor_sync(FULL, k, o);
            warp_move((unsigned char *)buf, vals + t0 * sizeof(U), (unsigned long long)k * sizeof(U));
            __syncwarp();
            off[0] -= t0;
            off[1] -= t0;
        }
        for (int r = 0; r < 64; r++) /* row by row across the warp: coalesced writes */
            for (int h = 0; h < 2; h++) {
                const int c = lane + 32 * h, j = r * C + c;
                if (c >= C || j >= nt)
                    continue;
                U *p = out + base + j;
                if ((w[h] >> r) & 1) {
                    const U v = STAGED ? buf[off[h]++] : get<U>(vals + off[h]++ * sizeof(U));
                    if (add)
                        add_bits<U>(dt, p, v);
                    else
                        *p = v;
                } else if (!add) {
                    *p = 0;
                }
            }
        if (STAGED)
            __syncwarp();
    }
}

/* ---- COO ---------------------------------------------------------------------------------------- */

/* Nonzeros per 4096-element block (rows of 64 in index order, two ballots per row). */
template <typename U> __global__ void coo_count(const U *x, unsigned long long n, unsigned *cnt)
{
    const int lane = threadIdx.x & 31;
    const unsigned long long T = (n + TILE - 1) / TILE;
    FOR_TILES(t, T)
    {
        unsigned k = 0;
        for (int r = 0; r < 64; r++) {
            const unsigned long long j0 = t * TILE + (unsigned long long)r * 64 + lane, j1 = j0 + 32;
            k += __popc(__ballot_sync(FULL, j0 < n && x[j0] != 0)) + __popc(__ballot_sync(FULL, j1 < n && x[j1] != 0));
        }
        if (lane == 0)
            cnt[t] = k;
    }
}

template <typename U>
__global__ void coo_write(const U *x, unsigned long long n, const unsigned *start, unsigned char *rec)
{
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1;
    const unsigned long long T = (n + TILE - 1) / TILE;
    const size_t rs = 4 + sizeof(U);
    FOR_TILES(t, T)
    {
        unsigned long long off = start[t];
        for (int r = 0; r < 64; r++) {
            const unsigned long long j0 = t * TILE + (unsigned long long)r * 64 + lane, j1 = j0 + 32;
            const int z0 = j0 < n && x[j0] != 0, z1 = j1 < n && x[j1] != 0;
            const unsigned b0 = __ballot_sync(FULL, z0), b1 = __ballot_sync(FULL, z1);
            if (z0) {
                unsigned char *p = rec + (off + __popc(b0 & below)) * rs;
                put<uint32_t>(p, (uint32_t)j0);
                put<U>(p + 4, x[j0]);
            }
            if (z1) {
                unsigned char *p = rec + (off + __popc(b0) + __popc(b1 & below)) * rs;
                put<uint32_t>(p, (uint32_t)j1);
                put<U>(p + 4, x[j1]);
            }
            off += __popc(b0) + __popc(b1);
        }
    }
}

/* Records in range and strictly increasing; *bad = the first wrong record. */
__global__ void coo_check(const unsigned char *rec, unsigned long long nnz, size_t rs, unsigned long long n,
                          unsigned long long *bad)
{
    for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < nnz;
         k += (unsigned long long)gridDim.x * blockDim.x) {
        const uint32_t j = get<uint32_t>(rec + k * rs);
        if (j >= n || (k > 0 && get<uint32_t>(rec + (k - 1) * rs) >= j))
            atomicMin(bad, k);
    }
}

template <typename U>
__global__ void coo_scatter(const unsigned char *rec, unsigned long long nnz, U *out, int add, int dt)
{
    const size_t rs = 4 + sizeof(U);
    for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < nnz;
         k += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned char *p = rec + k * rs;
        U *d = out + get<uint32_t>(p);
        const U v = get<U>(p + 4);
        if (add)
            add_bits<U>(dt, d, v);
        else
            *d = v;
    }
}

/* ---- wrappers ------------------------------------------------------------------------------------ */

static int grid_for(unsigned long long warps_needed)
{
    unsigned long long b = (warps_needed + 7) / 8; /* 8 warps of a 256-thread block */
    return b < 1 ? 1 : b > 65535 ? 65535 : (int)b;
}

/* The staged kernels: a warp per tile in blocks of stage_warps<U>() warps, their staging buffers. */
template <typename U> static int stage_grid(unsigned long long tiles)
{
    unsigned long long b = (tiles + stage_warps<U>() - 1) / stage_warps<U>();
    return b < 1 ? 1 : b > 65535 ? 65535 : (int)b;
}
template <typename U> static size_t stage_bytes() { return (size_t)stage_warps<U>() * TILE * sizeof(U); }

template <typename U>
static int encode_t(int fmt, void *payload, size_t cap, const void *src, size_t n, unsigned *scratch,
                    unsigned long long *dtotal, size_t *nnz, cudaStream_t s)
{
    const unsigned long long T = (n + TILE - 1) / TILE, W = (n + 63) / 64;
    unsigned char *pay = (unsigned char *)payload;
    const U *x = (const U *)src;
    unsigned long long total = 0;
    if (fmt == SP_PICI) {
        if (8 * W + 4 * T > cap)
            return -1;
        unsigned long long *words = (unsigned long long *)pay;
        unsigned *idx = (unsigned *)(pay + 8 * W);
        if (T) {
            pici_count<U><<<grid_for(T), 256, 0, s>>>(x, n, words, idx);
            scan_excl<<<1, 1024, 0, s>>>(idx, T, dtotal);
            pici_compact<U><<<grid_for(T), 256, 0, s>>>(x, n, words, idx, pay + 8 * W + 4 * T);
            if (cudaMemcpyAsync(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost, s) != cudaSuccess)
                return -1;
        }
    } else {
        if (T) {
            coo_count<U><<<grid_for(T), 256, 0, s>>>(x, n, scratch);
            scan_excl<<<1, 1024, 0, s>>>(scratch, T, dtotal);
            coo_write<U><<<grid_for(T), 256, 0, s>>>(x, n, scratch, pay);
            if (cudaMemcpyAsync(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost, s) != cudaSuccess)
                return -1;
        }
    }
    if (cudaStreamSynchronize(s) != cudaSuccess || cudaGetLastError() != cudaSuccess)
        return -1;
    *nnz = (size_t)total;
    return 0;
}

/* Encode n elements of `esize` bytes at src (device) as a Pici or COO payload at `payload` (device, cap
 * bytes; the pool sizes it for the worst case).  scratch: ceil(n/4096) unsigned of device memory (COO);
 * dword: one device unsigned long long.  *nnz the nonzeros. */
extern "C" int tc_exec_cuda_sp_encode(int fmt, int esize, void *payload, size_t cap, const void *src, size_t n,
                                      void *scratch, void *dword, size_t *nnz, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned long long *dt = (unsigned long long *)dword;
    unsigned *sc = (unsigned *)scratch;
    switch (esize) {
    case 2: return encode_t<uint16_t>(fmt, payload, cap, src, n, sc, dt, nnz, s);
    case 4: return encode_t<uint32_t>(fmt, payload, cap, src, n, sc, dt, nnz, s);
    case 8: return encode_t<unsigned long long>(fmt, payload, cap, src, n, sc, dt, nnz, s);
    default: return -1;
    }
}

template <typename U>
static int decode_t(int fmt, int dtype, int add, void *dst, const void *payload, size_t n, size_t nnz,
                    unsigned long long *dbad, unsigned long long *bad, cudaStream_t s)
{
    const unsigned long long T = (n + TILE - 1) / TILE, W = (n + 63) / 64;
    const unsigned char *pay = (const unsigned char *)payload;
    unsigned long long none = ~0ull;
    if (cudaMemcpyAsync(dbad, &none, sizeof none, cudaMemcpyHostToDevice, s) != cudaSuccess)
        return -1;
    if (fmt == SP_PICI) {
        const unsigned long long *words = (const unsigned long long *)pay;
        const unsigned *idx = (const unsigned *)(pay + 8 * W);
        if (T)
            pici_check<<<grid_for(T), 256, 0, s>>>(words, idx, n, nnz, dbad);
    } else if (nnz) {
        unsigned long long b = (nnz + 255) / 256;
        coo_check<<<b > 65535 ? 65535 : (int)b, 256, 0, s>>>(pay, nnz, 4 + sizeof(U), n, dbad);
    }
    if (cudaMemcpyAsync(bad, dbad, sizeof *bad, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess)
        return -1;
    if (*bad != ~0ull)
        return 1; /* nothing written */
    if (fmt == SP_PICI) {
        const unsigned long long *words = (const unsigned long long *)pay;
        const unsigned *idx = (const unsigned *)(pay + 8 * W);
        const unsigned char *vals = pay + 8 * W + 4 * T;
        if (T && nnz >= n / 50 && nnz <= n / 4 * 3) /* densities 2% to 75%: staged (see pici_expand) */
            pici_expand<U, true><<<stage_grid<U>(T), 32 * stage_warps<U>(), stage_bytes<U>(), s>>>(
                words, idx, vals, n, (U *)dst, add, dtype);
        else if (T)
            pici_expand<U, false><<<grid_for(T), 256, 0, s>>>(words, idx, vals, n, (U *)dst, add, dtype);
    } else {
        if (!add && cudaMemsetAsync(dst, 0, n * sizeof(U), s) != cudaSuccess)
            return -1;
        if (nnz) {
            unsigned long long b = (nnz + 255) / 256;
            coo_scatter<U><<<b > 65535 ? 65535 : (int)b, 256, 0, s>>>(pay, nnz, (U *)dst, add, dtype);
        }
    }
    return cudaStreamSynchronize(s) == cudaSuccess && cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Validate a Pici or COO payload (device) of n elements with nnz nonzeros (sizes already checked against
 * the header), then decompress it into dst (add = 0) or add it (add = 1) in element type dtype.  Returns 1
 * with *bad the first wrong tile (Pici) or record (COO) when the payload is invalid. */
extern "C" int tc_exec_cuda_sp_decode(int fmt, int dtype, int add, void *dst, const void *payload, size_t n,
                                      size_t nnz, void *dword, unsigned long long *bad, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned long long *db = (unsigned long long *)dword;
    switch (dtype) {
    case DT_F32:
    case DT_I32: return decode_t<uint32_t>(fmt, dtype, add, dst, payload, n, nnz, db, bad, s);
    case DT_F64: return decode_t<unsigned long long>(fmt, dtype, add, dst, payload, n, nnz, db, bad, s);
    case DT_BF16:
    case DT_F16: return decode_t<uint16_t>(fmt, dtype, add, dst, payload, n, nnz, db, bad, s);
    default: return -1;
    }
}
