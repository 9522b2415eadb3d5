/*
 * Private to the report builder (json.c, json_layers.c): the helpers that
 * add to a cJSON tree under construction, remembering the first failure,
 * and the builder of one layer's entry.
 */
#ifndef SPP_REPORTS_JSON_BUILD_H
#define SPP_REPORTS_JSON_BUILD_H

#include <cjson/cJSON.h>
#include <math.h>

#include "profiler/analysis.h"

/*
 * Building a tree is a long run of cJSON_Add* calls, each of which can fail
 * only for memory. Rather than test each one, the helpers below remember the
 * first failure and accept a NULL parent, so the build runs to the end and
 * is checked once.
 */
struct build {
	int oom;
};

static inline cJSON *checked(struct build *b, cJSON *item)
{
	if (!item)
		b->oom = 1;
	return item;
}

static inline cJSON *add_obj(struct build *b, cJSON *parent, const char *key)
{
	return parent ? checked(b, cJSON_AddObjectToObject(parent, key)) : NULL;
}

static inline cJSON *add_arr(struct build *b, cJSON *parent, const char *key)
{
	return parent ? checked(b, cJSON_AddArrayToObject(parent, key)) : NULL;
}

static inline void add_num(struct build *b, cJSON *parent, const char *key, double v)
{
	if (parent)
		checked(b, cJSON_AddNumberToObject(parent, key, v));
}

static inline void add_null(struct build *b, cJSON *parent, const char *key)
{
	if (parent)
		checked(b, cJSON_AddNullToObject(parent, key));
}

/* A figure that may be unknown: null when !known. */
static inline void add_num_or_null(struct build *b, cJSON *parent, const char *key,
				   int known, double v)
{
	if (known)
		add_num(b, parent, key, v);
	else
		add_null(b, parent, key);
}

static inline void add_str(struct build *b, cJSON *parent, const char *key,
			   const char *s)
{
	if (!parent)
		return;
	if (s)
		checked(b, cJSON_AddStringToObject(parent, key, s));
	else
		add_null(b, parent, key);
}

static inline void add_bool(struct build *b, cJSON *parent, const char *key, int v)
{
	if (parent)
		checked(b, cJSON_AddBoolToObject(parent, key, v));
}

static inline void push(struct build *b, cJSON *arr, cJSON *item)
{
	if (!checked(b, item))
		return;
	if (!arr) {
		cJSON_Delete(item);
		return;
	}
	cJSON_AddItemToArray(arr, item);
}

/* A figure of a run: NAN is unknown. */
static inline void add_fig(struct build *b, cJSON *o, const char *key, double v)
{
	add_num_or_null(b, o, key, isfinite(v), v);
}

/*
 * parent.best_storage: {format, ratio} of storage format fmt (derive.c's
 * choice), or null when fmt < 0.
 */
static inline void add_storage_choice(struct build *b, cJSON *parent, int fmt, double ratio)
{
	cJSON *o;

	if (fmt < 0) {
		add_null(b, parent, "best_storage");
		return;
	}
	o = add_obj(b, parent, "best_storage");
	add_str(b, o, "format", spp_storage_key((enum spp_storage_fmt)fmt));
	add_fig(b, o, "ratio", ratio);
}

/*
 * Layer i of a's entry of the report: its figures, runs, activations,
 * breakeven, recommendation and diagnosis. NULL when out of memory (b->oom
 * is then set).
 */
cJSON *spp_json_build_layer(struct build *b, const struct spp_analysis *a, int i);

#endif
