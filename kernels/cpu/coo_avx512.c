/* coo kernels for AVX-512: coo_body.h over simd.h's AVX-512 vocabulary. */
#define SIMD_AVX512 1
#include "kernels/cpu/coo_body.h"
