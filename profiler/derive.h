/*
 * The figures derived from an analysis's runs and sweeps, computed once
 * here so that every report renders the same numbers (DESIGN sections 3,
 * 5 and 6): each layer's recommendation, diagnosis and breakeven margins,
 * the model's sums over its GEMM layers, and its projection. spp_analyze_run fills them; an analysis put
 * together by hand calls spp_analysis_derive itself.
 */
#ifndef SPP_PROFILER_DERIVE_H
#define SPP_PROFILER_DERIVE_H

#include "profiler/diagnose.h"
#include "profiler/static.h"

struct spp_analysis;

/* How many layers the projection's prune_next lists. */
#define SPP_PRUNE_NEXT_MAX 5

struct spp_recommendation {
	const char *backend;   /* "cpu" or "cuda" */
	char format[16];       /* "dense" when no format is clearly faster */
	double speedup;        /* measured; 1 for dense; NAN when nothing was timed */
	double time_ns;        /* median of the chosen run; NAN when nothing was timed */
	double dense_ns;       /* median of the dense baseline of its backend */
	char reason[256];
};

/* The speedup a format that moves no fewer bytes than dense must show to be recommended. */
#define SPP_RECOMMEND_REAL_GAIN 1.10

/*
 * The run with the best measured speedup, each backend's runs against
 * that backend's dense baseline (OpenBLAS on cpu, cuBLAS fp32 on cuda),
 * chosen only when its gain is clear of the noise (its speedup's 95 %
 * interval wholly above 1 where known, else its p90 below dense's p10)
 * and, when it moves no fewer bytes than dense, at least
 * SPP_RECOMMEND_REAL_GAIN; otherwise the CPU's dense. Only formats with a storage
 * row are candidates (not peers or activation kernels). Equal
 * speedups go to the run listed first. Returns 0 when a recommendation was
 * made, -1 when the layer has no timed dense baseline (out untouched).
 */
int spp_recommend_layer(const struct spp_layer_runs *runs, struct spp_recommendation *out);

struct spp_layer_derived {
	int has_rec;                     /* rec is set: the layer has timed runs */
	struct spp_recommendation rec;
	char *diagnosis;                /* owned: the sentences joined by "; "; "" when none */
	double *margin;                  /* per result of the layer's sweep: sparsity - breakeven
					    (positive: already past it; NAN: none); owned */
	double best_breakeven;           /* the lowest breakeven of its formats; NAN none */
	/* static, with --act-sparsity A: the expected combined FLOPs of i.i.d. zeros in X */
	double expected_combined;        /* flops_sparse (1 - A); NAN without A */
	double expected_combined_speedup;/* flops_dense / expected_combined; NAN when unknown */
	/*
	 * The selections every report prints (renderers never choose): the
	 * storage format (enum spp_storage_fmt) with the largest ratio to
	 * dense among those that hold the layer, dense itself included, so a
	 * layer no format shrinks is "dense" (ties: the earlier row, dense
	 * first); -1 when none. The verified (ok) sparse run of the layer's
	 * runs with the largest speedup, an index into runs[i].runs; -1 when
	 * none ran.
	 */
	int best_storage;
	int fastest;
};

/*
 * The sums over the analysed GEMM layers (an unsupported layer's nnz is
 * unknown: it is left out). A format's storage sums only the layers it
 * can hold, and its ratio compares against the dense bytes of those same
 * layers, so an N:M format that fits half the layers is not credited with
 * the other half. NAN: unknown (no layer).
 */
#define SPP_HOLD_BACK_MAX 8

/*
 * The layers whose low sparsity holds the model back from a target
 * sparsity S (--target-sparsity; else the model's own GEMM sparsity, so the
 * list is the layers denser than the model): a layer's excess is its nnz
 * above (1 - S) x its params, ranked by the FLOPs of that excess; alone is
 * the sparsity the layer alone would need for the model to reach S (NAN
 * when its non-zeros cannot cover the model's excess).
 */
struct spp_hold_back {
	int valid;                       /* 0 without analysed layers (JSON null) */
	double target;                   /* S */
	int from_option;                 /* S from --target-sparsity */
	double nnz_to_remove;            /* gemm_nnz - (1 - S) gemm_params; <= 0: reached */
	double excess_flops;             /* sum over layers of the excess's FLOPs (2 nnz N) */
	int n;
	struct spp_hold_back_layer {
		int layer;
		double excess_nnz, excess_flops, share, alone;
	} l[SPP_HOLD_BACK_MAX];
};

/*
 * The model's mask provenance: the verdict of spp_provenance_judge on the
 * survivors sampled in every layer judged by its own figures (pooled),
 * the layers per verdict, and the all-zero and nearly-zero layers.
 */
struct spp_model_structure {
	enum spp_provenance verdict;
	uint64_t survivors, in_band;
	double low_share;                /* in_band / survivors; NAN without */
	char reason[128];
	int layers[SPP_PROV_STRUCTURED + 1]; /* per verdict; [SPP_PROV_NOT_JUDGED] those not judged */
	int zero_layers, nearly_zero_layers;
};

/*
 * The whole model beside its GEMM layers (whole_model.c), for graph
 * formats whose loader counted the graph's ops (spp_model.graph): the
 * analysed layers' dense FLOPs and weight bytes against the model's, and
 * the deploy projection read against the model by Amdahl's law with the
 * layers' FLOP share standing for their time share (the rest of the graph
 * is not timed). valid 0: no graph, reason says why, every figure null.
 * NAN: unknown.
 */
struct spp_whole_model {
	int valid;
	char reason[200];
	uint64_t ops, layer_ops, not_counted;  /* as spp_graph_cost's */
	char not_counted_ops[200];
	double flops;            /* every layer's dense FLOPs + the other ops' counted FLOPs */
	double profiled_flops;   /* the analysed layers' dense FLOPs (summary.flops.dense) */
	double flops_share;      /* profiled_flops / flops */
	double bytes;            /* the model's weights and constants in their dtypes */
	double profiled_bytes;   /* the analysed layers' dense bytes, a tensor's at most its own */
	double bytes_share;
	/* the model with the layers' sparse FLOPs: flops / (flops - profiled + sparse) */
	double theoretical_speedup;
	/* with runs: the projected layers' FLOP share f, their speedup s
	 * (projection.speedup) and the model's bound 1 / ((1 - f) + f / s) */
	double projected_share, deploy_speedup, deploy_bound;
};

struct spp_model_summary {
	double gemm_params, gemm_nnz, gemm_sparsity;
	struct spp_summary_storage {
		double bytes, ratio;         /* NAN when no layer fits the format */
		int applicable_layers;
	} storage[SPP_ST_COUNT];
	/* the layers' best storage rule over the formats that hold every layer dense holds; -1 none */
	int best_storage;
	double flops_dense, flops_sparse, theoretical_speedup;
	/* the layers' N: its least and greatest, and the layers whose N the model gave (n_source "model") */
	int64_t n_min, n_max;
	int n_from_model;
	struct spp_hold_back hold_back;
	struct spp_model_structure structure;
	struct spp_whole_model whole_model;
};

/*
 * a->summary.whole_model from a's model (its graph costs and tensors),
 * layers, summary sums and, where it is valid, a->projection. Returns 0
 * or SPP_E_NOMEM.
 */
int spp_whole_model(struct spp_analysis *a, struct spp_error *err);

/* s->hold_back from a's layers and s's sums (hold_back.c). */
void spp_hold_back(const struct spp_analysis *a, struct spp_model_summary *s);

/* backend/format pairs a projection counts: the formats, on cpu and cuda, and dense */
#define SPP_DEPLOY_MAX 32

struct spp_projection {
	int valid;                       /* 0 without kernel runs (JSON null) */
	int nrec;                        /* layers with a recommendation */
	double dense_time_ns, recommended_time_ns, speedup;     /* NAN when nrec is 0 */
	double dense_bytes, recommended_bytes, ratio;
	/* the slowest layers still below their breakeven, by share of dense time */
	struct spp_prune_next {
		int layer;
		double time_share, sparsity, breakeven;
	} prune_next[SPP_PRUNE_NEXT_MAX];
	int nprune_next;
	/* what to deploy: each recommended backend/format with its layers, most layers first */
	struct spp_deploy {
		const char *backend;
		char format[16];
		int layers;
	} deploy[SPP_DEPLOY_MAX];
	int ndeploy;
};

/*
 * Fill a->derived (one per layer, NULL when there are no layers),
 * a->summary and a->projection from a's stats, runs and sweeps, replacing
 * what was there.
 * Returns 0 or SPP_E_NOMEM.
 */
int spp_analysis_derive(struct spp_analysis *a, struct spp_error *err);

/* Release a->derived; accepts an analysis without. */
void spp_analysis_derived_free(struct spp_analysis *a);

#endif
