/*
 * The dense baseline (kernels/dense/, profiler/run_dense.c,
 * profiler/plausible.c): --dense parsing, the probe that keeps a crashing
 * or wrong kernel set out, the choice of the fastest verified candidate
 * (never a wrong one), one choice per shape, the plausibility warnings,
 * and, end to end, OPENBLAS_CORETYPE=Prescott not becoming the baseline
 * where another candidate is faster, and bw_util <= 1 on every run of the
 * sample models after a calibration.
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

#include "kernels/dense/dense.h"
#include "profiler/analyze.h"
#include "profiler/plausible.h"
#include "profiler/run.h"
#include "profiler/run_dense.h"
#include "test/harness.h"

static void test_parse(void **state)
{
	struct spp_dense_want w;
	struct spp_error err = {0};
	char st[256];

	(void)state;
	assert_int_equal(spp_dense_parse("openblas,onednn,blis", &w, st, sizeof(st), &err), 0);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.names[1], "onednn");
	assert_int_equal(spp_dense_parse("openblas:Haswell", &w, st, sizeof(st), &err), 0);
	assert_string_equal(w.names[0], "openblas:Haswell");
	assert_int_equal(spp_dense_parse("mkl", &w, st, sizeof(st), &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "unknown library 'mkl'"));
	assert_int_equal(spp_dense_parse("onednn:avx2", &w, st, sizeof(st), &err), SPP_E_USAGE);
	assert_int_equal(spp_dense_parse("openblas:", &w, st, sizeof(st), &err), SPP_E_USAGE);
	assert_int_equal(spp_dense_parse("blis,blis", &w, st, sizeof(st), &err), SPP_E_USAGE);
	assert_int_equal(spp_dense_parse(",", &w, st, sizeof(st), &err), SPP_E_USAGE);
}

/* Unknown names exit 2 with one line, in every command that takes --dense. */
static void test_cli_usage(void **state)
{
	static const char *const cmds[][6] = {
		{"analyze", "MODEL", "--dense", "openblas,mkl", NULL},
		{"sweep", "--shape", "64x64x8", "--dense", "cublas", NULL},
		{"info", "--dense", "onednn:x", NULL},
	};
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");

	(void)state;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *args[6];
		struct harness_run r;

		for (int a = 0; a < 6; a++)
			args[a] = cmds[i][a] && strcmp(cmds[i][a], "MODEL") == 0 ? model : cmds[i][a];
		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_int_equal(harness_count_lines(r.err), 1);
		assert_non_null(strstr(r.err, "--dense"));
		harness_run_free(&r);
	}
	free(model);
}

/* A kernel set the library does not have, and one this CPU cannot run, are caught. */
static void test_probe(void **state)
{
	struct spp_dense_want w;
	struct spp_dense_set s;
	struct spp_error err = {0};
	char st[256], *user;

	(void)state;
	user = getenv("OPENBLAS_CORETYPE") ? strdup(getenv("OPENBLAS_CORETYPE")) : NULL;
	assert_int_equal(spp_dense_parse("openblas,openblas:NoSuchCore,openblas:SkylakeX", &w, st,
					 sizeof(st), &err), 0);
	assert_int_equal(spp_dense_set_open(&s, &w, spp_isa_detect(), &err), 0);
	/* the three asked for, then a GEMV-per-column companion of each usable one */
	assert_int_equal(s.n, 3 + s.c[0].ok + s.c[2].ok);
	assert_true(s.c[3].by_columns);
	assert_string_equal(s.c[3].name, "openblas/gemv");
	assert_true(s.c[0].ok);
	assert_string_equal(s.c[0].name, "openblas");
	assert_false(s.c[1].ok);
	assert_non_null(strstr(s.c[1].reason, "no core 'NoSuchCore'"));
	if (spp_isa_detect() >= SPP_ISA_AVX512) {
		/* the core runs here: a copy of its own, on its own kernels */
		assert_true(s.c[2].ok);
		assert_string_equal(s.c[2].kernel, "SkylakeX");
		assert_string_equal(s.c[2].env, "OPENBLAS_CORETYPE=SkylakeX");
	} else {
		/* AVX-512 kernels on a CPU without: the probe dies, this process does not */
		assert_false(s.c[2].ok);
		assert_non_null(strstr(s.c[2].reason, "SIGILL"));
	}
	/* the variants' variable is as the process had it */
	if (user)
		assert_string_equal(getenv("OPENBLAS_CORETYPE"), user);
	else
		assert_null(getenv("OPENBLAS_CORETYPE"));
	free(user);
	spp_dense_set_close(&s);
}

/* ---- a deliberately wrong candidate, and a slow right one ---- */

static int fake_open(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	(void)c, (void)variant, (void)err;
	return SPP_OK;
}

/* Fast and wrong: half of each output. */
static void wrong_gemm(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		       float *y, int64_t n, int threads)
{
	(void)c, (void)threads;
	spp_reference_gemm(w, x, y, n);
	for (int64_t i = 0; i < w->m * n; i++)
		y[i] *= 0.5f;
}

static const struct spp_dense_lib wrong_lib = {
	"wrong", "Wrong", NULL, fake_open, NULL, wrong_gemm, NULL, NULL, 0,
};

static void add_fake(struct spp_dense_set *s, const struct spp_dense_lib *lib, const char *name)
{
	struct spp_dense_cand *c = &s->c[s->n++];

	memset(c, 0, sizeof(*c));
	c->lib = lib;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->version, sizeof(c->version), "0");
	snprintf(c->kernel, sizeof(c->kernel), "test");
	c->ok = 1;
	c->pool = SPP_POOL_OMP;
}

static float *random_w(int64_t m, int64_t k, double density, uint64_t seed)
{
	float *w = malloc(sizeof(float) * (size_t)(m * k));

	for (int64_t i = 0; i < m * k; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		w[i] = (double)(seed >> 11) / 9007199254740992.0 < density
			       ? (float)((int)(seed >> 40 & 15) - 7) / 8.0f : 0.0f;
	}
	return w;
}

static void test_wrong_candidate_never_chosen(void **state)
{
	struct spp_dense_want want;
	struct spp_dense_set set;
	struct spp_dense_memo memo = {0};
	struct spp_run_opts ro;
	struct spp_layer_runs a = {0}, b = {0};
	struct spp_error err = {0};
	const struct spp_format_ops *csr = spp_cpu_format_find("csr");
	float *wv = random_w(96, 80, 0.3, 5);
	struct spp_matrix w = {96, 80, wv};
	uint64_t nnz = 0;
	int real = 0;
	char st[64];

	(void)state;
	for (int64_t i = 0; i < 96 * 80; i++)
		nnz += wv[i] != 0;
	assert_int_equal(spp_dense_parse("openblas", &want, st, sizeof(st), &err), 0);
	assert_int_equal(spp_dense_set_open(&set, &want, spp_isa_detect(), &err), 0);
	/* OpenBLAS as loaded, and its better core where it runs a lesser one: timed at N = 16 */
	for (int i = 0; i < set.n; i++)
		real += set.c[i].ok && !set.c[i].by_columns;
	assert_true(real >= 1);
	add_fake(&set, &wrong_lib, "wrong");
	spp_run_opts_init(&ro);
	ro.dense = &set;
	ro.dense_memo = &memo;
	ro.bench.repeat = 5;
	assert_int_equal(spp_matrix_measure(&w, 16, nnz, 96.0 * 80 / (double)nnz, "first", &csr, 1, &ro, &a,
					    &err), 0);
	assert_int_equal(a.dense.nt, real + 1);
	assert_string_equal(a.dense.t[real].name, "wrong");
	assert_int_equal(a.dense.t[real].status, SPP_RUN_FAILED);
	assert_non_null(strstr(a.dense.t[real].reason, "double-precision reference"));
	assert_int_equal(a.dense.t[real].time.repeats, 0);
	assert_true(a.dense.winner >= 0 && a.dense.winner < real);
	assert_non_null(strstr(a.runs[0].candidate, "openblas"));
	assert_string_equal(a.runs[0].candidate, a.dense.t[a.dense.winner].name);
	assert_int_equal(a.runs[0].status, SPP_RUN_OK);
	/* the format was checked against the right result, not the wrong one */
	assert_int_equal(a.runs[1].status, SPP_RUN_OK);
	assert_true(a.runs[1].speedup > 0);
	assert_false(a.dense_shared);

	/* the same shape again: the remembered choice, only the winner timed */
	assert_int_equal(spp_matrix_measure(&w, 16, nnz, 96.0 * 80 / (double)nnz, "second", &csr, 1, &ro, &b,
					    &err), 0);
	assert_true(b.dense_shared);
	assert_string_equal(b.dense.measured_on, "first");
	assert_string_equal(b.runs[0].candidate, a.runs[0].candidate);
	assert_true(b.runs[0].time.repeats == 5);
	spp_layer_runs_release(&a);
	spp_layer_runs_release(&b);

	/* only wrong candidates: the baseline fails and so does every format's check */
	set.n = 0;
	add_fake(&set, &wrong_lib, "wrong");
	ro.dense_memo = NULL;
	assert_int_equal(spp_matrix_measure(&w, 16, nnz, 0, "third", &csr, 1, &ro, &a, &err), 0);
	assert_int_equal(a.runs[0].status, SPP_RUN_FAILED);
	assert_non_null(strstr(a.runs[0].reason, "no dense candidate computed right"));
	assert_int_equal(a.runs[1].status, SPP_RUN_FAILED);
	spp_layer_runs_release(&a);
	spp_dense_memo_free(&memo);
	spp_dense_set_close(&set);
	free(wv);
}

/* The rule that picks a CUDA baseline among the vendor GEMMs of a precision. */
static void test_fastest_run(void **state)
{
	struct spp_run r[4];
	int want[4] = {1, 1, 0, 1};

	(void)state;
	for (int i = 0; i < 4; i++) {
		spp_run_init(&r[i], "cuda", "x");
		r[i].time = (struct spp_time_stats){100.0 - 10 * i, 0, 0, 5, 0, 0};
	}
	/* 3 is the fastest wanted; 2 is faster than 1 but not of the precision */
	assert_int_equal(spp_fastest_run(r, want, 4), 3);
	r[3].status = SPP_RUN_FAILED;
	assert_int_equal(spp_fastest_run(r, want, 4), 1);
	r[1].time.repeats = 0;
	assert_int_equal(spp_fastest_run(r, want, 4), 0);
	want[0] = 0;
	assert_int_equal(spp_fastest_run(r, want, 4), -1);
}

/* ---- plausibility ---- */

struct fake_analysis {
	struct spp_analysis a;
	struct spp_layer layer;
	struct spp_layer_static stat;
	struct spp_layer_runs runs;
	struct spp_run run[2];
	struct spp_machine m;
};

static void fake_init(struct fake_analysis *f, double eff, double dense_ns)
{
	memset(f, 0, sizeof(*f));
	f->layer.name = "fc1";
	f->layer.view.m = 1024;
	f->layer.view.k = 1024;
	f->layer.n = 64;
	f->m.ncaches = 3;
	f->m.caches[0] = (struct spp_cache_level){1, "data", 32 << 10, 8, 64, 1};
	f->m.caches[1] = (struct spp_cache_level){2, "unified", 512 << 10, 8, 64, 1};
	f->m.caches[2] = (struct spp_cache_level){3, "unified", 32 << 20, 16, 64, 2};
	f->m.have_calibration = 1;
	f->m.cal.threads = 1;
	f->m.cal.peak_gflops = 100;
	for (int l = 0; l < SPP_BW_LEVELS; l++)
		f->m.cal.level_gbs[l] = 200.0 / (l + 1);
	spp_run_init(&f->run[0], "cpu", "dense");
	spp_run_init(&f->run[1], "cpu", "csr");
	snprintf(f->run[0].library, sizeof(f->run[0].library), "Test BLAS 1 (x)");
	f->run[0].time = (struct spp_time_stats){dense_ns, dense_ns, dense_ns, 10, 0, 0};
	f->run[0].bytes_moved = 4.0 * (1024 * 1024 + 2 * 1024 * 64);
	f->run[1].time = (struct spp_time_stats){dense_ns / 15, dense_ns / 15, dense_ns / 15, 10, 0, 0};
	f->run[1].bytes_moved = 400 * 1024; /* in L2, where dense's 4.5 MiB is not */
	f->run[1].speedup = 15;
	f->run[1].efficiency = eff;
	f->runs.runs = f->run;
	f->runs.nruns = 2;
	f->a.layers = &f->layer;
	f->a.stats = &f->stat;
	f->a.runs = &f->runs;
	f->a.nlayers = 1;
	f->a.machine = &f->m;
	f->a.record.settings.threads = 1;
}

static void fake_fini(struct fake_analysis *f)
{
	for (int i = 0; i < f->a.nwarnings; i++)
		free(f->a.warnings[i].message);
	free(f->a.warnings);
}

static int warned(const struct fake_analysis *f, const char *what)
{
	for (int i = 0; i < f->a.nwarnings; i++)
		if (strstr(f->a.warnings[i].message, what))
			return 1;
	return 0;
}

static void test_plausibility(void **state)
{
	struct fake_analysis f;
	struct spp_error err = {0};
	struct spp_baseline_summary bs;
	/* 1024x1024x64 dense: 134 MFLOP; at 1.68 ms 80 GFLOP/s, 80 % of the peak */
	double good = 2.0 * 1024 * 1024 * 64 / 80.0, weak = 2.0 * 1024 * 1024 * 64 / 20.0;

	(void)state;
	/* a normal run on a good baseline: nothing to say */
	fake_init(&f, 1.0, good);
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 0);
	spp_baseline_summarize(&f.a, &bs);
	assert_true(fabs(bs.share - 0.8) < 1e-9);
	assert_int_equal(bs.weak, 0);
	fake_fini(&f);

	/* faster than the FLOP ideal on a good baseline: a cache effect (its W fits in LLC) */
	fake_init(&f, 1.5, good);
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 1);
	assert_true(warned(&f, "'fc1': csr: efficiency 1.50 is above the FLOP ideal"));
	assert_true(warned(&f, "cache effect"));
	fake_fini(&f);

	/* the same on a baseline at 20 % of the peak: both warnings, the run's blames the baseline */
	fake_init(&f, 1.5, weak);
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 2);
	assert_true(warned(&f, "looks like a weak baseline: dense (Test BLAS 1 (x)) reaches 20% of the calibrated FMA peak"));
	assert_true(warned(&f, "'fc1' (1024x1024x64): the dense baseline Test BLAS 1 (x) reaches 20% of the calibrated FMA peak on a compute-bound shape"));
	spp_baseline_summarize(&f.a, &bs);
	assert_int_equal(bs.weak, 1);
	fake_fini(&f);

	/* at 1.2 exactly: not above */
	fake_init(&f, 1.2, good);
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 0);
	fake_fini(&f);

	/* a speedup interval wider than +-5 %: unstable, named with its interval */
	fake_init(&f, 1.0, good);
	f.run[1].speedup_ci_low = 13.5;
	f.run[1].speedup_ci_high = 15.1;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_true(warned(&f, "'fc1': unstable, the 95% interval wider than +-5%: csr 15.00x (13.50-15.10)"));
	assert_int_equal(f.a.warnings[0].code, SPP_WARN_UNSTABLE);
	fake_fini(&f);
	/* +-4 %: stable */
	fake_init(&f, 1.0, good);
	f.run[1].speedup_ci_low = 14.4;
	f.run[1].speedup_ci_high = 15.6;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 0);
	fake_fini(&f);

	/* a busy machine while timing: steal, or a load above the CPUs */
	fake_init(&f, 1.0, good);
	f.a.record.settings.steal_share = 0.1;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_true(warned(&f, "the machine was busy while timing: steal 10.0% of CPU time"));
	fake_fini(&f);
	fake_init(&f, 1.0, good);
	f.m.logical_cpus = 2;
	f.a.record.settings.load_start = 1.9;
	f.a.record.settings.load_end = 2.4;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 0);
	f.a.record.settings.load_end = 3.1;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_true(warned(&f, "load 1.90 to 3.10 on 2 CPUs"));
	fake_fini(&f);

	/* no calibration: the baseline cannot be judged, and the report says so */
	fake_init(&f, 1.0, weak);
	f.m.have_calibration = 0;
	assert_int_equal(spp_plausibility_warnings(&f.a, &err), 0);
	assert_int_equal(f.a.nwarnings, 1);
	assert_true(warned(&f, "not checked against the roofline"));
	fake_fini(&f);
}

/* ---- end to end ---- */

static cJSON *analyze_json(const char *model, const char *extra, struct harness_run *r)
{
	const char *args[] = {"analyze", model, "--threads", "1", "--time-budget", "0.05", "--format",
			      "json", "--quiet", extra, NULL};
	cJSON *j;

	assert_int_equal(harness_spprof(r, args), 0);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	j = cJSON_Parse(r->out);
	assert_non_null(j);
	return j;
}

static const cJSON *candidate(const cJSON *layer, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(layer, "dense_candidates"), "candidates"))
		if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring, name) == 0)
			return c;
	return NULL;
}

static double median(const cJSON *c)
{
	const cJSON *t = cJSON_GetObjectItem(c, "time_ns");

	return cJSON_IsObject(t) ? cJSON_GetObjectItem(t, "median")->valuedouble : NAN;
}

/*
 * OPENBLAS_CORETYPE=Prescott: respected (OpenBLAS runs its SSE3 kernels)
 * and reported, and on every shape where another candidate's median is
 * lower, OpenBLAS is not the baseline.
 */
static void test_forced_slow_core(void **state)
{
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "bert_block_unstructured90.safetensors");
	struct harness_run r;
	const cJSON *l, *m, *c;
	cJSON *j;
	int compared = 0, chosen = 0;

	(void)state;
	setenv("OPENBLAS_CORETYPE", "Prescott", 1);
	j = analyze_json(model, "--formats=csr", &r);
	unsetenv("OPENBLAS_CORETYPE");
	m = cJSON_GetObjectItem(j, "machine");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "dense_blas"), "core")->valuestring,
			    "Prescott");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "dense_blas"), "coretype_env")->valuestring,
			    "Prescott");
	/*
	 * spprof's own choice stands beside the user's lesser core, and every
	 * variant spprof chose loaded (a build without the best kernel set
	 * falls back to the next, as BLIS without skx does)
	 */
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "dense_candidates")) {
		const char *origin = cJSON_GetObjectItem(c, "origin")->valuestring;

		if (!origin || strncmp(origin, "spprof's choice", 15) != 0)
			continue;
		assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "ok");
		chosen += strncmp(cJSON_GetObjectItem(c, "name")->valuestring, "openblas:", 9) == 0 &&
			  strstr(origin, "was told Prescott") != NULL;
	}
	if (spp_isa_detect() >= SPP_ISA_AVX2)
		assert_true(chosen >= 1);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(j, "layers")) {
		const cJSON *ob = candidate(l, "openblas"), *dc = cJSON_GetObjectItem(l, "dense_candidates");
		const char *winner = cJSON_GetObjectItem(dc, "winner")->valuestring;
		const cJSON *c;
		double best_other = INFINITY;

		assert_non_null(ob);
		assert_non_null(strstr(cJSON_GetObjectItem(ob, "library")->valuestring, "Prescott"));
		/* the run names the library that won */
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "runs"), 0),
							"candidate")->valuestring, winner);
		cJSON_ArrayForEach(c, cJSON_GetObjectItem(dc, "candidates"))
			if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "openblas") != 0 &&
			    median(c) < best_other)
				best_other = median(c);
		if (best_other < median(ob)) {
			assert_string_not_equal(winner, "openblas");
			compared++;
		}
	}
	/* Prescott's kernels are several times slower than oneDNN's or BLIS's where those exist */
	if (!compared)
		print_message("note: no candidate beside OpenBLAS ran here (no oneDNN or BLIS)\n");
	cJSON_Delete(j);
	harness_run_free(&r);
	free(model);
}

/* After a calibration, no run of the sample models reads faster than its level allows. */
static void test_bw_util_bounded(void **state)
{
	static const char *const models[] = {"bert_block_unstructured90.safetensors", "bert_block_nm2_4.safetensors",
					     "bert_block_block4.safetensors", "mixed_cnn.safetensors"};
	char *dir = harness_tmpdir();
	/* a second per probe: its best of many reads, steady under a loaded CI machine */
	const char *cal[] = {"calibrate", "--threads", "1", "--seconds", "1", NULL};
	struct harness_run r;
	int runs = 0;

	(void)state;
	setenv("XDG_CACHE_HOME", dir, 1);
	assert_int_equal(harness_spprof(&r, cal), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	for (size_t i = 0; i < sizeof(models) / sizeof(*models); i++) {
		char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), models[i]);
		cJSON *j = analyze_json(model, "--counters=none", &r);
		const cJSON *l, *run;

		cJSON_ArrayForEach(l, cJSON_GetObjectItem(j, "layers"))
			cJSON_ArrayForEach(run, cJSON_GetObjectItem(l, "runs")) {
				const cJSON *u = cJSON_GetObjectItem(run, "bw_util");

				if (!cJSON_IsNumber(u))
					continue;
				runs++;
				if (!(u->valuedouble <= 1.0))
					fail_msg("%s: %s: bw_util %.3f > 1 (%s)", models[i],
						 cJSON_GetObjectItem(run, "format")->valuestring, u->valuedouble,
						 cJSON_GetObjectItem(run, "bw_level")->valuestring);
			}
		cJSON_Delete(j);
		harness_run_free(&r);
		free(model);
	}
	/* the calibration was in force: the check covered real figures */
	assert_true(runs > 50);
	unsetenv("XDG_CACHE_HOME");
	harness_rmtree(dir);
}

/*
 * The GEMV-per-column companions: one per candidate whose library has
 * them, computing W X right at small N, planned only at 2 <= N <= 8.
 */
static void test_by_columns(void **state)
{
	enum { M = 37, K = 29, N = 5 };
	struct spp_dense_set set;
	struct spp_error err = {0};
	float w[M * K], x[K * N], y[M * N], want[M * N];
	struct spp_matrix wm = {M, K, w};
	struct spp_dense_choice ch;
	int idx[SPP_DENSE_MAX], shared, companions = 0;

	(void)state;
	for (int i = 0; i < M * K; i++)
		w[i] = (float)((i * 7) % 11) - 5.0f;
	for (int i = 0; i < K * N; i++)
		x[i] = (float)((i * 5) % 9) / 4.0f - 1.0f;
	spp_reference_gemm(&wm, x, want, N);
	assert_int_equal(spp_dense_set_open(&set, NULL, spp_isa_detect(), &err), 0);
	for (int i = 0; i < set.n; i++) {
		const struct spp_dense_cand *c = &set.c[i];

		if (!c->by_columns)
			continue;
		companions++;
		assert_non_null(c->lib->gemv_cols);
		assert_non_null(strstr(c->name, "/gemv"));
		for (int t = 1; t <= 2; t++) {
			for (int j = 0; j < M * N; j++)
				y[j] = NAN;
			spp_dense_run(c, &wm, x, y, N, t);
			for (int j = 0; j < M * N; j++)
				assert_true(fabsf(y[j] - want[j]) <= 1e-4f * (1.0f + fabsf(want[j])));
		}
	}
	/* OpenBLAS is a dependency of the build: its companion is always there */
	assert_true(companions >= 1);
	for (int64_t n = 1; n <= 64; n *= 2) {
		int count = spp_dense_plan(&set, NULL, M, K, n, 1, "t", &ch, &shared, idx), with = 0;

		for (int j = 0; j < count; j++)
			with += set.c[idx[j]].by_columns;
		assert_int_equal(with, n >= 2 && n <= SPP_DENSE_COLS_MAX_N ? companions : 0);
	}
	spp_dense_set_close(&set);
}

/*
 * spprof's own GEMV ("spprof"): right on every ISA this CPU has, with row
 * and column tails (M, K not multiples of 4 or of a vector), at N = 1 and
 * as columns at N = 3, on 1 and 2 threads; planned only up to
 * SPP_DENSE_COLS_MAX_N.
 */
static void test_own_gemv(void **state)
{
	static const int64_t shapes[][3] = {{37, 29, 1}, {64, 96, 1}, {5, 33, 3}, {130, 200, 1}};
	static const char *const isas[] = {"portable", "avx2", "avx512"};
	struct spp_dense_want dw;
	struct spp_dense_set set;
	struct spp_error err = {0};
	char st[64];
	char *had = getenv("SPPROF_ISA") ? strdup(getenv("SPPROF_ISA")) : NULL;

	(void)state;
	assert_int_equal(spp_dense_parse("spprof", &dw, st, sizeof(st), &err), 0);
	for (int a = 0; a <= (int)spp_isa_cpu() && a < 3; a++) {
		/* the ISA is chosen as the candidate loads */
		setenv("SPPROF_ISA", isas[a], 1);
		assert_int_equal(spp_dense_set_open(&set, &dw, spp_isa_detect(), &err), 0);
		assert_int_equal(set.n, 1);
		assert_true(set.c[0].ok);
		assert_string_equal(set.c[0].name, "spprof");
		assert_string_equal(set.c[0].kernel, isas[a]);
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
			float *w = malloc((size_t)(m * k) * sizeof(float)), *x = malloc((size_t)(k * n) * sizeof(float));
			float *y = malloc((size_t)(m * n) * sizeof(float)), *want = malloc((size_t)(m * n) * sizeof(float));
			struct spp_matrix wm = {m, k, w};

			for (int64_t i = 0; i < m * k; i++)
				w[i] = (float)((i * 7) % 11) - 5.0f;
			for (int64_t i = 0; i < k * n; i++)
				x[i] = (float)((i * 5) % 9) / 4.0f - 1.0f;
			spp_reference_gemm(&wm, x, want, n);
			for (int t = 1; t <= 2; t++) {
				for (int64_t j = 0; j < m * n; j++)
					y[j] = NAN;
				spp_dense_run(&set.c[0], &wm, x, y, n, t);
				for (int64_t j = 0; j < m * n; j++)
					if (!(fabsf(y[j] - want[j]) <= 1e-4f * (1.0f + fabsf(want[j]))))
						fail_msg("%s, %lldx%lldx%lld, %d threads: y[%lld] %g, want %g", isas[a],
							 (long long)m, (long long)k, (long long)n, t, (long long)j, y[j], want[j]);
			}
			free(w), free(x), free(y), free(want);
		}
		spp_dense_set_close(&set);
	}
	assert_int_equal(spp_dense_set_open(&set, &dw, spp_isa_detect(), &err), 0);
	if (had)
		setenv("SPPROF_ISA", had, 1);
	else
		unsetenv("SPPROF_ISA");
	free(had);
	for (int64_t n = 1; n <= 64; n *= 2) {
		struct spp_dense_choice ch;
		int idx[SPP_DENSE_MAX], shared;

		assert_int_equal(spp_dense_plan(&set, NULL, 64, 64, n, 1, "t", &ch, &shared, idx),
				 n <= SPP_DENSE_COLS_MAX_N ? 1 : 0);
	}
	spp_dense_set_close(&set);
}

/* test_dense_lowp.c: the low-precision dense baselines */
int test_dense_lowp_main(void);

int main(int argc, char **argv)
{
	int rc;

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_cli_usage),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_wrong_candidate_never_chosen),
		cmocka_unit_test(test_fastest_run),
		cmocka_unit_test(test_plausibility),
		cmocka_unit_test(test_forced_slow_core),
		cmocka_unit_test(test_bw_util_bounded),
		cmocka_unit_test(test_by_columns),
		cmocka_unit_test(test_own_gemv),
	};

	if (argc > 1 && strcmp(argv[1], "--lowp") == 0)
		return test_dense_lowp_main();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rc | test_dense_lowp_main();
}
