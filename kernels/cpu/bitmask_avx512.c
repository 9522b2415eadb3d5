/*
 * bitmask kernels for AVX-512: bitmask_body.h over simd.h's AVX-512
 * vocabulary, with the N = 1 row products of this ISA: one by vexpandps,
 * one by a permute (spp_expand_detect() in kernels.h chooses).
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

/*
 * At N = 1 W streams from memory and, as in seg.h's dot, the prefetcher
 * falls behind: each 64 columns prefetch DOT_PF ahead 64 values (the
 * most they hold) and the mask bytes.
 */
INL512 void bm_prefetch(const float *val, const uint8_t *mask)
{
	_mm_prefetch((const char *)(val + DOT_PF), _MM_HINT_T0);
	_mm_prefetch((const char *)(val + DOT_PF + 16), _MM_HINT_T0);
	_mm_prefetch((const char *)(val + DOT_PF + 32), _MM_HINT_T0);
	_mm_prefetch((const char *)(val + DOT_PF + 48), _MM_HINT_T0);
	_mm_prefetch((const char *)(mask + DOT_PF / 4), _MM_HINT_T0);
}

/* N = 1: 16 columns at a time, W expanded from the packed values. */
INL512 float bm_dot(const uint8_t *mr, const float *val, int64_t k, const float *x, int64_t nnz)
{
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	int64_t c = 0;

	(void)nnz;
	for (; c + 64 <= k; c += 64) {
		uint64_t wd;
		__mmask16 m0, m1, m2, m3;

		SPP_TRACE_LOAD(mr + c / 8, 8);
		memcpy(&wd, mr + c / 8, 8);
		bm_prefetch(val, mr + c / 8);
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

#define INL_VP static inline __attribute__((always_inline)) CPU_AVX512_VPOPCNT

/*
 * The permute expand: lane p of the dense vector takes packed value
 * rank(p), the mask bits below p counted with vpopcntd, if its bit is
 * set, else a lane of the zero vector (index 16 + rank in vpermt2ps).
 * b holds the chunk's 16 mask bits in every lane, at bit 0 or at bit 16:
 * pre[p] keeps the bits below p, rot[p] rotates bit p to bit 4. The
 * values come by a full 16-float load, or with exact by a load masked
 * to the chunk's pc values.
 */
INL_VP __m512 permute512(__m512i b, __m512i pre, __m512i rot, const float *val, int exact, int pc)
{
	__m512i rank = _mm512_popcnt_epi32(_mm512_and_si512(b, pre));
	__m512i bit = _mm512_rolv_epi32(b, rot);
	/* rank | (~bit & 16) */
	__m512i idx = _mm512_ternarylogic_epi32(rank, bit, _mm512_set1_epi32(16), 0xF2);
	__m512 v = exact ? simd_maskz_loadu((__mmask16)((1u << pc) - 1), val) : simd_loadu(val);

	return _mm512_permutex2var_ps(v, idx, _mm512_setzero_ps());
}

/*
 * N = 1 as bm_dot, each chunk expanded by permute512. Rows of density
 * 1/2 and up (bm_dot_permute) load their values exactly: there the
 * kernel streams W, and the full loads were measured slower (4096 x 4096,
 * 1 thread, W evicted: 2.6-2.9 ms against 2.4 ms at 20 % sparsity),
 * while at 90 % the masks cost 13 % (1.07-1.10 ms against 0.94-0.97).
 */
INL_VP float bm_dot_permute_by(const int exact, const uint8_t *mr, const float *val, int64_t k,
				const float *x)
{
	const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	/* (1 << p) - 1, and the same 16 bits up for a chunk at bit 16 */
	const __m512i pre = _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), lanes),
					     _mm512_set1_epi32(1));
	const __m512i pre_hi = _mm512_slli_epi32(pre, 16);
	const __m512i rot = _mm512_sub_epi32(_mm512_set1_epi32(36), lanes); /* 4 - p (mod 32) */
	const __m512i rot_hi = _mm512_sub_epi32(_mm512_set1_epi32(20), lanes);
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	int64_t c = 0;

	for (; c + 64 <= k; c += 64) {
		uint32_t lo, hi;
		__m512i blo, bhi;
		int p0, p1, p2, p3;

		SPP_TRACE_LOAD(mr + c / 8, 8);
		memcpy(&lo, mr + c / 8, 4);
		memcpy(&hi, mr + c / 8 + 4, 4);
		blo = _mm512_set1_epi32((int)lo);
		bhi = _mm512_set1_epi32((int)hi);
		p0 = __builtin_popcount(lo & 0xffff);
		p1 = __builtin_popcount(lo >> 16);
		p2 = __builtin_popcount(hi & 0xffff);
		p3 = __builtin_popcount(hi >> 16);
		bm_prefetch(val, mr + c / 8);
		a0 = _mm512_fmadd_ps(permute512(blo, pre, rot, val, exact, p0), simd_loadu(x + c), a0);
		val += p0;
		a1 = _mm512_fmadd_ps(permute512(blo, pre_hi, rot_hi, val, exact, p1), simd_loadu(x + c + 16), a1);
		val += p1;
		a2 = _mm512_fmadd_ps(permute512(bhi, pre, rot, val, exact, p2), simd_loadu(x + c + 32), a2);
		val += p2;
		a3 = _mm512_fmadd_ps(permute512(bhi, pre_hi, rot_hi, val, exact, p3), simd_loadu(x + c + 48), a3);
		val += p3;
	}
	for (; c < k; c += 16) {
		__mmask16 valid = tail_mask512(k - c < 16 ? k - c : 16);
		uint16_t h;

		SPP_TRACE_LOAD(mr + c / 8, 2);
		memcpy(&h, mr + c / 8, 2); /* may read a byte past the row: masked */
		h &= valid;
		a0 = _mm512_fmadd_ps(permute512(_mm512_set1_epi32(h), pre, rot, val, 1, __builtin_popcount(h)),
				     simd_maskz_loadu(valid, x + c), a0);
		val += __builtin_popcount(h);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

INL_VP float bm_dot_permute(const uint8_t *mr, const float *val, int64_t k, const float *x, int64_t nnz)
{
	return 2 * nnz >= k ? bm_dot_permute_by(1, mr, val, k, x) : bm_dot_permute_by(0, mr, val, k, x);
}

static void bm_rows1_permute(const struct cpu_bitmask *b, int64_t r0, int64_t r1, int64_t k,
			     const float *x, float *y, const struct spp_epi *e);

/* N = 1 rows: the permute where spp_expand_detect() chooses it, else vexpandps. */
#define BM_ROWS1_ISA()                                                              \
	do {                                                                        \
		if (spp_expand_detect() == SPP_EXPAND_PERMUTE)                      \
			bm_rows1_permute(b, r0, r1, k, x, y, e);                    \
		else                                                                \
			BM_ROWS1(bm_dot);                                           \
	} while (0)
#endif

#include "kernels/cpu/bitmask_body.h"

#if CPU_X86
static __attribute__((noinline)) CPU_AVX512_VPOPCNT void
bm_rows1_permute(const struct cpu_bitmask *b, int64_t r0, int64_t r1, int64_t k, const float *x,
		 float *y, const struct spp_epi *e)
{
	BM_ROWS1(bm_dot_permute);
}
#endif
