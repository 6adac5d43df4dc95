/*
 * svg: pictures of simulation results.  Per panel: a caption, a heat map with one <rect class="link">
 * cell per directed link (link id order, row-major, colour white -> yellow -> red by utilization, a
 * <title> tooltip "link L: S->D util U"), and when the result carries a timeline, a link-occupancy chart
 * (x = time bins, y = links, or groups of consecutive links when there are more than 128; only busy cells
 * are drawn, class "occ").  Deterministic: fixed float formats, id order, no timestamps.
 */
#include "tacos/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SVG_W 840
#define MARGIN 20
#define MAX_ROWS 128

static void put_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* White (0) -> yellow (0.5) -> red (1), clamped. */
static void color(double u, char out[8])
{
    if (!(u > 0))
        u = 0;
    if (u > 1)
        u = 1;
    int r, g, b;
    if (u <= 0.5) {
        r = 255;
        g = 255;
        b = (int)lround(255 * (1 - 2 * u));
    } else {
        r = 255 - (int)lround(80 * (2 * u - 1));
        g = (int)lround(255 * (2 - 2 * u));
        b = 0;
    }
    snprintf(out, 8, "#%02x%02x%02x", r, g, b);
}

typedef struct layout {
    int cols, rows, cell;  /* heat map */
    int tl_rows, group;    /* timeline rows and links per row */
    int tl_h, height;
} layout;

static layout plan(const tc_sim_result *r)
{
    layout L = {0};
    int n = r->n_links > 0 ? r->n_links : 1;
    L.cols = (int)ceil(sqrt((double)n));
    L.cell = (SVG_W - 2 * MARGIN) / L.cols;
    if (L.cell > 24)
        L.cell = 24;
    if (L.cell < 2) {
        L.cell = 2;
        L.cols = (SVG_W - 2 * MARGIN) / 2;
    }
    L.rows = (n + L.cols - 1) / L.cols;
    if (r->timeline && r->bins > 0) {
        L.group = (r->n_links + MAX_ROWS - 1) / MAX_ROWS;
        if (L.group < 1)
            L.group = 1;
        L.tl_rows = (r->n_links + L.group - 1) / L.group;
        L.tl_h = 30 + L.tl_rows * 4;
    }
    L.height = 44 + L.rows * L.cell + 16 + L.tl_h + 10;
    return L;
}

tc_status tc_sim_svg_write(tc_ctx *ctx, const tc_topo *topo, const tc_sim_panel *panels, int n_panels,
                           FILE *f)
{
    int total = 10;
    for (int p = 0; p < n_panels; p++)
        total += plan(panels[p].res).height;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n",
            SVG_W, total, SVG_W, total);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_W, total);
    int y = 10;
    for (int p = 0; p < n_panels; p++) {
        const tc_sim_result *r = panels[p].res;
        layout L = plan(r);
        char tb[32];
        fprintf(f, "<g class=\"panel\">\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", MARGIN, y + 14);
        put_escaped(f, panels[p].title);
        fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\">model %s, time %s, max util %.3f, mean util %.3f, "
                   "%d links</text>\n",
                MARGIN, y + 30, tc_sim_model_name(r->model), tc_fmt_time(r->time, tb, sizeof tb), r->max_util,
                r->mean_util, r->n_links);
        int y0 = y + 40;
        for (int l = 0; l < r->n_links; l++) {
            char c[8];
            color(r->link_util[l], c);
            int cx = MARGIN + (l % L.cols) * L.cell, cy = y0 + (l / L.cols) * L.cell;
            fprintf(f, "<rect class=\"link\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                       "stroke=\"#888888\" stroke-width=\"0.5\"><title>link %d: %d-&gt;%d util %.4f</title></rect>\n",
                    cx, cy, L.cell, L.cell, c, l, topo && l < topo->n_links ? topo->links[l].src : -1,
                    topo && l < topo->n_links ? topo->links[l].dst : -1, r->link_util[l]);
        }
        y = y0 + L.rows * L.cell + 16;
        if (L.tl_rows > 0) {
            const int x0 = MARGIN + 60, w = SVG_W - x0 - MARGIN;
            fprintf(f, "<text x=\"%d\" y=\"%d\">link occupancy over time (%d link%s per row)</text>\n", MARGIN,
                    y + 12, L.group, L.group > 1 ? "s" : "");
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444444\"/>\n",
                    x0, y + 20, w, L.tl_rows * 4);
            for (int row = 0; row < L.tl_rows; row++) {
                for (int b = 0; b < r->bins; b++) {
                    double occ = 0;
                    int n = 0;
                    for (int l = row * L.group; l < (row + 1) * L.group && l < r->n_links; l++, n++)
                        occ += r->timeline[(size_t)l * r->bins + b];
                    occ = n ? occ / n : 0;
                    if (occ <= 1e-6)
                        continue;
                    char c[8];
                    color(occ, c);
                    double bx = x0 + (double)w * b / r->bins, bw = (double)w / r->bins;
                    fprintf(f, "<rect class=\"occ\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"4\" fill=\"%s\"/>\n",
                            bx, y + 20 + row * 4, bw, c);
                }
            }
            y += L.tl_h;
        }
        y += 10;
        fputs("</g>\n", f);
    }
    fputs("</svg>\n", f);
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write the SVG");
    return TC_OK;
}
