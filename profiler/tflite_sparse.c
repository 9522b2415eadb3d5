/*
 * TFLite's sparse tensor encoding (Tensor.sparsity, a TACO-like format)
 * decoded into the dense tensor: the n dimensions of the shape, and k
 * block dimensions, each a level of dim_metadata in traversal order; a
 * DENSE level stores its size, a SPARSE_CSR level the CSR pair (segments
 * per position of the level before, indices within this one) as an
 * Int32, Uint16 or Uint8 vector. The stored values follow the positions
 * of the last level. Everything is checked before a value is placed:
 * orders are permutations, blocks divide their dimensions, segments start
 * at 0, never decrease and end at the indices' length, indices increase
 * within a segment and stay below their level's size, and the positions
 * of the last level are exactly the stored values.
 */
#include "profiler/tflite.h"

#include <inttypes.h>
#include <string.h>

#define MAX_LEVELS (2 * SPP_MAX_DIMS)

struct level {
	int dim;   /* traversal_order: < n a dimension of the shape, else a block's */
	int block; /* a block level: the shape's dimension it divides */
	int sparse;
	int64_t size;
	struct spp_fb_vec seg, idx;
};

struct walk {
	struct level lv[MAX_LEVELS];
	int nl, n;
	int64_t bs[SPP_MAX_DIMS], grid[SPP_MAX_DIMS], in[SPP_MAX_DIMS];
	const struct spp_fb *fb;
	const struct spp_tensor *w;
	int es;
	const unsigned char *vals;
	unsigned char *out;
};

/* Element j of an index vector: an Int32Vector's signed, a Uint16Vector's and a
 * Uint8Vector's unsigned (TF's converter writes Uint8Vector whenever the indices fit). */
static int64_t index_at(const struct spp_fb *fb, const struct spp_fb_vec *v, uint32_t j)
{
	return v->size == 4 ? spp_fb_vec_int(fb, v, j) : (int64_t)spp_fb_vec_uint(fb, v, j);
}

static void place(struct walk *k, uint64_t pos)
{
	uint64_t off = 0;

	for (int d = 0; d < k->n; d++)
		off = off * (uint64_t)k->w->shape[d] + (uint64_t)(k->grid[d] * k->bs[d] + k->in[d]);
	memcpy(k->out + off * (uint64_t)k->es, k->vals + pos * (uint64_t)k->es, (size_t)k->es);
}

static void walk(struct walk *k, int l, uint64_t pos)
{
	const struct level *v = &k->lv[l];
	int64_t *at;

	if (l == k->nl) {
		place(k, pos);
		return;
	}
	at = v->dim < k->n ? &k->grid[v->dim] : &k->in[v->block];
	if (!v->sparse) {
		for (int64_t i = 0; i < v->size; i++) {
			*at = i;
			walk(k, l + 1, pos * (uint64_t)v->size + (uint64_t)i);
		}
		return;
	}
	for (uint64_t j = spp_fb_vec_uint(k->fb, &v->seg, (uint32_t)pos),
		      hi = spp_fb_vec_uint(k->fb, &v->seg, (uint32_t)pos + 1); j < hi; j++) {
		*at = index_at(k->fb, &v->idx, (uint32_t)j);
		walk(k, l + 1, j);
	}
}

/* A SparseIndexVector: the union's type at slot, its table at slot + 1. */
static struct spp_fb_vec index_vector(struct spp_fb *fb, const struct spp_fb_table *dm, int slot)
{
	static const int size[] = {0, 4, 2, 1}; /* Int32Vector, Uint16Vector, Uint8Vector */
	uint64_t type = spp_fb_uint(fb, dm, slot, 1, 0);
	struct spp_fb_table v = spp_fb_child(fb, dm, slot + 1);

	if (type < 1 || type > 3 || !v.pos)
		return (struct spp_fb_vec){0};
	return spp_fb_vector(fb, &v, 0, size[type]);
}

/* The CSR pair of level l after count positions: checked; count of its own in *next. */
static int check_csr(struct tfl *t, const struct spp_tensor *w, const struct level *v, int l,
		     uint64_t count, uint64_t *next)
{
	uint64_t prev = 0;

	if (!v->seg.pos || !v->idx.pos || v->seg.len != count + 1)
		return spp_tfl_fault(t, "tensor '%s': sparse level %d needs %" PRIu64 " segments "
				     "and its indices, has %u", w->name, l, count + 1, v->seg.len);
	for (uint32_t p = 0; p <= count; p++) {
		uint64_t s = spp_fb_vec_uint(&t->fb, &v->seg, p);

		if ((p == 0 && s != 0) || s < prev || s > v->idx.len || (p == count && s != v->idx.len))
			return spp_tfl_fault(t, "tensor '%s': sparse level %d: segment %u is %" PRIu64
					     " (segments start at 0, never decrease and end at "
					     "the %u indices)", w->name, l, p, s, v->idx.len);
		for (uint64_t j = prev; p && j < s; j++) {
			int64_t i = index_at(&t->fb, &v->idx, (uint32_t)j);

			if (i < 0 || i >= v->size ||
			    (j > prev && i <= index_at(&t->fb, &v->idx, (uint32_t)j - 1)))
				return spp_tfl_fault(t, "tensor '%s': sparse level %d: index %" PRId64
						     " is outside 0..%" PRId64 " or out of order",
						     w->name, l, i, v->size - 1);
		}
		prev = s;
	}
	*next = v->idx.len;
	return SPP_OK;
}

/* Levels from the traversal order, block map and dimension metadata; checked. */
static int levels(struct tfl *t, const struct spp_fb_table *sp, struct walk *k)
{
	struct spp_fb *fb = &t->fb;
	struct spp_fb_vec order = spp_fb_vector(fb, sp, 0, 4), map = spp_fb_vector(fb, sp, 1, 4);
	struct spp_fb_vec dims = spp_fb_vector(fb, sp, 2, 4);
	const char *name = k->w->name;
	unsigned seen = 0;

	k->nl = (int)order.len;
	if (order.len < (uint32_t)k->n || order.len > (uint32_t)(2 * k->n) ||
	    dims.len != order.len || map.len != order.len - (uint32_t)k->n)
		return spp_tfl_fault(t, "tensor '%s': a traversal order of %u for rank %d, with "
				     "%u block dimensions and %u levels", name, order.len, k->n,
				     map.len, dims.len);
	for (int d = 0; d < k->n; d++)
		k->bs[d] = 1;
	for (int l = 0; l < k->nl; l++) {
		struct spp_fb_table dm = spp_fb_at(fb, &dims, (uint32_t)l);
		struct level *v = &k->lv[l];
		int64_t o = spp_fb_vec_int(fb, &order, (uint32_t)l), b;

		if (o < 0 || o >= k->nl || (seen >> o & 1) || (l < k->n) != (o < k->n))
			return spp_tfl_fault(t, "tensor '%s': traversal order entry %d is %" PRId64
					     ", not a permutation", name, l, o);
		seen |= 1u << o;
		v->dim = (int)o;
		v->sparse = spp_fb_int(fb, &dm, 0, 1, 0) == 1;
		v->size = spp_fb_int(fb, &dm, 1, 4, 0);
		v->seg = index_vector(fb, &dm, 2);
		v->idx = index_vector(fb, &dm, 4);
		if (o < k->n)
			continue;
		b = spp_fb_vec_int(fb, &map, (uint32_t)(o - k->n));
		if (b < 0 || b >= k->n || v->sparse || v->size <= 0 || k->bs[b] != 1 ||
		    k->w->shape[b] % v->size)
			return spp_tfl_fault(t, "tensor '%s': block level %d (of %" PRId64 " along "
					     "dimension %" PRId64 ") does not divide the shape",
					     name, l, v->size, b);
		v->block = (int)b;
		k->bs[b] = v->size;
	}
	return fb->bad ? spp_tfl_fault(t, "not a valid FlatBuffer: %s at byte %" PRIu64, fb->bad,
				       fb->bad_at) : SPP_OK;
}

int spp_tfl_densify(struct tfl *t, const struct spp_fb_table *sp, const struct spp_tensor *w,
		    int es, const unsigned char *vals, uint64_t nvals, unsigned char *out,
		    uint64_t *index_bytes)
{
	struct walk k = {.n = w->ndim, .fb = &t->fb, .w = w, .es = es, .vals = vals, .out = out};
	uint64_t count = 1;
	int rc;

	if (w->ndim < 1)
		return spp_tfl_fault(t, "tensor '%s': a sparse scalar", w->name);
	if ((rc = levels(t, sp, &k)))
		return rc;
	*index_bytes = 0;
	for (int l = 0; l < k.nl; l++) {
		struct level *v = &k.lv[l];
		int64_t size = v->dim < k.n ? w->shape[v->dim] / k.bs[v->dim] : v->size;

		if (!v->sparse && v->size != size)
			return spp_tfl_fault(t, "tensor '%s': dense level %d has size %" PRId64
					     ", its dimension %" PRId64, w->name, l, v->size, size);
		v->size = size;
		if (v->sparse && (rc = check_csr(t, w, v, l, count, &count)))
			return rc;
		if (!v->sparse)
			count *= (uint64_t)size; /* at most numel: the levels' sizes multiply to it */
		*index_bytes += (uint64_t)v->seg.len * v->seg.size + (uint64_t)v->idx.len * v->idx.size;
	}
	if (count != nvals)
		return spp_tfl_fault(t, "tensor '%s': its sparse levels place %" PRIu64 " values, "
				     "its buffer holds %" PRIu64, w->name, count, nvals);
	walk(&k, 0, 0);
	return SPP_OK;
}
