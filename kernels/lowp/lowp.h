/*
 * Sparse SpMM in the precision a layer is deployed in (issue 47): csr,
 * N:M (2:4, 4:8), 1x4 blocks along K and bitmask, with W's values stored
 * in bf16, fp16 or int8, X in the same precision, accumulation in fp32
 * (int32 for int8) and Y in fp32. Standalone: not yet a row of
 * spp_cpu_formats. Every (format, precision) has a portable kernel and
 * avx2 / avx512 ones; the VNNI paths add int8, avx512_bf16 csr and nm
 * in bf16 (lowp_body.h's tables).
 *
 * The precisions are one table (spp_prec_info): value bytes, X bytes,
 * accumulator, and the tolerance a kernel is held to against a double
 * reference of the same quantized values:
 *   |y - ref| <= rtol * sum_k |w_q[i][k]| * |x_q[k][j]| + atol
 *
 * int8: W symmetric per row, w = scale_w[i] * q (q in -127..127, scale_w =
 * max|w_i| / 127); X unsigned with zero point 128 and one scale per
 * tensor, x = scale_x * (u - 128) (u in 1..255), since vpdpbusd multiplies
 * u8 by s8. The kernels accumulate sum q * u in int32 and subtract
 * 128 * sum q (the row's stored sum), then y = (float)acc * (scale_w[i] *
 * scale_x) in fp32.
 *
 * X lives in a caller-owned buffer of spp_lowp_x_bytes() that
 * spp_lowp_x_quantize fills: K rounded up to 8 rows (zeros past K), plus
 * 64 bytes, so that gathers and vector loads that run past a row stay in
 * bounds. bf16 / fp16 X is row-major K x N; int8 X is K4-interleaved (the
 * VNNI layout): byte ((k / 4) * N + j) * 4 + k % 4 holds x[k][j], so the
 * 4 consecutive K of one column are one dword (at N = 1 plain x[k]).
 *
 * Ownership: spp_lowp_encode fills a caller-owned struct spp_lowp_w whose
 * buffers it owns until spp_lowp_release (accepts NULL and a zeroed one).
 */
#ifndef SPP_KERNELS_LOWP_LOWP_H
#define SPP_KERNELS_LOWP_LOWP_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/error.h"
#include "kernels/kernels.h"

/* The precisions: X(ID, name, value bytes, X bytes, accumulator, rtol, atol). */
#define SPP_PREC_LIST(X)                                                       \
	X(FP32, "fp32", 4, 4, "fp32", 1e-4, 1e-6)                              \
	X(BF16, "bf16", 2, 2, "fp32", 1e-4, 1e-6)                              \
	X(FP16, "fp16", 2, 2, "fp32", 1e-4, 1e-6)                              \
	X(INT8, "int8", 1, 1, "int32", 1e-6, 1e-7)

enum spp_prec {
#define SPP_PREC_ENUM(id, ...) SPP_PREC_##id,
	SPP_PREC_LIST(SPP_PREC_ENUM)
#undef SPP_PREC_ENUM
	SPP_PREC_COUNT
};

struct spp_prec_info {
	const char *name;      /* "bf16" */
	int value_bytes;       /* bytes of one stored value of W (int8: + a scale per row) */
	int x_bytes;           /* bytes of one element of X */
	const char *acc;       /* "fp32" or "int32" */
	double rtol, atol;     /* the reference tolerance (above) */
};

/* The row of p; NULL out of range. */
const struct spp_prec_info *spp_prec_info(enum spp_prec p);

/* The precision of a name; -1 when unknown. */
int spp_prec_parse(const char *name);

/* "fp32", "bf16", "fp16", "int8"; "?" for another value. */
const char *spp_prec_name(enum spp_prec p);

/*
 * bf16 and fp16 convert with base/dtype.h's spp_f32_to_bf16 / spp_f32_to_f16
 * (round to nearest even, NaN kept) and spp_bf16_to_f32 / spp_f16_to_f32.
 */

/* int8: the scale of max |v| over n values (max / 127; 1 when all are 0), and v's code in it. */
float spp_int8_scale(const float *v, int64_t n);
int8_t spp_int8_quantize(float v, float scale);

/* The lowp formats. */
enum spp_lowp_format {
	SPP_LOWP_CSR,
	SPP_LOWP_NM2_4,
	SPP_LOWP_NM4_8,
	SPP_LOWP_BSR1X4,
	SPP_LOWP_BITMASK,
	SPP_LOWP_NFORMATS
};

/* "csr", "nm2_4", "nm4_8", "bsr1x4", "bitmask"; NULL out of range. */
const char *spp_lowp_format_name(enum spp_lowp_format f);

/*
 * The vector paths, in preference order; each needs its ISA (the
 * kernels' spp_isa, so SPPROF_ISA caps it) and its cpuid features:
 *   avx2         AVX2, FMA, F16C
 *   avx2_vnni    + AVX-VNNI (vpdpbusd on ymm)
 *   avx512       AVX-512 F/BW/VL/DQ, F16C
 *   avx512_vnni  + AVX512_VNNI (vpdpbusd on zmm)
 *   avx512_bf16  + AVX512_BF16 (vdpbf16ps)
 */
enum spp_lowp_path {
	SPP_LOWP_PORTABLE,
	SPP_LOWP_AVX2,
	SPP_LOWP_AVX2_VNNI,
	SPP_LOWP_AVX512,
	SPP_LOWP_AVX512_VNNI,
	SPP_LOWP_AVX512_BF16,
	SPP_LOWP_NPATHS
};

/* "portable", "avx2", ...; "unknown" out of range. */
const char *spp_lowp_path_name(enum spp_lowp_path p);

/* 1 when this CPU and OS have path p and spp_isa_detect() (SPPROF_ISA) allows its ISA. */
int spp_lowp_path_ok(enum spp_lowp_path p);

/*
 * The path spp_lowp_spmm runs for (format, prec) when asked for `want`:
 * the last path at or before want that spp_lowp_path_ok allows and that
 * has a kernel for the pair; portable always has one.
 */
enum spp_lowp_path spp_lowp_pick(enum spp_lowp_format f, enum spp_prec p,
				 enum spp_lowp_path want);

/* X in a precision (above); v is spp_lowp_x_bytes(prec, k, n) bytes, borrowed. */
struct spp_lowp_x {
	enum spp_prec prec;
	int64_t k, n;
	float scale;   /* int8: x = scale * (u - 128); else 1 */
	void *v;
};

/* Rows of X's buffer: k rounded up to 8. */
static inline int64_t spp_lowp_x_rows(int64_t k)
{
	return (k + 7) / 8 * 8;
}

/* Bytes of X's buffer for a k x n X in prec. */
size_t spp_lowp_x_bytes(enum spp_prec prec, int64_t k, int64_t n);

/*
 * Fill out (its v set to a buffer of spp_lowp_x_bytes) from the fp32
 * k x n row-major x: bf16 / fp16 rounded, int8 quantized with
 * scale = max |x| / 127. Returns 0, or SPP_E_UNSUPPORTED for fp32.
 */
int spp_lowp_x_quantize(struct spp_lowp_x *out, const float *x, struct spp_error *err);

/* X's element (k, j) as the kernels read it, dequantized (tests and references). */
double spp_lowp_x_at(const struct spp_lowp_x *x, int64_t k, int64_t j);

/*
 * W encoded. csr: ptr (m + 1) offsets into col / val. nm: every row has
 * `stride` slots (ceil(k / group) * keep rounded up to 4, so that 4
 * consecutive slots are one vpdpbusd quad and 2 one vdpbf16ps pair),
 * slot s at column (s / keep) * group + pos[s], padded slots value 0.
 * bsr1x4: ptr (m + 1) offsets in blocks, col the block's first column (a
 * multiple of 4), 4 values a block, zero-padded past k. bitmask: one
 * bit per element (bit c % 8 of byte c / 8 of the row's mstride bytes,
 * ceil(k / 16) * 2 so that a 16-column chunk never crosses rows), ptr
 * (m + 1) offsets of each row's values, stored in column order.
 */
struct spp_lowp_w {
	enum spp_lowp_format format;
	enum spp_prec prec;
	int64_t m, k, nnz;      /* nnz: non-zeros of the fp32 W */
	int keep, group;        /* nm: N and M */
	int64_t stride;         /* nm: slots per row */
	int32_t *ptr, *col;     /* csr, bsr1x4; bitmask: ptr */
	uint8_t *mask;          /* bitmask */
	int64_t mstride;        /* bitmask: bytes per mask row */
	uint8_t *pos;           /* nm: position in its group of each slot */
	void *val;              /* uint16_t (bf16, fp16) or int8_t values */
	float *scale;           /* int8: m row scales */
	int32_t *qsum;          /* int8: m sums of each row's codes (the zero point's correction) */
	uint64_t bytes;         /* bytes a kernel reads of W: values, metadata, scales */
};

/*
 * Encode the fp32 w in format f and precision p. Returns 0, SPP_E_NOMEM,
 * or SPP_E_UNSUPPORTED with the reason: fp32 (kernels/cpu's formats), an
 * N:M format on a non-compliant w (spp_nm_check's message), more than
 * INT32_MAX non-zeros, int8 with k > 66311 (the int32 sums of q * u).
 */
int spp_lowp_encode(enum spp_lowp_format f, enum spp_prec p, const struct spp_matrix *w,
		    struct spp_lowp_w *out, struct spp_error *err);

/* Free w's buffers and zero it; accepts NULL. */
void spp_lowp_release(struct spp_lowp_w *w);

/*
 * y = w * x, y row-major m x n fp32, on `threads` OpenMP threads (rows
 * split to balance the stored entries), with the kernel of
 * spp_lowp_pick(w->format, w->prec, want); *ran (optional) says which
 * path ran. Returns 0, or SPP_E_USAGE when x's precision or k is not w's
 * or threads < 1.
 */
int spp_lowp_spmm(const struct spp_lowp_w *w, const struct spp_lowp_x *x, float *y,
		  enum spp_lowp_path want, int threads, enum spp_lowp_path *ran,
		  struct spp_error *err);

#endif
