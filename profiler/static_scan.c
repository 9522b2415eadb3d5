/*
 * The scan behind spp_static_count(): one pass over a layer's weights in its
 * GEMM view, at memory speed.
 *
 * Work is split into items of whole 16-row units (16 is the largest block
 * size, so no B x B block straddles two threads) and handed out dynamically.
 * Per row the thread builds a byte mask of K non-zero flags with a typed,
 * vectorisable loop, then derives everything from the mask: the row count,
 * the N:M group counts, and for the block pattern an OR of the mask over 2,
 * 4, 8 and 16 rows whose all-zero column groups are the all-zero blocks.
 * Every figure is an integer sum, min, max or OR, so the result does not
 * depend on the thread count or the schedule.
 *
 * The per-element loops stay here with the helpers they inline; the setup
 * and the final sums, run once per layer, are in static_scan_setup.c.
 */
#include "profiler/pages.h"
#include "profiler/static.h"
#include "profiler/static_scan_internal.h"

#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the zero masks assume little-endian element storage, as safetensors has"
#endif

/* The hot loops are compiled twice, for the baseline ISA and for AVX2, and
 * the loader picks one (ifunc): a distribution build then still scans at
 * memory speed on the machines that have AVX2. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones("avx2", "default")))
#else
#define HOT
#endif

/* Contiguous runs are read in tiles, each prefetching the tile PF_AHEAD
 * bytes on, so that DRAM keeps streaming while a row's counts are made
 * (the hardware prefetcher stops at page boundaries). */
#define TILE_BYTES 1024
#define PF_AHEAD 2048

/* ---- elements ---- */

static inline uint16_t ld16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Packed codes, LSB first in the byte stream. */
static inline unsigned f4_code(const unsigned char *d, uint64_t i)
{
	return (d[i >> 1] >> ((i & 1) * 4)) & 0xfu;
}

static inline unsigned f6_code(const unsigned char *d, uint64_t i)
{
	uint64_t bit = i * 6;
	unsigned off = (unsigned)(bit & 7);
	const unsigned char *p = d + (bit >> 3);
	unsigned v = (unsigned)p[0] >> off;

	if (off > 2) /* the code runs into the next byte */
		v |= (unsigned)p[1] << (8 - off);
	return v & 0x3fu;
}

/*
 * Whether element i of a Q8_0 / Q4_0 tensor is non-zero: its block's scale
 * is not +-0 and its code does not decode to 0 (Q8_0: q = 0; Q4_0: the
 * nibble 8, value d * (q - 8)). A Q4_0 block's byte j holds value j in its
 * low nibble and value j + 16 in its high one.
 */
static inline int quant_nonzero(const struct elems *e, uint64_t i)
{
	const unsigned char *b = e->data + (i / QBLOCK) * (uint64_t)e->block_bytes;
	unsigned j = (unsigned)(i % QBLOCK);

	if (((b[0] | (unsigned)b[1] << 8) & 0x7fffu) == 0)
		return 0;
	if (e->quant == SPP_DTYPE_Q8_0)
		return b[2 + j] != 0;
	return (j < 16 ? b[2 + j] & 0xfu : b[2 + j - 16] >> 4) != 8;
}

/* Byte range holding elements [e0, e0 + n). */
static void elem_bytes(const struct elems *e, uint64_t e0, uint64_t n,
		       const unsigned char **p, uint64_t *len)
{
	uint64_t b0 = e0 * (uint64_t)e->bits / 8;
	uint64_t b1 = ((e0 + n) * (uint64_t)e->bits + 7) / 8;

	if (e->block_bytes) {
		b0 = e0 / QBLOCK * (uint64_t)e->block_bytes;
		b1 = (e0 + n + QBLOCK - 1) / QBLOCK * (uint64_t)e->block_bytes;
	}

	*p = e->data + b0;
	*len = b1 - b0;
}

/* A prefetch may point past the tensor (it never faults); integer
 * arithmetic keeps that from being an out-of-bounds pointer in C. */
static inline void prefetch_at(const unsigned char *p, int64_t off)
{
	__builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)off));
}

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

/* Non-zeros among elements [e0, e0 + n); e0 a multiple of 8 for packed types. */
HOT static uint64_t count_run(const struct elems *e, uint64_t e0, uint64_t n)
{
	const unsigned char *d = e->data;
	uint64_t c = 0;

	if (e->never_zero)
		return n;
	if (e->block_bytes) {
		for (uint64_t t = 0; t < n; t++)
			c += (uint64_t)quant_nonzero(e, e0 + t);
		return c;
	}
#define COUNT_TYPED(T, LD)                                                     \
	do {                                                                   \
		const unsigned char *p = d + e0 * sizeof(T);                   \
		const T zm = (T)e->zm;                                         \
		const uint64_t tile = TILE_BYTES / sizeof(T);                  \
		for (uint64_t t0 = 0; t0 < n; t0 += tile) {                    \
			uint64_t t1 = n - t0 < tile ? n : t0 + tile;           \
			uint32_t ct = 0; /* narrow lanes vectorise better */   \
			for (int b = 0; b < TILE_BYTES; b += 64)               \
				prefetch_at(p, (int64_t)(t0 * sizeof(T)) + PF_AHEAD + b); \
			_Pragma("omp simd reduction(+:ct)")                    \
			for (uint64_t t = t0; t < t1; t++)                     \
				ct += (LD(p + t * sizeof(T)) & zm) != 0;       \
			c += ct;                                               \
		}                                                              \
	} while (0)
	switch (e->bits) {
	case 8:
		COUNT_TYPED(uint8_t, *);
		break;
	case 16:
		COUNT_TYPED(uint16_t, ld16);
		break;
	case 32:
		COUNT_TYPED(uint32_t, ld32);
		break;
	case 64:
		COUNT_TYPED(uint64_t, ld64);
		break;
	case 4:
		for (uint64_t t = 0; t < n; t++)
			c += (f4_code(d, e0 + t) & e->zm) != 0;
		break;
	case 6:
		for (uint64_t t = 0; t < n; t++)
			c += (f6_code(d, e0 + t) & e->zm) != 0;
		break;
	}
#undef COUNT_TYPED
	return c;
}

int spp_static_tensor_nnz(const struct spp_tensor *t, uint64_t *nnz,
			  struct spp_error *err)
{
	if (t->nnz_only || t->coo) {
		*nnz = t->coo ? t->coo->nnz : t->nnz;
		return SPP_OK;
	}
	struct spp_pages pg;
	struct elems el;
	uint64_t n = t->numel, chunk, nchunks, total = 0;
	int rc, nt;

	*nnz = 0;
	rc = spp_scan_elems_init(t, &el, err);
	if (rc)
		return rc;
	if (n == 0)
		return SPP_OK;
	if (el.never_zero) {
		*nnz = n;
		return SPP_OK;
	}
	/* a multiple of 8 elements, so packed chunks start on a byte, and of
	 * 32 for block types, so chunks start on a block */
	if (el.block_bytes)
		chunk = (uint64_t)ITEM_BYTES / (uint64_t)el.block_bytes * QBLOCK;
	else
		chunk = ((uint64_t)ITEM_BYTES * 8 / (uint64_t)el.bits) & ~(uint64_t)7;
	nchunks = (n + chunk - 1) / chunk;
	nt = omp_get_max_threads();
	if ((uint64_t)nt > nchunks)
		nt = (int)nchunks;
	spp_pages_open(&pg);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) reduction(+:total)
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t e0 = c * chunk, cnt = n - e0 < chunk ? n - e0 : chunk;
		const unsigned char *p;
		uint64_t len;

		elem_bytes(&el, e0, cnt, &p, &len);
		spp_pages_prefault(p, len);
		total += count_run(&el, e0, cnt);
		spp_pages_drop(&pg, p, len, 1);
	}
	spp_pages_drop(&pg, t->data, t->nbytes, 0);
	spp_pages_close(&pg);
	*nnz = total;
	return SPP_OK;
}

/* ---- the layer scan ---- */

struct tbuf {
	uint8_t *mk;              /* the row's mask, zero beyond K */
	uint8_t *acc[SPP_NBLOCK]; /* mask ORed over the current 2, 4, 8, 16 rows */
	uint8_t *colany;          /* mask ORed over every row this thread saw */
};

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

/* Row count and N:M groups from a mask. Mask bytes are 0 or 1, so the sum of
 * a 4-byte word's bytes fits in its low byte. */
HOT static void row_counts(const struct view_scan *s, const uint8_t *mk,
		       struct part *pt)
{
	uint64_t rn = 0, ok14 = 0, ok24 = 0, ok48 = 0;
	int64_t g8 = s->g[2];

	/* segments keep the 32-bit lane sums from overflowing */
	for (int64_t g0 = 0; g0 < g8; g0 += (1 << 24)) {
		int64_t g1 = g8 - g0 < (1 << 24) ? g8 : g0 + (1 << 24);
		uint32_t a_rn = 0, a14 = 0, a24 = 0, a48 = 0;

		_Pragma("omp simd reduction(+:a_rn,a14,a24,a48)")
		for (int64_t g = g0; g < g1; g++) {
			uint32_t w0 = ld32(mk + 8 * g), w1 = ld32(mk + 8 * g + 4);
			uint32_t x = (w0 + (w0 >> 8) + (w0 >> 16) + (w0 >> 24)) & 0xffu;
			uint32_t y = (w1 + (w1 >> 8) + (w1 >> 16) + (w1 >> 24)) & 0xffu;

			/* the N:M rule (kernels.h) on the 4-groups x, y and their 8-group */
			a_rn += x + y;
			a14 += (uint32_t)(spp_nm_group_ok(x, 1) + spp_nm_group_ok(y, 1));
			a24 += (uint32_t)(spp_nm_group_ok(x, 2) + spp_nm_group_ok(y, 2));
			a48 += (uint32_t)spp_nm_group_ok(x + y, 4);
		}
		rn += a_rn;
		ok14 += a14;
		ok24 += a24;
		ok48 += a48;
	}
	/* an odd number of 4-groups leaves a pure-padding group in the last
	 * pair; it is not a group of W */
	if (s->g[1] & 1) {
		ok14--;
		ok24--;
	}
	pt->nm_ok[0] += ok14;
	pt->nm_ok[1] += ok24;
	pt->nm_ok[2] += ok48;
	pt->nnz += rn;
	pt->sumsq += (u128)rn * rn;
	if (rn < pt->rmin)
		pt->rmin = rn;
	if (rn > pt->rmax)
		pt->rmax = rn;
	pt->zero_rows += rn == 0;
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
		or_into(level + 1 < SPP_NBLOCK ? tb->acc[level + 1] : tb->colany,
			tb->acc[level], s->kp);
		memset(tb->acc[level], 0, (size_t)s->kp);
	}
}

static void scan_rows(const struct view_scan *s, int64_t r0, int64_t r1,
		      struct tbuf *tb, struct part *pt)
{
	for (int64_t i = r0; i < r1; i++) {
		row_mask(s, i, tb->mk);
		row_counts(s, tb->mk, pt);
		or_into(tb->acc[0], tb->mk, s->kp);
		block_rows_done(s, i, tb, pt);
	}
}

/* Scan the items of rows on nt threads, each with its own buffers in mem and
 * its partial counts in parts[t]. */
static void scan_items(const struct view_scan *s, struct spp_pages *pg, uint8_t *mem,
		       struct part *parts, int nt, int64_t per_item, int64_t items)
{
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		uint8_t *base = mem + (size_t)t * (SPP_NBLOCK + 2) * (size_t)s->kp;
		struct tbuf tb;

		tb.mk = base;
		for (int b = 0; b < SPP_NBLOCK; b++)
			tb.acc[b] = base + (size_t)(b + 1) * (size_t)s->kp;
		tb.colany = base + (size_t)(SPP_NBLOCK + 1) * (size_t)s->kp;

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
	const uint8_t *colany = mem + (SPP_NBLOCK + 1) * (size_t)s->kp;
	uint64_t zc = 0;

	for (int t = 1; t < nt; t++)
		or_into(mem + (SPP_NBLOCK + 1) * (size_t)s->kp,
			mem + ((size_t)t * (SPP_NBLOCK + 2) + SPP_NBLOCK + 1) * (size_t)s->kp,
			s->k);
	_Pragma("omp simd reduction(+:zc)")
	for (int64_t j = 0; j < s->k; j++)
		zc += colany[j] == 0;
	return zc;
}

int spp_static_count(const struct spp_layer *l, struct spp_static_counts *out,
		     struct spp_error *err)
{
	struct view_scan s;
	struct spp_pages pg = {-1};
	struct part *parts = NULL;
	uint8_t *mem = NULL;
	int64_t per_item, items;
	int nt, rc;

	if (l->weight->coo)
		return spp_scan_coo_count(l, out, err);
	memset(out, 0, sizeof(*out));
	rc = spp_scan_elems_init(l->weight, &s.el, err);
	if (rc)
		return rc;
	rc = spp_scan_view_check(l, err);
	if (rc)
		return rc;
	spp_scan_view_init(&s, l);
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
	mem = calloc((size_t)nt * (SPP_NBLOCK + 2), (size_t)s.kp);
	if (!parts || !mem) {
		rc = spp_error_set(err, SPP_E_NOMEM,
				   "tensor '%s': out of memory for %d scan buffers of %lld bytes",
				   l->weight->name ? l->weight->name : "?", nt,
				   (long long)s.kp);
		goto out;
	}
	for (int t = 0; t < nt; t++)
		parts[t].rmin = UINT64_MAX;
	spp_pages_open(&pg);
	scan_items(&s, &pg, mem, parts, nt, per_item, items);
	out->zero_cols = zero_cols(&s, mem, nt);
	spp_scan_counts_finish(&s, parts, nt, out);
	spp_pages_drop(&pg, l->weight->data, l->weight->nbytes, 0);
	rc = spp_static_kernels(l, &out->kernel, err);
out:
	spp_pages_close(&pg);
	free(mem);
	free(parts);
	return rc;
}
