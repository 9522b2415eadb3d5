/*
 * csr_act for AVX-512 (see act.c). N = 1: csr's gather dot products with
 * the product of each zero x masked off. N >= 2: each run of a segment's
 * non-zeros is compacted to those whose X row is live, 16 at a time (a
 * gather of their flags, then compress-stores), then summed by csr's
 * register-resident segment kernel.
 */
#define SIMD_AVX512 1
#include "kernels/cpu/seg.h"

#if CPU_X86

#define RUN 256

INL512 void act_chunk512(const int nv, const int full, const struct cpu_csr *c, const uint8_t *xnz,
			 int64_t m, int64_t r0, int64_t r1, const float *x, float *y, int64_t n,
			 __mmask16 mt)
{
	int32_t col[RUN + 16];
	float val[RUN + 16];

	for (int64_t t = 0; t < c->tiles; t++) {
		const uint8_t *flags = xnz + t * c->tile_w;

		for (int64_t i = r0; i < r1; i++) {
			int32_t lo = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
			int first = t == 0;

			/* the first tile writes the Y chunk even with nothing live */
			for (int32_t j0 = lo; j0 < hi || first; j0 += RUN) {
				int32_t j1 = hi - j0 < RUN ? hi : j0 + RUN;
				int live = 0;

				/* 16 at a time: gather the flags, compress the live (column, value) pairs */
				for (int32_t j = j0; j < j1; j += 16) {
					__mmask16 in = j1 - j >= 16 ? 0xffff : (__mmask16)((1u << (j1 - j)) - 1);
					__m512i cj = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(in, c->col + j));
					__m512i fl = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), in, cj, flags, 1);
					__mmask16 keep = _mm512_mask_test_epi32_mask(in, fl, _mm512_set1_epi32(0xff));

					_mm512_mask_compressstoreu_epi32(col + live, keep, cj);
					_mm512_mask_compressstoreu_ps(val + live, keep, _mm512_maskz_loadu_ps(in, c->val + j));
					live += __builtin_popcount(keep);
				}
				if (live || first)
					seg(nv, full, mt, 0, col, val, live, x + t * c->tile_w * n, n,
					    y + i * n, first, NULL, i);
				first = 0;
			}
		}
	}
}

CPU_AVX512 void cpu_csr_act_part_avx512(const struct spp_encoded *w, const uint8_t *xnz, int64_t r0,
					int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_csr *c = w->impl;

	if (n == 1) {
		/* csr's gathers, each product of a zero x masked off */
		csr_rows_n1(c, w->m, r0, r1, x, y, 1, NULL);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;
		__mmask16 mt = tail_mask512(cw);

#define ACT_BODY(nv, full) act_chunk512(nv, full, c, xnz, w->m, r0, r1, x + j0, y + j0, n, mt)
		SIMD_CHUNK_DISPATCH(cw, ACT_BODY);
#undef ACT_BODY
	}
}
#endif
