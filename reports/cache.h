/*
 * The `cache` block of a run (DESIGN sections 4 and 6): counter figures
 * with their source, as JSON. Shared by the report writer and anything
 * else that prints a run's cache figures.
 */
#ifndef SPP_REPORTS_CACHE_H
#define SPP_REPORTS_CACHE_H

#include <cjson/cJSON.h>

#include "profiler/run_result.h"

/*
 * The block of f: {source, l1d_misses, ..., dram_bytes, sampled, geometry,
 * note, per_thread}; unknown figures are null. A JSON null when f has no
 * source. NULL only when out of memory.
 */
cJSON *spp_report_cache(const struct spp_cache_figures *f);

#endif
