/*
 * The CUDA SpMM kernels' launchers: y = W * x with W M x K in a format,
 * x row-major K x N, y row-major M x N, fp32, all pointers on the device.
 * Each returns a cudaError_t as int (0 is success) and launches on
 * `stream` (a cudaStream_t; NULL is the default stream) without waiting.
 * Indices are 32-bit: the encoders refuse larger matrices.
 */
#ifndef SPP_KERNELS_CUDA_KERNELS_CUDA_H
#define SPP_KERNELS_CUDA_KERNELS_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CSR, one warp per row: lanes split the columns of x (n >= 8) or the row's non-zeros (n < 8). */
int spp_cuda_csr_rows(int m, int n, const int *rowptr, const int *col, const float *val,
		      const float *x, float *y, void *stream);

/*
 * CSR, non-zero balanced: each warp takes an equal run of non-zeros
 * whatever the rows' lengths, so one long row no longer holds back one
 * warp; rows cut between warps are summed with atomics (y is zeroed first).
 */
int spp_cuda_csr_balanced(int m, int n, int nnz, const int *rowptr, const int *col,
			  const float *val, const float *x, float *y, void *stream);

/*
 * BSR with B x B blocks (B = 4, 8 or 16), each block's values row-major,
 * zero-padded past M and K; browptr has ceil(M/B)+1 entries.
 */
int spp_cuda_bsr(int block, int m, int k, int n, const int *browptr, const int *bcol,
		 const float *bval, const float *x, float *y, void *stream);

/*
 * Bitmask: row r's non-zeros are the set bits of mask[r * words ..],
 * words = ceil(K/64), their values packed in column order from val[rowptr[r]].
 */
int spp_cuda_bitmask(int m, int k, int n, const uint64_t *mask, const int *rowptr,
		     const float *val, const float *x, float *y, void *stream);

/*
 * 2:4 on CUDA cores, fp32: each row holds ceil(K/4) groups of two slots,
 * val and idx (the column within the group, 0..3) both m * groups * 2;
 * an unused slot has value 0 and index 0 (inside K, so never read past it).
 * The sparse tensor-core kernel is spp_cuda_nm2_4_tc.
 */
int spp_cuda_nm2_4(int m, int k, int n, const float *val, const unsigned char *idx,
		   const float *x, float *y, void *stream);

/*
 * 2:4 on sparse tensor cores (mma.sp m16n8k32, fp16 inputs, fp32
 * accumulate; sm_80 and newer): a and e are W's tiles as host.h's struct
 * spp_nm_tc lays them out (mtiles x ktiles tiles of 16 x 32), xt is X
 * transposed to fp16, n_pad x kp (n_pad = N rounded up to 8, kp =
 * 32 * ktiles), zero-padded (spp_cuda_to_half_t makes it).
 */
int spp_cuda_nm2_4_tc(int m, int n, int mtiles, int ktiles, const uint32_t *a, const uint32_t *e,
		      const void *xt, float *y, void *stream);

/* x (K x N fp32, row-major) to xt (fp16, n_pad x kp: xt[j * kp + c] = x[c][j], zero past K and N). */
int spp_cuda_to_half_t(int k, int n, int kp, int n_pad, const float *x, void *xt, void *stream);

/* x (count fp32) to fp16, element by element, round to nearest even. */
int spp_cuda_to_half(int64_t count, const float *x, void *xh, void *stream);

#ifdef __cplusplus
}
#endif

#endif
