/*
 * Static metrics (DESIGN section 3) and the content hash. Hand-worked
 * matrices check every formula with figures written out below; a plain
 * per-element reference counter checks the fast scan on random layers, on
 * conv and transposed views, at several thread counts and on mmap'd files.
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
#include <xxhash.h>

#include <cmocka.h>

#include "profiler/hash.h"
#include "profiler/layer.h"
#include "profiler/mapfile.h"
#include "profiler/pages.h"
#include "profiler/static.h"
#include "test/harness.h"

#define EPS 1e-12

/* cmocka 1.1 has no double assertion; this one prints both values. */
#define assert_near(a, b, eps) near_((a), (b), (eps), #a, __FILE__, __LINE__)

static void near_(double a, double b, double eps, const char *what,
		  const char *file, int line)
{
	if (!(fabs(a - b) <= eps)) {
		print_error("%s is %.17g, expected %.17g\n", what, a, b);
		_fail(file, line);
	}
}

/* ---- building tensors and layers in memory ---- */

static void tensor_make(struct spp_tensor *t, enum spp_dtype dt, int ndim,
			const int64_t *shape, const void *data)
{
	memset(t, 0, sizeof(*t));
	t->name = "w";
	t->dtype = dt;
	t->ndim = ndim;
	t->numel = 1;
	for (int d = 0; d < ndim; d++) {
		t->shape[d] = shape[d];
		t->numel *= (uint64_t)shape[d];
	}
	assert_int_equal(spp_dtype_nbytes(dt, t->numel, &t->nbytes), 0);
	t->data = data;
}

/* Rows written as text: '1'..'9' a non-zero value, '0' +0.0, '-' -0.0,
 * 'n' NaN, 'i' infinity. */
static float *mat_from_rows(const char *const *rows, int m, int k)
{
	float *w = calloc((size_t)m * (size_t)k, sizeof(float));

	assert_non_null(w);
	for (int i = 0; i < m; i++) {
		assert_int_equal((int)strlen(rows[i]), k);
		for (int j = 0; j < k; j++) {
			char ch = rows[i][j];
			float v = 0.0f;

			if (ch >= '1' && ch <= '9')
				v = (ch - '0') * ((i + j) % 2 ? -0.25f : 1.5f);
			else if (ch == '-')
				v = -0.0f;
			else if (ch == 'n')
				v = NAN;
			else if (ch == 'i')
				v = INFINITY;
			w[(size_t)i * (size_t)k + (size_t)j] = v;
		}
	}
	return w;
}

static void count_layer(const struct spp_tensor *t, struct spp_static_counts *c)
{
	struct spp_layer l;
	struct spp_error err;

	spp_layer_init(&l, t, 128);
	assert_int_equal(spp_static_count(&l, c, &err), 0);
}

static void derive_rows(const char *const *rows, int m, int k, int64_t n,
			struct spp_layer_static *s)
{
	float *w = mat_from_rows(rows, m, k);
	struct spp_tensor t;
	struct spp_static_counts c;
	int64_t shape[2] = {m, k};

	tensor_make(&t, SPP_DTYPE_F32, 2, shape, w);
	count_layer(&t, &c);
	spp_static_derive(&c, SPP_DTYPE_F32, n, s);
	free(w);
}

/* ---- the reference: plain loops over a 0/1 matrix, per definition ---- */

static void ref_count(const uint8_t *nz, int64_t m, int64_t k,
		      struct spp_static_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->k = k;
	c->row_nnz_min = UINT64_MAX;
	for (int64_t i = 0; i < m; i++) {
		uint64_t r = 0;
		for (int64_t j = 0; j < k; j++)
			r += nz[i * k + j];
		c->nnz += r;
		c->row_nnz_min = r < c->row_nnz_min ? r : c->row_nnz_min;
		c->row_nnz_max = r > c->row_nnz_max ? r : c->row_nnz_max;
		c->row_nnz_sumsq += (double)(r * r);
		c->zero_rows += r == 0;
		for (int p = 0; p < SPP_NNM; p++) {
			int gm = spp_nm_patterns[p].m;
			for (int64_t g0 = 0; g0 < k; g0 += gm) {
				uint64_t cnt = 0;
				for (int64_t j = g0; j < g0 + gm && j < k; j++)
					cnt += nz[i * k + j];
				c->nm_groups[p]++;
				c->nm_ok[p] += cnt <= (uint64_t)spp_nm_patterns[p].n;
			}
		}
	}
	for (int64_t j = 0; j < k; j++) {
		int any = 0;
		for (int64_t i = 0; i < m; i++)
			any |= nz[i * k + j];
		c->zero_cols += !any;
	}
	for (int b = 0; b < SPP_NBLOCK; b++) {
		int64_t bs = spp_block_sizes[b];
		for (int64_t bi = 0; bi < m; bi += bs)
			for (int64_t bj = 0; bj < k; bj += bs) {
				int64_t ie = bi + bs < m ? bi + bs : m;
				int64_t je = bj + bs < k ? bj + bs : k;
				int any = 0;
				for (int64_t i = bi; i < ie; i++)
					for (int64_t j = bj; j < je; j++)
						any |= nz[i * k + j];
				c->blocks[b]++;
				if (!any) {
					c->zero_blocks[b]++;
					if (bs == 4)
						c->zeros_in_zero_block4 += (uint64_t)((ie - bi) * (je - bj));
				}
			}
	}
	if (m == 0)
		c->row_nnz_min = 0;
}

/* The reference's 0/1 matrix of an F32 layer, through the view formula. */
static uint8_t *nz_of_view(const struct spp_layer *l)
{
	const float *w = (const float *)(const void *)l->weight->data;
	int64_t m = l->view.m, k = l->view.k;
	uint8_t *nz = malloc((size_t)(m * k));

	assert_non_null(nz);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			nz[i * k + j] = w[spp_view_index(&l->view, i, j)] != 0.0f;
	return nz;
}

static void assert_counts_eq(const struct spp_static_counts *a,
			     const struct spp_static_counts *b)
{
	assert_int_equal(a->m, b->m);
	assert_int_equal(a->k, b->k);
	assert_int_equal(a->nnz, b->nnz);
	assert_int_equal(a->row_nnz_min, b->row_nnz_min);
	assert_int_equal(a->row_nnz_max, b->row_nnz_max);
	assert_true(a->row_nnz_sumsq == b->row_nnz_sumsq);
	for (int p = 0; p < SPP_NNM; p++) {
		assert_int_equal(a->nm_groups[p], b->nm_groups[p]);
		assert_int_equal(a->nm_ok[p], b->nm_ok[p]);
	}
	for (int i = 0; i < SPP_NBLOCK; i++) {
		assert_int_equal(a->blocks[i], b->blocks[i]);
		assert_int_equal(a->zero_blocks[i], b->zero_blocks[i]);
	}
	assert_int_equal(a->zeros_in_zero_block4, b->zeros_in_zero_block4);
	assert_int_equal(a->zero_rows, b->zero_rows);
	assert_int_equal(a->zero_cols, b->zero_cols);
}

static void assert_layer_matches_ref(const struct spp_layer *l)
{
	struct spp_static_counts got, want;
	struct spp_error err;
	uint8_t *nz = nz_of_view(l);

	assert_int_equal(spp_static_count(l, &got, &err), 0);
	ref_count(nz, l->view.m, l->view.k, &want);
	assert_counts_eq(&got, &want);
	free(nz);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Random weights with zero rows, zero columns, zero 4x4 and 16x16 areas. */
static float *random_layer(int m, int k, int zero_pct)
{
	float *w = malloc((size_t)m * (size_t)k * sizeof(float));

	assert_non_null(w);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++) {
			int zero = (int)(rnd() % 100) < zero_pct || i % 37 == 5 ||
				   j % 53 == 7 || ((i / 4 + j / 4) % 11 == 0) ||
				   ((i / 16) % 5 == 2 && (j / 16) % 3 == 1);
			w[(size_t)i * k + j] = zero ? ((rnd() & 1) ? -0.0f : 0.0f)
					     : (float)((int)(rnd() % 200) - 100) + 0.5f;
		}
	return w;
}

/* ---- hand-worked cases (numbers derived in the comments) ---- */

/*
 * 5x7, nnz 8: rows 3,0,3,1,1; zero row 1; zero cols 3 and 6.
 * Groups of 4 (K padded to 8): counts per row (1,2) (0,0) (3,0) (0,1) (1,0):
 * 1:4 ok 8/10, 2:4 ok 9/10; groups of 8: 3,0,3,1,1 -> 4:8 ok 5/5.
 * 2x2 blocks (3 x 4 = 12): zero ones 2 + 1 + 3 = 6. 4x4 blocks (2 x 2): only
 * rows 4 x cols 4-6 is zero, holding 1 x 3 = 3 real elements. 8x8, 16x16:
 * one block each, non-zero. Row nnz mean 1.6, sumsq 20, var 4 - 2.56 = 1.44,
 * cv 1.2 / 1.6 = 0.75. Class nm (4:8 compliant at 77 % sparsity).
 */
static const char *const case_5x7[] = {
	"1000110",
	"0000000",
	"1110000",
	"0-00010",
	"1000000",
};

static void test_hand_5x7_counts(void **state)
{
	struct spp_layer_static s;
	const struct spp_static_counts *c = &s.counts;

	(void)state;
	derive_rows(case_5x7, 5, 7, 3, &s);
	assert_int_equal(c->m, 5);
	assert_int_equal(c->k, 7);
	assert_int_equal(c->nnz, 8);
	assert_int_equal(s.numel, 35);
	assert_near(s.sparsity, 27.0 / 35.0, EPS);
	assert_int_equal(c->row_nnz_min, 0);
	assert_int_equal(c->row_nnz_max, 3);
	assert_near(c->row_nnz_sumsq, 20.0, 0);
	assert_int_equal(c->zero_rows, 1);
	assert_int_equal(c->zero_cols, 2);
	assert_int_equal(c->nm_groups[0], 10);
	assert_int_equal(c->nm_ok[0], 8);
	assert_int_equal(c->nm_ok[1], 9);
	assert_int_equal(c->nm_groups[2], 5);
	assert_int_equal(c->nm_ok[2], 5);
	assert_near(s.nm[0], 0.8, EPS);
	assert_near(s.nm[1], 0.9, EPS);
	assert_near(s.nm[2], 1.0, EPS);
	assert_int_equal(c->blocks[0], 12);
	assert_int_equal(c->zero_blocks[0], 6);
	assert_int_equal(c->blocks[1], 4);
	assert_int_equal(c->zero_blocks[1], 1);
	assert_int_equal(c->zeros_in_zero_block4, 3);
	assert_int_equal(c->blocks[2], 1);
	assert_int_equal(c->zero_blocks[2], 0);
	assert_int_equal(c->blocks[3], 1);
	assert_int_equal(c->zero_blocks[3], 0);
	assert_near(s.block[0], 0.5, EPS);
	assert_near(s.block[1], 0.25, EPS);
	assert_near(s.block[2], 0.0, EPS);
	assert_near(s.row_nnz_mean, 1.6, EPS);
	assert_near(s.row_nnz_cv, 0.75, 1e-9);
	/* N = 3: dense 2*5*7*3 = 210, sparse 2*8*3 = 48 */
	assert_near(s.flops_dense, 210, 0);
	assert_near(s.flops_sparse, 48, 0);
	assert_near(s.theoretical_speedup, 4.375, EPS);
	assert_int_equal(s.cls, SPP_CLASS_NM);
	assert_string_equal(spp_pattern_class_name(s.cls), "nm");
}

static void test_hand_5x7_storage(void **state)
{
	struct spp_layer_static s;
	const struct spp_storage *st = s.storage;

	(void)state;
	derive_rows(case_5x7, 5, 7, 3, &s);
	/* F32, vb 4, M 5, K 7, nnz 8 */
	assert_near(st[SPP_ST_DENSE].bytes, 140, 0);         /* 35*4 */
	assert_near(st[SPP_ST_DENSE].ratio, 1.0, 0);
	assert_near(st[SPP_ST_CSR].bytes, 88, 0);            /* 8*8 + 6*4 */
	assert_near(st[SPP_ST_CSR].ratio, 140.0 / 88, EPS);
	assert_near(st[SPP_ST_COO].bytes, 96, 0);            /* 8*12 */
	assert_near(st[SPP_ST_BSR4].bytes, 216, 0);          /* 3*64 + 3*4 + (2+1)*4 */
	assert_near(st[SPP_ST_BSR8].bytes, 268, 0);          /* 256 + 4 + (1+1)*4 */
	assert_near(st[SPP_ST_BSR16].bytes, 1036, 0);        /* 1024 + 4 + 8 */
	assert_near(st[SPP_ST_BITMASK].bytes, 61, 0);        /* 5*1 + 32 + 24 */
	assert_false(st[SPP_ST_NM1_4].applicable);
	assert_string_equal(st[SPP_ST_NM1_4].reason,
			    "not 1:4 compliant: 20% of groups hold more than 1 non-zeros");
	assert_false(st[SPP_ST_NM2_4].applicable);
	assert_string_equal(st[SPP_ST_NM2_4].reason,
			    "not 2:4 compliant: 10% of groups hold more than 2 non-zeros");
	assert_near(st[SPP_ST_NM2_4].ratio, 0, 0);
	/* 4:8: G = 5, 5*4*4 + ceil(5*4*3 / 8) = 80 + 8 */
	assert_true(st[SPP_ST_NM4_8].applicable);
	assert_near(st[SPP_ST_NM4_8].bytes, 88, 0);
	assert_near(st[SPP_ST_NM4_8].ratio, 140.0 / 88, EPS);
	for (int f = 0; f <= SPP_ST_BITMASK; f++)
		assert_true(st[f].applicable);
}

/*
 * 3x10 F16, one zero row and zero col 9 (one of its zeros is -0.0):
 * nnz 18, zeros 12 = 1*10 + 1*3 - 1 -> class channel. Rows 0, 9, 9: mean 6,
 * sumsq 162, var 54 - 36 = 18, cv sqrt(18)/6. Groups of 4 (3 per row):
 * row 0 all ok, rows 1-2: 4, 4, 1 -> 1:4 and 2:4 ok 5/9; groups of 8 (2 per
 * row): rows 1-2: 8, 1 -> 4:8 ok 4/6. No zero block at any size.
 */
static void test_hand_channel_f16(void **state)
{
	uint16_t h[30];
	struct spp_tensor t;
	struct spp_static_counts c;
	struct spp_layer_static s;
	int64_t shape[2] = {3, 10};

	(void)state;
	for (int j = 0; j < 10; j++) {
		h[j] = j % 2 ? 0x8000 : 0x0000;
		h[10 + j] = j == 9 ? 0x0000 : 0x3c00;
		h[20 + j] = j == 9 ? 0x8000 : 0xbc00;
	}
	tensor_make(&t, SPP_DTYPE_F16, 2, shape, h);
	count_layer(&t, &c);
	spp_static_derive(&c, SPP_DTYPE_F16, 1, &s);
	assert_int_equal(c.nnz, 18);
	assert_int_equal(c.zero_rows, 1);
	assert_int_equal(c.zero_cols, 1);
	assert_int_equal(c.row_nnz_min, 0);
	assert_int_equal(c.row_nnz_max, 9);
	assert_near(s.row_nnz_cv, sqrt(18.0) / 6.0, 1e-12);
	assert_int_equal(c.nm_groups[0], 9);
	assert_int_equal(c.nm_ok[0], 5);
	assert_int_equal(c.nm_ok[1], 5);
	assert_int_equal(c.nm_groups[2], 6);
	assert_int_equal(c.nm_ok[2], 4);
	assert_int_equal(c.blocks[0], 10);
	assert_int_equal(c.zero_blocks[0], 0);
	assert_int_equal(c.blocks[1], 3);
	assert_int_equal(c.zero_blocks[1], 0);
	assert_int_equal(c.zeros_in_zero_block4, 0);
	assert_int_equal(s.cls, SPP_CLASS_CHANNEL);
	/* F16, vb 2: dense 60, csr 18*6 + 4*4, coo 18*10, bitmask 3*2 + 36 + 16,
	 * bsr4 3*16*2 + 3*4 + (1+1)*4 */
	assert_near(s.storage[SPP_ST_DENSE].bytes, 60, 0);
	assert_near(s.storage[SPP_ST_CSR].bytes, 124, 0);
	assert_near(s.storage[SPP_ST_COO].bytes, 180, 0);
	assert_near(s.storage[SPP_ST_BITMASK].bytes, 58, 0);
	assert_near(s.storage[SPP_ST_BSR4].bytes, 116, 0);
	assert_near(s.storage[SPP_ST_COO].ratio, 60.0 / 180, EPS);
}

/*
 * 17x33 I8 made of whole 4x4 blocks at (block row, block col) (0,0) (0,1)
 * (1,1) (2,2) (3,3) (4,4) (0,5) (1,6) (2,7) (3,8); block row 4 is row 16 only
 * and block col 8 is col 32 only. nnz 8*16 + 4 + 4 = 136; every zero lies in
 * a zero 4x4 block: 561 - 136 = 425 -> class block. No zero row or column.
 * Rows: 12 x4, 8 x8, 5 x4, 4 x1 -> sumsq 4*144 + 8*64 + 4*25 + 16 = 1204.
 * Blocks: 2x2 153 (9 x 17), non-zero 8*4 + 2 + 2 = 36; 4x4 45, zero 35;
 * 8x8 15 (3 x 5), non-zero 7; 16x16 6 (2 x 3), non-zero 4.
 * Groups of 4 (153): 1:4 and 2:4 ok 4*6 + 4*7 + 4*7 + 4*8 + 8 = 120;
 * groups of 8 (85): 4:8 ok 4*4 + 4*5 + 4*5 + 4*5 + 5 = 81.
 */
static void test_hand_block_i8(void **state)
{
	static const int blocks[][2] = {{0, 0}, {0, 1}, {1, 1}, {2, 2}, {3, 3},
					{4, 4}, {0, 5}, {1, 6}, {2, 7}, {3, 8}};
	int8_t w[17 * 33];
	struct spp_tensor t;
	struct spp_static_counts c;
	struct spp_layer_static s;
	int64_t shape[2] = {17, 33};

	(void)state;
	memset(w, 0, sizeof(w));
	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++)
		for (int i = 4 * blocks[b][0]; i < 4 * blocks[b][0] + 4 && i < 17; i++)
			for (int j = 4 * blocks[b][1]; j < 4 * blocks[b][1] + 4 && j < 33; j++)
				w[i * 33 + j] = (int8_t)((i * 7 + j) % 2 ? -128 : 3);
	tensor_make(&t, SPP_DTYPE_I8, 2, shape, w);
	count_layer(&t, &c);
	spp_static_derive(&c, SPP_DTYPE_I8, 128, &s);
	assert_int_equal(c.nnz, 136);
	assert_int_equal(c.zero_rows, 0);
	assert_int_equal(c.zero_cols, 0);
	assert_int_equal(c.row_nnz_min, 4);
	assert_int_equal(c.row_nnz_max, 12);
	assert_near(c.row_nnz_sumsq, 1204, 0);
	assert_int_equal(c.blocks[0], 153);
	assert_int_equal(c.zero_blocks[0], 117);
	assert_int_equal(c.blocks[1], 45);
	assert_int_equal(c.zero_blocks[1], 35);
	assert_int_equal(c.zeros_in_zero_block4, 425);
	assert_int_equal(c.blocks[2], 15);
	assert_int_equal(c.zero_blocks[2], 8);
	assert_int_equal(c.blocks[3], 6);
	assert_int_equal(c.zero_blocks[3], 2);
	assert_int_equal(c.nm_groups[0], 153);
	assert_int_equal(c.nm_ok[0], 120);
	assert_int_equal(c.nm_ok[1], 120);
	assert_int_equal(c.nm_groups[2], 85);
	assert_int_equal(c.nm_ok[2], 81);
	assert_int_equal(s.cls, SPP_CLASS_BLOCK);
	/* I8, vb 1: csr 136*5 + 18*4, coo 136*9, bsr4 10*16 + 40 + (5+1)*4,
	 * bsr8 7*64 + 28 + (3+1)*4, bsr16 4*256 + 16 + (2+1)*4, bitmask 17*5 +
	 * 136 + 72 */
	assert_near(s.storage[SPP_ST_DENSE].bytes, 561, 0);
	assert_near(s.storage[SPP_ST_CSR].bytes, 752, 0);
	assert_near(s.storage[SPP_ST_COO].bytes, 1224, 0);
	assert_near(s.storage[SPP_ST_BSR4].bytes, 224, 0);
	assert_near(s.storage[SPP_ST_BSR8].bytes, 492, 0);
	assert_near(s.storage[SPP_ST_BSR16].bytes, 1052, 0);
	assert_near(s.storage[SPP_ST_BITMASK].bytes, 293, 0);
	assert_near(s.storage[SPP_ST_BSR4].ratio, 561.0 / 224, EPS);
	assert_false(s.storage[SPP_ST_NM4_8].applicable);
	assert_string_equal(s.storage[SPP_ST_NM4_8].reason,
			    "not 4:8 compliant: 4.71% of groups hold more than 4 non-zeros");
	{
		uint8_t nz[17 * 33];
		struct spp_static_counts want;
		for (int i = 0; i < 17 * 33; i++)
			nz[i] = w[i] != 0;
		ref_count(nz, 17, 33, &want);
		assert_counts_eq(&c, &want);
	}
}

/*
 * 4x8 F32, rows 5, 2, 2, 2 (nnz 11): 4:8 fails on row 0, 1:4 and 2:4 on its
 * first group (7/8 ok); no zero row or column; no zero 4x4 block; one zero
 * 2x2 block of 8 -> class unstructured. csr 11*8 + 5*4 = 108, coo 132,
 * bitmask 4 + 44 + 20 = 68. Row mean 2.75, sumsq 37, var 1.6875.
 */
static void test_hand_unstructured(void **state)
{
	static const char *const rows[] = {
		"11111000",
		"00100001",
		"01000010",
		"10000100",
	};
	struct spp_layer_static s;

	(void)state;
	derive_rows(rows, 4, 8, 16, &s);
	assert_int_equal(s.counts.nnz, 11);
	assert_int_equal(s.counts.nm_ok[0], 7);
	assert_int_equal(s.counts.nm_ok[1], 7);
	assert_int_equal(s.counts.nm_ok[2], 3);
	assert_int_equal(s.counts.zero_blocks[0], 1);
	assert_near(s.block[0], 0.125, EPS);
	assert_int_equal(s.counts.zero_blocks[1], 0);
	assert_int_equal(s.counts.zero_rows, 0);
	assert_int_equal(s.counts.zero_cols, 0);
	assert_near(s.row_nnz_cv, sqrt(1.6875) / 2.75, 1e-12);
	assert_int_equal(s.cls, SPP_CLASS_UNSTRUCTURED);
	assert_string_equal(spp_pattern_class_name(s.cls), "unstructured");
	assert_near(s.storage[SPP_ST_CSR].bytes, 108, 0);
	assert_near(s.storage[SPP_ST_COO].bytes, 132, 0);
	assert_near(s.storage[SPP_ST_BITMASK].bytes, 68, 0);
	assert_near(s.storage[SPP_ST_CSR].ratio, 128.0 / 108, EPS);
	assert_near(s.theoretical_speedup, 32.0 / 11, EPS);
}

/* The brief's example: a 4x8 F32 layer with 5 nnz stores csr in
 * 5*8 + 5*4 = 60 bytes; all in row 0 it is a channel layer. */
static void test_hand_csr_60(void **state)
{
	static const char *const rows[] = {"11011010", "00000000", "00000000", "00000000"};
	struct spp_layer_static s;

	(void)state;
	derive_rows(rows, 4, 8, 128, &s);
	assert_int_equal(s.counts.nnz, 5);
	assert_near(s.storage[SPP_ST_CSR].bytes, 60, 0);
	assert_int_equal(s.counts.zero_rows, 3);
	assert_int_equal(s.counts.zero_cols, 3);
	assert_int_equal(s.cls, SPP_CLASS_CHANNEL);
}

/* 1x40 with one zero: sparsity 2.5 % -> dense. 1x20 with one zero: 5 % is
 * not below 5 %, and with M = 1 the zero lies in a zero column -> channel. */
static void test_class_dense_threshold(void **state)
{
	char r40[41], r20[21];
	const char *p40[] = {r40}, *p20[] = {r20};
	struct spp_layer_static s;

	(void)state;
	memset(r40, '1', 40);
	r40[40] = '\0';
	r40[17] = '0';
	memset(r20, '1', 20);
	r20[20] = '\0';
	r20[3] = '-';
	derive_rows(p40, 1, 40, 1, &s);
	assert_near(s.sparsity, 0.025, EPS);
	assert_int_equal(s.cls, SPP_CLASS_DENSE);
	assert_string_equal(spp_pattern_class_name(s.cls), "dense");
	derive_rows(p20, 1, 20, 1, &s);
	assert_near(s.sparsity, 0.05, EPS);
	assert_int_equal(s.cls, SPP_CLASS_CHANNEL);
	assert_string_equal(spp_pattern_class_name(SPP_CLASS_BLOCK), "block");
}

/*
 * Exactly 90 %. 3x9 with zero row 0 and one more zero at (1, 0): 9 of 10
 * zeros lie in the zero row -> channel. 9x16 with zero 4x4 blocks (0,0),
 * (1,1) and row 8 x cols 0-3, plus 4 zeros on the diagonal of block (0,1):
 * 36 of 40 zeros in zero blocks -> block (groups of 8 over cols 8-15 hold 8,
 * so no N:M).
 */
static void test_class_boundaries(void **state)
{
	static const char *const ch[] = {"000000000", "011111111", "111111111"};
	static const char *const bl[] = {
		"0000011111111111", "0000101111111111", "0000110111111111",
		"0000111011111111", "1111000011111111", "1111000011111111",
		"1111000011111111", "1111000011111111", "0000111111111111",
	};
	struct spp_layer_static s;

	(void)state;
	derive_rows(ch, 3, 9, 1, &s);
	assert_int_equal(s.counts.nnz, 17);
	assert_int_equal(s.counts.zero_rows, 1);
	assert_int_equal(s.counts.zero_cols, 0);
	assert_int_equal(s.cls, SPP_CLASS_CHANNEL);
	derive_rows(bl, 9, 16, 1, &s);
	assert_int_equal(s.counts.nnz, 104);
	assert_int_equal(s.counts.zeros_in_zero_block4, 36);
	assert_int_equal(s.counts.zero_blocks[1], 3);
	assert_int_equal(s.counts.zero_rows + s.counts.zero_cols, 0);
	assert_int_equal(s.cls, SPP_CLASS_BLOCK);
}

/* 6x6 all zero: every group compliant, every block zero; csr holds only the
 * 7 row offsets; nm2_4: G 12, 12*2*4 + ceil(12*2*2 / 8) = 102. */
static void test_all_zero(void **state)
{
	float w[36] = {0};
	struct spp_tensor t;
	struct spp_static_counts c;
	struct spp_layer_static s;
	int64_t shape[2] = {6, 6};

	(void)state;
	w[7] = -0.0f;
	tensor_make(&t, SPP_DTYPE_F32, 2, shape, w);
	count_layer(&t, &c);
	spp_static_derive(&c, SPP_DTYPE_F32, 8, &s);
	assert_int_equal(c.nnz, 0);
	assert_near(s.sparsity, 1.0, 0);
	assert_near(s.theoretical_speedup, 0, 0);
	assert_int_equal(c.zero_rows, 6);
	assert_int_equal(c.zero_cols, 6);
	assert_int_equal(c.row_nnz_max, 0);
	assert_near(s.row_nnz_cv, 0, 0);
	for (int i = 0; i < SPP_NNM; i++)
		assert_near(s.nm[i], 1.0, 0);
	for (int b = 0; b < SPP_NBLOCK; b++)
		assert_near(s.block[b], 1.0, 0);
	assert_int_equal(c.zeros_in_zero_block4, 36);
	assert_int_equal(s.cls, SPP_CLASS_NM);
	assert_near(s.storage[SPP_ST_CSR].bytes, 28, 0);
	assert_near(s.storage[SPP_ST_COO].bytes, 0, 0);
	assert_near(s.storage[SPP_ST_COO].ratio, 0, 0);
	assert_near(s.storage[SPP_ST_NM2_4].bytes, 102, 0);
	assert_near(s.storage[SPP_ST_NM1_4].bytes, 12 * 1 * 4 + 3, 0);
}

/* 3x5 all non-zero (NaN and Inf included): groups of 4 hold 4 then 1 ->
 * 1:4 and 2:4 ok 3/6; 4:8 holds 5 -> 0/3; speedup 1; class dense. */
static void test_all_nonzero(void **state)
{
	static const char *const rows[] = {"11n11", "1111i", "11111"};
	struct spp_layer_static s;

	(void)state;
	derive_rows(rows, 3, 5, 2, &s);
	assert_int_equal(s.counts.nnz, 15);
	assert_near(s.sparsity, 0, 0);
	assert_near(s.theoretical_speedup, 1.0, 0);
	assert_near(s.nm[0], 0.5, EPS);
	assert_near(s.nm[1], 0.5, EPS);
	assert_near(s.nm[2], 0.0, EPS);
	for (int b = 0; b < SPP_NBLOCK; b++)
		assert_int_equal(s.counts.zero_blocks[b], 0);
	assert_int_equal(s.counts.zero_rows, 0);
	assert_int_equal(s.counts.zero_cols, 0);
	assert_near(s.row_nnz_cv, 0, 0);
	assert_int_equal(s.cls, SPP_CLASS_DENSE);
	assert_string_equal(s.storage[SPP_ST_NM4_8].reason,
			    "not 4:8 compliant: 100% of groups hold more than 4 non-zeros");
	assert_string_equal(spp_storage_key(SPP_ST_DENSE), "dense");
	assert_string_equal(spp_storage_key(SPP_ST_CSR), "csr");
	assert_string_equal(spp_storage_key(SPP_ST_COO), "coo");
	assert_string_equal(spp_storage_key(SPP_ST_BSR4), "bsr4");
	assert_string_equal(spp_storage_key(SPP_ST_BSR8), "bsr8");
	assert_string_equal(spp_storage_key(SPP_ST_BSR16), "bsr16");
	assert_string_equal(spp_storage_key(SPP_ST_BITMASK), "bitmask");
	assert_string_equal(spp_storage_key(SPP_ST_NM1_4), "nm1_4");
	assert_string_equal(spp_storage_key(SPP_ST_NM2_4), "nm2_4");
	assert_string_equal(spp_storage_key(SPP_ST_NM4_8), "nm4_8");
}


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

static void test_dtype_zero_tests(void **state)
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
static void test_packed_views(void **state)
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
static void test_conv_k_order(void **state)
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
static void test_conv_random(void **state)
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
static void test_transposed_view(void **state)
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

static void test_thread_invariance(void **state)
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

static void test_tensor_nnz_ranks(void **state)
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

static char *tmp; /* scratch folder of the run */

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

static void test_scan_mapped_file(void **state)
{
	const int m = 700, k = 3000; /* 8.4 MB: several work items */
	float *w = random_layer(m, k, 75);
	unsigned char *file = malloc(64 + (size_t)m * k * 4);
	char *path = harness_join(tmp, "layer.bin");
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

static void test_pages_drop(void **state)
{
	const size_t n = 24u << 20;
	unsigned char *heap = malloc(n);
	char *path = harness_join(tmp, "pages.bin");
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

/* ---- the hash ---- */

/* The definition in hash.c, written out independently. */
static void ref_hash(const unsigned char *const *bufs, const uint64_t *sizes,
		     int n, char hex[33])
{
	const uint64_t chunk = 16u << 20;
	unsigned char *cat = malloc(4096);
	size_t at = 0;
	XXH128_canonical_t d;

	assert_non_null(cat);
	for (int f = 0; f < n; f++) {
		for (uint64_t o = 0; o < sizes[f]; o += chunk) {
			uint64_t len = sizes[f] - o < chunk ? sizes[f] - o : chunk;
			XXH128_canonicalFromHash(&d, XXH3_128bits(bufs[f] + o, len));
			memcpy(cat + at, d.digest, 16);
			at += 16;
		}
		for (int b = 7; b >= 0; b--)
			cat[at++] = (unsigned char)(sizes[f] >> (8 * b));
	}
	XXH128_canonicalFromHash(&d, XXH3_128bits(cat, at));
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d.digest[i]);
	free(cat);
}

static void hash_files(struct spp_mapped_file *files, int n, struct spp_hash *h)
{
	struct spp_model mdl;
	struct spp_error err;

	memset(&mdl, 0, sizeof(mdl));
	mdl.path = "model";
	mdl.format = "safetensors";
	mdl.files = files;
	mdl.nfiles = n;
	assert_int_equal(spp_model_hash(&mdl, h, &err), 0);
	assert_string_equal(h->algo, "xxh3-128/chunk16m");
	assert_int_equal(strlen(h->hex), 32);
	assert_int_equal(strspn(h->hex, "0123456789abcdef"), 32);
}

static void test_hash_bytes(void **state)
{
	const size_t n = (1u << 20) + 3;
	unsigned char *a = malloc(n), *b = malloc(n);
	struct spp_mapped_file f = {0};
	struct spp_hash ha, hb, hflip;
	char want[33];
	const unsigned char *bufs[1];
	uint64_t sizes[1] = {n};

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (unsigned char)(rnd() >> 11);
	f.base = a;
	f.size = n;
	hash_files(&f, 1, &ha);
	f.base = b;
	hash_files(&f, 1, &hb);
	assert_string_equal(ha.hex, hb.hex);
	b[n / 2] ^= 0x01;
	hash_files(&f, 1, &hflip);
	assert_string_not_equal(ha.hex, hflip.hex);
	bufs[0] = a;
	ref_hash(bufs, sizes, 1, want);
	assert_string_equal(ha.hex, want);
	free(a);
	free(b);
}

static void test_hash_large_file(void **state)
{
	const size_t n = 40u << 20;
	unsigned char *buf = malloc(n);
	unsigned char small[5] = {1, 2, 3, 4, 5};
	char *path = harness_join(tmp, "big.bin");
	struct spp_mapped_file files[3];
	struct spp_hash h1, h2, h3;
	struct spp_error err;
	char want[33], want3[33];
	const unsigned char *bufs[3];
	uint64_t sizes[3];
	int saved = omp_get_max_threads();

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = rnd();
		memcpy(buf + i, &r, 8);
	}
	assert_int_equal(harness_write(path, buf, n), 0);
	assert_int_equal(spp_mapfile_open(path, &files[0], &err), 0);
	assert_int_equal(files[0].size, n);
	omp_set_num_threads(1);
	hash_files(files, 1, &h1);
	omp_set_num_threads(2);
	hash_files(files, 1, &h2);
	omp_set_num_threads(saved);
	assert_string_equal(h1.hex, h2.hex);
	bufs[0] = buf;
	sizes[0] = n;
	ref_hash(bufs, sizes, 1, want);
	assert_string_equal(h1.hex, want);
	/* files in order, an empty one included: sizes are part of the input */
	memset(&files[1], 0, sizeof(files[1]));
	memset(&files[2], 0, sizeof(files[2]));
	files[2].base = small;
	files[2].size = sizeof(small);
	hash_files(files, 3, &h3);
	bufs[1] = NULL;
	bufs[2] = small;
	sizes[1] = 0;
	sizes[2] = sizeof(small);
	ref_hash(bufs, sizes, 3, want3);
	assert_string_equal(h3.hex, want3);
	assert_string_not_equal(h3.hex, h1.hex);
	spp_mapfile_close(&files[0]);
	free(buf);
	free(path);
}

static int setup(void **state)
{
	(void)state;
	tmp = harness_tmpdir();
	return tmp ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	harness_rmtree(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_5x7_counts),
		cmocka_unit_test(test_hand_5x7_storage),
		cmocka_unit_test(test_hand_channel_f16),
		cmocka_unit_test(test_hand_block_i8),
		cmocka_unit_test(test_hand_unstructured),
		cmocka_unit_test(test_hand_csr_60),
		cmocka_unit_test(test_class_dense_threshold),
		cmocka_unit_test(test_class_boundaries),
		cmocka_unit_test(test_all_zero),
		cmocka_unit_test(test_all_nonzero),
		cmocka_unit_test(test_dtype_zero_tests),
		cmocka_unit_test(test_packed_views),
		cmocka_unit_test(test_conv_k_order),
		cmocka_unit_test(test_conv_random),
		cmocka_unit_test(test_transposed_view),
		cmocka_unit_test(test_thread_invariance),
		cmocka_unit_test(test_tensor_nnz_ranks),
		cmocka_unit_test(test_scan_mapped_file),
		cmocka_unit_test(test_pages_drop),
		cmocka_unit_test(test_hash_bytes),
		cmocka_unit_test(test_hash_large_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
