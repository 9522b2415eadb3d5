/* The table of CPU formats, in report order: SPP_CPU_FORMAT_LIST (kernels.h). */
#include <string.h>

#include "kernels/cpu/cpu.h"

const struct spp_format_ops *const spp_cpu_formats[] = {
#define CPU_ENTRY(id, key) &spp_cpu_##key,
	SPP_CPU_FORMAT_LIST(CPU_ENTRY)
#undef CPU_ENTRY
	NULL,
};

const struct spp_format_ops *const spp_cpu_act_formats[] = {
	&spp_cpu_csc, &spp_cpu_csr_act, &spp_cpu_csc_act, NULL,
};

const struct spp_format_ops *spp_cpu_format_find(const char *key)
{
	const struct spp_format_ops *const *tables[] = {spp_cpu_formats, spp_cpu_act_formats};

	if (!key)
		return NULL;
	for (int t = 0; t < 2; t++)
		for (int i = 0; tables[t][i]; i++)
			if (strcmp(tables[t][i]->key, key) == 0)
				return tables[t][i];
	return NULL;
}
