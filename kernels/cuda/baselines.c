/*
 * The vendor baselines as entries of the CUDA table: cuBLAS SGEMM on the
 * dense W, cuSPARSE SpMM on W in CSR. Both take row-major x and y.
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

const struct spp_cuda_format spp_cuda_cusparse_csr, spp_cuda_cusparse_coo, spp_cuda_cublas_dense;

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

static void release_dense(struct spp_cuda_encoded *e)
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
	cusparseStatus_t s;
	int rc = 0;

	s = cusparseCreateDnMat(&dx, w->k, n, n, (void *)x, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseCreateDnMat(&dy, w->m, n, n, y, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b->descr, dx,
					    &zero, dy, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &need);
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
			 b->descr, dx, &zero, dy, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, b->work);
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

const struct spp_cuda_format spp_cuda_cusparse_csr = {
	"cusparse_csr", 0, 1, encode_cusparse, spmm_cusparse, release_cusparse};
const struct spp_cuda_format spp_cuda_cusparse_coo = {
	"cusparse_coo", 0, 1, encode_cusparse_coo, spmm_cusparse, release_cusparse};
const struct spp_cuda_format spp_cuda_cublas_dense = {
	"cublas_dense", 0, 1, encode_dense, spmm_dense, release_dense};
