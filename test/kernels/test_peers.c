/*
 * Reference peers (kernels/peers.h): librsb against the plain reference
 * product over ragged shapes, sparsities, N and thread counts; through the
 * measured runs (checked and timed like a format); `analyze --peers` on
 * the command line. Skips (77) when built without librsb.
 *
 * Error bound (per element of Y), as in test_kernels:
 *   |y - ref| <= 1e-4 * sum_k |w[i][k]| * |x[k][j]| + 1e-6
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

#include "config.h"
#include "kernels/kernels.h"
#include "kernels/peers.h"
#include "profiler/run.h"
#include "profiler/synth.h"
#include "test/harness.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	/* xorshift64*: independent of the library's generators */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static float *make_w(int64_t m, int64_t k, double s)
{
	float *w = malloc((size_t)(m * k + 1) * sizeof(*w));

	assert_non_null(w);
	for (int64_t i = 0; i < m * k; i++) {
		float v = (float)(0.0625 + 0.9375 * uniform());

		w[i] = uniform() < s ? 0.0f : (uniform() < 0.5 ? -v : v);
	}
	return w;
}

static void check_case(const struct spp_format_ops *ops, int64_t m, int64_t k, int64_t n,
		       double s, int threads)
{
	float *w = make_w(m, k, s), *x = malloc((size_t)(k * n) * sizeof(float));
	float *y = malloc((size_t)(m * n) * sizeof(float));
	float *ref = malloc((size_t)(m * n) * sizeof(float));
	float *wa = malloc((size_t)(m * k + 1) * sizeof(float));
	float *xa = malloc((size_t)(k * n) * sizeof(float));
	float *bound = malloc((size_t)(m * n) * sizeof(float));
	struct spp_matrix wm = {m, k, w}, wam = {m, k, wa};
	struct spp_encoded enc;
	struct spp_error err = {0};
	double busy[4] = {-1, -1, -1, -1};
	struct spp_exec ex = {threads, spp_isa_detect(), busy};
	int64_t nnz = 0;

	assert_true(x && y && ref && wa && xa && bound);
	for (int64_t i = 0; i < k * n; i++) {
		x[i] = (float)(2 * uniform() - 1);
		xa[i] = fabsf(x[i]);
	}
	for (int64_t i = 0; i < m * k; i++) {
		wa[i] = fabsf(w[i]);
		nnz += w[i] != 0;
	}
	spp_reference_gemm(&wm, x, ref, n);
	spp_reference_gemm(&wam, xa, bound, n);
	if (ops->encode(&wm, threads, &enc, &err))
		fail_msg("%lldx%lldx%lld s %.2f t %d: encode: %s", (long long)m, (long long)k,
			 (long long)n, s, threads, err.msg);
	assert_ptr_equal(enc.ops, ops);
	assert_int_equal(enc.m, m);
	assert_int_equal(enc.k, k);
	assert_int_equal(enc.nnz, nnz);
	for (int64_t i = 0; i < m * n; i++)
		y[i] = NAN;  /* an element the peer does not write fails */
	assert_int_equal(ops->spmm(&enc, x, y, n, &ex), 0);
	for (int t = 0; t < threads; t++)
		assert_true(busy[t] == 0);  /* unknown, never a stale figure */
	for (int64_t i = 0; i < m * n; i++)
		if (!(fabs((double)y[i] - ref[i]) <= 1e-4 * bound[i] + 1e-6))
			fail_msg("%lldx%lldx%lld s %.2f t %d: y[%lld] = %g, reference %g",
				 (long long)m, (long long)k, (long long)n, s, threads,
				 (long long)i, y[i], ref[i]);
	ops->release(&enc);
	ops->release(&enc);  /* a released struct is zeroed */
	ops->release(NULL);
	free(w), free(x), free(y), free(ref), free(wa), free(xa), free(bound);
}

static void test_librsb_reference(void **state)
{
	static const int64_t shapes[][2] = {{1, 1}, {7, 13}, {64, 100}, {33, 257}, {300, 17}};
	static const double sparsities[] = {0, 0.5, 0.9, 0.99, 1.0};
	static const int64_t ns[] = {1, 3, 64};
	const struct spp_format_ops *ops = spp_cpu_peer_find("librsb");

	(void)state;
	assert_non_null(ops);
	assert_string_equal(ops->key, "librsb");
	for (size_t a = 0; a < sizeof(shapes) / sizeof(shapes[0]); a++)
		for (size_t b = 0; b < sizeof(sparsities) / sizeof(sparsities[0]); b++)
			for (size_t c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
				for (int t = 1; t <= 2; t++)
					check_case(ops, shapes[a][0], shapes[a][1], ns[c],
						   sparsities[b], t);
}

static void test_registry(void **state)
{
	int n = 0;

	(void)state;
	for (; spp_cpu_peers[n]; n++)
		;
	assert_int_equal(n, 1);
	assert_ptr_equal(spp_cpu_peer_find("librsb"), spp_cpu_peers[0]);
	assert_null(spp_cpu_peer_find("csr"));
	assert_null(spp_cpu_peer_find(NULL));
	assert_true(spp_cpu_peer_known("librsb"));
	assert_false(spp_cpu_peer_known("mkl"));
}

/* A peer is a format to the measured runs: checked, then timed. */
static void test_measured_runs(void **state)
{
	const struct spp_format_ops *fm[2] = {spp_cpu_format_find("csr"),
					      spp_cpu_peer_find("librsb")};
	struct spp_run_opts o;
	struct spp_layer_runs runs = {0};
	struct spp_error err = {0};
	float *w = make_w(96, 80, 0.8);
	struct spp_matrix wm = {96, 80, w};
	uint64_t nnz = 0;

	(void)state;
	for (int i = 0; i < 96 * 80; i++)
		nnz += w[i] != 0;
	spp_run_opts_init(&o);
	o.bench.repeat = 3;
	assert_int_equal(spp_matrix_measure(&wm, 16, nnz, 96.0 * 80 / (double)nnz, "t", fm, 2,
					    &o, &runs, &err), 0);
	assert_int_equal(runs.nruns, 3);
	assert_string_equal(runs.runs[2].format, "librsb");
	assert_string_equal(runs.runs[2].backend, "cpu");
	assert_int_equal(runs.runs[2].status, SPP_RUN_OK);
	assert_int_equal(runs.runs[2].time.repeats, 3);
	assert_true(runs.runs[2].max_error <= 1e-4);
	assert_true(runs.runs[2].speedup > 0);
	assert_true(isnan(runs.runs[2].nnz_imbalance));  /* librsb's partition is unknown */
	assert_true(isnan(runs.runs[2].imbalance));
	spp_layer_runs_release(&runs);
	free(w);
}

static void test_cli(void **state)
{
	struct spp_synth_layer l;
	struct spp_error err = {0};
	struct harness_run r;
	char *dir = harness_tmpdir(), *model;

	(void)state;
	assert_non_null(dir);
	model = harness_join(dir, "m.safetensors");
	assert_int_equal(spp_synth_parse_layer("fc=48x40:unstructured:0.7", &l, &err), 0);
	assert_int_equal(spp_synth_write(model, &l, 1, 1, &err), 0);
	{
		const char *args[] = {"analyze", model, "--n", "8", "--formats", "csr",
				      "--peers", "librsb", "--repeat", "2", "--format", "json",
				      "--quiet", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
		{
			cJSON *j = cJSON_Parse(r.out), *runs, *run;
			int found = 0;

			assert_non_null(j);
			runs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "layers"), 0),
						   "runs");
			cJSON_ArrayForEach(run, runs) {
				const char *f = cJSON_GetStringValue(cJSON_GetObjectItem(run, "format"));

				if (f && strcmp(f, "librsb") == 0) {
					found = 1;
					assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "ok");
					assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "backend")), "cpu");
				}
			}
			assert_true(found);
			cJSON_Delete(j);
		}
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--peers", "nosuch", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "unknown peer 'nosuch'"));
		harness_run_free(&r);
	}
	free(model);
	harness_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_librsb_reference),
		cmocka_unit_test(test_measured_runs),
		cmocka_unit_test(test_cli),
	};

	if (!HAVE_LIBRSB) {
		printf("skipped: spprof was built without librsb (meson -Dlibrsb=enabled "
		       "with librsb-dev installed)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
