/*
 * libFuzzer harness for the Matrix Market reader: on success every entry
 * is inside the matrix (on or below the diagonal when symmetric) and values
 * exist exactly when the field is not pattern; the file then loads as a
 * model whose counts and dense form hold the parsed non-zeros
 * (fuzz_matrix.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profiler/mtx.h"
#include "profiler/loaders.h"
#include "test/fuzz/fuzz_matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_mtx x;
	struct spp_error err = {0};
	int rc = spp_mtx_parse((const char *)data, size, "fuzz", &x, &err);
	uint64_t nnz = 0;

	if (rc) {
		if (x.row || x.col || x.val || err.code != rc || err.msg[0] == '\0')
			abort();
		return 0;
	}
	if ((x.val == NULL) != (x.field == SPP_MTX_PATTERN) || (x.symmetric && x.m != x.k))
		abort();
	for (int64_t e = 0; e < x.nnz; e++)
		if (x.row[e] < 0 || x.row[e] >= x.m || x.col[e] < 0 || x.col[e] >= x.k ||
		    (x.symmetric && x.col[e] > x.row[e]))
			abort();
	/* an explicit zero is none; a symmetric entry off the diagonal is two */
	for (int64_t e = 0; e < x.nnz; e++)
		if (!x.val || x.val[e] != 0)
			nnz += x.symmetric && x.row[e] != x.col[e] ? 2 : 1;
	fuzz_matrix_model("mtx", spp_load_mtx, data, size, x.m, x.k, nnz);
	spp_mtx_release(&x);
	return 0;
}
