/*
 * What `spprof bench` selects from its measured runs and sweeps, as
 * results: per (threads, N) case the figures its summary and the kernel
 * issue's targets are judged on (best breakeven, best speedup at 0.9, the
 * 2:4 layer, the dense median over the grid, the DLMC geometric mean), and
 * the targets themselves with their verdicts and bounds. Computed here
 * once; cmd/cmd_bench.c feeds each case's runs in as they finish,
 * reports/bench.h renders. Nothing here measures or prints.
 *
 * The caller owns every struct. The runs a sum keeps are copies (their
 * pointers, if any, are not followed); a target's run pointers borrow from
 * the sums it was selected from.
 */
#ifndef SPP_PROFILER_BENCH_RESULT_H
#define SPP_PROFILER_BENCH_RESULT_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/run_result.h"
#include "profiler/sweep_result.h"

/* The most (threads, N) cases of one run. */
#define SPP_BENCH_MAX_CASES 64
/* The most targets spp_bench_targets selects. */
#define SPP_BENCH_MAX_TARGETS 8

/*
 * The grid of the unstructured sweep's table and of the dense median: the
 * sweep's default grid (profiler/sweep.h), SPP_BENCH_NGRID points.
 */
extern const double spp_bench_grid[];
#define SPP_BENCH_NGRID 14

/* Figures of one (threads, N) case for the summary; NAN unknown. */
struct spp_bench_sum {
	int threads;
	int64_t n;
	double dense_ns;              /* median dense time over the sweep's grid */
	double best_be, csr_be;       /* breakevens */
	double csr_be_low, csr_be_high; /* csr_be's bracket (spp_sweep_bracket) */
	double best_be_low, best_be_high; /* best_be's bracket (spp_sweep_bracket) */
	char best_be_fmt[16];
	double best_90;               /* best speedup at sparsity 0.9 */
	double best_90_ci_low, best_90_ci_high; /* its 95 % interval (that point's) */
	char best_90_fmt[16];
	double best_24;               /* speedup of the best format on the 2:4 layer (nm2_4's: r24) */
	char best_24_fmt[16];
	double dlmc_best_geo;         /* geometric mean over DLMC of the best format's speedup */
	double dlmc_log_sum;          /* its sum of logs over the dlmc_n matrices so far */
	int dlmc_n;
	double csr90_ns;              /* median of csr at 0.9 (thread scaling) */
	/*
	 * The whole runs behind the speedup targets, for their bounds: the
	 * best format at 0.9 and nm2_4 on the 2:4 layer, each with the dense
	 * baseline of the same timing; format "" and figures NAN when there
	 * is none.
	 */
	struct spp_run r90, d90, r24, d24;
};

/* The cases of one run, in the order they ran. */
struct spp_bench_sums {
	struct spp_bench_sum sum[SPP_BENCH_MAX_CASES];
	int nsums;
};

/* One target of the kernel issue (docs/PERFORMANCE.md) and how it went. */
struct spp_bench_target {
	char what[64];                /* "N=64 unstructured: best speedup at 90%" */
	double value;                 /* NAN: not measured */
	char format[16];              /* whose value; "" none */
	double limit;
	int at_most;                  /* 1: met when value <= limit; 0: when value >= limit */
	int met;
	/*
	 * A speedup target's run and the dense baseline of the same timing
	 * (borrowed from the sums), and what bounds it at the limit; has_bound
	 * 0 when there is no timed run to bound (run and dense may be NULL).
	 */
	const struct spp_run *run, *dense;
	int has_bound;
	struct spp_run_bound bound;
};

/*
 * A new case appended to s: every figure unknown (NAN), no runs kept.
 * Returns it, or NULL with SPP_E_USAGE when s holds SPP_BENCH_MAX_CASES
 * already.
 */
struct spp_bench_sum *spp_bench_sums_add(struct spp_bench_sums *s, int threads, int64_t n,
					 struct spp_error *err);

/*
 * The run with the best speedup among spprof's own formats of runs (not
 * dense, not a peer library, ok with a finite speedup); NULL when none.
 * Borrowed from runs.
 */
const struct spp_run *spp_bench_best_run(const struct spp_layer_runs *runs);

/* One DLMC matrix's runs into s: the best format's speedup joins the geometric mean. */
void spp_bench_sum_dlmc(struct spp_bench_sum *s, const struct spp_layer_runs *runs);

/*
 * The case's unstructured sweep into s: the dense median over the grid,
 * the best breakeven and best speedup at 0.9 among spprof's formats (each
 * with its interval from the sweep's result and point), csr's
 * breakeven and time at 0.9; at90 (NULL or the runs of the point 0.9): the
 * best format's run there and its dense baseline (r90, d90).
 */
void spp_bench_sum_sweep(struct spp_bench_sum *s, const struct spp_sweep *sw,
			 const struct spp_layer_runs *at90);

/* The case's 2:4 layer runs into s: nm2_4's run and its dense baseline, and the best format. */
void spp_bench_sum_nm(struct spp_bench_sum *s, const struct spp_layer_runs *runs);

/* The point of r's curve at sparsity s (within 1e-9); NULL when none. Borrowed from r. */
const struct spp_sweep_point *spp_bench_point_at(const struct spp_sweep_result *r, double s);

/* The case (threads, n) of s; NULL when none. Borrowed from s. */
const struct spp_bench_sum *spp_bench_find_sum(const struct spp_bench_sums *s, int threads,
					       int64_t n);

/*
 * The dense time's scaling at N = n from t_first threads to t_last: the
 * median of the one case over the other's; NAN when a case is missing.
 */
double spp_bench_dense_scaling(const struct spp_bench_sums *s, int t_first, int t_last,
			       int64_t n);

/*
 * The kernel issue's targets, in the order a report lists them, into out
 * (SPP_BENCH_MAX_TARGETS): those of the 1-thread cases with N = 64 and N =
 * 1 present, and when tmax > 1 and both N = 64 cases are present the
 * scaling of csr (at 0.9) and nm2_4 (the 2:4 layer) from 1 thread to tmax.
 * Returns how many; 0 when neither 1-thread case is there.
 */
int spp_bench_targets(const struct spp_bench_sums *s, int tmax, struct spp_bench_target *out);

#endif
