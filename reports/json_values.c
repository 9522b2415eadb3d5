/* The shared JSON values; see json_values.h. */
#include "reports/json_values.h"

#include <math.h>

cJSON *spp_json_num(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *spp_json_str(const char *s)
{
	return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int spp_json_put(cJSON *o, const char *key, cJSON *item)
{
	if (!item)
		return -1;
	if (!cJSON_AddItemToObject(o, key, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

long long spp_json_int(const cJSON *v, long long lo, long long hi, long long dflt)
{
	return cJSON_IsNumber(v) && v->valuedouble >= (double)lo && v->valuedouble <= (double)hi
		       ? (long long)v->valuedouble : dflt;
}
