/*
 * CPU sparse formats and SpMM kernels: every format against the plain
 * reference product over ragged shapes, sparsities, N, thread counts and
 * every vector path this CPU has; the work partition and busy times; N:M
 * refusal; the stored bytes of each format on a hand-computed case (that
 * and the registry tests in test_kernels_registry.c).
 *
 * Error bound (per element of Y):
 *   |y - ref| <= 1e-4 * sum_k |w[i][k]| * |x[k][j]| + 1e-6
 * (fp32 accumulation in any order against a double-accumulated reference).
 */
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

#include <cjson/cJSON.h>

#include "counters/sim.h"
#include "kernels/kernels.h"
#include "kernels/dense/dense.h"
#include "kernels/trace.h"
#include "profiler/static.h"
#include "reports/html.h"
#include "test/harness.h"

enum kind { UNSTRUCTURED, BLOCKS, NM };

/* this test's draws (harness_rand_*: independent of the library's generators) */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;


/*
 * W (m x k) of a kind: UNSTRUCTURED drops each element with probability
 * s; BLOCKS drops each aligned b x b block with probability s, the rest
 * dense; NM keeps `keep` random positions of each group of b along K, each
 * then dropped with probability s (so s = 0 is exactly keep:b).
 */
static float *make_w(int64_t m, int64_t k, enum kind kind, double s, int b, int keep)
{
	float *w = calloc((size_t)(m * k) + 1, sizeof(*w));

	assert_non_null(w);
	if (kind == UNSTRUCTURED) {
		for (int64_t i = 0; i < m * k; i++)
			w[i] = harness_rand_uniform(&rng_state) < s ? 0.0f : harness_rand_nz(&rng_state);
	} else if (kind == BLOCKS) {
		for (int64_t bi = 0; bi < m; bi += b)
			for (int64_t bj = 0; bj < k; bj += b) {
				if (harness_rand_uniform(&rng_state) < s)
					continue;
				for (int64_t i = bi; i < bi + b && i < m; i++)
					for (int64_t j = bj; j < bj + b && j < k; j++)
						w[i * k + j] = harness_rand_nz(&rng_state);
			}
	} else {
		for (int64_t i = 0; i < m; i++)
			for (int64_t g = 0; g < k; g += b) {
				int len = (int)(k - g < b ? k - g : b), placed = 0;

				/* keep positions chosen without repetition */
				while (placed < keep && placed < len) {
					int64_t j = g + (int64_t)(harness_rand_u64(&rng_state) % (uint64_t)len);

					if (w[i * k + j] != 0.0f)
						continue;
					w[i * k + j] = harness_rand_nz(&rng_state);
					placed++;
				}
				for (int64_t j = g; j < g + len; j++)
					if (w[i * k + j] != 0.0f && harness_rand_uniform(&rng_state) < s)
						w[i * k + j] = 0.0f;
			}
	}
	return w;
}

static float *make_x(int64_t k, int64_t n)
{
	float *x = malloc((size_t)(k * n + 1) * sizeof(*x));

	assert_non_null(x);
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(2 * harness_rand_uniform(&rng_state) - 1);
	return x;
}

/* The bound of each element: 1e-4 * sum_k |w||x| + 1e-6. */
static double *make_bound(const float *w, const float *x, int64_t m, int64_t k, int64_t n)
{
	double *b = calloc((size_t)(m * n) + 1, sizeof(*b));

	assert_non_null(b);
	for (int64_t i = 0; i < m; i++)
		for (int64_t kk = 0; kk < k; kk++) {
			double a = fabs(w[i * k + kk]);

			if (a == 0)
				continue;
			for (int64_t j = 0; j < n; j++)
				b[i * n + j] += a * fabs(x[kk * n + j]);
		}
	for (int64_t i = 0; i < m * n; i++)
		b[i] = 1e-4 * b[i] + 1e-6;
	return b;
}

struct ctx {
	enum spp_isa best;
	long checks;
};

/* Encode w with fmt for `threads` and N = enc_n, run every ISA at n, compare with ref. */
static void check_format(struct ctx *c, const struct spp_format_ops *fmt,
			 const struct spp_matrix *w, const float *x,
			 const float *ref, const double *bound, int64_t n, int64_t enc_n,
			 int threads, int expect_ok)
{
	struct spp_encoded e;
	struct spp_error err = { 0 };
	int64_t sum = 0;
	double busy[3];
	float *y, *bias;
	int rc;

	rc = fmt->encode(w, threads, enc_n, &e, &err);
	if (!expect_ok && rc == SPP_E_UNSUPPORTED) {
		assert_non_null(strstr(err.msg, "of groups hold more than"));
		return;
	}
	if (rc != 0)
		fail_msg("%s: encode %lldx%lld: %s", fmt->key, (long long)w->m, (long long)w->k, err.msg);
	assert_int_equal(e.nparts, threads);
	for (int p = 0; p < e.nparts; p++)
		sum += e.part_nnz[p];
	assert_int_equal(sum, e.nnz);
	y = malloc((size_t)(w->m * n + 1) * sizeof(*y));
	bias = malloc((size_t)(w->m + 1) * sizeof(*bias));
	assert_true(y && bias);
	/* a bias of either sign, so that ReLU clips some rows and not others */
	for (int64_t i = 0; i < w->m; i++)
		bias[i] = (float)((i * 37 % 11) - 5) * 0.1f;
	for (int isa = 0; isa <= (int)c->best; isa++)
		for (int epi = 0; epi < SPP_EPILOGUE_COUNT; epi++) {
			struct spp_exec ex = { .threads = threads, .isa = (enum spp_isa)isa, .busy_ns = busy,
					       .epi = { (enum spp_epilogue)epi, bias } };

			/* NaN everywhere: a kernel must write every element of Y */
			for (int64_t i = 0; i < w->m * n; i++)
				y[i] = NAN;
			assert_int_equal(fmt->spmm(&e, x, y, n, &ex), 0);
			for (int64_t i = 0; i < w->m * n; i++) {
				double want = ref[i], b = epi ? bias[i / n] : 0;

				want = epi == SPP_EPILOGUE_BIAS_RELU ? fmax(want + b, 0) : want + b;
				if (!(fabs((double)y[i] - want) <= bound[i] + 1e-6 * (1 + fabs(b))))
					fail_msg("%s isa=%s epilogue=%s threads=%d %lldx%lld n=%lld: y[%lld][%lld] = "
						 "%.9g, reference %.9g (bound %.3g)",
						 fmt->key, spp_isa_name((enum spp_isa)isa),
						 spp_epilogue_name((enum spp_epilogue)epi), threads,
						 (long long)w->m, (long long)w->k, (long long)n,
						 (long long)(i / n), (long long)(i % n), y[i], want, bound[i]);
			}
			c->checks++;
		}
	free(bias);
	free(y);
	fmt->release(&e);
	assert_null(e.impl);
}

static struct ctx make_ctx(void)
{
	struct ctx c = { .best = spp_isa_detect() };

	for (int isa = (int)c.best + 1; isa < SPP_ISA_COUNT; isa++)
		printf("# note: this CPU lacks %s: its kernels are not run\n",
		       spp_isa_name((enum spp_isa)isa));
	return c;
}

/* Check every format in fmts (NULL-terminated) on w at every N. */
static void check_matrix(struct ctx *c, const struct spp_format_ops *const *fmts,
			 const float *wv, int64_t m, int64_t k, int unstructured)
{
	static const int64_t ns[] = { 1, 3, 16, 17, 64, 65 };
	struct spp_matrix w = { m, k, wv };

	for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
		int64_t n = ns[ni];
		float *x = make_x(k, n);
		float *ref = malloc((size_t)(m * n) * sizeof(*ref));
		double *bound = make_bound(wv, x, m, k, n);

		assert_non_null(ref);
		spp_reference_gemm(&w, x, ref, n);
		for (int f = 0; fmts[f]; f++)
			for (int t = 1; t <= 3; t++)
				check_format(c, fmts[f], &w, x, ref, bound, n, n, t,
					     !unstructured || !fmts[f]->keep);
		free(x);
		free(ref);
		free(bound);
	}
}

static void test_formats_vs_reference(void **state)
{
	static const int64_t shapes[][2] = {
		{ 1, 1 }, { 7, 13 }, { 33, 70 }, { 64, 64 }, { 129, 257 }, { 200, 31 },
	};
	static const double sparsities[] = { 0, 0.5, 0.9, 0.99, 1.0 };
	struct ctx c = make_ctx();

	(void)state;
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t pi = 0; pi < sizeof(sparsities) / sizeof(sparsities[0]); pi++) {
			int64_t m = shapes[si][0], k = shapes[si][1];
			double s = sparsities[pi];
			float *wv = make_w(m, k, UNSTRUCTURED, s, 0, 0);

			/* every format on unstructured W (N:M refuses or holds it) */
			check_matrix(&c, spp_cpu_formats, wv, m, k, 1);
			free(wv);
			/* bsrB on B x B block-sparse W, nmN_M on N:M W */
			for (int f = 0; spp_cpu_formats[f]; f++) {
				const struct spp_format_ops *one[2] = { spp_cpu_formats[f], NULL };

				if (!one[0]->block)
					continue;
				wv = make_w(m, k, one[0]->keep ? NM : BLOCKS, s, one[0]->block, one[0]->keep);
				check_matrix(&c, one, wv, m, k, 0);
				free(wv);
			}
		}
	printf("# %ld kernel runs checked against the reference\n", c.checks);
	assert_true(c.checks > 1000);
}

/*
 * Each of bitmask's AVX-512 expands that this CPU runs (SPPROF_EXPAND,
 * kernels.h), whichever spp_expand_cpu() picks, on rows with and without
 * a partial last chunk of 16 and 64 columns.
 */
static void test_bitmask_expands(void **state)
{
	static const int64_t shapes[][2] = { { 7, 13 }, { 33, 70 }, { 129, 257 }, { 5, 1000 }, { 3, 64 } };
	static const double sparsities[] = { 0, 0.5, 0.9, 1.0 };
	const struct spp_format_ops *one[2] = { spp_cpu_format_find("bitmask"), NULL };
	long runs = 0;

	(void)state;
	assert_non_null(one[0]);
	for (int how = 0; how < SPP_EXPAND_COUNT; how++) {
		struct ctx c = make_ctx();

		assert_int_equal(setenv("SPPROF_EXPAND", spp_expand_name((enum spp_expand)how), 1), 0);
		if (c.best < SPP_ISA_AVX512 || spp_expand_detect() != (enum spp_expand)how) {
			printf("# note: this CPU does not run bitmask's %s expand\n",
			       spp_expand_name((enum spp_expand)how));
			continue;
		}
		for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
			for (size_t pi = 0; pi < sizeof(sparsities) / sizeof(sparsities[0]); pi++) {
				float *wv = make_w(shapes[si][0], shapes[si][1], UNSTRUCTURED, sparsities[pi], 0, 0);

				check_matrix(&c, one, wv, shapes[si][0], shapes[si][1], 1);
				free(wv);
			}
		runs += c.checks;
	}
	assert_int_equal(unsetenv("SPPROF_EXPAND"), 0);
	printf("# %ld bitmask runs checked across its expands\n", runs);
	assert_true(spp_isa_detect() < SPP_ISA_AVX512 || runs > 0);
}

/* A wide matrix so that csr and nm run several K tiles at N = 64. */
static void test_k_tiles(void **state)
{
	struct ctx c = make_ctx();
	int64_t m = 40, k = 1500;

	(void)state;
	for (int f = 0; spp_cpu_formats[f]; f++) {
		const struct spp_format_ops *fmt = spp_cpu_formats[f];
		float *wv = make_w(m, k, fmt->keep ? NM : UNSTRUCTURED, 0.7, fmt->block, fmt->keep);
		struct spp_matrix w = { m, k, wv };

		for (int64_t n = 64; n >= 1; n -= 63) {
			float *x = make_x(k, n), *ref = malloc((size_t)(m * n) * sizeof(*ref));
			double *bound = make_bound(wv, x, m, k, n);

			assert_non_null(ref);
			spp_reference_gemm(&w, x, ref, n);
			/* each N on the layout encoded for it, and on the other's (tiled at N = 1, untiled at 64) */
			check_format(&c, fmt, &w, x, ref, bound, n, n, 2, 1);
			check_format(&c, fmt, &w, x, ref, bound, n, 65 - n, 2, 1);
			free(x);
			free(ref);
			free(bound);
		}
		free(wv);
	}
}

/* part_nnz, nparts and busy time on a matrix with rows of unequal weight. */
static void test_partition_and_busy(void **state)
{
	int64_t m = 96, k = 300, n = 16;
	float *wv = make_w(m, k, UNSTRUCTURED, 0.5, 0, 0);
	struct spp_matrix w = { m, k, wv };
	float *x = make_x(k, n), *y = malloc((size_t)(m * n) * sizeof(*y));

	(void)state;
	assert_non_null(y);
	/* the first 16 rows dense, so rows are a poor proxy for work */
	for (int64_t i = 0; i < 16 * k; i++)
		wv[i] = harness_rand_nz(&rng_state);
	for (int f = 0; spp_cpu_formats[f]; f++) {
		const struct spp_format_ops *fmt = spp_cpu_formats[f];
		struct spp_encoded e;
		struct spp_error err;
		double busy[3] = { -1, -1, -1 };
		struct spp_exec ex = { .threads = 3, .isa = spp_isa_detect(), .busy_ns = busy };
		int64_t sum = 0, mx = 0, nnz = 0;

		if (fmt->keep)
			continue; /* not N:M compliant: refused, tested below */
		assert_int_equal(fmt->encode(&w, 3, n, &e, &err), 0);
		for (int64_t i = 0; i < m * k; i++)
			nnz += wv[i] != 0.0f;
		assert_int_equal(e.nnz, nnz);
		assert_int_equal(e.nparts, 3);
		for (int p = 0; p < 3; p++) {
			sum += e.part_nnz[p];
			mx = e.part_nnz[p] > mx ? e.part_nnz[p] : mx;
		}
		assert_int_equal(sum, nnz);
		if (!fmt->block) /* balanced by non-zeros within a row's worth */
			assert_true(mx <= nnz / 3 + k);
		assert_int_equal(fmt->spmm(&e, x, y, n, &ex), 0);
		for (int p = 0; p < 3; p++)
			if (e.part_nnz[p] > 0)
				assert_true(busy[p] > 0);
		fmt->release(&e);
	}
	free(wv);
	free(x);
	free(y);
}

static void test_nm_refusal(void **state)
{
	float wv[8 * 8] = { 0 };
	struct spp_matrix w = { 8, 8, wv };
	struct spp_encoded e;
	struct spp_error err = { 0 };
	const struct spp_format_ops *nm24 = spp_cpu_format_find("nm2_4");

	(void)state;
	assert_non_null(nm24);
	/* one group (row 0, columns 0..3) holds 3 non-zeros: 1 of 16 groups */
	wv[0] = wv[1] = wv[2] = 1.0f;
	assert_int_equal(nm24->encode(&w, 1, 1, &e, &err), SPP_E_UNSUPPORTED);
	assert_int_equal(err.code, SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "6.25% of groups hold more than 2 non-zeros"));
	assert_null(e.impl);
	/* 1:4 refuses the same matrix: 1 of 16 groups holds more than 1 */
	assert_int_equal(spp_cpu_format_find("nm1_4")->encode(&w, 1, 1, &e, &err), SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "6.25% of groups hold more than 1 non-zero"));
	/* 4:8 holds it */
	assert_int_equal(spp_cpu_format_find("nm4_8")->encode(&w, 1, 1, &e, &err), 0);
	spp_cpu_format_find("nm4_8")->release(&e);
}

static void test_dense_and_blas(void **state)
{
	static const int64_t ns[] = { 1, 5 };
	int64_t m = 37, k = 53;
	float *wv = make_w(m, k, UNSTRUCTURED, 0.3, 0, 0);
	struct spp_matrix w = { m, k, wv };
	struct spp_blas_info info;
	struct spp_dense_set set;
	struct spp_error err = {0};

	(void)state;
	assert_int_equal(spp_dense_set_open(&set, NULL, spp_isa_detect(), &err), 0);
	for (size_t ni = 0; ni < 2; ni++) {
		int64_t n = ns[ni];
		float *x = make_x(k, n), *y = malloc((size_t)(m * n) * sizeof(*y));
		float *ref = malloc((size_t)(m * n) * sizeof(*ref));
		double *bound = make_bound(wv, x, m, k, n);

		assert_non_null(y);
		assert_non_null(ref);
		spp_reference_gemm(&w, x, ref, n);
		/* an independent check of the reference itself: one element */
		{
			double s = 0;

			for (int64_t kk = 0; kk < k; kk++)
				s += (double)wv[3 * k + kk] * x[kk * n + (n - 1)];
			assert_true(fabs(s - ref[3 * n + n - 1]) <= 1e-6);
		}
		/* every dense candidate that can run here */
		for (int c = 0; c < set.n; c++) {
			if (!set.c[c].ok)
				continue;
			spp_dense_run(&set.c[c], &w, x, y, n, 2);
			for (int64_t i = 0; i < m * n; i++)
				if (!(fabs((double)y[i] - ref[i]) <= bound[i]))
					fail_msg("%s: y[%lld] = %g, reference %g", set.c[c].name, (long long)i,
						 (double)y[i], (double)ref[i]);
		}
		free(x);
		free(y);
		free(ref);
		free(bound);
	}
	free(wv);
	spp_dense_set_close(&set);
	spp_blas_info(&info);
	assert_string_equal(info.name, "OpenBLAS");
	assert_true(strlen(info.core) > 0);
	assert_true(strlen(info.version) > 0);
	assert_non_null(strstr(info.config, info.version));
	assert_true(info.max_threads >= 1);
}

/*
 * The activation kernels (csc, csr_act, csc_act) against the reference
 * with X holding zeros: i.i.d. at several rates, and whole dead rows (the
 * only zeros csr_act and csc_act can skip at N > 1), over ragged shapes,
 * N (1 and several K tiles at 64), threads and every vector path.
 */
static void test_act_vs_reference(void **state)
{
	static const int64_t shapes[][2] = { { 1, 1 }, { 7, 13 }, { 33, 70 }, { 129, 257 }, { 40, 1500 } };
	static const int64_t ns[] = { 1, 3, 16, 64, 65 };
	static const double rates[] = { 0, 0.5, 0.9, 1.0 };
	struct ctx c = make_ctx();

	(void)state;
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		int64_t m = shapes[si][0], k = shapes[si][1];
		float *wv = make_w(m, k, UNSTRUCTURED, 0.7, 0, 0);
		struct spp_matrix w = { m, k, wv };

		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
			for (size_t ri = 0; ri < sizeof(rates) / sizeof(rates[0]); ri++) {
				int64_t n = ns[ni];
				float *x = make_x(k, n), *ref = malloc((size_t)(m * n) * sizeof(*ref));
				double *bound;

				assert_non_null(ref);
				for (int64_t i = 0; i < k * n; i++)
					if (harness_rand_uniform(&rng_state) < rates[ri])
						x[i] = 0;
				/* and every third row dead */
				for (int64_t r = 0; r < k; r += 3)
					memset(x + r * n, 0, (size_t)n * sizeof(*x));
				bound = make_bound(wv, x, m, k, n);
				spp_reference_gemm(&w, x, ref, n);
				for (int f = 0; spp_cpu_act_formats[f]; f++)
					for (int t = 1; t <= 3; t++)
						check_format(&c, spp_cpu_act_formats[f], &w, x, ref, bound, n, n, t, 1);
				free(x);
				free(ref);
				free(bound);
			}
		free(wv);
	}
	printf("# %ld activation kernel runs checked against the reference\n", c.checks);
	assert_true(c.checks > 500);
}

/*
 * The skip itself: an infinite weight meets only a zero row of X. The
 * product that multiplies it gives NaN (inf * 0); a kernel that skips the
 * zero row never forms it. csc (weight-only) must show the NaN, csr_act
 * and csc_act must not, at N = 1 and N = 8.
 */
static void test_act_skips(void **state)
{
	int64_t m = 4, k = 6;
	float wv[24];
	struct spp_matrix w = { m, k, wv };

	(void)state;
	for (int i = 0; i < 24; i++)
		wv[i] = (float)(i % 5) - 2.0f;
	wv[1 * k + 2] = INFINITY;
	for (int64_t n = 1; n <= 8; n += 7) {
		float x[48], y[32];

		for (int64_t i = 0; i < k * n; i++)
			x[i] = i / n == 2 ? 0.0f : 0.5f;
		for (int f = 0; spp_cpu_act_formats[f]; f++) {
			const struct spp_format_ops *fmt = spp_cpu_act_formats[f];
			int skips = strcmp(fmt->key, "csc") != 0;
			struct spp_encoded e;
			struct spp_error err;

			for (int isa = 0; isa <= (int)spp_isa_detect(); isa++) {
				struct spp_exec ex = { .threads = 2, .isa = (enum spp_isa)isa };

				assert_int_equal(fmt->encode(&w, 2, n, &e, &err), 0);
				assert_int_equal(fmt->spmm(&e, x, y, n, &ex), 0);
				for (int64_t j = 0; j < n; j++) {
					if (skips)
						assert_true(isfinite(y[1 * n + j]));
					else
						assert_true(isnan(y[1 * n + j]));
					/* row 0 has no infinity: the same for every kernel */
					assert_true(isfinite(y[j]));
				}
				fmt->release(&e);
			}
		}
	}
}

/* in test_kernels_registry.c */
void test_bytes(void **state);
void test_release_and_registry(void **state);
void test_registry_reaches_everywhere(void **state);

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_and_registry),
		cmocka_unit_test(test_registry_reaches_everywhere),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_nm_refusal),
		cmocka_unit_test(test_partition_and_busy),
		cmocka_unit_test(test_k_tiles),
		cmocka_unit_test(test_bitmask_expands),
		cmocka_unit_test(test_dense_and_blas),
		cmocka_unit_test(test_formats_vs_reference),
		cmocka_unit_test(test_act_vs_reference),
		cmocka_unit_test(test_act_skips),
	};

	(void)argc;
	/*
	 * Thousands of small runs on up to 3 threads: with spinning OpenMP
	 * workers on a busy 2-core machine each costs a scheduler quantum
	 * (measured 58 s against 4.5 s). libgomp reads the policy when it is
	 * loaded, so set it and start again.
	 */
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
