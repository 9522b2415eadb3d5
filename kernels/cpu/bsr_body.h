/*
 * The bsrB vector kernel (see bsr.c for the layout), written once against
 * simd.h and compiled per ISA by bsr_avx2.c and bsr_avx512.c, which define
 * SIMD_AVX2 / SIMD_AVX512 and their N = 1 block-row product
 * bsr_vec(B, s, br, k, rr, x, y, e) first: cpu_bsr_part_avx2 / _avx512.
 *
 * N >= 2: a register tile of rg rows of a block row x nv vectors of Y,
 * rg * nv accumulators, half the register file (16 ymm on AVX2, 32 zmm on
 * AVX-512) so that X's vectors and W's broadcast have the rest: each X row
 * of a block is loaded once per tile and used by its rg rows.
 *
 * Before this body each ISA had its own hand-written copy. Measured
 * against them (EPYC Zen 4, 1 thread pinned, load 0.3-0.7, steal 0;
 * block4/8/16 and unstructured layers of 768-3072 rows, N = 64, new/old
 * time, geometric mean over 4 layers, two runs): AVX-512 bsr4 0.99 and
 * 0.98, bsr8 0.98 and 0.99, bsr16 0.96 and 0.96; AVX2 (SPPROF_ISA=avx2)
 * bsr4 0.99 and 0.97, bsr8 0.95 and 0.95, bsr16 0.80 and 0.79 (the whole
 * block's unrolled column loop, which only the AVX-512 copy had). The
 * N = 1 products stay each ISA's own (bsr_avx2.c, bsr_avx512.c).
 */
#ifndef SPP_KERNELS_CPU_BSR_BODY_H
#define SPP_KERNELS_CPU_BSR_BODY_H

#include "kernels/cpu/cpu.h"

#if CPU_X86
/* Accumulators of a tile: 8 ymm, 16 zmm. */
#define BSR_ACC (SIMD_VL == 16 ? 16 : 8)
/* Vectors of Y a tile spans for bsrB (1 to 4), and the rows it holds. */
#define BSR_NV(B) (BSR_ACC / (B) > 4 ? 4 : BSR_ACC / (B) < 1 ? 1 : BSR_ACC / (B))
#define BSR_RG(B) ((B) < BSR_ACC / BSR_NV(B) ? (B) : BSR_ACC / BSR_NV(B))

/* Column c of a block (wb: its first row of the tile, xr: X's row c) into the tile's accumulators. */
SIMD_INL void bsr_column(const int B, const int rg, const int nv, const int full, simd_m mt,
			 const float *wb, int c, const float *xr, simd_f a[16][4])
{
	simd_f xv[4];

	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		xv[v] = simd_ld(full || v < nv - 1, mt, xr + SIMD_VL * v);
	SPP_UNROLL(16)
	for (int r = 0; r < rg; r++) {
		simd_f wv = simd_bcast(wb + r * B + c);

		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[r][v] = simd_fmadd(wv, xv[v], a[r][v]);
	}
}

/*
 * The tile of rows [r0, r0 + rg) of block row br (rr rows of it are in
 * the matrix), nv vectors of Y from x and y (a chunk's first column), the
 * last one whole when full; the epilogue as Y is stored.
 */
SIMD_INL void bsr_tile(const int B, const int rg, const int nv, const int full,
		       const struct cpu_bsr *s, int64_t br, int r0, int64_t k, int64_t rr,
		       const float *x, float *y, int64_t n, simd_m mt, const struct spp_epi *e)
{
	simd_f a[16][4];

	SPP_UNROLL(16)
	for (int r = 0; r < rg; r++)
		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[r][v] = simd_zero();
	SPP_TRACE_LOAD(&s->ptr[br], 8);
	for (int32_t q = s->ptr[br]; q < s->ptr[br + 1]; q++) {
		int64_t bc = s->bcol[q];
		const float *wb = s->val + (int64_t)q * B * B + r0 * B;
		const float *xb = x + bc * B * n;

		SPP_TRACE_LOAD(&s->bcol[q], 4);
		/* a whole block: B columns, a constant count the loop unrolls by */
		if (k - bc * B >= B) {
			SPP_UNROLL(16)
			for (int c = 0; c < B; c++)
				bsr_column(B, rg, nv, full, mt, wb, c, xb + c * n, a);
		} else {
			for (int c = 0; c < k - bc * B; c++)
				bsr_column(B, rg, nv, full, mt, wb, c, xb + c * n, a);
		}
	}
	SPP_UNROLL(16)
	for (int r = 0; r < rg; r++)
		if (r0 + r < rr)
			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				simd_st(full || v < nv - 1, mt, y + (br * B + r0 + r) * n + SIMD_VL * v,
					simd_epi(e, br * B + r0 + r, a[r][v]));
}

/* Block rows [b0, b1) of a bsrB encoding; B a constant of each call. */
SIMD_INL void bsr_rows(const int B, const struct cpu_bsr *s, int64_t b0, int64_t b1, int64_t m,
		       int64_t k, const float *x, float *y, int64_t n, const struct spp_epi *e)
{
	const int nvmax = BSR_NV(B), rg = BSR_RG(B);
	const int64_t cwmax = (int64_t)SIMD_VL * nvmax;

	for (int64_t br = b0; br < b1; br++) {
		int64_t rr = m - br * B < B ? m - br * B : B;

		if (n == 1) {
			bsr_vec(B, s, br, k, rr, x, y, e);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += cwmax) {
			int64_t cw = n - j0 < cwmax ? n - j0 : cwmax;
			simd_m mt = simd_chunk_tail(cw);

			for (int r0 = 0; r0 < rr; r0 += rg) {
#define BSR_BODY(nv, full) \
	bsr_tile(B, rg, (nv) < nvmax ? (nv) : nvmax, full, s, br, r0, k, rr, x + j0, y + j0, n, mt, e)
				SIMD_CHUNK_DISPATCH(cw, BSR_BODY);
#undef BSR_BODY
			}
		}
	}
}

SIMD_TARGET void SIMD_NAME(cpu_bsr_part)(const struct spp_encoded *w, int p, const float *x,
					 float *y, int64_t n, const struct spp_epi *e)
{
	const struct cpu_bsr *s = w->impl;
	int64_t b0, b1;

	if (!cpu_part_range(s->lo, p, &b0, &b1))
		return;
	if (s->b == 4)
		bsr_rows(4, s, b0, b1, w->m, w->k, x, y, n, e);
	else if (s->b == 8)
		bsr_rows(8, s, b0, b1, w->m, w->k, x, y, n, e);
	else
		bsr_rows(16, s, b0, b1, w->m, w->k, x, y, n, e);
}
#endif

#endif
