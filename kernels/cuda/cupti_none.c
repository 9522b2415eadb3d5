/* A CUDA build without CUPTI's libraries: no counters, said once per run; see cupti.h. */
#include "kernels/cuda/cupti.h"

#include <stdio.h>

#define NO_CUPTI "CUPTI: not in this build (libcupti or libnvperf_host not found)"

int spp_cupti_open(struct spp_cupti **out, char *why, size_t why_len)
{
	*out = NULL;
	snprintf(why, why_len, NO_CUPTI);
	return -1;
}

void spp_cupti_measure(struct spp_cupti *s, struct spp_cuda_case *c, struct spp_cupti_figures *g)
{
	(void)s, (void)c;
	g->ok = 0;
	snprintf(g->note, sizeof(g->note), NO_CUPTI);
}

void spp_cupti_close(struct spp_cupti *s)
{
	(void)s;
}

void spp_cupti_describe(int have_device, char *buf, size_t len)
{
	(void)have_device;
	snprintf(buf, len, NO_CUPTI);
}
