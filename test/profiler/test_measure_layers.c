/*
 * Measurement, continued (test_measure.c holds the list): decoding a
 * layer's weights to fp32 in every dtype and layout, and analyze end to
 * end with kernel runs, through the library and the binary's options.
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

#include "kernels/kernels.h"
#include "profiler/decode.h"
#include "profiler/measure.h"
#include "profiler/run.h"
#include "profiler/static.h"
#include "reports/report.h"
#include "test/harness.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

void test_decode(void **state);
void test_decode_conv(void **state);
void test_end_to_end(void **state);
void test_cli_options(void **state);

static void row_tensor(struct spp_tensor *t, struct spp_layer *l, enum spp_dtype dt,
		       const void *bytes, int k, int elem)
{
	memset(t, 0, sizeof(*t));
	t->name = "t";
	t->dtype = dt;
	t->ndim = 2;
	t->shape[0] = 1;
	t->shape[1] = k;
	t->numel = (uint64_t)k;
	t->data = bytes;
	t->nbytes = (uint64_t)k * (uint64_t)elem;
	spp_layer_init(l, t, 1);
}

static void expect_row(enum spp_dtype dt, const void *bytes, int k, int elem,
		       const float *want)
{
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_error err = {0};
	float got[8];

	row_tensor(&t, &l, dt, bytes, k, elem);
	assert_int_equal(spp_layer_decode(&l, got, &err), 0);
	for (int j = 0; j < k; j++) {
		if (isnan(want[j])) {
			assert_true(isnan(got[j]));
			continue;
		}
		if (got[j] != want[j])
			fail_msg("%s[%d]: %.9g, want %.9g", spp_dtype_name(dt), j, got[j], want[j]);
	}
}

void test_decode(void **state)
{
	static const uint8_t f16[] = {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0x00, 0x80};
	static const uint8_t bf16[] = {0x80, 0x3f, 0x40, 0xc0};
	static const uint8_t i8[] = {0xfb, 0x7f}, u8[] = {200, 0};
	static const uint8_t i16[] = {0x18, 0xfc}, u16[] = {0xe8, 0xfd};
	static const uint8_t i32[] = {0xff, 0xff, 0xff, 0xff}, u32[] = {0x00, 0x00, 0x00, 0x80};
	static const uint8_t i64[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t u64[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t e4m3[] = {0x38, 0x7e, 0x01, 0xff, 0xb0, 0x00};
	static const uint8_t e5m2[] = {0x3c, 0x7c, 0x01, 0xc0};
	double f64[] = {0.1, -2.5};
	float f32[] = {1.5f, -0.0f, 3e-40f};
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_error err = {0};
	uint8_t f4[1] = {0};
	float out[2];

	(void)state;
	expect_row(SPP_DTYPE_F32, f32, 3, 4, f32);
	expect_row(SPP_DTYPE_F16, f16, 4, 2, (float[]){1, -2, 0.5f, -0.0f});
	expect_row(SPP_DTYPE_BF16, bf16, 2, 2, (float[]){1, -3});
	expect_row(SPP_DTYPE_F64, f64, 2, 8, (float[]){0.1f, -2.5f});
	expect_row(SPP_DTYPE_I8, i8, 2, 1, (float[]){-5, 127});
	expect_row(SPP_DTYPE_U8, u8, 2, 1, (float[]){200, 0});
	expect_row(SPP_DTYPE_I16, i16, 1, 2, (float[]){-1000});
	expect_row(SPP_DTYPE_U16, u16, 1, 2, (float[]){65000});
	expect_row(SPP_DTYPE_I32, i32, 1, 4, (float[]){-1});
	expect_row(SPP_DTYPE_U32, u32, 1, 4, (float[]){2147483648.0f});
	expect_row(SPP_DTYPE_I64, i64, 1, 8, (float[]){-2});
	expect_row(SPP_DTYPE_U64, u64, 1, 8, (float[]){72057594037927936.0f});
	/* E4M3: 1.0, max 448, smallest subnormal 2^-9, NaN, -0.5 (0xb0), 0 */
	expect_row(SPP_DTYPE_F8_E4M3, e4m3, 6, 1,
		   (float[]){1, 448, 1.0f / 512, NAN, -0.5f, 0});
	/* E5M2: 1.0, +inf, smallest subnormal 2^-16, -2 */
	expect_row(SPP_DTYPE_F8_E5M2, e5m2, 4, 1, (float[]){1, INFINITY, 1.0f / 65536, -2});

	/* no fp32 decoding for F4 */
	row_tensor(&t, &l, SPP_DTYPE_F4, f4, 2, 1);
	t.nbytes = 1;
	assert_int_equal(spp_layer_decode(&l, out, &err), SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "F4"));
	assert_false(spp_decode_supported(SPP_DTYPE_C64));
}

void test_decode_conv(void **state)
{
	/* OIHW [2, 3, 2, 1] holding its element index; K ordered (kh, kw, c), c fastest */
	static const float want[2][6] = {{0, 2, 4, 1, 3, 5}, {6, 8, 10, 7, 9, 11}};
	float data[12], out[12];
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_error err = {0};

	(void)state;
	for (int i = 0; i < 12; i++)
		data[i] = (float)i;
	memset(&t, 0, sizeof(t));
	t.name = "conv";
	t.dtype = SPP_DTYPE_F32;
	t.ndim = 4;
	t.shape[0] = 2, t.shape[1] = 3, t.shape[2] = 2, t.shape[3] = 1;
	t.numel = 12;
	t.data = (const unsigned char *)data;
	t.nbytes = sizeof(data);
	spp_layer_init(&l, &t, 1);
	assert_int_equal(l.view.m, 2);
	assert_int_equal(l.view.k, 6);
	assert_int_equal(spp_layer_decode(&l, out, &err), 0);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 6; j++)
			assert_true(out[i * 6 + j] == want[i][j]);
	/* a tensor shorter than its view is refused */
	t.nbytes = 44;
	assert_int_equal(spp_layer_decode(&l, out, &err), SPP_E_FORMAT);
}


static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

void test_end_to_end(void **state)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *dir = harness_tmpdir(), *model, *json, *csv, *text;
	struct harness_run r;
	struct spp_error err = {0};
	const cJSON *layers, *l, *run, *s;
	cJSON *rep = NULL;
	int nlayers = 0;

	(void)state;
	assert_non_null(root);
	model = harness_join(root, "mixed_cnn.safetensors");
	json = harness_join(dir, "r.json");
	csv = harness_join(dir, "r.csv");
	{
		const char *args[] = {"analyze", model, "--repeat", "3", "--format", "json", "-o", json, NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
		harness_run_free(&r);
	}
	/* the loader accepts a report with runs */
	assert_int_equal(spp_report_load(json, &rep, &err), 0);
	s = get(rep, "settings");
	assert_true(get(s, "repeats")->valuedouble == 3);
	assert_true(cJSON_IsNumber(get(s, "verify_rtol")));
	assert_true(cJSON_IsString(get(s, "thread_policy")));
	assert_true(cJSON_IsObject(get(get(rep, "machine"), "dense_blas")));
	layers = get(rep, "layers");
	cJSON_ArrayForEach(l, layers) {
		const cJSON *runs = get(l, "runs");
		int ok = 0;

		nlayers++;
		assert_int_equal(cJSON_GetArraySize(runs), 10);
		assert_string_equal(get(runs->child, "format")->valuestring, "dense");
		cJSON_ArrayForEach(run, runs) {
			const char *st = get(run, "status")->valuestring;

			assert_string_equal(get(run, "backend")->valuestring, "cpu");
			/* the dense baseline runs in OpenBLAS: no traced copy, no
			 * cache figures; every verified format gets them from a source */
			if (strcmp(get(run, "format")->valuestring, "dense") == 0 ||
			    strcmp(st, "ok") != 0)
				assert_true(cJSON_IsNull(get(run, "cache")));
			else
				assert_true(cJSON_IsString(get(get(run, "cache"), "source")));
			if (strcmp(st, "ok") == 0) {
				ok++;
				assert_true(get(get(run, "time_ns"), "repeats")->valuedouble == 3);
				assert_true(get(get(run, "time_ns"), "median")->valuedouble > 0);
				assert_true(cJSON_IsNumber(get(run, "speedup")));
				assert_true(cJSON_IsNumber(get(run, "gflops")));
				assert_true(cJSON_IsNumber(get(run, "bytes_moved")));
				assert_true(cJSON_IsNumber(get(run, "bandwidth_gbs")));
				if (run == runs->child)
					assert_true(get(run, "speedup")->valuedouble == 1);
			} else {
				assert_string_equal(st, "not_applicable");
				assert_true(strlen(get(run, "reason")->valuestring) > 0);
				assert_true(cJSON_IsNull(get(run, "time_ns")));
				assert_true(cJSON_IsNull(get(run, "speedup")));
			}
		}
		/* dense and the general formats hold any layer */
		assert_true(ok >= 7);
	}
	assert_int_equal(nlayers, 9);
	cJSON_Delete(rep);

	/* the text table shows the runs; the CSV has a row per layer x run */
	{
		const char *args[] = {"report", json, NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "deploy"));
		assert_non_null(strstr(r.out, "efficiency"));
		harness_run_free(&r);
	}
	{
		const char *args[] = {"report", json, "--format", "csv", "-o", csv, NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		harness_run_free(&r);
		text = harness_slurp(csv, NULL);
		assert_non_null(text);
		assert_int_equal(harness_count_lines(text), 1 + 9 * 10);
		assert_non_null(strstr(text, "time_ns.median"));
		free(text);
	}
	free(model), free(json), free(csv);
	harness_rmtree(dir);
}

void test_cli_options(void **state)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *model = harness_join(root, "bert_block_nm2_4.safetensors");
	struct harness_run r;
	cJSON *rep;
	const cJSON *runs;

	(void)state;
	{
		const char *args[] = {"analyze", model, "--backends", "cuda", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 3);
		assert_non_null(strstr(r.err, "no CUDA backend"));
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--backends", "tpu", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--formats", "csr,bogus", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "bogus"));
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--time-budget", "-1", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--formats", "nm2_4,csr", "--threads", "1",
				      "--time-budget", "0.01", "--format", "json", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
		rep = cJSON_Parse(r.out);
		assert_non_null(rep);
		runs = get(cJSON_GetArrayItem(get(rep, "layers"), 0), "runs");
		assert_int_equal(cJSON_GetArraySize(runs), 3);
		assert_string_equal(get(cJSON_GetArrayItem(runs, 1), "format")->valuestring, "nm2_4");
		/* the sample is 2:4: nm2_4 runs and is verified */
		assert_string_equal(get(cJSON_GetArrayItem(runs, 1), "status")->valuestring, "ok");
		assert_true(cJSON_IsFalse(get(get(rep, "settings"), "cold")));
		assert_true(get(get(cJSON_GetArrayItem(runs, 1), "time_ns"), "repeats")->valuedouble >= 5);
		cJSON_Delete(rep);
		harness_run_free(&r);
	}
	free(model);
}

