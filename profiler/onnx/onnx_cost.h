/*
 * The ONNX loader's cost walk (onnx_cost.c): the main graph's ops counted
 * by the cost table of profiler/graph_cost.h into spp_model.graph, for
 * the report's summary.whole_model.
 */
#ifndef SPP_PROFILER_ONNX_ONNX_COST_H
#define SPP_PROFILER_ONNX_ONNX_COST_H

#include "profiler/onnx/onnx_internal.h"

/*
 * After the graph walk (the model's tensors and layers made): walk g's
 * nodes once more, their shapes inferred again in a scope of its own (the
 * walk's scopes are gone by then; its notes are not repeated), and fill
 * c->m->graph: each node that made a layer, each other node's FLOPs by
 * the cost table, or why it is not counted. Returns 0, or SPP_E_NOMEM.
 */
int onnx_cost_walk(struct onnx_ctx *c, const Onnx__GraphProto *g);

#endif
