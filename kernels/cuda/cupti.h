/*
 * CUPTI figures of CUDA table entries (DESIGN section 4, source "cupti"):
 * the Range Profiler of CUPTI 13 (cupti_range_profiler.h) collects the
 * counters of one launch of an entry, kernel by kernel (auto ranges,
 * kernel replay: CUPTI replays each kernel as many passes as the metrics
 * need, so the profiled launch is separate from, and never part of, the
 * timed ones), and the host API (cupti_profiler_host.h) evaluates them.
 * The metrics (Nsight Compute names) are in cupti.cpp and docs/CUDA.md.
 *
 * C-callable; written in C++ (cupti.cpp) because cupti_profiler_host.h
 * includes <string>. Only with HAVE_CUDA.
 */
#ifndef SPP_KERNELS_CUDA_CUPTI_H
#define SPP_KERNELS_CUDA_CUPTI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spp_cupti;
struct spp_cuda_case;

/* One entry's launch; every figure NAN when unknown. */
struct spp_cupti_figures {
	int ok;                        /* 1: at least one figure came from CUPTI */
	double dram_read_bytes, dram_write_bytes;
	double l2_hit_rate, l1_hit_rate;   /* 0..1 */
	double achieved_occupancy;         /* 0..1 of the SM's warp slots */
	double sm_active_imbalance;        /* sm__cycles_active.max / .avg */
	double branch_efficiency;          /* 0..1: branch targets uniform across the warp */
	char note[160];                /* what is missing and why; "" when all came */
};

/*
 * Start a profiling session on the current device (the context cudart
 * made current). Returns 0, or -1 with one line in why (counters not
 * permitted: ERR_NVGPUCTRPERM; chip not supported; CUPTI's message).
 */
int spp_cupti_open(struct spp_cupti **out, char *why, size_t why_len);

/* Profile one launch of c into g; g->ok 0 and g->note say why when nothing came. */
void spp_cupti_measure(struct spp_cupti *s, struct spp_cuda_case *c,
		       struct spp_cupti_figures *g);

/* End the session; accepts NULL. */
void spp_cupti_close(struct spp_cupti *s);

/*
 * One line for `spprof info`: the CUPTI version and, when there is a
 * device, whether counters can be read here (an open and close of a
 * session), or why not.
 */
void spp_cupti_describe(int have_device, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
