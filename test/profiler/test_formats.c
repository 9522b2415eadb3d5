/*
 * The GGUF, Matrix Market and DLMC .smtx loaders (the npy/npz ones are in
 * test_formats_npy.c, the Matrix Market and .smtx tests in
 * test_formats_mtx.c): files written by the test with known zeros, read
 * back through the library and the spprof binary; malformed files of each
 * format fail with exit 2 and one line naming the file.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "profiler/decode.h"
#include "profiler/gguf.h"
#include "profiler/model.h"
#include "test/profiler/formats_fixture.h"
#include "test/harness.h"

const struct CMUnitTest *formats_npy_tests(size_t *n);

/* ---- a GGUF writer ---- */

enum { T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q8_0 = 8, T_Q4_K = 12, T_BF16 = 30 };

struct gt {
	const char *name;
	uint32_t type;
	uint32_t nd;
	uint64_t ne[5];
	struct bytes data;
	uint64_t offset;   /* 0: next aligned offset */
	int fixed_offset;
};

struct gguf_opts {
	uint32_t version;
	uint32_t align;        /* 0: the default, no general.alignment key */
	int all_values;        /* metadata of every value type */
	uint64_t n_tensors;    /* 0: the real count */
	int depth;             /* > 0: an array nested this deep */
};

static void gstr(struct bytes *b, const char *s)
{
	bytes_u64(b, strlen(s));
	bytes_put(b, s, strlen(s));
}

static void kv_head(struct bytes *b, const char *key, uint32_t type)
{
	gstr(b, key);
	bytes_u32(b, type);
}

/* Metadata of every value type: 13 entries, nested arrays and strings. */
static int put_all_values(struct bytes *b)
{
	float f = 1.5f;
	double d = -2.25;
	uint32_t fb;
	uint64_t db;

	memcpy(&fb, &f, 4);
	memcpy(&db, &d, 8);
	kv_head(b, "v.u8", 0), bytes_u8(b, 7);
	kv_head(b, "v.i8", 1), bytes_u8(b, 0xfe);
	kv_head(b, "v.u16", 2), bytes_u16(b, 65535);
	kv_head(b, "v.i16", 3), bytes_u16(b, 0x8000);
	kv_head(b, "v.u32", 4), bytes_u32(b, 123456);
	kv_head(b, "v.i32", 5), bytes_u32(b, 0xffffffffu);
	kv_head(b, "v.f32", 6), bytes_u32(b, fb);
	kv_head(b, "v.bool", 7), bytes_u8(b, 1);
	kv_head(b, "general.name", 8), gstr(b, "tiny \"model\"\n");
	kv_head(b, "v.arr_u32", 9), bytes_u32(b, 4), bytes_u64(b, 3);
	bytes_u32(b, 1), bytes_u32(b, 2), bytes_u32(b, 3);
	kv_head(b, "tokenizer.ggml.tokens", 9), bytes_u32(b, 8), bytes_u64(b, 3);
	gstr(b, "<s>"), gstr(b, ""), gstr(b, "hello");
	/* an array of two arrays: [[1.0, 2.0], ["x"]] */
	kv_head(b, "v.nested", 9), bytes_u32(b, 9), bytes_u64(b, 2);
	bytes_u32(b, 12), bytes_u64(b, 2), bytes_u64(b, db), bytes_u64(b, db);
	bytes_u32(b, 8), bytes_u64(b, 1), gstr(b, "x");
	kv_head(b, "v.u64", 10), bytes_u64(b, UINT64_MAX);
	kv_head(b, "v.i64", 11), bytes_u64(b, (uint64_t)-5);
	kv_head(b, "v.f64", 12), bytes_u64(b, db);
	return 15;
}

static char *gguf_file(const char *name, const struct gguf_opts *o, struct gt *ts, int n)
{
	struct bytes b = {0}, meta = {0};
	uint64_t align = o->align ? o->align : 32, off = 0;
	int nkv = 0;
	char *p;

	if (o->all_values)
		nkv += put_all_values(&meta);
	if (o->align) {
		kv_head(&meta, "general.alignment", 4);
		bytes_u32(&meta, o->align);
		nkv++;
	}
	if (o->depth > 0) {
		kv_head(&meta, "v.deep", 9);
		for (int i = 1; i < o->depth; i++)
			bytes_u32(&meta, 9), bytes_u64(&meta, 1);
		bytes_u32(&meta, 4), bytes_u64(&meta, 1), bytes_u32(&meta, 1);
		nkv++;
	}
	bytes_put(&b, "GGUF", 4);
	bytes_u32(&b, o->version);
	bytes_u64(&b, o->n_tensors ? o->n_tensors : (uint64_t)n);
	bytes_u64(&b, (uint64_t)nkv);
	bytes_put(&b, meta.p, meta.n);
	for (int i = 0; i < n; i++) {
		gstr(&b, ts[i].name);
		bytes_u32(&b, ts[i].nd);
		for (uint32_t d = 0; d < ts[i].nd; d++)
			bytes_u64(&b, ts[i].ne[d]);
		bytes_u32(&b, ts[i].type);
		if (!ts[i].fixed_offset)
			ts[i].offset = off;
		bytes_u64(&b, ts[i].offset);
		off = (off + ts[i].data.n + align - 1) / align * align;
	}
	bytes_pad(&b, align);
	for (int i = 0; i < n; i++) {
		bytes_pad(&b, align);
		bytes_put(&b, ts[i].data.p, ts[i].data.n);
	}
	p = fx_write(name, &b);
	bytes_free(&b);
	bytes_free(&meta);
	for (int i = 0; i < n; i++)
		bytes_free(&ts[i].data);
	return p;
}

/* ---- tensors with known zeros; each returns its non-zero count ---- */

/* element e: e % 3 == 0 non-zero, e % 3 == 1 negative zero, else +0 */
static uint64_t fill_float(struct gt *t, int width, uint32_t one, uint32_t negzero, uint64_t n)
{
	uint64_t nnz = 0;

	for (uint64_t e = 0; e < n; e++) {
		uint32_t v = e % 3 == 0 ? one : e % 3 == 1 ? negzero : 0;

		nnz += e % 3 == 0;
		if (width == 4)
			bytes_u32(&t->data, v);
		else
			bytes_u16(&t->data, (uint16_t)v);
	}
	return nnz;
}

static uint16_t q8_scale(uint64_t blk)
{
	return blk == 2 ? 0x0000 : blk == 5 ? 0x8000 : 0x3c00; /* +0, -0, 1.0 */
}

static int8_t q8_code(uint64_t j)
{
	return j % 4 == 0 ? 0 : (int8_t)(j + 1 - 16);
}

static uint64_t fill_q8(struct gt *t, uint64_t blocks)
{
	uint64_t nnz = 0;

	for (uint64_t k = 0; k < blocks; k++) {
		bytes_u16(&t->data, q8_scale(k));
		for (uint64_t j = 0; j < 32; j++) {
			bytes_u8(&t->data, (uint8_t)q8_code(j));
			nnz += (q8_scale(k) & 0x7fff) && q8_code(j) != 0;
		}
	}
	return nnz;
}

static uint16_t q4_scale(uint64_t blk)
{
	return blk == 1 ? 0x0000 : 0x4000; /* 2.0 */
}

static unsigned q4_code(uint64_t blk, uint64_t j)
{
	return (unsigned)((j % 5 == 0 ? 8 : (j + blk) % 16) & 0xf);
}

static uint64_t fill_q4(struct gt *t, uint64_t blocks)
{
	uint64_t nnz = 0;

	for (uint64_t k = 0; k < blocks; k++) {
		bytes_u16(&t->data, q4_scale(k));
		for (uint64_t j = 0; j < 16; j++)
			bytes_u8(&t->data, (uint8_t)(q4_code(k, j) | q4_code(k, j + 16) << 4));
		for (uint64_t j = 0; j < 32; j++)
			nnz += q4_scale(k) && q4_code(k, j) != 8;
	}
	return nnz;
}

static void fill_bytes(struct gt *t, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		bytes_u8(&t->data, v);
}

/* The model of the main GGUF test: every analysed type, a Q4_K, a norm. */
static char *main_model(uint32_t version, uint64_t nnz[5], uint64_t *total_nnz)
{
	struct gt ts[7] = {
		{.name = "f32.weight", .type = T_F32, .nd = 2, .ne = {32, 4}},
		{.name = "f16.weight", .type = T_F16, .nd = 2, .ne = {32, 4}},
		{.name = "bf16.weight", .type = T_BF16, .nd = 2, .ne = {32, 4}},
		{.name = "q8.weight", .type = T_Q8_0, .nd = 2, .ne = {64, 4}},
		{.name = "q4.weight", .type = T_Q4_0, .nd = 2, .ne = {64, 2}},
		{.name = "q4k.weight", .type = T_Q4_K, .nd = 2, .ne = {256, 2}},
		{.name = "output_norm", .type = T_F32, .nd = 1, .ne = {32}},
	};
	struct gguf_opts o = {.version = version, .all_values = 1};

	nnz[0] = fill_float(&ts[0], 4, 0x3f800000u, 0x80000000u, 128);
	nnz[1] = fill_float(&ts[1], 2, 0x3c00, 0x8000, 128);
	nnz[2] = fill_float(&ts[2], 2, 0x3f80, 0x8000, 128);
	nnz[3] = fill_q8(&ts[3], 8);
	nnz[4] = fill_q4(&ts[4], 4);
	fill_bytes(&ts[5], 2 * 144, 0x11);
	for (int i = 0; i < 32; i++)
		bytes_u32(&ts[6].data, 0x3f800000u);
	*total_nnz = nnz[0] + nnz[1] + nnz[2] + nnz[3] + nnz[4] + 512 + 32;
	return gguf_file(version == 3 ? "main3.gguf" : "main2.gguf", &o, ts, 7);
}

static void test_gguf_types(void **state)
{
	static const char *const names[5] = {"f32.weight", "f16.weight", "bf16.weight",
					     "q8.weight", "q4.weight"};
	(void)state;
	for (uint32_t v = 2; v <= 3; v++) {
		uint64_t nnz[5], total;
		char *p = main_model(v, nnz, &total);
		struct spp_analysis *a = fx_analyze(p);
		int q4k;

		assert_string_equal(a->model->format, "gguf");
		assert_int_equal(a->model->ntensors, 7);
		assert_int_equal(a->nlayers, 6); /* the norm is 1-D */
		for (int i = 0; i < 5; i++) {
			int l = fx_layer(a, names[i]);

			assert_int_equal(a->stats[l].unsupported, 0);
			assert_int_equal(a->stats[l].counts.nnz, nnz[i]);
		}
		/* ne = [in, out] is a 2-D weight [out, in] */
		assert_int_equal(a->layers[fx_layer(a, "q8.weight")].view.m, 4);
		assert_int_equal(a->layers[fx_layer(a, "q8.weight")].view.k, 64);
		assert_int_equal(a->model->tensors[0].shape[0], 4);
		assert_int_equal(a->model->tensors[0].shape[1], 32);
		q4k = fx_layer(a, "q4k.weight");
		assert_int_equal(a->stats[q4k].unsupported, 1);
		assert_non_null(strstr(a->stats[q4k].reason, "Q4_K"));
		assert_int_equal(a->stats[q4k].numel, 512);
		/* totals count the Q4_K weights (as non-zeros, with a warning) */
		assert_int_equal(a->totals.params, 128 * 3 + 256 + 128 + 512 + 32);
		assert_int_equal(a->totals.nnz, total);
		assert_true(a->nwarnings >= 1);
		assert_non_null(strstr(a->warnings[0].message, "no zero test"));
		assert_int_equal(a->warnings[0].code, SPP_WARN_DTYPE_NO_ZERO_TEST);
		spp_analysis_destroy(a);
		free(p);
	}
}

/* Q8_0 and Q4_0 decode to d * code for the kernels. */
static void test_gguf_decode(void **state)
{
	uint64_t nnz[5], total;
	char *p = main_model(3, nnz, &total);
	struct spp_analysis *a = fx_analyze(p);
	struct spp_error err = {0};
	float *w = malloc(4 * 64 * sizeof(*w));

	(void)state;
	assert_non_null(w);
	assert_int_equal(spp_layer_decode(&a->layers[fx_layer(a, "q8.weight")], w, &err), 0);
	for (uint64_t e = 0; e < 256; e++)
		assert_true(w[e] == spp_f16_to_f32(q8_scale(e / 32)) * (float)q8_code(e % 32));
	assert_int_equal(spp_layer_decode(&a->layers[fx_layer(a, "q4.weight")], w, &err), 0);
	for (uint64_t e = 0; e < 128; e++)
		assert_true(w[e] == spp_f16_to_f32(q4_scale(e / 32)) *
					   (float)((int)q4_code(e / 32, e % 32) - 8));
	assert_int_equal(spp_layer_decode(&a->layers[fx_layer(a, "q4k.weight")], w, &err),
			 SPP_E_UNSUPPORTED);
	free(w);
	spp_analysis_destroy(a);
	free(p);
}

/* A custom general.alignment moves the data section and every offset. */
static void test_gguf_alignment(void **state)
{
	struct gt ts[3] = {
		{.name = "a.weight", .type = T_F32, .nd = 2, .ne = {32, 3}},
		{.name = "b.weight", .type = T_Q8_0, .nd = 2, .ne = {32, 1}},
		{.name = "c.weight", .type = T_F16, .nd = 4, .ne = {3, 3, 2, 5}},
	};
	struct gguf_opts o = {.version = 2, .align = 64};
	uint64_t na = fill_float(&ts[0], 4, 0x40000000u, 0, 96);
	uint64_t nb = fill_q8(&ts[1], 1);
	uint64_t nc = fill_float(&ts[2], 2, 0x3c00, 0x8000, 90);
	char *p = gguf_file("align64.gguf", &o, ts, 3);
	struct spp_analysis *a = fx_analyze(p);
	int c;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(a->model->tensors[i].offset % 64, 0);
	assert_int_equal(a->stats[fx_layer(a, "a.weight")].counts.nnz, na);
	assert_int_equal(a->stats[fx_layer(a, "b.weight")].counts.nnz, nb);
	c = fx_layer(a, "c.weight");
	assert_int_equal(a->stats[c].counts.nnz, nc);
	/* ne [kw, kh, c, o] is OIHW [5, 2, 3, 3]: a conv2d of M 5, K 18 */
	assert_int_equal(a->layers[c].op, SPP_OP_CONV2D);
	assert_int_equal(a->layers[c].view.m, 5);
	assert_int_equal(a->layers[c].view.k, 18);
	spp_analysis_destroy(a);
	free(p);
}

/* The report of a model with an unsupported layer: JSON, text, reload. */
static void test_gguf_report(void **state)
{
	uint64_t nnz[5], total;
	char *p = main_model(3, nnz, &total), *out = fx_path("r.json");
	const char *json_args[] = {"analyze", p, "--static", "-o", out, "--quiet", NULL};
	const char *text_args[] = {"report", out, NULL};
	const char *csv_args[] = {"report", out, "--format", "csv", NULL};
	struct harness_run r;
	cJSON *root, *layers, *l, *q4k = NULL;
	char *text;

	(void)state;
	assert_int_equal(harness_spprof(&r, json_args), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(out, NULL);
	assert_non_null(text);
	root = cJSON_Parse(text);
	assert_non_null(root);
	layers = cJSON_GetObjectItem(root, "layers");
	cJSON_ArrayForEach(l, layers) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(l, "name"));
		if (strcmp(name, "q4k.weight") == 0)
			q4k = l;
		else
			assert_null(cJSON_GetObjectItem(l, "status"));
	}
	assert_non_null(q4k);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(q4k, "status")),
			    "unsupported dtype");
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(q4k, "reason")), "Q4_K"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(q4k, "nnz")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(q4k, "sparsity")));
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(q4k, "numel")), 512);
	cJSON_Delete(root);
	free(text);
	/* the saved report loads back and renders */
	assert_int_equal(harness_spprof(&r, text_args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "unsupported dtype"));
	harness_run_free(&r);
	assert_int_equal(harness_spprof(&r, csv_args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "unsupported dtype"));
	harness_run_free(&r);
	free(out);
	free(p);
}

/* One malformed GGUF per rule, each exit 2 with one line. */
static void test_gguf_malformed(void **state)
{
	struct gguf_opts o = {.version = 3};
	struct bytes b = {0};
	char *p;

	(void)state;
#define ONE(file, want, opts, ...)                                                      \
	do {                                                                           \
		struct gt t_[] = {__VA_ARGS__};                                        \
		struct gguf_opts o_ = opts;                                            \
		for (size_t i_ = 0; i_ < sizeof(t_) / sizeof(t_[0]); i_++)             \
			if (!t_[i_].data.n)                                            \
				fill_bytes(&t_[i_], 128, 1);                           \
		p = gguf_file(file, &o_, t_, (int)(sizeof(t_) / sizeof(t_[0])));       \
		fx_expect_bad(p, want);                                                \
		free(p);                                                               \
	} while (0)
	ONE("v1.gguf", "version 1", ((struct gguf_opts){.version = 1}),
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
	ONE("v4.gguf", "version 4", ((struct gguf_opts){.version = 4}),
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
	ONE("count.gguf", "more tensors", ((struct gguf_opts){.version = 3, .n_tensors = 1ull << 40}),
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
	ONE("range.gguf", "runs past", o,
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 8}});
	ONE("offset.gguf", "runs past", o,
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}, .offset = 1ull << 40, .fixed_offset = 1});
	ONE("misaligned.gguf", "alignment", o,
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 2}, .offset = 4, .fixed_offset = 1});
	ONE("dims.gguf", "overflows", o,
	    {.name = "w", .type = T_F32, .nd = 3, .ne = {1ull << 40, 1ull << 40, 4}});
	ONE("rank.gguf", "dimensions", o,
	    {.name = "w", .type = T_F32, .nd = 5, .ne = {1, 1, 1, 1, 1}});
	ONE("type.gguf", "unknown ggml type id 4", o,
	    {.name = "w", .type = 4, .nd = 2, .ne = {8, 4}});
	ONE("type99.gguf", "unknown ggml type id 99", o,
	    {.name = "w", .type = 99, .nd = 2, .ne = {8, 4}});
	ONE("blocks.gguf", "blocks", o,
	    {.name = "w", .type = T_Q8_0, .nd = 2, .ne = {48, 1}});
	ONE("deep.gguf", "nested", ((struct gguf_opts){.version = 3, .depth = 12}),
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
	ONE("align48.gguf", "power of two", ((struct gguf_opts){.version = 3, .align = 48}),
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
	ONE("overlap.gguf", "overlap", o,
	    {.name = "a", .type = T_F32, .nd = 2, .ne = {8, 4}},
	    {.name = "b", .type = T_F32, .nd = 2, .ne = {8, 4}, .offset = 32, .fixed_offset = 1});
	ONE("dup.gguf", "twice", o,
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}},
	    {.name = "w", .type = T_F32, .nd = 2, .ne = {8, 4}});
#undef ONE
	/* hand-made headers: truncation, a string past the end, a bad value type */
	bytes_put(&b, "GGUF", 4), bytes_u32(&b, 3), bytes_u64(&b, 0);
	p = fx_write("trunc.gguf", &b);
	fx_expect_bad(p, "needed");
	free(p);
	bytes_u64(&b, 1), gstr(&b, "k"), bytes_u32(&b, 8), bytes_u64(&b, 1000);
	p = fx_write("string.gguf", &b);
	fx_expect_bad(p, "metadata string");
	free(p);
	b.n = 16;
	bytes_u64(&b, 1), gstr(&b, "k"), bytes_u32(&b, 13), bytes_u64(&b, 0);
	p = fx_write("vtype.gguf", &b);
	fx_expect_bad(p, "value type 13");
	free(p);
	bytes_free(&b);
}

/* Matrix Market and DLMC .smtx: in test_formats_mtx.c */
void test_mtx(void **state);
void test_mtx_malformed(void **state);
void test_smtx_dlmc(void **state);
void test_smtx_malformed(void **state);
void test_unknown_format(void **state);

int main(void)
{
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_gguf_types),
		cmocka_unit_test(test_gguf_decode),
		cmocka_unit_test(test_gguf_alignment),
		cmocka_unit_test(test_gguf_report),
		cmocka_unit_test(test_gguf_malformed),
		cmocka_unit_test(test_mtx),
		cmocka_unit_test(test_mtx_malformed),
		cmocka_unit_test(test_smtx_dlmc),
		cmocka_unit_test(test_smtx_malformed),
		cmocka_unit_test(test_unknown_format),
	};
	size_t nnpy = 0;
	const struct CMUnitTest *npy = formats_npy_tests(&nnpy);
	int fails;

	fails = _cmocka_run_group_tests("formats", own, sizeof(own) / sizeof(own[0]), NULL, NULL);
	fails += _cmocka_run_group_tests("formats_npy", npy, nnpy, NULL, NULL);
	fx_cleanup();
	return fails ? 1 : 0;
}
