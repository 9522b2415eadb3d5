/*
 * Breakeven in the HTML report: one overview of every layer (its own
 * sparsity against each format's breakeven sparsity, so a 300-layer model
 * is one scatter), then the curves of the heaviest layers as small
 * multiples, each with the layer's own sparsity marked. layers[].breakeven
 * is {"<backend>/<format>": {sparsity, breakeven_low, breakeven_high,
 * margin, reason, curve: [{sparsity, time_ns, dense_time_ns, speedup}]}};
 * anything else in it is skipped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

const char *spp_html_key_format(const char *key)
{
	const char *s = strchr(key, '/');

	return s ? s + 1 : key;
}

int spp_html_curve_points(const cJSON *entry, const char *xkey)
{
	const cJSON *pt;
	int n = 0;
	double a, b;

	cJSON_ArrayForEach(pt, spp_cell_get(entry, "curve"))
		n += spp_cell_num(pt, xkey, &a) && spp_cell_num(pt, "speedup", &b) && b > 0;
	return n;
}

static int has_curve(const cJSON *layer)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, spp_cell_get(layer, "breakeven"))
		if (e->string && spp_html_curve_points(e, "sparsity") > 0)
			return 1;
	return 0;
}

/* Whether any breakeven entry has a sparsity or a reason (a curve is not needed). */
static int has_entry(const cJSON *layer)
{
	const cJSON *e;
	double v;

	cJSON_ArrayForEach(e, spp_cell_get(layer, "breakeven"))
		if (e->string && (spp_cell_num(e, "sparsity", &v) || spp_cell_str(e, "reason")))
			return 1;
	return 0;
}

/* Every layer's sparsity against each format's breakeven: below the diagonal pays off. */
static void overview(struct spp_html *h)
{
	const cJSON *l, *e;
	struct spp_svg_plot p;
	FILE *f = h->f;
	int never = 0, pairs = 0;
	double d[2] = {0, 1};

	spp_svg_open(f, "chart-breakeven-overview", 600, 470, "breakeven sparsity against layer sparsity");
	{
		const char *names[16], *colors[16];
		int n = 0;

		cJSON_ArrayForEach(l, h->layers)
			cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven")) {
				int seen = 0;

				if (!e->string || !cJSON_IsObject(e))
					continue;
				for (int i = 0; i < n; i++)
					seen |= strcmp(names[i], e->string) == 0;
				if (!seen && n < 16)
					names[n++] = e->string;
			}
		for (int i = 0; i < n; i++)
			colors[i] = spp_html_format_color(spp_html_key_format(names[i]));
		spp_svg_legend(f, 70, 14, 520, names, colors, n);
	}
	spp_svg_plot_init(&p, f, 70, 50, 500, 360, 0, 1, 0, 0, 1, 0);
	spp_svg_axes(&p, "the layer's own sparsity", "breakeven sparsity", 1, 1);
	fputs("<g class=\"diag\">", f);
	spp_svg_polyline(&p, d, d, 2, "#7a8294", "4 3");
	fputs("</g>\n", f);
	spp_svg_text(f, spp_svg_map(&p.xs, 0.98), spp_svg_map(&p.ys, 0.98) + 16, "end", "ref",
		     "below: past breakeven, the format wins");
	cJSON_ArrayForEach(l, h->layers) {
		const char *name = spp_cell_str(l, "name");
		double sp, be, margin;

		if (!spp_cell_num(l, "sparsity", &sp))
			continue;
		cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven")) {
			char tip[512], a[32], b[32];

			if (!e->string || !cJSON_IsObject(e))
				continue;
			pairs++;
			if (!spp_cell_num(e, "sparsity", &be)) {
				never++;
				continue;
			}
			spp_html_fmt_pct(sp, a, sizeof(a));
			spp_html_fmt_pct(be, b, sizeof(b));
			snprintf(tip, sizeof(tip), "%s\n%s: breakeven %s, layer %s", name ? name : "(unnamed)",
				 e->string, b, a);
			if (spp_cell_num(e, "margin", &margin))
				snprintf(tip + strlen(tip), sizeof(tip) - strlen(tip), ", margin %+.1f points",
					 margin * 100);
			spp_svg_point(&p, sp, be, h->nlayers > 40 ? 3 : 4.5,
				      spp_html_format_color(spp_html_key_format(e->string)), tip);
		}
	}
	if (never) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%d of %d layer \xc3\x97 format pairs never beat dense (not drawn)",
			 never, pairs);
		spp_svg_text(f, 70, 462, "start", "dim", buf);
	}
	spp_svg_close(f);
}

int spp_html_curve_xy(struct spp_html *h, const cJSON *e, const char *xkey, double **x, double **y)
{
	const cJSON *pt;
	int n = spp_html_curve_points(e, xkey), i = 0;

	*x = malloc(sizeof(double) * (size_t)(n + 1));
	*y = malloc(sizeof(double) * (size_t)(n + 1));
	if (!*x || !*y) {
		free(*x);
		free(*y);
		*x = *y = NULL;
		h->nomem = 1;
		return -1;
	}
	cJSON_ArrayForEach(pt, spp_cell_get(e, "curve")) {
		double a, b;

		if (i < n && spp_cell_num(pt, xkey, &a) && spp_cell_num(pt, "speedup", &b) && b > 0) {
			(*x)[i] = a;
			(*y)[i] = b;
			i++;
		}
	}
	return i;
}

static void entry_caption(FILE *f, const cJSON *e)
{
	double be, margin, lo, hi;
	char a[96];
	const char *reason = spp_cell_str(e, "reason");

	fputs("<li><span style=\"color:", f);
	fputs(spp_html_format_color(spp_html_key_format(e->string)), f);
	fputs("\">\xe2\x96\xa0</span> ", f);
	spp_html_escape(f, e->string);
	if (spp_cell_num(e, "sparsity", &be)) {
		/* with its bracket where both ends are known: "62.0% (60.0-65.0%)" */
		spp_cell_frac_ci(be, spp_cell_num(e, "breakeven_low", &lo) ? lo : NAN,
				 spp_cell_num(e, "breakeven_high", &hi) ? hi : NAN, 100, 1, "%", a,
				 sizeof(a));
		fputs(": breakeven ", f);
		spp_html_escape(f, a);
		if (spp_cell_num(e, "margin", &margin))
			fprintf(f, ", margin <span class=\"%s\">%+.1f points</span>",
				margin >= 0 ? "good" : "bad", margin * 100);
	} else {
		fputs(": never beats dense", f);
	}
	if (reason) {
		fputs(" (", f);
		spp_html_escape(f, reason);
		fputc(')', f);
	}
	fputs("</li>\n", f);
}

static void panel(struct spp_html *h, const cJSON *l)
{
	const cJSON *e, *rec = spp_cell_get(l, "recommendation");
	const char *name = spp_cell_str(l, "name");
	double ylo = 1, yhi = 1, sp, v;
	struct spp_svg_plot p;
	FILE *f = h->f;

	fputs("<div class=\"panel\"><h3>", f);
	spp_html_escape(f, name ? name : "(unnamed)");
	fputs("</h3>\n", f);
	if (spp_cell_str(rec, "format")) {
		char a[32];

		fputs("<div class=\"lead\">recommended: ", f);
		spp_html_escape(f, spp_cell_str(rec, "backend"));
		if (spp_cell_str(rec, "backend"))
			fputc('/', f);
		spp_html_escape(f, spp_cell_str(rec, "format"));
		if (spp_cell_num(rec, "speedup", &v)) {
			spp_html_fmt_ratio(v, a, sizeof(a));
			fputs(" at ", f);
			spp_html_escape(f, a);
		}
		fputs("</div>\n", f);
	}
	cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven")) {
		const cJSON *pt;

		cJSON_ArrayForEach(pt, spp_cell_get(e, "curve"))
			if (spp_cell_num(pt, "speedup", &v) && v > 0) {
				ylo = fmin(ylo, v);
				yhi = fmax(yhi, v);
			}
	}
	spp_svg_open(f, NULL, 400, 260, "breakeven curves");
	spp_svg_plot_init(&p, f, 56, 10, 330, 200, 0, 1, 0, ylo, yhi, 1);
	spp_svg_axes(&p, "sparsity of synthetic W", "speedup over dense", 1, 0);
	spp_svg_hline(&p, 1, "one", "dense");
	if (spp_cell_num(l, "sparsity", &sp)) {
		char a[32], lab[64];

		spp_html_fmt_pct(sp, a, sizeof(a));
		snprintf(lab, sizeof(lab), "this layer %s", a);
		spp_svg_vline(&p, sp, "mark", lab);
	}
	cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven")) {
		double *x, *y, be;
		const char *color;
		int n;

		if (!e->string || spp_html_curve_points(e, "sparsity") == 0)
			continue;
		n = spp_html_curve_xy(h, e, "sparsity", &x, &y);
		if (n < 0)
			break;
		color = spp_html_format_color(spp_html_key_format(e->string));
		spp_svg_polyline(&p, x, y, n, color, NULL);
		for (int i = 0; i < n; i++) {
			char tip[256], pct[48];

			spp_cell_frac(x[i], 100, 1, "%", pct, sizeof(pct));
			snprintf(tip, sizeof(tip), "%s at %s sparsity: %.3g\xc3\x97", e->string, pct, y[i]);
			spp_svg_point(&p, x[i], y[i], 2.5, color, tip);
		}
		/* the breakeven itself, on the speedup-1 line */
		if (spp_cell_num(e, "sparsity", &be) && be >= 0 && be <= 1)
			fprintf(f, "<path d=\"M%.1f %.1f l-5 -8 h10 z\" fill=\"%s\"/>\n",
				spp_svg_map(&p.xs, be), spp_svg_map(&p.ys, 1), color);
		free(x);
		free(y);
	}
	spp_svg_close(f);
	fputs("<ul class=\"lead\" style=\"margin:0;padding-left:16px;font-size:12px\">\n", f);
	cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven"))
		if (e->string && cJSON_IsObject(e))
			entry_caption(f, e);
	fputs("</ul></div>\n", f);
}

void spp_html_breakeven(struct spp_html *h)
{
	const cJSON **top = NULL;
	int total, with_entry = 0;
	const cJSON *l;
	FILE *f = h->f;

	spp_html_section(f, "breakeven", "Breakeven",
			 "The lowest sparsity at which a format beats dense on a synthetic W of the "
			 "layer's shape and pattern. First every layer at once (a point under the "
			 "diagonal: the layer is sparser than the format needs), then the swept curves "
			 "(speedup against sparsity) of the heaviest layers, the layer's own sparsity "
			 "dashed and each breakeven marked with a triangle.");
	cJSON_ArrayForEach(l, h->layers)
		with_entry += has_entry(l);
	if (with_entry == 0) {
		spp_html_note(f, "no breakeven data in this report (every layer's breakeven is empty): "
				 "run 'spprof analyze --breakeven'");
		fputs("</section>\n", f);
		return;
	}
	overview(h);
	total = spp_html_top_layers(h, has_curve, SPP_HTML_TOP_LAYERS, &top);
	if (total == 0) {
		spp_html_note(f, "no breakeven curves in this report: the entries have no sweep points");
	} else if (total > 0) {
		int shown = total < SPP_HTML_TOP_LAYERS ? total : SPP_HTML_TOP_LAYERS;

		if (total > shown)
			spp_html_note(f, "curves of the %d heaviest of %d layers (by dense time, else "
					 "dense FLOPs); every layer is in the overview above and the table below",
				      shown, total);
		fputs("<div class=\"grid2\" id=\"chart-breakeven\">\n", f);
		for (int i = 0; i < shown; i++)
			panel(h, top[i]);
		fputs("</div>\n", f);
	}
	free(top);
	fputs("</section>\n", f);
}
