/*
 * The model's content hash, "xxh3-128/chunk16m":
 *   - each file, in the model's order, is cut into chunks of 16 MiB (the
 *     last one shorter; an empty file has none);
 *   - each chunk's digest is XXH3_128bits(chunk), taken in its canonical
 *     16-byte big-endian form (XXH128_canonicalFromHash);
 *   - the value is XXH3_128bits over, for each file in order, its chunk
 *     digests in order followed by its size as 8 bytes big-endian, written
 *     as the 32 lower-case hex digits of the canonical form.
 * Chunks hash in parallel; the second level is a few bytes per 16 MiB.
 */
#include "profiler/hash.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "profiler/pages.h"

#define CHUNK_BYTES ((uint64_t)16 << 20)
#define HASH_ALGO "xxh3-128/chunk16m"

/*
 * libxxhash builds with the x86 dispatcher export this variant, which picks
 * AVX2/AVX-512 at run time and reaches memory speed; the plain function is
 * compiled for the baseline ISA. Both compute the same XXH3 value, so take
 * the dispatcher where the library has it.
 */
extern XXH128_hash_t XXH3_128bits_dispatch(const void *input, size_t len)
	__attribute__((weak));

static XXH128_hash_t chunk_hash(const void *p, size_t n)
{
	if (XXH3_128bits_dispatch)
		return XXH3_128bits_dispatch(p, n);
	return XXH3_128bits(p, n);
}

struct chunk {
	const unsigned char *p;
	uint64_t len;
	size_t at; /* where its digest goes in the second-level input */
};

int spp_model_hash(const struct spp_model *m, struct spp_hash *out,
		   struct spp_error *err)
{
	struct spp_pages pg = {-1};
	struct chunk *chunks = NULL;
	unsigned char *cat = NULL;
	XXH128_canonical_t canon;
	uint64_t nchunks = 0, c = 0;
	size_t catlen = 0;
	int nt, rc;

	out->algo = HASH_ALGO;
	out->hex[0] = '\0';
	for (int f = 0; f < m->nfiles; f++)
		nchunks += (m->files[f].size + CHUNK_BYTES - 1) / CHUNK_BYTES;
	chunks = malloc((size_t)(nchunks ? nchunks : 1) * sizeof(*chunks));
	cat = malloc((size_t)nchunks * sizeof(canon) + (size_t)m->nfiles * 8 + 1);
	if (!chunks || !cat) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory hashing '%s'",
				   m->path ? m->path : "?");
		goto out;
	}
	/* lay out the second-level input: digests, then the size, per file */
	for (int f = 0; f < m->nfiles; f++) {
		uint64_t size = m->files[f].size;

		for (uint64_t o = 0; o < size; o += CHUNK_BYTES, c++) {
			chunks[c].p = m->files[f].base + o;
			chunks[c].len = size - o < CHUNK_BYTES ? size - o : CHUNK_BYTES;
			chunks[c].at = catlen;
			catlen += sizeof(canon);
		}
		for (int b = 7; b >= 0; b--)
			cat[catlen++] = (unsigned char)(size >> (8 * b));
	}

	nt = omp_get_max_threads();
	if ((uint64_t)nt > nchunks)
		nt = nchunks ? (int)nchunks : 1;
	spp_pages_open(&pg);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
	for (uint64_t i = 0; i < nchunks; i++) {
		XXH128_canonical_t d;

		spp_pages_prefault(chunks[i].p, chunks[i].len);
		XXH128_canonicalFromHash(&d, chunk_hash(chunks[i].p, (size_t)chunks[i].len));
		spp_pages_drop(&pg, chunks[i].p, chunks[i].len, 1);
		memcpy(cat + chunks[i].at, &d, sizeof(d));
	}
	/* the pages at chunk edges, shared by two threads, go last */
	for (int f = 0; f < m->nfiles; f++)
		spp_pages_drop(&pg, m->files[f].base, m->files[f].size, 0);

	XXH128_canonicalFromHash(&canon, XXH3_128bits(cat, catlen));
	for (int i = 0; i < 16; i++)
		snprintf(out->hex + 2 * i, 3, "%02x", canon.digest[i]);
	rc = SPP_OK;
out:
	spp_pages_close(&pg);
	free(cat);
	free(chunks);
	return rc;
}
