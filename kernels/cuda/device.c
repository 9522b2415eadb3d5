/* The CUDA device probe; see device.h. */
#include "kernels/cuda/device.h"

#include <stdio.h>
#include <string.h>

#include "config.h"

#if HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#if HAVE_CUDA
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
#endif

int spp_cuda_probe(struct spp_cuda_probe *out)
{
	memset(out, 0, sizeof(*out));
#if HAVE_CUDA
	int count = 0;
	cudaError_t e;

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
#else
	snprintf(out->why, sizeof(out->why), "no CUDA backend in this build");
	return 0;
#endif
}

void spp_cuda_device_describe(const struct spp_cuda_probe *p, int i, char *buf, int len)
{
	const struct spp_cuda_device *d = &p->dev[i];

	snprintf(buf, (size_t)len, "%s, sm_%d, %d SMs, %.0f GiB", d->name, d->sm,
		 d->multiprocessors, (double)d->memory / (1024.0 * 1024.0 * 1024.0));
}
