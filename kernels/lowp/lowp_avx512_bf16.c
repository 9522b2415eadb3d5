/*
 * lowp kernels on the avx512_bf16 path: lowp_body.h over simd.h's AVX512
 * vocabulary with AVX512_BF16's vdpbf16ps (csr and nm in bf16 only).
 */
#define SIMD_AVX512 1
#define LP_TARGET_STR CPU_AVX512_SET ",f16c,avx512bf16"
#define LP_VNNI 0
#define LP_BF16 1
#define LP_TABLE lp_avx512_bf16
#define LP_ONLY_BF16 1
#include "kernels/lowp/lowp_body.h"
