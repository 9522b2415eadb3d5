/*
 * The cost table of graph operators (graph_cost.h). A row names an op as
 * ONNX does and as TFLite's BuiltinOperator does where both have it. The
 * figures are stated conventions, written once here and listed in
 * docs/METRICS.md ("The whole model"): an arithmetic or comparison is 1, a
 * transcendental function (exp, log, tanh, erf, sqrt) is 1, so Sigmoid is
 * 3 (exp, add, divide) and Softmax 5 (max, subtract, exp, sum, divide);
 * a GEMM or conv is 2 per multiply-add, as the layers' FLOPs are.
 */
#include "profiler/graph_cost.h"

#include <stdio.h>
#include <string.h>

#define R(onnx, tfl, kind, per) {onnx, tfl, SPP_COST_##kind, per}

static const struct spp_op_cost rows[] = {
	/* multiply-adds: 2 per output element per K */
	R("Gemm", 9 /* FULLY_CONNECTED */, GEMM, 2), R("MatMul", 126 /* BATCH_MATMUL */, GEMM, 2),
	R("MatMulInteger", -1, GEMM, 2), R("QLinearMatMul", -1, GEMM, 2),
	R("Conv", 3 /* CONV_2D */, CONV, 2), R(NULL, 4 /* DEPTHWISE_CONV_2D */, CONV, 2),
	R(NULL, 132 /* CONV_3D */, CONV, 2), R("ConvInteger", -1, CONV, 2),
	R("QLinearConv", -1, CONV, 2),
	R("ConvTranspose", 67 /* TRANSPOSE_CONV */, CONV_T, 2),
	R(NULL, 141 /* CONV_3D_TRANSPOSE */, CONV_T, 2),
	/* pooling: one compare or add per window element */
	R("MaxPool", 17 /* MAX_POOL_2D */, WINDOW, 1), R("AveragePool", 1 /* AVERAGE_POOL_2D */, WINDOW, 1),
	R("LpPool", 12 /* L2_POOL_2D */, WINDOW, 2),
	/* reductions: per input element */
	R("GlobalAveragePool", 40 /* MEAN */, IN, 1), R("GlobalMaxPool", 82 /* REDUCE_MAX */, IN, 1),
	R("GlobalLpPool", -1, IN, 2), R("ReduceMean", -1, IN, 1), R("ReduceSum", 74 /* SUM */, IN, 1),
	R("ReduceMax", -1, IN, 1), R("ReduceMin", 89 /* REDUCE_MIN */, IN, 1),
	R("ReduceProd", 81 /* REDUCE_PROD */, IN, 1), R("ReduceL1", -1, IN, 2),
	R("ReduceL2", -1, IN, 2), R("ReduceSumSquare", -1, IN, 2), R("ReduceLogSum", -1, IN, 1),
	R("ReduceLogSumExp", -1, IN, 2), R("ArgMax", 56 /* ARG_MAX */, IN, 1),
	R("ArgMin", 79 /* ARG_MIN */, IN, 1), R("CumSum", 128 /* CUMSUM */, IN, 1),
	R(NULL, 91 /* REDUCE_ANY */, IN, 1), R(NULL, 140 /* REDUCE_ALL */, IN, 1),
	/* elementwise: per output element */
	R("Add", 0 /* ADD */, OUT, 1), R("Sub", 41 /* SUB */, OUT, 1), R("Mul", 18 /* MUL */, OUT, 1),
	R("Div", 42 /* DIV */, OUT, 1), R("Pow", 78 /* POW */, OUT, 1), R("Mod", 95 /* FLOOR_MOD */, OUT, 1),
	R(NULL, 90 /* FLOOR_DIV */, OUT, 1), R(NULL, 55 /* MAXIMUM */, OUT, 1),
	R(NULL, 57 /* MINIMUM */, OUT, 1), R("Equal", 71 /* EQUAL */, OUT, 1),
	R(NULL, 72 /* NOT_EQUAL */, OUT, 1), R("Greater", 61 /* GREATER */, OUT, 1),
	R("GreaterOrEqual", 62 /* GREATER_EQUAL */, OUT, 1), R("Less", 58 /* LESS */, OUT, 1),
	R("LessOrEqual", 63 /* LESS_EQUAL */, OUT, 1), R("And", 86 /* LOGICAL_AND */, OUT, 1),
	R("Or", 84 /* LOGICAL_OR */, OUT, 1), R("Xor", -1, OUT, 1), R("Not", 87 /* LOGICAL_NOT */, OUT, 1),
	R("Where", 123 /* SELECT_V2 */, OUT, 1), R(NULL, 64 /* SELECT */, OUT, 1),
	R("Relu", 19 /* RELU */, OUT, 1), R(NULL, 21 /* RELU6 */, OUT, 1),
	R(NULL, 20 /* RELU_N1_TO_1 */, OUT, 1), R(NULL, 152 /* RELU_0_TO_1 */, OUT, 1),
	R("Clip", -1, OUT, 1), R("Abs", 101 /* ABS */, OUT, 1), R("Neg", 59 /* NEG */, OUT, 1),
	R("Floor", 8 /* FLOOR */, OUT, 1), R("Ceil", 104 /* CEIL */, OUT, 1),
	R("Round", 116 /* ROUND */, OUT, 1), R("Sign", -1, OUT, 1), R("Exp", 47 /* EXP */, OUT, 1),
	R("Log", 73 /* LOG */, OUT, 1), R("Sqrt", 75 /* SQRT */, OUT, 1),
	R("Reciprocal", -1, OUT, 1), R("Sin", 66 /* SIN */, OUT, 1), R("Cos", 108 /* COS */, OUT, 1),
	R("Tan", -1, OUT, 1), R("Tanh", 28 /* TANH */, OUT, 1), R("Erf", -1, OUT, 1),
	R("IsNaN", -1, OUT, 1), R("IsInf", -1, OUT, 1), R(NULL, 92 /* SQUARE */, OUT, 1),
	R(NULL, 76 /* RSQRT */, OUT, 2), R(NULL, 99 /* SQUARED_DIFFERENCE */, OUT, 2),
	R("LeakyRelu", 98 /* LEAKY_RELU */, OUT, 2), R("PRelu", 54 /* PRELU */, OUT, 2),
	R("ThresholdedRelu", -1, OUT, 2), R("QuantizeLinear", 114 /* QUANTIZE */, OUT, 2),
	R("DequantizeLinear", 6 /* DEQUANTIZE */, OUT, 2),
	R("BatchNormalization", -1, OUT, 2), /* inference: one scale and one shift */
	R("Sigmoid", 14 /* LOGISTIC */, OUT, 3), R("HardSigmoid", -1, OUT, 3),
	R("Softplus", -1, OUT, 3), R("Softsign", -1, OUT, 3), R("Elu", 111 /* ELU */, OUT, 3),
	R("Celu", -1, OUT, 3), R("LpNormalization", 11 /* L2_NORMALIZATION */, OUT, 3),
	R("HardSwish", 117 /* HARD_SWISH */, OUT, 4), R("Selu", -1, OUT, 4),
	R("Softmax", 25 /* SOFTMAX */, OUT, 5), R("LogSoftmax", 50 /* LOG_SOFTMAX */, OUT, 5),
	R("Gelu", 150 /* GELU */, OUT, 5),
	/* mean, centre, square, variance, normalise (2), scale and shift (2) */
	R("LayerNormalization", -1, OUT, 8), R("InstanceNormalization", -1, OUT, 8),
	R("GroupNormalization", -1, OUT, 8), R("MeanVarianceNormalization", -1, OUT, 8),
	/* variadic sums and extrema: per output element per input past the first */
	R("Sum", 106 /* ADD_N */, INPUTS, 1), R("Max", -1, INPUTS, 1), R("Min", -1, INPUTS, 1),
	R("Mean", -1, INPUTS, 1),
	/* data movement, shapes and casts: free */
	R("Reshape", 22 /* RESHAPE */, FREE, 0), R("Transpose", 39 /* TRANSPOSE */, FREE, 0),
	R("Flatten", -1, FREE, 0), R("Squeeze", 43 /* SQUEEZE */, FREE, 0),
	R("Unsqueeze", 70 /* EXPAND_DIMS */, FREE, 0), R("Concat", 2 /* CONCATENATION */, FREE, 0),
	R("Split", 49 /* SPLIT */, FREE, 0), R(NULL, 102 /* SPLIT_V */, FREE, 0),
	R("Slice", 65 /* SLICE */, FREE, 0), R(NULL, 45 /* STRIDED_SLICE */, FREE, 0),
	R("Gather", 36 /* GATHER */, FREE, 0), R("GatherND", 107 /* GATHER_ND */, FREE, 0),
	R("GatherElements", -1, FREE, 0), R("ScatterND", 122 /* SCATTER_ND */, FREE, 0),
	R("ScatterElements", -1, FREE, 0), R("Expand", 130 /* BROADCAST_TO */, FREE, 0),
	R("Tile", 69 /* TILE */, FREE, 0), R("Pad", 34 /* PAD */, FREE, 0), R(NULL, 60 /* PADV2 */, FREE, 0),
	R(NULL, 100 /* MIRROR_PAD */, FREE, 0), R("Identity", -1, FREE, 0),
	R("Shape", 77 /* SHAPE */, FREE, 0), R("Size", 110 /* RANK */, FREE, 0),
	R("ConstantOfShape", 94 /* FILL */, FREE, 0), R("Cast", 53 /* CAST */, FREE, 0),
	R("CastLike", -1, FREE, 0), R("Dropout", -1, FREE, 0),
	R("DepthToSpace", 5 /* DEPTH_TO_SPACE */, FREE, 0),
	R("SpaceToDepth", 26 /* SPACE_TO_DEPTH */, FREE, 0), R(NULL, 37 /* BATCH_TO_SPACE_ND */, FREE, 0),
	R(NULL, 38 /* SPACE_TO_BATCH_ND */, FREE, 0), R("Range", 96 /* RANGE */, FREE, 0),
	R(NULL, 83 /* PACK */, FREE, 0), R(NULL, 88 /* UNPACK */, FREE, 0),
	R(NULL, 93 /* ZEROS_LIKE */, FREE, 0), R(NULL, 97 /* RESIZE_NEAREST_NEIGHBOR */, FREE, 0),
	R(NULL, 105 /* REVERSE_V2 */, FREE, 0), R(NULL, 7 /* EMBEDDING_LOOKUP */, FREE, 0),
	R("OneHot", 85 /* ONE_HOT */, FREE, 0), R(NULL, 124 /* DENSIFY */, FREE, 0),
	R("Trilu", -1, FREE, 0), R("EyeLike", -1, FREE, 0),
	/* bilinear resizing: three lerps of 3 per output element (nearest is free: onnx_cost.c) */
	R("Resize", 23 /* RESIZE_BILINEAR */, OUT, 9),
	/* control flow, recurrences and data-dependent ops: no static cost */
	R("If", 118 /* IF */, NONE, 0), R("Loop", 119 /* WHILE */, NONE, 0), R("Scan", -1, NONE, 0),
	R("LSTM", 16 /* LSTM */, NONE, 0), R("GRU", -1, NONE, 0), R(NULL, 44 /* UNIDIRECTIONAL_SEQUENCE_LSTM */, NONE, 0),
	R("RNN", 24 /* RNN */, NONE, 0), R(NULL, 52 /* BIDIRECTIONAL_SEQUENCE_LSTM */, NONE, 0),
	R(NULL, 35 /* UNIDIRECTIONAL_SEQUENCE_RNN */, NONE, 0), R("Einsum", -1, NONE, 0),
	R("NonMaxSuppression", -1, NONE, 0), R("TopK", 48 /* TOPK_V2 */, NONE, 0),
	R("NonZero", -1, NONE, 0), R("Unique", -1, NONE, 0),
};

const struct spp_op_cost *spp_op_cost_onnx(const char *op_type)
{
	for (size_t i = 0; op_type && i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].onnx && strcmp(rows[i].onnx, op_type) == 0)
			return &rows[i];
	return NULL;
}

const struct spp_op_cost *spp_op_cost_tflite(int64_t code)
{
	for (size_t i = 0; code >= 0 && i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].tflite == code)
			return &rows[i];
	return NULL;
}

int spp_op_cost(const struct spp_op_cost *c, const struct spp_op_shape *sh, double *flops)
{
	double units;

	if (!c)
		return 0;
	switch (c->kind) {
	case SPP_COST_FREE:
		units = 0;
		break;
	case SPP_COST_OUT:
		units = (double)sh->out;
		break;
	case SPP_COST_IN:
		units = (double)sh->in;
		break;
	case SPP_COST_INPUTS:
		units = sh->out && sh->ninputs > 1 ? (double)sh->out * (sh->ninputs - 1) : sh->out ? 0 : -1;
		break;
	case SPP_COST_WINDOW:
	case SPP_COST_GEMM:
	case SPP_COST_CONV:
		units = (double)sh->out * (double)sh->k;
		break;
	case SPP_COST_CONV_T:
		units = (double)sh->in * (double)sh->k;
		break;
	default:
		return 0;
	}
	/* an element count of 0 is an unknown shape: never a cost of 0 */
	if (c->kind != SPP_COST_FREE && !(units > 0) && !(c->kind == SPP_COST_INPUTS && units == 0))
		return 0;
	*flops = c->per * units;
	return 1;
}

void spp_graph_cost_add(struct spp_graph_cost *g, int known, double flops, const char *type,
			const char *why)
{
	char item[96];
	size_t used = strlen(g->not_counted_ops), room = sizeof(g->not_counted_ops);

	if (known) {
		g->counted++;
		g->other_flops += flops;
		return;
	}
	g->not_counted++;
	snprintf(item, sizeof(item), "%.60s: %s", type && *type ? type : "(no type)", why);
	if (strstr(g->not_counted_ops, item) || (used >= 3 && strcmp(g->not_counted_ops + used - 3, "...") == 0))
		return;
	if (used + strlen(item) + 2 + 4 > room) {
		snprintf(g->not_counted_ops + used, room - used, "%s...", used ? ", " : "");
		return;
	}
	snprintf(g->not_counted_ops + used, room - used, "%s%s", used ? ", " : "", item);
}
