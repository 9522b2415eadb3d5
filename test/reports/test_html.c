/*
 * The HTML report, read as text: self-contained (nothing fetched, no
 * script but its own two), one table row per layer in file order, each
 * chart present when its data is and replaced by its note when not, the
 * figures in the charts matching the JSON they came from (counted and
 * computed here from the JSON, not from the writer), every string escaped.
 * The SVG primitives are tested directly at the end. The same pages in a
 * real browser: test_html_browser.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "reports/report.h"
#include "reports/cells.h"
#include "reports/svg.h"
#include "test/harness.h"
#include "test/reports/html_fixture.h"

static struct html_fixture fx;
static char *page[HC_COUNT];
static cJSON *json[HC_COUNT];

static int setup(void **state)
{
	(void)state;
	if (html_fixture_setup(&fx))
		return -1;
	for (int c = 0; c < HC_COUNT; c++) {
		page[c] = harness_slurp(fx.html[c], NULL);
		json[c] = html_fixture_load(fx.json[c]);
		if (!page[c] || !json[c])
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int c = 0; c < HC_COUNT; c++) {
		free(page[c]);
		cJSON_Delete(json[c]);
	}
	html_fixture_teardown(&fx);
	return 0;
}

/* The text of page from the element with id to the end of its chart (next </svg> or </section>). */
static char *part(const char *html, const char *id, const char *end)
{
	char key[128];
	const char *a, *b;
	char *s;

	snprintf(key, sizeof(key), "id=\"%s\"", id);
	a = strstr(html, key);
	if (!a)
		return NULL;
	b = strstr(a, end);
	assert_non_null(b);
	s = strndup(a, (size_t)(b - a));
	assert_non_null(s);
	return s;
}

static void escape(const char *s, char *out, size_t n)
{
	size_t u = 0;

	for (; *s && u + 7 < n; s++) {
		const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
				*s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;

		if (r)
			u += (size_t)snprintf(out + u, n - u, "%s", r);
		else
			out[u++] = *s;
	}
	out[u] = '\0';
}

static int utf8_valid(const unsigned char *s)
{
	while (*s) {
		int len = *s < 0x80 ? 1 : (*s >> 5) == 6 ? 2 : (*s >> 4) == 14 ? 3 : (*s >> 3) == 30 ? 4 : 0;

		if (!len)
			return 0;
		for (int i = 1; i < len; i++)
			if ((s[i] & 0xc0) != 0x80)
				return 0;
		s += len;
	}
	return 1;
}

static const cJSON *layers(int c)
{
	return cJSON_GetObjectItemCaseSensitive(json[c], "layers");
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int run_ok(const cJSON *run)
{
	return str(run, "status") && strcmp(str(run, "status"), "ok") == 0;
}

static void test_self_contained(void **state)
{
	static const char *const banned[] = {"http:", "https:", " src=", "<link", "url(", "@import",
					     "fetch(", "XMLHttpRequest", "<iframe", "<img", "WebSocket"};

	(void)state;
	for (int c = 0; c < HC_COUNT; c++) {
		const char *p = page[c];

		assert_true(strncmp(p, "<!DOCTYPE html>\n", 16) == 0);
		assert_non_null(strstr(p, "</html>\n"));
		assert_string_equal(p + strlen(p) - 8, "</html>\n");
		assert_non_null(strstr(p, "Content-Security-Policy\" content=\"default-src 'none'"));
		for (size_t b = 0; b < sizeof(banned) / sizeof(banned[0]); b++)
			if (strstr(p, banned[b]))
				fail_msg("%s: page holds '%s'", html_case_name[c], banned[b]);
		/* the error recorder and the table script; a layer name adds none */
		assert_int_equal(html_count(p, "<script"), 2);
		assert_true(utf8_valid((const unsigned char *)p));
	}
}

static void test_rows_in_order(void **state)
{
	(void)state;
	for (int c = 0; c < HC_COUNT; c++) {
		const cJSON *l;
		const char *at = strstr(page[c], "id=\"layer-table\"");
		int n = cJSON_GetArraySize(layers(c));

		assert_true(n == 12 || n == 300);
		assert_int_equal(html_count(page[c], "<tr class=\"layer\""), n);
		assert_non_null(at);
		cJSON_ArrayForEach(l, layers(c)) {
			char want[600], esc[512];

			if (c == HC_ODD && !utf8_valid((const unsigned char *)str(l, "name")))
				continue;
			escape(str(l, "name"), esc, sizeof(esc));
			snprintf(want, sizeof(want), "<td class=\"name\" title=\"%s\">", esc);
			at = strstr(at, want);
			if (!at)
				fail_msg("%s: row of '%s' missing or out of order", html_case_name[c], esc);
		}
	}
}

static void test_static_notes(void **state)
{
	(void)state;
	for (int c = HC_S12; c <= HC_S300; c += 2) {
		const char *p = page[c];

		assert_non_null(strstr(p, "id=\"chart-sparsity\""));
		assert_non_null(strstr(p, "id=\"chart-storage\""));
		/* speedup, roofline and cache each say why they are missing */
		assert_int_equal(html_count(p, "no kernel runs in this report (a static analysis)"), 3);
		assert_null(strstr(p, "id=\"chart-speedup\""));
		assert_null(strstr(p, "id=\"chart-roofline\""));
		assert_null(strstr(p, "id=\"chart-cache\""));
		assert_non_null(strstr(p, "no breakeven data in this report"));
		/* no run columns in a static table */
		assert_null(strstr(p, ">fastest format</th>"));
	}
	/* the long model scrolls (sparsity rows and table), the short one does not */
	assert_int_equal(html_count(page[HC_S300], "<div class=\"scroll\""), 2);
	assert_int_equal(html_count(page[HC_S12], "<div class=\"scroll\""), 0);
}

/* Speedup points, roofline points and efficiency rows, counted from the JSON. */
static void expect_run_charts(int c)
{
	const cJSON *l, *run;
	const char *fmts[32];
	int nf = 0, speed = 0, roof = 0;
	char *sp = part(page[c], "chart-speedup", "</svg>");
	char *rf = part(page[c], "chart-roofline", "</svg>");
	char *ef = part(page[c], "chart-efficiency", "</svg>");

	assert_non_null(sp);
	assert_non_null(rf);
	assert_non_null(ef);
	cJSON_ArrayForEach(l, layers(c)) {
		double th = num(cJSON_GetObjectItemCaseSensitive(l, "flops"), "theoretical_speedup");

		cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(l, "runs")) {
			const char *f = str(run, "format");
			int seen = 0;

			if (!run_ok(run))
				continue;
			if (num(run, "arithmetic_intensity") > 0 && num(run, "gflops") > 0)
				roof++;
			if (strcmp(f, "dense") == 0)
				continue;
			if (th > 0 && num(run, "speedup") > 0)
				speed++;
			for (int i = 0; i < nf; i++)
				seen |= strcmp(fmts[i], f) == 0;
			if (!seen && isfinite(num(run, "efficiency")))
				fmts[nf++] = f;
		}
	}
	assert_true(speed > 0);
	assert_int_equal(html_count(sp, "<circle class=\"pt\""), speed);
	assert_int_equal(html_count(rf, "<circle class=\"pt\""), roof);
	assert_int_equal(html_count(ef, "<title>"), nf);
	free(sp);
	free(rf);
	free(ef);
}

static void test_run_charts(void **state)
{
	(void)state;
	for (int c = HC_R12; c <= HC_R300; c += 2) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(json[c], "machine");
		int calibrated = num(m, "peak_gflops") > 0 && num(m, "peak_bw_gbs") > 0;

		expect_run_charts(c);
		assert_non_null(strstr(page[c], ">fastest format</th>"));
		assert_non_null(strstr(page[c], "no breakeven data in this report"));
		/* analyze counts with the cache simulator here (no PMU): its chart is drawn */
		assert_non_null(strstr(page[c], "id=\"chart-cache\""));
		assert_null(strstr(page[c], "no cache figures in this report"));
		assert_int_equal(strstr(page[c], "no calibrated peaks in this report") != NULL, !calibrated);
	}
	expect_run_charts(HC_FULL);
	expect_run_charts(HC_FULL300);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void test_full(void **state)
{
	const char *p = page[HC_FULL];
	char *be = part(p, "breakeven", "</section>"), *ov = part(p, "chart-breakeven-overview", "</svg>");
	char *cache = part(p, "cache", "</section>"), want[256];
	const cJSON *l, *run;
	double rates[64];
	int nrates = 0, sim = 0, n = cJSON_GetArraySize(layers(HC_FULL));

	(void)state;
	assert_non_null(be);
	assert_non_null(ov);
	assert_non_null(cache);
	assert_null(strstr(p, "no breakeven data"));
	assert_null(strstr(p, "no calibrated peaks"));
	assert_null(strstr(p, "no cache figures"));
	/* one panel per layer (12, all shown), two points per layer in the overview */
	assert_int_equal(html_count(be, "<div class=\"panel\"><h3>"), n);
	assert_null(strstr(be, "curves of the"));
	assert_int_equal(html_count(ov, "<circle class=\"pt\""), 2 * n);
	snprintf(want, sizeof(want), "%d of %d layer \xc3\x97 format pairs never beat dense", n, 3 * n);
	assert_non_null(strstr(ov, want));
	/* layer 0: sparsity 0.5 (2:4), csr breakeven 0.4: margin +10 points, the widest */
	assert_non_null(strstr(p, "cpu/csr 40.0% (+10.0)"));
	assert_non_null(strstr(be, "cpu/csr: breakeven 40.0%, margin <span class=\"good\">+10.0 points</span>"));
	assert_non_null(strstr(be, "cpu/coo: never beats dense (never beats dense in [0, 0.999])"));
	assert_int_equal(html_count(p, ">cpu/csr 1.50\xc3\x97</td>"), n);
	/* roofs from the calibrated peaks: one per memory level, each with its ridge */
	assert_non_null(strstr(p, "peak 200.0 GFLOP/s"));
	{
		char *rf = part(p, "chart-roofline", "</svg>");

		assert_int_equal(html_count(rf, "<g class=\"roof\">"), 4);
		assert_non_null(strstr(rf, ">DRAM 20.0 GB/s, ridge 10 FLOP/B</text>"));
		assert_non_null(strstr(rf, ">LLC 50.0 GB/s, ridge 4 FLOP/B</text>"));
		free(rf);
	}
	/* cache: every run has a sim block; csr's L1D median computed here */
	cJSON_ArrayForEach(l, layers(HC_FULL))
		cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(l, "runs")) {
			sim++;
			if (run_ok(run) && strcmp(str(run, "format"), "csr") == 0)
				rates[nrates++] = num(cJSON_GetObjectItemCaseSensitive(run, "cache"), "l1d_miss_rate");
		}
	snprintf(want, sizeof(want), "source: sim (%d runs)", sim);
	assert_non_null(strstr(cache, want));
	assert_true(nrates > 0);
	qsort(rates, (size_t)nrates, sizeof(double), cmp_double);
	snprintf(want, sizeof(want), "csr L1D miss rate: median %.1f%% over %d runs",
		 100 * (nrates % 2 ? rates[nrates / 2] : (rates[nrates / 2 - 1] + rates[nrates / 2]) / 2),
		 nrates);
	assert_non_null(strstr(cache, want));
	/* the hostile name is text everywhere */
	assert_null(strstr(p, "<script>alert"));
	assert_true(html_count(p, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;x") >= 4);
	free(be);
	free(ov);
	free(cache);
}

struct weighted {
	const char *name;
	double w;
	int i;
};

static int heavier(const void *a, const void *b)
{
	const struct weighted *x = a, *y = b;

	return x->w != y->w ? (x->w < y->w ? 1 : -1) : x->i - y->i;
}

/* 300 layers: the curves of the 12 with the largest dense time, named here from the JSON. */
static void test_full300_top(void **state)
{
	static struct weighted w[300];
	char *be = part(page[HC_FULL300], "breakeven", "</section>");
	const cJSON *l, *run;
	int n = 0;

	(void)state;
	assert_non_null(be);
	cJSON_ArrayForEach(l, layers(HC_FULL300)) {
		w[n].name = str(l, "name");
		w[n].w = NAN;
		w[n].i = n;
		cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(l, "runs"))
			if (run_ok(run) && strcmp(str(run, "format"), "dense") == 0)
				w[n].w = num(cJSON_GetObjectItemCaseSensitive(run, "time_ns"), "median");
		assert_true(w[n].w > 0);
		n++;
	}
	assert_int_equal(n, 300);
	qsort(w, 300, sizeof(w[0]), heavier);
	assert_int_equal(html_count(be, "<div class=\"panel\"><h3>"), 12);
	assert_non_null(strstr(be, "curves of the 12 heaviest of 300 layers"));
	for (int i = 0; i < 12; i++) {
		char want[600], esc[512];

		escape(w[i].name, esc, sizeof(esc));
		snprintf(want, sizeof(want), "<div class=\"panel\"><h3>%s</h3>", esc);
		if (!strstr(be, want))
			fail_msg("layer '%s' (rank %d) has no panel", w[i].name, i + 1);
	}
	/* the overview keeps every layer: 2 points each */
	free(be);
	be = part(page[HC_FULL300], "chart-breakeven-overview", "</svg>");
	assert_int_equal(html_count(be, "<circle class=\"pt\""), 600);
	free(be);
}

static void test_odd(void **state)
{
	const char *p = page[HC_ODD];

	(void)state;
	assert_non_null(strstr(p, "no breakeven data in this report"));
	assert_non_null(strstr(p, "no storage figures in this report"));
	assert_non_null(strstr(p, "no calibrated peaks in this report"));
	assert_non_null(strstr(p, "no cache figures in this report"));
	/* bad bytes are shown escaped: \xff, \x01 and the two of a cut sequence */
	assert_non_null(strstr(p, "bad\\xff\\x01name\\xe2\\x82"));
	/* layer 1 lost its sparsity: unknown in the chart and the table */
	assert_non_null(strstr(p, ">sparsity unknown</text>"));
	/* the charts that have data still draw */
	assert_non_null(strstr(p, "id=\"chart-speedup\""));
	assert_non_null(strstr(p, "id=\"chart-sparsity\""));
}

static void test_format_choice(void **state)
{
	char *dir = harness_tmpdir(), *a = harness_join(dir, "a.HTM"), *b = harness_join(dir, "b.txt");
	char *m = harness_join(dir, "m.safetensors"), *text;
	const char *synth[] = {"synth", "-o", m, "--layer", "fc=16x16:nm2_4:0.5", NULL};
	const char *an[] = {"analyze", m, "--static", "--quiet", "-o", a, NULL};
	const char *an_out[] = {"analyze", m, "--static", "--format", "html", NULL};
	const char *rep[] = {"report", fx.json[HC_S12], "--format", "html", "-o", b, NULL};
	struct harness_run r;

	(void)state;
	assert_int_equal(harness_spprof(&r, synth), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	/* -o with an .HTM extension picks HTML */
	assert_int_equal(harness_spprof(&r, an), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(a, NULL);
	assert_non_null(text);
	assert_true(strncmp(text, "<!DOCTYPE html>", 15) == 0);
	assert_int_equal(html_count(text, "<tr class=\"layer\""), 1);
	free(text);
	/* --format html to stdout */
	assert_int_equal(harness_spprof(&r, an_out), 0);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.out, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(r.out, "<td class=\"name\" title=\"fc\">fc</td>"));
	harness_run_free(&r);
	/* --format wins over the extension */
	assert_int_equal(harness_spprof(&r, rep), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(b, NULL);
	assert_non_null(text);
	assert_int_equal(html_count(text, "<tr class=\"layer\""), 12);
	free(text);
	free(a);
	free(b);
	free(m);
	harness_rmtree(dir);
}

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	spp_html_escape(f, s);
	fclose(f);
	return buf;
}

static void test_svg_primitives(void **state)
{
	struct spp_svg_scale s;
	double t[16];
	char buf[64], *e;
	int n;

	(void)state;
	e = escaped("a<b>&\"c'\x7f\tz\xc3\xa9\xed\xa0\x80\xe2\x80\xae\xc2\x9b");
	/* é stays, a surrogate (ED A0 80) is three bad bytes, U+202E and U+009B escaped */
	assert_string_equal(e, "a&lt;b&gt;&amp;&quot;c&#39;\\x7f\tz\xc3\xa9"
			       "\\xed\\xa0\\x80\\u202e\\x9b");
	free(e);
	/* log: whole decades around the data, labelled decades */
	spp_svg_scale_init(&s, 0.03, 40, 1, 0, 400);
	assert_true(fabs(s.lo - 0.01) < 1e-12 && fabs(s.hi - 100) < 1e-9);
	n = spp_svg_ticks(&s, t, 16);
	assert_int_equal(n, 5);
	assert_true(fabs(t[2] - 1) < 1e-12);
	assert_true(fabs(spp_svg_map(&s, 1) - 200) < 1e-9);
	/* one decade gets 2 and 5 between */
	spp_svg_scale_init(&s, 1.2, 7, 1, 0, 100);
	n = spp_svg_ticks(&s, t, 16);
	assert_int_equal(n, 4);
	assert_true(t[1] == 2 && t[2] == 5 && t[3] == 10);
	/* linear: nice step 0.2 over 0..0.93 */
	spp_svg_scale_init(&s, 0, 0.93, 0, 0, 500);
	assert_true(fabs(s.hi - 1) < 1e-12);
	n = spp_svg_ticks(&s, t, 16);
	assert_int_equal(n, 6);
	assert_true(fabs(t[3] - 0.6) < 1e-12);
	/* clamped, and y runs upwards */
	spp_svg_scale_init(&s, 0, 1, 0, 300, 100);
	assert_true(spp_svg_map(&s, 2) == 100 && spp_svg_map(&s, -1) == 300 && spp_svg_map(&s, 0.5) == 200);
	/* a degenerate range is widened, never divided by zero */
	spp_svg_scale_init(&s, 5, 5, 0, 0, 10);
	assert_true(s.lo < 5 && s.hi > 5);
	spp_svg_tick_label(2000, 0, buf, sizeof(buf));
	assert_string_equal(buf, "2k");
	spp_svg_tick_label(0.25, 1, buf, sizeof(buf));
	assert_string_equal(buf, "25%");
	/* the chart labels' elision keeps both ends, cut at dots, and counts code points */
	spp_names_elide("encoder.layer.0.attention.output.dense.weight", 20, buf, sizeof(buf));
	assert_string_equal(buf, "encoder\xe2\x80\xa6" "dense.weight");
	spp_names_elide("\xc3\xa9\xc3\xa9\xc3\xa9", 3, buf, sizeof(buf));
	assert_string_equal(buf, "\xc3\xa9\xc3\xa9\xc3\xa9");
}

/* The HTML page of a report given as JSON text (malloc'd). */
static char *render_doc(const char *doc)
{
	cJSON *r = cJSON_Parse(doc);
	struct spp_error err = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(r);
	assert_non_null(f);
	assert_int_equal(spp_report_write_html(r, f, &err), 0);
	assert_int_equal(fclose(f), 0);
	cJSON_Delete(r);
	return buf;
}

/*
 * Speedup against N: a report whose one layer has an N sweep gets the
 * section (and its link), one panel, a point per N, a triangle per
 * crossover and the caption from the JSON; one without (every fixture) has
 * neither.
 */
static void test_nsweep(void **state)
{
	static const char *doc =
		"{\"schema\": \"spprof.report/1\", \"layers\": [{\"name\": \"fc1\", \"n_sweep\": {"
		"\"cpu/csr\": {\"wins\": \"16-64\", \"crossings\": [{\"n\": 11.3, \"faster\": \"above\"}],"
		" \"reason\": \"\", \"curve\": [{\"n\": 1, \"speedup\": 0.5}, {\"n\": 4, \"speedup\": 0.8},"
		" {\"n\": 16, \"speedup\": 1.2}, {\"n\": 64, \"speedup\": 2.5}]},"
		"\"cpu/nm2_4\": {\"wins\": \"\", \"crossings\": [], \"reason\": \"\", \"curve\": ["
		"{\"n\": 1, \"speedup\": 0.9}, {\"n\": 4, \"speedup\": 0.7}, {\"n\": 16, \"speedup\": null},"
		" {\"n\": 64, \"speedup\": 0.6}]}}}]}";
	char *buf = render_doc(doc), *sec;

	(void)state;
	assert_non_null(strstr(buf, "<a href=\"#nsweep\">Against N</a>"));
	sec = part(buf, "nsweep", "</section>");
	assert_non_null(sec);
	assert_int_equal(html_count(sec, "<div class=\"panel\"><h3>"), 1);
	/* 4 csr points, 3 nm2_4 points (the null speedup is not drawn) */
	assert_int_equal(html_count(sec, "<circle class=\"pt\""), 7);
	assert_int_equal(html_count(sec, "l-5 -8 h10 z"), 1);
	assert_non_null(strstr(sec, "cpu/csr: faster than dense at N = 16-64; crossover N 11.3 (faster above)"));
	assert_non_null(strstr(sec, "cpu/nm2_4: never faster than dense here"));
	free(sec);
	free(buf);
	for (int c = 0; c < HC_COUNT; c++) {
		assert_null(strstr(page[c], "id=\"nsweep\""));
		assert_null(strstr(page[c], "#nsweep"));
		assert_null(strstr(page[c], "id=\"epilogue\""));
	}
}

/* --epilogue: a table row per run with one, its medians and saving; none without. */
static void test_epilogue_table(void **state)
{
	static const char *doc =
		"{\"schema\": \"spprof.report/1\", \"layers\": [{\"name\": \"fc<1>\", \"runs\": ["
		"{\"format\": \"dense\", \"status\": \"ok\", \"epilogue\": null},"
		"{\"format\": \"csr\", \"status\": \"ok\", \"epilogue\": {\"kind\": \"bias_relu\", \"bias\": "
		"\"zeros\", \"status\": \"ok\", \"reason\": null, \"fused_time_ns\": {\"median\": 1500},"
		" \"unfused_time_ns\": {\"median\": 2000}, \"saving\": 0.25}},"
		"{\"format\": \"coo\", \"status\": \"ok\", \"epilogue\": {\"kind\": \"bias_relu\", \"bias\": "
		"\"zeros\", \"status\": \"failed\", \"reason\": \"fused: differs\", \"fused_time_ns\": null,"
		" \"unfused_time_ns\": null, \"saving\": null}}]}]}";
	char *buf = render_doc(doc), *sec;

	(void)state;
	sec = part(buf, "epilogue", "</section>");
	assert_non_null(sec);
	assert_int_equal(html_count(sec, "<tr><td>"), 2);
	assert_non_null(strstr(sec, "<td>fc&lt;1&gt;</td><td>csr</td><td>bias_relu</td><td>zeros</td>"));
	assert_non_null(strstr(sec, ">+25.0%</td>"));
	assert_non_null(strstr(sec, "<td>fused: differs</td>"));
	free(sec);
	free(buf);
}

int html_browser_main(void);

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_contained),
		cmocka_unit_test(test_rows_in_order),
		cmocka_unit_test(test_static_notes),
		cmocka_unit_test(test_run_charts),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_full300_top),
		cmocka_unit_test(test_odd),
		cmocka_unit_test(test_format_choice),
		cmocka_unit_test(test_nsweep),
		cmocka_unit_test(test_epilogue_table),
		cmocka_unit_test(test_svg_primitives),
	};

	if (argc > 1 && strcmp(argv[1], "--browser") == 0)
		return html_browser_main();
	return cmocka_run_group_tests(tests, setup, teardown);
}
