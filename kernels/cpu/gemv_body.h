/*
 * spprof's own dense GEMV (kernels/dense/own.c: the dense candidate
 * "spprof"), written once against simd.h and compiled per ISA by
 * gemv_avx2.c and gemv_avx512.c: cpu_gemv_rows_avx2 / _avx512.
 *
 * y[i] = W[i, :] . x for rows [r0, r1) of a row-major M x K W: four rows
 * at a time, each with two accumulators over 2 vectors of x a step, W's
 * four rows prefetched DOT_PF floats ahead (at N = 1 W streams from
 * memory, and the hardware prefetcher alone falls behind, as in the
 * sparse kernels' dot products: simd.h).
 */
#ifndef SPP_KERNELS_CPU_GEMV_BODY_H
#define SPP_KERNELS_CPU_GEMV_BODY_H

#include "kernels/cpu/cpu.h"

#if CPU_X86
/* Rows [i, i + R) of W (R 1 or 4) times x into y[i..]. */
SIMD_INL void gemv_rows(const int R, const float *w, int64_t k, int64_t i, const float *x, float *y)
{
	simd_f a[4][2];
	int64_t c = 0;

	SPP_UNROLL(4)
	for (int r = 0; r < R; r++)
		a[r][0] = a[r][1] = simd_zero();
	for (; c + 2 * SIMD_VL <= k; c += 2 * SIMD_VL) {
		simd_f x0 = simd_loadu(x + c), x1 = simd_loadu(x + c + SIMD_VL);

		SPP_UNROLL(4)
		for (int r = 0; r < R; r++) {
			const float *wr = w + (i + r) * k + c;

			/* the lines this step reads, DOT_PF ahead: one of AVX2's, two of AVX-512's */
			_mm_prefetch((const char *)(wr + DOT_PF), _MM_HINT_T0);
			if (SIMD_VL == 16)
				_mm_prefetch((const char *)(wr + DOT_PF + 16), _MM_HINT_T0);
			a[r][0] = simd_fmadd(simd_loadu(wr), x0, a[r][0]);
			a[r][1] = simd_fmadd(simd_loadu(wr + SIMD_VL), x1, a[r][1]);
		}
	}
	for (; c < k; c += SIMD_VL) {
		simd_m m = simd_first(k - c);
		simd_f xv = simd_maskz_loadu(m, x + c);

		SPP_UNROLL(4)
		for (int r = 0; r < R; r++)
			a[r][0] = simd_fmadd(simd_maskz_loadu(m, w + (i + r) * k + c), xv, a[r][0]);
	}
	SPP_UNROLL(4)
	for (int r = 0; r < R; r++)
		y[i + r] = simd_hsum(simd_add(a[r][0], a[r][1]));
}

SIMD_TARGET void SIMD_NAME(cpu_gemv_rows)(const float *w, int64_t k, int64_t r0, int64_t r1,
					  const float *x, float *y)
{
	int64_t i = r0;

	for (; i + 4 <= r1; i += 4)
		gemv_rows(4, w, k, i, x, y);
	for (; i < r1; i++)
		gemv_rows(1, w, k, i, x, y);
}
#endif

#endif
