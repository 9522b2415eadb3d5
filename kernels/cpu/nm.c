/*
 * nmN_M (nm1_4, nm2_4, nm4_8; the code takes any N <= M <= 255): groups of
 * M consecutive columns along K (K zero-padded to a multiple of M), each
 * keeping at most N non-zeros.
 *
 * Storage (what `bytes` counts): every group keeps exactly N slots, padded
 * with value 0 at position 0: M_rows*G*N fp32 values + the slots'
 * positions in their group, ceil(log2 M) bits each, packed (G = ceil(K/M)
 * groups per row): bytes = M_rows*G*N*4 + ceil(M_rows*G*N*ceil(log2 M)/8),
 * DESIGN's formula. No offsets: slot s of row i belongs to group s/N, so
 * the kernels derive every column. (A byte per position measured the same
 * speed: the kernels spread 8 packed positions to bytes with one pdep.)
 *
 * A matrix with a group holding more than N non-zeros is refused with
 * SPP_E_UNSUPPORTED and the fraction of such groups (the N:M rule and its
 * message, spp_nm_check in kernels.h).
 *
 * Layout: tile-major like csr (cpu.h's struct cpu_nm): K is cut into
 * tiles of tile_g groups and the (tile, row) segments are stored in that
 * order, which costs no storage since every segment of a tile has the
 * same length. The kernels sweep one tile over all of a part's rows
 * before the next, so that W streams in storage order and the tile's X
 * rows stay in L1 (N >= 2) or x's tile does (N = 1). Row-major storage,
 * swept in blocks of 32 rows, was measured against it on 4096 x 4096 2:4,
 * 1 thread: docs/PERFORMANCE.md.
 *
 * Partition: rows, balancing slots (every row holds G*N).
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

static void nm_release(struct spp_encoded *e)
{
	struct cpu_nm *s;

	if (!e)
		return;
	s = e->impl;
	if (s) {
		spp_buffer_free(s->val);
		spp_buffer_free(s->pos);
		free(s->lo);
	}
	cpu_release_common(e);
}

static int nm_encode_nm(int keep, int group, const struct spp_format_ops *ops,
			const struct spp_matrix *w, int threads, int64_t n,
			struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0, slots;
	uint64_t bad = 0;
	int64_t *row_cum = NULL, *slot_cum = NULL;
	struct cpu_nm *s = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "%s: threads must be >= 1, got %d", ops->key, threads);
	s = calloc(1, sizeof(*s));
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate", ops->key);
	out->ops = ops;
	out->impl = s;
	s->keep = keep;
	s->group = group;
	s->bits = cpu_nm_bits(group);
	s->m = m;
	s->groups = (k + group - 1) / group;
	slots = s->groups * keep;
	/* a tile as wide as csr's for the kept density, in whole groups */
	s->tile_g = (cpu_tile_width(k, (double)keep / group, n) + group - 1) / group;
	if (s->tile_g < 1)
		s->tile_g = 1;
	/* whole 16-slot vectors per tile, for the kernels' decode */
	if (16 % keep == 0)
		s->tile_g = (s->tile_g + 16 / keep - 1) / (16 / keep) * (16 / keep);
	row_cum = malloc((size_t)(m + 1) * sizeof(*row_cum));
	slot_cum = malloc((size_t)(m + 1) * sizeof(*slot_cum));
	s->lo = malloc((size_t)(threads + 1) * sizeof(*s->lo));
	if (!row_cum || !slot_cum || !s->lo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate the row index", ops->key);
		goto out;
	}
	row_cum[0] = slot_cum[0] = 0;
	for (int64_t i = 0; i < m; i++) {
		for (int64_t g = 0; g < s->groups; g++) {
			int cnt = 0;

			for (int64_t j = g * group; j < (g + 1) * group && j < k; j++)
				cnt += w->v[i * k + j] != 0.0f;
			bad += !spp_nm_group_ok((unsigned)cnt, keep);
			nnz += cnt;
		}
		row_cum[i + 1] = nnz;
		slot_cum[i + 1] = (i + 1) * slots;
	}
	if ((rc = spp_nm_check(keep, group, spp_nm_groups(m, k, group), bad, err)))
		goto out;
	if ((double)m * (double)slots > (double)INT64_MAX / 8) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED, "%s: matrix too large", ops->key);
		goto out;
	}
	s->val = spp_buffer_alloc((size_t)(m * slots) * sizeof(*s->val));
	s->pos = spp_buffer_alloc((size_t)((m * slots * s->bits + 7) / 8));
	if (!s->val || !s->pos) {
		rc = spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate %lld slots",
				   ops->key, (long long)(m * slots));
		goto out;
	}
	for (int64_t i = 0; i < m; i++)
		for (int64_t g = 0; g < s->groups; g++) {
			int64_t g0 = g / s->tile_g * s->tile_g, sl = cpu_nm_seg(s, i, g0) + (g - g0) * keep;

			for (int64_t j = g * group; j < (g + 1) * group && j < k; j++) {
				float v = w->v[i * k + j];

				if (v != 0.0f) {
					unsigned p = (unsigned)(j - g * group) << (sl * s->bits & 7);

					s->val[sl] = v;
					s->pos[sl * s->bits >> 3] |= (uint8_t)p;
					s->pos[(sl * s->bits >> 3) + 1] |= (uint8_t)(p >> 8);
					sl++;
				}
			}
		}
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->x_rows = cpu_x_rows(w, 1);
	out->bytes = (uint64_t)(m * slots) * 4 + (uint64_t)((m * slots * s->bits + 7) / 8);
	cpu_partition(slot_cum, m, threads, s->lo);
	rc = cpu_set_parts(out, threads, s->lo, row_cum, err);
out:
	free(row_cum);
	free(slot_cum);
	if (rc)
		nm_release(out);
	return rc;
}

/*
 * Portable: tile by tile, every row of the part, slot by slot; at N = 1
 * adding each segment's dot product to y, otherwise per 64-column chunk
 * of Y.
 */
static void nm_part_c(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n,
		      const struct spp_epi *e)
{
	const struct cpu_nm *s = w->impl;
	const int64_t keep = s->keep, group = s->group;
	int64_t r0, r1;

	if (!cpu_part_range(s->lo, p, &r0, &r1))
		return;

	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64, g0 = 0;

		do {
			int64_t g1 = cpu_nm_tile_end(s, g0), len = (g1 - g0) * keep;

			for (int64_t i = r0; i < r1; i++) {
				float *yr = y + i * n + j0;
				int64_t S0 = cpu_nm_seg(s, i, g0);

				if (g0 == 0) {
					SPP_TRACE_STORE(yr, cw * 4);
					for (int64_t q = 0; q < cw; q++)
						yr[q] = 0;
				}
				for (int64_t p = 0; p < len; p++) {
					int64_t sl = S0 + p;
					float v = s->val[sl];
					const float *xr = x + ((g0 + p / keep) * group + cpu_nm_pos(s, sl)) * n + j0;

					SPP_TRACE_LOAD(&s->val[sl], 4);
					CPU_NM_TRACE_POS(s, sl, s->bits);
					SPP_TRACE_LOAD(xr, cw * 4);
					SPP_TRACE_LOAD(yr, cw * 4);
					SPP_TRACE_STORE(yr, cw * 4);
					for (int64_t c = 0; c < cw; c++)
						yr[c] += v * xr[c];
				}
			}
			g0 = g1;
		} while (g0 < s->groups);
	}
	cpu_epi_rows(e, y, r0, r1, n);
}

/*
 * DESIGN's nmN_M: N slots of every group, values in the model's dtype and
 * positions of ceil(log2 M) bits, packed; only when the layer complies.
 */
static int nm_storage(const struct spp_format_ops *f, const struct spp_storage_counts *c,
		      double *bytes, struct spp_error *err)
{
	uint64_t g = c->groups, bits = 0;
	int rc = spp_nm_check(f->keep, f->block, g, g - c->groups_ok, err);

	if (rc)
		return rc;
	while ((1 << bits) < f->block)
		bits++;
	bits *= g * (uint64_t)f->keep;
	*bytes = (double)spp_value_bytes(c, g * (uint64_t)f->keep) + (double)((bits + 7) / 8);
	return 0;
}

static const int64_t *nm_part_lo(const struct spp_encoded *w)
{
	return ((const struct cpu_nm *)w->impl)->lo;
}

static void nm_narrow(const struct spp_encoded *w, void *impl, int p, int64_t u0, int64_t u1,
		      int64_t *const scratch[2])
{
	((struct cpu_nm *)impl)->lo = cpu_narrow_lo(nm_part_lo(w), w->nparts, p, u0, u1, scratch[0]);
}

static int nm_buffers(const struct spp_encoded *w, struct spp_trace_buffer *b)
{
	const struct cpu_nm *c = w->impl;
	uint64_t slots = (uint64_t)w->m * (uint64_t)c->groups * (uint64_t)c->keep;

	b[0] = (struct spp_trace_buffer){c->val, slots * 4};
	b[1] = (struct spp_trace_buffer){c->pos, (slots * (uint64_t)c->bits + 7) / 8 + 8};
	return 2;
}

static int64_t nm_tiles(const struct spp_encoded *w)
{
	const struct cpu_nm *c = w->impl;

	return (c->groups + c->tile_g - 1) / c->tile_g;
}

/*
 * Tile t alone: its slots start at storage slot m * g0 * N (cpu_nm_seg),
 * where the packed positions must start on a byte.
 */
static int nm_tile_view(const struct spp_encoded *w, void *impl, int64_t t, int64_t *k0,
			int64_t *kw)
{
	struct cpu_nm *c = impl;
	int64_t g0 = t * c->tile_g, g1 = cpu_nm_tile_end(c, g0), slot = c->m * g0 * c->keep;

	if (slot * c->bits % 8)
		return -1;
	c->val += slot;
	c->pos += slot * c->bits / 8;
	c->groups = g1 - g0;
	*k0 = g0 * c->group;
	*kw = w->k - *k0 < (g1 - g0) * c->group ? w->k - *k0 : (g1 - g0) * c->group;
	return 0;
}

static const struct spp_trace_ops nm_trace = {
	"row", sizeof(struct cpu_nm), nm_part_lo, nm_narrow, nm_buffers, nm_tiles, nm_tile_view,
};

#define NM_OPS(N, M, COLOUR)                                                   \
	static int nm##N##_##M##_encode(const struct spp_matrix *w, int threads, int64_t n, \
					struct spp_encoded *out,               \
					struct spp_error *err)                 \
	{                                                                      \
		return nm_encode_nm(N, M, &SPP_CPU_OPS(nm##N##_##M), w, threads, n, out, err); \
	}                                                                      \
	const struct spp_format_ops SPP_CPU_OPS(nm##N##_##M) = {               \
		.key = "nm" #N "_" #M,                                         \
		.block = M,                                                    \
		.keep = N,                                                     \
		.colour = COLOUR,                                              \
		.storage = nm_storage,                                         \
		.encode = nm##N##_##M##_encode,                                \
		.spmm = cpu_spmm,                                              \
		.part = CPU_PARTS(nm_part_c, cpu_nm_part),                     \
		.release = nm_release,                                         \
		.trace = &nm_trace,                                            \
	};

NM_OPS(1, 4, "#b07aa1")
NM_OPS(2, 4, "#ff7f9e")
NM_OPS(4, 8, "#9c755f")
