/*
 * Synthetic weights in memory: the values synth would write for a layer,
 * as fp32, for the breakeven sweep and benchmarks that need W of a chosen
 * shape, pattern and sparsity without a file. Same generators, same seed
 * streams as spp_synth_write(), so the pattern and values match a file
 * written from the same layer and seed.
 */
#ifndef SPP_PROFILER_SYNTH_FILL_H
#define SPP_PROFILER_SYNTH_FILL_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/synth.h"

/*
 * Fill out (numel floats, caller-owned) with the layer's data as the F32
 * layer of a one-layer file written by spp_synth_write(l, 1, seed) holds
 * it, in storage order (for a rank-2 layer: W, M x K row-major). The
 * layer's dtype is ignored (values are generated as F32; the pattern of
 * any dtype is the same). Returns 0, SPP_E_USAGE (a layer the writer
 * refuses, message says why), SPP_E_NOMEM or SPP_E_RUNTIME (a conv view
 * that does not tile rows).
 */
int spp_synth_fill_f32(const struct spp_synth_layer *l, uint64_t seed, float *out,
		       struct spp_error *err);

#endif
