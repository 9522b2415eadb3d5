/*
 * The measured charts of the HTML report: theoretical against measured
 * speedup (the efficiency gap) and the cache miss rates (the roofline:
 * html_roofline.c).
 * Each run is one point, so a 300-layer model is a denser cloud, not a
 * longer page; the per-format views aggregate over layers (median and
 * range) so they stay one row per format at any model size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/machine.h"
#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

#define MAXF 16

struct series {
	const char *name;
	double *v;
	int n;
};

/* Figures grouped by a name (a format, a cache level), in first-seen order. */
struct groups {
	struct series s[MAXF];
	int n, cap;
};

static int count_runs(const struct spp_html *h)
{
	const cJSON *l;
	int n = 0;

	cJSON_ArrayForEach(l, h->layers)
		n += cJSON_GetArraySize(spp_cell_get(l, "runs"));
	return n;
}

static void groups_free(struct groups *g)
{
	for (int i = 0; i < g->n; i++)
		free(g->s[i].v);
}

/* Add v under name; a group past MAXF is dropped (never more formats than that). */
static int groups_add(struct spp_html *h, struct groups *g, const char *name, double v)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->s[i].name, name) == 0)
			break;
	if (i == g->n) {
		if (g->n == MAXF)
			return 0;
		g->s[i].v = malloc(sizeof(double) * (size_t)(g->cap + 1));
		if (!g->s[i].v) {
			h->nomem = 1;
			return -1;
		}
		g->s[i].name = name;
		g->s[i].n = 0;
		g->n++;
	}
	if (g->s[i].n < g->cap)
		g->s[i].v[g->s[i].n++] = v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_sorted(const double *v, int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void spp_html_note_no_runs(FILE *f)
{
	spp_html_note(f, "no kernel runs in this report (a static analysis): run 'spprof analyze' "
			 "without --static to time the formats");
}

/* The formats present among ok runs, dense excluded, for a legend. */
static int legend_formats(const struct spp_html *h, const char **names, int max, int dense)
{
	const cJSON *l, *run;
	int n = 0;

	cJSON_ArrayForEach(l, h->layers) {
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *fmt = spp_cell_str(run, "format");
			int seen = 0;

			if (!fmt || !spp_html_run_ok(run) || (!dense && strcmp(fmt, "dense") == 0))
				continue;
			for (int i = 0; i < n; i++)
				seen |= strcmp(names[i], fmt) == 0;
			if (!seen && n < max)
				names[n++] = fmt;
		}
	}
	return n;
}

void spp_html_legend(FILE *f, const struct spp_html *h, double x, double y, double w, int dense)
{
	const char *names[MAXF], *colors[MAXF];
	int n = legend_formats(h, names, MAXF, dense);

	for (int i = 0; i < n; i++)
		colors[i] = spp_html_format_color(names[i]);
	spp_svg_legend(f, x, y, w, names, colors, n);
}

static void speedup_scatter(struct spp_html *h)
{
	const cJSON *l, *run;
	double xlo = 1, xhi = 1, ylo = 1, yhi = 1, th, sp;
	struct spp_svg_plot p;
	FILE *f = h->f;
	const char *fmts[MAXF];
	int nf = legend_formats(h, fmts, MAXF, 0);

	cJSON_ArrayForEach(l, h->layers) {
		if (!spp_cell_num(l, "flops.theoretical_speedup", &th) || !(th > 0))
			continue;
		xlo = fmin(xlo, th);
		xhi = fmax(xhi, th);
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			if (!spp_html_run_ok(run) || !spp_cell_num(run, "speedup", &sp) || !(sp > 0))
				continue;
			ylo = fmin(ylo, sp);
			yhi = fmax(yhi, sp);
		}
	}
	spp_svg_open(f, "chart-speedup", 600, 490, "theoretical against measured speedup");
	spp_html_legend(f, h, 70, 14, 520, 0);
	/* the key of the reference lines: labels inside the plot would sit on points */
	spp_svg_text(f, 70, 52, "start", "ref",
		     "grey dashes: ideal, measured = theoretical \xc2\xb7 red dashes: dense (speedup 1)");
	spp_svg_plot_init(&p, f, 70, 64, 510, 370, xlo, xhi, 1, ylo, yhi, 1);
	spp_svg_axes(&p, "theoretical speedup (dense FLOPs / sparse FLOPs)",
		     "measured speedup over dense", 0, 0);
	{
		/* y = x where the two scales overlap: a point on it has no efficiency gap */
		double a = fmax(p.xs.lo, p.ys.lo), b = fmin(p.xs.hi, p.ys.hi);
		double dx[2] = {a, b}, dy[2] = {a, b};

		if (b > a) {
			fprintf(f, "<g class=\"diag\">");
			spp_svg_polyline(&p, dx, dy, 2, "#7a8294", "4 3");
			fprintf(f, "</g>\n");
		}
	}
	spp_svg_hline(&p, 1, "one", NULL);
	cJSON_ArrayForEach(l, h->layers) {
		const char *name = spp_cell_str(l, "name");

		if (!spp_cell_num(l, "flops.theoretical_speedup", &th) || !(th > 0))
			continue;
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *fmt = spp_cell_str(run, "format"), *be = spp_cell_str(run, "backend");
			char tip[512], a[32], b[32], e[32];
			double eff;

			if (!fmt || strcmp(fmt, "dense") == 0 || !spp_html_run_ok(run) ||
			    !spp_cell_num(run, "speedup", &sp) || !(sp > 0))
				continue;
			spp_html_fmt_ratio(th, a, sizeof(a));
			spp_html_fmt_ratio(sp, b, sizeof(b));
			spp_html_fmt_pct(spp_cell_num(run, "efficiency", &eff) ? eff : NAN, e, sizeof(e));
			snprintf(tip, sizeof(tip), "%s\n%s/%s: measured %s, theoretical %s, efficiency %s",
				 name ? name : "(unnamed)", be ? be : "?", fmt, b, a, e);
			int k = 0;

			while (k < nf && strcmp(fmts[k], fmt) != 0)
				k++;
			/* formats side by side around the layer's x, a few pixels apart */
			spp_svg_point_dodged(&p, th, sp, (k - (nf - 1) / 2.0) * 4, h->nlayers > 40 ? 3 : 4.5,
					     spp_html_format_color(fmt), tip);
		}
	}
	spp_svg_close(f);
}

/* Efficiency per format: median dot, whisker from min to max over layers. */
static void efficiency_chart(struct spp_html *h)
{
	struct groups g = {.cap = count_runs(h)};
	const cJSON *l, *run;
	double max = 1, min = 1, rh = 26, eff;
	FILE *f = h->f;
	struct spp_svg_plot p;
	int log;

	cJSON_ArrayForEach(l, h->layers)
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *fmt = spp_cell_str(run, "format");

			if (!fmt || strcmp(fmt, "dense") == 0 || !spp_html_run_ok(run) ||
			    !spp_cell_num(run, "efficiency", &eff) || !isfinite(eff))
				continue;
			if (groups_add(h, &g, fmt, eff))
				goto done;
			max = fmax(max, eff);
			if (eff > 0)
				min = fmin(min, eff);
		}
	if (g.n == 0) {
		spp_html_note(f, "no efficiency figures: no sparse format ran ok");
		goto done;
	}
	spp_svg_open(f, "chart-efficiency", 560, rh * g.n + 90, "efficiency per format");
	spp_svg_text(f, 90, 16, "start", "hd", "efficiency per format over the layers");
	spp_svg_text(f, 90, 30, "start", "dim", "dot: median \xc2\xb7 line: min to max \xc2\xb7 100% = no gap");
	/* one noisy layer at 200x must not squash every median against 0 */
	log = max / min > 20;
	spp_svg_plot_init(&p, f, 90, 40, 390, rh * g.n, log ? min : 0, max, log, 0, g.n, 0);
	spp_svg_xaxis(&p, "efficiency = measured / theoretical speedup", 1);
	spp_svg_vline(&p, 1, "one", NULL);
	for (int i = 0; i < g.n; i++) {
		struct series *s = &g.s[i];
		double y = 40 + rh * (i + 0.5), med, x0, x1;
		char tip[256], a[32], b[32], c[32];

		qsort(s->v, (size_t)s->n, sizeof(double), cmp_double);
		med = median_sorted(s->v, s->n);
		x0 = spp_svg_map(&p.xs, s->v[0]);
		x1 = spp_svg_map(&p.xs, s->v[s->n - 1]);
		spp_svg_text(f, 84, y + 4, "end", "lbl", s->name);
		fprintf(f, "<line class=\"whisk\" stroke=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			spp_html_format_color(s->name), x0, y, x1, y);
		spp_html_fmt_pct(med, a, sizeof(a));
		spp_html_fmt_pct(s->v[0], b, sizeof(b));
		spp_html_fmt_pct(s->v[s->n - 1], c, sizeof(c));
		snprintf(tip, sizeof(tip), "%s: median efficiency %s over %d runs (min %s, max %s)",
			 s->name, a, s->n, b, c);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>",
			spp_svg_map(&p.xs, med), y, spp_html_format_color(s->name));
		spp_html_escape(f, tip);
		fputs("</title></circle>\n", f);
		spp_svg_text(f, fmax(x1, spp_svg_map(&p.xs, med)) + 8, y + 4, "start", "val", a);
	}
	spp_svg_close(f);
done:
	groups_free(&g);
}

void spp_html_speedup(struct spp_html *h)
{
	spp_html_section(h->f, "speedup", "Theoretical against measured speedup",
			 "Each point is one layer run in one format. Theoretical speedup is what the "
			 "skipped FLOPs promise; measured is dense time over the format's time. The "
			 "distance below the diagonal is the efficiency gap; below the red line the "
			 "format is slower than dense.");
	if (!h->has_runs) {
		spp_html_note_no_runs(h->f);
	} else {
		fputs("<div class=\"row\">\n", h->f);
		speedup_scatter(h);
		efficiency_chart(h);
		fputs("</div>\n", h->f);
	}
	fputs("</section>\n", h->f);
}

static const char *const levels[] = {"l1d", "l2", "llc"};
static const char *const level_titles[] = {"L1D", "L2", "LLC"};
static const char *const level_colors[] = {"#4e79a7", "#f28e2b", "#59a14f"};

/* "sim (128 runs), perf (4 runs)": the sources of the cache figures at path ("cache.source"). */
static void cache_sources(struct spp_html *h, const char *path, char *buf, size_t n)
{
	const char *src[8];
	int cnt[8], ns = 0;
	const cJSON *l, *run;
	struct spp_buf b;

	cJSON_ArrayForEach(l, h->layers)
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *s = spp_cell_str(run, path);
			int i;

			if (!s)
				continue;
			for (i = 0; i < ns && strcmp(src[i], s) != 0; i++)
				;
			if (i == ns && ns == 8)
				continue;
			if (i == ns) {
				src[ns] = s;
				cnt[ns++] = 0;
			}
			cnt[i]++;
		}
	spp_buf_init(&b, buf, n);
	for (int i = 0; i < ns; i++)
		spp_buf_add(&b, "%s%s (%d run%s)", i ? ", " : "", src[i], cnt[i], cnt[i] == 1 ? "" : "s");
}

/* The report's own words on why cache figures are missing, if it has any. */
static const char *cache_warning(const cJSON *r)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, spp_cell_get(r, "warnings"))
		if (spp_cell_warning_text(w) && strstr(spp_cell_warning_text(w), "cache"))
			return spp_cell_warning_text(w);
	return NULL;
}

/* The series of name in g; NULL when it has no figure. */
static struct series *series_of(struct groups *g, const char *name)
{
	for (int j = 0; j < g->n; j++)
		if (strcmp(g->s[j].name, name) == 0)
			return g->s[j].n ? &g->s[j] : NULL;
	return NULL;
}

/*
 * One level's whisker (min to max) and median dot at y; hollow and dashed
 * for the simulator beside the counters. The median's text goes to a.
 */
static void cache_whisker(FILE *f, const struct spp_svg_plot *p, struct series *s, double y,
			  const char *color, int hollow, const char *what, char *a, size_t an)
{
	char tip[256];
	double med;

	qsort(s->v, (size_t)s->n, sizeof(double), cmp_double);
	med = median_sorted(s->v, s->n);
	fprintf(f, "<line class=\"whisk\" stroke=\"%s\"%s x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		color, hollow ? " stroke-dasharray=\"3 2\"" : "", spp_svg_map(&p->xs, s->v[0]), y,
		spp_svg_map(&p->xs, s->v[s->n - 1]), y);
	spp_html_fmt_pct(med, a, an);
	snprintf(tip, sizeof(tip), "%s: median %s over %d runs", what, a, s->n);
	if (hollow)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" stroke=\"%s\" "
			"stroke-width=\"2\"><title>", spp_svg_map(&p->xs, med), y, color);
	else
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"><title>",
			spp_svg_map(&p->xs, med), y, color);
	spp_html_escape(f, tip);
	fputs("</title></circle>\n", f);
}

/* The figures of block ("cache", "cache_sim") of each ok run into g per level; -1 out of memory. */
static int cache_collect(struct spp_html *h, const char *block, struct groups *g,
			 const char **order, int *nf, double *max)
{
	const cJSON *l, *run;

	cJSON_ArrayForEach(l, h->layers)
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			const char *fmt = spp_cell_str(run, "format");
			const cJSON *c = spp_cell_get(run, block);
			int any = 0;

			if (!fmt || !spp_html_run_ok(run) || !cJSON_IsObject(c))
				continue;
			for (int k = 0; k < 3; k++) {
				char key[32];
				double v;

				snprintf(key, sizeof(key), "%s_miss_rate", levels[k]);
				if (!spp_cell_num(c, key, &v) || !(v >= 0))
					continue;
				if (groups_add(h, &g[k], fmt, v))
					return -1;
				*max = fmax(*max, v);
				any = 1;
			}
			if (any) {
				int seen = 0;

				for (int i = 0; i < *nf; i++)
					seen |= strcmp(order[i], fmt) == 0;
				if (!seen && *nf < MAXF)
					order[(*nf)++] = fmt;
			}
		}
	return 0;
}

/*
 * Per format and level, the counters' (or the simulator's) figures; with
 * --counters A,sim the simulator's beside them, hollow.
 */
void spp_html_cache(struct spp_html *h)
{
	struct groups g[2][3] = {{{.cap = count_runs(h)}, {.cap = count_runs(h)}, {.cap = count_runs(h)}},
				 {{.cap = count_runs(h)}, {.cap = count_runs(h)}, {.cap = count_runs(h)}}};
	const char *order[MAXF];
	int nf = 0, beside;
	double max = 0, rh = 15;
	char srcs[512];
	FILE *f = h->f;
	struct spp_svg_plot p;

	spp_html_section(f, "cache", "Cache miss rates",
			 "Miss rate of each cache level per format, over the layers: the dot is the "
			 "median, the line spans min to max. Each figure carries its source: "
			 "hardware counters (papi, perf), the cache simulator (sim) or cupti.");
	if (cache_collect(h, "cache", g[0], order, &nf, &max) ||
	    cache_collect(h, "cache_sim", g[1], order, &nf, &max))
		goto done;
	beside = g[1][0].n + g[1][1].n + g[1][2].n > 0;
	if (nf == 0) {
		const char *why = cache_warning(h->report);

		if (!h->has_runs)
			spp_html_note_no_runs(f);
		else
			spp_html_note(f, "no cache figures in this report%s%s", why ? ": " : "",
				      why ? why : " (every run's cache is null)");
		goto done;
	}
	cache_sources(h, "cache.source", srcs, sizeof(srcs));
	fputs("<p class=\"lead\">source: ", f);
	spp_html_escape(f, srcs[0] ? srcs : "not stated");
	if (beside) {
		cache_sources(h, "cache_sim.source", srcs, sizeof(srcs));
		fputs("; beside them, hollow and dashed: ", f);
		spp_html_escape(f, srcs);
	}
	fputs("</p>\n", f);
	spp_svg_open(f, "chart-cache", 820, rh * 3 * nf + 8 * nf + 80, "cache miss rates per format");
	spp_svg_legend(f, 130, 14, 600, level_titles, level_colors, 3);
	spp_svg_plot_init(&p, f, 130, 30, 600, (rh * 3 + 8) * nf, 0, max > 0 ? fmin(1, max) : 0.01,
			  0, 0, 1, 0);
	spp_svg_xaxis(&p, "miss rate", 1);
	for (int i = 0; i < nf; i++) {
		double y0 = 30 + (rh * 3 + 8) * i + 4;

		spp_svg_text(f, 70, y0 + rh * 1.5 + 4, "end", "lbl", order[i]);
		for (int k = 0; k < 3; k++) {
			struct series *s = series_of(&g[0][k], order[i]), *ss = series_of(&g[1][k], order[i]);
			double y = y0 + rh * (k + 0.5), right = 0;
			char a[32] = "", b[32] = "", what[128], label[80];

			spp_svg_text(f, 124, y + 4, "end", "dim", level_titles[k]);
			if (!s && !ss) {
				spp_svg_text(f, 136, y + 4, "start", "dim", "no figure");
				continue;
			}
			if (s) {
				snprintf(what, sizeof(what), "%s %s miss rate", order[i], level_titles[k]);
				cache_whisker(f, &p, s, y, level_colors[k], 0, what, a, sizeof(a));
				right = s->v[s->n - 1];
			}
			if (ss) {
				snprintf(what, sizeof(what), "%s %s miss rate, simulated beside the counters",
					 order[i], level_titles[k]);
				cache_whisker(f, &p, ss, y, level_colors[k], 1, what, b, sizeof(b));
				right = fmax(right, ss->v[ss->n - 1]);
			}
			snprintf(label, sizeof(label), "%s%s%s%s", a, s && ss ? " \xc2\xb7 " : "",
				 ss ? "sim " : "", b);
			spp_svg_text(f, spp_svg_map(&p.xs, right) + 8, y + 4, "start", "val", label);
		}
	}
	spp_svg_close(f);
done:
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 3; k++)
			groups_free(&g[b][k]);
	fputs("</section>\n", f);
}
