/*
 * The .mtx and .smtx harnesses past the parser: the input, written as a
 * file, loads as a one-layer model whose static counts (from the entries,
 * static_scan_coo.c) agree with the parse and with each other, and whose
 * decoded dense form holds the same non-zeros.
 */
#ifndef SPP_TEST_FUZZ_MATRIX_H
#define SPP_TEST_FUZZ_MATRIX_H

#include <stdint.h>
#include <stdlib.h>

#include "profiler/decode.h"
#include "profiler/layer.h"
#include "profiler/model.h"
#include "profiler/static.h"
#include "test/fuzz/fuzz_tmp.h"

static void fuzz_counts_sane(const struct spp_static_counts *c, int64_t m, int64_t k,
			     uint64_t nnz)
{
	if (c->m != m || c->k != k || c->nnz != nnz || c->zero_rows > (uint64_t)m ||
	    c->zero_cols > (uint64_t)k || c->row_nnz_max > (uint64_t)k ||
	    c->row_nnz_min > c->row_nnz_max || (nnz == 0) != (c->zero_rows == (uint64_t)m) ||
	    c->zeros_in_zero_block4 > (uint64_t)m * (uint64_t)k - nnz)
		abort();
	for (int i = 0; i < SPP_NNM; i++)
		if (c->nm_ok[i] > c->nm_groups[i])
			abort();
	for (int b = 0; b < SPP_NBLOCK; b++)
		if (c->zero_blocks[b] > c->blocks[b])
			abort();
}

/* Write data as <scratch>/m.<ext>, load it with the format's loader, and
 * check its one m x k layer of nnz non-zeros. */
static void fuzz_matrix_model(const char *ext,
			      int (*load)(const char *, struct spp_model **, struct spp_error *),
			      const uint8_t *data, size_t size, int64_t m, int64_t k, uint64_t nnz)
{
	struct spp_model *model = NULL;
	struct spp_layer *l = NULL;
	struct spp_static_counts c;
	struct spp_error err = {0};
	char name[16], path[160];
	int n = 0;

	snprintf(name, sizeof(name), "m.%s", ext);
	fuzz_tmp_write(name, data, size, path);
	if (load(path, &model, &err)) {
		if (err.code != SPP_E_NOMEM)
			abort(); /* what parses loads */
		return;
	}
	if (spp_layers_from_model(model, 1, 0, &l, &n, &err) || n != 1 ||
	    spp_static_count(&l[0], &c, &err))
		abort();
	fuzz_counts_sane(&c, m, k, nnz);
	if ((uint64_t)m * (uint64_t)k <= (1u << 16)) {
		float *w = malloc((size_t)(m * k) * sizeof(*w));
		uint64_t seen = 0;

		if (!w || spp_layer_decode(&l[0], w, &err))
			abort();
		for (int64_t e = 0; e < m * k; e++)
			seen += w[e] != 0;
		if (seen != nnz)
			abort();
		free(w);
	}
	free(l);
	spp_model_destroy(model);
}

#endif
