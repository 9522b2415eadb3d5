/*
 * Static metrics: the fast scan against the per-element reference on every
 * dtype's zero test, packed rows, conv and transposed views, several thread
 * counts, whole-tensor totals, mmap'd files whose pages it drops, and
 * matrices held as their non-zeros (the .mtx and .smtx models).
 */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/mapfile.h"
#include "profiler/decode.h"
#include "profiler/pages.h"
#include "profiler/static.h"
#include "test/harness.h"
#include "test/profiler/metrics_fixture.h"

/* ---- zero tests of every dtype: one row, count and tensor nnz agree ---- */

static void expect_row_nnz(enum spp_dtype dt, const void *data, int64_t k,
			   uint64_t want)
{
	struct spp_tensor t;
	struct spp_static_counts c;
	uint64_t nnz = 99;
	struct spp_error err;
	int64_t shape[2] = {1, k};

	tensor_make(&t, dt, 2, shape, data);
	count_layer(&t, &c);
	assert_int_equal(c.nnz, want);
	assert_int_equal(spp_static_tensor_nnz(&t, &nnz, &err), 0);
	assert_int_equal(nnz, want);
}

void test_dtype_zero_tests(void **state)
{
	float f32[] = {0.0f, -0.0f, NAN, INFINITY, 1e-45f, -3.0f};
	uint16_t f16[] = {0x0000, 0x8000, 0x7e00, 0x0001, 0x7c00, 0x3c00};
	uint16_t bf16[] = {0x0000, 0x8000, 0x7fc0, 0x0001, 0x3f80};
	uint8_t e4m3[] = {0x00, 0x80, 0x7f, 0x01, 0xff};
	uint8_t e5m2[] = {0x00, 0x80, 0x7c, 0x01};
	uint8_t e8m0[] = {0x00, 0x7f, 0xff};
	int8_t i8[] = {0, -128, -1, 1};
	int32_t i32[] = {0, INT32_MIN, 1, -1};
	int16_t i16[] = {0, INT16_MIN, 0};
	uint8_t bools[] = {0, 1, 0};
	double f64[] = {0.0, -0.0, NAN, 5e-324};
	/* C64 (re, im): (0,0) (-0,-0) zero; (0,1) (1,0) (-0,NaN) non-zero */
	float c64[] = {0, 0, -0.0f, -0.0f, 0, 1, 1, 0, -0.0f, NAN};
	/* F4 codes 0x8 0x1 0x0 0xf 0x0 0x8 0x8 0x0, low nibble first: -0 and 0
	 * are zero */
	uint8_t f4[] = {0x18, 0xf0, 0x80, 0x08};

	(void)state;
	expect_row_nnz(SPP_DTYPE_F32, f32, 6, 4);
	expect_row_nnz(SPP_DTYPE_F16, f16, 6, 4);
	expect_row_nnz(SPP_DTYPE_BF16, bf16, 5, 3);
	expect_row_nnz(SPP_DTYPE_F8_E4M3, e4m3, 5, 3);
	expect_row_nnz(SPP_DTYPE_F8_E5M2, e5m2, 4, 2);
	expect_row_nnz(SPP_DTYPE_F8_E8M0, e8m0, 3, 3);
	expect_row_nnz(SPP_DTYPE_I8, i8, 4, 3);
	expect_row_nnz(SPP_DTYPE_I32, i32, 4, 3);
	expect_row_nnz(SPP_DTYPE_I16, i16, 3, 1);
	expect_row_nnz(SPP_DTYPE_BOOL, bools, 3, 1);
	expect_row_nnz(SPP_DTYPE_F64, f64, 4, 2);
	expect_row_nnz(SPP_DTYPE_C64, c64, 5, 3);
	expect_row_nnz(SPP_DTYPE_F4, f4, 8, 2);
}

/* Packed rows that start inside a byte: F4 2x3 (row 1 starts at nibble 3)
 * and F6 as 2x4 and 4x2 (rows start at bits 0/24, and 0/12/24/36). */
void test_packed_views(void **state)
{
	uint8_t f4[] = {0x18, 0xf0, 0x80};
	/*
	 * F6 codes 0x20 0x01 0x00 0x3f 0x20 0x10 0x00 0x02 at bits 6i, LSB first:
	 * bit 5 | bit 6 -> byte 0 0x60; byte 1 0; bits 18-23 -> 0xfc; bit 29 ->
	 * 0x20; bit 34 -> 0x04; bit 43 -> 0x08. Non-zero: codes 1, 3, 5, 7.
	 */
	uint8_t f6[] = {0x60, 0x00, 0xfc, 0x20, 0x04, 0x08};
	struct spp_tensor t;
	struct spp_static_counts c;
	int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s42[2] = {4, 2};

	(void)state;
	tensor_make(&t, SPP_DTYPE_F4, 2, s23, f4);
	count_layer(&t, &c);
	assert_int_equal(c.nnz, 2);
	assert_int_equal(c.row_nnz_min, 1);
	assert_int_equal(c.row_nnz_max, 1);
	assert_int_equal(c.zero_cols, 1); /* column 2: codes 0x0 and 0x8 */

	tensor_make(&t, SPP_DTYPE_F6_E2M3, 2, s24, f6);
	count_layer(&t, &c);
	assert_int_equal(c.nnz, 4);
	assert_int_equal(c.row_nnz_min, 2);
	assert_int_equal(c.zero_cols, 2); /* columns 0 and 2 */
	assert_int_equal(c.nm_ok[0], 0);  /* both rows hold 2 in their group */
	assert_int_equal(c.nm_ok[1], 2);

	tensor_make(&t, SPP_DTYPE_F6_E3M2, 2, s42, f6);
	count_layer(&t, &c);
	assert_int_equal(c.nnz, 4);
	assert_int_equal(c.zero_rows, 0);
	assert_int_equal(c.zero_cols, 1); /* column 0: codes 0x20 0x00 0x20 0x00 */
	assert_int_equal(c.row_nnz_max, 1);
}

/* ---- views ---- */

/*
 * OIHW [2, 4, 1, 2]: K = (kh, kw, c) = 8, j = s*4 + c, memory c*2 + s.
 * Non-zeros at memory 0-3 are (c, s) = (0,0) (0,1) (1,0) (1,1): K order
 * holds 2 per group of 4 (2:4 compliant) while memory order holds 4.
 * Non-zeros at memory 0, 2, 4, 6 are c 0..3 at s 0: K order holds 4 in the
 * first group, memory order 2 per group.
 */
void test_conv_k_order(void **state)
{
	float a[16] = {0}, b[16] = {0};
	int64_t shape[4] = {2, 4, 1, 2};
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_static_counts c;

	(void)state;
	for (int o = 0; o < 2; o++) {
		for (int e = 0; e < 4; e++)
			a[o * 8 + e] = 1.0f + (float)e;
		for (int e = 0; e < 8; e += 2)
			b[o * 8 + e] = -2.0f;
	}
	tensor_make(&t, SPP_DTYPE_F32, 4, shape, a);
	count_layer(&t, &c);
	assert_int_equal(c.m, 2);
	assert_int_equal(c.k, 8);
	assert_int_equal(c.nm_ok[1], 4); /* 2:4 holds in all 4 groups */
	spp_layer_init(&l, &t, 1);
	assert_int_equal(l.op, SPP_OP_CONV2D);
	assert_layer_matches_ref(&l);
	/* the same bytes read in memory order break 2:4 */
	{
		int64_t flat[2] = {2, 8};
		struct spp_tensor tf;
		tensor_make(&tf, SPP_DTYPE_F32, 2, flat, a);
		count_layer(&tf, &c);
		assert_int_equal(c.nm_ok[1], 2);
	}
	tensor_make(&t, SPP_DTYPE_F32, 4, shape, b);
	count_layer(&t, &c);
	assert_int_equal(c.nm_ok[1], 2); /* the first group of each row holds 4 */
	{
		int64_t flat[2] = {2, 8};
		struct spp_tensor tf;
		tensor_make(&tf, SPP_DTYPE_F32, 2, flat, b);
		count_layer(&tf, &c);
		assert_int_equal(c.nm_ok[1], 4);
	}
}

/* Random conv2d and conv1d layers against the per-element reference. */
void test_conv_random(void **state)
{
	int64_t s4[4] = {37, 6, 3, 3}, s3[3] = {19, 5, 7};
	float *w4 = random_layer(37, 54, 60), *w3 = random_layer(19, 35, 50);
	struct spp_tensor t;
	struct spp_layer l;

	(void)state;
	tensor_make(&t, SPP_DTYPE_F32, 4, s4, w4);
	spp_layer_init(&l, &t, 1);
	assert_layer_matches_ref(&l);
	tensor_make(&t, SPP_DTYPE_F32, 3, s3, w3);
	spp_layer_init(&l, &t, 1);
	assert_int_equal(l.op, SPP_OP_CONV1D);
	assert_layer_matches_ref(&l);
	free(w4);
	free(w3);
}

/* W (M x K) stored transposed as [K, M] gives the counts of its row-major copy. */
void test_transposed_view(void **state)
{
	const int m = 45, k = 70;
	float *w = random_layer(m, k, 70), *wt = malloc(sizeof(float) * m * k);
	int64_t sw[2] = {m, k}, st[2] = {k, m};
	struct spp_tensor t, tt;
	struct spp_layer l;
	struct spp_static_counts a, b;
	struct spp_error err;

	(void)state;
	assert_non_null(wt);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++)
			wt[j * m + i] = w[i * k + j];
	tensor_make(&t, SPP_DTYPE_F32, 2, sw, w);
	count_layer(&t, &a);
	tensor_make(&tt, SPP_DTYPE_F32, 2, st, wt);
	spp_layer_init(&l, &tt, 1);
	l.view.m = m;
	l.view.k = k;
	l.view.row_stride = 1;
	l.view.inner = k;
	l.view.inner_stride = m;
	l.view.outer_stride = 0;
	assert_int_equal(spp_static_count(&l, &b, &err), 0);
	assert_counts_eq(&a, &b);
	assert_layer_matches_ref(&l);
	/* a view reaching past the tensor is refused, not read */
	l.view.row_stride = 2;
	assert_int_equal(spp_static_count(&l, &b, &err), SPP_E_USAGE);
	free(w);
	free(wt);
}

/* ---- threads ---- */

void test_thread_invariance(void **state)
{
	const int m = 300, k = 1000;
	float *w = random_layer(m, k, 80);
	int64_t shape[2] = {m, k};
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_static_counts one, two, four, want;
	struct spp_error err;
	int saved = omp_get_max_threads();
	uint8_t *nz;

	(void)state;
	tensor_make(&t, SPP_DTYPE_F32, 2, shape, w);
	spp_layer_init(&l, &t, 1);
	omp_set_num_threads(1);
	assert_int_equal(spp_static_count(&l, &one, &err), 0);
	omp_set_num_threads(2);
	assert_int_equal(spp_static_count(&l, &two, &err), 0);
	omp_set_num_threads(4);
	assert_int_equal(spp_static_count(&l, &four, &err), 0);
	omp_set_num_threads(saved);
	nz = nz_of_view(&l);
	ref_count(nz, m, k, &want);
	assert_counts_eq(&one, &want);
	assert_counts_eq(&two, &want);
	assert_counts_eq(&four, &want);
	/* the random layer exercises every count */
	assert_true(want.zero_rows > 0 && want.zero_cols > 0);
	assert_true(want.zero_blocks[1] > 0 && want.zero_blocks[3] > 0);
	free(nz);
	free(w);
}

/* ---- tensor totals ---- */

void test_tensor_nnz_ranks(void **state)
{
	float r1[10] = {1, 0, -0.0f, 2, 0, 0, NAN, 0, 3, 0};
	uint16_t r5[24];
	int64_t s1[1] = {10}, s5[5] = {2, 3, 1, 2, 2}, sbig[1] = {9000001};
	struct spp_tensor t;
	struct spp_error err;
	uint64_t nnz, want = 0;
	float *big = random_layer(1, 9000001, 50);

	(void)state;
	tensor_make(&t, SPP_DTYPE_F32, 1, s1, r1);
	assert_int_equal(spp_static_tensor_nnz(&t, &nnz, &err), 0);
	assert_int_equal(nnz, 4);
	for (int i = 0; i < 24; i++)
		r5[i] = i % 3 == 0 ? 0x3c00 : (i % 3 == 1 ? 0x8000 : 0x0000);
	tensor_make(&t, SPP_DTYPE_BF16, 5, s5, r5);
	assert_int_equal(spp_static_tensor_nnz(&t, &nnz, &err), 0);
	assert_int_equal(nnz, 8);
	/* 36 MB: several 16 MiB chunks, two threads */
	for (int i = 0; i < 9000001; i++)
		want += big[i] != 0.0f;
	tensor_make(&t, SPP_DTYPE_F32, 1, sbig, big);
	assert_int_equal(spp_static_tensor_nnz(&t, &nnz, &err), 0);
	assert_int_equal(nnz, want);
	free(big);
}

/* ---- mmap'd files: the scan drops pages and stays exact ---- */

static long rss_pages(void)
{
	long size = 0, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res;
}

void test_scan_mapped_file(void **state)
{
	const int m = 700, k = 3000; /* 8.4 MB: several work items */
	float *w = random_layer(m, k, 75);
	unsigned char *file = malloc(64 + (size_t)m * k * 4);
	char *path = harness_join(metrics_tmp, "layer.bin");
	struct spp_mapped_file mf;
	struct spp_tensor t;
	struct spp_static_counts got, again, want;
	struct spp_layer l;
	struct spp_error err;
	int64_t shape[2] = {m, k};
	uint8_t *nz;

	(void)state;
	assert_non_null(file);
	memset(file, 0x5a, 64);
	memcpy(file + 64, w, (size_t)m * k * 4);
	assert_int_equal(harness_write(path, file, 64 + (size_t)m * k * 4), 0);
	assert_int_equal(spp_mapfile_open(path, &mf, &err), 0);
	tensor_make(&t, SPP_DTYPE_F32, 2, shape, mf.base + 64);
	spp_layer_init(&l, &t, 1);
	assert_int_equal(spp_static_count(&l, &got, &err), 0);
	assert_int_equal(spp_static_count(&l, &again, &err), 0);
	tensor_make(&t, SPP_DTYPE_F32, 2, shape, w);
	spp_layer_init(&l, &t, 1);
	nz = nz_of_view(&l);
	ref_count(nz, m, k, &want);
	assert_counts_eq(&got, &want);
	assert_counts_eq(&again, &want);
	spp_mapfile_close(&mf);
	free(nz);
	free(file);
	free(w);
	free(path);
}

void test_pages_drop(void **state)
{
	const size_t n = 24u << 20;
	unsigned char *heap = malloc(n);
	char *path = harness_join(metrics_tmp, "pages.bin");
	struct spp_mapped_file mf;
	struct spp_pages pg;
	struct spp_error err;
	uint64_t sum = 0;
	long before, after;

	(void)state;
	assert_non_null(heap);
	for (size_t i = 0; i < n; i++)
		heap[i] = (unsigned char)(i * 31 + 7);
	spp_pages_open(&pg);
	if (pg.pagemap_fd < 0) {
		spp_pages_close(&pg);
		free(heap);
		free(path);
		skip();
	}
	/* anonymous memory is never dropped: its data would be lost */
	spp_pages_drop(&pg, heap, n, 0);
	for (size_t i = 0; i < n; i += 4093)
		assert_int_equal(heap[i], (unsigned char)(i * 31 + 7));
	/* file pages are dropped from the process and read back intact */
	assert_int_equal(harness_write(path, heap, n), 0);
	assert_int_equal(spp_mapfile_open(path, &mf, &err), 0);
	spp_pages_prefault(mf.base, mf.size);
	for (size_t i = 0; i < n; i += 4096)
		sum += mf.base[i];
	before = rss_pages();
	spp_pages_drop(&pg, mf.base, mf.size, 0);
	after = rss_pages();
	assert_true(before - after >= (long)((n * 3 / 4) / 4096));
	assert_memory_equal(mf.base, heap, n);
	assert_true(sum > 0);
	spp_pages_close(&pg);
	spp_mapfile_close(&mf);
	free(heap);
	free(path);
}

/* ---- a matrix held as its non-zeros (.mtx, .smtx) counts as its dense form ---- */

/* The non-zeros of w (m x k) as the matrix loaders keep them; heap arrays in c. */
static void coo_of(const float *w, int m, int k, struct spp_coo *c)
{
	int32_t *row = malloc(sizeof(*row) * (size_t)m * (size_t)k + 1);
	int32_t *col = malloc(sizeof(*col) * (size_t)m * (size_t)k + 1);
	float *val = malloc(sizeof(*val) * (size_t)m * (size_t)k + 1);
	uint64_t n = 0;

	assert_true(row && col && val);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++)
			if (w[(size_t)i * k + j] != 0) {
				row[n] = i;
				col[n] = j;
				val[n++] = w[(size_t)i * k + j];
			}
	*c = (struct spp_coo){n, row, col, val};
}

static void expect_coo_as_dense(float *w, int m, int k)
{
	struct spp_tensor dense, sparse;
	struct spp_static_counts a, b;
	struct spp_layer l;
	struct spp_error err = {0};
	struct spp_coo c;
	int64_t shape[2] = {m, k};
	float *back = malloc(sizeof(*back) * (size_t)m * (size_t)k);
	uint64_t nnz = 0;

	assert_non_null(back);
	coo_of(w, m, k, &c);
	tensor_make(&dense, SPP_DTYPE_F32, 2, shape, w);
	tensor_make(&sparse, SPP_DTYPE_F32, 2, shape, NULL);
	sparse.nbytes = 0;
	sparse.coo = &c;
	count_layer(&dense, &a);
	count_layer(&sparse, &b);
	assert_counts_eq(&a, &b);
	/* the provenance of the entries of the sampled rows is the dense scan's */
	assert_int_equal(a.prov.status, b.prov.status);
	assert_int_equal(a.prov.row_step, b.prov.row_step);
	assert_int_equal(a.prov.rows, b.prov.rows);
	assert_int_equal(a.prov.survivors, b.prov.survivors);
	assert_int_equal(a.prov.in_band, b.prov.in_band);
	if (!(a.prov.scale == b.prov.scale && a.prov.min_abs == b.prov.min_abs))
		fail_msg("%dx%d: scale %g / %g, min %g / %g", m, k, (double)a.prov.scale,
			 (double)b.prov.scale, (double)a.prov.min_abs, (double)b.prov.min_abs);
	assert_int_equal(spp_static_tensor_nnz(&sparse, &nnz, &err), 0);
	assert_int_equal(nnz, a.nnz);
	spp_layer_init(&l, &sparse, 1);
	assert_int_equal(spp_layer_decode(&l, back, &err), 0);
	for (size_t e = 0; e < (size_t)m * (size_t)k; e++)
		if (!(back[e] == w[e] || (isnan(back[e]) && isnan(w[e]))))
			fail_msg("%dx%d: element %zu decodes to %g, not %g", m, k, e, back[e], w[e]);
	free((void *)c.row), free((void *)c.col), free((void *)c.val);
	free(back);
}

void test_coo_counts(void **state)
{
	static const int shapes[][2] = {{1, 1}, {1, 9}, {3, 5}, {37, 54}, {64, 64}, {100, 257},
					{17, 1000}, {250, 3}};
	static const int pcts[] = {0, 50, 90, 100};

	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t p = 0; p < sizeof(pcts) / sizeof(pcts[0]); p++) {
			int m = shapes[s][0], k = shapes[s][1];
			float *w = random_layer(m, k, pcts[p]);

			/* every 4-group of the first rows 2:4, and a NaN: N:M and the zero test */
			for (int j = 0; j < k && m > 2; j++)
				w[k + j] = j % 4 < 2 ? 1.5f : 0.0f;
			w[(size_t)m * k - 1] = NAN;
			expect_coo_as_dense(w, m, k);
			free(w);
		}
}
