/* `tacosc topo import FILE [options]` and `tacosc topo compose TOPO.xml --nodes N [options]`: the topology a
 * runtime detected (NCCL/RCCL dump, nvidia-smi topo -m, rocm-smi --showtopo) as tacosc XML, and N servers
 * joined into one cluster (src/topo/import.c, import_smi.c, compose.c). */
#include "cli.h"
#include "tacos/topo.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void import_usage(FILE *f, int compose)
{
    if (compose)
        fprintf(f, "usage: tacosc topo compose SERVER.xml --nodes N [--net rail|fat-tree|switch]\n"
                   "                           [--oversubscription R] [--nic-split] [-o FILE]\n"
                   "Join N copies of one server (a tacosc topology with <nic> elements) into a cluster.\n");
    else
        fprintf(f, "usage: tacosc topo import FILE [--nodes N] [--net rail|fat-tree|switch] [--oversubscription R]\n"
                   "                          [--sm N] [--gcn GFX] [--nic-speed B] [--pcie B] [-o FILE]\n"
                   "Write the topology a runtime detected as tacosc XML (man 5 tacosc-topology): NCCL's topology\n"
                   "dump (NCCL_TOPO_DUMP_FILE), RCCL's, `nvidia-smi topo -m` or `rocm-smi --showtopo` text, told\n"
                   "apart by content.  Bandwidths are the runtime's tables (NVLink per SM, XGMI per gfx, PCIe per\n"
                   "generation and width, NIC speed in Mb/s).\n"
                   "  --sm N             text input: compute capability x 10 (70 V100, 80 A100, 90 H100); default\n"
                   "                     from the NV# counts\n"
                   "  --gcn GFX          rocm-smi input: gfx name (default gfx942, MI300X)\n"
                   "  --nic-speed B      text input: NIC speed, e.g. 400Gb/s (default NCCL's fallback, 10000Mb/s)\n"
                   "  --pcie B           text input: PCIe link bandwidth (default by SM: Gen3/4/5 x16)\n");
    fprintf(f, "  --nodes N          servers in the cluster (ranks server-major: rank = server * GPUs + local)\n"
               "  --net KIND         inter-server network: rail (one switch per NIC index, default), fat-tree\n"
               "                     (a leaf per server, one spine), switch (one switch)\n"
               "  --oversubscription R  fat-tree: leaf uplink = a server's summed NIC speed / R (default 1)\n"
               "  --nic-split        rail, switch: GPUs on the network switch directly, each a share of its NIC\n"
               "                     (static; the TACOS synthesizer can use it; default: NIC vertices, shared)\n"
               "  -o FILE            output file (stdout without -o)\n");
}

enum { O_NODES = 256, O_NET, O_OVER, O_SM, O_GCN, O_NIC, O_PCIE, O_SPLIT };

int tc_cli_topo_import(int argc, char **argv, int compose)
{
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *cmd = compose ? "topo compose" : "topo import";
    static const struct option lo[] = {
        {"nodes", required_argument, NULL, O_NODES},    {"net", required_argument, NULL, O_NET},
        {"oversubscription", required_argument, NULL, O_OVER}, {"sm", required_argument, NULL, O_SM},
        {"gcn", required_argument, NULL, O_GCN},        {"nic-speed", required_argument, NULL, O_NIC},
        {"pcie", required_argument, NULL, O_PCIE},      {"output", required_argument, NULL, 'o'},
        {"nic-split", no_argument, NULL, O_SPLIT},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0},
    };
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    tc_import_opts io = {0};
    const char *outp = "-", *net = "rail", *path = NULL;
    int nodes = 1, c;
    double over = 1;
    tc_status st = TC_OK;
    tc_topo *t = NULL, *u = NULL;
    optind = 1;
    while ((c = tc_cli_getopt(&ctx, cmd, argc, argv, "ho:", lo, seen, NULL)) != -1) {
        double v;
        switch (c) {
        case -2: return 2;
        case 'h':
            import_usage(stdout, compose);
            return tc_cli_exit(tc_cli_stdout_close(&ctx));
        case 'o': outp = optarg; break;
        case O_SPLIT: break;
        case O_NODES:
            if ((st = tc_cli_parse_int(&ctx, "nodes", optarg, 1, 100000, &nodes)))
                return tc_cli_exit(st);
            break;
        case O_NET:
            if (strcmp(optarg, "rail") && strcmp(optarg, "fat-tree") && strcmp(optarg, "switch"))
                return tc_cli_usage(&ctx, cmd, "--net '%s' is not rail, fat-tree or switch", optarg);
            net = optarg;
            break;
        case O_OVER: {
            char *end;
            if (tc_parse_decimal(optarg, &end, &v) || *end || !(v >= 1) || v > 1e6)
                return tc_cli_usage(&ctx, cmd, "--oversubscription '%s' is not a ratio of at least 1", optarg);
            over = v;
            break;
        }
        case O_SM:
            if (compose)
                return tc_cli_usage(&ctx, cmd, "--sm is an import option");
            if ((st = tc_cli_parse_int(&ctx, "sm", optarg, 30, 1000, &io.sm)))
                return tc_cli_exit(st);
            break;
        case O_GCN:
            if (compose || strncmp(optarg, "gfx", 3))
                return tc_cli_usage(&ctx, cmd, "--gcn '%s': a gfx name such as gfx942 (import only)", optarg);
            io.gcn = optarg;
            break;
        case O_NIC:
        case O_PCIE:
            if (compose)
                return tc_cli_usage(&ctx, cmd, "%s is an import option", c == O_NIC ? "--nic-speed" : "--pcie");
            if (tc_parse_bandwidth(optarg, &v) || !(v > 0))
                return tc_cli_usage(&ctx, cmd, "%s '%s' is not a bandwidth (400Gb/s, 50GB/s, ...)",
                                    c == O_NIC ? "--nic-speed" : "--pcie", optarg);
            *(c == O_NIC ? &io.nic_bw : &io.pcie_bw) = v;
            break;
        default: return 2;
        }
    }
    if (optind >= argc)
        return tc_cli_usage(&ctx, cmd, "no input file given");
    if (optind + 1 < argc)
        return tc_cli_usage(&ctx, cmd, "unexpected argument '%s' (one input file)", argv[optind + 1]);
    path = argv[optind];
    if (compose && !seen[O_NODES])
        return tc_cli_usage(&ctx, cmd, "--nodes N is required");
    if ((seen[O_NET] || seen[O_OVER]) && nodes < 2)
        tc_warn(&ctx, NULL, 0, "--net and --oversubscription have no effect on one server (give --nodes)");
    if (seen[O_OVER] && strcmp(net, "fat-tree"))
        return tc_cli_usage(&ctx, cmd, "--oversubscription is for --net fat-tree");
    if (compose)
        st = tc_topo_read(&ctx, path, &t);
    else
        st = tc_topo_import(&ctx, path, &io, &t);
    if (st)
        goto done;
    if (compose || nodes > 1) {
        if ((st = tc_topo_compose(&ctx, t, nodes, net, over, seen[O_SPLIT], &u)))
            goto done;
        tc_topo_free(t);
        t = u;
        u = NULL;
    }
    tc_cli_out o;
    if ((st = tc_cli_open_output(&ctx, outp, &o)))
        goto done;
    st = tc_topo_write(&o.ctx, t, o.f);
    tc_status st2 = tc_cli_close_output(&o, st == TC_OK);
    if (!st)
        st = st2;
done:
    tc_topo_free(t);
    tc_topo_free(u);
    return tc_cli_exit(st);
}
