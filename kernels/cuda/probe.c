/*
 * The GPU probe of device.h over cudart, built into libspprof-cuda-probe.so
 * (module.h) and linked with cudart alone, so that describing the machine
 * costs no cuBLAS, cuSPARSE or CUPTI.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kernels/cuda/module.h"

/* cudart's errors when there is nothing to run on, in the words of `spprof info`. */
static const char *probe_reason(cudaError_t e)
{
	switch (e) {
	case cudaErrorInsufficientDriver:
		return "no device (driver not found)";
	case cudaErrorNoDevice:
		return "no device";
	default:
		return cudaGetErrorString(e);
	}
}

static int probe(struct spp_cuda_probe *out)
{
	int count = 0;
	cudaError_t e;

	memset(out, 0, sizeof(*out));
	out->built = 1;
	cudaRuntimeGetVersion(&out->runtime_version);
	/* cudaDriverGetVersion gives 0 without a driver rather than an error */
	cudaDriverGetVersion(&out->driver_version);
	if (out->driver_version == 0) {
		snprintf(out->why, sizeof(out->why), "%s", probe_reason(cudaErrorInsufficientDriver));
		return 0;
	}
	e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		snprintf(out->why, sizeof(out->why), "%s",
			 probe_reason(e != cudaSuccess ? e : cudaErrorNoDevice));
		cudaGetLastError(); /* the error is sticky in cudart's per-thread state */
		return 0;
	}
	if (count > SPP_CUDA_MAX_DEVICES)
		count = SPP_CUDA_MAX_DEVICES;
	for (int i = 0; i < count; i++) {
		struct cudaDeviceProp p;
		struct spp_cuda_device *d = &out->dev[out->ndevices];

		if (cudaGetDeviceProperties(&p, i) != cudaSuccess)
			continue;
		snprintf(d->name, sizeof(d->name), "%s", p.name);
		d->sm = p.major * 10 + p.minor;
		d->multiprocessors = p.multiProcessorCount;
		d->memory = p.totalGlobalMem;
		out->ndevices++;
	}
	if (!out->ndevices)
		snprintf(out->why, sizeof(out->why), "no device (properties unreadable)");
	return out->ndevices;
}

static const struct spp_cuda_probe_ops ops = {
	SPP_CUDA_MODULE_VERSION, sizeof(struct spp_cuda_probe_ops), probe,
};

__attribute__((visibility("default"))) const struct spp_cuda_probe_ops *spp_cuda_probe_module(void)
{
	return &ops;
}
