/*
 * The CPU in a deployed precision as a device (profiler/device.h, issue
 * 47): a format case holds W encoded by kernels/lowp (spp_lowp_encode) in
 * the device's precision, a dense case W quantized and prepared by one
 * low-precision dense candidate (kernels/dense/lowp_dense.h). X is
 * quantized once per layer by the caller, in each API's own layout: the
 * sparse kernels' (K x N, int8 K4-interleaved with zero point 128) and
 * the dense candidates' X^T (N x K, int8 s8 with the same scale max|x| /
 * 127 and the same rounding, so that both compute on the same codes).
 * A dense case writes Y^T (N x M), its fastest layout; its checked
 * result is transposed back into Y. Runs complete before they return:
 * nothing to synchronise, the harness reads the host clock.
 */
#include "profiler/device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dense/dense.h"
#include "kernels/dense/lowp_dense.h"
#include "kernels/lowp/lowp.h"

struct lowp_case {
	const struct spp_device_lowp *d;
	const struct spp_device_lowp_entry *e;
	struct spp_lowp_w w;          /* a format */
	struct spp_dense_lowp dense;  /* a dense candidate */
	int64_t m, n;
};

static int lowp_open(void *dev, const void *entry, const struct spp_device_layer *L,
		     struct spp_device_case *c, struct spp_error *err)
{
	const struct spp_device_lowp *d = dev;
	const struct spp_device_lowp_entry *e = entry;
	const struct spp_prec_info *pi = spp_prec_info(d->prec);
	struct lowp_case *k = calloc(1, sizeof(*k));
	double m = (double)L->w->m, kk = (double)L->w->k;
	int rc;

	if (!k)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	k->d = d;
	k->e = e;
	k->m = L->w->m;
	k->n = L->n;
	if (e->dense_key)
		rc = spp_dense_lowp_open(&k->dense, e->dense_key, d->prec, L->w, err);
	else
		rc = spp_lowp_encode(e->format, d->prec, L->w, &k->w, err);
	if (rc) {
		spp_dense_lowp_close(&k->dense);
		free(k);
		return rc;
	}
	c->impl = k;
	/* int8: a float scale per row beside the codes */
	c->w_bytes = e->dense_key ? m * kk * pi->value_bytes + (d->prec == SPP_PREC_INT8 ? 4 * m : 0)
				  : (double)k->w.bytes;
	c->x_bytes = (double)pi->x_bytes * kk * (double)L->n;
	c->nnz_imbalance = NAN;
	c->nthreads = 0;   /* neither API reports busy times */
	c->pool = e->dense_key && strcmp(e->dense_key, "openblas") == 0 ? SPP_POOL_OPENBLAS : SPP_POOL_OMP;
	return SPP_OK;
}

static int launch(struct lowp_case *k, float *y, struct spp_error *err)
{
	if (k->e->dense_key)
		return spp_dense_lowp_run(&k->dense, k->d->dx, y, k->d->threads, err);
	return spp_lowp_spmm(&k->w, k->d->sx, y, SPP_LOWP_NPATHS, k->d->threads, NULL, err);
}

static int lowp_run(struct spp_device_case *c, double *busy_ns, struct spp_error *err)
{
	struct lowp_case *k = c->impl;

	(void)busy_ns;
	return launch(k, k->d->y, err);
}

static int lowp_result(struct spp_device_case *c, float *y, struct spp_error *err)
{
	struct lowp_case *k = c->impl;
	float *t = k->d->y;
	int rc;

	/* NaN everywhere: an output the kernel does not write fails the check */
	for (int64_t i = 0; i < k->m * k->n; i++)
		y[i] = t[i] = NAN;
	if (!k->e->dense_key)
		return launch(k, y, err);
	if ((rc = launch(k, t, err)))
		return rc;
	for (int64_t j = 0; j < k->n; j++)
		for (int64_t i = 0; i < k->m; i++)
			y[i * k->n + j] = t[j * k->m + i];
	return SPP_OK;
}

static void lowp_close(struct spp_device_case *c)
{
	struct lowp_case *k = c->impl;

	if (k) {
		spp_lowp_release(&k->w);
		spp_dense_lowp_close(&k->dense);
	}
	free(k);
	c->impl = NULL;
}

void spp_device_lowp_describe(const struct spp_device_case *c, char *buf, size_t n)
{
	const struct lowp_case *k = c->impl;

	if (k && k->e->dense_key)
		spp_dense_lowp_describe(&k->dense, buf, n);
	else if (n)
		buf[0] = '\0';
}

const struct spp_device_ops spp_device_lowp = {
	"cpu", lowp_open, lowp_run, lowp_result, NULL, NULL, lowp_close,
};
