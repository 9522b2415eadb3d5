/*
 * AVX2 building blocks shared by the csr and coo kernels (included only by
 * the *_avx2.c files). Same contracts as seg_avx512.h with 8-float
 * vectors: a chunk is up to 4 ymm (32 columns); two accumulator sets, since
 * AVX2 has 16 vector registers.
 */
#ifndef SPP_KERNELS_CPU_SEG_AVX2_H
#define SPP_KERNELS_CPU_SEG_AVX2_H

#include <immintrin.h>

#include "kernels/cpu/cpu.h"

#define DOT_PF256 1024 /* floats ahead: 4 KiB */

#define INL256 static inline __attribute__((always_inline)) CPU_AVX2

/* Lanes below r (1..8) set. */
INL256 __m256i tail_mask256(int64_t r)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r),
				  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

INL256 __m256 ld256(int full, __m256i m, const float *p)
{
	return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

INL256 void st256(int full, __m256i m, float *p, __m256 v)
{
	if (full)
		_mm256_storeu_ps(p, v);
	else
		_mm256_maskstore_ps(p, m, v);
}

/* Column j of an int32 (ci = 0) or uint16 (ci = 1) index array. */
INL256 int64_t colat256(const int ci, const void *col, int64_t j)
{
	return ci ? (int64_t)((const uint16_t *)col)[j] : (int64_t)((const int32_t *)col)[j];
}

/* 8 column indices as int32 lanes; lanes at or past `left` are 0. */
INL256 __m256i idx256(const int ci, const void *col, int64_t j, int64_t left)
{
	if (left >= 8)
		return ci ? _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)col + j)))
			  : _mm256_loadu_si256((const __m256i *)((const int32_t *)col + j));
	if (ci) {
		uint16_t t[8] = { 0 };

		for (int64_t q = 0; q < left; q++)
			t[q] = ((const uint16_t *)col)[j + q];
		return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)t));
	}
	return _mm256_maskload_epi32((const int *)col + j, tail_mask256(left));
}

INL256 void seg256(const int nv, const int full, __m256i mt,
		   const int ci, const void *col, const float *val, int64_t len,
		   const float *x, int64_t n, float *yr, int zero)
{
	__m256 a[2][4];
	int64_t j = 0;

	/* Y first, as in seg512 */
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? _mm256_setzero_ps() : ld256(full || v < nv - 1, mt, yr + 8 * v);
		a[1][v] = _mm256_setzero_ps();
	}
	for (; j + 2 <= len; j += 2) {
#pragma GCC unroll 2
		for (int u = 0; u < 2; u++) {
			const float *xr = x + colat256(ci, col, j + u) * n;
			__m256 wv = _mm256_broadcast_ss(val + j + u);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[u][v] = _mm256_fmadd_ps(wv, ld256(full || v < nv - 1, mt, xr + 8 * v), a[u][v]);
		}
	}
	if (j < len) {
		const float *xr = x + colat256(ci, col, j) * n;
		__m256 wv = _mm256_broadcast_ss(val + j);

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			a[0][v] = _mm256_fmadd_ps(wv, ld256(full || v < nv - 1, mt, xr + 8 * v), a[0][v]);
	}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++) {
		st256(full || v < nv - 1, mt, yr + 8 * v, _mm256_add_ps(a[0][v], a[1][v]));
	}
}

INL256 __m256 dot256(const int ci, const void *col, const float *val, int64_t len,
		     const float *x, __m256 acc)
{
	__m256 acc1 = _mm256_setzero_ps();
	int64_t j = 0;

	for (; j + 16 <= len; j += 16) {
		__m256i i0 = idx256(ci, col, j, 8), i1 = idx256(ci, col, j + 8, 8);

		/* W streams from memory: see dot512 */
		_mm_prefetch((const char *)(val + j + DOT_PF256), _MM_HINT_T0);
		_mm_prefetch((const char *)col + (j + DOT_PF256) * (ci ? 2 : 4), _MM_HINT_T0);

		acc = _mm256_fmadd_ps(_mm256_loadu_ps(val + j), _mm256_i32gather_ps(x, i0, 4), acc);
		acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(val + j + 8), _mm256_i32gather_ps(x, i1, 4), acc1);
	}
	for (; j < len; j += 8) {
		__m256i m = tail_mask256(len - j);
		__m256 g = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, idx256(ci, col, j, len - j),
						    _mm256_castsi256_ps(m), 4);

		acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(val + j, m), g, acc1);
	}
	return _mm256_add_ps(acc, acc1);
}

INL256 float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* BODY(nv, full) with constants for a chunk of cw (1..32) columns. */
#define CHUNK256_DISPATCH(cw, BODY)                                            \
	do {                                                                   \
		int nv_ = (int)(((cw) + 7) / 8), full_ = (cw) % 8 == 0;        \
		switch (nv_ * 2 + full_) {                                     \
		case 9: BODY(4, 1); break;                                     \
		case 8: BODY(4, 0); break;                                     \
		case 7: BODY(3, 1); break;                                     \
		case 6: BODY(3, 0); break;                                     \
		case 5: BODY(2, 1); break;                                     \
		case 4: BODY(2, 0); break;                                     \
		case 3: BODY(1, 1); break;                                     \
		default: BODY(1, 0); break;                                    \
		}                                                              \
	} while (0)

#endif
