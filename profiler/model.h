/*
 * A loaded model: its files (mmap'd), and its tensors, whose data pointers
 * borrow from those mappings. Weights are never copied as a whole.
 *
 * spp_model_open() detects the format from the file's content and calls the
 * matching loader; every loader fills the same structure, so everything
 * downstream (layers, analysis, kernels, reports) is format-agnostic.
 */
#ifndef SPP_PROFILER_MODEL_H
#define SPP_PROFILER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/error.h"
#include "base/mapfile.h"

#define SPP_MAX_DIMS 8

/*
 * A matrix held as its non-zeros (a .mtx or .smtx file), so that a tiny
 * file claiming a huge matrix costs its entries, not M x K: sorted by row,
 * then column, no two at one place, none zero (NaN counts as non-zero, as
 * in the scan). The static scan counts from these; a kernel run densifies
 * the layer after the memory budget allows it. Arrays owned by the model.
 */
struct spp_coo {
	uint64_t nnz;
	const int32_t *row, *col;
	const float *val;
};

struct spp_tensor {
	char *name;                /* owned by the model */
	enum spp_dtype dtype;
	int ndim;
	int64_t shape[SPP_MAX_DIMS];
	uint64_t numel;            /* product of shape; 1 for rank 0 */
	const unsigned char *data; /* borrowed from the model's mapping; NULL when nbytes == 0 */
	uint64_t nbytes;
	uint64_t offset;           /* byte offset of data inside its file */
	int file;                  /* index into spp_model.files */
	/*
	 * A sparse tensor too large to densify (an ONNX sparse_initializer):
	 * data NULL, nbytes 0, its non-zeros counted from the stored values.
	 * It counts in the model totals and is never a layer.
	 */
	int nnz_only;
	uint64_t nnz;
	/* An F32 rank-2 matrix held as its entries (data NULL, nbytes 0); NULL otherwise. */
	const struct spp_coo *coo;
	/*
	 * Pruning masks (spp_model_fold_masks): a weight masked by the tensor
	 * named mask (data then the effective weight, a copy the model owns;
	 * mask_of the "<stem>_orig" it was made from, NULL when the weight was
	 * stored beside its mask); folded: a mask or an "_orig" already
	 * applied, which counts neither as a layer nor in the totals.
	 */
	const char *mask, *mask_of;
	int folded;
	/* decoded from a compressed checkpoint (compressed.c): its format
	 * ("sparse-bitmask", "sparse-24-bitmask") and the bytes its parts take
	 * in the file; NULL, 0 otherwise */
	const char *stored_as;
	uint64_t stored_bytes;
	/*
	 * Computed by the loader from other tensors of the file (an ONNX
	 * weight folded from Constants through Slice, Concat, ...): a layer's
	 * weight, but its elements are those it was made from, which the
	 * totals count, so it counts neither there nor as a layer by rank.
	 */
	int derived;
};

/*
 * A GEMM layer as a format with a graph (ONNX) describes it. Files without a
 * graph leave the model's list empty and layers are derived from tensor
 * ranks (profiler/layer.h). Strings owned by the model.
 */
struct spp_layer_desc {
	int tensor;                /* index of the weight in spp_model.tensors */
	int op;                    /* enum spp_op of profiler/layer.h */
	int layout;                /* enum spp_layout of profiler/layer.h; 0: OIHW */
	/* the GEMM view, as struct spp_gemm_view of profiler/layer.h */
	int64_t m, k;
	uint64_t base;
	int64_t row_stride, inner, inner_stride, outer_stride;
	int64_t n;                 /* N from the graph's static shapes; 0: use --n */
	char *name;                /* layer name: the weight tensor's, made unique */
	char *node_name;           /* graph node name, NULL when none */
	char *op_type;             /* graph op type ("Gemm", "Conv", ...), NULL when none */
	int bias;                  /* index + 1 of the bias in spp_model.tensors; 0: none */
};

/*
 * The whole graph beside its GEMM layers (graph formats: ONNX, TFLite),
 * filled by the loader's cost walk (profiler/graph_cost.h) for
 * summary.whole_model: the ops of the main graph, those that made a
 * profiled layer (their FLOPs are the layers'), and the others, counted
 * by the cost table or not (shapes not known, no row, control flow).
 * has_graph 0: no whole-model figures (a format without a graph).
 */
struct spp_graph_cost {
	int has_graph;
	uint64_t ops;               /* operators of the main graph (ONNX Constants not counted) */
	uint64_t layer_ops;         /* of those, the ones that made a profiled layer */
	uint64_t counted;           /* the others whose FLOPs are counted */
	uint64_t not_counted;       /* the others whose FLOPs are not */
	double other_flops;         /* the counted ones' FLOPs */
	char not_counted_ops[200];  /* "Resize: shapes not known, Loop: no cost", cut with "..." */
};

struct spp_model {
	char *path;                /* the path the user gave (owned) */
	const char *format;        /* "safetensors", ..., static string */
	struct spp_mapped_file *files;
	int nfiles;
	struct spp_tensor *tensors;
	int ntensors;
	uint64_t bytes;            /* sum of the sizes of all files, each file once */
	/*
	 * Bytes of decoded, gathered or inflated tensor data the loaders have
	 * allocated for this model so far (spp_model_charge): one running
	 * budget per model, so that many small decodes cannot add up past it.
	 */
	uint64_t charged;
	/* layers from a graph; NULL / 0: derive from tensor ranks */
	struct spp_layer_desc *layer_descs;
	int nlayer_descs;
	/*
	 * Buffers the model owns, for tensor data that is not a byte range of
	 * a file: decoded typed fields, synthesized values of pattern-only
	 * matrices, inflated archive members. Freed with the model.
	 */
	void **owned;
	int nowned;
	/* entries allocated, grown geometrically (100k npz members, one call each) */
	int owned_room;
	int tensors_room; /* of tensors when grown by spp_model_add_tensor; 0 otherwise */
	int layer_descs_room; /* of layer_descs when grown by spp_model_add_layer */
	/* per tensor: the layers made of it so far (spp_model_add_layer names
	 * the next "<weight>#k" without a pass over the layers); its room */
	int *tensor_uses;
	int tensor_uses_room;
	/* (st_dev, st_ino) of each of files, two per file, so that one file
	 * named twice is mapped and counted once (spp_model_map_beneath);
	 * the room of both arrays (0: files holds nfiles) */
	uint64_t *file_ids;
	int files_room;
	/* what the loader assumed about the graph's inputs (a symbolic batch
	 * taken as 1, ...), one per line, owned; NULL when nothing */
	char *shape_notes;
	/* weight inputs of a graph's layers the loader could not resolve to
	 * constants (computed at run time, or through an op it does not
	 * fold), one per line, owned; NULL when none */
	char *weight_notes;
	/* what the loaders left out of the files (a training checkpoint's
	 * optimizer state beside its model), one line per file, owned; NULL
	 * when nothing: each a training_state warning (spp_model_note_left_out) */
	char *left_out;
	struct spp_graph_cost graph;
};

#define SPP_MAX_INPUT_SHAPES 16

/* A graph input's shape given by the user (--input-shape NAME=1x3x224x224). */
struct spp_input_shape {
	const char *name;
	int rank;
	int64_t dims[SPP_MAX_DIMS];
};

/* What the user tells the loaders; a zeroed struct (or NULL) is the default. */
struct spp_open_opts {
	const struct spp_input_shape *input_shapes; /* graph formats (ONNX) only */
	int ninput_shapes;
};

/*
 * Hand a malloc'd buffer to the model (freed by spp_model_destroy);
 * on SPP_E_NOMEM the buffer is freed here. Returns 0 or SPP_E_NOMEM.
 */
int spp_model_own(struct spp_model *m, void *buf, struct spp_error *err);

/*
 * Charge `bytes` of tensor data a loader is about to allocate for m (a
 * decoded, dequantized, gathered or inflated copy) against the model's one
 * running memory budget, spp_budget_bytes(m->bytes): call it before the
 * allocation. SPP_OK with m->charged grown, or SPP_E_BUDGET (exit 2) with
 * one line naming path, what and the model's total so far; m->charged is
 * then unchanged.
 */
int spp_model_charge(struct spp_model *m, uint64_t bytes, const char *path, const char *what,
		     struct spp_error *err);

/*
 * Append *t to m's tensors, taking t's owned fields (name); the array
 * grows geometrically. On SPP_E_NOMEM t->name is freed here. Returns 0 or
 * SPP_E_NOMEM, "<where>: out of memory".
 */
int spp_model_add_tensor(struct spp_model *m, const struct spp_tensor *t, const char *where,
			 struct spp_error *err);

/*
 * d's GEMM view of a weight of numel elements stored as [m, numel / m]
 * row-major (W = the weight), or, transposed, as [numel / m, m] (W = its
 * transpose): the two layouts TF's and TFLite's weights come in.
 */
void spp_desc_view(struct spp_layer_desc *d, int64_t m, uint64_t numel, int transposed);
/*
 * Append a copy of *d to m's layer descriptions, named after its weight
 * ("<weight>#2", ... where the weight already is a layer's), node (NULL:
 * none) and op_type copied; a layer with m or k 0 is skipped. Past the
 * layer budget an SPP_E_BUDGET error names path and what made the layers.
 */
int spp_model_add_layer(struct spp_model *m, const struct spp_layer_desc *d, const char *node,
			const char *op_type, const char *path, const char *what,
			struct spp_error *err);
/*
 * Map name, a file that the model file `from` names (a weight shard, a
 * package's model, external data), resolved beneath the folder dir
 * (base/beneath.h: no absolute name, no "..", no symbolic link
 * leading out of it) as one of m's files, counted in m->bytes. *file: its
 * index; a file m already holds (the same st_dev and st_ino, however
 * named) is not mapped again and *file is that one's, so the caller can
 * refuse a name given twice or share the file. 0, or the errors of
 * spp_mapfile_beneath, SPP_E_NOMEM.
 */
int spp_model_map_beneath(struct spp_model *m, const char *dir, const char *name,
			  const char *from, int *file, struct spp_error *err);

/*
 * The index of the first of m's tensors [0, n) named stem[0, sl) followed
 * by suffix ("fc." + "bias", "w" + "_mask"); -1 when none.
 */
int spp_model_find(const struct spp_model *m, int n, const char *stem, size_t sl,
		   const char *suffix);

/*
 * Append line (one line, no newline) to m->left_out. Returns 0 or
 * SPP_E_NOMEM naming path.
 */
int spp_model_note_left_out(struct spp_model *m, const char *line, const char *path,
			    struct spp_error *err);

/* Release a model and its mappings; accepts NULL. */
void spp_model_destroy(struct spp_model *m);

/*
 * A model of one file mapped read-only, format fmt (a static string), no
 * tensors yet: what every single-file loader starts from. *out NULL on
 * failure (SPP_E_NOMEM, or the mapping's error naming path).
 */
int spp_model_open_mapped(const char *path, const char *fmt, struct spp_model **out,
			  struct spp_error *err);

#endif
