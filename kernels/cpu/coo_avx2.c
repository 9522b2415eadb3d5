/* coo kernels for AVX2 (see coo.c for the layout). */
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg_avx2.h"

INL256 void coo_chunk256(const int nv, const int full, const struct cpu_coo *c,
			 int64_t z0, int64_t z1, int64_t r0, int64_t r1,
			 const float *x, float *y, int64_t n, int64_t cw, __m256i mt)
{
	int64_t cur = r0, z = z0;

	while (z < z1) {
		int32_t r = c->row[z];
		int64_t e = z + 1;

		while (e < z1 && c->row[e] == r)
			e++;
		for (; cur < r; cur++)
			memset(y + cur * n, 0, (size_t)cw * sizeof(*y));
		seg256(nv, full, mt, 0, c->col + z, c->val + z, e - z, x, n, y + (int64_t)r * n, 1);
		cur = (int64_t)r + 1;
		z = e;
	}
	for (; cur < r1; cur++)
		memset(y + cur * n, 0, (size_t)cw * sizeof(*y));
}

CPU_AVX2 void cpu_coo_part_avx2(const struct spp_encoded *w, int64_t z0,
				    int64_t z1, int64_t r0, int64_t r1,
				    const float *x, float *y, int64_t n)
{
	const struct cpu_coo *c = w->impl;

	if (n == 1) {
		int64_t cur = r0, z = z0;

		while (z < z1) {
			int32_t r = c->row[z];
			int64_t e = z + 1;

			while (e < z1 && c->row[e] == r)
				e++;
			for (; cur < r; cur++)
				y[cur] = 0;
			y[r] = hsum256(dot256(0, c->col + z, c->val + z, e - z, x,
							   _mm256_setzero_ps()));
			cur = (int64_t)r + 1;
			z = e;
		}
		for (; cur < r1; cur++)
			y[cur] = 0;
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 32) {
		int64_t cw = n - j0 < 32 ? n - j0 : 32;
		__m256i mt = tail_mask256(cw % 8 ? cw % 8 : 8);

#define COO_BODY(nv, full) coo_chunk256(nv, full, c, z0, z1, r0, r1, x + j0, y + j0, n, cw, mt)
		CHUNK256_DISPATCH(cw, COO_BODY);
#undef COO_BODY
	}
}
#endif
