/* Host side of the CUDA backend that needs no device; see host.h. */
#include "kernels/cuda/host.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float spp_round_fp16(float f)
{
	return spp_f16_to_f32(spp_f32_to_f16(f));
}

/* Keep the top bits of f's mantissa, dropping `drop` bits with round to nearest even (tf32). */
static float round_mantissa(float f, int drop)
{
	uint32_t x, half = (1u << (drop - 1)) - 1u;

	if (isnan(f))
		return f;
	memcpy(&x, &f, sizeof(x));
	x += half + ((x >> drop) & 1u);
	x &= ~((1u << drop) - 1u);
	memcpy(&f, &x, sizeof(f));
	return f;
}

float spp_round_bf16(float f)
{
	return spp_bf16_to_f32(spp_f32_to_bf16(f));
}

float spp_round_tf32(float f)
{
	return round_mantissa(f, 13);
}

void spp_nm_tc_release(struct spp_nm_tc *t)
{
	if (!t)
		return;
	free(t->a);
	free(t->e);
	t->a = NULL;
	t->e = NULL;
}

/* The kept columns (0..3) of W's row r, chunk starting at column c0: the nibble and the two values. */
static int chunk_pick(const struct spp_matrix *w, int64_t r, int64_t c0, unsigned *nib,
		      uint16_t v[2])
{
	int idx[4], n = 0;

	v[0] = v[1] = 0;
	if (r >= w->m) {
		*nib = 0u | 1u << 2; /* padding rows: indices 0 and 1, both values zero */
		return 0;
	}
	for (int i = 0; i < 4 && c0 + i < w->k; i++)
		if (w->v[r * w->k + c0 + i] != 0.0f) {
			if (n == 2)
				return -1;
			idx[n++] = i;
		}
	/* fewer than two: pad with a distinct, increasing index holding zero */
	if (n == 0) {
		idx[0] = 0;
		idx[1] = 1;
	} else if (n == 1) {
		if (idx[0] == 3) {
			idx[1] = 3;
			idx[0] = 2;
			v[1] = spp_f32_to_f16(w->v[r * w->k + c0 + 3]);
		} else {
			v[0] = spp_f32_to_f16(w->v[r * w->k + c0 + idx[0]]);
			idx[1] = idx[0] + 1;
		}
	} else {
		v[0] = spp_f32_to_f16(w->v[r * w->k + c0 + idx[0]]);
		v[1] = spp_f32_to_f16(w->v[r * w->k + c0 + idx[1]]);
	}
	*nib = (unsigned)idx[0] | (unsigned)idx[1] << 2;
	return 0;
}

int spp_nm_tc_encode(const struct spp_matrix *w, struct spp_nm_tc *out, struct spp_error *err)
{
	int64_t nnz = 0, tiles;
	int rc;

	memset(out, 0, sizeof(*out));
	out->m = w->m;
	out->k = w->k;
	out->mtiles = (w->m + 15) / 16;
	out->ktiles = (w->k + 31) / 32;
	tiles = out->mtiles * out->ktiles;
	/* the kernel indexes tiles * 32 lanes * 4 registers with 32-bit grid figures */
	if (out->mtiles > INT32_MAX / 16 || out->ktiles > INT32_MAX / 32 ||
	    tiles > INT32_MAX / 128)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "%lld x %lld is too large for the 2:4 tensor-core kernel",
				     (long long)w->m, (long long)w->k);
	/* W must fit fp16 and be 2:4 (the N:M rule, kernels.h): checked before anything is allocated */
	for (int64_t r = 0; r < w->m; r++)
		for (int64_t c0 = 0; c0 < w->k; c0 += 4) {
			int n = 0;

			for (int64_t c = c0; c < c0 + 4 && c < w->k; c++) {
				float v = w->v[r * w->k + c];

				if (v == 0.0f)
					continue;
				n++;
				if (!(fabsf(v) <= SPP_FP16_MAX)) {
					memset(out, 0, sizeof(*out));
					return spp_error_set(err, SPP_E_UNSUPPORTED,
							     "W[%lld][%lld] = %g is beyond fp16's range",
							     (long long)r, (long long)c, (double)v);
				}
			}
			nnz += n;
		}
	rc = spp_nm_check(2, 4, spp_nm_groups(w->m, w->k, 4), spp_nm_violations(w, 2, 4), err);
	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	out->nnz = nnz;
	out->a = malloc(sizeof(uint32_t) * (size_t)(tiles ? tiles : 1) * 128);
	out->e = malloc(sizeof(uint32_t) * (size_t)(tiles ? tiles : 1) * 32);
	if (!out->a || !out->e) {
		spp_nm_tc_release(out);
		return spp_error_set(err, SPP_E_NOMEM, "2:4 tensor-core tiles of %lld x %lld",
				     (long long)w->m, (long long)w->k);
	}
	for (int64_t mt = 0; mt < out->mtiles; mt++)
		for (int64_t kt = 0; kt < out->ktiles; kt++)
			for (int lane = 0; lane < 32; lane++) {
				int64_t tile = mt * out->ktiles + kt;
				int g = lane / 4, t = lane % 4;
				uint32_t meta = 0;

				for (int j = 0; j < 4; j++) {
					int64_t r = mt * 16 + g + 8 * (j % 2);
					int64_t c0 = kt * 32 + 4 * (t + 4 * (j / 2));
					unsigned nib;
					uint16_t v[2];

					chunk_pick(w, r, c0, &nib, v); /* cannot fail: checked above */
					out->a[(tile * 32 + lane) * 4 + j] = (uint32_t)v[0] | (uint32_t)v[1] << 16;
				}
				/* lanes t and t ^ 2 carry the metadata of chunks 4 * (t % 2) .. + 3 */
				for (int c = 0; c < 4; c++)
					for (int half = 0; half < 2; half++) {
						int64_t r = mt * 16 + g + 8 * half;
						int64_t c0 = kt * 32 + 4 * (4 * (t % 2) + c);
						unsigned nib;
						uint16_t v[2];

						chunk_pick(w, r, c0, &nib, v);
						meta |= (uint32_t)nib << (16 * half + 4 * c);
					}
				out->e[tile * 32 + lane] = meta;
			}
	return 0;
}

int spp_nm_tc_decode(const struct spp_nm_tc *t, float *w)
{
	memset(w, 0, sizeof(float) * (size_t)(t->m * t->k));
	for (int64_t mt = 0; mt < t->mtiles; mt++)
		for (int64_t kt = 0; kt < t->ktiles; kt++)
			for (int lane = 0; lane < 32; lane++) {
				int64_t tile = mt * t->ktiles + kt;
				int g = lane / 4, q = lane % 4;

				for (int j = 0; j < 4; j++) {
					int half = j % 2, chunk = q + 4 * (j / 2);
					int64_t r = mt * 16 + g + 8 * half;
					/* the metadata of this chunk sits in lane 4g + chunk / 4 */
					uint32_t meta = t->e[tile * 32 + 4 * g + chunk / 4];
					unsigned nib = (meta >> (16 * half + 4 * (chunk % 4))) & 0xfu;
					unsigned i0 = nib & 3u, i1 = nib >> 2;
					uint32_t reg = t->a[(tile * 32 + lane) * 4 + j];
					int64_t c0 = kt * 32 + 4 * chunk;

					if (i0 >= i1)
						return -1;
					if (r >= t->m)
						continue;
					if (c0 + i0 < t->k)
						w[r * t->k + c0 + i0] = spp_f16_to_f32((uint16_t)(reg & 0xffffu));
					if (c0 + i1 < t->k)
						w[r * t->k + c0 + i1] = spp_f16_to_f32((uint16_t)(reg >> 16));
				}
			}
	return 0;
}

double spp_cuda_rows_imbalance(const struct spp_matrix *w, int rows)
{
	int64_t blocks = (w->m + rows - 1) / rows, max = 0, total = 0;

	for (int64_t b = 0; b < blocks; b++) {
		int64_t n = 0;

		for (int64_t r = b * rows; r < w->m && r < (b + 1) * rows; r++)
			for (int64_t c = 0; c < w->k; c++)
				n += w->v[r * w->k + c] != 0.0f;
		max = n > max ? n : max;
		total += n;
	}
	if (total == 0)
		return NAN;
	return (double)max / ((double)total / (double)blocks);
}

double spp_cuda_chunk_imbalance(int64_t nnz, int64_t chunk)
{
	int64_t blocks = (nnz + chunk - 1) / chunk;

	if (nnz <= 0)
		return NAN;
	/* every block but the last holds a full chunk */
	return (double)(nnz < chunk ? nnz : chunk) / ((double)nnz / (double)blocks);
}

int spp_cuda_precision_rounds(const char *precision)
{
	return strcmp(precision, "fp16") == 0 || strcmp(precision, "bf16") == 0;
}

double spp_cuda_precision_rtol(const char *precision, double fp32_rtol)
{
	if (spp_cuda_precision_rounds(precision))
		return SPP_CUDA_RTOL_HALF;
	if (strcmp(precision, "tf32") == 0)
		return SPP_CUDA_RTOL_TF32;
	return fp32_rtol;
}

int spp_cuda_reference(const struct spp_matrix *w, const float *x, int64_t n,
		       const char *precision, double *y, struct spp_error *err)
{
	float (*rnd)(float) = strcmp(precision, "bf16") == 0 ? spp_round_bf16 : spp_round_fp16;
	float *xr = malloc(sizeof(float) * (size_t)(w->k * n > 0 ? w->k * n : 1));

	if (!xr)
		return spp_error_set(err, SPP_E_NOMEM, "%s reference: x of %lld values", precision,
				     (long long)(w->k * n));
	for (int64_t i = 0; i < w->k * n; i++) {
		xr[i] = rnd(x[i]);
		if (!isfinite(xr[i]) && isfinite(x[i])) {
			free(xr);
			return spp_error_set(err, SPP_E_UNSUPPORTED, "X[%lld][%lld] = %g is beyond %s's range",
					     (long long)(i / n), (long long)(i % n), (double)x[i], precision);
		}
	}
	memset(y, 0, sizeof(double) * (size_t)(w->m * n));
	for (int64_t r = 0; r < w->m; r++)
		for (int64_t c = 0; c < w->k; c++) {
			float v = w->v[r * w->k + c];
			double wr;

			if (v == 0.0f)
				continue;
			wr = rnd(v);
			if (!isfinite(wr)) {
				free(xr);
				return spp_error_set(err, SPP_E_UNSUPPORTED, "W[%lld][%lld] = %g is beyond %s's range",
						     (long long)r, (long long)c, (double)v, precision);
			}
			for (int64_t j = 0; j < n; j++)
				y[r * n + j] += wr * xr[c * n + j];
		}
	free(xr);
	return 0;
}
