/*
 * Matrix Market .mtx (the parser of profiler/mtx.h) and DLMC .smtx files
 * loaded as one-layer models whose weight is its non-zeros (struct spp_coo),
 * never the dense M x K.
 */
#include "profiler/mtx.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profiler/loaders.h"
#include "base/rng.h"
#include "profiler/smtx.h"

#define MAX_TOKEN 128

struct lines {
	const char *p, *end, *name;
	int64_t line;
	struct spp_error *err;
};

__attribute__((format(printf, 2, 3)))
static int fault(struct lines *l, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return spp_error_set(l->err, SPP_E_FORMAT, "'%s': line %lld: %s", l->name,
			     (long long)l->line, what);
}

/* The next line [*s, *e) without its '\n' or '\r'; 0 at the end of the text. */
static int next_line(struct lines *l, const char **s, const char **e)
{
	const char *nl;

	if (l->p >= l->end)
		return 0;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	*s = l->p;
	*e = nl ? nl : l->end;
	l->p = nl ? nl + 1 : l->end;
	l->line++;
	while (*e > *s && ((*e)[-1] == '\r'))
		(*e)--;
	return 1;
}

/*
 * Split line [s, e) of l into at most max blank-separated tokens; returns
 * the count (max + 1 when there are more), or SPP_E_FORMAT after the fault
 * of a NUL byte (which would end a token early) or a token too long.
 */
static int tokens(struct lines *l, const char *s, const char *e, char tok[][MAX_TOKEN], int max)
{
	const char *nul = memchr(s, '\0', (size_t)(e - s));
	int n = 0;

	if (nul)
		return fault(l, "a NUL byte at column %lld", (long long)(nul - s + 1));
	while (s < e) {
		const char *t;

		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (s == e)
			break;
		t = s;
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		if (n == max)
			return max + 1;
		if (s - t >= MAX_TOKEN)
			return fault(l, "field %d is %lld bytes long, more than %d", n + 1,
				     (long long)(s - t), MAX_TOKEN - 1);
		memcpy(tok[n], t, (size_t)(s - t));
		tok[n][s - t] = '\0';
		n++;
	}
	return n;
}

/* A decimal integer token in [lo, hi]. */
static int int_token(const char *t, int64_t lo, int64_t hi, int64_t *v)
{
	char *end;
	long long x;

	if (!*t || isspace((unsigned char)*t))
		return -1;
	x = strtoll(t, &end, 10);
	if (*end || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

static int banner(struct lines *l, struct spp_mtx *x)
{
	char tok[6][MAX_TOKEN];
	const char *s, *e;
	int n;

	if (!next_line(l, &s, &e))
		return fault(l, "empty file");
	n = tokens(l, s, e, tok, 5);
	if (n < 0)
		return n;
	if (n != 5 || strcmp(tok[0], "%%MatrixMarket") != 0 || strcasecmp(tok[1], "matrix") != 0)
		return fault(l, "expected '%%%%MatrixMarket matrix coordinate <field> <symmetry>'");
	if (strcasecmp(tok[2], "coordinate") != 0)
		return fault(l, "format '%s': only 'coordinate' matrices are read", tok[2]);
	if (strcasecmp(tok[3], "real") == 0)
		x->field = SPP_MTX_REAL;
	else if (strcasecmp(tok[3], "integer") == 0)
		x->field = SPP_MTX_INTEGER;
	else if (strcasecmp(tok[3], "pattern") == 0)
		x->field = SPP_MTX_PATTERN;
	else
		return fault(l, "field '%s': only real, integer and pattern are read", tok[3]);
	if (strcasecmp(tok[4], "general") == 0)
		x->symmetric = 0;
	else if (strcasecmp(tok[4], "symmetric") == 0)
		x->symmetric = 1;
	else
		return fault(l, "symmetry '%s': only general and symmetric are read", tok[4]);
	return SPP_OK;
}

static int size_line(struct lines *l, struct spp_mtx *x)
{
	char tok[4][MAX_TOKEN];
	const char *s, *e;
	int64_t v[3];
	uint64_t most;
	int n;

	/* comment and blank lines come before the size line; a comment is not split */
	do {
		if (!next_line(l, &s, &e))
			return fault(l, "the file ends before the 'M K NNZ' line");
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
	} while (s == e || *s == '%');
	n = tokens(l, s, e, tok, 3);
	if (n < 0)
		return n;
	if (n != 3 || int_token(tok[0], 1, INT32_MAX, &v[0]) ||
	    int_token(tok[1], 1, INT32_MAX, &v[1]) || int_token(tok[2], 0, INT64_MAX, &v[2]))
		return fault(l, "expected 'M K NNZ' (M, K in [1, 2^31), NNZ >= 0)");
	x->m = v[0];
	x->k = v[1];
	x->nnz = v[2];
	if (x->symmetric && x->m != x->k)
		return fault(l, "a symmetric matrix must be square, this one is %lldx%lld",
			     (long long)x->m, (long long)x->k);
	most = x->symmetric ? (uint64_t)x->m * (uint64_t)(x->m + 1) / 2
			    : (uint64_t)x->m * (uint64_t)x->k;
	if ((uint64_t)x->nnz > most)
		return fault(l, "NNZ %lld is more than the %llu entries a %lldx%lld%s matrix holds",
			     (long long)x->nnz, (unsigned long long)most, (long long)x->m,
			     (long long)x->k, x->symmetric ? " symmetric" : "");
	/* an entry line takes 4 bytes at least ("1 1\n") */
	if ((uint64_t)x->nnz > (uint64_t)(l->end - l->p) / 4 + 1)
		return fault(l, "NNZ %lld entries cannot fit in the %lld bytes that follow",
			     (long long)x->nnz, (long long)(l->end - l->p));
	return SPP_OK;
}

static int value_token(struct lines *l, const char *t, enum spp_mtx_field f, double *v)
{
	char *end;

	if (f == SPP_MTX_INTEGER) {
		int64_t i;

		if (int_token(t, INT64_MIN, INT64_MAX, &i))
			return fault(l, "value '%s' is not an integer", t);
		*v = (double)i;
		return SPP_OK;
	}
	*v = strtod(t, &end);
	if (end == t || *end)
		return fault(l, "value '%s' is not a real number", t);
	return SPP_OK;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Entries given twice, found by sorting their (i, j) keys. */
static int duplicates(struct lines *l, const struct spp_mtx *x)
{
	uint64_t *keys = malloc((size_t)(x->nnz ? x->nnz : 1) * sizeof(*keys));
	int rc = SPP_OK;

	if (!keys)
		return spp_error_set(l->err, SPP_E_NOMEM, "'%s': out of memory", l->name);
	for (int64_t e = 0; e < x->nnz; e++)
		keys[e] = (uint64_t)x->row[e] * (uint64_t)x->k + (uint64_t)x->col[e];
	qsort(keys, (size_t)x->nnz, sizeof(*keys), key_cmp);
	for (int64_t e = 1; e < x->nnz; e++) {
		if (keys[e] == keys[e - 1]) {
			rc = spp_error_set(l->err, SPP_E_FORMAT, "'%s': entry (%llu, %llu) is given twice",
					   l->name, (unsigned long long)(keys[e] / (uint64_t)x->k + 1),
					   (unsigned long long)(keys[e] % (uint64_t)x->k + 1));
			break;
		}
	}
	free(keys);
	return rc;
}

static int entries(struct lines *l, struct spp_mtx *x)
{
	char tok[4][MAX_TOKEN];
	int want = x->field == SPP_MTX_PATTERN ? 2 : 3;
	const char *s, *e;

	for (int64_t n = 0; n < x->nnz; n++) {
		int64_t i, j;
		int got;

		if (!next_line(l, &s, &e))
			return fault(l, "the file ends after %lld of %lld entries", (long long)n,
				     (long long)x->nnz);
		got = tokens(l, s, e, tok, 3);
		if (got < 0)
			return got;
		if (got != want)
			return fault(l, "expected 'i j%s', found %d field%s",
				     want == 3 ? " value" : "", got, got == 1 ? "" : "s");
		if (int_token(tok[0], 1, x->m, &i) || int_token(tok[1], 1, x->k, &j))
			return fault(l, "entry (%s, %s) is outside the %lldx%lld matrix", tok[0],
				     tok[1], (long long)x->m, (long long)x->k);
		if (x->symmetric && j > i)
			return fault(l, "entry (%lld, %lld) is above the diagonal of a symmetric matrix",
				     (long long)i, (long long)j);
		x->row[n] = (int32_t)(i - 1);
		x->col[n] = (int32_t)(j - 1);
		if (want == 3 && value_token(l, tok[2], x->field, &x->val[n]))
			return SPP_E_FORMAT;
	}
	while (next_line(l, &s, &e)) {
		int got = tokens(l, s, e, tok, 1);

		if (got < 0)
			return got;
		if (got != 0)
			return fault(l, "text after the %lld entries", (long long)x->nnz);
	}
	return duplicates(l, x);
}

int spp_mtx_parse(const char *buf, size_t len, const char *display_name,
		  struct spp_mtx *out, struct spp_error *err)
{
	struct lines l = {len ? buf : "", (len ? buf : "") + len, display_name, 0, err};
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = banner(&l, out)) || (rc = size_line(&l, out)))
		goto fail;
	n = (size_t)(out->nnz ? out->nnz : 1);
	out->row = malloc(n * sizeof(*out->row));
	out->col = malloc(n * sizeof(*out->col));
	if (out->field != SPP_MTX_PATTERN)
		out->val = malloc(n * sizeof(*out->val));
	if (!out->row || !out->col || (out->field != SPP_MTX_PATTERN && !out->val)) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %lld entries",
				   display_name, (long long)out->nnz);
		goto fail;
	}
	if ((rc = entries(&l, out)))
		goto fail;
	return SPP_OK;
fail:
	spp_mtx_release(out);
	return rc;
}

void spp_mtx_release(struct spp_mtx *x)
{
	if (!x)
		return;
	free(x->row);
	free(x->col);
	free(x->val);
	memset(x, 0, sizeof(*x));
}

/* A value that stays non-zero in float when it is non-zero in double. */
static float keep_nonzero(double v)
{
	if (isnan(v))
		return (float)v;
	if (fabs(v) > FLT_MAX)
		return v > 0 ? INFINITY : -INFINITY;
	if (v != 0 && (float)v == 0)
		return v > 0 ? FLT_TRUE_MIN : -FLT_TRUE_MIN;
	return (float)v;
}

/* One non-zero of a matrix model, before the sort. */
struct entry {
	int32_t row, col;
	float val;
};

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

/*
 * The model's entries from e[0, n) (freed here), sorted by row and column
 * with the zeros dropped, as one owned block. The parsers refuse an entry
 * given twice, so no two share a place; n is bounded by the file's size.
 */
static int coo_build(struct spp_model *m, const char *path, struct entry *e, uint64_t n,
		     const struct spp_coo **out, struct spp_error *err)
{
	struct spp_coo *c;
	int32_t *row, *col;
	float *val;
	uint64_t nz = 0;
	int sorted = 1, rc;

	for (uint64_t i = 1; i < n && sorted; i++)
		sorted = entry_cmp(&e[i - 1], &e[i]) < 0;
	if (!sorted)
		qsort(e, (size_t)n, sizeof(*e), entry_cmp);
	c = malloc(sizeof(*c) + (size_t)n * (2 * sizeof(int32_t) + sizeof(float)));
	if (!c) {
		free(e);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	}
	row = (int32_t *)(c + 1);
	col = row + n;
	val = (float *)(col + n);
	for (uint64_t i = 0; i < n; i++) {
		if (e[i].val == 0)
			continue; /* an explicit zero (either sign) is a zero */
		row[nz] = e[i].row;
		col[nz] = e[i].col;
		val[nz++] = e[i].val;
	}
	free(e);
	*c = (struct spp_coo){nz, row, col, val};
	rc = spp_model_own(m, c, err);
	*out = rc ? NULL : c;
	return rc;
}

/* The one-layer model around the rows x cols matrix c (owned by m). */
static int matrix_model(struct spp_model *m, const char *path, int64_t rows, int64_t cols,
			const struct spp_coo *c, struct spp_error *err)
{
	const char *base = strrchr(path, '/'), *dot;
	struct spp_tensor *t;

	m->tensors = calloc(1, sizeof(*m->tensors));
	if (!m->tensors)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	m->ntensors = 1;
	t = &m->tensors[0];
	/* the layer is named after the file, less its extension */
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	t->name = strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	if (!t->name)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	t->dtype = SPP_DTYPE_F32;
	t->ndim = 2;
	t->shape[0] = rows;
	t->shape[1] = cols;
	t->numel = (uint64_t)rows * (uint64_t)cols;
	t->coo = c;
	return SPP_OK;
}

/* The entries of x as stored, the mirrored ones of a symmetric matrix after each. */
static struct entry *mtx_entries(const struct spp_mtx *x, uint64_t *n)
{
	struct entry *e = malloc((size_t)(x->nnz > 0 ? x->nnz : 1) * (x->symmetric ? 2 : 1) *
				 sizeof(*e));
	struct spp_rng r;

	*n = 0;
	if (!e)
		return NULL;
	spp_rng_seed(&r, SPP_MATRIX_SEED);
	for (int64_t i = 0; i < x->nnz; i++) {
		float v = x->val ? keep_nonzero(x->val[i]) : spp_smtx_value(&r);

		e[(*n)++] = (struct entry){x->row[i], x->col[i], v};
		if (x->symmetric && x->row[i] != x->col[i])
			e[(*n)++] = (struct entry){x->col[i], x->row[i], v};
	}
	return e;
}

int spp_load_mtx(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m = NULL;
	struct spp_mtx x = {0};
	const struct spp_coo *c;
	struct entry *e;
	uint64_t n;
	int rc;

	*out = NULL;
	if ((rc = spp_model_open_mapped(path, "mtx", &m, err)) ||
	    (rc = spp_mtx_parse((const char *)m->files[0].base, (size_t)m->files[0].size, path,
				&x, err)))
		goto fail;
	e = mtx_entries(&x, &n);
	if (!e) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
		goto fail;
	}
	if ((rc = coo_build(m, path, e, n, &c, err)) ||
	    (rc = matrix_model(m, path, x.m, x.k, c, err)))
		goto fail;
	spp_mtx_release(&x);
	*out = m;
	return SPP_OK;
fail:
	spp_mtx_release(&x);
	spp_model_destroy(m);
	return rc;
}

int spp_load_smtx(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m = NULL;
	struct spp_smtx s = {0};
	const struct spp_coo *c;
	struct spp_rng r;
	struct entry *e;
	int rc;

	*out = NULL;
	if ((rc = spp_model_open_mapped(path, "smtx", &m, err)))
		return rc;
	rc = spp_smtx_parse(m->files[0].base ? (const char *)m->files[0].base : "",
			    (size_t)m->files[0].size, path, &s, err);
	if (rc)
		goto fail;
	e = malloc((size_t)(s.nnz > 0 ? s.nnz : 1) * sizeof(*e));
	if (!e) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
		goto fail;
	}
	/* the values spp_smtx_fill_dense() draws, in the same row-major order */
	spp_rng_seed(&r, SPP_MATRIX_SEED);
	for (int64_t i = 0; i < s.m; i++)
		for (int64_t j = s.row_ptr[i]; j < s.row_ptr[i + 1]; j++)
			e[j] = (struct entry){(int32_t)i, s.col[j], spp_smtx_value(&r)};
	if ((rc = coo_build(m, path, e, (uint64_t)s.nnz, &c, err)) ||
	    (rc = matrix_model(m, path, s.m, s.k, c, err)))
		goto fail;
	spp_smtx_release(&s);
	*out = m;
	return SPP_OK;
fail:
	spp_smtx_release(&s);
	spp_model_destroy(m);
	return rc;
}
