/*
 * svg: the time breakdown of several plans as stacked bars, in the style of the photonic paper's Figs. 8-9.
 *
 * Accepts: bars (group = topology, label = algorithm, the five parts of a tc_ph_breakdown).
 * Returns: an SVG with a title, a vertical time axis (ticks at 1, 2 or 5 x 10^k in one unit: ns, us, ms or
 *   s, chosen from the tallest bar; label "time (unit)"), one scale for every bar, bars grouped by topology
 *   in order of first appearance with the group name under each group, each bar's label under it
 *   (rotated) and its total above it (upright above a wide bar, reading upwards above a narrow one), and a
 *   legend of the five parts (latency, bandwidth, congestion,
 *   dilation, reconfiguration).  Every rect carries a <title> too, but nothing needs hovering.
 * Cost: O(bars).  Deterministic: fixed formats, input order.
 * Broken axis: when at most half the bars reach a quarter of the tallest, the axis ends at 1.25x the
 *   tallest of the others and the taller bars are cut at the top with a zigzag break mark (their totals
 *   stay exact, a legend line says where the axis breaks), so small parts stay visible.
 * Limits: labels longer than about 24 characters overlap their neighbours.
 * Trace (bars "ring/rhd" 2 ms, "ring/photonic" 1 ms): axis 0 to 2.5 ms, ticks every 0.5 ms; the rhd bar is
 *   twice as tall; labels "rhd", "photonic" under the bars, "ring" under the group.
 */
#include "photonic_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_SVG 980
#define H_PLOT 360
#define TOP 70
#define LEFT 90
#define RIGHT 190
#define BOTTOM 140

static const char *const part_name[5] = {"latency", "bandwidth", "congestion", "dilation", "reconfiguration"};
static const char *const part_color[5] = {"#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974"};

static double part(const tc_ph_breakdown *b, int k)
{
    switch (k) {
    case 0: return b->latency;
    case 1: return b->bandwidth;
    case 2: return b->congestion;
    case 3: return b->dilation;
    default: return b->reconfig;
    }
}

/* A tick step of 1, 2 or 5 x 10^k giving about 5 ticks up to top. */
static double tick_step(double top)
{
    double raw = top / 5, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

tc_status tc_photonic_svg_write(tc_ctx *ctx, const char *title, const tc_ph_bar *bars, int n, FILE *f)
{
    double top = 0;
    for (int i = 0; i < n; i++)
        if (tc_ph_breakdown_sum(&bars[i].t) > top)
            top = tc_ph_breakdown_sum(&bars[i].t);
    if (!(top > 0))
        top = 1e-6;
    /* one bar dominating (over 4x every other): break the axis above the others so that their small parts
     * (reconfiguration slices) stay visible; the taller bars are cut with a break mark, totals exact */
    double second = 0;
    for (int i = 0; i < n; i++) {
        const double v = tc_ph_breakdown_sum(&bars[i].t);
        if (v < top * 0.25 && v > second)
            second = v;
    }
    int tall = 0;
    for (int i = 0; i < n; i++)
        tall += tc_ph_breakdown_sum(&bars[i].t) >= top * 0.25;
    const int broken = second > 0 && tall * 2 <= n;
    if (broken)
        top = second * 1.25;
    /* one unit for the whole axis */
    double scale = 1e9;
    const char *unit = "ns";
    if (top >= 1) {
        scale = 1;
        unit = "s";
    } else if (top >= 1e-3) {
        scale = 1e3;
        unit = "ms";
    } else if (top >= 1e-6) {
        scale = 1e6;
        unit = "us";
    }
    const double step = tick_step(top * scale * 1.08);
    const double ymax = ceil(top * scale * 1.08 / step) * step; /* in units */
    /* slots: one per bar, one gap between groups */
    int slots = n, groups = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(bars[i].group, bars[i - 1].group))
            groups++;
    slots += groups > 0 ? groups - 1 : 0;
    const double pw = W_SVG - LEFT - RIGHT, slot = slots > 0 ? pw / slots : pw, bw = slot * 0.72;
    const int H = TOP + H_PLOT + BOTTOM;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n",
            W_SVG, H, W_SVG, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W_SVG, H);
    fprintf(f, "<text class=\"title\" x=\"%d\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">", W_SVG / 2);
    tc_xml_escape(f, title ? title : "time breakdown");
    fprintf(f, "</text>\n");
    /* axis and grid */
    fprintf(f, "<g class=\"axis\">\n");
    for (double v = 0; v <= ymax + step * 1e-9; v += step) {
        double y = TOP + H_PLOT - v / ymax * H_PLOT;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", LEFT, y, LEFT + pw, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 6, y + 4, v);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", LEFT, TOP, LEFT, TOP + H_PLOT);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", LEFT, TOP + H_PLOT, LEFT + pw,
            TOP + H_PLOT);
    fprintf(f, "<text class=\"ylabel\" x=\"24\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 24 %d)\">"
               "time (%s)</text>\n",
            TOP + H_PLOT / 2, TOP + H_PLOT / 2, unit);
    fprintf(f, "</g>\n");
    /* bars */
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && strcmp(bars[i].group, bars[i - 1].group))
            s++; /* gap */
        const double x = LEFT + s * slot + (slot - bw) / 2;
        double y = TOP + H_PLOT;
        fprintf(f, "<g class=\"bar\">\n");
        int cut = 0;
        for (int k = 0; k < 5; k++) {
            double h = part(&bars[i].t, k) * scale / ymax * H_PLOT;
            if (!(h > 0) || cut)
                continue;
            if (y - h < TOP) { /* above a broken axis: cut at the top */
                h = y - TOP;
                cut = 1;
            }
            y -= h;
            char tb[32];
            fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>",
                    part_name[k], x, y, bw, h, part_color[k]);
            tc_xml_escape(f, bars[i].group);
            fputs(" / ", f);
            tc_xml_escape(f, bars[i].label);
            fprintf(f, ": %s %s</title></rect>\n", part_name[k], tc_fmt_time(part(&bars[i].t, k), tb, sizeof tb));
        }
        if (cut) /* the break mark: a white zigzag band across the bar near the top */
            fprintf(f, "<path class=\"break\" d=\"M%.1f %d l%.1f -6 l%.1f 6 l%.1f -6 l%.1f 6 v8 l%.1f -6 l%.1f 6 "
                       "l%.1f -6 l%.1f 6 z\" fill=\"white\" stroke=\"#333333\"/>\n",
                    x - 2, TOP + 18, (bw + 4) / 4, (bw + 4) / 4, (bw + 4) / 4, (bw + 4) / 4, -(bw + 4) / 4,
                    -(bw + 4) / 4, -(bw + 4) / 4, -(bw + 4) / 4);
        if (slot >= 44) /* room for the total across the bar */
            fprintf(f, "<text class=\"total\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%.3g</text>\n",
                    x + bw / 2, y - 4, tc_ph_breakdown_sum(&bars[i].t) * scale);
        else /* narrow bars: the total reads upwards from the bar's top */
            fprintf(f, "<text class=\"total\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" transform=\"rotate(-90 %.1f %.1f)\">"
                       "%.3g</text>\n",
                    x + bw / 2 + 3.5, y - 4, x + bw / 2 + 3.5, y - 4, tc_ph_breakdown_sum(&bars[i].t) * scale);
        const double lx = x + bw / 2, ly = TOP + H_PLOT + 12;
        fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" "
                   "transform=\"rotate(-45 %.1f %.1f)\">",
                lx, ly, lx, ly);
        tc_xml_escape(f, bars[i].label);
        fprintf(f, "</text>\n</g>\n");
        s++;
    }
    /* group names */
    s = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(bars[j].group, bars[i].group))
            j++;
        const double x0 = LEFT + s * slot, x1 = LEFT + (s + (j - i)) * slot;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888888\"/>\n", x0 + 4,
                TOP + H_PLOT + BOTTOM - 34, x1 - 4, TOP + H_PLOT + BOTTOM - 34);
        fprintf(f, "<text class=\"group\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">", (x0 + x1) / 2,
                TOP + H_PLOT + BOTTOM - 16);
        tc_xml_escape(f, bars[i].group);
        fprintf(f, "</text>\n");
        s += (j - i) + 1;
        i = j;
    }
    /* legend */
    fprintf(f, "<g class=\"legend\">\n");
    for (int k = 4; k >= 0; k--) {
        int y = TOP + 10 + (4 - k) * 22;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", W_SVG - RIGHT + 20, y,
                part_color[k]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", W_SVG - RIGHT + 40, y + 12, part_name[k]);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">numbers above bars: total, %s</text>\n",
            W_SVG - RIGHT + 20, TOP + 10 + 5 * 22 + 8, unit);
    if (broken)
        fprintf(f, "<text class=\"broken\" x=\"%d\" y=\"%d\" font-size=\"10\">axis broken at %g %s</text>\n"
                   "<text x=\"%d\" y=\"%d\" font-size=\"10\">(taller bars cut)</text>\n",
                W_SVG - RIGHT + 20, TOP + 10 + 5 * 22 + 24, ymax, unit, W_SVG - RIGHT + 20, TOP + 10 + 5 * 22 + 38);
    fprintf(f, "</g>\n</svg>\n");
    if (ferror(f))
        return tc_error(ctx, TC_ERR_IO, NULL, 0, "cannot write SVG");
    return TC_OK;
}

tc_status tc_photonic_plan_svg_write(tc_ctx *ctx, const tc_sched *s, const tc_topo *topo, const char *title, FILE *f)
{
    const tc_sched_photonic *p = s->photonic;
    if (!p)
        return tc_error(ctx, TC_ERR_INVALID, s->file, 0, "the plan has no photonic section");
    const int n = p->n_rounds;
    tc_ph_bar *bars = calloc((size_t)n + 2, sizeof *bars);
    tc_ph_breakdown *t = calloc((size_t)n + 1, sizeof *t);
    char(*label)[48] = calloc((size_t)n + 1, sizeof *label);
    tc_ph_breakdown total, fixed;
    tc_status st = TC_OK;
    if (!bars || !t || !label) {
        st = tc_error(ctx, TC_ERR_NOMEM, NULL, 0, "photonic: out of memory");
        goto done;
    }
    if ((st = tc_photonic_reprice(ctx, s, topo, t, NULL, &total)) || (st = tc_photonic_fixed(ctx, topo, s, &fixed)))
        goto done;
    bars[0] = (tc_ph_bar){"plan", "photonic", total};
    bars[1] = (tc_ph_bar){"plan", "fixed topology", fixed};
    for (int i = 0; i < n; i++) {
        if (p->rounds[i].n_sub > 1)
            snprintf(label[i], sizeof label[i], "%d (step %d.%d)", i, p->rounds[i].step, p->rounds[i].sub + 1);
        else
            snprintf(label[i], sizeof label[i], "%d", i);
        bars[2 + i] = (tc_ph_bar){"rounds", label[i], t[i]};
    }
    st = tc_photonic_svg_write(ctx, title, bars, n + 2, f);
done:
    free(bars);
    free(t);
    free(label);
    return st;
}
