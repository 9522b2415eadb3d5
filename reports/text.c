/*
 * The text report: a header block, one table row per layer, a totals row,
 * then warnings. Columns are rows of a table ({title, getter}), so the run
 * columns that later issues add are new rows there, not new printf calls.
 * The cell helpers are in text_table.c, the runs table in text_runs.c.
 */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/safe_text.h"
#include "reports/cells.h"
#include "reports/text_table.h"

struct column {
	const char *title;
	int right;                                   /* figures align right */
	int runs;                                    /* shown only when the report has runs */
	void (*layer)(const cJSON *layer, struct spp_text_cell *c);
	void (*total)(const cJSON *report, struct spp_text_cell *c); /* NULL: blank */
};

static void set_percent(struct spp_text_cell *c, int known, double frac)
{
	if (!known) {
		spp_text_set_null(c);
		return;
	}
	/* a layer with one weight left is not "100.0%" sparse */
	spp_cell_frac(frac, 100, 1, "%", c->text, sizeof(c->text));
	c->style = frac >= 0.5 ? SPP_TEXT_GOOD : SPP_TEXT_PLAIN;
}

static void col_op(const cJSON *l, struct spp_text_cell *c)
{
	spp_text_set_str(c, spp_cell_str(l, "op"));
}

static void col_dtype(const cJSON *l, struct spp_text_cell *c)
{
	spp_text_set_str(c, spp_cell_str(l, "dtype"));
}

static void col_class(const cJSON *l, struct spp_text_cell *c)
{
	spp_text_set_str(c, spp_cell_str(l, "pattern.class"));
}

/* "4096x4096"; a conv adds its stored shape: "64x576 (64x64x3x3)". */
static void col_shape(const cJSON *l, struct spp_text_cell *c)
{
	const cJSON *shape = spp_cell_get(l, "shape"), *d;
	double m, k;
	char a[32], b[32];
	struct spp_buf t;

	if (!spp_cell_num(l, "m", &m) || !spp_cell_num(l, "k", &k)) {
		spp_text_set_null(c);
		return;
	}
	spp_cell_number(m, a, sizeof(a));
	spp_cell_number(k, b, sizeof(b));
	spp_buf_init(&t, c->text, sizeof(c->text));
	spp_buf_add(&t, "%sx%s", a, b);
	c->style = SPP_TEXT_PLAIN;
	if (cJSON_GetArraySize(shape) <= 2)
		return;
	cJSON_ArrayForEach(d, shape) {
		if (cJSON_IsNumber(d))
			spp_cell_number(d->valuedouble, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "?");
		spp_buf_add(&t, "%s%s", d == shape->child ? " (" : "x", a);
	}
	spp_buf_add(&t, ")");
}

static void col_sparsity(const cJSON *l, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(l, "sparsity", &v);

	set_percent(c, known, v);
}

static void col_nm24(const cJSON *l, struct spp_text_cell *c)
{
	double v;

	if (!spp_cell_num(l, "pattern.nm2_4", &v)) {
		spp_text_set_null(c);
		return;
	}
	/* 0.9995 compliant groups is not 2:4: never "1.00" */
	spp_cell_frac(v, 1, 2, "", c->text, sizeof(c->text));
	c->style = v >= 1 ? SPP_TEXT_GOOD : SPP_TEXT_PLAIN;
}

static void flops_cell(const cJSON *o, struct spp_text_cell *c)
{
	double v;

	if (!spp_cell_num(o, "flops.dense", &v)) {
		spp_text_set_null(c);
		return;
	}
	spp_cell_count(v, "F", c->text, sizeof(c->text));
	c->style = SPP_TEXT_PLAIN;
}

static void ideal_cell(const cJSON *o, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(o, "flops.theoretical_speedup", &v);

	spp_text_set_ratio(c, known, v);
}

static void col_flops(const cJSON *l, struct spp_text_cell *c)
{
	flops_cell(l, c);
}

static void col_ideal(const cJSON *l, struct spp_text_cell *c)
{
	ideal_cell(l, c);
}

static void col_csr(const cJSON *l, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(l, "storage.csr.ratio", &v);

	spp_text_set_ratio(c, known, v);
}

/* The selection sel ({format, ratio}, as derive.c made it) into name and ratio cells. */
static void best_cells(const cJSON *sel, struct spp_text_cell *name, struct spp_text_cell *ratio)
{
	double r = 0;
	int known = spp_cell_num(sel, "ratio", &r);

	if (name)
		spp_text_set_str(name, spp_cell_str(sel, "format"));
	if (ratio)
		spp_text_set_ratio(ratio, known, r);
}

static void col_best(const cJSON *l, struct spp_text_cell *c)
{
	best_cells(spp_cell_get(l, "best_storage"), c, NULL);
}

static void col_best_ratio(const cJSON *l, struct spp_text_cell *c)
{
	best_cells(spp_cell_get(l, "best_storage"), NULL, c);
}

static void tot_name(const cJSON *r, struct spp_text_cell *c)
{
	const cJSON *layers = spp_cell_get(r, "layers");
	int n = cJSON_GetArraySize(layers);

	snprintf(c->text, sizeof(c->text), "total (%d layer%s)", n, n == 1 ? "" : "s");
	c->style = SPP_TEXT_PLAIN;
}

static void tot_sparsity(const cJSON *r, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "summary.gemm_sparsity", &v);

	set_percent(c, known, v);
}

static void tot_flops(const cJSON *r, struct spp_text_cell *c)
{
	flops_cell(spp_cell_get(r, "summary"), c);
}

static void tot_ideal(const cJSON *r, struct spp_text_cell *c)
{
	ideal_cell(spp_cell_get(r, "summary"), c);
}

static void tot_csr(const cJSON *r, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "summary.storage.csr.ratio", &v);

	spp_text_set_ratio(c, known, v);
}

static void tot_best(const cJSON *r, struct spp_text_cell *c)
{
	best_cells(spp_cell_path(r, "summary.best_storage"), c, NULL);
}

static void tot_best_ratio(const cJSON *r, struct spp_text_cell *c)
{
	best_cells(spp_cell_path(r, "summary.best_storage"), NULL, c);
}

static const cJSON *run_of(const cJSON *l, const char *format)
{
	const cJSON *runs = spp_cell_get(l, "runs"), *r;

	cJSON_ArrayForEach(r, (cJSON_IsArray(runs) ? runs : NULL)) {
		const char *f = spp_cell_str(r, "format");

		if (f && strcmp(f, format) == 0)
			return r;
	}
	return NULL;
}

static void col_dense_time(const cJSON *l, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(run_of(l, "dense"), "time_ns.median", &v);

	spp_text_set_time(c, known, v);
}

/* What to deploy (the recommendation, "dense" where nothing beats it) and its speedup. */
static void col_deploy(const cJSON *l, struct spp_text_cell *c)
{
	char sp[64];

	if (spp_cell_deploy(l, c->text, sizeof(c->text), sp, sizeof(sp)))
		spp_text_set_null(c);
}

static void col_deploy_speedup(const cJSON *l, struct spp_text_cell *c)
{
	char fmt[48];
	double v;

	if (spp_cell_deploy(l, fmt, sizeof(fmt), c->text, sizeof(c->text)) || !c->text[0])
		spp_text_set_null(c);
	if (spp_cell_num(spp_cell_get(l, "recommendation"), "speedup", &v) && v > 1)
		c->style = SPP_TEXT_GOOD;
}

/* The model under the recommendations against all dense (summary.projection). */
static void tot_deploy_speedup(const cJSON *r, struct spp_text_cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "summary.projection.speedup", &v);

	spp_text_set_ratio(c, known, v);
	if (known && v > 1)
		c->style = SPP_TEXT_GOOD;
}

/*
 * The best format's breakeven: the lowest breakeven sparsity of the
 * layer's formats with its bracket where both ends are known ("62.0%
 * (60.0-65.0%)"), "never" when none beats dense, unknown without a sweep.
 */
static void col_breakeven(const cJSON *l, struct spp_text_cell *c)
{
	const cJSON *e, *be = cJSON_GetObjectItemCaseSensitive(l, "breakeven"), *at = NULL;
	double best = 2, v, lo, hi;
	int n = 0;

	cJSON_ArrayForEach(e, be) {
		n++;
		if (spp_cell_num(e, "sparsity", &v) && v < best) {
			best = v;
			at = e;
		}
	}
	if (!n) {
		spp_text_set_null(c);
	} else if (best > 1) {
		spp_text_set(c, "never");
	} else {
		spp_cell_frac_ci(best, spp_cell_num(at, "breakeven_low", &lo) ? lo : NAN,
				 spp_cell_num(at, "breakeven_high", &hi) ? hi : NAN, 100, 1, "%",
				 c->text, sizeof(c->text));
	}
	c->style = SPP_TEXT_PLAIN; /* a high breakeven is not good news */
}

static const struct column columns[] = {
	{"layer", 0, 0, spp_text_layer_name, tot_name},
	{"op", 0, 0, col_op, NULL},
	{"shape", 0, 0, col_shape, NULL},
	{"dtype", 0, 0, col_dtype, NULL},
	{"sparsity", 1, 0, col_sparsity, tot_sparsity},
	{"class", 0, 0, col_class, NULL},
	{"2:4", 1, 0, col_nm24, NULL},
	{"FLOPs", 1, 0, col_flops, tot_flops},
	{"ideal", 1, 0, col_ideal, tot_ideal},
	{"csr", 1, 0, col_csr, tot_csr},
	{"best", 0, 0, col_best, tot_best},
	{"ratio", 1, 0, col_best_ratio, tot_best_ratio},
	{"dense time", 1, 1, col_dense_time, NULL},
	{"deploy", 0, 1, col_deploy, NULL},
	{"speedup", 1, 1, col_deploy_speedup, tot_deploy_speedup},
	{"breakeven", 1, 1, col_breakeven, NULL},
};

#define NCOL ((int)(sizeof(columns) / sizeof(columns[0])))
#define SPARSITY_COL 4 /* the first figure column */

/* Cell of column i in a row: a layer, or the totals (layer == NULL). */
static void cell_at(int i, const cJSON *report, const cJSON *layer, struct spp_text_cell *c)
{
	const char *status = layer ? spp_cell_str(layer, "status") : NULL;

	c->text[0] = '\0';
	c->style = SPP_TEXT_PLAIN;
	/* a layer with no figures (unsupported dtype) says so from the
	 * sparsity column on */
	if (status && i >= SPARSITY_COL) {
		if (i == SPARSITY_COL)
			spp_text_set(c, status);
		return;
	}
	if (layer)
		columns[i].layer(layer, c);
	else if (columns[i].total)
		columns[i].total(report, c);
}

static void put_row(FILE *f, const cJSON *report, const cJSON *layer,
		    const int *w, int ncol, int color, const char *row_style)
{
	struct spp_text_cell c;

	for (int i = 0; i < ncol; i++) {
		cell_at(i, report, layer, &c);
		spp_text_put_cell(f, c.text, c.style, w[i], columns[i].right, i == ncol - 1,
			 color, row_style);
	}
}

static void write_table(const cJSON *report, FILE *f, int color)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l;
	int w[NCOL], ncol = 0, runs = spp_text_has_runs(report);
	struct spp_text_cell c;

	/* the run columns come last, so the visible ones are a prefix */
	while (ncol < NCOL && (runs || !columns[ncol].runs))
		ncol++;
	/* widths first, then print: cells are cheap to compute twice */
	for (int i = 0; i < ncol; i++) {
		w[i] = spp_text_width(columns[i].title);
		cJSON_ArrayForEach(l, layers) {
			cell_at(i, report, l, &c);
			spp_text_grow(&w[i], &c);
		}
		cell_at(i, report, NULL, &c);
		spp_text_grow(&w[i], &c);
	}
	for (int i = 0; i < ncol; i++)
		spp_text_put_cell(f, columns[i].title, SPP_TEXT_PLAIN, w[i], columns[i].right,
			 i == ncol - 1, color, ANSI_BOLD);
	spp_text_put_rule(f, w, ncol);
	cJSON_ArrayForEach(l, layers)
		put_row(f, report, l, w, ncol, color, "");
	spp_text_put_rule(f, w, ncol);
	put_row(f, report, NULL, w, ncol, color, ANSI_BOLD);
}

/* A header line: "label     value", the value whole (sanitized, never cut). */
static void header_line(FILE *f, int color, const char *label, const char *value)
{
	fprintf(f, "%s%-9s%s ", color ? ANSI_BOLD : "", label, color ? ANSI_RESET : "");
	spp_safe_fputs(f, value ? value : NULL_CELL, (size_t)-1);
	fputc('\n', f);
}

/* --layers / --skip-layers: which layers were timed, the rest scanned only. */
static void write_selection(const cJSON *sel, FILE *f, int color)
{
	static const char *const key[2] = {"time", "skip"};
	static const char *const lead[2] = {"timed where the name matches ", "not timed where it matches "};
	struct spp_buf t;
	char line[1024];
	const cJSON *g;

	if (!cJSON_IsObject(sel))
		return;
	spp_buf_init(&t, line, sizeof(line));
	for (int p = 0; p < 2; p++) {
		int k = 0;

		cJSON_ArrayForEach(g, spp_cell_get(sel, key[p])) {
			if (!cJSON_IsString(g))
				continue;
			if (k == 0)
				spp_buf_add(&t, "%s%s", t.len ? "; " : "", lead[p]);
			spp_buf_add(&t, "%s'%s'", k ? " or " : "", g->valuestring);
			k++;
		}
	}
	spp_buf_add(&t, "; the other layers scanned, not timed");
	header_line(f, color, "layers", line);
}

/*
 * What the runs ran on and how they were timed: only in a report that has
 * a machine description (BLAS) and run settings.
 */
static void write_machine_lines(const cJSON *r, FILE *f, int color)
{
	const cJSON *m = spp_cell_get(r, "machine"), *s = spp_cell_get(r, "settings"), *e;
	const char *sched = spp_cell_str(s, "schedule"), *rule;
	char line[512], reps[64];
	double v, u, rt = 0;
	size_t used;
	int i = 0;

	if (!cJSON_IsObject(spp_cell_get(m, "dense_blas")))
		return;
	spp_cell_machine_label(m, line, sizeof(line));
	used = strlen(line);
	if (spp_cell_num(m, "peak_bw_gbs", &v) && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, ", DRAM read %.1f GB/s", v);
	header_line(f, color, "machine", line);
	spp_cell_build_line(m, line, sizeof(line));
	header_line(f, color, "build", line);
	/* how quiet it was while timing (the steal share and the load, start to end) */
	if (spp_cell_num(m, "conditions.load_start", &v) && spp_cell_num(m, "conditions.load_end", &u)) {
		used = (size_t)snprintf(line, sizeof(line), "%.2f to %.2f while timing", v, u);
		if (spp_cell_num(m, "conditions.steal_share", &v) && used < sizeof(line))
			snprintf(line + used, sizeof(line) - used, ", steal %.1f%% of CPU time", 100 * v);
		header_line(f, color, "load", line);
	}
	/* a merge of parts timed on different machines: each layer names its own */
	cJSON_ArrayForEach(e, spp_cell_get(r, "machines")) {
		char label[400];

		spp_cell_machine_label(e, label, sizeof(label));
		snprintf(line, sizeof(line), "[%d] %s", i++, label);
		header_line(f, color, i == 1 ? "machines" : "", line);
	}
	if (spp_cell_baseline_line(r, line, sizeof(line)) == 0)
		header_line(f, color, "baseline", line);
	if (!sched)
		return;
	spp_cell_num(s, "run_threads", &rt);
	if (spp_cell_num(s, "repeats", &v))
		snprintf(reps, sizeof(reps), "%.0f runs each", v);
	else if (spp_cell_num(s, "time_budget_s", &v))
		snprintf(reps, sizeof(reps), "%g s per layer", v);
	else
		snprintf(reps, sizeof(reps), "%s", NULL_CELL);
	spp_cell_num(s, "verify_rtol", &v);
	rule = spp_cell_str(s, "cache_rule");
	snprintf(line, sizeof(line), "%s, %s, %s%s%s%s, %.0f thread%s, verified to %g x |W|.|X|",
		 sched, reps, cJSON_IsTrue(spp_cell_get(s, "cold")) ? "cold" : "warm",
		 rule ? " (" : "", rule ? rule : "", rule ? ")" : "", rt, rt == 1 ? "" : "s", v);
	header_line(f, color, "runs", line);
	if ((rule = spp_cell_str(s, "precision")) && strcmp(rule, "fp32") != 0) {
		snprintf(line, sizeof(line), "%s: each format against the dense baseline in its precision, "
			 "checked against its result (settings.verify_rule)", rule);
		header_line(f, color, "precision", line);
	}
	write_selection(spp_cell_get(s, "layers"), f, color);
}

static void write_header(const cJSON *r, FILE *f, int color)
{
	const cJSON *m = spp_cell_get(r, "model");
	char line[512], a[64], b[64], c[64];
	const char *s;
	double v, sp;

	header_line(f, color, "model", spp_cell_str(m, "path"));
	a[0] = '\0';
	if (spp_cell_num(m, "bytes", &v))
		spp_cell_bytes(v, a, sizeof(a));
	s = spp_cell_str(m, "format");
	snprintf(line, sizeof(line), "%s, %s", s ? s : NULL_CELL, *a ? a : NULL_CELL);
	if (spp_cell_num(m, "tensors", &v))
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ", %.0f tensors", v);
	if (spp_cell_num(m, "layers", &v))
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ", %.0f GEMM layers", v);
	header_line(f, color, "format", line);

	snprintf(a, sizeof(a), "%s", NULL_CELL);
	snprintf(b, sizeof(b), "%s", NULL_CELL);
	snprintf(c, sizeof(c), "%s", NULL_CELL);
	if (spp_cell_num(m, "params", &v))
		spp_cell_count(v, "", a, sizeof(a));
	if (spp_cell_num(m, "nnz", &v))
		spp_cell_count(v, "", b, sizeof(b));
	if (spp_cell_num(m, "sparsity", &sp))
		spp_cell_frac(sp, 100, 2, "%", c, sizeof(c));
	snprintf(line, sizeof(line), "%s, nnz %s, sparsity %s", a, b, c);
	header_line(f, color, "params", line);

	s = spp_cell_str(m, "hash.value");
	snprintf(line, sizeof(line), "%.12s (%s)", s ? s : NULL_CELL,
		 spp_cell_str(m, "hash.algo") ? spp_cell_str(m, "hash.algo") : NULL_CELL);
	header_line(f, color, "hash", s ? line : NULL);

	snprintf(b, sizeof(b), "%s", NULL_CELL);
	if (spp_cell_num(r, "settings.threads", &v))
		spp_cell_number(v, b, sizeof(b));
	else if (spp_cell_num(r, "machine.threads", &v))
		snprintf(b, sizeof(b), "%.0f (default)", v);
	/* the layers' N as they ran: a graph's own, not the --n default no layer used */
	{
		char nb[160];

		spp_cell_n_text(r, nb, sizeof(nb));
		snprintf(line, sizeof(line), "N %s, threads %s", nb, b);
	}
	header_line(f, color, "settings", line);
	write_machine_lines(r, f, color);
	fputc('\n', f);
}

/* What to deploy for the model, under the table: its total row's speedup in words;
 * then the layers against the whole model. */
static void write_deploy(const cJSON *r, FILE *f, int color)
{
	char line[1024];
	int deploy = spp_cell_deploy_line(r, line, sizeof(line)) == 0;

	if (deploy) {
		fputc('\n', f);
		header_line(f, color, "deploy", line);
	}
	if (spp_cell_whole_model_line(r, line, sizeof(line)) == 0) {
		if (!deploy)
			fputc('\n', f);
		fputs("whole model: ", f);
		spp_safe_fputs(f, line, (size_t)-1);
		fputc('\n', f);
	}
}

/* The names the table shows shortened, in full: short name, then the name. */
static void write_full_names(const cJSON *r, FILE *f)
{
	const cJSON *l;
	struct spp_text_cell a;
	int first = 1;

	cJSON_ArrayForEach(l, (cJSON_IsArray(spp_cell_get(r, "layers")) ? spp_cell_get(r, "layers") : NULL)) {
		if (!spp_cell_str(l, "display_name") || !spp_cell_str(l, "name"))
			continue;
		if (first)
			fputs("\nlayer names shortened above, in full:\n", f);
		first = 0;
		spp_text_set(&a, spp_cell_str(l, "display_name"));
		fprintf(f, "  %s%*s  ", a.text, NAME_WIDTH - spp_text_width(a.text), "");
		spp_safe_fputs(f, spp_cell_str(l, "name"), (size_t)-1);
		fputc('\n', f);
	}
}

static void write_warnings(const cJSON *r, FILE *f, int color)
{
	const cJSON *ws = spp_cell_get(r, "warnings"), *w;

	if (cJSON_GetArraySize(ws) == 0)
		return;
	fputc('\n', f);
	/* each warning whole: a sentence cut at a cell's width read as "(virtualize" */
	cJSON_ArrayForEach(w, (cJSON_IsArray(ws) ? ws : NULL)) {
		const char *t = spp_cell_warning_text(w);

		fprintf(f, "%swarning:%s ", color ? ANSI_YELLOW : "", color ? ANSI_RESET : "");
		spp_safe_fputs(f, t ? t : NULL_CELL, (size_t)-1);
		fputc('\n', f);
	}
}

int spp_report_write_text(const cJSON *report, FILE *f,
			  const struct spp_render_opts *o, struct spp_error *err)
{
	const cJSON *layers = spp_cell_get(report, "layers");
	int color = o && o->color;

	write_header(report, f, color);
	if (cJSON_IsArray(layers) && cJSON_GetArraySize(layers) > 0) {
		write_table(report, f, color);
		write_deploy(report, f, color);
		write_full_names(report, f);
		if (spp_text_has_runs(report))
			spp_text_write_runs(report, f, color);
		/* a static report has its static notes (N:M axis, formats that
		 * do not apply and why) */
		spp_text_write_notes(report, f, "\n", "");
		spp_text_write_nsweep(report, f, "\nspeedup against N (--n-sweep): where each format beats dense\n", "  ");
		spp_text_write_epilogue(report, f, "\nepilogue (--epilogue): fused in the kernel against the kernel then a pass over Y\n", "  ");
	} else
		fputs("no GEMM layers\n", f);
	write_warnings(report, f, color);
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				     strerror(errno));
	return SPP_OK;
}
