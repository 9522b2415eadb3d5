/*
 * The CUDA backend. In every build: `spprof info` names the CUDA devices
 * or why there are none and CUPTI's state, the report's machine.gpus,
 * `analyze --backends cuda` exits 3 with that reason (or "no CUDA backend
 * in this build"), spp_run_cuda appends nothing without a device, and the
 * host side of the kernels (fp16/bf16/tf32 rounding, the 2:4 tensor-core
 * encoder and its refusals, the reduced-precision reference, the static
 * load balance) against values worked out by hand. With --kernels
 * (registered only with HAVE_CUDA; test/gpu/run on a GPU machine): every
 * entry of the CUDA table against the CPU reference over several shapes
 * and sparsities, and spp_run_cuda on a layer; exits 77 with the reason
 * where there is no device.
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

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/host.h"
#include "kernels/kernels.h"
#include "profiler/run_cuda.h"
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
		assert_non_null(strstr(r.out, "\ngpu          cuda: no CUDA backend in this build\n"
					      "cupti        not in this build (no CUDA backend)\n"));
	} else if (!have_driver()) {
		/* the binary started without libcuda: cudart found no driver */
		assert_int_equal(p.ndevices, 0);
		assert_string_equal(p.why, "no device (driver not found)");
		assert_non_null(strstr(r.out, "\ngpu          cuda: no device (driver not found)\ncupti        "));
		/* CUPTI is linked or not, but it never counts without a device */
		assert_true(strstr(r.out, "range profiler: no device to count on\n") ||
			    strstr(r.out, "cupti        CUPTI: not in this build"));
	} else if (p.ndevices == 0) {
		snprintf(want, sizeof(want), "\ngpu          cuda: %s\ncupti        ", p.why);
		assert_non_null(strstr(r.out, want));
	} else {
		snprintf(want, sizeof(want), "\ngpu          cuda:0 %s, sm_%d", p.dev[0].name, p.dev[0].sm);
		assert_non_null(strstr(r.out, want));
		assert_non_null(strstr(r.out, "\ncupti        "));
	}
	harness_run_free(&r);
}

/* machine.gpus: one object per device with the agreed keys, [] without one. */
static void test_machine_gpus(void **state)
{
	const char *args[] = {"info", "--format", "json", NULL};
	static const char *const keys[] = {"index", "name", "sm", "multiprocessors", "memory_bytes",
					   "runtime_version", "driver_version"};
	struct spp_cuda_probe p;
	struct harness_run r;
	const cJSON *gpus, *machine;
	cJSON *doc;

	(void)state;
	spp_cuda_probe(&p);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	machine = cJSON_GetObjectItemCaseSensitive(doc, "machine");
	gpus = cJSON_GetObjectItemCaseSensitive(machine ? machine : doc, "gpus");
	assert_true(cJSON_IsArray(gpus));
	assert_int_equal(cJSON_GetArraySize(gpus), p.ndevices);
	for (int i = 0; i < p.ndevices; i++) {
		const cJSON *g = cJSON_GetArrayItem(gpus, i);
		char sm[16];

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(g, keys[k]));
		snprintf(sm, sizeof(sm), "sm_%d", p.dev[i].sm);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(g, "sm")->valuestring, sm);
		assert_int_equal(cJSON_GetObjectItemCaseSensitive(g, "index")->valueint, i);
	}
	cJSON_Delete(doc);
	harness_run_free(&r);
}

/* The no-device paths of analyze (with a device, test/gpu/run runs it). */
static void test_analyze_backends(void **state)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *model = harness_join(root, "bert_block_nm2_4.safetensors");
	struct spp_cuda_probe p;
	struct harness_run r;
	char want[512];

	(void)state;
	if (spp_cuda_probe(&p)) {
		free(model);
		skip();
		return;
	}
	if (!p.built)
		snprintf(want, sizeof(want), "spprof: no CUDA backend in this build\n");
	else
		snprintf(want, sizeof(want), "spprof: no CUDA backend to run on: %s\n", p.why);
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
			snprintf(want, sizeof(want), "spprof: warning: skipping backend cuda: %s\n", p.why);
			assert_non_null(strstr(r.err, want));
			assert_non_null(strstr(r.out, "\"layers\""));
			assert_null(strstr(r.out, "\"backend\": \"cuda\""));
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

/* Without a device spp_run_cuda appends nothing and says why, in every build. */
static void test_run_cuda_no_device(void **state)
{
	static const float v[4] = {1, 0, 0, 2}, x[2] = {1, 1}, yd[2] = {1, 2}, bound[2] = {1, 2};
	const struct spp_matrix w = {2, 2, v};
	struct spp_layer_runs out;
	struct spp_run_opts o;
	struct spp_run *runs;
	struct spp_cuda_probe p;
	struct spp_error err = {0};

	(void)state;
	if (spp_cuda_probe(&p)) {
		skip(); /* --kernels covers the device */
		return;
	}
	memset(&out, 0, sizeof(out));
	runs = calloc(1, sizeof(*runs));
	assert_non_null(runs);
	spp_run_init(&runs[0], "cpu", "dense");
	out.runs = runs;
	out.nruns = 1;
	spp_run_opts_init(&o);
	o.backends = SPP_BACKEND_CPU | SPP_BACKEND_CUDA;
	o.cupti = 1;
	assert_int_equal(spp_run_cuda(&w, x, 1, yd, bound, 2, 2.0, &o, &out, &err), SPP_E_DEVICE);
	assert_string_equal(err.msg, p.why);
	assert_int_equal(out.nruns, 1);
	assert_ptr_equal(out.runs, runs);
	assert_string_equal(out.runs[0].format, "dense");
	free(runs);
}

/* fp16, bf16 and tf32 rounding: ties to even, overflow, subnormals, worked out by hand. */
static void test_rounding(void **state)
{
	(void)state;
	assert_int_equal(spp_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(spp_f32_to_f16(-2.0f), 0xc000);
	assert_int_equal(spp_f32_to_f16(0.0f), 0x0000);
	assert_int_equal(spp_f32_to_f16(-0.0f), 0x8000);
	assert_int_equal(spp_f32_to_f16(0.1f), 0x2e66);
	assert_int_equal(spp_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(spp_f32_to_f16(65519.0f), 0x7bff);
	assert_int_equal(spp_f32_to_f16(65520.0f), 0x7c00); /* halfway to 2^16: to even, infinity */
	assert_int_equal(spp_f32_to_f16(1e9f), 0x7c00);
	assert_int_equal(spp_f32_to_f16(INFINITY), 0x7c00);
	assert_int_equal(spp_f32_to_f16(NAN) & 0x7e00, 0x7e00);
	assert_int_equal(spp_f32_to_f16(ldexpf(1, -24)), 0x0001);  /* smallest subnormal */
	assert_int_equal(spp_f32_to_f16(ldexpf(1, -25)), 0x0000);  /* halfway to it: even, zero */
	assert_int_equal(spp_f32_to_f16(ldexpf(3, -25)), 0x0002);  /* 1.5 ulp: even, 2 */
	assert_int_equal(spp_f32_to_f16(ldexpf(1, -14)), 0x0400);  /* smallest normal */
	assert_int_equal(spp_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);     /* tie: even */
	assert_int_equal(spp_f32_to_f16(1.0f + ldexpf(3, -11)), 0x3c02);     /* tie: even, up */
	assert_int_equal(spp_f32_to_f16(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
	assert_true(spp_f16_to_f32(0x3c00) == 1.0f);
	assert_true(spp_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(spp_f16_to_f32(0x0001) == ldexpf(1, -24));
	assert_true(spp_f16_to_f32(0xc000) == -2.0f);
	assert_true(isinf(spp_f16_to_f32(0x7c00)));
	assert_true(isnan(spp_f16_to_f32(0x7e00)));
	/* every finite fp16 value survives the round trip */
	for (unsigned h = 0; h < 0x10000u; h++)
		if ((h & 0x7c00u) != 0x7c00u)
			assert_int_equal(spp_f32_to_f16(spp_f16_to_f32((uint16_t)h)), h);
	assert_true(spp_round_bf16(1.0f + ldexpf(1, -8)) == 1.0f);
	assert_true(spp_round_bf16(1.0f + ldexpf(3, -8)) == 1.0f + ldexpf(1, -6));
	assert_true(spp_round_bf16(3.0f) == 3.0f);
	assert_true(spp_round_tf32(1.0f + ldexpf(1, -11)) == 1.0f);
	assert_true(spp_round_tf32(1.0f + ldexpf(3, -11)) == 1.0f + ldexpf(1, -9));
	assert_true(spp_round_tf32(1.0f + ldexpf(1, -10)) == 1.0f + ldexpf(1, -10));
	assert_true(isnan(spp_round_tf32(NAN)));
}

/* The 2:4 tensor-core layout of a tiny W, register by register, and its refusals. */
static void test_nm_tc_encode(void **state)
{
	/* one row, K = 8: chunk 0 keeps columns 1 and 3, chunk 1 only column 4 */
	static const float v[8] = {0, 5, 0, 7, 1, 0, 0, 0};
	static const float three[8] = {1, 2, 3, 0, 0, 0, 0, 0};
	static const float big[4] = {70000.0f, 0, 0, 0};
	const struct spp_matrix w = {1, 8, v};
	struct spp_nm_tc t;
	struct spp_error err = {0};
	float back[8];

	(void)state;
	assert_int_equal(spp_nm_tc_encode(&w, &t, &err), 0);
	assert_int_equal(t.mtiles, 1);
	assert_int_equal(t.ktiles, 1);
	assert_int_equal(t.nnz, 3);
	/* lane 0 (g 0, t 0), register 0: row 0, chunk 0: 5 (0x4500) low, 7 (0x4700) high */
	assert_int_equal(t.a[0], 0x47004500u);
	/* register 1: row 8 (padding): zeros; register 2: row 0 chunk 4 (beyond K): zeros */
	assert_int_equal(t.a[1], 0u);
	assert_int_equal(t.a[2], 0u);
	/* lane 1 (t 1), register 0: row 0, chunk 1: 1.0 (0x3c00) kept at column 4, a zero beside it */
	assert_int_equal(t.a[4 * 1 + 0], 0x00003c00u);
	/*
	 * lane 0's metadata: low half row 0, chunks 0..3: 1|3<<2 = 0xd, then the
	 * padded pair 0|1<<2 = 0x4 for chunk 1 (one kept at index 0) and the
	 * empty chunks 2, 3; high half row 8, padding: 0x4444
	 */
	assert_int_equal(t.e[0], 0x4444444du);
	/* lane 1 carries chunks 4..7 (beyond K): all padding pairs */
	assert_int_equal(t.e[1], 0x44444444u);
	/* lane 2 repeats lane 0 (selector 0 ignores it) */
	assert_int_equal(t.e[2], t.e[0]);
	assert_int_equal(spp_nm_tc_decode(&t, back), 0);
	assert_memory_equal(back, v, sizeof(v));
	/* a nibble with equal indices is not one mma.sp takes */
	t.e[0] = (t.e[0] & ~0xfu) | 0x5u;
	assert_int_equal(spp_nm_tc_decode(&t, back), -1);
	spp_nm_tc_release(&t);
	spp_nm_tc_release(&t); /* twice is fine */
	{
		const struct spp_matrix w3 = {1, 8, three};

		assert_int_equal(spp_nm_tc_encode(&w3, &t, &err), SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "not 2:4 compliant: 50% of groups hold more than 2 non-zeros");
		assert_null(t.a);
	}
	{
		const struct spp_matrix wb = {1, 4, big};

		assert_int_equal(spp_nm_tc_encode(&wb, &t, &err), SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "W[0][0] = 70000 is beyond fp16's range");
		assert_null(t.a);
	}
}

static uint64_t host_rng = 0x2545f4914f6cdd1du;

static double host_uniform(void)
{
	host_rng ^= host_rng << 13;
	host_rng ^= host_rng >> 7;
	host_rng ^= host_rng << 17;
	return (double)(host_rng >> 11) / 9007199254740992.0;
}

/* A ragged 2:4 W (two tiles each way, K not a multiple of 4) decodes to its fp16 rounding. */
static void test_nm_tc_roundtrip(void **state)
{
	const int64_t m = 21, k = 45;
	float *w = calloc((size_t)(m * k), sizeof(float)), *back = malloc(sizeof(float) * (size_t)(m * k));
	const struct spp_matrix mat = {m, k, w};
	struct spp_nm_tc t;
	struct spp_error err = {0};
	int64_t nnz = 0;

	(void)state;
	assert_non_null(w);
	assert_non_null(back);
	for (int64_t r = 0; r < m; r++)
		for (int64_t c0 = 0; c0 < k; c0 += 4) {
			/* two random columns of the chunk, sometimes one, sometimes none */
			int a = (int)(host_uniform() * 4), b = (int)(host_uniform() * 4), keep = (int)(host_uniform() * 3);

			if (keep >= 1 && c0 + a < k)
				w[r * k + c0 + a] = (float)(2.0 * host_uniform() - 1.0);
			if (keep == 2 && c0 + b < k)
				w[r * k + c0 + b] = (float)(2.0 * host_uniform() - 1.0);
		}
	for (int64_t i = 0; i < m * k; i++)
		nnz += w[i] != 0.0f;
	assert_int_equal(spp_nm_tc_encode(&mat, &t, &err), 0);
	assert_int_equal(t.mtiles, 2);
	assert_int_equal(t.ktiles, 2);
	assert_int_equal(t.nnz, nnz);
	assert_int_equal(spp_nm_tc_decode(&t, back), 0);
	for (int64_t i = 0; i < m * k; i++)
		assert_true(back[i] == spp_round_fp16(w[i]));
	spp_nm_tc_release(&t);
	free(w);
	free(back);
}

/* The reduced-precision reference rounds the inputs, then sums exactly. */
static void test_reference(void **state)
{
	/* 1 + 2^-10 is an fp16 value; 1 + 2^-12 rounds to 1 */
	const float v[2] = {1.0f + ldexpf(1, -10), 3.0f}, x[2] = {1.0f + ldexpf(1, -12), 2.0f};
	const float big[2] = {1e6f, 0.0f};
	const struct spp_matrix w = {1, 2, v};
	struct spp_error err = {0};
	double y = 0;

	(void)state;
	assert_int_equal(spp_cuda_reference(&w, x, 1, "fp16", &y, &err), 0);
	assert_true(y == 7.0 + ldexp(1, -10));
	assert_int_equal(spp_cuda_reference(&w, big, 1, "fp16", &y, &err), SPP_E_UNSUPPORTED);
	assert_string_equal(err.msg, "X[0][0] = 1e+06 is beyond fp16's range");
	/* bf16 has the range of fp32: no refusal; 1 + 2^-10 rounds to 1 there */
	assert_int_equal(spp_cuda_reference(&w, big, 1, "bf16", &y, &err), 0);
	assert_true(y == 999424.0); /* 1e6 in bf16: 0x4974 -> 999424 */
	assert_int_equal(spp_cuda_precision_rounds("fp16"), 1);
	assert_int_equal(spp_cuda_precision_rounds("tf32"), 0);
	assert_true(spp_cuda_precision_rtol("fp32", 1e-4) == 1e-4);
	assert_true(spp_cuda_precision_rtol("fp16", 1e-4) == SPP_CUDA_RTOL_HALF);
	assert_true(spp_cuda_precision_rtol("tf32", 1e-4) == SPP_CUDA_RTOL_TF32);
}

/* nnz_imbalance of a partition over thread blocks, by hand. */
static void test_imbalance(void **state)
{
	float v[16 * 4] = {0};
	const struct spp_matrix w = {16, 4, v}, empty = {16, 4, (float[64]){0}};

	(void)state;
	/* rows 0..7 full (32 non-zeros), rows 8..15 one each (8): blocks of 8 rows: 32 and 8 */
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < (r < 8 ? 4 : 1); c++)
			v[r * 4 + c] = 1.0f;
	assert_true(fabs(spp_cuda_rows_imbalance(&w, 8) - 32.0 / 20.0) < 1e-12);
	/* one block of 16 rows: perfectly balanced */
	assert_true(spp_cuda_rows_imbalance(&w, 16) == 1.0);
	/* blocks of 3 rows: 12, 12, 8 (rows 6, 7, 8), 3, 3, 2 (row 15 alone): max 12, mean 40/6 */
	assert_true(fabs(spp_cuda_rows_imbalance(&w, 3) - 12.0 / (40.0 / 6.0)) < 1e-12);
	assert_true(isnan(spp_cuda_rows_imbalance(&empty, 8)));
	/* 5000 non-zeros in runs of 2048: 2048, 2048, 904 */
	assert_true(fabs(spp_cuda_chunk_imbalance(5000, 2048) - 2048.0 / (5000.0 / 3.0)) < 1e-12);
	assert_true(spp_cuda_chunk_imbalance(100, 2048) == 1.0);
	assert_true(isnan(spp_cuda_chunk_imbalance(0, 2048)));
}

/* Without a device, every entry of the CUDA table fails to encode with the reason. */
static void test_encode_no_device(void **state)
{
#if HAVE_CUDA
	/* 16 x 16, 2:4 along K, so that every entry (bsr16 of cuSPARSE included) reaches the device */
	float v[16 * 16] = {0};
	const struct spp_matrix w = {16, 16, v};
	struct spp_cuda_probe p;
	int n = 0;

	(void)state;
	if (spp_cuda_probe(&p)) {
		skip(); /* test/gpu/run covers the device */
		return;
	}
	for (int r = 0; r < 16; r++) {
		v[r * 16 + r] = 1.0f + (float)r;
		v[r * 16 + (r + 5) % 16] = -1.0f;
	}
	for (int i = 0; spp_cuda_formats[i]; i++, n++) {
		struct spp_cuda_encoded e = {0};
		struct spp_error err = {0};
		const struct spp_cuda_format *f = spp_cuda_formats[i];

		assert_ptr_equal(spp_cuda_format_find(f->key), f);
		assert_non_null(f->precision);
		if (f->encode(&w, &e, &err) != SPP_E_DEVICE)
			fail_msg("%s: %s", f->key, err.msg);
		assert_null(e.impl);
		assert_non_null(strstr(err.msg, "cuda: "));
		f->release(&e);
	}
	/*
	 * csr, csr_balanced, bsr4/8/16, bitmask, nm2_4, nm2_4_tc, cuSPARSE csr,
	 * coo, bsr4/8/16, cuBLAS fp32, tf32, fp16, cuBLASLt fp32, tf32, fp16
	 */
	assert_int_equal(n, 19);
	assert_true(spp_cuda_format_find("cublaslt_fp32")->baseline);
	assert_string_equal(spp_cuda_format_find("cublaslt_tf32")->precision, "tf32");
	assert_string_equal(spp_cuda_format_find("cublaslt_fp16")->precision, "fp16");
	assert_string_equal(spp_cuda_format_find("nm2_4_tc")->precision, "fp16");
	assert_string_equal(spp_cuda_format_find("cublas_fp16")->precision, "fp16");
	assert_string_equal(spp_cuda_format_find("cublas_tf32")->precision, "tf32");
	{
		/* 2:4 is checked on the host, before any copy */
		static const float three[8] = {1, 2, 3, 0, 1, 0, 0, 1};
		const struct spp_matrix w3 = {2, 4, three};
		struct spp_cuda_encoded e = {0};
		struct spp_error err = {0};

		assert_int_equal(spp_cuda_format_find("nm2_4")->encode(&w3, &e, &err),
				 SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "not 2:4 compliant: 50% of groups hold more than 2 non-zeros");
		assert_null(e.impl);
		assert_int_equal(spp_cuda_format_find("nm2_4_tc")->encode(&w3, &e, &err),
				 SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "not 2:4 compliant: 50% of groups hold more than 2 non-zeros");
		assert_null(e.impl);
	}
	{
		/* cuSPARSE BSR refuses ragged shapes before the device too */
		struct spp_cuda_encoded e = {0};
		struct spp_error err = {0};
		const struct spp_matrix w12 = {12, 16, v};

		assert_int_equal(spp_cuda_format_find("cusparse_bsr8")->encode(&w12, &e, &err),
				 SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "cuSPARSE BSR needs M and K multiples of 8 (W is 12 x 16)");
	}
	{
		static const float x[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
		float want[16];
		struct spp_cuda_timing t;
		struct spp_error err = {0};

		spp_reference_gemm(&w, x, want, 1);
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
		printf("%-15s %s 1024x1024 90%% sparse n=128: kernel %.4f ms (median %.4f), "
		       "W %.2f ms, x in %.4f ms, y out %.4f ms, %.2f MiB\n", f->key, f->precision,
		       t.kernel_ms_min, t.kernel_ms_median, t.h2d_w_ms, t.h2d_x_ms, t.d2h_y_ms,
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

static int kernels_main(void)
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
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_line),
		cmocka_unit_test(test_machine_gpus),
		cmocka_unit_test(test_analyze_backends),
		cmocka_unit_test(test_run_cuda_no_device),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_nm_tc_encode),
		cmocka_unit_test(test_nm_tc_roundtrip),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_imbalance),
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
