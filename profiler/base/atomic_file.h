/*
 * Atomic output files: write into a hidden temporary file in the target's
 * folder, then fsync and rename it over the target, so a reader never sees
 * half a file and a failure leaves the target untouched and no temp file.
 *
 *     struct spp_atomic_file af;
 *     if (spp_atomic_open(&af, path, err)) return err->code;
 *     ... fwrite(..., af.f) ...
 *     return spp_atomic_commit(&af, err);   (or spp_atomic_abort(&af))
 */
#ifndef SPP_BASE_ATOMIC_FILE_H
#define SPP_BASE_ATOMIC_FILE_H

#include <stdio.h>

#include "profiler/base/error.h"

struct spp_atomic_file {
	FILE *f;        /* write here; NULL after commit/abort */
	char *tmp;      /* temporary path, owned */
	const char *path; /* borrowed: must outlive the struct's use */
};

/*
 * Create the temporary file (mode 0644) next to path. Returns 0 or
 * SPP_E_OUTPUT "cannot write 'path': why" / SPP_E_NOMEM.
 */
int spp_atomic_open(struct spp_atomic_file *af, const char *path,
		    struct spp_error *err);

/*
 * Flush, fsync and rename over path (and fsync the folder, best effort).
 * On failure the temporary file is removed and err names path with the
 * reason (errno of the failing call). Always releases af.
 */
int spp_atomic_commit(struct spp_atomic_file *af, struct spp_error *err);

/* Drop the temporary file; accepts a released or zeroed struct. */
void spp_atomic_abort(struct spp_atomic_file *af);

#endif
