/*
 * The `sim` counter backend: a cache simulator per session whose trace
 * points listen on the calling thread between start and stop
 * (spp_sim_trace_attach), read as the counts of its levels.
 */
#include "counters/sim.h"

#include <stdlib.h>
#include <string.h>

/* The backend: a simulator per session that listens between start and stop. */
struct sim_session {
	struct spp_sim *sim;
	struct spp_sim_geometry g;
	int threads;
};

static void sim_probe(struct spp_counter_avail *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "sim";
	out->works = 1;
	out->cache_events = 1;
	out->events = 1u << SPP_CEV_L1D_ACCESSES | 1u << SPP_CEV_L1D_MISSES |
		      1u << SPP_CEV_L2_ACCESSES | 1u << SPP_CEV_L2_MISSES |
		      1u << SPP_CEV_LLC_ACCESSES | 1u << SPP_CEV_LLC_MISSES;
}

static int sim_open(const struct spp_counter_config *cfg, void **session, struct spp_error *err)
{
	struct sim_session *s = calloc(1, sizeof(*s));
	int rc;

	*session = NULL;
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "sim: out of memory");
	if (cfg->sim)
		s->g = *(const struct spp_sim_geometry *)cfg->sim;
	else
		spp_sim_geometry_default(&s->g);
	s->threads = cfg->threads > 0 ? cfg->threads : 1;
	rc = spp_sim_create(&s->g, s->threads, &s->sim, err);
	if (rc) {
		free(s);
		return rc;
	}
	*session = s;
	return SPP_OK;
}

static int sim_start(void *session)
{
	struct sim_session *s = session;

	spp_sim_trace_attach(s->sim, 0);
	return SPP_OK;
}

static int sim_stop(void *session)
{
	(void)session;
	spp_sim_trace_attach(NULL, 0);
	return SPP_OK;
}

static int sim_read(void *session, struct spp_counter_sample *out)
{
	struct sim_session *s = session;

	spp_sim_sample(out, s->sim, &s->g, s->threads, 1, NULL);
	return SPP_OK;
}

static void sim_close(void *session)
{
	struct sim_session *s = session;

	if (!s)
		return;
	spp_sim_trace_detach(s->sim);
	spp_sim_destroy(s->sim);
	free(s);
}

static int sim_list_events(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx)
{
	static const char *const names[][2] = {
		{"l1d_accesses", "cache lines touched by the trace points"},
		{"l1d_misses", "L1D misses (per simulated core)"},
		{"l2_accesses", "L1D misses looked up in the L2"},
		{"l2_misses", "L2 misses"},
		{"llc_accesses", "lookups in the shared LLC"},
		{"llc_misses", "LLC misses, one DRAM line fill each"},
	};
	int n = (int)(sizeof(names) / sizeof(names[0]));

	for (int i = 0; fn && i < n; i++)
		fn(ctx, names[i][0], names[i][1]);
	return n;
}

const struct spp_counter_backend spp_counters_sim = {
	.name = "sim",
	.summary = "trace-driven cache simulator (LRU L1D/L2 per thread, shared LLC), deterministic",
	.probe = sim_probe,
	.open = sim_open,
	.start = sim_start,
	.stop = sim_stop,
	.read = sim_read,
	.close = sim_close,
	.list_events = sim_list_events,
};
