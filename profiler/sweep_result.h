/*
 * The sweeps as results: the breakeven sweep's curve and breakeven per
 * format (struct spp_sweep, DESIGN section 5) and the speedup against N
 * (struct spp_nsweep), the arithmetic that derives the breakeven, wins
 * and crossings from a curve (for sweeps just timed, profiler/sweep.h, and
 * sweeps read back from a report), and their release. Nothing here
 * measures.
 *
 * A struct spp_sweep or spp_nsweep owns its results until its release.
 */
#ifndef SPP_PROFILER_SWEEP_RESULT_H
#define SPP_PROFILER_SWEEP_RESULT_H

#include <stdint.h>

#define SPP_SWEEP_MAX_GRID 64
/* speedup at sparsity 0 above which the baseline is called weak: past the runs' noise */
#define SPP_SWEEP_WEAK_BASELINE 1.05

struct spp_sweep_point {
	double sparsity;       /* the sparsity W was generated at */
	double time_ns;        /* median of the format */
	double dense_time_ns;  /* median of the dense baseline in the same timing */
	double speedup;        /* dense_time_ns / time_ns */
	/*
	 * The 95 % confidence interval of the speedup from the timing's
	 * interleaved rounds (struct spp_run's speedup_ci_low, _high); NAN
	 * unknown: fewer than 6 rounds, the blocked schedule, an older report.
	 */
	double speedup_ci_low, speedup_ci_high;
};

/* Whether the format beat dense at p. */
static inline int spp_sweep_faster(const struct spp_sweep_point *p)
{
	return p->speedup > 1;
}

struct spp_sweep_result {
	const char *backend;            /* "cpu" (static string) */
	char format[16];
	double breakeven;               /* NAN: none */
	double breakeven_low;           /* its bracket from the points' intervals: */
	double breakeven_high;          /* spp_sweep_bracket; NAN unknown */
	char reason[256];               /* "" when a clean single crossing */
	struct spp_sweep_point *curve;  /* npoints, ascending sparsity */
	int npoints;
};

struct spp_sweep {
	int64_t m, k, n;
	char pattern[32];               /* "unstructured", "nm2_4", "block4", "channel" */
	int threads;
	struct spp_sweep_result *results;
	int nresults;
};

/* Free the results; accepts NULL and a zeroed struct. */
void spp_sweep_release(struct spp_sweep *s);

#define SPP_NSWEEP_MAX_N 32

struct spp_nsweep_crossing {
	double n;              /* interpolated N */
	int faster_above;      /* 1: slower below it, faster above; 0: the other way */
};

struct spp_nsweep_result {
	const char *backend;            /* "cpu" */
	char format[16];
	struct spp_sweep_point curve[SPP_NSWEEP_MAX_N]; /* sparsity: the sweep's; one per N */
	int64_t n[SPP_NSWEEP_MAX_N];
	int npoints;
	char wins[160];                 /* the N where it is faster: "1-8, 256"; "" none */
	struct spp_nsweep_crossing cross[SPP_NSWEEP_MAX_N];
	int ncross;
	char reason[256];               /* why a point has no time; "" */
};

struct spp_nsweep {
	int64_t m, k;
	double sparsity;
	char pattern[32];
	int threads;
	struct spp_nsweep_result *results;
	int nresults;
};

/* The wins and crossings of r's curve (done by spp_nsweep_run; pure). */
void spp_nsweep_derive(struct spp_nsweep_result *r);

/* Free the results; accepts NULL and a zeroed struct. */
void spp_nsweep_release(struct spp_nsweep *s);

/* The sweeps as JSON: reports/report.h spp_sweep_json, spp_nsweep_json. */

/*
 * The breakeven of a finished sweep curve (n points in sparsity order): the
 * lowest sparsity of the last run of points faster than dense, as the
 * sweep's refinement leaves it (settle sets it here); NAN when no point is
 * faster. For a curve read back, whose breakeven is never copied.
 */
double spp_sweep_breakeven(const struct spp_sweep_point *curve, int n);

/*
 * The bracket of a curve's breakeven (n points in sparsity order, be from
 * spp_sweep_breakeven) given the points' speedup intervals, the stretch
 * where the speedup's interval may contain 1:
 *   *low:  the sparsity of the last point below be whose interval lies
 *          wholly below 1 (surely slower than dense there);
 *   *high: the sparsity of the first point at or above be from which on
 *          every point's interval lies wholly above 1 (surely faster from
 *          there up to the top of the sweep).
 * So low < be <= high where both are known. Each is NAN when be is NAN,
 * when the points lack intervals (a point without one is sure of
 * nothing), or when no such point is on its side: low when no point below
 * be is surely slower (faster from the lowest sparsity tried, or every
 * lower interval straddles 1), high when the top point is not surely
 * faster. Pure: for sweeps just timed and sweeps read back alike.
 */
void spp_sweep_bracket(const struct spp_sweep_point *curve, int n, double be, double *low,
		       double *high);

#endif
