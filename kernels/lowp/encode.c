/*
 * The lowp encoders: csr, nm2_4 / nm4_8, bsr1x4 and bitmask from the fp32 dense W,
 * values stored in the precision (lowp.h for the layouts). One pass
 * picks the stored entries of a row (the format's own rule), a second
 * stores them converted; int8 rows first get their scale.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/lowp/lowp_impl.h"

void spp_lowp_release(struct spp_lowp_w *w)
{
	if (!w)
		return;
	spp_buffer_free(w->ptr);
	spp_buffer_free(w->col);
	spp_buffer_free(w->pos);
	spp_buffer_free(w->mask);
	spp_buffer_free(w->val);
	spp_buffer_free(w->scale);
	spp_buffer_free(w->qsum);
	memset(w, 0, sizeof(*w));
}

/* Store v as value `at` of w (converted to w's precision; int8 with row i's scale). */
static void put(struct spp_lowp_w *w, int64_t at, int64_t i, float v)
{
	if (w->prec == SPP_PREC_INT8) {
		int8_t q = spp_int8_quantize(v, w->scale[i]);

		((int8_t *)w->val)[at] = q;
		w->qsum[i] += q;
	} else {
		((uint16_t *)w->val)[at] = w->prec == SPP_PREC_BF16 ? spp_f32_to_bf16(v)
								     : spp_f32_to_f16(v);
	}
}

/* Stored entries of row i, and the first column of each (csr: non-zeros; bsr1x4: blocks). */
static int64_t row_units(const struct spp_lowp_w *w, const float *row, int32_t *first)
{
	int64_t u = 0, step = w->format == SPP_LOWP_BSR1X4 ? 4 : 1;

	for (int64_t j = 0; j < w->k; j += step) {
		int any = 0;

		for (int64_t q = j; q < j + step && q < w->k; q++)
			any |= row[q] != 0.0f;
		if (any) {
			if (first)
				first[u] = (int32_t)j;
			u++;
		}
	}
	return u;
}

static int encode_rows(struct spp_lowp_w *w, const struct spp_matrix *m, struct spp_error *err)
{
	int64_t units = 0, per = w->format == SPP_LOWP_BSR1X4 ? 4 : 1;
	size_t vb = (size_t)spp_prec_info(w->prec)->value_bytes;

	for (int64_t i = 0; i < w->m; i++)
		units += row_units(w, m->v + i * w->k, NULL);
	if (units * per > INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "lowp: %lld entries exceed the int32 offsets",
				     (long long)(units * per));
	w->ptr = spp_buffer_alloc((size_t)(w->m + 1) * 4);
	w->col = spp_buffer_alloc((size_t)units * 4);
	w->val = spp_buffer_alloc((size_t)(units * per) * vb);
	if (!w->ptr || !w->col || !w->val)
		return spp_error_set(err, SPP_E_NOMEM, "lowp: cannot allocate %lld entries",
				     (long long)units);
	units = 0;
	for (int64_t i = 0; i < w->m; i++) {
		const float *row = m->v + i * w->k;
		int64_t u = row_units(w, row, w->col + units);

		w->ptr[i] = (int32_t)units;
		for (int64_t t = units; t < units + u; t++)
			for (int64_t q = 0; q < per; q++) {
				int64_t c = w->col[t] + q;

				put(w, t * per + q, i, c < w->k ? row[c] : 0.0f);
			}
		units += u;
	}
	w->ptr[w->m] = (int32_t)units;
	w->bytes = (uint64_t)(units * per) * vb + (uint64_t)units * 4 + (uint64_t)(w->m + 1) * 4;
	return 0;
}

/* nm: a group's non-zeros in its first slots, in column order; the rest value 0 at position 0. */
static int encode_nm(struct spp_lowp_w *w, const struct spp_matrix *m, struct spp_error *err)
{
	int64_t groups = (w->k + w->group - 1) / w->group;
	uint64_t bad = 0;
	size_t vb = (size_t)spp_prec_info(w->prec)->value_bytes;
	int rc;

	bad = spp_nm_violations(m, w->keep, w->group);
	rc = spp_nm_check(w->keep, w->group, spp_nm_groups(w->m, w->k, w->group), bad, err);
	if (rc)
		return rc;
	w->stride = (groups * w->keep + 3) / 4 * 4;
	w->pos = spp_buffer_alloc((size_t)(w->m * w->stride));
	w->val = spp_buffer_alloc((size_t)(w->m * w->stride) * vb);
	if (!w->pos || !w->val)
		return spp_error_set(err, SPP_E_NOMEM, "lowp: cannot allocate %lld slots",
				     (long long)(w->m * w->stride));
	for (int64_t i = 0; i < w->m; i++) {
		const float *row = m->v + i * w->k;

		for (int64_t g = 0; g < groups; g++) {
			int64_t s = i * w->stride + g * w->keep;

			for (int64_t c = g * w->group; c < (g + 1) * w->group && c < w->k; c++)
				if (row[c] != 0.0f) {
					w->pos[s] = (uint8_t)(c - g * w->group);
					put(w, s++, i, row[c]);
				}
		}
	}
	w->bytes = (uint64_t)(w->m * w->stride) * (vb + 1);
	return 0;
}

static int encode_bitmask(struct spp_lowp_w *w, const struct spp_matrix *m, struct spp_error *err)
{
	size_t vb = (size_t)spp_prec_info(w->prec)->value_bytes;
	int64_t t = 0;

	if (w->nnz > INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "lowp: %lld non-zeros exceed the int32 offsets",
				     (long long)w->nnz);
	w->mstride = (w->k + 15) / 16 * 2;
	w->mask = spp_buffer_alloc((size_t)(w->m * w->mstride));
	w->ptr = spp_buffer_alloc((size_t)(w->m + 1) * 4);
	w->val = spp_buffer_alloc((size_t)w->nnz * vb);
	if (!w->mask || !w->ptr || !w->val)
		return spp_error_set(err, SPP_E_NOMEM, "lowp: cannot allocate %lld non-zeros",
				     (long long)w->nnz);
	for (int64_t i = 0; i < w->m; i++) {
		w->ptr[i] = (int32_t)t;
		for (int64_t c = 0; c < w->k; c++)
			if (m->v[i * w->k + c] != 0.0f) {
				w->mask[i * w->mstride + c / 8] |= (uint8_t)(1u << (c % 8));
				put(w, t++, i, m->v[i * w->k + c]);
			}
	}
	w->ptr[w->m] = (int32_t)t;
	w->bytes = (uint64_t)w->nnz * vb + (uint64_t)(w->m * w->mstride) + (uint64_t)(w->m + 1) * 4;
	return 0;
}

int spp_lowp_encode(enum spp_lowp_format f, enum spp_prec p, const struct spp_matrix *w,
		    struct spp_lowp_w *out, struct spp_error *err)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if ((unsigned)f >= SPP_LOWP_NFORMATS || (p != SPP_PREC_BF16 && p != SPP_PREC_FP16 &&
						 p != SPP_PREC_INT8))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "lowp: no %s kernels in %s (fp32 is kernels/cpu's)",
				     spp_lowp_format_name(f) ? spp_lowp_format_name(f) : "?",
				     spp_prec_info(p) ? spp_prec_info(p)->name : "?");
	/* the vector kernels sum q * u (u = x's code + 128) in int32 */
	if (p == SPP_PREC_INT8 && w->k > INT32_MAX / (127 * 255))
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "lowp: int8 with k = %lld overflows the int32 sums (k <= %d)",
				     (long long)w->k, INT32_MAX / (127 * 255));
	out->format = f;
	out->prec = p;
	out->m = w->m;
	out->k = w->k;
	for (int64_t i = 0; i < w->m * w->k; i++)
		out->nnz += w->v[i] != 0.0f;
	if (p == SPP_PREC_INT8) {
		out->scale = spp_buffer_alloc((size_t)w->m * 4);
		out->qsum = spp_buffer_alloc((size_t)w->m * 4);
		if (!out->scale || !out->qsum) {
			rc = spp_error_set(err, SPP_E_NOMEM, "lowp: cannot allocate %lld row scales",
					   (long long)w->m);
			goto out;
		}
		for (int64_t i = 0; i < w->m; i++)
			out->scale[i] = spp_int8_scale(w->v + i * w->k, w->k);
	}
	if (f == SPP_LOWP_NM2_4 || f == SPP_LOWP_NM4_8) {
		out->keep = f == SPP_LOWP_NM2_4 ? 2 : 4;
		out->group = f == SPP_LOWP_NM2_4 ? 4 : 8;
		rc = encode_nm(out, w, err);
	} else if (f == SPP_LOWP_BITMASK) {
		rc = encode_bitmask(out, w, err);
	} else {
		rc = encode_rows(out, w, err);
	}
	if (!rc && p == SPP_PREC_INT8)
		out->bytes += (uint64_t)w->m * 8;
out:
	if (rc)
		spp_lowp_release(out);
	return rc;
}
