/* tacos-run --calibrate: alpha and beta of the link classes the job's ranks actually have, measured.
 *
 *   mpirun -np N tacos-run --calibrate [-o FILE] [--reps R] [--class NAME]
 *
 * Classes: ranks sharing memory (MPI_Comm_split_type MPI_COMM_TYPE_SHARED) talk over the class NAME
 * (default "default"); with several nodes the ranks of different nodes talk over "inter", and the
 * file has "intra" as well (the same values as NAME).
 * alpha: ping-pong of 8 bytes between rank 0 and a peer of the class (rank 1 inside a node, the first rank
 *   of another node across), 200 round trips per repetition, half the mean round trip.
 * beta: streaming over the whole job as a ring collective loads it: every rank sends S/N bytes to the
 *   next rank of the ring and receives as many from the previous one at once (MPI_Sendrecv), N - 1 such
 *   steps back to back (one phase of a ring collective of S bytes), timed per step at S = 1 MiB and
 *   16 MiB; beta = (t(16 MiB / N) - t(1 MiB / N)) / (15 MiB / N).  Two kinds of step, as a ring all-reduce
 *   has as many of each: a copy step (receive into place) and a reduce step (receive, then sum float32
 *   into the local buffer); the class's beta is their mean, both are written as comments.  Across nodes the ring
 *   is ordered so that each node is entered once (the slowest hop rules a ring step).
 * Each measurement is repeated R times (default 7), after one untimed warm-up; the file gets the median
 * and, as comments, the spread (smallest and largest).  Rank 0 writes the file (stdout without -o); a
 * regular file is written through a temporary file renamed into place.
 */
#include "calibrate.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_ITERS 200
#define S_SMALL (1u << 20)
#define S_BIG (16u << 20)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
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

static int usage(FILE *f, int rank)
{
    if (rank == 0)
        fputs("usage: mpirun -np N tacos-run --calibrate [-o FILE] [--reps R] [--class NAME]\n"
              "Measure alpha (8-byte ping-pong) and beta (ring streaming of copy and reduce steps) of the\n"
              "job's link classes, R repetitions each (default 7), and write a cost file (man 5 tacosc-costs)\n"
              "with the medians and, as comments, the spread.  --class names the class of ranks sharing\n"
              "memory (default \"default\"); across nodes the class is \"inter\".\n",
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
    int reps = 7;
    for (int i = 2; i < argc; i++) {
        if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000) {
                if (rank == 0)
                    fprintf(stderr, "tacos-run: error: --reps '%s' is not an integer from 1 to 1000\n", argv[i]);
                rc = 2;
                goto done;
            }
            reps = (int)v;
        } else if (!strcmp(argv[i], "--class") && i + 1 < argc)
            cls = argv[++i];
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
    float *send = malloc(S_BIG), *recv = malloc(S_BIG), *acc = malloc(S_BIG);
    double *v = malloc((size_t)reps * 6 * sizeof *v);
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
    for (size_t i = 0; i < S_BIG / sizeof(float); i++)
        send[i] = (float)((i + (size_t)rank) % 17), acc[i] = 0;
    double *a_in = v, *a_out = v + reps, *cp = v + 2 * reps, *rd = v + 3 * reps, *bt = v + 4 * reps;
    pingpong(comm, rank, 0, intra_peer >= 0 ? intra_peer : inter_peer); /* warm-up */
    const int steps = n - 1; /* a ring collective's steps of one phase */
    const size_t s_small = S_SMALL / (size_t)n & ~(size_t)63, s_big = S_BIG / (size_t)n & ~(size_t)63;
    ring_step(comm, next, prev, send, recv, acc, s_big, 1, steps);
    for (int i = 0; i < reps; i++) {
        a_in[i] = intra_peer >= 0 ? pingpong(comm, rank, 0, intra_peer) : 0;
        a_out[i] = inter_peer >= 0 ? pingpong(comm, rank, 0, inter_peer) : 0;
        double c1 = ring_step(comm, next, prev, send, recv, acc, s_small, 0, steps);
        double c2 = ring_step(comm, next, prev, send, recv, acc, s_big, 0, steps);
        double r1 = ring_step(comm, next, prev, send, recv, acc, s_small, 1, steps);
        double r2 = ring_step(comm, next, prev, send, recv, acc, s_big, 1, steps);
        cp[i] = (c2 - c1) / (double)(s_big - s_small);
        rd[i] = (r2 - r1) / (double)(s_big - s_small);
        bt[i] = (cp[i] + rd[i]) / 2;
    }
    rc = 0;
    if (rank == 0) {
        stat3 ai = stats(a_in, reps), ao = stats(a_out, reps), sc = stats(cp, reps), sr = stats(rd, reps),
              sb = stats(bt, reps);
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
            fprintf(f, "# beta: ring streaming of every rank at once, %d steps back to back, per step "
                       "(t(16 MiB/%d) - t(1 MiB/%d)) / (15 MiB/%d):\n", steps, n, n, n);
            fprintf(f, "#   copy step %.4f GB/s (%.4f..%.4f), reduce step (float32 sum) %.4f GB/s (%.4f..%.4f)\n",
                    1e-9 / sc.med, 1e-9 / sc.hi, 1e-9 / sc.lo, 1e-9 / sr.med, 1e-9 / sr.hi, 1e-9 / sr.lo);
            fprintf(f, "#   the class's beta: their mean (a ring all-reduce has as many of each), %.4f GB/s "
                       "(%.4f..%.4f)\n", 1e-9 / sb.med, 1e-9 / sb.hi, 1e-9 / sb.lo);
            const double a_cls = intra_peer >= 0 ? ai.med : ao.med;
            fprintf(f, "%-10s %.4f us %.4f GB/s\n", cls, a_cls * 1e6, 1e-9 / sb.med);
            if (nodes > 1) {
                fprintf(f, "%-10s %.4f us %.4f GB/s\n", "intra", a_cls * 1e6, 1e-9 / sb.med);
                fprintf(f, "%-10s %.4f us %.4f GB/s   # the ring crosses nodes: its beta is the slowest hop's\n",
                        "inter", ao.med * 1e6, 1e-9 / sb.med);
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
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    free(node);
    free(order);
    free(send);
    free(recv);
    free(acc);
    free(v);
done:
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return rc;
}
