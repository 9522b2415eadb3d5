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

#include <cmocka.h>

#include "base/share.h"
#include "profiler/static.h"
#include "test/profiler/metrics_fixture.h"

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
			    "not 1:4 compliant: 20% of groups hold more than 1 non-zero");
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
 * Block-quantized and sub-byte dtypes count whole bytes: Q8_0 (32 one-byte
 * codes and a 2-byte scale per block) on M 2, K 64, nnz 5: dense 2 rows x 2
 * blocks x 34 = 136; csr's 5 values keep their codes (5) and one scale per
 * 32 stored (2): 7 + 5*4 + 3*4 = 39, never 5 * 34/32 + ... = 37.3125. Q4_0
 * (4-bit codes): dense 4 * 18 = 72, csr ceil(5/2) + 2 + 32 = 37. F4: csr
 * ceil(5 * 4 / 8) + 32 = 35.
 */
static void test_storage_whole_bytes(void **state)
{
	struct spp_static_counts c = {0};
	struct spp_layer_static s;

	(void)state;
	c.m = 2;
	c.k = 64;
	c.nnz = 5;
	c.row_nnz_max = 5;
	for (int i = 0; i < SPP_NNM; i++)
		c.nm_groups[i] = c.nm_ok[i] = 2 * 64 / (uint64_t)spp_nm_patterns[i].m;
	for (int b = 0; b < SPP_NBLOCK; b++)
		c.blocks[b] = c.zero_blocks[b] = (uint64_t)(2 * 64 / spp_block_sizes[b] / spp_block_sizes[b] + 1);
	spp_static_derive(&c, SPP_DTYPE_Q8_0, 1, &s);
	assert_near(s.storage[SPP_ST_DENSE].bytes, 136, 0);
	assert_near(s.storage[SPP_ST_CSR].bytes, 39, 0);
	assert_near(s.storage[SPP_ST_COO].bytes, 7 + 40, 0);
	spp_static_derive(&c, SPP_DTYPE_Q4_0, 1, &s);
	assert_near(s.storage[SPP_ST_DENSE].bytes, 72, 0);
	assert_near(s.storage[SPP_ST_CSR].bytes, 37, 0);
	spp_static_derive(&c, SPP_DTYPE_F4, 1, &s);
	assert_near(s.storage[SPP_ST_DENSE].bytes, 64, 0);
	assert_near(s.storage[SPP_ST_CSR].bytes, 35, 0);
	for (int f = 0; f < SPP_ST_COUNT; f++)
		if (s.storage[f].applicable)
			assert_near(s.storage[f].bytes, floor(s.storage[f].bytes), 0);
}

/* A share that is not zero never reads as 0 %, nor one short of all as 100 %. */
static void test_share_text(void **state)
{
	char b[64];
	struct spp_error err = {0};

	(void)state;
	assert_string_equal(spp_share_text(1, 8, b, sizeof(b)), "12.5%");
	assert_string_equal(spp_share_text(0, 8, b, sizeof(b)), "0%");
	assert_string_equal(spp_share_text(8, 8, b, sizeof(b)), "100%");
	assert_string_equal(spp_share_text(4, 10000, b, sizeof(b)), "< 0.1% (4 of 10000)");
	assert_string_equal(spp_share_text(9999, 10000, b, sizeof(b)), "> 99.9% (9999 of 10000)");
	assert_string_equal(spp_share_text(1, 1000, b, sizeof(b)), "0.1%");
	assert_int_equal(spp_nm_check(2, 4, 10000, 4, &err), SPP_E_UNSUPPORTED);
	assert_string_equal(err.msg, "not 2:4 compliant: < 0.1% (4 of 10000) of groups hold more "
				     "than 2 non-zeros");
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
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_5x7_counts),
		cmocka_unit_test(test_hand_5x7_storage),
		cmocka_unit_test(test_storage_whole_bytes),
		cmocka_unit_test(test_share_text),
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
		cmocka_unit_test(test_coo_counts),
		cmocka_unit_test(test_conv_kernel_pruned),
		cmocka_unit_test(test_conv_pattern_pruned),
		cmocka_unit_test(test_conv_random_zeros),
		cmocka_unit_test(test_conv_no_kernels),
		cmocka_unit_test(test_conv_layouts),
		cmocka_unit_test(test_hash_bytes),
		cmocka_unit_test(test_hash_large_file),
	};
	return cmocka_run_group_tests(tests, metrics_setup, metrics_teardown);
}
