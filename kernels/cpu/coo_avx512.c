/* coo kernels for AVX-512 (see coo.c for the layout). */
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include "kernels/cpu/seg_avx512.h"

INL512 void coo_chunk512(const int nv, const int full, const struct cpu_coo *c,
			 int64_t z0, int64_t z1, int64_t r0, int64_t r1,
			 const float *x, float *y, int64_t n, int64_t cw, __mmask16 mt)
{
	int64_t cur = r0, z = z0;

	while (z < z1) {
		int32_t r = c->row[z];
		int64_t e = z + 1;

		while (e < z1 && c->row[e] == r)
			e++;
		for (; cur < r; cur++)
			memset(y + cur * n, 0, (size_t)cw * sizeof(*y));
		seg512(nv, full, mt, 0, c->col + z, c->val + z, e - z, x, n, y + (int64_t)r * n, 1);
		cur = (int64_t)r + 1;
		z = e;
	}
	for (; cur < r1; cur++)
		memset(y + cur * n, 0, (size_t)cw * sizeof(*y));
}

CPU_AVX512 void cpu_coo_part_avx512(const struct spp_encoded *w, int64_t z0,
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
			y[r] = _mm512_reduce_add_ps(dot512(0, 0, c->col + z, c->val + z, e - z, x,
							   _mm512_setzero_ps()));
			cur = (int64_t)r + 1;
			z = e;
		}
		for (; cur < r1; cur++)
			y[cur] = 0;
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;
		__mmask16 mt = tail_mask512(cw);

#define COO_BODY(nv, full) coo_chunk512(nv, full, c, z0, z1, r0, r1, x + j0, y + j0, n, cw, mt)
		CHUNK512_DISPATCH(cw, COO_BODY);
#undef COO_BODY
	}
}
#endif
