/* CUDA cases of table entries: open, launch, checked run, event timing; see measure.h. */
#include "kernels/cuda/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "kernels/cuda/host.h"

static double wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int device_error(struct spp_error *err, const char *what, const char *key, cudaError_t e)
{
	return spp_error_set(err, SPP_E_DEVICE, "cuda: %s: %s: %s", key, what, cudaGetErrorString(e));
}

/* Event-timed copy; ns out. */
static cudaError_t timed_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			      cudaEvent_t a, cudaEvent_t b, double *ns)
{
	float f = 0.0f;
	cudaError_t e;

	if ((e = cudaEventRecord(a, 0)) || (e = cudaMemcpyAsync(dst, src, n, kind, 0)) ||
	    (e = cudaEventRecord(b, 0)) || (e = cudaEventSynchronize(b)) ||
	    (e = cudaEventElapsedTime(&f, a, b)))
		return e;
	*ns = 1e6 * (double)f;
	return cudaSuccess;
}

void spp_cuda_case_close(struct spp_cuda_case *c)
{
	if (c->enc.ops)
		c->enc.ops->release(&c->enc);
	cudaFree(c->dx);
	cudaFree(c->dy);
	for (int i = 0; i < 2; i++)
		if (c->ev[i])
			cudaEventDestroy((cudaEvent_t)c->ev[i]);
	memset(c, 0, sizeof(*c));
}

int spp_cuda_case_open(struct spp_cuda_case *c, const struct spp_cuda_format *f,
		       const struct spp_matrix *w, const float *x, int64_t n,
		       struct spp_error *err)
{
	size_t xb = sizeof(float) * (size_t)(w->k * n), yb = sizeof(float) * (size_t)(w->m * n);
	cudaError_t e;
	double t0;
	int rc;

	memset(c, 0, sizeof(*c));
	c->f = f;
	c->m = w->m;
	c->k = w->k;
	c->n = n;
	/* host encoding and the copy of W: a one-time cost, wall clock */
	t0 = wall_ns();
	if ((rc = f->encode(w, &c->enc, err))) {
		if (c->enc.ops)
			c->enc.ops->release(&c->enc);
		memset(c, 0, sizeof(*c));
		return rc;
	}
	if ((e = cudaDeviceSynchronize())) {
		rc = device_error(err, "encode", f->key, e);
		goto fail;
	}
	c->h2d_w_ns = wall_ns() - t0;
	if ((e = cudaEventCreate((cudaEvent_t *)&c->ev[0])) ||
	    (e = cudaEventCreate((cudaEvent_t *)&c->ev[1])) ||
	    (e = cudaMalloc((void **)&c->dx, xb ? xb : 1)) ||
	    (e = cudaMalloc((void **)&c->dy, yb ? yb : 1)) ||
	    (e = timed_copy(c->dx, x, xb, cudaMemcpyHostToDevice, c->ev[0], c->ev[1], &c->h2d_x_ns))) {
		rc = device_error(err, "setup", f->key, e);
		goto fail;
	}
	if (f->prepare && (rc = f->prepare(&c->enc, c->dx, n, err)))
		goto fail;
	return 0;
fail:
	cudaGetLastError();
	spp_cuda_case_close(c);
	return rc;
}

int spp_cuda_case_run(struct spp_cuda_case *c, struct spp_error *err)
{
	return c->f->spmm(&c->enc, c->dx, c->dy, c->n, err);
}

int spp_cuda_case_result(struct spp_cuda_case *c, float *y, struct spp_error *err)
{
	size_t yb = sizeof(float) * (size_t)(c->m * c->n);
	cudaError_t e;
	int rc;

	/* NaN bytes everywhere: an output the kernel does not write fails the check */
	if ((e = cudaMemset(c->dy, 0xff, yb)))
		return device_error(err, "checked run", c->f->key, e);
	if ((rc = spp_cuda_case_run(c, err)))
		return rc;
	if ((e = timed_copy(y, c->dy, yb, cudaMemcpyDeviceToHost, c->ev[0], c->ev[1], &c->d2h_y_ns))) {
		cudaGetLastError();
		return device_error(err, "checked run", c->f->key, e);
	}
	return 0;
}

int spp_cuda_case_time(struct spp_cuda_case *c, double *ns, struct spp_error *err)
{
	cudaEvent_t a = c->ev[0], b = c->ev[1];
	float t = 0.0f;
	cudaError_t e;
	int rc;

	if ((e = cudaEventRecord(a, 0)))
		return device_error(err, "timing", c->f->key, e);
	if ((rc = spp_cuda_case_run(c, err)))
		return rc;
	if ((e = cudaEventRecord(b, 0)) || (e = cudaEventSynchronize(b)) ||
	    (e = cudaEventElapsedTime(&t, a, b))) {
		cudaGetLastError();
		return device_error(err, "timing", c->f->key, e);
	}
	*ns = 1e6 * (double)t;
	return 0;
}

void spp_cuda_flush_open(struct spp_cuda_flush *fl)
{
	int dev = 0, l2 = 0;

	fl->buf = NULL;
	fl->bytes = 0;
	if (cudaGetDevice(&dev) || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) || l2 <= 0) {
		cudaGetLastError();
		return;
	}
	fl->bytes = 2 * (size_t)l2;
	if (cudaMalloc(&fl->buf, fl->bytes)) {
		cudaGetLastError();
		fl->buf = NULL;
		fl->bytes = 0;
	}
}

void spp_cuda_flush_run(struct spp_cuda_flush *fl, int round)
{
	if (fl->buf)
		cudaMemsetAsync(fl->buf, round & 0xff, fl->bytes, 0);
}

void spp_cuda_flush_close(struct spp_cuda_flush *fl)
{
	cudaFree(fl->buf);
	fl->buf = NULL;
	fl->bytes = 0;
}

void spp_cuda_sync(void)
{
	cudaDeviceSynchronize();
}
