/*
 * The nm kernels of lowp_body.h (included by it, after csr's i8_one):
 * slots in pairs for vdpbf16ps (bf16), in quads for vpdpbusd (int8 at
 * N = 1), converted and FMA for fp16. keep and group are constants at
 * each call, so that a slot's group is a shift.
 */
#ifndef SPP_KERNELS_LOWP_NM_BODY_H
#define SPP_KERNELS_LOWP_NM_BODY_H

/* The columns of slots s + step * lane + q of an nm row (keep, group constants). */
LPI simd_i nm_cols(simd_i sl, int q, simd_i pos, const int keep, const int group)
{
	simd_i g = lp_isrlv(lp_iadd(sl, lp_iset1(q)), lp_log2(keep));

	return lp_iadd(lp_isllv(g, lp_log2(group)), pos);
}

/*
 * nm in bf16: slots in pairs, vdpbf16ps on (w[s], w[s+1]) x (x[k_s], x[k_s+1]).
 * N = 1: VL pairs a step, the two X values of a lane gathered apart.
 */
LPI void nm_bf16_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y, const int keep, const int group)
{
	const uint16_t *val = w->val, *xv = x->v;
	int64_t n = x->n, st = w->stride;
	simd_i lo16 = lp_iset1(0xffff), lo8 = lp_iset1(0xff);

	for (int64_t i = r0; i < r1; i++) {
		const uint16_t *vr = val + i * st;
		const uint8_t *pr = w->pos + i * st;

		if (n == 1) {
			simd_f acc = simd_zero();

			for (int64_t s = 0; s < st; s += 2 * SIMD_VL) {
				int64_t left = (st - s) / 2;
				simd_m m = simd_first(left);
				simd_i sl = lp_iadd(lp_iset1((int32_t)s), lp_iota(2));
				simd_i pv = lp_h16((const uint16_t *)(pr + s), left);
				simd_i k0 = nm_cols(sl, 0, lp_iand(pv, lo8), keep, group);
				simd_i k1 = nm_cols(sl, 1, lp_isrlv(pv, 8), keep, group);
				simd_i xp = lp_ior(lp_iand(lp_gather16(xv, k0, m), lo16),
						   lp_isllv(lp_gather16(xv, k1, m), 16));

				acc = lp_dpbf16(acc, lp_ld32(vr + s, left), xp);
			}
			y[i] = simd_hsum(acc);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_f acc = simd_zero();

			for (int64_t s = 0; s < st; s += 2) {
				uint32_t wp;
				int64_t k0 = (s / keep) * group + pr[s], k1 = (s / keep) * group + pr[s + 1];

				memcpy(&wp, vr + s, 4);
				if (!wp) /* a padded pair */
					continue;
				acc = lp_dpbf16(acc, lp_ior(lp_h16(xv + k0 * n + j0, cw),
							    lp_isllv(lp_h16(xv + k1 * n + j0, cw), 16)),
						lp_iset1((int32_t)wp));
			}
			simd_st(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc);
		}
	}
}

LP_KERN void nm2_4_bf16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_bf16_rows(w, r0, r1, x, y, 2, 4);
}

LP_KERN void nm4_8_bf16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_bf16_rows(w, r0, r1, x, y, 4, 8);
}

/*
 * nm in fp16: no fp16 pair dot below AVX512_FP16, so converted to fp32
 * and FMA. N = 1: VL slots a step, each lane's X gathered.
 */
LPI void nm_f16_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		     const struct spp_lowp_x *x, float *y, const int keep, const int group)
{
	const uint16_t *val = w->val, *xv = x->v;
	int64_t n = x->n, st = w->stride;

	for (int64_t i = r0; i < r1; i++) {
		const uint16_t *vr = val + i * st;
		const uint8_t *pr = w->pos + i * st;

		if (n == 1) {
			simd_f acc = simd_zero();

			for (int64_t s = 0; s < st; s += SIMD_VL) {
				int64_t left = st - s;
				simd_m m = simd_first(left);
				simd_i sl = lp_iadd(lp_iset1((int32_t)s), lp_iota(1));
				simd_i k = nm_cols(sl, 0, lp_u8((const int8_t *)pr + s, left), keep, group);

				acc = simd_fmadd(lp_h2f(1, vr + s, left), lp_hgather(1, xv, k, m), acc);
			}
			y[i] = simd_hsum(acc);
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_f acc = simd_zero();

			for (int64_t s = 0; s < st; s++)
				if (vr[s]) /* not a padded slot */
					acc = simd_fmadd(lp_fset1(lp_h1(1, vr[s])),
							 lp_h2f(1, xv + ((s / keep) * group + pr[s]) * n + j0, cw),
							 acc);
			simd_st(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc);
		}
	}
}

LP_KERN void nm2_4_fp16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_f16_rows(w, r0, r1, x, y, 2, 4);
}

LP_KERN void nm4_8_fp16(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_f16_rows(w, r0, r1, x, y, 4, 8);
}

/*
 * nm in int8. N = 1: slots in quads, VL quads a step: the 4 X bytes of a
 * lane's quad gathered (each with its dword, its low byte kept) and
 * packed into one dword against the quad's 4 values, one vpdpbusd.
 */
LPI void nm_int8_rows(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y, const int keep, const int group)
{
	const int8_t *val = w->val;
	const uint8_t *xb = x->v;
	int64_t n = x->n, st = w->stride;
	simd_i lo8 = lp_iset1(0xff);

	for (int64_t i = r0; i < r1; i++) {
		const int8_t *vr = val + i * st;
		const uint8_t *pr = w->pos + i * st;
		int32_t corr = 128 * w->qsum[i];
		float sc = lp_yscale(w, x, i);

		if (n == 1) {
			simd_i acc = lp_izero();

			for (int64_t s = 0; s < st; s += 4 * SIMD_VL) {
				int64_t left = (st - s) / 4;
				simd_m m = simd_first(left);
				simd_i sl = lp_iadd(lp_iset1((int32_t)s), lp_iota(4));
				simd_i pv = lp_ld32(pr + s, left), a = lp_izero();

				for (int q = 0; q < 4; q++) {
					simd_i kq = nm_cols(sl, q, lp_iand(lp_isrlv(pv, 8 * q), lo8), keep, group);

					a = lp_ior(a, lp_isllv(lp_iand(lp_gather8(xb, kq, m), lo8), 8 * q));
				}
				acc = lp_dpbusd(acc, a, lp_ld32(vr + s, left));
			}
			y[i] = (float)(lp_ihsum(acc) - corr) * sc;
			continue;
		}
		for (int64_t j0 = 0; j0 < n; j0 += SIMD_VL) {
			int64_t cw = n - j0 < SIMD_VL ? n - j0 : SIMD_VL;
			simd_i acc = lp_izero();

			for (int64_t s = 0; s < st; s++)
				if (vr[s])
					acc = i8_one(acc, vr[s], (s / keep) * group + pr[s], xb, n, j0, cw);
			lp_st_i8(cw == SIMD_VL, simd_first(cw), y + i * n + j0, acc, corr, sc);
		}
	}
}

LP_KERN void nm2_4_int8(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_int8_rows(w, r0, r1, x, y, 2, 4);
}

LP_KERN void nm4_8_int8(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
			const struct spp_lowp_x *x, float *y)
{
	nm_int8_rows(w, r0, r1, x, y, 4, 8);
}

#endif
