/*
 * Shared by the ONNX loader's files: the decoding context, the name maps of
 * a graph's scope, and the steps (wire check, tensors, graph walk, layers).
 * Everything here borrows the decoded message, which the model owns.
 */
#ifndef SPP_PROFILER_ONNX_ONNX_INTERNAL_H
#define SPP_PROFILER_ONNX_ONNX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/model.h"
#include "profiler/onnx/onnx.h"
#include "profiler/onnx/onnx_subset.pb-c.h"

struct onnx_ctx {
	struct spp_model *m;
	const char *file;        /* display name, starts every message */
	const char *dir;         /* folder of external data; NULL: none */
	struct spp_error *err;
	int tensors_cap, descs_cap;
	const struct spp_open_opts *opts; /* --input-shape; NULL: none given */
	unsigned char *bound;    /* per opts->input_shapes: matched a graph input */
	char notes[1024];        /* assumptions about the inputs, one per line */
	char unresolved[1536];   /* weight inputs left unresolved, one per line */
	int nunresolved;         /* all of them, also those past the buffer */
};

/*
 * A value's static shape, inferred through the graph (onnx_shapes.c); for a
 * small integer tensor whose values are known too (the output of Shape, of
 * Gather and Concat over it, a Constant), nvals of them, else nvals -1.
 */
struct onnx_shape {
	int rank;
	int64_t d[SPP_MAX_DIMS];
	int nvals;
	int64_t vals[SPP_MAX_DIMS];
};

/* A string-keyed hash map; keys and values are borrowed. */
struct onnx_map_entry {
	const char *key;
	int index;               /* tensor index (weights) */
	const void *ptr;         /* ValueInfoProto (shapes) */
};

struct onnx_map {
	struct onnx_map_entry *slots;
	size_t cap, count;
};

/*
 * Why a value could not be folded into a constant (onnx_fold.c): it is
 * computed at run time from source (a graph input, or a value no node of
 * the graph produces), or from constants through node, which is not
 * folded for the reason why.
 */
struct onnx_unfolded {
	int runtime;
	const char *source;
	const Onnx__NodeProto *node;
	const char *why;
};

/* A node of a graph as the folding sees it: its state, its failure. */
struct onnx_producer {
	const Onnx__NodeProto *node;
	int state;                /* enum in onnx_fold.c */
	struct onnx_unfolded un;  /* when it failed */
};

/* Names visible in a graph: its own, then its enclosing graphs'. */
struct onnx_scope {
	struct onnx_scope *parent;
	const Onnx__GraphProto *g;
	struct onnx_map weights;  /* value name -> tensor index */
	struct onnx_map shapes;   /* value name -> ValueInfoProto */
	struct onnx_map inferred; /* value name -> struct onnx_shape (owned) */
	struct onnx_map producers; /* value name -> struct onnx_producer of prods */
	struct onnx_producer *prods; /* one per node of g, owned */
};

/* Insert or replace; 0, or -1 when out of memory. */
int onnx_map_put(struct onnx_map *map, const char *key, int index, const void *ptr);
/* The entry of key, NULL when absent. */
const struct onnx_map_entry *onnx_map_get(const struct onnx_map *map, const char *key);
void onnx_map_free(struct onnx_map *map);

/* One line "'<file>': <fault>" (names escaped, as in every message); returns code. */
int onnx_fault(struct onnx_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A name for messages: "" and NULL read as "(unnamed)". */
const char *onnx_name(const char *s);

/*
 * Add a TensorProto to the model under name (the tensor's own when NULL).
 * *index is its index, or -1 when the tensor has no spprof dtype (STRING,
 * COMPLEX128) and was left out. Returns 0 or an error status.
 */
int onnx_tensor_add(struct onnx_ctx *c, const Onnx__TensorProto *tp,
		    const char *name, int *index);

/* Same for a SparseTensorProto, densified (see onnx.h). */
int onnx_sparse_add(struct onnx_ctx *c, const Onnx__SparseTensorProto *sp,
		    const char *name, int *index);

/* Add a tensor whose fields are set (name malloc'd, moved into the model). */
int onnx_tensor_push(struct onnx_ctx *c, struct spp_tensor *t, int *index);

/* Walk a graph: its weights, its subgraphs, its layers. */
int onnx_graph_walk(struct onnx_ctx *c, const Onnx__GraphProto *g,
		    struct onnx_scope *parent, int depth);

/*
 * Constant folding of what feeds a weight input (onnx_fold.c): *index is
 * the tensor of value name in scope s, an initializer, a Constant, or a
 * value computed from them by Identity, Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Slice, Concat, Gather and Cast, folded here once
 * into a tensor the model holds (spp_tensor.derived; the data it copies
 * charged to the model's budget). *index -1 when the value stays
 * unresolved, with why in *un (NULL: not wanted). Returns 0, or an error
 * status with one line: a malformed fold (a Slice step of 0, an index out
 * of range, a cycle), the budget, out of memory.
 */
int onnx_fold_value(struct onnx_ctx *c, struct onnx_scope *s, const char *name, int *index,
		    struct onnx_unfolded *un);

/* Record node i of s's graph as the producer of its outputs; 0 or SPP_E_NOMEM. */
int onnx_fold_producer(struct onnx_ctx *c, struct onnx_scope *s, size_t i);

/*
 * Note weight input i of node n, left unresolved for un, for the report's
 * unresolved_weight warning (c->unresolved); 0 or SPP_E_NOMEM.
 */
int onnx_fold_note(struct onnx_ctx *c, const struct onnx_scope *s, const Onnx__NodeProto *n,
		   size_t i, const struct onnx_unfolded *un);

/*
 * The evaluators of onnx_fold_ops.c: node n's output from its inputs'
 * tensors in[0..nin-1] (NULL for an absent optional input) into *out
 * (shape, dtype, data; the caller names it). Returns 0, with *why set and
 * *out untouched when spprof does not fold this case, or an error status.
 */
int onnx_fold_eval(struct onnx_ctx *c, const Onnx__NodeProto *n,
		   const struct spp_tensor *const *in, size_t nin, struct spp_tensor *out,
		   const char **why);
/* Whether op is one onnx_fold_eval knows. */
int onnx_fold_known(const char *op);

/* Cast (onnx_fold_cast.c): an ONNX data type's spprof dtype where Cast
 * folds it, else -1; whether a dtype is one of those; n values converted. */
int onnx_cast_dtype(int64_t onnx_type);
int onnx_cast_dtype_ok(enum spp_dtype dt);
void onnx_cast_values(const unsigned char *src, enum spp_dtype from, unsigned char *dst,
		      enum spp_dtype to, uint64_t n);

/* The tensor index of a constant named name in scope, -1 when none. */
int onnx_scope_weight(const struct onnx_scope *s, const char *name);

/*
 * The static shape of value name in scope: 1 and dims/rank when every
 * dimension is a known positive number, else 0. Inferred shapes come
 * before the file's value_info.
 */
int onnx_scope_shape(const struct onnx_scope *s, const char *name,
		     int64_t *dims, int *rank);

/* A node's attribute by name, NULL when absent. */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *name);
/* Its integer, dflt when absent. */
int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);

/*
 * Shape inference (onnx_shapes.c, onnx_shapes_nn.c). bind_inputs gives the
 * main graph's inputs their shapes: --input-shape where given, else the
 * file's, a symbolic first dimension taken as batch 1 (noted in c->notes);
 * infer gives node n's outputs theirs. Neither fails but for SPP_E_NOMEM
 * and a --input-shape of the wrong rank: a shape that cannot be inferred
 * is left unknown. free_inferred releases a scope's.
 */
int onnx_shapes_bind_inputs(struct onnx_ctx *c, const Onnx__GraphProto *g, struct onnx_scope *s);
int onnx_shapes_infer(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s);
void onnx_shapes_free(struct onnx_scope *s);

/* The inferrers' shared steps: a value's shape (a constant's too; 1 or 0),
 * a constant integer or float list (known values included; 1 or 0). */
int onnx_shape_of(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		  struct onnx_shape *out);
int onnx_const_ints(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		    int64_t *v, int max, int *count);
int onnx_const_floats(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		      double *v, int max, int *count);
/*
 * onnx_shape_part: the same, but a shape some of whose dimensions are
 * unknown (ONNX_DIM_UNKNOWN: a symbolic H and W) is returned too, for the
 * inferrers that carry the known ones on (a GlobalAveragePool's [b, C, 1, 1]
 * does not depend on H and W); onnx_shape_of returns only complete shapes.
 */
#define ONNX_DIM_UNKNOWN INT64_C(-1)
int onnx_shape_part(const struct onnx_ctx *c, const struct onnx_scope *s, const char *name,
		    struct onnx_shape *out);
/* Keep sh as the shape of name when every dimension is known (or
 * ONNX_DIM_UNKNOWN) and plausible (at most 2^40, numel at most 2^62); 0, or
 * -1 when out of memory. */
int onnx_shape_set(struct onnx_scope *s, const char *name, const struct onnx_shape *sh);
#define ONNX_MAX_DIM (INT64_C(1) << 40)
/* The outputs of one node whose shapes are inferred (Split's, an If's). */
#define ONNX_MAX_OUTS 16
/* An attribute's integers into v (at most max): 1, or 0 when absent or longer. */
int onnx_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max, int *count);

/* The inferrers of onnx_shapes_nn.c: out[0]'s shape, 1, or 0 when unknown. */
#define ONNX_INFER(fn) \
	int fn(const struct onnx_ctx *c, const Onnx__NodeProto *n, const struct onnx_scope *s, \
	       struct onnx_shape *out)
ONNX_INFER(onnx_infer_conv);
ONNX_INFER(onnx_infer_conv_transpose);
ONNX_INFER(onnx_infer_pool);
ONNX_INFER(onnx_infer_global_pool);
ONNX_INFER(onnx_infer_gemm);
ONNX_INFER(onnx_infer_matmul);
ONNX_INFER(onnx_infer_resize);
ONNX_INFER(onnx_infer_gather);
ONNX_INFER(onnx_infer_slice);
ONNX_INFER(onnx_infer_depth_space);
/* out[0..2]; returns the count of outputs (3 for LSTM, 2 for GRU and RNN) */
ONNX_INFER(onnx_infer_rnn);

/* Add the layer descriptions of node n (none when it is not a layer). */
int onnx_layers_add(struct onnx_ctx *c, const Onnx__NodeProto *n, struct onnx_scope *s);

/* Make layer names unique ("w", "w#2", ...) once all are added. */
int onnx_layers_unique(struct onnx_ctx *c);

#endif
