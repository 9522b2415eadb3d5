/*
 * DLMC .smtx sparsity patterns (the Deep Learning Matrix Collection of Gale
 * et al., real pruned Transformer and ResNet-50 layers), for benchmarks.
 * A file holds a pattern and no values, in three lines of text:
 *   1. "M, K, NNZ"
 *   2. M+1 row offsets (a CSR row pointer), space separated
 *   3. NNZ column indices, space separated, ascending within each row
 * Conv layers are in their GEMM view (rows are output channels), so W is
 * M x K as in DESIGN section 2.
 *
 * A struct spp_smtx owns its arrays until spp_smtx_release().
 */
#ifndef SPP_PROFILER_SMTX_H
#define SPP_PROFILER_SMTX_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct spp_smtx {
	int64_t m, k, nnz;
	int32_t *row_ptr;  /* m + 1 entries, row_ptr[0] = 0, row_ptr[m] = nnz */
	int32_t *col;      /* nnz entries */
};

/*
 * Load and validate path: the header's three numbers (M, K >= 1, below
 * 2^31; NNZ <= M*K), exactly M+1 non-decreasing offsets from 0 to NNZ,
 * exactly NNZ column indices in [0, K), strictly ascending within a row,
 * nothing after the third line. Returns 0, SPP_E_IO (unreadable: errno's
 * message), SPP_E_FORMAT (the line and what is wrong) or SPP_E_NOMEM;
 * out is zeroed on failure.
 */
int spp_smtx_load(const char *path, struct spp_smtx *out, struct spp_error *err);

/*
 * The same checks on a text already in memory, buf[0, len) (a mapped file,
 * a fuzzer's input; no NUL needed); display_name starts every message.
 */
int spp_smtx_parse(const char *buf, size_t len, const char *display_name,
		   struct spp_smtx *out, struct spp_error *err);

/* Free the arrays; accepts NULL and a zeroed struct. */
void spp_smtx_release(struct spp_smtx *s);

struct spp_rng;

/*
 * The next fixed-seed value of a pattern's non-zero: a magnitude uniform in
 * [0.05, 1) (24 bits) with a random sign (bit 0) from one draw of r; never
 * zero. spp_smtx_fill_dense() and the .mtx/.smtx loaders draw with it.
 */
float spp_smtx_value(struct spp_rng *r);

/*
 * W (m x k row-major, caller-owned, m*k floats) with the pattern's
 * non-zeros filled by fixed-seed values: in row-major order, each a
 * magnitude uniform in [0.05, 1) with a random sign, from spp_rng (rng.h)
 * seeded with seed; zeros elsewhere. Deterministic on every machine.
 */
void spp_smtx_fill_dense(const struct spp_smtx *s, uint64_t seed, float *w);

#endif
