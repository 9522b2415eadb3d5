/*
 * The ops constant folding evaluates (onnx_fold.c), by the ONNX operator
 * specification: Identity, Reshape, Flatten, Squeeze and Unsqueeze give a
 * new shape to their input's bytes (no copy); Transpose, Slice, Concat,
 * Gather and Cast write a buffer the model owns, charged to its budget
 * first. Attributes or inputs: Slice's starts/ends/axes (opset 1 as
 * attributes, from 10 as inputs, with steps) and Squeeze's and Unsqueeze's
 * axes (attributes before opset 13) are read from whichever the node has.
 * Every size is checked; a node the specification calls invalid (a Slice
 * step of 0, an index out of range, shapes that do not agree) is a format
 * error naming the node.
 */
#include "profiler/onnx/onnx_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct fold {
	struct onnx_ctx *c;
	const Onnx__NodeProto *n;
	const struct spp_tensor *const *in;
	size_t nin;
	struct spp_tensor *out;
	const char **why;
};

static int bad(const struct fold *f, const char *what)
{
	return onnx_fault(f->c, SPP_E_FORMAT, "node '%s' (%s): %s", onnx_name(f->n->name),
			  f->n->op_type, what);
}

static const struct spp_tensor *arg(const struct fold *f, size_t i)
{
	return i < f->nin ? f->in[i] : NULL;
}

/* Bytes of one element; 0 for packed and block types (not folded when copied). */
static size_t esize(enum spp_dtype dt)
{
	int bits = spp_dtype_info(dt)->bits;

	return bits > 0 && bits % 8 == 0 && spp_dtype_info(dt)->block_elems <= 1 ? (size_t)bits / 8 : 0;
}

/* An integer list input (I64 or I32, rank 0 or 1) into v[max]; 1, or 0 when it is not one. */
static int ints(const struct spp_tensor *t, int64_t *v, int max, int *count)
{
	int w = t && t->dtype == SPP_DTYPE_I64 ? 8 : t && t->dtype == SPP_DTYPE_I32 ? 4 : 0;

	if (!w || t->ndim > 1 || t->numel > (uint64_t)max || t->nbytes < t->numel * (uint64_t)w)
		return 0;
	for (uint64_t i = 0; i < t->numel; i++) {
		if (w == 8) {
			memcpy(&v[i], t->data + 8 * i, 8);
		} else {
			int32_t x;

			memcpy(&x, t->data + 4 * i, 4);
			v[i] = x;
		}
	}
	*count = (int)t->numel;
	return 1;
}

/* out's shape and element count from dims[rank]; 0 or a format error. */
static int shape(const struct fold *f, const int64_t *dims, int rank)
{
	uint64_t numel = 1;
	int zero = 0;

	if (rank > SPP_MAX_DIMS)
		return bad(f, "the result has more than 8 dimensions");
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || dims[i] > ONNX_MAX_DIM)
			return bad(f, "a dimension of the result is negative or above 2^40");
		zero |= dims[i] == 0;
		if (dims[i] && numel > UINT64_MAX / (uint64_t)dims[i])
			return bad(f, "the element count of the result overflows 64 bits");
		numel *= dims[i] ? (uint64_t)dims[i] : 1;
	}
	f->out->ndim = rank;
	memset(f->out->shape, 0, sizeof(f->out->shape));
	memcpy(f->out->shape, dims, (size_t)rank * sizeof(*dims));
	f->out->numel = zero ? 0 : numel;
	return SPP_OK;
}

/* The input's bytes under out's shape (set), which holds as many elements. */
static int alias(const struct fold *f, const struct spp_tensor *x)
{
	if (f->out->numel != x->numel)
		return bad(f, "the new shape does not hold the input's element count");
	f->out->dtype = x->dtype;
	f->out->data = x->data;
	f->out->nbytes = x->nbytes;
	f->out->file = x->file;
	f->out->offset = x->offset;
	return SPP_OK;
}

/* A buffer for out (shape and dtype set) charged to the model's budget. */
static int alloc_out(const struct fold *f, unsigned char **buf)
{
	struct spp_tensor *o = f->out;
	size_t es = esize(o->dtype);

	*buf = NULL;
	if (o->numel > UINT64_MAX / es)
		return bad(f, "the byte size of the result overflows 64 bits");
	o->nbytes = o->numel * es;
	if (!o->nbytes)
		return SPP_OK;
	if (spp_model_charge(f->c->m, o->nbytes, f->c->file, "a folded constant", f->c->err))
		return f->c->err->code;
	if (!(*buf = malloc(o->nbytes)))
		return onnx_fault(f->c, SPP_E_NOMEM, "node '%s': out of memory for %" PRIu64 " bytes",
				  onnx_name(f->n->name), o->nbytes);
	if (spp_model_own(f->c->m, *buf, f->c->err))
		return onnx_fault(f->c, SPP_E_NOMEM, "out of memory");
	o->data = *buf;
	return SPP_OK;
}

/* An axis in [-rank, rank) (or [-rank, rank] with end) to [0, rank); -1 when out of range. */
static int axis_of(int64_t a, int rank)
{
	if (a < 0)
		a += rank;
	return a >= 0 && a < rank ? (int)a : -1;
}

/* Element strides of t's dimensions (row-major). */
static void strides(const struct spp_tensor *t, int64_t *st)
{
	int64_t s = 1;

	for (int d = t->ndim - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->shape[d] ? t->shape[d] : 1;
	}
}

/*
 * Copy out's elements (numel > 0) from src, element e of out read at base +
 * sum(index_d * step[d]) elements: the walk of Transpose and Slice.
 */
static void walk(unsigned char *dst, const unsigned char *src, const struct spp_tensor *o,
		 const int64_t *step, int64_t base, size_t es)
{
	int64_t idx[SPP_MAX_DIMS] = {0}, at = base;

	for (uint64_t k = 0; k < o->numel; k++) {
		memcpy(dst + k * es, src + (uint64_t)at * es, es);
		for (int d = o->ndim - 1; d >= 0; d--) {
			at += step[d];
			if (++idx[d] < o->shape[d])
				break;
			at -= step[d] * o->shape[d];
			idx[d] = 0;
		}
	}
}

static int reshape(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t want[SPP_MAX_DIMS + 1], dims[SPP_MAX_DIMS], known = 1;
	int n, infer = -1, allowzero = onnx_attr_int(f->n, "allowzero", 0) != 0;

	if (!ints(arg(f, 1), want, SPP_MAX_DIMS + 1, &n))
		return bad(f, "the shape input is not a list of at most 8 integers");
	if (n > SPP_MAX_DIMS)
		return bad(f, "the result has more than 8 dimensions");
	for (int i = 0; i < n; i++) {
		dims[i] = want[i];
		if (want[i] == 0 && !allowzero) {
			if (i >= x->ndim)
				return bad(f, "a 0 in the shape copies a dimension the input lacks");
			dims[i] = x->shape[i];
		} else if (want[i] == -1) {
			if (infer >= 0)
				return bad(f, "the shape holds -1 twice");
			infer = i;
			continue;
		} else if (want[i] < 0) {
			return bad(f, "the shape holds a negative dimension other than -1");
		}
		if (dims[i] > ONNX_MAX_DIM)
			return bad(f, "a dimension of the result is above 2^40");
		known = dims[i] && known > INT64_MAX / dims[i] ? INT64_MAX : known * dims[i];
	}
	if (infer >= 0) {
		if (known == 0 || x->numel % (uint64_t)known)
			return bad(f, "the shape's -1 cannot hold the input's element count");
		dims[infer] = (int64_t)(x->numel / (uint64_t)known);
	}
	return shape(f, dims, n) ? f->c->err->code : alias(f, x);
}

static int flatten(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t a = onnx_attr_int(f->n, "axis", 1), dims[2] = {1, 1};

	if (a < 0)
		a += x->ndim;
	if (a < 0 || a > x->ndim)
		return bad(f, "axis is out of range");
	for (int d = 0; d < x->ndim; d++) {
		int64_t *p = &dims[d >= a];

		if (x->shape[d] && *p > INT64_MAX / x->shape[d])
			return bad(f, "a dimension of the result overflows 64 bits");
		*p *= x->shape[d];
	}
	return shape(f, dims, 2) ? f->c->err->code : alias(f, x);
}

/* Squeeze's and Unsqueeze's axes: input 1, else the attribute; 0 when neither. */
static int axes_of(const struct fold *f, int64_t *v, int *count, int *bad_list)
{
	*bad_list = 0;
	if (arg(f, 1)) {
		*bad_list = !ints(arg(f, 1), v, SPP_MAX_DIMS, count);
		return !*bad_list;
	}
	if (onnx_attr(f->n, "axes")) {
		*bad_list = !onnx_attr_ints(f->n, "axes", v, SPP_MAX_DIMS, count);
		return !*bad_list;
	}
	return 0;
}

static int squeeze(const struct fold *f, int un)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t ax[SPP_MAX_DIMS], dims[SPP_MAX_DIMS];
	int n = 0, list, rank, k = 0, bl;
	unsigned char pick[SPP_MAX_DIMS] = {0};

	list = axes_of(f, ax, &n, &bl);
	if (bl)
		return bad(f, "axes is not a list of at most 8 integers");
	if (un && !list)
		return bad(f, "axes is missing");
	rank = un ? x->ndim + n : x->ndim;
	if (rank > SPP_MAX_DIMS)
		return bad(f, "the result has more than 8 dimensions");
	for (int i = 0; i < n; i++) {
		int a = axis_of(ax[i], rank);

		if (a < 0 || pick[a])
			return bad(f, "an axis is out of range or repeated");
		if (!un && x->shape[a] != 1)
			return bad(f, "an axis to squeeze is not of size 1");
		pick[a] = 1;
	}
	for (int d = 0, j = 0; d < rank; d++) {
		if (un) {
			dims[k++] = pick[d] ? 1 : x->shape[j++];
		} else if (list ? !pick[d] : x->shape[d] != 1) {
			dims[k++] = x->shape[d];
		}
	}
	return shape(f, dims, k) ? f->c->err->code : alias(f, x);
}

static int transpose(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t perm[SPP_MAX_DIMS], dims[SPP_MAX_DIMS], st[SPP_MAX_DIMS], step[SPP_MAX_DIMS];
	unsigned char seen[SPP_MAX_DIMS] = {0}, *buf;
	int n = x->ndim, rc;

	if (onnx_attr(f->n, "perm") && (!onnx_attr_ints(f->n, "perm", perm, SPP_MAX_DIMS, &n) ||
					n != x->ndim))
		return bad(f, "perm does not list the input's dimensions");
	else if (!onnx_attr(f->n, "perm"))
		for (int d = 0; d < n; d++)
			perm[d] = n - 1 - d;
	strides(x, st);
	for (int d = 0; d < n; d++) {
		if (perm[d] < 0 || perm[d] >= n || seen[perm[d]])
			return bad(f, "perm is not a permutation of the input's dimensions");
		seen[perm[d]] = 1;
		dims[d] = x->shape[perm[d]];
		step[d] = st[perm[d]];
	}
	f->out->dtype = x->dtype;
	if ((rc = shape(f, dims, n)) || (rc = alloc_out(f, &buf)))
		return rc;
	if (f->out->numel)
		walk(buf, x->data, f->out, step, 0, esize(x->dtype));
	return SPP_OK;
}

/* starts, ends, axes, steps of a Slice (inputs from opset 10, attributes before). */
static int slice_args(const struct fold *f, int64_t v[4][SPP_MAX_DIMS], int *n, int *has)
{
	static const char *const names[] = {"starts", "ends", "axes", "steps"};
	int cnt[4] = {0, 0, 0, 0};

	for (int k = 0; k < 4; k++) {
		int ok;

		if (f->nin >= 3) {
			has[k] = arg(f, (size_t)k + 1) != NULL;
			ok = !has[k] || ints(arg(f, (size_t)k + 1), v[k], SPP_MAX_DIMS, &cnt[k]);
		} else {
			has[k] = k < 3 && onnx_attr(f->n, names[k]);
			ok = !has[k] || onnx_attr_ints(f->n, names[k], v[k], SPP_MAX_DIMS, &cnt[k]);
		}
		if (!ok)
			return bad(f, "starts, ends, axes or steps is not a list of at most 8 integers");
	}
	if (!has[0] || !has[1] || cnt[0] != cnt[1] || (has[2] && cnt[2] != cnt[0]) ||
	    (has[3] && cnt[3] != cnt[0]))
		return bad(f, "starts, ends, axes and steps are missing or differ in length");
	*n = cnt[0];
	return SPP_OK;
}

/* One axis of a Slice over a dimension of dim: its first index and count. */
static int slice_axis(const struct fold *f, int64_t start, int64_t end, int64_t step, int64_t dim,
		      int64_t *first, int64_t *count)
{
	if (step == 0)
		return bad(f, "a step is 0");
	if (start < 0)
		start += dim;
	if (end < 0)
		end += dim;
	if (step > 0) {
		start = start < 0 ? 0 : start > dim ? dim : start;
		end = end < 0 ? 0 : end > dim ? dim : end;
		*count = end > start ? (end - start - 1) / step + 1 : 0;
	} else {
		/* |step| as unsigned: -INT64_MIN does not fit */
		uint64_t mag = (uint64_t)(-(step + 1)) + 1;

		start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
		end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
		*count = start > end ? (int64_t)((uint64_t)(start - end - 1) / mag) + 1 : 0;
	}
	*first = *count ? start : 0;
	return SPP_OK;
}

static int slice(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t v[4][SPP_MAX_DIMS], st[SPP_MAX_DIMS], dims[SPP_MAX_DIMS], step[SPP_MAX_DIMS];
	int64_t base = 0;
	unsigned char seen[SPP_MAX_DIMS] = {0}, *buf;
	int n, has[4], rc;

	if ((rc = slice_args(f, v, &n, has)))
		return rc;
	strides(x, st);
	for (int d = 0; d < x->ndim; d++) {
		dims[d] = x->shape[d];
		step[d] = st[d];
	}
	for (int i = 0; i < n; i++) {
		int a = axis_of(has[2] ? v[2][i] : i, x->ndim);
		int64_t s = has[3] ? v[3][i] : 1, first = 0, count = 0;

		if (a < 0 || seen[a])
			return bad(f, "an axis is out of range or repeated");
		seen[a] = 1;
		if ((rc = slice_axis(f, v[0][i], v[1][i], s, x->shape[a], &first, &count)))
			return rc;
		dims[a] = count;
		/* |step| * (count - 1) < dim: no overflow where the walk moves */
		step[a] = count > 1 ? st[a] * s : 0;
		base += count ? first * st[a] : 0;
	}
	f->out->dtype = x->dtype;
	if ((rc = shape(f, dims, x->ndim)) || (rc = alloc_out(f, &buf)))
		return rc;
	if (f->out->numel)
		walk(buf, x->data, f->out, step, base, esize(x->dtype));
	return SPP_OK;
}

static int concat(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int64_t dims[SPP_MAX_DIMS], sum = 0;
	uint64_t outer = 1, inner, at = 0;
	unsigned char *buf;
	size_t es;
	int a, rc;

	if (!x || !onnx_attr(f->n, "axis") ||
	    (a = axis_of(onnx_attr_int(f->n, "axis", 0), x->ndim)) < 0)
		return bad(f, "axis is missing or out of range");
	for (size_t j = 0; j < f->nin; j++) {
		const struct spp_tensor *y = f->in[j];

		if (!y || y->dtype != x->dtype || y->ndim != x->ndim)
			return bad(f, "the inputs differ in data type or rank");
		for (int d = 0; d < x->ndim; d++)
			if (d != a && y->shape[d] != x->shape[d])
				return bad(f, "the inputs differ in a dimension besides axis");
		if (y->shape[a] > ONNX_MAX_DIM - sum)
			return bad(f, "the concatenated dimension is above 2^40");
		sum += y->shape[a];
	}
	memcpy(dims, x->shape, sizeof(dims));
	dims[a] = sum;
	f->out->dtype = x->dtype;
	if ((rc = shape(f, dims, x->ndim)) || (rc = alloc_out(f, &buf)) || !f->out->numel)
		return rc;
	es = esize(x->dtype);
	for (int d = 0; d < a; d++)
		outer *= (uint64_t)x->shape[d];
	inner = f->out->numel / outer / (uint64_t)sum * es; /* bytes per index of axis */
	for (uint64_t o = 0; o < outer; o++)
		for (size_t j = 0; j < f->nin; j++) {
			uint64_t len = (uint64_t)f->in[j]->shape[a] * inner;

			memcpy(buf + at, f->in[j]->data + o * len, len);
			at += len;
		}
	return SPP_OK;
}

static int gather(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0), *ix = arg(f, 1);
	int64_t dims[SPP_MAX_DIMS], dim;
	uint64_t outer = 1, inner, nidx;
	unsigned char *buf;
	int a, r, rc, w;

	if (x->ndim < 1 || (a = axis_of(onnx_attr_int(f->n, "axis", 0), x->ndim)) < 0)
		return bad(f, "axis is out of range");
	w = ix && ix->dtype == SPP_DTYPE_I64 ? 8 : ix && ix->dtype == SPP_DTYPE_I32 ? 4 : 0;
	if (!w || ix->nbytes < ix->numel * (uint64_t)w)
		return bad(f, "the indices are not INT64 or INT32");
	r = ix->ndim + x->ndim - 1;
	if (r > SPP_MAX_DIMS)
		return bad(f, "the result has more than 8 dimensions");
	memcpy(dims, x->shape, (size_t)a * sizeof(*dims));
	memcpy(dims + a, ix->shape, (size_t)ix->ndim * sizeof(*dims));
	memcpy(dims + a + ix->ndim, x->shape + a + 1, (size_t)(x->ndim - a - 1) * sizeof(*dims));
	f->out->dtype = x->dtype;
	if ((rc = shape(f, dims, r)) || (rc = alloc_out(f, &buf)) || !f->out->numel)
		return rc;
	dim = x->shape[a];
	nidx = ix->numel;
	for (int d = 0; d < a; d++)
		outer *= (uint64_t)x->shape[d];
	inner = f->out->numel / outer / nidx * esize(x->dtype);
	for (uint64_t k = 0; k < nidx; k++) {
		int64_t i;

		if (w == 8) {
			memcpy(&i, ix->data + 8 * k, 8);
		} else {
			int32_t i32;

			memcpy(&i32, ix->data + 4 * k, 4);
			i = i32;
		}
		if (i < -dim || i >= dim)
			return bad(f, "an index is out of range");
		if (i < 0)
			i += dim;
		for (uint64_t o = 0; o < outer; o++)
			memcpy(buf + (o * nidx + k) * inner,
			       x->data + (o * (uint64_t)dim + (uint64_t)i) * inner, inner);
	}
	return SPP_OK;
}

static int cast(const struct fold *f)
{
	const struct spp_tensor *x = arg(f, 0);
	int to = onnx_cast_dtype(onnx_attr_int(f->n, "to", 0)), rc;
	unsigned char *buf;

	if (to < 0 || !onnx_cast_dtype_ok(x->dtype)) {
		*f->why = "casts between data types spprof does not fold";
		return SPP_OK;
	}
	f->out->dtype = (enum spp_dtype)to;
	if ((rc = shape(f, x->shape, x->ndim)) || (rc = alloc_out(f, &buf)))
		return rc;
	onnx_cast_values(x->data, x->dtype, buf, f->out->dtype, x->numel);
	return SPP_OK;
}

static const struct {
	const char *op;
	int (*eval)(const struct fold *f);
	int inputs; /* required inputs */
} ops[] = {
	{"Identity", NULL, 1}, {"Reshape", reshape, 2}, {"Flatten", flatten, 1},
	{"Squeeze", NULL, 1}, {"Unsqueeze", NULL, 1}, {"Transpose", transpose, 1},
	{"Slice", slice, 1}, {"Concat", concat, 1}, {"Gather", gather, 2}, {"Cast", cast, 1},
};

int onnx_fold_known(const char *op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i].op) == 0)
			return 1;
	return 0;
}

int onnx_fold_eval(struct onnx_ctx *c, const Onnx__NodeProto *n,
		   const struct spp_tensor *const *in, size_t nin, struct spp_tensor *out,
		   const char **why)
{
	struct fold f = {.c = c, .n = n, .in = in, .nin = nin, .out = out, .why = why};
	const char *op = n->op_type ? n->op_type : "";
	int copies = strcmp(op, "Identity") && strcmp(op, "Reshape") && strcmp(op, "Flatten") &&
		     strcmp(op, "Squeeze") && strcmp(op, "Unsqueeze");
	size_t i;

	*why = NULL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && strcmp(op, ops[i].op); i++)
		;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		*why = "is not an op spprof folds";
		return SPP_OK;
	}
	if (nin < (size_t)ops[i].inputs || !in[0] || (ops[i].inputs > 1 && !in[1]))
		return bad(&f, "a required input is missing");
	for (size_t j = 0; j < nin; j++) {
		const struct spp_tensor *t = in[j];

		if (t && (t->nnz_only || t->coo)) {
			*why = "reads a sparse tensor too large to densify";
			return SPP_OK;
		}
		if (t && t->numel && (!t->data || (esize(t->dtype) &&
						   t->nbytes / esize(t->dtype) < t->numel)))
			return bad(&f, "an input holds fewer bytes than its shape needs");
	}
	if (copies && !esize(in[0]->dtype) && strcmp(op, "Cast")) {
		*why = "would copy packed or block-quantized elements";
		return SPP_OK;
	}
	if (strcmp(op, "Identity") == 0)
		return shape(&f, in[0]->shape, in[0]->ndim) ? c->err->code : alias(&f, in[0]);
	if (strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0)
		return squeeze(&f, op[0] == 'U');
	return ops[i].eval(&f);
}
