/*
 * svg: pictures of simulation results that a person reads without hovering (tc_sim_svg_write, sim.h).
 *
 * Accepts: the topology the results were simulated on and one or more results (panels).
 * Returns: one SVG document:
 *   - with several panels (tacosc compare), a summary bar chart first: one bar per panel on one time axis
 *     (ticks in ns, us, ms or s), its time at the bar's end, and the bound of every plan (the smallest of
 *     the panels' bounds) as a dashed line;
 *   - a colour legend: link utilization (busy fraction) from white through yellow to red, in 20 steps;
 *   - per panel: a caption (time, bound, efficiency, utilization); the topology drawn with a layout from
 *     igraph (grid coordinates for a recognised torus or mesh, Kamada-Kawai up to 1024 NPUs, a circle
 *     above), each direction of a linked pair as its own line, offset to its right-hand side and coloured
 *     by its utilization (one line per pair, the busier direction, above 2,500 pairs); a heat map: up to 64
 *     NPUs a src x dst matrix with labelled axes, above that one cell per link in id order, plus the
 *     busiest links by name and per-class statistics; and, when the result has a timeline, link occupancy
 *     over time (rows are links labelled src->dst, or groups of consecutive links) on a labelled time axis,
 *     shared by all panels so their lengths compare.
 * Size: cells and lines of one colour are one <path>, coordinates integers and relative moves, so a
 *   64-NPU compare of every algorithm (fc-64: 4,032 links) stays under 1 MB.
 * Structure (for tests and tools): <g class="summary">, <g class="legend">, per panel <g class="panel">
 *   with <g class="topology" data-lines="N">, <g class="heatmap" data-cells="N" data-links="L"> (each cell a
 *   closed subpath) and <g class="timeline">.
 * Deterministic: fixed float formats, id order, igraph layouts without randomness (Kamada-Kawai from a
 *   circle), no timestamps.
 */
#include "tacos/topo.h"
#include "tacos/sim.h"
#include "tacos/topo.h"

#include <igraph/igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 960             /* document width */
#define M 20              /* margin */
#define NB 20             /* colour steps */
#define MATRIX_NPUS 64    /* a src x dst matrix up to this many NPUs */
#define MAX_TL_ROWS 40    /* timeline rows */
#define MAX_LINES 2500    /* topology lines before pairs are merged */
#define LAYOUT_KK 1024    /* Kamada-Kawai up to this many NPUs */

/* Colour step of a utilization (0..NB-1) and its colour: white (0) -> yellow (0.5) -> red (1). */
static int bucket(double u)
{
    if (!(u > 0))
        return 0;
    int b = (int)(u * (NB - 1) + 0.5);
    return b >= NB ? NB - 1 : b;
}

static void bucket_color(int b, char out[8])
{
    const double u = (double)b / (NB - 1);
    int r, g, bl;
    if (u <= 0.5) {
        r = 255;
        g = 255;
        bl = (int)lround(255 * (1 - 2 * u));
    } else {
        r = 255 - (int)lround(80 * (2 * u - 1));
        g = (int)lround(255 * (2 - 2 * u));
        bl = 0;
    }
    snprintf(out, 8, "#%02x%02x%02x", r, g, bl);
}

/* One <path> per colour: subpaths appended with relative moves from the previous one's start. */
typedef struct paths {
    tc_buf d[NB];
    int x[NB], y[NB], used[NB];
    tc_status st;
} paths;

static void paths_move(paths *p, int b, int x, int y)
{
    if (!p->used[b])
        p->st |= tc_buf_printf(&p->d[b], "M%d %d", x, y);
    else
        p->st |= tc_buf_printf(&p->d[b], "m%d %d", x - p->x[b], y - p->y[b]);
    p->used[b] = 1;
    p->x[b] = x;
    p->y[b] = y;
}

/* A w x h cell at (x, y) in colour step b (a closed subpath: the move returns to its start). */
static void paths_cell(paths *p, int b, int x, int y, int w, int h)
{
    paths_move(p, b, x, y);
    p->st |= tc_buf_printf(&p->d[b], "h%dv%dh%dz", w, h, -w);
}

/* A line from (x0, y0) to (x1, y1) in colour step b. */
static void paths_line(paths *p, int b, int x0, int y0, int x1, int y1)
{
    paths_move(p, b, x0, y0);
    p->st |= tc_buf_printf(&p->d[b], "l%d %d", x1 - x0, y1 - y0);
    p->x[b] = x1; /* an open subpath: the next move is relative to where it ends */
    p->y[b] = y1;
}

/* Write the paths (cells: filled; lines: stroked with `width`) and reset them. */
static void paths_flush(paths *p, FILE *f, int lines, double width)
{
    for (int b = 0; b < NB; b++) {
        if (!p->used[b])
            continue;
        char c[8];
        bucket_color(b, c);
        if (lines)
            fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" d=\"%s\"/>\n", b ? c : "#d0d0d0",
                    width, p->d[b].data);
        else
            fprintf(f, "<path fill=\"%s\" d=\"%s\"/>\n", c, p->d[b].data);
        tc_buf_free(&p->d[b]);
        p->used[b] = 0;
    }
}

static void paths_free(paths *p)
{
    for (int b = 0; b < NB; b++)
        tc_buf_free(&p->d[b]);
}

/* A time for axis ticks: "0", "250 ns", "1.5 us", "40 ms", "2 s" (shortest of at most 3 significant
 * digits). */
static const char *tick_label(double t, char *buf, size_t n)
{
    static const struct { double scale; const char *unit; } u[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    if (t <= 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    size_t k = 0;
    while (k + 1 < sizeof u / sizeof u[0] && t < u[k].scale * 0.9999)
        k++;
    snprintf(buf, n, "%.3g %s", t / u[k].scale, u[k].unit);
    return buf;
}

/* A "nice" tick step (1, 2 or 5 x 10^k) giving at most about 8 ticks up to tmax. */
static double tick_step(double tmax)
{
    if (!(tmax > 0))
        return 1;
    const double raw = tmax / 8, p = pow(10, floor(log10(raw)));
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

/* A horizontal time axis at y from x0 (time 0) to x0 + w (time tmax), with ticks and labels. */
static void time_axis(FILE *f, int x0, int y, int w, double tmax, const char *label)
{
    fprintf(f, "<g class=\"axis\"><path stroke=\"#444444\" fill=\"none\" d=\"M%d %dh%d\"/>\n", x0, y, w);
    const double step = tick_step(tmax);
    char b[32];
    for (int k = 0; k * step <= tmax * (1 + 1e-9); k++) {
        const int x = x0 + (int)lround(w * (k * step) / tmax);
        fprintf(f, "<path stroke=\"#444444\" d=\"M%d %dv4\"/><text x=\"%d\" y=\"%d\" font-size=\"10\" "
                   "text-anchor=\"middle\">%s</text>\n",
                x, y, x, y + 15, tick_label(k * step, b, sizeof b));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text></g>\n", x0 + w, y + 28, label);
}

/* ------------------------------------------------------------------------------------------------ */
/* Layout                                                                                            */

/* Positions of the vertices (NPUs, then switch vertices) in [0, 1] x [0, *height] (xy[2 v], xy[2 v + 1]),
 * the aspect ratio kept. */
static tc_status layout_graph(const tc_topo *t, int n, double *xy);

static tc_status layout(const tc_topo *t, double *xy, double *height)
{
    *height = 1;
    const int n = tc_topo_n_vertices(t);
    int dims[8];
    const int nd = n > 1 && !t->n_swnodes ? tc_topo_grid_dims(t, dims) : 0;
    if (nd == 2 || nd == 3) { /* the grid itself; a 3D grid's planes side by side */
        const int a = dims[0], b = dims[1], c = nd == 3 ? dims[2] : 1;
        const double wx = (double)(a * c + (c - 1)), wy = (double)b, span = wx > wy ? wx : wy;
        for (int v = 0; v < n; v++) {
            const int i = v % a, j = (v / a) % b, k = v / (a * b);
            xy[2 * v] = (k * (a + 1) + i + 0.5) / span;
            xy[2 * v + 1] = (j + 0.5) / span;
        }
        *height = wy / span;
        return TC_OK;
    }
    if (n == 1) {
        xy[0] = xy[1] = 0.5;
        return TC_OK;
    }
    tc_igraph_lock();
    tc_status st = layout_graph(t, n, xy);
    tc_igraph_unlock();
    return st;
}

/* The igraph part of layout (under tc_igraph_lock): a circle, then Kamada-Kawai up to LAYOUT_KK vertices. */
static tc_status layout_graph(const tc_topo *t, int n, double *xy)
{
    igraph_vector_int_t ev;
    igraph_matrix_t res;
    igraph_t g;
    if (igraph_vector_int_init(&ev, 2 * (igraph_integer_t)t->n_links))
        return TC_ERR_NOMEM;
    for (int l = 0; l < t->n_links; l++) {
        VECTOR(ev)[2 * l] = t->links[l].src;
        VECTOR(ev)[2 * l + 1] = t->links[l].dst;
    }
    tc_status st = TC_ERR_NOMEM;
    if (igraph_create(&g, &ev, n, IGRAPH_UNDIRECTED)) {
        igraph_vector_int_destroy(&ev);
        return st;
    }
    if (igraph_matrix_init(&res, n, 2) == IGRAPH_SUCCESS) {
        if (igraph_layout_circle(&g, &res, igraph_vss_all()) == IGRAPH_SUCCESS &&
            (n > LAYOUT_KK || igraph_layout_kamada_kawai(&g, &res, 1, 50 * (igraph_integer_t)n, 0, n, NULL, NULL,
                                                         NULL, NULL, NULL) == IGRAPH_SUCCESS)) {
            double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
            for (int v = 0; v < n; v++)
                for (int k = 0; k < 2; k++) {
                    const double c = MATRIX(res, v, k);
                    lo[k] = c < lo[k] ? c : lo[k];
                    hi[k] = c > hi[k] ? c : hi[k];
                }
            const double span = fmax(hi[0] - lo[0], hi[1] - lo[1]);
            for (int v = 0; v < n; v++)
                for (int k = 0; k < 2; k++)
                    xy[2 * v + k] = span > 0 ? 0.5 + (MATRIX(res, v, k) - (lo[k] + hi[k]) / 2) / span : 0.5;
            st = TC_OK;
        }
        igraph_matrix_destroy(&res);
    }
    igraph_destroy(&g);
    igraph_vector_int_destroy(&ev);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Parts of a panel                                                                                  */

typedef struct pic {
    FILE *f;
    const tc_topo *t;
    const double *xy;
    double height;       /* of the layout, for a width of 1 */
    double tmax;         /* the common time scale */
    tc_status st;
} pic;

/* The topology drawing at (x, y), size x size; returns its height. */
static int draw_topology(pic *P, const tc_sim_result *r, int x0, int y0, int size)
{
    const tc_topo *t = P->t;
    const int n = tc_topo_n_vertices(t);
    FILE *f = P->f;
    paths p;
    memset(&p, 0, sizeof p);
    /* one line per direction, or per pair when there are too many */
    int lines = 0;
    const int merge = t->n_links > MAX_LINES;
    for (int l = 0; l < t->n_links; l++) {
        const int a = t->links[l].src, b = t->links[l].dst;
        if (a == b)
            continue;
        const int back = tc_topo_link_between(t, b, a);
        double u = r->link_util[l];
        if (merge) {
            if (back >= 0 && (a > b || tc_topo_link_between(t, a, b) != l))
                continue; /* the pair is drawn once, from its lower end's first link */
            if (tc_topo_link_between(t, a, b) != l)
                continue;
            if (back >= 0 && r->link_util[back] > u)
                u = r->link_util[back];
        } else if (tc_topo_link_between(t, a, b) != l)
            continue; /* parallel links: the first stands for them */
        else
            for (int k = t->out_off[a]; k < t->out_off[a + 1]; k++) /* the busiest of parallel links */
                if (t->links[t->out_link[k]].dst == b && r->link_util[t->out_link[k]] > u)
                    u = r->link_util[t->out_link[k]];
        double ax = x0 + P->xy[2 * a] * size, ay = y0 + P->xy[2 * a + 1] * size;
        double bx = x0 + P->xy[2 * b] * size, by = y0 + P->xy[2 * b + 1] * size;
        if (!merge && back >= 0) { /* right-hand side of the direction a -> b */
            const double dx = bx - ax, dy = by - ay, len = sqrt(dx * dx + dy * dy);
            if (len > 0) {
                const double ox = -dy / len * 1.5, oy = dx / len * 1.5;
                ax += ox;
                ay += oy;
                bx += ox;
                by += oy;
            }
        }
        paths_line(&p, bucket(u), (int)lround(ax), (int)lround(ay), (int)lround(bx), (int)lround(by));
        lines++;
    }
    fprintf(f, "<g class=\"topology\" data-lines=\"%d\">\n", lines);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">topology: %s</text>\n", x0, y0 - 6,
            merge ? "a line per linked pair (its busier way)" : "a line per direction, on its right");
    paths_flush(&p, f, 1, n > 256 ? 1.0 : 2.0);
    P->st |= p.st;
    paths_free(&p);
    const double rad = n <= 64 ? 4 : n <= 256 ? 2.5 : 1.2;
    tc_buf nodes = {0};
    for (int v = 0; v < t->n_npus; v++)
        P->st |= tc_buf_printf(&nodes, "M%ld %lda%.1f %.1f 0 1 0 0.1 0z", lround(x0 + P->xy[2 * v] * size - 0.05),
                               lround(y0 + P->xy[2 * v + 1] * size), rad, rad);
    fprintf(f, "<path fill=\"#333333\" d=\"%s\"/>\n", nodes.data ? nodes.data : "");
    tc_buf_free(&nodes);
    for (int v = t->n_npus; v < n; v++) /* switch vertices: squares */
        fprintf(f, "<rect class=\"switch\" x=\"%ld\" y=\"%ld\" width=\"%.0f\" height=\"%.0f\" fill=\"#4477aa\"/>\n",
                lround(x0 + P->xy[2 * v] * size - 2 * rad), lround(y0 + P->xy[2 * v + 1] * size - 2 * rad), 4 * rad,
                4 * rad);
    if (n <= 64)
        for (int v = 0; v < n; v++) {
            fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"9\" fill=\"#000000\">",
                    lround(x0 + P->xy[2 * v] * size + 4), lround(y0 + P->xy[2 * v + 1] * size - 4));
            if (v < t->n_npus)
                fprintf(f, "%d", v);
            else
                tc_xml_escape(f, t->swnodes[v - t->n_npus].name);
            fputs("</text>\n", f);
        }
    fputs("</g>\n", f);
    return (int)lround(size * P->height) + 10;
}

/* Per-class link counts and utilization; returns lines written. */
static int class_stats(pic *P, const tc_sim_result *r, int x0, int y)
{
    const tc_topo *t = P->t;
    int rows = 0;
    for (int c = 0; c < t->n_classes; c++) {
        int cnt = 0;
        double sum = 0, mx = 0;
        for (int l = 0; l < t->n_links; l++)
            if (t->links[l].cls == c) {
                cnt++;
                sum += r->link_util[l];
                mx = r->link_util[l] > mx ? r->link_util[l] : mx;
            }
        if (!cnt)
            continue;
        fprintf(P->f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">class ", x0, y + 14 * rows);
        tc_xml_escape(P->f, t->classes[c].name);
        fprintf(P->f, ": %d links, utilization mean %.2f, max %.2f</text>\n", cnt, cnt ? sum / cnt : 0.0, mx);
        rows++;
    }
    return rows;
}

/* The heat map at (x0, y0) within width w; returns its height. */
static int draw_heatmap(pic *P, const tc_sim_result *r, int x0, int y0, int w)
{
    const tc_topo *t = P->t;
    const int n = tc_topo_n_vertices(t); /* rows and columns: NPUs, then switch vertices */
    FILE *f = P->f;
    paths p;
    memset(&p, 0, sizeof p);
    int cells = 0, h;
    if (n <= MATRIX_NPUS) {
        const int cell = n <= 16 ? 18 : n <= 32 ? 12 : 8, side = cell * n, lx = x0 + 30, ly = y0 + 30;
        const int step = n <= 16 ? 1 : n <= 32 ? 4 : 8;
        double *u = malloc((size_t)n * n * sizeof *u);
        if (!u) {
            P->st |= TC_ERR_NOMEM;
            return 0;
        }
        for (int i = 0; i < n * n; i++)
            u[i] = -1;
        for (int l = 0; l < t->n_links; l++) {
            const int i = t->links[l].src * n + t->links[l].dst;
            u[i] = r->link_util[l] > u[i] ? r->link_util[l] : u[i];
        }
        for (int i = 0; i < n * n; i++)
            if (u[i] >= 0) {
                paths_cell(&p, bucket(u[i]), lx + (i % n) * cell, ly + (i / n) * cell, cell, cell);
                cells++;
            }
        free(u);
        fprintf(f, "<g class=\"heatmap\" data-cells=\"%d\" data-links=\"%d\">\n", cells, t->n_links);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">heat map: link src -&gt; dst (row src, column dst), "
                   "grey: no link",
                x0, y0 + 6);
        if (t->n_swnodes)
            fprintf(f, "; switch vertices from %d on", t->n_npus);
        fputs("</text>\n", f);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eeeeee\" stroke=\"#888888\"/>\n", lx, ly,
                side, side);
        paths_flush(&p, f, 0, 0);
        for (int k = 0; k < n; k += step) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%d</text>\n",
                    lx + k * cell + cell / 2, ly - 3, k);
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">%d</text>\n", lx - 3,
                    ly + k * cell + cell / 2 + 3, k);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">dst</text>\n", lx + side + 4, ly + 4);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">src</text>\n", lx - 26, ly + side + 12);
        h = 30 + side + 20;
    } else {
        int cols = (int)ceil(sqrt((double)t->n_links)), cell = (w - 40) / (cols ? cols : 1);
        cell = cell > 12 ? 12 : cell < 2 ? 2 : cell;
        cols = (w - 40) / cell;
        const int lx = x0, ly = y0 + 30, rows = (t->n_links + cols - 1) / cols;
        for (int l = 0; l < t->n_links; l++) {
            paths_cell(&p, bucket(r->link_util[l]), lx + (l % cols) * cell, ly + (l / cols) * cell, cell, cell);
            cells++;
        }
        fprintf(f, "<g class=\"heatmap\" data-cells=\"%d\" data-links=\"%d\">\n", cells, t->n_links);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">heat map: one cell per link in id order, %d per row "
                   "(link = row x %d + column); the busiest:</text>\n",
                x0, y0 + 6, cols, cols);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n", lx, ly,
                cols * cell, rows * cell);
        paths_flush(&p, f, 0, 0);
        /* the busiest links by name, in order (ties: lower id first) */
        int top[8], nt = 0;
        for (int l = 0; l < t->n_links; l++) {
            int k = nt;
            while (k > 0 && r->link_util[l] > r->link_util[top[k - 1]])
                k--;
            if (k >= 8)
                continue;
            for (int j = (nt < 8 ? nt++ : 7); j > k; j--)
                top[j] = top[j - 1];
            top[k] = l;
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">", x0, y0 + 20);
        int used = 0; /* classes are named when there are several */
        for (int c = 0; c < t->n_classes; c++)
            for (int l = 0; l < t->n_links; l++)
                if (t->links[l].cls == c) {
                    used++;
                    break;
                }
        for (int k = 0; k < nt && k < (used > 1 ? 5 : 7); k++) {
            fprintf(f, "%s%d-&gt;%d ", k ? ", " : "", t->links[top[k]].src, t->links[top[k]].dst);
            if (used > 1) {
                tc_xml_escape(f, t->classes[t->links[top[k]].cls].name);
                fputc(' ', f);
            }
            fprintf(f, "%.2f", r->link_util[top[k]]);
        }
        fputs("</text>\n", f);
        h = 30 + rows * cell + 10;
    }
    P->st |= p.st;
    paths_free(&p);
    const int rows = class_stats(P, r, x0, y0 + h + 4);
    fputs("</g>\n", f);
    return h + 14 * rows + 8;
}

/* The occupancy timeline at (x0, y0) within width w, on the common time scale; returns its height. */
static int draw_timeline(pic *P, const tc_sim_result *r, int x0, int y0, int w)
{
    const tc_topo *t = P->t;
    FILE *f = P->f;
    if (!r->timeline || r->bins <= 0 || r->n_links <= 0 || !(P->tmax > 0))
        return 0;
    const int group = (r->n_links + MAX_TL_ROWS - 1) / MAX_TL_ROWS, rows = (r->n_links + group - 1) / group;
    const int rh = rows <= 16 ? 10 : 6, lx = x0 + 90, lw = w - 90, ly = y0 + 16;
    paths p;
    memset(&p, 0, sizeof p);
    const double scale = r->time / P->tmax; /* this panel's share of the common axis */
    for (int row = 0; row < rows; row++) {
        for (int b = 0; b < r->bins; b++) {
            double occ = 0;
            int cnt = 0;
            for (int l = row * group; l < (row + 1) * group && l < r->n_links; l++, cnt++)
                occ += r->timeline[(size_t)l * r->bins + b];
            occ = cnt ? occ / cnt : 0;
            if (occ <= 1e-6)
                continue;
            const int xa = lx + (int)lround(lw * scale * b / r->bins);
            const int xb = lx + (int)lround(lw * scale * (b + 1) / r->bins);
            paths_cell(&p, bucket(occ), xa, ly + row * rh, xb > xa ? xb - xa : 1, rh - 1);
        }
    }
    fprintf(f, "<g class=\"timeline\">\n<text x=\"%d\" y=\"%d\" font-size=\"11\">link occupancy over time "
               "(%s; colour: busy fraction of the interval)</text>\n",
            x0, y0 + 8, group > 1 ? "each row a group of consecutive links, mean" : "each row one link");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#888888\"/>\n", lx, ly, lw,
            rows * rh);
    paths_flush(&p, f, 0, 0);
    P->st |= p.st;
    paths_free(&p);
    const int every = (11 + rh - 1) / rh; /* labels 11 px apart at least */
    for (int row = 0; row < rows; row += every) {
        const int a = row * group, b = (row + 1) * group - 1 < r->n_links - 1 ? (row + 1) * group - 1 : r->n_links - 1;
        if (group == 1)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">%d-&gt;%d</text>\n", lx - 4,
                    ly + row * rh + rh - 1, t->links[a].src, t->links[a].dst);
        else
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">links %d-%d</text>\n", lx - 4,
                    ly + row * rh + rh - 1, a, b);
    }
    time_axis(f, lx, ly + rows * rh, lw, P->tmax, "time");
    fputs("</g>\n", f);
    return 16 + rows * rh + 34;
}

/* The colour legend at (x0, y0); returns its height. */
static int draw_legend(FILE *f, int x0, int y0)
{
    fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\" font-size=\"11\">link utilization (busy fraction)"
               "</text>\n",
            x0, y0 + 10);
    for (int b = 0; b < NB; b++) {
        char c[8];
        bucket_color(b, c);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\" stroke=\"#888888\" "
                   "stroke-width=\"0.3\"/>\n",
                x0 + 200 + 12 * b, y0 + 1, c);
    }
    for (int k = 0; k <= 4; k++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%.2f</text>\n",
                x0 + 206 + (12 * (NB - 1)) * k / 4, y0 + 22, k / 4.0);
    fputs("</g>\n", f);
    return 30;
}

/* The summary: one bar per panel on the common time axis, the bound of every plan dashed. */
static int draw_summary(FILE *f, const tc_sim_panel *panels, int n, double tmax, int y0)
{
    const tc_bound *least = NULL;
    for (int p = 0; p < n; p++)
        if (panels[p].res->bound.time > 0 && (!least || panels[p].res->bound.time < least->time))
            least = &panels[p].res->bound;
    const int bh = 16, lx = M + 110, lw = W - lx - M - 80, ly = y0 + 38;
    char tb[32], db[160];
    fprintf(f, "<g class=\"summary\">\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">time per algorithm "
               "(one scale)</text>\n",
            M, y0 + 12);
    for (int p = 0; p < n; p++) {
        const tc_sim_result *r = panels[p].res;
        const int len = (int)lround(lw * r->time / tmax), y = ly + p * (bh + 4);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">", lx - 6, y + 12);
        tc_xml_escape(f, panels[p].name ? panels[p].name : panels[p].title);
        fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#4477aa\"/>\n", lx, y,
                len > 1 ? len : 1, bh);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%s</text>\n", lx + len + 4, y + 12,
                tc_fmt_time(r->time, tb, sizeof tb));
    }
    const int axis_y = ly + n * (bh + 4);
    if (least) {
        const int x = lx + (int)lround(lw * least->time / tmax);
        fprintf(f, "<path class=\"bound\" stroke=\"#cc0000\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\" "
                   "d=\"M%d %dV%d\"/>\n",
                x, ly - 4, axis_y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#cc0000\">bound %s (%s)</text>\n", x + 3, ly - 6,
                tc_fmt_time(least->time, tb, sizeof tb), tc_bound_describe(least, db, sizeof db));
    }
    time_axis(f, lx, axis_y, lw, tmax, "time");
    fputs("</g>\n", f);
    return axis_y + 40 - y0;
}

tc_status tc_sim_svg_write(tc_ctx *ctx, const tc_topo *topo, const tc_sim_panel *panels, int n_panels,
                           FILE *f)
{
    if (topo->n_switches > 0 || !topo->out_off)
        return tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "svg: the topology must be indexed and unwound");
    double tmax = 0;
    for (int p = 0; p < n_panels; p++) {
        if (panels[p].res->n_links != topo->n_links)
            return tc_error(ctx, TC_ERR_INVALID, topo->file, 0, "svg: a result of %d links for a topology of %d",
                            panels[p].res->n_links, topo->n_links);
        tmax = panels[p].res->time > tmax ? panels[p].res->time : tmax;
    }
    double *xy = malloc(((size_t)tc_topo_n_vertices(topo) + 1) * 2 * sizeof *xy);
    if (!xy)
        return TC_ERR_NOMEM;
    double height;
    tc_status st = layout(topo, xy, &height);
    if (st) {
        free(xy);
        return tc_error(ctx, st, NULL, 0, "svg: cannot lay out the topology: %s", tc_status_str(st));
    }
    /* The document is written to a memory stream first: its height is known at the end. */
    char *body = NULL;
    size_t blen = 0;
    FILE *g = open_memstream(&body, &blen);
    if (!g) {
        free(xy);
        return TC_ERR_NOMEM;
    }
    pic P = {g, topo, xy, height, tmax, TC_OK};
    int y = M;
    if (n_panels > 1)
        y += draw_summary(g, panels, n_panels, tmax, y) + 10;
    y += draw_legend(g, M, y) + 6;
    const int topo_size = topo->n_npus <= 16 ? 260 : 340;
    for (int p = 0; p < n_panels; p++) {
        const tc_sim_result *r = panels[p].res;
        char tb[32], bb[32], db[160];
        fprintf(g, "<g class=\"panel\">\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\" font-size=\"13\">", M, y + 14);
        tc_xml_escape(g, panels[p].title);
        fprintf(g, "</text>\n<text x=\"%d\" y=\"%d\" font-size=\"11\">model %s: time %s", M, y + 30,
                tc_sim_model_name(r->model), tc_fmt_time(r->time, tb, sizeof tb));
        if (r->bound.time > 0)
            fprintf(g, ", bound %s (%s), efficiency %.3f", tc_fmt_time(r->bound.time, bb, sizeof bb),
                    tc_bound_describe(&r->bound, db, sizeof db), r->efficiency);
        fprintf(g, "; utilization max %.2f, mean %.2f over %d links</text>\n", r->max_util, r->mean_util, r->n_links);
        const int top = y + 52;
        const int h1 = draw_topology(&P, r, M, top, topo_size);
        const int h2 = draw_heatmap(&P, r, M + topo_size + 30, top - 10, W - topo_size - 30 - 2 * M);
        y = top + (h1 > h2 - 10 ? h1 : h2 - 10);
        y += draw_timeline(&P, r, M, y, W - 2 * M) + 14;
        fputs("</g>\n", g);
    }
    fclose(g);
    free(xy);
    if (P.st) {
        free(body);
        return tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "svg: out of memory");
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            W, y + M, W, y + M, W, y + M);
    fwrite(body, 1, blen, f);
    fputs("</svg>\n", f);
    free(body);
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write the SVG");
    return TC_OK;
}
