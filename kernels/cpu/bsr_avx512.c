/*
 * bsrB kernels for AVX-512: bsr_body.h over simd.h's AVX-512 vocabulary,
 * with the N = 1 block-row product of this ISA (16 / B rows a zmm, X's
 * B values broadcast across them), which simd.h has no words for.
 */
#define SIMD_AVX512 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N = 1: a block is B*B/16 vectors of 16/B rows each; X's B values are
 * repeated across the rows of a vector. Blocks rotate over `sets`
 * accumulator sets to hide the FMA latency when a block is one vector.
 */
INL512 void bsr_vec(const int B, const struct cpu_bsr *s, int64_t br, int64_t k, int64_t rr,
		    const float *x, float *y, const struct spp_epi *e)
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
				y[br * B + v] = cpu_epi1(e, br * B + v, _mm512_reduce_add_ps(t));
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
				y[br * B + r] = cpu_epi1(e, br * B + r, sum);
			}
		}
	}
}

#include "kernels/cpu/bsr_body.h"
#endif
