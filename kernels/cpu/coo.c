/*
 * coo: (row, column, value) triplets sorted by row, then column.
 *
 * Storage (what `bytes` counts): nnz * (4 value + 4 row + 4 column) =
 * nnz*(4+8). The kernels find each row's run of triplets by comparing row
 * indices, so a row's product stays in registers like csr's, without the
 * row offsets (and without K tiles: coo is the untiled baseline).
 *
 * Partition: at row starts, balancing non-zeros; a part also zeroes the
 * empty rows of its row range.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

static void coo_release(struct spp_encoded *e)
{
	struct cpu_coo *c;

	if (!e)
		return;
	c = e->impl;
	if (c) {
		spp_buffer_free(c->row);
		spp_buffer_free(c->col);
		spp_buffer_free(c->val);
		free(c->lo);
		free(c->rlo);
	}
	cpu_release_common(e);
}

static int coo_encode(const struct spp_matrix *w, int threads, int64_t n,
		      struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0, z = 0;
	int64_t *row_cum = NULL;
	struct cpu_coo *c = NULL;
	int rc = 0;

	(void)n; /* one layout at every N */
	memset(out, 0, sizeof(*out));
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "coo: threads must be >= 1, got %d", threads);
	row_cum = cpu_row_cum(w);
	c = calloc(1, sizeof(*c));
	if (!row_cum || !c) {
		rc = spp_error_set(err, SPP_E_NOMEM, "coo: cannot allocate the row index");
		goto out;
	}
	out->ops = &SPP_CPU_OPS(coo);
	out->impl = c;
	nnz = row_cum[m];
	if (nnz > INT32_MAX || m > INT32_MAX) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED,
				   "coo: %lld non-zeros exceed the int32 indices", (long long)nnz);
		goto out;
	}
	c->row = spp_buffer_alloc((size_t)nnz * sizeof(*c->row));
	c->col = spp_buffer_alloc((size_t)nnz * sizeof(*c->col));
	c->val = spp_buffer_alloc((size_t)nnz * sizeof(*c->val));
	c->lo = malloc((size_t)(threads + 1) * sizeof(*c->lo));
	c->rlo = malloc((size_t)(threads + 1) * sizeof(*c->rlo));
	if (!c->row || !c->col || !c->val || !c->lo || !c->rlo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "coo: cannot allocate %lld non-zeros", (long long)nnz);
		goto out;
	}
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++) {
			float v = w->v[i * k + j];

			if (v != 0.0f) {
				c->row[z] = (int32_t)i;
				c->col[z] = (int32_t)j;
				c->val[z] = v;
				z++;
			}
		}
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->x_rows = cpu_x_rows(w, 1);
	out->bytes = (uint64_t)nnz * 12;
	cpu_partition(row_cum, m, threads, c->rlo);
	for (int p = 0; p <= threads; p++)
		c->lo[p] = row_cum[c->rlo[p]];
	rc = cpu_set_parts(out, threads, c->rlo, row_cum, err);
out:
	free(row_cum);
	if (rc)
		coo_release(out);
	return rc;
}

/* Portable: zero the part's rows, then per 64-column chunk every triplet. */
static void coo_part_c(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n,
		       const struct spp_epi *e)
{
	const struct cpu_coo *c = w->impl;
	int64_t z0, z1, r0, r1;

	if (!cpu_coo_range(c, p, &z0, &z1, &r0, &r1))
		return;

	if (r1 > r0)
		SPP_TRACE_STORE(y + r0 * n, (r1 - r0) * n * 4);
	for (int64_t i = r0 * n; i < r1 * n; i++)
		y[i] = 0;
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;

		for (int64_t z = z0; z < z1; z++) {
			float v = c->val[z];
			float *yr = y + (int64_t)c->row[z] * n + j0;
			const float *xr = x + (int64_t)c->col[z] * n + j0;

			SPP_TRACE_LOAD(&c->val[z], 4);
			SPP_TRACE_LOAD(&c->row[z], 4);
			SPP_TRACE_LOAD(&c->col[z], 4);
			SPP_TRACE_LOAD(xr, cw * 4);
			SPP_TRACE_LOAD(yr, cw * 4);
			SPP_TRACE_STORE(yr, cw * 4);
			for (int64_t q = 0; q < cw; q++)
				yr[q] += v * xr[q];
		}
	}
	cpu_epi_rows(e, y, r0, r1, n);
}

/* DESIGN's coo: values in the model's dtype, int32 rows and columns. */
static int coo_storage(const struct spp_format_ops *f, const struct spp_storage_counts *c,
		       double *bytes, struct spp_error *err)
{
	(void)f;
	(void)err;
	*bytes = (double)spp_value_bytes(c, c->nnz) + (double)c->nnz * 8;
	return 0;
}

/* The row units of the parts (lo is in non-zeros). */
static const int64_t *coo_part_lo(const struct spp_encoded *w)
{
	return ((const struct cpu_coo *)w->impl)->rlo;
}

/* First non-zero of part p whose row is >= r. */
static int64_t coo_first(const struct cpu_coo *c, int p, int64_t r)
{
	int64_t a = c->lo[p], b = c->lo[p + 1];

	while (a < b) {
		int64_t mid = a + (b - a) / 2;

		if (c->row[mid] < r)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Both partitions narrowed: the rows, and the non-zeros of those rows. */
static void coo_narrow(const struct spp_encoded *w, void *impl, int p, int64_t u0, int64_t u1,
		       int64_t *const scratch[2])
{
	const struct cpu_coo *c = w->impl;
	struct cpu_coo *n = impl;

	n->rlo = cpu_narrow_lo(c->rlo, w->nparts, p, u0, u1, scratch[0]);
	n->lo = cpu_narrow_lo(c->lo, w->nparts, p, coo_first(c, p, u0), coo_first(c, p, u1),
			      scratch[1]);
}

static int coo_buffers(const struct spp_encoded *w, struct spp_trace_buffer *b)
{
	const struct cpu_coo *c = w->impl;
	uint64_t nnz = (uint64_t)w->nnz;

	b[0] = (struct spp_trace_buffer){c->row, nnz * 4};
	b[1] = (struct spp_trace_buffer){c->col, nnz * 4};
	b[2] = (struct spp_trace_buffer){c->val, nnz * 4};
	return 3;
}

static const struct spp_trace_ops coo_trace = {
	"row", sizeof(struct cpu_coo), coo_part_lo, coo_narrow, coo_buffers, NULL, NULL,
};

const struct spp_format_ops SPP_CPU_OPS(coo) = {
	.key = "coo",
	.colour = "#f28e2b",
	.storage = coo_storage,
	.encode = coo_encode,
	.spmm = cpu_spmm,
	.part = CPU_PARTS(coo_part_c, cpu_coo_part),
	.release = coo_release,
	.trace = &coo_trace,
};
