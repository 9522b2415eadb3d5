/*
 * Private helpers of the report writers: typed lookups in a report tree and
 * the formatting of figures into cells. Every writer renders from a tree
 * that may come from a hand-edited file, so lookups never assume a type:
 * a missing or mistyped field reads as "unknown" and is shown as null.
 */
#ifndef SPP_REPORTS_CELLS_H
#define SPP_REPORTS_CELLS_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/safe_text.h"

/* Member `key` of obj when obj is an object; NULL otherwise. */
const cJSON *spp_cell_get(const cJSON *obj, const char *key);

/* Follow a dotted path ("pattern.row_nnz.cv") through nested objects. */
const cJSON *spp_cell_path(const cJSON *obj, const char *path);

/* 1 and *out set when the member at path is a number, else 0. */
int spp_cell_num(const cJSON *obj, const char *path, double *out);

/* The string at path, or NULL when absent or not a string. */
const char *spp_cell_str(const cJSON *obj, const char *path);

/*
 * Shortest text that reads back as v ("%.15g" up to "%.17g"); integral
 * values up to 2^63 as plain integers. NaN/Inf (never in a parsed report)
 * come out as an empty cell.
 */
void spp_cell_number(double v, char *buf, size_t n);

/*
 * A fraction for people: v * scale with `decimals` decimals and suffix
 * ("%" with scale 100), except that a fraction short of 1 never prints
 * as 1 nor a non-zero one as 0: up to 4 more decimals are taken
 * (0.9995 at 2 decimals prints "0.9995"), then "> 0.999999" or
 * "< 0.000001". Every human-readable writer formats fractions so.
 */
void spp_cell_frac(double v, double scale, int decimals, const char *suffix, char *buf, size_t n);

/*
 * A fraction with its interval lo..hi, each end as spp_cell_frac formats
 * it, the suffix once at the end, the ends joined by an en dash:
 * "62.0% (60.0-65.0%)"; v alone when either end is unknown; "" when v is.
 */
void spp_cell_frac_ci(double v, double lo, double hi, double scale, int decimals,
		      const char *suffix, char *buf, size_t n);

/*
 * A figure for people (compare, check): integers whole ("1048860", never
 * "1.04886e+06"), others with sig significant digits, no exponent from
 * 10^sig up; a leading sign with `sign`.
 */
void spp_cell_figure(double v, int sig, int sign, char *buf, size_t n);

/* one when n is 1, else many ("1 thread", "2 threads"). */
/*
 * A run's efficiency cell: "62.5%"; for the dense baseline, which has none
 * (it is the yardstick), its share of the FMA peak, "41.2% of peak" (a
 * fraction, as spp_cell_frac). Returns 0 with buf "" when neither is known.
 */
int spp_cell_efficiency(const cJSON *run, char *buf, size_t n);

const char *spp_cell_plural(double n, const char *one, const char *many);

/* Count with a decimal suffix: "512", "7.24 K", "1.61 G" (then unit appended). */
void spp_cell_count(double v, const char *unit, char *buf, size_t n);

/* Byte size in binary units: "512 B", "3.50 KiB", "1.20 GiB". */
void spp_cell_bytes(double v, char *buf, size_t n);

/*
 * The report's dense baseline in one line, from summary.dense_baseline:
 * the winning candidates with the layers each won, the GFLOP/s over the
 * layers and its share of the calibrated FMA peak ("oneDNN 2.6.3 (avx2)
 * on 5 layers, OpenBLAS 0.3.21 (Zen) on 1; 61.2 GFLOP/s, 66% of the 92.5
 * GFLOP/s FMA peak"). Returns 0, or -1 (buf "") when the report has none.
 */
int spp_cell_baseline_line(const cJSON *report, char *buf, size_t n);

/*
 * What a machine block says the runs ran on, "AMD EPYC, avx2, 2 threads,
 * OpenBLAS 0.3.21 (Zen)": the CPU, vector ISA, threads and dense BLAS, by
 * which two reports' machines are told apart (compare, merge).
 */
void spp_cell_machine_label(const cJSON *machine, char *buf, size_t n);
/* The build whose kernels ran (machine.build): "debugoptimized build, kernels -O3, gcc 12.2.0". */
void spp_cell_build_line(const cJSON *machine, char *buf, size_t n);

/*
 * A report warning's sentence: warnings[] holds {"code", "message"}
 * objects (reports before the codes, plain strings). NULL when w is
 * neither.
 */
const char *spp_cell_warning_text(const cJSON *w);

/*
 * The layers' N for a header, from summary.n: "128" when every layer uses
 * settings.n; "1 to 3136, from the graph" when the graph gave every one;
 * "1 to 3136 (the graph's on 12 layers, 128 on 3)" when mixed; settings.n
 * alone for a report without summary.n (cells_deploy.c).
 */
void spp_cell_n_text(const cJSON *report, char *buf, size_t n);

/* A time for people: "562 us", "3.21 ms" (cells_deploy.c). */
void spp_cell_time(double ns, char *buf, size_t n);

/*
 * What to deploy on a layer, from its recommendation: the format in fmt
 * ("dense" where no format beats dense clear of the noise, "cuda/csr" off
 * the cpu) and its measured speedup in sp, with the 95 % interval of its
 * run where the rounds gave one: "1.11x (1.05-1.17)". Returns 0, or -1
 * (both "") when the layer has no recommendation (no runs).
 */
int spp_cell_deploy(const cJSON *layer, char *fmt, size_t nf, char *sp, size_t ns);

/*
 * The model's deploy line, from summary.projection: "bsr8 on 2 layers,
 * dense on 4: the 6 layers 1.04x as fast as all dense (562 us -> 540 us),
 * weights 1.50 MiB -> 1.20 MiB", or "dense on every layer: no format beats
 * the dense baseline clear of the noise". Returns 0, or -1 (buf "")
 * without runs.
 */
int spp_cell_deploy_line(const cJSON *report, char *buf, size_t n);

/*
 * The model as a whole, from summary.whole_model (profiler/whole_model.c):
 * "the profiled layers hold 87% of the FLOPs (1.20 G of 1.38 G) and 96% of
 * the weight bytes; the deploy projection 1.90x on them is ≤ 1.70x on the
 * model (FLOP share)", with a static report's theoretical figure instead
 * of the deploy one, the ops not counted said; its reason where the model
 * has no graph. Returns 0, or -1 (buf "") for a report without the field.
 */
int spp_cell_whole_model_line(const cJSON *report, char *buf, size_t n);

/* Columns a layer name takes in the text table and the HTML charts. */
#define SPP_NAME_WIDTH 36

/*
 * s with its middle elided to maxw columns (code points), cutting at dots
 * where that keeps most of the room: "model.layers.0.self_attn.q_proj.weight"
 * becomes "model.layers.0…q_proj.weight"; s itself when it fits.
 */
void spp_names_elide(const char *s, int maxw, char *out, size_t n);

/*
 * Give each layer of tree (a writer's own copy) whose name is over maxw
 * columns a "display_name" no other layer shares (reports/names.c).
 * 0, or -1 when out of memory.
 */
int spp_names_shorten(cJSON *tree, int maxw);

/*
 * The report for a human-readable writer: tree itself when every key and
 * string in it is clean (base/safe_text.h), else a copy with each
 * escaped, owned by *owned (cJSON_Delete it). NULL when out of memory.
 * Text, Markdown, CSV and HTML of analyze, report, compare and check all
 * render from it, so no byte from a file reaches them raw.
 */
const cJSON *spp_cell_safe_tree(const cJSON *tree, cJSON **owned);

/* s as Markdown text: hostile code points escaped, then every character GFM
 * reads as syntax in a table cell (| \ * _ ` < [ ]) backslash-escaped. */
void spp_cell_md(FILE *f, const char *s);

/* s as a Markdown code span (fenced with two backticks when s holds one). */
void spp_cell_md_code(FILE *f, const char *s);

/* s as one CSV cell: hostile code points escaped, a would-be formula (= + -
 * @ first, not a number) prefixed with "'", quoted only where RFC 4180
 * needs it. No separator is written. */
void spp_cell_csv(FILE *f, const char *s);

#endif
