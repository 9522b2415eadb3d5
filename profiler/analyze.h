/*
 * Run orchestration: model file in, analysis (profiler/analysis.h) out.
 * Owns the sequence of DESIGN section 1 (load, derive layers, static
 * analysis, totals, hash); later stages (kernel runs, breakeven) attach to
 * the same structure.
 */
#ifndef SPP_PROFILER_ANALYZE_H
#define SPP_PROFILER_ANALYZE_H

#include "profiler/analysis.h"

/*
 * Load path and analyse it. On success *out is a heap analysis for
 * spp_analysis_destroy(); on failure *out is NULL and err says why (the
 * loader's status for bad input).
 */
int spp_analyze_run(const char *path, const struct spp_analyze_opts *o,
		    struct spp_analysis **out, struct spp_error *err);

#endif
