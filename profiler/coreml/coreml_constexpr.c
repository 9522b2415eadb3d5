/*
 * Core ML's compressed constants decoded into the dense tensor, counted by
 * their decoded values:
 * - constexpr_sparse_to_dense: a bit mask over the output (packed from
 *   each byte's least significant bit) and the non-zero values in
 *   row-major order. iOS16: nonzero_data, mask (uint8) and shape
 *   attributes; iOS18: nonzero_data and mask (uint1 of the output's shape)
 *   inputs. The set bits must be exactly the values.
 * - constexpr_lut_to_dense (palettization): n-bit indices (packed the same
 *   way) into a lookup table. iOS16: indices (uint8), lut [2^n] and shape;
 *   iOS18: indices (uint1..uint8 of the output's shape) and lut
 *   [..., 2^n, 1], one palette per block of the output (vector size 1).
 * The file's bytes of both parts go to layers[].file_storage
 * ("coreml-sparse", "coreml-lut").
 */
#include "profiler/coreml/coreml.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


static const char *out_name(const Coreml__Operation *op)
{
	return op->n_outputs && op->outputs[0]->name ? op->outputs[0]->name : "(unnamed)";
}

/* A parameter spprof needs: 0, 1 (not decoded), or a fault naming it when absent. */
static int need(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		const char *name, struct mil_raw *r)
{
	int rc = get(c, op, name, r);

	if (rc == 2)
		return coreml_fault(c, "%s '%s' has no parameter '%s'", op->type, out_name(op), name);
	return rc;
}

/* The output's shape: iOS16's "shape" parameter, else like's (iOS18). */
static int out_shape(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		     const struct mil_raw *like, struct spp_tensor *t, int *ios16)
{
	struct mil_raw s;
	int rc = get(c, op, "shape", &s);

	if (rc != 0 && rc != 2)
		return rc;
	*ios16 = rc == 0;
	t->ndim = rc == 0 ? (int)s.numel : like->ndim;
	if (rc == 0 && (s.numel > SPP_MAX_DIMS || (s.dtype != SPP_DTYPE_I32 &&
						  s.dtype != SPP_DTYPE_U32)))
		return coreml_fault(c, "%s '%s': a shape of %" PRIu64 " dimensions", op->type,
				    out_name(op), s.numel);
	t->numel = 1;
	for (int d = 0; d < t->ndim; d++) {
		int64_t v = rc == 0 ? (int64_t)(uint32_t)(s.data[4 * d] | s.data[4 * d + 1] << 8 |
							  s.data[4 * d + 2] << 16 |
							  (uint32_t)s.data[4 * d + 3] << 24)
				    : like->shape[d];

		if (v > (INT64_C(1) << 32) || (v && t->numel > (UINT64_C(1) << 40) / (uint64_t)v))
			return coreml_fault(c, "%s '%s': dimension %d is %" PRId64, op->type,
					    out_name(op), d, v);
		t->shape[d] = v;
		t->numel *= (uint64_t)v;
	}
	return SPP_OK;
}

/* The dense output of dtype's element size, zeroed, owned by the model. */
static unsigned char *output(struct coreml *c, const Coreml__Operation *op, struct spp_tensor *t,
			     enum spp_dtype dtype, int *rc)
{
	unsigned char *out;

	t->dtype = dtype;
	if (spp_dtype_nbytes(dtype, t->numel, &t->nbytes)) {
		*rc = coreml_fault(c, "%s '%s': too large", op->type, out_name(op));
		return NULL;
	}
	if ((*rc = spp_model_charge(c->m, t->nbytes, c->file, op->type, c->err)))
		return NULL;
	if (!(out = calloc(t->nbytes ? t->nbytes : 1, 1)) || spp_model_own(c->m, out, c->err))
		return *rc = out ? c->err->code : coreml_nomem(c), NULL;
	t->data = out;
	return out;
}

static unsigned code_at(const unsigned char *p, uint64_t e, int bits)
{
	unsigned v = 0;

	for (int j = 0; j < bits; j++) {
		uint64_t b = e * (uint64_t)bits + (uint64_t)j;

		v |= (unsigned)(p[b / 8] >> (b % 8) & 1) << j;
	}
	return v;
}

/* Bytes per value of a type the constexpr ops carry values in; 0 otherwise. */
static int value_bytes(enum spp_dtype d)
{
	return d == SPP_DTYPE_F32 ? 4 : d == SPP_DTYPE_F16 || d == SPP_DTYPE_BF16 ? 2
		: d == SPP_DTYPE_I8 || d == SPP_DTYPE_U8 ? 1 : 0;
}

static int sparse(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		  struct spp_tensor *t)
{
	struct mil_raw nz, mask;
	unsigned char *out;
	uint64_t set = 0, k = 0;
	int rc, ios16, es;

	if ((rc = need(c, op, get, "nonzero_data", &nz)) || (rc = need(c, op, get, "mask", &mask)) ||
	    (rc = out_shape(c, op, get, &mask, t, &ios16)))
		return rc;
	if (!(es = value_bytes(nz.dtype)))
		return 1;
	if ((ios16 ? mask.dtype != SPP_DTYPE_U8 : mask.bits != 1) ||
	    mask.nbytes != (t->numel + 7) / 8)
		return coreml_fault(c, "%s '%s': a mask of %" PRIu64 " bytes for %" PRIu64 " values",
				    op->type, out_name(op), mask.nbytes, t->numel);
	for (uint64_t i = 0; i < t->numel; i++)
		set += code_at(mask.data, i, 1);
	if (set != nz.numel)
		return coreml_fault(c, "%s '%s': its mask sets %" PRIu64 " bits for %" PRIu64
				    " non-zero values", op->type, out_name(op), set, nz.numel);
	if (!(out = output(c, op, t, nz.dtype, &rc)))
		return rc;
	for (uint64_t i = 0; i < t->numel; i++)
		if (code_at(mask.data, i, 1))
			memcpy(out + i * (uint64_t)es, nz.data + k++ * (uint64_t)es, (size_t)es);
	t->stored_as = "coreml-sparse";
	t->stored_bytes = nz.nbytes + mask.nbytes;
	return SPP_OK;
}

/* iOS18's palette of each element: lut [p0, ..., 2^n, 1], p_d dividing the output's d. */
static int palettes(struct coreml *c, const Coreml__Operation *op, const struct mil_raw *lut,
		    const struct spp_tensor *t, int bits)
{
	if (lut->ndim != t->ndim + 2 || lut->shape[t->ndim] != INT64_C(1) << bits ||
	    lut->shape[t->ndim + 1] != 1)
		return 1; /* vector palettes (vector size > 1): not decoded */
	for (int d = 0; d < t->ndim; d++)
		if (lut->shape[d] <= 0 || t->shape[d] % lut->shape[d])
			return coreml_fault(c, "%s '%s': %" PRId64 " palettes along dimension %d of %"
					    PRId64, op->type, out_name(op), lut->shape[d], d,
					    t->shape[d]);
	return SPP_OK;
}

static uint64_t palette_of(const struct mil_raw *lut, const struct spp_tensor *t, uint64_t i)
{
	uint64_t p = 0, stride = 1;

	for (int d = t->ndim - 1; d >= 0; d--) {
		uint64_t coord = i % (uint64_t)t->shape[d];

		i /= (uint64_t)t->shape[d];
		p += coord / ((uint64_t)t->shape[d] / (uint64_t)lut->shape[d]) * stride;
		stride *= (uint64_t)lut->shape[d];
	}
	return p;
}

static int lut_dense(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		     struct spp_tensor *t)
{
	struct mil_raw idx, lut;
	unsigned char *out;
	int rc, ios16, es, bits = 0;

	if ((rc = need(c, op, get, "indices", &idx)) || (rc = need(c, op, get, "lut", &lut)) ||
	    (rc = out_shape(c, op, get, &idx, t, &ios16)))
		return rc;
	if (!(es = value_bytes(lut.dtype)))
		return 1;
	if (ios16)
		while (bits < 8 && (UINT64_C(1) << bits) < lut.numel)
			bits++;
	else
		bits = idx.dtype == SPP_DTYPE_U8 ? 8 : idx.dtype == SPP_DTYPE_U4 ? 4 : idx.bits;
	if (bits < 1 || (ios16 ? lut.numel != UINT64_C(1) << bits || idx.dtype != SPP_DTYPE_U8
		       : (rc = palettes(c, op, &lut, t, bits))) ||
	    idx.nbytes != (t->numel * (uint64_t)bits + 7) / 8)
		return rc ? rc : coreml_fault(c, "%s '%s': %" PRIu64 " index bytes and a table of %"
					      PRIu64 " for %" PRIu64 " values", op->type,
					      out_name(op), idx.nbytes, lut.numel, t->numel);
	if (!(out = output(c, op, t, lut.dtype, &rc)))
		return rc;
	for (uint64_t i = 0; i < t->numel; i++) {
		uint64_t e = (ios16 ? 0 : palette_of(&lut, t, i) << bits) + code_at(idx.data, i, bits);

		memcpy(out + i * (uint64_t)es, lut.data + e * (uint64_t)es, (size_t)es);
	}
	t->stored_as = "coreml-lut";
	t->stored_bytes = idx.nbytes + lut.nbytes;
	return SPP_OK;
}

int coreml_constexpr(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		     struct spp_tensor *t)
{
	if (strcmp(op->type, "constexpr_sparse_to_dense") == 0)
		return sparse(c, op, get, t);
	if (strcmp(op->type, "constexpr_lut_to_dense") == 0)
		return lut_dense(c, op, get, t);
	return 1;
}
