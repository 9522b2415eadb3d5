/*
 * bsrB kernels for AVX2: bsr_body.h over simd.h's AVX2 vocabulary, with
 * the N = 1 block-row product of this ISA (an xmm per row for B = 4).
 */
#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/* N = 1: one accumulator per block row (B = 16: two ymm per row). */
INL256 void bsr_vec(const int B, const struct cpu_bsr *s, int64_t br,
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

#include "kernels/cpu/bsr_body.h"
#endif
