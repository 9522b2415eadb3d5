/* The table libspprof-cuda.so exports for the GPU counters (cupti_module.h). */
#include "counters/cupti_module.h"

static const struct spp_cupti_ops ops = {
	SPP_CUPTI_MODULE_VERSION, sizeof(struct spp_cupti_ops),
	spp_cupti_probe, spp_cupti_open, spp_cupti_measure, spp_cupti_close,
};

__attribute__((visibility("default"))) const struct spp_cupti_ops *spp_cupti_module(void)
{
	return &ops;
}
