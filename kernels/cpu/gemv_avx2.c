/* spprof's dense GEMV for AVX2: gemv_body.h over simd.h's AVX2 vocabulary. */
#define SIMD_AVX2 1
#include "kernels/cpu/simd.h"
#include "kernels/cpu/gemv_body.h"
