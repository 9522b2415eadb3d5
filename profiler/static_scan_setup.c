/*
 * The cold half of the layer scan (static_scan.c): the zero test of a
 * dtype, the check and walk of a layer's GEMM view, the cut into work items
 * and the sum of the threads' partial counts, each run once per tensor,
 * layer or thread, never per element.
 */
#include "profiler/static_scan_internal.h"

#include <omp.h>

/* The zero test of t's dtype: its mask, or the block layout of Q8_0 / Q4_0. */
int spp_scan_elems_init(const struct spp_tensor *t, struct elems *e,
			struct spp_error *err)
{
	const struct spp_dtype_info *d = spp_dtype_info(t->dtype);
	uint64_t need;

	e->quant = SPP_DTYPE_COUNT;
	e->block_bytes = 0;
	if (d && (t->dtype == SPP_DTYPE_Q8_0 || t->dtype == SPP_DTYPE_Q4_0)) {
		e->quant = t->dtype;
		e->block_bytes = d->block_bytes;
	} else if (d && d->bits == 0) {
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "tensor '%s': %s weights have no zero test",
				     t->name ? t->name : "?", d->name);
	} else if (!d || (d->bits != 4 && d->bits != 6 && d->bits % 8) || d->bits > 64) {
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "tensor '%s': dtype %d has no zero test",
				     t->name ? t->name : "?", (int)t->dtype);
	}
	if (spp_dtype_nbytes(t->dtype, t->numel, &need) != 0 || need > t->nbytes ||
	    (need && !t->data))
		return spp_error_set(err, SPP_E_FORMAT,
				     "tensor '%s': %llu bytes of data for %llu %s elements",
				     t->name ? t->name : "?",
				     (unsigned long long)t->nbytes,
				     (unsigned long long)t->numel, d->name);
	e->data = t->data;
	e->bits = d->bits;
	e->zm = d->zero_mask;
	e->never_zero = !d->has_zero;
	return SPP_OK;
}

/* Check the view stays inside the tensor, so the scan never reads past it. */
int spp_scan_view_check(const struct spp_layer *l, struct spp_error *err)
{
	const struct spp_gemm_view *v = &l->view;
	const char *name = l->weight->name ? l->weight->name : "?";
	u128 last;

	if (v->m < 0 || v->k < 0 || v->row_stride < 0 || v->inner <= 0 ||
	    v->inner_stride < 0 || v->outer_stride < 0)
		return spp_error_set(err, SPP_E_USAGE,
				     "tensor '%s': GEMM view has a negative size or stride", name);
	if (v->m == 0 || v->k == 0)
		return SPP_OK;
	/* the largest index in a row is at its last element or at the end of
	 * the last full run before it */
	last = (u128)((v->k - 1) / v->inner) * (u128)v->outer_stride +
	       (u128)((v->k - 1) % v->inner) * (u128)v->inner_stride;
	if (v->k > v->inner) {
		u128 full = (u128)((v->k - 1) / v->inner - 1) * (u128)v->outer_stride +
			    (u128)(v->inner - 1) * (u128)v->inner_stride;
		if (full > last)
			last = full;
	}
	last += (u128)v->base + (u128)(v->m - 1) * (u128)v->row_stride;
	if (last >= l->weight->numel)
		return spp_error_set(err, SPP_E_USAGE,
				     "tensor '%s': GEMM view reaches element %llu of %llu", name,
				     (unsigned long long)last,
				     (unsigned long long)l->weight->numel);
	return SPP_OK;
}

/* The view's sizes, its column groups and whether each row is one strided run. */
void spp_scan_view_init(struct view_scan *s, const struct spp_layer *l)
{
	const struct spp_gemm_view *v = &l->view;

	s->l = l;
	s->v = v;
	s->prov_step = 0;
	s->m = v->m;
	s->k = v->k;
	s->kp = (v->k + 15) / 16 * 16;
	for (int b = 0; b < SPP_NBLOCK; b++)
		s->g[b] = (v->k + spp_block_sizes[b] - 1) / spp_block_sizes[b];
	/* one strided run per row: inner covers K, or runs of one element, or
	 * runs that continue each other */
	s->single_run = 1;
	if (v->inner >= v->k)
		s->run_stride = v->inner_stride;
	else if (v->inner == 1)
		s->run_stride = v->outer_stride;
	else if (v->inner * v->inner_stride == v->outer_stride)
		s->run_stride = v->inner_stride;
	else
		s->single_run = 0;
	s->rows_disjoint =
		v->row_stride >= v->k &&
		((s->single_run && s->run_stride == 1) ||
		 (v->outer_stride == 1 && v->k % v->inner == 0 &&
		  v->inner_stride == v->k / v->inner));
}

/* The layer's counts: the threads' partial sums, and its group and block totals. */
void spp_scan_counts_finish(const struct view_scan *s, const struct part *parts,
			    int nt, struct spp_static_counts *out)
{
	u128 sumsq = 0;
	struct prov_part prov;

	spp_prov_part_init(&prov);
	out->row_nnz_min = UINT64_MAX;
	for (int t = 0; t < nt; t++) {
		const struct part *p = &parts[t];

		out->nnz += p->nnz;
		sumsq += p->sumsq;
		if (p->rmin < out->row_nnz_min)
			out->row_nnz_min = p->rmin;
		if (p->rmax > out->row_nnz_max)
			out->row_nnz_max = p->rmax;
		out->zero_rows += p->zero_rows;
		out->zeros_in_zero_block4 += p->zin4;
		for (int i = 0; i < SPP_NNM; i++) {
			out->nm_ok[i] += p->nm_ok[i];
			out->nm_ok_m[i] += p->nm_ok_m[i];
		}
		for (int a = 0; a < SPP_NAXIS; a++)
			for (int w = 0; w < SPP_NWIDTH; w++)
				if (p->nm_max[a][w] > out->nm_max[a][w])
					out->nm_max[a][w] = p->nm_max[a][w];
		for (int b = 0; b < SPP_NBLOCK; b++)
			out->zero_blocks[b] += p->zb[b];
		spp_prov_merge(&prov, &p->prov);
	}
	spp_prov_finish(&prov, &out->prov);
	if (s->m == 0)
		out->row_nnz_min = 0;
	out->row_nnz_sumsq = (double)sumsq;
	for (int i = 0; i < SPP_NNM; i++) {
		out->nm_groups[i] = spp_nm_groups(s->m, s->k, spp_nm_patterns[i].m);
		out->nm_groups_m[i] = spp_nm_groups(s->k, s->m, spp_nm_patterns[i].m);
	}
	for (int b = 0; b < SPP_NBLOCK; b++) {
		int64_t bs = spp_block_sizes[b];
		out->blocks[b] = (uint64_t)((s->m + bs - 1) / bs) * (uint64_t)s->g[b];
	}
}

/* Work items of whole 16-row units: ITEM_BYTES each, at least 4 per thread. */
int spp_scan_plan(const struct view_scan *s, int64_t *per_item, int64_t *items)
{
	int64_t units = (s->m + UNIT_ROWS - 1) / UNIT_ROWS;
	uint64_t row_bytes;
	int nt;

	if (s->el.block_bytes)
		row_bytes = ((uint64_t)s->k + QBLOCK - 1) / QBLOCK * (uint64_t)s->el.block_bytes;
	else
		row_bytes = ((uint64_t)s->k * (uint64_t)s->el.bits + 7) / 8;
	*per_item = (int64_t)(ITEM_BYTES / (UNIT_ROWS * row_bytes));
	nt = omp_get_max_threads();
	if (*per_item > units / (4 * nt))
		*per_item = units / (4 * nt); /* enough items to balance */
	if (*per_item < 1)
		*per_item = 1;
	*items = (units + *per_item - 1) / *per_item;
	if (nt > *items)
		nt = (int)*items;
	return nt;
}
