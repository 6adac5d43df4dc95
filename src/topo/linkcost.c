/*
 * One function prices a link (man 5 tacosc-costs, SIZE TABLES).
 *
 * Accepts: a topology and one of its links, and the bytes of one message over it.
 * Returns: the link's beta at that size, tc_link_beta_at (inline in topo.h: exactly the link's beta when its
 *   class has no size table), its cost alpha + beta(bytes) * bytes (tc_link_cost), and its fastest beta
 *   over every size (tc_link_beta_min, for lower bounds).
 * Cost: a class with a table (points (s_i, b_i), increasing s_i) has, at S bytes,
 *   table(S) = b_0 for S <= s_0, b_last for S >= s_last, else b_i + (b_(i+1) - b_i) w with
 *   w = (log2 S - log2 s_i) / (log2 s_(i+1) - log2 s_i) for s_i <= S <= s_(i+1):
 *   linear in log2 of the size, clamped to the end points.  A link of the class has beta(S) = its beta x
 *   table(S) / class beta, so links with their own beta (an override, an unwound switch's beta x d, a
 *   split NIC's share) keep their ratio to the class at every size.  The interpolation never leaves
 *   [min b_i, max b_i]: the smallest b_i is the class's fastest beta, the one a lower bound may use.
 * Trace: points (1 MiB, 4e-10), (4 MiB, 2e-10): table(2 MiB) = 4e-10 + (2e-10 - 4e-10) x 1/2 = 3e-10;
 *   table(512 KiB) = 4e-10; table(1 GiB) = 2e-10.
 */
#include "tacos/topo.h"

#include <math.h>

double tc_class_beta_at(const tc_link_class *k, double bytes)
{
    const int n = k->n_at;
    if (n == 0)
        return k->beta;
    if (!(bytes > k->at_bytes[0]))
        return k->at_beta[0];
    if (bytes >= k->at_bytes[n - 1])
        return k->at_beta[n - 1];
    int i = 0;
    while (i + 2 < n && bytes >= k->at_bytes[i + 1])
        i++;
    const double x0 = log2(k->at_bytes[i]), x1 = log2(k->at_bytes[i + 1]);
    const double w = (log2(bytes) - x0) / (x1 - x0);
    return k->at_beta[i] + (k->at_beta[i + 1] - k->at_beta[i]) * w;
}

double tc_link_beta_table(const tc_topo *t, const tc_link *l, double bytes)
{
    const tc_link_class *k = &t->classes[l->cls];
    const double b = tc_class_beta_at(k, bytes);
    return l->beta == k->beta ? b : l->beta * (b / k->beta);
}

double tc_class_beta_min(const tc_link_class *k)
{
    double b = k->n_at ? k->at_beta[0] : k->beta;
    for (int i = 1; i < k->n_at; i++)
        if (k->at_beta[i] < b)
            b = k->at_beta[i];
    return b;
}

double tc_link_beta_min(const tc_topo *t, const tc_link *l)
{
    const tc_link_class *k = &t->classes[l->cls];
    if (!k->n_at)
        return l->beta;
    const double b = tc_class_beta_min(k);
    return l->beta == k->beta ? b : l->beta * (b / k->beta);
}

int tc_topo_has_tables(const tc_topo *t)
{
    for (int i = 0; i < t->n_classes; i++)
        if (t->classes[i].n_at)
            return 1;
    return 0;
}
