/* A CUDA build without CUPTI's libraries: no GPU counters, said once per run; see cupti.h. */
#include "counters/cupti.h"

#include <math.h>
#include <stdio.h>

#define NO_CUPTI "CUPTI: not in this build (libcupti or libnvperf_host not found)"

int spp_cupti_probe(int have_device, char *line, size_t len)
{
	(void)have_device;
	snprintf(line, len, NO_CUPTI);
	return 0;
}

int spp_cupti_open(struct spp_cupti **out, struct spp_error *err)
{
	*out = NULL;
	return spp_error_set(err, SPP_E_UNSUPPORTED, NO_CUPTI);
}

int spp_cupti_measure(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err),
		      void *ctx, struct spp_cupti_figures *g, struct spp_error *err)
{
	(void)s, (void)launch, (void)ctx;
	g->dram_read_bytes = g->dram_write_bytes = NAN;
	g->l2_hit_rate = g->l1_hit_rate = g->achieved_occupancy = NAN;
	g->sm_active_imbalance = g->branch_efficiency = NAN;
	g->note[0] = '\0';
	return spp_error_set(err, SPP_E_UNSUPPORTED, NO_CUPTI);
}

void spp_cupti_close(struct spp_cupti *s)
{
	(void)s;
}
