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
	/* the runs' spreads overlap: the gain is within run-to-run noise */
	if (!(best->time.p90 < best_dense->time.p10)) {
		snprintf(out->reason, sizeof(out->reason),
			 "%s/%s is %.2fx faster at the median, within the run-to-run spread "
			 "(its p90 %.0f ns >= dense p10 %.0f ns)",
			 best->backend, best->format, best_speedup, best->time.p90, best_dense->time.p10);
		return 0;
	}
	out->backend = best->backend;
	snprintf(out->format, sizeof(out->format), "%s", best->format);
	out->speedup = best_speedup;
	out->time_ns = best->time.median;
	out->dense_ns = best_dense->time.median;
	snprintf(out->reason, sizeof(out->reason),
		 "best measured speedup, %.2fx over %s dense, clear of the run-to-run spread "
		 "(p90 %.0f ns < dense p10 %.0f ns)",
		 best_speedup, best->backend, best->time.p90, best_dense->time.p10);
	return 0;
}
