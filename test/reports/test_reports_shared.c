/*
 * The writers' tests of what every human-readable output shares: the one
 * sanitizer, unique short layer names, warning codes, the documented CSV
 * columns, and the golden renderings of a fixed report.
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

/* The sanitizer's classes and escapes, and the CSV formula guard. */
void test_safe_text(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain.weight", "plain.weight"},
		{"caf\xc3\xa9 \xe4\xb8\xad", "caf\xc3\xa9 \xe4\xb8\xad"},      /* é and 中 stay */
		{"a\nb\tc\rd", "a\\x0ab\\x09c\\x0dd"},                          /* C0 */
		{"\x1b[31m\x7f", "\\x1b[31m\\x7f"},                              /* ESC, DEL */
		{"\xc2\x9b" "2J\xc2\x85", "\\x9b2J\\x85"},                       /* C1: CSI, NEL */
		{"x\xe2\x80\xaey\xe2\x81\xa6z", "x\\u202ey\\u2066z"},            /* RLO, LRI */
		{"\xe2\x80\x8b\xef\xbb\xbf\xc2\xad\xe2\x80\xa8", "\\u200b\\ufeff\\xad\\u2028"},
		{"\xf3\xa0\x80\x81", "\\U000e0001"},                             /* a tag */
		{"\xff\xc3(\xed\xa0\x80\xc0\xaf", "\\xff\\xc3(\\xed\\xa0\\x80\\xc0\\xaf"}, /* bad UTF-8 */
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(spp_safe_copy(buf, sizeof(buf), cases[i].in, (size_t)-1),
				 strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(spp_safe_clean(cases[i].in), i < 2);
	}
	/* cut whole: never inside an escape or a UTF-8 sequence */
	assert_int_equal(spp_safe_copy(buf, 6, "ab\x1b" "cd", (size_t)-1), 8);
	assert_string_equal(buf, "ab");
	assert_int_equal(spp_safe_copy(buf, 4, "a\xc3\xa9\xc3\xa9", (size_t)-1), 5);
	assert_string_equal(buf, "a\xc3\xa9");
	for (const char *const *f = (const char *const[]){"=1+2", "+A1", "-A1", "@SUM(A1)", "\tx",
							    "\rx", "-", NULL}; *f; f++)
		assert_true(spp_safe_csv_formula(*f));
	for (const char *const *f = (const char *const[]){"-0.5", "+1e-3", "12", "a=b", "", NULL}; *f; f++)
		assert_false(spp_safe_csv_formula(*f));
}

/* Two names that share a long head and tail read differently, each in full below. */
void test_unique_short_names(void **state)
{
	static const char *const names[] = {
		"model_1.model.conv_handflag.BiasAdd_dense_1.kernel.weight.something_long",
		"model_1.model.conv_handflag.BiasAdd_dense_2.kernel.weight.something_long",
		"model_1.model.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x.y.weight_a.zzzzzzzzzzzzzzzzzzzzzz",
		"model_1.model.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x.y.weight_a.zzzzzzzzzzzzzzzzzzzzzzz",
	};
	struct fixture fx;
	cJSON *r, *layers;
	char *text, *rows;

	(void)state;
	fixture_init(&fx, 4);
	r = build(&fx);
	layers = cJSON_GetObjectItem(r, "layers");
	for (int i = 0; i < 4; i++)
		assert_non_null(cJSON_SetValuestring(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(layers, i), "name"), names[i]));
	text = render(r, SPP_REPORT_TEXT, 0);
	rows = strstr(text, "\n---");
	assert_non_null(rows);
	assert_non_null(strstr(rows, "\xe2\x80\xa6" "BiasAdd_dense_1"));
	assert_non_null(strstr(rows, "\xe2\x80\xa6" "BiasAdd_dense_2"));
	/* no two table rows start with the same name cell */
	for (int i = 0; i < 4; i++) {
		char cell[160];
		const char *line = rows + 1;

		for (int k = 0; k <= i + 1; k++)
			line = strchr(line, '\n') + 1;
		snprintf(cell, sizeof(cell), "\n%.*s ", (int)(strstr(line, "  ") - line), line);
		assert_null(strstr(strstr(rows, cell) + 1, cell));
	}
	for (int i = 0; i < 4; i++)
		assert_non_null(strstr(strstr(text, "in full:"), names[i]));
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/* Every warning code is documented in docs/METRICS.md and in the schema. */
void test_warning_codes(void **state)
{
	char *metrics = harness_join(getenv("SPP_SAMPLE_MODELS"), "../docs/METRICS.md");
	char *schema = harness_join(getenv("SPP_SAMPLE_MODELS"), "../docs/report.schema.json");
	char *m = harness_slurp(metrics, NULL), *j = harness_slurp(schema, NULL), want[96];
	int n = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(j);
	for (int w = 0; strcmp(spp_warn_code((enum spp_warn)w), "unknown"); w++, n++) {
		snprintf(want, sizeof(want), "| %s |", spp_warn_code((enum spp_warn)w));
		if (!strstr(m, want))
			fail_msg("docs/METRICS.md lacks the warning code row %s", want);
		snprintf(want, sizeof(want), "\"%s\"", spp_warn_code((enum spp_warn)w));
		if (!strstr(strstr(j, "\"warnings\""), want))
			fail_msg("docs/report.schema.json lacks the warning code %s", want);
	}
	assert_int_equal(n, 23);
	free(m); free(j); free(metrics); free(schema);
}

/* Whether the dotted doc field (with * for any one part) names path. */
static int field_matches(const char *doc, const char *path)
{
	while (*doc && *path) {
		size_t dl = strcspn(doc, "."), pl = strcspn(path, ".");

		if (!(dl == 1 && doc[0] == '*') && (dl != pl || strncmp(doc, path, dl)))
			return 0;
		doc += dl + (doc[dl] == '.');
		path += pl + (path[pl] == '.');
	}
	return !*doc && !*path;
}

/* A column is documented: a CSV-only row of docs/CSV.md, or a METRICS.md field. */
static int column_documented(const char *metrics, const char *csvdoc, const char *col)
{
	char want[160];

	snprintf(want, sizeof(want), "\n| %s | ", col);
	if (strstr(csvdoc, want))
		return 1;
	for (const char *p = metrics; (p = strstr(p, "\n| `layers[].")); p++) {
		char field[160];
		const char *f = p + 4, *end = strchr(f, '`');

		if (!end || end - f >= (long)sizeof(field))
			continue;
		snprintf(field, sizeof(field), "%.*s", (int)(end - f), f);
		if (!strncmp(field, "layers[].runs[].", 16) ? field_matches(field + 16, col)
							    : field_matches(field + 9, col))
			return 1;
	}
	return 0;
}

/* Every column of a CSV report with runs, and of a static one, is in docs/CSV.md. */
void test_csv_columns_documented(void **state)
{
	char *root = getenv("SPP_SAMPLE_MODELS"), *dir = harness_tmpdir();
	char *mp = harness_join(root, "../docs/METRICS.md"), *cp = harness_join(root, "../docs/CSV.md");
	char *metrics = harness_slurp(mp, NULL), *csvdoc = harness_slurp(cp, NULL);
	char *model = harness_join(dir, "m.safetensors");
	const char *synth[] = {"synth", "-o", model, "--layer", "fc=16x32:nm2_4:0.5", "--layer",
			       "c=8x4x3x3:unstructured:0.8", NULL};
	const char *runs[] = {"analyze", model, "--n", "4", "--repeat", "1", "--quiet",
			      "--formats", "csr,nm2_4", "--format", "csv", NULL};
	const char *stat[] = {"analyze", model, "--static", "--format", "csv", NULL};
	const char *const *cases[] = {runs, stat};
	struct harness_run r;

	(void)state;
	assert_non_null(metrics);
	assert_non_null(csvdoc);
	assert_int_equal(harness_spprof(&r, synth), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	for (int c = 0; c < 2; c++) {
		struct csv_table t;

		assert_int_equal(harness_spprof(&r, cases[c]), 0);
		assert_int_equal(r.status, 0);
		csv_table_parse(r.out, r.out_len, &t);
		assert_true(t.rows >= 3);
		for (int i = 0; i < t.ncell[0]; i++) {
			int filled = 0;

			if (!column_documented(metrics, csvdoc, t.cell[0][i]))
				fail_msg("CSV column '%s' is not in docs/CSV.md or METRICS.md", t.cell[0][i]);
			for (int row = 1; row < t.rows; row++)
				filled |= t.cell[row][i][0] != '\0';
			if (!filled)
				fail_msg("CSV column '%s' is empty in every row", t.cell[0][i]);
		}
		csv_table_free(&t);
		harness_run_free(&r);
	}
	free(metrics); free(csvdoc); free(mp); free(cp); free(model);
	harness_rmtree(dir);
}

/*
 * Golden renderings of a fixed report (test/data/golden/report.json: a
 * 2:4 compliance of 0.9995, two names sharing a long head and tail, a
 * long diagnosis) in text, Markdown, CSV and HTML. After a deliberate
 * change to a writer, scripts/golden rewrites them.
 */
void test_golden(void **state)
{
	static const char *const fmts[] = {"text", "md", "csv", "html"};
	char *dir = harness_join(getenv("SPP_TEST_DATA"), "golden");
	char *report = harness_join(dir, "report.json");

	(void)state;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *args[] = {"report", report, "--format", fmts[i], NULL};
		char name[32], *path, *want;
		struct harness_run r;
		size_t len, at = 0;

		snprintf(name, sizeof(name), "report.%s", fmts[i]);
		path = harness_join(dir, name);
		want = harness_slurp(path, &len);
		assert_non_null(want);
		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		while (at < len && at < r.out_len && want[at] == r.out[at])
			at++;
		if (at != len || at != r.out_len) {
			size_t line = at;

			while (line > 0 && want[line - 1] != '\n')
				line--;
			fail_msg("%s differs from the golden file at byte %zu (run scripts/golden if the "
				 "change is meant):\n  want: %.120s\n  got:  %.120s", name, at, want + line,
				 r.out + line);
		}
		harness_run_free(&r);
		free(want);
		free(path);
	}
	free(report);
	free(dir);
}
