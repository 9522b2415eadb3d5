/*
 * Cast's element conversions for constant folding (onnx_fold_ops.c), as
 * numpy's astype does them: between the plain numeric types (F32, F64, F16,
 * BF16, signed and unsigned integers of 8 to 64 bits, BOOL). An integer to
 * an integer keeps its low bits; a float to an integer is truncated toward
 * zero and saturated (NaN 0), where C leaves the conversion undefined.
 */
#include "profiler/onnx/onnx_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

int onnx_cast_dtype(int64_t t)
{
	static const int map[] = {
		[1] = SPP_DTYPE_F32, [2] = SPP_DTYPE_U8, [3] = SPP_DTYPE_I8, [4] = SPP_DTYPE_U16,
		[5] = SPP_DTYPE_I16, [6] = SPP_DTYPE_I32, [7] = SPP_DTYPE_I64, [8] = -1,
		[9] = SPP_DTYPE_BOOL, [10] = SPP_DTYPE_F16, [11] = SPP_DTYPE_F64,
		[12] = SPP_DTYPE_U32, [13] = SPP_DTYPE_U64, [14] = -1, [15] = -1,
		[16] = SPP_DTYPE_BF16,
	};

	return t >= 1 && t < (int64_t)(sizeof(map) / sizeof(map[0])) ? map[t] : -1;
}

int onnx_cast_dtype_ok(enum spp_dtype dt)
{
	for (int64_t t = 1; t <= 16; t++)
		if (onnx_cast_dtype(t) == (int)dt)
			return 1;
	return 0;
}

static int is_signed(enum spp_dtype dt)
{
	return dt == SPP_DTYPE_I8 || dt == SPP_DTYPE_I16 || dt == SPP_DTYPE_I32 ||
	       dt == SPP_DTYPE_I64;
}

static int is_int(enum spp_dtype dt)
{
	return !spp_dtype_info(dt)->is_float && dt != SPP_DTYPE_BOOL;
}

/* Element p of dtype dt as a double, and (integers) as its 64 bits. */
static double get(const unsigned char *p, enum spp_dtype dt, size_t es, uint64_t *bits)
{
	uint64_t v = 0;
	float x;
	double d;
	uint16_t h;

	memcpy(&v, p, es); /* little-endian hosts only, as the loaders */
	switch (dt) {
	case SPP_DTYPE_F32: memcpy(&x, p, 4); return x;
	case SPP_DTYPE_F64: memcpy(&d, p, 8); return d;
	case SPP_DTYPE_F16: memcpy(&h, p, 2); return spp_f16_to_f32(h);
	case SPP_DTYPE_BF16: memcpy(&h, p, 2); return spp_bf16_to_f32(h);
	case SPP_DTYPE_BOOL: *bits = v != 0; return (double)*bits;
	case SPP_DTYPE_I8: *bits = (uint64_t)(int64_t)(int8_t)v; break;
	case SPP_DTYPE_I16: *bits = (uint64_t)(int64_t)(int16_t)v; break;
	case SPP_DTYPE_I32: *bits = (uint64_t)(int64_t)(int32_t)v; break;
	default: *bits = v; break; /* unsigned, and I64 */
	}
	return is_signed(dt) ? (double)(int64_t)*bits : (double)*bits;
}

/* A double into an integer dtype of es bytes: truncated, saturated, NaN 0. */
static uint64_t to_int(double d, enum spp_dtype dt, size_t es)
{
	int bits = (int)es * 8;
	double hi = ldexp(1.0, is_signed(dt) ? bits - 1 : bits);

	if (isnan(d))
		return 0;
	if (is_signed(dt)) {
		if (d >= hi)
			return (uint64_t)(bits == 64 ? INT64_MAX : (int64_t)hi - 1);
		if (d <= -hi)
			return (uint64_t)(bits == 64 ? INT64_MIN : -(int64_t)hi);
		return (uint64_t)(int64_t)d;
	}
	if (d >= hi)
		return bits == 64 ? UINT64_MAX : (uint64_t)hi - 1;
	return d <= 0 ? 0 : (uint64_t)d;
}

void onnx_cast_values(const unsigned char *src, enum spp_dtype from, unsigned char *dst,
		      enum spp_dtype to, uint64_t n)
{
	size_t si = (size_t)spp_dtype_info(from)->bits / 8, so = (size_t)spp_dtype_info(to)->bits / 8;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t bits = 0, v;
		double d = get(src + k * si, from, si, &bits);
		/* a double past float's range is undefined to convert in C: inf */
		float fl = isfinite(d) && fabs(d) > FLT_MAX ? (d > 0 ? INFINITY : -INFINITY) : (float)d;
		unsigned char *o = dst + k * so;
		uint16_t h;

		switch (to) {
		case SPP_DTYPE_F32: memcpy(o, &fl, 4); continue;
		case SPP_DTYPE_F64: memcpy(o, &d, 8); continue;
		case SPP_DTYPE_F16: h = spp_f32_to_f16(fl); memcpy(o, &h, 2); continue;
		case SPP_DTYPE_BF16: h = spp_f32_to_bf16(fl); memcpy(o, &h, 2); continue;
		case SPP_DTYPE_BOOL: *o = d != 0 || isnan(d); continue;
		default: break;
		}
		v = is_int(from) ? bits : to_int(d, to, so);
		memcpy(o, &v, so); /* low bytes */
	}
}
