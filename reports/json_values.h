/*
 * The JSON values every report writer builds the same way (DESIGN: an
 * unknown figure is null, never 0).
 */
#ifndef SPP_REPORTS_JSON_VALUES_H
#define SPP_REPORTS_JSON_VALUES_H

#include <cjson/cJSON.h>

/* v, or null when it is not finite. NULL only when out of memory. */
cJSON *spp_json_num(double v);

/* s, or null when s is NULL or "". NULL only when out of memory. */
cJSON *spp_json_str(const char *s);

/*
 * Add item to object o under key; an item that cannot be added is freed.
 * Returns 0, or -1 when item is NULL (out of memory) or cannot be added.
 */
int spp_json_put(cJSON *o, const char *key, cJSON *item);

/*
 * The integer v holds when it is a number in [lo, hi] (truncated toward
 * zero), else dflt: a report read back never converts NaN or 1e300.
 */
long long spp_json_int(const cJSON *v, long long lo, long long hi, long long dflt);

/*
 * v as JSON text whose numbers read back exactly (cJSON's own printer
 * keeps 15 digits when they read back within an epsilon); NaN and
 * infinities as null. Free with cJSON_free; NULL when out of memory.
 */
char *spp_json_text_exact(const cJSON *v, int formatted);

#endif
