/*
 * Content hash of a model's file(s), for identity in dashboards and gates.
 * XXH3-128 from libxxhash over fixed chunks hashed in parallel, then over
 * the chunk digests in order (a one-level tree), so hashing runs at memory
 * speed on several threads and never dominates the scan. The algorithm
 * name in the report says exactly this, so the value is reproducible.
 */
#ifndef SPP_PROFILER_HASH_H
#define SPP_PROFILER_HASH_H

#include "base/error.h"
#include "profiler/model.h"

struct spp_hash {
	const char *algo; /* static string naming the algorithm and chunking */
	char hex[33];     /* 128 bits as 32 lower-case hex digits */
};

/* Hash every file of m, in order. Returns 0 or SPP_E_NOMEM. */
int spp_model_hash(const struct spp_model *m, struct spp_hash *out,
		   struct spp_error *err);

#endif
