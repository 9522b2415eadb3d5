/*
 * The provenance counts of the layer scan (static.h, struct
 * spp_provenance_counts): the |w| of the survivors of every row_step-th
 * row into a histogram of their fp32 bits, 8 bins an octave, so that the
 * median's bin and the band below an eighth of it (three octaves down,
 * on a bin edge) come out as exact integer counts whatever the threads.
 */
#include "profiler/decode.h"
#include "profiler/static_scan_internal.h"

#include <string.h>

void spp_prov_setup(const struct spp_layer *l, int64_t m, int64_t k, struct spp_provenance_counts *out)
{
	const struct spp_dtype_info *d = spp_dtype_info(l->weight->dtype);
	uint64_t by_values = ((uint64_t)m * (uint64_t)k + SPP_PROV_VALUES - 1) / SPP_PROV_VALUES;

	memset(out, 0, sizeof(*out));
	out->row_step = (m + SPP_PROV_ROWS - 1) / SPP_PROV_ROWS;
	if ((uint64_t)out->row_step < by_values)
		out->row_step = (int64_t)by_values;
	if (out->row_step < 1)
		out->row_step = 1;
	if (d && d->bits == 0)
		out->status = SPP_PROV_BLOCK_SCALE;
	else if (!d || !spp_decode_supported(l->weight->dtype))
		out->status = SPP_PROV_NO_DECODE;
	else
		out->integer = !d->is_float;
}

void spp_prov_part_init(struct prov_part *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->min_bits = UINT32_MAX;
}

void spp_prov_row(const struct view_scan *s, int64_t i, float *buf, struct prov_part *pp)
{
	for (int64_t j0 = 0; j0 < s->k; j0 += PROV_CHUNK) {
		int64_t n = s->k - j0 < PROV_CHUNK ? s->k - j0 : PROV_CHUNK;

		spp_layer_decode_span(s->l, i, j0, n, buf);
		for (int64_t j = 0; j < n; j++)
			spp_prov_add(pp, buf[j]);
	}
	pp->rows++;
}

void spp_prov_merge(struct prov_part *into, const struct prov_part *from)
{
	for (int b = 0; b < PROV_BINS; b++)
		into->hist[b] += from->hist[b];
	into->rows += from->rows;
	into->survivors += from->survivors;
	if (from->min_bits < into->min_bits)
		into->min_bits = from->min_bits;
}

static float from_bits(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

void spp_prov_finish(const struct prov_part *pp, struct spp_provenance_counts *out)
{
	uint64_t rank, seen = 0;
	int mb = 0;

	out->rows = pp->rows;
	out->survivors = pp->survivors;
	if (out->status != SPP_PROV_COUNTED || pp->survivors == 0)
		return;
	/* the lower median: the survivor of rank (n - 1) / 2 from the smallest */
	rank = (pp->survivors - 1) / 2;
	while (mb < PROV_BINS - 1 && seen + pp->hist[mb] <= rank)
		seen += pp->hist[mb++];
	out->scale = from_bits((uint32_t)mb << 20);
	for (int b = 0; b < mb - 3 * PROV_OCTAVE; b++)
		out->in_band += pp->hist[b];
	out->min_abs = from_bits(pp->min_bits);
}
