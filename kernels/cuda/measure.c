/* Verified, event-timed runs of CUDA table entries; see measure.h. */
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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

/*
 * Largest |y - ref| / (|W|.|X|); -1 at the first output beyond rtol of its
 * terms' magnitudes. ref is want (fp32 and tf32) or the rounded-input
 * reference (fp16, bf16).
 */
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

static double verify(const struct spp_matrix *w, const float *x, int64_t n, const float *y,
		     const float *want, const double *ref, double rtol, int64_t *bad_r,
		     int64_t *bad_j)
{
	double worst = 0.0;

	for (int64_t r = 0; r < w->m; r++)
		for (int64_t j = 0; j < n; j++) {
			double mag = 0.0, want_rj = ref ? ref[r * n + j] : want[r * n + j];
			double d = fabs((double)y[r * n + j] - want_rj);

			for (int64_t c = 0; c < w->k; c++)
				mag += fabs((double)w->v[r * w->k + c] * x[c * n + j]);
			if (!(d <= rtol * mag + 1e-6)) {
				*bad_r = r;
				*bad_j = j;
				return -1.0;
			}
			if (mag > 0 && d / mag > worst)
				worst = d / mag;
		}
	return worst;
}

int spp_cuda_measure(const struct spp_cuda_format *f, const struct spp_matrix *w,
		     const float *x, int64_t n, const float *want, int warmup, int repeat,
		     struct spp_cuda_timing *out, struct spp_error *err)
{
	size_t yb = sizeof(float) * (size_t)(w->m * n);
	struct spp_cuda_case c = {0};
	float *y = NULL;
	double *ns = NULL, *ref = NULL;
	int64_t br = 0, bj = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	y = malloc(yb ? yb : 1);
	ns = malloc(sizeof(double) * (size_t)(repeat > 0 ? repeat : 1));
	if (spp_cuda_precision_rounds(f->precision))
		ref = malloc(sizeof(double) * (size_t)(w->m * n > 0 ? w->m * n : 1));
	if (!y || !ns || (spp_cuda_precision_rounds(f->precision) && !ref)) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: %s: output of %zu bytes", f->key, yb);
		goto out;
	}
	if (ref && (rc = spp_cuda_reference(w, x, n, f->precision, ref, err)))
		goto out;
	if ((rc = spp_cuda_case_open(&c, f, w, x, n, err)))
		goto out;
	out->h2d_w_ms = 1e-6 * c.h2d_w_ns;
	out->h2d_x_ms = 1e-6 * c.h2d_x_ns;
	out->bytes = c.enc.bytes;
	/* the checked run: its time never counts */
	if ((rc = spp_cuda_case_result(&c, y, err)))
		goto out;
	out->d2h_y_ms = 1e-6 * c.d2h_y_ns;
	out->max_abs_err = verify(w, x, n, y, want, ref, spp_cuda_precision_rtol(f->precision, 1e-4),
				  &br, &bj);
	if (out->max_abs_err < 0) {
		rc = spp_error_set(err, SPP_E_VERIFY, "cuda: %s: y[%lld][%lld] = %g, the CPU reference says %g",
				   f->key, (long long)br, (long long)bj, y[br * n + bj],
				   ref ? ref[br * n + bj] : want[br * n + bj]);
		goto out;
	}
	for (int i = 0; i < warmup; i++)
		if ((rc = spp_cuda_case_run(&c, err)))
			goto out;
	for (int i = 0; i < repeat; i++)
		if ((rc = spp_cuda_case_time(&c, &ns[i], err)))
			goto out;
	qsort(ns, (size_t)repeat, sizeof(double), cmp_double);
	out->runs = repeat;
	out->kernel_ms_min = repeat > 0 ? 1e-6 * ns[0] : 0.0;
	out->kernel_ms_median = repeat > 0 ? 1e-6 * ns[repeat / 2] : 0.0;
	rc = 0;
out:
	spp_cuda_case_close(&c);
	free(y);
	free(ns);
	free(ref);
	return rc;
}
