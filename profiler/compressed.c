/*
 * compressed-tensors checkpoints (llm-compressor's sparse formats). A sparse
 * weight W is stored as "<P>.compressed" (the kept values in row-major
 * order), "<P>.bitmask" (U8 [rows, ceil(cols / 8)], one bit per element,
 * little bit order along each row: numpy.packbits(axis=-1,
 * bitorder="little")) and "<P>.shape" (the dense shape, integers), where
 *   sparse-bitmask:    P = W ("x.weight"), values 1-D, plus "<P>.row_offsets";
 *   sparse-24-bitmask: P = W less ".weight" ("x"), values 2-D [rows, cols / 2]
 *                      (two kept per group of four, zeros among them kept),
 *                      shape as a column [ndim, 1], no row offsets.
 * The weight is decoded back into W (a copy the model owns) and its parts
 * folded; the file's own bytes for it are kept for the report beside
 * spprof's formulas.
 */
#include "profiler/loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const part_names[] = {".compressed", ".bitmask", ".shape", ".row_offsets"};
enum { P_VALUES, P_BITMASK, P_SHAPE, P_OFFSETS, NPART };

/* One row per format; the first whose parts are present is taken. */
static const struct ct_format {
	const char *name;
	const char *weight_suffix; /* W = P + this */
	int values_ndim;	   /* 1 flat, 2 [rows, cols / 2] */
	int has_offsets;
} formats[] = {
	{"sparse-bitmask", "", 1, 1},
	{"sparse-24-bitmask", ".weight", 2, 0},
};

static int64_t int_at(const struct spp_tensor *t, uint64_t i)
{
	int w = t->dtype == SPP_DTYPE_I64 ? 8 : 4;
	uint64_t v = 0;

	for (int b = w - 1; b >= 0; b--)
		v = v << 8 | t->data[i * (uint64_t)w + (uint64_t)b];
	return w == 8 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
}

static int bad(const struct spp_model *m, const char *stem, size_t sl, const char *what,
	       struct spp_error *err)
{
	return spp_error_set(err, SPP_E_FORMAT, "'%s': compressed tensor '%.*s': %s", m->path,
			     (int)(sl > 200 ? 200 : sl), stem, what);
}

/* The dense shape of part P_SHAPE into x; its element count checked. */
static int dense_shape(const struct spp_model *m, const struct spp_tensor *s, struct spp_tensor *x,
		       const char *stem, size_t sl, struct spp_error *err)
{
	if ((s->dtype != SPP_DTYPE_I64 && s->dtype != SPP_DTYPE_I32) ||
	    (s->ndim != 1 && !(s->ndim == 2 && s->shape[1] == 1)) ||
	    s->numel < 1 || s->numel > SPP_MAX_DIMS || !s->data ||
	    s->nbytes < s->numel * (s->dtype == SPP_DTYPE_I64 ? 8u : 4u))
		return bad(m, stem, sl, ".shape is not 1 to 8 integers", err);
	x->ndim = (int)s->numel;
	x->numel = 1;
	for (int d = 0; d < x->ndim; d++) {
		int64_t v = int_at(s, (uint64_t)d);

		if (v < 0 || v > (INT64_C(1) << 40) || (x->numel *= (uint64_t)v) > (UINT64_C(1) << 50))
			return bad(m, stem, sl, ".shape holds a dimension out of range", err);
		x->shape[d] = v;
	}
	return SPP_OK;
}

/* W from its parts p[] in format f into x (data owned by m). */
static int decode(struct spp_model *m, const struct ct_format *f, const int p[NPART],
		  struct spp_tensor *x, const char *stem, size_t sl, struct spp_error *err)
{
	const struct spp_tensor *v = &m->tensors[p[P_VALUES]], *b = &m->tensors[p[P_BITMASK]];
	const struct spp_dtype_info *d = spp_dtype_info(v->dtype);
	uint64_t cols, rows, stride, next = 0;
	unsigned char *out;
	int w, rc;

	if ((rc = dense_shape(m, &m->tensors[p[P_SHAPE]], x, stem, sl, err)))
		return rc;
	if (!d || d->bits < 8 || d->bits % 8 || v->ndim != f->values_ndim || (v->numel && !v->data))
		return bad(m, stem, sl,
			   f->values_ndim == 1 ? ".compressed is not a 1-D tensor of whole-byte values"
					       : ".compressed is not a 2-D tensor of whole-byte values",
			   err);
	w = d->bits / 8;
	cols = (uint64_t)x->shape[x->ndim - 1];
	rows = cols ? x->numel / cols : 0;
	if (f->values_ndim == 2 && (x->ndim != 2 || (uint64_t)v->shape[0] != rows ||
				    (uint64_t)v->shape[1] * 2 != cols))
		return bad(m, stem, sl, ".compressed is not [rows, cols / 2] of a 2-D shape", err);
	stride = (cols + 7) / 8;
	if ((b->dtype != SPP_DTYPE_U8 && b->dtype != SPP_DTYPE_I8) || b->numel != rows * stride ||
	    (b->numel && !b->data))
		return bad(m, stem, sl, ".bitmask is not U8 [rows, ceil(cols / 8)] of the shape", err);
	if ((rc = spp_model_charge(m, x->numel * (uint64_t)w, m->path, "a decompressed weight", err)))
		return rc;
	out = calloc(x->numel ? (size_t)x->numel : 1, (size_t)w);
	if (!out)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
	if ((rc = spp_model_own(m, out, err)))
		return rc;
	for (uint64_t r = 0; r < rows; r++)
		for (uint64_t c = 0; c < cols; c++) {
			if (!((b->data[r * stride + c / 8] >> (c % 8)) & 1))
				continue;
			if (next == v->numel)
				return bad(m, stem, sl, ".bitmask has more bits set than values", err);
			memcpy(out + (r * cols + c) * (uint64_t)w, v->data + next * (uint64_t)w, (size_t)w);
			next++;
		}
	if (next != v->numel)
		return bad(m, stem, sl, ".compressed has more values than the bitmask sets", err);
	x->dtype = v->dtype;
	x->data = x->numel ? out : NULL;
	x->nbytes = x->numel * (uint64_t)w;
	x->file = v->file;
	return SPP_OK;
}

/* The format whose parts sit beside the values tensor i, or NULL. */
static const struct ct_format *format_of(const struct spp_model *m, int n, const char *name,
					 size_t sl, int p[NPART])
{
	for (int k = 0; k < NPART; k++)
		p[k] = spp_model_find(m, n, name, sl, part_names[k]);
	if (p[P_BITMASK] < 0 || p[P_SHAPE] < 0)
		return NULL; /* a tensor that only ends in ".compressed" */
	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++)
		if ((p[P_OFFSETS] >= 0) == formats[f].has_offsets)
			return &formats[f];
	return NULL;
}

int spp_model_decompress(struct spp_model *m, struct spp_error *err)
{
	int n = m->ntensors, rc;

	if (m->nlayer_descs > 0)
		return SPP_OK;
	for (int i = 0; i < n; i++) {
		const char *name = m->tensors[i].name;
		size_t len = name ? strlen(name) : 0, sl = len - strlen(part_names[P_VALUES]);
		const struct ct_format *f;
		int p[NPART];
		struct spp_tensor x = {0};

		if (len <= strlen(part_names[P_VALUES]) || strcmp(name + sl, part_names[P_VALUES]) != 0 ||
		    !(f = format_of(m, n, name, sl, p)))
			continue;
		if (spp_model_find(m, n, name, sl, f->weight_suffix) >= 0)
			return bad(m, name, sl, "stored both dense and compressed", err);
		if ((rc = decode(m, f, p, &x, name, sl, err)))
			return rc;
		if (!(x.name = malloc(sl + strlen(f->weight_suffix) + 1)))
			return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
		memcpy(x.name, name, sl);
		strcpy(x.name + sl, f->weight_suffix);
		x.stored_as = f->name;
		for (int k = 0; k < NPART; k++)
			if (p[k] >= 0)
				x.stored_bytes += m->tensors[p[k]].nbytes;
		if ((rc = spp_model_add_tensor(m, &x, m->path, err)))
			return rc;
		for (int k = 0; k < NPART; k++)
			if (p[k] >= 0)
				m->tensors[p[k]].folded = 1;
	}
	return SPP_OK;
}
