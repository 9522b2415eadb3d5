/*
 * CUDA as a device (profiler/device.h) over the cases of
 * kernels/cuda/measure.h: open encodes and copies W (host encoding and
 * copy on the wall clock) and copies X (events), result copies Y back
 * (events), time is CUDA events around the launch alone.
 */
#include "profiler/device.h"

#include "config.h"

#if HAVE_CUDA
#include <math.h>
#include <stdlib.h>

#include "kernels/cuda/formats.h"
#include "kernels/cuda/host.h"
#include "kernels/cuda/measure.h"

/* Static nnz_imbalance of f's partition of w over thread blocks; NAN unknown. */
static double nnz_imbalance(const struct spp_cuda_format *f, const struct spp_matrix *w, uint64_t nnz)
{
	if (f->part_rows > 0)
		return spp_cuda_rows_imbalance(w, f->part_rows);
	if (f->part_rows == SPP_CUDA_PART_NNZ && f->part_nnz > 0)
		return spp_cuda_chunk_imbalance((int64_t)nnz, f->part_nnz);
	return NAN;
}

static int cuda_open(void *dev, const void *entry, const struct spp_device_layer *L,
		     struct spp_device_case *c, struct spp_error *err)
{
	const struct spp_cuda_format *f = entry;
	struct spp_cuda_case *k = calloc(1, sizeof(*k));
	int rc;

	(void)dev;
	if (!k)
		return spp_error_set(err, SPP_E_NOMEM, "cuda: out of memory");
	/* the partition is the entry's, known before anything runs */
	c->nnz_imbalance = nnz_imbalance(f, L->w, L->nnz);
	if ((rc = spp_cuda_case_open(k, f, L->w, L->x, L->n, err))) {
		free(k);
		return rc;
	}
	c->impl = k;
	c->w_bytes = (double)k->enc.bytes;
	c->copy_ns[0] = k->h2d_w_ns;
	c->copy_ns[1] = k->h2d_x_ns;
	c->nthreads = 0;
	c->pool = 0;
	return SPP_OK;
}

static int cuda_run(struct spp_device_case *c, double *busy_ns, struct spp_error *err)
{
	(void)busy_ns;
	return spp_cuda_case_run(c->impl, err);
}

static int cuda_result(struct spp_device_case *c, float *y, struct spp_error *err)
{
	struct spp_cuda_case *k = c->impl;
	int rc = spp_cuda_case_result(k, y, err);

	c->copy_ns[2] = k->d2h_y_ns;
	return rc;
}

static int cuda_time(struct spp_device_case *c, double *ns, struct spp_error *err)
{
	return spp_cuda_case_time(c->impl, ns, err);
}

static void cuda_sync(void *dev)
{
	(void)dev;
	spp_cuda_sync();
}

static void cuda_close(struct spp_device_case *c)
{
	if (c->impl)
		spp_cuda_case_close(c->impl);
	free(c->impl);
	c->impl = NULL;
}

const struct spp_device_ops spp_device_cuda = {
	"cuda", cuda_open, cuda_run, cuda_result, cuda_time, cuda_sync, cuda_close,
};

struct spp_cuda_case *spp_device_cuda_case(const struct spp_device_case *c)
{
	return c->impl;
}
#endif
