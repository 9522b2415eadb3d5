/*
 * What to deploy, as every human format says it: per layer from its
 * recommendation (profiler/recommend.c chose it), for the model from
 * summary.projection (profiler/derive.c counted it). Only printing here.
 */
#include "reports/cells.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/safe_text.h"

void spp_cell_n_text(const cJSON *report, char *buf, size_t n)
{
	const cJSON *sn = spp_cell_path(report, "summary.n");
	double opt = NAN, lo, hi, graph, layers = 0;
	char range[64];

	spp_cell_num(report, "settings.n", &opt);
	spp_cell_num(report, "summary.layers", &layers);
	if (!spp_cell_num(sn, "from_model", &graph) || graph == 0 || !spp_cell_num(sn, "min", &lo) ||
	    !spp_cell_num(sn, "max", &hi)) {
		if (isnan(opt))
			snprintf(buf, n, "%s", "\xe2\x80\x94"); /* em dash: unknown */
		else
			snprintf(buf, n, "%.0f", opt);
		return;
	}
	if (lo == hi)
		snprintf(range, sizeof(range), "%.0f", lo);
	else
		snprintf(range, sizeof(range), "%.0f to %.0f", lo, hi);
	if (graph >= layers || isnan(opt))
		snprintf(buf, n, "%s, from the graph", range);
	else
		snprintf(buf, n, "%s (the graph's on %.0f layer%s, %.0f on %.0f)", range, graph,
			 graph == 1 ? "" : "s", opt, layers - graph);
}

void spp_cell_time(double ns, char *buf, size_t n)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	int u = 0;

	while (u < 3 && fabs(ns) >= 1000) {
		ns /= 1000;
		u++;
	}
	snprintf(buf, n, fabs(ns) < 10 ? "%.2f %s" : fabs(ns) < 100 ? "%.1f %s" : "%.0f %s", ns, unit[u]);
}

/* "csr", or "cuda/csr" off the cpu. */
static void deploy_name(const char *backend, const char *format, char *buf, size_t n)
{
	int other = backend && strcmp(backend, "cpu") != 0 && strcmp(format, "dense") != 0;

	snprintf(buf, n, "%s%s%s", other ? backend : "", other ? "/" : "", format);
}

int spp_cell_deploy(const cJSON *layer, char *fmt, size_t nf, char *sp, size_t ns)
{
	const cJSON *rec = spp_cell_get(layer, "recommendation"), *r;
	const char *format = spp_cell_str(rec, "format"), *backend = spp_cell_str(rec, "backend");
	double v, lo, hi;

	if (nf)
		fmt[0] = '\0';
	if (ns)
		sp[0] = '\0';
	if (!format)
		return -1;
	deploy_name(backend, format, fmt, nf);
	if (!spp_cell_num(rec, "speedup", &v))
		return 0;
	snprintf(sp, ns, fabs(v) < 10 ? "%.2fx" : fabs(v) < 100 ? "%.1fx" : "%.0fx", v);
	/* the interval of the run it names, where its rounds gave one */
	cJSON_ArrayForEach(r, spp_cell_get(layer, "runs")) {
		const char *f = spp_cell_str(r, "format"), *b = spp_cell_str(r, "backend");

		if (f && strcmp(f, format) == 0 && (!backend || !b || strcmp(b, backend) == 0) &&
		    strcmp(format, "dense") != 0 && spp_cell_num(r, "speedup_ci_low", &lo) &&
		    spp_cell_num(r, "speedup_ci_high", &hi)) {
			size_t len = strlen(sp);

			snprintf(sp + len, ns - len, " (%.2f\u2013%.2f)", lo, hi);
			break;
		}
	}
	return 0;
}

int spp_cell_deploy_line(const cJSON *report, char *buf, size_t n)
{
	const cJSON *p = spp_cell_path(report, "summary.projection"), *e;
	struct spp_buf t;
	double v, td, tr, bd, br, layers = 0, dense = 0;
	int k = 0;

	spp_buf_init(&t, buf, n);
	if (!cJSON_IsObject(p) || !cJSON_IsArray(spp_cell_get(p, "deploy")))
		return -1;
	cJSON_ArrayForEach(e, spp_cell_get(p, "deploy")) {
		const char *f = spp_cell_str(e, "format");
		char name[48];

		if (!f || !spp_cell_num(e, "layers", &v))
			continue;
		layers += v;
		dense += strcmp(f, "dense") == 0 ? v : 0;
		deploy_name(spp_cell_str(e, "backend"), f, name, sizeof(name));
		spp_buf_add(&t, "%s%s on %.0f layer%s", k++ ? ", " : "", name, v, v == 1 ? "" : "s");
	}
	if (layers == 0)
		return -1;
	if (dense == layers) {
		spp_buf_init(&t, buf, n);
		spp_buf_add(&t, "dense on every layer: no format beats the dense baseline clear of the noise");
		return 0;
	}
	if (spp_cell_num(p, "speedup", &v) && spp_cell_num(p, "dense_time_ns", &td) &&
	    spp_cell_num(p, "recommended_time_ns", &tr)) {
		char a[32], b[32];

		spp_cell_time(td, a, sizeof(a));
		spp_cell_time(tr, b, sizeof(b));
		spp_buf_add(&t, ": the %.0f layer%s %.2fx as fast as all dense (%s \u2192 %s)", layers,
			    layers == 1 ? "" : "s", v, a, b);
	}
	if (spp_cell_num(p, "dense_bytes", &bd) && spp_cell_num(p, "recommended_bytes", &br)) {
		char a[32], b[32];

		spp_cell_bytes(bd, a, sizeof(a));
		spp_cell_bytes(br, b, sizeof(b));
		spp_buf_add(&t, ", weights %s \u2192 %s", a, b);
	}
	return 0;
}

/* A share for a sentence: "87%", "4.2%" under 10 %, "0.03%" under 0.1 %. */
static void share(double v, char *buf, size_t n)
{
	snprintf(buf, n, v >= 0.1 ? "%.0f%%" : v >= 0.001 ? "%.1f%%" : "%.2g%%", 100 * v);
}

int spp_cell_whole_model_line(const cJSON *report, char *buf, size_t n)
{
	const cJSON *w = spp_cell_path(report, "summary.whole_model");
	struct spp_buf t;
	char a[32], b[32], c[32];
	double fs, bs, pf, f, s, bound, ops;

	spp_buf_init(&t, buf, n);
	if (!cJSON_IsObject(w))
		return -1;
	if (spp_cell_str(w, "reason")) {
		spp_buf_add(&t, "%s", spp_cell_str(w, "reason"));
		return 0;
	}
	if (!spp_cell_num(w, "flops_share", &fs) || !spp_cell_num(w, "profiled_flops", &pf) ||
	    !spp_cell_num(w, "flops", &f)) {
		spp_buf_add(&t, "the model's FLOPs are not known");
		return 0;
	}
	share(fs, a, sizeof(a));
	spp_cell_count(pf, "", b, sizeof(b));
	spp_cell_count(f, "", c, sizeof(c));
	spp_buf_add(&t, "the profiled layers hold %s of the FLOPs (%s of %s)", a, b, c);
	if (spp_cell_num(w, "weight_bytes_share", &bs)) {
		share(bs, a, sizeof(a));
		spp_buf_add(&t, " and %s of the weight bytes", a);
	}
	if (spp_cell_num(w, "deploy_speedup", &s) && spp_cell_num(w, "deploy_speedup_bound", &bound))
		spp_buf_add(&t, "; the deploy projection %.2fx on them is \u2264 %.2fx on the model "
			    "(FLOP share)", s, bound);
	else if (spp_cell_num(report, "summary.flops.theoretical_speedup", &s) &&
		 spp_cell_num(w, "theoretical_speedup", &bound))
		spp_buf_add(&t, "; their theoretical %.2fx is \u2264 %.2fx on the model (FLOP share)",
			    s, bound);
	if (spp_cell_num(w, "ops_not_counted", &ops) && ops > 0)
		spp_buf_add(&t, "; %.0f op%s not counted (%s), so the FLOP share is an upper bound", ops,
			    ops == 1 ? "" : "s",
			    spp_cell_str(w, "not_counted") ? spp_cell_str(w, "not_counted") : "");
	return 0;
}
