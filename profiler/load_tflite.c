/*
 * TensorFlow Lite models (.tflite): a FlatBuffer (file identifier "TFL3")
 * read with the verified reader of flatbuf.h, slots by TFLite's schema.
 *
 * Choices:
 * - Subgraph 0 is the model (the schema's convention); its constant
 *   tensors (a non-empty buffer, inside the FlatBuffer or, past 2 GB, at
 *   Buffer.offset/size in the file) are the model's tensors, borrowed in
 *   place. Strings, resources and variants are not weights.
 * - A sparse tensor (Tensor.sparsity) is decoded exactly into its dense
 *   shape (tflite_sparse.c), the file's own bytes, values and index
 *   vectors, in layers[].file_storage ("tflite-sparse").
 * - Quantized weights stay their stored code (int8 with zero points 0:
 *   zero is code 0; float16 as F16). An integer weight with a non-zero
 *   zero point is decoded to F32, scale * (q - zero_point) per channel of
 *   quantized_dimension, so its zeros are the codes equal to the zero
 *   point ("tflite-uint8-affine", ... in file_storage).
 * - Layers: each operator of the table below (and MediaPipe's custom
 *   Convolution2DTransposeBias) whose weight input is, or is
 *   made by DEQUANTIZE / DENSIFY from, a constant tensor: FULLY_CONNECTED
 *   [O, I]; CONV_2D [O, kh, kw, I] (W = [O, kh*kw*I], K as the design
 *   orders it); DEPTHWISE_CONV_2D [1, kh, kw, C*mult] (W = [C*mult,
 *   kh*kw]), the two convs' kernels read on those axes (enum
 *   spp_layout); TRANSPOSE_CONV [O, kh, kw, I] (W = [O*kh*kw, I]);
 *   BATCH_MATMUL with a constant B [K, O] (adj_y: [O, K]) or constant A.
 * - N from the subgraph's shapes: the output's elements over M, or for
 *   TRANSPOSE_CONV and BATCH_MATMUL the input's over K; --n overrides.
 */
#include "profiler/loaders.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"
#include "profiler/tflite.h"

/* One row per TFLite TensorType spprof reads as a weight. */
static const struct {
	int code;
	enum spp_dtype dtype;
	const char *affine; /* file_storage of a decoded zero-pointed integer; NULL: never */
} types[] = {
	{0, SPP_DTYPE_F32, NULL}, {1, SPP_DTYPE_F16, NULL}, {2, SPP_DTYPE_I32, NULL},
	{3, SPP_DTYPE_U8, "tflite-uint8-affine"}, {4, SPP_DTYPE_I64, NULL},
	{6, SPP_DTYPE_BOOL, NULL}, {7, SPP_DTYPE_I16, "tflite-int16-affine"},
	{8, SPP_DTYPE_C64, NULL}, {9, SPP_DTYPE_I8, "tflite-int8-affine"},
	{10, SPP_DTYPE_F64, NULL}, {12, SPP_DTYPE_U64, NULL}, {15, SPP_DTYPE_U32, NULL},
	{16, SPP_DTYPE_U16, NULL}, {17, SPP_DTYPE_I4, NULL},
};

/* How each operator's weight is a GEMM W, one row per builtin operator, or per
 * custom one (CUSTOM, its custom_code the row's name). */
enum layout { ROWS, ROWS_OHW, COLS_LAST, MATMUL };
enum { OP_DEQUANTIZE = 6, OP_CUSTOM = 32, OP_DENSIFY = 124 };
#define OUT (-1) /* N from the output's elements over M */
static const struct {
	int code;
	const char *name;
	int weight, bias, rank, n_input;
	enum layout layout;
	enum spp_op kind;
	enum spp_layout axes; /* a conv weight's dimensions, for its kernels */
} ops[] = {
	{9, "FULLY_CONNECTED", 1, 2, 2, OUT, ROWS, SPP_OP_LINEAR, SPP_LAYOUT_OIHW},
	{3, "CONV_2D", 1, 2, 4, OUT, ROWS, SPP_OP_CONV2D, SPP_LAYOUT_OHWI},
	{4, "DEPTHWISE_CONV_2D", 1, 2, 4, OUT, COLS_LAST, SPP_OP_CONV2D, SPP_LAYOUT_1HWO},
	{67, "TRANSPOSE_CONV", 1, -1, 4, 2, ROWS_OHW, SPP_OP_CONV_TRANSPOSE, SPP_LAYOUT_OIHW},
	{126, "BATCH_MATMUL", 1, -1, 0, 0, MATMUL, SPP_OP_MATMUL, SPP_LAYOUT_OIHW},
	/* MediaPipe's transposed conv (selfie segmentation): TRANSPOSE_CONV's weight */
	{OP_CUSTOM, "Convolution2DTransposeBias", 1, -1, 4, 0, ROWS_OHW, SPP_OP_CONV_TRANSPOSE,
	 SPP_LAYOUT_OIHW},
};

int spp_tfl_fault(struct tfl *t, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return spp_error_format(t->err, t->path, "%s", msg);
}

static int fb_fault(struct tfl *t)
{
	return spp_tfl_fault(t, "not a valid TFLite FlatBuffer: %s at byte %" PRIu64, t->fb.bad,
			     t->fb.bad_at);
}

int spp_tflite_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return got >= 8 && memcmp(b + 4, "TFL3", 4) == 0;
}

/* ---- tensors ---- */

/* The bytes of buffer bi: *at, *len (0: none). */
static int buffer_bytes(struct tfl *t, uint64_t bi, uint64_t *at, uint64_t *len)
{
	struct spp_fb_table b = spp_fb_at(&t->fb, &t->buffers, (uint32_t)bi);
	struct spp_fb_vec data = spp_fb_vector(&t->fb, &b, 0, 1);
	uint64_t off = spp_fb_uint(&t->fb, &b, 1, 8, 0), size = spp_fb_uint(&t->fb, &b, 2, 8, 0);

	if (t->fb.bad)
		return fb_fault(t);
	*at = data.pos, *len = data.len;
	if (!data.len && off > 1) { /* past 2 GB: a range of the file after the FlatBuffer */
		if (off > t->fb.n || size > t->fb.n - off)
			return spp_tfl_fault(t, "buffer %" PRIu64 " at %" PRIu64 " + %" PRIu64
					     " runs past the end", bi, off, size);
		*at = off, *len = size;
	}
	return SPP_OK;
}

/* w's shape from the vector; its element count. */
static int shape_of(struct tfl *t, const struct spp_fb_vec *v, struct spp_tensor *w)
{
	if (v->len > SPP_MAX_DIMS)
		return spp_tfl_fault(t, "tensor '%s': rank %u, more than %d", w->name, v->len,
				     SPP_MAX_DIMS);
	w->ndim = (int)v->len;
	w->numel = 1;
	for (int d = 0; d < w->ndim; d++) {
		int64_t s = spp_fb_vec_int(&t->fb, v, (uint32_t)d);

		if (s < 0 || (s && w->numel > (UINT64_C(1) << 50) / (uint64_t)s))
			return spp_tfl_fault(t, "tensor '%s': dimension %d is %" PRId64 " (a constant "
					     "needs 0..2^50 elements)", w->name, d, s);
		w->shape[d] = s;
		w->numel *= (uint64_t)s;
	}
	return SPP_OK;
}

/* w's values decoded as scale * (q - zero_point) into an F32 copy. */
static int dequantize(struct tfl *t, const struct spp_fb_table *q, struct spp_tensor *w)
{
	struct spp_fb_vec scale = spp_fb_vector(&t->fb, q, 2, 4), zp = spp_fb_vector(&t->fb, q, 3, 8);
	int64_t qd = spp_fb_int(&t->fb, q, 6, 4, 0), inner = 1, ch = 1;
	float *v;

	if (qd < 0 || qd >= (w->ndim ? w->ndim : 1) ||
	    (scale.len != 1 && (!w->ndim || scale.len != (uint64_t)w->shape[qd])) ||
	    (zp.len != 1 && zp.len != scale.len))
		return spp_tfl_fault(t, "tensor '%s': %u scales and %u zero points for quantized "
				     "dimension %" PRId64, w->name, scale.len, zp.len, qd);
	for (int d = (int)qd + 1; d < w->ndim; d++)
		inner *= w->shape[d];
	ch = scale.len;
	if (spp_model_charge(t->m, w->numel * 4, t->path, "a dequantized weight", t->err))
		return t->err->code;
	if (!(v = malloc(w->numel ? (size_t)w->numel * 4 : 1)) || spp_model_own(t->m, v, t->err))
		return v ? t->err->code : spp_error_set(t->err, SPP_E_NOMEM, "out of memory");
	for (uint64_t i = 0; i < w->numel; i++) {
		uint32_t c = (uint32_t)((i / (uint64_t)inner) % (uint64_t)ch);
		uint32_t sc = (uint32_t)spp_fb_vec_uint(&t->fb, &scale, c);
		double code = w->dtype == SPP_DTYPE_U8 ? w->data[i] : w->dtype == SPP_DTYPE_I8
			? (double)(int8_t)w->data[i] : (double)(int16_t)(w->data[2 * i] |
								    w->data[2 * i + 1] << 8);
		float s;

		memcpy(&s, &sc, 4);
		v[i] = (float)((double)s * (code - (double)spp_fb_vec_int(&t->fb, &zp,
									  zp.len > 1 ? c : 0)));
	}
	w->stored_bytes = w->stored_bytes ? w->stored_bytes : w->nbytes;
	w->data = (const unsigned char *)v;
	w->dtype = SPP_DTYPE_F32;
	w->nbytes = w->numel * 4;
	return SPP_OK;
}

/* Whether quantization q has a zero point other than 0. */
static int zero_pointed(struct tfl *t, const struct spp_fb_table *q)
{
	struct spp_fb_vec zp = spp_fb_vector(&t->fb, q, 3, 8);

	for (uint32_t i = 0; i < zp.len; i++)
		if (spp_fb_vec_int(&t->fb, &zp, i))
			return 1;
	return 0;
}

/* The sparse tensor w decoded from its stored values [at, at + len). */
static int densify(struct tfl *t, const struct spp_fb_table *sp, struct spp_tensor *w,
		   uint64_t at, uint64_t len)
{
	uint64_t need, idx = 0, es;
	unsigned char *out;
	int rc;

	if (spp_dtype_nbytes(w->dtype, w->numel, &need) || spp_dtype_nbytes(w->dtype, 1, &es) ||
	    !es || len % es)
		return spp_tfl_fault(t, "tensor '%s': a sparse %s tensor of %" PRIu64 " bytes",
				     w->name, spp_dtype_name(w->dtype), len);
	if (spp_model_charge(t->m, need, t->path, "a sparse weight", t->err))
		return t->err->code;
	if (!(out = calloc(need ? need : 1, 1)) || spp_model_own(t->m, out, t->err))
		return out ? t->err->code : spp_error_set(t->err, SPP_E_NOMEM, "out of memory");
	if ((rc = spp_tfl_densify(t, sp, w, (int)es, t->fb.b + at, len / es, out, &idx)))
		return rc;
	w->data = out;
	w->nbytes = need;
	w->stored_as = "tflite-sparse";
	w->stored_bytes = len + idx;
	return SPP_OK;
}

/* Subgraph tensor i into the model when it is a constant spprof reads. */
static int load_tensor(struct tfl *t, uint32_t i)
{
	struct spp_fb_table tt = spp_fb_at(&t->fb, &t->tensors, i);
	struct spp_fb_vec shape = spp_fb_vector(&t->fb, &tt, 0, 4);
	int64_t type = spp_fb_int(&t->fb, &tt, 1, 1, 0);
	uint64_t bi = spp_fb_uint(&t->fb, &tt, 2, 4, 0), at = 0, len = 0, need;
	struct spp_fb_table q = spp_fb_child(&t->fb, &tt, 4), sp = spp_fb_child(&t->fb, &tt, 6);
	uint32_t nl;
	const char *name = spp_fb_string(&t->fb, &tt, 3, &nl);
	struct spp_tensor w = {.file = 0};
	size_t r = 0;
	int rc;

	if (t->fb.bad)
		return fb_fault(t);
	if (bi >= t->buffers.len && bi)
		return spp_tfl_fault(t, "tensor %u names buffer %" PRIu64 " of %u", i, bi,
				     t->buffers.len);
	if (!bi || (rc = buffer_bytes(t, bi, &at, &len)) || !len)
		return bi ? rc : SPP_OK;
	while (r < sizeof(types) / sizeof(types[0]) && types[r].code != type)
		r++;
	if (r == sizeof(types) / sizeof(types[0]))
		return SPP_OK; /* strings, resources, variants: not weights */
	w.dtype = types[r].dtype;
	if (name && nl ? !(w.name = strndup(name, nl)) : asprintf(&w.name, "tensor_%u", i) < 0)
		return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
	if ((rc = shape_of(t, &shape, &w)) || (sp.pos && (rc = densify(t, &sp, &w, at, len))))
		return free(w.name), rc;
	if (!sp.pos) {
		if (spp_dtype_nbytes(w.dtype, w.numel, &need) || need != len)
			return rc = spp_tfl_fault(t, "tensor '%s': its buffer holds %" PRIu64 " bytes, "
						  "its shape and type need %" PRIu64, w.name, len,
						  need), free(w.name), rc;
		w.data = t->fb.b + at, w.offset = at, w.nbytes = len;
	}
	if (q.pos && types[r].affine && zero_pointed(t, &q)) {
		w.stored_as = types[r].affine;
		if ((rc = dequantize(t, &q, &w)))
			return free(w.name), rc;
	}
	if ((rc = spp_model_add_tensor(t->m, &w, t->path, t->err)))
		return rc;
	t->model_tensor[i] = t->m->ntensors;
	return t->fb.bad ? fb_fault(t) : SPP_OK;
}

/* ---- layers ---- */

/* The elements of subgraph tensor j by its shape; 0 when unknown. */
static uint64_t elements(struct tfl *t, int64_t j)
{
	struct spp_fb_table tt;
	struct spp_fb_vec s;
	uint64_t n = 1;

	if (j < 0 || j >= t->tensors.len)
		return 0;
	tt = spp_fb_at(&t->fb, &t->tensors, (uint32_t)j);
	s = spp_fb_vector(&t->fb, &tt, 0, 4);
	for (uint32_t d = 0; d < s.len; d++) {
		int64_t v = spp_fb_vec_int(&t->fb, &s, d);

		if (v <= 0 || n > (UINT64_C(1) << 50) / (uint64_t)v)
			return 0;
		n *= (uint64_t)v;
	}
	return s.len ? n : 0;
}

/* The builtin code of operator o (the larger of its two code fields); a custom
 * one's custom_code in *custom (NULL: none). */
int64_t spp_tfl_op_code(struct tfl *t, const struct spp_fb_table *o, const char **custom,
		       uint32_t *custom_len)
{
	uint64_t ci = spp_fb_uint(&t->fb, o, 0, 4, 0);
	struct spp_fb_table c = spp_fb_at(&t->fb, &t->codes, (uint32_t)ci);
	int64_t old = spp_fb_int(&t->fb, &c, 0, 1, 0), code = spp_fb_int(&t->fb, &c, 3, 4, 0);

	if (custom)
		*custom = spp_fb_string(&t->fb, &c, 1, custom_len);
	return ci < t->codes.len ? (old > code ? old : code) : -1;
}

/* The row of ops[] of builtin code (and custom name); -1: none. */
static int op_row(int64_t code, const char *custom, uint32_t len)
{
	for (size_t r = 0; r < sizeof(ops) / sizeof(ops[0]); r++)
		if (ops[r].code == code && (code != OP_CUSTOM || (custom && strlen(ops[r].name) == len &&
								   !memcmp(custom, ops[r].name, len))))
			return (int)r;
	return -1;
}

/* The model tensor of subgraph tensor j, through DEQUANTIZE and DENSIFY; -1: none. */
static int constant(struct tfl *t, int64_t j)
{
	for (int hop = 0; hop < 4 && j >= 0 && j < t->tensors.len; hop++) {
		struct spp_fb_table o;
		struct spp_fb_vec in;
		int64_t code;

		if (t->model_tensor[j])
			return t->model_tensor[j] - 1;
		if (t->producer[j] < 0)
			return -1;
		o = spp_fb_at(&t->fb, &t->ops, (uint32_t)t->producer[j]);
		code = spp_tfl_op_code(t, &o, NULL, NULL);
		in = spp_fb_vector(&t->fb, &o, 1, 4);
		if ((code != OP_DEQUANTIZE && code != OP_DENSIFY) || !in.len)
			return -1;
		j = spp_fb_vec_int(&t->fb, &in, 0);
	}
	return -1;
}

/* BATCH_MATMUL's W: constant B (adj_y: stored [O, K]) or constant A; its other input. */
static int matmul_view(struct tfl *t, const struct spp_fb_table *o, const struct spp_fb_vec *in,
		       struct spp_layer_desc *d, int64_t *other)
{
	struct spp_fb_table opt = spp_fb_child(&t->fb, o, 4);
	int b = constant(t, spp_fb_vec_int(&t->fb, in, 1)), a = constant(t, spp_fb_vec_int(&t->fb, in, 0));
	int side = b >= 0 ? 1 : 0, w = b >= 0 ? b : a;
	int adj = spp_fb_uint(&t->fb, &opt, side ? 1 : 0, 1, 0) != 0; /* a bool: any byte but 0 */
	const struct spp_tensor *x;

	if (w < 0 || (x = &t->m->tensors[w])->ndim < 2 || !x->numel ||
	    x->numel != (uint64_t)(x->shape[x->ndim - 2] * x->shape[x->ndim - 1]))
		return 0; /* no constant side, or a batch of matrices */
	d->tensor = w;
	/* B [K, O]: W = B^T; adj_y B [O, K]; A [M, K]; adj_x A [K, M] */
	spp_desc_view(d, x->shape[x->ndim - 1 - (side ? adj : !adj)], x->numel, side != adj);
	*other = spp_fb_vec_int(&t->fb, in, side ? 0 : 1);
	return 1;
}

/* The layer of operator i, when it is one of the table's with a constant weight. */
static int op_layer(struct tfl *t, uint32_t i)
{
	struct spp_fb_table o = spp_fb_at(&t->fb, &t->ops, i);
	struct spp_fb_vec in = spp_fb_vector(&t->fb, &o, 1, 4), out = spp_fb_vector(&t->fb, &o, 2, 4);
	int64_t nin = -1, node = out.len ? spp_fb_vec_int(&t->fb, &out, 0) : -1;
	struct spp_layer_desc d = {0};
	char *node_name = NULL;
	const char *custom;
	uint32_t custom_len = 0;
	int64_t code = spp_tfl_op_code(t, &o, &custom, &custom_len);
	uint64_t rows;
	int r = op_row(code, custom, custom_len), w, rc;

	if (r < 0 || in.len < 2)
		return t->fb.bad ? fb_fault(t) : SPP_OK;
	d.op = (int)ops[r].kind;
	d.layout = (int)ops[r].axes;
	if (ops[r].layout == MATMUL) {
		if (!matmul_view(t, &o, &in, &d, &nin))
			return SPP_OK;
	} else {
		const struct spp_tensor *x;

		if ((w = constant(t, spp_fb_vec_int(&t->fb, &in, (uint32_t)ops[r].weight))) < 0 ||
		    (x = &t->m->tensors[w])->ndim != ops[r].rank || !x->numel)
			return SPP_OK;
		d.tensor = w;
		spp_desc_view(&d, ops[r].layout == COLS_LAST ? x->shape[3] : ops[r].layout == ROWS_OHW
			      ? x->shape[0] * x->shape[1] * x->shape[2] : x->shape[0], x->numel,
			      ops[r].layout == COLS_LAST);
		if (ops[r].bias >= 0 && (uint32_t)ops[r].bias < in.len) {
			int b = constant(t, spp_fb_vec_int(&t->fb, &in, (uint32_t)ops[r].bias));

			d.bias = b >= 0 && t->m->tensors[b].numel == (uint64_t)d.m ? b + 1 : 0;
		}
		if (ops[r].n_input >= 0 && (uint32_t)ops[r].n_input < in.len)
			nin = spp_fb_vec_int(&t->fb, &in, (uint32_t)ops[r].n_input);
	}
	rows = ops[r].n_input == OUT ? elements(t, node) : elements(t, nin);
	if (d.m > 0 && d.k > 0) {
		uint64_t per = ops[r].n_input == OUT ? (uint64_t)d.m : (uint64_t)d.k;

		d.n = rows && rows % per == 0 ? (int64_t)(rows / per) : 0;
	}
	if (node >= 0 && node < t->tensors.len) {
		struct spp_fb_table nt = spp_fb_at(&t->fb, &t->tensors, (uint32_t)node);
		uint32_t nl;
		const char *s = spp_fb_string(&t->fb, &nt, 3, &nl);

		if (s && nl && !(node_name = strndup(s, nl)))
			return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
	}
	rc = t->fb.bad ? fb_fault(t) : spp_model_add_layer(t->m, &d, node_name, ops[r].name, t->path,
							   "the subgraph's operators", t->err);
	free(node_name);
	return rc;
}

/* ---- the model ---- */

/* Subgraph 0's tables, its constant tensors, who writes each tensor, its layers. */
static int load(struct tfl *t)
{
	struct spp_fb_table root = spp_fb_root(&t->fb), sg;
	struct spp_fb_vec subgraphs = spp_fb_vector(&t->fb, &root, 2, 4);
	int rc;

	t->codes = spp_fb_vector(&t->fb, &root, 1, 4);
	t->buffers = spp_fb_vector(&t->fb, &root, 4, 4);
	sg = spp_fb_at(&t->fb, &subgraphs, 0);
	t->tensors = spp_fb_vector(&t->fb, &sg, 0, 4);
	t->ops = spp_fb_vector(&t->fb, &sg, 3, 4);
	if (t->fb.bad)
		return fb_fault(t);
	if (!sg.pos)
		return spp_tfl_fault(t, "the model holds no subgraph");
	t->model_tensor = calloc((size_t)t->tensors.len + 1, sizeof(int));
	t->producer = malloc(((size_t)t->tensors.len + 1) * sizeof(int));
	if (!t->model_tensor || !t->producer)
		return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
	for (uint32_t i = 0; i < t->tensors.len; i++)
		t->producer[i] = -1;
	for (uint32_t i = 0; i < t->tensors.len; i++)
		if ((rc = load_tensor(t, i)))
			return rc;
	for (uint32_t i = 0; i < t->ops.len; i++) {
		struct spp_fb_table o = spp_fb_at(&t->fb, &t->ops, i);
		struct spp_fb_vec out = spp_fb_vector(&t->fb, &o, 2, 4);

		for (uint32_t k = 0; k < out.len; k++) {
			int64_t j = spp_fb_vec_int(&t->fb, &out, k);

			if (j >= 0 && j < t->tensors.len)
				t->producer[j] = (int)i;
		}
	}
	if (!(t->layer_op = calloc((size_t)t->ops.len + 1, 1)))
		return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
	for (uint32_t i = 0; i < t->ops.len; i++) {
		int before = t->m->nlayer_descs;

		if ((rc = op_layer(t, i)))
			return rc;
		t->layer_op[i] = t->m->nlayer_descs > before;
	}
	return t->fb.bad ? fb_fault(t) : spp_tfl_cost(t);
}

int spp_load_tflite(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct tfl t = {.path = path, .err = err};
	int rc = spp_model_open_mapped(path, "tflite", &t.m, err);

	*out = NULL;
	if (rc)
		return rc;
	t.fb.b = t.m->files[0].base;
	t.fb.n = t.m->files[0].size;
	rc = load(&t);
	free(t.model_tensor);
	free(t.producer);
	free(t.layer_op);
	if (rc) {
		spp_model_destroy(t.m);
		return rc;
	}
	*out = t.m;
	return SPP_OK;
}
