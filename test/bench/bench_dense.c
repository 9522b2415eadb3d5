/*
 * Dense-baseline benchmark: is spprof's dense time the machine's best? For
 * each shape, in one process and interleaved round by round, every dense
 * library is called directly (no spprof code between the clock readings):
 * OpenBLAS as the process loaded it, OpenBLAS on the best core of its build
 * for this CPU's ISA (a second copy loaded with dlmopen and
 * OPENBLAS_CORETYPE set: SkylakeX on AVX-512, Haswell or Zen on AVX2),
 * oneDNN's dnnl_sgemm and BLIS's bli_sgemm/bli_sgemv; then spprof's
 * baseline, spp_matrix_measure with every candidate (the same code analyze,
 * sweep and bench use), fresh each round. Prints the medians over rounds
 * with p10-p90, and spprof's dense time over the fastest direct call.
 *
 *   bench_dense [--cold] [ROUNDS] [MxKxN ...]   default warm, 7 rounds, the five shapes
 *
 * --cold: before every timed call W is evicted from every cache level and
 * X and Y read back (spp_cache_flush, then spp_cache_touch: what spprof's
 * cold runs do, --cache cold), the direct calls and spprof's alike, so
 * that both are compared in the same cache state.
 *
 * Threads: 1 (pin it with taskset). Exit 0 when every ratio is within
 * 1.10, 1 when one is not, 2 on error.
 */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include "base/buffer.h"
#include "kernels/dense/dense.h"
#include "profiler/machine.h"
#include "profiler/run.h"

/* --cold: the eviction buffer (sized from this machine, as spprof's); NULL warm */
static struct spp_flusher *cold;

#define TARGET 1.10
#define REPS 9

typedef void sgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint,
		      blasint, float, const float *, blasint, const float *, blasint, float, float *,
		      blasint);
typedef void sgemv_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, blasint, blasint, float, const float *,
		      blasint, const float *, blasint, float, float *, blasint);
typedef void threads_fn(int);
/* BLIS's typed API: int64 dims and strides, enums as int (blis.h, 0.9) */
typedef void bli_sgemm_fn(int, int, int64_t, int64_t, int64_t, float *, float *, int64_t, int64_t,
			  float *, int64_t, int64_t, float *, float *, int64_t, int64_t);
typedef void bli_sgemv_fn(int, int, int64_t, int64_t, float *, float *, int64_t, int64_t, float *,
			  int64_t, float *, float *, int64_t);
typedef void bli_threads_fn(int64_t);

struct direct {
	const char *name;
	void *h;
	sgemm_fn *sgemm;
	sgemv_fn *sgemv;
	threads_fn *threads;
	bli_sgemm_fn *bsgemm;
	bli_sgemv_fn *bsgemv;
	int dnnl;
	double t[64];
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static void *sym(void *h, const char *name)
{
	return h ? dlsym(h, name) : NULL;
}

static void call(const struct direct *d, int64_t m, int64_t k, int64_t n, const float *w,
		 const float *x, float *y)
{
	float one = 1, zero = 0;

	if (d->dnnl) {
		dnnl_sgemm('N', 'N', m, n, k, 1.0f, w, k, x, n, 0.0f, y, n);
	} else if (d->bsgemm) {
		if (n == 1)
			d->bsgemv(0, 0, m, k, &one, (float *)w, k, 1, (float *)x, 1, &zero, y, 1);
		else
			d->bsgemm(0, 0, m, n, k, &one, (float *)w, k, 1, (float *)x, n, 1, &zero, y, n, 1);
	} else if (n == 1) {
		d->sgemv(CblasRowMajor, CblasNoTrans, (blasint)m, (blasint)k, 1.0f, w, (blasint)k, x, 1, 0.0f,
			 y, 1);
	} else {
		d->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, w,
			 (blasint)k, x, (blasint)n, 0.0f, y, (blasint)n);
	}
}

/* --cold: W evicted, X and Y read back. */
static void make_cold(int64_t m, int64_t k, int64_t n, const float *w, const float *x, float *y)
{
	struct spp_range wr = {w, (size_t)(m * k) * sizeof(float)};
	struct spp_range xy[2] = {{x, (size_t)(k * n) * sizeof(float)}, {y, (size_t)(m * n) * sizeof(float)}};

	if (!cold)
		return;
	spp_cache_flush(cold, &wr, 1);
	spp_cache_touch(cold, xy, 2);
}

/* Median of REPS timed calls after 2 warm-up calls. */
static double time_direct(const struct direct *d, int64_t m, int64_t k, int64_t n, const float *w,
			  const float *x, float *y)
{
	double t[REPS];

	for (int i = 0; i < 2; i++)
		call(d, m, k, n, w, x, y);
	for (int i = 0; i < REPS; i++) {
		double t0;

		make_cold(m, k, n, w, x, y);
		t0 = now_ns();

		call(d, m, k, n, w, x, y);
		t[i] = now_ns() - t0;
	}
	for (int i = 1; i < REPS; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double s = t[j];
			t[j] = t[j - 1];
			t[j - 1] = s;
		}
	return t[REPS / 2];
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median, p10, p90 of n values (sorted in place). */
static void stats(double *v, int n, double *med, double *p10, double *p90)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	*med = spp_percentile_sorted(v, n, 0.5);
	*p10 = spp_percentile_sorted(v, n, 0.1);
	*p90 = spp_percentile_sorted(v, n, 0.9);
}

static const char *best_core(void)
{
	enum spp_isa isa = spp_isa_detect();
	unsigned amd = 0;

	if (isa >= SPP_ISA_AVX512)
		return "SkylakeX";
#if defined(__x86_64__)
	{
		unsigned a, b, c, d;

		__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
		amd = b == 0x68747541u;
	}
#endif
	return isa >= SPP_ISA_AVX2 ? (amd ? "Zen" : "Haswell") : "Prescott";
}

/* The shapes MxKxN of argv[2..] (at most 16), or the defaults; their number. */
static int parse_shapes(int argc, char **argv, int64_t shapes[16][3])
{
	static const int64_t defaults[][3] = {{256, 256, 128}, {768, 768, 128}, {3072, 768, 128},
					      {4096, 4096, 64}, {4096, 4096, 1}};
	int nshapes = 0;

	for (int i = 2; i < argc && nshapes < 16; i++)
		if (sscanf(argv[i], "%ldx%ldx%ld", &shapes[nshapes][0], &shapes[nshapes][1], &shapes[nshapes][2]) == 3)
			nshapes++;
	if (!nshapes) {
		memcpy(shapes, defaults, sizeof(defaults));
		nshapes = 5;
	}
	return nshapes;
}

/* BLIS's arch_t of its best configuration for this CPU's ISA (blis.h, 0.9). */
static const char *best_blis_arch(void)
{
	enum spp_isa isa = spp_isa_detect();

	if (isa >= SPP_ISA_AVX512)
		return "0"; /* skx */
	return isa >= SPP_ISA_AVX2 ? (strcmp(best_core(), "Zen") == 0 ? "6" : "3") : NULL; /* zen3, haswell */
}

/* A BLIS caller in d: from handle h, initialised (which reads BLIS_ARCH_TYPE). 1 when usable. */
static int blis_direct(struct direct *d, void *h, const char *name)
{
	bli_threads_fn *bt = (bli_threads_fn *)sym(h, "bli_thread_set_num_threads");
	void (*init)(void) = (void (*)(void))sym(h, "bli_init");

	d->h = h;
	d->bsgemm = (bli_sgemm_fn *)sym(h, "bli_sgemm");
	d->bsgemv = (bli_sgemv_fn *)sym(h, "bli_sgemv");
	if (!d->bsgemm || !d->bsgemv || !bt || !init)
		return 0;
	init();
	bt(1);
	d->name = name;
	return 1;
}

/*
 * The direct callers into d (room for 5), each on 1 thread: OpenBLAS as
 * loaded, a second copy on core_env's core where it loads, oneDNN, BLIS
 * where it is installed, as loaded and a copy on its best configuration
 * for the ISA (what spprof's candidates add where BLIS detects less).
 * user: OPENBLAS_CORETYPE as the process found it. Returns their number.
 */
static int open_direct(struct direct *d, const char *core_env, const char *user)
{
	Dl_info info;
	int nd = 0, have_blis;

	memset(d, 0, 5 * sizeof(*d));
	d[nd++] = (struct direct){.name = "openblas (as loaded)", .sgemm = cblas_sgemm, .sgemv = cblas_sgemv,
				  .threads = openblas_set_num_threads};
	if (dladdr((void *)cblas_sgemm, &info)) {
		setenv("OPENBLAS_CORETYPE", core_env, 1);
		d[nd].h = dlmopen(LM_ID_NEWLM, info.dli_fname, RTLD_NOW | RTLD_LOCAL);
		if (user)
			setenv("OPENBLAS_CORETYPE", user, 1);
		else
			unsetenv("OPENBLAS_CORETYPE");
		d[nd].sgemm = (sgemm_fn *)sym(d[nd].h, "cblas_sgemm");
		d[nd].sgemv = (sgemv_fn *)sym(d[nd].h, "cblas_sgemv");
		d[nd].threads = (threads_fn *)sym(d[nd].h, "openblas_set_num_threads");
		d[nd].name = "openblas (best core)";
		if (d[nd].sgemm && d[nd].sgemv && d[nd].threads)
			nd++;
	}
	d[nd++] = (struct direct){.name = "onednn", .dnnl = 1};
	have_blis = blis_direct(&d[nd], dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL), "blis (as loaded)");
	nd += have_blis;
	if (have_blis && best_blis_arch()) {
		/* BLIS reads BLIS_ARCH_TYPE when bli_init runs, not at load */
		setenv("BLIS_ARCH_TYPE", best_blis_arch(), 1);
		if (blis_direct(&d[nd], dlmopen(LM_ID_NEWLM, "libblis.so.4", RTLD_NOW | RTLD_LOCAL),
				"blis (best config)"))
			nd++;
		unsetenv("BLIS_ARCH_TYPE");
	}
	for (int i = 0; i < nd; i++)
		if (d[i].threads)
			d[i].threads(1);
	return nd;
}

/* The header: the setup, spprof's dense candidates and the table's columns. */
static void print_header(const struct direct *d, int nd, const struct spp_dense_set *set, int rounds,
			 const char *user, const char *loaded_core, const char *core_env)
{
	printf("bench_dense: 1 thread, %d rounds, %s; OPENBLAS_CORETYPE %s (as loaded: %s), best core %s\n",
	       rounds, cold ? "cold (W evicted before each timed call, X and Y read back)" : "warm",
	       user ? user : "unset", loaded_core, core_env);
	for (int i = 0; i < set->n; i++) {
		char what[128];

		spp_dense_describe(&set->c[i], what, sizeof(what));
		printf("  spprof candidate %-18s %s\n", set->c[i].name, set->c[i].ok ? what : set->c[i].reason);
	}
	printf("\n%-16s", "shape");
	for (int i = 0; i < nd; i++)
		printf(" %22s", d[i].name);
	printf(" %22s %8s %14s  %s\n", "spprof dense", "ratio", "ratio p10-p90", "spprof's winner");
}

/*
 * Each round: every direct call into d[i].t[r], then spprof's baseline into
 * ts[r] and its ratio to the round's fastest direct call into ratio[r];
 * spprof's winning library into winner. 0, or 2 on error (said on stderr).
 */
static int run_rounds(struct direct *d, int nd, struct spp_dense_set *set, int rounds,
		      const struct spp_matrix *wm, int64_t n, const float *x, float *y, double *ts,
		      double *ratio, char *winner, size_t winner_len)
{
	struct spp_error err = {0};
	int64_t m = wm->m, k = wm->k;

	for (int r = 0; r < rounds; r++) {
		struct spp_run_opts ro;
		struct spp_layer_runs runs = {0};
		double best = INFINITY;

		for (int i = 0; i < nd; i++) {
			d[i].t[r] = time_direct(&d[i], m, k, n, wm->v, x, y);
			if (d[i].t[r] < best)
				best = d[i].t[r];
		}
		spp_run_opts_init(&ro);
		ro.dense = set;
		ro.bench.warmup = 2;
		ro.bench.repeat = REPS;
		ro.cold = cold != NULL;
		ro.flusher = cold;
		if (spp_matrix_measure(wm, n, (uint64_t)(m * k), 1, "bench", NULL, 0, &ro, &runs, &err)) {
			fprintf(stderr, "bench_dense: %s\n", err.msg);
			return 2;
		}
		ts[r] = runs.runs[0].time.median;
		ratio[r] = ts[r] / best;
		snprintf(winner, winner_len, "%s", runs.runs[0].library);
		spp_layer_runs_release(&runs);
	}
	return 0;
}

/*
 * One shape's row: the medians of the direct calls and of spprof's dense
 * time, and its ratio to the fastest. 0 when the ratio is within TARGET,
 * 1 when it is not, 2 on error (said on stderr).
 */
static int bench_shape(struct direct *d, int nd, struct spp_dense_set *set, int rounds,
		       const int64_t shape_mkn[3])
{
	int64_t m = shape_mkn[0], k = shape_mkn[1], n = shape_mkn[2];
	float *w = spp_buffer_alloc(sizeof(float) * (size_t)(m * k));
	float *x = spp_buffer_alloc(sizeof(float) * (size_t)(k * n));
	float *y = spp_buffer_alloc(sizeof(float) * (size_t)(m * n));
	double ts[64], ratio[64], med, p10, p90, dmed[5];
	char winner[64] = "", shape[32];
	struct spp_matrix wm = {m, k, w};
	int missed;

	if (!w || !x || !y) {
		fprintf(stderr, "bench_dense: out of memory\n");
		return 2;
	}
	for (int64_t i = 0; i < m * k; i++)
		w[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)((i * 104729) % 2001 - 1000) / 1000.0f;
	if (run_rounds(d, nd, set, rounds, &wm, n, x, y, ts, ratio, winner, sizeof(winner)))
		return 2;
	snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)m, (long long)k, (long long)n);
	printf("%-16s", shape);
	for (int i = 0; i < nd; i++) {
		stats(d[i].t, rounds, &dmed[i], &p10, &p90);
		printf(" %9.3f ms (%4.0f GF/s)", dmed[i] / 1e6, 2.0 * m * k * n / dmed[i]);
	}
	{
		double smed, best = INFINITY, q;

		stats(ts, rounds, &smed, &p10, &p90);
		printf(" %9.3f ms (%4.0f GF/s)", smed / 1e6, 2.0 * m * k * n / smed);
		for (int i = 0; i < nd; i++)
			best = dmed[i] < best ? dmed[i] : best;
		/* the headline: medians over rounds; the spread: per round, against that round's fastest */
		q = smed / best;
		stats(ratio, rounds, &med, &p10, &p90);
		printf(" %8.3f %6.3f-%-6.3f  %s%s\n", q, p10, p90, winner, q <= TARGET ? "" : "  MISSED");
		missed = q > TARGET;
	}
	spp_buffer_free(w), spp_buffer_free(x), spp_buffer_free(y);
	return missed;
}

int main(int argc, char **argv)
{
	int64_t shapes[16][3];
	int nshapes, rounds, nd, missed = 0;
	struct direct d[5];
	struct spp_dense_set set;
	struct spp_error err = {0};
	char core_env[64], loaded_core[64], method[64];
	const char *user = getenv("OPENBLAS_CORETYPE");
	struct spp_flusher fl = {0};

	if (argc > 1 && strcmp(argv[1], "--cold") == 0) {
		struct spp_machine *mach = calloc(1, sizeof(*mach));

		if (!mach)
			return 2;
		spp_machine_describe(mach, 1);
		if (spp_run_flusher_init(&fl, mach, method, sizeof(method), &err)) {
			fprintf(stderr, "bench_dense: %s\n", err.msg);
			return 2;
		}
		free(mach);
		cold = &fl;
		argc--, argv++;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 7;
	if (rounds < 1 || rounds > 64)
		rounds = 7;
	nshapes = parse_shapes(argc, argv, shapes);
	snprintf(loaded_core, sizeof(loaded_core), "%s", openblas_get_corename());
	snprintf(core_env, sizeof(core_env), "%s", best_core());
	/* the direct callers */
	nd = open_direct(d, core_env, user);
	omp_set_num_threads(1); /* oneDNN's OpenMP regions */
	if (spp_dense_set_open(&set, NULL, spp_isa_detect(), &err)) {
		fprintf(stderr, "bench_dense: %s\n", err.msg);
		return 2;
	}
	print_header(d, nd, &set, rounds, user, loaded_core, core_env);
	for (int s = 0; s < nshapes; s++) {
		int rc = bench_shape(d, nd, &set, rounds, shapes[s]);

		if (rc == 2)
			return 2;
		missed += rc;
	}
	printf("\nratio = spprof's dense time / the fastest library called directly (medians over the rounds);\n"
	       "p10-p90 over the rounds of spprof's time / that round's fastest direct call; target <= %.2f: %s\n",
	       TARGET, missed ? "MISSED" : "met");
	spp_dense_set_close(&set);
	spp_flusher_fini(&fl);
	return missed ? 1 : 0;
}
