/*
 * End-to-end tests of `spprof compare` and `spprof check` on reports the
 * binary writes from the sample models, and on copies whose figures the
 * tests set by hand (so every expected value here is computed, not read
 * back from the code under test).
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

#include "test/reports/gate_fixture.h"
#include "test/harness.h"

#define Q "encoder.layer.0.attention.self.query.weight"
#define K "encoder.layer.0.attention.self.key.weight"
#define FC2 "encoder.layer.0.output.dense.weight"

#define RUN(r, ...)                                                            \
	do {                                                                   \
		const char *args_[] = {__VA_ARGS__, NULL};                     \
		assert_int_equal(harness_spprof((r), args_), 0);               \
	} while (0)

static double num_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* The compare entry of metric in a layer of a compare tree. */
static const cJSON *entry(const cJSON *diff, const char *layer, const char *metric)
{
	const cJSON *l, *e;

	cJSON_ArrayForEach(l, cJSON_GetObjectItem(diff, "layers")) {
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(l, "name")), layer))
			continue;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(l, "metrics"))
			if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "metric")), metric))
				return e;
	}
	fail_msg("no %s in %s", metric, layer);
	return NULL;
}

/* NEW: the runs report with K renamed, FC2 dropped, Q's csr storage 100 bytes larger. */
static char *edited_report(double *q_csr_bytes)
{
	cJSON *r = gate_load(gate_fx.runs), *layers = cJSON_GetObjectItem(r, "layers");
	cJSON *q = gate_layer(r, Q), *csr = cJSON_GetObjectItem(cJSON_GetObjectItem(q, "storage"), "csr");
	cJSON *k = gate_layer(r, K), *b = cJSON_GetObjectItem(csr, "bytes");
	char *path;
	int i = 0;

	*q_csr_bytes = b->valuedouble;
	cJSON_SetNumberValue(b, b->valuedouble + 100);
	cJSON_ReplaceItemInObject(k, "name", cJSON_CreateString("encoder.layer.0.attention.self.key2.weight"));
	cJSON_ArrayForEach(q, layers) {
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(q, "name")), FC2))
			break;
		i++;
	}
	cJSON_DeleteItemFromArray(layers, i);
	path = gate_save(r, "edited.json");
	cJSON_Delete(r);
	return path;
}

static void test_compare(void **state)
{
	struct harness_run r;
	double bytes;
	char *edited = edited_report(&bytes), want[256];
	cJSON *diff;
	const cJSON *e;

	(void)state;
	RUN(&r, "compare", gate_fx.runs, edited, "--format", "json");
	assert_int_equal(r.status, 0);
	diff = cJSON_Parse(r.out);
	assert_non_null(diff);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(diff, "schema")), "spprof.compare/1");
	e = cJSON_GetObjectItem(diff, "added");
	assert_int_equal(cJSON_GetArraySize(e), 1);
	assert_string_equal(cJSON_GetArrayItem(e, 0)->valuestring, "encoder.layer.0.attention.self.key2.weight");
	e = cJSON_GetObjectItem(diff, "removed");
	assert_int_equal(cJSON_GetArraySize(e), 2);
	assert_string_equal(cJSON_GetArrayItem(e, 0)->valuestring, K);
	assert_string_equal(cJSON_GetArrayItem(e, 1)->valuestring, FC2);
	e = entry(diff, Q, "storage.csr.bytes");
	assert_true(num_at(e, "base") == bytes);
	assert_true(num_at(e, "new") == bytes + 100);
	assert_true(num_at(e, "delta") == 100);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "change")), "changed");
	e = entry(diff, Q, "sparsity");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "change")), "same");
	/* timed figures are there, identical here: same file's runs */
	e = entry(diff, Q, "runs[cpu/csr].speedup");
	assert_true(num_at(e, "delta") == 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "time_based")));
	assert_true(num_at(cJSON_GetObjectItem(diff, "summary"), "layers_common") == 4);
	cJSON_Delete(diff);
	harness_run_free(&r);

	RUN(&r, "compare", gate_fx.runs, edited);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "added layer encoder.layer.0.attention.self.key2.weight"));
	assert_non_null(strstr(r.out, "removed layer " FC2));
	assert_non_null(strstr(r.out, "storage.csr.bytes"));
	assert_non_null(strstr(r.out, "+100"));
	harness_run_free(&r);

	RUN(&r, "compare", gate_fx.runs, edited, "--format", "csv");
	assert_int_equal(r.status, 0);
	/* quoted only where RFC 4180 needs it, as analyze's CSV */
	assert_true(strncmp(r.out, "scope,layer,metric,base,new,delta,rel_change,change\n", 52) == 0);
	snprintf(want, sizeof(want), "layer," Q ",storage.csr.bytes,%.0f,%.0f,100,",
		 bytes, bytes + 100);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "layer," FC2 ",,,,,,removed\n"));
	harness_run_free(&r);

	RUN(&r, "compare", gate_fx.runs, edited, "--format", "md");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "### spprof compare"));
	assert_non_null(strstr(r.out, "#### Added layers"));
	assert_non_null(strstr(r.out, "| `storage.csr.bytes` |"));
	harness_run_free(&r);

	/* one report: usage; a damaged one: bad input */
	RUN(&r, "compare", gate_fx.runs);
	assert_int_equal(r.status, 2);
	harness_run_free(&r);
	free(edited);
}

static void test_check_bounds(void **state)
{
	struct harness_run r;
	char *rules = gate_write_text("bounds.json",
		"{\"rules\": ["
		"{\"name\": \"pruned\", \"expr\": \"model.sparsity >= 0.4\"},"
		"{\"name\": \"2:4\", \"expr\": \"layers[*].pattern.nm2_4 == 1\"},"
		"{\"name\": \"attention\", \"expr\": \"layers[\\\"*.attention.*\\\"].sparsity > 0.49\"},"
		"{\"name\": \"class\", \"expr\": \"layers[*].pattern.class != \\\"unstructured\\\"\"}"
		"]}");

	(void)state;
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "check: 4 rules, 4 passed, 0 failed"));
	harness_run_free(&r);

	/* 90 % unstructured: 2:4 and class fail on all six layers, the rest pass */
	RUN(&r, "check", gate_fx.static_un, "--rules", rules, "--format", "json");
	assert_int_equal(r.status, 1);
	{
		cJSON *res = cJSON_Parse(r.out), *rule;

		assert_non_null(res);
		assert_true(num_at(res, "failed") == 2);
		rule = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rules"), 1);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rule, "status")), "fail");
		assert_true(num_at(rule, "failed") == 6);
		rule = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rules"), 2);
		assert_true(num_at(rule, "checked") == 4); /* q, k, v, attention.output */
		assert_true(num_at(rule, "failed") == 0);
		cJSON_Delete(res);
	}
	harness_run_free(&r);

	RUN(&r, "check", gate_fx.static_un, "--rules", rules);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "fail " FC2 ": pattern.nm2_4 = 0.99"));
	harness_run_free(&r);
	free(rules);
}

static void test_check_absent_metric(void **state)
{
	struct harness_run r;
	char *rules = gate_write_text("absent.json",
		"{\"rules\": [{\"name\": \"speed\", \"expr\": \"layers[*].runs[cpu/csr].speedup >= 1\"},"
		"{\"name\": \"cache\", \"expr\": \"layers[*].runs[cpu/csr].cache.l1d_misses <= 1e9\"},"
		"{\"name\": \"nomatch\", \"expr\": \"layers[\\\"nothing.*\\\"].nnz > 0\"},"
		"{\"name\": \"breakeven\", \"expr\": \"layers[*].breakeven[cpu/csr].margin >= 0\"}]}");

	(void)state;
	/* a static report has no runs: a failure with the reason, not a crash */
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "no such metric 'runs[cpu/csr]' (no cpu/csr run)"));
	assert_non_null(strstr(r.out, "no layer matches 'nothing.*'"));
	assert_non_null(strstr(r.out, "no such metric 'breakeven[cpu/csr]'"));
	assert_non_null(strstr(r.out, "check: 4 rules, 0 passed, 4 failed"));
	harness_run_free(&r);
	/* with runs: a null cache block (no counter source) is said so */
	{
		cJSON *rep = gate_load(gate_fx.runs);
		cJSON *cache = cJSON_GetObjectItem(gate_run(gate_layer(rep, Q), "csr"), "cache");
		cJSON *miss = cJSON_GetObjectItem(cache, "l1d_misses");

		RUN(&r, "check", gate_fx.runs, "--rules", rules);
		assert_int_equal(r.status, 1);
		if (cJSON_IsNull(cache))
			assert_non_null(strstr(r.out, "'runs[cpu/csr].cache' is null"));
		else if (cJSON_IsNull(miss))
			assert_non_null(strstr(r.out, "'runs[cpu/csr].cache.l1d_misses' is null"));
		harness_run_free(&r);
		cJSON_Delete(rep);
	}
	free(rules);
}

static void expect_rules_error(const char *expr, const char *want)
{
	struct harness_run r;
	char text[512], *rules;

	snprintf(text, sizeof(text), "{\"rules\": [{\"name\": \"r\", \"expr\": \"%s\"}]}", expr);
	rules = gate_write_text("bad.json", text);
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	if (r.status != 2 || !strstr(r.err, want))
		fail_msg("expr %s: status %d, stderr %s (wanted %s)", expr, r.status, r.err, want);
	harness_run_free(&r);
	free(rules);
}

static void test_check_malformed_rules(void **state)
{
	struct harness_run r;
	char *rules;

	(void)state;
	expect_rules_error("model.sparsity >= ", "expr: column 19: expected a number");
	expect_rules_error("model.sparsity = 0.5", "column 16: '=' is not a comparison");
	expect_rules_error("modle.sparsity >= 1", "column 1: expected 'model', 'summary' or 'layers");
	expect_rules_error("layers[*.attn.*.sparsity > 0", "column 26: expected ']' to close the '[' at column 7");
	/* a bare pattern that lost its ']' ends at the next one: an unclosed class, not "no layer matches" */
	expect_rules_error("layers[*attn*.runs[cpu/csr].speedup >= 1", "column 19: this '[' of the layer pattern opens");
	expect_rules_error("layers[\\\"*[ab\\\"].sparsity >= 0", "column 10: this '[' of the layer pattern opens");
	expect_rules_error("layers[*].runs[cpu/*].speedup > 1", "column 20: 'runs[...]' takes one exact key");
	expect_rules_error("model.sparsity >= 85%", "column 21: unexpected '%' after the number");
	expect_rules_error("model.sparsity >= 0.5 extra", "column 23: unexpected 'e'");
	expect_rules_error("model.sparsity > \\\"x\\\"", "column 18: a string compares only with == or !=");

	rules = gate_write_text("bad2.json", "{\"rules\": [{\"expr\": \"model.nnz > 0\", \"max_dorp\": 1}]}");
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "rules[0]"));
	assert_non_null(strstr(r.err, "unknown key \"max_dorp\""));
	harness_run_free(&r);
	free(rules);

	rules = gate_write_text("bad3.json", "{\"rules\": [{\"regression\": \"model.nnz\", \"max_growth\": 0}]}");
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--baseline"));
	harness_run_free(&r);
	free(rules);

	/* one rule is "1 rule" */
	rules = gate_write_text("one.json", "{\"rules\": [{\"expr\": \"model.nnz > 0\"}]}");
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "check: 1 rule, 1 passed, 0 failed"));
	harness_run_free(&r);
	free(rules);

	rules = gate_write_text("bad4.json", "{\"rules\": [");
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "not JSON"));
	harness_run_free(&r);
	free(rules);
}

/* Every number and string a layer of a report holds, as rules of that path (appended to b). */
static void leaf_rules(const cJSON *o, const char *path, char *b, size_t cap)
{
	const cJSON *c;
	char sub[300];

	cJSON_ArrayForEach(c, o) {
		size_t u = strlen(b);

		if (cJSON_IsArray(c) && strcmp(c->string, "runs") == 0) {
			const cJSON *run;

			cJSON_ArrayForEach(run, c) {
				snprintf(sub, sizeof(sub), "%s%s[%s/%s]", path, c->string,
					 cJSON_GetObjectItem(run, "backend")->valuestring,
					 cJSON_GetObjectItem(run, "format")->valuestring);
				strcat(sub, ".");
				leaf_rules(run, sub, b, cap);
			}
		} else if (cJSON_IsObject(c)) {
			snprintf(sub, sizeof(sub), "%s%s.", path, c->string);
			leaf_rules(c, sub, b, cap);
		} else if ((cJSON_IsNumber(c) || cJSON_IsNull(c)) && u + 400 < cap) {
			snprintf(b + u, cap - u, "%s{\"expr\": \"layers[*].%s%s >= 0\"}",
				 b[u - 1] == '[' ? "" : ",", path, c->string);
		}
	}
}

/*
 * A misspelt metric is a fault of the rules file (exit 2, the column), not
 * a rule failing on every layer; every field a real report has, and the
 * model view's summed runs, still parse.
 */
static void test_check_unknown_metric(void **state)
{
	enum { CAP = 1 << 18 };
	cJSON *rep = gate_load(gate_fx.runs);
	char *b = malloc(CAP), *rules;
	struct harness_run r;

	(void)state;
	expect_rules_error("layers[*].runs[cpu/csr].speedupp >= 1",
			   "expr: column 25: no metric 'runs[cpu/csr].speedupp' in a layer of a report");
	expect_rules_error("model.sparsty >= 0.5", "column 7: no metric 'sparsty' in the model block");
	expect_rules_error("layers[*].storage.csr.ratioo > 1", "column 23: no metric 'storage.csr.ratioo'");
	expect_rules_error("layers[*].storage.nm3_4.ratio > 1", "column 19: no metric 'storage.nm3_4'");
	expect_rules_error("model.runs[cpu/csr].speedupp > 1", "column 21: no metric 'runs[cpu/csr].speedupp'");
	expect_rules_error("layers[*].sparsity.x > 0", "column 20: no metric 'sparsity.x'");
	assert_non_null(b);
	strcpy(b, "{\"rules\": [{\"expr\": \"model.runs[cpu/csr].dense_time_ns.p90 > 0\"},"
		  "{\"expr\": \"summary.dense_baseline.share_of_peak >= 0\"}");
	leaf_rules(cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "layers"), 0), "", b, CAP);
	strcat(b, "]}");
	assert_true(strlen(b) + 8 < CAP);
	rules = gate_write_text("every-field.json", b);
	RUN(&r, "check", gate_fx.runs, "--rules", rules);
	if (r.status == 2)
		fail_msg("a field of the report is not a metric: %s", r.err);
	{
		const char *sum = strstr(r.out, "check: ");
		int n = 0;

		/* the layer's fields, its runs' fields for every format */
		assert_true(sum && sscanf(sum, "check: %d rules", &n) == 1);
		if (n < 100)
			fail_msg("only %d rules from the report's fields", n);
	}
	harness_run_free(&r);
	free(rules);
	free(b);
	cJSON_Delete(rep);
}

static void test_check_malformed_report(void **state)
{
	struct harness_run r;
	char *rules = gate_write_text("ok.json", "{\"rules\": [{\"expr\": \"model.nnz > 0\"}]}");
	char *trunc = gate_write_text("trunc.json", "{\"schema\": \"spprof.report/1\", \"model\": {");
	char *other = gate_write_text("other.json", "{\"schema\": \"spprof.sweep/1\"}");
	char *reg = gate_write_text("reg.json", "{\"rules\": [{\"regression\": \"model.nnz\", \"max_growth\": 0}]}");

	(void)state;
	RUN(&r, "check", trunc, "--rules", rules);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "not JSON"));
	harness_run_free(&r);
	RUN(&r, "check", gate_fx.static_nm, "--rules", reg, "--baseline", other);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "not a spprof report"));
	harness_run_free(&r);
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	free(rules);
	free(trunc);
	free(other);
	free(reg);
}

/* The noise rules' baseline: layer Q's dense at 1000 ns (990-1010), csr at 400 ns (396-404). */
static cJSON *noise_base(void)
{
	cJSON *base = gate_load(gate_fx.runs);

	gate_set_times(gate_run(gate_layer(base, Q), "dense"), 1000, 990, 1010, 1);
	gate_set_times(gate_run(gate_layer(base, Q), "csr"), 400, 396, 404, 2.5);
	gate_speedups_from_times(gate_layer(base, Q));
	return base;
}

/*
 * The noise rule. Base: dense 1000 ns (990-1010), csr 400 ns (396-404):
 * speedup 2.5, spread [990/404, 1010/396] = [2.450, 2.551]. New csr at 500
 * ns: speedup 2.0, a 20 % drop against a 10 % allowance.
 */
static void test_check_noise_rule(void **state)
{
	static const struct {
		double p10, p90;
		double ci_base[2], ci_new[2]; /* the speedups' 95 % intervals; 0: none */
		int want;
	} cases[] = {
		{495, 505, {0, 0}, {0, 0}, 1}, /* new spread [1.960, 2.040]: both values outside the other's */
		{350, 650, {0, 0}, {0, 0}, 0}, /* new spread [1.523, 2.886] holds 2.5: noise */
		/* with intervals they decide: apart, a regression whatever the p10-p90 spreads */
		{350, 650, {2.4, 2.6}, {1.95, 2.05}, 1},
		/* overlapping, noise even where the spreads are apart */
		{495, 505, {2.4, 2.6}, {1.9, 2.45}, 0},
	};
	char *rules = gate_write_text("noise_rules.json",
		"{\"rules\": [{\"name\": \"speed holds\", \"regression\": "
		"\"layers[\\\"*.query.*\\\"].runs[cpu/csr].speedup\", \"max_drop\": 0.10}]}");
	cJSON *base = noise_base();
	char *base_path;

	(void)state;
	base_path = gate_save(base, "noise_base.json");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness_run r;
		cJSON *next = cJSON_Duplicate(base, 1);
		char *next_path;

		gate_set_times(gate_run(gate_layer(next, Q), "csr"), 500, cases[i].p10, cases[i].p90, 2.0);
		if (cases[i].ci_base[0] > 0) {
			cJSON *b = gate_run(gate_layer(next, Q), "csr"), *o = gate_run(gate_layer(base, Q), "csr");

			const char *keys[2] = {"speedup_ci_low", "speedup_ci_high"};

			for (int e = 0; e < 2; e++) {
				cJSON_DeleteItemFromObject(o, keys[e]);
				cJSON_AddNumberToObject(o, keys[e], cases[i].ci_base[e]);
				cJSON_DeleteItemFromObject(b, keys[e]);
				cJSON_AddNumberToObject(b, keys[e], cases[i].ci_new[e]);
			}
			free(base_path);
			base_path = gate_save(base, "noise_base.json");
		}
		next_path = gate_save(next, "noise_new.json");
		RUN(&r, "check", next_path, "--rules", rules, "--baseline", base_path);
		if (r.status != cases[i].want)
			fail_msg("case %zu: status %d, want %d: %s", i, r.status, cases[i].want, r.out);
		if (cases[i].want)
			assert_non_null(strstr(r.out, "speedup 2.5 -> 2 (-20.0 %): fell more than allowed"));
		harness_run_free(&r);

		free(next_path);
		cJSON_Delete(next);
	}
	cJSON_Delete(base);
	free(base_path);
	free(rules);
}

/*
 * The median time's 95 % interval decides where both runs have one: csr
 * 400 ns [398, 402] against 500 ns (+25 %, max_growth 10 %) whose p10-p90
 * (350-650) holds 400: apart intervals fail it, overlapping ones are noise.
 */
static void test_check_time_interval(void **state)
{
	static const struct {
		double lo, hi;
		int want;
	} cases[] = {{495, 505, 1}, {390, 520, 0}};
	char *rules = gate_write_text("time_rules.json",
		"{\"rules\": [{\"name\": \"time holds\", \"regression\": "
		"\"layers[\\\"*.query.*\\\"].runs[cpu/csr].time_ns.median\", \"max_growth\": 0.10}]}");
	cJSON *base = noise_base();
	char *base_path;

	(void)state;
	cJSON_AddNumberToObject(cJSON_GetObjectItem(gate_run(gate_layer(base, Q), "csr"), "time_ns"), "ci_low", 398);
	cJSON_AddNumberToObject(cJSON_GetObjectItem(gate_run(gate_layer(base, Q), "csr"), "time_ns"), "ci_high", 402);
	base_path = gate_save(base, "time_base.json");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness_run r;
		cJSON *next = cJSON_Duplicate(base, 1), *t;
		char *next_path;

		gate_set_times(gate_run(gate_layer(next, Q), "csr"), 500, 350, 650, 2.0);
		gate_speedups_from_times(gate_layer(next, Q));
		t = cJSON_GetObjectItem(gate_run(gate_layer(next, Q), "csr"), "time_ns");
		cJSON_AddNumberToObject(t, "ci_low", cases[i].lo);
		cJSON_AddNumberToObject(t, "ci_high", cases[i].hi);
		next_path = gate_save(next, "time_new.json");
		RUN(&r, "check", next_path, "--rules", rules, "--baseline", base_path);
		if (r.status != cases[i].want)
			fail_msg("case %zu: status %d, want %d: %s%s", i, r.status, cases[i].want, r.out, r.err);
		harness_run_free(&r);
		free(next_path);
		cJSON_Delete(next);
	}
	cJSON_Delete(base);
	free(base_path);
	free(rules);
}

static void test_check_regression_exact(void **state)
{
	struct harness_run r;
	char *rules = gate_write_text("exact_rules.json",
		"{\"rules\": [{\"name\": \"csr bytes\", \"regression\": \"layers[*].storage.csr.bytes\", \"max_growth\": 0},"
		"{\"name\": \"2:4\", \"regression\": \"layers[*].pattern.nm2_4\", \"max_drop\": 0}]}");
	cJSON *next = gate_load(gate_fx.static_nm), *b;
	char *next_path, *edited_path;
	double bytes;

	(void)state;
	RUN(&r, "check", gate_fx.static_nm, "--rules", rules, "--baseline", gate_fx.static_nm);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	/* one byte more on one layer fails; the 2:4 figure stays */
	b = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(gate_layer(next, K), "storage"), "csr"), "bytes");
	bytes = b->valuedouble;
	cJSON_SetNumberValue(b, bytes + 1);
	next_path = gate_save(next, "exact_new.json");
	RUN(&r, "check", next_path, "--rules", rules, "--baseline", gate_fx.static_nm, "--format", "json");
	assert_int_equal(r.status, 1);
	{
		cJSON *res = cJSON_Parse(r.out);
		cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rules"), 0);

		assert_true(num_at(rule, "failed") == 1);
		assert_true(num_at(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rules"), 1), "failed") == 0);
		cJSON_Delete(res);
	}
	harness_run_free(&r);
	/* the unstructured report against the 2:4 one: every 2:4 figure fell */
	edited_path = gate_fx.static_un;
	RUN(&r, "check", edited_path, "--rules", rules, "--baseline", gate_fx.static_nm);
	assert_int_equal(r.status, 1);
	assert_int_equal(gate_count(r.out, "pattern.nm2_4 1 -> 0.99"), 6);
	harness_run_free(&r);
	cJSON_Delete(next);
	free(next_path);
	free(rules);
}

static void test_junit_and_md(void **state)
{
	struct harness_run r;
	char *rules = gate_write_text("junit_rules.json",
		"{\"rules\": [{\"name\": \"a & b <c> \\\"d\\\" 'e'\", \"expr\": \"layers[*].pattern.nm2_4 == 1\"},"
		"{\"name\": \"model\", \"expr\": \"model.sparsity >= 0.4\"}]}");
	char *junit = harness_join(gate_fx.dir, "junit.xml"), *xml;
	const char *py[] = {"python3", "-c",
		"import sys, xml.etree.ElementTree as E\n"
		"t = E.parse(sys.argv[1]).getroot()\n"
		"cs = t.findall('.//testcase')\n"
		"print(len(cs), len([c for c in cs if c.find('failure') is not None]), cs[0].get('classname'))\n",
		junit, NULL};

	(void)state;
	RUN(&r, "check", gate_fx.static_un, "--rules", rules, "--junit", junit, "--format", "md");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "### spprof check: failed"));
	assert_non_null(strstr(r.out, "| :x: fail | a & b \\<c> \"d\" 'e'<br>`layers[*].pattern.nm2_4 == 1` | 6 | 6 | 0 |"));
	assert_non_null(strstr(r.out, "#### Failures"));
	harness_run_free(&r);
	xml = harness_slurp(junit, NULL);
	assert_non_null(xml);
	/* 6 layers x rule 1, the model x rule 2 */
	assert_int_equal(gate_count(xml, "<testcase "), 7);
	assert_int_equal(gate_count(xml, "<failure "), 6);
	assert_non_null(strstr(xml, "name=\"a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;\""));
	assert_non_null(strstr(xml, "tests=\"7\" failures=\"6\""));
	free(xml);
	assert_int_equal(harness_exec(&r, "/usr/bin/env", py), 0);
	if (r.status == 0)
		assert_string_equal(r.out, "7 6 a & b <c> \"d\" 'e'\n");
	harness_run_free(&r);
	free(junit);
	free(rules);
}

/* The example rules in docs/examples, end to end on saved reports. */
static void test_examples(void **state)
{
	struct harness_run r;
	const char *data = getenv("SPP_TEST_DATA");
	char *ex = harness_join(data, "../../docs/examples"), *st, *sp, *rg;

	(void)state;
	st = harness_join(ex, "static-gate.json");
	sp = harness_join(ex, "speed-gate.json");
	rg = harness_join(ex, "regression-gate.json");
	RUN(&r, "check", gate_fx.static_nm, "--rules", st);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	RUN(&r, "check", gate_fx.static_un, "--rules", st);
	assert_int_equal(r.status, 1);
	harness_run_free(&r);
	/* speed depends on the machine: it must evaluate, pass or fail */
	RUN(&r, "check", gate_fx.runs, "--rules", sp);
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "check: 4 rules"));
	harness_run_free(&r);
	/* a report against itself never regresses */
	RUN(&r, "check", gate_fx.runs, "--rules", rg, "--baseline", gate_fx.runs);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	free(st);
	free(sp);
	free(rg);
	free(ex);
}

static void test_report_md(void **state)
{
	struct harness_run r;
	char *md = harness_join(gate_fx.dir, "report.md"), *text;

	(void)state;
	RUN(&r, "report", gate_fx.runs, "-o", md);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(md, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "## spprof report: `"));
	assert_non_null(strstr(text, "### Layers"));
	assert_non_null(strstr(text, "### Runs"));
	/* one row per layer in the layer and structure tables, one per layer x run below */
	assert_non_null(strstr(text, "### Structure"));
	assert_int_equal(gate_count(text, "| `encoder.layer.0."), 6 + 6 + 6 * 10);
	free(text);
	RUN(&r, "report", gate_fx.static_nm, "--format", "md");
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "### Runs"));
	assert_non_null(strstr(r.out, "| **total** |"));
	harness_run_free(&r);
	free(md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_check_bounds),
		cmocka_unit_test(test_check_absent_metric),
		cmocka_unit_test(test_check_malformed_rules),
		cmocka_unit_test(test_check_unknown_metric),
		cmocka_unit_test(test_check_malformed_report),
		cmocka_unit_test(test_check_noise_rule),
		cmocka_unit_test(test_check_time_interval),
		cmocka_unit_test(test_check_regression_exact),
		cmocka_unit_test(test_junit_and_md),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_report_md),
	};

	return cmocka_run_group_tests(tests, gate_fixture_setup, gate_fixture_teardown);
}
