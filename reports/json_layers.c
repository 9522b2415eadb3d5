/*
 * The layers of the report tree (DESIGN section 6): each layer's static
 * figures, its runs with their counter and CUPTI figures, its activations,
 * breakeven, recommendation and diagnosis. json.c builds the rest.
 */
#include "reports/json_build.h"
#include "reports/report.h"

#include <stdio.h>

#include "reports/cache.h"
#include "reports/json_breakeven.h"

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

/* --epilogue: the fused and unfused variants of a format's run; null when not asked for. */
static void build_epilogue(struct build *b, cJSON *o, const struct spp_run_epilogue *e)
{
	int ok = e->status == SPP_RUN_OK;
	cJSON *t;

	if (e->kind == SPP_EPILOGUE_NONE) {
		add_null(b, o, "epilogue");
		return;
	}
	t = add_obj(b, o, "epilogue");
	add_str(b, t, "kind", spp_epilogue_name(e->kind));
	add_str(b, t, "bias", e->bias_source);
	add_str(b, t, "status", spp_run_status_name(e->status));
	add_str(b, t, "reason", ok ? NULL : e->reason);
	if (t) {
		cJSON_AddItemToObject(t, "fused_time_ns", checked(b, spp_report_time(ok ? &e->fused : NULL)));
		cJSON_AddItemToObject(t, "unfused_time_ns", checked(b, spp_report_time(ok ? &e->unfused : NULL)));
	}
	add_fig(b, t, "saving", ok ? e->saving : NAN);
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
	/* the run figures, one row each (SPP_RUN_FIGURES, profiler/run_result.h) */
#define FIG(key, member, when, flags, title, cell, fmt) \
	add_fig(b, o, key, spp_run_figure_known(r, when) ? r->member : NAN);
	SPP_RUN_FIGURES(FIG)
#undef FIG
	add_str(b, o, "bw_level", timed && r->bw_level >= 0 ? spp_bw_level_name((enum spp_bw_level)r->bw_level) : NULL);
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
	/* the simulator's beside them (--counters A,sim); null when not asked */
	t = checked(b, spp_report_cache(&r->cache_sim));
	if (t)
		cJSON_AddItemToObject(o, "cache_sim", t);
	build_gpu(b, o, &r->gpu);
	build_epilogue(b, o, &r->epi);
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

#define KERNEL_TOP_LISTED 8

/* pattern.kernel of a conv (static.h, struct spp_kernel_counts); null for other layers. */
static void build_kernels(struct build *b, cJSON *p, const struct spp_layer_static *s)
{
	const struct spp_kernel_counts *k = &s->counts.kernel;
	static const char *const cover[] = {"top4", "top8", "top16"};
	cJSON *o, *a;
	char mask[96];

	if (k->size == 0) {
		add_null(b, p, "kernel");
		return;
	}
	o = add_obj(b, p, "kernel");
	a = add_arr(b, o, "shape");
	for (int d = 0; d < k->ndims && a; d++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(k->dims[d])))
			b->oom = 1;
	add_num_or_null(b, o, "patterns", k->patterns >= 0, (double)k->patterns);
	for (int i = 0; i < 3; i++)
		add_fig(b, o, cover[i], s->kernel_cover[i]);
	a = add_arr(b, o, "top");
	for (int i = 0; i < k->ntop && i < KERNEL_TOP_LISTED && a; i++) {
		cJSON *t = cJSON_CreateObject();

		if (!t || !cJSON_AddItemToArray(a, t)) {
			cJSON_Delete(t);
			b->oom = 1;
			return;
		}
		add_str(b, t, "mask", spp_kernel_mask_text(k, k->top_mask[i], mask, sizeof(mask)));
		add_num(b, t, "kernels", (double)k->top_count[i]);
	}
}

/* pattern.along_m and pattern.tightest_n: N:M on both axes. */
static void build_axes(struct build *b, cJSON *p, const struct spp_layer_static *s)
{
	static const char *const axis[SPP_NAXIS] = {"along_k", "along_m"};
	cJSON *m = add_obj(b, p, "along_m"), *t = add_obj(b, p, "tightest_n");
	char key[16];

	for (int i = 0; i < SPP_NNM; i++)
		add_num(b, m, spp_nm_patterns[i].key, s->nm_m[i]);
	for (int a = 0; a < SPP_NAXIS; a++) {
		cJSON *o = add_obj(b, t, axis[a]);

		for (int w = 0; w < SPP_NWIDTH; w++) {
			snprintf(key, sizeof(key), "of%d", spp_nm_widths[w]);
			add_num(b, o, key, (double)s->counts.nm_max[a][w]);
		}
	}
}

/* pattern.granularity: one object per level, null where it does not apply. */
static void build_granularity(struct build *b, cJSON *p, const struct spp_layer_static *s)
{
	cJSON *o = add_obj(b, p, "granularity");

	for (int g = 0; g < SPP_NGRAN; g++) {
		const struct spp_granularity *x = &s->gran[g];
		cJSON *e;

		if (!x->defined) {
			add_null(b, o, spp_gran_name((enum spp_gran_level)g));
			continue;
		}
		e = add_obj(b, o, spp_gran_name((enum spp_gran_level)g));
		add_num(b, e, "units", (double)x->units);
		add_num(b, e, "zero", (double)x->zero);
		add_fig(b, e, "fraction", x->fraction);
		add_fig(b, e, "zeros_share", x->zeros_share);
	}
	add_str(b, p, "layer_state", spp_layer_zero_name(s->layer_zero));
}

/* pattern.provenance: the verdict and the figures behind it. */
static void build_provenance(struct build *b, cJSON *p, const struct spp_layer_static *s)
{
	const struct spp_provenance_counts *c = &s->counts.prov;
	cJSON *o = add_obj(b, p, "provenance");
	int counted = c->status == SPP_PROV_COUNTED;

	add_str(b, o, "verdict", spp_provenance_name(s->prov));
	add_num_or_null(b, o, "rows", counted, (double)c->rows);
	add_num_or_null(b, o, "survivors", counted, (double)c->survivors);
	add_num_or_null(b, o, "scale", counted && c->survivors > 0, (double)c->scale);
	add_fig(b, o, "min_ratio", s->prov_min_ratio);
	add_fig(b, o, "low_share", s->prov_low_share);
	add_str(b, o, "reason", s->prov_reason[0] ? s->prov_reason : NULL);
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
	build_axes(b, p, s);
	build_granularity(b, p, s);
	build_kernels(b, p, s);
	build_provenance(b, p, s);
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
	static const char *const pattern_keys[] = {"class", "zero_rows", "zero_cols", "along_m",
						   "tightest_n", "granularity", "layer_state", "kernel",
						   "provenance"};
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
	/* the bias --epilogue applies: the model's tensor, null when the layer has none */
	add_str(b, o, "bias", l->bias ? l->bias->name : NULL);
	/* the pruning mask folded into the weight (profiler/masks.c); null when none */
	if (l->weight && l->weight->mask) {
		cJSON *mk = add_obj(b, o, "mask");

		add_str(b, mk, "tensor", l->weight->mask);
		add_str(b, mk, "orig", l->weight->mask_of);
	} else {
		add_null(b, o, "mask");
	}
	/* a compressed checkpoint's own bytes for the weight (profiler/compressed.c) */
	if (l->weight && l->weight->stored_as) {
		cJSON *fs = add_obj(b, o, "file_storage");

		add_str(b, fs, "format", l->weight->stored_as);
		add_num(b, fs, "bytes", (double)l->weight->stored_bytes);
	} else {
		add_null(b, o, "file_storage");
	}
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

cJSON *spp_report_layer_runs_json(const struct spp_analysis *a, int i)
{
	const struct spp_layer_runs *runs = &a->runs[i];
	const struct spp_layer *l = &a->layers[i];
	struct build b = {0};
	cJSON *o = checked(&b, cJSON_CreateObject()), *ra, *fl;

	add_num(&b, o, "layer", i);
	add_str(&b, o, "name", l->name);
	add_num(&b, o, "m", (double)l->view.m);
	add_num(&b, o, "k", (double)l->view.k);
	add_num(&b, o, "n", (double)l->n);
	ra = add_arr(&b, o, "runs");
	for (int r = 0; r < runs->nruns; r++)
		push(&b, ra, build_run(&b, &runs->runs[r]));
	build_dense_choice(&b, o, runs);
	fl = add_obj(&b, o, "flops");
	add_fig(&b, fl, "combined", runs->act.source[0] ? runs->act.flops_combined : NAN);
	add_fig(&b, fl, "combined_speedup", runs->act.source[0] ? runs->act.combined_speedup : NAN);
	build_activations(&b, o, a, i); /* the X of the runs, as the report has it */
	if (b.oom) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * The layer's selections as derive.c made them (renderers print these and
 * never choose): best_storage {format, ratio} and fastest {backend,
 * format, speedup, efficiency}; null when there is none, or no derived
 * figures.
 */
static void build_selections(struct build *b, cJSON *o, const struct spp_analysis *a, int i)
{
	const struct spp_layer_derived *d = a->derived ? &a->derived[i] : NULL;
	cJSON *x;

	add_storage_choice(b, o, d ? d->best_storage : -1,
			   d && d->best_storage >= 0 ? a->stats[i].storage[d->best_storage].ratio : NAN);
	if (d && d->fastest >= 0 && a->runs) {
		const struct spp_run *r = &a->runs[i].runs[d->fastest];

		x = add_obj(b, o, "fastest");
		add_str(b, x, "backend", r->backend);
		add_str(b, x, "format", r->format);
		add_num(b, x, "speedup", r->speedup);
		add_fig(b, x, "efficiency", r->efficiency);
	} else {
		add_null(b, o, "fastest");
	}
}

/* A layer with its breakeven (empty without a sweep) and recommendation (null without runs). */
cJSON *spp_json_build_layer(struct build *b, const struct spp_analysis *a, int i)
{
	cJSON *o = build_layer(b, &a->layers[i], &a->stats[i], a->runs ? &a->runs[i] : NULL);
	cJSON *be, *rec, *diag;

	if (!o)
		return o;
	build_selections(b, o, a, i);
	if (a->stats[i].unsupported)
		return o;
	build_activations(b, o, a, i);
	be = checked(b, spp_report_breakeven(a, i));
	if (be)
		cJSON_AddItemToObject(o, "breakeven", be);
	/* speedup against N: only with --n-sweep, so that other reports keep their fields */
	if (a->opts.n_sweep_count) {
		cJSON *ns = checked(b, spp_nsweep_layer_json(a->nsweeps_n ? &a->nsweeps_n[i] : NULL));

		if (ns)
			cJSON_AddItemToObject(o, "n_sweep", ns);
	}
	/* --shard: the shard of the layer's work unit, which times it; only then */
	if (a->opts.shard.count > 0 && a->runs)
		add_num(b, o, "shard", spp_shard_of(&a->layers[i], &a->stats[i], a->opts.shard.count));
	/* --layers / --skip-layers: whether the globs chose the layer for timing; only then */
	if ((a->opts.ntime_globs || a->opts.nskip_globs) && a->runs)
		add_bool(b, o, "timed", spp_analysis_selected(a, i));
	/* --dedupe: the earlier layer whose runs these are; only then, so other reports keep their fields */
	if (a->opts.dedupe && a->runs)
		add_str(b, o, "runs_copied_from", a->runs_from && a->runs_from[i] >= 0
				? a->layers[a->runs_from[i]].name : NULL);
	rec = checked(b, spp_report_recommendation(a, i));
	if (rec)
		cJSON_AddItemToObject(o, "recommendation", rec);
	diag = checked(b, spp_report_diagnosis(a, i));
	if (diag)
		cJSON_AddItemToObject(o, "diagnosis", diag);
	return o;
}
