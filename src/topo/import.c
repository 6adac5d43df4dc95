/*
 * import: the topology a collective runtime detected, as a tacosc topology (man 5 tacosc-topology,
 * `tacosc topo import`).
 *
 * Accepts, told apart by content: NCCL's topology dump (NCCL_TOPO_DUMP_FILE: <system version> with <cpu>,
 *   nested <pci>, <gpu> with <nvlink> children, <nic> with <net> children), RCCL's dump of the same format
 *   (<gpu gcn> with <xgmi> children), and the text of `nvidia-smi topo -m` and `rocm-smi --showtopo`
 *   (import_smi.c).
 * Returns: a topology read back through tc_topo_read_mem (so the reader's rules judge it): one NPU per GPU
 *   in the order of the dump's `dev` attribute, NVLink and XGMI links between GPUs, one NVSwitch vertex
 *   when GPUs link to an NVSwitch, the PCIe tree (bridges and CPUs as switch vertices) when the GPUs are not
 *   all joined by NVLink or XGMI, and one <nic> per <net> port shared by the GPUs nearest to it.
 * Bandwidths are the runtime's own tables (cited at each table below):
 *   - NVLink, per link: 18 (sm 60), 20 (sm 70 and 80), 12 (sm 86), 20.6 (sm 90), 40.1 GB/s (sm 100 and up),
 *     times the <nvlink count>: NVIDIA/nccl src/graph/topo.h (SM60_NVLINK_BW ... SM100_NVLINK_BW,
 *     ncclTopoNVLinkBw) and src/graph/topo.cc ncclTopoAddNvLinks, commit 5067397c2676.
 *   - XGMI, per link: 24 (Vega), 36 (gfx90a, MI200), 48 GB/s (gfx94x, MI300) times <xgmi count>:
 *     ROCm/rccl src/graph/topo.h (VEGA_XGMI_WIDTH, MI200_XGMI_WIDTH, GFX94X_XGMI_WIDTH, ncclTopoXGMISpeed)
 *     and src/graph/topo.cc ncclTopoAddXGMI, commit 0cbce2a7571c.
 *   - PCIe: link_width x per-lane rate / 80 GB/s, the rate in 100 Mb/s per lane: 2.5 GT/s 15, 5 GT/s 30,
 *     8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480; width 0 counts 16 (NCCL src/graph/topo.cc
 *     kvDictPciGen and ncclTopoAddPci).  Gen3 x16 = 12 GB/s (topo.h PCI_BW).
 *   - NIC: <net speed> in Mb/s, speed / 8000 GB/s, -1 or 0 read as 10000 (topo.cc ncclTopoAddNet); written
 *     as a Mb/s class, which tacosc reads as exactly an eighth of a MB/s.
 *   - Between CPUs (SYS): Intel BDW 6, SKL 10, SRP 22, ERP 40, AMD 16, POWER9 32, ARM 6, Zhaoxin 6 or 9 GB/s
 *     (topo.h *_QPI_BW, AMD_BW, P9_BW, ARM_BW, ZPI_BW; topo.cc ncclTopoGetInterCpuBw).
 *   - alpha: NCCL's per-hop hardware latencies for the LL protocol on a ring, NVLink 0.6 us, PCI 1.0 us, NET
 *     2.7 us (src/graph/tuning.cc hwLatencies); XGMI takes NVLink's (RCCL treats it as LINK_NVL).
 * A GPU uses the NIC nearest to it as NCCL ranks paths: PIX (one PCIe bridge between them), PXB (several, no
 *   host bridge), PHB (through its CPU), SYS (through the CPU interconnect); ties go to the NIC with fewest
 *   GPUs so far, then the lowest dev.  The GPU<->NIC class is the slowest PCIe link on the path (the SYS
 *   link when it crosses CPUs); a NIC's port class is its speed; gdr is the <net gdr> attribute.  A NIC no
 *   GPU chose is left out (a note names it).
 * Diagnostics: `file:line: error:` naming the element (xmlGetLineNo), e.g. "dump.xml:7: error: <gpu>: no
 *   sm (NCCL) or gcn (RCCL) attribute".  No network, no DTD, no entities.
 * Trace, two V100s (sm 70) on one PCIe switch, <nvlink target=GPU1 count="2">: class nvlink2 = 40 GB/s,
 *   link 0->1 and 1->0 of that class; a 100000 Mb/s <net> under the same switch: nic "mlx5_0" with npus
 *   "0 1", class = their slowest PCIe link, upclass net100000 = 100000Mb/s = 12.5 GB/s, path PIX.
 */
#include "topo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MAX_GPUS 4096

typedef struct imp_gpu {
    xmlNode *el;       /* <gpu> */
    xmlNode *pci;      /* its <pci> element (the device), or NULL */
    long dev;          /* local device index (order of the NPUs) */
    char busid[64];
    int sm;            /* NCCL: compute capability x 10 */
    char gcn[32];      /* RCCL: gfx name */
    double link_bw;    /* NVLink / XGMI per-link GB/s */
} imp_gpu;

typedef struct imp_nic {
    xmlNode *el;       /* <net> */
    xmlNode *at;       /* the <pci> holding its <nic>, or the <cpu> */
    char name[64];
    long mbps;
    int gdr;
    long dev;
} imp_nic;

typedef struct imp {
    tc_ctx *ctx;
    const char *file;
    imp_gpu *gpu;
    int n_gpu, cap_gpu;
    imp_nic *nic;
    int n_nic, cap_nic;
} imp;

static char *attr(xmlNode *n, const char *name) { return (char *)xmlGetNoNsProp(n, (const xmlChar *)name); }
static int is(xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}
static int line(xmlNode *n) { return n ? (int)xmlGetLineNo(n) : 0; }

/* A decimal or 0x integer attribute; 0 and *ok = 0 when absent or bad. */
static long long num_attr(xmlNode *n, const char *name, int *ok)
{
    char *v = attr(n, name), *end = NULL;
    long long x = 0;
    *ok = 0;
    if (v) {
        errno = 0;
        x = strtoll(v, &end, 0);
        *ok = end != v && *end == 0 && errno == 0;
    }
    xmlFree(v);
    return *ok ? x : 0;
}

/* NCCL src/graph/topo.h ncclTopoNVLinkBw (commit 5067397c2676): GB/s per NVLink by compute capability. */
static double nvlink_bw(int sm)
{
    return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 80 ? 20.0 : sm >= 70 ? 20.0 : sm >= 60 ? 18.0 : 20.0;
}

/* RCCL src/graph/topo.h ncclTopoXGMISpeed (commit 0cbce2a7571c): GB/s per XGMI link by gfx name. */
static double xgmi_bw(const char *gcn)
{
    return !strncmp(gcn, "gfx90a", 6) ? 36.0 : !strncmp(gcn, "gfx94", 5) ? 48.0 : 24.0;
}

/* NCCL src/graph/topo.cc kvDictPciGen: per-lane rate in 100 Mb/s; -1 when unknown (NCCL falls back to 60). */
static int pci_rate(const char *s)
{
    static const struct { const char *k; int v; } d[] = {
        {"2.5 GT/s", 15},        {"5 GT/s", 30},          {"8 GT/s", 60},          {"16 GT/s", 120},
        {"32 GT/s", 240},        {"2.5 GT/s PCIe", 15},   {"5.0 GT/s PCIe", 30},   {"8.0 GT/s PCIe", 60},
        {"16.0 GT/s PCIe", 120}, {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480},
    };
    for (size_t i = 0; s && i < sizeof d / sizeof d[0]; i++)
        if (!strcmp(s, d[i].k))
            return d[i].v;
    return -1;
}

/* The PCIe bandwidth of a <pci> element's link to its parent, GB/s (NCCL ncclTopoAddPci); 0 when it has
 * no link attributes (a GPU directly under a <cpu>: LOC). */
static double pci_bw(xmlNode *pci, int *gen, int *width)
{
    char *sp = attr(pci, "link_speed");
    int ok, w = (int)num_attr(pci, "link_width", &ok), r;
    if (!sp && !ok) {
        *gen = *width = 0;
        return 0;
    }
    r = pci_rate(sp);
    xmlFree(sp);
    if (r < 0)
        r = 60; /* NCCL's fallback for a speed it does not know */
    if (w <= 0)
        w = 16;
    *width = w;
    *gen = r == 15 ? 1 : r == 30 ? 2 : r == 60 ? 3 : r == 120 ? 4 : r == 240 ? 5 : 6;
    return w * r / 80.0;
}

/* Inter-CPU bandwidth of a <cpu> (NCCL topo.cc ncclTopoGetInterCpuBw and ncclTopoAddCpu's model rule). */
static double cpu_bw(xmlNode *cpu, const char **what)
{
    char *arch = attr(cpu, "arch"), *vendor = attr(cpu, "vendor");
    int ok1, ok2;
    long long fam = num_attr(cpu, "familyid", &ok1), model = num_attr(cpu, "modelid", &ok2);
    double bw = 5000.0; /* LOC_BW */
    *what = "loc";
    if (arch && !strcmp(arch, "ppc64")) {
        bw = 32.0, *what = "p9";
    } else if (arch && !strcmp(arch, "arm64")) {
        bw = 6.0, *what = "arm";
    } else if (arch && !strcmp(arch, "x86_64") && vendor && !strcmp(vendor, "GenuineIntel")) {
        if (fam == 6 && model >= 0xCF)
            bw = 40.0, *what = "erp";
        else if (fam == 6 && model >= 0x8F)
            bw = 22.0, *what = "srp";
        else if (fam == 6 && model >= 0x55)
            bw = 10.0, *what = "skl";
        else
            bw = 6.0, *what = "bdw";
    } else if (arch && !strcmp(arch, "x86_64") && vendor && !strcmp(vendor, "AuthenticAMD")) {
        bw = 16.0, *what = "amd";
    } else if (arch && !strcmp(arch, "x86_64") && vendor && (!strcmp(vendor, "CentaurHauls") ||
                                                            !strcmp(vendor, "  Shanghai  "))) {
        bw = fam == 7 && model == 0x5B ? 9.0 : 6.0, *what = "zpi";
    }
    xmlFree(arch);
    xmlFree(vendor);
    return bw;
}

static tc_status err(imp *m, xmlNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tc_status err(imp *m, xmlNode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_diag_v(m->ctx, TC_DIAG_ERROR, m->file, line(n), 0, fmt, ap);
    va_end(ap);
    return TC_ERR_INVALID;
}

static void busid_norm(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; in && *in && k + 1 < n; in++)
        out[k++] = (char)tolower((unsigned char)*in);
    out[k] = 0;
}

/* Collect GPUs and NIC ports under `n` (recursively). */
static tc_status collect(imp *m, xmlNode *n)
{
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is(c, "gpu")) {
            if (m->n_gpu == MAX_GPUS)
                return err(m, c, "<gpu>: more than %d gpus", MAX_GPUS);
            if (tc_grow((void **)&m->gpu, &m->cap_gpu, m->n_gpu + 1, sizeof *m->gpu))
                return tc_error(m->ctx, TC_ERR_NOMEM, m->file, 0, "out of memory importing");
            imp_gpu *g = &m->gpu[m->n_gpu];
            memset(g, 0, sizeof *g);
            g->el = c;
            g->pci = is(n, "pci") ? n : NULL;
            int ok;
            g->dev = num_attr(c, "dev", &ok);
            if (!ok || g->dev < 0)
                return err(m, c, "<gpu>: no dev attribute (the local device index, as NCCL dumps it)");
            char *b = g->pci ? attr(g->pci, "busid") : NULL;
            if (!b)
                return err(m, c, "<gpu>: not inside a <pci busid=...> element");
            busid_norm(b, g->busid, sizeof g->busid);
            xmlFree(b);
            char *gcn = attr(c, "gcn");
            g->sm = (int)num_attr(c, "sm", &ok);
            if (gcn) {
                snprintf(g->gcn, sizeof g->gcn, "%s", gcn);
                g->link_bw = xgmi_bw(g->gcn);
            } else if (ok && g->sm > 0) {
                g->link_bw = nvlink_bw(g->sm);
            } else {
                xmlFree(gcn);
                return err(m, c, "<gpu>: no sm (NCCL) or gcn (RCCL) attribute");
            }
            xmlFree(gcn);
            for (int i = 0; i < m->n_gpu; i++)
                if (m->gpu[i].dev == g->dev)
                    return err(m, c, "<gpu>: dev %ld given twice (first on line %d)", g->dev, line(m->gpu[i].el));
            m->n_gpu++;
            continue;
        }
        if (is(c, "net")) {
            if (tc_grow((void **)&m->nic, &m->cap_nic, m->n_nic + 1, sizeof *m->nic))
                return tc_error(m->ctx, TC_ERR_NOMEM, m->file, 0, "out of memory importing");
            imp_nic *x = &m->nic[m->n_nic];
            memset(x, 0, sizeof *x);
            x->el = c;
            xmlNode *holder = n->parent; /* <nic>'s parent: a <pci> or the <cpu> */
            x->at = holder;
            char *nm = attr(c, "name");
            snprintf(x->name, sizeof x->name, "%s", nm ? nm : "");
            xmlFree(nm);
            int ok;
            x->dev = num_attr(c, "dev", &ok);
            if (!ok)
                x->dev = m->n_nic;
            long long sp = num_attr(c, "speed", &ok);
            if (ok && sp > 2147483647) /* NCCL reads an int of Mb/s */
                return err(m, c, "<net>: speed %lld is not a speed in Mb/s (at most 2147483647)", sp);
            x->mbps = sp > 0 ? (long)sp : 10000; /* NCCL ncclTopoAddNet: "Some NICs define speed = -1" */
            if (!(ok && sp > 0)) { /* as NCCL reads it, but not silently */
                char *sv = attr(c, "speed");
                tc_warn(m->ctx, m->file, line(c), "<net>: speed '%s' is not a positive number of Mb/s: read as NCCL "
                        "reads it, 10000 Mb/s", sv ? sv : "(none)");
                xmlFree(sv);
            }
            x->gdr = (int)num_attr(c, "gdr", &ok);
            if (!ok)
                x->gdr = -1;
            m->n_nic++;
            continue;
        }
        if (is(c, "pci")) { /* NCCL reads link_width as an int; a PCIe link has at most 32 lanes */
            char *w = attr(c, "link_width");
            int ok;
            long long lanes = num_attr(c, "link_width", &ok);
            if (w && (!ok || lanes < 0 || lanes > 32)) {
                tc_status st = err(m, c, "<pci>: link_width '%s' is not a lane count (0 to 32)", w);
                xmlFree(w);
                return st;
            }
            xmlFree(w);
        }
        if (is(c, "cpu") || is(c, "pci") || is(c, "nic")) {
            tc_status st = collect(m, c);
            if (st)
                return st;
        }
    }
    return TC_OK;
}

static int cmp_gpu(const void *a, const void *b)
{
    const imp_gpu *x = a, *y = b;
    return (x->dev > y->dev) - (x->dev < y->dev);
}

static int gpu_by_busid(const imp *m, const char *busid)
{
    char b[64];
    busid_norm(busid, b, sizeof b);
    for (int i = 0; i < m->n_gpu; i++)
        if (!strcmp(m->gpu[i].busid, b))
            return i;
    return -1;
}

static xmlNode *cpu_of(xmlNode *n)
{
    while (n && !is(n, "cpu"))
        n = n->parent;
    return n;
}

/* Ancestors of n up to its <cpu> (inclusive), n first; returns the count (at most cap). */
static int chain(xmlNode *n, xmlNode **out, int cap)
{
    int k = 0;
    for (; n && k < cap; n = n->parent) {
        out[k++] = n;
        if (is(n, "cpu"))
            break;
    }
    return k;
}

/* NCCL's path type between a GPU's <pci> and a NIC's holder: 0 PIX, 1 PXB, 2 PHB, 3 SYS; *bw: the slowest
 * PCIe link on the way, GB/s (the inter-CPU one for SYS: sysbw). */
static int path_type(xmlNode *gpci, xmlNode *nat, double sysbw, double *bw)
{
    xmlNode *a[64], *b[64];
    int na = chain(gpci, a, 64), nb = chain(nat, b, 64), gen, width;
    double lo = INFINITY;
    int ia = -1, ib = -1;
    for (int i = 0; i < na && ia < 0; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j]) {
                ia = i;
                ib = j;
                break;
            }
    /* links below the common ancestor (each element's own link to its parent) */
    for (int i = 0; i < (ia < 0 ? na : ia); i++)
        if (is(a[i], "pci")) {
            double x = pci_bw(a[i], &gen, &width);
            if (x > 0 && x < lo)
                lo = x;
        }
    for (int j = 0; j < (ib < 0 ? nb : ib); j++)
        if (is(b[j], "pci")) {
            double x = pci_bw(b[j], &gen, &width);
            if (x > 0 && x < lo)
                lo = x;
        }
    int type;
    if (ia < 0) {
        type = 3;
        if (sysbw < lo)
            lo = sysbw;
    } else if (is(a[ia], "cpu")) {
        type = 2;
    } else {
        type = ia + ib <= 2 ? 0 : 1; /* GPU -> bridge -> NIC: one bridge */
    }
    *bw = isfinite(lo) ? lo : 5000.0;
    return type;
}

/* ---------------------------------------------------------------------------------------------- */
/* Building the topology                                                                          */

/* A class named `name` (made unique per bandwidth by the caller) with alpha and bw (B/s). */
static tc_status class_def(tc_topo *t, const char *name, double alpha, double bw, int *out)
{
    if (tc_topo_class_get(t, name, out) != TC_OK)
        return TC_ERR_NOMEM;
    return tc_topo_class_set(t, *out, alpha, 1.0 / bw);
}

#define A_NVL 0.6e-6
#define A_PCI 1.0e-6
#define A_NET 2.7e-6

/* Class of a PCIe link of bw GB/s ("pcie-g4x16"), or of the SYS interconnect. */
static tc_status pci_class(tc_topo *t, xmlNode *pci, int *cls)
{
    int gen, width;
    double bw = pci_bw(pci, &gen, &width);
    char nm[48];
    if (bw <= 0) {
        snprintf(nm, sizeof nm, "loc");
        bw = 5000.0;
    } else
        snprintf(nm, sizeof nm, "pcie-g%dx%d", gen, width);
    return class_def(t, nm, A_PCI, bw * 1e9, cls);
}

/* Switch name from an element: "pci-0000-1a-00.0", "cpu0". */
static void vertex_name(xmlNode *n, char *buf, size_t len)
{
    char *b = attr(n, is(n, "cpu") ? "numaid" : "busid");
    snprintf(buf, len, "%s-%s", is(n, "cpu") ? "cpu" : "pci", b ? b : "x");
    for (char *p = buf; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
            *p = '-';
    xmlFree(b);
}

static int find_switch(const tc_topo *t, const char *name)
{
    for (int s = 0; s < t->n_switches; s++)
        if (!strcmp(t->switches[s].name, name))
            return s;
    return -1;
}

/* The PCIe tree between the GPUs: a vertex per <pci> bridge and <cpu> on a GPU's way up, a "sys" vertex
 * above the CPUs when there are several.  Vertices with fewer than two ports are left out. */
static tc_status pcie_tree(imp *m, tc_topo *t, int sys_cls)
{
    tc_status st = TC_OK;
    int n = m->n_gpu, *ports = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!ports)
        return TC_ERR_NOMEM;
    /* every bridge or cpu that is an ancestor of a GPU's device, in GPU order, top first */
    for (int g = 0; g < n && !st; g++) {
        xmlNode *a[64];
        int k = chain(m->gpu[g].pci, a, 64);
        for (int i = k - 1; i >= 1 && !st; i--) {
            char nm[96];
            vertex_name(a[i], nm, sizeof nm);
            if (find_switch(t, nm) >= 0)
                continue;
            /* its NPU ports: GPUs whose device sits right under it, of the first one's PCIe class */
            int np = 0, cls;
            for (int h = 0; h < n; h++)
                if (m->gpu[h].pci && m->gpu[h].pci->parent == a[i])
                    ports[np++] = h;
            if ((st = pci_class(t, np ? m->gpu[ports[0]].pci : a[i - 1], &cls)))
                break;
            for (int p = 1; p < np; p++) { /* one class per switch vertex: say so when its GPUs' links differ */
                int other;
                if ((st = pci_class(t, m->gpu[ports[p]].pci, &other)))
                    break;
                if (other != cls) {
                    tc_warn(m->ctx, m->file, line(a[i]), "<pci>: switch '%s': its gpus have different PCIe links; "
                            "every port takes gpu %ld's (%s)", nm, m->gpu[ports[0]].dev, t->classes[cls].name);
                    break;
                }
            }
            if (st)
                break;
            if ((st = tc_topo_add_switch(t, nm, ports, np, cls, 0, line(a[i]))))
                break;
            tc_switch *sw = &t->switches[t->n_switches - 1];
            sw->model = TC_SWITCH_NODE;
            if (i + 1 < k) {
                char up[96];
                vertex_name(a[i + 1], up, sizeof up);
                sw->up = find_switch(t, up);
                if ((st = pci_class(t, a[i], &sw->up_cls)))
                    break;
            } else if (sys_cls >= 0) {
                int s = find_switch(t, "sys");
                if (s < 0) {
                    if ((st = tc_topo_add_switch(t, "sys", NULL, 0, sys_cls, 0, 0)))
                        break;
                    t->switches[t->n_switches - 1].model = TC_SWITCH_NODE;
                    s = t->n_switches - 1;
                    sw = &t->switches[t->n_switches - 2];
                }
                sw->up = s;
                sw->up_cls = sys_cls;
            }
        }
    }
    free(ports);
    if (st)
        return st;
    /* prune vertices with fewer than two ports: a chain's top whose only port is one child (the child
       becomes the top), a vertex left with its up link alone, one with nothing */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int s = 0; s < t->n_switches && !changed; s++) {
            tc_switch *sw = &t->switches[s];
            int kids = 0, kid = -1;
            for (int c = 0; c < t->n_switches; c++)
                if (t->switches[c].up == s)
                    kids++, kid = c;
            if (sw->nic || sw->n_ports + kids + (sw->up >= 0) >= 2)
                continue;
            if (kids == 1) {
                t->switches[kid].up = -1;
                t->switches[kid].up_cls = -1;
            }
            free(sw->name);
            free(sw->npus);
            memmove(sw, sw + 1, sizeof *sw * (size_t)(t->n_switches - s - 1));
            t->n_switches--;
            for (int c = 0; c < t->n_switches; c++)
                if (t->switches[c].up > s)
                    t->switches[c].up--;
            changed = 1;
        }
    }
    return TC_OK;
}

/* NVLink / XGMI links between GPUs and the NVSwitch vertex; adj[g * n + h] = 1 where g reaches h.  Counts add
 * up per target, as NCCL's ncclTopoConnectNodes adds the bandwidth of repeated links ("Aggregate links into
 * higher bw for NVLink"); every NVSwitch chip is one NVS node there, so the GPU's port to the fabric is the sum
 * of its NVSwitch links (the fewest any GPU has: the vertex has one class). */
static tc_status gpu_links(imp *m, tc_topo *t, unsigned char *adj)
{
    const int n = m->n_gpu;
    tc_status st = TC_OK;
    int *cnt = calloc((size_t)n * (size_t)n + 1, sizeof *cnt), *nvs = calloc((size_t)n + 1, sizeof *nvs);
    int *cline = calloc((size_t)n * (size_t)n + 1, sizeof *cline), *ports = malloc(sizeof(int) * (size_t)(n + 1));
    int xg = 0;
    if (!cnt || !nvs || !cline || !ports) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int g = 0; g < n && !st; g++)
        for (xmlNode *c = m->gpu[g].el->children; c; c = c->next) {
            if (!is(c, "nvlink") && !is(c, "xgmi"))
                continue;
            const char *kind = is(c, "xgmi") ? "xgmi" : "nvlink";
            xg |= is(c, "xgmi");
            int ok;
            long long k = num_attr(c, "count", &ok);
            char *tcl = attr(c, "tclass"), *tgt = attr(c, "target");
            if (!ok || k < 1 || k > 1024) {
                st = err(m, c, "<%s>: count must be a number of links from 1 to 1024", kind);
            } else if (!tcl) {
                st = err(m, c, "<%s>: no tclass attribute (the PCI class of the target)", kind);
            } else if (!strncmp(tcl, "0x0680", 6) && strcmp(tcl, "0x068001")) { /* 0x068000: NVSwitch */
                nvs[g] += (int)k;
            } else if (!strncmp(tcl, "0x03", 4)) {
                int h = tgt ? gpu_by_busid(m, tgt) : -1;
                if (h < 0)
                    st = err(m, c, "<%s>: target '%s' is no gpu of this dump", kind, tgt ? tgt : "");
                else if (h == g)
                    st = err(m, c, "<%s>: target '%s' is the gpu itself", kind, tgt);
                else {
                    cnt[(size_t)g * n + h] += (int)k;
                    if (!cline[(size_t)g * n + h])
                        cline[(size_t)g * n + h] = line(c);
                }
            } /* 0x068001: an NVLink to the CPU (POWER9), not between GPUs: left out */
            xmlFree(tcl);
            xmlFree(tgt);
            if (st)
                break;
        }
    for (int a = 0; a < n && !st; a++) /* pairs in order, each direction after the other (written as duplex) */
        for (int b = a + 1; b < n && !st; b++)
            for (int d = 0; d < 2 && !st; d++) {
                const int g = d ? b : a, h = d ? a : b, k = cnt[(size_t)g * n + h];
                if (!k)
                    continue;
                char nm[48];
                int cl;
                snprintf(nm, sizeof nm, "%s%d", xg ? "xgmi" : "nvlink", k);
                if ((st = class_def(t, nm, A_NVL, (double)k * m->gpu[g].link_bw * 1e9, &cl)) ||
                    (st = tc_topo_add_link(t, g, h, cl, -1, -1, cline[(size_t)g * n + h])))
                    break;
                adj[(size_t)g * n + h] = 1;
            }
    int np = 0, lo = 0, lo_g = -1, cl;
    for (int g = 0; g < n && !st; g++)
        if (nvs[g]) {
            ports[np++] = g;
            if (lo_g < 0 || nvs[g] < lo)
                lo = nvs[g], lo_g = g;
        }
    if (!st && np >= 2) {
        if ((st = class_def(t, "nvswitch", A_NVL, lo * m->gpu[lo_g].link_bw * 1e9, &cl)) ||
            (st = tc_topo_add_switch(t, "nvswitch", ports, np, cl, 0, 0)))
            goto done;
        t->switches[t->n_switches - 1].model = TC_SWITCH_NODE;
        for (int a = 0; a < np; a++)
            for (int b = 0; b < np; b++)
                adj[(size_t)ports[a] * n + ports[b]] = 1;
    }
done:
    free(cnt);
    free(nvs);
    free(cline);
    free(ports);
    return st;
}

/* Do the links of adj (both ways) join every GPU?  -1 out of memory. */
static int joined_by(const unsigned char *adj, int n)
{
    if (n <= 1)
        return 1;
    int *seen = calloc((size_t)n, sizeof *seen), *q = malloc(sizeof(int) * (size_t)n), h = 0, tl = 0;
    if (!seen || !q) {
        free(seen);
        free(q);
        return -1;
    }
    seen[0] = 1;
    q[tl++] = 0;
    while (h < tl) {
        int v = q[h++];
        for (int w = 0; w < n; w++)
            if (adj[(size_t)v * n + w] && adj[(size_t)w * n + v] && !seen[w])
                seen[w] = 1, q[tl++] = w;
    }
    free(seen);
    free(q);
    return tl == n;
}

/* One <nic> per NIC port that some GPU takes as its nearest (path type, then fewest GPUs so far); its class
 * the slowest PCIe link of its GPUs' paths, its port class the NIC speed. */
static tc_status add_nics(imp *m, tc_topo *t, double sysbw)
{
    static const char *const path_name[] = {"PIX", "PXB", "PHB", "SYS"};
    const int n = m->n_gpu;
    tc_status st = TC_OK;
    int *nic_of = malloc(sizeof(int) * (size_t)(n + 1)), *load = calloc((size_t)m->n_nic + 1, sizeof *load);
    int *best_type = malloc(sizeof(int) * (size_t)(n + 1)), *ports = malloc(sizeof(int) * (size_t)(n + 1));
    double *best_bw = malloc(sizeof(double) * (size_t)(n + 1));
    if (!nic_of || !load || !best_type || !best_bw || !ports) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    for (int g = 0; g < n; g++) {
        nic_of[g] = -1;
        for (int k = 0; k < m->n_nic; k++) {
            double bw;
            int ty = path_type(m->gpu[g].pci, m->nic[k].at, sysbw, &bw);
            if (nic_of[g] < 0 || ty < best_type[g] || (ty == best_type[g] && load[k] < load[nic_of[g]])) {
                nic_of[g] = k;
                best_type[g] = ty;
                best_bw[g] = bw;
            }
        }
        if (nic_of[g] >= 0)
            load[nic_of[g]]++;
    }
    for (int k = 0; k < m->n_nic; k++) {
        int np = 0, worst = 0;
        double lo = INFINITY;
        for (int g = 0; g < n; g++)
            if (nic_of[g] == k) {
                ports[np++] = g;
                worst = best_type[g] > worst ? best_type[g] : worst;
                lo = best_bw[g] < lo ? best_bw[g] : lo;
            }
        if (!np) {
            tc_diag(m->ctx, TC_DIAG_NOTE, m->file, line(m->nic[k].el), 0,
                    "<net name=\"%s\">: no gpu is nearest to this nic; left out", m->nic[k].name);
            continue;
        }
        char nm[64], cn[48];
        int cls, ucls, existing;
        snprintf(cn, sizeof cn, "nicpath-%s", path_name[worst]);
        /* one class per path type and bandwidth: the bandwidth in MB/s appended when it differs */
        if (tc_topo_class_get(t, cn, &existing) == TC_OK && t->classes[existing].defined &&
            t->classes[existing].beta != 1.0 / (lo * 1e9))
            snprintf(cn + strlen(cn), sizeof cn - strlen(cn), "-%.0fMBps", lo * 1000);
        if ((st = class_def(t, cn, A_PCI, lo * 1e9, &cls)))
            goto done;
        snprintf(nm, sizeof nm, "net%ldMbps", m->nic[k].mbps);
        if ((st = tc_topo_class_get(t, nm, &ucls)) ||
            (st = tc_topo_class_set(t, ucls, A_NET, 8.0 / ((double)m->nic[k].mbps * 1e6))))
            goto done;
        snprintf(nm, sizeof nm, "%s", m->nic[k].name[0] ? m->nic[k].name : "nic");
        for (char *p = nm; *p; p++)
            if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
                *p = '_';
        if (!(isalpha((unsigned char)nm[0]) || nm[0] == '_')) {
            char tmp[64];
            snprintf(tmp, sizeof tmp, "nic_%.58s", nm);
            snprintf(nm, sizeof nm, "%s", tmp);
        }
        if (find_switch(t, nm) >= 0)
            snprintf(nm + strlen(nm), sizeof nm - strlen(nm), ".%d", k);
        if ((st = tc_topo_add_switch(t, nm, ports, np, cls, 0, line(m->nic[k].el))))
            goto done;
        tc_switch *sw = &t->switches[t->n_switches - 1];
        sw->nic = 1;
        sw->model = TC_SWITCH_NODE;
        sw->up_cls = ucls;
        sw->gdr = m->nic[k].gdr;
        snprintf(sw->path, sizeof sw->path, "%s", path_name[worst]);
    }
done:
    free(nic_of);
    free(load);
    free(best_type);
    free(best_bw);
    free(ports);
    return st;
}

/* The topology of the collected GPUs and NICs: GPU links, the PCIe tree where they leave GPUs apart, NICs. */
static tc_status build(imp *m, const char *name, tc_topo **out)
{
    const int n = m->n_gpu;
    tc_topo *t = NULL;
    tc_status st = TC_OK;
    unsigned char *adj = calloc((size_t)n * (size_t)n + 1, 1);
    if (!adj || tc_topo_create(name, n, &t)) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    if ((st = gpu_links(m, t, adj)))
        goto done;
    const int joined = joined_by(adj, n);
    if (joined < 0) {
        st = TC_ERR_NOMEM;
        goto done;
    }
    /* the inter-CPU bandwidth when the GPUs sit under several CPUs, a class when the PCIe tree needs it */
    int sys_cls = -1;
    double sysbw = 5000.0; /* LOC_BW: one CPU */
    xmlNode *cpu0 = NULL;
    for (int g = 0; g < n && !st; g++) {
        xmlNode *c = cpu_of(m->gpu[g].pci);
        if (!cpu0)
            cpu0 = c;
        else if (c != cpu0 && sysbw == 5000.0) {
            const char *what;
            char nm[32];
            sysbw = cpu_bw(c, &what);
            snprintf(nm, sizeof nm, "sys-%s", what);
            if (!joined)
                st = class_def(t, nm, A_PCI, sysbw * 1e9, &sys_cls);
        }
    }
    if (!st && !joined)
        st = pcie_tree(m, t, sys_cls);
    if (!st)
        st = add_nics(m, t, sysbw);
    if (!st) {
        *out = t;
        t = NULL;
    }
done:
    free(adj);
    tc_topo_free(t);
    if (st == TC_ERR_NOMEM)
        tc_error(m->ctx, st, m->file, 0, "out of memory importing");
    return st;
}

void tc_topo_import_name(const char *file, int n_gpu, char *buf, size_t len)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t k = 0;
    for (; b[k] && b[k] != '.' && k + 1 < len; k++)
        buf[k] = isalnum((unsigned char)b[k]) || b[k] == '-' || b[k] == '_' ? b[k] : '-';
    buf[k] = 0;
    if (!k || !(isalpha((unsigned char)buf[0]) || buf[0] == '_'))
        snprintf(buf, len, "import-%dgpu", n_gpu);
}

/* Write t and read it back: the reader's rules judge what the import built (and it is indexed). */
tc_status tc_topo_import_finish(tc_ctx *ctx, const char *file, tc_topo *t, tc_topo **out)
{
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f)
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "out of memory importing");
    tc_status st = tc_topo_write(ctx, t, f);
    fclose(f);
    if (!st) {
        tc_buf msg = {0};
        tc_ctx sub = *ctx;
        sub.sink = tc_diag_buffer;
        sub.sink_user = &msg;
        st = tc_topo_read_mem(&sub, "imported topology", xml, len, out);
        if (st)
            tc_error(ctx, TC_ERR_INTERNAL, file, 0, "the imported topology does not read back (a bug in tacosc "
                                                    "import): %s", msg.data ? msg.data : "");
        tc_buf_free(&msg);
    }
    if (!st) {
        free((*out)->file);
        (*out)->file = tc_strdup(file);
    }
    free(xml);
    return st;
}

/* The first parse error (libxml2's last one is often a consequence of it). */
typedef struct first_err {
    int have, line;
    char msg[256];
} first_err;

static void keep_first(void *user, xmlErrorPtr err)
{
    first_err *e = ((xmlParserCtxtPtr)user)->_private;
    if (e->have || !err || err->level == XML_ERR_WARNING)
        return;
    e->have = 1;
    e->line = err->line;
    snprintf(e->msg, sizeof e->msg, "%s", err->message ? err->message : "malformed XML");
    size_t k = strlen(e->msg);
    while (k && (e->msg[k - 1] == '\n' || e->msg[k - 1] == ' '))
        e->msg[--k] = 0;
}

static tc_status import_xml(tc_ctx *ctx, const char *name, const char *buf, size_t len, tc_topo **out)
{
    imp m = {.ctx = ctx, .file = name};
    tc_status st = TC_OK;
    tc_topo *t = NULL;
    if (memmem(buf, len, "<!DOCTYPE", 9)) /* buf is not NUL-terminated (make fuzz found the strstr) */
        return tc_error(ctx, TC_ERR_PARSE, name, 0, "<!DOCTYPE> is not allowed in a topology dump");
    if (len > INT_MAX)
        return tc_error(ctx, TC_ERR_LIMIT, name, 0, "a topology dump of %zu bytes is too large to import", len);
    first_err e = {0};
    xmlDocPtr doc = NULL;
    xmlParserCtxtPtr pc = xmlNewParserCtxt();
    if (!pc)
        return tc_error(ctx, TC_ERR_NOMEM, name, 0, "out of memory importing");
    pc->_private = &e;
    pc->sax->serror = keep_first;
    doc = xmlCtxtReadMemory(pc, buf, (int)len, name, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (!doc || e.have || !pc->wellFormed) {
        xmlFreeDoc(doc);
        xmlFreeParserCtxt(pc);
        return tc_error(ctx, TC_ERR_PARSE, name, e.line, "malformed XML: %s", e.have ? e.msg : "not well formed");
    }
    xmlFreeParserCtxt(pc);
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!is(root, "system")) {
        st = tc_error(ctx, TC_ERR_INVALID, name, line(root),
                      "root element must be <system> (an NCCL or RCCL topology dump), got <%s>%s",
                      root ? (const char *)root->name : "nothing",
                      is(root, "topology") ? " (already a tacosc topology: use it as it is)" : "");
        goto done;
    }
    if ((st = collect(&m, root)))
        goto done;
    if (m.n_gpu == 0) {
        st = tc_error(ctx, TC_ERR_INVALID, name, line(root), "<system>: no <gpu> element (nothing to import)");
        goto done;
    }
    qsort(m.gpu, (size_t)m.n_gpu, sizeof *m.gpu, cmp_gpu);
    char tname[96];
    tc_topo_import_name(name, m.n_gpu, tname, sizeof tname);
    if ((st = build(&m, tname, &t)))
        goto done;
    st = tc_topo_import_finish(ctx, name, t, out);
done:
    tc_topo_free(t);
    free(m.gpu);
    free(m.nic);
    xmlFreeDoc(doc);
    return st;
}

tc_status tc_topo_import_mem(tc_ctx *ctx, const char *name, const char *buf, size_t len,
                             const tc_import_opts *o, tc_topo **out)
{
    const char *p = buf;
    while (p < buf + len && isspace((unsigned char)*p))
        p++;
    if (p < buf + len && *p == '<')
        return import_xml(ctx, name, buf, len, out);
    return tc_topo_import_smi(ctx, name, buf, len, o, out);
}

tc_status tc_topo_import(tc_ctx *ctx, const char *path, const tc_import_opts *o, tc_topo **out)
{
    char *buf;
    size_t len;
    tc_status st = tc_read_file_max(ctx, path, TC_TEXT_MAX_DUMP, "topology dump", &buf, &len);
    if (st)
        return st;
    st = tc_topo_import_mem(ctx, path, buf, len, o, out);
    free(buf);
    return st;
}
