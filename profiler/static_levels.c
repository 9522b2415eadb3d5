/*
 * The figures on where a layer's zeros are and where its mask came from
 * (static.h): the granularity levels, an all-zero or nearly-zero layer,
 * and the provenance verdict, each from the scan's integer counts.
 */
#include "profiler/static.h"
#include "base/share.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *spp_gran_name(enum spp_gran_level g)
{
	static const char *const names[SPP_NGRAN] = {"element", "row", "column",
						     "kernel", "channel", "layer"};

	return (int)g >= 0 && g < SPP_NGRAN ? names[g] : "?";
}

const char *spp_layer_zero_name(enum spp_layer_zero z)
{
	return z == SPP_LAYER_ZERO ? "zero" : z == SPP_LAYER_NEARLY_ZERO ? "nearly_zero" : NULL;
}

const char *spp_provenance_name(enum spp_provenance p)
{
	switch (p) {
	case SPP_PROV_MAGNITUDE:
		return "magnitude-like";
	case SPP_PROV_RANDOM:
		return "random-like";
	case SPP_PROV_UNCLEAR:
		return "unclear";
	case SPP_PROV_STRUCTURED:
		return "structured";
	case SPP_PROV_NOT_JUDGED:
		break;
	}
	return NULL;
}

enum spp_provenance spp_provenance_judge(uint64_t survivors, uint64_t in_band, char *why, size_t n)
{
	char share[64];

	if (survivors < SPP_PROV_MIN_SURVIVORS) {
		snprintf(why, n, "%llu surviving weights sampled, under %d",
			 (unsigned long long)survivors, SPP_PROV_MIN_SURVIVORS);
		return SPP_PROV_UNCLEAR;
	}
	/* integers: at most 0.5 %, at least 2 % */
	if (in_band * 200 <= survivors)
		return SPP_PROV_MAGNITUDE;
	if (in_band * 50 >= survivors)
		return SPP_PROV_RANDOM;
	snprintf(why, n, "%s of the survivors below scale / 8: between a magnitude "
		 "mask's 0.5%% and a random one's 2%%",
		 spp_share_text(in_band, survivors, share, sizeof(share)));
	return SPP_PROV_UNCLEAR;
}

int spp_provenance_countable(const struct spp_static_counts *c, uint64_t numel, char *why, size_t n)
{
	const struct spp_provenance_counts *p = &c->prov;

	why[0] = '\0';
	if (p->status == SPP_PROV_NO_DECODE)
		snprintf(why, n, "the dtype has no fp32 decoding");
	else if (p->status == SPP_PROV_BLOCK_SCALE)
		snprintf(why, n, "block-quantized: a scale per block, magnitudes not comparable");
	else if ((numel - c->nnz) * 20 < numel)
		snprintf(why, n, "no mask: under 5%% zeros");
	else if (c->nnz == 0)
		snprintf(why, n, "no weight survives");
	else
		return 1;
	return 0;
}

static void provenance(const struct spp_static_counts *c, struct spp_layer_static *out)
{
	const struct spp_provenance_counts *p = &c->prov;
	char *why = out->prov_reason;
	size_t n = sizeof(out->prov_reason);

	out->prov = SPP_PROV_NOT_JUDGED;
	out->prov_low_share = out->prov_min_ratio = NAN;
	if (p->status != SPP_PROV_COUNTED) {
		spp_provenance_countable(c, out->numel, why, n);
		return;
	}
	if (p->survivors > 0) {
		out->prov_low_share = (double)p->in_band / (double)p->survivors;
		out->prov_min_ratio = p->scale > 0 ? (double)p->min_abs / (double)p->scale : NAN;
	}
	if (!spp_provenance_countable(c, out->numel, why, n))
		return;
	/* whole units hold the zeros: a structured mask, not judged by magnitude (nor pooled) */
	for (int u = SPP_GRAN_ROW; u <= SPP_GRAN_CHANNEL; u++) {
		const struct spp_granularity *g = &out->gran[u];

		if (g->defined && g->zeros_share >= SPP_PROV_STRUCTURED_SHARE) {
			const char *unit = spp_gran_name((enum spp_gran_level)u);

			snprintf(why, n, "whole %ss hold %.1f%% of the zeros, %llu of %llu %ss zero",
				 unit, 100 * g->zeros_share, (unsigned long long)g->zero,
				 (unsigned long long)g->units, unit);
			out->prov = SPP_PROV_STRUCTURED;
			return;
		}
	}
	if (p->integer && p->scale < 8) {
		snprintf(why, n, "integer codes: the band below scale / 8 (%g) is under one step",
			 (double)p->scale / 8);
		out->prov = SPP_PROV_UNCLEAR;
		return;
	}
	out->prov_pooled = 1;
	out->prov = spp_provenance_judge(p->survivors, p->in_band, why, n);
}

static void level(struct spp_granularity *g, uint64_t units, uint64_t zero, uint64_t in_zero,
		  uint64_t zeros)
{
	g->defined = 1;
	g->units = units;
	g->zero = zero;
	g->fraction = units ? (double)zero / (double)units : NAN;
	g->zeros_share = zeros ? (double)in_zero / (double)zeros : NAN;
}

void spp_static_derive_levels(const struct spp_static_counts *c, struct spp_layer_static *out)
{
	const struct spp_kernel_counts *kc = &c->kernel;
	uint64_t m = (uint64_t)c->m, k = (uint64_t)c->k, zeros = out->numel - c->nnz;
	struct spp_granularity *g = out->gran;

	memset(g, 0, sizeof(out->gran));
	level(&g[SPP_GRAN_ELEMENT], out->numel, zeros, zeros, zeros);
	level(&g[SPP_GRAN_ROW], m, c->zero_rows, c->zero_rows * k, zeros);
	level(&g[SPP_GRAN_COLUMN], k, c->zero_cols, c->zero_cols * m, zeros);
	if (kc->size >= 2) {
		level(&g[SPP_GRAN_KERNEL], kc->kernels, kc->zero, kc->zero * (uint64_t)kc->size, zeros);
		level(&g[SPP_GRAN_CHANNEL], kc->channels, kc->zero_channels,
		      kc->zero_channels * (uint64_t)kc->size * m, zeros);
	}
	level(&g[SPP_GRAN_LAYER], 1, c->nnz == 0, c->nnz == 0 ? zeros : 0, zeros);
	out->layer_zero = SPP_LAYER_LIVE;
	if (out->numel > 0 && c->nnz == 0)
		out->layer_zero = SPP_LAYER_ZERO;
	else if (out->numel > 0 && c->nnz <= 64 && c->nnz * 1000 <= out->numel)
		out->layer_zero = SPP_LAYER_NEARLY_ZERO;
	provenance(c, out);
}
