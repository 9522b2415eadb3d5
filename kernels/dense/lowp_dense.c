/*
 * The low-precision dense baselines around their libraries
 * (lowp_dense.h): the precisions' values, W's and X's quantization, the
 * double reference, the check, and the candidate's lifecycle. The
 * libraries' own code is in onednn_matmul.c and openblas_sbgemm.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "kernels/dense/lowp_dense.h"

extern const struct spp_dense_lowp_lib spp_dense_lowp_onednn, spp_dense_lowp_openblas;

const struct spp_dense_lowp_lib *const spp_dense_lowp_libs[] = {
	&spp_dense_lowp_onednn,
	&spp_dense_lowp_openblas,
	NULL,
};

const struct spp_dense_lowp_lib *spp_dense_lowp_lib_find(const char *key)
{
	for (int i = 0; spp_dense_lowp_libs[i]; i++)
		if (strcmp(spp_dense_lowp_libs[i]->key, key) == 0)
			return spp_dense_lowp_libs[i];
	return NULL;
}

/* m * k elements of `size` bytes into *bytes, checked. 0 or SPP_E_USAGE. */
static int elems(int64_t m, int64_t k, size_t size, size_t *bytes, struct spp_error *err)
{
	size_t n;

	if (m <= 0 || k <= 0 || __builtin_mul_overflow((size_t)m, (size_t)k, &n) ||
	    __builtin_mul_overflow(n, size, bytes))
		return spp_error_set(err, SPP_E_USAGE, "bad matrix size %lld x %lld", (long long)m,
				     (long long)k);
	return SPP_OK;
}

/* Where element i of a row-major K x N X goes in x's layout. */
static size_t to(const struct spp_dense_lowp_x *x, size_t i)
{
	return x->nk ? i % (size_t)x->n * (size_t)x->k + i / (size_t)x->n : i;
}

int spp_dense_lowp_quantize_x(enum spp_prec p, int is_unsigned, int nk, const float *x, int64_t k,
			      int64_t n, void *v, struct spp_dense_lowp_x *out, struct spp_error *err)
{
	size_t bytes = 0, cnt;
	float lo = 0, hi = 0;

	if ((unsigned)p >= SPP_PREC_COUNT || p == SPP_PREC_FP32)
		return spp_error_set(err, SPP_E_USAGE, "precision %d: not one of bf16, fp16, int8 (fp32 is dense.h's)",
				     (int)p);
	if (elems(k, n, 1, &bytes, err))
		return SPP_E_USAGE;
	cnt = bytes;
	*out = (struct spp_dense_lowp_x){p, k, n, v, p == SPP_PREC_INT8 && is_unsigned, 1.0f, 0, nk != 0};
	if (p != SPP_PREC_INT8) {
		for (size_t i = 0; i < cnt; i++)
			((uint16_t *)v)[to(out, i)] = p == SPP_PREC_BF16 ? spp_f32_to_bf16(x[i])
									  : spp_f32_to_f16(x[i]);
		return SPP_OK;
	}
	for (size_t i = 0; i < cnt; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	if (!out->is_unsigned) {
		float m = fmaxf(-lo, hi);

		out->scale = m > 0 ? m / 127.0f : 1.0f;
		for (size_t i = 0; i < cnt; i++)
			((int8_t *)v)[to(out, i)] = (int8_t)fmaxf(-127.0f, fminf(127.0f, rintf(x[i] / out->scale)));
		return SPP_OK;
	}
	out->scale = hi - lo > 0 ? (hi - lo) / 255.0f : 1.0f;
	out->zero_point = (int32_t)fmaxf(0.0f, fminf(255.0f, rintf(-lo / out->scale)));
	for (size_t i = 0; i < cnt; i++)
		((uint8_t *)v)[to(out, i)] = (uint8_t)fmaxf(0.0f, fminf(255.0f, rintf(x[i] / out->scale) +
									  (float)out->zero_point));
	return SPP_OK;
}

/* W into c->w in c's precision (int8: per-row symmetric scales). 0 or status. */
static int quantize_w(struct spp_dense_lowp *c, const struct spp_matrix *w, struct spp_error *err)
{
	struct spp_dense_lowp_w *q = &c->w;
	size_t bytes = 0, cnt;

	if (elems(w->m, w->k, 2, &bytes, err))
		return SPP_E_USAGE;
	cnt = bytes / 2;
	q->prec = c->prec;
	q->m = w->m;
	q->k = w->k;
	if (c->prec != SPP_PREC_INT8) {
		if (!(q->h = malloc(bytes)))
			return spp_error_set(err, SPP_E_NOMEM, "out of memory for W in %s",
					     spp_prec_name(c->prec));
		for (size_t i = 0; i < cnt; i++)
			q->h[i] = c->prec == SPP_PREC_BF16 ? spp_f32_to_bf16(w->v[i])
							    : spp_f32_to_f16(w->v[i]);
		return SPP_OK;
	}
	q->q = malloc(cnt);
	q->scale = malloc(sizeof(float) * (size_t)w->m);
	if (!q->q || !q->scale)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for W in int8");
	/* the sparse kernels' quantization (kernels/lowp), so both sides compute the same W */
	for (int64_t i = 0; i < w->m; i++) {
		const float *row = w->v + i * w->k;

		q->scale[i] = spp_int8_scale(row, w->k);
		for (int64_t j = 0; j < w->k; j++)
			q->q[i * w->k + j] = spp_int8_quantize(row[j], q->scale[i]);
	}
	return SPP_OK;
}

/* x's element (r, j) as a real number; int8: the integer q - zero_point. */
static double x_at(const struct spp_dense_lowp_x *x, int64_t i)
{
	switch (x->prec) {
	case SPP_PREC_BF16: return spp_bf16_to_f32(((const uint16_t *)x->v)[i]);
	case SPP_PREC_FP16: return spp_f16_to_f32(((const uint16_t *)x->v)[i]);
	default:
		return x->is_unsigned ? (double)((const uint8_t *)x->v)[i] - x->zero_point
				      : (double)((const int8_t *)x->v)[i];
	}
}

static double w_at(const struct spp_dense_lowp_w *w, int64_t i)
{
	switch (w->prec) {
	case SPP_PREC_BF16: return spp_bf16_to_f32(w->h[i]);
	case SPP_PREC_FP16: return spp_f16_to_f32(w->h[i]);
	default: return w->q[i];
	}
}

/* Row i's sum and sum of |terms| at column j, both scaled to real values. */
static void ref_at(const struct spp_dense_lowp_w *w, const struct spp_dense_lowp_x *x, int64_t i,
		   int64_t j, double *sum, double *abs_sum)
{
	double s = 0, a = 0, scale = 1;

	for (int64_t r = 0; r < w->k; r++) {
		double t = w_at(w, i * w->k + r) * x_at(x, x->nk ? j * x->k + r : r * x->n + j);

		s += t;
		a += fabs(t);
	}
	if (w->prec == SPP_PREC_INT8)
		scale = (double)w->scale[i] * x->scale;
	*sum = s * scale;
	*abs_sum = a * scale;
}

void spp_dense_lowp_reference(const struct spp_dense_lowp_w *w, const struct spp_dense_lowp_x *x,
			      float *y)
{
	for (int64_t i = 0; i < w->m; i++)
		for (int64_t j = 0; j < x->n; j++) {
			double s, a;

			ref_at(w, x, i, j, &s, &a);
			y[x->nk ? j * w->m + i : i * x->n + j] = (float)s;
		}
}

int spp_dense_lowp_verify(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, int threads,
			  struct spp_error *err)
{
	size_t bytes = 0;
	float *y;
	double worst = 0, tol_k = c->prec == SPP_PREC_INT8 ? 1e-6 : 1e-5 + (double)c->w.k * 0x1p-23;
	int64_t wi = -1;
	double wy = 0, wr = 0;
	int rc;

	if (elems(c->w.m, x->n, sizeof(float), &bytes, err))
		return SPP_E_USAGE;
	if (!(y = malloc(bytes)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the check");
	for (size_t i = 0; i < bytes / sizeof(float); i++)
		y[i] = NAN;
	rc = spp_dense_lowp_run(c, x, y, threads, err);
	for (int64_t i = 0; rc == SPP_OK && i < c->w.m; i++)
		for (int64_t j = 0; j < x->n; j++) {
			double s, a, d, f;

			ref_at(&c->w, x, i, j, &s, &a);
			int64_t at = x->nk ? j * c->w.m + i : i * x->n + j;

			d = fabs((double)y[at] - s);
			f = d / (tol_k * a + 1e-30);
			if (!(f <= worst)) { /* NaN counts as the worst */
				worst = isnan(f) ? INFINITY : f;
				wi = at, wy = y[at], wr = s;
			}
		}
	if (rc == SPP_OK && worst > 1)
		rc = spp_error_set(err, SPP_E_VERIFY,
				   "%s %s computed wrong at %lldx%lldx%lld: y[%lld] = %g where the "
				   "double-precision reference of the same %s values gives %g",
				   c->lib->name, spp_prec_name(c->prec), (long long)c->w.m,
				   (long long)c->w.k, (long long)x->n, (long long)wi, wy,
				   spp_prec_name(c->prec), wr);
	free(y);
	return rc;
}

int spp_dense_lowp_run(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y,
		       int threads, struct spp_error *err)
{
	if (x->prec != c->prec || x->k != c->w.k || x->n <= 0 || !c->priv)
		return spp_error_set(err, SPP_E_USAGE, "%s: X is %s %lld x %lld, W %s %lld x %lld",
				     c->lib ? c->lib->name : "dense", spp_prec_name(x->prec),
				     (long long)x->k, (long long)x->n, spp_prec_name(c->prec),
				     (long long)c->w.m, (long long)c->w.k);
	return c->lib->run(c, x, y, threads > 0 ? threads : 1, err);
}

/*
 * The probe: a small product with ragged sizes, at N = 7 and 1, on 1 and
 * 2 threads, against the reference. Fills c's version, isa, impl.
 */
static int probe(struct spp_dense_lowp *c, struct spp_error *err)
{
	enum { M = 67, K = 45, N = 7 };
	struct spp_dense_lowp t = {.lib = c->lib, .prec = c->prec};
	float w[M * K], x[K * N];
	uint16_t xv[K * N];
	struct spp_matrix wm = {M, K, w};
	struct spp_dense_lowp_x xq;
	int rc;

	for (int i = 0; i < M * K; i++)
		w[i] = (float)((i * 37) % 29 - 14) / 8.0f;
	for (int i = 0; i < K * N; i++)
		x[i] = (float)((i * 11) % 17 - 5) / 4.0f;
	rc = t.lib->open(&t, err);
	if (rc == SPP_OK)
		rc = quantize_w(&t, &wm, err);
	if (rc == SPP_OK)
		rc = t.lib->prepare(&t, err);
	for (int u = 0; u < (c->prec == SPP_PREC_INT8 ? 2 : 1) && rc == SPP_OK; u++)
		for (int n = N; n >= 1 && rc == SPP_OK; n -= N - 1)
			for (int th = 1; th <= 2 && rc == SPP_OK; th++)
				for (int nk = 0; nk < 2 && rc == SPP_OK; nk++)
					if (!(rc = spp_dense_lowp_quantize_x(c->prec, u, nk, x, K, n, xv, &xq, err)))
						rc = spp_dense_lowp_verify(&t, &xq, th, err);
	snprintf(c->version, sizeof(c->version), "%s", t.version);
	snprintf(c->isa, sizeof(c->isa), "%s", t.isa);
	snprintf(c->impl, sizeof(c->impl), "%s", t.impl);
	spp_dense_lowp_close(&t);
	return rc;
}

int spp_dense_lowp_open(struct spp_dense_lowp *c, const char *key, enum spp_prec p,
			const struct spp_matrix *w, struct spp_error *err)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if ((unsigned)p >= SPP_PREC_COUNT || p == SPP_PREC_FP32)
		return spp_error_set(err, SPP_E_USAGE, "precision %d: not one of bf16, fp16, int8 (fp32 is dense.h's)",
				     (int)p);
	if (!(c->lib = spp_dense_lowp_lib_find(key)))
		return spp_error_set(err, SPP_E_USAGE, "unknown low-precision dense library '%s' "
				     "(onednn, openblas)", key);
	c->prec = p;
	if ((rc = probe(c, err)) != SPP_OK || !w)
		return rc;
	rc = c->lib->open(c, err);
	if (rc == SPP_OK)
		rc = quantize_w(c, w, err);
	if (rc == SPP_OK)
		rc = c->lib->prepare(c, err);
	if (rc != SPP_OK)
		spp_dense_lowp_close(c);
	return rc;
}

void spp_dense_lowp_close(struct spp_dense_lowp *c)
{
	if (!c)
		return;
	if (c->lib && c->lib->close)
		c->lib->close(c);
	free(c->w.h);
	free(c->w.q);
	free(c->w.scale);
	memset(&c->w, 0, sizeof(c->w));
	c->priv = NULL;
}

void spp_dense_lowp_describe(const struct spp_dense_lowp *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s %s %s (%s)", c->lib ? c->lib->name : "?", c->version[0] ? c->version : "?",
		 spp_prec_name(c->prec), c->impl[0] ? c->impl : c->isa);
}
