/*
 * The loaders: the registry that tells a model file's format by its first
 * bytes and opens it with its loader (loaders.c), the loaders of each
 * format, and what every loaded model goes through after its loader
 * (compressed weights decoded, pruning masks folded). Each loader fills
 * the container of profiler/model.h.
 */
#ifndef SPP_PROFILER_LOADERS_H
#define SPP_PROFILER_LOADERS_H

#include "profiler/model.h"

/*
 * Open a model file of any supported format (a safetensors file or a
 * model.safetensors.index.json of a sharded checkpoint). On success *out is
 * a heap model to release with spp_model_destroy(). On failure *out is NULL,
 * nothing is leaked and err names the file and the fault: SPP_E_IO
 * (unreadable), SPP_E_FORMAT (malformed), SPP_E_UNSUPPORTED (unknown format).
 */
int spp_model_open(const char *path, struct spp_model **out,
		   struct spp_error *err);

/*
 * spp_model_open with opts (NULL: the default). Input shapes given for a
 * format without a graph, or naming no input of the graph, are
 * SPP_E_FORMAT.
 */
int spp_model_open_with(const char *path, const struct spp_open_opts *opts,
			struct spp_model **out, struct spp_error *err);

/*
 * Fold m's pruning masks into the weights they mask: "<stem>_mask" with
 * "<stem>_orig" (torch.nn.utils.prune) adds "<stem>" = orig where the mask
 * is non-zero, else 0; "<stem>_mask" beside "<stem>" masks "<stem>" in
 * place. A model with a graph is left alone. Returns 0, SPP_E_FORMAT (a
 * mask of another shape), SPP_E_UNSUPPORTED (a dtype that cannot fold:
 * packed or block types) or SPP_E_NOMEM, naming the model and the tensors.
 */
int spp_model_fold_masks(struct spp_model *m, struct spp_error *err);

/*
 * Decode m's compressed-tensors weights (llm-compressor's sparse-bitmask:
 * "<W>.compressed", "<W>.bitmask", "<W>.shape", "<W>.row_offsets"; its
 * sparse-24-bitmask: "<P>.compressed", "<P>.bitmask", "<P>.shape" for W =
 * "<P>.weight") into W, the parts folded (compressed.c). A model with a graph is left
 * alone. Returns 0, SPP_E_FORMAT naming the weight and the fault, or SPP_E_NOMEM.
 */
int spp_model_decompress(struct spp_model *m, struct spp_error *err);

/* Loaders, called by spp_model_open(); same contract. */
int spp_load_safetensors(const char *path, struct spp_model **out,
			 struct spp_error *err);
int spp_load_safetensors_index(const char *path, struct spp_model **out,
			       struct spp_error *err);
int spp_load_gguf(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_npy(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_npz(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_mtx(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_smtx(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_onnx(const char *path, const struct spp_open_opts *opts,
		  struct spp_model **out, struct spp_error *err);
int spp_load_torch(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_tfjs(const char *path, struct spp_model **out, struct spp_error *err);
int spp_load_tflite(const char *path, struct spp_model **out, struct spp_error *err);
/* A .mlmodel file or a .mlpackage folder (coreml/load_coreml.c). */
int spp_load_coreml(const char *path, struct spp_model **out, struct spp_error *err);
/* A Core ML Model protobuf: a top-level model-type field (200-999), a message. */
int spp_coreml_sniff(const unsigned char *b, size_t got, uint64_t size);
/* A FlatBuffer with TFLite's file identifier "TFL3" at bytes 4-7 (load_tflite.c). */
int spp_tflite_sniff(const unsigned char *b, size_t got, uint64_t size);

/*
 * For loaders of a JSON file that names its weight files (a sharded
 * checkpoint's index, a TF.js model.json, a Core ML package's manifest;
 * load_safetensors_index.c): the file parsed as one JSON object of at most
 * SPP_SAFETENSORS_MAX_HEADER bytes (*root, to cJSON_Delete), else a format
 * error naming the byte; spp_json_mapped the same from a file already
 * mapped (f->path names it). Names of weight files are checked with
 * spp_name_beneath and opened with spp_model_map_beneath.
 */
struct cJSON;
int spp_json_file_read(const char *path, struct cJSON **root, struct spp_error *err);
int spp_json_mapped(const struct spp_mapped_file *f, struct cJSON **root, struct spp_error *err);

/* A JSON object naming a TF.js model's keys in its first got bytes (load_tfjs.c). */
int spp_tfjs_sniff(const unsigned char *b, size_t got, uint64_t size);

/* A zip whose first member is torch.save's "<name>/data.pkl" (load_torch.c). */
int spp_torch_sniff(const unsigned char *b, size_t got, uint64_t size);

/* A legacy (pre-1.6) torch.save stream: its pickled magic number. */
int spp_torch_legacy_sniff(const unsigned char *b, size_t got, uint64_t size);

/* The tensors of the torch.save file (zip or legacy) mapped as m->files[file] into m
 * (a shard of a sharded checkpoint, or the one file); path names it in errors. */
int spp_torch_add(struct spp_model *m, int file, const char *path, struct spp_error *err);

/*
 * The format row whose test a file's first got bytes pass (size: the whole
 * file's), by name ("onnx", "tfjs", "safetensors index json", ...); NULL
 * when none does. The folder scan's test (loaders_dir.c).
 */
const char *spp_model_sniff(const unsigned char *b, size_t got, uint64_t size);

/*
 * The model a folder holds, into entry (dir/name): its one index of shards
 * (a *.index.json), else its one TF.js model or weights manifest (a .json
 * the tfjs test passes: its shards are its .bin files), else its one model
 * file; regular files only, hidden names and links skipped. SPP_E_USAGE
 * naming the candidates when there are several, SPP_E_FORMAT when none.
 */
int spp_model_dir_entry(const char *dir, char *entry, size_t n, struct spp_error *err);

#endif
