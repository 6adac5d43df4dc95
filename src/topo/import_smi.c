/*
 * import_smi: `nvidia-smi topo -m` and `rocm-smi --showtopo` text as a tacosc topology (import.c has the
 * dumps and the bandwidth tables' citations).
 *
 * nvidia-smi topo -m: a header row "GPU0 GPU1 ... NIC0 ... CPU Affinity ...", then one row per GPU and NIC
 *   whose cells are X (itself), NV# (a bonded set of # NVLinks), PIX (at most one PCIe bridge), PXB (several
 *   bridges, no host bridge), PHB (a PCIe host bridge), NODE (host bridges within one NUMA node), SYS (the
 *   SMP interconnect between NUMA nodes); the "NIC Legend" names the NICs ("NIC0: mlx5_0").  ANSI colour
 *   codes are dropped.  Every GPU pair with the same NV# whose links outnumber what one GPU has (18 for
 *   sm 90 and up, 12 for sm 80, 6 below) goes through an NVSwitch: one "nvswitch" vertex of # links per GPU;
 *   otherwise NV# is a direct link of # NVLinks.  GPUs joined by no NVLink get the PCIe tree the letters
 *   imply (PIX/PXB: one bridge vertex, PHB/NODE: one CPU vertex, SYS: a "sys" vertex above the CPUs).
 * rocm-smi --showtopo: the "Link Type between two GPUs" table, XGMI or PCIE per pair; XGMI is one link of
 *   the gfx's width (gfx942 = MI300X unless --gcn says otherwise), PCIE goes through one host bridge vertex.
 * Neither names the NVLink generation, the PCIe generation or the NIC speed: the tc_import_opts give them
 *   (sm inferred from NV# = 18, 12 or less when not given).
 * Diagnostics: `file:line: error:` naming the row and cell, e.g. "smi.txt:3: error: row GPU1: cell 4 'NV'
 *   is not X, NV#, PIX, PXB, PHB, NODE or SYS".
 */
#include "topo_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOL 512

enum { P_X = -1, P_PIX = 0, P_PXB = 1, P_PHB = 2, P_NODE = 3, P_SYS = 4, P_NV = 5, P_XGMI = 6, P_PCIE = 7 };

typedef struct smi {
    tc_ctx *ctx;
    const char *file;
    int n_gpu, n_nic;
    int *cell;           /* (n_gpu + n_nic)^2: P_* */
    int *nv;             /* n_gpu^2: NVLink count */
    int *row_line;
    char nic_name[64][64];
} smi;

/* One line into tokens (blank-separated), ANSI escapes removed; returns the count. */
static int tokens(char *s, char **tok, int cap)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\033') { /* ESC [ ... letter */
            while (*r && !isalpha((unsigned char)*r))
                r++;
            if (!*r)
                break;
            continue;
        }
        *w++ = *r;
    }
    *w = 0;
    int n = 0;
    for (char *p = strtok(s, " \t\r"); p && n < cap; p = strtok(NULL, " \t\r"))
        tok[n++] = p;
    return n;
}

static int cell_code(const char *c, int *count)
{
    *count = 0;
    if (!strcmp(c, "X") || !strcmp(c, "0"))
        return P_X;
    if (!strcmp(c, "PIX"))
        return P_PIX;
    if (!strcmp(c, "PXB"))
        return P_PXB;
    if (!strcmp(c, "PHB"))
        return P_PHB;
    if (!strcmp(c, "NODE"))
        return P_NODE;
    if (!strcmp(c, "SYS"))
        return P_SYS;
    if (!strcmp(c, "XGMI"))
        return P_XGMI;
    if (!strcmp(c, "PCIE"))
        return P_PCIE;
    if (c[0] == 'N' && c[1] == 'V' && c[2]) {
        char *end;
        long k = strtol(c + 2, &end, 10);
        if (*end == 0 && k >= 1 && k <= 1024) {
            *count = (int)k;
            return P_NV;
        }
    }
    return -2;
}

static double nvl_bw(int sm)
{
    return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 80 ? 20.0 : sm >= 70 ? 20.0 : sm >= 60 ? 18.0 : 20.0;
}

static int uf_find(int *p, int x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static tc_status cls(tc_topo *t, const char *name, double alpha, double bw, int *out)
{
    if (tc_topo_class_get(t, name, out))
        return TC_ERR_NOMEM;
    return tc_topo_class_set(t, *out, alpha, 1.0 / bw);
}

/* Build from the parsed matrix; xgmi: the rocm-smi table. */
/* The PCIe tree the path letters imply between GPUs that NVLink/XGMI leave apart: GPUs pairwise PIX/PXB share
 * a bridge vertex ("pciswK"), bridges whose GPUs are PHB/NODE/PCIE share a CPU vertex ("cpuK"), CPUs hang from
 * one "sys" vertex.  pa, pb: scratch of n ints; ports: of n. */
static tc_status smi_pcie_tree(smi *m, tc_topo *t, int c_pci, int *pa, int *pb, int *ports)
{
    const int n = m->n_gpu, N = n + m->n_nic;
    tc_status st = TC_OK;
    char name[64];
    for (int i = 0; i < n; i++)
        pa[i] = pb[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const int c = m->cell[i * N + j];
            if (c == P_PIX || c == P_PXB)
                pa[uf_find(pa, i)] = uf_find(pa, j); /* same bridge */
            if (c == P_PIX || c == P_PXB || c == P_PHB || c == P_NODE || c == P_PCIE)
                pb[uf_find(pb, i)] = uf_find(pb, j); /* same CPU */
        }
    int sys = -1, n_cpu = 0, c_sys = -1;
    for (int i = 0; i < n; i++)
        n_cpu += uf_find(pb, i) == i;
    if (n_cpu > 1) {
        /* the inter-CPU link is not in the text: NCCL's Intel SKL figure, 10 GB/s (topo.h SKL_QPI_BW) */
        if ((st = cls(t, "sys", 1.0e-6, 10e9, &c_sys)) || (st = tc_topo_add_switch(t, "sys", NULL, 0, c_pci, 0, 0)))
            return st;
        sys = t->n_switches - 1;
        t->switches[sys].model = TC_SWITCH_NODE;
    }
    for (int c = 0; c < n; c++) {
        if (uf_find(pb, c) != c)
            continue;
        int cpu = -1, nb = 0;
        for (int b = 0; b < n; b++)
            nb += uf_find(pb, b) == c && uf_find(pa, b) == b;
        if (nb > 1 || sys >= 0) {
            snprintf(name, sizeof name, "cpu%d", c);
            if ((st = tc_topo_add_switch(t, name, NULL, 0, c_pci, 0, 0)))
                return st;
            cpu = t->n_switches - 1;
            t->switches[cpu].model = TC_SWITCH_NODE;
            t->switches[cpu].up = sys;
            t->switches[cpu].up_cls = sys >= 0 ? c_sys : -1;
        }
        for (int b = 0; b < n; b++) {
            if (uf_find(pb, b) != c || uf_find(pa, b) != b)
                continue;
            int np = 0;
            for (int g = 0; g < n; g++)
                if (uf_find(pa, g) == b)
                    ports[np++] = g;
            snprintf(name, sizeof name, "pcisw%d", b);
            if ((st = tc_topo_add_switch(t, name, ports, np, c_pci, 0, 0)))
                return st;
            tc_switch *sw = &t->switches[t->n_switches - 1];
            sw->model = TC_SWITCH_NODE;
            sw->up = cpu;
            sw->up_cls = cpu >= 0 ? c_pci : -1;
        }
    }
    return TC_OK;
}

/* NICs: each GPU takes the nearest (PIX < PXB < PHB, NODE < SYS), ties to the least loaded; NICs no GPU
 * takes are left out.  ports: scratch of n ints. */
static tc_status smi_nics(smi *m, const tc_import_opts *o, tc_topo *t, int c_pci, int *ports)
{
    const int n = m->n_gpu, N = n + m->n_nic;
    tc_status st = TC_OK;
    char name[64];
    if (m->n_nic) {
        int *load = calloc((size_t)m->n_nic, sizeof *load), *pick = malloc(sizeof(int) * (size_t)n);
        int c_net;
        double nic = o && o->nic_bw > 0 ? o->nic_bw : 10000e6 / 8;
        if (!o || !(o->nic_bw > 0))
            tc_warn(m->ctx, m->file, 0, "the text gives no NIC speed: NCCL's fallback, 10000 Mb/s, is used "
                                        "(give --nic-speed, e.g. 400Gb/s)");
        char cn[48];
        snprintf(cn, sizeof cn, "net%.0fMbps", nic * 8 / 1e6);
        if (!load || !pick || (st = tc_topo_class_get(t, cn, &c_net)) ||
            (st = tc_topo_class_set(t, c_net, 2.7e-6, 1.0 / nic))) {
            free(load);
            free(pick);
            st = st ? st : TC_ERR_NOMEM;
            return st;
        }
        for (int g = 0; g < n; g++) {
            pick[g] = -1;
            int best = 99;
            for (int k = 0; k < m->n_nic; k++) {
                int c = m->cell[g * N + n + k];
                int r = c == P_PIX ? 0 : c == P_PXB ? 1 : c == P_PHB || c == P_NODE ? 2 : 3;
                if (r < best || (r == best && load[k] < load[pick[g]]))
                    best = r, pick[g] = k;
            }
            load[pick[g]]++;
        }
        static const char *const pn[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
        for (int k = 0; k < m->n_nic && !st; k++) {
            int np = 0, worst = 0;
            for (int g = 0; g < n; g++)
                if (pick[g] == k) {
                    ports[np++] = g;
                    int c = m->cell[g * N + n + k];
                    worst = c >= P_PIX && c <= P_SYS && c > worst ? c : worst;
                }
            if (!np)
                continue;
            if (m->nic_name[k][0])
                snprintf(name, sizeof name, "%s", m->nic_name[k]);
            else
                snprintf(name, sizeof name, "NIC%d", k);
            for (char *p = name; *p; p++)
                if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
                    *p = '_';
            if (!isalpha((unsigned char)name[0]))
                snprintf(name, sizeof name, "NIC%d", k);
            for (int s = 0; s < t->n_switches; s++)
                if (!strcmp(t->switches[s].name, name))
                    snprintf(name, sizeof name, "NIC%d", k);
            if ((st = tc_topo_add_switch(t, name, ports, np, c_pci, 0, 0)))
                break;
            tc_switch *sw = &t->switches[t->n_switches - 1];
            sw->nic = 1;
            sw->model = TC_SWITCH_NODE;
            sw->up_cls = c_net;
            snprintf(sw->path, sizeof sw->path, "%s", pn[worst]);
        }
        free(load);
        free(pick);
    }
    return st;
}

static tc_status build(smi *m, const tc_import_opts *o, int xgmi, tc_topo **out)
{
    const int n = m->n_gpu, N = n + m->n_nic;
    tc_topo *t = NULL;
    tc_status st = TC_OK;
    int *ports = malloc(sizeof(int) * (size_t)(N + 1)), *pa = malloc(sizeof(int) * (size_t)(N + 1));
    int *pb = malloc(sizeof(int) * (size_t)(N + 1));
    char name[64];
    tc_topo_import_name(m->file, n, name, sizeof name);
    if (!ports || !pa || !pb || tc_topo_create(name, n, &t)) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    int sm = o ? o->sm : 0, maxnv = 0, all_same = n > 1, first = -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                const int c = m->cell[i * N + j], k = c == P_NV ? m->nv[i * n + j] : 0;
                maxnv = k > maxnv ? k : maxnv;
                if (first < 0)
                    first = k;
                all_same &= k == first && k > 0;
            }
    if (!xgmi && maxnv && !sm) {
        sm = maxnv >= 18 ? 90 : maxnv >= 12 ? 80 : maxnv <= 6 ? 70 : 0;
        if (!sm) {
            st = tc_error(m->ctx, TC_ERR_INVALID, m->file, m->row_line[0],
                          "NV%d: cannot tell the NVLink generation from the counts; give --sm (e.g. 90 for H100)",
                          maxnv);
            goto done;
        }
    }
    const double pcie = o && o->pcie_bw > 0 ? o->pcie_bw
                        : sm >= 90        ? 48e9 /* Gen5 x16: 16 x 240 / 80 GB/s */
                        : sm >= 80        ? 24e9 /* Gen4 x16 */
                                          : 12e9; /* Gen3 x16, NCCL topo.h PCI_BW */
    const double link = xgmi ? (!o || !o->gcn || !strncmp(o->gcn, "gfx94", 5) ? 48e9
                                : !strncmp(o->gcn, "gfx90a", 6)               ? 36e9
                                                                               : 24e9)
                             : nvl_bw(sm) * 1e9;
    const int per_gpu = sm >= 90 ? 18 : sm >= 80 ? 12 : 6;
    int c_pci, c_link;
    if ((st = cls(t, "pcie", 1.0e-6, pcie, &c_pci)))
        goto done;
    if (all_same && !xgmi && first * (n - 1) > per_gpu) { /* through an NVSwitch */
        for (int i = 0; i < n; i++)
            ports[i] = i;
        if ((st = cls(t, "nvswitch", 0.6e-6, first * link, &c_link)) ||
            (st = tc_topo_add_switch(t, "nvswitch", ports, n, c_link, 0, 0)))
            goto done;
        t->switches[0].model = TC_SWITCH_NODE;
    } else {
        for (int a = 0; a < n; a++) /* pairs in order, each direction after the other (written as duplex) */
            for (int e = 0; e < 2 * n; e++) {
                const int b = e / 2, i = e % 2 ? b : a, j = e % 2 ? a : b, c = m->cell[i * N + j];
                if (b <= a || (c != P_NV && c != P_XGMI))
                    continue;
                char cn[32];
                const int k = c == P_NV ? m->nv[i * n + j] : 1;
                snprintf(cn, sizeof cn, "%s%d", xgmi ? "xgmi" : "nvlink", k);
                if ((st = cls(t, cn, 0.6e-6, k * link, &c_link)) ||
                    (st = tc_topo_add_link(t, i, j, c_link, -1, -1, m->row_line[i])))
                    goto done;
            }
    }
    /* the PCIe tree, when NVLink/XGMI leave GPUs apart */
    for (int i = 0; i < N; i++)
        pa[i] = pb[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const int c = m->cell[i * N + j];
            if (c == P_NV || c == P_XGMI || (i != j && c == P_X))
                pa[uf_find(pa, i)] = uf_find(pa, j);
        }
    int apart = 0;
    for (int i = 1; i < n; i++)
        apart |= uf_find(pa, i) != uf_find(pa, 0);
    if (!st && apart && !all_same)
        st = smi_pcie_tree(m, t, c_pci, pa, pb, ports);
    if (!st && m->n_nic)
        st = smi_nics(m, o, t, c_pci, ports);
    if (st)
        goto done;
    st = tc_topo_import_finish(m->ctx, m->file, t, out);
done:
    if (st == TC_ERR_NOMEM)
        tc_error(m->ctx, st, m->file, 0, "out of memory importing");
    tc_topo_free(t);
    free(ports);
    free(pa);
    free(pb);
    return st;
}

tc_status tc_topo_import_smi(tc_ctx *ctx, const char *name, const char *buf, size_t len,
                             const tc_import_opts *o, tc_topo **out)
{
    smi m = {.ctx = ctx, .file = name};
    tc_status st = TC_OK;
    char *copy = malloc(len + 1);
    char *tok[MAXCOL + 8];
    int hdr_gpu = 0, hdr_nic = 0, in_table = 0, xgmi = 0, rows = 0, lineno = 0, header_line = 0;
    int rocm_section = 0;
    const char *badcol = "";
    if (!copy)
        return tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory importing");
    memcpy(copy, buf, len);
    copy[len] = 0;
    m.cell = calloc((size_t)(MAXCOL * MAXCOL), sizeof *m.cell);
    m.nv = calloc((size_t)(MAXCOL * MAXCOL), sizeof *m.nv);
    m.row_line = calloc(MAXCOL, sizeof *m.row_line);
    if (!m.cell || !m.nv || !m.row_line) {
        st = tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory importing");
        goto done;
    }
    xgmi = strstr(copy, "Link Type between two GPUs") != NULL; /* rocm-smi --showtopo */
    for (char *ln = copy, *nx; ln; ln = nx) {
        nx = strchr(ln, '\n');
        if (nx)
            *nx++ = 0;
        lineno++;
        if (strstr(ln, "Link Type between two GPUs")) {
            rocm_section = 1;
            continue;
        }
        if (strstr(ln, "=====")) {
            if (in_table)
                rocm_section = in_table = 0;
            continue;
        }
        int k0;
        char nm0[64];
        if (!in_table && sscanf(ln, " NIC%d: %63s", &k0, nm0) == 2) { /* the NIC Legend */
            if (k0 >= 0 && k0 < 64)
                snprintf(m.nic_name[k0], sizeof m.nic_name[k0], "%s", nm0);
            continue;
        }
        if (strstr(ln, "Legend")) {
            in_table = 0;
            continue;
        }
        int nt = tokens(ln, tok, MAXCOL + 8);
        if (nt == 0) {
            continue;
        }
        if (!in_table && !strncmp(tok[0], "GPU", 3) && isdigit((unsigned char)tok[0][3]) && hdr_gpu == 0 &&
            (!xgmi || rocm_section)) {
            /* the header: GPUk ... NICk ... then other columns */
            for (int i = 0; i < nt; i++) {
                int k;
                char tail;
                if (sscanf(tok[i], "GPU%d%c", &k, &tail) == 1) {
                    if (k != hdr_gpu || hdr_nic) {
                        badcol = tok[i];
                        goto bad_header;
                    }
                    hdr_gpu++;
                } else if (sscanf(tok[i], "NIC%d%c", &k, &tail) == 1 || sscanf(tok[i], "mlx5_%d%c", &k, &tail) == 1) {
                    if (k != hdr_nic || k >= 64) {
                        badcol = tok[i];
                        goto bad_header;
                    }
                    if (tok[i][0] == 'm') /* older nvidia-smi names the NIC in the header */
                        snprintf(m.nic_name[k], sizeof m.nic_name[k], "%s", tok[i]);
                    hdr_nic++;
                } else
                    break;
            }
            if (hdr_gpu + hdr_nic > MAXCOL || hdr_nic > 64) {
                st = tc_error(ctx, TC_ERR_LIMIT, name, lineno, "header: more than %d columns", MAXCOL);
                goto done;
            }
            m.n_gpu = hdr_gpu;
            m.n_nic = hdr_nic;
            in_table = 1;
            header_line = lineno;
            continue;
        bad_header:
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "header: column '%s' out of order (GPU0, GPU1, ..., "
                          "then NIC0, NIC1, ...)", badcol);
            goto done;
        }
        if (!in_table)
            continue;
        int k, isnic = 0;
        char tail;
        if (sscanf(tok[0], "GPU%d%c", &k, &tail) == 1)
            isnic = 0;
        else if (sscanf(tok[0], "NIC%d%c", &k, &tail) == 1 || sscanf(tok[0], "mlx5_%d%c", &k, &tail) == 1)
            isnic = 1;
        else {
            in_table = 0;
            continue;
        }
        const int N = m.n_gpu + m.n_nic, r = isnic ? m.n_gpu + k : k;
        if (k < 0 || (isnic ? k >= m.n_nic : k >= m.n_gpu)) {
            st = tc_error(ctx, TC_ERR_INVALID, name, lineno, "row %s: not in the header (line %d)", tok[0],
                          header_line);
            goto done;
        }
        if (nt - 1 < N) {
            st = tc_error(ctx, TC_ERR_PARSE, name, lineno, "row %s: %d cells, the header has %d columns", tok[0],
                          nt - 1, N);
            goto done;
        }
        m.row_line[r] = lineno;
        rows++;
        for (int j = 0; j < N; j++) {
            int cnt, c = cell_code(tok[1 + j], &cnt);
            if (c == -2 || (c == P_X) != (j == r)) {
                st = tc_error(ctx, TC_ERR_INVALID, name, lineno,
                              "row %s: cell %d '%s' is not %s", tok[0], j + 1, tok[1 + j],
                              j == r ? "X (itself)" : xgmi ? "XGMI or PCIE" : "NV#, PIX, PXB, PHB, NODE or SYS");
                goto done;
            }
            m.cell[r * N + j] = c;
            if (c == P_NV && r < m.n_gpu && j < m.n_gpu)
                m.nv[r * m.n_gpu + j] = cnt;
        }
    }
    if (m.n_gpu == 0) {
        st = tc_error(ctx, TC_ERR_PARSE, name, lineno ? 1 : 0,
                      "not a topology this tacosc imports: no <system> (NCCL/RCCL dump), no 'GPU0 GPU1 ...' header "
                      "(nvidia-smi topo -m) and no 'Link Type between two GPUs' table (rocm-smi --showtopo)");
        goto done;
    }
    if (rows < m.n_gpu) {
        st = tc_error(ctx, TC_ERR_PARSE, name, header_line, "header has %d gpus, but only %d gpu rows follow",
                      m.n_gpu, rows);
        goto done;
    }
    for (int i = 0; i < m.n_gpu; i++)
        if (!m.row_line[i]) {
            st = tc_error(ctx, TC_ERR_PARSE, name, header_line, "no row for GPU%d", i);
            goto done;
        }
    if (xgmi && (!o || !o->gcn))
        tc_diag(ctx, TC_DIAG_NOTE, name, 0, 0, "rocm-smi names no gfx: XGMI links taken as gfx942 (MI300X), 48 GB/s "
                                              "each (give --gcn)");
    st = build(&m, o, xgmi, out);
done:
    free(copy);
    free(m.cell);
    free(m.nv);
    free(m.row_line);
    return st;
}
