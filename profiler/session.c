/* The measurement session of profiler/session.h. */
#include "profiler/session.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_cpu_ticks(double t[2])
{
	struct spp_sys_sample s;

	t[0] = t[1] = NAN;
	if (spp_sys_sample_read(&s) == 0) {
		t[0] = s.ticks;
		t[1] = s.steal;
	}
}

double spp_load_1m(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fscanf(f, "%lf", &l) != 1)
		l = NAN;
	if (f)
		fclose(f);
	return l;
}

/* The cache state of o on machine m (its LLC for auto) into the record. */
static void cache_state(struct spp_run_settings *rs, const struct spp_session_opts *o,
			const struct spp_machine *m)
{
	uint64_t llc;

	if (o->cache != SPP_CACHE_AUTO) {
		rs->cold = o->cache == SPP_CACHE_COLD;
		snprintf(rs->cache_rule, sizeof(rs->cache_rule), "--cache %s", rs->cold ? "cold" : "warm");
	} else {
		llc = spp_machine_largest_cache(m);
		rs->cold = o->weights_bytes > 0 && llc > 0 && o->weights_bytes > llc;
		if (o->weights_bytes == 0 || llc == 0)
			snprintf(rs->cache_rule, sizeof(rs->cache_rule), "auto: %s unknown, warm",
				 llc ? "the weights' size" : "the LLC's size");
		else
			snprintf(rs->cache_rule, sizeof(rs->cache_rule),
				 "auto: the weights, %.1f MiB, %s the LLC, %.1f MiB",
				 (double)o->weights_bytes / (1 << 20), rs->cold ? "exceed" : "fit in",
				 (double)llc / (1 << 20));
	}
	snprintf(rs->cache, sizeof(rs->cache), "%s", rs->cold ? "cold" : "warm");
}

int spp_session_open(struct spp_session *s, const struct spp_session_opts *o, struct spp_machine *m,
		     struct spp_session_record *rec, struct spp_error *err)
{
	struct spp_dense_want want;
	/* the caches that size the cache state and the flusher: m's, else this machine's, described once */
	struct spp_machine *here = NULL;
	const struct spp_machine *sized = m;
	char storage[512];
	int rc = SPP_OK;

	memset(s, 0, sizeof(*s));
	s->opts = *o;
	s->machine = m;
	s->rec = rec ? rec : &s->own;
	spp_cpu_ticks(s->ticks0);
	s->rec->settings.load_start = spp_load_1m();
	s->rec->settings.steal_share = s->rec->settings.load_end = NAN;
	if (!m && o->cache != SPP_CACHE_WARM) {
		if (!(here = calloc(1, sizeof(*here))))
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
		spp_machine_describe(here, 1);
		sized = here;
	}
	cache_state(&s->rec->settings, o, sized);
	if ((!o->dense || !(rc = spp_dense_parse(o->dense, &want, storage, sizeof(storage), err))) &&
	    !(rc = spp_dense_set_open(&s->rec->dense, o->dense ? &want : NULL,
				      m ? m->isa : spp_isa_detect(), err)) &&
	    s->rec->settings.cold)
		rc = spp_run_flusher_init(&s->flusher, sized, s->rec->settings.cold_method,
					  sizeof(s->rec->settings.cold_method), err);
	free(here);
	return rc;
}

void spp_session_runs(struct spp_session *s, int threads, struct spp_run_opts *ro)
{
	struct spp_run_settings *rs = &s->rec->settings;

	spp_run_opts_init(ro);
	ro->dense = &s->rec->dense;
	ro->dense_memo = &s->rec->dense_memo;
	ro->threads = threads;
	if (s->machine) {
		ro->isa = s->machine->isa;
		spp_bw_model_init(&ro->bw, s->machine, threads, rs->cold);
	}
	ro->seed = s->opts.seed;
	ro->bench.repeat = s->opts.repeat;
	ro->bench.budget_ns = s->opts.time_budget_s * 1e9;
	if (s->opts.warmup > 0)
		ro->bench.warmup = s->opts.warmup;
	if (s->opts.min_repeats > 0)
		ro->bench.min_repeats = s->opts.min_repeats;
	ro->cold = rs->cold;
	ro->flusher = rs->cold ? &s->flusher : NULL;
	omp_set_num_threads(threads);
	spp_run_thread_policy(threads, ro, rs->schedule, sizeof(rs->schedule), rs->thread_policy,
			      sizeof(rs->thread_policy));
	rs->threads = threads;
	rs->warmup = ro->bench.warmup;
	rs->min_repeats = ro->bench.min_repeats;
	rs->max_repeats = ro->bench.max_repeats;
	rs->verify_rtol = ro->verify_rtol;
	rs->pinned = spp_run_threads_prepare(&s->rec->dense, threads);
}

void spp_session_conditions(struct spp_session *s)
{
	double t[2];

	if (!s->rec)
		return;
	spp_cpu_ticks(t);
	if (t[0] > s->ticks0[0])
		s->rec->settings.steal_share = (t[1] - s->ticks0[1]) / (t[0] - s->ticks0[0]);
	s->rec->settings.load_end = spp_load_1m();
}

void spp_session_close(struct spp_session *s)
{
	spp_session_conditions(s);
	spp_flusher_fini(&s->flusher);
	if (s->rec == &s->own)
		spp_session_record_release(&s->own);
}
