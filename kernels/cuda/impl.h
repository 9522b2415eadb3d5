/* Shared by formats.c, baselines.c, tc.c and lt.c only: the device buffers of one encoded matrix. */
#ifndef SPP_KERNELS_CUDA_IMPL_H
#define SPP_KERNELS_CUDA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cuda/formats.h"

struct spp_cuda_buf {
	int *rowptr;           /* CSR, bitmask: m + 1; BSR: block rows + 1 */
	int *col;              /* CSR: nnz; BSR: blocks */
	float *val;            /* CSR, bitmask: nnz; BSR: blocks * B * B; dense: m * k */
	uint64_t *mask;        /* bitmask: m * ceil(k / 64) words */
	int *rowidx;           /* cuSPARSE COO: the row of each non-zero */
	uint8_t *idx;          /* nm2_4: column within each group of 4, 2 per group */
	void *handle;          /* cublasHandle_t or cusparseHandle_t */
	void *descr;           /* cusparseSpMatDescr_t */
	void *work;            /* cuSPARSE's work buffer, grown on demand */
	size_t work_bytes;
	void *xin;             /* prepare: x in the entry's own precision and layout */
	size_t xin_bytes;
	int64_t mtiles, ktiles; /* nm2_4_tc: W's tiles (host.h) */
	uint32_t *tc_a, *tc_e; /* nm2_4_tc: fragments and metadata */
};

/* Encode w as CSR on the device into out (impl a struct spp_cuda_buf). */
int spp_cuda_encode_csr(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err);

/* Encode w as BSR with bs x bs row-major blocks on the device into out (formats.c). */
int spp_cuda_encode_bsr(const struct spp_matrix *w, int bs, struct spp_cuda_encoded *out,
			struct spp_error *err);

/* The current device's compute capability (major * 10 + minor); SPP_E_DEVICE when none. */
int spp_cuda_current_sm(int *sm, struct spp_error *err);

/* Free a struct spp_cuda_buf's device buffers (not its handles) and the struct. */
void spp_cuda_buf_free(struct spp_cuda_buf *b);

/* Release a cuBLAS entry's encoding: its handle, then its buffers. */
void spp_cuda_release_cublas(struct spp_cuda_encoded *e);

/*
 * Dense W for a cuBLAS entry of ops's precision (tc.c): fp32 as it is
 * (fp32, tf32), or rounded to fp16 on the host; with a cuBLAS handle.
 */
int spp_cuda_encode_gemm(const struct spp_matrix *w, const struct spp_cuda_format *ops,
			 struct spp_cuda_encoded *out, struct spp_error *err);

/* prepare for an fp16 GEMM entry: x to fp16 on the device, into the encoding's xin. */
int spp_cuda_prepare_fp16(struct spp_cuda_encoded *w, const float *x, int64_t n,
			  struct spp_error *err);

/* Copy n bytes to a new device buffer; SPP_E_DEVICE on failure. */
int spp_cuda_upload(void **dst, const void *src, size_t n, struct spp_error *err);

#endif
