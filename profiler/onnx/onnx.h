/*
 * ONNX models (https://onnx.ai): a protobuf ModelProto whose graph names
 * the weights (initializers, Constant nodes, sparse initializers, the same
 * inside If/Loop/Scan subgraphs) and the nodes that multiply them, so a
 * model gets layer descriptions with the GEMM view of each weight and N from
 * the graph's static shapes (profiler/model.h).
 *
 * Decoding uses protobuf-c with the project's own subset of the schema
 * (profiler/onnx/onnx_subset.proto). Before protobuf-c sees the bytes, a
 * wire-format walk checks every tag, length and nesting level, so that a
 * malformed file gets a message with the byte offset at fault and a
 * recursion bomb (If inside If inside ...) cannot exhaust the stack.
 *
 * Choices where the format leaves room:
 * - A file holds at most 2 GiB - 1 (protobuf's limit); larger models keep
 *   their weights in external data, which is mmap'd and never copied.
 *   Weights inside the file (raw_data) are copied once by protobuf-c; the
 *   decoded message lives as long as the model and tensors point into it.
 * - Messages nest at most SPP_PB_MAX_NESTING deep (profiler/pbuf.h) and graphs at most
 *   SPP_ONNX_MAX_GRAPH_DEPTH (the main graph is depth 0).
 * - STRING and COMPLEX128 tensors have no spprof dtype: they are left out of
 *   the model (not counted in totals). An unknown data_type is an error.
 * - A sparse_initializer (or a Constant's sparse_value) is densified into a
 *   buffer the model owns, up to SPP_ONNX_MAX_DENSIFY bytes, and is then
 *   analysed like any weight; a larger one is never densified: its
 *   non-zeros are counted from the stored values (spp_tensor.nnz_only), it
 *   counts in the model totals and is not a layer. Indices must be in range
 *   and strictly ascending, as ONNX requires.
 * - External data locations are relative to the model's folder; an absolute
 *   path or a ".." component is refused (symbolic links inside the folder
 *   are followed: Hugging Face caches link to blobs elsewhere).
 * - Layers: Gemm, MatMul, Conv, ConvTranspose, LSTM, GRU and RNN of the
 *   default domain whose weight operand is a constant; see onnx_layers.c
 *   for each op's view. A weight computed from constants by Identity,
 *   Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Concat, Gather
 *   or Cast is folded into a tensor the model holds (onnx_fold.c; the
 *   copies count against the model's memory budget, and the totals count
 *   the constants, not the folded weight); a weight input that stays
 *   unresolved is one line of m->weight_notes (the report's
 *   unresolved_weight warnings). A cycle among the nodes a weight is
 *   folded through, or a fold the operator's specification calls invalid,
 *   is SPP_E_FORMAT.
 */
#ifndef SPP_PROFILER_ONNX_ONNX_H
#define SPP_PROFILER_ONNX_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "profiler/loaders.h"

#define SPP_ONNX_MAX_GRAPH_DEPTH 32
#define SPP_ONNX_MAX_DENSIFY (UINT64_C(256) << 20)

/*
 * Decode the ONNX image buf[0, size) into m, a model the caller allocated
 * (path set; files may already hold the image's own mapping). display_name
 * starts every error message. dir is the folder external data is resolved
 * against, NULL when there is none (a fuzzer's buffer): a tensor with
 * external data is then SPP_E_UNSUPPORTED. opts (NULL: none) gives graph
 * inputs their shapes; what was assumed instead goes to m->shape_notes.
 *
 * Adds tensors, layer descriptions, owned buffers and external data files to
 * m; buf must outlive m only as far as m->files says (nothing points into
 * buf itself). Returns 0, or SPP_E_FORMAT / SPP_E_UNSUPPORTED / SPP_E_NOMEM
 * with one line in err; on failure m may hold part of the model and the
 * caller destroys it (spp_model_destroy frees everything added).
 */
int spp_onnx_parse(const unsigned char *buf, uint64_t size,
		   const char *display_name, const char *dir,
		   const struct spp_open_opts *opts, struct spp_model *m,
		   struct spp_error *err);

/*
 * Whether the first got bytes of a file of size bytes look like a
 * ModelProto: a sequence of well-formed fields whose numbers and wire types
 * are those of ModelProto (ir_version, producer, graph, opset_import, ...).
 * Text (JSON, CSV) fails on its first byte.
 */
int spp_onnx_sniff(const unsigned char *b, size_t got, uint64_t size);

#endif
