/*
 * The csr vector kernel (see csr.c for the layout), written once against
 * simd.h and compiled per ISA by csr_avx2.c and csr_avx512.c, which
 * define SIMD_AVX2 / SIMD_AVX512 first: cpu_csr_part_avx2 / _avx512.
 */
#ifndef SPP_KERNELS_CPU_CSR_BODY_H
#define SPP_KERNELS_CPU_CSR_BODY_H

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg.h"

SIMD_INL void csr_chunk(const int nv, const int full, const struct cpu_csr *c,
			int64_t m, int64_t r0, int64_t r1, const float *x,
			float *y, int64_t n, simd_m mt, const struct spp_epi *e)
{
	for (int64_t t = 0; t < c->tiles; t++)
		for (int64_t i = r0; i < r1; i++) {
			int32_t lo = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
			const struct spp_epi *et = t == c->tiles - 1 ? e : NULL;

			SPP_TRACE_LOAD(&c->ptr[t * m + i], 8);

			/* an empty segment adds nothing; the last still applies the epilogue */
			if (t > 0 && lo == hi && !(et && et->kind))
				continue;
			/* the next row's Y chunk, so that reading it does not stall */
			if (t > 0 && i + 1 < r1)
				for (int v = 0; v < nv; v++)
					_mm_prefetch((const char *)(y + (i + 1) * n + SIMD_VL * v), _MM_HINT_T0);
			seg(nv, full, mt, 1, c->col + lo, c->val + lo, hi - lo, x + t * c->tile_w * n, n,
			    y + i * n, t == 0, et, i);
		}
}

SIMD_TARGET void SIMD_NAME(cpu_csr_part)(const struct spp_encoded *w, int p, const float *x,
					 float *y, int64_t n, const struct spp_epi *e)
{
	const struct cpu_csr *c = w->impl;
	int64_t m = w->m, r0, r1;

	if (!cpu_part_range(c->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		csr_rows_n1(c, m, r0, r1, x, y, 0, e);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += SIMD_CHUNK) {
		int64_t cw = n - j0 < SIMD_CHUNK ? n - j0 : SIMD_CHUNK;
		simd_m mt = simd_chunk_tail(cw);

#define CSR_BODY(nv, full) csr_chunk(nv, full, c, m, r0, r1, x + j0, y + j0, n, mt, e)
		SIMD_CHUNK_DISPATCH(cw, CSR_BODY);
#undef CSR_BODY
	}
}
#endif

#endif
