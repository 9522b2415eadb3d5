/*
 * Reports: the spprof.report/1 tree built from a hand-made analysis, and
 * every writer and the reader rendering and loading it. The analysis is
 * filled by hand with figures worked out from DESIGN section 3, so these
 * tests check the report part alone, not the static analysis.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <omp.h>

#include "reports/report.h"
#include "test/harness.h"
#include "test/report_read.h"
#include "test/reports_fixture.h"

/*
 * Expected parts of the tree, as JSON. Every name given must be present
 * with the same type and value (numbers to 1e-12 relative: the ratios are
 * written to 16 digits); names not given are not checked.
 */
static const char want_top[] = "{"
	"\"schema\": \"spprof.report/1\", \"tool\": {\"name\": \"spprof\", \"version\": \"9.9.9\"},"
	"\"created\": \"1970-01-02T00:00:00Z\","
	"\"model\": {\"path\": \"models/tiny.safetensors\", \"format\": \"safetensors\","
	"  \"hash\": {\"algo\": \"xxh3-128-tree-test\", \"value\": \"0123456789abcdef0123456789abcdef\"},"
	"  \"bytes\": 1234, \"params\": 240, \"nnz\": 92, \"sparsity\": 0.6166666666666667,"
	"  \"tensors\": 4, \"layers\": 3},"
	"\"machine\": {\"caches\": null, \"peak_bw_gbs\": null, \"peak_gflops\": null,"
	"  \"counters\": null, \"dense_blas\": null, \"gpus\": []},"
	"\"settings\": {\"n\": 128, \"batch\": null, \"threads\": null, \"repeats\": null,"
	"  \"formats\": [], \"backends\": [], \"seed\": 7, \"static\": true},"
	"\"summary\": {\"layers\": 3, \"gemm_params\": 232, \"gemm_nnz\": 84,"
	"  \"gemm_sparsity\": 0.6379310344827587,"
	"  \"storage\": {\"dense\": {\"bytes\": 864, \"ratio\": 1, \"applicable_layers\": 3},"
	"    \"csr\": {\"bytes\": 708, \"ratio\": 1.2203389830508475, \"applicable_layers\": 3},"
	/* nm2_4 holds layers 0 and 2 only: 272 + 170 bytes against 512 + 288 */
	"    \"nm2_4\": {\"bytes\": 442, \"ratio\": 1.8099547511312217, \"applicable_layers\": 2},"
	"    \"nm1_4\": {\"bytes\": 85, \"applicable_layers\": 1}},"
	"  \"flops\": {\"dense\": 59392, \"sparse\": 21504, \"theoretical_speedup\": 2.761904761904762}},"
	"\"warnings\": [{\"code\": \"no_kernel_runs\","
	"  \"message\": \"kernel runs are not built yet: static metrics only\"}]}";

static const char want_layer0[] = "{"
	"\"name\": \"model.layers.0.self_attn.q_proj.weight\", \"op\": \"linear\","
	"\"dtype\": \"F32\", \"shape\": [8, 16], \"m\": 8, \"k\": 16, \"n\": 128,"
	"\"n_source\": \"option\", \"numel\": 128, \"nnz\": 64, \"sparsity\": 0.5,"
	"\"pattern\": {\"class\": \"nm\", \"nm1_4\": 0, \"nm2_4\": 1, \"nm4_8\": 1, \"block2\": 0.25,"
	"  \"block4\": 0, \"block8\": 0, \"block16\": 0, \"zero_rows\": 0, \"zero_cols\": 0,"
	"  \"row_nnz\": {\"min\": 8, \"max\": 8, \"mean\": 8, \"cv\": 0}},"
	"\"flops\": {\"dense\": 32768, \"sparse\": 16384, \"theoretical_speedup\": 2},"
	"\"storage\": {\"dense\": {\"bytes\": 512, \"ratio\": 1},"
	"  \"csr\": {\"bytes\": 548, \"ratio\": 0.9343065693430657},"
	"  \"coo\": {\"bytes\": 768, \"ratio\": 0.6666666666666666},"
	"  \"bsr4\": {\"bytes\": 556, \"ratio\": 0.920863309352518},"
	"  \"bsr8\": {\"bytes\": 528, \"ratio\": 0.9696969696969697},"
	"  \"bsr16\": {\"bytes\": 1036, \"ratio\": 0.4942084942084942},"
	"  \"bitmask\": {\"bytes\": 308, \"ratio\": 1.6623376623376624},"
	"  \"nm1_4\": {\"bytes\": null, \"ratio\": null, \"applicable\": false,"
	"    \"reason\": \"not 1:4 compliant (0% of groups)\"},"
	"  \"nm2_4\": {\"bytes\": 272, \"ratio\": 1.8823529411764706},"
	"  \"nm4_8\": {\"bytes\": 280, \"ratio\": 1.8285714285714285}},"
	"\"runs\": [], \"breakeven\": {}, \"recommendation\": null}";

/* A format that cannot hold the layer is not a number. */
static const char want_layer1[] = "{\"dtype\": \"BF16\", \"shape\": [4, 8],"
	"\"pattern\": {\"class\": \"unstructured\", \"zero_cols\": 1,"
	"  \"row_nnz\": {\"min\": 3, \"max\": 7, \"mean\": 5, \"cv\": 0.31622776601683794}},"
	"\"flops\": {\"theoretical_speedup\": 1.6},"
	"\"storage\": {\"nm2_4\": {\"bytes\": null, \"ratio\": null, \"applicable\": false,"
	"  \"reason\": \"" REASON_NA "\"}}}";

/* nnz 0: no speedup and no row cv exist; a 0-byte format has no ratio. */
static const char want_layer2[] = "{\"name\": \"conv.weight\", \"op\": \"conv2d\","
	"\"shape\": [4, 2, 3, 3], \"m\": 4, \"k\": 18, \"nnz\": 0, \"sparsity\": 1,"
	"\"pattern\": {\"class\": \"channel\", \"zero_rows\": 4, \"zero_cols\": 18,"
	"  \"row_nnz\": {\"cv\": null}},"
	"\"flops\": {\"dense\": 18432, \"sparse\": 0, \"theoretical_speedup\": null},"
	"\"storage\": {\"coo\": {\"bytes\": 0, \"ratio\": null}, \"csr\": {\"bytes\": 20, \"ratio\": 14.4}}}";

static void test_tree(void **state)
{
	static const char *const want_layers[] = {want_layer0, want_layer1, want_layer2};
	struct fixture fx;
	const cJSON *mc, *ls, *st, *f;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	/* SOURCE_DATE_EPOCH = 86400 (main) pins "created" */
	expect_json(want_top, r, "report");
	mc = cJSON_GetObjectItem(r, "machine");
	assert_true(cJSON_IsString(cJSON_GetObjectItem(mc, "cpu")) ||
		    cJSON_IsNull(cJSON_GetObjectItem(mc, "cpu")));
	assert_true(cJSON_GetObjectItem(mc, "threads")->valuedouble == omp_get_max_threads());
	ls = cJSON_GetObjectItem(r, "layers");
	assert_int_equal(cJSON_GetArraySize(ls), 3);
	for (int i = 0; i < 3; i++)
		expect_json(want_layers[i], cJSON_GetArrayItem(ls, i), "layer");
	/* every layer lists all ten formats; "applicable" appears only as false */
	cJSON_ArrayForEach(f, ls) {
		st = cJSON_GetObjectItem(f, "storage");
		assert_int_equal(cJSON_GetArraySize(st), SPP_ST_COUNT);
		for (const cJSON *x = st->child; x; x = x->next) {
			const cJSON *a = cJSON_GetObjectItem(x, "applicable");

			assert_true(!a || cJSON_IsFalse(a));
			assert_true(cJSON_IsNumber(cJSON_GetObjectItem(x, "bytes")) == !a);
		}
	}
	cJSON_Delete(r);
	fixture_fini(&fx);
}

static void test_json_roundtrip(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path, *t1, *t2, *c1, *c2;
	cJSON *r, *back = NULL;
	(void)state;

	fixture_init(&fx, -1);
	/* cJSON alone would print these with 15 digits and lose the last bits */
	fx.a.totals.bytes = (UINT64_C(1) << 53) - 1;
	fx.stats[1].row_nnz_cv = 0.1 + 0.2;
	r = build(&fx);
	path = harness_join(dir, "r.json");
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, path, NULL, &err), 0);
	assert_int_equal(spp_report_load(path, &back, &err), 0);
	assert_true(cJSON_Compare(r, back, 1));
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "model"), "bytes")->valuedouble ==
		    9007199254740991.0);
	assert_true(report_dotted(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "layers"), 1),
			   "pattern.row_nnz.cv")->valuedouble == 0.1 + 0.2);
	assert_true(report_dotted(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "layers"), 0),
			   "storage.csr.ratio")->valuedouble == 512.0 / 548);
	/* a saved report re-renders exactly like the fresh one */
	t1 = render(r, SPP_REPORT_TEXT, 0);
	t2 = render(back, SPP_REPORT_TEXT, 0);
	assert_string_equal(t1, t2);
	c1 = render(r, SPP_REPORT_CSV, 0);
	c2 = render(back, SPP_REPORT_CSV, 0);
	assert_string_equal(c1, c2);
	free(t1), free(t2), free(c1), free(c2);
	cJSON_Delete(back);
	cJSON_Delete(r);
	free(path);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

/* Write text to dir/name and expect spp_report_load to fail with code and msg. */
static void expect_load_error(const char *dir, const char *name, const char *text,
			      int code, const char *msg)
{
	struct spp_error err = {0};
	char *path = harness_join(dir, name), want[512];
	cJSON *out = (cJSON *)1;

	if (text)
		assert_int_equal(harness_write(path, text, strlen(text)), 0);
	assert_int_equal(spp_report_load(path, &out, &err), code);
	assert_null(out);
	snprintf(want, sizeof(want), "'%s'", path);
	if (!strstr(err.msg, want) || !strstr(err.msg, msg))
		fail_msg("message '%s' lacks %s or '%s'", err.msg, want, msg);
	free(path);
}

/* The report as JSON text after edit() changed a copy of it. */
static char *edited(const cJSON *r, void (*edit)(cJSON *))
{
	cJSON *c = cJSON_Duplicate(r, 1);
	char *s;

	edit(c);
	s = cJSON_Print(c);
	cJSON_Delete(c);
	return s;
}

static void layers_object(cJSON *r)
{
	cJSON_ReplaceItemInObject(r, "layers", cJSON_CreateObject());
}

static void drop_name(cJSON *r)
{
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 1), "name");
}

static void m_string(cJSON *r)
{
	cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 0), "m",
				  cJSON_CreateString("8"));
}

static void no_storage(cJSON *r)
{
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 2), "storage");
}

/* Keep only what the loader demands; the writers must cope with the rest missing. */
static void minimal(cJSON *r)
{
	const char *drop[] = {"tool", "created", "machine", "settings", "summary", "warnings"};
	cJSON *l;

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		cJSON_DeleteItemFromObject(r, drop[i]);
	cJSON_ReplaceItemInObject(r, "model", cJSON_Parse("{\"path\": \"m.safetensors\"}"));
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "layers")) {
		const char *keep[] = {"name", "m", "k", "n", "numel", "nnz", "sparsity"};
		cJSON *c = l->child;

		while (c) {
			cJSON *next = c->next;
			int kept = 0;

			for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
				kept |= strcmp(c->string, keep[i]) == 0;
			if (!kept)
				cJSON_Delete(cJSON_DetachItemViaPointer(l, c));
			c = next;
		}
		cJSON_AddObjectToObject(l, "pattern");
		cJSON_AddObjectToObject(l, "flops");
		cJSON_AddObjectToObject(l, "storage");
	}
}

static void test_load_errors(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *full, *s, *path;
	cJSON *r, *back = NULL;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	full = cJSON_Print(r);
	expect_load_error(dir, "missing.json", NULL, SPP_E_IO, "No such file");
	expect_load_error(dir, "empty.json", "", SPP_E_FORMAT, "not JSON");
	expect_load_error(dir, "bad.json", "{\"schema\": \"spprof.report/1\", oops}",
			  SPP_E_FORMAT, "not JSON (error near byte 3");
	expect_load_error(dir, "two.json", "{}{}", SPP_E_FORMAT, "not JSON (trailing data at byte 2)");
	expect_load_error(dir, "schema.json", "{\"schema\": \"x\"}", SPP_E_FORMAT,
			  "not a spprof report (schema is 'x', expected 'spprof.report/1')");
	expect_load_error(dir, "noschema.json", "[1, 2]", SPP_E_FORMAT, "not a spprof report");
	s = edited(r, layers_object);
	expect_load_error(dir, "layers.json", s, SPP_E_FORMAT, "\"layers\" missing or not an array");
	free(s);
	s = edited(r, drop_name);
	expect_load_error(dir, "noname.json", s, SPP_E_FORMAT,
			  "layers[1]: \"name\" missing or not a string");
	free(s);
	s = edited(r, m_string);
	expect_load_error(dir, "mstr.json", s, SPP_E_FORMAT, "layers[0]: \"m\" missing or not a number");
	free(s);
	s = edited(r, no_storage);
	expect_load_error(dir, "nostorage.json", s, SPP_E_FORMAT,
			  "layers[2]: \"storage\" missing or not an object");
	free(s);
	/* cut anywhere, a report is never valid JSON */
	for (size_t cut = 1; cut < strlen(full); cut += strlen(full) / 7) {
		char *half = strndup(full, cut);

		expect_load_error(dir, "cut.json", half, SPP_E_FORMAT, "not JSON");
		free(half);
	}

	/* the least the loader accepts renders in every format */
	s = edited(r, minimal);
	path = harness_join(dir, "min.json");
	assert_int_equal(harness_write(path, s, strlen(s)), 0);
	assert_int_equal(spp_report_load(path, &back, &err), 0);
	for (int fmt = SPP_REPORT_TEXT; fmt <= SPP_REPORT_CSV; fmt++)
		free(render(back, (enum spp_report_format)fmt, fmt == SPP_REPORT_TEXT));
	free(path);
	free(s);
	cJSON_Delete(back);
	free(full);
	cJSON_Delete(r);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

/* The idx-th node below root in pre-order, and its parent; counts down idx. */
static cJSON *nth_node(cJSON *root, int *idx, cJSON **parent)
{
	for (cJSON *c = root->child; c; c = c->next) {
		cJSON *found;

		if ((*idx)-- == 0) {
			*parent = root;
			return c;
		}
		if ((found = nth_node(c, idx, parent)))
			return found;
	}
	return NULL;
}

/*
 * Any one field of a report given another type either fails to load with
 * SPP_E_FORMAT or renders in every format (under the sanitizers, without
 * a fault): the writers never trust a field the loader does not check.
 */
static void test_mutations(void **state)
{
	static const char *const variants[] = {"null", "-1e308", "\"\"", "[]", "{}", "[1e300]", "true"};
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path = harness_join(dir, "m.json");
	int loaded = 0, rejected = 0;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	for (int i = 0;; i++) {
		int idx = i, done = 0;

		for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
			cJSON *c = cJSON_Duplicate(r, 1), *parent = NULL, *node, *back = NULL;
			char *text;
			int rc;

			idx = i;
			node = nth_node(c, &idx, &parent);
			if (!node) {
				cJSON_Delete(c);
				done = 1;
				break;
			}
			assert_true(cJSON_ReplaceItemViaPointer(parent, node, cJSON_Parse(variants[v])));
			text = cJSON_PrintUnformatted(c);
			assert_int_equal(harness_write(path, text, strlen(text)), 0);
			rc = spp_report_load(path, &back, &err);
			if (rc == 0) {
				for (int fmt = SPP_REPORT_TEXT; fmt <= SPP_REPORT_CSV; fmt++)
					free(render(back, (enum spp_report_format)fmt, 1));
				loaded++;
			} else {
				assert_int_equal(rc, SPP_E_FORMAT);
				rejected++;
			}
			cJSON_Delete(back);
			cJSON_free(text);
			cJSON_Delete(c);
		}
		if (done)
			break;
	}
	/* both paths were taken many times */
	assert_true(loaded > 100 && rejected > 50);
	cJSON_Delete(r);
	free(path);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

static void test_atomic_write(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path, *sub, *bad, *got, *want, want_msg[512];
	char *big = malloc(100000);
	struct stat st;
	size_t len;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	assert_non_null(big);

	bad = harness_join(dir, "nope/r.json");
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, bad, NULL, &err), SPP_E_OUTPUT);
	snprintf(want_msg, sizeof(want_msg), "cannot write '%s': No such file or directory", bad);
	assert_string_equal(err.msg, want_msg);
	assert_int_equal(harness_count_entries(dir), 0);

	/* over a bigger file: replaced whole, readable by others, no temp left */
	path = harness_join(dir, "r.json");
	memset(big, 'x', 100000);
	assert_int_equal(harness_write(path, big, 100000), 0);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, path, NULL, &err), 0);
	got = harness_slurp(path, &len);
	want = render(r, SPP_REPORT_JSON, 0);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(harness_count_entries(dir), 1);
	free(got), free(want);

	/* a folder in the way is refused, not renamed over; no temp file */
	sub = harness_join(dir, "sub.csv");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_CSV, sub, NULL, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, sub));
	assert_non_null(strstr(err.msg, "is a directory"));
	assert_int_equal(harness_count_entries(dir), 2);

	cJSON_Delete(r);
	free(big), free(bad), free(path), free(sub);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

static void test_format_names(void **state)
{
	static const struct {
		int by_path;
		const char *s;
		int rc;
		enum spp_report_format f;
	} cases[] = {
		{0, "text", 0, SPP_REPORT_TEXT}, {0, "txt", 0, SPP_REPORT_TEXT},
		{0, "json", 0, SPP_REPORT_JSON}, {0, "csv", 0, SPP_REPORT_CSV},
		{0, "html", 0, SPP_REPORT_HTML}, {0, "md", 0, SPP_REPORT_MD},
		{0, "yaml", -1, 0}, {0, "JSON", -1, 0},
		{1, "out/r.csv", 0, SPP_REPORT_CSV}, {1, "r.TXT", 0, SPP_REPORT_TEXT},
		{1, "a.b/r.text", 0, SPP_REPORT_TEXT}, {1, "x/r.json", 0, SPP_REPORT_JSON},
		{1, "a.json/report", -1, 0}, {1, "report", -1, 0}, {1, "r.md", 0, SPP_REPORT_MD},
		{1, "r.yaml", -1, 0},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum spp_report_format f = (enum spp_report_format)99;
		int rc = cases[i].by_path ? spp_report_format_from_path(cases[i].s, &f)
					  : spp_report_format_from_name(cases[i].s, &f);

		assert_int_equal(rc, cases[i].rc);
		if (rc == 0)
			assert_int_equal(f, cases[i].f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_sizes),
		cmocka_unit_test(test_text_nsweep),
		cmocka_unit_test(test_fractions),
		cmocka_unit_test(test_safe_text),
		cmocka_unit_test(test_unique_short_names),
		cmocka_unit_test(test_warning_codes),
		cmocka_unit_test(test_csv_columns_documented),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_selections_agree),
		cmocka_unit_test(test_run_columns_from_table),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_format_names),
	};

	setenv("SOURCE_DATE_EPOCH", "86400", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}