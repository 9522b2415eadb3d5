#include "profiler/run_dense.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_dense_memo_free(struct spp_dense_memo *m)
{
	if (!m)
		return;
	free(m->c);
	memset(m, 0, sizeof(*m));
}

static const struct spp_dense_choice *lookup(const struct spp_dense_memo *memo, int64_t m,
					     int64_t k, int64_t n, int threads)
{
	for (int i = 0; memo && i < memo->n; i++) {
		const struct spp_dense_choice *c = &memo->c[i];

		if (c->m == m && c->k == k && c->n == n && c->threads == threads)
			return c;
	}
	return NULL;
}

int spp_dense_plan(const struct spp_dense_set *set, const struct spp_dense_memo *memo,
		   int64_t m, int64_t k, int64_t n, int threads, const char *name,
		   struct spp_dense_choice *ch, int *shared, int *idx)
{
	const struct spp_dense_choice *hit = lookup(memo, m, k, n, threads);
	int count = 0;

	*shared = 0;
	if (hit && hit->winner >= 0)
		for (int i = 0; i < set->n; i++)
			if (set->c[i].ok && strcmp(set->c[i].name, hit->t[hit->winner].name) == 0) {
				*ch = *hit;
				*shared = 1;
				idx[0] = i;
				return 1;
			}
	memset(ch, 0, sizeof(*ch));
	ch->m = m;
	ch->k = k;
	ch->n = n;
	ch->threads = threads;
	ch->winner = -1;
	snprintf(ch->measured_on, sizeof(ch->measured_on), "%s", name ? name : "");
	for (int i = 0; i < set->n; i++) {
		struct spp_dense_timing *t;

		if (!set->c[i].ok)
			continue;
		/* GEMVs by column: identical to the GEMV at N = 1, hopeless at large N */
		if (set->c[i].by_columns && (n < 2 || n > SPP_DENSE_COLS_MAX_N))
			continue;
		/* a candidate for small N only (spprof's GEMV) */
		if (set->c[i].lib->max_n > 0 && n > set->c[i].lib->max_n)
			continue;
		idx[count++] = i;
		t = &ch->t[ch->nt++];
		snprintf(t->name, sizeof(t->name), "%s", set->c[i].name);
		spp_dense_describe(&set->c[i], t->library, sizeof(t->library));
		t->status = SPP_RUN_OK;
		t->gflops = t->max_error = t->relative = NAN;
	}
	return count;
}

int spp_dense_choose(struct spp_dense_choice *ch, struct spp_dense_memo *memo,
		     struct spp_error *err)
{
	double flops = 2.0 * (double)ch->m * (double)ch->k * (double)ch->n;

	ch->winner = -1;
	for (int i = 0; i < ch->nt; i++) {
		struct spp_dense_timing *t = &ch->t[i];

		if (t->status != SPP_RUN_OK || t->time.repeats == 0)
			continue;
		if (t->time.median > 0)
			t->gflops = flops / t->time.median;
		/* a candidate raced out cannot win: its few rounds' median may have missed a slow spell */
		if (!t->retired && (ch->winner < 0 || t->time.median < ch->t[ch->winner].time.median))
			ch->winner = i;
	}
	for (int i = 0; i < ch->nt; i++) {
		struct spp_dense_timing *t = &ch->t[i];

		t->relative = ch->winner >= 0 && t->status == SPP_RUN_OK && t->time.median > 0
			      ? ch->t[ch->winner].time.median / t->time.median : NAN;
	}
	if (!memo || ch->winner < 0)
		return SPP_OK;
	if (memo->n == memo->cap) {
		int cap = memo->cap ? 2 * memo->cap : 16;
		struct spp_dense_choice *grown = realloc(memo->c, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		memo->c = grown;
		memo->cap = cap;
	}
	memo->c[memo->n++] = *ch;
	return SPP_OK;
}

int spp_fastest_run(const struct spp_run *runs, const int *want, int n)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (want[i] && runs[i].status == SPP_RUN_OK && runs[i].time.repeats > 0 &&
		    (best < 0 || runs[i].time.median < runs[best].time.median))
			best = i;
	return best;
}
