/* A run's `cache` block: every figure with its source, null when unknown. */
#include "reports/cache.h"
#include "reports/json_values.h"

#include <math.h>

static int add_num(cJSON *o, const char *key, double v)
{
	return spp_json_put(o, key, spp_json_num(v));
}

static int add_str(cJSON *o, const char *key, const char *s)
{
	return spp_json_put(o, key, spp_json_str(s));
}

static cJSON *per_thread(const double *v, int n)
{
	cJSON *a = cJSON_CreateArray();

	for (int t = 0; a && t < n; t++) {
		cJSON *x = spp_json_num(v[t]);

		if (!x) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

cJSON *spp_report_cache(const struct spp_cache_figures *f)
{
	static const struct {
		const char *key;
		enum spp_counter_event e;
	} order[] = {
		{"l1d_accesses", SPP_CEV_L1D_ACCESSES}, {"l1d_misses", SPP_CEV_L1D_MISSES},
		{"l2_accesses", SPP_CEV_L2_ACCESSES}, {"l2_misses", SPP_CEV_L2_MISSES},
		{"llc_accesses", SPP_CEV_LLC_ACCESSES}, {"llc_misses", SPP_CEV_LLC_MISSES},
		{"instructions", SPP_CEV_INSTRUCTIONS}, {"cycles", SPP_CEV_CYCLES},
		{"loads", SPP_CEV_LOADS}, {"stores", SPP_CEV_STORES},
		{"task_clock_ns", SPP_CEV_TASK_CLOCK_NS}, {"page_faults", SPP_CEV_PAGE_FAULTS},
		{"context_switches", SPP_CEV_CONTEXT_SWITCHES},
	};
	cJSON *o, *pt, *a1, *a2;
	int bad = 0;

	if (!f->source[0])
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bad |= add_str(o, "source", f->source);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		bad |= add_num(o, order[i].key, f->v[order[i].e]);
	bad |= add_num(o, "l1d_miss_rate", f->l1d_miss_rate);
	bad |= add_num(o, "l2_miss_rate", f->l2_miss_rate);
	bad |= add_num(o, "llc_miss_rate", f->llc_miss_rate);
	bad |= add_num(o, "dram_bytes", f->dram_bytes);
	bad |= add_str(o, "dram_from", f->dram_from);
	bad |= add_num(o, "dram_gbs", f->dram_gbs);
	bad |= add_num(o, "dram_over_model", f->dram_over_model);
	bad |= add_num(o, "runs", f->runs);
	bad |= add_num(o, "sampled", f->sampled);
	bad |= add_str(o, "geometry", f->geometry);
	bad |= add_str(o, "note", f->note);
	pt = cJSON_CreateObject();
	a1 = per_thread(f->thread_l1d, f->nthreads);
	a2 = per_thread(f->thread_llc, f->nthreads);
	if (!pt || !a1 || !a2) {
		cJSON_Delete(pt), cJSON_Delete(a1), cJSON_Delete(a2);
		bad = 1;
	} else {
		cJSON_AddItemToObject(pt, "l1d_misses", a1);
		cJSON_AddItemToObject(pt, "llc_misses", a2);
		cJSON_AddItemToObject(o, "per_thread", pt);
	}
	if (bad) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
