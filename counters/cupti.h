/*
 * The GPU counters backend: CUPTI figures of CUDA table entries (DESIGN
 * section 4, source "cupti"). The Range Profiler of CUPTI 13
 * (cupti_range_profiler.h) collects the counters of one launch, kernel by
 * kernel (auto ranges, kernel replay: CUPTI replays each kernel as many
 * passes as the metrics need, so the profiled launch is separate from, and
 * never part of, the timed ones), and the host API (cupti_profiler_host.h)
 * evaluates them. The metrics (Nsight Compute names) are in cupti.cpp and
 * docs/CUDA.md.
 *
 * The lifecycle is the one of counters.h, shaped for a launch rather than
 * a CPU region: probe (can it count here), open (a session on the current
 * device), measure (one profiled launch: the caller's launch callback,
 * bracketed by the backend), close. The session is opaque and belongs to
 * the caller between open and close. The backend knows nothing of what it
 * launches; no function prints. It is not in the CPU registry
 * (spp_counter_backends): a CUDA run asks for it directly.
 *
 * C-callable; written in C++ (cupti.cpp) because cupti_profiler_host.h
 * includes <string>; cupti_none.c stands in when CUPTI's libraries were not
 * found. Only with HAVE_CUDA.
 */
#ifndef SPP_COUNTERS_CUPTI_H
#define SPP_COUNTERS_CUPTI_H

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spp_cupti;

/* One entry's launch; every figure NAN when unknown. */
struct spp_cupti_figures {
	double dram_read_bytes, dram_write_bytes;
	double l2_hit_rate, l1_hit_rate;   /* 0..1 */
	double achieved_occupancy;         /* 0..1 of the SM's warp slots */
	double sm_active_imbalance;        /* sm__cycles_active.max / .avg */
	double branch_efficiency;          /* 0..1: branch targets uniform across the warp */
	char note[160];                /* how to read them (metrics missing, kernels combined); "" else */
};

/*
 * Whether counters can be read here, and one line for `spprof info` in
 * line: the CUPTI version and, when there is a device, whether counters
 * can be read (an open and close of a session), or why not. Returns 1 when
 * they can, else 0. Never fails.
 */
int spp_cupti_probe(int have_device, char *line, size_t len);

/*
 * Start a profiling session on the current device (the context cudart
 * made current) into *out (NULL on failure). Returns 0,
 * SPP_E_UNSUPPORTED (err says why in one line beginning "CUPTI": no
 * context, counters not permitted (ERR_NVGPUCTRPERM), chip not supported,
 * CUPTI's message) or SPP_E_NOMEM.
 */
int spp_cupti_open(struct spp_cupti **out, struct spp_error *err);

/*
 * Profile one launch into g: calls launch(ctx, err) exactly once between
 * the start and the stop of the range profiler; launch queues the work
 * (0, or a negative status with its err filled) and the backend waits for
 * the device before it stops. Replaying the kernels is CUPTI's, not
 * launch's. Returns 0 with g's figures (NAN where unknown) and g->note,
 * SPP_E_DEVICE when the launch or the wait for it failed, SPP_E_RUNTIME
 * when CUPTI failed, or SPP_E_UNSUPPORTED in a build without CUPTI; err
 * then says why in one line beginning "CUPTI", and every figure of g is
 * NAN.
 */
int spp_cupti_measure(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err),
		      void *ctx, struct spp_cupti_figures *g, struct spp_error *err);

/* End the session; accepts NULL. */
void spp_cupti_close(struct spp_cupti *s);

#ifdef __cplusplus
}
#endif

#endif
