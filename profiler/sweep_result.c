/* The sweeps' results and the arithmetic on their curves (sweep_result.h). */
#include "profiler/sweep_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_sweep_release(struct spp_sweep *s)
{
	if (!s)
		return;
	for (int i = 0; s->results && i < s->nresults; i++)
		free(s->results[i].curve);
	free(s->results);
	s->results = NULL;
	s->nresults = 0;
}

double spp_sweep_breakeven(const struct spp_sweep_point *curve, int n)
{
	int top = n - 1;

	while (top >= 0 && !spp_sweep_faster(&curve[top]))
		top--;
	if (top < 0)
		return NAN;
	while (top > 0 && spp_sweep_faster(&curve[top - 1]))
		top--;
	return curve[top].sparsity;
}

void spp_sweep_bracket(const struct spp_sweep_point *curve, int n, double be, double *low,
		       double *high)
{
	int at = 0;

	*low = *high = NAN;
	if (isnan(be))
		return;
	while (at < n && curve[at].sparsity < be)
		at++;
	for (int i = at - 1; i >= 0; i--)
		if (curve[i].speedup_ci_high < 1) { /* false for NAN */
			*low = curve[i].sparsity;
			break;
		}
	for (int i = n - 1; i >= at && curve[i].speedup_ci_low > 1; i--)
		*high = curve[i].sparsity;
}

void spp_nsweep_release(struct spp_nsweep *s)
{
	if (!s)
		return;
	free(s->results);
	s->results = NULL;
	s->nresults = 0;
}

/* Append ", a-b" (or ", a") to r->wins for the run of winning N from i to j. */
static void add_range(struct spp_nsweep_result *r, int i, int j)
{
	size_t len = strlen(r->wins);

	if (i == j)
		snprintf(r->wins + len, sizeof(r->wins) - len, "%s%lld", len ? ", " : "",
			 (long long)r->n[i]);
	else
		snprintf(r->wins + len, sizeof(r->wins) - len, "%s%lld-%lld", len ? ", " : "",
			 (long long)r->n[i], (long long)r->n[j]);
}

void spp_nsweep_derive(struct spp_nsweep_result *r)
{
	int run = -1;

	r->wins[0] = '\0';
	r->ncross = 0;
	for (int i = 0; i <= r->npoints; i++) {
		int win = i < r->npoints && r->curve[i].speedup > 1;

		if (win && run < 0)
			run = i;
		if (!win && run >= 0) {
			add_range(r, run, i - 1);
			run = -1;
		}
	}
	for (int i = 0; i + 1 < r->npoints; i++) {
		double a = r->curve[i].speedup, b = r->curve[i + 1].speedup, t;

		if (!isfinite(a) || !isfinite(b) || (a > 1) == (b > 1) || a == b)
			continue;
		/* linear in speedup against log N */
		t = (1.0 - a) / (b - a);
		r->cross[r->ncross].n = exp(log((double)r->n[i]) +
					    t * (log((double)r->n[i + 1]) - log((double)r->n[i])));
		r->cross[r->ncross].faster_above = b > 1;
		r->ncross++;
	}
}
