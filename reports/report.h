/*
 * Reports. An analysis becomes one cJSON tree in the spprof.report/1 schema
 * (DESIGN section 6); every writer (text, JSON, CSV, ...) renders from that
 * tree, so a saved JSON report re-renders exactly like a fresh one.
 *
 * Trees returned here are owned by the caller (cJSON_Delete). Writers never
 * print anywhere but the FILE they are given.
 */
#ifndef SPP_REPORTS_REPORT_H
#define SPP_REPORTS_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "profiler/analysis.h"
#include "base/error.h"

#define SPP_REPORT_SCHEMA "spprof.report/1"

enum spp_report_format {
	SPP_REPORT_TEXT,
	SPP_REPORT_JSON,
	SPP_REPORT_CSV,
	SPP_REPORT_MD,   /* GitHub-flavoured Markdown (markdown.c) */
	SPP_REPORT_HTML, /* one self-contained page with inline SVG charts (html.c) */
};

struct spp_render_opts {
	int color;  /* ANSI colour in the text table (only on a terminal, never with NO_COLOR) */
};

/* "text" / "json" / "csv" to a format; returns 0 or -1. */
int spp_report_format_from_name(const char *name, enum spp_report_format *out);

/* Format from an output path's extension (.json, .csv, .txt); 0 or -1. */
int spp_report_format_from_path(const char *path, enum spp_report_format *out);

/*
 * Build the report tree of an analysis. tool_version is written in
 * "tool". Returns NULL only when out of memory (err filled).
 */
cJSON *spp_report_build(const struct spp_analysis *a, const char *tool_version,
			struct spp_error *err);

struct spp_machine;

/*
 * The "machine" block (DESIGN section 6) of a machine description: cpu,
 * isa, caches, calibrated peaks (null when not calibrated), dense BLAS.
 * NULL only when out of memory.
 */
cJSON *spp_report_machine(const struct spp_machine *m);

struct spp_calibration;

/* The machine block's "calibration" object of one thread count's peaks; NULL when out of memory. */
cJSON *spp_report_calibration(const struct spp_calibration *c);

struct spp_dense_set;

/*
 * The dense candidates (kernels/dense/dense.h) as an array: name, library,
 * version, kernel, origin, env, config, status ("ok", "unavailable"),
 * reason. NULL when out of memory.
 */
cJSON *spp_report_dense(const struct spp_dense_set *set);

/*
 * `spprof info --format json`: the machine block, its dense candidates and
 * "conditions": the load now (load_1m, NAN unknown) and the steal share
 * since boot from /proc/stat's ticks {all, steal} (ticks[0] <= 0: unknown).
 * NULL when out of memory.
 */
cJSON *spp_report_info(const struct spp_machine *m, const struct spp_dense_set *set, double load_1m,
		       const double ticks[2]);

struct spp_dense_choice;
struct spp_time_stats;

/* {median, p10, p90, repeats} of a timing; null when t is NULL or untimed. */
cJSON *spp_report_time(const struct spp_time_stats *t);

/*
 * How a shape's dense baseline was chosen (profiler/run.h): winner,
 * measured_on, threads and every candidate's time, status and speed
 * relative to the winner. NULL when out of memory.
 */
cJSON *spp_report_dense_choice(const struct spp_dense_choice *ch);

/*
 * Load a saved JSON report and check that it is a spprof.report/1 document
 * with the structure the writers need. SPP_E_IO / SPP_E_FORMAT naming the
 * file and the fault otherwise.
 */
int spp_report_load(const char *path, cJSON **out, struct spp_error *err);

/*
 * The kernel runs of a report's layer object (its runs, dense_candidates
 * and activations) into out, as the analysis held them: the inverse of
 * the writer, for `spprof merge` (runs_read.c). path names the report in
 * errors. Returns 0, SPP_E_FORMAT or SPP_E_NOMEM; out is empty on failure.
 */
int spp_report_layer_runs(const cJSON *layer, const char *path, struct spp_layer_runs *out,
			  struct spp_error *err);

/*
 * The breakeven sweep of a report's layer object ("breakeven": per
 * "cpu/<format>", its sparsity, reason and curve) into out, as the
 * analysis held it (no results when the layer has none), for merge: the
 * breakeven and its bracket derived again from the curve and its points'
 * intervals.
 * Returns 0, SPP_E_FORMAT or SPP_E_NOMEM; out is empty on failure.
 */
int spp_report_layer_sweep(const cJSON *layer, const char *path, struct spp_sweep *out,
			   struct spp_error *err);

/* The same for its speedup against N ("n_sweep", --n-sweep). */
int spp_report_layer_nsweep(const cJSON *layer, const char *path, struct spp_nsweep *out,
			    struct spp_error *err);

/*
 * Layer i's runs of a, read back, with every figure derived from a time
 * computed again from the medians and the layer's own shape and static
 * figures (spp_layer_runs_refigure); bw: the calibration they ran under.
 */
void spp_report_runs_refigure(const struct spp_analysis *a, int i, const struct spp_bw_model *bw);

/* The calibrated bandwidths a report's runs were timed under (every gbs 0 without). */
void spp_report_bw_of(const cJSON *report, struct spp_bw_model *bw);

/*
 * Layer i's runs as spp_report_layer_runs reads them back: {layer, name,
 * m, k, n, runs, dense_candidates, flops.combined*, activations}, as the
 * report writes them (a journal line, reports/journal.c). NULL when out of
 * memory.
 */
cJSON *spp_report_layer_runs_json(const struct spp_analysis *a, int i);

/* The report's "settings" block of a. NULL when out of memory. */
cJSON *spp_report_settings(const struct spp_analysis *a);

/*
 * spprof merge (merge.c): the reports of shards 0..N-1 of one profile
 * (paths, n of them; same model hash and settings, one per shard) into
 * the analysis one run would have made: model (NULL: the parts'
 * model.path) scanned again and its hash checked, each layer's runs from
 * its shard's part, the parts' warnings once each, every figure derived.
 * mm: the parts' machines (the analysis has none). Returns 0,
 * or SPP_E_IO / SPP_E_FORMAT / SPP_E_UNSUPPORTED naming the part and the
 * fault, or the model's loader status.
 */
struct spp_merge_opts {
	const char *model;           /* NULL: the parts' model.path */
	/*
	 * MPI mode: count shards were run, and failed[s] says why shard s has
	 * no part (its rank's error; NULL where it has one): such a shard's
	 * layers have no runs and a shard_failed warning quotes the error.
	 * failed NULL: every shard must have its part.
	 */
	int count;
	const char *const *failed;
	/*
	 * The static analysis of the model the parts profiled, which their
	 * runs attach to: the orchestrator's spp_analyze_run (profiler/
	 * analyze.h), given by the caller so that reports never call it.
	 */
	int (*analyze)(const char *path, const struct spp_analyze_opts *o,
		       struct spp_analysis **out, struct spp_error *err);
};
/*
 * The machines of the parts: their distinct machine blocks (told apart by
 * spp_cell_machine_label: CPU, ISA, threads, dense BLAS), part 0's first,
 * and the one that timed each layer (-1: none). Released by
 * spp_merge_machines_free.
 */
struct spp_merge_machines {
	cJSON *list;
	int *of_layer;           /* the analysis's nlayers */
	int n;
};
void spp_merge_machines_free(struct spp_merge_machines *mm);

int spp_report_merge(const char *const *paths, int n, const struct spp_merge_opts *mo,
		     struct spp_analysis **out, struct spp_merge_machines *mm, struct spp_error *err);

/*
 * The report of a merged analysis (spp_report_merge): its tree with the
 * parts' first machine block, settings.merged_from (the n names of the
 * parts) and, when the parts ran on more than one machine, "machines" and
 * each layer's "machine". mm is released. NULL when out of memory.
 */
cJSON *spp_report_merged(struct spp_analysis *a, struct spp_merge_machines *mm,
			 const char *const *names, int n, struct spp_error *err);

/* The same from len bytes of text; path names the source in messages. */
int spp_report_parse(const char *text, size_t len, const char *path, cJSON **out,
		     struct spp_error *err);

/* Writers: each returns 0 or SPP_E_OUTPUT (write failed) / SPP_E_NOMEM. */
int spp_report_write_json(const cJSON *report, FILE *f, struct spp_error *err);
int spp_report_write_text(const cJSON *report, FILE *f,
			  const struct spp_render_opts *o, struct spp_error *err);
int spp_report_write_csv(const cJSON *report, FILE *f, struct spp_error *err);
int spp_report_write_md(const cJSON *report, FILE *f, struct spp_error *err);
int spp_report_write_html(const cJSON *report, FILE *f, struct spp_error *err);

/* Dispatch on format. */
int spp_report_render(const cJSON *report, enum spp_report_format fmt, FILE *f,
		      const struct spp_render_opts *o, struct spp_error *err);

/*
 * Render into path atomically: a temporary file in the same folder,
 * flushed and fsync'd, then renamed over path. On failure nothing is left
 * behind and path is untouched. SPP_E_OUTPUT naming path otherwise.
 */
int spp_report_write_file(const cJSON *report, enum spp_report_format fmt,
			  const char *path, const struct spp_render_opts *o,
			  struct spp_error *err);

/*
 * The sweep as the JSON of DESIGN section 5: {"schema": "spprof.sweep/1",
 * "shape": {m, k, n}, "pattern", "threads", "results": [{backend, format,
 * breakeven: {sparsity, breakeven_low, breakeven_high, reason}, curve:
 * [{sparsity, time_ns, dense_time_ns, speedup, speedup_ci_low,
 * speedup_ci_high}]}]}; unknown figures and an empty reason are null.
 * NULL when out of memory.
 */
cJSON *spp_sweep_json(const struct spp_sweep *s);

/*
 * The N sweep (speedup against N) as JSON: {"schema": "spprof.nsweep/1",
 * "shape": {m, k}, "pattern", "sparsity", "threads", "results": [{backend,
 * format, wins ("1-8, 256", null: at no N), crossings: [{n, faster:
 * "above" | "below"}], reason, curve: [{n, time_ns, dense_time_ns,
 * speedup, speedup_ci_low, speedup_ci_high}]}]}. NULL when out of memory.
 */
cJSON *spp_nsweep_json(const struct spp_nsweep *s);

/*
 * `spprof sweep`'s JSON: the sweep (the N sweep), with "dense", the dense
 * choice its points were timed against (one per N), and "cold",
 * "cold_method", the cache state every time was taken in (rs, the
 * session's record). NULL when out
 * of memory.
 */
cJSON *spp_report_sweep(const struct spp_sweep *s, const struct spp_dense_memo *memo,
			const struct spp_run_settings *rs);
cJSON *spp_report_nsweep(const struct spp_nsweep *s, const struct spp_dense_memo *memo,
			 const struct spp_run_settings *rs);

/* One format's {wins, crossings, reason, curve} of the N sweep JSON. */
cJSON *spp_nsweep_result_json(const struct spp_nsweep_result *r);

/* A layer's N sweep: {"cpu/csr": {wins, ...}, ...}; {} for none (NULL s). */
cJSON *spp_nsweep_layer_json(const struct spp_nsweep *s);

/*
 * One result's breakeven object {sparsity, breakeven_low, breakeven_high,
 * reason, curve} (the inner
 * object of the sweep JSON and of an analyze report's breakeven, which
 * adds margin). NULL when out of memory.
 */
cJSON *spp_sweep_result_json(const struct spp_sweep_result *r);

#endif
