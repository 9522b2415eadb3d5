/* spprof's dense GEMV for AVX-512: gemv_body.h over simd.h's AVX-512 vocabulary. */
#define SIMD_AVX512 1
#include "kernels/cpu/simd.h"
#include "kernels/cpu/gemv_body.h"
