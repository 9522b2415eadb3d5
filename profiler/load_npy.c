/* NumPy .npy and .npz: the parsers of profiler/npy.h and the file loaders. */
#include "profiler/npy.h"
#include "profiler/loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "profiler/zip_member.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_DIM_VALUE ((uint64_t)1 << 62)

struct npy_header {
	enum spp_dtype dtype;
	int itemsize;
	int swap;           /* big-endian: bytes to swap per unit (c8: 4) */
	int fortran;
	int ndim;
	int64_t shape[SPP_MAX_DIMS];
	uint64_t numel;
	uint64_t data_off;  /* bytes before the data */
};

/* descr type codes (after the byte order) */
static const struct {
	const char *code;
	enum spp_dtype dtype;
	int size;
} codes[] = {
	{"b1", SPP_DTYPE_BOOL, 1}, {"i1", SPP_DTYPE_I8, 1},   {"u1", SPP_DTYPE_U8, 1},
	{"i2", SPP_DTYPE_I16, 2},  {"u2", SPP_DTYPE_U16, 2},  {"i4", SPP_DTYPE_I32, 4},
	{"u4", SPP_DTYPE_U32, 4},  {"i8", SPP_DTYPE_I64, 8},  {"u8", SPP_DTYPE_U64, 8},
	{"f2", SPP_DTYPE_F16, 2},  {"f4", SPP_DTYPE_F32, 4},  {"f8", SPP_DTYPE_F64, 8},
	{"c8", SPP_DTYPE_C64, 8},
};

struct cur {
	const char *p, *end;
	const char *where;
	struct spp_error *err;
};

static int bad(struct cur *c, const char *what)
{
	return spp_error_set(c->err, SPP_E_FORMAT, "%s: npy header: %s", c->where, what);
}

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* A quoted Python string without escapes, copied into out (n bytes). */
static int str_lit(struct cur *c, char *out, size_t n)
{
	char q;
	size_t len = 0;

	ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return bad(c, "expected a quoted string");
	q = *c->p++;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\\' || *c->p == '\n' || len + 1 >= n)
			return bad(c, "string too long or with escapes");
		out[len++] = *c->p++;
	}
	if (c->p >= c->end)
		return bad(c, "unterminated string");
	c->p++;
	out[len] = '\0';
	return SPP_OK;
}

static int descr_value(struct cur *c, struct npy_header *h)
{
	char d[16];
	int rc = str_lit(c, d, sizeof(d));

	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (strcmp(d + (d[0] ? 1 : 0), codes[i].code) != 0)
			continue;
		if (d[0] == '|' ? codes[i].size != 1 : !strchr("<>=", d[0]))
			break;
		h->dtype = codes[i].dtype;
		h->itemsize = codes[i].size;
		h->swap = d[0] == '>' && codes[i].size > 1 ? (h->dtype == SPP_DTYPE_C64 ? 4 : h->itemsize) : 0;
		return SPP_OK;
	}
	return spp_error_set(c->err, SPP_E_FORMAT,
			     "%s: npy header: descr '%s' is not one of bool, int, uint, float16/32/64, complex64 with a byte order",
			     c->where, d);
}

static int bool_value(struct cur *c, int *v)
{
	ws(c);
	if (c->end - c->p >= 4 && memcmp(c->p, "True", 4) == 0) {
		c->p += 4;
		*v = 1;
		return SPP_OK;
	}
	if (c->end - c->p >= 5 && memcmp(c->p, "False", 5) == 0) {
		c->p += 5;
		*v = 0;
		return SPP_OK;
	}
	return bad(c, "'fortran_order' is not True or False");
}

static int shape_value(struct cur *c, struct npy_header *h)
{
	int comma = 1; /* whether the last item was followed by a comma */

	if (!eat(c, '('))
		return bad(c, "'shape' is not a tuple");
	h->ndim = 0;
	while (!eat(c, ')')) {
		uint64_t v = 0;
		const char *start;

		if (!comma)
			return bad(c, "expected ',' or ')' in 'shape'");
		if (h->ndim == SPP_MAX_DIMS)
			return bad(c, "'shape' has more than 8 dimensions");
		ws(c);
		start = c->p;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			uint64_t d = (uint64_t)(*c->p++ - '0');

			/* before the step: v * 10 + d would wrap past 2^64 */
			if (v > (MAX_DIM_VALUE - d) / 10)
				return bad(c, "a 'shape' entry is more than 2^62");
			v = v * 10 + d;
		}
		if (c->p == start)
			return bad(c, "'shape' holds a non-integer");
		if (c->p < c->end && *c->p == 'L') /* Python 2 long */
			c->p++;
		h->shape[h->ndim++] = (int64_t)v;
		comma = eat(c, ',');
	}
	/* (3) is an integer in Python, not a tuple */
	if (h->ndim == 1 && !comma)
		return bad(c, "'shape' (n) needs a trailing comma to be a tuple");
	return SPP_OK;
}

/* The dict literal text[0, len): the three keys, each once. */
static int parse_dict(struct cur *c, struct npy_header *h)
{
	int seen = 0, rc;
	char key[32];

	if (!eat(c, '{'))
		return bad(c, "not a dict literal");
	while (!eat(c, '}')) {
		int bit;

		if ((rc = str_lit(c, key, sizeof(key))))
			return rc;
		if (!eat(c, ':'))
			return bad(c, "expected ':' after a key");
		if (strcmp(key, "descr") == 0) {
			bit = 1;
			rc = descr_value(c, h);
		} else if (strcmp(key, "fortran_order") == 0) {
			bit = 2;
			rc = bool_value(c, &h->fortran);
		} else if (strcmp(key, "shape") == 0) {
			bit = 4;
			rc = shape_value(c, h);
		} else {
			return spp_error_set(c->err, SPP_E_FORMAT, "%s: npy header: unknown key '%s'",
					     c->where, key);
		}
		if (rc)
			return rc;
		if (seen & bit)
			return spp_error_set(c->err, SPP_E_FORMAT, "%s: npy header: key '%s' twice",
					     c->where, key);
		seen |= bit;
		if (!eat(c, ',')) {
			if (!eat(c, '}'))
				return bad(c, "expected ',' or '}' after a value");
			break;
		}
	}
	if (seen != 7)
		return bad(c, "'descr', 'fortran_order' and 'shape' are all required");
	ws(c);
	if (c->p >= c->end || *c->p != '\n' || c->p + 1 != c->end)
		return bad(c, "text after the dict, or no '\\n' at the end of the header");
	return SPP_OK;
}

/* The magic, version, length and dict of buf; h->data_off where data starts. */
static int read_header(const unsigned char *buf, uint64_t size, const char *where,
		       struct npy_header *h, struct spp_error *err)
{
	uint64_t hl, lenbytes;
	struct cur c;
	int rc;

	memset(h, 0, sizeof(*h));
	if (size < MAGIC_LEN + 2 || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
		return spp_error_set(err, SPP_E_FORMAT, "%s: not a .npy array (no \\x93NUMPY magic)",
				     where);
	if (buf[6] < 1 || buf[6] > 3 || buf[7] != 0)
		return spp_error_set(err, SPP_E_FORMAT, "%s: npy format version %u.%u, only 1.0, 2.0 and 3.0 are read",
				     where, buf[6], buf[7]);
	lenbytes = buf[6] == 1 ? 2 : 4;
	if (size < MAGIC_LEN + 2 + lenbytes)
		return spp_error_set(err, SPP_E_FORMAT, "%s: npy file ends inside its header length",
				     where);
	hl = buf[8] | (uint64_t)buf[9] << 8;
	if (lenbytes == 4)
		hl |= (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
	h->data_off = MAGIC_LEN + 2 + lenbytes + hl;
	if (hl > size - (MAGIC_LEN + 2 + lenbytes))
		return spp_error_set(err, SPP_E_FORMAT, "%s: npy header of %llu bytes runs past the end (%llu bytes)",
				     where, (unsigned long long)hl, (unsigned long long)size);
	c = (struct cur){(const char *)buf + MAGIC_LEN + 2 + lenbytes,
			 (const char *)buf + h->data_off, where, err};
	if ((rc = parse_dict(&c, h)))
		return rc;
	h->numel = 1;
	for (int d = 0; d < h->ndim; d++) {
		if (h->shape[d] == 0) {
			h->numel = 0;
			break;
		}
	}
	for (int d = 0; h->numel && d < h->ndim; d++) {
		if (h->numel > UINT64_MAX / (uint64_t)h->shape[d] / (uint64_t)h->itemsize)
			return spp_error_set(err, SPP_E_FORMAT, "%s: npy shape overflows 64 bits", where);
		h->numel *= (uint64_t)h->shape[d];
	}
	return SPP_OK;
}

static void swap_unit(unsigned char *p, int n)
{
	for (int i = 0; i < n / 2; i++) {
		unsigned char t = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
}

/*
 * Copy data into C order (out), byte-swapping units as needed. Walks the
 * input in its stored order, the first index fastest for Fortran order.
 */
static void to_c_order(const struct npy_header *h, const unsigned char *in, unsigned char *out)
{
	int64_t stride[SPP_MAX_DIMS], idx[SPP_MAX_DIMS] = {0};
	uint64_t isz = (uint64_t)h->itemsize, off = 0;
	int nd = h->ndim;

	if (!h->fortran || nd < 2) {
		memcpy(out, in, h->numel * isz);
	} else {
		stride[nd - 1] = 1;
		for (int d = nd - 2; d >= 0; d--)
			stride[d] = stride[d + 1] * h->shape[d + 1];
		for (uint64_t e = 0; e < h->numel; e++) {
			memcpy(out + off * isz, in + e * isz, isz);
			for (int d = 0; d < nd; d++) {
				off += (uint64_t)stride[d];
				if (++idx[d] < h->shape[d])
					break;
				off -= (uint64_t)(stride[d] * h->shape[d]);
				idx[d] = 0;
			}
		}
	}
	if (h->swap)
		for (uint64_t b = 0; b < h->numel * isz; b += (uint64_t)h->swap)
			swap_unit(out + b, h->swap);
}

int spp_npy_add(struct spp_model *m, const unsigned char *buf, uint64_t size,
		const char *where, const char *name, int file, uint64_t base_offset,
		struct spp_error *err)
{
	struct npy_header h;
	struct spp_tensor t = {0};
	uint64_t nbytes;
	int rc = read_header(buf, size, where, &h, err);

	if (rc)
		return rc;
	nbytes = h.numel * (uint64_t)h.itemsize;
	if (size - h.data_off != nbytes)
		return spp_error_set(err, SPP_E_FORMAT,
				     "%s: npy header says %llu bytes of data (%llu x %s), the file holds %llu",
				     where, (unsigned long long)nbytes, (unsigned long long)h.numel,
				     spp_dtype_name(h.dtype), (unsigned long long)(size - h.data_off));
	t.dtype = h.dtype;
	t.ndim = h.ndim;
	memcpy(t.shape, h.shape, sizeof(t.shape));
	t.numel = h.numel;
	t.nbytes = nbytes;
	t.offset = base_offset + h.data_off;
	t.file = file;
	t.data = nbytes ? buf + h.data_off : NULL;
	if (nbytes && (h.swap || (h.fortran && h.ndim >= 2))) {
		unsigned char *copy;
		char what[600];

		snprintf(what, sizeof(what), "the C-order copy of '%.400s'", name);
		if ((rc = spp_model_charge(m, nbytes, m->path, what, err)))
			return rc;
		if (!(copy = malloc(nbytes)))
			return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory for %llu bytes",
					     where, (unsigned long long)nbytes);
		to_c_order(&h, buf + h.data_off, copy);
		if ((rc = spp_model_own(m, copy, err)))
			return rc;
		t.data = copy;
	}
	t.name = strdup(name);
	if (!t.name)
		return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory", where);
	return spp_model_add_tensor(m, &t, where, err);
}

/*
 * One member, parsed as .npy: in place in pl's buffer (file `file` of m)
 * when stored, else read whole into memory the model owns.
 */
static int npz_member(struct spp_model *m, zip_t *za, const struct spp_zip_places *pl,
		      zip_uint64_t i, int file, const char *display_name, struct spp_error *err)
{
	zip_stat_t st;
	const unsigned char *data = NULL;
	unsigned char *copy = NULL;
	char where[512], *name = NULL;
	size_t len;
	int rc;

	if ((rc = spp_zip_member_stat(za, i, display_name, pl->size, &st, err)))
		return rc;
	snprintf(where, sizeof(where), "'%s': member '%.400s'", display_name, st.name);
	len = strlen(st.name);
	if (len <= 4 || strcmp(st.name + len - 4, ".npy") != 0)
		return spp_error_set(err, SPP_E_FORMAT, "%s: not a .npy array", where);
	if (!(name = strndup(st.name, len - 4)))
		return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory", where);
	rc = spp_zip_member_get(za, pl, i, &st, m, display_name, where, &data, &copy, err);
	if (!rc && copy)
		rc = spp_model_own(m, copy, err); /* the model's now, even on failure */
	if (!rc)
		rc = spp_npy_add(m, data, st.size, where, name, file,
				 copy ? 0 : (uint64_t)(data - pl->buf), err);
	free(name);
	return rc;
}

static int ptr_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int spp_npz_add(struct spp_model *m, const unsigned char *buf, uint64_t size, int file,
		const char *display_name, struct spp_error *err)
{
	struct spp_zip_places pl = {0};
	zip_t *za;
	zip_int64_t n;
	int first = m->ntensors, rc = SPP_OK;
	char **names = NULL;

	if ((rc = spp_zip_open_buffer(buf, size, display_name, &za, err)))
		return rc;
	n = zip_get_num_entries(za, 0);
	rc = spp_zip_places_find(za, buf, size, &pl, err);
	for (zip_int64_t i = 0; i < n && !rc; i++)
		rc = npz_member(m, za, &pl, (zip_uint64_t)i, file, display_name, err);
	spp_zip_places_free(&pl);
	/* two members of one name (a zip allows it) would be two tensors of one name */
	if (!rc && m->ntensors - first > 1) {
		names = malloc((size_t)(m->ntensors - first) * sizeof(*names));
		if (!names) {
			rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", display_name);
		} else {
			for (int i = first; i < m->ntensors; i++)
				names[i - first] = m->tensors[i].name;
			qsort(names, (size_t)(m->ntensors - first), sizeof(*names), ptr_name_cmp);
			for (int i = 1; i < m->ntensors - first && !rc; i++)
				if (strcmp(names[i - 1], names[i]) == 0)
					rc = spp_error_set(err, SPP_E_FORMAT, "'%s': member '%.400s.npy' appears twice",
							   display_name, names[i]);
			free(names);
		}
	}
	zip_discard(za); /* read-only: nothing to write back */
	return rc;
}

int spp_load_npy(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m;
	const char *base = strrchr(path, '/');
	char where[4200], *name = NULL;
	size_t len;
	int rc = spp_model_open_mapped(path, "npy", &m, err);

	*out = NULL;
	if (rc)
		return rc;
	/* the tensor is named after the file, less ".npy" */
	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 4 && strcmp(base + len - 4, ".npy") == 0)
		len -= 4;
	name = strndup(base, len);
	if (!name) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
		goto out;
	}
	snprintf(where, sizeof(where), "'%s'", path);
	rc = spp_npy_add(m, m->files[0].base, m->files[0].size, where, name, 0, 0, err);
out:
	free(name);
	if (rc)
		spp_model_destroy(m);
	else
		*out = m;
	return rc;
}

int spp_load_npz(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m;
	int rc = spp_model_open_mapped(path, "npz", &m, err);

	*out = NULL;
	if (rc)
		return rc;
	rc = spp_npz_add(m, m->files[0].base, m->files[0].size, 0, path, err);
	if (rc) {
		spp_model_destroy(m);
		return rc;
	}
	*out = m;
	return SPP_OK;
}
