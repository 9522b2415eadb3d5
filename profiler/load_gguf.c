/* GGUF: the parser of profiler/gguf.h and the file loader. */
#include "profiler/gguf.h"
#include "profiler/loaders.h"
#include "base/le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/safetensors.h"

#define MAX_DIM_VALUE ((uint64_t)1 << 62)

/* ggml type ids (ggml.h enum ggml_type); -1 where an id is unused */
static const int ggml_types[] = {
	[0] = SPP_DTYPE_F32, [1] = SPP_DTYPE_F16, [2] = SPP_DTYPE_Q4_0,
	[3] = SPP_DTYPE_Q4_1, [4] = -1, [5] = -1, [6] = SPP_DTYPE_Q5_0,
	[7] = SPP_DTYPE_Q5_1, [8] = SPP_DTYPE_Q8_0, [9] = SPP_DTYPE_Q8_1,
	[10] = SPP_DTYPE_Q2_K, [11] = SPP_DTYPE_Q3_K, [12] = SPP_DTYPE_Q4_K,
	[13] = SPP_DTYPE_Q5_K, [14] = SPP_DTYPE_Q6_K, [15] = SPP_DTYPE_Q8_K,
	[16] = SPP_DTYPE_IQ2_XXS, [17] = SPP_DTYPE_IQ2_XS, [18] = SPP_DTYPE_IQ3_XXS,
	[19] = SPP_DTYPE_IQ1_S, [20] = SPP_DTYPE_IQ4_NL, [21] = SPP_DTYPE_IQ3_S,
	[22] = SPP_DTYPE_IQ2_S, [23] = SPP_DTYPE_IQ4_XS, [24] = SPP_DTYPE_I8,
	[25] = SPP_DTYPE_I16, [26] = SPP_DTYPE_I32, [27] = SPP_DTYPE_I64,
	[28] = SPP_DTYPE_F64, [29] = SPP_DTYPE_IQ1_M, [30] = SPP_DTYPE_BF16,
	[31] = -1, [32] = -1, [33] = -1, [34] = SPP_DTYPE_TQ1_0,
	[35] = SPP_DTYPE_TQ2_0, [36] = -1, [37] = -1, [38] = -1,
	[39] = SPP_DTYPE_MXFP4,
};

int spp_gguf_dtype(uint32_t ggml_type, enum spp_dtype *out)
{
	if (ggml_type >= sizeof(ggml_types) / sizeof(ggml_types[0]) ||
	    ggml_types[ggml_type] < 0)
		return -1;
	*out = (enum spp_dtype)ggml_types[ggml_type];
	return 0;
}

enum { V_U8, V_I8, V_U16, V_I16, V_U32, V_I32, V_F32, V_BOOL, V_STRING,
       V_ARRAY, V_U64, V_I64, V_F64, V_COUNT };

/* bytes of a scalar value type; 0 for string and array */
static const unsigned value_size[V_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

struct reader {
	const unsigned char *b;
	uint64_t size, pos;
	const char *file;
	struct spp_error *err;
};

static int fault(struct reader *r, const char *what)
{
	return spp_error_set(r->err, SPP_E_FORMAT, "'%s': byte %llu: %s", r->file,
			     (unsigned long long)r->pos, what);
}

static int need(struct reader *r, uint64_t n, const char *what)
{
	char msg[160];

	if (n <= r->size - r->pos)
		return SPP_OK;
	snprintf(msg, sizeof(msg), "%s: %llu bytes needed, %llu left in the file", what,
		 (unsigned long long)n, (unsigned long long)(r->size - r->pos));
	return fault(r, msg);
}

static int rd_u32(struct reader *r, uint32_t *v, const char *what)
{
	int rc = need(r, 4, what);

	if (rc)
		return rc;
	*v = (uint32_t)spp_le(r->b + r->pos, 4);
	r->pos += 4;
	return SPP_OK;
}

static int rd_u64(struct reader *r, uint64_t *v, const char *what)
{
	int rc = need(r, 8, what);

	if (rc)
		return rc;
	*v = spp_le(r->b + r->pos, 8);
	r->pos += 8;
	return SPP_OK;
}

/* A string: *s points into the buffer, not terminated. */
static int rd_str(struct reader *r, const char **s, uint64_t *len, uint64_t max,
		  const char *what)
{
	char msg[160];
	int rc = rd_u64(r, len, what);

	if (rc)
		return rc;
	if (*len > max) {
		r->pos -= 8;
		snprintf(msg, sizeof(msg), "%s is %llu bytes long, more than %llu", what,
			 (unsigned long long)*len, (unsigned long long)max);
		return fault(r, msg);
	}
	if ((rc = need(r, *len, what)))
		return rc;
	*s = (const char *)r->b + r->pos;
	r->pos += *len;
	return SPP_OK;
}

/* Skip a value of type t, checking every length against the file. */
static int skip_value(struct reader *r, uint32_t t, int depth)
{
	char msg[96];
	const char *s;
	uint64_t n;
	uint32_t et;
	int rc;

	if (t >= V_COUNT) {
		snprintf(msg, sizeof(msg), "unknown metadata value type %u", t);
		return fault(r, msg);
	}
	if (t == V_STRING)
		return rd_str(r, &s, &n, UINT64_MAX, "metadata string");
	if (t != V_ARRAY) {
		if ((rc = need(r, value_size[t], "metadata value")))
			return rc;
		r->pos += value_size[t];
		return SPP_OK;
	}
	if (depth >= SPP_GGUF_MAX_DEPTH) {
		snprintf(msg, sizeof(msg), "arrays nested more than %d deep", SPP_GGUF_MAX_DEPTH);
		return fault(r, msg);
	}
	if ((rc = rd_u32(r, &et, "array element type")) ||
	    (rc = rd_u64(r, &n, "array length")))
		return rc;
	if (et >= V_COUNT) {
		snprintf(msg, sizeof(msg), "unknown array element type %u", et);
		return fault(r, msg);
	}
	if (value_size[et]) {
		/* a scalar array is one range: no loop over a hostile count */
		if (n > (r->size - r->pos) / value_size[et])
			return need(r, UINT64_MAX, "array elements");
		r->pos += n * value_size[et];
		return SPP_OK;
	}
	/* strings and arrays take at least 8 bytes each, which bounds the loop */
	if (n > (r->size - r->pos) / 8)
		return need(r, UINT64_MAX, "array elements");
	for (uint64_t i = 0; i < n; i++)
		if ((rc = skip_value(r, et, depth + 1)))
			return rc;
	return SPP_OK;
}

static int key_is(const char *s, uint64_t len, const char *want)
{
	return len == strlen(want) && memcmp(s, want, len) == 0;
}

struct span {
	const char *s;
	uint64_t len;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	uint64_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The key/value section: every value checked, the alignment kept. */
static int read_metadata(struct reader *r, uint64_t n_kv, uint64_t *align)
{
	struct span *keys = NULL;
	char msg[SPP_GGUF_MAX_NAME / 16 + 96];
	uint32_t t, a;
	int rc = SPP_OK;

	/* a key/value takes at least 13 bytes: bounds the count before malloc */
	if (n_kv > (r->size - r->pos) / 13)
		return fault(r, "more metadata entries than the file can hold");
	keys = malloc((size_t)(n_kv ? n_kv : 1) * sizeof(*keys));
	if (!keys)
		return spp_error_set(r->err, SPP_E_NOMEM, "'%s': out of memory", r->file);
	for (uint64_t i = 0; i < n_kv; i++) {
		if ((rc = rd_str(r, &keys[i].s, &keys[i].len, SPP_GGUF_MAX_NAME, "metadata key")) ||
		    (rc = rd_u32(r, &t, "metadata value type")))
			goto out;
		if (key_is(keys[i].s, keys[i].len, "general.alignment")) {
			if (t != V_U32) {
				rc = fault(r, "general.alignment is not a u32");
				goto out;
			}
			if ((rc = rd_u32(r, &a, "general.alignment")))
				goto out;
			if (a == 0 || (a & (a - 1))) {
				snprintf(msg, sizeof(msg), "general.alignment %u is not a power of two", a);
				rc = fault(r, msg);
				goto out;
			}
			*align = a;
		} else if ((rc = skip_value(r, t, 0))) {
			goto out;
		}
	}
	qsort(keys, (size_t)n_kv, sizeof(*keys), span_cmp);
	for (uint64_t i = 1; i < n_kv; i++) {
		if (span_cmp(&keys[i - 1], &keys[i]) == 0) {
			snprintf(msg, sizeof(msg), "metadata key '%.*s' appears twice",
				 (int)(keys[i].len > 200 ? 200 : keys[i].len), keys[i].s);
			rc = fault(r, msg);
			goto out;
		}
	}
out:
	free(keys);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spp_tensor *)a)->name, ((const struct spp_tensor *)b)->name);
}

static int offset_cmp(const void *a, const void *b)
{
	const struct spp_tensor *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* One tensor info; offset is relative to the data section until the end. */
static int read_info(struct reader *r, struct spp_tensor *t)
{
	char msg[SPP_GGUF_MAX_NAME / 16 + 160];
	uint64_t ne[SPP_GGUF_MAX_DIMS], len, nbytes;
	const struct spp_dtype_info *d;
	const char *s;
	uint32_t nd, type;
	int rc;

	if ((rc = rd_str(r, &s, &len, SPP_GGUF_MAX_NAME, "tensor name")))
		return rc;
	if (memchr(s, '\0', len))
		return fault(r, "tensor name holds a NUL byte");
	t->name = malloc(len + 1);
	if (!t->name)
		return spp_error_set(r->err, SPP_E_NOMEM, "'%s': out of memory", r->file);
	memcpy(t->name, s, len);
	t->name[len] = '\0';
	if ((rc = rd_u32(r, &nd, "tensor dimension count")))
		return rc;
	if (nd > SPP_GGUF_MAX_DIMS) {
		snprintf(msg, sizeof(msg), "tensor '%.200s': %u dimensions, at most %d",
			 t->name, nd, SPP_GGUF_MAX_DIMS);
		return fault(r, msg);
	}
	t->ndim = (int)nd;
	t->numel = 1;
	for (uint32_t i = 0; i < nd; i++) {
		if ((rc = rd_u64(r, &ne[i], "tensor dimension")))
			return rc;
		if (ne[i] > MAX_DIM_VALUE) {
			snprintf(msg, sizeof(msg), "tensor '%.200s': dimension %u is %llu, more than 2^62",
				 t->name, i, (unsigned long long)ne[i]);
			return fault(r, msg);
		}
		t->shape[nd - 1 - i] = (int64_t)ne[i];
	}
	/* a zero dimension empties the tensor whatever the others multiply to */
	for (uint32_t i = 0; i < nd; i++) {
		if (ne[i] == 0) {
			t->numel = 0;
			break;
		}
		if (t->numel > UINT64_MAX / ne[i]) {
			snprintf(msg, sizeof(msg), "tensor '%.200s': element count overflows 64 bits",
				 t->name);
			return fault(r, msg);
		}
		t->numel *= ne[i];
	}
	if ((rc = rd_u32(r, &type, "tensor type")))
		return rc;
	if (spp_gguf_dtype(type, &t->dtype)) {
		snprintf(msg, sizeof(msg), "tensor '%.200s': unknown ggml type id %u", t->name, type);
		return fault(r, msg);
	}
	d = spp_dtype_info(t->dtype);
	if ((nd ? ne[0] : 1) % (uint64_t)d->block_elems) {
		snprintf(msg, sizeof(msg),
			 "tensor '%.200s': rows of %llu values are not whole %s blocks of %d",
			 t->name, (unsigned long long)(nd ? ne[0] : 1), d->name, d->block_elems);
		return fault(r, msg);
	}
	if (spp_dtype_nbytes(t->dtype, t->numel, &nbytes)) {
		snprintf(msg, sizeof(msg), "tensor '%.200s': byte size overflows 64 bits", t->name);
		return fault(r, msg);
	}
	t->nbytes = nbytes;
	return rd_u64(r, &t->offset, "tensor offset");
}

/* Place every tensor in the data section [start, size), checked. */
static int place(struct reader *r, struct spp_tensor *ts, uint64_t n, uint64_t start,
		 uint64_t align)
{
	uint64_t room = r->size - start;
	struct spp_tensor *byoff;

	for (uint64_t i = 0; i < n; i++) {
		struct spp_tensor *t = &ts[i];

		if (t->offset % align)
			return spp_error_set(r->err, SPP_E_FORMAT,
					     "'%s': tensor '%.200s': offset %llu is not a multiple of the alignment %llu",
					     r->file, t->name, (unsigned long long)t->offset,
					     (unsigned long long)align);
		if (t->offset > room || t->nbytes > room - t->offset)
			return spp_error_set(r->err, SPP_E_FORMAT,
					     "'%s': tensor '%.200s': data [%llu, +%llu) runs past the %llu-byte data section",
					     r->file, t->name, (unsigned long long)t->offset,
					     (unsigned long long)t->nbytes, (unsigned long long)room);
	}
	byoff = malloc((size_t)(n ? n : 1) * sizeof(*byoff));
	if (!byoff)
		return spp_error_set(r->err, SPP_E_NOMEM, "'%s': out of memory", r->file);
	memcpy(byoff, ts, (size_t)n * sizeof(*byoff));
	qsort(byoff, (size_t)n, sizeof(*byoff), offset_cmp);
	for (uint64_t i = 1; i < n; i++) {
		if (byoff[i - 1].offset + byoff[i - 1].nbytes > byoff[i].offset) {
			int rc = spp_error_set(r->err, SPP_E_FORMAT,
					       "'%s': tensors '%.200s' and '%.200s' overlap",
					       r->file, byoff[i - 1].name, byoff[i].name);
			free(byoff);
			return rc;
		}
	}
	free(byoff);
	for (uint64_t i = 0; i < n; i++) {
		ts[i].offset += start;
		ts[i].data = ts[i].nbytes ? r->b + ts[i].offset : NULL;
	}
	return SPP_OK;
}

int spp_gguf_parse(const unsigned char *buf, uint64_t size, const char *display_name,
		   struct spp_tensor **tensors, int *ntensors, struct spp_error *err)
{
	struct reader r = {buf, size, 0, display_name, err};
	struct spp_tensor *ts = NULL;
	uint64_t n_t, n_kv, align = SPP_GGUF_DEFAULT_ALIGNMENT, start, i = 0;
	uint32_t version;
	char msg[64];
	int rc;

	*tensors = NULL;
	*ntensors = 0;
	if ((rc = need(&r, 4, "GGUF magic")))
		return rc;
	if (memcmp(buf, "GGUF", 4) != 0)
		return fault(&r, "not a GGUF file (no \"GGUF\" magic)");
	r.pos = 4;
	if ((rc = rd_u32(&r, &version, "version")))
		return rc;
	if (version != 2 && version != 3) {
		r.pos -= 4;
		snprintf(msg, sizeof(msg), "GGUF version %u, only 2 and 3 are read", version);
		return fault(&r, msg);
	}
	if ((rc = rd_u64(&r, &n_t, "tensor count")) || (rc = rd_u64(&r, &n_kv, "metadata count")))
		return rc;
	if ((rc = read_metadata(&r, n_kv, &align)))
		return rc;
	/* a tensor info takes at least 24 bytes */
	if (n_t > (r.size - r.pos) / 24 || n_t > INT32_MAX)
		return fault(&r, "more tensors than the file can hold");
	ts = calloc((size_t)(n_t ? n_t : 1), sizeof(*ts));
	if (!ts)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", display_name);
	for (i = 0; i < n_t; i++)
		if ((rc = read_info(&r, &ts[i])))
			goto fail;
	start = (r.pos + align - 1) / align * align;
	if (start > size) {
		rc = fault(&r, "the file ends before its aligned data section");
		goto fail;
	}
	if ((rc = place(&r, ts, n_t, start, align)))
		goto fail;
	/* duplicate names, found in a sorted copy so the file order stays */
	{
		struct spp_tensor *sorted = malloc((size_t)(n_t ? n_t : 1) * sizeof(*sorted));

		if (!sorted) {
			rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", display_name);
			goto fail;
		}
		memcpy(sorted, ts, (size_t)n_t * sizeof(*sorted));
		qsort(sorted, (size_t)n_t, sizeof(*sorted), name_cmp);
		for (uint64_t j = 1; j < n_t; j++) {
			if (strcmp(sorted[j - 1].name, sorted[j].name) == 0) {
				rc = spp_error_set(err, SPP_E_FORMAT, "'%s': tensor '%.200s' appears twice",
						   display_name, sorted[j].name);
				break;
			}
		}
		free(sorted);
		if (rc)
			goto fail;
	}
	*tensors = ts;
	*ntensors = (int)n_t;
	return SPP_OK;
fail:
	/* names were allocated up to and including the failing info */
	spp_safetensors_tensors_free(ts, (int)(i < n_t ? i + 1 : n_t));
	return rc;
}

int spp_load_gguf(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m;
	int rc;

	*out = NULL;
	rc = spp_model_open_mapped(path, "gguf", &m, err);
	if (rc)
		return rc;
	rc = spp_gguf_parse(m->files[0].base, m->files[0].size, path, &m->tensors,
			    &m->ntensors, err);
	if (rc)
		goto fail;
	*out = m;
	return SPP_OK;
fail:
	spp_model_destroy(m);
	return rc;
}
