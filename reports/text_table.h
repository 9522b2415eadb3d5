/*
 * Private to the text report (text.c, text_table.c, text_runs.c): a table
 * cell, its style, and the helpers that fill cells and print aligned
 * columns. Cells are fixed-size: a figure or an elided name always fits.
 */
#ifndef SPP_REPORTS_TEXT_TABLE_H
#define SPP_REPORTS_TEXT_TABLE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "reports/cells.h"

#define NAME_WIDTH SPP_NAME_WIDTH
#define NULL_CELL "\xe2\x80\x94"  /* em dash: unknown */
#define ELLIPSIS "\xe2\x80\xa6"

#define ANSI_RESET "\033[0m"
#define ANSI_BOLD "\033[1m"
#define ANSI_DIM "\033[2m"
#define ANSI_GREEN "\033[32m"
#define ANSI_YELLOW "\033[33m"

enum spp_text_style { SPP_TEXT_PLAIN, SPP_TEXT_DIM, SPP_TEXT_GOOD };

struct spp_text_cell {
	char text[128];
	enum spp_text_style style;
};

/* Display width of UTF-8 text: code points, not bytes. */
int spp_text_width(const char *s);

/* Copy s with hostile code points escaped (spp_safe_copy), cut whole. */
void spp_text_set(struct spp_text_cell *c, const char *s);

/* The unknown cell, dimmed. */
void spp_text_set_null(struct spp_text_cell *c);

/* s, or the unknown cell when s is NULL. */
void spp_text_set_str(struct spp_text_cell *c, const char *s);

/* "10.0x": ratios and speedups with three significant digits; unknown when !known. */
void spp_text_set_ratio(struct spp_text_cell *c, int known, double v);

/* "12.3 us": a duration in ns with three significant digits; unknown when !known. */
void spp_text_set_time(struct spp_text_cell *c, int known, double ns);

/* The layer's name, its middle elided to NAME_WIDTH columns. */
void spp_text_layer_name(const cJSON *layer, struct spp_text_cell *c);

/*
 * Print text padded to w columns (right-aligned when right), then two
 * spaces, or a newline when last. With color, the row style (a bold
 * header or totals row) and the cell's style wrap the text.
 */
void spp_text_put_cell(FILE *f, const char *text, enum spp_text_style st, int w, int right,
		       int last, int color, const char *row_style);

/* Widen *w to fit c. */
void spp_text_grow(int *w, const struct spp_text_cell *c);

/* A rule of dashes under ncol columns of widths w. */
void spp_text_put_rule(FILE *f, const int *w, int ncol);

/* Whether any layer has kernel runs (a static report has none). */
int spp_text_has_runs(const cJSON *report);

/*
 * The runs table (text_runs.c): one row per layer x run, the layer name
 * on its first row only.
 */
void spp_text_write_runs(const cJSON *report, FILE *f, int color);

/*
 * One line per note of a layer, after the tables, names escaped
 * (base/safe_text.h): the activations its
 * runs used (when they had zeros: combined FLOPs, each activation kernel
 * against its weight-only kernel), then each diagnosis sentence. heading
 * comes before the first line (none without notes), bullet before each.
 */
void spp_text_write_notes(const cJSON *report, FILE *f, const char *heading, const char *bullet);

/*
 * One line per layer with an N sweep (analyze --n-sweep), after heading
 * and bullet as the notes: each format's N range where it beats dense and
 * its crossover N.
 */
void spp_text_write_nsweep(const cJSON *report, FILE *f, const char *heading, const char *bullet);

/*
 * One line per layer whose runs have an epilogue (analyze --epilogue):
 * its kind and bias, then each format's fused and unfused medians and the
 * saving; heading and bullet as the notes.
 */
void spp_text_write_epilogue(const cJSON *report, FILE *f, const char *heading, const char *bullet);

#endif
