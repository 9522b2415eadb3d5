/*
 * The CUDA backend as run-time modules, so that a binary that never asks
 * for CUDA never maps cudart, cuBLAS, cuSPARSE or CUPTI (about 250 MB and
 * 0.3 s at start-up when they were linked). Only with HAVE_CUDA.
 *
 *   libspprof-cuda-probe.so  kernels/cuda/probe.c, linked with cudart only
 *                            (about 1 MB): spp_cuda_probe, which every
 *                            machine description calls
 *   libspprof-cuda.so        the kernels, the vendor baselines and CUPTI
 *                            (counters/cupti_module.h), linked with all
 *
 * Each exports one function returning its const table below; the binary's
 * loader (kernels/cuda/module.c) finds them with spp_module_table
 * (base/module.h) on first use and forwards the API of device.h,
 * formats.h and measure.h through them, so callers are unchanged. The
 * tables carry their version and size: a module from another build is
 * refused rather than called.
 */
#ifndef SPP_KERNELS_CUDA_MODULE_H
#define SPP_KERNELS_CUDA_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/formats.h"
#include "kernels/cuda/measure.h"

/* Bumped whenever a table below or a struct it passes changes. */
#define SPP_CUDA_MODULE_VERSION 1

/* The files are config.h's SPP_CUDA_PROBE_MODULE_FILE and SPP_CUDA_MODULE_FILE (meson.build). */
#define SPP_CUDA_PROBE_SYMBOL "spp_cuda_probe_module"
#define SPP_CUDA_MODULE_SYMBOL "spp_cuda_module"

struct spp_cuda_probe_ops {
	int version;           /* SPP_CUDA_MODULE_VERSION */
	size_t size;           /* sizeof(struct spp_cuda_probe_ops) */
	int (*probe)(struct spp_cuda_probe *out);
};

/* One row per entry point of formats.h and measure.h. */
struct spp_cuda_module_ops {
	int version;
	size_t size;           /* sizeof(struct spp_cuda_module_ops) */
	const struct spp_cuda_format *const *(*formats)(void);
	int (*case_open)(struct spp_cuda_case *c, const struct spp_cuda_format *f,
			 const struct spp_matrix *w, const float *x, int64_t n, struct spp_error *err);
	int (*case_run)(struct spp_cuda_case *c, struct spp_error *err);
	int (*case_result)(struct spp_cuda_case *c, float *y, struct spp_error *err);
	int (*case_time)(struct spp_cuda_case *c, double *ns, struct spp_error *err);
	void (*case_close)(struct spp_cuda_case *c);
	void (*flush_open)(struct spp_cuda_flush *fl);
	void (*flush_run)(struct spp_cuda_flush *fl, int round);
	void (*flush_close)(struct spp_cuda_flush *fl);
	void (*sync)(void);
};

/* The modules' exported functions (probe.c, module_ops.c). */
const struct spp_cuda_probe_ops *spp_cuda_probe_module(void);
const struct spp_cuda_module_ops *spp_cuda_module(void);

/*
 * The loaded table of libspprof-cuda.so, loading it on the first call
 * (thread-safe). NULL when it cannot be loaded; why (when not NULL) then
 * points at the reason, which lives as long as the process.
 */
const struct spp_cuda_module_ops *spp_cuda_module_get(const char **why);

#endif
