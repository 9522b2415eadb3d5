/* The report tree (DESIGN section 6) built from an analysis, and its JSON writer. */
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

/*
 * Building a tree is a long run of cJSON_Add* calls, each of which can fail
 * only for memory. Rather than test each one, the helpers below remember the
 * first failure and accept a NULL parent, so the build runs to the end and
 * is checked once.
 */
struct build {
	int oom;
};

static cJSON *checked(struct build *b, cJSON *item)
{
	if (!item)
		b->oom = 1;
	return item;
}

static cJSON *add_obj(struct build *b, cJSON *parent, const char *key)
{
	return parent ? checked(b, cJSON_AddObjectToObject(parent, key)) : NULL;
}

static cJSON *add_arr(struct build *b, cJSON *parent, const char *key)
{
	return parent ? checked(b, cJSON_AddArrayToObject(parent, key)) : NULL;
}

static void add_num(struct build *b, cJSON *parent, const char *key, double v)
{
	if (parent)
		checked(b, cJSON_AddNumberToObject(parent, key, v));
}

static void add_null(struct build *b, cJSON *parent, const char *key)
{
	if (parent)
		checked(b, cJSON_AddNullToObject(parent, key));
}

/* A figure that may be unknown: null when !known. */
static void add_num_or_null(struct build *b, cJSON *parent, const char *key,
			    int known, double v)
{
	if (known)
		add_num(b, parent, key, v);
	else
		add_null(b, parent, key);
}

static void add_str(struct build *b, cJSON *parent, const char *key,
		    const char *s)
{
	if (!parent)
		return;
	if (s)
		checked(b, cJSON_AddStringToObject(parent, key, s));
	else
		add_null(b, parent, key);
}

static void add_bool(struct build *b, cJSON *parent, const char *key, int v)
{
	if (parent)
		checked(b, cJSON_AddBoolToObject(parent, key, v));
}

static void push(struct build *b, cJSON *arr, cJSON *item)
{
	if (!checked(b, item))
		return;
	if (!arr) {
		cJSON_Delete(item);
		return;
	}
	cJSON_AddItemToArray(arr, item);
}

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
		if (m && a->dense.n)
			cJSON_AddItemToObject(m, "dense_candidates", checked(b, spp_report_dense(&a->dense)));
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

/* Settings of the kernel runs; absent from a static report, which ran none. */
static void build_run_settings(struct build *b, cJSON *s, const struct spp_analysis *a)
{
	const struct spp_analyze_opts *o = &a->opts;
	const struct spp_run_settings *rs = &a->settings;
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
	add_num(b, s, "run_threads", rs->threads);
	add_num_or_null(b, s, "time_budget_s", o->repeat <= 0, o->time_budget_s);
	add_num(b, s, "warmup", rs->warmup);
	add_num(b, s, "min_repeats", rs->min_repeats);
	add_num(b, s, "max_repeats", rs->max_repeats);
	add_bool(b, s, "cold", o->cold);
	add_str(b, s, "cold_method", rs->cold_method[0] ? rs->cold_method : NULL);
	add_num(b, s, "verify_rtol", rs->verify_rtol);
	add_str(b, s, "verify_rule", "|y - y_dense| <= verify_rtol * (|W|.|X|) for every element; "
		"dense itself against a double-precision reference on 4 columns");
	add_str(b, s, "schedule", rs->schedule);
	add_str(b, s, "thread_policy", rs->thread_policy);
	add_num(b, s, "pinned", rs->pinned);
	add_str(b, s, "percentiles", "linear interpolation between closest ranks (numpy default)");
	add_str(b, s, "x", o->activations ? "from the activations folder where a layer has a file, "
		"else uniform in [-1, 1] from seed (splitmix64)" : "uniform in [-1, 1] from seed (splitmix64)");
	add_num_or_null(b, s, "act_sparsity", o->act_sparsity > 0, o->act_sparsity);
	add_str(b, s, "activations", o->activations);
}

static void build_settings(struct build *b, cJSON *root, const struct spp_analysis *a)
{
	const struct spp_analyze_opts *o = &a->opts;
	cJSON *s = add_obj(b, root, "settings");

	add_num(b, s, "n", (double)o->n);
	add_null(b, s, "batch");
	add_num_or_null(b, s, "threads", o->threads > 0, o->threads);
	add_num_or_null(b, s, "repeats", a->runs && o->repeat > 0, o->repeat);
	add_arr(b, s, "formats");
	add_arr(b, s, "backends");
	/* a double holds seeds up to 2^53 exactly; larger ones round */
	add_num(b, s, "seed", (double)o->seed);
	add_bool(b, s, "static", o->static_only);
	if (a->runs)
		build_run_settings(b, s, a);
}

/* A figure of a run: NAN is unknown. */
static void add_fig(struct build *b, cJSON *o, const char *key, double v)
{
	add_num_or_null(b, o, key, isfinite(v), v);
}

/* CUPTI figures of a CUDA run; null with no source (its note, if any, kept). */
static void build_gpu(struct build *b, cJSON *o, const struct spp_gpu_figures *g)
{
	cJSON *t;

	if (!g->source[0] && !g->note[0]) {
		add_null(b, o, "gpu");
		return;
	}
	t = add_obj(b, o, "gpu");
	add_str(b, t, "source", g->source[0] ? g->source : NULL);
	add_fig(b, t, "dram_read_bytes", g->dram_read_bytes);
	add_fig(b, t, "dram_write_bytes", g->dram_write_bytes);
	add_fig(b, t, "l2_hit_rate", g->l2_hit_rate);
	add_fig(b, t, "l1_hit_rate", g->l1_hit_rate);
	add_fig(b, t, "achieved_occupancy", g->achieved_occupancy);
	add_fig(b, t, "sm_active_imbalance", g->sm_active_imbalance);
	add_fig(b, t, "branch_efficiency", g->branch_efficiency);
	add_str(b, t, "note", g->note[0] ? g->note : NULL);
}

static cJSON *build_run(struct build *b, const struct spp_run *r)
{
	cJSON *o = checked(b, cJSON_CreateObject());
	cJSON *t;
	int timed = r->status == SPP_RUN_OK && r->time.repeats > 0;

	if (!o)
		return NULL;
	add_str(b, o, "backend", r->backend);
	add_str(b, o, "format", r->format);
	add_str(b, o, "precision", r->precision);
	/* the dense baseline names the candidate that won (library, version, kernels) */
	add_str(b, o, "candidate", r->candidate[0] ? r->candidate : NULL);
	add_str(b, o, "library", r->library[0] ? r->library : NULL);
	add_str(b, o, "status", spp_run_status_name(r->status));
	/* an ok run may say how it was checked (a reduced-precision bound) */
	if (r->status != SPP_RUN_OK || r->reason[0])
		add_str(b, o, "reason", r->reason);
	t = checked(b, spp_report_time(timed ? &r->time : NULL));
	if (t)
		cJSON_AddItemToObject(o, "time_ns", t);
	add_fig(b, o, "speedup", timed ? r->speedup : NAN);
	add_fig(b, o, "efficiency", timed ? r->efficiency : NAN);
	add_fig(b, o, "gap", timed ? r->gap : NAN);
	add_fig(b, o, "gflops", timed ? r->gflops : NAN);
	add_fig(b, o, "bytes_moved", r->status == SPP_RUN_OK ? r->bytes_moved : NAN);
	add_fig(b, o, "arithmetic_intensity", r->status == SPP_RUN_OK ? r->intensity : NAN);
	add_fig(b, o, "bandwidth_gbs", timed ? r->bandwidth_gbs : NAN);
	add_fig(b, o, "bw_util", timed ? r->bw_util : NAN);
	add_str(b, o, "bw_level", timed && r->bw_level >= 0 ? spp_bw_level_name((enum spp_bw_level)r->bw_level) : NULL);
	add_fig(b, o, "imbalance", timed ? r->imbalance : NAN);
	add_fig(b, o, "nnz_imbalance", r->nnz_imbalance);
	add_fig(b, o, "max_error", r->max_error);
	add_fig(b, o, "speedup_weight_only", timed ? r->speedup_weight_only : NAN);
	if (isfinite(r->copy_ns[0]) || isfinite(r->copy_ns[1]) || isfinite(r->copy_ns[2])) {
		t = add_obj(b, o, "copy_ns");
		add_fig(b, t, "h2d_w", r->copy_ns[0]);
		add_fig(b, t, "h2d_x", r->copy_ns[1]);
		add_fig(b, t, "d2h_y", r->copy_ns[2]);
	} else {
		add_null(b, o, "copy_ns");
	}
	/* counter figures with their source; null when none (the warnings say why) */
	t = checked(b, spp_report_cache(&r->cache));
	if (t)
		cJSON_AddItemToObject(o, "cache", t);
	build_gpu(b, o, &r->gpu);
	return o;
}

/* How the layer's dense baseline was chosen (reports/machine.c); null without runs. */
static void build_dense_choice(struct build *b, cJSON *layer, const struct spp_layer_runs *runs)
{
	cJSON *o;

	if (!runs || runs->dense.nt == 0) {
		add_null(b, layer, "dense_candidates");
		return;
	}
	o = checked(b, spp_report_dense_choice(&runs->dense));
	if (o)
		cJSON_AddItemToObject(layer, "dense_candidates", o);
}

static void build_pattern(struct build *b, cJSON *layer,
			  const struct spp_layer_static *s)
{
	const struct spp_static_counts *c = &s->counts;
	cJSON *p = add_obj(b, layer, "pattern");
	cJSON *r;
	char key[16];

	add_str(b, p, "class", spp_pattern_class_name(s->cls));
	for (int i = 0; i < SPP_NNM; i++)
		add_num(b, p, spp_nm_patterns[i].key, s->nm[i]);
	for (int i = 0; i < SPP_NBLOCK; i++) {
		snprintf(key, sizeof(key), "block%d", spp_block_sizes[i]);
		add_num(b, p, key, s->block[i]);
	}
	add_num(b, p, "zero_rows", (double)c->zero_rows);
	add_num(b, p, "zero_cols", (double)c->zero_cols);
	r = add_obj(b, p, "row_nnz");
	add_num(b, r, "min", (double)c->row_nnz_min);
	add_num(b, r, "max", (double)c->row_nnz_max);
	add_num(b, r, "mean", s->row_nnz_mean);
	/* std / mean has no value for an all-zero layer */
	add_num_or_null(b, r, "cv", s->row_nnz_mean > 0, s->row_nnz_cv);
}

static void build_storage(struct build *b, cJSON *layer,
			  const struct spp_layer_static *s)
{
	cJSON *st = add_obj(b, layer, "storage");

	for (int f = 0; f < SPP_ST_COUNT; f++) {
		const struct spp_storage *x = &s->storage[f];
		cJSON *o = add_obj(b, st, spp_storage_key((enum spp_storage_fmt)f));

		if (x->applicable) {
			add_num(b, o, "bytes", x->bytes);
			add_num_or_null(b, o, "ratio", x->bytes > 0, x->ratio);
		} else {
			add_null(b, o, "bytes");
			add_null(b, o, "ratio");
			add_bool(b, o, "applicable", 0);
			add_str(b, o, "reason", x->reason[0] ? x->reason : "not applicable");
		}
	}
}

/*
 * A layer whose dtype has no zero test: its status and why, then the same
 * figure keys as an analysed layer, all null, so every reader finds the
 * fields where it expects them and shows them as unknown.
 */
static void build_unsupported(struct build *b, cJSON *o, const struct spp_layer_static *s)
{
	static const char *const pattern_keys[] = {"class", "zero_rows", "zero_cols"};
	static const char *const row_keys[] = {"min", "max", "mean", "cv"};
	static const char *const flops_keys[] = {"dense", "sparse", "theoretical_speedup", "combined",
						 "combined_speedup"};
	cJSON *p, *r, *fl, *st;
	char key[16];

	add_str(b, o, "status", "unsupported dtype");
	add_str(b, o, "reason", s->reason);
	add_null(b, o, "nnz");
	add_null(b, o, "sparsity");
	p = add_obj(b, o, "pattern");
	for (size_t i = 0; i < sizeof(pattern_keys) / sizeof(pattern_keys[0]); i++)
		add_null(b, p, pattern_keys[i]);
	for (int i = 0; i < SPP_NNM; i++)
		add_null(b, p, spp_nm_patterns[i].key);
	for (int i = 0; i < SPP_NBLOCK; i++) {
		snprintf(key, sizeof(key), "block%d", spp_block_sizes[i]);
		add_null(b, p, key);
	}
	r = add_obj(b, p, "row_nnz");
	for (size_t i = 0; i < sizeof(row_keys) / sizeof(row_keys[0]); i++)
		add_null(b, r, row_keys[i]);
	fl = add_obj(b, o, "flops");
	for (size_t i = 0; i < sizeof(flops_keys) / sizeof(flops_keys[0]); i++)
		add_null(b, fl, flops_keys[i]);
	st = add_obj(b, o, "storage");
	for (int f = 0; f < SPP_ST_COUNT; f++) {
		cJSON *x = add_obj(b, st, spp_storage_key((enum spp_storage_fmt)f));

		add_null(b, x, "bytes");
		add_null(b, x, "ratio");
	}
	add_arr(b, o, "runs");
	add_null(b, o, "dense_candidates");
	add_null(b, o, "activations");
	add_obj(b, o, "breakeven");
	add_null(b, o, "recommendation");
}

static cJSON *build_layer(struct build *b, const struct spp_layer *l,
			  const struct spp_layer_static *s,
			  const struct spp_layer_runs *runs)
{
	cJSON *o = checked(b, cJSON_CreateObject());
	cJSON *shape, *fl, *ra;

	if (!o)
		return NULL;
	add_str(b, o, "name", l->name);
	add_str(b, o, "op", spp_op_name(l->op));
	/* the graph node and its op type; null for formats without a graph */
	add_str(b, o, "node", l->node_name);
	add_str(b, o, "op_type", l->op_type);
	add_str(b, o, "dtype", l->weight ? spp_dtype_name(l->weight->dtype) : NULL);
	shape = add_arr(b, o, "shape");
	for (int d = 0; l->weight && d < l->weight->ndim && d < SPP_MAX_DIMS; d++)
		push(b, shape, cJSON_CreateNumber((double)l->weight->shape[d]));
	add_num(b, o, "m", (double)l->view.m);
	add_num(b, o, "k", (double)l->view.k);
	add_num(b, o, "n", (double)l->n);
	add_str(b, o, "n_source", l->n_source);
	add_num(b, o, "numel", (double)s->numel);
	if (s->unsupported) {
		build_unsupported(b, o, s);
		return o;
	}
	add_num(b, o, "nnz", (double)s->counts.nnz);
	add_num_or_null(b, o, "sparsity", s->numel > 0, s->sparsity);
	build_pattern(b, o, s);
	fl = add_obj(b, o, "flops");
	add_num(b, fl, "dense", s->flops_dense);
	add_num(b, fl, "sparse", s->flops_sparse);
	add_num_or_null(b, fl, "theoretical_speedup",
			s->counts.nnz > 0 && s->theoretical_speedup > 0,
			s->theoretical_speedup);
	/* with the X the runs used; build_activations() gives the static estimate */
	add_fig(b, fl, "combined", runs && runs->act.source[0] ? runs->act.flops_combined : NAN);
	add_fig(b, fl, "combined_speedup", runs && runs->act.source[0] ? runs->act.combined_speedup : NAN);
	build_storage(b, o, s);
	ra = add_arr(b, o, "runs");
	for (int i = 0; runs && i < runs->nruns; i++)
		push(b, ra, build_run(b, &runs->runs[i]));
	build_dense_choice(b, o, runs);
	return o;
}

/*
 * The layer's activations: those of the runs (measured on X as run), or,
 * in a static report with --act-sparsity A, the expectation for i.i.d.
 * zeros (DESIGN section 3: combined = 2 nnz N (1 - A)); null otherwise.
 */
static void build_activations(struct build *b, cJSON *o, const struct spp_analysis *a, int i)
{
	const struct spp_layer_derived *d = a->derived ? &a->derived[i] : NULL;
	const struct spp_act_figures *x = a->runs ? &a->runs[i].act : NULL;
	cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "flops"), *ac;

	if (x && x->source[0]) {
		ac = add_obj(b, o, "activations");
		add_str(b, ac, "source", x->source);
		add_str(b, ac, "path", x->path[0] ? x->path : NULL);
		add_fig(b, ac, "requested", x->requested);
		add_fig(b, ac, "sparsity", x->sparsity);
		add_num(b, ac, "zero_rows", (double)x->zero_rows);
		add_str(b, ac, "combined_from", "X as run");
		return;
	}
	if (a->runs || !(a->opts.act_sparsity > 0)) {
		add_null(b, o, "activations");
		return;
	}
	ac = add_obj(b, o, "activations");
	add_str(b, ac, "source", "synthetic");
	add_null(b, ac, "path");
	add_num(b, ac, "requested", a->opts.act_sparsity);
	add_num(b, ac, "sparsity", a->opts.act_sparsity);
	add_null(b, ac, "zero_rows");
	add_str(b, ac, "combined_from", "expected for i.i.d. zeros: 2 nnz N (1 - sparsity)");
	if (fl && d && isfinite(d->expected_combined)) {
		cJSON_ReplaceItemInObjectCaseSensitive(fl, "combined",
						       checked(b, cJSON_CreateNumber(d->expected_combined)));
		if (isfinite(d->expected_combined_speedup))
			cJSON_ReplaceItemInObjectCaseSensitive(
				fl, "combined_speedup",
				checked(b, cJSON_CreateNumber(d->expected_combined_speedup)));
	}
}

/* A layer with its breakeven (empty without a sweep) and recommendation (null without runs). */
static cJSON *build_layer_all(struct build *b, const struct spp_analysis *a, int i)
{
	cJSON *o = build_layer(b, &a->layers[i], &a->stats[i], a->runs ? &a->runs[i] : NULL);
	cJSON *be, *rec, *diag;

	if (!o || a->stats[i].unsupported)
		return o;
	build_activations(b, o, a, i);
	be = checked(b, spp_report_breakeven(a, i));
	if (be)
		cJSON_AddItemToObject(o, "breakeven", be);
	rec = checked(b, spp_report_recommendation(a, i));
	if (rec)
		cJSON_AddItemToObject(o, "recommendation", rec);
	diag = checked(b, spp_report_diagnosis(a, i));
	if (diag)
		cJSON_AddItemToObject(o, "diagnosis", diag);
	return o;
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
	fl = add_obj(b, s, "flops");
	add_num(b, fl, "dense", m->flops_dense);
	add_num(b, fl, "sparse", m->flops_sparse);
	add_fig(b, fl, "theoretical_speedup", m->theoretical_speedup);
	pj = checked(b, spp_report_projection(a));
	if (pj && s)
		cJSON_AddItemToObject(s, "projection", pj);
	else
		cJSON_Delete(pj);
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
	build_model(&b, root, a);
	build_machine(&b, root, a);
	build_settings(&b, root, a);
	layers = add_arr(&b, root, "layers");
	for (int i = 0; i < a->nlayers && !b.oom; i++)
		push(&b, layers, build_layer_all(&b, a, i));
	build_summary(&b, root, a);
	warnings = add_arr(&b, root, "warnings");
	for (int i = 0; i < a->nwarnings; i++)
		push(&b, warnings, cJSON_CreateString(a->warnings[i]));
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

int spp_report_write_json(const cJSON *report, FILE *f, struct spp_error *err)
{
	cJSON *copy = cJSON_Duplicate(report, 1);
	char *text = NULL;
	int rc = SPP_OK;

	if (!copy || exact_numbers(copy) || !(text = cJSON_Print(copy))) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory printing the report");
		goto done;
	}
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF || ferror(f))
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				   strerror(errno));
done:
	cJSON_free(text);
	cJSON_Delete(copy);
	return rc;
}
