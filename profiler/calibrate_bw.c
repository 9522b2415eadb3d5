/*
 * spprof calibrate, the measuring half: the probes of the peak read
 * bandwidth of each memory level (L1, L2, LLC, DRAM), of the triad
 * bandwidth (STREAM-like) and of the fp32 FMA rate, run for 1..T threads;
 * spp_calibrate() then stores the figures through calibrate.c's cache.
 */
#include "profiler/machine.h"
#include "profiler/measure.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buffer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


/* ---- probes: the sum keeps the compiler from dropping the reads ---- */

#if defined(__x86_64__)
/*
 * Streaming reads as fast as the kernels' best: eight independent sums
 * (two loads a cycle stay in flight), and a variant that prefetches a few
 * lines ahead for the levels where the hardware prefetcher falls short;
 * the probe keeps whichever is faster.
 */
#define PREFETCH_AHEAD 512 /* floats: 2 KiB */

/*
 * The read loops measure the machine, not a sanitizer: in an ASan build
 * every load would pay its shadow check and the probe would read slower
 * than the uninstrumented libraries it is the yardstick of (their runs
 * then exceed bw_util 1). Each loop reads only its own array.
 */
#define PROBE_LOOP __attribute__((no_sanitize("address", "undefined")))

__attribute__((target("avx512f")))
PROBE_LOOP
static float read_avx512(const float *a, size_t n, int prefetch)
{
	__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
	size_t i = 0;
	for (; i + 128 <= n; i += 128) {
		if (prefetch) {
			_mm_prefetch((const char *)(a + i + PREFETCH_AHEAD), _MM_HINT_T0);
			_mm_prefetch((const char *)(a + i + PREFETCH_AHEAD + 64), _MM_HINT_T0);
		}
		s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
		s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
		s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
		s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
		s4 = _mm512_add_ps(s4, _mm512_load_ps(a + i + 64));
		s5 = _mm512_add_ps(s5, _mm512_load_ps(a + i + 80));
		s6 = _mm512_add_ps(s6, _mm512_load_ps(a + i + 96));
		s7 = _mm512_add_ps(s7, _mm512_load_ps(a + i + 112));
	}
	s0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
			   _mm512_add_ps(_mm512_add_ps(s4, s5), _mm512_add_ps(s6, s7)));
	float s = _mm512_reduce_add_ps(s0);
	for (; i < n; i++)
		s += a[i];
	return s;
}

__attribute__((target("avx2")))
PROBE_LOOP
static float read_avx2(const float *a, size_t n, int prefetch)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
	size_t i = 0;
	float lanes[8], s = 0;
	for (; i + 64 <= n; i += 64) {
		if (prefetch)
			_mm_prefetch((const char *)(a + i + PREFETCH_AHEAD), _MM_HINT_T0);
		s0 = _mm256_add_ps(s0, _mm256_load_ps(a + i));
		s1 = _mm256_add_ps(s1, _mm256_load_ps(a + i + 8));
		s2 = _mm256_add_ps(s2, _mm256_load_ps(a + i + 16));
		s3 = _mm256_add_ps(s3, _mm256_load_ps(a + i + 24));
		if (prefetch)
			_mm_prefetch((const char *)(a + i + PREFETCH_AHEAD + 32), _MM_HINT_T0);
		s4 = _mm256_add_ps(s4, _mm256_load_ps(a + i + 32));
		s5 = _mm256_add_ps(s5, _mm256_load_ps(a + i + 40));
		s6 = _mm256_add_ps(s6, _mm256_load_ps(a + i + 48));
		s7 = _mm256_add_ps(s7, _mm256_load_ps(a + i + 56));
	}
	s0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
			   _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
	_mm256_storeu_ps(lanes, s0);
	for (int l = 0; l < 8; l++)
		s += lanes[l];
	for (; i < n; i++)
		s += a[i];
	return s;
}

/* FMA throughput: 12 independent chains hide the FMA latency; written out
 * so that every accumulator stays in a register at any optimisation level. */
#define FMA12(fma, acc, x, y)                                                  \
	do {                                                                   \
		acc##0 = fma(acc##0, x, y); acc##1 = fma(acc##1, x, y);        \
		acc##2 = fma(acc##2, x, y); acc##3 = fma(acc##3, x, y);        \
		acc##4 = fma(acc##4, x, y); acc##5 = fma(acc##5, x, y);        \
		acc##6 = fma(acc##6, x, y); acc##7 = fma(acc##7, x, y);        \
		acc##8 = fma(acc##8, x, y); acc##9 = fma(acc##9, x, y);        \
		acc##10 = fma(acc##10, x, y); acc##11 = fma(acc##11, x, y);    \
	} while (0)

__attribute__((target("avx512f")))
static float fma_avx512(long iters)
{
	__m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-7f);
	__m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2),
	       a3 = _mm512_set1_ps(3), a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5),
	       a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7), a8 = _mm512_set1_ps(8),
	       a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
	for (long i = 0; i < iters; i++)
		FMA12(_mm512_fmadd_ps, a, x, y);
	a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
			   _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
	a0 = _mm512_add_ps(a0, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
	return _mm512_reduce_add_ps(a0);
}

__attribute__((target("avx2,fma")))
static float fma_avx2(long iters)
{
	__m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-7f);
	__m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2),
	       a3 = _mm256_set1_ps(3), a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5),
	       a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7), a8 = _mm256_set1_ps(8),
	       a9 = _mm256_set1_ps(9), a10 = _mm256_set1_ps(10), a11 = _mm256_set1_ps(11);
	float lanes[8], s = 0;
	for (long i = 0; i < iters; i++)
		FMA12(_mm256_fmadd_ps, a, x, y);
	a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
			   _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
	a0 = _mm256_add_ps(a0, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
	_mm256_storeu_ps(lanes, a0);
	for (int l = 0; l < 8; l++)
		s += lanes[l];
	return s;
}
#endif

PROBE_LOOP
static float read_portable(const float *a, size_t n)
{
	float s[8] = {0};
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (int l = 0; l < 8; l++)
			s[l] += a[i + l];
	for (; i < n; i++)
		s[0] += a[i];
	return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

static float fma_portable(long iters)
{
	float acc[8];
	for (int j = 0; j < 8; j++)
		acc[j] = (float)j;
	for (long i = 0; i < iters; i++)
		for (int j = 0; j < 8; j++)
			acc[j] = acc[j] * 0.999f + 1e-7f;
	return acc[0] + acc[7];
}

static float read_chunk(enum spp_isa isa, const float *a, size_t n, int prefetch)
{
#if defined(__x86_64__)
	if (isa >= SPP_ISA_AVX512)
		return read_avx512(a, n, prefetch);
	if (isa >= SPP_ISA_AVX2)
		return read_avx2(a, n, prefetch);
#endif
	(void)isa;
	(void)prefetch;
	return read_portable(a, n);
}

/* FLOPs per iteration of each FMA probe: chains x lanes x 2. */
static double fma_flops_per_iter(enum spp_isa isa)
{
	return isa >= SPP_ISA_AVX512 ? 12 * 16 * 2 : isa >= SPP_ISA_AVX2 ? 12 * 8 * 2 : 8 * 2;
}

static float fma_run(enum spp_isa isa, long iters)
{
#if defined(__x86_64__)
	if (isa >= SPP_ISA_AVX512)
		return fma_avx512(iters);
	if (isa >= SPP_ISA_AVX2)
		return fma_avx2(iters);
#endif
	(void)isa;
	return fma_portable(iters);
}

/* Arrays several times any plausible last-level cache, so they stream from DRAM. */
#define PROBE_BYTES (UINT64_C(768) << 20)

struct probe_arrays {
	float *a, *b, *c;
	size_t n;          /* elements of each array */
};

static int probe_alloc(struct probe_arrays *p)
{
	p->n = PROBE_BYTES / 3 / sizeof(float) / 64 * 64;
	/* huge-page backed like the runs' operands (base/buffer.h) */
	p->a = spp_buffer_alloc(p->n * sizeof(float));
	p->b = spp_buffer_alloc(p->n * sizeof(float));
	p->c = spp_buffer_alloc(p->n * sizeof(float));
	if (!p->a || !p->b || !p->c)
		return -1;
	/* first touch in parallel, so pages spread over the threads that use them */
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < p->n; i++) {
		p->a[i] = 0.0f;
		p->b[i] = 1.0f;
		p->c[i] = 2.0f;
	}
	return 0;
}

static void probe_free(struct probe_arrays *p)
{
	spp_buffer_free(p->a);
	spp_buffer_free(p->b);
	spp_buffer_free(p->c);
}

/*
 * Read bandwidth of a working set of `bytes` (all threads together) that
 * starts at b: each thread reads its own slice `passes` times over, so a
 * small working set stays in the caches it fits; the best of repeated
 * timings within `seconds` (STREAM's convention), of plain and
 * prefetching reads. GB/s.
 */
static double read_level(const float *b, size_t bytes, int threads, enum spp_isa isa,
			 double seconds, volatile float *sink)
{
	size_t n = bytes / sizeof(float) / 128 * 128;
	/* enough passes that one timing lasts about a millisecond at 200 GB/s */
	int passes = n ? (int)(2e8 / (double)(n * sizeof(float))) : 1;
	double best = 1e30, t0 = now_s();

	if (passes < 1)
		passes = 1;
	if (n < (size_t)threads * 128)
		return 0;
	for (int rep = 0; rep < 6 || (now_s() - t0 < seconds && rep < 100000); rep++) {
		int prefetch = rep & 1;
		float total = 0;
		double t = now_s();
#pragma omp parallel num_threads(threads) reduction(+ : total)
		{
			int tid = omp_get_thread_num(), nt = omp_get_num_threads();
			size_t per = (n / (size_t)nt) / 128 * 128;
			size_t begin = per * (size_t)tid;
			size_t len = tid == nt - 1 ? n - begin : per;
			if (rep == 0)
				spp_pin_self(tid); /* best effort */
			for (int p = 0; p < passes; p++)
				total += read_chunk(isa, b + begin, len, prefetch);
		}
		t = now_s() - t;
		*sink += total;
		if (rep >= 2 && t < best) /* two warm-up rounds: pages touched, caches filled */
			best = t;
	}
	return (double)(n * sizeof(float)) * passes / best / 1e9;
}

/*
 * The working set each level's probe reads: inside the level, and as small
 * as the level counts (just above what the level below holds), where it
 * reads fastest, so that the level's figure bounds every run it is used
 * for. DRAM: twice the LLC (at least 64 MiB), within the probe arrays.
 */
static void level_sizes(const uint64_t cap[SPP_BW_LEVELS], size_t array_bytes,
			double sizes[SPP_BW_LEVELS])
{
	double below = 0;

	for (int l = 0; l < SPP_BW_DRAM; l++) {
		double c = (double)cap[l], want = below > 0 ? 2 * below : c / 2;

		sizes[l] = 0;
		if (c <= 0)
			continue;
		if (want > c / 2)
			want = c / 2;
		if (want <= below) /* the level is too close to the one below to tell apart */
			want = (below + c) / 2;
		sizes[l] = want;
		below = c;
	}
	sizes[SPP_BW_DRAM] = below > 32.0 * (1 << 20) ? 2 * below : 64.0 * (1 << 20);
	if (sizes[SPP_BW_DRAM] > (double)array_bytes)
		sizes[SPP_BW_DRAM] = (double)array_bytes;
}

static void measure(struct probe_arrays *p, const struct spp_machine *m, int threads,
		    enum spp_isa isa, double seconds, struct spp_calibration *out)
{
	double best_triad = 1e30, best_fma = 1e30, sizes[SPP_BW_LEVELS];
	const long fma_iters = 4000000;
	volatile float sink = 0;
	uint64_t cap[SPP_BW_LEVELS];
	double t0;

	spp_bw_capacities(m, threads, cap);
	level_sizes(cap, p->n * sizeof(float), sizes);
	for (int l = 0; l < SPP_BW_LEVELS; l++) {
		out->level_bytes[l] = sizes[l];
		out->level_gbs[l] = sizes[l] > 0 ? read_level(p->b, (size_t)sizes[l], threads, isa,
							       seconds / 2, &sink) : 0;
	}
	t0 = now_s();
	for (int rep = 0; rep < 3 || now_s() - t0 < seconds; rep++) {
		double t = now_s();
		float total = 0;
		const float s = 3.0f;
		float *a = p->a;
		const float *b = p->b, *c = p->c;
#pragma omp parallel for simd num_threads(threads) schedule(static)
		for (size_t i = 0; i < p->n; i++)
			a[i] = b[i] + s * c[i];
		t = now_s() - t;
		sink += p->a[rep % p->n];
		if (t < best_triad)
			best_triad = t;

		t = now_s();
#pragma omp parallel num_threads(threads) reduction(+ : total)
		total += fma_run(isa, fma_iters);
		t = now_s() - t;
		sink += total;
		if (t < best_fma)
			best_fma = t;
	}
	(void)sink;
	out->threads = threads;
	out->read_gbs = out->level_gbs[SPP_BW_DRAM];
	out->triad_gbs = 3.0 * (double)(p->n * sizeof(float)) / best_triad / 1e9;
	out->peak_gflops = (double)threads * (double)fma_iters * fma_flops_per_iter(isa) /
			   best_fma / 1e9;
	snprintf(out->isa, sizeof(out->isa), "%s", spp_isa_name(isa));
}


int spp_calibrate_measure(const struct spp_machine *m, const int *threads, int count,
			  double seconds_per_probe, struct spp_calibration *out, struct spp_error *err)
{
	struct probe_arrays p = {0};
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	if (probe_alloc(&p)) {
		probe_free(&p);
		return spp_error_set(err, SPP_E_NOMEM,
				     "calibrate: cannot allocate %llu MiB of probe arrays",
				     (unsigned long long)(PROBE_BYTES >> 20));
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int i = 0; i < count; i++) {
		measure(&p, m, threads[i], m->isa, seconds_per_probe, &out[i]);
		snprintf(out[i].when, sizeof(out[i].when), "%s", when);
	}
	probe_free(&p);
	return SPP_OK;
}

int spp_calibrate(int max_threads, double seconds_per_probe,
		  struct spp_calibration *out, struct spp_error *err)
{
	struct spp_machine m;
	int *threads = malloc(sizeof(int) * (size_t)(max_threads > 0 ? max_threads : 1));
	int rc;

	if (!threads)
		return spp_error_set(err, SPP_E_NOMEM, "calibrate: out of memory");
	for (int t = 1; t <= max_threads; t++)
		threads[t - 1] = t;
	spp_machine_describe(&m, max_threads);
	rc = spp_calibrate_measure(&m, threads, max_threads, seconds_per_probe, out, err);
	free(threads);
	return rc ? rc : spp_calibration_store(m.cpu, out, max_threads, err);
}
