/*
 * Reading a rendered report back in tests, written here so a test does not
 * trust the writers' own lookups: a dotted path through a JSON tree, and CSV
 * text parsed with libcsv into a table of heap-string cells.
 */
#ifndef SPP_TEST_REPORT_READ_H
#define SPP_TEST_REPORT_READ_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Member at a dotted path ("pattern.row_nnz.cv") through objects; NULL when absent. */
const cJSON *report_dotted(const cJSON *o, const char *path);

/* The number at a dotted path; the test fails when it is not a number. */
double report_num(const cJSON *o, const char *path);

/* CSV cells by row; row 0 is the header. */
struct csv_table {
	char *cell[16][256];
	int ncell[16];
	int rows;
};

/*
 * Parse text strictly (the test fails on a CSV error, more than 16 rows or
 * 256 cells, or a row whose length differs from the header's).
 */
void csv_table_parse(const char *text, size_t len, struct csv_table *t);

void csv_table_free(struct csv_table *t);

/* Index of the header cell name; the test fails when there is none. */
int csv_table_col(const struct csv_table *t, const char *name);

#endif
