/*
 * The scan behind spp_static_count(): one pass over a layer's weights in its
 * GEMM view, at memory speed.
 *
 * Work is split into items of whole 16-row units (16 is the largest block
 * size, so no B x B block straddles two threads) and handed out dynamically.
 * Per row the thread builds a byte mask of K non-zero flags with a typed,
 * vectorisable loop, then derives everything from the mask: the row count,
 * the N:M group counts along K, and sums of the mask over 2, 4, 8 and 16
 * rows, whose all-zero column groups are the all-zero blocks and whose
 * column counts are the N:M groups along M. Every 2^k-th row's values also
 * feed the provenance histogram (provenance.c). Every figure is an integer
 * sum, min, max or OR, so the result does not depend on the thread count
 * or the schedule.
 *
 * The per-element loops stay here with the helpers they inline; the setup
 * and the final sums, run once per layer, are in static_scan_setup.c.
 */
#include "profiler/pages.h"
#include "profiler/static.h"
#include "profiler/static_scan_elems.h"
#include "profiler/static_scan_internal.h"

#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* out[t] = element e0 + t * stride is non-zero, for t < n. */
HOT static void mask_run(const struct elems *e, uint64_t e0, int64_t stride,
		     int64_t n, uint8_t *restrict out)
{
	const unsigned char *d = e->data;

	if (e->never_zero) {
		memset(out, 1, (size_t)n);
		return;
	}
	if (e->block_bytes) {
		for (int64_t t = 0; t < n; t++)
			out[t] = (uint8_t)quant_nonzero(e, e0 + (uint64_t)(t * stride));
		return;
	}
#define MASK_TYPED(T, LD)                                                      \
	do {                                                                   \
		const unsigned char *p = d + e0 * sizeof(T);                   \
		const T zm = (T)e->zm;                                         \
		if (stride == 1) {                                             \
			const int64_t tile = TILE_BYTES / (int64_t)sizeof(T);  \
			for (int64_t t0 = 0; t0 < n; t0 += tile) {             \
				int64_t t1 = n - t0 < tile ? n : t0 + tile;    \
				for (int b = 0; b < TILE_BYTES; b += 64)       \
					prefetch_at(p, t0 * (int64_t)sizeof(T) + PF_AHEAD + b); \
				_Pragma("omp simd")                            \
				for (int64_t t = t0; t < t1; t++)              \
					out[t] = (LD(p + t * sizeof(T)) & zm) != 0; \
			}                                                      \
		} else {                                                       \
			for (int64_t t = 0; t < n; t++)                        \
				out[t] = (LD(p + t * stride * (int64_t)sizeof(T)) & zm) != 0; \
		}                                                              \
	} while (0)
	switch (e->bits) {
	case 8:
		MASK_TYPED(uint8_t, *);
		return;
	case 16:
		MASK_TYPED(uint16_t, ld16);
		return;
	case 32:
		MASK_TYPED(uint32_t, ld32);
		return;
	case 64:
		MASK_TYPED(uint64_t, ld64);
		return;
	case 4:
		if (stride == 1 && e0 % 2 == 0) {
			const unsigned char *p = d + e0 / 2;
			const unsigned zm = (unsigned)e->zm;
			int64_t t;
			_Pragma("omp simd")
			for (t = 0; t < n / 2; t++) {
				out[2 * t] = (p[t] & zm) != 0;
				out[2 * t + 1] = ((p[t] >> 4) & zm) != 0;
			}
			if (n % 2)
				out[n - 1] = (p[n / 2] & zm) != 0;
			return;
		}
		for (int64_t t = 0; t < n; t++)
			out[t] = (f4_code(d, e0 + (uint64_t)(t * stride)) & e->zm) != 0;
		return;
	case 6:
		for (int64_t t = 0; t < n; t++)
			out[t] = (f6_code(d, e0 + (uint64_t)(t * stride)) & e->zm) != 0;
		return;
	}
#undef MASK_TYPED
}

/* ---- the layer scan ---- */


static uint64_t row_start(const struct view_scan *s, int64_t i)
{
	return s->v->base + (uint64_t)(i * s->v->row_stride);
}

static void row_mask(const struct view_scan *s, int64_t i, uint8_t *mk)
{
	const struct spp_gemm_view *v = s->v;
	uint64_t r0 = row_start(s, i);

	if (s->single_run) {
		mask_run(&s->el, r0, s->run_stride, s->k, mk);
		return;
	}
	for (int64_t j = 0, r = 0; j < s->k; j += v->inner, r++) {
		int64_t n = s->k - j < v->inner ? s->k - j : v->inner;
		mask_run(&s->el, r0 + (uint64_t)(r * v->outer_stride),
			 v->inner_stride, n, mk + j);
	}
}

struct tbuf {
	uint8_t *mk;              /* the row's mask, zero beyond K */
	uint8_t *acc[SPP_NBLOCK]; /* masks summed over the current 2, 4, 8, 16 rows */
	uint8_t *colany;          /* mask ORed over every row this thread saw */
	float *vals;              /* PROV_CHUNK decoded values */
	uint8_t *c4, *c8, *c16;   /* the row's group counts (row_counts) */
};

/* Buffers of kp bytes per thread: the mask, the four accumulators, colany,
 * and one for the group counts (kp/4 + kp/8 + kp/16 bytes). */
#define TB_SLOTS (SPP_NBLOCK + 3)
#define TB_COLANY (SPP_NBLOCK + 1)

/* 32 byte lanes (GCC vector extensions: one AVX2 register, two SSE2 ones). */
typedef uint8_t v32u8 __attribute__((vector_size(32)));

/*
 * Over the first k columns of group counts a: those at most ka, into *ca,
 * and at most kb, into *cb (a keep of -1 counts none); returns the most.
 * One pass, counting in byte lanes, 255 steps at most before they are summed.
 */
HOT static uint32_t col_stats(const uint8_t *a, int64_t k, int ka, int kb, uint64_t *ca,
			      uint64_t *cb)
{
	const v32u8 zero = {0}, one = zero + 1;
	/* the N:M rule of kernels.h (spp_nm_group_ok: at most keep), in byte
	 * lanes; a keep of -1 counts nothing (its lanes are never added) */
	const uint8_t qa = (uint8_t)(ka < 0 ? 255 : ka), qb = (uint8_t)(kb < 0 ? 255 : kb);
	v32u8 mx = zero;
	uint32_t m = 0;
	int64_t j = 0;

	while (j + 32 <= k) {
		v32u8 c1 = zero, c2 = zero;

		for (int step = 0; step < 255 && j + 32 <= k; step++, j += 32) {
			v32u8 v, gt;

			memcpy(&v, a + j, sizeof(v));
			c1 += (v32u8)(v <= qa) & one;
			c2 += (v32u8)(v <= qb) & one;
			gt = (v32u8)(v > mx);
			mx = (v & gt) | (mx & ~gt);
		}
		for (int l = 0; l < 32; l++) {
			*ca += ka >= 0 ? c1[l] : 0;
			*cb += kb >= 0 ? c2[l] : 0;
		}
	}
	for (int l = 0; l < 32; l++)
		m = mx[l] > m ? mx[l] : m;
	for (; j < k; j++) {
		*ca += ka >= 0 && a[j] <= ka;
		*cb += kb >= 0 && a[j] <= kb;
		m = a[j] > m ? a[j] : m;
	}
	return m;
}

/* c[g] = non-zeros of the g-th 4 bytes of mask mk, for g < n4 (the mask's
 * bytes are 0 or 1, so a multiply sums them into the top byte). */
HOT static void group4_counts(const uint8_t *restrict mk, int64_t n4, uint8_t *restrict c)
{
	_Pragma("omp simd")
	for (int64_t g = 0; g < n4; g++)
		c[g] = (uint8_t)((ld32(mk + 4 * g) * 0x01010101u) >> 24);
}

/* out[i] = c[2i] + c[2i + 1], for i < n: the counts of groups twice as wide. */
HOT static void pair_sums(const uint8_t *restrict c, int64_t n, uint8_t *restrict out)
{
	_Pragma("omp simd")
	for (int64_t i = 0; i < n; i++) {
		uint16_t v = ld16(c + 2 * i);

		out[i] = (uint8_t)((v & 0xffu) + (v >> 8));
	}
}

HOT static uint64_t byte_sum(const uint8_t *c, int64_t n)
{
	uint64_t t = 0;

	for (int64_t i0 = 0; i0 < n; i0 += (1 << 24)) {
		int64_t i1 = n - i0 < (1 << 24) ? n : i0 + (1 << 24);
		uint32_t u = 0;

		_Pragma("omp simd reduction(+:u)")
		for (int64_t i = i0; i < i1; i++)
			u += c[i];
		t += u;
	}
	return t;
}

/*
 * The groups of width spp_nm_widths[w] whose counts are c[0, n): the N:M
 * patterns of that width (at most two) add their compliant groups to ok,
 * and the fullest group goes into *best.
 */
static void width_stats(const uint8_t *c, int64_t n, int w, uint64_t ok[SPP_NNM], uint32_t *best)
{
	int pat[2] = {-1, -1}, np = 0;
	uint64_t none = 0;
	uint32_t mx;

	for (int p = 0; p < SPP_NNM && np < 2; p++)
		if (spp_nm_patterns[p].m == spp_nm_widths[w])
			pat[np++] = p;
	mx = col_stats(c, n, pat[0] >= 0 ? spp_nm_patterns[pat[0]].n : -1,
		       pat[1] >= 0 ? spp_nm_patterns[pat[1]].n : -1, pat[0] >= 0 ? &ok[pat[0]] : &none,
		       pat[1] >= 0 ? &ok[pat[1]] : &none);
	*best = *best > mx ? *best : mx;
}

/*
 * Row count, N:M groups along K and the fullest group of 4, 8, 16 from a
 * mask: the counts of its 4-groups into c4, of its 8-groups into c8 and of
 * its 16-groups into c16 (the mask is zero past K, up to a multiple of 16),
 * each then read in byte lanes, only as far as the groups of W go.
 */
static void row_counts(const struct view_scan *s, const uint8_t *mk, struct tbuf *tb,
		       struct part *pt)
{
	int64_t g16 = s->g[3];
	uint8_t *c[SPP_NWIDTH] = {tb->c4, tb->c8, tb->c16};
	uint64_t rn;

	group4_counts(mk, 4 * g16, tb->c4);
	pair_sums(tb->c4, 2 * g16, tb->c8);
	pair_sums(tb->c8, g16, tb->c16);
	for (int w = 0; w < SPP_NWIDTH; w++)
		width_stats(c[w], s->g[w + 1], w, pt->nm_ok, &pt->nm_max[SPP_AXIS_K][w]);
	rn = byte_sum(tb->c16, g16);
	pt->nnz += rn;
	pt->sumsq += (u128)rn * rn;
	if (rn < pt->rmin)
		pt->rmin = rn;
	if (rn > pt->rmax)
		pt->rmax = rn;
	pt->zero_rows += rn == 0;
}

/* dst += src: the block accumulators sum masks (at most 16 rows, so a byte
 * holds the count); a sum is zero exactly when the OR would be. */
HOT static void add_into(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n)
{
	_Pragma("omp simd")
	for (int64_t j = 0; j < n; j++)
		dst[j] += src[j];
}


HOT static void or_into(uint8_t *restrict dst, const uint8_t *restrict src, int64_t n)
{
	_Pragma("omp simd")
	for (int64_t j = 0; j < n; j++)
		dst[j] |= src[j];
}

/* All-zero groups of B = 2 << level bytes among the first g groups. */
HOT static uint64_t zero_groups(const uint8_t *a, int level, int64_t g)
{
	uint64_t z = 0;

	switch (level) {
	case 0:
		_Pragma("omp simd reduction(+:z)")
		for (int64_t i = 0; i < g; i++)
			z += ld16(a + 2 * i) == 0;
		break;
	case 1:
		_Pragma("omp simd reduction(+:z)")
		for (int64_t i = 0; i < g; i++)
			z += ld32(a + 4 * i) == 0;
		break;
	case 2:
		_Pragma("omp simd reduction(+:z)")
		for (int64_t i = 0; i < g; i++)
			z += ld64(a + 8 * i) == 0;
		break;
	default:
		_Pragma("omp simd reduction(+:z)")
		for (int64_t i = 0; i < g; i++)
			z += (ld64(a + 16 * i) | ld64(a + 16 * i + 8)) == 0;
		break;
	}
	return z;
}

/*
 * Row i is the last of a block row at some levels: count that level's
 * all-zero blocks, hand its OR up to the next level and clear it.
 */
static void block_rows_done(const struct view_scan *s, int64_t i,
			    struct tbuf *tb, struct part *pt)
{
	for (int level = 0; level < SPP_NBLOCK; level++) {
		int64_t b = 2 << level;

		if (i % b != b - 1 && i != s->m - 1)
			break;
		uint64_t z = zero_groups(tb->acc[level], level, s->g[level]);
		pt->zb[level] += z;
		if (level == 1 && z) {
			/* real elements in those blocks: the last block row and
			 * column may be cut by the padding */
			uint64_t rows = (uint64_t)(i % 4 + 1);
			int64_t last = s->g[1] - 1;
			uint64_t last_cols = (uint64_t)(s->k - 4 * last);
			int last_zero = ld32(tb->acc[1] + 4 * last) == 0;

			pt->zin4 += rows * ((z - (uint64_t)last_zero) * 4 +
					    (last_zero ? last_cols : 0));
		}
		/* the groups along M: each column's count over the 4, 8, 16 rows just ended */
		if (level > 0)
			width_stats(tb->acc[level], s->k, level - 1, pt->nm_ok_m,
				    &pt->nm_max[SPP_AXIS_M][level - 1]);
		if (level + 1 < SPP_NBLOCK)
			add_into(tb->acc[level + 1], tb->acc[level], s->kp);
		else
			or_into(tb->colany, tb->acc[level], s->kp);
		memset(tb->acc[level], 0, (size_t)s->kp);
	}
}

static void scan_rows(const struct view_scan *s, int64_t r0, int64_t r1,
		      struct tbuf *tb, struct part *pt)
{
	for (int64_t i = r0; i < r1; i++) {
		row_mask(s, i, tb->mk);
		row_counts(s, tb->mk, tb, pt);
		add_into(tb->acc[0], tb->mk, s->kp);
		block_rows_done(s, i, tb, pt);
		if (s->prov_step && i % s->prov_step == 0)
			spp_prov_row(s, i, tb->vals, &pt->prov);
	}
}

/* Scan the items of rows on nt threads, each with its own buffers in mem and
 * vals (PROV_CHUNK floats each) and its partial counts in parts[t]. */
static void scan_items(const struct view_scan *s, struct spp_pages *pg, uint8_t *mem,
		       float *vals, struct part *parts, int nt, int64_t per_item, int64_t items)
{
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		uint8_t *base = mem + (size_t)t * TB_SLOTS * (size_t)s->kp;
		struct tbuf tb;

		tb.mk = base;
		for (int b = 0; b < SPP_NBLOCK; b++)
			tb.acc[b] = base + (size_t)(b + 1) * (size_t)s->kp;
		tb.colany = base + (size_t)TB_COLANY * (size_t)s->kp;
		tb.c4 = base + (size_t)(TB_COLANY + 1) * (size_t)s->kp;
		tb.c8 = tb.c4 + s->kp / 4;
		tb.c16 = tb.c8 + s->kp / 8;
		tb.vals = vals + (size_t)t * PROV_CHUNK;

#pragma omp for schedule(dynamic, 1)
		for (int64_t it = 0; it < items; it++) {
			int64_t r0 = it * per_item * UNIT_ROWS;
			int64_t r1 = r0 + per_item * UNIT_ROWS;
			const unsigned char *p = NULL;
			uint64_t len = 0;

			if (r1 > s->m)
				r1 = s->m;
			if (s->rows_disjoint) {
				uint64_t e0 = row_start(s, r0);
				elem_bytes(&s->el, e0, row_start(s, r1 - 1) + (uint64_t)s->k - e0,
					   &p, &len);
				spp_pages_prefault(p, len);
			}
			scan_rows(s, r0, r1, &tb, &parts[t]);
			if (s->rows_disjoint)
				spp_pages_drop(pg, p, len, 1);
		}
	}
}

int spp_scan_each_row(const struct spp_layer *l, void (*fn)(void *, int64_t, const uint8_t *),
		      void *ctx, struct spp_error *err)
{
	struct view_scan s;
	uint8_t *mk;
	int rc;

	if ((rc = spp_scan_elems_init(l->weight, &s.el, err)) || (rc = spp_scan_view_check(l, err)))
		return rc;
	spp_scan_view_init(&s, l);
	mk = calloc((size_t)(s.kp ? s.kp : 1), 1);
	if (!mk)
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for a row mask",
				     l->weight->name ? l->weight->name : "?");
	for (int64_t i = 0; i < s.m; i++) {
		row_mask(&s, i, mk);
		fn(ctx, i, mk);
	}
	free(mk);
	return SPP_OK;
}

/* Zero columns: a column is zero when no thread saw a non-zero in it. */
static uint64_t zero_cols(const struct view_scan *s, uint8_t *mem, int nt)
{
	const uint8_t *colany = mem + TB_COLANY * (size_t)s->kp;
	uint64_t zc = 0;

	for (int t = 1; t < nt; t++)
		or_into(mem + TB_COLANY * (size_t)s->kp,
			mem + ((size_t)t * TB_SLOTS + TB_COLANY) * (size_t)s->kp,
			s->k);
	_Pragma("omp simd reduction(+:zc)")
	for (int64_t j = 0; j < s->k; j++)
		zc += colany[j] == 0;
	return zc;
}

/* A successful scan's counts kept for the layers sharing l's weight and view; rc. */
static int memo_keep(const struct spp_layer *l, int rc, const struct spp_static_counts *c)
{
	if (!rc && l->memo) {
		l->memo->counts = *c;
		l->memo->done = 1;
	}
	return rc;
}

int spp_static_count(const struct spp_layer *l, struct spp_static_counts *out,
		     struct spp_error *err)
{
	struct view_scan s;
	struct spp_pages pg = {-1};
	struct part *parts = NULL;
	uint8_t *mem = NULL;
	float *vals = NULL;
	int64_t per_item, items;
	int nt, rc;

	if (l->memo && l->memo->done) {
		*out = l->memo->counts;
		return SPP_OK;
	}
	if (l->weight->coo)
		return memo_keep(l, spp_scan_coo_count(l, out, err), out);
	memset(out, 0, sizeof(*out));
	rc = spp_scan_elems_init(l->weight, &s.el, err);
	if (rc)
		return rc;
	rc = spp_scan_view_check(l, err);
	if (rc)
		return rc;
	spp_scan_view_init(&s, l);
	spp_prov_setup(l, s.m, s.k, &out->prov);
	if (out->prov.status == SPP_PROV_COUNTED)
		s.prov_step = out->prov.row_step;
	out->m = s.m;
	out->k = s.k;
	if (s.m == 0 || s.k == 0) {
		out->zero_rows = (uint64_t)s.m;
		out->zero_cols = (uint64_t)s.k;
		spp_scan_counts_finish(&s, NULL, 0, out);
		return SPP_OK;
	}

	nt = spp_scan_plan(&s, &per_item, &items);
	parts = calloc((size_t)nt, sizeof(*parts));
	mem = calloc((size_t)nt * TB_SLOTS, (size_t)s.kp);
	vals = malloc((size_t)nt * PROV_CHUNK * sizeof(*vals));
	if (!parts || !mem || !vals) {
		rc = spp_error_set(err, SPP_E_NOMEM,
				   "tensor '%s': out of memory for %d scan buffers of %lld bytes",
				   l->weight->name ? l->weight->name : "?", nt,
				   (long long)s.kp);
		goto out;
	}
	for (int t = 0; t < nt; t++) {
		parts[t].rmin = UINT64_MAX;
		spp_prov_part_init(&parts[t].prov);
	}
	spp_pages_open(&pg);
	scan_items(&s, &pg, mem, vals, parts, nt, per_item, items);
	out->zero_cols = zero_cols(&s, mem, nt);
	spp_scan_counts_finish(&s, parts, nt, out);
	spp_pages_drop(&pg, l->weight->data, l->weight->nbytes, 0);
	rc = memo_keep(l, spp_static_kernels(l, &out->kernel, err), out);
out:
	spp_pages_close(&pg);
	free(vals);
	free(mem);
	free(parts);
	return rc;
}
