/*
 * The whole subgraph's work (tflite.h, spp_tfl_cost): as the ONNX loader's
 * cost walk, each operator of subgraph 0 made a layer (its FLOPs are the
 * layer's), or has only constant inputs (folded before inference: 0), or
 * is counted by profiler/graph_cost.h's table from its tensors' stored
 * shapes; an operator without a row, or whose shapes are not known, is
 * not counted, and named. A fused activation is left out (1 per output
 * element, against the op's 2·K).
 */
#include "profiler/tflite.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/graph_cost.h"

enum { TRANSPOSE_CONV = 67, CONV_3D_TRANSPOSE = 141, BATCH_MATMUL = 126, FULLY_CONNECTED = 9,
       DEPTHWISE_CONV_2D = 4, CONV_3D = 132 };

/* Subgraph tensor j's dims into d (at most SPP_MAX_DIMS): its rank, -1 when not known. */
static int dims_of(struct tfl *t, int64_t j, int64_t *d)
{
	struct spp_fb_table tt;
	struct spp_fb_vec s;

	if (j < 0 || j >= t->tensors.len)
		return -1;
	tt = spp_fb_at(&t->fb, &t->tensors, (uint32_t)j);
	s = spp_fb_vector(&t->fb, &tt, 0, 4);
	if (s.len > SPP_MAX_DIMS)
		return -1;
	for (uint32_t k = 0; k < s.len; k++)
		if ((d[k] = spp_fb_vec_int(&t->fb, &s, k)) <= 0)
			return -1;
	return (int)s.len;
}

/* The product of d[from, to); 0 when empty or past 2^62 (not known). */
static uint64_t product(const int64_t *d, int from, int to)
{
	uint64_t n = 1;

	for (int k = from; k < to; k++)
		if (__builtin_mul_overflow(n, (uint64_t)d[k], &n) || n > (UINT64_C(1) << 62))
			return 0;
	return to > from ? n : 0;
}

/* Subgraph tensor j's elements; 0 when not known (a scalar is 1). */
static uint64_t elements(struct tfl *t, int64_t j)
{
	int64_t d[SPP_MAX_DIMS];
	int r = dims_of(t, j, d);

	return r < 0 ? 0 : r == 0 ? 1 : product(d, 0, r);
}

/* K of a GEMM or conv operator, the window of a pool; 0 when not known. */
static uint64_t reduced(struct tfl *t, const struct spp_fb_table *o, const struct spp_fb_vec *in,
			int64_t code, const struct spp_op_cost *row)
{
	struct spp_fb_table opt = spp_fb_child(&t->fb, o, 4);
	int64_t d[SPP_MAX_DIMS];
	int r;

	if (row->kind == SPP_COST_WINDOW) /* Pool2DOptions: filter_width, filter_height */
		return (uint64_t)(spp_fb_int(&t->fb, &opt, 3, 4, 0) > 0 ? spp_fb_int(&t->fb, &opt, 3, 4, 0) : 0) *
		       (uint64_t)(spp_fb_int(&t->fb, &opt, 4, 4, 0) > 0 ? spp_fb_int(&t->fb, &opt, 4, 4, 0) : 0);
	if (code == BATCH_MATMUL) { /* A [.., M, K], adj_x [.., K, M] */
		if (in->len < 1 || (r = dims_of(t, spp_fb_vec_int(&t->fb, in, 0), d)) < 2)
			return 0;
		return (uint64_t)d[r - 1 - (spp_fb_uint(&t->fb, &opt, 0, 1, 0) != 0)];
	}
	/* the filter: FC [O, I], CONV_2D [O, kh, kw, I], DEPTHWISE [1, kh, kw, C·mult],
	 * CONV_3D [kd, kh, kw, I, O], TRANSPOSE_CONV [O, kh, kw, I] (K = O·kh·kw per
	 * input element), CONV_3D_TRANSPOSE [kd, kh, kw, O, I] */
	if (in->len < 2 || (r = dims_of(t, spp_fb_vec_int(&t->fb, in, 1), d)) < 2)
		return 0;
	if (code == FULLY_CONNECTED)
		return (uint64_t)d[r - 1];
	if (code == DEPTHWISE_CONV_2D)
		return r == 4 ? product(d, 1, 3) : 0;
	if (code == CONV_3D || code == TRANSPOSE_CONV || code == CONV_3D_TRANSPOSE)
		return product(d, 0, r - 1);
	return product(d, 1, r);
}

/* Operator i (no layer) into t->m->graph; cst: per subgraph tensor, a constant. */
static void cost_op(struct tfl *t, uint32_t i, unsigned char *cst)
{
	struct spp_fb_table o = spp_fb_at(&t->fb, &t->ops, i);
	struct spp_fb_vec in = spp_fb_vector(&t->fb, &o, 1, 4), out = spp_fb_vector(&t->fb, &o, 2, 4);
	const char *custom = NULL;
	uint32_t custom_len = 0, given = 0, consts = 0;
	int64_t code = spp_tfl_op_code(t, &o, &custom, &custom_len);
	const struct spp_op_cost *row = spp_op_cost_tflite(code);
	struct spp_op_shape sh = {0};
	char type[80];
	double flops = 0;
	int known;

	if (custom && code == 32)
		snprintf(type, sizeof(type), "%.*s", (int)(custom_len < 60 ? custom_len : 60), custom);
	else
		snprintf(type, sizeof(type), "builtin op %" PRId64, code);
	for (uint32_t k = 0; k < in.len; k++) {
		int64_t j = spp_fb_vec_int(&t->fb, &in, k);

		if (j < 0 || j >= t->tensors.len)
			continue; /* -1: an optional input left out */
		given++;
		consts += cst[j];
	}
	if (given && consts == given) {
		for (uint32_t k = 0; k < out.len; k++) {
			int64_t j = spp_fb_vec_int(&t->fb, &out, k);

			if (j >= 0 && j < t->tensors.len)
				cst[j] = 1;
		}
		spp_graph_cost_add(&t->m->graph, 1, 0, type, NULL);
		return;
	}
	if (!row || row->kind == SPP_COST_NONE) {
		spp_graph_cost_add(&t->m->graph, 0, 0, type, row ? "no static cost" : "not in the cost table");
		return;
	}
	sh.out = out.len ? elements(t, spp_fb_vec_int(&t->fb, &out, 0)) : 0;
	sh.in = in.len > (code == TRANSPOSE_CONV || code == CONV_3D_TRANSPOSE ? 2u : 0u)
		? elements(t, spp_fb_vec_int(&t->fb, &in, code == TRANSPOSE_CONV ||
					     code == CONV_3D_TRANSPOSE ? 2 : 0)) : 0;
	sh.ninputs = (int)given;
	if (row->kind == SPP_COST_WINDOW || row->kind == SPP_COST_GEMM || row->kind == SPP_COST_CONV ||
	    row->kind == SPP_COST_CONV_T)
		sh.k = reduced(t, &o, &in, code, row);
	known = spp_op_cost(row, &sh, &flops);
	spp_graph_cost_add(&t->m->graph, known, flops, type, "shapes not known");
}

int spp_tfl_cost(struct tfl *t)
{
	struct spp_graph_cost *g = &t->m->graph;
	unsigned char *cst = calloc((size_t)t->tensors.len + 1, 1);

	if (!cst)
		return spp_error_set(t->err, SPP_E_NOMEM, "out of memory loading '%s'", t->path);
	memset(g, 0, sizeof(*g));
	g->has_graph = 1;
	for (uint32_t j = 0; j < t->tensors.len; j++)
		cst[j] = t->model_tensor[j] != 0;
	for (uint32_t i = 0; i < t->ops.len; i++) {
		g->ops++;
		if (t->layer_op[i])
			g->layer_ops++;
		else
			cost_op(t, i, cst);
	}
	free(cst);
	return t->fb.bad ? spp_tfl_fault(t, "a malformed operator table") : SPP_OK;
}
