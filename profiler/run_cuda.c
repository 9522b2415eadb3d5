/*
 * The CUDA runs of a layer (profiler/run_cuda.h): every entry of the CUDA
 * table opened on the same W and X, checked against the CPU's result,
 * then the verified ones timed in interleaved rounds with CUDA events, as
 * the CPU runs are (profiler/measure.h's warm-up, repeat, budget).
 */
#include "profiler/run_cuda.h"
#include "profiler/device.h"
#include "profiler/run_dense.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels/cuda/device.h"

#if HAVE_CUDA
#include "counters/cupti.h"
#include "kernels/cuda/formats.h"
#include "kernels/cuda/host.h"
#include "kernels/cuda/measure.h"

struct layer {
	const struct spp_matrix *w;
	const float *x, *yd, *bound;
	int64_t n;
	uint64_t nnz;
	double theoretical_speedup;
	const struct spp_run_opts *o;
	float *y;              /* a checked run's output (host) */
	float *ref16;          /* fp16-rounded reference, made on first use */
	int ref16_rc;          /* its status once made; its reason in ref16_why */
	char ref16_why[256];
};

/* The rounded-input reference of precision p (fp16 only in the table today). */
static int reference(struct layer *L, const char *p, const float **ref, struct spp_error *err)
{
	struct spp_error e2 = {0};

	if (strcmp(p, "fp16") != 0)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "no %s reference", p);
	if (!L->ref16 && !L->ref16_rc) {
		size_t len = (size_t)(L->w->m * L->n > 0 ? L->w->m * L->n : 1);
		double *ref = malloc(sizeof(double) * len);

		L->ref16 = malloc(sizeof(float) * len);
		if (!ref || !L->ref16) {
			free(ref);
			free(L->ref16);
			L->ref16 = NULL;
			return spp_error_set(err, SPP_E_NOMEM, "cuda: fp16 reference of %lld x %lld",
					     (long long)L->w->m, (long long)L->n);
		}
		L->ref16_rc = spp_cuda_reference(L->w, L->x, L->n, p, ref, &e2);
		/* the check reads fp32, as every other run's: 2^-24 is far inside the fp16 bound */
		for (size_t i = 0; i < len && !L->ref16_rc; i++)
			L->ref16[i] = (float)ref[i];
		free(ref);
		if (L->ref16_rc == SPP_E_NOMEM) {
			free(L->ref16);
			L->ref16 = NULL;
			L->ref16_rc = 0;
			*err = e2;
			return SPP_E_NOMEM;
		}
		snprintf(L->ref16_why, sizeof(L->ref16_why), "%s", e2.msg);
	}
	if (L->ref16_rc)
		return spp_error_set(err, L->ref16_rc, "%s", L->ref16_why);
	*ref = L->ref16;
	return 0;
}

/*
 * Open entry f on the layer, run it once and check it against the CPU's
 * dense result (a reduced-precision entry that rounds its inputs: against
 * the CPU product of the rounded inputs); r says how it went. 1 when c is
 * open and verified, 0 when not, -1 on SPP_E_NOMEM (err).
 */
static int open_checked(struct layer *L, const struct spp_device *dev, const struct spp_cuda_format *f,
			struct spp_device_case *c, struct spp_run *r, struct spp_error *err)
{
	const float *ref = NULL;
	struct spp_error e2 = {0};
	struct spp_device_layer dl = {L->w, L->x, L->n, L->nnz, L->theoretical_speedup};
	struct spp_device_check chk = {L->yd, L->bound, spp_cuda_precision_rtol(f->precision, L->o->verify_rtol),
				       "the CPU reference", L->y};
	int rc;

	if (spp_cuda_precision_rounds(f->precision)) {
		rc = reference(L, f->precision, &ref, &e2);
		if (rc == SPP_E_NOMEM) {
			*err = e2;
			return -1;
		}
		if (rc) {
			spp_run_set_status(r, SPP_RUN_NOT_APPLICABLE, "%.250s", e2.msg);
			return 0;
		}
		chk.ref = ref;
		chk.against = "the fp16-rounded reference";
	}
	if (!spp_device_open_checked(dev, f, &dl, &chk, c, r))
		return 0;
	if (!ref && strcmp(f->precision, "fp32") != 0)
		snprintf(r->reason, sizeof(r->reason), "checked against the fp32 result within %.3g x (|W|.|X|)",
			 chk.rtol);
	else if (ref)
		snprintf(r->reason, sizeof(r->reason),
			 "checked against the CPU product of the fp16-rounded W and X within %.3g x (|W|.|X|)",
			 chk.rtol);
	return 1;
}

/* The profiled launch of a case (ctx): queued only, CUPTI waits for it. */
static int launch_case(void *ctx, struct spp_error *err)
{
	return spp_cuda_case_run(ctx, err);
}

/* CUPTI figures of each verified case, one profiled launch each. */
static void gpu_figures(struct spp_device_case *cases, int *open, struct spp_run *runs, int count)
{
	struct spp_cupti *s = NULL;
	struct spp_error err = {0};

	if (spp_cupti_open(&s, &err)) {
		for (int i = 0; i < count; i++)
			if (open[i])
				snprintf(runs[i].gpu.note, sizeof(runs[i].gpu.note), "%.*s",
					 (int)sizeof(runs[i].gpu.note) - 1, err.msg);
		return;
	}
	for (int i = 0; i < count; i++) {
		struct spp_cupti_figures g;

		if (!open[i])
			continue;
		if (spp_cupti_measure(s, launch_case, spp_device_cuda_case(&cases[i]), &g, &err)) {
			snprintf(runs[i].gpu.note, sizeof(runs[i].gpu.note), "%.*s",
				 (int)sizeof(runs[i].gpu.note) - 1, err.msg);
			continue;
		}
		snprintf(runs[i].gpu.source, sizeof(runs[i].gpu.source), "cupti");
		runs[i].gpu.dram_read_bytes = g.dram_read_bytes;
		runs[i].gpu.dram_write_bytes = g.dram_write_bytes;
		runs[i].gpu.l2_hit_rate = g.l2_hit_rate;
		runs[i].gpu.l1_hit_rate = g.l1_hit_rate;
		runs[i].gpu.achieved_occupancy = g.achieved_occupancy;
		runs[i].gpu.sm_active_imbalance = g.sm_active_imbalance;
		runs[i].gpu.branch_efficiency = g.branch_efficiency;
		snprintf(runs[i].gpu.note, sizeof(runs[i].gpu.note), "%s", g.note);
	}
	spp_cupti_close(s);
}

/*
 * The fastest timed vendor baseline (cuBLAS, cuBLASLt) of a precision:
 * the dense baseline every entry of that precision is compared with
 * (DESIGN section 4); -1 when none ran.
 */
static int fastest_baseline(const struct spp_cuda_format *const *order, const int *open,
			    const struct spp_run *runs, int count, const char *precision)
{
	int want[64];

	for (int j = 0; j < count && j < 64; j++)
		want[j] = open[j] && order[j]->baseline && strcmp(order[j]->precision, precision) == 0;
	return spp_fastest_run(runs, want, count < 64 ? count : 64);
}

struct flush_ctx {
	struct spp_cuda_flush *fl;
	int runs;
};

static void flush_before(void *ctx, int item)
{
	struct flush_ctx *f = ctx;

	(void)item;
	spp_cuda_flush_run(f->fl, f->runs++);
}

/*
 * Time the open cases in the harness's interleaved rounds (warm-up,
 * repeat or budget, the budget counting device time); a case whose launch
 * fails is closed with the reason in its run, the others go on.
 */
static int time_cases(const struct spp_run_opts *o, struct spp_device_case *cases, int *open,
		      struct spp_run *runs, int count, struct spp_cuda_flush *fl,
		      struct spp_error *err)
{
	struct spp_device_case **pc = calloc((size_t)count, sizeof(*pc));
	struct spp_bench_result *res = calloc((size_t)count, sizeof(*res));
	int *of = calloc((size_t)count, sizeof(*of));
	struct flush_ctx fc = {fl, 0};
	struct spp_bench_opts bo = o->bench;
	int n = 0, rc;

	if (!pc || !res || !of) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: timing %d entries", count);
		goto out;
	}
	for (int i = 0; i < count; i++)
		if (open[i]) {
			pc[n] = &cases[i];
			of[n++] = i;
		}
	bo.schedule = SPP_SCHED_INTERLEAVED;
	bo.before = fl->buf ? flush_before : NULL;
	bo.before_ctx = &fc;
	bo.count_start = bo.count_stop = NULL;
	bo.drop_failed = 1;
	bo.budget_run_time = 1;
	rc = spp_device_time(pc, n, &bo, res, err);
	for (int j = 0; !rc && j < n; j++) {
		int i = of[j];

		if (!res[j].rc) {
			runs[i].time = res[j].time;
			continue;
		}
		spp_run_set_status(&runs[i], SPP_RUN_FAILED, "%s failed: %.200s",
				   res[j].failed_warmup ? "warm-up" : "timed run", cases[i].e.msg);
		spp_device_close(&cases[i]);
		open[i] = 0;
	}
out:
	free(pc);
	free(res);
	free(of);
	return rc;
}

/* The figures of each open case: each against the fastest dense GEMM of its own precision. */
static void case_figures(const struct layer *L, const struct spp_cuda_format *const *order,
			 const struct spp_device_case *cases, const int *open, struct spp_run *runs,
			 int count)
{
	struct spp_device_layer dl = {L->w, L->x, L->n, L->nnz, L->theoretical_speedup};

	for (int i = 0; i < count; i++) {
		int base;

		if (!open[i])
			continue;
		base = fastest_baseline(order, open, runs, count, order[i]->precision);
		if (base >= 0 && !order[i]->baseline && strcmp(order[i]->precision, "fp32") != 0) {
			size_t len = strlen(runs[i].reason);

			snprintf(runs[i].reason + len, sizeof(runs[i].reason) - len, "%sspeedup against %s",
				 len ? "; " : "", order[base]->key);
		}
		/* the calibrated levels are the CPU's: bw_util stays null on the GPU */
		spp_device_figures(&dl, &cases[i], NULL, base >= 0 ? runs[base].time.median : 0,
				   i == 0 ? SPP_WORK_DENSE : SPP_WORK_SPARSE, 0, 0, &runs[i]);
	}
}

/* The dense run is the fastest fp32 baseline (cuBLAS SGEMM or cuBLASLt's pick). */
static void choose_dense(const struct spp_cuda_format *const *order, const int *open,
			 struct spp_run *runs, int count)
{
	int best32 = fastest_baseline(order, open, runs, count, "fp32");

	if (best32 > 0) {
		runs[0].time = runs[best32].time;
		runs[0].max_error = runs[best32].max_error;
	}
	if (best32 >= 0) {
		snprintf(runs[0].candidate, sizeof(runs[0].candidate), "%s", order[best32]->key);
		snprintf(runs[0].library, sizeof(runs[0].library), "%s (fastest fp32 vendor GEMM)",
			 order[best32]->key);
	}
}

/* Every entry of the table opened and checked, the GPU's dense baseline first. */
static int open_all(struct layer *L, const struct spp_device *dev, const struct spp_cuda_format **order,
		    int count, struct spp_device_case *cases, int *open, struct spp_run *runs,
		    struct spp_error *err)
{
	for (int i = 0; i < count; i++) {
		struct spp_run *r = &runs[i];

		spp_run_init(r, "cuda", i == 0 ? "dense" : order[i]->key);
		snprintf(r->precision, sizeof(r->precision), "%s", order[i]->precision);
		spp_gpu_figures_init(&r->gpu);
		open[i] = open_checked(L, dev, order[i], &cases[i], r, err);
		if (open[i] < 0) {
			open[i] = 0;
			return SPP_E_NOMEM;
		}
		/* the dense run is the whole W: no partition of non-zeros */
		if (i == 0)
			r->nnz_imbalance = NAN;
	}
	return SPP_OK;
}

static int run_all(struct layer *L, struct spp_layer_runs *out, struct spp_error *err)
{
	const struct spp_run_opts *o = L->o;
	const struct spp_cuda_format *order[64];
	const struct spp_device dev = {&spp_device_cuda, NULL};
	struct spp_device_case *cases = NULL;
	struct spp_run *runs = NULL, *grown;
	int *open = NULL, count = 0, rc = 0;
	struct spp_cuda_flush fl = {NULL, 0};

	/* the GPU's dense baseline first, then the table's order */
	order[count++] = spp_cuda_format_find("cublas_dense");
	for (int i = 0; spp_cuda_formats[i] && count < 64; i++)
		if (spp_cuda_formats[i] != order[0])
			order[count++] = spp_cuda_formats[i];
	runs = calloc((size_t)count, sizeof(*runs));
	cases = calloc((size_t)count, sizeof(*cases));
	open = calloc((size_t)count, sizeof(*open));
	L->y = malloc(sizeof(float) * (size_t)(L->w->m * L->n > 0 ? L->w->m * L->n : 1));
	if (!runs || !cases || !open || !L->y) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: runs of a %lld x %lld layer",
				   (long long)L->w->m, (long long)L->w->k);
		goto out;
	}
	if ((rc = open_all(L, &dev, order, count, cases, open, runs, err)))
		goto out;
	if (o->cold)
		spp_cuda_flush_open(&fl);
	if ((rc = time_cases(o, cases, open, runs, count, &fl, err)))
		goto out;
	choose_dense(order, open, runs, count);
	case_figures(L, order, cases, open, runs, count);
	if (o->cupti)
		gpu_figures(cases, open, runs, count);
	else
		for (int i = 0; i < count; i++)
			if (open[i])
				snprintf(runs[i].gpu.note, sizeof(runs[i].gpu.note), "CUPTI not asked for");
	grown = realloc(out->runs, sizeof(*grown) * (size_t)(out->nruns + count));
	if (!grown) {
		rc = spp_error_set(err, SPP_E_NOMEM, "cuda: %d more runs", count);
		goto out;
	}
	out->runs = grown;
	memcpy(out->runs + out->nruns, runs, sizeof(*runs) * (size_t)count);
	out->nruns += count;
out:
	for (int i = 0; cases && i < count; i++)
		spp_device_close(&cases[i]);
	spp_cuda_flush_close(&fl);
	free(runs);
	free(cases);
	free(open);
	free(L->y);
	free(L->ref16);
	return rc;
}
#endif

int spp_run_cuda(const struct spp_matrix *w, const float *x, int64_t n, const float *yd,
		 const float *bound, uint64_t nnz, double theoretical_speedup,
		 const struct spp_run_opts *o, struct spp_layer_runs *out,
		 struct spp_error *err)
{
	struct spp_cuda_probe p;

	/* without HAVE_CUDA the probe says "no CUDA backend in this build" */
	if (!spp_cuda_probe(&p))
		return spp_error_set(err, SPP_E_DEVICE, "%s", p.why);
#if HAVE_CUDA
	{
		struct layer L = {w, x, yd, bound, n, nnz, theoretical_speedup, o, NULL, NULL, 0, ""};

		return run_all(&L, out, err);
	}
#else
	(void)w, (void)x, (void)n, (void)yd, (void)bound, (void)nnz;
	(void)theoretical_speedup, (void)o, (void)out;
	return spp_error_set(err, SPP_E_DEVICE, "no CUDA backend in this build");
#endif
}
