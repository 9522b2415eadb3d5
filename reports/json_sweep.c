/* A breakeven sweep as JSON (DESIGN section 5); see reports/report.h. */
#include "reports/report.h"

#include "reports/json_values.h"

/* Append item to array a; -1 (item freed) when it is NULL or cannot be added. */
static int add_item(cJSON *a, cJSON *item)
{
	if (!item)
		return -1;
	if (!cJSON_AddItemToArray(a, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

/* One point of a curve: {XKEY: x, time_ns, dense_time_ns, speedup, speedup_ci_low, _high}. */
static cJSON *point_json(const char *xkey, double x, const struct spp_sweep_point *p)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || spp_json_put(o, xkey, spp_json_num(x)) ||
	    spp_json_put(o, "time_ns", spp_json_num(p->time_ns)) ||
	    spp_json_put(o, "dense_time_ns", spp_json_num(p->dense_time_ns)) ||
	    spp_json_put(o, "speedup", spp_json_num(p->speedup)) ||
	    spp_json_put(o, "speedup_ci_low", spp_json_num(p->speedup_ci_low)) ||
	    spp_json_put(o, "speedup_ci_high", spp_json_num(p->speedup_ci_high))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *curve_json(const struct spp_sweep_result *r)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < r->npoints; i++)
		if (add_item(a, point_json("sparsity", r->curve[i].sparsity, &r->curve[i]))) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

/* r's breakeven onto o: sparsity, breakeven_low, breakeven_high, reason; -1 out of memory. */
static int breakeven_fields(cJSON *o, const struct spp_sweep_result *r)
{
	return spp_json_put(o, "sparsity", spp_json_num(r->breakeven)) ||
	       spp_json_put(o, "breakeven_low", spp_json_num(r->breakeven_low)) ||
	       spp_json_put(o, "breakeven_high", spp_json_num(r->breakeven_high)) ||
	       spp_json_put(o, "reason", spp_json_str(r->reason)) ? -1 : 0;
}

cJSON *spp_sweep_result_json(const struct spp_sweep_result *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || breakeven_fields(o, r) || spp_json_put(o, "curve", curve_json(r))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_sweep_json(const struct spp_sweep *s)
{
	cJSON *root = cJSON_CreateObject(), *shape, *results;

	if (!root || spp_json_put(root, "schema", cJSON_CreateString("spprof.sweep/1")))
		goto fail;
	shape = cJSON_CreateObject();
	if (spp_json_put(root, "shape", shape) || spp_json_put(shape, "m", cJSON_CreateNumber((double)s->m)) ||
	    spp_json_put(shape, "k", cJSON_CreateNumber((double)s->k)) ||
	    spp_json_put(shape, "n", cJSON_CreateNumber((double)s->n)) ||
	    spp_json_put(root, "pattern", cJSON_CreateString(s->pattern)) ||
	    spp_json_put(root, "threads", cJSON_CreateNumber(s->threads)))
		goto fail;
	results = cJSON_CreateArray();
	if (spp_json_put(root, "results", results))
		goto fail;
	for (int i = 0; i < s->nresults; i++) {
		const struct spp_sweep_result *r = &s->results[i];
		cJSON *o = cJSON_CreateObject(), *be;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(results, o);
		be = cJSON_CreateObject();
		if (spp_json_put(o, "backend", cJSON_CreateString(r->backend)) ||
		    spp_json_put(o, "format", cJSON_CreateString(r->format)) || spp_json_put(o, "breakeven", be) ||
		    breakeven_fields(be, r) || spp_json_put(o, "curve", curve_json(r)))
			goto fail;
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

/* One format's points against N. */
static cJSON *ncurve_json(const struct spp_nsweep_result *r)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < r->npoints; i++)
		if (add_item(a, point_json("n", (double)r->n[i], &r->curve[i]))) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

/* Where the speedup passes 1: [{"n": 11.3, "faster": "above"}]. */
static cJSON *crossings_json(const struct spp_nsweep_result *r)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < r->ncross; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || spp_json_put(o, "n", spp_json_num(r->cross[i].n)) ||
		    spp_json_put(o, "faster", cJSON_CreateString(r->cross[i].faster_above ? "above" : "below"))) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *spp_nsweep_result_json(const struct spp_nsweep_result *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || spp_json_put(o, "wins", spp_json_str(r->wins)) ||
	    spp_json_put(o, "crossings", crossings_json(r)) ||
	    spp_json_put(o, "reason", spp_json_str(r->reason)) ||
	    spp_json_put(o, "curve", ncurve_json(r))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_nsweep_layer_json(const struct spp_nsweep *s)
{
	cJSON *o = cJSON_CreateObject();

	for (int i = 0; o && s && i < s->nresults; i++) {
		const struct spp_nsweep_result *r = &s->results[i];
		char key[40];

		snprintf(key, sizeof(key), "%s/%s", r->backend, r->format);
		if (spp_json_put(o, key, spp_nsweep_result_json(r))) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

cJSON *spp_nsweep_json(const struct spp_nsweep *s)
{
	cJSON *root = cJSON_CreateObject(), *shape, *results;

	if (!root || spp_json_put(root, "schema", cJSON_CreateString("spprof.nsweep/1")))
		goto fail;
	shape = cJSON_CreateObject();
	if (spp_json_put(root, "shape", shape) || spp_json_put(shape, "m", cJSON_CreateNumber((double)s->m)) ||
	    spp_json_put(shape, "k", cJSON_CreateNumber((double)s->k)) ||
	    spp_json_put(root, "pattern", cJSON_CreateString(s->pattern)) ||
	    spp_json_put(root, "sparsity", spp_json_num(s->sparsity)) ||
	    spp_json_put(root, "threads", cJSON_CreateNumber(s->threads)))
		goto fail;
	results = cJSON_CreateArray();
	if (spp_json_put(root, "results", results))
		goto fail;
	for (int i = 0; i < s->nresults; i++) {
		const struct spp_nsweep_result *r = &s->results[i];
		cJSON *o = spp_nsweep_result_json(r);

		if (add_item(results, o) ||
		    !cJSON_AddItemToObject(o, "backend", cJSON_CreateString(r->backend)) ||
		    !cJSON_AddItemToObject(o, "format", cJSON_CreateString(r->format)))
			goto fail;
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

/* The cache state every time was taken in, onto j (taken: NULL when out of memory). */
static cJSON *with_cache_state(cJSON *j, const struct spp_run_settings *rs)
{
	if (j && (spp_json_put(j, "cold", cJSON_CreateBool(rs->cold)) ||
		  spp_json_put(j, "cold_method", spp_json_str(rs->cold ? rs->cold_method : NULL)) ||
		  spp_json_put(j, "cache", spp_json_str(rs->cache)) ||
		  spp_json_put(j, "cache_rule", spp_json_str(rs->cache_rule)))) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

cJSON *spp_report_sweep(const struct spp_sweep *s, const struct spp_dense_memo *memo,
			const struct spp_run_settings *rs)
{
	cJSON *j = spp_sweep_json(s);

	/* the baseline every point's dense time comes from */
	if (j && memo->n && spp_json_put(j, "dense", spp_report_dense_choice(&memo->c[0]))) {
		cJSON_Delete(j);
		return NULL;
	}
	return with_cache_state(j, rs);
}

cJSON *spp_report_nsweep(const struct spp_nsweep *s, const struct spp_dense_memo *memo,
			 const struct spp_run_settings *rs)
{
	cJSON *j = spp_nsweep_json(s), *a = NULL;

	/* the dense choice of each N */
	if (j && memo->n && spp_json_put(j, "dense", a = cJSON_CreateArray())) {
		cJSON_Delete(j);
		return NULL;
	}
	for (int i = 0; a && i < memo->n; i++)
		if (add_item(a, spp_report_dense_choice(&memo->c[i]))) {
			cJSON_Delete(j);
			return NULL;
		}
	return with_cache_state(j, rs);
}
