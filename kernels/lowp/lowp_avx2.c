/* lowp kernels on the avx2 path: lowp_body.h over simd.h's AVX2 vocabulary. */
#define SIMD_AVX2 1
#define LP_TARGET_STR "avx2,fma,popcnt,bmi,bmi2,f16c"
#define LP_VNNI 0
#define LP_BF16 0
#define LP_TABLE lp_avx2

#include "kernels/lowp/lowp_body.h"
