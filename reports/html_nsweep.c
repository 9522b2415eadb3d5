/*
 * Speedup against N in the HTML report (analyze --n-sweep): one panel per
 * layer, heaviest first, each format's speedup over dense on the layer's
 * own W at each N, both axes logarithmic, the crossovers marked on the
 * speedup-1 line and the N range where each format wins beneath.
 * layers[].n_sweep is {"<backend>/<format>": {wins, crossings: [{n,
 * faster}], reason, curve: [{n, time_ns, dense_time_ns, speedup}]}};
 * anything else in it is skipped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

int spp_html_has_nsweep(const cJSON *layer)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, spp_cell_get(layer, "n_sweep"))
		if (e->string && spp_html_curve_points(e, "n") > 0)
			return 1;
	return 0;
}

/* The N and speedup range over the layer's curves, into lo/hi (x: N, y: speedup). */
static void ranges(const cJSON *l, double *xlo, double *xhi, double *ylo, double *yhi)
{
	const cJSON *e, *pt;
	double n, v;

	*xlo = INFINITY, *xhi = -INFINITY, *ylo = 1, *yhi = 1;
	cJSON_ArrayForEach(e, spp_cell_get(l, "n_sweep"))
		cJSON_ArrayForEach(pt, spp_cell_get(e, "curve"))
			if (spp_cell_num(pt, "n", &n) && n > 0 && spp_cell_num(pt, "speedup", &v) && v > 0) {
				*xlo = fmin(*xlo, n), *xhi = fmax(*xhi, n);
				*ylo = fmin(*ylo, v), *yhi = fmax(*yhi, v);
			}
}

/* The caption of one format: where it wins and its crossovers. */
static void caption(FILE *f, const cJSON *e)
{
	const char *wins = spp_cell_str(e, "wins"), *reason = spp_cell_str(e, "reason");
	const cJSON *c;
	int first = 1;

	fputs("<li><span style=\"color:", f);
	fputs(spp_html_format_color(spp_html_key_format(e->string)), f);
	fputs("\">\xe2\x96\xa0</span> ", f);
	spp_html_escape(f, e->string);
	if (wins && wins[0]) {
		fputs(": faster than dense at N = ", f);
		spp_html_escape(f, wins);
	} else {
		fputs(": never faster than dense here", f);
	}
	cJSON_ArrayForEach(c, spp_cell_get(e, "crossings")) {
		const char *side = spp_cell_str(c, "faster");
		double n;

		if (!spp_cell_num(c, "n", &n))
			continue;
		fprintf(f, "%s%.3g (faster %s)", first ? "; crossover N " : ", ", n,
			side && strcmp(side, "below") == 0 ? "below" : "above");
		first = 0;
	}
	if (reason && reason[0]) {
		fputs(" (", f);
		spp_html_escape(f, reason);
		fputc(')', f);
	}
	fputs("</li>\n", f);
}

/* One format's curve, its points and its crossovers on the speedup-1 line. */
static void series(struct spp_html *h, const struct spp_svg_plot *p, const cJSON *e)
{
	const char *color = spp_html_format_color(spp_html_key_format(e->string));
	const cJSON *c;
	double *x, *y;
	int n = spp_html_curve_xy(h, e, "n", &x, &y);

	if (n < 0)
		return;
	spp_svg_polyline(p, x, y, n, color, NULL);
	for (int i = 0; i < n; i++) {
		char tip[256];

		snprintf(tip, sizeof(tip), "%s at N = %.0f: %.3g\xc3\x97", e->string, x[i], y[i]);
		spp_svg_point(p, x[i], y[i], 2.5, color, tip);
	}
	cJSON_ArrayForEach(c, spp_cell_get(e, "crossings")) {
		double cn;

		if (spp_cell_num(c, "n", &cn) && cn > 0)
			fprintf(p->f, "<path d=\"M%.1f %.1f l-5 -8 h10 z\" fill=\"%s\"/>\n",
				spp_svg_map(&p->xs, cn), spp_svg_map(&p->ys, 1), color);
	}
	free(x);
	free(y);
}

static void panel(struct spp_html *h, const cJSON *l)
{
	const char *name = spp_cell_str(l, "name");
	const cJSON *e;
	struct spp_svg_plot p;
	double xlo, xhi, ylo, yhi;
	FILE *f = h->f;

	ranges(l, &xlo, &xhi, &ylo, &yhi);
	fputs("<div class=\"panel\"><h3>", f);
	spp_html_escape(f, name ? name : "(unnamed)");
	fputs("</h3>\n", f);
	spp_svg_open(f, NULL, 400, 260, "speedup against N");
	spp_svg_plot_init(&p, f, 56, 10, 330, 200, xlo, xhi, 1, ylo, yhi, 1);
	spp_svg_axes(&p, "N (columns of X: batch or tokens)", "speedup over dense", 0, 0);
	spp_svg_hline(&p, 1, "one", "dense");
	cJSON_ArrayForEach(e, spp_cell_get(l, "n_sweep"))
		if (e->string && spp_html_curve_points(e, "n") > 0)
			series(h, &p, e);
	spp_svg_close(f);
	fputs("<ul class=\"lead\" style=\"margin:0;padding-left:16px;font-size:12px\">\n", f);
	cJSON_ArrayForEach(e, spp_cell_get(l, "n_sweep"))
		if (e->string && cJSON_IsObject(e))
			caption(f, e);
	fputs("</ul></div>\n", f);
}

void spp_html_nsweep(struct spp_html *h)
{
	const cJSON **top = NULL;
	int total;
	FILE *f = h->f;

	total = spp_html_top_layers(h, spp_html_has_nsweep, SPP_HTML_TOP_LAYERS, &top);
	if (total <= 0) {
		/* a report without --n-sweep has no section rather than an empty one */
		free(top);
		return;
	}
	spp_html_section(f, "nsweep", "Speedup against N",
			 "Each format and the dense baseline timed on the layer's own W at each N "
			 "(analyze --n-sweep): where the curve is above the dense line the format "
			 "wins; a triangle marks a crossover N, where it starts or stops winning.");
	if (total > SPP_HTML_TOP_LAYERS)
		spp_html_note(f, "the %d heaviest of %d layers (by dense time, else dense FLOPs)",
			      SPP_HTML_TOP_LAYERS, total);
	fputs("<div class=\"grid2\" id=\"chart-nsweep\">\n", f);
	for (int i = 0; i < total && i < SPP_HTML_TOP_LAYERS; i++)
		panel(h, top[i]);
	fputs("</div>\n</section>\n", f);
	free(top);
}
