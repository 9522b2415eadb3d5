/*
 * Element types of stored tensors, with the facts the loaders and the static
 * analysis need: name, size in bits, and which bits decide "is zero".
 *
 * An element is zero when (its stored bits & zero_mask) == 0: the mask drops
 * the sign bit of floating types so that -0.0 counts as zero, while NaN and
 * Inf (non-zero exponent bits) do not. Integer types use all bits. Types
 * with no zero encoding (F8_E8M0) have has_zero = 0.
 */
#ifndef SPP_BASE_DTYPE_H
#define SPP_BASE_DTYPE_H

#include <stdint.h>

#define SPP_DTYPE_LIST(X)                                                      \
	/* id, name, bits, is_float, has_zero, zero_mask, in safetensors, */   \
	/* block_elems, block_bytes (0, 0: not block-quantized) */             \
	X(BOOL, "BOOL", 8, 0, 1, 0xffu, 1, 0, 0)                               \
	X(U8, "U8", 8, 0, 1, 0xffu, 1, 0, 0)                                   \
	X(I8, "I8", 8, 0, 1, 0xffu, 1, 0, 0)                                   \
	X(U16, "U16", 16, 0, 1, 0xffffu, 1, 0, 0)                              \
	X(I16, "I16", 16, 0, 1, 0xffffu, 1, 0, 0)                              \
	X(U32, "U32", 32, 0, 1, 0xffffffffu, 1, 0, 0)                          \
	X(I32, "I32", 32, 0, 1, 0xffffffffu, 1, 0, 0)                          \
	X(U64, "U64", 64, 0, 1, 0xffffffffffffffffu, 1, 0, 0)                  \
	X(I64, "I64", 64, 0, 1, 0xffffffffffffffffu, 1, 0, 0)                  \
	X(F16, "F16", 16, 1, 1, 0x7fffu, 1, 0, 0)                              \
	X(BF16, "BF16", 16, 1, 1, 0x7fffu, 1, 0, 0)                            \
	X(F32, "F32", 32, 1, 1, 0x7fffffffu, 1, 0, 0)                          \
	X(F64, "F64", 64, 1, 1, 0x7fffffffffffffffu, 1, 0, 0)                  \
	X(F8_E4M3, "F8_E4M3", 8, 1, 1, 0x7fu, 1, 0, 0)                         \
	X(F8_E5M2, "F8_E5M2", 8, 1, 1, 0x7fu, 1, 0, 0)                         \
	X(F8_E8M0, "F8_E8M0", 8, 1, 0, 0xffu, 1, 0, 0)                         \
	X(F6_E2M3, "F6_E2M3", 6, 1, 1, 0x1fu, 1, 0, 0)                         \
	X(F6_E3M2, "F6_E3M2", 6, 1, 1, 0x1fu, 1, 0, 0)                         \
	X(F4, "F4", 4, 1, 1, 0x7u, 1, 0, 0)                                    \
	X(C64, "C64", 64, 1, 1, 0x7fffffff7fffffffu, 1, 0, 0)                  \
	/* ONNX's FNUZ floats have one zero, 0x00 (0x80 is their NaN) */       \
	X(F8_E4M3FNUZ, "F8_E4M3FNUZ", 8, 1, 1, 0xffu, 0, 0, 0)                 \
	X(F8_E5M2FNUZ, "F8_E5M2FNUZ", 8, 1, 1, 0xffu, 0, 0, 0)                 \
	X(I4, "I4", 4, 0, 1, 0xfu, 0, 0, 0)                                    \
	X(U4, "U4", 4, 0, 1, 0xfu, 0, 0, 0)                                    \
	/* ggml block-quantized types (GGUF), bits 0: block_elems values in */ \
	/* block_bytes; only Q8_0 and Q4_0 have a zero test (static_scan.c) */ \
	X(Q4_0, "Q4_0", 0, 1, 1, 0x0u, 0, 32, 18)                              \
	X(Q4_1, "Q4_1", 0, 1, 0, 0x0u, 0, 32, 20)                              \
	X(Q5_0, "Q5_0", 0, 1, 0, 0x0u, 0, 32, 22)                              \
	X(Q5_1, "Q5_1", 0, 1, 0, 0x0u, 0, 32, 24)                              \
	X(Q8_0, "Q8_0", 0, 1, 1, 0x0u, 0, 32, 34)                              \
	X(Q8_1, "Q8_1", 0, 1, 0, 0x0u, 0, 32, 36)                              \
	X(Q2_K, "Q2_K", 0, 1, 0, 0x0u, 0, 256, 84)                             \
	X(Q3_K, "Q3_K", 0, 1, 0, 0x0u, 0, 256, 110)                            \
	X(Q4_K, "Q4_K", 0, 1, 0, 0x0u, 0, 256, 144)                            \
	X(Q5_K, "Q5_K", 0, 1, 0, 0x0u, 0, 256, 176)                            \
	X(Q6_K, "Q6_K", 0, 1, 0, 0x0u, 0, 256, 210)                            \
	X(Q8_K, "Q8_K", 0, 1, 0, 0x0u, 0, 256, 292)                            \
	X(IQ2_XXS, "IQ2_XXS", 0, 1, 0, 0x0u, 0, 256, 66)                       \
	X(IQ2_XS, "IQ2_XS", 0, 1, 0, 0x0u, 0, 256, 74)                         \
	X(IQ3_XXS, "IQ3_XXS", 0, 1, 0, 0x0u, 0, 256, 98)                       \
	X(IQ1_S, "IQ1_S", 0, 1, 0, 0x0u, 0, 256, 50)                           \
	X(IQ4_NL, "IQ4_NL", 0, 1, 0, 0x0u, 0, 32, 18)                          \
	X(IQ3_S, "IQ3_S", 0, 1, 0, 0x0u, 0, 256, 110)                          \
	X(IQ2_S, "IQ2_S", 0, 1, 0, 0x0u, 0, 256, 82)                           \
	X(IQ4_XS, "IQ4_XS", 0, 1, 0, 0x0u, 0, 256, 136)                        \
	X(IQ1_M, "IQ1_M", 0, 1, 0, 0x0u, 0, 256, 56)                           \
	X(TQ1_0, "TQ1_0", 0, 1, 0, 0x0u, 0, 256, 54)                           \
	X(TQ2_0, "TQ2_0", 0, 1, 0, 0x0u, 0, 256, 66)                           \
	X(MXFP4, "MXFP4", 0, 1, 0, 0x0u, 0, 32, 17)

enum spp_dtype {
#define SPP_DTYPE_ENUM(id, name, bits, is_float, has_zero, mask, st, be, bb) SPP_DTYPE_##id,
	SPP_DTYPE_LIST(SPP_DTYPE_ENUM)
#undef SPP_DTYPE_ENUM
	SPP_DTYPE_COUNT
};

struct spp_dtype_info {
	const char *name;   /* as safetensors spells it: "BF16" */
	int bits;           /* bits per element; 4 and 6 are packed, LSB first; 0: block type */
	int is_float;
	int has_zero;
	uint64_t zero_mask;
	int in_safetensors; /* a dtype string of the safetensors format */
	/*
	 * Storage unit: block_elems values in block_bytes bytes. A plain type
	 * has block_elems 1 and block_bytes bits / 8 (0 for the packed 4- and
	 * 6-bit types, which are sized by bits); a ggml block type (bits 0)
	 * stores a whole block at once, scale included.
	 */
	int block_elems;
	int block_bytes;
};

/* Facts about t; NULL when t is out of range. Static storage. */
const struct spp_dtype_info *spp_dtype_info(enum spp_dtype t);

/* Name of t ("F32"); "?" when out of range. */
const char *spp_dtype_name(enum spp_dtype t);

/*
 * Look a dtype name up; returns 0 and sets *out, or -1. Names of types that
 * safetensors does not define (ONNX's FNUZ floats, I4/U4) resolve too: a
 * safetensors parser checks in_safetensors.
 */
int spp_dtype_from_name(const char *name, enum spp_dtype *out);

/*
 * Bytes that numel elements of t occupy; returns 0 and sets *out, or -1 when
 * the size overflows, (packed types) does not end on a byte boundary or
 * (block types) numel is not a whole number of blocks.
 */
int spp_dtype_nbytes(enum spp_dtype t, uint64_t numel, uint64_t *out);

/* Bytes per value used in storage formulas (DESIGN 3): bits / 8, or
 * block_bytes / block_elems for a block type; may be fractional. */
double spp_dtype_value_bytes(enum spp_dtype t);

/* Half-precision conversions (round to nearest even on the way down). */
float spp_f16_to_f32(uint16_t h);
uint16_t spp_f32_to_f16(float f);
float spp_bf16_to_f32(uint16_t h);
uint16_t spp_f32_to_bf16(float f);

#endif
