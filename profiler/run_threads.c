/*
 * The thread policy of timed runs (profiler/run.h): how the sparse kernels'
 * OpenMP pool and the dense candidates' pools share the cores, and starting
 * those pools before the caller's threads are pinned.
 */
#include "profiler/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "profiler/runtime_env.h"

_Static_assert(SPP_POOL_COUNT <= SPP_BENCH_POOLS, "the harness tells every dense pool apart");

/* libgomp's default spin (300000 iterations) lasts a few ms at most. */
#define GOMP_SETTLE_NS 20e6

/*
 * How runs share the cores with the two thread pools (OpenMP for the
 * sparse kernels, OpenBLAS's pthreads for dense). One thread: no worker
 * wakes, interleave. Passive waiting in both: interleave. Otherwise idle
 * workers of one pool spin on the cores the other needs, so time each
 * format in its own block and sleep out the spin between pools.
 */
void spp_run_thread_policy(int threads, struct spp_run_opts *o, char *schedule,
			   size_t schedule_n, char *policy, size_t policy_n)
{
	const char *t = getenv("OPENBLAS_THREAD_TIMEOUT");
	int timeout = t && *t ? atoi(t) : 28;
	char env[200];
	const char *why;

	if (timeout < 4)
		timeout = 4;
	if (timeout > 30)
		timeout = 30;
	spp_runtime_env_describe(env, sizeof(env));
	if (threads == 1) {
		o->bench.schedule = SPP_SCHED_INTERLEAVED;
		why = "one thread: no worker pool wakes, dense and sparse runs interleaved";
	} else if (spp_runtime_env_passive()) {
		o->bench.schedule = SPP_SCHED_INTERLEAVED;
		why = "idle OpenMP and OpenBLAS threads sleep, dense and sparse runs interleaved";
	} else {
		o->bench.schedule = SPP_SCHED_BLOCKED;
		o->bench.settle_ns[SPP_POOL_OMP] = o->bench.settle_ns[SPP_POOL_OWN_OMP] = GOMP_SETTLE_NS;
		/* OpenBLAS spins 2^timeout cycles; 2 GHz is a slow clock for that bound */
		o->bench.settle_ns[SPP_POOL_OPENBLAS] = o->bench.settle_ns[SPP_POOL_OWN_OPENBLAS] =
			ldexp(1.0, timeout) / 2.0;
		why = "idle threads spin: each format timed in its own block, with a pause "
		      "between the OpenBLAS and OpenMP blocks until the other pool sleeps";
	}
	/*
	 * Interleaved rounds are judged by the machine too: steal, and more
	 * tasks running at a round's end than the run's own threads (idle
	 * workers sleep here, or there is one thread).
	 */
	spp_sys_probe_proc(&o->bench.sys);
	o->bench.expect_running = threads;
	snprintf(schedule, schedule_n, "%s",
		 o->bench.schedule == SPP_SCHED_BLOCKED ? "blocked" : "interleaved");
	snprintf(policy, policy_n, "%s; %s", env, why);
}

int spp_run_threads_prepare(const struct spp_dense_set *set, int threads)
{
	float w1[4] = {1, 1, 1, 1}, x1[4] = {1, 1, 1, 1}, y1[4];
	struct spp_matrix one = {2, 2, w1};

	/* the BLAS pools exist from here on, so pinning the caller leaves them unpinned */
	for (int i = 0; set && i < set->n; i++)
		if (set->c[i].ok)
			spp_dense_run(&set->c[i], &one, x1, y1, 2, threads);
	return spp_pin_threads(threads);
}
