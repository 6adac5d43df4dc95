/* tacos-run --calibrate: alpha and beta of the link classes the job's ranks actually have, measured.
 *
 *   mpirun -np N tacos-run --calibrate [-o FILE] [--reps R] [--iters I] [--class NAME] [-b SIZE] [-e SIZE]
 *                                      [--device host|cuda]
 *
 * Classes: ranks sharing memory (MPI_Comm_split_type MPI_COMM_TYPE_SHARED) talk over the class NAME
 * (default "default"); with several nodes the ranks of different nodes talk over "inter", and the
 * file has "intra" as well (the same values as NAME).
 * alpha: ping-pong of 8 bytes between rank 0 and a peer of the class (rank 1 inside a node, the first rank
 *   of another node across), 200 round trips per repetition, half the mean round trip.
 * beta: the copy path of tacos-run itself.  tacosc's ring all-reduce on the job's ranks (topology fc N,
 *   --algo ring, one chunk per rank, lowered for tacos-run, in place) is replayed by tacos-run's own
 *   engine, on host memory or with --device cuda on the GPU as tacos-run --device cuda replays (device
 *   buffers, CUDA reductions, messages staged through pinned host memory unless MPI is CUDA-aware) (nonblocking sends and receives, receive temporaries, float32 sums, the idle policy) at every
 *   size S from -b to -e (default 1 MiB to 64 MiB, doubling: the sizes the file is meant to price), timed
 *   as tacos-run times it (I runs back to back after a barrier, their mean; the slowest rank's).  The plan
 *   is 2(N - 1) steps of S/N bytes, so per size beta(S) = (median time / 2(N - 1) - alpha) / (S/N).  Bytes
 *   move at different speeds at different sizes (caches below, memory bandwidth above, the scheduler on a
 *   shared machine), so no one beta fits them all: the file has a size table (man 5 tacosc-costs), one
 *   point `CLASS at S/N BANDWIDTH` per size, which every pass interpolates; priced with it, the ring
 *   all-reduce of the calibrated sizes takes back the replay's medians.  The class line keeps one beta, the
 *   one that keeps the largest relative error over the sizes smallest (the geometric mean of the smallest
 *   and largest beta(S)), as a reader without the table would use it.  Every beta(S) is written as a
 *   comment, and how far the class line's beta is from the extremes.  Beside it, as comments only, the MPI library's raw streaming:
 *   every rank sends S/N bytes to the next rank of the ring and receives from the previous one at once
 *   (MPI_Sendrecv), N - 1 steps back to back, as a copy step and as a reduce step (float32 sum); the ring
 *   is ordered so that each node is entered once.
 *   Earlier versions took beta from that raw streaming at 1 MiB and 16 MiB alone, (t(16 MiB) - t(1 MiB)) /
 *   15 MiB: on a loaded machine the difference of two noisy times went negative, and the replay, which
 *   does more per byte than MPI_Sendrecv, ran 2-6x slower than the file predicted.
 * Each measurement is repeated R times (default 7), after untimed warm-up (the replay: tacos-run's default
 * 5 runs before each timing; the MPI streaming and ping-pong: one); the file gets the median
 * and, as comments, the spread (smallest and largest), every replay repetition in the order it ran, and
 * each repetition against the medians (CAL_DRIFT: a warning, here and on stderr, when the machine changed
 * speed while the calibration ran).  Rank 0 writes the file (stdout without -o); a
 * regular file is written through a temporary file renamed into place.
 */
#include "calibrate.h"

#include "exec.h"
#include "tacos/algo.h"
#include "tacos/ir.h"
#include "tacos/msccl.h"
#include "tacos/topo.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_ITERS 200
#define MAX_SIZES 24
/* A calibration whose repetitions ran more than this far apart in speed (the slowest repetition's replay
 * times over the fastest's, geometric mean over the sizes) is flagged: the machine changed speed while it
 * ran.  On this project's 2-core VM, Open MPI's own 512 KiB MPI_Sendrecv between the two ranks ran at
 * 72 us for 19 s, then 255-285 us for 65 s, then 74 us again (the host: nothing else ran in the
 * guest): 3.7x, where the noise of a still machine moves one repetition by 1.1-1.3x. */
#define CAL_DRIFT 1.5

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Decimals that give a bandwidth in GB/s six significant digits (four at least): a loaded machine's
 * replay can run at 0.03 GB/s, where four decimals would move its price by 0.15%. */
static int bw_prec(double gbps)
{
    int d = gbps > 0 ? 5 - (int)floor(log10(gbps)) : 4;
    return d < 4 ? 4 : d > 12 ? 12 : d;
}

typedef struct stat3 {
    double med, lo, hi;
} stat3;

static stat3 stats(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    stat3 s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

/* Half the mean round trip of 8 bytes between ranks a and b (on rank a; others return 0). */
static double pingpong(MPI_Comm comm, int rank, int a, int b)
{
    char buf[8] = {0};
    MPI_Barrier(comm);
    if (rank != a && rank != b)
        return 0;
    const int peer = rank == a ? b : a;
    double t0 = MPI_Wtime();
    for (int i = 0; i < PP_ITERS; i++) {
        if (rank == a) {
            MPI_Send(buf, 8, MPI_CHAR, peer, 7, comm);
            MPI_Recv(buf, 8, MPI_CHAR, peer, 7, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_CHAR, peer, 7, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_CHAR, peer, 7, comm);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * PP_ITERS);
}

/* `steps` ring steps of `bytes` each on every rank at once (next/prev in the ring), back to back as a
 * ring collective streams them; the slowest rank's time per step. */
static double ring_step(MPI_Comm comm, int next, int prev, float *send, float *recv, float *acc, size_t bytes,
                        int reduce, int steps)
{
    const int n = (int)(bytes / sizeof(float));
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        MPI_Sendrecv(send, n, MPI_FLOAT, next, 9, recv, n, MPI_FLOAT, prev, 9, comm, MPI_STATUS_IGNORE);
        if (reduce)
            for (int i = 0; i < n; i++)
                acc[i] += recv[i];
    }
    double t = (MPI_Wtime() - t0) / steps, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return tmax;
}

/* The copy path: tacosc's ring all-reduce on the job's ranks (topology fc N, --algo ring, one chunk per
 * rank, lowered for tacos-run, in place) replayed by tacos-run's own engine on host memory, as tacos-run
 * replays plans: its nonblocking sends and receives, receive temporaries, reductions and idle policy. */
typedef struct copy_path {
    tc_ctx ctx;
    tc_msccl *m;
    tc_exec_plan *plan;
    tc_exec_backend be;
    int idle_sleep;
    int cuda;  /* buffers in device memory (--device cuda) */
} copy_path;

static tc_status copy_path_create(copy_path *cp, MPI_Comm comm, int rank, int n, int idle_sleep, int cuda)
{
    tc_topo *t = NULL;
    tc_sched *s = NULL;
    char dims[16];
    memset(cp, 0, sizeof *cp);
    tc_ctx_init(&cp->ctx);
    if (cuda) { /* tacos-run --device cuda's backend: the device of the local rank, its kernels and staging */
        MPI_Comm local;
        int lrank = 0;
        char why[256] = "";
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &lrank);
        MPI_Comm_free(&local);
        if (tc_exec_backend_cuda(&cp->be, lrank, why, sizeof why)) {
            fprintf(stderr, "tacos-run: error: --calibrate --device cuda: %s (rank %d)\n", why, rank);
            return TC_ERR_UNSUPPORTED;
        }
    } else
        tc_exec_backend_host(&cp->be);
    cp->cuda = cuda;
    cp->idle_sleep = idle_sleep;
    snprintf(dims, sizeof dims, "%d", n);
    tc_gen_opts go;
    tc_gen_opts_init(&go);
    go.size = (uint64_t)n * 64;
    tc_msccl_lower_opts lo;
    tc_msccl_lower_opts_init(&lo);
    lo.target = TC_TARGET_EXEC;
    lo.inplace = 1;
    tc_status st = tc_topo_generate(&cp->ctx, "fc", dims, NULL, 0, &t);
    if (!st)
        st = tc_algo_run(&cp->ctx, "ring", t, TC_COLL_ALLREDUCE, &go, &s);
    if (!st)
        st = tc_msccl_lower(&cp->ctx, s, &lo, &cp->m);
    if (!st)
        st = tc_exec_plan_create(&cp->ctx, cp->m, rank, "calibrate ring all-reduce", &cp->plan);
    tc_sched_free(s);
    tc_topo_free(t);
    (void)comm;
    return st;
}

static void copy_path_free(copy_path *cp)
{
    tc_exec_plan_free(cp->plan);
    tc_msccl_free(cp->m);
    cp->be.fini(&cp->be);
}

/* The ring all-reduce of `bytes` (rounded down to whole chunks) in place, as tacos-run times a size: one
 * engine and one set of buffers, tacos-run's default untimed warm-up runs (TC_EXEC_WARMUP_DEFAULT: with one,
 * a launch timed the way tacos-run times by default ran its smallest sizes 10-25% faster than the file
 * priced them), then `reps` repetitions of `iters` runs back to
 * back after a barrier (tacos-run -n: no barrier between them), each repetition the slowest rank's mean
 * run, into times[stride * i]; *used the bytes. */
static tc_status copy_path_time(copy_path *cp, MPI_Comm comm, uint64_t bytes, int reps, int iters, double *times,
                                size_t stride, uint64_t *used)
{
    const int C = cp->m->nchunksperloop;
    size_t chunk = (size_t)(bytes / sizeof(float)) / (size_t)C;
    if (chunk == 0)
        chunk = 1;
    const size_t T = chunk * (size_t)C, s_elems = (size_t)cp->plan->buf_chunks[2] * chunk;
    tc_exec_run_opts ro = {TC_DT_FLOAT32, TC_RED_SUM, chunk, 60, 2, cp->idle_sleep, 0, 0};
    tc_exec_engine *eng = NULL;
    /* the buffers as tacos-run allocates them (the backend's page-aligned host memory, or device memory
     * with --device cuda), zeros */
    void *(*alloc)(tc_exec_backend *, size_t) = cp->cuda ? cp->be.alloc : cp->be.alloc_host;
    float *a = alloc(&cp->be, T * sizeof *a), *sc = s_elems ? alloc(&cp->be, s_elems * sizeof *sc) : NULL;
    tc_status st = !a || (s_elems && !sc) ? TC_ERR_NOMEM : TC_OK;
    if (!st && cp->cuda) {
        float *z = calloc(T > s_elems ? T : s_elems, sizeof *z);
        if (!z || cp->be.upload(&cp->be, a, z, T * sizeof *a) ||
            (sc && cp->be.upload(&cp->be, sc, z, s_elems * sizeof *sc)))
            st = TC_ERR_NOMEM;
        free(z);
    } else if (!st) {
        memset(a, 0, T * sizeof *a);
        if (sc)
            memset(sc, 0, s_elems * sizeof *sc);
    }
    if (!st)
        st = tc_exec_engine_create(&cp->ctx, cp->plan, &cp->be, comm, &ro, &eng);
    void *bufs[3] = {a, a, sc};
    for (int i = -1; i < reps && !st; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        const int runs = i < 0 ? TC_EXEC_WARMUP_DEFAULT : iters;
        for (int k = 0; k < runs && !st; k++)
            st = tc_exec_engine_run(eng, bufs);
        double t = (MPI_Wtime() - t0) / runs, tmax = 0;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (i >= 0)
            times[stride * (size_t)i] = tmax;
    }
    tc_exec_engine_free(eng);
    void (*release)(tc_exec_backend *, void *) = cp->cuda ? cp->be.release : cp->be.release_host;
    if (a)
        release(&cp->be, a);
    if (sc)
        release(&cp->be, sc);
    *used = (uint64_t)T * sizeof(float);
    return st;
}

static int usage(FILE *f, int rank)
{
    if (rank == 0)
        fputs("usage: mpirun -np N tacos-run --calibrate [-o FILE] [--reps R] [--iters I] [--class NAME] [-b SIZE]\n"
              "                                      [-e SIZE] [--device host|cuda]\n"
              "Measure alpha (8-byte ping-pong) and beta (tacos-run's own replay of a ring all-reduce at every\n"
              "size S from -b to -e, doubling; default 1M to 64M) of the job's link classes: R repetitions\n"
              "(default 7) of I runs back to back (default 5, as tacos-run -n times them), and write a cost\n"
              "file (man 5 tacosc-costs) with the medians: a class line and a size table, one point\n"
              "'CLASS at S/N BANDWIDTH' per size; as comments the spread, each size's beta and the MPI\n"
              "library's raw streaming, every repetition and a warning when the machine changed speed\n"
              "while it ran.  --class names the class of ranks sharing memory (default\n"
              "\"default\"); across nodes the class is \"inter\".  --device cuda replays with the buffers on\n"
              "the GPU, as tacos-run --device cuda (default host).\n",
              f);
    return 2;
}

int tc_exec_calibrate_main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, n = 1, rc = 1;
    MPI_Comm comm, shm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    const char *out = NULL, *cls = "default";
    int reps = 7, iters = 5, cuda = 0;
    uint64_t smin = 1u << 20, smax = 64u << 20;
    for (int i = 2; i < argc; i++) {
        if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
            out = argv[++i];
        else if ((!strcmp(argv[i], "--reps") || !strcmp(argv[i], "--iters")) && i + 1 < argc) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 1 || v > 1000) {
                if (rank == 0)
                    fprintf(stderr, "tacos-run: error: %s '%s' is not an integer from 1 to 1000\n", argv[i], argv[i + 1]);
                rc = 2;
                goto done;
            }
            *(argv[i][2] == 'r' ? &reps : &iters) = (int)v;
            i++;
        } else if (!strcmp(argv[i], "--class") && i + 1 < argc) {
            cls = argv[++i];
            if (!tc_class_name_valid(cls)) { /* the cost file it writes must read back */
                if (rank == 0)
                    fprintf(stderr, "tacos-run: error: --calibrate --class '%s': %s\n", cls, TC_CLASS_NAME_RULE);
                rc = 2;
                goto done;
            }
        }
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            if (strcmp(argv[i + 1], "host") && strcmp(argv[i + 1], "cuda")) {
                if (rank == 0)
                    fprintf(stderr, "tacos-run: error: --calibrate --device: '%s' is not host or cuda\n", argv[i + 1]);
                rc = 2;
                goto done;
            }
            cuda = !strcmp(argv[++i], "cuda");
        }
        else if ((!strcmp(argv[i], "-b") || !strcmp(argv[i], "-e")) && i + 1 < argc) {
            uint64_t *dst = argv[i][1] == 'b' ? &smin : &smax;
            if (tc_parse_size(argv[i + 1], dst) || *dst < 1024 || *dst > (1ull << 32)) {
                if (rank == 0)
                    fprintf(stderr, "tacos-run: error: --calibrate %s: bad size '%s' (1K to 4G)\n", argv[i],
                            argv[i + 1]);
                rc = 2;
                goto done;
            }
            i++;
        }
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, rank);
            rc = 0;
            goto done;
        } else {
            if (rank == 0)
                fprintf(stderr, "tacos-run: error: --calibrate: unexpected argument '%s'\n", argv[i]);
            rc = usage(stderr, rank);
            goto done;
        }
    }
    if (smin > smax) {
        if (rank == 0)
            fprintf(stderr, "tacos-run: error: --calibrate: -b %llu is above -e %llu\n", (unsigned long long)smin,
                    (unsigned long long)smax);
        rc = 2;
        goto done;
    }
    int n_sizes = 0;
    uint64_t sizes[MAX_SIZES];
    for (uint64_t sz = smin; sz <= smax && n_sizes < MAX_SIZES; sz *= 2)
        sizes[n_sizes++] = sz;
    if (n < 2) {
        if (rank == 0)
            fprintf(stderr, "tacos-run: error: --calibrate needs at least 2 ranks (mpirun -np N, N >= 2)\n");
        goto done;
    }
    /* nodes: the lowest world rank of each shared-memory group names it */
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    int leader = rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    int *node = malloc((size_t)n * sizeof *node), *order = malloc((size_t)n * sizeof *order);
    const size_t step_max = ((size_t)(sizes[n_sizes - 1] / (uint64_t)n) + 63) & ~(size_t)63;
    float *send = malloc(step_max), *recv = malloc(step_max), *acc = malloc(step_max);
    double *v = malloc((size_t)reps * (2 + 4 * (size_t)n_sizes) * sizeof *v);
    if (!node || !order || !send || !recv || !acc || !v) {
        fprintf(stderr, "tacos-run: error: out of memory\n");
        MPI_Abort(comm, 1);
    }
    MPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, comm);
    int nodes = 0, intra_peer = -1, inter_peer = -1;
    for (int r = 0; r < n; r++) {
        nodes += node[r] == r;
        if (r && node[r] == node[0] && intra_peer < 0)
            intra_peer = r;
        if (node[r] != node[0] && inter_peer < 0)
            inter_peer = r;
    }
    /* the ring: ranks grouped by node (each node entered once) */
    int k = 0;
    for (int l = 0; l < n; l++)
        if (node[l] == l)
            for (int r = 0; r < n; r++)
                if (node[r] == l)
                    order[k++] = r;
    int pos = 0;
    for (int i = 0; i < n; i++)
        if (order[i] == rank)
            pos = i;
    const int next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
    for (size_t i = 0; i < step_max / sizeof(float); i++)
        send[i] = (float)((i + (size_t)rank) % 17), acc[i] = 0;
    /* per repetition: alpha in, alpha out; per size: copy, reduce and mean step times */
    double *a_in = v, *a_out = v + reps, *per = v + 2 * reps;
#define STEP(kind, z, i) per[((size_t)(z) * 4 + (kind)) * (size_t)reps + (size_t)(i)]
    pingpong(comm, rank, 0, intra_peer >= 0 ? intra_peer : inter_peer); /* warm-up */
    const int steps = n - 1; /* a ring collective's steps of one phase */
    size_t step_bytes[MAX_SIZES];
    for (int z = 0; z < n_sizes; z++) {
        step_bytes[z] = (size_t)(sizes[z] / (uint64_t)n) & ~(size_t)63;
        if (step_bytes[z] < 64)
            step_bytes[z] = 64;
    }
    /* the copy path: oversubscribed ranks sleep when idle, as tacos-run's default */
    int lsize = 1, over = 0;
    {
        MPI_Comm local;
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
        MPI_Comm_size(local, &lsize);
        MPI_Comm_free(&local);
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int mine = cores > 0 && lsize > cores;
        MPI_Allreduce(&mine, &over, 1, MPI_INT, MPI_MAX, comm);
    }
    copy_path cpath;
    uint64_t used[MAX_SIZES];
    int no_gpu = copy_path_create(&cpath, comm, rank, n, over ? 100 : 0, cuda) == TC_ERR_UNSUPPORTED, any = 0;
    MPI_Allreduce(&no_gpu, &any, 1, MPI_INT, MPI_MAX, comm);
    int have_path = !no_gpu;
    if (any) /* --device cuda without a usable GPU (each such rank said why): every rank exits 1 */
        goto cleanup;
    if (!cpath.plan) {
        fprintf(stderr, "tacos-run: error: --calibrate: cannot build the ring all-reduce replay (rank %d)\n", rank);
        MPI_Abort(comm, 1);
    }
    /* the repetitions go round the sizes (each size an engine, warm-up runs and I timed runs per round), so
     * that every size's median spreads over the whole calibration: on a shared machine the load changes
     * by the second, and measuring one size after the other would give each size its own moment's load */
    for (int i = 0; i < reps; i++)
        for (int z = 0; z < n_sizes; z++)
            if (copy_path_time(&cpath, comm, sizes[z], 1, iters, &STEP(3, z, i), 1, &used[z])) {
                fprintf(stderr, "tacos-run: error: --calibrate: the ring all-reduce replay failed on rank %d\n", rank);
                MPI_Abort(comm, 1);
            }
    /* then the comments' MPI streaming and alpha, after the copy path, which they would otherwise precede
     * with the largest messages: tacos-run's own sweep starts at its smallest size */
    ring_step(comm, next, prev, send, recv, acc, step_bytes[n_sizes - 1], 1, steps); /* warm-up */
    for (int i = 0; i < reps; i++) {
        a_in[i] = intra_peer >= 0 ? pingpong(comm, rank, 0, intra_peer) : 0;
        a_out[i] = inter_peer >= 0 ? pingpong(comm, rank, 0, inter_peer) : 0;
        for (int z = 0; z < n_sizes; z++) {
            STEP(0, z, i) = ring_step(comm, next, prev, send, recv, acc, step_bytes[z], 0, steps);
            STEP(1, z, i) = ring_step(comm, next, prev, send, recv, acc, step_bytes[z], 1, steps);
            STEP(2, z, i) = (STEP(0, z, i) + STEP(1, z, i)) / 2;
        }
    }
    rc = 0;
    if (rank == 0) {
        stat3 ai = stats(a_in, reps), ao = stats(a_out, reps);
        const double a_cls = intra_peer >= 0 ? ai.med : ao.med;
        /* per size: the median step time of each kind, and beta(S) = (mean step - alpha) / bytes */
        stat3 sc[MAX_SIZES], sr[MAX_SIZES], sm[MAX_SIZES], rp[MAX_SIZES];
        double bz[MAX_SIZES], bs[MAX_SIZES], bmin = 0, bmax = 0;
        const int ring_steps = 2 * (n - 1); /* a ring all-reduce: 2(N-1) steps of S/N bytes */
        /* each repetition's replay times in the order they ran (stats sorts them), per size after the first
         * reps slots, which get each repetition's speed (below) */
        double *byrep = malloc((size_t)reps * ((size_t)n_sizes + 1) * sizeof *byrep), *speed = byrep;
        if (!byrep) {
            fprintf(stderr, "tacos-run: error: out of memory\n");
            MPI_Abort(comm, 1);
        }
        for (int z = 0; z < n_sizes; z++)
            for (int i = 0; i < reps; i++)
                byrep[(size_t)reps * (1 + (size_t)z) + (size_t)i] = STEP(3, z, i);
        for (int z = 0; z < n_sizes; z++) {
            sc[z] = stats(&STEP(0, z, 0), reps);
            sr[z] = stats(&STEP(1, z, 0), reps);
            sm[z] = stats(&STEP(2, z, 0), reps);
            rp[z] = stats(&STEP(3, z, 0), reps);
            double t = sm[z].med - a_cls;
            bs[z] = (t > 0 ? t : sm[z].med) / (double)step_bytes[z];
            const double step = rp[z].med / ring_steps, per = (double)used[z] / n;
            bz[z] = (step - a_cls > 0 ? step - a_cls : step) / per;
            if (z == 0 || bz[z] < bmin)
                bmin = bz[z];
            if (z == 0 || bz[z] > bmax)
                bmax = bz[z];
        }
        const double beta = sqrt(bmin * bmax); /* the largest relative error over the sizes, smallest */
        /* the machine's speed per repetition: its replay times over the sizes' medians, their geometric mean
         * (1: as the medians, 2: twice as slow).  The repetitions go round the sizes, so a machine that
         * changes speed while the calibration runs shows here, where each size's median hides it. */
        double s_lo = 0, s_hi = 0;
        for (int i = 0; i < reps; i++) {
            double l = 0;
            for (int z = 0; z < n_sizes; z++)
                l += log(byrep[(size_t)reps * (1 + (size_t)z) + (size_t)i] / rp[z].med);
            speed[i] = exp(l / n_sizes);
            if (i == 0 || speed[i] < s_lo)
                s_lo = speed[i];
            if (i == 0 || speed[i] > s_hi)
                s_hi = speed[i];
        }
        const int drift = s_hi > CAL_DRIFT * s_lo;
        if (drift)
            fprintf(stderr, "tacos-run: warning: --calibrate: the repetitions took from %.2f to %.2f times the medians' "
                            "time: the machine changed speed during the calibration (its load, or a VM's host), "
                            "so the file prices no one moment of it; calibrate again while it holds "
                            "still\n", s_lo, s_hi);
        char host[256] = "?";
        gethostname(host, sizeof host - 1);
        char tmp[4200];
        FILE *f = stdout;
        if (out) {
            snprintf(tmp, sizeof tmp, "%s.tmp%d", out, (int)getpid());
            if (!(f = fopen(tmp, "w"))) {
                fprintf(stderr, "tacos-run: error: cannot write '%s'\n", out);
                rc = 1;
            }
        }
        if (!rc) {
            fprintf(f, "# tacos-run --calibrate on %s: %d ranks on %d node%s, %d repetitions (median; spread "
                       "smallest..largest)\n", host, n, nodes, nodes == 1 ? "" : "s", reps);
            if (intra_peer >= 0)
                fprintf(f, "# alpha inside a node: 8-byte ping-pong 0<->%d, half round trip %.4f us (%.4f..%.4f)\n",
                        intra_peer, ai.med * 1e6, ai.lo * 1e6, ai.hi * 1e6);
            if (inter_peer >= 0)
                fprintf(f, "# alpha across nodes: 8-byte ping-pong 0<->%d, half round trip %.4f us (%.4f..%.4f)\n",
                        inter_peer, ao.med * 1e6, ao.lo * 1e6, ao.hi * 1e6);
            fprintf(f, "# MPI streaming: every rank at once sends S/%d bytes to the next rank of the ring (MPI_Sendrecv), "
                       "%d step%s back to back; per size S the median step time (us) of a copy step and of a reduce "
                       "step (float32 sum), and (their mean - alpha) / (S/%d) as a bandwidth:\n",
                    n, steps, steps == 1 ? "" : "s", n);
            for (int z = 0; z < n_sizes; z++)
                fprintf(f, "#   S %10llu: copy %.1f (%.1f..%.1f), reduce %.1f (%.1f..%.1f), %.4f GB/s\n",
                        (unsigned long long)sizes[z], sc[z].med * 1e6, sc[z].lo * 1e6, sc[z].hi * 1e6,
                        sr[z].med * 1e6, sr[z].lo * 1e6, sr[z].hi * 1e6, 1e-9 / bs[z]);
            fprintf(f, "# beta: the copy path, tacosc's ring all-reduce (fc %d, one chunk per rank, in place) replayed by "
                       "tacos-run's engine; per size S its median time (us) and beta(S) = (time / %d steps - alpha) / "
                       "(S/%d) as a bandwidth%s:\n",
                    n, ring_steps, n, cuda ? " (buffers on the GPU: --device cuda)" : "");
            for (int z = 0; z < n_sizes; z++) {
                fprintf(f, "#   replay S %10llu: %.1f (%.1f..%.1f), %.*f GB/s; by repetition", (unsigned long long)used[z],
                        rp[z].med * 1e6, rp[z].lo * 1e6, rp[z].hi * 1e6, bw_prec(1e-9 / bz[z]), 1e-9 / bz[z]);
                for (int i = 0; i < reps; i++)
                    fprintf(f, " %.2f", byrep[(size_t)reps * (1 + (size_t)z) + (size_t)i] * 1e6);
                fputc('\n', f);
            }
            fprintf(f, "#   the class's beta: the geometric mean of the smallest and largest, %.4f GB/s (from %.4f to "
                       "%.4f: within %.0f%% of every size's)\n",
                    1e-9 / beta, 1e-9 / bmax, 1e-9 / bmin, 100 * (sqrt(bmax / bmin) - 1));
            fprintf(f, "# each repetition against the medians (its replay times over them, geometric mean over the "
                       "sizes; 1.25: 25%% slower):");
            for (int i = 0; i < reps; i++)
                fprintf(f, " %.4f", speed[i]);
            fprintf(f, "\n");
            if (drift)
                fprintf(f, "# warning: the repetitions took from %.2f to %.2f times the medians' time (more than %.1fx "
                           "apart): the machine changed speed during the calibration; calibrate again while it holds "
                           "still\n", s_lo, s_hi, CAL_DRIFT);
            fprintf(f, "# the size table: beta(S) at the bytes of one replay step, S/%d (man 5 tacosc-costs: linear in "
                       "log2 of the bytes between points, the end points beyond); the class line scales links of their own beta\n", n);
            const char *names[3] = {cls, "intra", "inter"};
            const double alphas[3] = {a_cls, a_cls, ao.med};
            for (int c = 0; c < (nodes > 1 ? 3 : 1); c++) {
                fprintf(f, "%-10s %.4f us %.*f GB/s%s\n", names[c], alphas[c] * 1e6, bw_prec(1e-9 / beta), 1e-9 / beta,
                        c == 2 ? "   # the ring crosses nodes: its beta is the slowest hop's" : "");
                for (int z = 0; z < n_sizes; z++)
                    if (z == 0 || used[z] / (uint64_t)n > used[z - 1] / (uint64_t)n)
                        fprintf(f, "%-10s at %llu %.*f GB/s\n", names[c], (unsigned long long)(used[z] / (uint64_t)n),
                                bw_prec(1e-9 / bz[z]), 1e-9 / bz[z]);
            }
            if (out) {
                if (fclose(f) || rename(tmp, out)) {
                    fprintf(stderr, "tacos-run: error: cannot write '%s'\n", out);
                    remove(tmp);
                    rc = 1;
                } else
                    fprintf(stderr, "tacos-run: wrote %s\n", out);
            }
        }
        free(byrep);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
cleanup:
    free(node);
    free(order);
    free(send);
    free(recv);
    free(acc);
    free(v);
    if (have_path)
        copy_path_free(&cpath);
#undef STEP
done:
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return rc;
}
