/*
 * The AVX2 vocabulary of simd.h (included only by it): 8-float ymm
 * vectors; a lane mask is a vector of all-ones / all-zeros int32 lanes,
 * since AVX2 has no mask registers (maskload / maskstore / blends where
 * AVX-512 masks). Every function carries the target attribute.
 */
#ifndef SPP_KERNELS_CPU_SIMD_AVX2_H
#define SPP_KERNELS_CPU_SIMD_AVX2_H

#include <immintrin.h>

#include "kernels/cpu/cpu.h"

#define INL256 static inline __attribute__((always_inline)) CPU_AVX2

#define SIMD_VL 8
#define SIMD_INL INL256
#define SIMD_TARGET CPU_AVX2
#define SIMD_NAME(f) f##_avx2
#define SIMD_ALL _mm256_set1_epi32(-1)

typedef __m256 simd_f;
typedef __m256i simd_i;
typedef __m256i simd_m;

#define simd_zero() _mm256_setzero_ps()
#define simd_add(a, b) _mm256_add_ps(a, b)
#define simd_max(a, b) _mm256_max_ps(a, b)
#define simd_fmadd(a, b, c) _mm256_fmadd_ps(a, b, c)

INL256 float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

#define simd_hsum(v) hsum256(v)

/* Lanes below r set (r >= 0; from 8 up, all). */
INL256 __m256i tail_mask256(int64_t r)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r),
				  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define simd_first(left) tail_mask256(left)
#define simd_chunk_tail(cw) tail_mask256((cw) % 8 ? (cw) % 8 : 8)

/* The lanes of a vector mask as bits (bit l: lane l), for the trace points. */
#define lanes256(m) ((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m)))

/*
 * The loads, each traced in the simulator's copy (kernels/trace.h): a
 * broadcast its 4 bytes, a masked load its lanes, a gather each element.
 */
INL256 simd_f simd_bcast(const float *p)
{
	SPP_TRACE_LOAD(p, 4);
	return _mm256_broadcast_ss(p);
}

INL256 simd_f simd_loadu(const float *p)
{
	SPP_TRACE_LOAD(p, 32);
	return _mm256_loadu_ps(p);
}

INL256 simd_f simd_maskz_loadu(simd_m m, const float *p)
{
	SPP_TRACE_MASKED(p, 4, lanes256(m), 0);
	return _mm256_maskload_ps(p, m);
}

#ifdef SPP_TRACE
INL256 void trace_gather256(const float *x, __m256i idx, unsigned lanes)
{
	int32_t i[8];

	_mm256_storeu_si256((__m256i *)i, idx);
	spp_trace_gather(x, i, 8, lanes, 4);
}
#else
#define trace_gather256(x, idx, lanes) ((void)0)
#endif

INL256 simd_f simd_gather(const float *x, simd_i idx)
{
	trace_gather256(x, idx, 0xff);
	return _mm256_i32gather_ps(x, idx, 4);
}

/* x[idx] in the lanes of m, 0 elsewhere. */
INL256 simd_f simd_mask_gather(const float *x, simd_i idx, simd_m m)
{
	trace_gather256(x, idx, lanes256(m));
	return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, idx, _mm256_castsi256_ps(m), 4);
}

/* Full, or the lanes of m (the others 0). */
INL256 simd_f simd_ld(int full, simd_m m, const float *p)
{
	return full ? simd_loadu(p) : simd_maskz_loadu(m, p);
}

INL256 void simd_st(int full, simd_m m, float *p, simd_f v)
{
	SPP_TRACE_MASKED(p, 4, full ? 0xff : lanes256(m), 1);
	if (full)
		_mm256_storeu_ps(p, v);
	else
		_mm256_maskstore_ps(p, m, v);
}

/*
 * 8 column indices as int32 lanes; lanes at or past `left` are 0 (m
 * unused). AVX2 has no masked 16-bit load: a uint16 tail goes through a
 * zeroed copy.
 */
INL256 simd_i simd_idx(const int ci, const void *col, int64_t j, int64_t left, simd_m m)
{
	(void)m;
	SPP_TRACE_MASKED((const char *)col + j * (ci ? 2 : 4), ci ? 2 : 4,
			 left >= 8 ? 0xff : (1u << left) - 1, 0);
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

/*
 * acc + v * g, where g != 0 when skip (NaN counts as non-zero): AVX2 has
 * no masked FMA, so a blend (no AVX2 kernel asks for skip today).
 */
INL256 simd_f simd_fma_live(const int skip, simd_f v, simd_f g, simd_f acc)
{
	if (!skip)
		return _mm256_fmadd_ps(v, g, acc);
	return _mm256_blendv_ps(acc, _mm256_fmadd_ps(v, g, acc),
				_mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_NEQ_UQ));
}

#endif
