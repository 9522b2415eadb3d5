/*
 * Breakeven and recommendation: the sweep's refinement on a deterministic
 * timing model, the pattern a layer sweeps, the recommendation rule and its
 * ties, `spprof sweep` end to end and `analyze --breakeven` on a sample
 * model (layers of one shape share one sweep). No timed assertions: the
 * real runs are checked for structure, never for speed.
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

#define TD 1000.0 /* dense time of the model, ns */

/*
 * Format 0 ("slope"): time = TD * 2.4 * (1 - s), faster than dense above
 * s = 1 - 1/2.4 = 0.58333..., between grid points. Format 1 ("never"): always 1.5x slower than dense.
 */
static int model_time(void *ctx, double s, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, char (*reasons)[256],
		      struct spp_error *err)
{
	(void)ctx;
	(void)reasons;
	(void)err;
	*t_dense_ns = TD;
	for (int f = 0; f < nformats; f++)
		t_ns[f] = strcmp(formats[f]->key, "slope") == 0 ? TD * 2.4 * (1 - s) : TD * 1.5;
	return 0;
}

static void test_refinement(void **state)
{
	struct spp_format_ops slope = {0}, never = {0};
	const struct spp_format_ops *list[] = {&slope, &never};
	struct spp_sweep_timer t = {model_time, NULL};
	struct spp_sweep_opts o;
	struct spp_sweep sw = {0};
	struct spp_error err = {0};
	const struct spp_sweep_result *r;

	(void)state;
	slope.key = "slope";
	never.key = "never";
	spp_sweep_opts_init(&o);
	o.m = o.k = 64;
	o.n = 8;
	assert_int_equal(spp_sweep_run(&o, list, 2, &t, &sw, &err), 0);
	assert_int_equal(sw.nresults, 2);
	r = &sw.results[0];
	/*
	 * Grid step 0.1 around the crossing: 0.5 (slower) brackets with 0.6
	 * (faster); 5 bisection steps leave hi within 0.1 / 32 above the
	 * crossing, and hi is a point measured faster.
	 */
	assert_true(r->breakeven > 1 - 1 / 2.4);
	assert_true(r->breakeven <= 1 - 1 / 2.4 + 0.1 / 32);
	assert_int_equal(r->npoints, 14 + 5); /* the grid and one point per step */
	for (int p = 1; p < r->npoints; p++)
		assert_true(r->curve[p].sparsity > r->curve[p - 1].sparsity);
	for (int p = 0; p < r->npoints; p++)
		assert_true(fabs(r->curve[p].speedup - 1.0 / (2.4 * (1 - r->curve[p].sparsity))) < 1e-9);
	r = &sw.results[1];
	assert_true(isnan(r->breakeven));
	assert_non_null(strstr(r->reason, "0.67")); /* the best speedup seen, 1/1.5 */
	spp_sweep_release(&sw);
}

static void test_pattern_of_layer(void **state)
{
	struct spp_layer_static s;
	struct spp_sweep_opts o;
	char name[32];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.cls = SPP_CLASS_NM;
	s.nm[0] = 0.5, s.nm[1] = 1.0, s.nm[2] = 1.0; /* 2:4 and 4:8, not 1:4 */
	spp_sweep_opts_init(&o);
	spp_breakeven_pattern(&s, &o);
	spp_sweep_pattern_name(&o, name, sizeof(name));
	assert_string_equal(name, "nm2_4");
	s.nm[0] = 1.0; /* 1:4 compliant: the sparsest */
	spp_breakeven_pattern(&s, &o);
	spp_sweep_pattern_name(&o, name, sizeof(name));
	assert_string_equal(name, "nm1_4");
	s.cls = SPP_CLASS_BLOCK;
	spp_breakeven_pattern(&s, &o);
	spp_sweep_pattern_name(&o, name, sizeof(name));
	assert_string_equal(name, "block4");
	s.cls = SPP_CLASS_CHANNEL;
	spp_breakeven_pattern(&s, &o);
	spp_sweep_pattern_name(&o, name, sizeof(name));
	assert_string_equal(name, "channel");
	s.cls = SPP_CLASS_DENSE;
	spp_breakeven_pattern(&s, &o);
	spp_sweep_pattern_name(&o, name, sizeof(name));
	assert_string_equal(name, "unstructured");
}

static struct spp_run run_of(const char *format, double median, double p10, double p90)
{
	struct spp_run r;

	memset(&r, 0, sizeof(r));
	r.backend = "cpu";
	snprintf(r.format, sizeof(r.format), "%s", format);
	r.status = SPP_RUN_OK;
	r.time = (struct spp_time_stats){median, p10, p90, 10};
	return r;
}

static void test_recommendation(void **state)
{
	struct spp_run runs[5];
	struct spp_layer_runs lr = {.runs = runs, .nruns = 0};
	struct spp_recommendation rec;

	(void)state;
	runs[0] = run_of("dense", 100, 95, 105);
	/* a tie: equal speedups go to the run listed first */
	runs[1] = run_of("csr", 50, 45, 55);
	runs[2] = run_of("bsr4", 50, 48, 52);
	/* a peer without a storage row is never recommended, even when fastest */
	runs[3] = run_of("librsb", 10, 9, 11);
	lr.nruns = 4;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "csr");
	assert_string_equal(rec.backend, "cpu");
	assert_true(fabs(rec.speedup - 2.0) < 1e-12);
	assert_true(fabs(rec.time_ns - 50) < 1e-12);

	/*
	 * a second backend against its own dense: cuda csr at 2.5x cuBLAS wins
	 * over cpu csr at 2x OpenBLAS, though cuBLAS is not in runs[0]; the
	 * inactive cuBLAS run itself is never a candidate
	 */
	runs[2] = run_of("dense", 10, 9, 11);
	runs[3] = run_of("csr", 4, 3.9, 4.5);
	runs[2].backend = runs[3].backend = "cuda";
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.backend, "cuda");
	assert_string_equal(rec.format, "csr");
	assert_true(fabs(rec.speedup - 2.5) < 1e-12);
	assert_true(rec.dense_ns == 10 && rec.time_ns == 4);
	assert_non_null(strstr(rec.reason, "over cuda dense"));
	/* without a timed cuda dense the cuda run has nothing to be measured against */
	runs[2].status = SPP_RUN_FAILED;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.backend, "cpu");
	assert_true(rec.dense_ns == 100);

	/* faster at the median but inside dense's spread: dense */
	runs[1] = run_of("csr", 90, 80, 96);
	lr.nruns = 2;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "dense");
	assert_true(rec.speedup == 1.0);
	assert_non_null(strstr(rec.reason, "spread"));

	/* just clear of it: chosen */
	runs[1] = run_of("csr", 90, 80, 94.9);
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "csr");

	/* slower: dense, naming the best */
	runs[1] = run_of("csr", 120, 110, 130);
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "dense");
	assert_non_null(strstr(rec.reason, "csr"));

	/* a failed run is not a candidate */
	runs[1] = run_of("csr", 10, 9, 11);
	runs[1].status = SPP_RUN_FAILED;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "dense");

	/* no timed dense baseline: no recommendation */
	runs[0].status = SPP_RUN_FAILED;
	assert_int_equal(spp_recommend_layer(&lr, &rec), -1);
}

/* Whether a diagnosis has a line containing what. */
static int has_line(const struct spp_diagnosis *d, const char *what)
{
	for (int i = 0; i < d->n; i++)
		if (strstr(d->line[i], what))
			return 1;
	return 0;
}

/*
 * A 64 x 64 F32 layer at 75% with nothing to say: K a multiple of 16,
 * 1:4 compliant, CSR indices (1024 x 4 + 65 x 4 bytes) smaller than the
 * values saved (3072 x 4).
 */
static void quiet_layer(struct spp_layer_static *s)
{
	memset(s, 0, sizeof(*s));
	s->counts.m = s->counts.k = 64;
	s->counts.nnz = 1024;
	s->numel = 4096;
	s->sparsity = 0.75;
	s->nm[0] = s->nm[1] = s->nm[2] = 1.0;
	s->cls = SPP_CLASS_NM;
	s->storage[SPP_ST_DENSE] = (struct spp_storage){1, 16384, 1, ""};
	s->storage[SPP_ST_CSR] = (struct spp_storage){1, 1024 * 8 + 65 * 4, 16384.0 / (1024 * 8 + 65 * 4), ""};
}

static void test_diagnosis(void **state)
{
	struct spp_layer_static s;
	struct spp_run runs[2];
	struct spp_layer_runs lr = {.runs = runs, .nruns = 2};
	struct spp_diagnosis d;

	(void)state;
	quiet_layer(&s);
	runs[0] = run_of("dense", 50000, 49000, 51000);
	runs[1] = run_of("csr", 40000, 39000, 41000);
	runs[0].bandwidth_gbs = 10, runs[1].bandwidth_gbs = 20;
	runs[0].bw_util = 0.1, runs[1].bw_util = 0.2;
	runs[0].bw_level = runs[1].bw_level = SPP_BW_L2;
	runs[0].imbalance = NAN, runs[1].imbalance = 1.1;
	spp_diagnose_layer(&s, &lr, &d);
	if (d.n)
		fail_msg("unexpected: %s", d.line[0]);

	/* memory-bound: 85 of the L2's 100 GB/s; not without a calibrated level */
	runs[1].bandwidth_gbs = 85;
	runs[1].bw_util = 0.85;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.line[0], "csr is memory-bound"));
	assert_non_null(strstr(d.line[0], "85% of the calibrated L2 read bandwidth (100.0 GB/s)"));
	runs[1].bw_util = NAN;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);
	runs[1].bw_util = 0.79; /* below 80% */
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);

	/* imbalance above 1.2, and not at 1.2 */
	runs[1].imbalance = 1.35;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "imbalanced") && has_line(&d, "1.35x"));
	runs[1].imbalance = 1.2;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);

	/* too small: dense under 10 us */
	runs[0].time.median = 3200;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "too small") && has_line(&d, "3.2 us"));
	runs[0].time.median = 10000;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);
	/* a static report: no run rules */
	runs[0].time.median = 3200;
	spp_diagnose_layer(&s, NULL, &d);
	assert_int_equal(d.n, 0);

	/* N:M not applicable although 75% allows 2:4: 12.5% of groups violate */
	s.nm[1] = 0.875;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 not applicable: 12.5% of groups of 4"));
	/*
	 * N:M along the wrong axis: every group along M complies (runs give
	 * nm_along_m), 12.5% along K do not; not when along M fails too
	 * (then it is the plain not-applicable sentence), nor when K complies.
	 */
	for (int p = 0; p < SPP_NNM; p++)
		lr.nm_along_m[p] = 0.5;
	lr.nm_along_m[1] = 1.0;
	runs[0].time.median = 50000;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 along the wrong axis") && has_line(&d, "12.5% of groups of 4 along K"));
	lr.nm_along_m[1] = 0.99;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 not applicable"));
	lr.nm_along_m[1] = 1.0;
	s.nm[1] = 1.0;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);
	s.nm[1] = 0.875;
	/* at 40% sparsity 2:4 is impossible anyway: nothing to say */
	s.sparsity = 0.4;
	spp_diagnose_layer(&s, NULL, &d);
	assert_int_equal(d.n, 0);
	quiet_layer(&s);

	/* K not a multiple of 4, then of 16 only */
	s.counts.k = 30;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "K = 30 is not a multiple of 4"));
	s.counts.k = 40;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "K = 40 is not a multiple of 16"));
	quiet_layer(&s);

	/*
	 * CSR metadata: at 20% sparsity (nnz 3277), indices 3277 x 4 + 260 =
	 * 13368 bytes against 819 x 4 = 3276 bytes of values saved.
	 */
	s.counts.nnz = 3277;
	s.sparsity = 1 - 3277.0 / 4096;
	s.storage[SPP_ST_CSR].bytes = 3277 * 8 + 65 * 4;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "csr index metadata (13368 bytes)") &&
		    has_line(&d, "(3276 bytes)"));
}

static cJSON *parse_out(const struct harness_run *r)
{
	cJSON *j = cJSON_Parse(r->out);

	if (!j)
		fail_msg("not JSON: %.300s", r->out);
	return j;
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

static void test_sweep_command(void **state)
{
	struct harness_run r;
	const char *args[] = {"sweep", "--shape", "64x64x8", "--pattern", "unstructured",
			      "--formats", "csr", "--time-budget", "0.01", "--format", "json", NULL};
	const cJSON *shape, *results, *res, *be;
	cJSON *j;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 0)
		fail_msg("sweep: %s", r.err);
	j = parse_out(&r);
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

/* An N:M sweep: the one sparsity 1 - N/M, and of the N:M formats only its own. */
static void test_sweep_nm(void **state)
{
	struct harness_run r;
	const char *args[] = {"sweep", "--shape", "32x32x4", "--pattern", "nm2_4", "--time-budget",
			      "0.005", "--format", "json", NULL};
	const cJSON *res;
	cJSON *j;
	int nm24 = 0, n = 0;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 0)
		fail_msg("sweep: %s", r.err);
	j = parse_out(&r);
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

static void test_sweep_usage(void **state)
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
static void test_analyze_breakeven(void **state)
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
			snprintf(want, sizeof(want), "2:4 not applicable: %.1f%% of groups of 4",
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
static void test_schema_valid(void **state)
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
static void test_text_column(void **state)
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
static void test_wrong_axis(void **state)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refinement),
		cmocka_unit_test(test_pattern_of_layer),
		cmocka_unit_test(test_recommendation),
		cmocka_unit_test(test_diagnosis),
		cmocka_unit_test(test_wrong_axis),
		cmocka_unit_test(test_sweep_command),
		cmocka_unit_test(test_sweep_nm),
		cmocka_unit_test(test_sweep_usage),
		cmocka_unit_test(test_analyze_breakeven),
		cmocka_unit_test(test_text_column),
		cmocka_unit_test(test_schema_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
