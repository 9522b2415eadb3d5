/*
 * The table libspprof-cuda.so exports (module.h): the entry points of
 * formats.h and measure.h as this module implements them.
 */
#include "kernels/cuda/module.h"

static const struct spp_cuda_module_ops ops = {
	.version = SPP_CUDA_MODULE_VERSION,
	.size = sizeof(struct spp_cuda_module_ops),
	.formats = spp_cuda_format_table,
	.case_open = spp_cuda_case_open,
	.case_run = spp_cuda_case_run,
	.case_result = spp_cuda_case_result,
	.case_time = spp_cuda_case_time,
	.case_close = spp_cuda_case_close,
	.flush_open = spp_cuda_flush_open,
	.flush_run = spp_cuda_flush_run,
	.flush_close = spp_cuda_flush_close,
	.sync = spp_cuda_sync,
};

__attribute__((visibility("default"))) const struct spp_cuda_module_ops *spp_cuda_module(void)
{
	return &ops;
}
