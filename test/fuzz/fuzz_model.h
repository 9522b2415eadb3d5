/*
 * The model of the journal and merge harnesses: three fp32 layers whose
 * weights are a formula of their indices (exact in fp32), written byte
 * for byte as test/fuzz/make_seeds.py writes it, so that the seed journals
 * and report parts made from its copy by the spprof binary carry this
 * model's hash, names and shapes; and the check both make of what they
 * restored.
 */
#ifndef SPP_TEST_FUZZ_MODEL_H
#define SPP_TEST_FUZZ_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/run.h"

#define FUZZ_MODEL_LAYERS 3
static const int fuzz_model_m[FUZZ_MODEL_LAYERS] = {32, 48, 64};
#define FUZZ_MODEL_K 48

static float fuzz_model_w(int layer, int i, int j)
{
	return (i * 7 + j * 3 + layer) % 5 == 0 ? (float)((i + j) % 11 - 5) * 0.125f : 0.0f;
}

/* The model as path (a safetensors file); aborts when it cannot be written. */
static void fuzz_model_write(const char *path)
{
	char header[1024];
	size_t len = 0, off = 0;
	uint64_t n;
	FILE *f;

	len += (size_t)snprintf(header + len, sizeof(header) - len, "{");
	for (int l = 0; l < FUZZ_MODEL_LAYERS; l++) {
		size_t bytes = (size_t)fuzz_model_m[l] * FUZZ_MODEL_K * 4;

		len += (size_t)snprintf(header + len, sizeof(header) - len,
					"%s\"l%d.weight\": {\"dtype\": \"F32\", \"shape\": [%d, %d], "
					"\"data_offsets\": [%zu, %zu]}", l ? ", " : "", l, fuzz_model_m[l],
					FUZZ_MODEL_K, off, off + bytes);
		off += bytes;
	}
	len += (size_t)snprintf(header + len, sizeof(header) - len, "}");
	if (len >= sizeof(header) || !(f = fopen(path, "wb")))
		abort();
	n = len; /* little-endian hosts only, as the loaders */
	fwrite(&n, 8, 1, f);
	fwrite(header, 1, len, f);
	for (int l = 0; l < FUZZ_MODEL_LAYERS; l++)
		for (int i = 0; i < fuzz_model_m[l]; i++)
			for (int j = 0; j < FUZZ_MODEL_K; j++) {
				float v = fuzz_model_w(l, i, j);

				fwrite(&v, 4, 1, f);
			}
	if (fclose(f))
		abort();
}

/* A restored CPU run's speedup is its dense run's median over its own. */
static void fuzz_check_derived(const struct spp_layer_runs *r)
{
	const struct spp_run *dense = r->nruns > 0 ? &r->runs[0] : NULL;

	for (int k = 1; dense && strcmp(dense->format, "dense") == 0 && k < r->nruns; k++) {
		const struct spp_run *x = &r->runs[k];

		if (strcmp(x->backend, "cpu") == 0 && strcmp(dense->backend, "cpu") == 0 &&
		    dense->time.repeats > 0 && x->time.repeats > 0 && x->time.median > 0 &&
		    dense->time.median > 0 && !(x->speedup == dense->time.median / x->time.median))
			abort();
	}
}

#endif
