/*
 * bitmask kernels for AVX2: bitmask_body.h over simd.h's AVX2 vocabulary,
 * with the N = 1 row product of this ISA.
 */
#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"

#if CPU_X86
/*
 * AVX2 has no expand: lane p of the dense vector takes packed value
 * rank(p) = popcount of the mask bits below p. pdep spreads the nibbles
 * 0..7 onto the set bits, giving each set lane its rank; unset lanes are
 * cleared with the mask.
 */
INL256 __m256 expand256(unsigned m8, const float *val)
{
	uint32_t nib = _pdep_u32(m8, 0x11111111u) * 0xfu;
	uint32_t idx = _pdep_u32(0x76543210u, nib);
	__m256i lanes = _mm256_srlv_epi32(_mm256_set1_epi32((int)idx),
					  _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
	__m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	__m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m8), bits), bits);
	__m256 v = _mm256_permutevar8x32_ps(simd_loadu(val),
					    _mm256_and_si256(lanes, _mm256_set1_epi32(0xf)));

	return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
}

INL256 float bm_dot(const uint8_t *mr, const float *val, int64_t k, const float *x, int64_t nnz)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0;
	int64_t c = 0;

	(void)nnz;
	for (; c + 16 <= k; c += 16) {
		unsigned m0 = mr[c / 8], m1 = mr[c / 8 + 1];

		SPP_TRACE_LOAD(mr + c / 8, 2);
		a0 = _mm256_fmadd_ps(expand256(m0, val), simd_loadu(x + c), a0);
		val += __builtin_popcount(m0);
		a1 = _mm256_fmadd_ps(expand256(m1, val), simd_loadu(x + c + 8), a1);
		val += __builtin_popcount(m1);
	}
	for (; c < k; c += 8) {
		int64_t left = k - c < 8 ? k - c : 8;
		unsigned m = mr[c / 8] & ((1u << left) - 1);

		SPP_TRACE_LOAD(mr + c / 8, 1);
		a0 = _mm256_fmadd_ps(expand256(m, val), simd_maskz_loadu(tail_mask256(left), x + c), a0);
		val += __builtin_popcount(m);
	}
	return hsum256(_mm256_add_ps(a0, a1));
}

#define BM_ROWS1_ISA() BM_ROWS1(bm_dot)
#endif

#include "kernels/cpu/bitmask_body.h"
