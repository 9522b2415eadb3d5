/*
 * The CPU as a device (profiler/device.h): a format case holds W encoded
 * by its row of the format registry (kernels/kernels.h), a dense case W
 * as it is, run by one dense candidate (kernels/dense/dense.h). Nothing is
 * copied: X is the caller's, Y the device's one buffer; runs complete
 * before they return, so there is nothing to synchronise and the harness
 * reads the host clock.
 */
#include "profiler/device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dense/dense.h"

struct cpu_case {
	const struct spp_format_ops *f;     /* NULL: a dense candidate */
	const struct spp_dense_cand *dense;
	struct spp_encoded enc;
	const struct spp_matrix *w;
	const float *x;
	float *y;
	int64_t n;
	struct spp_exec ex;
	struct spp_epi pass;                /* applied after the kernel (unfused); kind none: nothing */
};

/* The balance of W's nonzeros over an encoding's parts: max / mean; NAN unknown. */
static double nnz_imbalance(const struct spp_encoded *en)
{
	double *pn, v = NAN;

	if (en->nparts <= 0 || !en->part_nnz || !(pn = malloc((size_t)en->nparts * sizeof(double))))
		return NAN;
	for (int p = 0; p < en->nparts; p++)
		pn[p] = (double)en->part_nnz[p];
	v = spp_max_over_mean(pn, en->nparts);
	free(pn);
	return v > 0 ? v : NAN;
}

static struct cpu_case *case_new(const struct spp_device_cpu *d, const struct spp_device_layer *L,
				 struct spp_error *err)
{
	struct cpu_case *k = calloc(1, sizeof(*k));

	if (!k) {
		spp_error_set(err, SPP_E_NOMEM, "out of memory");
		return NULL;
	}
	*k = (struct cpu_case){NULL, NULL, {0}, L->w, L->x, d->y, L->n, {.threads = d->threads, .isa = d->isa}, {0}};
	return k;
}

static int format_open(void *dev, const void *entry, const struct spp_device_layer *L,
		       struct spp_device_case *c, struct spp_error *err)
{
	const struct spp_device_cpu *d = dev;
	struct cpu_case *k = case_new(d, L, err);
	int rc;

	if (!k)
		return SPP_E_NOMEM;
	k->f = entry;
	if ((rc = k->f->encode(L->w, d->threads, L->n, &k->enc, err))) {
		free(k);
		return rc;
	}
	c->impl = k;
	c->w_bytes = (double)k->enc.bytes;
	if (k->enc.x_rows > 0)
		c->x_bytes = 4.0 * (double)k->enc.x_rows * (double)L->n;
	c->nnz_imbalance = nnz_imbalance(&k->enc);
	c->nthreads = d->threads;
	c->pool = 0;
	return SPP_OK;
}

static int variant_open(void *dev, const void *entry, const struct spp_device_layer *L,
			struct spp_device_case *c, struct spp_error *err)
{
	const struct spp_device_cpu_variant *v = entry;
	int rc = format_open(dev, v->f, L, c, err);
	struct cpu_case *k = c->impl;

	if (rc)
		return rc;
	if (v->unfused)
		k->pass = v->epi;
	else
		k->ex.epi = v->epi;
	return SPP_OK;
}

static int dense_open(void *dev, const void *entry, const struct spp_device_layer *L,
		      struct spp_device_case *c, struct spp_error *err)
{
	const struct spp_dense_cand *cand = entry;
	struct cpu_case *k = case_new(dev, L, err);

	if (!k)
		return SPP_E_NOMEM;
	k->dense = cand;
	c->impl = k;
	c->w_bytes = 4.0 * (double)L->w->m * (double)L->w->k;
	c->nthreads = 0;  /* a BLAS reports no busy times */
	c->pool = (int)cand->pool;
	return SPP_OK;
}

static int launch(struct cpu_case *k, float *y, double *busy_ns, struct spp_error *err)
{
	int rc;

	if (!k->f) {
		spp_dense_run(k->dense, k->w, k->x, y, k->n, k->ex.threads);
		return SPP_OK;
	}
	k->ex.busy_ns = busy_ns;
	rc = k->f->spmm(&k->enc, k->x, y, k->n, &k->ex);
	k->ex.busy_ns = NULL;
	if (!rc)
		spp_epilogue_apply(&k->pass, y, k->w->m, k->n, k->ex.threads, k->ex.isa);
	return rc ? spp_error_set(err, rc, "%s", spp_status_message(rc)) : SPP_OK;
}

static int cpu_run(struct spp_device_case *c, double *busy_ns, struct spp_error *err)
{
	struct cpu_case *k = c->impl;

	return launch(k, k->y, busy_ns, err);
}

static int cpu_result(struct spp_device_case *c, float *y, struct spp_error *err)
{
	struct cpu_case *k = c->impl;

	/* NaN everywhere: an output the kernel does not write fails the check */
	for (int64_t i = 0; i < k->w->m * k->n; i++)
		y[i] = NAN;
	return launch(k, y, NULL, err);
}

static void cpu_close(struct spp_device_case *c)
{
	struct cpu_case *k = c->impl;

	if (k && k->f)
		k->f->release(&k->enc);
	free(k);
	c->impl = NULL;
}

const struct spp_encoded *spp_device_cpu_encoded(const struct spp_device_case *c)
{
	const struct cpu_case *k = c->impl;

	return k && k->f ? &k->enc : NULL;
}

const struct spp_device_ops spp_device_cpu_formats = {
	"cpu", format_open, cpu_run, cpu_result, NULL, NULL, cpu_close,
};

const struct spp_device_ops spp_device_cpu_epilogue = {
	"cpu", variant_open, cpu_run, cpu_result, NULL, NULL, cpu_close,
};

const struct spp_device_ops spp_device_cpu_dense = {
	"cpu", dense_open, cpu_run, cpu_result, NULL, NULL, cpu_close,
};
