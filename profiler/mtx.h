/*
 * Benchmark matrices as one-layer models: Matrix Market .mtx (parsed here)
 * and DLMC .smtx (parsed by profiler/smtx.h), so that kernel developers can
 * profile a benchmark matrix directly. The loaders keep the non-zeros
 * (struct spp_coo of profiler/model.h): the static scan counts from them,
 * and a kernel run densifies W only after the memory budget allows it.
 *
 * Matrix Market, coordinate format only:
 *   %%MatrixMarket matrix coordinate <field> <symmetry>
 *   % comment lines
 *   M K NNZ
 *   NNZ lines "i j [value]", 1-based
 * field: real, integer or pattern (no value); symmetry: general or
 * symmetric (M = K, entries on or below the diagonal, mirrored on load).
 * Keywords are case-insensitive. Refused: array format, complex and
 * hermitian fields, skew-symmetric matrices, an entry given twice, entries
 * out of range, fewer or more entries than NNZ.
 *
 * Values:
 * - real and integer entries keep their value (an explicit 0 is a zero);
 *   a real non-zero below float's range becomes the smallest float of its
 *   sign, one beyond it an infinity, so a non-zero stays a non-zero;
 * - pattern entries (and every .smtx non-zero) get fixed-seed values: seed
 *   SPP_MATRIX_SEED in spp_rng (rng.h), one draw per stored entry in file
 *   order (.smtx: row-major order), magnitude uniform in [0.05, 1) with a
 *   random sign, as spp_smtx_fill_dense() draws them: never zero.
 */
#ifndef SPP_PROFILER_MTX_H
#define SPP_PROFILER_MTX_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define SPP_MATRIX_SEED 1

enum spp_mtx_field { SPP_MTX_REAL, SPP_MTX_INTEGER, SPP_MTX_PATTERN };

/* A parsed .mtx: its entries as stored (not mirrored). Owned arrays. */
struct spp_mtx {
	int64_t m, k, nnz;
	enum spp_mtx_field field;
	int symmetric;
	int32_t *row, *col;  /* nnz 0-based indices, in file order */
	double *val;         /* nnz values; NULL for a pattern matrix */
};

/*
 * Parse buf[0, len) (no NUL needed); display_name starts every message.
 * Returns 0, SPP_E_FORMAT ("'<name>': line N: <fault>") or SPP_E_NOMEM;
 * out is zeroed on failure. Memory taken is bounded by len, never by the
 * counts the file claims.
 */
int spp_mtx_parse(const char *buf, size_t len, const char *display_name,
		  struct spp_mtx *out, struct spp_error *err);

/* Free the arrays; accepts NULL and a zeroed struct. */
void spp_mtx_release(struct spp_mtx *x);

#endif
