/*
 * The recommendation of a layer's runs (derive.h spp_recommend_layer): the
 * format to deploy, computed once with the derived figures.
 */
#include "profiler/derive.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int timed(const struct spp_run *r)
{
	return r->status == SPP_RUN_OK && r->time.repeats > 0 && r->time.median > 0;
}

/* Whether r's speedup has its 95 % interval (interleaved rounds, 6 or more). */
static int ci_known(const struct spp_run *r)
{
	return isfinite(r->speedup_ci_low) && isfinite(r->speedup_ci_high) && r->speedup_ci_high > 0;
}

/*
 * Why the best run x (speedup sp > 1 over d) is not worth deploying into
 * why; 0 when it is. Its gain must be clear of the noise: its speedup's
 * 95 % interval wholly above 1 where it is known, else its spread clear of
 * dense's. And a format that moves at least dense's bytes must show a
 * real speedup, SPP_RECOMMEND_REAL_GAIN: a gain within a few per cent on
 * more bytes (bsr4 on a 0 %-sparse layer at 1.03-1.10x, issue 46) is
 * not one to deploy.
 */
static int not_worth(const struct spp_run *x, const struct spp_run *d, double sp, char *why,
		     size_t n)
{
	if (ci_known(x) && !(x->speedup_ci_low > 1.0))
		return snprintf(why, n, "%s/%s is %.2fx faster at the median, its 95%% interval "
			       "%.2f-%.2f reaching 1", x->backend, x->format, sp, x->speedup_ci_low,
			       x->speedup_ci_high), 1;
	if (!ci_known(x) && !(x->time.p90 < d->time.p10))
		return snprintf(why, n, "%s/%s is %.2fx faster at the median, within the run-to-run "
			       "spread (its p90 %.0f ns >= dense p10 %.0f ns)", x->backend, x->format,
			       sp, x->time.p90, d->time.p10), 1;
	if (x->bytes_moved > 0 && d->bytes_moved > 0 && x->bytes_moved >= d->bytes_moved &&
	    sp < SPP_RECOMMEND_REAL_GAIN)
		return snprintf(why, n, "%s/%s is %.2fx faster but moves %.0f bytes against dense's "
			       "%.0f: a format with no fewer bytes needs %.2fx", x->backend, x->format,
			       sp, x->bytes_moved, d->bytes_moved, SPP_RECOMMEND_REAL_GAIN), 1;
	return 0;
}

/* The timed dense baseline of a backend's runs; NULL when there is none. */
static const struct spp_run *dense_of(const struct spp_layer_runs *runs, const char *backend)
{
	for (int r = 0; r < runs->nruns; r++) {
		const struct spp_run *x = &runs->runs[r];

		if (timed(x) && strcmp(x->format, "dense") == 0 && x->backend &&
		    strcmp(x->backend, backend) == 0)
			return x;
	}
	return NULL;
}

int spp_recommend_layer(const struct spp_layer_runs *runs, struct spp_recommendation *out)
{
	const struct spp_run *dense = NULL, *best = NULL, *best_dense = NULL;
	double best_speedup = 0;

	if (!runs || runs->nruns < 1 || !timed(&runs->runs[0]))
		return -1;
	dense = &runs->runs[0];
	for (int r = 1; r < runs->nruns; r++) {
		const struct spp_run *x = &runs->runs[r];
		/* each backend against its own dense baseline (cuBLAS for cuda) */
		const struct spp_run *d = x->backend ? dense_of(runs, x->backend) : dense;
		double sp;

		if (!timed(x) || !d || strcmp(x->format, "dense") == 0 || spp_storage_find(x->format) < 0)
			continue;
		sp = d->time.median / x->time.median;
		if (!best || sp > best_speedup) {
			best = x;
			best_dense = d;
			best_speedup = sp;
		}
	}
	memset(out, 0, sizeof(*out));
	out->backend = "cpu";
	snprintf(out->format, sizeof(out->format), "dense");
	out->speedup = 1.0;
	out->time_ns = out->dense_ns = dense->time.median;
	if (!best) {
		snprintf(out->reason, sizeof(out->reason), "no sparse format was timed");
		return 0;
	}
	if (best_speedup <= 1.0) {
		snprintf(out->reason, sizeof(out->reason),
			 "no format beats dense (best: %s/%s at %.2fx)", best->backend, best->format,
			 best_speedup);
		return 0;
	}
	if (not_worth(best, best_dense, best_speedup, out->reason, sizeof(out->reason)))
		return 0;
	out->backend = best->backend;
	snprintf(out->format, sizeof(out->format), "%s", best->format);
	out->speedup = best_speedup;
	out->time_ns = best->time.median;
	out->dense_ns = best_dense->time.median;
	if (ci_known(best))
		snprintf(out->reason, sizeof(out->reason),
			 "best measured speedup, %.2fx over %s dense, its 95%% interval %.2f-%.2f "
			 "clear of 1", best_speedup, best->backend, best->speedup_ci_low,
			 best->speedup_ci_high);
	else
		snprintf(out->reason, sizeof(out->reason),
			 "best measured speedup, %.2fx over %s dense, clear of the run-to-run spread "
			 "(p90 %.0f ns < dense p10 %.0f ns)",
			 best_speedup, best->backend, best->time.p90, best_dense->time.p10);
	return 0;
}
