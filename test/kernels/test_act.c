/*
 * Activation sparsity end to end through the spprof binary: real X from an
 * --activations folder (K x N and N x K), synthetic zeros from
 * --act-sparsity, the combined FLOPs of DESIGN section 3 counted here from
 * the same W and X, the activation kernels beside their weight-only
 * kernels, the static estimate, and bad input (exit 2, nothing written).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "test/harness.h"
#include "test/report_read.h"

#define M 48
#define K 40
#define N 16

struct fixture {
	char *dir, *model, *acts, *out;
	float w[M * K];
	float x[K * N];  /* K x N */
};

/* W: about 60% zeros, no all-zero column; X: about 50% zeros, rows 3, 10, 17, ... all zero. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint64_t s = 12345;

	if (!f || !(f->dir = harness_tmpdir()))
		return -1;
	for (int i = 0; i < M * K; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		f->w[i] = (s >> 33) % 5 < 2 || i / K == i % K ? (float)((int)(s >> 40) % 7 + 1) / 8 : 0.0f;
	}
	for (int i = 0; i < K * N; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		f->x[i] = (s >> 33) % 2 || (i / N) % 7 == 3 ? 0.0f : (float)((int)(s >> 40) % 9 + 1) / 4;
	}
	f->model = harness_join(f->dir, "fc.npy");
	f->acts = harness_join(f->dir, "acts");
	f->out = harness_join(f->dir, "r.json");
	if (harness_write_npy_f32(f->model, M, K, f->w))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->model);
	free(f->acts);
	free(f->out);
	harness_rmtree(f->dir);
	free(f);
	return 0;
}

/* Run spprof with args; return the report at f->out parsed (NULL-terminated args). */
static cJSON *analyze(struct fixture *f, const char *const *args, struct harness_run *r)
{
	size_t len;
	char *text;
	cJSON *j;

	remove(f->out);
	assert_int_equal(harness_spprof(r, args), 0);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	text = harness_slurp(f->out, &len);
	assert_non_null(text);
	j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static const cJSON *run_of(const cJSON *layer, const char *format)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(layer, "runs")) {
		const cJSON *fm = cJSON_GetObjectItemCaseSensitive(r, "format");

		if (cJSON_IsString(fm) && strcmp(fm->valuestring, format) == 0)
			return r;
	}
	fail_msg("no run of %s", format);
	return NULL;
}

/* The figures of X against W, counted here: zeros, zero rows, combined FLOPs. */
static void expected(const struct fixture *f, double *sparsity, int *zero_rows, double *combined)
{
	int zeros = 0;

	*zero_rows = 0;
	*combined = 0;
	for (int j = 0; j < K; j++) {
		int colnnz = 0, rownz = 0;

		for (int i = 0; i < M; i++)
			colnnz += f->w[i * K + j] != 0.0f;
		for (int q = 0; q < N; q++)
			rownz += f->x[j * N + q] != 0.0f;
		zeros += N - rownz;
		*zero_rows += rownz == 0;
		*combined += 2.0 * colnnz * rownz;
	}
	*sparsity = (double)zeros / (K * N);
}

static void check_file_report(const struct fixture *f, const cJSON *j)
{
	const cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0);
	double sp, comb, dense = 2.0 * M * K * N;
	int zr;

	expected(f, &sp, &zr, &comb);
	assert_true(comb > 0 && zr >= 5);
	assert_string_equal(report_dotted(l, "activations.source")->valuestring, "file");
	assert_non_null(strstr(report_dotted(l, "activations.path")->valuestring, "acts/fc.npy"));
	assert_true(fabs(report_num(l, "activations.sparsity") - sp) < 1e-12);
	assert_int_equal((int)report_num(l, "activations.zero_rows"), zr);
	assert_true(fabs(report_num(l, "flops.combined") - comb) < 0.5);
	assert_true(fabs(report_num(l, "flops.combined_speedup") - dense / comb) < 1e-9 * dense / comb);
	/* the activation kernels ran, verified, beside their weight-only kernels */
	for (int i = 0; i < 3; i++) {
		static const char *const act[] = {"csc", "csr_act", "csc_act"};
		const cJSON *r = run_of(l, act[i]);

		assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "status")->valuestring, "ok");
		assert_true(report_num(r, "speedup") > 0);
	}
	/* csc_act against csc, csr_act against csr: the ratio of their medians */
	assert_true(fabs(report_num(run_of(l, "csc_act"), "speedup_weight_only") -
			 report_num(run_of(l, "csc"), "time_ns.median") / report_num(run_of(l, "csc_act"), "time_ns.median")) < 1e-9);
	assert_true(fabs(report_num(run_of(l, "csr_act"), "speedup_weight_only") -
			 report_num(run_of(l, "csr"), "time_ns.median") / report_num(run_of(l, "csr_act"), "time_ns.median")) < 1e-9);
	assert_true(cJSON_IsNull(report_dotted(run_of(l, "csr"), "speedup_weight_only")));
	/* an activation kernel's efficiency is against the combined ideal */
	assert_true(fabs(report_num(run_of(l, "csc_act"), "efficiency") -
			 report_num(run_of(l, "csc_act"), "speedup") * comb / dense) < 1e-9);
}

static void test_activations_file(void **state)
{
	struct fixture *f = *state;
	char n[16];
	const char *args[] = {"analyze", f->model, "--n", n, "--activations", f->acts, "--repeat", "3",
			      "--threads", "2", "--counters", "none", "--quiet", "-o", f->out, NULL};
	float xt[N * K];
	struct harness_run r;
	char *path = harness_join(f->acts, "fc.npy");
	cJSON *j;

	(void)state;
	snprintf(n, sizeof(n), "%d", N);
	assert_int_equal(mkdir(f->acts, 0755), 0);
	/* K x N */
	assert_int_equal(harness_write_npy_f32(path, K, N, f->x), 0);
	j = analyze(f, args, &r);
	check_file_report(f, j);
	assert_string_equal(report_dotted(j, "settings.activations")->valuestring, f->acts);
	cJSON_Delete(j);
	harness_run_free(&r);
	/* the same X as N x K */
	for (int i = 0; i < K; i++)
		for (int q = 0; q < N; q++)
			xt[q * K + i] = f->x[i * N + q];
	assert_int_equal(harness_write_npy_f32(path, N, K, xt), 0);
	j = analyze(f, args, &r);
	check_file_report(f, j);
	cJSON_Delete(j);
	harness_run_free(&r);

	/* a wrong shape: exit 2, one line naming the file, no report written */
	memset(xt, 0, sizeof(xt));
	assert_int_equal(harness_write_npy_f32(path, K / 2, N, xt), 0);
	remove(f->out);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "acts/fc.npy"));
	assert_non_null(strstr(r.err, "shape 20x16 fit neither KxN (40x16) nor NxK"));
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_false(harness_exists(f->out));
	harness_run_free(&r);
	/* not an array at all */
	assert_int_equal(harness_write(path, "not npy", 7), 0);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "acts/fc.npy': activations are not a NumPy array"));
	harness_run_free(&r);
	/* no file for the layer: a warning, and uniform X */
	remove(path);
	args[13] = "--format";
	args[14] = "json";
	for (int i = 0; args[i]; i++)
		if (strcmp(args[i], "--quiet") == 0)
			args[i] = "--cold";
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "'fc': no activations file"));
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_string_equal(report_dotted(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0),
					  "activations.source")->valuestring, "uniform");
	cJSON_Delete(j);
	harness_run_free(&r);
	free(path);
}

static void test_act_sparsity(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"analyze", f->model, "--n", "64", "--act-sparsity", "0.5", "--repeat", "3",
			      "--counters", "none", "--quiet", "-o", f->out, NULL};
	const char *stat[] = {"analyze", f->model, "--static", "--act-sparsity", "0.25", "--quiet", "-o",
			      f->out, NULL};
	struct harness_run r;
	const cJSON *l;
	cJSON *j = analyze(f, args, &r);

	l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0);
	assert_string_equal(report_dotted(l, "activations.source")->valuestring, "synthetic");
	assert_true(report_num(l, "activations.requested") == 0.5);
	/* 2560 i.i.d. draws: 0.5 +- 0.05 is over 5 standard deviations */
	assert_true(fabs(report_num(l, "activations.sparsity") - 0.5) < 0.05);
	assert_true(report_num(l, "flops.combined") < 0.6 * report_num(l, "flops.sparse"));
	assert_true(report_num(l, "flops.combined") > 0.4 * report_num(l, "flops.sparse"));
	assert_true(report_num(j, "settings.act_sparsity") == 0.5);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(run_of(l, "csr_act"), "status")->valuestring, "ok");
	cJSON_Delete(j);
	harness_run_free(&r);

	/* the text and Markdown reports say it in a note under the runs */
	for (int fmt = 0; fmt < 3; fmt++) {
		static const char *const names[] = {"text", "md", "html"};
		static const char *const lead[] = {"\nfc: activations synthetic: ", "\n- fc: activations synthetic: ",
						   "<li>fc: activations synthetic: "};
		static const char *const heading[] = {"", "### Notes", "<section id=\"notes\">"};
		const char *text[] = {"report", f->out, "--format", names[fmt], NULL};

		assert_int_equal(harness_spprof(&r, text), 0);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, lead[fmt]));
		assert_non_null(strstr(r.out, "its weight-only kernel"));
		assert_non_null(strstr(r.out, heading[fmt]));
		harness_run_free(&r);
	}

	/* a hostile name in a saved report cannot drive the terminal through the notes */
	{
		size_t len;
		char *text = harness_slurp(f->out, &len), *out;
		cJSON *rep = cJSON_Parse(text), *name;
		const char *re[] = {"report", f->out, "--format", "text", NULL};

		free(text);
		assert_non_null(rep);
		name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rep, "layers"), 0),
							"name");
		assert_non_null(cJSON_SetValuestring(name, "evil\033[31m"));
		out = cJSON_PrintUnformatted(rep);
		assert_int_equal(harness_write(f->out, out, strlen(out)), 0);
		free(out);
		cJSON_Delete(rep);
		assert_int_equal(harness_spprof(&r, re), 0);
		assert_int_equal(r.status, 0);
		assert_null(strchr(r.out, '\033'));
		assert_non_null(strstr(r.out, "\nevil\\x1b[31m: activations synthetic"));
		harness_run_free(&r);
	}

	/* static: the i.i.d. expectation 2 nnz N (1 - A) */
	j = analyze(f, stat, &r);
	l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0);
	assert_true(report_num(l, "flops.combined") == 0.75 * report_num(l, "flops.sparse"));
	assert_true(cJSON_IsNull(report_dotted(l, "activations.zero_rows")));
	cJSON_Delete(j);
	harness_run_free(&r);
	/* without the option a static report has no activations */
	stat[3] = "--quiet";
	stat[4] = "--quiet";
	j = analyze(f, stat, &r);
	l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "layers"), 0);
	assert_true(cJSON_IsNull(report_dotted(l, "activations")));
	assert_true(cJSON_IsNull(report_dotted(l, "flops.combined")));
	cJSON_Delete(j);
	harness_run_free(&r);
}

static void test_bad_options(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[][2] = {
		{"--act-sparsity", "1"}, {"--act-sparsity", "-0.1"}, {"--act-sparsity", "half"},
		{"--activations", "/nonexistent/folder"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {"analyze", f->model, bad[i][0], bad[i][1], NULL};
		struct harness_run r;

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 2)
			fail_msg("%s %s: exit %d", bad[i][0], bad[i][1], r.status);
		assert_non_null(strstr(r.err, bad[i][0]));
		harness_run_free(&r);
	}
}

/*
 * A layer whose name is longer than a file name may be (300 bytes): no
 * file can hold its activations, so a warning and uniform X, as for a
 * missing file (it was exit 2, "File name too long").
 */
static void test_long_layer_name(void **state)
{
	struct fixture *f = *state;
	char name[301], head[512], *model = harness_join(f->dir, "long.safetensors");
	unsigned char file[8 + 512 + 64 * 4] = {0};
	const char *args[] = {"analyze", model, "--n", "4", "--repeat", "1", "--counters", "none",
			      "--activations", f->acts, "--format", "json", NULL};
	struct harness_run r;
	size_t hl;

	memset(name, 'a', 300);
	name[300] = '\0';
	hl = (size_t)snprintf(head, sizeof(head),
			      "{\"%s\":{\"dtype\":\"F32\",\"shape\":[8,8],\"data_offsets\":[0,256]}}", name);
	for (int b = 0; b < 8; b++)
		file[b] = (unsigned char)(hl >> (8 * b));
	memcpy(file + 8, head, hl);
	for (int i = 0; i < 64; i += 3)
		memcpy(file + 8 + hl + 4 * i, &(float){1.0f}, 4);
	assert_int_equal(harness_write(model, file, 8 + hl + 256), 0);
	mkdir(f->acts, 0755);
	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_non_null(strstr(r.err, "no activations file: the name is too long for a file name"));
	harness_run_free(&r);
	free(model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_activations_file),
		cmocka_unit_test(test_act_sparsity),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_long_layer_name),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
