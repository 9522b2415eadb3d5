/* Zip members read whole and checked (zip_member.h). */
#include "profiler/zip_member.h"

#include <stdio.h>
#include <stdlib.h>

/* deflate expands at most 1032 times (zlib's figure): a larger claim is a bomb */
#define DEFLATE_MAX_RATIO 1032

int spp_zip_fault(const char *file, const char *what, zip_error_t *ze, struct spp_error *err)
{
	return spp_error_set(err, SPP_E_FORMAT, "'%s': %s: %s", file, what, zip_error_strerror(ze));
}

int spp_zip_member_stat(zip_t *za, zip_uint64_t i, const char *file, uint64_t file_size,
			zip_stat_t *st, struct spp_error *err)
{
	zip_stat_init(st);
	if (zip_stat_index(za, i, 0, st) != 0)
		return spp_zip_fault(file, "cannot read a member's entry", zip_get_error(za), err);
	if (!(st->valid & ZIP_STAT_NAME) || !(st->valid & ZIP_STAT_SIZE) ||
	    !(st->valid & ZIP_STAT_COMP_SIZE) || !(st->valid & ZIP_STAT_COMP_METHOD))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': member %llu: incomplete zip entry",
				     file, (unsigned long long)i);
	if (st->comp_method != ZIP_CM_STORE && st->comp_method != ZIP_CM_DEFLATE)
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': member '%.400s': compression method %d, want stored or deflated",
				     file, st->name, (int)st->comp_method);
	if ((st->valid & ZIP_STAT_ENCRYPTION_METHOD) && st->encryption_method != ZIP_EM_NONE)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': member '%.400s': encrypted", file,
				     st->name);
	if (st->comp_size > file_size ||
	    (st->comp_method == ZIP_CM_STORE ? st->size != st->comp_size
					     : st->size / DEFLATE_MAX_RATIO > st->comp_size + 1))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': member '%.400s': sizes %llu (compressed) and %llu (data) do not "
				     "fit the archive", file, st->name,
				     (unsigned long long)st->comp_size, (unsigned long long)st->size);
	return SPP_OK;
}

int spp_zip_member_read(zip_t *za, zip_uint64_t i, const zip_stat_t *st, const char *file,
			const char *where, unsigned char **data, struct spp_error *err)
{
	zip_file_t *zf;
	zip_int64_t got;
	int rc = SPP_OK;

	*data = malloc(st->size ? (size_t)st->size : 1);
	if (!*data)
		return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory for %llu bytes", where,
				     (unsigned long long)st->size);
	zf = zip_fopen_index(za, i, 0);
	if (!zf) {
		rc = spp_zip_fault(file, "cannot open a member", zip_get_error(za), err);
		goto out;
	}
	/* one byte more than announced: a member longer than its entry says is bad */
	got = st->size ? zip_fread(zf, *data, st->size) : 0;
	if (got == (zip_int64_t)st->size) {
		unsigned char extra;
		if (zip_fread(zf, &extra, 1) != 0)
			got = -1;
	}
	if (got != (zip_int64_t)st->size)
		rc = got < 0 ? spp_zip_fault(file, "cannot inflate a member", zip_file_get_error(zf), err)
			     : spp_error_set(err, SPP_E_FORMAT, "%s: %lld bytes of %llu announced", where,
					     (long long)got, (unsigned long long)st->size);
	zip_fclose(zf);
out:
	if (rc) {
		free(*data);
		*data = NULL;
	}
	return rc;
}

int spp_zip_open_buffer(const unsigned char *buf, uint64_t size, const char *file, zip_t **za,
			struct spp_error *err)
{
	zip_error_t ze;
	zip_source_t *src;
	int rc = SPP_OK;

	zip_error_init(&ze);
	src = zip_source_buffer_create(size ? buf : (const unsigned char *)"", size, 0, &ze);
	if (!src) {
		zip_error_fini(&ze);
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", file);
	}
	*za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	if (!*za) {
		rc = spp_zip_fault(file, "not a valid zip archive", &ze, err);
		zip_source_free(src);
	}
	zip_error_fini(&ze);
	return rc;
}
