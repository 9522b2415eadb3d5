/*
 * The Markdown report (`--format md`): what the text report shows, as
 * GitHub-flavoured Markdown tables for a pull-request comment or a wiki
 * page. Names from the model file are escaped so that a '|' or a backtick
 * in a tensor name cannot break the table.
 */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "profiler/run_result.h"
#include "reports/cells.h"
#include "reports/text_table.h"

/* Text inside a table cell; NULL as the null cell. */
static void cell(FILE *f, const char *s)
{
	if (s)
		spp_cell_md(f, s);
	else
		fputs(NULL_CELL, f);
}

/* A name as inline code; NULL as the null cell. */
static void code(FILE *f, const char *s)
{
	if (s)
		spp_cell_md_code(f, s);
	else
		fputs(NULL_CELL, f);
}

static void num_cell(FILE *f, const cJSON *o, const char *path, const char *fmt, double scale)
{
	double v;

	if (spp_cell_num(o, path, &v))
		fprintf(f, fmt, v * scale);
	else
		fputs(NULL_CELL, f);
}

/* Efficiency, or the dense baseline's share of the FMA peak (spp_cell_efficiency). */
static void efficiency_cell(FILE *f, const cJSON *run)
{
	char buf[48];

	fputs(spp_cell_efficiency(run, buf, sizeof(buf)) ? buf : NULL_CELL, f);
}

/* A fraction at path (spp_cell_frac: never 1 when short of it). */
static void frac_cell(FILE *f, const cJSON *o, const char *path, double scale, int decimals,
		      const char *suffix)
{
	char buf[48];
	double v;

	if (spp_cell_num(o, path, &v)) {
		spp_cell_frac(v, scale, decimals, suffix, buf, sizeof(buf));
		fputs(buf, f);
	} else {
		fputs(NULL_CELL, f);
	}
}

static void ratio_cell(FILE *f, const cJSON *o, const char *path)
{
	struct spp_text_cell c;
	double v = 0;
	int known = spp_cell_num(o, path, &v);

	spp_text_set_ratio(&c, known, v);
	fputs(known ? c.text : NULL_CELL, f);
}

static void time_cell(FILE *f, const cJSON *o, const char *path)
{
	struct spp_text_cell c;
	double v = 0;
	int known = spp_cell_num(o, path, &v);

	spp_text_set_time(&c, known, v);
	fputs(known ? c.text : NULL_CELL, f);
}

static void count_cell(FILE *f, const cJSON *o, const char *path, const char *unit)
{
	char buf[64];
	double v;

	if (!spp_cell_num(o, path, &v)) {
		fputs(NULL_CELL, f);
		return;
	}
	spp_cell_count(v, unit, buf, sizeof(buf));
	fputs(buf, f);
}

static void header(const cJSON *r, FILE *f)
{
	char bytes[32];
	double v;
	const char *s;

	fputs("## spprof report: ", f);
	code(f, spp_cell_str(r, "model.path"));
	fputs("\n\n| | |\n|---|---|\n| model | ", f);
	cell(f, spp_cell_str(r, "model.format"));
	if (spp_cell_num(r, "model.bytes", &v)) {
		spp_cell_bytes(v, bytes, sizeof(bytes));
		fprintf(f, ", %s", bytes);
	}
	fputs(", ", f);
	num_cell(f, r, "model.tensors", "%.0f tensors", 1);
	fputs(", ", f);
	num_cell(f, r, "model.layers", "%.0f GEMM layers", 1);
	fputs(" |\n| params | ", f);
	count_cell(f, r, "model.params", "");
	fputs(", nnz ", f);
	count_cell(f, r, "model.nnz", "");
	fputs(", sparsity ", f);
	frac_cell(f, r, "model.sparsity", 100, 2, "%");
	fputs(" |\n| hash | ", f);
	cell(f, spp_cell_str(r, "model.hash.value"));
	fputs(" (", f);
	cell(f, spp_cell_str(r, "model.hash.algo"));
	fputs(") |\n| machine | ", f);
	cell(f, spp_cell_str(r, "machine.cpu"));
	if ((s = spp_cell_str(r, "machine.isa"))) {
		fputs(", ", f);
		cell(f, s);
	}
	fputs(", ", f);
	num_cell(f, r, "machine.threads", "%.0f", 1);
	fprintf(f, " %s", spp_cell_plural(spp_cell_num(r, "machine.threads", &v) ? v : 2, "thread", "threads"));
	if ((s = spp_cell_str(r, "machine.dense_blas.name"))) {
		fputs(", ", f);
		cell(f, s);
		fputc(' ', f);
		cell(f, spp_cell_str(r, "machine.dense_blas.version"));
		fputs(" (", f);
		cell(f, spp_cell_str(r, "machine.dense_blas.core"));
		fputc(')', f);
	}
	{
		char line[512];

		if (spp_cell_baseline_line(r, line, sizeof(line)) == 0) {
			fputs(" |\n| baseline | ", f);
			cell(f, line);
		}
		if (spp_cell_path(r, "machine.dense_blas")) {
			spp_cell_build_line(spp_cell_get(r, "machine"), line, sizeof(line));
			fputs(" |\n| build | ", f);
			cell(f, line);
		}
	}
	fputs(" |\n| settings | N ", f);
	{
		char nb[160];

		spp_cell_n_text(r, nb, sizeof(nb));
		cell(f, nb);
	}
	fputs(", ", f);
	if (spp_cell_num(r, "settings.repeats", &v))
		fprintf(f, "%.0f runs each", v);
	else if (cJSON_IsTrue(spp_cell_path(r, "settings.static")))
		fputs("static only", f);
	else if (spp_cell_num(r, "settings.time_budget_s", &v))
		fprintf(f, "time budget %g s per layer", v);
	else
		fputs("time budget", f);
	fputs(" |\n| created | ", f);
	cell(f, spp_cell_str(r, "created"));
	fputs(" |\n", f);
}

static void layers(const cJSON *r, FILE *f, int runs)
{
	const cJSON *l;

	fputs("\n### Layers\n\n| layer | op | M×K | dtype | sparsity | class | 2:4 | FLOPs | ideal | csr |", f);
	fputs(runs ? " deploy | speedup |\n" : "\n", f);
	fputs("|---|---|---|---|---:|---|---:|---:|---:|---:|", f);
	fputs(runs ? "---|---:|\n" : "\n", f);
	cJSON_ArrayForEach(l, spp_cell_get(r, "layers")) {
		fputs("| ", f);
		code(f, spp_cell_str(l, "name"));
		fputs(" | ", f);
		cell(f, spp_cell_str(l, "op"));
		fputs(" | ", f);
		num_cell(f, l, "m", "%.0f", 1);
		fputs("×", f);
		num_cell(f, l, "k", "%.0f", 1);
		fputs(" | ", f);
		cell(f, spp_cell_str(l, "dtype"));
		fputs(" | ", f);
		frac_cell(f, l, "sparsity", 100, 1, "%");
		fputs(" | ", f);
		cell(f, spp_cell_str(l, "status") ? spp_cell_str(l, "status")
						  : spp_cell_str(l, "pattern.class"));
		fputs(" | ", f);
		frac_cell(f, l, "pattern.nm2_4", 1, 2, "");
		fputs(" | ", f);
		count_cell(f, l, "flops.dense", "F");
		fputs(" | ", f);
		ratio_cell(f, l, "flops.theoretical_speedup");
		fputs(" | ", f);
		ratio_cell(f, l, "storage.csr.ratio");
		if (runs) {
			char fmt[48], sp[64];

			/* what to deploy: the recommendation, "dense" where nothing beats it */
			spp_cell_deploy(l, fmt, sizeof(fmt), sp, sizeof(sp));
			fputs(" | ", f);
			cell(f, fmt[0] ? fmt : NULL);
			fputs(" | ", f);
			cell(f, sp[0] ? sp : NULL);
		}
		fputs(" |\n", f);
	}
	fputs("| **total** | | | | ", f);
	frac_cell(f, r, "summary.gemm_sparsity", 100, 1, "%");
	fputs(" | | | ", f);
	count_cell(f, r, "summary.flops.dense", "F");
	fputs(" | ", f);
	ratio_cell(f, r, "summary.flops.theoretical_speedup");
	fputs(" | ", f);
	ratio_cell(f, r, "summary.storage.csr.ratio");
	if (runs) {
		char line[1024];

		fputs(" | | ", f);
		ratio_cell(f, r, "summary.projection.speedup");
		fputs(" |\n", f);
		if (spp_cell_deploy_line(r, line, sizeof(line)) == 0) {
			fputs("\n**Deploy:** ", f);
			cell(f, line);
			fputs("\n", f);
		}
	} else {
		fputs(" |\n", f);
	}
	{
		char line[1024];

		if (spp_cell_whole_model_line(r, line, sizeof(line)) == 0) {
			fputs("\n**Whole model:** ", f);
			cell(f, line);
			fputs("\n", f);
		}
	}
}

/* "2:4 4:8 7:16": the tightest N:M of groups of 4, 8, 16 along axis (K or M). */
static void tightest_cell(FILE *f, const cJSON *l, const char *axis)
{
	static const int widths[] = {4, 8, 16};
	char path[64];
	double n;

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "pattern.tightest_n.%s.of%d", axis, widths[i]);
		if (spp_cell_num(l, path, &n))
			fprintf(f, "%s%.0f:%d", i ? " " : "", n, widths[i]);
	}
}

/* Where the zeros are and where the mask came from (issue 17's figures). */
static void structure_rows(const cJSON *r, FILE *f)
{
	static const char *const levels[] = {"row", "column", "kernel", "channel"};
	const cJSON *l;

	fputs("\n### Structure\n\n<details><summary>N:M on both axes, zero units, mask "
	      "provenance</summary>\n\n", f);
	fputs("| layer | 2:4 along K | 2:4 along M | tightest along K | tightest along M | zero rows "
	      "| zero columns | zero kernels | zero channels | layer | mask |\n", f);
	fputs("|---|---:|---:|---|---|---:|---:|---:|---:|---|---|\n", f);
	cJSON_ArrayForEach(l, spp_cell_get(r, "layers")) {
		char path[64];

		fputs("| ", f);
		code(f, spp_cell_str(l, "name"));
		fputs(" | ", f);
		frac_cell(f, l, "pattern.nm2_4", 1, 2, "");
		fputs(" | ", f);
		frac_cell(f, l, "pattern.along_m.nm2_4", 1, 2, "");
		fputs(" | ", f);
		tightest_cell(f, l, "along_k");
		fputs(" | ", f);
		tightest_cell(f, l, "along_m");
		for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
			fputs(" | ", f);
			snprintf(path, sizeof(path), "pattern.granularity.%s.zero", levels[i]);
			num_cell(f, l, path, "%.0f", 1);
		}
		fputs(" | ", f);
		cell(f, spp_cell_str(l, "pattern.layer_state"));
		fputs(" | ", f);
		cell(f, spp_cell_str(l, "pattern.provenance.verdict"));
		fputs(" |\n", f);
	}
	fputs("\n</details>\n", f);
}

/* The cell of run figure fig (SPP_RUN_FIGURES) of run, as its row says it is shown. */
static void figure_cell(FILE *f, const struct spp_run_figure *fig, const cJSON *run)
{
	switch (fig->cell) {
	case SPP_CELL_RATIO:
		ratio_cell(f, run, fig->key);
		break;
	case SPP_CELL_EFFICIENCY:
		efficiency_cell(f, run);
		break;
	case SPP_CELL_NUMBER:
	case SPP_CELL_BANDWIDTH:
		num_cell(f, run, fig->key, fig->fmt, 1);
		break;
	}
}

static void run_rows(const cJSON *r, FILE *f)
{
	const cJSON *l, *run;

	fputs("\n### Runs\n\n<details><summary>every format on every layer</summary>\n\n", f);
	/* the run figures' columns are the rows of SPP_RUN_FIGURES shown in Markdown */
	fputs("| layer | backend/format | status | time | p10–p90 |", f);
	for (int i = 0; i < spp_run_figure_nrows; i++)
		if (spp_run_figure_rows[i].flags & SPP_FIG_MD)
			fprintf(f, " %s |", spp_run_figure_rows[i].title);
	fputs("\n|---|---|---|---:|---:|", f);
	for (int i = 0; i < spp_run_figure_nrows; i++)
		if (spp_run_figure_rows[i].flags & SPP_FIG_MD)
			fputs("---:|", f);
	fputs("\n", f);
	cJSON_ArrayForEach(l, spp_cell_get(r, "layers")) {
		cJSON_ArrayForEach(run, spp_cell_get(l, "runs")) {
			fputs("| ", f);
			code(f, spp_cell_str(l, "name"));
			fputs(" | ", f);
			cell(f, spp_cell_str(run, "backend"));
			fputc('/', f);
			cell(f, spp_cell_str(run, "format"));
			fputs(" | ", f);
			cell(f, spp_cell_str(run, "status"));
			fputs(" | ", f);
			time_cell(f, run, "time_ns.median");
			fputs(" | ", f);
			time_cell(f, run, "time_ns.p10");
			fputs("–", f);
			time_cell(f, run, "time_ns.p90");
			for (int i = 0; i < spp_run_figure_nrows; i++)
				if (spp_run_figure_rows[i].flags & SPP_FIG_MD) {
					fputs(" | ", f);
					figure_cell(f, &spp_run_figure_rows[i], run);
				}
			fputs(" |\n", f);
		}
	}
	fputs("\n</details>\n", f);
}

int spp_report_write_md(const cJSON *report, FILE *f, struct spp_error *err)
{
	const cJSON *w;
	int runs = spp_text_has_runs(report);

	header(report, f);
	layers(report, f, runs);
	structure_rows(report, f);
	if (runs)
		run_rows(report, f);
	spp_text_write_notes(report, f, "\n### Notes\n\n", "- ");
	spp_text_write_nsweep(report, f, "\n### Speedup against N\n\n", "- ");
	spp_text_write_epilogue(report, f, "\n### Fused epilogue\n\n", "- ");
	if (cJSON_GetArraySize(spp_cell_get(report, "warnings")) > 0) {
		fputs("\n### Warnings\n\n", f);
		cJSON_ArrayForEach(w, spp_cell_get(report, "warnings")) {
			fputs("- ", f);
			cell(f, spp_cell_warning_text(w) ? spp_cell_warning_text(w) : "");
			fputc('\n', f);
		}
	}
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				     strerror(errno));
	return SPP_OK;
}
