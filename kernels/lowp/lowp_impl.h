/*
 * Internal to kernels/lowp: the kernel tables, one per path (a path's
 * thin file, lowp_avx2.c ..., compiles the format bodies for its ISA and
 * fills its table; NULL where the path has no kernel of its own), and
 * the helpers the portable and vector kernels share.
 */
#ifndef SPP_KERNELS_LOWP_LOWP_IMPL_H
#define SPP_KERNELS_LOWP_LOWP_IMPL_H

#include <string.h>

#include "kernels/lowp/lowp.h"

/* Rows [r0, r1) of y = w * x. */
typedef void (*lp_kern)(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y);

struct lp_table {
	lp_kern k[SPP_LOWP_NFORMATS][SPP_PREC_COUNT];
};

extern const struct lp_table lp_portable;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LP_X86 1
extern const struct lp_table lp_avx2, lp_avx2_vnni, lp_avx512, lp_avx512_vnni, lp_avx512_bf16;
#else
#define LP_X86 0
#endif

/* The int8 row's output factor: y = (float)acc * lp_yscale(w, x, i), the same in every path. */
static inline float lp_yscale(const struct spp_lowp_w *w, const struct spp_lowp_x *x, int64_t i)
{
	return w->scale[i] * x->scale;
}

/* Byte offset of int8 X's element (k, j) in the K4-interleaved layout. */
static inline int64_t lp_x8_at(int64_t k, int64_t j, int64_t n)
{
	return ((k >> 2) * n + j) * 4 + (k & 3);
}

/* log2 of a power of two. */
static inline int lp_log2(int v)
{
	return __builtin_ctz((unsigned)v);
}

/* Column of slot s of nm row i. */
static inline int64_t lp_nm_col(const struct spp_lowp_w *w, int64_t i, int64_t s)
{
	return (s / w->keep) * w->group + w->pos[i * w->stride + s];
}

#endif
