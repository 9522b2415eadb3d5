/*
 * bitmask: one bit per element of W, plus the non-zero values.
 *
 * Storage (what `bytes` counts): M*ceil(K/8) mask bytes (bit c%8 of byte
 * c/8 of a row is column c) + nnz fp32 values in row-major order + (M+1)
 * int32 row offsets into the values: M*ceil(K/8) + nnz*4 + (M+1)*4.
 *
 * At N = 1 the vector kernels decode 16 mask bits at a time into a dense
 * vector of W (expand) and multiply it by a contiguous slice of x, so no
 * gather is needed: this is the format for low sparsity at N = 1. At
 * N >= 2 they walk the set bits. Untiled.
 *
 * Partition: rows, balancing non-zeros.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

static void bitmask_release(struct spp_encoded *e)
{
	struct cpu_bitmask *b;

	if (!e)
		return;
	b = e->impl;
	if (b) {
		spp_buffer_free(b->mask);
		spp_buffer_free(b->ptr);
		spp_buffer_free(b->val);
		free(b->lo);
	}
	cpu_release_common(e);
}

static int bitmask_encode(const struct spp_matrix *w, int threads, int64_t n,
			  struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0, z = 0;
	int64_t *row_cum = NULL;
	struct cpu_bitmask *b = NULL;
	int rc = 0;

	(void)n; /* one layout at every N */
	memset(out, 0, sizeof(*out));
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "bitmask: threads must be >= 1, got %d", threads);
	row_cum = cpu_row_cum(w);
	b = calloc(1, sizeof(*b));
	if (!row_cum || !b) {
		rc = spp_error_set(err, SPP_E_NOMEM, "bitmask: cannot allocate the row index");
		goto out;
	}
	out->ops = &SPP_CPU_OPS(bitmask);
	out->impl = b;
	nnz = row_cum[m];
	if (nnz > INT32_MAX) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED,
				   "bitmask: %lld non-zeros exceed the int32 offsets", (long long)nnz);
		goto out;
	}
	b->stride = (k + 7) / 8;
	b->mask = spp_buffer_alloc((size_t)(m * b->stride));
	b->ptr = spp_buffer_alloc((size_t)(m + 1) * sizeof(*b->ptr));
	b->val = spp_buffer_alloc((size_t)nnz * sizeof(*b->val));
	b->lo = malloc((size_t)(threads + 1) * sizeof(*b->lo));
	if (!b->mask || !b->ptr || !b->val || !b->lo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "bitmask: cannot allocate %lld non-zeros", (long long)nnz);
		goto out;
	}
	for (int64_t i = 0; i < m; i++) {
		b->ptr[i] = (int32_t)z;
		for (int64_t j = 0; j < k; j++) {
			float v = w->v[i * k + j];

			if (v != 0.0f) {
				b->mask[i * b->stride + j / 8] |= (uint8_t)(1u << (j % 8));
				b->val[z++] = v;
			}
		}
	}
	b->ptr[m] = (int32_t)z;
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->x_rows = cpu_x_rows(w, 1);
	out->bytes = (uint64_t)(m * b->stride) + (uint64_t)nnz * 4 + (uint64_t)(m + 1) * 4;
	cpu_partition(row_cum, m, threads, b->lo);
	rc = cpu_set_parts(out, threads, b->lo, row_cum, err);
out:
	free(row_cum);
	if (rc)
		bitmask_release(out);
	return rc;
}

/* Portable: column by column of each row, a value per set bit. */
static void bitmask_part_c(const struct spp_encoded *w, int p, const float *x, float *y,
			   int64_t n, const struct spp_epi *e)
{
	const struct cpu_bitmask *b = w->impl;
	int64_t k = w->k, r0, r1;

	if (!cpu_part_range(b->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		for (int64_t i = r0; i < r1; i++) {
			const uint8_t *mr = b->mask + i * b->stride;
			int32_t off = b->ptr[i];
			float s = 0;

			SPP_TRACE_LOAD(&b->ptr[i], 4);
			SPP_TRACE_LOAD(mr, b->stride);
			for (int64_t c = 0; c < k; c++)
				if (mr[c / 8] >> (c % 8) & 1) {
					SPP_TRACE_LOAD(&b->val[off], 4);
					SPP_TRACE_LOAD(&x[c], 4);
					s += b->val[off++] * x[c];
				}
			SPP_TRACE_STORE(&y[i], 4);
			y[i] = cpu_epi1(e, i, s);
		}
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;

		for (int64_t i = r0; i < r1; i++) {
			const uint8_t *mr = b->mask + i * b->stride;
			int32_t off = b->ptr[i];
			float *yr = y + i * n + j0;

			SPP_TRACE_LOAD(&b->ptr[i], 4);
			SPP_TRACE_STORE(yr, cw * 4);
			for (int64_t q = 0; q < cw; q++)
				yr[q] = 0;
			for (int64_t c = 0; c < k; c++) {
				if (c % 8 == 0)
					SPP_TRACE_LOAD(&mr[c / 8], 1);
				if (mr[c / 8] >> (c % 8) & 1) {
					float v = b->val[off++];
					const float *xr = x + c * n + j0;

					SPP_TRACE_LOAD(&b->val[off - 1], 4);
					SPP_TRACE_LOAD(xr, cw * 4);
					SPP_TRACE_LOAD(yr, cw * 4);
					SPP_TRACE_STORE(yr, cw * 4);
					for (int64_t q = 0; q < cw; q++)
						yr[q] += v * xr[q];
				}
			}
		}
	}
	cpu_epi_rows(e, y, r0, r1, n);
}

/* DESIGN's bitmask: a bit per element, the values in the model's dtype, int32 row offsets. */
static int bitmask_storage(const struct spp_format_ops *f, const struct spp_storage_counts *c,
			   double *bytes, struct spp_error *err)
{
	double m = (double)c->m;

	(void)f;
	(void)err;
	*bytes = m * (double)((c->k + 7) / 8) + (double)spp_value_bytes(c, c->nnz) + (m + 1) * 4;
	return 0;
}

static const int64_t *bitmask_part_lo(const struct spp_encoded *w)
{
	return ((const struct cpu_bitmask *)w->impl)->lo;
}

static void bitmask_narrow(const struct spp_encoded *w, void *impl, int p, int64_t u0,
			   int64_t u1, int64_t *const scratch[2])
{
	((struct cpu_bitmask *)impl)->lo =
		cpu_narrow_lo(bitmask_part_lo(w), w->nparts, p, u0, u1, scratch[0]);
}

static int bitmask_buffers(const struct spp_encoded *w, struct spp_trace_buffer *b)
{
	const struct cpu_bitmask *c = w->impl;
	uint64_t m = (uint64_t)w->m;

	b[0] = (struct spp_trace_buffer){c->mask, m * (uint64_t)c->stride};
	b[1] = (struct spp_trace_buffer){c->ptr, (m + 1) * 4};
	b[2] = (struct spp_trace_buffer){c->val, (uint64_t)w->nnz * 4};
	return 3;
}

/* at N = 1 the vector kernels read X in another order than the portable one */
static const struct spp_trace_ops bitmask_trace = {
	"row", sizeof(struct cpu_bitmask), bitmask_part_lo, bitmask_narrow, bitmask_buffers, NULL,
	NULL,
};

const struct spp_format_ops SPP_CPU_OPS(bitmask) = {
	.key = "bitmask",
	.colour = "#c9a227",
	.storage = bitmask_storage,
	.encode = bitmask_encode,
	.spmm = cpu_spmm,
	.part = CPU_PARTS(bitmask_part_c, cpu_bitmask_part),
	.release = bitmask_release,
	.trace = &bitmask_trace,
};
