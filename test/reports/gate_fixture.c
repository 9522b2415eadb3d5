#include "test/reports/gate_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/harness.h"

struct gate_fixture gate_fx;

char *gate_sample(const char *name)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");

	assert_non_null(root);
	return harness_join(root, name);
}

static char *analyze(const char *model, const char *out, int runs)
{
	struct harness_run r;
	char *m = gate_sample(model), *path = harness_join(gate_fx.dir, out);
	const char *sargs[] = {"analyze", m, "--static", "--format", "json", "-o", path,
			       "--quiet", NULL};
	const char *rargs[] = {"analyze", m, "--repeat", "3", "--format", "json", "-o", path,
			       "--quiet", NULL};

	assert_int_equal(harness_spprof(&r, runs ? rargs : sargs), 0);
	if (r.status != 0)
		fprintf(stderr, "analyze %s: %s\n", model, r.err);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	free(m);
	return path;
}

int gate_fixture_setup(void **state)
{
	(void)state;
	/* the same "created" in every report, as a pipeline would pin it */
	setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
	gate_fx.dir = harness_tmpdir();
	if (!gate_fx.dir)
		return -1;
	gate_fx.runs = analyze("bert_block_nm2_4.safetensors", "runs.json", 1);
	gate_fx.static_nm = analyze("bert_block_nm2_4.safetensors", "static_nm.json", 0);
	gate_fx.static_un = analyze("bert_block_unstructured90.safetensors", "static_un.json", 0);
	return 0;
}

int gate_fixture_teardown(void **state)
{
	(void)state;
	free(gate_fx.runs);
	free(gate_fx.static_nm);
	free(gate_fx.static_un);
	harness_rmtree(gate_fx.dir);
	memset(&gate_fx, 0, sizeof(gate_fx));
	return 0;
}

cJSON *gate_load(const char *path)
{
	char *text = harness_slurp(path, NULL);
	cJSON *t;

	assert_non_null(text);
	t = cJSON_Parse(text);
	free(text);
	assert_non_null(t);
	return t;
}

/*
 * cJSON prints a double with 15 digits whenever that reads back within its
 * epsilon, which changes the last bits; a test that compares a figure with
 * its copy needs the copy exact, so numbers are printed with 17 digits.
 */
static void exact(cJSON *node)
{
	for (cJSON *c = node->child; c; c = c->next) {
		if (cJSON_IsNumber(c)) {
			char buf[40], *raw;

			snprintf(buf, sizeof(buf), "%.17g", c->valuedouble);
			raw = cJSON_malloc(strlen(buf) + 1);
			assert_non_null(raw);
			memcpy(raw, buf, strlen(buf) + 1);
			c->type = cJSON_Raw;
			c->valuestring = raw;
		} else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			exact(c);
		}
	}
}

char *gate_save(const cJSON *tree, const char *name)
{
	cJSON *copy = cJSON_Duplicate(tree, 1);
	char *text, *path = harness_join(gate_fx.dir, name);

	assert_non_null(copy);
	exact(copy);
	text = cJSON_Print(copy);
	assert_non_null(text);
	assert_int_equal(harness_write(path, text, strlen(text)), 0);
	cJSON_free(text);
	cJSON_Delete(copy);
	return path;
}

char *gate_write_text(const char *name, const char *text)
{
	char *path = harness_join(gate_fx.dir, name);

	assert_int_equal(harness_write(path, text, strlen(text)), 0);
	return path;
}

cJSON *gate_layer(cJSON *report, const char *name)
{
	cJSON *l;

	cJSON_ArrayForEach(l, cJSON_GetObjectItem(report, "layers")) {
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(l, "name"));

		if (n && !strcmp(n, name))
			return l;
	}
	fail_msg("no layer '%s'", name);
	return NULL;
}

cJSON *gate_run(cJSON *layer, const char *format)
{
	cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItem(layer, "runs")) {
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItem(r, "format"));

		if (f && !strcmp(f, format))
			return r;
	}
	fail_msg("no run '%s'", format);
	return NULL;
}

static void set_num(cJSON *o, const char *key, double v)
{
	cJSON_DeleteItemFromObject(o, key);
	assert_non_null(cJSON_AddNumberToObject(o, key, v));
}

void gate_set_times(cJSON *run, double median, double p10, double p90, double speedup)
{
	cJSON *t = cJSON_GetObjectItem(run, "time_ns");

	assert_true(cJSON_IsObject(t));
	set_num(t, "median", median);
	set_num(t, "p10", p10);
	set_num(t, "p90", p90);
	set_num(run, "speedup", speedup);
	/* the run's own intervals belong to its own times: none for the times set here */
	cJSON_DeleteItemFromObject(t, "ci_low");
	cJSON_DeleteItemFromObject(t, "ci_high");
	cJSON_DeleteItemFromObject(run, "speedup_ci_low");
	cJSON_DeleteItemFromObject(run, "speedup_ci_high");
}

void gate_speedups_from_times(cJSON *layer)
{
	cJSON *runs = cJSON_GetObjectItem(layer, "runs"), *r;
	double dense = cJSON_GetNumberValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "time_ns"), "median"));

	cJSON_ArrayForEach(r, runs) {
		double t = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "time_ns"), "median"));

		if (t > 0 && dense > 0 && cJSON_IsNumber(cJSON_GetObjectItem(r, "speedup")))
			set_num(r, "speedup", dense / t);
	}
}

int gate_count(const char *s, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);

	for (const char *p = strstr(s, needle); p; p = strstr(p + len, needle))
		n++;
	return n;
}
