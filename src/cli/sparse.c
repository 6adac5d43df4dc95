/* The sparse options shared by the main command and compare (--density, --sparsity, --sparse-format,
 * --thresholds), and pricing a plan with its sparse messages (SpCCL eq. 4-6, tc_sparse_cost) for the
 * compile summary, sim and compare. */
#include "cli.h"
#include "tacos/sim.h"
#include "tacos/sparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number in [0, 1], rounded to 15 significant digits after 1 - x (0.99 gives the density 0.01). */
static tc_status parse_unit(tc_ctx *ctx, const char *opt, const char *s, int complement, double *out)
{
    char *end, buf[32];
    double v;
    if (tc_parse_decimal(s, &end, &v) || *end || !(v >= 0 && v <= 1))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--%s: '%s' is not a number from 0 to 1", opt, s);
    if (complement) {
        snprintf(buf, sizeof buf, "%.15g", 1 - v);
        v = strtod(buf, NULL);
    }
    *out = v;
    return TC_OK;
}

tc_status tc_cli_sparse_opts(tc_ctx *ctx, const char *density, const char *sparsity, const char *format,
                             const char *thresholds, tc_sparse_opts *o, int *on)
{
    tc_status st;
    tc_sparse_opts_init(o);
    *on = density || sparsity;
    if (density && sparsity)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--density and --sparsity say the same thing: give one");
    if (!*on && (format || thresholds))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s needs --sparsity or --density",
                        format ? "--sparse-format" : "--thresholds");
    if (!*on)
        return TC_OK;
    if ((st = density ? parse_unit(ctx, "density", density, 0, &o->density)
                      : parse_unit(ctx, "sparsity", sparsity, 1, &o->density)))
        return st;
    if (format && tc_sparse_fmt_parse(format, 0, &o->format))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--sparse-format: '%s' is not pici, coo or auto", format);
    if (thresholds && o->format == TC_SP_AUTO)
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0,
                        "--thresholds sets one format's thresholds: not with --sparse-format auto (which uses the "
                        "paper's for both)");
    if (thresholds && (st = tc_sparse_thresholds_parse(ctx, thresholds, &o->th[o->format])))
        return st;
    return TC_OK;
}

tc_status tc_cli_sparse_more(tc_ctx *ctx, const char *dtype, const char *rule, int on, tc_sparse_opts *o)
{
    if (!on && (dtype || rule))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "%s needs --sparsity or --density", dtype ? "--dtype" : "--sparse-rule");
    if (dtype && tc_sparse_dtype_parse(dtype, &o->dtype))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--dtype: '%s' is not float32, float64, int32, bfloat16 or float16",
                        dtype);
    if (rule && strcmp(rule, "forecast") && strcmp(rule, "previous"))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--sparse-rule: '%s' is not forecast or previous", rule);
    if (rule)
        o->rule = strcmp(rule, "previous") ? TC_SP_RULE_FORECAST : TC_SP_RULE_PREVIOUS;
    return TC_OK;
}

void tc_cli_print_sparse(const tc_sched *s, double wire, double dense, double sparse, const char *indent)
{
    const tc_sched_sparse *sp = s->sparse;
    int n[TC_SP_FMT_COUNT];
    char a[32], b[32];
    tc_sparse_counts(sp, n);
    printf("%ssparse: input density %g (sparsity %g), %s elements, ", indent, sp->density, 1 - sp->density,
           tc_sparse_dtype_name((tc_sparse_dtype)sp->dtype));
    for (int f = TC_SP_PICI; f < TC_SP_FMT_COUNT; f++)
        if (sp->format == f || sp->format == TC_SP_AUTO)
            printf("%s%s thresholds %g/%g/%g (intra/inter/all-gather)", f > TC_SP_PICI && sp->format == TC_SP_AUTO ? ", " : "",
                   tc_sparse_fmt_name(f), sp->th[f][0], sp->th[f][1], sp->th[f][2]);
    if (sp->format == TC_SP_AUTO)
        printf(", the cheaper per send where it beats dense, the plan never slower than dense");
    printf("\n%s  transfers: %d pici, %d coo, %d dense; bytes on the wire %.1f%% of dense (eq. 4)\n", indent,
           n[TC_SP_PICI], n[TC_SP_COO], n[TC_SP_DENSE], 100 * wire);
    printf("%s  dense messages %s, sparse %s: speedup %.2fx (compression and decompression included, eq. 5-6)\n",
           indent, tc_fmt_time(dense, a, sizeof a), tc_fmt_time(sparse, b, sizeof b), sparse > 0 ? dense / sparse : 0);
}
