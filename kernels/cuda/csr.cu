// CSR SpMM kernels; see kernels_cuda.h.
#include <cuda_runtime.h>

#include "kernels/cuda/kernels_cuda.h"

namespace {

constexpr int kWarps = 8; // warps per thread block

// Lanes over the columns of x: coalesced loads of x's rows when n >= 32.
__global__ void csr_rows_cols(int m, int n, const int *__restrict__ rowptr,
			      const int *__restrict__ col, const float *__restrict__ val,
			      const float *__restrict__ x, float *__restrict__ y)
{
	int row = blockIdx.x * kWarps + threadIdx.x / 32;
	int lane = threadIdx.x % 32;

	if (row >= m)
		return;
	for (int j0 = blockIdx.y * 32; j0 < n; j0 += gridDim.y * 32) {
		int j = j0 + lane;
		float acc = 0.0f;

		if (j < n)
			for (int p = rowptr[row]; p < rowptr[row + 1]; p++)
				acc += val[p] * x[(long long)col[p] * n + j];
		if (j < n)
			y[(long long)row * n + j] = acc;
	}
}

// Lanes over the row's non-zeros, a warp reduction per column: narrow x (n < 8).
__global__ void csr_rows_nnz(int m, int n, const int *__restrict__ rowptr,
			     const int *__restrict__ col, const float *__restrict__ val,
			     const float *__restrict__ x, float *__restrict__ y)
{
	int row = blockIdx.x * kWarps + threadIdx.x / 32;
	int lane = threadIdx.x % 32;

	if (row >= m)
		return;
	for (int j = 0; j < n; j++) {
		float acc = 0.0f;

		for (int p = rowptr[row] + lane; p < rowptr[row + 1]; p += 32)
			acc += val[p] * x[(long long)col[p] * n + j];
		for (int o = 16; o > 0; o /= 2)
			acc += __shfl_down_sync(0xffffffffu, acc, o);
		if (lane == 0)
			y[(long long)row * n + j] = acc;
	}
}

constexpr int kChunk = 256; // non-zeros per warp in the balanced split

// The warp's first row: the last r with rowptr[r] <= first non-zero.
__device__ int row_of(const int *rowptr, int m, int p)
{
	int lo = 0, hi = m; // rowptr[lo] <= p < rowptr[hi]

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (rowptr[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

__global__ void csr_balanced(int m, int n, int nnz, const int *__restrict__ rowptr,
			     const int *__restrict__ col, const float *__restrict__ val,
			     const float *__restrict__ x, float *__restrict__ y)
{
	int warp = blockIdx.x * kWarps + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	int p0 = warp * kChunk;
	int p1 = min(p0 + kChunk, nnz);

	if (p0 >= nnz)
		return;
	for (int j0 = 0; j0 < n; j0 += 32) {
		int j = j0 + lane;
		int row = row_of(rowptr, m, p0);
		float acc = 0.0f;

		for (int p = p0; p < p1; p++) {
			while (p >= rowptr[row + 1]) { // also steps over empty rows
				if (j < n && acc != 0.0f)
					atomicAdd(&y[(long long)row * n + j], acc);
				acc = 0.0f;
				row++;
			}
			if (j < n)
				acc += val[p] * x[(long long)col[p] * n + j];
		}
		if (j < n && acc != 0.0f)
			atomicAdd(&y[(long long)row * n + j], acc);
	}
}

} // namespace

extern "C" int spp_cuda_csr_rows(int m, int n, const int *rowptr, const int *col,
				 const float *val, const float *x, float *y, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned blocks = (unsigned)((m + kWarps - 1) / kWarps);

	if (m == 0 || n == 0)
		return 0;
	if (n < 8) {
		csr_rows_nnz<<<blocks, kWarps * 32, 0, s>>>(m, n, rowptr, col, val, x, y);
	} else {
		// grid.y splits wide x; at most 65535 and enough to cover n once
		unsigned gy = (unsigned)min((n + 31) / 32, 65535);
		csr_rows_cols<<<dim3(blocks, gy), kWarps * 32, 0, s>>>(m, n, rowptr, col, val, x, y);
	}
	return (int)cudaGetLastError();
}

extern "C" int spp_cuda_csr_balanced(int m, int n, int nnz, const int *rowptr, const int *col,
				     const float *val, const float *x, float *y, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	int warps = (nnz + kChunk - 1) / kChunk;
	cudaError_t e;

	if (m == 0 || n == 0)
		return 0;
	e = cudaMemsetAsync(y, 0, sizeof(float) * (size_t)m * (size_t)n, s);
	if (e != cudaSuccess || nnz == 0)
		return (int)e;
	csr_balanced<<<(unsigned)((warps + kWarps - 1) / kWarps), kWarps * 32, 0, s>>>(
		m, n, nnz, rowptr, col, val, x, y);
	return (int)cudaGetLastError();
}
