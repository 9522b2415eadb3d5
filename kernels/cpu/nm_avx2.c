/* nmN_M kernels for AVX2 (see nm.c for the layout). */
#include <string.h>

#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N = 1 when N divides 8 and positions take at most 7 bits: 8 slots cover
 * 8/N groups; positions spread to bytes with pdep; x by gather.
 */
INL256 float nm_dot256(const struct cpu_nm *s, int64_t row, const float *x)
{
	const int64_t keep = s->keep, group = s->group, slots = s->groups * keep;
	const int64_t win = 8 / keep * group, S0 = row * slots;
	const uint64_t rep = ((1ull << s->bits) - 1) * 0x0101010101010101ull;
	const float *val = s->val + S0;
	__m256i lg = _mm256_mullo_epi32(
		_mm256_srli_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), __builtin_ctz((unsigned)keep)),
		_mm256_set1_epi32((int)group));
	__m256 a0 = _mm256_setzero_ps(), a1 = a0;
	int64_t sl = 0, c = 0;

	for (; sl < slots; sl += 8, c += win) {
		int64_t bit = (S0 + sl) * s->bits;
		uint64_t v;
		__m256i idx, m = tail_mask256(slots - sl < 8 ? slots - sl : 8);
		__m256 xv;

		memcpy(&v, s->pos + (bit >> 3), 8);
		idx = _mm256_add_epi32(lg, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(
			(long long)_pdep_u64(v >> (bit & 7), rep))));
		xv = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x + c, idx, _mm256_castsi256_ps(m), 4);
		if ((sl / 8) & 1)
			a1 = _mm256_fmadd_ps(_mm256_maskload_ps(val + sl, m), xv, a1);
		else
			a0 = _mm256_fmadd_ps(_mm256_maskload_ps(val + sl, m), xv, a0);
	}
	return hsum256(_mm256_add_ps(a0, a1));
}

/* N >= 2: a Y row chunk in registers over the slots of groups [g0, g1). */
INL256 void nm_seg256(const int nv, const int full, __m256i mt,
		      const struct cpu_nm *s, int64_t S0, int64_t g0, int64_t g1,
		      const float *x, int64_t n, float *yr, int zero)
{
	const int64_t keep = s->keep, group = s->group;
	__m256 a[2][4];

#pragma GCC unroll 4
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? _mm256_setzero_ps() : simd_ld(full || v < nv - 1, mt, yr + 8 * v);
		a[1][v] = _mm256_setzero_ps();
	}
	for (int64_t g = g0; g < g1; g++)
		for (int64_t q = 0; q < keep; q++) {
			int64_t S = S0 + g * keep + q;
			const float *xr = x + (g * group + cpu_nm_pos(s, S)) * n;
			__m256 wv = _mm256_broadcast_ss(s->val + S);

			if ((g * keep + q) & 1) {
#pragma GCC unroll 4
				for (int v = 0; v < nv; v++)
					a[1][v] = _mm256_fmadd_ps(wv, simd_ld(full || v < nv - 1, mt, xr + 8 * v), a[1][v]);
			} else {
#pragma GCC unroll 4
				for (int v = 0; v < nv; v++)
					a[0][v] = _mm256_fmadd_ps(wv, simd_ld(full || v < nv - 1, mt, xr + 8 * v), a[0][v]);
			}
		}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		simd_st(full || v < nv - 1, mt, yr + 8 * v, _mm256_add_ps(a[0][v], a[1][v]));
}

INL256 void nm_chunk256(const int nv, const int full, const struct cpu_nm *s,
			int64_t r0, int64_t r1, const float *x, float *y,
			int64_t n, __m256i mt)
{
	int64_t slots = s->groups * s->keep;
	int64_t g0 = 0;

	do {
		int64_t g1 = g0 + s->tile_g < s->groups ? g0 + s->tile_g : s->groups;

		for (int64_t i = r0; i < r1; i++)
			nm_seg256(nv, full, mt, s, i * slots, g0, g1, x, n, y + i * n, g0 == 0);
		g0 = g1;
	} while (g0 < s->groups);
}

CPU_AVX2 void cpu_nm_part_avx2(const struct spp_encoded *w, int64_t r0,
			       int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_nm *s = w->impl;

	if (n == 1) {
		for (int64_t i = r0; i < r1; i++)
			y[i] = 8 % s->keep == 0 && s->bits <= 7 ? nm_dot256(s, i, x)
								: cpu_nm_dot_scalar(s, i, x);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 32) {
		int64_t cw = n - j0 < 32 ? n - j0 : 32;
		__m256i mt = tail_mask256(cw % 8 ? cw % 8 : 8);

#define NM_BODY(nv, full) nm_chunk256(nv, full, s, r0, r1, x + j0, y + j0, n, mt)
		SIMD_CHUNK_DISPATCH(cw, NM_BODY);
#undef NM_BODY
	}
}
#endif
