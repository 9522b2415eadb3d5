/*
 * What a graph's operators cost, in FLOPs (a multiply-add is 2), for the
 * whole-model figures (summary.whole_model): one table, one row per kind
 * of op, naming the op as ONNX and as TFLite's builtin operators call it,
 * so both loaders count the same work the same way (docs/METRICS.md,
 * "The whole model"). The loaders' cost walks (onnx/onnx_cost.c,
 * tflite_cost.c) find an op's row, give it the op's shapes, and add what
 * it returns to spp_model.graph; an op without a row is not counted, and
 * said so, never taken as free.
 */
#ifndef SPP_PROFILER_GRAPH_COST_H
#define SPP_PROFILER_GRAPH_COST_H

#include <stdint.h>

#include "profiler/model.h"

enum spp_cost_kind {
	SPP_COST_FREE,     /* data movement, shapes, casts: 0 */
	SPP_COST_OUT,      /* per output element */
	SPP_COST_IN,       /* per element of input 0 (reductions, global pooling) */
	SPP_COST_INPUTS,   /* per output element per input beyond the first (Sum, ADD_N) */
	SPP_COST_WINDOW,   /* per output element per element of the pooling window */
	SPP_COST_GEMM,     /* per output element per K (the reduced dimension) */
	SPP_COST_CONV,     /* per output element per K = (C_in / groups) x kernel */
	SPP_COST_CONV_T,   /* per input element per K = (C_out / groups) x kernel */
	SPP_COST_NONE,     /* not counted: control flow, run-time trip counts, recurrences */
};

struct spp_op_cost {
	const char *onnx;    /* ONNX op_type (default domain); NULL: none */
	int tflite;          /* TFLite BuiltinOperator code; -1: none */
	enum spp_cost_kind kind;
	double per;          /* FLOPs per unit of kind */
};

/* The row of an ONNX op type, or of a TFLite builtin code; NULL: none (not counted). */
const struct spp_op_cost *spp_op_cost_onnx(const char *op_type);
const struct spp_op_cost *spp_op_cost_tflite(int64_t code);

/* The facts of one op the cost needs; an unknown figure is 0. */
struct spp_op_shape {
	uint64_t out;        /* elements of output 0 */
	uint64_t in;         /* elements of input 0 */
	uint64_t k;          /* GEMM and conv kinds: K; pooling: the window's elements */
	int ninputs;         /* inputs given (SPP_COST_INPUTS) */
};

/*
 * The FLOPs of an op of row c with shapes sh into *flops: 1, or 0 when a
 * figure its kind needs is unknown (0), or c is NULL or SPP_COST_NONE.
 */
int spp_op_cost(const struct spp_op_cost *c, const struct spp_op_shape *sh, double *flops);

/*
 * Count one op of the graph g (not a layer): with its FLOPs (known 1) in
 * g->other_flops, else in g->not_counted, with its type and why
 * ("Resize: shapes not known") noted once per type in g->not_counted_ops.
 */
void spp_graph_cost_add(struct spp_graph_cost *g, int known, double flops, const char *type,
			const char *why);

#endif
