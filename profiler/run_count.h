/* Hardware counting of the timed runs, for profiler/run.c only. */
#ifndef SPP_PROFILER_RUN_COUNT_H
#define SPP_PROFILER_RUN_COUNT_H

#include "profiler/run.h"

/* One session per format item (the dense baseline runs on BLAS threads, not counted). */
struct spp_run_count {
	const struct spp_counter_backend *b;
	void **sess;            /* per item; NULL: not counted */
	int *runs;              /* counted runs of each item */
};

/* Whether b counts in hardware (not the simulator, not none). */
int spp_run_count_hardware(const struct spp_counter_backend *b);

/* Open a session for each item with run_of[i] != 0. 0 or SPP_E_NOMEM. */
int spp_run_count_open(struct spp_run_count *cc, const int *run_of, int nitems,
		       const struct spp_run_opts *o, struct spp_error *err);

/* The harness's count_start / count_stop callbacks (ctx: the struct spp_run_count). */
void spp_run_count_start(void *ctx, int item);
void spp_run_count_stop(void *ctx, int item);

/* Item i's counted figures into r, per timed run (line: the cache line in bytes). */
void spp_run_count_read(struct spp_run_count *cc, int i, int line, struct spp_run *r);

/* Close every session; accepts a zeroed struct. */
void spp_run_count_close(struct spp_run_count *cc, int nitems);

#endif
