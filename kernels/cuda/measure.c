/* Verified, event-timed runs of one CUDA table entry; see measure.h. */
#include "kernels/cuda/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

static double wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
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

/* Event-timed copy; ms out. */
static cudaError_t timed_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			      cudaEvent_t a, cudaEvent_t b, double *ms)
{
	float f = 0.0f;
	cudaError_t e;

	if ((e = cudaEventRecord(a, 0)) || (e = cudaMemcpyAsync(dst, src, n, kind, 0)) ||
	    (e = cudaEventRecord(b, 0)) || (e = cudaEventSynchronize(b)) ||
	    (e = cudaEventElapsedTime(&f, a, b)))
		return e;
	*ms = f;
	return cudaSuccess;
}

/* Largest |y - want|; -1 when some output is beyond 1e-4 of its terms' magnitudes. */
static double verify(const struct spp_matrix *w, const float *x, int64_t n, const float *y,
		     const float *want, int64_t *bad_r, int64_t *bad_j)
{
	double worst = 0.0;

	for (int64_t r = 0; r < w->m; r++)
		for (int64_t j = 0; j < n; j++) {
			double mag = 0.0, d = fabs((double)y[r * n + j] - want[r * n + j]);

			for (int64_t c = 0; c < w->k; c++)
				mag += fabs((double)w->v[r * w->k + c] * x[c * n + j]);
			if (!(d <= 1e-4 * mag + 1e-6)) {
				*bad_r = r;
				*bad_j = j;
				return -1.0;
			}
			worst = d > worst ? d : worst;
		}
	return worst;
}

int spp_cuda_measure(const struct spp_cuda_format *f, const struct spp_matrix *w,
		     const float *x, int64_t n, const float *want, int warmup, int repeat,
		     struct spp_cuda_timing *out, struct spp_error *err)
{
	size_t xb = sizeof(float) * (size_t)(w->k * n), yb = sizeof(float) * (size_t)(w->m * n);
	struct spp_cuda_encoded enc = {0};
	cudaEvent_t a = NULL, b = NULL;
	float *dx = NULL, *dy = NULL, *y = NULL;
	double *ms = NULL, t0;
	int64_t br = 0, bj = 0;
	cudaError_t e;
	int rc;

	memset(out, 0, sizeof(*out));
	y = malloc(yb ? yb : 1);
	ms = malloc(sizeof(double) * (size_t)(repeat > 0 ? repeat : 1));
	if (!y || !ms) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: %s: output of %zu bytes", f->key, yb);
		goto out;
	}
	/* host encoding and the copy of W: a one-time cost, wall clock */
	t0 = wall_ms();
	if ((rc = f->encode(w, &enc, err)))
		goto out;
	if ((e = cudaDeviceSynchronize())) {
		rc = device_error(err, "encode", f->key, e);
		goto out;
	}
	out->h2d_w_ms = wall_ms() - t0;
	out->bytes = enc.bytes;
	if ((e = cudaEventCreate(&a)) || (e = cudaEventCreate(&b)) ||
	    (e = cudaMalloc((void **)&dx, xb ? xb : 1)) || (e = cudaMalloc((void **)&dy, yb ? yb : 1)) ||
	    (e = timed_copy(dx, x, xb, cudaMemcpyHostToDevice, a, b, &out->h2d_x_ms))) {
		rc = device_error(err, "setup", f->key, e);
		goto out;
	}
	/* the checked run: its time never counts */
	if ((rc = f->spmm(&enc, dx, dy, n, err)))
		goto out;
	if ((e = timed_copy(y, dy, yb, cudaMemcpyDeviceToHost, a, b, &out->d2h_y_ms))) {
		rc = device_error(err, "checked run", f->key, e);
		goto out;
	}
	out->max_abs_err = verify(w, x, n, y, want, &br, &bj);
	if (out->max_abs_err < 0) {
		rc = spp_error_set(err, SPP_E_VERIFY, "cuda: %s: y[%lld][%lld] = %g, the CPU reference says %g",
				   f->key, (long long)br, (long long)bj, y[br * n + bj], want[br * n + bj]);
		goto out;
	}
	for (int i = 0; i < warmup; i++)
		if ((rc = f->spmm(&enc, dx, dy, n, err)))
			goto out;
	for (int i = 0; i < repeat; i++) {
		float t = 0.0f;

		if ((e = cudaEventRecord(a, 0))) {
			rc = device_error(err, "timing", f->key, e);
			goto out;
		}
		if ((rc = f->spmm(&enc, dx, dy, n, err)))
			goto out;
		if ((e = cudaEventRecord(b, 0)) || (e = cudaEventSynchronize(b)) ||
		    (e = cudaEventElapsedTime(&t, a, b))) {
			rc = device_error(err, "timing", f->key, e);
			goto out;
		}
		ms[i] = t;
	}
	qsort(ms, (size_t)repeat, sizeof(double), cmp_double);
	out->runs = repeat;
	out->kernel_ms_min = repeat > 0 ? ms[0] : 0.0;
	out->kernel_ms_median = repeat > 0 ? ms[repeat / 2] : 0.0;
	rc = 0;
out:
	if (enc.ops)
		enc.ops->release(&enc);
	cudaFree(dx);
	cudaFree(dy);
	if (a)
		cudaEventDestroy(a);
	if (b)
		cudaEventDestroy(b);
	free(y);
	free(ms);
	return rc;
}
