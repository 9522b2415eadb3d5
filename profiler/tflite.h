/*
 * Inside the TensorFlow Lite loader (load_tflite.c, tflite_sparse.c): the
 * file read as a verified FlatBuffer (flatbuf.h) with TFLite's schema
 * slots, and what the loader knows of subgraph 0.
 */
#ifndef SPP_PROFILER_TFLITE_H
#define SPP_PROFILER_TFLITE_H

#include "profiler/flatbuf.h"
#include "profiler/model.h"

struct tfl {
	struct spp_fb fb;
	struct spp_model *m;
	const char *path;
	struct spp_error *err;
	struct spp_fb_vec tensors, buffers, ops, codes; /* subgraph 0's and the model's */
	int *model_tensor; /* per subgraph tensor: index + 1 of its model tensor, 0: none */
	int *producer;     /* per subgraph tensor: the operator writing it, -1: none */
	unsigned char *layer_op; /* per operator: 1 when it made a layer */
};

/* The builtin code of operator o (the larger of its two code fields), -1
 * when its opcode_index is out of range; a custom one's custom_code in
 * *custom (NULL: none; custom may be NULL). */
int64_t spp_tfl_op_code(struct tfl *t, const struct spp_fb_table *o, const char **custom,
			uint32_t *custom_len);

/*
 * The whole subgraph's work (tflite_cost.c): each operator that made a
 * layer, each other one's FLOPs by profiler/graph_cost.h's table from its
 * tensors' shapes, or why not, into t->m->graph. Returns 0 or SPP_E_NOMEM.
 */
int spp_tfl_cost(struct tfl *t);

/* A format error naming the file: "'path': <fmt>". */
int spp_tfl_fault(struct tfl *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Decode the sparse tensor w (name, shape, numel, dtype set; es bytes per
 * element) by its SparsityParameters sp (traversal order, block map,
 * DENSE / SPARSE_CSR dimension metadata) from its stored values
 * vals[0, nvals) into out (w->nbytes bytes, zeroed by the caller); the
 * bytes of its index vectors into *index_bytes. A fault names the tensor.
 */
int spp_tfl_densify(struct tfl *t, const struct spp_fb_table *sp, const struct spp_tensor *w,
		    int es, const unsigned char *vals, uint64_t nvals, unsigned char *out,
		    uint64_t *index_bytes);

#endif
