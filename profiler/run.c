#include "profiler/run.h"
#include "profiler/run_epilogue.h"

#include "base/buffer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/sim.h"
#include "profiler/decode.h"
#include "profiler/device.h"
#include "base/rng.h"
#include "profiler/run_cuda.h"
#include "profiler/run_count.h"
#include "profiler/run_dense.h"

/* Columns of the dense baseline checked against the double-precision reference. */
#define REF_COLUMNS 4

/* Buffers of one layer's runs (W itself is the caller's). */
struct layer_bufs {
	float *x, *yd, *y, *wabs, *xabs, *bound;
	float *xs, *ys, *bs;  /* REF_COLUMNS-column slices for the reference check */
};

static void bufs_free(struct layer_bufs *b)
{
	spp_buffer_free(b->x), spp_buffer_free(b->yd), spp_buffer_free(b->y);
	spp_buffer_free(b->wabs), spp_buffer_free(b->xabs), spp_buffer_free(b->bound);
	spp_buffer_free(b->xs), spp_buffer_free(b->ys), spp_buffer_free(b->bs);
	memset(b, 0, sizeof(*b));
}

static float *falloc(int64_t a, int64_t b, int *fail)
{
	float *p;

	if (a < 0 || b < 0 || (b && (uint64_t)a > SIZE_MAX / sizeof(float) / (uint64_t)b)) {
		*fail = 1;
		return NULL;
	}
	/* huge-page backed for large operands: dense and sparse runs read
	 * the same buffers, so page walks cost both sides alike */
	p = spp_buffer_alloc((size_t)(a * b > 0 ? a * b : 1) * sizeof(float));
	*fail |= p == NULL;
	return p;
}

struct flush_ctx {
	const struct spp_run_opts *o;
	struct spp_range r[3];  /* W (dense only), X, Y */
	int ndense;             /* items 0..ndense-1 are dense candidates */
};

/* A cold run: W evicted (the dense W by its lines; an encoded W and the libraries' buffers by
 * the eviction read), then X and Y read back, warm as a large model's layer finds them. */
static void before_run(void *p, int item)
{
	struct flush_ctx *f = p;
	int dense = item < f->ndense;

	spp_cache_flush(f->o->flusher, f->r, dense ? 1 : 0);
	spp_cache_touch(f->o->flusher, f->r + 1, 2);
}

/*
 * The double-precision reference on a few columns of X (B->ys) and its
 * error scale |W|.|X| there (B->bs); *c columns, at cols.
 */
static void ref_columns(struct layer_bufs *B, const struct spp_matrix *w, int64_t n,
			int64_t *cols, int64_t *c)
{
	int64_t m = w->m, k = w->k;
	struct spp_matrix wa = {m, k, B->wabs};

	*c = n < REF_COLUMNS ? n : REF_COLUMNS;
	for (int64_t s = 0; s < *c; s++)
		cols[s] = *c > 1 ? s * (n - 1) / (*c - 1) : 0;
	for (int64_t i = 0; i < k; i++)
		for (int64_t s = 0; s < *c; s++)
			B->xs[i * *c + s] = B->x[i * n + cols[s]];
	spp_reference_gemm(w, B->xs, B->ys, *c);
	for (int64_t i = 0; i < k * *c; i++)
		B->xs[i] = fabsf(B->xs[i]);
	spp_reference_gemm(&wa, B->xs, B->bs, *c);
}

/*
 * A dense candidate's output y (m x n) against the reference columns.
 * Returns 1 when it holds; fills
 * *worst and, when it does not, why.
 */
static int check_dense(struct layer_bufs *B, const float *y, int64_t m, int64_t n,
		       const int64_t *cols, int64_t c, double rtol, double *worst,
		       char *why, size_t nwhy)
{
	float *yds = malloc(sizeof(float) * (size_t)(m * c > 0 ? m * c : 1));
	int64_t wi, wj;
	int ok;

	if (!yds) {
		snprintf(why, nwhy, "out of memory for the check");
		return 0;
	}
	for (int64_t i = 0; i < m; i++)
		for (int64_t s = 0; s < c; s++)
			yds[i * c + s] = y[i * n + cols[s]];
	ok = spp_run_check(yds, B->ys, B->bs, m, c, rtol, worst, &wi, &wj);
	if (!ok)
		snprintf(why, nwhy,
			 "result differs from the double-precision reference by %.3g x (|W|.|X|) at (%lld, %lld), bound %.3g",
			 *worst, (long long)wi, (long long)cols[wj < 0 ? 0 : wj], rtol);
	free(yds);
	return ok;
}

/* Buffers, X and |X|. 0 or SPP_E_NOMEM. */
static int prepare(int64_t m, int64_t k, int64_t n, const char *name,
		   const struct spp_run_opts *o, struct layer_bufs *B,
		   struct spp_error *err)
{
	int64_t c = n < REF_COLUMNS ? n : REF_COLUMNS;
	struct spp_rng rng;
	int fail = 0;

	B->wabs = falloc(m, k, &fail);
	B->x = falloc(k, n, &fail);
	B->xabs = falloc(k, n, &fail);
	B->yd = falloc(m, n, &fail);
	B->y = falloc(m, n, &fail);
	B->bound = falloc(m, n, &fail);
	B->xs = falloc(k, c, &fail);
	B->ys = falloc(m, c, &fail);
	B->bs = falloc(m, c, &fail);
	if (fail)
		return spp_error_set(err, SPP_E_NOMEM,
				     "'%s': out of memory for the %lldx%lldx%lld runs",
				     name, (long long)m, (long long)k, (long long)n);
	spp_rng_seed(&rng, o->seed);
	for (int64_t i = 0; i < k * n; i++) {
		if (o->act_x)
			B->x[i] = o->act_x[i];
		else
			B->x[i] = (float)(2 * spp_rng_uniform(&rng) - 1);
		B->xabs[i] = fabsf(B->x[i]);
	}
	/* ReLU-like activations: i.i.d. zeros from a stream of their own, so
	 * that the non-zero values are those of the uniform X */
	if (!o->act_x && o->act_sparsity > 0) {
		spp_rng_seed(&rng, o->seed ^ UINT64_C(0x5ac7a55e));
		for (int64_t i = 0; i < k * n; i++)
			if (spp_rng_uniform(&rng) < o->act_sparsity)
				B->x[i] = B->xabs[i] = 0.0f;
	}
	return SPP_OK;
}

static int runs_init(struct spp_layer_runs *out,
		     const struct spp_format_ops *const *formats, int nformats,
		     struct spp_error *err)
{
	out->nruns = 0;
	memset(&out->act, 0, sizeof(out->act));
	out->act.requested = out->act.sparsity = NAN;
	out->act.flops_combined = out->act.combined_speedup = NAN;
	out->runs = calloc((size_t)nformats + 1, sizeof(*out->runs));
	if (!out->runs)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	out->nruns = nformats + 1;
	spp_run_init(&out->runs[0], "cpu", "dense");
	memset(&out->dense, 0, sizeof(out->dense));
	out->dense.winner = -1;
	out->dense_shared = 0;
	for (int f = 0; f < nformats; f++)
		spp_run_init(&out->runs[f + 1], "cpu", formats[f]->key);
	return SPP_OK;
}

uint64_t spp_layer_run_bytes(const struct spp_layer *l)
{
	double m = (double)l->view.m, k = (double)l->view.k, n = (double)l->n;
	double b = 4 * (2 * m * k + 2 * k * n + 3 * m * n);

	return b >= 0x1p64 ? UINT64_MAX : (uint64_t)b;
}

int spp_layer_measure(const struct spp_layer *l, const struct spp_layer_static *st,
		      const struct spp_format_ops *const *formats, int nformats,
		      const struct spp_run_opts *o, struct spp_layer_runs *out,
		      struct spp_error *err)
{
	int64_t m = l->view.m, k = l->view.k;
	struct spp_matrix w = {m, k, NULL};
	float *wbuf = NULL, *bias = NULL;
	int rc, fail = 0;

	if (!spp_decode_supported(l->weight->dtype)) {
		rc = runs_init(out, formats, nformats, err);
		if (rc)
			return rc;
		for (int r = 0; r < out->nruns; r++)
			spp_run_set_status(&out->runs[r], SPP_RUN_UNSUPPORTED,
				   "%s weights have no fp32 decoding for the kernels",
				   spp_dtype_name(l->weight->dtype));
		return SPP_OK;
	}
	wbuf = falloc(m, k, &fail);
	if (fail) {
		out->runs = NULL;
		out->nruns = 0;
		return spp_error_set(err, SPP_E_NOMEM,
				     "tensor '%s': out of memory for the %lldx%lld weights",
				     l->name, (long long)m, (long long)k);
	}
	rc = spp_layer_decode(l, wbuf, err);
	if (!rc && o->epilogue != SPP_EPILOGUE_NONE)
		rc = spp_run_epi_layer_bias(l, &bias, err);
	if (!rc) {
		struct spp_run_opts lo = *o;

		/* the layer's own bias for the epilogue; zeros (said in the report) without one */
		lo.bias = bias;
		lo.bias_source = bias ? "model" : NULL;
		w.v = wbuf;
		rc = (o->precision ? spp_lowp_measure : spp_matrix_measure)(&w, l->n, st->counts.nnz,
				st->theoretical_speedup, l->name, formats, nformats, &lo, out, err);
	} else {
		out->runs = NULL;
		out->nruns = 0;
	}
	spp_buffer_free(wbuf);
	free(bias);
	return rc;
}

/* The devices and buffers of one matrix's CPU runs. */
struct measure {
	const struct spp_run_opts *o;
	const char *name;
	struct spp_matrix w, wa;       /* W and |W| */
	struct layer_bufs B;
	struct spp_device_cpu cpu;
	struct spp_device formats, dense;
	struct spp_device_layer L;
	struct spp_device_case *cases; /* the timed items: dense candidates first, then formats */
	const struct spp_dense_cand **cand; /* item i's candidate; NULL: a format */
	int *run_of;                   /* item i's run in out */
	int *dense_of;                 /* a candidate item's entry of out->dense.t */
	int *variant_of;               /* --epilogue: 1 fused, 2 unfused; 0 the plain kernel */
	int nitems, nd;
	struct spp_run_epi_ctx E;
};

/*
 * One dense candidate of the plan: run it once and check it against the
 * double-precision reference columns; the first that passes gives the
 * dense result yd every format is checked against, and the bound
 * |W|.|X|. Returns whether it became a timed item.
 */
static int dense_item(struct measure *M, const struct spp_dense_cand *cand, int entry,
		      const int64_t *cols, int64_t c, int *have, struct spp_layer_runs *out,
		      char *all, size_t *len, size_t nall)
{
	int64_t m = M->w.m, n = M->L.n;
	struct spp_device_case *dc = &M->cases[M->nitems];
	struct spp_dense_timing *t = &out->dense.t[entry];
	struct spp_error e2 = {0};
	double worst = NAN;
	char why[200] = "it could not run";

	if (spp_device_open(&M->dense, cand, &M->L, dc, &e2) ||
	    M->dense.ops->result(dc, M->B.y, &e2) ||
	    !check_dense(&M->B, M->B.y, m, n, cols, c, M->o->verify_rtol, &worst, why, sizeof(why))) {
		if (e2.msg[0])
			snprintf(why, sizeof(why), "%.190s", e2.msg);
		spp_device_close(dc);
		if (!out->dense_shared) {
			t->status = SPP_RUN_FAILED;
			t->max_error = worst;
			snprintf(t->reason, sizeof(t->reason), "%s", why);
		}
		if (*len < nall)
			*len += (size_t)snprintf(all + *len, nall - *len, "%s%s: %s",
						 *len ? "; " : "", cand->name, why);
		return 0;
	}
	if (!out->dense_shared)
		t->max_error = worst;
	if (!*have) {
		memcpy(M->B.yd, M->B.y, sizeof(float) * (size_t)(m * n));
		spp_dense_run(cand, &M->wa, M->B.xabs, M->B.bound, n, M->o->threads);
		out->runs[0].max_error = worst;
		*have = 1;
	}
	M->cand[M->nitems] = cand;
	M->run_of[M->nitems] = 0;
	M->dense_of[M->nitems] = entry;
	M->nitems++;
	return 1;
}

/*
 * The dense candidates of this shape (profiler/run_dense.h), each a timed
 * item when it computes right (dense_item). Returns whether there is a
 * verified dense result.
 */
static int dense_items(struct measure *M, const struct spp_dense_set *set, struct spp_layer_runs *out)
{
	int64_t cols[REF_COLUMNS], c;
	int idx[SPP_DENSE_MAX], count, have = 0;
	struct spp_dense_choice *ch = &out->dense;
	size_t len = 0;
	char all[256] = "";

	ref_columns(&M->B, &M->w, M->L.n, cols, &c);
	for (int pass = 0; pass < 2 && !have; pass++) {
		/* a remembered winner that fails here: every candidate after all */
		count = spp_dense_plan(set, pass ? NULL : M->o->dense_memo, M->w.m, M->w.k, M->L.n,
				       M->o->threads, M->name, ch, &out->dense_shared, idx);
		M->nitems = 0;
		for (int j = 0; j < count; j++)
			dense_item(M, &set->c[idx[j]], out->dense_shared ? ch->winner : j, cols, c,
				   &have, out, all, &len, sizeof(all));
		if (!out->dense_shared)
			break;
	}
	M->nd = M->nitems;
	if (!have && count == 0)
		spp_run_set_status(&out->runs[0], SPP_RUN_FAILED, "no dense candidate is timed at N = %lld "
				   "(spprof's GEMV only up to N = %d): add a library to --dense",
				   (long long)M->L.n, SPP_DENSE_COLS_MAX_N);
	else if (!have)
		spp_run_set_status(&out->runs[0], SPP_RUN_FAILED, "no dense candidate computed right: %s",
				   len ? all : "none could run");
	return have;
}

/*
 * Each format opened on W, run once and checked against the verified
 * dense result (none: every format failed, says why); those that pass
 * are timed items.
 */
static void format_items(struct measure *M, const struct spp_format_ops *const *formats,
			 int nformats, int dense_ok, struct spp_layer_runs *out)
{
	struct spp_device_check chk = {M->B.yd, M->B.bound, M->o->verify_rtol, "dense", M->B.y};

	for (int f = 0; f < nformats; f++) {
		int add = 0;

		if (spp_device_open_checked(&M->formats, formats[f], &M->L, dense_ok ? &chk : NULL,
					    &M->cases[M->nitems], &out->runs[f + 1]))
			add = 1;
		/* the epilogue's variants beside the plain kernel, timed in the same run */
		if (add && M->E.epi.kind != SPP_EPILOGUE_NONE)
			add += spp_run_epi_cases(&M->E, formats[f], &M->L, M->B.y, M->o->verify_rtol,
						 &M->cases[M->nitems + 1], &out->runs[f + 1]);
		for (int v = 0; v < add; v++) {
			M->cand[M->nitems] = NULL;
			M->run_of[M->nitems] = f + 1;
			M->dense_of[M->nitems] = -1;
			M->variant_of[M->nitems] = v;
			M->nitems++;
		}
	}
}

/* Where r's simulated figures go: cache_sim beside what counts cache (--counters A,sim), else
 * cache when the simulator is the backend; NULL when nothing is simulated. */
static struct spp_cache_figures *sim_figures(const struct spp_run_opts *o, struct spp_run *r)
{
	if (!o->sim_geometry)
		return NULL;
	if (o->sim_beside)
		return &r->cache_sim;
	return o->counters && strcmp(o->counters->name, "sim") == 0 ? &r->cache : NULL;
}

/*
 * The figures of timed item i, run `run` of out (0: the dense baseline)
 * from its result against the baseline's median t_dense: time, rates,
 * counted or simulated cache figures. Returns 0 or SPP_E_NOMEM.
 */
static int item_figures(struct measure *M, struct spp_layer_runs *out, int i,
			const struct spp_bench_result *res, double t_dense, struct spp_run_count *cc,
			struct spp_error *err)
{
	const struct spp_run_opts *o = M->o;
	int run = M->run_of[i];
	struct spp_run *r = &out->runs[run];
	const struct spp_encoded *en = spp_device_cpu_encoded(&M->cases[i]);
	enum spp_device_work work = run == 0 ? SPP_WORK_DENSE : SPP_WORK_SPARSE;
	struct spp_cache_figures *sim;
	struct spp_error e2 = {0};

	/* a kernel that skips X's zeros does the combined FLOPs' work */
	if (spp_run_act_kernel(r->format))
		work = SPP_WORK_GIVEN;
	r->time = res->time;
	spp_device_figures(&M->L, &M->cases[i], &o->bw, t_dense, work, out->act.flops_combined,
			   out->act.combined_speedup, r);
	if (res->imbalance > 0)
		r->imbalance = res->imbalance;
	if (res->judged) {
		r->rounds_discarded = res->discarded;
		r->rounds_disturbed = res->disturbed;
	}
	spp_run_count_read(cc, i, o->cache_line > 0 ? o->cache_line : 64, r);
	/* the simulator replays the traced copy of each verified CPU format */
	if (en && (sim = sim_figures(o, r)) &&
	    spp_sim_replay(o->sim_geometry, o->threads, o->sim_budget, !o->cold, o->isa, en, M->B.x,
			   M->B.y, M->L.n, sim, &e2) == SPP_E_NOMEM)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for the cache simulator",
				     M->name);
	spp_run_cache_dram(r);
	return SPP_OK;
}

/*
 * The fastest of the dense items is the baseline, run 0 (*best: its item,
 * -1 none); each candidate's time goes to out->dense and the shape's
 * choice is remembered. 0 or SPP_E_NOMEM.
 */
static int choose_baseline(struct measure *M, struct spp_layer_runs *out,
			   const struct spp_bench_result *res, int *best, struct spp_error *err)
{
	int rc;

	*best = -1;
	for (int i = 0; i < M->nd; i++) {
		if (!out->dense_shared) {
			out->dense.t[M->dense_of[i]].time = res[i].time;
			out->dense.t[M->dense_of[i]].retired = res[i].retired;
		}
		/* never one raced out (measure.h): its few rounds are no baseline to pair the runs' with */
		if (!res[i].retired && (*best < 0 || res[i].time.median < res[*best].time.median))
			*best = i;
	}
	if (!out->dense_shared && (rc = spp_dense_choose(&out->dense, M->o->dense_memo, err)))
		return rc;
	if (*best >= 0) {
		snprintf(out->runs[0].candidate, sizeof(out->runs[0].candidate), "%s", M->cand[*best]->name);
		spp_dense_describe(M->cand[*best], out->runs[0].library, sizeof(out->runs[0].library));
	}
	return SPP_OK;
}

/*
 * Time the items in the one harness (cold: caches evicted before each
 * timed run; hardware counters bracketing them), choose the baseline and
 * derive every timed run's figures.
 */
static int time_items(struct measure *M, struct spp_layer_runs *out, struct spp_error *err)
{
	const struct spp_run_opts *o = M->o;
	int64_t m = M->w.m, k = M->w.k, n = M->L.n;
	struct spp_bench_opts bo = o->bench;
	struct spp_device_case **pc = calloc((size_t)M->nitems, sizeof(*pc));
	struct spp_bench_result *res = calloc((size_t)M->nitems, sizeof(*res));
	struct spp_run_count cc = {0};
	struct flush_ctx fc = {o, {{M->w.v, (size_t)(m * k) * sizeof(float)},
				   {M->B.x, (size_t)(k * n) * sizeof(float)},
				   {M->B.y, (size_t)(m * n) * sizeof(float)}}, M->nd};
	int rc = SPP_OK, best = -1;

	if (!pc || !res) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < M->nitems; i++)
		pc[i] = &M->cases[i];
	if (o->cold) {
		bo.before = before_run;
		bo.before_ctx = &fc;
	}
	/* the dense candidates (items [0, nd)) judge the rounds; each layer's orders from the run's seed */
	bo.nref = M->nd;
	/* candidates that cannot win leave their rounds to the reported runs */
	bo.race = SPP_RACE_SLOW;
	bo.seed = o->seed;
	if (spp_run_count_hardware(o->counters)) {
		if ((rc = spp_run_count_open(&cc, M->run_of, M->nitems, o, err)))
			goto out;
		bo.count_start = spp_run_count_start;
		bo.count_stop = spp_run_count_stop;
		bo.count_ctx = &cc;
	}
	if ((rc = spp_device_time(pc, M->nitems, &bo, res, err)) ||
	    (rc = choose_baseline(M, out, res, &best, err)))
		goto out;
	for (int i = 0; i < M->nitems && !rc; i++)
		if (M->variant_of[i])
			spp_run_epi_time(&out->runs[M->run_of[i]], M->variant_of[i] == 2, &res[i].time);
		/* a slower candidate: its time is in out->dense */
		else if (M->run_of[i] != 0 || i == best)
			rc = item_figures(M, out, i, &res[i], best >= 0 ? res[best].time.median : 0, &cc, err);
	/* each format's speedup interval from the rounds it shared with the baseline */
	for (int i = 0; !rc && best >= 0 && bo.schedule == SPP_SCHED_INTERLEAVED && i < M->nitems; i++)
		if (!M->variant_of[i] && M->run_of[i] != 0 && !res[i].rc)
			spp_run_speedup_ci(&out->runs[M->run_of[i]], res[best].rounds, res[best].nrounds,
					   res[i].rounds, res[i].nrounds);
	if (!rc)
		spp_run_weight_only(out);
out:
	spp_run_count_close(&cc, M->nitems);
	free(pc);
	free(res);
	return rc;
}

/* The buffers, X, |W| and the per-item tables of M. 0 or SPP_E_NOMEM. */
static int measure_open(struct measure *M, const struct spp_matrix *wm, int64_t n, uint64_t nnz,
			double theoretical_speedup, const char *name, int nformats,
			const struct spp_run_opts *o, struct spp_layer_runs *out, struct spp_error *err)
{
	int64_t m = wm->m, k = wm->k;
	size_t items = 3 * (size_t)nformats + SPP_DENSE_MAX;
	int rc;

	memset(M, 0, sizeof(*M));
	M->o = o;
	M->name = name;
	M->w = *wm;
	if ((rc = prepare(m, k, n, name, o, &M->B, err)) ||
	    (rc = spp_run_act_figures(&M->w, M->B.x, n, o, &out->act, err)))
		return rc;
	for (int64_t i = 0; i < m * k; i++)
		M->B.wabs[i] = fabsf(M->w.v[i]);
	M->wa = (struct spp_matrix){m, k, M->B.wabs};
	M->cpu = (struct spp_device_cpu){o->threads, o->isa, M->B.y};
	M->formats = (struct spp_device){&spp_device_cpu_formats, &M->cpu};
	M->dense = (struct spp_device){&spp_device_cpu_dense, &M->cpu};
	M->L = (struct spp_device_layer){&M->w, M->B.x, n, nnz, theoretical_speedup};
	M->cases = calloc(items, sizeof(*M->cases));
	M->cand = calloc(items, sizeof(*M->cand));
	M->run_of = calloc(items, sizeof(*M->run_of));
	M->dense_of = calloc(items, sizeof(*M->dense_of));
	M->variant_of = calloc(items, sizeof(*M->variant_of));
	if (!M->cases || !M->cand || !M->run_of || !M->dense_of || !M->variant_of)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	return SPP_OK;
}

static void measure_close(struct measure *M)
{
	for (int i = 0; M->cases && i < M->nitems; i++)
		spp_device_close(&M->cases[i]);
	free(M->cases), free(M->cand), free(M->run_of), free(M->dense_of), free(M->variant_of);
	spp_run_epi_close(&M->E);
	bufs_free(&M->B);
}

int spp_matrix_measure(const struct spp_matrix *wm, int64_t n, uint64_t nnz,
		       double theoretical_speedup, const char *name,
		       const struct spp_format_ops *const *formats, int nformats,
		       const struct spp_run_opts *o, struct spp_layer_runs *out,
		       struct spp_error *err)
{
	struct spp_dense_set local, *set = o->dense;
	struct measure M;
	struct spp_error e2;
	int rc, dense_ok;

	if ((rc = runs_init(out, formats, nformats, err)))
		return rc;
	if (!set) {
		if ((rc = spp_dense_set_open(&local, NULL, o->isa, err))) {
			spp_layer_runs_release(out);
			return rc;
		}
		set = &local;
	}
	rc = measure_open(&M, wm, n, nnz, theoretical_speedup, name, nformats, o, out, err);
	if (rc)
		goto done;
	dense_ok = dense_items(&M, set, out);
	if (dense_ok && (rc = spp_run_epi_open(&M.E, o, M.B.yd, M.B.bound, wm->m, n, &M.cpu, err)))
		goto done;
	format_items(&M, formats, nformats, dense_ok, out);
	/* the GPU's runs check against the same verified dense result */
	if ((o->backends & SPP_BACKEND_CUDA) && dense_ok &&
	    spp_run_cuda(&M.w, M.B.x, n, M.B.yd, M.B.bound, nnz, theoretical_speedup, o, out,
			 &e2) == SPP_E_NOMEM) {
		*err = e2;
		rc = SPP_E_NOMEM;
		goto done;
	}
	/* no device: analyze said so before the first layer */
	if (M.nitems > 0)
		rc = time_items(&M, out, err);
done:
	if (rc)
		spp_layer_runs_release(out);
	measure_close(&M);
	if (set == &local)
		spp_dense_set_close(&local);
	return rc;
}
