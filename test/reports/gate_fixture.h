/*
 * Fixtures of the gate tests (compare, check, progress): reports written
 * by the real binary from the sample models once per run, and edited
 * copies of them whose figures the tests set by hand.
 */
#ifndef SPP_TEST_GATE_FIXTURE_H
#define SPP_TEST_GATE_FIXTURE_H

#include <cjson/cJSON.h>

struct gate_fixture {
	char *dir;        /* scratch folder */
	char *runs;       /* bert_block_nm2_4, --repeat 3, every format */
	char *static_nm;  /* bert_block_nm2_4 --static */
	char *static_un;  /* bert_block_unstructured90 --static */
};

extern struct gate_fixture gate_fx;

/* cmocka group setup / teardown: write and remove the reports. */
int gate_fixture_setup(void **state);
int gate_fixture_teardown(void **state);

/* A sample model's path (heap string). */
char *gate_sample(const char *name);

/* Parse a JSON file (the test fails when it cannot). */
cJSON *gate_load(const char *path);

/* Write tree as JSON to dir/name; returns the heap path. */
char *gate_save(const cJSON *tree, const char *name);

/* Write text to dir/name; returns the heap path. */
char *gate_write_text(const char *name, const char *text);

/* Layer named name in a report tree (the test fails when absent). */
cJSON *gate_layer(cJSON *report, const char *name);

/* The run backend/format of a layer (the test fails when absent). */
cJSON *gate_run(cJSON *layer, const char *format);

/* Set a run's time_ns and speedup (dense median / this median). */
void gate_set_times(cJSON *run, double median, double p10, double p90, double speedup);

/* Each timed run's speedup of layer as its times give it (the dense run's median over its
 * own), as a report must hold it to load (reports/load.c) once a test has set times. */
void gate_speedups_from_times(cJSON *layer);

/* Occurrences of needle in s. */
int gate_count(const char *s, const char *needle);

#endif
