/*
 * spp_static_tensor_nnz(): the non-zeros of a whole tensor, for the model
 * totals, in chunks over OpenMP threads at memory speed.
 */
#include "profiler/pages.h"
#include "profiler/static.h"
#include "profiler/static_scan_elems.h"

#include <omp.h>

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

