/*
 * One scan for the layers of one weight and view (static.h,
 * spp_static_share_scans): their scan memos, placed after the layers in
 * their array's block.
 */
#include "profiler/static.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct scan_key {
	const struct spp_layer *l;
	int i;
};

/* 0 when a's and b's scans read the same: the weight's bytes, type and
 * shape, the op and layout (a conv's kernels) and the view. */
static int scan_cmp(const struct spp_layer *a, const struct spp_layer *b)
{
	const struct spp_tensor *x = a->weight, *y = b->weight;

#define CMP(u, v) if ((u) != (v)) return (u) < (v) ? -1 : 1
	CMP((uintptr_t)x->data, (uintptr_t)y->data);
	CMP((uintptr_t)x->coo, (uintptr_t)y->coo);
	CMP(x->nbytes, y->nbytes);
	CMP((int)x->dtype, (int)y->dtype);
	CMP(x->ndim, y->ndim);
	CMP((int)a->op, (int)b->op);
	CMP((int)a->layout, (int)b->layout);
	for (int d = 0; d < x->ndim; d++)
		CMP(x->shape[d], y->shape[d]);
	CMP(a->view.m, b->view.m);
	CMP(a->view.k, b->view.k);
	CMP(a->view.base, b->view.base);
	CMP(a->view.row_stride, b->view.row_stride);
	CMP(a->view.inner, b->view.inner);
	CMP(a->view.inner_stride, b->view.inner_stride);
	CMP(a->view.outer_stride, b->view.outer_stride);
#undef CMP
	return 0;
}

static int by_scan(const void *pa, const void *pb)
{
	const struct scan_key *a = pa, *b = pb;
	int c = scan_cmp(a->l, b->l);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

int spp_static_share_scans(struct spp_layer **layers, int n)
{
	struct scan_key *k = malloc((size_t)(n > 0 ? n : 1) * sizeof(*k));
	size_t head = ((size_t)n * sizeof(**layers) + 63) / 64 * 64;
	struct spp_scan_memo *memo;
	struct spp_layer *grown;
	int groups = 0;

	if (!k)
		return -1;
	for (int i = 0; i < n; i++)
		k[i] = (struct scan_key){&(*layers)[i], i};
	qsort(k, (size_t)n, sizeof(*k), by_scan);
	for (int i = 1; i < n; i++) /* a group of two or more starts here */
		groups += !scan_cmp(k[i - 1].l, k[i].l) && (i == 1 || scan_cmp(k[i - 2].l, k[i - 1].l));
	if (!groups)
		return free(k), 0;
	if (!(grown = realloc(*layers, head + (size_t)groups * sizeof(*memo))))
		return free(k), -1;
	*layers = grown;
	memo = (struct spp_scan_memo *)((char *)grown + head);
	memset(memo, 0, (size_t)groups * sizeof(*memo));
	groups = 0;
	for (int i = 1; i < n; i++) { /* k[].l point into the block before it grew */
		if (scan_cmp(&grown[k[i - 1].i], &grown[k[i].i]))
			continue;
		if (i == 1 || scan_cmp(&grown[k[i - 2].i], &grown[k[i - 1].i]))
			grown[k[i - 1].i].memo = &memo[groups++];
		grown[k[i].i].memo = grown[k[i - 1].i].memo;
	}
	free(k);
	return 0;
}
