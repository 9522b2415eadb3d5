/*
 * The vendor baselines as entries of the CUDA table: cuBLAS SGEMM on the
 * dense W, cuSPARSE SpMM (the generic API) on W in CSR, COO and BSR. All
 * take row-major x and y. The reduced-precision cuBLAS runs are in tc.c.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
/* cusparse.h declares its deprecated legacy API with the attribute on itself */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cusparse.h>
#pragma GCC diagnostic pop

#include "kernels/cuda/formats.h"
#include "kernels/cuda/impl.h"

const struct spp_cuda_format spp_cuda_cusparse_csr, spp_cuda_cusparse_coo, spp_cuda_cusparse_bsr4,
	spp_cuda_cusparse_bsr8, spp_cuda_cusparse_bsr16, spp_cuda_cublas_dense;

static int encode_dense(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	struct spp_cuda_buf *b = calloc(1, sizeof(*b));
	int64_t nnz = 0;
	int rc;

	out->ops = &spp_cuda_cublas_dense;
	if (!b)
		return spp_error_set(err, SPP_E_NOMEM, "cuda: dense baseline");
	if (w->m > INT32_MAX || w->k > INT32_MAX) {
		free(b);
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cuda: %lld x %lld is too large for cuBLAS",
				     (long long)w->m, (long long)w->k);
	}
	if ((rc = spp_cuda_upload((void **)&b->val, w->v, sizeof(float) * (size_t)(w->m * w->k), err)))
		goto fail;
	if (cublasCreate((cublasHandle_t *)&b->handle) != CUBLAS_STATUS_SUCCESS) {
		rc = spp_error_set(err, SPP_E_DEVICE, "cuda: cublasCreate failed");
		goto fail;
	}
	for (int64_t i = 0; i < w->m * w->k; i++)
		nnz += w->v[i] != 0.0f;
	out->m = w->m;
	out->k = w->k;
	out->nnz = nnz;
	out->bytes = sizeof(float) * (uint64_t)(w->m * w->k);
	out->impl = b;
	return 0;
fail:
	spp_cuda_buf_free(b);
	return rc;
}

/*
 * Row-major y = w x is column-major y^T = x^T w^T: cuBLAS sees x as an
 * n x k column-major matrix (ld n) and w as k x m (ld k), no transposes.
 */
static int spmm_dense(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		      struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;
	const float one = 1.0f, zero = 0.0f;
	cublasStatus_t s;

	s = cublasSgemm((cublasHandle_t)b->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)w->m,
			(int)w->k, &one, x, (int)n, b->val, (int)w->k, &zero, y, (int)n);
	if (s != CUBLAS_STATUS_SUCCESS)
		return spp_error_set(err, SPP_E_DEVICE, "cuda: cublasSgemm: %s", cublasGetStatusString(s));
	return 0;
}

void spp_cuda_release_cublas(struct spp_cuda_encoded *e)
{
	struct spp_cuda_buf *b = e ? e->impl : NULL;

	if (!b)
		return;
	if (b->handle)
		cublasDestroy((cublasHandle_t)b->handle);
	spp_cuda_buf_free(b);
	e->impl = NULL;
}

static int encode_cusparse(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			   struct spp_error *err)
{
	struct spp_cuda_buf *b;
	int rc;

	if ((rc = spp_cuda_encode_csr(w, out, err)))
		return rc;
	out->ops = &spp_cuda_cusparse_csr;
	b = out->impl;
	if (cusparseCreate((cusparseHandle_t *)&b->handle) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateCsr((cusparseSpMatDescr_t *)&b->descr, out->m, out->k, out->nnz,
			      b->rowptr, b->col, b->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
			      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) != CUSPARSE_STATUS_SUCCESS) {
		out->ops->release(out);
		return spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE CSR descriptor");
	}
	return 0;
}

/* COO shares CSR's columns and values; only the row of each non-zero is added. */
static int encode_cusparse_coo(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			       struct spp_error *err)
{
	struct spp_cuda_buf *b;
	int *rows = NULL;
	int rc;

	if ((rc = spp_cuda_encode_csr(w, out, err)))
		return rc;
	out->ops = &spp_cuda_cusparse_coo;
	b = out->impl;
	rows = malloc(sizeof(int) * (size_t)(out->nnz ? out->nnz : 1));
	if (!rows) {
		out->ops->release(out);
		return spp_error_set(err, SPP_E_NOMEM, "cuda: coo rows of %lld non-zeros",
				     (long long)out->nnz);
	}
	for (int64_t r = 0, p = 0; r < w->m; r++)
		for (int64_t c = 0; c < w->k; c++)
			if (w->v[r * w->k + c] != 0.0f)
				rows[p++] = (int)r;
	rc = spp_cuda_upload((void **)&b->rowidx, rows, sizeof(int) * (size_t)out->nnz, err);
	free(rows);
	if (rc) {
		out->ops->release(out);
		return rc;
	}
	/* COO reads rows, columns and values; CSR's row pointers are not used */
	out->bytes = (2 * sizeof(int) + sizeof(float)) * (uint64_t)out->nnz;
	if (cusparseCreate((cusparseHandle_t *)&b->handle) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateCoo((cusparseSpMatDescr_t *)&b->descr, out->m, out->k, out->nnz,
			      b->rowidx, b->col, b->val, CUSPARSE_INDEX_32I,
			      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) != CUSPARSE_STATUS_SUCCESS) {
		out->ops->release(out);
		return spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE COO descriptor");
	}
	return 0;
}

static int spmm_cusparse(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
			 struct spp_error *err)
{
	struct spp_cuda_buf *b = w->impl;
	cusparseHandle_t h = b->handle;
	cusparseDnMatDescr_t dx = NULL, dy = NULL;
	const float one = 1.0f, zero = 0.0f;
	size_t need = 0;
	/* the default algorithm covers CSR and COO; BSR has its own */
	cusparseSpMMAlg_t alg = w->ops->block ? CUSPARSE_SPMM_BSR_ALG1 : CUSPARSE_SPMM_ALG_DEFAULT;
	cusparseStatus_t s;
	int rc = 0;

	s = cusparseCreateDnMat(&dx, w->k, n, n, (void *)x, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseCreateDnMat(&dy, w->m, n, n, y, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b->descr, dx,
					    &zero, dy, CUDA_R_32F, alg, &need);
	if (s != CUSPARSE_STATUS_SUCCESS) {
		rc = spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE SpMM setup: %s",
				   cusparseGetErrorString(s));
		goto out;
	}
	/* the work buffer is kept across calls so that timed calls do not allocate */
	if (need > b->work_bytes) {
		cudaFree(b->work);
		b->work_bytes = 0;
		if (cudaMalloc(&b->work, need) != cudaSuccess) {
			b->work = NULL;
			rc = spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE work buffer of %zu bytes", need);
			goto out;
		}
		b->work_bytes = need;
	}
	s = cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
			 b->descr, dx, &zero, dy, CUDA_R_32F, alg, b->work);
	if (s != CUSPARSE_STATUS_SUCCESS)
		rc = spp_error_set(err, SPP_E_DEVICE, "cuda: cusparseSpMM: %s", cusparseGetErrorString(s));
out:
	if (dx)
		cusparseDestroyDnMat(dx);
	if (dy)
		cusparseDestroyDnMat(dy);
	return rc;
}

static void release_cusparse(struct spp_cuda_encoded *e)
{
	struct spp_cuda_buf *b = e ? e->impl : NULL;

	if (!b)
		return;
	if (b->descr)
		cusparseDestroySpMat((cusparseSpMatDescr_t)b->descr);
	if (b->handle)
		cusparseDestroy((cusparseHandle_t)b->handle);
	spp_cuda_buf_free(b);
	e->impl = NULL;
}

/*
 * Whether this cuSPARSE takes row-major x and y with BSR: its
 * documentation does not say, and column-major would need a transposed
 * copy of y inside the timed call. cusparseSpMM_bufferSize validates the
 * layouts without reading the data, so ask it once on W's own buffers.
 */
static int bsr_row_major(struct spp_cuda_encoded *out, int bs, struct spp_error *err)
{
	struct spp_cuda_buf *b = out->impl;
	cusparseDnMatDescr_t dx = NULL, dy = NULL;
	const float one = 1.0f, zero = 0.0f;
	size_t need = 0;
	cusparseStatus_t s;

	s = cusparseCreateDnMat(&dx, out->k, 8, 8, b->val, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseCreateDnMat(&dy, out->m, 8, 8, b->val, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseSpMM_bufferSize((cusparseHandle_t)b->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
					    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b->descr, dx, &zero,
					    dy, CUDA_R_32F, CUSPARSE_SPMM_BSR_ALG1, &need);
	if (dx)
		cusparseDestroyDnMat(dx);
	if (dy)
		cusparseDestroyDnMat(dy);
	if (s == CUSPARSE_STATUS_SUCCESS)
		return 0;
	out->ops->release(out);
	if (s == CUSPARSE_STATUS_NOT_SUPPORTED || s == CUSPARSE_STATUS_INVALID_VALUE)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "cuSPARSE BSR%d SpMM does not take row-major X and Y here: %s", bs,
				     cusparseGetErrorString(s));
	return spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE BSR%d SpMM: %s", bs,
			     cusparseGetErrorString(s));
}

/*
 * cuSPARSE's BSR SpMM (cusparseCreateBsr and CUSPARSE_SPMM_BSR_ALG1, CUDA
 * 12.x and 13) reads x as bcols * B rows and writes brows * B rows of y:
 * a W whose M or K is not a multiple of B would need padded copies of x and
 * y inside the timed call, so it is not applicable instead.
 */
static int encode_cusparse_bsr(const struct spp_matrix *w, int bs,
			       const struct spp_cuda_format *ops, struct spp_cuda_encoded *out,
			       struct spp_error *err)
{
	struct spp_cuda_buf *b;
	int64_t nb;
	int rc;

	if (w->m % bs || w->k % bs)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "cuSPARSE BSR needs M and K multiples of %d (W is %lld x %lld)",
				     bs, (long long)w->m, (long long)w->k);
	if ((rc = spp_cuda_encode_bsr(w, bs, out, err)))
		return rc;
	out->ops = ops;
	b = out->impl;
	/* blocks stored: the encoder's byte count less the row pointers, over B*B floats + a column */
	nb = (int64_t)((out->bytes - sizeof(int) * (uint64_t)(w->m / bs + 1)) /
		       (sizeof(int) + sizeof(float) * (uint64_t)(bs * bs)));
	if (cusparseCreate((cusparseHandle_t *)&b->handle) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateBsr((cusparseSpMatDescr_t *)&b->descr, w->m / bs, w->k / bs, nb, bs, bs,
			      b->rowptr, b->col, b->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
			      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F,
			      CUSPARSE_ORDER_ROW) != CUSPARSE_STATUS_SUCCESS) {
		out->ops->release(out);
		return spp_error_set(err, SPP_E_DEVICE, "cuda: cuSPARSE BSR%d descriptor", bs);
	}
	return bsr_row_major(out, bs, err);
}

static int encode_cusparse_bsr4(const struct spp_matrix *w, struct spp_cuda_encoded *out,
				struct spp_error *err)
{
	return encode_cusparse_bsr(w, 4, &spp_cuda_cusparse_bsr4, out, err);
}

static int encode_cusparse_bsr8(const struct spp_matrix *w, struct spp_cuda_encoded *out,
				struct spp_error *err)
{
	return encode_cusparse_bsr(w, 8, &spp_cuda_cusparse_bsr8, out, err);
}

static int encode_cusparse_bsr16(const struct spp_matrix *w, struct spp_cuda_encoded *out,
				 struct spp_error *err)
{
	return encode_cusparse_bsr(w, 16, &spp_cuda_cusparse_bsr16, out, err);
}

const struct spp_cuda_format spp_cuda_cusparse_csr = {
	.key = "cusparse_csr", .baseline = 1, .encode = encode_cusparse, .spmm = spmm_cusparse,
	.release = release_cusparse, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cusparse_coo = {
	.key = "cusparse_coo", .baseline = 1, .encode = encode_cusparse_coo,
	.spmm = spmm_cusparse, .release = release_cusparse, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cusparse_bsr4 = {
	.key = "cusparse_bsr4", .block = 4, .baseline = 1, .encode = encode_cusparse_bsr4,
	.spmm = spmm_cusparse, .release = release_cusparse, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cusparse_bsr8 = {
	.key = "cusparse_bsr8", .block = 8, .baseline = 1, .encode = encode_cusparse_bsr8,
	.spmm = spmm_cusparse, .release = release_cusparse, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cusparse_bsr16 = {
	.key = "cusparse_bsr16", .block = 16, .baseline = 1, .encode = encode_cusparse_bsr16,
	.spmm = spmm_cusparse, .release = release_cusparse, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cublas_dense = {
	.key = "cublas_dense", .baseline = 1, .encode = encode_dense, .spmm = spmm_dense,
	.release = spp_cuda_release_cublas, .precision = "fp32"};
