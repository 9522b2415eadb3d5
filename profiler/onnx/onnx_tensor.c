/*
 * TensorProto and SparseTensorProto to struct spp_tensor: dtype, shape and
 * where the bytes are (raw_data in the decoded message, typed fields decoded
 * into a buffer the model owns, external data in a mapped file).
 */
#include "profiler/onnx/onnx_internal.h"
#include "base/beneath.h"
#include "profiler/static.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor data is little-endian in ONNX and used in place: a little-endian host is needed"
#endif

enum { SKIP = -1, UNKNOWN = -2 };

/* TensorProto.DataType to spprof's dtype; SKIP for STRING / COMPLEX128 */
static int dtype_of(int32_t t)
{
	static const int map[] = {
		[1] = SPP_DTYPE_F32, [2] = SPP_DTYPE_U8, [3] = SPP_DTYPE_I8,
		[4] = SPP_DTYPE_U16, [5] = SPP_DTYPE_I16, [6] = SPP_DTYPE_I32,
		[7] = SPP_DTYPE_I64, [8] = SKIP, [9] = SPP_DTYPE_BOOL,
		[10] = SPP_DTYPE_F16, [11] = SPP_DTYPE_F64, [12] = SPP_DTYPE_U32,
		[13] = SPP_DTYPE_U64, [14] = SPP_DTYPE_C64, [15] = SKIP,
		[16] = SPP_DTYPE_BF16, [17] = SPP_DTYPE_F8_E4M3,
		[18] = SPP_DTYPE_F8_E4M3FNUZ, [19] = SPP_DTYPE_F8_E5M2,
		[20] = SPP_DTYPE_F8_E5M2FNUZ, [21] = SPP_DTYPE_U4,
		[22] = SPP_DTYPE_I4, [23] = SPP_DTYPE_F4, [24] = SPP_DTYPE_F8_E8M0,
	};

	if (t < 1 || t >= (int32_t)(sizeof(map) / sizeof(map[0])))
		return UNKNOWN;
	return map[t];
}

/* Bytes of numel elements; 4-bit types pad the last byte, as ONNX does. */
static int data_bytes(enum spp_dtype dt, uint64_t numel, uint64_t *out)
{
	if (spp_dtype_info(dt)->bits == 4) {
		*out = numel / 2 + numel % 2;
		return 0;
	}
	return spp_dtype_nbytes(dt, numel, out);
}

/* Rank, shape and element count of dims; 0 or SPP_E_FORMAT. */
static int set_shape(struct onnx_ctx *c, struct spp_tensor *t, const int64_t *dims,
		     size_t n)
{
	uint64_t numel = 1;
	int zero = 0, overflow = 0;

	if (n > SPP_MAX_DIMS)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': rank %zu exceeds the limit of %d",
				  t->name, n, SPP_MAX_DIMS);
	for (size_t i = 0; i < n; i++) {
		if (dims[i] < 0)
			return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': dims[%zu] = %" PRId64
					  " is negative", t->name, i, dims[i]);
		t->shape[i] = dims[i];
		if (dims[i] == 0)
			zero = 1;
		else if (numel > UINT64_MAX / (uint64_t)dims[i])
			overflow = 1;
		else
			numel *= (uint64_t)dims[i];
	}
	if (overflow && !zero)
		return onnx_fault(c, SPP_E_FORMAT,
				  "tensor '%s': the element count of dims overflows 64 bits", t->name);
	t->ndim = (int)n;
	t->numel = zero ? 0 : numel;
	return SPP_OK;
}

int onnx_tensor_push(struct onnx_ctx *c, struct spp_tensor *t, int *index)
{
	struct spp_model *m = c->m;

	if (m->ntensors == c->tensors_cap) {
		int cap = c->tensors_cap ? 2 * c->tensors_cap : 16;
		struct spp_tensor *g = realloc(m->tensors, (size_t)cap * sizeof(*g));
		if (!g || cap > INT32_MAX / 4) {
			if (g)
				m->tensors = g;
			free(t->name);
			return onnx_fault(c, SPP_E_NOMEM, "out of memory for %d tensors", cap);
		}
		m->tensors = g;
		c->tensors_cap = cap;
	}
	*index = m->ntensors;
	m->tensors[m->ntensors++] = *t;
	return SPP_OK;
}

/* A decimal u64 of an external_data entry; 0 or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int external(struct onnx_ctx *c, const Onnx__TensorProto *tp, struct spp_tensor *t)
{
	struct spp_model *m = c->m;
	const char *loc = NULL, *off = NULL, *len = NULL;
	uint64_t offset = 0, length = t->nbytes;
	struct spp_error e2 = {0};
	size_t dl = c->dir ? strlen(c->dir) : 0;
	int fi = -1, rc;

	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		if (!e->key)
			continue;
		if (strcmp(e->key, "location") == 0)
			loc = e->value ? e->value : "";
		else if (strcmp(e->key, "offset") == 0)
			off = e->value ? e->value : "";
		else if (strcmp(e->key, "length") == 0)
			len = e->value ? e->value : "";
	}
	if (!loc)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': external data without a location",
				  t->name);
	if (spp_name_beneath(loc))
		return onnx_fault(c, SPP_E_FORMAT,
				  "tensor '%s': external data location '%s' escapes the model's folder",
				  t->name, loc);
	if ((off && parse_u64(off, &offset)) || (len && parse_u64(len, &length)))
		return onnx_fault(c, SPP_E_FORMAT,
				  "tensor '%s': external data offset '%s' or length '%s' is not a number",
				  t->name, off ? off : "", len ? len : "");
	if (length != t->nbytes)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': external data length %" PRIu64
				  " bytes, dims x data_type need %" PRIu64, t->name, length, t->nbytes);
	if (!c->dir)
		return onnx_fault(c, SPP_E_UNSUPPORTED,
				  "tensor '%s': external data '%s' cannot be read from a buffer",
				  t->name, loc);
	/* a location seen before by its spelling; any other by its inode */
	for (int i = 0; i < m->nfiles && fi < 0; i++) {
		const char *p = m->files[i].path;

		if (strncmp(p, c->dir, dl) == 0 && p[dl] == '/' && strcmp(p + dl + 1, loc) == 0)
			fi = i;
	}
	if (fi < 0 && (rc = spp_model_map_beneath(m, c->dir, loc, c->file, &fi, &e2)))
		return onnx_fault(c, rc == SPP_E_NOMEM ? rc : SPP_E_FORMAT,
				  "tensor '%s': external data: %s", t->name, e2.msg);
	if (offset > m->files[fi].size || t->nbytes > m->files[fi].size - offset)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': external data [%" PRIu64 ", +%"
				  PRIu64 ") runs past the end of '%s' (%" PRIu64 " bytes)",
				  t->name, offset, t->nbytes, loc, m->files[fi].size);
	t->file = fi;
	t->offset = offset;
	t->data = t->nbytes ? m->files[fi].base + offset : NULL;
	return SPP_OK;
}

/* The typed field ONNX uses for a dtype, as (count, element bytes, pointer). */
struct typed {
	const char *field;
	size_t count;
	int width;                /* bytes of one field element */
	const void *vals;
};

static struct typed typed_field(const Onnx__TensorProto *tp, enum spp_dtype dt)
{
	switch (dt) {
	case SPP_DTYPE_F32:
	case SPP_DTYPE_C64:
		return (struct typed){"float_data", tp->n_float_data, 4, tp->float_data};
	case SPP_DTYPE_I64:
		return (struct typed){"int64_data", tp->n_int64_data, 8, tp->int64_data};
	case SPP_DTYPE_F64:
		return (struct typed){"double_data", tp->n_double_data, 8, tp->double_data};
	case SPP_DTYPE_U32:
	case SPP_DTYPE_U64:
		return (struct typed){"uint64_data", tp->n_uint64_data, 8, tp->uint64_data};
	default:
		return (struct typed){"int32_data", tp->n_int32_data, 4, tp->int32_data};
	}
}

/*
 * Decode the typed field into the tensor's own layout. Fields as wide as
 * the dtype are used in place (the decoded message outlives the tensor);
 * narrower dtypes take the low bits of each value, as ONNX stores them
 * (F16/BF16 bit patterns, FP8 codes, 4-bit pairs one byte per value).
 */
static int typed(struct onnx_ctx *c, const Onnx__TensorProto *tp, struct spp_tensor *t)
{
	struct typed f = typed_field(tp, t->dtype);
	int bits = spp_dtype_info(t->dtype)->bits;
	uint64_t want = bits == 4 ? t->nbytes : t->numel * (t->dtype == SPP_DTYPE_C64 ? 2 : 1);
	int out_w = bits == 4 ? 1 : t->dtype == SPP_DTYPE_C64 ? 4 : bits / 8;
	unsigned char *buf;

	if (f.count != want)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': %s holds %zu values, dims x "
				  "data_type need %" PRIu64, t->name, f.field, f.count, want);
	if (want == 0)
		return SPP_OK;
	if (out_w == f.width) {
		t->data = f.vals;
		return SPP_OK;
	}
	if (spp_model_charge(c->m, t->nbytes, c->file, "a decoded typed field", c->err))
		return c->err->code;
	buf = malloc(t->nbytes);
	if (!buf)
		return onnx_fault(c, SPP_E_NOMEM, "tensor '%s': out of memory for %" PRIu64
				  " bytes", t->name, t->nbytes);
	for (uint64_t i = 0; i < want; i++) {
		uint64_t v = f.width == 8 ? ((const uint64_t *)f.vals)[i]
					  : (uint32_t)((const int32_t *)f.vals)[i];
		memcpy(buf + i * (uint64_t)out_w, &v, (size_t)out_w); /* low bytes, LE */
	}
	t->data = buf;
	return spp_model_own(c->m, buf, c->err) ? onnx_fault(c, SPP_E_NOMEM, "out of memory")
						: SPP_OK;
}

/* Fill t (name set) from tp; *skip when the dtype has no spprof type. */
static int decode(struct onnx_ctx *c, const Onnx__TensorProto *tp, struct spp_tensor *t,
		  int *skip)
{
	int dt = dtype_of(tp->data_type);
	int rc;

	*skip = 0;
	if (dt == UNKNOWN)
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': data_type %" PRId32
				  " is not an ONNX type", t->name, tp->data_type);
	rc = set_shape(c, t, tp->dims, tp->n_dims);
	if (rc)
		return rc;
	if (dt == SKIP) {
		*skip = 1;
		return SPP_OK;
	}
	t->dtype = (enum spp_dtype)dt;
	if (data_bytes(t->dtype, t->numel, &t->nbytes))
		return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': the byte size of dims x "
				  "data_type overflows 64 bits", t->name);
	if (tp->has_data_location && tp->data_location != 0) {
		if (tp->data_location != 1)
			return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': data_location %" PRId32
					  " is neither DEFAULT nor EXTERNAL", t->name,
					  tp->data_location);
		return external(c, tp, t);
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != t->nbytes)
			return onnx_fault(c, SPP_E_FORMAT, "tensor '%s': raw_data holds %zu bytes, "
					  "dims x data_type need %" PRIu64, t->name,
					  tp->raw_data.len, t->nbytes);
		t->data = t->nbytes ? tp->raw_data.data : NULL;
		return SPP_OK;
	}
	return typed(c, tp, t);
}

int onnx_tensor_add(struct onnx_ctx *c, const Onnx__TensorProto *tp,
		    const char *name, int *index)
{
	struct spp_tensor t = {0};
	int skip, rc;

	*index = -1;
	t.name = strdup(onnx_name(name ? name : tp->name));
	if (!t.name)
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	rc = decode(c, tp, &t, &skip);
	if (rc || skip) {
		free(t.name);
		return rc;
	}
	return onnx_tensor_push(c, &t, index);
}

/* The linear index of stored value i; indices are INT64 [nnz] or [nnz, rank]. */
static uint64_t linear_index(const struct spp_tensor *t, const int64_t *idx, int coords,
			     uint64_t i, int *bad)
{
	uint64_t lin = 0;

	if (!coords) {
		*bad = idx[i] < 0 || (uint64_t)idx[i] >= t->numel;
		return (uint64_t)idx[i];
	}
	for (int d = 0; d < t->ndim; d++) {
		int64_t v = idx[i * (uint64_t)t->ndim + (uint64_t)d];
		if (v < 0 || v >= t->shape[d]) {
			*bad = 1;
			return 0;
		}
		lin = lin * (uint64_t)t->shape[d] + (uint64_t)v;
	}
	*bad = 0;
	return lin;
}

int onnx_sparse_add(struct onnx_ctx *c, const Onnx__SparseTensorProto *sp,
		    const char *name, int *index)
{
	struct spp_tensor t = {0}, vals = {0}, idx = {0};
	unsigned char *dense = NULL;
	int skip, coords, rc, bad = 0, vi = -1;
	uint64_t nnz, prev = 0, esize;

	*index = -1;
	if (!sp->values || !sp->indices)
		return onnx_fault(c, SPP_E_FORMAT, "sparse tensor '%s': values or indices missing",
				  onnx_name(name));
	if (!name || !*name)
		name = sp->values->name;
	t.name = strdup(onnx_name(name));
	vals.name = t.name;
	idx.name = t.name;
	if (!t.name)
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	rc = set_shape(c, &t, sp->dims, sp->n_dims);
	if (!rc)
		rc = decode(c, sp->values, &vals, &skip);
	if (rc || skip)
		goto out;
	rc = decode(c, sp->indices, &idx, &vi);
	if (rc)
		goto out;
	t.dtype = vals.dtype;
	nnz = vals.numel;
	coords = idx.ndim == 2;
	rc = SPP_E_FORMAT;
	if (vals.ndim != 1 || vi || idx.dtype != SPP_DTYPE_I64 ||
	    !(idx.ndim == 1 || (coords && idx.shape[1] == t.ndim)) ||
	    (nnz && idx.shape[0] != (int64_t)nnz) || nnz > t.numel) {
		onnx_fault(c, rc, "sparse tensor '%s': values must be [nnz] and indices INT64 "
			   "[nnz] or [nnz, rank] with nnz <= the dense element count", t.name);
		goto out;
	}
	if (spp_dtype_info(t.dtype)->bits % 8 || data_bytes(t.dtype, t.numel, &t.nbytes)) {
		onnx_fault(c, SPP_E_UNSUPPORTED, "sparse tensor '%s': %s values cannot be densified",
			   t.name, spp_dtype_name(t.dtype));
		rc = SPP_E_UNSUPPORTED;
		goto out;
	}
	esize = (uint64_t)spp_dtype_info(t.dtype)->bits / 8;
	if (t.nbytes > SPP_ONNX_MAX_DENSIFY) {
		/* too large to densify: validate the indices and count the
		 * non-zeros among the stored values; totals only, no layer */
		for (uint64_t i = 0; i < nnz; i++) {
			uint64_t lin = linear_index(&t, (const int64_t *)idx.data, coords, i, &bad);
			if (bad || (i > 0 && lin <= prev)) {
				onnx_fault(c, rc, "sparse tensor '%s': index %" PRIu64 " is out of range or "
					   "not ascending", t.name, i);
				goto out;
			}
			prev = lin;
		}
		rc = spp_static_tensor_nnz(&vals, &t.nnz, c->err);
		if (rc)
			goto out;
		t.nnz_only = 1;
		t.nbytes = 0;
		rc = onnx_tensor_push(c, &t, index);
		t.name = NULL;
		goto out;
	}
	if ((rc = spp_model_charge(c->m, t.nbytes, c->file, "a densified sparse tensor", c->err)))
		goto out;
	rc = SPP_E_FORMAT;
	dense = t.nbytes ? calloc(1, t.nbytes) : NULL;
	if (t.nbytes && !dense) {
		rc = onnx_fault(c, SPP_E_NOMEM, "sparse tensor '%s': out of memory", t.name);
		goto out;
	}
	for (uint64_t i = 0; i < nnz; i++) {
		uint64_t lin = linear_index(&t, (const int64_t *)idx.data, coords, i, &bad);
		if (bad || (i > 0 && lin <= prev)) {
			onnx_fault(c, rc, "sparse tensor '%s': index %" PRIu64 " is out of range or "
				   "not ascending", t.name, i);
			goto out;
		}
		memcpy(dense + lin * esize, vals.data + i * esize, (size_t)esize);
		prev = lin;
	}
	t.data = dense;
	if (dense) {
		rc = spp_model_own(c->m, dense, c->err);
		dense = NULL;
		if (rc)
			goto out;
	}
	rc = onnx_tensor_push(c, &t, index);
	t.name = NULL;
out:
	free(dense);
	free(t.name);
	return rc;
}
