/*
 * The end of `spprof bench`'s report: the dense scaling by threads, the
 * per-case summary, the targets (selected by profiler/bench_result.c) and,
 * in JSON, the whole document.
 */
#include "reports/bench.h"
#include "reports/bench_internal.h"
#include "reports/json_values.h"

#include <math.h>
#include <string.h>

/* One target line: "met" or by how much it is missed; NAN value: not measured. Its JSON object or NULL. */
static cJSON *target(struct spp_bench_out *o, cJSON *arr, const struct spp_bench_target *t)
{
	char v[48], verdict[96];

	if (isfinite(t->value))
		snprintf(v, sizeof(v), t->at_most ? "%.3f" : "%.2fx", t->value);
	else
		snprintf(v, sizeof(v), "none");
	if (!isfinite(t->value))
		snprintf(verdict, sizeof(verdict), "missed (no value)");
	else if (t->met)
		snprintf(verdict, sizeof(verdict), "met");
	else if (t->at_most)
		snprintf(verdict, sizeof(verdict), "missed by %.3f", t->value - t->limit);
	else
		snprintf(verdict, sizeof(verdict), "missed: %.0f%% of the target", 100 * t->value / t->limit);
	if (!o->d.json) {
		fprintf(o->f, "  %-52s %-8s %-8s target %s %-6g %s\n", t->what, v,
			t->format[0] ? t->format : "-", t->at_most ? "<=" : ">=", t->limit, verdict);
		return NULL;
	}
	{
		cJSON *j = cJSON_CreateObject();

		if (!j)
			return NULL;
		cJSON_AddItemToArray(arr, j);
		cJSON_AddStringToObject(j, "target", t->what);
		cJSON_AddItemToObject(j, "value", spp_json_num(t->value));
		cJSON_AddStringToObject(j, "format", t->format);
		cJSON_AddNumberToObject(j, "limit", t->limit);
		cJSON_AddStringToObject(j, "compare", t->at_most ? "<=" : ">=");
		cJSON_AddBoolToObject(j, "met", t->met);
		return j;
	}
}

/* "4.1 GB/s (4% of the LLC probe)": a run's bytes per second against the read probe of its level. */
static void rate_text(const struct spp_run *r, char *b, size_t n)
{
	if (r->bw_level >= 0 && isfinite(r->bw_util))
		snprintf(b, n, "%.1f GB/s (%.0f%% of the %s probe)", r->bandwidth_gbs, 100 * r->bw_util,
			 spp_bw_level_name((enum spp_bw_level)r->bw_level));
	else
		snprintf(b, n, "%.1f GB/s (no probe)", r->bandwidth_gbs);
}

/* A run's rates in JSON: time, bytes and their rate against the probe of their level, GFLOP/s. */
static cJSON *rates_json(cJSON *j, const struct spp_run *r)
{
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "format", r->format);
	cJSON_AddItemToObject(j, "time_ns", spp_json_num(r->time.median));
	cJSON_AddItemToObject(j, "bytes_moved", spp_json_num(r->bytes_moved));
	cJSON_AddItemToObject(j, "bandwidth_gbs", spp_json_num(r->bandwidth_gbs));
	cJSON_AddItemToObject(j, "bw_level", r->bw_level >= 0
				     ? cJSON_CreateString(spp_bw_level_name((enum spp_bw_level)r->bw_level))
				     : cJSON_CreateNull());
	cJSON_AddItemToObject(j, "bw_util", spp_json_num(r->bw_util));
	cJSON_AddItemToObject(j, "gflops", spp_json_num(r->gflops));
	return j;
}

/*
 * What bounds a speedup target (the "bytes per second against the
 * read-bandwidth probe, useful GFLOP/s against the dense kernel's"): its
 * run r and the dense baseline d of the same timing, and the rates r would
 * need at the target, into the target's line or JSON object item. Nothing
 * without the run.
 */
static void bound(struct spp_bench_out *o, cJSON *item, const struct spp_bench_target *tg)
{
	const struct spp_run *r = tg->run, *d = tg->dense;
	const struct spp_run_bound *bp = &tg->bound;
	double limit = tg->limit;
	char t[16], rate[96];

	if (!tg->has_bound)
		return;
	if (!o->d.json) {
		spp_bench_fmt_time(r->time.median, t, sizeof(t));
		rate_text(r, rate, sizeof(rate));
		fprintf(o->f, "      %-7s %7s  %s, %.1f useful GFLOP/s (%.0f%% of dense's)", r->format, t, rate,
			r->gflops, 100 * bp->dense_share);
		if (bp->scale > 1)
			fprintf(o->f, "; %gx needs %.1f GB/s (%.0f%%), %.1f GFLOP/s (%.0f%%)", limit,
				bp->need_gbs, 100 * bp->need_bw_util, bp->need_gflops, 100 * bp->need_dense_share);
		spp_bench_fmt_time(d->time.median, t, sizeof(t));
		rate_text(d, rate, sizeof(rate));
		fprintf(o->f, "\n      %-7s %7s  %s, %.1f GFLOP/s (%.0f%% of the FMA probe)\n", "dense", t, rate,
			d->gflops, 100 * d->peak_share);
		return;
	}
	{
		cJSON *j = rates_json(cJSON_AddObjectToObject(item, "bound"), r), *need, *dj;

		if (!j)
			return;
		cJSON_AddItemToObject(j, "dense_share", spp_json_num(bp->dense_share));
		need = cJSON_AddObjectToObject(j, "at_target");
		if (need) {
			cJSON_AddItemToObject(need, "bandwidth_gbs", spp_json_num(bp->need_gbs));
			cJSON_AddItemToObject(need, "bw_util", spp_json_num(bp->need_bw_util));
			cJSON_AddItemToObject(need, "gflops", spp_json_num(bp->need_gflops));
			cJSON_AddItemToObject(need, "dense_share", spp_json_num(bp->need_dense_share));
		}
		dj = rates_json(cJSON_AddObjectToObject(j, "dense"), d);
		if (dj)
			cJSON_AddItemToObject(dj, "peak_share", spp_json_num(d->peak_share));
	}
}

/* The dense scaling entry of N = c->ns[i] in JSON: the median by threads. */
static int scaling_json(struct spp_bench_out *o, const struct spp_bench_sums *sums,
			cJSON *scal, int i, double scale, struct spp_error *err)
{
	const struct spp_bench_desc *c = &o->d;
	cJSON *j = cJSON_CreateObject(), *arr;

	if (!j)
		return spp_bench_fail_nomem(err);
	cJSON_AddItemToArray(scal, j);
	cJSON_AddNumberToObject(j, "n", (double)c->ns[i]);
	arr = cJSON_AddArrayToObject(j, "dense_time_ns");
	for (int k = 0; arr && k < c->nthreads; k++) {
		const struct spp_bench_sum *x = spp_bench_find_sum(sums, (int)c->threads[k], c->ns[i]);
		cJSON *e = cJSON_CreateObject();

		if (!e)
			break;
		cJSON_AddItemToArray(arr, e);
		cJSON_AddNumberToObject(e, "threads", (double)c->threads[k]);
		cJSON_AddItemToObject(e, "median", spp_json_num(x ? x->dense_ns : NAN));
	}
	cJSON_AddItemToObject(j, "scaling", spp_json_num(scale));
	return SPP_OK;
}

/* The dense scaling row of N = c->ns[i] in text: a time per thread count. */
static void scaling_row(struct spp_bench_out *o, const struct spp_bench_sums *sums, int i,
			double scale)
{
	const struct spp_bench_desc *c = &o->d;
	char t[16];

	fprintf(o->f, "%-6lld", (long long)c->ns[i]);
	for (int k = 0; k < c->nthreads; k++) {
		const struct spp_bench_sum *x = spp_bench_find_sum(sums, (int)c->threads[k], c->ns[i]);

		spp_bench_fmt_time(x ? x->dense_ns : NAN, t, sizeof(t));
		fprintf(o->f, " %10s", t);
	}
	fprintf(o->f, "   %.2fx\n", scale);
}

/* The dense time by N and threads, and its scaling from the first thread count to the last. */
static int dense_scaling(struct spp_bench_out *o, const struct spp_bench_sums *sums,
			 cJSON *scal, struct spp_error *err)
{
	const struct spp_bench_desc *c = &o->d;

	if (!c->json) {
		fprintf(o->f, "\n== summary ==\n\ndense %lldx%lld (median over the sweep's points), "
			      "by threads\n%-6s", (long long)c->size, (long long)c->size, "N");
		for (int i = 0; i < c->nthreads; i++)
			fprintf(o->f, " %8lld T", (long long)c->threads[i]);
		fprintf(o->f, "   scaling (first/last)\n");
	}
	for (int i = 0; i < c->nn; i++) {
		double scale = spp_bench_dense_scaling(sums, (int)c->threads[0],
						       (int)c->threads[c->nthreads - 1], c->ns[i]);

		if (c->json) {
			int rc = scaling_json(o, sums, scal, i, scale, err);

			if (rc)
				return rc;
			continue;
		}
		scaling_row(o, sums, i, scale);
	}
	return SPP_OK;
}

/*
 * v with `decimals` decimals and suffix, then its interval where both ends
 * are known, joined by an en dash: "5.71x (5.50-5.90x)".
 */
static void with_interval(char *b, size_t n, double v, double lo, double hi, int decimals,
			  const char *suffix)
{
	if (isfinite(lo) && isfinite(hi))
		snprintf(b, n, "%.*f%s (%.*f\xe2\x80\x93%.*f%s)", decimals, v, suffix, decimals, lo,
			 decimals, hi, suffix); /* en dash */
	else
		snprintf(b, n, "%.*f%s", decimals, v, suffix);
}

/* The per-case summary in text, then the heading of the targets. */
static void case_sums_text(struct spp_bench_out *o, const struct spp_bench_sums *sums)
{
	fprintf(o->f, "\nper case (spprof's formats, not the peers): best breakeven, CSR breakeven, best speedup at 90%%, 2:4 layer "
		      "(nm2_4 / best), DLMC geo-mean of the best format; an interval where the sweep's rounds gave one\n");
	for (int i = 0; i < sums->nsums; i++) {
		const struct spp_bench_sum *x = &sums->sum[i];
		char be[64], csr[64], at90[64], nm[64];

		with_interval(be, sizeof(be), x->best_be, x->best_be_low, x->best_be_high, 3, "");
		with_interval(csr, sizeof(csr), x->csr_be, x->csr_be_low, x->csr_be_high, 3, "");
		with_interval(at90, sizeof(at90), x->best_90, x->best_90_ci_low, x->best_90_ci_high, 2, "x");
		with_interval(nm, sizeof(nm), x->r24.speedup, x->r24.speedup_ci_low, x->r24.speedup_ci_high, 2,
			      "x");
		fprintf(o->f, "  T %d N %-4lld  best %s (%s)  csr %s  at 0.9 %s (%s)  "
			      "2:4 %s / %.2fx (%s)  DLMC %.2fx\n",
			x->threads, (long long)x->n, be, x->best_be_fmt[0] ? x->best_be_fmt : "-", csr, at90,
			x->best_90_fmt[0] ? x->best_90_fmt : "-", nm, x->best_24,
			x->best_24_fmt[0] ? x->best_24_fmt : "-", x->dlmc_best_geo);
	}
	fprintf(o->f, "\ntargets (1 thread against the dense baseline in the same run; threads: 1 over the most);\n"
		      "under a speedup target, what bounds it: the run's bytes (W as encoded, X, Y) per second\n"
		      "against this run's read probe of the level they fit (DRAM when cold), its useful GFLOP/s\n"
		      "against the dense baseline's, and both as the target needs them; below it, the dense\n"
		      "baseline's own rates\n");
}

/* The per-case summary in JSON, an object per case appended to arr. */
static int case_sums_json(const struct spp_bench_sums *sums, cJSON *arr,
			  struct spp_error *err)
{
	for (int i = 0; i < sums->nsums; i++) {
		const struct spp_bench_sum *x = &sums->sum[i];
		cJSON *j = cJSON_CreateObject();

		if (!j)
			return spp_bench_fail_nomem(err);
		cJSON_AddItemToArray(arr, j);
		cJSON_AddNumberToObject(j, "threads", x->threads);
		cJSON_AddNumberToObject(j, "n", (double)x->n);
		cJSON_AddItemToObject(j, "dense_time_ns", spp_json_num(x->dense_ns));
		cJSON_AddItemToObject(j, "best_breakeven", spp_json_num(x->best_be));
		cJSON_AddItemToObject(j, "best_breakeven_low", spp_json_num(x->best_be_low));
		cJSON_AddItemToObject(j, "best_breakeven_high", spp_json_num(x->best_be_high));
		cJSON_AddStringToObject(j, "best_breakeven_format", x->best_be_fmt);
		cJSON_AddItemToObject(j, "csr_breakeven", spp_json_num(x->csr_be));
		cJSON_AddItemToObject(j, "csr_breakeven_low", spp_json_num(x->csr_be_low));
		cJSON_AddItemToObject(j, "csr_breakeven_high", spp_json_num(x->csr_be_high));
		cJSON_AddItemToObject(j, "best_speedup_at_0.9", spp_json_num(x->best_90));
		cJSON_AddItemToObject(j, "best_speedup_at_0.9_ci_low", spp_json_num(x->best_90_ci_low));
		cJSON_AddItemToObject(j, "best_speedup_at_0.9_ci_high", spp_json_num(x->best_90_ci_high));
		cJSON_AddStringToObject(j, "best_speedup_at_0.9_format", x->best_90_fmt);
		cJSON_AddItemToObject(j, "nm2_4_speedup_on_2_4", spp_json_num(x->r24.speedup));
		cJSON_AddItemToObject(j, "nm2_4_speedup_on_2_4_ci_low", spp_json_num(x->r24.speedup_ci_low));
		cJSON_AddItemToObject(j, "nm2_4_speedup_on_2_4_ci_high", spp_json_num(x->r24.speedup_ci_high));
		cJSON_AddItemToObject(j, "best_speedup_on_2_4", spp_json_num(x->best_24));
		cJSON_AddStringToObject(j, "best_on_2_4_format", x->best_24_fmt);
		cJSON_AddItemToObject(j, "dlmc_best_geomean", spp_json_num(x->dlmc_best_geo));
	}
	return SPP_OK;
}

/*
 * The kernel issue's targets (profiler/bench_result.h selects them): the
 * 1-thread cases with N = 64 and N = 1, and the scaling of csr (at 0.9)
 * and nm2_4 (the 2:4 layer) from 1 thread to the largest count at N = 64.
 */
static void targets(struct spp_bench_out *o, const struct spp_bench_sums *sums, cJSON *tg)
{
	struct spp_bench_target t[SPP_BENCH_MAX_TARGETS];
	int nt = spp_bench_targets(sums, (int)o->d.threads[o->d.nthreads - 1], t);

	for (int i = 0; i < nt; i++)
		bound(o, target(o, tg, &t[i]), &t[i]);
	if (!nt && !o->d.json)
		fprintf(o->f, "  (no 1-thread case with N = 1 or 64 in this run)\n");
}

int spp_bench_out_finish(struct spp_bench_out *o, const struct spp_bench_sums *sums,
			 struct spp_error *err)
{
	const struct spp_bench_desc *c = &o->d;
	cJSON *scal = NULL, *tg = NULL, *summary = NULL;
	int rc;

	if (c->json) {
		scal = cJSON_AddArrayToObject(o->root, "dense_scaling");
		tg = cJSON_AddArrayToObject(o->root, "targets");
		summary = cJSON_AddArrayToObject(o->root, "summary");
		if (!scal || !tg || !summary)
			return spp_bench_fail_nomem(err);
	}
	rc = dense_scaling(o, sums, scal, err);
	if (rc)
		return rc;
	if (!c->json)
		case_sums_text(o, sums);
	else if ((rc = case_sums_json(sums, summary, err)))
		return rc;
	targets(o, sums, tg);
	if (c->json) {
		char *text = spp_json_text_exact(o->root, 1);

		if (!text)
			return spp_bench_fail_nomem(err);
		fputs(text, o->f);
		fputc('\n', o->f);
		cJSON_free(text);
	}
	return SPP_OK;
}
