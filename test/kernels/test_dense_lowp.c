/*
 * The low-precision dense baselines (kernels/dense/lowp_dense.h): every
 * precision by every candidate against the double reference of the same
 * quantized values over ragged shapes (M, K odd; N 1, 7, 64; 1 and 2
 * threads; X K x N and X^T N x K; int8 X as s8 and as u8 with a zero
 * point), the check catching a
 * wrong result, the refusals with their reasons, and `spprof info` naming
 * what oneDNN runs, with ONEDNN_MAX_CPU_ISA lowered in a child process (a
 * lesser ISA refuses bf16 and never claims AMX). Run from test_dense's
 * main; `test_dense --lowp` runs these alone.
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

#include "base/dtype.h"
#include "kernels/dense/lowp_dense.h"
#include "test/harness.h"

int test_dense_lowp_main(void);

static float *values(int64_t n, uint64_t seed, float range)
{
	float *v = malloc(sizeof(float) * (size_t)n);

	assert_non_null(v);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		v[i] = range * (float)((double)(seed >> 11) / 4503599627370496.0 - 1.0);
	}
	return v;
}

/*
 * Whether a candidate that refused is allowed to here: fp16 (oneDNN 2.6
 * has no x86 f16 matmul), sbgemm (a build without BUILD_BFLOAT16), bf16
 * and int8 only where oneDNN dispatches less than they need.
 */
static void check_refusal(const struct spp_dense_lowp *c, enum spp_prec p, const struct spp_error *e)
{
	assert_true(e->msg[0] != '\0');
	if (strcmp(c->lib->key, "openblas") == 0) {
		assert_true(strstr(e->msg, "cblas_sbgemm") || strstr(e->msg, "sbgemm is bf16"));
		return;
	}
	if (p == SPP_PREC_BF16 && (strstr(c->isa, "amx") || strstr(c->isa, "bf16")))
		fail_msg("oneDNN on %s refused bf16: %s", c->isa, e->msg);
	if (p == SPP_PREC_INT8 && (strstr(c->isa, "amx") || strstr(c->isa, "vnni")))
		fail_msg("oneDNN on %s refused int8: %s", c->isa, e->msg);
	print_message("note: %s %s refused here: %s\n", c->lib->name, spp_prec_name(p), e->msg);
}

/* Every precision by every candidate, over the shapes, or its reason for refusing. */
static void test_lowp_against_reference(void **state)
{
	static const int64_t shapes[][2] = {{37, 29}, {101, 77}, {255, 129}};
	static const int64_t ns[] = {1, 7, 64};
	int ran[SPP_PREC_COUNT] = {0};

	(void)state;
	for (int p = SPP_PREC_BF16; p < SPP_PREC_COUNT; p++)
		for (int l = 0; spp_dense_lowp_libs[l]; l++)
			for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
				int64_t m = shapes[s][0], k = shapes[s][1];
				float *w = values(m * k, 3 + s, 2.0f), *x = values(k * 64, 5 + s, 1.5f);
				void *xv = malloc(2 * (size_t)(k * 64));
				struct spp_matrix wm = {m, k, w};
				struct spp_dense_lowp c;
				struct spp_error e = {0};
				int rc = spp_dense_lowp_open(&c, spp_dense_lowp_libs[l]->key, p, &wm, &e);

				if (rc != SPP_OK) {
					assert_int_equal(rc, SPP_E_UNSUPPORTED);
					check_refusal(&c, p, &e);
				}
				for (int u = 0; rc == SPP_OK && u < (p == SPP_PREC_INT8 ? 2 : 1); u++)
					for (int j = 0; j < 3 * 2 * 2; j++) {
						int t = 1 + j % 2, nk = j / 2 % 2;
						int64_t n = ns[j / 4];
						struct spp_dense_lowp_x xq;

						assert_int_equal(spp_dense_lowp_quantize_x(p, u, nk, x, k, n, xv, &xq, &e), 0);
						if (spp_dense_lowp_verify(&c, &xq, t, &e) != SPP_OK)
							fail_msg("%s %s %s%s, %d thread(s): %s", c.lib->name,
								 spp_prec_name(p), u ? "u8" : "s8", nk ? ", X^T" : "",
								 t, e.msg);
						ran[p]++;
					}
				if (rc == SPP_OK && s == 0)
					print_message("%s %s: %s on %s\n", c.lib->name, spp_prec_name(p), c.impl,
						      c.isa);
				spp_dense_lowp_close(&c);
				free(w), free(x), free(xv);
			}
	/* whatever this CPU runs was checked; fp16 needs a oneDNN newer than 2.6 on x86 */
	print_message("checked: bf16 %d, fp16 %d, int8 %d runs\n", ran[SPP_PREC_BF16], ran[SPP_PREC_FP16],
		      ran[SPP_PREC_INT8]);
}

/* The check is real: W changed behind the library's back is caught. */
static void test_lowp_verify_catches(void **state)
{
	float *w = values(45 * 33, 9, 1.0f), *x = values(33 * 7, 10, 1.0f);
	uint16_t xv[33 * 7];
	struct spp_matrix wm = {45, 33, w};
	struct spp_error e = {0};

	(void)state;
	for (int p = SPP_PREC_BF16; p < SPP_PREC_COUNT; p++) {
		struct spp_dense_lowp c;
		struct spp_dense_lowp_x xq;

		if (spp_dense_lowp_open(&c, "onednn", p, &wm, &e) != SPP_OK)
			continue;
		assert_int_equal(spp_dense_lowp_quantize_x(p, 0, 0, x, 33, 7, xv, &xq, &e), 0);
		assert_int_equal(spp_dense_lowp_verify(&c, &xq, 1, &e), 0);
		/* the reference reads c.w; the library its own copy, made at open */
		if (p == SPP_PREC_INT8)
			c.w.q[5 * 33 + 3] = (int8_t)(c.w.q[5 * 33 + 3] > 0 ? -100 : 100);
		else
			c.w.h[5 * 33 + 3] = spp_f32_to_bf16(9.0f);
		assert_int_equal(spp_dense_lowp_verify(&c, &xq, 1, &e), SPP_E_VERIFY);
		assert_non_null(strstr(e.msg, "double-precision reference"));
		spp_dense_lowp_close(&c);
	}
	free(w), free(x);
}

static void test_lowp_usage(void **state)
{
	float w[6] = {1, 2, 3, 4, 5, 6}, x[3 * 2] = {1, -1, 0.5f, 2, -2, 0};
	uint16_t xv[6];
	int8_t q[6];
	uint8_t u[6];
	struct spp_matrix wm = {2, 3, w};
	struct spp_dense_lowp c;
	struct spp_dense_lowp_x xq;
	struct spp_error e = {0};
	float y[4];

	(void)state;
	assert_int_equal(spp_dense_lowp_open(&c, "mkl", SPP_PREC_BF16, &wm, &e), SPP_E_USAGE);
	assert_non_null(strstr(e.msg, "'mkl'"));
	spp_dense_lowp_close(&c);
	assert_int_equal(spp_dense_lowp_open(&c, "onednn", SPP_PREC_COUNT, &wm, &e), SPP_E_USAGE);
	assert_int_equal(spp_dense_lowp_open(&c, "onednn", SPP_PREC_FP32, &wm, &e), SPP_E_USAGE);
	assert_int_equal(spp_prec_parse("int8"), SPP_PREC_INT8);
	assert_int_equal(spp_prec_parse("fp8"), -1);
	/* quantized X: s8 symmetric, u8 with a zero point that maps 0 exactly */
	assert_int_equal(spp_dense_lowp_quantize_x(SPP_PREC_INT8, 0, 0, x, 3, 2, q, &xq, &e), 0);
	assert_true(fabsf(xq.scale - 2.0f / 127) < 1e-7f);
	assert_int_equal(q[2], 32);
	assert_int_equal(q[3], 127);
	assert_int_equal(q[4], -127);
	assert_int_equal(spp_dense_lowp_quantize_x(SPP_PREC_INT8, 1, 0, x, 3, 2, u, &xq, &e), 0);
	assert_true(xq.is_unsigned);
	assert_int_equal(u[5], xq.zero_point);
	assert_int_equal(u[4], 0);
	assert_true(u[3] >= 254); /* 2 / scale is 127.5, the zero point 127 or 128 by rounding */
	assert_int_equal(spp_dense_lowp_quantize_x(SPP_PREC_BF16, 0, 0, x, 0, 2, xv, &xq, &e), SPP_E_USAGE);
	/* X of another precision or K than W's */
	if (spp_dense_lowp_open(&c, "onednn", SPP_PREC_INT8, &wm, &e) == SPP_OK) {
		assert_int_equal(spp_dense_lowp_quantize_x(SPP_PREC_BF16, 0, 0, x, 3, 2, xv, &xq, &e), 0);
		assert_int_equal(spp_dense_lowp_run(&c, &xq, y, 1, &e), SPP_E_USAGE);
		assert_int_equal(spp_dense_lowp_quantize_x(SPP_PREC_INT8, 0, 0, x, 2, 3, q, &xq, &e), 0);
		assert_int_equal(spp_dense_lowp_run(&c, &xq, y, 1, &e), SPP_E_USAGE);
		spp_dense_lowp_close(&c);
	}
	spp_dense_lowp_close(NULL);
}

/* `spprof info`'s lines "dense bf16", "dense fp16", "dense int8" (its candidates follow). */
static const char *lowp_line(const char *out, const char *prec, char *buf, size_t n)
{
	char head[32];
	const char *p;

	snprintf(head, sizeof(head), "\ndense %s", prec);
	p = strstr(out, head);
	if (!p)
		return NULL;
	p++;
	snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

/*
 * A child with ONEDNN_MAX_CPU_ISA lowered (read once, when oneDNN loads):
 * on avx2 oneDNN has no bf16 matmul, refused with that reason; no line
 * of a lesser ISA claims AMX.
 */
static void test_lowp_info_isa(void **state)
{
	const char *args[] = {"info", "--dense", "spprof", NULL};
	struct harness_run r;
	char line[512];

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(lowp_line(r.out, "bf16", line, sizeof(line)));
	assert_non_null(strstr(line, "onednn: "));
	assert_non_null(lowp_line(r.out, "fp16", line, sizeof(line)));
	assert_non_null(lowp_line(r.out, "int8", line, sizeof(line)));
	harness_run_free(&r);

	setenv("ONEDNN_MAX_CPU_ISA", "avx2", 1);
	assert_int_equal(harness_spprof(&r, args), 0);
	unsetenv("ONEDNN_MAX_CPU_ISA");
	assert_int_equal(r.status, 0);
	assert_non_null(lowp_line(r.out, "bf16", line, sizeof(line)));
	if (strstr(line, "onednn: oneDNN"))
		fail_msg("bf16 on avx2 claimed: %s", line);
	assert_non_null(strstr(line, "onednn: unavailable: "));
	assert_non_null(strstr(line, "no bf16 matmul on avx2"));
	/* nothing in the machine's description claims AMX (the CPU has it; oneDNN may not use it) */
	if (strstr(r.out, "amx"))
		fail_msg("AMX claimed with ONEDNN_MAX_CPU_ISA=avx2: %s", strstr(r.out, "amx"));
	harness_run_free(&r);

	setenv("ONEDNN_MAX_CPU_ISA", "avx512_core_vnni", 1);
	assert_int_equal(harness_spprof(&r, args), 0);
	unsetenv("ONEDNN_MAX_CPU_ISA");
	assert_int_equal(r.status, 0);
	assert_non_null(lowp_line(r.out, "int8", line, sizeof(line)));
	if (strstr(r.out, "amx"))
		fail_msg("AMX claimed with ONEDNN_MAX_CPU_ISA=avx512_core_vnni: %s", strstr(r.out, "amx"));
	harness_run_free(&r);
}

/* info --format json: dense_precisions.{bf16,fp16,int8}, each candidate ok with its kernel or a reason. */
static void test_lowp_info_json(void **state)
{
	const char *args[] = {"info", "--dense", "spprof", "--format", "json", NULL};
	struct harness_run r;
	cJSON *j;
	const cJSON *dp;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	dp = cJSON_GetObjectItem(j, "dense_precisions");
	assert_non_null(dp);
	for (int p = SPP_PREC_BF16; p < SPP_PREC_COUNT; p++) {
		const cJSON *c, *a = cJSON_GetObjectItem(dp, spp_prec_name(p));

		assert_true(cJSON_GetArraySize(a) >= 2);
		cJSON_ArrayForEach(c, a) {
			int ok = cJSON_IsTrue(cJSON_GetObjectItem(c, "ok"));

			assert_true(cJSON_IsString(cJSON_GetObjectItem(c, ok ? "impl" : "reason")));
			assert_true(cJSON_IsString(cJSON_GetObjectItem(c, "name")));
		}
	}
	cJSON_Delete(j);
	harness_run_free(&r);
}

int test_dense_lowp_main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowp_usage),
		cmocka_unit_test(test_lowp_against_reference),
		cmocka_unit_test(test_lowp_verify_catches),
		cmocka_unit_test(test_lowp_info_isa),
		cmocka_unit_test(test_lowp_info_json),
	};
	return cmocka_run_group_tests_name("dense_lowp", tests, NULL, NULL);
}
