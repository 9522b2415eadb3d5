/*
 * cuBLASLt as a dense baseline at each precision (fp32, TF32, fp16 in with
 * fp32 accumulation): the algorithm its heuristic ranks first for the
 * shape, with the workspace it asks for (up to 64 MiB). Beside cuBLAS's
 * own GEMMs, the fastest of a precision is that precision's baseline
 * (profiler/run_cuda.c). W is encoded as for cuBLAS (tc.c); the plan is
 * made on the first call for an N and kept with the encoding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/formats.h"
#include "kernels/cuda/impl.h"

#define LT_MAX_WORKSPACE (64u << 20)

const struct spp_cuda_format spp_cuda_cublaslt_fp32, spp_cuda_cublaslt_tf32, spp_cuda_cublaslt_fp16;

struct lt_plan {
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, c;
	cublasLtMatmulAlgo_t algo;
	void *ws;
	size_t ws_bytes;
	int64_t n;               /* the N the layouts and algorithm are for; 0 none yet */
};

static void plan_layouts_free(struct lt_plan *p)
{
	if (p->a)
		cublasLtMatrixLayoutDestroy(p->a);
	if (p->b)
		cublasLtMatrixLayoutDestroy(p->b);
	if (p->c)
		cublasLtMatrixLayoutDestroy(p->c);
	p->a = p->b = p->c = NULL;
	p->n = 0;
}

static void release_lt(struct spp_cuda_encoded *e)
{
	struct spp_cuda_buf *b = e ? e->impl : NULL;
	struct lt_plan *p = b ? b->descr : NULL;

	if (p) {
		plan_layouts_free(p);
		if (p->op)
			cublasLtMatmulDescDestroy(p->op);
		if (p->lt)
			cublasLtDestroy(p->lt);
		cudaFree(p->ws);
		free(p);
		b->descr = NULL;
	}
	spp_cuda_release_cublas(e);
}

static int encode_lt(const struct spp_matrix *w, const struct spp_cuda_format *ops,
		     struct spp_cuda_encoded *out, struct spp_error *err)
{
	int tf32 = strcmp(ops->precision, "tf32") == 0;
	struct lt_plan *p;
	struct spp_cuda_buf *b;
	int rc = spp_cuda_encode_gemm(w, ops, out, err);

	if (rc)
		return rc;
	out->ops = ops;
	b = out->impl;
	p = calloc(1, sizeof(*p));
	if (!p) {
		release_lt(out);
		return spp_error_set(err, SPP_E_NOMEM, "cuda: %s: plan", ops->key);
	}
	b->descr = p;
	if (cublasLtCreate(&p->lt) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulDescCreate(&p->op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
				     CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) {
		release_lt(out);
		return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: cublasLt handle or descriptor", ops->key);
	}
	return 0;
}

static int encode_fp32(const struct spp_matrix *w, struct spp_cuda_encoded *out, struct spp_error *err)
{
	return encode_lt(w, &spp_cuda_cublaslt_fp32, out, err);
}

static int encode_tf32(const struct spp_matrix *w, struct spp_cuda_encoded *out, struct spp_error *err)
{
	return encode_lt(w, &spp_cuda_cublaslt_tf32, out, err);
}

static int encode_fp16(const struct spp_matrix *w, struct spp_cuda_encoded *out, struct spp_error *err)
{
	return encode_lt(w, &spp_cuda_cublaslt_fp16, out, err);
}

/* Layouts and the heuristic's first algorithm for n (column-major, as cuBLAS sees row-major). */
static int plan(const struct spp_cuda_encoded *w, struct lt_plan *p, int64_t n, struct spp_error *err)
{
	cudaDataType_t in = strcmp(w->ops->precision, "fp16") == 0 ? CUDA_R_16F : CUDA_R_32F;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	uint64_t max_ws = LT_MAX_WORKSPACE;
	int found = 0;

	plan_layouts_free(p);
	if (cublasLtMatrixLayoutCreate(&p->a, in, (uint64_t)n, (uint64_t)w->k, n) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatrixLayoutCreate(&p->b, in, (uint64_t)w->k, (uint64_t)w->m, w->k) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, (uint64_t)n, (uint64_t)w->m, n) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
						 sizeof(max_ws)) != CUBLAS_STATUS_SUCCESS) {
		if (pref)
			cublasLtMatmulPreferenceDestroy(pref);
		plan_layouts_free(p);
		return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: layouts", w->ops->key);
	}
	if (cublasLtMatmulAlgoGetHeuristic(p->lt, p->op, p->a, p->b, p->c, p->c, pref, 1, &res, &found) !=
		    CUBLAS_STATUS_SUCCESS || found < 1) {
		cublasLtMatmulPreferenceDestroy(pref);
		plan_layouts_free(p);
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cuda: %s: the heuristic has no algorithm for %lld x %lld x %lld",
				     w->ops->key, (long long)w->m, (long long)w->k, (long long)n);
	}
	cublasLtMatmulPreferenceDestroy(pref);
	if (res.workspaceSize > p->ws_bytes) {
		cudaFree(p->ws);
		p->ws = NULL;
		p->ws_bytes = 0;
		if (cudaMalloc(&p->ws, res.workspaceSize) != cudaSuccess) {
			cudaGetLastError();
			plan_layouts_free(p);
			return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: %zu bytes of workspace", w->ops->key,
					     res.workspaceSize);
		}
		p->ws_bytes = res.workspaceSize;
	}
	p->algo = res.algo;
	p->n = n;
	return 0;
}

static int spmm_lt(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		   struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;
	struct lt_plan *p = b->descr;
	const float one = 1.0f, zero = 0.0f;
	int fp16 = strcmp(w->ops->precision, "fp16") == 0, rc;
	cublasStatus_t s;

	if (p->n != n && (rc = plan(w, p, n, err)))
		return rc;
	s = cublasLtMatmul(p->lt, p->op, &one, fp16 ? b->xin : (const void *)x, p->a, b->val, p->b, &zero,
			   y, p->c, y, p->c, &p->algo, p->ws, p->ws_bytes, 0);
	if (s != CUBLAS_STATUS_SUCCESS)
		return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: cublasLtMatmul: %s", w->ops->key,
				     cublasGetStatusString(s));
	return 0;
}

const struct spp_cuda_format spp_cuda_cublaslt_fp32 = {
	.key = "cublaslt_fp32", .baseline = 1, .encode = encode_fp32, .spmm = spmm_lt,
	.release = release_lt, .precision = "fp32"};
const struct spp_cuda_format spp_cuda_cublaslt_tf32 = {
	.key = "cublaslt_tf32", .baseline = 1, .encode = encode_tf32, .spmm = spmm_lt,
	.release = release_lt, .precision = "tf32"};
const struct spp_cuda_format spp_cuda_cublaslt_fp16 = {
	.key = "cublaslt_fp16", .baseline = 1, .encode = encode_fp16, .spmm = spmm_lt,
	.release = release_lt, .precision = "fp16", .prepare = spp_cuda_prepare_fp16};
