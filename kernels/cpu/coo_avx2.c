/* coo kernels for AVX2: coo_body.h over simd.h's AVX2 vocabulary. */
#define SIMD_AVX2 1
#include "kernels/cpu/coo_body.h"
