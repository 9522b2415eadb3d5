/*
 * bitmask kernels for AVX-512: bitmask_body.h over simd.h's AVX-512
 * vocabulary, with the N = 1 row product of this ISA.
 */
#include <string.h>

#define SIMD_AVX512 1
#include "kernels/cpu/simd.h"

#if CPU_X86
/* The packed values an expand of mask m reads from val: its first popcount(m) floats. */
INL512 __m512 expand512(__mmask16 m, const float *val)
{
	SPP_TRACE_MASKED(val, 4, (1u << __builtin_popcount(m)) - 1, 0);
	return _mm512_maskz_expandloadu_ps(m, val);
}

/* N = 1: 16 columns at a time, W expanded from the packed values. */
INL512 float bm_dot(const uint8_t *mr, const float *val, int64_t k, const float *x)
{
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	int64_t c = 0;

	for (; c + 64 <= k; c += 64) {
		uint64_t wd;
		__mmask16 m0, m1, m2, m3;

		SPP_TRACE_LOAD(mr + c / 8, 8);
		memcpy(&wd, mr + c / 8, 8);
		/* W streams from memory; as in seg.h's dot the prefetcher falls behind */
		_mm_prefetch((const char *)(val + DOT_PF), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 32), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + DOT_PF + 48), _MM_HINT_T0);
		_mm_prefetch((const char *)(mr + c / 8 + DOT_PF / 4), _MM_HINT_T0);
		m0 = (__mmask16)wd;
		m1 = (__mmask16)(wd >> 16);
		m2 = (__mmask16)(wd >> 32);
		m3 = (__mmask16)(wd >> 48);
		a0 = _mm512_fmadd_ps(expand512(m0, val), simd_loadu(x + c), a0);
		val += __builtin_popcount(m0);
		a1 = _mm512_fmadd_ps(expand512(m1, val), simd_loadu(x + c + 16), a1);
		val += __builtin_popcount(m1);
		a2 = _mm512_fmadd_ps(expand512(m2, val), simd_loadu(x + c + 32), a2);
		val += __builtin_popcount(m2);
		a3 = _mm512_fmadd_ps(expand512(m3, val), simd_loadu(x + c + 48), a3);
		val += __builtin_popcount(m3);
	}
	for (; c < k; c += 16) {
		__mmask16 valid = tail_mask512(k - c < 16 ? k - c : 16);
		uint16_t h;
		__mmask16 m;

		SPP_TRACE_LOAD(mr + c / 8, 2);
		memcpy(&h, mr + c / 8, 2); /* may read a byte past the row: masked */
		m = (__mmask16)(h & valid);
		a0 = _mm512_fmadd_ps(expand512(m, val), simd_maskz_loadu(valid, x + c), a0);
		val += __builtin_popcount(m);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
#endif

#include "kernels/cpu/bitmask_body.h"
