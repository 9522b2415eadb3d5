/*
 * AVX-512 building blocks shared by the csr and coo kernels (included only
 * by the *_avx512.c files; every function carries the target attribute).
 *
 * seg512: one Y row chunk of nv 16-float vectors (the last masked by mt
 * unless `full`) += sum over a segment of (value, column) of value * X row.
 * Columns are int32 (ci = 0) or uint16 (ci = 1), relative to x.
 * The chunk stays in registers for the whole segment, with two sets of
 * accumulators so that consecutive non-zeros do not wait on one FMA chain
 * (four sets measured no faster).
 *
 * dot512: the N = 1 segment product by 16-lane gathers of x; with `skip`
 * a product whose x is zero is masked off (the activation kernels: an
 * infinite weight times a zero x never reaches the sum).
 */
#ifndef SPP_KERNELS_CPU_SEG_AVX512_H
#define SPP_KERNELS_CPU_SEG_AVX512_H

#include <immintrin.h>

#include "kernels/cpu/cpu.h"

#ifndef DOT_PF
#define DOT_PF 1024 /* floats ahead: 4 KiB */
#endif

#define INL512 static inline __attribute__((always_inline)) CPU_AVX512

INL512 __m512 ld512(int full, __mmask16 m, const float *p)
{
	return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

INL512 void st512(int full, __mmask16 m, float *p, __m512 v)
{
	if (full)
		_mm512_storeu_ps(p, v);
	else
		_mm512_mask_storeu_ps(p, m, v);
}

INL512 int64_t colat(const int ci, const void *col, int64_t j)
{
	return ci ? (int64_t)((const uint16_t *)col)[j] : (int64_t)((const int32_t *)col)[j];
}

/* 16 column indices as int32 lanes (masked lanes 0). */
INL512 __m512i idx512(const int ci, const void *col, int64_t j, __mmask16 m)
{
	if (ci)
		return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)col + j));
	return _mm512_maskz_loadu_epi32(m, (const int32_t *)col + j);
}

INL512 void seg512(const int nv, const int full, __mmask16 mt,
		   const int ci, const void *col, const float *val, int64_t len,
		   const float *x, int64_t n, float *yr, int zero)
{
	__m512 a[2][4];
	int64_t j = 0;

	/*
	 * Y is read first, not last: a segment is longer than the reorder
	 * window, so a Y load issued at its end would stall on the miss.
	 */
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? _mm512_setzero_ps() : ld512(full || v < nv - 1, mt, yr + 16 * v);
		a[1][v] = _mm512_setzero_ps();
	}
	for (; j + 2 <= len; j += 2) {
#pragma GCC unroll 2
		for (int u = 0; u < 2; u++) {
			const float *xr = x + colat(ci, col, j + u) * n;
			__m512 wv = _mm512_set1_ps(val[j + u]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				a[u][v] = _mm512_fmadd_ps(wv, ld512(full || v < nv - 1, mt, xr + 16 * v), a[u][v]);
		}
	}
	if (j < len) {
		const float *xr = x + colat(ci, col, j) * n;
		__m512 wv = _mm512_set1_ps(val[j]);

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			a[0][v] = _mm512_fmadd_ps(wv, ld512(full || v < nv - 1, mt, xr + 16 * v), a[0][v]);
	}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		st512(full || v < nv - 1, mt, yr + 16 * v, _mm512_add_ps(a[0][v], a[1][v]));
}

/* acc + v * g, where g != 0 when skip (NaN counts as non-zero) */
INL512 __m512 fma_live(const int skip, __m512 v, __m512 g, __m512 acc)
{
	if (!skip)
		return _mm512_fmadd_ps(v, g, acc);
	return _mm512_mask3_fmadd_ps(v, g, acc, _mm512_cmp_ps_mask(g, _mm512_setzero_ps(), _CMP_NEQ_UQ));
}

INL512 __m512 dot512(const int ci, const int skip, const void *col, const float *val, int64_t len,
		     const float *x, __m512 acc)
{
	__m512 acc1 = _mm512_setzero_ps();
	int64_t j = 0;

	for (; j + 32 <= len; j += 32) {
		__m512i i0 = idx512(ci, col, j, 0xffff), i1 = idx512(ci, col, j + 16, 0xffff);

		/*
		 * W streams from memory; the gathers keep the load ports so busy
		 * that the hardware prefetcher falls behind (measured at N = 1, 65 %
		 * sparsity: 2x to 2.6x faster with this prefetch).
		 */
		_mm_prefetch((const char *)(val + j + DOT_PF), _MM_HINT_T0);
		_mm_prefetch((const char *)(val + j + DOT_PF + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)col + (j + DOT_PF) * (ci ? 2 : 4), _MM_HINT_T0);
		if (!ci)
			_mm_prefetch((const char *)col + (j + DOT_PF + 16) * 4, _MM_HINT_T0);

		acc = fma_live(skip, _mm512_loadu_ps(val + j), _mm512_i32gather_ps(i0, x, 4), acc);
		acc1 = fma_live(skip, _mm512_loadu_ps(val + j + 16), _mm512_i32gather_ps(i1, x, 4), acc1);
	}
	for (; j < len; j += 16) {
		__mmask16 m = len - j >= 16 ? 0xffff : (__mmask16)((1u << (len - j)) - 1);
		__m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx512(ci, col, j, m), x, 4);

		acc1 = fma_live(skip, _mm512_maskz_loadu_ps(m, val + j), g, acc1);
	}
	return _mm512_add_ps(acc, acc1);
}

/*
 * csr at N = 1 (csr.c's layout), rows r0..r1 of an m-row matrix, tile by
 * tile so that W streams in storage order; skip as in dot512.
 */
INL512 void csr_rows_n1_512(const struct cpu_csr *c, int64_t m, int64_t r0, int64_t r1,
			    const float *x, float *y, const int skip)
{
	for (int64_t t = 0; t < c->tiles; t++)
		for (int64_t i = r0; i < r1; i++) {
			int32_t lo = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
			float d = lo == hi ? 0.0f
					   : _mm512_reduce_add_ps(dot512(1, skip, c->col + lo, c->val + lo, hi - lo,
									 x + t * c->tile_w, _mm512_setzero_ps()));

			y[i] = t == 0 ? d : y[i] + d;
		}
}

INL512 __mmask16 tail_mask512(int64_t r)
{
	return (__mmask16)(r % 16 ? (1u << (r % 16)) - 1 : 0xffff);
}

/*
 * Call BODY(nv, full) with constant arguments for a chunk of cw (1..64)
 * columns, so that each case compiles to its own register-resident loop.
 */
#define CHUNK512_DISPATCH(cw, BODY)                                            \
	do {                                                                   \
		int nv_ = (int)(((cw) + 15) / 16), full_ = (cw) % 16 == 0;     \
		switch (nv_ * 2 + full_) {                                     \
		case 9: BODY(4, 1); break;                                     \
		case 8: BODY(4, 0); break;                                     \
		case 7: BODY(3, 1); break;                                     \
		case 6: BODY(3, 0); break;                                     \
		case 5: BODY(2, 1); break;                                     \
		case 4: BODY(2, 0); break;                                     \
		case 3: BODY(1, 1); break;                                     \
		default: BODY(1, 0); break;                                    \
		}                                                              \
	} while (0)

#endif
