#include "profiler/sweep.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "profiler/synth_fill.h"

#define DEFAULT_STEPS 5
#define DEFAULT_TOLERANCE 0.005

static const double default_grid[] = {
	0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999,
};

#define NDEFAULT ((int)(sizeof(default_grid) / sizeof(default_grid[0])))

void spp_sweep_opts_init(struct spp_sweep_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->m = o->k = o->n = 1;
	o->pattern = SPP_SYNTH_UNSTRUCTURED;
	o->threads = 1;
	o->refine_steps = DEFAULT_STEPS;
	o->tolerance = DEFAULT_TOLERANCE;
}

void spp_sweep_pattern_name(const struct spp_sweep_opts *o, char *buf, size_t n)
{
	switch (o->pattern) {
	case SPP_SYNTH_NM:
		snprintf(buf, n, "nm%d_%d", o->nm_n, o->nm_m);
		break;
	case SPP_SYNTH_BLOCK:
		snprintf(buf, n, "block%d", o->block);
		break;
	case SPP_SYNTH_CHANNEL:
		snprintf(buf, n, "channel");
		break;
	case SPP_SYNTH_DENSE:
		snprintf(buf, n, "dense");
		break;
	default:
		snprintf(buf, n, "unstructured");
		break;
	}
}

/* The grid the options ask for into g; its length, or -1 (err set). */
static int make_grid(const struct spp_sweep_opts *o, double *g, struct spp_error *err)
{
	int n;

	if (o->m < 1 || o->k < 1 || o->n < 1)
		return spp_error_set(err, SPP_E_USAGE, "sweep shape %lldx%lldx%lld: dims must be >= 1",
				     (long long)o->m, (long long)o->k, (long long)o->n), -1;
	if (o->pattern == SPP_SYNTH_NM) {
		if (o->nm_m < 1 || o->nm_n < 1 || o->nm_n > o->nm_m)
			return spp_error_set(err, SPP_E_USAGE, "sweep pattern nm%d_%d: want 1 <= N <= M",
					     o->nm_n, o->nm_m), -1;
		/* the pattern fixes the sparsity: one point */
		g[0] = 1.0 - (double)o->nm_n / (double)o->nm_m;
		return 1;
	}
	if (o->pattern != SPP_SYNTH_UNSTRUCTURED && o->pattern != SPP_SYNTH_BLOCK &&
	    o->pattern != SPP_SYNTH_CHANNEL)
		return spp_error_set(err, SPP_E_USAGE,
				     "sweep pattern: want unstructured, nmN_M, blockB or channel"), -1;
	if (!o->grid) {
		memcpy(g, default_grid, sizeof(default_grid));
		return NDEFAULT;
	}
	n = o->ngrid;
	if (n < 1 || n > SPP_SWEEP_MAX_GRID)
		return spp_error_set(err, SPP_E_USAGE, "sweep grid of %d points: want 1 to %d",
				     n, SPP_SWEEP_MAX_GRID), -1;
	for (int i = 0; i < n; i++) {
		if (!(o->grid[i] >= 0 && o->grid[i] < 1))
			return spp_error_set(err, SPP_E_USAGE, "sweep grid point %g: want [0, 1)",
					     o->grid[i]), -1;
		if (i && !(o->grid[i] > o->grid[i - 1]))
			return spp_error_set(err, SPP_E_USAGE, "sweep grid: %g after %g, want ascending",
					     o->grid[i], o->grid[i - 1]), -1;
		g[i] = o->grid[i];
	}
	return n;
}

/* Insert a point into r's curve in sparsity order (capacity is the caller's); ci: its speedup's. */
static void add_point(struct spp_sweep_result *r, double s, double t, double td, const double *ci)
{
	int at = r->npoints;

	while (at > 0 && r->curve[at - 1].sparsity > s) {
		r->curve[at] = r->curve[at - 1];
		at--;
	}
	r->curve[at] = (struct spp_sweep_point){s, t, td, td / t, ci[0], ci[1]};
	r->npoints++;
}

__attribute__((format(printf, 2, 3)))
static void append(struct spp_sweep_result *r, const char *fmt, ...)
{
	size_t len = strlen(r->reason);
	va_list ap;

	if (len + 1 >= sizeof(r->reason))
		return;
	if (len) {
		snprintf(r->reason + len, sizeof(r->reason) - len, "; ");
		len = strlen(r->reason);
	}
	va_start(ap, fmt);
	vsnprintf(r->reason + len, sizeof(r->reason) - len, fmt, ap);
	va_end(ap);
}

/* One timing of a single format at s; 1 when it gave a point, 0 not, <0 error. */
static int time_one(const struct spp_sweep_timer *timer, const struct spp_format_ops *f,
		    double s, int64_t n, struct spp_sweep_result *r, struct spp_error *err)
{
	char reason[1][256] = {""};
	double t = NAN, td = NAN, ci[1][2] = {{NAN, NAN}};
	int rc = timer->time(timer->ctx, s, n, &f, 1, &t, &td, ci, reason, err);

	if (rc)
		return rc;
	if (!(t > 0) || !(td > 0)) {
		append(r, "refinement stopped at %.4g: %s", s, reason[0][0] ? reason[0] : "no time");
		return 0;
	}
	add_point(r, s, t, td, ci[0]);
	return 1;
}

/*
 * The breakeven of one format from its grid curve (see the header), with
 * the refinement. missing: why grid points lack a time ("" when none do).
 */
static int settle(const struct spp_sweep_opts *o, const struct spp_format_ops *f,
		  const struct spp_sweep_timer *timer, const char *missing,
		  struct spp_sweep_result *r, struct spp_error *err)
{
	int n = r->npoints, top, start, best = 0, rc;
	double lo, hi;

	r->breakeven = NAN;
	if (n == 0) {
		append(r, "no timed point: %s", missing[0] ? missing : "no time");
		return SPP_OK;
	}
	if (r->curve[0].sparsity == 0 && r->curve[0].speedup > SPP_SWEEP_WEAK_BASELINE)
		append(r, "%.2fx dense at sparsity 0, the same work: a weak dense baseline",
		       r->curve[0].speedup);
	for (int i = 1; i < n; i++)
		if (r->curve[i].speedup > r->curve[best].speedup)
			best = i;
	for (top = n - 1; top >= 0 && !spp_sweep_faster(&r->curve[top]); top--)
		;
	if (top < 0) {
		if (n == 1)
			append(r, "not faster than dense at %.4g, the only sparsity tried (speedup %.2f)",
			       r->curve[0].sparsity, r->curve[0].speedup);
		else
			append(r, "never faster than dense up to %.4g (best speedup %.2f at %.4g)",
			       r->curve[n - 1].sparsity, r->curve[best].speedup,
			       r->curve[best].sparsity);
		if (missing[0])
			append(r, "%s", missing);
		return SPP_OK;
	}
	for (start = top; start > 0 && spp_sweep_faster(&r->curve[start - 1]); start--)
		;
	if (top < n - 1)
		append(r, "slower than dense again from %.4g (speedup %.2f)",
		       r->curve[top + 1].sparsity, r->curve[top + 1].speedup);
	for (int i = 0; i < start - 1; i++)
		if (spp_sweep_faster(&r->curve[i])) {
			append(r, "also faster at %.4g (speedup %.2f) below slower points: "
				  "the breakeven is the last upward crossing",
			       r->curve[i].sparsity, r->curve[i].speedup);
			break;
		}
	if (missing[0])
		append(r, "%s", missing);
	if (start == 0) {
		r->breakeven = spp_sweep_breakeven(r->curve, r->npoints);
		if (n == 1)
			append(r, "faster than dense at %.4g, the only sparsity tried",
			       r->curve[0].sparsity);
		else
			append(r, "faster than dense at every sparsity tried, from %.4g",
			       r->curve[0].sparsity);
		return SPP_OK;
	}
	lo = r->curve[start - 1].sparsity;
	hi = r->curve[start].sparsity;
	for (int step = 0; step < o->refine_steps && hi - lo > o->tolerance; step++) {
		double mid = 0.5 * (lo + hi);
		int at;

		rc = time_one(timer, f, mid, o->n, r, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		for (at = 0; r->curve[at].sparsity != mid; at++)
			;
		if (spp_sweep_faster(&r->curve[at]))
			hi = mid;
		else
			lo = mid;
	}
	r->breakeven = spp_sweep_breakeven(r->curve, r->npoints); /* hi: the points are in order */
	return SPP_OK;
}

int spp_sweep_run(const struct spp_sweep_opts *o,
		  const struct spp_format_ops *const *formats, int nformats,
		  const struct spp_sweep_timer *timer, struct spp_sweep *out,
		  struct spp_error *err)
{
	double grid[SPP_SWEEP_MAX_GRID], *t = NULL, td, (*ci)[2] = NULL;
	char (*reasons)[256] = NULL, (*missing)[256] = NULL;
	int ngrid, rc = SPP_OK;

	memset(out, 0, sizeof(*out));
	ngrid = make_grid(o, grid, err);
	if (ngrid < 0)
		return SPP_E_USAGE;
	if (nformats < 0 || (nformats && !formats))
		return spp_error_set(err, SPP_E_USAGE, "sweep: no format list");
	if (o->refine_steps < 0 || o->refine_steps > 60 || !(o->tolerance >= 0))
		return spp_error_set(err, SPP_E_USAGE,
				     "sweep: refinement of %d steps to %g: want 0..60 steps, tolerance >= 0",
				     o->refine_steps, o->tolerance);
	out->m = o->m;
	out->k = o->k;
	out->n = o->n;
	out->threads = o->threads;
	spp_sweep_pattern_name(o, out->pattern, sizeof(out->pattern));
	out->results = calloc((size_t)nformats + 1, sizeof(*out->results));
	t = calloc((size_t)nformats + 1, sizeof(*t));
	reasons = calloc((size_t)nformats + 1, sizeof(*reasons));
	missing = calloc((size_t)nformats + 1, sizeof(*missing));
	ci = calloc((size_t)nformats + 1, sizeof(*ci));
	if (!out->results || !t || !reasons || !missing || !ci)
		goto nomem;
	out->nresults = nformats;
	for (int f = 0; f < nformats; f++) {
		struct spp_sweep_result *r = &out->results[f];

		r->backend = "cpu";
		snprintf(r->format, sizeof(r->format), "%s", formats[f]->key);
		r->breakeven = r->breakeven_low = r->breakeven_high = NAN;
		r->curve = calloc((size_t)(ngrid + o->refine_steps), sizeof(*r->curve));
		if (!r->curve)
			goto nomem;
	}
	for (int g = 0; g < ngrid; g++) {
		for (int f = 0; f < nformats; f++) {
			t[f] = ci[f][0] = ci[f][1] = NAN;
			reasons[f][0] = '\0';
		}
		td = NAN;
		rc = timer->time(timer->ctx, grid[g], o->n, formats, nformats, t, &td, ci, reasons, err);
		if (rc)
			goto fail;
		for (int f = 0; f < nformats; f++) {
			if (t[f] > 0 && td > 0) {
				add_point(&out->results[f], grid[g], t[f], td, ci[f]);
			} else if (!missing[f][0]) {
				/* the first reason: later points usually fail the same way */
				snprintf(missing[f], sizeof(missing[f]), "%s at %.4g",
					 reasons[f][0] ? reasons[f] : "no time", grid[g]);
			}
		}
	}
	for (int f = 0; f < nformats; f++) {
		struct spp_sweep_result *r = &out->results[f];

		rc = settle(o, formats[f], timer, missing[f], r, err);
		if (rc)
			goto fail;
		spp_sweep_bracket(r->curve, r->npoints, r->breakeven, &r->breakeven_low,
				  &r->breakeven_high);
	}
	goto done;
nomem:
	rc = spp_error_set(err, SPP_E_NOMEM, "out of memory for the sweep");
fail:
	spp_sweep_release(out);
done:
	free(t);
	free(reasons);
	free(missing);
	free(ci);
	return rc;
}

/* The real timer. */
static int measure_time(void *p, double sparsity, int64_t n, const struct spp_format_ops *const *formats,
			int nformats, double *t_ns, double *t_dense_ns, double (*ci)[2],
			char (*reasons)[256], struct spp_error *err)
{
	struct spp_sweep_measure *c = p;
	const struct spp_sweep_opts *o = c->sweep;
	struct spp_synth_layer l;
	struct spp_matrix w = {o->m, o->k, NULL};
	uint64_t nnz = 0;
	int64_t numel = o->m * o->k;
	int rc;

	if (!c->w) {
		if ((uint64_t)numel > SIZE_MAX / sizeof(float) ||
		    !(c->w = spp_buffer_alloc((size_t)numel * sizeof(float))))
			return spp_error_set(err, SPP_E_NOMEM, "out of memory for a %lldx%lld W",
					     (long long)o->m, (long long)o->k);
	}
	memset(&l, 0, sizeof(l));
	snprintf(l.name, sizeof(l.name), "sweep");
	l.ndim = 2;
	l.shape[0] = o->m;
	l.shape[1] = o->k;
	l.pattern = o->pattern;
	l.nm_n = o->nm_n;
	l.nm_m = o->nm_m;
	l.block = o->block;
	l.sparsity = sparsity;
	l.dtype = SPP_DTYPE_F32;
	rc = spp_synth_fill_f32(&l, c->seed, c->w, err);
	if (rc)
		return rc;
	for (int64_t i = 0; i < numel; i++)
		nnz += c->w[i] != 0;
	w.v = c->w;
	return spp_sweep_time_matrix(&w, n, nnz, "sweep", formats, nformats, c->run, t_ns, t_dense_ns,
				     ci, reasons,
				     c->keep && !c->kept.runs && fabs(sparsity - c->keep_at) < 1e-12
				     ? &c->kept : NULL,
				     err);
}

int spp_sweep_time_matrix(const struct spp_matrix *w, int64_t n, uint64_t nnz, const char *name,
			  const struct spp_format_ops *const *formats, int nformats,
			  const struct spp_run_opts *ro, double *t_ns, double *t_dense_ns,
			  double (*ci)[2], char (*reasons)[256], struct spp_layer_runs *keep,
			  struct spp_error *err)
{
	struct spp_layer_runs runs = {0};
	int64_t numel = w->m * w->k;
	int rc = spp_matrix_measure(w, n, nnz, nnz ? (double)numel / (double)nnz : 0, name, formats,
				    nformats, ro, &runs, err);

	if (rc)
		return rc;
	*t_dense_ns = runs.runs[0].status == SPP_RUN_OK && runs.runs[0].time.repeats > 0
		      ? runs.runs[0].time.median : NAN;
	for (int f = 0; f < nformats; f++) {
		const struct spp_run *r = &runs.runs[f + 1];

		t_ns[f] = ci[f][0] = ci[f][1] = NAN;
		if (r->status == SPP_RUN_OK && r->time.repeats > 0) {
			t_ns[f] = r->time.median;
			ci[f][0] = r->speedup_ci_low;
			ci[f][1] = r->speedup_ci_high;
		} else if (r->status != SPP_RUN_OK) {
			snprintf(reasons[f], 256, "%s: %.200s", spp_run_status_name(r->status), r->reason);
		} else if (runs.runs[0].status != SPP_RUN_OK) {
			snprintf(reasons[f], 256, "dense baseline failed: %.200s", runs.runs[0].reason);
		} else {
			snprintf(reasons[f], 256, "not timed");
		}
	}
	if (keep)
		*keep = runs;
	else
		spp_layer_runs_release(&runs);
	return SPP_OK;
}

void spp_sweep_measure_timer(struct spp_sweep_measure *ctx, struct spp_sweep_timer *t)
{
	t->time = measure_time;
	t->ctx = ctx;
}

void spp_sweep_measure_fini(struct spp_sweep_measure *ctx)
{
	if (!ctx)
		return;
	spp_buffer_free(ctx->w);
	ctx->w = NULL;
	spp_layer_runs_release(&ctx->kept);
}
