/*
 * The table of precisions and the conversions into them: bf16 and fp16
 * by base/dtype.h's portable bit code (round to nearest even), int8
 * symmetric with one scale, and X's buffer in each precision (lowp.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/lowp/lowp_impl.h"

static const struct spp_prec_info precs[] = {
#define SPP_PREC_ROW(id, name, vb, xb, acc, rtol, atol) { name, vb, xb, acc, rtol, atol },
	SPP_PREC_LIST(SPP_PREC_ROW)
#undef SPP_PREC_ROW
};

const struct spp_prec_info *spp_prec_info(enum spp_prec p)
{
	return (unsigned)p < SPP_PREC_COUNT ? &precs[p] : NULL;
}

const char *spp_prec_name(enum spp_prec p)
{
	return (unsigned)p < SPP_PREC_COUNT ? precs[p].name : "?";
}

int spp_prec_parse(const char *name)
{
	for (int i = 0; name && i < SPP_PREC_COUNT; i++)
		if (strcmp(name, precs[i].name) == 0)
			return i;
	return -1;
}

float spp_int8_scale(const float *v, int64_t n)
{
	float mx = 0;

	for (int64_t i = 0; i < n; i++)
		mx = fabsf(v[i]) > mx ? fabsf(v[i]) : mx;
	return mx > 0 ? mx / 127.0f : 1.0f;
}

int8_t spp_int8_quantize(float v, float scale)
{
	float q = rintf(v / scale);

	return (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
}

size_t spp_lowp_x_bytes(enum spp_prec prec, int64_t k, int64_t n)
{
	const struct spp_prec_info *pi = spp_prec_info(prec);

	return (size_t)(spp_lowp_x_rows(k) * n) * (size_t)(pi ? pi->x_bytes : 4) + 64;
}

int spp_lowp_x_quantize(struct spp_lowp_x *out, const float *x, struct spp_error *err)
{
	int64_t k = out->k, n = out->n;
	size_t bytes = spp_lowp_x_bytes(out->prec, k, n);

	out->scale = 1;
	switch (out->prec) {
	case SPP_PREC_BF16:
	case SPP_PREC_FP16: {
		uint16_t *h = out->v;

		memset(h, 0, bytes);
		for (int64_t i = 0; i < k * n; i++)
			h[i] = out->prec == SPP_PREC_BF16 ? spp_f32_to_bf16(x[i]) : spp_f32_to_f16(x[i]);
		return 0;
	}
	case SPP_PREC_INT8: {
		uint8_t *u = out->v;

		memset(u, 128, bytes);
		out->scale = spp_int8_scale(x, k * n);
		for (int64_t kk = 0; kk < k; kk++)
			for (int64_t j = 0; j < n; j++)
				u[lp_x8_at(kk, j, n)] = (uint8_t)(spp_int8_quantize(x[kk * n + j], out->scale) + 128);
		return 0;
	}
	default:
		return spp_error_set(err, SPP_E_UNSUPPORTED, "lowp: no X buffer for %s",
				     spp_prec_info(out->prec) ? spp_prec_info(out->prec)->name : "?");
	}
}

double spp_lowp_x_at(const struct spp_lowp_x *x, int64_t k, int64_t j)
{
	switch (x->prec) {
	case SPP_PREC_BF16: return spp_bf16_to_f32(((const uint16_t *)x->v)[k * x->n + j]);
	case SPP_PREC_FP16: return spp_f16_to_f32(((const uint16_t *)x->v)[k * x->n + j]);
	case SPP_PREC_INT8:
		return (double)x->scale * (((const uint8_t *)x->v)[lp_x8_at(k, j, x->n)] - 128);
	default: return ((const float *)x->v)[k * x->n + j];
	}
}
