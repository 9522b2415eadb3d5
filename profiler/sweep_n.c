/*
 * Speedup against N (profiler/sweep.h): one W, each format and the dense
 * baseline timed at each N of a list, then the N where each format wins
 * and where its speedup crosses 1.
 */
#include "profiler/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options and the list are usable; 0 or SPP_E_USAGE. */
static int check(const struct spp_sweep_opts *o, double sparsity, const int64_t *ns, int nn,
		 int nformats, struct spp_error *err)
{
	if (o->m < 1 || o->k < 1)
		return spp_error_set(err, SPP_E_USAGE, "N sweep: the shape must be at least 1 x 1");
	if (nn < 1 || nn > SPP_NSWEEP_MAX_N)
		return spp_error_set(err, SPP_E_USAGE, "N sweep: 1 to %d values of N, not %d",
				     SPP_NSWEEP_MAX_N, nn);
	for (int i = 0; i < nn; i++)
		if (ns[i] < 1 || (i && ns[i] <= ns[i - 1]))
			return spp_error_set(err, SPP_E_USAGE,
					     "N sweep: N must be ascending, distinct and >= 1 (%lld)",
					     (long long)ns[i]);
	if (!(sparsity >= 0 && sparsity < 1))
		return spp_error_set(err, SPP_E_USAGE, "N sweep: sparsity %g is outside [0, 1)", sparsity);
	if (nformats < 1)
		return spp_error_set(err, SPP_E_USAGE, "N sweep: no format to time");
	return SPP_OK;
}

int spp_nsweep_run(const struct spp_sweep_opts *o, double sparsity, const int64_t *ns, int nn,
		   const struct spp_format_ops *const *formats, int nformats,
		   const struct spp_sweep_timer *timer, struct spp_nsweep *out,
		   struct spp_error *err)
{
	double *t = NULL, (*ci)[2] = NULL;
	char (*reasons)[256] = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (o->pattern == SPP_SYNTH_NM && o->nm_m > 0)
		sparsity = 1.0 - (double)o->nm_n / o->nm_m;
	if ((rc = check(o, sparsity, ns, nn, nformats, err)))
		return rc;
	out->m = o->m;
	out->k = o->k;
	out->sparsity = sparsity;
	out->threads = o->threads;
	spp_sweep_pattern_name(o, out->pattern, sizeof(out->pattern));
	out->results = calloc((size_t)nformats, sizeof(*out->results));
	t = calloc((size_t)nformats, sizeof(*t));
	reasons = calloc((size_t)nformats, sizeof(*reasons));
	ci = calloc((size_t)nformats, sizeof(*ci));
	if (!out->results || !t || !reasons || !ci) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory for the N sweep");
		goto out;
	}
	out->nresults = nformats;
	for (int f = 0; f < nformats; f++) {
		out->results[f].backend = "cpu";
		snprintf(out->results[f].format, sizeof(out->results[f].format), "%s", formats[f]->key);
	}
	for (int i = 0; i < nn; i++) {
		double td = NAN;

		memset(reasons, 0, sizeof(*reasons) * (size_t)nformats);
		for (int f = 0; f < nformats; f++)
			ci[f][0] = ci[f][1] = NAN;
		if ((rc = timer->time(timer->ctx, sparsity, ns[i], formats, nformats, t, &td, ci, reasons,
				      err)))
			goto out;
		for (int f = 0; f < nformats; f++) {
			struct spp_nsweep_result *r = &out->results[f];
			struct spp_sweep_point *p = &r->curve[r->npoints];

			r->n[r->npoints] = ns[i];
			*p = (struct spp_sweep_point){sparsity, t[f], td,
						      t[f] > 0 && td > 0 ? td / t[f] : NAN, ci[f][0], ci[f][1]};
			r->npoints++;
			if (!(t[f] > 0) && !r->reason[0])
				snprintf(r->reason, sizeof(r->reason), "no time at N = %lld: %.200s",
					 (long long)ns[i], reasons[f][0] ? reasons[f] : "not timed");
		}
	}
	for (int f = 0; f < nformats; f++)
		spp_nsweep_derive(&out->results[f]);
out:
	if (rc)
		spp_nsweep_release(out);
	free(t);
	free(reasons);
	free(ci);
	return rc;
}
