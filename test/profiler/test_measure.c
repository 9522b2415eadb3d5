/*
 * Measurement: timing statistics, the harness driven by a fake clock
 * (test_measure_harness.c), decoding weights to fp32, one layer's runs
 * (verification, statuses, figures) and analyze end to end with kernel
 * runs.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
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
#include "profiler/decode.h"
#include "profiler/measure.h"
#include "profiler/run.h"
#include "profiler/static.h"
#include "reports/report.h"
#include "test/harness.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

static void test_stats(void **state)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
	struct spp_time_stats s;

	(void)state;
	/* type 7: position p * (n - 1) in the sorted samples */
	assert_int_equal(spp_time_stats(odd, 3, &s), 0);
	NEAR(s.median, 3);
	NEAR(s.p10, 1.4);  /* 0.2 of the way from 1 to 3 */
	NEAR(s.p90, 4.6);  /* 0.8 of the way from 3 to 5 */
	assert_int_equal(s.repeats, 3);
	assert_int_equal(spp_time_stats(even, 4, &s), 0);
	NEAR(s.median, 2.5);
	NEAR(s.p10, 1.3);
	NEAR(s.p90, 3.7);
	assert_int_equal(spp_time_stats(one, 1, &s), 0);
	NEAR(s.median, 7);
	NEAR(s.p10, 7);
	NEAR(s.p90, 7);
	assert_int_equal(s.repeats, 1);
	assert_int_equal(spp_time_stats(one, 0, &s), -1);
	assert_int_equal(s.repeats, 0);
	NEAR(spp_max_over_mean((double[]){1, 3}, 2), 1.5);
	NEAR(spp_max_over_mean((double[]){0, 0}, 2), 0);
}

/*
 * The median's distribution-free 95 % interval: the order statistics of
 * Binomial(n, 1/2) (n = 6: x1 and x6, 96.9 %; n = 20: x6 and x15, 95.9 %),
 * none under 6; and a run's speedup interval from paired rounds.
 */
static void test_median_ci(void **state)
{
	double v[20], lo, hi, dense[8], t[8];
	struct spp_run r;

	(void)state;
	for (int i = 0; i < 20; i++)
		v[i] = 20 - i; /* sorted by the call */
	assert_int_equal(spp_median_ci95(v, 20, &lo, &hi), 0);
	NEAR(lo, 6);
	NEAR(hi, 15);
	for (int i = 0; i < 6; i++)
		v[i] = i + 1;
	assert_int_equal(spp_median_ci95(v, 6, &lo, &hi), 0);
	NEAR(lo, 1);
	NEAR(hi, 6);
	assert_int_equal(spp_median_ci95(v, 5, &lo, &hi), -1);
	assert_true(isnan(lo) && isnan(hi));
	/* rounds: dense 10 ns, the run 5 ns but for one disturbed round; a failed pair is skipped */
	for (int i = 0; i < 8; i++)
		dense[i] = 10, t[i] = 5;
	t[3] = 50;
	dense[5] = 0;
	spp_run_init(&r, "cpu", "csr");
	spp_run_speedup_ci(&r, dense, 8, t, 8);
	NEAR(r.speedup_ci_low, 0.2);
	NEAR(r.speedup_ci_high, 2);
	spp_run_speedup_ci(&r, dense, 8, t, 5);
	assert_true(isnan(r.speedup_ci_low));
}

/* A one-row tensor [1, k] of dtype dt over bytes. */
static void test_figures(void **state)
{
	/* the working set (36,404 B) fits the 64 KiB L2, not the 32 KiB L1 */
	struct spp_bw_model bw = {{32768, 65536, 1 << 20, UINT64_MAX}, {400, 50, 30, 10}, 0, 0};
	struct spp_run_inputs in = {100, 200, 10, 2000, 24404, 10, &bw, 1000, 5000, 0, 0, 0};
	struct spp_run r;

	(void)state;
	memset(&r, 0, sizeof(r));
	spp_run_figures(&in, &r);
	NEAR(r.speedup, 5);
	NEAR(r.efficiency, 0.5);
	NEAR(r.gap, 0.5);
	NEAR(r.gflops, 2.0 * 2000 * 10 / 1000);
	NEAR(r.bytes_moved, 24404 + 200 * 10 * 4 + 100 * 10 * 4);
	NEAR(r.intensity, 2.0 * 2000 * 10 / 36404);
	NEAR(r.bandwidth_gbs, 36404.0 / 1000);
	NEAR(r.bw_util, 36.404 / 50);
	assert_int_equal(r.bw_level, SPP_BW_L2);
	/* a kernel that reads 50 of X's 200 rows moves their bytes only, judged in the L1 */
	in.x_bytes = 50 * 10 * 4;
	spp_run_figures(&in, &r);
	NEAR(r.bytes_moved, 24404 + 50 * 10 * 4 + 100 * 10 * 4);
	assert_int_equal(r.bw_level, SPP_BW_L1);
	in.x_bytes = 0;
	/* bytes read back from a report are kept whatever the other inputs */
	in.bytes_moved = 123456;
	spp_run_figures(&in, &r);
	NEAR(r.bytes_moved, 123456);
	in.bytes_moved = 0;
	/* cold runs read from DRAM */
	bw.cold = 1;
	spp_run_figures(&in, &r);
	NEAR(r.bw_util, 36.404 / 10);
	assert_int_equal(r.bw_level, SPP_BW_DRAM);
	bw.cold = 0;
	/* past every cache: DRAM */
	bw.cap[SPP_BW_LLC] = 0;
	bw.cap[SPP_BW_L2] = 1000;
	spp_run_figures(&in, &r);
	assert_int_equal(r.bw_level, SPP_BW_DRAM);
	/* unknown peak and ideal speedup stay unknown */
	in.bw = NULL;
	in.theoretical_speedup = 0;
	spp_run_figures(&in, &r);
	assert_true(isnan(r.bw_util));
	assert_true(isnan(r.efficiency) && isnan(r.gap));
	NEAR(r.speedup, 5);
	/* no time: no rate */
	in.t_ns = 0;
	spp_run_figures(&in, &r);
	assert_true(isnan(r.speedup) && isnan(r.gflops) && isnan(r.bandwidth_gbs));
	NEAR(r.bytes_moved, 36404);
	/* the intensity is the work's, not the clock's */
	NEAR(r.intensity, 2.0 * 2000 * 10 / 36404);
}

/* What bounds a run against a speedup target: its rates scaled by target / speedup. */
static void test_bound(void **state)
{
	struct spp_bw_model bw = {{32768, 65536, 1 << 20, UINT64_MAX}, {400, 50, 30, 10}, 0, 0};
	/* 2000 of 20000 weights at N = 10 in 1000 ns against a dense 5000 ns: 5x */
	struct spp_run_inputs in = {100, 200, 10, 2000, 24404, 10, &bw, 1000, 5000, 0, 0, 0};
	struct spp_run r, d;
	struct spp_run_bound b;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&d, 0, sizeof(d));
	spp_run_figures(&in, &r);
	in.nnz = 20000;
	in.w_bytes = 80000;
	in.t_ns = in.t_dense_ns;
	spp_run_figures(&in, &d);
	spp_run_bound(&r, &d, 8, &b);
	/* a tenth of the FLOPs in a fifth of the time: half dense's FLOP rate */
	NEAR(b.dense_share, 0.5);
	NEAR(b.scale, 8.0 / 5);
	NEAR(b.need_gflops, r.gflops * 1.6);
	NEAR(b.need_gbs, r.bandwidth_gbs * 1.6);
	NEAR(b.need_bw_util, r.bw_util * 1.6);
	/* 8x at a tenth of the FLOPs: 80 % of dense's rate */
	NEAR(b.need_dense_share, 0.8);
	/* a met target needs less than the run does */
	spp_run_bound(&r, &d, 2, &b);
	assert_true(b.scale < 1);
	/* no dense run, no time: unknown, not zero */
	spp_run_bound(&r, NULL, 8, &b);
	assert_true(isnan(b.dense_share) && isnan(b.need_dense_share));
	NEAR(b.need_gflops, r.gflops * 1.6);
	r.speedup = NAN;
	spp_run_bound(&r, &d, 8, &b);
	assert_true(isnan(b.scale) && isnan(b.need_gbs) && isnan(b.need_gflops));
}

/* A test-only format: csr's encoding, with an output that is off by one. */
static int broken_spmm(const struct spp_encoded *w, const float *x, float *y,
		       int64_t n, const struct spp_exec *ex)
{
	int rc = spp_cpu_format_find("csr")->spmm(w, x, y, n, ex);

	y[n + 1] += 1;
	return rc;
}

/* Writes nothing: the check sees the NaN fill. */
static int lazy_spmm(const struct spp_encoded *w, const float *x, float *y,
		     int64_t n, const struct spp_exec *ex)
{
	(void)w, (void)x, (void)y, (void)n, (void)ex;
	return 0;
}

static int csr_encode(const struct spp_matrix *w, int threads, int64_t n,
		      struct spp_encoded *out, struct spp_error *err)
{
	return spp_cpu_format_find("csr")->encode(w, threads, n, out, err);
}

static void csr_release(struct spp_encoded *e)
{
	spp_cpu_format_find("csr")->release(e);
}

static const struct spp_format_ops broken = {
	.key = "broken", .encode = csr_encode, .spmm = broken_spmm, .release = csr_release};
static const struct spp_format_ops lazy = {
	.key = "lazy", .encode = csr_encode, .spmm = lazy_spmm, .release = csr_release};

/* An 8 x 16 F32 layer, 2:4 along K (or not), N = 5. */
struct small_layer {
	float w[8 * 16];
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_layer_static st;
};

static void small_layer(struct small_layer *s, int nm24)
{
	struct spp_static_counts c;
	struct spp_error err = {0};

	for (int i = 0; i < 8 * 16; i++) {
		int j = i % 16;

		/* 2:4: positions 0 and 2 of each group; else 3 of 4 in the first group */
		s->w[i] = (nm24 ? j % 4 == 0 || j % 4 == 2 : j % 4 != 3 || j < 4) ? (float)(i % 7) - 2.5f : 0;
	}
	memset(&s->t, 0, sizeof(s->t));
	s->t.name = "small.weight";
	s->t.dtype = SPP_DTYPE_F32;
	s->t.ndim = 2;
	s->t.shape[0] = 8, s->t.shape[1] = 16;
	s->t.numel = 128;
	s->t.data = (const unsigned char *)s->w;
	s->t.nbytes = sizeof(s->w);
	spp_layer_init(&s->l, &s->t, 5);
	assert_int_equal(spp_static_count(&s->l, &c, &err), 0);
	spp_static_derive(&c, SPP_DTYPE_F32, 5, &s->st);
}

static const struct spp_run *run_named(const struct spp_layer_runs *r, const char *f)
{
	for (int i = 0; i < r->nruns; i++)
		if (strcmp(r->runs[i].format, f) == 0)
			return &r->runs[i];
	fail_msg("no run '%s'", f);
	return NULL;
}

static void test_layer_runs(void **state)
{
	const struct spp_format_ops *fmts[16];
	struct small_layer s;
	struct spp_layer_runs out = {0};
	struct spp_run_opts o;
	struct spp_error err = {0};
	const struct spp_run *d, *r;
	int nf = 0;

	(void)state;
	for (; spp_cpu_formats[nf]; nf++)
		fmts[nf] = spp_cpu_formats[nf];
	fmts[nf++] = &broken;
	fmts[nf++] = &lazy;
	spp_run_opts_init(&o);
	o.threads = 2;
	o.bench.repeat = 3;
	o.bench.warmup = 1;

	small_layer(&s, 1);
	assert_int_equal(spp_layer_measure(&s.l, &s.st, fmts, nf, &o, &out, &err), 0);
	assert_int_equal(out.nruns, nf + 1);
	d = &out.runs[0];
	assert_string_equal(d->format, "dense");
	assert_string_equal(d->backend, "cpu");
	assert_int_equal(d->status, SPP_RUN_OK);
	assert_int_equal(d->time.repeats, 3);
	assert_true(d->speedup == 1);
	/* dense W is M*K*4 bytes; X 16*5*4, Y 8*5*4 */
	NEAR(d->bytes_moved, 8 * 16 * 4 + 16 * 5 * 4 + 8 * 5 * 4);
	/* the baseline does the dense FLOPs: its rate counts all of them, and
	 * as the yardstick it has no efficiency */
	assert_true(isnan(d->efficiency));
	NEAR(d->gflops, 2.0 * 8 * 16 * 5 / d->time.median);
	assert_true(d->candidate[0] && d->library[0]);
	for (int i = 1; i < out.nruns; i++) {
		r = &out.runs[i];
		if (strcmp(r->format, "nm1_4") == 0) {
			/* 2 of every 4 kept: not 1:4 */
			assert_int_equal(r->status, SPP_RUN_NOT_APPLICABLE);
			assert_true(strlen(r->reason) > 0);
			assert_int_equal(r->time.repeats, 0);
		} else if (strcmp(r->format, "broken") == 0 || strcmp(r->format, "lazy") == 0) {
			assert_int_equal(r->status, SPP_RUN_FAILED);
			assert_non_null(strstr(r->reason, "differs"));
			assert_int_equal(r->time.repeats, 0);
			assert_true(isnan(r->speedup));
		} else {
			if (r->status != SPP_RUN_OK)
				fail_msg("%s: %s", r->format, r->reason);
			assert_int_equal(r->time.repeats, 3);
			/* the figures follow from the medians */
			NEAR(r->speedup, d->time.median / r->time.median);
			NEAR(r->gflops, 2.0 * 64 * 5 / r->time.median);
			assert_true(r->max_error <= o.verify_rtol);
			assert_true(r->nnz_imbalance >= 1);
			assert_true(r->imbalance >= 1);
		}
	}
	r = run_named(&out, "csr");
	NEAR(r->efficiency, r->speedup / 2);
	spp_layer_runs_release(&out);

	/* unstructured: no N:M format holds it */
	small_layer(&s, 0);
	assert_int_equal(spp_layer_measure(&s.l, &s.st, fmts, nf - 2, &o, &out, &err), 0);
	r = run_named(&out, "nm2_4");
	assert_int_equal(r->status, SPP_RUN_NOT_APPLICABLE);
	assert_true(strlen(r->reason) > 0);
	assert_int_equal(run_named(&out, "bsr4")->status, SPP_RUN_OK);
	spp_layer_runs_release(&out);

	/* a dtype with no decoding: every run says so */
	s.t.dtype = SPP_DTYPE_F4;
	assert_int_equal(spp_layer_measure(&s.l, &s.st, fmts, 2, &o, &out, &err), 0);
	assert_int_equal(out.nruns, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out.runs[i].status, SPP_RUN_UNSUPPORTED);
		assert_non_null(strstr(out.runs[i].reason, "F4"));
	}
	spp_layer_runs_release(&out);
	spp_layer_runs_release(&out);
}

/* csr's kernel that never applies the epilogue: right plain, wrong fused. */
static int no_epi_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		       const struct spp_exec *ex)
{
	struct spp_exec plain = *ex;

	plain.epi.kind = SPP_EPILOGUE_NONE;
	return spp_cpu_format_find("csr")->spmm(w, x, y, n, &plain);
}

static const struct spp_format_ops no_epi = {
	.key = "no_epi", .encode = csr_encode, .spmm = no_epi_spmm, .release = csr_release};

/*
 * --epilogue: each verified format also fused and unfused, both timed,
 * the saving from their medians; the bias is the layer's or zeros; a
 * kernel that ignores the epilogue fails the fused check, not the run.
 */
static void test_epilogue_runs(void **state)
{
	const struct spp_format_ops *fmts[] = {spp_cpu_format_find("csr"), spp_cpu_format_find("nm2_4"),
					       &no_epi, &lazy};
	float bias[8] = {0.5f, -1, 2, -0.25f, 0, 1, -3, 0.125f};
	struct spp_tensor bt = {.name = "small.bias", .dtype = SPP_DTYPE_F32, .ndim = 1, .shape = {8},
				.numel = 8, .data = (const unsigned char *)bias, .nbytes = sizeof(bias)};
	struct small_layer s;
	struct spp_layer_runs out = {0};
	struct spp_run_opts o;
	struct spp_error err = {0};

	(void)state;
	spp_run_opts_init(&o);
	o.bench.repeat = 3;
	o.bench.warmup = 1;
	o.epilogue = SPP_EPILOGUE_BIAS_RELU;
	for (int with_bias = 0; with_bias < 2; with_bias++) {
		small_layer(&s, 1);
		s.l.bias = with_bias ? &bt : NULL;
		assert_int_equal(spp_layer_measure(&s.l, &s.st, fmts, 4, &o, &out, &err), 0);
		assert_int_equal(out.runs[0].epi.kind, SPP_EPILOGUE_NONE);
		for (int f = 0; f < 2; f++) {
			const struct spp_run *r = run_named(&out, fmts[f]->key);

			assert_int_equal(r->status, SPP_RUN_OK);
			if (r->epi.status != SPP_RUN_OK)
				fail_msg("%s: %s", r->format, r->epi.reason);
			assert_int_equal(r->epi.kind, SPP_EPILOGUE_BIAS_RELU);
			assert_string_equal(r->epi.bias_source, with_bias ? "model" : "zeros");
			assert_int_equal(r->epi.fused.repeats, 3);
			assert_int_equal(r->epi.unfused.repeats, 3);
			NEAR(r->epi.saving, 1 - r->epi.fused.median / r->epi.unfused.median);
		}
		/* right without the epilogue, wrong with it */
		assert_int_equal(run_named(&out, "no_epi")->status, SPP_RUN_OK);
		assert_int_equal(run_named(&out, "no_epi")->epi.status, SPP_RUN_FAILED);
		assert_non_null(strstr(run_named(&out, "no_epi")->epi.reason, "fused"));
		assert_true(isnan(run_named(&out, "no_epi")->epi.saving));
		/* a run that failed its plain check has no variants */
		assert_int_equal(run_named(&out, "lazy")->epi.kind, SPP_EPILOGUE_NONE);
		spp_layer_runs_release(&out);
	}
}

static void test_cold_and_blocked(void **state)
{
	const struct spp_format_ops *fmts[1] = {spp_cpu_format_find("bitmask")};
	struct small_layer s;
	struct spp_layer_runs out = {0};
	struct spp_flusher fl;
	struct spp_run_opts o;
	struct spp_error err = {0};

	(void)state;
	small_layer(&s, 0);
	spp_run_opts_init(&o);
	o.bench.repeat = 2;
	o.bench.schedule = SPP_SCHED_BLOCKED;
	o.cold = 1;
	assert_int_equal(spp_flusher_init(&fl, 1 << 20, &err), 0);
	o.flusher = &fl;
	assert_int_equal(spp_layer_measure(&s.l, &s.st, fmts, 1, &o, &out, &err), 0);
	assert_int_equal(out.runs[0].status, SPP_RUN_OK);
	assert_int_equal(out.runs[1].status, SPP_RUN_OK);
	assert_int_equal(out.runs[1].time.repeats, 2);
	spp_layer_runs_release(&out);
	spp_flusher_fini(&fl);
	assert_true(spp_pin_threads(1) <= 1);
}

/* --cold's eviction buffer: twice the largest believable cache, 256 MiB when none is known */
static void test_flusher_size(void **state)
{
	struct spp_machine *m = calloc(1, sizeof(*m));
	struct spp_flusher fl;
	struct spp_error err = {0};
	char how[128];

	(void)state;
	assert_non_null(m);
	m->ncaches = 2;
	m->caches[0] = (struct spp_cache_level){.level = 2, .size = 1 << 20, .shared_by = 1};
	m->caches[1] = (struct spp_cache_level){.level = 3, .size = 3 << 20, .shared_by = 4};
	assert_int_equal(spp_run_flusher_init(&fl, m, how, sizeof(how), &err), 0);
	assert_int_equal(fl.bytes, (size_t)6 << 20);
	assert_non_null(strstr(how, "then a 6 MiB read"));
	assert_non_null(strstr(how, spp_cache_flush_method()));
	spp_flusher_fini(&fl);
	m->ncaches = 0;
	assert_int_equal(spp_run_flusher_init(&fl, m, how, sizeof(how), &err), 0);
	assert_int_equal(fl.bytes, (size_t)256 << 20);
	spp_flusher_fini(&fl);
	free(m);
}

/* test_measure_layers.c */
void test_harness_interleaved(void **state);
void test_harness_budget(void **state);
void test_harness_device(void **state);
void test_harness_disturbed(void **state);
void test_harness_race(void **state);
void test_decode(void **state);
void test_decode_conv(void **state);
void test_end_to_end(void **state);
void test_cli_options(void **state);

/*
 * --pin, a process of its own: pinning keeps to the CPUs the process was
 * given (taskset, mpirun's binding). Confined to its last CPU, both pinned
 * threads run there, not on CPU 0 and 1. Exits 77 with one CPU.
 */
static int pin_within_affinity(void)
{
	cpu_set_t set, one;
	int last = -1, bad = 0;

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 2) {
		printf("pin: fewer than 2 CPUs: skipped\n");
		return 77;
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return 1;
	if (spp_pin_threads(2) != 2)
		bad = 1;
#pragma omp parallel num_threads(2) reduction(| : bad)
	{
		cpu_set_t mine;

		bad |= pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) != 0 ||
		       CPU_COUNT(&mine) != 1 || !CPU_ISSET(last, &mine);
	}
	printf("pin: %s to CPU %d, the one the process was given\n", bad ? "NOT pinned" : "pinned", last);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--pin") == 0)
		return pin_within_affinity();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_harness_interleaved),
		cmocka_unit_test(test_harness_budget),
		cmocka_unit_test(test_harness_device),
		cmocka_unit_test(test_harness_disturbed),
		cmocka_unit_test(test_harness_race),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_conv),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_median_ci),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_layer_runs),
		cmocka_unit_test(test_epilogue_runs),
		cmocka_unit_test(test_cold_and_blocked),
		cmocka_unit_test(test_flusher_size),
		cmocka_unit_test(test_end_to_end),
		cmocka_unit_test(test_cli_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
