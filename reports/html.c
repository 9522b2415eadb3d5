/*
 * The HTML report: one self-contained page (no network access: a
 * Content-Security-Policy forbids every fetch) with a summary, the model,
 * machine and settings, charts drawn as inline SVG and a sortable,
 * filterable layer table. The page reads fully without its script; the
 * script only sorts and filters, and records any error it meets in the
 * page (data-spp-errors on <html>) so that a headless browser test sees it.
 */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/static.h"
#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"
#include "reports/text_table.h"

/* Kernels with no storage row (peers, activation and CUDA-only kernels): by a hash of the key. */
static const char *const extra_colors[] = {"#17becf", "#bcbd22", "#8c564b", "#393b79"};

/* Dense grey; a storage format the colour of its registry entry (kernels/kernels.h). */
const char *spp_html_format_color(const char *format)
{
	unsigned h = 5381;
	int f;

	if (!format)
		return "#999999";
	f = spp_storage_find(format);
	if (f == SPP_ST_DENSE)
		return "#7f7f7f";
	if (f > SPP_ST_DENSE && spp_storage_ops((enum spp_storage_fmt)f)->colour)
		return spp_storage_ops((enum spp_storage_fmt)f)->colour;
	for (const char *p = format; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return extra_colors[h % (sizeof(extra_colors) / sizeof(extra_colors[0]))];
}

const char *spp_html_class_color(const char *cls)
{
	if (!cls)
		return "#c4c9d2";
	if (strcmp(cls, "dense") == 0)
		return "#9e9e9e";
	if (strcmp(cls, "nm") == 0)
		return "#b07aa1";
	if (strcmp(cls, "channel") == 0)
		return "#f28e2b";
	if (strcmp(cls, "block") == 0)
		return "#59a14f";
	if (strcmp(cls, "kernel") == 0)
		return "#e15759";
	if (strcmp(cls, "pattern") == 0)
		return "#edc948";
	if (strcmp(cls, "unstructured") == 0)
		return "#4e79a7";
	return "#17becf";
}

void spp_html_note(FILE *f, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("<p class=\"note\">", f);
	spp_html_escape(f, buf);
	fputs("</p>\n", f);
}

void spp_html_section(FILE *f, const char *id, const char *title, const char *lead)
{
	fprintf(f, "<section id=\"%s\">\n<h2>", id);
	spp_html_escape(f, title);
	fputs("</h2>\n", f);
	if (lead) {
		fputs("<p class=\"lead\">", f);
		spp_html_escape(f, lead);
		fputs("</p>\n", f);
	}
}

void spp_html_fmt_ratio(double v, char *buf, size_t n)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, n, "\xe2\x80\x94");
	else
		snprintf(buf, n, a >= 100 ? "%.0f\xc3\x97" : a >= 10 ? "%.1f\xc3\x97" : "%.2f\xc3\x97",
			 v);
}

void spp_html_fmt_time(double ns, char *buf, size_t n)
{
	static const char *const unit[] = {"ns", "\xc2\xb5s", "ms", "s"};
	int i = 0;

	if (!isfinite(ns)) {
		snprintf(buf, n, "\xe2\x80\x94");
		return;
	}
	while (fabs(ns) >= 1000 && i < 3) {
		ns /= 1000;
		i++;
	}
	snprintf(buf, n, fabs(ns) >= 100 ? "%.0f %s" : fabs(ns) >= 10 ? "%.1f %s" : "%.2f %s", ns,
		 unit[i]);
}

void spp_html_fmt_pct(double frac, char *buf, size_t n)
{
	if (!isfinite(frac))
		snprintf(buf, n, "\xe2\x80\x94");
	else
		spp_cell_frac(frac, 100, 1, "%", buf, n);
}

int spp_html_run_ok(const cJSON *run)
{
	const char *st = spp_cell_str(run, "status");

	return st && strcmp(st, "ok") == 0;
}

double spp_html_layer_weight(const cJSON *layer)
{
	const cJSON *run;
	double v;

	cJSON_ArrayForEach(run, spp_cell_get(layer, "runs")) {
		const char *fmt = spp_cell_str(run, "format");

		if (fmt && strcmp(fmt, "dense") == 0 && spp_html_run_ok(run) &&
		    spp_cell_num(run, "time_ns.median", &v) && v > 0)
			return v;
	}
	if (spp_cell_num(layer, "flops.dense", &v) && v > 0)
		return v * 1e-6; /* below any measured time: measured layers rank first */
	return 0;
}

struct ranked {
	const cJSON *layer;
	double w;
	int i;
};

static int by_weight(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->i - y->i;
}

int spp_html_top_layers(struct spp_html *h, int (*want)(const cJSON *layer), int max,
			const cJSON ***out)
{
	struct ranked *r;
	const cJSON *l;
	int n = 0, keep;

	*out = NULL;
	r = malloc(sizeof(*r) * (size_t)(h->nlayers + 1));
	if (!r) {
		h->nomem = 1;
		return -1;
	}
	cJSON_ArrayForEach(l, h->layers) {
		if (!want(l))
			continue;
		r[n].layer = l;
		r[n].w = spp_html_layer_weight(l);
		r[n].i = n;
		n++;
	}
	qsort(r, (size_t)n, sizeof(*r), by_weight);
	keep = n < max ? n : max;
	*out = malloc(sizeof(**out) * (size_t)(keep + 1));
	if (!*out) {
		free(r);
		h->nomem = 1;
		return -1;
	}
	for (int i = 0; i < keep; i++)
		(*out)[i] = r[i].layer;
	free(r);
	return n;
}

/* One row of a facts table; text NULL shows the unknown dash. */
static void fact(FILE *f, const char *key, const char *text)
{
	fputs("<tr><th>", f);
	spp_html_escape(f, key);
	fputs("</th><td>", f);
	if (text)
		spp_html_escape(f, text);
	else
		fputs("<span class=\"null\">\xe2\x80\x94</span>", f);
	fputs("</td></tr>\n", f);
}

static void fact_num(FILE *f, const char *key, const cJSON *obj, const char *path)
{
	char buf[64];
	double v;

	if (!spp_cell_num(obj, path, &v)) {
		fact(f, key, NULL);
		return;
	}
	spp_cell_number(v, buf, sizeof(buf));
	fact(f, key, buf);
}

/* A JSON array of strings as "a, b, c". */
static void join_strings(const cJSON *a, char *buf, size_t n)
{
	const cJSON *s;
	struct spp_buf b;

	spp_buf_init(&b, buf, n);
	cJSON_ArrayForEach(s, a)
		if (cJSON_IsString(s))
			spp_buf_add(&b, "%s%s", b.len ? ", " : "", s->valuestring);
}

static void facts_model(FILE *f, const cJSON *m)
{
	char buf[512], a[64], b[64];
	double v, w;

	fputs("<div class=\"panel\"><h3>Model</h3><table>\n", f);
	fact(f, "path", spp_cell_str(m, "path"));
	fact(f, "format", spp_cell_str(m, "format"));
	if (spp_cell_str(m, "hash.value")) {
		snprintf(buf, sizeof(buf), "%s %s", spp_cell_str(m, "hash.algo") ? spp_cell_str(m, "hash.algo") : "",
			 spp_cell_str(m, "hash.value"));
		fact(f, "hash", buf);
	} else {
		fact(f, "hash", NULL);
	}
	spp_cell_bytes(spp_cell_num(m, "bytes", &v) ? v : NAN, buf, sizeof(buf));
	fact(f, "file size", spp_cell_num(m, "bytes", &v) ? buf : NULL);
	if (spp_cell_num(m, "params", &v) && spp_cell_num(m, "nnz", &w)) {
		spp_cell_count(v, "", a, sizeof(a));
		spp_cell_count(w, "", b, sizeof(b));
		snprintf(buf, sizeof(buf), "%s parameters, %s non-zero", a, b);
		fact(f, "parameters", buf);
	} else {
		fact_num(f, "parameters", m, "params");
	}
	spp_html_fmt_pct(spp_cell_num(m, "sparsity", &v) ? v : NAN, buf, sizeof(buf));
	fact(f, "sparsity", buf);
	fact_num(f, "tensors", m, "tensors");
	fact_num(f, "GEMM layers", m, "layers");
	fputs("</table></div>\n", f);
}

static void facts_machine(FILE *f, const cJSON *report)
{
	const cJSON *m = spp_cell_get(report, "machine");
	const cJSON *c;
	char buf[512], sz[32];
	struct spp_buf caches;
	double bw, gf;

	fputs("<div class=\"panel\"><h3>Machine</h3><table>\n", f);
	fact(f, "cpu", spp_cell_str(m, "cpu"));
	if (spp_cell_str(m, "hypervisor"))
		fact(f, "hypervisor", spp_cell_str(m, "hypervisor"));
	fact(f, "vector path", spp_cell_str(m, "isa"));
	spp_cell_build_line(m, buf, sizeof(buf));
	fact(f, "build", buf);
	fact_num(f, "threads", m, "threads");
	spp_buf_init(&caches, buf, sizeof(buf));
	cJSON_ArrayForEach(c, spp_cell_get(m, "caches")) {
		double level, size;
		const char *type = spp_cell_str(c, "type");

		if (!spp_cell_num(c, "level", &level) || !spp_cell_num(c, "size", &size) ||
		    (type && strcmp(type, "instruction") == 0))
			continue;
		spp_cell_bytes(size, sz, sizeof(sz));
		spp_buf_add(&caches, "%sL%.0f%s %s", caches.len ? ", " : "", level, level == 1 ? "d" : "", sz);
	}
	fact(f, "caches", buf[0] ? buf : NULL);
	if (spp_cell_str(m, "cache_note"))
		fact(f, "cache note", spp_cell_str(m, "cache_note"));
	if (spp_cell_num(m, "peak_gflops", &gf) && spp_cell_num(m, "peak_bw_gbs", &bw))
		snprintf(buf, sizeof(buf), "%.1f GFLOP/s, %.1f GB/s (calibrated)", gf, bw);
	else
		snprintf(buf, sizeof(buf), "not calibrated (run 'spprof calibrate')");
	fact(f, "peaks", buf);
	if (spp_cell_str(m, "dense_blas.name")) {
		struct spp_buf b;

		spp_buf_init(&b, buf, sizeof(buf));
		spp_buf_add(&b, "%s %s", spp_cell_str(m, "dense_blas.name"),
			    spp_cell_str(m, "dense_blas.version") ? spp_cell_str(m, "dense_blas.version") : "");
		if (spp_cell_str(m, "dense_blas.core"))
			spp_buf_add(&b, " (%s)", spp_cell_str(m, "dense_blas.core"));
		fact(f, "OpenBLAS as loaded", buf);
	}
	fact(f, "dense baseline", spp_cell_baseline_line(report, buf, sizeof(buf)) == 0 ? buf : NULL);
	fputs("</table></div>\n", f);
}

static void facts_settings(FILE *f, const cJSON *r)
{
	const cJSON *s = spp_cell_get(r, "settings");
	char buf[512];
	double v;

	fputs("<div class=\"panel\"><h3>Settings</h3><table>\n", f);
	fact_num(f, "N", s, "n");
	fact_num(f, "run threads", s, "run_threads");
	if (cJSON_IsTrue(spp_cell_get(s, "static"))) {
		fact(f, "runs", "none (static analysis)");
	} else {
		if (spp_cell_num(s, "repeats", &v))
			snprintf(buf, sizeof(buf), "%.0f timed runs per format", v);
		else if (spp_cell_num(s, "time_budget_s", &v))
			snprintf(buf, sizeof(buf), "%g s budget per layer", v);
		else
			snprintf(buf, sizeof(buf), "default budget");
		fact(f, "runs", buf);
		fact(f, "cold caches", cJSON_IsTrue(spp_cell_get(s, "cold")) ? "yes" : "no");
		if (spp_cell_str(s, "cache_rule"))
			fact(f, "cache state", spp_cell_str(s, "cache_rule"));
	}
	join_strings(spp_cell_get(s, "formats"), buf, sizeof(buf));
	fact(f, "formats", buf[0] ? buf : NULL);
	join_strings(spp_cell_get(s, "backends"), buf, sizeof(buf));
	fact(f, "backends", buf[0] ? buf : NULL);
	fact(f, "created", spp_cell_str(r, "created"));
	snprintf(buf, sizeof(buf), "%s %s", spp_cell_str(r, "tool.name") ? spp_cell_str(r, "tool.name") : "spprof",
		 spp_cell_str(r, "tool.version") ? spp_cell_str(r, "tool.version") : "");
	fact(f, "tool", buf);
	fputs("</table></div>\n", f);
}

static void card(FILE *f, const char *key, const char *value, const char *detail)
{
	fputs("<div class=\"card\"><div class=\"k\">", f);
	spp_html_escape(f, key);
	fputs("</div><div class=\"v\">", f);
	spp_html_escape(f, value);
	fputs("</div><div class=\"d\">", f);
	spp_html_escape(f, detail);
	fputs("</div></div>\n", f);
}

/* What to deploy, measured: the model under each layer's recommendation (summary.projection). */
static void card_deploy(struct spp_html *h)
{
	char v[64], line[1024];
	double x;

	if (spp_cell_deploy_line(h->report, line, sizeof(line))) {
		card(h->f, "measured", "no runs", "static report: no kernel was timed");
		return;
	}
	spp_html_fmt_ratio(spp_cell_num(h->report, "summary.projection.speedup", &x) ? x : 1, v, sizeof(v));
	card(h->f, "deploy", v, line);
}

/* The layers against the whole model (summary.whole_model): their FLOP share, the line as detail. */
static void card_whole_model(struct spp_html *h)
{
	char v[64], line[1024];
	double x;

	if (spp_cell_whole_model_line(h->report, line, sizeof(line)))
		return;
	spp_html_fmt_pct(spp_cell_num(h->report, "summary.whole_model.flops_share", &x) ? x : NAN, v,
			 sizeof(v));
	card(h->f, "whole model", v, line);
}

static void summary_cards(struct spp_html *h)
{
	const cJSON *s = spp_cell_get(h->report, "summary");
	const char *best = NULL;
	double v, w, best_ratio = 0;
	char a[64], b[64], d[160];

	fputs("<div class=\"cards\">\n", h->f);
	snprintf(a, sizeof(a), "%d", h->nlayers);
	snprintf(d, sizeof(d), "GEMM layers in %s",
		 spp_cell_str(h->report, "model.format") ? spp_cell_str(h->report, "model.format") : "the model");
	card(h->f, "layers", a, d);
	spp_html_fmt_pct(spp_cell_num(s, "gemm_sparsity", &v) ? v : NAN, a, sizeof(a));
	if (spp_cell_num(s, "gemm_nnz", &v) && spp_cell_num(s, "gemm_params", &w)) {
		spp_cell_count(v, "", b, sizeof(b));
		snprintf(d, sizeof(d), "%s non-zero weights in the layers", b);
	} else {
		snprintf(d, sizeof(d), "of the layers' weights are zero");
	}
	card(h->f, "GEMM sparsity", a, d);
	spp_html_fmt_ratio(spp_cell_num(s, "flops.theoretical_speedup", &v) ? v : NAN, a, sizeof(a));
	card(h->f, "theoretical speedup", a, "dense FLOPs over sparse FLOPs, all layers");
	best = spp_cell_str(s, "best_storage.format"); /* derive.c's choice */
	if (best && spp_cell_num(s, "best_storage.ratio", &best_ratio)) {
		spp_html_fmt_ratio(best_ratio, a, sizeof(a));
		snprintf(d, sizeof(d), "%s: dense bytes over its bytes, every layer", best);
		card(h->f, "smallest storage", a, d);
	} else {
		card(h->f, "smallest storage", "\xe2\x80\x94", "no format holds every layer");
	}
	card_deploy(h);
	card_whole_model(h);
	fputs("</div>\n", h->f);
}

static void warnings(FILE *f, const cJSON *r)
{
	const cJSON *w;

	if (cJSON_GetArraySize(spp_cell_get(r, "warnings")) == 0)
		return;
	fputs("<section id=\"warnings\"><h2>Warnings</h2><ul class=\"warn\">\n", f);
	cJSON_ArrayForEach(w, spp_cell_get(r, "warnings")) {
		if (!spp_cell_warning_text(w))
			continue;
		fputs("<li>", f);
		spp_html_escape(f, spp_cell_warning_text(w));
		fputs("</li>\n", f);
	}
	fputs("</ul></section>\n", f);
}

/* The layers' notes (activations, diagnosis): the text report's lines, one item each. */
static void notes(FILE *f, const cJSON *r)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	spp_text_write_notes(r, m, "", "");
	if (fclose(m) == 0 && len > 0) {
		fputs("<section id=\"notes\"><h2>Layer notes: activations and diagnosis</h2><ul>\n", f);
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			fputs("<li>", f);
			spp_html_escape(f, line);
			fputs("</li>\n", f);
		}
		fputs("</ul></section>\n", f);
	}
	free(buf);
}

static int any_ok_run(const cJSON *layers)
{
	const cJSON *l, *run;

	cJSON_ArrayForEach(l, layers)
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs"))
			if (spp_html_run_ok(run))
				return 1;
	return 0;
}

static void head(FILE *f, const cJSON *r, int nsweep)
{
	const char *path = spp_cell_str(r, "model.path"), *base;

	base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"spprof\">\n<title>spprof: ", f);
	spp_html_escape(f, base ? base : "report");
	fprintf(f, "</title>\n<script>%s</script>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n",
		spp_html_js_errors, spp_html_css);
	fputs("<header><h1>", f);
	spp_html_escape(f, base ? base : "spprof report");
	fputs("</h1><p class=\"sub\">", f);
	spp_html_escape(f, path);
	if (spp_cell_str(r, "created")) {
		fputs(" \xc2\xb7 ", f);
		spp_html_escape(f, spp_cell_str(r, "created"));
	}
	fputs("</p></header>\n<nav><a href=\"#summary\">Summary</a><a href=\"#sparsity\">Sparsity</a>"
	      "<a href=\"#storage\">Storage</a><a href=\"#speedup\">Speedup</a>"
	      "<a href=\"#breakeven\">Breakeven</a>", f);
	if (nsweep)
		fputs("<a href=\"#nsweep\">Against N</a>", f);
	fputs("<a href=\"#roofline\">Roofline</a><a href=\"#cache\">Cache</a>"
	      "<a href=\"#layers\">Layers</a></nav>\n", f);
}

/* Whether some layer has an N sweep (its section and its link in the nav). */
static int any_n_sweep(const cJSON *layers)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, layers)
		if (spp_html_has_nsweep(l))
			return 1;
	return 0;
}

int spp_report_write_html(const cJSON *report, FILE *f, struct spp_error *err)
{
	struct spp_html h = {
		.f = f,
		.report = report,
		.layers = spp_cell_get(report, "layers"),
	};

	if (!cJSON_IsArray(h.layers))
		h.layers = NULL;
	h.nlayers = cJSON_GetArraySize(h.layers);
	h.has_runs = any_ok_run(h.layers);
	head(f, report, any_n_sweep(h.layers));
	spp_html_section(f, "summary", "Summary", NULL);
	summary_cards(&h);
	fputs("<div class=\"facts\" style=\"margin-top:10px\">\n", f);
	facts_model(f, spp_cell_get(report, "model"));
	facts_machine(f, report);
	facts_settings(f, report);
	fputs("</div>\n</section>\n", f);
	warnings(f, report);
	spp_html_sparsity(&h);
	spp_html_storage(&h);
	spp_html_speedup(&h);
	spp_html_breakeven(&h);
	spp_html_nsweep(&h);
	spp_html_epilogue(&h);
	spp_html_roofline(&h);
	spp_html_cache(&h);
	spp_html_table(&h);
	notes(f, report);
	fputs("<footer>Written by spprof from a spprof.report/1 tree; every chart is drawn from "
	      "the figures in this file. Hover a bar or point for its figures.</footer>\n", f);
	fprintf(f, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", spp_html_js_table);
	if (h.nomem)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the HTML report");
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the HTML report: %s",
				     strerror(errno ? errno : EIO));
	return 0;
}
