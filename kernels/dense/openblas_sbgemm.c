/*
 * OpenBLAS's cblas_sbgemm as a bf16 dense baseline (lowp_dense.h), where
 * the loaded OpenBLAS has it: builds without BUILD_BFLOAT16 (Debian's
 * 0.3.21 among them) lack the symbol, and then it is refused with that
 * reason. Y = W * X row-major as it is (nk: Y^T = X^T W^T), no copies.
 */
#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "kernels/dense/dense_impl.h"
#include "kernels/dense/lowp_dense.h"

typedef void sbgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint,
		       blasint, float, const uint16_t *, blasint, const uint16_t *, blasint, float, float *,
		       blasint);
typedef void threads_fn(int);

static int open_sb(struct spp_dense_lowp *c, struct spp_error *err)
{
	Dl_info info;
	const char *core = openblas_get_corename(), *config = openblas_get_config();
	void (*f)(void);

	if (config && strncmp(config, "OpenBLAS ", 9) == 0)
		snprintf(c->version, sizeof(c->version), "%.*s", (int)strcspn(config + 9, " "), config + 9);
	snprintf(c->isa, sizeof(c->isa), "%s", core ? core : "?");
	if (c->prec != SPP_PREC_BF16)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "OpenBLAS has no %s GEMM (sbgemm is bf16)",
				     spp_prec_name(c->prec));
	if (!dladdr((void *)openblas_get_config, &info) || !info.dli_fname)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "cannot find the OpenBLAS library file");
	/* the copy the process links: RTLD_NOLOAD finds it without loading another */
	c->priv = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	f = c->priv ? spp_dense_sym(c->priv, "cblas_sbgemm") : NULL;
	if (!f) {
		if (c->priv)
			dlclose(c->priv);
		c->priv = NULL;
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "this OpenBLAS (%s) has no cblas_sbgemm (built without BUILD_BFLOAT16)",
				     info.dli_fname);
	}
	snprintf(c->impl, sizeof(c->impl), "sbgemm:%s", c->isa);
	return SPP_OK;
}

static int prepare(struct spp_dense_lowp *c, struct spp_error *err)
{
	(void)c, (void)err;
	return SPP_OK; /* W is the bf16 row-major matrix open made */
}

static int run(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y, int threads,
	       struct spp_error *err)
{
	sbgemm_fn *sb = (sbgemm_fn *)spp_dense_sym(c->priv, "cblas_sbgemm");

	if (!sb)
		return spp_error_set(err, SPP_E_RUNTIME, "cblas_sbgemm is gone");
	if (c->w.m > INT32_MAX || c->w.k > INT32_MAX || x->n > INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "OpenBLAS takes 32-bit sizes");
	openblas_set_num_threads(threads);
	if (x->nk) /* Y^T = X^T W^T */
		sb(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)x->n, (blasint)c->w.m, (blasint)c->w.k, 1.0f,
		   x->v, (blasint)c->w.k, c->w.h, (blasint)c->w.k, 0.0f, y, (blasint)c->w.m);
	else
		sb(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)c->w.m, (blasint)x->n, (blasint)c->w.k,
		   1.0f, c->w.h, (blasint)c->w.k, x->v, (blasint)x->n, 0.0f, y, (blasint)x->n);
	return SPP_OK;
}

static void close_sb(struct spp_dense_lowp *c)
{
	if (c->priv)
		dlclose(c->priv);
	c->priv = NULL;
}

const struct spp_dense_lowp_lib spp_dense_lowp_openblas = {
	.key = "openblas",
	.name = "OpenBLAS sbgemm",
	.open = open_sb,
	.prepare = prepare,
	.run = run,
	.close = close_sb,
};
