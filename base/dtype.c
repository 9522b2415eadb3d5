#include "base/dtype.h"

#include <math.h>
#include <string.h>

static const struct spp_dtype_info dtype_rows[SPP_DTYPE_COUNT] = {
#define SPP_DTYPE_ROW(id, name, bits, is_float, has_zero, mask, st, be, bb)    \
	[SPP_DTYPE_##id] = {name, bits, is_float, has_zero, mask, st,          \
			    (be) ? (be) : 1, (be) ? (bb) : (bits) / 8},
	SPP_DTYPE_LIST(SPP_DTYPE_ROW)
#undef SPP_DTYPE_ROW
};

const struct spp_dtype_info *spp_dtype_info(enum spp_dtype t)
{
	if ((int)t < 0 || t >= SPP_DTYPE_COUNT)
		return NULL;
	return &dtype_rows[t];
}

const char *spp_dtype_name(enum spp_dtype t)
{
	const struct spp_dtype_info *d = spp_dtype_info(t);
	return d ? d->name : "?";
}

int spp_dtype_from_name(const char *name, enum spp_dtype *out)
{
	if (!name)
		return -1;
	for (int i = 0; i < SPP_DTYPE_COUNT; i++) {
		if (strcmp(dtype_rows[i].name, name) == 0) {
			*out = (enum spp_dtype)i;
			return 0;
		}
	}
	return -1;
}

int spp_dtype_nbytes(enum spp_dtype t, uint64_t numel, uint64_t *out)
{
	const struct spp_dtype_info *d = spp_dtype_info(t);
	uint64_t bits;

	if (!d)
		return -1;
	if (d->bits == 0) {
		uint64_t blocks = numel / (uint64_t)d->block_elems;

		if (numel % (uint64_t)d->block_elems ||
		    (blocks && (uint64_t)d->block_bytes > UINT64_MAX / blocks))
			return -1;
		*out = blocks * (uint64_t)d->block_bytes;
		return 0;
	}
	if (numel && (uint64_t)d->bits > UINT64_MAX / numel)
		return -1;
	bits = numel * (uint64_t)d->bits;
	if (bits % 8)
		return -1;
	*out = bits / 8;
	return 0;
}

double spp_dtype_value_bytes(enum spp_dtype t)
{
	const struct spp_dtype_info *d = spp_dtype_info(t);
	if (!d)
		return 0.0;
	if (d->bits == 0)
		return (double)d->block_bytes / d->block_elems;
	return d->bits / 8.0;
}

float spp_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;
	uint32_t bits;
	float f;

	if (exp == 0) {
		/* zero or subnormal: exact in float */
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		bits = sign | 0x7f800000u | (man << 13);
	else
		bits = sign | ((exp + 112u) << 23) | (man << 13);
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t spp_f32_to_f16(float f)
{
	uint32_t x;
	uint32_t sign, exp, man;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	exp = (x >> 23) & 0xffu;
	man = x & 0x7fffffu;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
	if (exp > 142) /* overflow to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (exp < 113) {
		/* subnormal or zero in half precision */
		if (exp < 102)
			return (uint16_t)sign;
		man |= 0x800000u;
		uint32_t shift = 126 - exp;
		uint32_t half = man >> shift;
		uint32_t rem = man & ((1u << shift) - 1);
		uint32_t mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t h = ((exp - 112) << 10) | (man >> 13);
	uint32_t rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent, which is still correct */
	return (uint16_t)(sign | h);
}

float spp_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t spp_f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}
