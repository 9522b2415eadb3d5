/*
 * The ops of a TF.js graph's shape inference (load_tfjs_shapes.c has the
 * walk): each op's first output shape from its inputs' shapes, attributes
 * and small int32 constants, with TF's rules; a dimension -1 is unknown
 * and stays so through the ops that keep it.
 */
#include "profiler/load_tfjs.h"

#include <stdlib.h>
#include <string.h>

#define UNK INT64_C(-1)
#define MAX_DIM (INT64_C(1) << 40)
#define B64_NCHW "TkNIVw=="
#define B64_SAME "U0FNRQ=="
#define B64_VALID "VkFMSUQ="
#define B64_EXPLICIT "RVhQTElDSVQ="

static const char *str_of(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static int n_inputs(const cJSON *node)
{
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(node, "input"), *e;
	int k = 0;

	cJSON_ArrayForEach(e, in) {
		const char *s = cJSON_GetStringValue(e);
		k += s && s[0] != '^';
	}
	return k;
}

/* An axis in [-rank, rank) as [0, rank); -1 when out of range. */
static int axis_of(int64_t a, int rank)
{
	if (a < 0)
		a += rank;
	return a >= 0 && a < rank ? (int)a : -1;
}

/* numpy broadcasting of every input (the first `count`), an unknown dimension kept unknown */
static int broadcast(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int count,
		     struct tfjs_shape *out)
{
	struct tfjs_shape x;

	if (!tfjs_input_shape(t, sh, node, 0, out))
		return 0;
	for (int i = 1; i < count; i++) {
		int64_t d[SPP_MAX_DIMS];
		int r;

		if (!tfjs_input_shape(t, sh, node, i, &x))
			return 0;
		r = out->rank > x.rank ? out->rank : x.rank;
		for (int k = 0; k < r; k++) {
			int a = out->rank - r + k, b = x.rank - r + k;
			int64_t da = a >= 0 ? out->d[a] : 1, db = b >= 0 ? x.d[b] : 1;

			if (da == db || db == 1)
				d[k] = da;
			else if (da == 1)
				d[k] = db;
			else if (da == UNK || db == UNK)
				d[k] = da == UNK ? db : da;
			else
				return 0;
		}
		out->rank = r;
		memcpy(out->d, d, sizeof(d));
	}
	return 1;
}

/* The spatial axes of a 4-D node's data: 1, 2 (NHWC) or 2, 3 (NCHW); its channel axis. */
static void axes4(const cJSON *node, int *h, int *c)
{
	int nchw = tfjs_attr_s(node, "data_format", B64_NCHW);

	*h = nchw ? 2 : 1;
	*c = nchw ? 1 : 3;
}

/* A conv's or pool's output size over data axis a; 0 when malformed. */
static int64_t out_size(const cJSON *node, int64_t size, int64_t k, int a)
{
	int64_t st[8], dil[8], pad[8];
	int ns, nd, np;

	if (!tfjs_attr_ints(node, "strides", st, 8, &ns) || ns != 4)
		return 0;
	if (!tfjs_attr_ints(node, "dilations", dil, 8, &nd))
		dil[a] = 1;
	else if (nd != 4)
		return 0;
	if (st[a] <= 0 || dil[a] <= 0 || k <= 0 || k > MAX_DIM || dil[a] > MAX_DIM ||
	    k - 1 > MAX_DIM / dil[a])
		return 0;
	if (size == UNK)
		return UNK;
	int64_t ek = (k - 1) * dil[a] + 1;

	if (tfjs_attr_s(node, "padding", B64_SAME))
		return (size + st[a] - 1) / st[a];
	if (tfjs_attr_s(node, "padding", B64_EXPLICIT)) {
		if (!tfjs_attr_ints(node, "explicit_paddings", pad, 8, &np) || np != 8 ||
		    pad[2 * a] < 0 || pad[2 * a + 1] < 0 || pad[2 * a] > MAX_DIM ||
		    pad[2 * a + 1] > MAX_DIM)
			return 0;
		size += pad[2 * a] + pad[2 * a + 1];
	} else if (!tfjs_attr_s(node, "padding", B64_VALID)) {
		return 0;
	}
	return size >= ek ? (size - ek) / st[a] + 1 : 0;
}

/* Conv2D, _FusedConv2D, depthwise ones (filter [kh, kw, I, O or mult]), MaxPool, AvgPool */
static int conv(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int pool,
		int depthwise, struct tfjs_shape *out)
{
	struct tfjs_shape x, w = {0};
	int64_t ks[8];
	int h, c, nk;

	if (!tfjs_input_shape(t, sh, node, 0, &x) || x.rank != 4)
		return 0;
	axes4(node, &h, &c);
	if (pool) {
		if (!tfjs_attr_ints(node, "ksize", ks, 8, &nk) || nk != 4)
			return 0;
		w.d[0] = ks[h];
		w.d[1] = ks[h + 1];
	} else if (!tfjs_input_shape(t, sh, node, 1, &w) || w.rank != 4 || w.d[0] == UNK ||
		   w.d[1] == UNK || w.d[3] == UNK) {
		return 0;
	}
	*out = x;
	for (int i = 0; i < 2; i++)
		if (!(out->d[h + i] = out_size(node, x.d[h + i], w.d[i], h + i)))
			return 0;
	if (!pool && (w.d[3] <= 0 || w.d[3] > MAX_DIM || (depthwise && x.d[c] > MAX_DIM / w.d[3])))
		return 0;
	if (!pool)
		out->d[c] = depthwise ? (x.d[c] == UNK ? UNK : x.d[c] * w.d[3]) : w.d[3];
	return 1;
}

/* MatMul, _FusedMatMul, BatchMatMul(V2): [.., M, K] x [.., K, N] */
static int matmul(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		  struct tfjs_shape *out)
{
	struct tfjs_shape a, b;
	int ta = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "transpose_a"), "b")) ||
		 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "adj_x"), "b"));
	int tb = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "transpose_b"), "b")) ||
		 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "adj_y"), "b"));

	if (!tfjs_input_shape(t, sh, node, 0, &a) || !tfjs_input_shape(t, sh, node, 1, &b) || a.rank < 2 ||
	    b.rank < 2)
		return 0;
	*out = a.rank >= b.rank ? a : b;
	out->d[out->rank - 2] = a.d[a.rank - (ta ? 1 : 2)];
	out->d[out->rank - 1] = b.d[b.rank - (tb ? 2 : 1)];
	return 1;
}

/* Mean, Sum, Max, Min, Prod over constant axes, keep_dims or not */
static int reduce(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		  struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t ax[SPP_MAX_DIMS];
	unsigned char hit[SPP_MAX_DIMS] = {0};
	int cnt, keep = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "keep_dims"), "b"));

	if (!tfjs_input_shape(t, sh, node, 0, &x) || !tfjs_input_ints(t, node, 1, ax, SPP_MAX_DIMS, &cnt))
		return 0;
	for (int i = 0; i < cnt; i++) {
		int a = axis_of(ax[i], x.rank);
		if (a < 0)
			return 0;
		hit[a] = 1;
	}
	out->rank = 0;
	for (int i = 0; i < x.rank; i++)
		if (!hit[i] || keep)
			out->d[out->rank++] = hit[i] ? 1 : x.d[i];
	return 1;
}

/* Pad, PadV2, MirrorPad: paddings [rank, 2] */
static int pad(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
	       struct tfjs_shape *out)
{
	int64_t p[2 * SPP_MAX_DIMS];
	int cnt;

	if (!tfjs_input_shape(t, sh, node, 0, out) ||
	    !tfjs_input_ints(t, node, 1, p, 2 * SPP_MAX_DIMS, &cnt) || cnt != 2 * out->rank)
		return 0;
	for (int i = 0; i < out->rank; i++) {
		if (p[2 * i] < 0 || p[2 * i + 1] < 0 || p[2 * i] > MAX_DIM || p[2 * i + 1] > MAX_DIM)
			return 0;
		if (out->d[i] != UNK)
			out->d[i] += p[2 * i] + p[2 * i + 1];
	}
	return 1;
}

/* Reshape to a constant shape (one -1 resolved when the input is complete) */
static int reshape(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		   struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t v[SPP_MAX_DIMS], total = 1, known = 1;
	int cnt, minus = -1;

	if (!tfjs_input_shape(t, sh, node, 0, &x) ||
	    !tfjs_input_ints(t, node, 1, v, SPP_MAX_DIMS, &cnt))
		return 0;
	for (int i = 0; i < x.rank; i++) {
		if (x.d[i] == UNK) {
			total = UNK;
			continue;
		}
		if (x.d[i] <= 0 || (total != UNK && total > (INT64_C(1) << 62) / x.d[i]))
			return 0;
		total = total == UNK ? UNK : total * x.d[i];
	}
	for (int i = 0; i < cnt; i++) {
		if (v[i] == -1 && minus < 0)
			minus = i;
		else if (v[i] <= 0 || v[i] > MAX_DIM || known > (INT64_C(1) << 62) / v[i])
			return 0;
		else
			known *= v[i];
	}
	if (minus >= 0)
		v[minus] = total == UNK ? UNK : total % known ? 0 : total / known;
	else if (total != UNK && total != known)
		return 0;
	if (minus >= 0 && !v[minus])
		return 0;
	out->rank = cnt;
	memcpy(out->d, v, (size_t)cnt * sizeof(*v));
	return 1;
}

/* ConcatV2: N inputs, then the axis */
static int concat(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		  struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t ax;
	int cnt, ni = n_inputs(node) - 1, a;

	if (ni < 1 || !tfjs_input_ints(t, node, ni, &ax, 1, &cnt) || cnt != 1 ||
	    !tfjs_input_shape(t, sh, node, 0, out) || (a = axis_of(ax, out->rank)) < 0)
		return 0;
	for (int i = 1; i < ni; i++) {
		if (!tfjs_input_shape(t, sh, node, i, &x) || x.rank != out->rank)
			return 0;
		out->d[a] = out->d[a] == UNK || x.d[a] == UNK ? UNK : out->d[a] + x.d[a];
		if (out->d[a] > MAX_DIM)
			return 0;
	}
	return 1;
}

/* Squeeze (squeeze_dims, else every 1) and ExpandDims (a constant axis) */
static int squeeze(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int expand,
		   struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t ax[SPP_MAX_DIMS];
	unsigned char hit[SPP_MAX_DIMS] = {0};
	int cnt = 0, a;

	if (!tfjs_input_shape(t, sh, node, 0, &x))
		return 0;
	if (expand) {
		if (!tfjs_input_ints(t, node, 1, ax, 1, &cnt) || cnt != 1 || x.rank >= SPP_MAX_DIMS ||
		    (a = axis_of(ax[0], x.rank + 1)) < 0)
			return 0;
		*out = x;
		memmove(out->d + a + 1, out->d + a, (size_t)(x.rank - a) * sizeof(*x.d));
		out->d[a] = 1;
		out->rank++;
		return 1;
	}
	if (tfjs_attr(node, "squeeze_dims") &&
	    !tfjs_attr_ints(node, "squeeze_dims", ax, SPP_MAX_DIMS, &cnt))
		return 0;
	for (int i = 0; i < cnt; i++) {
		if ((a = axis_of(ax[i], x.rank)) < 0)
			return 0;
		hit[a] = 1;
	}
	out->rank = 0;
	for (int i = 0; i < x.rank; i++)
		if (!(cnt ? hit[i] : x.d[i] == 1))
			out->d[out->rank++] = x.d[i];
	return 1;
}

/* Pack (inputs alike, a new axis of N) and Unpack (that axis taken away, each output alike) */
static int pack(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int unpack,
		struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t ax = 0;
	int ni = n_inputs(node), a;
	const cJSON *axis = cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "axis"), "i");

	if (axis && !(cJSON_IsString(axis) ? (ax = strtoll(axis->valuestring, NULL, 10), 1)
					   : cJSON_IsNumber(axis) ? (ax = (int64_t)axis->valuedouble, 1) : 0))
		return 0;
	if (!tfjs_input_shape(t, sh, node, 0, &x))
		return 0;
	if (unpack) {
		if ((a = axis_of(ax, x.rank)) < 0)
			return 0;
		*out = x;
		memmove(out->d + a, out->d + a + 1, (size_t)(x.rank - a - 1) * sizeof(*x.d));
		out->rank--;
		return 1;
	}
	if (x.rank >= SPP_MAX_DIMS || (a = axis_of(ax, x.rank + 1)) < 0)
		return 0;
	*out = x;
	memmove(out->d + a + 1, out->d + a, (size_t)(x.rank - a) * sizeof(*x.d));
	out->d[a] = ni;
	out->rank++;
	return 1;
}

/*
 * Conv2DBackpropInput (input_sizes, filter [kh, kw, O, I], x): its
 * input_sizes where constant, else from x as Keras's Conv2DTranspose sizes
 * it: SAME in * stride, VALID (in - 1) * stride + k.
 */
static int backprop(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		    struct tfjs_shape *out)
{
	struct tfjs_shape w;
	int64_t st[8];
	int h, c, ns, same = tfjs_attr_s(node, "padding", B64_SAME);

	if (tfjs_input_ints(t, node, 0, out->d, SPP_MAX_DIMS, &out->rank))
		return out->rank == 4;
	if (!tfjs_input_shape(t, sh, node, 2, out) || out->rank != 4 ||
	    !tfjs_input_shape(t, sh, node, 1, &w) || w.rank != 4 ||
	    !tfjs_attr_ints(node, "strides", st, 8, &ns) || ns != 4 ||
	    !(same || tfjs_attr_s(node, "padding", B64_VALID)))
		return 0;
	axes4(node, &h, &c);
	for (int i = 0; i < 2; i++) {
		int64_t in = out->d[h + i], s = st[h + i];

		if (s <= 0 || s > MAX_DIM || w.d[i] <= 0 || w.d[i] > MAX_DIM ||
		    (in != UNK && (in < 1 || in > MAX_DIM || in > MAX_DIM / s)))
			return 0;
		if (in != UNK)
			out->d[h + i] = same ? in * s : (in - 1) * s + w.d[i];
	}
	out->d[c] = w.d[2];
	return 1;
}

/* ResizeBilinear, ResizeNearestNeighbor: [b, h, w, c] to the constant size */
static int resize(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		  struct tfjs_shape *out)
{
	int64_t v[2];
	int cnt;

	if (!tfjs_input_shape(t, sh, node, 0, out) || out->rank != 4 ||
	    !tfjs_input_ints(t, node, 1, v, 2, &cnt) || cnt != 2 || v[0] <= 0 || v[1] <= 0)
		return 0;
	out->d[1] = v[0];
	out->d[2] = v[1];
	return 1;
}

static int transpose(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		     struct tfjs_shape *out)
{
	struct tfjs_shape x;
	int64_t p[SPP_MAX_DIMS];
	int cnt;

	if (!tfjs_input_shape(t, sh, node, 0, &x) || !tfjs_input_ints(t, node, 1, p, SPP_MAX_DIMS, &cnt) ||
	    cnt != x.rank)
		return 0;
	out->rank = cnt;
	for (int i = 0; i < cnt; i++) {
		int a = axis_of(p[i], cnt);
		if (a < 0)
			return 0;
		out->d[i] = x.d[a];
	}
	return 1;
}

enum kind { SAME, BCAST, CONV, DEPTHWISE, POOL, MATMUL, REDUCE, PAD, RESHAPE, CONCAT,
	    SQUEEZE, EXPAND, RESIZE, TRANSPOSE, PACK, UNPACK, SIZES };
static const struct {
	const char *op;
	enum kind kind;
} table[] = {
	{"Conv2D", CONV}, {"_FusedConv2D", CONV}, {"DepthwiseConv2dNative", DEPTHWISE},
	{"FusedDepthwiseConv2dNative", DEPTHWISE}, {"MaxPool", POOL}, {"AvgPool", POOL},
	{"MatMul", MATMUL}, {"_FusedMatMul", MATMUL}, {"BatchMatMul", MATMUL},
	{"BatchMatMulV2", MATMUL}, {"Mean", REDUCE}, {"Sum", REDUCE}, {"Max", REDUCE},
	{"Min", REDUCE}, {"Prod", REDUCE}, {"Pad", PAD}, {"PadV2", PAD}, {"MirrorPad", PAD},
	{"Reshape", RESHAPE}, {"ConcatV2", CONCAT}, {"Squeeze", SQUEEZE},
	{"ExpandDims", EXPAND}, {"ResizeBilinear", RESIZE}, {"ResizeNearestNeighbor", RESIZE},
	{"Transpose", TRANSPOSE}, {"Pack", PACK}, {"Unpack", UNPACK},
	{"Conv2DBackpropInput", SIZES},
	{"Add", BCAST}, {"AddV2", BCAST}, {"AddN", BCAST}, {"Sub", BCAST}, {"Mul", BCAST},
	{"RealDiv", BCAST}, {"Div", BCAST}, {"Maximum", BCAST}, {"Minimum", BCAST},
	{"BiasAdd", BCAST}, {"SquaredDifference", BCAST}, {"Prelu", BCAST}, {"Pow", BCAST},
	{"Relu", SAME}, {"Relu6", SAME}, {"Elu", SAME}, {"Selu", SAME}, {"LeakyRelu", SAME},
	{"Sigmoid", SAME}, {"Tanh", SAME}, {"Softmax", SAME}, {"LogSoftmax", SAME},
	{"Identity", SAME}, {"Cast", SAME}, {"Exp", SAME}, {"Log", SAME}, {"Sqrt", SAME},
	{"Rsqrt", SAME}, {"Square", SAME}, {"Neg", SAME}, {"Abs", SAME}, {"Reciprocal", SAME},
	{"FusedBatchNorm", SAME}, {"FusedBatchNormV3", SAME}, {"Softplus", SAME},
	{"Floor", SAME}, {"Round", SAME}, {"ClipByValue", SAME}, {"Erf", SAME},
};

int tfjs_shapes_node(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		 struct tfjs_shape *out)
{
	const char *op = str_of(node, "op");
	int bias_only;

	for (size_t i = 0; op && i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].op, op) != 0)
			continue;
		switch (table[i].kind) {
		case SAME: return tfjs_input_shape(t, sh, node, 0, out);
		case BCAST:
			bias_only = strcmp(op, "BiasAdd") == 0;
			return broadcast(t, sh, node, bias_only ? 2 : n_inputs(node), out);
		case CONV: return conv(t, sh, node, 0, 0, out);
		case DEPTHWISE: return conv(t, sh, node, 0, 1, out);
		case POOL: return conv(t, sh, node, 1, 0, out);
		case MATMUL: return matmul(t, sh, node, out);
		case REDUCE: return reduce(t, sh, node, out);
		case PAD: return pad(t, sh, node, out);
		case RESHAPE: return reshape(t, sh, node, out);
		case CONCAT: return concat(t, sh, node, out);
		case SQUEEZE: return squeeze(t, sh, node, 0, out);
		case EXPAND: return squeeze(t, sh, node, 1, out);
		case RESIZE: return resize(t, sh, node, out);
		case TRANSPOSE: return transpose(t, sh, node, out);
		case PACK: return pack(t, sh, node, 0, out);
		case UNPACK: return pack(t, sh, node, 1, out);
		case SIZES: return backprop(t, sh, node, out);
		}
	}
	return 0;
}

