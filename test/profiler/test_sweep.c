/*
 * Breakeven sweep (profiler/sweep.h) on deterministic timing models (no
 * clock: each model gives a time as a function of sparsity), its JSON
 * tree, the in-memory synthetic weights (spp_synth_fill_f32) against the
 * file synth writes, and the DLMC .smtx loader on a real file and on
 * malformed ones (those three in test_sweep_inputs.c, with `spprof bench`
 * end to end). No timed assertions.
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
#include "profiler/run.h"
#include "profiler/smtx.h"
#include "profiler/sweep.h"
#include "profiler/synth.h"
#include "profiler/synth_fill.h"
#include "reports/report.h"
#include "test/harness.h"

/* ---- timing models ---- */

#define TD 1000.0  /* dense time of every model, ns */

enum model_kind {
	CROSS,       /* speedup = 1 at cross, linear in s: monotone */
	NEVER,       /* 0.5 + 0.21 s / 0.999: best 0.71 at 0.999 */
	ALWAYS,      /* 1.5 + s */
	LUCKY_LOW,   /* faster at 0.1 only, then from cross on */
	DIP_AT_TOP,  /* faster on [cross, 0.95], slower from 0.98 */
	NOT_RUN,     /* no time: a format that cannot hold the pattern */
};

struct model {
	const char *key;
	enum model_kind kind;
	double cross;
};

static double model_speedup(const struct model *m, double s)
{
	switch (m->kind) {
	case CROSS:
		return 1 + (s - m->cross);
	case NEVER:
		return 0.5 + 0.21 * s / 0.999;
	case ALWAYS:
		return 1.5 + s;
	case LUCKY_LOW:
		if (fabs(s - 0.1) < 1e-12)
			return 1.2;
		return 1 + (s - m->cross);
	case DIP_AT_TOP:
		if (s >= 0.98)
			return 0.9;
		return 1 + (s - m->cross);
	case NOT_RUN:
		break;
	}
	return NAN;
}

/* Formats of the models: only the key is read by the sweep. */
struct fake {
	struct spp_format_ops ops;
	struct model m;
};

struct timing_log {
	struct fake *fakes;
	int nfakes;
	int calls;
	int calls_per_format[8];
	double last_sparsity;
};

static const struct model *model_of(struct timing_log *log, const struct spp_format_ops *f)
{
	for (int i = 0; i < log->nfakes; i++)
		if (&log->fakes[i].ops == f) {
			log->calls_per_format[i]++;
			return &log->fakes[i].m;
		}
	fail_msg("format %s is not one of the test's", f->key);
	return NULL;
}

static int model_time(void *ctx, double s, int64_t n, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, double (*ci)[2],
		      char (*reasons)[256], struct spp_error *err)
{
	struct timing_log *log = ctx;

	(void)err;
	(void)n;
	log->calls++;
	log->last_sparsity = s;
	*t_dense_ns = TD;
	for (int f = 0; f < nformats; f++) {
		const struct model *m = model_of(log, formats[f]);
		double sp = model_speedup(m, s);

		t_ns[f] = TD / sp;
		/* every model's speedup interval: 2 % either side */
		ci[f][0] = 0.98 * sp;
		ci[f][1] = 1.02 * sp;
		if (m->kind == NOT_RUN)
			snprintf(reasons[f], 256, "not_applicable: 50%% of groups hold more than 2 non-zeros");
	}
	return 0;
}

static void make_fakes(struct fake *f, const struct model *m, int n,
		       const struct spp_format_ops **list)
{
	for (int i = 0; i < n; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].ops.key = m[i].key;
		f[i].m = m[i];
		list[i] = &f[i].ops;
	}
}

static void run_models(const struct model *models, int n, struct spp_sweep_opts *o,
		       struct timing_log *log, struct fake *fakes, struct spp_sweep *out)
{
	const struct spp_format_ops *list[8];
	struct spp_sweep_timer t = {model_time, log};
	struct spp_error err = {0};

	make_fakes(fakes, models, n, list);
	memset(log, 0, sizeof(*log));
	log->fakes = fakes;
	log->nfakes = n;
	assert_int_equal(spp_sweep_run(o, list, n, &t, out, &err), 0);
	assert_int_equal(out->nresults, n);
}

static void assert_curve_sorted(const struct spp_sweep_result *r)
{
	for (int i = 0; i < r->npoints; i++) {
		const struct spp_sweep_point *p = &r->curve[i];

		if (i)
			assert_true(p->sparsity > r->curve[i - 1].sparsity);
		assert_true(fabs(p->speedup - p->dense_time_ns / p->time_ns) < 1e-12);
	}
}

static void test_refine_monotone(void **state)
{
	const struct model m[] = {{"csr", CROSS, 0.37}};
	struct spp_sweep_opts o;
	struct timing_log log;
	struct fake fakes[1];
	struct spp_sweep s;
	const struct spp_sweep_result *r;

	(void)state;
	spp_sweep_opts_init(&o);
	o.m = 64;
	o.k = 32;
	o.n = 8;
	o.threads = 2;
	run_models(m, 1, &o, &log, fakes, &s);
	r = &s.results[0];
	assert_string_equal(r->format, "csr");
	assert_string_equal(r->backend, "cpu");
	/*
	 * Grid bracket [0.3, 0.4]; bisection by hand: 0.35 slower, 0.375
	 * faster, 0.3625 slower, 0.36875 slower, 0.371875 faster; then the
	 * bracket is 0.003125 <= 0.005 wide.
	 */
	assert_true(fabs(r->breakeven - 0.371875) < 1e-12);
	assert_true(r->breakeven >= 0.37 && r->breakeven - 0.37 <= o.tolerance);
	assert_string_equal(r->reason, "");
	assert_int_equal(log.calls, 14 + 5);
	assert_int_equal(r->npoints, 14 + 5);
	assert_curve_sorted(r);
	assert_true(fabs(r->curve[0].sparsity - 0) < 1e-12);
	assert_true(fabs(r->curve[r->npoints - 1].sparsity - 0.999) < 1e-12);
	assert_true(fabs(r->curve[r->npoints - 1].speedup - (1 + 0.999 - 0.37)) < 1e-9);
	assert_int_equal(s.m, 64);
	assert_int_equal(s.k, 32);
	assert_int_equal(s.n, 8);
	assert_int_equal(s.threads, 2);
	assert_string_equal(s.pattern, "unstructured");
	spp_sweep_release(&s);
	spp_sweep_release(&s);  /* twice is fine */

	/* fewer steps: stops after 2, breakeven is the bracket's top 0.375 */
	o.refine_steps = 2;
	run_models(m, 1, &o, &log, fakes, &s);
	assert_true(fabs(s.results[0].breakeven - 0.375) < 1e-12);
	assert_int_equal(log.calls, 14 + 2);
	spp_sweep_release(&s);

	/* a crossing between the two top grid points: one step of 0.0045 */
	{
		const struct model hi[] = {{"csr", CROSS, 0.995}};

		spp_sweep_opts_init(&o);
		run_models(hi, 1, &o, &log, fakes, &s);
		assert_true(fabs(s.results[0].breakeven - 0.999) < 1e-12);
		assert_int_equal(log.calls, 14 + 1);
		/* 0.9945 was the midpoint, slower: (0.9945, 0.999] holds 0.995 */
		assert_true(fabs(log.last_sparsity - 0.9945) < 1e-12);
		spp_sweep_release(&s);
	}
}

static void test_never_always(void **state)
{
	const struct model m[] = {
		{"coo", NEVER, 0},
		{"bsr4", ALWAYS, 0},
		{"nm2_4", NOT_RUN, 0},
	};
	struct spp_sweep_opts o;
	struct timing_log log;
	struct fake fakes[3];
	struct spp_sweep s;

	(void)state;
	spp_sweep_opts_init(&o);
	run_models(m, 3, &o, &log, fakes, &s);
	/* no refinement: only the grid was timed, each format at every point */
	assert_int_equal(log.calls, 14);
	assert_int_equal(log.calls_per_format[0], 14);
	assert_true(isnan(s.results[0].breakeven));
	assert_string_equal(s.results[0].reason,
			    "never faster than dense up to 0.999 (best speedup 0.71 at 0.999)");
	assert_int_equal(s.results[0].npoints, 14);
	assert_true(s.results[1].breakeven == 0);
	/* 1.5x at sparsity 0, the dense work: the baseline is called weak */
	assert_string_equal(s.results[1].reason,
			    "1.50x dense at sparsity 0, the same work: a weak dense baseline; "
			    "faster than dense at every sparsity tried, from 0");
	assert_true(isnan(s.results[2].breakeven));
	assert_int_equal(s.results[2].npoints, 0);
	assert_string_equal(s.results[2].reason,
			    "no timed point: not_applicable: 50% of groups hold more than 2 non-zeros at 0");
	spp_sweep_release(&s);
}

static void test_non_monotone(void **state)
{
	const struct model m[] = {
		{"csr", LUCKY_LOW, 0.55},
		{"bitmask", DIP_AT_TOP, 0.62},
	};
	struct spp_sweep_opts o;
	struct timing_log log;
	struct fake fakes[2];
	struct spp_sweep s;
	const struct spp_sweep_result *r;

	(void)state;
	spp_sweep_opts_init(&o);
	run_models(m, 2, &o, &log, fakes, &s);
	/*
	 * csr: faster at 0.1, slower 0.2..0.5, faster from 0.6: the last
	 * upward crossing is in [0.5, 0.6], not the lucky 0.1.
	 */
	r = &s.results[0];
	assert_true(r->breakeven > 0.55 && r->breakeven - 0.55 <= o.tolerance);
	assert_non_null(strstr(r->reason, "also faster at 0.1 (speedup 1.20)"));
	assert_null(strstr(r->reason, "slower than dense again"));
	assert_curve_sorted(r);
	/* bitmask: faster on [0.62, 0.95], slower again from 0.98 */
	r = &s.results[1];
	assert_true(r->breakeven > 0.62 && r->breakeven - 0.62 <= o.tolerance);
	assert_string_equal(r->reason, "slower than dense again from 0.98 (speedup 0.90)");
	assert_int_equal(log.calls_per_format[0], 14 + 5);
	assert_int_equal(log.calls_per_format[1], 14 + 5);
	spp_sweep_release(&s);
}

static void test_fixed_pattern_and_grid(void **state)
{
	const struct model yes[] = {{"nm2_4", ALWAYS, 0}};
	const struct model no[] = {{"nm2_4", NEVER, 0}};
	const double grid[] = {0.2, 0.5, 0.8};
	const double bad[] = {0.5, 0.2};
	const struct spp_format_ops *list[1] = {NULL};
	struct spp_sweep_timer t = {model_time, NULL};
	struct spp_sweep_opts o;
	struct timing_log log;
	struct fake fakes[1];
	struct spp_sweep s;
	struct spp_error err = {0};

	(void)state;
	spp_sweep_opts_init(&o);
	o.pattern = SPP_SYNTH_NM;
	o.nm_n = 2;
	o.nm_m = 4;
	run_models(yes, 1, &o, &log, fakes, &s);
	assert_string_equal(s.pattern, "nm2_4");
	assert_int_equal(log.calls, 1);
	assert_true(s.results[0].breakeven == 0.5);
	assert_int_equal(s.results[0].npoints, 1);
	assert_string_equal(s.results[0].reason, "faster than dense at 0.5, the only sparsity tried");
	spp_sweep_release(&s);
	run_models(no, 1, &o, &log, fakes, &s);
	assert_true(isnan(s.results[0].breakeven));
	assert_string_equal(s.results[0].reason,
			    "not faster than dense at 0.5, the only sparsity tried (speedup 0.61)");
	spp_sweep_release(&s);

	/* a caller's grid: CROSS at 0.6 brackets [0.5, 0.8] */
	{
		const struct model c[] = {{"csr", CROSS, 0.6}};

		spp_sweep_opts_init(&o);
		o.pattern = SPP_SYNTH_BLOCK;
		o.block = 4;
		o.grid = grid;
		o.ngrid = 3;
		o.refine_steps = 3;
		run_models(c, 1, &o, &log, fakes, &s);
		assert_string_equal(s.pattern, "block4");
		/* 0.65 faster, 0.575 slower, 0.6125 faster */
		assert_true(fabs(s.results[0].breakeven - 0.6125) < 1e-12);
		assert_int_equal(log.calls, 3 + 3);
		spp_sweep_release(&s);
	}

	/* bad options are usage errors, before any timing */
	o.grid = bad;
	o.ngrid = 2;
	memset(&log, 0, sizeof(log));
	t.ctx = &log;
	assert_int_equal(spp_sweep_run(&o, list, 1, &t, &s, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "ascending"));
	o.grid = NULL;
	o.m = 0;
	assert_int_equal(spp_sweep_run(&o, list, 1, &t, &s, &err), SPP_E_USAGE);
	assert_int_equal(log.calls, 0);
}

static void test_json(void **state)
{
	const struct model m[] = {{"csr", CROSS, 0.37}, {"coo", NEVER, 0}};
	struct spp_sweep_opts o;
	struct timing_log log;
	struct fake fakes[2];
	struct spp_sweep s;
	cJSON *j, *res, *r0, *r1, *be, *curve, *p;
	char *text;

	(void)state;
	spp_sweep_opts_init(&o);
	o.m = 4096;
	o.k = 1024;
	o.n = 64;
	o.threads = 2;
	run_models(m, 2, &o, &log, fakes, &s);
	j = spp_sweep_json(&s);
	assert_non_null(j);
	/* through text and back, as a reader would see it */
	text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "spprof.sweep/1");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shape"), "m")->valuedouble, 4096);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shape"), "k")->valuedouble, 1024);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shape"), "n")->valuedouble, 64);
	assert_string_equal(cJSON_GetObjectItem(j, "pattern")->valuestring, "unstructured");
	assert_int_equal(cJSON_GetObjectItem(j, "threads")->valuedouble, 2);
	res = cJSON_GetObjectItem(j, "results");
	assert_int_equal(cJSON_GetArraySize(res), 2);
	r0 = cJSON_GetArrayItem(res, 0);
	assert_string_equal(cJSON_GetObjectItem(r0, "backend")->valuestring, "cpu");
	assert_string_equal(cJSON_GetObjectItem(r0, "format")->valuestring, "csr");
	be = cJSON_GetObjectItem(r0, "breakeven");
	assert_true(fabs(cJSON_GetObjectItem(be, "sparsity")->valuedouble - 0.371875) < 1e-12);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(be, "reason")));
	curve = cJSON_GetObjectItem(r0, "curve");
	assert_int_equal(cJSON_GetArraySize(curve), 19);
	p = cJSON_GetArrayItem(curve, 3);  /* 0.3: speedup 0.93 */
	assert_true(fabs(cJSON_GetObjectItem(p, "sparsity")->valuedouble - 0.3) < 1e-12);
	assert_true(fabs(cJSON_GetObjectItem(p, "dense_time_ns")->valuedouble - TD) < 1e-9);
	assert_true(fabs(cJSON_GetObjectItem(p, "time_ns")->valuedouble - TD / 0.93) < 1e-6);
	assert_true(fabs(cJSON_GetObjectItem(p, "speedup")->valuedouble - 0.93) < 1e-9);
	r1 = cJSON_GetArrayItem(res, 1);
	be = cJSON_GetObjectItem(r1, "breakeven");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(be, "sparsity")));
	assert_string_equal(cJSON_GetObjectItem(be, "reason")->valuestring,
			    "never faster than dense up to 0.999 (best speedup 0.71 at 0.999)");
	cJSON_Delete(j);
	/* the analyze-report form: {sparsity, breakeven_low, breakeven_high, reason, curve} */
	j = spp_sweep_result_json(&s.results[0]);
	assert_non_null(cJSON_GetObjectItem(j, "sparsity"));
	assert_non_null(cJSON_GetObjectItem(j, "reason"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "curve")), 19);
	assert_true(fabs(cJSON_GetObjectItem(j, "breakeven_low")->valuedouble - 0.35) < 1e-12);
	assert_true(fabs(cJSON_GetObjectItem(j, "breakeven_high")->valuedouble - 0.4) < 1e-12);
	/* read back as merge and report do: the bracket derived again from the points */
	{
		cJSON *layer = cJSON_CreateObject(), *be = cJSON_AddObjectToObject(layer, "breakeven");
		struct spp_sweep back;
		struct spp_error err = {0};

		cJSON_AddItemToObject(be, "cpu/csr", j);
		assert_int_equal(spp_report_layer_sweep(layer, "t.json", &back, &err), 0);
		assert_int_equal(back.nresults, 1);
		assert_true(fabs(back.results[0].breakeven - 0.371875) < 1e-12);
		assert_true(fabs(back.results[0].breakeven_low - 0.35) < 1e-12);
		assert_true(fabs(back.results[0].breakeven_high - 0.4) < 1e-12);
		assert_true(fabs(back.results[0].curve[3].speedup_ci_high - 1.02 * 0.93) < 1e-12);
		spp_sweep_release(&back);
		j = layer;
	}
	cJSON_Delete(j);
	spp_sweep_release(&s);
}

/* A hand-made curve: {sparsity, speedup, interval low, high} per point. */
static int curve_of(struct spp_sweep_point *c, const double (*p)[4], int n)
{
	for (int i = 0; i < n; i++)
		c[i] = (struct spp_sweep_point){p[i][0], TD / p[i][1], TD, p[i][1], p[i][2], p[i][3]};
	return n;
}

/* a and b the same figure, or both unknown */
static int same(double a, double b)
{
	return isnan(a) ? isnan(b) : fabs(a - b) < 1e-12;
}

/* c's breakeven and its bracket are be, lo and hi (NAN: none). */
static void check_bracket(const struct spp_sweep_point *c, int n, double be, double lo, double hi)
{
	double b = spp_sweep_breakeven(c, n), l, h;

	spp_sweep_bracket(c, n, b, &l, &h);
	if (!same(b, be) || !same(l, lo) || !same(h, hi))
		fail_msg("breakeven %g in [%g, %g], want %g in [%g, %g]", b, l, h, be, lo, hi);
}

/* The breakeven's bracket from the points' intervals (spp_sweep_bracket). */
static void test_bracket(void **state)
{
	static const double clean[][4] = {
		{0.5, 0.8, 0.75, 0.85}, {0.6, 0.9, 0.85, 0.95}, {0.7, 1.2, 1.1, 1.3}, {0.8, 1.5, 1.4, 1.6},
	};
	/* 0.6 and 0.7 straddle 1; a lucky 0.1, surely faster, is no bracket */
	static const double straddle[][4] = {
		{0.1, 1.1, 1.05, 1.15}, {0.5, 0.8, 0.75, 0.85}, {0.6, 0.97, 0.9, 1.05},
		{0.7, 1.03, 0.95, 1.1}, {0.8, 1.3, 1.2, 1.4}, {0.9, 1.6, 1.5, 1.7},
	};
	/* faster from the lowest point, not surely at the top: neither end */
	static const double open_ends[][4] = {
		{0.5, 1.1, 1.05, 1.15}, {0.6, 1.2, 1.1, 1.3}, {0.7, 1.1, 0.98, 1.2},
	};
	static const double slower[][4] = {{0.5, 0.8, 0.75, 0.85}, {0.6, 0.9, 0.85, 0.95}};
	struct spp_sweep_point c[8];
	double lo, hi;

	(void)state;
	check_bracket(c, curve_of(c, clean, 4), 0.7, 0.6, 0.7);
	/* no intervals: nothing is sure, the breakeven stays */
	for (int i = 0; i < 4; i++)
		c[i].speedup_ci_low = c[i].speedup_ci_high = NAN;
	check_bracket(c, 4, 0.7, NAN, NAN);
	check_bracket(c, curve_of(c, straddle, 6), 0.7, 0.5, 0.8);
	check_bracket(c, curve_of(c, open_ends, 3), 0.5, NAN, NAN);
	/* no breakeven: no bracket, intervals or not */
	check_bracket(c, curve_of(c, slower, 2), NAN, NAN, NAN);
	spp_sweep_bracket(c, 0, 0.5, &lo, &hi);
	assert_true(isnan(lo) && isnan(hi));
}

/*
 * The real timer end to end on a tiny layer: every grid point checked and
 * timed for csr; nm2_4 cannot hold unstructured W, so it has no point and
 * says why. Only the structure is asserted, never a time.
 */
static void test_real_timer(void **state)
{
	const double g[] = {0, 0.5, 0.9};
	const struct spp_format_ops *fm[2] = {spp_cpu_format_find("csr"),
					      spp_cpu_format_find("nm2_4")};
	struct spp_sweep_opts o;
	struct spp_run_opts ro;
	struct spp_sweep_measure sm = {0};
	struct spp_sweep_timer t;
	struct spp_sweep s;
	struct spp_error err = {0};

	(void)state;
	assert_non_null(fm[0]);
	assert_non_null(fm[1]);
	spp_sweep_opts_init(&o);
	o.m = 40;
	o.k = 36;
	o.n = 5;
	o.grid = g;
	o.ngrid = 3;
	o.refine_steps = 2;
	spp_run_opts_init(&ro);
	ro.bench.repeat = 2;
	sm.sweep = &o;
	sm.run = &ro;
	sm.seed = 3;
	spp_sweep_measure_timer(&sm, &t);
	assert_int_equal(spp_sweep_run(&o, fm, 2, &t, &s, &err), 0);
	assert_true(s.results[0].npoints >= 3 && s.results[0].npoints <= 5);
	assert_curve_sorted(&s.results[0]);
	for (int i = 0; i < s.results[0].npoints; i++)
		assert_true(s.results[0].curve[i].time_ns > 0 && s.results[0].curve[i].dense_time_ns > 0);
	assert_int_equal(s.results[1].npoints, 0);
	assert_true(isnan(s.results[1].breakeven));
	assert_non_null(strstr(s.results[1].reason, "no timed point: not_applicable: "));
	spp_sweep_release(&s);
	spp_sweep_measure_fini(&sm);
	spp_sweep_measure_fini(&sm);
}

/* in test_sweep_inputs.c */
void test_fill_patterns(void **state);
void test_fill_matches_file(void **state);
void test_smtx_dlmc(void **state);
void test_smtx_malformed(void **state);
void test_bench_cli(void **state);

/* test_sweep_n.c */
void test_nsweep_derive(void **state);
void test_nsweep_model(void **state);
void test_nsweep_cli(void **state);
void test_nsweep_analyze(void **state);

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refine_monotone),
		cmocka_unit_test(test_never_always),
		cmocka_unit_test(test_non_monotone),
		cmocka_unit_test(test_fixed_pattern_and_grid),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_bracket),
		cmocka_unit_test(test_real_timer),
		cmocka_unit_test(test_fill_patterns),
		cmocka_unit_test(test_fill_matches_file),
		cmocka_unit_test(test_smtx_dlmc),
		cmocka_unit_test(test_smtx_malformed),
		cmocka_unit_test(test_bench_cli),
		cmocka_unit_test(test_nsweep_derive),
		cmocka_unit_test(test_nsweep_model),
		cmocka_unit_test(test_nsweep_cli),
		cmocka_unit_test(test_nsweep_analyze),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
