/*
 * OpenBLAS as a dense candidate: the copy the process links (its core from
 * its own CPU detection, or the user's OPENBLAS_CORETYPE), and a copy in a
 * link namespace of its own loaded with OPENBLAS_CORETYPE set, for when the
 * detection fell back to a lesser core (Debian's 0.3.21 runs its SSE3
 * Prescott kernels on CPUs newer than it knows).
 */
#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernels/dense/dense_impl.h"

typedef __typeof__(cblas_sgemm) sgemm_fn;
typedef __typeof__(cblas_sgemv) sgemv_fn;
typedef void set_threads_fn(int);
typedef char *text_fn(void);

enum { F_SGEMM, F_SGEMV, F_THREADS, F_CORE, F_CONFIG };

/* ISA class of a core name: 3 AVX-512, 2 AVX2, 1 AVX, 0 older or unknown. */
static int core_rank(const char *core)
{
	static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
	static const char *const avx2[] = {"Haswell", "Zen", "Excavator"};
	static const char *const avx[] = {"Sandybridge", "Bulldozer", "Piledriver", "Steamroller"};

	for (size_t i = 0; i < sizeof(avx512) / sizeof(*avx512); i++)
		if (strcasecmp(core, avx512[i]) == 0)
			return 3;
	for (size_t i = 0; i < sizeof(avx2) / sizeof(*avx2); i++)
		if (strcasecmp(core, avx2[i]) == 0)
			return 2;
	for (size_t i = 0; i < sizeof(avx) / sizeof(*avx); i++)
		if (strcasecmp(core, avx[i]) == 0)
			return 1;
	return 0;
}

static void fill(struct spp_dense_cand *c)
{
	const char *config = ((text_fn *)c->fn[F_CONFIG])();
	const char *core = ((text_fn *)c->fn[F_CORE])();

	snprintf(c->config, sizeof(c->config), "%s", config ? config : "");
	snprintf(c->kernel, sizeof(c->kernel), "%s", core ? core : "");
	/* the config string starts "OpenBLAS 0.3.21 ..." */
	if (config && strncmp(config, "OpenBLAS ", 9) == 0)
		snprintf(c->version, sizeof(c->version), "%.*s", (int)strcspn(config + 9, " "),
			 config + 9);
}

static int open_lib(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	static const char *const names[] = {"cblas_sgemm", "cblas_sgemv", "openblas_set_num_threads",
					    "openblas_get_corename", "openblas_get_config"};
	Dl_info info;

	if (!variant) {
		c->fn[F_SGEMM] = (void (*)(void))cblas_sgemm;
		c->fn[F_SGEMV] = (void (*)(void))cblas_sgemv;
		c->fn[F_THREADS] = (void (*)(void))openblas_set_num_threads;
		c->fn[F_CORE] = (void (*)(void))openblas_get_corename;
		c->fn[F_CONFIG] = (void (*)(void))openblas_get_config;
		c->pool = SPP_POOL_OPENBLAS;
		fill(c);
		return SPP_OK;
	}
	/* the same library file the process links, in a namespace of its own */
	if (!dladdr((void *)openblas_get_config, &info) || !info.dli_fname)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cannot find the OpenBLAS library file");
	c->handle = dlmopen(LM_ID_NEWLM, info.dli_fname, RTLD_NOW | RTLD_LOCAL);
	if (!c->handle)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cannot load a second OpenBLAS: %s", dlerror());
	for (int i = 0; i < 5; i++)
		if (!(c->fn[i] = spp_dense_sym(c->handle, names[i])))
			return spp_error_set(err, SPP_E_UNSUPPORTED, "'%s' has no %s", info.dli_fname,
					     names[i]);
	c->pool = SPP_POOL_OWN_OPENBLAS;
	fill(c);
	if (strcasecmp(c->kernel, variant) != 0)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "this OpenBLAS build has no core '%s' (it loaded %s)", variant, c->kernel);
	return SPP_OK;
}

static int better(const struct spp_dense_cand *c, enum spp_isa isa, int nth, char *buf, size_t n,
		  char *kname, size_t kn)
{
	int want = isa >= SPP_ISA_AVX512 ? 3 : isa >= SPP_ISA_AVX2 ? 2 : 0;
	const char *avx2 = spp_dense_cpu_is_amd() ? "Zen" : "Haswell";
	/* best first; the AVX2 core where a build has no AVX-512 kernels */
	const char *chain[2] = {want == 3 ? "SkylakeX" : avx2, want == 3 ? avx2 : NULL};

	if (want == 0 || core_rank(c->kernel) >= want || nth < 0 || nth > 1 || !chain[nth] ||
	    core_rank(chain[nth]) <= core_rank(c->kernel))
		return 0;
	snprintf(buf, n, "%s", chain[nth]);
	snprintf(kname, kn, "%s", chain[nth]);
	return 1;
}

static void gemm(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		 float *y, int64_t n, int threads)
{
	((set_threads_fn *)c->fn[F_THREADS])(threads > 0 ? threads : 1);
	if (n == 1)
		((sgemv_fn *)c->fn[F_SGEMV])(CblasRowMajor, CblasNoTrans, (blasint)w->m, (blasint)w->k,
					     1.0f, w->v, (blasint)w->k, x, 1, 0.0f, y, 1);
	else
		((sgemm_fn *)c->fn[F_SGEMM])(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)w->m,
					     (blasint)n, (blasint)w->k, 1.0f, w->v, (blasint)w->k, x,
					     (blasint)n, 0.0f, y, (blasint)n);
}

static void gemv_cols(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		      float *y, int64_t n, int threads)
{
	((set_threads_fn *)c->fn[F_THREADS])(threads > 0 ? threads : 1);
	for (int64_t j = 0; j < n; j++)
		((sgemv_fn *)c->fn[F_SGEMV])(CblasRowMajor, CblasNoTrans, (blasint)w->m, (blasint)w->k,
					     1.0f, w->v, (blasint)w->k, x + j, (blasint)n, 0.0f, y + j,
					     (blasint)n);
}

const struct spp_dense_lib spp_dense_openblas = {
	.key = "openblas",
	.name = "OpenBLAS",
	.tune_env = "OPENBLAS_CORETYPE",
	.open = open_lib,
	.better = better,
	.gemm = gemm,
	.gemv_cols = gemv_cols,
	.close = NULL, /* the copies stay loaded: their threads may be parked in them */
};
