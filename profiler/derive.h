/*
 * The figures derived from an analysis's runs and sweeps, computed once
 * here so that every report renders the same numbers (DESIGN sections 5
 * and 6): each layer's recommendation, diagnosis and breakeven margins,
 * and the model's projection. spp_analyze_run fills them; an analysis put
 * together by hand calls spp_analysis_derive itself.
 */
#ifndef SPP_PROFILER_DERIVE_H
#define SPP_PROFILER_DERIVE_H

#include "profiler/breakeven.h"
#include "profiler/diagnose.h"

struct spp_analysis;

/* How many layers the projection's prune_next lists. */
#define SPP_PRUNE_NEXT_MAX 5

struct spp_layer_derived {
	int has_rec;                     /* rec is set: the layer has timed runs */
	struct spp_recommendation rec;
	char diagnosis[SPP_DIAG_MAX * 194]; /* the sentences joined by "; "; "" when none */
	double *margin;                  /* per result of the layer's sweep: sparsity - breakeven
					    (positive: already past it; NAN: none); owned */
	double best_breakeven;           /* the lowest breakeven of its formats; NAN none */
};

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
};

/*
 * Fill a->derived (one per layer, NULL when there are no layers) and
 * a->projection from a's stats, runs and sweeps, replacing what was there.
 * Returns 0 or SPP_E_NOMEM.
 */
int spp_analysis_derive(struct spp_analysis *a, struct spp_error *err);

/* Release a->derived; accepts an analysis without. */
void spp_analysis_derived_free(struct spp_analysis *a);

#endif
