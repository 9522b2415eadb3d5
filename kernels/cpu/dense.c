/*
 * What the linked OpenBLAS says of itself (the report's machine.dense_blas)
 * and the reference product every kernel is checked against. The dense
 * baselines themselves are kernels/dense/.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

void spp_blas_info(struct spp_blas_info *out)
{
	const char *config = openblas_get_config();
	const char *env = getenv("OPENBLAS_CORETYPE");
	size_t len;

	memset(out, 0, sizeof(*out));
	copy_str(out->name, sizeof(out->name), "OpenBLAS");
	copy_str(out->config, sizeof(out->config), config);
	/* the config string starts "OpenBLAS 0.3.21 ..." */
	if (config && strncmp(config, "OpenBLAS ", 9) == 0) {
		len = strcspn(config + 9, " ");
		if (len >= sizeof(out->version))
			len = sizeof(out->version) - 1;
		memcpy(out->version, config + 9, len);
	}
	copy_str(out->core, sizeof(out->core), openblas_get_corename());
	out->max_threads = openblas_get_num_threads();
	copy_str(out->coretype_env, sizeof(out->coretype_env), env);
	out->coretype_set = env != NULL;
}

void spp_reference_gemm(const struct spp_matrix *w, const float *x, float *y,
			int64_t n)
{
	/*
	 * Double accumulation so that the reference does not share the
	 * kernels' fp32 rounding; k outside the columns of a chunk of Y so that
	 * X is read along its rows.
	 */
	enum { CHUNK = 256 };
	double acc[CHUNK];

	for (int64_t i = 0; i < w->m; i++)
		for (int64_t j0 = 0; j0 < n; j0 += CHUNK) {
			int64_t cw = n - j0 < CHUNK ? n - j0 : CHUNK;

			for (int64_t j = 0; j < cw; j++)
				acc[j] = 0;
			for (int64_t k = 0; k < w->k; k++) {
				double v = w->v[i * w->k + k];
				const float *xr = x + k * n + j0;

				for (int64_t j = 0; j < cw; j++)
					acc[j] += v * (double)xr[j];
			}
			for (int64_t j = 0; j < cw; j++)
				y[i * n + j0 + j] = (float)acc[j];
		}
}
