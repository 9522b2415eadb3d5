/*
 * The AVX-512 vocabulary of simd.h (included only by it): 16-float zmm
 * vectors, __mmask16 lane masks. Every function carries the target
 * attribute, so that it inlines into the *_avx512.c kernels only.
 */
#ifndef SPP_KERNELS_CPU_SIMD_AVX512_H
#define SPP_KERNELS_CPU_SIMD_AVX512_H

#include <immintrin.h>

#include "kernels/cpu/cpu.h"

#define INL512 static inline __attribute__((always_inline)) CPU_AVX512

#define SIMD_VL 16
#define SIMD_INL INL512
#define SIMD_TARGET CPU_AVX512
#define SIMD_NAME(f) f##_avx512
#define SIMD_ALL ((__mmask16)0xffff)

typedef __m512 simd_f;
typedef __m512i simd_i;
typedef __mmask16 simd_m;

#define simd_zero() _mm512_setzero_ps()
#define simd_add(a, b) _mm512_add_ps(a, b)
#define simd_max(a, b) _mm512_max_ps(a, b)
#define simd_fmadd(a, b, c) _mm512_fmadd_ps(a, b, c)
#define simd_hsum(v) _mm512_reduce_add_ps(v)

/* Lanes below left set (left >= 1; from 16 up, all). */
#define simd_first(left) ((left) >= 16 ? 0xffff : (__mmask16)((1u << (left)) - 1))

/*
 * The loads, each traced in the simulator's copy (kernels/trace.h): a
 * broadcast its 4 bytes, a masked load its lanes, a gather each element.
 */
INL512 simd_f simd_bcast(const float *p)
{
	SPP_TRACE_LOAD(p, 4);
	return _mm512_set1_ps(*p);
}

INL512 simd_f simd_loadu(const float *p)
{
	SPP_TRACE_LOAD(p, 64);
	return _mm512_loadu_ps(p);
}

INL512 simd_f simd_maskz_loadu(simd_m m, const float *p)
{
	SPP_TRACE_MASKED(p, 4, m, 0);
	return _mm512_maskz_loadu_ps(m, p);
}

#ifdef SPP_TRACE
INL512 void trace_gather512(const float *x, __m512i idx, __mmask16 m)
{
	int32_t i[16];

	_mm512_storeu_si512(i, idx);
	spp_trace_gather(x, i, 16, m, 4);
}
#else
#define trace_gather512(x, idx, m) ((void)0)
#endif

INL512 simd_f simd_gather(const float *x, simd_i idx)
{
	trace_gather512(x, idx, 0xffff);
	return _mm512_i32gather_ps(idx, x, 4);
}

/* x[idx] in the lanes of m, 0 elsewhere. */
INL512 simd_f simd_mask_gather(const float *x, simd_i idx, simd_m m)
{
	trace_gather512(x, idx, m);
	return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, x, 4);
}

/* The last vector of a chunk of cw (1..64) columns: lanes below cw % 16, or all. */
INL512 __mmask16 tail_mask512(int64_t r)
{
	return (__mmask16)(r % 16 ? (1u << (r % 16)) - 1 : 0xffff);
}

#define simd_chunk_tail(cw) tail_mask512(cw)

/* Full, or the lanes of m (the others 0). */
INL512 simd_f simd_ld(int full, simd_m m, const float *p)
{
	return full ? simd_loadu(p) : simd_maskz_loadu(m, p);
}

INL512 void simd_st(int full, simd_m m, float *p, simd_f v)
{
	SPP_TRACE_MASKED(p, 4, full ? 0xffff : m, 1);
	if (full)
		_mm512_storeu_ps(p, v);
	else
		_mm512_mask_storeu_ps(p, m, v);
}

/* 16 column indices as int32 lanes (lanes outside m 0); left unused. */
INL512 simd_i simd_idx(const int ci, const void *col, int64_t j, int64_t left, simd_m m)
{
	(void)left;
	SPP_TRACE_MASKED((const char *)col + j * (ci ? 2 : 4), ci ? 2 : 4, m, 0);
	if (ci)
		return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)col + j));
	return _mm512_maskz_loadu_epi32(m, (const int32_t *)col + j);
}

/* acc + v * g, where g != 0 when skip (NaN counts as non-zero): a masked FMA */
INL512 simd_f simd_fma_live(const int skip, simd_f v, simd_f g, simd_f acc)
{
	if (!skip)
		return _mm512_fmadd_ps(v, g, acc);
	return _mm512_mask3_fmadd_ps(v, g, acc, _mm512_cmp_ps_mask(g, _mm512_setzero_ps(), _CMP_NEQ_UQ));
}

#endif
