/* bsrB kernels for AVX2 (see bsr.c for the layout). */
#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N >= 2: a register tile of rg rows (from row r0 of the block) x nv ymm;
 * rg*nv <= 8 leaves room in the 16 ymm registers for X and the broadcast.
 */
INL256 void bsr_tile256(const int B, const int rg, const int nv, const int full,
			const struct cpu_bsr *s, int64_t br, int r0, int64_t k,
			int64_t rr, const float *x, float *y, int64_t n, __m256i mt,
			const struct spp_epi *e)
{
	__m256 a[8][4];

	SPP_UNROLL(8)
	for (int r = 0; r < rg; r++)
		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[r][v] = _mm256_setzero_ps();
	SPP_TRACE_LOAD(&s->ptr[br], 8);
	for (int32_t q = s->ptr[br]; q < s->ptr[br + 1]; q++) {
		int64_t bc = s->bcol[q];
		int kc = k - bc * B < B ? (int)(k - bc * B) : B;
		const float *wb = s->val + (int64_t)q * B * B + r0 * B;
		const float *xb = x + bc * B * n;

		SPP_TRACE_LOAD(&s->bcol[q], 4);

		for (int c = 0; c < kc; c++) {
			__m256 xv[4];

			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				xv[v] = simd_ld(full || v < nv - 1, mt, xb + c * n + 8 * v);
			SPP_UNROLL(8)
			for (int r = 0; r < rg; r++) {
				__m256 wv = simd_bcast(wb + r * B + c);

				SPP_UNROLL(4)
				for (int v = 0; v < nv; v++)
					a[r][v] = _mm256_fmadd_ps(wv, xv[v], a[r][v]);
			}
		}
	}
	SPP_UNROLL(8)
	for (int r = 0; r < rg; r++)
		if (r0 + r < rr)
			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				simd_st(full || v < nv - 1, mt, y + (br * B + r0 + r) * n + 8 * v,
					simd_epi(e, br * B + r0 + r, a[r][v]));
}

/* N = 1: one accumulator per block row (B = 16: two ymm per row). */
INL256 void bsr_vec256(const int B, const struct cpu_bsr *s, int64_t br,
		       int64_t k, int64_t rr, const float *x, float *y, const struct spp_epi *e)
{
	__m256 a[16];
	__m128 h[4];

	SPP_UNROLL(16)
	for (int r = 0; r < B; r++)
		a[r] = _mm256_setzero_ps();
	SPP_UNROLL(4)
	for (int r = 0; r < 4; r++)
		h[r] = _mm_setzero_ps();
	SPP_TRACE_LOAD(&s->ptr[br], 8);
	for (int32_t q = s->ptr[br]; q < s->ptr[br + 1]; q++) {
		int64_t bc = s->bcol[q];
		int64_t kc = k - bc * B < B ? k - bc * B : B;
		const float *wb = s->val + (int64_t)q * B * B;

		SPP_TRACE_LOAD(&s->bcol[q], 4);

		if (B == 4) {
			__m128 xv = _mm_maskload_ps(x + bc * B, _mm256_castsi256_si128(tail_mask256(kc)));

			SPP_TRACE_MASKED(x + bc * B, 4, (1u << kc) - 1, 0);
			SPP_TRACE_LOAD(wb, 64);
			SPP_UNROLL(4)
			for (int r = 0; r < 4; r++)
				h[r] = _mm_fmadd_ps(_mm_loadu_ps(wb + r * 4), xv, h[r]);
		} else {
			SPP_UNROLL(2)
			for (int c8 = 0; c8 < B; c8 += 8) {
				__m256 xv = simd_maskz_loadu(tail_mask256(kc - c8 < 0 ? 0 : kc - c8),
							     x + bc * B + c8);

				SPP_UNROLL(16)
				for (int r = 0; r < B; r++)
					a[r] = _mm256_fmadd_ps(simd_loadu(wb + r * B + c8), xv, a[r]);
			}
		}
	}
	for (int r = 0; r < rr; r++) {
		SPP_TRACE_STORE(&y[br * B + r], 4);
		if (B == 4) {
			__m128 t = h[r];

			t = _mm_add_ps(t, _mm_movehl_ps(t, t));
			t = _mm_add_ss(t, _mm_movehdup_ps(t));
			y[br * B + r] = cpu_epi1(e, br * B + r, _mm_cvtss_f32(t));
		} else {
			y[br * B + r] = cpu_epi1(e, br * B + r, hsum256(a[r]));
		}
	}
}

INL256 void bsr_rows256(const int B, const struct cpu_bsr *s, int64_t b0,
			int64_t b1, int64_t m, int64_t k, const float *x,
			float *y, int64_t n, const struct spp_epi *e)
{
	const int nvmax = B == 4 ? 2 : 1, rg = B == 4 ? 4 : 8;
	const int64_t cwmax = 8 * nvmax;

	for (int64_t br = b0; br < b1; br++) {
		int64_t rr = m - br * B < B ? m - br * B : B;

		if (n == 1) {
			bsr_vec256(B, s, br, k, rr, x, y, e);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += cwmax) {
			int64_t cw = n - j0 < cwmax ? n - j0 : cwmax;
			__m256i mt = tail_mask256(cw % 8 ? cw % 8 : 8);
			int nv = (int)((cw + 7) / 8), full = cw % 8 == 0;

			for (int r0 = 0; r0 < B && r0 < rr; r0 += rg) {
				if (nv == 2 && full)
					bsr_tile256(B, rg, B == 4 ? 2 : 1, 1, s, br, r0, k, rr, x + j0, y + j0, n, mt, e);
				else if (nv == 2)
					bsr_tile256(B, rg, B == 4 ? 2 : 1, 0, s, br, r0, k, rr, x + j0, y + j0, n, mt, e);
				else if (full)
					bsr_tile256(B, rg, 1, 1, s, br, r0, k, rr, x + j0, y + j0, n, mt, e);
				else
					bsr_tile256(B, rg, 1, 0, s, br, r0, k, rr, x + j0, y + j0, n, mt, e);
			}
		}
	}
}

CPU_AVX2 void cpu_bsr_part_avx2(const struct spp_encoded *w, int p, const float *x, float *y,
				int64_t n, const struct spp_epi *e)
{
	const struct cpu_bsr *s = w->impl;
	int64_t b0, b1;

	if (!cpu_part_range(s->lo, p, &b0, &b1))
		return;

	if (s->b == 4)
		bsr_rows256(4, s, b0, b1, w->m, w->k, x, y, n, e);
	else if (s->b == 8)
		bsr_rows256(8, s, b0, b1, w->m, w->k, x, y, n, e);
	else
		bsr_rows256(16, s, b0, b1, w->m, w->k, x, y, n, e);
}
#endif
