/*
 * One vocabulary of vector operations for the CPU kernels, after ggml's
 * simd-mappings.h: a kernel body is written once against it and compiled
 * per ISA by a thin file (csr_avx2.c, csr_avx512.c, ...) that defines
 * SIMD_AVX2 or SIMD_AVX512 before including this header. The vector code
 * is enabled per function by the target attribute (CPU_AVX2 / CPU_AVX512
 * in cpu.h), not by compiler flags, so that one build runs on every CPU
 * and spp_isa_detect picks the path at run time.
 *
 * For the chosen ISA (simd_avx2.h / simd_avx512.h):
 *   SIMD_VL            lanes per vector (8 / 16)
 *   SIMD_INL           static, always inlined, with the target attribute
 *   SIMD_TARGET        the target attribute of an exported kernel
 *   SIMD_NAME(f)       f_avx2 / f_avx512, the exported kernel's name
 *   simd_f, simd_i     float and int32 vectors
 *   simd_m, SIMD_ALL   a lane mask (ymm lanes on AVX2, __mmask16 on
 *                      AVX-512) and the mask of every lane
 *   simd_zero, simd_bcast(p), simd_loadu(p), simd_add, simd_max, simd_fmadd(a, b, c)
 *   simd_hsum(v)       the sum of v's lanes
 *   simd_first(left)   lanes below left set
 *   simd_chunk_tail(cw) the mask of the last vector of a cw-column chunk
 *   simd_ld / simd_st(full, m, p[, v])  a whole vector, or the lanes of m
 *   simd_maskz_loadu(m, p), simd_gather(x, idx), simd_mask_gather(x, idx, m)
 *   simd_idx(ci, col, j, left, m)  VL int32 / uint16 column indices as lanes
 *   simd_fma_live(skip, v, g, acc) acc + v * g, with skip only where g != 0
 * and, for both, what is derived from those below.
 */
#ifndef SPP_KERNELS_CPU_SIMD_H
#define SPP_KERNELS_CPU_SIMD_H

#include "kernels/cpu/cpu.h"

#if CPU_X86
#if defined(SIMD_AVX512)
#include "kernels/cpu/simd_avx512.h"
#elif defined(SIMD_AVX2)
#include "kernels/cpu/simd_avx2.h"
#else
#error "define SIMD_AVX2 or SIMD_AVX512 before including kernels/cpu/simd.h"
#endif

/*
 * The unrolling of a loop over slots or non-zeros (n: how many). Sanitized
 * builds (ASan/UBSan: tests and fuzzing, never timed) keep the loop:
 * unrolled, clang took 5 minutes and 3 GB on nm_avx512.c under them.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define SPP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SPP_SANITIZED 1
#endif
#endif
#define SPP_PRAGMA_(x) _Pragma(#x)
#ifdef SPP_SANITIZED
#define SPP_UNROLL(n) SPP_PRAGMA_(GCC unroll 1)
#else
#define SPP_UNROLL(n) SPP_PRAGMA_(GCC unroll n)
#endif

/* How far ahead (floats) the N = 1 kernels prefetch W: 4 KiB. */
#define DOT_PF 1024
/*
 * How far ahead (values) the N > 1 segment kernels (seg.h's seg, nm's
 * runs) prefetch W: 2 KiB. The hardware prefetcher alone let the values'
 * broadcast loads wait. Measured on the EPYC Zen 5 (AVX-512; 4096 x 4096,
 * N = 64, 1 thread, 3 rounds, old and new interleaved): nm2_4 on 2:4
 * 9.3-10.0 to 8.5-9.4 ms, nm4_8 9.5-9.6 to 9.2, csr at 50 % 9.9-10.1 to
 * 9.6; csr at 90 % and coo unchanged. seg.h's AVX2 build takes the same
 * prefetch, not timed (no AVX2-only machine at hand).
 */
#define SEG_PF 512

/* Columns of one register-resident Y chunk: 4 vectors. */
#define SIMD_CHUNK (4 * SIMD_VL)

/*
 * The fused epilogue (kernels.h) on a vector of row `row`'s Y chunk, while
 * it is in registers; e NULL or kind none: v as it is. The bias broadcast
 * is one load per vector stored, against the segment's FMAs.
 */
SIMD_INL simd_f simd_epi(const struct spp_epi *e, int64_t row, simd_f v)
{
	if (!e || e->kind == SPP_EPILOGUE_NONE)
		return v;
	v = simd_add(v, simd_bcast(e->bias + row));
	return e->kind == SPP_EPILOGUE_BIAS_RELU ? simd_max(v, simd_zero()) : v;
}

/* Column j of an int32 (ci = 0) or uint16 (ci = 1) index array. */
SIMD_INL int64_t colat(const int ci, const void *col, int64_t j)
{
	return ci ? (int64_t)((const uint16_t *)col)[j] : (int64_t)((const int32_t *)col)[j];
}

/*
 * Call BODY(nv, full) with constant arguments for a chunk of cw
 * (1..SIMD_CHUNK) columns, nv vectors the last of which is whole when
 * full, so that each case compiles to its own register-resident loop.
 */
#define SIMD_CHUNK_DISPATCH(cw, BODY)                                          \
	do {                                                                   \
		int nv_ = (int)(((cw) + SIMD_VL - 1) / SIMD_VL);               \
		int full_ = (cw) % SIMD_VL == 0;                               \
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

#endif
