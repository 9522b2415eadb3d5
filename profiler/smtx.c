#include "profiler/smtx.h"
#include "base/infile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"

/* Largest .smtx we read whole: DLMC's biggest are a few MB. */
#define MAX_FILE_BYTES ((long)1 << 30)

void spp_smtx_release(struct spp_smtx *s)
{
	if (!s)
		return;
	free(s->row_ptr);
	free(s->col);
	memset(s, 0, sizeof(*s));
}

struct cursor {
	const char *p, *end, *path;
	int line;
};

static void skip_blanks(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

/* A decimal integer in [0, max] on the current line; 0 ok, -1 none there. */
static int read_int(struct cursor *c, int64_t max, int64_t *v)
{
	int64_t x = 0;
	const char *start;

	skip_blanks(c);
	start = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		x = x * 10 + (*c->p - '0');
		if (x > max)
			return -2;
		c->p++;
	}
	if (c->p == start)
		return -1;
	*v = x;
	return 0;
}

/* The end of the current line (blanks allowed before it); 0 ok, -1 not there. */
static int end_line(struct cursor *c)
{
	skip_blanks(c);
	if (c->p < c->end && *c->p == '\n') {
		c->p++;
		c->line++;
		return 0;
	}
	/* a missing newline at the end of the file: what should follow says more */
	return c->p == c->end ? 0 : -1;
}

/* What is at the cursor, for a message. */
static const char *found(const struct cursor *c, char *buf, size_t n)
{
	size_t len = 0;

	if (c->p >= c->end)
		return "the end of the file";
	if (*c->p == '\n')
		return "the end of the line";
	while (c->p + len < c->end && len < 12 && c->p[len] != '\n' && c->p[len] != ' ')
		len++;
	snprintf(buf, n, "'%.*s'", (int)len, c->p);
	return buf;
}

static int read_file(const char *path, char **data, size_t *len, struct spp_error *err)
{
	FILE *f = spp_infile_fopen(path, err);
	long size;

	*data = NULL;
	if (!f)
		return err ? err->code : SPP_E_IO;
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path, strerror(errno));
	}
	if (size > MAX_FILE_BYTES) {
		fclose(f);
		return spp_error_set(err, SPP_E_FORMAT, "'%s': %ld bytes, more than a .smtx of %ld",
				     path, size, MAX_FILE_BYTES);
	}
	*data = malloc((size_t)size + 1);
	if (!*data) {
		fclose(f);
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %ld bytes", path, size);
	}
	if (fread(*data, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(*data);
		*data = NULL;
		return spp_error_set(err, SPP_E_IO, "cannot read '%s'", path);
	}
	fclose(f);
	*len = (size_t)size;
	return SPP_OK;
}

static int parse(struct cursor *c, struct spp_smtx *s, struct spp_error *err)
{
	const int64_t limit = INT32_MAX;
	int64_t hdr[3], v, prev;
	char buf[32];

	for (int i = 0; i < 3; i++) {
		if (i) {
			skip_blanks(c);
			if (c->p >= c->end || *c->p != ',')
				return spp_error_set(err, SPP_E_FORMAT,
						     "'%s': line 1: expected ', ' after %lld, found %s",
						     c->path, (long long)hdr[i - 1], found(c, buf, sizeof(buf)));
			c->p++;
		}
		if (read_int(c, limit, &hdr[i]))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': line 1: expected \"M, K, NNZ\" (integers below 2^31), found %s",
					     c->path, found(c, buf, sizeof(buf)));
	}
	if (end_line(c))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': line 1: expected its end after NNZ, found %s",
				     c->path, found(c, buf, sizeof(buf)));
	s->m = hdr[0];
	s->k = hdr[1];
	s->nnz = hdr[2];
	if (s->m < 1 || s->k < 1)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': line 1: shape %lldx%lld, dims must be >= 1",
				     c->path, (long long)s->m, (long long)s->k);
	if (s->nnz > s->m * s->k)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': line 1: NNZ %lld exceeds M*K = %lld",
				     c->path, (long long)s->nnz, (long long)(s->m * s->k));
	/* each offset and index takes a digit at least: a header claiming more
	 * numbers than the rest of the file holds fails before taking memory */
	if (s->m + 1 + s->nnz > (int64_t)(c->end - c->p))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': line 1: %lld offsets and %lld indices cannot fit in the %lld bytes after it",
				     c->path, (long long)(s->m + 1), (long long)s->nnz,
				     (long long)(c->end - c->p));
	s->row_ptr = malloc((size_t)(s->m + 1) * sizeof(*s->row_ptr));
	s->col = malloc((size_t)(s->nnz ? s->nnz : 1) * sizeof(*s->col));
	if (!s->row_ptr || !s->col)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %lld non-zeros",
				     c->path, (long long)s->nnz);
	prev = 0;
	for (int64_t i = 0; i <= s->m; i++) {
		if (read_int(c, limit, &v))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': line 2: row offset %lld of %lld: expected an integer below 2^31, found %s",
					     c->path, (long long)i, (long long)(s->m + 1),
					     found(c, buf, sizeof(buf)));
		if (i == 0 ? v != 0 : v < prev)
			return spp_error_set(err, SPP_E_FORMAT,
					     i == 0 ? "'%s': line 2: row offset %lld is %lld, must be 0"
						    : "'%s': line 2: row offset %lld is %lld, below the one before",
					     c->path, (long long)i, (long long)v);
		s->row_ptr[i] = (int32_t)v;
		prev = v;
	}
	if (prev != s->nnz)
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': line 2: last row offset %lld, the header says NNZ %lld",
				     c->path, (long long)prev, (long long)s->nnz);
	if (end_line(c))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': line 2: more than the %lld row offsets M+1 (found %s)",
				     c->path, (long long)(s->m + 1), found(c, buf, sizeof(buf)));
	for (int64_t i = 0, e = 0; i < s->m; i++)
		for (int64_t end = s->row_ptr[i + 1]; e < end; e++) {
			if (read_int(c, limit, &v))
				return spp_error_set(err, SPP_E_FORMAT,
						     "'%s': line 3: column index %lld of %lld: expected an integer, found %s",
						     c->path, (long long)e, (long long)s->nnz,
						     found(c, buf, sizeof(buf)));
			if (v >= s->k)
				return spp_error_set(err, SPP_E_FORMAT,
						     "'%s': line 3: column index %lld is %lld, K is %lld",
						     c->path, (long long)e, (long long)v, (long long)s->k);
			if (e > s->row_ptr[i] && v <= s->col[e - 1])
				return spp_error_set(err, SPP_E_FORMAT,
						     "'%s': line 3: row %lld: column %lld after %lld, want ascending",
						     c->path, (long long)i, (long long)v, (long long)s->col[e - 1]);
			s->col[e] = (int32_t)v;
		}
	if (end_line(c))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': line 3: more than the %lld column indices NNZ (found %s)",
				     c->path, (long long)s->nnz, found(c, buf, sizeof(buf)));
	skip_blanks(c);
	while (c->p < c->end && (*c->p == '\n' || *c->p == ' ' || *c->p == '\r' || *c->p == '\t'))
		c->p++;
	if (c->p != c->end)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': text after line 3 (found %s)",
				     c->path, found(c, buf, sizeof(buf)));
	return SPP_OK;
}

int spp_smtx_load(const char *path, struct spp_smtx *out, struct spp_error *err)
{
	char *data = NULL;
	size_t len = 0;
	struct cursor c;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_file(path, &data, &len, err);
	if (rc)
		return rc;
	c = (struct cursor){data, data + len, path, 1};
	rc = parse(&c, out, err);
	if (rc)
		spp_smtx_release(out);
	free(data);
	return rc;
}

int spp_smtx_parse(const char *buf, size_t len, const char *display_name,
		   struct spp_smtx *out, struct spp_error *err)
{
	struct cursor c = {buf, buf + len, display_name, 1};
	int rc;

	memset(out, 0, sizeof(*out));
	rc = parse(&c, out, err);
	if (rc)
		spp_smtx_release(out);
	return rc;
}

float spp_smtx_value(struct spp_rng *r)
{
	uint64_t u = spp_rng_next(r);
	/* 24 bits for the magnitude (below 1 after rounding), bit 0 the sign */
	float mag = (float)(0.05 + 0.95 * ((double)(u >> 40) * 0x1p-24));

	return (u & 1) ? -mag : mag;
}

void spp_smtx_fill_dense(const struct spp_smtx *s, uint64_t seed, float *w)
{
	struct spp_rng r;

	spp_rng_seed(&r, seed);
	memset(w, 0, (size_t)(s->m * s->k) * sizeof(*w));
	for (int64_t i = 0; i < s->m; i++)
		for (int64_t e = s->row_ptr[i]; e < s->row_ptr[i + 1]; e++)
			w[i * s->k + s->col[e]] = spp_smtx_value(&r);
}
