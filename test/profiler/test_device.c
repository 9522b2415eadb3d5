/*
 * The device interface (profiler/device.h): the one open-and-check path
 * and its statuses on a scripted device, the harness driving a device's
 * own timer and synchronising after timing, the figures of a case, and
 * the CPU device (formats and dense candidates) on a real matrix.
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

#include "kernels/dense/dense.h"
#include "kernels/kernels.h"
#include "profiler/device.h"
#include "profiler/run.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

/* What a scripted entry does. */
enum script { OK, CANNOT_HOLD, OPEN_FAILS, LAUNCH_FAILS, WRONG, SHORT };

struct scripted {
	int opens, closes, runs, timed, syncs;
	double device_ns;      /* what time reports */
};

struct scripted_case {
	enum script s;
	const struct spp_device_layer *L;
};

static int s_open(void *dev, const void *entry, const struct spp_device_layer *L,
		  struct spp_device_case *c, struct spp_error *err)
{
	struct scripted *d = dev;
	struct scripted_case *k;
	enum script s = *(const enum script *)entry;

	if (s == CANNOT_HOLD)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cannot hold this W");
	if (s == OPEN_FAILS)
		return spp_error_set(err, SPP_E_NOMEM, "no room on the device");
	k = malloc(sizeof(*k));
	assert_non_null(k);
	*k = (struct scripted_case){s, L};
	d->opens++;
	c->impl = k;
	c->w_bytes = 100;
	c->nnz_imbalance = 1.5;
	c->copy_ns[0] = 10, c->copy_ns[1] = 20;
	return SPP_OK;
}

static int s_run(struct spp_device_case *c, double *busy, struct spp_error *err)
{
	struct scripted *d = c->dev->ctx;
	struct scripted_case *k = c->impl;

	(void)busy;
	d->runs++;
	return k->s == LAUNCH_FAILS ? spp_error_set(err, SPP_E_DEVICE, "launch refused") : SPP_OK;
}

/* y = the product (the check's reference), wrong by a lot, or one output never written */
static int s_result(struct spp_device_case *c, float *y, struct spp_error *err)
{
	struct scripted_case *k = c->impl;
	int64_t mn = k->L->w->m * k->L->n;
	int rc = s_run(c, NULL, err);

	for (int64_t i = 0; i < mn; i++)
		y[i] = NAN;
	if (rc)
		return rc;
	for (int64_t i = 0; i < mn - (k->s == SHORT); i++)
		y[i] = 1.0f + (k->s == WRONG && i == 2 ? 0.5f : 0.0f);
	c->copy_ns[2] = 30;
	return SPP_OK;
}

static int s_time(struct spp_device_case *c, double *ns, struct spp_error *err)
{
	struct scripted *d = c->dev->ctx;
	int rc = s_run(c, NULL, err);

	d->timed++;
	*ns = d->device_ns;
	return rc;
}

static void s_sync(void *dev)
{
	((struct scripted *)dev)->syncs++;
}

static void s_close(struct spp_device_case *c)
{
	struct scripted *d = c->dev->ctx;

	d->closes++;
	free(c->impl);
	c->impl = NULL;
}

static const struct spp_device_ops scripted_ops = {
	"scripted", s_open, s_run, s_result, s_time, s_sync, s_close,
};

static void test_open_checked(void **state)
{
	float wv[6] = {1, 0, 0, 1, 1, 1}, x[6] = {0}, ref[4], bound[4], y[4];
	struct spp_matrix w = {2, 3, wv};
	struct spp_device_layer L = {&w, x, 2, 4, 1.5};
	struct scripted d = {0};
	struct spp_device dev = {&scripted_ops, &d};
	struct spp_device_check chk = {ref, bound, 1e-4, "dense", y};
	struct spp_device_case c;
	struct spp_run r;
	enum script s;

	(void)state;
	for (int i = 0; i < 4; i++)
		ref[i] = 1, bound[i] = 1;

	s = OK;
	spp_run_init(&r, "cpu", "ok");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 1);
	assert_int_equal(r.status, SPP_RUN_OK);
	assert_string_equal(r.reason, "");
	NEAR(r.max_error, 0);
	NEAR(r.nnz_imbalance, 1.5);
	NEAR(r.copy_ns[0], 10), NEAR(r.copy_ns[1], 20), NEAR(r.copy_ns[2], 30);
	assert_non_null(c.impl);
	spp_device_close(&c);
	assert_null(c.impl);
	spp_device_close(&c);  /* twice is harmless */

	s = CANNOT_HOLD;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_NOT_APPLICABLE);
	assert_string_equal(r.reason, "cannot hold this W");

	/* out of memory for one entry fails that entry only */
	s = OPEN_FAILS;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_FAILED);
	assert_string_equal(r.reason, "encode failed: no room on the device");

	s = LAUNCH_FAILS;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_FAILED);
	assert_string_equal(r.reason, "kernel failed: launch refused");

	s = WRONG;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_FAILED);
	NEAR(r.max_error, 0.5);
	assert_string_equal(r.reason, "output differs from dense by 0.5 x (|W|.|X|) at (1, 0), bound 0.0001");

	/* an output the device never writes is NaN and fails */
	s = SHORT;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, &chk, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_FAILED);

	/* nothing to check against: opened, then failed and closed */
	s = OK;
	spp_run_init(&r, "cpu", "x");
	assert_int_equal(spp_device_open_checked(&dev, &s, &L, NULL, &c, &r), 0);
	assert_int_equal(r.status, SPP_RUN_FAILED);
	assert_string_equal(r.reason, "no verified dense result to check against");
	assert_null(c.impl);

	/* every case the device opened was closed */
	assert_int_equal(d.opens, d.closes);
	assert_int_equal(d.opens, 5);
}

/* A host clock that moves 7 ns a reading: a device timer reads none of it. */
static double slow_clock(void *ctx)
{
	double *t = ctx;

	return *t += 7;
}

static void test_time_by_device(void **state)
{
	float wv[1] = {1}, x[1] = {1};
	struct spp_matrix w = {1, 1, wv};
	struct spp_device_layer L = {&w, x, 1, 1, 1};
	struct scripted a = {0}, b = {0};
	struct spp_device da = {&scripted_ops, &a}, db = {&scripted_ops, &b};
	struct spp_device_case c[3], *pc[3] = {&c[0], &c[1], &c[2]};
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};
	enum script s = OK;
	double t = 0;

	(void)state;
	a.device_ns = 250;
	b.device_ns = 400;
	assert_int_equal(spp_device_open(&da, &s, &L, &c[0], &err), 0);
	assert_int_equal(spp_device_open(&da, &s, &L, &c[1], &err), 0);
	assert_int_equal(spp_device_open(&db, &s, &L, &c[2], &err), 0);
	spp_bench_opts_init(&o);
	o.warmup = 1;
	o.repeat = 3;
	o.clock = (struct spp_clock){slow_clock, &t};
	assert_int_equal(spp_device_time(pc, 3, &o, res, &err), 0);
	/* the medians are the devices' own times, not the host clock's */
	NEAR(res[0].time.median, 250);
	NEAR(res[1].time.median, 250);
	NEAR(res[2].time.median, 400);
	assert_int_equal(res[0].time.repeats, 3);
	/* warm-up through run, timed runs through time */
	assert_int_equal(a.timed, 6);
	assert_int_equal(a.runs, 2 + 6);
	/* each device waited for once, after the timed runs */
	assert_int_equal(a.syncs, 1);
	assert_int_equal(b.syncs, 1);
	for (int i = 0; i < 3; i++)
		spp_device_close(&c[i]);
	assert_int_equal(a.closes + b.closes, 3);
}

static void test_figures_of_a_case(void **state)
{
	float wv[4] = {0};
	struct spp_matrix w = {2, 2, wv};
	struct spp_device_layer L = {&w, NULL, 10, 2, 2.0};
	struct spp_device_case c = {0};
	struct spp_run r;

	(void)state;
	c.w_bytes = 16;
	spp_run_init(&r, "cpu", "csr");
	r.time.median = 20;
	spp_device_figures(&L, &c, NULL, 30, SPP_WORK_SPARSE, 0, 0, &r);
	NEAR(r.speedup, 1.5);
	NEAR(r.efficiency, 0.75);    /* against the static ideal 2 */
	NEAR(r.gflops, 2.0 * 2 * 10 / 20);
	NEAR(r.bytes_moved, 16 + 4.0 * 2 * 10 + 4.0 * 2 * 10);
	assert_true(isnan(r.bw_util));

	spp_run_init(&r, "cpu", "dense");
	r.time.median = 30;
	spp_device_figures(&L, &c, NULL, 30, SPP_WORK_DENSE, 0, 0, &r);
	/* the yardstick: no efficiency, its rate on the dense FLOPs, no peak to share */
	assert_true(isnan(r.efficiency) && isnan(r.gap) && isnan(r.peak_share));
	NEAR(r.gflops, 2.0 * 2 * 2 * 10 / 30);
	/* with the calibrated FMA peak, its share of it; a CUDA baseline has none of the CPU's */
	{
		struct spp_bw_model bw = {{0}, {0}, 0, 4.0};

		spp_device_figures(&L, &c, &bw, 30, SPP_WORK_DENSE, 0, 0, &r);
		NEAR(r.peak_share, 2.0 * 2 * 2 * 10 / 30 / 4.0);
		spp_run_init(&r, "cuda", "dense");
		r.time.median = 30;
		spp_device_figures(&L, &c, &bw, 30, SPP_WORK_DENSE, 0, 0, &r);
		assert_true(isnan(r.peak_share));
		spp_run_init(&r, "cpu", "csr");
		r.time.median = 20;
		spp_device_figures(&L, &c, &bw, 30, SPP_WORK_SPARSE, 0, 0, &r);
		assert_true(isnan(r.peak_share));
	}

	spp_run_init(&r, "cpu", "csr_act");
	r.time.median = 10;
	spp_device_figures(&L, &c, NULL, 30, SPP_WORK_GIVEN, 20, 4, &r);
	NEAR(r.gflops, 2);
	NEAR(r.efficiency, 3.0 / 4);
}

/* The CPU device: each format and the first dense candidate compute W X. */
static void test_cpu_device(void **state)
{
	enum { M = 37, K = 29, N = 5 };
	float *wv = calloc(M * K, sizeof(float)), *x = malloc(K * N * sizeof(float));
	float *y = malloc(M * N * sizeof(float)), *got = malloc(M * N * sizeof(float));
	double *want = malloc(M * N * sizeof(double));
	struct spp_matrix w = {M, K, wv};
	struct spp_device_layer L = {&w, x, N, 0, 0};
	struct spp_device_cpu cpu = {1, SPP_ISA_PORTABLE, y};
	struct spp_device fdev = {&spp_device_cpu_formats, &cpu}, ddev = {&spp_device_cpu_dense, &cpu};
	struct spp_dense_set set;
	struct spp_device_case c;
	struct spp_error err = {0};
	int first;

	(void)state;
	assert_non_null(wv), assert_non_null(x), assert_non_null(y), assert_non_null(got);
	assert_non_null(want);
	for (int i = 0; i < M * K; i++)
		if (i % 7 == 0 || i % 11 == 3)
			wv[i] = (float)(i % 5) - 2.0f, L.nnz += wv[i] != 0;
	for (int i = 0; i < K * N; i++)
		x[i] = (float)(i % 9) / 4.0f - 1.0f;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			want[i * N + j] = 0;
			for (int k = 0; k < K; k++)
				want[i * N + j] += (double)wv[i * K + k] * x[k * N + j];
		}
	for (int f = 0; spp_cpu_formats[f]; f++) {
		int rc = spp_device_open(&fdev, spp_cpu_formats[f], &L, &c, &err);

		if (rc == SPP_E_UNSUPPORTED)
			continue;  /* N:M that W does not comply with */
		assert_int_equal(rc, 0);
		assert_non_null(spp_device_cpu_encoded(&c));
		NEAR(c.w_bytes, (double)spp_device_cpu_encoded(&c)->bytes);
		assert_int_equal(c.nthreads, 1);
		assert_int_equal(fdev.ops->result(&c, got, &err), 0);
		for (int i = 0; i < M * N; i++)
			assert_true(fabs(got[i] - want[i]) <= 1e-4 * (1 + fabs(want[i])));
		/* a timed run writes the device's Y */
		assert_int_equal(fdev.ops->run(&c, NULL, &err), 0);
		for (int i = 0; i < M * N; i++)
			assert_true(fabs(y[i] - want[i]) <= 1e-4 * (1 + fabs(want[i])));
		spp_device_close(&c);
	}
	assert_int_equal(spp_dense_set_open(&set, NULL, SPP_ISA_PORTABLE, &err), 0);
	first = spp_dense_set_first(&set);
	assert_true(first >= 0);
	assert_int_equal(spp_device_open(&ddev, &set.c[first], &L, &c, &err), 0);
	assert_null(spp_device_cpu_encoded(&c));
	NEAR(c.w_bytes, 4.0 * M * K);
	assert_int_equal(ddev.ops->result(&c, got, &err), 0);
	for (int i = 0; i < M * N; i++)
		assert_true(fabs(got[i] - want[i]) <= 1e-4 * (1 + fabs(want[i])));
	spp_device_close(&c);
	spp_dense_set_close(&set);
	free(wv), free(x), free(y), free(got), free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_checked),
		cmocka_unit_test(test_time_by_device),
		cmocka_unit_test(test_figures_of_a_case),
		cmocka_unit_test(test_cpu_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
