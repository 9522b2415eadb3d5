/*
 * The lowp kernels (kernels/lowp/lowp.h): the precision table and its
 * conversions; every format x precision x path this CPU has (portable
 * always) against a double reference of the same quantized values, over
 * ragged shapes, N in 1, 3, 16, 17, 64 and sparsities 0, 0.5, 0.9, 1;
 * SPPROF_ISA keeping the AVX-512 paths from running; the refusals.
 *
 * Error bound (per element of Y), the precision's row of the table:
 *   |y - ref| <= rtol * sum_k |w_q[i][k]| * |x_q[k][j]| + atol
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

#include "kernels/lowp/lowp.h"
#include "test/harness.h"

/* this test's draws (harness_rand_*: independent of the library's generators) */
static uint64_t rng_state = 0x243f6a8885a308d3ull;


/*
 * W (m x k): each element dropped with probability s; or, with group > 0,
 * keep random positions of each group of `group` along K, each then
 * dropped with probability s (keep:group compliant).
 */
static float *make_w(int64_t m, int64_t k, double s, int keep, int group)
{
	float *w = calloc((size_t)(m * k) + 1, sizeof(*w));

	assert_non_null(w);
	if (!group) {
		for (int64_t i = 0; i < m * k; i++)
			w[i] = harness_rand_uniform(&rng_state) < s ? 0.0f : harness_rand_nz(&rng_state);
		return w;
	}
	for (int64_t i = 0; i < m; i++)
		for (int64_t g = 0; g < k; g += group) {
			int len = (int)(k - g < group ? k - g : group), placed = 0;

			while (placed < keep && placed < len) {
				int64_t j = g + (int64_t)(harness_rand_u64(&rng_state) % (uint64_t)len);

				if (w[i * k + j] != 0.0f)
					continue;
				/* a dropped one may be drawn again: at most keep non-zeros */
				w[i * k + j] = harness_rand_uniform(&rng_state) < s ? 0.0f : harness_rand_nz(&rng_state);
				placed++;
			}
		}
	return w;
}

/* W's values as the precision stores them, dequantized (int8: per-row scale). */
static double *quantize_w(enum spp_prec p, const float *w, int64_t m, int64_t k)
{
	double *q = calloc((size_t)(m * k) + 1, sizeof(*q));

	assert_non_null(q);
	for (int64_t i = 0; i < m; i++) {
		float sc = spp_int8_scale(w + i * k, k);

		for (int64_t j = 0; j < k; j++) {
			float v = w[i * k + j];

			q[i * k + j] = p == SPP_PREC_BF16 ? spp_bf16_to_f32(spp_f32_to_bf16(v))
				     : p == SPP_PREC_FP16 ? spp_f16_to_f32(spp_f32_to_f16(v))
							  : (double)spp_int8_quantize(v, sc) * sc;
		}
	}
	return q;
}

/* X's values as the precision stores them, from the fp32 x and the scale the quantizer chose. */
static double *quantize_x(enum spp_prec p, const float *x, int64_t k, int64_t n, float scale)
{
	double *q = calloc((size_t)(k * n) + 1, sizeof(*q));

	assert_non_null(q);
	for (int64_t i = 0; i < k * n; i++)
		q[i] = p == SPP_PREC_BF16 ? spp_bf16_to_f32(spp_f32_to_bf16(x[i]))
		     : p == SPP_PREC_FP16 ? spp_f16_to_f32(spp_f32_to_f16(x[i]))
					  : (double)spp_int8_quantize(x[i], scale) * scale;
	return q;
}

struct ctx {
	long checks, runs[SPP_LOWP_NPATHS];
};

/* One encoded W against its reference at every path this CPU has. */
static void check_paths(struct ctx *c, const struct spp_lowp_w *e, const struct spp_lowp_x *x,
			const double *ref, const double *bound)
{
	int64_t m = e->m, n = x->n;
	float *y = malloc((size_t)(m * n + 1) * sizeof(*y));
	struct spp_error err = { 0 };

	assert_non_null(y);
	for (int p = 0; p < SPP_LOWP_NPATHS; p++) {
		enum spp_lowp_path ran = SPP_LOWP_NPATHS;
		int threads = 1 + (int)(c->checks % 3); /* 1, 2, 3 in turn */

		if (!spp_lowp_path_ok((enum spp_lowp_path)p))
			continue;
		for (int64_t i = 0; i < m * n; i++)
			y[i] = NAN; /* a kernel must write every element of Y */
		assert_int_equal(spp_lowp_spmm(e, x, y, (enum spp_lowp_path)p, threads, &ran, &err), 0);
		assert_true(ran <= (enum spp_lowp_path)p && spp_lowp_path_ok(ran));
		assert_int_equal(ran, spp_lowp_pick(e->format, e->prec, (enum spp_lowp_path)p));
		c->runs[ran]++;
		for (int64_t i = 0; i < m * n; i++)
			if (!(fabs((double)y[i] - ref[i]) <= bound[i]))
				fail_msg("%s %s path=%s threads=%d %lldx%lld n=%lld: y[%lld][%lld] = "
					 "%.9g, reference %.9g (bound %.3g)",
					 spp_lowp_format_name(e->format), spp_prec_info(e->prec)->name,
					 spp_lowp_path_name(ran), threads, (long long)m, (long long)e->k,
					 (long long)n, (long long)(i / n), (long long)(i % n), y[i], ref[i],
					 bound[i]);
		c->checks++;
	}
	free(y);
}

/* Format f in precision p on w at every N, against the double reference. */
static void check_matrix(struct ctx *c, enum spp_lowp_format f, enum spp_prec p, const float *wv,
			 int64_t m, int64_t k)
{
	static const int64_t ns[] = { 1, 3, 16, 17, 64 };
	const struct spp_prec_info *pi = spp_prec_info(p);
	struct spp_matrix w = { m, k, wv };
	struct spp_lowp_w e;
	struct spp_error err = { 0 };
	double *wq = quantize_w(p, wv, m, k);

	if (spp_lowp_encode(f, p, &w, &e, &err))
		fail_msg("%s %s: encode %lldx%lld: %s", spp_lowp_format_name(f), pi->name,
			 (long long)m, (long long)k, err.msg);
	for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
		int64_t n = ns[ni];
		float *xf = malloc((size_t)(k * n + 1) * sizeof(*xf));
		struct spp_lowp_x x = { .prec = p, .k = k, .n = n, .v = malloc(spp_lowp_x_bytes(p, k, n)) };
		double *xq, *ref = calloc((size_t)(m * n) + 1, sizeof(*ref));
		double *bound = calloc((size_t)(m * n) + 1, sizeof(*bound));

		assert_true(xf && x.v && ref && bound);
		for (int64_t i = 0; i < k * n; i++)
			xf[i] = (float)(2 * harness_rand_uniform(&rng_state) - 1);
		assert_int_equal(spp_lowp_x_quantize(&x, xf, &err), 0);
		xq = quantize_x(p, xf, k, n, x.scale);
		for (int64_t kk = 0; kk < k; kk++)
			for (int64_t j = 0; j < n; j++)
				assert_true(spp_lowp_x_at(&x, kk, j) == xq[kk * n + j]);
		for (int64_t i = 0; i < m; i++)
			for (int64_t kk = 0; kk < k; kk++)
				for (int64_t j = 0; j < n && wq[i * k + kk] != 0; j++) {
					ref[i * n + j] += wq[i * k + kk] * xq[kk * n + j];
					bound[i * n + j] += fabs(wq[i * k + kk] * xq[kk * n + j]);
				}
		for (int64_t i = 0; i < m * n; i++)
			bound[i] = pi->rtol * bound[i] + pi->atol;
		check_paths(c, &e, &x, ref, bound);
		free(xf);
		free(x.v);
		free(xq);
		free(ref);
		free(bound);
	}
	spp_lowp_release(&e);
	assert_null(e.val);
	free(wq);
}

static const int64_t shapes[][2] = {
	{ 1, 1 }, { 7, 13 }, { 33, 70 }, { 64, 64 }, { 129, 257 }, { 200, 31 },
};
static const double sparsities[] = { 0, 0.5, 0.9, 1.0 };
static const enum spp_prec precs[] = { SPP_PREC_BF16, SPP_PREC_FP16, SPP_PREC_INT8 };

static void report(const struct ctx *c, const char *what)
{
	printf("# %s: %ld checks;", what, c->checks);
	for (int p = 0; p < SPP_LOWP_NPATHS; p++)
		printf(" %s %ld", spp_lowp_path_name((enum spp_lowp_path)p), c->runs[p]);
	printf("\n");
}

static void test_unstructured(void **state)
{
	struct ctx c = { 0 };

	(void)state;
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t sp = 0; sp < sizeof(sparsities) / sizeof(sparsities[0]); sp++) {
			int64_t m = shapes[si][0], k = shapes[si][1];
			float *w = make_w(m, k, sparsities[sp], 0, 0);

			for (size_t pi = 0; pi < 3; pi++) {
				check_matrix(&c, SPP_LOWP_CSR, precs[pi], w, m, k);
				check_matrix(&c, SPP_LOWP_BSR1X4, precs[pi], w, m, k);
				check_matrix(&c, SPP_LOWP_BITMASK, precs[pi], w, m, k);
			}
			free(w);
		}
	report(&c, "csr, bsr1x4, bitmask");
	assert_true(c.runs[SPP_LOWP_PORTABLE] > 0);
}

static void test_nm(void **state)
{
	struct ctx c = { 0 };

	(void)state;
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t sp = 0; sp < sizeof(sparsities) / sizeof(sparsities[0]); sp++)
			for (int f = SPP_LOWP_NM2_4; f <= SPP_LOWP_NM4_8; f++) {
				int64_t m = shapes[si][0], k = shapes[si][1];
				int keep = f == SPP_LOWP_NM2_4 ? 2 : 4, group = 2 * keep;
				float *w = make_w(m, k, sparsities[sp], keep, group);

				for (size_t pi = 0; pi < 3; pi++)
					check_matrix(&c, (enum spp_lowp_format)f, precs[pi], w, m, k);
				free(w);
			}
	report(&c, "nm2_4, nm4_8");
}

static void test_table_and_conversions(void **state)
{
	(void)state;
	assert_int_equal(spp_prec_parse("int8"), SPP_PREC_INT8);
	assert_int_equal(spp_prec_parse("fp8"), -1);
	assert_null(spp_prec_info(SPP_PREC_COUNT));
	assert_int_equal(spp_prec_info(SPP_PREC_BF16)->value_bytes, 2);
	assert_int_equal(spp_prec_info(SPP_PREC_INT8)->x_bytes, 1);
	assert_string_equal(spp_prec_info(SPP_PREC_INT8)->acc, "int32");
	/* bf16 rounds to nearest, ties to even */
	assert_int_equal(spp_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(spp_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	assert_int_equal(spp_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
	assert_int_equal(spp_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(spp_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(spp_f32_to_f16(65520.0f), 0x7c00);
	assert_int_equal(spp_f32_to_f16(0x1p-24f), 0x0001);
	assert_true(spp_f16_to_f32(0x0001) == 0x1p-24f);
	/* int8: symmetric, max |v| at 127 */
	{
		float v[3] = { 0.5f, -2.54f, 1.0f };
		float s = spp_int8_scale(v, 3);

		assert_true(fabsf(s - 0.02f) < 1e-7f);
		assert_int_equal(spp_int8_quantize(-2.54f, s), -127);
		assert_int_equal(spp_int8_quantize(0.5f, s), 25);
		assert_true(spp_int8_scale(v, 0) == 1.0f);
	}
}

/* SPPROF_ISA=avx2 keeps every AVX-512 path from running, portable every vector one. */
static void test_isa_override(void **state)
{
	static const float wv[] = { 1, 0, -0.5f, 0, 0, 0, 0.75f, 0.25f };
	struct spp_matrix w = { 2, 4, wv };
	const char *caps[] = { "avx2", "portable" };
	enum spp_lowp_path top[] = { SPP_LOWP_AVX2_VNNI, SPP_LOWP_PORTABLE };

	(void)state;
	for (int ci = 0; ci < 2; ci++) {
		assert_int_equal(setenv("SPPROF_ISA", caps[ci], 1), 0);
		for (int p = top[ci] + 1; p < SPP_LOWP_NPATHS; p++)
			assert_false(spp_lowp_path_ok((enum spp_lowp_path)p));
		for (int f = 0; f < SPP_LOWP_NFORMATS; f++)
			for (size_t pi = 0; pi < 3; pi++) {
				float xf[4] = { 1, 2, 3, 4 }, y[2];
				struct spp_lowp_x x = { .prec = precs[pi], .k = 4, .n = 1 };
				struct spp_lowp_w e;
				struct spp_error err = { 0 };
				enum spp_lowp_path ran;
				char buf[256];

				x.v = buf;
				assert_true(spp_lowp_x_bytes(precs[pi], 4, 1) <= sizeof(buf));
				assert_int_equal(spp_lowp_x_quantize(&x, xf, &err), 0);
				assert_int_equal(spp_lowp_encode((enum spp_lowp_format)f, precs[pi], &w, &e, &err), 0);
				assert_int_equal(spp_lowp_spmm(&e, &x, y, SPP_LOWP_NPATHS - 1, 1, &ran, &err), 0);
				assert_true(ran <= top[ci]);
				if (!(fabsf(y[0] + 0.5f) < 0.05f && fabsf(y[1] - 3.25f) < 0.05f))
					fail_msg("%s %s on %s: y = %g %g, want -0.5 3.25",
						 spp_lowp_format_name((enum spp_lowp_format)f),
						 spp_prec_info(precs[pi])->name, spp_lowp_path_name(ran), y[0], y[1]);
				spp_lowp_release(&e);
			}
	}
	assert_int_equal(unsetenv("SPPROF_ISA"), 0);
	/* without the cap, this CPU's best path for int8 csr is the best it has */
	if (spp_lowp_path_ok(SPP_LOWP_AVX512_VNNI))
		assert_int_equal(spp_lowp_pick(SPP_LOWP_CSR, SPP_PREC_INT8, SPP_LOWP_NPATHS - 1),
				 SPP_LOWP_AVX512_VNNI);
	if (spp_lowp_path_ok(SPP_LOWP_AVX512_BF16))
		assert_int_equal(spp_lowp_pick(SPP_LOWP_NM2_4, SPP_PREC_BF16, SPP_LOWP_NPATHS - 1),
				 SPP_LOWP_AVX512_BF16);
}

static void test_refusals(void **state)
{
	static const float wv[] = { 1, 1, 1, 0, 0, 0, 0, 0 };
	struct spp_matrix w = { 1, 8, wv };
	struct spp_lowp_w e;
	struct spp_lowp_x x = { .prec = SPP_PREC_BF16, .k = 8, .n = 1 };
	struct spp_error err = { 0 };
	float y[1];

	(void)state;
	assert_int_equal(spp_lowp_encode(SPP_LOWP_CSR, SPP_PREC_FP32, &w, &e, &err), SPP_E_UNSUPPORTED);
	assert_int_equal(spp_lowp_encode(SPP_LOWP_NM2_4, SPP_PREC_INT8, &w, &e, &err),
			 SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "of groups hold more than"));
	assert_null(e.val);
	assert_int_equal(spp_lowp_encode(SPP_LOWP_NM4_8, SPP_PREC_INT8, &w, &e, &err), 0);
	assert_int_equal(spp_lowp_spmm(&e, &x, y, SPP_LOWP_PORTABLE, 1, NULL, &err), SPP_E_USAGE);
	x.prec = SPP_PREC_INT8;
	assert_int_equal(spp_lowp_spmm(&e, &x, y, SPP_LOWP_PORTABLE, 0, NULL, &err), SPP_E_USAGE);
	spp_lowp_release(&e);
	spp_lowp_release(NULL);
	assert_int_equal(spp_lowp_x_quantize(&(struct spp_lowp_x){ .prec = SPP_PREC_FP32 }, NULL, &err),
			 SPP_E_UNSUPPORTED);
}

/* A failed assert leaves test_isa_override before it unsets the cap. */
static int unset_isa(void **state)
{
	(void)state;
	return unsetenv("SPPROF_ISA");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_and_conversions),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test_teardown(test_isa_override, unset_isa),
		cmocka_unit_test(test_unstructured),
		cmocka_unit_test(test_nm),
	};

	(void)argc;
	/* spinning OpenMP workers on a busy 2-core machine: as test_kernels, passive and start again */
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	for (int p = 0; p < SPP_LOWP_NPATHS; p++)
		printf("# path %s: %s\n", spp_lowp_path_name((enum spp_lowp_path)p),
		       spp_lowp_path_ok((enum spp_lowp_path)p) ? "run" : "not on this CPU: not run");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
