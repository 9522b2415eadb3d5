/*
 * One member of a zip archive read whole (libzip), checked as every
 * archive loader needs: a complete entry, stored or deflated, not
 * encrypted, sizes that fit the archive (deflate expands 1032 times at
 * most), and exactly the bytes the entry announces; or a stored member in
 * place, where it lies in the archive's mapping. Used by the npz and
 * PyTorch loaders.
 */
#ifndef SPP_PROFILER_ZIP_MEMBER_H
#define SPP_PROFILER_ZIP_MEMBER_H

#include <stdint.h>
#include <zip.h>

#include "base/error.h"

/* SPP_E_FORMAT "'file': what: libzip's reason". */
int spp_zip_fault(const char *file, const char *what, zip_error_t *ze, struct spp_error *err);

/*
 * The entry of member i into *st (its name libzip's, valid while za is
 * open), after the checks above; file names the archive in errors.
 */
int spp_zip_member_stat(zip_t *za, zip_uint64_t i, const char *file, uint64_t file_size,
			zip_stat_t *st, struct spp_error *err);

/*
 * Where each member's data starts in the archive's bytes, so that a stored
 * member is read in place: at the local header its central directory entry
 * names, as libzip (and torch, and numpy) read it, never a local header
 * met by walking from byte 0 (a second header of one name would then be
 * read in place while libzip reads the other). Each entry is checked
 * against libzip's (name, method, CRC) and its local header against the
 * entry (signature, name, method, not encrypted). Where anything differs
 * (or the end record is not the archive's one and only) the walk stops,
 * and the members from there on have no place (off 0): they are read as
 * copies, by libzip.
 */
struct spp_zip_places {
	const unsigned char *buf;  /* the archive's bytes, the caller's */
	uint64_t size;
	uint64_t *off;             /* data offset of member i; 0: not known */
	zip_uint64_t n;
};

/* Fill p for za, opened over size bytes at buf. SPP_E_NOMEM only. */
int spp_zip_places_find(zip_t *za, const unsigned char *buf, uint64_t size, struct spp_zip_places *p,
			struct spp_error *err);
void spp_zip_places_free(struct spp_zip_places *p);

/*
 * Member i (entry st, checked by spp_zip_member_stat) into *data: in place
 * in p's buffer when it is stored, its place is known and its bytes match
 * the entry's CRC-32 (as libzip checks a member read whole), *copy NULL;
 * else read whole into *copy (malloc'd, the caller's), *data the same,
 * its size first charged to m's running budget (spp_model_charge; m NULL:
 * not charged). SPP_E_FORMAT "where: CRC error ..." when stored bytes do
 * not match; SPP_E_BUDGET when the copy would pass the budget.
 */
struct spp_model;
int spp_zip_member_get(zip_t *za, const struct spp_zip_places *p, zip_uint64_t i,
		       const zip_stat_t *st, struct spp_model *m, const char *file, const char *where,
		       const unsigned char **data, unsigned char **copy, struct spp_error *err);

/* Open a read-only archive over size bytes at buf (kept by the caller). */
int spp_zip_open_buffer(const unsigned char *buf, uint64_t size, const char *file, zip_t **za,
			struct spp_error *err);

#endif
