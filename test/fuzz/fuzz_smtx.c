/*
 * libFuzzer harness for the DLMC .smtx reader: on success the pattern is a
 * valid CSR (offsets from 0 to NNZ, non-decreasing; columns in [0, K),
 * ascending within a row); the file then loads as a model whose counts and
 * dense form hold those NNZ non-zeros (fuzz_matrix.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profiler/smtx.h"
#include "profiler/loaders.h"
#include "test/fuzz/fuzz_matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_smtx s;
	struct spp_error err = {0};
	int rc = spp_smtx_parse(size ? (const char *)data : "", size, "fuzz", &s, &err);

	if (rc) {
		if (s.row_ptr || s.col || err.code != rc || err.msg[0] == '\0')
			abort();
		return 0;
	}
	if (s.row_ptr[0] != 0 || s.row_ptr[s.m] != s.nnz)
		abort();
	for (int64_t i = 0; i < s.m; i++) {
		if (s.row_ptr[i + 1] < s.row_ptr[i])
			abort();
		for (int64_t e = s.row_ptr[i]; e < s.row_ptr[i + 1]; e++)
			if (s.col[e] < 0 || s.col[e] >= s.k || (e > s.row_ptr[i] && s.col[e] <= s.col[e - 1]))
				abort();
	}
	fuzz_matrix_model("smtx", spp_load_smtx, data, size, s.m, s.k, (uint64_t)s.nnz);
	spp_smtx_release(&s);
	return 0;
}
