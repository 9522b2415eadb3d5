/*
 * The CUDA backend. In every build: `spprof info` names the CUDA devices
 * or why there are none and CUPTI's state, the report's machine.gpus,
 * `analyze --backends cuda` exits 3 with that reason (or "no CUDA backend
 * in this build"), spp_run_cuda appends nothing without a device, and the
 * host side of the kernels (fp16/bf16/tf32 rounding, the 2:4 tensor-core
 * encoder and its refusals, the reduced-precision reference, the static
 * load balance) against values worked out by hand. With --kernels, the
 * CUDA table on a device: test_cuda_kernels.c.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/host.h"
#include "kernels/kernels.h"
#include "base/rng.h"
#include "profiler/device.h"
#include "profiler/run_cuda.h"
#include "test/harness.h"

#if HAVE_CUDA
#include "kernels/cuda/formats.h"
#include "kernels/cuda/measure.h"
#endif

int cuda_kernels_main(void); /* test_cuda_kernels.c */

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
			assert_null(strstr(strstr(r.err, want) + 1, want));
			/* and in the report's warnings */
			snprintf(want, sizeof(want), "\"skipping backend cuda: %s\"", p.why);
			assert_non_null(strstr(r.out, want));
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

/*
 * The binary without its CUDA modules (kernels/cuda/module.h): a copy of
 * spprof in a folder of its own finds none, starts, and says why there is
 * no device; a CUDA run exits 3 as without a GPU.
 */
static void test_no_module(void **state)
{
	char *dir, *bin, *model, *data, want[256];
	const char *args_info[] = {"info", NULL};
	const char *args_run[] = {"analyze", NULL, "--backends", "cuda", NULL};
	struct harness_run r;
	size_t len;

	(void)state;
	if (!HAVE_CUDA || harness_exists(SPP_MODULE_DIR "/" SPP_CUDA_PROBE_MODULE_FILE)) {
		skip(); /* nothing to load, or an installed module the copy would find */
		return;
	}
	dir = harness_tmpdir();
	bin = harness_join(dir, "spprof");
	model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");
	data = harness_slurp(getenv("SPPROF"), &len);
	assert_non_null(data);
	assert_int_equal(harness_write(bin, data, len), 0);
	assert_int_equal(chmod(bin, 0755), 0);
	snprintf(want, sizeof(want), "CUDA runtime not loaded: '%s' not found beside '%s'",
		 SPP_CUDA_PROBE_MODULE_FILE, bin);
	assert_int_equal(harness_exec(&r, bin, args_info), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, want));
	harness_run_free(&r);
	args_run[1] = model;
	assert_int_equal(harness_exec(&r, bin, args_run), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "spprof: no CUDA backend to run on: CUDA runtime not loaded: "));
	harness_run_free(&r);
	free(data);
	free(model);
	free(bin);
	harness_rmtree(dir);
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

static struct spp_rng host_rng = {0x2545f4914f6cdd1du};

static double host_uniform(void)
{
	return spp_rng_uniform(&host_rng);
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
		const struct spp_device dev = {&spp_device_cuda, NULL};
		struct spp_device_layer L = {&w, x, 1, 0, 0};
		struct spp_device_case c;
		struct spp_error err = {0};

		/* no device: the case cannot be opened, and holds nothing */
		assert_int_equal(spp_device_open(&dev, spp_cuda_formats[0], &L, &c, &err), SPP_E_DEVICE);
		assert_null(c.impl);
		spp_device_close(&c);
	}
	assert_null(spp_cuda_format_find("nm1_4"));
#else
	(void)state;
	skip();
#endif
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_line),
		cmocka_unit_test(test_machine_gpus),
		cmocka_unit_test(test_analyze_backends),
		cmocka_unit_test(test_no_module),
		cmocka_unit_test(test_run_cuda_no_device),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_nm_tc_encode),
		cmocka_unit_test(test_nm_tc_roundtrip),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_imbalance),
		cmocka_unit_test(test_encode_no_device),
	};

	if (argc > 1 && strcmp(argv[1], "--kernels") == 0)
		return cuda_kernels_main();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
