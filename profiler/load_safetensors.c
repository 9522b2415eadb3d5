/* A single .safetensors file: header validation and the file loader. */
#include "profiler/safetensors.h"
#include "profiler/loaders.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON numbers are doubles: every integer up to 2^53 is exact, no more. */
#define MAX_EXACT 9007199254740992.0

static const char *json_kind(const cJSON *j)
{
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsObject(j))
		return "an object";
	if (cJSON_IsBool(j))
		return "a boolean";
	if (cJSON_IsNull(j))
		return "null";
	return "not a JSON value";
}

static uint64_t le64(const unsigned char *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

/*
 * Read a shape entry or an offset: an integer in [0, 2^53]. what names the
 * item in the message ("shape[1]"). Returns 0 or SPP_E_FORMAT.
 */
static int json_uint(const cJSON *j, uint64_t *out, const char *file,
		     const char *tensor, const char *what, struct spp_error *err)
{
	double v;

	if (!cJSON_IsNumber(j))
		return spp_error_format(err, file, "tensor '%s': %s is %s, not a non-negative integer",
			     tensor, what, json_kind(j));
	v = j->valuedouble;
	if (v > MAX_EXACT)
		return spp_error_format(err, file, "tensor '%s': %s = %.17g is beyond 2^53",
			     tensor, what, v);
	if (!(v >= 0.0) || v != floor(v))
		return spp_error_format(err, file, "tensor '%s': %s = %.17g is not a non-negative integer",
			     tensor, what, v);
	*out = (uint64_t)v;
	return SPP_OK;
}

static int parse_shape(const cJSON *shape, struct spp_tensor *t, const char *file,
		       struct spp_error *err)
{
	const cJSON *d;
	uint64_t numel = 1, v;
	int has_zero = 0, overflow = 0, rank = 0, rc;
	char what[32];

	if (!cJSON_IsArray(shape))
		return spp_error_format(err, file, "tensor '%s': 'shape' is %s, not an array",
			     t->name, json_kind(shape));
	cJSON_ArrayForEach(d, shape) {
		if (rank == SPP_MAX_DIMS)
			return spp_error_format(err, file, "tensor '%s': rank %d exceeds the limit of %d",
				     t->name, cJSON_GetArraySize(shape), SPP_MAX_DIMS);
		snprintf(what, sizeof(what), "shape[%d]", rank);
		rc = json_uint(d, &v, file, t->name, what, err);
		if (rc)
			return rc;
		t->shape[rank++] = (int64_t)v;
		if (v == 0)
			has_zero = 1;
		else if (numel > UINT64_MAX / v)
			overflow = 1;
		else
			numel *= v;
	}
	/* a 0 anywhere makes the tensor empty, whatever the other dimensions */
	if (has_zero)
		numel = 0;
	else if (overflow)
		return spp_error_format(err, file, "tensor '%s': the element count of the shape overflows 64 bits",
			     t->name);
	t->ndim = rank;
	t->numel = numel;
	return SPP_OK;
}

/* Validate one tensor entry; t->name is set. Fills all but data. */
static int parse_entry(const cJSON *entry, struct spp_tensor *t, uint64_t data_start,
		       const char *file, struct spp_error *err)
{
	const cJSON *c, *dtype = NULL, *shape = NULL, *offs = NULL;
	const struct spp_dtype_info *info;
	uint64_t begin, end, nbytes;
	int rc;

	if (!cJSON_IsObject(entry))
		return spp_error_format(err, file, "tensor '%s': entry is %s, not an object",
			     t->name, json_kind(entry));
	cJSON_ArrayForEach(c, entry) {
		const cJSON **slot = NULL;
		if (strcmp(c->string, "dtype") == 0)
			slot = &dtype;
		else if (strcmp(c->string, "shape") == 0)
			slot = &shape;
		else if (strcmp(c->string, "data_offsets") == 0)
			slot = &offs;
		if (!slot)
			continue; /* unknown keys are allowed */
		if (*slot)
			return spp_error_format(err, file, "tensor '%s': key '%s' appears twice",
				     t->name, c->string);
		*slot = c;
	}
	if (!dtype || !shape || !offs)
		return spp_error_format(err, file, "tensor '%s': missing '%s'", t->name,
			     !dtype ? "dtype" : !shape ? "shape" : "data_offsets");

	if (!cJSON_IsString(dtype))
		return spp_error_format(err, file, "tensor '%s': 'dtype' is %s, not a string",
			     t->name, json_kind(dtype));
	if (spp_dtype_from_name(dtype->valuestring, &t->dtype) ||
	    !spp_dtype_info(t->dtype)->in_safetensors)
		return spp_error_format(err, file, "tensor '%s': unknown dtype '%s'", t->name,
			     dtype->valuestring);
	info = spp_dtype_info(t->dtype);

	rc = parse_shape(shape, t, file, err);
	if (rc)
		return rc;
	if (t->numel > UINT64_MAX / (uint64_t)info->bits)
		return spp_error_format(err, file, "tensor '%s': the byte size of shape x dtype overflows 64 bits",
			     t->name);
	if (spp_dtype_nbytes(t->dtype, t->numel, &nbytes))
		return spp_error_format(err, file, "tensor '%s': %" PRIu64 " elements of %s take %" PRIu64
			     " bits, which do not end on a byte boundary",
			     t->name, t->numel, info->name, t->numel * (uint64_t)info->bits);

	if (!cJSON_IsArray(offs))
		return spp_error_format(err, file, "tensor '%s': 'data_offsets' is %s, not an array of 2 integers",
			     t->name, json_kind(offs));
	if (cJSON_GetArraySize(offs) != 2)
		return spp_error_format(err, file, "tensor '%s': 'data_offsets' has %d entries, not 2",
			     t->name, cJSON_GetArraySize(offs));
	rc = json_uint(offs->child, &begin, file, t->name, "data_offsets[0]", err);
	if (!rc)
		rc = json_uint(offs->child->next, &end, file, t->name, "data_offsets[1]", err);
	if (rc)
		return rc;
	if (end < begin)
		return spp_error_format(err, file, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
			     ") end before they begin", t->name, begin, end);
	if (end - begin != nbytes)
		return spp_error_format(err, file, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
			     ") hold %" PRIu64 " bytes, shape x dtype needs %" PRIu64,
			     t->name, begin, end, end - begin, nbytes);
	t->offset = data_start + begin;
	t->nbytes = nbytes;
	t->file = 0;
	return SPP_OK;
}

static int metadata_check(const cJSON *meta, const char *file, struct spp_error *err)
{
	const cJSON *m;

	if (!cJSON_IsObject(meta))
		return spp_error_format(err, file, "'__metadata__' is %s, not an object",
			     json_kind(meta));
	cJSON_ArrayForEach(m, meta) {
		if (!cJSON_IsString(m))
			return spp_error_format(err, file, "'__metadata__': value of '%s' is %s, not a string",
				     m->string, json_kind(m));
	}
	return SPP_OK;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spp_tensor *)a)->name,
		      ((const struct spp_tensor *)b)->name);
}

int spp_safetensors_tensor_cmp(const void *a, const void *b)
{
	const struct spp_tensor *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->nbytes != y->nbytes)
		return x->nbytes < y->nbytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sorted by offset, the tensors must cover [0, data_size) once, in order. */
static int tiling_check(const struct spp_tensor *ts, int n, uint64_t data_start,
			uint64_t data_size, const char *file, struct spp_error *err)
{
	uint64_t pos = 0;

	for (int i = 0; i < n; i++) {
		uint64_t begin = ts[i].offset - data_start;
		if (begin > pos)
			return spp_error_format(err, file, "tensor '%s' starts at byte %" PRIu64
				     " of the data buffer, expected %" PRIu64 " (gap)",
				     ts[i].name, begin, pos);
		if (begin < pos)
			return spp_error_format(err, file, "tensor '%s' starts at byte %" PRIu64
				     " of the data buffer, inside tensor '%s' which ends at %"
				     PRIu64 " (overlap)", ts[i].name, begin, ts[i - 1].name, pos);
		pos = begin + ts[i].nbytes;
		if (pos > data_size)
			return spp_error_format(err, file, "tensor '%s' ends at byte %" PRIu64
				     " of the data buffer, which holds only %" PRIu64
				     " bytes (file truncated)", ts[i].name, pos, data_size);
	}
	if (pos < data_size)
		return spp_error_format(err, file, "the data buffer holds %" PRIu64 " bytes but the tensors end at byte %"
			     PRIu64 " (%" PRIu64 " trailing bytes)", data_size, pos, data_size - pos);
	return SPP_OK;
}

/* Header length, its bounds, and the bytes around the JSON object. */
static int header_check(const unsigned char *buf, uint64_t size, const char *file,
			uint64_t *hlen, struct spp_error *err)
{
	const unsigned char *nul;
	uint64_t n;

	if (size < 8)
		return spp_error_format(err, file, "truncated: %" PRIu64 " bytes, a safetensors file "
			     "starts with an 8-byte header length", size);
	n = le64(buf);
	if (n > size - 8)
		return spp_error_format(err, file, "header length %" PRIu64 " runs past the end of the file (size %"
			     PRIu64 ")", n, size);
	if (n > SPP_SAFETENSORS_MAX_HEADER)
		return spp_error_format(err, file, "header length %" PRIu64 " exceeds the limit of %" PRIu64
			     " bytes", n, SPP_SAFETENSORS_MAX_HEADER);
	if (n == 0)
		return spp_error_format(err, file, "header length is 0, the header must hold a JSON object");
	if (buf[8] != '{')
		return spp_error_format(err, file, "header is not a JSON object: byte 8 is 0x%02x, not '{'",
			     buf[8]);
	nul = memchr(buf + 8, 0, (size_t)n);
	if (nul)
		return spp_error_format(err, file, "NUL byte in the header at byte %td", nul - buf);
	*hlen = n;
	return SPP_OK;
}

int spp_safetensors_parse(const unsigned char *buf, uint64_t size,
			  const char *file, struct spp_tensor **tensors,
			  int *ntensors, struct spp_error *err)
{
	struct spp_tensor *ts = NULL;
	const cJSON *c, *meta = NULL;
	const char *end = NULL;
	cJSON *root = NULL;
	char *hdr = NULL;
	uint64_t n = 0, data_start;
	int count = 0, filled = 0, rc;

	*tensors = NULL;
	*ntensors = 0;
	rc = header_check(buf, size, file, &n, err);
	if (rc)
		goto out;
	/*
	 * A NUL-terminated copy of the header: cJSON then never reads past it
	 * even if it overruns its length, and only the header pages are read.
	 */
	hdr = malloc((size_t)n + 1);
	if (!hdr) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for a %" PRIu64
				   "-byte header", file, n);
		goto out;
	}
	memcpy(hdr, buf + 8, (size_t)n);
	hdr[n] = '\0';
	root = cJSON_ParseWithLengthOpts(hdr, (size_t)n, &end, 0);
	if (!root) {
		uint64_t at = end && end >= hdr && end <= hdr + n ? (uint64_t)(end - hdr) : 0;
		rc = spp_error_format(err, file, "header is not valid JSON, or nests deeper than %d levels "
			   "(error near byte %" PRIu64 ")", CJSON_NESTING_LIMIT, 8 + at);
		goto out;
	}
	for (const char *p = end; p < hdr + n; p++) {
		if (*p != ' ') {
			rc = spp_error_format(err, file, "header has bytes after its JSON object, at byte %td"
				   " (only spaces may pad it)", 8 + (p - hdr));
			goto out;
		}
	}

	data_start = 8 + n;
	cJSON_ArrayForEach(c, root)
		count += strcmp(c->string, "__metadata__") != 0;
	ts = calloc(count ? (size_t)count : 1, sizeof(*ts));
	if (!ts) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %d tensors",
				   file, count);
		goto out;
	}
	cJSON_ArrayForEach(c, root) {
		if (strcmp(c->string, "__metadata__") == 0) {
			if (meta) {
				rc = spp_error_format(err, file, "'__metadata__' appears twice");
				goto out;
			}
			meta = c;
			rc = metadata_check(c, file, err);
			if (rc)
				goto out;
			continue;
		}
		ts[filled].name = strdup(c->string);
		if (!ts[filled].name) {
			rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", file);
			goto out;
		}
		rc = parse_entry(c, &ts[filled++], data_start, file, err);
		if (rc)
			goto out;
	}

	/* cJSON keeps duplicate keys; sorting by name finds them in O(n log n) */
	qsort(ts, (size_t)count, sizeof(*ts), name_cmp);
	for (int i = 1; i < count; i++) {
		if (strcmp(ts[i - 1].name, ts[i].name) == 0) {
			rc = spp_error_format(err, file, "tensor '%s' appears twice in the header",
				   ts[i].name);
			goto out;
		}
	}
	qsort(ts, (size_t)count, sizeof(*ts), spp_safetensors_tensor_cmp);
	rc = tiling_check(ts, count, data_start, size - data_start, file, err);
	if (rc)
		goto out;
	for (int i = 0; i < count; i++)
		ts[i].data = ts[i].nbytes ? buf + ts[i].offset : NULL;
	*tensors = ts;
	*ntensors = count;
	ts = NULL;
out:
	if (ts)
		spp_safetensors_tensors_free(ts, filled);
	cJSON_Delete(root);
	free(hdr);
	return rc;
}

void spp_safetensors_tensors_free(struct spp_tensor *tensors, int ntensors)
{
	if (!tensors)
		return;
	for (int i = 0; i < ntensors; i++)
		free(tensors[i].name);
	free(tensors);
}

int spp_load_safetensors(const char *path, struct spp_model **out,
			 struct spp_error *err)
{
	struct spp_model *m;
	int rc;

	*out = NULL;
	rc = spp_model_open_mapped(path, "safetensors", &m, err);
	if (rc)
		return rc;
	rc = spp_safetensors_parse(m->files[0].base, m->files[0].size, path,
				   &m->tensors, &m->ntensors, err);
	if (rc)
		goto fail;
	*out = m;
	return SPP_OK;
fail:
	spp_model_destroy(m);
	return rc;
}
