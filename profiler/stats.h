/*
 * Timing statistics (DESIGN section 4): the median and percentiles of a
 * run's samples and the imbalance of per-thread figures. Results only:
 * what profiler/measure.h's harness times, and what a report read back
 * holds, go through the same arithmetic.
 */
#ifndef SPP_PROFILER_STATS_H
#define SPP_PROFILER_STATS_H

/* The timed runs of an item a result keeps in order (a round's pairing): --repeat past it keeps the first. */
#define SPP_BENCH_MAX_ROUNDS 1000

/*
 * A round is disturbed when each reference item (the dense candidates)
 * took more than this times its own first quartile over the rounds
 * (profiler/measure.h): the memory-bound kernels of a round beside a
 * streaming neighbour ran 20-25 % slower, quiet rounds within a few per
 * cent (docs/PERFORMANCE.md).
 */
#define SPP_ROUND_SLOW 1.15

/*
 * A dense candidate whose fastest round is slower than this times the
 * fastest candidate's median after the first min_repeats rounds cannot
 * win: it is timed no more, and the rounds it leaves go to the runs that
 * are reported (profiler/measure.h, race). Candidates' round-to-round
 * spread is within a few per cent on a quiet machine; the losers on the
 * BERT-base block's shapes ran 1.2-2.2x the winner's time (OpenBLAS
 * SkylakeX and Haswell against oneDNN, EPYC Zen 5, 2026-12-07), and with
 * all four timed every round the 3072x768 layers got 5 rounds in 0.2 s.
 */
#define SPP_RACE_SLOW 1.10
/*
 * ... and, earlier, after 2 rounds, one slower than this in its fastest
 * round: BLIS's generic build ran the 3072x768 GEMM in 18.9 ms against
 * oneDNN's 3.2 ms, so that five candidates' rounds took 44 ms and the
 * budget was gone before the first race.
 */
#define SPP_RACE_FAR 1.5
#define SPP_RACE_FAR_ROUNDS 2

struct spp_time_stats {
	double median, p10, p90; /* ns */
	int repeats;             /* samples behind the figures */
	/* the median's distribution-free 95 % interval (spp_median_ci95); 0 or NAN: none (< 6 samples) */
	double ci_low, ci_high;
};

/* Sort n doubles ascending, in place. */
void spp_sort_doubles(double *v, int n);

/*
 * Percentile p (0..1) of n sorted samples by linear interpolation between
 * closest ranks (Hyndman-Fan type 7, numpy's default): position p*(n-1),
 * so the median of an even count is the mean of the middle two and one
 * sample is every percentile. n must be > 0.
 */
double spp_percentile_sorted(const double *sorted, int n, double p);

/*
 * Median, p10, p90 and count of n samples; sorts samples in place.
 * Returns 0, or -1 (figures zeroed) when n <= 0.
 */
int spp_time_stats(double *samples, int n, struct spp_time_stats *out);

/*
 * The distribution-free 95 % confidence interval of the median of n
 * values (sorted in place): the order statistics x(k) and x(n + 1 - k),
 * 1-based, k the largest with P(Binomial(n, 1/2) < k) <= 0.025, so that
 * the interval holds the median with at least 95 % probability whatever
 * the distribution. 0, or -1 (NAN both) when n < 6, where no such k
 * exists (n = 5: [min, max] holds it with 93.75 % only).
 */
int spp_median_ci95(double *v, int n, double *lo, double *hi);

/* max / mean of n values; 0 when n <= 0 or the mean is not positive. */
double spp_max_over_mean(const double *v, int n);

#endif
