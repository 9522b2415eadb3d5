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
};

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
