// Bitmask SpMM kernel; see kernels_cuda.h.
#include <cuda_runtime.h>

#include "kernels/cuda/kernels_cuda.h"

namespace {

constexpr int kWarps = 8;

// One warp per row, lanes over the columns of x; every lane walks the same mask bits.
__global__ void bitmask(int m, int k, int n, const unsigned long long *__restrict__ mask,
			const int *__restrict__ rowptr, const float *__restrict__ val,
			const float *__restrict__ x, float *__restrict__ y)
{
	int row = blockIdx.x * kWarps + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	int words = (k + 63) / 64;

	if (row >= m)
		return;
	for (int j = blockIdx.y * 32 + lane; j < n; j += gridDim.y * 32) {
		const unsigned long long *w = mask + (long long)row * words;
		int p = rowptr[row];
		float acc = 0.0f;

		for (int i = 0; i < words; i++)
			for (unsigned long long bits = w[i]; bits; bits &= bits - 1) {
				int c = i * 64 + __ffsll((long long)bits) - 1;
				acc += val[p++] * x[(long long)c * n + j];
			}
		y[(long long)row * n + j] = acc;
	}
}

} // namespace

extern "C" int spp_cuda_bitmask(int m, int k, int n, const uint64_t *mask, const int *rowptr,
				const float *val, const float *x, float *y, void *stream)
{
	unsigned blocks = (unsigned)((m + kWarps - 1) / kWarps);
	unsigned gy = (unsigned)min((n + 31) / 32, 65535);

	if (m == 0 || n == 0)
		return 0;
	bitmask<<<dim3(blocks, gy), kWarps * 32, 0, (cudaStream_t)stream>>>(
		m, k, n, (const unsigned long long *)mask, rowptr, val, x, y);
	return (int)cudaGetLastError();
}
