/*
 * The `papi` counter backend: PAPI presets, one event set per OpenMP
 * thread (PAPI_thread_init, PAPI_register_thread), started and stopped in
 * a parallel region of the same width as the counted one so that the
 * same pool threads count; figures are summed and kept per thread.
 *
 * PAPI's library state is process-wide: it is initialised once
 * (pthread_once), the one piece of global state this backend has.
 */
#include "counters/counters.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <papi.h>

static const int presets[SPP_CEV_COUNT] = {
	[SPP_CEV_L1D_ACCESSES] = PAPI_L1_DCA,
	[SPP_CEV_L1D_MISSES] = PAPI_L1_DCM,
	[SPP_CEV_L2_ACCESSES] = PAPI_L2_DCA,
	[SPP_CEV_L2_MISSES] = PAPI_L2_DCM,
	[SPP_CEV_LLC_ACCESSES] = PAPI_L3_TCA,
	[SPP_CEV_LLC_MISSES] = PAPI_L3_TCM,
	[SPP_CEV_INSTRUCTIONS] = PAPI_TOT_INS,
	[SPP_CEV_CYCLES] = PAPI_TOT_CYC,
	[SPP_CEV_LOADS] = PAPI_LD_INS,
	[SPP_CEV_STORES] = PAPI_SR_INS,
	/* no presets for software events: 0 */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status;

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

static void init_once(void)
{
	int v = PAPI_library_init(PAPI_VER_CURRENT);

	if (v != PAPI_VER_CURRENT) {
		init_status = v < 0 ? v : PAPI_EINVAL;
		return;
	}
	init_status = PAPI_thread_init(thread_id);
}

static int papi_ready(void)
{
	pthread_once(&once, init_once);
	return init_status == PAPI_OK;
}

/* Why the perf_event component cannot count, or "" when it is enabled. */
static void component_reason(char *buf, size_t n)
{
	int cid = PAPI_get_component_index("perf_event");
	const PAPI_component_info_t *c = cid >= 0 ? PAPI_get_component_info(cid) : NULL;
	char pmu[160];

	buf[0] = '\0';
	spp_counters_pmu_reason(0, pmu, sizeof(pmu));
	if (!c)
		snprintf(buf, n, "no perf_event component%s%.120s", pmu[0] ? ": " : "", pmu);
	else if (c->disabled)
		snprintf(buf, n, "perf_event component disabled: %.120s",
			 pmu[0] ? pmu : c->disabled_reason);
}

/* Add the presets of `want` (bits) to es; returns the bits added. */
static unsigned add_events(int es, unsigned want)
{
	unsigned got = 0;

	for (int e = 0; e < SPP_CEV_COUNT; e++)
		if ((want >> e & 1) && presets[e] && PAPI_add_event(es, presets[e]) == PAPI_OK)
			got |= 1u << e;
	return got;
}

static void papi_probe(struct spp_counter_avail *out)
{
	char why[160], pmu[160];
	int es = PAPI_NULL, rc;
	unsigned exist = 0;

	memset(out, 0, sizeof(*out));
	out->name = "papi";
	if (!papi_ready()) {
		snprintf(out->why, sizeof(out->why), "PAPI does not initialise: %s", PAPI_strerror(init_status));
		return;
	}
	component_reason(why, sizeof(why));
	if (why[0]) {
		snprintf(out->why, sizeof(out->why), "%s", why);
		return;
	}
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		if (presets[e] && PAPI_query_event(presets[e]) == PAPI_OK)
			exist |= 1u << e;
	spp_counters_pmu_reason(0, pmu, sizeof(pmu));
	if (!exist) {
		snprintf(out->why, sizeof(out->why), "perf_event component counts no preset here%s%.120s", pmu[0] ? ": " : "", pmu);
		return;
	}
	if (PAPI_create_eventset(&es) != PAPI_OK) {
		snprintf(out->why, sizeof(out->why), "cannot create an event set");
		return;
	}
	out->events = add_events(es, exist);
	rc = out->events ? PAPI_start(es) : PAPI_ENOEVNT;
	if (rc == PAPI_OK) {
		long long v[SPP_CEV_COUNT];

		PAPI_stop(es, v);
		out->works = 1;
	} else {
		snprintf(out->why, sizeof(out->why), "cannot start counting: %s%s%s", PAPI_strerror(rc),
			 pmu[0] ? ": " : "", pmu);
		out->events = 0;
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	out->cache_events = (out->events >> SPP_CEV_L1D_MISSES & 1) && (out->events >> SPP_CEV_LLC_MISSES & 1);
	if (out->works && !out->cache_events)
		snprintf(out->why, sizeof(out->why), "no L1D / LLC miss presets here");
}

struct papi_session {
	int threads;
	unsigned events;
	int es[SPP_COUNTERS_MAX_THREADS];
	unsigned got[SPP_COUNTERS_MAX_THREADS];  /* events each thread's set holds */
	int order[SPP_COUNTERS_MAX_THREADS][SPP_CEV_COUNT]; /* slot of event e, in add order */
	double acc[SPP_COUNTERS_MAX_THREADS][SPP_CEV_COUNT];
	int failed;
};

static void papi_close(void *session)
{
	struct papi_session *s = session;

	if (!s)
		return;
#pragma omp parallel num_threads(s->threads)
	{
		int t = omp_get_thread_num();

		if (t < s->threads && s->es[t] != PAPI_NULL) {
			PAPI_cleanup_eventset(s->es[t]);
			PAPI_destroy_eventset(&s->es[t]);
			PAPI_unregister_thread();
		}
	}
	free(s);
}

static int papi_open(const struct spp_counter_config *cfg, void **session, struct spp_error *err)
{
	struct spp_counter_avail a;
	struct papi_session *s;
	int threads = cfg->threads > 0 ? cfg->threads : 1;

	*session = NULL;
	papi_probe(&a);
	if (!a.works)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "papi: %s", a.why);
	if (threads > SPP_COUNTERS_MAX_THREADS)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "papi: at most %d threads", SPP_COUNTERS_MAX_THREADS);
	s = calloc(1, sizeof(*s));
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "papi: out of memory");
	s->threads = threads;
	s->events = a.events;
	for (int t = 0; t < threads; t++)
		s->es[t] = PAPI_NULL;
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num();

		if (t < threads && PAPI_register_thread() == PAPI_OK &&
		    PAPI_create_eventset(&s->es[t]) == PAPI_OK) {
			int slot = 0;

			s->got[t] = add_events(s->es[t], s->events);
			for (int e = 0; e < SPP_CEV_COUNT; e++)
				s->order[t][e] = s->got[t] >> e & 1 ? slot++ : -1;
		}
	}
	for (int t = 0; t < threads; t++)
		if (s->es[t] == PAPI_NULL || !s->got[t]) {
			papi_close(s);
			return spp_error_set(err, SPP_E_UNSUPPORTED, "papi: thread %d cannot count", t);
		}
	*session = s;
	return SPP_OK;
}

static int papi_start(void *session)
{
	struct papi_session *s = session;
	int bad = 0;

#pragma omp parallel num_threads(s->threads) reduction(+ : bad)
	{
		int t = omp_get_thread_num();

		if (t < s->threads)
			bad += PAPI_start(s->es[t]) != PAPI_OK;
	}
	return bad ? SPP_E_RUNTIME : SPP_OK;
}

static int papi_stop(void *session)
{
	struct papi_session *s = session;
	int bad = 0;

#pragma omp parallel num_threads(s->threads) reduction(+ : bad)
	{
		int t = omp_get_thread_num();
		long long v[SPP_CEV_COUNT];

		if (t < s->threads) {
			if (PAPI_stop(s->es[t], v) == PAPI_OK) {
				for (int e = 0; e < SPP_CEV_COUNT; e++)
					if (s->order[t][e] >= 0)
						s->acc[t][e] += (double)v[s->order[t][e]];
			} else {
				bad++;
			}
		}
	}
	s->failed |= bad > 0;
	return bad ? SPP_E_RUNTIME : SPP_OK;
}

static int papi_read(void *session, struct spp_counter_sample *out)
{
	struct papi_session *s = session;

	memset(out, 0, sizeof(*out));
	out->nthreads = s->threads;
	out->scaled = 1;
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		out->v[e] = NAN;
	for (int t = 0; t < s->threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++) {
			double v = s->order[t][e] >= 0 && !s->failed ? s->acc[t][e] : NAN;

			out->thread[t][e] = v;
			if (isfinite(v))
				out->v[e] = isfinite(out->v[e]) ? out->v[e] + v : v;
		}
	return s->failed ? SPP_E_RUNTIME : SPP_OK;
}

static int papi_list_events(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx)
{
	int count = 0;

	if (!papi_ready())
		return 0;
	for (int e = 0; e < SPP_CEV_COUNT; e++) {
		PAPI_event_info_t info;

		if (!presets[e] || PAPI_get_event_info(presets[e], &info) != PAPI_OK || !info.count)
			continue;
		if (fn)
			fn(ctx, info.symbol, info.long_descr);
		count++;
	}
	return count;
}

const struct spp_counter_backend spp_counters_papi = {
	.name = "papi",
	.summary = "PAPI presets per OpenMP thread (PAPI_thread_init), summed and per thread",
	.probe = papi_probe,
	.open = papi_open,
	.start = papi_start,
	.stop = papi_stop,
	.read = papi_read,
	.close = papi_close,
	.list_events = papi_list_events,
};
