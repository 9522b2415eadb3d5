/*
 * Atomic output files: write into a hidden temporary file in the target's
 * folder, then fsync and rename it over the target, so a reader never sees
 * half a file and a failure leaves the target untouched and no temp file.
 *
 *     struct spp_atomic_file af;
 *     if (spp_atomic_open(&af, path, err)) return err->code;
 *     ... fwrite(..., af.f) ...
 *     return spp_atomic_commit(&af, err);   (or spp_atomic_abort(&af))
 *
 * The target must be absent or a regular file (stat() of the path, so a
 * symlink is judged by what it points to): a FIFO, a device, a socket or a
 * directory is refused rather than replaced, and so is any file this run
 * read (base/infile.h). While a temporary file exists, SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ remove it, say so on stderr
 * and exit 128 + the signal; at other times they act as before (the handler
 * is installed by the first open, for each signal the process neither
 * ignores nor handles itself).
 */
#ifndef SPP_BASE_ATOMIC_FILE_H
#define SPP_BASE_ATOMIC_FILE_H

#include <stdio.h>

#include "base/error.h"

struct spp_atomic_file {
	FILE *f;        /* write here; NULL after commit/abort */
	char *tmp;      /* temporary path, owned */
	const char *path; /* borrowed: must outlive the struct's use */
	int slot;       /* 1 + its entry of the signal handler's list; 0 none */
};

/*
 * Whether path may be written: absent or a regular file, not an input of
 * this run, and its folder exists and takes a new file (tried by creating
 * and removing a temporary one). For -o before any work is done. Returns 0
 * or SPP_E_USAGE with "cannot write 'path': why" (is a directory, not a
 * regular file (a FIFO), is the input 'x', folder 'd': why).
 */
int spp_outfile_check(const char *path, struct spp_error *err);

/*
 * Create the temporary file (mode 0644) next to path. Returns 0, SPP_E_USAGE
 * when the target is refused (see above), or SPP_E_OUTPUT "cannot write
 * 'path': why" / SPP_E_NOMEM.
 */
int spp_atomic_open(struct spp_atomic_file *af, const char *path,
		    struct spp_error *err);

/*
 * The same for a file this run read and now rewrites on purpose (a cache
 * merged with what it held): only the kind of the target is checked.
 */
int spp_atomic_open_rewrite(struct spp_atomic_file *af, const char *path,
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
