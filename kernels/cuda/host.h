/*
 * The host side of the CUDA backend that needs no device, built in every
 * configuration so that the CPU-only tests cover it: rounding to the
 * reduced precisions the tensor-core entries take (fp16, bf16, tf32), the
 * encoder of W for the sparse tensor-core 2:4 kernel (its fragments and
 * metadata, laid out the way mma.sp reads them), and the static load
 * balance of a kernel's partition of W over thread blocks.
 *
 * The caller owns every buffer; spp_nm_tc_release frees what the encoder
 * allocated.
 */
#ifndef SPP_KERNELS_CUDA_HOST_H
#define SPP_KERNELS_CUDA_HOST_H

#include <stdint.h>

#include "kernels/kernels.h"
#include "base/dtype.h"
#include "base/error.h"

/*
 * f rounded to fp16, bf16 or tf32 (10-bit mantissa, fp32 range), nearest
 * even, as a float. The fp16 and bf16 bits themselves are the base layer's
 * (spp_f32_to_f16 and spp_f16_to_f32, base/dtype.h): one
 * conversion for the loaders, the synthetic models and the tensor cores.
 */
float spp_round_fp16(float f);
float spp_round_bf16(float f);
float spp_round_tf32(float f);

/* Largest finite fp16 value. */
#define SPP_FP16_MAX 65504.0f

/*
 * W for the 2:4 sparse tensor-core kernel (mma.sp m16n8k32, fp16 in, fp32
 * accumulate). W is cut into tiles of 16 rows x 32 columns (zero-padded
 * past M and K); a tile is read by one warp in one instruction. For tile
 * (mt, kt) and lane L (g = L / 4, t = L % 4), register j (0..3) of
 * a[((mt * ktiles + kt) * 32 + L) * 4 + j] holds the two kept values (fp16,
 * the lower column in the low half) of row g + 8 * (j % 2), chunk
 * t + 4 * (j / 2) of four columns (PTX ISA, sparse mma fragments for
 * m16n8k32 .f16). e[(mt * ktiles + kt) * 32 + L] is the metadata word:
 * for t = 0 the chunks 0..3, for t = 1 the chunks 4..7; bits 4c..4c+3 of
 * its low half for row g, of its high half for row g + 8; each nibble is
 * idx0 | idx1 << 2 with idx0 < idx1 the kept columns within the chunk
 * (sparsity selector 0: lanes t = 0 and 1 of each quad supply it; lanes
 * t = 2 and 3 carry a copy that the instruction ignores).
 */
struct spp_nm_tc {
	int64_t m, k;
	int64_t mtiles, ktiles;  /* ceil(m / 16), ceil(k / 32) */
	int64_t nnz;             /* non-zeros of W */
	uint32_t *a;             /* mtiles * ktiles * 32 * 4 */
	uint32_t *e;             /* mtiles * ktiles * 32 */
};

/*
 * Encode w (fp32, m x k). Returns 0; SPP_E_UNSUPPORTED when a chunk of
 * four columns of a row holds more than two non-zeros (W is not 2:4 along
 * K; the message gives the share of such chunks), when a value is beyond
 * fp16's range, or when the tiles need more than 2^31 entries;
 * SPP_E_NOMEM. out is zeroed on failure.
 */
int spp_nm_tc_encode(const struct spp_matrix *w, struct spp_nm_tc *out, struct spp_error *err);

/*
 * Decode t back into w (m x k, fp32, the fp16-rounded values), from the
 * fragments and metadata alone: what the instruction computes with.
 * Returns 0, or -1 when a metadata nibble is not one mma.sp accepts
 * (indices equal or not increasing).
 */
int spp_nm_tc_decode(const struct spp_nm_tc *t, float *w);

/* Free the encoder's buffers; accepts NULL and a zeroed struct. */
void spp_nm_tc_release(struct spp_nm_tc *t);

/*
 * The check of reduced-precision entries, per output, as a multiple of its
 * (|W|.|X|). fp16 and bf16 entries round W and X to nearest even exactly
 * as spp_cuda_reference does, so what remains is fp32 accumulation in
 * another order: within SPP_CUDA_RTOL_HALF of that reference. TF32 inputs
 * are rounded or truncated inside cuBLAS (not said which): each input is
 * within 2^-10 of fp32, a product within about 2^-9, so tf32 is checked
 * against the fp32 result within SPP_CUDA_RTOL_TF32.
 */
#define SPP_CUDA_RTOL_HALF 1e-3
#define SPP_CUDA_RTOL_TF32 4e-3

/* 1 when precision's check uses spp_cuda_reference ("fp16", "bf16"), else 0. */
int spp_cuda_precision_rounds(const char *precision);

/* The check's bound for precision: fp32 gives fp32_rtol, the others the constants above. */
double spp_cuda_precision_rtol(const char *precision, double fp32_rtol);

/*
 * y (m x n, row-major) = round(W) round(X) summed in double, with
 * precision "fp16" or "bf16" rounding (x K x N row-major). Returns 0,
 * SPP_E_UNSUPPORTED when a rounded input is not finite (beyond fp16's
 * range; the message names it) or SPP_E_NOMEM.
 */
int spp_cuda_reference(const struct spp_matrix *w, const float *x, int64_t n,
		       const char *precision, double *y, struct spp_error *err);

/*
 * Static load balance (DESIGN section 4, nnz_imbalance): max / mean of
 * the non-zeros each thread block of a kernel gets. Rows: blocks take
 * `rows` consecutive rows of W. NAN when W has no non-zeros.
 */
double spp_cuda_rows_imbalance(const struct spp_matrix *w, int rows);

/* The same for blocks that take `chunk` consecutive non-zeros (csr_balanced). */
double spp_cuda_chunk_imbalance(int64_t nnz, int64_t chunk);

#endif
