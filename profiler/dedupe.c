/* --dedupe: a layer's work unit and non-zero pattern (dedupe.h). */
#include "profiler/dedupe.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "profiler/analyze.h"
#include "profiler/decode.h"
#include "profiler/pages.h"

/* Row i's non-zero bits, packed eight to a byte, into bits ((k + 7) / 8 bytes). */
static void row_bits(const struct spp_layer *l, int64_t i, float *row, unsigned char *bits)
{
	int64_t k = l->view.k;

	spp_layer_decode_span(l, i, 0, k, row);
	memset(bits, 0, (size_t)(k + 7) / 8);
	for (int64_t j = 0; j < k; j++)
		if (row[j] != 0 || row[j] != row[j]) /* NaN counts as non-zero, as in the scan */
			bits[j >> 3] |= (unsigned char)(1u << (j & 7));
}

int spp_dedupe_key(const struct spp_layer *l, struct spp_dedupe_key *out, struct spp_error *err)
{
	const struct spp_tensor *w = l->weight;
	XXH3_state_t *st;
	XXH128_hash_t h;
	float *row = NULL;
	unsigned char *bits = NULL;

	memset(out, 0, sizeof(*out));
	if (!w || w->nnz_only || (!w->coo && !spp_decode_supported(w->dtype)))
		return 0;
	if (!(st = XXH3_createState()))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	XXH3_128bits_reset(st);
	if (w->coo) {
		XXH3_128bits_update(st, w->coo->row, w->coo->nnz * sizeof(int32_t));
		XXH3_128bits_update(st, w->coo->col, w->coo->nnz * sizeof(int32_t));
	} else {
		row = malloc((size_t)l->view.k * sizeof(float) + 1);
		bits = malloc((size_t)(l->view.k + 7) / 8 + 1);
		if (!row || !bits) {
			free(row);
			free(bits);
			XXH3_freeState(st);
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		}
		for (int64_t i = 0; i < l->view.m; i++) {
			row_bits(l, i, row, bits);
			XXH3_128bits_update(st, bits, (size_t)(l->view.k + 7) / 8);
		}
		spp_pages_release(w->data, w->nbytes); /* read once: the pages leave the process */
	}
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	free(row);
	free(bits);
	*out = (struct spp_dedupe_key){1, l->view.m, l->view.k, l->n, (int)w->dtype,
				       {h.low64, h.high64}};
	return 0;
}

int spp_dedupe_find(const struct spp_dedupe_key *keys, int i)
{
	const struct spp_dedupe_key *a = &keys[i];

	if (!a->ok)
		return -1;
	for (int j = 0; j < i; j++) {
		const struct spp_dedupe_key *b = &keys[j];

		if (b->ok && a->m == b->m && a->k == b->k && a->n == b->n && a->dtype == b->dtype &&
		    a->pattern[0] == b->pattern[0] && a->pattern[1] == b->pattern[1])
			return j;
	}
	return -1;
}

int spp_dedupe_plan(struct spp_analysis *a, struct spp_error *err)
{
	struct spp_dedupe_key *keys = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*keys));
	int rc = 0;

	a->runs_from = malloc((size_t)(a->nlayers > 0 ? a->nlayers : 1) * sizeof(*a->runs_from));
	if (!keys || !a->runs_from) {
		free(keys);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < a->nlayers && !rc; i++) {
		if (!a->stats[i].unsupported)
			rc = spp_dedupe_key(&a->layers[i], &keys[i], err);
		a->runs_from[i] = rc ? -1 : spp_dedupe_find(keys, i);
	}
	free(keys);
	return rc;
}

/* A copy of n elements of size bytes (room for one when n is 0); NULL when out of memory. */
static void *dup_array(const void *p, int n, size_t size)
{
	void *q = malloc((size_t)(n > 0 ? n : 1) * size);

	if (q && n > 0)
		memcpy(q, p, (size_t)n * size);
	return q;
}

int spp_dedupe_copy(struct spp_analysis *a, int i, struct spp_error *err)
{
	const struct spp_layer_runs *from = &a->runs[a->runs_from[i]];
	struct spp_layer_runs *to = &a->runs[i];

	*to = *from;
	to->dense_shared = 1; /* its dense baseline was chosen on the layer it copies */
	if (!(to->runs = dup_array(from->runs, from->nruns, sizeof(*to->runs)))) {
		to->nruns = 0;
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	return 0;
}

int spp_dedupe_copy_nsweep(struct spp_analysis *a, int i, struct spp_error *err)
{
	const struct spp_nsweep *from = &a->nsweeps_n[a->runs_from[i]];
	struct spp_nsweep *to = &a->nsweeps_n[i];

	*to = *from;
	if (!(to->results = dup_array(from->results, from->nresults, sizeof(*to->results)))) {
		to->nresults = 0;
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	return 0;
}
