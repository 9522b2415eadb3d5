#include "reports/json_breakeven.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/breakeven.h"
#include "profiler/diagnose.h"

/* How many layers summary.projection.prune_next lists. */
#define PRUNE_NEXT_MAX 5

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

cJSON *spp_report_breakeven(const struct spp_analysis *a, int i)
{
	const struct spp_sweep *sw = layer_sweep(a, i);
	cJSON *o = cJSON_CreateObject();

	for (int r = 0; o && sw && r < sw->nresults; r++) {
		const struct spp_sweep_result *res = &sw->results[r];
		cJSON *e = spp_sweep_result_json(res);
		char key[48];

		snprintf(key, sizeof(key), "%s/%s", res->backend, res->format);
		/* margin: positive when the layer is already past the breakeven */
		if (!e || put(e, "margin", num_or_null(a->stats[i].sparsity - res->breakeven))) {
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
	struct spp_recommendation rec;
	cJSON *o;

	if (!a->runs || a->stats[i].unsupported || spp_recommend_layer(&a->runs[i], &rec))
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o || put(o, "backend", cJSON_CreateString(rec.backend)) ||
	    put(o, "format", cJSON_CreateString(rec.format)) ||
	    put(o, "speedup", num_or_null(rec.speedup)) ||
	    put(o, "reason", cJSON_CreateString(rec.reason))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_report_diagnosis(const struct spp_analysis *a, int i)
{
	struct spp_diagnosis d;
	char text[SPP_DIAG_MAX * 194] = "";
	size_t len = 0;

	spp_diagnose_layer(&a->stats[i], a->runs ? &a->runs[i] : NULL, &d);
	/* one string, so that the CSV keeps one scalar cell per name */
	for (int k = 0; k < d.n && len < sizeof(text); k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", k ? "; " : "", d.line[k]);
	return cJSON_CreateString(text);
}

/* The lowest breakeven of layer i's formats; NAN when none has one. */
static double best_breakeven(const struct spp_analysis *a, int i)
{
	const struct spp_sweep *sw = layer_sweep(a, i);
	double best = NAN;

	for (int r = 0; sw && r < sw->nresults; r++)
		if (!isnan(sw->results[r].breakeven) &&
		    (isnan(best) || sw->results[r].breakeven < best))
			best = sw->results[r].breakeven;
	return best;
}

/* Storage bytes of format key in layer s; the dense bytes for "dense". */
static double format_bytes(const struct spp_layer_static *s, const char *key)
{
	for (int f = 0; f < SPP_ST_COUNT; f++)
		if (strcmp(spp_storage_key((enum spp_storage_fmt)f), key) == 0 &&
		    s->storage[f].applicable)
			return s->storage[f].bytes;
	return NAN;
}

struct candidate {
	int layer;
	double share;
};

static int by_share(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;

	if (p->share != q->share)
		return p->share < q->share ? 1 : -1;
	return p->layer - q->layer;
}

cJSON *spp_report_projection(const struct spp_analysis *a)
{
	struct candidate *cand = NULL;
	double td = 0, tr = 0, bd = 0, br = 0;
	int ncand = 0, nrec = 0;
	cJSON *o = NULL, *arr;

	if (!a->runs)
		return cJSON_CreateNull();
	cand = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*cand));
	if (!cand)
		return NULL;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer_static *s = &a->stats[i];
		struct spp_recommendation rec;
		double be;

		if (s->unsupported || spp_recommend_layer(&a->runs[i], &rec))
			continue;
		nrec++;
		/* the recommended run against the dense baseline of its own backend */
		td += rec.dense_ns;
		tr += rec.time_ns;
		bd += s->storage[SPP_ST_DENSE].bytes;
		br += format_bytes(s, rec.format);
		be = best_breakeven(a, i);
		/* below its breakeven: more pruning would make a format pay */
		if (!isnan(be) && s->sparsity < be)
			cand[ncand++] = (struct candidate){i, a->runs[i].runs[0].time.median};
	}
	o = cJSON_CreateObject();
	if (!o || put(o, "dense_time_ns", num_or_null(nrec ? td : NAN)) ||
	    put(o, "recommended_time_ns", num_or_null(nrec ? tr : NAN)) ||
	    put(o, "speedup", num_or_null(nrec && tr > 0 ? td / tr : NAN)) ||
	    put(o, "dense_bytes", num_or_null(nrec ? bd : NAN)) ||
	    put(o, "recommended_bytes", num_or_null(nrec ? br : NAN)) ||
	    put(o, "ratio", num_or_null(nrec && br > 0 ? bd / br : NAN)) ||
	    !(arr = cJSON_AddArrayToObject(o, "prune_next")))
		goto oom;
	qsort(cand, (size_t)ncand, sizeof(*cand), by_share);
	for (int c = 0; c < ncand && c < PRUNE_NEXT_MAX; c++) {
		int i = cand[c].layer;
		cJSON *e = cJSON_CreateObject();

		if (!e)
			goto oom;
		cJSON_AddItemToArray(arr, e);
		if (put(e, "layer", cJSON_CreateString(a->layers[i].name)) ||
		    put(e, "time_share", num_or_null(td > 0 ? cand[c].share / td : NAN)) ||
		    put(e, "sparsity", num_or_null(a->stats[i].sparsity)) ||
		    put(e, "breakeven", num_or_null(best_breakeven(a, i))))
			goto oom;
	}
	free(cand);
	return o;
oom:
	free(cand);
	cJSON_Delete(o);
	return NULL;
}
