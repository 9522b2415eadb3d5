#include "profiler/decode.h"

#include <math.h>
#include <string.h>

#include "profiler/pages.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SPP_HOST_LE 1
#else
#define SPP_HOST_LE 0
#endif

int spp_decode_supported(enum spp_dtype t)
{
	switch (t) {
	case SPP_DTYPE_BOOL:
	case SPP_DTYPE_U8:
	case SPP_DTYPE_I8:
	case SPP_DTYPE_U16:
	case SPP_DTYPE_I16:
	case SPP_DTYPE_U32:
	case SPP_DTYPE_I32:
	case SPP_DTYPE_U64:
	case SPP_DTYPE_I64:
	case SPP_DTYPE_F16:
	case SPP_DTYPE_BF16:
	case SPP_DTYPE_F32:
	case SPP_DTYPE_F64:
	case SPP_DTYPE_F8_E4M3:
	case SPP_DTYPE_F8_E5M2:
	case SPP_DTYPE_Q8_0:
	case SPP_DTYPE_Q4_0:
		return 1;
	default:
		return 0;
	}
}

float spp_f8_e4m3_to_f32(uint8_t v)
{
	int sign = v >> 7, exp = (v >> 3) & 0xf, man = v & 7;
	float mag;

	if (exp == 0xf && man == 7)
		return NAN;
	if (exp == 0)
		mag = ldexpf((float)man, -9);          /* subnormal: man/8 * 2^-6 */
	else
		mag = ldexpf((float)(8 + man), exp - 10); /* (1 + man/8) * 2^(exp-7) */
	return sign ? -mag : mag;
}

float spp_f8_e5m2_to_f32(uint8_t v)
{
	int sign = v >> 7, exp = (v >> 2) & 0x1f, man = v & 3;
	float mag;

	if (exp == 0x1f)
		mag = man ? NAN : INFINITY;
	else if (exp == 0)
		mag = ldexpf((float)man, -16);         /* man/4 * 2^-14 */
	else
		mag = ldexpf((float)(4 + man), exp - 17); /* (1 + man/4) * 2^(exp-15) */
	return sign ? -mag : mag;
}

/* Little-endian loads: safetensors stores every type little-endian. */
static uint64_t load_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static float decode_one(enum spp_dtype t, const unsigned char *p)
{
	uint64_t u;
	union {
		uint32_t u;
		float f;
	} f32;
	union {
		uint64_t u;
		double d;
	} f64;

	switch (t) {
	case SPP_DTYPE_BOOL:
	case SPP_DTYPE_U8:
		return (float)p[0];
	case SPP_DTYPE_I8:
		return (float)(int8_t)p[0];
	case SPP_DTYPE_U16:
		return (float)(uint16_t)load_le(p, 2);
	case SPP_DTYPE_I16:
		return (float)(int16_t)(uint16_t)load_le(p, 2);
	case SPP_DTYPE_U32:
		return (float)(uint32_t)load_le(p, 4);
	case SPP_DTYPE_I32:
		return (float)(int32_t)(uint32_t)load_le(p, 4);
	case SPP_DTYPE_U64:
		return (float)load_le(p, 8);
	case SPP_DTYPE_I64:
		u = load_le(p, 8);
		return (float)(int64_t)u;
	case SPP_DTYPE_F16:
		return spp_f16_to_f32((uint16_t)load_le(p, 2));
	case SPP_DTYPE_BF16:
		return spp_bf16_to_f32((uint16_t)load_le(p, 2));
	case SPP_DTYPE_F32:
		f32.u = (uint32_t)load_le(p, 4);
		return f32.f;
	case SPP_DTYPE_F64:
		f64.u = load_le(p, 8);
		return (float)f64.d;
	case SPP_DTYPE_F8_E4M3:
		return spp_f8_e4m3_to_f32(p[0]);
	case SPP_DTYPE_F8_E5M2:
		return spp_f8_e5m2_to_f32(p[0]);
	default:
		return 0;
	}
}

/*
 * Element i of a ggml Q8_0 / Q4_0 tensor: d * q with d the block's f16
 * scale; Q8_0 codes are int8, Q4_0 codes nibbles q - 8 (byte j of a block
 * holds value j low, value j + 16 high).
 */
static float decode_quant(enum spp_dtype t, int block_bytes,
			  const unsigned char *data, uint64_t i)
{
	const unsigned char *b = data + (i / 32) * (uint64_t)block_bytes;
	unsigned j = (unsigned)(i % 32);
	float d = spp_f16_to_f32((uint16_t)load_le(b, 2));

	if (t == SPP_DTYPE_Q8_0)
		return d * (float)(int8_t)b[2 + j];
	return d * (float)((int)(j < 16 ? b[2 + j] & 0xfu : b[2 + j - 16] >> 4) - 8);
}

/* A matrix of non-zeros in its own view (the only one its loaders give). */
static int decode_coo(const struct spp_layer *l, float *out, struct spp_error *err)
{
	const struct spp_coo *c = l->weight->coo;
	const struct spp_gemm_view *v = &l->view;

	if (!spp_layer_view_is_stored(l))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "tensor '%s': a matrix of non-zeros has no GEMM view but its own",
				     l->weight->name);
	memset(out, 0, (size_t)(v->m * v->k) * sizeof(*out));
	for (uint64_t e = 0; e < c->nnz; e++)
		out[(int64_t)c->row[e] * v->k + c->col[e]] = c->val[e];
	return SPP_OK;
}

int spp_layer_decode(const struct spp_layer *l, float *out, struct spp_error *err)
{
	const struct spp_tensor *t = l->weight;
	const struct spp_gemm_view *v = &l->view;
	const struct spp_dtype_info *info = spp_dtype_info(t->dtype);
	int64_t m = v->m, k = v->k;

	if (!info || !spp_decode_supported(t->dtype))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "tensor '%s': %s weights have no fp32 decoding here",
				     t->name, spp_dtype_name(t->dtype));
	if (t->coo)
		return decode_coo(l, out, err);
	if (m > 0 && k > 0) {
		uint64_t need = 0;

		uint64_t last = spp_view_index(v, m - 1, k - 1), first = spp_view_index(v, 0, 0);
		uint64_t hi = last > first ? last : first;

		/* the view is affine in (i, j), so its extreme indices sit at corners */
		hi = hi > spp_view_index(v, m - 1, 0) ? hi : spp_view_index(v, m - 1, 0);
		hi = hi > spp_view_index(v, 0, k - 1) ? hi : spp_view_index(v, 0, k - 1);
		/* a block type reads the whole block of its last element */
		if (info->bits == 0)
			need = (hi / 32 + 1) * (uint64_t)info->block_bytes;
		else
			need = (hi + 1) * (uint64_t)(info->bits / 8);
		if (!t->data || need > t->nbytes)
			return spp_error_set(err, SPP_E_FORMAT,
					     "tensor '%s': the %lldx%lld view reads past its %llu bytes",
					     t->name, (long long)m, (long long)k,
					     (unsigned long long)t->nbytes);
	}
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < m; i++)
		spp_layer_decode_span(l, i, 0, k, out + i * k);
	/* its file pages leave the process (the page cache keeps them): a run
	 * over a model larger than memory holds one layer at a time */
	spp_pages_release(t->data, t->nbytes);
	return SPP_OK;
}

void spp_layer_decode_span(const struct spp_layer *l, int64_t i, int64_t j0, int64_t n, float *out)
{
	const struct spp_tensor *t = l->weight;
	const struct spp_gemm_view *v = &l->view;
	const struct spp_dtype_info *info = spp_dtype_info(t->dtype);
	int bytes = info->bits / 8;

	if (SPP_HOST_LE && t->dtype == SPP_DTYPE_F32 && v->inner == v->k && v->inner_stride == 1) {
		memcpy(out, t->data + spp_view_index(v, i, j0) * 4, (size_t)n * 4);
		return;
	}
	if (info->bits == 0) {
		for (int64_t j = 0; j < n; j++)
			out[j] = decode_quant(t->dtype, info->block_bytes, t->data,
					      spp_view_index(v, i, j0 + j));
		return;
	}
	for (int64_t j = 0; j < n; j++)
		out[j] = decode_one(t->dtype, t->data + spp_view_index(v, i, j0 + j) * (uint64_t)bytes);
}
