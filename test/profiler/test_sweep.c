/*
 * Breakeven sweep (profiler/sweep.h) on deterministic timing models (no
 * clock: each model gives a time as a function of sparsity), its JSON
 * tree, the in-memory synthetic weights (spp_synth_fill_f32) against the
 * file synth writes, and the DLMC .smtx loader on a real file and on
 * malformed ones. No timed assertions.
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

static int model_time(void *ctx, double s, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, char (*reasons)[256],
		      struct spp_error *err)
{
	struct timing_log *log = ctx;

	(void)err;
	log->calls++;
	log->last_sparsity = s;
	*t_dense_ns = TD;
	for (int f = 0; f < nformats; f++) {
		const struct model *m = model_of(log, formats[f]);
		double sp = model_speedup(m, s);

		t_ns[f] = TD / sp;
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
	assert_string_equal(s.results[1].reason, "faster than dense at every sparsity tried, from 0");
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
	/* the analyze-report form: {sparsity, reason, curve} */
	j = spp_sweep_result_json(&s.results[0]);
	assert_non_null(cJSON_GetObjectItem(j, "sparsity"));
	assert_non_null(cJSON_GetObjectItem(j, "reason"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "curve")), 19);
	cJSON_Delete(j);
	spp_sweep_release(&s);
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

/* ---- synthetic W in memory ---- */

static struct spp_synth_layer layer(const char *spec)
{
	struct spp_synth_layer l;
	struct spp_error err = {0};

	assert_int_equal(spp_synth_parse_layer(spec, &l, &err), 0);
	return l;
}

static int64_t count_nz(const float *w, int64_t n)
{
	int64_t c = 0;

	for (int64_t i = 0; i < n; i++)
		c += w[i] != 0;
	return c;
}

static void test_fill_patterns(void **state)
{
	struct spp_error err = {0};
	struct spp_synth_layer l;
	float w[400];
	int zero_blocks = 0;

	(void)state;
	/* unstructured: exactly round(0.3 * 1961) = 588 zeros */
	{
		float *u = malloc(37 * 53 * sizeof(float));

		l = layer("u=37x53:unstructured:0.3");
		assert_int_equal(spp_synth_fill_f32(&l, 7, u, &err), 0);
		assert_int_equal(count_nz(u, 37 * 53), 1961 - 588);
		for (int i = 0; i < 37 * 53; i++)
			assert_true(u[i] == 0 || (fabsf(u[i]) >= 0.05f && fabsf(u[i]) <= 1.0f));
		free(u);
	}
	/* 2:4 on K = 10: groups of 4, 4 and 2, each exactly 2 non-zeros */
	l = layer("n=8x10:nm2_4:0.5");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	assert_int_equal(count_nz(w, 80), 8 * 6);
	for (int i = 0; i < 8; i++)
		for (int g = 0; g < 10; g += 4)
			assert_int_equal(count_nz(w + i * 10 + g, g + 4 <= 10 ? 4 : 2), 2);
	/* block4 on 10x10: 9 blocks, round(0.5 * 9) = 5 of them zero */
	l = layer("b=10x10:block4:0.5");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	for (int bi = 0; bi < 10; bi += 4)
		for (int bj = 0; bj < 10; bj += 4) {
			int nz = 0, size = 0;

			for (int i = bi; i < bi + 4 && i < 10; i++)
				for (int j = bj; j < bj + 4 && j < 10; j++, size++)
					nz += w[i * 10 + j] != 0;
			assert_true(nz == 0 || nz == size);
			zero_blocks += nz == 0;
		}
	assert_int_equal(zero_blocks, 5);
	/* channel on 20x7: round(0.25 * 20) = 5 zero rows, the rest dense */
	l = layer("c=20x7:channel:0.25");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	assert_int_equal(count_nz(w, 140), 15 * 7);
	/* a layer the writer refuses */
	l = layer("n=8x10:nm2_4:0.5");
	l.sparsity = 0.3;
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "layer 'n'"));
}

/* The data of a one-layer safetensors file (after the header). */
static void check_same_as_file(const char *spec, uint64_t seed)
{
	struct spp_synth_layer l = layer(spec);
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path;
	unsigned char *data;
	uint64_t hlen = 0, numel = 1;
	size_t len = 0;
	float *w;

	assert_non_null(dir);
	path = harness_join(dir, "one.safetensors");
	assert_int_equal(spp_synth_write(path, &l, 1, seed, &err), 0);
	data = (unsigned char *)harness_slurp(path, &len);
	assert_non_null(data);
	for (int b = 0; b < 8; b++)
		hlen |= (uint64_t)data[b] << (8 * b);
	for (int d = 0; d < l.ndim; d++)
		numel *= (uint64_t)l.shape[d];
	assert_int_equal(len, 8 + hlen + numel * 4);
	w = malloc(numel * sizeof(float));
	assert_int_equal(spp_synth_fill_f32(&l, seed, w, &err), 0);
	assert_memory_equal(w, data + 8 + hlen, numel * 4);
	free(w);
	free(data);
	free(path);
	harness_rmtree(dir);
}

static void test_fill_matches_file(void **state)
{
	(void)state;
	check_same_as_file("fc=33x70000:unstructured:0.6", 11);  /* rows in 2 chunks */
	check_same_as_file("nm=12x40:nm2_4:0.5", 5);
	check_same_as_file("conv=8x6x3x3:nm2_4:0.5", 9);       /* a permuted row */
	check_same_as_file("bl=16x24:block8:0.4", 2);
}

/* ---- DLMC .smtx ---- */

static void test_smtx_dlmc(void **state)
{
	static const char rel[] =
		"transformer/magnitude_pruning/0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx";
	char *dir = harness_dlmc_dir(), *path = NULL, *csvp = NULL, *csv = NULL, *line;
	long long m1 = -1, k1 = -1, nnz1 = -1;
	double csv_m = -1, csv_k = -1, csv_nnz = -1;
	struct spp_smtx s;
	struct spp_error err = {0};
	char key[300];
	FILE *f;
	float *w;

	(void)state;
	if (!dir || !harness_exists(dir)) {
		free(dir);
		skip();
	}
	path = harness_join(dir, rel);
	csvp = harness_join(dir, "dlmc.csv");
	/* the first line, read here independently */
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lld, %lld, %lld", &m1, &k1, &nnz1), 3);
	fclose(f);
	/* the collection's metadata row for the same matrix */
	csv = harness_slurp(csvp, NULL);
	assert_non_null(csv);
	snprintf(key, sizeof(key), ",dlmc/%s,", rel);
	line = strstr(csv, key);
	assert_non_null(line);
	line += strlen(key);
	line = strchr(line, ',') + 1;  /* skip the name column */
	assert_int_equal(sscanf(line, "%lf,%lf,%lf", &csv_m, &csv_k, &csv_nnz), 3);

	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	assert_int_equal(s.m, m1);
	assert_int_equal(s.k, k1);
	assert_int_equal(s.nnz, nnz1);
	assert_int_equal(s.m, (int64_t)csv_m);
	assert_int_equal(s.k, (int64_t)csv_k);
	assert_int_equal(s.nnz, (int64_t)csv_nnz);
	assert_int_equal(s.row_ptr[s.m], s.nnz);
	w = malloc((size_t)(s.m * s.k) * sizeof(float));
	spp_smtx_fill_dense(&s, 42, w);
	assert_int_equal(count_nz(w, s.m * s.k), s.nnz);
	for (int64_t i = 0; i < s.m; i++)
		assert_int_equal(count_nz(w + i * s.k, s.k), s.row_ptr[i + 1] - s.row_ptr[i]);
	for (int64_t i = 0; i < s.m * s.k; i++)
		assert_true(w[i] == 0 || (fabsf(w[i]) >= 0.05f && fabsf(w[i]) < 1.0f));
	/* fixed seed: the same values again */
	{
		float *w2 = malloc((size_t)(s.m * s.k) * sizeof(float));

		spp_smtx_fill_dense(&s, 42, w2);
		assert_memory_equal(w, w2, (size_t)(s.m * s.k) * sizeof(float));
		free(w2);
	}
	free(w);
	spp_smtx_release(&s);
	spp_smtx_release(&s);
	free(csv);
	free(csvp);
	free(path);
	free(dir);
}

static void test_smtx_malformed(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "line 1: expected \"M, K, NNZ\""},
		{"2 3 1\n0 1 1\n2\n", "line 1: expected ', ' after 2"},
		{"2, 3, x\n", "line 1: expected \"M, K, NNZ\""},
		{"0, 3, 0\n0\n\n", "dims must be >= 1"},
		{"2, 3, 7\n", "NNZ 7 exceeds M*K = 6"},
		{"2, 3, 2\n1 1 2\n0 1\n", "row offset 0 is 1, must be 0"},
		{"2, 3, 2\n0 2 1\n0 1\n", "row offset 2 is 1, below the one before"},
		{"2, 3, 2\n0 1 3\n0 1\n", "last row offset 3, the header says NNZ 2"},
		{"2, 3, 2\n0 1\n0 1\n", "line 2: row offset 2 of 3"},
		{"2, 3, 2\n0 1 2 2\n0 1\n", "more than the 3 row offsets"},
		{"2, 3, 2\n0 1 2\n0\n", "line 3: column index 1 of 2"},
		{"2, 3, 2\n0 1 2\n0 3\n", "column index 1 is 3, K is 3"},
		{"2, 3, 3\n0 2 3\n1 1\n0\n", "row 0: column 1 after 1, want ascending"},
		{"2, 3, 2\n0 1 2\n0 1 2\n", "more than the 2 column indices"},
		{"2, 3, 2\n0 1 2\n0 1\nextra\n", "text after line 3"},
		{"2, 3, 99999999999\n", "line 1: expected \"M, K, NNZ\""},
	};
	char *dir = harness_tmpdir(), *path;
	struct spp_smtx s;
	struct spp_error err;

	(void)state;
	assert_non_null(dir);
	path = harness_join(dir, "m.smtx");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		assert_int_equal(harness_write(path, cases[c].text, strlen(cases[c].text)), 0);
		memset(&err, 0, sizeof(err));
		if (spp_smtx_load(path, &s, &err) != SPP_E_FORMAT)
			fail_msg("case %zu: loaded", c);
		if (!strstr(err.msg, cases[c].msg) || !strstr(err.msg, "m.smtx'"))
			fail_msg("case %zu: message '%s' lacks '%s'", c, err.msg, cases[c].msg);
		assert_null(s.row_ptr);
	}
	/* a good one without the final newline, and one with CRLF */
	assert_int_equal(harness_write(path, "2, 3, 2\n0 1 2\n0 2", 17), 0);
	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	assert_int_equal(s.col[1], 2);
	spp_smtx_release(&s);
	assert_int_equal(harness_write(path, "2, 3, 2\r\n0 1 2\r\n0 2\r\n", 21), 0);
	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	spp_smtx_release(&s);
	/* missing file */
	free(path);
	path = harness_join(dir, "none.smtx");
	assert_int_equal(spp_smtx_load(path, &s, &err), SPP_E_IO);
	assert_non_null(strstr(err.msg, "cannot open"));
	free(path);
	harness_rmtree(dir);
}

/* `spprof bench` end to end on a tiny run; structure only, never a time. */
static void test_bench_cli(void **state)
{
	char *dir = harness_dlmc_dir();
	struct harness_run r;
	cJSON *j, *cases, *c0, *sw;

	(void)state;
	{
		const char *args[] = {"bench", "--dlmc", "/nonexistent/dlmc", "--quick", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "'/nonexistent/dlmc'"));
		harness_run_free(&r);
	}
	if (!dir || !harness_exists(dir)) {
		free(dir);
		skip();
	}
	{
		const char *args[] = {"bench", "--dlmc", dir, "--quick", "--threads", "1", "--n", "2",
				      "--size", "48", "--formats", "csr,nm2_4", "--time-budget",
				      "0.001", "--format", "json", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
	}
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "spprof.bench/1");
	/* the machine block is the analyze report's (reports/machine.c), with the run's candidates */
	{
		const cJSON *m = cJSON_GetObjectItem(j, "machine");

		assert_non_null(cJSON_GetObjectItem(m, "caches"));
		assert_non_null(cJSON_GetObjectItem(m, "calibration"));
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(m, "gpus")));
		assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "dense_blas"), "coretype_env"));
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(m, "dense_candidates")));
	}
	cases = cJSON_GetObjectItem(j, "cases");
	assert_int_equal(cJSON_GetArraySize(cases), 1);
	c0 = cJSON_GetArrayItem(cases, 0);
	assert_int_equal(cJSON_GetObjectItem(c0, "n")->valuedouble, 2);
	/* --quick: two DLMC matrices, each with dense, csr and nm2_4 runs */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(c0, "dlmc")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
				 cJSON_GetArrayItem(cJSON_GetObjectItem(c0, "dlmc"), 0), "runs")), 3);
	sw = cJSON_GetObjectItem(c0, "sweep");
	assert_string_equal(cJSON_GetObjectItem(sw, "schema")->valuestring, "spprof.sweep/1");
	/* the N:M format is left out of the unstructured sweep */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sw, "results")), 1);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "nm2_4"), "m")->valuedouble, 48);
	cJSON_Delete(j);
	harness_run_free(&r);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refine_monotone),
		cmocka_unit_test(test_never_always),
		cmocka_unit_test(test_non_monotone),
		cmocka_unit_test(test_fixed_pattern_and_grid),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_real_timer),
		cmocka_unit_test(test_fill_patterns),
		cmocka_unit_test(test_fill_matches_file),
		cmocka_unit_test(test_smtx_dlmc),
		cmocka_unit_test(test_smtx_malformed),
		cmocka_unit_test(test_bench_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
