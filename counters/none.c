/* The `none` counter backend: timing only, every cache figure null. */
#include "counters/counters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void none_probe(struct spp_counter_avail *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "none";
	out->works = 1;
}

static int none_open(const struct spp_counter_config *cfg, void **session, struct spp_error *err)
{
	(void)cfg;
	(void)err;
	/* a session of nothing: a non-NULL token the caller can close */
	*session = (void *)&spp_counter_backends;
	return SPP_OK;
}

static int none_bracket(void *session)
{
	(void)session;
	return SPP_OK;
}

static int none_read(void *session, struct spp_counter_sample *out)
{
	(void)session;
	memset(out, 0, sizeof(*out));
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		out->v[e] = NAN;
	out->scaled = 1;
	return SPP_OK;
}

static void none_close(void *session)
{
	(void)session;
}

static int none_list_events(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx)
{
	(void)fn;
	(void)ctx;
	return 0;
}

const struct spp_counter_backend spp_counters_none = {
	.name = "none",
	.summary = "timing only: no cache figures",
	.probe = none_probe,
	.open = none_open,
	.start = none_bracket,
	.stop = none_bracket,
	.read = none_read,
	.close = none_close,
	.list_events = none_list_events,
};
