/*
 * split: Tx/Rx limits.  A round whose pairs need more circuits out of an NPU than it has transmitters, or
 * into it than it has receivers, runs as several sub-rounds (PCCL §4.2: "we split the round into multiple
 * rounds until all the connections can be accommodated").
 *
 * Accepts: n distinct directed pairs over n_npus NPUs, tx and rx (0: no limit).
 * Returns: each pair's sub-round and their number k = max over NPUs of ceil(out/tx), ceil(in/rx), the
 *   least possible.  Construction: every NPU's out-side is cut into copies of at most k pairs each (in
 *   pair order) and so is its in-side; the bipartite graph of copies has maximum degree k, so it has a
 *   proper edge colouring with k colours (König), found by inserting pairs one by one and flipping an
 *   alternating a/b path when the free colours at the two ends differ.  A colour is a sub-round: a copy
 *   has at most one pair of each colour and an NPU has ceil(out/k) <= tx out-copies.
 * Cost: O(n (k + V)) time for V copies, O(V k) memory.
 * Limits: pairs must be distinct (a repeated pair is one circuit: merge them first).
 * Trace (tx = rx = 1, pairs 0->1 0->2 1->2): out-degree 2 at NPU 0, in-degree 2 at NPU 2: k = 2;
 *   0->1 colour 0, 0->2 colour 1 (0's copy has 0 taken), 1->2: free at 1's copy is 0, at 2's copy 0
 *   (its colour 1 is taken by 0->2): colour 0.  Sub-rounds {0->1, 1->2} and {0->2}.
 */
#include "tacos/photonic.h"

#include <stdlib.h>
#include <string.h>

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

tc_status tc_photonic_split(const tc_ph_pair *pairs, int n, int n_npus, int tx, int rx, int *part, int *n_parts)
{
    tc_status st = TC_OK;
    int *outdeg = calloc((size_t)n_npus + 1, sizeof *outdeg), *indeg = calloc((size_t)n_npus + 1, sizeof *indeg);
    int *out_base = malloc(((size_t)n_npus + 1) * sizeof *out_base), *in_base = malloc(((size_t)n_npus + 1) * sizeof *in_base);
    int *out_seen = calloc((size_t)n_npus + 1, sizeof *out_seen), *in_seen = calloc((size_t)n_npus + 1, sizeof *in_seen);
    int *end_l = malloc(((size_t)n + 1) * sizeof *end_l), *end_r = malloc(((size_t)n + 1) * sizeof *end_r);
    int *at = NULL; /* at[vertex * k + colour]: pair of that colour at the copy, -1 none */
    if (!outdeg || !indeg || !out_base || !in_base || !out_seen || !in_seen || !end_l || !end_r) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (pairs[i].src < 0 || pairs[i].src >= n_npus || pairs[i].dst < 0 || pairs[i].dst >= n_npus) {
            st = TC_ERR_INVALID;
            goto done;
        }
        outdeg[pairs[i].src]++;
        indeg[pairs[i].dst]++;
    }
    int k = n > 0 ? 1 : 0;
    for (int v = 0; v < n_npus; v++) {
        if (tx > 0 && ceil_div(outdeg[v], tx) > k)
            k = ceil_div(outdeg[v], tx);
        if (rx > 0 && ceil_div(indeg[v], rx) > k)
            k = ceil_div(indeg[v], rx);
    }
    if (k <= 1) {
        for (int i = 0; i < n; i++)
            part[i] = 0;
        *n_parts = k;
        goto done;
    }
    /* copies: NPU v's out-side has ceil(outdeg/k) copies (left ids), in-side ceil(indeg/k) (right ids) */
    int L = 0, R = 0;
    for (int v = 0; v < n_npus; v++) {
        out_base[v] = L;
        L += ceil_div(outdeg[v], k);
        in_base[v] = R;
        R += ceil_div(indeg[v], k);
    }
    for (int i = 0; i < n; i++) {
        end_l[i] = out_base[pairs[i].src] + out_seen[pairs[i].src]++ / k;
        end_r[i] = L + in_base[pairs[i].dst] + in_seen[pairs[i].dst]++ / k;
    }
    const long long V = (long long)L + R;
    at = malloc((size_t)(V * k) * sizeof *at);
    if (!at) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    memset(at, 0xff, (size_t)(V * k) * sizeof *at);
    for (int i = 0; i < n; i++) {
        const int u = end_l[i], v = end_r[i];
        int a = 0, b = 0;
        while (at[(long long)u * k + a] >= 0)
            a++;
        while (at[(long long)v * k + b] >= 0)
            b++;
        if (at[(long long)v * k + a] >= 0) {
            /* a is taken at v: flip the a/b alternating path starting at v (it cannot reach u) */
            int x = v, c1 = a, c2 = b;
            int e = at[(long long)x * k + c1];
            /* collect the path first, then recolour */
            int len = 0, cap = 16;
            int *path = malloc((size_t)cap * sizeof *path);
            if (!path) {
                st = TC_ERR_NOMEM;
                goto done;
            }
            while (e >= 0) {
                if (len == cap) {
                    int *p = realloc(path, (size_t)(cap *= 2) * sizeof *p);
                    if (!p) {
                        free(path);
                        st = TC_ERR_NOMEM;
                        goto done;
                    }
                    path = p;
                }
                path[len++] = e;
                x = end_l[e] == x ? end_r[e] : end_l[e];
                int t = c1;
                c1 = c2;
                c2 = t;
                e = at[(long long)x * k + c1];
            }
            for (int j = 0; j < len; j++) { /* clear, then set the swapped colours */
                int e2 = path[j];
                at[(long long)end_l[e2] * k + part[e2]] = -1;
                at[(long long)end_r[e2] * k + part[e2]] = -1;
            }
            for (int j = 0; j < len; j++) {
                int e2 = path[j];
                part[e2] = part[e2] == a ? b : a;
                at[(long long)end_l[e2] * k + part[e2]] = e2;
                at[(long long)end_r[e2] * k + part[e2]] = e2;
            }
            free(path);
        }
        part[i] = a;
        at[(long long)u * k + a] = i;
        at[(long long)v * k + a] = i;
    }
    *n_parts = k;
done:
    free(outdeg);
    free(indeg);
    free(out_base);
    free(in_base);
    free(out_seen);
    free(in_seen);
    free(end_l);
    free(end_r);
    free(at);
    return st;
}
