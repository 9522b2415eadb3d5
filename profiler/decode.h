/*
 * Weights to fp32: a layer's W in its GEMM view (DESIGN section 2) decoded
 * into a dense row-major M x K float matrix, the form every kernel's
 * encoder and the dense baseline take (kernels compute in fp32).
 *
 * Floating types convert exactly where fp32 can hold the value (F16, BF16,
 * F8 E4M3 and E5M2 by their bits; F64 rounds to nearest); integer types
 * give their values (I64/U64 rounded to the nearest float). BOOL gives its
 * byte. ggml Q8_0 and Q4_0 give d * code. Types with no conversion here
 * (F8_E8M0, F6, F4, C64, the other ggml block types) are SPP_E_UNSUPPORTED.
 */
#ifndef SPP_PROFILER_DECODE_H
#define SPP_PROFILER_DECODE_H

#include <stdint.h>

#include "base/dtype.h"
#include "base/error.h"
#include "profiler/layer.h"

/* Whether spp_layer_decode() handles dtype t. */
int spp_decode_supported(enum spp_dtype t);

/* OCP FP8 E4M3 (bias 7, no infinities, S.1111.111 is NaN; max 448). */
float spp_f8_e4m3_to_f32(uint8_t v);

/* OCP FP8 E5M2 (bias 15, IEEE-style infinities and NaNs). */
float spp_f8_e5m2_to_f32(uint8_t v);

/*
 * Decode l's weights into out (m * k floats, row-major, caller-owned).
 * Parallel over rows with OpenMP. Returns 0, or SPP_E_UNSUPPORTED naming
 * the tensor and dtype (out untouched), or SPP_E_FORMAT when the tensor
 * holds fewer bytes than the view reads.
 */
int spp_layer_decode(const struct spp_layer *l, float *out, struct spp_error *err);

/*
 * Elements [j0, j0 + n) of row i of l's view into out, as spp_layer_decode
 * gives them; l's dtype must have a decoding (spp_decode_supported), its
 * weight must not be a matrix of non-zeros, and the view must lie within
 * the tensor (spp_layer_decode checks it; so does the static scan).
 */
void spp_layer_decode_span(const struct spp_layer *l, int64_t i, int64_t j0, int64_t n, float *out);

#endif
