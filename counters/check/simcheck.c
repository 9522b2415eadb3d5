/*
 * spp-simcheck: one CPU kernel on a seeded random matrix, either run as it
 * is (one thread, on ISA: portable by default) for valgrind's cachegrind
 * to simulate, or replayed through spprof's cache simulator (the traced
 * copy of the same ISA's kernel). scripts/sim-vs-cachegrind runs both
 * with the same geometry and compares the D1 and LL misses.
 *
 *   spp-simcheck setup|kernel|sim FORMAT M K N DENSITY [CACHE-MODEL [ISA]]
 *
 * setup: build W, X, Y and evict the caches (read 64 MiB), no kernel: the
 * baseline cachegrind's counts of `kernel` are taken against. kernel: the
 * same, then one call of the kernel. sim: the same setup, then the
 * simulator's replay; prints its counts and its speed. warm: a full warm
 * replay (the second of two counted, as analyze's) of the ISA's kernel:
 * its accesses and misses per level, on the encoding of the detected ISA,
 * or with `own` the ISA's own (scripts/sim-vs-cachegrind --isa-table).
 * ISA: portable,
 * avx2 or avx512, which this CPU (or valgrind's) must have: exit 77 if
 * not; it is also set as SPPROF_ISA, so that the format encodes for it
 * (kernels.h) under valgrind and natively alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters/sim.h"
#include "kernels/kernels.h"

#define EVICT_BYTES ((size_t)64 << 20)

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* W: seeded values at the given density; for an N:M format, the first N non-zeros of each M kept. */
static void fill_w(const struct spp_format_ops *ops, float *wv, long long m, long long k,
		   double density)
{
	uint64_t st = 12345;

	for (long long i = 0; i < m * k; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		if ((double)(st >> 11) / 9007199254740992.0 < density)
			wv[i] = 0.5f + (float)(st >> 60);
	}
	/* an N:M format: keep the first N non-zeros of each group of M */
	for (long long i = 0; ops->keep > 0 && i < m; i++)
		for (long long g = 0; g < k; g += ops->block) {
			int kept = 0;

			for (long long j = g; j < g + ops->block && j < k; j++)
				if (wv[i * k + j] != 0.0f && ++kept > ops->keep)
					wv[i * k + j] = 0.0f;
		}
}

/* argv[8], the ISA to run (argv[9] "own": the encoding's too): 0, or the exit status. */
static int parse_isa(int argc, char **argv, int *isa)
{
	for (*isa = 0; *isa < SPP_ISA_COUNT && strcmp(argv[8], spp_isa_name((enum spp_isa)*isa)); (*isa)++)
		;
	if (*isa == SPP_ISA_COUNT) {
		fprintf(stderr, "spp-simcheck: unknown ISA '%s'\n", argv[8]);
		return 2;
	}
	/* the encoding follows the ISA too (csr's K tiles): as valgrind's run sees it */
	if (strcmp(argv[1], "warm") || (argc > 9 && strcmp(argv[9], "own") == 0))
		setenv("SPPROF_ISA", argv[8], 1);
	if (*isa > (int)spp_isa_detect()) {
		fprintf(stderr, "spp-simcheck: this CPU has no %s\n", argv[8]);
		return 77;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct spp_format_ops *ops;
	struct spp_matrix w;
	struct spp_encoded enc;
	struct spp_error err;
	long long m, k, n;
	double density;
	float *wv, *x, *y;
	unsigned char *evict;
	volatile unsigned sink = 0;
	int isa = SPP_ISA_PORTABLE, rc;

	if (argc < 7 || (strcmp(argv[1], "setup") && strcmp(argv[1], "kernel") && strcmp(argv[1], "sim") &&
			 strcmp(argv[1], "warm"))) {
		fprintf(stderr, "usage: spp-simcheck setup|kernel|sim|warm FORMAT M K N DENSITY "
			"[CACHE-MODEL [ISA [own]]]\n");
		return 2;
	}
	if (argc > 8 && (rc = parse_isa(argc, argv, &isa)) != 0)
		return rc;
	ops = spp_cpu_format_find(argv[2]);
	m = atoll(argv[3]), k = atoll(argv[4]), n = atoll(argv[5]);
	density = atof(argv[6]);
	if (!ops || m < 1 || k < 1 || n < 1) {
		fprintf(stderr, "spp-simcheck: bad format or shape\n");
		return 2;
	}
	wv = calloc((size_t)(m * k), sizeof(float));
	x = aligned_alloc(64, (size_t)(k * n) * sizeof(float) + 64);
	y = aligned_alloc(64, (size_t)(m * n) * sizeof(float) + 64);
	evict = malloc(EVICT_BYTES);
	if (!wv || !x || !y || !evict)
		return 3;
	fill_w(ops, wv, m, k, density);
	for (long long i = 0; i < k * n; i++)
		x[i] = (float)(i % 7) - 3.0f;
	memset(y, 0, (size_t)(m * n) * sizeof(float));
	w = (struct spp_matrix){m, k, wv};
	if (ops->encode(&w, 1, n, &enc, &err)) {
		fprintf(stderr, "spp-simcheck: %s\n", err.msg);
		return 2;
	}
	memset(evict, 1, EVICT_BYTES);
	for (size_t i = 0; i < EVICT_BYTES; i += 64)
		sink += evict[i];
	if (strcmp(argv[1], "kernel") == 0) {
		struct spp_exec ex = {.threads = 1, .isa = (enum spp_isa)isa};

		ops->spmm(&enc, x, y, n, &ex);
	} else if (strcmp(argv[1], "warm") == 0) {
		struct spp_sim_geometry g;
		struct spp_cache_figures f;

		if (argc < 8 || spp_sim_geometry_parse(argv[7], &g, &err)) {
			fprintf(stderr, "spp-simcheck: warm needs a cache model%s%s\n", argc < 8 ? "" : ": ",
				argc < 8 ? "" : err.msg);
			return 2;
		}
		if (spp_sim_replay(&g, 1, UINT64_MAX, 1, (enum spp_isa)isa, &enc, x, y, n, &f, &err)) {
			fprintf(stderr, "spp-simcheck: %s\n", err.msg);
			return 3;
		}
		printf("warm l1d_accesses %.0f l1d_misses %.0f l2_misses %.0f llc_misses %.0f\n",
		       f.v[SPP_CEV_L1D_ACCESSES], f.v[SPP_CEV_L1D_MISSES], f.v[SPP_CEV_L2_MISSES],
		       f.v[SPP_CEV_LLC_MISSES]);
	} else if (strcmp(argv[1], "sim") == 0) {
		struct spp_sim_geometry g;
		struct spp_cache_figures f;
		double t0, t1;

		if (spp_sim_geometry_parse(argc > 7 ? argv[7] : "l1=32K/8,llc=8M/16,line=64", &g, &err)) {
			fprintf(stderr, "spp-simcheck: %s\n", err.msg);
			return 2;
		}
		t0 = now_s();
		if (spp_sim_replay(&g, 1, UINT64_MAX, 0, (enum spp_isa)isa, &enc, x, y, n, &f, &err)) {
			fprintf(stderr, "spp-simcheck: %s\n", err.msg);
			return 3;
		}
		t1 = now_s();
		printf("sim d1_misses %.0f ll_misses %.0f line_accesses %.0f seconds %.3f accesses_per_s %.3g\n",
		       f.v[SPP_CEV_L1D_MISSES], f.v[SPP_CEV_LLC_MISSES], f.v[SPP_CEV_L1D_ACCESSES],
		       t1 - t0, f.v[SPP_CEV_L1D_ACCESSES] / (t1 - t0));
	}
	ops->release(&enc);
	free(wv), free(x), free(y), free(evict);
	return (int)(sink & 0);
}
