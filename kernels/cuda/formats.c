/* The CUDA formats' host side: encode on the host, copy, launch; see formats.h. */
#include "kernels/cuda/formats.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kernels/cuda/impl.h"
#include "kernels/cuda/kernels_cuda.h"

int spp_cuda_upload(void **dst, const void *src, size_t n, struct spp_error *err)
{
	cudaError_t e;

	*dst = NULL;
	/* a zero-byte cudaMalloc gives NULL, which the kernels never read */
	e = cudaMalloc(dst, n ? n : 1);
	if (e == cudaSuccess && n)
		e = cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice);
	if (e != cudaSuccess) {
		cudaFree(*dst);
		*dst = NULL;
		return spp_error_set(err, SPP_E_DEVICE, "cuda: copying %zu bytes to the device: %s",
				     n, cudaGetErrorString(e));
	}
	return 0;
}

void spp_cuda_buf_free(struct spp_cuda_buf *b)
{
	if (!b)
		return;
	cudaFree(b->rowptr);
	cudaFree(b->col);
	cudaFree(b->val);
	cudaFree(b->mask);
	cudaFree(b->rowidx);
	cudaFree(b->idx);
	cudaFree(b->work);
	cudaFree(b->xin);
	cudaFree(b->tc_a);
	cudaFree(b->tc_e);
	free(b);
}

static int check_size(const struct spp_matrix *w, int64_t nnz, struct spp_error *err)
{
	if (w->m > INT_MAX || w->k > INT_MAX || nnz > INT_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "cuda: %lld x %lld matrix with %lld non-zeros needs 64-bit indices",
				     (long long)w->m, (long long)w->k, (long long)nnz);
	return 0;
}

static int64_t count_nnz(const struct spp_matrix *w)
{
	int64_t nnz = 0;

	for (int64_t i = 0; i < w->m * w->k; i++)
		nnz += w->v[i] != 0.0f;
	return nnz;
}

int spp_cuda_encode_csr(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	int64_t nnz = count_nnz(w);
	int *rowptr = NULL, *col = NULL;
	float *val = NULL;
	struct spp_cuda_buf *b = NULL;
	int rc;

	if ((rc = check_size(w, nnz, err)))
		return rc;
	rowptr = malloc(sizeof(int) * (size_t)(w->m + 1));
	col = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
	val = malloc(sizeof(float) * (size_t)(nnz ? nnz : 1));
	b = calloc(1, sizeof(*b));
	if (!rowptr || !col || !val || !b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: csr encoding of %lld non-zeros",
				   (long long)nnz);
		goto out;
	}
	rowptr[0] = 0;
	for (int64_t r = 0, p = 0; r < w->m; r++) {
		for (int64_t c = 0; c < w->k; c++) {
			float v = w->v[r * w->k + c];
			if (v != 0.0f) {
				col[p] = (int)c;
				val[p++] = v;
			}
		}
		rowptr[r + 1] = (int)p;
	}
	if ((rc = spp_cuda_upload((void **)&b->rowptr, rowptr, sizeof(int) * (size_t)(w->m + 1), err)) ||
	    (rc = spp_cuda_upload((void **)&b->col, col, sizeof(int) * (size_t)nnz, err)) ||
	    (rc = spp_cuda_upload((void **)&b->val, val, sizeof(float) * (size_t)nnz, err)))
		goto out;
	out->m = w->m;
	out->k = w->k;
	out->nnz = nnz;
	out->bytes = sizeof(int) * (uint64_t)(w->m + 1) + (sizeof(int) + sizeof(float)) * (uint64_t)nnz;
	out->impl = b;
	b = NULL;
out:
	spp_cuda_buf_free(b);
	free(rowptr);
	free(col);
	free(val);
	return rc;
}

static int encode_csr(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		      struct spp_error *err);
static int encode_csr_balanced(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			       struct spp_error *err);
static int encode_bsr4(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err);
static int encode_bsr8(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err);
static int encode_bsr16(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err);
static int encode_bitmask(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			  struct spp_error *err);
static int encode_nm2_4(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err);

/* A launcher's cudaError_t as the table's error. */
static int launched(int e, const char *key, struct spp_error *err)
{
	if (e == 0)
		return 0;
	return spp_error_set(err, SPP_E_DEVICE, "cuda: %s kernel: %s", key,
			     cudaGetErrorString((cudaError_t)e));
}

static int spmm_csr(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		    struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	return launched(spp_cuda_csr_rows((int)w->m, (int)n, b->rowptr, b->col, b->val, x, y, NULL),
			w->ops->key, err);
}

static int spmm_csr_balanced(const struct spp_cuda_encoded *w, const float *x, float *y,
			     int64_t n, struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	return launched(spp_cuda_csr_balanced((int)w->m, (int)n, (int)w->nnz, b->rowptr, b->col,
					      b->val, x, y, NULL), w->ops->key, err);
}

static int spmm_bsr(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		    struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	return launched(spp_cuda_bsr(w->ops->block, (int)w->m, (int)w->k, (int)n, b->rowptr,
				     b->col, b->val, x, y, NULL), w->ops->key, err);
}

static int spmm_bitmask(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
			struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	return launched(spp_cuda_bitmask((int)w->m, (int)w->k, (int)n, b->mask, b->rowptr, b->val,
					 x, y, NULL), w->ops->key, err);
}

static int spmm_nm2_4(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		      struct spp_error *err)
{
	const struct spp_cuda_buf *b = w->impl;

	return launched(spp_cuda_nm2_4((int)w->m, (int)w->k, (int)n, b->val, b->idx, x, y, NULL),
			w->ops->key, err);
}

static void release_buf(struct spp_cuda_encoded *e)
{
	if (!e)
		return;
	spp_cuda_buf_free(e->impl);
	e->impl = NULL;
}

/* part_rows: csr, bitmask and nm2_4 give each block 8 rows (8 warps of one row), bsrB one block row */
static const struct spp_cuda_format fmt_csr = {
	.key = "csr", .encode = encode_csr, .spmm = spmm_csr, .release = release_buf,
	.precision = "fp32", .part_rows = 8};
static const struct spp_cuda_format fmt_csr_balanced = {
	.key = "csr_balanced", .encode = encode_csr_balanced, .spmm = spmm_csr_balanced,
	.release = release_buf, .precision = "fp32", .part_rows = SPP_CUDA_PART_NNZ,
	.part_nnz = 8 * 256}; /* csr.cu: 8 warps of kChunk = 256 non-zeros */
static const struct spp_cuda_format fmt_bsr4 = {
	.key = "bsr4", .block = 4, .encode = encode_bsr4, .spmm = spmm_bsr, .release = release_buf,
	.precision = "fp32", .part_rows = 4};
static const struct spp_cuda_format fmt_bsr8 = {
	.key = "bsr8", .block = 8, .encode = encode_bsr8, .spmm = spmm_bsr, .release = release_buf,
	.precision = "fp32", .part_rows = 8};
static const struct spp_cuda_format fmt_bsr16 = {
	.key = "bsr16", .block = 16, .encode = encode_bsr16, .spmm = spmm_bsr,
	.release = release_buf, .precision = "fp32", .part_rows = 16};
static const struct spp_cuda_format fmt_bitmask = {
	.key = "bitmask", .encode = encode_bitmask, .spmm = spmm_bitmask, .release = release_buf,
	.precision = "fp32", .part_rows = 8};
static const struct spp_cuda_format fmt_nm2_4 = {
	.key = "nm2_4", .block = 4, .encode = encode_nm2_4, .spmm = spmm_nm2_4,
	.release = release_buf, .precision = "fp32", .part_rows = 8};

extern const struct spp_cuda_format spp_cuda_cusparse_csr, spp_cuda_cusparse_coo,
	spp_cuda_cusparse_bsr4, spp_cuda_cusparse_bsr8, spp_cuda_cusparse_bsr16,
	spp_cuda_cublas_dense, spp_cuda_cublas_tf32, spp_cuda_cublas_fp16, spp_cuda_fmt_nm2_4_tc,
	spp_cuda_cublaslt_fp32, spp_cuda_cublaslt_tf32, spp_cuda_cublaslt_fp16;

static const struct spp_cuda_format *const format_rows[] = {
	&fmt_csr, &fmt_csr_balanced, &fmt_bsr4, &fmt_bsr8, &fmt_bsr16, &fmt_bitmask, &fmt_nm2_4,
	&spp_cuda_fmt_nm2_4_tc, &spp_cuda_cusparse_csr, &spp_cuda_cusparse_coo,
	&spp_cuda_cusparse_bsr4, &spp_cuda_cusparse_bsr8, &spp_cuda_cusparse_bsr16,
	&spp_cuda_cublas_dense, &spp_cuda_cublas_tf32, &spp_cuda_cublas_fp16, &spp_cuda_cublaslt_fp32,
	&spp_cuda_cublaslt_tf32, &spp_cuda_cublaslt_fp16, NULL,
};

int spp_cuda_current_sm(int *sm, struct spp_error *err)
{
	int dev = 0, major = 0, minor = 0;
	cudaError_t e;

	*sm = 0;
	if ((e = cudaGetDevice(&dev)) ||
	    (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) ||
	    (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev))) {
		cudaGetLastError();
		return spp_error_set(err, SPP_E_DEVICE, "cuda: no device: %s", cudaGetErrorString(e));
	}
	*sm = major * 10 + minor;
	return 0;
}

const struct spp_cuda_format *const *spp_cuda_format_table(void)
{
	return format_rows;
}

static int encode_csr(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		      struct spp_error *err)
{
	out->ops = &fmt_csr;
	return spp_cuda_encode_csr(w, out, err);
}

static int encode_csr_balanced(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			       struct spp_error *err)
{
	out->ops = &fmt_csr_balanced;
	return spp_cuda_encode_csr(w, out, err);
}

/* Blocks with any non-zero, block rows in order, zero-padded past M and K. */
int spp_cuda_encode_bsr(const struct spp_matrix *w, const int bs, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	int64_t mb = (w->m + bs - 1) / bs, kb = (w->k + bs - 1) / bs, nb = 0;
	int *browptr = NULL, *bcol = NULL;
	float *bval = NULL;
	struct spp_cuda_buf *b = NULL;
	int rc;

	/* first pass: which blocks hold a non-zero */
	browptr = malloc(sizeof(int) * (size_t)(mb + 1));
	if (!browptr)
		return spp_error_set(err, SPP_E_NOMEM, "cuda: bsr%d block pointers", bs);
	browptr[0] = 0;
	for (int64_t br = 0; br < mb; br++) {
		for (int64_t bc = 0; bc < kb; bc++) {
			int any = 0;
			for (int64_t r = br * bs; r < w->m && r < (br + 1) * bs && !any; r++)
				for (int64_t c = bc * bs; c < w->k && c < (bc + 1) * bs; c++)
					any |= w->v[r * w->k + c] != 0.0f;
			nb += any;
		}
		if (nb > INT_MAX / (bs * bs)) {
			free(browptr);
			return spp_error_set(err, SPP_E_UNSUPPORTED,
					     "cuda: bsr%d of %lld blocks needs 64-bit indices", bs,
					     (long long)nb);
		}
		browptr[br + 1] = (int)nb;
	}
	if ((rc = check_size(w, 0, err)))
		goto out;
	bcol = malloc(sizeof(int) * (size_t)(nb ? nb : 1));
	bval = calloc((size_t)(nb ? nb : 1) * (size_t)(bs * bs), sizeof(float));
	b = calloc(1, sizeof(*b));
	if (!bcol || !bval || !b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: bsr%d encoding of %lld blocks", bs,
				   (long long)nb);
		goto out;
	}
	/* second pass: fill them */
	for (int64_t br = 0, p = 0; br < mb; br++)
		for (int64_t bc = 0; bc < kb && p < browptr[br + 1]; bc++) {
			int any = 0;
			float *v = bval + p * bs * bs;
			for (int64_t r = br * bs; r < w->m && r < (br + 1) * bs; r++)
				for (int64_t c = bc * bs; c < w->k && c < (bc + 1) * bs; c++) {
					v[(r - br * bs) * bs + (c - bc * bs)] = w->v[r * w->k + c];
					any |= w->v[r * w->k + c] != 0.0f;
				}
			if (any)
				bcol[p++] = (int)bc;
			else
				memset(v, 0, sizeof(float) * (size_t)(bs * bs));
		}
	out->nnz = count_nnz(w);
	if ((rc = spp_cuda_upload((void **)&b->rowptr, browptr, sizeof(int) * (size_t)(mb + 1), err)) ||
	    (rc = spp_cuda_upload((void **)&b->col, bcol, sizeof(int) * (size_t)nb, err)) ||
	    (rc = spp_cuda_upload((void **)&b->val, bval, sizeof(float) * (size_t)(nb * bs * bs), err)))
		goto out;
	out->m = w->m;
	out->k = w->k;
	out->bytes = sizeof(int) * (uint64_t)(mb + 1 + nb) + sizeof(float) * (uint64_t)(nb * bs * bs);
	out->impl = b;
	b = NULL;
out:
	spp_cuda_buf_free(b);
	free(browptr);
	free(bcol);
	free(bval);
	return rc;
}

static int encode_bitmask(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			  struct spp_error *err)
{
	int64_t nnz = count_nnz(w), words = (w->k + 63) / 64;
	uint64_t *mask = NULL;
	int *rowptr = NULL;
	float *val = NULL;
	struct spp_cuda_buf *b = NULL;
	int rc;

	out->ops = &fmt_bitmask;
	if ((rc = check_size(w, nnz, err)))
		return rc;
	mask = calloc((size_t)(w->m * words > 0 ? w->m * words : 1), sizeof(uint64_t));
	rowptr = malloc(sizeof(int) * (size_t)(w->m + 1));
	val = malloc(sizeof(float) * (size_t)(nnz ? nnz : 1));
	b = calloc(1, sizeof(*b));
	if (!mask || !rowptr || !val || !b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: bitmask encoding of %lld non-zeros",
				   (long long)nnz);
		goto out;
	}
	rowptr[0] = 0;
	for (int64_t r = 0, p = 0; r < w->m; r++) {
		for (int64_t c = 0; c < w->k; c++) {
			float v = w->v[r * w->k + c];
			if (v != 0.0f) {
				mask[r * words + c / 64] |= UINT64_C(1) << (c % 64);
				val[p++] = v;
			}
		}
		rowptr[r + 1] = (int)p;
	}
	if ((rc = spp_cuda_upload((void **)&b->mask, mask, sizeof(uint64_t) * (size_t)(w->m * words), err)) ||
	    (rc = spp_cuda_upload((void **)&b->rowptr, rowptr, sizeof(int) * (size_t)(w->m + 1), err)) ||
	    (rc = spp_cuda_upload((void **)&b->val, val, sizeof(float) * (size_t)nnz, err)))
		goto out;
	out->m = w->m;
	out->k = w->k;
	out->nnz = nnz;
	out->bytes = sizeof(uint64_t) * (uint64_t)(w->m * words) +
		     sizeof(int) * (uint64_t)(w->m + 1) + sizeof(float) * (uint64_t)nnz;
	out->impl = b;
	b = NULL;
out:
	spp_cuda_buf_free(b);
	free(mask);
	free(rowptr);
	free(val);
	return rc;
}

static int encode_bsr4(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err)
{
	out->ops = &fmt_bsr4;
	return spp_cuda_encode_bsr(w, 4, out, err);
}

static int encode_bsr8(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		       struct spp_error *err)
{
	out->ops = &fmt_bsr8;
	return spp_cuda_encode_bsr(w, 8, out, err);
}

static int encode_bsr16(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	out->ops = &fmt_bsr16;
	return spp_cuda_encode_bsr(w, 16, out, err);
}

/* Two slots per group of four columns; W must be 2:4 (the N:M rule, kernels.h). */
static int encode_nm2_4(const struct spp_matrix *w, struct spp_cuda_encoded *out,
			struct spp_error *err)
{
	int64_t groups = (w->k + 3) / 4, slots = w->m * groups * 2, nnz = 0;
	float *val = NULL;
	uint8_t *idx = NULL;
	struct spp_cuda_buf *b = NULL;
	int rc;

	out->ops = &fmt_nm2_4;
	if ((rc = check_size(w, slots, err)) ||
	    (rc = spp_nm_check(2, 4, spp_nm_groups(w->m, w->k, 4), spp_nm_violations(w, 2, 4), err)))
		return rc;
	val = calloc((size_t)(slots ? slots : 1), sizeof(float));
	idx = calloc((size_t)(slots ? slots : 1), 1);
	b = calloc(1, sizeof(*b));
	if (!val || !idx || !b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: nm2_4 encoding of %lld slots",
				   (long long)slots);
		goto out;
	}
	for (int64_t r = 0; r < w->m; r++)
		for (int64_t g = 0; g < groups; g++) {
			int used = 0;
			for (int64_t c = 4 * g; c < w->k && c < 4 * g + 4; c++) {
				float v = w->v[r * w->k + c];
				if (v == 0.0f)
					continue;
				nnz++;
				val[(r * groups + g) * 2 + used] = v;
				idx[(r * groups + g) * 2 + used++] = (uint8_t)(c - 4 * g);
			}
		}
	if ((rc = spp_cuda_upload((void **)&b->val, val, sizeof(float) * (size_t)slots, err)) ||
	    (rc = spp_cuda_upload((void **)&b->idx, idx, (size_t)slots, err)))
		goto out;
	out->m = w->m;
	out->k = w->k;
	out->nnz = nnz;
	out->bytes = (sizeof(float) + 1) * (uint64_t)slots;
	out->impl = b;
	b = NULL;
out:
	spp_cuda_buf_free(b);
	free(val);
	free(idx);
	return rc;
}
