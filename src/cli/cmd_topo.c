/* `tacosc topo KIND DIMS [--class C]... [--alpha T[,T...]] [--bandwidth B[,B...]] [-o FILE]`:
 * write a generated topology as XML (stdout without -o). */
#include "cli.h"
#include "tacos/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void topo_usage(FILE *f)
{
    fprintf(f,
            "usage: tacosc topo KIND [DIMS] [--class C]... [--alpha T[,T...]] [--bandwidth B[,B...]]\n"
            "                   [--photonic SPEC] [-o FILE]\n"
            "Write a generated topology as XML (man 5 tacosc-topology); stdout without -o.\n"
            "  --class C        link class of the next dimension (repeat: one per dimension, the last repeats)\n"
            "  --alpha T        latency of the classes in dimension order, e.g. 0.5us or 0.7us,1us\n"
            "  --bandwidth B    bandwidth of the classes in dimension order, e.g. 50GB/s or 400GB/s,200GB/s\n"
            "                   (classes without values get 0.5us and 50GB/s; a cost file overrides both)\n"
            "  --photonic SPEC  add a <photonic> element: its attributes as NAME=VALUE,... (man 5 tacosc-topology),\n"
            "                   e.g. reconfig=5us,tx=4,rx=4,wavelengths=2,mzi=16,grid=2x2,fibers=8\n"
            "  -o FILE          output file\n"
            "  (tacosc topo import FILE: a runtime's detected topology; tacosc topo compose: N servers; see --help of each)\n"
            "kinds:\n");
    tc_topo_list_kinds(f);
}

/* Split "a,b,c" into at most max parts (in place). */
static int split(char *s, char **parts, int max)
{
    int n = 0;
    for (char *p = strtok(s, ","); p && n < max; p = strtok(NULL, ","))
        parts[n++] = p;
    return n;
}

/* The topology t with a <photonic> element of the attributes in spec ("a=1,b=2x2") added: written, the
 * element spliced in, and read back, so the reader's own rules judge it (issue 22).  *out replaces t. */
static tc_status add_photonic(tc_ctx *ctx, const tc_topo *t, const char *spec, tc_topo **out)
{
    char *xml = NULL, *full = NULL;
    size_t len = 0;
    tc_buf el = {0};
    tc_status st = TC_OK;
    if (strpbrk(spec, "\"'<>& \t\n"))
        return tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--photonic: '%s': NAME=VALUE pairs separated by commas, "
                                                    "without quotes, blanks or markup",
                        spec);
    tc_buf_printf(&el, "  <photonic");
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ","), eq = strcspn(p, "=");
        if (eq >= n || eq == 0 || eq + 1 == n) {
            st = tc_error(ctx, TC_ERR_USAGE, NULL, 0, "--photonic: '%.*s' is not NAME=VALUE", (int)n, p);
            goto done;
        }
        tc_buf_printf(&el, " %.*s=\"%.*s\"", (int)eq, p, (int)(n - eq - 1), p + eq + 1);
        p += n + (p[n] == ',');
    }
    tc_buf_printf(&el, "/>\n");
    FILE *f = open_memstream(&xml, &len);
    if (!f)
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory");
    st = tc_topo_write(ctx, t, f);
    fclose(f);
    const char *end = xml ? strstr(xml, "</topology>") : NULL;
    if (!st && (!end || !(full = malloc(len + el.len + 1))))
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory");
    if (st)
        goto done;
    size_t head = (size_t)(end - xml);
    memcpy(full, xml, head);
    memcpy(full + head, el.data, el.len);
    strcpy(full + head + el.len, end);
    st = tc_topo_read_mem(ctx, "tacosc topo --photonic", full, strlen(full), out);
done:
    free(xml);
    free(full);
    tc_buf_free(&el);
    return st;
}

static int class_used(const tc_topo *t, int k)
{
    for (int i = 0; i < t->n_links; i++)
        if (t->links[i].cls == k)
            return 1;
    for (int i = 0; i < t->n_switches; i++)
        if (t->switches[i].cls == k)
            return 1;
    return 0;
}

static int count_used(const tc_topo *t)
{
    int n = 0;
    for (int k = 0; k < t->n_classes; k++)
        n += class_used(t, k);
    return n;
}

int tc_cli_topo(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "import") || !strcmp(argv[1], "compose"))) /* issue 25 */
        return tc_cli_topo_import(argc - 1, argv + 1, !strcmp(argv[1], "compose"));
    tc_ctx ctx;
    tc_ctx_init(&ctx);
    const char *kind = NULL, *dims = NULL, *outp = "-", *photonic = NULL;
    char *alpha_arg = NULL, *bw_arg = NULL;
    const char **classes = calloc((size_t)argc + 1, sizeof *classes);
    int n_classes = 0;
    tc_topo *t = NULL;
    tc_status st = TC_OK;
    const char *out_opt = NULL;
    if (!classes)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            topo_usage(stdout);
            free(classes);
            return tc_cli_exit(tc_cli_stdout_close(&ctx));
        } else if (!strcmp(a, "--class") || !strcmp(a, "--alpha") || !strcmp(a, "--bandwidth") ||
                   !strcmp(a, "--photonic") || !strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                tc_cli_usage(&ctx, "topo", "option '%s' needs a value", a);
                st = TC_ERR_USAGE;
                goto done;
            }
            const char *v = argv[++i];
            const char **slot = !strcmp(a, "--alpha")       ? (const char **)&alpha_arg
                                : !strcmp(a, "--bandwidth") ? (const char **)&bw_arg
                                : !strcmp(a, "--photonic")  ? &photonic
                                                            : NULL;
            if (!strcmp(a, "--class")) {
                if (!tc_class_name_valid(v)) { /* as the topology reader would refuse */
                    tc_cli_usage(&ctx, "topo", "--class '%s': %s", v, TC_CLASS_NAME_RULE);
                    st = TC_ERR_USAGE;
                    goto done;
                }
                classes[n_classes++] = v;
            } else if (slot && *slot) {
                tc_cli_usage(&ctx, "topo", "option '%s' given twice (give one comma-separated list)", a);
                st = TC_ERR_USAGE;
                goto done;
            } else if (slot)
                *slot = v;
            else if (out_opt) {
                tc_cli_usage(&ctx, "topo", "option '%s' given twice", a);
                st = TC_ERR_USAGE;
                goto done;
            } else
                outp = out_opt = v;
        } else if (a[0] == '-' && a[1]) {
            tc_cli_usage(&ctx, "topo", "unknown option '%s'", a);
            st = TC_ERR_USAGE;
            goto done;
        } else if (!kind) {
            kind = a;
        } else if (!dims) {
            dims = a;
        } else {
            tc_cli_usage(&ctx, "topo", "unexpected argument '%s'", a);
            st = TC_ERR_USAGE;
            goto done;
        }
    }
    if (!kind) {
        tc_cli_usage(&ctx, "topo", "no topology kind given; usage: tacosc topo KIND [DIMS] [options]");
        st = TC_ERR_USAGE;
        goto done;
    }
    st = tc_topo_generate(&ctx, kind, dims, classes, n_classes, &t);
    if (st != TC_OK)
        goto done;
    /* Per-dimension values for a kind whose dimensions share one class by default: name the classes
     * dim0, dim1, ... so each dimension can get its own value. */
    int n_vals = 1;
    for (int k = 0; k < 2; k++) {
        const char *s = k ? bw_arg : alpha_arg;
        int c = s ? 1 : 0;
        for (; s && *s; s++)
            c += *s == ',';
        if (c > n_vals)
            n_vals = c;
    }
    if (n_vals > 1 && n_classes == 0 && count_used(t) < n_vals) {
        /* as many names as values, or fewer when the kind has fewer dimensions (it refuses extra names) */
        static const char *const dimnames[] = {"dim0", "dim1", "dim2", "dim3"};
        tc_ctx quiet = ctx;
        quiet.sink = NULL;
        for (int k = n_vals < 4 ? n_vals : 4; k >= 2; k--) {
            tc_topo *u = NULL;
            if (tc_topo_generate(&quiet, kind, dims, dimnames, k, &u) == TC_OK) {
                tc_topo_free(t);
                t = u;
                break;
            }
        }
    }
    for (int k = 0; k < 2; k++) { /* more values than classes would be silently dropped */
        const char *v = k ? bw_arg : alpha_arg;
        int c = v ? 1 : 0;
        for (const char *p = v; p && *p; p++)
            c += *p == ',';
        if (c > count_used(t)) {
            st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0, "topo: %s has %d values, but %s has %d link class%s",
                          k ? "--bandwidth" : "--alpha", c, t->name ? t->name : kind, count_used(t),
                          count_used(t) == 1 ? "" : "es");
            goto done;
        }
    }
    if (alpha_arg || bw_arg) {
        /* classes in index order, skipping unused ones: that is dimension order */
        char *al[64], *bl[64];
        int na = 0, nb = 0;
        char *abuf = alpha_arg ? strdup(alpha_arg) : NULL, *bbuf = bw_arg ? strdup(bw_arg) : NULL;
        if (abuf)
            na = split(abuf, al, 64);
        if (bbuf)
            nb = split(bbuf, bl, 64);
        int used_i = 0;
        for (int k = 0; k < t->n_classes && st == TC_OK; k++) {
            if (!class_used(t, k))
                continue;
            double alpha = t->classes[k].alpha, beta = t->classes[k].beta, v;
            if (na) {
                const char *s = al[used_i < na ? used_i : na - 1];
                if (tc_parse_time(s, &v) != TC_OK || v < 0)
                    st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                  "topo: bad --alpha '%s' (a time with a unit: ns, us, ms or s)", s);
                else
                    alpha = v;
            }
            if (nb && st == TC_OK) {
                const char *s = bl[used_i < nb ? used_i : nb - 1];
                if (tc_parse_bandwidth(s, &v) != TC_OK || !(v > 0))
                    st = tc_error(&ctx, TC_ERR_USAGE, NULL, 0,
                                  "topo: bad --bandwidth '%s' (a positive bandwidth with a unit: B/s, KB/s, "
                                  "MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, or bits: Gb/s, Gbps, ...)",
                                  s);
                else
                    beta = 1.0 / v;
            }
            if (st == TC_OK)
                tc_topo_class_set(t, k, alpha, beta);
            used_i++;
        }
        free(abuf);
        free(bbuf);
        if (st != TC_OK)
            goto done;
    }
    if (photonic) {
        tc_topo *u = NULL;
        if ((st = add_photonic(&ctx, t, photonic, &u)))
            goto done;
        tc_topo_free(t);
        t = u;
    }
    tc_cli_out o;
    st = tc_cli_open_output(&ctx, outp, &o);
    if (st != TC_OK)
        goto done;
    st = tc_topo_write(&o.ctx, t, o.f);
    tc_status st2 = tc_cli_close_output(&o, st == TC_OK);
    if (st == TC_OK)
        st = st2;
done:
    tc_topo_free(t);
    free(classes);
    return tc_cli_exit(st);
}
