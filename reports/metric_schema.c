/*
 * Whether a rule's metric path can name a field of a report at all: each
 * segment is looked up in the report's JSON Schema (docs/report.schema.json,
 * compiled in as spp_report_schema_json), so that a misspelt metric is a
 * fault of the rules file (exit 2, with the column) and not a rule that
 * fails on every layer of every report. Whether this report has the figure
 * (a static one has no runs) is still decided when the rule is evaluated.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/rules.h"

extern const char spp_report_schema_json[];

/*
 * model.runs[backend/format] is not in the report: spp_gate_model_view()
 * (metric.c) sums it from the layers with these fields.
 */
static const char model_runs_schema[] =
	"{\"items\":{\"properties\":{\"backend\":{},\"format\":{},\"status\":{},\"layers\":{},"
	"\"speedup\":{},\"time_ns\":{\"properties\":{\"median\":{},\"p10\":{},\"p90\":{}}},"
	"\"dense_time_ns\":{\"properties\":{\"median\":{},\"p10\":{},\"p90\":{}}}}}}";

static cJSON *schema, *model_runs; /* parsed once, for the process */

static const cJSON *get(const cJSON *o, const char *key)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/*
 * node, or the node of the report's schema that its "$ref" names (a local
 * pointer, "#/properties/..."; cache_sim's is cache's); NULL when that
 * names nothing.
 */
static const cJSON *deref(const cJSON *node)
{
	const cJSON *ref = get(node, "$ref"), *at = schema;
	const char *p;

	if (!cJSON_IsString(ref) || strncmp(ref->valuestring, "#/", 2) != 0)
		return node;
	for (p = ref->valuestring + 2; at && *p;) {
		size_t len = strcspn(p, "/");
		char key[64];

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		at = get(at, key);
		p += len + (p[len] == '/');
	}
	return at;
}

/* The schema of member name of an object schema node; NULL when it has none. */
static const cJSON *member(const cJSON *node, const char *name)
{
	const cJSON *p = get(get(node, "properties"), name), *more = get(node, "additionalProperties");
	const cJSON *names = get(get(node, "propertyNames"), "enum"), *e;

	if (p)
		return deref(p);
	if (!cJSON_IsObject(more))
		return NULL;
	if (!names)
		return deref(more);
	cJSON_ArrayForEach(e, names)
		if (cJSON_IsString(e) && strcmp(e->valuestring, name) == 0)
			return deref(more);
	return NULL;
}

static const char *const scope_what[] = {"the model block", "the summary", "a layer"};

int spp_metric_path_check(int scope, const struct spp_metric_path *p, struct spp_parse_fault *f)
{
	static const char *const top[] = {"model", "summary", "layers"};
	const cJSON *node;

	if (!schema && !(schema = cJSON_Parse(spp_report_schema_json)))
		return 0; /* out of memory: evaluation says what is missing */
	if (!model_runs && !(model_runs = cJSON_Parse(model_runs_schema)))
		return 0;
	node = member(schema, top[scope]);
	if (scope == SPP_SCOPE_LAYERS)
		node = get(node, "items");
	for (int i = 0; i < p->nseg; i++) {
		const struct spp_metric_seg *s = &p->seg[i];
		const cJSON *next = scope == SPP_SCOPE_MODEL && i == 0 && strcmp(s->name, "runs") == 0
					    ? model_runs
					    : member(node, s->name);

		if (next && s->has_key)
			next = get(next, "items") ? get(next, "items") : member(next, s->key);
		if (!next) {
			struct spp_metric_path part = *p;
			char where[256];

			part.nseg = i + 1;
			spp_metric_path_text(&part, where, sizeof(where));
			return spp_parse_fault_set(f, s->column, "no metric '%s' in %s of a report "
						   "(docs/report.schema.json lists every field)",
						   where, scope_what[scope]);
		}
		node = next;
	}
	return 0;
}

/* The schema, parsed once; NULL when out of memory. */
static const cJSON *report_schema(void)
{
	if (!schema)
		schema = cJSON_Parse(spp_report_schema_json);
	return schema;
}

const cJSON *spp_report_schema_row(int runs)
{
	const cJSON *layer = get(member(report_schema(), "layers"), "items");

	return runs ? get(member(layer, "runs"), "items") : layer;
}

const cJSON *spp_report_schema_member(const cJSON *node, const char *name)
{
	return node ? member(node, name) : NULL;
}
