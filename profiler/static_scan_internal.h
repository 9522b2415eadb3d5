/*
 * Private to the layer scan: the types that static_scan.c's hot loops and
 * static_scan_setup.c's per-layer setup and final sums share. The per-element
 * loops stay in static_scan.c together with the small helpers they must
 * inline (and are compiled per ISA there); only code run once per tensor,
 * layer or thread lives in static_scan_setup.c.
 */
#ifndef SPP_PROFILER_STATIC_SCAN_INTERNAL_H
#define SPP_PROFILER_STATIC_SCAN_INTERNAL_H

#include <stdint.h>

#include "profiler/static.h"

__extension__ typedef unsigned __int128 u128;

/* Bytes of weights per work item: big enough to amortise the page calls,
 * small enough to balance threads and keep mapped pages few. */
#define ITEM_BYTES (16u << 20)
#define UNIT_ROWS 16

/* ggml blocks of 32 values: an f16 scale d, then the codes */
#define QBLOCK 32

/* How a tensor's elements are read and tested for zero. */
struct elems {
	const unsigned char *data;
	int bits;                 /* 0 for a block type */
	uint64_t zm;
	int never_zero;
	enum spp_dtype quant;     /* SPP_DTYPE_Q8_0 or _Q4_0 for a block type */
	int block_bytes;          /* of a 32-value block */
};

/* A layer's GEMM view as the scan walks it. */
struct view_scan {
	struct elems el;
	const struct spp_layer *l;
	const struct spp_gemm_view *v;
	int64_t prov_step;       /* rows i with i % prov_step == 0 feed the provenance; 0: none */
	int64_t m, k, kp;        /* kp: K rounded up to 16, the mask length */
	int64_t g[SPP_NBLOCK];   /* column groups of 2, 4, 8, 16: ceil(K / B) */
	int single_run;          /* each row is one strided run of K elements */
	int64_t run_stride;
	int rows_disjoint;       /* row i fills elements [start_i, start_i + K) */
};

/* The provenance's |w| histogram: fp32 bits of |w| >> 20, 8 bins an octave. */
#define PROV_BINS 2048
#define PROV_OCTAVE 8
#define PROV_CHUNK 1024 /* values decoded at a time */
struct prov_part {
	uint64_t hist[PROV_BINS];
	uint64_t rows, survivors;
	uint32_t min_bits;       /* of the smallest |w|; UINT32_MAX when none */
};

/* One thread's partial counts. */
struct part {
	uint64_t nnz, rmin, rmax, zero_rows, zin4;
	u128 sumsq;
	uint64_t nm_ok[SPP_NNM], nm_ok_m[SPP_NNM];
	uint32_t nm_max[SPP_NAXIS][SPP_NWIDTH];
	uint64_t zb[SPP_NBLOCK];
	struct prov_part prov;
};

/* The provenance's status of l's dtype (SPP_PROV_COUNTED when its values
 * can be read) and its sampling step for an m x k view (static.h). */
void spp_prov_setup(const struct spp_layer *l, int64_t m, int64_t k, struct spp_provenance_counts *out);

/* An empty part (min_bits UINT32_MAX). */
void spp_prov_part_init(struct prov_part *pp);

/* Row i of s's layer into pp, decoded PROV_CHUNK values at a time into buf. */
void spp_prov_row(const struct view_scan *s, int64_t i, float *buf, struct prov_part *pp);

/* One value into pp: a survivor unless it is +-0 or not finite (no magnitude). */
static inline void spp_prov_add(struct prov_part *pp, float v)
{
	uint32_t b;

	__builtin_memcpy(&b, &v, sizeof(b));
	b &= 0x7fffffffu;
	if (b == 0 || b >= 0x7f800000u)
		return;
	pp->hist[b >> 20]++;
	pp->survivors++;
	if (b < pp->min_bits)
		pp->min_bits = b;
}

/* from's counts added into into. */
void spp_prov_merge(struct prov_part *into, const struct prov_part *from);

/* out's figures (its status and step already set) from the merged part. */
void spp_prov_finish(const struct prov_part *pp, struct spp_provenance_counts *out);

/* Set e up to test t's elements for zero; SPP_E_UNSUPPORTED for a dtype
 * without a zero test, SPP_E_FORMAT when t has too few bytes. */
int spp_scan_elems_init(const struct spp_tensor *t, struct elems *e,
			struct spp_error *err);

/* 0, or SPP_E_USAGE when l's GEMM view has a negative size or stride or
 * reaches past its tensor. */
int spp_scan_view_check(const struct spp_layer *l, struct spp_error *err);

/* s's fields (but s->el) from l's view, which must have passed the check. */
void spp_scan_view_init(struct view_scan *s, const struct spp_layer *l);

/*
 * Cut s's rows into work items of *per_item 16-row units, *items of them;
 * returns the number of threads to scan them with (at most *items).
 */
int spp_scan_plan(const struct view_scan *s, int64_t *per_item, int64_t *items);

/* Sum the nt threads' partial counts into out, with the group and block
 * totals of the layer; parts may be NULL when nt is 0. */
void spp_scan_counts_finish(const struct view_scan *s, const struct part *parts,
			    int nt, struct spp_static_counts *out);

/* fn(ctx, i, mask) for each row i of l in order, mask[0, K) its 0/1 zero
 * test in the GEMM view; serial, for the per-kernel pass of a conv. */
int spp_scan_each_row(const struct spp_layer *l, void (*fn)(void *, int64_t, const uint8_t *),
		      void *ctx, struct spp_error *err);

/* spp_static_count() of a layer whose weight is held as its non-zeros
 * (spp_tensor.coo): the same counts, from the entries (static_scan_coo.c). */
int spp_scan_coo_count(const struct spp_layer *l, struct spp_static_counts *out,
		       struct spp_error *err);

#endif
