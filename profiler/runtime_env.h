/*
 * The thread runtimes' waiting policy. OpenMP (libgomp) worker threads spin
 * after a parallel region and OpenBLAS's own pthreads spin after a GEMM;
 * with dense and sparse runs interleaved on all cores, the spinning pool
 * steals the cores the other one needs (2-thread dense runs looked
 * unscaled or erratic). Both libraries read their settings
 * (OMP_WAIT_POLICY, GOMP_SPINCOUNT, OPENBLAS_THREAD_TIMEOUT) once, when the
 * process starts, so the setting must be in the environment before that:
 * spp_runtime_env_prepare() puts it there and says whether the process
 * must re-exec itself for it to apply.
 */
#ifndef SPP_PROFILER_RUNTIME_ENV_H
#define SPP_PROFILER_RUNTIME_ENV_H

#include <stddef.h>

/*
 * Set OMP_WAIT_POLICY=passive and OPENBLAS_THREAD_TIMEOUT=4 (the shortest
 * OpenBLAS allows: 2^4 cycles of spinning) where the user has not set them,
 * and SPPROF_RUNTIME_ENV=1 so that a re-exec'd process leaves them alone.
 * Returns 1 when it changed the environment (the caller should execv
 * "/proc/self/exe" with the same argv before any thread starts; if that
 * fails, carry on: the report then says the policy is not in effect),
 * 0 when nothing had to change. Never touches OPENBLAS_CORETYPE.
 */
int spp_runtime_env_prepare(void);

/*
 * Whether both pools wait passively in this process: OMP_WAIT_POLICY is
 * passive and OPENBLAS_THREAD_TIMEOUT is at most 4, as read from the
 * environment the process started with.
 */
int spp_runtime_env_passive(void);

/* The waiting policy in effect and where it came from, for the report. */
void spp_runtime_env_describe(char *buf, size_t n);

#endif
