/*
 * The bitmask vector kernel (see bitmask.c for the layout), written once
 * against simd.h and compiled per ISA by bitmask_avx2.c and
 * bitmask_avx512.c. Those define SIMD_AVX2 / SIMD_AVX512 and, before
 * including this, the N = 1 row product
 *   float bm_dot(const uint8_t *mr, const float *val, int64_t k, const float *x, int64_t nnz)
 * which stays per ISA: AVX-512 expands the packed values with
 * vexpandps or a permute, AVX2 has no expand and emulates it with pdep
 * and a permute. BM_ROWS1_ISA() runs rows [r0, r1) at N = 1 with one of
 * them, by BM_ROWS1(dot).
 */
#ifndef SPP_KERNELS_CPU_BITMASK_BODY_H
#define SPP_KERNELS_CPU_BITMASK_BODY_H

#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/simd.h"

/* Mask bits [c, c+64) of a row, clipped to the row's k columns. */
SIMD_INL uint64_t mask_word(const uint8_t *mr, int64_t c, int64_t k)
{
	uint64_t wd = 0;
	int64_t left = k - c;

	SPP_TRACE_LOAD(mr + c / 8, left >= 64 ? 8 : (left + 7) / 8);
	if (left >= 64) {
		memcpy(&wd, mr + c / 8, 8);
		return wd;
	}
	memcpy(&wd, mr + c / 8, (size_t)((left + 7) / 8));
	return wd & ((1ull << left) - 1);
}

/* N = 1: rows [r0, r1) of bitmask b, each by dot(mask row, values, k, x, its non-zeros), through the epilogue e. */
#define BM_ROWS1(dot)                                                                        \
	for (int64_t i = r0; i < r1; i++) {                                                  \
		SPP_TRACE_LOAD(&b->ptr[i], 4);                                               \
		SPP_TRACE_STORE(&y[i], 4);                                                   \
		y[i] = cpu_epi1(e, i, dot(b->mask + i * b->stride, b->val + b->ptr[i], k, x,   \
					  b->ptr[i + 1] - b->ptr[i]));                       \
	}

/* N >= 2: one Y row chunk in registers, a non-zero per set bit; stored through the epilogue e. */
SIMD_INL void bm_row(const int nv, const int full, simd_m mt,
		     const uint8_t *mr, const float *val, int64_t k,
		     const float *x, int64_t n, float *yr, const struct spp_epi *e, int64_t row)
{
	simd_f a[2][4];

	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		a[0][v] = a[1][v] = simd_zero();
	for (int64_t c = 0; c < k; c += 64) {
		uint64_t wd = mask_word(mr, c, k);

		while (wd) {
			const float *xr = x + (c + __builtin_ctzll(wd)) * n;
			simd_f wv = simd_bcast(val++);

			wd &= wd - 1;
			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				a[0][v] = simd_fmadd(wv, simd_ld(full || v < nv - 1, mt, xr + SIMD_VL * v), a[0][v]);
			if (!wd)
				break;
			xr = x + (c + __builtin_ctzll(wd)) * n;
			wv = simd_bcast(val++);
			wd &= wd - 1;
			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				a[1][v] = simd_fmadd(wv, simd_ld(full || v < nv - 1, mt, xr + SIMD_VL * v), a[1][v]);
		}
	}
	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		simd_st(full || v < nv - 1, mt, yr + SIMD_VL * v, simd_epi(e, row, simd_add(a[0][v], a[1][v])));
}

SIMD_TARGET void SIMD_NAME(cpu_bitmask_part)(const struct spp_encoded *w, int p,
					     const float *x, float *y, int64_t n,
					     const struct spp_epi *e)
{
	const struct cpu_bitmask *b = w->impl;
	int64_t k = w->k, r0, r1;

	if (!cpu_part_range(b->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		BM_ROWS1_ISA();
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += SIMD_CHUNK) {
		int64_t cw = n - j0 < SIMD_CHUNK ? n - j0 : SIMD_CHUNK;
		simd_m mt = simd_chunk_tail(cw);

		for (int64_t i = r0; i < r1; i++) {
			const uint8_t *mr = b->mask + i * b->stride;
			const float *val = b->val + b->ptr[i];

			SPP_TRACE_LOAD(&b->ptr[i], 4);

#define BM_BODY(nv, full) bm_row(nv, full, mt, mr, val, k, x + j0, n, y + i * n + j0, e, i)
			SIMD_CHUNK_DISPATCH(cw, BM_BODY);
#undef BM_BODY
		}
	}
}
#endif

#endif
