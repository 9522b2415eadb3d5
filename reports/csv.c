/*
 * The CSV report (docs/CSV.md): one row per layer, or per layer x run once
 * a layer has runs. Columns are the layer's JSON names flattened with dots
 * (storage.csr.bytes), found by walking the tree beside the report's
 * schema, so a field added to the JSON (and its schema) appears here with
 * no change to this file, and a field the schema lacks never does: a
 * hostile report cannot make a column per key (the work and the output
 * would grow as rows x keys). The column set is the union over all rows
 * of the schema's fields in first-seen order; a row without a field leaves
 * the cell empty, as does null, and a field that is null in every row has
 * no column. The layer's and the run's status and reason, which share
 * their JSON names, are layer.status / layer.reason and run.status /
 * run.reason.
 */
#include "reports/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>

#include "reports/cells.h"
#include "reports/rules.h"

struct columns {
	char **name;
	int n, cap;
	/* name -> index, open addressing, rebuilt whenever a column comes in */
	int *slot;
	size_t nslot;
};

/* What flattening a row does with each (key, value): collect or place. */
struct sink {
	struct columns *cols;
	char **cells;   /* NULL while collecting column names */
	int oom;
};

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

static int find(const struct columns *c, const char *key)
{
	for (size_t i = c->nslot ? hash(key) & (c->nslot - 1) : 0; c->nslot; i = (i + 1) & (c->nslot - 1)) {
		if (c->slot[i] < 0)
			return -1;
		if (strcmp(c->name[c->slot[i]], key) == 0)
			return c->slot[i];
	}
	return -1;
}

/* The index again after a column came in (every index after it moved). 0 or -1 out of memory. */
static int rehash(struct columns *c)
{
	size_t want = 64;

	while (want < 2 * (size_t)c->n)
		want *= 2;
	if (want != c->nslot) {
		int *grown = realloc(c->slot, want * sizeof(*grown));

		if (!grown)
			return -1;
		c->slot = grown;
		c->nslot = want;
	}
	for (size_t i = 0; i < c->nslot; i++)
		c->slot[i] = -1;
	for (int k = 0; k < c->n; k++) {
		size_t i = hash(c->name[k]) & (c->nslot - 1);

		while (c->slot[i] >= 0)
			i = (i + 1) & (c->nslot - 1);
		c->slot[i] = k;
	}
	return 0;
}

/*
 * Where a new column goes: after its siblings when it has some
 * (storage.nm2_4.reason, first seen on a later layer, still sits beside
 * storage.nm2_4.ratio), else at the end.
 */
static int group_end(const struct columns *c, const char *key)
{
	const char *dot = strrchr(key, '.');
	size_t plen = dot ? (size_t)(dot - key) + 1 : 0;

	for (int i = c->n - 1; plen && i >= 0; i--)
		if (strncmp(c->name[i], key, plen) == 0)
			return i + 1;
	return c->n;
}

static void emit(struct sink *s, const char *key, const char *value)
{
	struct columns *c = s->cols;
	int i = find(c, key), at;
	char *name;

	if (s->cells) {
		/* columns were collected from the same rows, so i >= 0 */
		if (i < 0)
			return;
		free(s->cells[i]);
		s->cells[i] = strdup(value);
		s->oom |= s->cells[i] == NULL;
		return;
	}
	if (i >= 0)
		return;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		char **grown = realloc(c->name, (size_t)cap * sizeof(*grown));

		if (!grown) {
			s->oom = 1;
			return;
		}
		c->name = grown;
		c->cap = cap;
	}
	at = group_end(c, key);
	name = strdup(key);
	if (!name) {
		s->oom = 1;
		return;
	}
	memmove(c->name + at + 1, c->name + at, (size_t)(c->n - at) * sizeof(*c->name));
	c->name[at] = name;
	c->n++;
	s->oom |= rehash(c) != 0;
}

/* A scalar's cell text; 0 for objects and arrays. */
static int scalar_text(const cJSON *v, char *buf, size_t n, const char **out)
{
	if (cJSON_IsString(v)) {
		*out = v->valuestring;
	} else if (cJSON_IsNumber(v)) {
		spp_cell_number(v->valuedouble, buf, n);
		*out = buf;
	} else if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v) ? "true" : "false";
	} else if (cJSON_IsNull(v)) {
		*out = "";
	} else {
		return 0;
	}
	return 1;
}

/*
 * An array of scalars as one cell: a shape joins with 'x' ("4096x4096"),
 * anything else with ';'. Arrays holding objects (curves, runs) have no
 * single-cell form: 0.
 */
static int join_array(const cJSON *arr, const char *sep, char *buf, size_t n)
{
	const cJSON *v;
	struct spp_buf b;
	char num[40];

	spp_buf_init(&b, buf, n);
	cJSON_ArrayForEach(v, arr) {
		const char *t;

		if (!scalar_text(v, num, sizeof(num), &t))
			return 0;
		spp_buf_add(&b, "%s%s", v == arr->child ? "" : sep, t);
	}
	return !b.cut;
}

/*
 * The schema of member name of an object whose schema is node: NULL when
 * the report's schema has no such field. The keys of the two maps keyed
 * by run (breakeven, n_sweep: "cpu/<format>") are formats of this spprof,
 * so that no report can make a column of each key it holds.
 */
static const cJSON *field(const cJSON *node, const char *name)
{
	const cJSON *m = spp_report_schema_member(node, name);
	int peer;

	if (m && !cJSON_GetObjectItemCaseSensitive(node, "properties") &&
	    !cJSON_GetObjectItemCaseSensitive(node, "propertyNames") &&
	    (strncmp(name, "cpu/", 4) != 0 || !spp_format_by_key(name + 4, &peer)))
		return NULL;
	return m;
}

/*
 * The fields of obj (its schema node) as columns under prefix; scope
 * ("layer", "run"), at the top of a row, names the status and reason
 * columns that layer and run share in JSON. Only the fields of the
 * report's schema are columns: the set is fixed, whatever a report holds.
 */
static void flatten(struct sink *s, const cJSON *obj, const cJSON *node, const char *prefix,
		    const char *skip, const char *scope)
{
	const cJSON *v, *m;
	char key[512], buf[1024];

	cJSON_ArrayForEach(v, obj) {
		const char *t;
		int shared = scope && (!strcmp(v->string ? v->string : "", "status") ||
				       !strcmp(v->string ? v->string : "", "reason"));

		if (!v->string || (skip && strcmp(v->string, skip) == 0) || cJSON_IsNull(v) ||
		    !(m = field(node, v->string)))
			continue;
		if ((size_t)snprintf(key, sizeof(key), "%s%s%s", shared ? scope : prefix,
				     *prefix || shared ? "." : "", v->string) >= sizeof(key))
			continue;
		if (cJSON_IsObject(v)) {
			flatten(s, v, m, key, NULL, NULL);
		} else if (cJSON_IsArray(v)) {
			if (cJSON_GetArraySize(v) > 0 &&
			    join_array(v, strcmp(v->string, "shape") == 0 ? "x" : ";",
				       buf, sizeof(buf)))
				emit(s, key, buf);
		} else if (scalar_text(v, buf, sizeof(buf), &t)) {
			emit(s, key, t);
		}
	}
}

static void model_cells(struct sink *s, const cJSON *report)
{
	const char *path = spp_cell_str(report, "model.path");
	const char *hash = spp_cell_str(report, "model.hash.value");

	emit(s, "model.path", path ? path : "");
	emit(s, "model.hash", hash ? hash : "");
}

/* Every row of the report through s: one per layer, or one per run. */
static void each_row(struct sink *s, const cJSON *report,
		     int (*row_done)(struct sink *, void *), void *ctx)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l;

	cJSON_ArrayForEach(l, (cJSON_IsArray(layers) ? layers : NULL)) {
		const cJSON *runs = spp_cell_get(l, "runs"), *run;
		int nruns = cJSON_IsArray(runs) ? cJSON_GetArraySize(runs) : 0;

		if (!cJSON_IsObject(l))
			continue;
		for (int r = 0; r < (nruns ? nruns : 1); r++) {
			run = nruns ? cJSON_GetArrayItem(runs, r) : NULL;
			model_cells(s, report);
			flatten(s, l, spp_report_schema_row(0), "", "runs", "layer");
			if (cJSON_IsObject(run))
				flatten(s, run, spp_report_schema_row(1), "", NULL, "run");
			if (s->oom || (row_done && row_done(s, ctx)))
				return;
		}
	}
}

static void put_line(FILE *f, char *const *cells, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		if (cells[i])
			spp_cell_csv(f, cells[i]);
	}
	fputc('\n', f);
}

static int row_done(struct sink *s, void *ctx)
{
	FILE *f = ctx;

	put_line(f, s->cells, s->cols->n);
	for (int i = 0; i < s->cols->n; i++) {
		free(s->cells[i]);
		s->cells[i] = NULL;
	}
	return ferror(f) != 0;
}

int spp_report_write_csv(const cJSON *report, FILE *f, struct spp_error *err)
{
	struct columns cols = {0};
	struct sink s = {&cols, NULL, 0};
	int rc = SPP_OK;

	/* model columns lead even in a report with no layers */
	model_cells(&s, report);
	each_row(&s, report, NULL, NULL);
	if (!s.oom)
		s.cells = calloc((size_t)cols.n, sizeof(*s.cells));
	if (!s.cells)
		goto done;
	put_line(f, cols.name, cols.n);
	each_row(&s, report, row_done, f);
done:
	if (s.oom || !s.cells)
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory writing CSV");
	else if (ferror(f))
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				   strerror(errno));
	if (s.cells)
		for (int i = 0; i < cols.n; i++)
			free(s.cells[i]);
	free(s.cells);
	for (int i = 0; i < cols.n; i++)
		free(cols.name[i]);
	free(cols.name);
	free(cols.slot);
	return rc;
}
