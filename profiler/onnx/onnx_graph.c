/*
 * The graph walk: a graph's weights (initializers, sparse initializers,
 * Constant nodes), its subgraphs (If branches, Loop and Scan bodies: graph
 * attributes, recursively) and its layers, in node order. Each graph is a
 * scope: a name resolves in the graph itself, then in the graphs around it.
 */
#include "profiler/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

int onnx_scope_weight(const struct onnx_scope *s, const char *name)
{
	for (; s && name && *name; s = s->parent) {
		const struct onnx_map_entry *e = onnx_map_get(&s->weights, name);
		if (e)
			return e->index;
	}
	return -1;
}

int onnx_scope_shape(const struct onnx_scope *s, const char *name,
		     int64_t *dims, int *rank)
{
	const Onnx__ValueInfoProto *vi = NULL;
	const Onnx__TensorShapeProto *sh;

	for (; s && name && *name && !vi; s = s->parent) {
		const struct onnx_map_entry *e = onnx_map_get(&s->inferred, name);
		const struct onnx_shape *in = e ? e->ptr : NULL;
		int complete = in != NULL;

		for (int i = 0; in && i < in->rank; i++)
			complete &= in->d[i] != ONNX_DIM_UNKNOWN;
		if (complete) {
			memcpy(dims, in->d, sizeof(in->d));
			*rank = in->rank;
			return 1;
		}
		if ((e = onnx_map_get(&s->shapes, name)))
			vi = e->ptr;
	}
	if (!vi || !vi->type || !vi->type->tensor_type || !vi->type->tensor_type->shape)
		return 0;
	sh = vi->type->tensor_type->shape;
	if (sh->n_dim > SPP_MAX_DIMS)
		return 0;
	for (size_t i = 0; i < sh->n_dim; i++) {
		if (!sh->dim[i]->has_dim_value || sh->dim[i]->dim_value <= 0)
			return 0;
		dims[i] = sh->dim[i]->dim_value;
	}
	*rank = (int)sh->n_dim;
	return 1;
}

static int default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static int register_weight(struct onnx_ctx *c, struct onnx_scope *s, const char *name,
			   int index)
{
	if (index < 0 || !name || !*name)
		return SPP_OK;
	if (onnx_map_put(&s->weights, name, index, NULL))
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

/* A tensor over a scalar or list attribute, which the message holds. */
static int attr_values(struct onnx_ctx *c, const char *name, enum spp_dtype dt,
		       const void *vals, size_t count, int rank, int *index)
{
	struct spp_tensor t = {0};

	t.name = strdup(name);
	if (!t.name)
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	t.dtype = dt;
	t.ndim = rank;
	t.shape[0] = (int64_t)count;
	t.numel = count;
	t.nbytes = count * (uint64_t)(spp_dtype_info(dt)->bits / 8);
	t.data = count ? vals : NULL;
	return onnx_tensor_push(c, &t, index);
}

/*
 * A Constant node's value: value (TensorProto), sparse_value,
 * value_float(s), value_int(s); value_string(s) has no numeric dtype.
 */
static int constant(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s)
{
	const char *out = n->n_output ? n->output[0] : NULL;
	int index = -1, rc = SPP_OK;

	if (!out || !*out)
		return onnx_fault(c, SPP_E_FORMAT, "Constant node '%s' has no output",
				  onnx_name(n->name));
	for (size_t i = 0; i < n->n_attribute && index < 0 && !rc; i++) {
		const Onnx__AttributeProto *a = n->attribute[i];
		const char *an = a->name ? a->name : "";

		if (strcmp(an, "value") == 0 && a->t)
			rc = onnx_tensor_add(c, a->t, out, &index);
		else if (strcmp(an, "sparse_value") == 0 && a->sparse_tensor)
			rc = onnx_sparse_add(c, a->sparse_tensor, out, &index);
		else if (strcmp(an, "value_float") == 0)
			rc = attr_values(c, out, SPP_DTYPE_F32, &a->f, 1, 0, &index);
		else if (strcmp(an, "value_int") == 0)
			rc = attr_values(c, out, SPP_DTYPE_I64, &a->i, 1, 0, &index);
		else if (strcmp(an, "value_floats") == 0)
			rc = attr_values(c, out, SPP_DTYPE_F32, a->floats, a->n_floats, 1, &index);
		else if (strcmp(an, "value_ints") == 0)
			rc = attr_values(c, out, SPP_DTYPE_I64, a->ints, a->n_ints, 1, &index);
	}
	return rc ? rc : register_weight(c, s, out, index);
}

static int put_shapes(struct onnx_ctx *c, struct onnx_scope *s,
		      Onnx__ValueInfoProto *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->name && *v[i]->name &&
		    onnx_map_put(&s->shapes, v[i]->name, -1, v[i]))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

static int walk(struct onnx_ctx *c, const Onnx__GraphProto *g, struct onnx_scope *parent,
		int depth, struct onnx_shape *outs);

/*
 * An If's outputs: the taken branch's where the condition's value is known
 * (Equal over a Shape, as exporters write a squeeze that may not apply),
 * else what both branches agree on, a dimension they differ in unknown.
 */
static int if_outputs(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s,
		      struct onnx_shape br[2][ONNX_MAX_OUTS])
{
	struct onnx_shape cond, out;
	int take = -1;

	if (n->n_input && onnx_shape_of(c, s, n->input[0], &cond) && cond.nvals == 1)
		take = cond.vals[0] ? 0 : 1;
	for (size_t i = 0; i < n->n_output && i < ONNX_MAX_OUTS; i++) {
		const struct onnx_shape *a = &br[0][i], *b = &br[1][i];

		if (take >= 0) {
			out = br[take][i];
		} else {
			if (a->rank < 0 || a->rank != b->rank)
				continue;
			out = *a;
			for (int k = 0; k < a->rank; k++)
				if (a->d[k] != b->d[k])
					out.d[k] = ONNX_DIM_UNKNOWN;
			if (a->nvals != b->nvals ||
			    memcmp(a->vals, b->vals, (size_t)(a->nvals > 0 ? a->nvals : 0) * 8))
				out.nvals = -1;
		}
		if (out.rank >= 0 && onnx_shape_set(s, n->output[i], &out))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	}
	return SPP_OK;
}

static int subgraphs(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s,
		     int depth)
{
	struct onnx_shape br[2][ONNX_MAX_OUTS];
	int is_if = default_domain(n) && n->op_type && strcmp(n->op_type, "If") == 0, rc;

	for (int b = 0; b < 2; b++)
		for (int i = 0; i < ONNX_MAX_OUTS; i++)
			br[b][i].rank = -1;
	for (size_t k = 0; k < n->n_attribute; k++) {
		const Onnx__AttributeProto *a = n->attribute[k];
		int b = !a->name ? -1 : strcmp(a->name, "then_branch") == 0 ? 0
				      : strcmp(a->name, "else_branch") == 0 ? 1 : -1;

		if (a->g && (rc = walk(c, a->g, s, depth + 1, is_if && b >= 0 ? br[b] : NULL)))
			return rc;
		for (size_t j = 0; j < a->n_graphs; j++)
			if ((rc = walk(c, a->graphs[j], s, depth + 1, NULL)))
				return rc;
	}
	return is_if ? if_outputs(c, n, s, br) : SPP_OK;
}

static int node(struct onnx_ctx *c, size_t i, struct onnx_scope *s, int depth)
{
	const Onnx__NodeProto *n = s->g->node[i];
	int rc;

	if (default_domain(n) && n->op_type && strcmp(n->op_type, "Constant") == 0) {
		rc = constant(c, n, s);
		if (rc)
			return rc;
	}
	if ((rc = subgraphs(c, n, s, depth)))
		return rc;
	if (default_domain(n) &&
	    ((rc = onnx_shapes_infer(c, n, s)) || (rc = onnx_layers_add(c, n, s))))
		return rc;
	/* after its own layers: a node never folds into its own weight */
	return onnx_fold_producer(c, s, i);
}

int onnx_graph_walk(struct onnx_ctx *c, const Onnx__GraphProto *g,
		    struct onnx_scope *parent, int depth)
{
	return walk(c, g, parent, depth, NULL);
}

/* outs (ONNX_MAX_OUTS, or NULL): the graph's outputs' shapes, rank -1 when unknown */
static int walk(struct onnx_ctx *c, const Onnx__GraphProto *g, struct onnx_scope *parent,
		int depth, struct onnx_shape *outs)
{
	struct onnx_scope s = {.parent = parent, .g = g};
	int rc = SPP_OK, index;

	if (depth > SPP_ONNX_MAX_GRAPH_DEPTH)
		return onnx_fault(c, SPP_E_FORMAT, "graph '%s': subgraphs nest deeper than %d",
				  onnx_name(g->name), SPP_ONNX_MAX_GRAPH_DEPTH);
	if ((rc = put_shapes(c, &s, g->input, g->n_input)) ||
	    (rc = put_shapes(c, &s, g->output, g->n_output)) ||
	    (rc = put_shapes(c, &s, g->value_info, g->n_value_info)))
		goto out;
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *tp = g->initializer[i];
		if ((rc = onnx_tensor_add(c, tp, NULL, &index)) ||
		    (rc = register_weight(c, &s, tp->name, index)))
			goto out;
	}
	for (size_t i = 0; i < g->n_sparse_initializer; i++) {
		const Onnx__SparseTensorProto *sp = g->sparse_initializer[i];
		const char *name = sp->values ? sp->values->name : NULL;
		if ((rc = onnx_sparse_add(c, sp, name, &index)) ||
		    (rc = register_weight(c, &s, name, index)))
			goto out;
	}
	if (depth == 0 && (rc = onnx_shapes_bind_inputs(c, g, &s)))
		goto out;
	if (g->n_node && !(s.prods = calloc(g->n_node, sizeof(*s.prods)))) {
		rc = onnx_fault(c, SPP_E_NOMEM, "out of memory for %zu nodes", g->n_node);
		goto out;
	}
	for (size_t i = 0; i < g->n_node; i++)
		if ((rc = node(c, i, &s, depth)))
			goto out;
	for (size_t i = 0; outs && i < g->n_output && i < ONNX_MAX_OUTS; i++)
		if (!onnx_shape_part(c, &s, g->output[i]->name, &outs[i]))
			outs[i].rank = -1;
out:
	onnx_map_free(&s.producers);
	free(s.prods);
	onnx_map_free(&s.weights);
	onnx_map_free(&s.shapes);
	onnx_shapes_free(&s);
	return rc;
}
