/*
 * Speedup against N (profiler/sweep_n.c; test_sweep.c holds the list):
 * wins and crossings of given curves, the sweep on a model of time whose
 * crossover is known, and `spprof sweep --n` end to end.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kernels/kernels.h"
#include "profiler/sweep.h"
#include "reports/report.h"
#include "test/harness.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

void test_nsweep_derive(void **state);
void test_nsweep_model(void **state);
void test_nsweep_cli(void **state);
void test_nsweep_analyze(void **state);

static void curve(struct spp_nsweep_result *r, const double *sp, int n)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < n; i++) {
		r->n[i] = INT64_C(1) << i;
		r->curve[i].speedup = sp[i];
	}
	r->npoints = n;
	spp_nsweep_derive(r);
}

void test_nsweep_derive(void **state)
{
	/* N = 1, 2, 4, ..., 32: faster from between 2 and 4 to between 16 and 32 */
	static const double up_down[] = {0.5, 0.8, 1.2, 1.5, 1.3, 0.9};
	static const double never[] = {0.5, 0.9, 1.0};
	static const double two_runs[] = {1.5, 0.5, 2.0, NAN, 3.0};
	struct spp_nsweep_result r;

	(void)state;
	curve(&r, up_down, 6);
	assert_string_equal(r.wins, "4-16");
	assert_int_equal(r.ncross, 2);
	/* linear in speedup against log N: halfway from 2 to 4 is 2 sqrt 2 */
	NEAR(r.cross[0].n, 2 * sqrt(2.0));
	assert_int_equal(r.cross[0].faster_above, 1);
	NEAR(r.cross[1].n, 16 * pow(2.0, 0.75));
	assert_int_equal(r.cross[1].faster_above, 0);

	/* speedup exactly 1 is not a win */
	curve(&r, never, 3);
	assert_string_equal(r.wins, "");
	assert_int_equal(r.ncross, 0);

	/* a point with no time breaks a run and has no crossing on either side */
	curve(&r, two_runs, 5);
	assert_string_equal(r.wins, "1, 4, 16");
	assert_int_equal(r.ncross, 2);
	NEAR(r.cross[0].n, sqrt(2.0));
	assert_int_equal(r.cross[0].faster_above, 0);
	NEAR(r.cross[1].n, pow(2.0, 4.0 / 3.0));
}

/*
 * The model: dense takes 2 n, "fixed" 64 + n (so it crosses 1 at N = 64,
 * slower below), "slow" 3 n (never faster), "absent" never runs.
 */
static int model_time(void *ctx, double s, int64_t n, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, double (*ci)[2],
		      char (*reasons)[256], struct spp_error *err)
{
	int *calls = ctx;

	(void)s, (void)err;
	(*calls)++;
	*t_dense_ns = 2.0 * (double)n;
	for (int f = 0; f < nformats; f++) {
		if (strcmp(formats[f]->key, "fixed") == 0) {
			t_ns[f] = 64.0 + (double)n;
			/* an interval for "fixed" only: the others' stay unknown */
			ci[f][0] = 0.5;
			ci[f][1] = 0.5 + (double)n;
		} else if (strcmp(formats[f]->key, "slow") == 0) {
			t_ns[f] = 3.0 * (double)n;
		} else {
			t_ns[f] = NAN;
			snprintf(reasons[f], 256, "not_applicable: cannot hold W");
		}
	}
	return 0;
}

void test_nsweep_model(void **state)
{
	static const int64_t ns[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
	struct spp_format_ops fx = {.key = "fixed"}, sl = {.key = "slow"}, ab = {.key = "absent"};
	const struct spp_format_ops *formats[] = {&fx, &sl, &ab};
	struct spp_sweep_opts o;
	int calls = 0;
	struct spp_sweep_timer t = {model_time, &calls};
	struct spp_nsweep s;
	struct spp_error err = {0};
	static const int64_t bad[] = {4, 2};
	cJSON *j;

	(void)state;
	spp_sweep_opts_init(&o);
	o.m = o.k = 64;
	assert_int_equal(spp_nsweep_run(&o, 0.9, ns, 9, formats, 3, &t, &s, &err), 0);
	assert_int_equal(calls, 9);    /* one timing of every format a N */
	assert_int_equal(s.nresults, 3);
	NEAR(s.sparsity, 0.9);
	assert_string_equal(s.pattern, "unstructured");
	/* 64 + n against 2 n: 1 at N = 64 exactly, faster above it */
	assert_string_equal(s.results[0].wins, "128-256");
	assert_int_equal(s.results[0].ncross, 1);
	NEAR(s.results[0].cross[0].n, 64);
	assert_int_equal(s.results[0].cross[0].faster_above, 1);
	NEAR(s.results[0].curve[8].speedup, 512.0 / 320.0);
	NEAR(s.results[0].curve[0].dense_time_ns, 2);
	/* each point keeps its timing's speedup interval, NAN where it had none */
	NEAR(s.results[0].curve[8].speedup_ci_low, 0.5);
	NEAR(s.results[0].curve[8].speedup_ci_high, 256.5);
	assert_true(isnan(s.results[1].curve[0].speedup_ci_low));
	assert_string_equal(s.results[1].wins, "");
	assert_int_equal(s.results[1].ncross, 0);
	assert_true(isnan(s.results[2].curve[0].speedup));
	assert_string_equal(s.results[2].reason, "no time at N = 1: not_applicable: cannot hold W");

	j = spp_nsweep_json(&s);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "spprof.nsweep/1");
	{
		const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "results"), 0);
		const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "crossings"), 0);
		const cJSON *r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "results"), 1), *p;

		assert_string_equal(cJSON_GetObjectItem(r0, "wins")->valuestring, "128-256");
		NEAR(cJSON_GetObjectItem(c0, "n")->valuedouble, 64);
		assert_string_equal(cJSON_GetObjectItem(c0, "faster")->valuestring, "above");
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r0, "curve")), 9);
		p = cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "curve"), 2);
		NEAR(cJSON_GetObjectItem(p, "speedup_ci_high")->valuedouble, 4.5);
		p = cJSON_GetArrayItem(cJSON_GetObjectItem(r1, "curve"), 0);
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "speedup_ci_low")));
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(r1, "wins")));
	}
	cJSON_Delete(j);
	spp_nsweep_release(&s);

	/* an N:M pattern fixes the sparsity; bad lists are refused */
	o.pattern = SPP_SYNTH_NM;
	o.nm_n = 2;
	o.nm_m = 4;
	assert_int_equal(spp_nsweep_run(&o, 0.9, ns, 2, formats, 1, &t, &s, &err), 0);
	NEAR(s.sparsity, 0.5);
	assert_string_equal(s.pattern, "nm2_4");
	spp_nsweep_release(&s);
	assert_int_equal(spp_nsweep_run(&o, 0.5, bad, 2, formats, 1, &t, &s, &err), SPP_E_USAGE);
	assert_null(s.results);
	assert_int_equal(spp_nsweep_run(&o, 0.5, ns, 0, formats, 1, &t, &s, &err), SPP_E_USAGE);
}

/* exit status of `spprof sweep ARGS`; *out its stdout (freed by the caller) when wanted */
static int sweep(const char *const *args, char **out)
{
	struct harness_run r;
	int st;

	assert_int_equal(harness_spprof(&r, args), 0);
	st = r.status;
	if (out) {
		*out = r.out;
		r.out = NULL;
	}
	if (st != 0 && st != 2)
		fail_msg("exit %d: %s", st, r.err);
	harness_run_free(&r);
	return st;
}

void test_nsweep_cli(void **state)
{
	const char *ok[] = {"sweep", "--shape", "96x80", "--n", "1,8,33", "--sparsity", "0.9",
			    "--formats", "csr,bitmask", "--time-budget", "0.002", "--format", "json", NULL};
	const char *usage[][12] = {
		{"sweep", "--shape", "96x80", "--n", "1,8", NULL},                  /* no --sparsity */
		{"sweep", "--shape", "96x80x4", "--n", "1,8", "--sparsity", "0.5", NULL},
		{"sweep", "--shape", "96x80", "--n", "8,1", "--sparsity", "0.5", NULL},
		{"sweep", "--shape", "96x80", NULL},                                /* MxK without --n */
		{"sweep", "--shape", "96x80x4", "--sparsity", "0.5", NULL},
		{"sweep", "--shape", "96x80", "--n", "1", "--sparsity", "1", NULL},
		{"sweep", "--shape", "96x80", "--n", "1", "--pattern", "nm2_4", "--sparsity", "0.9", NULL},
	};
	char *out = NULL;
	cJSON *j, *res;

	(void)state;
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++)
		if (sweep(usage[i], NULL) != 2)
			fail_msg("usage case %zu did not exit 2", i);
	assert_int_equal(sweep(ok, &out), 0);
	j = cJSON_Parse(out);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "spprof.nsweep/1");
	res = cJSON_GetObjectItem(j, "results");
	assert_int_equal(cJSON_GetArraySize(res), 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(res, i), "curve");

		assert_int_equal(cJSON_GetArraySize(c), 3);
		assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(c, 2), "n")->valuedouble, 33);
		/* every point verified and timed: a speedup, never a stand-in */
		for (int p = 0; p < 3; p++)
			assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(c, p), "speedup")->valuedouble > 0);
	}
	/* the dense choice of each N */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "dense")), 3);
	/* warm by default: the cache state is said */
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "cold")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cold_method")));
	cJSON_Delete(j);
	free(out);
	{
		/* --cold: caches evicted before each timed run, and how */
		const char *cold[] = {"sweep", "--shape", "32x48", "--n", "1,4", "--sparsity", "0.5",
				      "--formats", "csr", "--time-budget", "0.002", "--cold",
				      "--format", "json", NULL};
		const char *text[] = {"sweep", "--shape", "32x48", "--n", "1", "--sparsity", "0.5",
				      "--formats", "csr", "--time-budget", "0.002", "--cold", NULL};

		assert_int_equal(sweep(cold, &out), 0);
		j = cJSON_Parse(out);
		assert_non_null(j);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "cold")));
		assert_non_null(strstr(cJSON_GetObjectItem(j, "cold_method")->valuestring, "MiB read"));
		cJSON_Delete(j);
		free(out);
		assert_int_equal(sweep(text, &out), 0);
		assert_non_null(strstr(out, "caches: cold, "));
		free(out);
	}
	{
		const char *text[] = {"sweep", "--shape", "64x64", "--n", "1,4", "--pattern", "nm2_4",
				      "--time-budget", "0.002", NULL};

		assert_int_equal(sweep(text, &out), 0);
		assert_non_null(strstr(out, "speedup against N, 64x64 nm2_4 at 50.0%"));
		assert_non_null(strstr(out, "wins at N"));
		free(out);
	}
}

/* analyze --n-sweep: every layer with runs gets its own curve at each N; nothing without it */
void test_nsweep_analyze(void **state)
{
	char *m = harness_join(getenv("SPP_SAMPLE_MODELS"), "bert_block_nm2_4.safetensors");
	const char *args[] = {"analyze", m, "--n-sweep", "1,8", "--formats", "csr,nm2_4", "--repeat",
			      "1", "--time-budget", "0.01", "--format", "json", "--quiet", NULL};
	const char *plain[] = {"analyze", m, "--formats", "csr", "--repeat", "1", "--time-budget",
			       "0.01", "--format", "json", "--quiet", NULL};
	const char *bad[] = {"analyze", m, "--n-sweep", "8,1", NULL};
	struct harness_run r;
	cJSON *j;
	const cJSON *l;
	int layers = 0;

	(void)state;
	assert_int_equal(harness_spprof(&r, bad), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--n-sweep wants ascending"));
	harness_run_free(&r);
	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(j, "layers")) {
		const cJSON *ns = cJSON_GetObjectItem(l, "n_sweep");

		if (!cJSON_GetObjectItem(l, "runs") || !cJSON_GetArraySize(cJSON_GetObjectItem(l, "runs")))
			continue;
		layers++;
		assert_non_null(ns);
		for (int f = 0; f < 2; f++) {
			const cJSON *e = cJSON_GetObjectItem(ns, f ? "cpu/nm2_4" : "cpu/csr");
			const cJSON *c = cJSON_GetObjectItem(e, "curve");

			assert_non_null(e);
			assert_int_equal(cJSON_GetArraySize(c), 2);
			assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(c, 1), "n")->valuedouble, 8);
			assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(c, 0), "speedup")->valuedouble > 0);
		}
	}
	assert_true(layers > 0);
	cJSON_Delete(j);
	harness_run_free(&r);
	assert_int_equal(harness_spprof(&r, plain), 0);
	assert_int_equal(r.status, 0);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(j, "layers"))
		assert_null(cJSON_GetObjectItem(l, "n_sweep"));
	cJSON_Delete(j);
	harness_run_free(&r);
	free(m);
}
