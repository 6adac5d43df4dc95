/*
 * mcast: transfers that share their hop into a multicast switch (include/tacos/sim.h, "Switches").
 *
 * Accepts: a schedule and its topology (switch vertices of tc_topo_unwind, some of them multicast).
 * Returns: per transfer its leader, or NULL when no two transfers share a hop (the usual case: no
 *   multicast switch, or no chunk sent from one source to several NPUs through one).  Transfers of one
 *   chunk from one source with the same start time whose routes begin with the same link into a multicast
 *   switch vertex are one multicast: the chunk crosses that link once.  The leader is the first of them
 *   in issue order (t_start, step, index); it carries the shared hop, the others (followers) continue from
 *   its arrival at the switch.
 * Cost: O(M log M) for the sort of the candidates, O(M) memory.
 * Trace: chunk 3 from NPU 0 to NPUs 1 and 2 through multicast switch vertex 4, both transfers starting at
 *   t: routes [0->4, 4->1] and [0->4, 4->2]; the second's leader is the first: link 0->4 carries chunk 3
 *   once, then 4->1 and 4->2 carry it in parallel.
 */
#include "sim_int.h"

#include <stdlib.h>

typedef struct mkey {
    double t;
    int link, src, chunk, step, x;
} mkey;

static int cmp_mkey(const void *a, const void *b)
{
    const mkey *p = a, *q = b;
    if (p->link != q->link)
        return p->link < q->link ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    if (p->chunk != q->chunk)
        return p->chunk < q->chunk ? -1 : 1;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    if (p->step != q->step)
        return p->step < q->step ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

tc_status tc_sim_mcast_leaders(const tc_sched *s, const tc_topo *t, int **out)
{
    *out = NULL;
    int any = 0;
    for (int k = 0; k < t->n_swnodes && !any; k++)
        any = t->swnodes[k].multicast;
    if (!any)
        return TC_OK;
    const int M = s->n_xfers;
    mkey *c = malloc(((size_t)M + 1) * sizeof *c);
    if (!c)
        return TC_ERR_NOMEM;
    int n = 0;
    for (int x = 0; x < M; x++) {
        const tc_xfer *y = &s->xfers[x];
        if (y->route_len < 2 || y->route_off < 0 || y->route_off + y->route_len > s->n_route)
            continue;
        const int l = s->route[y->route_off];
        if (l < 0 || l >= t->n_links)
            continue;
        const int v = t->links[l].dst;
        if (v >= t->n_npus && v < tc_topo_n_vertices(t) && t->swnodes[v - t->n_npus].multicast)
            c[n++] = (mkey){y->t_start, l, y->src, y->chunk, y->step, x};
    }
    qsort(c, (size_t)n, sizeof *c, cmp_mkey);
    int *lead = NULL, shared = 0;
    for (int i = 1; i < n && !shared; i++)
        shared = c[i].link == c[i - 1].link && c[i].src == c[i - 1].src && c[i].chunk == c[i - 1].chunk &&
                 c[i].t == c[i - 1].t;
    if (shared) {
        if (!(lead = malloc(((size_t)M + 1) * sizeof *lead))) {
            free(c);
            return TC_ERR_NOMEM;
        }
        for (int x = 0; x < M; x++)
            lead[x] = x;
        for (int i = 1, head = 0; i < n; i++) {
            if (c[i].link == c[head].link && c[i].src == c[head].src && c[i].chunk == c[head].chunk &&
                c[i].t == c[head].t)
                lead[c[i].x] = c[head].x;
            else
                head = i;
        }
    }
    free(c);
    *out = lead;
    return TC_OK;
}
