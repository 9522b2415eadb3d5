// 2:4 SpMM kernel on CUDA cores (fp32); see kernels_cuda.h.
#include <cuda_runtime.h>

#include "kernels/cuda/kernels_cuda.h"

namespace {

constexpr int kWarps = 8;

// One warp per row, lanes over the columns of x; two slots per group of four columns.
__global__ void nm2_4(int m, int k, int n, const float *__restrict__ val,
		      const unsigned char *__restrict__ idx, const float *__restrict__ x,
		      float *__restrict__ y)
{
	int row = blockIdx.x * kWarps + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	int groups = (k + 3) / 4;

	if (row >= m)
		return;
	for (int j = blockIdx.y * 32 + lane; j < n; j += gridDim.y * 32) {
		const float *v = val + (long long)row * groups * 2;
		const unsigned char *c = idx + (long long)row * groups * 2;
		float acc = 0.0f;

		for (int g = 0; g < groups; g++) {
			acc += v[2 * g] * x[(long long)(4 * g + c[2 * g]) * n + j];
			acc += v[2 * g + 1] * x[(long long)(4 * g + c[2 * g + 1]) * n + j];
		}
		y[(long long)row * n + j] = acc;
	}
}

} // namespace

extern "C" int spp_cuda_nm2_4(int m, int k, int n, const float *val, const unsigned char *idx,
			      const float *x, float *y, void *stream)
{
	unsigned blocks = (unsigned)((m + kWarps - 1) / kWarps);
	unsigned gy = (unsigned)min((n + 31) / 32, 65535);

	if (m == 0 || n == 0)
		return 0;
	nm2_4<<<dim3(blocks, gy), kWarps * 32, 0, (cudaStream_t)stream>>>(m, k, n, val, idx, x, y);
	return (int)cudaGetLastError();
}
