/*
 * Diagnosis of a layer: short sentences on why its formats gain less than
 * the sparsity promises (DESIGN section 6, layers[].diagnosis). A pure
 * function of the static figures, the runs and the calibrated bandwidth.
 */
#ifndef SPP_PROFILER_DIAGNOSE_H
#define SPP_PROFILER_DIAGNOSE_H

#include "profiler/run_result.h"
#include "profiler/static.h"

#define SPP_DIAG_MAX 16

/* A bandwidth at or above this fraction of the calibrated peak is memory-bound. */
#define SPP_DIAG_MEMORY_BOUND 0.8
/* Per-thread busy time max / mean above this is imbalanced. */
#define SPP_DIAG_IMBALANCE 1.2
/* A dense median below this (ns) is in the range of the fixed costs of a kernel call. */
#define SPP_DIAG_SMALL_NS 10000.0

struct spp_diagnosis {
	char line[SPP_DIAG_MAX][512]; /* room for the longest sentence: none is cut */
	int n;
};

/*
 * The rules, in this order, each adding at most one sentence per format:
 * memory-bound (a run's bw_util >= 0.8: of the level its working set fits;
 * skipped where bw_util is unknown, not calibrated), imbalance > 1.2, too small (dense median
 * < 10 us), N:M not applicable although the layer is sparse enough for it
 * (with the fraction of violating groups), or N:M along the wrong axis
 * instead (every group along M complies, s->nm_m, some along K
 * do not), K not a multiple of the N:M
 * group or block size (4, 8, 16), CSR index metadata larger than the values
 * it saves. No sentence contains "; " (the report joins them with it). runs may be NULL (static report). Never fails.
 */
void spp_diagnose_layer(const struct spp_layer_static *s, const struct spp_layer_runs *runs,
			struct spp_diagnosis *out);

#endif
