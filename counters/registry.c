/*
 * The counter backends built in (under HAVE_PAPI / HAVE_PFM from meson's
 * config.h), the choice behind --counters, and the cache figures a run's
 * report holds.
 */
#include "counters/counters.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "counters/sim.h"

#if HAVE_PAPI
extern const struct spp_counter_backend spp_counters_papi;
#endif
#if HAVE_PFM
extern const struct spp_counter_backend spp_counters_perf;
#endif
extern const struct spp_counter_backend spp_counters_none;

const struct spp_counter_backend *const spp_counter_backends[] = {
#if HAVE_PAPI
	&spp_counters_papi,
#endif
#if HAVE_PFM
	&spp_counters_perf,
#endif
	&spp_counters_sim,
	&spp_counters_none,
	NULL,
};

static const char *const event_names[] = {
#define SPP_CEV_NAME(id, name) name,
	SPP_COUNTER_EVENTS(SPP_CEV_NAME)
#undef SPP_CEV_NAME
};

const char *spp_counter_event_name(enum spp_counter_event e)
{
	return (int)e >= 0 && e < SPP_CEV_COUNT ? event_names[e] : "?";
}

const struct spp_counter_backend *spp_counter_backend_find(const char *name)
{
	for (int i = 0; name && spp_counter_backends[i]; i++)
		if (strcmp(spp_counter_backends[i]->name, name) == 0)
			return spp_counter_backends[i];
	return NULL;
}

int spp_counters_probe_all(struct spp_counter_avail *out, int max)
{
	int n = 0;

	for (int i = 0; spp_counter_backends[i] && n < max; i++)
		spp_counter_backends[i]->probe(&out[n++]);
	return n;
}

static const struct spp_counter_avail *avail_of(const struct spp_counter_avail *a, int n,
						 const char *name)
{
	for (int i = 0; i < n; i++)
		if (a[i].name && strcmp(a[i].name, name) == 0)
			return &a[i];
	return NULL;
}

/* The names --counters takes, and the hardware backends in the order auto prefers them. */
static const char *const choices[] = {"auto", "papi", "perf", "sim", "none"};
static const char *const hardware[] = {"papi", "perf"};

#define NCHOICES (sizeof(choices) / sizeof(choices[0]))
#define NHARDWARE (sizeof(hardware) / sizeof(hardware[0]))

/* The entry of list that is the len bytes at s; NULL when none is. */
static const char *listed(const char *const *list, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], s, len) == 0)
			return list[i];
	return NULL;
}

static int known(const char *name)
{
	return listed(choices, NCHOICES, name, strlen(name)) != NULL;
}

/* auto or a hardware backend: what the simulator may run beside. */
static int hardware_choice(const char *name)
{
	return strcmp(name, "auto") == 0 || listed(hardware, NHARDWARE, name, strlen(name));
}

int spp_counters_select(const char *want, const struct spp_counter_avail *avail,
			int n, const struct spp_counter_backend **out,
			char *why, size_t why_n, struct spp_error *err)
{
	char buf[512] = "";
	size_t len = 0;

	*out = NULL;
	if (!want || !*want)
		want = "auto";
	if (strcmp(want, "auto") == 0) {
		for (size_t i = 0; i < NHARDWARE; i++) {
			const struct spp_counter_avail *a = avail_of(avail, n, hardware[i]);

			if (a && a->works && a->cache_events && spp_counter_backend_find(hardware[i])) {
				*out = spp_counter_backend_find(hardware[i]);
				if (why && why_n)
					snprintf(why, why_n, "%s, which counts cache events here", hardware[i]);
				return SPP_OK;
			}
			if (len < sizeof(buf))
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s: %s",
							len ? "; " : "", hardware[i],
							!a ? "not built in"
							   : a->why[0] ? a->why : "no cache events here");
		}
		*out = spp_counter_backend_find("sim");
		if (why && why_n)
			snprintf(why, why_n, "sim, since no hardware counter counts cache events here (%s)",
				 buf);
		return SPP_OK;
	}
	if (!known(want))
		return spp_error_set(err, SPP_E_USAGE,
				     "unknown counter backend '%s' (auto, papi, perf, sim, none)", want);
	{
		const struct spp_counter_avail *a = avail_of(avail, n, want);
		const struct spp_counter_backend *b = spp_counter_backend_find(want);

		if (!b || !a)
			return spp_error_set(err, SPP_E_UNSUPPORTED,
					     "counter backend '%s' is not built in (its library was not found at build time)",
					     want);
		if (!a->works)
			return spp_error_set(err, SPP_E_UNSUPPORTED, "counter backend '%s' cannot count here: %s",
					     want, a->why[0] ? a->why : "unavailable");
		*out = b;
		if (why && why_n)
			snprintf(why, why_n, "%s, as asked%s%s", want, a->why[0] ? ": " : "", a->why);
	}
	return SPP_OK;
}

int spp_counters_resolve(const struct spp_counters_opts *o, const struct spp_counter_avail *avail,
			 int n, const struct spp_counter_backend **out, int *beside,
			 char *why, size_t why_n, struct spp_error *err)
{
	int rc = spp_counters_select(o->want, avail, n, out, why, why_n, err);
	size_t len;

	*beside = 0;
	if (rc || !o->sim_beside)
		return rc;
	if (hardware_choice((*out)->name)) {
		*beside = 1;
		return SPP_OK;
	}
	len = why && why_n ? strlen(why) : 0;
	if (why && len + 1 < why_n)
		snprintf(why + len, why_n - len, "; --counters %s,sim: no second simulated block beside "
			 "the simulator's own (cache_sim null)", o->want);
	return SPP_OK;
}

int spp_counters_parse(const char *arg, struct spp_counters_opts *o, struct spp_error *err)
{
	const char *comma = strchr(arg, ','), *name[2] = {NULL, NULL};
	size_t len[2];
	int n = comma ? 2 : 1, sim;

	if (comma && strchr(comma + 1, ','))
		return spp_error_set(err, SPP_E_USAGE, "a list holds two names: a hardware choice "
				     "(auto, papi or perf) and sim, such as papi,sim");
	len[0] = comma ? (size_t)(comma - arg) : strlen(arg);
	len[1] = comma ? strlen(comma + 1) : 0;
	for (int i = 0; i < n; i++) {
		const char *s = i ? comma + 1 : arg;

		if (!(name[i] = listed(choices, NCHOICES, s, len[i])))
			return spp_error_set(err, SPP_E_USAGE, "unknown counter backend '%.*s' (auto, papi, "
					     "perf, sim, none, or a hardware choice and sim: papi,sim)",
					     (int)(len[i] < 64 ? len[i] : 64), s);
	}
	sim = n == 2 ? (strcmp(name[0], "sim") == 0 ? 0 : strcmp(name[1], "sim") == 0 ? 1 : -1) : -1;
	if (n == 2 && (sim < 0 || !hardware_choice(name[1 - sim])))
		return spp_error_set(err, SPP_E_USAGE, "a list is a hardware choice (auto, papi or perf) "
				     "and sim, such as papi,sim; for the simulator alone, sim");
	snprintf(o->want, sizeof(o->want), "%s", n == 2 ? name[1 - sim] : name[0]);
	o->sim_beside = n == 2;
	return SPP_OK;
}

void spp_counters_opts_format(const struct spp_counters_opts *o, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", o->want[0] ? o->want : "auto", o->sim_beside ? ",sim" : "");
}

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int virtualized(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int hv = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0) {
			hv = strstr(line, " hypervisor") != NULL;
			break;
		}
	fclose(f);
	return hv;
}

static int have_cpu_pmu(void)
{
	struct stat st;

	/* the core PMU: "cpu" on most x86, "cpu_core"/"cpu_atom" on hybrids, "armv8_*" elsewhere */
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0 ||
	       stat("/sys/devices/armv8_pmuv3_0", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/armv8_pmuv3_0", &st) == 0;
}

void spp_counters_pmu_reason(int errnum, char *buf, size_t n)
{
	int paranoid = 0;

	if ((errnum == EACCES || errnum == EPERM) &&
	    read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) == 0) {
		snprintf(buf, n, "perf_event_paranoid is %d: counting refused (a process's own threads need 2 or lower)",
			 paranoid);
		return;
	}
	if (errnum == EACCES || errnum == EPERM) {
		snprintf(buf, n, "counting refused: %s", strerror(errnum));
		return;
	}
	if (!have_cpu_pmu()) {
		snprintf(buf, n, "no PMU%s", virtualized() ? " (virtualized)" : " exposed by the kernel");
		return;
	}
	if (errnum)
		snprintf(buf, n, "perf_event_open: %s", strerror(errnum));
	else
		buf[0] = '\0';
}

void spp_cache_figures_init(struct spp_cache_figures *f)
{
	memset(f, 0, sizeof(*f));
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		f->v[e] = NAN;
	f->l1d_miss_rate = f->l2_miss_rate = f->llc_miss_rate = NAN;
	f->dram_bytes = f->sampled = f->runs = NAN;
	f->dram_gbs = f->dram_over_model = NAN;
}

static double ratio(double a, double b)
{
	return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

void spp_cache_figures_from_sample(struct spp_cache_figures *f, const char *source,
				   const struct spp_counter_sample *s, double runs, int line)
{
	double per = runs > 0 ? runs : 1;

	spp_cache_figures_init(f);
	snprintf(f->source, sizeof(f->source), "%s", source);
	f->runs = runs > 0 ? runs : NAN;
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		f->v[e] = isfinite(s->v[e]) ? s->v[e] / per : NAN;
	f->l1d_miss_rate = ratio(f->v[SPP_CEV_L1D_MISSES], f->v[SPP_CEV_L1D_ACCESSES]);
	f->l2_miss_rate = ratio(f->v[SPP_CEV_L2_MISSES], f->v[SPP_CEV_L2_ACCESSES]);
	f->llc_miss_rate = ratio(f->v[SPP_CEV_LLC_MISSES], f->v[SPP_CEV_LLC_ACCESSES]);
	if (isfinite(f->v[SPP_CEV_LLC_MISSES]) && line > 0) {
		f->dram_bytes = f->v[SPP_CEV_LLC_MISSES] * line;
		snprintf(f->dram_from, sizeof(f->dram_from), "llc_misses x %d", line);
	}
	f->nthreads = s->nthreads < SPP_COUNTERS_MAX_THREADS ? s->nthreads : SPP_COUNTERS_MAX_THREADS;
	for (int t = 0; t < f->nthreads; t++) {
		f->thread_l1d[t] = isfinite(s->thread[t][SPP_CEV_L1D_MISSES])
					   ? s->thread[t][SPP_CEV_L1D_MISSES] / per : NAN;
		f->thread_llc[t] = isfinite(s->thread[t][SPP_CEV_LLC_MISSES])
					   ? s->thread[t][SPP_CEV_LLC_MISSES] / per : NAN;
	}
}

void spp_counters_opts_init(struct spp_counters_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->want, sizeof(o->want), "auto");
}
