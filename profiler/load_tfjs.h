/*
 * What the TF.js loader's two parts share (load_tfjs.c: the manifest and
 * its weights; load_tfjs_layers.c: the layers over them).
 */
#ifndef SPP_PROFILER_LOAD_TFJS_H
#define SPP_PROFILER_LOAD_TFJS_H

#include <cjson/cJSON.h>

#include <stdint.h>

#include "profiler/loaders.h"
#include "profiler/model.h"

struct tfjs {
	struct spp_model *m;
	const char *path;
	struct spp_error *err;
	int *by_name; /* tensor indices sorted by name, for lookups */
};

/* SPP_E_NOMEM naming t's file. */
int tfjs_nomem(struct tfjs *t);

/* t->m's layers from the model's JSON root (an object with a topology, or a manifest's list). */
int tfjs_load_layers(struct tfjs *t, const cJSON *root);

/* The tensor named name (a node input: "^x" control inputs none, "x:0" as x), -1 if none. */
int tfjs_find(const struct tfjs *t, const char *name);

/*
 * Static shapes through a graph model's nodes (load_tfjs_shapes.c, its ops
 * in load_tfjs_shapes_ops.c): each node's first output, rank -1 when not
 * known, a dimension -1 (TFJS_DIM_UNKNOWN) when that one is not known.
 */
#define TFJS_DIM_UNKNOWN INT64_C(-1)
struct tfjs_shape {
	int rank;
	int64_t d[SPP_MAX_DIMS];
};

struct tfjs_shapes {
	int count;
	const cJSON **node;        /* the nodes with a name and an op */
	struct tfjs_shape *shape;  /* per node */
	int *sorted;               /* node indices by name */
};

/* Every node's shape (the Placeholder's notes into t->m->shape_notes); 0 or SPP_E_NOMEM. */
int tfjs_shapes_infer(struct tfjs *t, const cJSON *nodes, struct tfjs_shapes *sh);
void tfjs_shapes_free(struct tfjs_shapes *sh);
/* The shape of a node input ("x", "x:0"), NULL when not known. */
const struct tfjs_shape *tfjs_shape_of(const struct tfjs_shapes *sh, const char *input);
/* A layer's N from node's complete output shape (for a constant A of a
 * MatMul its columns), 0 when not known. */
int64_t tfjs_layer_n(const struct tfjs_shapes *sh, const cJSON *node, int weight_is_a);

/* The inference's shared steps: node.attr.name; its list of ints (1, or 0
 * when absent or longer than max); whether its string is b64 (base64 in
 * the JSON); input k's shape (a node's or a weight's; 1 or 0); input k's
 * values, a small int32 weight (1 or 0); node's output shape (1 or 0). */
const cJSON *tfjs_attr(const cJSON *node, const char *name);
int tfjs_attr_ints(const cJSON *node, const char *name, int64_t *v, int max, int *count);
int tfjs_attr_s(const cJSON *node, const char *name, const char *b64);
int tfjs_input_shape(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int k,
		     struct tfjs_shape *out);
int tfjs_input_ints(struct tfjs *t, const cJSON *node, int k, int64_t *v, int max, int *count);
int tfjs_shapes_node(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node,
		     struct tfjs_shape *out);

#endif
