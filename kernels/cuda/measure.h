/*
 * One CUDA table entry measured on one layer: encode and copy W, copy x,
 * run once and check y against the CPU reference, then warm up and time
 * the kernel alone with CUDA events. Copies are timed on their own and
 * never counted in the kernel time. Only with HAVE_CUDA.
 */
#ifndef SPP_KERNELS_CUDA_MEASURE_H
#define SPP_KERNELS_CUDA_MEASURE_H

#include <stdint.h>

#include "kernels/cuda/formats.h"
#include "kernels/kernels.h"
#include "profiler/error.h"

struct spp_cuda_timing {
	double kernel_ms_min, kernel_ms_median;  /* over `repeat` timed runs */
	double h2d_w_ms;       /* encode's copy of W (and the host encoding) */
	double h2d_x_ms;       /* x to the device */
	double d2h_y_ms;       /* y back to the host */
	double max_abs_err;    /* of the checked run against want */
	uint64_t bytes;        /* encoded W on the device */
	int runs;              /* timed runs */
};

/*
 * Measure f on y = w x (x K x N row-major, host). want is the CPU
 * reference y; the run is refused with SPP_E_VERIFY when an output
 * differs by more than 1e-4 of the sum of its terms' magnitudes.
 * warmup >= 0, repeat >= 1. Returns 0, the encoder's error, SPP_E_NOMEM,
 * SPP_E_DEVICE or SPP_E_VERIFY.
 */
int spp_cuda_measure(const struct spp_cuda_format *f, const struct spp_matrix *w,
		     const float *x, int64_t n, const float *want, int warmup, int repeat,
		     struct spp_cuda_timing *out, struct spp_error *err);

#endif
