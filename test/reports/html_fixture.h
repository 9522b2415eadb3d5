/*
 * Reports for the HTML tests (test_html.c, test_html_browser.c): a
 * 12-layer and a 300-layer model made with `spprof synth`, analysed
 * static and with runs, and two hand-made reports derived from those:
 * "full" (breakeven curves, cache blocks, calibrated peaks,
 * recommendations and a hostile layer name, so every chart kind is drawn)
 * and "odd" (those blocks present but mistyped, so every chart must fall
 * back to its note).
 */
#ifndef SPP_TEST_HTML_FIXTURE_H
#define SPP_TEST_HTML_FIXTURE_H

#include <cjson/cJSON.h>

enum html_case { HC_S12, HC_R12, HC_S300, HC_R300, HC_FULL, HC_FULL300, HC_ODD, HC_COUNT };

/* The hostile name given to layer 0 of the hand-made reports. */
#define HTML_EVIL_NAME "<script>alert(1)</script>&\"'x"
/* Peaks written into the hand-made reports. */
#define HTML_PEAK_GFLOPS 200.0
#define HTML_PEAK_BW 20.0

struct html_fixture {
	char *dir;
	char *json[HC_COUNT]; /* report paths */
	char *html[HC_COUNT]; /* rendered with `spprof report JSON -o HTML` */
};

/* Names of the cases, for messages. */
extern const char *const html_case_name[HC_COUNT];

/* Build every report and render it; 0 on success (messages on stderr otherwise). */
int html_fixture_setup(struct html_fixture *fx);

void html_fixture_teardown(struct html_fixture *fx);

/* Parse a JSON file; NULL when unreadable. */
cJSON *html_fixture_load(const char *path);

/* Occurrences of needle in hay. */
int html_count(const char *hay, const char *needle);

/*
 * The synthetic breakeven curve of the hand-made reports: speedup of a
 * format at sparsity s for a layer, a function of s with a known crossing.
 */
double html_curve_speedup(double s, double breakeven);

#endif
