/*
 * One CUDA table entry on one layer: a case holds W encoded on the device,
 * x copied (and prepared in the entry's precision), and y's buffer, so
 * that several entries can be timed in interleaved rounds
 * (profiler/run_cuda.c). Kernel time is CUDA events around the launch
 * alone; the copies are timed on their own and never counted in it.
 * spp_cuda_measure is the one-entry convenience the tests use. Only with
 * HAVE_CUDA.
 */
#ifndef SPP_KERNELS_CUDA_MEASURE_H
#define SPP_KERNELS_CUDA_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cuda/formats.h"
#include "kernels/kernels.h"
#include "profiler/base/error.h"

struct spp_cuda_case {
	const struct spp_cuda_format *f;
	struct spp_cuda_encoded enc;
	int64_t m, k, n;
	float *dx, *dy;        /* device */
	void *ev[2];           /* cudaEvent_t */
	double h2d_w_ns;       /* host encoding and the copy of W (wall clock) */
	double h2d_x_ns;       /* x to the device (events; the conversion of prepare excluded) */
	double d2h_y_ns;       /* y back to the host (events), set by spp_cuda_case_result */
};

/*
 * Encode w with f, copy x (K x N host, row-major) and prepare it. c is
 * zeroed first; on failure it holds nothing to close. Returns 0, the
 * encoder's status (SPP_E_UNSUPPORTED: f cannot hold w), SPP_E_NOMEM or
 * SPP_E_DEVICE.
 */
int spp_cuda_case_open(struct spp_cuda_case *c, const struct spp_cuda_format *f,
		       const struct spp_matrix *w, const float *x, int64_t n,
		       struct spp_error *err);

/* Launch once without waiting (warm-up, counters). 0 or SPP_E_DEVICE. */
int spp_cuda_case_run(struct spp_cuda_case *c, struct spp_error *err);

/* Run once and copy y (M x N) to the host; y's device buffer is poisoned first. */
int spp_cuda_case_result(struct spp_cuda_case *c, float *y, struct spp_error *err);

/* One event-timed launch: *ns its time. 0 or SPP_E_DEVICE. */
int spp_cuda_case_time(struct spp_cuda_case *c, double *ns, struct spp_error *err);

/* Free the case's device buffers; accepts a zeroed case. */
void spp_cuda_case_close(struct spp_cuda_case *c);

/* Evicting the GPU's L2 before a cold run: a device buffer twice its size. */
struct spp_cuda_flush {
	void *buf;             /* NULL: the L2 size is unknown or the buffer could not be had */
	size_t bytes;
};

/* Allocate the buffer of the current device; on failure fl->buf stays NULL. */
void spp_cuda_flush_open(struct spp_cuda_flush *fl);

/* Write the whole buffer (asynchronously, stream 0) with a value of round; no-op without one. */
void spp_cuda_flush_run(struct spp_cuda_flush *fl, int round);

/* Free the buffer; accepts a flush that holds none. */
void spp_cuda_flush_close(struct spp_cuda_flush *fl);

/* Wait for everything queued on the device. */
void spp_cuda_sync(void);

struct spp_cuda_timing {
	double kernel_ms_min, kernel_ms_median;  /* over `repeat` timed runs */
	double h2d_w_ms;       /* encode's copy of W (and the host encoding) */
	double h2d_x_ms;       /* x to the device */
	double d2h_y_ms;       /* y back to the host */
	double max_abs_err;    /* of the checked run against the reference */
	uint64_t bytes;        /* encoded W on the device */
	int runs;              /* timed runs */
};

/*
 * Measure f on y = w x (x K x N row-major, host). want is the CPU
 * reference y in fp32; an fp32 entry is refused with SPP_E_VERIFY when an
 * output differs from it by more than 1e-4 of the sum of its terms'
 * magnitudes; a reduced-precision entry is checked as spp_cuda_verify_bound
 * says. warmup >= 0, repeat >= 1. Returns 0, the encoder's error,
 * SPP_E_NOMEM, SPP_E_DEVICE or SPP_E_VERIFY.
 */
int spp_cuda_measure(const struct spp_cuda_format *f, const struct spp_matrix *w,
		     const float *x, int64_t n, const float *want, int warmup, int repeat,
		     struct spp_cuda_timing *out, struct spp_error *err);

#endif
