/*
 * The report's JSON Schema (docs/report.schema.json) and its field
 * reference (docs/METRICS.md): every kind of report the binary writes
 * validates against the schema, a damaged one does not, and the schema and
 * METRICS.md name exactly the same fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "profiler/layer.h"
#include "profiler/run.h"
#include "test/harness.h"

static const char *const models[] = {
	"bert_block_nm2_4.safetensors", "bert_block_unstructured90.safetensors",
	"bert_block_block4.safetensors", "mixed_cnn.safetensors",
};

#define NMODELS (sizeof(models) / sizeof(models[0]))

/* Validate every file given with the schema; one line per fault, exit 1 on any. */
static const char validator[] =
	"import json, sys\n"
	"from jsonschema import Draft202012Validator as V\n"
	"s = json.load(open(sys.argv[1]))\n"
	"V.check_schema(s)\n"
	"v, bad = V(s), 0\n"
	"for f in sys.argv[2:]:\n"
	"    for e in v.iter_errors(json.load(open(f))):\n"
	"        bad += 1\n"
	"        print(f, list(e.absolute_path), e.message[:200])\n"
	"print('validated', len(sys.argv) - 2, 'faults', bad)\n"
	"sys.exit(1 if bad else 0)\n";

static char *docs_path(const char *name)
{
	const char *data = getenv("SPP_TEST_DATA");
	char *docs, *p;

	assert_non_null(data);
	docs = harness_join(data, "../../docs");
	p = harness_join(docs, name);
	free(docs);
	return p;
}

static int have_jsonschema(void)
{
	struct harness_run r;
	const char *args[] = {"python3", "-c", "import jsonschema", NULL};
	int ok = harness_exec(&r, "/usr/bin/env", args) == 0 && r.status == 0;

	harness_run_free(&r);
	return ok;
}

static void analyze(const char *model, const char *out, int runs)
{
	struct harness_run r;
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *m = harness_join(root, model);
	const char *sargs[] = {"analyze", m, "--static", "-o", out, "--quiet", NULL};
	const char *rargs[] = {"analyze", m, "--repeat", "1", "--time-budget", "0.01",
			       "-o", out, "--quiet", NULL};

	assert_int_equal(harness_spprof(&r, runs ? rargs : sargs), 0);
	if (r.status != 0)
		fail_msg("analyze %s: %s", model, r.err);
	harness_run_free(&r);
	free(m);
}

/* Run the validator on files; returns its exit status, stdout in *out when wanted. */
static int validate(const char *const *files, int n, char **out)
{
	struct harness_run r;
	char *schema = docs_path("report.schema.json");
	const char *args[40] = {"python3", "-c", validator, schema};
	int status;

	assert_true(n + 5 < 40);
	for (int i = 0; i < n; i++)
		args[4 + i] = files[i];
	args[4 + n] = NULL;
	assert_int_equal(harness_exec(&r, "/usr/bin/env", args), 0);
	status = r.status;
	if (out)
		*out = strdup(r.out);
	if (status != 0 && !out)
		fprintf(stderr, "%s%s", r.out, r.err);
	harness_run_free(&r);
	free(schema);
	return status;
}

static void test_reports_validate(void **state)
{
	char *dir = harness_tmpdir(), *files[2 * NMODELS + 6], name[64], *out = NULL;
	int n = 0;

	(void)state;
	if (!have_jsonschema()) {
		harness_rmtree(dir);
		skip(); /* python3-jsonschema is not installed (scripts/setup installs it) */
	}
	for (size_t i = 0; i < NMODELS; i++) {
		for (int runs = 0; runs < 2; runs++) {
			snprintf(name, sizeof(name), "%zu_%s.json", i, runs ? "runs" : "static");
			files[n] = harness_join(dir, name);
			analyze(models[i], files[n], runs);
			n++;
		}
	}
	/* a report with each layer's speedup against N (--n-sweep) */
	{
		struct harness_run r;
		char *m = harness_join(getenv("SPP_SAMPLE_MODELS"), models[0]);
		const char *args[] = {"analyze", m, "--n-sweep", "1,4", "--formats", "csr,nm2_4", "--repeat", "1",
				      "--time-budget", "0.01", "-o", NULL, "--quiet", NULL};

		files[n] = harness_join(dir, "n_sweep.json");
		args[11] = files[n];
		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("analyze --n-sweep: %s", r.err);
		harness_run_free(&r);
		free(m);
		n++;
	}
	/* a shard's report with repeated layers copied (--shard, --dedupe) */
	{
		struct harness_run r;
		char *m = harness_join(getenv("SPP_SAMPLE_MODELS"), models[0]);
		const char *args[] = {"analyze", m, "--shard", "0/1", "--dedupe", "--formats", "csr",
				      "--repeat", "1", "-o", NULL, "--quiet", NULL};
		const char *margs[] = {"merge", NULL, "-o", NULL, NULL};

		files[n] = harness_join(dir, "shard.json");
		args[10] = files[n];
		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("analyze --shard --dedupe: %s", r.err);
		harness_run_free(&r);
		/* and the report merged from it (spprof merge) */
		margs[1] = files[n++];
		files[n] = harness_join(dir, "merged.json");
		margs[3] = files[n];
		assert_int_equal(harness_spprof(&r, margs), 0);
		if (r.status != 0)
			fail_msg("merge: %s", r.err);
		harness_run_free(&r);
		free(m);
		n++;
	}
	/* a report with the fused and unfused epilogue of each format (--epilogue) */
	{
		struct harness_run r;
		char *m = harness_join(getenv("SPP_SAMPLE_MODELS"), models[0]);
		const char *args[] = {"analyze", m, "--epilogue", "bias_relu", "--formats", "csr,nm2_4", "--repeat",
				      "2", "--counters", "none", "-o", NULL, "--quiet", NULL};

		files[n] = harness_join(dir, "epilogue.json");
		args[11] = files[n];
		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("analyze --epilogue: %s", r.err);
		harness_run_free(&r);
		{
			/* the sample model has biases: the runs say so, with both times */
			char *text = harness_slurp(files[n], NULL);

			assert_non_null(text);
			assert_non_null(strstr(text, "\"fused_time_ns\":\t{"));
			assert_non_null(strstr(text, "\"bias\":\t\"model\""));
			free(text);
		}
		free(m);
		n++;
	}
	/*
	 * a report with the simulator's figures beside the counters' (--counters
	 * perf,sim), made from a runs report so that it needs no PMU: every
	 * cache block is a counted one and its copy is the simulator's
	 */
	{
		char *text = harness_slurp(files[1], NULL), *printed;
		cJSON *r = cJSON_Parse(text), *l, *run;
		int beside = 0;

		assert_non_null(r);
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(r, "settings"), "counters",
					  cJSON_CreateString("perf,sim"));
		cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "layers"))
			cJSON_ArrayForEach(run, cJSON_GetObjectItem(l, "runs")) {
				cJSON *c = cJSON_GetObjectItem(run, "cache");

				if (!cJSON_IsObject(c))
					continue;
				cJSON_ReplaceItemInObject(run, "cache_sim", cJSON_Duplicate(c, 1));
				cJSON_ReplaceItemInObject(c, "source", cJSON_CreateString("perf"));
				cJSON_ReplaceItemInObject(c, "geometry", cJSON_CreateNull());
				beside++;
			}
		assert_true(beside > 0);
		printed = cJSON_Print(r);
		files[n] = harness_join(dir, "beside.json");
		assert_int_equal(harness_write(files[n], printed, strlen(printed)), 0);
		n++;
		cJSON_free(printed);
		cJSON_Delete(r);
		free(text);
	}
	/* a report re-written by `spprof report` is a report too */
	{
		struct harness_run r;
		const char *args[] = {"report", files[1], "--format", "json", "-o", NULL, NULL};

		files[n] = harness_join(dir, "rewritten.json");
		args[5] = files[n];
		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		harness_run_free(&r);
		n++;
	}
	assert_int_equal(validate((const char *const *)files, n, &out), 0);
	assert_non_null(strstr(out, "validated 14 faults 0"));
	free(out);

	/* the schema is not vacuous: a figure as a string, a stray field, no model */
	{
		char *text = harness_slurp(files[1], NULL), *bad, *printed;
		cJSON *r = cJSON_Parse(text), *l;
		const char *one[1];

		assert_non_null(r);
		l = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 0);
		cJSON_ReplaceItemInObject(l, "sparsity", cJSON_CreateString("0.5"));
		cJSON_AddNumberToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "runs"), 0), "speed", 1);
		/* cache_sim is held to cache's schema */
		cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "runs"), 0), "cache_sim",
					  cJSON_Parse("{\"source\": \"sim\", \"l1d_misses\": \"many\"}"));
		cJSON_DeleteItemFromObject(r, "model");
		printed = cJSON_Print(r);
		bad = harness_join(dir, "bad.json");
		assert_int_equal(harness_write(bad, printed, strlen(printed)), 0);
		one[0] = bad;
		assert_int_equal(validate(one, 1, &out), 1);
		assert_non_null(strstr(out, "'model' is a required property"));
		assert_non_null(strstr(out, "'0.5' is not of type 'number', 'null'"));
		assert_non_null(strstr(out, "'speed' was unexpected"));
		assert_non_null(strstr(out, "'many' is not of type 'number', 'null'"));
		assert_non_null(strstr(out, "faults 4"));
		free(out);
		free(bad);
		cJSON_free(printed);
		cJSON_Delete(r);
		free(text);
	}
	for (int i = 0; i < n; i++)
		free(files[i]);
	harness_rmtree(dir);
}

struct fields {
	char *v[600];
	int n;
};

static void add(struct fields *f, const char *s)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->v[i], s))
			return;
	assert_true(f->n < 600);
	f->v[f->n++] = strdup(s);
}

static int has(const struct fields *f, const char *s)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->v[i], s))
			return 1;
	return 0;
}

static void walk(const cJSON *node, const char *prefix, struct fields *out);

/* What a property's schema holds below it: an object, array items, a map. */
static void below(const cJSON *v, const char *path, struct fields *out)
{
	const cJSON *items = cJSON_GetObjectItem(v, "items");
	const cJSON *ap = cJSON_GetObjectItem(v, "additionalProperties");
	char sub[300];

	if (cJSON_GetObjectItem(v, "properties")) {
		snprintf(sub, sizeof(sub), "%s.", path);
		walk(v, sub, out);
	}
	if (cJSON_IsObject(items) && cJSON_GetObjectItem(items, "properties")) {
		snprintf(sub, sizeof(sub), "%s[].", path);
		walk(items, sub, out);
	}
	if (cJSON_IsObject(ap) && cJSON_GetObjectItem(ap, "properties")) {
		snprintf(sub, sizeof(sub), "%s.*.", path);
		walk(ap, sub, out);
	}
}

static void walk(const cJSON *node, const char *prefix, struct fields *out)
{
	const cJSON *p;
	char path[240];

	cJSON_ArrayForEach(p, cJSON_GetObjectItem(node, "properties")) {
		snprintf(path, sizeof(path), "%s%s", prefix, p->string);
		add(out, path);
		below(p, path, out);
	}
}

/* The first cell of every table row that starts "| `path` |" (METRICS.md's convention). */
static void doc_fields(const char *text, struct fields *out)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end;
		char field[256];

		if (strncmp(line, "| `", 3) != 0)
			continue;
		end = strchr(line + 3, '`');
		assert_non_null(end);
		assert_true((size_t)(end - line - 3) < sizeof(field));
		memcpy(field, line + 3, (size_t)(end - line - 3));
		field[end - line - 3] = '\0';
		add(out, field);
	}
}

/* Text of doc from the line starting with start up to the next occurrence of stop (heap). */
static char *doc_part(const char *doc, const char *start, const char *stop)
{
	const char *a = strstr(doc, start), *b = a ? strstr(a + strlen(start), stop) : NULL;

	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

/* METRICS.md names every op a layer can have, in the op row and in the GEMM view table. */
static void test_metrics_doc_ops(void **state)
{
	char *doc_path = docs_path("METRICS.md"), *doc = harness_slurp(doc_path, NULL);
	char *row, *view, want[48];

	(void)state;
	assert_non_null(doc);
	row = doc_part(doc, "| `layers[].op` |", "\n");
	view = doc_part(doc, "### The GEMM view of a layer", "\n### ");
	for (int op = 0; op <= SPP_OP_RNN; op++) {
		snprintf(want, sizeof(want), "`%s`", spp_op_name((enum spp_op)op));
		if (!strstr(row, want) || !strstr(view, want))
			fail_msg("METRICS.md lacks op %s in the %s", want,
				 strstr(row, want) ? "GEMM view table" : "layers[].op row");
	}
	free(row), free(view), free(doc), free(doc_path);
}

/*
 * Every "enum" of the schema that lists storage formats (it holds "csr")
 * must be the format table's keys in its order (spp_storage_key over
 * enum spp_storage_fmt), so a format added to the table and not to the
 * schema fails here; the count of such enums, -1 on a mismatch.
 */
static int storage_enums(const cJSON *node)
{
	int count = 0;

	for (const cJSON *c = node ? node->child : NULL; c; c = c->next) {
		int k;

		if (c->string && strcmp(c->string, "enum") == 0 && cJSON_IsArray(c)) {
			int csr = 0, n = cJSON_GetArraySize(c);

			for (int i = 0; i < n; i++)
				csr |= cJSON_IsString(cJSON_GetArrayItem(c, i)) &&
				       strcmp(cJSON_GetArrayItem(c, i)->valuestring, "csr") == 0;
			if (!csr)
				continue;
			if (n != SPP_ST_COUNT) {
				fprintf(stderr, "a storage format enum of the schema has %d entries, the table %d\n",
					n, SPP_ST_COUNT);
				return -1;
			}
			for (int f = 0; f < SPP_ST_COUNT; f++) {
				const cJSON *e = cJSON_GetArrayItem(c, f);

				if (!cJSON_IsString(e) || strcmp(e->valuestring, spp_storage_key((enum spp_storage_fmt)f))) {
					fprintf(stderr, "a storage format enum of the schema has '%s' where the "
						"table has '%s'\n", cJSON_IsString(e) ? e->valuestring : "?",
						spp_storage_key((enum spp_storage_fmt)f));
					return -1;
				}
			}
			count++;
		} else if ((k = storage_enums(c)) < 0) {
			return -1;
		} else {
			count += k;
		}
	}
	return count;
}

static void test_metrics_doc_in_step(void **state)
{
	char *schema_path = docs_path("report.schema.json"), *doc_path = docs_path("METRICS.md");
	char *schema_text = harness_slurp(schema_path, NULL), *doc = harness_slurp(doc_path, NULL);
	struct fields s = {0}, d = {0};
	cJSON *schema;
	int missing = 0;

	(void)state;
	assert_non_null(schema_text);
	assert_non_null(doc);
	schema = cJSON_Parse(schema_text);
	assert_non_null(schema);
	walk(schema, "", &s);
	doc_fields(doc, &d);
	/* both sides are substantial: a broken parser must not compare two empty sets */
	assert_true(s.n > 150);
	assert_true(has(&s, "layers[].runs[].time_ns.p90"));
	assert_true(has(&s, "layers[].storage.*.bytes"));
	assert_true(has(&d, "layers[].breakeven.*.curve[].speedup"));
	/* the storage format enums are the format table's (4 of them: layers' and summary's) */
	assert_true(storage_enums(schema) >= 4);
	/* every row of the run-figure table is a field of the schema */
	for (int i = 0; i < spp_run_figure_nrows; i++) {
		char field[96];

		snprintf(field, sizeof(field), "layers[].runs[].%s", spp_run_figure_rows[i].key);
		if (!has(&s, field)) {
			fprintf(stderr, "run figure '%s' (SPP_RUN_FIGURES) is not in the schema\n",
				spp_run_figure_rows[i].key);
			missing++;
		}
	}
	for (int i = 0; i < d.n; i++)
		if (!has(&s, d.v[i])) {
			fprintf(stderr, "METRICS.md documents '%s', which the schema lacks\n", d.v[i]);
			missing++;
		}
	for (int i = 0; i < s.n; i++)
		if (!has(&d, s.v[i])) {
			fprintf(stderr, "the schema has '%s', which METRICS.md does not document\n", s.v[i]);
			missing++;
		}
	assert_int_equal(missing, 0);
	assert_int_equal(s.n, d.n);
	for (int i = 0; i < s.n; i++)
		free(s.v[i]);
	for (int i = 0; i < d.n; i++)
		free(d.v[i]);
	cJSON_Delete(schema);
	free(schema_text);
	free(doc);
	free(schema_path);
	free(doc_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_doc_in_step),
		cmocka_unit_test(test_metrics_doc_ops),
		cmocka_unit_test(test_reports_validate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
