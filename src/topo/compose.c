/*
 * compose: a cluster of N copies of one server (include/tacos/topo.h tc_topo_compose, `tacosc topo import
 * --nodes N` and `tacosc topo compose`).
 *
 * Accepts: a server topology (read or imported; switches kept, not unwound) with at least one <nic>, a node
 *   count >= 1 and the inter-node network: "rail" (one switch per NIC index, rail-optimized as in NVIDIA's
 *   DGX SuperPOD reference designs), "fat-tree" (a leaf switch per server, one spine, the leaf uplink the
 *   server's summed NIC speed / oversubscription) or "switch" (one switch for every NIC).
 * Returns: the cluster, read back through tc_topo_import_finish: NPU k*n + i is server k's local NPU i
 *   (server-major, as a job's ranks), <nodes size="n">; links, classes and switches copied per server with
 *   names "sK.NAME"; each NIC hangs from its network switch by its own port class (upclass).
 * Cost: O(N (n + m + s)) for n NPUs, m links and s switches per server.
 * Trace, a server of 2 GPUs sharing NIC "nic0" (port class net200Gb), --nodes 2, rail: NPUs 0,1 (s0) and
 *   2,3 (s1); switches s0.nic0 (npus 0 1), s1.nic0 (npus 2 3), rail0 (model node) with both NICs hanging
 *   from it by net200Gb: GPU 0 reaches GPU 2 over 0 -> s0.nic0 -> rail0 -> s1.nic0 -> 2.
 */
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

/* --nic-split: every NIC's GPUs move onto the network switch it hangs from, each port of that switch the NIC's
 * port bandwidth divided by its GPUs; the NICs go.  Needs every NIC of a switch alike (GPUs, port class)
 * and switches that hang from nothing (rail, switch). */
static tc_status split_nics(tc_ctx *ctx, tc_topo *t)
{
    for (int s = 0; s < t->n_switches; s++) {
        tc_switch *w = &t->switches[s];
        if (w->nic || w->n_ports)
            continue;
        int k = -1, pc = -1, any = 0;
        for (int c = 0; c < t->n_switches; c++) {
            const tc_switch *x = &t->switches[c];
            if (!x->nic || x->up != s)
                continue;
            if (any && (x->n_ports != k || x->up_cls != pc))
                return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "compose --nic-split: the nics on '%s' differ in "
                                "gpus or port class; compose without --nic-split", w->name);
            k = x->n_ports, pc = x->up_cls, any = 1;
        }
        if (!any)
            continue;
        if (w->up >= 0)
            return tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "compose --nic-split: '%s' hangs from '%s' (a fat "
                            "tree); --nic-split serves --net rail and switch", w->name, t->switches[w->up].name);
        char nm[300];
        int cls;
        snprintf(nm, sizeof nm, "%s-split%d", t->classes[pc].name, k);
        if (tc_topo_class_get(t, nm, &cls) || tc_topo_class_set(t, cls, t->classes[pc].alpha, t->classes[pc].beta * k))
            return TC_ERR_NOMEM;
        for (int i = 0; i < (t->classes[cls].n_at = t->classes[pc].n_at); i++) /* a size table, scaled alike */
            t->classes[cls].at_bytes[i] = t->classes[pc].at_bytes[i], t->classes[cls].at_beta[i] = t->classes[pc].at_beta[i] * k;
        int n = 0;
        for (int c = 0; c < t->n_switches; c++)
            n += t->switches[c].nic && t->switches[c].up == s ? t->switches[c].n_ports : 0;
        int *p = malloc(sizeof(int) * (size_t)(n + 1));
        if (!p)
            return TC_ERR_NOMEM;
        n = 0;
        for (int c = 0; c < t->n_switches; c++)
            if (t->switches[c].nic && t->switches[c].up == s)
                for (int i = 0; i < t->switches[c].n_ports; i++)
                    p[n++] = t->switches[c].npus[i];
        free(w->npus);
        w->npus = p;
        w->n_ports = n;
        w->cls = cls;
        w->alpha = t->classes[cls].alpha;
        w->beta = t->classes[cls].beta;
    }
    int k = 0; /* drop the NICs (none has children) */
    for (int s = 0; s < t->n_switches; s++) {
        if (t->switches[s].nic) {
            free(t->switches[s].name);
            free(t->switches[s].npus);
            continue;
        }
        t->switches[k++] = t->switches[s];
    }
    t->n_switches = k;
    for (int s = 0; s < t->n_switches; s++)
        t->switches[s].up = -1; /* rail and switch networks: nothing hangs any more */
    return TC_OK;
}

/* Server k's copy of every link and switch (switches "sK.NAME" when nodes > 1), its NPUs k*n .. k*n + n-1. */
static tc_status copy_servers(tc_topo *t, const tc_topo *server, int nodes)
{
    const int n = server->n_npus, S = server->n_switches;
    char name[300];
    int *ports = malloc(sizeof(int) * (size_t)(n + 1));
    tc_status st = ports ? TC_OK : TC_ERR_NOMEM;
    for (int k = 0; k < nodes && !st; k++) {
        for (int i = 0; i < n; i++)
            t->node_of[k * n + i] = k;
        for (int l = 0; l < server->n_links && !st; l++) {
            const tc_link *x = &server->links[l];
            st = tc_topo_add_link(t, k * n + x->src, k * n + x->dst, x->cls, x->alpha_set ? x->alpha : -1,
                                  x->beta_set ? x->beta : -1, x->line);
        }
        for (int s = 0; s < S && !st; s++) {
            const tc_switch *w = &server->switches[s];
            for (int p = 0; p < w->n_ports; p++)
                ports[p] = k * n + w->npus[p];
            if (nodes > 1)
                snprintf(name, sizeof name, "s%d.%s", k, w->name);
            else
                snprintf(name, sizeof name, "%s", w->name);
            if ((st = tc_topo_add_switch(t, name, ports, w->n_ports, w->cls, w->unwind, w->line)))
                break;
            tc_switch *v = &t->switches[t->n_switches - 1];
            v->model = w->model;
            v->nic = w->nic;
            v->gdr = w->gdr;
            memcpy(v->path, w->path, sizeof v->path);
            v->up = w->up >= 0 ? k * S + w->up : -1;
            v->up_cls = w->up_cls;
        }
    }
    free(ports);
    return st;
}

/* The network after the servers' switches: rail r for the r-th NIC of each server; a leaf per server and a
 * spine (the leaf uplink a server's summed NIC speed / oversub); or one switch.  nic_idx: per server switch,
 * its index among the NICs (-1 not a NIC). */
static tc_status add_network(tc_topo *t, const tc_topo *server, int nodes, const char *net, double oversub,
                             const int *nic_idx, int n_nic)
{
    const int S = server->n_switches, rail = !strcmp(net, "rail"), fat = !strcmp(net, "fat-tree");
    char name[64];
    int c_up = -1;
    tc_status st = TC_OK;
    if (fat) {
        double sum = 0; /* a server's NIC speeds, B/s */
        int c0 = -1;
        for (int s = 0; s < S; s++)
            if (server->switches[s].nic) {
                sum += 1.0 / server->classes[server->switches[s].up_cls].beta;
                c0 = c0 < 0 ? server->switches[s].up_cls : c0;
            }
        if ((st = tc_topo_class_get(t, "leaf-uplink", &c_up)) ||
            (st = tc_topo_class_set(t, c_up, server->classes[c0].alpha, oversub / sum)))
            return st;
    }
    const int base = t->n_switches, n_net = rail ? n_nic : fat ? nodes + 1 : 1;
    for (int r = 0; r < n_net && !st; r++) {
        int c = -1;
        for (int s = 0; s < S && c < 0; s++) /* its class: the first NIC's port class */
            if (server->switches[s].nic && (!rail || nic_idx[s] == r))
                c = server->switches[s].up_cls;
        if (rail)
            snprintf(name, sizeof name, "rail%d", r);
        else if (fat)
            snprintf(name, sizeof name, r < nodes ? "leaf%d" : "spine", r);
        else
            snprintf(name, sizeof name, "network");
        if ((st = tc_topo_add_switch(t, name, NULL, 0, c, 0, 0)))
            return st;
        t->switches[t->n_switches - 1].model = TC_SWITCH_NODE;
    }
    for (int k = 0; k < nodes; k++)
        for (int s = 0; s < S; s++)
            if (server->switches[s].nic)
                t->switches[k * S + s].up = rail ? base + nic_idx[s] : fat ? base + k : base;
    for (int k = 0; fat && k < nodes; k++) {
        t->switches[base + k].up = base + nodes;
        t->switches[base + k].up_cls = c_up;
    }
    return TC_OK;
}

tc_status tc_topo_compose(tc_ctx *ctx, const tc_topo *server, int nodes, const char *net, double oversub,
                          int nic_split, tc_topo **out)
{
    const int n = server->n_npus, S = server->n_switches;
    const char *file = server->file;
    tc_topo *t = NULL;
    tc_status st = TC_OK;
    int *nic_idx = NULL, n_nic = 0;
    char name[300];
    if (nodes < 1)
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "compose: --nodes must be at least 1, got %d", nodes);
    if (strcmp(net, "rail") && strcmp(net, "fat-tree") && strcmp(net, "switch"))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "compose: network '%s' is not rail, fat-tree or switch", net);
    if (!(oversub >= 1))
        return tc_error(ctx, TC_ERR_INVALID, NULL, 0, "compose: oversubscription must be at least 1, got %g",
                        oversub);
    if ((long long)n * nodes > 10000000)
        return tc_error(ctx, TC_ERR_LIMIT, NULL, 0, "compose: %d servers of %d npus is more than 10000000 npus",
                        nodes, n);
    if (server->n_swnodes)
        return tc_error(ctx, TC_ERR_INVALID, file, 0, "compose: the server is unwound already (give it as read)");
    if (server->node_of && server->n_nodes > 1)
        return tc_error(ctx, TC_ERR_INVALID, file, 0, "compose: the topology has %d servers already; give one",
                        server->n_nodes);
    for (int s = 0; s < S; s++)
        if (server->switches[s].nic && server->switches[s].up_cls < 0)
            return tc_error(ctx, TC_ERR_INVALID, file, server->switches[s].line,
                            "compose: nic '%s' has no upclass (the class of its network port)",
                            server->switches[s].name);
    if (!(nic_idx = malloc(sizeof(int) * (size_t)(S + 1))))
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory composing");
    for (int s = 0; s < S; s++)
        nic_idx[s] = server->switches[s].nic ? n_nic++ : -1;
    if (nodes > 1 && !n_nic) {
        free(nic_idx);
        return tc_error(ctx, TC_ERR_INVALID, file, 0,
                        "compose: the server has no <nic> to join servers by (import a dump that lists NICs, or "
                        "add <nic> elements: man 5 tacosc-topology)");
    }
    snprintf(name, sizeof name, "%s-%dx%d-%s", server->name ? server->name : "server", nodes, n, net);
    if (tc_topo_create(name, n * nodes, &t) || !(t->node_of = malloc(sizeof(int) * (size_t)(n * nodes)))) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    t->n_nodes = nodes;
    for (int k = 0; k < server->n_classes && !st; k++) {
        int c;
        if ((st = tc_topo_class_get(t, server->classes[k].name, &c)))
            break;
        char *nm = t->classes[c].name;
        t->classes[c] = server->classes[k];
        t->classes[c].name = nm;
    }
    if (!st)
        st = copy_servers(t, server, nodes);
    if (!st && nodes > 1)
        st = add_network(t, server, nodes, net, oversub, nic_idx, n_nic);
    if (!st && nic_split && nodes > 1) {
        if (!strcmp(net, "fat-tree"))
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "compose --nic-split: a fat tree's leaves hang from its "
                                                            "spine; --nic-split serves --net rail and switch");
        else
            st = split_nics(ctx, t);
    }
    if (!st)
        st = tc_topo_import_finish(ctx, file ? file : "composed topology", t, out);
done:
    tc_topo_free(t);
    free(nic_idx);
    return st == TC_ERR_NOMEM ? tc_error(ctx, st, NULL, 0, "out of memory composing") : st;
}
