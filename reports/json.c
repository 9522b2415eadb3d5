/*
 * The report tree (DESIGN section 6) built from an analysis, and its JSON
 * writer; the layers' entries are built in json_layers.c.
 */
#include "kernels/lowp/lowp.h"
#include "reports/json_values.h"
#include "reports/report.h"
#include "profiler/plausible.h"

#include "reports/cache.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "reports/cells.h"
#include "reports/json_breakeven.h"
#include "reports/json_build.h"

/*
 * ISO-8601 UTC. SOURCE_DATE_EPOCH, when set, stands in for the clock so
 * that reports built in tests and reproducible pipelines compare equal.
 */
static void created_time(char *buf, size_t n)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t t = time(NULL);
	struct tm tm;

	if (sde && *sde) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(sde, &end, 10);
		if (!errno && !*end && v >= 0)
			t = (time_t)v;
	}
	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%s", "1970-01-01T00:00:00Z");
}

static void build_model(struct build *b, cJSON *root, const struct spp_analysis *a)
{
	const struct spp_model_totals *t = &a->totals;
	cJSON *m = add_obj(b, root, "model");
	cJSON *h;

	add_str(b, m, "path", a->model ? a->model->path : NULL);
	add_str(b, m, "format", a->model ? a->model->format : NULL);
	h = add_obj(b, m, "hash");
	add_str(b, h, "algo", t->hash.algo);
	add_str(b, h, "value", t->hash.hex[0] ? t->hash.hex : NULL);
	add_num(b, m, "bytes", (double)t->bytes);
	add_num(b, m, "params", (double)t->params);
	add_num(b, m, "nnz", (double)t->nnz);
	add_num_or_null(b, m, "sparsity", t->params > 0, t->sparsity);
	add_num(b, m, "tensors", (double)t->tensors);
	add_num(b, m, "layers", a->nlayers);
}

static void build_machine(struct build *b, cJSON *root, const struct spp_analysis *a)
{
	cJSON *m;

	if (a->machine) {
		m = checked(b, spp_report_machine(a->machine));
		if (m && a->record.dense.n)
			cJSON_AddItemToObject(m, "dense_candidates", checked(b, spp_report_dense(&a->record.dense)));
		if (m && a->runs) {
			/* how quiet the machine was while the runs were timed */
			cJSON *c = add_obj(b, m, "conditions");

			add_num_or_null(b, c, "steal_share", isfinite(a->record.settings.steal_share),
					a->record.settings.steal_share);
			add_num_or_null(b, c, "load_start", isfinite(a->record.settings.load_start),
					a->record.settings.load_start);
			add_num_or_null(b, c, "load_end", isfinite(a->record.settings.load_end),
					a->record.settings.load_end);
		}
		if (m && root)
			cJSON_AddItemToObject(root, "machine", m);
		else
			cJSON_Delete(m);
		return;
	}
	/* an analysis put together without a machine description (tests): all unknown */
	m = add_obj(b, root, "machine");
	add_null(b, m, "cpu");
	add_num(b, m, "threads", omp_get_max_threads());
	/* filled by the kernels and counters parts once they measure them */
	add_null(b, m, "caches");
	add_null(b, m, "peak_bw_gbs");
	add_null(b, m, "peak_gflops");
	add_null(b, m, "counters");
	add_null(b, m, "dense_blas");
	add_arr(b, m, "gpus");
}

/* The session's record (profiler/session.h SPP_RUN_SETTINGS), a row a key. */
static void build_session_record(struct build *b, cJSON *s, const struct spp_run_settings *rs)
{
#define RS_INT(key, v) add_num(b, s, key, v)
#define RS_BOOL(key, v) add_bool(b, s, key, v)
#define RS_NUM(key, v) add_num(b, s, key, v)
#define RS_STR(key, v) add_str(b, s, key, (v)[0] ? (v) : NULL)
#define RS_ROW(key, member, kind) RS_##kind(key, rs->member);
	SPP_RUN_SETTINGS(RS_ROW)
#undef RS_ROW
#undef RS_STR
#undef RS_NUM
#undef RS_BOOL
#undef RS_INT
}

/* Settings of the kernel runs; absent from a static report, which ran none. */
static void build_run_settings(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	const struct spp_analyze_opts *o = &a->opts;
	char counters[32];
	cJSON *f = cJSON_GetObjectItemCaseSensitive(s, "formats");
	cJSON *be = cJSON_GetObjectItemCaseSensitive(s, "backends");

	const struct spp_format_ops *fmts[SPP_MAX_FORMATS + SPP_MAX_PEERS];
	int swept, nf = spp_analyze_formats(o, fmts, &swept);

	/* the CPU dense baseline always runs: it is every check's reference */
	push(b, f, cJSON_CreateString("dense"));
	for (int i = 0; i < nf; i++)
		push(b, f, cJSON_CreateString(fmts[i]->key));
	if (o->backends & SPP_BACKEND_CPU)
		push(b, be, cJSON_CreateString("cpu"));
	if (o->backends & SPP_BACKEND_CUDA)
		push(b, be, cJSON_CreateString("cuda"));
	build_session_record(b, s, &a->record.settings);
	add_num_or_null(b, s, "time_budget_s", o->session.repeat <= 0, o->session.time_budget_s);
	spp_counters_opts_format(&o->counters, counters, sizeof(counters));
	add_str(b, s, "counters", counters);
	add_str(b, s, "verify_rule", o->precision == SPP_PREC_FP32
		? "|y - y_dense| <= verify_rtol * (|W|.|X|) for every element; dense itself against a "
		  "double-precision reference on 4 columns"
		: "fp32 runs: |y - y_dense| <= verify_rtol * (|W|.|X|) for every element; dense itself "
		  "against a double-precision reference on 4 columns; " SPP_LOWP_VERIFY_RULE);
	add_str(b, s, "percentiles", "linear interpolation between closest ranks (numpy default)");
	add_str(b, s, "x", o->activations ? "from the activations folder where a layer has a file, "
		"else uniform in [-1, 1] from seed (splitmix64)" : "uniform in [-1, 1] from seed (splitmix64)");
	add_num_or_null(b, s, "act_sparsity", o->act_sparsity > 0, o->act_sparsity);
	add_str(b, s, "activations", o->activations);
	add_str(b, s, "epilogue", spp_epilogue_name((enum spp_epilogue)o->epilogue));
	add_str(b, s, "precision", o->precision == SPP_ANALYZE_PREC_AUTO ? "auto"
		: spp_prec_name((enum spp_prec)o->precision));
	add_bool(b, s, "dedupe", o->dedupe);
	if (o->shard.count > 0) {
		cJSON *sh = add_obj(b, s, "shard");

		add_num(b, sh, "index", o->shard.index);
		add_num(b, sh, "count", o->shard.count);
		add_str(b, sh, "source", o->shard.source);
	} else {
		add_null(b, s, "shard");
	}
	/* --layers / --skip-layers: the globs that chose the timed layers; null without */
	if (o->ntime_globs || o->nskip_globs) {
		cJSON *sel = add_obj(b, s, "layers");
		cJSON *t = add_arr(b, sel, "time"), *k = add_arr(b, sel, "skip");

		for (int g = 0; t && g < o->ntime_globs; g++)
			cJSON_AddItemToArray(t, checked(b, cJSON_CreateString(o->time_globs[g])));
		for (int g = 0; k && g < o->nskip_globs; g++)
			cJSON_AddItemToArray(k, checked(b, cJSON_CreateString(o->skip_globs[g])));
	} else {
		add_null(b, s, "layers");
	}
}

static void build_settings(struct build *b, cJSON *root, const struct spp_analysis *a)
{
	const struct spp_analyze_opts *o = &a->opts;
	cJSON *s = add_obj(b, root, "settings");

	add_num(b, s, "n", (double)o->n);
	add_null(b, s, "batch");
	add_num_or_null(b, s, "threads", o->threads > 0, o->threads);
	add_num_or_null(b, s, "repeats", a->runs && o->session.repeat > 0, o->session.repeat);
	add_arr(b, s, "formats");
	add_arr(b, s, "backends");
	/* a double holds seeds up to 2^53 exactly; larger ones round */
	add_num(b, s, "seed", (double)o->session.seed);
	add_bool(b, s, "static", o->static_only);
	if (a->runs)
		build_run_settings(b, s, a);
}

cJSON *spp_report_settings(const struct spp_analysis *a)
{
	struct build b = {0};
	cJSON *root = cJSON_CreateObject(), *s;

	build_settings(&b, root, a);
	s = root ? cJSON_DetachItemFromObjectCaseSensitive(root, "settings") : NULL;
	cJSON_Delete(root);
	if (b.oom) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* The dense baseline over the model (profiler/plausible.h); null without runs. */
static void build_baseline(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	struct spp_baseline_summary bs;
	cJSON *o, *w;

	spp_baseline_summarize(a, &bs);
	if (!bs.layers) {
		add_null(b, s, "dense_baseline");
		return;
	}
	o = add_obj(b, s, "dense_baseline");
	add_num(b, o, "layers", bs.layers);
	add_fig(b, o, "gflops", bs.gflops);
	add_fig(b, o, "peak_gflops", bs.peak_gflops > 0 ? bs.peak_gflops : NAN);
	add_fig(b, o, "share_of_peak", bs.share);
	add_num(b, o, "weak_shapes", bs.weak);
	w = add_arr(b, o, "winners");
	for (int i = 0; i < bs.nwins; i++) {
		cJSON *e = checked(b, cJSON_CreateObject());

		if (!e)
			return;
		add_str(b, e, "name", bs.wins[i].name);
		add_str(b, e, "library", bs.wins[i].library);
		add_num(b, e, "layers", bs.wins[i].layers);
		push(b, w, e);
	}
}

/* The layers that hold the model back from a target sparsity (profiler/derive.h). */
static void build_hold_back(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	const struct spp_hold_back *h = &a->summary.hold_back;
	cJSON *o, *arr;

	if (!h->valid) {
		add_null(b, s, "hold_back");
		return;
	}
	o = add_obj(b, s, "hold_back");
	add_num(b, o, "target_sparsity", h->target);
	add_str(b, o, "target_source", h->from_option ? "option" : "model");
	add_num(b, o, "nnz_to_remove", h->nnz_to_remove > 0 ? round(h->nnz_to_remove) : 0);
	add_num(b, o, "excess_flops", h->excess_flops);
	arr = add_arr(b, o, "layers");
	for (int i = 0; i < h->n && arr; i++) {
		const struct spp_hold_back_layer *x = &h->l[i];
		cJSON *e = checked(b, cJSON_CreateObject());

		if (!e)
			return;
		add_str(b, e, "name", a->layers[x->layer].name);
		add_num(b, e, "sparsity", a->stats[x->layer].sparsity);
		add_num(b, e, "excess_nnz", round(x->excess_nnz));
		add_num(b, e, "excess_flops", x->excess_flops);
		add_fig(b, e, "share", x->share);
		add_fig(b, e, "alone_sparsity", x->alone);
		push(b, arr, e);
	}
}

/* The model's mask provenance and its zero layers (profiler/derive.h). */
static void build_structure(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	static const char *const keys[] = {"not_judged", "magnitude_like", "random_like", "unclear",
					   "structured"};
	const struct spp_model_structure *st = &a->summary.structure;
	cJSON *o = add_obj(b, s, "provenance"), *n;

	add_str(b, o, "verdict", spp_provenance_name(st->verdict));
	add_num(b, o, "survivors", (double)st->survivors);
	add_fig(b, o, "low_share", st->low_share);
	add_str(b, o, "reason", st->reason[0] ? st->reason : NULL);
	n = add_obj(b, o, "layers");
	for (int v = SPP_PROV_NOT_JUDGED; v <= SPP_PROV_STRUCTURED; v++)
		add_num(b, n, keys[v], st->layers[v]);
	add_num(b, s, "zero_layers", st->zero_layers);
	add_num(b, s, "nearly_zero_layers", st->nearly_zero_layers);
}

/* The whole model beside its layers (profiler/whole_model.c): null figures and a reason without a graph. */
static void build_whole_model(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	const struct spp_whole_model *w = &a->summary.whole_model;
	cJSON *o = add_obj(b, s, "whole_model");

	add_str(b, o, "reason", w->valid ? NULL : w->reason);
	add_num_or_null(b, o, "ops", w->valid, (double)w->ops);
	add_num_or_null(b, o, "layer_ops", w->valid, (double)w->layer_ops);
	add_num_or_null(b, o, "ops_not_counted", w->valid, (double)w->not_counted);
	add_str(b, o, "not_counted", w->valid && w->not_counted_ops[0] ? w->not_counted_ops : NULL);
	add_fig(b, o, "flops", w->flops);
	add_fig(b, o, "profiled_flops", w->profiled_flops);
	add_fig(b, o, "flops_share", w->flops_share);
	add_fig(b, o, "weight_bytes", w->bytes);
	add_fig(b, o, "profiled_weight_bytes", w->profiled_bytes);
	add_fig(b, o, "weight_bytes_share", w->bytes_share);
	add_fig(b, o, "theoretical_speedup", w->theoretical_speedup);
	add_fig(b, o, "projected_flops_share", w->projected_share);
	add_fig(b, o, "deploy_speedup", w->deploy_speedup);
	add_fig(b, o, "deploy_speedup_bound", w->deploy_bound);
}

static void build_summary(struct build *b, cJSON *root, const struct spp_analysis *a)
{
	const struct spp_model_summary *m = &a->summary;
	cJSON *s = add_obj(b, root, "summary");
	cJSON *st, *fl, *pj;

	add_num(b, s, "layers", a->nlayers);
	add_num(b, s, "gemm_params", m->gemm_params);
	add_num(b, s, "gemm_nnz", m->gemm_nnz);
	add_fig(b, s, "gemm_sparsity", m->gemm_sparsity);
	st = add_obj(b, s, "storage");
	for (int f = 0; f < SPP_ST_COUNT; f++) {
		cJSON *o = add_obj(b, st, spp_storage_key((enum spp_storage_fmt)f));

		add_fig(b, o, "bytes", m->storage[f].bytes);
		add_fig(b, o, "ratio", m->storage[f].ratio);
		add_num(b, o, "applicable_layers", m->storage[f].applicable_layers);
	}
	/* the layers' best storage rule over the formats that hold them all (derive.c) */
	add_storage_choice(b, s, a->derived ? m->best_storage : -1,
			   m->best_storage >= 0 ? m->storage[m->best_storage].ratio : NAN);
	fl = add_obj(b, s, "flops");
	add_num(b, fl, "dense", m->flops_dense);
	add_num(b, fl, "sparse", m->flops_sparse);
	add_fig(b, fl, "theoretical_speedup", m->theoretical_speedup);
	{
		cJSON *n = add_obj(b, s, "n");

		add_num_or_null(b, n, "min", m->n_min > 0, (double)m->n_min);
		add_num_or_null(b, n, "max", m->n_max > 0, (double)m->n_max);
		add_num(b, n, "from_model", m->n_from_model);
	}
	pj = checked(b, spp_report_projection(a));
	if (pj && s)
		cJSON_AddItemToObject(s, "projection", pj);
	else
		cJSON_Delete(pj);
	build_whole_model(b, s, a);
	build_hold_back(b, s, a);
	build_structure(b, s, a);
	build_baseline(b, s, a);
}

cJSON *spp_report_build(const struct spp_analysis *a, const char *tool_version,
			struct spp_error *err)
{
	struct build b = {0};
	cJSON *root = cJSON_CreateObject();
	cJSON *tool, *layers, *warnings;
	char created[32];

	if (!root)
		goto oom;
	add_str(&b, root, "schema", SPP_REPORT_SCHEMA);
	tool = add_obj(&b, root, "tool");
	add_str(&b, tool, "name", "spprof");
	add_str(&b, tool, "version", tool_version);
	created_time(created, sizeof(created));
	add_str(&b, root, "created", created);
	/* a run stopped by Ctrl-C: the layers done so far (only then) */
	if (a->incomplete)
		add_bool(&b, root, "incomplete", 1);
	build_model(&b, root, a);
	build_machine(&b, root, a);
	build_settings(&b, root, a);
	layers = add_arr(&b, root, "layers");
	for (int i = 0; i < a->nlayers && !b.oom; i++)
		push(&b, layers, spp_json_build_layer(&b, a, i));
	build_summary(&b, root, a);
	warnings = add_arr(&b, root, "warnings");
	for (int i = 0; i < a->nwarnings && !b.oom; i++) {
		cJSON *w = cJSON_CreateObject();

		push(&b, warnings, w);
		if (w && (!cJSON_AddStringToObject(w, "code", spp_warn_code(a->warnings[i].code)) ||
			  !cJSON_AddStringToObject(w, "message", a->warnings[i].message)))
			b.oom = 1;
	}
	if (b.oom)
		goto oom;
	return root;
oom:
	cJSON_Delete(root);
	spp_error_set(err, SPP_E_NOMEM, "out of memory building the report");
	return NULL;
}

/*
 * cJSON prints a double with 15 digits whenever they read back as roughly
 * the same value, which drops the last bits (512/548 loses two ulp, 2^53+2
 * becomes 9.00719925474099e+15). A report must read back exactly, so every
 * number is replaced by raw text that does, in a copy of the tree.
 */
static int exact_numbers(cJSON *node)
{
	for (cJSON *c = node->child; c; c = c->next) {
		if (cJSON_IsNumber(c)) {
			char buf[40], *raw;

			spp_cell_number(c->valuedouble, buf, sizeof(buf));
			/* a NaN or infinity is not JSON; unknown is null */
			if (!buf[0])
				snprintf(buf, sizeof(buf), "null");
			/* cJSON_Delete frees it with cJSON's allocator */
			raw = cJSON_malloc(strlen(buf) + 1);
			if (!raw)
				return -1;
			memcpy(raw, buf, strlen(buf) + 1);
			c->type = cJSON_Raw;
			c->valuestring = raw;
		} else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && exact_numbers(c)) {
			return -1;
		}
	}
	return 0;
}

char *spp_json_text_exact(const cJSON *v, int formatted)
{
	cJSON *copy = cJSON_Duplicate(v, 1);
	char *text = NULL;

	if (copy && !exact_numbers(copy))
		text = formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return text;
}

int spp_report_write_json(const cJSON *report, FILE *f, struct spp_error *err)
{
	char *text = spp_json_text_exact(report, 1);
	int rc = SPP_OK;

	if (!text)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory printing the report");
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF || ferror(f))
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				   strerror(errno));
	cJSON_free(text);
	return rc;
}
