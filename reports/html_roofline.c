/*
 * The roofline of the HTML report: each ok run at its arithmetic
 * intensity and useful GFLOP/s, under the machine's calibrated peak FLOP
 * rate and the read bandwidth of each calibrated memory level.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/machine.h"
#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

/* Arithmetic intensity (the report's, profiler/run.c) and rate of a run: FLOPs per byte moved, GFLOP/s. */
static int roof_point(const cJSON *run, double *ai, double *gf)
{
	return spp_html_run_ok(run) && spp_cell_num(run, "arithmetic_intensity", ai) && *ai > 0 &&
	       spp_cell_num(run, "gflops", gf) && *gf > 0;
}

/* The extent of the runs' roofline points; their number. */
static int roof_extent(const struct spp_html *h, double *xlo, double *xhi, double *ylo,
		       double *yhi)
{
	const cJSON *l, *run;
	double ai, gf;
	int npts = 0;

	cJSON_ArrayForEach(l, h->layers)
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			if (!roof_point(run, &ai, &gf))
				continue;
			npts++;
			*xlo = fmin(*xlo, ai);
			*xhi = fmax(*xhi, ai);
			*ylo = fmin(*ylo, gf);
			*yhi = fmax(*yhi, gf);
		}
	return npts;
}

/* A memory roof: a level's calibrated read bandwidth (name NULL: the report's one peak). */
struct roof {
	double gbs;
	const char *name;
};

/*
 * The memory roofs: the read bandwidth of each calibrated level
 * (machine.calibration.levels: L1, L2, LLC, DRAM), else peak_bw_gbs alone.
 */
static int memory_roofs(const cJSON *m, struct roof r[SPP_BW_LEVELS])
{
	int n = 0;
	double v;

	for (int l = 0; l < SPP_BW_LEVELS; l++) {
		const char *name = spp_bw_level_name((enum spp_bw_level)l);
		char key[64];

		snprintf(key, sizeof(key), "calibration.levels.%s.read_gbs", name);
		if (spp_cell_num(m, key, &v) && v > 0)
			r[n++] = (struct roof){v, name};
	}
	if (!n && spp_cell_num(m, "peak_bw_gbs", &v) && v > 0)
		r[n++] = (struct roof){v, NULL};
	return n;
}

/* One memory roof y = bw * x, capped by the compute roof pf, labelled with its ridge. */
static void memory_roof(FILE *f, const struct spp_svg_plot *p, double pf, int has_pf,
			const struct roof *r)
{
	double bw = r->gbs, x[3] = {p->xs.lo, has_pf ? pf / bw : p->xs.hi, p->xs.hi}, y[3];
	double lx = p->xs.lo * 1.5;
	char lab[96];

	for (int i = 0; i < 3; i++) {
		y[i] = bw * x[i];
		if (has_pf && y[i] > pf)
			y[i] = pf;
		/* clip the line where it leaves the plot at the bottom or top */
		if (y[i] < p->ys.lo) {
			x[i] = p->ys.lo / bw;
			y[i] = p->ys.lo;
		}
		if (y[i] > p->ys.hi) {
			x[i] = p->ys.hi / bw;
			y[i] = p->ys.hi;
		}
	}
	fputs("<g class=\"roof\">", f);
	spp_svg_polyline(p, x, y, 3, "#1d2330", NULL);
	fputs("</g>\n", f);
	if (has_pf)
		snprintf(lab, sizeof(lab), "%s%s%.1f GB/s, ridge %.3g FLOP/B", r->name ? r->name : "",
			 r->name ? " " : "", bw, pf / bw);
	else
		snprintf(lab, sizeof(lab), "%s%s%.1f GB/s", r->name ? r->name : "", r->name ? " " : "",
			 bw);
	if (bw * lx >= p->ys.lo && bw * lx <= p->ys.hi)
		spp_svg_text(f, spp_svg_map(&p->xs, lx), spp_svg_map(&p->ys, bw * lx) - 6, "start",
			     "ref", lab);
}

/* The roofs: one per memory level (bandwidth) and compute (peak pf), each where known. */
static void roof_lines(FILE *f, const struct spp_svg_plot *p, double pf, int has_pf,
		       const struct roof *r, int nr)
{
	for (int i = 0; i < nr; i++)
		memory_roof(f, p, pf, has_pf, &r[i]);
	if (has_pf) {
		char lab[64];

		snprintf(lab, sizeof(lab), "peak %.1f GFLOP/s", pf);
		spp_svg_hline(p, pf, "roof", lab);
	}
}

/* A point per run, coloured by its format, with its layer in the tooltip. */
static void roof_points(const struct spp_html *h, const struct spp_svg_plot *p)
{
	const cJSON *l, *run;
	double ai, gf;

	cJSON_ArrayForEach(l, h->layers) {
		const char *name = spp_cell_str(l, "name");

		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *fmt = spp_cell_str(run, "format");
			char tip[512];

			if (!fmt || !roof_point(run, &ai, &gf))
				continue;
			snprintf(tip, sizeof(tip), "%s\n%s: %.3g FLOP/byte, %.3g GFLOP/s",
				 name ? name : "(unnamed)", fmt, ai, gf);
			spp_svg_point(p, ai, gf, h->nlayers > 40 ? 2.5 : 4, spp_html_format_color(fmt), tip);
		}
	}
}

void spp_html_roofline(struct spp_html *h)
{
	const cJSON *m = spp_cell_get(h->report, "machine");
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, pf = NAN;
	struct roof roofs[SPP_BW_LEVELS];
	int npts, has_pf, has_bw, nr;
	struct spp_svg_plot p;
	FILE *f = h->f;

	spp_html_section(f, "roofline", "Roofline",
			 "Each run as a point: the FLOPs it does per byte it moves (encoded weights, "
			 "X and Y) against its GFLOP/s: a format's useful (sparse) FLOPs, the dense "
			 "baseline's dense FLOPs. The roofs are the "
			 "machine's calibrated peak FLOP rate and the read bandwidth of each memory "
			 "level (L1, L2, LLC, DRAM), each labelled with its ridge, the intensity "
			 "where it meets the peak; a point far under the roof of the level its "
			 "working set fits in leaves the machine idle.");
	if (!h->has_runs) {
		spp_html_note_no_runs(f);
		fputs("</section>\n", f);
		return;
	}
	has_pf = spp_cell_num(m, "peak_gflops", &pf) && pf > 0;
	has_bw = (nr = memory_roofs(m, roofs)) > 0;
	npts = roof_extent(h, &xlo, &xhi, &ylo, &yhi);
	if (npts == 0) {
		spp_html_note(f, "no roofline points: no run has both bytes_moved and gflops");
		fputs("</section>\n", f);
		return;
	}
	if (!has_pf || !has_bw)
		spp_html_note(f, "no %s in this report (machine.%s is null): the points are drawn "
				 "without %s; run 'spprof calibrate' and analyze again",
			      !has_pf && !has_bw ? "calibrated peaks" : !has_pf ? "calibrated peak FLOP rate" : "calibrated peak bandwidth",
			      !has_pf && !has_bw ? "peak_gflops and peak_bw_gbs" : !has_pf ? "peak_gflops" : "peak_bw_gbs",
			      !has_pf && !has_bw ? "roofs" : "that roof");
	if (has_pf)
		yhi = fmax(yhi, pf);
	for (int i = 0; has_pf && i < nr; i++) {
		/* the ridges, where the roofs meet, belong in view */
		xlo = fmin(xlo, pf / roofs[i].gbs);
		xhi = fmax(xhi, pf / roofs[i].gbs);
	}
	spp_svg_open(f, "chart-roofline", 820, 480, "roofline");
	spp_html_legend(f, h, 80, 14, 720, 1);
	spp_svg_plot_init(&p, f, 80, 50, 720, 380, xlo, xhi, 1, ylo, yhi, 1);
	spp_svg_axes(&p, "arithmetic intensity (FLOPs / byte moved)", "GFLOP/s", 0, 0);
	roof_lines(f, &p, pf, has_pf, roofs, nr);
	roof_points(h, &p);
	spp_svg_close(f);
	fputs("</section>\n", f);
}
