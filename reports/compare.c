/*
 * `spprof compare`: the differences between two saved reports as a
 * spprof.compare/1 tree. Layers are matched by name; each side's figures
 * are found by walking the layer (runs become runs[backend/format],
 * breakeven entries breakeven[backend/format]) and kept when they match
 * the list below, so figures that later issues add (cache counters,
 * breakeven, recommendation) are compared as soon as they appear.
 */
#include "reports/gate.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/run_result.h"
#include "reports/cells.h"

/*
 * fnmatch patterns of the compared layer figures (brackets escaped), and
 * the run figures of SPP_RUN_FIGURES flagged SPP_FIG_COMPARE
 * (compared_run_figure).
 */
static const char *const layer_metrics[] = {
	"m", "k", "n", "nnz", "sparsity", "pattern.class", "pattern.nm2_4",
	"flops.theoretical_speedup", "storage.*.bytes",
	"runs\\[*\\].status", "runs\\[*\\].time_ns.median", "runs\\[*\\].cache.*",
	"runs\\[*\\].cache_sim.*",
	"breakeven\\[*\\].sparsity", "breakeven\\[*\\].margin",
	"recommendation.backend", "recommendation.format", "recommendation.speedup",
};

/* Of the model view ("model.") and the summary ("summary."). */
static const char *const model_metrics[] = {
	"model.bytes", "model.params", "model.nnz", "model.sparsity", "model.tensors",
	"model.layers", "model.hash.value", "model.runs\\[*\\].time_ns.median",
	"model.runs\\[*\\].speedup", "summary.gemm_sparsity", "summary.storage.*.bytes",
	"summary.flops.theoretical_speedup",
};

struct names {
	char **v;
	int n, cap;
	int oom;
};

static void names_add(struct names *ns, const char *s)
{
	for (int i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return;
	if (ns->n == ns->cap) {
		int cap = ns->cap ? ns->cap * 2 : 64;
		char **v = realloc(ns->v, (size_t)cap * sizeof(*v));

		if (!v) {
			ns->oom = 1;
			return;
		}
		ns->v = v;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strdup(s))) {
		ns->oom = 1;
		return;
	}
	ns->n++;
}

static void names_free(struct names *ns)
{
	for (int i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

/* runs[backend/format].KEY of a run figure flagged SPP_FIG_COMPARE. */
static int compared_run_figure(const char *path)
{
	const char *end = strncmp(path, "runs[", 5) == 0 ? strstr(path, "].") : NULL;

	for (int i = 0; end && i < spp_run_figure_nrows; i++)
		if ((spp_run_figure_rows[i].flags & SPP_FIG_COMPARE) && strcmp(end + 2, spp_run_figure_rows[i].key) == 0)
			return 1;
	return 0;
}

static int wanted(const char *path, const char *const *list, size_t n)
{
	/* a layer's runs[...] (the model scope's paths start "model." or "summary.") */
	if (compared_run_figure(path))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (fnmatch(list[i], path, 0) == 0)
			return 1;
	return 0;
}

/* Collect the paths of the leaves under o (prefix is its own path) that the list wants. */
static void flatten(const cJSON *o, const char *prefix, const char *const *list, size_t n,
		    struct names *out)
{
	const cJSON *c;
	char path[320];

	cJSON_ArrayForEach(c, o) {
		if (!c->string)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", c->string);
		if (!strcmp(c->string, "runs") && cJSON_IsArray(c)) {
			const cJSON *r;

			cJSON_ArrayForEach(r, c) {
				const char *b = spp_cell_str(r, "backend"), *f = spp_cell_str(r, "format");
				char sub[400];

				if (!b || !f)
					continue;
				snprintf(sub, sizeof(sub), "%s[%s/%s]", path, b, f);
				flatten(r, sub, list, n, out);
			}
		} else if (!strcmp(c->string, "breakeven") && cJSON_IsObject(c)) {
			const cJSON *e;

			cJSON_ArrayForEach(e, c) {
				char sub[400];

				snprintf(sub, sizeof(sub), "%s[%s]", path, e->string);
				flatten(e, sub, list, n, out);
			}
		} else if (cJSON_IsObject(c)) {
			flatten(c, path, list, n, out);
		} else if (!cJSON_IsArray(c) && wanted(path, list, n)) {
			names_add(out, path);
		}
	}
}

static void set_value(cJSON *o, const char *key, const struct spp_metric_value *v, int *oom)
{
	cJSON *x;

	if (v->kind == SPP_METRIC_NUMBER)
		x = cJSON_AddNumberToObject(o, key, v->num);
	else if (v->kind == SPP_METRIC_STRING)
		x = cJSON_AddStringToObject(o, key, v->str);
	else
		x = cJSON_AddNullToObject(o, key);
	if (!x)
		*oom = 1;
}

/*
 * One compared figure: base and new values, delta and relative change when
 * both are numbers, and what kind of change it is. A timed figure whose
 * change is not significant by the noise rule (overlapping 95 % intervals,
 * else inside both runs' p10-p90 spreads; spp_metric_outside_noise) is "noise".
 */
static cJSON *entry(const char *metric, const cJSON *bs, const cJSON *ns,
		    int *nchanged, int *nnoise, int *oom)
{
	struct spp_metric_value a, b;
	struct spp_metric_path p;
	struct spp_parse_fault f;
	const char *change = "same";
	cJSON *o;
	int ha, hb;

	if (spp_metric_path_parse(metric, 1, &p, &f) < 0)
		return NULL; /* a layer key that is not a path: not comparable */
	spp_metric_resolve(bs, &p, &a);
	spp_metric_resolve(ns, &p, &b);
	ha = a.kind == SPP_METRIC_NUMBER || a.kind == SPP_METRIC_STRING;
	hb = b.kind == SPP_METRIC_NUMBER || b.kind == SPP_METRIC_STRING;
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "metric", metric)) {
		cJSON_Delete(o);
		*oom = 1;
		return NULL;
	}
	set_value(o, "base", &a, oom);
	set_value(o, "new", &b, oom);
	if (a.kind == SPP_METRIC_NUMBER && b.kind == SPP_METRIC_NUMBER) {
		cJSON_AddNumberToObject(o, "delta", b.num - a.num);
		if (a.num != 0)
			cJSON_AddNumberToObject(o, "rel_change", (b.num - a.num) / fabs(a.num));
		else
			cJSON_AddNullToObject(o, "rel_change");
		if (a.num != b.num)
			change = a.time_based && !spp_metric_outside_noise(&a, &b) ? "noise" : "changed";
	} else {
		cJSON_AddNullToObject(o, "delta");
		cJSON_AddNullToObject(o, "rel_change");
		if (ha && !hb)
			change = "removed";
		else if (!ha && hb)
			change = "added";
		else if (ha && hb && (a.kind != b.kind || strcmp(a.str, b.str) != 0))
			change = "changed";
	}
	if (!cJSON_AddBoolToObject(o, "time_based", a.time_based || b.time_based) ||
	    !cJSON_AddStringToObject(o, "change", change))
		*oom = 1;
	*nchanged += strcmp(change, "same") != 0 && strcmp(change, "noise") != 0;
	*nnoise += strcmp(change, "noise") == 0;
	return o;
}

/* Compare the figures of two scopes (a layer each, or model view + summary each). */
static cJSON *compare_scope(const cJSON *bs, const cJSON *ns, const char *const *list,
			    size_t nlist, int *nchanged, int *nnoise, int *oom)
{
	struct names paths = {0};
	cJSON *arr = cJSON_CreateArray();

	if (!arr) {
		*oom = 1;
		return NULL;
	}
	flatten(bs, "", list, nlist, &paths);
	flatten(ns, "", list, nlist, &paths);
	*oom |= paths.oom;
	for (int i = 0; i < paths.n; i++) {
		cJSON *e = entry(paths.v[i], bs, ns, nchanged, nnoise, oom);

		if (e)
			cJSON_AddItemToArray(arr, e);
	}
	names_free(&paths);
	return arr;
}

static cJSON *side(const cJSON *r, const char *path)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "report", path);
	cJSON_AddStringToObject(o, "model", spp_cell_str(r, "model.path") ? spp_cell_str(r, "model.path") : "");
	if (spp_cell_str(r, "model.hash.value"))
		cJSON_AddStringToObject(o, "hash", spp_cell_str(r, "model.hash.value"));
	else
		cJSON_AddNullToObject(o, "hash");
	if (spp_cell_str(r, "created"))
		cJSON_AddStringToObject(o, "created", spp_cell_str(r, "created"));
	else
		cJSON_AddNullToObject(o, "created");
	/* what the runs ran on: two machines make the time figures a comparison of machines */
	if (cJSON_IsObject(spp_cell_get(r, "machine"))) {
		char label[400];

		spp_cell_machine_label(spp_cell_get(r, "machine"), label, sizeof(label));
		cJSON_AddStringToObject(o, "machine", label);
	} else {
		cJSON_AddNullToObject(o, "machine");
	}
	return o;
}

static cJSON *layer_entry(const char *name, const char *status)
{
	cJSON *o = cJSON_CreateObject();

	if (o && (!cJSON_AddStringToObject(o, "name", name) ||
		  !cJSON_AddStringToObject(o, "status", status))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_compare_build(const cJSON *base, const char *base_path,
			 const cJSON *next, const char *next_path,
			 struct spp_error *err)
{
	cJSON *root = cJSON_CreateObject(), *bview = spp_gate_model_view(base);
	cJSON *nview = spp_gate_model_view(next), *model = NULL, *layers, *added, *removed;
	cJSON *bscope = cJSON_CreateObject(), *nscope = cJSON_CreateObject(), *sum, *x;
	int oom = 0, changed = 0, noise = 0, ncommon = 0;
	const cJSON *l;

	if (!root || !bview || !nview || !bscope || !nscope)
		goto oom;
	/* one scope per side holding "model" (the view) and "summary" */
	cJSON_AddItemToObject(bscope, "model", bview);
	cJSON_AddItemToObject(nscope, "model", nview);
	bview = nview = NULL;
	if ((x = cJSON_Duplicate(spp_cell_get(base, "summary"), 1)))
		cJSON_AddItemToObject(bscope, "summary", x);
	if ((x = cJSON_Duplicate(spp_cell_get(next, "summary"), 1)))
		cJSON_AddItemToObject(nscope, "summary", x);
	cJSON_AddStringToObject(root, "schema", SPP_COMPARE_SCHEMA);
	cJSON_AddItemToObject(root, "base", side(base, base_path));
	cJSON_AddItemToObject(root, "new", side(next, next_path));
	cJSON_AddBoolToObject(root, "same_machine",
			      cJSON_Compare(spp_cell_path(root, "base.machine"), spp_cell_path(root, "new.machine"), 1));
	model = compare_scope(bscope, nscope, model_metrics,
			      sizeof(model_metrics) / sizeof(model_metrics[0]), &changed,
			      &noise, &oom);
	if (!model)
		goto oom;
	cJSON_AddItemToObject(root, "model", model);
	layers = cJSON_AddArrayToObject(root, "layers");
	added = cJSON_AddArrayToObject(root, "added");
	removed = cJSON_AddArrayToObject(root, "removed");
	if (!layers || !added || !removed)
		goto oom;
	cJSON_ArrayForEach(l, spp_cell_get(next, "layers")) {
		const char *name = spp_cell_str(l, "name");
		const cJSON *bl = name ? spp_gate_find_layer(base, name) : NULL;
		int lchanged = 0, lnoise = 0;
		cJSON *e, *m;

		if (!name)
			continue;
		if (!(e = layer_entry(name, bl ? "common" : "added")))
			goto oom;
		cJSON_AddItemToArray(layers, e);
		if (!bl) {
			cJSON_AddItemToArray(added, cJSON_CreateString(name));
			continue;
		}
		ncommon++;
		m = compare_scope(bl, l, layer_metrics,
				  sizeof(layer_metrics) / sizeof(layer_metrics[0]), &lchanged,
				  &lnoise, &oom);
		if (!m)
			goto oom;
		cJSON_AddItemToObject(e, "metrics", m);
		cJSON_AddNumberToObject(e, "changed", lchanged);
		cJSON_AddNumberToObject(e, "noise", lnoise);
		changed += lchanged;
		noise += lnoise;
	}
	cJSON_ArrayForEach(l, spp_cell_get(base, "layers")) {
		const char *name = spp_cell_str(l, "name");
		cJSON *e;

		if (!name || spp_gate_find_layer(next, name))
			continue;
		if (!(e = layer_entry(name, "removed")))
			goto oom;
		cJSON_AddItemToArray(layers, e);
		cJSON_AddItemToArray(removed, cJSON_CreateString(name));
	}
	sum = cJSON_AddObjectToObject(root, "summary");
	if (!sum || oom)
		goto oom;
	cJSON_AddNumberToObject(sum, "layers_common", ncommon);
	cJSON_AddNumberToObject(sum, "layers_added", cJSON_GetArraySize(added));
	cJSON_AddNumberToObject(sum, "layers_removed", cJSON_GetArraySize(removed));
	cJSON_AddNumberToObject(sum, "figures_changed", changed);
	if (!cJSON_AddNumberToObject(sum, "figures_within_noise", noise))
		goto oom;
	cJSON_Delete(bscope);
	cJSON_Delete(nscope);
	return root;
oom:
	cJSON_Delete(root);
	cJSON_Delete(bview);
	cJSON_Delete(nview);
	cJSON_Delete(bscope);
	cJSON_Delete(nscope);
	spp_error_set(err, SPP_E_NOMEM, "out of memory comparing the reports");
	return NULL;
}
