/*
 * Constant folding of the values that feed a weight input. Exporters often
 * build a weight from constants instead of storing it whole: PyTorch's LSTM
 * export reorders the gates of weight_ih and weight_hh with Slice and
 * Concat, then Unsqueeze, inside If branches where its own folding does not
 * reach (silero_vad v5); others Transpose or Reshape a stored matrix. Such a
 * weight is evaluated here, lazily: only when a layer asks for it, each node
 * once (the result is registered as a weight of the graph that computed it,
 * and a failure is remembered on its node), the recursion bounded in depth,
 * a cycle refused. What stays unresolved is said, once per weight input, in
 * the report's unresolved_weight warnings.
 */
#include "profiler/onnx/onnx_internal.h"
#include "base/safe_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NEW, BUSY, DONE, FAILED };

/* folding steps from a weight input down to its constants */
#define MAX_DEPTH 64
/* unresolved weight inputs named one by one; the rest are counted */
#define MAX_NOTES 16

int onnx_fold_producer(struct onnx_ctx *c, struct onnx_scope *s, size_t i)
{
	const Onnx__NodeProto *n = s->g->node[i];

	s->prods[i].node = n;
	for (size_t k = 0; k < n->n_output; k++)
		if (n->output[k] && *n->output[k] &&
		    onnx_map_put(&s->producers, n->output[k], (int)i, &s->prods[i]))
			return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

static int default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static void fail(struct onnx_producer *p, struct onnx_unfolded *un, const char *why)
{
	p->state = FAILED;
	p->un = (struct onnx_unfolded){.node = p->node, .why = why};
	*un = p->un;
}

static int value(struct onnx_ctx *c, struct onnx_scope *s, const char *name, int depth,
		 int *index, struct onnx_unfolded *un);

/* The tensors of node p's inputs, resolved in its own graph s (indices:
 * the model's array may move while they fold). 1 when all are constants. */
static int inputs(struct onnx_ctx *c, struct onnx_scope *s, struct onnx_producer *p, int depth,
		  int *idx, struct onnx_unfolded *un, int *rc)
{
	const Onnx__NodeProto *n = p->node;

	for (size_t j = 0; j < n->n_input; j++) {
		idx[j] = -1;
		if (!n->input[j] || !*n->input[j])
			continue; /* an optional input left out */
		if ((*rc = value(c, s, n->input[j], depth + 1, &idx[j], un)))
			return 0;
		if (idx[j] < 0) {
			p->state = FAILED;
			p->un = *un;
			return 0;
		}
	}
	return 1;
}

/* Fold node p of graph s, whose output name is wanted. */
static int fold_node(struct onnx_ctx *c, struct onnx_scope *s, struct onnx_producer *p,
		     const char *name, int depth, int *index, struct onnx_unfolded *un)
{
	const Onnx__NodeProto *n = p->node;
	const char *op = n->op_type ? n->op_type : "", *why = NULL;
	const struct spp_tensor **in = NULL;
	struct spp_tensor t = {0};
	int *idx = NULL, rc = SPP_OK;

	if (p->state == FAILED) {
		*un = p->un;
		return SPP_OK;
	}
	if (p->state == BUSY)
		return onnx_fault(c, SPP_E_FORMAT, "node '%s' (%s): its inputs form a cycle "
				  "through '%s'", onnx_name(n->name), op, name);
	if (!default_domain(n) || !onnx_fold_known(op)) {
		fail(p, un, strcmp(op, "Constant") == 0 ? "holds no numeric value"
							: "is not an op spprof folds");
		return SPP_OK;
	}
	if (depth > MAX_DEPTH) {
		fail(p, un, "lies more than 64 folding steps from the weight");
		return SPP_OK;
	}
	if (strcmp(name, n->output[0]) != 0) {
		fail(p, un, "has no such output");
		return SPP_OK;
	}
	idx = malloc((n->n_input ? n->n_input : 1) * sizeof(*idx));
	in = calloc(n->n_input ? n->n_input : 1, sizeof(*in));
	if (!idx || !in) {
		rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
		goto out;
	}
	p->state = BUSY;
	if (!inputs(c, s, p, depth, idx, un, &rc))
		goto out;
	for (size_t j = 0; j < n->n_input; j++)
		in[j] = idx[j] >= 0 ? &c->m->tensors[idx[j]] : NULL;
	if ((rc = onnx_fold_eval(c, n, in, n->n_input, &t, &why)))
		goto out;
	if (why) {
		fail(p, un, why);
		goto out;
	}
	t.derived = 1;
	if (!(t.name = strdup(name))) {
		rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = onnx_tensor_push(c, &t, index)))
		goto out;
	if (onnx_map_put(&s->weights, n->output[0], *index, NULL)) {
		rc = onnx_fault(c, SPP_E_NOMEM, "out of memory");
		goto out;
	}
	p->state = DONE;
out:
	free(idx);
	free(in);
	return rc;
}

static int value(struct onnx_ctx *c, struct onnx_scope *s, const char *name, int depth,
		 int *index, struct onnx_unfolded *un)
{
	*index = -1;
	for (struct onnx_scope *p = s; p; p = p->parent) {
		const struct onnx_map_entry *e = onnx_map_get(&p->weights, name);

		if (e) {
			*index = e->index;
			return SPP_OK;
		}
		if ((e = onnx_map_get(&p->producers, name)))
			return fold_node(c, p, (struct onnx_producer *)e->ptr, name, depth, index, un);
	}
	*un = (struct onnx_unfolded){.runtime = 1, .source = name};
	return SPP_OK;
}

int onnx_fold_value(struct onnx_ctx *c, struct onnx_scope *s, const char *name, int *index,
		    struct onnx_unfolded *un)
{
	struct onnx_unfolded scratch;

	*index = -1;
	if (!name || !*name) {
		if (un)
			*un = (struct onnx_unfolded){.runtime = 1, .source = ""};
		return SPP_OK;
	}
	return value(c, s, name, 0, index, un ? un : &scratch);
}

/* Whether name is an input of one of the graphs in scope. */
static int graph_input(const struct onnx_scope *s, const char *name)
{
	for (; s; s = s->parent)
		for (size_t i = 0; s->g && i < s->g->n_input; i++)
			if (s->g->input[i]->name && strcmp(s->g->input[i]->name, name) == 0)
				return 1;
	return 0;
}

int onnx_fold_note(struct onnx_ctx *c, const struct onnx_scope *s, const Onnx__NodeProto *n,
		   size_t i, const struct onnx_unfolded *un)
{
	const char *in = i < n->n_input && n->input[i] ? n->input[i] : "";
	char line[512], safe[512];
	size_t used = strlen(c->unresolved);
	int w;

	if (c->nunresolved++ >= MAX_NOTES)
		return SPP_OK;
	w = snprintf(line, sizeof(line), "node '%.80s' (%.40s): weight input %zu '%.80s' ",
		     onnx_name(n->name), n->op_type, i, onnx_name(in));
	if (w < 0 || (size_t)w >= sizeof(line))
		return SPP_OK;
	if (un->runtime && strcmp(un->source, in) == 0)
		snprintf(line + w, sizeof(line) - (size_t)w, "is %s, not a constant",
			 graph_input(s, in) ? "a graph input" : "a value known only at run time");
	else if (un->runtime)
		snprintf(line + w, sizeof(line) - (size_t)w, "is computed from %s '%.80s', not from "
			 "constants", graph_input(s, un->source) ? "the graph input" : "the value",
			 onnx_name(un->source));
	else
		snprintf(line + w, sizeof(line) - (size_t)w, "is computed from constants through "
			 "node '%.80s' (%.40s), which %s", onnx_name(un->node->name),
			 un->node->op_type ? un->node->op_type : "", un->why);
	/* names come from the file: one line, nothing that drives a terminal */
	spp_safe_copy(safe, sizeof(safe), line, (size_t)-1);
	if (used + strlen(safe) + 2 + 40 > sizeof(c->unresolved))
		return SPP_OK; /* counted: the last line says how many more */
	snprintf(c->unresolved + used, sizeof(c->unresolved) - used, "%s%s: its weights are not "
		 "profiled", used ? "\n" : "", safe);
	return SPP_OK;
}
