#include "reports/json_breakeven.h"

#include <math.h>
#include <stdio.h>


static const struct spp_sweep *layer_sweep(const struct spp_analysis *a, int i)
{
	if (!a->sweeps || !a->sweep_of || a->sweep_of[i] < 0)
		return NULL;
	return &a->sweeps[a->sweep_of[i]];
}

static cJSON *num_or_null(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* cJSON_AddItemToObject that frees item and reports failure: 0 or -1. */
static int put(cJSON *o, const char *key, cJSON *item)
{
	if (!item)
		return -1;
	if (!cJSON_AddItemToObject(o, key, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

/* Layer i's derived figures; NULL for an unsupported layer or an underived analysis. */
static const struct spp_layer_derived *derived(const struct spp_analysis *a, int i)
{
	return a->derived && !a->stats[i].unsupported ? &a->derived[i] : NULL;
}

cJSON *spp_report_breakeven(const struct spp_analysis *a, int i)
{
	const struct spp_sweep *sw = layer_sweep(a, i);
	const struct spp_layer_derived *d = derived(a, i);
	cJSON *o = cJSON_CreateObject();

	for (int r = 0; o && sw && r < sw->nresults; r++) {
		const struct spp_sweep_result *res = &sw->results[r];
		cJSON *e = spp_sweep_result_json(res);
		char key[48];

		snprintf(key, sizeof(key), "%s/%s", res->backend, res->format);
		/* margin: positive when the layer is already past the breakeven */
		if (!e || put(e, "margin", num_or_null(d && d->margin ? d->margin[r] : NAN))) {
			cJSON_Delete(e);
			cJSON_Delete(o);
			return NULL;
		}
		if (put(o, key, e)) { /* put freed e */
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

cJSON *spp_report_recommendation(const struct spp_analysis *a, int i)
{
	const struct spp_layer_derived *d = derived(a, i);
	cJSON *o;

	if (!d || !d->has_rec)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o || put(o, "backend", cJSON_CreateString(d->rec.backend)) ||
	    put(o, "format", cJSON_CreateString(d->rec.format)) ||
	    put(o, "speedup", num_or_null(d->rec.speedup)) ||
	    put(o, "reason", cJSON_CreateString(d->rec.reason))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_report_diagnosis(const struct spp_analysis *a, int i)
{
	const struct spp_layer_derived *d = derived(a, i);

	return cJSON_CreateString(d ? d->diagnosis : "");
}

cJSON *spp_report_projection(const struct spp_analysis *a)
{
	const struct spp_projection *p = &a->projection;
	cJSON *o, *arr;

	if (!p->valid)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o || put(o, "dense_time_ns", num_or_null(p->dense_time_ns)) ||
	    put(o, "recommended_time_ns", num_or_null(p->recommended_time_ns)) ||
	    put(o, "speedup", num_or_null(p->speedup)) ||
	    put(o, "dense_bytes", num_or_null(p->dense_bytes)) ||
	    put(o, "recommended_bytes", num_or_null(p->recommended_bytes)) ||
	    put(o, "ratio", num_or_null(p->ratio)) ||
	    !(arr = cJSON_AddArrayToObject(o, "prune_next")))
		goto oom;
	for (int c = 0; c < p->nprune_next; c++) {
		const struct spp_prune_next *n = &p->prune_next[c];
		cJSON *e = cJSON_CreateObject();

		if (!e)
			goto oom;
		cJSON_AddItemToArray(arr, e);
		if (put(e, "layer", cJSON_CreateString(a->layers[n->layer].name)) ||
		    put(e, "time_share", num_or_null(n->time_share)) ||
		    put(e, "sparsity", num_or_null(n->sparsity)) ||
		    put(e, "breakeven", num_or_null(n->breakeven)))
			goto oom;
	}
	return o;
oom:
	cJSON_Delete(o);
	return NULL;
}
