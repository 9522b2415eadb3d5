/*
 * Breakeven and recommendation: the sweep's refinement on a deterministic
 * timing model, the pattern a layer sweeps, the recommendation rule and its
 * ties, `spprof sweep` end to end and `analyze --breakeven` on a sample
 * model (layers of one shape share one sweep), those end-to-end ones in
 * test_breakeven_cli.c. No timed assertions: the real runs are checked for
 * structure, never for speed.
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
#include "profiler/analyze.h"
#include "profiler/derive.h"
#include "profiler/diagnose.h"
#include "test/harness.h"

#define TD 1000.0 /* dense time of the model, ns */

/*
 * Format 0 ("slope"): time = TD * 2.4 * (1 - s), faster than dense above
 * s = 1 - 1/2.4 = 0.58333..., between grid points. Format 1 ("never"): always 1.5x slower than dense.
 */
static int model_time(void *ctx, double s, int64_t n, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, double (*ci)[2],
		      char (*reasons)[256], struct spp_error *err)
{
	(void)ctx;
	(void)n;
	(void)ci;
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
	r.time = (struct spp_time_stats){median, p10, p90, 10, 0, 0};
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

	/* with the speedup's interval: it decides, not the spreads */
	runs[1].speedup_ci_low = 0.98, runs[1].speedup_ci_high = 1.2;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "dense");
	assert_non_null(strstr(rec.reason, "interval"));
	runs[1].speedup_ci_low = 1.02;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "csr");
	assert_non_null(strstr(rec.reason, "1.02"));

	/* as many bytes as dense or more: only a real gain (1.11x here) is worth them */
	runs[0].bytes_moved = 1000, runs[1].bytes_moved = 1200;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "csr");
	runs[1] = run_of("bsr4", 96, 93, 97);
	runs[1].speedup_ci_low = 1.01, runs[1].speedup_ci_high = 1.06;
	runs[1].bytes_moved = 1200;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "dense");
	assert_non_null(strstr(rec.reason, "bytes"));
	/* fewer bytes: a gain clear of the noise is enough */
	runs[1].bytes_moved = 600;
	assert_int_equal(spp_recommend_layer(&lr, &rec), 0);
	assert_string_equal(rec.format, "bsr4");
	runs[0].bytes_moved = 0;

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

	/* bandwidth-bound: 85 of the L2's 100 GB/s; not without a calibrated level */
	runs[1].bandwidth_gbs = 85;
	runs[1].bw_util = 0.85;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.line[0], "csr is L2-resident and bandwidth-bound"));
	assert_non_null(strstr(d.line[0], "85% of the calibrated L2 read bandwidth (100.0 GB/s)"));
	runs[1].bw_level = SPP_BW_DRAM;
	spp_diagnose_layer(&s, &lr, &d);
	assert_non_null(strstr(d.line[0], "csr is DRAM-bound: 85.0 GB/s"));
	runs[1].bw_level = SPP_BW_L2;
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
	s.nm[1] = 0.875, s.counts.nm_groups[1] = 8, s.counts.nm_ok[1] = 7;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 not applicable: 12.5% of groups of 4"));
	/* a few violating groups are never "0.0%" */
	s.nm[1] = 1 - 3.0 / 40960, s.counts.nm_groups[1] = 40960, s.counts.nm_ok[1] = 40957;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 not applicable: < 0.1% (3 of 40960) of groups of 4"));
	s.nm[1] = 0.875, s.counts.nm_groups[1] = 8, s.counts.nm_ok[1] = 7;
	/*
	 * N:M along the wrong axis: every group along M complies (the static
	 * scan's nm_m), 12.5% along K do not; not when along M fails too
	 * (then it is the plain not-applicable sentence), nor when K complies.
	 */
	for (int p = 0; p < SPP_NNM; p++)
		s.nm_m[p] = 0.5;
	s.nm_m[1] = 1.0;
	runs[0].time.median = 50000;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 along the wrong axis") && has_line(&d, "12.5% of groups of 4 along K"));
	s.nm_m[1] = 0.99;
	spp_diagnose_layer(&s, &lr, &d);
	assert_true(d.n == 1 && has_line(&d, "2:4 not applicable"));
	s.nm_m[1] = 1.0;
	s.nm[1] = 1.0;
	spp_diagnose_layer(&s, &lr, &d);
	assert_int_equal(d.n, 0);
	s.nm[1] = 0.875, s.counts.nm_groups[1] = 8, s.counts.nm_ok[1] = 7;
	s.nm_m[1] = 0.5;
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
	/*
	 * a dense layer (no format is a candidate) gets neither the csr note nor
	 * the padding one: a dense face model had one pair on every layer
	 * (issue 46 item 9)
	 */
	s.counts.nnz = 4096;
	s.sparsity = 0;
	s.storage[SPP_ST_CSR].bytes = 4096 * 8 + 65 * 4;
	s.counts.k = 30;
	spp_diagnose_layer(&s, NULL, &d);
	assert_int_equal(d.n, 0);
	quiet_layer(&s);

	/*
	 * 60 of 64 rows zero, the 4 left dense (issue 46 item 5: 1,146 of 1,152
	 * rows zero was advised an N:M transpose): the shrink, and no N:M note
	 */
	s.counts.zero_rows = 60, s.counts.nnz = 256, s.sparsity = 1 - 256.0 / 4096;
	s.gran[SPP_GRAN_ROW] = (struct spp_granularity){.defined = 1, .units = 64, .zero = 60,
							 .zeros_share = 1.0};
	s.nm[1] = 0.5, s.nm_m[1] = 1.0, s.counts.nm_groups[1] = 1024, s.counts.nm_ok[1] = 512;
	s.flops_dense = 2.0 * 64 * 64 * 128;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(has_line(&d, "remove the 60 zero output rows: the layer becomes 4x64 and dense, "
				 "dense FLOPs and weight bytes -93.8% (0.983 MFLOP, 15360 bytes)"));
	assert_false(has_line(&d, "wrong axis"));
	/* 2 zero input columns as well, the rest 50 % sparse: not dense */
	s.counts.zero_cols = 2, s.counts.nnz = 124;
	spp_diagnose_layer(&s, NULL, &d);
	assert_true(has_line(&d, "remove the 60 zero output rows and the 2 zero input columns: the layer "
				 "becomes 4x62, dense FLOPs"));
	assert_false(has_line(&d, "4x62 and dense"));
}

/* in test_breakeven_cli.c */
void test_sweep_command(void **state);
void test_sweep_intervals(void **state);
void test_sweep_nm(void **state);
void test_sweep_usage(void **state);
void test_analyze_breakeven(void **state);
void test_schema_valid(void **state);
void test_text_column(void **state);
void test_wrong_axis(void **state);

/*
 * The layers that hold a model back, by hand: A 1000 params 500 nnz N 10,
 * B 1000/100 N 10, C 2000/1800 N 1 (model 4000/2400, sparsity 0.4). At a
 * target of 0.8 the model keeps 800: 1600 to remove; A's excess 300 (6000
 * FLOPs), C's 1400 (2800), B is past it; C alone would need 1 - 200/2000.
 */
static void test_hold_back(void **state)
{
	struct spp_layer layers[3] = {{.name = "A", .n = 10}, {.name = "B", .n = 10}, {.name = "C", .n = 1}};
	struct spp_layer_static st[3];
	struct spp_analysis a = {0};
	struct spp_model_summary s = {0};
	const uint64_t numel[3] = {1000, 1000, 2000}, nnz[3] = {500, 100, 1800};

	memset(st, 0, sizeof(st));

	(void)state;
	for (int i = 0; i < 3; i++) {
		st[i].numel = numel[i];
		st[i].counts.nnz = nnz[i];
		st[i].sparsity = 1 - (double)nnz[i] / (double)numel[i];
	}
	a.layers = layers, a.stats = st, a.nlayers = 3;
	s.gemm_params = 4000, s.gemm_nnz = 2400, s.gemm_sparsity = 0.4;
	a.opts.has_target = 1, a.opts.target_sparsity = 0.8;
	spp_hold_back(&a, &s);
	assert_true(s.hold_back.valid && s.hold_back.from_option);
	assert_true(fabs(s.hold_back.nnz_to_remove - 1600) < 1e-9);
	assert_int_equal(s.hold_back.n, 2);
	assert_int_equal(s.hold_back.l[0].layer, 0);
	assert_true(fabs(s.hold_back.l[0].excess_flops - 6000) < 1e-9);
	assert_true(fabs(s.hold_back.l[0].share - 6000.0 / 8800) < 1e-12);
	assert_true(isnan(s.hold_back.l[0].alone));
	assert_int_equal(s.hold_back.l[1].layer, 2);
	assert_true(fabs(s.hold_back.l[1].excess_nnz - 1400) < 1e-9);
	assert_true(fabs(s.hold_back.l[1].alone - 0.9) < 1e-12);
	/* against the model's own 0.4: only C is denser; nothing to remove */
	a.opts.has_target = 0;
	spp_hold_back(&a, &s);
	assert_true(!s.hold_back.from_option && fabs(s.hold_back.target - 0.4) < 1e-12);
	assert_int_equal(s.hold_back.n, 1);
	assert_int_equal(s.hold_back.l[0].layer, 2);
	assert_true(fabs(s.hold_back.l[0].excess_flops - 1200) < 1e-9);
	assert_true(isnan(s.hold_back.l[0].alone));
	/*
	 * A 300 of 1000 non-zero, B 56 of 1000, against the model's own
	 * 0.822: the target's rounding left 1.1e-13 to remove, and A (the
	 * denser) was said to need "alone 70.0 %", the sparsity it has
	 * (issue 46 item 7)
	 */
	st[0].counts.nnz = 300, st[0].sparsity = 0.7;
	st[1].counts.nnz = 56, st[1].sparsity = 0.944;
	a.nlayers = 2;
	s.gemm_params = 2000, s.gemm_nnz = 356, s.gemm_sparsity = 1 - 356.0 / 2000;
	spp_hold_back(&a, &s);
	assert_true(s.hold_back.nnz_to_remove == 0);
	assert_int_equal(s.hold_back.n, 1);
	assert_int_equal(s.hold_back.l[0].layer, 0);
	assert_true(isnan(s.hold_back.l[0].alone));
	a.nlayers = 3;
	/* no analysed layer: no list */
	s.gemm_params = 0;
	spp_hold_back(&a, &s);
	assert_false(s.hold_back.valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refinement),
		cmocka_unit_test(test_pattern_of_layer),
		cmocka_unit_test(test_recommendation),
		cmocka_unit_test(test_diagnosis),
		cmocka_unit_test(test_hold_back),
		cmocka_unit_test(test_wrong_axis),
		cmocka_unit_test(test_sweep_command),
		cmocka_unit_test(test_sweep_intervals),
		cmocka_unit_test(test_sweep_nm),
		cmocka_unit_test(test_sweep_usage),
		cmocka_unit_test(test_analyze_breakeven),
		cmocka_unit_test(test_text_column),
		cmocka_unit_test(test_schema_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
