/* nmN_M kernels for AVX-512 (see nm.c for the layout). */
#include <string.h>

#define SIMD_AVX512 1
#include "kernels/cpu/simd.h"

#if CPU_X86

/*
 * N = 1, when N divides 16 and M is a power of 2 up to 8: the
 * dot product of one segment (len slots from storage slot S0, x at its
 * first column, kx columns of x from there; segments hold whole 16-slot
 * windows but the last tile's). 16 slots cover a window of 16/N groups,
 * at most 64 columns (nx = 1, 2 or 4 vectors of x). W is not expanded;
 * x is permuted into the slots' order instead (vpermps / vpermt2ps),
 * which replaces a gather by one or two shuffles.
 *
 * The positions are decoded in registers (struct nm_spread): a window's
 * 16 positions start at the same bit offset within a byte in every
 * window of a segment (16 * bits is a multiple of 8), so one broadcast
 * 8-byte load, a byte shuffle that gives each slot's lane the two bytes
 * holding its position, a shift by the position's bit within them, and
 * a mask (or-ed with the window's group offsets) make the permute's
 * indices: four instructions for 16 slots. Other N:M run the scalar
 * loop of cpu.h. Measured on the EPYC Zen 5 (nm2_4 on 2:4, 1 thread),
 * against the scalar 8-byte reads and pdep of 8 slots that this
 * replaced: 1024 x 4096 with W in the caches 0.23 to 0.16 ms (3 rounds);
 * 4096 x 4096 with W evicted before each run 1.38-1.49 to 1.29-1.43 ms,
 * where DRAM bounds it (a plain read of its 32 MiB of values alone took
 * 0.91-1.1 ms).
 *
 * NM_DOT_PF: the prefetch distance in slots, 2 KiB of values (seg.h's
 * DOT_PF is 4 KiB). Measured with W evicted (4096 x 4096, 2 rounds):
 * 1.19-1.27 ms at 2 KiB, 1.32-1.46 ms at 4 KiB, 1.27-1.47 ms without.
 */
#define NM_DOT_PF 512

struct nm_spread {
	__m512i shuf, shift, mask, lg;
};

INL512 struct nm_spread nm_spread_init(const struct cpu_nm *s, int64_t S0)
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	/* bit of each slot's position from the byte where the window's positions start */
	__m512i t = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(s->bits)),
				     _mm512_set1_epi32((int)(S0 * s->bits & 7)));
	__m512i byte = _mm512_srli_epi32(t, 3);
	struct nm_spread d;

	/* lane bytes: the byte holding the position's low bit, the next, two zeros (0x80) */
	d.shuf = _mm512_add_epi32(_mm512_add_epi32(byte, _mm512_slli_epi32(byte, 8)),
				  _mm512_set1_epi32((int)0x80800100u));
	d.shift = _mm512_and_si512(t, _mm512_set1_epi32(7));
	d.mask = _mm512_set1_epi32((1 << s->bits) - 1);
	d.lg = _mm512_mullo_epi32(_mm512_srli_epi32(lane, __builtin_ctz((unsigned)s->keep)),
				  _mm512_set1_epi32(s->group));
	return d;
}

/* The permute indices of the window whose positions start in byte p. */
INL512 __m512i nm_spread(const struct nm_spread *d, const uint8_t *p)
{
	int64_t w;
	__m512i f;

	memcpy(&w, p, 8);
	SPP_TRACE_LOAD(p, 8);
	f = _mm512_srlv_epi32(_mm512_shuffle_epi8(_mm512_set1_epi64(w), d->shuf), d->shift);
	/* (f & mask) | lg: lg is a multiple of M, a power of 2, and f & mask < M */
	return _mm512_ternarylogic_epi32(f, d->mask, d->lg, 0xEA);
}

/* x of one window, permuted to the slots' order (xs: the window's vectors). */
INL512 __m512 nm_permx(const int nx, __m512i idx, const __m512 *xs)
{
	if (nx == 1)
		return _mm512_permutexvar_ps(idx, xs[0]);
	if (nx == 2)
		return _mm512_permutex2var_ps(xs[0], idx, xs[1]);
	return _mm512_mask_blend_ps(_mm512_test_epi32_mask(idx, _mm512_set1_epi32(32)),
				    _mm512_permutex2var_ps(xs[0], idx, xs[1]),
				    _mm512_permutex2var_ps(xs[2], idx, xs[3]));
}

INL512 float nm_dot512(const int nx, const struct cpu_nm *s, int64_t S0, int64_t slots,
		       int64_t k, const float *x)
{
	const int64_t win = 16 / s->keep * s->group, wbytes = 2 * s->bits; /* 16 positions */
	const struct nm_spread d = nm_spread_init(s, S0);
	const float *val = s->val + S0;
	const uint8_t *pos = s->pos + (S0 * s->bits >> 3);
	/* windows of 16 slots whose x lies wholly inside K */
	const int64_t full = slots / 16 < k / win ? slots / 16 : k / win;
	__m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
		       _mm512_setzero_ps()};
	int64_t wi = 0;

	/* four windows (four lines of W) at a time */
	for (; wi + 4 <= full; wi += 4) {
		const float *vp = val + wi * 16, *xw = x + wi * win;
		const uint8_t *p = pos + wi * wbytes;

		/* W streams from memory; as in seg.h's dot the prefetcher falls behind */
		SPP_UNROLL(4)
		for (int u = 0; u < 4; u++)
			_mm_prefetch((const char *)(vp + NM_DOT_PF + 16 * u), _MM_HINT_T0);
		_mm_prefetch((const char *)p + NM_DOT_PF / 16 * wbytes, _MM_HINT_T0);
		SPP_UNROLL(4)
		for (int u = 0; u < 4; u++) {
			__m512i idx = nm_spread(&d, p + u * wbytes);
			__m512 xs[4];

			SPP_UNROLL(4)
			for (int v = 0; v < nx; v++)
				xs[v] = simd_loadu(xw + u * win + 16 * v);
			a[u] = _mm512_fmadd_ps(simd_loadu(vp + 16 * u), nm_permx(nx, idx, xs), a[u]);
		}
	}
	/* the rest one window at a time, x past K read as 0, slots past the segment masked */
	for (; wi * 16 < slots; wi++) {
		int64_t sl = wi * 16, c = wi * win;
		__mmask16 ms = tail_mask512(slots - sl < 16 ? slots - sl : 16);
		__m512i idx = nm_spread(&d, pos + wi * wbytes);
		__m512 xs[4];

		SPP_UNROLL(4)
		for (int v = 0; v < nx; v++) {
			int64_t left = k - c - 16 * v;
			__mmask16 mx = left <= 0 ? 0 : tail_mask512(left < 16 ? left : 16);

			xs[v] = simd_maskz_loadu(mx, x + c + 16 * v);
		}
		/* masked: a lane past the segment must not add 0 * inf */
		a[0] = _mm512_mask3_fmadd_ps(simd_maskz_loadu(ms, val + sl), nm_permx(nx, idx, xs), a[0], ms);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
}

/*
 * N >= 2: a Y row chunk in registers over one segment (ng groups from
 * storage slot S0, x at the tile's first X row), two accumulator sets as
 * in seg.h's seg. KEEP and GROUP are constants for the listed formats (0:
 * read them from s). With constants, the positions of R slots are read
 * into a register at once and decoded by shifts, so that a slot costs
 * its broadcast and the loads of its X row: no index load as in csr.
 * Measured on the EPYC Zen 5 (4096 x 4096, N = 64, 1 thread, 3 rounds
 * interleaved) against the vector decode of 16 slots into a stack array
 * that this replaced: nm2_4 11.6 to 9.8 ms, nm4_8 11.4 to 10.1, nm1_4
 * 6.7 to 5.8.
 */
INL512 void nm_seg512(const int nv, const int full, const int KEEP, const int GROUP,
		      __mmask16 mt, const struct cpu_nm *s, int64_t S0,
		      int64_t ng, const float *x, int64_t n, float *yr, int zero)
{
	const int64_t keep = KEEP ? KEEP : s->keep, group = GROUP ? GROUP : s->group;
	/* bits per position (ceil(log2 M)); R slots' positions from one 8-byte read */
	const int BITS = cpu_nm_bits(GROUP), KDIV = KEEP ? KEEP : 1; /* KEEP as a divisor */
	const int R = BITS * 16 + 7 <= 64 ? 16 : 8;
	const int64_t end = ng * keep;
	const float *val = s->val + S0;
	__m512 a[2][4];
	int64_t sl = 0;

	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++) {
		a[0][v] = zero ? _mm512_setzero_ps() : simd_ld(full || v < nv - 1, mt, yr + 16 * v);
		a[1][v] = _mm512_setzero_ps();
	}
	/* R is a multiple of KEEP: every run starts a group */
	for (; KEEP && sl + R <= end; sl += R) {
		const float *xg = x + sl / KDIV * GROUP * n, *vp = val + sl;
		const uint64_t pw = cpu_nm_pos_run(s, S0 + sl, BITS);

		/* W SEG_PF slots ahead: R values are a line at most, R positions a line's part */
		_mm_prefetch((const char *)(vp + SEG_PF), _MM_HINT_T0);
		if (((S0 + sl) * BITS & 511) < R * BITS)
			_mm_prefetch((const char *)s->pos + ((S0 + sl + SEG_PF) * BITS >> 3), _MM_HINT_T0);
		CPU_NM_TRACE_POS(s, S0 + sl, BITS);
		SPP_UNROLL(16)
		for (int u = 0; u < R; u++) {
			const int64_t row = u / KDIV * GROUP + (int64_t)((pw >> (u * BITS)) & ((1u << BITS) - 1));
			const float *xr = xg + row * n;
			__m512 wv = simd_bcast(vp + u);

			SPP_UNROLL(4)
			for (int v = 0; v < nv; v++)
				a[u & 1][v] = _mm512_fmadd_ps(wv, simd_ld(full || v < nv - 1, mt, xr + 16 * v), a[u & 1][v]);
		}
	}
	/* the rest (every slot of a non-constant N:M) one slot at a time */
	for (; sl < end; sl++) {
		const float *xr = x + (sl / keep * group + (int64_t)cpu_nm_pos(s, S0 + sl)) * n;
		__m512 wv = simd_bcast(val + sl);

		CPU_NM_TRACE_POS(s, S0 + sl, s->bits);

		SPP_UNROLL(4)
		for (int v = 0; v < nv; v++)
			a[sl & 1][v] = _mm512_fmadd_ps(wv, simd_ld(full || v < nv - 1, mt, xr + 16 * v), a[sl & 1][v]);
	}
	SPP_UNROLL(4)
	for (int v = 0; v < nv; v++)
		simd_st(full || v < nv - 1, mt, yr + 16 * v, _mm512_add_ps(a[0][v], a[1][v]));
}

/*
 * A chunk of Y's columns, one K tile over all rows of the part before the
 * next; W streams in storage order, and the next row's Y chunk is
 * prefetched.
 */
INL512 void nm_chunk512(const int nv, const int full, const int KEEP, const int GROUP,
			const struct cpu_nm *s, int64_t r0, int64_t r1,
			const float *x, float *y, int64_t n, __mmask16 mt)
{
	int64_t g0 = 0;

	do {
		int64_t g1 = cpu_nm_tile_end(s, g0);
		const float *xt = x + g0 * s->group * n;

		for (int64_t i = r0; i < r1; i++) {
			if (g0 > 0 && i + 1 < r1)
				for (int v = 0; v < nv; v++)
					_mm_prefetch((const char *)(y + (i + 1) * n + 16 * v), _MM_HINT_T0);
			nm_seg512(nv, full, KEEP, GROUP, mt, s, cpu_nm_seg(s, i, g0), g1 - g0, xt, n,
				  y + i * n, g0 == 0);
		}
		g0 = g1;
	} while (g0 < s->groups);
}

/* The epilogue over the part's rows as it ends, not yet in registers (written where no AVX-512 could check it). */
CPU_AVX512 void cpu_nm_part_avx512(const struct spp_encoded *w, int p, const float *x,
				   float *y, int64_t n, const struct spp_epi *e)
{
	const struct cpu_nm *s = w->impl;
	int64_t r0, r1;

	if (!cpu_part_range(s->lo, p, &r0, &r1))
		return;

	if (n == 1) {
		/* the vector dot: N divides 16, M a power of 2 up to 8 (positions of 16 slots in 48 bits) */
		int vec = 16 % s->keep == 0 && (s->group & (s->group - 1)) == 0 && s->bits <= 3;
		int64_t win = vec ? 16 / s->keep * s->group : 0, g0 = 0;

		/* tile by tile, each segment's dot product added to y */
		do {
			int64_t g1 = cpu_nm_tile_end(s, g0), len = (g1 - g0) * s->keep, c0 = g0 * s->group;

			for (int64_t i = r0; i < r1; i++) {
				int64_t S0 = cpu_nm_seg(s, i, g0);
				float d;

				if (win == 0 || win > 64)
					d = cpu_nm_seg_dot(s, S0, len, x + c0);
				else if (win <= 16)
					d = nm_dot512(1, s, S0, len, w->k - c0, x + c0);
				else if (win <= 32)
					d = nm_dot512(2, s, S0, len, w->k - c0, x + c0);
				else
					d = nm_dot512(4, s, S0, len, w->k - c0, x + c0);
				if (g0)
					SPP_TRACE_LOAD(&y[i], 4);
				SPP_TRACE_STORE(&y[i], 4);
				y[i] = g0 == 0 ? d : y[i] + d;
			}
			g0 = g1;
		} while (g0 < s->groups);
		cpu_epi_rows(e, y, r0, r1, 1);
		return;
	}
	for (int64_t j0 = 0; j0 < n; j0 += 64) {
		int64_t cw = n - j0 < 64 ? n - j0 : 64;
		__mmask16 mt = tail_mask512(cw);

#define NM_BODY(nv, full) nm_chunk512(nv, full, KP, GP, s, r0, r1, x + j0, y + j0, n, mt)
		/* constant N:M for the listed formats (nm_seg512 decodes their positions by shifts) */
		if (s->keep == 2 && s->group == 4) {
			enum { KP = 2, GP = 4 };
			SIMD_CHUNK_DISPATCH(cw, NM_BODY);
		} else if (s->keep == 4 && s->group == 8) {
			enum { KP = 4, GP = 8 };
			SIMD_CHUNK_DISPATCH(cw, NM_BODY);
		} else if (s->keep == 1 && s->group == 4) {
			enum { KP = 1, GP = 4 };
			SIMD_CHUNK_DISPATCH(cw, NM_BODY);
		} else {
			enum { KP = 0, GP = 0 };
			SIMD_CHUNK_DISPATCH(cw, NM_BODY);
		}
#undef NM_BODY
	}
	cpu_epi_rows(e, y, r0, r1, n);
}
#endif
