/* The table of CPU formats, in report order. */
#include <string.h>

#include "kernels/cpu/cpu.h"

const struct spp_format_ops *const spp_cpu_formats[] = {
	&spp_cpu_csr, &spp_cpu_coo, &spp_cpu_bsr4, &spp_cpu_bsr8, &spp_cpu_bsr16,
	&spp_cpu_bitmask, &spp_cpu_nm1_4, &spp_cpu_nm2_4, &spp_cpu_nm4_8, NULL,
};

const struct spp_format_ops *spp_cpu_format_find(const char *key)
{
	if (!key)
		return NULL;
	for (int i = 0; spp_cpu_formats[i]; i++)
		if (strcmp(spp_cpu_formats[i]->key, key) == 0)
			return spp_cpu_formats[i];
	return NULL;
}
