/* bsrB kernels for AVX-512 (see bsr.c for the layout). */
#define SIMD_AVX512 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N >= 2: a register tile of B rows x nv vectors (B*nv <= 16 zmm) of one
 * block row; each X row of a block is loaded once and used by B rows.
 */
INL512 void bsr_row512(const int B, const int nv, const int full,
		       const struct cpu_bsr *s, int64_t br, int64_t k, int64_t rr,
		       const float *x, float *y, int64_t n, __mmask16 mt)
{
	__m512 a[16][4];

	SPP_UNROLL(16)
	for (int r = 0; r < B; r++)
		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[r][v] = _mm512_setzero_ps();
	SPP_TRACE_LOAD(&s->ptr[br], 8);
	for (int32_t q = s->ptr[br]; q < s->ptr[br + 1]; q++) {
		int64_t bc = s->bcol[q];
		const float *wb = s->val + (int64_t)q * B * B;
		const float *xb = x + bc * B * n;

		SPP_TRACE_LOAD(&s->bcol[q], 4);

		if (k - bc * B >= B) {
			SPP_UNROLL(16)
			for (int c = 0; c < B; c++) {
				__m512 xv[4];

				SPP_UNROLL(4)
				for (int v = 0; v < nv; v++)
					xv[v] = simd_ld(full || v < nv - 1, mt, xb + c * n + 16 * v);
				SPP_UNROLL(16)
				for (int r = 0; r < B; r++) {
					__m512 wv = simd_bcast(wb + r * B + c);

					SPP_UNROLL(4)
					for (int v = 0; v < nv; v++)
						a[r][v] = _mm512_fmadd_ps(wv, xv[v], a[r][v]);
				}
			}
		} else {
			for (int c = 0; c < k - bc * B; c++) {
				__m512 xv[4];

				SPP_UNROLL(4)
				for (int v = 0; v < nv; v++)
					xv[v] = simd_ld(full || v < nv - 1, mt, xb + c * n + 16 * v);
				SPP_UNROLL(16)
				for (int r = 0; r < B; r++) {
					__m512 wv = simd_bcast(wb + r * B + c);

					SPP_UNROLL(4)
					for (int v = 0; v < nv; v++)
						a[r][v] = _mm512_fmadd_ps(wv, xv[v], a[r][v]);
				}
			}
		}
	}
	SPP_UNROLL(16)
	for (int r = 0; r < B; r++)
		if (r < rr)
			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				simd_st(full || v < nv - 1, mt, y + (br * B + r) * n + 16 * v, a[r][v]);
}

/*
 * N = 1: a block is B*B/16 vectors of 16/B rows each; X's B values are
 * repeated across the rows of a vector. Blocks rotate over `sets`
 * accumulator sets to hide the FMA latency when a block is one vector.
 */
INL512 void bsr_vec512(const int B, const struct cpu_bsr *s, int64_t br,
		       int64_t k, int64_t rr, const float *x, float *y)
{
	enum { NVB = 16 };
	const int nvb = B * B / 16, sets = B == 4 ? 4 : B == 8 ? 2 : 1;
	__m512 a[4][NVB];
	float lanes[16];
	int32_t q = s->ptr[br], end = s->ptr[br + 1];

	SPP_TRACE_LOAD(&s->ptr[br], 8);

	SPP_UNROLL(4)
	for (int u = 0; u < sets; u++)
		SPP_UNROLL(16)
		for (int v = 0; v < nvb; v++)
			a[u][v] = _mm512_setzero_ps();
	while (q < end) {
		SPP_UNROLL(4)
		for (int u = 0; u < sets; u++) {
			int64_t bc, kc;
			const float *wb;
			__m512 xv;

			if (q >= end)
				break;
			bc = s->bcol[q];
			kc = k - bc * B < B ? k - bc * B : B;
			wb = s->val + (int64_t)q * B * B;
			SPP_TRACE_LOAD(&s->bcol[q], 4);
			SPP_TRACE_MASKED(x + bc * B, 4, (1u << kc) - 1, 0);
			if (B == 16) {
				xv = _mm512_maskz_loadu_ps((__mmask16)((1u << kc) - 1), x + bc * B);
			} else if (B == 8) {
				__m256 h = _mm256_maskz_loadu_ps((__mmask8)((1u << kc) - 1), x + bc * B);

				xv = _mm512_broadcast_f32x8(h);
			} else {
				__m128 h = _mm_maskz_loadu_ps((__mmask8)((1u << kc) - 1), x + bc * B);

				xv = _mm512_broadcast_f32x4(h);
			}
			SPP_UNROLL(16)
			for (int v = 0; v < nvb; v++)
				a[u][v] = _mm512_fmadd_ps(simd_loadu(wb + 16 * v), xv, a[u][v]);
			q++;
		}
	}
	SPP_UNROLL(16)
	for (int v = 0; v < nvb; v++) {
		__m512 t = a[0][v];

		SPP_UNROLL(4)
		for (int u = 1; u < sets; u++)
			t = _mm512_add_ps(t, a[u][v]);
		if (B == 16) {
			if (v < rr) {
				SPP_TRACE_STORE(&y[br * B + v], 4);
				y[br * B + v] = _mm512_reduce_add_ps(t);
			}
			continue;
		}
		_mm512_storeu_ps(lanes, t);
		for (int h = 0; h < 16 / B; h++) {
			int64_t r = (int64_t)v * (16 / B) + h;
			float sum = 0;

			for (int c = 0; c < B; c++)
				sum += lanes[h * B + c];
			if (r < rr) {
				SPP_TRACE_STORE(&y[br * B + r], 4);
				y[br * B + r] = sum;
			}
		}
	}
}

INL512 void bsr_rows512(const int B, const struct cpu_bsr *s, int64_t b0,
			int64_t b1, int64_t m, int64_t k, const float *x,
			float *y, int64_t n)
{
	const int64_t cwmax = 256 / B;

	for (int64_t br = b0; br < b1; br++) {
		int64_t rr = m - br * B < B ? m - br * B : B;

		if (n == 1) {
			bsr_vec512(B, s, br, k, rr, x, y);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += cwmax) {
			int64_t cw = n - j0 < cwmax ? n - j0 : cwmax;
			__mmask16 mt = tail_mask512(cw);

#define BSR_BODY(nv, full) bsr_row512(B, (nv) < 16 / B ? (nv) : 16 / B, full, s, br, k, rr, x + j0, y + j0, n, mt)
			SIMD_CHUNK_DISPATCH(cw, BSR_BODY);
#undef BSR_BODY
		}
	}
}

/*
 * The epilogue over the part's rows as it ends, not yet in registers: the
 * machine this was written on has no AVX-512 to check or time it.
 */
CPU_AVX512 void cpu_bsr_part_avx512(const struct spp_encoded *w, int p, const float *x,
				    float *y, int64_t n, const struct spp_epi *e)
{
	const struct cpu_bsr *s = w->impl;
	int64_t b0, b1;

	if (!cpu_part_range(s->lo, p, &b0, &b1))
		return;

	if (s->b == 4)
		bsr_rows512(4, s, b0, b1, w->m, w->k, x, y, n);
	else if (s->b == 8)
		bsr_rows512(8, s, b0, b1, w->m, w->k, x, y, n);
	else
		bsr_rows512(16, s, b0, b1, w->m, w->k, x, y, n);
	cpu_epi_rows(e, y, b0 * s->b, b1 * s->b < w->m ? b1 * s->b : w->m, n);
}
#endif
