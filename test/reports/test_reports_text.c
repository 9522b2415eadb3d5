/*
 * Reports: the text and CSV writers rendering the hand-made analysis of
 * reports_fixture.c, read back independently (columns by display width,
 * CSV through libcsv).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/safe_text.h"
#include "test/harness.h"
#include "test/report_read.h"
#include "test/reports_fixture.h"
#include "reports/cells.h"

/* The line of text that contains needle, copied; fails when none. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *b, *e;

	if (!p)
		fail_msg("no line contains \"%s\" in:\n%s", needle, text);
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* Display column (code points) of needle within line. */
static int column_of(const char *line, const char *needle)
{
	const char *p = strstr(line, needle);
	int col = 0;

	assert_non_null(p);
	for (const char *q = line; q < p; q++)
		col += ((unsigned char)*q & 0xc0) != 0x80;
	return col;
}

static int display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Text with the ANSI colour sequences removed. */
static char *strip_ansi(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	while (*s) {
		if (*s == '\033' && s[1] == '[') {
			s += 2;
			while (*s && *s != 'm')
				s++;
			if (*s)
				s++;
			continue;
		}
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

void test_text(void **state)
{
	struct fixture fx;
	char *plain, *color, *stripped, *hdr, *row0, *row1, *row2, *tot;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	plain = render(r, SPP_REPORT_TEXT, 0);
	assert_null(strchr(plain, '\033'));
	assert_non_null(strstr(plain, "model     models/tiny.safetensors\n"));
	assert_non_null(strstr(plain, "format    safetensors, 1.21 KiB, 4 tensors, 3 GEMM layers\n"));
	assert_non_null(strstr(plain, "params    240, nnz 92, sparsity 61.67%\n"));
	assert_non_null(strstr(plain, "hash      0123456789ab (xxh3-128-tree-test)\n"));
	assert_non_null(strstr(plain, "settings  N 128, threads "));
	assert_non_null(strstr(plain, "warning: kernel runs are not built yet: static metrics only\n"));
	/* a warning longer than a table cell is printed whole (it was cut at 127 bytes, mid-word) */
	{
		static const char long_msg[] =
			"dense baseline: not checked against the roofline on 3 shapes: no calibration for 1 "
			"thread (run 'spprof calibrate'), and the machine has no PMU (virtualized), so its "
			"cache figures come from the simulator";
		char *was = fx.a.warnings[0].message, *text;

		fx.a.warnings[0].message = (char *)long_msg;
		cJSON_Delete(r);
		r = build(&fx);
		text = render(r, SPP_REPORT_TEXT, 0);
		assert_true(strlen(long_msg) > 200);
		assert_non_null(strstr(text, long_msg));
		free(text);
		fx.a.warnings[0].message = was;
		cJSON_Delete(r);
		r = build(&fx);
	}

	/* N from a graph: the header gives the layers' N, not the --n default none of them used */
	{
		char *text;

		for (int i = 0; i < 3; i++) {
			fx.layers[i].n = i == 0 ? 1 : 900;
			fx.layers[i].n_source = "model";
		}
		assert_int_equal(spp_analysis_derive(&fx.a, &(struct spp_error){0}), 0);
		cJSON_Delete(r);
		r = build(&fx);
		text = render(r, SPP_REPORT_TEXT, 0);
		assert_non_null(strstr(text, "settings  N 1 to 900, from the graph, threads "));
		free(text);
		fx.layers[2].n_source = "option", fx.layers[2].n = 128;
		assert_int_equal(spp_analysis_derive(&fx.a, &(struct spp_error){0}), 0);
		cJSON_Delete(r);
		r = build(&fx);
		text = render(r, SPP_REPORT_TEXT, 0);
		assert_non_null(strstr(text, "settings  N 1 to 900 (the graph's on 2 layers, 128 on 1), threads "));
		free(text);
		for (int i = 0; i < 3; i++) {
			fx.layers[i].n = 128;
			fx.layers[i].n_source = "option";
		}
		assert_int_equal(spp_analysis_derive(&fx.a, &(struct spp_error){0}), 0);
		cJSON_Delete(r);
		r = build(&fx);
	}

	hdr = line_with(plain, "sparsity  class");
	row0 = line_with(plain, "model.layers.0\xe2\x80\xa6q_proj.weight");
	row1 = line_with(plain, "model.layers.0.mlp.down_proj.weight");
	row2 = line_with(plain, "conv.weight");
	tot = line_with(plain, "total (3 layers)");
	/* layer 0: 2:4 sparse F32, best stored as nm2_4 (512 / 272) */
	assert_non_null(strstr(row0, " linear "));
	assert_non_null(strstr(row0, " 8x16 "));
	assert_non_null(strstr(row0, " 50.0% "));
	assert_non_null(strstr(row0, " nm "));
	assert_non_null(strstr(row0, " 1.00 "));
	assert_non_null(strstr(row0, " 32.8 KF "));
	assert_non_null(strstr(row0, " 2.00x "));
	assert_non_null(strstr(row0, " 0.93x "));
	assert_non_null(strstr(row0, " nm2_4 "));
	assert_non_null(strstr(row0, " 1.88x"));
	/* layer 1: dense and bitmask tie at 1.00x; the first listed wins */
	assert_non_null(strstr(row1, " BF16 "));
	assert_non_null(strstr(row1, " 37.5% "));
	assert_non_null(strstr(row1, " 1.60x "));
	assert_non_null(strstr(row1, " dense "));
	/* conv: its stored shape beside the GEMM one; no speedup for nnz 0 */
	assert_non_null(strstr(row2, " 4x18 (4x2x3x3) "));
	assert_non_null(strstr(row2, " 100.0% "));
	assert_non_null(strstr(row2, " 18.4 KF "));
	assert_non_null(strstr(row2, " \xe2\x80\x94 "));
	assert_non_null(strstr(row2, " 14.4x "));
	assert_non_null(strstr(row2, " bsr4 "));
	assert_non_null(strstr(row2, " 36.0x"));
	/* totals: 84 of 232 kept; 59392 / 21504 FLOPs; csr 864 / 708; the best
	 * format that holds every layer is bitmask, 864 / 404 */
	assert_non_null(strstr(tot, " 63.8% "));
	assert_non_null(strstr(tot, " 59.4 KF "));
	assert_non_null(strstr(tot, " 2.76x "));
	assert_non_null(strstr(tot, " 1.22x "));
	assert_non_null(strstr(tot, " bitmask "));
	assert_non_null(strstr(tot, " 2.14x"));
	/* aligned: text columns start together, figures end together */
	assert_int_equal(column_of(row0, "linear"), column_of(hdr, "op"));
	assert_int_equal(column_of(row2, "conv2d"), column_of(hdr, "op"));
	assert_int_equal(column_of(row0, "50.0%") + 5, column_of(hdr, "sparsity") + 8);
	assert_int_equal(column_of(row2, "100.0%") + 6, column_of(hdr, "sparsity") + 8);
	assert_int_equal(column_of(tot, "63.8%") + 5, column_of(hdr, "sparsity") + 8);
	assert_int_equal(display_width(row0), display_width(hdr));

	/* colour adds escape codes and nothing else */
	color = render(r, SPP_REPORT_TEXT, 1);
	assert_non_null(strstr(color, "\033[1m"));
	assert_non_null(strstr(color, "\033[32m"));
	stripped = strip_ansi(color);
	assert_string_equal(stripped, plain);

	free(plain), free(color), free(stripped);
	free(hdr), free(row0), free(row1), free(row2), free(tot);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

void test_text_sizes(void **state)
{
	struct fixture fx;
	char *text, *line, want[64];
	cJSON *r, *name;
	(void)state;

	fixture_init(&fx, 0);
	r = build(&fx);
	text = render(r, SPP_REPORT_TEXT, 0);
	assert_non_null(strstr(text, "no GEMM layers\n"));
	assert_null(strstr(text, "total"));
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);

	fixture_init(&fx, 300);
	r = build(&fx);
	/* a name with no dots is cut by width alone; control bytes are shown escaped */
	name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 7), "name");
	assert_non_null(cJSON_SetValuestring(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"));
	name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 8), "name");
	assert_non_null(cJSON_SetValuestring(name, "evil\033[31m.weight"));
	text = render(r, SPP_REPORT_TEXT, 0);
	assert_null(strchr(text, '\033'));
	assert_non_null(strstr(text, "evil\\x1b[31m.weight "));
	/* header 5 + blank, titles + rule, rows, rule + total, the 299 names
	 * shortened in full after a blank and a heading, the static notes (a
	 * line per layer) after a blank, blank + warning; the whole-model line
	 * (no graph: its reason) after a blank */
	assert_int_equal(harness_count_lines(text), 6 + 2 + 300 + 2 + 2 + 299 + 2 + 301 + 2);
	assert_non_null(strstr(text, "\nwhole model: "));
	assert_non_null(strstr(text, "\nlayer names shortened above, in full:\n"));
	for (int i = 0; i < 300; i++) {
		if (i == 7 || i == 8)
			continue;
		snprintf(want, sizeof(want), "model.layers.%d\xe2\x80\xa6q_proj.weight ", i);
		line = line_with(text, want);
		assert_true(column_of(line, "linear") <= 36 + 2);
		free(line);
	}
	line = line_with(text, "abcdefghijklmnop");
	assert_non_null(strstr(line, "\xe2\x80\xa6"));
	assert_non_null(strstr(line, "0123456789 "));
	assert_int_equal(column_of(line, "linear"), 36 + 2);
	free(line);
	line = line_with(text, "total (300 layers)");
	assert_non_null(strstr(line, " 50.0% "));
	free(line);
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/* Every cell of a layer row equals the tree's value under the column name. */
static void check_row(const struct csv_table *t, int row, const cJSON *layer)
{
	for (int c = 2; c < t->ncell[0]; c++) {
		const char *name = t->cell[0][c], *cell = t->cell[row][c];
		const cJSON *v = report_dotted(layer, name);
		char *end;

		if (strcmp(name, "shape") == 0)
			continue;
		if (!v || cJSON_IsNull(v)) {
			assert_string_equal(cell, "");
		} else if (cJSON_IsNumber(v)) {
			double d = strtod(cell, &end);

			if (*end || end == cell || d != v->valuedouble)
				fail_msg("row %d %s: '%s' != %.17g", row, name, cell, v->valuedouble);
		} else if (cJSON_IsString(v)) {
			char shown[512];

			/* strings from the file are shown escaped, as everywhere */
			spp_safe_copy(shown, sizeof(shown), v->valuestring, (size_t)-1);
			assert_string_equal(cell, shown);
		} else if (cJSON_IsBool(v)) {
			assert_string_equal(cell, cJSON_IsTrue(v) ? "true" : "false");
		} else {
			fail_msg("column %s holds a non-scalar", name);
		}
	}
}

void test_csv(void **state)
{
	static const char *const names[] = {
		"name", "op", "dtype", "shape", "m", "k", "n", "n_source", "numel",
		"nnz", "sparsity", "pattern.class", "pattern.nm2_4", "pattern.block16",
		"pattern.row_nnz.cv", "flops.dense", "flops.theoretical_speedup",
		"storage.dense.bytes", "storage.csr.bytes", "storage.csr.ratio",
		"storage.nm2_4.reason", "storage.nm2_4.applicable",
	};
	struct fixture fx;
	struct csv_table t;
	const cJSON *layers;
	cJSON *r, *runs, *run;
	char *text;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	/* a name that needs quoting */
	layers = cJSON_GetObjectItem(r, "layers");
	assert_non_null(cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetArrayItem(layers, 1), "name"),
					     "odd, \"quoted\"\nname"));
	text = render(r, SPP_REPORT_CSV, 0);
	csv_table_parse(text, strlen(text), &t);
	assert_int_equal(t.rows, 4);
	assert_string_equal(t.cell[0][0], "model.path");
	assert_string_equal(t.cell[0][1], "model.hash");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		csv_table_col(&t, names[i]);
	for (int c = 0; c < t.ncell[0]; c++) {
		assert_null(strstr(t.cell[0][c], "runs"));
		assert_null(strstr(t.cell[0][c], "breakeven"));
	}
	for (int row = 1; row < 4; row++) {
		assert_string_equal(t.cell[row][0], "models/tiny.safetensors");
		assert_string_equal(t.cell[row][1], "0123456789abcdef0123456789abcdef");
		check_row(&t, row, cJSON_GetArrayItem(layers, row - 1));
	}
	assert_string_equal(t.cell[1][csv_table_col(&t, "shape")], "8x16");
	assert_string_equal(t.cell[3][csv_table_col(&t, "shape")], "4x2x3x3");
	/* quoted for the comma and quotes, the newline shown escaped */
	assert_string_equal(t.cell[2][csv_table_col(&t, "name")], "odd, \"quoted\"\\x0aname");
	assert_string_equal(t.cell[2][csv_table_col(&t, "sparsity")], "0.375");
	assert_string_equal(t.cell[2][csv_table_col(&t, "storage.nm2_4.reason")], REASON_NA);
	assert_string_equal(t.cell[1][csv_table_col(&t, "storage.nm2_4.reason")], "");
	assert_string_equal(t.cell[3][csv_table_col(&t, "flops.theoretical_speedup")], "");
	assert_string_equal(t.cell[1][csv_table_col(&t, "flops.dense")], "32768");
	/* columns first seen on a later layer join their group */
	assert_int_equal(csv_table_col(&t, "storage.nm2_4.applicable"), csv_table_col(&t, "storage.nm2_4.ratio") + 1);
	assert_int_equal(csv_table_col(&t, "storage.nm2_4.reason"), csv_table_col(&t, "storage.nm2_4.ratio") + 2);
	csv_table_free(&t);
	free(text);

	/* with runs: one row per run, the run's names unprefixed */
	runs = cJSON_GetObjectItem(cJSON_GetArrayItem(layers, 0), "runs");
	run = cJSON_Parse("{\"backend\": \"cpu\", \"format\": \"csr\", \"status\": \"ok\","
			  " \"time_ns\": {\"median\": 1500, \"p10\": 1400, \"p90\": 1700, \"repeats\": 10},"
			  " \"speedup\": 1.25}");
	cJSON_AddItemToArray(runs, run);
	run = cJSON_Parse("{\"backend\": \"cpu\", \"format\": \"dense\", \"status\": \"ok\","
			  " \"time_ns\": {\"median\": 1875, \"p10\": 1800, \"p90\": 1900, \"repeats\": 10},"
			  " \"speedup\": 1}");
	cJSON_AddItemToArray(runs, run);
	text = render(r, SPP_REPORT_CSV, 0);
	csv_table_parse(text, strlen(text), &t);
	assert_int_equal(t.rows, 5);
	assert_string_equal(t.cell[1][csv_table_col(&t, "format")], "csr");
	assert_string_equal(t.cell[1][csv_table_col(&t, "time_ns.median")], "1500");
	assert_string_equal(t.cell[2][csv_table_col(&t, "format")], "dense");
	assert_string_equal(t.cell[2][csv_table_col(&t, "speedup")], "1");
	assert_string_equal(t.cell[2][csv_table_col(&t, "name")], "model.layers.0.self_attn.q_proj.weight");
	assert_string_equal(t.cell[3][csv_table_col(&t, "backend")], "");
	assert_string_equal(t.cell[4][csv_table_col(&t, "time_ns.p90")], "");
	check_row(&t, 3, cJSON_GetArrayItem(layers, 1));
	csv_table_free(&t);
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/*
 * Speedup against N in text and Markdown: one line per layer with an N
 * sweep, each format's winning N range and crossover N; none without one.
 */
void test_text_nsweep(void **state)
{
	struct fixture fx;
	cJSON *r, *l, *ns;
	char *text, *md, *line;
	(void)state;

	fixture_init(&fx, 2);
	r = build(&fx);
	text = render(r, SPP_REPORT_TEXT, 0);
	assert_null(strstr(text, "speedup against N"));
	free(text);
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 1);
	ns = cJSON_Parse("{\"cpu/csr\": {\"wins\": \"16-64\", \"crossings\": [{\"n\": 11.3, \"faster\": \"above\"}],"
			 " \"reason\": \"\", \"curve\": []},"
			 " \"cpu/nm2_4\": {\"wins\": \"\", \"crossings\": [], \"reason\": \"\", \"curve\": []}}");
	assert_non_null(ns);
	cJSON_AddItemToObject(l, "n_sweep", ns);
	text = render(r, SPP_REPORT_TEXT, 0);
	md = render(r, SPP_REPORT_MD, 0);
	line = line_with(text, "speedup against N (--n-sweep)");
	free(line);
	line = line_with(text, "cpu/csr faster at N = 16-64 (crossover N 11.3, faster above); cpu/nm2_4 never faster");
	assert_non_null(strstr(line, cJSON_GetStringValue(cJSON_GetObjectItem(l, "name"))));
	free(line);
	assert_non_null(strstr(md, "\n### Speedup against N\n\n- "));
	assert_non_null(strstr(md, "cpu/csr faster at N = 16-64 (crossover N 11.3, faster above)"));
	assert_null(strstr(text, "epilogue (--epilogue)"));
	free(text);
	free(md);
	/* an epilogue on one run: its medians and saving, the bias's source */
	{
		cJSON *runs = cJSON_GetObjectItem(l, "runs"), *run = cJSON_CreateObject();

		assert_non_null(run);
		if (!runs)
			runs = cJSON_AddArrayToObject(l, "runs");
		cJSON_AddStringToObject(run, "format", "csr");
		cJSON_AddItemToObject(run, "epilogue", cJSON_Parse(
			"{\"kind\": \"bias_relu\", \"bias\": \"zeros\", \"status\": \"ok\", \"reason\": null,"
			" \"fused_time_ns\": {\"median\": 1500}, \"unfused_time_ns\": {\"median\": 2000}, \"saving\": 0.25}"));
		cJSON_AddItemToArray(runs, run);
	}
	text = render(r, SPP_REPORT_TEXT, 0);
	md = render(r, SPP_REPORT_MD, 0);
	line = line_with(text, "bias_relu (zero bias: the layer has none): csr fused 1.50 us, unfused 2.00 us, saving 25.0%");
	free(line);
	assert_non_null(strstr(md, "\n### Fused epilogue\n\n- "));
	free(text);
	free(md);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/*
 * One rule for fractions in every human format: a 2:4 compliance of
 * 0.9995 and a sparsity of 0.99996 never print as compliant or as 100 %,
 * a tiny non-zero never as 0; compare's figures never in exponent form.
 */
void test_fractions(void **state)
{
	static const enum spp_report_format fmts[] = { SPP_REPORT_TEXT, SPP_REPORT_MD, SPP_REPORT_HTML };
	struct fixture fx;
	char buf[64];
	cJSON *r, *l;
	(void)state;

	spp_cell_frac(0.9995, 1, 2, "", buf, sizeof(buf));
	assert_string_equal(buf, "0.9995");
	spp_cell_frac(0.99996, 100, 1, "%", buf, sizeof(buf));
	assert_string_equal(buf, "99.996%");
	spp_cell_frac(1 - 1e-12, 1, 2, "", buf, sizeof(buf));
	assert_string_equal(buf, "> 0.999999");
	spp_cell_frac(1e-12, 100, 1, "%", buf, sizeof(buf));
	assert_string_equal(buf, "< 0.00001%");
	spp_cell_frac(0.25, 100, 1, "%", buf, sizeof(buf));
	assert_string_equal(buf, "25.0%");
	spp_cell_frac(1, 1, 2, "", buf, sizeof(buf));
	assert_string_equal(buf, "1.00");
	spp_cell_figure(1048860, 6, 0, buf, sizeof(buf));
	assert_string_equal(buf, "1048860");
	spp_cell_figure(-2048.5, 4, 1, buf, sizeof(buf));
	assert_string_equal(buf, "-2048");
	spp_cell_figure(0.123456789, 4, 1, buf, sizeof(buf));
	assert_string_equal(buf, "+0.1235");

	fixture_init(&fx, 2);
	r = build(&fx);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "layers")) {
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(l, "pattern"), "nm2_4", cJSON_CreateNumber(0.9995));
		cJSON_ReplaceItemInObject(l, "sparsity", cJSON_CreateNumber(0.99996));
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *out = render(r, fmts[i], 0);

		if (!strstr(out, "0.9995") || !strstr(out, "99.99"))
			fail_msg("format %zu: the compliance or sparsity is not shown exactly:\n%s", i, out);
		if (strstr(out, "100.0%"))
			fail_msg("format %zu prints 100.0%%:\n%s", i, strstr(out, "100.0%") - 200);
		free(out);
	}
	cJSON_Delete(r);
	fixture_fini(&fx);
}

