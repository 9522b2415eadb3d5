/*
 * What a spprof binary finds beside itself: a path relative to the
 * repository it was built in (the DLMC patterns, the torch peer's script),
 * looked for from the executable's folder and the folders above it, then
 * from the current folder.
 */
#ifndef SPP_BASE_NEAR_EXE_H
#define SPP_BASE_NEAR_EXE_H

#include <stddef.h>

/* Folders above the executable's that are tried (build/cmd/spprof: the repository is 2 up). */
#define SPP_NEAR_EXE_UP 3

/*
 * The first of the nrel relative paths rel[] that exists as a folder
 * (want_dir) or a readable file, under the executable's folder or one of
 * the SPP_NEAR_EXE_UP above it, else under the current folder, into out.
 * exe and cwd (PATH_MAX each) say where it looked, "?" when unknown.
 * Returns 1 when found, 0 when not.
 */
int spp_find_near_exe(const char *const *rel, int nrel, int want_dir, char *out, size_t n,
		      char *exe, char *cwd);

/* Whether dir/rel exists as a folder (want_dir) or a readable file; the path into out. */
int spp_path_at(const char *dir, const char *rel, int want_dir, char *out, size_t n);

#endif
