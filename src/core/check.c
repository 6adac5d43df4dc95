/*
 * The schedule checker: symbolic execution of a schedule IR (see check.h and man 5 tacosc-schedule).
 *
 * Accepts: any tc_sched (generated or read from a file) and optionally the topology it runs on.
 * Returns: TC_OK, or TC_ERR_CHECK after reporting the first violation (one diagnostic naming transfer,
 * rank, chunk and time); TC_ERR_NOMEM / TC_ERR_LIMIT when the state does not fit.
 *
 * State.  Collectives that do not reduce (all-gather, broadcast, gather, scatter, all-to-all) need one bit
 * per (rank, chunk): "holds the chunk".  The bits are a dense bitset of R*C bits while that is at most
 * 2^32 bits (512 MiB; all-gather on 40,000 NPUs is 1.6e9 bits), and an open-addressing hash set of the
 * (rank, chunk) pairs received beyond the initial placement otherwise (all-to-all on thousands of ranks:
 * it grows with the transfers, not with R^3).  Reducing collectives (reduce-scatter, all-reduce, reduce)
 * keep a set of contributing source ranks, R bits, per (rank, chunk); chunks never meet, so those sets are
 * swept a chunk group at a time (about 16 MiB of sets, tc_check_opts.group_bytes), each group through its
 * own events, and the finding the whole sweep would meet first is reported.
 *
 * Events.  The departures and arrivals are merged once into one sequence (by times and positions, no
 * state); the sweep applies it.  Every transfer departs at t_start (it carries what src holds then) and arrives at t_end.
 * Departures are sorted by t_start, arrivals by t_end (both with a stable LSD radix sort on the order-
 * preserving bit pattern of the doubles, so ties keep transfer order).  At equal time arrivals apply
 * before departures (a chunk received at t may be forwarded at t), except the arrival of a zero-length
 * transfer, which applies after the departures at its time.  The set a reducing transfer carries is
 * snapshot into a pool slot at departure and the slot is freed at arrival, so memory is bounded by the
 * transfers in flight.  copy: dst := carried; reduce: dst := dst | carried, error when they intersect.
 *
 * Times closer than one part in 10^9 count as equal (generators add alpha-beta costs along different
 * paths, and one rounding error must not read as a late arrival or a link overlap).
 *
 * Links.  Transfers with link >= 0 occupy their link for [t_start, t_end); two that overlap on one link
 * are a violation, reported when the later one departs (so the earliest violation in time wins).
 * Postconditions are searched rank-major, chunk-minor; the first failing (rank, chunk) is named.
 *
 * Cost: O(n) radix sorts plus O(n * R/64) word operations for reducing collectives, with the state of
 * upcoming events prefetched and big state on huge pages: a 2,095,104-transfer ring all-reduce on 1024
 * ranks checks in 0.26 s.  Its 128 MiB of contribution sets are swept as 8 groups of 16 MiB (issue 27:
 * the TACOS all-reduce on mesh2d-32x32 compiles in 199 MB instead of 292 MB, with fewer fresh pages).
 *
 * Trace (ring all-reduce, R = 3, one chunk per rank; sets written as rank lists):
 *   t=0  departures 0->1 c2 {0}, 1->2 c0 {1}, 2->0 c1 {2}
 *   t=1  arrivals: 1 c2 = {0,1}, 2 c0 = {1,2}, 0 c1 = {0,2}; departures 1->2 c2 {0,1}, ...
 *   t=2  arrivals: 2 c2 = {0,1,2} (full), ...; the all-gather phase copies the full sets around.
 */
#include "tacos/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define DENSE_BIT_LIMIT (1ull << 32)      /* single-bit state: dense up to 512 MiB */
#define SET_BYTES_LIMIT (4ull << 30)      /* reducing state: contribution sets up to 4 GiB */
#define PREFETCH 12                       /* events looked ahead to prefetch their state */
#define GROUP_BYTES ((size_t)16 << 20)    /* reducing state: contribution sets swept at a time */

typedef struct chk {
    tc_ctx *ctx;
    const tc_sched *s;
    const tc_check_opts *opts;
    const char *name;
    int R, C, K;
    int reduces;
    /* single-bit state: dense bitset, or hash set of keys r*C+c+1 (0 = empty) */
    uint64_t *bits;
    uint64_t *hkeys;
    size_t hmask;
    int hshift;
    /* reducing state: W words per (rank, chunk) set of the chunk group [c0, c0 + CG) being swept, and a
     * pool of in-flight snapshots */
    size_t W;
    int c0, CG;
    uint64_t *sets;
    uint64_t *pool;
    int pool_cap, pool_used, n_free;
    int *pool_free;
    int *slot;
} chk;

/* ------------------------------------------------------------------------------------------------ */
/* Diagnostics                                                                                       */

static tc_status xfer_error(chk *k, int i, double t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "t=T" (seconds), or where the times are an order of execution (an MSCCL program's steps: order_times)
 * "execution order T". */
static const char *when(const chk *k, double t, char *buf, size_t n)
{
    if (k->opts && k->opts->order_times)
        snprintf(buf, n, "execution order %g", t);
    else {
        char tb[32];
        snprintf(buf, n, "t=%s", tc_fmt_time(t, tb, sizeof tb));
    }
    return buf;
}

/* "transfer I (step S, t=T): MSG" */
static tc_status xfer_error(chk *k, int i, double t, const char *fmt, ...)
{
    char msg[1024], tb[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a transfer's line belongs to the schedule's own file: none under another name */
    const int own = k->name && k->s->file && !strcmp(k->name, k->s->file);
    return tc_error(k->ctx, TC_ERR_CHECK, k->name, own ? tc_sched_line(k->s, i) : 0,
                    "transfer %d (step %d, %s): %s", i, k->s->xfers[i].step, when(k, t, tb, sizeof tb), msg);
}

static tc_status nomem(chk *k, const char *what)
{
    return tc_error(k->ctx, TC_ERR_NOMEM, k->name, 0, "checker: out of memory (%s)", what);
}

/* ------------------------------------------------------------------------------------------------ */
/* Stable LSD radix sort of (key, val) pairs by key, 16 bits per pass; passes where every key has the  */
/* same digit are skipped.  Its scratch of n pairs is allocated on first need into tmp and kept there   */
/* for the next sort of at most n pairs (the departures' and the arrivals': fresh pages cost, issue 27). */

typedef struct sort_tmp {
    uint64_t *k;
    int *v;
} sort_tmp;

static int radix_sort(uint64_t *key, int *val, size_t n, sort_tmp *tmp)
{
    size_t sorted = 1;
    while (sorted < n && key[sorted - 1] <= key[sorted])
        sorted++;
    if (sorted >= n)
        return 0;
    if (!tmp->k)
        tmp->k = malloc(n * sizeof *tmp->k);
    if (!tmp->v)
        tmp->v = malloc(n * sizeof *tmp->v);
    uint64_t *k2 = tmp->k;
    int *v2 = tmp->v;
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!k2 || !v2 || !cnt) {
        free(cnt);
        return -1;
    }
    uint64_t *ka = key, *kb = k2;
    int *va = val, *vb = v2;
    for (int shift = 0; shift < 64; shift += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(ka[i] >> shift) & 0xffff]++;
        if (cnt[(ka[0] >> shift) & 0xffff] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t p = cnt[(ka[i] >> shift) & 0xffff]++;
            kb[p] = ka[i];
            vb[p] = va[i];
        }
        uint64_t *tk = ka;
        ka = kb;
        kb = tk;
        int *tv = va;
        va = vb;
        vb = tv;
    }
    if (ka != key) {
        memcpy(key, ka, n * sizeof *key);
        memcpy(val, va, n * sizeof *val);
    }
    free(cnt);
    return 0;
}

/* Times closer than one part in 10^9 are equal: generators add alpha-beta costs along different paths,
 * and a chunk that arrives one rounding error after it is forwarded has not really arrived late. */
static int before(double a, double b)
{
    return a < b - 1e-9 * fmax(fabs(a), fabs(b));
}

/* Arrival time: t_end, or t_start when t_end is (within rounding) earlier. */
static double end_of(const tc_xfer *x)
{
    return x->t_end < x->t_start ? x->t_start : x->t_end;
}

/* Order-preserving unsigned image of a finite double (-0.0 folded onto +0.0). */
static uint64_t time_key(double d)
{
    d = d + 0.0;
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u >> 63) ? ~u : (u | (1ull << 63));
}

/* ------------------------------------------------------------------------------------------------ */
/* Holdings                                                                                          */

/* Initial placement of the non-reducing collectives (the ir.h chunk numbering). */
static int initially_held(const chk *k, int r, int c)
{
    switch (k->s->coll) {
    case TC_COLL_ALLGATHER:
    case TC_COLL_GATHER: return c / k->K == r;
    case TC_COLL_BROADCAST:
    case TC_COLL_SCATTER: return r == k->s->root;
    case TC_COLL_ALLTOALL: return c / (k->R * k->K) == r;
    default: return 0;
    }
}

static size_t hslot(const chk *k, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> k->hshift) & k->hmask;
}

static int held(const chk *k, int r, int c)
{
    uint64_t b = (uint64_t)r * (uint64_t)k->C + (uint64_t)c;
    if (k->bits)
        return (int)((k->bits[b >> 6] >> (b & 63)) & 1);
    if (initially_held(k, r, c))
        return 1;
    uint64_t key = b + 1;
    for (size_t h = hslot(k, key);; h = (h + 1) & k->hmask) {
        if (k->hkeys[h] == key)
            return 1;
        if (!k->hkeys[h])
            return 0;
    }
}

/* The hash set never fills: it has room for twice the transfers. */
static void hold(chk *k, int r, int c)
{
    uint64_t b = (uint64_t)r * (uint64_t)k->C + (uint64_t)c;
    if (k->bits) {
        k->bits[b >> 6] |= 1ull << (b & 63);
        return;
    }
    if (initially_held(k, r, c))
        return;
    uint64_t key = b + 1;
    for (size_t h = hslot(k, key);; h = (h + 1) & k->hmask) {
        if (k->hkeys[h] == key)
            return;
        if (!k->hkeys[h]) {
            k->hkeys[h] = key;
            return;
        }
    }
}

/* Zeroed array of n words; big ones 2 MiB aligned and backed by huge pages where the kernel allows
 * (the state is accessed at random, so TLB misses dominate otherwise).  Release with free(). */
static uint64_t *zalloc_words(size_t n)
{
    size_t bytes = n * sizeof(uint64_t);
    if (bytes < (8u << 20))
        return calloc(n ? n : 1, sizeof(uint64_t));
    size_t align = 2u << 20;
    bytes = (bytes + align - 1) / align * align;
    uint64_t *p = aligned_alloc(align, bytes);
    if (!p)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes);
    return p;
}

/* always_inline: GCC would otherwise find the function free of side effects and drop its calls */
static inline __attribute__((always_inline)) void prefetch_state(const chk *k, int r, int c)
{
    if (k->sets) {
        const uint64_t *p = k->sets + ((size_t)r * (size_t)k->CG + (size_t)(c - k->c0)) * k->W;
        __builtin_prefetch(p);
        if (k->W > 8)
            __builtin_prefetch(p + 8);
    } else if (k->bits) {
        uint64_t b = (uint64_t)r * (uint64_t)k->C + (uint64_t)c;
        __builtin_prefetch(k->bits + (b >> 6));
    }
}

static uint64_t *set_of(const chk *k, int r, int c)
{
    return k->sets + ((size_t)r * (size_t)k->CG + (size_t)(c - k->c0)) * k->W;
}

static int pool_get(chk *k)
{
    if (k->n_free)
        return k->pool_free[--k->n_free];
    if (k->pool_used == k->pool_cap) {
        int cap = k->pool_cap ? 2 * k->pool_cap : 1024;
        uint64_t *p = realloc(k->pool, (size_t)cap * k->W * sizeof *p);
        if (!p)
            return -1;
        k->pool = p;
        int *f = realloc(k->pool_free, (size_t)cap * sizeof *f);
        if (!f)
            return -1;
        k->pool_free = f;
        k->pool_cap = cap;
    }
    return k->pool_used++;
}

/* Reducing collectives: the words of a set and the chunks of a group (state_init allocates them). */
static tc_status state_size(chk *k)
{
    k->W = ((size_t)k->R + 63) / 64;
    double bytes = (double)k->R * (double)k->C * (double)k->W * 8.0;
    if (bytes > (double)SET_BYTES_LIMIT)
        return tc_error(k->ctx, TC_ERR_LIMIT, k->name, 0,
                        "checker: contribution sets of %d ranks x %d chunks need %.1f GiB (limit %.0f GiB)",
                        k->R, k->C, bytes / (1u << 30), (double)SET_BYTES_LIMIT / (1u << 30));
    /* swept by chunk groups of about group_bytes of sets (issue 27: 128 MiB of fresh, zeroed pages for a
     * 1024-rank all-reduce cost more than sweeping 16 MiB of them eight times; random reads stay in cache) */
    const size_t gb = k->opts && k->opts->group_bytes ? k->opts->group_bytes : GROUP_BYTES;
    const size_t per_chunk = (size_t)k->R * k->W * sizeof(uint64_t);
    k->CG = gb / per_chunk < 1 ? 1 : gb / per_chunk > (size_t)k->C ? k->C : (int)(gb / per_chunk);
    return TC_OK;
}

static tc_status state_init(chk *k)
{
    const tc_sched *s = k->s;
    if (!k->reduces) {
        uint64_t nbits = (uint64_t)k->R * (uint64_t)k->C;
        if (nbits <= DENSE_BIT_LIMIT) {
            k->bits = zalloc_words((size_t)((nbits + 63) / 64));
            if (!k->bits)
                return nomem(k, "holding bitset");
            for (int c = 0; c < k->C; c++)
                switch (s->coll) {
                case TC_COLL_ALLGATHER:
                case TC_COLL_GATHER: hold(k, c / k->K, c); break;
                case TC_COLL_ALLTOALL: hold(k, c / (k->R * k->K), c); break;
                default: hold(k, s->root, c); break;
                }
        } else {
            size_t cap = 16;
            int bitsz = 4;
            while (cap < 2 * (size_t)s->n_xfers + 16) {
                cap *= 2;
                bitsz++;
            }
            k->hkeys = calloc(cap, sizeof *k->hkeys);
            if (!k->hkeys)
                return nomem(k, "holding hash set");
            k->hmask = cap - 1;
            k->hshift = 64 - bitsz;
        }
        return TC_OK;
    }
    k->sets = zalloc_words((size_t)k->R * (size_t)k->CG * k->W);
    k->slot = malloc(((size_t)s->n_xfers + 1) * sizeof *k->slot);
    if (!k->sets || !k->slot)
        return nomem(k, "contribution sets");
    return TC_OK;
}

/* Reducing state for the chunk group [c0, c0 + CG): every rank contributes to its own sets only (the
 * first group's sets are fresh, zeroed by zalloc_words). */
static void group_init(chk *k, int c0, int first)
{
    const size_t words = (size_t)k->R * (size_t)k->CG * k->W;
    if (!first)
        memset(k->sets, 0, words * sizeof *k->sets);
    k->c0 = c0;
    k->pool_used = k->n_free = 0;
    const int c1 = c0 + k->CG < k->C ? c0 + k->CG : k->C;
    for (int r = 0; r < k->R; r++)
        for (int c = c0; c < c1; c++)
            set_of(k, r, c)[r >> 6] |= 1ull << (r & 63);
}

static void state_free(chk *k)
{
    free(k->bits);
    free(k->hkeys);
    free(k->sets);
    free(k->pool);
    free(k->pool_free);
    free(k->slot);
}

/* ------------------------------------------------------------------------------------------------ */
/* Static checks                                                                                     */

static tc_status check_header(chk *k)
{
    const tc_sched *s = k->s;
    const tc_topo *topo = k->opts ? k->opts->topo : NULL;
    if ((unsigned)s->coll >= TC_COLL_COUNT)
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule: unknown collective %d", (int)s->coll);
    if (s->n_ranks < 1)
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule: %d ranks (at least 1 needed)", s->n_ranks);
    if (s->chunks_per_rank < 1)
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule: %d chunks per rank (at least 1 needed)",
                        s->chunks_per_rank);
    int64_t want = (s->coll == TC_COLL_ALLTOALL)
                       ? (int64_t)s->n_ranks * s->n_ranks * s->chunks_per_rank
                   : (s->coll == TC_COLL_BROADCAST || s->coll == TC_COLL_REDUCE)
                       ? (int64_t)s->chunks_per_rank
                       : (int64_t)s->n_ranks * s->chunks_per_rank;
    if (s->coll == TC_COLL_ALLREDUCE ? s->n_chunks < 1 : (int64_t)s->n_chunks != want)
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0,
                        "schedule: %s on %d ranks with %d chunks per rank needs %lld chunks, not %d",
                        tc_coll_name(s->coll), s->n_ranks, s->chunks_per_rank, (long long)want, s->n_chunks);
    if (tc_coll_rooted(s->coll) && (s->root < 0 || s->root >= s->n_ranks))
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule: root %d out of range (%d ranks)", s->root,
                        s->n_ranks);
    if (s->n_xfers < 0 || (s->n_xfers > 0 && !s->xfers) || s->n_route < 0 || (s->n_route > 0 && !s->route))
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule: corrupt transfer or route table");
    if (topo && topo->n_npus < s->n_ranks)
        return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "schedule has %d ranks but the topology has %d NPUs",
                        s->n_ranks, topo->n_npus);
    return TC_OK;
}

static tc_status check_route(chk *k, int i)
{
    const tc_sched *s = k->s;
    const tc_xfer *x = &s->xfers[i];
    const tc_topo *topo = k->opts ? k->opts->topo : NULL;
    if (x->route_len < 0 || x->route_off < 0 || (int64_t)x->route_off + x->route_len > s->n_route)
        return xfer_error(k, i, x->t_start, "route [%d, +%d) outside the route table (%d entries)",
                          x->route_off, x->route_len, s->n_route);
    int at = x->src;
    for (int h = 0; h < x->route_len; h++) {
        int l = s->route[x->route_off + h];
        if (!topo) {
            if (l < 0)
                return xfer_error(k, i, x->t_start, "route hop %d: negative link id %d", h, l);
            continue;
        }
        if (l < 0 || l >= topo->n_links)
            return xfer_error(k, i, x->t_start, "route hop %d: link %d out of range (topology has %d links)", h,
                              l, topo->n_links);
        const tc_link *L = &topo->links[l];
        if (L->src != at)
            return xfer_error(k, i, x->t_start, "route hop %d: link %d (%d->%d) does not start at %s %d", h, l,
                              L->src, L->dst, at < topo->n_npus ? "rank" : "switch vertex", at);
        at = L->dst;
    }
    if (topo && x->route_len > 0 && at != x->dst)
        return xfer_error(k, i, x->t_start, "route from rank %d ends at %s %d, not at rank %d", x->src,
                          at < topo->n_npus ? "rank" : "switch vertex", at, x->dst);
    return TC_OK;
}

static tc_status check_xfer(chk *k, int i)
{
    const tc_xfer *x = &k->s->xfers[i];
    const tc_topo *topo = k->opts ? k->opts->topo : NULL;
    double t = x->t_start;
    if (x->src < 0 || x->src >= k->R)
        return xfer_error(k, i, t, "src rank %d out of range (%d ranks)", x->src, k->R);
    if (x->dst < 0 || x->dst >= k->R)
        return xfer_error(k, i, t, "dst rank %d out of range (%d ranks)", x->dst, k->R);
    if (x->src == x->dst)
        return xfer_error(k, i, t, "rank %d sends chunk %d to itself", x->src, x->chunk);
    if (x->chunk < 0 || x->chunk >= k->C)
        return xfer_error(k, i, t, "chunk %d out of range (%d chunks)", x->chunk, k->C);
    if (x->op != TC_OP_COPY && x->op != TC_OP_REDUCE)
        return xfer_error(k, i, t, "op %d is neither copy nor reduce", x->op);
    if (x->op == TC_OP_REDUCE && !k->reduces)
        return xfer_error(k, i, t, "reduce of chunk %d into rank %d, but %s does not reduce", x->chunk, x->dst,
                          tc_coll_name(k->s->coll));
    if (x->step < 0)
        return xfer_error(k, i, t, "negative step %d", x->step);
    if (!isfinite(x->t_start) || !isfinite(x->t_end))
        return xfer_error(k, i, t, "time is not a finite number");
    if (before(x->t_end, x->t_start)) {
        char tb[64];
        return xfer_error(k, i, t, "ends at %s, before it starts", when(k, x->t_end, tb, sizeof tb));
    }
    if (topo && x->link >= 0) {
        if (x->link >= topo->n_links)
            return xfer_error(k, i, t, "link %d out of range (topology has %d links)", x->link, topo->n_links);
        const tc_link *L = &topo->links[x->link];
        if (L->src != x->src || L->dst != x->dst)
            return xfer_error(k, i, t, "link %d joins %d->%d, not %d->%d", x->link, L->src, L->dst, x->src,
                              x->dst);
    }
    if (x->link < -1)
        return xfer_error(k, i, t, "link %d out of range (-1 or a link id)", x->link);
    return check_route(k, i);
}

/* ------------------------------------------------------------------------------------------------ */
/* Postconditions                                                                                    */

static tc_status post_error(chk *k, int r, int c, const char *detail)
{
    char tb[64];
    return tc_error(k->ctx, TC_ERR_CHECK, k->name, 0, "postcondition at end (%s): rank %d lacks chunk %d%s",
                    when(k, tc_sched_makespan(k->s), tb, sizeof tb), r, c, detail);
}

static tc_status need_held(chk *k, int r, int c)
{
    if (held(k, r, c))
        return TC_OK;
    return post_error(k, r, c, " (never received)");
}

static tc_status need_full(chk *k, int r, int c)
{
    const uint64_t *set = set_of(k, r, c);
    int missing = -1;
    for (size_t w = 0; w < k->W && missing < 0; w++) {
        uint64_t full = (w + 1 < k->W || k->R % 64 == 0) ? ~0ull : ((1ull << (k->R % 64)) - 1);
        if ((set[w] & full) != full)
            missing = (int)(w * 64) + __builtin_ctzll(~set[w] & full);
    }
    if (missing < 0)
        return TC_OK;
    int have = 0;
    for (size_t w = 0; w < k->W; w++)
        have += __builtin_popcountll(set[w]);
    char d[128];
    snprintf(d, sizeof d, " (holds contributions of %d of %d ranks; rank %d is missing)", have, k->R, missing);
    return post_error(k, r, c, d);
}

/* The postconditions (of the chunk group swept, for reducing collectives); *key orders a failure among the
 * groups' as the search order does: rank-major, chunk-minor. */
static tc_status check_post(chk *k, int64_t *key)
{
    const tc_sched *s = k->s;
    tc_status st = TC_OK;
    const int c1 = k->c0 + k->CG < k->C ? k->c0 + k->CG : k->C;
    switch (s->coll) {
    case TC_COLL_ALLGATHER:
    case TC_COLL_BROADCAST:
        if (k->bits) {
            uint64_t nbits = (uint64_t)k->R * (uint64_t)k->C;
            for (uint64_t w = 0; w < (nbits + 63) / 64; w++) {
                uint64_t full = (w + 1 < (nbits + 63) / 64 || nbits % 64 == 0) ? ~0ull
                                                                              : ((1ull << (nbits % 64)) - 1);
                if ((k->bits[w] & full) != full) {
                    uint64_t b = w * 64 + (uint64_t)__builtin_ctzll(~k->bits[w] & full);
                    return need_held(k, (int)(b / (uint64_t)k->C), (int)(b % (uint64_t)k->C));
                }
            }
            return TC_OK;
        }
        for (int r = 0; r < k->R && !st; r++)
            for (int c = 0; c < k->C && !st; c++)
                st = need_held(k, r, c);
        return st;
    case TC_COLL_GATHER:
        for (int c = 0; c < k->C && !st; c++)
            st = need_held(k, s->root, c);
        return st;
    case TC_COLL_SCATTER:
        for (int c = 0; c < k->C && !st; c++)
            st = need_held(k, c / k->K, c);
        return st;
    case TC_COLL_ALLTOALL: /* rank r needs chunk src*R*K + r*K + j from every src: rank-major order */
        for (int r = 0; r < k->R && !st; r++)
            for (int src = 0; src < k->R && !st; src++)
                for (int j = 0; j < k->K && !st; j++)
                    st = need_held(k, r, (src * k->R + r) * k->K + j);
        return st;
    case TC_COLL_ALLREDUCE:
        for (int r = 0; r < k->R && !st; r++)
            for (int c = k->c0; c < c1 && !st; c++)
                if ((st = need_full(k, r, c)))
                    *key = (int64_t)r * k->C + c;
        return st;
    case TC_COLL_REDUCESCATTER:
    case TC_COLL_REDUCE:
        for (int c = k->c0; c < c1 && !st; c++)
            if ((st = need_full(k, s->coll == TC_COLL_REDUCE ? s->root : c / k->K, c)))
                *key = c;
        return st;
    default: return TC_ERR_INTERNAL;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Symbolic execution                                                                                */

static tc_status depart(chk *k, int i)
{
    const tc_xfer *x = &k->s->xfers[i];
    if (!k->reduces) {
        if (!held(k, x->src, x->chunk))
            return xfer_error(k, i, x->t_start, "rank %d sends chunk %d it does not hold", x->src, x->chunk);
        return TC_OK;
    }
    int p = pool_get(k);
    if (p < 0)
        return nomem(k, "in-flight snapshots");
    memcpy(k->pool + (size_t)p * k->W, set_of(k, x->src, x->chunk), k->W * sizeof *k->pool);
    k->slot[i] = p;
    return TC_OK;
}

static tc_status arrive(chk *k, int i)
{
    const tc_xfer *x = &k->s->xfers[i];
    if (!k->reduces) {
        hold(k, x->dst, x->chunk);
        return TC_OK;
    }
    int p = k->slot[i];
    const uint64_t *carried = k->pool + (size_t)p * k->W;
    uint64_t *dst = set_of(k, x->dst, x->chunk);
    if (x->op == TC_OP_COPY) {
        memcpy(dst, carried, k->W * sizeof *dst);
    } else {
        for (size_t w = 0; w < k->W; w++)
            if (dst[w] & carried[w]) {
                int r = (int)(w * 64) + __builtin_ctzll(dst[w] & carried[w]);
                return xfer_error(k, i, x->t_end, "reduce of chunk %d from rank %d into rank %d double-counts rank %d",
                                  x->chunk, x->src, x->dst, r);
            }
        for (size_t w = 0; w < k->W; w++)
            dst[w] |= carried[w];
    }
    k->pool_free[k->n_free++] = p;
    return TC_OK;
}

/* Sweep the transfers with link >= 0 (and nonzero length) in departure order; a link is busy until the
 * latest t_end among the transfers that used it so far.  Small link ids: one busy slot per link, and the
 * first overlap found is the earliest.  Huge ids (no topology, arbitrary numbers): group by a stable
 * radix sort on the link id and take the earliest overlap over all groups.  key is scratch of n words. */
static tc_status find_link_conflict(chk *k, const int *dep, const int *dep_pos, uint64_t *key, int *conflict,
                                    int *with)
{
    const tc_sched *s = k->s;
    size_t n = (size_t)s->n_xfers;
    int max_link = -1;
    for (size_t i = 0; i < n; i++)
        if (s->xfers[i].link > max_link)
            max_link = s->xfers[i].link;
    if (max_link < 0)
        return TC_OK;
    if ((size_t)max_link <= n + 65536) {
        int *busy = malloc(((size_t)max_link + 1) * sizeof *busy);
        if (!busy)
            return nomem(k, "link table");
        for (int l = 0; l <= max_link; l++)
            busy[l] = -1;
        for (size_t p = 0; p < n; p++) {
            int i = dep[p];
            const tc_xfer *x = &s->xfers[i];
            if (x->link < 0 || !(x->t_end > x->t_start))
                continue;
            int b = busy[x->link];
            if (b >= 0 && before(x->t_start, s->xfers[b].t_end)) {
                *conflict = i;
                *with = b;
                break;
            }
            if (b < 0 || x->t_end > s->xfers[b].t_end)
                busy[x->link] = i;
        }
        free(busy);
        return TC_OK;
    }
    int *lnk = malloc((n + 1) * sizeof *lnk);
    if (!lnk)
        return nomem(k, "link lists");
    size_t nl = 0;
    for (size_t p = 0; p < n; p++) {
        const tc_xfer *x = &s->xfers[dep[p]];
        if (x->link >= 0 && x->t_end > x->t_start) {
            lnk[nl] = dep[p];
            key[nl++] = (uint64_t)x->link;
        }
    }
    sort_tmp tmp = {0};
    int bad = radix_sort(key, lnk, nl, &tmp);
    free(tmp.k);
    free(tmp.v);
    if (bad) {
        free(lnk);
        return nomem(k, "link sort");
    }
    for (size_t a = 0, b; a < nl; a = b) {
        int busy = lnk[a];
        for (b = a + 1; b < nl && key[b] == key[a]; b++) {
            const tc_xfer *x = &s->xfers[lnk[b]];
            if (before(x->t_start, s->xfers[busy].t_end)) {
                if (*conflict < 0 || dep_pos[lnk[b]] < dep_pos[*conflict]) {
                    *conflict = lnk[b];
                    *with = busy;
                }
            }
            if (x->t_end > s->xfers[busy].t_end)
                busy = lnk[b];
        }
    }
    free(lnk);
    return TC_OK;
}

/* The link conflict found before the sweep, reported when the sweep reaches its departure. */
static tc_status conflict_error(chk *k, int x, int with)
{
    const tc_sched *s = k->s;
    const tc_xfer *a = &s->xfers[x], *b = &s->xfers[with];
    const tc_topo *topo = k->opts ? k->opts->topo : NULL;
    int ls = topo ? topo->links[a->link].src : a->src, ld = topo ? topo->links[a->link].dst : a->dst;
    char tb[64];
    return xfer_error(k, x, a->t_start,
                      "link %d (%d->%d) carries chunks %d and %d at the same time (transfer %d holds it until "
                      "%s)",
                      a->link, ls, ld, b->chunk, a->chunk, with, when(k, b->t_end, tb, sizeof tb));
}

/* The events ev[steps[q]] (ev[q] when steps is NULL), q < m, applied in order; at the first violation
 * *at is its index in ev. */
static tc_status sweep(chk *k, const int *ev, const uint32_t *steps, size_t m, size_t *at)
{
    const tc_xfer *xs = k->s->xfers;
    for (size_t q = 0; q < m; q++) {
        /* two stages: the transfer 2 PREFETCH events ahead, then (its fields now cached) the state of the
         * one PREFETCH ahead */
        if (q + 2 * PREFETCH < m) {
            const int e = ev[steps ? steps[q + 2 * PREFETCH] : q + 2 * PREFETCH];
            __builtin_prefetch(&xs[e >= 0 ? e : ~e]);
        }
        if (q + PREFETCH < m) {
            const int e = ev[steps ? steps[q + PREFETCH] : q + PREFETCH];
            const tc_xfer *x = &xs[e >= 0 ? e : ~e];
            prefetch_state(k, e >= 0 ? x->src : x->dst, x->chunk);
        }
        const size_t e_at = steps ? steps[q] : q;
        const int e = ev[e_at];
        tc_status st = e >= 0 ? depart(k, e) : arrive(k, ~e);
        if (st) {
            *at = e_at;
            return st;
        }
    }
    return TC_OK;
}

tc_status tc_sched_check(tc_ctx *ctx, const tc_sched *s, const tc_check_opts *opts, const char *name)
{
    chk k = {.ctx = ctx, .s = s, .opts = opts, .name = name ? name : s->file};
    uint64_t *key = NULL;
    int *dep = NULL, *arr = NULL, *dep_pos = NULL, *ev = NULL;
    uint32_t *steps = NULL, *ev_chunk = NULL;
    sort_tmp tmp = {0};
    size_t *gstart = NULL;
    tc_status st = check_header(&k);
    if (st)
        return st;
    k.R = s->n_ranks;
    k.C = s->n_chunks;
    k.K = s->chunks_per_rank;
    k.reduces = tc_coll_reduces(s->coll);
    for (int i = 0; i < s->n_xfers; i++)
        if ((st = check_xfer(&k, i)))
            return st;

    size_t n = (size_t)s->n_xfers;
    key = malloc((n + 1) * sizeof *key);
    dep = malloc((n + 1) * sizeof *dep);
    arr = malloc((n + 1) * sizeof *arr);
    dep_pos = malloc((n + 1) * sizeof *dep_pos);
    if (!key || !dep || !arr || !dep_pos) {
        st = nomem(&k, "event lists");
        goto fail;
    }
    /* departures by t_start */
    for (size_t i = 0; i < n; i++) {
        dep[i] = (int)i;
        key[i] = time_key(s->xfers[i].t_start);
    }
    if (radix_sort(key, dep, n, &tmp)) {
        st = nomem(&k, "event sort");
        goto fail;
    }
    for (size_t p = 0; p < n; p++)
        dep_pos[dep[p]] = (int)p;
    /* arrivals by t_end, zero-length transfers after the others at equal time */
    size_t m = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if ((s->xfers[i].t_end <= s->xfers[i].t_start) == pass) {
                arr[m] = (int)i;
                key[m++] = time_key(end_of(&s->xfers[i]));
            }
    if (radix_sort(key, arr, n, &tmp)) {
        st = nomem(&k, "event sort");
        goto fail;
    }
    free(tmp.k);
    free(tmp.v);
    tmp.k = NULL;
    tmp.v = NULL;

    /* one chunk per link: the earliest-departing transfer that overlaps another on its link */
    int conflict = -1, conflict_with = -1;
    if (!(opts && opts->no_link_check) && (st = find_link_conflict(&k, dep, dep_pos, key, &conflict, &conflict_with)))
        goto fail;

    /* The event sequence, merged from departures and arrivals by their times and positions only (no
     * state): ev[e] = i for the departure of transfer i, ~i for its arrival, in key's memory (2n + 2 ints,
     * no longer needed).  It ends before the departure of the link conflict, if any: that departure is the
     * violation unless an earlier event is one.  With several chunk groups (below), the chunk of each. */
    ev = (int *)key;
    key = NULL;
    k.c0 = 0;
    k.CG = k.C;
    if (k.reduces && (st = state_size(&k)))
        goto fail;
    const int groups = (k.C + k.CG - 1) / k.CG;
    if (groups > 1 && !(ev_chunk = malloc(2 * (n + 1) * sizeof *ev_chunk))) {
        st = nomem(&k, "event groups");
        goto fail;
    }
    size_t n_ev = 0;
    int conflict_reached = 0;
    for (size_t i = 0, j = 0; i < n || j < n;) {
        int take_arrival = 0;
        if (j < n && dep_pos[arr[j]] < (int)i) { /* a transfer arrives only after it departed */
            if (i >= n)
                take_arrival = 1;
            else {
                const tc_xfer *a = &s->xfers[arr[j]], *d = &s->xfers[dep[i]];
                double ta = end_of(a);
                take_arrival = before(ta, d->t_start) || (!before(d->t_start, ta) && a->t_end > a->t_start);
            }
        }
        const int x = take_arrival ? arr[j] : dep[i];
        if (!take_arrival && x == conflict) {
            conflict_reached = 1;
            break;
        }
        if (ev_chunk)
            ev_chunk[n_ev] = (uint32_t)s->xfers[x].chunk;
        if (take_arrival) {
            ev[n_ev++] = ~x;
            j++;
        } else {
            ev[n_ev++] = x;
            i++;
        }
    }
    free(dep);
    free(arr);
    free(dep_pos);
    dep = arr = dep_pos = NULL;

    if ((st = state_init(&k)))
        goto fail;
    if (groups == 1) {
        size_t at;
        int64_t pk;
        if (k.reduces)
            group_init(&k, 0, 1);
        if (!(st = sweep(&k, ev, NULL, n_ev, &at)))
            st = conflict_reached ? conflict_error(&k, conflict, conflict_with) : check_post(&k, &pk);
        goto fail;
    }
    /* Several chunk groups (a reducing collective whose sets exceed group_bytes): chunks never meet, so
     * each group is swept through its own events; each group's first finding is recorded, and the one
     * the whole sweep meets first is reported: the earliest event, then the link conflict, then the
     * first postcondition in search order. */
    steps = malloc((n_ev + 1) * sizeof *steps);
    gstart = calloc((size_t)groups + 1, sizeof *gstart);
    if (!steps || !gstart) {
        st = nomem(&k, "event groups");
        goto fail;
    }
    for (size_t e = 0; e < n_ev; e++)
        gstart[ev_chunk[e] / (uint32_t)k.CG + 1]++;
    for (int g = 0; g < groups; g++)
        gstart[g + 1] += gstart[g];
    for (size_t e = 0; e < n_ev; e++)
        steps[gstart[ev_chunk[e] / (uint32_t)k.CG]++] = (uint32_t)e;
    for (int g = groups; g > 0; g--)
        gstart[g] = gstart[g - 1];
    gstart[0] = 0;
    free(ev_chunk);
    ev_chunk = NULL;
    tc_ctx quiet = *ctx;
    quiet.sink = tc_diag_record;
    tc_diag_rec rec, first = {0}, post = {0};
    tc_status first_st = TC_OK, post_st = TC_OK;
    size_t first_at = SIZE_MAX;
    int64_t post_key = INT64_MAX;
    for (int g = 0; g < groups; g++) {
        memset(&rec, 0, sizeof rec);
        quiet.sink_user = &rec;
        k.ctx = &quiet;
        group_init(&k, g * k.CG, g == 0);
        size_t at;
        int64_t pk = INT64_MAX;
        tc_status gst = sweep(&k, ev, steps + gstart[g], gstart[g + 1] - gstart[g], &at);
        if (gst && gst != TC_ERR_CHECK) { /* out of memory: reported at once */
            first = rec;
            first_st = gst;
            break;
        }
        if (gst) {
            if (at < first_at) {
                first_at = at;
                first = rec;
                first_st = gst;
            }
        } else if (first_at == SIZE_MAX && !conflict_reached && (gst = check_post(&k, &pk)) && pk < post_key) {
            post_key = pk;
            post = rec;
            post_st = gst;
        }
    }
    k.ctx = ctx;
    if (first_st || (!conflict_reached && post_st)) {
        const tc_diag_rec *r = first_st ? &first : &post; /* its file is k.name (the record's may be cut) */
        st = tc_error(ctx, first_st ? first_st : post_st, r->file[0] ? k.name : NULL, r->line, "%s", r->msg);
    } else if (conflict_reached)
        st = conflict_error(&k, conflict, conflict_with);
fail:
    state_free(&k);
    free(key);
    free(dep);
    free(arr);
    free(dep_pos);
    free(tmp.k);
    free(tmp.v);
    free(ev);
    free(ev_chunk);
    free(steps);
    free(gstart);
    return st;
}
