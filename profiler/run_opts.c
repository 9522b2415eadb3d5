/*
 * A run's settings: the defaults of struct spp_run_opts, and the cache
 * flusher of --cold sized from the machine.
 */
#include "profiler/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_run_opts_init(struct spp_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->isa = spp_isa_detect();
	o->seed = 1;
	spp_bench_opts_init(&o->bench);
	o->verify_rtol = 1e-4;
	o->backends = SPP_BACKEND_CPU;
}

/* Eviction buffer when no cache size is known: larger than most LLCs. */
#define DEFAULT_EVICT_BYTES ((size_t)256 << 20)

int spp_run_flusher_init(struct spp_flusher *fl, const struct spp_machine *m, char *method,
			 size_t len, struct spp_error *err)
{
	struct spp_machine *here = NULL;
	size_t bytes;
	int rc;

	if (!m) {
		if (!(here = calloc(1, sizeof(*here))))
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		spp_machine_describe(here, 1);
		m = here;
	}
	bytes = 2 * (size_t)spp_machine_largest_cache(m);
	free(here);
	if (!bytes)
		bytes = DEFAULT_EVICT_BYTES;
	if ((rc = spp_flusher_init(fl, bytes, err)))
		return rc;
	snprintf(method, len, "%s of W, then a %.0f MiB read (2x the largest believable cache), "
		 "then X and Y read back: W cold, X and Y warm", spp_cache_flush_method(),
		 (double)bytes / (1 << 20));
	return SPP_OK;
}
