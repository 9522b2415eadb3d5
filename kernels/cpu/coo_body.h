/*
 * The coo vector kernel (see coo.c for the layout), written once against
 * simd.h and compiled per ISA by coo_avx2.c and coo_avx512.c, which
 * define SIMD_AVX2 / SIMD_AVX512 first: cpu_coo_part_avx2 / _avx512.
 */
#ifndef SPP_KERNELS_CPU_COO_BODY_H
#define SPP_KERNELS_CPU_COO_BODY_H

#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg.h"

/* A row with no non-zeros: cw columns of the epilogue of zero. */
SIMD_INL void coo_empty_row(float *yr, int64_t cw, const struct spp_epi *e, int64_t row)
{
	float v = cpu_epi1(e, row, 0.0f);

	SPP_TRACE_STORE(yr, cw * 4);
	if (v == 0.0f && !signbit(v)) {
		memset(yr, 0, (size_t)cw * sizeof(*yr));
		return;
	}
	for (int64_t j = 0; j < cw; j++)
		yr[j] = v;
}

SIMD_INL void coo_chunk(const int nv, const int full, const struct cpu_coo *c,
			int64_t z0, int64_t z1, int64_t r0, int64_t r1,
			const float *x, float *y, int64_t n, int64_t cw, simd_m mt,
			const struct spp_epi *e)
{
	int64_t cur = r0, z = z0;

	while (z < z1) {
		int32_t r = c->row[z];
		int64_t q = z + 1;

		SPP_TRACE_LOAD(&c->row[z], 4);
		while (q < z1 && (SPP_TRACE_LOAD(&c->row[q], 4), c->row[q] == r))
			q++;
		for (; cur < r; cur++)
			coo_empty_row(y + cur * n, cw, e, cur);
		seg(nv, full, mt, 0, c->col + z, c->val + z, q - z, x, n, y + (int64_t)r * n, 1, e, r);
		cur = (int64_t)r + 1;
		z = q;
	}
	for (; cur < r1; cur++)
		coo_empty_row(y + cur * n, cw, e, cur);
}

SIMD_TARGET void SIMD_NAME(cpu_coo_part)(const struct spp_encoded *w, int p, const float *x,
					 float *y, int64_t n, const struct spp_epi *ep)
{
	const struct cpu_coo *c = w->impl;
	int64_t z0, z1, r0, r1;

	if (!cpu_coo_range(c, p, &z0, &z1, &r0, &r1))
		return;

	if (n == 1) {
		int64_t cur = r0, z = z0;

		while (z < z1) {
			int32_t r = c->row[z];
			int64_t e = z + 1;

			SPP_TRACE_LOAD(&c->row[z], 4);
			while (e < z1 && (SPP_TRACE_LOAD(&c->row[e], 4), c->row[e] == r))
				e++;
			for (; cur < r; cur++) {
				SPP_TRACE_STORE(&y[cur], 4);
				y[cur] = cpu_epi1(ep, cur, 0.0f);
			}
			SPP_TRACE_STORE(&y[r], 4);
			y[r] = cpu_epi1(ep, r, simd_hsum(dot(0, 0, c->col + z, c->val + z, e - z, x, simd_zero())));
			cur = (int64_t)r + 1;
			z = e;
		}
		for (; cur < r1; cur++) {
			SPP_TRACE_STORE(&y[cur], 4);
			y[cur] = cpu_epi1(ep, cur, 0.0f);
		}
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += SIMD_CHUNK) {
		int64_t cw = n - j0 < SIMD_CHUNK ? n - j0 : SIMD_CHUNK;
		simd_m mt = simd_chunk_tail(cw);

#define COO_BODY(nv, full) coo_chunk(nv, full, c, z0, z1, r0, r1, x + j0, y + j0, n, cw, mt, ep)
		SIMD_CHUNK_DISPATCH(cw, COO_BODY);
#undef COO_BODY
	}
}
#endif

#endif
