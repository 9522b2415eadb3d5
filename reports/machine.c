/* The report's "machine" block, shared by analyze reports and `spprof info`. */
#include "reports/report.h"
#include "reports/json_values.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "profiler/machine.h"
#include "profiler/run_result.h"

/* v when positive: a figure the probe measured (0 is not measured); null otherwise. */
static cJSON *positive_or_null(double v)
{
	return spp_json_num(v > 0 ? v : NAN);
}

static cJSON *caches_json(const struct spp_machine *m)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && i < m->ncaches; i++) {
		const struct spp_cache_level *c = &m->caches[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "level", c->level);
		cJSON_AddStringToObject(o, "type", c->type);
		cJSON_AddItemToObject(o, "size", positive_or_null((double)c->size));
		cJSON_AddItemToObject(o, "ways", positive_or_null(c->ways));
		cJSON_AddItemToObject(o, "line", positive_or_null(c->line));
		cJSON_AddItemToObject(o, "shared_by", positive_or_null(c->shared_by));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *blas_json(const struct spp_blas_info *b)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "name", spp_json_str(b->name));
	cJSON_AddItemToObject(o, "version", spp_json_str(b->version));
	cJSON_AddItemToObject(o, "core", spp_json_str(b->core));
	cJSON_AddItemToObject(o, "threads", positive_or_null(b->max_threads));
	/* set but empty is not unset: OpenBLAS then takes its default core */
	cJSON_AddItemToObject(o, "coretype_env", b->coretype_set ? cJSON_CreateString(b->coretype_env)
								 : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "config", spp_json_str(b->config));
	return o;
}

cJSON *spp_report_calibration(const struct spp_calibration *c)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "threads", c->threads);
	cJSON_AddItemToObject(o, "read_gbs", positive_or_null(c->read_gbs));
	cJSON_AddItemToObject(o, "triad_gbs", positive_or_null(c->triad_gbs));
	cJSON_AddItemToObject(o, "peak_gflops", positive_or_null(c->peak_gflops));
	cJSON_AddItemToObject(o, "isa", spp_json_str(c->isa));
	cJSON_AddItemToObject(o, "when", spp_json_str(c->when));
	{
		cJSON *lv = cJSON_AddObjectToObject(o, "levels");

		for (int l = 0; lv && l < SPP_BW_LEVELS; l++) {
			cJSON *e = cJSON_AddObjectToObject(lv, spp_bw_level_name((enum spp_bw_level)l));

			cJSON_AddItemToObject(e, "read_gbs", positive_or_null(c->level_gbs[l]));
			cJSON_AddItemToObject(e, "bytes", positive_or_null(c->level_bytes[l]));
		}
	}
	return o;
}

/*
 * Each counter backend built in: whether it counts here, which events,
 * and why not; the simulator also gives the geometry it models by default.
 */
static cJSON *counters_json(const struct spp_machine *m)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && i < m->ncounters; i++) {
		const struct spp_counter_avail *a = &m->counters[i];
		cJSON *o = cJSON_CreateObject(), *ev = cJSON_CreateArray();

		if (!o || !ev) {
			cJSON_Delete(o);
			cJSON_Delete(ev);
			break;
		}
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "name", a->name);
		cJSON_AddBoolToObject(o, "works", a->works);
		cJSON_AddBoolToObject(o, "cache_events", a->cache_events);
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			if (a->events >> e & 1)
				cJSON_AddItemToArray(ev, cJSON_CreateString(spp_counter_event_name(e)));
		cJSON_AddItemToObject(o, "events", ev);
		cJSON_AddItemToObject(o, "reason", spp_json_str(a->why));
		if (strcmp(a->name, "sim") == 0) {
			char geo[96];

			spp_sim_geometry_format(&m->sim, geo, sizeof(geo));
			cJSON_AddStringToObject(o, "geometry", geo);
			cJSON_AddItemToObject(o, "note", spp_json_str(m->sim_note));
		}
	}
	return arr;
}

/*
 * One object per CUDA device the machine's probe found; [] when there is none
 * (the reason is `spprof info`'s gpu line). Versions as cudart gives them
 * (13000 is 13.0); driver_version null when there is no driver.
 */
static cJSON *gpus_json(const struct spp_cuda_probe *p)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && i < p->ndevices; i++) {
		cJSON *o = cJSON_CreateObject();
		char sm[16];

		snprintf(sm, sizeof(sm), "sm_%d", p->dev[i].sm);
		cJSON_AddNumberToObject(o, "index", i);
		cJSON_AddStringToObject(o, "name", p->dev[i].name);
		cJSON_AddStringToObject(o, "sm", sm);
		cJSON_AddNumberToObject(o, "multiprocessors", p->dev[i].multiprocessors);
		cJSON_AddNumberToObject(o, "memory_bytes", (double)p->dev[i].memory);
		cJSON_AddItemToObject(o, "runtime_version", positive_or_null(p->runtime_version));
		cJSON_AddItemToObject(o, "driver_version", positive_or_null(p->driver_version));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The build of this spprof: what its kernels were compiled with (meson.build). */
static cJSON *build_json(void)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "type", SPP_BUILD_TYPE);
	cJSON_AddStringToObject(o, "kernel_flags", SPP_KERNEL_FLAGS);
	cJSON_AddStringToObject(o, "compiler", SPP_COMPILER);
	cJSON_AddItemToObject(o, "sanitize",
			      strcmp(SPP_SANITIZE, "none") && SPP_SANITIZE[0] ? cJSON_CreateString(SPP_SANITIZE)
									  : cJSON_CreateNull());
	return o;
}

cJSON *spp_report_machine(const struct spp_machine *m)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "cpu", spp_json_str(m->cpu));
	cJSON_AddItemToObject(o, "vendor", spp_json_str(m->vendor));
	cJSON_AddItemToObject(o, "hypervisor", spp_json_str(m->hypervisor));
	cJSON_AddStringToObject(o, "isa", spp_isa_name(m->isa));
	cJSON_AddItemToObject(o, "build", build_json());
	cJSON_AddNumberToObject(o, "logical_cpus", m->logical_cpus);
	cJSON_AddNumberToObject(o, "threads", m->threads);
	cJSON_AddItemToObject(o, "caches", caches_json(m));
	cJSON_AddItemToObject(o, "cache_source", spp_json_str(m->cache_source));
	cJSON_AddItemToObject(o, "cache_note", spp_json_str(m->cache_note));
	cJSON_AddItemToObject(o, "peak_bw_gbs",
			      positive_or_null(m->have_calibration ? m->cal.read_gbs : 0));
	cJSON_AddItemToObject(o, "peak_gflops",
			      positive_or_null(m->have_calibration ? m->cal.peak_gflops : 0));
	cJSON_AddItemToObject(o, "calibration", m->have_calibration ? spp_report_calibration(&m->cal)
								  : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "counters", m->ncounters ? counters_json(m) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "dense_blas", blas_json(&m->blas));
	cJSON_AddItemToObject(o, "gpus", gpus_json(&m->gpus));
	return o;
}

cJSON *spp_report_dense(const struct spp_dense_set *set)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; arr && set && i < set->n; i++) {
		const struct spp_dense_cand *c = &set->c[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", c->name);
		cJSON_AddStringToObject(o, "library", c->lib->name);
		cJSON_AddItemToObject(o, "version", spp_json_str(c->version));
		cJSON_AddItemToObject(o, "kernel", spp_json_str(c->kernel));
		cJSON_AddItemToObject(o, "origin", spp_json_str(c->origin));
		cJSON_AddItemToObject(o, "env", spp_json_str(c->env));
		cJSON_AddItemToObject(o, "config", spp_json_str(c->config));
		cJSON_AddStringToObject(o, "status", c->ok ? "ok" : "unavailable");
		cJSON_AddItemToObject(o, "reason", spp_json_str(c->reason));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

cJSON *spp_report_time(const struct spp_time_stats *t)
{
	cJSON *o;

	if (!t || t->repeats <= 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "median", t->median);
	cJSON_AddNumberToObject(o, "p10", t->p10);
	cJSON_AddNumberToObject(o, "p90", t->p90);
	cJSON_AddNumberToObject(o, "repeats", t->repeats);
	/* the median's 95 % interval, null under 6 repeats */
	cJSON_AddItemToObject(o, "ci_low", t->ci_low > 0 ? cJSON_CreateNumber(t->ci_low) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "ci_high", t->ci_high > 0 ? cJSON_CreateNumber(t->ci_high) : cJSON_CreateNull());
	return o;
}

cJSON *spp_report_dense_choice(const struct spp_dense_choice *ch)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "winner", ch->winner >= 0 ? cJSON_CreateString(ch->t[ch->winner].name)
							   : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "measured_on", spp_json_str(ch->measured_on));
	cJSON_AddNumberToObject(o, "threads", ch->threads);
	arr = cJSON_AddArrayToObject(o, "candidates");
	for (int i = 0; arr && i < ch->nt; i++) {
		const struct spp_dense_timing *t = &ch->t[i];
		int timed = t->status == SPP_RUN_OK && t->time.repeats > 0;
		cJSON *c = cJSON_CreateObject();

		if (!c)
			break;
		cJSON_AddStringToObject(c, "name", t->name);
		cJSON_AddStringToObject(c, "library", t->library);
		cJSON_AddStringToObject(c, "status", spp_run_status_name(t->status));
		cJSON_AddItemToObject(c, "reason", spp_json_str(t->reason));
		cJSON_AddItemToObject(c, "time_ns", spp_report_time(timed ? &t->time : NULL));
		cJSON_AddItemToObject(c, "gflops", spp_json_num(timed ? t->gflops : NAN));
		cJSON_AddItemToObject(c, "max_error", spp_json_num(t->max_error));
		cJSON_AddItemToObject(c, "relative_speed", spp_json_num(timed ? t->relative : NAN));
		cJSON_AddBoolToObject(c, "chosen", i == ch->winner);
		cJSON_AddItemToArray(arr, c);
	}
	return o;
}

cJSON *spp_report_info(const struct spp_machine *m, const struct spp_dense_set *set, double load_1m,
		       const double ticks[2])
{
	cJSON *o = spp_report_machine(m), *c;

	if (!o)
		return NULL;
	c = cJSON_AddObjectToObject(o, "conditions");
	cJSON_AddItemToObject(o, "dense_candidates", spp_report_dense(set));
	/* now, and the steal since boot (a report's machine.conditions: while it timed) */
	cJSON_AddItemToObject(c, "load_1m", spp_json_num(load_1m));
	cJSON_AddItemToObject(c, "steal_share_since_boot",
			      spp_json_num(ticks[0] > 0 ? ticks[1] / ticks[0] : NAN));
	return o;
}
