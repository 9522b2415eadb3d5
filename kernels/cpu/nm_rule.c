/*
 * The N:M rule (kernels.h) and its one message, for every part that
 * decides whether a matrix is N:M: the CPU and CUDA encoders and the
 * static storage figures.
 */
#include "kernels/kernels.h"
#include "base/share.h"

uint64_t spp_nm_violations(const struct spp_matrix *w, int keep, int group)
{
	uint64_t bad = 0;

	for (int64_t i = 0; i < w->m; i++)
		for (int64_t g0 = 0; g0 < w->k; g0 += group) {
			unsigned cnt = 0;

			for (int64_t j = g0; j < g0 + group && j < w->k; j++)
				cnt += w->v[i * w->k + j] != 0.0f;
			bad += !spp_nm_group_ok(cnt, keep);
		}
	return bad;
}

int spp_nm_check(int keep, int group, uint64_t groups, uint64_t bad, struct spp_error *err)
{
	char share[64];

	if (bad == 0)
		return 0;
	return spp_error_set(err, SPP_E_UNSUPPORTED,
			     "not %d:%d compliant: %s of groups hold more than %d non-zero%s", keep,
			     group, spp_share_text(bad, groups, share, sizeof(share)), keep,
			     keep == 1 ? "" : "s");
}
