/*
 * A run's result (profiler/run_result.h): its status, the figures of DESIGN
 * section 4 from its medians, the output check against dense, and the
 * figures one run takes from another. Pure functions of the result model.
 */
#include "profiler/run_result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *spp_run_status_name(enum spp_run_status s)
{
	switch (s) {
	case SPP_RUN_OK:
		return "ok";
	case SPP_RUN_FAILED:
		return "failed";
	case SPP_RUN_NOT_APPLICABLE:
		return "not_applicable";
	case SPP_RUN_UNSUPPORTED:
		return "unsupported";
	}
	return "?";
}

const struct spp_run_figure spp_run_figure_rows[] = {
#define ROW(key, member, when, flags, title, cell, fmt) {key, when, flags, title, cell, fmt},
	SPP_RUN_FIGURES(ROW)
#undef ROW
};
const int spp_run_figure_nrows = (int)(sizeof(spp_run_figure_rows) / sizeof(spp_run_figure_rows[0]));

int spp_run_figure_known(const struct spp_run *r, enum spp_fig_when when)
{
	switch (when) {
	case SPP_FIG_TIMED:
		return r->status == SPP_RUN_OK && r->time.repeats > 0;
	case SPP_FIG_OK:
		return r->status == SPP_RUN_OK;
	default:
		return 1;
	}
}

void spp_run_figures(const struct spp_run_inputs *in, struct spp_run *r)
{
	double flops = in->flops > 0 ? in->flops : 2.0 * (double)in->nnz * (double)in->n;
	double x = in->x_bytes > 0 ? in->x_bytes : 4.0 * (double)in->k * (double)in->n;

	r->speedup = r->efficiency = r->gap = r->gflops = r->peak_share = NAN;
	r->bytes_moved = r->bandwidth_gbs = r->bw_util = r->intensity = NAN;
	r->bw_level = -1;
	if (in->bytes_moved > 0)
		r->bytes_moved = in->bytes_moved;
	else if (in->w_bytes >= 0)
		r->bytes_moved = in->w_bytes + x + 4.0 * (double)in->m * (double)in->n;
	if (r->bytes_moved > 0)
		r->intensity = flops / r->bytes_moved;
	if (!(in->t_ns > 0))
		return;
	if (in->t_dense_ns > 0)
		r->speedup = in->t_dense_ns / in->t_ns;
	if (in->theoretical_speedup > 0 && isfinite(r->speedup)) {
		r->efficiency = r->speedup / in->theoretical_speedup;
		r->gap = 1 - r->efficiency;
	}
	/* FLOP/ns and byte/ns are G per second */
	r->gflops = flops / in->t_ns;
	if (isfinite(r->bytes_moved)) {
		r->bandwidth_gbs = r->bytes_moved / in->t_ns;
		if (in->bw) {
			enum spp_bw_level l = spp_bw_level_of(in->bw->cap, r->bytes_moved, in->bw->cold);

			if (in->bw->gbs[l] > 0) {
				r->bw_level = (int)l;
				r->bw_util = r->bandwidth_gbs / in->bw->gbs[l];
			}
		}
	}
}

void spp_run_bound(const struct spp_run *r, const struct spp_run *dense, double target,
		   struct spp_run_bound *b)
{
	b->dense_share = dense && dense->gflops > 0 ? r->gflops / dense->gflops : NAN;
	b->scale = r->speedup > 0 ? target / r->speedup : NAN;
	b->need_gbs = r->bandwidth_gbs * b->scale;
	b->need_bw_util = r->bw_util * b->scale;
	b->need_gflops = r->gflops * b->scale;
	b->need_dense_share = b->dense_share * b->scale;
}

void spp_layer_runs_release(struct spp_layer_runs *r)
{
	if (!r)
		return;
	free(r->runs);
	r->runs = NULL;
	r->nruns = 0;
}

void spp_gpu_figures_init(struct spp_gpu_figures *g)
{
	memset(g, 0, sizeof(*g));
	g->dram_read_bytes = g->dram_write_bytes = NAN;
	g->l2_hit_rate = g->l1_hit_rate = g->achieved_occupancy = NAN;
	g->sm_active_imbalance = g->branch_efficiency = NAN;
}

void spp_run_set_status(struct spp_run *r, enum spp_run_status s, const char *fmt, ...)
{
	va_list ap;

	r->status = s;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

void spp_run_init(struct spp_run *r, const char *backend, const char *format)
{
	memset(r, 0, sizeof(*r));
	r->backend = backend;
	snprintf(r->format, sizeof(r->format), "%s", format);
	snprintf(r->precision, sizeof(r->precision), "fp32");
	r->speedup = r->efficiency = r->gap = r->gflops = NAN;
	r->speedup_ci_low = r->speedup_ci_high = NAN;
	r->rounds_discarded = r->rounds_disturbed = NAN;
	r->bytes_moved = r->bandwidth_gbs = r->bw_util = r->intensity = NAN;
	r->bw_level = -1;
	r->imbalance = r->nnz_imbalance = r->max_error = NAN;
	r->speedup_weight_only = NAN;
	r->copy_ns[0] = r->copy_ns[1] = r->copy_ns[2] = NAN;
	r->epi.saving = NAN;
	spp_cache_figures_init(&r->cache);
	spp_cache_figures_init(&r->cache_sim);
	spp_gpu_figures_init(&r->gpu);
}

int spp_run_check(const float *y, const float *yd, const float *b, int64_t m,
		 int64_t n, double rtol, double *worst, int64_t *wi, int64_t *wj)
{
	int ok = 1;

	*worst = 0;
	*wi = *wj = -1;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double a = y[i * n + j], d = yd[i * n + j], s = b[i * n + j];
			double diff = fabs(a - d);
			double rel = s > 0 ? diff / s : (diff > 0 ? INFINITY : 0);

			if (isnan(a) && isnan(d))
				continue;
			if (a == d)
				continue;
			if (!(diff <= rtol * s)) {
				if (ok || !(rel <= *worst)) {
					*worst = isnan(rel) ? INFINITY : rel;
					*wi = i;
					*wj = j;
				}
				ok = 0;
			} else if (ok && rel > *worst) {
				*worst = rel;
				*wi = i;
				*wj = j;
			}
		}
	return ok;
}

/*
 * DRAM traffic of c beside r's time and DESIGN section 4's traffic model.
 * A simulated count over a measured time would mix two sources in one
 * figure: dram_gbs is given only where the counts are the hardware's.
 */
static void cache_dram(const struct spp_run *r, struct spp_cache_figures *c)
{
	if (!c->source[0] || !isfinite(c->dram_bytes))
		return;
	if (r->time.median > 0 && strcmp(c->source, "sim") != 0)
		c->dram_gbs = c->dram_bytes / r->time.median;
	if (r->bytes_moved > 0)
		c->dram_over_model = c->dram_bytes / r->bytes_moved;
}

void spp_run_cache_dram(struct spp_run *r)
{
	cache_dram(r, &r->cache);
	cache_dram(r, &r->cache_sim);
}

/* Whether a format key names an activation-skipping kernel ("<format>_act"). */
int spp_run_act_kernel(const char *key)
{
	size_t len = strlen(key);

	return len > 4 && strcmp(key + len - 4, "_act") == 0;
}

/* Each timed "<format>_act" run against the timed run of "<format>". */
void spp_run_weight_only(struct spp_layer_runs *out)
{
	for (int i = 0; i < out->nruns; i++) {
		struct spp_run *r = &out->runs[i];
		size_t len = strlen(r->format);

		if (!spp_run_act_kernel(r->format) || r->time.repeats == 0)
			continue;
		for (int j = 0; j < out->nruns; j++) {
			const struct spp_run *b = &out->runs[j];

			if (b->time.repeats > 0 && strlen(b->format) == len - 4 &&
			    strncmp(b->format, r->format, len - 4) == 0 && strcmp(b->backend, r->backend) == 0 &&
			    r->time.median > 0)
				r->speedup_weight_only = b->time.median / r->time.median;
		}
	}
}

/* The median r's speedup is taken against (spp_layer_runs_refigure); NAN when none. */
static double baseline_ns(const struct spp_layer_runs *out, const struct spp_run *r)
{
	double want = r->speedup * r->time.median;

	for (int j = 0; j < out->nruns; j++) {
		const struct spp_run *x = &out->runs[j];

		if (x->time.repeats == 0 || !(x->time.median > 0) || strcmp(x->backend, r->backend) != 0)
			continue;
		if (strcmp(r->backend, "cpu") == 0 ? strcmp(x->format, "dense") == 0
						   : fabs(x->time.median - want) <= 1e-9 * x->time.median)
			return x->time.median;
	}
	return NAN;
}

static void refigure(const struct spp_layer_runs *out, const struct spp_run_layer *L,
		     const struct spp_bw_model *bw, struct spp_run *r)
{
	int dense = strcmp(r->format, "dense") == 0, cpu = strcmp(r->backend, "cpu") == 0;
	int level = r->bw_level;
	/* the bytes moved are the encoding's and the kernel's, not a time: kept as read */
	struct spp_run_inputs in = {
		.m = L->m, .k = L->k, .n = L->n, .nnz = L->nnz, .w_bytes = -1,
		.theoretical_speedup = L->theoretical_speedup,
		.t_ns = r->time.repeats > 0 ? r->time.median : NAN, .t_dense_ns = baseline_ns(out, r),
		.bytes_moved = isfinite(r->bytes_moved) ? r->bytes_moved : 0,
	};

	/* the work of each kind of run, as spp_device_figures counts it */
	if (dense) {
		in.flops = 2.0 * (double)L->m * (double)L->k * (double)L->n;
		in.theoretical_speedup = 1;
	} else if (spp_run_act_kernel(r->format)) {
		in.flops = out->act.flops_combined;
		in.theoretical_speedup = out->act.combined_speedup;
	}
	spp_run_figures(&in, r);
	if (dense) {
		r->efficiency = r->gap = NAN;
		if (cpu && bw && bw->peak_gflops > 0)
			r->peak_share = r->gflops / bw->peak_gflops;
	}
	/* the calibrated levels are the CPU's */
	if (cpu && bw && level >= 0 && level < SPP_BW_LEVELS && bw->gbs[level] > 0 &&
	    isfinite(r->bandwidth_gbs)) {
		r->bw_level = level;
		r->bw_util = r->bandwidth_gbs / bw->gbs[level];
	}
	r->speedup_weight_only = NAN;
	r->cache.dram_gbs = r->cache.dram_over_model = NAN;
	r->cache_sim.dram_gbs = r->cache_sim.dram_over_model = NAN;
	spp_run_cache_dram(r);
	r->epi.saving = r->epi.fused.repeats && r->epi.unfused.repeats && r->epi.unfused.median > 0
			? 1 - r->epi.fused.median / r->epi.unfused.median : NAN;
}

void spp_layer_runs_refigure(struct spp_layer_runs *out, const struct spp_run_layer *L,
			     const struct spp_bw_model *bw)
{
	/* a run's baseline is found from its own speedup as read and the medians, which stay */
	for (int i = 0; i < out->nruns; i++)
		refigure(out, L, bw, &out->runs[i]);
	spp_run_weight_only(out);
}

void spp_run_speedup_ci(struct spp_run *r, const double *dense, int nd, const double *t, int nt)
{
	double ratio[SPP_BENCH_MAX_ROUNDS];
	int n = 0;

	for (int i = 0; i < nd && i < nt && n < SPP_BENCH_MAX_ROUNDS; i++)
		if (dense[i] > 0 && t[i] > 0)
			ratio[n++] = dense[i] / t[i];
	spp_median_ci95(ratio, n, &r->speedup_ci_low, &r->speedup_ci_high);
}
