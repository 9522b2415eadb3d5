/*
 * One member of a zip archive read whole (libzip), checked as every
 * archive loader needs: a complete entry, stored or deflated, not
 * encrypted, sizes that fit the archive (deflate expands 1032 times at
 * most), and exactly the bytes the entry announces. Used by the npz and
 * PyTorch loaders.
 */
#ifndef SPP_PROFILER_ZIP_MEMBER_H
#define SPP_PROFILER_ZIP_MEMBER_H

#include <stdint.h>
#include <zip.h>

#include "profiler/base/error.h"

/* SPP_E_FORMAT "'file': what: libzip's reason". */
int spp_zip_fault(const char *file, const char *what, zip_error_t *ze, struct spp_error *err);

/*
 * The entry of member i into *st (its name libzip's, valid while za is
 * open), after the checks above; file names the archive in errors.
 */
int spp_zip_member_stat(zip_t *za, zip_uint64_t i, const char *file, uint64_t file_size,
			zip_stat_t *st, struct spp_error *err);

/* Member i, whose entry st passed spp_zip_member_stat, into *data (malloc'd,
 * st->size bytes; the caller frees it). where names the member in errors. */
int spp_zip_member_read(zip_t *za, zip_uint64_t i, const zip_stat_t *st, const char *file,
			const char *where, unsigned char **data, struct spp_error *err);

/* Open a read-only archive over size bytes at buf (kept by the caller). */
int spp_zip_open_buffer(const unsigned char *buf, uint64_t size, const char *file, zip_t **za,
			struct spp_error *err);

#endif
