/*
 * A layer's runs as results (DESIGN section 4): each run's status and
 * figures, the one table of its scalar figures (SPP_RUN_FIGURES), the
 * dense baseline's choice, and the arithmetic that derives the figures
 * from the medians, shared by the runs as they are timed (profiler/run.h)
 * and by runs read back from a report (merge, --resume). Nothing here
 * measures.
 *
 * The layer's runs are owned by struct spp_layer_runs until
 * spp_layer_runs_release().
 */
#ifndef SPP_PROFILER_RUN_RESULT_H
#define SPP_PROFILER_RUN_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "counters/counters.h"
#include "kernels/dense/dense.h"
#include "kernels/kernels.h"
#include "profiler/machine.h"
#include "profiler/stats.h"

enum spp_run_status {
	SPP_RUN_OK,              /* verified and timed */
	SPP_RUN_FAILED,          /* output failed the check, or the kernel failed: no time */
	SPP_RUN_NOT_APPLICABLE,  /* the format cannot hold this layer (reason says why) */
	SPP_RUN_UNSUPPORTED,     /* the layer's dtype has no fp32 decoding: nothing ran */
};

/* "ok", "failed", "not_applicable", "unsupported". */
const char *spp_run_status_name(enum spp_run_status s);

/*
 * CUPTI figures of one CUDA run (DESIGN section 4, source "cupti"), per
 * kernel launch; NAN unknown. source "" : none (reported null, note says why).
 */
struct spp_gpu_figures {
	char source[8];              /* "cupti" or "" */
	double dram_read_bytes, dram_write_bytes;
	double l2_hit_rate, l1_hit_rate;      /* 0..1 */
	double achieved_occupancy;           /* 0..1 of the SM's warp slots */
	double sm_active_imbalance;          /* max / mean of active cycles across SMs */
	double branch_efficiency;            /* 0..1 */
	char note[160];              /* why figures are missing; "" when nothing to say */
};

/* Every figure unknown, no source. */
void spp_gpu_figures_init(struct spp_gpu_figures *g);

/*
 * --epilogue: the format's kernel with the epilogue fused (applied while
 * Y is in registers, kernels.h) and unfused (the plain kernel, then
 * spp_epilogue_apply over Y), timed in the same interleaved run as the
 * plain kernel; both checked against epilogue(dense result).
 */
struct spp_run_epilogue {
	enum spp_epilogue kind;
	const char *bias_source;     /* "model" (the layer's bias tensor) or "zeros" */
	enum spp_run_status status;  /* of the two variants: ok only when both verified and timed */
	char reason[160];
	struct spp_time_stats fused, unfused;
	double saving;               /* 1 - fused / unfused (medians); NAN unknown */
};

/* One layer x backend x format. Figures are NAN when unknown (reported null). */
struct spp_run {
	const char *backend;         /* "cpu" or "cuda" (static string) */
	char format[16];             /* "dense", "csr", ... */
	char precision[8];           /* inputs: "fp32", "tf32", "fp16", "bf16"; accumulation is fp32 */
	/* the dense baseline: which candidate and library ran ("onednn", "oneDNN 2.6.3 (avx2)"); "" else */
	char candidate[48];
	char library[64];
	enum spp_run_status status;
	char reason[256];            /* why not ok; "" when ok */
	struct spp_time_stats time;  /* repeats 0: not timed */
	double speedup, efficiency, gap, gflops;
	/*
	 * The 95 % confidence interval of the speedup (spp_run_speedup_ci):
	 * of the median of the per-round speedups, each round's dense time
	 * over the run's in the same round; NAN with fewer than 6 rounds or
	 * without interleaved rounds. speedup stays the ratio of the medians.
	 */
	double speedup_ci_low, speedup_ci_high;
	/*
	 * The layer's interleaved rounds judged disturbed (the dense baseline
	 * slowed, steal, other tasks running: spp_bench_opts) and discarded,
	 * and those kept because too few clean ones were left within twice
	 * the budget; the same for every run of the layer's timing. NAN: not
	 * judged (blocked schedule, a GPU run, an older report).
	 */
	double rounds_discarded, rounds_disturbed;
	double peak_share;           /* the CPU dense baseline: gflops / the calibrated FMA peak; NAN else */
	double bytes_moved, bandwidth_gbs, bw_util;
	double intensity;            /* arithmetic intensity: the run's FLOPs / bytes_moved; NAN unknown */
	int bw_level;                /* enum spp_bw_level bw_util is taken against; -1 unknown */
	double imbalance, nnz_imbalance;
	double max_error;            /* worst |y - y_dense| / (|W|.|X|) of the check; NAN: not checked */
	struct spp_cache_figures cache; /* source "" : no counter figures (reported null) */
	/* --counters A,sim: the simulator's figures of the same run beside cache's; source "": none */
	struct spp_cache_figures cache_sim;
	/*
	 * An activation-skipping kernel (key "<format>_act"): the median of the
	 * weight-only kernel of the same format over this one's; NAN otherwise.
	 */
	double speedup_weight_only;
	/* cuda: host-to-device copies of W and X, device-to-host of Y, ns; NAN on cpu */
	double copy_ns[3];
	struct spp_gpu_figures gpu;  /* cuda: CUPTI figures */
	struct spp_run_epilogue epi; /* kind none: not asked for */
};

/*
 * The scalar figures of a run, one row each (double members of struct
 * spp_run, NAN unknown): the one table that the report's writer and reader
 * (reports/json_layers.c, reports/runs_read.c), `spprof compare`, the run
 * tables of the text and Markdown reports and the schema test follow. A
 * new figure is a member above, a row here, and its line in
 * docs/report.schema.json and docs/METRICS.md.
 *   KEY     the report's name: layers[].runs[].KEY
 *   MEMBER  of struct spp_run
 *   WHEN    reported for SPP_FIG_TIMED: an ok, timed run; SPP_FIG_OK: an ok
 *           run; SPP_FIG_ANY: every run (NAN where it does not apply)
 *   FLAGS   SPP_FIG_READ: measured, so read back from a saved report (merge,
 *           --resume, report); the others are derived again from the times
 *           (spp_layer_runs_refigure). SPP_FIG_COMPARE: compared by
 *           `spprof compare` (and gated by `check`). SPP_FIG_TEXT,
 *           SPP_FIG_MD: a column of the text, Markdown run table, in the
 *           table's order
 *   TITLE   the column's title; CELL how its cell is shown (a ratio "2.31x",
 *           the efficiency or the dense baseline's peak share, a number in
 *           FMT, GB/s with the share of the calibrated level)
 */
enum spp_fig_when { SPP_FIG_TIMED, SPP_FIG_OK, SPP_FIG_ANY };
enum spp_fig_cell { SPP_CELL_RATIO, SPP_CELL_EFFICIENCY, SPP_CELL_NUMBER, SPP_CELL_BANDWIDTH };
#define SPP_FIG_READ 1u
#define SPP_FIG_COMPARE 2u
#define SPP_FIG_TEXT 4u
#define SPP_FIG_MD 8u
#define SPP_FIG_SHOWN (SPP_FIG_TEXT | SPP_FIG_MD)
/* X(KEY, MEMBER, WHEN, FLAGS, TITLE, CELL, FMT) */
#define SPP_RUN_FIGURES(X)                                                                     \
	/* speedup: read back only to name a GPU run's baseline (spp_layer_runs_refigure) */  \
	X("speedup", speedup, SPP_FIG_TIMED, SPP_FIG_READ | SPP_FIG_COMPARE | SPP_FIG_SHOWN,    \
	  "speedup", SPP_CELL_RATIO, NULL)                                                     \
	X("speedup_ci_low", speedup_ci_low, SPP_FIG_TIMED, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL) \
	X("speedup_ci_high", speedup_ci_high, SPP_FIG_TIMED, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL) \
	X("rounds_discarded", rounds_discarded, SPP_FIG_TIMED, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL) \
	X("rounds_disturbed", rounds_disturbed, SPP_FIG_TIMED, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL) \
	X("efficiency", efficiency, SPP_FIG_TIMED, SPP_FIG_COMPARE | SPP_FIG_SHOWN,             \
	  "efficiency", SPP_CELL_EFFICIENCY, NULL)                                             \
	X("gap", gap, SPP_FIG_TIMED, SPP_FIG_COMPARE, NULL, SPP_CELL_NUMBER, NULL)             \
	X("gflops", gflops, SPP_FIG_TIMED, SPP_FIG_COMPARE | SPP_FIG_SHOWN,                     \
	  "GFLOP/s useful", SPP_CELL_NUMBER, "%.1f")                                           \
	X("peak_share", peak_share, SPP_FIG_TIMED, 0, NULL, SPP_CELL_NUMBER, NULL)             \
	X("bytes_moved", bytes_moved, SPP_FIG_OK, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL)   \
	X("arithmetic_intensity", intensity, SPP_FIG_OK, 0, NULL, SPP_CELL_NUMBER, NULL)       \
	X("bandwidth_gbs", bandwidth_gbs, SPP_FIG_TIMED, SPP_FIG_TEXT, "GB/s",                 \
	  SPP_CELL_BANDWIDTH, "%.1f")                                                          \
	X("bw_util", bw_util, SPP_FIG_TIMED, SPP_FIG_COMPARE, NULL, SPP_CELL_NUMBER, NULL)     \
	X("imbalance", imbalance, SPP_FIG_TIMED, SPP_FIG_READ | SPP_FIG_COMPARE | SPP_FIG_TEXT, \
	  "imbalance", SPP_CELL_NUMBER, "%.2f")                                                \
	X("nnz_imbalance", nnz_imbalance, SPP_FIG_ANY, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL) \
	X("max_error", max_error, SPP_FIG_ANY, SPP_FIG_READ, NULL, SPP_CELL_NUMBER, NULL)      \
	X("speedup_weight_only", speedup_weight_only, SPP_FIG_TIMED, 0, NULL, SPP_CELL_NUMBER, NULL)

/* The count of rows, a constant expression. */
#define SPP_RUN_FIGURE_ONE(...) +1
enum { SPP_RUN_FIGURES_COUNT = 0 SPP_RUN_FIGURES(SPP_RUN_FIGURE_ONE) };

/* The table as data, for code that walks it (compare, the run tables, the schema test). */
struct spp_run_figure {
	const char *key;
	enum spp_fig_when when;
	unsigned flags;
	const char *title;
	enum spp_fig_cell cell;
	const char *fmt;
};
extern const struct spp_run_figure spp_run_figure_rows[];
extern const int spp_run_figure_nrows;

/* Whether r reports figures of kind when (an ok, timed run for SPP_FIG_TIMED, ...). */
int spp_run_figure_known(const struct spp_run *r, enum spp_fig_when when);

/* The activations X of a layer's runs (DESIGN section 3, combined FLOPs). */
struct spp_act_figures {
	char source[16];             /* "uniform" (no zeros asked for), "synthetic", "file" */
	char path[256];              /* the .npy, source "file" */
	double requested;            /* --act-sparsity; NAN for a file or uniform X */
	double sparsity;             /* zero fraction of X as run */
	int64_t zero_rows;           /* all-zero rows of X (K x N): what csr_act skips */
	double flops_combined;       /* 2 * sum over non-zero w_ik of the non-zeros of X's row k */
	double combined_speedup;     /* dense FLOPs / combined; NAN when combined is 0 */
};

/* One dense candidate (kernels/dense/dense.h) timed on one (M, K, N, threads). */
struct spp_dense_timing {
	char name[48];               /* the candidate: "openblas", "openblas:Haswell", "onednn" */
	char library[64];            /* "OpenBLAS 0.3.21 (Zen)" */
	enum spp_run_status status;  /* ok: timed; failed: wrong result, never chosen */
	char reason[200];
	struct spp_time_stats time;
	double gflops;               /* dense FLOPs / median; NAN when not timed */
	double max_error;            /* against the double-precision reference columns */
	double relative;             /* the winner's median over this one's (1: the winner); NAN */
	int retired;                 /* raced out after its first rounds (profiler/measure.h): never the winner */
};

/*
 * The dense baseline of one shape (DESIGN section 4): every candidate's
 * time, from one interleaved run, and the fastest that computed right.
 */
struct spp_dense_choice {
	int64_t m, k, n;
	int threads;
	int winner;                  /* index into t; -1: no candidate passed */
	struct spp_dense_timing t[SPP_DENSE_MAX];
	int nt;
	char measured_on[128];       /* the layer or matrix the candidates were timed on */
};

/*
 * Choices made so far, one per distinct (M, K, N, threads): a later layer
 * of the same shape times only the winner (and reports the choice it
 * reused). Owned by the caller; spp_dense_memo_free releases it.
 */
struct spp_dense_memo {
	struct spp_dense_choice *c;
	int n, cap;
};

void spp_dense_memo_free(struct spp_dense_memo *m);

struct spp_layer_runs {
	struct spp_run *runs;        /* the dense baseline first, then each format */
	/* how the dense baseline was chosen; shared: reused from dense.measured_on */
	struct spp_dense_choice dense;
	int dense_shared;
	int nruns;
	struct spp_act_figures act;  /* X of the runs */
};

#define SPP_BACKEND_CPU 1u
#define SPP_BACKEND_CUDA 2u

/*
 * r's speedup interval from the rounds: dense[i] and t[i] the dense
 * baseline's and r's times of round i (nd and nt of them), paired while
 * both have one; the distribution-free 95 % interval of their ratios'
 * median (spp_median_ci95), NAN with fewer than 6 pairs.
 */
void spp_run_speedup_ci(struct spp_run *r, const double *dense, int nd, const double *t, int nt);

/* Status s and the reason, printf-style. */
__attribute__((format(printf, 3, 4)))
void spp_run_set_status(struct spp_run *r, enum spp_run_status s, const char *fmt, ...);

/*
 * How a run in bf16, fp16 or int8 is checked (spp_lowp_measure,
 * profiler/run_lowp.c; the report's settings.verify_rule says it).
 */
#define SPP_LOWP_VERIFY_RULE                                                              \
	"runs in bf16, fp16 or int8: |y - y_dense| <= (1e-5 + 2 K 2^-24) * "             \
	"(sum_k |w_ik| * max_k |x_kj|) for every element, y_dense the same-precision dense " \
	"result of the same quantized W and X"
#define SPP_LOWP_VERIFY_RTOL(k) (1e-5 + 2.0 * (double)(k) * 0x1p-24)

/* A run with every figure unknown (NAN), status ok, precision "fp32", not yet timed. */
void spp_run_init(struct spp_run *r, const char *backend, const char *format);

/* What the figures of one run are derived from. */
struct spp_run_inputs {
	int64_t m, k, n;
	uint64_t nnz;
	double w_bytes;              /* encoded W as the kernel reads it (dense: M*K*4) */
	double theoretical_speedup;  /* static; 0 unknown */
	const struct spp_bw_model *bw; /* NULL or uncalibrated: bw_util unknown */
	double t_ns, t_dense_ns;     /* medians */
	double flops;                /* the work done; 0: sparse FLOPs 2 * nnz * n */
	/* X as the kernel reads it, the rows it touches (kernels.h x_rows) x N x 4; 0: all of X */
	double x_bytes;
	/* > 0: bytes_moved as read back from a report, kept (spp_layer_runs_refigure); 0: derived */
	double bytes_moved;
};

/*
 * The figures of DESIGN section 4 from medians: speedup, efficiency, gap,
 * gflops (flops, by default sparse FLOPs 2*nnz*N, / time), bytes_moved (W + the
 * rows of X the kernel reads, x_bytes, by default all of X (K*N*4) + Y (M*N*4): what it
 * moves, so that bw_util stays at most 1), intensity (those flops / bytes_moved), bandwidth_gbs and
 * bw_util against the read bandwidth of the level that holds bytes_moved
 * (bw_level). Unknown inputs leave NAN. Pure.
 */
void spp_run_figures(const struct spp_run_inputs *in, struct spp_run *r);

/*
 * What bounds a run against a speedup target (a benchmark's "missed: what
 * bounds it"): its useful FLOP rate against the dense baseline's, and the
 * rates it would need at `target`. The dense time stays, so the run's time
 * must shrink by speedup / target and each rate grow by scale = target /
 * speedup. NAN where an input is unknown.
 */
struct spp_run_bound {
	double dense_share;       /* r->gflops / dense->gflops: useful FLOP/s against dense's */
	double scale;             /* target / r->speedup */
	double need_gbs, need_bw_util, need_gflops, need_dense_share;
};

void spp_run_bound(const struct spp_run *r, const struct spp_run *dense, double target,
		   struct spp_run_bound *b);

/* Free the runs; accepts NULL and a zeroed struct. */
void spp_layer_runs_release(struct spp_layer_runs *r);

/* DRAM traffic beside the time and the traffic model (dram_gbs, dram_over_model of cache and cache_sim). */
void spp_run_cache_dram(struct spp_run *r);

/* Whether a format key names an activation-skipping kernel ("<format>_act"). */
int spp_run_act_kernel(const char *key);

/* Each timed "<format>_act" run against the timed run of "<format>" (speedup_weight_only). */
void spp_run_weight_only(struct spp_layer_runs *out);

/* The layer runs were timed on, as spp_layer_runs_refigure needs it. */
struct spp_run_layer {
	int64_t m, k, n;
	uint64_t nnz;
	double theoretical_speedup;  /* static; 0 unknown */
};

/*
 * Runs read back from a file (merge's parts, --resume's journal): every
 * figure derived from a time computed again from the medians as the timing
 * computed it (spp_run_figures, spp_run_weight_only, the epilogue's saving,
 * cache DRAM rates, the dense choice's rates), so that no figure is copied
 * from the file. What is not a time is kept where it cannot be derived
 * again: bytes_moved (the encoded size), bw_level (the cache level it fits),
 * the activation figures (X is not kept) and counted events. A CPU run is
 * against the CPU's dense run; a GPU run against the GPU run whose median
 * its read speedup names (the fastest baseline of its precision), else its
 * speedup is unknown. bw: the calibration the runs were timed under (NULL:
 * none, bw_util unknown).
 */
void spp_layer_runs_refigure(struct spp_layer_runs *out, const struct spp_run_layer *L,
			     const struct spp_bw_model *bw);

#endif
