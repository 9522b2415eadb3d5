/*
 * bsrB (B = 4, 8, 16): block sparse rows of B x B blocks.
 *
 * Storage (what `bytes` counts): nzb blocks of B*B fp32 values (row-major
 * in the block, zero-padded past M or K) + nzb int32 block-column indices
 * + (ceil(M/B) + 1) int32 block-row offsets:
 * nzb*B*B*4 + nzb*4 + (ceil(M/B)+1)*4, nzb = blocks holding a non-zero.
 *
 * Partition: block rows, balancing stored blocks (the work, fill-in
 * included); part_nnz counts the true non-zeros of each part.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

static void bsr_release(struct spp_encoded *e)
{
	struct cpu_bsr *s;

	if (!e)
		return;
	s = e->impl;
	if (s) {
		spp_buffer_free(s->ptr);
		spp_buffer_free(s->bcol);
		spp_buffer_free(s->val);
		free(s->lo);
	}
	cpu_release_common(e);
}

static int block_nonzero(const struct spp_matrix *w, int b, int64_t br, int64_t bc)
{
	for (int64_t i = br * b; i < (br + 1) * b && i < w->m; i++)
		for (int64_t j = bc * b; j < (bc + 1) * b && j < w->k; j++)
			if (w->v[i * w->k + j] != 0.0f)
				return 1;
	return 0;
}

static int bsr_encode_b(int b, const struct spp_format_ops *ops,
			const struct spp_matrix *w, int threads,
			struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nzb = 0, nnz = 0, z = 0;
	int64_t *blk_cum = NULL, *nnz_cum = NULL;
	struct cpu_bsr *s = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "%s: threads must be >= 1, got %d", ops->key, threads);
	s = calloc(1, sizeof(*s));
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate", ops->key);
	out->ops = ops;
	out->impl = s;
	s->b = b;
	s->mb = (m + b - 1) / b;
	s->kb = (k + b - 1) / b;
	blk_cum = malloc((size_t)(s->mb + 1) * sizeof(*blk_cum));
	nnz_cum = malloc((size_t)(s->mb + 1) * sizeof(*nnz_cum));
	s->lo = malloc((size_t)(threads + 1) * sizeof(*s->lo));
	if (!blk_cum || !nnz_cum || !s->lo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate the block-row index", ops->key);
		goto out;
	}
	blk_cum[0] = nnz_cum[0] = 0;
	for (int64_t br = 0; br < s->mb; br++) {
		for (int64_t bc = 0; bc < s->kb; bc++)
			nzb += block_nonzero(w, b, br, bc);
		for (int64_t i = br * b; i < (br + 1) * b && i < m; i++)
			for (int64_t j = 0; j < k; j++)
				nnz += w->v[i * k + j] != 0.0f;
		blk_cum[br + 1] = nzb;
		nnz_cum[br + 1] = nnz;
	}
	if (nzb > INT32_MAX) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED, "%s: %lld blocks exceed the int32 offsets",
				   ops->key, (long long)nzb);
		goto out;
	}
	s->nzb = nzb;
	s->ptr = spp_buffer_alloc((size_t)(s->mb + 1) * sizeof(*s->ptr));
	s->bcol = spp_buffer_alloc((size_t)nzb * sizeof(*s->bcol));
	s->val = spp_buffer_alloc((size_t)nzb * b * b * sizeof(*s->val));
	if (!s->ptr || !s->bcol || !s->val) {
		rc = spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate %lld blocks", ops->key, (long long)nzb);
		goto out;
	}
	for (int64_t br = 0; br < s->mb; br++) {
		s->ptr[br] = (int32_t)z;
		for (int64_t bc = 0; bc < s->kb; bc++) {
			float *blk = s->val + z * b * b;

			if (!block_nonzero(w, b, br, bc))
				continue;
			s->bcol[z] = (int32_t)bc;
			for (int64_t r = 0; r < b && br * b + r < m; r++)
				for (int64_t c = 0; c < b && bc * b + c < k; c++)
					blk[r * b + c] = w->v[(br * b + r) * k + bc * b + c];
			z++;
		}
	}
	s->ptr[s->mb] = (int32_t)z;
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->x_rows = cpu_x_rows(w, b);
	out->bytes = (uint64_t)nzb * b * b * 4 + (uint64_t)nzb * 4 + (uint64_t)(s->mb + 1) * 4;
	cpu_partition(blk_cum, s->mb, threads, s->lo);
	rc = cpu_set_parts(out, threads, s->lo, nnz_cum, err);
out:
	free(blk_cum);
	free(nnz_cum);
	if (rc)
		bsr_release(out);
	return rc;
}

/*
 * Portable: per block row, zero its Y rows, then per chunk of 256/B
 * columns (the vector kernel's register tile) every block, column by
 * column of the block, every row of the block.
 */
static void bsr_part_c(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n,
		       const struct spp_epi *e)
{
	const struct cpu_bsr *s = w->impl;
	int64_t b = s->b, cwmax = 256 / b, b0, b1;

	if (!cpu_part_range(s->lo, p, &b0, &b1))
		return;

	for (int64_t br = b0; br < b1; br++) {
		int64_t rr = w->m - br * b < b ? w->m - br * b : b;

		SPP_TRACE_STORE(y + br * b * n, rr * n * 4);
		for (int64_t i = br * b * n; i < (br * b + rr) * n; i++)
			y[i] = 0;
		for (int64_t j0 = 0; j0 < n; j0 += cwmax) {
			int64_t cw = n - j0 < cwmax ? n - j0 : cwmax;

			SPP_TRACE_LOAD(&s->ptr[br], 8);
			for (int32_t q = s->ptr[br]; q < s->ptr[br + 1]; q++) {
				int64_t bc = s->bcol[q];
				int64_t kc = w->k - bc * b < b ? w->k - bc * b : b;
				const float *wb = s->val + (int64_t)q * b * b;

				SPP_TRACE_LOAD(&s->bcol[q], 4);
				for (int64_t c = 0; c < kc; c++) {
					const float *xr = x + (bc * b + c) * n + j0;

					SPP_TRACE_LOAD(xr, cw * 4);
					for (int64_t r = 0; r < rr; r++) {
						float v = wb[r * b + c];
						float *yr = y + (br * b + r) * n + j0;

						SPP_TRACE_LOAD(&wb[r * b + c], 4);
						SPP_TRACE_LOAD(yr, cw * 4);
						SPP_TRACE_STORE(yr, cw * 4);
						for (int64_t jj = 0; jj < cw; jj++)
							yr[jj] += v * xr[jj];
					}
				}
			}
		}
	}
	cpu_epi_rows(e, y, b0 * b, b1 * b < w->m ? b1 * b : w->m, n);
}

/*
 * DESIGN's bsrB: the non-zero blocks' values in the model's dtype, an
 * int32 block column each, int32 block-row offsets.
 */
static int bsr_storage(const struct spp_format_ops *f, const struct spp_storage_counts *c,
		       double *bytes, struct spp_error *err)
{
	uint64_t bs = (uint64_t)f->block, nzb = c->blocks - c->zero_blocks;
	double brows = (double)((c->m + f->block - 1) / f->block);

	(void)err;
	*bytes = (double)spp_value_bytes(c, nzb * bs * bs) + (double)nzb * 4 + (brows + 1) * 4;
	return 0;
}

static const int64_t *bsr_part_lo(const struct spp_encoded *w)
{
	return ((const struct cpu_bsr *)w->impl)->lo;
}

static void bsr_narrow(const struct spp_encoded *w, void *impl, int p, int64_t u0, int64_t u1,
		       int64_t *const scratch[2])
{
	((struct cpu_bsr *)impl)->lo = cpu_narrow_lo(bsr_part_lo(w), w->nparts, p, u0, u1, scratch[0]);
}

static int bsr_buffers(const struct spp_encoded *w, struct spp_trace_buffer *b)
{
	const struct cpu_bsr *c = w->impl;

	b[0] = (struct spp_trace_buffer){c->ptr, ((uint64_t)c->mb + 1) * 4};
	b[1] = (struct spp_trace_buffer){c->bcol, (uint64_t)c->nzb * 4};
	b[2] = (struct spp_trace_buffer){c->val, (uint64_t)c->nzb * (uint64_t)(c->b * c->b) * 4};
	return 3;
}

static const struct spp_trace_ops bsr_trace = {
	"block-row", sizeof(struct cpu_bsr), bsr_part_lo, bsr_narrow, bsr_buffers, NULL, NULL,
};

#define BSR_OPS(B, COLOUR)                                                     \
	static int bsr##B##_encode(const struct spp_matrix *w, int threads, int64_t n,    \
				   struct spp_encoded *out, struct spp_error *err) \
	{                                                                      \
		(void)n; /* one layout at every N */                          \
		return bsr_encode_b(B, &SPP_CPU_OPS(bsr##B), w, threads, out, err); \
	}                                                                      \
	const struct spp_format_ops SPP_CPU_OPS(bsr##B) = {                    \
		.key = "bsr" #B,                                               \
		.block = B,                                                    \
		.colour = COLOUR,                                              \
		.storage = bsr_storage,                                        \
		.encode = bsr##B##_encode,                                     \
		.spmm = cpu_spmm,                                              \
		.part = CPU_PARTS(bsr_part_c, cpu_bsr_part),                   \
		.release = bsr_release,                                        \
		.trace = &bsr_trace,                                           \
	};

BSR_OPS(4, "#e15759")
BSR_OPS(8, "#76b7b2")
BSR_OPS(16, "#59a14f")
