/*
 * The `perf` counter backend: libpfm4 turns event names, generic
 * (perf::L1-DCACHE-LOAD-MISSES) or a CPU's own (L2_RQSTS:MISS), into
 * perf_event_open attributes; each OpenMP thread gets one counter per
 * event, opened from the calling thread on the thread's id, so that start
 * and stop are a few ioctls with no parallel region. Counters are not
 * grouped: each is scaled by its own time enabled / time running when the
 * kernel multiplexes them, and one that never ran reads unknown.
 *
 * Software events (task-clock, page-faults, context-switches) open even
 * where there is no PMU (a VM), so this backend then "works" with no cache
 * events; `auto` passes over it for the simulator.
 */
#include "counters/counters.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

/* Names tried for each event, first that encodes and opens wins. */
static const char *const names[SPP_CEV_COUNT][3] = {
	[SPP_CEV_L1D_ACCESSES] = {"perf::L1-DCACHE-LOADS"},
	[SPP_CEV_L1D_MISSES] = {"perf::L1-DCACHE-LOAD-MISSES"},
	[SPP_CEV_L2_ACCESSES] = {"L2_RQSTS:REFERENCES", "L2_RQSTS:ALL_DEMAND_REFERENCES"},
	[SPP_CEV_L2_MISSES] = {"L2_RQSTS:MISS", "L2_RQSTS:ALL_DEMAND_MISS"},
	[SPP_CEV_LLC_ACCESSES] = {"perf::LLC-LOADS"},
	[SPP_CEV_LLC_MISSES] = {"perf::LLC-LOAD-MISSES"},
	[SPP_CEV_INSTRUCTIONS] = {"perf::INSTRUCTIONS"},
	[SPP_CEV_CYCLES] = {"perf::CYCLES"},
	[SPP_CEV_LOADS] = {"MEM_INST_RETIRED:ALL_LOADS", "MEM_UOPS_RETIRED:ALL_LOADS"},
	[SPP_CEV_STORES] = {"MEM_INST_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_STORES"},
	[SPP_CEV_TASK_CLOCK_NS] = {"perf::TASK-CLOCK"},
	[SPP_CEV_PAGE_FAULTS] = {"perf::PAGE-FAULTS"},
	[SPP_CEV_CONTEXT_SWITCHES] = {"perf::CONTEXT-SWITCHES"},
};

static int pfm_ready(void)
{
	/* pfm_initialize is idempotent and thread-safe after the first call */
	return pfm_initialize() == PFM_SUCCESS;
}

static long perf_open(struct perf_event_attr *a, pid_t tid)
{
	return syscall(SYS_perf_event_open, a, tid, -1, -1, 0);
}

/*
 * Encode event e for user-space counting. Returns the index of the name
 * used, or -1 (*errnum: 0 when no name encodes, else the errno of the
 * last open) when none opens on the calling thread.
 */
static int encode(int e, struct perf_event_attr *out, int *errnum)
{
	*errnum = 0;
	for (int i = 0; i < 3 && names[e][i]; i++) {
		pfm_perf_encode_arg_t arg;
		long fd;

		memset(out, 0, sizeof(*out));
		memset(&arg, 0, sizeof(arg));
		arg.attr = out;
		arg.size = sizeof(arg);
		if (pfm_get_os_event_encoding(names[e][i], PFM_PLM3, PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS)
			continue;
		out->size = sizeof(*out);
		out->disabled = 1;
		out->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = perf_open(out, 0);
		if (fd >= 0) {
			close((int)fd);
			return i;
		}
		*errnum = errno;
	}
	return -1;
}

static void perf_probe(struct spp_counter_avail *out)
{
	struct perf_event_attr a;
	int hw_errno = 0, sw = 0;

	memset(out, 0, sizeof(*out));
	out->name = "perf";
	if (!pfm_ready()) {
		snprintf(out->why, sizeof(out->why), "libpfm4 does not initialise here");
		return;
	}
	for (int e = 0; e < SPP_CEV_COUNT; e++) {
		int errnum;

		if (encode(e, &a, &errnum) >= 0) {
			out->events |= 1u << e;
			sw |= a.type == PERF_TYPE_SOFTWARE;
		} else if (errnum && !hw_errno) {
			hw_errno = errnum;
		}
	}
	out->works = out->events != 0;
	out->cache_events = (out->events >> SPP_CEV_L1D_MISSES & 1) &&
			    (out->events >> SPP_CEV_LLC_MISSES & 1);
	if (!out->cache_events) {
		char why[160];

		spp_counters_pmu_reason(hw_errno, why, sizeof(why));
		snprintf(out->why, sizeof(out->why), "%s%s", why[0] ? why : "no cache events",
			 sw && !(out->events >> SPP_CEV_CYCLES & 1) ? ": software events only" : "");
	}
}

struct perf_session {
	int threads;
	int fd[SPP_COUNTERS_MAX_THREADS][SPP_CEV_COUNT]; /* -1: not counted */
};

static void perf_close(void *session)
{
	struct perf_session *s = session;

	if (!s)
		return;
	for (int t = 0; t < s->threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			if (s->fd[t][e] >= 0)
				close(s->fd[t][e]);
	free(s);
}

static int perf_open_session(const struct spp_counter_config *cfg, void **session,
			     struct spp_error *err)
{
	struct perf_session *s;
	pid_t tid[SPP_COUNTERS_MAX_THREADS];
	struct perf_event_attr attr[SPP_CEV_COUNT];
	int ok[SPP_CEV_COUNT], got = 0, threads = cfg->threads > 0 ? cfg->threads : 1;

	*session = NULL;
	if (threads > SPP_COUNTERS_MAX_THREADS)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "perf: at most %d threads", SPP_COUNTERS_MAX_THREADS);
	if (!pfm_ready())
		return spp_error_set(err, SPP_E_UNSUPPORTED, "perf: libpfm4 does not initialise here");
	s = calloc(1, sizeof(*s));
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "perf: out of memory");
	s->threads = threads;
	for (int t = 0; t < threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			s->fd[t][e] = -1;
	for (int e = 0; e < SPP_CEV_COUNT; e++) {
		int errnum;

		ok[e] = encode(e, &attr[e], &errnum) >= 0;
	}
	/* the ids of the OpenMP threads the counted region will run on */
	for (int t = 0; t < threads; t++)
		tid[t] = -1;
#pragma omp parallel num_threads(threads)
	tid[omp_get_thread_num()] = (pid_t)syscall(SYS_gettid);
	for (int t = 0; t < threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++) {
			long fd;

			if (!ok[e] || tid[t] < 0)
				continue;
			fd = perf_open(&attr[e], tid[t]);
			if (fd >= 0) {
				s->fd[t][e] = (int)fd;
				got++;
			}
		}
	if (!got) {
		perf_close(s);
		return spp_error_set(err, SPP_E_UNSUPPORTED, "perf: no event opens on the OpenMP threads");
	}
	*session = s;
	return SPP_OK;
}

static int bracket(struct perf_session *s, unsigned long req)
{
	int rc = SPP_OK;

	for (int t = 0; t < s->threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			if (s->fd[t][e] >= 0 && ioctl(s->fd[t][e], req, 0) < 0)
				rc = SPP_E_RUNTIME;
	return rc;
}

static int perf_start(void *session)
{
	return bracket(session, PERF_EVENT_IOC_ENABLE);
}

static int perf_stop(void *session)
{
	return bracket(session, PERF_EVENT_IOC_DISABLE);
}

static int perf_read(void *session, struct spp_counter_sample *out)
{
	struct perf_session *s = session;

	memset(out, 0, sizeof(*out));
	out->nthreads = s->threads;
	out->scaled = 1;
	for (int e = 0; e < SPP_CEV_COUNT; e++)
		out->v[e] = NAN;
	for (int t = 0; t < s->threads; t++)
		for (int e = 0; e < SPP_CEV_COUNT; e++) {
			uint64_t r[3]; /* value, time enabled, time running */
			double v = NAN;

			if (s->fd[t][e] >= 0 && read(s->fd[t][e], r, sizeof(r)) == (ssize_t)sizeof(r)) {
				if (r[2] > 0 && r[2] < r[1]) {
					v = (double)r[0] * ((double)r[1] / (double)r[2]);
					if ((double)r[1] / (double)r[2] > out->scaled)
						out->scaled = (double)r[1] / (double)r[2];
				} else if (r[2] > 0 || r[1] == 0) {
					v = (double)r[0];
				}
				/* enabled but never running: multiplexed out, unknown */
			}
			out->thread[t][e] = v;
			if (isfinite(v))
				out->v[e] = isfinite(out->v[e]) ? out->v[e] + v : v;
		}
	return SPP_OK;
}

static int perf_list_events(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx)
{
	int count = 0;

	if (!pfm_ready())
		return 0;
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t info;
			char name[160];

			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT, &info) != PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pinfo.name, info.name);
			if (fn)
				fn(ctx, name, info.desc ? info.desc : "");
			count++;
		}
	}
	return count;
}

const struct spp_counter_backend spp_counters_perf = {
	.name = "perf",
	.summary = "libpfm4 event names -> perf_event_open, per thread, scaled when multiplexed",
	.probe = perf_probe,
	.open = perf_open_session,
	.start = perf_start,
	.stop = perf_stop,
	.read = perf_read,
	.close = perf_close,
	.list_events = perf_list_events,
};
