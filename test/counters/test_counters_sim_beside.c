/*
 * --counters A,sim: the simulator beside a hardware backend. The list's
 * parsing, the choice with each backend forced available or not, a run
 * whose cache_sim the simulator fills beside whatever counts its cache,
 * the JSON writer and reader of a run with both blocks, and analyze end to
 * end: papi,sim and perf,sim behave as papi and perf alone where those
 * cannot count (this machine has no PMU), auto,sim does not repeat the
 * simulator's block, and a report with both blocks renders, merges and
 * gates. Where a hardware backend counts, the same tests check both blocks.
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

#include "counters/counters.h"
#include "counters/sim.h"
#include "kernels/kernels.h"
#include "profiler/analyze.h"
#include "profiler/run.h"
#include "reports/report.h"
#include "test/harness.h"

static void test_parse(void **state)
{
	static const struct {
		const char *arg, *want;
		int beside;
	} ok[] = {
		{"auto", "auto", 0}, {"papi", "papi", 0}, {"perf", "perf", 0}, {"sim", "sim", 0},
		{"none", "none", 0}, {"papi,sim", "papi", 1}, {"perf,sim", "perf", 1},
		{"auto,sim", "auto", 1}, {"sim,perf", "perf", 1},
	};
	static const char *const bad[] = {
		"sim,sim", "none,sim", "sim,none", "papi,perf", "papi,papi", "papi,sim,sim", "",
		",sim", "papi,", ",", "cupti", "cupti,sim", "PAPI,sim", "papi ,sim",
		"a-name-far-longer-than-any-backend-name-is,sim",
	};
	struct spp_counters_opts o;
	struct spp_error err;
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		spp_counters_opts_init(&o);
		assert_int_equal(spp_counters_parse(ok[i].arg, &o, &err), 0);
		assert_string_equal(o.want, ok[i].want);
		assert_int_equal(o.sim_beside, ok[i].beside);
		/* the settings' spelling parses back to the same choice */
		spp_counters_opts_format(&o, buf, sizeof(buf));
		spp_counters_opts_init(&o);
		assert_int_equal(spp_counters_parse(buf, &o, &err), 0);
		assert_string_equal(o.want, ok[i].want);
		assert_int_equal(o.sim_beside, ok[i].beside);
	}
	spp_counters_opts_init(&o);
	spp_counters_opts_format(&o, buf, sizeof(buf));
	assert_string_equal(buf, "auto");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spp_counters_opts_init(&o);
		assert_int_equal(spp_counters_parse(bad[i], &o, &err), SPP_E_USAGE);
		assert_null(strchr(err.msg, '\n'));
		assert_true(strlen(err.msg) > 20);
		/* o is left as it was */
		assert_string_equal(o.want, "auto");
		assert_int_equal(o.sim_beside, 0);
	}
	assert_int_equal(spp_counters_parse("cupti,sim", &o, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "'cupti'"));
}

/* Resolve arg against the probes a[0..3] (papi, perf, sim, none). */
static int resolve(const char *arg, const struct spp_counter_avail *a,
		   const struct spp_counter_backend **b, int *beside, char *why, size_t n,
		   struct spp_error *err)
{
	struct spp_counters_opts o;

	spp_counters_opts_init(&o);
	assert_int_equal(spp_counters_parse(arg, &o, err), 0);
	return spp_counters_resolve(&o, a, 4, b, beside, why, n, err);
}

/* The choice with each hardware backend forced available, then not. */
static void test_resolve(void **state)
{
	struct spp_counter_avail a[4] = {
		{"papi", 1, 1, 0, ""}, {"perf", 1, 1, 0, ""},
		{"sim", 1, 1, 0, ""}, {"none", 1, 0, 0, ""},
	};
	const struct spp_counter_backend *b, *alone;
	struct spp_error err, err_alone;
	char why[512];
	int beside, have_papi = spp_counter_backend_find("papi") != NULL;
	int have_perf = spp_counter_backend_find("perf") != NULL;

	(void)state;
	/* a PMU: auto,sim is the counters and the simulator beside them */
	assert_int_equal(resolve("auto,sim", a, &b, &beside, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, have_papi ? "papi" : have_perf ? "perf" : "sim");
	assert_int_equal(beside, have_papi || have_perf);
	if (have_papi) {
		assert_int_equal(resolve("papi,sim", a, &b, &beside, why, sizeof(why), &err), 0);
		assert_string_equal(b->name, "papi");
		assert_int_equal(beside, 1);
	}
	if (have_perf) {
		assert_int_equal(resolve("sim,perf", a, &b, &beside, why, sizeof(why), &err), 0);
		assert_string_equal(b->name, "perf");
		assert_int_equal(beside, 1);
	}
	/* the simulator alone or none: nothing beside */
	assert_int_equal(resolve("sim", a, &b, &beside, why, sizeof(why), &err), 0);
	assert_int_equal(beside, 0);
	assert_int_equal(resolve("none", a, &b, &beside, why, sizeof(why), &err), 0);
	assert_int_equal(beside, 0);

	/* no PMU: a hardware backend fails with the list as it fails alone */
	a[0].works = a[0].cache_events = 0;
	snprintf(a[0].why, sizeof(a[0].why), "perf_event component disabled: no PMU (virtualized)");
	a[1].works = a[1].cache_events = 0;
	snprintf(a[1].why, sizeof(a[1].why), "no PMU (virtualized)");
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "perf" : "papi";
		char list[16];
		int rc_alone, rc;

		snprintf(list, sizeof(list), "%s,sim", name);
		rc_alone = resolve(name, a, &alone, &beside, why, sizeof(why), &err_alone);
		rc = resolve(list, a, &b, &beside, why, sizeof(why), &err);
		assert_int_equal(rc, SPP_E_UNSUPPORTED);
		assert_int_equal(rc, rc_alone);
		assert_string_equal(err.msg, err_alone.msg);
		assert_null(b);
		assert_int_equal(beside, 0);
	}
	/* auto,sim: auto chose the simulator, so no second simulated block, and why says so */
	assert_int_equal(resolve("auto,sim", a, &b, &beside, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, "sim");
	assert_int_equal(beside, 0);
	assert_non_null(strstr(why, "cache_sim null"));
	/* perf on software events alone works, and the simulator runs beside it */
	a[1].works = 1;
	if (have_perf) {
		assert_int_equal(resolve("perf,sim", a, &b, &beside, why, sizeof(why), &err), 0);
		assert_string_equal(b->name, "perf");
		assert_int_equal(beside, 1);
	}
}

static float *random_w(int64_t m, int64_t k, double density, unsigned seed)
{
	float *w = malloc((size_t)(m * k) * sizeof(float));

	assert_non_null(w);
	srand(seed);
	for (int64_t i = 0; i < m * k; i++)
		w[i] = (double)rand() / RAND_MAX < density ? (float)rand() / RAND_MAX - 0.5f : 0.0f;
	return w;
}

static void expect_same_figures(const struct spp_cache_figures *a, const struct spp_cache_figures *b)
{
	assert_string_equal(a->source, b->source);
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		assert_true(a->v[e] == b->v[e] || (isnan(a->v[e]) && isnan(b->v[e])));
	assert_true(a->l1d_miss_rate == b->l1d_miss_rate ||
		    (isnan(a->l1d_miss_rate) && isnan(b->l1d_miss_rate)));
	assert_string_equal(a->geometry, b->geometry);
}

/* Measure csr on w with counters c and the simulator beside them or not. */
static void measure(const struct spp_matrix *w, uint64_t nnz, const struct spp_counter_backend *c,
		    int beside, const struct spp_sim_geometry *g, struct spp_layer_runs *out)
{
	const struct spp_format_ops *csr = spp_cpu_format_find("csr");
	struct spp_run_opts ro;
	struct spp_error err;

	spp_run_opts_init(&ro);
	ro.bench.repeat = 2;
	ro.counters = c;
	ro.sim_geometry = g;
	ro.sim_beside = beside;
	if (spp_matrix_measure(w, 8, nnz, 0, "beside", &csr, 1, &ro, out, &err))
		fail_msg("measure: %s", err.msg);
	assert_int_equal(out->nruns, 2);
	assert_int_equal(out->runs[1].status, SPP_RUN_OK);
}

/*
 * The run path: with sim_beside, the simulator fills cache_sim whatever
 * counts cache (none here, perf where it opens), with the figures the sim
 * backend gives cache for the same run, derived by the same function.
 */
static void test_measure_beside(void **state)
{
	float *wv = random_w(64, 48, 0.3, 7);
	struct spp_matrix w = {64, 48, wv};
	struct spp_sim_geometry g;
	struct spp_layer_runs as_backend, beside;
	const struct spp_counter_backend *perf = spp_counter_backend_find("perf");
	struct spp_counter_avail pa;
	struct spp_error err;
	uint64_t nnz = 0;

	(void)state;
	for (int64_t i = 0; i < 64 * 48; i++)
		nnz += wv[i] != 0;
	/* caches smaller than W, so that a warm replay misses too */
	assert_int_equal(spp_sim_geometry_parse("l1=4K/4,l2=16K/4,llc=64K/8", &g, &err), 0);
	measure(&w, nnz, spp_counter_backend_find("sim"), 0, &g, &as_backend);
	measure(&w, nnz, spp_counter_backend_find("none"), 1, &g, &beside);
	assert_string_equal(as_backend.runs[1].cache.source, "sim");
	assert_string_equal(as_backend.runs[1].cache_sim.source, "");
	assert_string_equal(beside.runs[1].cache.source, "");
	assert_string_equal(beside.runs[1].cache_sim.source, "sim");
	assert_true(beside.runs[1].cache_sim.v[SPP_CEV_L1D_MISSES] > 0);
	expect_same_figures(&beside.runs[1].cache_sim, &as_backend.runs[1].cache);
	/* derived as cache is: DRAM bytes over the traffic model, no GB/s from a simulated count */
	assert_true(fabs(beside.runs[1].cache_sim.dram_over_model -
			 beside.runs[1].cache_sim.dram_bytes / beside.runs[1].bytes_moved) <= 1e-12);
	assert_true(isnan(beside.runs[1].cache_sim.dram_gbs));
	/* the dense baseline (a library) has no traced kernel */
	assert_string_equal(beside.runs[0].cache_sim.source, "");
	spp_layer_runs_release(&as_backend);
	spp_layer_runs_release(&beside);
	/* a hardware backend that opens here (perf on software events at least): both blocks */
	if (perf && (perf->probe(&pa), pa.works)) {
		measure(&w, nnz, perf, 1, &g, &beside);
		assert_string_equal(beside.runs[1].cache.source, "perf");
		assert_string_equal(beside.runs[1].cache_sim.source, "sim");
		assert_true(beside.runs[1].cache_sim.v[SPP_CEV_L1D_MISSES] > 0);
		spp_layer_runs_release(&beside);
	} else {
		print_message("perf does not open here: the hardware block is left to analyze's test\n");
	}
	free(wv);
}

static void fill(struct spp_cache_figures *f, const char *source, double base)
{
	spp_cache_figures_init(f);
	snprintf(f->source, sizeof(f->source), "%s", source);
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		f->v[e] = e == SPP_CEV_CYCLES ? NAN : base + e;
	f->l1d_miss_rate = 0.125;
	f->llc_miss_rate = 0.03125;
	f->dram_bytes = 64 * f->v[SPP_CEV_LLC_MISSES];
	snprintf(f->dram_from, sizeof(f->dram_from), "llc_misses x 64");
	f->dram_over_model = 0.5;
	f->runs = 3;
	f->nthreads = 2;
	f->thread_l1d[0] = base;
	f->thread_l1d[1] = base + 1;
	f->thread_llc[0] = 1;
	f->thread_llc[1] = NAN;
	snprintf(f->note, sizeof(f->note), "%s figures", source);
	if (strcmp(source, "sim") == 0) {
		f->sampled = 1;
		snprintf(f->geometry, sizeof(f->geometry), "l1=48K/12,l2=1M/8,llc=32M/16,line=64");
	} else {
		f->dram_gbs = 1.5;
	}
}

static void expect_figures(const struct spp_cache_figures *got, const struct spp_cache_figures *want)
{
	expect_same_figures(got, want);
	assert_true(got->llc_miss_rate == want->llc_miss_rate);
	assert_true(isnan(got->l2_miss_rate));
	assert_true(got->dram_bytes == want->dram_bytes);
	assert_string_equal(got->dram_from, want->dram_from);
	assert_true(got->dram_gbs == want->dram_gbs || (isnan(got->dram_gbs) && isnan(want->dram_gbs)));
	assert_true(got->dram_over_model == want->dram_over_model);
	assert_true(got->runs == want->runs);
	assert_true(got->sampled == want->sampled || (isnan(got->sampled) && isnan(want->sampled)));
	assert_int_equal(got->nthreads, want->nthreads);
	assert_true(got->thread_l1d[1] == want->thread_l1d[1]);
	assert_true(isnan(got->thread_llc[1]));
	assert_string_equal(got->note, want->note);
}

/* A run with cache (perf) and cache_sim through the writer and back through the reader. */
static void test_round_trip(void **state)
{
	struct spp_layer layer;
	struct spp_layer_runs runs, back;
	struct spp_run r[2];
	struct spp_analysis *a = calloc(1, sizeof(*a));
	struct spp_error err;
	cJSON *j;

	(void)state;
	assert_non_null(a);
	memset(&layer, 0, sizeof(layer));
	memset(&runs, 0, sizeof(runs));
	layer.name = "fc.weight";
	layer.view.m = 96;
	layer.view.k = 80;
	layer.n = 8;
	spp_run_init(&r[0], "cpu", "dense");
	spp_run_init(&r[1], "cpu", "csr");
	r[0].time.median = r[1].time.median = 1000;
	r[0].time.repeats = r[1].time.repeats = 3;
	fill(&r[1].cache, "perf", 100);
	fill(&r[1].cache_sim, "sim", 200);
	runs.runs = r;
	runs.nruns = 2;
	runs.dense.winner = -1;
	a->layers = &layer;
	a->nlayers = 1;
	a->runs = &runs;
	j = spp_report_layer_runs_json(a, 0);
	assert_non_null(j);
	{
		const cJSON *jr = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 1);

		assert_true(cJSON_IsObject(cJSON_GetObjectItem(jr, "cache_sim")));
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(jr, "cache_sim"),
									     "source")), "sim");
		/* not asked: null, never an empty block */
		jr = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 0);
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(jr, "cache_sim")));
	}
	assert_int_equal(spp_report_layer_runs(j, "round-trip", &back, &err), 0);
	assert_int_equal(back.nruns, 2);
	expect_figures(&back.runs[1].cache, &r[1].cache);
	expect_figures(&back.runs[1].cache_sim, &r[1].cache_sim);
	assert_string_equal(back.runs[0].cache_sim.source, "");
	spp_layer_runs_release(&back);
	cJSON_Delete(j);
	free(a);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* analyze --counters C (-o out, extra: NULL or one more option); the report, or NULL when it exited non-zero. */
static cJSON *analyze(const char *model, const char *counters, const char *out, struct harness_run *r,
		      const char *extra)
{
	const char *args[20] = {"analyze", model, "--formats", "csr,coo", "--repeat", "2", "--threads", "2",
				"--format", "json", "--quiet", "--counters", counters,
				"--cache-model=l1=4K/4,l2=16K/4,llc=64K/8"};
	int n = 14;
	cJSON *j;
	char *text;

	if (out) {
		args[n++] = "-o";
		args[n++] = out;
	}
	if (extra)
		args[n++] = extra;
	args[n] = NULL;
	assert_int_equal(harness_spprof(r, args), 0);
	if (r->status != 0)
		return NULL;
	text = out ? harness_slurp(out, NULL) : NULL;
	j = cJSON_Parse(out ? text : r->out);
	free(text);
	assert_non_null(j);
	return j;
}

static const cJSON *run_of(const cJSON *report, const char *format)
{
	const cJSON *l = cJSON_GetArrayItem(get(report, "layers"), 0), *run;

	cJSON_ArrayForEach(run, get(l, "runs"))
		if (strcmp(cJSON_GetStringValue(get(run, "format")), format) == 0)
			return run;
	fail_msg("no %s run", format);
	return NULL;
}

static int warned(const cJSON *report, const char *text)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, get(report, "warnings"))
		if (cJSON_IsString(get(w, "message")) && strstr(get(w, "message")->valuestring, text))
			return 1;
	return 0;
}

/* A report with both blocks: each writer shows them, merge keeps them, check can name them. */
static void check_beside_report(const char *dir, const char *model, const char *hw)
{
	char *shard = harness_join(dir, "shard.json"), *merged = harness_join(dir, "merged.json");
	char *rules = harness_join(dir, "rules.json"), *bad = harness_join(dir, "bad.json");
	char list[16], want[64];
	const char *text_args[] = {"report", shard, "--format", "text", NULL};
	const char *html_args[] = {"report", shard, "--format", "html", NULL};
	const char *merge_args[] = {"merge", shard, "-o", merged, NULL};
	const char *check_args[] = {"check", merged, "--rules", rules, NULL};
	const char *bad_args[] = {"check", merged, "--rules", bad, NULL};
	const char rule[] = "{\"rules\": [{\"expr\": \"layers[*].runs[cpu/csr].cache_sim.l1d_miss_rate <= 1\"}]}";
	const char misspelt[] = "{\"rules\": [{\"expr\": \"layers[*].runs[cpu/csr].cache_sim.l1d_miss <= 1\"}]}";
	struct harness_run r;
	cJSON *a, *m;

	snprintf(list, sizeof(list), "%s,sim", hw);
	a = analyze(model, list, shard, &r, "--shard=0/1");
	assert_non_null(a);
	harness_run_free(&r);
	assert_string_equal(cJSON_GetStringValue(get(get(a, "settings"), "counters")), list);
	assert_string_equal(cJSON_GetStringValue(get(get(run_of(a, "csr"), "cache"), "source")), hw);
	assert_string_equal(cJSON_GetStringValue(get(get(run_of(a, "csr"), "cache_sim"), "source")), "sim");
	assert_true(cJSON_IsNull(get(run_of(a, "dense"), "cache_sim")));
	assert_true(warned(a, "cache_sim figures"));
	/* text: the counters' and the simulator's rates in the one cell */
	assert_int_equal(harness_spprof(&r, text_args), 0);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), " %s, ", hw);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "% sim"));
	harness_run_free(&r);
	/* html: the simulator's rates beside the counters', hollow */
	assert_int_equal(harness_spprof(&r, html_args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "beside them, hollow and dashed: sim"));
	assert_non_null(strstr(r.out, "simulated beside the counters"));
	harness_run_free(&r);
	/* merge reads both blocks back and writes them as they were */
	assert_int_equal(harness_spprof(&r, merge_args), 0);
	if (r.status != 0)
		fail_msg("merge: %s", r.err);
	harness_run_free(&r);
	{
		char *text = harness_slurp(merged, NULL);

		assert_non_null(text);
		m = cJSON_Parse(text);
		free(text);
	}
	assert_non_null(m);
	assert_string_equal(cJSON_GetStringValue(get(get(m, "settings"), "counters")), list);
	assert_true(cJSON_Compare(get(run_of(m, "csr"), "cache_sim"), get(run_of(a, "csr"), "cache_sim"), 1));
	assert_true(cJSON_Compare(get(run_of(m, "csr"), "cache"), get(run_of(a, "csr"), "cache"), 1));
	/* check: a rule may name cache_sim's figures, and a misspelt one is the rules file's fault */
	assert_int_equal(harness_write(rules, rule, strlen(rule)), 0);
	assert_int_equal(harness_write(bad, misspelt, strlen(misspelt)), 0);
	assert_int_equal(harness_spprof(&r, check_args), 0);
	if (r.status != 0)
		fail_msg("check: %s%s", r.out, r.err);
	harness_run_free(&r);
	assert_int_equal(harness_spprof(&r, bad_args), 0);
	assert_int_equal(r.status, 2);
	harness_run_free(&r);
	cJSON_Delete(a);
	cJSON_Delete(m);
	free(shard), free(merged), free(rules), free(bad);
}

/* analyze --counters A,sim end to end, on whatever this machine counts with. */
static void test_analyze_beside(void **state)
{
	char *dir = harness_tmpdir(), *model = harness_join(dir, "m.safetensors");
	const char *synth[] = {"synth", "-o", model, "--seed", "3", "--layer",
			       "fc.weight=96x80:unstructured:0.8", NULL};
	struct spp_counter_avail av[SPP_COUNTERS_MAX_BACKENDS];
	int n = spp_counters_probe_all(av, SPP_COUNTERS_MAX_BACKENDS), hw_cache = 0;
	const char *works = NULL;
	struct harness_run r, r2;
	cJSON *a, *b;

	(void)state;
	assert_int_equal(harness_spprof(&r, synth), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	/* papi,sim and perf,sim: as papi and perf alone, the simulator's block beside */
	for (int i = 0; i < n; i++) {
		char list[16];

		if (strcmp(av[i].name, "papi") && strcmp(av[i].name, "perf"))
			continue;
		hw_cache |= av[i].works && av[i].cache_events;
		snprintf(list, sizeof(list), "%s,sim", av[i].name);
		a = analyze(model, av[i].name, NULL, &r, NULL);
		b = analyze(model, list, NULL, &r2, NULL);
		assert_int_equal(r2.status, r.status);
		if (!av[i].works) {
			/* refused with the same line, never a silent simulator in its place */
			assert_null(b);
			assert_int_equal(r2.status, 2);
			assert_string_equal(r2.err, r.err);
			assert_non_null(strstr(r2.err, "cannot count here"));
		} else {
			const cJSON *c = get(run_of(b, "csr"), "cache"), *s = get(run_of(b, "csr"), "cache_sim");

			works = works ? works : av[i].name;
			assert_string_equal(cJSON_GetStringValue(get(c, "source")), av[i].name);
			assert_true(cJSON_IsNull(get(run_of(a, "csr"), "cache_sim")));
			/* the same events as alone: a figure known alone is known beside the simulator */
			for (int e = 0; e < SPP_CEV_COUNT; e++) {
				const char *name = spp_counter_event_name((enum spp_counter_event)e);

				assert_int_equal(cJSON_IsNumber(get(c, name)),
						 cJSON_IsNumber(get(get(run_of(a, "csr"), "cache"), name)));
			}
			assert_string_equal(cJSON_GetStringValue(get(s, "source")), "sim");
			assert_string_equal(cJSON_GetStringValue(get(s, "geometry")), "l1=4K/4,l2=16K/4,llc=64K/8,line=64");
			assert_true(cJSON_GetNumberValue(get(s, "l1d_misses")) > 0);
			assert_true(cJSON_IsNull(get(s, "dram_gbs")));
		}
		cJSON_Delete(a);
		cJSON_Delete(b);
		harness_run_free(&r);
		harness_run_free(&r2);
	}
	/* auto,sim: where auto chooses the simulator, one simulated block, and a warning says so */
	a = analyze(model, "auto,sim", NULL, &r, NULL);
	assert_non_null(a);
	harness_run_free(&r);
	assert_string_equal(cJSON_GetStringValue(get(get(a, "settings"), "counters")), "auto,sim");
	if (!hw_cache) {
		assert_string_equal(cJSON_GetStringValue(get(get(run_of(a, "csr"), "cache"), "source")), "sim");
		assert_true(cJSON_IsNull(get(run_of(a, "csr"), "cache_sim")));
		assert_true(warned(a, "cache_sim null"));
	} else {
		assert_string_equal(cJSON_GetStringValue(get(get(run_of(a, "csr"), "cache_sim"), "source")), "sim");
	}
	cJSON_Delete(a);
	/* a bad list: one line naming the option, exit 2 */
	a = analyze(model, "sim,none", NULL, &r, NULL);
	assert_null(a);
	assert_int_equal(r.status, 2);
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "--counters 'sim,none'"));
	harness_run_free(&r);
	if (works)
		check_beside_report(dir, model, works);
	else
		print_message("no hardware backend opens here: the report with both blocks is "
			      "checked in test_schema only\n");
	free(model);
	harness_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_measure_beside),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_analyze_beside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
