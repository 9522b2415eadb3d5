/*
 * `spprof bench`'s selections (profiler/bench_result.h): each case's
 * summary figures from its runs and sweep, and the targets from the cases.
 */
#include "profiler/bench_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/peers.h"

const double spp_bench_grid[SPP_BENCH_NGRID] = {
	0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999,
};

struct spp_bench_sum *spp_bench_sums_add(struct spp_bench_sums *sums, int threads, int64_t n,
					 struct spp_error *err)
{
	struct spp_bench_sum *s;

	if (sums->nsums >= SPP_BENCH_MAX_CASES) {
		spp_error_set(err, SPP_E_USAGE, "more than %d cases", SPP_BENCH_MAX_CASES);
		return NULL;
	}
	s = &sums->sum[sums->nsums++];
	memset(s, 0, sizeof(*s));
	s->threads = threads;
	s->n = n;
	s->dense_ns = s->best_be = s->csr_be = s->best_90 = s->best_24 = NAN;
	s->best_be_low = s->best_be_high = s->best_90_ci_low = s->best_90_ci_high = NAN;
	s->csr_be_low = s->csr_be_high = NAN;
	s->dlmc_best_geo = s->csr90_ns = NAN;
	spp_run_init(&s->r90, "cpu", "");
	spp_run_init(&s->d90, "cpu", "");
	spp_run_init(&s->r24, "cpu", "");
	spp_run_init(&s->d24, "cpu", "");
	return s;
}

const struct spp_run *spp_bench_best_run(const struct spp_layer_runs *runs)
{
	const struct spp_run *best = NULL;

	/* spprof's own formats: the peers are beside them, not among them */
	for (int r = 1; r < runs->nruns; r++)
		if (runs->runs[r].status == SPP_RUN_OK && isfinite(runs->runs[r].speedup) &&
		    !spp_cpu_peer_known(runs->runs[r].format) &&
		    (!best || runs->runs[r].speedup > best->speedup))
			best = &runs->runs[r];
	return best;
}

void spp_bench_sum_dlmc(struct spp_bench_sum *s, const struct spp_layer_runs *runs)
{
	const struct spp_run *best = spp_bench_best_run(runs);

	if (!best)
		return;
	s->dlmc_log_sum += log(best->speedup);
	s->dlmc_n++;
	s->dlmc_best_geo = exp(s->dlmc_log_sum / s->dlmc_n);
}

const struct spp_sweep_point *spp_bench_point_at(const struct spp_sweep_result *r, double s)
{
	for (int i = 0; i < r->npoints; i++)
		if (fabs(r->curve[i].sparsity - s) < 1e-9)
			return &r->curve[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The run of format `key` among runs and the dense baseline of the same timing into r and d. */
static void keep_runs(const struct spp_layer_runs *runs, const char *key, struct spp_run *r,
		      struct spp_run *d)
{
	for (int i = 1; runs && i < runs->nruns; i++)
		if (strcmp(runs->runs[i].format, key) == 0) {
			*r = runs->runs[i];
			*d = runs->runs[0];
		}
}

/* The median of the dense times at the grid's points (each point's first format that has it). */
static double dense_median(const struct spp_sweep *sw)
{
	double dense[SPP_BENCH_NGRID];
	int nd = 0;

	for (int g = 0; g < SPP_BENCH_NGRID; g++)
		for (int f = 0; f < sw->nresults; f++) {
			const struct spp_sweep_point *p =
				spp_bench_point_at(&sw->results[f], spp_bench_grid[g]);

			if (p) {
				dense[nd++] = p->dense_time_ns;
				break;
			}
		}
	if (!nd)
		return NAN;
	qsort(dense, (size_t)nd, sizeof(double), cmp_double);
	return nd % 2 ? dense[nd / 2] : 0.5 * (dense[nd / 2 - 1] + dense[nd / 2]);
}

void spp_bench_sum_sweep(struct spp_bench_sum *s, const struct spp_sweep *sw,
			 const struct spp_layer_runs *at90)
{
	s->dense_ns = dense_median(sw);
	for (int f = 0; f < sw->nresults; f++) {
		const struct spp_sweep_result *r = &sw->results[f];
		const struct spp_sweep_point *p = spp_bench_point_at(r, 0.9);

		if (spp_cpu_peer_known(r->format))
			continue;
		if (isfinite(r->breakeven) && !(r->breakeven >= s->best_be)) {
			s->best_be = r->breakeven;
			s->best_be_low = r->breakeven_low;
			s->best_be_high = r->breakeven_high;
			snprintf(s->best_be_fmt, sizeof(s->best_be_fmt), "%s", r->format);
		}
		if (strcmp(r->format, "csr") == 0) {
			s->csr_be = r->breakeven;
			s->csr_be_low = r->breakeven_low;
			s->csr_be_high = r->breakeven_high;
			s->csr90_ns = p ? p->time_ns : NAN;
		}
		if (p && !(p->speedup <= s->best_90)) {
			s->best_90 = p->speedup;
			s->best_90_ci_low = p->speedup_ci_low;
			s->best_90_ci_high = p->speedup_ci_high;
			snprintf(s->best_90_fmt, sizeof(s->best_90_fmt), "%s", r->format);
		}
	}
	keep_runs(at90, s->best_90_fmt, &s->r90, &s->d90);
}

void spp_bench_sum_nm(struct spp_bench_sum *s, const struct spp_layer_runs *runs)
{
	const struct spp_run *best = spp_bench_best_run(runs);

	keep_runs(runs, "nm2_4", &s->r24, &s->d24);
	if (best) {
		s->best_24 = best->speedup;
		snprintf(s->best_24_fmt, sizeof(s->best_24_fmt), "%s", best->format);
	}
}

const struct spp_bench_sum *spp_bench_find_sum(const struct spp_bench_sums *s, int threads,
					       int64_t n)
{
	for (int i = 0; i < s->nsums; i++)
		if (s->sum[i].threads == threads && s->sum[i].n == n)
			return &s->sum[i];
	return NULL;
}

double spp_bench_dense_scaling(const struct spp_bench_sums *s, int t_first, int t_last,
			       int64_t n)
{
	const struct spp_bench_sum *a = spp_bench_find_sum(s, t_first, n);
	const struct spp_bench_sum *b = spp_bench_find_sum(s, t_last, n);

	return a && b ? a->dense_ns / b->dense_ns : NAN;
}

/* A run's median; NAN when it was not timed. */
static double median_of(const struct spp_run *r)
{
	return r->time.repeats > 0 ? r->time.median : NAN;
}

/*
 * Target t: value against limit; r and d: the run behind a speedup target
 * and its dense baseline (NULL for the others), bounded when r was timed.
 */
static void target(struct spp_bench_target *t, const char *what, double value, const char *fmt,
		   double limit, int at_most, const struct spp_run *r, const struct spp_run *d)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->what, sizeof(t->what), "%s", what);
	snprintf(t->format, sizeof(t->format), "%s", fmt);
	t->value = value;
	t->limit = limit;
	t->at_most = at_most;
	t->met = isfinite(value) && (at_most ? value <= limit : value >= limit);
	t->run = r;
	t->dense = d;
	t->has_bound = r && r->format[0] && r->status == SPP_RUN_OK && r->time.median > 0;
	if (t->has_bound)
		spp_run_bound(r, d, limit, &t->bound);
}

/*
 * The 1-thread case's three targets (best breakeven at most be_limit, best
 * speedup at 0.9 at least sp_limit, nm2_4 on the 2:4 layer at least 1.7),
 * named by their N, into out; how many.
 */
static int case_targets(const struct spp_bench_sum *s, const char *on, double be_limit,
			double sp_limit, struct spp_bench_target *out)
{
	char what[64];

	snprintf(what, sizeof(what), "%s unstructured: best format breakeven", on);
	target(&out[0], what, s->best_be, s->best_be_fmt, be_limit, 1, NULL, NULL);
	snprintf(what, sizeof(what), "%s unstructured: best speedup at 90%%", on);
	target(&out[1], what, s->best_90, s->best_90_fmt, sp_limit, 0, &s->r90, &s->d90);
	snprintf(what, sizeof(what), "%s 2:4 at 50%%: nm2_4 speedup", on);
	target(&out[2], what, s->r24.speedup, "nm2_4", 1.7, 0, &s->r24, &s->d24);
	return 3;
}

int spp_bench_targets(const struct spp_bench_sums *s, int tmax, struct spp_bench_target *out)
{
	const struct spp_bench_sum *s64 = spp_bench_find_sum(s, 1, 64);
	const struct spp_bench_sum *s1 = spp_bench_find_sum(s, 1, 1);
	const struct spp_bench_sum *t64 = tmax > 1 ? spp_bench_find_sum(s, tmax, 64) : NULL;
	char what[64];
	int n = 0;

	if (s64)
		n += case_targets(s64, "N=64", 0.30, 6, out + n);
	if (s1)
		n += case_targets(s1, "N=1", 0.25, 5, out + n);
	/* a time from each case, not one interleaved run */
	if (s64 && t64) {
		snprintf(what, sizeof(what), "N=64 %d threads over 1: csr at 90%%", tmax);
		target(&out[n++], what, s64->csr90_ns / t64->csr90_ns, "csr", 1.8, 0, NULL, NULL);
		snprintf(what, sizeof(what), "N=64 %d threads over 1: nm2_4 on 2:4", tmax);
		target(&out[n++], what, median_of(&s64->r24) / median_of(&t64->r24), "nm2_4", 1.8, 0,
		       NULL, NULL);
	}
	return n;
}
