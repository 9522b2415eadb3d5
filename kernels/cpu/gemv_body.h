/*
 * spprof's own dense GEMV (kernels/dense/own.c: the dense candidate
 * "spprof"), written once against simd.h and compiled per ISA by
 * gemv_avx2.c and gemv_avx512.c: cpu_gemv_rows_avx2 / _avx512.
 *
 * y[i] = W[i, :] . x for rows [r0, r1) of a row-major M x K W: row by
 * row, so that W is read as one sequential stream, four accumulators over
 * 4 vectors a step, W prefetched DOT_PF floats ahead (at N = 1 W streams
 * from memory, and the hardware prefetcher alone falls behind, as in the
 * sparse kernels' dot products: simd.h).
 *
 * Four rows at a time (four streams, x loaded once for them) was slower
 * cold. Measured on the EPYC Zen 4 (1 thread, N = 1, `--cache cold`,
 * median us, two runs, load about 1 from the runs themselves): 1024 x
 * 1024 198 and 205 four rows, 155 and 141 one row, BLIS 156-182; 768 x
 * 3072 435 and 425, then 323 and 319, BLIS 342-358; 4096 x 4096 3020 and
 * 3211, then 2630 and 2605, BLIS 2377-2543. Warm, one row is level with
 * the libraries (53 against 48-51 us at 1024 x 1024).
 */
#ifndef SPP_KERNELS_CPU_GEMV_BODY_H
#define SPP_KERNELS_CPU_GEMV_BODY_H

#include "kernels/cpu/cpu.h"

#if CPU_X86
/* Row i of W times x into y[i]: one stream, four accumulators over 4 vectors a step. */
SIMD_INL void gemv_row(const float *w, int64_t k, int64_t i, const float *x, float *y)
{
	const float *wr = w + i * k;
	simd_f a[4];
	int64_t c = 0;

	SPP_UNROLL(4)
	for (int v = 0; v < 4; v++)
		a[v] = simd_zero();
	for (; c + 4 * SIMD_VL <= k; c += 4 * SIMD_VL) {
		/* the lines this step reads, DOT_PF ahead (2 of AVX2's, 4 of AVX-512's) */
		SPP_UNROLL(4)
		for (int l = 0; l < 4 * SIMD_VL; l += 16)
			_mm_prefetch((const char *)(wr + c + DOT_PF + l), _MM_HINT_T0);
		SPP_UNROLL(4)
		for (int v = 0; v < 4; v++)
			a[v] = simd_fmadd(simd_loadu(wr + c + v * SIMD_VL), simd_loadu(x + c + v * SIMD_VL), a[v]);
	}
	for (; c < k; c += SIMD_VL) {
		simd_m m = simd_first(k - c);

		a[0] = simd_fmadd(simd_maskz_loadu(m, wr + c), simd_maskz_loadu(m, x + c), a[0]);
	}
	y[i] = simd_hsum(simd_add(simd_add(a[0], a[1]), simd_add(a[2], a[3])));
}

SIMD_TARGET void SIMD_NAME(cpu_gemv_rows)(const float *w, int64_t k, int64_t r0, int64_t r1,
					  const float *x, float *y)
{
	for (int64_t i = r0; i < r1; i++)
		gemv_row(w, k, i, x, y);
}
#endif

#endif
