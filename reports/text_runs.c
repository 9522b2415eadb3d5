/*
 * The text report's runs table: one row per layer x run, with the layer
 * name on its first row only. Cells come from (layer, run) pairs, columns
 * are rows of run_columns.
 */
#include "reports/text_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/safe_text.h"
#include "profiler/run_result.h"
#include "reports/cells.h"

struct run_column {
	const char *title;
	int right;
	void (*cell)(const cJSON *layer, const cJSON *run, struct spp_text_cell *c);
	const struct spp_run_figure *fig; /* a run figure's column: cell NULL */
};

static void rc_layer(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	const cJSON *runs = spp_cell_get(l, "runs");

	if (runs && runs->child == r)
		spp_text_layer_name(l, c);
	else
		spp_text_set(c, "");
}

/* The format, with its backend when not the CPU and its inputs' precision when not fp32. */
static void rc_format(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	const char *be = spp_cell_str(r, "backend"), *p = spp_cell_str(r, "precision");
	const char *fmt = spp_cell_str(r, "format");
	int other = be && strcmp(be, "cpu") != 0, reduced = p && strcmp(p, "fp32") != 0;

	(void)l;
	snprintf(c->text, sizeof(c->text), "%s%s%s%s%s", other ? be : "", other ? ":" : "",
		 fmt ? fmt : "?", reduced ? " " : "", reduced ? p : "");
	c->style = SPP_TEXT_PLAIN;
}

static void rc_status(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	const char *s = spp_cell_str(r, "status");

	(void)l;
	spp_text_set_str(c, s && strcmp(s, "not_applicable") == 0 ? "n/a" : s);
	if (s && strcmp(s, "ok") != 0)
		c->style = SPP_TEXT_DIM;
}

static void rc_time(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "time_ns.median", &v);

	(void)l;
	spp_text_set_time(c, known, v);
}

static void rc_spread(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	struct spp_text_cell a, b;
	double p10 = 0, p90 = 0;
	int known = spp_cell_num(r, "time_ns.p10", &p10) && spp_cell_num(r, "time_ns.p90", &p90);

	(void)l;
	if (!known) {
		spp_text_set_null(c);
		return;
	}
	spp_text_set_time(&a, 1, p10);
	spp_text_set_time(&b, 1, p90);
	snprintf(c->text, sizeof(c->text), "%.40s\xe2\x80\x93%.40s", a.text, b.text);
	c->style = SPP_TEXT_PLAIN;
}

static void rc_repeats(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	double v;

	(void)l;
	if (!spp_cell_num(r, "time_ns.repeats", &v)) {
		spp_text_set_null(c);
		return;
	}
	spp_cell_number(v, c->text, sizeof(c->text));
	c->style = SPP_TEXT_PLAIN;
}

/* The cell of run figure fig (SPP_RUN_FIGURES) of run r, as its row says it is shown. */
static void figure_cell(const struct spp_run_figure *fig, const cJSON *r, struct spp_text_cell *c)
{
	double v = 0, u, hi;
	int known = spp_cell_num(r, fig->key, &v);

	c->style = SPP_TEXT_PLAIN;
	switch (fig->cell) {
	case SPP_CELL_RATIO:
		spp_text_set_ratio(c, known, v);
		/* the speedup with its 95 % interval where the rounds gave one: "1.09x (1.08-1.19)" */
		if (known && strcmp(fig->key, "speedup") == 0 && spp_cell_num(r, "speedup_ci_low", &u) &&
		    spp_cell_num(r, "speedup_ci_high", &hi)) {
			size_t len = strlen(c->text);

			snprintf(c->text + len, sizeof(c->text) - len, " (%.2f\u2013%.2f)", u, hi);
		}
		if (known && v > 1)
			c->style = SPP_TEXT_GOOD;
		return;
	case SPP_CELL_EFFICIENCY:
		/* the efficiency, or the dense baseline's share of the FMA peak */
		known = spp_cell_efficiency(r, c->text, sizeof(c->text));
		break;
	case SPP_CELL_BANDWIDTH:
		/* with the share of the calibrated level it fits */
		if (known && spp_cell_num(r, "bw_util", &u))
			snprintf(c->text, sizeof(c->text), "%.1f (%.0f%%)", v, u * 100);
		else if (known)
			snprintf(c->text, sizeof(c->text), fig->fmt, v);
		break;
	case SPP_CELL_NUMBER:
		if (known)
			snprintf(c->text, sizeof(c->text), fig->fmt, v);
		break;
	}
	if (!known)
		spp_text_set_null(c);
}

/*
 * "4.1%/0.8% perf": block's L1D / LLC miss rates and their source; 0 when
 * it has neither, unless bare ("?/? perf": a source that counts no cache
 * events, shown beside the simulator's).
 */
static int cache_rates(const cJSON *r, const char *block, int bare, char *buf, size_t n)
{
	const cJSON *c = spp_cell_get(r, block);
	const char *src = spp_cell_str(c, "source");
	double l1, llc;
	int k1 = spp_cell_num(c, "l1d_miss_rate", &l1);
	int k2 = spp_cell_num(c, "llc_miss_rate", &llc);
	char a[24] = "?", b[24] = "?";

	if (!src || (!k1 && !k2 && !bare))
		return 0;
	if (k1)
		spp_cell_frac(l1, 100, 1, "%", a, sizeof(a));
	if (k2)
		spp_cell_frac(llc, 100, 1, "%", b, sizeof(b));
	snprintf(buf, n, "%s/%s %.8s", a, b, src);
	return 1;
}

/*
 * L1D / LLC miss rates and where they came from: "4.1%/0.8% sim"; with the
 * simulator beside the counters (cache_sim), both: "4.1%/0.8% perf, 3.9%/0.7% sim".
 */
static void rc_cache(const cJSON *l, const cJSON *r, struct spp_text_cell *c)
{
	char hw[60], sim[60];
	int ks = cache_rates(r, "cache_sim", 0, sim, sizeof(sim)), kh = cache_rates(r, "cache", ks, hw, sizeof(hw));

	(void)l;
	if (!kh && !ks) {
		spp_text_set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), "%s%s%s", kh ? hw : "", kh && ks ? ", " : "", ks ? sim : "");
	c->style = SPP_TEXT_PLAIN;
}

/* The columns before the figures' and after them; the figures' come from SPP_RUN_FIGURES. */
static const struct run_column head_columns[] = {
	{"layer", 0, rc_layer, NULL},
	{"format", 0, rc_format, NULL},
	{"status", 0, rc_status, NULL},
	{"time", 1, rc_time, NULL},
	{"p10\xe2\x80\x93p90", 1, rc_spread, NULL},
	{"runs", 1, rc_repeats, NULL},
};
static const struct run_column tail_columns[] = {
	{"L1D/LLC miss", 1, rc_cache, NULL},
};
#define NHEAD ((int)(sizeof(head_columns) / sizeof(head_columns[0])))
#define NTAIL ((int)(sizeof(tail_columns) / sizeof(tail_columns[0])))
#define MAXRCOL (NHEAD + SPP_RUN_FIGURES_COUNT + NTAIL)

/* The table's columns into cols (room MAXRCOL); their count. */
static int run_columns(struct run_column *cols)
{
	int n = 0;

	for (int i = 0; i < NHEAD; i++)
		cols[n++] = head_columns[i];
	for (int i = 0; i < spp_run_figure_nrows; i++)
		if (spp_run_figure_rows[i].flags & SPP_FIG_TEXT)
			cols[n++] = (struct run_column){spp_run_figure_rows[i].title, 1, NULL,
							&spp_run_figure_rows[i]};
	for (int i = 0; i < NTAIL; i++)
		cols[n++] = tail_columns[i];
	return n;
}

static void column_cell(const struct run_column *col, const cJSON *l, const cJSON *r,
			struct spp_text_cell *c)
{
	if (col->fig)
		figure_cell(col->fig, r, c);
	else
		col->cell(l, r, c);
}

void spp_text_write_runs(const cJSON *report, FILE *f, int color)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l, *r;
	struct run_column cols[MAXRCOL];
	int n = run_columns(cols), w[MAXRCOL];
	struct spp_text_cell c;

	for (int i = 0; i < n; i++) {
		w[i] = spp_text_width(cols[i].title);
		cJSON_ArrayForEach(l, layers)
			cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL)) {
				column_cell(&cols[i], l, r, &c);
				spp_text_grow(&w[i], &c);
			}
	}
	fputc('\n', f);
	for (int i = 0; i < n; i++)
		spp_text_put_cell(f, cols[i].title, SPP_TEXT_PLAIN, w[i], cols[i].right, i == n - 1, color,
				  ANSI_BOLD);
	spp_text_put_rule(f, w, n);
	cJSON_ArrayForEach(l, layers)
		cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL))
			for (int i = 0; i < n; i++) {
				column_cell(&cols[i], l, r, &c);
				spp_text_put_cell(f, c.text, c.style, w[i], cols[i].right, i == n - 1, color, "");
			}
}

/* Layer notes after the runs: the activations of the runs, then the diagnosis. */
#define HOLD_BACK_SHOWN 3

/*
 * The layers that hold the model back from the target sparsity, the
 * first three: "fc1.weight: holds the model back from 90% sparsity (the
 * model's): 70% sparse, 2.1 MFLOP of non-zeros above it (34% of the
 * excess); alone it would need 93.1%". heading: NULL when printed already.
 */
static int hold_back_notes(const cJSON *report, FILE *f, const char *heading, const char *bullet)
{
	const cJSON *h = spp_cell_path(report, "summary.hold_back"), *e;
	const char *src = spp_cell_str(h, "target_source");
	double target, sp, fl, share, alone;
	char t[48], s[48], a[48];
	int shown = 0;

	if (!spp_cell_num(h, "target_sparsity", &target))
		return 0;
	spp_cell_frac(target, 100, 1, "%", t, sizeof(t));
	cJSON_ArrayForEach(e, spp_cell_get(h, "layers")) {
		if (shown++ == HOLD_BACK_SHOWN)
			break;
		fprintf(f, "%s%s", heading ? heading : "", bullet);
		heading = NULL;
		spp_safe_fputs(f, spp_cell_str(e, "name"), SIZE_MAX);
		spp_cell_frac(spp_cell_num(e, "sparsity", &sp) ? sp : NAN, 100, 1, "%", s, sizeof(s));
		fprintf(f, ": holds the model back from %s sparsity (%s): %s sparse, %.3g MFLOP of "
			   "non-zeros above it", t,
			src && strcmp(src, "option") == 0 ? "--target-sparsity" : "the model's own",
			s, spp_cell_num(e, "excess_flops", &fl) ? fl / 1e6 : NAN);
		if (spp_cell_num(e, "share", &share))
			fprintf(f, " (%.3g%% of the excess)", 100 * share);
		if (spp_cell_num(e, "alone_sparsity", &alone)) {
			spp_cell_frac(alone, 100, 1, "%", a, sizeof(a));
			fprintf(f, "; alone it would need %s", a);
		}
		fputc('\n', f);
	}
	return shown > 0;
}

#define PROVENANCE_SHOWN 3

/*
 * The mask's provenance: the model's verdict with the layers per verdict,
 * then the first layers judged otherwise. heading: NULL when printed already.
 */
static void provenance_notes(const cJSON *report, FILE *f, const char *heading, const char *bullet)
{
	static const char *const keys[] = {"magnitude_like", "random_like", "unclear", "structured",
					   "not_judged"};
	static const char *const said[] = {"magnitude-like", "random-like", "unclear", "structured",
					   "not judged"};
	const cJSON *p = spp_cell_path(report, "summary.provenance"), *l;
	const char *verdict = spp_cell_str(p, "verdict");
	double share, n, surv;
	char pct[48];
	int shown = 0;

	if (!verdict)
		return;
	fprintf(f, "%s%smask provenance: %s over the model", heading ? heading : "", bullet, verdict);
	if (spp_cell_num(p, "low_share", &share) && spp_cell_num(p, "survivors", &surv)) {
		spp_cell_frac(share, 100, 1, "%", pct, sizeof(pct));
		fprintf(f, " (%s of %.0f sampled surviving weights below an eighth of their "
			   "layer's median |w|)", pct, surv);
	}
	fputs("; layers:", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (spp_cell_num(spp_cell_get(p, "layers"), keys[i], &n))
			fprintf(f, "%s %.0f %s", i ? "," : "", n, said[i]);
	fputc('\n', f);
	cJSON_ArrayForEach(l, spp_cell_get(report, "layers")) {
		const char *v = spp_cell_str(l, "pattern.provenance.verdict");

		const char *why = spp_cell_str(l, "pattern.provenance.reason");

		if (!v || strcmp(v, verdict) == 0)
			continue;
		if (shown++ == PROVENANCE_SHOWN)
			break;
		fputs(bullet, f);
		spp_safe_fputs(f, spp_cell_str(l, "name"), SIZE_MAX);
		fprintf(f, ": %s mask", v);
		if (why) {
			fputs(": ", f);
			spp_safe_fputs(f, why, SIZE_MAX);
		} else if (spp_cell_num(l, "pattern.provenance.low_share", &share)) {
			spp_cell_frac(share, 100, 1, "%", pct, sizeof(pct));
			fprintf(f, " (%s of its survivors below scale / 8)", pct);
		}
		fputc('\n', f);
	}
}

/* A layer's note line begun: the heading before the first, the bullet, "name: ". */
static void note_start(FILE *f, int *first, const char *heading, const char *bullet,
		       const char *name)
{
	fprintf(f, "%s%s", *first ? heading : "", bullet);
	spp_safe_fputs(f, name, SIZE_MAX);
	fputs(": ", f);
	*first = 0;
}

/* Where layer l's weight came from: a pruning mask folded in, a compressed checkpoint's storage. */
static void weight_notes(const cJSON *l, FILE *f, int *first, const char *heading,
			 const char *bullet)
{
	const char *name = spp_cell_str(l, "name");
	double fb = 0, sb = 0;

	if (spp_cell_str(l, "mask.tensor")) {
		note_start(f, first, heading, bullet, name);
		fputs("the effective weight ", f);
		spp_safe_fputs(f, spp_cell_str(l, "mask.orig") ? spp_cell_str(l, "mask.orig") : name,
			       SIZE_MAX);
		fputs(" masked by ", f);
		spp_safe_fputs(f, spp_cell_str(l, "mask.tensor"), SIZE_MAX);
		fputs(" (a pruning mask)\n", f);
	}
	if (spp_cell_str(l, "file_storage.format")) {
		note_start(f, first, heading, bullet, name);
		fputs("stored as ", f);
		spp_safe_fputs(f, spp_cell_str(l, "file_storage.format"), SIZE_MAX);
		if (spp_cell_num(l, "file_storage.bytes", &fb))
			fprintf(f, ", %.0f bytes in the file", fb);
		if (spp_cell_num(l, "storage.bitmask.bytes", &sb))
			fprintf(f, " (spprof's bitmask format: %.0f)", sb);
		fputc('\n', f);
	}
}

void spp_text_write_notes(const cJSON *report, FILE *f, const char *heading, const char *bullet)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l, *r;
	int first = 1;

	cJSON_ArrayForEach(l, layers) {
		const char *name = spp_cell_str(l, "name"), *src = spp_cell_str(l, "activations.source");
		double sp = 0, zr = 0, comb = 0, ideal = 0;

		if (src && strcmp(src, "uniform") != 0) {
			char flops[32] = "?", pct[48];

			if (spp_cell_num(l, "flops.combined", &comb))
				snprintf(flops, sizeof(flops), "%.3g MFLOP", comb / 1e6);
			note_start(f, &first, heading, bullet, name);
			fprintf(f, "activations %s", src);
			if (spp_cell_str(l, "activations.path")) {
				fputc(' ', f);
				spp_safe_fputs(f, spp_cell_str(l, "activations.path"), SIZE_MAX);
			}
			spp_cell_frac(spp_cell_num(l, "activations.sparsity", &sp) ? sp : NAN, 100, 1, "%", pct,
				      sizeof(pct));
			fprintf(f, ": %s zeros", pct[0] ? pct : "?");
			if (spp_cell_num(l, "activations.zero_rows", &zr))
				fprintf(f, ", %.0f zero rows", zr);
			fprintf(f, "; combined %s", flops);
			if (spp_cell_num(l, "flops.combined_speedup", &ideal))
				fprintf(f, " (ideal %.2fx)", ideal);
			cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL)) {
				double w = 0;

				if (spp_cell_num(r, "speedup_weight_only", &w)) {
					fputs("; ", f);
					spp_safe_fputs(f, spp_cell_str(r, "format"), SIZE_MAX);
					fprintf(f, " %.2fx its weight-only kernel", w);
				}
			}
			fputc('\n', f);
		}
		weight_notes(l, f, &first, heading, bullet);
		if (spp_cell_str(l, "runs_copied_from")) {
			note_start(f, &first, heading, bullet, name);
			fputs("runs copied from ", f);
			spp_safe_fputs(f, spp_cell_str(l, "runs_copied_from"), SIZE_MAX);
			fputs(" (--dedupe: the same shape, dtype and non-zero pattern)\n", f);
		}
		/* the sentences, joined by "; " in the report */
		for (const char *d = spp_cell_str(l, "diagnosis"), *e; d && *d; d = e ? e + 2 : NULL) {
			e = strstr(d, "; ");
			note_start(f, &first, heading, bullet, name);
			spp_safe_fputs(f, d, e ? (size_t)(e - d) : SIZE_MAX);
			fputc('\n', f);
		}
	}
	if (hold_back_notes(report, f, first ? heading : NULL, bullet))
		first = 0;
	provenance_notes(report, f, first ? heading : NULL, bullet);
}

/* One format of an N sweep: "csr faster at N = 16-64 (crossover N 11.3, faster above)". */
static void nsweep_format(FILE *f, const cJSON *e)
{
	const char *wins = spp_cell_str(e, "wins");
	const cJSON *c;
	int first = 1;

	spp_safe_fputs(f, e->string, SIZE_MAX);
	if (wins && wins[0]) {
		fputs(" faster at N = ", f);
		spp_safe_fputs(f, wins, SIZE_MAX);
	} else {
		fputs(" never faster", f);
	}
	cJSON_ArrayForEach(c, spp_cell_get(e, "crossings")) {
		const char *side = spp_cell_str(c, "faster");
		double n;

		if (spp_cell_num(c, "n", &n))
			fprintf(f, "%s%.3g, faster %s", first ? " (crossover N " : "; ", n,
				side && strcmp(side, "below") == 0 ? "below" : "above");
		first = first && !spp_cell_num(c, "n", &n);
	}
	if (!first)
		fputc(')', f);
}

void spp_text_write_nsweep(const cJSON *report, FILE *f, const char *heading, const char *bullet)
{
	const cJSON *l, *e;
	int first = 1;

	cJSON_ArrayForEach(l, spp_cell_get(report, "layers")) {
		int any = 0;

		cJSON_ArrayForEach(e, spp_cell_get(l, "n_sweep")) {
			if (!e->string || !cJSON_IsObject(e))
				continue;
			if (!any) {
				fprintf(f, "%s%s", first ? heading : "", bullet);
				spp_safe_fputs(f, spp_cell_str(l, "name"), SIZE_MAX);
				fputs(": ", f);
			} else {
				fputs("; ", f);
			}
			nsweep_format(f, e);
			any = 1;
			first = 0;
		}
		if (any)
			fputc('\n', f);
	}
}

/* One run's epilogue: "csr fused 52.6 us, unfused 51.9 us, saving -1.4%"; "" when it has none. */
static int epilogue_run(FILE *f, const cJSON *r, int first)
{
	const cJSON *e = spp_cell_get(r, "epilogue");
	struct spp_text_cell a, b;
	double fu, un, sv;

	if (!cJSON_IsObject(e))
		return 0;
	fputs(first ? "" : "; ", f);
	spp_safe_fputs(f, spp_cell_str(r, "format"), SIZE_MAX);
	if (!spp_cell_num(e, "saving", &sv)) {
		fputs(" not timed: ", f);
		spp_safe_fputs(f, spp_cell_str(e, "reason"), SIZE_MAX);
		return 1;
	}
	{
		int kf = spp_cell_num(e, "fused_time_ns.median", &fu);
		int ku = spp_cell_num(e, "unfused_time_ns.median", &un);

		spp_text_set_time(&a, kf, fu);
		spp_text_set_time(&b, ku, un);
	}
	fprintf(f, " fused %s, unfused %s, saving %.1f%%", a.text, b.text, 100 * sv);
	return 1;
}

void spp_text_write_epilogue(const cJSON *report, FILE *f, const char *heading, const char *bullet)
{
	const cJSON *l, *r;
	int first = 1;

	cJSON_ArrayForEach(l, spp_cell_get(report, "layers")) {
		int any = 0;
		const char *kind = NULL, *bias = NULL;

		cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL))
			if (cJSON_IsObject(spp_cell_get(r, "epilogue"))) {
				kind = spp_cell_str(r, "epilogue.kind");
				bias = spp_cell_str(r, "epilogue.bias");
				break;
			}
		if (!kind)
			continue;
		fprintf(f, "%s%s", first ? heading : "", bullet);
		spp_safe_fputs(f, spp_cell_str(l, "name"), SIZE_MAX);
		fputs(": ", f);
		spp_safe_fputs(f, kind, SIZE_MAX);
		fputs(bias && strcmp(bias, "model") == 0 ? " (the model's bias): " : " (zero bias: the layer has none): ", f);
		cJSON_ArrayForEach(r, spp_cell_get(l, "runs"))
			any += epilogue_run(f, r, !any);
		fputc('\n', f);
		first = 0;
	}
}
