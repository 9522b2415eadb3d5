/*
 * From scan counts to the figures of DESIGN section 3. Pure arithmetic on
 * the counts, kept apart from the scan so that each formula can be checked
 * by hand.
 */
#include "profiler/static.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const int spp_block_sizes[SPP_NBLOCK] = {2, 4, 8, 16};
const struct spp_nm spp_nm_patterns[SPP_NNM] = {
	{1, 4, "nm1_4"}, {2, 4, "nm2_4"}, {4, 8, "nm4_8"}};
const int spp_nm_widths[SPP_NWIDTH] = {4, 8, 16};

const struct spp_format_ops *spp_storage_ops(enum spp_storage_fmt f)
{
	if ((int)f <= SPP_ST_DENSE || f >= SPP_ST_COUNT)
		return NULL;
	return spp_cpu_formats[f - 1];
}

const char *spp_storage_key(enum spp_storage_fmt f)
{
	if (f == SPP_ST_DENSE)
		return "dense";
	return spp_storage_ops(f) ? spp_storage_ops(f)->key : "?";
}

int spp_storage_find(const char *key)
{
	for (int f = 0; key && f < SPP_ST_COUNT; f++)
		if (strcmp(spp_storage_key((enum spp_storage_fmt)f), key) == 0)
			return f;
	return -1;
}

const char *spp_pattern_class_name(enum spp_pattern_class c)
{
	switch (c) {
	case SPP_CLASS_DENSE:
		return "dense";
	case SPP_CLASS_NM:
		return "nm";
	case SPP_CLASS_CHANNEL:
		return "channel";
	case SPP_CLASS_BLOCK:
		return "block";
	case SPP_CLASS_UNSTRUCTURED:
		return "unstructured";
	case SPP_CLASS_KERNEL:
		return "kernel";
	case SPP_CLASS_PATTERN:
		return "pattern";
	}
	return "?";
}

/* Non-zero kernels the n commonest masks hold. */
static uint64_t top_kernels(const struct spp_kernel_counts *kc, int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n && i < kc->ntop; i++)
		sum += kc->top_count[i];
	return sum;
}

/*
 * Pattern-based pruning: kernels of 4 or more weights, the 16 commonest
 * masks holding >= 95 % of the non-zero kernels, and at least half of the
 * zeros inside non-zero kernels (else the zeros are whole kernels).
 */
static int pattern_pruned(const struct spp_kernel_counts *kc, uint64_t zeros)
{
	uint64_t nzk = kc->kernels - kc->zero, in_zero = kc->zero * (uint64_t)kc->size;

	return kc->size >= 4 && kc->patterns > 0 && nzk > 0 &&
	       top_kernels(kc, SPP_KERNEL_TOP) * 20 >= nzk * 19 && (zeros - in_zero) * 2 >= zeros;
}

static enum spp_pattern_class classify(const struct spp_static_counts *c,
				       uint64_t numel)
{
	const struct spp_kernel_counts *kc = &c->kernel;
	uint64_t zeros = numel - c->nnz;
	uint64_t zr = c->zero_rows, zc = c->zero_cols;
	uint64_t m = (uint64_t)c->m, k = (uint64_t)c->k;
	uint64_t in_lines;

	/* sparsity < 5 %, in integers so that 5 % exactly is not dense */
	if (zeros * 20 < numel)
		return SPP_CLASS_DENSE;
	for (int i = 0; i < SPP_NNM; i++)
		if (c->nm_ok[i] == c->nm_groups[i])
			return SPP_CLASS_NM;
	/* zeros covered by the zero rows and columns; their crossings once */
	in_lines = zr * k + zc * m - zr * zc;
	if (in_lines * 10 >= zeros * 9)
		return SPP_CLASS_CHANNEL;
	if (kc->size >= 2 && kc->zero * (uint64_t)kc->size * 10 >= zeros * 9)
		return SPP_CLASS_KERNEL;
	if (c->zeros_in_zero_block4 * 10 >= zeros * 9)
		return SPP_CLASS_BLOCK;
	if (pattern_pruned(kc, zeros))
		return SPP_CLASS_PATTERN;
	return SPP_CLASS_UNSTRUCTURED;
}

static void set_bytes(struct spp_storage *s, double bytes, double dense)
{
	s->applicable = 1;
	s->bytes = bytes;
	s->ratio = bytes > 0 ? dense / bytes : 0.0;
	s->reason[0] = '\0';
}

/* The counts of the entry's own pattern; 0 when the scan counts no such pattern. */
static int pattern_counts(const struct spp_static_counts *c, const struct spp_format_ops *ops,
			  struct spp_storage_counts *out)
{
	if (ops->keep > 0) {
		for (int i = 0; i < SPP_NNM; i++)
			if (spp_nm_patterns[i].n == ops->keep && spp_nm_patterns[i].m == ops->block) {
				out->groups = c->nm_groups[i];
				out->groups_ok = c->nm_ok[i];
				return 1;
			}
		return 0;
	}
	if (ops->block > 0) {
		for (int b = 0; b < SPP_NBLOCK; b++)
			if (spp_block_sizes[b] == ops->block) {
				out->blocks = c->blocks[b];
				out->zero_blocks = c->zero_blocks[b];
				return 1;
			}
		return 0;
	}
	return 1;
}

/*
 * How dtype's values are stored (kernels.h): their bits, and for ggml's
 * Q8_0 and Q4_0 (a 2-byte f16 scale d per 32 values) the code's bits and
 * the scale. Other block types have no zero test, so no storage figures.
 */
static void value_layout(enum spp_dtype dtype, struct spp_storage_counts *sc)
{
	const struct spp_dtype_info *d = spp_dtype_info(dtype);

	sc->value_bits = d ? d->bits : 0;
	sc->qblock = sc->qscale = 0;
	if (d && d->bits == 0 && d->block_elems > 0) {
		sc->qblock = d->block_elems;
		sc->qscale = 2;
		sc->value_bits = (d->block_bytes - sc->qscale) * 8 / d->block_elems;
	}
}

/* One format's storage row: its registry entry's formula on the scan's counts. */
static void format_storage(const struct spp_static_counts *c, const struct spp_format_ops *ops,
			   enum spp_dtype dtype, double dense, struct spp_storage *s)
{
	struct spp_storage_counts sc = {c->m, c->k, c->nnz, 0, 0, 0, 0, 0, 0, 0};
	struct spp_error err = {0};
	double bytes = 0;

	memset(s, 0, sizeof(*s));
	value_layout(dtype, &sc);
	if (!pattern_counts(c, ops, &sc)) {
		snprintf(s->reason, sizeof(s->reason), "the static scan counts no %s pattern", ops->key);
		return;
	}
	if (ops->storage(ops, &sc, &bytes, &err) != 0) {
		snprintf(s->reason, sizeof(s->reason), "%.127s", err.msg);
		return;
	}
	set_bytes(s, bytes, dense);
}

void spp_static_derive(const struct spp_static_counts *c, enum spp_dtype dtype,
		       int64_t n, struct spp_layer_static *out)
{
	double m = (double)c->m, k = (double)c->k, nn = (double)n;
	double nnz = (double)c->nnz;
	double dense;

	memset(out, 0, sizeof(*out));
	out->counts = *c;
	out->numel = (uint64_t)c->m * (uint64_t)c->k;
	out->sparsity = out->numel ? 1.0 - nnz / (double)out->numel : 0.0;

	out->flops_dense = 2.0 * m * k * nn;
	out->flops_sparse = 2.0 * nnz * nn;
	out->theoretical_speedup =
		out->flops_sparse > 0 ? out->flops_dense / out->flops_sparse : 0.0;

	for (int i = 0; i < SPP_NNM; i++) {
		out->nm[i] = c->nm_groups[i] ?
			(double)c->nm_ok[i] / (double)c->nm_groups[i] : 0.0;
		out->nm_m[i] = c->nm_groups_m[i] ?
			(double)c->nm_ok_m[i] / (double)c->nm_groups_m[i] : 0.0;
	}
	for (int b = 0; b < SPP_NBLOCK; b++)
		out->block[b] = c->blocks[b] ?
			(double)c->zero_blocks[b] / (double)c->blocks[b] : 0.0;

	if (c->m > 0) {
		double mean = nnz / m;
		double var = c->row_nnz_sumsq / m - mean * mean; /* population */

		out->row_nnz_mean = mean;
		out->row_nnz_cv = mean > 0 ? sqrt(var > 0 ? var : 0.0) / mean : 0.0;
	}
	for (int i = 0; i < 3; i++)
		out->kernel_cover[i] = NAN;
	if (c->kernel.size > 0 && c->kernel.kernels > 0) {
		const struct spp_kernel_counts *kc = &c->kernel;
		uint64_t nzk = kc->kernels - kc->zero;

		for (int i = 0; i < 3 && kc->patterns >= 0 && nzk > 0; i++)
			out->kernel_cover[i] = (double)top_kernels(kc, 4 << i) / (double)nzk;
	}
	out->cls = classify(c, out->numel);
	spp_static_derive_levels(c, out);

	{
		struct spp_storage_counts sc = {c->m, c->k, c->nnz, 0, 0, 0, 0, 0, 0, 0};

		value_layout(dtype, &sc);
		dense = (double)spp_value_bytes(&sc, out->numel);
	}
	set_bytes(&out->storage[SPP_ST_DENSE], dense, dense);
	for (int f = SPP_ST_DENSE + 1; f < SPP_ST_COUNT; f++)
		format_storage(c, spp_storage_ops((enum spp_storage_fmt)f), dtype, dense,
			       &out->storage[f]);
}
