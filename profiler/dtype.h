/*
 * Element types of stored tensors, with the facts the loaders and the static
 * analysis need: name, size in bits, and which bits decide "is zero".
 *
 * An element is zero when (its stored bits & zero_mask) == 0: the mask drops
 * the sign bit of floating types so that -0.0 counts as zero, while NaN and
 * Inf (non-zero exponent bits) do not. Integer types use all bits. Types
 * with no zero encoding (F8_E8M0) have has_zero = 0.
 */
#ifndef SPP_PROFILER_DTYPE_H
#define SPP_PROFILER_DTYPE_H

#include <stdint.h>

#define SPP_DTYPE_LIST(X)                                                      \
	/* id, name, bits, is_float, has_zero, zero_mask */                    \
	X(BOOL, "BOOL", 8, 0, 1, 0xffu)                                        \
	X(U8, "U8", 8, 0, 1, 0xffu)                                            \
	X(I8, "I8", 8, 0, 1, 0xffu)                                            \
	X(U16, "U16", 16, 0, 1, 0xffffu)                                       \
	X(I16, "I16", 16, 0, 1, 0xffffu)                                       \
	X(U32, "U32", 32, 0, 1, 0xffffffffu)                                   \
	X(I32, "I32", 32, 0, 1, 0xffffffffu)                                   \
	X(U64, "U64", 64, 0, 1, 0xffffffffffffffffu)                           \
	X(I64, "I64", 64, 0, 1, 0xffffffffffffffffu)                           \
	X(F16, "F16", 16, 1, 1, 0x7fffu)                                       \
	X(BF16, "BF16", 16, 1, 1, 0x7fffu)                                     \
	X(F32, "F32", 32, 1, 1, 0x7fffffffu)                                   \
	X(F64, "F64", 64, 1, 1, 0x7fffffffffffffffu)                           \
	X(F8_E4M3, "F8_E4M3", 8, 1, 1, 0x7fu)                                  \
	X(F8_E5M2, "F8_E5M2", 8, 1, 1, 0x7fu)                                  \
	X(F8_E8M0, "F8_E8M0", 8, 1, 0, 0xffu)                                  \
	X(F6_E2M3, "F6_E2M3", 6, 1, 1, 0x1fu)                                  \
	X(F6_E3M2, "F6_E3M2", 6, 1, 1, 0x1fu)                                  \
	X(F4, "F4", 4, 1, 1, 0x7u)                                             \
	X(C64, "C64", 64, 1, 1, 0x7fffffff7fffffffu)

enum spp_dtype {
#define SPP_DTYPE_ENUM(id, name, bits, is_float, has_zero, mask) SPP_DTYPE_##id,
	SPP_DTYPE_LIST(SPP_DTYPE_ENUM)
#undef SPP_DTYPE_ENUM
	SPP_DTYPE_COUNT
};

struct spp_dtype_info {
	const char *name;   /* as safetensors spells it: "BF16" */
	int bits;           /* bits per element; 4 and 6 are packed, LSB first */
	int is_float;
	int has_zero;
	uint64_t zero_mask;
};

/* Facts about t; NULL when t is out of range. Static storage. */
const struct spp_dtype_info *spp_dtype_info(enum spp_dtype t);

/* Name of t ("F32"); "?" when out of range. */
const char *spp_dtype_name(enum spp_dtype t);

/* Look a safetensors dtype string up; returns 0 and sets *out, or -1. */
int spp_dtype_from_name(const char *name, enum spp_dtype *out);

/*
 * Bytes that numel elements of t occupy; returns 0 and sets *out, or -1 when
 * the size overflows or (packed types) does not end on a byte boundary.
 */
int spp_dtype_nbytes(enum spp_dtype t, uint64_t numel, uint64_t *out);

/* Bytes per value used in storage formulas (DESIGN 3): bits / 8, may be fractional. */
double spp_dtype_value_bytes(enum spp_dtype t);

/* Half-precision conversions (round to nearest even on the way down). */
float spp_f16_to_f32(uint16_t h);
uint16_t spp_f32_to_f16(float f);
float spp_bf16_to_f32(uint16_t h);
uint16_t spp_f32_to_bf16(float f);

#endif
