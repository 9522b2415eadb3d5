/*
 * Hardware counting of a layer's timed runs (profiler/run.c): one counter
 * session per format item, started and stopped by the harness around each
 * timed call, read into the run's cache figures per timed run.
 */
#include "profiler/run_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_run_count_start(void *p, int item)
{
	struct spp_run_count *c = p;

	if (c->sess[item])
		c->b->start(c->sess[item]);
}

void spp_run_count_stop(void *p, int item)
{
	struct spp_run_count *c = p;

	if (c->sess[item] && c->b->stop(c->sess[item]) == SPP_OK)
		c->runs[item]++;
}

int spp_run_count_hardware(const struct spp_counter_backend *b)
{
	return b && strcmp(b->name, "sim") != 0 && strcmp(b->name, "none") != 0;
}

/* Open a session per format item (the dense baseline runs on BLAS threads, not counted). */
int spp_run_count_open(struct spp_run_count *cc, const int *run_of, int nitems,
		      const struct spp_run_opts *o, struct spp_error *err)
{
	struct spp_counter_config cfg = {o->threads, NULL, 0};
	struct spp_error e2;

	cc->b = o->counters;
	cc->sess = calloc((size_t)nitems, sizeof(*cc->sess));
	cc->runs = calloc((size_t)nitems, sizeof(*cc->runs));
	if (!cc->sess || !cc->runs)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	for (int i = 0; i < nitems; i++)
		if (run_of[i] != 0 && cc->b->open(&cfg, &cc->sess[i], &e2))
			cc->sess[i] = NULL; /* its cache stays null */
	return SPP_OK;
}

/* The counted figures of item i into r, per timed run. */
void spp_run_count_read(struct spp_run_count *cc, int i, int line, struct spp_run *r)
{
	struct spp_counter_sample *s;

	if (!cc->sess || !cc->sess[i] || cc->runs[i] == 0 || !(s = malloc(sizeof(*s))))
		return;
	if (cc->b->read(cc->sess[i], s) == SPP_OK) {
		size_t len;

		spp_cache_figures_from_sample(&r->cache, cc->b->name, s, cc->runs[i], line);
		len = (size_t)snprintf(r->cache.note, sizeof(r->cache.note),
				       "counted on %d OpenMP thread%s, per timed run (%d runs)",
				       s->nthreads, s->nthreads == 1 ? "" : "s", cc->runs[i]);
		if (s->scaled > 1 && len < sizeof(r->cache.note))
			snprintf(r->cache.note + len, sizeof(r->cache.note) - len,
				 "; multiplexed, scaled by up to %.2fx", s->scaled);
	}
	free(s);
}

void spp_run_count_close(struct spp_run_count *cc, int nitems)
{
	for (int i = 0; cc->sess && i < nitems; i++)
		if (cc->sess[i])
			cc->b->close(cc->sess[i]);
	free(cc->sess);
	free(cc->runs);
}

