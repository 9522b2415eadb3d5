/*
 * The layer scan of a matrix held as its non-zeros (struct spp_coo: a .mtx
 * or .smtx model): the same counts as the dense scan of static_scan.c,
 * from the entries alone, so that the work and memory follow NNZ and never
 * M x K. A 61-byte "1 2147483647 0" costs nothing here; only a kernel run
 * densifies it, after the budget allows it.
 */
#include "profiler/static_scan_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * The groups of sorted indices idx[0, n) (columns of one row, or rows of
 * one column): for each width w of spp_nm_widths those of the patterns of
 * that width that break the rule, into bad, and the fullest group, into mx.
 */
static void nm_groups(const uint32_t *idx, uint64_t n, uint64_t bad[SPP_NNM],
		      uint32_t mx[SPP_NWIDTH])
{
	for (int wi = 0; wi < SPP_NWIDTH; wi++) {
		uint32_t w = (uint32_t)spp_nm_widths[wi];

		for (uint64_t a = 0, b; a < n; a = b) {
			for (b = a + 1; b < n && idx[b] / w == idx[a] / w; b++)
				;
			mx[wi] = (uint32_t)(b - a) > mx[wi] ? (uint32_t)(b - a) : mx[wi];
			for (int p = 0; p < SPP_NNM; p++)
				if ((uint32_t)spp_nm_patterns[p].m == w)
					bad[p] += !spp_nm_group_ok((unsigned)(b - a), spp_nm_patterns[p].n);
		}
	}
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a > b) - (a < b);
}

/* Distinct values of v[0, n) (sorted here). */
static uint64_t distinct(uint32_t *v, uint64_t n)
{
	uint64_t d = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_u32);
	for (uint64_t i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

/* Rows: their counts, the zero ones, and the N:M groups along K that break
 * the rule; tmp holds nnz indices. */
static void rows_count(const struct spp_coo *c, int64_t m, struct spp_static_counts *out,
		       uint64_t bad[SPP_NNM], uint32_t *tmp)
{
	uint64_t rows = 0, rmin = UINT64_MAX;
	u128 sumsq = 0;

	for (uint64_t a = 0, b; a < c->nnz; a = b) {
		for (b = a + 1; b < c->nnz && c->row[b] == c->row[a]; b++)
			;
		uint64_t rn = b - a;

		rows++;
		sumsq += (u128)rn * rn;
		rmin = rn < rmin ? rn : rmin;
		out->row_nnz_max = rn > out->row_nnz_max ? rn : out->row_nnz_max;
		for (uint64_t e = a; e < b; e++)
			tmp[e - a] = (uint32_t)c->col[e];
		nm_groups(tmp, rn, bad, out->nm_max[SPP_AXIS_K]);
	}
	out->zero_rows = (uint64_t)m - rows;
	out->row_nnz_min = out->zero_rows ? 0 : rmin;
	out->row_nnz_sumsq = (double)sumsq;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/* The N:M groups along M: the entries in column order, each column's rows
 * grouped; 0, or -1 out of memory. */
static int cols_count(const struct spp_coo *c, struct spp_static_counts *out,
		      uint64_t bad[SPP_NNM], uint32_t *tmp)
{
	uint64_t *key = malloc((size_t)(c->nnz ? c->nnz : 1) * sizeof(*key));

	if (!key)
		return -1;
	for (uint64_t e = 0; e < c->nnz; e++)
		key[e] = (uint64_t)(uint32_t)c->col[e] << 32 | (uint32_t)c->row[e];
	qsort(key, (size_t)c->nnz, sizeof(*key), cmp_u64);
	for (uint64_t a = 0, b; a < c->nnz; a = b) {
		for (b = a; b < c->nnz && key[b] >> 32 == key[a] >> 32; b++)
			tmp[b - a] = (uint32_t)key[b];
		nm_groups(tmp, b - a, bad, out->nm_max[SPP_AXIS_M]);
	}
	free(key);
	return 0;
}

/* The provenance of the entries of the sampled rows. */
static void coo_provenance(const struct spp_layer *l, int64_t m, int64_t k,
			   struct spp_provenance_counts *out)
{
	const struct spp_coo *c = l->weight->coo;
	struct prov_part pp;

	spp_prov_setup(l, m, k, out);
	spp_prov_part_init(&pp);
	if (out->status == SPP_PROV_COUNTED) {
		for (uint64_t e = 0; e < c->nnz; e++)
			if (c->row[e] % out->row_step == 0)
				spp_prov_add(&pp, c->val[e]);
		pp.rows = (uint64_t)((m + out->row_step - 1) / out->row_step);
	}
	spp_prov_finish(&pp, out);
}

/*
 * Blocks of side bs holding a non-zero, one block row at a time (its
 * entries are contiguous); *real gets their real (unpadded) elements.
 */
static uint64_t nonzero_blocks(const struct spp_coo *c, int64_t m, int64_t k, int64_t bs,
			       uint32_t *tmp, uint64_t *real)
{
	uint64_t nzb = 0;

	*real = 0;
	for (uint64_t a = 0, b; a < c->nnz; a = b) {
		int64_t br = c->row[a] / bs;
		uint64_t rows = (uint64_t)(m - br * bs < bs ? m - br * bs : bs);

		for (b = a; b < c->nnz && c->row[b] / bs == br; b++)
			tmp[b - a] = (uint32_t)(c->col[b] / bs);
		qsort(tmp, (size_t)(b - a), sizeof(*tmp), cmp_u32);
		for (uint64_t i = 0; i < b - a; i++) {
			if (i && tmp[i] == tmp[i - 1])
				continue;
			int64_t c0 = (int64_t)tmp[i] * bs;

			nzb++;
			*real += rows * (uint64_t)(k - c0 < bs ? k - c0 : bs);
		}
	}
	return nzb;
}

int spp_scan_coo_count(const struct spp_layer *l, struct spp_static_counts *out,
		       struct spp_error *err)
{
	const struct spp_coo *c = l->weight->coo;
	const struct spp_gemm_view *v = &l->view;
	int64_t m = v->m, k = v->k;
	uint64_t bad[SPP_NNM] = {0}, bad_m[SPP_NNM] = {0}, real4 = 0;
	uint32_t *tmp;

	memset(out, 0, sizeof(*out));
	/* the loaders' layers see the matrix as it is: rows of W are rows of the file */
	if (!spp_layer_view_is_stored(l))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "tensor '%s': a matrix of non-zeros has no GEMM view but its own",
				     l->weight->name ? l->weight->name : "?");
	out->m = m;
	out->k = k;
	out->nnz = c->nnz;
	tmp = malloc((size_t)(c->nnz ? c->nnz : 1) * sizeof(*tmp));
	if (!tmp)
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for %llu entries",
				     l->weight->name ? l->weight->name : "?",
				     (unsigned long long)c->nnz);
	rows_count(c, m, out, bad, tmp);
	if (cols_count(c, out, bad_m, tmp)) {
		free(tmp);
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for %llu entries",
				     l->weight->name ? l->weight->name : "?",
				     (unsigned long long)c->nnz);
	}
	for (int i = 0; i < SPP_NNM; i++) {
		out->nm_groups[i] = spp_nm_groups(m, k, spp_nm_patterns[i].m);
		out->nm_ok[i] = out->nm_groups[i] - bad[i];
		out->nm_groups_m[i] = spp_nm_groups(k, m, spp_nm_patterns[i].m);
		out->nm_ok_m[i] = out->nm_groups_m[i] - bad_m[i];
	}
	coo_provenance(l, m, k, &out->prov);
	for (int b = 0; b < SPP_NBLOCK; b++) {
		int64_t bs = spp_block_sizes[b];
		uint64_t real;

		out->blocks[b] = (uint64_t)((m + bs - 1) / bs) * (uint64_t)((k + bs - 1) / bs);
		out->zero_blocks[b] = out->blocks[b] - nonzero_blocks(c, m, k, bs, tmp, &real);
		if (bs == 4)
			real4 = real;
	}
	out->zeros_in_zero_block4 = (uint64_t)m * (uint64_t)k - real4;
	memcpy(tmp, c->col, (size_t)c->nnz * sizeof(*tmp));
	out->zero_cols = (uint64_t)k - distinct(tmp, c->nnz);
	free(tmp);
	return SPP_OK;
}
