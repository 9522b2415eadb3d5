/*
 * The analysis: the result model every report renders (the model, its
 * layers and their static figures, totals, warnings, runs, sweeps, derived
 * figures, the settings they ran under) and the options that made it.
 * Filled by the orchestrator (profiler/analyze.h), or read back from
 * saved reports (reports/merge.c); reports see this header, never the
 * orchestrator's.
 */
#ifndef SPP_PROFILER_ANALYSIS_H
#define SPP_PROFILER_ANALYSIS_H

#include <signal.h>
#include <stdint.h>

#include "counters/counters.h"
#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/derive.h"
#include "profiler/hash.h"
#include "profiler/layer.h"
#include "profiler/machine.h"
#include "profiler/model.h"
#include "profiler/run_result.h"
#include "profiler/session_record.h"
#include "profiler/shard.h"
#include "profiler/static.h"
#include "profiler/sweep_result.h"

/* analyze's --time-budget: timed seconds per layer */
#define SPP_ANALYZE_TIME_BUDGET_S 0.2

#define SPP_MAX_FORMATS 32
#define SPP_MAX_PEERS 4

struct spp_analysis;

/* --layers and --skip-layers globs, each */
#define SPP_MAX_LAYER_GLOBS 32

struct spp_analyze_opts {
	int64_t n;        /* N of every layer without a model-given N; default 128 */
	int n_set;        /* --n given: it is every layer's N, the model's too */
	/* --input-shape: the graph inputs' shapes (spp_open_opts, profiler/model.h) */
	struct spp_open_opts open;
	int threads;      /* 0: OpenMP's default */
	int static_only;  /* skip kernel runs */
	/* kernel runs (ignored with static_only) */
	const struct spp_format_ops *formats[SPP_MAX_FORMATS];
	int nformats;
	int formats_set;  /* 0: every CPU format; 1: formats[0..nformats-1] (may be none) */
	/* reference peers (kernels/peers.h) run after the formats, as formats */
	const struct spp_format_ops *peers[SPP_MAX_PEERS];
	int npeers;
	/* --dense, --cold, --time-budget, --seed, --repeat: the measurement session's (profiler/session_record.h) */
	struct spp_session_opts session;
	int breakeven;    /* sweep each distinct (shape, pattern) for its breakeven (profiler/breakeven.h) */
	/* --n-sweep: each layer's own W timed at each of these N (profiler/sweep.h); 0: none */
	int64_t n_sweep[SPP_NSWEEP_MAX_N];
	int n_sweep_count;
	/*
	 * Activations of the runs (profiler/run.h): act_sparsity > 0 zeroes X
	 * i.i.d. at that rate; activations, a folder of one .npy per layer
	 * (profiler/activations.h), real X where a layer has a file. Either
	 * adds the activation kernels (spp_cpu_act_formats) to the default formats.
	 */
	double act_sparsity;
	const char *activations;
	/* --target-sparsity (has_target): the model sparsity the hold-back list is taken against */
	int has_target;
	double target_sparsity;
	/* --epilogue (enum spp_epilogue): each CPU format also fused and unfused (struct spp_run_epilogue) */
	int epilogue;
	/*
	 * --precision (enum spp_prec, kernels/lowp/lowp.h): fp32 (0), or the
	 * runs of spp_lowp_measure; SPP_ANALYZE_PREC_AUTO: each layer's from
	 * its stored dtype (spp_analyze_layer_precision)
	 */
	int precision;
	/* --dedupe: a layer of the same work unit and non-zero pattern as an earlier one copies its runs (profiler/dedupe.h) */
	int dedupe;
	/* --shard: this process times only the layers of its shard's work units (profiler/shard.h) */
	struct spp_shard shard;
	/*
	 * --layers / --skip-layers (repeatable): fnmatch globs on layer names;
	 * a layer is timed when it matches a --layers glob (or none is given)
	 * and no --skip-layers glob. The others are scanned, not timed.
	 */
	const char *time_globs[SPP_MAX_LAYER_GLOBS], *skip_globs[SPP_MAX_LAYER_GLOBS];
	int ntime_globs, nskip_globs;
	unsigned backends;  /* SPP_BACKEND_CPU | SPP_BACKEND_CUDA; default cpu */
	int cupti;          /* with cuda: CUPTI figures */
	struct spp_counters_opts counters; /* --counters, --cache-model (default auto) */
	/*
	 * The report's file (-o), or NULL: checked (spp_outfile_check) once the
	 * model is open, so a path naming the model, a shard or its external
	 * data is refused before any layer is analysed.
	 */
	const char *output;
	/*
	 * Progress display; may be NULL. Called before each layer's runs with
	 * done = layers finished, and once more with done = nlayers at the end;
	 * a->stats hold every layer's static figures by then.
	 */
	void (*progress)(void *ctx, const struct spp_analysis *a, int done);
	void *progress_ctx;
	/*
	 * Resumable runs (the caller's journal, reports/journal.c); each may be
	 * NULL. Before layer i's runs, restore may fill a->runs[i] from the
	 * journal: 1 restored (the layer is not timed), 0 time it, < 0 an
	 * error (err). After them, done records them: 0 or an error. When
	 * *stop is set (Ctrl-C), no later layer is timed, no sweep runs, and
	 * the analysis is marked incomplete.
	 */
	int (*restore)(void *ctx, struct spp_analysis *a, int i, struct spp_error *err);
	int (*done)(void *ctx, const struct spp_analysis *a, int i, struct spp_error *err);
	void *journal_ctx;
	volatile sig_atomic_t *stop;
};

/* Defaults: n 128, threads 0, static_only 0, seed 1, all formats, budget 0.2 s, cpu. */
void spp_analyze_opts_init(struct spp_analyze_opts *o);

/*
 * The CPU formats the runs of o time, in order, into fmts (room for
 * SPP_MAX_FORMATS + SPP_MAX_PEERS): the chosen or default formats, the
 * activation kernels when activations have zeros and no --formats was
 * given, then the peers. *nswept: how many of the first are swept for
 * breakeven. None without the cpu backend. Returns the count.
 */
int spp_analyze_formats(const struct spp_analyze_opts *o, const struct spp_format_ops **fmts,
			int *nswept);

struct spp_model_totals {
	uint64_t tensors;
	uint64_t params;
	uint64_t nnz;
	double sparsity;  /* 1 - nnz / params; 0 when params == 0 */
	uint64_t bytes;   /* file bytes */
	struct spp_hash hash;
};

/*
 * The warnings a report can carry: each a machine-readable code beside its
 * sentence (JSON warnings[].code), so that dashboards can filter on them.
 * X(enum, code, what it means) -- docs/METRICS.md lists the same.
 */
#define SPP_WARN_LIST(X)                                                                \
	X(SPP_WARN_NO_DEVICE, "no_device", "a CUDA backend was asked for next to cpu, no device")     \
	X(SPP_WARN_DTYPE_NO_ZERO_TEST, "dtype_no_zero_test", "weights of a dtype with no zero test counted as non-zero") \
	X(SPP_WARN_EFFICIENCY_ABOVE_IDEAL, "efficiency_above_ideal", "a run beat the FLOP ideal")   \
	X(SPP_WARN_DENSE_BASELINE_WEAK, "dense_baseline_weak", "the dense baseline is far from the roofline") \
	X(SPP_WARN_DENSE_BASELINE_UNCHECKED, "dense_baseline_unchecked", "no calibration to check the baseline") \
	X(SPP_WARN_DENSE_CANDIDATE, "dense_candidate_unavailable", "a dense library could not run")  \
	X(SPP_WARN_NO_COUNTERS, "no_counters", "--counters none: no cache figures")                 \
	X(SPP_WARN_HW_COUNTERS, "hw_counters", "hardware counters: the dense baseline is not counted") \
	X(SPP_WARN_SIM_COUNTERS, "sim_counters", "cache figures from the simulator")                 \
	X(SPP_WARN_ACTIVATIONS_MISSING, "activations_missing", "a layer has no --activations file") \
	X(SPP_WARN_RUN_FAILED, "run_failed", "a format's run failed")                               \
	X(SPP_WARN_NO_KERNEL_RUNS, "no_kernel_runs", "a layer has no kernel runs")                  \
	X(SPP_WARN_PRECISION_FALLBACK, "precision_fallback", "--precision auto: a layer run in another precision than its own") \
	X(SPP_WARN_NO_CALIBRATION, "no_calibration", "no calibrated bandwidth: bw_util is null")    \
	X(SPP_WARN_NO_GEMM_LAYERS, "no_gemm_layers", "the model has no GEMM layers")               \
	X(SPP_WARN_INPUT_SHAPE_ASSUMED, "input_shape_assumed", "a graph input's shape was assumed or unknown") \
	X(SPP_WARN_UNRESOLVED_WEIGHT, "unresolved_weight", "a layer's weight input is no constant spprof resolves") \
	X(SPP_WARN_SHARD_FAILED, "shard_failed", "a rank failed: its shard's layers have no runs") \
	X(SPP_WARN_UNSTABLE, "unstable", "a speedup's 95 % interval is wider than +-5 %") \
	X(SPP_WARN_MACHINE_BUSY, "machine_busy", "steal or other processes while timing") \
	X(SPP_WARN_DISTURBED, "disturbed", "a layer's rounds stayed disturbed: its figures include them") \
	X(SPP_WARN_TRAINING_STATE, "training_state", "a checkpoint's optimizer or training state was left out") \
	X(SPP_WARN_N_ASSUMED, "n_assumed", "a graph model's layers whose N the graph did not give")

#define SPP_ANALYZE_PREC_AUTO (-1)

enum spp_warn {
#define SPP_WARN_ENUM(e, code, what) e,
	SPP_WARN_LIST(SPP_WARN_ENUM)
#undef SPP_WARN_ENUM
};

/* The code of w ("no_device"). */
const char *spp_warn_code(enum spp_warn w);

struct spp_warning {
	enum spp_warn code;
	char *message;                  /* owned */
};

struct spp_analysis {
	struct spp_model *model;        /* owned */
	struct spp_layer *layers;       /* nlayers, owned */
	struct spp_layer_static *stats; /* nlayers, owned */
	int nlayers;
	struct spp_model_totals totals;
	struct spp_analyze_opts opts;
	int incomplete;                 /* *opts.stop was set: the layers timed before it only */
	char *owned_activations;        /* owned: opts.activations of an analysis read back (spprof merge); NULL */
	struct spp_warning *warnings;   /* nwarnings, owned */
	int nwarnings;
	struct spp_machine *machine;    /* owned; NULL when not described */
	struct spp_layer_runs *runs;    /* nlayers, owned; NULL without kernel runs */
	/* with opts.dedupe and runs: layer i's runs are a copy of layer runs_from[i]'s (-1: its own); owned */
	int *runs_from;
	/*
	 * What the measurement session of the runs left: the dense candidates
	 * (record.dense.n 0 without runs), each shape's dense choice, and
	 * record.settings, the record the report keeps (read back by merge).
	 */
	struct spp_session_record record;
	/* with opts.breakeven: layer i's sweep is sweeps[sweep_of[i]] (-1: none); owned */
	struct spp_sweep *sweeps;
	int nsweeps;
	int *sweep_of;
	/* with opts.n_sweep_count: layer i's speedup against N (nresults 0: none); nlayers, owned */
	struct spp_nsweep *nsweeps_n;
	/* figures derived from the above (profiler/derive.h); derived NULL until spp_analysis_derive */
	struct spp_layer_derived *derived;
	struct spp_model_summary summary;
	struct spp_projection projection;
};


/* Append a warning to a->warnings. Returns 0 or SPP_E_NOMEM. */
int spp_analysis_warn(struct spp_analysis *a, struct spp_error *err, enum spp_warn code,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The CPU format or reference peer (*peer 1) of key, as a report names it; NULL when neither. */
const struct spp_format_ops *spp_format_by_key(const char *key, int *peer);

/*
 * Whether layer i is timed here: its work unit this shard's (always
 * without --shard) and its name chosen by --layers / --skip-layers.
 */
int spp_analysis_timed(const struct spp_analysis *a, int i);

/* Whether layer i's name is chosen by --layers / --skip-layers (all are without them). */
int spp_analysis_selected(const struct spp_analysis *a, int i);

/* Release an analysis and its model; accepts NULL. */
void spp_analysis_destroy(struct spp_analysis *a);

#endif
