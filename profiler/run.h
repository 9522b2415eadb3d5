/*
 * Kernel runs of one layer (DESIGN section 4): decode W to fp32, make X,
 * run the dense baseline and every format, check each output against the
 * dense result, time the ones that pass (interleaved, profiler/measure.h)
 * and derive the measured figures. Written once for every format: a
 * format is only its row of struct spp_format_ops. What the runs leave
 * (struct spp_layer_runs, the run figures, the dense choice) is
 * profiler/run_result.h.
 */
#ifndef SPP_PROFILER_RUN_H
#define SPP_PROFILER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "counters/counters.h"
#include "kernels/dense/dense.h"
#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/layer.h"
#include "profiler/machine.h"
#include "profiler/measure.h"
#include "profiler/run_result.h"
#include "profiler/static.h"

struct spp_sim_geometry;

struct spp_run_opts {
	int threads;                 /* >= 1: OpenMP and BLAS threads */
	enum spp_isa isa;            /* vector path of the kernels */
	uint64_t seed;               /* X: uniform in [-1, 1] from this seed */
	struct spp_bench_opts bench; /* warm-up, repeats, budget, schedule, clock */
	int cold;                    /* evict caches before each timed run */
	struct spp_flusher *flusher; /* cold: eviction buffer for opaque buffers; may be NULL */
	double verify_rtol;          /* |y - y_dense| <= rtol * (|W|.|X|) element-wise */
	/* bw_util's yardstick: the calibrated read bandwidth of the level a run's working set fits */
	struct spp_bw_model bw;
	/*
	 * Cache figures (counters/counters.h): NULL or "none": every run's
	 * cache null. A hardware backend counts the timed runs of each
	 * format (its OpenMP threads); "sim" replays each verified format's
	 * traced kernel through sim_geometry (counters/sim.h). sim_beside:
	 * that replay fills each run's cache_sim, whatever counts its cache.
	 */
	const struct spp_counter_backend *counters;
	const struct spp_sim_geometry *sim_geometry;
	int sim_beside;
	uint64_t sim_budget;         /* line accesses per replay (analyze: from its time budget); 0: SPP_SIM_DEFAULT_BUDGET */
	int cache_line;              /* bytes, for DRAM traffic from LLC misses; 0: 64 */
	/*
	 * Activations. act_x: real X, K x N row-major (borrowed), its path in
	 * act_path; else act_sparsity > 0 zeroes each uniform entry of X with
	 * that probability (i.i.d., from seed). 0 and NULL: uniform X, no zeros.
	 */
	double act_sparsity;
	const float *act_x;
	const char *act_path;
	/*
	 * Backends: SPP_BACKEND_CPU runs `formats`; SPP_BACKEND_CUDA runs the
	 * CUDA table (profiler/run_cuda.h) on the same W and X, checked
	 * against the same dense result. The CPU dense baseline always runs:
	 * it is the reference.
	 */
	unsigned backends;
	int cupti;                   /* cuda: collect CUPTI figures (a separate, untimed launch) */
	/*
	 * The dense candidates (kernels/dense/dense.h), the fastest of which
	 * is the baseline; NULL: a set opened for the call (every library).
	 * dense_memo: choices per shape, NULL: candidates timed every call.
	 */
	struct spp_dense_set *dense;
	struct spp_dense_memo *dense_memo;
	/*
	 * --epilogue: each CPU format also timed fused and unfused (struct
	 * spp_run_epilogue) with bias (M entries, borrowed; NULL: zeros) from
	 * bias_source. Set per layer by spp_layer_measure from the layer's
	 * bias tensor.
	 */
	enum spp_epilogue epilogue;
	const float *bias;
	const char *bias_source;
	/*
	 * --precision (enum spp_prec of kernels/lowp/lowp.h): fp32 (0) runs
	 * `formats`; another runs spp_lowp_measure on the layers instead.
	 */
	int precision;
};

/* Defaults: 1 thread, detected ISA, seed 1, spp_bench_opts_init, warm, rtol 1e-4, no peak. */
void spp_run_opts_init(struct spp_run_opts *o);

/*
 * Cold runs (--cold, with o->cold set and o->flusher = fl): fl gets an
 * eviction buffer of 2x the largest believable cache of m (NULL: this
 * machine; 256 MiB when none is known), and method (len bytes) says how
 * caches are evicted. spp_flusher_fini releases it. 0 or SPP_E_NOMEM.
 */
int spp_run_flusher_init(struct spp_flusher *fl, const struct spp_machine *m, char *method,
			 size_t len, struct spp_error *err);

/*
 * Check y against the dense result yd (m x n) element-wise: |y - yd| <=
 * rtol * b, b = (|W|.|X|), the scale of the rounding error any summation
 * order can make. Entries that are NaN in both agree (a NaN weight).
 * Returns 1 when it holds; *worst is the largest |y - yd| / b seen, at
 * (*wi, *wj) (-1 when none).
 */
int spp_run_check(const float *y, const float *yd, const float *b, int64_t m, int64_t n,
		  double rtol, double *worst, int64_t *wi, int64_t *wj);

/*
 * The bytes spp_layer_measure() allocates for l's runs whatever the
 * formats: the dense W and |W| (M x K), X and |X| (K x N), the dense and
 * kernel Y and the check's bound (M x N), in fp32. Each format's encoded
 * W comes on top. Saturates at UINT64_MAX.
 */
uint64_t spp_layer_run_bytes(const struct spp_layer *l);

/*
 * Measure layer l (static figures st) with the dense baseline and the n
 * formats given. Per-format problems (cannot encode, failed check,
 * undecodable dtype) are statuses in out, not errors. Returns 0, or
 * SPP_E_NOMEM / SPP_E_RUNTIME (out released). out is the caller's.
 */
int spp_layer_measure(const struct spp_layer *l, const struct spp_layer_static *st,
		      const struct spp_format_ops *const *formats, int nformats,
		      const struct spp_run_opts *o, struct spp_layer_runs *out,
		      struct spp_error *err);

/*
 * The same runs on a W given as fp32 (borrowed, m x k row-major), for W
 * that is not a model's layer (the breakeven sweep, benchmarks on
 * matrices from elsewhere): nnz and theoretical_speedup (0: unknown) are
 * the static figures of w, name is for messages. Same contract as
 * spp_layer_measure(); a format may be any struct spp_format_ops (a
 * reference peer such as librsb is timed and checked like the others).
 */
int spp_matrix_measure(const struct spp_matrix *w, int64_t n, uint64_t nnz,
		       double theoretical_speedup, const char *name,
		       const struct spp_format_ops *const *formats, int nformats,
		       const struct spp_run_opts *o, struct spp_layer_runs *out,
		       struct spp_error *err);

/*
 * spp_matrix_measure in precision o->precision (not fp32; issue 47,
 * profiler/run_lowp.c): the low-precision dense candidates, the fastest
 * the baseline, and the kernels/lowp formats among `formats` (bsr1x4 in
 * place of the bsr formats; the others not applicable, said in their
 * runs), every run's precision set. A precision no dense candidate runs
 * here refuses every run (unsupported, with the reason). The epilogue,
 * CUDA and the counters are not applied. Same contract as
 * spp_matrix_measure.
 */
int spp_lowp_measure(const struct spp_matrix *w, int64_t n, uint64_t nnz, double theoretical_speedup,
		     const char *name, const struct spp_format_ops *const *formats, int nformats,
		     const struct spp_run_opts *o, struct spp_layer_runs *out, struct spp_error *err);

/*
 * The thread policy of timed runs on `threads` threads: set o->bench's
 * schedule (and the settle pauses between pools) for how the OpenMP and
 * OpenBLAS pools wait in this process, and describe it in policy (the
 * waiting policy, where it came from, and the schedule chosen), and the
 * schedule's name ("interleaved", "blocked") in schedule. Shared by every
 * command that times runs, so that their figures compare.
 */
void spp_run_thread_policy(int threads, struct spp_run_opts *o, char *schedule,
			   size_t schedule_n, char *policy, size_t policy_n);

/*
 * Start every usable candidate's pool of set with `threads` threads (one
 * tiny GEMM each) and then pin the OpenMP threads (spp_pin_threads), so
 * that the BLAS threads, created first, stay unpinned. Returns the number
 * of threads pinned.
 */
int spp_run_threads_prepare(const struct spp_dense_set *set, int threads);

/*
 * The activation figures of X (k x n) against w (o: where X came from):
 * zero fraction, all-zero rows, and the combined FLOPs of DESIGN section
 * 3. 0 or SPP_E_NOMEM.
 */
int spp_run_act_figures(const struct spp_matrix *w, const float *x, int64_t n,
			const struct spp_run_opts *o, struct spp_act_figures *a,
			struct spp_error *err);

#endif
