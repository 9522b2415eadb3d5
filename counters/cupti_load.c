/*
 * The binary's GPU counters (cupti.h), forwarded to libspprof-cuda.so
 * (cupti_module.h), loaded on first use. Without the module there are no
 * counters and every call says why in one line beginning "CUPTI".
 *
 * The loaded table is the one state kept here: set once under pthread_once
 * and read-only after, as the module stays loaded.
 */
#include "counters/cupti_module.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "config.h"
#include "base/module.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct spp_cupti_ops *table;
static char why[200];

static void load(void)
{
	const struct spp_cupti_ops *t = spp_module_table(SPP_CUDA_MODULE_FILE, SPP_CUPTI_MODULE_SYMBOL,
							 why, sizeof(why));

	if (t && (t->version != SPP_CUPTI_MODULE_VERSION || t->size != sizeof(*t))) {
		snprintf(why, sizeof(why), "'%s' is from another build (table version %d, %zu bytes)",
			 SPP_CUDA_MODULE_FILE, t->version, t->size);
		t = NULL;
	}
	table = t;
}

static const struct spp_cupti_ops *ops(void)
{
	pthread_once(&once, load);
	return table;
}

int spp_cupti_probe(int have_device, char *line, size_t len)
{
	if (!ops()) {
		snprintf(line, len, "CUPTI: not loaded: %s", why);
		return 0;
	}
	return table->probe(have_device, line, len);
}

int spp_cupti_open(struct spp_cupti **out, struct spp_error *err)
{
	*out = NULL;
	if (!ops())
		return spp_error_set(err, SPP_E_UNSUPPORTED, "CUPTI: not loaded: %s", why);
	return table->open(out, err);
}

int spp_cupti_measure(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err),
		      void *ctx, struct spp_cupti_figures *g, struct spp_error *err)
{
	if (ops())
		return table->measure(s, launch, ctx, g, err);
	g->dram_read_bytes = g->dram_write_bytes = NAN;
	g->l2_hit_rate = g->l1_hit_rate = g->achieved_occupancy = NAN;
	g->sm_active_imbalance = g->branch_efficiency = NAN;
	g->note[0] = '\0';
	return spp_error_set(err, SPP_E_UNSUPPORTED, "CUPTI: not loaded: %s", why);
}

void spp_cupti_close(struct spp_cupti *s)
{
	if (s && ops())
		table->close(s);
}
