/*
 * Layer descriptions of the graph's nodes: each op whose weight operand is a
 * constant becomes one or more GEMM views (DESIGN section 2), W (M x K)
 * applied to X (K x N). With (i, j) = (row of W, column of W):
 *
 * - Gemm Y = A'B' (A' = transA ? A^T : A, B' likewise), weight B: transB=1
 *   B [out, in] row-major; transB=0 B [in, out] transposed (row_stride 1,
 *   inner_stride M). A constant A (rare) is W = A' with N the columns of B'.
 *   N = the rows of Y.
 * - MatMul X·W, W [.., in, out]: the transposed view; W·X, W [.., M, K]:
 *   row-major. A weight of rank 3 or more is a stack of matrices: one layer
 *   per matrix, "<tensor>[i]", base i·M·K, N = numel(Y) / (stack · M).
 * - Conv, W [O, I/g, k...] (1 to 3 spatial dims): M = O, K = (I/g)·k..., c
 *   fastest (the view of profiler/layer.c), N = numel(Y) / O =
 *   batch · spatial outputs.
 * - ConvTranspose, W [C, O/g, k...]: each input pixel's C/g channels of a
 *   group produce (O/g)·k... output contributions (col2im), so a group is
 *   W_g^T with M = (O/g)·k..., K = C/g: the transposed view of the group's
 *   [C/g, (O/g)·k...] block. One layer per group ("<tensor>[g]" when
 *   group > 1), N = numel(X) / C = batch · spatial inputs.
 * - LSTM, GRU, RNN: W [dirs, gates·hidden, input] and R [dirs, gates·hidden,
 *   hidden], row-major, one layer per direction ("<tensor>[d]" when
 *   bidirectional), M = gates·hidden, K = input or hidden. Both multiply
 *   every time step of every sequence: N = seq · batch = numel(X) / input.
 *
 * N is 0 (use --n) when the graph gives no complete static shape for the
 * value N is read from (inferred, value_info, graph inputs and outputs, this
 * graph or around).
 */
#include "base/budget.h"
#include "profiler/onnx/onnx_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"

struct view {
	int64_t m, k, row_stride, inner, inner_stride, outer_stride;
	uint64_t base;
};

static struct view rowmajor(int64_t m, int64_t k, uint64_t base)
{
	return (struct view){.m = m, .k = k, .row_stride = k, .inner = k,
			     .inner_stride = 1, .base = base};
}

/* W = S^T for S stored [k, m] row-major */
static struct view transposed(int64_t m, int64_t k, uint64_t base)
{
	return (struct view){.m = m, .k = k, .row_stride = 1, .inner = k,
			     .inner_stride = m, .base = base};
}

static const char *input(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_input ? n->input[i] : NULL;
}

static const char *output(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_output ? n->output[i] : NULL;
}

/* numel of a value's static shape over div, 0 when unknown or not a multiple */
static int64_t rows_of(const struct onnx_scope *s, const char *name, int64_t div)
{
	int64_t dims[SPP_MAX_DIMS], numel = 1;
	int rank;

	if (div <= 0 || !onnx_scope_shape(s, name, dims, &rank))
		return 0;
	for (int i = 0; i < rank; i++) {
		if (numel > INT64_MAX / dims[i])
			return 0;
		numel *= dims[i];
	}
	return numel % div ? 0 : numel / div;
}

/* One dimension of a value's static shape (negative d counts from the end), 0 when unknown. */
static int64_t dim_of(const struct onnx_scope *s, const char *name, int want_rank, int d)
{
	int64_t dims[SPP_MAX_DIMS];
	int rank;

	if (!onnx_scope_shape(s, name, dims, &rank) || (want_rank && rank != want_rank))
		return 0;
	if (d < 0)
		d += rank;
	return d >= 0 && d < rank ? dims[d] : 0;
}

static int is_input(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; g && i < g->n_input; i++)
		if (g->input[i]->name && strcmp(g->input[i]->name, name) == 0)
			return 1;
	return 0;
}

static int push(struct onnx_ctx *c, const Onnx__NodeProto *n, int tensor,
		enum spp_op op, struct view v, int64_t rows, int slice)
{
	struct spp_model *m = c->m;
	struct spp_layer_desc *d;
	const char *tn = m->tensors[tensor].name;

	if (v.m <= 0 || v.k <= 0)
		return SPP_OK; /* an empty weight multiplies nothing */
	/* a 68-byte file must not slice a weight into a million layers */
	if ((uint64_t)m->nlayer_descs >= spp_budget_layers(m->bytes)) {
		char what[160];

		snprintf(what, sizeof(what), "node '%.100s' (%s)", onnx_name(n->name), n->op_type);
		return spp_budget_check_layers((uint64_t)m->nlayer_descs + 1, m->bytes, c->file, what,
					       c->err);
	}
	if (m->nlayer_descs == INT_MAX)
		return onnx_fault(c, SPP_E_BUDGET, "more than %d layers", INT_MAX);
	if (m->nlayer_descs == c->descs_cap) {
		int cap = c->descs_cap ? 2 * c->descs_cap : 16;
		struct spp_layer_desc *g = realloc(m->layer_descs, (size_t)cap * sizeof(*g));
		if (!g)
			return onnx_fault(c, SPP_E_NOMEM, "out of memory for %d layers", cap);
		m->layer_descs = g;
		c->descs_cap = cap;
	}
	d = &m->layer_descs[m->nlayer_descs];
	*d = (struct spp_layer_desc){
		.tensor = tensor, .op = (int)op, .m = v.m, .k = v.k, .base = v.base,
		.row_stride = v.row_stride, .inner = v.inner,
		.inner_stride = v.inner_stride, .outer_stride = v.outer_stride,
		.n = rows > 0 ? rows : 0,
	};
	if (slice >= 0 ? asprintf(&d->name, "%s[%d]", tn, slice) < 0
		       : !(d->name = strdup(tn)))
		d->name = NULL;
	d->node_name = n->name && *n->name ? strdup(n->name) : NULL;
	d->op_type = strdup(n->op_type);
	m->nlayer_descs++; /* counted first, so that destroy frees what was set */
	if (!d->name || !d->op_type || (n->name && *n->name && !d->node_name))
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

/*
 * The tensor of node n's weight input i, a constant or folded from
 * constants (onnx_fold.c), when it has min_rank..max_rank dimensions and
 * data; else *t NULL, and *index -1 where the input is no constant, *un
 * saying why. The pointer lives until the next fold (the array may move).
 */
static int weight(struct onnx_ctx *c, struct onnx_scope *s, const Onnx__NodeProto *n, size_t i,
		  int min_rank, int max_rank, const struct spp_tensor **t, int *index,
		  struct onnx_unfolded *un)
{
	const struct spp_tensor *w;
	int rc;

	*t = NULL;
	if ((rc = onnx_fold_value(c, s, input(n, i), index, un)) || *index < 0)
		return rc;
	w = &c->m->tensors[*index];
	/* a sparse tensor kept as a count (too large to densify) has no data */
	if (w->ndim >= min_rank && w->ndim <= max_rank && w->numel && !w->nnz_only)
		*t = w;
	return SPP_OK;
}

/*
 * The node's bias input i (Gemm's C, Conv's B) as the bias of the layer
 * just pushed, when it is an initializer: one value per output feature,
 * which is a row of the layer's W (layer.c checks its shape). rc: push's.
 */
static int with_bias(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s,
		     size_t i, int before, int rc)
{
	int idx = -1;

	if (!rc)
		rc = onnx_fold_value(c, s, input(n, i), &idx, NULL);
	if (!rc && idx >= 0 && c->m->nlayer_descs > before)
		c->m->layer_descs[c->m->nlayer_descs - 1].bias = idx + 1;
	return rc;
}

/*
 * Weight input i of node n, which is no constant (index -1: un says why;
 * else a tensor that is no weight, as before): a warning. For a weight
 * by definition (Conv's W, an LSTM's W and R).
 */
static int unresolved(struct onnx_ctx *c, const struct onnx_scope *s, const Onnx__NodeProto *n,
		      size_t i, int index, const struct onnx_unfolded *un)
{
	const char *name = input(n, i);

	return index < 0 && name && *name ? onnx_fold_note(c, s, n, i, un) : SPP_OK;
}

/*
 * MatMul and Gemm with neither operand a constant: both may be activations
 * (attention's Q.K^T), so an operand is said to be unresolved only where
 * it is computed from constants through an op spprof does not fold, or
 * where B is itself an input of the main graph (weights given at run time).
 */
static int operands_unresolved(struct onnx_ctx *c, const struct onnx_scope *s,
			       const Onnx__NodeProto *n, int bi, const struct onnx_unfolded *ub,
			       int ai, const struct onnx_unfolded *ua)
{
	const struct onnx_scope *root = s;
	const char *b = input(n, 1);
	int rc = SPP_OK;

	while (root->parent)
		root = root->parent;
	if (bi < 0 && (!ub->runtime || (b && strcmp(ub->source, b) == 0 &&
					is_input(root->g, b))))
		rc = unresolved(c, s, n, 1, bi, ub);
	if (!rc && ai < 0 && !ua->runtime)
		rc = unresolved(c, s, n, 0, ai, ua);
	return rc;
}

static int gemm(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	int64_t ta = onnx_attr_int(n, "transA", 0), tb = onnx_attr_int(n, "transB", 0), rows;
	const struct spp_tensor *w;
	struct onnx_unfolded ub, ua;
	int wi, bi, rc;

	if ((rc = weight(c, s, n, 1, 2, 2, &w, &bi, &ub)))
		return rc;
	if (w) {
		rows = dim_of(s, output(n, 0), 2, 0);
		if (!rows)
			rows = dim_of(s, input(n, 0), 2, ta ? 1 : 0);
		/* X.W + C: C of the output features, W's rows */
		int before = c->m->nlayer_descs;

		return with_bias(c, n, s, 2, before,
				 push(c, n, bi, SPP_OP_GEMM, tb ? rowmajor(w->shape[0], w->shape[1], 0)
								: transposed(w->shape[1], w->shape[0], 0),
				      rows, -1));
	}
	if ((rc = weight(c, s, n, 0, 2, 2, &w, &wi, &ua)))
		return rc;
	if (w) {
		rows = dim_of(s, output(n, 0), 2, 1);
		if (!rows)
			rows = dim_of(s, input(n, 1), 2, tb ? 0 : 1);
		return push(c, n, wi, SPP_OP_GEMM, ta ? transposed(w->shape[1], w->shape[0], 0)
						      : rowmajor(w->shape[0], w->shape[1], 0),
			    rows, -1);
	}
	return operands_unresolved(c, s, n, bi, &ub, wi, &ua);
}

static int matmul(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	const struct spp_tensor *w;
	struct onnx_unfolded ub, ua;
	int wi, bi, right, rc, r;
	int64_t stack = 1, rows, a, b;
	const char *x;

	if ((rc = weight(c, s, n, 1, 2, SPP_MAX_DIMS, &w, &bi, &ub)))
		return rc;
	right = w != NULL;
	if (!right && (rc = weight(c, s, n, 0, 2, SPP_MAX_DIMS, &w, &wi, &ua)))
		return rc;
	if (!w)
		return operands_unresolved(c, s, n, bi, &ub, wi, &ua);
	if (right)
		wi = bi;
	r = w->ndim;
	a = w->shape[r - 2];
	b = w->shape[r - 1];
	for (int i = 0; i < r - 2; i++)
		stack *= w->shape[i];
	/* X·W: W [in, out], M = out; W·X: W [M, K] */
	rows = rows_of(s, output(n, 0), stack * (right ? b : a));
	x = input(n, right ? 0 : 1);
	if (!rows) {
		int64_t dims[SPP_MAX_DIMS];
		int xr;
		if (onnx_scope_shape(s, x, dims, &xr))
			rows = rows_of(s, x, (right ? a : b) * (xr > 2 ? stack : 1));
	}
	for (int64_t i = 0; i < stack && !rc; i++) {
		uint64_t base = (uint64_t)i * (uint64_t)(a * b);
		rc = push(c, n, wi, SPP_OP_MATMUL,
			  right ? transposed(b, a, base) : rowmajor(a, b, base), rows,
			  stack > 1 ? (int)i : -1);
	}
	return rc;
}

static int64_t spatial(const struct spp_tensor *w)
{
	int64_t sp = 1;

	for (int d = 2; d < w->ndim; d++)
		sp *= w->shape[d];
	return sp;
}

static int conv(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	static const enum spp_op ops[] = {SPP_OP_CONV1D, SPP_OP_CONV2D, SPP_OP_CONV3D};
	const struct spp_tensor *w;
	struct onnx_unfolded un;
	int wi, rc;

	if ((rc = weight(c, s, n, 1, 3, 5, &w, &wi, &un)) || !w)
		return rc ? rc : unresolved(c, s, n, 1, wi, &un);
	int64_t o = w->shape[0], ch = w->shape[1], sp = spatial(w);
	struct view v = {.m = o, .k = ch * sp, .row_stride = ch * sp, .inner = ch,
			 .inner_stride = sp, .outer_stride = 1};
	int before = c->m->nlayer_descs;

	return with_bias(c, n, s, 2, before,
			 push(c, n, wi, ops[w->ndim - 3], v, rows_of(s, output(n, 0), o), -1));
}

static int conv_transpose(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	const struct spp_tensor *w;
	struct onnx_unfolded un;
	int64_t g = onnx_attr_int(n, "group", 1);
	int wi, rc;

	if ((rc = weight(c, s, n, 1, 3, 5, &w, &wi, &un)) || !w)
		return rc ? rc : unresolved(c, s, n, 1, wi, &un);
	int64_t ch = w->shape[0], cols = w->shape[1] * spatial(w);
	if (g <= 0 || g > ch || ch % g)
		return onnx_fault(c, SPP_E_FORMAT, "node '%s': ConvTranspose group %lld does not "
				  "divide the %lld input channels of '%s'", onnx_name(n->name),
				  (long long)g, (long long)ch, w->name);
	int64_t cg = ch / g, rows = rows_of(s, input(n, 0), ch);
	for (int64_t i = 0; i < g && !rc; i++)
		rc = push(c, n, wi, SPP_OP_CONV_TRANSPOSE,
			  transposed(cols, cg, (uint64_t)(i * cg * cols)), rows,
			  g > 1 ? (int)i : -1);
	return rc;
}

static int recurrent(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s,
		     enum spp_op op)
{
	const struct spp_tensor *w;
	struct onnx_unfolded un;
	int wi, rc;
	int64_t rows = 0;

	/* N from X: [seq, batch, input] or [batch, seq, input] (layout=1) */
	if ((rc = weight(c, s, n, 1, 3, 3, &w, &wi, &un)))
		return rc;
	if (w)
		rows = rows_of(s, input(n, 0), w->shape[2]);
	for (size_t in = 1; in <= 2 && !rc; in++) {
		if ((rc = weight(c, s, n, in, 3, 3, &w, &wi, &un)))
			return rc;
		if (!w) {
			rc = unresolved(c, s, n, in, wi, &un);
			continue;
		}
		int64_t dirs = w->shape[0], mm = w->shape[1], kk = w->shape[2];
		for (int64_t d = 0; d < dirs && !rc; d++)
			rc = push(c, n, wi, op, rowmajor(mm, kk, (uint64_t)(d * mm * kk)),
				  rows, dirs > 1 ? (int)d : -1);
	}
	return rc;
}

int onnx_layers_add(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	const char *op = n->op_type ? n->op_type : "";

	if (strcmp(op, "Gemm") == 0)
		return gemm(c, n, s);
	if (strcmp(op, "MatMul") == 0)
		return matmul(c, n, s);
	if (strcmp(op, "Conv") == 0)
		return conv(c, n, s);
	if (strcmp(op, "ConvTranspose") == 0)
		return conv_transpose(c, n, s);
	if (strcmp(op, "LSTM") == 0)
		return recurrent(c, n, s, SPP_OP_LSTM);
	if (strcmp(op, "GRU") == 0)
		return recurrent(c, n, s, SPP_OP_GRU);
	if (strcmp(op, "RNN") == 0)
		return recurrent(c, n, s, SPP_OP_RNN);
	return SPP_OK;
}

int onnx_layers_unique(struct onnx_ctx *c)
{
	struct spp_model *m = c->m;
	struct onnx_map seen = {0};
	int rc = SPP_OK;

	for (int i = 0; i < m->nlayer_descs && !rc; i++) {
		struct spp_layer_desc *d = &m->layer_descs[i];
		const struct onnx_map_entry *e = onnx_map_get(&seen, d->name);
		char *name = NULL;

		if (!e) {
			if (onnx_map_put(&seen, d->name, 1, NULL))
				rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
			continue;
		}
		/* the second use of a weight is "w#2", the third "w#3" */
		const char *first = e->key;
		int k = e->index + 1;
		if (onnx_map_put(&seen, first, k, NULL) ||
		    asprintf(&name, "%s#%d", first, k) < 0) {
			rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
			continue;
		}
		free(d->name);
		d->name = name;
	}
	onnx_map_free(&seen);
	return rc;
}
