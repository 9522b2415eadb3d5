/*
 * Private to the HTML report (html*.c): the state the sections share and
 * the helpers they format figures with. The page is one self-contained
 * file: CSS, inline SVG drawn by svg.c and a small script for the table,
 * nothing fetched. Sections read the tree defensively: a block that is
 * absent or mistyped gives a short note in place of its chart, never a
 * broken or empty one.
 */
#ifndef SPP_REPORTS_HTML_H
#define SPP_REPORTS_HTML_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Charts with one panel per layer show at most this many (by time share). */
#define SPP_HTML_TOP_LAYERS 12

struct spp_html {
	FILE *f;
	const cJSON *report;
	const cJSON *layers; /* the layers array; NULL when absent */
	int nlayers;
	int has_runs;        /* some layer has a run with status ok */
	int nomem;           /* an allocation failed: the writer returns SPP_E_NOMEM */
};

/* Fill colour of a format key ("csr", "nm2_4"): fixed for known keys. */
const char *spp_html_format_color(const char *format);

/* Fill colour of a pattern class ("nm", "block", ...). */
const char *spp_html_class_color(const char *cls);

/* A <p class="note"> with printf-style text, escaped. */
void spp_html_note(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open a <section> with its id and <h2> title; a one-line lead may follow (NULL: none). */
void spp_html_section(FILE *f, const char *id, const char *title, const char *lead);

/* "1.63×" (three significant digits); "—" when not finite. */
void spp_html_fmt_ratio(double v, char *buf, size_t n);

/* "54.6 µs": a duration in ns with three significant digits. */
void spp_html_fmt_time(double ns, char *buf, size_t n);

/* "50.0%" of a 0..1 fraction; ">99.9%" just below 1. */
void spp_html_fmt_pct(double frac, char *buf, size_t n);

/* Whether run is an object with status "ok". */
int spp_html_run_ok(const cJSON *run);

/*
 * The weight of a layer for "largest first": the median time of its ok
 * dense run, else its dense FLOPs; 0 when neither is known.
 */
double spp_html_layer_weight(const cJSON *layer);

/*
 * The layers for which want(layer) is true, heaviest first (see
 * spp_html_layer_weight), at most max of them, into a malloc'd array
 * *out. Returns how many wanted layers there are in all (which may be
 * more than max), or -1 when out of memory (h->nomem set).
 */
int spp_html_top_layers(struct spp_html *h, int (*want)(const cJSON *layer), int max,
			const cJSON ***out);

/* The format of a "<backend>/<format>" key (the whole key when it has no '/'). */
const char *spp_html_key_format(const char *key);

/* Points of an entry's "curve" with a finite xkey and a positive speedup. */
int spp_html_curve_points(const cJSON *entry, const char *xkey);

/* Those points into x/y arrays (malloc'd); returns the count, or -1 (h->nomem set). */
int spp_html_curve_xy(struct spp_html *h, const cJSON *e, const char *xkey, double **x, double **y);

/* The sections, in page order (html_static.c, html_runs.c, html_breakeven.c, html_nsweep.c, html_epilogue.c, html_table.c). */
void spp_html_sparsity(struct spp_html *h);
void spp_html_storage(struct spp_html *h);
void spp_html_speedup(struct spp_html *h);
void spp_html_breakeven(struct spp_html *h);
void spp_html_nsweep(struct spp_html *h);
void spp_html_epilogue(struct spp_html *h);

/* Whether a layer has an N sweep with points (the section is written only then). */
int spp_html_has_nsweep(const cJSON *layer);
void spp_html_roofline(struct spp_html *h);

/* The note of a report with no kernel runs (a static analysis). */
void spp_html_note_no_runs(FILE *f);

/* The legend of the formats among ok runs (dense too when dense), at (x, y), w wide. */
void spp_html_legend(FILE *f, const struct spp_html *h, double x, double y, double w, int dense);
void spp_html_cache(struct spp_html *h);
void spp_html_table(struct spp_html *h);

/* The page's inline stylesheet and scripts (reports/html_assets.c). */
extern const char spp_html_css[];
extern const char spp_html_js_errors[];
extern const char spp_html_js_table[];

#endif
