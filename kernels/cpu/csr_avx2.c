/* csr kernels for AVX2: csr_body.h over simd.h's AVX2 vocabulary. */
#define SIMD_AVX2 1
#include "kernels/cpu/csr_body.h"
