/*
 * The lowp words added to simd.h's vocabulary, for the ISA the including
 * thin file chose (SIMD_AVX2 / SIMD_AVX512) and its extras: LP_TARGET_STR
 * (the target attribute's features), LP_VNNI (vpdpbusd: AVX-VNNI or
 * AVX512_VNNI) and LP_BF16 (vdpbf16ps, AVX-512 only). Without them
 * vpdpbusd and vdpbf16ps are emulated (vpmaddwd on the two byte halves;
 * two FMAs on the two bf16 halves), so each body is written once.
 *
 *   LPI                       static, always inlined, the path's target
 *   lp_h2f(f16, p, left)      VL bf16 / fp16 values (left of them) as fp32
 *   lp_h16(p, left)           VL 16-bit values zero-extended into int32 lanes
 *   lp_hgather(f16, x, idx, m) x[idx] (16-bit) as fp32
 *   lp_gather16(x, idx, m)    the dword at 16-bit element idx (low half: x[idx])
 *   lp_gather8(x, idx, m)     the dword at byte idx (low byte: x[idx])
 *   lp_hgather4(f16, x, col, t, left)  the 4 X values of VL / 4 blocks as fp32
 *   lp_u8(p, left)            VL bytes zero-extended into int32 lanes
 *   lp_ld32(p, left)          VL dwords, lanes at or past left 0
 *   lp_dpbusd(acc, a, b)      acc + sum of 4 u8(a) * s8(b) per lane
 *   lp_dpbf16(acc, a, b)      acc + sum of 2 bf16(a) * bf16(b) per lane
 *   lp_ihsum(v)               the sum of v's int32 lanes
 *   lp_h1(f16, h)             one bf16 / fp16 value as fp32
 *   lp_st_i8(full, m, p, acc, corr, s)  store (float)(acc - corr) * s
 */
#ifndef SPP_KERNELS_LOWP_SIMD_LOWP_H
#define SPP_KERNELS_LOWP_SIMD_LOWP_H

#include <immintrin.h>

#include "kernels/cpu/simd.h"
#include "kernels/lowp/lowp_impl.h"

#define LPI static inline __attribute__((always_inline, target(LP_TARGET_STR)))
#define LP_KERN static __attribute__((unused, target(LP_TARGET_STR)))

/* One bf16 / fp16 value as fp32 (F16C's vcvtph2ps for fp16). */
LPI float lp_h1(const int f16, uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	if (f16)
		return _cvtsh_ss(h);
	memcpy(&f, &u, 4);
	return f;
}

#if defined(SIMD_AVX512)
#define lp_izero() _mm512_setzero_si512()
#define lp_iset1(v) _mm512_set1_epi32(v)
#define lp_fset1(v) _mm512_set1_ps(v)
#define lp_iadd(a, b) _mm512_add_epi32(a, b)
#define lp_iand(a, b) _mm512_and_si512(a, b)
#define lp_ior(a, b) _mm512_or_si512(a, b)
#define lp_isllv(a, c) _mm512_sllv_epi32(a, _mm512_set1_epi32(c))
#define lp_isrlv(a, c) _mm512_srlv_epi32(a, _mm512_set1_epi32(c))
#define lp_ihsum(v) _mm512_reduce_add_epi32(v)
#define lp_iota(step) _mm512_mullo_epi32(_mm512_set1_epi32(step), \
	_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

LPI simd_i lp_h16(const uint16_t *p, int64_t left)
{
	return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(simd_first(left), p));
}

LPI simd_f lp_h2f(const int f16, const uint16_t *p, int64_t left)
{
	if (f16)
		return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(simd_first(left), p));
	return _mm512_castsi512_ps(_mm512_slli_epi32(lp_h16(p, left), 16));
}

LPI simd_i lp_gather16(const uint16_t *x, simd_i idx, simd_m m)
{
	return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, x, 2);
}

LPI simd_f lp_hgather(const int f16, const uint16_t *x, simd_i idx, simd_m m)
{
	simd_i g = lp_gather16(x, idx, m);

	if (f16)
		return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g));
	return _mm512_castsi512_ps(_mm512_slli_epi32(g, 16));
}

LPI simd_i lp_gather8(const uint8_t *x, simd_i idx, simd_m m)
{
	return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, x, 1);
}

/* x[col[t + b] + q] (16-bit) as fp32 in lane 4b + q, for the blocks b below min(left, VL / 4). */
LPI simd_f lp_hgather4(const int f16, const uint16_t *x, const int32_t *col, int64_t t,
		       int64_t left)
{
	__mmask8 m = (__mmask8)(left >= 4 ? 0xf : (1u << left) - 1);
	__m256i g = _mm256_mmask_i32gather_epi64(_mm256_setzero_si256(), m,
						 _mm_maskz_loadu_epi32(m, col + t), x, 2);

	if (f16)
		return _mm512_cvtph_ps(g);
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(g), 16));
}

LPI simd_i lp_u8(const int8_t *p, int64_t left)
{
	return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(simd_first(left), p));
}

LPI simd_i lp_ld32(const void *p, int64_t left)
{
	return _mm512_maskz_loadu_epi32(simd_first(left), p);
}

LPI simd_i lp_dpbusd(simd_i acc, simd_i a, simd_i b)
{
#if LP_VNNI
	return _mm512_dpbusd_epi32(acc, a, b);
#else
	simd_i alo = _mm512_and_si512(a, _mm512_set1_epi32(0x00ff00ff));
	simd_i ahi = _mm512_srli_epi16(a, 8);
	simd_i blo = _mm512_srai_epi16(_mm512_slli_epi16(b, 8), 8);
	simd_i bhi = _mm512_srai_epi16(b, 8);

	return _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(alo, blo),
						      _mm512_madd_epi16(ahi, bhi)));
#endif
}

LPI simd_f lp_dpbf16(simd_f acc, simd_i a, simd_i b)
{
#if LP_BF16
	return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
#else
	simd_i hi = _mm512_set1_epi32((int)0xffff0000u);

	acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, hi)),
			      _mm512_castsi512_ps(_mm512_and_si512(b, hi)), acc);
	return _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)),
			       _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)), acc);
#endif
}

LPI void lp_st_i8(int full, simd_m m, float *p, simd_i acc, int32_t corr, float s)
{
	simd_f v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_set1_epi32(corr)));

	simd_st(full, m, p, _mm512_mul_ps(v, _mm512_set1_ps(s)));
}

#elif defined(SIMD_AVX2)
#define lp_izero() _mm256_setzero_si256()
#define lp_iset1(v) _mm256_set1_epi32(v)
#define lp_fset1(v) _mm256_set1_ps(v)
#define lp_iadd(a, b) _mm256_add_epi32(a, b)
#define lp_iand(a, b) _mm256_and_si256(a, b)
#define lp_ior(a, b) _mm256_or_si256(a, b)
#define lp_isllv(a, c) _mm256_sllv_epi32(a, _mm256_set1_epi32(c))
#define lp_isrlv(a, c) _mm256_srlv_epi32(a, _mm256_set1_epi32(c))
#define lp_iota(step) _mm256_mullo_epi32(_mm256_set1_epi32(step), \
	_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))

/* AVX2 has no masked 8- or 16-bit load: a tail goes through a zeroed copy. */
LPI __m128i lp_ld128(const void *p, int64_t bytes)
{
	uint8_t t[16] = { 0 };

	if (bytes >= 16)
		return _mm_loadu_si128((const __m128i *)p);
	memcpy(t, p, (size_t)(bytes > 0 ? bytes : 0));
	return _mm_loadu_si128((const __m128i *)t);
}

LPI simd_i lp_h16(const uint16_t *p, int64_t left)
{
	return _mm256_cvtepu16_epi32(lp_ld128(p, left * 2));
}

LPI simd_f lp_h2f(const int f16, const uint16_t *p, int64_t left)
{
	if (f16)
		return _mm256_cvtph_ps(lp_ld128(p, left * 2));
	return _mm256_castsi256_ps(_mm256_slli_epi32(lp_h16(p, left), 16));
}

LPI simd_i lp_gather16(const uint16_t *x, simd_i idx, simd_m m)
{
	return _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int *)x, idx, m, 2);
}

LPI simd_f lp_hgather(const int f16, const uint16_t *x, simd_i idx, simd_m m)
{
	simd_i g = lp_gather16(x, idx, m);

	if (f16) {
		g = _mm256_and_si256(g, _mm256_set1_epi32(0xffff));
		return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(g),
							_mm256_extracti128_si256(g, 1)));
	}
	return _mm256_castsi256_ps(_mm256_slli_epi32(g, 16));
}

LPI simd_i lp_gather8(const uint8_t *x, simd_i idx, simd_m m)
{
	return _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int *)x, idx, m, 1);
}

/* x[col[t + b] + q] (16-bit) as fp32 in lane 4b + q, for the blocks b below min(left, VL / 4). */
LPI simd_f lp_hgather4(const int f16, const uint16_t *x, const int32_t *col, int64_t t,
		       int64_t left)
{
	__m128i idx = _mm_setr_epi32(col[t], left >= 2 ? col[t + 1] : 0, 0, 0);
	__m128i m = _mm_setr_epi32(-1, -1, left >= 2 ? -1 : 0, left >= 2 ? -1 : 0);
	__m128i g = _mm_mask_i32gather_epi64(_mm_setzero_si128(), (const long long *)x, idx, m, 2);

	if (f16)
		return _mm256_cvtph_ps(g);
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(g), 16));
}

LPI simd_i lp_u8(const int8_t *p, int64_t left)
{
	return _mm256_cvtepu8_epi32(lp_ld128(p, left < 8 ? left : 8));
}

LPI simd_i lp_ld32(const void *p, int64_t left)
{
	return _mm256_maskload_epi32((const int *)p, tail_mask256(left));
}

LPI simd_i lp_dpbusd(simd_i acc, simd_i a, simd_i b)
{
#if LP_VNNI
	return _mm256_dpbusd_avx_epi32(acc, a, b);
#else
	simd_i alo = _mm256_and_si256(a, _mm256_set1_epi32(0x00ff00ff));
	simd_i ahi = _mm256_srli_epi16(a, 8);
	simd_i blo = _mm256_srai_epi16(_mm256_slli_epi16(b, 8), 8);
	simd_i bhi = _mm256_srai_epi16(b, 8);

	return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(alo, blo),
						      _mm256_madd_epi16(ahi, bhi)));
#endif
}

LPI simd_f lp_dpbf16(simd_f acc, simd_i a, simd_i b)
{
	simd_i hi = _mm256_set1_epi32((int)0xffff0000u);

	acc = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(a, hi)),
			      _mm256_castsi256_ps(_mm256_and_si256(b, hi)), acc);
	return _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(a, 16)),
			       _mm256_castsi256_ps(_mm256_slli_epi32(b, 16)), acc);
}

LPI int32_t lp_ihsum(simd_i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

LPI void lp_st_i8(int full, simd_m m, float *p, simd_i acc, int32_t corr, float s)
{
	simd_f v = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc, _mm256_set1_epi32(corr)));

	simd_st(full, m, p, _mm256_mul_ps(v, _mm256_set1_ps(s)));
}
#endif

#endif
