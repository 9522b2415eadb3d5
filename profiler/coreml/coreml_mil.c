/*
 * An ML program's weights and layers (MIL.proto): the block of its main
 * function (the specialization of the function's opset), its "const" ops
 * (immediate values, or blobs of a weight file: a 64-byte header, then
 * per blob 64 bytes of metadata, sentinel 0xDEADBEEF, dtype, size and data
 * offset) and constexpr ops decoded (coreml_constexpr.c) as tensors named
 * by their outputs; layers from linear (weight [D_out, D_in]), conv (OIHW,
 * K ordered (kh, kw, c) as the design's), conv_transpose ([C_in, C_out,
 * kH, kW], one group) and matmul with a constant side (y [K, O], or [O, K]
 * with transpose_y; or a constant x). N from the output's shape over M,
 * for conv_transpose the input's over C_in.
 */
#include "profiler/coreml/coreml.h"
#include "base/beneath.h"
#include "base/le.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"

#define BLOB_SENTINEL UINT32_C(0xDEADBEEF)

/* MIL DataType and the weight file's BlobDataType of each dtype spprof reads; bits of a code. */
static const struct {
	int mil, blob;
	enum spp_dtype dtype;
	int bits; /* a sub-byte code (mask, palette index): its width; dtype COUNT */
} types[] = {
	{10, 1, SPP_DTYPE_F16, 0}, {11, 2, SPP_DTYPE_F32, 0}, {31, 3, SPP_DTYPE_U8, 0},
	{21, 4, SPP_DTYPE_I8, 0}, {13, 5, SPP_DTYPE_BF16, 0}, {22, 6, SPP_DTYPE_I16, 0},
	{32, 7, SPP_DTYPE_U16, 0}, {25, 8, SPP_DTYPE_I4, 0}, {37, 9, SPP_DTYPE_COUNT, 1},
	{36, 10, SPP_DTYPE_COUNT, 2}, {35, 11, SPP_DTYPE_U4, 0}, {39, 12, SPP_DTYPE_COUNT, 3},
	{38, 13, SPP_DTYPE_COUNT, 6}, {23, 14, SPP_DTYPE_I32, 0}, {33, 15, SPP_DTYPE_U32, 0},
	{40, 16, SPP_DTYPE_F8_E4M3, 0}, {41, 17, SPP_DTYPE_F8_E5M2, 0},
	{12, -1, SPP_DTYPE_F64, 0}, {24, -1, SPP_DTYPE_I64, 0}, {34, -1, SPP_DTYPE_U64, 0},
	{1, -1, SPP_DTYPE_BOOL, 0},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* The bytes n codes of r's type take. */
static uint64_t bytes_of(const struct mil_raw *r)
{
	uint64_t need = 0;

	if (r->dtype == SPP_DTYPE_COUNT)
		return (r->numel * (uint64_t)r->bits + 7) / 8;
	return spp_dtype_nbytes(r->dtype, r->numel, &need) ? UINT64_MAX : need;
}

/* The weight file named by a blob (its "@model_path/" beneath the model's folder), mapped
 * once: a name seen before by its spelling, any other by its inode (spp_model_map_beneath). */
static int blob_file(struct coreml *c, const char *name, int *file)
{
	const char *rel = strncmp(name, "@model_path/", 12) == 0 ? name + 12 : NULL;
	size_t dl = strlen(c->dir);

	if (!rel || spp_name_beneath(rel))
		return coreml_fault(c, "weight file '%s' is not a name under @model_path/", name);
	for (*file = 0; *file < c->m->nfiles; (*file)++) {
		const char *p = c->m->files[*file].path;

		if (strncmp(p, c->dir, dl) == 0 && p[dl] == '/' && strcmp(p + dl + 1, rel) == 0)
			return SPP_OK;
	}
	return spp_model_map_beneath(c->m, c->dir, rel, c->file, file, c->err);
}

/* r's bytes from the blob at offset of file (its metadata there). */
static int blob(struct coreml *c, const Coreml__Value__BlobFileValue *b, const char *name,
		struct mil_raw *r, int want)
{
	const struct spp_mapped_file *f;
	uint64_t at = b->offset, size, data;
	int rc, file = 0;

	if ((rc = blob_file(c, b->filename, &file)))
		return rc;
	f = &c->m->files[file];
	if (at > f->size || f->size - at < 64 || spp_le(f->base + at, 4) != BLOB_SENTINEL)
		return coreml_fault(c, "value '%s': no blob metadata (sentinel 0xDEADBEEF) at byte %"
				    PRIu64 " of '%s' (%" PRIu64 " bytes)", name, at, f->path, f->size);
	size = spp_le(f->base + at + 8, 8), data = spp_le(f->base + at + 16, 8);
	if ((int)spp_le(f->base + at + 4, 4) != want || data > f->size || size > f->size - data ||
	    size != bytes_of(r))
		return coreml_fault(c, "value '%s': blob at byte %" PRIu64 " of '%s' holds %" PRIu64
				    " bytes of type %u at %" PRIu64 ", its type needs %" PRIu64, name,
				    at, f->path, size, (unsigned)spp_le(f->base + at + 4, 4), data,
				    bytes_of(r));
	r->data = f->base + data, r->nbytes = size, r->offset = data, r->file = file;
	return SPP_OK;
}

/* An immediate tensor's bytes. */
static int immediate(struct coreml *c, const Coreml__TensorValue *v, const char *name,
		     struct mil_raw *r)
{
	if (v && v->floats)
		r->data = (const unsigned char *)v->floats->values, r->nbytes = 4 * v->floats->n_values;
	else if (v && v->ints)
		r->data = (const unsigned char *)v->ints->values, r->nbytes = 4 * v->ints->n_values;
	else if (v && v->longints)
		r->data = (const unsigned char *)v->longints->values,
		r->nbytes = 8 * v->longints->n_values;
	else if (v && v->bools)
		r->data = (const unsigned char *)v->bools->values,
		r->nbytes = 4 * v->bools->n_values;
	else if (v && v->bytes)
		r->data = v->bytes->values.data, r->nbytes = v->bytes->values.len;
	/* ints hold any integer type one int32 per value, bools one protobuf-c boolean (an int) */
	if (v && (v->ints || v->bools))
		r->dtype = SPP_DTYPE_I32, r->bits = 0;
	if (r->nbytes != bytes_of(r))
		return coreml_fault(c, "value '%s': %" PRIu64 " immediate bytes, its type needs %"
				    PRIu64, name, r->nbytes, bytes_of(r));
	return SPP_OK;
}

int coreml_value(struct coreml *c, const Coreml__Value *v, const char *name, struct mil_raw *r)
{
	const Coreml__TensorType *tt = v && v->type ? v->type->tensortype : NULL;
	size_t row = 0;

	memset(r, 0, sizeof(*r));
	if (!tt || tt->n_dimensions > SPP_MAX_DIMS || (!v->immediatevalue && !v->blobfilevalue))
		return coreml_fault(c, "value '%s' is not a tensor of at most %d dimensions", name,
				    SPP_MAX_DIMS);
	while (row < NTYPES && types[row].mil != tt->datatype)
		row++;
	if (row == NTYPES)
		return coreml_fault(c, "value '%s' has data type %d, not one spprof reads", name,
				    tt->datatype);
	r->dtype = types[row].dtype, r->bits = types[row].bits, r->numel = 1;
	for (size_t d = 0; d < tt->n_dimensions; d++) {
		uint64_t s = tt->dimensions[d]->constant ? tt->dimensions[d]->constant->size : 0;

		if (!tt->dimensions[d]->constant || s > (UINT64_C(1) << 40) ||
		    (s && r->numel > (UINT64_C(1) << 40) / s))
			return coreml_fault(c, "value '%s': dimension %zu is not a constant size "
					    "of at most 2^40 elements", name, d);
		r->shape[r->ndim++] = (int64_t)s;
		r->numel *= s;
	}
	if (v->blobfilevalue)
		return types[row].blob < 0 ? coreml_fault(c, "value '%s': a blob of data type %d",
							  name, tt->datatype)
					   : blob(c, v->blobfilevalue, name, r, types[row].blob);
	return immediate(c, v->immediatevalue->tensor, name, r);
}

/* ---- the program ---- */

_Static_assert(sizeof(protobuf_c_boolean) == 4, "an immediate bool is read as 4 bytes");

struct named {
	const char *name;
	const Coreml__NamedValueType *type;
	int op; /* the op making it; -1: a function input */
};

struct mil {
	struct coreml *c;
	const Coreml__Block *b;
	struct named *names; /* sorted by name */
	size_t nnames;
	int *tensor_of; /* per op: index + 1 of the model tensor its output 0 is, 0: none */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static const struct named *lookup(const struct mil *p, const char *name)
{
	struct named key = {.name = name};

	return name ? bsearch(&key, p->names, p->nnames, sizeof(key), by_name) : NULL;
}

/* The elements of a named value's type when every dimension is a constant; 0 otherwise. */
static uint64_t elements(const struct mil *p, const char *name)
{
	const struct named *n = lookup(p, name);
	const Coreml__TensorType *t = n && n->type->type ? n->type->type->tensortype : NULL;
	uint64_t e = 1;

	for (size_t d = 0; t && d < t->n_dimensions; d++) {
		uint64_t s = t->dimensions[d]->constant ? t->dimensions[d]->constant->size : 0;

		if (!s || e > (UINT64_C(1) << 50) / s)
			return 0;
		e *= s;
	}
	return t && t->n_dimensions ? e : 0;
}

/* op's input argument key: its first binding; NULL when none. */
static const Coreml__Binding *input(const Coreml__Operation *op, const char *key)
{
	for (size_t i = 0; i < op->n_inputs; i++)
		if (op->inputs[i]->key && strcmp(op->inputs[i]->key, key) == 0 &&
		    op->inputs[i]->value && op->inputs[i]->value->n_arguments)
			return op->inputs[i]->value->arguments[0];
	return NULL;
}

static const Coreml__Value *attribute(const Coreml__Operation *op, const char *key)
{
	for (size_t i = 0; i < op->n_attributes; i++)
		if (op->attributes[i]->key && strcmp(op->attributes[i]->key, key) == 0)
			return op->attributes[i]->value;
	return NULL;
}

/* A constexpr's parameter: iOS16's attribute, or iOS18's input (a value, or a const's name). */
static int param(struct coreml *c, const Coreml__Operation *op, const char *name,
		 struct mil_raw *r)
{
	const Coreml__Value *v = attribute(op, name);
	const Coreml__Binding *b = v ? NULL : input(op, name);
	const struct named *n;

	if (b && b->value)
		v = b->value;
	else if (b && (n = lookup(c->prog, b->name)) && n->op >= 0 &&
		 strcmp(c->prog->b->operations[n->op]->type, "const") == 0)
		v = attribute(c->prog->b->operations[n->op], "val");
	else if (b)
		return 1; /* made by another constexpr: chained compression, not read */
	return v ? coreml_value(c, v, name, r) : 2;
}

/* The model tensor of op i's output: a const's value, a constexpr's decoding. */
static int op_tensor(struct mil *p, int i)
{
	const Coreml__Operation *op = p->b->operations[i];
	struct spp_tensor t = {0};
	struct mil_raw r;
	int rc;

	if (!op->type || !op->n_outputs || !op->outputs[0]->name)
		return SPP_OK;
	if (strcmp(op->type, "const") == 0) {
		const Coreml__Value *v = attribute(op, "val");

		if (!v || (rc = coreml_value(p->c, v, op->outputs[0]->name, &r)))
			return v ? rc : SPP_OK;
		if (r.dtype == SPP_DTYPE_COUNT || !r.nbytes)
			return SPP_OK;
		t = (struct spp_tensor){.dtype = r.dtype, .ndim = r.ndim, .numel = r.numel,
					.data = r.data, .nbytes = r.nbytes, .offset = r.offset,
					.file = r.file};
		memcpy(t.shape, r.shape, sizeof(t.shape));
	} else if (strncmp(op->type, "constexpr_", 10) == 0) {
		if ((rc = coreml_constexpr(p->c, op, param, &t)))
			return rc > 0 ? SPP_OK : rc;
	} else {
		return SPP_OK;
	}
	if (!(t.name = strdup(op->outputs[0]->name)))
		return coreml_nomem(p->c);
	if ((rc = coreml_add_tensor(p->c, &t)) < 0)
		return rc;
	p->tensor_of[i] = rc + 1;
	return SPP_OK;
}

/* How each MIL op's weight is a GEMM W, one row per op. */
static const struct {
	const char *type, *weight, *other;
	enum spp_op kind;
} ops[] = {
	{"linear", "weight", "x", SPP_OP_LINEAR}, {"conv", "weight", "x", SPP_OP_CONV2D},
	{"conv_transpose", "weight", "x", SPP_OP_CONV_TRANSPOSE}, {"matmul", "y", "x", SPP_OP_MATMUL},
};

/* The model tensor bound to op's input key by name; -1: none. */
static int bound(const struct mil *p, const Coreml__Operation *op, const char *key)
{
	const Coreml__Binding *b = input(op, key);
	const struct named *n = b ? lookup(p, b->name) : NULL;

	return n && n->op >= 0 ? p->tensor_of[n->op] - 1 : -1;
}

/* A bool or int input given as a value (or a const's): transpose_y, groups; dflt if none. */
static int64_t flag(const struct mil *p, const Coreml__Operation *op, const char *key,
		    int64_t dflt)
{
	const Coreml__Binding *b = input(op, key);
	const struct named *n = b && !b->value ? lookup(p, b->name) : NULL;
	const Coreml__Value *v = b && b->value ? b->value : n && n->op >= 0
		? attribute(p->b->operations[n->op], "val") : NULL;
	const Coreml__TensorValue *t = v && v->immediatevalue ? v->immediatevalue->tensor : NULL;

	if (t && t->bools && t->bools->n_values)
		return t->bools->values[0];
	return t && t->ints && t->ints->n_values ? t->ints->values[0] : dflt;
}

/* The W view of weight w of op row r; 0 when the op's weight is not one spprof reads. */
static int view(const struct mil *p, const Coreml__Operation *op, int r, int side,
		const struct spp_tensor *w, struct spp_layer_desc *d)
{
	struct spp_layer l;

	if (ops[r].kind == SPP_OP_MATMUL) { /* y [K, O] (transpose_y [O, K]); x [M, K] */
		int t = flag(p, op, side ? "transpose_x" : "transpose_y", 0) != 0;

		if (w->ndim != 2)
			return 0;
		spp_desc_view(d, w->shape[side ? t : !t], w->numel, side ? t : !t);
		return 1;
	}
	if (ops[r].kind == SPP_OP_CONV_TRANSPOSE) { /* [C_in, C_out, kH, kW], one group */
		if (w->ndim < 3 || w->ndim > 5 || !w->shape[0] || flag(p, op, "groups", 1) != 1)
			return 0;
		spp_desc_view(d, (int64_t)(w->numel / (uint64_t)w->shape[0]), w->numel, 1);
		return 1;
	}
	if (w->ndim < 2 || w->ndim > 4 || (ops[r].kind == SPP_OP_LINEAR && w->ndim != 2))
		return 0;
	spp_layer_init(&l, w, 0);
	d->op = (int)l.op;
	d->m = l.view.m, d->k = l.view.k, d->base = l.view.base, d->row_stride = l.view.row_stride;
	d->inner = l.view.inner, d->inner_stride = l.view.inner_stride;
	d->outer_stride = l.view.outer_stride;
	return 1;
}

static int op_layer(struct mil *p, int i)
{
	const Coreml__Operation *op = p->b->operations[i];
	const char *out = op->n_outputs ? op->outputs[0]->name : NULL;
	struct spp_layer_desc d = {0};
	int r = 0, side = 0, wi, bi;
	uint64_t rows;

	while (r < (int)(sizeof(ops) / sizeof(ops[0])) && (!op->type || strcmp(ops[r].type, op->type)))
		r++;
	if (r == (int)(sizeof(ops) / sizeof(ops[0])))
		return SPP_OK;
	if ((wi = bound(p, op, ops[r].weight)) < 0 && ops[r].kind == SPP_OP_MATMUL)
		side = 1, wi = bound(p, op, "x");
	if (wi < 0)
		return SPP_OK;
	d.op = (int)ops[r].kind;
	d.tensor = wi;
	if (!view(p, op, r, side, &p->c->m->tensors[wi], &d))
		return SPP_OK;
	bi = bound(p, op, "bias");
	d.bias = bi >= 0 && p->c->m->tensors[bi].numel == (uint64_t)d.m ? bi + 1 : 0;
	if (ops[r].kind == SPP_OP_CONV_TRANSPOSE) {
		const Coreml__Binding *x = input(op, "x");

		rows = x ? elements(p, x->name) : 0;
		d.n = rows && rows % (uint64_t)d.k == 0 ? (int64_t)(rows / (uint64_t)d.k) : 0;
	} else {
		rows = elements(p, out);
		d.n = rows && rows % (uint64_t)d.m == 0 ? (int64_t)(rows / (uint64_t)d.m) : 0;
	}
	return spp_model_add_layer(p->c->m, &d, out, op->type, p->c->file, "the program's ops",
				   p->c->err);
}

/* The main function's block: "main" or the first, its opset's specialization or the first. */
static const Coreml__Block *main_block(const Coreml__Program *prog, const Coreml__Function **fn)
{
	const Coreml__Function *f = NULL;

	for (size_t i = 0; i < prog->n_functions && !f; i++)
		if (prog->functions[i]->key && strcmp(prog->functions[i]->key, "main") == 0)
			f = prog->functions[i]->value;
	if (!f && prog->n_functions)
		f = prog->functions[0]->value;
	*fn = f;
	for (size_t i = 0; f && i < f->n_block_specializations; i++)
		if (f->block_specializations[i]->key && f->opset &&
		    strcmp(f->block_specializations[i]->key, f->opset) == 0)
			return f->block_specializations[i]->value;
	return f && f->n_block_specializations ? f->block_specializations[0]->value : NULL;
}

static int index_names(struct mil *p, const Coreml__Function *fn)
{
	size_t n = fn->n_inputs;

	for (size_t i = 0; i < p->b->n_operations; i++)
		n += p->b->operations[i]->n_outputs;
	if (!(p->names = calloc(n + 1, sizeof(*p->names))) ||
	    !(p->tensor_of = calloc(p->b->n_operations + 1, sizeof(int))))
		return coreml_nomem(p->c);
	for (size_t i = 0; i < fn->n_inputs; i++)
		if (fn->inputs[i]->name)
			p->names[p->nnames++] = (struct named){fn->inputs[i]->name, fn->inputs[i], -1};
	for (size_t i = 0; i < p->b->n_operations; i++)
		for (size_t k = 0; k < p->b->operations[i]->n_outputs; k++) {
			const Coreml__NamedValueType *o = p->b->operations[i]->outputs[k];

			if (o->name)
				p->names[p->nnames++] = (struct named){o->name, o, (int)i};
		}
	qsort(p->names, p->nnames, sizeof(*p->names), by_name);
	return SPP_OK;
}

int coreml_mil(struct coreml *c, const Coreml__Program *prog)
{
	const Coreml__Function *fn;
	struct mil p = {.c = c, .b = main_block(prog, &fn)};
	int rc;

	if (!p.b)
		return coreml_fault(c, "the ML program has no function with a block");
	c->prog = &p;
	rc = index_names(&p, fn);
	for (size_t i = 0; !rc && i < p.b->n_operations; i++)
		rc = op_tensor(&p, (int)i);
	for (size_t i = 0; !rc && i < p.b->n_operations; i++)
		rc = op_layer(&p, (int)i);
	free(p.names);
	free(p.tensor_of);
	c->prog = NULL;
	return rc;
}
