/* `tacosc info TOPO.xml [--costs F] [--size S]`: summary of a topology and the ideal collective times. */
#include "cli.h"
#include "tacos/sim.h"
#include "tacos/photonic.h"
#include "tacos/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void info_usage(FILE *f)
{
    fprintf(f, "usage: tacosc info TOPO.xml [--costs FILE] [--size BYTES]\n"
               "Print npus, links, classes, switches, nodes, diameter, minimum injection bandwidth, the\n"
               "ideal time (TACOS paper, section V-A) of all-gather, reduce-scatter and all-reduce, and the\n"
               "lower bound of each collective with one chunk per rank (tacosc sim --help says which bounds).\n"
               "  --costs FILE   cost file (man 5 tacosc-costs); default class: 0.5us, 50GB/s\n"
               "  --size BYTES   collective size, K/M/G suffixes (powers of 1024); default 1G\n");
}

static const char *gbps(double bw, char *buf, size_t n)
{
    if (isinf(bw))
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%.3f GB/s", bw / 1e9);
    return buf;
}

int tc_cli_info(int argc, char **argv)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *path = NULL, *costs_path = NULL, *size_arg = "1G";
    tc_topo *t = NULL, *flat = NULL;
    tc_costs *costs = NULL;
    tc_status st = TC_OK;
    int seen_costs = 0, seen_size = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            info_usage(stdout);
            return tc_cli_exit(tc_cli_stdout_close(&ctx));
        } else if (!strcmp(a, "--costs") || !strcmp(a, "--size")) {
            if (i + 1 >= argc)
                return tc_cli_usage(&ctx, "info", "option '%s' needs a value", a);
            int *seen = !strcmp(a, "--costs") ? &seen_costs : &seen_size;
            if ((*seen)++)
                return tc_cli_usage(&ctx, "info", "option '%s' given twice", a);
            if (!strcmp(a, "--costs"))
                costs_path = argv[++i];
            else
                size_arg = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return tc_cli_usage(&ctx, "info", "unknown option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return tc_cli_usage(&ctx, "info", "unexpected argument '%s' (one topology file expected)", a);
        }
    }
    if (!path)
        return tc_cli_usage(&ctx, "info", "no topology file given");
    uint64_t size;
    if (tc_parse_size(size_arg, &size) != TC_OK || size == 0)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                    "info: bad --size '%s' (bytes, optional K/M/G suffix)", size_arg));
    if ((st = tc_topo_read(&ctx, path, &t)) != TC_OK)
        goto done;
    if (costs_path && (st = tc_costs_read(&ctx, costs_path, &costs)) != TC_OK)
        goto done;
    if ((st = tc_topo_apply_costs(&ctx, t, costs)) != TC_OK)
        goto done;
    tc_topo_info in;
    if ((st = tc_topo_info_get(&ctx, t, &in)) != TC_OK)
        goto done;

    char b1[64], b2[160];
    printf("topology        %s (%s)\n", t->name, path);
    printf("npus            %d\n", t->n_npus);
    printf("links           %d directed\n", t->n_links);
    int used = 0;
    for (int k = 0; k < t->n_classes; k++)
        for (int i = 0; i < t->n_links + t->n_switches; i++)
            if ((i < t->n_links ? t->links[i].cls : t->switches[i - t->n_links].cls) == k ||
                (i >= t->n_links && t->switches[i - t->n_links].up_cls == k)) {
                used++;
                break;
            }
    printf("classes         %d used\n", used);
    for (int k = 0; k < t->n_classes; k++) {
        int nl = 0, ns = 0;
        for (int i = 0; i < t->n_links; i++)
            nl += t->links[i].cls == k;
        for (int i = 0; i < t->n_switches; i++)
            ns += t->switches[i].cls == k || t->switches[i].up_cls == k; /* ports, or up links (NIC ports) */
        if (nl + ns == 0)
            continue;
        printf("  %-13s alpha %s  bandwidth %s  links %d  switches %d\n", t->classes[k].name,
               tc_fmt_time(t->classes[k].alpha, b1, sizeof b1), gbps(1.0 / t->classes[k].beta, b2, sizeof b2),
               nl, ns);
        const tc_link_class *c = &t->classes[k];
        if (c->n_at) { /* a size table (man 5 tacosc-costs): its ends; the passes interpolate between */
            char b3[32];
            printf("  %-13s size table: %d point%s, %s at %.0f B .. %s at %.0f B\n", "", c->n_at,
                   c->n_at == 1 ? "" : "s", gbps(1.0 / c->at_beta[0], b2, sizeof b2), c->at_bytes[0],
                   gbps(1.0 / c->at_beta[c->n_at - 1], b3, sizeof b3), c->at_bytes[c->n_at - 1]);
        }
    }
    printf("switches        %d\n", t->n_switches);
    for (int s = 0; s < t->n_switches; s++) {
        const tc_switch *sw = &t->switches[s];
        if (sw->nic) /* issue 25: a NIC shared by its GPUs, its network port class, the PCIe path, GDR */
            printf("  %-13s nic, %d npus  class %s  port %s%s%s  path %s  gdr %s\n", sw->name, sw->n_ports,
                   t->classes[sw->cls].name, sw->up_cls >= 0 ? t->classes[sw->up_cls].name : "none",
                   sw->up >= 0 ? "  up " : "", sw->up >= 0 ? t->switches[sw->up].name : "",
                   sw->path[0] ? sw->path : "-", sw->gdr < 0 ? "-" : sw->gdr ? "on" : "off");
        else if (sw->model == TC_SWITCH_UNWIND)
            printf("  %-13s %d npus  class %s  unwind %d\n", sw->name, sw->n_ports, t->classes[sw->cls].name,
                   sw->unwind > 0 ? sw->unwind : 1);
        else if (sw->up >= 0)
            printf("  %-13s %d npus  class %s  model %s  up %s (class %s)\n", sw->name, sw->n_ports,
                   t->classes[sw->cls].name, tc_switch_model_name((tc_switch_model)sw->model),
                   t->switches[sw->up].name, t->classes[sw->up_cls].name);
        else
            printf("  %-13s %d npus  class %s  model %s\n", sw->name, sw->n_ports, t->classes[sw->cls].name,
                   tc_switch_model_name((tc_switch_model)sw->model));
    }
    if (t->node_of)
        printf("nodes           %d\n", t->n_nodes);
    else
        printf("nodes           none given\n");
    if (t->photonic.present) {
        printf("photonic        ");
        tc_photonic_fabric_describe(t, stdout);
    }
    printf("diameter        %d hops, %s alpha (%s)%s\n", in.diameter, tc_fmt_time(in.diameter_alpha, b1, sizeof b1),
           in.diameter_exact ? "exact" : "sampled lower bound",
           t->n_switches ? ", switches unwound or vertices (their hops count)" : "");
    printf("min injection   %s\n", gbps(in.min_injection_bw, b1, sizeof b1));
    printf("min ejection    %s\n", gbps(in.min_ejection_bw, b1, sizeof b1));
    printf("ideal time for %s (%llu bytes), TACOS paper V-A (not a bound where a cut is slower):\n",
           tc_fmt_bytes((double)size, b1, sizeof b1),
           (unsigned long long)size);
    static const struct { tc_coll c; const char *name; } colls[] = {
        {TC_COLL_ALLGATHER, "all-gather"},
        {TC_COLL_REDUCESCATTER, "reduce-scatter"},
        {TC_COLL_ALLREDUCE, "all-reduce"},
    };
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        double tm = tc_topo_ideal_time(&in, colls[i].c, size, t->n_npus);
        printf("  %-14s %s  (algbw %.3f GB/s)\n", colls[i].name, tc_fmt_time(tm, b1, sizeof b1),
               tm > 0 ? (double)size / tm / 1e9 : 0.0);
    }
    printf("lower bound for %s, one chunk per rank (switches as modelled; see tacosc sim --help):\n",
           tc_fmt_bytes((double)size, b1, sizeof b1));
    if ((st = tc_topo_unwind(&ctx, t, 0, &flat)) != TC_OK)
        goto done;
    tc_status bad = TC_OK; /* a bound that could not be computed has said why: the exit status says so too */
    for (int c = 0; c < TC_COLL_COUNT; c++) {
        tc_sched *probe = NULL;
        tc_bound b;
        tc_status sb = tc_sched_create((tc_coll)c, flat->n_npus, 1, size, &probe);
        if (!sb)
            sb = tc_sim_bound(&ctx, flat, probe, 0, &b);
        if (!sb)
            printf("  %-14s %s  (%s)\n", tc_coll_name((tc_coll)c), tc_fmt_time(b.time, b1, sizeof b1),
                   tc_bound_describe(&b, b2, sizeof b2));
        else if (!bad)
            bad = sb;
        tc_sched_free(probe);
    }
    st = tc_cli_stdout_close(&ctx);
    if (!st)
        st = bad;
done:
    tc_topo_free(flat);
    tc_costs_free(costs);
    tc_topo_free(t);
    return tc_cli_exit(st);
}
