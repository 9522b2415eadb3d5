/*
 * Counters: the cache model against hand-computed miss counts, the traced
 * kernels' replay (correct output, compulsory misses, determinism,
 * sampling), the backends' lifecycle (sim, perf with software events),
 * the choice behind --counters with each backend forced unavailable, and
 * what `spprof info` says about them. Run with --hw (the counters-hw test)
 * it checks hardware counting instead, and exits 77 with the reason where
 * there is no PMU. The choice, perf, info, analyze --counters and --hw
 * tests are in test_counters_backends.c.
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
#include "kernels/trace.h"
#include "profiler/machine.h"
#include "test/harness.h"

static struct spp_sim *make_sim(const char *spec, int cores)
{
	struct spp_sim_geometry g;
	struct spp_sim *s = NULL;
	struct spp_error err;

	assert_int_equal(spp_sim_geometry_parse(spec, &g, &err), 0);
	assert_int_equal(spp_sim_create(&g, cores, &s, &err), 0);
	return s;
}

static void test_geometry_parse(void **state)
{
	struct spp_sim_geometry g;
	struct spp_error err;
	char buf[128];

	(void)state;
	assert_int_equal(spp_sim_geometry_parse("l1=48K/12,l2=1M/16,llc=32M/16,line=64", &g, &err), 0);
	assert_true(g.l1.size == 48 << 10 && g.l1.ways == 12);
	assert_true(g.l2.size == 1 << 20 && g.l2.ways == 16);
	assert_true(g.llc.size == 32 << 20 && g.llc.ways == 16 && g.line == 64);
	spp_sim_geometry_format(&g, buf, sizeof(buf));
	assert_string_equal(buf, "l1=48K/12,l2=1M/16,llc=32M/16,line=64");
	/* no l2: two levels, as cachegrind models */
	assert_int_equal(spp_sim_geometry_parse("l1=32K/8,llc=8M/16", &g, &err), 0);
	assert_true(g.l2.size == 0 && g.line == 64);
	assert_int_equal(spp_sim_geometry_parse("l1=48K,llc=32M/16", &g, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "ways"));
	assert_int_equal(spp_sim_geometry_parse("l1=1000/3,llc=32M/16", &g, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "does not divide"));
	assert_int_equal(spp_sim_geometry_parse("l1=32K/8,l4=1M/4,llc=8M/16", &g, &err), SPP_E_USAGE);
	assert_non_null(strstr(err.msg, "'l4'"));
	assert_int_equal(spp_sim_geometry_parse("l2=1M/16,llc=8M/16", &g, &err), SPP_E_USAGE);
	assert_int_equal(spp_sim_geometry_parse("l1=32K/8,llc=8M/16,line=48", &g, &err), SPP_E_USAGE);
}

static void test_geometry_from_machine(void **state)
{
	struct spp_machine m;
	struct spp_sim_geometry g;
	char note[256];

	(void)state;
	memset(&m, 0, sizeof(m));
	/* this VM's figures: a 480 MiB L3 shared by 2 CPUs */
	m.caches[0] = (struct spp_cache_level){1, "data", 48 << 10, 12, 64, 1};
	m.caches[1] = (struct spp_cache_level){1, "instruction", 64 << 10, 16, 64, 1};
	m.caches[2] = (struct spp_cache_level){2, "unified", 2 << 20, 16, 64, 1};
	m.caches[3] = (struct spp_cache_level){3, "unified", (uint64_t)480 << 20, 16, 64, 2};
	m.ncaches = 4;
	spp_sim_geometry_from_machine(&m, &g, note, sizeof(note));
	assert_true(g.l1.size == 48 << 10 && g.l1.ways == 12);
	assert_true(g.l2.size == 2 << 20 && g.l2.ways == 16);
	/* 32 MiB per sharing CPU */
	assert_true(g.llc.size == (uint64_t)64 << 20);
	assert_non_null(strstr(note, "480 MiB"));
	assert_non_null(strstr(note, "64 MiB"));
	/* a believable L3 is kept as it is, with nothing to say */
	m.caches[3].size = 30 << 20;
	m.caches[3].ways = 15;
	spp_sim_geometry_from_machine(&m, &g, note, sizeof(note));
	assert_true(g.llc.size == 30 << 20 && g.llc.ways == 15);
	assert_string_equal(note, "");
}

/* 8 sets of 2 ways in L1 (1 KiB), 16 sets of 4 ways in the LLC (4 KiB). */
#define SMALL "l1=1K/2,llc=4K/4,line=64"

static void test_sequential(void **state)
{
	struct spp_sim *s = make_sim(SMALL, 1);
	struct spp_sim_counts c;

	(void)state;
	/* 4 KiB in 4-byte loads: 1024 accesses, one miss per 64-byte line */
	for (uint64_t a = 0; a < 4096; a += 4)
		spp_sim_access(s, 0, a, 4, 0);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_acc, 1024);
	assert_int_equal(c.l1_miss, 64);
	assert_int_equal(c.llc_acc, 64);
	assert_int_equal(c.llc_miss, 64);
	/* again: 64 lines do not fit the 16-line L1 (all miss), the LLC holds them all */
	for (uint64_t a = 0; a < 4096; a += 4)
		spp_sim_access(s, 0, a, 4, 0);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_miss, 128);
	assert_int_equal(c.llc_miss, 64);
	/* a range access touches each line it overlaps: [60, 68) is two lines */
	spp_sim_access(s, 0, 8192 + 60, 8, 1);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_acc, 2050);
	assert_int_equal(c.llc_miss, 66);
	spp_sim_destroy(s);
}

static void test_strided(void **state)
{
	struct spp_sim *s = make_sim(SMALL, 1);
	struct spp_sim_counts c;

	(void)state;
	/* every other line of 4 KiB, twice: 32 lines */
	for (int r = 0; r < 2; r++)
		for (uint64_t a = 0; a < 4096; a += 128)
			spp_sim_access(s, 0, a, 4, 0);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_acc, 64);
	/* even lines use 4 of the 8 sets, 8 lines each in 2 ways: the second pass misses all */
	assert_int_equal(c.l1_miss, 64);
	assert_int_equal(c.llc_miss, 32);
	spp_sim_destroy(s);
	s = make_sim(SMALL, 1);
	/* stride 256 bytes = 4 lines: sets 0 and 4 only, 8 lines each, LRU thrash in L1 */
	for (int r = 0; r < 3; r++)
		for (uint64_t a = 0; a < 4096; a += 256)
			spp_sim_access(s, 0, a, 4, 0);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_miss, 48);
	/* LLC: 16 lines in sets 0, 4, 8, 12 (4 each, 4 ways): they stay */
	assert_int_equal(c.llc_miss, 16);
	spp_sim_destroy(s);
}

static void test_conflict_and_lru(void **state)
{
	struct spp_sim *s = make_sim(SMALL, 1);
	struct spp_sim_counts c;
	/* A, B, C map to L1 set 0 (stride 8 lines = 512 bytes) */
	const uint64_t A = 0, B = 512, C = 1024;
	const uint64_t seq[] = {A, B, A, C, A, B};

	(void)state;
	/* A miss, B miss, A hit, C miss (evicts B, the LRU), A hit, B miss */
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		spp_sim_access(s, 0, seq[i], 4, 0);
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_miss, 4);
	/* LLC, 16 sets of 4 ways: A and C in set 0, B in set 8: it keeps all three */
	assert_int_equal(c.llc_miss, 3);
	/*
	 * conflict misses: A B C round robin in a 2-way set. The set holds
	 * [B A]: the first A and B hit, then C evicts A and from there every
	 * access misses: 1 + 3 * 3 misses in 4 rounds.
	 */
	for (int r = 0; r < 4; r++) {
		spp_sim_access(s, 0, A, 4, 0);
		spp_sim_access(s, 0, B, 4, 0);
		spp_sim_access(s, 0, C, 4, 0);
	}
	spp_sim_counts(s, 0, &c);
	assert_int_equal(c.l1_miss, 4 + 10);
	assert_int_equal(c.llc_miss, 3);
	spp_sim_destroy(s);
}

static void test_shared_llc(void **state)
{
	struct spp_sim *s = make_sim("l1=1K/2,l2=2K/2,llc=4K/4,line=64", 2);
	struct spp_sim_counts c0, c1, t;

	(void)state;
	/* core 0 brings 1 KiB in; core 1 then finds it in the shared LLC only */
	for (uint64_t a = 0; a < 1024; a += 64)
		spp_sim_access(s, 0, a, 64, 0);
	for (uint64_t a = 0; a < 1024; a += 64)
		spp_sim_access(s, 1, a, 64, 0);
	spp_sim_counts(s, 0, &c0);
	spp_sim_counts(s, 1, &c1);
	spp_sim_counts(s, -1, &t);
	assert_int_equal(c0.l1_miss, 16);
	assert_int_equal(c0.l2_miss, 16);
	assert_int_equal(c0.llc_miss, 16);
	assert_int_equal(c1.l1_miss, 16);
	assert_int_equal(c1.l2_miss, 16);
	assert_int_equal(c1.llc_acc, 16);
	assert_int_equal(c1.llc_miss, 0);
	assert_int_equal(t.llc_miss, 16);
	assert_int_equal(t.l1_acc, 32);
	/* core 0's own copy is still in its L1 and L2 */
	spp_sim_access(s, 0, 960, 4, 0);
	spp_sim_counts(s, 0, &c0);
	assert_int_equal(c0.l1_miss, 16);
	spp_sim_destroy(s);
}

/* A random m x k matrix of the given density, seeded. */
static float *random_matrix(int64_t m, int64_t k, double density, unsigned seed)
{
	float *w = calloc((size_t)(m * k), sizeof(float));
	uint64_t st = seed * 0x9E3779B97F4A7C15ull + 1;

	assert_non_null(w);
	for (int64_t i = 0; i < m * k; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		if ((double)(st >> 11) / 9007199254740992.0 < density)
			w[i] = (float)((int)(st >> 40 & 15) - 7) / 4.0f + 0.125f;
	}
	return w;
}

static float *aligned_floats(size_t n)
{
	float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);

	assert_non_null(p);
	memset(p, 0, n * sizeof(float));
	return p;
}

/*
 * A replay of format key's traced kernel for isa, cold (W from DRAM, X and Y read back)
 * unless warm; with y_out its Y, checked against the reference. *bytes
 * (when not NULL) gets the lines of the encoding's buffers.
 */
static void replay_isa(const char *key, const float *wv, int64_t m, int64_t k, int64_t n,
		       int threads, const char *model, uint64_t budget, int warm, enum spp_isa isa,
		       struct spp_cache_figures *f, float *y_out, double *w_lines)
{
	const struct spp_format_ops *ops = spp_cpu_format_find(key);
	struct spp_matrix w = {m, k, wv};
	struct spp_encoded enc;
	struct spp_sim_geometry g;
	struct spp_error err;
	float *x = aligned_floats((size_t)(k * n)), *y = aligned_floats((size_t)(m * n));

	assert_non_null(ops);
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)((i * 7) % 13) - 6.0f;
	assert_int_equal(spp_sim_geometry_parse(model, &g, &err), 0);
	assert_int_equal(ops->encode(&w, threads, n, &enc, &err), 0);
	assert_int_equal(spp_sim_replay(&g, threads, budget, warm, isa, &enc, x, y, n, f, &err), 0);
	if (w_lines) {
		struct spp_trace_buffer b[SPP_TRACE_MAX_BUFFERS];
		int nb = enc.ops->trace->buffers(&enc, b);

		*w_lines = 0;
		for (int i = 0; i < nb; i++)
			*w_lines += ceil((double)b[i].bytes / 64);
	}
	if (y_out) {
		float *ref = calloc((size_t)(m * n), sizeof(float));

		spp_reference_gemm(&w, x, ref, n);
		for (int64_t i = 0; i < m * n; i++)
			assert_true(fabsf(y[i] - ref[i]) <= 1e-3f * (1 + fabsf(ref[i])));
		memcpy(y_out, y, (size_t)(m * n) * sizeof(float));
		free(ref);
	}
	ops->release(&enc);
	free(x);
	free(y);
}

/* The portable kernel's replay. */
static void replay_in(const char *key, const float *wv, int64_t m, int64_t k, int64_t n,
		      int threads, const char *model, uint64_t budget, int warm,
		      struct spp_cache_figures *f, float *y_out)
{
	replay_isa(key, wv, m, k, n, threads, model, budget, warm, SPP_ISA_PORTABLE, f, y_out, NULL);
}

static void replay(const char *key, const float *wv, int64_t m, int64_t k, int64_t n,
		   int threads, const char *model, uint64_t budget, struct spp_cache_figures *f,
		   float *y_out)
{
	replay_in(key, wv, m, k, n, threads, model, budget, 0, f, y_out);
}

static void test_replay_formats(void **state)
{
	static const char *const keys[] = {"csr", "coo", "bsr4", "bsr8", "bitmask", "nm2_4"};
	int64_t m = 37, k = 45, n = 19;
	float *w = random_matrix(m, k, 0.3, 7), *y = calloc((size_t)(m * n), sizeof(float));

	(void)state;
	/* 2:4 needs a compliant matrix: keep the first two of each group of four */
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct spp_cache_figures f;

		if (strcmp(keys[i], "nm2_4") == 0)
			for (int64_t j = 0; j < m * k; j++)
				if ((j % k) % 4 >= 2)
					w[j] = 0;
		replay(keys[i], w, m, k, n, 2, "l1=32K/8,l2=256K/8,llc=8M/16", 0, &f, y);
		assert_string_equal(f.source, "sim");
		assert_true(f.v[SPP_CEV_L1D_ACCESSES] > 0);
		assert_true(f.v[SPP_CEV_L1D_MISSES] > 0 && f.v[SPP_CEV_L1D_MISSES] <= f.v[SPP_CEV_L1D_ACCESSES]);
		assert_true(f.v[SPP_CEV_LLC_MISSES] <= f.v[SPP_CEV_L2_MISSES]);
		assert_true(f.sampled == 1.0);
		assert_true(f.dram_bytes == f.v[SPP_CEV_LLC_MISSES] * 64);
		assert_true(isnan(f.v[SPP_CEV_INSTRUCTIONS]));
		assert_int_equal(f.nthreads, 2);
		assert_true(f.thread_l1d[0] + f.thread_l1d[1] == f.v[SPP_CEV_L1D_MISSES]);
	}
	free(w);
	free(y);
}

/*
 * Every traced kernel, portable and each vector ISA this CPU has, at
 * N = 1 and N = 19: its output is right (replay_isa checks Y), and with
 * caches that hold everything its misses are the compulsory ones, each
 * line of the encoding's buffers, of X (every column is used) and of Y
 * once: a trace point missing on a buffer, or an access outside the
 * buffers, shows here. The note names the ISA replayed. (The edges of
 * shapes are the kernels tests' work.)
 */
static void test_replay_isa_footprint(void **state)
{
	static const char *const keys[] = {"csr", "coo", "bsr4", "bsr16", "bitmask", "nm2_4"};
	static const int64_t ns[] = {1, 19};
	/* whole 16 x 16 blocks: the portable bsr kernel skips a block's padding */
	int64_t m = 48, k = 80;
	float *w = random_matrix(m, k, 0.5, 9), *nm = malloc((size_t)(m * k) * sizeof(float));

	(void)state;
	/* 2:4: two of each group of four, where they sit turning with the row */
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			nm[i * k + j] = (i + j) % 4 < 2 ? 0.5f + (float)(j % 5) : 0.0f;
	for (int isa = SPP_ISA_PORTABLE; isa <= (int)spp_isa_detect(); isa++)
		for (size_t f = 0; f < sizeof(keys) / sizeof(keys[0]); f++)
			for (size_t q = 0; q < 2; q++) {
				int64_t n = ns[q];
				float *y = calloc((size_t)(m * n), sizeof(float));
				struct spp_cache_figures c;
				double wl, expect;

				replay_isa(keys[f], strcmp(keys[f], "nm2_4") ? w : nm, m, k, n, 1,
					   "l1=1M/16,llc=8M/16", 0, 0, (enum spp_isa)isa, &c, y, &wl);
				/* cold: W from DRAM, X and Y read back by the harness first (run.c) */
				expect = wl;
				print_message("%s %s N=%lld: misses %.0f, footprint %.0f lines\n",
					      spp_isa_name((enum spp_isa)isa), keys[f], (long long)n,
					      c.v[SPP_CEV_LLC_MISSES], expect);
				assert_true(c.v[SPP_CEV_L1D_MISSES] == c.v[SPP_CEV_LLC_MISSES]);
				/* bitmask's kernels never read ptr[m], alone on a line at m = 48 */
				assert_true(c.v[SPP_CEV_LLC_MISSES] <= expect &&
					    c.v[SPP_CEV_LLC_MISSES] >= expect - (strcmp(keys[f], "bitmask") == 0));
				assert_null(strstr(c.note, "outside known buffers"));
				assert_non_null(strstr(c.note, spp_isa_name((enum spp_isa)isa)));
				free(y);
			}
	free(w);
	free(nm);
}

/*
 * With caches far larger than the data, every miss of a cold replay is
 * compulsory: the lines of each buffer of W the csr kernel reads, each on
 * its own boundary (X and Y read back by the harness first miss nothing).
 * m = 64, k = 64 (one K tile), n = 16 (one 64-byte X or Y row).
 */
static void test_replay_compulsory(void **state)
{
	int64_t m = 64, k = 64, n = 16, nnz = 0;
	float *w = random_matrix(m, k, 0.25, 3);
	struct spp_cache_figures f;
	double expect;

	(void)state;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			nnz += w[i * k + j] != 0;
	/* cold: ptr (65 int32), col (nnz uint16), val (nnz fp32); X and Y read back warm */
	expect = ceil(65 * 4 / 64.0) + ceil((double)nnz * 2 / 64) + ceil((double)nnz * 4 / 64);
	replay("csr", w, m, k, n, 1, "l1=1M/16,llc=8M/16", 0, &f, NULL);
	assert_true(f.v[SPP_CEV_L1D_MISSES] == expect);
	assert_true(f.v[SPP_CEV_LLC_MISSES] == expect);
	assert_true(isnan(f.v[SPP_CEV_L2_MISSES]));
	free(w);
}

/*
 * Warm against cold: a layer that fits in the caches misses only the
 * first time, so the warm replay (the state the timed runs are in) counts
 * no miss, the cold one every compulsory line; one that does not fit
 * misses warm too.
 */
static void test_replay_warm(void **state)
{
	int64_t m = 64, k = 64, n = 16;
	float *w = random_matrix(m, k, 0.25, 3), *big = random_matrix(2048, 512, 0.3, 4);
	struct spp_cache_figures cold, warm;

	(void)state;
	replay_in("csr", w, m, k, n, 1, "l1=1M/16,llc=8M/16", 0, 0, &cold, NULL);
	replay_in("csr", w, m, k, n, 1, "l1=1M/16,llc=8M/16", 0, 1, &warm, NULL);
	assert_true(cold.v[SPP_CEV_LLC_MISSES] > 0);
	assert_true(warm.v[SPP_CEV_L1D_MISSES] == 0 && warm.v[SPP_CEV_LLC_MISSES] == 0);
	assert_true(warm.v[SPP_CEV_L1D_ACCESSES] == cold.v[SPP_CEV_L1D_ACCESSES]);
	assert_non_null(strstr(warm.note, "replayed warm"));
	assert_non_null(strstr(cold.note, "replayed cold"));
	/* 2048 x 512 at 30%: about 3 MB of csr and X, past a 64K LLC: misses stay */
	replay_in("csr", big, 2048, 512, 16, 1, "l1=4K/4,llc=64K/8", 0, 1, &warm, NULL);
	replay_in("csr", big, 2048, 512, 16, 1, "l1=4K/4,llc=64K/8", 0, 0, &cold, NULL);
	assert_true(warm.v[SPP_CEV_LLC_MISSES] > 0.5 * cold.v[SPP_CEV_LLC_MISSES]);
	free(w);
	free(big);
}

static void test_replay_deterministic(void **state)
{
	int64_t m = 300, k = 200, n = 24;
	float *w = random_matrix(m, k, 0.2, 11);
	struct spp_cache_figures a, b, c;

	(void)state;
	omp_set_num_threads(1);
	replay("csr", w, m, k, n, 3, "l1=4K/4,l2=16K/4,llc=64K/8", 0, &a, NULL);
	omp_set_num_threads(4);
	replay("csr", w, m, k, n, 3, "l1=4K/4,l2=16K/4,llc=64K/8", 0, &b, NULL);
	replay("csr", w, m, k, n, 3, "l1=4K/4,l2=16K/4,llc=64K/8", 0, &c, NULL);
	omp_set_num_threads(2);
	for (int e = 0; e < SPP_CEV_COUNT; e++) {
		if (isnan(a.v[e])) {
			assert_true(isnan(b.v[e]) && isnan(c.v[e]));
			continue;
		}
		assert_true(a.v[e] == b.v[e] && b.v[e] == c.v[e]);
	}
	for (int t = 0; t < 3; t++)
		assert_true(a.thread_l1d[t] == b.thread_l1d[t] && a.thread_llc[t] == c.thread_llc[t]);
	/* more simulated threads: each has its own L1, the work is the same */
	replay("csr", w, m, k, n, 1, "l1=4K/4,l2=16K/4,llc=64K/8", 0, &b, NULL);
	assert_true(b.v[SPP_CEV_L1D_ACCESSES] == a.v[SPP_CEV_L1D_ACCESSES]);
	free(w);
}

static double rel(const struct spp_cache_figures *a, const struct spp_cache_figures *b,
		  enum spp_counter_event e)
{
	return fabs(a->v[e] / b->v[e] - 1);
}

/*
 * Sampling (counters/sim.h): an untiled format's row blocks, each after the
 * blocks before it, and a K-tiled one's whole tiles or, at a finer
 * fraction, row blocks of each tile; scaled, each lands near a full
 * replay's accesses and misses at every level, warm and cold. Measured
 * here: within 5 % (bitmask; csr by whole tiles), 13 % (csr by row blocks
 * of its tiles: a Y row's reuse spans a whole tile's pass, which the
 * warming passes only approximate); the cold LLC within 15 %.
 */
static void test_replay_sampled(void **state)
{
	int64_t m = 1024, k = 2048, n = 32;
	float *w = random_matrix(m, k, 0.1, 5);
	const char *geo = "l1=32K/8,l2=128K/8,llc=4M/16";
	static const struct {
		const char *key;
		uint64_t budget;
		const char *how;
		double tol;
	} cases[] = {
		{"bitmask", 400000, "blocks of 8 rows simulated", 0.06},
		{"csr", 1500000, "K tiles simulated", 0.06},
		{"csr", 200000, "rows of each of its 7 K tiles simulated", 0.2},
	};
	struct spp_cache_figures full, part;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int warm = 0; warm < 2; warm++) {
			replay_in(cases[c].key, w, m, k, n, 1, geo, 0, warm, &full, NULL);
			assert_true(full.sampled == 1.0);
			replay_in(cases[c].key, w, m, k, n, 1, geo, cases[c].budget, warm, &part, NULL);
			print_message("%s %s: sampled %.3f, L1 %+.3f L2 %+.3f LLC %+.3f\n", cases[c].key,
				      warm ? "warm" : "cold", part.sampled,
				      part.v[SPP_CEV_L1D_MISSES] / full.v[SPP_CEV_L1D_MISSES] - 1,
				      part.v[SPP_CEV_L2_MISSES] / full.v[SPP_CEV_L2_MISSES] - 1,
				      part.v[SPP_CEV_LLC_MISSES] / full.v[SPP_CEV_LLC_MISSES] - 1);
			assert_true(part.sampled > 0 && part.sampled <= 0.5);
			assert_non_null(strstr(part.note, cases[c].how));
			assert_non_null(strstr(part.note, "counts scaled"));
			assert_true(rel(&part, &full, SPP_CEV_L1D_ACCESSES) < 0.05);
			assert_true(rel(&part, &full, SPP_CEV_L1D_MISSES) < cases[c].tol);
			assert_true(rel(&part, &full, SPP_CEV_L2_MISSES) < cases[c].tol);
			if (!warm) /* warm, a 4M LLC holds the layer: no misses */
				assert_true(rel(&part, &full, SPP_CEV_LLC_MISSES) < 0.2);
		}
	free(w);
}

/*
 * A budget smaller than one block of a layer of few blocks (bsr16, 2
 * parts of 4 block rows: a stride longer than all of them) still samples
 * one block: the counts are scaled from it, never zeros with sampled 0
 * (as analyze's runs of bsr16 on a 768 x 768 layer gave at 0.05 s).
 */
static void test_replay_tiny_budget(void **state)
{
	int64_t m = 128, k = 256, n = 16;
	float *w = random_matrix(m, k, 0.2, 9);
	struct spp_cache_figures f, again;

	(void)state;
	for (int warm = 0; warm < 2; warm++) {
		replay_in("bsr16", w, m, k, n, 2, "l1=32K/8,l2=128K/8,llc=4M/16", 100, warm, &f, NULL);
		assert_true(f.sampled > 0 && f.sampled < 1);
		assert_true(f.v[SPP_CEV_L1D_ACCESSES] > 0);
		assert_non_null(strstr(f.note, "counts scaled"));
		replay_in("bsr16", w, m, k, n, 2, "l1=32K/8,l2=128K/8,llc=4M/16", 100, warm, &again, NULL);
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			assert_true(isnan(f.v[e]) ? isnan(again.v[e]) : f.v[e] == again.v[e]);
	}
	free(w);
}

static void test_sim_backend(void **state)
{
	const struct spp_counter_backend *b = spp_counter_backend_find("sim");
	const struct spp_format_ops *traced = spp_trace_format_find("coo");
	struct spp_sim_geometry g;
	struct spp_counter_config cfg = {2, &g, 0};
	struct spp_counter_sample smp;
	struct spp_error err;
	int64_t m = 40, k = 30, n = 8;
	float *w = random_matrix(m, k, 0.5, 2), *x = aligned_floats((size_t)(k * n)),
	      *y = aligned_floats((size_t)(m * n));
	struct spp_matrix wm = {m, k, w};
	struct spp_encoded enc;
	struct spp_exec ex = {.threads = 2, .isa = SPP_ISA_PORTABLE};
	void *sess = NULL;

	(void)state;
	assert_non_null(b);
	assert_non_null(traced);
	assert_null(spp_trace_format_find("librsb"));
	assert_int_equal(spp_sim_geometry_parse("l1=1K/2,llc=64K/4", &g, &err), 0);
	assert_int_equal(traced->encode(&wm, 2, n, &enc, &err), 0);
	assert_int_equal(b->open(&cfg, &sess, &err), 0);
	/* outside start/stop nothing is recorded */
	traced->spmm(&enc, x, y, n, &ex);
	assert_int_equal(b->read(sess, &smp), 0);
	assert_true(smp.v[SPP_CEV_L1D_ACCESSES] == 0);
	assert_int_equal(b->start(sess), 0);
	traced->spmm(&enc, x, y, n, &ex);
	assert_int_equal(b->stop(sess), 0);
	assert_int_equal(b->read(sess, &smp), 0);
	assert_true(smp.v[SPP_CEV_L1D_ACCESSES] > 0);
	/* both parts ran, each on its own simulated core */
	assert_true(smp.thread[0][SPP_CEV_L1D_MISSES] > 0 && smp.thread[1][SPP_CEV_L1D_MISSES] > 0);
	assert_true(isnan(smp.v[SPP_CEV_L2_MISSES]));
	b->close(sess);
	traced->release(&enc);
	free(w), free(x), free(y);
}

/* in test_counters_backends.c */
void test_select(void **state);
void test_pmu_reason(void **state);
void test_perf_software(void **state);
void test_info_lines(void **state);
void test_analyze_counters(void **state);
int hardware_main(void);

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry_parse),
		cmocka_unit_test(test_geometry_from_machine),
		cmocka_unit_test(test_sequential),
		cmocka_unit_test(test_strided),
		cmocka_unit_test(test_conflict_and_lru),
		cmocka_unit_test(test_shared_llc),
		cmocka_unit_test(test_replay_formats),
		cmocka_unit_test(test_replay_compulsory),
		cmocka_unit_test(test_replay_isa_footprint),
		cmocka_unit_test(test_replay_warm),
		cmocka_unit_test(test_replay_deterministic),
		cmocka_unit_test(test_replay_sampled),
		cmocka_unit_test(test_replay_tiny_budget),
		cmocka_unit_test(test_sim_backend),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_pmu_reason),
		cmocka_unit_test(test_perf_software),
		cmocka_unit_test(test_info_lines),
		cmocka_unit_test(test_analyze_counters),
	};

	if (argc > 1 && strcmp(argv[1], "--hw") == 0)
		return hardware_main();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
