/*
 * spprof's own dense kernel, the candidate "spprof": a GEMV that streams
 * W with software prefetch (kernels/cpu/gemv_body.h), so that no sparse
 * format can beat "dense" on dense work where every library's GEMV is
 * slower than such a stream (issue 45: cold N = 1 on an EPYC, where the
 * libraries streamed W at 17.6 GB/s and spprof's bsr16 at 0 % sparsity,
 * the same bytes, was 5 % faster). N > 1 runs as N GEMVs, each column of
 * X copied contiguous first, and is timed only up to
 * SPP_DENSE_COLS_MAX_N (the libraries' GEMM read W once from there).
 * Built in: always loads; verified like every candidate.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels/cpu/cpu.h"
#include "kernels/dense/dense_impl.h"

typedef void (*rows_fn)(const float *w, int64_t k, int64_t r0, int64_t r1, const float *x, float *y);

/* The portable rows. */
static void rows_c(const float *w, int64_t k, int64_t r0, int64_t r1, const float *x, float *y)
{
	for (int64_t i = r0; i < r1; i++) {
		float s = 0;

		for (int64_t c = 0; c < k; c++)
			s += w[i * k + c] * x[c];
		y[i] = s;
	}
}

/*
 * Load: the rows of the detected ISA become the candidate's entry point
 * fn[0], chosen once (spp_isa_detect reads cpuid, a trap to the
 * hypervisor under a VM: per call it took the 256 x 256 GEMV from 3 to
 * 18 us on the 2-vCPU EPYC, load 4.5).
 */
static int open_own(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	enum spp_isa isa = spp_isa_detect();
	rows_fn f = rows_c;

	if (variant)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "spprof's GEMV has no variant to load (it runs the detected ISA)");
#if CPU_X86
	if (isa == SPP_ISA_AVX512)
		f = cpu_gemv_rows_avx512;
	else if (isa == SPP_ISA_AVX2)
		f = cpu_gemv_rows_avx2;
#endif
	c->fn[0] = (void (*)(void))f;
	snprintf(c->version, sizeof(c->version), "%s", SPP_VERSION);
	snprintf(c->kernel, sizeof(c->kernel), "%s", spp_isa_name(f == rows_c ? SPP_ISA_PORTABLE : isa));
	snprintf(c->config, sizeof(c->config),
		 "spprof's GEMV (kernels/cpu/gemv_body.h): row by row, W one stream prefetched ahead");
	c->pool = SPP_POOL_OMP;
	return SPP_OK;
}

/* y = W x on `threads` threads, by blocks of 64 rows. */
static void gemv(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x, float *y,
		 int threads)
{
	rows_fn f = (rows_fn)c->fn[0];
	int64_t blocks = (w->m + 63) / 64;

#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static)
	for (int64_t b = 0; b < blocks; b++)
		f(w->v, w->k, b * 64, b * 64 + 64 < w->m ? b * 64 + 64 : w->m, x, y);
}

static void gemm(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		 float *y, int64_t n, int threads)
{
	float *xc, *yc;

	if (n == 1) {
		gemv(c, w, x, y, threads);
		return;
	}
	xc = malloc((size_t)w->k * sizeof(*xc));
	yc = malloc((size_t)w->m * sizeof(*yc));
	for (int64_t j = 0; j < n; j++) {
		if (!xc || !yc) {
			/* out of memory: the plain loop, strided */
			for (int64_t i = 0; i < w->m; i++) {
				float s = 0;

				for (int64_t r = 0; r < w->k; r++)
					s += w->v[i * w->k + r] * x[r * n + j];
				y[i * n + j] = s;
			}
			continue;
		}
		for (int64_t r = 0; r < w->k; r++)
			xc[r] = x[r * n + j];
		gemv(c, w, xc, yc, threads);
		for (int64_t i = 0; i < w->m; i++)
			y[i * n + j] = yc[i];
	}
	free(xc);
	free(yc);
}

const struct spp_dense_lib spp_dense_own = {
	.key = "spprof",
	.name = "spprof",
	.tune_env = NULL,
	.open = open_own,
	.better = NULL,
	.gemm = gemm,
	.max_n = SPP_DENSE_COLS_MAX_N,
	.close = NULL,
};
