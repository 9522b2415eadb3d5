/*
 * The whole graph's work (onnx_cost.h): each op of the main graph is one
 * of three things. It made a profiled layer (its weight input is a layer's
 * tensor): its FLOPs are the layer's, counted by the analysis. Its inputs
 * are all constants: folded once before inference, 0 per inference. Else
 * its FLOPs by the cost table of profiler/graph_cost.h, from its shapes as
 * the loader infers them; an op whose shapes are not known, or that has no
 * row, is not counted, and named. Ops inside subgraphs (If branches, Loop
 * bodies) are their If or Loop node's, which has no static cost; their
 * layers are profiled all the same.
 */
#include "profiler/onnx/onnx_cost.h"

#include <stdlib.h>
#include <string.h>

#include "profiler/graph_cost.h"

static int default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

/* The elements of value name by its inferred shape; 0 when not known or past 2^62. */
static uint64_t elements(const struct onnx_scope *s, const char *name, int64_t *dims, int *rank)
{
	uint64_t n = 1;

	if (!name || !*name || !onnx_scope_shape(s, name, dims, rank) || *rank < 0 ||
	    *rank > SPP_MAX_DIMS)
		return 0;
	for (int d = 0; d < *rank; d++)
		if (dims[d] <= 0 || __builtin_mul_overflow(n, (uint64_t)dims[d], &n) ||
		    n > (UINT64_C(1) << 62))
			return 0;
	return n;
}

/* The product of dims[from, rank); 0 when any is unknown. */
static uint64_t product(const int64_t *dims, int from, int rank)
{
	uint64_t n = 1;

	for (int d = from; d < rank; d++)
		if (dims[d] <= 0 || __builtin_mul_overflow(n, (uint64_t)dims[d], &n))
			return 0;
	return rank > from ? n : 0;
}

static int is_op(const char *op, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(op, *names) == 0)
			return 1;
	return 0;
}

/* Whether an input of n is the weight of a profiled layer. */
static int made_layer(const struct onnx_scope *s, const Onnx__NodeProto *n, const char *op,
		      const unsigned char *layer)
{
	static const char *const ops[] = {"Gemm", "MatMul", "Conv", "ConvTranspose", "LSTM", "GRU",
					  "RNN", NULL};

	if (!is_op(op, ops))
		return 0;
	for (size_t j = 0; j < n->n_input; j++) {
		int w = onnx_scope_weight(s, n->input[j]);

		if (w >= 0 && layer[w])
			return 1;
	}
	return 0;
}

/* Whether every input of n is a constant (or computed from constants only, in consts). */
static int from_constants(const struct onnx_scope *s, const struct onnx_map *consts,
			  const Onnx__NodeProto *n)
{
	size_t given = 0;

	for (size_t j = 0; j < n->n_input; j++) {
		if (!n->input[j] || !*n->input[j])
			continue;
		given++;
		if (onnx_scope_weight(s, n->input[j]) < 0 && !onnx_map_get(consts, n->input[j]))
			return 0;
	}
	return given > 0;
}

/* K of a GEMM or conv node, the window of a pool (0: not known). */
static uint64_t reduced(const struct onnx_scope *s, const Onnx__NodeProto *n,
			const struct spp_op_cost *row)
{
	int64_t dims[SPP_MAX_DIMS], v[SPP_MAX_DIMS];
	int rank = 0, count = 0;
	const char *op = n->op_type;

	if (row->kind == SPP_COST_WINDOW)
		return onnx_attr_ints(n, "kernel_shape", v, SPP_MAX_DIMS, &count) ? product(v, 0, count) : 0;
	if (row->kind == SPP_COST_GEMM) {
		if (!n->n_input || !elements(s, n->input[0], dims, &rank) || rank < 1)
			return 0;
		if (strcmp(op, "Gemm") == 0)
			return rank == 2 ? (uint64_t)dims[onnx_attr_int(n, "transA", 0) ? 0 : 1] : 0;
		return (uint64_t)dims[rank - 1];
	}
	/* Conv and ConvTranspose: W [O, C/g, k...] or [C, O/g, k...]: K is all but its first */
	{
		size_t wi = strcmp(op, "QLinearConv") == 0 ? 3 : 1;

		if (n->n_input <= wi || !elements(s, n->input[wi], dims, &rank))
			return 0;
		return product(dims, 1, rank);
	}
}

/* Resize and Upsample: nearest is free, bilinear (rank 4) the table's, others not counted. */
static int resize(const Onnx__NodeProto *n, struct spp_op_shape *sh, int rank, double *flops)
{
	const Onnx__AttributeProto *a = onnx_attr(n, "mode");

	if (!a || !a->has_s || (a->s.len == 7 && memcmp(a->s.data, "nearest", 7) == 0)) {
		*flops = 0;
		return 1;
	}
	if (a->s.len == 6 && memcmp(a->s.data, "linear", 6) == 0 && rank == 4)
		return spp_op_cost(spp_op_cost_onnx("Resize"), sh, flops);
	return 0;
}

/* Count node n of the main graph (not a Constant) into c->m->graph. */
static int cost_node(struct onnx_ctx *c, const struct onnx_scope *s, struct onnx_map *consts,
		     const Onnx__NodeProto *n, const unsigned char *layer)
{
	struct spp_graph_cost *g = &c->m->graph;
	const char *op = n->op_type ? n->op_type : "";
	const struct spp_op_cost *row = spp_op_cost_onnx(op);
	struct spp_op_shape sh = {0};
	int64_t dims[SPP_MAX_DIMS];
	int rank = 0, known;
	double flops = 0;

	if (!default_domain(n)) {
		spp_graph_cost_add(g, 0, 0, op, "an op of another domain");
		return SPP_OK;
	}
	if (made_layer(s, n, op, layer)) {
		g->layer_ops++;
		return SPP_OK;
	}
	if (from_constants(s, consts, n)) {
		for (size_t k = 0; k < n->n_output; k++)
			if (n->output[k] && *n->output[k] && onnx_map_put(consts, n->output[k], -1, NULL))
				return onnx_fault(c, SPP_E_NOMEM, "out of memory");
		spp_graph_cost_add(g, 1, 0, op, NULL);
		return SPP_OK;
	}
	if (!row || row->kind == SPP_COST_NONE) {
		spp_graph_cost_add(g, 0, 0, op, row ? "no static cost" : "not in the cost table");
		return SPP_OK;
	}
	sh.out = n->n_output ? elements(s, n->output[0], dims, &rank) : 0;
	sh.in = n->n_input ? elements(s, n->input[0], dims, &(int){0}) : 0;
	for (size_t j = 0; j < n->n_input; j++)
		sh.ninputs += n->input[j] && *n->input[j];
	if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0) {
		known = resize(n, &sh, rank, &flops);
	} else {
		if (row->kind == SPP_COST_WINDOW || row->kind == SPP_COST_GEMM ||
		    row->kind == SPP_COST_CONV || row->kind == SPP_COST_CONV_T)
			sh.k = reduced(s, n, row);
		known = spp_op_cost(row, &sh, &flops);
	}
	spp_graph_cost_add(g, known, flops, op, "shapes not known");
	return SPP_OK;
}

static int put_shapes(struct onnx_ctx *c, struct onnx_scope *s, Onnx__ValueInfoProto *const *v,
		      size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->name && *v[i]->name && onnx_map_put(&s->shapes, v[i]->name, -1, v[i]))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

int onnx_cost_walk(struct onnx_ctx *c, const Onnx__GraphProto *g)
{
	struct spp_model *m = c->m;
	struct onnx_ctx x = *c; /* its notes and bound are scratch: the walk's stand */
	struct onnx_scope s = {.g = g};
	struct onnx_map consts = {0};
	unsigned char *layer = calloc((size_t)m->ntensors + 1, 1), *bound = NULL;
	int rc = SPP_OK;

	memset(&m->graph, 0, sizeof(m->graph));
	x.notes[0] = '\0';
	if (c->opts && c->opts->ninput_shapes > 0 &&
	    !(bound = calloc((size_t)c->opts->ninput_shapes, 1)))
		goto oom;
	x.bound = bound;
	if (!layer)
		goto oom;
	for (int i = 0; i < m->nlayer_descs; i++)
		if (m->layer_descs[i].tensor >= 0 && m->layer_descs[i].tensor < m->ntensors)
			layer[m->layer_descs[i].tensor] = 1;
	/* the model's tensors by name, the first of a name kept (the main graph's come first) */
	for (int i = m->ntensors - 1; i >= 0; i--)
		if (m->tensors[i].name && *m->tensors[i].name &&
		    onnx_map_put(&s.weights, m->tensors[i].name, i, NULL))
			goto oom;
	if ((rc = put_shapes(&x, &s, g->input, g->n_input)) ||
	    (rc = put_shapes(&x, &s, g->output, g->n_output)) ||
	    (rc = put_shapes(&x, &s, g->value_info, g->n_value_info)) ||
	    (rc = onnx_shapes_bind_inputs(&x, g, &s)))
		goto out;
	m->graph.has_graph = 1;
	for (size_t i = 0; i < g->n_node && !rc; i++) {
		const Onnx__NodeProto *n = g->node[i];

		if (default_domain(n) && n->op_type && strcmp(n->op_type, "Constant") == 0)
			continue; /* a weight, not an op */
		m->graph.ops++;
		if (default_domain(n) && (rc = onnx_shapes_infer(&x, n, &s)))
			break;
		rc = cost_node(&x, &s, &consts, n, layer);
	}
	goto out;
oom:
	rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
out:
	free(layer);
	free(bound);
	onnx_map_free(&consts);
	onnx_map_free(&s.weights);
	onnx_map_free(&s.shapes);
	onnx_shapes_free(&s);
	return rc;
}
