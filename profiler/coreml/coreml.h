/*
 * Inside the Core ML loader (load_coreml.c, coreml_nn.c, coreml_mil.c,
 * coreml_constexpr.c): the decoded model and where its weight blobs are.
 */
#ifndef SPP_PROFILER_COREML_H
#define SPP_PROFILER_COREML_H

#include "profiler/coreml/coreml_subset.pb-c.h"
#include "profiler/model.h"

struct coreml {
	struct spp_model *m;
	const char *file; /* the .mlmodel, named in errors */
	char *dir;        /* its folder: what "@model_path" names */
	struct spp_error *err;
	const struct mil *prog; /* the ML program being read (coreml_mil.c) */
};

/* A format error "'file': <fmt>". */
int coreml_fault(struct coreml *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int coreml_nomem(struct coreml *c);

/* Append tensor t (its name owned, freed on failure) to the model: its index, or < 0 an error. */
int coreml_add_tensor(struct coreml *c, struct spp_tensor *t);

/* The layers and weights of a neural network (coreml_nn.c), of an ML program (coreml_mil.c). */
int coreml_nn(struct coreml *c, const Coreml__NeuralNetwork *nn);
int coreml_mil(struct coreml *c, const Coreml__Program *p);

/*
 * A value as stored: its dtype (SPP_DTYPE_COUNT for a sub-byte code,
 * bits then its width), shape and bytes (borrowed from the decoded
 * message or a mapped weight file: file, offset).
 */
struct mil_raw {
	enum spp_dtype dtype;
	int bits;
	int ndim;
	int64_t shape[SPP_MAX_DIMS];
	uint64_t numel;
	const unsigned char *data;
	uint64_t nbytes, offset;
	int file;
};

/* The value v (its type, an immediate tensor or a blob of weight.bin), named name. */
int coreml_value(struct coreml *c, const Coreml__Value *v, const char *name, struct mil_raw *r);

/*
 * The dense tensor of a constexpr op (constexpr_sparse_to_dense,
 * constexpr_lut_to_dense; coreml_constexpr.c) from its parameters, by
 * name: iOS16's attributes or iOS18's inputs, found with get (0, an error,
 * 1 made by an op spprof does not decode, 2 absent). *t filled (data owned
 * by the model, stored_as and stored_bytes set); 1 when op is not one
 * spprof decodes.
 */
typedef int (*coreml_param_fn)(struct coreml *c, const Coreml__Operation *op, const char *name,
			       struct mil_raw *r);
int coreml_constexpr(struct coreml *c, const Coreml__Operation *op, coreml_param_fn get,
		     struct spp_tensor *t);

#endif
