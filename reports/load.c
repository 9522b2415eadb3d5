/*
 * Reading a saved report back. The check here is the contract the writers
 * rely on: after it, every field they index has the type they expect or is
 * absent/null (which they show as unknown), so a hand-edited or truncated
 * report fails here with one line instead of misrendering.
 */
#include "reports/report.h"
#include "base/infile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A report is a few MiB even for a 300-layer model with runs and curves. */
#define MAX_REPORT_BYTES ((size_t)1 << 30)

static int read_all(const char *path, char **out, size_t *len,
		    struct spp_error *err)
{
	FILE *f = spp_infile_fopen(path, err);
	struct stat st;
	char *buf = NULL;
	size_t size, got;
	int rc;

	*out = NULL;
	if (!f)
		return err ? err->code : SPP_E_IO;
	if (fstat(fileno(f), &st) != 0) {
		rc = spp_error_set(err, SPP_E_IO, "cannot stat '%s': %s", path,
				   strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = spp_error_set(err, SPP_E_IO, "'%s': not a regular file", path);
		goto fail;
	}
	if ((uint64_t)st.st_size > MAX_REPORT_BYTES) {
		rc = spp_error_set(err, SPP_E_FORMAT,
				   "'%s': %lld bytes is too large for a report (limit 1 GiB)",
				   path, (long long)st.st_size);
		goto fail;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %zu bytes",
				   path, size);
		goto fail;
	}
	got = fread(buf, 1, size, f);
	if (ferror(f)) {
		rc = spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path,
				   strerror(errno));
		goto fail;
	}
	/* a file that shrank while we read parses as truncated, which it is */
	buf[got] = '\0';
	fclose(f);
	*out = buf;
	*len = got;
	return SPP_OK;
fail:
	free(buf);
	fclose(f);
	return rc;
}

enum kind { K_OBJECT, K_ARRAY, K_STRING, K_NUMBER, K_NUMBER_OR_NULL, K_STRING_OR_NULL };

static const char *const kind_name[] = {
	"an object", "an array", "a string", "a number", "a number or null",
	"a string or null",
};

static int is_kind(const cJSON *v, enum kind k)
{
	switch (k) {
	case K_OBJECT:
		return cJSON_IsObject(v);
	case K_ARRAY:
		return cJSON_IsArray(v);
	case K_STRING:
		return cJSON_IsString(v);
	case K_NUMBER:
		return cJSON_IsNumber(v);
	case K_NUMBER_OR_NULL:
		return cJSON_IsNumber(v) || cJSON_IsNull(v);
	case K_STRING_OR_NULL:
		return cJSON_IsString(v) || cJSON_IsNull(v);
	}
	return 0;
}

/* Member key of obj must be of kind k; where names the object for the message ("layers[3]: "). */
static int need(const char *path, const char *where, const cJSON *obj,
		const char *key, enum kind k, struct spp_error *err)
{
	if (is_kind(cJSON_GetObjectItemCaseSensitive(obj, key), k))
		return SPP_OK;
	return spp_error_set(err, SPP_E_FORMAT, "'%s': %s\"%s\" missing or not %s",
			     path, where, key, kind_name[k]);
}

/* Like need(), but absence (or null) is fine: the writers show it as unknown. */
static int may(const char *path, const char *where, const cJSON *obj,
	       const char *key, enum kind k, struct spp_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v) || is_kind(v, k))
		return SPP_OK;
	return spp_error_set(err, SPP_E_FORMAT, "'%s': %s\"%s\" is not %s",
			     path, where, key, kind_name[k]);
}

static double run_num(const cJSON *run, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, a);

	v = b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/*
 * The runs' times and the speedups derived from them, one against the
 * other: no time is negative, and a CPU run's speedup is its dense run's
 * median over its own (profiler/run_result.c), so that a gate on speedup
 * cannot pass on a figure its own times deny. A GPU run's baseline is the
 * fastest of its precision, which the report does not name: not checked.
 */
static int check_runs(const char *path, const cJSON *runs, const char *name, struct spp_error *err)
{
	static const char *const times[] = {"median", "p10", "p90"};
	const cJSON *r, *dense = cJSON_GetArrayItem(runs, 0);
	double td = run_num(dense, "time_ns", "median");

	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(dense, "format")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(dense, "format")->valuestring, "dense"))
		td = NAN;
	cJSON_ArrayForEach(r, runs) {
		const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "format"));
		const char *be = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "backend"));
		double t = run_num(r, "time_ns", "median"), s = run_num(r, "speedup", NULL);

		for (size_t k = 0; k < sizeof(times) / sizeof(times[0]); k++)
			if (run_num(r, "time_ns", times[k]) < 0)
				return spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s': run %s has a "
						     "negative time_ns.%s", path, name, fmt ? fmt : "?", times[k]);
		if (be && strcmp(be, "cpu") == 0 && td > 0 && t > 0 && isfinite(s) &&
		    !(fabs(s - td / t) <= 1e-9 * (td / t)))
			return spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s': run %s has speedup "
					     "%.6g, its times give %.6g", path, name, fmt ? fmt : "?", s,
					     td / t);
	}
	return SPP_OK;
}

static int check_layer(const char *path, const cJSON *l, int i,
		       struct spp_error *err)
{
	static const char *const numbers[] = {"m", "k", "n", "numel", "nnz"};
	const char *status;
	static const char *const objects[] = {"pattern", "flops", "storage"};
	const cJSON *shape, *d, *runs;
	char where[48];
	int rc;

	snprintf(where, sizeof(where), "layers[%d]: ", i);
	if (!cJSON_IsObject(l))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': layers[%d] is not an object",
				     path, i);
	if ((rc = need(path, where, l, "name", K_STRING, err)) ||
	    (rc = may(path, where, l, "status", K_STRING, err)) ||
	    (rc = may(path, where, l, "reason", K_STRING, err)))
		return rc;
	/* a layer of a dtype with no zero test has an unknown nnz */
	status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "status"));
	for (size_t j = 0; j < sizeof(numbers) / sizeof(numbers[0]); j++)
		if ((rc = need(path, where, l, numbers[j],
			       status && strcmp(numbers[j], "nnz") == 0 ? K_NUMBER_OR_NULL
								       : K_NUMBER, err)))
			return rc;
	for (size_t j = 0; j < sizeof(objects) / sizeof(objects[0]); j++)
		if ((rc = need(path, where, l, objects[j], K_OBJECT, err)))
			return rc;
	/* null only where numel is 0, which no layer has; tolerated all the same */
	if ((rc = need(path, where, l, "sparsity", K_NUMBER_OR_NULL, err)))
		return rc;
	if ((rc = may(path, where, l, "op", K_STRING, err)) ||
	    (rc = may(path, where, l, "node", K_STRING_OR_NULL, err)) ||
	    (rc = may(path, where, l, "op_type", K_STRING_OR_NULL, err)) ||
	    (rc = may(path, where, l, "dtype", K_STRING, err)) ||
	    (rc = may(path, where, l, "shape", K_ARRAY, err)) ||
	    (rc = may(path, where, l, "runs", K_ARRAY, err)) ||
	    (rc = may(path, where, l, "breakeven", K_OBJECT, err)))
		return rc;
	shape = cJSON_GetObjectItemCaseSensitive(l, "shape");
	cJSON_ArrayForEach(d, (cJSON_IsArray(shape) ? shape : NULL))
		if (!cJSON_IsNumber(d))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': %s\"shape\" holds a non-number", path, where);
	runs = cJSON_GetObjectItemCaseSensitive(l, "runs");
	cJSON_ArrayForEach(d, (cJSON_IsArray(runs) ? runs : NULL))
		if (!cJSON_IsObject(d))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': %s\"runs\" holds a non-object", path, where);
	return check_runs(path, runs, cJSON_GetObjectItemCaseSensitive(l, "name")->valuestring, err);
}

static int check_report(const char *path, const cJSON *r, struct spp_error *err)
{
	const cJSON *schema, *layers, *l, *warnings, *w;
	int rc, i = 0;

	if (!cJSON_IsObject(r))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': not a spprof report (not a JSON object)", path);
	schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
	if (!cJSON_IsString(schema))
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': not a spprof report (no \"schema\" string)", path);
	if (strcmp(schema->valuestring, SPP_REPORT_SCHEMA) != 0)
		return spp_error_set(err, SPP_E_FORMAT,
				     "'%s': not a spprof report (schema is '%.64s', expected '%s')",
				     path, schema->valuestring, SPP_REPORT_SCHEMA);
	if ((rc = need(path, "", r, "model", K_OBJECT, err)) ||
	    (rc = need(path, "", r, "layers", K_ARRAY, err)) ||
	    (rc = may(path, "", r, "tool", K_OBJECT, err)) ||
	    (rc = may(path, "", r, "machine", K_OBJECT, err)) ||
	    (rc = may(path, "", r, "settings", K_OBJECT, err)) ||
	    (rc = may(path, "", r, "summary", K_OBJECT, err)) ||
	    (rc = may(path, "", r, "warnings", K_ARRAY, err)))
		return rc;
	if ((rc = need(path, "model: ", cJSON_GetObjectItemCaseSensitive(r, "model"),
		       "path", K_STRING, err)))
		return rc;
	layers = cJSON_GetObjectItemCaseSensitive(r, "layers");
	cJSON_ArrayForEach(l, layers) {
		if ((rc = check_layer(path, l, i, err)))
			return rc;
		i++;
	}
	warnings = cJSON_GetObjectItemCaseSensitive(r, "warnings");
	i = 0;
	cJSON_ArrayForEach(w, (cJSON_IsArray(warnings) ? warnings : NULL)) {
		/* {"code", "message"}; a plain string in reports before the codes */
		if (!cJSON_IsString(w) &&
		    !(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(w, "code")) &&
		      cJSON_IsString(cJSON_GetObjectItemCaseSensitive(w, "message"))))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': warnings[%d] is neither {\"code\", \"message\"} nor a string",
					     path, i);
		i++;
	}
	return SPP_OK;
}

int spp_report_parse(const char *text, size_t len, const char *path, cJSON **out,
		     struct spp_error *err)
{
	const char *end = NULL;
	cJSON *r;
	int rc;

	*out = NULL;
	r = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
	if (!r) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;

		if (len)
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': not JSON (error near byte %zu)", path, at);
		return spp_error_set(err, SPP_E_FORMAT, "'%s': empty file, not JSON", path);
	}
	/* trailing bytes after the document mean a damaged or concatenated file */
	while (end && (size_t)(end - text) < len &&
	       (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
		end++;
	if (end && (size_t)(end - text) < len)
		rc = spp_error_set(err, SPP_E_FORMAT,
				   "'%s': not JSON (trailing data at byte %zu)", path,
				   (size_t)(end - text));
	else
		rc = check_report(path, r, err);
	if (rc) {
		cJSON_Delete(r);
		return rc;
	}
	*out = r;
	return SPP_OK;
}

int spp_report_load(const char *path, cJSON **out, struct spp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = read_all(path, &text, &len, err);
	if (rc)
		return rc;
	rc = spp_report_parse(text, len, path, out, err);
	free(text);
	return rc;
}
