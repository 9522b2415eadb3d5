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

#endif
