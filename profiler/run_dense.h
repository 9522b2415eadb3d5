/*
 * The dense baseline of a run (DESIGN section 4), for profiler/run.c: which
 * candidates of the set to time on a shape, and the choice of the fastest
 * once they are timed, remembered per shape in a struct spp_dense_memo.
 */
#ifndef SPP_PROFILER_RUN_DENSE_H
#define SPP_PROFILER_RUN_DENSE_H

#include "profiler/run_result.h"

/*
 * Start the choice of (m, k, n, threads): with a memo that holds the shape,
 * *ch is that choice (*shared 1) and idx[0] its winner's index in set;
 * otherwise every usable candidate of set, in idx. Returns how many.
 */
int spp_dense_plan(const struct spp_dense_set *set, const struct spp_dense_memo *memo,
		   int64_t m, int64_t k, int64_t n, int threads, const char *name,
		   struct spp_dense_choice *ch, int *shared, int *idx);

/*
 * Pick the fastest timed candidate of a fresh choice (ch->winner), or
 * nothing when none passed, and remember it in memo (may be NULL).
 * Returns SPP_OK or SPP_E_NOMEM.
 */
int spp_dense_choose(struct spp_dense_choice *ch, struct spp_dense_memo *memo,
		     struct spp_error *err);

/*
 * The fastest timed run (ok, repeats > 0, lowest median) among runs[i]
 * with want[i] set: the rule that picks a baseline among candidates
 * (the CUDA vendor GEMMs of one precision). -1 when none.
 */
int spp_fastest_run(const struct spp_run *runs, const int *want, int n);

#endif
