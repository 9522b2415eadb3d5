/*
 * End-to-end tests of the spprof binary: exit codes, help, and the
 * analyze -> JSON / CSV -> report round trip on models written by synth.
 * The tests of the options (help, unknown ones, limits) are in
 * test_cli_options.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "kernels/kernels.h"
#include "test/e2e/cli_fixture.h"
#include "test/harness.h"
#include "test/report_read.h"

static void test_version_and_help(void **state)
{
	struct harness_run r;
	char want[64];

	(void)state;
	RUN(&r, "--version");
	snprintf(want, sizeof(want), "spprof %s\n", SPP_VERSION);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want);
	harness_run_free(&r);

	RUN(&r, "help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "analyze"));
	assert_non_null(strstr(r.out, "synth"));
	assert_non_null(strstr(r.out, "report"));
	harness_run_free(&r);

	RUN(&r, "help", "analyze");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "--static"));
	assert_non_null(strstr(r.out, "--n N"));
	harness_run_free(&r);

	/* `X --help` is `help X` */
	RUN(&r, "analyze", "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: spprof analyze"));
	harness_run_free(&r);
}

static void test_usage_errors(void **state)
{
	struct harness_run r;

	(void)state;
	RUN(&r, "frobnicate");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown command 'frobnicate'"));
	assert_null(strstr(r.err, "did you mean"));
	harness_run_free(&r);

	/* a near miss names the command meant */
	RUN(&r, "analyse", "model.onnx");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown command 'analyse'; did you mean 'analyze'?"));
	harness_run_free(&r);
	RUN(&r, "help", "reprot");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "did you mean 'report'?"));
	harness_run_free(&r);

	/* an -o name no writer has, without --format: refused, not written as text */
	RUN(&r, "report", "r.json", "-o", "r.xlsx");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "cannot tell the report format from 'r.xlsx'"));
	harness_run_free(&r);

	RUN(&r, "help", "frobnicate");
	assert_int_equal(r.status, 2);
	harness_run_free(&r);

	RUN(&r, "analyze");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "no MODEL"));
	harness_run_free(&r);

	RUN(&r, "analyze", "x.safetensors", "--n", "12q");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--n"));
	harness_run_free(&r);

	RUN(&r, "analyze", "x.safetensors", "--bogus");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--bogus"));
	harness_run_free(&r);

	RUN(&r, "analyze", "x.safetensors", "--format", "yaml");
	assert_int_equal(r.status, 2);
	harness_run_free(&r);

	RUN(&r, "synth", "-o", "x.safetensors", "--layer", "fc=4x4:sideways:0.5");
	assert_int_equal(r.status, 2);
	assert_int_equal(harness_count_lines(r.err), 1);
	harness_run_free(&r);
}

static void test_missing_and_bad_input(void **state)
{
	struct harness_run r;
	char *dir = harness_tmpdir();
	char *bad = harness_join(dir, "bad.safetensors");
	char *out = harness_join(dir, "out.json");
	char *missing = harness_join(dir, "missing.safetensors");
	static const unsigned char junk[] = {0x10, 0, 0, 0, 0, 0, 0, 0, '{', '"'};

	(void)state;
	RUN(&r, "analyze", missing, "--static");
	assert_int_equal(r.status, 2);
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, missing));
	assert_int_equal(r.out_len, 0);
	harness_run_free(&r);

	assert_int_equal(harness_write(bad, junk, sizeof(junk)), 0);
	RUN(&r, "analyze", bad, "--static", "-o", out);
	assert_int_equal(r.status, 2);
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, bad));
	assert_false(harness_exists(out));
	harness_run_free(&r);

	RUN(&r, "report", bad);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, bad));
	harness_run_free(&r);

	free(bad);
	free(out);
	free(missing);
	harness_rmtree(dir);
}

/* A model with known content: every count below follows from the specs. */
static char *write_model(const char *dir)
{
	struct harness_run r;
	char *model = harness_join(dir, "m.safetensors");

	RUN(&r, "synth", "-o", model, "--seed", "7",
	    "--layer", "enc.fc1.weight=64x48:unstructured:0.75",
	    "--layer", "enc.fc2.weight=48x64:nm2_4:0.5:F16",
	    "--layer", "enc.conv.weight=16x8x3x3:block4:0.5",
	    "--layer", "enc.ln.weight=48:dense:0");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	return model;
}

static const cJSON *layer_named(const cJSON *report, const char *name)
{
	const cJSON *l;
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(report, "layers")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(l, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return l;
	}
	return NULL;
}

/* --name=value and -oVALUE are the same as the value in the next argument. */
static void test_option_value_forms(void **state)
{
	struct harness_run r;
	char *dir = harness_tmpdir();
	char *model = harness_join(dir, "m.safetensors");
	char *json = harness_join(dir, "r.json");
	char out_opt[512], json_opt[512];
	cJSON *rep;
	char *text;

	(void)state;
	snprintf(out_opt, sizeof(out_opt), "-o%s", model);
	RUN(&r, "synth", out_opt, "--layer=fc=16x8:unstructured:0.5", "--seed=3");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	snprintf(json_opt, sizeof(json_opt), "--output=%s", json);
	RUN(&r, "analyze", model, "--stat", "--n=24", "--format=json", json_opt);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(json, NULL);
	assert_non_null(text);
	rep = cJSON_Parse(text);
	free(text);
	assert_non_null(rep);
	assert_non_null(layer_named(rep, "fc"));
	assert_true(report_num(layer_named(rep, "fc"), "n") == 24);
	cJSON_Delete(rep);
	free(json);
	free(model);
	harness_rmtree(dir);
}

static void test_analyze_json(void **state)
{
	struct harness_run r;
	char *dir = harness_tmpdir();
	char *model = write_model(dir);
	char *json = harness_join(dir, "report.json");
	cJSON *rep;
	const cJSON *l;
	char *text;

	(void)state;
	RUN(&r, "analyze", model, "--static", "--n", "64", "--format", "json", "-o", json);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 0);
	harness_run_free(&r);

	text = harness_slurp(json, NULL);
	assert_non_null(text);
	rep = cJSON_Parse(text);
	free(text);
	assert_non_null(rep);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rep, "schema")->valuestring,
			    "spprof.report/1");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rep, "layers")), 3);
	/* 4 tensors: 64*48 + 48*64 + 16*8*9 + 48 */
	assert_true(report_num(rep, "model.tensors") == 4);
	assert_true(report_num(rep, "model.params") == 3072 + 3072 + 1152 + 48);

	l = layer_named(rep, "enc.fc1.weight");
	assert_non_null(l);
	assert_true(report_num(l, "m") == 64 && report_num(l, "k") == 48 && report_num(l, "n") == 64);
	assert_true(report_num(l, "nnz") == 768);
	assert_true(report_num(l, "flops.dense") == 2.0 * 64 * 48 * 64);
	assert_true(report_num(l, "flops.sparse") == 2.0 * 768 * 64);
	assert_true(report_num(l, "storage.csr.bytes") == 768 * 8 + 65 * 4);
	assert_true(report_num(l, "storage.coo.bytes") == 768 * 12);

	l = layer_named(rep, "enc.fc2.weight");
	assert_non_null(l);
	assert_true(report_num(l, "pattern.nm2_4") == 1.0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(l, "pattern"), "class")->valuestring,
			    "nm");
	/* F16: G = 48 * 16 groups, 2 values of 2 bytes + 2 x 2-bit indices each */
	assert_true(report_num(l, "storage.nm2_4.bytes") == 768 * 2 * 2 + 768 * 2 * 2 / 8);
	assert_true(report_num(l, "storage.dense.bytes") == 48 * 64 * 2);

	l = layer_named(rep, "enc.conv.weight");
	assert_non_null(l);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(l, "op")->valuestring, "conv2d");
	assert_true(report_num(l, "m") == 16 && report_num(l, "k") == 72);
	assert_true(report_num(l, "pattern.block4") == 0.5);

	assert_null(layer_named(rep, "enc.ln.weight"));
	cJSON_Delete(rep);
	free(json);
	free(model);
	harness_rmtree(dir);
}

static void test_analyze_csv(void **state)
{
	struct harness_run r;
	char *dir = harness_tmpdir();
	char *model = write_model(dir);
	char *csv_path = harness_join(dir, "report.csv");
	struct csv_table t;
	int name_col, nnz_col, fc1_row = 0;
	size_t len;
	char *text;

	(void)state;
	RUN(&r, "analyze", model, "--static", "-o", csv_path);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	text = harness_slurp(csv_path, &len);
	assert_non_null(text);
	csv_table_parse(text, len, &t);
	free(text);
	assert_int_equal(t.rows, 1 + 3);
	name_col = csv_table_col(&t, "name");
	csv_table_col(&t, "pattern.nm2_4");
	csv_table_col(&t, "storage.csr.bytes");
	csv_table_col(&t, "flops.dense");
	nnz_col = csv_table_col(&t, "nnz");
	for (int row = 1; row < t.rows; row++)
		if (strcmp(t.cell[row][name_col], "enc.fc1.weight") == 0)
			fc1_row = row;
	assert_true(fc1_row > 0);
	assert_string_equal(t.cell[fc1_row][nnz_col], "768");
	csv_table_free(&t);
	free(csv_path);
	free(model);
	harness_rmtree(dir);
}

static void test_report_round_trip(void **state)
{
	struct harness_run r, again;
	char *dir = harness_tmpdir();
	char *model = write_model(dir);
	char *json = harness_join(dir, "report.json");
	char *json2 = harness_join(dir, "again.json");
	char *a, *b;
	cJSON *ja, *jb;

	(void)state;
	RUN(&r, "analyze", model, "--static", "-o", json);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);

	/* the text table from the saved report is the one analyze prints */
	RUN(&r, "analyze", model, "--static");
	assert_int_equal(r.status, 0);
	RUN(&again, "report", json);
	assert_int_equal(again.status, 0);
	assert_true(r.out_len > 0);
	assert_string_equal(r.out, again.out);
	harness_run_free(&r);
	harness_run_free(&again);

	/* json -> json is the identity */
	RUN(&r, "report", json, "--format", "json", "-o", json2);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	a = harness_slurp(json, NULL);
	b = harness_slurp(json2, NULL);
	ja = cJSON_Parse(a);
	jb = cJSON_Parse(b);
	assert_non_null(ja);
	assert_non_null(jb);
	assert_true(cJSON_Compare(ja, jb, 1));
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	free(a);
	free(b);
	free(json);
	free(json2);
	free(model);
	harness_rmtree(dir);
}

static void test_output_failure(void **state)
{
	struct harness_run r;
	char *dir = harness_tmpdir();
	char *model = write_model(dir);
	char *out = harness_join(dir, "no/such/folder/r.json");

	(void)state;
	/* found before the analysis: bad usage, not a failure at the end */
	RUN(&r, "analyze", model, "--static", "-o", out);
	assert_int_equal(r.status, 2);
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, out));
	harness_run_free(&r);
	free(out);
	free(model);
	harness_rmtree(dir);
}

static void test_sample_models(void **state)
{
	static const char *const samples[] = {
		"bert_block_nm2_4.safetensors",
		"bert_block_unstructured90.safetensors",
		"bert_block_block4.safetensors",
		"mixed_cnn.safetensors",
	};
	const char *root = getenv("SPP_SAMPLE_MODELS");

	(void)state;
	assert_non_null(root);
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		struct harness_run r;
		char *path = harness_join(root, samples[i]);

		RUN(&r, "analyze", path, "--static");
		if (r.status != 0)
			fail_msg("%s: exit %d: %s", samples[i], r.status, r.err);
		assert_non_null(strstr(r.out, "sparsity"));
		harness_run_free(&r);
		free(path);
	}
}

/*
 * The progress line: on a terminal it counts the layers; without one, or
 * with --quiet, stderr has none of it. Its own test (--progress), skipped
 * (77) where no pseudo-terminal can be opened.
 */
static void test_progress_line(void **state)
{
	const char *root = getenv("SPP_SAMPLE_MODELS");
	char *model = harness_join(root, "mixed_cnn.safetensors");
	char why[256];
	struct harness_run r;

	(void)state;
	for (int quiet = 0; quiet < 2; quiet++) {
		const char *args[] = {"analyze", model, "--repeat", "2", "--threads", "1",
				      "--format", "json", quiet ? "--quiet" : NULL, NULL};

		if (harness_spprof_tty(&r, args, why, sizeof(why)) != 0)
			fail_msg("%s", why);
		assert_int_equal(r.status, 0);
		if (quiet) {
			assert_null(strstr(r.err, "[1/9] features.1.weight"));
		} else {
			assert_non_null(strstr(r.err, "[1/9] features.1.weight"));
			assert_non_null(strstr(r.err, "elapsed, ~"));
		}
		harness_run_free(&r);
	}
	/* no terminal: no progress line in stderr */
	{
		const char *args[] = {"analyze", model, "--repeat", "2", "--threads", "1",
				      "--format", "json", NULL};
		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 0);
		assert_null(strstr(r.err, "[1/9]"));
		harness_run_free(&r);
	}
	free(model);
}

/* --progress: the progress-line test alone; 77 where there is no terminal. */
static int progress_main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress_line),
	};
	char why[256];
	int master, slave;

	if (harness_open_pty(&master, &slave, why, sizeof(why)) != 0) {
		printf("skip: no pseudo-terminal can be opened here (%s); "
		       "mount devpts on /dev/pts to run this test\n", why);
		return 77;
	}
	close(master);
	close(slave);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * A conv whose pruning removed whole 3x3 kernels, end to end: the static
 * JSON names the class and the kernel counts, the text says it in a note.
 */
static void test_conv_kernel_report(void **state)
{
	enum { O = 8, C = 6, P = 9 };
	char *dir = harness_tmpdir(), *model = harness_join(dir, "conv.safetensors");
	static const char head[] = "{\"conv.weight\":{\"dtype\":\"F32\",\"shape\":[8,6,3,3],"
				   "\"data_offsets\":[0,1728]}}";
	unsigned char buf[8 + sizeof(head) - 1 + O * C * P * 4];
	size_t hl = sizeof(head) - 1, zero = 0;
	struct harness_run r;
	cJSON *doc, *k, *g;

	(void)state;
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(buf + 8, head, hl);
	/* kernels (o, c) all zero but for c = o, o + 1, o + 2 (mod 6): 24 of 48, no zero row or
	 * column, 3 in a group of 4 along K (not N:M) */
	for (int o = 0; o < O; o++)
		for (int c = 0; c < C; c++)
			for (int p = 0; p < P; p++) {
				float v = (c - o % C + C) % C < 3 ? 1.5f + (float)p : 0.0f;

				memcpy(buf + 8 + hl + 4 * (size_t)((o * C + c) * P + p), &v, 4);
				zero += p == 0 && v == 0;
			}
	assert_int_equal(zero, 24);
	assert_int_equal(harness_write(model, buf, sizeof(buf)), 0);
	RUN(&r, "analyze", model, "--static", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	k = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "layers"), 0), "pattern");
	assert_string_equal(cJSON_GetObjectItem(k, "class")->valuestring, "kernel");
	g = cJSON_GetObjectItem(cJSON_GetObjectItem(k, "granularity"), "kernel");
	assert_int_equal(cJSON_GetObjectItem(g, "units")->valuedouble, 48);
	assert_int_equal(cJSON_GetObjectItem(g, "zero")->valuedouble, 24);
	/* every input channel keeps a kernel: none is zero */
	g = cJSON_GetObjectItem(cJSON_GetObjectItem(k, "granularity"), "channel");
	assert_int_equal(cJSON_GetObjectItem(g, "units")->valuedouble, 6);
	assert_int_equal(cJSON_GetObjectItem(g, "zero")->valuedouble, 0);
	k = cJSON_GetObjectItem(k, "kernel");
	assert_int_equal(cJSON_GetObjectItem(k, "patterns")->valuedouble, 1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(k, "top"), 0),
						"mask")->valuestring, "111/111/111");
	cJSON_Delete(doc);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--static");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "kernel-level pruning: 50% of the 48 3x3 kernels are all zero"));
	harness_run_free(&r);
	free(model);
	harness_rmtree(dir);
}

/*
 * The simulator repeats: two identical analyze runs give the same cache
 * figures on every run (the sample is chosen from the layer's work and a
 * budget in accesses, not from the clock), and no run that has figures
 * shows a zero count from a sample of nothing.
 */
static void test_sim_repeats(void **state)
{
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");
	const char *args[] = {"analyze", model, "--counters", "sim", "--time-budget", "0.02",
			      "--formats", "csr,coo,bsr16,bitmask", "--format", "json", NULL};
	struct harness_run r[2];
	cJSON *doc[2], *la, *lb;
	int compared = 0;

	(void)state;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(harness_spprof(&r[i], args), 0);
		assert_int_equal(r[i].status, 0);
		doc[i] = cJSON_Parse(r[i].out);
		assert_non_null(doc[i]);
	}
	lb = cJSON_GetObjectItem(doc[1], "layers")->child;
	cJSON_ArrayForEach(la, cJSON_GetObjectItem(doc[0], "layers")) {
		const cJSON *ra, *rb = cJSON_GetObjectItem(lb, "runs") ? cJSON_GetObjectItem(lb, "runs")->child : NULL;

		cJSON_ArrayForEach(ra, cJSON_GetObjectItem(la, "runs")) {
			const cJSON *ca = cJSON_GetObjectItem(ra, "cache"), *cb = cJSON_GetObjectItem(rb, "cache");

			if (!cJSON_Compare(ca, cb, 1))
				fail_msg("%s %s: cache differs between two identical runs",
					 cJSON_GetObjectItem(la, "name")->valuestring,
					 cJSON_GetObjectItem(ra, "format")->valuestring);
			if (cJSON_IsObject(ca)) {
				compared++;
				assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(ca, "sampled")) > 0);
				assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(ca, "l1d_accesses")) > 0);
			}
			rb = rb ? rb->next : NULL;
		}
		lb = lb->next;
	}
	assert_true(compared >= 8);
	for (int i = 0; i < 2; i++) {
		cJSON_Delete(doc[i]);
		harness_run_free(&r[i]);
	}
	free(model);
}

/*
 * Interleaved rounds give each format's speedup its 95 % interval (one
 * thread: the interleaved schedule); the dense baseline has none.
 */
static void test_speedup_interval(void **state)
{
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");
	const char *args[] = {"analyze", model, "--threads", "1", "--counters", "none",
			      "--time-budget", "0.02", "--formats", "csr,bsr4", "--format", "json", NULL};
	struct harness_run r;
	const cJSON *l, *run;
	cJSON *doc;
	int with = 0;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "settings"), "schedule")->valuestring,
			    "interleaved");
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(doc, "layers"))
		cJSON_ArrayForEach(run, cJSON_GetObjectItem(l, "runs")) {
			const cJSON *lo = cJSON_GetObjectItem(run, "speedup_ci_low");
			const cJSON *hi = cJSON_GetObjectItem(run, "speedup_ci_high");
			const cJSON *reps = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "time_ns"), "repeats");

			if (strcmp(cJSON_GetObjectItem(run, "format")->valuestring, "dense") == 0 ||
			    !cJSON_IsNumber(reps) || reps->valuedouble < 6) {
				assert_true(cJSON_IsNull(lo) && cJSON_IsNull(hi));
				continue;
			}
			assert_true(cJSON_IsNumber(lo) && cJSON_IsNumber(hi));
			assert_true(lo->valuedouble > 0 && lo->valuedouble <= hi->valuedouble);
			with++;
		}
	assert_true(with >= 4);
	cJSON_Delete(doc);
	harness_run_free(&r);
	free(model);
}

/* --target-sparsity: the layers that hold the model back, in the JSON and the notes. */
static void test_target_sparsity(void **state)
{
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");
	struct harness_run r;
	cJSON *doc, *h;

	(void)state;
	RUN(&r, "analyze", model, "--static", "--target-sparsity", "0.9", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	h = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "hold_back");
	assert_string_equal(cJSON_GetObjectItem(h, "target_source")->valuestring, "option");
	/* fc1 (256x512 at 70 %) has the most non-zeros above 90 % */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(h, "layers"), 0),
						"name")->valuestring, "classifier.fc1.weight");
	cJSON_Delete(doc);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--static", "--target-sparsity", "0.9");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "classifier.fc1.weight: holds the model back from 90.0% sparsity "
				      "(--target-sparsity): 70.0% sparse"));
	harness_run_free(&r);
	free(model);
}

/*
 * --layers / --skip-layers (issue 46 item 11): mixed_cnn's classifier.*
 * layers but classifier.head.weight are timed, every layer is scanned, the
 * others are marked not timed and have no runs.
 */
static void test_layer_globs(void **state)
{
	char *model = harness_join(getenv("SPP_SAMPLE_MODELS"), "mixed_cnn.safetensors");
	struct harness_run r;
	const cJSON *l;
	cJSON *doc;
	int timed = 0, scanned = 0;

	(void)state;
	RUN(&r, "analyze", model, "--layers", "classifier.*", "--skip-layers", "*.head.*", "--formats", "csr",
	    "--repeat", "1", "--counters", "none", "--threads", "1", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(doc, "layers")) {
		const char *name = cJSON_GetObjectItem(l, "name")->valuestring;
		int want = strncmp(name, "classifier.", 11) == 0 && !strstr(name, ".head.");
		const cJSON *runs = cJSON_GetObjectItem(l, "runs");

		scanned += cJSON_IsNumber(cJSON_GetObjectItem(l, "sparsity"));
		assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(l, "timed")), want);
		assert_int_equal(cJSON_GetArraySize(runs) > 0, want);
		timed += want;
	}
	assert_int_equal(scanned, 9);
	assert_true(timed >= 2 && timed < 9);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
				    cJSON_GetObjectItem(doc, "settings"), "layers"), "skip"), 0)->valuestring,
			    "*.head.*");
	cJSON_Delete(doc);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--layers", "", "--static");
	assert_int_equal(r.status, 2);
	harness_run_free(&r);
	free(model);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help_lists_what_parses),
		cmocka_unit_test(test_help_names_every_format),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_option_limits),
		cmocka_unit_test(test_session_group),
		cmocka_unit_test(test_fifo_inputs),
		cmocka_unit_test(test_foreign_formats),
		cmocka_unit_test(test_embedding_names),
		cmocka_unit_test(test_readme_agrees_with_help),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_resource_budget),
		cmocka_unit_test(test_output_targets),
		cmocka_unit_test(test_output_readonly_dir),
		cmocka_unit_test(test_output_signal),
		cmocka_unit_test(test_option_value_forms),
		cmocka_unit_test(test_missing_and_bad_input),
		cmocka_unit_test(test_analyze_json),
		cmocka_unit_test(test_analyze_csv),
		cmocka_unit_test(test_report_round_trip),
		cmocka_unit_test(test_output_failure),
		cmocka_unit_test(test_sample_models),
		cmocka_unit_test(test_sim_repeats),
		cmocka_unit_test(test_speedup_interval),
		cmocka_unit_test(test_conv_kernel_report),
		cmocka_unit_test(test_target_sparsity),
		cmocka_unit_test(test_layer_globs),
	};

	if (argc > 1 && strcmp(argv[1], "--progress") == 0)
		return progress_main();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
