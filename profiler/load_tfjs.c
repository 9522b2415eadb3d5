/*
 * TensorFlow.js models: a model.json and the weight files its
 * "weightsManifest" names, the format most pruned models on npm ship in:
 *
 *   {"format": "graph-model",
 *    "modelTopology": {"node": [{"name", "op", "input": [...], "attr"}]},
 *    "weightsManifest": [{"paths": ["group1-shard1of2.bin", ...],
 *                         "weights": [{"name", "shape", "dtype",
 *                                      "quantization": {...}}]}]}
 *
 * or the weightsManifest alone, a top-level list of those groups (face-api.js's
 * "<name>-weights_manifest.json" beside its "<name>-shard1"): a model without a graph.
 *
 * Choices:
 * - A group's files are one byte stream holding its weights packed in
 *   manifest order (tf.js's loadWeights); a weight inside one file borrows
 *   its bytes, one across two files is copied. Weight files lie in the
 *   model.json's folder (no absolute names, no ".."); a weight running past
 *   the end of its group is an error.
 * - Weights: float32, int32, bool, complex64 as stored; "string" weights (a
 *   u32 length and the bytes, per element) are stepped over, not tensors.
 *   Quantized weights ("quantization"): float16 is F16 as stored; uint8 and
 *   uint16 (scale, min) are decoded to F32 as tf.js does (q * scale + min),
 *   the file's bytes in layers[].file_storage ("tfjs-uint8", "tfjs-uint16").
 *   A weight is zero where its decoded value is.
 * - Layers, for a graph model: each node of the op table below whose weight
 *   input is a manifest weight, in TF's layouts: Conv2D filters
 *   [kh, kw, I, O] (W = [O, kh*kw*I]), depthwise [kh, kw, C, mult]
 *   (W = [C*mult, kh*kw]), Conv2DBackpropInput [kh, kw, O, I]
 *   (W = [kh*kw*O, I]), a conv's kernels read on those axes (enum
 *   spp_layout), MatMul's constant B [K, O] (transposed unless
 *   transpose_b) or constant A. A fused op's BiasAdd input is the layer's
 *   bias. For a layers model (a Keras topology, no nodes) each ".../kernel"
 *   weight is a layer by its layer's class (Dense, Conv2D,
 *   DepthwiseConv2D, Conv2DTranspose), in the same layouts.
 * - Layers, for a manifest alone (no topology): each float weight by its rank,
 *   in TF's layouts: rank 4 a Conv2D filter [kh, kw, I, O], or a depthwise
 *   one [kh, kw, C, mult] when its name holds "depthwise"; rank 2 a Dense
 *   kernel [in, out] (M = out, K = in); "<stem>/bias" or "<stem>/biases"
 *   beside "<stem>/<w>" its bias (not a depthwise one's: a separable conv's
 *   bias is its pointwise conv's). Other ranks, int32 and bool weights are
 *   no layers.
 * - N: tf.js graphs store no shapes spprof reads; every layer takes --n.
 */
#include "profiler/loaders.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "profiler/layer.h"
#include "profiler/safetensors.h"

/* One row per manifest dtype: spprof's dtype and bytes per element. */
static const struct {
	const char *name;
	enum spp_dtype dtype;
	int bytes;
} dtypes[] = {
	{"float32", SPP_DTYPE_F32, 4}, {"int32", SPP_DTYPE_I32, 4}, {"bool", SPP_DTYPE_BOOL, 1},
	{"complex64", SPP_DTYPE_C64, 8}, {"string", SPP_DTYPE_COUNT, 0},
};

/* One row per quantization dtype: bytes per stored code, whether affine (q * scale + min). */
static const struct {
	const char *name, *stored_as;
	int bytes, affine;
} quants[] = {
	{"float16", NULL, 2, 0}, {"uint8", "tfjs-uint8", 1, 1}, {"uint16", "tfjs-uint16", 2, 1},
};

struct tfjs {
	struct spp_model *m;
	const char *path;
	struct spp_error *err;
	int *by_name; /* tensor indices sorted by name, for lookups */
};

/* i past JSON white space at b + i. */
static size_t skip_space(const unsigned char *b, size_t got, size_t i)
{
	while (i < got && b[i] && strchr(" \t\r\n", b[i]))
		i++;
	return i;
}

/* A manifest alone: '[', '{', then the key "paths" or "weights" first. */
static int sniff_manifest(const unsigned char *b, size_t got, size_t i)
{
	i = skip_space(b, got, i + 1);
	if (i == got || b[i] != '{')
		return 0;
	i = skip_space(b, got, i + 1);
	return (got - i >= 7 && memcmp(b + i, "\"paths\"", 7) == 0) ||
	       (got - i >= 9 && memcmp(b + i, "\"weights\"", 9) == 0);
}

int spp_tfjs_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	static const char *const keys[] = {"\"modelTopology\"", "\"weightsManifest\"",
					   "\"graph-model\"", "\"layers-model\""};
	size_t i = skip_space(b, got, 0);

	(void)size;
	if (i < got && b[i] == '[')
		return sniff_manifest(b, got, i);
	if (i == got || b[i] != '{')
		return 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		for (size_t j = i, n = strlen(keys[k]); j + n <= got; j++)
			if (memcmp(b + j, keys[k], n) == 0)
				return 1;
	return 0;
}

static int nomem(struct tfjs *t)
{
	return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
}

/* ---- the weights ---- */

/* The bytes [pos, pos + len) of the group of files first..first+n-1 in
 * out (data, file, offset): 0, PAST when they run past its end, or an error. */
#define PAST 1

static int group_bytes(struct tfjs *t, int first, int n, uint64_t pos, uint64_t len,
		       struct spp_tensor *out)
{
	const struct spp_mapped_file *f = &t->m->files[first];
	unsigned char *copy;
	uint64_t start = 0, done = 0;
	int i = 0;

	while (i < n && pos >= start + f[i].size)
		start += f[i++].size;
	if (i == n)
		return len ? PAST : 0;
	out->file = first + i;
	out->offset = pos - start;
	if (pos + len <= start + f[i].size) {
		out->data = len ? f[i].base + (pos - start) : NULL;
		return 0;
	}
	if (spp_model_charge(t->m, len, t->path, "a weight across files", t->err))
		return t->err->code;
	if (!(copy = malloc((size_t)len)))
		return nomem(t);
	for (; i < n && done < len; start += f[i++].size) {
		uint64_t from = pos + done - start, take = f[i].size - from;

		take = take < len - done ? take : len - done;
		if (take) /* an empty file has no mapping to copy from */
			memcpy(copy + done, f[i].base + from, (size_t)take);
		done += take;
	}
	if (done < len) {
		free(copy);
		return PAST;
	}
	out->data = copy;
	return spp_model_own(t->m, copy, t->err);
}

/* *pos stepped past a string weight of count elements: 0, PAST or an error. */
static int skip_strings(struct tfjs *t, int first, int n, uint64_t *pos, uint64_t count,
			uint64_t total)
{
	for (uint64_t e = 0; e < count; e++) {
		struct spp_tensor w = {0};
		uint32_t len = 0;
		int rc;

		if (*pos + 4 > total)
			return PAST;
		if ((rc = group_bytes(t, first, n, *pos, 4, &w)))
			return rc;
		for (int b = 3; b >= 0; b--)
			len = len << 8 | w.data[b];
		if ((*pos += 4 + (uint64_t)len) > total)
			return PAST;
	}
	return SPP_OK;
}

/* Decode q * scale + min into F32 (the file's codes at w->data). */
static int dequantize(struct tfjs *t, struct spp_tensor *w, int bytes, double scale, double min)
{
	float *v;

	if (spp_model_charge(t->m, w->numel * 4, t->path, "a quantized weight", t->err))
		return SPP_E_BUDGET;
	w->dtype = SPP_DTYPE_F32;
	if (!w->numel) {	/* an empty weight has no bytes to point at */
		w->data = NULL;
		w->nbytes = 0;
		return 0;
	}
	if (!(v = malloc((size_t)w->numel * 4)))
		return nomem(t);
	for (uint64_t i = 0; i < w->numel; i++) {
		const unsigned char *p = w->data + i * (uint64_t)bytes;
		unsigned q = bytes == 1 ? p[0] : (unsigned)(p[0] | p[1] << 8);
		/* in doubles, as JavaScript computes, then rounded once; volatile
		 * so that no fused multiply-add changes where a value is zero */
		volatile double scaled = q * scale;

		v[i] = (float)(scaled + min);
	}
	w->data = (const unsigned char *)v;
	w->nbytes = w->numel * 4;
	return spp_model_own(t->m, v, t->err);
}

/* The shape of a weight spec into w, its element count in w->numel. */
static int spec_shape(struct tfjs *t, const cJSON *spec, const char *name, struct spp_tensor *w)
{
	const cJSON *shape = cJSON_GetObjectItemCaseSensitive(spec, "shape"), *d;
	uint64_t len;

	if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > SPP_MAX_DIMS)
		return spp_error_format(t->err, t->path, "weight '%s': \"shape\" is not a list of "
					"at most %d dimensions", name, SPP_MAX_DIMS);
	w->numel = 1;
	cJSON_ArrayForEach(d, shape) {
		if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > (double)(1ULL << 40) ||
		    d->valuedouble != (double)(int64_t)d->valuedouble)
			return spp_error_format(t->err, t->path, "weight '%s': dimension %d is not "
						"an integer in 0..2^40", name, w->ndim);
		len = (uint64_t)d->valuedouble;
		w->shape[w->ndim++] = (int64_t)len;
		if (len && w->numel > (UINT64_C(1) << 50) / len)
			return spp_error_format(t->err, t->path, "weight '%s': over 2^50 elements",
						name);
		w->numel *= len;
	}
	return SPP_OK;
}

static int row_of_dtype(const char *s)
{
	for (size_t i = 0; s && i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (strcmp(dtypes[i].name, s) == 0)
			return (int)i;
	return -1;
}

/* One weight spec at *pos of the group: its tensor appended, *pos past it. */
static int add_weight(struct tfjs *t, const cJSON *spec, int first, int n, uint64_t total,
		      uint64_t *pos)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(spec, "quantization");
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "name"));
	const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "dtype"));
	const char *qdt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "dtype"));
	struct spp_tensor w = {0};
	int d = row_of_dtype(dt), qr = -1, bytes, rc;
	double scale = 0, min = 0;

	if (!name)
		return spp_error_format(t->err, t->path, "a weight spec has no \"name\" string");
	if (d < 0)
		return spp_error_format(t->err, t->path, "weight '%s': dtype %s%s%s is not one of "
					"float32, int32, bool, complex64, string", name,
					dt ? "'" : "", dt ? dt : "missing", dt ? "'" : "");
	for (size_t i = 0; qdt && i < sizeof(quants) / sizeof(quants[0]); i++)
		qr = strcmp(quants[i].name, qdt) == 0 ? (int)i : qr;
	if (q && (qr < 0 || dtypes[d].dtype == SPP_DTYPE_COUNT))
		return spp_error_format(t->err, t->path, "weight '%s': quantization dtype %s is not "
					"float16, uint8 or uint16 of a number", name, qdt ? qdt : "missing");
	if (qr >= 0 && quants[qr].affine) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(q, "scale");
		const cJSON *mn = cJSON_GetObjectItemCaseSensitive(q, "min");

		if (!cJSON_IsNumber(s) || !cJSON_IsNumber(mn))
			return spp_error_format(t->err, t->path, "weight '%s': %s quantization "
						"without a numeric scale and min", name, qdt);
		scale = s->valuedouble;
		min = mn->valuedouble;
	}
	if ((rc = spec_shape(t, spec, name, &w)))
		return rc;
	bytes = qr >= 0 ? quants[qr].bytes : dtypes[d].bytes;
	if (!bytes) /* strings: stepped over */
		rc = skip_strings(t, first, n, pos, w.numel, total);
	else if (*pos + (w.nbytes = w.numel * (uint64_t)bytes) > total)
		rc = PAST;
	else
		rc = group_bytes(t, first, n, *pos, w.nbytes, &w);
	if (rc == PAST)
		return spp_error_format(t->err, t->path, "weight '%s' runs past the end of its "
					"group's files (%" PRIu64 " bytes)", name, total);
	if (rc || !bytes)
		return rc;
	*pos += w.nbytes;
	w.dtype = qr >= 0 && !quants[qr].affine ? SPP_DTYPE_F16 : dtypes[d].dtype;
	if (qr >= 0 && quants[qr].affine) {
		w.stored_as = quants[qr].stored_as;
		w.stored_bytes = w.nbytes;
		if ((rc = dequantize(t, &w, bytes, scale, min)))
			return rc;
	}
	if (!(w.name = strdup(name)))
		return nomem(t);
	return spp_model_add_tensor(t->m, &w, t->path, t->err);
}

/* A group's paths: the files mapped beneath dir (appended to m->files); their count. A
 * file named twice (under any spelling) is refused: its bytes would count again. */
static int map_group(struct tfjs *t, const cJSON *paths, const char *dir, int *count)
{
	const cJSON *p;

	*count = 0;
	if (!cJSON_IsArray(paths))
		return spp_error_format(t->err, t->path, "a weightsManifest group has no \"paths\" list");
	cJSON_ArrayForEach(p, paths) {
		const char *name = cJSON_GetStringValue(p);
		int rc, fi, before = t->m->nfiles;

		if (!name)
			return spp_error_format(t->err, t->path, "a weight file name is not a string");
		if ((rc = spp_model_map_beneath(t->m, dir, name, t->path, &fi, t->err)))
			return rc;
		if (fi < before)
			return spp_error_format(t->err, t->path, "weight file '%s' names '%s' a second time",
						name, t->m->files[fi].path);
		(*count)++;
	}
	return SPP_OK;
}

static int load_weights(struct tfjs *t, const cJSON *manifest, const char *dir)
{
	const cJSON *g, *spec;

	cJSON_ArrayForEach(g, manifest) {
		const cJSON *specs = cJSON_GetObjectItemCaseSensitive(g, "weights");
		int first = t->m->nfiles, n, rc;
		uint64_t pos = 0, total = 0;

		if ((rc = map_group(t, cJSON_GetObjectItemCaseSensitive(g, "paths"), dir, &n)))
			return rc;
		if (!cJSON_IsArray(specs))
			return spp_error_format(t->err, t->path, "a weightsManifest group has no "
						"\"weights\" list");
		for (int i = first; i < first + n; i++)
			total += t->m->files[i].size;
		cJSON_ArrayForEach(spec, specs) {
			if ((rc = add_weight(t, spec, first, n, total, &pos)))
				return rc;
		}
	}
	return SPP_OK;
}

/* ---- the layers ---- */

static const struct spp_model *sort_model;

static int by_tensor_name(const void *a, const void *b)
{
	return strcmp(sort_model->tensors[*(const int *)a].name,
		      sort_model->tensors[*(const int *)b].name);
}

/* The tensor named name (a node input: "^x" control inputs none, "x:0" as x), -1 if none. */
static int find(const struct tfjs *t, const char *name)
{
	const struct spp_model *m = t->m;
	char base[512];
	int lo = 0, hi = m->ntensors - 1;

	if (!name || name[0] == '^')
		return -1;
	snprintf(base, sizeof(base), "%s", name);
	for (int pass = 0; pass < 2; pass++) {
		while (lo <= hi) {
			int mid = lo + (hi - lo) / 2, c = strcmp(m->tensors[t->by_name[mid]].name, base);
			if (!c)
				return t->by_name[mid];
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
		char *colon = strrchr(base, ':');
		if (!colon)
			break;
		*colon = 0;
		lo = 0;
		hi = m->ntensors - 1;
	}
	return -1;
}

/* How a weight of each TF op is a GEMM W, one row per op. */
enum layout { HWIO, HWC_MULT, HW_OUT_IN, MATMUL };
static const struct {
	const char *op;
	enum layout layout;
	int weight_input, rank;
	enum spp_op kind;
	enum spp_layout axes; /* a conv weight's dimensions, for its kernels */
} ops[] = {
	{"Conv2D", HWIO, 1, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIO},
	{"_FusedConv2D", HWIO, 1, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIO},
	{"DepthwiseConv2dNative", HWC_MULT, 1, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIM},
	{"FusedDepthwiseConv2dNative", HWC_MULT, 1, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIM},
	{"Conv2DBackpropInput", HW_OUT_IN, 1, 4, SPP_OP_CONV_TRANSPOSE, SPP_LAYOUT_OIHW},
	{"MatMul", MATMUL, 1, 2, SPP_OP_MATMUL, SPP_LAYOUT_OIHW},
	{"_FusedMatMul", MATMUL, 1, 2, SPP_OP_MATMUL, SPP_LAYOUT_OIHW},
	{"BatchMatMulV2", MATMUL, 1, 2, SPP_OP_MATMUL, SPP_LAYOUT_OIHW},
	{"BatchMatMul", MATMUL, 1, 2, SPP_OP_MATMUL, SPP_LAYOUT_OIHW},
	/* a layers model's Keras classes */
	{"Dense", MATMUL, 0, 2, SPP_OP_LINEAR, SPP_LAYOUT_OIHW},
	{"Conv2D#keras", HWIO, 0, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIO},
	{"DepthwiseConv2D", HWC_MULT, 0, 4, SPP_OP_CONV2D, SPP_LAYOUT_HWIM},
	{"Conv2DTranspose", HW_OUT_IN, 0, 4, SPP_OP_CONV_TRANSPOSE, SPP_LAYOUT_OIHW},
};

/* node.attr.name, NULL when absent. */
static const cJSON *attr(const cJSON *node, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "attr"), name);
}

static int attr_true(const cJSON *node, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(attr(node, name), "b"));
}

/* Whether a fused op's "fused_ops" begins with BiasAdd (base64 "Qmlhc0FkZA=="). */
static int fused_bias(const cJSON *node)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(attr(node, "fused_ops"), "list");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(list, "s");
	const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(s, 0));

	return first && strcmp(first, "Qmlhc0FkZA==") == 0;
}

/* Append the layer of weight wi used by a node (or Keras layer) named node of op row r. */
static int push(struct tfjs *t, int r, int wi, const char *node, int trans_b, int bias)
{
	const struct spp_tensor *w = &t->m->tensors[wi];
	const int64_t *s = w->shape;
	struct spp_layer_desc d = {.tensor = wi, .op = (int)ops[r].kind, .layout = (int)ops[r].axes};
	enum layout l = ops[r].layout;

	if (w->ndim != ops[r].rank || !w->numel || w->dtype == SPP_DTYPE_BOOL)
		return SPP_OK;
	if (l == MATMUL && trans_b) /* [O, K] */
		spp_desc_view(&d, s[0], w->numel, 0);
	else if (l == HW_OUT_IN) /* rows (h, w, o), K = I */
		spp_desc_view(&d, s[0] * s[1] * s[2], w->numel, 0);
	else /* [K, O]: MATMUL; HWIO K = kh*kw*I; HWC_MULT K = kh*kw, O = C*mult */
		spp_desc_view(&d, l == MATMUL ? s[1] : l == HWIO ? s[3] : s[2] * s[3], w->numel, 1);
	d.bias = bias >= 0 && t->m->tensors[bias].numel == (uint64_t)d.m ? bias + 1 : 0;
	return spp_model_add_layer(t->m, &d, node, strchr(ops[r].op, '#') ? "Conv2D" : ops[r].op,
				   t->path, node ? "the graph's nodes" : "the manifest's weights",
				   t->err);
}

static int op_row(const char *op, int keras)
{
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t l = strcspn(ops[i].op, "#");
		if ((ops[i].weight_input == 0) == keras && strncmp(ops[i].op, op, l) == 0 && !op[l])
			return (int)i;
	}
	return -1;
}

static int graph_layers(struct tfjs *t, const cJSON *nodes)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, nodes) {
		const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "op"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "name"));
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(n, "input");
		int r = op_row(op, 0), w, rc, tb;

		if (r < 0)
			continue;
		w = find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 1)));
		tb = attr_true(n, "transpose_b") || attr_true(n, "adj_y");
		if (w < 0 && ops[r].layout == MATMUL) { /* a constant A: W = A */
			w = find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 0)));
			tb = !(attr_true(n, "transpose_a") || attr_true(n, "adj_x"));
		}
		if (w < 0)
			continue;
		rc = push(t, r, w, name, tb, fused_bias(n) ?
			  find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 2))) : -1);
		if (rc)
			return rc;
	}
	return SPP_OK;
}

/* A Keras topology: each "<layer>/kernel" (or depthwise_kernel) weight by its layer's class. */
static int keras_layers(struct tfjs *t, const cJSON *topology)
{
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(topology, "model_config");
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cfg ? cfg : topology, "config"), "layers"), *l;

	cJSON_ArrayForEach(l, layers) {
		const char *cls = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "class_name"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(l, "config"), "name"));
		int r = op_row(cls, 1), w = -1, rc;
		char key[300];

		if (r < 0 || !name)
			continue;
		for (int k = 0; k < 2 && w < 0; k++) {
			snprintf(key, sizeof(key), "%.250s/%s", name, k ? "depthwise_kernel" : "kernel");
			w = find(t, key);
		}
		snprintf(key, sizeof(key), "%.250s/bias", name);
		if (w >= 0 && (rc = push(t, r, w, name, 0, find(t, key))))
			return rc;
	}
	return SPP_OK;
}

/* The bias of weight name "<stem>/<w>": "<stem>/bias" or "<stem>/biases"; -1 if none. */
static int bias_of(const struct tfjs *t, const char *name)
{
	const char *slash = strrchr(name, '/');
	char key[520];
	int b = -1;

	for (int k = 0; slash && k < 2 && b < 0 && slash - name < 500; k++) {
		snprintf(key, sizeof(key), "%.*s/%s", (int)(slash - name), name, k ? "biases" : "bias");
		b = find(t, key);
	}
	return b;
}

/* A manifest without a topology: each float weight of rank 2 or 4 by its rank, in file order. */
static int manifest_layers(struct tfjs *t)
{
	int dense = op_row("Dense", 1), conv = op_row("Conv2D", 1);
	int dw = op_row("DepthwiseConv2D", 1), rc;

	for (int i = 0; i < t->m->ntensors; i++) {
		const struct spp_tensor *w = &t->m->tensors[i];
		int depthwise = strstr(w->name, "depthwise") != NULL;
		int r = w->ndim == 2 ? dense : w->ndim == 4 ? (depthwise ? dw : conv) : -1;

		if (r < 0 || (w->dtype != SPP_DTYPE_F32 && w->dtype != SPP_DTYPE_F16) ||
		    !spp_tensor_is_layer(w))
			continue;
		if ((rc = push(t, r, i, NULL, 0, depthwise ? -1 : bias_of(t, w->name))))
			return rc;
	}
	return SPP_OK;
}

static int load_layers(struct tfjs *t, const cJSON *root)
{
	const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "modelTopology");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(topo, "node");
	int rc;

	if (!t->m->ntensors)
		return SPP_OK;
	if (!(t->by_name = malloc((size_t)t->m->ntensors * sizeof(int))))
		return nomem(t);
	for (int i = 0; i < t->m->ntensors; i++)
		t->by_name[i] = i;
	sort_model = t->m;
	qsort(t->by_name, (size_t)t->m->ntensors, sizeof(int), by_tensor_name);
	rc = cJSON_IsArray(root) ? manifest_layers(t)
	     : cJSON_IsArray(nodes) ? graph_layers(t, nodes) : keras_layers(t, topo);
	free(t->by_name);
	return rc;
}

/* The number of weight files the manifest names (the model's files but model.json). */
static int count_paths(struct tfjs *t, const cJSON *manifest, int *count)
{
	const cJSON *g;

	*count = 0;
	if (!cJSON_IsArray(manifest))
		return spp_error_format(t->err, t->path, "no \"weightsManifest\" list: not a "
					"TensorFlow.js model.json");
	cJSON_ArrayForEach(g, manifest) {
		int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(g, "paths"));

		if (!cJSON_IsObject(g))
			return spp_error_format(t->err, t->path, "a weightsManifest group is not an "
						"object with \"paths\" and \"weights\"");
		if (n > 65536 - *count)
			return spp_error_format(t->err, t->path, "more than 65536 weight files");
		*count += n;
	}
	return SPP_OK;
}

/* The mapped JSON f as *root: an object by spp_json_mapped, or a list (a weights
 * manifest alone) parsed here under the same limits. */
static int read_json(const struct spp_mapped_file *f, cJSON **root, struct spp_error *err)
{
	size_t i = skip_space(f->base, (size_t)f->size, 0);
	const char *end = NULL;
	char *text;

	*root = NULL;
	if (i == f->size || f->base[i] != '[')
		return spp_json_mapped(f, root, err);
	if (f->size > SPP_SAFETENSORS_MAX_HEADER || memchr(f->base, 0, (size_t)f->size))
		return spp_error_format(err, f->path, "a weights manifest over %" PRIu64 " bytes "
					"or holding a NUL byte", SPP_SAFETENSORS_MAX_HEADER);
	if (!(text = strndup((const char *)f->base, (size_t)f->size)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", f->path);
	*root = cJSON_ParseWithLengthOpts(text, (size_t)f->size + 1, &end, 1); /* its NUL: the end */
	free(text);
	return *root ? SPP_OK : spp_error_format(err, f->path, "not valid JSON, or bytes after "
						 "its list");
}

int spp_load_tfjs(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct tfjs t = {.path = path, .err = err};
	const cJSON *manifest;
	const char *slash = strrchr(path, '/');
	cJSON *root = NULL;
	char *dir = NULL;
	int rc, npaths;

	*out = NULL;
	if ((rc = spp_model_open_mapped(path, "tfjs", &t.m, err)))
		return rc;
	if ((rc = read_json(&t.m->files[0], &root, err)))
		goto out;
	manifest = cJSON_IsArray(root) ? root /* a weights manifest alone */
		   : cJSON_GetObjectItemCaseSensitive(root, "weightsManifest");
	if ((rc = count_paths(&t, manifest, &npaths)))
		goto out;
	dir = slash ? strndup(path, (size_t)(slash - path + 1)) : strdup("");
	if (!dir) {
		rc = nomem(&t);
		goto out;
	}
	if ((rc = load_weights(&t, manifest, dir)) || (rc = load_layers(&t, root)))
		goto out;
	*out = t.m;
	t.m = NULL;
out:
	spp_model_destroy(t.m);
	cJSON_Delete(root);
	free(dir);
	return rc;
}
