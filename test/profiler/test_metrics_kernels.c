/*
 * The kernels of a conv (static_kernels.c) against a plain recount over the
 * OIHW weights as stored, on synthetic convs built with the structure:
 * kernel-level pruning, 4-of-9 patterns in a few fixed shapes, random
 * zeros, and a 1x1 conv (no kernels to speak of); and the class of each.
 * One conv stored in each loader's layout (TFLite OHWI, TF.js HWIO, their
 * depthwise layouts) has the kernels of its OIHW twin.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profiler/static.h"
#include "test/profiler/metrics_fixture.h"

enum { O = 24, C = 10, KH = 3, KW = 3 };

/* The recount: zero kernels and each mask's kernels, straight from W[o][c][h][w]. */
static void recount(const float *w, uint64_t *zero, uint64_t counts[1 << 9])
{
	*zero = 0;
	memset(counts, 0, sizeof(uint64_t) << 9);
	for (int o = 0; o < O; o++)
		for (int c = 0; c < C; c++) {
			unsigned mask = 0;

			for (int q = 0; q < KH * KW; q++)
				if (w[((o * C + c) * KH * KW) + q] != 0)
					mask |= 1u << q;
			if (mask)
				counts[mask]++;
			else
				(*zero)++;
		}
}

/* Counts and class of the 24x10x3x3 conv w, checked against the recount. */
static void check_conv(const float *w, struct spp_layer_static *s)
{
	struct spp_tensor t;
	struct spp_static_counts c;
	const struct spp_kernel_counts *k = &c.kernel;
	int64_t shape[4] = {O, C, KH, KW};
	uint64_t zero, counts[1 << 9], distinct = 0;

	tensor_make(&t, SPP_DTYPE_F32, 4, shape, w);
	count_layer(&t, &c);
	recount(w, &zero, counts);
	for (int m = 1; m < 1 << 9; m++)
		distinct += counts[m] > 0;
	assert_int_equal(k->size, 9);
	assert_int_equal(k->ndims, 2);
	assert_true(k->dims[0] == 3 && k->dims[1] == 3);
	assert_int_equal(k->kernels, O * C);
	assert_int_equal(k->zero, zero);
	assert_int_equal(k->patterns, (int64_t)distinct);
	assert_int_equal(k->ntop, distinct < SPP_KERNEL_TOP ? (int)distinct : SPP_KERNEL_TOP);
	for (int i = 0; i < k->ntop; i++) {
		assert_int_equal(k->top_count[i], counts[k->top_mask[i]]);
		if (i > 0)
			assert_true(k->top_count[i - 1] > k->top_count[i] ||
				    (k->top_count[i - 1] == k->top_count[i] &&
				     k->top_mask[i - 1] < k->top_mask[i]));
	}
	/* nothing outside the top list has more kernels than its last */
	for (int m = 1; m < 1 << 9 && k->ntop == SPP_KERNEL_TOP; m++) {
		int listed = 0;

		for (int i = 0; i < k->ntop; i++)
			listed |= k->top_mask[i] == (uint64_t)m;
		assert_true(listed || counts[m] <= k->top_count[k->ntop - 1]);
	}
	spp_static_derive(&c, SPP_DTYPE_F32, 1, s);
}

static float value(void)
{
	return (float)(rnd() % 7) + 0.5f;
}

void test_conv_kernel_pruned(void **state)
{
	float *w = malloc(sizeof(float) * O * C * KH * KW);
	struct spp_layer_static s;

	(void)state;
	assert_non_null(w);
	/* 70 % of the kernels all zero, chosen at random; the others dense */
	for (int kc = 0; kc < O * C; kc++) {
		int zero = (int)(rnd() % 10) < 7;

		for (int q = 0; q < KH * KW; q++)
			w[kc * KH * KW + q] = zero ? 0.0f : value();
	}
	w[0] = w[1] = 1, w[9 * C] = 1; /* no zero row or column by accident */
	check_conv(w, &s);
	assert_int_equal(s.cls, SPP_CLASS_KERNEL);
	assert_true(s.gran[SPP_GRAN_KERNEL].fraction > 0.5 && s.gran[SPP_GRAN_KERNEL].fraction < 0.9);
	assert_near(s.gran[SPP_GRAN_KERNEL].zeros_share, 1.0, 0.05);
	free(w);
}

void test_conv_pattern_pruned(void **state)
{
	/* 4 of 9 kept, in four fixed shapes (a cross, corners, a row, a column pair) */
	static const unsigned shapes[4] = {0x0ba, 0x145, 0x038, 0x0db & 0x1c9};
	float *w = malloc(sizeof(float) * O * C * KH * KW);
	struct spp_layer_static s;

	(void)state;
	assert_non_null(w);
	for (int kc = 0; kc < O * C; kc++) {
		unsigned mask = shapes[rnd() % 4];

		for (int q = 0; q < KH * KW; q++)
			w[kc * KH * KW + q] = (mask >> q) & 1 ? value() : 0.0f;
	}
	check_conv(w, &s);
	assert_int_equal(s.cls, SPP_CLASS_PATTERN);
	assert_near(s.kernel_cover[0], 1.0, 0);
	assert_near(s.gran[SPP_GRAN_KERNEL].fraction, 0, 0);
	free(w);
}

void test_conv_random_zeros(void **state)
{
	float *w = malloc(sizeof(float) * O * C * KH * KW);
	struct spp_layer_static s;

	(void)state;
	assert_non_null(w);
	for (int e = 0; e < O * C * KH * KW; e++)
		w[e] = rnd() % 2 ? value() : 0.0f;
	check_conv(w, &s);
	assert_int_equal(s.cls, SPP_CLASS_UNSTRUCTURED);
	assert_true(s.counts.kernel.patterns > 100);
	assert_true(s.kernel_cover[2] < 0.5);
	free(w);
}

/* A 1x1 conv has no kernels to speak of; a linear layer neither. */
void test_conv_no_kernels(void **state)
{
	float w[4 * 6];
	struct spp_tensor t;
	struct spp_static_counts c;
	struct spp_layer_static s;
	int64_t shape4[4] = {4, 6, 1, 1}, shape2[2] = {4, 6};

	(void)state;
	for (int e = 0; e < 24; e++)
		w[e] = e % 3 ? 1.0f : 0.0f;
	tensor_make(&t, SPP_DTYPE_F32, 4, shape4, w);
	count_layer(&t, &c);
	assert_int_equal(c.kernel.size, 0);
	spp_static_derive(&c, SPP_DTYPE_F32, 1, &s);
	assert_true(!s.gran[SPP_GRAN_KERNEL].defined && isnan(s.kernel_cover[0]));
	tensor_make(&t, SPP_DTYPE_F32, 2, shape2, w);
	count_layer(&t, &c);
	assert_int_equal(c.kernel.size, 0);
}

/*
 * The kernels of a [shape] weight stored in layout, seen through the GEMM
 * view its loader makes: OIHW's of profiler/layer.c, else M rows of a
 * row-major W = [M, K] or, transposed, W = [K, M]^T (profiler/load_tflite.c,
 * load_tfjs.c).
 */
enum view_kind { OIHW_VIEW, ROWS, COLS };

static void layout_kernels(enum spp_layout layout, const int64_t *shape, const float *w,
			   int64_t m, enum view_kind v, struct spp_kernel_counts *out)
{
	struct spp_tensor t;
	struct spp_layer l;
	struct spp_static_counts c;
	struct spp_error err;
	int64_t k;

	tensor_make(&t, SPP_DTYPE_F32, 4, shape, w);
	spp_layer_init(&l, &t, 128);
	k = (int64_t)t.numel / m;
	l.layout = layout;
	if (v != OIHW_VIEW)
		l.view = (struct spp_gemm_view){.m = m, .k = k, .row_stride = v == COLS ? 1 : k,
						.inner = k, .inner_stride = v == COLS ? m : 1};
	assert_int_equal(spp_static_count(&l, &c, &err), 0);
	*out = c.kernel;
}

static void assert_kernels_eq(const struct spp_kernel_counts *a, const struct spp_kernel_counts *b)
{
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->ndims, b->ndims);
	for (int d = 0; d < a->ndims; d++)
		assert_int_equal(a->dims[d], b->dims[d]);
	assert_int_equal(a->kernels, b->kernels);
	assert_int_equal(a->zero, b->zero);
	assert_int_equal(a->channels, b->channels);
	assert_int_equal(a->zero_channels, b->zero_channels);
	assert_int_equal(a->patterns, b->patterns);
	assert_int_equal(a->ntop, b->ntop);
	for (int i = 0; i < a->ntop; i++) {
		assert_int_equal(a->top_mask[i], b->top_mask[i]);
		assert_int_equal(a->top_count[i], b->top_count[i]);
	}
}

enum { LO = 6, LC = 4, LH = 2, LW = 3, LMULT = 2 };

/* A kernel-pruned [n, c, LH, LW]: half the kernels zero, input channel 1 whole, a
 * single zero in some others. */
static void kernel_pruned(float *w, int n, int c)
{
	for (int e = 0; e < n * c * LH * LW; e++)
		w[e] = value();
	for (int kc = 0; kc < n * c; kc++) {
		int what = (int)(rnd() % 4);

		for (int q = 0; q < LH * LW; q++)
			if (what < 2 || (c > 1 && kc % c == 1) || (what == 2 && q == kc % (LH * LW)))
				w[kc * LH * LW + q] = 0.0f;
	}
}

/*
 * Issue 46 item 1: TFLite's OHWI [24, 5, 5, 3] had kernels 5x3, 120 of them
 * and 5 channels, read as OIHW; a TF.js conv had none. Every layout's
 * kernels are its OIHW twin's, in the twin's bit order.
 */
void test_conv_layouts(void **state)
{
	float oihw[LO * LC * LH * LW], ohwi[LO * LC * LH * LW], hwio[LO * LC * LH * LW];
	float dw[LC * LMULT * LH * LW], hwo[LC * LMULT * LH * LW];
	int64_t s_oihw[4] = {LO, LC, LH, LW}, s_ohwi[4] = {LO, LH, LW, LC};
	int64_t s_hwio[4] = {LH, LW, LC, LO}, s_dw[4] = {LC * LMULT, 1, LH, LW};
	int64_t s_1hwo[4] = {1, LH, LW, LC * LMULT}, s_hwim[4] = {LH, LW, LC, LMULT};
	struct spp_kernel_counts want, got;

	(void)state;
	kernel_pruned(oihw, LO, LC);
	kernel_pruned(dw, LC * LMULT, 1);
	for (int o = 0; o < LO; o++)
		for (int c = 0; c < LC; c++)
			for (int h = 0; h < LH; h++)
				for (int x = 0; x < LW; x++) {
					float v = oihw[((o * LC + c) * LH + h) * LW + x];

					ohwi[((o * LH + h) * LW + x) * LC + c] = v;
					hwio[((h * LW + x) * LC + c) * LO + o] = v;
				}
	/* depthwise output channel o = c * mult + m: [1, h, w, o] and [h, w, c, m] alike */
	for (int o = 0; o < LC * LMULT; o++)
		for (int q = 0; q < LH * LW; q++)
			hwo[q * LC * LMULT + o] = dw[o * LH * LW + q];

	layout_kernels(SPP_LAYOUT_OIHW, s_oihw, oihw, LO, OIHW_VIEW, &want);
	assert_true(want.ndims == 2 && want.dims[0] == LH && want.dims[1] == LW);
	assert_true(want.kernels == LO * LC && want.channels == LC && want.zero_channels >= 1);
	layout_kernels(SPP_LAYOUT_OHWI, s_ohwi, ohwi, LO, ROWS, &got);
	assert_kernels_eq(&got, &want);
	layout_kernels(SPP_LAYOUT_HWIO, s_hwio, hwio, LO, COLS, &got);
	assert_kernels_eq(&got, &want);

	layout_kernels(SPP_LAYOUT_OIHW, s_dw, dw, LC * LMULT, OIHW_VIEW, &want);
	assert_true(want.dims[0] == LH && want.kernels == LC * LMULT && want.channels == 1);
	layout_kernels(SPP_LAYOUT_1HWO, s_1hwo, hwo, LC * LMULT, COLS, &got);
	assert_kernels_eq(&got, &want);
	layout_kernels(SPP_LAYOUT_HWIM, s_hwim, hwo, LC * LMULT, COLS, &got);
	assert_kernels_eq(&got, &want);
}
