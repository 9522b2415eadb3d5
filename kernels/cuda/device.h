/*
 * The CUDA device table: what `spprof info` and `analyze --backends cuda`
 * need to know about the GPUs, and the reason when there are none.
 *
 * Built in every configuration: without HAVE_CUDA the probe reports
 * "no CUDA backend in this build". With it, the probe is cudart's in
 * libspprof-cuda-probe.so, loaded on the first call (module.h), and
 * libcuda is never linked: cudart loads the driver at run time, so the
 * binary starts on machines without one and the probe says "no device
 * (driver not found)".
 */
#ifndef SPP_KERNELS_CUDA_DEVICE_H
#define SPP_KERNELS_CUDA_DEVICE_H

#include <stdint.h>

#define SPP_CUDA_MAX_DEVICES 16

struct spp_cuda_device {
	char name[256];
	int sm;               /* compute capability, major * 10 + minor: 90 on H100/H200 */
	int multiprocessors;
	uint64_t memory;      /* bytes of global memory */
};

struct spp_cuda_probe {
	int built;            /* 1 when this binary has the CUDA backend */
	int ndevices;         /* usable devices (0 with the reason in why) */
	int runtime_version;  /* cudart, e.g. 13000; 0 unknown */
	int driver_version;   /* 0 when no driver */
	struct spp_cuda_device dev[SPP_CUDA_MAX_DEVICES];
	char why[160];        /* "" when ndevices > 0 */
};

/*
 * Probe the GPUs. Never fails: on any error ndevices is 0 and why holds
 * the reason ("no device (driver not found)", "no device", "no CUDA
 * backend in this build", "CUDA runtime not loaded: " or "CUDA kernels
 * not loaded: " with dlopen's message, or cudart's own). Where there are
 * devices the CUDA module is loaded too (module.h), so ndevices > 0 means
 * a CUDA run can start. Returns ndevices.
 */
int spp_cuda_probe(struct spp_cuda_probe *out);

/* Write one line describing device i of p ("NVIDIA H200, sm_90, 132 SMs, 141 GiB"). */
void spp_cuda_device_describe(const struct spp_cuda_probe *p, int i, char *buf, int len);

#endif
