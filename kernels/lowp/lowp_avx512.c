/* lowp kernels on the avx512 path: lowp_body.h over simd.h's AVX512 vocabulary. */
#define SIMD_AVX512 1
#define LP_TARGET_STR CPU_AVX512_SET ",f16c"
#define LP_VNNI 0
#define LP_BF16 0
#define LP_TABLE lp_avx512

#include "kernels/lowp/lowp_body.h"
