/*
 * lowp kernels on the avx2_vnni path: lowp_body.h over simd.h's AVX2
 * vocabulary with AVX-VNNI's vpdpbusd (its int8 kernels only).
 */
#define SIMD_AVX2 1
#define LP_TARGET_STR "avx2,fma,popcnt,bmi,bmi2,f16c,avxvnni"
#define LP_VNNI 1
#define LP_BF16 0
#define LP_TABLE lp_avx2_vnni
#define LP_ONLY_INT8 1
#include "kernels/lowp/lowp_body.h"
