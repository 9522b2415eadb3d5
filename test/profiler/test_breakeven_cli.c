/*
 * Breakeven end to end (test_breakeven.c runs these): `spprof sweep` on
 * unstructured and N:M patterns and its usage errors, `analyze --breakeven`
 * on sample models with its schema and text column, and a sweep along the
 * wrong axis. The real runs are checked for structure, never for speed.
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

#include "profiler/breakeven.h"
#include "profiler/diagnose.h"
#include "test/harness.h"

static cJSON *parse_out(const struct harness_run *r)
{
	cJSON *j = cJSON_Parse(r->out);

	if (!j)
		fail_msg("not JSON: %.300s", r->out);
	return j;
}

/* `spprof ARGS` into r, which must exit 0, and its stdout parsed. */
static cJSON *run_json(const char *const *args, struct harness_run *r)
{
	assert_int_equal(harness_spprof(r, args), 0);
	if (r->status != 0)
		fail_msg("%s: %s", args[0], r->err);
	return parse_out(r);
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* A breakeven entry's curve: non-empty, ascending sparsity, speedup = dense / time. */
static void check_curve(const cJSON *curve)
{
	const cJSON *p;
	double last = -1;
	int n = 0;

	assert_true(cJSON_IsArray(curve));
	cJSON_ArrayForEach(p, curve) {
		double s = num(p, "sparsity"), t = num(p, "time_ns"), td = num(p, "dense_time_ns");

		assert_true(s > last);
		assert_true(s >= 0 && s < 1);
		assert_true(t > 0 && td > 0);
		assert_true(fabs(num(p, "speedup") - td / t) <= 1e-9 * (td / t));
		last = s;
		n++;
	}
	assert_true(n >= 14); /* the default grid has 14 points */
}

void test_sweep_command(void **state)
{
	struct harness_run r;
	const char *args[] = {"sweep", "--shape", "64x64x8", "--pattern", "unstructured",
			      "--formats", "csr", "--time-budget", "0.01", "--format", "json", NULL};
	const cJSON *shape, *results, *res, *be;
	cJSON *j;

	(void)state;
	j = run_json(args, &r);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "schema")),
			    "spprof.sweep/1");
	shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
	assert_true(num(shape, "m") == 64 && num(shape, "k") == 64 && num(shape, "n") == 8);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "pattern")),
			    "unstructured");
	assert_true(num(j, "threads") == 1);
	results = cJSON_GetObjectItemCaseSensitive(j, "results");
	assert_int_equal(cJSON_GetArraySize(results), 1);
	res = cJSON_GetArrayItem(results, 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "backend")), "cpu");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "format")), "csr");
	be = cJSON_GetObjectItemCaseSensitive(res, "breakeven");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(be, "sparsity"));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(be, "reason"));
	/* no breakeven always comes with a reason */
	if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(be, "sparsity")))
		assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(be, "reason")));
	check_curve(cJSON_GetObjectItemCaseSensitive(res, "curve"));
	cJSON_Delete(j);
	harness_run_free(&r);

	/* the text form names the format and its curve */
	args[10] = "text";
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cpu/csr curve"));
	assert_non_null(strstr(r.out, "breakeven"));
	harness_run_free(&r);
}

/* A point's speedup interval: *lo, *hi and 1, or 0 when it has none (both null). */
static int interval_of(const cJSON *p, double *lo, double *hi)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(p, "speedup_ci_low");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(p, "speedup_ci_high");

	assert_true(cJSON_IsNull(a) == cJSON_IsNull(b));
	if (cJSON_IsNull(a))
		return 0;
	*lo = num(p, "speedup_ci_low");
	*hi = num(p, "speedup_ci_high");
	assert_true(*lo <= *hi);
	return 1;
}

/*
 * `spprof sweep` with one thread times in interleaved rounds: its points
 * carry their speedup's interval, and the breakeven's bracket is the
 * points' (the last surely slower below it, the first from which every
 * point is surely faster), around it. Structure only, never a speed.
 */
void test_sweep_intervals(void **state)
{
	struct harness_run r;
	const char *args[] = {"sweep", "--shape", "256x256x64", "--threads", "1", "--formats", "csr",
			      "--time-budget", "0.02", "--format", "json", NULL};
	const cJSON *res, *be, *p;
	double lo, hi, s, low = NAN, high = NAN, sparsity = NAN;
	int with = 0, sure_above = 1;
	cJSON *j;

	(void)state;
	j = run_json(args, &r);
	res = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "results"), 0);
	be = cJSON_GetObjectItemCaseSensitive(res, "breakeven");
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(be, "sparsity")))
		sparsity = num(be, "sparsity");
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(be, "breakeven_low")))
		low = num(be, "breakeven_low");
	if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(be, "breakeven_high")))
		high = num(be, "breakeven_high");
	check_curve(cJSON_GetObjectItemCaseSensitive(res, "curve"));
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(res, "curve"))
		with += interval_of(p, &lo, &hi);
	assert_true(with > 0);
	if (isnan(sparsity))
		assert_true(isnan(low) && isnan(high));
	if (!isnan(low)) {
		assert_true(low < sparsity);
		/* the point at low is surely slower; none between it and the breakeven is */
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(res, "curve")) {
			s = num(p, "sparsity");
			if (s >= low && s < sparsity)
				assert_true((interval_of(p, &lo, &hi) && hi < 1) == (s == low));
		}
	}
	if (!isnan(high)) {
		assert_true(sparsity <= high);
		/* every point from high on is surely faster */
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(res, "curve"))
			if (num(p, "sparsity") >= high)
				sure_above &= interval_of(p, &lo, &hi) && lo > 1;
		assert_true(sure_above);
	}
	cJSON_Delete(j);
	harness_run_free(&r);
}

/* An N:M sweep: the one sparsity 1 - N/M, and of the N:M formats only its own. */
void test_sweep_nm(void **state)
{
	struct harness_run r;
	const char *args[] = {"sweep", "--shape", "32x32x4", "--pattern", "nm2_4", "--time-budget",
			      "0.005", "--format", "json", NULL};
	const cJSON *res;
	cJSON *j;
	int nm24 = 0, n = 0;

	(void)state;
	j = run_json(args, &r);
	cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(j, "results")) {
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "format"));
		const cJSON *curve = cJSON_GetObjectItemCaseSensitive(res, "curve");

		assert_non_null(f);
		assert_false(strcmp(f, "nm1_4") == 0 || strcmp(f, "nm4_8") == 0);
		nm24 += strcmp(f, "nm2_4") == 0;
		assert_int_equal(cJSON_GetArraySize(curve), 1);
		assert_true(num(cJSON_GetArrayItem(curve, 0), "sparsity") == 0.5);
		n++;
	}
	assert_int_equal(nm24, 1);
	assert_true(n > 1); /* csr and the others beside it */
	cJSON_Delete(j);
	harness_run_free(&r);
}

void test_sweep_usage(void **state)
{
	struct harness_run r;
	const char *bad_pattern[] = {"sweep", "--shape", "8x8x1", "--pattern", "nm5_4", NULL};
	const char *bad_shape[] = {"sweep", "--shape", "8x8", NULL};
	const char *no_shape[] = {"sweep", NULL};
	const char *nm_mismatch[] = {"sweep", "--shape", "8x8x1", "--formats", "nm2_4", NULL};
	const char *bad_backend[] = {"sweep", "--shape", "8x8x1", "--backends", "tpu", NULL};
	const char *const *cases[] = {bad_pattern, bad_shape, no_shape, nm_mismatch, bad_backend};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(harness_spprof(&r, cases[i]), 0);
		if (r.status != 2)
			fail_msg("case %zu: exit %d: %s", i, r.status, r.err);
		assert_non_null(strstr(r.err, "spprof sweep: "));
		harness_run_free(&r);
	}
}

static char *analyze_json(const char *dir, const char *model, int breakeven)
{
	struct harness_run r;
	char *m = harness_join(getenv("SPP_SAMPLE_MODELS"), model);
	char *out = harness_join(dir, breakeven ? "be.json" : "plain.json");
	const char *args[] = {"analyze", m, "--formats", "csr", "--n", "8", "--repeat", "1",
			      "--time-budget", "0.01", "--threads", "1", "--counters", "none",
			      "--quiet", "-o", out, breakeven ? "--breakeven" : NULL, NULL};
	char *text;

	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 0)
		fail_msg("analyze: %s", r.err);
	harness_run_free(&r);
	text = harness_slurp(out, NULL);
	assert_non_null(text);
	free(m);
	free(out);
	return text;
}

/*
 * Layers of one (m, k, n, pattern) share a sweep: their curves are the
 * same figures. Layers of another shape get a sweep of their own.
 */
void test_analyze_breakeven(void **state)
{
	char *dir = harness_tmpdir(), *text = analyze_json(dir, "bert_block_unstructured90.safetensors", 1);
	cJSON *j = cJSON_Parse(text), *plain;
	const cJSON *layers, *l, *proj, *a;
	int nlayers = 0, shared = 0;

	(void)state;
	assert_non_null(j);
	layers = cJSON_GetObjectItemCaseSensitive(j, "layers");
	cJSON_ArrayForEach(l, layers) {
		const cJSON *be = cJSON_GetObjectItemCaseSensitive(l, "breakeven");
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(be, "cpu/csr");
		const cJSON *rec = cJSON_GetObjectItemCaseSensitive(l, "recommendation");
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(e, "sparsity");
		const cJSON *margin = cJSON_GetObjectItemCaseSensitive(e, "margin");

		nlayers++;
		assert_non_null(e);
		assert_int_equal(cJSON_GetArraySize(be), 1); /* only the format asked for */
		check_curve(cJSON_GetObjectItemCaseSensitive(e, "curve"));
		if (cJSON_IsNumber(sp))
			assert_true(fabs(margin->valuedouble - (num(l, "sparsity") - sp->valuedouble)) < 1e-12);
		else
			assert_true(cJSON_IsNull(margin) &&
				    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "reason")));
		assert_true(cJSON_IsObject(rec));
		assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "reason")));
		/* 90% unstructured: 2:4 would fit the sparsity, not the pattern */
		{
			const char *diag = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "diagnosis"));
			double nm24 = num(cJSON_GetObjectItemCaseSensitive(l, "pattern"), "nm2_4");
			char want[96];

			assert_non_null(diag);
			assert_true(nm24 < 1);
			snprintf(want, sizeof(want), "2:4 not applicable: %.3g%% of groups of 4",
				 100 * (1 - nm24));
			if (!strstr(diag, want))
				fail_msg("'%s' lacks '%s'", diag, want);
		}
		/* every earlier layer of the same shape has the same curve */
		cJSON_ArrayForEach(a, layers) {
			const cJSON *ea;

			if (a == l)
				break;
			if (num(a, "m") != num(l, "m") || num(a, "k") != num(l, "k") ||
			    num(a, "n") != num(l, "n"))
				continue;
			ea = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "breakeven"),
							      "cpu/csr");
			assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(ea, "curve"),
						  cJSON_GetObjectItemCaseSensitive(e, "curve"), 1));
			shared++;
		}
	}
	assert_true(nlayers > 1);
	assert_true(shared > 0); /* the sample has repeated shapes: the check ran */
	proj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"),
						"projection");
	assert_true(cJSON_IsObject(proj));
	assert_true(num(proj, "dense_time_ns") > 0);
	assert_true(fabs(num(proj, "speedup") -
			 num(proj, "dense_time_ns") / num(proj, "recommended_time_ns")) < 1e-9);
	assert_true(fabs(num(proj, "ratio") - num(proj, "dense_bytes") / num(proj, "recommended_bytes")) <
		    1e-9);
	assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(proj, "prune_next")));
	cJSON_Delete(j);
	free(text);

	/* without --breakeven: empty breakeven maps, the projection still there */
	text = analyze_json(dir, "bert_block_unstructured90.safetensors", 0);
	plain = cJSON_Parse(text);
	assert_non_null(plain);
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(plain, "layers"))
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "breakeven")), 0);
	cJSON_Delete(plain);
	free(text);
	harness_rmtree(dir);
}

/* A --breakeven report validates against docs/report.schema.json (skipped without jsonschema). */
void test_schema_valid(void **state)
{
	static const char validator[] =
		"import json, sys\n"
		"from jsonschema import Draft202012Validator as V\n"
		"v, bad = V(json.load(open(sys.argv[1]))), 0\n"
		"for e in v.iter_errors(json.load(open(sys.argv[2]))):\n"
		"    bad += 1\n"
		"    print(list(e.absolute_path), e.message[:200])\n"
		"sys.exit(1 if bad else 0)\n";
	char *dir = harness_tmpdir(), *text = analyze_json(dir, "bert_block_nm2_4.safetensors", 1);
	char *path = harness_join(dir, "be.json");
	char *schema = harness_join(getenv("SPP_TEST_DATA"), "../../docs/report.schema.json");
	const char *probe[] = {"python3", "-c", "import jsonschema", NULL};
	const char *args[] = {"python3", "-c", validator, schema, path, NULL};
	struct harness_run r;
	int have;

	(void)state;
	free(text);
	have = harness_exec(&r, "/usr/bin/env", probe) == 0 && r.status == 0;
	harness_run_free(&r);
	if (have) {
		assert_int_equal(harness_exec(&r, "/usr/bin/env", args), 0);
		if (r.status != 0)
			fail_msg("schema: %s%s", r.out, r.err);
		harness_run_free(&r);
	}
	free(schema);
	free(path);
	harness_rmtree(dir);
	if (!have)
		skip(); /* python3-jsonschema is not installed */
}

/* The text table's breakeven column, rendered from a --breakeven report. */
void test_text_column(void **state)
{
	char *dir = harness_tmpdir(), *text = analyze_json(dir, "bert_block_unstructured90.safetensors", 1);
	char *path = harness_join(dir, "be.json");
	struct harness_run r;
	const char *args[] = {"report", path, "--format", "text", NULL};

	(void)state;
	free(text);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "breakeven"));
	harness_run_free(&r);
	free(path);
	harness_rmtree(dir);
}

/*
 * The wrong-axis rule end to end: W (64 x 64) whose every group of four
 * rows in a column keeps two non-zeros (2:4 along M) while groups of four
 * columns in a row hold 0 to 4: analyze says 2:4 is along the wrong axis.
 * Its transpose (2:4 along K) has no such sentence and its nm2_4 runs.
 */
void test_wrong_axis(void **state)
{
	enum { D = 64 };
	static float w[D * D], wt[D * D];
	char *dir = harness_tmpdir(), *path = harness_join(dir, "w.npy");
	const char *args[] = {"analyze", path, "--n", "8", "--formats", "nm2_4", "--repeat", "2",
			      "--counters", "none", "--quiet", "--format", "json", NULL};
	uint64_t s = 99;

	(void)state;
	memset(w, 0, sizeof(w));
	for (int j = 0; j < D; j++)
		for (int g = 0; g < D; g += 4) {
			int a, b;

			s = s * 6364136223846793005ull + 1442695040888963407ull;
			a = (int)((s >> 33) % 4);
			b = (a + 1 + (int)((s >> 40) % 3)) % 4;
			w[(g + a) * D + j] = 1.0f + (float)j / D;
			w[(g + b) * D + j] = -1.0f - (float)g / D;
		}
	for (int i = 0; i < D; i++)
		for (int j = 0; j < D; j++)
			wt[j * D + i] = w[i * D + j];
	for (int t = 0; t < 2; t++) {
		struct harness_run r;
		const cJSON *l, *d;
		cJSON *j;

		assert_int_equal(harness_write_npy_f32(path, D, D, t ? wt : w), 0);
		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		j = parse_out(&r);
		l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0);
		d = cJSON_GetObjectItemCaseSensitive(l, "diagnosis");
		assert_true(cJSON_IsString(d));
		assert_int_equal(strstr(d->valuestring, "2:4 along the wrong axis") != NULL, !t);
		/* and nm2_4 ran only on the transpose */
		assert_int_equal(strstr(r.out, "\"not_applicable\"") != NULL, !t);
		cJSON_Delete(j);
		harness_run_free(&r);
	}
	/* the text report gives each sentence its own line under the runs */
	assert_int_equal(harness_write_npy_f32(path, D, D, w), 0);
	args[12] = "text";
	{
		struct harness_run r;

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "\nw: 2:4 along the wrong axis: every group of 4 rows"));
		assert_non_null(strstr(r.out, "\nw: 4:8 along the wrong axis"));
		harness_run_free(&r);
	}
	free(path);
	harness_rmtree(dir);
}
