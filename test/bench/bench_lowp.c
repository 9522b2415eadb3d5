/*
 * Low-precision sparse kernels against the same-precision dense baseline
 * (issue 47's targets, before --precision reaches analyze and bench): per
 * precision (bf16, int8; fp16 where a dense fp16 exists), on S x S layers
 * (2:4 at 50 %, unstructured at 90 %), at each N, every kernels/lowp/
 * format the layer admits against oneDNN's matmul in the same precision
 * through spprof's API (kernels/dense/lowp_dense.h, X^T layout: oneDNN's
 * own), timed interleaved round by round on one thread. The speedup is the
 * median over rounds of dense / format in the same round, with the
 * rounds' p10-p90 of that ratio. W's bytes per second beside each time
 * (the dense W in the precision; a format's values, metadata and scales).
 * Each format's Y is checked against the dense Y before it is timed (both
 * quantized from the same W and X: within 2 % of max |Y| for int8, 0.5 %
 * else), so a wrong kernel never prints a figure.
 *
 *   bench_lowp [--cold] [ROUNDS] [S]      default warm, 11 rounds, S = 4096
 *
 * --cold: before every timed call the caches are evicted (a buffer of 2x
 * the largest believable cache read through; spp_run_flusher_init), as a
 * layer's weights meet a model larger than the LLC.
 * Exit 0, or 2 on error or a failed check. Pin it (taskset) on a quiet
 * machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/dense/lowp_dense.h"
#include "kernels/lowp/lowp.h"
#include "profiler/machine.h"
#include "profiler/measure.h"
#include "profiler/run.h"
#include "profiler/stats.h"

#define MAX_ROUNDS 64

static struct spp_flusher *cold;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return spp_percentile_sorted(v, n, p);
}

/* A deterministic uniform in [-1, 1). */
static float rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((double)(*s >> 11) / 9007199254740992.0 * 2 - 1);
}

/* W s x s: 2:4 (the 2 smallest of every 4 along K zero) or unstructured at 90 %. */
static void make_w(float *w, int64_t s, int two_four, uint64_t seed)
{
	for (int64_t i = 0; i < s * s; i++)
		w[i] = rnd(&seed);
	for (int64_t i = 0; i < s * s; i += 4) {
		if (two_four) {
			/* zero the two of smallest magnitude */
			for (int z = 0; z < 2; z++) {
				int lo = -1;

				for (int j = 0; j < 4; j++)
					if (w[i + j] != 0 && (lo < 0 || fabsf(w[i + j]) < fabsf(w[i + lo])))
						lo = j;
				w[i + lo] = 0;
			}
		} else {
			for (int j = 0; j < 4; j++)
				if ((rnd(&seed) + 1) / 2 < 0.9f)
					w[i + j] = 0;
		}
	}
}

static void evict(void)
{
	if (cold)
		spp_cache_flush(cold, NULL, 0);
}

struct side {
	const char *name;
	struct spp_lowp_w w;   /* a format; dense: unused */
	double t[MAX_ROUNDS];
	double bytes;
};

static int check(const float *y, const float *yd, int64_t m, int64_t n, enum spp_prec p,
		 const char *what)
{
	double big = 0, worst = 0;

	for (int64_t i = 0; i < m * n; i++) {
		big = fmax(big, fabs(yd[i]));
		worst = fmax(worst, fabs(y[i] - yd[i]));
	}
	if (worst <= (p == SPP_PREC_INT8 ? 0.02 : 0.005) * big)
		return 0;
	fprintf(stderr, "bench_lowp: %s: |Y - dense Y| up to %.3g of max %.3g\n", what, worst, big);
	return -1;
}

/* Y (m x n) from Y^T (n x m). */
static void untranspose(const float *yt, float *y, int64_t m, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++)
			y[i * n + j] = yt[j * m + i];
}

struct job {
	int64_t s, n;
	enum spp_prec p;
	int rounds;
	const float *x;
	float *y, *yd;
	struct spp_dense_lowp *dense;
	struct spp_dense_lowp_x dx;
	struct spp_lowp_x sx;
};

/* Time dense and the nf formats interleaved; print one line each. */
static int run_rounds(struct job *j, struct side *f, int nf, const char *label)
{
	struct spp_error err = {0};
	double td[MAX_ROUNDS], ratio[MAX_ROUNDS];
	double dbytes = (double)j->s * (double)j->s * spp_prec_info(j->p)->value_bytes;

	for (int r = 0; r < j->rounds; r++) {
		double t0;

		evict();
		t0 = now_ns();
		if (spp_dense_lowp_run(j->dense, &j->dx, j->yd, 1, &err))
			goto fail;
		td[r] = now_ns() - t0;
		for (int i = 0; i < nf; i++) {
			evict();
			t0 = now_ns();
			if (spp_lowp_spmm(&f[i].w, &j->sx, j->y, SPP_LOWP_NPATHS, 1, NULL, &err))
				goto fail;
			f[i].t[r] = now_ns() - t0;
		}
	}
	{
		double tmp[MAX_ROUNDS], med;

		memcpy(tmp, td, sizeof(double) * (size_t)j->rounds);
		med = pct(tmp, j->rounds, 0.5);
		printf("  %-6s %-9s N %-3lld dense %-28s %9.1f us  %6.1f GB/s\n", spp_prec_info(j->p)->name,
		       label, (long long)j->n, j->dense->impl, med / 1e3, dbytes / med);
	}
	for (int i = 0; i < nf; i++) {
		double tmp[MAX_ROUNDS], med;

		for (int r = 0; r < j->rounds; r++)
			ratio[r] = td[r] / f[i].t[r];
		memcpy(tmp, f[i].t, sizeof(double) * (size_t)j->rounds);
		med = pct(tmp, j->rounds, 0.5);
		printf("  %-6s %-9s N %-3lld %-34s %9.1f us  %6.1f GB/s  speedup %.2fx (%.2f-%.2f)\n",
		       spp_prec_info(j->p)->name, label, (long long)j->n, f[i].name, med / 1e3,
		       f[i].bytes / med, pct(ratio, j->rounds, 0.5), pct(ratio, j->rounds, 0.1),
		       pct(ratio, j->rounds, 0.9));
	}
	return 0;
fail:
	fprintf(stderr, "bench_lowp: %s\n", err.msg);
	return -1;
}

/* One precision, one W, one N: verify, then time. */
static int bench_n(struct job *j, struct side *f, int nf, const char *label, void *dxv, void *sxv)
{
	struct spp_error err = {0};
	enum spp_prec dp = j->p;
	float *yt = malloc(sizeof(float) * (size_t)(j->s * j->n));

	if (!yt)
		return -1;
	j->sx.prec = j->p;
	j->sx.k = j->s;
	j->sx.n = j->n;
	j->sx.v = sxv;
	if (spp_dense_lowp_quantize_x(dp, 1, 1, j->x, j->s, j->n, dxv, &j->dx, &err) ||
	    spp_lowp_x_quantize(&j->sx, j->x, &err) || spp_dense_lowp_run(j->dense, &j->dx, yt, 1, &err))
		goto fail;
	untranspose(yt, j->yd, j->s, j->n);
	for (int i = 0; i < nf; i++) {
		if (spp_lowp_spmm(&f[i].w, &j->sx, j->y, SPP_LOWP_NPATHS, 1, NULL, &err))
			goto fail;
		if (check(j->y, j->yd, j->s, j->n, j->p, f[i].name)) {
			free(yt);
			return -1;
		}
	}
	free(yt);
	return run_rounds(j, f, nf, label);
fail:
	fprintf(stderr, "bench_lowp: %s\n", err.msg);
	free(yt);
	return -1;
}

/* The formats a layer admits: nm2_4 only on 2:4. */
static int open_formats(struct side *f, const float *w, int64_t s, enum spp_prec p, int two_four)
{
	static const enum spp_lowp_format all[] = {SPP_LOWP_CSR, SPP_LOWP_BITMASK, SPP_LOWP_BSR1X4,
						   SPP_LOWP_NM2_4};
	struct spp_matrix mw = {s, s, w};
	int nf = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct spp_error err = {0};
		enum spp_lowp_path path;

		if (all[i] == SPP_LOWP_NM2_4 && !two_four)
			continue;
		memset(&f[nf], 0, sizeof(f[nf]));
		if (spp_lowp_encode(all[i], p, &mw, &f[nf].w, &err)) {
			fprintf(stderr, "bench_lowp: %s: %s\n", spp_lowp_format_name(all[i]), err.msg);
			continue;
		}
		path = spp_lowp_pick(all[i], p, SPP_LOWP_NPATHS);
		f[nf].bytes = (double)f[nf].w.bytes;
		f[nf].name = malloc(64);
		if (f[nf].name)
			snprintf((char *)f[nf].name, 64, "%s (%s)", spp_lowp_format_name(all[i]),
				 spp_lowp_path_name(path));
		nf++;
	}
	return nf;
}

static int bench_prec(enum spp_prec p, int64_t s, int rounds)
{
	static const int64_t ns[] = {1, 64};
	int64_t nmax = 64;
	float *w = malloc(sizeof(float) * (size_t)(s * s)), *x = malloc(sizeof(float) * (size_t)(s * nmax));
	float *y = malloc(sizeof(float) * (size_t)(s * nmax)), *yd = malloc(sizeof(float) * (size_t)(s * nmax));
	void *dxv = malloc((size_t)(s * nmax) * 2 + 64), *sxv = malloc(spp_lowp_x_bytes(p, s, nmax));
	uint64_t seed = 7;
	int rc = 0;

	if (!w || !x || !y || !yd || !dxv || !sxv)
		return -1;
	for (int64_t i = 0; i < s * nmax; i++)
		x[i] = rnd(&seed);
	for (int two_four = 1; two_four >= 0 && rc == 0; two_four--) {
		struct spp_error err = {0};
		struct spp_dense_lowp dense;
		struct side f[4];
		int nf;
		enum spp_prec dp = p;

		make_w(w, s, two_four, 11 + (uint64_t)two_four);
		if (spp_dense_lowp_open(&dense, "onednn", dp, &(struct spp_matrix){s, s, w}, &err)) {
			printf("  %-6s dense refused: %s\n", spp_prec_info(p)->name, err.msg);
			break;
		}
		nf = open_formats(f, w, s, p, two_four);
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]) && rc == 0; i++) {
			struct job j = {.s = s, .n = ns[i], .p = p, .rounds = rounds, .x = x, .y = y, .yd = yd,
					.dense = &dense};

			rc = bench_n(&j, f, nf, two_four ? "2:4" : "90%", dxv, sxv);
		}
		for (int i = 0; i < nf; i++) {
			spp_lowp_release(&f[i].w);
			free((char *)f[i].name);
		}
		spp_dense_lowp_close(&dense);
	}
	free(w), free(x), free(y), free(yd), free(dxv), free(sxv);
	return rc;
}

int main(int argc, char **argv)
{
	static const enum spp_prec precs[] = {SPP_PREC_BF16, SPP_PREC_INT8, SPP_PREC_FP16};
	struct spp_flusher fl = {0};
	struct spp_error err = {0};
	char method[64];
	int rounds, rc = 0;
	int64_t s;

	if (argc > 1 && strcmp(argv[1], "--cold") == 0) {
		if (spp_run_flusher_init(&fl, NULL, method, sizeof(method), &err)) {
			fprintf(stderr, "bench_lowp: %s\n", err.msg);
			return 2;
		}
		cold = &fl;
		argc--, argv++;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 11;
	s = argc > 2 ? atoll(argv[2]) : 4096;
	if (rounds < 1 || rounds > MAX_ROUNDS || s < 16 || s > 16384 || s % 16) {
		fprintf(stderr, "usage: bench_lowp [--cold] [ROUNDS 1-64] [S, a multiple of 16]\n");
		return 2;
	}
	printf("bench_lowp: %lldx%lld, 1 thread, %d rounds, %s; speedup = median over rounds of dense / "
	       "format (p10-p90)\n", (long long)s, (long long)s, rounds,
	       cold ? "cold (caches evicted before every timed call)" : "warm");
	for (size_t i = 0; i < sizeof(precs) / sizeof(precs[0]) && rc == 0; i++)
		rc = bench_prec(precs[i], s, rounds);
	spp_flusher_fini(&fl);
	return rc ? 2 : 0;
}
