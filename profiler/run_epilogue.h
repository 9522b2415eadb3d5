/*
 * --epilogue in the CPU runs (profiler/run.c): each verified format is
 * also opened fused and unfused (struct spp_run_epilogue), each variant
 * checked against the epilogue applied to the dense result and timed as
 * one more item of the same interleaved run. Private to profiler/.
 */
#ifndef SPP_PROFILER_RUN_EPILOGUE_H
#define SPP_PROFILER_RUN_EPILOGUE_H

#include "profiler/device.h"
#include "profiler/run.h"

struct spp_run_epi_ctx {
	struct spp_epi epi;          /* kind none: --epilogue none, nothing is opened */
	const char *bias_source;
	float *zeros;                /* the bias when the layer has none (owned) */
	float *ref, *bound;          /* epilogue(dense result) and its error scale, m x n (owned) */
	struct spp_device dev;       /* spp_device_cpu_epilogue */
};

/*
 * From the run options and the verified dense result yd (bound its
 * |W|.|X|): the epilogue, its bias, the reference and its bound. A
 * bias of |b| adds |b| * 1e-6 / rtol to the bound: its rounding. 0 or
 * SPP_E_NOMEM.
 */
int spp_run_epi_open(struct spp_run_epi_ctx *c, const struct spp_run_opts *o, const float *yd,
		     const float *bound, int64_t m, int64_t n, struct spp_device_cpu *cpu,
		     struct spp_error *err);

/*
 * Open the fused (cases[0]) and unfused (cases[1]) variants of f on L,
 * each checked (y: m x n scratch). Returns 2 when both verified, else 0
 * with the reason in r->epi (the cases closed).
 */
int spp_run_epi_cases(struct spp_run_epi_ctx *c, const struct spp_format_ops *f,
		      const struct spp_device_layer *L, float *y, double rtol,
		      struct spp_device_case cases[2], struct spp_run *r);

/* A variant's time into r->epi (unfused: 1), and the saving once both are in. */
void spp_run_epi_time(struct spp_run *r, int unfused, const struct spp_time_stats *t);

void spp_run_epi_close(struct spp_run_epi_ctx *c);

/*
 * The layer's bias decoded to fp32 (*out, malloc'd), or NULL when it has
 * none or its dtype has no decoding. 0, SPP_E_NOMEM or a decoding error.
 */
int spp_run_epi_layer_bias(const struct spp_layer *l, float **out, struct spp_error *err);

#endif
