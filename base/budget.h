/*
 * The resource budget of the readers. A tiny file must not make spprof
 * create a million layers or densify gigabytes: no reader creates more
 * layers, or allocates more bytes of work for a model (a densified matrix,
 * the scan's buffers), than a bound proportional to the model's size plus
 * a fixed allowance, unless the user raised it (--max-layers,
 * --max-memory). Refusals exit 2 with the layer, the figure and the bound.
 *
 * Defaults: layers 4096 + one per 256 bytes of model; bytes 256 MiB + 128
 * per byte of model (above the widest legitimate decodes: 4-bit codes or
 * a LUT to fp32, 8-32x), and never more than 80 % of the machine's memory.
 * An explicit limit replaces the default (the machine's memory included).
 */
#ifndef SPP_BASE_BUDGET_H
#define SPP_BASE_BUDGET_H

#include <stdint.h>

#include "base/error.h"

#define SPP_BUDGET_LAYERS_BASE 4096u
/* one layer per this many bytes: a layer costs its report some 33 KB and
 * 0.1 ms, so that a 1 MB file's 8192 layers stay near 300 MB */
#define SPP_BUDGET_LAYERS_PER_BYTE 256u
#define SPP_BUDGET_BYTES_BASE (UINT64_C(256) << 20)
#define SPP_BUDGET_BYTES_PER_BYTE 128u

/* Set the explicit limits for the process (0: the default for each). */
void spp_budget_set(uint64_t max_layers, uint64_t max_bytes);

/* The layer bound for a model of model_bytes bytes. */
uint64_t spp_budget_layers(uint64_t model_bytes);

/* The byte bound for a model of model_bytes bytes. */
uint64_t spp_budget_bytes(uint64_t model_bytes);

/*
 * SPP_OK when a model of model_bytes may have `count` layers, else
 * SPP_E_BUDGET "'path': <what> makes more than N layers, the budget for a
 * 68-byte model (--max-layers raises it)".
 */
int spp_budget_check_layers(uint64_t count, uint64_t model_bytes, const char *path,
			    const char *what, struct spp_error *err);

/*
 * SPP_OK when `need` bytes of work fit, else SPP_E_BUDGET "'path': <what>
 * needs 8.00 GiB, over the memory budget of 256 MiB for a 61-byte model
 * (--max-memory raises it)".
 */
int spp_budget_check_bytes(uint64_t need, uint64_t model_bytes, const char *path,
			   const char *what, struct spp_error *err);

#endif
