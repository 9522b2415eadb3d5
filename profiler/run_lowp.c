/*
 * A matrix's runs in a deployed precision (analyze --precision, issue
 * 47): the low-precision dense candidates (kernels/dense/lowp_dense.h)
 * and the kernels/lowp formats, on the device of profiler/device_lowp.c,
 * timed in the one harness (interleaved rounds) as spp_matrix_measure
 * times fp32. Each format's Y is checked against the dense Y of the same
 * precision, both from the same quantized W and X, so the check is held
 * to fp32 summation (bf16, fp16) or exact int32 sums (int8), not to the
 * quantization; the dense candidates are checked against their double
 * reference when they open. The fastest dense candidate is the baseline,
 * and every speedup is against it, never against fp32.
 */
#include "profiler/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "base/rng.h"
#include "kernels/dense/lowp_dense.h"
#include "kernels/lowp/lowp.h"
#include "profiler/device.h"
#include "profiler/run_dense.h"

/* A run of the kernels/lowp format for a fp32 format's key; -1: none. */
static int lowp_format_of(const char *key)
{
	for (int f = 0; f < SPP_LOWP_NFORMATS; f++)
		if (strcmp(key, spp_lowp_format_name((enum spp_lowp_format)f)) == 0)
			return f;
	return -1;
}

struct lowp_measure {
	const struct spp_run_opts *o;
	enum spp_prec prec;
	struct spp_matrix w;
	int64_t n;
	float *x, *xsv, *y, *yd, *bound; /* X fp32, the quantized X's, scratch Y, dense Y, check bound */
	void *dxv;
	struct spp_lowp_x sx;
	struct spp_dense_lowp_x dx;
	struct spp_device_lowp cpu;
	struct spp_device dev;
	struct spp_device_layer L;
	struct spp_device_lowp_entry ent[SPP_DENSE_MAX + 64];
	struct spp_device_case cases[SPP_DENSE_MAX + 64];
	int run_of[SPP_DENSE_MAX + 64];
	int nitems, nd;
};

/* The runs: dense, each format asked for, and bsr1x4 in place of the bsr formats. */
static int runs_init(struct lowp_measure *M, const struct spp_format_ops *const *formats,
		     int nformats, struct spp_layer_runs *out, struct spp_error *err)
{
	const char *pn = spp_prec_name(M->prec);
	int bsr = 0;

	memset(out, 0, sizeof(*out));
	out->act.requested = out->act.sparsity = NAN;
	out->act.flops_combined = out->act.combined_speedup = NAN;
	out->dense.winner = -1;
	if (!(out->runs = calloc((size_t)nformats + 2, sizeof(*out->runs))))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	spp_run_init(&out->runs[out->nruns++], "cpu", "dense");
	for (int f = 0; f < nformats; f++) {
		struct spp_run *r = &out->runs[out->nruns++];
		int lf = lowp_format_of(formats[f]->key);

		spp_run_init(r, "cpu", formats[f]->key);
		bsr |= strncmp(formats[f]->key, "bsr", 3) == 0;
		if (lf < 0)
			spp_run_set_status(r, SPP_RUN_NOT_APPLICABLE, "no %s kernel for %s (in %s: csr, nm2_4, "
					   "nm4_8, bsr1x4, bitmask)%s", pn, formats[f]->key, pn,
					   strncmp(formats[f]->key, "bsr", 3) == 0 ? "; bsr1x4 runs instead" : "");
		M->ent[1 + f] = (struct spp_device_lowp_entry){NULL, lf < 0 ? 0 : (enum spp_lowp_format)lf};
	}
	if (bsr) {
		spp_run_init(&out->runs[out->nruns], "cpu", "bsr1x4");
		M->ent[out->nruns++] = (struct spp_device_lowp_entry){NULL, SPP_LOWP_BSR1X4};
	}
	for (int r = 0; r < out->nruns; r++)
		snprintf(out->runs[r].precision, sizeof(out->runs[r].precision), "%s", pn);
	return SPP_OK;
}

/* X as run.c makes it (uniform from seed, the activations, their zeros), quantized both ways, and
 * the check's bound sum_k |w_ik| * max_k |x_kj| (>= |W|.|X|: M K + K N work, not M K N). */
static int make_x(struct lowp_measure *M, struct spp_error *err)
{
	const struct spp_run_opts *o = M->o;
	int64_t m = M->w.m, k = M->w.k, n = M->n;
	float *rows = NULL, *cols = NULL;
	struct spp_rng rng;
	int rc = SPP_OK;

	M->x = spp_buffer_alloc(sizeof(float) * (size_t)(k * n));
	M->y = spp_buffer_alloc(sizeof(float) * (size_t)(m * n));
	M->yd = spp_buffer_alloc(sizeof(float) * (size_t)(m * n));
	M->bound = spp_buffer_alloc(sizeof(float) * (size_t)(m * n));
	M->xsv = spp_buffer_alloc(spp_lowp_x_bytes(M->prec, k, n));
	M->dxv = spp_buffer_alloc((size_t)(k * n) * (size_t)spp_prec_info(M->prec)->x_bytes);
	rows = calloc((size_t)m, sizeof(float));
	cols = calloc((size_t)n, sizeof(float));
	if (!M->x || !M->y || !M->yd || !M->bound || !M->xsv || !M->dxv || !rows || !cols) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory for the %s runs", spp_prec_name(M->prec));
		goto out;
	}
	spp_rng_seed(&rng, o->seed);
	for (int64_t i = 0; i < k * n; i++)
		M->x[i] = o->act_x ? o->act_x[i] : (float)(2 * spp_rng_uniform(&rng) - 1);
	if (!o->act_x && o->act_sparsity > 0) {
		spp_rng_seed(&rng, o->seed ^ UINT64_C(0x5ac7a55e));
		for (int64_t i = 0; i < k * n; i++)
			if (spp_rng_uniform(&rng) < o->act_sparsity)
				M->x[i] = 0.0f;
	}
	M->sx = (struct spp_lowp_x){M->prec, k, n, 1.0f, M->xsv};
	if ((rc = spp_lowp_x_quantize(&M->sx, M->x, err)) ||
	    (rc = spp_dense_lowp_quantize_x(M->prec, 0, 1, M->x, k, n, M->dxv, &M->dx, err)))
		goto out;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			rows[i] += fabsf(M->w.v[i * k + j]);
	for (int64_t i = 0; i < k * n; i++)
		cols[i % n] = fmaxf(cols[i % n], fabsf(M->x[i]));
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++)
			M->bound[i * n + j] = rows[i] * cols[j];
out:
	free(rows);
	free(cols);
	return rc;
}

/* The dense candidates that run this precision here, each a timed item; the first's Y is the
 * one the formats are checked against. Returns whether one opened; else why in why. */
static int dense_items(struct lowp_measure *M, char *why, size_t nwhy)
{
	size_t len = 0;

	why[0] = '\0';
	for (int i = 0; spp_dense_lowp_libs[i] && M->nitems < SPP_DENSE_MAX; i++) {
		struct spp_device_case *c = &M->cases[M->nitems];
		struct spp_device_lowp_entry *e = &M->ent[SPP_DENSE_MAX + 63 - M->nitems];
		struct spp_error e2 = {0};

		*e = (struct spp_device_lowp_entry){spp_dense_lowp_libs[i]->key, 0};
		if (spp_device_open(&M->dev, e, &M->L, c, &e2) ||
		    (M->nitems == 0 && M->dev.ops->result(c, M->yd, &e2))) {
			spp_device_close(c);
			if (len < nwhy)
				len += (size_t)snprintf(why + len, nwhy - len, "%s%s: %s", len ? "; " : "",
							spp_dense_lowp_libs[i]->name, e2.msg);
			continue;
		}
		M->run_of[M->nitems++] = 0;
	}
	M->nd = M->nitems;
	return M->nd > 0;
}

static void before_run(void *p, int item)
{
	const struct lowp_measure *M = p;
	struct spp_range r[2] = {{M->xsv, spp_lowp_x_bytes(M->prec, M->w.k, M->n)},
				 {M->y, sizeof(float) * (size_t)(M->w.m * M->n)}};

	(void)item;
	spp_cache_flush(M->o->flusher, r, 0);
	spp_cache_touch(M->o->flusher, r, 2);
}

/* The dense choice of out from the candidates' times; *best its item (-1 none). */
static int choose(struct lowp_measure *M, const char *name, struct spp_layer_runs *out,
		  const struct spp_bench_result *res, int *best, struct spp_error *err)
{
	struct spp_dense_choice *ch = &out->dense;
	int rc;

	*ch = (struct spp_dense_choice){.m = M->w.m, .k = M->w.k, .n = M->n, .threads = M->o->threads,
					.winner = -1, .nt = M->nd};
	snprintf(ch->measured_on, sizeof(ch->measured_on), "%s", name);
	for (int i = 0; i < M->nd; i++) {
		struct spp_dense_timing *t = &ch->t[i];
		const struct spp_device_lowp_entry *e = &M->ent[SPP_DENSE_MAX + 63 - i];

		snprintf(t->name, sizeof(t->name), "%s", e->dense_key);
		spp_device_lowp_describe(&M->cases[i], t->library, sizeof(t->library));
		t->status = res[i].rc ? SPP_RUN_FAILED : SPP_RUN_OK;
		t->time = res[i].time;
		t->retired = res[i].retired;
		t->max_error = t->gflops = t->relative = NAN;
	}
	if ((rc = spp_dense_choose(ch, NULL, err)))
		return rc;
	*best = ch->winner;
	if (*best >= 0) {
		snprintf(out->runs[0].candidate, sizeof(out->runs[0].candidate), "%s", ch->t[*best].name);
		snprintf(out->runs[0].library, sizeof(out->runs[0].library), "%s", ch->t[*best].library);
	}
	return SPP_OK;
}

/* Time the items, choose the baseline, derive the figures. */
static int time_items(struct lowp_measure *M, const char *name, struct spp_layer_runs *out,
		      struct spp_error *err)
{
	struct spp_bench_opts bo = M->o->bench;
	struct spp_device_case *pc[SPP_DENSE_MAX + 64];
	struct spp_bench_result *res = calloc((size_t)M->nitems, sizeof(*res));
	int rc, best = -1;

	if (!res)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	for (int i = 0; i < M->nitems; i++)
		pc[i] = &M->cases[i];
	if (M->o->cold && M->o->flusher) {
		bo.before = before_run;
		bo.before_ctx = M;
	}
	bo.nref = M->nd;
	bo.race = SPP_RACE_SLOW;
	bo.seed = M->o->seed;
	if ((rc = spp_device_time(pc, M->nitems, &bo, res, err)) ||
	    (rc = choose(M, name, out, res, &best, err)))
		goto out;
	for (int i = 0; i < M->nitems; i++) {
		struct spp_run *r = &out->runs[M->run_of[i]];

		if ((i < M->nd && i != best) || res[i].rc)
			continue;
		r->time = res[i].time;
		spp_device_figures(&M->L, &M->cases[i], &M->o->bw, best >= 0 ? res[best].time.median : 0,
				   i < M->nd ? SPP_WORK_DENSE : SPP_WORK_SPARSE, NAN, NAN, r);
		if (res[i].judged) {
			r->rounds_discarded = res[i].discarded;
			r->rounds_disturbed = res[i].disturbed;
		}
		if (i >= M->nd && best >= 0 && bo.schedule == SPP_SCHED_INTERLEAVED)
			spp_run_speedup_ci(r, res[best].rounds, res[best].nrounds, res[i].rounds,
					   res[i].nrounds);
	}
out:
	free(res);
	return rc;
}

static void measure_close(struct lowp_measure *M)
{
	for (int i = 0; i < M->nitems; i++)
		spp_device_close(&M->cases[i]);
	spp_buffer_free(M->x), spp_buffer_free(M->y), spp_buffer_free(M->yd);
	spp_buffer_free(M->bound), spp_buffer_free(M->xsv), spp_buffer_free(M->dxv);
}

/* Every run of out refused with why (status s). */
static void refuse(struct spp_layer_runs *out, enum spp_run_status s, const char *why)
{
	for (int r = 0; r < out->nruns; r++)
		if (out->runs[r].status == SPP_RUN_OK)
			spp_run_set_status(&out->runs[r], s, "%s", why);
}

int spp_lowp_measure(const struct spp_matrix *w, int64_t n, uint64_t nnz, double theoretical_speedup,
		     const char *name, const struct spp_format_ops *const *formats, int nformats,
		     const struct spp_run_opts *o, struct spp_layer_runs *out, struct spp_error *err)
{
	struct lowp_measure *M = calloc(1, sizeof(*M));
	const char *pn = spp_prec_name((enum spp_prec)o->precision);
	char why[400], all[560];
	int rc;

	if (!M)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	*M = (struct lowp_measure){.o = o, .prec = (enum spp_prec)o->precision, .w = *w, .n = n};
	if (nformats > 62)
		nformats = 62;
	if ((rc = runs_init(M, formats, nformats, out, err)) || (rc = make_x(M, err)))
		goto done;
	M->cpu = (struct spp_device_lowp){M->prec, o->threads, M->y, &M->sx, &M->dx};
	M->dev = (struct spp_device){&spp_device_lowp, &M->cpu};
	M->L = (struct spp_device_layer){&M->w, M->x, n, nnz, theoretical_speedup};
	if (!dense_items(M, why, sizeof(why))) {
		snprintf(all, sizeof(all), "%s refused: no dense baseline runs %s here (%s)", pn, pn, why);
		refuse(out, SPP_RUN_UNSUPPORTED, all);
		goto done;
	}
	for (int r = 1; r < out->nruns && M->nitems < SPP_DENSE_MAX + 64; r++) {
		struct spp_device_check chk = {M->yd, M->bound, SPP_LOWP_VERIFY_RTOL(w->k),
					       "dense", M->y};

		if (out->runs[r].status != SPP_RUN_OK)
			continue;
		if (spp_device_open_checked(&M->dev, &M->ent[r], &M->L, &chk, &M->cases[M->nitems],
					    &out->runs[r]))
			M->run_of[M->nitems++] = r;
	}
	rc = time_items(M, name, out, err);
done:
	if (rc)
		spp_layer_runs_release(out);
	measure_close(M);
	free(M);
	return rc;
}
