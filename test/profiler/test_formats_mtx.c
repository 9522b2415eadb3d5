/*
 * The Matrix Market and DLMC .smtx loaders (test_formats.c runs these):
 * text files written by the test with known zeros, read back through the
 * library and the spprof binary; malformed ones fail with exit 2 and one
 * line naming the file, and an unknown file names the formats spprof reads.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "profiler/decode.h"
#include "profiler/gguf.h"
#include "profiler/model.h"
#include "profiler/mtx.h"
#include "profiler/smtx.h"
#include "test/profiler/formats_fixture.h"
#include "test/harness.h"

/* The model's one layer decoded dense (heap); its tensor holds only the non-zeros. */
static float *decoded(const struct spp_analysis *a)
{
	const struct spp_layer *l = &a->layers[0];
	float *w = malloc((size_t)(l->view.m * l->view.k) * sizeof(*w));
	struct spp_error err = {0};

	assert_non_null(w);
	assert_null(l->weight->data);
	assert_non_null(l->weight->coo);
	assert_int_equal(spp_layer_decode(l, w, &err), 0);
	return w;
}

static char *text_file(const char *name, const char *text)
{
	struct bytes b = {0};
	char *p;

	bytes_put(&b, text, strlen(text));
	p = fx_write(name, &b);
	bytes_free(&b);
	return p;
}

void test_mtx(void **state)
{
	/* 3x4 real: 5 entries, one an explicit zero */
	char *real = text_file("real.mtx",
			       "%%MatrixMarket matrix coordinate real general\n% c\n%\n"
			       "3 4 5\n1 1 1.5\n1 4 -2e-3\n2 2 0.0\n3 1 1e-60\n3 4 7\n");
	/* 3x3 integer symmetric: diagonal 2, below it 2 (mirrored: 4) */
	char *sym = text_file("sym.mtx",
			      "%%MatrixMarket matrix coordinate integer symmetric\n"
			      "3 3 4\n1 1 5\n3 3 -1\n2 1 3\n3 2 9\n");
	char *pat = text_file("pat.mtx",
			      "%%MatrixMarket Matrix Coordinate Pattern General\r\n"
			      "2 40 3\r\n1 1\r\n2 40\r\n1 33\r\n\n");
	struct spp_analysis *a;
	float *w;

	(void)state;
	a = fx_analyze(real);
	assert_string_equal(a->model->format, "mtx");
	assert_int_equal(a->nlayers, 1);
	assert_string_equal(a->layers[0].name, "real");
	assert_int_equal(a->layers[0].view.m, 3);
	assert_int_equal(a->layers[0].view.k, 4);
	assert_int_equal(a->stats[0].counts.nnz, 4);
	w = decoded(a);
	assert_true(w[0] == 1.5f && w[3] == -2e-3f && w[5] == 0 && w[8] > 0 && w[11] == 7);
	/* the explicit zero is no entry */
	assert_int_equal(a->layers[0].weight->coo->nnz, 4);
	free(w);
	spp_analysis_destroy(a);

	a = fx_analyze(sym);
	assert_int_equal(a->stats[0].counts.nnz, 6);
	w = decoded(a);
	assert_true(w[1] == 3 && w[3] == 3 && w[5] == 9 && w[7] == 9 && w[8] == -1);
	free(w);
	spp_analysis_destroy(a);

	a = fx_analyze(pat);
	assert_int_equal(a->stats[0].counts.nnz, 3);
	assert_int_equal(a->stats[0].counts.zero_rows, 0);
	spp_analysis_destroy(a);
	free(real);
	free(sym);
	free(pat);
}

#define TEN "1234567890"
#define HUNDRED TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN

void test_mtx_malformed(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n", "outside"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1.0\n", "outside"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n", "twice"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n", "ends after 2"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", "after the 1"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", "not a real"},
		{"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", "not an integer"},
		{"%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n", "above the diagonal"},
		{"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", "square"},
		{"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "coordinate"},
		{"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex"},
		{"%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", "skew"},
		{"%%MatrixMarket vector\n", "expected"},
		{"%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n", "more than"},
		{"%%MatrixMarket matrix coordinate real general\n3000000000 2 0\n", "'M K NNZ'"},
		{"%%MatrixMarket matrix coordinate real general\n2000 2000 1000000\n1 1 1\n", "cannot fit"},
		/* was "found 0 fields" */
		{"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 " HUNDRED HUNDRED "\n",
		 "line 3: field 3 is 200 bytes long, more than 127"},
	};
	/* "1.5" cut to "1" by the NUL was read as 1 */
	static const char nul[] = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\0.5\n";
	char name[32];
	struct bytes b = {0};
	char *p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu.mtx", i);
		p = text_file(name, cases[i].text);
		fx_expect_bad(p, cases[i].want);
		free(p);
	}
	bytes_put(&b, nul, sizeof(nul) - 1);
	p = fx_write("nul.mtx", &b);
	bytes_free(&b);
	fx_expect_bad(p, "line 3: a NUL byte at column 6");
	free(p);
	/* a comment is not split: a long word in it is fine */
	p = text_file("comment.mtx", "%%MatrixMarket matrix coordinate real general\n% " HUNDRED HUNDRED
				     "\n2 2 1\n1 1 1.5\n");
	{
		const char *args[] = {"analyze", p, "--static", NULL};
		struct harness_run r;

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("'%s': status %d: %s", p, r.status, r.err);
		harness_run_free(&r);
	}
	free(p);
}

/* The loaded non-zeros hold the values spp_smtx_fill_dense() draws for the pattern. */
static void expect_values_drawn(const struct spp_analysis *a, const char *path)
{
	struct spp_smtx s;
	struct spp_error err = {0};
	float *w = decoded(a), *want;

	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	want = malloc((size_t)(s.m * s.k) * sizeof(*want));
	assert_non_null(want);
	spp_smtx_fill_dense(&s, SPP_MATRIX_SEED, want);
	assert_memory_equal(w, want, (size_t)(s.m * s.k) * sizeof(*w));
	spp_smtx_release(&s);
	free(want);
	free(w);
}

/* Every .smtx of the DLMC subset has the shape and nnz its dlmc.csv lists. */
void test_smtx_dlmc(void **state)
{
	char *root = harness_dlmc_dir();
	char *csv_path = root ? harness_join(root, "dlmc.csv") : NULL, *csv, *line, *save = NULL;
	int checked = 0;

	(void)state;
	if (!csv_path || !harness_exists(csv_path)) {
		print_message("skip: no DLMC subset beside the repository (../shared/bench/dlmc)\n");
		free(csv_path);
		free(root);
		skip();
	}
	csv = harness_slurp(csv_path, NULL);
	assert_non_null(csv);
	/* model,quality,path,name,nrows,ncols,nnz,... with path "dlmc/<rel>" */
	for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[8], *q = line, *path;
		int n = 0;
		struct spp_analysis *a;

		while (n < 8 && (f[n++] = strsep(&q, ",")))
			;
		if (n < 8 || !f[6] || strncmp(f[2], "dlmc/", 5) != 0)
			continue;
		path = harness_join(root, f[2] + 5);
		if (!harness_exists(path)) {
			free(path);
			continue;
		}
		a = fx_analyze(path);
		assert_string_equal(a->model->format, "smtx");
		assert_int_equal(a->layers[0].view.m, atoll(f[4]));
		assert_int_equal(a->layers[0].view.k, atoll(f[5]));
		assert_int_equal(a->stats[0].counts.nnz, (uint64_t)atof(f[6]));
		if (checked == 0)
			expect_values_drawn(a, path);
		spp_analysis_destroy(a);
		free(path);
		checked++;
	}
	assert_true(checked >= 20);
	free(csv);
	free(csv_path);
	free(root);
}

void test_smtx_malformed(void **state)
{
	char *p;

	(void)state;
	p = text_file("bad1.smtx", "2, 3, 2\n0 1 3\n0 1\n");
	fx_expect_bad(p, "row offset");
	free(p);
	p = text_file("bad2.smtx", "2, 3, 2\n0 1 2\n0 5\n");
	fx_expect_bad(p, "column index");
	free(p);
	p = text_file("bad3.smtx", "2000000000, 2000000000, 5\n0 1 2\n");
	fx_expect_bad(p, "cannot fit");
	free(p);
}

/* An unknown file names the formats spprof reads. */
void test_unknown_format(void **state)
{
	char *p = text_file("notes.txt", "hello, this is not a model\n");

	(void)state;
	fx_expect_bad(p, "gguf, npy, tflite, mtx, safetensors, pytorch (legacy), pytorch, npz, tfjs");
	free(p);
}
