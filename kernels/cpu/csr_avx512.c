/* csr kernels for AVX-512: csr_body.h over simd.h's AVX-512 vocabulary. */
#define SIMD_AVX512 1
#include "kernels/cpu/csr_body.h"
