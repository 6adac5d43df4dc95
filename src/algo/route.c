/* Routing of logical transfers on a physical topology, shared by the classic generators. */
#include "tacos/algo.h"
#include "tacos/topo.h"

#include <stdlib.h>

tc_status tc_algo_add_routed(tc_sched *s, const tc_topo *topo, int src, int dst, int chunk, tc_op op,
                             int step, double t_start, double t_end)
{
    int buf[256];
    int *links = buf;
    int n = tc_topo_shortest_path(topo, src, dst, links, 256);
    if (n > 256) {
        links = malloc((size_t)n * sizeof *links);
        if (!links)
            return TC_ERR_NOMEM;
        n = tc_topo_shortest_path(topo, src, dst, links, n);
    }
    tc_status st;
    if (n < 1)
        st = TC_ERR_INVALID;
    else if (n == 1)
        st = tc_sched_add(s, src, dst, chunk, op, links[0], step, t_start, t_end, NULL, 0);
    else
        st = tc_sched_add(s, src, dst, chunk, op, -1, step, t_start, t_end, links, n);
    if (links != buf)
        free(links);
    return st;
}

tc_status tc_algo_route_cost(const tc_topo *topo, int src, int dst, double *alpha, double *beta)
{
    int buf[256];
    int *links = buf;
    int n = tc_topo_shortest_path(topo, src, dst, links, 256);
    if (n > 256) {
        links = malloc((size_t)n * sizeof *links);
        if (!links)
            return TC_ERR_NOMEM;
        n = tc_topo_shortest_path(topo, src, dst, links, n);
    }
    double a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        a += topo->links[links[i]].alpha;
        if (topo->links[links[i]].beta > b)
            b = topo->links[links[i]].beta;
    }
    if (links != buf)
        free(links);
    if (n < 1)
        return TC_ERR_INVALID;
    *alpha = a;
    *beta = b;
    return TC_OK;
}
