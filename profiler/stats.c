/* The timing statistics of stats.h. */
#include "profiler/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void spp_sort_doubles(double *v, int n)
{
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), cmp_double);
}

double spp_percentile_sorted(const double *sorted, int n, double p)
{
	double pos, frac;
	int lo;

	if (n <= 1)
		return n == 1 ? sorted[0] : 0;
	if (p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];
	pos = p * (double)(n - 1);
	lo = (int)pos;
	frac = pos - lo;
	if (lo >= n - 1)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int spp_time_stats(double *samples, int n, struct spp_time_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (n <= 0)
		return -1;
	spp_sort_doubles(samples, n);
	out->median = spp_percentile_sorted(samples, n, 0.5);
	out->p10 = spp_percentile_sorted(samples, n, 0.1);
	out->p90 = spp_percentile_sorted(samples, n, 0.9);
	out->repeats = n;
	spp_median_ci95(samples, n, &out->ci_low, &out->ci_high);
	return 0;
}

double spp_max_over_mean(const double *v, int n)
{
	double max = 0, sum = 0;

	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		sum += v[i];
		if (i == 0 || v[i] > max)
			max = v[i];
	}
	return sum > 0 ? max / (sum / n) : 0;
}

int spp_median_ci95(double *v, int n, double *lo, double *hi)
{
	double term, cdf;
	int k = 0;

	*lo = *hi = NAN;
	if (n < 6)
		return -1;
	spp_sort_doubles(v, n);
	if (n > 1000) { /* 2^-n underflows: the normal approximation, as exact there to a rank */
		k = (int)floor((double)n / 2 - 0.98 * sqrt((double)n));
		*lo = v[k - 1];
		*hi = v[n - k];
		return 0;
	}
	/* P(B <= j) for B ~ Binomial(n, 1/2), j = 0, 1, ...: the largest k with P(B <= k - 1) <= 0.025 */
	term = ldexp(1.0, -n);
	cdf = term;
	while (cdf <= 0.025 && k < n / 2) {
		k++;
		term *= (double)(n - k + 1) / (double)k;
		cdf += term;
	}
	*lo = v[k - 1];
	*hi = v[n - k];
	return 0;
}
