/*
 * oneDNN's matmul primitive as a low-precision dense baseline
 * (lowp_dense.h): Y^T = X^T * W^T, W^T the weights in the blocked layout
 * oneDNN picks (format_tag any), reordered once at prepare (N = 64) and
 * once more for each other layout a run's N makes it pick; int8 with the
 * per-row scales of W times X's scale as per-column output scales, fixed
 * in the primitive (2.6's brgemm kernels refuse run-time scales and fall
 * to gemm:jit), and X's zero point as the source's, given at run time.
 * One primitive per (N, threads, X signedness, X's scale), kept: oneDNN's
 * OpenMP kernels size their partition by the thread count when the
 * primitive is made, and a deployed layer's X has one scale.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels/dense/dense_impl.h"
#include "kernels/dense/lowp_dense.h"

#if HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#define CACHE 4
#define LAYOUTS 4

struct prim {
	dnnl_primitive_t p;
	dnnl_memory_t src, dst;
	dnnl_memory_t wei;              /* borrowed from struct dn's wmem */
	int64_t n;
	int threads, is_unsigned, nk;
	float scale_x;
};

struct dn {
	dnnl_engine_t eng;
	dnnl_stream_t stream;
	/*
	 * W reordered, once per layout oneDNN asks for: its kernels pick the
	 * layout by shape and by X's signedness (u8 with a zero point adds a
	 * compensation), so a small N may want another than N = 64's
	 */
	dnnl_memory_t wmem[LAYOUTS];
	int nw;
	dnnl_memory_t zp;               /* int8: the source's zero point */
	float *scale_v;                 /* int8: the output scales for the X of the run */
	int32_t zp_v;
	struct prim cache[CACHE];
	int next;
	void *xt;                       /* int8 X^T at N > 1 */
	float *yt;                      /* Y^T at N > 1 */
	size_t xt_cap, yt_cap;
};

static dnnl_data_type_t dt_of(enum spp_prec p, int is_unsigned)
{
	return p == SPP_PREC_BF16 ? dnnl_bf16 : p == SPP_PREC_FP16 ? dnnl_f16 : is_unsigned ? dnnl_u8 : dnnl_s8;
}

static int fail(struct spp_error *err, int code, const char *what, dnnl_status_t s)
{
	return spp_error_set(err, code, "oneDNN: %s: %s", what, dnnl_status2str(s));
}

static int open_dn(struct spp_dense_lowp *c, struct spp_error *err)
{
	const dnnl_version_t *v = dnnl_version();
	struct dn *d = calloc(1, sizeof(*d));
	dnnl_status_t s;

	if (!d)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	c->priv = d;
	snprintf(c->version, sizeof(c->version), "%d.%d.%d", v->major, v->minor, v->patch);
	snprintf(c->isa, sizeof(c->isa), "%s", spp_dense_onednn_isa((int)dnnl_get_effective_cpu_isa()));
	if ((s = dnnl_engine_create(&d->eng, dnnl_cpu, 0)) != dnnl_success)
		return fail(err, SPP_E_UNSUPPORTED, "no CPU engine", s);
	if ((s = dnnl_stream_create(&d->stream, d->eng, dnnl_stream_default_flags)) != dnnl_success)
		return fail(err, SPP_E_RUNTIME, "no stream", s);
	return SPP_OK;
}

/*
 * The matmul's primitive descriptor at n for c, on the calling thread
 * count, weights in the layout it picks (format any), int8 with the
 * output scales `scales` (NULL: W's own, for a layout only). 0, or
 * SPP_E_UNSUPPORTED naming what oneDNN lacks for the precision on its ISA.
 */
static int make_pd(const struct spp_dense_lowp *c, int64_t n, int is_unsigned, int strided, const float *scales,
		   dnnl_primitive_desc_t *pd, struct spp_error *err)
{
	dnnl_memory_desc_t src, wei, dst;
	dnnl_dims_t sd = {n, c->w.k}, wd = {c->w.k, c->w.m}, dd = {n, c->w.m}, xstr = {1, n};
	dnnl_matmul_desc_t md;
	dnnl_primitive_attr_t attr = NULL;
	int32_t rz = DNNL_RUNTIME_S32_VAL;
	dnnl_status_t s;
	dnnl_data_type_t t = dt_of(c->prec, is_unsigned);

	/* X (K x N) read in place as X^T (strided) for bf16 and fp16; int8 from a transposed copy */
	if (strided)
		dnnl_memory_desc_init_by_strides(&src, 2, sd, t, xstr);
	else
		dnnl_memory_desc_init_by_tag(&src, 2, sd, t, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&wei, 2, wd, c->prec == SPP_PREC_INT8 ? dnnl_s8 : t, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&dst, 2, dd, dnnl_f32, dnnl_ab);
	if ((s = dnnl_matmul_desc_init(&md, &src, &wei, NULL, &dst)) != dnnl_success)
		return fail(err, SPP_E_UNSUPPORTED, "matmul", s);
	if ((s = dnnl_primitive_attr_create(&attr)) != dnnl_success)
		return fail(err, SPP_E_NOMEM, "attributes", s);
	/* the zero point at run time: one DNNL_RUNTIME_S32_VAL, count 1 */
	if (c->prec == SPP_PREC_INT8)
		s = dnnl_primitive_attr_set_output_scales(attr, c->w.m, 1 << 1, scales ? scales : c->w.scale);
	if (s == dnnl_success && c->prec == SPP_PREC_INT8 && is_unsigned)
		s = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rz);
	if (s == dnnl_success)
		s = dnnl_primitive_desc_create(pd, &md, attr, c->priv ? ((const struct dn *)c->priv)->eng : NULL, NULL);
	dnnl_primitive_attr_destroy(attr);
	if (s == dnnl_unimplemented)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "oneDNN %s has no %s%s matmul on %s", c->version,
				     c->prec == SPP_PREC_INT8 ? (is_unsigned ? "u8 x " : "s8 x ") : "",
				     c->prec == SPP_PREC_INT8 ? "s8" : spp_prec_name(c->prec), c->isa);
	if (s != dnnl_success)
		return fail(err, SPP_E_UNSUPPORTED, "matmul primitive", s);
	return SPP_OK;
}

static const char *impl_of(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;

	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
		return "?";
	return impl;
}

/* W^T (plain: W row-major) reordered into the layout md, kept in d->wmem: *out. 0 or status. */
static int weights_for(struct spp_dense_lowp *c, const dnnl_memory_desc_t *md, dnnl_memory_t *out,
		       struct spp_error *err)
{
	struct dn *d = c->priv;
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t r = NULL;
	dnnl_memory_desc_t plain;
	dnnl_dims_t wd = {c->w.k, c->w.m};
	dnnl_memory_t wsrc = NULL, wdst = NULL;
	void *wv = c->prec == SPP_PREC_INT8 ? (void *)c->w.q : (void *)c->w.h;
	dnnl_status_t s;

	for (int i = 0; i < d->nw; i++) {
		const dnnl_memory_desc_t *have = NULL;

		if (dnnl_memory_get_memory_desc(d->wmem[i], &have) == dnnl_success && dnnl_memory_desc_equal(have, md)) {
			*out = d->wmem[i];
			return SPP_OK;
		}
	}
	if (d->nw == LAYOUTS)
		return spp_error_set(err, SPP_E_RUNTIME, "oneDNN asked for more than %d layouts of W", LAYOUTS);
	dnnl_memory_desc_init_by_tag(&plain, 2, wd, c->prec == SPP_PREC_INT8 ? dnnl_s8 : dt_of(c->prec, 0), dnnl_ba);
	s = dnnl_memory_create(&wdst, md, d->eng, DNNL_MEMORY_ALLOCATE);
	if (s == dnnl_success)
		s = dnnl_memory_create(&wsrc, &plain, d->eng, wv);
	if (s == dnnl_success)
		s = dnnl_reorder_primitive_desc_create(&rpd, &plain, d->eng, md, d->eng, NULL);
	if (s == dnnl_success)
		s = dnnl_primitive_create(&r, rpd);
	if (s == dnnl_success) {
		dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, wsrc}, {DNNL_ARG_TO, wdst}};

		s = dnnl_primitive_execute(r, d->stream, 2, args);
		if (s == dnnl_success)
			s = dnnl_stream_wait(d->stream);
	}
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(wsrc);
	if (s != dnnl_success) {
		dnnl_memory_destroy(wdst);
		return fail(err, SPP_E_RUNTIME, "the weights' reorder", s);
	}
	d->wmem[d->nw++] = *out = wdst;
	return SPP_OK;
}

/* W in the layout of a matmul at N = 64, the common case, made at prepare. */
static int reorder_w(struct spp_dense_lowp *c, int is_unsigned, struct spp_error *err)
{
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_t m;
	int rc;

	if ((rc = make_pd(c, 64, is_unsigned, c->prec != SPP_PREC_INT8, NULL, &pd, err)) != SPP_OK)
		return rc;
	snprintf(c->impl, sizeof(c->impl), "%s", impl_of(pd));
	rc = weights_for(c, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &m, err);
	dnnl_primitive_desc_destroy(pd);
	return rc;
}

static int prepare(struct spp_dense_lowp *c, struct spp_error *err)
{
	struct dn *d = c->priv;
	dnnl_memory_desc_t zmd;
	dnnl_dims_t zdim = {1};
	int before = omp_get_max_threads(), rc = SPP_OK;

	for (int u = 0; u < (c->prec == SPP_PREC_INT8 ? 2 : 1) && rc == SPP_OK; u++)
		rc = reorder_w(c, u, err);
	omp_set_num_threads(before);
	if (rc != SPP_OK || c->prec != SPP_PREC_INT8)
		return rc;
	if (!(d->scale_v = malloc(sizeof(float) * (size_t)c->w.m)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the scales");
	dnnl_memory_desc_init_by_tag(&zmd, 1, zdim, dnnl_s32, dnnl_a);
	if (dnnl_memory_create(&d->zp, &zmd, d->eng, &d->zp_v) != dnnl_success)
		return spp_error_set(err, SPP_E_NOMEM, "oneDNN: cannot make the zero point's memory");
	return SPP_OK;
}

/* Whether X K x N is read in place as a strided X^T (bf16, fp16); else X^T is contiguous. */
static int strided(const struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x)
{
	return !x->nk && x->n > 1 && c->prec != SPP_PREC_INT8;
}

/* The primitive for x's N, layout, threads and signedness: the kept one or a new one. */
static int get_prim(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, int threads,
		    struct prim **out, struct spp_error *err)
{
	struct dn *d = c->priv;
	int u = x->is_unsigned, rc;
	struct prim *p;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_status_t s;

	for (int i = 0; i < CACHE; i++)
		if (d->cache[i].p && d->cache[i].n == x->n && d->cache[i].threads == threads &&
		    d->cache[i].is_unsigned == u && d->cache[i].scale_x == x->scale && d->cache[i].nk == x->nk) {
			*out = &d->cache[i];
			return SPP_OK;
		}
	p = &d->cache[d->next];
	d->next = (d->next + 1) % CACHE;
	dnnl_primitive_destroy(p->p);
	dnnl_memory_destroy(p->src);
	dnnl_memory_destroy(p->dst);
	memset(p, 0, sizeof(*p));
	if (c->prec == SPP_PREC_INT8)
		for (int64_t i = 0; i < c->w.m; i++)
			d->scale_v[i] = c->w.scale[i] * x->scale;
	/* the weights' layout oneDNN wants at this N: one reordered before, or reordered now, once */
	if ((rc = make_pd(c, x->n, u, strided(c, x), d->scale_v, &pd, err)) != SPP_OK)
		return rc;
	if ((rc = weights_for(c, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &p->wei, err))) {
		dnnl_primitive_desc_destroy(pd);
		return rc;
	}
	snprintf(c->impl, sizeof(c->impl), "%s", impl_of(pd));
	s = dnnl_primitive_create(&p->p, pd);
	if (s == dnnl_success)
		s = dnnl_memory_create(&p->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), d->eng,
				       DNNL_MEMORY_NONE);
	if (s == dnnl_success)
		s = dnnl_memory_create(&p->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), d->eng,
				       DNNL_MEMORY_NONE);
	dnnl_primitive_desc_destroy(pd);
	if (s != dnnl_success) {
		dnnl_primitive_destroy(p->p);
		dnnl_memory_destroy(p->src);
		memset(p, 0, sizeof(*p));
		return fail(err, SPP_E_RUNTIME, "matmul primitive", s);
	}
	p->n = x->n;
	p->threads = threads;
	p->is_unsigned = u;
	p->scale_x = x->scale;
	p->nk = x->nk;
	*out = p;
	return SPP_OK;
}

/* *buf holds at least `bytes`, grown as needed. 0 or SPP_E_NOMEM. */
static int reserve(void **buf, size_t *cap, size_t bytes, struct spp_error *err)
{
	void *p;

	if (*cap >= bytes)
		return SPP_OK;
	if (!(p = aligned_alloc(64, (bytes + 63) / 64 * 64)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for a transposed copy");
	free(*buf);
	*buf = p;
	*cap = bytes;
	return SPP_OK;
}

/*
 * dst (cols x rows) = src (rows x cols)^T by 16 x 16 tiles (one cache line
 * of floats each way), tiles split between the threads where there are
 * enough of them to pay for the fork.
 */
#define TRANSPOSE(name, type)                                                                     \
	static void name(const void *src_, void *dst_, int64_t rows, int64_t cols, int threads)    \
	{                                                                                         \
		const type *src = src_;                                                           \
		type *dst = dst_;                                                                 \
		int64_t tiles = (rows + 15) / 16;                                                 \
		int nt = rows * cols >= (1 << 16) ? threads : 1;                                  \
                                                                                                  \
		_Pragma("omp parallel for num_threads(nt) schedule(static) if (nt > 1)")          \
		for (int64_t t = 0; t < tiles; t++) {                                             \
			int64_t i1 = t * 16 + 16 < rows ? t * 16 + 16 : rows;                     \
                                                                                                  \
			for (int64_t j0 = 0; j0 < cols; j0 += 16) {                               \
				int64_t j1 = j0 + 16 < cols ? j0 + 16 : cols;                     \
                                                                                                  \
				for (int64_t j = j0; j < j1; j++)                                 \
					for (int64_t i = t * 16; i < i1; i++)                     \
						dst[j * rows + i] = src[i * cols + j];            \
			}                                                                         \
		}                                                                                 \
	}

TRANSPOSE(transpose_f32, float)
TRANSPOSE(transpose_u8, uint8_t)

static int run(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y, int threads,
	       struct spp_error *err)
{
	struct dn *d = c->priv;
	struct prim *p = NULL;
	int before = omp_get_max_threads(), rc, nargs = 3, int8 = c->prec == SPP_PREC_INT8;
	const void *src = x->v;
	float *dst = y;
	dnnl_exec_arg_t args[6];
	dnnl_status_t s;
	size_t ybytes;

	/* oneDNN's OpenMP regions, and its partition when the primitive is made, take this count */
	omp_set_num_threads(threads);
	rc = get_prim(c, x, threads, &p, err);
	if (rc == SPP_OK && x->n > 1 && !x->nk) {
		if (__builtin_mul_overflow((size_t)c->w.m, (size_t)x->n * sizeof(float), &ybytes))
			rc = spp_error_set(err, SPP_E_USAGE, "Y too large");
		if (rc == SPP_OK)
			rc = reserve((void **)&d->yt, &d->yt_cap, ybytes, err);
		if (rc == SPP_OK && int8 && !(rc = reserve(&d->xt, &d->xt_cap, (size_t)(x->k * x->n), err))) {
			transpose_u8(x->v, d->xt, x->k, x->n, threads);
			src = d->xt;
		}
		dst = d->yt;
	}
	if (rc != SPP_OK) {
		omp_set_num_threads(before);
		return rc;
	}
	dnnl_memory_set_data_handle(p->src, (void *)src);
	dnnl_memory_set_data_handle(p->dst, dst);
	args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, p->src};
	args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, p->wei};
	args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, p->dst};
	if (int8 && x->is_unsigned) {
		d->zp_v = x->zero_point;
		args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, d->zp};
	}
	s = dnnl_primitive_execute(p->p, d->stream, nargs, args);
	if (s == dnnl_success)
		s = dnnl_stream_wait(d->stream);
	if (s == dnnl_success && x->n > 1 && !x->nk)
		transpose_f32(d->yt, y, x->n, c->w.m, threads);
	omp_set_num_threads(before);
	return s == dnnl_success ? SPP_OK : fail(err, SPP_E_RUNTIME, "matmul", s);
}

static void close_dn(struct spp_dense_lowp *c)
{
	struct dn *d = c->priv;

	if (!d)
		return;
	for (int i = 0; i < CACHE; i++) {
		dnnl_primitive_destroy(d->cache[i].p);
		dnnl_memory_destroy(d->cache[i].src);
		dnnl_memory_destroy(d->cache[i].dst);
	}
	for (int i = 0; i < d->nw; i++)
		dnnl_memory_destroy(d->wmem[i]);
	dnnl_memory_destroy(d->zp);
	dnnl_stream_destroy(d->stream);
	dnnl_engine_destroy(d->eng);
	free(d->scale_v);
	free(d->xt);
	free(d->yt);
	free(d);
	c->priv = NULL;
}
#else
static int open_dn(struct spp_dense_lowp *c, struct spp_error *err)
{
	(void)c;
	return spp_dense_not_built(err, "meson found no oneDNN: Debian's libdnnl-dev");
}

static int prepare(struct spp_dense_lowp *c, struct spp_error *err)
{
	(void)c;
	return spp_dense_not_built(err, "no oneDNN");
}

static int run(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y, int threads,
	       struct spp_error *err)
{
	(void)c, (void)x, (void)y, (void)threads;
	return spp_dense_not_built(err, "no oneDNN");
}

#define close_dn NULL
#endif

const struct spp_dense_lowp_lib spp_dense_lowp_onednn = {
	.key = "onednn",
	.name = "oneDNN matmul",
	.open = open_dn,
	.prepare = prepare,
	.run = run,
	.close = close_dn,
};
