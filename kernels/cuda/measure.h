/*
 * One CUDA table entry on one layer: a case holds W encoded on the device,
 * x copied (and prepared in the entry's precision), and y's buffer, so
 * that several entries can be timed in interleaved rounds
 * (profiler/device_cuda.c: the CUDA device of the one harness). Kernel
 * time is CUDA events around the launch alone; the copies are timed on
 * their own and never counted in it. Only with HAVE_CUDA.
 */
#ifndef SPP_KERNELS_CUDA_MEASURE_H
#define SPP_KERNELS_CUDA_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cuda/formats.h"
#include "kernels/kernels.h"
#include "base/error.h"

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

#endif
