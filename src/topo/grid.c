/*
 * Grid recognition: is a topology a torus or mesh, and of which dimensions (see tc_topo_grid_dims in
 * tacos/topo.h).  It belongs to the topology: the grid generators (swing, bucket), the lower bound and the
 * SVG layout all ask it, so neither the simulator nor the generators call into each other for it.
 */
#include "tacos/topo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int linked(const tc_topo *t, int a, int b)
{
    return tc_topo_link_between(t, a, b) >= 0;
}

/* Is `t` a torus or mesh with these dims, dims[0] varying fastest? */
static int grid_matches(const tc_topo *t, const int *dims, int nd)
{
    for (int v = 0; v < t->n_npus; v++) {
        int stride = 1;
        for (int d = 0; d < nd; d++) {
            const int c = (v / stride) % dims[d];
            if (dims[d] > 1 && c + 1 < dims[d]) {
                const int u = v + stride;
                if (!linked(t, v, u) || !linked(t, u, v))
                    return 0;
            }
            stride *= dims[d];
        }
    }
    return 1;
}

/* Does every link of `t` join grid neighbours of dims (dims[0] fastest): one coordinate apart by 1, or
 * by the wrap-around of a torus? */
static int grid_exact(const tc_topo *t, const int *dims, int nd)
{
    for (int l = 0; l < t->n_links; l++) {
        int a = t->links[l].src, b = t->links[l].dst, moved = 0;
        for (int d = 0; d < nd; d++) {
            const int ca = a % dims[d], cb = b % dims[d], dd = ((cb - ca) % dims[d] + dims[d]) % dims[d];
            a /= dims[d];
            b /= dims[d];
            if (dd && (moved++ || (dd != 1 && dd != dims[d] - 1)))
                return 0;
        }
        if (moved != 1)
            return 0;
    }
    return 1;
}

/*
 * The dimensions from the links alone: NPU 0's neighbours along dimension d are the stride of d and, on a
 * torus, (n_d - 1) times it, so each next stride is one of its neighbours (or the NPU count, to close).
 * Try them in increasing order from `stride` (dims[0..nd) chosen); a grid of at least two dimensions whose
 * links are exactly the grid's wins.
 */
static int grid_search(const tc_topo *t, int stride, int *dims, int nd)
{
    const int n = t->n_npus;
    if (stride == n)
        return nd >= 2 && grid_exact(t, dims, nd) && grid_matches(t, dims, nd) ? nd : 0;
    if (nd == 8)
        return 0;
    int last = stride; /* candidates ascending, each once: the smallest neighbour or n above `last` */
    for (;;) {
        int c = n;
        for (int k = t->out_off[0]; k < t->out_off[1]; k++) {
            const int v = t->links[t->out_link[k]].dst;
            if (v > last && v < c)
                c = v;
        }
        if (c % stride == 0 && n % c == 0) {
            dims[nd] = c / stride;
            const int found = grid_search(t, c, dims, nd + 1);
            if (found)
                return found;
        }
        if (c == n)
            return 0;
        last = c;
    }
}

int tc_topo_grid_dims(const tc_topo *topo, int dims[8])
{
    const char *s = topo->name ? topo->name : "";
    if (!topo->out_off)
        return 0;
    for (size_t i = 0; s[i]; i++) {
        if (!isdigit((unsigned char)s[i]) || (i > 0 && isdigit((unsigned char)s[i - 1])))
            continue;
        int d[8], nd = 0;
        const char *q = s + i;
        long prod = 1;
        while (nd < 8) {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q || v < 1 || v > 1 << 20)
                break;
            d[nd++] = (int)v;
            prod *= v;
            if (prod > 1 << 24)
                break;
            if (*end != 'x' || !isdigit((unsigned char)end[1])) {
                q = end;
                break;
            }
            q = end + 1;
        }
        if (nd < 2 || prod != topo->n_npus)
            continue;
        int rev[8], m = 0;
        for (int k = nd - 1; k >= 0; k--)
            rev[m++] = d[k];
        /* drop dimensions of size 1 */
        int nd2 = 0, e[8];
        for (int order = 0; order < 2; order++) {
            const int *src = order == 0 ? rev : d;
            nd2 = 0;
            for (int k = 0; k < nd; k++)
                if (src[k] > 1)
                    e[nd2++] = src[k];
            if (nd2 >= 1 && grid_matches(topo, e, nd2)) {
                memcpy(dims, e, (size_t)nd2 * sizeof *e);
                return nd2;
            }
        }
    }
    /* a grid of at most 8 dimensions gives NPU 0 at most 16 neighbours (64 links: parallel ones allowed);
     * more, and it is no grid: the search below never starts on a densely linked topology */
    if (topo->out_off[1] - topo->out_off[0] > 64)
        return 0;
    int e[8];
    const int nd = grid_search(topo, 1, e, 0);
    if (nd)
        memcpy(dims, e, (size_t)nd * sizeof *e);
    return nd;
}
