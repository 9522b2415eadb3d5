/*
 * The safetensors format, parsed from a buffer (a mapped file, or a fuzzer's
 * input) so the file loader and the fuzz harness share one validator.
 *
 * Layout (https://github.com/huggingface/safetensors):
 *
 *   u64 N (little-endian) | N bytes of JSON header | data buffer
 *
 * The header is a JSON object that starts with '{', holds no NUL byte and may
 * be padded with trailing spaces (0x20) up to N. Its optional "__metadata__"
 * maps strings to strings; every other key names a tensor:
 *
 *   "fc.weight": {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48]}
 *
 * data_offsets [begin, end) are relative to the data buffer. Sorted by begin,
 * the tensors tile the buffer exactly: the first begins at 0, each begins
 * where the previous ended, each holds shape x dtype bytes, the last ends at
 * the end of the file. Unknown keys inside a tensor entry are ignored.
 *
 * Choices where the format leaves room:
 * - N is at most SPP_SAFETENSORS_MAX_HEADER = 100,000,000 bytes (decimal, the
 *   limit of the reference Rust implementation).
 * - Shape entries and offsets are integers in [0, 2^53]: JSON numbers are
 *   doubles, beyond 2^53 they are not exact. A number written as 1e3 is
 *   accepted as 1000 (cJSON keeps no lexical form).
 * - A shape with a 0 has 0 elements even when the other dimensions multiply
 *   past 2^64; otherwise a product that overflows 64 bits is an error.
 * - Order of the result: by data offset, then by end (a zero-size tensor
 *   comes before the tensor that starts at the same byte), then by name.
 */
#ifndef SPP_PROFILER_SAFETENSORS_H
#define SPP_PROFILER_SAFETENSORS_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/model.h"

#define SPP_SAFETENSORS_MAX_HEADER UINT64_C(100000000)

/*
 * Validate the safetensors image buf[0, size) and list its tensors.
 * display_name (the file's path) starts every error message.
 *
 * On success returns 0, *tensors is a malloc'd array of *ntensors entries
 * (NULL when there are none) in the order above, each name malloc'd, each
 * data pointer into buf (NULL when nbytes is 0), offset from the start of
 * buf, file 0. Release with spp_safetensors_tensors_free(). buf is only read
 * up to the end of the header: tensor data pages are never touched.
 *
 * On failure returns SPP_E_FORMAT (malformed) or SPP_E_NOMEM, *tensors is
 * NULL, *ntensors 0, nothing is leaked, and err holds one line:
 * "'<display_name>': <fault>", naming the tensor or byte offset at fault.
 */
int spp_safetensors_parse(const unsigned char *buf, uint64_t size,
			  const char *display_name, struct spp_tensor **tensors,
			  int *ntensors, struct spp_error *err);

/* Free what spp_safetensors_parse() returned; accepts NULL. */
void spp_safetensors_tensors_free(struct spp_tensor *tensors, int ntensors);

/*
 * Order of tensors in a model: by file, data offset, end, then name. A qsort
 * comparator over struct spp_tensor, shared with the index loader.
 */
int spp_safetensors_tensor_cmp(const void *a, const void *b);

#endif
