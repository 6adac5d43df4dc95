/*
 * tacos-run: replay an MSCCL XML program or a tacosc JSON schedule on MPI ranks, verify the result
 * against the MPI library's own collective and time it over a size sweep, nccl-tests style.
 *
 *   mpirun -np 8 tacos-run plan.xml --check -b 1K -e 64M -f 4
 *
 * Sizes.  A size S (bytes) is the nccl-tests "size": the full buffer of T = S / sizeof(type) elements,
 * i.e. the per-rank buffer of all-reduce, broadcast and reduce, the output of all-gather and gather, the
 * input of reduce-scatter and scatter, each rank's buffer of all-to-all.  The program's chunk is
 * T / nchunksperloop elements (for all-gather, reduce-scatter and all-to-all T = count x ngpus, as in the
 * MSCCL runtimes), so T is rounded down to a multiple of nchunksperloop (and of ngpus when the collective
 * splits T across ranks); the header says so and the table prints the sizes actually used.
 *
 * In place.  all-reduce, all-to-all, broadcast, reduce: i and o are one buffer; all-gather and gather:
 * i = o + rank x T/ngpus; reduce-scatter and scatter: o = i + rank x T/ngpus (the NCCL conventions).
 * Rooted collectives use the plan's root: a JSON schedule's, --root for MSCCL XML (which carries none),
 * else the one the program implies (tc_msccl_root).
 *
 * Loading.  Rank 0 reads the plan (MSCCL XML streaming, or JSON lowered to thread blocks), verifies it
 * whole, and sends every other rank only its own <gpu> section: no rank but 0 reads the file, and rank 0
 * keeps only its own section once the others have theirs.
 *
 * Sparse (--sparsity S, or a JSON plan annotated by tacosc --sparsity): inputs have each element zeroed
 * with probability S (fresh positions per replay, from the printed seed); the plan's sparse messages travel
 * as header and payload (replay.c).  Every size is timed twice on the same inputs, the plan with all its
 * messages dense and with its sparse formats, each iteration restoring the input (untimed) between a
 * barrier before and a timed barrier after it, as SpCCL measures (paper §VI-A); the table adds the dense
 * time, the speedup and the bytes on the wire over dense.  A sparse message that does not decode fails the
 * replay on every rank with one message, after all of them finished it.
 *
 * Only main() prints: tables on rank 0's stdout; an error once, on rank 0's stderr (an error of another
 * rank is sent to rank 0 to print); every rank exits with the same status.
 */
#include "exec.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>

#include "calibrate.h"
#include "predict.h"
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"

typedef struct opts {
    const char *plan;
    uint64_t minbytes, maxbytes;
    double factor;
    int iters, warmup;
    tc_dtype dtype;
    tc_redop op;
    int check;       /* checked replays per size and placement (0: none) */
    int root;        /* --root, -1 when not given */
    int cuda;        /* 1 cuda, 2 host-staged */
    int accept_legacy;
    int mpi_ref;
    int have_seed;
    uint64_t seed;
    double timeout;
    int prepost;
    int idle_sleep;  /* microseconds */
    int modes;       /* bit 0 out-of-place, bit 1 in-place */
    int corrupt;     /* self-test of --check: damage this many output elements on rank 0 */
    int verbose;
    double sparsity; /* --sparsity: fraction of input elements zeroed (-1: not given) */
    int corrupt_sparse; /* self-test: rank 0 damages every sparse message it sends */
    const char *topo, *costs; /* --topo, --costs: price the plan with tacosc's event model (predict.c) */
} opts;

enum { MODE_OOP = 1, MODE_IP = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np N tacos-run PLAN [options]\n"
            "Replay an MSCCL XML program, an MSCCL++ execution plan or a tacosc JSON schedule on N MPI ranks,\n"
            "check and time it (the format is told by content).\n"
            "\n"
            "  -b, --minbytes SIZE     smallest size (default 32M); K, M, G suffixes are powers of 1024\n"
            "  -e, --maxbytes SIZE     largest size (default: minbytes)\n"
            "  -f, --stepfactor F      multiply the size by F between rows (default 2)\n"
            "  -n, --iters N           timed iterations per size (default 20)\n"
            "  -w, --warmup N          untimed iterations first (default 5)\n"
            "  -d, --datatype TYPE     float32 (default), float64, int32, bfloat16, float16\n"
            "  -o, --op OP             sum (default), prod, min, max\n"
            "  -c, --check [N]         N replays per size and placement (default 1; 0 = none) with fresh random\n"
            "                          inputs, compared with the MPI library's collective (#wrong)\n"
            "      --root R            root of broadcast, reduce, gather, scatter (MSCCL XML carries none;\n"
            "                          default: a JSON plan's root, else the gpu the program implies)\n"
            "  -g, --ngpus 1           GPUs per rank (nccl-tests; tacos-run drives one per rank)\n"
            "  -t, --nthreads 1        threads per rank (nccl-tests; tacos-run uses one)\n"
            "      --seed N            base seed of --check inputs (default: from the clock, printed)\n"
            "      --mpi               also time the MPI library's collective and print the busbw ratio\n"
            "      --mode MODE         both (default), out-of-place or in-place (only those the plan has)\n"
            "      --device DEV        host (default), cuda, or host-staged (host memory, every message\n"
            "                          staged as for CUDA without CUDA-aware MPI)\n"
            "      --accept-legacy     replay MSCCL files lacking attributes NCCL and RCCL require\n"
            "      --timeout S         give up after S seconds without progress (default 60, 0 = never)\n"
            "      --prepost N         receives posted ahead per thread block (default 2)\n"
            "      --idle-sleep US     when a rank cannot progress, sleep US microseconds between polls\n"
            "                          instead of only yielding (default: 100 when ranks outnumber the\n"
            "                          cores of their node, else 0)\n"
            "      --corrupt N         self-test of --check: damage N output elements on rank 0 after each\n"
            "                          replay, so #wrong must read N\n"
            "      --sparsity S        zero each input element with probability S (0 to 1; fresh positions per\n"
            "                          replay, seed printed); a plan annotated by tacosc --sparsity sends its\n"
            "                          sparse messages as such; each size is also timed with every message\n"
            "                          dense: columns dense (us), speedup and wire (bytes sent over dense)\n"
            "      --corrupt-sparse    self-test: rank 0 damages every sparse message it sends, so the replay\n"
            "                          must fail on every rank\n"
            "      --topo FILE         the topology the plan was made for: tacosc's event model prices the\n"
            "                          plan at every size, printed beside the measured time with the ratio\n"
            "                          measured / predicted (default: a JSON plan's stored prediction, at\n"
            "                          its own size only); a sparse plan's table also gets p-speedup,\n"
            "                          tacosc's predicted sparse speedup beside the measured one\n"
            "      --costs FILE        the cost file for --topo (man 5 tacosc-costs; default: the topology's)\n"
            "  -v, --verbose           print the plan summary of every rank\n"
            "      --calibrate         (first argument) measure alpha and beta, write a cost file instead\n"
            "                          (tacos-run --calibrate --help)\n"
            "  -h, --help              this text\n"
            "  -V, --version           version\n"
            "\n"
            "Columns: size (B), count (elements per MPI call), type, redop, then for out-of-place and in-place\n"
            "time (us, slowest rank), algbw = size/time (GB/s), busbw = algbw x the collective's factor\n"
            "(all-reduce 2(n-1)/n, all-gather, reduce-scatter, all-to-all (n-1)/n, others 1) and #wrong.\n"
            "Exit status: 0 success, 1 refused plan, failed replay or #wrong > 0, 2 usage error.\n");
}

/* Parse the command line; returns 0, or 2 after printing (when print) a usage error, or -1 for
 * --help/--version handled. */
static int parse_args(int argc, char **argv, opts *o, int print)
{
    static const struct option lo[] = {
        {"minbytes", required_argument, 0, 'b'}, {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'}, {"iters", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'},  {"warmup_iters", required_argument, 0, 'w'},
        {"datatype", required_argument, 0, 'd'}, {"op", required_argument, 0, 'o'},
        {"check", optional_argument, 0, 'c'},    {"seed", required_argument, 0, 1},
        {"root", required_argument, 0, 10},      {"ngpus", required_argument, 0, 'g'},
        {"nthreads", required_argument, 0, 't'},
        {"mpi", no_argument, 0, 2},               {"device", required_argument, 0, 3},
        {"accept-legacy", no_argument, 0, 4},     {"timeout", required_argument, 0, 5},
        {"prepost", required_argument, 0, 6},     {"mode", required_argument, 0, 7},
        {"idle-sleep", required_argument, 0, 9},
        {"verbose", no_argument, 0, 'v'},         {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},         {"corrupt", required_argument, 0, 8},
        {"sparsity", required_argument, 0, 11},   {"corrupt-sparse", no_argument, 0, 12},
        {"topo", required_argument, 0, 13},       {"costs", required_argument, 0, 14},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    o->minbytes = 32u << 20;
    o->factor = 2;
    o->iters = 20;
    o->warmup = TC_EXEC_WARMUP_DEFAULT;
    o->timeout = 60;
    o->prepost = 2;
    o->idle_sleep = -1; /* automatic */
    o->modes = MODE_OOP | MODE_IP;
    o->root = -1;
    o->sparsity = -1;
    int have_max = 0, c;
    char *end;
    opterr = 0;
    optind = 1;
#define BAD(...)                                                                                      \
    do {                                                                                              \
        if (print) {                                                                                  \
            fprintf(stderr, "tacos-run: error: " __VA_ARGS__);                                        \
            fprintf(stderr, "\n(tacos-run --help lists the options)\n");                              \
        }                                                                                             \
        return 2;                                                                                     \
    } while (0)
    while ((c = getopt_long(argc, argv, "b:e:f:n:w:d:o:c:g:t:vhV", lo, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (tc_parse_size(optarg, &o->minbytes) || o->minbytes == 0)
                BAD("-b: bad size '%s'", optarg);
            break;
        case 'e':
            if (tc_parse_size(optarg, &o->maxbytes))
                BAD("-e: bad size '%s'", optarg);
            have_max = 1;
            break;
        case 'f':
            if (tc_parse_decimal(optarg, &end, &o->factor) || *end || !(o->factor > 1))
                BAD("-f: the step factor must be a number above 1, not '%s'", optarg);
            break;
        case 'n':
        case 'w': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < (c == 'n' ? 1 : 0) || v > 1000000)
                BAD("-%c: bad iteration count '%s'", c, optarg);
            *(c == 'n' ? &o->iters : &o->warmup) = (int)v;
            break;
        }
        case 'd':
            if (tc_exec_dtype_parse(optarg, &o->dtype))
                BAD("-d: unknown data type '%s' (float32, float64, int32, bfloat16, float16)", optarg);
            break;
        case 'o':
            if (tc_exec_redop_parse(optarg, &o->op))
                BAD("-o: unknown reduction '%s' (sum, prod, min, max)", optarg);
            break;
        case 'c': {
            /* -c N as nccl-tests; --check alone is 1; --check N (a separate number) is accepted too */
            const char *v = optarg;
            if (!v && optind < argc && argv[optind][0] && strspn(argv[optind], "0123456789") == strlen(argv[optind]))
                v = argv[optind++];
            long x = v ? strtol(v, &end, 10) : 1;
            if (v && (*end || !*v || x < 0 || x > 1000000))
                BAD("-c: bad check count '%s' (0 = no check, N = that many checked replays)", v);
            o->check = (int)x;
            break;
        }
        case 'g':
        case 't': {
            long x = strtol(optarg, &end, 10);
            if (*end || x != 1)
                BAD("-%c %s: tacos-run drives one %s per rank (start one rank per GPU: mpirun -np N)", c, optarg,
                    c == 'g' ? "GPU" : "thread");
            break;
        }
        case 10: {
            long x = strtol(optarg, &end, 10);
            if (*end || !*optarg || x < 0 || x > INT_MAX)
                BAD("--root: bad rank '%s'", optarg);
            o->root = (int)x;
            break;
        }
        case 1:
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (*end || errno || end == optarg || !isdigit((unsigned char)optarg[0])) /* strtoull takes "-1" */
                BAD("--seed: '%s' is not a non-negative integer", optarg);
            o->have_seed = 1;
            break;
        case 2: o->mpi_ref = 1; break;
        case 3:
            if (!strcmp(optarg, "cuda"))
                o->cuda = 1;
            else if (!strcmp(optarg, "host-staged"))
                o->cuda = 2;
            else if (strcmp(optarg, "host"))
                BAD("--device: unknown device '%s' (host, host-staged, cuda)", optarg);
            break;
        case 4: o->accept_legacy = 1; break;
        case 5:
            /* a decimal number of seconds (0 = no watchdog): nan, inf, hex and an empty value are refused */
            if (tc_parse_decimal(optarg, &end, &o->timeout) || *end || !(o->timeout >= 0) || o->timeout > 1e6)
                BAD("--timeout: bad number of seconds '%s' (0 turns the watchdog off; at most 1e6)", optarg);
            break;
        case 6: {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 64)
                BAD("--prepost: bad count '%s' (0..64)", optarg);
            o->prepost = (int)v;
            break;
        }
        case 7:
            if (!strcmp(optarg, "both"))
                o->modes = MODE_OOP | MODE_IP;
            else if (!strcmp(optarg, "out-of-place") || !strcmp(optarg, "oop"))
                o->modes = MODE_OOP;
            else if (!strcmp(optarg, "in-place") || !strcmp(optarg, "ip"))
                o->modes = MODE_IP;
            else
                BAD("--mode: unknown mode '%s' (both, out-of-place, in-place)", optarg);
            break;
        case 8: {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > INT_MAX)
                BAD("--corrupt: bad count '%s'", optarg);
            o->corrupt = (int)v;
            break;
        }
        case 9: {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 100000)
                BAD("--idle-sleep: bad number of microseconds '%s' (0..100000)", optarg);
            o->idle_sleep = (int)v;
            break;
        }
        case 11:
            if (tc_parse_decimal(optarg, &end, &o->sparsity) || *end || !(o->sparsity >= 0 && o->sparsity <= 1))
                BAD("--sparsity: '%s' is not a number from 0 to 1", optarg);
            break;
        case 12: o->corrupt_sparse = 1; break;
        case 13: o->topo = optarg; break;
        case 14: o->costs = optarg; break;
        case 'v': o->verbose = 1; break;
        case 'h':
            if (print)
                usage(stdout);
            return -1;
        case 'V':
            if (print)
                printf("tacos-run %s\n", TC_VERSION);
            return -1;
        default:
            if (optopt)
                BAD("option -%c: unknown or missing its argument", optopt);
            BAD("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        BAD("%s", optind >= argc ? "no PLAN given" : "more than one PLAN given");
    o->plan = argv[optind];
    if (have_max && o->maxbytes < o->minbytes)
        BAD("-b %" PRIu64 " is above -e %" PRIu64 ": the smallest size must not exceed the largest", o->minbytes,
            o->maxbytes);
    if (!have_max)
        o->maxbytes = o->minbytes;
    if (o->costs && !o->topo)
        BAD("--costs %s: give the topology too (--topo FILE): the costs price the plan on it", o->costs);
    return 0;
#undef BAD
}

/* ---- diagnostics --------------------------------------------------------------------------------- */

typedef struct sink_state {
    int rank;
    tc_buf held;     /* errors of a rank other than 0, until report() hands them to rank 0 */
    int direct;      /* print errors directly (a failing replay aborts without a report) */
} sink_state;

static void print_diag(FILE *f, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    const char *lv = level == TC_DIAG_ERROR ? "error" : level == TC_DIAG_WARNING ? "warning" : "note";
    if (file && line > 0 && col > 0)
        fprintf(f, "%s:%d:%d: %s: %s\n", file, line, col, lv, msg);
    else if (file && line > 0)
        fprintf(f, "%s:%d: %s: %s\n", file, line, lv, msg);
    else if (file)
        fprintf(f, "%s: %s: %s\n", file, lv, msg);
    else
        fprintf(f, "tacos-run: %s: %s\n", lv, msg);
}

/* Rank 0 prints; another rank keeps its errors for report() and drops warnings and notes. */
static void exec_sink(void *user, tc_diag_level level, const char *file, int line, int col, const char *msg)
{
    sink_state *s = user;
    if (s->rank == 0 || (s->direct && level == TC_DIAG_ERROR)) {
        print_diag(stderr, level, file, line, col, msg);
        return;
    }
    if (level != TC_DIAG_ERROR)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        print_diag(f, level, file, line, col, msg);
        fclose(f);
        tc_buf_printf(&s->held, "%s", text);
        free(text);
    }
}

/* Every rank learns whether every rank succeeded; when one failed, the lowest failing rank's errors are
 * printed once, by rank 0 (its own are already out).  Returns the status every rank exits with. */
static tc_status report(sink_state *ss, MPI_Comm comm, tc_status st)
{
    int mine = (int)st, all = 0, cand = st ? ss->rank : INT_MAX, first = INT_MAX;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all) {
        MPI_Allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, comm);
        if (first != 0 && first != INT_MAX) {
            if (ss->rank == first) {
                int len = ss->held.data ? (int)strlen(ss->held.data) : 0;
                MPI_Send(&len, 1, MPI_INT, 0, 7, comm);
                if (len)
                    MPI_Send(ss->held.data, len, MPI_CHAR, 0, 8, comm);
            } else if (ss->rank == 0) {
                int len = 0;
                MPI_Recv(&len, 1, MPI_INT, first, 7, comm, MPI_STATUS_IGNORE);
                char *text = calloc((size_t)len + 1, 1);
                if (len && text)
                    MPI_Recv(text, len, MPI_CHAR, first, 8, comm, MPI_STATUS_IGNORE);
                if (text && *text)
                    fputs(text, stderr);
                else
                    fprintf(stderr, "tacos-run: error: rank %d failed\n", first);
                free(text);
            }
        }
    }
    tc_buf_free(&ss->held);
    return (tc_status)all;
}

/* ---- loading ------------------------------------------------------------------------------------- */

enum { ROOT_NONE = 0, ROOT_PLAN, ROOT_OPTION, ROOT_IMPLIED };

/* Rank 0: the whole plan (MSCCL XML read streaming, or a JSON schedule lowered to one program for both
 * placements), checked against the rank count, --root applied, verified.  *root_src says where the
 * root comes from. */
static tc_status load_plan(tc_ctx *ctx, const opts *o, int n, tc_msccl **out, int *root_src)
{
    tc_format fmt;
    tc_msccl *m = NULL;
    int from_json = 0;
    tc_status st = tc_sched_sniff(ctx, o->plan, &fmt);
    if (st)
        return st;
    if (fmt == TC_FMT_JSON) {
        tc_sched *s = NULL;
        from_json = 1;
        st = tc_emit_json_read(ctx, o->plan, &s);
        if (!st) /* what tacosc verify checks first: its errors name the transfer and its line; a plan it
                    refuses is not replayed */
            st = tc_sched_verify(ctx, s, NULL, o->plan);
        if (!st)
            st = tc_exec_sparse_dtype(ctx, o->plan, s, o->dtype); /* sizes of another type: re-decide */
        if (!st) {
            tc_msccl_lower_opts lo;
            tc_msccl_lower_opts_init(&lo);
            lo.target = TC_TARGET_EXEC;
            lo.inplace = lo.outofplace = 1;
            lo.sparse = 1; /* the plan's sparse formats, step by step */
            st = tc_msccl_lower(ctx, s, &lo, &m);
        }
        tc_sched_free(s);
    } else {
        st = tc_msccl_read(ctx, o->plan, &m);
    }
    if (st)
        goto fail;
    if (m->legacy && !o->accept_legacy) {
        st = tc_error(ctx, TC_ERR_INVALID, o->plan, 0,
                      "legacy MSCCL file (lacks attributes that NCCL and RCCL require); "
                      "pass --accept-legacy to replay it anyway");
        goto fail;
    }
    if (m->ngpus != n) {
        st = tc_error(ctx, TC_ERR_INVALID, o->plan, 0,
                      "the plan is for %d ranks but tacos-run was started on %d (use mpirun -np %d)", m->ngpus, n,
                      m->ngpus);
        goto fail;
    }
    if (!from_json)
        m->root = -1; /* MSCCL XML carries no root */
    *root_src = ROOT_NONE;
    if (tc_coll_rooted(m->coll)) {
        *root_src = m->root >= 0 ? ROOT_PLAN : ROOT_IMPLIED;
        if (o->root >= 0) {
            if (o->root >= n) {
                st = tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--root %d: the plan has ranks 0..%d", o->root, n - 1);
                goto fail;
            }
            if (m->root >= 0 && m->root != o->root) {
                st = tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--root %d, but the schedule's root is %d", o->root, m->root);
                goto fail;
            }
            m->root = o->root;
            if (*root_src != ROOT_PLAN)
                *root_src = ROOT_OPTION;
        }
    } else if (o->root >= 0) {
        tc_warn(ctx, NULL, 0, "--root %d ignored: %s has no root", o->root, tc_coll_name(m->coll));
    }
    tc_msccl_limits lim;
    tc_msccl_limits_get(TC_TARGET_EXEC, &lim);
    if ((st = tc_msccl_verify(ctx, m, &lim, o->plan))) {
        if (*root_src == ROOT_OPTION) {
            m->root = -1;
            if (tc_msccl_root(m) != o->root)
                tc_diag(ctx, TC_DIAG_NOTE, NULL, 0, 0, "--root %d is not the root the program implies (%d)", o->root,
                        tc_msccl_root(m));
        }
        goto fail;
    }
    if (!(m->inplace || m->outofplace)) {
        st = tc_error(ctx, TC_ERR_INVALID, o->plan, 0, "the plan is neither in-place nor out-of-place");
        goto fail;
    }
    m->root = tc_msccl_root(m);
    *out = m;
    return TC_OK;
fail:
    tc_msccl_free(m);
    return st;
}

/* What every rank learns of the plan besides its own <gpu> section. */
typedef struct plan_head {
    int ngpus, nchannels, nchunksperloop, coll, inplace, outofplace, root, root_src, legacy;
    uint64_t min_bytes, max_bytes;
    char proto[8];
    char name[256];
} plan_head;

/* One gpu's section as ints: id, i, o, s chunks, line, tbs; per tb id, send, recv, chan, line, steps;
 * per step the 13 fields of tc_msccl_step. */
static int *pack_gpu(const tc_msccl_gpu *g, int *len)
{
    size_t n = 6;
    for (int t = 0; t < g->n_tbs; t++)
        n += 6 + 13 * (size_t)g->tbs[t].n_steps;
    int *b = malloc(n * sizeof *b), k = 0;
    if (!b || n > INT_MAX) {
        free(b);
        return NULL;
    }
    int head[6] = {g->id, g->i_chunks, g->o_chunks, g->s_chunks, g->line, g->n_tbs};
    memcpy(b, head, sizeof head);
    k = 6;
    for (int t = 0; t < g->n_tbs; t++) {
        const tc_msccl_tb *tb = &g->tbs[t];
        int th[6] = {tb->id, tb->send, tb->recv, tb->chan, tb->line, tb->n_steps};
        memcpy(b + k, th, sizeof th);
        k += 6;
        for (int j = 0; j < tb->n_steps; j++) {
            const tc_msccl_step *x = &tb->steps[j];
            int sv[13] = {x->s,     x->type,   x->srcbuf, x->srcoff,   x->dstbuf,   x->dstoff, x->cnt,
                          x->depid, x->deps,   x->hasdep, x->line, x->fmt_recv, x->fmt_send};
            memcpy(b + k, sv, sizeof sv);
            k += 13;
        }
    }
    *len = k;
    return b;
}

static tc_status unpack_gpu(const int *b, int len, tc_msccl_gpu *g)
{
    if (len < 6)
        return TC_ERR_INTERNAL;
    g->id = b[0];
    g->i_chunks = b[1];
    g->o_chunks = b[2];
    g->s_chunks = b[3];
    g->line = b[4];
    int k = 6;
    for (int t = 0; t < b[5]; t++) {
        if (k + 6 > len)
            return TC_ERR_INTERNAL;
        tc_msccl_tb *tb;
        tc_status st = tc_msccl_tb_add(g, b[k + 1], b[k + 2], b[k + 3], &tb);
        if (st)
            return st;
        tb->id = b[k];
        tb->line = b[k + 4];
        int ns = b[k + 5];
        k += 6;
        if (k + 13L * ns > len)
            return TC_ERR_INTERNAL;
        for (int j = 0; j < ns; j++, k += 13) {
            tc_msccl_step x = {b[k],     b[k + 1], b[k + 2],  b[k + 3],  b[k + 4],  b[k + 5], b[k + 6],
                               b[k + 7], b[k + 8], b[k + 9], b[k + 10], b[k + 11], b[k + 12]};
            if ((st = tc_msccl_step_add(&g->tbs[g->n_tbs - 1], &x)))
                return st;
            g->tbs[g->n_tbs - 1].steps[j].s = x.s;
        }
    }
    return TC_OK;
}

/* Rank 0 has the whole plan in *m: every rank gets the head and its own <gpu> section (ranks other than
 * 0 get a program whose other gpus are empty); rank 0 then drops the sections it sent. */
static tc_status share_plan(tc_ctx *ctx, MPI_Comm comm, int rank, int n, tc_msccl **m, int *root_src)
{
    plan_head h;
    memset(&h, 0, sizeof h);
    if (rank == 0) {
        const tc_msccl *p = *m;
        h = (plan_head){p->ngpus, p->nchannels, p->nchunksperloop, (int)p->coll, p->inplace, p->outofplace,
                        p->root,  *root_src,   p->legacy,         p->min_bytes, p->max_bytes, "", ""};
        snprintf(h.proto, sizeof h.proto, "%s", p->proto);
        snprintf(h.name, sizeof h.name, "%s", p->name ? p->name : "");
    }
    MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 0, comm);
    *root_src = h.root_src;
    tc_status st = TC_OK;
    if (rank == 0) {
        for (int k = 1; k < n; k++) {
            int len = 0, *b = pack_gpu(&(*m)->gpus[k], &len);
            if (!b) {
                len = -1;
                st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "cannot pack the plan of rank %d", k);
            }
            MPI_Send(&len, 1, MPI_INT, k, 5, comm);
            if (b)
                MPI_Send(b, len, MPI_INT, k, 6, comm);
            free(b);
            tc_msccl_gpu *g = &(*m)->gpus[k]; /* sent: rank 0 keeps only its own section */
            for (int t = 0; t < g->n_tbs; t++)
                free(g->tbs[t].steps);
            free(g->tbs);
            g->tbs = NULL;
            g->n_tbs = g->cap_tbs = 0;
            g->i_chunks = g->o_chunks = g->s_chunks = 0; /* as on the ranks that only hold their own */
        }
        return st;
    }
    tc_msccl *p = NULL;
    int len = 0;
    MPI_Recv(&len, 1, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE);
    int *b = len > 0 ? malloc((size_t)len * sizeof *b) : NULL;
    if (len > 0)
        MPI_Recv(b ? b : &len, b ? len : 0, MPI_INT, 0, 6, comm, MPI_STATUS_IGNORE);
    if (len < 0)
        st = tc_error(ctx, TC_ERR_INTERNAL, NULL, 0, "rank 0 could not send this rank's plan");
    else if (!b || (st = tc_msccl_create(h.name, (tc_coll)h.coll, h.ngpus, &p)))
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "rank %d cannot hold its plan", rank);
    if (!st) {
        snprintf(p->proto, sizeof p->proto, "%s", h.proto);
        p->nchannels = h.nchannels;
        p->nchunksperloop = h.nchunksperloop;
        p->inplace = h.inplace;
        p->outofplace = h.outofplace;
        p->root = h.root;
        p->legacy = h.legacy;
        p->min_bytes = h.min_bytes;
        p->max_bytes = h.max_bytes;
        if ((st = unpack_gpu(b, len, &p->gpus[rank])))
            st = tc_error(ctx, st, NULL, 0, "rank %d received a damaged plan", rank);
    }
    free(b);
    if (st) {
        tc_msccl_free(p);
        return st;
    }
    *m = p;
    return TC_OK;
}

/* ---- collective layout ----------------------------------------------------------------------------- */

/* Does the collective split the full buffer T across ranks (T = count x ngpus)? */
static int splits(tc_coll c)
{
    return c == TC_COLL_ALLGATHER || c == TC_COLL_REDUCESCATTER || c == TC_COLL_ALLTOALL || c == TC_COLL_GATHER ||
           c == TC_COLL_SCATTER;
}

static size_t in_elems(tc_coll c, size_t T, int n)
{
    return (c == TC_COLL_ALLGATHER || c == TC_COLL_GATHER) ? T / (size_t)n : T;
}

static size_t out_elems(tc_coll c, size_t T, int n)
{
    return (c == TC_COLL_REDUCESCATTER || c == TC_COLL_SCATTER) ? T / (size_t)n : T;
}

/* Elements per MPI call (the nccl-tests count column). */
static size_t call_count(tc_coll c, size_t T, int n)
{
    return splits(c) ? T / (size_t)n : T;
}

static int is_root_only(tc_coll c) { return c == TC_COLL_REDUCE || c == TC_COLL_GATHER; }

/* Buffers of one mode: allocations a (and b), where i and o start and how many elements follow. */
typedef struct layout {
    size_t a_elems, b_elems;   /* b_elems 0: one allocation */
    int i_in_b, o_in_b;        /* which allocation */
    size_t i_off, o_off;       /* element offsets */
    size_t i_avail, o_avail;   /* elements from the start of i / o to the end of its allocation */
} layout;

static void make_layout(tc_coll c, int mode, size_t T, int n, int rank, layout *L)
{
    size_t ie = in_elems(c, T, n), oe = out_elems(c, T, n), part = T / (size_t)n;
    memset(L, 0, sizeof *L);
    if (mode == MODE_OOP) {
        L->a_elems = ie;
        L->b_elems = oe;
        L->o_in_b = 1;
        L->i_avail = ie;
        L->o_avail = oe;
        return;
    }
    L->a_elems = T;
    if (c == TC_COLL_ALLGATHER || c == TC_COLL_GATHER)
        L->i_off = (size_t)rank * part;
    else if (c == TC_COLL_REDUCESCATTER || c == TC_COLL_SCATTER)
        L->o_off = (size_t)rank * part;
    L->i_avail = T - L->i_off;
    L->o_avail = T - L->o_off;
}

/* ---- MPI reference --------------------------------------------------------------------------------- */

static MPI_Datatype mpi_type(tc_dtype t)
{
    switch (t) {
    case TC_DT_FLOAT64: return MPI_DOUBLE;
    case TC_DT_INT32: return MPI_INT;
    default: return MPI_FLOAT; /* float32, and the float path of bfloat16/float16 */
    }
}

static MPI_Op mpi_op(tc_redop op)
{
    switch (op) {
    case TC_RED_PROD: return MPI_PROD;
    case TC_RED_MIN: return MPI_MIN;
    case TC_RED_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

/* The MPI library's collective on (send, recv) with T elements of `type` (esize bytes each); in place
 * when inplace (then recv holds the data in the layout of make_layout, send is ignored); rooted ones at
 * root. */
static int mpi_coll(tc_coll c, MPI_Datatype type, size_t esize, MPI_Op op, const void *send, void *recv, size_t T,
                    int n, int rank, int root, int inplace, MPI_Comm comm)
{
    int reduces = tc_coll_reduces(c);
    MPI_Datatype dt = reduces ? type : MPI_BYTE;
    size_t scale = reduces ? 1 : esize;
    int cnt = (int)(T * scale), part = (int)(T / (size_t)n * scale);
    const void *sb = inplace ? MPI_IN_PLACE : send;
    switch (c) {
    case TC_COLL_ALLREDUCE: return MPI_Allreduce(sb, recv, cnt, dt, op, comm);
    case TC_COLL_ALLGATHER: return MPI_Allgather(sb, part, dt, recv, part, dt, comm);
    case TC_COLL_REDUCESCATTER:
        if (inplace) /* MPI's in-place result lands at the start of the buffer */
            return MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, part, dt, op, comm);
        return MPI_Reduce_scatter_block(send, recv, part, dt, op, comm);
    case TC_COLL_ALLTOALL: return MPI_Alltoall(sb, part, dt, recv, part, dt, comm);
    case TC_COLL_BROADCAST:
        if (!inplace && rank == root)
            memcpy(recv, send, T * esize);
        return MPI_Bcast(recv, cnt, dt, root, comm);
    case TC_COLL_REDUCE:
        return MPI_Reduce(inplace ? (rank == root ? MPI_IN_PLACE : recv) : send, recv, cnt, dt, op, root, comm);
    case TC_COLL_GATHER:
        if (inplace)
            return MPI_Gather(rank == root ? MPI_IN_PLACE : (char *)recv + (size_t)rank * (size_t)part, part, dt, recv,
                              part, dt, root, comm);
        return MPI_Gather(send, part, dt, recv, part, dt, root, comm);
    case TC_COLL_SCATTER:
        if (inplace)
            return MPI_Scatter(recv, part, dt, rank == root ? MPI_IN_PLACE : (char *)recv + (size_t)rank * (size_t)part,
                               part, dt, root, comm);
        return MPI_Scatter(send, part, dt, recv, part, dt, root, comm);
    default: return MPI_ERR_OP;
    }
}

/* ---- one size -------------------------------------------------------------------------------------- */

typedef struct runner {
    tc_ctx *ctx;
    const opts *o;
    const tc_msccl *m;
    const tc_exec_plan *plan;
    tc_exec_backend *be;
    MPI_Comm comm;
    int rank, n;
    uint64_t seed;
    sink_state *ss;
    int agreed;      /* the failure returned is known to every rank (else the replay aborts) */
    int sparse;      /* sparse mode: --sparsity given or the plan has sparse messages */
    int sparse_plan; /* the plan has sparse messages */
} runner;

typedef struct result {
    int ran;
    double time;       /* seconds, slowest rank */
    int64_t wrong;     /* -1 not checked */
    double dense;      /* sparse mode: the time with every message dense */
    double wire;       /* sparse mode: bytes sent over the dense bytes of the same messages, all ranks */
} result;

/* The input of a timed replay: ones (no denormals, products stay 1), in sparse mode zeroed at the
 * sparsity (positions from seed).  Returns a malloc'd buffer of n elements or NULL. */
static void *timing_input(const opts *o, size_t n, double sparsity, uint64_t seed)
{
    const size_t es = tc_exec_dtype_size(o->dtype);
    void *ones = malloc((n ? n : 1) * es);
    if (!ones)
        return NULL;
    float one = 1.0f;
    for (size_t k = 0; k < n; k++) {
        switch (o->dtype) {
        case TC_DT_FLOAT32: ((float *)ones)[k] = 1.0f; break;
        case TC_DT_FLOAT64: ((double *)ones)[k] = 1.0; break;
        case TC_DT_INT32: ((int32_t *)ones)[k] = 1; break;
        default: tc_exec_from_float(o->dtype, &one, (uint16_t *)ones + k, 1); break;
        }
    }
    if (sparsity > 0)
        tc_exec_sparsify(o->dtype, ones, n, sparsity, seed);
    return ones;
}

/* Sparse mode: `iters` replays (after `warmup` untimed), each on a fresh copy of the input `in` (ie
 * elements, uploaded untimed), between a barrier and a timed barrier; *time the mean of the slowest rank. */
static tc_status time_each(runner *r, tc_exec_engine *eng, void *bufs[3], const void *in, size_t ie, double *time)
{
    const opts *o = r->o;
    const size_t es = tc_exec_dtype_size(o->dtype);
    tc_status st;
    double total = 0;
    for (int k = 0; k < o->warmup + o->iters; k++) {
        r->be->upload(r->be, bufs[0], in, ie * es);
        MPI_Barrier(r->comm);
        double t0 = tc_now();
        if ((st = tc_exec_engine_run(eng, bufs)))
            return st;
        MPI_Barrier(r->comm);
        if (k >= o->warmup)
            total += tc_now() - t0;
    }
    total /= o->iters;
    MPI_Allreduce(&total, time, 1, MPI_DOUBLE, MPI_MAX, r->comm);
    return TC_OK;
}

/* Sparse mode: every rank learns whether a sparse message failed to decode on any rank (the replays all
 * completed); the lowest failing rank's message is printed once. */
static tc_status sparse_agree(runner *r, tc_exec_engine *eng)
{
    tc_status st = report(r->ss, r->comm, tc_exec_engine_soft(eng));
    if (st)
        r->agreed = 1;
    return st;
}

static uint64_t mix_seed(uint64_t base, int rank, int iter, int salt)
{
    return base ^ (0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1)) ^ (0xbf58476d1ce4e5b9ull * (uint64_t)(iter + 1)) ^
           ((uint64_t)salt << 56);
}

/* Allocate the buffers of one mode; bufs[] get i, o, s.  Returns 0 or -1. */
static int alloc_bufs(runner *r, const layout *L, size_t esize, size_t s_elems, void *alloc[3], void *bufs[3])
{
    tc_exec_backend *be = r->be;
    alloc[0] = be->alloc(be, L->a_elems * esize);
    alloc[1] = L->b_elems ? be->alloc(be, L->b_elems * esize) : NULL;
    alloc[2] = s_elems ? be->alloc(be, s_elems * esize) : NULL;
    if (!alloc[0] || (L->b_elems && !alloc[1]) || (s_elems && !alloc[2]))
        return -1;
    bufs[0] = (char *)alloc[L->i_in_b] + L->i_off * esize;
    bufs[1] = (char *)alloc[L->o_in_b] + L->o_off * esize;
    bufs[2] = alloc[2];
    return 0;
}

static void free_bufs(runner *r, void *alloc[3])
{
    for (int k = 0; k < 3; k++)
        if (alloc[k])
            r->be->release(r->be, alloc[k]);
}

/* Flip the leading mantissa bit of the first k elements: a relative change of at least 1/3 (or, for a
 * zero, a nonzero value), beyond every tolerance. */
static void corrupt(tc_dtype t, void *buf, size_t n, size_t k)
{
    for (size_t i = 0; i < n && i < k; i++) {
        switch (t) {
        case TC_DT_FLOAT64: ((uint64_t *)buf)[i] ^= 1ull << 51; break;
        case TC_DT_FLOAT32: ((uint32_t *)buf)[i] ^= 1u << 22; break;
        case TC_DT_INT32: ((uint32_t *)buf)[i] ^= 1u << 30; break;
        case TC_DT_BFLOAT16: ((uint16_t *)buf)[i] ^= 1u << 6; break;
        default: ((uint16_t *)buf)[i] ^= 1u << 9; break;
        }
    }
}

/* Replay one mode at one size: --check pass, warm-up, timed iterations; optionally MPI's own. */
static tc_status run_mode(runner *r, tc_exec_engine *eng, int mode, size_t T, size_t chunk, int iter, result *res,
                          result *mpi_res)
{
    const opts *o = r->o;
    const tc_coll c = r->m->coll;
    const size_t es = tc_exec_dtype_size(o->dtype), ie = in_elems(c, T, r->n), oe = out_elems(c, T, r->n);
    const int small = o->dtype == TC_DT_BFLOAT16 || o->dtype == TC_DT_FLOAT16;
    layout L;
    void *alloc[3] = {0}, *bufs[3] = {0};
    void *h_in = NULL, *h_out = NULL, *h_ref = NULL, *h_tmp = NULL;
    float *f_in = NULL, *f_ref = NULL;
    tc_status st = TC_OK;
    make_layout(c, mode, T, r->n, r->rank, &L);
    int bad = alloc_bufs(r, &L, es, (size_t)r->plan->buf_chunks[2] * chunk, alloc, bufs);
    if ((st = report(r->ss, r->comm,
                     bad ? tc_error(r->ctx, TC_ERR_NOMEM, NULL, 0,
                                    "rank %d cannot allocate the buffers of a %zu-byte %s on %s memory", r->rank,
                                    T * es, tc_coll_name(c), r->be->name)
                         : TC_OK))) {
        free_bufs(r, alloc);
        r->agreed = 1;
        return st;
    }
    res->ran = 1;
    res->wrong = -1;
    if (o->check) {
        size_t all_elems = L.a_elems > L.b_elems ? L.a_elems : L.b_elems;
        h_in = malloc(ie * es);
        h_ref = malloc((small ? sizeof(float) : es) * oe);
        h_out = malloc(oe * es);
        h_tmp = malloc(all_elems * es);
        if (small && tc_coll_reduces(c)) {
            f_in = malloc(ie * sizeof *f_in);
            if (!f_in)
                bad = 1;
        }
        bad |= !h_in || !h_ref || !h_out || !h_tmp;
        if ((st = report(r->ss, r->comm,
                         bad ? tc_error(r->ctx, TC_ERR_NOMEM, NULL, 0, "rank %d cannot allocate the --check buffers",
                                        r->rank)
                             : TC_OK))) {
            r->agreed = 1;
            goto done;
        }
        res->wrong = 0;
    }
    /* o->check replays with fresh inputs, each compared with the MPI library's result */
    for (int k = 0; k < o->check; k++) {
        int it = iter * 1024 + k;
        /* poison everything (stale data must show up as wrong), then place the input */
        tc_exec_fill_random(o->dtype, o->op, h_tmp, L.a_elems, mix_seed(r->seed, r->rank, it, 1));
        r->be->upload(r->be, alloc[0], h_tmp, L.a_elems * es);
        if (L.b_elems) {
            tc_exec_fill_random(o->dtype, o->op, h_tmp, L.b_elems, mix_seed(r->seed, r->rank, it, 2));
            r->be->upload(r->be, alloc[1], h_tmp, L.b_elems * es);
        }
        tc_exec_fill_random(o->dtype, o->op, h_in, ie, mix_seed(r->seed, r->rank, it, 0));
        if (o->sparsity > 0)
            tc_exec_sparsify(o->dtype, h_in, ie, o->sparsity, mix_seed(r->seed, r->rank, it, 3));
        r->be->upload(r->be, bufs[0], h_in, ie * es);
        if ((st = tc_exec_engine_run(eng, bufs)))
            goto done;
        if (r->sparse_plan && (st = sparse_agree(r, eng)))
            goto done;
        r->be->download(r->be, h_out, bufs[1], oe * es);
        if (o->corrupt && r->rank == (is_root_only(c) ? r->m->root : 0)) /* a rank whose output is checked */
            corrupt(o->dtype, h_out, oe, (size_t)o->corrupt);
        /* the MPI library's answer on the same inputs */
        int rc;
        if (f_in) {
            f_ref = (float *)h_ref;
            tc_exec_to_float(o->dtype, h_in, f_in, ie);
            rc = mpi_coll(c, MPI_FLOAT, sizeof(float), mpi_op(o->op), f_in, f_ref, T, r->n, r->rank, r->m->root, 0, r->comm);
        } else {
            rc = mpi_coll(c, mpi_type(o->dtype), es, mpi_op(o->op), h_in, h_ref, T, r->n, r->rank, r->m->root, 0, r->comm);
        }
        if (rc != MPI_SUCCESS) {
            st = tc_error(r->ctx, TC_ERR_INTERNAL, NULL, 0, "the MPI library's %s failed", tc_coll_name(c));
            goto done;
        }
        uint64_t wrong = 0, total = 0;
        if (!is_root_only(c) || r->rank == r->m->root)
            wrong = tc_exec_count_wrong(o->dtype, h_out, h_ref, f_in != NULL, oe,
                                        tc_coll_reduces(c) ? tc_exec_dtype_tolerance(o->dtype, r->n) : 0);
        MPI_Allreduce(&wrong, &total, 1, MPI_UINT64_T, MPI_SUM, r->comm);
        res->wrong += (int64_t)total;
    }
    /* timing: inputs of ones (no denormals, products stay 1), sparse at the sparsity in sparse mode */
    double t0, dt;
    if (!r->sparse) {
        size_t n1 = L.a_elems > L.b_elems ? L.a_elems : L.b_elems;
        void *ones = timing_input(o, n1, 0, 0);
        if (ones) {
            r->be->upload(r->be, alloc[0], ones, L.a_elems * es);
            if (L.b_elems)
                r->be->upload(r->be, alloc[1], ones, L.b_elems * es);
            free(ones);
        }
        for (int k = 0; k < o->warmup; k++)
            if ((st = tc_exec_engine_run(eng, bufs)))
                goto done;
        MPI_Barrier(r->comm);
        t0 = tc_now();
        for (int k = 0; k < o->iters; k++)
            if ((st = tc_exec_engine_run(eng, bufs)))
                goto done;
        dt = (tc_now() - t0) / o->iters;
        MPI_Allreduce(&dt, &res->time, 1, MPI_DOUBLE, MPI_MAX, r->comm);
    } else { /* the same inputs, every message dense, then the plan's sparse messages */
        void *in = timing_input(o, ie, o->sparsity, mix_seed(r->seed, r->rank, iter * 1024 + 1023, 4));
        if ((st = report(r->ss, r->comm,
                         in ? TC_OK : tc_error(r->ctx, TC_ERR_NOMEM, NULL, 0, "rank %d: no memory for the input", r->rank)))) {
            r->agreed = 1;
            goto done;
        }
        uint64_t mine[2], all[2];
        tc_exec_engine_sparse(eng, 0);
        st = time_each(r, eng, bufs, in, ie, &res->dense);
        tc_exec_engine_sparse(eng, 1);
        if (!st && r->sparse_plan)
            st = time_each(r, eng, bufs, in, ie, &res->time);
        else
            res->time = res->dense;
        free(in);
        if (st || (st = sparse_agree(r, eng)))
            goto done;
        tc_exec_engine_bytes(eng, &mine[0], &mine[1]);
        MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, r->comm);
        res->wire = all[1] ? (double)all[0] / (double)all[1] : 1;
    }
    /* the MPI library's own collective on the same buffers, same mode */
    if (mpi_res && (r->be->mpi_direct || r->be->alloc == r->be->alloc_host) && !(small && tc_coll_reduces(c))) {
        MPI_Datatype dt_ = mpi_type(o->dtype);
        void *send = bufs[0], *recv = mode == MODE_IP ? alloc[0] : bufs[1];
        int rc = MPI_SUCCESS;
        for (int k = 0; k < o->warmup && rc == MPI_SUCCESS; k++)
            rc = mpi_coll(c, dt_, es, mpi_op(o->op), send, recv, T, r->n, r->rank, r->m->root, mode == MODE_IP, r->comm);
        MPI_Barrier(r->comm);
        t0 = tc_now();
        for (int k = 0; k < o->iters && rc == MPI_SUCCESS; k++)
            rc = mpi_coll(c, dt_, es, mpi_op(o->op), send, recv, T, r->n, r->rank, r->m->root, mode == MODE_IP, r->comm);
        dt = (tc_now() - t0) / o->iters;
        MPI_Allreduce(&dt, &mpi_res->time, 1, MPI_DOUBLE, MPI_MAX, r->comm);
        mpi_res->ran = rc == MPI_SUCCESS;
        mpi_res->wrong = -1;
    }
done:
    free(h_in);
    free(h_out);
    free(h_ref);
    free(h_tmp);
    free(f_in);
    free_bufs(r, alloc);
    return st;
}

static void print_cols(const result *res, double bytes, double factor, int check, int sparse)
{
    if (!res->ran) {
        printf("  %9s %7s %7s %7s", "N/A", "N/A", "N/A", "N/A");
        if (sparse)
            printf(" %9s %7s %6s", "N/A", "N/A", "N/A");
        return;
    }
    double algbw = bytes / res->time / 1e9;
    printf("  %9.2f %7.2f %7.2f", res->time * 1e6, algbw, algbw * factor);
    if (check && res->wrong >= 0)
        printf(" %7" PRId64, res->wrong);
    else
        printf(" %7s", "N/A");
    if (sparse)
        printf(" %9.2f %6.2fx %5.1f%%", res->dense * 1e6, res->dense / res->time, 100 * res->wire);
}

/* ---- main: named passes ------------------------------------------------------------------------------
 *
 * main() = parse_args, then on MPI: load_pass (rank 0 loads and verifies, every rank gets its section and
 * checks it fits the buffers), backend_pass (device and idle policy), sparse_pass (sparse mode and seed),
 * header_pass, sweep_pass (the replays, one table row per size), summary_pass.  Each pass returns a status
 * that every rank agrees on (through report()) unless it says otherwise; the job holds what they share. */

typedef struct job {
    tc_ctx ctx;
    opts o;
    sink_state ss;
    MPI_Comm comm;
    int rank, n;
    tc_msccl *m;          /* the program (an MSCCL++ plan: its collective, ranks and chunking only) */
    tc_mscclpp *mpp;      /* an MSCCL++ plan, parsed by every rank */
    tc_exec_plan *plan;
    tc_exec_engine *eng;
    tc_exec_backend be;
    int have_be;
    int root_src;
    int modes;          /* MODE_OOP | MODE_IP the plan has and --mode asks for */
    size_t U;           /* the unit every size is rounded down to (elements) */
    char idle_note[96];
    int sparse_plan, sparse_mode, n_sparse_steps, n_send_steps;
    uint64_t seed;
    /* sweep totals, for the summary */
    int64_t wrong_total;
    double busbw_sum, speedup_sum, wire_sum;
    int rows;
    /* rank 0: the plan's predicted time (predict.c); ratios measured / predicted of the rows that have one */
    tc_exec_predict *pred;
    int has_pred;       /* the table has the prediction columns (known to every rank) */
    double *ratios;
    int n_ratios;
    /* rank 0, a sparse JSON plan with --topo: the predicted sparse speedup per size (sparse_predict.c) */
    tc_exec_sparse_pred *spred;
    double spred_sum;
} job;

/* The elements of the sweep's row for size sz (bytes), 0 for a size the row before already had; *lastT
 * tracks it.  Sizes are rounded down to a multiple of U elements (at least U). */
static size_t row_elems(const job *J, double sz, size_t *lastT)
{
    const size_t es = tc_exec_dtype_size(J->o.dtype);
    size_t T = (size_t)(sz / (double)es) / J->U * J->U;
    if (T == 0)
        T = J->U;
    if (T == *lastT)
        return 0;
    *lastT = T;
    return T;
}

#define FOR_EACH_SIZE(J, sz) \
    for (double sz = (double)(J)->o.minbytes; sz <= (double)(J)->o.maxbytes * (1 + 1e-9); sz *= (J)->o.factor)

/* Rank 0: does some row of the sweep have a prediction? */
static int prediction_in_sweep(job *J)
{
    const uint64_t es = tc_exec_dtype_size(J->o.dtype);
    size_t lastT = 0, T;
    FOR_EACH_SIZE(J, sz)
        if ((T = row_elems(J, sz, &lastT)) && tc_exec_predict_time(&J->ctx, J->pred, T * es, J->U * es) > 0)
            return 1;
    return 0;
}

/* 1a. an MSCCL++ plan: rank 0 reads and verifies it (the symbolic check included), every rank parses the
 * same bytes; the program J->m carries what the sweep needs (collective, ranks, chunks per buffer) */
static tc_status load_mscclpp(job *J)
{
    tc_ctx *ctx = &J->ctx;
    const opts *o = &J->o;
    char *buf = NULL;
    size_t len = 0;
    tc_status st = TC_OK;
    if (J->rank == 0) {
        tc_mscclpp *p = NULL;
        tc_mscclpp_verdict v;
        if (!(st = tc_read_file(ctx, o->plan, &buf, &len)) && !(st = tc_mscclpp_read_mem(ctx, o->plan, buf, len, &p)))
            st = tc_mscclpp_verify(ctx, p, 0, o->plan, &v);
        if (!st && p->ngpus != J->n)
            st = tc_error(ctx, TC_ERR_INVALID, o->plan, 0,
                          "the plan is for %d ranks but tacos-run was started on %d (use mpirun -np %d)", p->ngpus,
                          J->n, p->ngpus);
        if (!st && (p->coll != TC_COLL_ALLREDUCE && p->coll != TC_COLL_ALLGATHER && p->coll != TC_COLL_REDUCESCATTER))
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, o->plan, 0, "tacos-run replays MSCCL++ allreduce, allgather and "
                          "reducescatter plans, not %s", p->collective);
        if (!st && o->root >= 0)
            tc_warn(ctx, NULL, 0, "--root %d ignored: %s has no root", o->root, p->collective);
        if (!st)
            st = tc_exec_predict_create(ctx, o->plan, o->topo, o->costs, J->n, &J->pred);
        if (st)
            tc_mscclpp_free(p);
        else
            J->mpp = p; /* the other ranks parse the bytes rank 0 sends */
    }
    if ((st = report(&J->ss, J->comm, st))) {
        free(buf);
        return st;
    }
    unsigned long long n = len;
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, J->comm);
    if (n > INT_MAX) /* one MPI_Bcast of bytes */
        st = tc_error(ctx, TC_ERR_LIMIT, o->plan, 0, "an MSCCL++ plan of %llu bytes: tacos-run sends at most %d", n,
                      INT_MAX);
    else if (J->rank != 0 && !(buf = malloc((size_t)n + 1)))
        st = TC_ERR_NOMEM;
    if ((st = report(&J->ss, J->comm, st)))
        return st;
    MPI_Bcast(buf, (int)n, MPI_BYTE, 0, J->comm);
    if (J->rank != 0)
        st = tc_mscclpp_read_mem(ctx, o->plan, buf, (size_t)n, &J->mpp);
    free(buf);
    if (!st)
        st = tc_msccl_create(J->mpp->name, (tc_coll)J->mpp->coll, J->n, &J->m);
    if (!st && !(J->plan = calloc(1, sizeof *J->plan)))
        st = TC_ERR_NOMEM;
    if (!st) {
        const tc_mscclpp_gpu *g = &J->mpp->gpus[J->rank];
        J->m->inplace = J->mpp->inplace;
        J->m->outofplace = !J->mpp->inplace;
        J->m->nchunksperloop = g->i_chunks > g->o_chunks ? g->i_chunks : g->o_chunks;
        J->plan->rank = J->rank;
        J->plan->nranks = J->n;
        J->plan->buf_chunks[0] = g->i_chunks;
        J->plan->buf_chunks[1] = g->o_chunks;
        J->plan->buf_chunks[2] = g->s_chunks;
        J->plan->mpp = J->mpp;
    }
    return report(&J->ss, J->comm, st);
}

/* 1b. an MSCCL or JSON plan: rank 0 loads and verifies the whole plan, every rank gets its own section */
static tc_status load_msccl(job *J)
{
    tc_ctx *ctx = &J->ctx;
    const opts *o = &J->o;
    int rank = J->rank, n = J->n;
    tc_status st = rank == 0 ? load_plan(ctx, o, n, &J->m, &J->root_src) : TC_OK;
    if (!st && rank == 0) /* the plan's predicted time: refused here, before any message of the replay */
        st = tc_exec_predict_create(ctx, o->plan, o->topo, o->costs, n, &J->pred);
    if ((st = report(&J->ss, J->comm, st)))
        return st;
    st = share_plan(ctx, J->comm, rank, n, &J->m, &J->root_src);
    if (!st)
        st = tc_exec_plan_create(ctx, J->m, rank, o->plan, &J->plan);
    if (!st) { /* a channel is an MPI tag */
        int *ub = NULL, flag = 0;
        MPI_Comm_get_attr(J->comm, MPI_TAG_UB, &ub, &flag);
        for (int t = 0; flag && ub && t < J->plan->n_tbs && !st; t++)
            if (J->plan->tbs[t].chan > *ub)
                st = tc_error(ctx, TC_ERR_UNSUPPORTED, o->plan, 0,
                              "gpu %d tb %d: channel %d is above this MPI library's largest tag (%d)", rank, t,
                              J->plan->tbs[t].chan, *ub);
    }
    return report(&J->ss, J->comm, st);
}

/* 1. load: the plan (by its format), loaded and verified; everything is refused before any message of the
 * replay is sent. */
static tc_status load_pass(job *J)
{
    tc_ctx *ctx = &J->ctx;
    const opts *o = &J->o;
    int rank = J->rank, n = J->n, mpp = 0;
    J->root_src = ROOT_NONE;
    tc_format fmt = TC_FMT_AUTO;
    tc_status st = rank == 0 ? tc_sched_sniff(ctx, o->plan, &fmt) : TC_OK;
    if ((st = report(&J->ss, J->comm, st)))
        return st;
    mpp = fmt == TC_FMT_MSCCLPP;
    MPI_Bcast(&mpp, 1, MPI_INT, 0, J->comm);
    if ((st = mpp ? load_mscclpp(J) : load_msccl(J)))
        return st;
    const tc_msccl *m = J->m;
    const tc_coll coll = m->coll;
    const int C = m->nchunksperloop;
    J->modes = o->modes & ((m->outofplace ? MODE_OOP : 0) | (m->inplace ? MODE_IP : 0));
    if (!J->modes) /* known on every rank: rank 0 prints */
        return tc_error(ctx, TC_ERR_USAGE, o->plan, 0, "the plan has no %s variant",
                        o->modes == MODE_OOP ? "out-of-place" : "in-place");
    /* unit of T: nchunksperloop, and a multiple of ngpus for split collectives */
    size_t U = (size_t)C;
    if (splits(coll))
        while (U % (size_t)n)
            U += (size_t)C;
    J->U = U;
    if (splits(coll) && C % n && rank == 0)
        tc_warn(ctx, o->plan, 0, "nchunksperloop %d is not a multiple of ngpus %d", C, n);
    /* the program must fit the collective's buffers (checked on the smallest size, in chunks) */
    tc_status fit = TC_OK;
    for (int mode = MODE_OOP; mode <= MODE_IP && !fit; mode <<= 1) {
        if (!(J->modes & mode))
            continue;
        layout L;
        make_layout(coll, mode, U, n, rank, &L);
        size_t ch = U / (size_t)C;
        const char *mname = mode == MODE_OOP ? "out-of-place" : "in-place";
        if ((size_t)J->plan->buf_chunks[0] * ch > L.i_avail)
            fit = tc_error(ctx, TC_ERR_INVALID, o->plan, 0,
                           "gpu %d addresses %d chunks of buffer i but the %s %s input holds %zu", rank,
                           J->plan->buf_chunks[0], mname, tc_coll_name(coll), L.i_avail / ch);
        else if ((size_t)J->plan->buf_chunks[1] * ch > L.o_avail)
            fit = tc_error(ctx, TC_ERR_INVALID, o->plan, 0,
                           "gpu %d addresses %d chunks of buffer o but the %s %s output holds %zu", rank,
                           J->plan->buf_chunks[1], mname, tc_coll_name(coll), L.o_avail / ch);
    }
    /* the prediction columns: with --topo every row has one; a JSON plan's stored prediction only when a
     * row of the sweep is at the plan's size */
    if (rank == 0 && J->pred)
        J->has_pred = tc_exec_predict_every_size(J->pred) || prediction_in_sweep(J);
    MPI_Bcast(&J->has_pred, 1, MPI_INT, 0, J->comm);
    return report(&J->ss, J->comm, fit);
}

/* 2. the backend, and the idle policy: oversubscribed ranks sleep when they cannot progress, leaving the
 * cores to those that can (yielding alone lets idle ranks take their full share of a timeslice). */
static tc_status backend_pass(job *J)
{
    char why[256] = "";
    tc_status st = TC_OK;
    if (J->o.cuda == 1) {
        MPI_Comm local;
        int lrank = 0;
        MPI_Comm_split_type(J->comm, MPI_COMM_TYPE_SHARED, J->rank, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &lrank);
        MPI_Comm_free(&local);
        st = tc_exec_backend_cuda(&J->be, lrank, why, sizeof why);
        if (st)
            tc_error(&J->ctx, st, NULL, 0, "--device cuda: %s", why);
    } else {
        tc_exec_backend_host(&J->be);
        if (J->o.cuda == 2) { /* the staging path of CUDA without CUDA-aware MPI, on host memory */
            J->be.name = "host-staged";
            J->be.transport = "staged through host memory";
            J->be.mpi_direct = 0;
        }
    }
    J->have_be = !st;
    if ((st = report(&J->ss, J->comm, st)))
        return st;

    MPI_Comm local;
    int lsize = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    MPI_Comm_split_type(J->comm, MPI_COMM_TYPE_SHARED, J->rank, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &lsize);
    MPI_Comm_free(&local);
    int over = cores > 0 && lsize > cores, any_over = 0;
    MPI_Allreduce(&over, &any_over, 1, MPI_INT, MPI_MAX, J->comm);
    if (J->o.idle_sleep < 0)
        J->o.idle_sleep = any_over ? 100 : 0;
    if (J->o.idle_sleep)
        snprintf(J->idle_note, sizeof J->idle_note, "idle ranks sleep %d us%s", J->o.idle_sleep,
                 any_over ? " (ranks outnumber cores)" : "");
    else
        snprintf(J->idle_note, sizeof J->idle_note, "idle ranks yield");
    return TC_OK;
}

/* 3. sparse mode (--sparsity, or a plan with sparse messages: known to every rank) and the seed. */
static tc_status sparse_pass(job *J)
{
    const tc_exec_plan *plan = J->plan;
    int n_sparse = 0, n_send = 0;
    for (int k = 0; k < plan->n_steps; k++) {
        const tc_exec_step *x = &plan->steps[k];
        if (x->type == TC_MS_SEND || x->type == TC_MS_RCS || x->type == TC_MS_RRS || x->type == TC_MS_RRCS) {
            n_send++;
            n_sparse += x->fmt_send != 0;
        }
    }
    int mine[2] = {n_sparse, n_send}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, J->comm);
    J->n_sparse_steps = all[0];
    J->n_send_steps = all[1];
    J->sparse_plan = J->n_sparse_steps > 0;
    J->sparse_mode = J->sparse_plan || J->o.sparsity >= 0;
    if (J->o.sparsity < 0)
        J->o.sparsity = 0;
    if (J->o.corrupt_sparse && !J->sparse_plan) /* known on every rank: rank 0 prints */
        return tc_error(&J->ctx, TC_ERR_USAGE, J->o.plan, 0,
                        "--corrupt-sparse: the plan has no sparse messages to damage");
    tc_status st = TC_OK; /* issue 26: tacosc's sparse speedup beside the measured one */
    if (J->rank == 0 && J->sparse_plan && tc_exec_predict_topo(J->pred)) /* --topo, loaded in load_pass */
        st = tc_exec_sparse_pred_create(&J->ctx, J->o.plan, tc_exec_predict_topo(J->pred), J->o.dtype, &J->spred);
    if ((st = report(&J->ss, J->comm, st)))
        return st;
    if (J->o.check || J->sparse_mode) {
        J->seed = J->o.have_seed ? J->o.seed : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
        MPI_Bcast(&J->seed, 1, MPI_UINT64_T, 0, J->comm);
    }
    return TC_OK;
}

/* The mode whose time the MPI reference column compares with. */
static int ratio_mode_of(const job *J) { return (J->modes & MODE_OOP) ? MODE_OOP : MODE_IP; }

/* 4. the header (rank 0), and with -v every rank's share of the plan. */
static void header_pass(job *J)
{
    const opts *o = &J->o;
    const tc_msccl *m = J->m;
    const tc_coll coll = m->coll;
    const int C = m->nchunksperloop;
    const int ratio_mode = ratio_mode_of(J), sparse_mode = J->sparse_mode;
    if (J->rank == 0) {
        if (J->mpp)
            printf("# tacos-run %s: %s (MSCCL++ plan: %s, %d ranks, protocol %s, %d chunks in the largest buffer, "
                   "%d thread blocks on rank 0%s%s)\n",
                   TC_VERSION, J->mpp->name, tc_coll_name(coll), m->ngpus, J->mpp->packets ? "LL" : "Simple", C,
                   J->mpp->gpus[0].n_tbs, m->inplace ? ", in-place" : "", m->outofplace ? ", out-of-place" : "");
        else
            printf("# tacos-run %s: %s (%s, %d ranks, proto %s, %d chunks per loop, %d channel%s%s%s)\n",
                   TC_VERSION, m->name ? m->name : "unnamed", tc_coll_name(coll), m->ngpus, m->proto, C,
                   m->nchannels, m->nchannels == 1 ? "" : "s", m->inplace ? ", in-place" : "",
                   m->outofplace ? ", out-of-place" : "");
        printf("# plan %s, device %s, transport %s, %d warm-up + %d timed iterations, %s\n", o->plan, J->be.name,
               J->be.transport, o->warmup, o->iters, J->idle_note);
        printf("# sizes are rounded down to a multiple of %zu elements (%s%s)\n", J->U,
               J->mpp ? "the chunks of the largest buffer" : "nchunksperloop", splits(coll) ? " and ngpus" : "");
        if (tc_coll_rooted(coll))
            printf("# root %d (%s)\n", m->root,
                   J->root_src == ROOT_PLAN     ? "the schedule's"
                   : J->root_src == ROOT_OPTION ? "--root"
                                                : "implied by the program");
        if (o->check) {
            double tol = tc_coll_reduces(coll) ? tc_exec_dtype_tolerance(o->dtype, J->n) : 0; /* moves are exact */
            printf("# check: against the MPI library's %s, seed %" PRIu64 " (per rank and row), ", tc_coll_name(coll),
                   J->seed);
            if (o->check > 1)
                printf("%d replays per size and placement, ", o->check);
            if (tol > 0)
                printf("relative tolerance %.1e%s\n", tol,
                       o->dtype == TC_DT_BFLOAT16 || o->dtype == TC_DT_FLOAT16 ? " (reference in float32)" : "");
            else
                printf("exact\n");
        }
        if (sparse_mode) {
            printf("# sparse: each input element zero with probability %g (fresh positions per replay, seed %" PRIu64
                   "); ",
                   o->sparsity, J->seed);
            if (J->sparse_plan)
                printf("%d of the plan's %d sending steps send sparse messages\n", J->n_sparse_steps,
                       J->n_send_steps);
            else
                printf("the plan has no sparse formats: every message is dense\n");
            printf("# sparse: time = with the plan's sparse messages, dense = with every message dense (same inputs, "
                   "each iteration on a fresh copy between barriers), speedup = dense / time, wire = bytes sent over "
                   "dense%s\n",
                   o->corrupt_sparse ? "; --corrupt-sparse: rank 0 damages every sparse message it sends" : "");
        }
        const char *sp_hdr[2][3] = {{"    dense", "speedup", "  wire"}, {"     (us)", "", ""}};
        const int blk = sparse_mode ? 60 : 35;
        char pdesc[320];
        printf("# predicted: %s%s\n", tc_exec_predict_describe(J->pred, pdesc, sizeof pdesc),
               J->has_pred   ? (ratio_mode == MODE_OOP ? "; ratio = out-of-place measured / predicted"
                                                       : "; ratio = in-place measured / predicted")
               : J->pred ? "; no row of this sweep is at that size"
                         : "");
        printf("# %40s  %-*s%-*s%s%s\n", "", blk, "         --- out-of-place ---", blk, "           --- in-place ---",
               J->has_pred ? "   --- prediction ---" : "",
               o->mpi_ref ? (ratio_mode == MODE_OOP ? "  MPI library, out-of-place" : "  MPI library, in-place") : "");
        for (int l = 0; l < 2; l++) {
            const char *const *h = l ? (const char *const[]){"(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", ""}
                                     : (const char *const[]){"size", "count", "type", "redop", "time", "algbw", "busbw",
                                                             "#wrong"};
            printf("# %10s %12s %9s %6s", h[0], h[1], h[2], h[3]);
            for (int k = 0; k < 2; k++) {
                printf("  %9s %7s %7s %7s", h[4], h[5], h[6], h[7]);
                if (sparse_mode)
                    printf(" %9s %7s %6s", sp_hdr[l][0], sp_hdr[l][1], sp_hdr[l][2]);
            }
            if (J->has_pred)
                printf("  %9s %8s", l ? "(us)" : "predicted", l ? "" : "ratio");
            if (J->spred)
                printf("  %9s", l ? "(tacosc)" : "p-speedup");
            printf("%s\n", o->mpi_ref ? (l ? "       (us)    (GB/s)" : "   mpi-time mpi-busbw  ratio") : "");
        }
        fflush(stdout);
    }

    if (o->verbose) { /* every rank's share of the plan, printed by rank 0 in rank order */
        const tc_exec_plan *plan = J->plan;
        char line[160], *all = J->rank == 0 ? malloc(sizeof line * (size_t)J->n) : NULL;
        snprintf(line, sizeof line, "# rank %d: %d thread blocks, %d steps, buffers i %d o %d s %d chunks", J->rank,
                 plan->n_tbs, plan->n_steps, plan->buf_chunks[0], plan->buf_chunks[1], plan->buf_chunks[2]);
        MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, J->comm);
        if (all)
            for (int k = 0; k < J->n; k++)
                printf("%s\n", all + (size_t)k * sizeof line);
        free(all);
    }
}

/* One table row (rank 0). */
static void print_row(job *J, size_t T, const result res[2], const result *mres)
{
    const tc_coll coll = J->m->coll;
    const double bytes = (double)(T * tc_exec_dtype_size(J->o.dtype));
    const double factor = tc_coll_busbw_factor(coll, J->n);
    printf("  %10zu %12zu %9s %6s", (size_t)bytes, call_count(coll, T, J->n), tc_exec_dtype_name(J->o.dtype),
           tc_coll_reduces(coll) ? tc_exec_redop_name(J->o.op) : "none");
    print_cols(&res[0], bytes, factor, J->o.check, J->sparse_mode);
    print_cols(&res[1], bytes, factor, J->o.check, J->sparse_mode);
    if (J->has_pred) {
        const result *meas = &res[ratio_mode_of(J) == MODE_IP];
        double p = tc_exec_predict_time(&J->ctx, J->pred, (uint64_t)bytes, (uint64_t)(J->U * tc_exec_dtype_size(J->o.dtype)));
        if (p > 0 && meas->ran) {
            printf("  %9.2f %8.3f", p * 1e6, meas->time / p);
            J->ratios[J->n_ratios++] = meas->time / p;
        } else if (p > 0) {
            printf("  %9.2f %8s", p * 1e6, "N/A");
        } else {
            printf("  %9s %8s", "N/A", "N/A");
        }
    }
    if (J->spred) { /* tacosc's sparse speedup at this size, beside the measured one */
        const double p = tc_exec_sparse_pred_speedup(&J->ctx, J->spred, bytes);
        printf("  %8.2fx", p);
        J->spred_sum += p;
    }
    if (J->o.mpi_ref) {
        if (mres->ran) {
            double mbw = bytes / mres->time / 1e9 * factor;
            double mine = bytes / res[ratio_mode_of(J) == MODE_IP].time / 1e9 * factor;
            printf("  %9.2f %9.2f %6.3f", mres->time * 1e6, mbw, mine / mbw);
        } else {
            printf("  %9s %9s %6s", "N/A", "N/A", "N/A");
        }
    }
    printf("\n");
    fflush(stdout);
}

/* 5. the sweep: one engine and one row per size.  A failure is agreed when *agreed is set on return
 * (every rank knows and the message is out); otherwise it is this rank's alone. */
static tc_status sweep_pass(job *J, int *agreed)
{
    const opts *o = &J->o;
    const tc_coll coll = J->m->coll;
    const int C = J->m->nchunksperloop;
    const size_t es = tc_exec_dtype_size(o->dtype);
    const double factor = tc_coll_busbw_factor(coll, J->n);
    const int ratio_mode = ratio_mode_of(J);
    runner r = {&J->ctx, o, J->m, J->plan, &J->be, J->comm, J->rank, J->n, J->seed, &J->ss, 0, J->sparse_mode,
                J->sparse_plan};
    size_t lastT = 0;
    tc_status st = TC_OK;
    *agreed = 0;
    if (J->pred) { /* at most one ratio per row: the rows are at most log_factor(max / min) + 1 */
        size_t cap = (size_t)(log((double)o->maxbytes / (double)o->minbytes) / log(o->factor)) + 2;
        if (!(J->ratios = malloc(cap * sizeof *J->ratios)))
            st = TC_ERR_NOMEM;
    }
    if ((st = report(&J->ss, J->comm, st))) {
        *agreed = 1;
        return st;
    }
    FOR_EACH_SIZE(J, sz) {
        size_t T = row_elems(J, sz, &lastT);
        if (!T)
            continue;
        size_t chunk = T / (size_t)C;
        tc_exec_run_opts ro = {o->dtype, o->op, chunk, o->timeout, o->prepost, o->idle_sleep, J->sparse_plan,
                               o->corrupt_sparse && J->rank == 0};
        tc_exec_engine_free(J->eng);
        J->eng = NULL;
        tc_status est = tc_exec_engine_create(&J->ctx, J->plan, &J->be, J->comm, &ro, &J->eng);
        if ((st = report(&J->ss, J->comm, est))) {
            *agreed = 1;
            return st;
        }
        result res[2] = {{0}}, mres = {0};
        for (int mode = MODE_OOP; mode <= MODE_IP && !st; mode <<= 1)
            if (J->modes & mode)
                st = run_mode(&r, J->eng, mode, T, chunk, J->rows * 2 + (mode == MODE_IP), &res[mode == MODE_IP],
                              o->mpi_ref && mode == ratio_mode ? &mres : NULL);
        if (st)
            break;
        double bytes = (double)(T * es);
        for (int k = 0; k < 2; k++)
            if (res[k].ran) {
                if (res[k].wrong > 0)
                    J->wrong_total += res[k].wrong;
                J->busbw_sum += bytes / res[k].time / 1e9 * factor;
                J->speedup_sum += res[k].time > 0 ? res[k].dense / res[k].time : 0;
                J->wire_sum += res[k].wire;
            }
        if (J->rank == 0)
            print_row(J, T, res, &mres);
        J->rows++;
    }
    *agreed = r.agreed;
    return st;
}

/* qsort order of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 6. the summary lines (rank 0); within 25%: predicted / measured from 0.75 to 1.25. */
static void summary_pass(const job *J)
{
    if (J->rank != 0)
        return;
    int rows = J->rows, cols = __builtin_popcount((unsigned)J->modes);
    if (J->o.check)
        printf("# Out of bounds values : %" PRId64 " %s\n", J->wrong_total, J->wrong_total ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %.4f GB/s\n", rows ? J->busbw_sum / (rows * cols) : 0.0);
    if (J->sparse_mode)
        printf("# Avg sparse speedup   : %.2fx over dense messages, %.1f%% of the dense bytes on the wire\n",
               rows ? J->speedup_sum / (rows * cols) : 0.0, rows ? 100 * J->wire_sum / (rows * cols) : 0.0);
    if (J->spred)
        printf("# Avg predicted speedup: %.2fx (tacosc's model on --topo, at the same sizes)\n",
               rows ? J->spred_sum / rows : 0.0);
    if (J->has_pred && J->n_ratios) {
        double *v = J->ratios;
        int k = J->n_ratios, within = 0;
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        for (int i = 0; i < k; i++)
            within += v[i] >= 1 / 1.25 && v[i] <= 1 / 0.75;
        printf("# Measured / predicted : median %.3f, from %.3f to %.3f over %d size%s, %d within 25%%\n",
               k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2, v[0], v[k - 1], k, k == 1 ? "" : "s", within);
    } else if (J->has_pred) {
        printf("# Measured / predicted : no size of the sweep has a prediction\n");
    }
}


int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--calibrate")) /* issue 24: calibrate.c */
        return tc_exec_calibrate_main(argc, argv);
    job J;
    memset(&J, 0, sizeof J);
    int rc = parse_args(argc, argv, &J.o, 0);
    if (rc < 0) /* --help, --version: no MPI needed */
        return parse_args(argc, argv, &J.o, 1) < 0 ? 0 : 2;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &J.comm);
    MPI_Comm_set_errhandler(J.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(J.comm, &J.rank);
    MPI_Comm_size(J.comm, &J.n);
    if (rc) {
        parse_args(argc, argv, &J.o, J.rank == 0);
        MPI_Comm_free(&J.comm);
        MPI_Finalize();
        return 2;
    }
    J.ss.rank = J.rank;
    tc_ctx_init(&J.ctx);
    J.ctx.sink = exec_sink;
    J.ctx.sink_user = &J.ss;
    int exit_code = 1, agreed = 0;

    tc_status st = load_pass(&J);
    if (!st)
        st = backend_pass(&J);
    if (!st)
        st = sparse_pass(&J);
    if (st)
        goto out;
    header_pass(&J);
    st = sweep_pass(&J, &agreed);
    if (st && agreed) /* every rank knows and the message is out */
        goto out;
    if (st) { /* this rank alone: its message, then the job ends */
        if (J.ss.held.data)
            fputs(J.ss.held.data, stderr);
        J.ss.direct = 1;
        tc_error(&J.ctx, st, NULL, 0, "replay failed on rank %d; aborting", J.rank);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    summary_pass(&J);
    exit_code = J.wrong_total ? 1 : 0;
out:
    if (st)
        exit_code = st == TC_ERR_USAGE ? 2 : 1;
    tc_exec_engine_free(J.eng);
    tc_exec_sparse_pred_free(J.spred); /* borrows J.pred's topology */
    tc_exec_predict_free(J.pred);
    free(J.ratios);
    tc_exec_plan_free(J.plan);
    tc_msccl_free(J.m);
    tc_mscclpp_free(J.mpp);
    if (J.have_be)
        J.be.fini(&J.be);
    fflush(stdout);
    fflush(stderr);
    tc_buf_free(&J.ss.held);
    MPI_Comm_free(&J.comm);
    MPI_Finalize();
    return exit_code;
}
