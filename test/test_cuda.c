/*
 * The CUDA backend. In every build: `spprof info` names the CUDA devices
 * or why there are none, and `analyze --backends cuda` exits 3 with that
 * reason (or "no CUDA backend in this build"). With --kernels (registered
 * only with HAVE_CUDA; test/gpu/run on a GPU machine): every entry of the
 * CUDA table against spp_reference_gemm over several shapes and
 * sparsities; exits 77 with the reason where there is no device.
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/kernels.h"
#include "test/harness.h"

#if HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/formats.h"
#include "kernels/cuda/measure.h"
#endif

/* Whether this machine has an NVIDIA driver, asked without cudart. */
static int have_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h)
		dlclose(h);
	return h != NULL;
}

static void test_info_line(void **state)
{
	const char *args[] = {"info", NULL};
	struct spp_cuda_probe p;
	struct harness_run r;
	char want[512];

	(void)state;
	spp_cuda_probe(&p);
	assert_int_equal(p.built, HAVE_CUDA);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	if (!HAVE_CUDA) {
		assert_non_null(strstr(r.out, "\ngpu          cuda: no CUDA backend in this build\n"));
	} else if (!have_driver()) {
		/* the binary started without libcuda: cudart found no driver */
		assert_int_equal(p.ndevices, 0);
		assert_string_equal(p.why, "no device (driver not found)");
		assert_non_null(strstr(r.out, "\ngpu          cuda: no device (driver not found)\n"));
	} else if (p.ndevices == 0) {
		snprintf(want, sizeof(want), "\ngpu          cuda: %s\n", p.why);
		assert_non_null(strstr(r.out, want));
	} else {
		snprintf(want, sizeof(want), "\ngpu          cuda:0 %s, sm_%d", p.dev[0].name, p.dev[0].sm);
		assert_non_null(strstr(r.out, want));
	}
	harness_run_free(&r);
}

static void test_analyze_backends(void **state)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *model = harness_join(root, "bert_block_nm2_4.safetensors");
	struct spp_cuda_probe p;
	struct harness_run r;
	char want[512];

	(void)state;
	spp_cuda_probe(&p);
	if (!p.built)
		snprintf(want, sizeof(want), "spprof: no CUDA backend in this build\n");
	else if (!p.ndevices)
		snprintf(want, sizeof(want), "spprof: no CUDA backend to run on: %s\n", p.why);
	else
		snprintf(want, sizeof(want), "spprof: no CUDA backend to run on: analyze does not run");
	{
		const char *args[] = {"analyze", model, "--backends", "cuda", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 3);
		assert_non_null(strstr(r.err, want));
		assert_int_equal(r.out_len, 0);
		harness_run_free(&r);
	}
	{
		/* next to cpu: skipped with one warning line (or exit 3 when not built) */
		const char *args[] = {"analyze", model, "--backends", "cpu,cuda", "--static",
				      "--format", "json", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (!p.built) {
			assert_int_equal(r.status, 3);
			assert_string_equal(r.err, want);
		} else {
			assert_int_equal(r.status, 0);
			snprintf(want, sizeof(want), "spprof: warning: skipping backend cuda: %s\n",
				 p.ndevices ? "analyze does not run the CUDA kernels yet (test/gpu/run does)"
					    : p.why);
			assert_non_null(strstr(r.err, want));
			assert_non_null(strstr(r.out, "\"layers\""));
		}
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--backends", "cpu,gpu", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "unknown backend 'gpu'"));
		harness_run_free(&r);
	}
	free(model);
}

/* Without a device, every entry of the CUDA table fails to encode with the reason. */
static void test_encode_no_device(void **state)
{
#if HAVE_CUDA
	static const float v[6] = {1, 0, 2, 0, 0, 3};
	const struct spp_matrix w = {2, 3, v};
	struct spp_cuda_probe p;
	int n = 0;

	(void)state;
	if (spp_cuda_probe(&p)) {
		skip(); /* test/gpu/run covers the device */
		return;
	}
	for (int i = 0; spp_cuda_formats[i]; i++, n++) {
		struct spp_cuda_encoded e = {0};
		struct spp_error err = {0};
		const struct spp_cuda_format *f = spp_cuda_formats[i];

		assert_ptr_equal(spp_cuda_format_find(f->key), f);
		assert_int_equal(f->encode(&w, &e, &err), SPP_E_DEVICE);
		assert_null(e.impl);
		assert_non_null(strstr(err.msg, "cuda: "));
		f->release(&e);
	}
	/* csr, csr_balanced, bsr4/8/16, bitmask, nm2_4, cuSPARSE csr and coo, cuBLAS */
	assert_int_equal(n, 10);
	{
		/* 2:4 is checked on the host, before any copy */
		static const float three[8] = {1, 2, 3, 0, 1, 0, 0, 1};
		const struct spp_matrix w3 = {2, 4, three};
		struct spp_cuda_encoded e = {0};
		struct spp_error err = {0};

		assert_int_equal(spp_cuda_format_find("nm2_4")->encode(&w3, &e, &err),
				 SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "50.0% of groups hold more than 2 non-zeros");
		assert_null(e.impl);
	}
	{
		static const float x[3] = {1, 1, 1};
		static const float want[2] = {3, 3};
		struct spp_cuda_timing t;
		struct spp_error err = {0};

		assert_int_equal(spp_cuda_measure(spp_cuda_formats[0], &w, x, 1, want, 1, 1, &t, &err),
				 SPP_E_DEVICE);
		assert_int_equal(t.runs, 0);
	}
	assert_null(spp_cuda_format_find("nm1_4"));
#else
	(void)state;
	skip();
#endif
}

#if HAVE_CUDA
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
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

/* Run entry f on (m, k, n, sparsity) and compare with the reference; 0 when equal. */
static int check_one(const struct spp_cuda_format *f, int64_t m, int64_t k, int64_t n,
		     double sparsity, int skew)
{
	float *w = make_w(m, k, sparsity, skew);
	float *x = malloc(sizeof(float) * (size_t)(k * n));
	float *want = malloc(sizeof(float) * (size_t)(m * n));
	float *got = malloc(sizeof(float) * (size_t)(m * n));
	struct spp_matrix mat = {m, k, w};
	struct spp_cuda_encoded e = {0};
	struct spp_error err = {0};
	float *dx = NULL, *dy = NULL;
	int bad = 0;

	if (strcmp(f->key, "nm2_4") == 0)
		prune_2_4(w, m, k);
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(2.0 * uniform() - 1.0);
	spp_reference_gemm(&mat, x, want, n);
	assert_int_equal(f->encode(&mat, &e, &err), 0);
	assert_ptr_equal(e.ops, f);
	assert_int_equal(cudaMalloc((void **)&dx, sizeof(float) * (size_t)(k * n)), cudaSuccess);
	assert_int_equal(cudaMalloc((void **)&dy, sizeof(float) * (size_t)(m * n)), cudaSuccess);
	assert_int_equal(cudaMemcpy(dx, x, sizeof(float) * (size_t)(k * n), cudaMemcpyHostToDevice),
			 cudaSuccess);
	/* poison y: a kernel that skips an output must not pass by luck */
	assert_int_equal(cudaMemset(dy, 0x7f, sizeof(float) * (size_t)(m * n)), cudaSuccess);
	if (f->spmm(&e, dx, dy, n, &err) != 0) {
		print_error("%s: %s\n", f->key, err.msg);
		bad = 1;
	}
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(cudaMemcpy(got, dy, sizeof(float) * (size_t)(m * n), cudaMemcpyDeviceToHost),
			 cudaSuccess);
	for (int64_t r = 0; r < m && !bad; r++)
		for (int64_t j = 0; j < n && !bad; j++) {
			/* fp32 sums in another order: bound by the sum of |terms| */
			double mag = 0.0;
			for (int64_t c = 0; c < k; c++)
				mag += fabs((double)w[r * k + c] * x[c * n + j]);
			if (!(fabs((double)got[r * n + j] - want[r * n + j]) <= 1e-4 * mag + 1e-6)) {
				print_error("%s %lldx%lld n=%lld sparsity %.2f%s: y[%lld][%lld] = %g, want %g\n",
					    f->key, (long long)m, (long long)k, (long long)n, sparsity,
					    skew ? " skewed" : "", (long long)r, (long long)j,
					    got[r * n + j], want[r * n + j]);
				bad = 1;
			}
		}
	f->release(&e);
	cudaFree(dx);
	cudaFree(dy);
	free(w);
	free(x);
	free(want);
	free(got);
	return bad;
}

static void test_kernels(void **state)
{
	static const int64_t shapes[][3] = {
		{1, 1, 1}, {64, 64, 1}, {130, 70, 5}, {33, 257, 8}, {256, 512, 33}, {1000, 300, 128},
	};
	static const double sparsities[] = {0.0, 0.5, 0.9, 0.99, 1.0};
	int bad = 0;

	(void)state;
	for (int i = 0; spp_cuda_formats[i]; i++)
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			for (size_t p = 0; p < sizeof(sparsities) / sizeof(sparsities[0]); p++)
				bad |= check_one(spp_cuda_formats[i], shapes[s][0], shapes[s][1],
						 shapes[s][2], sparsities[p], 0);
			bad |= check_one(spp_cuda_formats[i], shapes[s][0], shapes[s][1], shapes[s][2],
					 0.95, 1);
		}
	assert_int_equal(bad, 0);
}

/* Every entry timed on one layer; a wrong reference must be refused. */
static void test_measure(void **state)
{
	const int64_t m = 1024, k = 1024, n = 128;
	float *w = make_w(m, k, 0.9, 0);
	float *x = malloc(sizeof(float) * (size_t)(k * n));
	float *want = malloc(sizeof(float) * (size_t)(m * n));
	struct spp_matrix mat = {m, k, w};

	(void)state;
	prune_2_4(w, m, k); /* every entry, nm2_4 included, takes a 2:4 W */
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(2.0 * uniform() - 1.0);
	spp_reference_gemm(&mat, x, want, n);
	for (int i = 0; spp_cuda_formats[i]; i++) {
		const struct spp_cuda_format *f = spp_cuda_formats[i];
		struct spp_cuda_timing t;
		struct spp_error err = {0};

		if (spp_cuda_measure(f, &mat, x, n, want, 3, 10, &t, &err) != 0)
			fail_msg("%s: %s", f->key, err.msg);
		assert_int_equal(t.runs, 10);
		assert_true(t.kernel_ms_min > 0.0 && t.kernel_ms_min <= t.kernel_ms_median);
		printf("%-14s 1024x1024 90%% sparse n=128: kernel %.4f ms (median %.4f), "
		       "W %.2f ms, x in %.4f ms, y out %.4f ms, %.2f MiB\n", f->key, t.kernel_ms_min,
		       t.kernel_ms_median, t.h2d_w_ms, t.h2d_x_ms, t.d2h_y_ms,
		       (double)t.bytes / 1048576.0);
	}
	{
		struct spp_cuda_timing t;
		struct spp_error err = {0};

		want[5 * n + 7] += 1.0f; /* one wrong reference output */
		assert_int_equal(spp_cuda_measure(spp_cuda_formats[0], &mat, x, n, want, 1, 1, &t, &err),
				 SPP_E_VERIFY);
		assert_non_null(strstr(err.msg, "y[5][7]"));
	}
	free(w);
	free(x);
	free(want);
}

static int kernels_main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_measure),
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
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_line),
		cmocka_unit_test(test_analyze_backends),
		cmocka_unit_test(test_encode_no_device),
	};

	if (argc > 1 && strcmp(argv[1], "--kernels") == 0) {
#if HAVE_CUDA
		return kernels_main();
#else
		printf("skipped: no CUDA backend in this build\n");
		return 77;
#endif
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
