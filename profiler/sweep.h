/*
 * Breakeven sweep (DESIGN section 5): for a shape (M, K, N), a pattern and
 * a list of formats, time each format and the dense baseline on synthetic
 * W at a grid of sparsities, then refine by bisection between the
 * bracketing points to find the breakeven, the lowest sparsity from which
 * the format beats dense.
 *
 * Multiple crossings. A measured curve need not be monotone (noise near
 * speedup 1, a format whose cost jumps with its block fill). The breakeven
 * is the last upward crossing of the grid: the bottom of the highest run
 * of consecutive grid points with speedup > 1, refined between that run's
 * first point and the point below it. It is the sparsity above which the
 * format stayed faster in the sweep, so that a lucky point at low
 * sparsity followed by losses does not give an optimistic figure. The
 * reason then names the earlier faster points; when the highest run ends
 * before the top of the grid (slower again at the top), the reason says
 * from where. Without a point below the run (faster from the lowest
 * sparsity tried) the breakeven is that lowest sparsity and the reason says
 * "faster than dense at every sparsity tried, from S". No faster point at
 * all: no breakeven (NAN) and the reason gives the best speedup seen.
 *
 * The baseline's guard: at sparsity 0 a format does the dense work, so a
 * speedup there above SPP_SWEEP_WEAK_BASELINE means the dense baseline is
 * slower than that format's kernel on the shape, and every speedup of the
 * sweep is inflated by as much; the reason says so first.
 *
 * Refinement: bisection of [lo, hi] (lo not faster, hi faster), at most
 * refine_steps steps or until hi - lo <= tolerance. The reported breakeven
 * is the final hi, a sparsity where the format was measured faster, so
 * that the true crossing of a monotone curve lies in (hi - tolerance, hi]
 * after enough steps.
 *
 * The timing source is a parameter (struct spp_sweep_timer): the real one
 * generates W with synth's generators and times it with spp_matrix_measure
 * (the harness, checks and thread policy of analyze); tests pass a
 * deterministic model of time against sparsity.
 *
 * A struct spp_sweep owns its results until spp_sweep_release().
 */
#ifndef SPP_PROFILER_SWEEP_H
#define SPP_PROFILER_SWEEP_H

#include <stdint.h>

#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/run.h"
#include "profiler/synth.h"

#define SPP_SWEEP_MAX_GRID 64
/* speedup at sparsity 0 above which the baseline is called weak: past the runs' noise */
#define SPP_SWEEP_WEAK_BASELINE 1.05

struct spp_sweep_point {
	double sparsity;       /* the sparsity W was generated at */
	double time_ns;        /* median of the format */
	double dense_time_ns;  /* median of the dense baseline in the same timing */
	double speedup;        /* dense_time_ns / time_ns */
};

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

/*
 * One timing: the dense baseline and nformats formats on W of the sweep's
 * shape (M x K) and pattern at `sparsity`, applied to n columns. Fill t_dense_ns and t_ns[f] (medians;
 * NAN when format f did not run, with the reason in reasons[f]). Returns
 * 0 or a negative status (stops the sweep).
 */
struct spp_sweep_timer {
	int (*time)(void *ctx, double sparsity, int64_t n, const struct spp_format_ops *const *formats,
		    int nformats, double *t_ns, double *t_dense_ns, char (*reasons)[256],
		    struct spp_error *err);
	void *ctx;
};

struct spp_sweep_opts {
	int64_t m, k, n;
	enum spp_synth_pattern pattern;  /* UNSTRUCTURED, NM, BLOCK or CHANNEL */
	int nm_n, nm_m;                  /* NM */
	int block;                       /* BLOCK */
	int threads;                     /* recorded in the result */
	const double *grid;              /* ascending, in [0, 1); NULL: the default */
	int ngrid;
	int refine_steps;                /* bisection steps per format; default 5 */
	double tolerance;                /* stop when hi - lo <= this; default 0.005 */
};

/*
 * Defaults: the grid 0, 0.1, ..., 0.9, 0.95, 0.98, 0.99, 0.999 (an N:M
 * pattern has the one sparsity 1 - N/M instead), 5 refinement steps,
 * tolerance 0.005, 1 thread, unstructured.
 */
void spp_sweep_opts_init(struct spp_sweep_opts *o);

/* Pattern name of the options ("unstructured", "nm2_4", "block4", "channel"). */
void spp_sweep_pattern_name(const struct spp_sweep_opts *o, char *buf, size_t n);

/*
 * Run the sweep: the grid with every format at each point, then each
 * format's refinement. Returns 0, SPP_E_USAGE (bad options), SPP_E_NOMEM,
 * or the timer's status; out (caller's) is released on failure.
 */
int spp_sweep_run(const struct spp_sweep_opts *o,
		  const struct spp_format_ops *const *formats, int nformats,
		  const struct spp_sweep_timer *timer, struct spp_sweep *out,
		  struct spp_error *err);

/* Free the results; accepts NULL and a zeroed struct. */
void spp_sweep_release(struct spp_sweep *s);

/*
 * The real timing source: W generated by spp_synth_fill_f32 (seed
 * `seed`) at each sparsity, measured with spp_matrix_measure and run
 * options `run` (threads, ISA, bench budget and schedule): every format's
 * output is checked against dense before it is timed.
 */
struct spp_sweep_measure {
	const struct spp_sweep_opts *sweep;
	const struct spp_run_opts *run;
	uint64_t seed;
	float *w;                 /* M x K scratch (spp_buffer_alloc, like run.c's operands, so
				     dense reads W from huge pages too), owned; NULL until used */
	/*
	 * keep: the whole runs (rates, bandwidths) of the first timing at
	 * sparsity keep_at are kept in `kept` (owned), for a caller that
	 * reports more of that point than its time.
	 */
	int keep;
	double keep_at;
	struct spp_layer_runs kept;
};

/*
 * One timing of the real source on a given W (fp32, m x k, nnz non-zeros)
 * at n columns: spp_matrix_measure with ro, the medians of the dense
 * baseline and each format into the timer's outputs (NAN with the reason
 * where a format has no time). name is for messages. keep: NULL, or the
 * runs themselves are handed over there (the caller releases them).
 */
int spp_sweep_time_matrix(const struct spp_matrix *w, int64_t n, uint64_t nnz, const char *name,
			  const struct spp_format_ops *const *formats, int nformats,
			  const struct spp_run_opts *ro, double *t_ns, double *t_dense_ns,
			  char (*reasons)[256], struct spp_layer_runs *keep, struct spp_error *err);

/* Fill t (a timer for spp_sweep_run) to use ctx; ctx must outlive the sweep. */
void spp_sweep_measure_timer(struct spp_sweep_measure *ctx, struct spp_sweep_timer *t);

/* Free ctx's scratch; accepts NULL. */
void spp_sweep_measure_fini(struct spp_sweep_measure *ctx);

/*
 * Speedup against N (the batch, or the tokens of a step): one W of the
 * sweep's shape, pattern and a fixed sparsity, each format and the dense
 * baseline timed at each N of a list. A format wins at the N where it
 * beats dense; a crossover is where its speedup passes 1 between two
 * adjacent N, interpolated linearly in speedup against log N.
 */
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

/*
 * Time every format at each of the nn N of ns (ascending, distinct, each
 * >= 1; at most SPP_NSWEEP_MAX_N) on W at `sparsity` (an N:M pattern has
 * its own), then derive wins and crossings. Returns 0, SPP_E_USAGE,
 * SPP_E_NOMEM or the timer's status; out is released on failure.
 */
int spp_nsweep_run(const struct spp_sweep_opts *o, double sparsity, const int64_t *ns, int nn,
		   const struct spp_format_ops *const *formats, int nformats,
		   const struct spp_sweep_timer *timer, struct spp_nsweep *out,
		   struct spp_error *err);

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
