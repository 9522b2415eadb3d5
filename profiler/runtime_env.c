#include "profiler/runtime_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MARK "SPPROF_RUNTIME_ENV"

int spp_runtime_env_prepare(void)
{
	int changed = 0;

	if (getenv(MARK))
		return 0;
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		changed = 1;
	}
	if (!getenv("OPENBLAS_THREAD_TIMEOUT")) {
		setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
		changed = 1;
	}
	setenv(MARK, "1", 1);
	return changed;
}

static int blas_timeout(void)
{
	const char *t = getenv("OPENBLAS_THREAD_TIMEOUT");

	/* OpenBLAS's own default is 28 (2^28 cycles, about 0.1 s) */
	return t && *t ? atoi(t) : 28;
}

int spp_runtime_env_passive(void)
{
	const char *w = getenv("OMP_WAIT_POLICY");

	return w && strcasecmp(w, "passive") == 0 && blas_timeout() <= 4;
}

void spp_runtime_env_describe(char *buf, size_t n)
{
	const char *w = getenv("OMP_WAIT_POLICY");
	const char *sc = getenv("GOMP_SPINCOUNT");

	snprintf(buf, n, "OMP_WAIT_POLICY=%s%s%s, OPENBLAS_THREAD_TIMEOUT=%d%s (%s)",
		 w ? w : "unset", sc ? ", GOMP_SPINCOUNT=" : "", sc ? sc : "",
		 blas_timeout(), getenv("OPENBLAS_THREAD_TIMEOUT") ? "" : " by default",
		 !spp_runtime_env_passive() ? "idle threads spin"
		 : getenv(MARK) ? "passive waiting, set by spprof before start-up"
				: "passive waiting, from the environment");
}
