/* Zip members read whole and checked (zip_member.h). */
#include "profiler/zip_member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/le.h"
#include "profiler/model.h"
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

/*
 * The central directory, read here as libzip reads it: the end record
 * (its comment reaching the end of the archive) and, where its fields are
 * saturated, the zip64 end record its locator names. Found only when one
 * end record's signature lies in the tail a comment can span (two could
 * make libzip and this reader take different directories).
 */
struct cdir {
	uint64_t off, size, n;
};

#define EOCD_LEN 22
#define EOCD_TAIL (EOCD_LEN + 0xffffu)

static int find_cdir(const unsigned char *buf, uint64_t size, struct cdir *cd)
{
	uint64_t from = size > EOCD_TAIL ? size - EOCD_TAIL : 0, at = 0, end;
	int seen = 0;

	for (uint64_t p = from; size >= EOCD_LEN && p <= size - EOCD_LEN; p++)
		if (spp_le(buf + p, 4) == 0x06054b50u)
			seen++, at = p;
	if (seen != 1 || at + EOCD_LEN + spp_le(buf + at + 20, 2) != size ||
	    spp_le(buf + at + 4, 2) != 0 || spp_le(buf + at + 6, 2) != 0)
		return 0;
	cd->n = spp_le(buf + at + 10, 2);
	cd->size = spp_le(buf + at + 12, 4);
	cd->off = spp_le(buf + at + 16, 4);
	end = at;
	if (at >= 20 && spp_le(buf + at - 20, 4) == 0x07064b50u) {
		/*
		 * zip64 (torch.save writes it always): the locator (20 bytes)
		 * before the end record names the zip64 end record, whose
		 * figures hold where the end record's are saturated, and must
		 * equal them where they are not
		 */
		uint64_t rec = spp_le(buf + at - 12, 8), n, sz, off;

		if (rec > at - 20 || at - 20 - rec < 56 || spp_le(buf + rec, 4) != 0x06064b50u)
			return 0;
		n = spp_le(buf + rec + 32, 8), sz = spp_le(buf + rec + 40, 8), off = spp_le(buf + rec + 48, 8);
		if ((cd->n != 0xffff && cd->n != n) || (cd->size != 0xffffffffu && cd->size != sz) ||
		    (cd->off != 0xffffffffu && cd->off != off))
			return 0;
		cd->n = n, cd->size = sz, cd->off = off;
		end = rec;
	} else if (cd->n == 0xffff || cd->size == 0xffffffffu || cd->off == 0xffffffffu) {
		return 0;
	}
	/* the directory ends where the end records start: no prefix, no gap */
	return cd->off <= end && cd->size == end - cd->off;
}

/* The zip64 extra field's offset of the local header, where the entry's own is saturated. */
static int zip64_offset(const unsigned char *e, uint64_t elen, int skip, uint64_t *off)
{
	for (uint64_t p = 0; p + 4 <= elen;) {
		uint64_t id = spp_le(e + p, 2), len = spp_le(e + p + 2, 2);

		if (len > elen - p - 4)
			return 0;
		if (id == 1) {
			if ((uint64_t)skip * 8 + 8 > len)
				return 0;
			*off = spp_le(e + p + 4 + (uint64_t)skip * 8, 8);
			return 1;
		}
		p += 4 + len;
	}
	return 0;
}

/*
 * Where member st's data starts, from its central directory entry at *pos
 * (*pos moved past it): the local header the entry names, checked against
 * libzip's entry (name, method, sizes, CRC), as libzip reads it; 0 when
 * anything differs.
 */
static uint64_t entry_data(const unsigned char *buf, uint64_t size, uint64_t cd_end, uint64_t *pos,
			   const char *name, const zip_stat_t *st)
{
	uint64_t at = *pos, nl, el, cl, lho, data;
	size_t len = strlen(name);

	if (at + 46 > cd_end || spp_le(buf + at, 4) != 0x02014b50u)
		return 0;
	nl = spp_le(buf + at + 28, 2), el = spp_le(buf + at + 30, 2), cl = spp_le(buf + at + 32, 2);
	if (46 + nl + el + cl > cd_end - at)
		return 0;
	*pos = at + 46 + nl + el + cl;
	lho = spp_le(buf + at + 42, 4);
	if (lho == 0xffffffffu &&
	    !zip64_offset(buf + at + 46 + nl, el,
			  (spp_le(buf + at + 24, 4) == 0xffffffffu) + (spp_le(buf + at + 20, 4) == 0xffffffffu),
			  &lho))
		return 0;
	if (nl != len || memcmp(buf + at + 46, name, len) != 0 || spp_le(buf + at + 10, 2) != st->comp_method ||
	    !(st->valid & ZIP_STAT_CRC) || spp_le(buf + at + 16, 4) != st->crc)
		return 0;
	/* the local header: its signature, name and method those of the entry, not encrypted */
	if (lho > size || size - lho < 30 || spp_le(buf + lho, 4) != 0x04034b50u ||
	    (spp_le(buf + lho + 6, 2) & 1) || spp_le(buf + lho + 8, 2) != st->comp_method ||
	    spp_le(buf + lho + 26, 2) != len)
		return 0;
	data = lho + 30 + len + spp_le(buf + lho + 28, 2);
	if (data > size || st->comp_size > size - data || memcmp(buf + lho + 30, name, len) != 0)
		return 0;
	return data;
}

int spp_zip_places_find(zip_t *za, const unsigned char *buf, uint64_t size, struct spp_zip_places *p,
			struct spp_error *err)
{
	zip_int64_t n = zip_get_num_entries(za, 0);
	struct cdir cd;
	uint64_t pos;

	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->size = size;
	if (n <= 0 || !find_cdir(buf, size, &cd) || cd.n != (uint64_t)n)
		return SPP_OK;
	if (!(p->off = calloc((size_t)n, sizeof(*p->off))))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	p->n = (zip_uint64_t)n;
	pos = cd.off;
	for (zip_uint64_t i = 0; i < p->n; i++) {
		const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
		zip_stat_t st;

		zip_stat_init(&st);
		if (!name || zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) != 0 ||
		    !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD) ||
		    !(p->off[i] = entry_data(buf, size, cd.off + cd.size, &pos, name, &st)))
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
		       const zip_stat_t *st, struct spp_model *m, const char *file, const char *where,
		       const unsigned char **data, unsigned char **copy, struct spp_error *err)
{
	char what[600];
	int rc;

	*copy = NULL;
	if ((rc = in_place(p, i, st, where, data, err)) || *data)
		return rc;
	snprintf(what, sizeof(what), "member '%.400s' read whole", st->name);
	if ((m && (rc = spp_model_charge(m, st->size, file, what, err))) ||
	    (rc = read_whole(za, i, st, file, where, copy, err)))
		return rc;
	*data = *copy;
	return SPP_OK;
}
