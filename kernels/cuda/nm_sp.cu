// 2:4 SpMM on sparse tensor cores (mma.sp, fp16 in, fp32 accumulate) and
// the fp32 -> fp16 conversions of x; see kernels_cuda.h and host.h.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/cuda/kernels_cuda.h"

namespace {

constexpr int kWarps = 4;     // warps per thread block, side by side along N
constexpr int kSub = 4;       // n8 sub-tiles per warp: a warp owns 32 columns of y

// One warp: rows 16 * blockIdx.x .. +15, columns 32 * (blockIdx.y * kWarps + warp) .. +31.
// Fragments (PTX ISA, sparse mma m16n8k32 .f16): lane L, g = L / 4, t = L % 4;
// A's four registers and the metadata come pre-arranged per lane (host.c);
// B register j holds rows k = 2t + 8j and 2t + 8j + 1 of column g, which
// are adjacent in xt; accumulator i: row g + 8 * (i / 2), column 2t + i % 2.
__global__ void nm2_4_tc(int m, int n, int ktiles, const uint4 *__restrict__ a,
			 const uint32_t *__restrict__ e, const __half *__restrict__ xt,
			 float *__restrict__ y)
{
#if __CUDA_ARCH__ >= 800
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	int g = lane / 4, t = lane % 4;
	int mt = blockIdx.x;
	int nb = (blockIdx.y * kWarps + warp) * 32;
	int kp = ktiles * 32;
	float acc[kSub][4];

	// the whole warp leaves together: mma.sp needs every lane
	if (nb >= n)
		return;
#pragma unroll
	for (int s = 0; s < kSub; s++)
		acc[s][0] = acc[s][1] = acc[s][2] = acc[s][3] = 0.0f;
	for (int kt = 0; kt < ktiles; kt++) {
		uint4 av = a[((long long)mt * ktiles + kt) * 32 + lane];
		uint32_t ev = e[((long long)mt * ktiles + kt) * 32 + lane];

#pragma unroll
		for (int s = 0; s < kSub; s++) {
			// warp-uniform: the sub-tile starts inside N (xt is padded to 8 columns)
			if (nb + 8 * s < n) {
				const uint32_t *bp = reinterpret_cast<const uint32_t *>(
					xt + (long long)(nb + 8 * s + g) * kp + kt * 32) + t;
				uint32_t b0 = bp[0], b1 = bp[4], b2 = bp[8], b3 = bp[12];

				asm volatile(
					"mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
					"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, "
					"{%0,%1,%2,%3}, %12, 0x0;\n"
					: "+f"(acc[s][0]), "+f"(acc[s][1]), "+f"(acc[s][2]), "+f"(acc[s][3])
					: "r"(av.x), "r"(av.y), "r"(av.z), "r"(av.w), "r"(b0), "r"(b1),
					  "r"(b2), "r"(b3), "r"(ev));
			}
		}
	}
#pragma unroll
	for (int s = 0; s < kSub; s++)
#pragma unroll
		for (int i = 0; i < 4; i++) {
			int r = mt * 16 + g + 8 * (i / 2);
			int j = nb + 8 * s + 2 * t + i % 2;

			if (r < m && j < n)
				y[(long long)r * n + j] = acc[s][i];
		}
#endif
}

__global__ void to_half_t(int k, int n, int kp, int n_pad, const float *__restrict__ x,
			  __half *__restrict__ xt)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)kp * n_pad;

	for (; i < total; i += (long long)gridDim.x * blockDim.x) {
		int j = (int)(i / kp), c = (int)(i % kp);

		xt[i] = __float2half_rn(j < n && c < k ? x[(long long)c * n + j] : 0.0f);
	}
}

__global__ void to_half(long long count, const float *__restrict__ x, __half *__restrict__ xh)
{
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += (long long)gridDim.x * blockDim.x)
		xh[i] = __float2half_rn(x[i]);
}

unsigned grid_for(long long count)
{
	long long b = (count + 255) / 256;

	return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

} // namespace

extern "C" int spp_cuda_nm2_4_tc(int m, int n, int mtiles, int ktiles, const uint32_t *a,
				 const uint32_t *e, const void *xt, float *y, void *stream)
{
	int per_block = kWarps * 32;

	if (m == 0 || n == 0)
		return 0;
	if (ktiles == 0) // K = 0: y is all zeros
		return (int)cudaMemsetAsync(y, 0, sizeof(float) * (size_t)m * (size_t)n,
					    (cudaStream_t)stream);
	nm2_4_tc<<<dim3((unsigned)mtiles, (unsigned)((n + per_block - 1) / per_block)),
		   kWarps * 32, 0, (cudaStream_t)stream>>>(
		m, n, ktiles, reinterpret_cast<const uint4 *>(a), e,
		static_cast<const __half *>(xt), y);
	return (int)cudaGetLastError();
}

extern "C" int spp_cuda_to_half_t(int k, int n, int kp, int n_pad, const float *x, void *xt,
				  void *stream)
{
	if ((long long)kp * n_pad == 0)
		return 0;
	to_half_t<<<grid_for((long long)kp * n_pad), 256, 0, (cudaStream_t)stream>>>(
		k, n, kp, n_pad, x, static_cast<__half *>(xt));
	return (int)cudaGetLastError();
}

extern "C" int spp_cuda_to_half(int64_t count, const float *x, void *xh, void *stream)
{
	if (count == 0)
		return 0;
	to_half<<<grid_for(count), 256, 0, (cudaStream_t)stream>>>(count, x,
								    static_cast<__half *>(xh));
	return (int)cudaGetLastError();
}
