/* --epilogue in the CPU runs: the fused and unfused variants of each format (run_epilogue.h). */
#include "profiler/run_epilogue.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/decode.h"

int spp_run_epi_open(struct spp_run_epi_ctx *c, const struct spp_run_opts *o, const float *yd,
		     const float *bound, int64_t m, int64_t n, struct spp_device_cpu *cpu,
		     struct spp_error *err)
{
	double scale = 1e-6 / (o->verify_rtol > 0 ? o->verify_rtol : 1e-4);

	memset(c, 0, sizeof(*c));
	c->epi.kind = o->epilogue;
	if (o->epilogue == SPP_EPILOGUE_NONE)
		return SPP_OK;
	c->bias_source = o->bias ? (o->bias_source ? o->bias_source : "model") : "zeros";
	c->epi.bias = o->bias;
	if (!o->bias && !(c->zeros = calloc((size_t)m + 1, sizeof(float))))
		goto nomem;
	if (!o->bias)
		c->epi.bias = c->zeros;
	c->ref = malloc(sizeof(float) * (size_t)(m * n + 1));
	c->bound = malloc(sizeof(float) * (size_t)(m * n + 1));
	if (!c->ref || !c->bound)
		goto nomem;
	memcpy(c->ref, yd, sizeof(float) * (size_t)(m * n));
	spp_epilogue_apply(&c->epi, c->ref, m, n, o->threads, o->isa);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++)
			c->bound[i * n + j] = bound[i * n + j] + (float)(fabsf(c->epi.bias[i]) * scale);
	c->dev = (struct spp_device){&spp_device_cpu_epilogue, cpu};
	return SPP_OK;
nomem:
	spp_run_epi_close(c);
	return spp_error_set(err, SPP_E_NOMEM, "out of memory for the epilogue's reference");
}

int spp_run_epi_cases(struct spp_run_epi_ctx *c, const struct spp_format_ops *f,
		      const struct spp_device_layer *L, float *y, double rtol,
		      struct spp_device_case cases[2], struct spp_run *r)
{
	struct spp_device_check chk = {c->ref, c->bound, rtol, "epilogue(dense)", y};

	r->epi.kind = c->epi.kind;
	r->epi.bias_source = c->bias_source;
	r->epi.status = SPP_RUN_FAILED;
	for (int u = 0; u < 2; u++) {
		struct spp_device_cpu_variant v = {f, c->epi, u};
		struct spp_run scratch;

		spp_run_init(&scratch, r->backend, r->format);
		if (!spp_device_open_checked(&c->dev, &v, L, &chk, &cases[u], &scratch)) {
			snprintf(r->epi.reason, sizeof(r->epi.reason), "%s: %.140s",
				 u ? "unfused" : "fused", scratch.reason);
			if (u)
				spp_device_close(&cases[0]);
			return 0;
		}
	}
	return 2;
}

void spp_run_epi_time(struct spp_run *r, int unfused, const struct spp_time_stats *t)
{
	if (unfused)
		r->epi.unfused = *t;
	else
		r->epi.fused = *t;
	if (r->epi.fused.repeats && r->epi.unfused.repeats && r->epi.unfused.median > 0) {
		r->epi.status = SPP_RUN_OK;
		r->epi.saving = 1 - r->epi.fused.median / r->epi.unfused.median;
	}
}

void spp_run_epi_close(struct spp_run_epi_ctx *c)
{
	free(c->zeros);
	free(c->ref);
	free(c->bound);
	c->zeros = c->ref = c->bound = NULL;
}

/*
 * The layer's bias decoded to fp32 (*out, malloc'd), or NULL when it has
 * none or its dtype has no decoding. 0, SPP_E_NOMEM or a decoding error.
 */
int spp_run_epi_layer_bias(const struct spp_layer *l, float **out, struct spp_error *err)
{
	const struct spp_tensor *t = l->bias;
	struct spp_layer b = {0};

	*out = NULL;
	if (!t || !spp_decode_supported(t->dtype))
		return SPP_OK;
	b.name = t->name;
	b.weight = t;
	b.view = (struct spp_gemm_view){1, t->shape[0], 0, t->shape[0], t->shape[0], 1, 0};
	if (!(*out = malloc(sizeof(float) * (size_t)(t->shape[0] + 1))))
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for the bias", t->name);
	return spp_layer_decode(&b, *out, err);
}
