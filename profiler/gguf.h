/*
 * The GGUF format of ggml / llama.cpp, versions 2 and 3, parsed from a
 * buffer (a mapped file, or a fuzzer's input) so that the file loader and
 * the fuzz harness share one validator. Integers are little-endian:
 *
 *   "GGUF" | u32 version | u64 n_tensors | u64 n_kv
 *   n_kv x      { string key | u32 value type | value }
 *   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml type
 *                 | u64 offset }
 *   padding to the alignment | data section
 *
 * A string is u64 length + bytes (no NUL). Value types: 0 u8, 1 i8, 2 u16,
 * 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array (u32 element type,
 * u64 count, elements; arrays nest), 10 u64, 11 i64, 12 f64. Metadata is
 * validated and skipped, except "general.alignment" (a u32, a power of two;
 * default 32), which aligns the data section and every tensor offset.
 *
 * ne[0] is the fastest dimension, so a tensor's shape here is ne reversed:
 * a 2-D weight ne = [in, out] is [out, in], as DESIGN section 2 wants. A
 * block-quantized tensor holds ne[0] / block values per row in whole
 * blocks, so ne[0] must be a multiple of its block size.
 *
 * Choices where the format leaves room:
 * - At most SPP_GGUF_MAX_DIMS = 4 dimensions (ggml's GGML_MAX_DIMS), each
 *   in [0, 2^62]; a product that overflows 64 bits is an error.
 * - Arrays nest at most SPP_GGUF_MAX_DEPTH deep; names and keys are at most
 *   SPP_GGUF_MAX_NAME bytes; duplicate tensor names or keys are errors.
 * - Tensors may sit in any order but must not overlap; their data lies
 *   inside the data section; bytes between or after them are ignored.
 * - Version 1 (32-bit counts, 2023) is refused.
 */
#ifndef SPP_PROFILER_GGUF_H
#define SPP_PROFILER_GGUF_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/model.h"

#define SPP_GGUF_MAX_DIMS 4
#define SPP_GGUF_MAX_DEPTH 8
#define SPP_GGUF_MAX_NAME 4096
#define SPP_GGUF_DEFAULT_ALIGNMENT 32

/*
 * ggml type id to a dtype; returns 0 and sets *out, or -1 for an id that
 * no ggml release defines (the removed Q4_2/Q4_3, the repacked types).
 */
int spp_gguf_dtype(uint32_t ggml_type, enum spp_dtype *out);

/*
 * Validate the GGUF image buf[0, size) and list its tensors, in the order
 * of the tensor infos. display_name (the file's path) starts every error
 * message. On success returns 0, *tensors is a malloc'd array of *ntensors
 * entries (NULL when there are none) with malloc'd names and data pointers
 * into buf (NULL when nbytes is 0), offset from the start of buf, file 0;
 * release it with spp_safetensors_tensors_free() (profiler/safetensors.h).
 * On failure returns SPP_E_FORMAT or SPP_E_NOMEM, *tensors is NULL,
 * *ntensors 0, and err holds one line naming the file and the fault.
 * Tensor data is never read.
 */
int spp_gguf_parse(const unsigned char *buf, uint64_t size, const char *display_name,
		   struct spp_tensor **tensors, int *ntensors, struct spp_error *err);

#endif
