/*
 * The static charts of the HTML report: sparsity and pattern per layer
 * (one row per layer, so a 300-layer model scrolls in a box under a fixed
 * header) and storage per format against dense.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

#define SP_W 1180.0
#define SP_NAME_END 292.0
#define SP_BAR_X 304.0
#define SP_BAR_W 380.0
#define SP_HEAT_X 712.0
#define SP_HEAT_W 46.0
#define SP_ZERO_X 1040.0

static const char *const heat_keys[] = {"nm1_4", "nm2_4", "nm4_8", "block2",
					"block4", "block8", "block16"};
static const char *const heat_titles[] = {"1:4", "2:4", "4:8", "B2", "B4", "B8", "B16"};
#define NHEAT ((int)(sizeof(heat_keys) / sizeof(heat_keys[0])))

/* A shade from near-white (0) to the accent blue (1). */
static void heat_color(double t, char *buf, size_t n)
{
	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	snprintf(buf, n, "#%02x%02x%02x", (int)lround(240 + (47 - 240) * t),
		 (int)lround(243 + (111 - 243) * t), (int)lround(248 + (179 - 248) * t));
}

/* Legend and column titles: kept out of the scroll box so they stay in view. */
static void sparsity_header(struct spp_html *h)
{
	static const char *const cls[] = {"dense", "nm", "block", "channel", "kernel", "pattern",
					  "unstructured"};
	const char *colors[7];
	FILE *f = h->f;
	double gs;
	char buf[96];

	for (int i = 0; i < 7; i++)
		colors[i] = spp_html_class_color(cls[i]);
	spp_svg_open(f, NULL, SP_W, 58, "legend and columns of the sparsity chart");
	spp_svg_text(f, SP_NAME_END, 14, "end", "hd", "pattern class:");
	spp_svg_legend(f, SP_BAR_X, 14, 760, cls, colors, 7);
	spp_svg_text(f, SP_NAME_END, 50, "end", "hd", "layer");
	for (int t = 0; t <= 4; t++) {
		char lab[16];

		snprintf(lab, sizeof(lab), "%d%%", t * 25);
		spp_svg_text(f, SP_BAR_X + SP_BAR_W * t / 4, 50, t == 0 ? "start" : t == 4 ? "end" : "middle",
			     "tick", lab);
	}
	if (spp_cell_num(h->report, "summary.gemm_sparsity", &gs)) {
		char pct[32];

		spp_html_fmt_pct(gs, pct, sizeof(pct));
		snprintf(buf, sizeof(buf), "sparsity (dashed: all layers, %s)", pct);
	} else {
		snprintf(buf, sizeof(buf), "sparsity");
	}
	spp_svg_text(f, SP_BAR_X + SP_BAR_W / 2, 34, "middle", "hd", buf);
	spp_svg_text(f, SP_HEAT_X + SP_HEAT_W * NHEAT / 2, 34, "middle", "hd",
		     "N:M groups compliant / zero B\xc3\x97" "B blocks");
	for (int i = 0; i < NHEAT; i++)
		spp_svg_text(f, SP_HEAT_X + SP_HEAT_W * (i + 0.5), 50, "middle", "hd", heat_titles[i]);
	spp_svg_text(f, SP_ZERO_X + 8, 34, "start", "hd", "zero");
	spp_svg_text(f, SP_ZERO_X + 8, 50, "start", "hd", "rows / cols");
	spp_svg_close(f);
}

static void sparsity_row(FILE *f, const cJSON *l, int i, double y, double rh)
{
	const char *name = spp_cell_str(l, "name"), *cls = spp_cell_str(l, "pattern.class");
	char el[160], buf[512], pct[32], c[16];
	double sp, v, zr, zc, nnz, numel;
	int known = spp_cell_num(l, "sparsity", &sp);

	spp_html_fmt_pct(known ? sp : NAN, pct, sizeof(pct));
	snprintf(buf, sizeof(buf), "%s\nclass %s, sparsity %s", name ? name : "(unnamed)",
		 cls ? cls : "unknown", pct);
	if (spp_cell_num(l, "nnz", &nnz) && spp_cell_num(l, "numel", &numel))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", %.0f of %.0f weights non-zero",
			 nnz, numel);
	fputs("<g><title>", f);
	spp_html_escape(f, buf);
	fputs("</title>\n", f);
	if (i % 2)
		fprintf(f, "<rect class=\"band\" x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\"/>\n",
			y, SP_W, rh);
	/* the unique short name of spp_names_shorten, else the name elided alike */
	if (spp_cell_str(l, "display_name"))
		snprintf(el, sizeof(el), "%s", spp_cell_str(l, "display_name"));
	else
		spp_names_elide(name ? name : "(unnamed)", SPP_NAME_WIDTH, el, sizeof(el));
	spp_svg_text(f, SP_NAME_END, y + rh * 0.72, "end", "lbl", el);
	if (known) {
		double w = SP_BAR_W * (sp < 0 ? 0 : sp > 1 ? 1 : sp);

		spp_svg_rect(f, SP_BAR_X, y + 2, w, rh - 4, spp_html_class_color(cls), NULL);
		if (w > SP_BAR_W - 50)
			spp_svg_text(f, SP_BAR_X + w - 4, y + rh * 0.72, "end", "inv", pct);
		else
			spp_svg_text(f, SP_BAR_X + w + 4, y + rh * 0.72, "start", "val", pct);
	} else {
		spp_svg_text(f, SP_BAR_X + 4, y + rh * 0.72, "start", "dim", "sparsity unknown");
	}
	for (int k = 0; k < NHEAT; k++) {
		char path[32];
		double x = SP_HEAT_X + SP_HEAT_W * k;

		snprintf(path, sizeof(path), "pattern.%s", heat_keys[k]);
		if (!spp_cell_num(l, path, &v)) {
			spp_svg_text(f, x + SP_HEAT_W / 2, y + rh * 0.72, "middle", "dim", "\xe2\x80\x94");
			continue;
		}
		heat_color(v, c, sizeof(c));
		spp_svg_rect(f, x + 1, y + 1, SP_HEAT_W - 2, rh - 2, c, NULL);
		spp_cell_frac(v, 100, 0, "", buf, sizeof(buf));
		spp_svg_text(f, x + SP_HEAT_W / 2, y + rh * 0.72, "middle", v > 0.55 ? "inv" : "val", buf);
	}
	if (spp_cell_num(l, "pattern.zero_rows", &zr) && spp_cell_num(l, "pattern.zero_cols", &zc)) {
		snprintf(buf, sizeof(buf), "%.0f / %.0f", zr, zc);
		spp_svg_text(f, SP_ZERO_X + 8, y + rh * 0.72, "start", zr + zc > 0 ? "val" : "dim", buf);
	}
	fputs("</g>\n", f);
}

void spp_html_sparsity(struct spp_html *h)
{
	FILE *f = h->f;
	const cJSON *l;
	double rh = h->nlayers > 40 ? 15 : 20, gs;
	int i = 0;

	spp_html_section(f, "sparsity", "Sparsity and pattern per layer",
			 "One row per layer in file order: the bar is the share of zero weights, "
			 "coloured by pattern class; the cells are the pattern figures in percent "
			 "(N:M: groups of M along K holding at most N non-zeros, 100 = compliant; "
			 "BB: aligned B\xc3\x97" "B blocks that are all zero).");
	if (h->nlayers == 0) {
		spp_html_note(f, "no layers in this report: the model has no GEMM layer");
		fputs("</section>\n", f);
		return;
	}
	sparsity_header(h);
	/* a long model scrolls in a box; the header above stays in view */
	if (h->nlayers > 24)
		fputs("<div class=\"scroll\">\n", f);
	spp_svg_open(f, "chart-sparsity", SP_W, rh * h->nlayers + 4, "sparsity and pattern per layer");
	cJSON_ArrayForEach(l, h->layers) {
		sparsity_row(f, l, i, 2 + rh * i, rh);
		i++;
	}
	if (spp_cell_num(h->report, "summary.gemm_sparsity", &gs) && gs >= 0 && gs <= 1)
		fprintf(f, "<line class=\"mark\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			SP_BAR_X + SP_BAR_W * gs, SP_BAR_X + SP_BAR_W * gs, rh * h->nlayers + 4);
	spp_svg_close(f);
	if (h->nlayers > 24)
		fputs("</div>\n", f);
	fputs("</section>\n", f);
}

/* The figures of one format of summary.storage; 0 when it has none. */
static int storage_figures(const cJSON *fo, double *bytes, double *ratio, double *app)
{
	*app = -1;
	spp_cell_num(fo, "applicable_layers", app);
	return spp_cell_num(fo, "bytes", bytes) && spp_cell_num(fo, "ratio", ratio) && *bytes >= 0;
}

/*
 * Ticks at round numbers of one binary unit (0, 0.5, 1, 1.5 MiB), not at
 * round byte counts that read as "977 KiB". Returns the pixels a byte.
 */
static double bytes_axis(FILE *f, double x0, double w, double max, double y0, double y1)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	struct spp_svg_scale s;
	double t[32], u = 1;
	char lab[32];
	int n, k = 0;

	while (max / u >= 1024 && k < 4) {
		u *= 1024;
		k++;
	}
	spp_svg_scale_init(&s, 0, max / u, 0, x0, x0 + w);
	n = spp_svg_ticks(&s, t, 32);
	for (int i = 0; i < n; i++) {
		double px = spp_svg_map(&s, t[i]);

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			px, y0, px, y1);
		snprintf(lab, sizeof(lab), "%g %s", t[i], unit[k]);
		spp_svg_text(f, px, y1 + 14, "middle", "tick", t[i] == 0 ? "0" : lab);
	}
	return w / (s.hi * u);
}

void spp_html_storage(struct spp_html *h)
{
	const cJSON *st = spp_cell_get(spp_cell_get(h->report, "summary"), "storage"), *fo;
	FILE *f = h->f;
	double max = 0, dense = NAN, nl = -1, bytes, ratio, app, y, scale;
	int rows = 0;
	const double x0 = 130, bw = 640, rh = 24;

	spp_html_section(f, "storage", "Storage per format against dense",
			 "Bytes of every layer's weights in each format (values in the model's dtype, "
			 "int32 indices), summed over the layers the format can hold; the dashed line is "
			 "dense. A ratio above 1 is smaller than dense.");
	cJSON_ArrayForEach(fo, st) {
		if (!fo->string)
			continue;
		rows++;
		if (storage_figures(fo, &bytes, &ratio, &app) && bytes > max)
			max = bytes;
		if (strcmp(fo->string, "dense") == 0 && storage_figures(fo, &bytes, &ratio, &app))
			dense = bytes;
	}
	if (rows == 0 || !(max > 0)) {
		spp_html_note(f, "no storage figures in this report (summary.storage is absent)");
		fputs("</section>\n", f);
		return;
	}
	spp_cell_num(h->report, "summary.layers", &nl);
	spp_svg_open(f, "chart-storage", SP_W, rh * rows + 40, "storage per format against dense");
	scale = bytes_axis(f, x0, bw, max, 4, rh * rows + 8);
	y = 8;
	cJSON_ArrayForEach(fo, st) {
		char buf[256], sz[32], r[32];
		const char *name = fo->string;

		if (!name)
			continue;
		spp_svg_text(f, x0 - 8, y + rh * 0.66, "end", "lbl", name);
		if (!storage_figures(fo, &bytes, &ratio, &app)) {
			spp_svg_text(f, x0 + 4, y + rh * 0.66, "start", "dim",
				     app == 0 ? "not applicable to any layer" : "no figure");
			y += rh;
			continue;
		}
		spp_cell_bytes(bytes, sz, sizeof(sz));
		spp_html_fmt_ratio(ratio, r, sizeof(r));
		if (strcmp(name, "dense") == 0)
			snprintf(buf, sizeof(buf), "%s (the reference)", sz);
		else
			snprintf(buf, sizeof(buf), "%s \xc2\xb7 %s %s", sz, r,
				 ratio >= 1 ? "smaller than dense" : "(larger than dense)");
		if (app >= 0 && nl >= 0 && app != nl)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " \xc2\xb7 %.0f of %.0f layers",
				 app, nl);
		{
			char tip[320];

			snprintf(tip, sizeof(tip), "%s: %.0f bytes, ratio %s", name, bytes, r);
			spp_svg_rect(f, x0, y + 4, scale * bytes, rh - 8, spp_html_format_color(name),
				     tip);
		}
		spp_svg_text(f, x0 + scale * bytes + 6, y + rh * 0.66, "start",
			     ratio >= 1 || strcmp(name, "dense") == 0 ? "val" : "dim", buf);
		y += rh;
	}
	if (isfinite(dense))
		fprintf(f, "<line class=\"mark\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			x0 + scale * dense, x0 + scale * dense, rh * rows + 8);
	spp_svg_close(f);
	fputs("</section>\n", f);
}
