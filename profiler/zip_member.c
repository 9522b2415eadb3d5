/* Zip members read whole and checked (zip_member.h). */
#include "profiler/zip_member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profiler/base/le.h"
#include "profiler/pages.h"

/* bytes of a member whose CRC is checked before their pages are dropped */
#define CRC_PART (8u << 20)

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

/* Member i, whose entry st passed spp_zip_member_stat, into *data (malloc'd, st->size bytes). */
static int read_whole(zip_t *za, zip_uint64_t i, const zip_stat_t *st, const char *file,
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

/* Whether a local header or the central directory starts at pos. */
static int next_header(const unsigned char *buf, uint64_t size, uint64_t pos)
{
	return pos + 4 <= size &&
	       (spp_le(buf + pos, 4) == 0x04034b50u || spp_le(buf + pos, 4) == 0x02014b50u);
}

/*
 * Where the local header at *pos of member st keeps its data: the offset,
 * *pos moved to the next header; 0 when the header is not st's.
 */
static uint64_t local_data(const unsigned char *buf, uint64_t size, uint64_t *pos, const char *name,
			   const zip_stat_t *st)
{
	uint64_t at = *pos, data, end;
	size_t nl = strlen(name);
	uint32_t flags;

	if (at + 30 > size || spp_le(buf + at, 4) != 0x04034b50u)
		return 0;
	flags = spp_le(buf + at + 6, 2);
	if (spp_le(buf + at + 26, 2) != nl || spp_le(buf + at + 8, 2) != st->comp_method ||
	    (flags & 1))
		return 0;
	data = at + 30 + nl + spp_le(buf + at + 28, 2);
	if (data > size || st->comp_size > size - data || memcmp(buf + at + 30, name, nl) != 0)
		return 0;
	end = data + st->comp_size;
	if (flags & 8) {
		/* a data descriptor: its signature optional, its sizes 4 or 8 bytes each */
		uint64_t d = end + (end + 4 <= size && spp_le(buf + end, 4) == 0x08074b50u ? 4 : 0);

		end = next_header(buf, size, d + 12) ? d + 12 : next_header(buf, size, d + 20) ? d + 20 : 0;
		if (!end)
			return 0;
	}
	*pos = end;
	return data;
}

int spp_zip_places_find(zip_t *za, const unsigned char *buf, uint64_t size, struct spp_zip_places *p,
			struct spp_error *err)
{
	zip_int64_t n = zip_get_num_entries(za, 0);
	uint64_t pos = 0;

	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->size = size;
	if (n <= 0)
		return SPP_OK;
	if (!(p->off = calloc((size_t)n, sizeof(*p->off))))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	p->n = (zip_uint64_t)n;
	for (zip_uint64_t i = 0; i < p->n; i++) {
		const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
		zip_stat_t st;

		zip_stat_init(&st);
		if (!name || zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) != 0 ||
		    !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD) ||
		    !(p->off[i] = local_data(buf, size, &pos, name, &st)))
			break;
	}
	return SPP_OK;
}

void spp_zip_places_free(struct spp_zip_places *p)
{
	if (!p)
		return;
	free(p->off);
	memset(p, 0, sizeof(*p));
}

/* Member i in place (*data into the archive's bytes) when it can be; else *data NULL. */
static int in_place(const struct spp_zip_places *p, zip_uint64_t i, const zip_stat_t *st,
		    const char *where, const unsigned char **data, struct spp_error *err)
{
	uint64_t off = p && i < p->n ? p->off[i] : 0;
	uLong crc = crc32(0L, Z_NULL, 0);

	*data = NULL;
	if (!off || st->comp_method != ZIP_CM_STORE || st->size != st->comp_size || off > p->size ||
	    st->size > p->size - off || !(st->valid & ZIP_STAT_CRC))
		return SPP_OK;
	/*
	 * In parts (zlib's crc32 takes a uInt length), each part's file pages
	 * dropped once read: the check leaves the member where it was, out of
	 * the process until a pass reads it
	 */
	for (uint64_t done = 0; done < st->size;) {
		uInt part = st->size - done > CRC_PART ? CRC_PART : (uInt)(st->size - done);

		crc = crc32(crc, p->buf + off + done, part);
		spp_pages_release(p->buf + off + done, part);
		done += part;
	}
	if ((uint32_t)crc != st->crc)
		return spp_error_set(err, SPP_E_FORMAT, "%s: CRC error (its bytes are not those stored)",
				     where);
	*data = p->buf + off;
	return SPP_OK;
}

int spp_zip_member_get(zip_t *za, const struct spp_zip_places *p, zip_uint64_t i,
		       const zip_stat_t *st, const char *file, const char *where,
		       const unsigned char **data, unsigned char **copy, struct spp_error *err)
{
	int rc;

	*copy = NULL;
	if ((rc = in_place(p, i, st, where, data, err)) || *data)
		return rc;
	if ((rc = read_whole(za, i, st, file, where, copy, err)))
		return rc;
	*data = *copy;
	return SPP_OK;
}
