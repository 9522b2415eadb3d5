/*
 * What the shape inference reads (onnx_shapes.c): node attributes, constant
 * inputs (initializers, Constant nodes, and the known values of small
 * integer tensors), the shapes of values; and the main graph's inputs,
 * bound to their shapes before the first node.
 */
#include "profiler/onnx/onnx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
			return n->attribute[i];
	return NULL;
}

int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = onnx_attr(n, name);

	return a ? a->i : dflt;
}

int onnx_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max, int *count)
{
	const Onnx__AttributeProto *a = onnx_attr(n, name);

	if (!a || a->n_ints > (size_t)max)
		return 0;
	for (size_t i = 0; i < a->n_ints; i++)
		v[i] = a->ints[i];
	*count = (int)a->n_ints;
	return 1;
}

int onnx_shape_of(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		  struct onnx_shape *out)
{
	if (!onnx_shape_part(c, s, name, out))
		return 0;
	for (int i = 0; i < out->rank; i++)
		if (out->d[i] == ONNX_DIM_UNKNOWN)
			return 0;
	return 1;
}

int onnx_shape_part(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		    struct onnx_shape *out)
{
	int w;

	out->nvals = -1;
	if (!name)
		return 0;
	for (const struct onnx_scope *p = s; p; p = p->parent) {
		const struct onnx_map_entry *e = onnx_map_get(&p->inferred, name);
		if (e) {
			*out = *(const struct onnx_shape *)e->ptr;
			/* a partial shape gives way to a complete value_info */
			for (int i = 0; i < out->rank; i++)
				if (out->d[i] == ONNX_DIM_UNKNOWN) {
					struct onnx_shape full = {.nvals = -1};

					if (onnx_scope_shape(s, name, full.d, &full.rank))
						*out = full;
					break;
				}
			return 1;
		}
	}
	if ((w = onnx_scope_weight(s, name)) >= 0) {
		const struct spp_tensor *t = &c->m->tensors[w];

		out->rank = t->ndim;
		memcpy(out->d, t->shape, sizeof(out->d));
		if (t->numel <= SPP_MAX_DIMS && t->ndim <= 1 &&
		    onnx_const_ints(c, s, name, out->vals, SPP_MAX_DIMS, &out->nvals) == 0)
			out->nvals = -1;
		return 1;
	}
	return onnx_scope_shape(s, name, out->d, &out->rank);
}

/* Element i of a constant integer tensor (I64 or I32, little-endian). */
static int64_t int_at(const struct spp_tensor *t, uint64_t i)
{
	const unsigned char *p = t->data + i * (t->dtype == SPP_DTYPE_I64 ? 8 : 4);
	uint64_t v = 0;

	for (int b = t->dtype == SPP_DTYPE_I64 ? 7 : 3; b >= 0; b--)
		v = v << 8 | p[b];
	return t->dtype == SPP_DTYPE_I64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
}

int onnx_const_ints(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		    int64_t *v, int max, int *count)
{
	int w = name ? onnx_scope_weight(s, name) : -1;

	if (w < 0) {
		struct onnx_shape sh;

		if (!name || !onnx_shape_of(c, s, name, &sh) || sh.nvals < 0 || sh.nvals > max)
			return 0;
		memcpy(v, sh.vals, (size_t)sh.nvals * sizeof(*v));
		*count = sh.nvals;
		return 1;
	}
	const struct spp_tensor *t = &c->m->tensors[w];
	int width = t->dtype == SPP_DTYPE_I64 ? 8 : t->dtype == SPP_DTYPE_I32 ? 4 : 0;

	if (!width || t->ndim > 1 || t->numel > (uint64_t)max || t->nnz_only ||
	    t->nbytes < t->numel * (uint64_t)width || (t->numel && !t->data))
		return 0;
	for (uint64_t i = 0; i < t->numel; i++)
		v[i] = int_at(t, i);
	*count = (int)t->numel;
	return 1;
}

int onnx_const_floats(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		      double *v, int max, int *count)
{
	int w = name ? onnx_scope_weight(s, name) : -1;
	const struct spp_tensor *t = w >= 0 ? &c->m->tensors[w] : NULL;

	if (!t || t->dtype != SPP_DTYPE_F32 || t->ndim > 1 || t->numel > (uint64_t)max ||
	    t->nnz_only || t->nbytes < t->numel * 4 || (t->numel && !t->data))
		return 0;
	for (uint64_t i = 0; i < t->numel; i++) {
		float f;

		memcpy(&f, t->data + 4 * i, 4); /* little-endian hosts only, as the loaders */
		v[i] = f;
	}
	*count = (int)t->numel;
	return 1;
}

/* Append one line to c->notes (cut where it is full). */
static void note(struct onnx_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct onnx_ctx *c, const char *fmt, ...)
{
	size_t used = strlen(c->notes);
	va_list ap;

	if (used + 2 >= sizeof(c->notes))
		return;
	if (used)
		c->notes[used++] = '\n';
	va_start(ap, fmt);
	vsnprintf(c->notes + used, sizeof(c->notes) - used, fmt, ap);
	va_end(ap);
}

/*
 * The input's dimensions as the file has them ("[batch, 3, 224, 224]") and
 * as --input-shape would give them, symbolic ones as 1 when batch_one and
 * first, else by name ("1x3x224x224", "30x<cols>").
 */
static void dims_text(const Onnx__TensorShapeProto *sh, int batch_one, char *file, char *arg,
		      size_t size)
{
	size_t fu = 0, au = 0;

	file[fu++] = '[';
	file[fu] = arg[0] = 0;
	for (size_t k = 0; k < sh->n_dim && fu + 2 < size && au + 1 < size; k++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];
		const char *sym = d->dim_param && *d->dim_param ? d->dim_param : "?";
		int w, v;

		if (d->has_dim_value && d->dim_value > 0) {
			w = snprintf(file + fu, size - fu, "%s%lld", k ? ", " : "", (long long)d->dim_value);
			v = snprintf(arg + au, size - au, "%s%lld", k ? "x" : "", (long long)d->dim_value);
		} else {
			w = snprintf(file + fu, size - fu, "%s%.20s", k ? ", " : "", sym);
			v = k == 0 && batch_one ? snprintf(arg + au, size - au, "1")
						: snprintf(arg + au, size - au, "%s<%.20s>", k ? "x" : "", sym);
		}
		fu += w > 0 && (size_t)w < size - fu ? (size_t)w : 0;
		au += v > 0 && (size_t)v < size - au ? (size_t)v : 0;
	}
	if (fu + 1 < size)
		file[fu++] = ']';
	file[fu] = 0;
}

/* The --input-shape entry for name, -1 when none. */
static int spec_of(const struct onnx_ctx *c, const char *name)
{
	for (int j = 0; c->opts && j < c->opts->ninput_shapes; j++)
		if (strcmp(c->opts->input_shapes[j].name, name) == 0)
			return j;
	return -1;
}

/* The file's shape of one input, a symbolic batch taken as 1, another
 * symbolic dimension ONNX_DIM_UNKNOWN; 1. */
static int file_shape(struct onnx_ctx *c, const char *name, const Onnx__TensorShapeProto *sh,
		      struct onnx_shape *x)
{
	char file[160], arg[160];
	int batch = 0, sym = -1;

	x->rank = (int)sh->n_dim;
	for (int k = 0; k < x->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];

		if (d->has_dim_value && d->dim_value > 0) {
			x->d[k] = d->dim_value;
		} else if (k == 0 && x->rank > 1) {
			x->d[k] = 1;
			batch = 1;
		} else {
			x->d[k] = ONNX_DIM_UNKNOWN;
			sym = sym < 0 ? k : sym;
		}
	}
	if (sym >= 0) {
		dims_text(sh, 0, file, arg, sizeof(file));
		note(c, "graph input '%.80s' %s: dimension %d is symbolic, so the layers whose N "
		     "depends on it take --n; --input-shape %.80s=%s sets it", name, file, sym, name,
		     arg);
	}
	if (batch) {
		dims_text(sh, 1, file, arg, sizeof(file));
		note(c, "graph input '%.80s' %s: its symbolic batch is taken as 1; "
		     "--input-shape %.80s=%s sets it", name, file, name, arg);
	}
	return 1;
}

int onnx_shapes_bind_inputs(struct onnx_ctx *c, const Onnx__GraphProto *g, struct onnx_scope *s)
{
	for (size_t i = 0; i < g->n_input; i++) {
		const Onnx__ValueInfoProto *vi = g->input[i];
		const char *name = vi->name;
		const Onnx__TensorShapeProto *sh =
			vi->type && vi->type->tensor_type ? vi->type->tensor_type->shape : NULL;
		struct onnx_shape x = {.nvals = -1};
		int j;

		/* an initializer listed among the inputs (IR version < 4) is a weight */
		if (!name || !*name || onnx_scope_weight(s, name) >= 0)
			continue;
		if ((j = spec_of(c, name)) >= 0) {
			const struct spp_input_shape *in = &c->opts->input_shapes[j];

			c->bound[j] = 1;
			if (sh && sh->n_dim != (size_t)in->rank)
				return onnx_fault(c, SPP_E_FORMAT, "--input-shape %.80s: %d dimensions "
						  "given, the graph input has %zu", name, in->rank,
						  sh->n_dim);
			x.rank = in->rank;
			memcpy(x.d, in->dims, sizeof(x.d));
		} else if (!sh || sh->n_dim > SPP_MAX_DIMS) {
			note(c, "graph input '%.80s' has no stored shape; the layers it feeds take --n "
			     "(--input-shape %.80s=AxBx... sets it)", name, name);
			continue;
		} else if (!file_shape(c, name, sh, &x)) {
			continue;
		}
		if (onnx_shape_set(s, name, &x))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	}
	return SPP_OK;
}
