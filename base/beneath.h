/*
 * Opening a file that a model file names (a weight shard, a package's
 * model, external data) so that it cannot lead out of the model's folder:
 * the name is resolved beneath that folder by the kernel (openat2 with
 * RESOLVE_BENEATH), so an absolute name, a ".." that climbs out, or a
 * symbolic link anywhere on the way that points outside is refused; where
 * openat2 is missing (Linux before 5.6, or filtered), the resolved path
 * (realpath) must start with the folder's. A model downloaded with a link
 * to /etc/passwd or ~/.ssh must not have it read as weights.
 */
#ifndef SPP_BASE_BENEATH_H
#define SPP_BASE_BENEATH_H

#include <sys/stat.h>

#include "base/error.h"
#include "base/mapfile.h"

/*
 * Whether name stays inside a folder by its spelling alone: not empty, not
 * absolute, no ".." component ('/' and '\\' both separate, as a model
 * written on Windows may). 0 when it does, -1 when not. The early check
 * of a loader that reads every name before opening any.
 */
int spp_name_beneath(const char *name);

/*
 * Open name beneath the folder dir ("" or NULL: the current one) for
 * reading, held to spp_infile_open's rules (a regular file, remembered as
 * an input). Returns the descriptor, st filled, or a negative status:
 * SPP_E_FORMAT "'from': 'name' leads outside the model's folder" (from: the
 * model file that names it; spp_name_beneath fails, or the kernel found a
 * link or ".." that leaves the folder), or spp_infile_open's errors naming
 * dir/name.
 */
int spp_open_beneath(const char *dir, const char *name, const char *from, struct stat *st,
		     struct spp_error *err);

/*
 * spp_open_beneath, then the file mapped read-only into out (out->path is
 * dir/name); st, when not NULL, receives its fstat (st_dev, st_ino tell
 * the same file named twice). 0 or the errors above.
 */
int spp_mapfile_beneath(const char *dir, const char *name, const char *from,
			struct spp_mapped_file *out, struct stat *st, struct spp_error *err);

#endif
