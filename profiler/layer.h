/*
 * Layers: the GEMM view (DESIGN section 2) of each weight a model multiplies.
 * W is M x K, applied to X (K x N). A layer borrows its tensor from the
 * model; the model must outlive the layers.
 *
 * Element (i, j) of W lives at element index
 *     base + i * row_stride + (j / inner) * outer_stride + (j % inner) * inner_stride
 * of the tensor's data. This covers row-major [out, in] (inner = K,
 * inner_stride = 1), a transposed [in, out] weight (row_stride = 1,
 * inner = K, inner_stride = M) and convolutions OIHW with K ordered
 * (kh, kw, c), c fastest (inner = C, inner_stride = KH*KW, outer_stride = 1).
 */
#ifndef SPP_PROFILER_LAYER_H
#define SPP_PROFILER_LAYER_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/model.h"

enum spp_op {
	SPP_OP_LINEAR,
	SPP_OP_CONV1D,
	SPP_OP_CONV2D,
	/* ops of a graph (ONNX); profiler/onnx/onnx_layers.c gives each view */
	SPP_OP_CONV3D,
	SPP_OP_GEMM,
	SPP_OP_MATMUL,
	SPP_OP_CONV_TRANSPOSE,
	SPP_OP_LSTM,
	SPP_OP_GRU,
	SPP_OP_RNN,
};

/*
 * How a conv weight stores its axes, one row of profiler/layer.c's table
 * each: which dimensions are the kernel's spatial ones and which holds a
 * group's input channels. Zero, OIHW, is the default for every other layer.
 */
enum spp_layout {
	SPP_LAYOUT_OIHW,  /* [O, I/g, k...]: ONNX, PyTorch, Core ML, files without a graph */
	SPP_LAYOUT_OHWI,  /* [O, kh, kw, I]: TFLite CONV_2D */
	SPP_LAYOUT_1HWO,  /* [1, kh, kw, O]: TFLite DEPTHWISE_CONV_2D, one input channel a group */
	SPP_LAYOUT_HWIO,  /* [kh, kw, I, O]: TensorFlow (TF.js) Conv2D */
	SPP_LAYOUT_HWIM,  /* [kh, kw, C, mult]: TensorFlow (TF.js) depthwise, one a group */
};

/* Where a conv weight's kernel and input channels lie (spp_conv_axes). */
struct spp_conv_axes {
	int first, count;  /* the kernel's spatial dimensions, first..first+count-1 */
	int channel;       /* the dimension of a group's input channels; -1: one a group */
};

struct spp_scan_memo;

struct spp_gemm_view {
	int64_t m, k;
	uint64_t base;          /* element offset of W(0, 0) */
	int64_t row_stride;     /* elements from W(i, .) to W(i+1, .) */
	int64_t inner;          /* length of the fastest run of K */
	int64_t inner_stride;   /* elements between consecutive j in a run */
	int64_t outer_stride;   /* elements between consecutive runs */
};

struct spp_layer {
	const char *name;                 /* borrowed from the tensor or the model's layer desc */
	const char *node_name;            /* graph node (borrowed), NULL without a graph */
	const char *op_type;              /* graph op type (borrowed), NULL without a graph */
	enum spp_op op;
	enum spp_layout layout;           /* a conv weight's axes; OIHW for every other op */
	const struct spp_tensor *weight;  /* borrowed from the model */
	struct spp_gemm_view view;
	int64_t n;
	const char *n_source;             /* "option" (from --n) or "model" */
	/*
	 * The layer's bias, one value per row of W (borrowed); NULL: none
	 * found. A tensor model's "<stem>.bias" beside "<stem>.weight"; a
	 * graph's from its node (struct spp_layer_desc's bias).
	 */
	const struct spp_tensor *bias;
	/*
	 * Layers of one weight seen through one GEMM view (a graph that
	 * applies a weight many times, or tensors aliasing one buffer) share
	 * one scan: the counts of the first spp_static_count() are kept here
	 * for the others (static.h). NULL: the layer's scan is its own. Lives
	 * in the block of the layer array; layers of one array are scanned
	 * from one thread.
	 */
	struct spp_scan_memo *memo;
};

/* "linear", "conv1d", "conv2d", "conv3d", "gemm", "matmul", "conv_transpose",
 * "lstm", "gru", "rnn". */
const char *spp_op_name(enum spp_op op);

/*
 * The spatial and input-channel dimensions of an ndim-dimensional weight
 * stored in layout. Returns 1 with *out filled, or 0 (out untouched) when
 * the layout leaves it no 1 to 3 spatial dimensions or layout is unknown.
 */
int spp_conv_axes(enum spp_layout layout, int ndim, struct spp_conv_axes *out);

/*
 * Whether a tensor is a GEMM layer by DESIGN section 2 for files without a
 * graph: rank 2, 3 or 4, numel > 0, not named like an embedding.
 */
int spp_tensor_is_layer(const struct spp_tensor *t);

/*
 * Fill l with the GEMM view of a rank 2-4 tensor t by DESIGN section 2
 * (rank 2 linear [out, in], rank 3 conv1d [O, I/g, k], rank 4 conv2d OIHW),
 * N = n from the option.
 */
void spp_layer_init(struct spp_layer *l, const struct spp_tensor *t, int64_t n);

/*
 * The layers of a model: the model's own layer descriptions when its format
 * has a graph (N from the graph where it gave one, n_source "model", unless
 * n_forced: then every layer's N is n), else derived from tensor ranks in
 * file order. *out is a heap
 * array of *count layers (free() it; spp_static_share_scans may put the
 * scan memos of layers sharing a weight and view in its block); NULL with
 * 0 layers is valid.
 * Returns 0 or SPP_E_NOMEM.
 */
int spp_layers_from_model(const struct spp_model *m, int64_t n, int n_forced,
			  struct spp_layer **out, int *count,
			  struct spp_error *err);

/*
 * Whether l's view is its rank-2 weight as stored, W(i, j) = element
 * i * K + j: the only view a matrix of non-zeros (spp_tensor.coo) has.
 */
int spp_layer_view_is_stored(const struct spp_layer *l);

/* Element index of W(i, j) in the layer's tensor. */
static inline uint64_t spp_view_index(const struct spp_gemm_view *v,
				      int64_t i, int64_t j)
{
	return v->base + (uint64_t)(i * v->row_stride +
				    (j / v->inner) * v->outer_stride +
				    (j % v->inner) * v->inner_stride);
}

#endif
