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

tc_status tc_topo_compose(tc_ctx *ctx, const tc_topo *server, int nodes, const char *net, double oversub,
                          int nic_split, tc_topo **out)
{
    const int n = server->n_npus, S = server->n_switches;
    const char *file = server->file;
    tc_topo *t = NULL;
    tc_status st = TC_OK;
    int *map = NULL, *nic_idx = NULL, n_nic = 0;
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
    for (int s = 0; s < S; s++)
        if (server->switches[s].nic && server->switches[s].up_cls < 0) {
            st = tc_error(ctx, TC_ERR_INVALID, file, server->switches[s].line,
                          "compose: nic '%s' has no upclass (the class of its network port)",
                          server->switches[s].name);
            free(nic_idx);
            return st;
        }
    snprintf(name, sizeof name, "%s-%dx%d-%s", server->name ? server->name : "server", nodes, n, net);
    if (tc_topo_create(name, n * nodes, &t) || !(map = malloc(sizeof(int) * (size_t)(S + 1)))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    for (int k = 0; k < server->n_classes; k++) {
        int c;
        if (tc_topo_class_get(t, server->classes[k].name, &c)) {
            st = TC_ERR_NOMEM;
            goto fail;
        }
        char *nm = t->classes[c].name;
        t->classes[c] = server->classes[k];
        t->classes[c].name = nm;
    }
    if (!(t->node_of = malloc(sizeof(int) * (size_t)(n * nodes)))) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    t->n_nodes = nodes;
    int *ports = malloc(sizeof(int) * (size_t)(n + nodes * (n_nic + 1) + 1));
    if (!ports) {
        st = TC_ERR_NOMEM;
        goto fail;
    }
    /* the network switches first go after the servers' own: remember where each server's start */
    for (int k = 0; k < nodes; k++) {
        for (int i = 0; i < n; i++)
            t->node_of[k * n + i] = k;
        for (int l = 0; l < server->n_links; l++) {
            const tc_link *x = &server->links[l];
            if ((st = tc_topo_add_link(t, k * n + x->src, k * n + x->dst, x->cls, x->alpha_set ? x->alpha : -1,
                                       x->beta_set ? x->beta : -1, x->line)))
                break;
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
        if (st)
            break;
    }
    if (st) {
        free(ports);
        goto fail;
    }
    if (nodes > 1) {
        /* the network: rail r = the r-th NIC of each server; fat-tree leaves + spine; or one switch */
        int c_up = -1;
        if (!strcmp(net, "fat-tree")) {
            double sum = 0; /* a server's NIC speeds, B/s */
            for (int s = 0; s < S; s++)
                if (server->switches[s].nic)
                    sum += 1.0 / server->classes[server->switches[s].up_cls].beta;
            int c0 = -1;
            for (int s = 0; s < S && c0 < 0; s++)
                if (server->switches[s].nic)
                    c0 = server->switches[s].up_cls;
            snprintf(name, sizeof name, "leaf-uplink");
            if ((st = tc_topo_class_get(t, name, &c_up)) ||
                (st = tc_topo_class_set(t, c_up, server->classes[c0].alpha, oversub / sum))) {
                free(ports);
                goto fail;
            }
        }
        const int base = t->n_switches;
        const int n_net = !strcmp(net, "rail") ? n_nic : !strcmp(net, "fat-tree") ? nodes + 1 : 1;
        for (int r = 0; r < n_net && !st; r++) {
            int c = -1;
            for (int s = 0; s < S && c < 0; s++) /* its class: the first NIC's port class */
                if (server->switches[s].nic && (strcmp(net, "rail") || nic_idx[s] == r))
                    c = server->switches[s].up_cls;
            if (!strcmp(net, "rail"))
                snprintf(name, sizeof name, "rail%d", r);
            else if (!strcmp(net, "fat-tree"))
                snprintf(name, sizeof name, r < nodes ? "leaf%d" : "spine", r);
            else
                snprintf(name, sizeof name, "network");
            if ((st = tc_topo_add_switch(t, name, NULL, 0, c, 0, 0)))
                break;
            t->switches[t->n_switches - 1].model = TC_SWITCH_NODE;
        }
        for (int k = 0; k < nodes && !st; k++)
            for (int s = 0; s < S; s++) {
                if (!server->switches[s].nic)
                    continue;
                tc_switch *v = &t->switches[k * S + s];
                v->up = !strcmp(net, "rail") ? base + nic_idx[s] : !strcmp(net, "fat-tree") ? base + k : base;
            }
        if (!st && !strcmp(net, "fat-tree"))
            for (int k = 0; k < nodes; k++) {
                t->switches[base + k].up = base + nodes;
                t->switches[base + k].up_cls = c_up;
            }
    }
    free(ports);
    if (!st && nic_split && nodes > 1) {
        if (!strcmp(net, "fat-tree"))
            st = tc_error(ctx, TC_ERR_UNSUPPORTED, NULL, 0, "compose --nic-split: a fat tree's leaves hang from its "
                                                            "spine; --nic-split serves --net rail and switch");
        else
            st = split_nics(ctx, t);
    }
    if (st)
        goto fail;
    st = tc_topo_import_finish(ctx, file ? file : "composed topology", t, out);
    tc_topo_free(t);
    free(map);
    free(nic_idx);
    return st;
fail:
    tc_topo_free(t);
    free(map);
    free(nic_idx);
    return st == TC_ERR_NOMEM ? tc_error(ctx, st, NULL, 0, "out of memory composing") : st;
}
