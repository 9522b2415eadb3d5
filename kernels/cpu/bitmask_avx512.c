/* bitmask kernels for AVX-512 (see bitmask.c for the layout). */
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg_avx512.h"

/* Mask bits [c, c+64) of a row, clipped to the row's k columns. */
INL512 uint64_t mask_word(const uint8_t *mr, int64_t c, int64_t k)
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

/* N = 1: 16 columns at a time, W expanded from the packed values. */
INL512 float bm_dot512(const uint8_t *mr, const float *val, int64_t k, const float *x)
{
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	int64_t c = 0;

	for (; c + 64 <= k; c += 64) {
		uint64_t wd;
		__mmask16 m0, m1, m2, m3;

		memcpy(&wd, mr + c / 8, 8);
		/* W streams from memory; as in dot512 the prefetcher falls behind */
		_mm_prefetch((const char *)(val + DOT_PF), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 32), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 48), _MM_HINT_T0);
		_mm_prefetch((const char *)(mr + c / 8 + DOT_PF / 4), _MM_HINT_T0);
		m0 = (__mmask16)wd;
		m1 = (__mmask16)(wd >> 16);
		m2 = (__mmask16)(wd >> 32);
		m3 = (__mmask16)(wd >> 48);
		a0 = _mm512_fmadd_ps(_mm512_maskz_expandloadu_ps(m0, val), _mm512_loadu_ps(x + c), a0);
		val += __builtin_popcount(m0);
		a1 = _mm512_fmadd_ps(_mm512_maskz_expandloadu_ps(m1, val), _mm512_loadu_ps(x + c + 16), a1);
		val += __builtin_popcount(m1);
		a2 = _mm512_fmadd_ps(_mm512_maskz_expandloadu_ps(m2, val), _mm512_loadu_ps(x + c + 32), a2);
		val += __builtin_popcount(m2);
		a3 = _mm512_fmadd_ps(_mm512_maskz_expandloadu_ps(m3, val), _mm512_loadu_ps(x + c + 48), a3);
		val += __builtin_popcount(m3);
	}
	for (; c < k; c += 16) {
		__mmask16 valid = tail_mask512(k - c < 16 ? k - c : 16);
		uint16_t h;
		__mmask16 m;

		memcpy(&h, mr + c / 8, 2); /* may read a byte past the row: masked */
		m = (__mmask16)(h & valid);
		a0 = _mm512_fmadd_ps(_mm512_maskz_expandloadu_ps(m, val),
				     _mm512_maskz_loadu_ps(valid, x + c), a0);
		val += __builtin_popcount(m);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* N >= 2: one Y row chunk in registers, a non-zero per set bit. */
INL512 void bm_row512(const int nv, const int full, __mmask16 mt,
		      const uint8_t *mr, const float *val, int64_t k,
		      const float *x, int64_t n, float *yr)
{
	__m512 a[2][4];

#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		a[0][v] = a[1][v] = _mm512_setzero_ps();
	for (int64_t c = 0; c < k; c += 64) {
		uint64_t wd = mask_word(mr, c, k);

		while (wd) {
			const float *xr = x + (c + __builtin_ctzll(wd)) * n;
			__m512 wv = _mm512_set1_ps(*val++);

			wd &= wd - 1;
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[0][v] = _mm512_fmadd_ps(wv, ld512(full || v < nv - 1, mt, xr + 16 * v), a[0][v]);
			if (!wd)
				break;
			xr = x + (c + __builtin_ctzll(wd)) * n;
			wv = _mm512_set1_ps(*val++);
			wd &= wd - 1;
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[1][v] = _mm512_fmadd_ps(wv, ld512(full || v < nv - 1, mt, xr + 16 * v), a[1][v]);
		}
	}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		st512(full || v < nv - 1, mt, yr + 16 * v, _mm512_add_ps(a[0][v], a[1][v]));
}

CPU_AVX512 void cpu_bitmask_part_avx512(const struct spp_encoded *w, int64_t r0,
					int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_bitmask *b = w->impl;
	int64_t k = w->k;

	if (n == 1) {
		for (int64_t i = r0; i < r1; i++)
			y[i] = bm_dot512(b->mask + i * b->stride, b->val + b->ptr[i], k, x);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;
		__mmask16 mt = tail_mask512(cw);

		for (int64_t i = r0; i < r1; i++) {
			const uint8_t *mr = b->mask + i * b->stride;
			const float *val = b->val + b->ptr[i];

#define BM_BODY(nv, full) bm_row512(nv, full, mt, mr, val, k, x + j0, n, y + i * n + j0)
			CHUNK512_DISPATCH(cw, BM_BODY);
#undef BM_BODY
		}
	}
}
#endif
