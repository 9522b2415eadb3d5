/*
 * BLIS as a dense candidate, loaded at run time with RTLD_LOCAL: BLIS
 * exports the same BLAS and CBLAS names as OpenBLAS (sgemm_, cblas_sgemm),
 * so linking both would let one library's symbols stand in for the
 * other's. spprof calls only BLIS's own typed API (bli_sgemm, bli_sgemv).
 * BLIS picks its configuration when it initialises (BLIS_ARCH_TYPE, a
 * numeric arch_t id in 0.9, overrides it); a copy with a better one is
 * loaded in a namespace of its own, like OpenBLAS's.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels/dense/dense_impl.h"

#if HAVE_BLIS
#include <blis.h>

#define BLIS_SONAME "libblis.so.4"

typedef __typeof__(bli_sgemm) sgemm_fn;
typedef __typeof__(bli_sgemv) sgemv_fn;
typedef __typeof__(bli_thread_set_num_threads) threads_fn;
typedef __typeof__(bli_arch_query_id) arch_fn;
typedef __typeof__(bli_arch_string) arch_name_fn;
typedef __typeof__(bli_info_get_version_str) version_fn;
typedef __typeof__(bli_init) init_fn;

enum { F_SGEMM, F_SGEMV, F_THREADS, F_ARCH, F_ARCH_NAME, F_VERSION, F_INIT, F_COUNT };

/* ISA class of a configuration: 3 AVX-512, 2 AVX2, 1 AVX, 0 older or generic. */
static int arch_rank(arch_t a)
{
	switch (a) {
	case BLIS_ARCH_SKX: case BLIS_ARCH_KNL: return 3;
	case BLIS_ARCH_HASWELL: case BLIS_ARCH_ZEN3: case BLIS_ARCH_ZEN2: case BLIS_ARCH_ZEN:
	case BLIS_ARCH_EXCAVATOR: return 2;
	case BLIS_ARCH_SANDYBRIDGE: case BLIS_ARCH_STEAMROLLER: case BLIS_ARCH_PILEDRIVER:
	case BLIS_ARCH_BULLDOZER: return 1;
	default: return 0;
	}
}

static int open_lib(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	static const char *const names[] = {"bli_sgemm", "bli_sgemv", "bli_thread_set_num_threads",
					    "bli_arch_query_id", "bli_arch_string",
					    "bli_info_get_version_str", "bli_init"};
	arch_t a;

	c->handle = variant ? dlmopen(LM_ID_NEWLM, BLIS_SONAME, RTLD_NOW | RTLD_LOCAL)
			    : dlopen(BLIS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!c->handle)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cannot load %s: %s", BLIS_SONAME,
				     dlerror());
	for (int i = 0; i < F_COUNT; i++)
		if (!(c->fn[i] = spp_dense_sym(c->handle, names[i])))
			return spp_error_set(err, SPP_E_UNSUPPORTED, "%s has no %s", BLIS_SONAME, names[i]);
	/*
	 * Initialise BLIS first: bli_arch_query_id alone reads BLIS_ARCH_TYPE
	 * before BLIS has registered its configurations, and 0.9 then aborts
	 * on every value ("Accessed uninitialized context in gks"). bli_init
	 * registers them, then reads the variable, now, while it is set.
	 */
	((init_fn *)c->fn[F_INIT])();
	a = ((arch_fn *)c->fn[F_ARCH])();
	snprintf(c->kernel, sizeof(c->kernel), "%s", ((arch_name_fn *)c->fn[F_ARCH_NAME])(a));
	snprintf(c->version, sizeof(c->version), "%s", ((version_fn *)c->fn[F_VERSION])());
	snprintf(c->config, sizeof(c->config), "BLIS %s, configuration %s", c->version, c->kernel);
	c->pool = variant ? SPP_POOL_OWN_OMP : SPP_POOL_OMP;
	if (variant && atoi(variant) != (int)a)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "BLIS did not take BLIS_ARCH_TYPE=%s (it runs %s)", variant, c->kernel);
	return SPP_OK;
}

static int better(const struct spp_dense_cand *c, enum spp_isa isa, int nth, char *buf, size_t n,
		  char *kname, size_t kn)
{
	int want = isa >= SPP_ISA_AVX512 ? 3 : isa >= SPP_ISA_AVX2 ? 2 : 0;
	arch_t a = ((arch_fn *)c->fn[F_ARCH])();
	arch_t avx2 = spp_dense_cpu_is_amd() ? BLIS_ARCH_ZEN3 : BLIS_ARCH_HASWELL;
	/* best first; the AVX2 configuration where a build has no skx */
	arch_t chain[2] = {want == 3 ? BLIS_ARCH_SKX : avx2, want == 3 ? avx2 : BLIS_NUM_ARCHS};

	if (want == 0 || arch_rank(a) >= want || nth < 0 || nth > 1 || chain[nth] == BLIS_NUM_ARCHS ||
	    arch_rank(chain[nth]) <= arch_rank(a))
		return 0;
	snprintf(buf, n, "%d", (int)chain[nth]);
	snprintf(kname, kn, "%s", ((arch_name_fn *)c->fn[F_ARCH_NAME])(chain[nth]));
	return 1;
}

#define BLIS_BETTER better

static void gemm(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		 float *y, int64_t n, int threads)
{
	float one = 1.0f, zero = 0.0f;

	((threads_fn *)c->fn[F_THREADS])(threads > 0 ? threads : 1);
	/* BLIS takes non-const pointers but does not write A or B */
	if (n == 1)
		((sgemv_fn *)c->fn[F_SGEMV])(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, w->m, w->k, &one,
					     (float *)w->v, w->k, 1, (float *)x, 1, &zero, y, 1);
	else
		((sgemm_fn *)c->fn[F_SGEMM])(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, w->m, n, w->k, &one,
					     (float *)w->v, w->k, 1, (float *)x, n, 1, &zero, y, n, 1);
}

static void gemv_cols(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		      float *y, int64_t n, int threads)
{
	float one = 1.0f, zero = 0.0f;

	((threads_fn *)c->fn[F_THREADS])(threads > 0 ? threads : 1);
	for (int64_t j = 0; j < n; j++)
		((sgemv_fn *)c->fn[F_SGEMV])(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, w->m, w->k, &one,
					     (float *)w->v, w->k, 1, (float *)x + j, n, &zero, y + j, n);
}
#define LIB_GEMM gemm
#define LIB_GEMV_COLS gemv_cols
#else
static int open_lib(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	(void)c, (void)variant;
	return spp_dense_not_built(err, "meson found no blis.h: Debian's libblis-dev");
}

#define BLIS_BETTER NULL

#define LIB_GEMM spp_dense_gemm_none
#define LIB_GEMV_COLS NULL
#endif


const struct spp_dense_lib spp_dense_blis = {
	.key = "blis",
	.name = "BLIS",
	.tune_env = "BLIS_ARCH_TYPE",
	.open = open_lib,
	.better = BLIS_BETTER,
	.gemm = LIB_GEMM,
	.gemv_cols = LIB_GEMV_COLS,
	.close = NULL, /* the copies stay loaded: their threads may be parked in them */
};
