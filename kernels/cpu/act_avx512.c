/*
 * csr_act for AVX-512 at N >= 2 (see act.c): each run of a segment's
 * non-zeros is compacted to those whose X row is live, without a branch
 * per non-zero, then summed by csr's register-resident segment kernel, so
 * that skipping costs a flag load and a store per non-zero and nothing else.
 */
#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg_avx512.h"

#define RUN 256

INL512 void act_chunk512(const int nv, const int full, const struct cpu_csr *c, const uint8_t *xnz,
			 int64_t m, int64_t r0, int64_t r1, const float *x, float *y, int64_t n,
			 __mmask16 mt)
{
	uint16_t col[RUN];
	float val[RUN];

	for (int64_t t = 0; t < c->tiles; t++) {
		const uint8_t *flags = xnz + t * c->tile_w;

		for (int64_t i = r0; i < r1; i++) {
			int32_t lo = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
			int first = t == 0;

			/* the first tile writes the Y chunk even with nothing live */
			for (int32_t j0 = lo; j0 < hi || first; j0 += RUN) {
				int32_t j1 = hi - j0 < RUN ? hi : j0 + RUN;
				int live = 0;

				for (int32_t j = j0; j < j1; j++) {
					col[live] = c->col[j];
					val[live] = c->val[j];
					live += flags[c->col[j]];
				}
				if (live || first)
					seg512(nv, full, mt, 1, col, val, live, x + t * c->tile_w * n, n,
					       y + i * n, first);
				first = 0;
			}
		}
	}
}

CPU_AVX512 void cpu_csr_act_part_avx512(const struct spp_encoded *w, const uint8_t *xnz, int64_t r0,
					int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_csr *c = w->impl;

	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;
		__mmask16 mt = tail_mask512(cw);

#define ACT_BODY(nv, full) act_chunk512(nv, full, c, xnz, w->m, r0, r1, x + j0, y + j0, n, mt)
		CHUNK512_DISPATCH(cw, ACT_BODY);
#undef ACT_BODY
	}
}
#endif
