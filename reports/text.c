/*
 * The text report: a header block, one table row per layer, a totals row,
 * then warnings. Columns are rows of a table ({title, getter}), so the run
 * columns that later issues add are new rows there, not new printf calls.
 */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "reports/cells.h"

#define NAME_WIDTH 36
#define NULL_CELL "\xe2\x80\x94"  /* em dash: unknown */
#define ELLIPSIS "\xe2\x80\xa6"

#define ANSI_RESET "\033[0m"
#define ANSI_BOLD "\033[1m"
#define ANSI_DIM "\033[2m"
#define ANSI_GREEN "\033[32m"
#define ANSI_YELLOW "\033[33m"

enum style { PLAIN, DIM, GOOD };

struct cell {
	char text[128];
	enum style style;
};

struct column {
	const char *title;
	int right;                                   /* figures align right */
	int runs;                                    /* shown only when the report has runs */
	void (*layer)(const cJSON *layer, struct cell *c);
	void (*total)(const cJSON *report, struct cell *c); /* NULL: blank */
};

/* Display width of UTF-8 text: code points, not bytes. */
static int width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Copy s, replacing control bytes so a hostile name cannot drive the terminal. */
static void set_text(struct cell *c, const char *s)
{
	size_t i = 0;

	for (; s[i] && i < sizeof(c->text) - 1; i++)
		c->text[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	/* never end inside a multi-byte sequence */
	if (s[i])
		while (i > 0 && ((unsigned char)c->text[i] & 0xc0) == 0x80)
			i--;
	c->text[i] = '\0';
	c->style = PLAIN;
}

static void set_null(struct cell *c)
{
	set_text(c, NULL_CELL);
	c->style = DIM;
}

static void set_str(struct cell *c, const char *s)
{
	if (s)
		set_text(c, s);
	else
		set_null(c);
}

/* "10.0x": ratios and speedups with three significant digits. */
static void set_ratio(struct cell *c, int known, double v)
{
	if (!known) {
		set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), fabs(v) < 10 ? "%.2fx" : fabs(v) < 100 ? "%.1fx" : "%.0fx", v);
	c->style = PLAIN;
}

static void set_percent(struct cell *c, int known, double frac)
{
	if (!known) {
		set_null(c);
		return;
	}
	/* a layer with one weight left is not "100.0%" sparse */
	if (frac < 1 && frac > 0.9995)
		snprintf(c->text, sizeof(c->text), ">99.9%%");
	else
		snprintf(c->text, sizeof(c->text), "%.1f%%", frac * 100);
	c->style = frac >= 0.5 ? GOOD : PLAIN;
}

static void cut_utf8(const char *s, size_t *pos)
{
	while (*pos > 0 && ((unsigned char)s[*pos] & 0xc0) == 0x80)
		(*pos)--;
}

/*
 * Elide the middle of a long layer name, cutting at dots where that keeps
 * most of the room: "model.layers.0.self_attn.q_proj.weight" becomes
 * "model.layers.0…q_proj.weight". The head keeps up to the first numeric
 * part (the layer index) and the tail the last parts, since those tell
 * rows apart; what the head leaves goes to the tail.
 */
static void elide(const char *s, int maxw, char *out, size_t n)
{
	size_t len = strlen(s), budget = (size_t)maxw - 1, head = 0, room, p;

	if (width(s) <= maxw) {
		snprintf(out, n, "%s", s);
		return;
	}
	for (p = 0; p < len && !head;) {
		size_t e = p;
		int digits = 1;

		while (e < len && s[e] != '.') {
			digits &= s[e] >= '0' && s[e] <= '9';
			e++;
		}
		if (digits && e > p && e + 8 <= budget)
			head = e;
		p = e + 1;
	}
	if (!head) {
		head = budget / 2;
		for (p = head; p > 0 && s[p] != '.'; p--)
			;
		if (p > 0 && p >= head / 2)
			head = p;
	}
	cut_utf8(s, &head);
	room = budget - head;
	/* the tail starts after a dot if that keeps over half its room */
	for (p = len - room; p < len && s[p - 1] != '.'; p++)
		;
	if (p >= len || 2 * (len - p) <= room)
		p = len - room;
	cut_utf8(s, &p);
	snprintf(out, n, "%.*s" ELLIPSIS "%s", (int)head, s, s + p);
}

static void col_name(const cJSON *l, struct cell *c)
{
	const char *name = spp_cell_str(l, "name");
	char buf[sizeof(c->text)];

	if (!name) {
		set_null(c);
		return;
	}
	elide(name, NAME_WIDTH, buf, sizeof(buf));
	set_text(c, buf);
}

static void col_op(const cJSON *l, struct cell *c)
{
	set_str(c, spp_cell_str(l, "op"));
}

static void col_dtype(const cJSON *l, struct cell *c)
{
	set_str(c, spp_cell_str(l, "dtype"));
}

static void col_class(const cJSON *l, struct cell *c)
{
	set_str(c, spp_cell_str(l, "pattern.class"));
}

/* "4096x4096"; a conv adds its stored shape: "64x576 (64x64x3x3)". */
static void col_shape(const cJSON *l, struct cell *c)
{
	const cJSON *shape = spp_cell_get(l, "shape"), *d;
	double m, k;
	char a[32], b[32];
	size_t used;

	if (!spp_cell_num(l, "m", &m) || !spp_cell_num(l, "k", &k)) {
		set_null(c);
		return;
	}
	spp_cell_number(m, a, sizeof(a));
	spp_cell_number(k, b, sizeof(b));
	used = (size_t)snprintf(c->text, sizeof(c->text), "%sx%s", a, b);
	c->style = PLAIN;
	if (cJSON_GetArraySize(shape) <= 2 || used >= sizeof(c->text))
		return;
	cJSON_ArrayForEach(d, shape) {
		const char *sep = d == shape->child ? " (" : "x";

		if (cJSON_IsNumber(d))
			spp_cell_number(d->valuedouble, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "?");
		used += (size_t)snprintf(c->text + used, sizeof(c->text) - used, "%s%s", sep, a);
		if (used >= sizeof(c->text))
			return;
	}
	snprintf(c->text + used, sizeof(c->text) - used, ")");
}

static void col_sparsity(const cJSON *l, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(l, "sparsity", &v);

	set_percent(c, known, v);
}

static void col_nm24(const cJSON *l, struct cell *c)
{
	double v;

	if (!spp_cell_num(l, "pattern.nm2_4", &v)) {
		set_null(c);
		return;
	}
	/* truncated, not rounded: 0.9965 compliant groups is not 2:4 */
	snprintf(c->text, sizeof(c->text), "%.2f", floor(v * 100) / 100);
	c->style = v >= 1 ? GOOD : PLAIN;
}

static void flops_cell(const cJSON *o, struct cell *c)
{
	double v;

	if (!spp_cell_num(o, "flops.dense", &v)) {
		set_null(c);
		return;
	}
	spp_cell_count(v, "F", c->text, sizeof(c->text));
	c->style = PLAIN;
}

static void ideal_cell(const cJSON *o, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(o, "flops.theoretical_speedup", &v);

	set_ratio(c, known, v);
}

static void col_flops(const cJSON *l, struct cell *c)
{
	flops_cell(l, c);
}

static void col_ideal(const cJSON *l, struct cell *c)
{
	ideal_cell(l, c);
}

static void col_csr(const cJSON *l, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(l, "storage.csr.ratio", &v);

	set_ratio(c, known, v);
}

/*
 * The format of storage (an object keyed by format) with the largest
 * ratio; with need_layers >= 0, only formats that hold that many layers
 * (for the summary, formats that fit every layer). NULL when none.
 */
static const cJSON *best_format(const cJSON *storage, double need_layers, double *ratio)
{
	const cJSON *f, *best = NULL;

	cJSON_ArrayForEach(f, (cJSON_IsObject(storage) ? storage : NULL)) {
		double r, nl;

		if (!spp_cell_num(f, "ratio", &r))
			continue;
		if (need_layers >= 0 &&
		    (!spp_cell_num(f, "applicable_layers", &nl) || nl < need_layers))
			continue;
		if (!best || r > *ratio) {
			best = f;
			*ratio = r;
		}
	}
	return best;
}

static void best_cells(const cJSON *storage, double need, struct cell *name,
		       struct cell *ratio)
{
	double r = 0;
	const cJSON *f = best_format(storage, need, &r);

	if (name)
		set_str(name, f ? f->string : NULL);
	if (ratio)
		set_ratio(ratio, f != NULL, r);
}

static void col_best(const cJSON *l, struct cell *c)
{
	best_cells(spp_cell_get(l, "storage"), -1, c, NULL);
}

static void col_best_ratio(const cJSON *l, struct cell *c)
{
	best_cells(spp_cell_get(l, "storage"), -1, NULL, c);
}

static void tot_name(const cJSON *r, struct cell *c)
{
	const cJSON *layers = spp_cell_get(r, "layers");
	int n = cJSON_GetArraySize(layers);

	snprintf(c->text, sizeof(c->text), "total (%d layer%s)", n, n == 1 ? "" : "s");
	c->style = PLAIN;
}

static void tot_sparsity(const cJSON *r, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "summary.gemm_sparsity", &v);

	set_percent(c, known, v);
}

static void tot_flops(const cJSON *r, struct cell *c)
{
	flops_cell(spp_cell_get(r, "summary"), c);
}

static void tot_ideal(const cJSON *r, struct cell *c)
{
	ideal_cell(spp_cell_get(r, "summary"), c);
}

static void tot_csr(const cJSON *r, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "summary.storage.csr.ratio", &v);

	set_ratio(c, known, v);
}

static double layer_count(const cJSON *r)
{
	return cJSON_GetArraySize(spp_cell_get(r, "layers"));
}

static void tot_best(const cJSON *r, struct cell *c)
{
	best_cells(spp_cell_path(r, "summary.storage"), layer_count(r), c, NULL);
}

static void tot_best_ratio(const cJSON *r, struct cell *c)
{
	best_cells(spp_cell_path(r, "summary.storage"), layer_count(r), NULL, c);
}


/* "12.3 us": a duration in ns with three significant digits. */
static void set_time(struct cell *c, int known, double ns)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	int u = 0;

	if (!known) {
		set_null(c);
		return;
	}
	while (u < 3 && fabs(ns) >= 1000) {
		ns /= 1000;
		u++;
	}
	snprintf(c->text, sizeof(c->text), fabs(ns) < 10 ? "%.2f %s" : fabs(ns) < 100 ? "%.1f %s" : "%.0f %s",
		 ns, unit[u]);
	c->style = PLAIN;
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

/* The sparse run with the largest speedup; NULL when none has one. */
static const cJSON *fastest_run(const cJSON *l, double *speedup)
{
	const cJSON *runs = spp_cell_get(l, "runs"), *r, *best = NULL;

	cJSON_ArrayForEach(r, (cJSON_IsArray(runs) ? runs : NULL)) {
		const char *f = spp_cell_str(r, "format");
		double v;

		if (!f || strcmp(f, "dense") == 0 || !spp_cell_num(r, "speedup", &v))
			continue;
		if (!best || v > *speedup) {
			best = r;
			*speedup = v;
		}
	}
	return best;
}

static void col_dense_time(const cJSON *l, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(run_of(l, "dense"), "time_ns.median", &v);

	set_time(c, known, v);
}

static void col_fastest(const cJSON *l, struct cell *c)
{
	double v = 0;
	const cJSON *r = fastest_run(l, &v);

	set_str(c, r ? spp_cell_str(r, "format") : NULL);
}

static void col_fastest_speedup(const cJSON *l, struct cell *c)
{
	double v = 0;
	const cJSON *r = fastest_run(l, &v);

	set_ratio(c, r != NULL, v);
	if (r && v > 1)
		c->style = GOOD;
}

static const struct column columns[] = {
	{"layer", 0, 0, col_name, tot_name},
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
	{"fastest", 0, 1, col_fastest, NULL},
	{"speedup", 1, 1, col_fastest_speedup, NULL},
};
#define NCOL ((int)(sizeof(columns) / sizeof(columns[0])))

/* Cell of column i in a row: a layer, or the totals (layer == NULL). */
static void cell_at(int i, const cJSON *report, const cJSON *layer, struct cell *c)
{
	c->text[0] = '\0';
	c->style = PLAIN;
	if (layer)
		columns[i].layer(layer, c);
	else if (columns[i].total)
		columns[i].total(report, c);
}

static void put_cell(FILE *f, const char *text, enum style st, int w, int right,
		     int last, int color, const char *row_style)
{
	static const char *const style_code[] = {"", ANSI_DIM, ANSI_GREEN};
	int pad = w - width(text);

	if (pad < 0)
		pad = 0;
	if (right)
		fprintf(f, "%*s", pad, "");
	if (color && (st != PLAIN || *row_style))
		fprintf(f, "%s%s%s" ANSI_RESET, row_style, style_code[st], text);
	else
		fputs(text, f);
	if (!right && !last)
		fprintf(f, "%*s", pad, "");
	fputs(last ? "\n" : "  ", f);
}

static void grow(int *w, const struct cell *c)
{
	if (width(c->text) > *w)
		*w = width(c->text);
}

static void put_row(FILE *f, const cJSON *report, const cJSON *layer,
		    const int *w, int ncol, int color, const char *row_style)
{
	struct cell c;

	for (int i = 0; i < ncol; i++) {
		cell_at(i, report, layer, &c);
		put_cell(f, c.text, c.style, w[i], columns[i].right, i == ncol - 1,
			 color, row_style);
	}
}

static void put_rule(FILE *f, const int *w, int ncol)
{
	int total = 2 * (ncol - 1);

	for (int i = 0; i < ncol; i++)
		total += w[i];
	for (int i = 0; i < total; i++)
		fputc('-', f);
	fputc('\n', f);
}

/* Whether any layer has kernel runs (a static report has none). */
static int has_runs(const cJSON *report)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l;

	cJSON_ArrayForEach(l, (cJSON_IsArray(layers) ? layers : NULL))
		if (cJSON_GetArraySize(spp_cell_get(l, "runs")) > 0)
			return 1;
	return 0;
}

static void write_table(const cJSON *report, FILE *f, int color)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l;
	int w[NCOL], ncol = 0, runs = has_runs(report);
	struct cell c;

	/* the run columns come last, so the visible ones are a prefix */
	while (ncol < NCOL && (runs || !columns[ncol].runs))
		ncol++;
	/* widths first, then print: cells are cheap to compute twice */
	for (int i = 0; i < ncol; i++) {
		w[i] = width(columns[i].title);
		cJSON_ArrayForEach(l, layers) {
			cell_at(i, report, l, &c);
			grow(&w[i], &c);
		}
		cell_at(i, report, NULL, &c);
		grow(&w[i], &c);
	}
	for (int i = 0; i < ncol; i++)
		put_cell(f, columns[i].title, PLAIN, w[i], columns[i].right,
			 i == ncol - 1, color, ANSI_BOLD);
	put_rule(f, w, ncol);
	cJSON_ArrayForEach(l, layers)
		put_row(f, report, l, w, ncol, color, "");
	put_rule(f, w, ncol);
	put_row(f, report, NULL, w, ncol, color, ANSI_BOLD);
}

/*
 * The runs table: one row per layer x run, with the layer name on its
 * first row only. Cells come from (layer, run) pairs.
 */
struct run_column {
	const char *title;
	int right;
	void (*cell)(const cJSON *layer, const cJSON *run, struct cell *c);
};

static void rc_layer(const cJSON *l, const cJSON *r, struct cell *c)
{
	const cJSON *runs = spp_cell_get(l, "runs");

	if (runs && runs->child == r)
		col_name(l, c);
	else
		set_text(c, "");
}

static void rc_format(const cJSON *l, const cJSON *r, struct cell *c)
{
	(void)l;
	set_str(c, spp_cell_str(r, "format"));
}

static void rc_status(const cJSON *l, const cJSON *r, struct cell *c)
{
	const char *s = spp_cell_str(r, "status");

	(void)l;
	set_str(c, s && strcmp(s, "not_applicable") == 0 ? "n/a" : s);
	if (s && strcmp(s, "ok") != 0)
		c->style = DIM;
}

static void rc_time(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "time_ns.median", &v);

	(void)l;
	set_time(c, known, v);
}

static void rc_spread(const cJSON *l, const cJSON *r, struct cell *c)
{
	struct cell a, b;
	double p10 = 0, p90 = 0;
	int known = spp_cell_num(r, "time_ns.p10", &p10) && spp_cell_num(r, "time_ns.p90", &p90);

	(void)l;
	if (!known) {
		set_null(c);
		return;
	}
	set_time(&a, 1, p10);
	set_time(&b, 1, p90);
	snprintf(c->text, sizeof(c->text), "%.40s\xe2\x80\x93%.40s", a.text, b.text);
	c->style = PLAIN;
}

static void rc_repeats(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v;

	(void)l;
	if (!spp_cell_num(r, "time_ns.repeats", &v)) {
		set_null(c);
		return;
	}
	spp_cell_number(v, c->text, sizeof(c->text));
	c->style = PLAIN;
}

static void rc_speedup(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "speedup", &v);

	(void)l;
	set_ratio(c, known, v);
	if (known && v > 1)
		c->style = GOOD;
}

static void rc_efficiency(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v = 0;
	int known = spp_cell_num(r, "efficiency", &v);

	(void)l;
	if (!known) {
		set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), "%.1f%%", v * 100);
	c->style = PLAIN;
}

static void rc_gflops(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v;

	(void)l;
	if (!spp_cell_num(r, "gflops", &v)) {
		set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), "%.1f", v);
	c->style = PLAIN;
}

static void rc_gbs(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v, u;

	(void)l;
	if (!spp_cell_num(r, "bandwidth_gbs", &v)) {
		set_null(c);
		return;
	}
	if (spp_cell_num(r, "bw_util", &u))
		snprintf(c->text, sizeof(c->text), "%.1f (%.0f%%)", v, u * 100);
	else
		snprintf(c->text, sizeof(c->text), "%.1f", v);
	c->style = PLAIN;
}

static void rc_imbalance(const cJSON *l, const cJSON *r, struct cell *c)
{
	double v;

	(void)l;
	if (!spp_cell_num(r, "imbalance", &v)) {
		set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), "%.2f", v);
	c->style = PLAIN;
}

static const struct run_column run_columns[] = {
	{"layer", 0, rc_layer},
	{"format", 0, rc_format},
	{"status", 0, rc_status},
	{"time", 1, rc_time},
	{"p10\xe2\x80\x93p90", 1, rc_spread},
	{"runs", 1, rc_repeats},
	{"speedup", 1, rc_speedup},
	{"efficiency", 1, rc_efficiency},
	{"GFLOP/s", 1, rc_gflops},
	{"GB/s", 1, rc_gbs},
	{"imbalance", 1, rc_imbalance},
};
#define NRCOL ((int)(sizeof(run_columns) / sizeof(run_columns[0])))

static void write_runs_table(const cJSON *report, FILE *f, int color)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l, *r;
	int w[NRCOL];
	struct cell c;

	for (int i = 0; i < NRCOL; i++) {
		w[i] = width(run_columns[i].title);
		cJSON_ArrayForEach(l, layers)
			cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL)) {
				run_columns[i].cell(l, r, &c);
				grow(&w[i], &c);
			}
	}
	fputc('\n', f);
	for (int i = 0; i < NRCOL; i++)
		put_cell(f, run_columns[i].title, PLAIN, w[i], run_columns[i].right,
			 i == NRCOL - 1, color, ANSI_BOLD);
	put_rule(f, w, NRCOL);
	cJSON_ArrayForEach(l, layers)
		cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL))
			for (int i = 0; i < NRCOL; i++) {
				run_columns[i].cell(l, r, &c);
				put_cell(f, c.text, c.style, w[i], run_columns[i].right,
					 i == NRCOL - 1, color, "");
			}
}

/* A header line: "label     value". */
static void header_line(FILE *f, int color, const char *label, const char *value)
{
	struct cell c;

	set_str(&c, value);
	fprintf(f, "%s%-9s%s %s\n", color ? ANSI_BOLD : "", label,
		color ? ANSI_RESET : "", c.text);
}

/*
 * What the runs ran on and how they were timed: only in a report that has
 * a machine description (BLAS) and run settings.
 */
static void write_machine_lines(const cJSON *r, FILE *f, int color)
{
	const cJSON *m = spp_cell_get(r, "machine"), *s = spp_cell_get(r, "settings");
	const char *cpu = spp_cell_str(m, "cpu"), *sched = spp_cell_str(s, "schedule");
	char line[512], reps[64];
	double v, t = 0, rt = 0;
	size_t used;

	if (!cJSON_IsObject(spp_cell_get(m, "dense_blas")))
		return;
	spp_cell_num(m, "threads", &t);
	used = (size_t)snprintf(line, sizeof(line), "%.120s, %s, %.0f thread%s, %s %s (%s)",
				cpu ? cpu : NULL_CELL,
				spp_cell_str(m, "isa") ? spp_cell_str(m, "isa") : NULL_CELL, t,
				t == 1 ? "" : "s",
				spp_cell_str(m, "dense_blas.name") ? spp_cell_str(m, "dense_blas.name") : "BLAS",
				spp_cell_str(m, "dense_blas.version") ? spp_cell_str(m, "dense_blas.version") : "",
				spp_cell_str(m, "dense_blas.core") ? spp_cell_str(m, "dense_blas.core") : NULL_CELL);
	if (spp_cell_num(m, "peak_bw_gbs", &v) && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, ", peak %.1f GB/s", v);
	header_line(f, color, "machine", line);
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
	snprintf(line, sizeof(line), "%s, %s, %s, %.0f thread%s, verified to %g x |W|.|X|",
		 sched, reps, cJSON_IsTrue(spp_cell_get(s, "cold")) ? "cold" : "warm",
		 rt, rt == 1 ? "" : "s", v);
	header_line(f, color, "runs", line);
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
		snprintf(c, sizeof(c), "%.2f%%", sp * 100);
	snprintf(line, sizeof(line), "%s, nnz %s, sparsity %s", a, b, c);
	header_line(f, color, "params", line);

	s = spp_cell_str(m, "hash.value");
	snprintf(line, sizeof(line), "%.12s (%s)", s ? s : NULL_CELL,
		 spp_cell_str(m, "hash.algo") ? spp_cell_str(m, "hash.algo") : NULL_CELL);
	header_line(f, color, "hash", s ? line : NULL);

	snprintf(a, sizeof(a), "%s", NULL_CELL);
	snprintf(b, sizeof(b), "%s", NULL_CELL);
	if (spp_cell_num(r, "settings.n", &v))
		spp_cell_number(v, a, sizeof(a));
	if (spp_cell_num(r, "settings.threads", &v))
		spp_cell_number(v, b, sizeof(b));
	else if (spp_cell_num(r, "machine.threads", &v))
		snprintf(b, sizeof(b), "%.0f (default)", v);
	snprintf(line, sizeof(line), "N %s, threads %s", a, b);
	header_line(f, color, "settings", line);
	write_machine_lines(r, f, color);
	fputc('\n', f);
}

static void write_warnings(const cJSON *r, FILE *f, int color)
{
	const cJSON *ws = spp_cell_get(r, "warnings"), *w;
	struct cell c;

	if (cJSON_GetArraySize(ws) == 0)
		return;
	fputc('\n', f);
	cJSON_ArrayForEach(w, (cJSON_IsArray(ws) ? ws : NULL)) {
		set_str(&c, cJSON_IsString(w) ? w->valuestring : NULL);
		fprintf(f, "%swarning:%s %s\n", color ? ANSI_YELLOW : "",
			color ? ANSI_RESET : "", c.text);
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
		if (has_runs(report))
			write_runs_table(report, f, color);
	} else
		fputs("no GEMM layers\n", f);
	write_warnings(report, f, color);
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the report: %s",
				     strerror(errno));
	return SPP_OK;
}
