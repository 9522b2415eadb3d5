/*
 * Pruning masks folded into the weights they mask (model.h,
 * spp_model_fold_masks): torch.nn.utils.prune keeps "<stem>_orig" and
 * "<stem>_mask" and computes "<stem>" = orig x mask on the fly; other
 * tools save "<stem>_mask" beside "<stem>". The layer is the effective
 * weight: the original's values where the mask is non-zero, zero
 * elsewhere, in the original's dtype (a copy the model owns).
 */
#include "profiler/loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK_SUFFIX "_mask"
#define ORIG_SUFFIX "_orig"

static struct spp_tensor *named(struct spp_model *m, int n, const char *stem, const char *suffix)
{
	int i = spp_model_find(m, n, stem, strlen(stem), suffix);

	return i >= 0 ? &m->tensors[i] : NULL;
}

/* Whether element i of t (whole bytes a value, little-endian) is zero. */
static int zero_at(const struct spp_tensor *t, const struct spp_dtype_info *d, uint64_t i)
{
	uint64_t v = 0;
	int bytes = d->bits / 8;

	for (int b = bytes - 1; b >= 0; b--)
		v = v << 8 | t->data[i * (uint64_t)bytes + (uint64_t)b];
	return (v & d->zero_mask) == 0;
}

/* A tensor the fold can read: whole-byte values with a zero test, all its bytes there. */
static int foldable(const struct spp_tensor *t, const struct spp_dtype_info *d)
{
	return d && d->has_zero && d->bits >= 8 && d->bits % 8 == 0 && !t->coo && !t->nnz_only &&
	       t->data && t->nbytes == t->numel * (uint64_t)(d->bits / 8);
}

static int same_shape(const struct spp_tensor *a, const struct spp_tensor *b)
{
	if (a->ndim != b->ndim)
		return 0;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

/* The effective weight of w under mask into a buffer the model owns. */
static int apply(struct spp_model *m, const struct spp_tensor *w, const struct spp_tensor *mask,
		 const unsigned char **out, struct spp_error *err)
{
	const struct spp_dtype_info *dw = spp_dtype_info(w->dtype), *dm = spp_dtype_info(mask->dtype);
	unsigned char *buf;
	int rc, bytes;

	if (!foldable(w, dw) || !foldable(mask, dm))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "'%s': cannot apply the pruning mask '%s' (%s) to '%s' (%s): "
				     "only whole-byte dtypes with a zero test fold",
				     m->path, mask->name, spp_dtype_name(mask->dtype), w->name,
				     spp_dtype_name(w->dtype));
	if (!same_shape(w, mask))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': the pruning mask '%s' is not the shape of '%s'", m->path,
				     mask->name, w->name);
	bytes = dw->bits / 8;
	if ((rc = spp_model_charge(m, w->nbytes, m->path, "a weight with its pruning mask applied",
				   err)))
		return rc;
	buf = malloc(w->nbytes ? (size_t)w->nbytes : 1);
	if (!buf)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory applying '%s'", m->path,
				     mask->name);
	memcpy(buf, w->data, (size_t)w->nbytes);
	for (uint64_t i = 0; i < w->numel; i++)
		if (zero_at(mask, dm, i))
			memset(buf + i * (uint64_t)bytes, 0, (size_t)bytes);
	if ((rc = spp_model_own(m, buf, err)))
		return rc;
	*out = buf;
	return SPP_OK;
}

static int fold(struct spp_model *m, int n, int *from, struct spp_error *err);

/*
 * The effective weights, appended as [n, ntensors) with their originals at
 * from[], moved to just after their originals, so that layers keep the
 * file's order (a pruned fc1 came after an unpruned head). Nothing holds
 * tensor indices yet: graphs, whose descriptors do, fold no masks.
 */
static int keep_file_order(struct spp_model *m, int n, const int *from, struct spp_error *err)
{
	int added = m->ntensors - n, k = 0;
	struct spp_tensor *t;

	if (added <= 0)
		return SPP_OK;
	if (!(t = malloc((size_t)m->ntensors * sizeof(*t))))
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
	for (int i = 0; i < n; i++) {
		t[k++] = m->tensors[i];
		for (int a = 0; a < added; a++)
			if (from[a] == i)
				t[k++] = m->tensors[n + a];
	}
	memcpy(m->tensors, t, (size_t)m->ntensors * sizeof(*t));
	free(t);
	return SPP_OK;
}

int spp_model_fold_masks(struct spp_model *m, struct spp_error *err)
{
	int n = m->ntensors, rc, *from;

	if (m->nlayer_descs > 0)
		return SPP_OK; /* a graph names its own weights */
	/* at most one effective weight per mask: n / 2 */
	if (!(from = malloc((size_t)(n / 2 + 1) * sizeof(*from))))
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
	rc = fold(m, n, from, err);
	if (!rc)
		rc = keep_file_order(m, n, from, err);
	free(from);
	return rc;
}

/* Fold every mask of the n tensors; from[a]: the original of effective weight n + a. */
static int fold(struct spp_model *m, int n, int *from, struct spp_error *err)
{
	int rc;

	for (int i = 0; i < n; i++) {
		const char *name = m->tensors[i].name;
		size_t len = name ? strlen(name) : 0, sl = len - strlen(MASK_SUFFIX);
		struct spp_tensor *orig, *w;
		char *stem;

		if (len <= strlen(MASK_SUFFIX) || strcmp(name + sl, MASK_SUFFIX) != 0)
			continue;
		if (!(stem = strndup(name, sl)))
			return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
		orig = named(m, n, stem, ORIG_SUFFIX);
		w = orig ? NULL : named(m, n, stem, "");
		if (!orig && !w) {
			free(stem);
			continue; /* a tensor that only ends in "_mask" */
		}
		if (w) {
			/* the mask beside its weight: the weight becomes the effective one */
			free(stem);
			if ((rc = apply(m, w, &m->tensors[i], &w->data, err)))
				return rc;
			w->offset = 0;
			w->mask = m->tensors[i].name;
			m->tensors[i].folded = 1;
			continue;
		}
		{
			struct spp_tensor e = *orig;

			e.name = stem;
			e.offset = 0;
			e.mask = m->tensors[i].name;
			e.mask_of = orig->name;
			if ((rc = apply(m, orig, &m->tensors[i], &e.data, err))) {
				free(stem);
				return rc;
			}
			/* the array may move: take the indices' tensors afterwards */
			int oi = (int)(orig - m->tensors);

			from[m->ntensors - n] = oi;
			if ((rc = spp_model_add_tensor(m, &e, m->path, err)))
				return rc;
			m->tensors[oi].folded = 1;
			m->tensors[i].folded = 1;
		}
	}
	return SPP_OK;
}
