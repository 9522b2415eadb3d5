/*
 * Counters (test_counters.c runs these): the choice behind --counters with
 * each backend forced unavailable, the PMU reasons, the perf backend on
 * software events, what `spprof info` says about the backends, analyze
 * --counters end to end, and the --hw check of hardware counting.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
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
#include "profiler/machine.h"
#include "test/harness.h"

void test_select(void **state)
{
	struct spp_counter_avail a[4] = {
		{"papi", 1, 1, 0, ""}, {"perf", 1, 1, 0, ""},
		{"sim", 1, 1, 0, ""}, {"none", 1, 0, 0, ""},
	};
	const struct spp_counter_backend *b;
	struct spp_error err;
	char why[512];
	int have_papi = spp_counter_backend_find("papi") != NULL;
	int have_perf = spp_counter_backend_find("perf") != NULL;

	(void)state;
	assert_int_equal(spp_counters_select("auto", a, 4, &b, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, have_papi ? "papi" : have_perf ? "perf" : "sim");
	/* papi unavailable: perf */
	a[0].works = a[0].cache_events = 0;
	snprintf(a[0].why, sizeof(a[0].why), "perf_event component disabled: no PMU (virtualized)");
	assert_int_equal(spp_counters_select("auto", a, 4, &b, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, have_perf ? "perf" : "sim");
	/* perf counts software events only: auto falls back to sim and says why */
	a[1].cache_events = 0;
	snprintf(a[1].why, sizeof(a[1].why), "no PMU (virtualized): software events only");
	assert_int_equal(spp_counters_select("auto", a, 4, &b, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, "sim");
	if (have_papi && have_perf) {
		assert_non_null(strstr(why, "papi: perf_event component disabled"));
		assert_non_null(strstr(why, "perf: no PMU"));
	}
	/* forced, yet unavailable: an error with the reason, never zeros */
	assert_int_equal(spp_counters_select("papi", a, 4, &b, why, sizeof(why), &err), SPP_E_UNSUPPORTED);
	if (have_papi)
		assert_non_null(strstr(err.msg, "no PMU"));
	/* forced perf with software events works */
	if (have_perf) {
		assert_int_equal(spp_counters_select("perf", a, 4, &b, why, sizeof(why), &err), 0);
		assert_string_equal(b->name, "perf");
	}
	a[1].works = 0;
	if (have_perf)
		assert_int_equal(spp_counters_select("perf", a, 4, &b, why, sizeof(why), &err),
				 SPP_E_UNSUPPORTED);
	assert_int_equal(spp_counters_select("sim", a, 4, &b, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, "sim");
	assert_int_equal(spp_counters_select("none", a, 4, &b, why, sizeof(why), &err), 0);
	assert_string_equal(b->name, "none");
	assert_int_equal(spp_counters_select("cupti", a, 4, &b, why, sizeof(why), &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "'cupti'"));
}

void test_pmu_reason(void **state)
{
	char buf[200];

	(void)state;
	spp_counters_pmu_reason(EACCES, buf, sizeof(buf));
	assert_non_null(strstr(buf, "perf_event_paranoid is"));
	assert_non_null(strstr(buf, "refused"));
}

/* The perf backend counts software events on every OpenMP thread, PMU or not. */
void test_perf_software(void **state)
{
	const struct spp_counter_backend *b = spp_counter_backend_find("perf");
	struct spp_counter_avail a;
	struct spp_counter_config cfg = {2, NULL, 0};
	struct spp_counter_sample smp;
	struct spp_error err;
	void *sess = NULL;
	volatile double sink = 0;

	(void)state;
	if (!b)
		skip();
	b->probe(&a);
	if (!(a.events >> SPP_CEV_TASK_CLOCK_NS & 1)) {
		print_message("perf: task-clock does not open here: %s\n", a.why);
		skip();
	}
	assert_int_equal(b->open(&cfg, &sess, &err), 0);
	assert_int_equal(b->start(sess), 0);
#pragma omp parallel num_threads(2)
	{
		double s = 0;

		for (int i = 0; i < 3000000; i++)
			s += i * 1e-9;
#pragma omp atomic
		sink += s;
	}
	assert_int_equal(b->stop(sess), 0);
	assert_int_equal(b->read(sess, &smp), 0);
	assert_int_equal(smp.nthreads, 2);
	assert_true(smp.thread[0][SPP_CEV_TASK_CLOCK_NS] > 1e5);
	assert_true(smp.thread[1][SPP_CEV_TASK_CLOCK_NS] > 1e5);
	assert_true(smp.v[SPP_CEV_TASK_CLOCK_NS] ==
		    smp.thread[0][SPP_CEV_TASK_CLOCK_NS] + smp.thread[1][SPP_CEV_TASK_CLOCK_NS]);
	/* what cannot be counted here stays unknown, never 0 */
	if (!(a.events >> SPP_CEV_L1D_MISSES & 1))
		assert_true(isnan(smp.v[SPP_CEV_L1D_MISSES]));
	b->close(sess);
	assert_true(b->list_events(NULL, NULL) > 0);
}

void test_info_lines(void **state)
{
	const char *args[] = {"info", NULL};
	struct harness_run r;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "counters"));
	assert_non_null(strstr(r.out, "sim: works"));
	assert_non_null(strstr(r.out, "none: works"));
	if (spp_counter_backend_find("papi"))
		assert_non_null(strstr(r.out, "papi: "));
	harness_run_free(&r);
}

static const cJSON *get(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

/* analyze --counters C on a one-layer model; the report tree, or NULL when it exited non-zero. */
static cJSON *analyze(const char *model, const char *counters, const char *extra,
		      struct harness_run *r)
{
	const char *args[] = {"analyze", model, "--formats", "csr,coo", "--repeat", "3", "--threads", "2",
			      "--format", "json", "--quiet", "--counters", counters, extra, NULL};
	cJSON *j;

	assert_int_equal(harness_spprof(r, args), 0);
	if (r->status != 0)
		return NULL;
	j = cJSON_Parse(r->out);
	assert_non_null(j);
	return j;
}

static const cJSON *run_of(const cJSON *report, const char *format)
{
	const cJSON *l = cJSON_GetArrayItem(get(report, "layers", NULL), 0), *run;

	cJSON_ArrayForEach(run, get(l, "runs", NULL))
		if (strcmp(cJSON_GetStringValue(get(run, "format", NULL)), format) == 0)
			return run;
	fail_msg("no %s run", format);
	return NULL;
}

void test_analyze_counters(void **state)
{
	char *dir = harness_tmpdir(), *model = harness_join(dir, "m.safetensors");
	const char *synth[] = {"synth", "-o", model, "--seed", "3", "--layer",
			       "fc.weight=96x80:unstructured:0.8", NULL};
	struct harness_run r;
	const cJSON *c, *c2;
	cJSON *a, *b;

	(void)state;
	{
		const char *help[] = {"analyze", "--help", NULL};
		int wired;

		/* the analyze side lands with the run orchestration (see the lead's notes) */
		assert_int_equal(harness_spprof(&r, help), 0);
		wired = strstr(r.out, "--counters") != NULL;
		harness_run_free(&r);
		if (!wired) {
			print_message("analyze has no --counters yet: skipped\n");
			free(model);
			harness_rmtree(dir);
			skip();
		}
	}
	assert_int_equal(harness_spprof(&r, synth), 0);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	a = analyze(model, "sim", "--cache-model=l1=4K/4,l2=16K/4,llc=64K/8", &r);
	assert_non_null(a);
	harness_run_free(&r);
	/* the dense baseline (OpenBLAS) has no traced kernel: null, never zeros */
	assert_true(cJSON_IsNull(get(run_of(a, "dense"), "cache", NULL)));
	c = get(run_of(a, "csr"), "cache", NULL);
	assert_string_equal(cJSON_GetStringValue(get(c, "source", NULL)), "sim");
	assert_string_equal(cJSON_GetStringValue(get(c, "geometry", NULL)), "l1=4K/4,l2=16K/4,llc=64K/8,line=64");
	assert_true(cJSON_GetNumberValue(get(c, "l1d_misses", NULL)) > 0);
	assert_true(cJSON_GetNumberValue(get(c, "sampled", NULL)) == 1);
	assert_true(cJSON_GetNumberValue(get(c, "dram_bytes", NULL)) ==
		    64 * cJSON_GetNumberValue(get(c, "llc_misses", NULL)));
	assert_true(cJSON_IsNull(get(c, "instructions", NULL)));
	/* the label rule: a simulated count over a measured time is no figure */
	assert_true(cJSON_IsNull(get(c, "dram_gbs", NULL)));
	assert_true(cJSON_IsNumber(get(c, "dram_over_model", NULL)));
	assert_int_equal(cJSON_GetArraySize(get(c, "per_thread", "l1d_misses")), 2);
	/* the same input gives the same counts */
	b = analyze(model, "sim", "--cache-model=l1=4K/4,l2=16K/4,llc=64K/8", &r);
	assert_non_null(b);
	harness_run_free(&r);
	c2 = get(run_of(b, "csr"), "cache", NULL);
	assert_true(cJSON_GetNumberValue(get(c, "l1d_misses", NULL)) ==
		    cJSON_GetNumberValue(get(c2, "l1d_misses", NULL)));
	assert_true(cJSON_GetNumberValue(get(c, "llc_misses", NULL)) ==
		    cJSON_GetNumberValue(get(c2, "llc_misses", NULL)));
	cJSON_Delete(a);
	cJSON_Delete(b);
	/* none: every cache null */
	a = analyze(model, "none", "--seed=1", &r);
	assert_non_null(a);
	harness_run_free(&r);
	assert_true(cJSON_IsNull(get(run_of(a, "csr"), "cache", NULL)));
	cJSON_Delete(a);
	/* a bad cache model is a usage error */
	assert_null(analyze(model, "sim", "--cache-model=l1=4K", &r));
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "ways"));
	harness_run_free(&r);
	/* a backend forced where it cannot count: refused with the reason, exit 2 */
	{
		struct spp_counter_avail av[SPP_COUNTERS_MAX_BACKENDS];
		int n = spp_counters_probe_all(av, SPP_COUNTERS_MAX_BACKENDS);

		for (int i = 0; i < n; i++) {
			if (strcmp(av[i].name, "papi") && strcmp(av[i].name, "perf"))
				continue;
			a = analyze(model, av[i].name, "--seed=1", &r);
			if (!av[i].works) {
				assert_null(a);
				assert_int_equal(r.status, 2);
				assert_non_null(strstr(r.err, "cannot count here"));
			} else {
				c = get(run_of(a, "csr"), "cache", NULL);
				assert_string_equal(cJSON_GetStringValue(get(c, "source", NULL)), av[i].name);
				if (!av[i].cache_events)
					assert_true(cJSON_IsNull(get(c, "l1d_misses", NULL)));
				if (av[i].events >> SPP_CEV_TASK_CLOCK_NS & 1)
					assert_true(cJSON_GetNumberValue(get(c, "task_clock_ns", NULL)) > 0);
				assert_true(cJSON_IsNull(get(run_of(a, "dense"), "cache", NULL)));
				cJSON_Delete(a);
			}
			harness_run_free(&r);
		}
	}
	free(model);
	harness_rmtree(dir);
}

/* --hw: count cache misses with each hardware backend; 77 where none can. */
int hardware_main(void)
{
	struct spp_counter_avail a[SPP_COUNTERS_MAX_BACKENDS];
	int n = spp_counters_probe_all(a, SPP_COUNTERS_MAX_BACKENDS), tried = 0;

	for (int i = 0; i < n; i++) {
		const struct spp_counter_backend *b = spp_counter_backend_find(a[i].name);
		struct spp_counter_config cfg = {1, NULL, 0};
		struct spp_counter_sample smp;
		struct spp_error err;
		void *sess = NULL;
		size_t bytes = 64 << 20;
		unsigned char *buf;
		volatile unsigned sum = 0;

		if (strcmp(a[i].name, "papi") && strcmp(a[i].name, "perf"))
			continue;
		if (!a[i].cache_events) {
			printf("%s: %s\n", a[i].name, a[i].why);
			continue;
		}
		tried++;
		buf = malloc(bytes);
		if (!buf || b->open(&cfg, &sess, &err)) {
			printf("%s: open failed: %s\n", a[i].name, err.msg);
			return 1;
		}
		memset(buf, 1, bytes);
		b->start(sess);
		for (size_t j = 0; j < bytes; j += 64)
			sum += buf[j];
		b->stop(sess);
		b->read(sess, &smp);
		b->close(sess);
		free(buf);
		/* 1M lines read once: at least half miss L1D */
		printf("%s: l1d_misses %.0f llc_misses %.0f\n", a[i].name,
		       smp.v[SPP_CEV_L1D_MISSES], smp.v[SPP_CEV_LLC_MISSES]);
		if (!(smp.v[SPP_CEV_L1D_MISSES] > bytes / 64 / 2))
			return 1;
	}
	if (!tried) {
		printf("skipped: no hardware backend counts cache events here\n");
		return 77;
	}
	return 0;
}
