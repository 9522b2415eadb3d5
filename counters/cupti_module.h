/*
 * The GPU counters (cupti.h) as a table of libspprof-cuda.so, the CUDA
 * backend's run-time module (kernels/cuda/module.h says why it is one):
 * cupti_module.c exports it there, cupti_load.c loads it in the binary and
 * forwards cupti.h through it. Only with HAVE_CUDA.
 */
#ifndef SPP_COUNTERS_CUPTI_MODULE_H
#define SPP_COUNTERS_CUPTI_MODULE_H

#include <stddef.h>

#include "counters/cupti.h"

/* Bumped whenever the table or a struct it passes changes. */
#define SPP_CUPTI_MODULE_VERSION 1
#define SPP_CUPTI_MODULE_SYMBOL "spp_cupti_module"

/* One row per entry point of cupti.h. */
struct spp_cupti_ops {
	int version;           /* SPP_CUPTI_MODULE_VERSION */
	size_t size;           /* sizeof(struct spp_cupti_ops) */
	int (*probe)(int have_device, char *line, size_t len);
	int (*open)(struct spp_cupti **out, struct spp_error *err);
	int (*measure)(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err),
		       void *ctx, struct spp_cupti_figures *g, struct spp_error *err);
	void (*close)(struct spp_cupti *s);
};

/* The module's exported function (cupti_module.c). */
const struct spp_cupti_ops *spp_cupti_module(void);

#endif
