/*
 * spprof synth: the spec parser, and files written by spp_synth_write()
 * read back twice: with the test's own minimal safetensors reader (which
 * checks the layout byte by byte and maps conv elements with its own OIHW
 * arithmetic, not the library's view; synth_reader.c). Written files through
 * spp_model_open(), the command line and the sample models are in
 * test_synth_files.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "base/safe_text.h"
#include "profiler/loaders.h"
#include "profiler/synth.h"
#include "test/harness.h"
#include "test/profiler/synth_reader.h"

static void test_parse_valid(void **state)
{
	static const struct {
		const char *spec, *name;
		int ndim;
		int64_t shape[4];
		enum spp_synth_pattern pattern;
		int a, b; /* nm N, M or block B */
		double sparsity;
		enum spp_dtype dtype;
	} cases[] = {
		{"fc1=3072x768:nm2_4:0.5:F16", "fc1", 2, {3072, 768}, SPP_SYNTH_NM, 2, 4, 0.5, SPP_DTYPE_F16},
		{"conv=64x32x3x3:unstructured:0.9", "conv", 4, {64, 32, 3, 3}, SPP_SYNTH_UNSTRUCTURED, 0, 0, 0.9, SPP_DTYPE_F32},
		{"c1=16x8x5:block4:0.25:bf16", "c1", 3, {16, 8, 5}, SPP_SYNTH_BLOCK, 4, 0, 0.25, SPP_DTYPE_BF16},
		{"ch=10x20:channel:0.3:I8", "ch", 2, {10, 20}, SPP_SYNTH_CHANNEL, 0, 0, 0.3, SPP_DTYPE_I8},
		{"bias=7:dense:0:F64", "bias", 1, {7}, SPP_SYNTH_DENSE, 0, 0, 0, SPP_DTYPE_F64},
		{"v=100:unstructured:1:U8", "v", 1, {100}, SPP_SYNTH_UNSTRUCTURED, 0, 0, 1, SPP_DTYPE_U8},
		{"a=b:c=2x2:dense:0", "a=b:c", 2, {2, 2}, SPP_SYNTH_DENSE, 0, 0, 0, SPP_DTYPE_F32},
		{"n13=6x9:nm1_3:0.67", "n13", 2, {6, 9}, SPP_SYNTH_NM, 1, 3, 2.0 / 3.0, SPP_DTYPE_F32},
		{"n44=4x4:nm4_4:0:I16", "n44", 2, {4, 4}, SPP_SYNTH_NM, 4, 4, 0, SPP_DTYPE_I16},
		{"n64=1x64:nm1_64:0.984375:I32", "n64", 2, {1, 64}, SPP_SYNTH_NM, 1, 64, 0.984375, SPP_DTYPE_I32},
		{"b1=3x3:block1:1e-1:I64", "b1", 2, {3, 3}, SPP_SYNTH_BLOCK, 1, 0, 0.1, SPP_DTYPE_I64},
		{"f8=8x8:unstructured:.5:F8_E4M3", "f8", 2, {8, 8}, SPP_SYNTH_UNSTRUCTURED, 0, 0, 0.5, SPP_DTYPE_F8_E4M3},
		{"e5=1x1x1x1:dense:0:F8_E5M2", "e5", 4, {1, 1, 1, 1}, SPP_SYNTH_DENSE, 0, 0, 0, SPP_DTYPE_F8_E5M2},
		{"u=5x5:channel:0.0:U16", "u", 2, {5, 5}, SPP_SYNTH_CHANNEL, 0, 0, 0, SPP_DTYPE_U16},
		{"w=5x5:unstructured:0.5:U32", "w", 2, {5, 5}, SPP_SYNTH_UNSTRUCTURED, 0, 0, 0.5, SPP_DTYPE_U32},
		{"y=5x5:unstructured:0.5:U64", "y", 2, {5, 5}, SPP_SYNTH_UNSTRUCTURED, 0, 0, 0.5, SPP_DTYPE_U64},
		{"big=4294967296x2:dense:0:F32", "big", 2, {4294967296LL, 2}, SPP_SYNTH_DENSE, 0, 0, 0, SPP_DTYPE_F32},
	};
	char long_name[300];
	struct spp_synth_layer l;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		l = parse_ok(cases[c].spec);
		assert_string_equal(l.name, cases[c].name);
		assert_int_equal(l.ndim, cases[c].ndim);
		for (int d = 0; d < l.ndim; d++)
			assert_int_equal(l.shape[d], cases[c].shape[d]);
		assert_int_equal(l.pattern, cases[c].pattern);
		if (l.pattern == SPP_SYNTH_NM) {
			assert_int_equal(l.nm_n, cases[c].a);
			assert_int_equal(l.nm_m, cases[c].b);
		}
		if (l.pattern == SPP_SYNTH_BLOCK)
			assert_int_equal(l.block, cases[c].a);
		assert_true(fabs(l.sparsity - cases[c].sparsity) < 1e-12);
		assert_int_equal(l.dtype, cases[c].dtype);
	}
	/* the longest name: 255 bytes */
	memset(long_name, 'n', 255);
	strcpy(long_name + 255, "=2x2:dense:0");
	l = parse_ok(long_name);
	assert_int_equal(strlen(l.name), 255);
}

static void test_parse_invalid(void **state)
{
	static const char *const specs[] = {
		"", "noequals", "=4x4:dense:0", "x=4x4", "x=4x4:dense",
		"x=4x4:dense:0:F32:extra", "x=:dense:0", "x=0x4:dense:0",
		"x=4x0:dense:0", "x=-4x4:dense:0", "x=4xx4:dense:0", "x=4x:dense:0",
		"x=x4:dense:0", "x=ax4:dense:0", "x= 4x4:dense:0", "x=4x4x4x4x4:dense:0",
		"x=9223372036854775808x1:dense:0",
		"x=4294967296x4294967296:dense:0",
		"x=2305843009213693952x1:dense:0:F32", /* 2^63 bytes */
		"x=4x4:sparse:0.5", "x=4x4::0.5", "x=4x4:Dense:0",
		"x=4x4:nm0_4:1", "x=4x4:nm3_2:0", "x=4x4:nm2_65:0.97", "x=4x4:nm2:0.5",
		"x=4x4:nm_4:0.5", "x=4x4:nm2_:0.5", "x=4x4:nm-2_4:0.5", "x=4x4:nm2_4x:0.5",
		"x=4x4:nm2_4:0.4", "x=4x4:nm2_4:0.6", "x=4x4:nm2_4:0", "x=4x4:nm1_3:0.6",
		"x=4x4:block0:0.5", "x=4x4:block:0.5", "x=4x4:blockx:0.5",
		"x=4x4:block-1:0.5", "x=4x4:block2000000:0.5",
		"x=4x4:unstructured:1.5", "x=4x4:unstructured:-0.1",
		"x=4x4:unstructured:abc", "x=4x4:unstructured:nan",
		"x=4x4:unstructured:inf", "x=4x4:unstructured:", "x=4x4:unstructured:0x1p-1",
		"x=4x4:unstructured:0.5.5", "x=4x4:unstructured:1e999",
		"x=4x4:dense:0.5", "x=4x4:dense:1",
		"x=4x4:dense:0:F4", "x=4x4:dense:0:BOOL", "x=4x4:dense:0:C64",
		"x=4x4:dense:0:F8_E8M0", "x=4x4:dense:0:F6_E2M3", "x=4x4:dense:0:Q4_0",
		"x=4x4:dense:0:", "x=16:nm2_4:0.5", "x=16:channel:0.5", "x=16:block2:0.5",
		"__metadata__=4x4:dense:0", "\xff\xfe=4x4:dense:0", "a\tb=4x4:dense:0",
		"\xc0\xaf=4x4:dense:0", "\xed\xa0\x80=4x4:dense:0",
	};
	char long_name[300];
	struct spp_synth_layer l, sentinel;
	struct spp_error err;

	(void)state;
	memset(&sentinel, 0x5a, sizeof(sentinel));
	for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
		char quoted[128];

		l = sentinel;
		memset(&err, 0, sizeof(err));
		if (spp_synth_parse_layer(specs[c], &l, &err) != SPP_E_USAGE)
			fail_msg("'%s' was not refused", specs[c]);
		assert_int_equal(err.code, SPP_E_USAGE);
		/* the message quotes the spec and leaves the output alone */
		/* as every message shows a name: escaped (base/safe_text.h) */
		quoted[0] = '\'';
		spp_safe_copy(quoted + 1, sizeof(quoted) - 2, specs[c], (size_t)-1);
		strcat(quoted, "'");
		if (!strstr(err.msg, quoted))
			fail_msg("message for '%s' does not quote it: %s", specs[c], err.msg);
		assert_memory_equal(&l, &sentinel, sizeof(l));
	}
	/* a 256-byte name */
	memset(long_name, 'n', 256);
	strcpy(long_name + 256, "=2x2:dense:0");
	assert_int_equal(spp_synth_parse_layer(long_name, &l, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "256 bytes"));
}

/* Every pattern on linear, conv1d and conv2d shapes with ragged edges. */
static void test_patterns(void **state)
{
	static const char *const specs[] = {
		"dense=7x13:dense:0",
		"u0=9x11:unstructured:0",
		"u10=9x11:unstructured:0.1",
		"u50=33x17:unstructured:0.5",
		"u90=33x17:unstructured:0.9",
		"u100=5x6:unstructured:1",
		"nm24=8x10:nm2_4:0.5",
		"nm13=5x7:nm1_3:0.667",
		"nm48=3x20:nm4_8:0.5",
		"nm11=3x5:nm1_1:0",
		"b4=10x13:block4:0.75",
		"b3=7x7:block3:0.4",
		"b1=6x6:block1:0.5",
		"b64=5x5:block64:1",
		"ch=17x9:channel:0.5",
		"ch1=4x4:channel:1",
		"cu=12x5x3x3:unstructured:0.8",
		"cnm=16x8x3x3:nm2_4:0.5",
		"cnm6=6x6x1x2:nm2_4:0.5",
		"cb=12x6x3x3:block4:0.5",
		"cch=20x3x2x2:channel:0.25",
		"c1u=9x7x5:unstructured:0.3",
		"c1nm=8x4x3:nm1_4:0.75",
		"vec=37:unstructured:0.5",
		"vecd=5:dense:0",
	};
	enum { N = sizeof(specs) / sizeof(specs[0]) };
	struct spp_synth_layer layers[N];
	struct st_file f;
	char *dir = harness_tmpdir(), *path;

	(void)state;
	assert_non_null(dir);
	path = write_specs(dir, "p.safetensors", specs, N, 7, layers);
	st_read(path, &f);
	assert_int_equal(f.n, N);
	for (int i = 0; i < N; i++) {
		assert_string_equal(f.t[i].name, layers[i].name);
		check_layer(&f.t[i], &layers[i]);
	}
	/* hand-checked figures for a few, so the checks above cannot agree by accident */
	assert_int_equal(count_zeros(st_get(&f, "u90")), 505);  /* round(0.9 * 561) */
	assert_int_equal(count_zeros(st_get(&f, "nm24")), 32);  /* 8 rows x (2 + 2 + 0 in the ragged pair) */
	assert_int_equal(count_zeros(st_get(&f, "cnm")), 576);  /* 16 x 72 / 2 */
	assert_int_equal(count_zeros(st_get(&f, "ch")), 9 * 9); /* round(8.5) = 9 rows */
	assert_int_equal(count_zeros(st_get(&f, "cu")), 432);   /* round(0.8 * 540) */
	assert_int_equal(count_zeros(st_get(&f, "b64")), 25);   /* one ragged block, all zero */
	st_free(&f);
	free(path);
	harness_rmtree(dir);
}

/* N:M runs along the GEMM K (kh, kw, c), not along memory. */
static void test_conv_nm_view(void **state)
{
	static const char *const specs[] = {
		"conv=16x8x3x3:nm2_4:0.5",
		"c1d=8x16x3:nm2_4:0.5",
	};
	struct spp_synth_layer layers[2];
	struct st_file f;
	char *dir = harness_tmpdir(), *path;

	(void)state;
	path = write_specs(dir, "c.safetensors", specs, 2, 11, layers);
	st_read(path, &f);
	for (int t = 0; t < 2; t++) {
		const struct st_tensor *w = &f.t[t];
		int64_t bad_raw = 0;

		check_nm(w, 2, 4);
		/* raw storage order, groups of 4 consecutive elements */
		for (uint64_t g = 0; g < w->numel; g += 4) {
			int nz = 0;
			for (uint64_t k = g; k < g + 4; k++)
				nz += !is_zero(w->dtype, w->data, k);
			bad_raw += nz > 2;
		}
		assert_true(bad_raw > 0);
	}
	st_free(&f);
	free(path);
	harness_rmtree(dir);
}

/* Element k decoded (FP8 by hand, so NaN and Inf read as out of range). */
static double value_at(const struct st_tensor *t, uint64_t k)
{
	union {
		uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32;
		int32_t i32; uint64_t u64; int64_t i64; float f; double d;
	} x;
	int sign;

	memcpy(&x, t->data + k * (uint64_t)elem_size(t->dtype), (size_t)elem_size(t->dtype));
	sign = x.u8 & 0x80 ? -1 : 1;
	switch (t->dtype) {
	case SPP_DTYPE_F32: return x.f;
	case SPP_DTYPE_F64: return x.d;
	case SPP_DTYPE_F16: return spp_f16_to_f32(x.u16);
	case SPP_DTYPE_BF16: return spp_bf16_to_f32(x.u16);
	case SPP_DTYPE_F8_E4M3: return sign * ldexp(1 + (x.u8 & 7) / 8.0, ((x.u8 >> 3) & 15) - 7);
	case SPP_DTYPE_F8_E5M2: return sign * ldexp(1 + (x.u8 & 3) / 4.0, ((x.u8 >> 2) & 31) - 15);
	case SPP_DTYPE_I8: return x.i8;
	case SPP_DTYPE_I16: return x.i16;
	case SPP_DTYPE_I32: return x.i32;
	case SPP_DTYPE_I64: return (double)x.i64;
	case SPP_DTYPE_U8: return x.u8;
	case SPP_DTYPE_U16: return x.u16;
	case SPP_DTYPE_U32: return x.u32;
	case SPP_DTYPE_U64: return (double)x.u64;
	default: fail_msg("dtype %s", spp_dtype_name(t->dtype)); return 0;
	}
}

/* Values: every dtype, no exact zeros outside the pattern, magnitudes. */
static void test_dtypes(void **state)
{
	static const char *const dtypes[] = {
		"F32", "F16", "BF16", "F64", "F8_E4M3", "F8_E5M2", "I8", "I16",
		"I32", "I64", "U8", "U16", "U32", "U64",
	};
	enum { N = sizeof(dtypes) / sizeof(dtypes[0]) };
	struct spp_synth_layer layers[2 * N];
	char specs_buf[2 * N][64];
	const char *specs[2 * N];
	struct st_file f;
	char *dir = harness_tmpdir(), *path;

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(specs_buf[2 * i], 64, "d%s=64x64:dense:0:%s", dtypes[i], dtypes[i]);
		snprintf(specs_buf[2 * i + 1], 64, "u%s=13x17:unstructured:0.5:%s",
			 dtypes[i], dtypes[i]);
		specs[2 * i] = specs_buf[2 * i];
		specs[2 * i + 1] = specs_buf[2 * i + 1];
	}
	path = write_specs(dir, "d.safetensors", specs, 2 * N, 5, layers);
	st_read(path, &f);
	for (int i = 0; i < 2 * N; i++) {
		const struct st_tensor *t = &f.t[i];
		int negatives = 0;

		check_layer(t, &layers[i]);
		for (uint64_t k = 0; k < t->numel; k++) {
			double v;

			if (is_zero(t->dtype, t->data, k))
				continue;
			v = value_at(t, k);
			negatives += v < 0;
			if (spp_dtype_info(t->dtype)->is_float)
				assert_true(fabs(v) >= 0.0499 && fabs(v) <= 1.0);
			else
				assert_true(v != 0 && v != -128); /* I8: symmetric range */
		}
		/* signed types get both signs, unsigned only positive */
		if (t->dtype == SPP_DTYPE_U8 || t->dtype == SPP_DTYPE_U16 ||
		    t->dtype == SPP_DTYPE_U32 || t->dtype == SPP_DTYPE_U64)
			assert_int_equal(negatives, 0);
		else
			assert_true(negatives > 0);
	}
	st_free(&f);
	free(path);
	harness_rmtree(dir);
}

static void test_header(void **state)
{
	static const char *const specs[] = {
		"a.weight=4x6:nm2_4:0.5:F16", "a.bias=4:dense:0:F16", "b=3x2x2x2:dense:0:BF16",
	};
	struct spp_synth_layer layers[3];
	struct st_file f;
	char *dir = harness_tmpdir(), *path;
	cJSON *v;

	(void)state;
	path = write_specs(dir, "h.safetensors", specs, 3, 18446744073709551615u, layers);
	st_read(path, &f);
	assert_non_null(f.meta);
	v = cJSON_GetObjectItemCaseSensitive(f.meta, "generator");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "spprof synth");
	v = cJSON_GetObjectItemCaseSensitive(f.meta, "seed");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "18446744073709551615");
	v = cJSON_GetObjectItemCaseSensitive(f.meta, "spec.a.weight");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "4x6:nm2_4:0.5:F16");
	v = cJSON_GetObjectItemCaseSensitive(f.meta, "spec.b");
	assert_string_equal(v->valuestring, "3x2x2x2:dense:0:BF16");
	/* every metadata value is a string */
	cJSON_ArrayForEach(v, f.meta)
		assert_true(cJSON_IsString(v));
	assert_int_equal(f.n, 3);
	assert_string_equal(f.t[0].name, "a.weight");
	assert_string_equal(f.t[1].name, "a.bias");
	assert_int_equal(f.t[1].ndim, 1);
	/* 48 + 8 + 48 bytes of data after the header */
	assert_int_equal(f.t[2].data + 48 - (const unsigned char *)f.bytes, f.len);
	st_free(&f);
	free(path);
	harness_rmtree(dir);
}

static void test_determinism(void **state)
{
	static const char *const s1[] = {
		"a=4x4:unstructured:0.5", "b=40x24:unstructured:0.5", "c=8x4x3x3:nm2_4:0.5",
	};
	static const char *const s2[] = {
		"a=64x64:block4:0.5", "b=40x24:unstructured:0.5", "c=8x4x3x3:nm2_4:0.5",
	};
	static const char *const s3[] = {
		"a=4x4:unstructured:0.5", "b=40x24:unstructured:0.5:F16",
	};
	struct spp_synth_layer layers[3];
	char *dir = harness_tmpdir(), *p1, *p2, *p3, *p4, *p5, *b1, *b2, *b3;
	size_t n1, n2, n3;
	struct st_file f1, f4, f5;

	(void)state;
	p1 = write_specs(dir, "1.safetensors", s1, 3, 42, layers);
	p2 = write_specs(dir, "2.safetensors", s1, 3, 42, layers);
	p3 = write_specs(dir, "3.safetensors", s1, 3, 43, layers);
	b1 = harness_slurp(p1, &n1);
	b2 = harness_slurp(p2, &n2);
	b3 = harness_slurp(p3, &n3);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	assert_int_equal(n1, n3);
	assert_memory_not_equal(b1, b3, n1);

	/* a layer does not depend on the size of the layers before it */
	p4 = write_specs(dir, "4.safetensors", s2, 3, 42, layers);
	st_read(p1, &f1);
	st_read(p4, &f4);
	for (int t = 1; t < 3; t++)
		assert_memory_equal(f1.t[t].data, f4.t[t].data,
				    f1.t[t].numel * 4);

	/* changing only the dtype keeps the pattern */
	p5 = write_specs(dir, "5.safetensors", s3, 2, 42, layers);
	st_read(p5, &f5);
	for (uint64_t k = 0; k < 960; k++)
		assert_int_equal(is_zero(SPP_DTYPE_F32, f1.t[1].data, k),
				 is_zero(SPP_DTYPE_F16, f5.t[1].data, k));
	st_free(&f1);
	st_free(&f4);
	st_free(&f5);
	free(b1);
	free(b2);
	free(b3);
	free(p1);
	free(p2);
	free(p3);
	free(p4);
	free(p5);
	harness_rmtree(dir);
}

static void test_atomic_and_refusals(void **state)
{
	struct spp_synth_layer l[2];
	struct spp_error err = {0};
	char *dir = harness_tmpdir();
	char *missing = harness_join(dir, "no/such/m.safetensors");
	char *good = harness_join(dir, "m.safetensors");
	char *sub = harness_join(dir, "sub");
	size_t n;
	char *b;

	(void)state;
	l[0] = parse_ok("x=4x4:dense:0");
	l[1] = parse_ok("x=8x8:dense:0");

	/* a missing folder: SPP_E_OUTPUT naming the path, nothing left */
	assert_int_equal(spp_synth_write(missing, l, 1, 1, &err), SPP_E_OUTPUT);
	assert_non_null(strstr(err.msg, missing));
	assert_false(harness_exists(missing));
	assert_int_equal(harness_count_entries(dir), 0);

	/* duplicate names */
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "'x'"));
	assert_false(harness_exists(good));

	/* nothing to write; a bad layer passed as a struct */
	assert_int_equal(spp_synth_write(good, l, 0, 1, &err), SPP_E_USAGE);
	l[1] = parse_ok("y=8x8:unstructured:0.5");
	l[1].sparsity = NAN;
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_E_USAGE);
	l[1].sparsity = 0.5;
	l[1].shape[1] = 0;
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_E_USAGE);
	l[1].shape[1] = 8;
	l[1].dtype = SPP_DTYPE_C64;
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_E_USAGE);
	l[1].dtype = SPP_DTYPE_F32;
	l[1].ndim = 5;
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_E_USAGE);
	l[1].ndim = 2;
	assert_false(harness_exists(good));
	assert_int_equal(harness_count_entries(dir), 0);

	/* success leaves exactly the file; rewriting replaces it whole */
	assert_int_equal(spp_synth_write(good, l, 2, 1, &err), SPP_OK);
	assert_int_equal(harness_count_entries(dir), 1);
	assert_int_equal(spp_synth_write(good, l, 1, 1, &err), SPP_OK);
	b = harness_slurp(good, &n);
	assert_int_equal(harness_count_entries(dir), 1);
	free(b);

	/* a folder in the way is refused, not renamed over; no temp file */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(spp_synth_write(sub, l, 1, 1, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, sub));
	assert_non_null(strstr(err.msg, "is a directory"));
	assert_int_equal(harness_count_entries(dir), 2);
	free(missing);
	free(good);
	free(sub);
	harness_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_conv_nm_view),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_atomic_and_refusals),
		cmocka_unit_test(test_through_loader),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_sample_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
