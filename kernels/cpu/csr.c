/*
 * csr: compressed sparse rows, split along K into tiles.
 *
 * Storage (what `bytes` counts): nnz fp32 values + nnz uint16 column
 * indices relative to the tile's first column + (tiles*M + 1) int32
 * segment offsets. The non-zeros of row i in K tile t form segment
 * (t, i) = [ptr[t*M+i], ptr[t*M+i+1]); segments are stored in (tile, row)
 * order. bytes = nnz*(4+2) + (tiles*M + 1)*4. Tiles are at most 65536
 * columns wide so that the 16-bit indices always hold; they cut W's bytes
 * by a quarter, which matters at N = 1 where CSR streams W from memory.
 *
 * Why: at N >= 2 the cost is fetching the X row of each non-zero, so the
 * kernels sweep one K tile (cpu_tile_width columns) over all rows before
 * the next, keeping that tile's X rows in L1, and W streams in storage
 * order. (Row-major storage with per-tile offsets was measured: it helps
 * N = 1 little and costs N = 64 a third, the tile sweep then reading W
 * from M places at once.) At N = 1 the kernels sweep the same order and
 * add each segment's dot product to y.
 *
 * Partition: rows, balancing non-zeros; a part runs every tile of its rows.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

static void csr_release(struct spp_encoded *e)
{
	struct cpu_csr *c;

	if (!e)
		return;
	c = e->impl;
	if (c) {
		spp_buffer_free(c->ptr);
		spp_buffer_free(c->col);
		spp_buffer_free(c->val);
		free(c->lo);
	}
	cpu_release_common(e);
}

static int csr_encode(const struct spp_matrix *w, int threads, int64_t n,
		      struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0, cursor = 0;
	int64_t *row_cum = NULL;
	struct cpu_csr *c = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "csr: threads must be >= 1, got %d", threads);
	row_cum = cpu_row_cum(w);
	c = calloc(1, sizeof(*c));
	if (!row_cum || !c) {
		rc = spp_error_set(err, SPP_E_NOMEM, "csr: cannot allocate the row index");
		goto out;
	}
	out->ops = &SPP_CPU_OPS(csr);
	out->impl = c;
	nnz = row_cum[m];
	if (nnz > INT32_MAX) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED,
				   "csr: %lld non-zeros exceed the int32 offsets", (long long)nnz);
		goto out;
	}
	c->tile_w = cpu_tile_width(k, m * k > 0 ? (double)nnz / (double)(m * k) : 0, n);
	if (c->tile_w > 65536)
		c->tile_w = 65536;
	c->tiles = k > 0 ? (k + c->tile_w - 1) / c->tile_w : 1;
	c->ptr = spp_buffer_alloc((size_t)(c->tiles * m + 1) * sizeof(*c->ptr));
	c->col = spp_buffer_alloc((size_t)nnz * sizeof(*c->col));
	c->val = spp_buffer_alloc((size_t)nnz * sizeof(*c->val));
	c->lo = malloc((size_t)(threads + 1) * sizeof(*c->lo));
	if (!c->ptr || !c->col || !c->val || !c->lo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "csr: cannot allocate %lld non-zeros", (long long)nnz);
		goto out;
	}
	for (int64_t t = 0; t < c->tiles; t++) {
		int64_t k0 = t * c->tile_w, k1 = k0 + c->tile_w < k ? k0 + c->tile_w : k;

		for (int64_t i = 0; i < m; i++) {
			c->ptr[t * m + i] = (int32_t)cursor;
			for (int64_t j = k0; j < k1; j++) {
				float v = w->v[i * k + j];

				if (v != 0.0f) {
					c->col[cursor] = (uint16_t)(j - k0);
					c->val[cursor] = v;
					cursor++;
				}
			}
		}
	}
	c->ptr[c->tiles * m] = (int32_t)cursor;
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->x_rows = cpu_x_rows(w, 1);
	out->bytes = (uint64_t)nnz * 6 + (uint64_t)(c->tiles * m + 1) * 4;
	cpu_partition(row_cum, m, threads, c->lo);
	rc = cpu_set_parts(out, threads, c->lo, row_cum, err);
out:
	free(row_cum);
	if (rc)
		csr_release(out);
	return rc;
}

/*
 * The portable kernel, in the order of the vector kernels: tile by tile,
 * every row of the part; at N >= 2 per 64-column chunk of Y.
 */
static void csr_part_c(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n,
		       const struct spp_epi *e)
{
	const struct cpu_csr *c = w->impl;
	int64_t m = w->m, r0, r1;

	if (!cpu_part_range(c->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		for (int64_t t = 0; t < c->tiles; t++)
			for (int64_t i = r0; i < r1; i++) {
				float s = 0;

				SPP_TRACE_LOAD(&c->ptr[t * m + i], 8);
				for (int32_t j = c->ptr[t * m + i]; j < c->ptr[t * m + i + 1]; j++) {
					SPP_TRACE_LOAD(&c->val[j], 4);
					SPP_TRACE_LOAD(&c->col[j], 2);
					SPP_TRACE_LOAD(&x[t * c->tile_w + c->col[j]], 4);
					s += c->val[j] * x[t * c->tile_w + c->col[j]];
				}
				if (t)
					SPP_TRACE_LOAD(&y[i], 4);
				SPP_TRACE_STORE(&y[i], 4);
				y[i] = t == 0 ? s : y[i] + s;
			}
		cpu_epi_rows(e, y, r0, r1, n);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;

		for (int64_t t = 0; t < c->tiles; t++)
			for (int64_t i = r0; i < r1; i++) {
				float *yr = y + i * n + j0;

				if (t == 0) {
					SPP_TRACE_STORE(yr, cw * 4);
					for (int64_t q = 0; q < cw; q++)
						yr[q] = 0;
				}
				SPP_TRACE_LOAD(&c->ptr[t * m + i], 8);
				for (int32_t j = c->ptr[t * m + i]; j < c->ptr[t * m + i + 1]; j++) {
					float v = c->val[j];
					const float *xr = x + (t * c->tile_w + c->col[j]) * n + j0;

					SPP_TRACE_LOAD(&c->val[j], 4);
					SPP_TRACE_LOAD(&c->col[j], 2);
					SPP_TRACE_LOAD(xr, cw * 4);
					SPP_TRACE_LOAD(yr, cw * 4);
					SPP_TRACE_STORE(yr, cw * 4);
					for (int64_t q = 0; q < cw; q++)
						yr[q] += v * xr[q];
				}
			}
	}
	cpu_epi_rows(e, y, r0, r1, n);
}

/* DESIGN's csr: values in the model's dtype, int32 columns and row offsets. */
static int csr_storage(const struct spp_format_ops *f, const struct spp_storage_counts *c,
		       double *bytes, struct spp_error *err)
{
	(void)f;
	(void)err;
	*bytes = (double)spp_value_bytes(c, c->nnz) + (double)c->nnz * 4 + ((double)c->m + 1) * 4;
	return 0;
}

static const int64_t *csr_part_lo(const struct spp_encoded *w)
{
	return ((const struct cpu_csr *)w->impl)->lo;
}

static void csr_narrow(const struct spp_encoded *w, void *impl, int p, int64_t u0, int64_t u1,
		       int64_t *const scratch[2])
{
	((struct cpu_csr *)impl)->lo = cpu_narrow_lo(csr_part_lo(w), w->nparts, p, u0, u1, scratch[0]);
}

static int csr_buffers(const struct spp_encoded *w, struct spp_trace_buffer *b)
{
	const struct cpu_csr *c = w->impl;
	uint64_t nnz = (uint64_t)w->nnz;

	b[0] = (struct spp_trace_buffer){c->ptr, ((uint64_t)c->tiles * (uint64_t)w->m + 1) * 4};
	b[1] = (struct spp_trace_buffer){c->col, nnz * 2};
	b[2] = (struct spp_trace_buffer){c->val, nnz * 4};
	return 3;
}

static int64_t csr_tiles(const struct spp_encoded *w)
{
	return ((const struct cpu_csr *)w->impl)->tiles;
}

/* Tile t alone: its segment offsets (absolute in col and val) as the only tile's. */
static int csr_tile_view(const struct spp_encoded *w, void *impl, int64_t t, int64_t *k0,
			 int64_t *kw)
{
	struct cpu_csr *c = impl;

	c->ptr += t * w->m;
	c->tiles = 1;
	*k0 = t * c->tile_w;
	*kw = w->k - *k0 < c->tile_w ? w->k - *k0 : c->tile_w;
	return 0;
}

static const struct spp_trace_ops csr_trace = {
	"row", sizeof(struct cpu_csr), csr_part_lo, csr_narrow, csr_buffers, csr_tiles, csr_tile_view,
};

const struct spp_format_ops SPP_CPU_OPS(csr) = {
	.key = "csr",
	.colour = "#4e79a7",
	.storage = csr_storage,
	.encode = csr_encode,
	.spmm = cpu_spmm,
	.part = CPU_PARTS(csr_part_c, cpu_csr_part),
	.release = csr_release,
	.trace = &csr_trace,
};
