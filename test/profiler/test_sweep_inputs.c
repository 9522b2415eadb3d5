/*
 * The sweep's inputs (test_sweep.c runs these): the in-memory synthetic
 * weights (spp_synth_fill_f32) against the file synth writes, the DLMC
 * .smtx loader on a real file and on malformed ones, and `spprof bench`
 * end to end on a tiny run. No timed assertions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kernels/kernels.h"
#include "profiler/run.h"
#include "profiler/smtx.h"
#include "profiler/sweep.h"
#include "profiler/synth.h"
#include "profiler/synth_fill.h"
#include "reports/report.h"
#include "test/harness.h"

/* ---- synthetic W in memory ---- */

static struct spp_synth_layer layer(const char *spec)
{
	struct spp_synth_layer l;
	struct spp_error err = {0};

	assert_int_equal(spp_synth_parse_layer(spec, &l, &err), 0);
	return l;
}

static int64_t count_nz(const float *w, int64_t n)
{
	int64_t c = 0;

	for (int64_t i = 0; i < n; i++)
		c += w[i] != 0;
	return c;
}

void test_fill_patterns(void **state)
{
	struct spp_error err = {0};
	struct spp_synth_layer l;
	float w[400];
	int zero_blocks = 0;

	(void)state;
	/* unstructured: exactly round(0.3 * 1961) = 588 zeros */
	{
		float *u = malloc(37 * 53 * sizeof(float));

		l = layer("u=37x53:unstructured:0.3");
		assert_int_equal(spp_synth_fill_f32(&l, 7, u, &err), 0);
		assert_int_equal(count_nz(u, 37 * 53), 1961 - 588);
		for (int i = 0; i < 37 * 53; i++)
			assert_true(u[i] == 0 || (fabsf(u[i]) >= 0.05f && fabsf(u[i]) <= 1.0f));
		free(u);
	}
	/* 2:4 on K = 10: groups of 4, 4 and 2, each exactly 2 non-zeros */
	l = layer("n=8x10:nm2_4:0.5");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	assert_int_equal(count_nz(w, 80), 8 * 6);
	for (int i = 0; i < 8; i++)
		for (int g = 0; g < 10; g += 4)
			assert_int_equal(count_nz(w + i * 10 + g, g + 4 <= 10 ? 4 : 2), 2);
	/* block4 on 10x10: 9 blocks, round(0.5 * 9) = 5 of them zero */
	l = layer("b=10x10:block4:0.5");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	for (int bi = 0; bi < 10; bi += 4)
		for (int bj = 0; bj < 10; bj += 4) {
			int nz = 0, size = 0;

			for (int i = bi; i < bi + 4 && i < 10; i++)
				for (int j = bj; j < bj + 4 && j < 10; j++, size++)
					nz += w[i * 10 + j] != 0;
			assert_true(nz == 0 || nz == size);
			zero_blocks += nz == 0;
		}
	assert_int_equal(zero_blocks, 5);
	/* channel on 20x7: round(0.25 * 20) = 5 zero rows, the rest dense */
	l = layer("c=20x7:channel:0.25");
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), 0);
	assert_int_equal(count_nz(w, 140), 15 * 7);
	/* a layer the writer refuses */
	l = layer("n=8x10:nm2_4:0.5");
	l.sparsity = 0.3;
	assert_int_equal(spp_synth_fill_f32(&l, 3, w, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "layer 'n'"));
}

/* The data of a one-layer safetensors file (after the header). */
static void check_same_as_file(const char *spec, uint64_t seed)
{
	struct spp_synth_layer l = layer(spec);
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path;
	unsigned char *data;
	uint64_t hlen = 0, numel = 1;
	size_t len = 0;
	float *w;

	assert_non_null(dir);
	path = harness_join(dir, "one.safetensors");
	assert_int_equal(spp_synth_write(path, &l, 1, seed, &err), 0);
	data = (unsigned char *)harness_slurp(path, &len);
	assert_non_null(data);
	for (int b = 0; b < 8; b++)
		hlen |= (uint64_t)data[b] << (8 * b);
	for (int d = 0; d < l.ndim; d++)
		numel *= (uint64_t)l.shape[d];
	assert_int_equal(len, 8 + hlen + numel * 4);
	w = malloc(numel * sizeof(float));
	assert_int_equal(spp_synth_fill_f32(&l, seed, w, &err), 0);
	assert_memory_equal(w, data + 8 + hlen, numel * 4);
	free(w);
	free(data);
	free(path);
	harness_rmtree(dir);
}

void test_fill_matches_file(void **state)
{
	(void)state;
	check_same_as_file("fc=33x70000:unstructured:0.6", 11);  /* rows in 2 chunks */
	check_same_as_file("nm=12x40:nm2_4:0.5", 5);
	check_same_as_file("conv=8x6x3x3:nm2_4:0.5", 9);       /* a permuted row */
	check_same_as_file("bl=16x24:block8:0.4", 2);
}

/* ---- DLMC .smtx ---- */

void test_smtx_dlmc(void **state)
{
	static const char rel[] =
		"transformer/magnitude_pruning/0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx";
	char *dir = harness_dlmc_dir(), *path = NULL, *csvp = NULL, *csv = NULL, *line;
	long long m1 = -1, k1 = -1, nnz1 = -1;
	double csv_m = -1, csv_k = -1, csv_nnz = -1;
	struct spp_smtx s;
	struct spp_error err = {0};
	char key[300];
	FILE *f;
	float *w;

	(void)state;
	if (!dir || !harness_exists(dir)) {
		free(dir);
		skip();
	}
	path = harness_join(dir, rel);
	csvp = harness_join(dir, "dlmc.csv");
	/* the first line, read here independently */
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lld, %lld, %lld", &m1, &k1, &nnz1), 3);
	fclose(f);
	/* the collection's metadata row for the same matrix */
	csv = harness_slurp(csvp, NULL);
	assert_non_null(csv);
	snprintf(key, sizeof(key), ",dlmc/%s,", rel);
	line = strstr(csv, key);
	assert_non_null(line);
	line += strlen(key);
	line = strchr(line, ',') + 1;  /* skip the name column */
	assert_int_equal(sscanf(line, "%lf,%lf,%lf", &csv_m, &csv_k, &csv_nnz), 3);

	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	assert_int_equal(s.m, m1);
	assert_int_equal(s.k, k1);
	assert_int_equal(s.nnz, nnz1);
	assert_int_equal(s.m, (int64_t)csv_m);
	assert_int_equal(s.k, (int64_t)csv_k);
	assert_int_equal(s.nnz, (int64_t)csv_nnz);
	assert_int_equal(s.row_ptr[s.m], s.nnz);
	w = malloc((size_t)(s.m * s.k) * sizeof(float));
	spp_smtx_fill_dense(&s, 42, w);
	assert_int_equal(count_nz(w, s.m * s.k), s.nnz);
	for (int64_t i = 0; i < s.m; i++)
		assert_int_equal(count_nz(w + i * s.k, s.k), s.row_ptr[i + 1] - s.row_ptr[i]);
	for (int64_t i = 0; i < s.m * s.k; i++)
		assert_true(w[i] == 0 || (fabsf(w[i]) >= 0.05f && fabsf(w[i]) < 1.0f));
	/* fixed seed: the same values again */
	{
		float *w2 = malloc((size_t)(s.m * s.k) * sizeof(float));

		spp_smtx_fill_dense(&s, 42, w2);
		assert_memory_equal(w, w2, (size_t)(s.m * s.k) * sizeof(float));
		free(w2);
	}
	free(w);
	spp_smtx_release(&s);
	spp_smtx_release(&s);
	free(csv);
	free(csvp);
	free(path);
	free(dir);
}

void test_smtx_malformed(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "line 1: expected \"M, K, NNZ\""},
		{"2 3 1\n0 1 1\n2\n", "line 1: expected ', ' after 2"},
		{"2, 3, x\n", "line 1: expected \"M, K, NNZ\""},
		{"0, 3, 0\n0\n\n", "dims must be >= 1"},
		{"2, 3, 7\n", "NNZ 7 exceeds M*K = 6"},
		{"2, 3, 2\n1 1 2\n0 1\n", "row offset 0 is 1, must be 0"},
		{"2, 3, 2\n0 2 1\n0 1\n", "row offset 2 is 1, below the one before"},
		{"2, 3, 2\n0 1 3\n0 1\n", "last row offset 3, the header says NNZ 2"},
		{"2, 3, 2\n0 1\n0 1\n", "line 2: row offset 2 of 3"},
		{"2, 3, 2\n0 1 2 2\n0 1\n", "more than the 3 row offsets"},
		{"2, 3, 2\n0 1 2\n0\n", "line 3: column index 1 of 2"},
		{"2, 3, 2\n0 1 2\n0 3\n", "column index 1 is 3, K is 3"},
		{"2, 3, 3\n0 2 3\n1 1\n0\n", "row 0: column 1 after 1, want ascending"},
		{"2, 3, 2\n0 1 2\n0 1 2\n", "more than the 2 column indices"},
		{"2, 3, 2\n0 1 2\n0 1\nextra\n", "text after line 3"},
		{"2, 3, 99999999999\n", "line 1: expected \"M, K, NNZ\""},
	};
	char *dir = harness_tmpdir(), *path;
	struct spp_smtx s;
	struct spp_error err;

	(void)state;
	assert_non_null(dir);
	path = harness_join(dir, "m.smtx");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		assert_int_equal(harness_write(path, cases[c].text, strlen(cases[c].text)), 0);
		memset(&err, 0, sizeof(err));
		if (spp_smtx_load(path, &s, &err) != SPP_E_FORMAT)
			fail_msg("case %zu: loaded", c);
		if (!strstr(err.msg, cases[c].msg) || !strstr(err.msg, "m.smtx'"))
			fail_msg("case %zu: message '%s' lacks '%s'", c, err.msg, cases[c].msg);
		assert_null(s.row_ptr);
	}
	/* a good one without the final newline, and one with CRLF */
	assert_int_equal(harness_write(path, "2, 3, 2\n0 1 2\n0 2", 17), 0);
	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	assert_int_equal(s.col[1], 2);
	spp_smtx_release(&s);
	assert_int_equal(harness_write(path, "2, 3, 2\r\n0 1 2\r\n0 2\r\n", 21), 0);
	assert_int_equal(spp_smtx_load(path, &s, &err), 0);
	spp_smtx_release(&s);
	/* missing file */
	free(path);
	path = harness_join(dir, "none.smtx");
	assert_int_equal(spp_smtx_load(path, &s, &err), SPP_E_IO);
	assert_non_null(strstr(err.msg, "cannot open"));
	free(path);
	harness_rmtree(dir);
}

/* bench's targets at N = 1: three; each speedup target with the rates that bound it */
static void check_bench_targets(const cJSON *j)
{
	const cJSON *tg = cJSON_GetObjectItem(j, "targets"), *t;
	int bounds = 0;

	assert_int_equal(cJSON_GetArraySize(tg), 3);
	cJSON_ArrayForEach(t, tg) {
		const cJSON *b = cJSON_GetObjectItem(t, "bound"), *d;

		if (strstr(cJSON_GetObjectItem(t, "target")->valuestring, "breakeven")) {
			assert_null(b);
			continue;
		}
		assert_non_null(b);
		bounds++;
		/* the run of the format the target names */
		assert_string_equal(cJSON_GetObjectItem(b, "format")->valuestring,
				    cJSON_GetObjectItem(t, "format")->valuestring);
		assert_true(cJSON_GetObjectItem(b, "time_ns")->valuedouble > 0);
		assert_true(cJSON_GetObjectItem(b, "bandwidth_gbs")->valuedouble > 0);
		assert_true(cJSON_GetObjectItem(b, "bw_util")->valuedouble > 0);
		assert_true(cJSON_IsString(cJSON_GetObjectItem(b, "bw_level")));
		assert_true(cJSON_GetObjectItem(b, "gflops")->valuedouble > 0);
		d = cJSON_GetObjectItem(b, "dense");
		assert_string_equal(cJSON_GetObjectItem(d, "format")->valuestring, "dense");
		assert_true(cJSON_GetObjectItem(d, "gflops")->valuedouble > 0);
		assert_true(cJSON_GetObjectItem(d, "peak_share")->valuedouble > 0);
		/* useful FLOP/s against dense's: the speedup times the density */
		assert_true(fabs(cJSON_GetObjectItem(b, "dense_share")->valuedouble -
				 cJSON_GetObjectItem(b, "gflops")->valuedouble /
					 cJSON_GetObjectItem(d, "gflops")->valuedouble) < 1e-9);
		assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "at_target"), "gflops"));
	}
	assert_int_equal(bounds, 2);
}

/* The sweep's breakeven and points with their intervals, null where unknown, as the summary's. */
static void check_bench_intervals(const cJSON *j, const cJSON *sw)
{
	const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "results"), 0);
	const cJSON *sum = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "summary"), 0);

	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "breakeven"), "breakeven_low"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "curve"), 0),
					    "speedup_ci_high"));
	assert_non_null(cJSON_GetObjectItem(sum, "best_breakeven_high"));
	assert_non_null(cJSON_GetObjectItem(sum, "csr_breakeven_low"));
	assert_non_null(cJSON_GetObjectItem(sum, "csr_breakeven_high"));
	/* bench times 6 rounds at least: every speedup target carries its interval */
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(sum, "best_speedup_at_0.9_ci_low")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(sum, "best_speedup_at_0.9_ci_high")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(sum, "nm2_4_speedup_on_2_4_ci_low")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(sum, "nm2_4_speedup_on_2_4_ci_high")));
}

/* `spprof bench` end to end on a tiny run; structure only, never a time. */
void test_bench_cli(void **state)
{
	char *dir = harness_dlmc_dir();
	struct harness_run r;
	cJSON *j, *cases, *c0, *sw;

	(void)state;
	{
		const char *args[] = {"bench", "--dlmc", "/nonexistent/dlmc", "--quick", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "'/nonexistent/dlmc'"));
		harness_run_free(&r);
	}
	if (!dir || !harness_exists(dir)) {
		free(dir);
		skip();
	}
	{
		const char *args[] = {"bench", "--dlmc", dir, "--quick", "--threads", "1", "--n", "1",
				      "--size", "48", "--formats", "csr,nm2_4", "--time-budget",
				      "0.001", "--cold", "--format", "json", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
	}
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "spprof.bench/1");
	/* --cold, said with how the caches were evicted */
	{
		const cJSON *set = cJSON_GetObjectItem(j, "settings");

		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(set, "cold")));
		assert_non_null(strstr(cJSON_GetObjectItem(set, "cold_method")->valuestring, "MiB read"));
	}
	/* the machine block is the analyze report's (reports/machine.c), with the run's candidates */
	{
		const cJSON *m = cJSON_GetObjectItem(j, "machine");

		assert_non_null(cJSON_GetObjectItem(m, "caches"));
		assert_non_null(cJSON_GetObjectItem(m, "calibration"));
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(m, "gpus")));
		assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "dense_blas"), "coretype_env"));
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(m, "dense_candidates")));
	}
	cases = cJSON_GetObjectItem(j, "cases");
	assert_int_equal(cJSON_GetArraySize(cases), 1);
	c0 = cJSON_GetArrayItem(cases, 0);
	assert_int_equal(cJSON_GetObjectItem(c0, "n")->valuedouble, 1);
	/* --quick: two DLMC matrices, each with dense, csr and nm2_4 runs */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(c0, "dlmc")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
				 cJSON_GetArrayItem(cJSON_GetObjectItem(c0, "dlmc"), 0), "runs")), 3);
	sw = cJSON_GetObjectItem(c0, "sweep");
	assert_string_equal(cJSON_GetObjectItem(sw, "schema")->valuestring, "spprof.sweep/1");
	/* the N:M format is left out of the unstructured sweep */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sw, "results")), 1);
	check_bench_intervals(j, sw);
	/* --cold: the same sweep warm beside it, its own dense choice, the same formats */
	{
		const cJSON *warm = cJSON_GetObjectItem(c0, "sweep_warm");

		assert_non_null(warm);
		assert_string_equal(cJSON_GetObjectItem(warm, "schema")->valuestring, "spprof.sweep/1");
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(warm, "results")), 1);
	}
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "nm2_4"), "m")->valuedouble, 48);
	/* the probe of this run, one per thread count, is the machine block's calibration too */
	{
		const cJSON *pr = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "settings"), "probe");
		const cJSON *cal = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "machine"), "calibration");

		assert_int_equal(cJSON_GetArraySize(pr), 1);
		assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pr, 0), "threads")->valuedouble, 1);
		assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(pr, 0), "read_gbs")->valuedouble > 0);
		assert_true(cJSON_GetObjectItem(cal, "read_gbs")->valuedouble ==
			    cJSON_GetObjectItem(cJSON_GetArrayItem(pr, 0), "read_gbs")->valuedouble);
	}
	check_bench_targets(j);
	cJSON_Delete(j);
	harness_run_free(&r);
	free(dir);
}
