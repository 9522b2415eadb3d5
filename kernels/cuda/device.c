/*
 * The CUDA device table (device.h). With HAVE_CUDA the probe is the
 * loader's (module.c: libspprof-cuda-probe.so); without it, this file
 * says there is no backend.
 */
#include "kernels/cuda/device.h"

#include <stdio.h>
#include <string.h>

#include "config.h"

#if !HAVE_CUDA
int spp_cuda_probe(struct spp_cuda_probe *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->why, sizeof(out->why), "no CUDA backend in this build");
	return 0;
}
#endif

void spp_cuda_device_describe(const struct spp_cuda_probe *p, int i, char *buf, int len)
{
	const struct spp_cuda_device *d = &p->dev[i];

	snprintf(buf, (size_t)len, "%s, sm_%d, %d SMs, %.0f GiB", d->name, d->sm,
		 d->multiprocessors, (double)d->memory / (1024.0 * 1024.0 * 1024.0));
}
