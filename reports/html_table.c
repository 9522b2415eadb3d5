/*
 * The layer table of the HTML report: one row per layer, every figure
 * cell carrying its exact value in data-v so the page's script sorts by
 * number, not by the rounded text. Unknown figures have no data-v and
 * sort last. Run, breakeven and recommendation columns appear only when
 * the report has them, so a static report is not a wall of dashes.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

#define DASH "<span class=\"null\">\xe2\x80\x94</span>"

/* A figure cell: text shown, exact value for sorting. */
/*
 * A number with its unit ("1.36 µs") keeps to one line; a cell of several
 * parts ("bsr8 0.81×", "32 × 27", "4:4 8:8 16:16") may wrap between them,
 * so that the table fits a 1400 px window (test_html_browser).
 */
static int may_wrap(const char *text)
{
	const char *sp = strchr(text, ' ');

	return sp && (!isdigit((unsigned char)text[0]) || strchr(sp + 1, ' '));
}

static void td_num(FILE *f, int known, double v, const char *text)
{
	char exact[64];

	if (!known || !isfinite(v)) {
		fputs("<td class=\"n\">" DASH "</td>", f);
		return;
	}
	spp_cell_number(v, exact, sizeof(exact));
	fprintf(f, "<td class=\"n%s\" data-v=\"%s\">", may_wrap(text) ? " w" : "", exact);
	spp_html_escape(f, text);
	fputs("</td>", f);
}

static void td_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("<td>" DASH "</td>", f);
		return;
	}
	fputs("<td>", f);
	spp_html_escape(f, s);
	fputs("</td>", f);
}

/* The dense run's median time; NAN when the layer has none. */
static double dense_median(const cJSON *l)
{
	const cJSON *run;
	double v;

	cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
		const char *fmt = spp_cell_str(run, "format");

		if (fmt && strcmp(fmt, "dense") == 0 && spp_html_run_ok(run) &&
		    spp_cell_num(run, "time_ns.median", &v))
			return v;
	}
	return NAN;
}

/* The breakeven entry with the widest margin (the format that pays off most). */
static const cJSON *best_breakeven(const cJSON *l)
{
	const cJSON *e, *best = NULL;
	double m, bm = -INFINITY;

	cJSON_ArrayForEach(e, spp_cell_get(l, "breakeven"))
		if (e->string && spp_cell_num(e, "margin", &m) && m > bm) {
			bm = m;
			best = e;
		}
	return best;
}

static int any_member(const cJSON *layers, const char *key, int want_object_members)
{
	const cJSON *l, *v;

	cJSON_ArrayForEach(l, layers) {
		v = spp_cell_get(l, key);
		if (want_object_members ? cJSON_GetArraySize(v) > 0 && cJSON_IsObject(v)
					: cJSON_IsObject(v))
			return 1;
	}
	return 0;
}

struct cols {
	int runs, breakeven, recommendation;
};

/* The tightest N:M along K ("2:4 4:8 7:16") and the mask's provenance verdict. */
static void structure_cells(FILE *f, const cJSON *l)
{
	static const int widths[] = {4, 8, 16};
	const cJSON *t = spp_cell_path(l, "pattern.tightest_n.along_k");
	const char *v = spp_cell_str(l, "pattern.provenance.verdict");
	char text[64], key[8];
	struct spp_buf buf;
	double n = NAN, share;

	spp_buf_init(&buf, text, sizeof(text));
	for (int i = 0; i < 3 && t; i++) {
		snprintf(key, sizeof(key), "of%d", widths[i]);
		if (spp_cell_num(t, key, &n))
			spp_buf_add(&buf, "%s%.0f:%d", i ? " " : "", n, widths[i]);
	}
	td_num(f, t && buf.len > 0, n / 16, text);
	if (v && spp_cell_num(l, "pattern.provenance.low_share", &share))
		td_num(f, 1, share, v);
	else
		td_str(f, v);
}

static void header(FILE *f, const struct cols *c)
{
	fputs("<thead><tr><th data-num title=\"file order\">#</th><th>layer</th><th>op</th>"
	      "<th data-num title=\"GEMM view W (M \xc3\x97 K); sorts by M\xc2\xb7K\">M \xc3\x97 K</th>"
	      "<th data-num>N</th><th>dtype</th><th>class</th>"
	      "<th data-num>sparsity</th><th data-num title=\"2:4 groups compliant\">2:4</th>"
	      "<th data-num title=\"all-zero 4\xc3\x97" "4 blocks\">block4</th>"
	      "<th data-num title=\"2:4 groups compliant along M (4 rows of a column)\">2:4 along M</th>"
	      "<th data-num title=\"the tightest N every group of 4, 8, 16 along K complies with; "
	      "sorts by N / 16\">tightest N:M</th>"
	      "<th data-num title=\"mask provenance; sorts by the share of survivors below an "
	      "eighth of their median |w|\">mask</th>"
	      "<th data-num title=\"dense FLOPs / sparse FLOPs\">theor.</th>"
	      "<th data-num title=\"smallest format; sorts by its ratio to dense\">best storage</th>", f);
	if (c->runs)
		fputs("<th data-num title=\"median of the dense baseline\">dense time</th>"
		      "<th data-num title=\"fastest format that verified; sorts by its speedup\">fastest format</th>"
		      "<th data-num title=\"speedup / theoretical speedup of the fastest format\">efficiency</th>", f);
	if (c->breakeven)
		fputs("<th data-num title=\"widest margin: layer sparsity minus breakeven\">breakeven</th>", f);
	if (c->recommendation)
		fputs("<th>recommendation</th>", f);
	fputs("</tr></thead>\n", f);
}

static void row(FILE *f, const cJSON *l, int i, const struct cols *c)
{
	const char *name = spp_cell_str(l, "name"), *cls = spp_cell_str(l, "pattern.class");
	const char *op = spp_cell_str(l, "op"), *dt = spp_cell_str(l, "dtype"), *s;
	char buf[128], a[32], b[32], key[640];
	double v, m, k, r;

	snprintf(key, sizeof(key), "%s %s %s %s", name ? name : "", op ? op : "", cls ? cls : "",
		 dt ? dt : "");
	fputs("<tr class=\"layer\" data-class=\"", f);
	spp_html_escape(f, cls ? cls : "");
	fputs("\" data-s=\"", f);
	spp_html_escape(f, key);
	fputs("\">", f);
	snprintf(buf, sizeof(buf), "%d", i + 1);
	td_num(f, 1, i + 1, buf);
	fputs("<td class=\"name\" title=\"", f);
	spp_html_escape(f, name);
	fputs("\">", f);
	/* the unique short name (reports/names.c); the full one in the tooltip */
	spp_html_escape(f, spp_cell_str(l, "display_name") ? spp_cell_str(l, "display_name")
			   : name ? name : "(unnamed)");
	fputs("</td>", f);
	td_str(f, op);
	if (spp_cell_num(l, "m", &m) && spp_cell_num(l, "k", &k)) {
		snprintf(buf, sizeof(buf), "%.0f \xc3\x97 %.0f", m, k);
		td_num(f, 1, m * k, buf);
	} else {
		td_num(f, 0, 0, NULL);
	}
	spp_cell_number(spp_cell_num(l, "n", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "n", &v), v, buf);
	td_str(f, dt);
	td_str(f, cls);
	spp_html_fmt_pct(spp_cell_num(l, "sparsity", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "sparsity", &v), v, buf);
	spp_html_fmt_pct(spp_cell_num(l, "pattern.nm2_4", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "pattern.nm2_4", &v), v, buf);
	spp_html_fmt_pct(spp_cell_num(l, "pattern.block4", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "pattern.block4", &v), v, buf);
	spp_html_fmt_pct(spp_cell_num(l, "pattern.along_m.nm2_4", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "pattern.along_m.nm2_4", &v), v, buf);
	structure_cells(f, l);
	spp_html_fmt_ratio(spp_cell_num(l, "flops.theoretical_speedup", &v) ? v : NAN, buf, sizeof(buf));
	td_num(f, spp_cell_num(l, "flops.theoretical_speedup", &v), v, buf);
	s = spp_cell_str(l, "best_storage.format");
	r = spp_cell_num(l, "best_storage.ratio", &r) ? r : NAN;
	spp_html_fmt_ratio(r, a, sizeof(a));
	snprintf(buf, sizeof(buf), "%s %s", s ? s : "", a);
	td_num(f, s != NULL, r, buf);
	if (c->runs) {
		const cJSON *run = spp_cell_get(l, "fastest");
		double sp, eff;

		v = dense_median(l);
		spp_html_fmt_time(v, buf, sizeof(buf));
		td_num(f, isfinite(v), v, buf);
		if (run && spp_cell_str(run, "format") && spp_cell_num(run, "speedup", &sp)) {
			spp_html_fmt_ratio(sp, a, sizeof(a));
			snprintf(buf, sizeof(buf), "%s %s", spp_cell_str(run, "format"), a);
			td_num(f, 1, sp, buf);
		} else {
			td_num(f, 0, 0, NULL);
		}
		spp_html_fmt_pct(run && spp_cell_num(run, "efficiency", &eff) ? eff : NAN, buf, sizeof(buf));
		td_num(f, run && spp_cell_num(run, "efficiency", &eff), eff, buf);
	}
	if (c->breakeven) {
		const cJSON *e = best_breakeven(l);
		double be;

		if (e && spp_cell_num(e, "sparsity", &be) && spp_cell_num(e, "margin", &m)) {
			spp_html_fmt_pct(be, a, sizeof(a));
			snprintf(b, sizeof(b), "%+.1f", m * 100);
			snprintf(buf, sizeof(buf), "%s %s (%s)", e->string, a, b);
			td_num(f, 1, m, buf);
		} else {
			td_num(f, 0, 0, NULL);
		}
	}
	if (c->recommendation) {
		const cJSON *rec = spp_cell_get(l, "recommendation");

		if (spp_cell_str(rec, "format")) {
			spp_html_fmt_ratio(spp_cell_num(rec, "speedup", &v) ? v : NAN, a, sizeof(a));
			snprintf(buf, sizeof(buf), "%s%s%s %s",
				 spp_cell_str(rec, "backend") ? spp_cell_str(rec, "backend") : "",
				 spp_cell_str(rec, "backend") ? "/" : "", spp_cell_str(rec, "format"),
				 spp_cell_num(rec, "speedup", &v) ? a : "");
			fputs("<td title=\"", f);
			spp_html_escape(f, spp_cell_str(rec, "reason"));
			fputs("\">", f);
			spp_html_escape(f, buf);
			fputs("</td>", f);
		} else {
			td_str(f, NULL);
		}
	}
	fputs("</tr>\n", f);
}

/* The filter's class list: the classes present, in first-seen order. */
static void class_options(FILE *f, const cJSON *layers)
{
	const char *seen[16];
	int n = 0;
	const cJSON *l;

	fputs("<select id=\"layer-class\" aria-label=\"pattern class\"><option value=\"\">every class</option>", f);
	cJSON_ArrayForEach(l, layers) {
		const char *cls = spp_cell_str(l, "pattern.class");
		int dup = 0;

		if (!cls)
			continue;
		for (int i = 0; i < n; i++)
			dup |= strcmp(seen[i], cls) == 0;
		if (dup || n == 16)
			continue;
		seen[n++] = cls;
		fputs("<option value=\"", f);
		spp_html_escape(f, cls);
		fputs("\">", f);
		spp_html_escape(f, cls);
		fputs("</option>", f);
	}
	fputs("</select>\n", f);
}

void spp_html_table(struct spp_html *h)
{
	struct cols c = {
		.runs = h->has_runs,
		.breakeven = any_member(h->layers, "breakeven", 1),
		.recommendation = any_member(h->layers, "recommendation", 0),
	};
	const cJSON *l;
	FILE *f = h->f;
	int i = 0;

	spp_html_section(f, "layers", "Layers",
			 "Click a column title to sort (again to reverse); type to filter by name, op, "
			 "class or dtype (every word must match). Hover a title for what it holds.");
	if (h->nlayers == 0) {
		spp_html_note(f, "no layers in this report");
		fputs("</section>\n", f);
		return;
	}
	fputs("<div class=\"tools\"><input id=\"layer-filter\" type=\"search\" "
	      "placeholder=\"filter layers: e.g. attention query\" aria-label=\"filter layers\">\n", f);
	class_options(f, h->layers);
	fprintf(f, "<span id=\"layer-count\">%d layers</span></div>\n", h->nlayers);
	fputs(h->nlayers > 30 ? "<div class=\"scroll\" style=\"max-height:720px\">\n" : "<div class=\"wide\">\n", f);
	fputs("<table class=\"layers\" id=\"layer-table\">\n", f);
	header(f, &c);
	fputs("<tbody>\n", f);
	cJSON_ArrayForEach(l, h->layers)
		row(f, l, i++, &c);
	fputs("</tbody></table></div>\n</section>\n", f);
}
