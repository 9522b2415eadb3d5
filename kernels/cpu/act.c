/*
 * Kernels that skip a multiplication when either operand is zero: the
 * weight's zeros by the format, the activations' zeros at run time (DESIGN
 * section 3, combined FLOPs). X changes with every call, so what is known
 * about its zeros is found inside spmm(), and that scan is part of the
 * kernel's time.
 *
 * csr_act: the csr encoding (csr.c) and its partition; each call first
 *   marks the rows of X that hold a non-zero (X is K x N: row k meets
 *   column k of W), then a non-zero w_ik whose X row is all zero costs an
 *   index and a flag, and neither the X row nor the multiply-add. At N = 1
 *   a row of X is one element, so every zero of x is skipped; at larger N
 *   only rows zero across the whole batch are (dead channels).
 * csc: W by columns, per part of rows (each thread owns its rows, so the
 *   scatter into Y needs no atomics): Y += column k of W times row k of X.
 *   The weight-only kernel of the pair.
 * csc_act: the same with every all-zero row of X skipped before its column
 *   of W is read, so the weight traffic falls with the activations' zeros.
 *
 * Vector code: one portable body compiled for AVX-512, AVX2 and plain C
 * (the inner loops over N are `omp simd`), chosen by ex->isa like the
 * other formats; csr_act at N >= 2 on AVX-512 has its own kernel
 * (act_avx512.c) on csr's register-resident segment sums.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

/* What every activation kernel adds to its weight encoding. */
struct cpu_act {
	struct spp_encoded w;   /* csr: the csr encoding (its ops are spp_cpu_csr) */
	uint8_t *xnz;           /* K flags, rewritten by each call: row k of X holds a non-zero */
	/* csc: per part p, columns of rows [lo[p], lo[p+1]) */
	int64_t *lo;            /* nparts + 1 row boundaries */
	int64_t *off;           /* nparts: first non-zero of the part */
	int32_t *cptr;          /* nparts * (K + 1) column offsets, relative to off[p] */
	int32_t *row;           /* nnz rows */
	float *val;             /* nnz values */
};

static void act_release(struct spp_encoded *e)
{
	struct cpu_act *a;

	if (!e)
		return;
	a = e->impl;
	if (a) {
		if (a->w.ops)
			a->w.ops->release(&a->w);
		spp_buffer_free(a->xnz);
		free(a->lo);
		free(a->off);
		spp_buffer_free(a->cptr);
		spp_buffer_free(a->row);
		spp_buffer_free(a->val);
	}
	cpu_release_common(e);
}

/* The flags of X's rows (K x N): 1 where the row holds a non-zero. NaN is non-zero. */
static void mark_rows(const float *x, int64_t k, int64_t n, uint8_t *xnz)
{
	for (int64_t r = 0; r < k; r++) {
		const float *xr = x + r * n;
		int any = 0;

		for (int64_t j = 0; j < n; j++)
			any |= xr[j] != 0.0f;
		xnz[r] = (uint8_t)any;
	}
}

static int act_alloc(struct spp_encoded *out, const struct spp_format_ops *ops, int64_t k,
		     struct spp_error *err)
{
	struct cpu_act *a = calloc(1, sizeof(*a));

	memset(out, 0, sizeof(*out));
	out->ops = ops;
	out->impl = a;
	if (!a || !(a->xnz = spp_buffer_alloc((size_t)(k > 0 ? k : 1))))
		return spp_error_set(err, SPP_E_NOMEM, "%s: cannot allocate the row flags of X", ops->key);
	return 0;
}

/* ---- csr_act ---- */

static int csr_act_encode(const struct spp_matrix *w, int threads, int64_t n, struct spp_encoded *out,
			  struct spp_error *err)
{
	struct cpu_act *a;
	int rc = act_alloc(out, &spp_cpu_csr_act, w->k, err);

	if (rc)
		goto fail;
	a = out->impl;
	rc = spp_cpu_csr.encode(w, threads, n, &a->w, err);
	if (rc)
		goto fail;
	out->m = a->w.m;
	out->k = a->w.k;
	out->nnz = a->w.nnz;
	out->bytes = a->w.bytes;
	/* the partition is csr's: copied, so that each encoding frees its own */
	out->part_nnz = malloc((size_t)a->w.nparts * sizeof(*out->part_nnz));
	if (!out->part_nnz) {
		rc = spp_error_set(err, SPP_E_NOMEM, "csr_act: cannot allocate the partition");
		goto fail;
	}
	memcpy(out->part_nnz, a->w.part_nnz, (size_t)a->w.nparts * sizeof(*out->part_nnz));
	out->nparts = a->w.nparts;
	return 0;
fail:
	act_release(out);
	return rc;
}

/* The bits of p where keep, else +0: a product dropped without a branch (inf * 0 never counts). */
static inline __attribute__((always_inline)) float keep_if(float p, int keep)
{
	uint32_t u;

	memcpy(&u, &p, 4);
	u &= 0u - (uint32_t)keep;
	memcpy(&p, &u, 4);
	return p;
}

/* Non-zeros of one segment compacted at a time (stack buffer). */
#define ACT_RUN 256

static inline __attribute__((always_inline)) void
csr_act_body(const struct cpu_act *a, int64_t r0, int64_t r1, const float *x, float *y, int64_t n)
{
	const struct cpu_csr *c = a->w.impl;
	int64_t m = a->w.m;

	if (n == 1) {
		/*
		 * x itself is the flag. At N = 1 a branch on random zeros costs
		 * more in mispredictions than the multiply it saves (measured
		 * 13x slower than csr at 50% zeros), so the product of a zero is
		 * masked off; four sums keep the adds from waiting on each other.
		 */
		for (int64_t t = 0; t < c->tiles; t++) {
			const float *xt = x + t * c->tile_w;

			for (int64_t i = r0; i < r1; i++) {
				int32_t j = c->ptr[t * m + i], hi = c->ptr[t * m + i + 1];
				float s[4] = {0, 0, 0, 0};

				for (; j + 4 <= hi; j += 4)
					for (int u = 0; u < 4; u++) {
						float xv = xt[c->col[j + u]];

						s[u] += keep_if(c->val[j + u] * xv, xv != 0.0f);
					}
				for (; j < hi; j++) {
					float xv = xt[c->col[j]];

					s[0] += keep_if(c->val[j] * xv, xv != 0.0f);
				}
				s[0] += s[1] + s[2] + s[3];
				y[i] = t == 0 ? s[0] : y[i] + s[0];
			}
		}
		return;
	}
	for (int64_t i = r0; i < r1; i++)
		memset(y + i * n, 0, (size_t)n * sizeof(float));
	for (int64_t t = 0; t < c->tiles; t++) {
		const uint8_t *flags = a->xnz + t * c->tile_w;
		const float *xt = x + t * c->tile_w * n;

		for (int64_t i = r0; i < r1; i++) {
			float *restrict yr = y + i * n;

			for (int32_t j0 = c->ptr[t * m + i]; j0 < c->ptr[t * m + i + 1]; j0 += ACT_RUN) {
				int32_t j1 = c->ptr[t * m + i + 1] - j0 < ACT_RUN ? c->ptr[t * m + i + 1] : j0 + ACT_RUN;
				uint16_t col[ACT_RUN];
				float val[ACT_RUN];
				int live = 0;

				/* the live non-zeros first, without a branch per non-zero */
				for (int32_t j = j0; j < j1; j++) {
					col[live] = c->col[j];
					val[live] = c->val[j];
					live += flags[c->col[j]];
				}
				for (int z = 0; z < live; z++) {
					const float *restrict xr = xt + (int64_t)col[z] * n;
					float v = val[z];

					_Pragma("omp simd")
					for (int64_t q = 0; q < n; q++)
						yr[q] += v * xr[q];
				}
			}
		}
	}
}

/* ---- csc, csc_act ---- */

static int csc_build(const struct spp_matrix *w, int threads, struct cpu_act *a,
		     struct spp_encoded *out, struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0, z = 0;
	int64_t *row_cum = cpu_row_cum(w);
	int rc = 0;

	a->lo = malloc((size_t)(threads + 1) * sizeof(*a->lo));
	a->off = malloc((size_t)threads * sizeof(*a->off));
	if (!row_cum || !a->lo || !a->off) {
		rc = spp_error_set(err, SPP_E_NOMEM, "csc: cannot allocate the partition");
		goto out;
	}
	nnz = row_cum[m];
	if (nnz > INT32_MAX || m > INT32_MAX) {
		rc = spp_error_set(err, SPP_E_UNSUPPORTED, "csc: %lld non-zeros exceed the int32 offsets",
				   (long long)nnz);
		goto out;
	}
	cpu_partition(row_cum, m, threads, a->lo);
	a->cptr = spp_buffer_alloc((size_t)threads * (size_t)(k + 1) * sizeof(*a->cptr));
	a->row = spp_buffer_alloc((size_t)nnz * sizeof(*a->row));
	a->val = spp_buffer_alloc((size_t)nnz * sizeof(*a->val));
	if (!a->cptr || !a->row || !a->val) {
		rc = spp_error_set(err, SPP_E_NOMEM, "csc: cannot allocate %lld non-zeros", (long long)nnz);
		goto out;
	}
	/* part by part, column by column: a part's columns are contiguous */
	for (int p = 0; p < threads; p++) {
		int32_t *cp = a->cptr + (size_t)p * (size_t)(k + 1);

		a->off[p] = z;
		for (int64_t j = 0; j < k; j++) {
			cp[j] = (int32_t)(z - a->off[p]);
			for (int64_t i = a->lo[p]; i < a->lo[p + 1]; i++)
				if (w->v[i * k + j] != 0.0f) {
					a->row[z] = (int32_t)i;
					a->val[z] = w->v[i * k + j];
					z++;
				}
		}
		cp[k] = (int32_t)(z - a->off[p]);
	}
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->bytes = (uint64_t)nnz * 8 + (uint64_t)threads * (uint64_t)(k + 1) * 4;
	rc = cpu_set_parts(out, threads, a->lo, row_cum, err);
out:
	free(row_cum);
	return rc;
}

static int csc_encode_as(const struct spp_format_ops *ops, const struct spp_matrix *w,
			 int threads, struct spp_encoded *out, struct spp_error *err)
{
	int rc;

	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "%s: threads must be >= 1, got %d", ops->key, threads);
	rc = act_alloc(out, ops, w->k, err);
	if (!rc)
		rc = csc_build(w, threads, out->impl, out, err);
	if (rc)
		act_release(out);
	return rc;
}

static int csc_encode(const struct spp_matrix *w, int threads, int64_t n, struct spp_encoded *out,
		      struct spp_error *err)
{
	(void)n; /* one layout at every N */
	return csc_encode_as(&spp_cpu_csc, w, threads, out, err);
}

static int csc_act_encode(const struct spp_matrix *w, int threads, int64_t n, struct spp_encoded *out,
			  struct spp_error *err)
{
	(void)n; /* one layout at every N */
	return csc_encode_as(&spp_cpu_csc_act, w, threads, out, err);
}

/* skip: consult the flags (csc_act) or not (csc). */
static inline __attribute__((always_inline)) void
csc_body(const struct cpu_act *a, int p, int64_t k, const float *x, float *y, int64_t n, int skip)
{
	const int32_t *cp = a->cptr + (size_t)p * (size_t)(k + 1);
	const int32_t *row = a->row + a->off[p];
	const float *val = a->val + a->off[p];
	int64_t r0 = a->lo[p], r1 = a->lo[p + 1];

	memset(y + r0 * n, 0, (size_t)((r1 - r0) * n) * sizeof(float));
	if (n == 1) {
		for (int64_t j = 0; j < k; j++) {
			float xv = x[j];

			if (skip && xv == 0.0f)
				continue;
			for (int32_t z = cp[j]; z < cp[j + 1]; z++)
				y[row[z]] += val[z] * xv;
		}
		return;
	}
	for (int64_t j = 0; j < k; j++) {
		const float *restrict xr = x + j * n;

		if (skip && !a->xnz[j])
			continue;
		for (int32_t z = cp[j]; z < cp[j + 1]; z++) {
			float *restrict yr = y + (int64_t)row[z] * n;
			float v = val[z];

			_Pragma("omp simd")
			for (int64_t q = 0; q < n; q++)
				yr[q] += v * xr[q];
		}
	}
}

/* One part of any of the three, dispatched on the encoding's ops. */
static inline __attribute__((always_inline)) void
act_part_body(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n)
{
	const struct cpu_act *a = w->impl;

	if (w->ops == &spp_cpu_csr_act) {
		const struct cpu_csr *c = a->w.impl;

		if (c->lo[p] < c->lo[p + 1])
			csr_act_body(a, c->lo[p], c->lo[p + 1], x, y, n);
		return;
	}
	csc_body(a, p, w->k, x, y, n, w->ops == &spp_cpu_csc_act);
}

/*
 * The implementations by ISA: the one body compiled for each (the epilogue
 * e is applied by act_spmm after every part), and for csr_act on AVX-512
 * the vector kernel that skips X's zero rows (act_avx512.c).
 */
static void act_part_c(const struct spp_encoded *w, int p, const float *x, float *y, int64_t n,
		       const struct spp_epi *e)
{
	(void)e;
	act_part_body(w, p, x, y, n);
}

#if CPU_X86
CPU_AVX2 static void act_part_avx2(const struct spp_encoded *w, int p, const float *x, float *y,
				   int64_t n, const struct spp_epi *e)
{
	(void)e;
	act_part_body(w, p, x, y, n);
}

CPU_AVX512 static void act_part_avx512(const struct spp_encoded *w, int p, const float *x,
				       float *y, int64_t n, const struct spp_epi *e)
{
	(void)e;
	act_part_body(w, p, x, y, n);
}

CPU_AVX512 static void csr_act_part_avx512(const struct spp_encoded *w, int p, const float *x,
					   float *y, int64_t n, const struct spp_epi *e)
{
	const struct cpu_act *a = w->impl;
	const struct cpu_csr *c = a->w.impl;
	int64_t r0, r1;

	(void)e;
	if (cpu_part_range(c->lo, p, &r0, &r1))
		cpu_csr_act_part_avx512(&a->w, a->xnz, r0, r1, x, y, n);
}
#endif

static int act_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		    const struct spp_exec *ex)
{
	struct cpu_act *a = w->impl;

	/* N = 1 reads x itself; csc (weight-only) never looks */
	if (n > 1 && w->ops != &spp_cpu_csc)
		mark_rows(x, w->k, n, a->xnz);
	cpu_spmm(w, x, y, n, ex);
	/*
	 * Not fused: csc scatters into rows that several parts share, so no
	 * part knows when a row is complete; the activation kernels apply the
	 * epilogue as a pass of its own.
	 */
	spp_epilogue_apply(&ex->epi, y, w->m, n, ex->threads, ex->isa);
	return 0;
}

const struct spp_format_ops spp_cpu_csr_act = {
	.key = "csr_act",
	.encode = csr_act_encode,
	.spmm = act_spmm,
	.release = act_release,
#if CPU_X86
	.part = {[SPP_ISA_PORTABLE] = act_part_c, [SPP_ISA_AVX2] = act_part_avx2,
		 [SPP_ISA_AVX512] = csr_act_part_avx512},
#else
	.part = CPU_PARTS(act_part_c, act_part),
#endif
};

const struct spp_format_ops spp_cpu_csc = {
	.key = "csc",
	.encode = csc_encode,
	.spmm = act_spmm,
	.release = act_release,
	.part = CPU_PARTS(act_part_c, act_part),
};

const struct spp_format_ops spp_cpu_csc_act = {
	.key = "csc_act",
	.encode = csc_act_encode,
	.spmm = act_spmm,
	.release = act_release,
	.part = CPU_PARTS(act_part_c, act_part),
};
