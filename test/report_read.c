#include "test/report_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <csv.h>

const cJSON *report_dotted(const cJSON *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	return o;
}

static void on_field(void *s, size_t len, void *data)
{
	struct csv_table *t = data;

	assert_true(t->rows < 16 && t->ncell[t->rows] < 256);
	t->cell[t->rows][t->ncell[t->rows]++] = strndup(s ? s : "", len);
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct csv_table *)data)->rows++;
}

void csv_table_parse(const char *text, size_t len, struct csv_table *t)
{
	struct csv_parser p;

	memset(t, 0, sizeof(*t));
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
	assert_int_equal(csv_parse(&p, text, len, on_field, on_row, t), len);
	assert_int_equal(csv_fini(&p, on_field, on_row, t), 0);
	csv_free(&p);
	for (int r = 1; r < t->rows; r++)
		assert_int_equal(t->ncell[r], t->ncell[0]);
}

void csv_table_free(struct csv_table *t)
{
	for (int r = 0; r < t->rows; r++)
		for (int c = 0; c < t->ncell[r]; c++)
			free(t->cell[r][c]);
}

int csv_table_col(const struct csv_table *t, const char *name)
{
	for (int c = 0; c < t->ncell[0]; c++)
		if (strcmp(t->cell[0][c], name) == 0)
			return c;
	fail_msg("no CSV column \"%s\"", name);
	return -1;
}

double report_num(const cJSON *o, const char *path)
{
	const cJSON *v = report_dotted(o, path);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}
