/*
 * The shape inferrers of the network ops (onnx_shapes.c has the table):
 * convolutions and pooling with ONNX's output-size rules, Gemm and MatMul
 * with numpy's broadcasting, Resize, Gather, Slice and DepthToSpace.
 */
#include "profiler/onnx/onnx_internal.h"

#include <math.h>
#include <string.h>

static const char *in(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_input && n->input[i] && *n->input[i] ? n->input[i] : NULL;
}

/* Whether the node's string attribute name reads text. */
static int attr_is(const Onnx__NodeProto *n, const char *name, const char *text)
{
	const Onnx__AttributeProto *a = onnx_attr(n, name);

	return a && a->has_s && a->s.len == strlen(text) && memcmp(a->s.data, text, a->s.len) == 0;
}

/* An attribute of one value per spatial axis, dflt when absent; 0 when of another length. */
static int per_axis(const Onnx__NodeProto *n, const char *name, int nsp, int64_t dflt, int64_t *v)
{
	int cnt;

	if (!onnx_attr(n, name)) {
		for (int i = 0; i < nsp; i++)
			v[i] = dflt;
		return 1;
	}
	return onnx_attr_ints(n, name, v, SPP_MAX_DIMS, &cnt) && cnt == nsp;
}

/*
 * The spatial output sizes of a convolution or pooling over x (kernel k),
 * or of a transposed convolution: ONNX's formulas, auto_pad included.
 */
static int spatial(const Onnx__NodeProto *n, const struct onnx_shape *x, const int64_t *k,
		   int transposed, int64_t *out)
{
	int nsp = x->rank - 2, cnt, same = attr_is(n, "auto_pad", "SAME_UPPER") ||
					   attr_is(n, "auto_pad", "SAME_LOWER");
	int valid = attr_is(n, "auto_pad", "VALID"), ceil_mode = (int)onnx_attr_int(n, "ceil_mode", 0);
	int64_t st[SPP_MAX_DIMS], dil[SPP_MAX_DIMS], op[SPP_MAX_DIMS], pads[2 * SPP_MAX_DIMS] = {0};

	if (nsp < 1 || !per_axis(n, "strides", nsp, 1, st) || !per_axis(n, "dilations", nsp, 1, dil) ||
	    !per_axis(n, "output_padding", nsp, 0, op))
		return 0;
	if (onnx_attr(n, "pads") && !(onnx_attr_ints(n, "pads", pads, 2 * SPP_MAX_DIMS, &cnt) &&
				      cnt == 2 * nsp))
		return 0;
	for (int i = 0; i < nsp; i++) {
		int64_t size = x->d[2 + i], ek = (k[i] - 1) * dil[i] + 1, num;

		if (st[i] <= 0 || dil[i] <= 0 || k[i] <= 0)
			return 0;
		if (size == ONNX_DIM_UNKNOWN) {
			out[i] = ONNX_DIM_UNKNOWN;
			continue;
		}
		if (transposed) {
			out[i] = same ? size * st[i]
				      : st[i] * (size - 1) + op[i] + ek -
						(valid ? 0 : pads[i] + pads[i + nsp]);
			continue;
		}
		if (same) {
			out[i] = (size + st[i] - 1) / st[i];
			continue;
		}
		num = size + (valid ? 0 : pads[i] + pads[i + nsp]) - ek;
		if (num < 0)
			return 0;
		out[i] = (ceil_mode ? (num + st[i] - 1) / st[i] : num / st[i]) + 1;
	}
	return 1;
}

/* The kernel of a convolution: kernel_shape, else W's spatial dimensions. */
static int conv_kernel(const Onnx__NodeProto *n, const struct onnx_shape *w, int nsp, int64_t *k)
{
	int cnt;

	if (onnx_attr(n, "kernel_shape"))
		return onnx_attr_ints(n, "kernel_shape", k, SPP_MAX_DIMS, &cnt) && cnt == nsp;
	if (w->rank != nsp + 2)
		return 0;
	memcpy(k, w->d + 2, (size_t)nsp * sizeof(*k));
	return 1;
}

/* Conv, ConvInteger (X, W) and QLinearConv (X, x_scale, x_zero, W, ...) */
ONNX_INFER(onnx_infer_conv)
{
	struct onnx_shape x, w;
	int64_t k[SPP_MAX_DIMS];

	if (!onnx_shape_part(c, s, in(n, 0), &x) ||
	    !onnx_shape_of(c, s, in(n, strcmp(n->op_type, "QLinearConv") == 0 ? 3 : 1), &w) ||
	    x.rank < 3 || w.rank != x.rank || !conv_kernel(n, &w, x.rank - 2, k) ||
	    !spatial(n, &x, k, 0, out->d + 2))
		return 0;
	out->rank = x.rank;
	out->d[0] = x.d[0];
	out->d[1] = w.d[0];
	return 1;
}

ONNX_INFER(onnx_infer_conv_transpose)
{
	struct onnx_shape x, w;
	int64_t k[SPP_MAX_DIMS], g = onnx_attr_int(n, "group", 1);
	int cnt, nsp;

	if (!onnx_shape_part(c, s, in(n, 0), &x) || !onnx_shape_of(c, s, in(n, 1), &w) ||
	    x.rank < 3 || w.rank != x.rank || g <= 0 || g > ONNX_MAX_DIM)
		return 0;
	nsp = x.rank - 2;
	if (onnx_attr(n, "output_shape")) {
		if (!onnx_attr_ints(n, "output_shape", out->d + 2, SPP_MAX_DIMS - 2, &cnt) || cnt != nsp)
			return 0;
	} else if (!conv_kernel(n, &w, nsp, k) || !spatial(n, &x, k, 1, out->d + 2)) {
		return 0;
	}
	out->rank = x.rank;
	out->d[0] = x.d[0];
	out->d[1] = w.d[1] * g;
	return 1;
}

/* MaxPool, AveragePool, LpPool: kernel_shape required, channels kept */
ONNX_INFER(onnx_infer_pool)
{
	struct onnx_shape x;
	int64_t k[SPP_MAX_DIMS];
	int cnt;

	if (!onnx_shape_part(c, s, in(n, 0), &x) || x.rank < 3 ||
	    !onnx_attr_ints(n, "kernel_shape", k, SPP_MAX_DIMS, &cnt) || cnt != x.rank - 2 ||
	    !spatial(n, &x, k, 0, out->d + 2))
		return 0;
	out->rank = x.rank;
	out->d[0] = x.d[0];
	out->d[1] = x.d[1];
	return 1;
}

ONNX_INFER(onnx_infer_global_pool)
{
	if (!onnx_shape_part(c, s, in(n, 0), out) || out->rank < 3)
		return 0;
	for (int i = 2; i < out->rank; i++)
		out->d[i] = 1;
	out->nvals = -1;
	return 1;
}

ONNX_INFER(onnx_infer_gemm)
{
	struct onnx_shape a, b;
	int ta = onnx_attr_int(n, "transA", 0) != 0, tb = onnx_attr_int(n, "transB", 0) != 0;

	if (!onnx_shape_of(c, s, in(n, 0), &a) || !onnx_shape_of(c, s, in(n, 1), &b) || a.rank != 2 ||
	    b.rank != 2 || a.d[ta ? 0 : 1] != b.d[tb ? 1 : 0])
		return 0;
	out->rank = 2;
	out->d[0] = a.d[ta ? 1 : 0];
	out->d[1] = b.d[tb ? 0 : 1];
	return 1;
}

/* numpy.matmul: 1-D operands promoted and dropped again, batch dims broadcast */
ONNX_INFER(onnx_infer_matmul)
{
	struct onnx_shape a, b;
	int a1, b1, r;

	if (!onnx_shape_of(c, s, in(n, 0), &a) || !onnx_shape_of(c, s, in(n, 1), &b) || a.rank < 1 ||
	    b.rank < 1)
		return 0;
	if ((a1 = a.rank == 1)) {
		a.d[1] = a.d[0];
		a.d[0] = 1;
		a.rank = 2;
	}
	if ((b1 = b.rank == 1)) {
		b.d[1] = 1;
		b.rank = 2;
	}
	if (a.d[a.rank - 1] != b.d[b.rank - 2])
		return 0;
	r = a.rank > b.rank ? a.rank : b.rank;
	for (int k = 0; k < r - 2; k++) {
		int i = a.rank - r + k, j = b.rank - r + k;
		int64_t da = i >= 0 ? a.d[i] : 1, db = j >= 0 ? b.d[j] : 1;

		if (da != db && da != 1 && db != 1)
			return 0;
		out->d[k] = da == 1 ? db : da;
	}
	out->rank = r - a1 - b1;
	if (!a1)
		out->d[r - 2] = a.d[a.rank - 2];
	if (!b1)
		out->d[r - 2 + !a1] = b.d[b.rank - 1];
	return 1;
}

/* Resize (X, roi, scales, sizes; opset 10: X, scales) and Upsample (X, scales or the attribute) */
ONNX_INFER(onnx_infer_resize)
{
	int resize = strcmp(n->op_type, "Resize") == 0, cnt;
	double sc[SPP_MAX_DIMS];
	int64_t sizes[SPP_MAX_DIMS];
	const Onnx__AttributeProto *a;

	if (!onnx_shape_part(c, s, in(n, 0), out) || onnx_attr(n, "axes"))
		return 0;
	out->nvals = -1;
	if (resize && onnx_const_ints(c, s, in(n, 3), sizes, SPP_MAX_DIMS, &cnt) && cnt) {
		if (cnt != out->rank)
			return 0;
		memcpy(out->d, sizes, (size_t)cnt * sizeof(*sizes));
		return 1;
	}
	if (!onnx_const_floats(c, s, in(n, resize && n->n_input > 2 ? 2 : 1), sc, SPP_MAX_DIMS, &cnt)) {
		if (resize || !(a = onnx_attr(n, "scales")) || a->n_floats > SPP_MAX_DIMS)
			return 0;
		for (size_t i = 0; i < a->n_floats; i++)
			sc[i] = a->floats[i];
		cnt = (int)a->n_floats;
	}
	if (cnt != out->rank)
		return 0;
	for (int i = 0; i < cnt; i++) {
		double v = floor((double)out->d[i] * sc[i]);

		if (out->d[i] == ONNX_DIM_UNKNOWN)
			continue;

		if (!(v >= 1 && v <= (double)ONNX_MAX_DIM))
			return 0;
		out->d[i] = (int64_t)v;
	}
	return 1;
}

/* Gather: data[:axis] + indices + data[axis+1:], values gathered where known */
ONNX_INFER(onnx_infer_gather)
{
	struct onnx_shape x, idx;
	int64_t ax = onnx_attr_int(n, "axis", 0);

	if (!onnx_shape_of(c, s, in(n, 0), &x) || !onnx_shape_of(c, s, in(n, 1), &idx))
		return 0;
	if (ax < 0)
		ax += x.rank;
	if (ax < 0 || ax >= x.rank || x.rank - 1 + idx.rank > SPP_MAX_DIMS)
		return 0;
	out->rank = 0;
	for (int i = 0; i < x.rank; i++) {
		if (i != ax) {
			out->d[out->rank++] = x.d[i];
			continue;
		}
		for (int j = 0; j < idx.rank; j++)
			out->d[out->rank++] = idx.d[j];
	}
	out->nvals = -1;
	if (x.rank == 1 && x.nvals >= 0 && idx.nvals >= 0 && idx.rank <= 1) {
		for (int j = 0; j < idx.nvals; j++) {
			int64_t k = idx.vals[j] < 0 ? idx.vals[j] + x.nvals : idx.vals[j];

			if (k < 0 || k >= x.nvals)
				return 1;
			out->vals[j] = x.vals[k];
		}
		out->nvals = idx.nvals;
	}
	return 1;
}

/* One axis of a Slice: the count of start:end:step over dim (numpy's clamping). */
static int64_t slice_len(int64_t dim, int64_t st, int64_t en, int64_t step)
{
	if (st < 0)
		st += dim;
	if (en < 0)
		en += dim;
	if (step > 0) {
		st = st < 0 ? 0 : st > dim ? dim : st;
		en = en < 0 ? 0 : en > dim ? dim : en;
		return en > st ? (en - st + step - 1) / step : 0;
	}
	st = st < 0 ? -1 : st > dim - 1 ? dim - 1 : st;
	en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
	return st > en ? (st - en + (-step) - 1) / (-step) : 0;
}

/* Slice: starts, ends, axes, steps as inputs (opset 10+) or attributes (opset 1) */
ONNX_INFER(onnx_infer_slice)
{
	int64_t st[SPP_MAX_DIMS], en[SPP_MAX_DIMS], ax[SPP_MAX_DIMS], sp[SPP_MAX_DIMS];
	int ns, ne, na = -1, nstep = -1, attrs = n->n_input < 2;
	struct onnx_shape x;

	if (!onnx_shape_of(c, s, in(n, 0), &x) ||
	    !(attrs ? onnx_attr_ints(n, "starts", st, SPP_MAX_DIMS, &ns) &&
			      onnx_attr_ints(n, "ends", en, SPP_MAX_DIMS, &ne)
		    : onnx_const_ints(c, s, in(n, 1), st, SPP_MAX_DIMS, &ns) &&
			      onnx_const_ints(c, s, in(n, 2), en, SPP_MAX_DIMS, &ne)) || ns != ne)
		return 0;
	if (attrs ? onnx_attr(n, "axes") && !onnx_attr_ints(n, "axes", ax, SPP_MAX_DIMS, &na)
		  : in(n, 3) && !onnx_const_ints(c, s, in(n, 3), ax, SPP_MAX_DIMS, &na))
		return 0;
	if (!attrs && in(n, 4) && !onnx_const_ints(c, s, in(n, 4), sp, SPP_MAX_DIMS, &nstep))
		return 0;
	if ((na >= 0 && na != ns) || (nstep >= 0 && nstep != ns))
		return 0;
	*out = x;
	for (int i = 0; i < ns; i++) {
		int64_t a = na >= 0 ? ax[i] : i, step = nstep >= 0 ? sp[i] : 1;

		if (a < 0)
			a += x.rank;
		if (a < 0 || a >= x.rank || step == 0)
			return 0;
		out->d[a] = slice_len(x.d[a], st[i], en[i], step);
		/* values sliced where a known vector is cut with step 1 */
		if (x.rank == 1 && x.nvals >= 0 && step == 1 && out->d[a] > 0) {
			int64_t b = st[i] < 0 ? st[i] + x.d[0] : st[i];

			b = b < 0 ? 0 : b;
			memmove(out->vals, x.vals + b, (size_t)out->d[a] * sizeof(*x.vals));
			out->nvals = (int)out->d[a];
		} else {
			out->nvals = -1;
		}
	}
	return 1;
}

ONNX_INFER(onnx_infer_depth_space)
{
	int64_t b = onnx_attr_int(n, "blocksize", 0);
	int to_space = strcmp(n->op_type, "DepthToSpace") == 0;

	if (!onnx_shape_of(c, s, in(n, 0), out) || out->rank != 4 || b <= 0 || b > 1 << 16)
		return 0;
	out->nvals = -1;
	if (to_space) {
		if (out->d[1] % (b * b))
			return 0;
		out->d[1] /= b * b;
		out->d[2] *= b;
		out->d[3] *= b;
		return 1;
	}
	if (out->d[2] % b || out->d[3] % b)
		return 0;
	out->d[1] *= b * b;
	out->d[2] /= b;
	out->d[3] /= b;
	return 1;
}

/*
 * LSTM, GRU, RNN: X [seq, batch, input] (layout 1: [batch, seq, input]) to
 * Y [seq, dirs, batch, hidden] and Y_h, Y_c [dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden], [batch, dirs, hidden]); the count of outputs.
 */
ONNX_INFER(onnx_infer_rnn)
{
	struct onnx_shape x;
	int64_t hid = onnx_attr_int(n, "hidden_size", 0), seq, batch;
	int64_t dirs = attr_is(n, "direction", "bidirectional") ? 2 : 1;
	int layout = onnx_attr_int(n, "layout", 0) != 0;

	if (!onnx_shape_part(c, s, in(n, 0), &x) || x.rank != 3 || hid <= 0 || hid > ONNX_MAX_DIM)
		return 0;
	seq = x.d[layout];
	batch = x.d[!layout];
	out[0] = (struct onnx_shape){.rank = 4, .nvals = -1};
	if (layout) {
		int64_t y[4] = {batch, seq, dirs, hid};

		memcpy(out[0].d, y, sizeof(y));
	} else {
		int64_t y[4] = {seq, dirs, batch, hid};

		memcpy(out[0].d, y, sizeof(y));
	}
	out[1] = (struct onnx_shape){.rank = 3, .nvals = -1};
	out[1].d[0] = layout ? batch : dirs;
	out[1].d[1] = layout ? dirs : batch;
	out[1].d[2] = hid;
	out[2] = out[1];
	return strcmp(n->op_type, "LSTM") == 0 ? 3 : 2;
}
