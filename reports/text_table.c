/*
 * Cells and aligned columns of the text report's tables.
 */
#include "reports/text_table.h"

#include <math.h>
#include <string.h>

#include "base/safe_text.h"
#include "reports/cells.h"

int spp_text_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Copy s with every hostile code point escaped (spp_safe_copy), cut whole. */
void spp_text_set(struct spp_text_cell *c, const char *s)
{
	spp_safe_copy(c->text, sizeof(c->text), s, (size_t)-1);
	c->style = SPP_TEXT_PLAIN;
}

void spp_text_set_null(struct spp_text_cell *c)
{
	spp_text_set(c, NULL_CELL);
	c->style = SPP_TEXT_DIM;
}

void spp_text_set_str(struct spp_text_cell *c, const char *s)
{
	if (s)
		spp_text_set(c, s);
	else
		spp_text_set_null(c);
}

/* "10.0x": ratios and speedups with three significant digits. */
void spp_text_set_ratio(struct spp_text_cell *c, int known, double v)
{
	if (!known) {
		spp_text_set_null(c);
		return;
	}
	snprintf(c->text, sizeof(c->text), fabs(v) < 10 ? "%.2fx" : fabs(v) < 100 ? "%.1fx" : "%.0fx", v);
	c->style = SPP_TEXT_PLAIN;
}

void spp_text_layer_name(const cJSON *l, struct spp_text_cell *c)
{
	const char *name = spp_cell_str(l, "name"), *shown = spp_cell_str(l, "display_name");
	char buf[sizeof(c->text)];

	if (!name) {
		spp_text_set_null(c);
		return;
	}
	/* the unique abbreviation of spp_names_shorten, else the name elided */
	if (!shown)
		spp_names_elide(name, NAME_WIDTH, buf, sizeof(buf));
	spp_text_set(c, shown ? shown : buf);
}

void spp_text_set_time(struct spp_text_cell *c, int known, double ns)
{
	if (!known) {
		spp_text_set_null(c);
		return;
	}
	spp_cell_time(ns, c->text, sizeof(c->text));
	c->style = SPP_TEXT_PLAIN;
}

void spp_text_put_cell(FILE *f, const char *text, enum spp_text_style st, int w, int right,
		       int last, int color, const char *row_style)
{
	static const char *const style_code[] = {"", ANSI_DIM, ANSI_GREEN};
	int pad = w - spp_text_width(text);

	if (pad < 0)
		pad = 0;
	if (right)
		fprintf(f, "%*s", pad, "");
	if (color && (st != SPP_TEXT_PLAIN || *row_style))
		fprintf(f, "%s%s%s" ANSI_RESET, row_style, style_code[st], text);
	else
		fputs(text, f);
	if (!right && !last)
		fprintf(f, "%*s", pad, "");
	fputs(last ? "\n" : "  ", f);
}

void spp_text_grow(int *w, const struct spp_text_cell *c)
{
	if (spp_text_width(c->text) > *w)
		*w = spp_text_width(c->text);
}

void spp_text_put_rule(FILE *f, const int *w, int ncol)
{
	int total = 2 * (ncol - 1);

	for (int i = 0; i < ncol; i++)
		total += w[i];
	for (int i = 0; i < total; i++)
		fputc('-', f);
	fputc('\n', f);
}

/* Whether any layer has kernel runs (a static report has none). */
int spp_text_has_runs(const cJSON *report)
{
	const cJSON *layers = spp_cell_get(report, "layers"), *l;

	cJSON_ArrayForEach(l, (cJSON_IsArray(layers) ? layers : NULL))
		if (cJSON_GetArraySize(spp_cell_get(l, "runs")) > 0)
			return 1;
	return 0;
}
