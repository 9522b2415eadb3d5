/* nmN_M kernels for AVX2 (see nm.c for the layout). */
#include <string.h>

#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N = 1 when N divides 8 and positions take at most 7 bits: the dot
 * product of one segment (len slots from storage slot S0, x at its first
 * column); 8 slots cover 8/N groups; positions spread to bytes with pdep;
 * x by gather.
 */
INL256 float nm_dot256(const struct cpu_nm *s, int64_t S0, int64_t len, const float *x)
{
	const int64_t keep = s->keep, group = s->group;
	const int64_t win = 8 / keep * group;
	const uint64_t rep = ((1ull << s->bits) - 1) * 0x0101010101010101ull;
	const float *val = s->val + S0;
	__m256i lg = _mm256_mullo_epi32(
		_mm256_srli_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), __builtin_ctz((unsigned)keep)),
		_mm256_set1_epi32((int)group));
	__m256 a0 = _mm256_setzero_ps(), a1 = a0;
	int64_t sl = 0, c = 0;

	for (; sl < len; sl += 8, c += win) {
		uint64_t v;
		__m256i idx, m = tail_mask256(len - sl < 8 ? len - sl : 8);
		__m256 xv;

		CPU_NM_TRACE_POS(s, S0 + sl, s->bits);
		v = cpu_nm_pos_run(s, S0 + sl, s->bits);
		idx = _mm256_add_epi32(lg, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(
			(long long)_pdep_u64(v, rep))));
		xv = simd_mask_gather(x + c, idx, m);
		if ((sl / 8) & 1)
			a1 = _mm256_fmadd_ps(simd_maskz_loadu(m, val + sl), xv, a1);
		else
			a0 = _mm256_fmadd_ps(simd_maskz_loadu(m, val + sl), xv, a0);
	}
	return hsum256(_mm256_add_ps(a0, a1));
}

/* The four sums of a[0..3] (two horizontal adds and a fold). */
INL256 __m128 hsum256x4(const __m256 *a)
{
	__m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));

	return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/*
 * N = 1 as a pure stream where the 8 slots of a step cover 16 columns of x
 * (2:4, 4:8) or 32 (1:4) and M divides 8, so that no group straddles two
 * 8-column registers: the registers are plain loads and each slot takes
 * its value with a permute and static blends (lanes 0-3 from the first
 * register and 4-7 from the second at 16; two lanes a register at 32),
 * instead of a gather (4096 x 4096 2:4 from DRAM, 1 thread: 17.0 ms by
 * gathers, 4.2-4.5 ms so). One tile's segments of nr consecutive rows (4,
 * or 1 for the rest), which follow each other in storage: the x registers
 * of a step serve every row, and each row's dot product is added to y
 * (set at the first tile; the epilogue at the last). len slots a segment,
 * x at the tile's first column, kx columns of x from there. The steps
 * whose columns would run past K, and the last partial step, go slot by
 * slot.
 */
/*
 * Software prefetch 2 KiB ahead of a 4-row block's W (its segments are
 * one contiguous stream). 4096 x 4096 2:4, N = 1, 1 thread, speedups over
 * dense in two interleaved pairs of runs against the row-major kernel
 * this replaced: 0.91-0.95x of its speedup without, 0.98-1.02x with
 * (close to this VM's noise).
 */
#define NM_PF 2048
INL256 void nm_rows256_perm(const int wide, const int nr, const struct cpu_nm *s, int64_t S0,
			    int64_t len, const float *x, int64_t kx, float *y, int first,
			    const struct spp_epi *e, int64_t row)
{
	const int64_t keep = s->keep, group = s->group;
	const int64_t win = wide ? 32 : 16;
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i lg = _mm256_mullo_epi32(_mm256_srli_epi32(lane, __builtin_ctz((unsigned)keep)),
					      _mm256_set1_epi32((int)group));
	/* slot l's position: bits l*b.. of the step's packed positions, by a per-lane shift */
	const __m256i sh = _mm256_mullo_epi32(lane, _mm256_set1_epi32(s->bits));
	const __m256i pm = _mm256_set1_epi32((1 << s->bits) - 1);
	/* whole steps of 8 slots whose columns lie inside x */
	const int64_t steps = (len / 8 < kx / win ? len / 8 : kx / win);
	__m256 a[4];
	float sum[4];
	int64_t t;

	SPP_UNROLL(4)
	for (int u = 0; u < nr; u++)
		a[u] = _mm256_setzero_ps();
	for (t = 0; t < steps; t++) {
		const float *xc = x + t * win;
		__m256 x0 = simd_loadu(xc), x1 = simd_loadu(xc + 8);
		__m256 x2 = wide ? simd_loadu(xc + 16) : x0, x3 = wide ? simd_loadu(xc + 24) : x1;

		if (nr == 4) {
			const char *pf = (const char *)(s->val + S0) + NM_PF + t * 128;

			_mm_prefetch(pf, _MM_HINT_T0);
			_mm_prefetch(pf + 64, _MM_HINT_T0);
			if (t == 0)
				_mm_prefetch((const char *)s->pos + (S0 * s->bits >> 3) + NM_PF / 16, _MM_HINT_T0);
		}

		SPP_UNROLL(4)
		for (int u = 0; u < nr; u++) {
			int64_t S = S0 + u * len + t * 8;
			uint64_t v;
			__m256i idx;
			__m256 xv;

			CPU_NM_TRACE_POS(s, S, s->bits);
			v = cpu_nm_pos_run(s, S, s->bits);
			idx = _mm256_add_epi32(lg, _mm256_and_si256(_mm256_srlv_epi32(
				_mm256_set1_epi32((int)(uint32_t)v), sh), pm));
			xv = wide ? _mm256_blend_ps(_mm256_permutevar8x32_ps(x0, idx),
						    _mm256_permutevar8x32_ps(x1, idx), 0x0C)
				  : _mm256_blend_ps(_mm256_permutevar8x32_ps(x0, idx),
						    _mm256_permutevar8x32_ps(x1, idx), 0xF0);
			if (wide)
				xv = _mm256_blend_ps(xv, _mm256_blend_ps(_mm256_permutevar8x32_ps(x2, idx),
									 _mm256_permutevar8x32_ps(x3, idx), 0xC0),
						     0xF0);
			a[u] = _mm256_fmadd_ps(simd_loadu(s->val + S), xv, a[u]);
		}
	}
	if (nr == 4)
		_mm_storeu_ps(sum, hsum256x4(a));
	else
		sum[0] = hsum256(a[0]);
	SPP_UNROLL(4)
	for (int u = 0; u < nr; u++) {
		int64_t S = S0 + u * len + t * 8;
		float acc = sum[u] + cpu_nm_seg_dot(s, S, len - t * 8, x + t * win) + (first ? 0 : y[row + u]);

		if (!first)
			SPP_TRACE_LOAD(&y[row + u], 4);
		SPP_TRACE_STORE(&y[row + u], 4);
		y[row + u] = cpu_epi1(e, row + u, acc);
	}
}

/*
 * N >= 2, slot decoding. Where 8 slots cover whole groups (N divides 8) and
 * K x N fits int32, the positions of 8 slots are decoded at once with
 * vector shifts into X row offsets (column * n), so that each slot costs
 * one offset load instead of a scalar bit extraction; the rest slot by
 * slot. NM_SLOTS calls BODY(S, xr, u) for each slot S of the segment
 * that starts at storage slot S0 and holds ng groups from x's first row,
 * xr its X row.
 */
#define NM_SLOTS(s, S0, ng, x, n, fast, BODY)                                                   \
	do {                                                                                     \
		const int64_t keep_ = (s)->keep, group_ = (s)->group;                           \
		int64_t p_ = 0, p1_ = (ng) * keep_;                                              \
                                                                                                 \
		if (fast) {                                                                      \
			const int ks_ = __builtin_ctz((unsigned)keep_);                          \
			const __m256i lane_ = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);         \
			const __m256i lg_ = _mm256_mullo_epi32(_mm256_srli_epi32(lane_, ks_),   \
							       _mm256_set1_epi32((int)group_)); \
			const __m256i sh_ = _mm256_mullo_epi32(lane_, _mm256_set1_epi32((s)->bits)); \
			const __m256i pm_ = _mm256_set1_epi32((1 << (s)->bits) - 1);             \
			const __m256i nn_ = _mm256_set1_epi32((int)(n));                         \
			int32_t off_[8];                                                         \
                                                                                                 \
			for (; p_ + 8 <= p1_; p_ += 8) {                                         \
				int64_t S_ = (S0) + p_;                                          \
				uint64_t v_;                                                     \
				__m256i col_;                                                    \
                                                                                                 \
				CPU_NM_TRACE_POS((s), S_, (s)->bits);                           \
				v_ = cpu_nm_pos_run((s), S_, (s)->bits);                         \
				col_ = _mm256_add_epi32(                                         \
					_mm256_add_epi32(lg_, _mm256_set1_epi32((int)((p_ >> ks_) * group_))), \
					_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(   \
						(int)(uint32_t)v_), sh_), pm_));                 \
				_mm256_storeu_si256((__m256i *)off_, _mm256_mullo_epi32(col_, nn_)); \
				SPP_UNROLL(8)                                                    \
				for (int u_ = 0; u_ < 8; u_++)                                   \
					BODY(S_ + u_, (x) + off_[u_], u_);                       \
			}                                                                        \
		}                                                                                \
		for (; p_ < p1_; p_++) {                                                         \
			CPU_NM_TRACE_POS((s), (S0) + p_, (s)->bits);                             \
			BODY((S0) + p_, (x) + (p_ / keep_ * group_ + cpu_nm_pos(s, (S0) + p_)) * (n), p_); \
		}                                                                                \
	} while (0)

/* N >= 2: a Y row chunk in registers over one segment (NM_SLOTS's S0, ng, x). */
INL256 void nm_seg256(const int nv, const int full, __m256i mt, const int fast,
		      const struct cpu_nm *s, int64_t S0, int64_t ng,
		      const float *x, int64_t n, float *yr, int zero, const struct spp_epi *e, int64_t row)
{
	__m256 a[2][4];

	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? _mm256_setzero_ps() : simd_ld(full || v < nv - 1, mt, yr + 8 * v);
		a[1][v] = _mm256_setzero_ps();
	}
#define NM_SEG_BODY(S, xr, u)                                                                    \
	do {                                                                                     \
		__m256 wv_ = simd_bcast(s->val + (S));                                   \
		const int set_ = (int)((u) & 1);                                                 \
		SPP_UNROLL(4)                                                                    \
		for (int v = 0; v < nv; v++)                                                     \
			a[set_][v] = _mm256_fmadd_ps(wv_, simd_ld(full || v < nv - 1, mt, (xr) + 8 * v), \
						    a[set_][v]);                                 \
	} while (0)
	NM_SLOTS(s, S0, ng, x, n, fast, NM_SEG_BODY);
#undef NM_SEG_BODY
	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		simd_st(full || v < nv - 1, mt, yr + 8 * v, simd_epi(e, row, _mm256_add_ps(a[0][v], a[1][v])));
}

/*
 * N >= 64: 64 columns of a Y row in eight accumulators over one segment:
 * each slot's position decoded and value broadcast once for eight FMAs
 * instead of four.
 */
INL256 void nm_seg256_64(const int fast, const struct cpu_nm *s, int64_t S0, int64_t ng,
			 const float *x, int64_t n, float *yr, int zero, const struct spp_epi *e,
			 int64_t row)
{
	const __m256i mt_all = _mm256_set1_epi32(-1);
	__m256 a[8];

	SPP_UNROLL(8)
	for (int v = 0; v < 8; v++)
		a[v] = zero ? _mm256_setzero_ps() : simd_loadu(yr + 8 * v);
#define NM_SEG_BODY(S, xr, u)                                                                    \
	do {                                                                                     \
		__m256 wv_ = simd_bcast(s->val + (S));                                   \
		SPP_UNROLL(8)                                                                    \
		for (int v = 0; v < 8; v++)                                                      \
			a[v] = _mm256_fmadd_ps(wv_, simd_loadu((xr) + 8 * v), a[v]);        \
	} while (0)
	NM_SLOTS(s, S0, ng, x, n, fast, NM_SEG_BODY);
#undef NM_SEG_BODY
	SPP_UNROLL(8)
	for (int v = 0; v < 8; v++)
		simd_st(1, mt_all, yr + 8 * v, simd_epi(e, row, a[v]));
}

/* N >= 2: a chunk of Y's columns, one K tile over all rows of the part before the next. */
INL256 void nm_chunk256(const int nv, const int full, const struct cpu_nm *s,
			int64_t r0, int64_t r1, const float *x, float *y,
			int64_t n, __m256i mt, const struct spp_epi *e)
{
	/* 8 slots over whole groups, every X row offset in int32 */
	const int fast = 8 % s->keep == 0 && s->bits <= 7 &&
			 (double)(s->groups * s->group) * (double)n < 2147483647.0;
	int64_t g0 = 0;

	do {
		int64_t g1 = cpu_nm_tile_end(s, g0), ng = g1 - g0;
		const struct spp_epi *et = g1 == s->groups ? e : NULL;
		const float *xt = x + g0 * s->group * n;

		for (int64_t i = r0; i < r1; i++)
			if (nv == 8)
				nm_seg256_64(fast, s, cpu_nm_seg(s, i, g0), ng, xt, n, y + i * n, g0 == 0, et, i);
			else
				nm_seg256(nv, full, mt, fast, s, cpu_nm_seg(s, i, g0), ng, xt, n, y + i * n,
					  g0 == 0, et, i);
		g0 = g1;
	} while (g0 < s->groups);
}

/* N = 1: tile by tile, the segments of every row of the part. */
INL256 void nm_vec256(const struct cpu_nm *s, int64_t r0, int64_t r1, const float *x, int64_t k,
		      float *y, const struct spp_epi *e)
{
	/* 8 slots over 16 or 32 columns, M dividing 8: loads and permutes */
	const int64_t win = 8 % s->keep == 0 && 8 % s->group == 0 ? 8 / s->keep * s->group : 0;
	const int gather = 8 % s->keep == 0 && s->bits <= 7;
	int64_t g0 = 0;

	do {
		int64_t g1 = cpu_nm_tile_end(s, g0), len = (g1 - g0) * s->keep, c0 = g0 * s->group;
		const struct spp_epi *et = g1 == s->groups ? e : NULL;
		int64_t i = r0;

		if (win == 16 || win == 32) {
			for (; i + 4 <= r1; i += 4)
				win == 16 ? nm_rows256_perm(0, 4, s, cpu_nm_seg(s, i, g0), len, x + c0, k - c0, y,
							    g0 == 0, et, i)
					  : nm_rows256_perm(1, 4, s, cpu_nm_seg(s, i, g0), len, x + c0, k - c0, y,
							    g0 == 0, et, i);
			for (; i < r1; i++)
				win == 16 ? nm_rows256_perm(0, 1, s, cpu_nm_seg(s, i, g0), len, x + c0, k - c0, y,
							    g0 == 0, et, i)
					  : nm_rows256_perm(1, 1, s, cpu_nm_seg(s, i, g0), len, x + c0, k - c0, y,
							    g0 == 0, et, i);
		}
		for (; i < r1; i++) {
			int64_t S0 = cpu_nm_seg(s, i, g0);
			float acc = (gather ? nm_dot256(s, S0, len, x + c0) : cpu_nm_seg_dot(s, S0, len, x + c0)) +
				    (g0 == 0 ? 0 : y[i]);

			if (g0)
				SPP_TRACE_LOAD(&y[i], 4);
			SPP_TRACE_STORE(&y[i], 4);
			y[i] = cpu_epi1(et, i, acc);
		}
		g0 = g1;
	} while (g0 < s->groups);
}

CPU_AVX2 void cpu_nm_part_avx2(const struct spp_encoded *w, int p, const float *x, float *y,
			       int64_t n, const struct spp_epi *e)
{
	const struct cpu_nm *s = w->impl;
	int64_t r0, r1;

	if (!cpu_part_range(s->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		nm_vec256(s, r0, r1, x, w->k, y, e);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 32) {
		int64_t cw = n - j0 < 32 ? n - j0 : 32;
		__m256i mt = tail_mask256(cw % 8 ? cw % 8 : 8);

		if (n - j0 >= 64) {
			nm_chunk256(8, 1, s, r0, r1, x + j0, y + j0, n, mt, e);
			j0 += 32;
			continue;
		}
#define NM_BODY(nv, full) nm_chunk256(nv, full, s, r0, r1, x + j0, y + j0, n, mt, e)
		SIMD_CHUNK_DISPATCH(cw, NM_BODY);
#undef NM_BODY
	}
}
#endif
