/* tacosc verify PLAN: check a JSON schedule or an MSCCL XML program. */
#include "cli.h"
#include "tacos/emit.h"
#include "tacos/msccl.h"
#include "tacos/mscclpp.h"
#include "tacos/photonic.h"
#include "tacos/sparse.h"
#include "tacos/topo.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: tacosc verify PLAN [--topo TOPO.xml [--costs FILE] [--unwind D] [--switch-model M]]\n"
          "                     [--target nccl|rccl|common|tacos-run] [--max-channels N] [--size BYTES]\n"
          "\n"
          "Verify a schedule.  A JSON plan is checked by symbolic execution (causality, double counting,\n"
          "one chunk per link at a time, the collective's postcondition); with --topo its links and routes\n"
          "must exist in that topology (switches unwound with degree D, default the degree the plan records,\n"
          "else each switch's own; switches modelled as M, unwind, node or multicast, default the model the\n"
          "plan records, else each switch's own).  It must also lower to the program tacos-run replays\n"
          "(FIFO connections), so a plan that verifies replays.  Its sparse section's decisions must be\n"
          "ones the sparse pass can make (format, threshold, exact size at its dtype; man tacosc).\n"
          "An MSCCL XML plan is checked for the runtime's structural rules, matched send/receive sequences,\n"
          "deadlock freedom and the collective's result, within a runtime's limits: --target nccl or rccl for\n"
          "one runtime (--max-channels N: the device's channel limit, rccl default 20), common (default) for\n"
          "what both refuse, tacos-run for none (man 5 tacosc-msccl).\n"
          "An MSCCL++ execution plan (JSON with \"gpus\", man 5 tacosc-mscclpp) is checked for the plan\n"
          "loader's rules and limits, channel and buffer references, the thread-sync rule, deadlock freedom\n"
          "and, by symbolic execution in three orders of the thread blocks, the collective's result;\n"
          "--size BYTES also applies the executor's message-size rule at that collective size.\n"
          "The format is told by content (JSON starts with '{').\n"
          "Exit status 0 when the plan is correct, 1 otherwise (2 for bad usage).\n",
          f);
}

int tc_cli_verify(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"topo", required_argument, 0, 't'}, {"costs", required_argument, 0, 'c'},
        {"unwind", required_argument, 0, 'u'}, {"target", required_argument, 0, 'T'},
        {"max-channels", required_argument, 0, 'M'},
        {"switch-model", required_argument, 0, 'm'}, {"size", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *topo_path = NULL, *costs_path = NULL, *target = NULL;
    int unwind = 0, swmodel = 0, opt, maxch = 0;
    uint64_t size = 0;
    unsigned char seen[TC_CLI_MAX_OPT] = {0};
    optind = 1;
    while ((opt = tc_cli_getopt(&ctx, "verify", argc, argv, "h", longopts, seen, NULL)) != -1) {
        switch (opt) {
        case 't': topo_path = optarg; break;
        case 'c': costs_path = optarg; break;
        case 'u':
            if (tc_cli_parse_int(&ctx, "unwind", optarg, 1, INT_MAX, &unwind))
                return 2;
            break;
        case 'T': target = optarg; break;
        case 'M':
            if (tc_cli_parse_int(&ctx, "max-channels", optarg, 1, 128, &maxch))
                return 2;
            break;
        case 'm':
            if (tc_cli_parse_switch_model(&ctx, optarg, &swmodel))
                return 2;
            break;
        case 'S':
            if (tc_parse_size(optarg, &size) || size == 0)
                return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size: '%s' is not a size", optarg));
            break;
        case 'h': usage(stdout); return tc_cli_exit(tc_cli_stdout_close(&ctx));
        default: return 2; /* tc_cli_getopt reported it */
        }
    }
    if (optind >= argc)
        return tc_cli_usage(&ctx, "verify", "no plan file given");
    if (optind < argc - 1)
        return tc_cli_usage(&ctx, "verify", "unexpected argument '%s' (one plan file expected)", argv[optind + 1]);
    const char *path = argv[optind];
    if (costs_path && !topo_path)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--costs needs --topo"));
    if (seen['u'] && !topo_path)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--unwind needs --topo"));
    if (seen['m'] && !topo_path)
        return tc_cli_exit(tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--switch-model needs --topo"));
    tc_status st = TC_OK;
    tc_topo *flat = NULL;
    tc_msccl *m = NULL;
    tc_sched *s = NULL;
    tc_msccl_limits limits;
    tc_msccl_target tg = TC_TARGET_COMMON;
    if (target && tc_msccl_target_parse(target, &tg)) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "unknown target '%s' (nccl, rccl, common or tacos-run)", target);
        goto done;
    }
    tc_msccl_limits_get(tg, &limits);
    if (maxch) {
        if (maxch > limits.hard_channels) {
            st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--max-channels %d: %s has at most %d channels", maxch,
                          tc_msccl_target_name(tg), limits.hard_channels);
            goto done;
        }
        limits.max_channels = maxch;
    }
    tc_format fmt;
    if ((st = tc_sched_sniff(&ctx, path, &fmt)))
        goto done;
    if ((target || maxch) && fmt != TC_FMT_MSCCL) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--%s applies to MSCCL XML plans only ('%s' is JSON)",
                      target ? "target" : "max-channels", path);
        goto done;
    }
    if (size && fmt != TC_FMT_MSCCLPP) {
        st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "--size applies to MSCCL++ plans only");
        goto done;
    }
    if (fmt == TC_FMT_MSCCLPP) {
        tc_mscclpp *p = NULL;
        tc_mscclpp_verdict v;
        if (topo_path)
            tc_warn(&ctx, NULL, 0, "--topo: an MSCCL++ plan names no links; the topology is not used");
        if (!(st = tc_mscclpp_read(&ctx, path, &p)) && !(st = tc_mscclpp_verify(&ctx, p, size, path, &v)))
            printf("%s: ok: MSCCL++ %s, %d gpus, %ld operations, at most %d thread blocks per gpu, protocol %s; %s\n",
                   path, p->collective, p->ngpus, v.ops, v.max_tbs, p->packets ? "LL" : "Simple",
                   v.modelled ? "the collective's result proven by symbolic execution"
                              : "rules and limits only (the symbolic check does not model the operations used)");
        tc_mscclpp_free(p);
        if (st)
            goto done;
    } else if (fmt == TC_FMT_MSCCL) {
        if (topo_path && (st = tc_cli_load_topo(&ctx, topo_path, costs_path, unwind, swmodel, &flat)))
            goto done;
        if ((st = tc_msccl_read(&ctx, path, &m)) || (st = tc_msccl_verify(&ctx, m, &limits, path)))
            goto done;
        printf("%s: ok: MSCCL %s, %d gpus, %d channels, %d chunks per loop, proto %s, %s limits\n", path,
               tc_coll_name(m->coll), m->ngpus, m->nchannels, m->nchunksperloop, m->proto, tc_msccl_target_name(tg));
    } else {
        if ((st = tc_sched_load(&ctx, path, &s)))
            goto done;
        /* the plan records the unwinding degree and switch model its link ids refer to */
        if (topo_path && (st = tc_cli_load_topo(&ctx, topo_path, costs_path, unwind ? unwind : s->unwind,
                                                swmodel ? swmodel : s->switch_model, &flat)))
            goto done;
        if ((st = tc_sched_verify(&ctx, s, flat, path)))
            goto done;
        if ((st = tc_photonic_verify(&ctx, s, costs_path ? flat : NULL, path))) /* G0's prices need the costs */
            goto done;
        /* verify ok implies tacos-run replays: the same lowering and program check as tacos-run's */
        if ((st = tc_msccl_lower_replay(&ctx, s, NULL))) {
            tc_error(&ctx, st, path, 0, "tacos-run cannot replay this plan (see above)");
            goto done;
        }
        char tb[32];
        printf("%s: ok: %s, %d ranks, %d chunks, %d transfers, %d steps, predicted %s\n", path,
               tc_coll_name(s->coll), s->n_ranks, s->n_chunks, s->n_xfers, s->n_steps,
               tc_fmt_time(s->time, tb, sizeof tb));
    }
    st = tc_cli_stdout_close(&ctx);
done:
    tc_sched_free(s);
    tc_msccl_free(m);
    tc_topo_free(flat);
    return tc_cli_exit(st);
}
