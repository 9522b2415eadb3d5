#include "profiler/plausible.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int timed(const struct spp_run *r)
{
	return r->status == SPP_RUN_OK && r->time.repeats > 0 && r->time.median > 0;
}

static double peak_gflops(const struct spp_analysis *a)
{
	const struct spp_machine *m = a->machine;

	return m && m->have_calibration && m->cal.threads == a->record.settings.threads ? m->cal.peak_gflops : 0;
}

void spp_baseline_check(const struct spp_analysis *a, int i, struct spp_baseline_check *out)
{
	const struct spp_layer *l = &a->layers[i];
	const struct spp_run *d;
	struct spp_bw_model bw;
	double flops, bytes, peak = peak_gflops(a), gbs;

	memset(out, 0, sizeof(*out));
	out->intensity = out->ridge = out->share = NAN;
	out->level = -1;
	if (!a->runs || !a->machine || a->runs[i].nruns == 0)
		return;
	d = &a->runs[i].runs[0];
	if (!timed(d))
		return;
	spp_bw_model_init(&bw, a->machine, a->record.settings.threads, a->record.settings.cold);
	flops = 2.0 * (double)l->view.m * (double)l->view.k * (double)l->n;
	bytes = 4.0 * ((double)l->view.m * (double)l->view.k + (double)l->view.k * (double)l->n +
		       (double)l->view.m * (double)l->n);
	out->intensity = flops / bytes;
	out->level = (int)spp_bw_level_of(bw.cap, bytes, bw.cold);
	gbs = bw.gbs[out->level];
	if (!(peak > 0) || !(gbs > 0) || d->time.median < SPP_PLAUSIBLE_MIN_NS)
		return;
	out->known = 1;
	out->ridge = peak / gbs;
	out->compute_bound = out->intensity > out->ridge;
	if (out->compute_bound)
		out->share = flops / d->time.median / peak;
	else
		out->share = bytes / d->time.median / gbs;
	out->weak = out->share < (out->compute_bound ? SPP_PLAUSIBLE_COMPUTE : SPP_PLAUSIBLE_MEMORY);
}

void spp_baseline_summarize(const struct spp_analysis *a, struct spp_baseline_summary *out)
{
	double flops = 0, ns = 0;

	memset(out, 0, sizeof(*out));
	out->gflops = out->share = NAN;
	out->peak_gflops = peak_gflops(a);
	for (int i = 0; a->runs && i < a->nlayers; i++) {
		const struct spp_layer *l = &a->layers[i];
		const struct spp_run *d = a->runs[i].nruns ? &a->runs[i].runs[0] : NULL;
		struct spp_baseline_check c;
		int w;

		if (!d || !timed(d))
			continue;
		out->layers++;
		flops += 2.0 * (double)l->view.m * (double)l->view.k * (double)l->n;
		ns += d->time.median;
		spp_baseline_check(a, i, &c);
		out->weak += c.weak && !a->runs[i].dense_shared;
		for (w = 0; w < out->nwins; w++)
			if (strcmp(out->wins[w].name, d->candidate) == 0)
				break;
		if (w == out->nwins) {
			if (w == SPP_DENSE_MAX)
				continue;
			out->nwins++;
			snprintf(out->wins[w].name, sizeof(out->wins[w].name), "%s", d->candidate);
			snprintf(out->wins[w].library, sizeof(out->wins[w].library), "%s", d->library);
		}
		out->wins[w].layers++;
	}
	if (ns > 0) {
		out->gflops = flops / ns;
		if (out->peak_gflops > 0)
			out->share = out->gflops / out->peak_gflops;
	}
}

/* Why a run may beat the FLOP ideal: the baseline, a cache level, or neither. */
static void cause(const struct spp_analysis *a, int i, const struct spp_run *r, char *buf, size_t n)
{
	const struct spp_run *d = &a->runs[i].runs[0];
	struct spp_baseline_check c;
	struct spp_bw_model bw;
	enum spp_bw_level lr, ld;

	spp_baseline_check(a, i, &c);
	if (c.known && c.weak) {
		snprintf(buf, n, "looks like a weak baseline: dense (%s) reaches %.0f%% of the calibrated %s",
			 d->library, 100 * c.share, c.compute_bound ? "FMA peak" : "read bandwidth");
		return;
	}
	if (!a->machine) {
		snprintf(buf, n, "no machine description to tell why");
		return;
	}
	spp_bw_model_init(&bw, a->machine, a->record.settings.threads, a->record.settings.cold);
	lr = spp_bw_level_of(bw.cap, r->bytes_moved, bw.cold);
	ld = spp_bw_level_of(bw.cap, d->bytes_moved, bw.cold);
	if (lr < ld) {
		snprintf(buf, n, "looks like a cache effect: its working set (%.0f KiB) fits in %s, dense's "
			 "(%.0f KiB) only in %s", r->bytes_moved / 1024, spp_bw_level_name(lr),
			 d->bytes_moved / 1024, spp_bw_level_name(ld));
		return;
	}
	snprintf(buf, n, "neither a weak baseline%s nor a smaller cache level explains it: check the "
		 "spread (p10-p90 %.3g-%.3g us against dense's %.3g-%.3g us)",
		 c.known ? "" : " (not checked: no calibration)", r->time.p10 / 1e3, r->time.p90 / 1e3,
		 d->time.p10 / 1e3, d->time.p90 / 1e3);
}

/*
 * Layer i's runs whose speedup interval is wider than +-SPP_PLAUSIBLE_CI_HALF
 * of the speedup: one warning naming them, for the text to say which layers
 * to measure again on a quieter machine or with a larger budget.
 */
static int unstable(struct spp_analysis *a, int i, struct spp_error *err)
{
	const struct spp_layer_runs *lr = &a->runs[i];
	char list[400] = "";
	size_t len = 0;

	for (int r = 1; r < lr->nruns && len < sizeof(list); r++) {
		const struct spp_run *run = &lr->runs[r];

		if (timed(run) && isfinite(run->speedup_ci_low) && isfinite(run->speedup_ci_high) &&
		    run->speedup_ci_high - run->speedup_ci_low > 2 * SPP_PLAUSIBLE_CI_HALF * run->speedup)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %.2fx (%.2f-%.2f)",
						len ? ", " : "", run->format, run->speedup,
						run->speedup_ci_low, run->speedup_ci_high);
	}
	if (!list[0])
		return SPP_OK;
	return spp_analysis_warn(a, err, SPP_WARN_UNSTABLE, "'%s': unstable, the 95%% interval wider than "
				 "+-%.0f%%: %s", a->layers[i].name, 100 * SPP_PLAUSIBLE_CI_HALF, list);
}

/*
 * Layer i's rounds that stayed disturbed (too few clean ones within twice
 * the budget, so kept): one warning, the figures being no clean ones.
 * Rounds discarded and re-measured leave clean figures and no warning.
 */
static int disturbed(struct spp_analysis *a, int i, struct spp_error *err)
{
	const struct spp_layer_runs *lr = &a->runs[i];
	const struct spp_run *r = lr->nruns > 0 ? &lr->runs[0] : NULL;

	if (!r || !timed(r) || !(r->rounds_disturbed > 0))
		return SPP_OK;
	return spp_analysis_warn(a, err, SPP_WARN_DISTURBED, "'%s': %.0f of its %d rounds were disturbed (the "
				 "dense baseline %.0f%% slower than its usual rounds, steal, or other tasks "
				 "running) and no clean ones replaced them within twice the budget: its "
				 "figures are not clean; measure again on a quiet machine",
				 a->layers[i].name, r->rounds_disturbed, r->time.repeats,
				 100 * (SPP_ROUND_SLOW - 1));
}

/* The machine while the runs were timed (the session's record): a warning when it was not quiet. */
static int busy(struct spp_analysis *a, struct spp_error *err)
{
	const struct spp_run_settings *rs = &a->record.settings;
	double cpus = a->machine && a->machine->logical_cpus > 0 ? a->machine->logical_cpus : NAN;
	double load = rs->load_end > rs->load_start ? rs->load_end : rs->load_start;

	if (!(rs->steal_share > SPP_PLAUSIBLE_STEAL) && !(load > cpus + SPP_PLAUSIBLE_LOAD_SLACK))
		return SPP_OK;
	return spp_analysis_warn(a, err, SPP_WARN_MACHINE_BUSY, "the machine was busy while timing: steal "
				 "%.1f%% of CPU time, load %.2f to %.2f on %.0f CPUs; the figures may move "
				 "between runs", 100 * rs->steal_share, rs->load_start, rs->load_end, cpus);
}

int spp_plausibility_warnings(struct spp_analysis *a, struct spp_error *err)
{
	int rc = busy(a, err), unchecked = 0;

	for (int i = 0; a->runs && i < a->nlayers && !rc; i++) {
		const struct spp_layer_runs *lr = &a->runs[i];
		struct spp_baseline_check c;
		char why[300];

		rc = unstable(a, i, err);
		if (!rc)
			rc = disturbed(a, i, err);
		for (int r = 1; r < lr->nruns && !rc; r++) {
			const struct spp_run *run = &lr->runs[r];

			if (!timed(run) || !(run->efficiency > SPP_PLAUSIBLE_EFFICIENCY))
				continue;
			cause(a, i, run, why, sizeof(why));
			rc = spp_analysis_warn(a, err, SPP_WARN_EFFICIENCY_ABOVE_IDEAL, "'%s': %s%s%s: efficiency %.2f is above the FLOP ideal "
					       "(speedup %.2fx where the ideal is %.2fx): %s", a->layers[i].name,
					       strcmp(run->backend, "cpu") ? run->backend : "",
					       strcmp(run->backend, "cpu") ? ":" : "", run->format, run->efficiency,
					       run->speedup, run->speedup / run->efficiency, why);
		}
		if (rc || lr->nruns == 0 || !timed(&lr->runs[0]) || lr->dense_shared)
			continue;
		spp_baseline_check(a, i, &c);
		unchecked += !c.known && lr->runs[0].time.median >= SPP_PLAUSIBLE_MIN_NS;
		if (c.known && c.weak)
			rc = spp_analysis_warn(
				a, err, SPP_WARN_DENSE_BASELINE_WEAK, "'%s' (%lldx%lldx%lld): the dense baseline %s reaches %.0f%% of the calibrated %s "
				"on a %s shape (%.2f FLOP/B, ridge %.2f FLOP/B at %s): the speedups against it "
				"may be inflated", a->layers[i].name, (long long)a->layers[i].view.m,
				(long long)a->layers[i].view.k, (long long)a->layers[i].n, lr->runs[0].library,
				100 * c.share, c.compute_bound ? "FMA peak" : "read bandwidth",
				c.compute_bound ? "compute-bound" : "memory-bound", c.intensity, c.ridge,
				spp_bw_level_name((enum spp_bw_level)c.level));
	}
	if (!rc && unchecked)
		rc = spp_analysis_warn(a, err, SPP_WARN_DENSE_BASELINE_UNCHECKED, "dense baseline: not checked against the roofline on %d shape%s: "
				       "no calibration for %d thread%s (run 'spprof calibrate')", unchecked,
				       unchecked == 1 ? "" : "s", a->record.settings.threads,
				       a->record.settings.threads == 1 ? "" : "s");
	return rc;
}
