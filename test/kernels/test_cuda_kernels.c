/*
 * The CUDA table on a device (test_cuda --kernels; registered only with
 * HAVE_CUDA, run by test/gpu/run on a GPU machine): every entry against the
 * CPU reference over several shapes and sparsities, each entry timed on one
 * layer, and spp_run_cuda on a layer (CUPTI figures included). Exits 77
 * with the reason where there is no device. The no-device paths are in
 * test_cuda.c.
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

#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/kernels.h"

int cuda_kernels_main(void);

#if HAVE_CUDA
#include "kernels/cuda/formats.h"
#include "kernels/cuda/host.h"
#include "kernels/cuda/measure.h"
#include "base/rng.h"
#include "profiler/device.h"
#include "profiler/run_cuda.h"

static struct spp_rng rng = {0x9e3779b97f4a7c15u};

static double uniform(void)
{
	return spp_rng_uniform(&rng);
}

/*
 * W with the given fraction of zeros; skew puts every non-zero of a third
 * of W into row 0 (dense) so that row lengths differ by orders of magnitude.
 */
static float *make_w(int64_t m, int64_t k, double sparsity, int skew)
{
	float *w = malloc(sizeof(float) * (size_t)(m * k));

	for (int64_t r = 0; r < m; r++)
		for (int64_t c = 0; c < k; c++) {
			double s = skew && r == 0 ? 0.0 : sparsity;
			w[r * k + c] = uniform() < s ? 0.0f : (float)(2.0 * uniform() - 1.0);
		}
	return w;
}

/* Keep the first two non-zeros of every group of four columns (2:4). */
static void prune_2_4(float *w, int64_t m, int64_t k)
{
	for (int64_t r = 0; r < m; r++)
		for (int64_t g = 0; g < k; g += 4) {
			int kept = 0;
			for (int64_t c = g; c < k && c < g + 4; c++)
				if (w[r * k + c] != 0.0f && ++kept > 2)
					w[r * k + c] = 0.0f;
		}
}

/*
 * Run entry f on (m, k, n, sparsity) and compare with the reference; 0
 * when equal or when f cannot hold W (a cuSPARSE BSR of a ragged shape,
 * said on stdout). fp32 entries: within 1e-4 of the fp32 reference's
 * |terms|; fp16 ones: within SPP_CUDA_RTOL_HALF of the CPU product of the
 * fp16-rounded W and X; tf32: within SPP_CUDA_RTOL_TF32 of fp32.
 */
static int check_one(const struct spp_cuda_format *f, int64_t m, int64_t k, int64_t n,
		     double sparsity, int skew)
{
	float *w = make_w(m, k, sparsity, skew);
	float *x = malloc(sizeof(float) * (size_t)(k * n));
	float *want = malloc(sizeof(float) * (size_t)(m * n));
	float *got = malloc(sizeof(float) * (size_t)(m * n));
	double *ref = malloc(sizeof(double) * (size_t)(m * n));
	double rtol = spp_cuda_precision_rtol(f->precision, 1e-4);
	struct spp_matrix mat = {m, k, w};
	struct spp_cuda_case c;
	struct spp_error err = {0};
	int bad = 0, rc;

	if (strcmp(f->key, "nm2_4") == 0 || strcmp(f->key, "nm2_4_tc") == 0)
		prune_2_4(w, m, k);
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(2.0 * uniform() - 1.0);
	spp_reference_gemm(&mat, x, want, n);
	if (spp_cuda_precision_rounds(f->precision))
		assert_int_equal(spp_cuda_reference(&mat, x, n, f->precision, ref, &err), 0);
	rc = spp_cuda_case_open(&c, f, &mat, x, n, &err);
	if (rc == SPP_E_UNSUPPORTED && f->baseline && f->block) {
		/* a vendor BSR that cannot hold this W (ragged M or K, or no row-major SpMM): no kernel of ours */
		if (!(m % f->block || k % f->block) && m == 64 && sparsity == 0.0 && !skew)
			printf("%s: not applicable: %s\n", f->key, err.msg);
		goto out;
	}
	if (rc) {
		print_error("%s %lldx%lld n=%lld: open: %s\n", f->key, (long long)m, (long long)k,
			    (long long)n, err.msg);
		bad = 1;
		goto out;
	}
	assert_ptr_equal(c.enc.ops, f);
	/* spp_cuda_case_result poisons y first: a kernel that skips an output fails */
	if (spp_cuda_case_result(&c, got, &err) != 0) {
		print_error("%s: %s\n", f->key, err.msg);
		bad = 1;
	}
	spp_cuda_case_close(&c);
	for (int64_t r = 0; r < m && !bad; r++)
		for (int64_t j = 0; j < n && !bad; j++) {
			/* sums in another order: bound by the sum of |terms| */
			double mag = 0.0, expect = spp_cuda_precision_rounds(f->precision) ? ref[r * n + j]
											 : want[r * n + j];
			for (int64_t q = 0; q < k; q++)
				mag += fabs((double)w[r * k + q] * x[q * n + j]);
			if (!(fabs((double)got[r * n + j] - expect) <= rtol * mag + 1e-6)) {
				print_error("%s %lldx%lld n=%lld sparsity %.2f%s: y[%lld][%lld] = %g, want %g\n",
					    f->key, (long long)m, (long long)k, (long long)n, sparsity,
					    skew ? " skewed" : "", (long long)r, (long long)j,
					    got[r * n + j], expect);
				bad = 1;
			}
		}
out:
	free(w);
	free(x);
	free(want);
	free(got);
	free(ref);
	return bad;
}

static void test_kernels(void **state)
{
	static const int64_t shapes[][3] = {
		{1, 1, 1}, {64, 64, 1}, {130, 70, 5}, {33, 257, 8}, {256, 512, 33}, {1000, 300, 128},
		{512, 1024, 64}, {48, 96, 200},
	};
	static const double sparsities[] = {0.0, 0.5, 0.9, 0.99, 1.0};
	int bad = 0;

	(void)state;
	for (int i = 0; spp_cuda_formats[i]; i++) {
		int before = bad;

		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			for (size_t p = 0; p < sizeof(sparsities) / sizeof(sparsities[0]); p++)
				bad |= check_one(spp_cuda_formats[i], shapes[s][0], shapes[s][1],
						 shapes[s][2], sparsities[p], 0);
			bad |= check_one(spp_cuda_formats[i], shapes[s][0], shapes[s][1], shapes[s][2],
					 0.95, 1);
		}
		printf("%-15s %s\n", spp_cuda_formats[i]->key, bad == before ? "ok" : "FAILED");
	}
	assert_int_equal(bad, 0);
}

/*
 * Every entry on one layer through the device interface and the one
 * harness (spp_run_cuda: 3 warm-up runs, 10 timed), each verified and
 * timed; then one entry opened and checked against a reference with one
 * wrong output, which it must fail, naming the output.
 */
static void test_measure(void **state)
{
	const int64_t m = 1024, k = 1024, n = 128;
	float *w = make_w(m, k, 0.9, 0);
	float *x = malloc(sizeof(float) * (size_t)(k * n));
	float *want = malloc(sizeof(float) * (size_t)(m * n));
	float *bound = malloc(sizeof(float) * (size_t)(m * n)), *y = malloc(sizeof(float) * (size_t)(m * n));
	struct spp_matrix mat = {m, k, w};
	struct spp_layer_runs out;
	struct spp_run_opts o;
	struct spp_error err = {0};
	uint64_t nnz = 0;

	(void)state;
	prune_2_4(w, m, k); /* every entry, nm2_4 included, takes a 2:4 W */
	for (int64_t i = 0; i < m * k; i++)
		nnz += w[i] != 0.0f;
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(2.0 * uniform() - 1.0);
	spp_reference_gemm(&mat, x, want, n);
	{
		/* the check's scale |W|.|X| */
		float *wa = malloc(sizeof(float) * (size_t)(m * k)), *xa = malloc(sizeof(float) * (size_t)(k * n));
		struct spp_matrix mata = {m, k, wa};

		assert_non_null(wa), assert_non_null(xa);
		for (int64_t i = 0; i < m * k; i++)
			wa[i] = fabsf(w[i]);
		for (int64_t i = 0; i < k * n; i++)
			xa[i] = fabsf(x[i]);
		spp_reference_gemm(&mata, xa, bound, n);
		free(wa), free(xa);
	}
	memset(&out, 0, sizeof(out));
	spp_run_opts_init(&o);
	o.bench.warmup = 3;
	o.bench.repeat = 10;
	assert_int_equal(spp_run_cuda(&mat, x, n, want, bound, nnz, (double)(m * k) / (double)nnz, &o,
				      &out, &err), 0);
	for (int i = 0; i < out.nruns; i++) {
		const struct spp_run *r = &out.runs[i];

		if (r->status != SPP_RUN_OK)
			fail_msg("%s: %s", r->format, r->reason);
		assert_int_equal(r->time.repeats, 10);
		assert_true(r->time.p10 > 0.0 && r->time.p10 <= r->time.median);
		printf("%-15s %s 1024x1024 90%% sparse n=128: kernel %.4f ms (p10 %.4f), "
		       "W %.2f ms, x in %.4f ms, y out %.4f ms, %.2f MiB\n", r->format, r->precision,
		       1e-6 * r->time.median, 1e-6 * r->time.p10, 1e-6 * r->copy_ns[0],
		       1e-6 * r->copy_ns[1], 1e-6 * r->copy_ns[2],
		       (r->bytes_moved - 4.0 * (double)(k * n + m * n)) / 1048576.0);
	}
	spp_layer_runs_release(&out);
	{
		const struct spp_device dev = {&spp_device_cuda, NULL};
		struct spp_device_layer L = {&mat, x, n, nnz, 2.0};
		struct spp_device_check chk = {want, bound, 1e-4, "the CPU reference", y};
		struct spp_device_case c;
		struct spp_run r;

		want[5 * n + 7] += 1000.0f; /* one wrong reference output */
		spp_run_init(&r, "cuda", spp_cuda_formats[0]->key);
		assert_int_equal(spp_device_open_checked(&dev, spp_cuda_formats[0], &L, &chk, &c, &r), 0);
		assert_int_equal(r.status, SPP_RUN_FAILED);
		assert_non_null(strstr(r.reason, "at (5, 7)"));
		assert_null(c.impl);
	}
	free(w), free(x), free(want), free(bound), free(y);
}

/*
 * spp_run_cuda on one 2:4 layer (512 x 768, n 64): the dense GPU run
 * first, then one run per table entry, each ok (verified and timed) or not
 * applicable, never failed; then with a wrong CPU result every fp32 run
 * fails its check and reports no time.
 */
static void test_run_cuda(void **state)
{
	const int64_t m = 512, k = 768, n = 64;
	float *w = make_w(m, k, 0.6, 0);
	float *x = malloc(sizeof(float) * (size_t)(k * n));
	float *yd = malloc(sizeof(float) * (size_t)(m * n));
	float *bound = malloc(sizeof(float) * (size_t)(m * n));
	float *wa = malloc(sizeof(float) * (size_t)(m * k)), *xa = malloc(sizeof(float) * (size_t)(k * n));
	struct spp_matrix mat = {m, k, w}, mata = {m, k, wa};
	struct spp_layer_runs out;
	struct spp_run_opts o;
	struct spp_error err = {0};
	uint64_t nnz = 0;
	int ntable = 0;

	(void)state;
	prune_2_4(w, m, k);
	for (int64_t i = 0; i < m * k; i++) {
		nnz += w[i] != 0.0f;
		wa[i] = fabsf(w[i]);
	}
	for (int64_t i = 0; i < k * n; i++) {
		x[i] = (float)(2.0 * uniform() - 1.0);
		xa[i] = fabsf(x[i]);
	}
	spp_reference_gemm(&mat, x, yd, n);
	spp_reference_gemm(&mata, xa, bound, n);
	while (spp_cuda_formats[ntable])
		ntable++;
	memset(&out, 0, sizeof(out));
	spp_run_opts_init(&o);
	o.backends = SPP_BACKEND_CPU | SPP_BACKEND_CUDA;
	o.bench.repeat = 5;
	o.cupti = 1;
	assert_int_equal(spp_run_cuda(&mat, x, n, yd, bound, nnz, (double)(m * k) / (double)nnz, &o,
				      &out, &err), 0);
	assert_int_equal(out.nruns, ntable); /* cublas_dense is the run "dense" */
	assert_string_equal(out.runs[0].format, "dense");
	assert_string_equal(out.runs[0].backend, "cuda");
	assert_string_equal(out.runs[0].precision, "fp32");
	for (int i = 0; i < out.nruns; i++) {
		const struct spp_run *r = &out.runs[i];

		printf("%-15s %-5s %-14s median %9.0f ns  speedup %6.3f  max_error %.2g  "
		       "copies %.0f/%.0f/%.0f ns  nnz_imbalance %.3f  gpu %s %s\n",
		       r->format, r->precision, spp_run_status_name(r->status), r->time.median,
		       r->speedup, r->max_error, r->copy_ns[0], r->copy_ns[1], r->copy_ns[2],
		       r->nnz_imbalance, r->gpu.source[0] ? r->gpu.source : "-", r->gpu.note);
		if (r->status == SPP_RUN_OK) {
			assert_int_equal(r->time.repeats, 5);
			assert_true(r->time.p10 <= r->time.median && r->time.median <= r->time.p90);
			assert_true(r->copy_ns[1] > 0 && r->copy_ns[2] > 0);
			assert_true(r->max_error >= 0);
			assert_true(r->gpu.source[0] || r->gpu.note[0]);
		} else {
			if (r->status != SPP_RUN_NOT_APPLICABLE)
				fail_msg("%s: %s", r->format, r->reason);
			assert_int_equal(r->time.repeats, 0);
		}
	}
	assert_true(fabs(out.runs[0].speedup - 1.0) < 1e-12);
	spp_layer_runs_release(&out);
	/* a CPU result off by one in one output: the fp32 and tf32 runs fail, with no time */
	yd[3 * n + 2] += 1.0f;
	memset(&out, 0, sizeof(out));
	o.cupti = 0;
	assert_int_equal(spp_run_cuda(&mat, x, n, yd, bound, nnz, 2.0, &o, &out, &err), 0);
	for (int i = 0; i < out.nruns; i++) {
		const struct spp_run *r = &out.runs[i];

		if (strcmp(r->precision, "fp16") == 0 || r->status == SPP_RUN_NOT_APPLICABLE)
			continue;
		assert_int_equal(r->status, SPP_RUN_FAILED);
		assert_int_equal(r->time.repeats, 0);
		assert_non_null(strstr(r->reason, "at (3, 2)"));
	}
	spp_layer_runs_release(&out);
	free(w), free(x), free(yd), free(bound), free(wa), free(xa);
}

int cuda_kernels_main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_measure),
		cmocka_unit_test(test_run_cuda),
	};
	struct spp_cuda_probe p;
	char line[320];

	if (!spp_cuda_probe(&p)) {
		printf("skipped: %s\n", p.why);
		return 77;
	}
	spp_cuda_device_describe(&p, 0, line, (int)sizeof(line));
	printf("device 0: %s\n", line);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int cuda_kernels_main(void)
{
	printf("skipped: no CUDA backend in this build\n");
	return 77;
}
#endif
