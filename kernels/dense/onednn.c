/*
 * oneDNN as a dense candidate: dnnl_sgemm (row-major) on the caller's
 * OpenMP runtime. oneDNN picks its kernels from the CPU's feature flags
 * (ONEDNN_MAX_CPU_ISA may lower them), so it has no variant to load.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels/dense/dense_impl.h"

#if HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

const char *spp_dense_onednn_isa(int isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
	case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return "generic";
	}
}

static int open_lib(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	const dnnl_version_t *v = dnnl_version();

	if (variant)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "oneDNN has no kernel variant to load (it detects by CPU flags)");
	snprintf(c->version, sizeof(c->version), "%d.%d.%d", v->major, v->minor, v->patch);
	snprintf(c->kernel, sizeof(c->kernel), "%s", spp_dense_onednn_isa((int)dnnl_get_effective_cpu_isa()));
	snprintf(c->config, sizeof(c->config), "oneDNN %s (%s), cpu runtime %s", c->version,
		 v->hash ? v->hash : "", v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
	c->pool = SPP_POOL_OMP;
	return SPP_OK;
}

static void gemm(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		 float *y, int64_t n, int threads)
{
	int before = omp_get_max_threads();

	(void)c;
	/* oneDNN's OpenMP regions take the caller's thread count */
	omp_set_num_threads(threads > 0 ? threads : 1);
	dnnl_sgemm('N', 'N', w->m, n, w->k, 1.0f, w->v, w->k, x, n, 0.0f, y, n);
	omp_set_num_threads(before);
}
#define LIB_GEMM gemm
#else
static int open_lib(struct spp_dense_cand *c, const char *variant, struct spp_error *err)
{
	(void)c, (void)variant;
	return spp_dense_not_built(err, "meson found no oneDNN: Debian's libdnnl-dev");
}

#define LIB_GEMM spp_dense_gemm_none
#endif


const struct spp_dense_lib spp_dense_onednn = {
	.key = "onednn",
	.name = "oneDNN",
	.tune_env = NULL,
	.open = open_lib,
	.better = NULL,
	.gemm = LIB_GEMM,
	.close = NULL, /* the copies stay loaded: their threads may be parked in them */
};
