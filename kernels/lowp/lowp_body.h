/*
 * The lowp vector kernels, written once on simd.h + simd_lowp.h and
 * compiled per path by the thin files (lowp_avx2.c, ...), which define
 * the ISA, LP_TARGET_STR, LP_VNNI, LP_BF16 and LP_TABLE first; this
 * header then defines that path's table (lowp_impl.h).
 *
 * One vector of Y columns at a time at N >= 2 (VL columns, the row's
 * entries read once per vector), one row's entries VL at a time at N = 1.
 *
 * int8 at N >= 2 (csr, nm): a non-zero w at column c meets the dword of
 * X's K4 layout holding rows 4(c/4)..+3 of VL columns, with w in byte c%4
 * of the broadcast and 0 in the other three: one load and one vpdpbusd a
 * non-zero, where gathering 4 non-zeros' X into a quad would take a 4 x VL
 * byte transpose (or 4 shuffles) per vpdpbusd it saves. bsr1x4 and the
 * N = 1 kernels use the 4-element dot as it is meant: a block's 4 values,
 * or 4 slots (nm) / 4 lanes' gathered bytes, per dword.
 */
#ifndef SPP_KERNELS_LOWP_LOWP_BODY_H
#define SPP_KERNELS_LOWP_LOWP_BODY_H

#include "kernels/lowp/simd_lowp.h"

/*
 * csr in bf16 / fp16: converted to fp32 and FMA; with AVX512_BF16, bf16
 * at N >= 2 takes two non-zeros a vdpbf16ps (at N = 1 the pairs' X would
 * need two gathers of deinterleaved columns: converted there too).
 */
LPI void csr_h_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		    const struct spp_lowp_x *x, float *y, const int f16)
{
	const uint16_t *val = w->val, *xv = x->v;
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++) {
		int64_t lo = w->ptr[i], hi = w->ptr[i + 1];

		if (n == 1) {
			simd_f acc = simd_zero();

			for (int64_t j = lo; j < hi; j += SIMD_VL) {
				int64_t left = hi - j;
				simd_m m = simd_first(left);
				simd_i idx = simd_idx(0, w->col, j, left, m);

				acc = simd_fmadd(lp_h2f(f16, val + j, left), lp_hgather(f16, xv, idx, m), acc);
			}
			y[i] = simd_hsum(acc);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_f acc = simd_zero();
			int64_t t = lo;

#if LP_BF16
			/* two non-zeros a vdpbf16ps: their X rows' columns interleaved into pairs */
			for (; !f16 && t + 1 < hi; t += 2) {
				uint32_t wp;

				memcpy(&wp, val + t, 4);
				acc = lp_dpbf16(acc, lp_ior(lp_h16(xv + w->col[t] * n + j0, cw),
							    lp_isllv(lp_h16(xv + w->col[t + 1] * n + j0, cw), 16)),
						lp_iset1((int32_t)wp));
			}
#endif
			for (; t < hi; t++)
				acc = simd_fmadd(lp_fset1(lp_h1(f16, val[t])),
						 lp_h2f(f16, xv + w->col[t] * n + j0, cw), acc);
			simd_st(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc);
		}
	}
}

LP_KERN void csr_bf16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y)
{
	csr_h_rows(w, r0, r1, x, y, 0);
}

LP_KERN void csr_fp16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y)
{
	csr_h_rows(w, r0, r1, x, y, 1);
}

/* One int8 non-zero w at column c over VL columns from j0: acc + w * x[c][j0..]. */
LPI simd_i i8_one(simd_i acc, int8_t w, int64_t c, const uint8_t *xb, int64_t n, int64_t j0,
		  int64_t cw)
{
	simd_i b = lp_iset1((int32_t)((uint32_t)(uint8_t)w << (8 * (c & 3))));

	return lp_dpbusd(acc, lp_ld32(xb + ((c >> 2) * n + j0) * 4, cw), b);
}

/*
 * csr in int8. N = 1: VL non-zeros a step, each lane's byte gathered with
 * its dword (the other 3 bytes meet 0 in the zero-extended values).
 */
LP_KERN void csr_int8(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y)
{
	const int8_t *val = w->val;
	const uint8_t *xb = x->v;
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++) {
		int64_t lo = w->ptr[i], hi = w->ptr[i + 1];
		int32_t corr = 128 * w->qsum[i];
		float s = lp_yscale(w, x, i);

		if (n == 1) {
			simd_i acc = lp_izero();

			for (int64_t j = lo; j < hi; j += SIMD_VL) {
				int64_t left = hi - j;
				simd_m m = simd_first(left);
				simd_i idx = simd_idx(0, w->col, j, left, m);

				acc = lp_dpbusd(acc, lp_gather8(xb, idx, m), lp_u8(val + j, left));
			}
			y[i] = (float)(lp_ihsum(acc) - corr) * s;
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_i acc = lp_izero();

			for (int64_t t = lo; t < hi; t++)
				acc = i8_one(acc, val[t], w->col[t], xb, n, j0, cw);
			lp_st_i8(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc, corr, s);
		}
	}
}

#include "kernels/lowp/nm_body.h"

/*
 * bsr1x4 in int8: a block's 4 values are one dword against the dword of
 * X holding its 4 K (N = 1: gathered, VL blocks a step; N >= 2: the K4
 * layout's VL columns), one vpdpbusd a block.
 */
LP_KERN void bsr1x4_int8(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			 const struct spp_lowp_x *x, float *y)
{
	const int32_t *val = w->val;  /* 4 int8 a block, read as one dword */
	const uint8_t *xb = x->v;
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++) {
		int64_t lo = w->ptr[i], hi = w->ptr[i + 1];
		int32_t corr = 128 * w->qsum[i];
		float s = lp_yscale(w, x, i);

		if (n == 1) {
			simd_i acc = lp_izero();

			for (int64_t t = lo; t < hi; t += SIMD_VL) {
				int64_t left = hi - t;
				simd_m m = simd_first(left);
				simd_i idx = simd_idx(0, w->col, t, left, m);

				acc = lp_dpbusd(acc, lp_gather8(xb, idx, m), lp_ld32(val + t, left));
			}
			y[i] = (float)(lp_ihsum(acc) - corr) * s;
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_i acc = lp_izero();

			for (int64_t t = lo; t < hi; t++) {
				int32_t wq;

				memcpy(&wq, val + t, 4);
				acc = lp_dpbusd(acc, lp_ld32(xb + ((int64_t)w->col[t] >> 2) * n * 4 + j0 * 4, cw),
						lp_iset1(wq));
			}
			lp_st_i8(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc, corr, s);
		}
	}
}

/*
 * bsr1x4 in bf16 / fp16: converted and FMA. N = 1: VL / 4 blocks a step,
 * each block's 4 X values one 64-bit gather; N >= 2: a value's X row.
 */
LPI void bsr_h_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		    const struct spp_lowp_x *x, float *y, const int f16)
{
	const uint16_t *val = w->val, *xv = x->v;
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++) {
		int64_t lo = w->ptr[i], hi = w->ptr[i + 1];

		if (n == 1) {
			simd_f acc = simd_zero();

			for (int64_t t = lo; t < hi; t += SIMD_VL / 4)
				acc = simd_fmadd(lp_h2f(f16, val + 4 * t, 4 * (hi - t)),
						 lp_hgather4(f16, xv, w->col, t, hi - t), acc);
			y[i] = simd_hsum(acc);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_f acc = simd_zero();

			for (int64_t t = 4 * lo; t < 4 * hi; t++)
				if (val[t]) /* the zeros of a block, its padding past k */
					acc = simd_fmadd(lp_fset1(lp_h1(f16, val[t])),
							 lp_h2f(f16, xv + (w->col[t / 4] + t % 4) * n + j0, cw),
							 acc);
			simd_st(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc);
		}
	}
}

LP_KERN void bsr1x4_bf16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			 const struct spp_lowp_x *x, float *y)
{
	bsr_h_rows(w, r0, r1, x, y, 0);
}

LP_KERN void bsr1x4_fp16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			 const struct spp_lowp_x *x, float *y)
{
	bsr_h_rows(w, r0, r1, x, y, 1);
}

/* Row i's mask bits of columns [c0, c0 + 16) (mstride pads rows to 16 bits). */
LPI unsigned bm_bits16(const struct spp_lowp_w *w, int64_t i, int64_t c0)
{
	uint16_t b;

	memcpy(&b, w->mask + i * w->mstride + c0 / 8, 2);
	return b;
}

/*
 * bitmask at N >= 2, every precision: each set bit's value times its X
 * row (bf16 / fp16 converted, int8 as csr's), one vector of Y at a time.
 */
LPI void bm_rows_wide(const struct spp_lowp_w *w, int64_t i, const struct spp_lowp_x *x,
		      float *y, const int f16)
{
	int64_t n = x->n;

	for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
		int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL, t = w->ptr[i];
		simd_f acc = simd_zero();
		simd_i iacc = lp_izero();

		for (int64_t c0 = 0; c0 < w->k; c0 += 16)
			for (unsigned b = bm_bits16(w, i, c0); b; b &= b - 1, t++) {
				int64_t c = c0 + __builtin_ctz(b);

				if (w->prec == SPP_PREC_INT8)
					iacc = i8_one(iacc, ((const int8_t *)w->val)[t], c, x->v, n, j0, cw);
				else
					acc = simd_fmadd(lp_fset1(lp_h1(f16, ((const uint16_t *)w->val)[t])),
							 lp_h2f(f16, (const uint16_t *)x->v + c * n + j0, cw), acc);
			}
		if (w->prec == SPP_PREC_INT8)
			lp_st_i8(cw == SIMD_VL, simd_first(cw), y + i * n + j0, iacc, 128 * w->qsum[i],
				 lp_yscale(w, x, i));
		else
			simd_st(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc);
	}
}

/*
 * bitmask at N = 1: 16 columns a step, x's 16 loaded whole and the row's
 * next popcount values expanded into the mask's lanes (AVX-512's
 * vexpandps / vpexpandd); AVX2 has no expand: bit by bit.
 */
LPI void bm_row_n1(const struct spp_lowp_w *w, int64_t i, const struct spp_lowp_x *x, float *y,
		   const int f16)
{
	const uint16_t *vh = w->val, *xh = x->v;
	const int8_t *v8 = w->val;
	const uint8_t *x8 = x->v;
	int64_t t = w->ptr[i];
	int32_t isum = 0;
	float fsum = 0;
#if SIMD_VL == 16
	simd_f acc = simd_zero();
	simd_i iacc = lp_izero();
#endif

	for (int64_t c0 = 0; c0 < w->k; c0 += 16) {
		unsigned b = bm_bits16(w, i, c0);

		if (!b)
			continue;
#if SIMD_VL == 16
		int pop = __builtin_popcount(b);

		if (w->prec == SPP_PREC_INT8)
			iacc = lp_dpbusd(iacc, lp_u8((const int8_t *)x8 + c0, w->k - c0),
					 _mm512_maskz_expand_epi32((__mmask16)b, lp_u8(v8 + t, pop)));
		else
			acc = simd_fmadd(_mm512_maskz_expand_ps((__mmask16)b, lp_h2f(f16, vh + t, pop)),
					 lp_h2f(f16, xh + c0, w->k - c0), acc);
		t += pop;
#else
		for (; b; b &= b - 1, t++) {
			int64_t c = c0 + __builtin_ctz(b);

			if (w->prec == SPP_PREC_INT8)
				isum += v8[t] * x8[c];
			else
				fsum += lp_h1(f16, vh[t]) * lp_h1(f16, xh[c]);
		}
#endif
	}
#if SIMD_VL == 16
	isum = lp_ihsum(iacc);
	fsum = simd_hsum(acc);
#endif
	y[i] = w->prec == SPP_PREC_INT8 ? (float)(isum - 128 * w->qsum[i]) * lp_yscale(w, x, i) : fsum;
}

LPI void bm_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1, const struct spp_lowp_x *x,
		 float *y, const int f16)
{
	for (int64_t i = r0; i < r1; i++)
		if (x->n == 1)
			bm_row_n1(w, i, x, y, f16);
		else
			bm_rows_wide(w, i, x, y, f16);
}

LP_KERN void bitmask_bf16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			  const struct spp_lowp_x *x, float *y)
{
	bm_rows(w, r0, r1, x, y, 0);
}

LP_KERN void bitmask_fp16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			  const struct spp_lowp_x *x, float *y)
{
	bm_rows(w, r0, r1, x, y, 1);
}

LP_KERN void bitmask_int8(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			  const struct spp_lowp_x *x, float *y)
{
	bm_rows(w, r0, r1, x, y, 0);
}

/* The path's table: every kernel; LP_ONLY_INT8: the int8 ones; LP_ONLY_BF16: csr and nm in bf16. */
#if defined(LP_ONLY_INT8)
const struct lp_table LP_TABLE = { .k = {
	[SPP_LOWP_CSR] = { [SPP_PREC_INT8] = csr_int8 },
	[SPP_LOWP_NM2_4] = { [SPP_PREC_INT8] = nm2_4_int8 },
	[SPP_LOWP_NM4_8] = { [SPP_PREC_INT8] = nm4_8_int8 },
	[SPP_LOWP_BSR1X4] = { [SPP_PREC_INT8] = bsr1x4_int8 },
	[SPP_LOWP_BITMASK] = { [SPP_PREC_INT8] = bitmask_int8 },
} };
#elif defined(LP_ONLY_BF16)
const struct lp_table LP_TABLE = { .k = {
	[SPP_LOWP_CSR] = { [SPP_PREC_BF16] = csr_bf16 },
	[SPP_LOWP_NM2_4] = { [SPP_PREC_BF16] = nm2_4_bf16 },
	[SPP_LOWP_NM4_8] = { [SPP_PREC_BF16] = nm4_8_bf16 },
} };
#else
const struct lp_table LP_TABLE = { .k = {
	[SPP_LOWP_CSR] = { [SPP_PREC_BF16] = csr_bf16, [SPP_PREC_FP16] = csr_fp16,
			   [SPP_PREC_INT8] = csr_int8 },
	[SPP_LOWP_NM2_4] = { [SPP_PREC_BF16] = nm2_4_bf16, [SPP_PREC_FP16] = nm2_4_fp16,
			     [SPP_PREC_INT8] = nm2_4_int8 },
	[SPP_LOWP_NM4_8] = { [SPP_PREC_BF16] = nm4_8_bf16, [SPP_PREC_FP16] = nm4_8_fp16,
			     [SPP_PREC_INT8] = nm4_8_int8 },
	[SPP_LOWP_BSR1X4] = { [SPP_PREC_BF16] = bsr1x4_bf16, [SPP_PREC_FP16] = bsr1x4_fp16,
			      [SPP_PREC_INT8] = bsr1x4_int8 },
	[SPP_LOWP_BITMASK] = { [SPP_PREC_BF16] = bitmask_bf16, [SPP_PREC_FP16] = bitmask_fp16,
			       [SPP_PREC_INT8] = bitmask_int8 },
} };
#endif

#endif
