/*
 * The breakeven, recommendation and projection parts of the JSON report
 * (DESIGN sections 5 and 6), rendered from an analysis's derived figures
 * (profiler/derive.h: an analysis without them renders them null/empty). Each returns a new
 * cJSON item owned by the caller, or NULL when out of memory.
 */
#ifndef SPP_REPORTS_JSON_BREAKEVEN_H
#define SPP_REPORTS_JSON_BREAKEVEN_H

#include <cjson/cJSON.h>

#include "profiler/analysis.h"

/*
 * layers[i].breakeven: {"<backend>/<format>": {sparsity, breakeven_low,
 * breakeven_high, margin, reason, curve}}; an empty object when layer i
 * has no sweep.
 */
cJSON *spp_report_breakeven(const struct spp_analysis *a, int i);

/* layers[i].recommendation: {backend, format, speedup, reason}; JSON null without a timed dense run. */
cJSON *spp_report_recommendation(const struct spp_analysis *a, int i);

/* layers[i].diagnosis: the sentences of profiler/diagnose.h joined by "; "; "" when none. */
cJSON *spp_report_diagnosis(const struct spp_analysis *a, int i);

/*
 * summary.projection: {dense_time_ns, recommended_time_ns, speedup,
 * dense_bytes, recommended_bytes, ratio, prune_next: [{layer, time_share,
 * sparsity, breakeven}]} over the layers with a recommendation; JSON null
 * without kernel runs.
 */
cJSON *spp_report_projection(const struct spp_analysis *a);

#endif
