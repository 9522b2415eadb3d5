/* Shared by the dense candidates' files (kernels/dense/); not for other modules. */
#ifndef SPP_KERNELS_DENSE_DENSE_IMPL_H
#define SPP_KERNELS_DENSE_DENSE_IMPL_H

#include "kernels/dense/dense.h"

/* dlsym as a function pointer; NULL when absent. */
void (*spp_dense_sym(void *handle, const char *name))(void);

/* The open of a library not built in: SPP_E_UNSUPPORTED, "not built in (why)". */
int spp_dense_not_built(struct spp_error *err, const char *why);

/* The gemm of a library not built in (its open always fails, so it never runs). */
void spp_dense_gemm_none(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
			 float *y, int64_t n, int threads);

/* Whether this is an AMD CPU (cpuid vendor), for the kernel set names. */
int spp_dense_cpu_is_amd(void);

/*
 * Load and check candidate c in a fresh process (probe.c): 0 when it
 * loaded and computed right there, else -1 with c->reason. The child has
 * c->lib->tune_env set to variant; nothing it does reaches this process.
 */
int spp_dense_probe(struct spp_dense_cand *c, const char *variant);

/* oneDNN's name of its dnnl_cpu_isa_t value ("avx512_core_amx"); built with oneDNN only. */
const char *spp_dense_onednn_isa(int isa);

extern const struct spp_dense_lib spp_dense_openblas, spp_dense_onednn, spp_dense_blis, spp_dense_own;

#endif
