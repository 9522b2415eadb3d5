#include "profiler/run.h"

#include "kernels/cpu/buffer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/sim.h"
#include "profiler/decode.h"
#include "profiler/base/rng.h"
#include "profiler/run_cuda.h"
#include "profiler/run_count.h"
#include "profiler/run_dense.h"

/* Columns of the dense baseline checked against the double-precision reference. */
#define REF_COLUMNS 4

void spp_run_opts_init(struct spp_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->isa = spp_isa_detect();
	o->seed = 1;
	spp_bench_opts_init(&o->bench);
	o->verify_rtol = 1e-4;
	o->backends = SPP_BACKEND_CPU;
}

__attribute__((format(printf, 3, 4)))
static void set_status(struct spp_run *r, enum spp_run_status s, const char *fmt, ...)
{
	va_list ap;

	r->status = s;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

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

/* One timed call: the dense baseline or a format. */
struct item_ctx {
	const struct spp_format_ops *ops;  /* NULL: the dense candidate */
	const struct spp_dense_cand *dense;
	const struct spp_encoded *enc;
	const struct spp_matrix *w;
	const float *x;
	float *y;
	int64_t n;
	struct spp_exec ex;
};

static int item_run(void *p, double *busy_ns)
{
	struct item_ctx *c = p;

	if (!c->ops) {
		spp_dense_run(c->dense, c->w, c->x, c->y, c->n, c->ex.threads);
		return SPP_OK;
	}
	c->ex.busy_ns = busy_ns;
	return c->ops->spmm(c->enc, c->x, c->y, c->n, &c->ex);
}

struct flush_ctx {
	const struct spp_run_opts *o;
	struct spp_range r[3];  /* W (dense only), X, Y */
	int ndense;             /* items 0..ndense-1 are dense candidates */
};

static void before_run(void *p, int item)
{
	struct flush_ctx *f = p;
	int dense = item < f->ndense;

	/* an encoded W is opaque here, so the eviction buffer covers it */
	spp_cache_flush(f->o->flusher, f->r + (dense ? 0 : 1), dense ? 3 : 2);
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
	for (int p = 0; p < SPP_NNM; p++)
		out->nm_along_m[p] = NAN;
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

int spp_layer_measure(const struct spp_layer *l, const struct spp_layer_static *st,
		      const struct spp_format_ops *const *formats, int nformats,
		      const struct spp_run_opts *o, struct spp_layer_runs *out,
		      struct spp_error *err)
{
	int64_t m = l->view.m, k = l->view.k;
	struct spp_matrix w = {m, k, NULL};
	float *wbuf = NULL;
	int rc, fail = 0;

	if (!spp_decode_supported(l->weight->dtype)) {
		rc = runs_init(out, formats, nformats, err);
		if (rc)
			return rc;
		for (int r = 0; r < out->nruns; r++)
			set_status(&out->runs[r], SPP_RUN_UNSUPPORTED,
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
	if (!rc) {
		w.v = wbuf;
		rc = spp_matrix_measure(&w, l->n, st->counts.nnz, st->theoretical_speedup,
					l->name, formats, nformats, o, out, err);
	} else {
		out->runs = NULL;
		out->nruns = 0;
	}
	spp_buffer_free(wbuf);
	return rc;
}

/*
 * The dense candidates of this shape (profiler/run_dense.h): each runs once
 * and is checked against the double-precision reference; the first that
 * passes gives the dense result yd every format is checked against, and
 * the bound |W|.|X|. Those that pass become items 0..*nd-1 (dense_of: the
 * choice's entry). Returns whether there is a verified dense result.
 */
static int dense_items(const struct spp_dense_set *set, const struct spp_run_opts *o,
		       const struct spp_matrix *w, const struct spp_matrix *wa, int64_t n,
		       const char *name, struct layer_bufs *B, struct spp_layer_runs *out,
		       struct item_ctx *ctx, struct spp_bench_item *items, int *dense_of, int *nd)
{
	int64_t m = w->m, cols[REF_COLUMNS], c;
	int idx[SPP_DENSE_MAX], count, have = 0;
	struct spp_dense_choice *ch = &out->dense;
	size_t len = 0;
	char all[256] = "";

	*nd = 0;
	ref_columns(B, w, n, cols, &c);
	for (int pass = 0; pass < 2 && !have; pass++) {
		/* a remembered winner that fails here: every candidate after all */
		count = spp_dense_plan(set, pass ? NULL : o->dense_memo, m, w->k, n, o->threads, name, ch,
				       &out->dense_shared, idx);
		*nd = 0;
		for (int j = 0; j < count; j++) {
			const struct spp_dense_cand *cand = &set->c[idx[j]];
			struct spp_dense_timing *t = &ch->t[out->dense_shared ? ch->winner : j];
			double worst;
			char why[200];

			for (int64_t i = 0; i < m * n; i++)
				B->y[i] = NAN;
			spp_dense_run(cand, w, B->x, B->y, n, o->threads);
			if (!check_dense(B, B->y, m, n, cols, c, o->verify_rtol, &worst, why, sizeof(why))) {
				if (!out->dense_shared) {
					t->status = SPP_RUN_FAILED;
					t->max_error = worst;
					snprintf(t->reason, sizeof(t->reason), "%s", why);
				}
				if (len < sizeof(all))
					len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s: %s",
								len ? "; " : "", cand->name, why);
				continue;
			}
			if (!out->dense_shared)
				t->max_error = worst;
			if (!have) {
				memcpy(B->yd, B->y, sizeof(float) * (size_t)(m * n));
				spp_dense_run(cand, wa, B->xabs, B->bound, n, o->threads);
				out->runs[0].max_error = worst;
				have = 1;
			}
			ctx[*nd] = (struct item_ctx){NULL, cand, NULL, w, B->x, B->y, n, {o->threads, o->isa, NULL}};
			items[*nd] = (struct spp_bench_item){item_run, &ctx[*nd], 0, (int)cand->pool, NULL};
			dense_of[*nd] = out->dense_shared ? ch->winner : j;
			(*nd)++;
		}
		if (!out->dense_shared)
			break;
	}
	if (!have)
		set_status(&out->runs[0], SPP_RUN_FAILED, "no dense candidate computed right: %s",
			   len ? all : "none could run");
	return have;
}

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

/*
 * Encode w with format f (*encoded: whether en holds an encoding to
 * release), run it once and check it against the verified dense result;
 * r says why not where it fails. Returns whether it became the timed item
 * *item (context *ctx).
 */
static int format_item(const struct spp_format_ops *f, const struct spp_matrix *w, int64_t n,
		       const struct spp_run_opts *o, int dense_ok, struct layer_bufs *B,
		       struct spp_run *r, struct spp_encoded *en, int *encoded,
		       struct item_ctx *ctx, struct spp_bench_item *item)
{
	struct spp_exec ex = {o->threads, o->isa, NULL};
	struct spp_error e2 = {0};
	int64_t m = w->m, wi, wj;
	double worst;
	int rc = f->encode(w, o->threads, en, &e2);

	if (rc == SPP_E_UNSUPPORTED) {
		set_status(r, SPP_RUN_NOT_APPLICABLE, "%s", e2.msg[0] ? e2.msg : "format cannot hold this layer");
		return 0;
	}
	if (rc) {
		set_status(r, SPP_RUN_FAILED, "encode failed: %s", e2.msg[0] ? e2.msg : spp_status_message(rc));
		return 0;
	}
	*encoded = 1;
	r->nnz_imbalance = nnz_imbalance(en);
	if (!dense_ok) {
		set_status(r, SPP_RUN_FAILED, "no verified dense result to check against");
		return 0;
	}
	/* NaN everywhere: an output the kernel does not write fails the check */
	for (int64_t i = 0; i < m * n; i++)
		B->y[i] = NAN;
	rc = f->spmm(en, B->x, B->y, n, &ex);
	if (rc) {
		set_status(r, SPP_RUN_FAILED, "kernel failed: %s", spp_status_message(rc));
		return 0;
	}
	r->max_error = NAN;
	if (!spp_run_check(B->y, B->yd, B->bound, m, n, o->verify_rtol, &worst, &wi, &wj)) {
		r->max_error = worst;
		set_status(r, SPP_RUN_FAILED,
			   "output differs from dense by %.3g x (|W|.|X|) at (%lld, %lld), bound %.3g",
			   worst, (long long)wi, (long long)wj, o->verify_rtol);
		return 0;
	}
	r->max_error = worst;
	*ctx = (struct item_ctx){f, NULL, en, w, B->x, B->y, n, {o->threads, o->isa, NULL}};
	*item = (struct spp_bench_item){item_run, ctx, o->threads, 0, NULL};
	return 1;
}

/* What the figures of a layer's runs need to know of it. */
struct layer_facts {
	const struct spp_matrix *w;
	int64_t n;
	uint64_t nnz;
	double theoretical_speedup;
	const char *name;
};

/*
 * The figures of timed item i, run `run` of out (0: the dense baseline;
 * en its encoding otherwise) from its result against the baseline's
 * median t_dense: time, rates, counted or simulated cache figures.
 * Returns 0 or SPP_E_NOMEM.
 */
static int item_figures(const struct layer_facts *L, const struct spp_run_opts *o,
			struct spp_layer_runs *out, int run, const struct spp_encoded *en,
			const struct spp_bench_result *res, double t_dense, struct spp_run_count *cc,
			int i, struct layer_bufs *B, struct spp_error *err)
{
	int64_t m = L->w->m, k = L->w->k, n = L->n;
	struct spp_run *r = &out->runs[run];
	struct spp_run_inputs in = {
		m, k, n, L->nnz, run == 0 ? 4.0 * (double)m * (double)k : (double)en->bytes,
		L->theoretical_speedup, &o->bw, res->time.median, t_dense, 0,
	};
	struct spp_error e2 = {0};

	/* the baseline does all the dense FLOPs: its rate is theirs, its ideal 1 */
	if (run == 0) {
		in.flops = 2.0 * (double)m * (double)k * (double)n;
		in.theoretical_speedup = 1;
	}
	/* a kernel that skips X's zeros does the combined FLOPs' work */
	if (spp_run_act_kernel(r->format)) {
		in.flops = out->act.flops_combined;
		in.theoretical_speedup = out->act.combined_speedup;
	}
	r->time = res->time;
	spp_run_figures(&in, r);
	if (res->imbalance > 0)
		r->imbalance = res->imbalance;
	spp_run_count_read(cc, i, o->cache_line > 0 ? o->cache_line : 64, r);
	/* the simulator replays the traced copy of each verified CPU format */
	if (run > 0 && o->counters && o->sim_geometry && strcmp(o->counters->name, "sim") == 0 &&
	    spp_sim_replay(o->sim_geometry, o->threads, o->sim_budget, en, B->x, B->y, n,
			   &r->cache, &e2) == SPP_E_NOMEM)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for the cache simulator",
				     L->name);
	spp_run_cache_dram(r);
	return SPP_OK;
}

/*
 * The fastest of the nd dense items that computed right is the baseline,
 * run 0 (*best: its item, -1 none); each candidate's time goes to
 * out->dense and the shape's choice is remembered. 0 or SPP_E_NOMEM.
 */
static int choose_baseline(struct spp_layer_runs *out, const struct spp_run_opts *o,
			   const struct item_ctx *ctx, const struct spp_bench_result *res,
			   const int *dense_of, int nd, int *best, struct spp_error *err)
{
	int rc;

	*best = -1;
	for (int i = 0; i < nd; i++) {
		if (!out->dense_shared)
			out->dense.t[dense_of[i]].time = res[i].time;
		if (*best < 0 || res[i].time.median < res[*best].time.median)
			*best = i;
	}
	if (!out->dense_shared && (rc = spp_dense_choose(&out->dense, o->dense_memo, err)))
		return rc;
	if (*best >= 0) {
		snprintf(out->runs[0].candidate, sizeof(out->runs[0].candidate), "%s", ctx[*best].dense->name);
		spp_dense_describe(ctx[*best].dense, out->runs[0].library, sizeof(out->runs[0].library));
	}
	return SPP_OK;
}

int spp_matrix_measure(const struct spp_matrix *wm, int64_t n, uint64_t nnz,
		       double theoretical_speedup, const char *name,
		       const struct spp_format_ops *const *formats, int nformats,
		       const struct spp_run_opts *o, struct spp_layer_runs *out,
		       struct spp_error *err)
{
	int64_t m = wm->m, k = wm->k;
	struct layer_bufs B = {0};
	struct spp_encoded *enc = NULL;
	struct spp_bench_item *items = NULL;
	struct item_ctx *ctx = NULL;
	struct spp_bench_result *res = NULL;
	int *run_of = NULL, *encoded = NULL, *dense_of = NULL, nitems = 0, nd = 0, rc, dense_ok;
	struct spp_dense_set local, *set = o->dense;
	struct spp_matrix w = *wm, wa = {m, k, NULL};
	struct spp_bench_opts bo = o->bench;
	struct flush_ctx fc;
	struct spp_error e2;
	struct spp_run_count cc = {0};
	struct layer_facts L = {wm, n, nnz, theoretical_speedup, name};
	int best = -1;

	rc = runs_init(out, formats, nformats, err);
	if (rc)
		return rc;
	if (!set) {
		rc = spp_dense_set_open(&local, NULL, o->isa, err);
		if (rc) {
			spp_layer_runs_release(out);
			return rc;
		}
		set = &local;
	}
	rc = prepare(m, k, n, name, o, &B, err);
	if (!rc)
		rc = spp_run_act_figures(&w, B.x, n, o, &out->act, err);
	if (rc)
		goto fail;
	spp_run_nm_along_m(&w, out->nm_along_m);
	for (int64_t i = 0; i < m * k; i++)
		B.wabs[i] = fabsf(w.v[i]);
	wa.v = B.wabs;

	enc = calloc((size_t)nformats + 1, sizeof(*enc));
	items = calloc((size_t)nformats + SPP_DENSE_MAX, sizeof(*items));
	ctx = calloc((size_t)nformats + SPP_DENSE_MAX, sizeof(*ctx));
	res = calloc((size_t)nformats + SPP_DENSE_MAX, sizeof(*res));
	run_of = calloc((size_t)nformats + SPP_DENSE_MAX, sizeof(*run_of));
	dense_of = calloc((size_t)nformats + SPP_DENSE_MAX, sizeof(*dense_of));
	encoded = calloc((size_t)nformats + 1, sizeof(*encoded));
	if (!enc || !items || !ctx || !res || !run_of || !dense_of || !encoded) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
		goto fail;
	}
	dense_ok = dense_items(set, o, &w, &wa, n, name, &B, out, ctx, items, dense_of, &nd);
	/* run 0 (the baseline) is every dense item's; dense_of says which candidate */
	nitems = nd;
	for (int f = 0; f < nformats; f++)
		if (format_item(formats[f], &w, n, o, dense_ok, &B, &out->runs[f + 1], &enc[f],
				&encoded[f], &ctx[nitems], &items[nitems])) {
			run_of[nitems] = f + 1;
			dense_of[nitems] = -1;
			nitems++;
		}
	rc = SPP_OK;
	/* the GPU's runs check against the same verified dense result */
	if ((o->backends & SPP_BACKEND_CUDA) && dense_ok) {
		rc = spp_run_cuda(&w, B.x, n, B.yd, B.bound, nnz, theoretical_speedup, o, out, &e2);
		if (rc == SPP_E_NOMEM) {
			*err = e2;
			goto fail;
		}
		rc = SPP_OK; /* no device: analyze said so before the first layer */
	}
	if (nitems == 0)
		goto done;

	fc.o = o;
	fc.ndense = nd;
	fc.r[0] = (struct spp_range){w.v, (size_t)(m * k) * sizeof(float)};
	fc.r[1] = (struct spp_range){B.x, (size_t)(k * n) * sizeof(float)};
	fc.r[2] = (struct spp_range){B.y, (size_t)(m * n) * sizeof(float)};
	if (o->cold) {
		bo.before = before_run;
		bo.before_ctx = &fc;
	}
	if (spp_run_count_hardware(o->counters)) {
		rc = spp_run_count_open(&cc, run_of, nitems, o, err);
		if (rc)
			goto fail;
		bo.count_start = spp_run_count_start;
		bo.count_stop = spp_run_count_stop;
		bo.count_ctx = &cc;
	}
	rc = spp_bench_run(items, nitems, &bo, res, err);
	if (rc)
		goto fail;
	rc = choose_baseline(out, o, ctx, res, dense_of, nd, &best, err);
	if (rc)
		goto fail;
	for (int i = 0; i < nitems; i++) {
		if (run_of[i] == 0 && i != best)
			continue; /* a slower candidate: its time is in out->dense */
		rc = item_figures(&L, o, out, run_of[i], run_of[i] ? &enc[run_of[i] - 1] : NULL, &res[i],
				  best >= 0 ? res[best].time.median : 0, &cc, i, &B, err);
		if (rc)
			goto fail;
	}
	spp_run_weight_only(out);
	goto done;
fail:
	spp_layer_runs_release(out);
done:
	for (int f = 0; encoded && f < nformats; f++)
		if (encoded[f])
			formats[f]->release(&enc[f]);
	spp_run_count_close(&cc, nitems);
	free(enc), free(items), free(ctx), free(res), free(run_of), free(dense_of), free(encoded);
	if (set == &local)
		spp_dense_set_close(&local);
	bufs_free(&B);
	return rc;
}
