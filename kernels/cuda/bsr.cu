// BSR SpMM kernel; see kernels_cuda.h.
#include <cuda_runtime.h>

#include "kernels/cuda/kernels_cuda.h"

namespace {

// Thread (lane, r) of block row br computes y[br*B + r][j], j = 32 * blockIdx.y + lane.
template <int B>
__global__ void bsr(int m, int k, int n, const int *__restrict__ browptr,
		    const int *__restrict__ bcol, const float *__restrict__ bval,
		    const float *__restrict__ x, float *__restrict__ y)
{
	int br = blockIdx.x;
	int r = threadIdx.y;
	int row = br * B + r;
	int j = blockIdx.y * 32 + threadIdx.x;
	float acc = 0.0f;

	if (row >= m || j >= n)
		return;
	for (int p = browptr[br]; p < browptr[br + 1]; p++) {
		const float *v = bval + (long long)p * B * B + r * B;
		int c0 = bcol[p] * B;
		int cn = min(B, k - c0); // the last block column may hang past K

		for (int c = 0; c < cn; c++)
			acc += v[c] * x[(long long)(c0 + c) * n + j];
	}
	y[(long long)row * n + j] = acc;
}

template <int B>
void launch(int m, int k, int n, const int *browptr, const int *bcol, const float *bval,
	    const float *x, float *y, cudaStream_t s)
{
	dim3 grid((unsigned)((m + B - 1) / B), (unsigned)((n + 31) / 32));

	bsr<B><<<grid, dim3(32, B), 0, s>>>(m, k, n, browptr, bcol, bval, x, y);
}

} // namespace

extern "C" int spp_cuda_bsr(int block, int m, int k, int n, const int *browptr, const int *bcol,
			    const float *bval, const float *x, float *y, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;

	if (m == 0 || n == 0)
		return 0;
	if ((n + 31) / 32 > 65535)
		return (int)cudaErrorInvalidValue;
	switch (block) {
	case 4:
		launch<4>(m, k, n, browptr, bcol, bval, x, y, s);
		break;
	case 8:
		launch<8>(m, k, n, browptr, bcol, bval, x, y, s);
		break;
	case 16:
		launch<16>(m, k, n, browptr, bcol, bval, x, y, s);
		break;
	default:
		return (int)cudaErrorInvalidValue;
	}
	return (int)cudaGetLastError();
}
