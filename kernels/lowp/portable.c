/*
 * The portable lowp kernels, every format in every precision: plain C
 * over the same layouts and in the same arithmetic as the vector paths
 * (fp32 products of the exact converted values, int32 sums of codes).
 */
#include "kernels/lowp/lowp_impl.h"

/* Stored value t of w as fp32 (bf16 / fp16). */
static float wf(const struct spp_lowp_w *w, int64_t t)
{
	uint16_t h = ((const uint16_t *)w->val)[t];

	return w->prec == SPP_PREC_BF16 ? spp_bf16_to_f32(h) : spp_f16_to_f32(h);
}

static float xf(const struct spp_lowp_x *x, int64_t k, int64_t j)
{
	uint16_t h = ((const uint16_t *)x->v)[k * x->n + j];

	return x->prec == SPP_PREC_BF16 ? spp_bf16_to_f32(h) : spp_f16_to_f32(h);
}

static int32_t xq(const struct spp_lowp_x *x, int64_t k, int64_t j)
{
	return (int32_t)((const uint8_t *)x->v)[lp_x8_at(k, j, x->n)] - 128;
}

/* Entries [*t0, *t1) of row i and values per entry (nm: the row's slots, one each). */
static int64_t row_entries(const struct spp_lowp_w *w, int64_t i, int64_t *t0, int64_t *t1)
{
	if (w->format == SPP_LOWP_NM2_4 || w->format == SPP_LOWP_NM4_8) {
		*t0 = i * w->stride;
		*t1 = *t0 + w->stride;
		return 1;
	}
	*t0 = w->ptr[i];
	*t1 = w->ptr[i + 1];
	return w->format == SPP_LOWP_BSR1X4 ? 4 : 1;
}

/* Column of value q of entry t of row i. */
static int64_t entry_col(const struct spp_lowp_w *w, int64_t i, int64_t t, int64_t q)
{
	if (w->format == SPP_LOWP_NM2_4 || w->format == SPP_LOWP_NM4_8)
		return lp_nm_col(w, i, t - i * w->stride);
	return w->col[t] + q;
}

static void part_c(const struct spp_lowp_w *w, int64_t r0, int64_t r1, const struct spp_lowp_x *x,
		   float *y)
{
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++)
		for (int64_t j = 0; j < n; j++) {
			int64_t t0, t1, per = row_entries(w, i, &t0, &t1);
			float sf = 0;
			int32_t si = 0;

			for (int64_t t = t0; t < t1; t++)
				for (int64_t q = 0; q < per; q++) {
					int64_t c = entry_col(w, i, t, q);

					if (c >= w->k) /* bsr1x4's zero padding past k */
						continue;
					if (w->prec == SPP_PREC_INT8)
						si += ((const int8_t *)w->val)[t * per + q] * xq(x, c, j);
					else
						sf += wf(w, t * per + q) * xf(x, c, j);
				}
			y[i * n + j] = w->prec == SPP_PREC_INT8 ? (float)si * lp_yscale(w, x, i) : sf;
		}
}

/* bitmask: each row's set bits in column order, its values in the same order. */
static void bitmask_c(const struct spp_lowp_w *w, int64_t r0, int64_t r1,
		      const struct spp_lowp_x *x, float *y)
{
	int64_t n = x->n;

	for (int64_t i = r0; i < r1; i++)
		for (int64_t j = 0; j < n; j++) {
			const uint8_t *mk = w->mask + i * w->mstride;
			int64_t t = w->ptr[i];
			float sf = 0;
			int32_t si = 0;

			for (int64_t c = 0; c < w->k; c++) {
				if (!(mk[c / 8] >> (c % 8) & 1))
					continue;
				if (w->prec == SPP_PREC_INT8)
					si += ((const int8_t *)w->val)[t] * xq(x, c, j);
				else
					sf += wf(w, t) * xf(x, c, j);
				t++;
			}
			y[i * n + j] = w->prec == SPP_PREC_INT8 ? (float)si * lp_yscale(w, x, i) : sf;
		}
}

#define LP_ALL_PRECS                                                           \
	{ [SPP_PREC_BF16] = part_c, [SPP_PREC_FP16] = part_c, [SPP_PREC_INT8] = part_c }

const struct lp_table lp_portable = { .k = {
	[SPP_LOWP_CSR] = LP_ALL_PRECS,
	[SPP_LOWP_NM2_4] = LP_ALL_PRECS,
	[SPP_LOWP_NM4_8] = LP_ALL_PRECS,
	[SPP_LOWP_BSR1X4] = LP_ALL_PRECS,
	[SPP_LOWP_BITMASK] = { [SPP_PREC_BF16] = bitmask_c, [SPP_PREC_FP16] = bitmask_c,
			       [SPP_PREC_INT8] = bitmask_c },
} };
