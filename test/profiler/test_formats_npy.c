/*
 * The .npy and .npz loaders: npy files of every header version, both
 * orders and several dtypes written by the test, npz archives written with
 * libzip (stored and deflated), malformed files through the binary, and a
 * cross-check against files numpy itself writes (skipped without numpy).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zip.h>

#include "profiler/loaders.h"
#include "test/profiler/formats_fixture.h"
#include "test/harness.h"

const struct CMUnitTest *formats_npy_tests(size_t *n);

/* An npy image: header dict padded so the data starts at a multiple of 64. */
static void npy_image(struct bytes *b, int major, const char *dict, const void *data, size_t n)
{
	size_t pre = major == 1 ? 10 : 12, hl = strlen(dict) + 1;
	size_t pad = (64 - (pre + hl) % 64) % 64;

	bytes_put(b, "\x93NUMPY", 6);
	bytes_u8(b, (uint8_t)major);
	bytes_u8(b, 0);
	if (major == 1)
		bytes_u16(b, (uint16_t)(hl + pad));
	else
		bytes_u32(b, (uint32_t)(hl + pad));
	bytes_put(b, dict, strlen(dict));
	for (size_t i = 0; i < pad; i++)
		bytes_u8(b, ' ');
	bytes_u8(b, '\n');
	bytes_put(b, data, n);
}

static char *npy_file(const char *name, int major, const char *dict, const void *data, size_t n)
{
	struct bytes b = {0};
	char *p;

	npy_image(&b, major, dict, data, n);
	p = fx_write(name, &b);
	bytes_free(&b);
	return p;
}

/* 6 x 8 matrix: row 2 all zero, column 5 all zero, and every third element */
static int nonzero_at(int i, int j)
{
	return i != 2 && j != 5 && (i * 8 + j) % 3 != 0;
}

static void matrix_f32(float *m, int fortran)
{
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++)
			m[fortran ? j * 6 + i : i * 8 + j] = nonzero_at(i, j) ? (float)(i + j + 1) : 0;
}

static uint64_t matrix_nnz(void)
{
	uint64_t n = 0;

	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++)
			n += (uint64_t)nonzero_at(i, j);
	return n;
}

static void check_matrix(const char *path, const char *name)
{
	struct spp_analysis *a = fx_analyze(path);
	int l = fx_layer(a, name);

	assert_int_equal(a->layers[l].view.m, 6);
	assert_int_equal(a->layers[l].view.k, 8);
	assert_int_equal(a->stats[l].counts.nnz, matrix_nnz());
	assert_int_equal(a->stats[l].counts.zero_rows, 1);
	assert_int_equal(a->stats[l].counts.zero_cols, 1);
	spp_analysis_destroy(a);
}

static void test_npy_versions(void **state)
{
	float m[48];
	char name[16];

	(void)state;
	matrix_f32(m, 0);
	for (int v = 1; v <= 3; v++) {
		char *p;

		snprintf(name, sizeof(name), "v%d.npy", v);
		p = npy_file(name, v, "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 8), }",
			     m, sizeof(m));
		snprintf(name, sizeof(name), "v%d", v);
		check_matrix(p, name);
		free(p);
	}
}

/* Fortran order is transposed on load: the same figures and bytes as C order. */
static void test_npy_fortran(void **state)
{
	float c[48], f[48];
	uint16_t c3[24], f3[24];
	char *pc, *pf, *pc3, *pf3;
	struct spp_analysis *a, *b;

	(void)state;
	matrix_f32(c, 0);
	matrix_f32(f, 1);
	pc = npy_file("c.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 8), }", c, sizeof(c));
	pf = npy_file("f.npy", 1, "{'fortran_order': True, \"shape\": (6,8), 'descr': '<f4'}", f, sizeof(f));
	check_matrix(pf, "f");
	a = fx_analyze(pc);
	b = fx_analyze(pf);
	assert_memory_equal(a->model->tensors[0].data, b->model->tensors[0].data, sizeof(c));
	spp_analysis_destroy(a);
	spp_analysis_destroy(b);
	/* rank 3, [2, 3, 4]: element (i, j, k) at C index i*12 + j*4 + k,
	 * Fortran index i + j*2 + k*6 */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 4; k++) {
				uint16_t v = (i + j + k) % 2 ? (uint16_t)(0x3c00 + i * 12 + j * 4 + k) : 0;
				c3[i * 12 + j * 4 + k] = v;
				f3[i + j * 2 + k * 6] = v;
			}
	pc3 = npy_file("c3.npy", 2, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 4)}", c3, sizeof(c3));
	pf3 = npy_file("f3.npy", 2, "{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3, 4)}", f3, sizeof(f3));
	a = fx_analyze(pc3);
	b = fx_analyze(pf3);
	assert_memory_equal(a->model->tensors[0].data, b->model->tensors[0].data, sizeof(c3));
	assert_int_equal(b->stats[0].counts.nnz, 12);
	spp_analysis_destroy(a);
	spp_analysis_destroy(b);
	free(pc);
	free(pf);
	free(pc3);
	free(pf3);
}

/* Several dtypes, big-endian ones swapped: 2 x 4 with 3 non-zeros. */
static void test_npy_dtypes(void **state)
{
	static const struct {
		const char *descr;
		int size;
		enum spp_dtype dtype;
	} types[] = {
		{"|b1", 1, SPP_DTYPE_BOOL}, {"|u1", 1, SPP_DTYPE_U8}, {"<i8", 8, SPP_DTYPE_I64},
		{"<u2", 2, SPP_DTYPE_U16},  {">f4", 4, SPP_DTYPE_F32}, {">i2", 2, SPP_DTYPE_I16},
		{"<f8", 8, SPP_DTYPE_F64},  {"=i4", 4, SPP_DTYPE_I32}, {"<c8", 8, SPP_DTYPE_C64},
	};
	static const int nz[8] = {1, 0, 0, 1, 0, 0, 0, 1};

	(void)state;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		unsigned char data[64] = {0};
		char dict[128], *p;
		int big = types[t].descr[0] == '>', sz = types[t].size;
		struct spp_analysis *a;

		/* the value 1 in each non-zero slot (the low byte, or the high one big-endian) */
		for (int e = 0; e < 8; e++)
			if (nz[e])
				data[e * sz + (big ? sz - 1 : 0)] = 1;
		snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (2, 4), }",
			 types[t].descr);
		p = npy_file("t.npy", 1, dict, data, (size_t)(8 * sz));
		a = fx_analyze(p);
		assert_int_equal(a->model->tensors[0].dtype, types[t].dtype);
		assert_int_equal(a->stats[0].counts.nnz, 3);
		if (big) /* swapped to little-endian: the 1 is in the low byte */
			assert_int_equal(a->model->tensors[0].data[0], 1);
		spp_analysis_destroy(a);
		free(p);
	}
}

/* An npz written with libzip: one member stored, one deflated. */
static char *npz_file(const char *name, const char *const *members, const struct bytes *images,
		      const int *compress, int n)
{
	char *p = fx_path(name);
	int zerr = 0;
	zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &zerr);

	assert_non_null(z);
	for (int i = 0; i < n; i++) {
		zip_source_t *s = zip_source_buffer(z, images[i].p, images[i].n, 0);
		zip_int64_t idx;

		assert_non_null(s);
		idx = zip_file_add(z, members[i], s, ZIP_FL_ENC_UTF_8);
		assert_true(idx >= 0);
		assert_int_equal(zip_set_file_compression(z, (zip_uint64_t)idx,
							  compress[i] ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0), 0);
	}
	assert_int_equal(zip_close(z), 0);
	return p;
}

static void test_npz(void **state)
{
	float m[48];
	struct bytes img[2] = {{0}, {0}};
	const char *members[2] = {"fc1.weight.npy", "fc2.weight.npy"};
	const int compress[2] = {0, 1};
	char *p;

	(void)state;
	matrix_f32(m, 0);
	npy_image(&img[0], 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 8), }", m, sizeof(m));
	matrix_f32(m, 1);
	npy_image(&img[1], 3, "{'descr': '<f4', 'fortran_order': True, 'shape': (6, 8), }", m, sizeof(m));
	p = npz_file("w.npz", members, img, compress, 2);
	{
		struct spp_analysis *a = fx_analyze(p);

		const struct spp_mapped_file *f = &a->model->files[0];

		assert_string_equal(a->model->format, "npz");
		assert_int_equal(a->model->ntensors, 2);
		/* the stored member read in place, at its offset in the file; the deflated one a copy */
		for (int i = 0; i < 2; i++) {
			const struct spp_tensor *t = &a->model->tensors[i];
			int inside = t->data >= f->base && t->data < f->base + f->size;

			assert_int_equal(inside, strcmp(t->name, "fc1.weight") == 0);
			if (inside)
				assert_true(t->data == f->base + t->offset);
		}
		spp_analysis_destroy(a);
	}
	check_matrix(p, "fc1.weight");
	check_matrix(p, "fc2.weight");
	free(p);
	bytes_free(&img[0]);
	bytes_free(&img[1]);
}

static void test_npy_malformed(void **state)
{
	static const struct {
		int major;
		const char *dict, *want;
		size_t data;
	} cases[] = {
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", "says 32 bytes", 16},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", "says 32 bytes", 40},
		{1, "{'descr': '<f4', 'fortran_order': False}", "all required", 0},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unknown key", 8},
		{1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "twice", 8},
		{1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,)}", "descr '<c16'", 32},
		{1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", "descr '|f4'", 8},
		{1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "True or False", 8},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "trailing comma", 8},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "non-integer", 8},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", "8 dimensions", 4},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904)}", "overflows", 4},
		/* 2^64 + 4: read as 4 when the digits wrapped, and 64 bytes fit (4, 4) */
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551620, 4)}", "more than 2^62", 64},
		{1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "text after", 8},
		{4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "version 4", 8},
	};
	unsigned char zeros[64] = {0};
	char name[32];
	struct bytes b = {0};
	char *p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu.npy", i);
		p = npy_file(name, cases[i].major, cases[i].dict, zeros, cases[i].data);
		fx_expect_bad(p, cases[i].want);
		free(p);
	}
	/* a header length past the end of the file */
	{
		static const char head[] = "\x93NUMPY\x01\x00\xff\x7f{'descr'";
		bytes_put(&b, head, sizeof(head) - 1);
	}
	p = fx_write("trunc.npy", &b);
	fx_expect_bad(p, "runs past the end");
	free(p);
	bytes_free(&b);
	/* a zip signature and then garbage */
	{
		static const char junk[] = "PK\x03\x04 this is not an archive at all";
		bytes_put(&b, junk, sizeof(junk) - 1);
	}
	p = fx_write("bad.npz", &b);
	fx_expect_bad(p, "not a valid zip archive");
	free(p);
	bytes_free(&b);
}

static void test_npz_malformed(void **state)
{
	struct bytes img[2] = {{0}, {0}};
	const char *members[2] = {"ok.npy", "readme.txt"};
	const char *members2[1] = {"bad.npy"};
	const int compress[2] = {1, 0};
	float m[8] = {1};
	char *p;

	(void)state;
	npy_image(&img[0], 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4)}", m, sizeof(m));
	bytes_put(&img[1], "hello", 5);
	p = npz_file("txt.npz", members, img, compress, 2);
	fx_expect_bad(p, "member 'readme.txt': not a .npy");
	free(p);
	bytes_free(&img[1]);
	/* the header lies about the member's size */
	npy_image(&img[1], 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4)}", m, sizeof(m));
	p = npz_file("lie.npz", members2, &img[1], compress, 1);
	fx_expect_bad(p, "member 'bad.npy': npy header says 64 bytes");
	free(p);
	bytes_free(&img[0]);
	bytes_free(&img[1]);
}

/*
 * Many members: the model's tensors and owned buffers grew one slot per
 * member, so loading was quadratic (100k members took more than 25 s under
 * ASan). Not a timed assertion: 50k members would run past the test's
 * timeout if it were so again.
 */
static void test_npz_many_members(void **state)
{
	enum { MEMBERS = 50000 };
	struct bytes img = {0};
	float v[2] = {1, 0};
	char *p = fx_path("many.npz"), name[32];
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	int zerr = 0;
	zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &zerr);

	(void)state;
	assert_non_null(z);
	npy_image(&img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, sizeof(v));
	for (int i = 0; i < MEMBERS; i++) {
		zip_source_t *s = zip_source_buffer(z, img.p, img.n, 0);
		zip_int64_t idx;

		assert_non_null(s);
		snprintf(name, sizeof(name), "t%05d.npy", i);
		idx = zip_file_add(z, name, s, ZIP_FL_ENC_UTF_8);
		assert_true(idx >= 0);
		assert_int_equal(zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_STORE, 0), 0);
	}
	assert_int_equal(zip_close(z), 0);
	if (spp_model_open(p, &m, &err) != SPP_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(m->ntensors, MEMBERS);
	assert_string_equal(m->tensors[0].name, "t00000");
	assert_string_equal(m->tensors[MEMBERS - 1].name, "t49999");
	assert_int_equal(m->tensors[MEMBERS - 1].numel, 2);
	spp_model_destroy(m);
	bytes_free(&img);
	free(p);
}

/* A python3 with numpy: the system one (the one on PATH may be another). */
static const char *numpy_python(void)
{
	static const char *const candidates[] = {"/usr/bin/python3", "/usr/local/bin/python3"};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		const char *args[] = {"-c", "import numpy", NULL};
		struct harness_run r;
		int ok;

		if (!harness_exists(candidates[i]) || harness_exec(&r, candidates[i], args) != 0)
			continue;
		ok = r.status == 0;
		harness_run_free(&r);
		if (ok)
			return candidates[i];
	}
	return NULL;
}

/* numpy writes the files and says what they hold; spprof must agree. */
static const char numpy_script[] =
	"import numpy as np, os, sys\n"
	"d = sys.argv[1]\n"
	"a = np.arange(1, 49, dtype=np.float32).reshape(6, 8)\n"
	"a[a % 3 == 0] = 0; a[2, :] = 0; a[:, 5] = 0; a[4, 1] = -0.0\n"
	"b = np.zeros((64, 40), np.float16); b[np.arange(40), np.arange(40)] = 1.5\n"
	"b[10:20, :] = 0; b[63, 7] = np.float16(1e-7)\n"
	"files = {'c_f4.npy': {'c_f4': a}, 'f_f2.npy': {'f_f2': np.asfortranarray(a.astype(np.float16))},\n"
	"         'be_i2.npy': {'be_i2': a.astype('>i2')}, 'f_b.npy': {'f_b': np.asfortranarray(b)}}\n"
	"for f, arrs in files.items():\n"
	"    np.save(os.path.join(d, f), list(arrs.values())[0])\n"
	"files['s.npz'] = {'x': a, 'y': b}\n"
	"np.savez(os.path.join(d, 's.npz'), **files['s.npz'])\n"
	"files['z.npz'] = {'x': a.T.copy(), 'y': np.asfortranarray(b)}\n"
	"np.savez_compressed(os.path.join(d, 'z.npz'), **files['z.npz'])\n"
	"for f, arrs in files.items():\n"
	"    for n, v in arrs.items():\n"
	"        z = v == 0\n"
	"        print(f, n, np.count_nonzero(v), z.all(axis=1).sum(), z.all(axis=0).sum())\n";

static void test_numpy_crosscheck(void **state)
{
	const char *py = numpy_python();
	char *script, *dir, *line, *save = NULL;
	struct bytes b = {0};
	struct harness_run r;
	int lines = 0;

	(void)state;
	if (!py)
		skip();
	bytes_put(&b, numpy_script, strlen(numpy_script));
	script = fx_write("write.py", &b);
	bytes_free(&b);
	dir = fx_path("");
	{
		const char *args[] = {script, dir, NULL};

		assert_int_equal(harness_exec(&r, py, args), 0);
		if (r.status != 0)
			fail_msg("numpy script: %s", r.err);
	}
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char file[64], name[64], *path;
		unsigned long long nnz, zr, zc;
		struct spp_analysis *a;
		int l;

		assert_int_equal(sscanf(line, "%63s %63s %llu %llu %llu", file, name, &nnz, &zr, &zc), 5);
		path = fx_path(file);
		a = fx_analyze(path);
		l = fx_layer(a, name);
		if (a->stats[l].counts.nnz != nnz || a->stats[l].counts.zero_rows != zr ||
		    a->stats[l].counts.zero_cols != zc)
			fail_msg("%s %s: spprof nnz %llu, zero rows %llu, cols %llu; numpy %s", file, name,
				 (unsigned long long)a->stats[l].counts.nnz,
				 (unsigned long long)a->stats[l].counts.zero_rows,
				 (unsigned long long)a->stats[l].counts.zero_cols, line);
		spp_analysis_destroy(a);
		free(path);
		lines++;
	}
	assert_int_equal(lines, 8);
	harness_run_free(&r);
	free(script);
	free(dir);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_npy_versions),
	cmocka_unit_test(test_npy_fortran),
	cmocka_unit_test(test_npy_dtypes),
	cmocka_unit_test(test_npz),
	cmocka_unit_test(test_npy_malformed),
	cmocka_unit_test(test_npz_malformed),
	cmocka_unit_test(test_npz_many_members),
	cmocka_unit_test(test_numpy_crosscheck),
};

const struct CMUnitTest *formats_npy_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}
