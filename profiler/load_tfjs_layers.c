/*
 * A TF.js model's layers (load_tfjs.h): by its graph's nodes, its Keras
 * topology's classes, or, for a weights manifest alone, its weights'
 * ranks; the rules are in load_tfjs.c's opening comment.
 */
#include "profiler/load_tfjs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"

static const struct spp_model *sort_model;

static int by_tensor_name(const void *a, const void *b)
{
	return strcmp(sort_model->tensors[*(const int *)a].name,
		      sort_model->tensors[*(const int *)b].name);
}

int tfjs_find(const struct tfjs *t, const char *name)
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
static int push(struct tfjs *t, int r, int wi, const char *node, int trans_b, int bias,
		int64_t n)
{
	const struct spp_tensor *w = &t->m->tensors[wi];
	const int64_t *s = w->shape;
	struct spp_layer_desc d = {.tensor = wi, .op = (int)ops[r].kind, .layout = (int)ops[r].axes,
				   .n = n};
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
	struct tfjs_shapes sh;
	const cJSON *n;
	int rc = tfjs_shapes_infer(t, nodes, &sh);

	cJSON_ArrayForEach(n, nodes) {
		if (rc)
			break;
		const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "op"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "name"));
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(n, "input");
		int r = op_row(op, 0), w, tb, a = 0;

		if (r < 0)
			continue;
		w = tfjs_find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 1)));
		tb = attr_true(n, "transpose_b") || attr_true(n, "adj_y");
		if (w < 0 && ops[r].layout == MATMUL) { /* a constant A: W = A */
			w = tfjs_find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 0)));
			tb = !(attr_true(n, "transpose_a") || attr_true(n, "adj_x"));
			a = 1;
		}
		if (w < 0)
			continue;
		rc = push(t, r, w, name, tb, fused_bias(n) ?
			  tfjs_find(t, cJSON_GetStringValue(cJSON_GetArrayItem(in, 2))) : -1,
			  tfjs_layer_n(&sh, n, a));
	}
	tfjs_shapes_free(&sh);
	return rc;
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
			w = tfjs_find(t, key);
		}
		snprintf(key, sizeof(key), "%.250s/bias", name);
		if (w >= 0 && (rc = push(t, r, w, name, 0, tfjs_find(t, key), 0)))
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
		b = tfjs_find(t, key);
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
		if ((rc = push(t, r, i, NULL, 0, depthwise ? -1 : bias_of(t, w->name), 0)))
			return rc;
	}
	return SPP_OK;
}

int tfjs_load_layers(struct tfjs *t, const cJSON *root)
{
	const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "modelTopology");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(topo, "node");
	int rc;

	if (!t->m->ntensors)
		return SPP_OK;
	if (!(t->by_name = malloc((size_t)t->m->ntensors * sizeof(int))))
		return tfjs_nomem(t);
	for (int i = 0; i < t->m->ntensors; i++)
		t->by_name[i] = i;
	sort_model = t->m;
	qsort(t->by_name, (size_t)t->m->ntensors, sizeof(int), by_tensor_name);
	rc = cJSON_IsArray(root) ? manifest_layers(t)
	     : cJSON_IsArray(nodes) ? graph_layers(t, nodes) : keras_layers(t, topo);
	free(t->by_name);
	return rc;
}
