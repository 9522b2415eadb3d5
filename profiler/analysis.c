/*
 * The analysis object's own functions (profiler/analysis.h): its warnings,
 * the format of a report's key, the shard a layer is timed in, and its
 * release. Results only: nothing here measures.
 */
#include "profiler/analysis.h"
#include "kernels/peers.h"
#include "profiler/derive.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <fnmatch.h>
#include <string.h>

void spp_analyze_opts_init(struct spp_analyze_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 128;
	spp_session_opts_init(&o->session, SPP_ANALYZE_TIME_BUDGET_S);
	o->backends = SPP_BACKEND_CPU;
	spp_counters_opts_init(&o->counters);
}

int spp_analyze_formats(const struct spp_analyze_opts *o, const struct spp_format_ops **fmts,
			int *nswept)
{
	int nf = 0;

	*nswept = 0;
	if (!(o->backends & SPP_BACKEND_CPU))
		return 0;
	if (!o->formats_set) {
		for (int i = 0; nf < SPP_MAX_FORMATS && spp_cpu_formats[i]; i++)
			fmts[nf++] = spp_cpu_formats[i];
		*nswept = nf;
		if (o->act_sparsity > 0 || o->activations)
			for (int i = 0; nf < SPP_MAX_FORMATS && spp_cpu_act_formats[i]; i++)
				fmts[nf++] = spp_cpu_act_formats[i];
	} else {
		for (int i = 0; i < o->nformats && nf < SPP_MAX_FORMATS; i++)
			fmts[nf++] = o->formats[i];
		*nswept = nf;
	}
	/* a peer is one more format, checked and timed by the same loop; left
	 * out of the sweeps (it has no storage row to hold a layer) */
	for (int p = 0; p < o->npeers && p < SPP_MAX_PEERS; p++)
		fmts[nf++] = o->peers[p];
	return nf;
}

const char *spp_warn_code(enum spp_warn w)
{
	static const char *const codes[] = {
#define SPP_WARN_CODE(e, code, what) code,
		SPP_WARN_LIST(SPP_WARN_CODE)
#undef SPP_WARN_CODE
	};

	return (unsigned)w < sizeof(codes) / sizeof(codes[0]) ? codes[w] : "unknown";
}

__attribute__((format(printf, 4, 5)))
int spp_analysis_warn(struct spp_analysis *a, struct spp_error *err, enum spp_warn code,
		      const char *fmt, ...)
{
	char buf[512];
	struct spp_warning *grown;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	grown = realloc(a->warnings, (size_t)(a->nwarnings + 1) * sizeof(*grown));
	if (!grown)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	a->warnings = grown;
	a->warnings[a->nwarnings].code = code;
	a->warnings[a->nwarnings].message = strdup(buf);
	if (!a->warnings[a->nwarnings].message)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	a->nwarnings++;
	return SPP_OK;
}

const struct spp_format_ops *spp_format_by_key(const char *key, int *peer)
{
	const struct spp_format_ops *f = spp_cpu_format_find(key);

	*peer = !f && spp_cpu_peer_find(key);
	return f ? f : spp_cpu_peer_find(key);
}

int spp_analysis_selected(const struct spp_analysis *a, int i)
{
	const struct spp_analyze_opts *o = &a->opts;
	const char *name = a->layers[i].name ? a->layers[i].name : "";
	int in = o->ntime_globs == 0;

	for (int g = 0; g < o->ntime_globs && !in; g++)
		in = fnmatch(o->time_globs[g], name, 0) == 0;
	for (int g = 0; g < o->nskip_globs && in; g++)
		in = fnmatch(o->skip_globs[g], name, 0) != 0;
	return in;
}

int spp_analysis_timed(const struct spp_analysis *a, int i)
{
	const struct spp_shard *sh = &a->opts.shard;

	return (sh->count <= 0 || spp_shard_of(&a->layers[i], &a->stats[i], sh->count) == sh->index) &&
	       spp_analysis_selected(a, i);
}

/* The breakeven sweeps of a. */
static void breakeven_release(struct spp_analysis *a)
{
	for (int i = 0; a->sweeps && i < a->nsweeps; i++)
		spp_sweep_release(&a->sweeps[i]);
	free(a->sweeps);
	free(a->sweep_of);
	a->sweeps = NULL;
	a->sweep_of = NULL;
	a->nsweeps = 0;
}

/* The N sweeps of a. */
static void nsweep_release(struct spp_analysis *a)
{
	for (int i = 0; a->nsweeps_n && i < a->nlayers; i++)
		spp_nsweep_release(&a->nsweeps_n[i]);
	free(a->nsweeps_n);
	a->nsweeps_n = NULL;
}

void spp_analysis_destroy(struct spp_analysis *a)
{
	if (!a)
		return;
	for (int i = 0; a->runs && i < a->nlayers; i++)
		spp_layer_runs_release(&a->runs[i]);
	free(a->runs);
	free(a->runs_from);
	free(a->owned_activations);
	spp_session_record_release(&a->record);
	breakeven_release(a);
	nsweep_release(a);
	spp_analysis_derived_free(a);
	free(a->machine);
	for (int i = 0; i < a->nwarnings; i++)
		free(a->warnings[i].message);
	free(a->warnings);
	free(a->stats);
	free(a->layers);
	spp_model_destroy(a->model);
	free(a);
}
