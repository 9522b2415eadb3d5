/*
 * Shape inference through an ONNX graph, so that every Conv, Gemm and
 * MatMul gets its N from the graph's inputs even where the file stores no
 * value_info for the values in between (most exporters store none).
 *
 * The main graph's inputs take --input-shape where given, else the file's
 * shape with a symbolic first dimension taken as batch 1 (said in the
 * report); another symbolic dimension is unknown (ONNX_DIM_UNKNOWN) on its
 * own: the ops that carry partial shapes (elementwise, conv and pooling,
 * GlobalAveragePool, Concat, Pad, Transpose, ...) keep the known ones, so a
 * GlobalAveragePool over a symbolic H and W still gives [b, C, 1, 1]. An
 * If's outputs come from its branches (onnx_graph.c). Nodes are
 * visited in the file's order (ONNX requires a topological one); each op of
 * the table below gives its outputs' shapes from its inputs' shapes, its
 * attributes and constant inputs. Small integer tensors carry their values
 * as well (Shape, then Gather, Concat, Unsqueeze ... over it: the
 * x.view(x.size(0), -1) of a PyTorch export), so that a Reshape fed by
 * them is resolved. An op not in the table, or inputs not known, leave its
 * outputs unknown: the value_info of the file, where static, fills in, and
 * a layer whose N stays unknown takes --n.
 */
#include "profiler/onnx/onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTS ONNX_MAX_OUTS

static const char *in(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_input && n->input[i] && *n->input[i] ? n->input[i] : NULL;
}

int onnx_shape_set(struct onnx_scope *s, const char *name, const struct onnx_shape *sh)
{
	const struct onnx_map_entry *old;
	struct onnx_shape *p;
	uint64_t numel = 1;

	if (!name || !*name || sh->rank < 0 || sh->rank > SPP_MAX_DIMS)
		return SPP_OK;
	int partial = 0;

	for (int i = 0; i < sh->rank; i++) {
		if (sh->d[i] == ONNX_DIM_UNKNOWN) {
			partial = 1;
			continue;
		}
		if (sh->d[i] <= 0 || sh->d[i] > ONNX_MAX_DIM ||
		    (numel *= (uint64_t)sh->d[i]) > (UINT64_C(1) << 62))
			return SPP_OK;
	}
	if (!(p = malloc(sizeof(*p))))
		return -1;
	*p = *sh;
	if (partial || p->nvals > SPP_MAX_DIMS || (uint64_t)p->nvals != numel || p->rank > 1)
		p->nvals = -1;
	if ((old = onnx_map_get(&s->inferred, name)))
		free((void *)old->ptr);
	if (onnx_map_put(&s->inferred, name, -1, p)) {
		free(p);
		return -1;
	}
	return SPP_OK;
}

void onnx_shapes_free(struct onnx_scope *s)
{
	for (size_t i = 0; i < s->inferred.cap; i++)
		free((void *)s->inferred.slots[i].ptr);
	onnx_map_free(&s->inferred);
}

/* An axis in [-rank, rank) as [0, rank); -1 when out of range. */
static int axis_of(int64_t a, int rank)
{
	if (a < 0)
		a += rank;
	return a >= 0 && a < rank ? (int)a : -1;
}

static ONNX_INFER(same)
{
	return onnx_shape_part(c, s, in(n, 0), out);
}

/* One dimension of a broadcast: 0 when a and b do not broadcast. */
static int bcast(int64_t a, int64_t b, int64_t *out)
{
	if (a == b || b == 1)
		*out = a;
	else if (a == 1)
		*out = b;
	else if (a == ONNX_DIM_UNKNOWN || b == ONNX_DIM_UNKNOWN)
		*out = a == ONNX_DIM_UNKNOWN ? b : a; /* the unknown one is 1 or the same */
	else
		return 0;
	return 1;
}

/*
 * The values of a comparison of two small known integer tensors (Equal over
 * a Shape: the condition of an If), each of the same count or one value.
 */
static void compare_values(const struct onnx_ctx *c, const Onnx__NodeProto *n,
			   const struct onnx_scope *s, struct onnx_shape *out)
{
	static const char *const ops[] = {"Equal", "Greater", "Less", "GreaterOrEqual",
					  "LessOrEqual"};
	struct onnx_shape a, b;
	int op = -1, cnt;

	for (int i = 0; i < 5; i++)
		if (strcmp(n->op_type, ops[i]) == 0)
			op = i;
	if (op < 0 || n->n_input != 2 || !onnx_shape_of(c, s, in(n, 0), &a) ||
	    !onnx_shape_of(c, s, in(n, 1), &b) || a.nvals < 1 || b.nvals < 1 ||
	    (a.nvals != b.nvals && a.nvals != 1 && b.nvals != 1))
		return;
	cnt = a.nvals > b.nvals ? a.nvals : b.nvals;
	for (int i = 0; i < cnt; i++) {
		int64_t x = a.vals[a.nvals == 1 ? 0 : i], y = b.vals[b.nvals == 1 ? 0 : i];

		out->vals[i] = op == 0 ? x == y : op == 1 ? x > y : op == 2 ? x < y
			     : op == 3 ? x >= y : x <= y;
	}
	out->nvals = cnt;
}

/* numpy broadcasting over every input */
static ONNX_INFER(broadcast)
{
	struct onnx_shape x;

	if (!n->n_input || !onnx_shape_part(c, s, in(n, 0), out))
		return 0;
	for (size_t i = 1; i < n->n_input; i++) {
		if (!onnx_shape_part(c, s, in(n, i), &x))
			return 0;
		int r = out->rank > x.rank ? out->rank : x.rank;
		int64_t d[SPP_MAX_DIMS];

		for (int k = 0; k < r; k++) {
			int a = out->rank - r + k, b = x.rank - r + k;

			if (!bcast(a >= 0 ? out->d[a] : 1, b >= 0 ? x.d[b] : 1, &d[k]))
				return 0;
		}
		out->rank = r;
		memcpy(out->d, d, sizeof(d));
	}
	out->nvals = -1;
	compare_values(c, n, s, out);
	return 1;
}

static ONNX_INFER(flatten)
{
	struct onnx_shape x;
	int a;

	if (!onnx_shape_part(c, s, in(n, 0), &x))
		return 0;
	a = (int)onnx_attr_int(n, "axis", 1);
	if (a < 0)
		a += x.rank;
	if (a < 0 || a > x.rank)
		return 0;
	out->rank = 2;
	out->d[0] = out->d[1] = 1;
	for (int i = 0; i < x.rank; i++)
		out->d[i >= a] = out->d[i >= a] == ONNX_DIM_UNKNOWN || x.d[i] == ONNX_DIM_UNKNOWN
					 ? ONNX_DIM_UNKNOWN : out->d[i >= a] * x.d[i];
	return 1;
}

static ONNX_INFER(reshape)
{
	struct onnx_shape x;
	int64_t v[SPP_MAX_DIMS], known = 1, total = 1;
	int cnt, minus = -1, zero_copies = !onnx_attr_int(n, "allowzero", 0);

	if (!onnx_shape_of(c, s, in(n, 0), &x) ||
	    !(n->n_input > 1 ? onnx_const_ints(c, s, in(n, 1), v, SPP_MAX_DIMS, &cnt)
			     : onnx_attr_ints(n, "shape", v, SPP_MAX_DIMS, &cnt)))
		return 0;
	for (int i = 0; i < x.rank; i++)
		total *= x.d[i];
	for (int i = 0; i < cnt; i++) {
		if (v[i] == 0 && zero_copies) {
			if (i >= x.rank)
				return 0;
			v[i] = x.d[i];
		}
		if (v[i] == -1 && minus < 0)
			minus = i;
		else if (v[i] <= 0 || v[i] > ONNX_MAX_DIM)
			return 0;
		else
			known *= v[i];
	}
	if (minus >= 0) {
		if (total % known)
			return 0;
		v[minus] = total / known;
	} else if (known != total) {
		return 0;
	}
	out->rank = cnt;
	memcpy(out->d, v, (size_t)cnt * sizeof(*v));
	/* values carried through a reshape of a known small vector */
	out->nvals = x.nvals >= 0 && cnt <= 1 ? x.nvals : -1;
	memcpy(out->vals, x.vals, sizeof(out->vals));
	return 1;
}

static ONNX_INFER(transpose)
{
	struct onnx_shape x;
	int64_t p[SPP_MAX_DIMS];
	int cnt;

	if (!onnx_shape_part(c, s, in(n, 0), &x))
		return 0;
	if (!onnx_attr_ints(n, "perm", p, SPP_MAX_DIMS, &cnt)) {
		cnt = x.rank;
		for (int i = 0; i < cnt; i++)
			p[i] = cnt - 1 - i;
	}
	if (cnt != x.rank)
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

/* Squeeze and Unsqueeze: axes from the attribute (opset < 13) or input 1 */
static ONNX_INFER(squeeze)
{
	int unsq = strcmp(n->op_type, "Unsqueeze") == 0, cnt = 0, r, k = 0;
	int64_t ax[SPP_MAX_DIMS];
	unsigned char hit[SPP_MAX_DIMS] = {0};
	struct onnx_shape x;

	if (!onnx_shape_part(c, s, in(n, 0), &x) ||
	    !(in(n, 1) ? onnx_const_ints(c, s, in(n, 1), ax, SPP_MAX_DIMS, &cnt)
		       : onnx_attr_ints(n, "axes", ax, SPP_MAX_DIMS, &cnt) || !unsq))
		return 0;
	r = unsq ? x.rank + cnt : x.rank;
	if (r > SPP_MAX_DIMS)
		return 0;
	for (int i = 0; i < cnt; i++) {
		int a = axis_of(ax[i], r);
		if (a < 0 || hit[a] || (!unsq && x.d[a] != 1 && x.d[a] != ONNX_DIM_UNKNOWN))
			return 0;
		hit[a] = 1;
	}
	out->rank = 0;
	for (int i = 0; i < r; i++) {
		if (unsq)
			out->d[out->rank++] = hit[i] ? 1 : x.d[k++];
		else if (!(cnt ? hit[i] : x.d[i] == 1))
			out->d[out->rank++] = x.d[i];
	}
	out->nvals = x.nvals;
	memcpy(out->vals, x.vals, sizeof(out->vals));
	return 1;
}

static ONNX_INFER(concat)
{
	struct onnx_shape x;
	int a;

	if (!n->n_input || !onnx_shape_part(c, s, in(n, 0), out))
		return 0;
	if ((a = axis_of(onnx_attr_int(n, "axis", 0), out->rank)) < 0)
		return 0;
	for (size_t i = 1; i < n->n_input; i++) {
		if (!onnx_shape_part(c, s, in(n, i), &x) || x.rank != out->rank)
			return 0;
		for (int k = 0; k < x.rank; k++) {
			if (k == a || x.d[k] == out->d[k] || x.d[k] == ONNX_DIM_UNKNOWN)
				continue;
			if (out->d[k] != ONNX_DIM_UNKNOWN)
				return 0;
			out->d[k] = x.d[k];
		}
		out->d[a] = out->d[a] == ONNX_DIM_UNKNOWN || x.d[a] == ONNX_DIM_UNKNOWN
				    ? ONNX_DIM_UNKNOWN : out->d[a] + x.d[a];
		if (out->nvals >= 0 && x.nvals >= 0 && out->nvals + x.nvals <= SPP_MAX_DIMS) {
			memcpy(out->vals + out->nvals, x.vals, (size_t)x.nvals * sizeof(*x.vals));
			out->nvals += x.nvals;
		} else {
			out->nvals = -1;
		}
	}
	return 1;
}

static ONNX_INFER(pad)
{
	int64_t p[2 * SPP_MAX_DIMS];
	int cnt;

	if (!onnx_shape_part(c, s, in(n, 0), out) || in(n, 3) ||
	    !(in(n, 1) ? onnx_const_ints(c, s, in(n, 1), p, 2 * SPP_MAX_DIMS, &cnt)
		       : onnx_attr_ints(n, "pads", p, 2 * SPP_MAX_DIMS, &cnt)) ||
	    cnt != 2 * out->rank)
		return 0;
	for (int i = 0; i < out->rank; i++)
		if (out->d[i] != ONNX_DIM_UNKNOWN)
			out->d[i] += p[i] + p[i + out->rank];
	out->nvals = -1;
	return 1;
}

/* ReduceMean, ReduceSum, ... and ArgMax, ArgMin */
static ONNX_INFER(reduce)
{
	int64_t ax[SPP_MAX_DIMS];
	int cnt = 0, keep = (int)onnx_attr_int(n, "keepdims", 1), r;
	unsigned char hit[SPP_MAX_DIMS] = {0};
	struct onnx_shape x;

	if (!onnx_shape_part(c, s, in(n, 0), &x))
		return 0;
	if (strncmp(n->op_type, "Arg", 3) == 0) {
		ax[0] = onnx_attr_int(n, "axis", 0);
		cnt = 1;
	} else if (in(n, 1) ? !onnx_const_ints(c, s, in(n, 1), ax, SPP_MAX_DIMS, &cnt)
			    : onnx_attr(n, "axes") && !onnx_attr_ints(n, "axes", ax, SPP_MAX_DIMS, &cnt)) {
		return 0;
	}
	if (!cnt && onnx_attr_int(n, "noop_with_empty_axes", 0))
		return same(c, n, s, out);
	for (int i = 0; i < (cnt ? cnt : x.rank); i++) {
		int a = cnt ? axis_of(ax[i], x.rank) : i;
		if (a < 0)
			return 0;
		hit[a] = 1;
	}
	for (int i = r = 0; i < x.rank; i++)
		if (!hit[i] || keep)
			out->d[r++] = hit[i] ? 1 : x.d[i];
	out->rank = r;
	return 1;
}

static int split(const struct onnx_ctx *c, const Onnx__NodeProto *n, const struct onnx_scope *s,
		 struct onnx_shape *out)
{
	int64_t parts[OUTS], sum = 0;
	int cnt = 0, no = n->n_output < OUTS ? (int)n->n_output : OUTS, a;
	struct onnx_shape x;

	if (!onnx_shape_of(c, s, in(n, 0), &x) || (a = axis_of(onnx_attr_int(n, "axis", 0), x.rank)) < 0)
		return 0;
	if (!(in(n, 1) ? onnx_const_ints(c, s, in(n, 1), parts, OUTS, &cnt)
		       : onnx_attr_ints(n, "split", parts, OUTS, &cnt)) || !cnt) {
		int64_t k = no ? no : 1, each = (x.d[a] + k - 1) / k;

		for (cnt = 0; cnt < no; cnt++)
			parts[cnt] = x.d[a] - each * cnt < each ? x.d[a] - each * cnt : each;
	}
	for (int i = 0; i < cnt; i++)
		sum += parts[i];
	if (cnt != no || sum != x.d[a])
		return 0;
	for (int i = 0; i < cnt; i++) {
		out[i] = x;
		out[i].d[a] = parts[i];
		out[i].nvals = -1;
	}
	return cnt;
}

/* Shape (opset 15's start and end too) and Size: values known */
static ONNX_INFER(shape_op)
{
	struct onnx_shape x;
	int64_t st, en;

	if (!onnx_shape_of(c, s, in(n, 0), &x))
		return 0;
	if (strcmp(n->op_type, "Size") == 0) {
		out->rank = 0;
		out->nvals = 1;
		out->vals[0] = 1;
		for (int i = 0; i < x.rank; i++)
			out->vals[0] *= x.d[i];
		return 1;
	}
	st = onnx_attr_int(n, "start", 0);
	en = onnx_attr_int(n, "end", x.rank);
	st = st < 0 ? st + x.rank : st;
	en = en < 0 ? en + x.rank : en;
	st = st < 0 ? 0 : st > x.rank ? x.rank : st;
	en = en < st ? st : en > x.rank ? x.rank : en;
	out->rank = 1;
	out->d[0] = en - st;
	out->nvals = (int)(en - st);
	memcpy(out->vals, x.d + st, (size_t)(en - st) * sizeof(*x.d));
	return out->d[0] > 0;
}

/* Cast and Identity keep known values; the rest of the same-shape ops do not */
static ONNX_INFER(keep_values)
{
	return same(c, n, s, out);
}

static ONNX_INFER(same_values_dropped)
{
	int r = same(c, n, s, out);

	out->nvals = -1;
	return r;
}

static ONNX_INFER(tile_expand)
{
	int64_t v[SPP_MAX_DIMS];
	int cnt;
	struct onnx_shape x;

	if (!onnx_shape_of(c, s, in(n, 0), &x) || !onnx_const_ints(c, s, in(n, 1), v, SPP_MAX_DIMS, &cnt))
		return 0;
	if (strcmp(n->op_type, "Tile") == 0) {
		if (cnt != x.rank)
			return 0;
		*out = x;
		for (int i = 0; i < cnt; i++)
			out->d[i] *= v[i];
		out->nvals = -1;
		return 1;
	}
	int r = cnt > x.rank ? cnt : x.rank;

	for (int k = 0; k < r; k++) {
		int a = x.rank - r + k, b = cnt - r + k;
		int64_t da = a >= 0 ? x.d[a] : 1, db = b >= 0 ? v[b] : 1;

		if (da != db && da != 1 && db != 1)
			return 0;
		out->d[k] = da == 1 ? db : da;
	}
	out->rank = r;
	out->nvals = -1;
	return 1;
}

static ONNX_INFER(constant_of_shape)
{
	int cnt;

	if (!onnx_const_ints(c, s, in(n, 0), out->d, SPP_MAX_DIMS, &cnt))
		return 0;
	out->rank = cnt;
	out->nvals = -1;
	return 1;
}

/* One row per op: how its first outputs' shapes follow from its inputs. */
static const struct infer_row {
	const char *op;
	int (*fn)(const struct onnx_ctx *c, const Onnx__NodeProto *n, const struct onnx_scope *s,
		  struct onnx_shape *out);
} infer_table[] = {
	{"Conv", onnx_infer_conv}, {"ConvInteger", onnx_infer_conv},
	{"QLinearConv", onnx_infer_conv}, {"ConvTranspose", onnx_infer_conv_transpose},
	{"MaxPool", onnx_infer_pool}, {"AveragePool", onnx_infer_pool}, {"LpPool", onnx_infer_pool},
	{"GlobalAveragePool", onnx_infer_global_pool}, {"GlobalMaxPool", onnx_infer_global_pool},
	{"GlobalLpPool", onnx_infer_global_pool},
	{"Gemm", onnx_infer_gemm}, {"MatMul", onnx_infer_matmul}, {"MatMulInteger", onnx_infer_matmul},
	{"Resize", onnx_infer_resize}, {"Upsample", onnx_infer_resize},
	{"Gather", onnx_infer_gather}, {"Slice", onnx_infer_slice},
	{"DepthToSpace", onnx_infer_depth_space}, {"SpaceToDepth", onnx_infer_depth_space},
	{"Flatten", flatten}, {"Reshape", reshape}, {"Transpose", transpose},
	{"Squeeze", squeeze}, {"Unsqueeze", squeeze}, {"Concat", concat}, {"Pad", pad},
	{"ReduceMean", reduce}, {"ReduceSum", reduce}, {"ReduceMax", reduce}, {"ReduceMin", reduce},
	{"ReduceProd", reduce}, {"ReduceL1", reduce}, {"ReduceL2", reduce},
	{"ReduceSumSquare", reduce}, {"ReduceLogSum", reduce}, {"ReduceLogSumExp", reduce},
	{"ArgMax", reduce}, {"ArgMin", reduce},
	{"Shape", shape_op}, {"Size", shape_op}, {"Tile", tile_expand}, {"Expand", tile_expand},
	{"ConstantOfShape", constant_of_shape},
	{"Identity", keep_values}, {"Cast", keep_values}, {"CastLike", keep_values},
	{"Add", broadcast}, {"Sub", broadcast}, {"Mul", broadcast}, {"Div", broadcast},
	{"Pow", broadcast}, {"Max", broadcast}, {"Min", broadcast}, {"Sum", broadcast},
	{"Mean", broadcast}, {"Where", broadcast}, {"Equal", broadcast}, {"Greater", broadcast},
	{"Less", broadcast}, {"GreaterOrEqual", broadcast}, {"LessOrEqual", broadcast},
	{"And", broadcast}, {"Or", broadcast}, {"Xor", broadcast}, {"Mod", broadcast},
	{"PRelu", broadcast},
	{"Relu", same_values_dropped}, {"LeakyRelu", same_values_dropped},
	{"Sigmoid", same_values_dropped}, {"Tanh", same_values_dropped},
	{"HardSigmoid", same_values_dropped}, {"HardSwish", same_values_dropped},
	{"Clip", same_values_dropped}, {"Elu", same_values_dropped}, {"Selu", same_values_dropped},
	{"Celu", same_values_dropped}, {"Gelu", same_values_dropped}, {"Erf", same_values_dropped},
	{"Softplus", same_values_dropped}, {"Softsign", same_values_dropped},
	{"Mish", same_values_dropped}, {"Exp", same_values_dropped}, {"Log", same_values_dropped},
	{"Sqrt", same_values_dropped}, {"Neg", same_values_dropped}, {"Abs", same_values_dropped},
	{"Reciprocal", same_values_dropped}, {"Dropout", same_values_dropped},
	{"BatchNormalization", same_values_dropped}, {"InstanceNormalization", same_values_dropped},
	{"LayerNormalization", same_values_dropped}, {"GroupNormalization", same_values_dropped},
	{"LRN", same_values_dropped}, {"Softmax", same_values_dropped},
	{"LogSoftmax", same_values_dropped}, {"Hardmax", same_values_dropped},
	{"QuantizeLinear", same_values_dropped}, {"DequantizeLinear", same_values_dropped},
	{"Floor", same_values_dropped}, {"Ceil", same_values_dropped}, {"Round", same_values_dropped},
	{"Not", same_values_dropped}, {"Sin", same_values_dropped}, {"Cos", same_values_dropped},
	{"Sign", same_values_dropped}, {"ThresholdedRelu", same_values_dropped},
	{"Shrink", same_values_dropped}, {"CumSum", same_values_dropped},
	{"MeanVarianceNormalization", same_values_dropped}, {"Trilu", same_values_dropped},
};

int onnx_shapes_infer(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	struct onnx_shape out[OUTS];
	int got = 0;

	if (!n->op_type)
		return SPP_OK;
	if (strcmp(n->op_type, "Split") == 0) {
		got = split(c, n, s, out);
	} else if (strcmp(n->op_type, "LSTM") == 0 || strcmp(n->op_type, "GRU") == 0 ||
		   strcmp(n->op_type, "RNN") == 0) {
		got = onnx_infer_rnn(c, n, s, out);
	} else {
		for (size_t i = 0; i < sizeof(infer_table) / sizeof(infer_table[0]); i++)
			if (strcmp(infer_table[i].op, n->op_type) == 0) {
				out[0].nvals = -1;
				got = infer_table[i].fn(c, n, s, &out[0]);
				break;
			}
	}
	for (int i = 0; i < got && (size_t)i < n->n_output; i++)
		if (onnx_shape_set(s, n->output[i], &out[i]))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	/* an output left unknown keeps the file's value_info (onnx_scope_shape) */
	return SPP_OK;
}
