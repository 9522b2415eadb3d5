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

static const char *const storage_keys[SPP_ST_COUNT] = {
	[SPP_ST_DENSE] = "dense",   [SPP_ST_CSR] = "csr",
	[SPP_ST_COO] = "coo",       [SPP_ST_BSR4] = "bsr4",
	[SPP_ST_BSR8] = "bsr8",     [SPP_ST_BSR16] = "bsr16",
	[SPP_ST_BITMASK] = "bitmask", [SPP_ST_NM1_4] = "nm1_4",
	[SPP_ST_NM2_4] = "nm2_4",   [SPP_ST_NM4_8] = "nm4_8",
};

const char *spp_storage_key(enum spp_storage_fmt f)
{
	if ((int)f < 0 || f >= SPP_ST_COUNT)
		return "?";
	return storage_keys[f];
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
	}
	return "?";
}

static int ceil_log2(int v)
{
	int b = 0;

	while ((1 << b) < v)
		b++;
	return b;
}

static enum spp_pattern_class classify(const struct spp_static_counts *c,
				       uint64_t numel)
{
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
	if (c->zeros_in_zero_block4 * 10 >= zeros * 9)
		return SPP_CLASS_BLOCK;
	return SPP_CLASS_UNSTRUCTURED;
}

static void set_bytes(struct spp_storage *s, double bytes, double dense)
{
	s->applicable = 1;
	s->bytes = bytes;
	s->ratio = bytes > 0 ? dense / bytes : 0.0;
	s->reason[0] = '\0';
}

void spp_static_derive(const struct spp_static_counts *c, enum spp_dtype dtype,
		       int64_t n, struct spp_layer_static *out)
{
	double m = (double)c->m, k = (double)c->k, nn = (double)n;
	double nnz = (double)c->nnz, vb = spp_dtype_value_bytes(dtype);
	double dense;

	memset(out, 0, sizeof(*out));
	out->counts = *c;
	out->numel = (uint64_t)c->m * (uint64_t)c->k;
	out->sparsity = out->numel ? 1.0 - nnz / (double)out->numel : 0.0;

	out->flops_dense = 2.0 * m * k * nn;
	out->flops_sparse = 2.0 * nnz * nn;
	out->theoretical_speedup =
		out->flops_sparse > 0 ? out->flops_dense / out->flops_sparse : 0.0;

	for (int i = 0; i < SPP_NNM; i++)
		out->nm[i] = c->nm_groups[i] ?
			(double)c->nm_ok[i] / (double)c->nm_groups[i] : 0.0;
	for (int b = 0; b < SPP_NBLOCK; b++)
		out->block[b] = c->blocks[b] ?
			(double)c->zero_blocks[b] / (double)c->blocks[b] : 0.0;

	if (c->m > 0) {
		double mean = nnz / m;
		double var = c->row_nnz_sumsq / m - mean * mean; /* population */

		out->row_nnz_mean = mean;
		out->row_nnz_cv = mean > 0 ? sqrt(var > 0 ? var : 0.0) / mean : 0.0;
	}
	out->cls = classify(c, out->numel);

	dense = m * k * vb;
	set_bytes(&out->storage[SPP_ST_DENSE], dense, dense);
	set_bytes(&out->storage[SPP_ST_CSR], nnz * (vb + 4) + (m + 1) * 4, dense);
	set_bytes(&out->storage[SPP_ST_COO], nnz * (vb + 8), dense);
	for (int b = 1; b < SPP_NBLOCK; b++) {
		/* bsr4, bsr8, bsr16 follow each other in the enum */
		double bs = spp_block_sizes[b];
		double nzb = (double)(c->blocks[b] - c->zero_blocks[b]);
		double brows = (double)((c->m + spp_block_sizes[b] - 1) / spp_block_sizes[b]);

		set_bytes(&out->storage[SPP_ST_BSR4 + b - 1],
			  nzb * bs * bs * vb + nzb * 4 + (brows + 1) * 4, dense);
	}
	set_bytes(&out->storage[SPP_ST_BITMASK],
		  m * (double)((c->k + 7) / 8) + nnz * vb + (m + 1) * 4, dense);
	for (int i = 0; i < SPP_NNM; i++) {
		const struct spp_nm *p = &spp_nm_patterns[i];
		struct spp_storage *s = &out->storage[SPP_ST_NM1_4 + i];
		uint64_t g = c->nm_groups[i];
		uint64_t idx_bits = g * (uint64_t)p->n * (uint64_t)ceil_log2(p->m);

		if (c->nm_ok[i] != g) {
			s->applicable = 0;
			snprintf(s->reason, sizeof(s->reason),
				 "not %d:%d compliant: %.3g%% of groups hold more than %d non-zeros",
				 p->n, p->m, 100.0 * (double)(g - c->nm_ok[i]) / (double)g,
				 p->n);
			continue;
		}
		set_bytes(s, (double)g * p->n * vb + (double)((idx_bits + 7) / 8), dense);
	}
}
