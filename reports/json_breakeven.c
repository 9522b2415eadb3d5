#include "reports/json_breakeven.h"
#include "reports/json_values.h"
#include "reports/report.h"

#include <math.h>
#include <stdio.h>


static const struct spp_sweep *layer_sweep(const struct spp_analysis *a, int i)
{
	if (!a->sweeps || !a->sweep_of || a->sweep_of[i] < 0)
		return NULL;
	return &a->sweeps[a->sweep_of[i]];
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
		if (!e || spp_json_put(e, "margin", spp_json_num(d && d->margin ? d->margin[r] : NAN))) {
			cJSON_Delete(e);
			cJSON_Delete(o);
			return NULL;
		}
		if (spp_json_put(o, key, e)) { /* put freed e */
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
	if (!o || spp_json_put(o, "backend", cJSON_CreateString(d->rec.backend)) ||
	    spp_json_put(o, "format", cJSON_CreateString(d->rec.format)) ||
	    spp_json_put(o, "speedup", spp_json_num(d->rec.speedup)) ||
	    spp_json_put(o, "reason", cJSON_CreateString(d->rec.reason))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_report_diagnosis(const struct spp_analysis *a, int i)
{
	const struct spp_layer_derived *d = derived(a, i);

	return cJSON_CreateString(d && d->diagnosis ? d->diagnosis : "");
}

cJSON *spp_report_projection(const struct spp_analysis *a)
{
	const struct spp_projection *p = &a->projection;
	cJSON *o, *arr;

	if (!p->valid)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o || spp_json_put(o, "dense_time_ns", spp_json_num(p->dense_time_ns)) ||
	    spp_json_put(o, "recommended_time_ns", spp_json_num(p->recommended_time_ns)) ||
	    spp_json_put(o, "speedup", spp_json_num(p->speedup)) ||
	    spp_json_put(o, "dense_bytes", spp_json_num(p->dense_bytes)) ||
	    spp_json_put(o, "recommended_bytes", spp_json_num(p->recommended_bytes)) ||
	    spp_json_put(o, "ratio", spp_json_num(p->ratio)) ||
	    !(arr = cJSON_AddArrayToObject(o, "prune_next")))
		goto oom;
	if (!(arr = cJSON_AddArrayToObject(o, "deploy")))
		goto oom;
	for (int c = 0; c < p->ndeploy; c++) {
		cJSON *e = cJSON_CreateObject();

		if (!e)
			goto oom;
		cJSON_AddItemToArray(arr, e);
		if (spp_json_put(e, "backend", cJSON_CreateString(p->deploy[c].backend)) ||
		    spp_json_put(e, "format", cJSON_CreateString(p->deploy[c].format)) ||
		    spp_json_put(e, "layers", cJSON_CreateNumber(p->deploy[c].layers)))
			goto oom;
	}
	arr = cJSON_GetObjectItemCaseSensitive(o, "prune_next");
	for (int c = 0; c < p->nprune_next; c++) {
		const struct spp_prune_next *n = &p->prune_next[c];
		cJSON *e = cJSON_CreateObject();

		if (!e)
			goto oom;
		cJSON_AddItemToArray(arr, e);
		if (spp_json_put(e, "layer", cJSON_CreateString(a->layers[n->layer].name)) ||
		    spp_json_put(e, "time_share", spp_json_num(n->time_share)) ||
		    spp_json_put(e, "sparsity", spp_json_num(n->sparsity)) ||
		    spp_json_put(e, "breakeven", spp_json_num(n->breakeven)))
			goto oom;
	}
	return o;
oom:
	cJSON_Delete(o);
	return NULL;
}
