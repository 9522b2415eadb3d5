/*
 * lowp kernels on the avx512_vnni path: lowp_body.h over simd.h's AVX512
 * vocabulary with AVX512_VNNI's vpdpbusd (its int8 kernels only).
 */
#define SIMD_AVX512 1
#define LP_TARGET_STR CPU_AVX512_SET ",f16c,avx512vnni"
#define LP_VNNI 1
#define LP_BF16 0
#define LP_TABLE lp_avx512_vnni
#define LP_ONLY_INT8 1
#include "kernels/lowp/lowp_body.h"
