/*
 * What every device's runs go through (profiler/device.h): open and check
 * a case, make it an item of the one harness, time the cases, derive the
 * figures. Nothing here knows which device it drives.
 */
#include "profiler/device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/run.h"

static void fail_run(struct spp_run *r, enum spp_run_status s, const char *what,
		     const struct spp_error *e, int rc)
{
	r->status = s;
	snprintf(r->reason, sizeof(r->reason), "%s%.200s", what,
		 e->msg[0] ? e->msg : spp_status_message(rc));
}

void spp_device_close(struct spp_device_case *c)
{
	if (c->impl)
		c->dev->ops->close(c);
	c->impl = NULL;
}

int spp_device_open(const struct spp_device *d, const void *entry,
		    const struct spp_device_layer *L, struct spp_device_case *c, struct spp_error *err)
{
	memset(c, 0, sizeof(*c));
	c->dev = d;
	c->w_bytes = c->x_bytes = c->nnz_imbalance = NAN;
	c->copy_ns[0] = c->copy_ns[1] = c->copy_ns[2] = NAN;
	return d->ops->open(d->ctx, entry, L, c, err);
}

int spp_device_open_checked(const struct spp_device *d, const void *entry,
			    const struct spp_device_layer *L, const struct spp_device_check *chk,
			    struct spp_device_case *c, struct spp_run *r)
{
	int64_t m = L->w->m, wi, wj;
	struct spp_error e2 = {0};
	double worst;
	int rc;

	rc = spp_device_open(d, entry, L, c, &e2);
	/* a partition known before the open (the GPU's thread blocks) is the run's whatever comes */
	r->nnz_imbalance = c->nnz_imbalance;
	if (rc == SPP_E_UNSUPPORTED) {
		r->status = SPP_RUN_NOT_APPLICABLE;
		snprintf(r->reason, sizeof(r->reason), "%.250s",
			 e2.msg[0] ? e2.msg : "format cannot hold this layer");
		return 0;
	}
	if (rc) {
		/* out of memory for one entry fails that entry, not the layer */
		fail_run(r, SPP_RUN_FAILED, "encode failed: ", &e2, rc);
		spp_device_close(c);
		return 0;
	}
	r->nnz_imbalance = c->nnz_imbalance;
	r->copy_ns[0] = c->copy_ns[0];
	r->copy_ns[1] = c->copy_ns[1];
	if (!chk) {
		r->status = SPP_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "no verified dense result to check against");
		spp_device_close(c);
		return 0;
	}
	if ((rc = d->ops->result(c, chk->y, &e2))) {
		fail_run(r, SPP_RUN_FAILED, "kernel failed: ", &e2, rc);
		spp_device_close(c);
		return 0;
	}
	r->copy_ns[2] = c->copy_ns[2];
	if (!spp_run_check(chk->y, chk->ref, chk->bound, m, L->n, chk->rtol, &worst, &wi, &wj)) {
		r->max_error = worst;
		r->status = SPP_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason),
			 "output differs from %s by %.3g x (|W|.|X|) at (%lld, %lld), bound %.3g",
			 chk->against, worst, (long long)wi, (long long)wj, chk->rtol);
		spp_device_close(c);
		return 0;
	}
	r->max_error = worst;
	return 1;
}

static int item_run(void *p, double *busy_ns)
{
	struct spp_device_case *c = p;

	return c->dev->ops->run(c, busy_ns, &c->e);
}

static int item_timed(void *p, double *ns)
{
	struct spp_device_case *c = p;

	return c->dev->ops->time(c, ns, &c->e);
}

struct spp_bench_item spp_device_item(struct spp_device_case *c)
{
	return (struct spp_bench_item){item_run, c, c->nthreads, c->pool,
				       c->dev->ops->time ? item_timed : NULL};
}

int spp_device_time(struct spp_device_case *const *c, int n, const struct spp_bench_opts *bo,
		    struct spp_bench_result *out, struct spp_error *err)
{
	struct spp_bench_item *items = calloc((size_t)(n > 0 ? n : 1), sizeof(*items));
	int rc;

	if (!items)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory timing %d runs", n);
	for (int i = 0; i < n; i++)
		items[i] = spp_device_item(c[i]);
	rc = spp_bench_run(items, n, bo, out, err);
	/* nothing of the timed runs stays queued on any device */
	for (int i = 0; i < n; i++)
		if (c[i]->dev->ops->sync && (i == 0 || c[i]->dev != c[i - 1]->dev))
			c[i]->dev->ops->sync(c[i]->dev->ctx);
	free(items);
	return rc;
}

void spp_device_figures(const struct spp_device_layer *L, const struct spp_device_case *c,
			const struct spp_bw_model *bw, double t_dense_ns, enum spp_device_work work,
			double flops, double ideal, struct spp_run *r)
{
	const struct spp_matrix *w = L->w;
	struct spp_run_inputs in = {
		w->m, w->k, L->n, L->nnz, c->w_bytes, L->theoretical_speedup, bw,
		r->time.median, t_dense_ns, 0, isfinite(c->x_bytes) ? c->x_bytes : 0, 0,
	};

	/* a baseline does all the dense FLOPs: its rate is theirs, its ideal 1 */
	if (work == SPP_WORK_DENSE) {
		in.flops = 2.0 * (double)w->m * (double)w->k * (double)L->n;
		in.theoretical_speedup = 1;
	}
	if (work == SPP_WORK_GIVEN) {
		in.flops = flops;
		in.theoretical_speedup = ideal;
	}
	spp_run_figures(&in, r);
	/* the baseline is the yardstick: it has no efficiency against itself,
	 * but a share of the machine's FMA peak (the CPU's, for a CPU run) */
	if (work == SPP_WORK_DENSE) {
		r->efficiency = r->gap = NAN;
		if (bw && bw->peak_gflops > 0 && strcmp(r->backend, "cpu") == 0)
			r->peak_share = r->gflops / bw->peak_gflops;
	}
}
