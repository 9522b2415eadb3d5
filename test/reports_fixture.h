/*
 * The reports tests' shared fixture: an analysis filled by hand with
 * figures worked out from DESIGN section 3 (so the tests check the report
 * part alone, not the static analysis), the tree built from it, rendering
 * into a heap string and comparing a tree with expected JSON.
 */
#ifndef SPP_TEST_REPORTS_FIXTURE_H
#define SPP_TEST_REPORTS_FIXTURE_H

#include <cjson/cJSON.h>

#include "reports/report.h"

#define REASON_NA "not 2:4 compliant (50% of groups)"

struct fixture {
	struct spp_tensor *tensors;
	struct spp_model model;
	struct spp_layer *layers;
	struct spp_layer_static *stats;
	struct spp_warning warnings[1];
	struct spp_analysis a;
	char names[300][64];
};

/* Three hand-worked layers plus a bias (nlayers < 0), or nlayers copies of layer 0 (0 allowed). */
void fixture_init(struct fixture *fx, int nlayers);

void fixture_fini(struct fixture *fx);

/* The report tree of fx (version "9.9.9"); the test fails when it cannot be built. */
cJSON *build(struct fixture *fx);

/* Render r into a heap string; the test fails on an error. */
char *render(const cJSON *r, enum spp_report_format fmt, int color);

/*
 * Every name in the JSON text want_text is present in got with the same
 * type and value (numbers to 1e-12 relative); names not given are not
 * checked. where names the spot in a failure message.
 */
void expect_json(const char *want_text, const cJSON *got, const char *where);

/* The writers' tests, in test_reports_text.c and test_reports_shared.c. */
void test_text(void **state);
void test_text_nsweep(void **state);
void test_fractions(void **state);
void test_safe_text(void **state);
void test_unique_short_names(void **state);
void test_warning_codes(void **state);
void test_csv_columns_documented(void **state);
void test_golden(void **state);
void test_text_sizes(void **state);
void test_csv(void **state);
void test_selections_agree(void **state); /* test_reports_select.c */
void test_run_columns_from_table(void **state); /* test_reports_select.c */

#endif
