/*
 * The simulator's checks of itself on seeded synthetic layers: its replay
 * rate (line accesses per second) and the error of its sampling against
 * whole replays (spprof info, counters/check).
 */
#include "counters/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernels.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * A warm replay of format key on a seeded random m x k layer of the given
 * density at N = n, one thread: sampled 1 in `stride` (1: whole). Fills f
 * and *seconds. Returns 0, SPP_E_NOMEM or the encoder's error.
 */
static int synthetic_replay(const char *key, int64_t m, int64_t k, int64_t n, double density,
			    const struct spp_sim_geometry *g, enum spp_isa isa, int stride,
			    struct spp_cache_figures *f, double *seconds, struct spp_error *err)
{
	const struct spp_format_ops *ops = spp_cpu_format_find(key);
	float *wv = calloc((size_t)(m * k), sizeof(float));
	float *x = malloc((size_t)(k * n) * sizeof(float)), *y = malloc((size_t)(m * n) * sizeof(float));
	struct spp_encoded enc;
	uint64_t st = 0x9E3779B97F4A7C15ull;
	double t0;
	int rc;

	if (!ops || !wv || !x || !y) {
		free(wv), free(x), free(y);
		return spp_error_set(err, SPP_E_NOMEM, "sim: out of memory for the %s check", key);
	}
	for (int64_t i = 0; i < m * k; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		if ((double)(st >> 11) / 9007199254740992.0 < density)
			wv[i] = 0.5f + (float)(st >> 60);
	}
	for (int64_t i = 0; i < k * n; i++)
		x[i] = (float)(i % 7) - 3.0f;
	rc = ops->encode(&(struct spp_matrix){m, k, wv}, 1, n, &enc, err);
	if (rc == 0) {
		t0 = now_s();
		rc = spp_sim_replay_stride(g, 1, UINT64_MAX, 1, isa, &enc, x, y, n, stride, f, err);
		*seconds = now_s() - t0;
		ops->release(&enc);
	}
	free(wv), free(x), free(y);
	return rc;
}

double spp_sim_rate(const struct spp_sim_geometry *g, enum spp_isa isa)
{
	struct spp_cache_figures f;
	struct spp_error err;
	double sec = 0;

	/* csr at 90 %, 512 x 2048, N = 32: about 10^6 line accesses (warm: two replays) */
	if (synthetic_replay("csr", 512, 2048, 32, 0.1, g, isa, 1, &f, &sec, &err) || sec <= 0)
		return 0;
	return 2 * f.v[SPP_CEV_L1D_ACCESSES] / sec;
}

int spp_sim_check_sampling(const struct spp_sim_geometry *g, enum spp_isa isa,
			   struct spp_sim_sampling *out, struct spp_error *err)
{
	/* csr 1 in 8: whole K tiles (13 here); 1 in 64: row blocks of each tile; bitmask: row blocks */
	static const struct {
		const char *key;
		int stride;
	} cases[SPP_SIM_SAMPLING_CASES] = {{"csr", 8}, {"csr", 64}, {"bitmask", 64}};
	static const enum spp_counter_event lev[3] = {SPP_CEV_L1D_MISSES, SPP_CEV_L2_MISSES,
						      SPP_CEV_LLC_MISSES};
	struct spp_cache_figures full;
	double sec = 0;

	memset(out, 0, sizeof(*out));
	for (int c = 0; c < SPP_SIM_SAMPLING_CASES; c++) {
		struct spp_sim_sampling_case *o = &out->cases[c];
		struct spp_cache_figures part;
		double sec_part;
		int rc;

		if ((c == 0 || strcmp(cases[c].key, cases[c - 1].key)) &&
		    (rc = synthetic_replay(cases[c].key, 2048, 4096, 64, 0.1, g, isa, 1, &full, &sec, err)))
			return rc;
		if ((rc = synthetic_replay(cases[c].key, 2048, 4096, 64, 0.1, g, isa, cases[c].stride, &part,
					   &sec_part, err)))
			return rc;
		snprintf(o->what, sizeof(o->what), "%s, 90 %%, 2048 x 4096, N = 64, 1 in %d", cases[c].key,
			 cases[c].stride);
		snprintf(o->how, sizeof(o->how), "%s", part.note);
		o->sampled = part.sampled;
		for (int l = 0; l < 3; l++)
			o->err[l] = full.v[lev[l]] > 0 ? part.v[lev[l]] / full.v[lev[l]] - 1 : NAN;
		o->speedup = sec_part > 0 ? sec / sec_part : NAN;
		if (sec > 0)
			out->rate = 2 * full.v[SPP_CEV_L1D_ACCESSES] / sec;
	}
	out->ncases = SPP_SIM_SAMPLING_CASES;
	return SPP_OK;
}
