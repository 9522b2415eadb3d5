/* Zip members read whole and checked (zip_member.h). */
#include "profiler/zip_member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* Little-endian integers of the zip format. */
static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* Whether a local header or the central directory starts at pos. */
static int next_header(const unsigned char *buf, uint64_t size, uint64_t pos)
{
	return pos + 4 <= size && (le32(buf + pos) == 0x04034b50u || le32(buf + pos) == 0x02014b50u);
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

	if (at + 30 > size || le32(buf + at) != 0x04034b50u)
		return 0;
	flags = le16(buf + at + 6);
	if (le16(buf + at + 26) != nl || le16(buf + at + 8) != (uint32_t)st->comp_method || (flags & 1))
		return 0;
	data = at + 30 + nl + le16(buf + at + 28);
	if (data > size || st->comp_size > size - data || memcmp(buf + at + 30, name, nl) != 0)
		return 0;
	end = data + st->comp_size;
	if (flags & 8) {
		/* a data descriptor: its signature optional, its sizes 4 or 8 bytes each */
		uint64_t d = end + (end + 4 <= size && le32(buf + end) == 0x08074b50u ? 4 : 0);

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

int spp_zip_member_in_place(const struct spp_zip_places *p, zip_uint64_t i, const zip_stat_t *st,
			    const unsigned char *buf, uint64_t size, const char *where,
			    const unsigned char **data, struct spp_error *err)
{
	uint64_t off = p && i < p->n ? p->off[i] : 0;
	uLong crc = crc32(0L, Z_NULL, 0);

	*data = NULL;
	if (!off || st->comp_method != ZIP_CM_STORE || st->size != st->comp_size || off > size ||
	    st->size > size - off || !(st->valid & ZIP_STAT_CRC))
		return SPP_OK;
	/*
	 * In parts (zlib's crc32 takes a uInt length), each part's file pages
	 * dropped once read: the check leaves the member where it was, out of
	 * the process until a pass reads it
	 */
	for (uint64_t done = 0; done < st->size;) {
		uInt part = st->size - done > CRC_PART ? CRC_PART : (uInt)(st->size - done);

		crc = crc32(crc, buf + off + done, part);
		spp_pages_release(buf + off + done, part);
		done += part;
	}
	if ((uint32_t)crc != st->crc)
		return spp_error_set(err, SPP_E_FORMAT, "%s: CRC error (its bytes are not those stored)",
				     where);
	*data = buf + off;
	return SPP_OK;
}
