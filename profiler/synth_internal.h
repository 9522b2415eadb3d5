/*
 * Pieces of the synth module shared between its parser (synth.c) and its
 * writer (synth_write.c). Not part of the public interface.
 */
#ifndef SPP_PROFILER_SYNTH_INTERNAL_H
#define SPP_PROFILER_SYNTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "profiler/synth.h"

/* Half-width of the window around 1 - N/M that an nmN_M SPARSITY may take. */
#define SPP_SYNTH_NM_TOLERANCE 0.005

/*
 * Check everything about one layer that the writer relies on: a name of 1 to
 * 255 bytes of valid UTF-8 without control characters and not
 * "__metadata__", rank 1 to 4 with every dim >= 1 and a byte size that fits
 * in int64, a dtype the writer can generate, pattern parameters in range and
 * a sparsity the pattern can hold. `what` starts the message ("layer spec
 * 'x'", "layer 'fc1'"). Returns 0 or SPP_E_USAGE.
 */
int spp_synth_check_layer(const struct spp_synth_layer *l, const char *what,
			  struct spp_error *err);

/* Bytes of the layer's data; the layer must have passed the check. */
uint64_t spp_synth_layer_bytes(const struct spp_synth_layer *l);

/*
 * The layer as a spec without its name ("64x32x3x3:nm2_4:0.5:F16"), which
 * spp_synth_parse_layer() reads back to the same layer. Truncated to n.
 */
void spp_synth_format_spec(const struct spp_synth_layer *l, char *buf, size_t n);

/* Whether the writer can generate values of dtype t. */
int spp_synth_dtype_supported(enum spp_dtype t);

#endif
