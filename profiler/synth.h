/*
 * Synthetic models: safetensors files whose layers have a chosen shape,
 * sparsity pattern, sparsity and dtype, for sample models, tests and
 * benchmarks. Values are magnitude-style (no exact zeros outside the
 * pattern) and fully determined by the seed.
 *
 * Patterns are laid out in the GEMM view of DESIGN section 2, so an N:M
 * conv layer is N:M along its K order (kh, kw, c), c fastest.
 */
#ifndef SPP_PROFILER_SYNTH_H
#define SPP_PROFILER_SYNTH_H

#include <stdint.h>

#include "base/dtype.h"
#include "base/error.h"

enum spp_synth_pattern {
	SPP_SYNTH_DENSE,
	SPP_SYNTH_UNSTRUCTURED,
	SPP_SYNTH_NM,       /* nmN_M */
	SPP_SYNTH_BLOCK,    /* blockB */
	SPP_SYNTH_CHANNEL,  /* whole output rows zero */
};

struct spp_synth_layer {
	char name[256];
	int ndim;                 /* 2: [M, K]; 3: [O, I, K]; 4: [O, I, KH, KW] */
	int64_t shape[4];
	enum spp_synth_pattern pattern;
	int nm_n, nm_m;           /* SPP_SYNTH_NM */
	int block;                /* SPP_SYNTH_BLOCK */
	double sparsity;          /* target zero fraction, exact up to rounding */
	enum spp_dtype dtype;     /* F32, F16, BF16, F64, I8, ... */
};

/*
 * Parse "NAME=MxK:PATTERN:SPARSITY[:DTYPE]" or the conv form
 * "NAME=OxIxKHxKW:..." (also "OxIxK" for conv1d, and "D" for a 1-D tensor
 * such as a bias, dense or unstructured only). PATTERN is dense,
 * unstructured, nmN_M, blockB or channel. For nmN_M the sparsity is fixed
 * at 1 - N/M: SPARSITY must be within 0.005 of it. DTYPE (case-insensitive)
 * defaults to F32; generated: F32 F16 BF16 F64 I8 I16 I32 I64 U8 U16 U32 U64
 * F8_E4M3 F8_E5M2. SPP_E_USAGE with the spec quoted and the fault named.
 */
int spp_synth_parse_layer(const char *spec, struct spp_synth_layer *out,
			  struct spp_error *err);

/*
 * Write a safetensors file holding the layers (plus nothing else), streamed
 * so that models larger than memory can be written; atomic (temp file +
 * rename). Returns 0, SPP_E_USAGE (bad layer, duplicate name),
 * SPP_E_OUTPUT (cannot write), SPP_E_NOMEM, or SPP_E_RUNTIME when a layer's
 * GEMM view does not map a row onto one contiguous range.
 */
int spp_synth_write(const char *path, const struct spp_synth_layer *layers,
		    int nlayers, uint64_t seed, struct spp_error *err);

#endif
