/*
 * The tensor-core entries of the CUDA table: 2:4 on sparse tensor cores
 * (mma.sp, fp16 in, fp32 accumulate) and the dense cuBLAS GEMMs it is
 * compared with at its own precision (fp16 in, fp32 compute) and at TF32.
 * fp16 entries convert W on the host (host.c, round to nearest even) and
 * x once on the device (prepare), so the CPU reference of the check can
 * round the same way.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/formats.h"
#include "kernels/cuda/host.h"
#include "kernels/cuda/impl.h"
#include "kernels/cuda/kernels_cuda.h"

const struct spp_cuda_format spp_cuda_fmt_nm2_4_tc, spp_cuda_cublas_tf32, spp_cuda_cublas_fp16;

static int launched(int e, const char *key, struct spp_error *err)
{
	if (e == 0)
		return 0;
	return spp_error_set(err, SPP_E_DEVICE, "cuda: %s kernel: %s", key,
			     cudaGetErrorString((cudaError_t)e));
}

/* Grow b->xin to n bytes. */
static int xin_reserve(struct spp_cuda_buf *b, size_t n, const char *key, struct spp_error *err)
{
	cudaError_t e;

	if (n <= b->xin_bytes && b->xin)
		return 0;
	cudaFree(b->xin);
	b->xin = NULL;
	b->xin_bytes = 0;
	if ((e = cudaMalloc(&b->xin, n ? n : 1)) != cudaSuccess) {
		b->xin = NULL;
		return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: x of %zu bytes: %s", key, n,
				     cudaGetErrorString(e));
	}
	b->xin_bytes = n;
	return 0;
}

/* W 2:4 along K, checked on the host before the device is asked anything. */
static int encode_nm_tc(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	struct spp_nm_tc t;
	struct spp_cuda_buf *b = NULL;
	size_t tiles;
	int sm, rc;

	out->ops = &spp_cuda_fmt_nm2_4_tc;
	if ((rc = spp_nm_tc_encode(w, &t, err)))
		return rc;
	if ((rc = spp_cuda_current_sm(&sm, err)))
		goto out;
	if (sm < 80) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED,
				   "sparse tensor cores need sm_80 or newer (this device is sm_%d)", sm);
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: nm2_4_tc buffers");
		goto out;
	}
	tiles = (size_t)(t.mtiles * t.ktiles);
	if ((rc = spp_cuda_upload((void **)&b->tc_a, t.a, sizeof(uint32_t) * tiles * 128, err)) ||
	    (rc = spp_cuda_upload((void **)&b->tc_e, t.e, sizeof(uint32_t) * tiles * 32, err)))
		goto out;
	b->mtiles = t.mtiles;
	b->ktiles = t.ktiles;
	out->m = w->m;
	out->k = w->k;
	out->nnz = t.nnz;
	/* what the kernel reads of W: every tile's fragments and metadata */
	out->bytes = sizeof(uint32_t) * (uint64_t)tiles * 160;
	out->impl = b;
	b = NULL;
out:
	spp_cuda_buf_free(b);
	spp_nm_tc_release(&t);
	return rc;
}

static int prepare_nm_tc(struct spp_cuda_encoded *w, const float *x, int64_t n,
			 struct spp_error *err)
{
	struct spp_cuda_buf *b = w->impl;
	int64_t kp = b->ktiles * 32, n_pad = (n + 7) / 8 * 8;
	int rc;

	if (n > INT32_MAX - 8 || kp * n_pad > INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cuda: nm2_4_tc: x of %lld columns", (long long)n);
	if ((rc = xin_reserve(b, sizeof(uint16_t) * (size_t)(kp * n_pad), w->ops->key, err)))
		return rc;
	return launched(spp_cuda_to_half_t((int)w->k, (int)n, (int)kp, (int)n_pad, x, b->xin, NULL),
			w->ops->key, err);
}

static int spmm_nm_tc(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		      struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	(void)x;
	return launched(spp_cuda_nm2_4_tc((int)w->m, (int)n, (int)b->mtiles, (int)b->ktiles, b->tc_a,
					  b->tc_e, b->xin, y, NULL), w->ops->key, err);
}

static void release_buf(struct spp_cuda_encoded *e)
{
	if (!e)
		return;
	spp_cuda_buf_free(e->impl);
	e->impl = NULL;
}

int spp_cuda_encode_gemm(const struct spp_matrix *w, const struct spp_cuda_format *ops,
			 struct spp_cuda_encoded *out, struct spp_error *err)
{
	struct spp_cuda_buf *b = NULL;
	uint16_t *h = NULL;
	int64_t nnz = 0, count = w->m * w->k;
	int fp16 = strcmp(ops->precision, "fp16") == 0;
	int rc = 0;

	out->ops = ops;
	if (w->m > INT32_MAX || w->k > INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cuda: %lld x %lld is too large for cuBLAS",
				     (long long)w->m, (long long)w->k);
	for (int64_t i = 0; i < count; i++) {
		nnz += w->v[i] != 0.0f;
		if (fp16 && !(fabsf(w->v[i]) <= SPP_FP16_MAX))
			return spp_error_set(err, SPP_E_UNSUPPORTED, "W[%lld][%lld] = %g is beyond fp16's range",
					     (long long)(i / w->k), (long long)(i % w->k), (double)w->v[i]);
	}
	b = calloc(1, sizeof(*b));
	if (fp16)
		h = malloc(sizeof(uint16_t) * (size_t)(count ? count : 1));
	if (!b || (fp16 && !h)) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: %s: W of %lld values", ops->key, (long long)count);
		goto out;
	}
	if (fp16) {
		for (int64_t i = 0; i < count; i++)
			h[i] = spp_f32_to_f16(w->v[i]);
		rc = spp_cuda_upload((void **)&b->val, h, sizeof(uint16_t) * (size_t)count, err);
	} else {
		rc = spp_cuda_upload((void **)&b->val, w->v, sizeof(float) * (size_t)count, err);
	}
	if (rc)
		goto out;
	if (cublasCreate((cublasHandle_t *)&b->handle) != CUBLAS_STATUS_SUCCESS) {
		b->handle = NULL;
		rc = spp_error_set(err, SPP_E_DEVICE, "cuda: cublasCreate failed");
		goto out;
	}
	out->m = w->m;
	out->k = w->k;
	out->nnz = nnz;
	out->bytes = (fp16 ? sizeof(uint16_t) : sizeof(float)) * (uint64_t)count;
	out->impl = b;
	b = NULL;
out:
	if (b && b->handle)
		cublasDestroy((cublasHandle_t)b->handle);
	spp_cuda_buf_free(b);
	free(h);
	return rc;
}

static int encode_tf32(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err)
{
	return spp_cuda_encode_gemm(w, &spp_cuda_cublas_tf32, out, err);
}

static int encode_fp16(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err)
{
	return spp_cuda_encode_gemm(w, &spp_cuda_cublas_fp16, out, err);
}

int spp_cuda_prepare_fp16(struct spp_cuda_encoded *w, const float *x, int64_t n,
			  struct spp_error *err)
{
	struct spp_cuda_buf *b = w->impl;
	int rc;

	if ((rc = xin_reserve(b, sizeof(uint16_t) * (size_t)(w->k * n), w->ops->key, err)))
		return rc;
	return launched(spp_cuda_to_half(w->k * n, x, b->xin, NULL), w->ops->key, err);
}

/*
 * Row-major y = w x is column-major y^T = x^T w^T (as baselines.c's SGEMM):
 * A is x (n x k, ld n), B is w (k x m, ld k), C is y (n x m, ld n).
 */
static int spmm_gemm(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		     struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;
	const float one = 1.0f, zero = 0.0f;
	int fp16 = w->ops == &spp_cuda_cublas_fp16;
	cublasStatus_t s;

	s = cublasGemmEx((cublasHandle_t)b->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)w->m,
			 (int)w->k, &one, fp16 ? b->xin : (const void *)x,
			 fp16 ? CUDA_R_16F : CUDA_R_32F, (int)n, b->val,
			 fp16 ? CUDA_R_16F : CUDA_R_32F, (int)w->k, &zero, y, CUDA_R_32F, (int)n,
			 fp16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
	if (s != CUBLAS_STATUS_SUCCESS)
		return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: cublasGemmEx: %s", w->ops->key,
				     cublasGetStatusString(s));
	return 0;
}

/* one warp per 16 rows: part_rows 16 */
const struct spp_cuda_format spp_cuda_fmt_nm2_4_tc = {
	.key = "nm2_4_tc", .block = 4, .encode = encode_nm_tc, .spmm = spmm_nm_tc,
	.release = release_buf, .precision = "fp16", .part_rows = 16, .prepare = prepare_nm_tc};
const struct spp_cuda_format spp_cuda_cublas_tf32 = {
	.key = "cublas_tf32", .baseline = 1, .encode = encode_tf32, .spmm = spmm_gemm,
	.release = spp_cuda_release_cublas, .precision = "tf32"};
const struct spp_cuda_format spp_cuda_cublas_fp16 = {
	.key = "cublas_fp16", .baseline = 1, .encode = encode_fp16, .spmm = spmm_gemm,
	.release = spp_cuda_release_cublas, .precision = "fp16", .prepare = spp_cuda_prepare_fp16};
