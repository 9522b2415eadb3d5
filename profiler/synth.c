/*
 * spp_synth_parse_layer() and the layer checks shared with the writer.
 *
 * Spec grammar: NAME=SHAPE:PATTERN:SPARSITY[:DTYPE]. NAME is everything
 * before the last '=' (so a name may hold '=' or ':'); SHAPE is 1 to 4
 * decimal dims joined by 'x'. A rank-1 SHAPE ("D") writes a 1-D tensor
 * (bias, norm weight) and takes only dense or unstructured.
 *
 * For nmN_M the pattern fixes the sparsity at 1 - N/M; SPARSITY must say
 * so to within SPP_SYNTH_NM_TOLERANCE (so "0.67" is fine for nm1_3), and
 * the parsed layer carries the exact 1 - N/M.
 */
#include "profiler/synth.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_text.h"
#include "profiler/synth_internal.h"

#define NM_MAX_M 64

static const enum spp_dtype supported_dtypes[] = {
	SPP_DTYPE_F32, SPP_DTYPE_F16, SPP_DTYPE_BF16, SPP_DTYPE_F64,
	SPP_DTYPE_F8_E4M3, SPP_DTYPE_F8_E5M2,
	SPP_DTYPE_I8, SPP_DTYPE_I16, SPP_DTYPE_I32, SPP_DTYPE_I64,
	SPP_DTYPE_U8, SPP_DTYPE_U16, SPP_DTYPE_U32, SPP_DTYPE_U64,
};

#define SUPPORTED_NAMES                                                        \
	"F32, F16, BF16, F64, F8_E4M3, F8_E5M2, I8, I16, I32, I64, U8, U16, U32, U64"

int spp_synth_dtype_supported(enum spp_dtype t)
{
	for (size_t i = 0; i < sizeof(supported_dtypes) / sizeof(supported_dtypes[0]); i++)
		if (supported_dtypes[i] == t)
			return 1;
	return 0;
}

static double nm_sparsity(int n, int m)
{
	return 1.0 - (double)n / (double)m;
}

int spp_synth_check_layer(const struct spp_synth_layer *l, const char *what,
			  struct spp_error *err)
{
	const size_t name_cap = sizeof(l->name);
	uint64_t numel = 1, nbytes;
	size_t len = strnlen(l->name, name_cap);

	if (len == 0)
		return spp_error_set(err, SPP_E_USAGE, "%s: empty layer name", what);
	if (len == name_cap)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: layer name is longer than %zu bytes", what,
				     name_cap - 1);
	if (!spp_safe_clean(l->name))
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: layer name is not valid UTF-8 or holds control, bidi or invisible characters",
				     what);
	if (strcmp(l->name, "__metadata__") == 0)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: '__metadata__' is reserved by safetensors", what);
	if (l->ndim < 1 || l->ndim > 4)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: rank %d, expected 1 to 4 dims", what, l->ndim);
	for (int d = 0; d < l->ndim; d++) {
		if (l->shape[d] < 1)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: dim %d is %lld, dims must be >= 1", what,
					     d, (long long)l->shape[d]);
		if ((uint64_t)l->shape[d] > (uint64_t)INT64_MAX / numel)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: shape has more than 2^63 elements", what);
		numel *= (uint64_t)l->shape[d];
	}
	if (!spp_synth_dtype_supported(l->dtype))
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: cannot generate dtype '%s' (supported: %s)", what,
				     spp_dtype_name(l->dtype), SUPPORTED_NAMES);
	if (spp_dtype_nbytes(l->dtype, numel, &nbytes) || nbytes > (uint64_t)INT64_MAX)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: %llu elements of %s do not fit in a file", what,
				     (unsigned long long)numel, spp_dtype_name(l->dtype));
	if (!(l->sparsity >= 0.0 && l->sparsity <= 1.0))
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: sparsity %g is outside [0, 1]", what, l->sparsity);
	switch (l->pattern) {
	case SPP_SYNTH_DENSE:
		if (l->sparsity != 0.0)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: pattern 'dense' has no zeros, sparsity must be 0 (not %g)",
					     what, l->sparsity);
		break;
	case SPP_SYNTH_UNSTRUCTURED:
		break;
	case SPP_SYNTH_NM:
		if (l->nm_n < 1 || l->nm_m < l->nm_n || l->nm_m > NM_MAX_M)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: nm%d_%d needs 0 < N <= M <= %d", what,
					     l->nm_n, l->nm_m, NM_MAX_M);
		if (fabs(l->sparsity - nm_sparsity(l->nm_n, l->nm_m)) > SPP_SYNTH_NM_TOLERANCE)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: nm%d_%d keeps %d of every %d, so its sparsity is %.4g, not %g",
					     what, l->nm_n, l->nm_m, l->nm_n, l->nm_m,
					     nm_sparsity(l->nm_n, l->nm_m), l->sparsity);
		break;
	case SPP_SYNTH_BLOCK:
		if (l->block < 1)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: block size %d, must be >= 1", what, l->block);
		break;
	case SPP_SYNTH_CHANNEL:
		break;
	default:
		return spp_error_set(err, SPP_E_USAGE, "%s: unknown pattern %d", what,
				     (int)l->pattern);
	}
	if (l->ndim == 1 && l->pattern != SPP_SYNTH_DENSE &&
	    l->pattern != SPP_SYNTH_UNSTRUCTURED)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: a 1-D tensor takes only 'dense' or 'unstructured'", what);
	return SPP_OK;
}

uint64_t spp_synth_layer_bytes(const struct spp_synth_layer *l)
{
	uint64_t numel = 1, nbytes = 0;

	for (int d = 0; d < l->ndim; d++)
		numel *= (uint64_t)l->shape[d];
	spp_dtype_nbytes(l->dtype, numel, &nbytes);
	return nbytes;
}

/* Shortest of %.15g / %.17g that reads back to the same double. */
static void format_double(double x, char *buf, size_t n)
{
	snprintf(buf, n, "%.15g", x);
	if (strtod(buf, NULL) != x)
		snprintf(buf, n, "%.17g", x);
}

void spp_synth_format_spec(const struct spp_synth_layer *l, char *buf, size_t n)
{
	char shape[128] = "", pattern[32], sparsity[32];
	size_t used = 0;

	for (int d = 0; d < l->ndim && d < 4; d++)
		used += (size_t)snprintf(shape + used, sizeof(shape) - used, "%s%lld",
					 d ? "x" : "", (long long)l->shape[d]);
	switch (l->pattern) {
	case SPP_SYNTH_DENSE:
		snprintf(pattern, sizeof(pattern), "dense");
		break;
	case SPP_SYNTH_UNSTRUCTURED:
		snprintf(pattern, sizeof(pattern), "unstructured");
		break;
	case SPP_SYNTH_NM:
		snprintf(pattern, sizeof(pattern), "nm%d_%d", l->nm_n, l->nm_m);
		break;
	case SPP_SYNTH_BLOCK:
		snprintf(pattern, sizeof(pattern), "block%d", l->block);
		break;
	case SPP_SYNTH_CHANNEL:
		snprintf(pattern, sizeof(pattern), "channel");
		break;
	default:
		snprintf(pattern, sizeof(pattern), "?");
		break;
	}
	format_double(l->sparsity, sparsity, sizeof(sparsity));
	snprintf(buf, n, "%s:%s:%s:%s", shape, pattern, sparsity,
		 spp_dtype_name(l->dtype));
}

/* A decimal integer in [1, INT64_MAX] filling [s, end); -1 otherwise. */
static int parse_dim(const char *s, const char *end, int64_t *out)
{
	int64_t v = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < 1)
		return -1;
	*out = v;
	return 0;
}

/* A small decimal int in [0, 1e6] filling [s, end); -1 otherwise. */
static int parse_small(const char *s, const char *end, int *out)
{
	int64_t v;

	if (s < end && *s == '0' && end - s == 1) {
		*out = 0;
		return 0;
	}
	if (parse_dim(s, end, &v) || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_shape(const char *s, struct spp_synth_layer *out,
		       const char *what, struct spp_error *err)
{
	const char *p = s;
	int nd = 0;

	for (;;) {
		const char *x = strchr(p, 'x');
		const char *end = x ? x : p + strlen(p);

		if (nd == 4)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: shape '%s' has more than 4 dims", what, s);
		if (parse_dim(p, end, &out->shape[nd]))
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: shape '%s': dim '%.*s' is not an integer in [1, 2^63)",
					     what, s, (int)(end - p), p);
		nd++;
		if (!x)
			break;
		p = x + 1;
	}
	out->ndim = nd;
	return SPP_OK;
}

static int parse_pattern(const char *s, struct spp_synth_layer *out,
			 const char *what, struct spp_error *err)
{
	const char *end = s + strlen(s);

	if (strcmp(s, "dense") == 0) {
		out->pattern = SPP_SYNTH_DENSE;
		return SPP_OK;
	}
	if (strcmp(s, "unstructured") == 0) {
		out->pattern = SPP_SYNTH_UNSTRUCTURED;
		return SPP_OK;
	}
	if (strcmp(s, "channel") == 0) {
		out->pattern = SPP_SYNTH_CHANNEL;
		return SPP_OK;
	}
	if (strncmp(s, "nm", 2) == 0) {
		const char *us = strchr(s, '_');

		if (!us || parse_small(s + 2, us, &out->nm_n) ||
		    parse_small(us + 1, end, &out->nm_m))
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: pattern '%s': expected nmN_M, e.g. nm2_4",
					     what, s);
		if (out->nm_n < 1 || out->nm_m < out->nm_n || out->nm_m > NM_MAX_M)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: pattern '%s' needs 0 < N <= M <= %d", what,
					     s, NM_MAX_M);
		out->pattern = SPP_SYNTH_NM;
		return SPP_OK;
	}
	if (strncmp(s, "block", 5) == 0) {
		if (parse_small(s + 5, end, &out->block) || out->block < 1)
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: pattern '%s': expected blockB with B in [1, 1000000]",
					     what, s);
		out->pattern = SPP_SYNTH_BLOCK;
		return SPP_OK;
	}
	return spp_error_set(err, SPP_E_USAGE,
			     "%s: unknown pattern '%s' (dense, unstructured, nmN_M, blockB, channel)",
			     what, s);
}

static int parse_sparsity(const char *s, double *out, const char *what,
			  struct spp_error *err)
{
	char *end = NULL;
	double v;

	/* strtod would also take "inf", "nan" and hex floats */
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' &&
		    *p != 'E' && *p != '+' && *p != '-')
			return spp_error_set(err, SPP_E_USAGE,
					     "%s: sparsity '%s' is not a number", what, s);
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno)
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: sparsity '%s' is not a number", what, s);
	if (!(v >= 0.0 && v <= 1.0))
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: sparsity %s is outside [0, 1]", what, s);
	*out = v;
	return SPP_OK;
}

static int parse_dtype(const char *s, enum spp_dtype *out, const char *what,
		       struct spp_error *err)
{
	char up[32];
	size_t n = strlen(s);

	if (n == 0 || n >= sizeof(up))
		return spp_error_set(err, SPP_E_USAGE, "%s: unknown dtype '%s'", what, s);
	for (size_t i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)s[i]);
	if (spp_dtype_from_name(up, out))
		return spp_error_set(err, SPP_E_USAGE,
				     "%s: unknown dtype '%s' (supported: %s)", what, s,
				     SUPPORTED_NAMES);
	return SPP_OK;
}

int spp_synth_parse_layer(const char *spec, struct spp_synth_layer *out,
			  struct spp_error *err)
{
	struct spp_synth_layer l;
	char what[200];
	char *copy = NULL, *eq, *field[5];
	int nfields = 0, rc;
	size_t name_len;

	memset(&l, 0, sizeof(l));
	l.dtype = SPP_DTYPE_F32;
	snprintf(what, sizeof(what), "layer spec '%s'", spec ? spec : "");
	if (strlen(what) == sizeof(what) - 1)
		memcpy(what + sizeof(what) - 5, "...'", 5);
	if (!spec)
		return spp_error_set(err, SPP_E_USAGE, "%s: empty spec", what);
	copy = strdup(spec);
	if (!copy)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	eq = strrchr(copy, '=');
	if (!eq) {
		rc = spp_error_set(err, SPP_E_USAGE,
				   "%s: expected NAME=SHAPE:PATTERN:SPARSITY[:DTYPE]", what);
		goto out;
	}
	*eq = '\0';
	name_len = strlen(copy);
	if (name_len == 0) {
		rc = spp_error_set(err, SPP_E_USAGE, "%s: empty layer name", what);
		goto out;
	}
	if (name_len >= sizeof(l.name)) {
		rc = spp_error_set(err, SPP_E_USAGE,
				   "%s: layer name is %zu bytes, the limit is %zu", what,
				   name_len, sizeof(l.name) - 1);
		goto out;
	}
	memcpy(l.name, copy, name_len + 1);
	for (char *p = eq + 1;; p++) {
		if (nfields == 5)
			break;
		field[nfields++] = p;
		p = strchr(p, ':');
		if (!p)
			break;
		*p = '\0';
	}
	if (nfields < 3 || nfields > 4) {
		rc = spp_error_set(err, SPP_E_USAGE,
				   "%s: expected NAME=SHAPE:PATTERN:SPARSITY[:DTYPE]", what);
		goto out;
	}
	rc = parse_shape(field[0], &l, what, err);
	if (!rc)
		rc = parse_pattern(field[1], &l, what, err);
	if (!rc)
		rc = parse_sparsity(field[2], &l.sparsity, what, err);
	if (!rc && nfields == 4)
		rc = parse_dtype(field[3], &l.dtype, what, err);
	if (rc)
		goto out;
	rc = spp_synth_check_layer(&l, what, err);
	if (rc)
		goto out;
	/* the pattern, not the typed figure, decides an N:M layer's sparsity */
	if (l.pattern == SPP_SYNTH_NM)
		l.sparsity = nm_sparsity(l.nm_n, l.nm_m);
	*out = l;
out:
	free(copy);
	return rc;
}
