/*
 * A layer's kernel runs read back from its report object: the inverse of
 * the writer (json_layers.c build_run, machine.c spp_report_dense_choice,
 * cache.c spp_report_cache), so that `spprof merge` puts the runs of each
 * part into one analysis and derives its figures as one run would. A
 * figure the writer leaves null comes back NAN (or "" / 0), as it was or
 * as the writer would show it; cJSON prints doubles so that they parse
 * back to the same value. Only what was measured is taken: a time that is
 * negative, or missing where the status says the run was timed, is refused,
 * and every figure derived from the times is computed again
 * (spp_report_runs_refigure), never copied.
 */
#include "reports/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/run_dense.h"
#include "reports/json_values.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A dimension of a layer object (m, k, n); 0 when it is not one. */
static int64_t dim(const cJSON *layer, const char *k)
{
	return spp_json_int(get(layer, k), 0, INT64_C(1) << 50, 0);
}

/* The format of a sweep entry keyed "cpu/<format>" (the sweeps are the CPU's); NULL otherwise. */
static const char *cpu_format(const cJSON *e)
{
	return cJSON_IsObject(e) && e->string && strncmp(e->string, "cpu/", 4) == 0 ? e->string + 4 : NULL;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A measured figure at k: a count, ratio or error, so unknown unless finite and not negative. */
static double measured(const cJSON *o, const char *k)
{
	double v = num(o, k);

	return v >= 0 && isfinite(v) ? v : NAN;
}

static void str(const cJSON *o, const char *k, char *buf, size_t n)
{
	const cJSON *v = get(o, k);

	snprintf(buf, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int status_of(const cJSON *o, const char *k, enum spp_run_status *out)
{
	const cJSON *v = get(o, k);

	for (int s = SPP_RUN_OK; s <= SPP_RUN_UNSUPPORTED; s++)
		if (cJSON_IsString(v) && strcmp(v->valuestring, spp_run_status_name((enum spp_run_status)s)) == 0) {
			*out = (enum spp_run_status)s;
			return 0;
		}
	return -1;
}

/*
 * A time object ({median, p10, p90, repeats} in ns) into out; timed: the
 * status says it was measured. -1 when a time is negative, or missing or
 * not positive where timed: no measurement gives that.
 */
static int time_of(const cJSON *t, int timed, struct spp_time_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->median = out->p10 = out->p90 = NAN;
	if (!cJSON_IsObject(t))
		return timed || (t && !cJSON_IsNull(t)) ? -1 : 0;
	out->median = num(t, "median");
	out->p10 = num(t, "p10");
	out->p90 = num(t, "p90");
	out->ci_low = num(t, "ci_low");
	out->ci_high = num(t, "ci_high");
	out->repeats = (int)spp_json_int(get(t, "repeats"), 0, INT32_MAX, 0);
	if (out->median < 0 || out->p10 < 0 || out->p90 < 0 ||
	    (timed && (!(out->median > 0) || !isfinite(out->median) || out->repeats < 1)))
		return -1;
	if (out->repeats == 0) /* not timed: no figure stands on it */
		out->median = out->p10 = out->p90 = NAN;
	return 0;
}

static int bad_time(struct spp_error *err, const char *where, const char *what)
{
	return spp_error_set(err, SPP_E_FORMAT, "%s: %s has a negative or missing time", where, what);
}

static void cache_of(const cJSON *c, struct spp_cache_figures *f)
{
	const cJSON *pt = get(c, "per_thread"), *e;
	int i = 0;

	spp_cache_figures_init(f);
	if (!cJSON_IsObject(c))
		return;
	str(c, "source", f->source, sizeof(f->source));
	for (int ev = 0; ev < SPP_CEV_COUNT; ev++)
		f->v[ev] = num(c, spp_counter_event_name((enum spp_counter_event)ev));
	f->l1d_miss_rate = num(c, "l1d_miss_rate");
	f->l2_miss_rate = num(c, "l2_miss_rate");
	f->llc_miss_rate = num(c, "llc_miss_rate");
	f->dram_bytes = num(c, "dram_bytes");
	str(c, "dram_from", f->dram_from, sizeof(f->dram_from));
	f->dram_gbs = num(c, "dram_gbs");
	f->dram_over_model = num(c, "dram_over_model");
	f->runs = num(c, "runs");
	f->sampled = num(c, "sampled");
	str(c, "geometry", f->geometry, sizeof(f->geometry));
	str(c, "note", f->note, sizeof(f->note));
	cJSON_ArrayForEach(e, get(pt, "l1d_misses"))
		if (i < SPP_COUNTERS_MAX_THREADS)
			f->thread_l1d[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
	f->nthreads = i;
	i = 0;
	cJSON_ArrayForEach(e, get(pt, "llc_misses"))
		if (i < SPP_COUNTERS_MAX_THREADS)
			f->thread_llc[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
}

static void gpu_of(const cJSON *g, struct spp_gpu_figures *out)
{
	spp_gpu_figures_init(out);
	if (!cJSON_IsObject(g))
		return;
	str(g, "source", out->source, sizeof(out->source));
	out->dram_read_bytes = num(g, "dram_read_bytes");
	out->dram_write_bytes = num(g, "dram_write_bytes");
	out->l2_hit_rate = num(g, "l2_hit_rate");
	out->l1_hit_rate = num(g, "l1_hit_rate");
	out->achieved_occupancy = num(g, "achieved_occupancy");
	out->sm_active_imbalance = num(g, "sm_active_imbalance");
	out->branch_efficiency = num(g, "branch_efficiency");
	str(g, "note", out->note, sizeof(out->note));
}

static int epilogue_of(const cJSON *e, struct spp_run_epilogue *out)
{
	const cJSON *bias = get(e, "bias");

	memset(out, 0, sizeof(*out));
	out->saving = NAN;
	if (!cJSON_IsObject(e))
		return 0;
	for (int k = 0; k < SPP_EPILOGUE_COUNT; k++)
		if (cJSON_IsString(get(e, "kind")) &&
		    strcmp(get(e, "kind")->valuestring, spp_epilogue_name((enum spp_epilogue)k)) == 0)
			out->kind = (enum spp_epilogue)k;
	/* the writer's two static strings */
	out->bias_source = cJSON_IsString(bias) && strcmp(bias->valuestring, "model") == 0 ? "model" : "zeros";
	if (status_of(e, "status", &out->status))
		out->status = SPP_RUN_FAILED;
	str(e, "reason", out->reason, sizeof(out->reason));
	/* the saving is derived again from the two times (spp_layer_runs_refigure) */
	return time_of(get(e, "fused_time_ns"), out->status == SPP_RUN_OK, &out->fused) ||
	       time_of(get(e, "unfused_time_ns"), out->status == SPP_RUN_OK, &out->unfused) ? -1 : 0;
}

static int run_of(const cJSON *r, struct spp_run *out, const char *where, struct spp_error *err)
{
	const cJSON *backend = get(r, "backend"), *lv = get(r, "bw_level"), *cp = get(r, "copy_ns");

	if (!cJSON_IsString(backend) || (strcmp(backend->valuestring, "cpu") && strcmp(backend->valuestring, "cuda")))
		return spp_error_set(err, SPP_E_FORMAT, "%s: a run's backend is not cpu or cuda", where);
	spp_run_init(out, strcmp(backend->valuestring, "cpu") == 0 ? "cpu" : "cuda", "");
	str(r, "format", out->format, sizeof(out->format));
	str(r, "precision", out->precision, sizeof(out->precision));
	str(r, "candidate", out->candidate, sizeof(out->candidate));
	str(r, "library", out->library, sizeof(out->library));
	if (status_of(r, "status", &out->status))
		return spp_error_set(err, SPP_E_FORMAT, "%s: run '%s' has no known status", where, out->format);
	str(r, "reason", out->reason, sizeof(out->reason));
	if (time_of(get(r, "time_ns"), out->status == SPP_RUN_OK, &out->time))
		return bad_time(err, where, out->format[0] ? out->format : "a run");
	/* the measured figures (SPP_FIG_READ); the derived ones are computed again (spp_layer_runs_refigure) */
#define READ(key, member, when, flags, title, cell, fmt) \
	if ((flags) & SPP_FIG_READ) \
		out->member = measured(r, key);
	SPP_RUN_FIGURES(READ)
#undef READ
	out->bw_level = -1;
	for (int l = 0; l < SPP_BW_LEVELS; l++)
		if (cJSON_IsString(lv) && strcmp(lv->valuestring, spp_bw_level_name((enum spp_bw_level)l)) == 0)
			out->bw_level = l;
	out->copy_ns[0] = num(cp, "h2d_w");
	out->copy_ns[1] = num(cp, "h2d_x");
	out->copy_ns[2] = num(cp, "d2h_y");
	for (int c = 0; c < 3; c++)
		if (out->copy_ns[c] < 0)
			return bad_time(err, where, "a copy");
	cache_of(get(r, "cache"), &out->cache);
	cache_of(get(r, "cache_sim"), &out->cache_sim);
	gpu_of(get(r, "gpu"), &out->gpu);
	if (epilogue_of(get(r, "epilogue"), &out->epi))
		return bad_time(err, where, "its epilogue");
	return 0;
}

static int dense_of(const cJSON *d, const cJSON *layer, struct spp_dense_choice *ch)
{
	const cJSON *c;

	memset(ch, 0, sizeof(*ch));
	ch->winner = -1;
	if (!cJSON_IsObject(d))
		return 0;
	ch->m = dim(layer, "m");
	ch->k = dim(layer, "k");
	ch->n = dim(layer, "n");
	str(d, "measured_on", ch->measured_on, sizeof(ch->measured_on));
	ch->threads = (int)spp_json_int(get(d, "threads"), 0, 1 << 20, 0);
	cJSON_ArrayForEach(c, get(d, "candidates")) {
		struct spp_dense_timing *t = &ch->t[ch->nt];

		if (ch->nt >= SPP_DENSE_MAX)
			break;
		str(c, "name", t->name, sizeof(t->name));
		str(c, "library", t->library, sizeof(t->library));
		if (status_of(c, "status", &t->status))
			t->status = SPP_RUN_FAILED;
		str(c, "reason", t->reason, sizeof(t->reason));
		if (time_of(get(c, "time_ns"), 0, &t->time))
			return -1;
		t->gflops = t->relative = NAN;
		t->max_error = num(c, "max_error");
		ch->nt++;
	}
	/* the winner, its rate and each one's relative speed from the times, as the run chose */
	return spp_dense_choose(ch, NULL, NULL);
}

static void act_of(const cJSON *layer, struct spp_act_figures *x)
{
	const cJSON *a = get(layer, "activations"), *fl = get(layer, "flops");

	memset(x, 0, sizeof(*x));
	x->requested = x->sparsity = x->flops_combined = x->combined_speedup = NAN;
	if (!cJSON_IsObject(a))
		return;
	str(a, "source", x->source, sizeof(x->source));
	str(a, "path", x->path, sizeof(x->path));
	x->requested = num(a, "requested");
	x->sparsity = num(a, "sparsity");
	x->zero_rows = spp_json_int(get(a, "zero_rows"), 0, INT64_C(1) << 50, 0);
	x->flops_combined = num(fl, "combined");
	x->combined_speedup = num(fl, "combined_speedup");
}

int spp_report_layer_runs(const cJSON *layer, const char *path, struct spp_layer_runs *out,
			  struct spp_error *err)
{
	const cJSON *runs = get(layer, "runs"), *r, *name = get(layer, "name");
	char where[512];
	int n = cJSON_GetArraySize(runs), rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(where, sizeof(where), "'%s': layer '%s'", path,
		 cJSON_IsString(name) ? name->valuestring : "?");
	if (!cJSON_IsArray(runs))
		return spp_error_set(err, SPP_E_FORMAT, "%s: \"runs\" is not a list", where);
	out->runs = calloc((size_t)(n > 0 ? n : 1), sizeof(*out->runs));
	if (!out->runs)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	cJSON_ArrayForEach(r, runs) {
		if ((rc = run_of(r, &out->runs[out->nruns], where, err)))
			break;
		out->nruns++;
	}
	if (rc) {
		spp_layer_runs_release(out);
		return rc;
	}
	if (dense_of(get(layer, "dense_candidates"), layer, &out->dense)) {
		spp_layer_runs_release(out);
		return bad_time(err, where, "a dense candidate");
	}
	/* a shape's choice made on an earlier layer is shared, as the memo shares it */
	out->dense_shared = out->dense.nt > 0 && cJSON_IsString(name) &&
			    strcmp(out->dense.measured_on, name->valuestring) != 0;
	act_of(layer, &out->act);
	return 0;
}

/*
 * A curve point back: {sparsity, time_ns, dense_time_ns, speedup_ci_low,
 * speedup_ci_high}, its speedup from the times; -1: a negative time.
 */
static int point_of(const cJSON *p, struct spp_sweep_point *out)
{
	out->sparsity = num(p, "sparsity");
	out->time_ns = num(p, "time_ns");
	out->dense_time_ns = num(p, "dense_time_ns");
	out->speedup = out->time_ns > 0 ? out->dense_time_ns / out->time_ns : NAN;
	/* NAN in a report older than the intervals */
	out->speedup_ci_low = num(p, "speedup_ci_low");
	out->speedup_ci_high = num(p, "speedup_ci_high");
	return out->time_ns < 0 || out->dense_time_ns < 0 ? -1 : 0;
}

int spp_report_layer_sweep(const cJSON *layer, const char *path, struct spp_sweep *out,
			   struct spp_error *err)
{
	const cJSON *be = get(layer, "breakeven"), *e;
	const char *name = cJSON_GetStringValue(get(layer, "name"));
	int n = cJSON_GetArraySize(be);

	memset(out, 0, sizeof(*out));
	out->m = dim(layer, "m");
	out->k = dim(layer, "k");
	out->n = dim(layer, "n");
	if (!cJSON_IsObject(be) || n == 0)
		return 0;
	if (!(out->results = calloc((size_t)n, sizeof(*out->results))))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	cJSON_ArrayForEach(e, be) {
		struct spp_sweep_result *r = &out->results[out->nresults];
		const cJSON *p, *curve = get(e, "curve");
		const char *format = cpu_format(e);

		if (!format) {
			spp_sweep_release(out);
			return spp_error_set(err, SPP_E_FORMAT, "'%s': a breakeven key '%s' is not "
					     "cpu/<format>", path, e->string);
		}
		out->nresults++;
		r->backend = "cpu"; /* the sweep is the CPU's */
		snprintf(r->format, sizeof(r->format), "%s", format);
		str(e, "reason", r->reason, sizeof(r->reason));
		r->curve = calloc((size_t)(cJSON_GetArraySize(curve) > 0 ? cJSON_GetArraySize(curve) : 1),
				  sizeof(*r->curve));
		if (!r->curve) {
			spp_sweep_release(out);
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		}
		cJSON_ArrayForEach(p, curve)
			if (point_of(p, &r->curve[r->npoints++])) {
				spp_sweep_release(out);
				return spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s': breakeven of %s "
						     "has a negative time", path, name ? name : "?", format);
			}
		r->breakeven = spp_sweep_breakeven(r->curve, r->npoints);
		spp_sweep_bracket(r->curve, r->npoints, r->breakeven, &r->breakeven_low,
				  &r->breakeven_high);
	}
	return 0;
}

/* One format's speedup against N back from its "n_sweep" entry; -1: a negative time. */
static int nresult_of(const cJSON *e, const char *format, double sparsity, struct spp_nsweep_result *r)
{
	const cJSON *p;

	r->backend = "cpu"; /* the N sweep is the CPU's */
	snprintf(r->format, sizeof(r->format), "%s", format);
	str(e, "reason", r->reason, sizeof(r->reason));
	cJSON_ArrayForEach(p, get(e, "curve")) {
		if (r->npoints >= SPP_NSWEEP_MAX_N)
			break;
		if (point_of(p, &r->curve[r->npoints]))
			return -1;
		r->curve[r->npoints].sparsity = sparsity;
		r->n[r->npoints++] = spp_json_int(get(p, "n"), 1, INT64_C(1) << 31, 1);
	}
	/* where it wins and the crossings, from the speedups, as the sweep derived them */
	spp_nsweep_derive(r);
	return 0;
}

int spp_report_layer_nsweep(const cJSON *layer, const char *path, struct spp_nsweep *out,
			    struct spp_error *err)
{
	const cJSON *ns = get(layer, "n_sweep"), *e;
	int n = cJSON_GetArraySize(ns);

	memset(out, 0, sizeof(*out));
	out->m = dim(layer, "m");
	out->k = dim(layer, "k");
	out->sparsity = num(layer, "sparsity") < 1 ? num(layer, "sparsity") : 0;
	if (!cJSON_IsObject(ns) || n == 0)
		return 0;
	if (!(out->results = calloc((size_t)n, sizeof(*out->results))))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	cJSON_ArrayForEach(e, ns) {
		const char *format = cpu_format(e);

		if (!format) {
			spp_nsweep_release(out);
			return spp_error_set(err, SPP_E_FORMAT, "'%s': an n_sweep key '%s' is not "
					     "cpu/<format>", path, e->string);
		}
		if (nresult_of(e, format, out->sparsity, &out->results[out->nresults++])) {
			spp_nsweep_release(out);
			return spp_error_set(err, SPP_E_FORMAT, "'%s': layer '%s': n_sweep of %s has a "
					     "negative time", path, cJSON_GetStringValue(get(layer, "name")) ?
					     cJSON_GetStringValue(get(layer, "name")) : "?", format);
		}
	}
	return 0;
}

void spp_report_runs_refigure(const struct spp_analysis *a, int i, const struct spp_bw_model *bw)
{
	const struct spp_layer *l = &a->layers[i];
	struct spp_run_layer L = {l->view.m, l->view.k, l->n, a->stats[i].counts.nnz,
				  a->stats[i].theoretical_speedup};

	spp_layer_runs_refigure(&a->runs[i], &L, bw);
}

void spp_report_bw_of(const cJSON *report, struct spp_bw_model *bw)
{
	const cJSON *cal = get(get(report, "machine"), "calibration"), *lv = get(cal, "levels");
	int threads = (int)spp_json_int(get(get(report, "settings"), "run_threads"), 0, 1 << 20, -1);

	memset(bw, 0, sizeof(*bw));
	/* a calibration of other threads is no yardstick of these runs (spp_bw_model_init) */
	if (!cJSON_IsObject(cal) || spp_json_int(get(cal, "threads"), 0, 1 << 20, -2) != threads)
		return;
	for (int l = 0; l < SPP_BW_LEVELS; l++) {
		double g = num(get(lv, spp_bw_level_name((enum spp_bw_level)l)), "read_gbs");

		bw->gbs[l] = g > 0 && isfinite(g) ? g : 0;
	}
	bw->peak_gflops = num(cal, "peak_gflops") > 0 && isfinite(num(cal, "peak_gflops"))
			  ? num(cal, "peak_gflops") : 0;
}
