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
 * - N, for a graph model: from the Placeholder's stored shape carried
 *   through the nodes (load_tfjs_shapes.c; a batch of -1 taken as 1 and
 *   said in the shape notes): the output's rows, batch * OH * OW for a conv.
 *   A layer whose shapes are not known, and every layer of a layers model
 *   or a manifest alone, takes --n.
 */
#include "profiler/load_tfjs.h"

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

int tfjs_nomem(struct tfjs *t)
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
		return tfjs_nomem(t);
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
		return tfjs_nomem(t);
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
		return tfjs_nomem(t);
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
		rc = tfjs_nomem(&t);
		goto out;
	}
	if ((rc = load_weights(&t, manifest, dir)) || (rc = tfjs_load_layers(&t, root)))
		goto out;
	*out = t.m;
	t.m = NULL;
out:
	spp_model_destroy(t.m);
	cJSON_Delete(root);
	free(dir);
	return rc;
}
