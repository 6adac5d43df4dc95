/* Host-memory backend of tacos-run: malloc'd buffers that MPI reads and writes directly; sparse messages
 * through the library's CPU codecs (src/sparse/). */
#include "exec.h"

#include <stdlib.h>
#include <string.h>

static void *host_alloc(tc_exec_backend *be, size_t bytes)
{
    (void)be;
    void *p = NULL;
    /* page alignment keeps large copies and reductions on aligned vectors */
    if (posix_memalign(&p, 4096, bytes ? bytes : 1))
        return NULL;
    return p;
}

static void host_release(tc_exec_backend *be, void *p)
{
    (void)be;
    free(p);
}

static int host_copy(tc_exec_backend *be, void *dst, const void *src, size_t bytes)
{
    (void)be;
    memmove(dst, src, bytes);
    return 0;
}

static int host_reduce(tc_exec_backend *be, tc_dtype t, tc_redop op, void *dst, const void *a, const void *b,
                       size_t n)
{
    (void)be;
    tc_exec_host_reduce(t, op, dst, a, b, n);
    return 0;
}

static tc_status host_sp_encode(tc_exec_backend *be, tc_ctx *ctx, int fmt, tc_dtype t, void *msg, size_t cap,
                                const void *src, size_t n, size_t *bytes)
{
    (void)be;
    return tc_sparse_msg_encode(ctx, fmt, (tc_sparse_dtype)t, src, n, msg, cap, bytes, NULL);
}

static tc_status host_sp_decode(tc_exec_backend *be, tc_ctx *ctx, tc_dtype t, int add, void *dst, const void *msg,
                                size_t bytes, size_t n)
{
    (void)be;
    return tc_sparse_msg_decode(ctx, msg, bytes, (tc_sparse_dtype)t, n, dst, add);
}

static void host_fini(tc_exec_backend *be) { (void)be; }

void tc_exec_backend_host(tc_exec_backend *be)
{
    memset(be, 0, sizeof *be);
    be->name = "host";
    be->transport = "direct";
    be->mpi_direct = 1;
    be->alloc = be->alloc_host = host_alloc;
    be->release = be->release_host = host_release;
    be->copy = be->upload = be->download = host_copy;
    be->reduce = host_reduce;
    be->sp_encode = host_sp_encode;
    be->sp_decode = host_sp_decode;
    be->fini = host_fini;
}
