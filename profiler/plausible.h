/*
 * Is the yardstick believable? Every speedup is a ratio against the dense
 * baseline, so a weak baseline inflates every figure (DESIGN section 4).
 * This module checks the runs of an analysis against the machine's
 * calibrated roofline and the FLOP ideal and says so in its warnings, and
 * sums up the baseline for the report's header: which candidate won, the
 * GFLOP/s it reached and its share of the FMA peak.
 */
#ifndef SPP_PROFILER_PLAUSIBLE_H
#define SPP_PROFILER_PLAUSIBLE_H

#include "profiler/analysis.h"

/* A run this much faster than the FLOP ideal is warned about. */
#define SPP_PLAUSIBLE_EFFICIENCY 1.2
/* A compute-bound baseline under this share of the FMA peak is warned about. */
#define SPP_PLAUSIBLE_COMPUTE 0.4
/* A memory-bound baseline under this share of its level's read bandwidth is warned about. */
#define SPP_PLAUSIBLE_MEMORY 0.5
/* A speedup whose 95 % interval's half-width exceeds this share of it is called unstable. */
#define SPP_PLAUSIBLE_CI_HALF 0.05
/* Steal above this share of CPU time while timing, or a load above the CPUs plus LOAD_SLACK, is a busy machine. */
#define SPP_PLAUSIBLE_STEAL 0.02
#define SPP_PLAUSIBLE_LOAD_SLACK 0.5
/* Dense runs shorter than this are kernel overhead, not a rate (the diagnosis says so). */
#define SPP_PLAUSIBLE_MIN_NS 10e3

/* How the dense baseline of one shape stands against the roofline. */
struct spp_baseline_check {
	double intensity;     /* dense FLOPs / (W + X + Y bytes) */
	double ridge;         /* peak GFLOP/s / read GB/s of the level the working set fits */
	int compute_bound;    /* intensity above the ridge */
	double share;         /* GFLOP/s over the peak (compute-bound), or GB/s over the level's */
	int level;            /* enum spp_bw_level of the working set */
	int weak;             /* share under SPP_PLAUSIBLE_COMPUTE / _MEMORY */
	int known;            /* 0: no calibration, no timed baseline, or too short to judge */
};

/* Check layer i's dense baseline (run 0) against the calibrated roofline of a. */
void spp_baseline_check(const struct spp_analysis *a, int i, struct spp_baseline_check *out);

/* The baseline over the whole analysis. */
struct spp_baseline_summary {
	int layers;           /* layers with a timed baseline */
	double gflops;        /* sum of their dense FLOPs over the sum of their dense medians */
	double peak_gflops;   /* calibrated FMA peak of the run's threads; 0 unknown */
	double share;         /* gflops / peak_gflops; NAN unknown */
	int weak;             /* shapes whose baseline spp_baseline_check calls weak */
	struct spp_baseline_win {
		char name[48];        /* the candidate */
		char library[64];
		int layers;           /* layers whose baseline it was */
	} wins[SPP_DENSE_MAX];
	int nwins;
};

void spp_baseline_summarize(const struct spp_analysis *a, struct spp_baseline_summary *out);

/*
 * Add the plausibility warnings to a->warnings: every run whose efficiency
 * exceeds SPP_PLAUSIBLE_EFFICIENCY (naming the layer and format, and
 * whether it looks like a weak baseline or a cache effect), and every
 * shape whose baseline spp_baseline_check calls weak. Returns 0 or
 * SPP_E_NOMEM.
 */
int spp_plausibility_warnings(struct spp_analysis *a, struct spp_error *err);

#endif
