/*
 * The segment kernels of csr, coo and csr_act, written once against
 * simd.h's vocabulary (included after it by the per-ISA files).
 *
 * seg: one Y row chunk of nv vectors (the last masked by mt unless
 * `full`) += sum over a segment of (value, column) of value * X row.
 * Columns are int32 (ci = 0) or uint16 (ci = 1), relative to x. With e
 * (the segment that completes the row: NULL otherwise) the chunk is
 * stored through the fused epilogue of row `row`.
 * The chunk stays in registers for the whole segment, with two sets of
 * accumulators so that consecutive non-zeros do not wait on one FMA chain
 * (four sets measured no faster; on AVX2 two sets of 4 ymm leave room in
 * its 16 vector registers).
 *
 * dot: the N = 1 segment product by gathers of x; with `skip` a product
 * whose x is zero is masked off (the activation kernels: an infinite
 * weight times a zero x never reaches the sum).
 */
#ifndef SPP_KERNELS_CPU_SEG_H
#define SPP_KERNELS_CPU_SEG_H

#include "kernels/cpu/simd.h"

/* The N = 1 kernels use dot_scalar on AVX2 (Zen 3's gathers), dot's gathers on AVX-512. */
#if defined(SIMD_AVX2)
#define SPP_SCALAR_DOT 1
#else
#define SPP_SCALAR_DOT 0
#endif

#if CPU_X86
SIMD_INL void seg(const int nv, const int full, simd_m mt,
		  const int ci, const void *col, const float *val, int64_t len,
		  const float *x, int64_t n, float *yr, int zero, const struct spp_epi *e, int64_t row)
{
	simd_f a[2][4];
	int64_t j = 0;

	/*
	 * Y is read first, not last: a segment is longer than the reorder
	 * window, so a Y load issued at its end would stall on the miss.
	 */
	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? simd_zero() : simd_ld(full || v < nv - 1, mt, yr + SIMD_VL * v);
		a[1][v] = simd_zero();
	}
	/* the columns of 4 (uint16) or 2 (int32) non-zeros from one 8-byte load, taken apart by shifts */
#define SEG_STEP(STEP, T, BITS)                                                                         \
	for (; j + STEP <= len; j += STEP) {                                                            \
		uint64_t q;                                                                             \
                                                                                                        \
		if ((j & 15) == 0) { /* a line of values, SEG_PF ahead, and of their columns */          \
			_mm_prefetch((const char *)(val + j + SEG_PF), _MM_HINT_T0);                    \
			_mm_prefetch((const char *)col + (j + SEG_PF) * (int64_t)sizeof(T), _MM_HINT_T0); \
		}                                                                                       \
		SPP_TRACE_LOAD((const char *)col + j * (int64_t)sizeof(T), 8);                         \
		memcpy(&q, (const char *)col + j * (int64_t)sizeof(T), 8);                             \
		SPP_UNROLL(4) for (int u = 0; u < STEP; u++)                                  \
		{                                                                                       \
			const float *xr = x + (int64_t)(T)(q >> (BITS * u)) * n;                         \
			simd_f wv = simd_bcast(val + j + u);                                            \
                                                                                                        \
			SPP_UNROLL(4) for (int v = 0; v < nv; v++)                            \
				a[u & 1][v] = simd_fmadd(wv, simd_ld(full || v < nv - 1, mt, xr + SIMD_VL * v), \
							 a[u & 1][v]);                                          \
		}                                                                                       \
	}
	if (ci)
		SEG_STEP(4, uint16_t, 16)
	else
		SEG_STEP(2, int32_t, 32)
#undef SEG_STEP
	for (; j < len; j++) {
		const float *xr = x + colat(ci, col, j) * n;
		simd_f wv = simd_bcast(val + j);

		SPP_TRACE_LOAD((const char *)col + j * (ci ? 2 : 4), ci ? 2 : 4);

		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[0][v] = simd_fmadd(wv, simd_ld(full || v < nv - 1, mt, xr + SIMD_VL * v), a[0][v]);
	}
	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		simd_st(full || v < nv - 1, mt, yr + SIMD_VL * v, simd_epi(e, row, simd_add(a[0][v], a[1][v])));
}

SIMD_INL simd_f dot(const int ci, const int skip, const void *col, const float *val, int64_t len,
		    const float *x, simd_f acc)
{
	/* 64-byte lines of one step's 2 * VL values and of its indices */
	const int ib = ci ? 2 : 4, vlines = 2 * SIMD_VL * 4 / 64;
	const int ilines = 2 * SIMD_VL * ib > 64 ? 2 * SIMD_VL * ib / 64 : 1;
	simd_f acc1 = simd_zero();
	int64_t j = 0;

	for (; j + 2 * SIMD_VL <= len; j += 2 * SIMD_VL) {
		simd_i i0 = simd_idx(ci, col, j, SIMD_VL, SIMD_ALL);
		simd_i i1 = simd_idx(ci, col, j + SIMD_VL, SIMD_VL, SIMD_ALL);

		/*
		 * W streams from memory; the gathers keep the load ports so busy
		 * that the hardware prefetcher falls behind (measured on AVX-512
		 * at N = 1, 65 % sparsity: 2x to 2.6x faster with this prefetch).
		 */
		SPP_UNROLL(2)
		for (int l = 0; l < vlines; l++)
			_mm_prefetch((const char *)(val + j + DOT_PF + 16 * l), _MM_HINT_T0);
		SPP_UNROLL(2)
		for (int l = 0; l < ilines; l++)
			_mm_prefetch((const char *)col + (j + DOT_PF + 16 * l) * ib, _MM_HINT_T0);

		acc = simd_fma_live(skip, simd_loadu(val + j), simd_gather(x, i0), acc);
		acc1 = simd_fma_live(skip, simd_loadu(val + j + SIMD_VL), simd_gather(x, i1), acc1);
	}
	for (; j < len; j += SIMD_VL) {
		simd_m m = simd_first(len - j);
		simd_f g = simd_mask_gather(x, simd_idx(ci, col, j, len - j, m), m);

		acc1 = simd_fma_live(skip, simd_maskz_loadu(m, val + j), g, acc1);
	}
	return simd_add(acc, acc1);
}

/*
 * The N = 1 segment product with scalar loads of x instead of gathers,
 * four chains of products: on this Zen 3 VM (AVX2) csr at 4096 x 4096, 90 %,
 * 1 thread, went from a median of 1.95 ms to 1.70 ms (2.32x to 2.81x the
 * dense GEMV), and at 2048 x 2048 from 550 to 480 us, old and new binaries
 * interleaved over 4 rounds at a load of about 1. coo's int32 columns were
 * slower this way in one run each (1.66x to 0.99x), so coo keeps dot().
 */
SIMD_INL float dot_scalar(const int ci, const void *col, const float *val, int64_t len,
			  const float *x)
{
	float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	int64_t j = 0;

	/* the trace of products j..j+cnt-1: each value, index and element of x */
#define DOT_TRACE(j, cnt)                                                      \
	for (int q_ = 0; q_ < (cnt); q_++) {                                   \
		SPP_TRACE_LOAD(val + (j) + q_, 4);                             \
		SPP_TRACE_LOAD((const char *)col + ((j) + q_) * (ci ? 2 : 4), ci ? 2 : 4); \
		SPP_TRACE_LOAD(x + colat(ci, col, (j) + q_), 4);               \
	}

	for (; j + 4 <= len; j += 4) {
		if ((j & 15) == 0) {
			_mm_prefetch((const char *)(val + j + DOT_PF), _MM_HINT_T0);
			_mm_prefetch((const char *)col + (j + DOT_PF) * (ci ? 2 : 4), _MM_HINT_T0);
		}
		DOT_TRACE(j, 4);
		a0 += val[j] * x[colat(ci, col, j)];
		a1 += val[j + 1] * x[colat(ci, col, j + 1)];
		a2 += val[j + 2] * x[colat(ci, col, j + 2)];
		a3 += val[j + 3] * x[colat(ci, col, j + 3)];
	}
	for (; j < len; j++) {
		DOT_TRACE(j, 1);
		a0 += val[j] * x[colat(ci, col, j)];
	}
#undef DOT_TRACE
	return (a0 + a1) + (a2 + a3);
}

/*
 * csr at N = 1 (csr.c's layout), rows r0..r1 of an m-row matrix, tile by
 * tile so that W streams in storage order; skip as in dot; the last tile
 * stores through the epilogue e.
 */
SIMD_INL void csr_rows_n1(const struct cpu_csr *c, int64_t m, int64_t r0, int64_t r1,
			  const float *x, float *y, const int skip, const struct spp_epi *e)
{
	for (int64_t t = 0; t < c->tiles; t++)
		for (int64_t i = r0; i < r1; i++) {
			int32_t lo = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
			float d;

			SPP_TRACE_LOAD(&c->ptr[t * m + i], 8);
			d = lo == hi ? 0.0f
				: SPP_SCALAR_DOT && !skip
				? dot_scalar(1, c->col + lo, c->val + lo, hi - lo, x + t * c->tile_w)
				: simd_hsum(dot(1, skip, c->col + lo, c->val + lo, hi - lo,
						x + t * c->tile_w, simd_zero()));

			if (t)
				SPP_TRACE_LOAD(&y[i], 4);
			d = t == 0 ? d : y[i] + d;
			SPP_TRACE_STORE(&y[i], 4);
			y[i] = t == c->tiles - 1 ? cpu_epi1(e, i, d) : d;
		}
}
#endif

#endif
