/*
 * The machine description and the calibration cache: cache-geometry
 * sanity notes on hand-made hierarchies, the cache file round trip, and
 * `spprof info` / `spprof calibrate` through the binary.
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

#include "profiler/machine.h"
#include "test/harness.h"

static void add_cache(struct spp_machine *m, int level, const char *type,
		      uint64_t size, int ways, int shared_by)
{
	struct spp_cache_level *c = &m->caches[m->ncaches++];

	memset(c, 0, sizeof(*c));
	c->level = level;
	snprintf(c->type, sizeof(c->type), "%s", type);
	c->size = size;
	c->ways = ways;
	c->line = 64;
	c->shared_by = shared_by;
}

static void test_cache_notes(void **state)
{
	struct spp_machine m;

	(void)state;
	/* a real client CPU: no note */
	memset(&m, 0, sizeof(m));
	add_cache(&m, 1, "data", 48 << 10, 12, 2);
	add_cache(&m, 1, "instruction", 32 << 10, 8, 2);
	add_cache(&m, 2, "unified", 2 << 20, 16, 2);
	add_cache(&m, 3, "unified", 30 << 20, 12, 16);
	spp_machine_check_caches(&m);
	assert_string_equal(m.cache_note, "");
	assert_true(spp_machine_largest_cache(&m) == UINT64_C(30) << 20);

	/* this VM: the host's 480 MiB L3 seen by a 2-CPU guest */
	m.caches[3].size = UINT64_C(480) << 20;
	m.caches[3].ways = 16;
	m.caches[3].shared_by = 2;
	spp_machine_check_caches(&m);
	assert_non_null(strstr(m.cache_note, "L3 of 480 MiB shared by 2 CPUs is implausible"));
	/* only the believable part counts: 32 MiB per sharing CPU */
	assert_true(spp_machine_largest_cache(&m) == UINT64_C(64) << 20);

	/* L2 smaller than L1 */
	memset(&m, 0, sizeof(m));
	add_cache(&m, 1, "data", 64 << 10, 8, 1);
	add_cache(&m, 2, "unified", 32 << 10, 8, 1);
	spp_machine_check_caches(&m);
	assert_non_null(strstr(m.cache_note, "L2 (32 KiB) is smaller"));

	/* a size that does not divide into ways x lines */
	memset(&m, 0, sizeof(m));
	add_cache(&m, 1, "data", 48 << 10, 7, 1);
	spp_machine_check_caches(&m);
	assert_non_null(strstr(m.cache_note, "does not divide"));

	/* nothing reported at all */
	memset(&m, 0, sizeof(m));
	spp_machine_check_caches(&m);
	assert_non_null(strstr(m.cache_note, "no cache geometry"));
}

/*
 * AMD's leaves 0x80000005/6 as a bhyve guest on an EPYC (Zen 5) answered
 * them, with leaf 0x8000001d empty: L1D 48 KiB 12-way, L2 1 MiB 8-way, the
 * host's L3 (1016 x 512 KiB) with its associativity left to 0x8000001d.
 */
static void test_caches_amd_legacy(void **state)
{
	struct spp_machine m;
	struct spp_sim_geometry g;
	char note[256];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.logical_cpus = 2;
	spp_machine_caches_amd_legacy(&m, 0x300c0140u, 0x4006140u, 0xfe09140u);
	assert_int_equal(m.ncaches, 3);
	assert_string_equal(m.cache_source, "cpuid-amd");
	assert_true(m.caches[0].level == 1 && m.caches[0].size == 48u << 10 && m.caches[0].ways == 12 &&
		    m.caches[0].line == 64 && strcmp(m.caches[0].type, "data") == 0);
	assert_true(m.caches[1].level == 2 && m.caches[1].size == 1u << 20 && m.caches[1].ways == 8 &&
		    m.caches[1].shared_by == 1);
	assert_true(m.caches[2].level == 3 && m.caches[2].size == UINT64_C(508) << 20 && m.caches[2].ways == 0 &&
		    m.caches[2].shared_by == 2);
	spp_machine_check_caches(&m);
	assert_non_null(strstr(m.cache_note, "L3 of 508 MiB shared by 2 CPUs is implausible"));
	/* the simulator: 16 ways assumed for the L3, at its believable size */
	spp_sim_geometry_from_machine(&m, &g, note, sizeof(note));
	assert_true(g.l1.size == 48u << 10 && g.l1.ways == 12);
	assert_true(g.l2.size == 1u << 20 && g.l2.ways == 8);
	assert_true(g.llc.size == UINT64_C(64) << 20 && g.llc.ways == 16);
	assert_non_null(strstr(note, "16 ways assumed"));

	/* a fully associative L1 (0xff) and a 16-way L3 (code 8) */
	memset(&m, 0, sizeof(m));
	m.logical_cpus = 8;
	spp_machine_caches_amd_legacy(&m, 0x20ff0140u, 0x2006140u, 0x808040u);
	assert_int_equal(m.caches[0].ways, 512);
	assert_int_equal(m.caches[1].size, 512u << 10);
	assert_true(m.caches[2].size == UINT64_C(16) << 20 && m.caches[2].ways == 16);
	spp_machine_check_caches(&m);
	assert_string_equal(m.cache_note, "");
}

static void test_calibration_round_trip(void **state)
{
	char *dir = harness_tmpdir();
	struct spp_calibration cal[2], got;
	struct spp_error err = {0};

	(void)state;
	assert_non_null(dir);
	setenv("XDG_CACHE_HOME", dir, 1);
	memset(cal, 0, sizeof(cal));
	for (int i = 0; i < 2; i++) {
		cal[i].threads = i + 1;
		cal[i].read_gbs = 10.5 * (i + 1);
		cal[i].triad_gbs = 12.25 * (i + 1);
		cal[i].peak_gflops = 100.0 * (i + 1);
		for (int l = 0; l < SPP_BW_LEVELS; l++) {
			cal[i].level_gbs[l] = (i + 1) * (l == SPP_BW_DRAM ? 10.5 : 400.0 / (l + 1));
			cal[i].level_bytes[l] = 32768.0 * (1 << (4 * l));
		}
		snprintf(cal[i].isa, sizeof(cal[i].isa), "avx2");
		snprintf(cal[i].when, sizeof(cal[i].when), "2026-01-0%dT00:00:00Z", i + 1);
	}
	assert_int_equal(spp_calibration_load("Test CPU", 1, &got), -1);
	assert_int_equal(spp_calibration_store("Test CPU", cal, 2, &err), 0);
	assert_int_equal(spp_calibration_load("Test CPU", 2, &got), 0);
	assert_int_equal(got.threads, 2);
	assert_true(got.read_gbs == 21.0 && got.triad_gbs == 24.5 && got.peak_gflops == 200.0);
	/* every level's bandwidth and working set come back */
	for (int l = 0; l < SPP_BW_LEVELS; l++)
		assert_true(got.level_gbs[l] == cal[1].level_gbs[l] && got.level_bytes[l] == cal[1].level_bytes[l]);
	assert_string_equal(got.isa, "avx2");
	assert_string_equal(got.when, "2026-01-02T00:00:00Z");
	/* another CPU or thread count is not this entry */
	assert_int_equal(spp_calibration_load("Other CPU", 2, &got), -1);
	assert_int_equal(spp_calibration_load("Test CPU", 3, &got), -1);

	/* storing one thread count again replaces it and keeps the other */
	cal[0].read_gbs = 7.0;
	assert_int_equal(spp_calibration_store("Test CPU", cal, 1, &err), 0);
	assert_int_equal(spp_calibration_load("Test CPU", 1, &got), 0);
	assert_true(got.read_gbs == 7.0);
	assert_int_equal(spp_calibration_load("Test CPU", 2, &got), 0);
	assert_true(got.read_gbs == 21.0);

	/* a corrupt cache file reads as no calibration, and is rewritten */
	char *file = harness_join(dir, "spprof/calibration.json");
	assert_int_equal(harness_write(file, "{not json", 9), 0);
	assert_int_equal(spp_calibration_load("Test CPU", 1, &got), -1);
	assert_int_equal(spp_calibration_store("Test CPU", cal, 1, &err), 0);
	assert_int_equal(spp_calibration_load("Test CPU", 1, &got), 0);
	free(file);
	unsetenv("XDG_CACHE_HOME");
	harness_rmtree(dir);
}

static void test_info_binary(void **state)
{
	struct harness_run r;
	const char *args[] = {"info", "--format", "json", NULL};
	const char *text_args[] = {"info", NULL};
	const char *bad[] = {"info", "--format", "yaml", NULL};
	cJSON *doc;
	const cJSON *blas;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "isa")));
	assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "caches")));
	blas = cJSON_GetObjectItemCaseSensitive(doc, "dense_blas");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(blas, "name")->valuestring,
			    "OpenBLAS");
	/* the core type OpenBLAS runs is named, and OPENBLAS_CORETYPE as set */
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(blas, "core")));
	{
		const char *env = getenv("OPENBLAS_CORETYPE");
		const cJSON *ct = cJSON_GetObjectItemCaseSensitive(blas, "coretype_env");
		if (env && *env)
			assert_string_equal(ct->valuestring, env);
		else
			assert_true(cJSON_IsNull(ct));
	}
	cJSON_Delete(doc);
	harness_run_free(&r);

	assert_int_equal(harness_spprof(&r, text_args), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "dense blas   OpenBLAS"));
	assert_non_null(strstr(r.out, "vector isa"));
	/* the bitmask expand in use, by name, where the AVX-512 kernels run */
	if (spp_isa_detect() >= SPP_ISA_AVX512) {
		char line[64];

		snprintf(line, sizeof(line), "bitmask N=1  %s expand", spp_expand_name(spp_expand_detect()));
		assert_non_null(strstr(r.out, line));
	}
	harness_run_free(&r);

	assert_int_equal(harness_spprof(&r, bad), 0);
	assert_int_equal(r.status, 2);
	harness_run_free(&r);
}

/* A real (short) calibration through the binary, then info reports it. */
static void test_calibrate_binary(void **state)
{
	char *dir = harness_tmpdir();
	const char *cal_args[] = {"calibrate", "--threads", "1", "--seconds", "0.05", NULL};
	const char *info_args[] = {"info", "--threads", "1", "--format", "json", NULL};
	const cJSON *cal;
	struct harness_run r;
	double read_gbs = 0, gflops = 0;
	cJSON *doc;

	(void)state;
	setenv("XDG_CACHE_HOME", dir, 1);
	assert_int_equal(harness_spprof(&r, cal_args), 0);
	assert_int_equal(r.status, 0);
	/* "threads  read GB/s  triad GB/s  peak GFLOP/s  isa" then one row */
	assert_int_equal(sscanf(strchr(r.out, '\n') + 1, "%*d %lf %*f %lf", &read_gbs, &gflops), 2);
	assert_true(read_gbs > 0.1 && gflops > 0.1);
	harness_run_free(&r);

	assert_int_equal(harness_spprof(&r, info_args), 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	cal = cJSON_GetObjectItemCaseSensitive(doc, "calibration");
	assert_true(cJSON_IsObject(cal));
	assert_true(cJSON_GetObjectItemCaseSensitive(doc, "peak_bw_gbs")->valuedouble > 0.1);
	cJSON_Delete(doc);
	harness_run_free(&r);
	unsetenv("XDG_CACHE_HOME");
	harness_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_notes),
		cmocka_unit_test(test_caches_amd_legacy),
		cmocka_unit_test(test_calibration_round_trip),
		cmocka_unit_test(test_info_binary),
		cmocka_unit_test(test_calibrate_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
