/*
 * spprof merge: the reports of the shards of one profile (analyze
 * --shard I/N) into the report one run would have written. The parts
 * must come from the same model (hash) and settings, one report per shard
 * 0..N-1. The model is scanned again (the static figures are the
 * model's, the same in every part), each layer takes its runs from the
 * part of its shard (runs_read.c), the parts' warnings are kept once
 * each, and the analysis derives its summary, projection and every
 * per-layer figure as a single run does (profiler/derive.h): nothing
 * derived is copied from a part.
 */
#include "reports/report.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "reports/cells.h"
#include "reports/json_values.h"

struct parts {
	const char *const *paths;
	cJSON **r;
	int n;
	int *of_shard;          /* part of each shard index; -1: a failed shard's */
	int *part_of;           /* the part that timed each layer; -1: none */
	int count;
	const char *const *failed;  /* spp_merge_opts.failed */
};

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = get(b ? get(o, a) : o, b ? b : a);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Part p's settings equal part 0's but for the shard; else the first key that differs. */
static int same_settings(const struct parts *P, int p, struct spp_error *err)
{
	const cJSON *s0 = get(P->r[0], "settings"), *sp = get(P->r[p], "settings"), *e;
	const char *h0 = str_at(get(P->r[0], "model"), "hash", "value");
	const char *hp = str_at(get(P->r[p], "model"), "hash", "value");

	if (!h0 || !hp || strcmp(h0, hp))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': model hash %s is not that of '%s' (%s): "
				     "parts of different models", P->paths[p], hp ? hp : "null", P->paths[0],
				     h0 ? h0 : "null");
	cJSON_ArrayForEach(e, s0) {
		if (strcmp(e->string, "shard") == 0)
			continue;
		if (!cJSON_Compare(e, get(sp, e->string), 1))
			return spp_error_set(err, SPP_E_FORMAT, "'%s': settings.%s differs from '%s''s: "
					     "parts of different runs", P->paths[p], e->string, P->paths[0]);
	}
	if (cJSON_GetArraySize(sp) != cJSON_GetArraySize(s0))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': its settings have other keys than '%s''s",
				     P->paths[p], P->paths[0]);
	return 0;
}

/* Layers named by shard s of part 0's list, for the missing-shard message. */
static void layers_of_shard(const cJSON *r, int s, char *buf, size_t n)
{
	const cJSON *l;
	struct spp_buf b;
	int shown = 0;

	spp_buf_init(&b, buf, n);
	cJSON_ArrayForEach(l, get(r, "layers")) {
		const cJSON *sh = get(l, "shard");

		if (spp_json_int(sh, 0, INT32_MAX, -1) != s || !str_at(l, "name", NULL))
			continue;
		if (shown++ == 3) {
			spp_buf_add(&b, ", ...");
			return;
		}
		spp_buf_add(&b, "%s%s", shown > 1 ? ", " : "", str_at(l, "name", NULL));
	}
}

/* One part per shard 0..count-1, each of the same count; else what is doubled or missing. */
static int cover(struct parts *P, struct spp_error *err)
{
	char names[256];

	for (int p = 0; p < P->n; p++) {
		const cJSON *sh = get(get(P->r[p], "settings"), "shard");
		int c = (int)spp_json_int(get(sh, "count"), 1, 65536, 0);
		int i = (int)spp_json_int(get(sh, "index"), 0, 65535, -1);

		if (!c || i < 0)
			return spp_error_set(err, SPP_E_FORMAT, "'%s': not a shard's report (no "
					     "settings.shard: run analyze with --shard I/N)", P->paths[p]);
		if (p == 0) {
			P->count = P->failed ? P->count : c;
			P->of_shard = malloc((size_t)P->count * sizeof(*P->of_shard));
			if (!P->of_shard)
				return spp_error_set(err, SPP_E_NOMEM, "out of memory");
			for (int s = 0; s < P->count; s++)
				P->of_shard[s] = -1;
		}
		if (c != P->count || i >= P->count)
			return spp_error_set(err, SPP_E_FORMAT, "'%s': shard %d of %d, not of %d",
					     P->paths[p], i, c, P->count);
		if (P->of_shard[i] >= 0)
			return spp_error_set(err, SPP_E_FORMAT, "'%s' and '%s' are both shard %d of %d: "
					     "its layers would be doubled", P->paths[P->of_shard[i]],
					     P->paths[p], i, P->count);
		P->of_shard[i] = p;
	}
	for (int s = 0; s < P->count; s++)
		if (P->of_shard[s] < 0 && !(P->failed && P->failed[s])) {
			layers_of_shard(P->r[0], s, names, sizeof(names));
			return spp_error_set(err, SPP_E_FORMAT, "shard %d of %d is missing: %s%s", s,
					     P->count, names[0] ? "no part times " : "no part given for it",
					     names);
		}
	return 0;
}

/* --n-sweep's N, as the parts' first N curve gives them (the settings do not list them). */
static void nsweep_ns(const struct parts *P, struct spp_analyze_opts *o)
{
	const cJSON *l, *e, *p;

	cJSON_ArrayForEach(l, get(P->r[0], "layers")) {
		cJSON_ArrayForEach(e, get(l, "n_sweep")) {
			o->n_sweep_count = 0;
			cJSON_ArrayForEach(p, get(e, "curve"))
				if (o->n_sweep_count < SPP_NSWEEP_MAX_N)
					o->n_sweep[o->n_sweep_count++] = spp_json_int(get(p, "n"), 1, INT64_C(1) << 31, 1);
			if (o->n_sweep_count)
				return;
		}
	}
}

/* Layer i's breakeven sweep from the part that timed it, one sweep per layer that has one. */
static int attach_sweep(struct spp_analysis *a, int i, const cJSON *l, const char *path,
			struct spp_error *err)
{
	int rc;

	if (!a->sweeps) {
		a->sweeps = calloc((size_t)a->nlayers, sizeof(*a->sweeps));
		a->sweep_of = malloc((size_t)a->nlayers * sizeof(*a->sweep_of));
		if (!a->sweeps || !a->sweep_of)
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		for (int j = 0; j < a->nlayers; j++)
			a->sweep_of[j] = -1;
	}
	if ((rc = spp_report_layer_sweep(l, path, &a->sweeps[a->nsweeps], err)))
		return rc;
	if (a->sweeps[a->nsweeps].nresults > 0)
		a->sweep_of[i] = a->nsweeps++;
	return 0;
}

/* The analyze options the parts ran with (settings), for the static scan and the report. */
static int opts_of(const cJSON *r, struct spp_analyze_opts *o, struct spp_error *err)
{
	const cJSON *s = get(r, "settings"), *e;
	const cJSON *l;
	struct spp_error e2;
	int model_n = 0;

	spp_analyze_opts_init(o);
	o->n = spp_json_int(get(s, "n"), 1, INT64_C(1) << 31, 128);
	cJSON_ArrayForEach(l, get(r, "layers"))
		model_n |= str_at(l, "n_source", NULL) && strcmp(str_at(l, "n_source", NULL), "model") == 0;
	o->n_set = !model_n; /* no layer took the graph's N: every N is the option's */
	o->threads = (int)spp_json_int(get(s, "threads"), 0, 1 << 16, 0);
	o->session.repeat = (int)spp_json_int(get(s, "repeats"), 0, 1000000, 0);
	if (cJSON_IsNumber(get(s, "time_budget_s")))
		o->session.time_budget_s = get(s, "time_budget_s")->valuedouble;
	/* a double holds seeds to 2^53 exactly, as the writer says */
	o->session.seed = (uint64_t)spp_json_int(get(s, "seed"), 0, (int64_t)SPP_SESSION_MAX_SEED, 1);
	o->session.cache = cJSON_IsTrue(get(s, "cold")) ? SPP_CACHE_COLD : SPP_CACHE_WARM;
	/* a report of an older spprof has no counters: the default */
	if (str_at(s, "counters", NULL))
		(void)spp_counters_parse(str_at(s, "counters", NULL), &o->counters, &e2);
	o->dedupe = cJSON_IsTrue(get(s, "dedupe"));
	if (cJSON_IsNumber(get(s, "act_sparsity")))
		o->act_sparsity = get(s, "act_sparsity")->valuedouble;
	o->activations = str_at(s, "activations", NULL);
	for (int k = 0; k < SPP_EPILOGUE_COUNT; k++)
		if (str_at(s, "epilogue", NULL) && strcmp(str_at(s, "epilogue", NULL),
							  spp_epilogue_name((enum spp_epilogue)k)) == 0)
			o->epilogue = k;
	o->backends = 0;
	cJSON_ArrayForEach(e, get(s, "backends"))
		o->backends |= cJSON_IsString(e) && strcmp(e->valuestring, "cuda") == 0 ? SPP_BACKEND_CUDA
											 : SPP_BACKEND_CPU;
	o->formats_set = 1;
	o->nformats = o->npeers = 0;
	cJSON_ArrayForEach(e, get(s, "formats")) {
		int peer = 0;
		const struct spp_format_ops *f = cJSON_IsString(e) ? spp_format_by_key(e->valuestring, &peer)
								   : NULL;

		if (cJSON_IsString(e) && strcmp(e->valuestring, "dense") == 0)
			continue;
		if (f && !peer && o->nformats < SPP_MAX_FORMATS)
			o->formats[o->nformats++] = f;
		else if (f && peer && o->npeers < SPP_MAX_PEERS)
			o->peers[o->npeers++] = f;
		else
			return spp_error_set(err, SPP_E_UNSUPPORTED, "settings.formats: '%s' is not a "
					     "format or peer of this spprof", cJSON_IsString(e) ? e->valuestring : "?");
	}
	return 0;
}

/* The session's record, by its table (profiler/session.h SPP_RUN_SETTINGS). */
static void run_settings_of(const cJSON *s, struct spp_run_settings *rs)
{
#define RS_INT(key, v) v = (int)spp_json_int(get(s, key), 0, 1 << 30, 0)
#define RS_BOOL(key, v) v = cJSON_IsTrue(get(s, key))
#define RS_NUM(key, v) v = cJSON_GetNumberValue(get(s, key))
#define RS_STR(key, v) snprintf(v, sizeof(v), "%s", str_at(s, key, NULL) ? str_at(s, key, NULL) : "")
#define RS_ROW(key, member, kind) RS_##kind(key, rs->member);
	memset(rs, 0, sizeof(*rs));
	SPP_RUN_SETTINGS(RS_ROW)
#undef RS_ROW
#undef RS_STR
#undef RS_NUM
#undef RS_BOOL
#undef RS_INT
}

/* The parts' warnings, each once, in the order the parts give them. */
static int warnings_of(struct spp_analysis *a, const struct parts *P, struct spp_error *err)
{
	static const enum spp_warn all[] = {
#define SPP_WARN_ALL(e, code, what) e,
		SPP_WARN_LIST(SPP_WARN_ALL)
#undef SPP_WARN_ALL
	};
	int rc;

	for (int i = 0; i < a->nwarnings; i++)
		free(a->warnings[i].message);
	a->nwarnings = 0;
	for (int p = 0; p < P->n; p++) {
		const cJSON *w;

		cJSON_ArrayForEach(w, get(P->r[p], "warnings")) {
			const char *code = str_at(w, "code", NULL), *msg = str_at(w, "message", NULL);
			int seen = 0;
			size_t c = 0;

			while (c < sizeof(all) / sizeof(all[0]) && (!code || strcmp(spp_warn_code(all[c]), code)))
				c++;
			if (!msg || c == sizeof(all) / sizeof(all[0]))
				continue; /* a code of another spprof: not one this one can keep */
			for (int i = 0; i < a->nwarnings && !seen; i++)
				seen = a->warnings[i].code == all[c] && strcmp(a->warnings[i].message, msg) == 0;
			if (!seen && (rc = spp_analysis_warn(a, err, all[c], "%s", msg)))
				return rc;
		}
	}
	for (int s = 0; P->failed && s < P->count; s++)
		if (P->failed[s] && (rc = spp_analysis_warn(a, err, SPP_WARN_SHARD_FAILED, "shard %d of %d "
							    "(rank %d) failed: %s; its layers have no runs",
							    s, P->count, s, P->failed[s])))
			return rc;
	return 0;
}

/* Layer i of the scan against part 0's: the same name and GEMM shape, else the parts' options differ. */
static int same_layer(const struct spp_analysis *a, int i, const cJSON *l, const char *path,
		      struct spp_error *err)
{
	const struct spp_layer *x = &a->layers[i];
	const char *name = str_at(l, "name", NULL);

	if (!name || strcmp(name, x->name) || cJSON_GetNumberValue(get(l, "m")) != (double)x->view.m ||
	    cJSON_GetNumberValue(get(l, "k")) != (double)x->view.k ||
	    cJSON_GetNumberValue(get(l, "n")) != (double)x->n)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': layer %d is %s here, not as in '%s' "
				     "(was the model changed, or analysed with --input-shape?)", a->model->path,
				     i, x->name, path);
	return 0;
}

/*
 * Layer i of the scan in part p: the layer of its name there (at i, where a
 * part of this run has it), which must have its GEMM shape and shard s;
 * else the part is refused, so that no layer takes another's runs.
 */
static const cJSON *layer_in_part(const struct spp_analysis *a, int i, const struct parts *P, int p,
				  int s, struct spp_error *err)
{
	const cJSON *layers = get(P->r[p], "layers"), *l = cJSON_GetArrayItem(layers, i);
	const struct spp_layer *x = &a->layers[i];

	if (!str_at(l, "name", NULL) || strcmp(str_at(l, "name", NULL), x->name))
		cJSON_ArrayForEach(l, layers)
			if (str_at(l, "name", NULL) && strcmp(str_at(l, "name", NULL), x->name) == 0)
				break;
	if (!l) {
		spp_error_set(err, SPP_E_FORMAT, "'%s': no layer '%s': not a part of this model's run",
			      P->paths[p], x->name);
		return NULL;
	}
	if (spp_json_int(get(l, "m"), 0, INT64_MAX, -1) != x->view.m ||
	    spp_json_int(get(l, "k"), 0, INT64_MAX, -1) != x->view.k ||
	    spp_json_int(get(l, "n"), 0, INT64_MAX, -1) != x->n) {
		spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s' is not %lldx%lld, N %lld as in the "
			      "model: not a part of this model's run", P->paths[p], x->name,
			      (long long)x->view.m, (long long)x->view.k, (long long)x->n);
		return NULL;
	}
	if (spp_json_int(get(l, "shard"), 0, INT32_MAX, -1) != s) {
		spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s' is not of shard %d, as '%s' has it",
			      P->paths[p], x->name, s, P->paths[0]);
		return NULL;
	}
	return l;
}

/* Each layer's runs from the part of its shard, and --dedupe's copies named. */
static int attach_runs(struct spp_analysis *a, struct parts *P, struct spp_error *err)
{
	const cJSON *layers0 = get(P->r[0], "layers");
	int rc = 0;

	if (cJSON_GetArraySize(layers0) != a->nlayers)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': %d layers here, %d in '%s'", a->model->path,
				     a->nlayers, cJSON_GetArraySize(layers0), P->paths[0]);
	a->runs = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*a->runs));
	a->runs_from = malloc((size_t)(a->nlayers > 0 ? a->nlayers : 1) * sizeof(*a->runs_from));
	P->part_of = malloc((size_t)(a->nlayers > 0 ? a->nlayers : 1) * sizeof(*P->part_of));
	if (a->opts.n_sweep_count)
		a->nsweeps_n = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*a->nsweeps_n));
	if (!a->runs || !a->runs_from || !P->part_of || (a->opts.n_sweep_count && !a->nsweeps_n))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	for (int i = 0; i < a->nlayers && !rc; i++) {
		const cJSON *l0 = cJSON_GetArrayItem(layers0, i), *sh = get(l0, "shard"), *l;
		struct spp_bw_model bw;
		const char *from;
		int p, s;

		a->runs_from[i] = -1;
		P->part_of[i] = -1;
		if ((rc = same_layer(a, i, l0, P->paths[0], err)) || a->stats[i].unsupported)
			continue;
		if ((s = (int)spp_json_int(sh, 0, P->count - 1, -1)) < 0)
			return spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s' has no shard",
					     P->paths[0], a->layers[i].name);
		if ((p = P->of_shard[s]) < 0)
			continue; /* a failed rank's shard: no runs */
		P->part_of[i] = p;
		if (!(l = layer_in_part(a, i, P, p, s, err)))
			return err->code;
		if (cJSON_GetArraySize(get(P->r[p], "layers")) != a->nlayers)
			return spp_error_set(err, SPP_E_FORMAT, "'%s': %d layers, %d in the model",
					     P->paths[p], cJSON_GetArraySize(get(P->r[p], "layers")), a->nlayers);
		spp_report_bw_of(P->r[p], &bw);
		if ((rc = spp_report_layer_runs(l, P->paths[p], &a->runs[i], err)) ||
		    (cJSON_GetArraySize(get(l, "breakeven")) > 0 && (rc = attach_sweep(a, i, l, P->paths[p], err))) ||
		    (a->nsweeps_n && (rc = spp_report_layer_nsweep(l, P->paths[p], &a->nsweeps_n[i], err))))
			break;
		spp_report_runs_refigure(a, i, &bw);
		from = str_at(l, "runs_copied_from", NULL);
		for (int j = 0; from && j < i; j++)
			if (strcmp(a->layers[j].name, from) == 0)
				a->runs_from[i] = j;
	}
	return rc;
}

void spp_merge_machines_free(struct spp_merge_machines *mm)
{
	cJSON_Delete(mm->list);
	free(mm->of_layer);
	memset(mm, 0, sizeof(*mm));
}

/* The parts' distinct machines, and the one that timed each layer. 0 or SPP_E_NOMEM. */
static int machines_of(const struct parts *P, int nlayers, struct spp_merge_machines *mm,
		       struct spp_error *err)
{
	int *of_part = calloc((size_t)P->n, sizeof(*of_part));

	mm->list = cJSON_CreateArray();
	mm->of_layer = malloc((size_t)(nlayers > 0 ? nlayers : 1) * sizeof(*mm->of_layer));
	for (int p = 0; of_part && mm->list && mm->of_layer && p < P->n; p++) {
		const cJSON *m = get(P->r[p], "machine"), *e;
		char mine[512], theirs[512];
		int k = 0;

		spp_cell_machine_label(m, mine, sizeof(mine));
		cJSON_ArrayForEach(e, mm->list) {
			spp_cell_machine_label(e, theirs, sizeof(theirs));
			if (strcmp(mine, theirs) == 0)
				break;
			k++;
		}
		if (!e && !cJSON_AddItemToArray(mm->list, cJSON_Duplicate(m, 1)))
			break;
		of_part[p] = k;
		mm->n = cJSON_GetArraySize(mm->list);
	}
	for (int i = 0; of_part && mm->of_layer && i < nlayers; i++)
		mm->of_layer[i] = P->part_of[i] >= 0 ? of_part[P->part_of[i]] : -1;
	free(of_part);
	if (!of_part || !mm->list || !mm->of_layer || mm->n < 1) {
		spp_merge_machines_free(mm);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	return 0;
}

int spp_report_merge(const char *const *paths, int n, const struct spp_merge_opts *mo,
		     struct spp_analysis **out, struct spp_merge_machines *mm, struct spp_error *err)
{
	struct parts P = {paths, calloc((size_t)(n > 0 ? n : 1), sizeof(cJSON *)), n, NULL, NULL,
			  mo->failed ? mo->count : 0, mo->failed};
	const char *model = mo->model;
	struct spp_analyze_opts o;
	struct spp_analysis *a = NULL;
	const char *h0;
	int rc = P.r ? 0 : spp_error_set(err, SPP_E_NOMEM, "out of memory");

	*out = NULL;
	memset(mm, 0, sizeof(*mm));
	for (int p = 0; p < n && !rc; p++)
		rc = spp_report_load(paths[p], &P.r[p], err);
	for (int p = 1; p < n && !rc; p++)
		rc = same_settings(&P, p, err);
	if (!rc && !(rc = cover(&P, err)) && !(rc = opts_of(P.r[0], &o, err)))
		nsweep_ns(&P, &o);
	if (!rc && !model && !(model = str_at(get(P.r[0], "model"), "path", NULL)))
		rc = spp_error_set(err, SPP_E_FORMAT, "'%s': no model.path: give the model with --model",
				   paths[0]);
	if (!rc) {
		o.static_only = 1;
		rc = mo->analyze(model, &o, &a, err);
	}
	h0 = rc ? NULL : str_at(get(P.r[0], "model"), "hash", "value");
	if (!rc && (!h0 || strcmp(h0, a->totals.hash.hex)))
		rc = spp_error_set(err, SPP_E_FORMAT, "'%s': its hash %s is not the parts' %s: not the "
				   "model they profiled", model, a->totals.hash.hex, h0 ? h0 : "null");
	if (!rc && o.activations && !(a->owned_activations = strdup(o.activations)))
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
	if (!rc) {
		a->opts = o; /* the parts' options, as their runs had them */
		a->opts.activations = a->owned_activations;
		a->opts.static_only = 0;
		a->opts.shard.count = 0;
		run_settings_of(get(P.r[0], "settings"), &a->record.settings);
		rc = attach_runs(a, &P, err);
	}
	if (!rc && !(rc = warnings_of(a, &P, err)) && !(rc = spp_analysis_derive(a, err)))
		rc = machines_of(&P, a->nlayers, mm, err);
	for (int p = 0; p < n; p++)
		cJSON_Delete(P.r[p]);
	free(P.r);
	free(P.of_shard);
	free(P.part_of);
	if (rc) {
		spp_analysis_destroy(a);
		return rc;
	}
	*out = a;
	return 0;
}

cJSON *spp_report_merged(struct spp_analysis *a, struct spp_merge_machines *mm,
			 const char *const *names, int n, struct spp_error *err)
{
	cJSON *report = spp_report_build(a, SPP_VERSION, err), *from, *l, *layers;
	int i = 0;

	if (!report) {
		spp_merge_machines_free(mm);
		return NULL;
	}
	cJSON_ReplaceItemInObjectCaseSensitive(report, "machine",
					       cJSON_Duplicate(cJSON_GetArrayItem(mm->list, 0), 1));
	from = cJSON_AddArrayToObject(cJSON_GetObjectItemCaseSensitive(report, "settings"), "merged_from");
	for (int k = 0; from && k < n; k++)
		cJSON_AddItemToArray(from, cJSON_CreateString(names[k]));
	/* parts from different machines: the machine is a dimension, each layer names its own */
	layers = mm->n > 1 ? cJSON_GetObjectItemCaseSensitive(report, "layers") : NULL;
	cJSON_ArrayForEach(l, layers) {
		if (mm->of_layer[i] >= 0)
			cJSON_AddNumberToObject(l, "machine", mm->of_layer[i]);
		i++;
	}
	if (mm->n > 1) {
		cJSON_AddItemToObject(report, "machines", mm->list);
		mm->list = NULL;
	}
	spp_merge_machines_free(mm);
	return report;
}
