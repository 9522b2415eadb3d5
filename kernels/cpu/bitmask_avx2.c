/* bitmask kernels for AVX2 (see bitmask.c for the layout). */
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg_avx2.h"

INL256 uint64_t mask_word256(const uint8_t *mr, int64_t c, int64_t k)
{
	uint64_t wd = 0;
	int64_t left = k - c;

	if (left >= 64) {
		memcpy(&wd, mr + c / 8, 8);
		return wd;
	}
	memcpy(&wd, mr + c / 8, (size_t)((left + 7) / 8));
	return wd & ((1ull << left) - 1);
}

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
	__m256 v = _mm256_permutevar8x32_ps(_mm256_loadu_ps(val),
					    _mm256_and_si256(lanes, _mm256_set1_epi32(0xf)));

	return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
}

INL256 float bm_dot256(const uint8_t *mr, const float *val, int64_t k, const float *x)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0;
	int64_t c = 0;

	for (; c + 16 <= k; c += 16) {
		unsigned m0 = mr[c / 8], m1 = mr[c / 8 + 1];

		a0 = _mm256_fmadd_ps(expand256(m0, val), _mm256_loadu_ps(x + c), a0);
		val += __builtin_popcount(m0);
		a1 = _mm256_fmadd_ps(expand256(m1, val), _mm256_loadu_ps(x + c + 8), a1);
		val += __builtin_popcount(m1);
	}
	for (; c < k; c += 8) {
		int64_t left = k - c < 8 ? k - c : 8;
		unsigned m = mr[c / 8] & ((1u << left) - 1);

		a0 = _mm256_fmadd_ps(expand256(m, val), _mm256_maskload_ps(x + c, tail_mask256(left)), a0);
		val += __builtin_popcount(m);
	}
	return hsum256(_mm256_add_ps(a0, a1));
}

INL256 void bm_row256(const int nv, const int full, __m256i mt,
		      const uint8_t *mr, const float *val, int64_t k,
		      const float *x, int64_t n, float *yr)
{
	__m256 a[2][4];

#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		a[0][v] = a[1][v] = _mm256_setzero_ps();
	for (int64_t c = 0; c < k; c += 64) {
		uint64_t wd = mask_word256(mr, c, k);

		while (wd) {
			const float *xr = x + (c + __builtin_ctzll(wd)) * n;
			__m256 wv = _mm256_broadcast_ss(val++);

			wd &= wd - 1;
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[0][v] = _mm256_fmadd_ps(wv, ld256(full || v < nv - 1, mt, xr + 8 * v), a[0][v]);
			if (!wd)
				break;
			xr = x + (c + __builtin_ctzll(wd)) * n;
			wv = _mm256_broadcast_ss(val++);
			wd &= wd - 1;
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[1][v] = _mm256_fmadd_ps(wv, ld256(full || v < nv - 1, mt, xr + 8 * v), a[1][v]);
		}
	}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		st256(full || v < nv - 1, mt, yr + 8 * v, _mm256_add_ps(a[0][v], a[1][v]));
}

CPU_AVX2 void cpu_bitmask_part_avx2(const struct spp_encoded *w, int64_t r0,
				    int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_bitmask *b = w->impl;
	int64_t k = w->k;

	if (n == 1) {
		for (int64_t i = r0; i < r1; i++)
			y[i] = bm_dot256(b->mask + i * b->stride, b->val + b->ptr[i], k, x);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 32) {
		int64_t cw = n - j0 < 32 ? n - j0 : 32;
		__m256i mt = tail_mask256(cw % 8 ? cw % 8 : 8);

		for (int64_t i = r0; i < r1; i++) {
			const uint8_t *mr = b->mask + i * b->stride;
			const float *val = b->val + b->ptr[i];

#define BM_BODY(nv, full) bm_row256(nv, full, mt, mr, val, k, x + j0, n, y + i * n + j0)
			CHUNK256_DISPATCH(cw, BM_BODY);
#undef BM_BODY
		}
	}
}
#endif
